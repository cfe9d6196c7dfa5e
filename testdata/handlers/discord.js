// A Discord interactions endpoint written from Discord's documentation
// (Node's standard library only): X-Signature-Ed25519 is verified over
// X-Signature-Timestamp + the raw body with the application's public key
// (PUBLIC_KEY, hex, as the Developer Portal shows it); a PING is answered
// {"type":1}; an application command is worked and answered with a message.
// MODE=correct works each interaction id once; MODE=naive works every
// interaction it is sent.
//
// env: PORT (0 = any, printed as "listening PORT"), PUBLIC_KEY, MODE.
// GET /work answers how many interactions were worked.
const http = require("node:http");
const crypto = require("node:crypto");

// SPKI DER prefix of an Ed25519 public key (RFC 8410), before its 32 bytes.
const spkiPrefix = Buffer.from("302a300506032b6570032100", "hex");
const publicKey = crypto.createPublicKey({
  key: Buffer.concat([spkiPrefix, Buffer.from(process.env.PUBLIC_KEY, "hex")]),
  format: "der",
  type: "spki",
});
const naive = process.env.MODE === "naive";
const seen = new Set();
let work = 0;

const server = http.createServer((req, res) => {
  if (req.method === "GET" && req.url === "/work") {
    res.end(String(work));
    return;
  }
  const chunks = [];
  req.on("data", (c) => chunks.push(c));
  req.on("end", () => {
    const body = Buffer.concat(chunks);
    const sig = req.headers["x-signature-ed25519"] || "";
    const ts = req.headers["x-signature-timestamp"] || "";
    let ok = false;
    try {
      ok = crypto.verify(null, Buffer.concat([Buffer.from(ts), body]), publicKey, Buffer.from(sig, "hex"));
    } catch (e) {
      ok = false;
    }
    if (!ok) {
      res.writeHead(401).end("invalid request signature");
      return;
    }
    const interaction = JSON.parse(body);
    res.setHeader("content-type", "application/json");
    if (interaction.type === 1) {
      res.end(JSON.stringify({ type: 1 }));
      return;
    }
    if (naive || !seen.has(interaction.id)) {
      seen.add(interaction.id);
      work++;
    }
    res.end(JSON.stringify({ type: 4, data: { content: "order received" } }));
  });
});

server.listen(Number(process.env.PORT || 0), "127.0.0.1", () => {
  console.log("listening " + server.address().port);
});
