// Coinbase Commerce's Node library (npm coinbase-commerce-node):
// Webhook.verifyEventBody checks X-CC-Webhook-Signature (hex HMAC-SHA256 of
// the raw body) and returns the event; Webhook.computeSignature signs.
"use strict";
const { Webhook } = require("coinbase-commerce-node");

exports.verify = (op) => {
  const ev = Webhook.verifyEventBody(op.body, op.headers["x-cc-webhook-signature"] || "", op.secret);
  return { id: ev.id, type: ev.type };
};

exports.sign = (op) => ({ "x-cc-webhook-signature": Webhook.computeSignature(op.body, op.secret) });
