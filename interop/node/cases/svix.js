// Svix's own library (npm svix): Webhook.verify throws on a bad signature,
// a stale timestamp or a missing header; Webhook.sign makes "v1,<base64>".
"use strict";
const { Webhook } = require("svix");

exports.verify = (op) => {
  new Webhook(op.secret).verify(op.body, op.headers);
  return true;
};

exports.sign = (op) => {
  const ts = new Date(op.timestamp * 1000);
  return {
    "svix-id": op.id,
    "svix-timestamp": String(op.timestamp),
    "svix-signature": new Webhook(op.secret).sign(op.id, ts, op.body),
  };
};
