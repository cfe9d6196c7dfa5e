// Square's Node SDK (npm square): WebhooksHelper.verifySignature checks
// x-square-hmacsha256-signature over the notification URL and the body.
// The SDK does not sign.
"use strict";
const { WebhooksHelper } = require("square");

exports.verify = (op) =>
  WebhooksHelper.verifySignature({
    requestBody: op.body,
    signatureHeader: op.headers["x-square-hmacsha256-signature"] || "",
    signatureKey: op.secret,
    notificationUrl: op.url,
  });
