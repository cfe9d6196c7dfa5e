// Razorpay's Node SDK (npm razorpay): Razorpay.validateWebhookSignature
// compares X-Razorpay-Signature with the hex HMAC-SHA256 of the raw body.
// The SDK does not sign.
"use strict";
const Razorpay = require("razorpay");

exports.verify = (op) => Razorpay.validateWebhookSignature(op.body, op.headers["x-razorpay-signature"] || "", op.secret);
