// Mercado Pago's Node SDK (npm mercadopago): WebhookSignatureValidator.validate
// recomputes x-signature's v1 over id:<data.id>;request-id:<x-request-id>;ts:<ts>;
// with data.id from the query string, as Mercado Pago's docs say, and throws
// when it does not match (and, given toleranceSeconds, when ts is older).
// The SDK does not sign.
"use strict";
const { WebhookSignatureValidator } = require("mercadopago");

exports.verify = (op) => {
  const query = new URLSearchParams((op.target || "").split("?")[1] || "");
  WebhookSignatureValidator.validate({
    xSignature: op.headers["x-signature"],
    xRequestId: op.headers["x-request-id"],
    dataId: query.get("data.id"),
    secret: op.secret,
    toleranceSeconds: op.tolerance || undefined,
  });
  // The notification's id; one without (an Orders API order) is known by
  // its resource, data.id.
  const ev = JSON.parse(op.body);
  return { id: String(ev.id !== undefined ? ev.id : ev.data.id), type: ev.action || ev.type };
};
