// Linear's SDK (npm @linear/sdk, ESM): LinearWebhookClient.verify checks
// Linear-Signature (hex HMAC-SHA256 of the raw body) and that the body's
// signed webhookTimestamp is within a minute of now. The SDK does not sign.
"use strict";

exports.verify = async (op) => {
  const { LinearWebhookClient } = await import("@linear/sdk/webhooks");
  const client = new LinearWebhookClient(op.secret);
  client.verify(Buffer.from(op.body), op.headers["linear-signature"] || "");
  return true;
};
