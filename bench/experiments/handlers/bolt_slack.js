// @slack/bolt with its built-in HTTPReceiver; app_mention recorded in Postgres.
const { App } = require('@slack/bolt');
const { Pool } = require('pg');
const VARIANT = process.env.VARIANT || 'correct';
const pool = new Pool({ connectionString: process.env.PG, max: 10 });
const schema = process.env.SCHEMA || 'hh_bolt';
const app = new App({
  signingSecret: process.env.SLACK_SIGNING_SECRET,
  authorize: async () => ({ botToken: 'xoxb-not-used', botUserId: 'U0BOT' }),
  processBeforeResponse: VARIANT !== 'ignoreretries',
  endpoints: '/slack/events',
});
app.event('app_mention', async ({ event, body, context }) => {
  if (VARIANT === 'ignoreretries' && context.retryNum) return; // "ignore Slack's retries", a common recipe
  if (VARIANT === 'correct') {
    const c = await pool.connect();
    try {
      await c.query('BEGIN');
      const r = await c.query(`INSERT INTO ${schema}.processed(id) VALUES ($1) ON CONFLICT DO NOTHING`, [body.event_id]);
      if (r.rowCount === 1) await c.query(`INSERT INTO ${schema}.mentions(channel, text) VALUES ($1, $2)`, [event.channel, event.text]);
      await c.query('COMMIT');
    } catch (e) { await c.query('ROLLBACK'); throw e; } finally { c.release(); }
  } else {
    await pool.query(`INSERT INTO ${schema}.mentions(channel, text) VALUES ($1, $2)`, [event.channel, event.text]);
  }
});
(async () => { await app.start({ port: +process.env.PORT, host: '127.0.0.1' }); })();
