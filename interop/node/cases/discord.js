// Discord's discord-interactions (npm): verifyKey checks X-Signature-Ed25519
// over X-Signature-Timestamp + body with the application's public key (hex).
// The library does not sign; the counterpart signature is made with Node's
// own Ed25519 from the test key pair's private key (seed + public key, hex).
"use strict";
const crypto = require("crypto");
const { verifyKey } = require("discord-interactions");

exports.verify = (op) =>
  verifyKey(op.body, op.headers["x-signature-ed25519"] || "", op.headers["x-signature-timestamp"] || "", op.secret);

// PKCS#8 DER prefix of an Ed25519 private key (RFC 8410), before the 32-byte seed.
const pkcs8Prefix = Buffer.from("302e020100300506032b657004220420", "hex");

exports.sign = (op) => {
  const seed = Buffer.from(op.secret, "hex").subarray(0, 32);
  const key = crypto.createPrivateKey({ key: Buffer.concat([pkcs8Prefix, seed]), format: "der", type: "pkcs8" });
  const ts = String(op.timestamp);
  const sig = crypto.sign(null, Buffer.concat([Buffer.from(ts), Buffer.from(op.body)]), key);
  return { "x-signature-ed25519": sig.toString("hex"), "x-signature-timestamp": ts };
};
