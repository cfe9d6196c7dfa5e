// Resend's Node SDK (npm resend): resend.webhooks.verify checks the svix-*
// headers of a Resend webhook with the endpoint's signing secret (whsec_…).
// The SDK does not sign.
"use strict";
const { Resend } = require("resend");

const resend = new Resend("re_hookreplay_interop_unused");

exports.verify = (op) => {
  const ev = resend.webhooks.verify({
    payload: op.body,
    headers: { id: op.headers["svix-id"], timestamp: op.headers["svix-timestamp"], signature: op.headers["svix-signature"] },
    webhookSecret: op.secret,
  });
  return { type: ev.type };
};
