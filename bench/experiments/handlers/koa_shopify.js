// Koa + koa-bodyparser (rawBody) + Shopify HMAC; Redis dedupe on X-Shopify-Webhook-Id (ioredis).
const Koa = require('koa');
const Router = require('@koa/router');
const bodyParser = require('koa-bodyparser');
const crypto = require('crypto');
const Redis = require('ioredis');
const VARIANT = process.env.VARIANT || 'correct';
const redis = new Redis(process.env.REDIS_URL);
const SECRET = process.env.SHOPIFY_SECRET;
const app = new Koa();
const router = new Router();
app.use(bodyParser());
// Atomically: remember the webhook id and record the order, or do nothing.
const claimAndWork = `if redis.call('SET', KEYS[1], '1', 'NX', 'EX', 172800) then redis.call('RPUSH', KEYS[2], ARGV[1]) return 1 end return 0`;
router.post('/webhooks/shopify', async (ctx) => {
  const raw = VARIANT === 'reencode' ? JSON.stringify(ctx.request.body) : ctx.request.rawBody;
  const digest = crypto.createHmac('sha256', SECRET).update(raw, 'utf8').digest('base64');
  const given = ctx.get('X-Shopify-Hmac-Sha256');
  if (!given || !crypto.timingSafeEqual(Buffer.from(digest), Buffer.from(given.padEnd(digest.length).slice(0, digest.length))) || given.length !== digest.length) {
    ctx.status = 401; ctx.body = 'hmac mismatch'; return;
  }
  const id = ctx.get('X-Shopify-Webhook-Id');
  const order = ctx.request.body;
  if (VARIANT === 'getset') {
    const seen = await redis.get('shopify:webhook:' + id);
    if (seen) { ctx.status = 200; ctx.body = 'dup'; return; }
    await redis.rpush('orders', String(order.id));
    await redis.set('shopify:webhook:' + id, '1', 'EX', 172800);
  } else {
    await redis.eval(claimAndWork, 2, 'shopify:webhook:' + id, 'orders', String(order.id));
  }
  ctx.status = 200; ctx.body = 'ok';
});
app.use(router.routes());
app.listen(+process.env.PORT, '127.0.0.1');
