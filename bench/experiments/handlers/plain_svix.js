// A Next.js-style route on node:http: read the raw body, svix Webhook.verify, dedupe in Postgres.
const http = require('http');
const { Webhook } = require('svix');
const { Pool } = require('pg');
const VARIANT = process.env.VARIANT || 'correct';
const pool = new Pool({ connectionString: process.env.PG, max: 10 });
const schema = process.env.SCHEMA || 'hh_svix';
const wh = new Webhook(process.env.SVIX_SECRET);
http.createServer(async (req, res) => {
  if (req.method !== 'POST' || req.url !== '/api/webhooks/clerk') { res.statusCode = 404; return res.end(); }
  const chunks = []; for await (const c of req) chunks.push(c);
  const payload = Buffer.concat(chunks).toString('utf8');
  let evt;
  try { evt = wh.verify(payload, req.headers); } catch (e) { res.statusCode = 400; return res.end('invalid signature'); }
  try {
    if (VARIANT === 'checkinsert') {
      const r = await pool.query(`SELECT 1 FROM ${schema}.processed WHERE id = $1`, [req.headers['svix-id']]);
      if (r.rowCount === 0) {
        await pool.query(`INSERT INTO ${schema}.users(clerk_id, email) VALUES ($1, $2)`, [evt.data.id, evt.data.email_addresses?.[0]?.email_address]);
        await pool.query(`INSERT INTO ${schema}.processed(id) VALUES ($1)`, [req.headers['svix-id']]);
      }
    } else {
      const key = VARIANT === 'sigkey' ? req.headers['svix-signature'] : req.headers['svix-id'];
      const c = await pool.connect();
      try {
        await c.query('BEGIN');
        const r = await c.query(`INSERT INTO ${schema}.processed(id) VALUES ($1) ON CONFLICT DO NOTHING`, [key]);
        if (r.rowCount === 1) await c.query(`INSERT INTO ${schema}.users(clerk_id, email) VALUES ($1, $2)`, [evt.data.id, evt.data.email_addresses?.[0]?.email_address]);
        await c.query('COMMIT');
      } catch (e) { await c.query('ROLLBACK'); throw e; } finally { c.release(); }
    }
    res.setHeader('content-type', 'application/json'); res.end('{"received":true}');
  } catch (e) { res.statusCode = 500; res.end(String(e.message)); }
}).listen(+process.env.PORT, '127.0.0.1');
