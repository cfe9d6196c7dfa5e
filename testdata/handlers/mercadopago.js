// A Mercado Pago webhook handler written from Mercado Pago's documentation
// (Node's standard library only): x-signature is split into ts and v1, the
// manifest id:<data.id from the query>;request-id:<x-request-id>;ts:<ts>; is
// signed with HMAC-SHA256 and the secret signature, and the hex digest must
// equal v1. MODE=correct works each payment (data.id) once; MODE=naive works
// every notification it is sent.
//
// env: PORT (0 = any, printed as "listening PORT"), SECRET, MODE. GET /work
// answers how many payments were worked.
const http = require("node:http");
const crypto = require("node:crypto");

const secret = process.env.SECRET;
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
    // As the docs: read the headers, data.id from the query string.
    const xSignature = req.headers["x-signature"] || "";
    const xRequestId = req.headers["x-request-id"];
    const urlParams = new URLSearchParams(req.url.split("?")[1] || "");
    const dataID = urlParams.get("data.id");
    let ts, hash;
    for (const part of xSignature.split(",")) {
      const [key, value] = part.split("=");
      if (key && value) {
        const k = key.trim();
        if (k === "ts") ts = value.trim();
        else if (k === "v1") hash = value.trim();
      }
    }
    const manifest = `id:${dataID};request-id:${xRequestId};ts:${ts};`;
    const sha = crypto.createHmac("sha256", secret).update(manifest).digest("hex");
    if (sha !== hash) {
      res.writeHead(401).end("HMAC verification failed");
      return;
    }
    const body = JSON.parse(Buffer.concat(chunks));
    const payment = body.data && body.data.id;
    if (naive || !seen.has(payment)) {
      seen.add(payment);
      work++;
    }
    res.writeHead(200).end();
  });
});

server.listen(Number(process.env.PORT || 0), "127.0.0.1", () => {
  console.log("listening " + server.address().port);
});
