// run.js is the one node entry point of the interop suite: node run.js CASE
// reads a batch {"ops": [...]} as JSON on stdin, hands each op to
// cases/CASE.js (its verify(op) and sign(op)) and writes {"results": [...]},
// one per op in order, as JSON on stdout.
//
// An op carries body (a string), headers (lower-case name -> value), secret,
// url, id and timestamp (unix seconds). verify answers {accepted, error},
// and with the event's id and type as the SDK reads them when the case's
// verify returns {id, type};
// sign answers {headers} (the signature headers the SDK made). An SDK that
// throws on a forged copy counts as rejecting it; any other failure of the
// script itself ends the process with a message on stderr.
"use strict";

const name = process.argv[2];
if (!/^[a-z0-9-]+$/.test(name || "")) {
  process.stderr.write("usage: node run.js CASE < batch.json\n");
  process.exit(2);
}
const kase = require(`./cases/${name}.js`);

async function main() {
  const chunks = [];
  for await (const c of process.stdin) chunks.push(c);
  const batch = JSON.parse(Buffer.concat(chunks).toString("utf8"));
  const results = [];
  for (const op of batch.ops) {
    if (op.op === "verify") {
      try {
        const ok = await kase.verify(op);
        if (ok === false) results.push({ accepted: false, error: "returned false" });
        else if (ok && typeof ok === "object") results.push({ accepted: true, id: ok.id || "", type: ok.type || "" });
        else results.push({ accepted: true });
      } catch (e) {
        results.push({ accepted: false, error: String((e && e.message) || e) });
      }
    } else if (op.op === "sign") {
      if (typeof kase.sign !== "function") throw new Error(`case ${name} cannot sign`);
      results.push({ headers: await kase.sign(op) });
    } else {
      throw new Error(`unknown op ${op.op}`);
    }
  }
  process.stdout.write(JSON.stringify({ results }));
}

main().catch((e) => {
  process.stderr.write(`${name}: ${(e && e.stack) || e}\n`);
  process.exit(1);
});
