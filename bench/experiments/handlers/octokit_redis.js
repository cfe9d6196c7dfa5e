// @octokit/webhooks createNodeMiddleware on node:http; Redis (node-redis) dedupe on X-GitHub-Delivery; effect in Postgres.
const http = require('http');
const { Webhooks, createNodeMiddleware } = require('@octokit/webhooks');
const { createClient } = require('redis');
const { Pool } = require('pg');
const VARIANT = process.env.VARIANT || 'correct';
const pool = new Pool({ connectionString: process.env.PG, max: 10 });
const schema = process.env.SCHEMA || 'hh_octo';
const redis = createClient({ url: process.env.REDIS_URL });
const webhooks = new Webhooks({ secret: process.env.GITHUB_WEBHOOK_SECRET });
webhooks.on('issues.opened', async ({ id, payload }) => {
  const key = 'gh:delivery:' + id;
  if (VARIANT === 'getset') {
    if (await redis.get(key)) return;
    await pool.query(`INSERT INTO ${schema}.issues(repo, number) VALUES ($1, $2)`, [payload.repository.full_name, payload.issue.number]);
    await redis.set(key, '1', { EX: 3 * 86400 });
    return;
  }
  // claim first; give the claim back when the work fails
  const ok = await redis.set(key, '1', { NX: true, EX: 3 * 86400 });
  if (!ok) return;
  try {
    await pool.query(`INSERT INTO ${schema}.issues(repo, number) VALUES ($1, $2)`, [payload.repository.full_name, payload.issue.number]);
  } catch (e) { await redis.del(key); throw e; }
});
(async () => {
  await redis.connect();
  http.createServer(createNodeMiddleware(webhooks, { path: '/api/github/webhooks' })).listen(+process.env.PORT, '127.0.0.1');
})();
