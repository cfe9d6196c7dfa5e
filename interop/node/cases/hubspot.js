// HubSpot's Node client (npm @hubspot/api-client): Signature.isValid with
// signatureVersion v3 checks X-HubSpot-Signature-v3 over method, URL, body
// and X-HubSpot-Request-Timestamp (5 min tolerance); Signature.getSignature
// signs the same string.
"use strict";
const { Signature } = require("@hubspot/api-client");

exports.verify = (op) =>
  Signature.isValid({
    signatureVersion: "v3",
    signature: op.headers["x-hubspot-signature-v3"] || "",
    clientSecret: op.secret,
    requestBody: op.body,
    method: op.method || "POST",
    url: op.url,
    timestamp: Number(op.headers["x-hubspot-request-timestamp"]),
  });

exports.sign = (op) => {
  const timestamp = op.timestamp * 1000;
  const signature = Signature.getSignature(op.method || "POST", "v3", {
    clientSecret: op.secret,
    requestBody: op.body,
    url: op.url,
    timestamp,
  });
  return { "x-hubspot-signature-v3": signature, "x-hubspot-request-timestamp": String(timestamp) };
};
