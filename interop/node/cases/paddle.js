// Paddle's Node SDK (npm @paddle/paddle-node-sdk) as its docs use it:
// paddle.webhooks.unmarshal checks Paddle-Signature (5 s tolerance) and
// parses the event. The SDK does not sign.
"use strict";
const { Paddle, LogLevel } = require("@paddle/paddle-node-sdk");

const paddle = new Paddle("pdl_sdbx_apikey_01hv8wz9ymdx3e4t7fb4r0mbxh_unused", { logLevel: LogLevel.none });

exports.verify = async (op) => {
  const ev = await paddle.webhooks.unmarshal(op.body, op.secret, op.headers["paddle-signature"] || "");
  return { id: ev.eventId, type: ev.eventType };
};
