// An Express-style Node handler on the plain http module: Stripe signature,
// an in-memory dedupe whose keys expire (like a Redis SET NX EX), a credits
// counter read by GET /count.
const http = require('http');
const crypto = require('crypto');
const secret = process.env.SECRET || 'whsec_test';
const ttlMs = Number(process.env.TTL_MS || 60000);
const naive = process.env.MODE === 'naive';
const seen = new Map(); // event id -> expiry
const credits = new Map(); // customer/object -> count
let total = 0;
function verify(sigHeader, body) {
  const parts = Object.fromEntries(sigHeader.split(',').map((p) => p.split('=')));
  if (Math.abs(Date.now() / 1000 - Number(parts.t)) > 300) return false;
  const want = crypto.createHmac('sha256', secret).update(parts.t + '.' + body).digest('hex');
  return parts.v1 && parts.v1.length === want.length && crypto.timingSafeEqual(Buffer.from(parts.v1), Buffer.from(want));
}
http.createServer((req, res) => {
  if (req.method === 'GET' && req.url.startsWith('/count')) {
    const obj = new URL(req.url, 'http://x').searchParams.get('obj');
    res.end(String(obj ? credits.get(obj) || 0 : total));
    return;
  }
  let body = '';
  req.on('data', (c) => (body += c));
  req.on('end', () => {
    if (!verify(req.headers['stripe-signature'] || '', body)) {
      res.statusCode = 400;
      return res.end('bad signature');
    }
    const ev = JSON.parse(body);
    const now = Date.now();
    for (const [k, exp] of seen) if (exp < now) seen.delete(k);
    if (!naive && seen.has(ev.id)) return res.end('{"duplicate":true}');
    seen.set(ev.id, now + ttlMs);
    setTimeout(() => {
      const obj = ev.data && ev.data.object && ev.data.object.id;
      credits.set(obj, (credits.get(obj) || 0) + 1);
      total++;
    }, 5);
    res.end('{"received":true}');
  });
}).listen(Number(process.env.PORT), '127.0.0.1');
