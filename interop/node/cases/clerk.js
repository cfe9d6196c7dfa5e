// Clerk's backend SDK (npm @clerk/backend): verifyWebhook checks a Request
// carrying Clerk's svix-* headers with the endpoint's signing secret and
// returns the event. The SDK does not sign.
"use strict";
const { verifyWebhook } = require("@clerk/backend/webhooks");

exports.verify = async (op) => {
  const req = new Request(op.url || "https://app.example.com/api/webhooks/clerk", { method: "POST", headers: op.headers, body: op.body });
  const ev = await verifyWebhook(req, { signingSecret: op.secret });
  return { type: ev.type };
};
