// A GitHub App webhook handler in the shape Octokit apps have: verify the
// signature, exchange the installation token (POST .../access_tokens), read
// the repository (GET /repos/...), and — once per delivery id — comment on
// the issue (POST /repos/.../comments). Only the comment is the effect; the
// token exchange and the read happen on every delivery, duplicates too.
//
// env: PORT (0 = any, printed as "listening PORT"), SECRET, API (base URL of
// the GitHub API, here hookreplay's sink).
const http = require("node:http");
const crypto = require("node:crypto");

const secret = process.env.SECRET;
const api = process.env.API;
const seen = new Set();

async function call(method, path, body) {
  const res = await fetch(api + path, {
    method,
    headers: { "content-type": "application/json" },
    body: body ? JSON.stringify(body) : undefined,
  });
  return res.json();
}

const server = http.createServer((req, res) => {
  const chunks = [];
  req.on("data", (c) => chunks.push(c));
  req.on("end", async () => {
    const body = Buffer.concat(chunks);
    const want = "sha256=" + crypto.createHmac("sha256", secret).update(body).digest("hex");
    const got = req.headers["x-hub-signature-256"] || "";
    if (got.length !== want.length || !crypto.timingSafeEqual(Buffer.from(got), Buffer.from(want))) {
      res.writeHead(401).end("bad signature");
      return;
    }
    const ev = JSON.parse(body);
    const repo = ev.repository.full_name;
    await call("POST", `/app/installations/${ev.installation ? ev.installation.id : 1}/access_tokens`);
    await call("GET", `/repos/${repo}`);
    const id = req.headers["x-github-delivery"];
    if (!seen.has(id)) {
      seen.add(id);
      await call("POST", `/repos/${repo}/issues/${ev.issue.number}/comments`, { body: "Thanks for the report!" });
    }
    res.writeHead(200).end("ok");
  });
});

server.listen(Number(process.env.PORT || 0), "127.0.0.1", () => {
  console.log("listening " + server.address().port);
});
