// Mercado Pago's Node SDK (npm mercadopago): WebhookSignatureValidator.validate
// recomputes x-signature's v1 over id:<data.id>;request-id:<x-request-id>;ts:<ts>;
// with data.id from the query string, as Mercado Pago's docs say, and throws
// when it does not match (and, given toleranceSeconds, when ts is older).
// The SDK does not sign.
"use strict";
const { WebhookSignatureValidator } = require("mercadopago");

// The SDK builds the manifest from dataId as given; Mercado Pago's docs say
// an alphanumeric data.id (an Orders API ORD01…) goes into it lower-cased,
// so the caller lower-cases it, as their docs' sample does.
exports.verify = (op) => {
  const query = new URLSearchParams((op.target || "").split("?")[1] || "");
  const dataId = query.get("data.id");
  WebhookSignatureValidator.validate({
    xSignature: op.headers["x-signature"],
    xRequestId: op.headers["x-request-id"],
    dataId: dataId && /[^0-9]/.test(dataId) ? dataId.toLowerCase() : dataId,
    secret: op.secret,
    toleranceSeconds: op.tolerance || undefined,
  });
  // The notification's id; one without (an Orders API order) is known by
  // its resource, data.id.
  const ev = JSON.parse(op.body);
  return { id: String(ev.id !== undefined ? ev.id : ev.data.id), type: ev.action || ev.type };
};
