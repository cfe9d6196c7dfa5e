// Sign a Clerk-like user.created payload with svix's own library and print curl header args.
const { Webhook } = require('svix');
const wh = new Webhook(process.env.SVIX_SECRET);
const id = 'msg_' + require('crypto').randomBytes(12).toString('hex');
const now = new Date();
const payload = JSON.stringify({ type: 'user.created', object: 'event', data: { id: 'user_' + require('crypto').randomBytes(8).toString('hex'), email_addresses: [{ email_address: 'ada@example.com' }] } });
const sig = wh.sign(id, now, payload);
require('fs').writeFileSync(process.env.BODY_OUT, payload);
console.log(JSON.stringify({ id, ts: Math.floor(now / 1000), sig }));
