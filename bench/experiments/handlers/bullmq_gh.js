// Handler enqueues to BullMQ (jobId = X-GitHub-Delivery), worker records later. Same process.
// VARIANT: correct | nojobid | removeoncomplete (jobId, but the job is removed once done)
const http = require('http');
const { Webhooks, createNodeMiddleware } = require('@octokit/webhooks');
const { Queue, Worker } = require('bullmq');
const { Pool } = require('pg');
const VARIANT = process.env.VARIANT || 'correct';
const u = new URL(process.env.REDIS_URL);
const connection = { host: u.hostname, port: +u.port };
const pool = new Pool({ connectionString: process.env.PG, max: 10 });
const schema = process.env.SCHEMA || 'hh_bull';
const queue = new Queue('github', { connection });
const webhooks = new Webhooks({ secret: process.env.GITHUB_WEBHOOK_SECRET });
webhooks.on('issues.opened', async ({ id, payload }) => {
  const opts = {};
  if (VARIANT === 'correct') opts.jobId = id;
  if (VARIANT === 'removeoncomplete') { opts.jobId = id; opts.removeOnComplete = true; }
  await queue.add('issues.opened', { repo: payload.repository.full_name, number: payload.issue.number }, opts);
});
new Worker('github', async (job) => {
  await new Promise((r) => setTimeout(r, +(process.env.WORK_MS || 200)));
  await pool.query(`INSERT INTO ${schema}.issues(repo, number) VALUES ($1, $2)`, [job.data.repo, job.data.number]);
}, {
  connection, concurrency: 4,
  // BullMQ's defaults are 30 s each: a dead worker's job comes back up to a minute later.
  lockDuration: +(process.env.LOCK_MS || 30000), stalledInterval: +(process.env.STALLED_MS || 30000),
});
http.createServer(createNodeMiddleware(webhooks, { path: '/api/github/webhooks' })).listen(+process.env.PORT, '127.0.0.1');
