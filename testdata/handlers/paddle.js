// A Paddle Billing webhook handler written from Paddle's documentation
// (Node's standard library only): Paddle-Signature is ts=…;h1=…, the hex
// HMAC-SHA256 of "<ts>:<raw body>" with the notification destination's
// secret key, refused when more than 5 seconds old, as Paddle's SDKs do.
// MODE=correct works each event_id once; MODE=naive works every
// notification it is sent.
//
// env: PORT (0 = any, printed as "listening PORT"), SECRET, MODE.
// GET /work answers how many events were worked.
const http = require("node:http");
const crypto = require("node:crypto");

const secret = process.env.SECRET;
const naive = process.env.MODE === "naive";
const seen = new Set();
let work = 0;

function valid(header, body) {
  const parts = Object.fromEntries((header || "").split(";").map((p) => p.split("=")));
  const ts = Number(parts.ts);
  if (!ts || !parts.h1 || Date.now() > (ts + 5) * 1000) return false;
  const want = crypto.createHmac("sha256", secret).update(`${parts.ts}:`).update(body).digest("hex");
  return want.length === parts.h1.length && crypto.timingSafeEqual(Buffer.from(want), Buffer.from(parts.h1));
}

const server = http.createServer((req, res) => {
  if (req.method === "GET" && req.url === "/work") {
    res.end(String(work));
    return;
  }
  const chunks = [];
  req.on("data", (c) => chunks.push(c));
  req.on("end", () => {
    const body = Buffer.concat(chunks);
    if (!valid(req.headers["paddle-signature"], body)) {
      res.writeHead(401).end("invalid signature");
      return;
    }
    const ev = JSON.parse(body);
    if (naive || !seen.has(ev.event_id)) {
      seen.add(ev.event_id);
      work++;
    }
    res.writeHead(200).end("ok");
  });
});

server.listen(Number(process.env.PORT || 0), "127.0.0.1", () => {
  console.log("listening " + server.address().port);
});
