// A WhatsApp Cloud API webhook handler written from Meta's documentation
// (Node's standard library only): the GET verification request answers
// hub.challenge when hub.verify_token matches; a POST is verified with
// X-Hub-Signature-256 (HMAC-SHA256 of the raw body with the app secret) and
// every message and status in it is worked. MODE=correct works each wamid
// once; MODE=naive works every message it is sent, as the sample apps do;
// MODE=reencode dedupes like correct but verifies JSON.stringify of the
// parsed body (an express.json() app's req.body) instead of the raw bytes,
// which differ from what Meta signed wherever Meta escapes "/" as "\/".
//
// env: PORT (0 = any, printed as "listening PORT"), SECRET (the app secret),
// VERIFY_TOKEN, MODE. GET /work answers how many messages were worked.
const http = require("node:http");
const crypto = require("node:crypto");

const secret = process.env.SECRET;
const verifyToken = process.env.VERIFY_TOKEN || "meatyhamhock";
const naive = process.env.MODE === "naive";
const reencode = process.env.MODE === "reencode";
const seen = new Set();
let work = 0;

const server = http.createServer((req, res) => {
  const url = new URL(req.url, "http://localhost");
  if (req.method === "GET" && url.pathname === "/work") {
    res.end(String(work));
    return;
  }
  if (req.method === "GET") {
    const q = url.searchParams;
    if (q.get("hub.mode") === "subscribe" && q.get("hub.verify_token") === verifyToken) {
      res.writeHead(200, { "content-type": "text/plain" }).end(q.get("hub.challenge"));
    } else {
      res.writeHead(403).end();
    }
    return;
  }
  const chunks = [];
  req.on("data", (c) => chunks.push(c));
  req.on("end", () => {
    const raw = Buffer.concat(chunks);
    const body = reencode ? Buffer.from(JSON.stringify(JSON.parse(raw))) : raw;
    const got = req.headers["x-hub-signature-256"] || "";
    const want = "sha256=" + crypto.createHmac("sha256", secret).update(body).digest("hex");
    if (got.length !== want.length || !crypto.timingSafeEqual(Buffer.from(got), Buffer.from(want))) {
      res.writeHead(401).end("bad signature");
      return;
    }
    const ev = JSON.parse(body);
    for (const entry of ev.entry || []) {
      for (const change of entry.changes || []) {
        const v = change.value || {};
        for (const m of [...(v.messages || []), ...(v.statuses || [])]) {
          if (naive || !seen.has(m.id)) {
            seen.add(m.id);
            work++;
          }
        }
      }
    }
    res.writeHead(200).end("EVENT_RECEIVED");
  });
});

server.listen(Number(process.env.PORT || 0), "127.0.0.1", () => {
  console.log("listening " + server.address().port);
});
