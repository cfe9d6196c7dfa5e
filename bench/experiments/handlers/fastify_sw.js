// Fastify + fastify-raw-body + standardwebhooks (as in their READMEs); Postgres dedupe on webhook-id.
// VARIANT: correct | nodedupe | sigkey (dedupe on webhook-signature) | noawait
const Fastify = require('fastify');
const { Webhook } = require('standardwebhooks');
const { Pool } = require('pg');
const VARIANT = process.env.VARIANT || 'correct';
const pool = new Pool({ connectionString: process.env.PG, max: 10 });
const schema = process.env.SCHEMA || 'hh_fastify';
const wh = new Webhook(process.env.WEBHOOK_SECRET);
const app = Fastify();
(async () => {
// As fastify-raw-body's README: awaited, so that its onRoute hook sees the route.
// VARIANT=noawait registers it without await, a mistake: req.rawBody is undefined.
const plugin = app.register(require('fastify-raw-body'), { field: 'rawBody', global: false, encoding: 'utf8', runFirst: true });
if (VARIANT !== 'noawait') await plugin;
app.post('/webhooks', { config: { rawBody: true } }, async (req, reply) => {
  let evt;
  try {
    evt = wh.verify(req.rawBody, req.headers);
  } catch (e) {
    return reply.code(400).send({ error: "bad signature" });
  }
  const key = VARIANT === 'sigkey' ? req.headers['webhook-signature'] : req.headers['webhook-id'];
  const c = await pool.connect();
  try {
    await c.query('BEGIN');
    if (VARIANT !== 'nodedupe') {
      const r = await c.query(`INSERT INTO ${schema}.processed(id) VALUES ($1) ON CONFLICT DO NOTHING`, [key]);
      if (r.rowCount === 0) { await c.query('ROLLBACK'); return { ok: true, duplicate: true }; }
    }
    await c.query(`INSERT INTO ${schema}.invoices(event_type, amount) VALUES ($1, $2)`, [evt.type, 4900]);
    await c.query('COMMIT');
  } catch (e) {
    await c.query('ROLLBACK'); throw e;
  } finally { c.release(); }
  return { ok: true };
});
app.listen({ port: +process.env.PORT, host: '127.0.0.1' });
})();
