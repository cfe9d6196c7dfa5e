// SendGrid's @sendgrid/eventwebhook: EventWebhook.verifySignature checks
// X-Twilio-Email-Event-Webhook-Signature (base64 DER ECDSA P-256) over
// X-Twilio-Email-Event-Webhook-Timestamp + body with the public key Mail
// Settings shows (base64 DER). The library does not sign; the counterpart
// signature is made with Node's own ECDSA from the test key pair's private
// key (PKCS#8 PEM).
"use strict";
const crypto = require("crypto");
const { EventWebhook } = require("@sendgrid/eventwebhook");

exports.verify = (op) => {
  const ew = new EventWebhook();
  const key = ew.convertPublicKeyToECDSA(op.secret);
  return ew.verifySignature(
    key,
    op.body,
    op.headers["x-twilio-email-event-webhook-signature"] || "",
    op.headers["x-twilio-email-event-webhook-timestamp"] || "",
  );
};

exports.sign = (op) => {
  const ts = String(op.timestamp);
  const sig = crypto.sign("sha256", Buffer.concat([Buffer.from(ts), Buffer.from(op.body)]), crypto.createPrivateKey(op.secret));
  return { "x-twilio-email-event-webhook-signature": sig.toString("base64"), "x-twilio-email-event-webhook-timestamp": ts };
};
