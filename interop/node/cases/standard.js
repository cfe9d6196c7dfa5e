// The Standard Webhooks reference library (npm standardwebhooks).
"use strict";
const { Webhook } = require("standardwebhooks");

exports.verify = (op) => {
  new Webhook(op.secret).verify(op.body, op.headers);
  return true;
};

exports.sign = (op) => {
  const ts = new Date(op.timestamp * 1000);
  return {
    "webhook-id": op.id,
    "webhook-timestamp": String(op.timestamp),
    "webhook-signature": new Webhook(op.secret).sign(op.id, ts, op.body),
  };
};
