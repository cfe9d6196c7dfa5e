#!/usr/bin/env bash
# hookreplay check on webhook handlers written against real libraries as their
# docs show them (docs/handlers.md): Fastify + fastify-raw-body + standardwebhooks,
# Koa + koa-bodyparser + Shopify's HMAC with a Redis dedupe, @slack/bolt's own
# receiver, @octokit/webhooks with a Redis dedupe, a BullMQ queue and worker, a
# node:http route with svix, stripe-go's ConstructEvent with SQLite, and Python's
# http.server with sqlite3 — each correct and buggy (bench/experiments/handlers/,
# VARIANT=…). The handlers are ours; the libraries come from npm and the Go module
# proxy into a temp dir when it runs, nothing third-party is committed.
#
#   HOOKREPLAY_TEST_PG='postgres://…' bash bench/experiments/handlers-check.sh
#   ONLY=bullmq bash bench/experiments/handlers-check.sh   # fastify koa bolt octokit bullmq svix stripego python
#
# Needs node + npm, go, python3, redis-server and Postgres (HOOKREPLAY_TEST_PG; the
# hh_* schemas are created and dropped there). Prints one line per case: its exit
# code and phase statuses; reports in $OUT (default: a temp dir). About 10 minutes (npm install included).
set -uo pipefail
repo=$(cd "$(dirname "$0")/../.." && pwd)
src=$repo/bench/experiments/handlers
tmp=$(mktemp -d)
OUT=${OUT:-$tmp/reports}
mkdir -p "$OUT"
PG=${HOOKREPLAY_TEST_PG:?set HOOKREPLAY_TEST_PG to a Postgres URL}
export PG
pids=()
cleanup() { for p in "${pids[@]:-}"; do [ -n "$p" ] && kill "$p" 2>/dev/null; done; rm -rf "$tmp/node" "$tmp/go"; }
trap cleanup EXIT
(cd "$repo" && go build -o "$tmp/hr" .) || exit 1
HR=$tmp/hr
port() { python3 -c 'import socket;s=socket.socket();s.bind(("127.0.0.1",0));print(s.getsockname()[1])'; }
waitport() { for _ in $(seq 150); do (echo >/dev/tcp/127.0.0.1/"$1") 2>/dev/null && return 0; sleep 0.1; done; echo "nothing listens on $1" >&2; return 1; }
want() { [ -z "${ONLY:-}" ] || [ "$ONLY" = "$1" ]; }

# The versions docs/handlers.md reports.
mkdir -p "$tmp/node" && cp "$src"/*.js "$tmp/node/" && (cd "$tmp/node" && npm init -y >/dev/null &&
  npm install --no-audit --no-fund fastify@5.12.8 fastify-raw-body@6.0.1 standardwebhooks@1.3.0 koa@3.3.0 \
    koa-bodyparser@4.4.1 @koa/router@15.7.0 ioredis@6.1.0 redis@6.4.0 @slack/bolt@5.1.0 @octokit/webhooks@14.2.0 \
    bullmq@6.7.6 svix@1.99.1 pg@8.23.1 >"$OUT/npm.log" 2>&1) || { echo "npm install failed: $OUT/npm.log"; exit 1; }
mkdir -p "$tmp/go" && cp "$src/gostripe.go" "$tmp/go/main.go" && sed -i '1,2d' "$tmp/go/main.go" &&
  (cd "$tmp/go" && printf 'module gostripe\n\ngo 1.26.0\n' >go.mod && GOFLAGS=-mod=mod go get github.com/stripe/stripe-go/v82@v82.5.1 modernc.org/sqlite@v1.62.0 >/dev/null 2>&1 &&
  go build -o gostripe .) || { echo "building the stripe-go handler failed"; exit 1; }

RP=$(port)
redis-server --port "$RP" --bind 127.0.0.1 --save '' --appendonly no >"$OUT/redis.log" 2>&1 &
pids+=($!)
waitport "$RP" || exit 1
export REDIS_URL=redis://127.0.0.1:$RP/0
psql "$PG" -q >/dev/null 2>&1 <<'SQL'
DROP SCHEMA IF EXISTS hh_fastify CASCADE; CREATE SCHEMA hh_fastify;
CREATE TABLE hh_fastify.processed(id text PRIMARY KEY); CREATE TABLE hh_fastify.invoices(event_type text, amount int);
DROP SCHEMA IF EXISTS hh_bolt CASCADE; CREATE SCHEMA hh_bolt;
CREATE TABLE hh_bolt.processed(id text PRIMARY KEY); CREATE TABLE hh_bolt.mentions(channel text, text text);
DROP SCHEMA IF EXISTS hh_octo CASCADE; CREATE SCHEMA hh_octo; CREATE TABLE hh_octo.issues(repo text, number int);
DROP SCHEMA IF EXISTS hh_bull CASCADE; CREATE SCHEMA hh_bull; CREATE TABLE hh_bull.issues(repo text, number int);
DROP SCHEMA IF EXISTS hh_svix CASCADE; CREATE SCHEMA hh_svix;
CREATE TABLE hh_svix.processed(id text PRIMARY KEY); CREATE TABLE hh_svix.users(clerk_id text, email text);
SQL
trap 'cleanup; psql "$PG" -qc "DROP SCHEMA IF EXISTS hh_fastify, hh_bolt, hh_octo, hh_bull, hh_svix CASCADE" >/dev/null 2>&1' EXIT

export WEBHOOK_SECRET=whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw SVIX_SECRET=whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw
export SHOPIFY_SECRET=shpss_test_secret_123 SLACK_SIGNING_SECRET=8f742231b10e8888abcd99yyyzzz85a5
export GITHUB_WEBHOOK_SECRET=s3cr3t-octo STRIPE_WEBHOOK_SECRET=whsec_test_secret

summary() { # NAME CODE: one line from the JSON report
  python3 - "$OUT/$1.json" "$1" "$2" <<'PY'
import json, sys
path, name, code = sys.argv[1:]
try:
    c = json.load(open(path))
    ph = " ".join(f"{p['phase']}={p['status']}" for d in c.get("deliveries", []) for p in d.get("phases", []))
except Exception:
    ph = "(no report: " + open(path.replace(".json", ".err")).read().strip()[:300] + ")"
print(f"{name:28} exit {code}  {ph}")
PY
}

# capture NAME PROVIDER EVENT PATH SECRETENV CMD…: start the handler, store one
# delivery sent through capture (hookreplay send, or $SENDCMD), stop capture.
capture() {
  local name=$1 provider=$2 event=$3 path=$4 senv=$5; shift 5
  P=$(port) C=$(port); export PORT=$P
  db=$OUT/$name.db
  (cd "$tmp/node" && exec "$@") >"$OUT/$name.handler.log" 2>&1 &
  hpid=$!; pids+=($hpid)
  waitport "$P" || return 1
  $HR capture --db "$db" --listen "127.0.0.1:$C" --forward "http://127.0.0.1:$P" --secret-env "$senv" -q >"$OUT/$name.capture.log" 2>&1 &
  local cpid=$!
  waitport "$C"
  if [ -n "${SENDCMD:-}" ]; then eval "$SENDCMD"; else
    $HR send --provider "$provider" --event "$event" --secret-env "$senv" --to "http://127.0.0.1:$P$path" --via "http://127.0.0.1:$C" >/dev/null 2>&1; fi
  sleep 0.5; kill "$cpid"; wait "$cpid" 2>/dev/null
}
# check NAME PATH SECRETENV ARGS…: check the handler capture started, then stop it.
check() {
  local name=$1 path=$2 senv=$3; shift 3
  $HR check --db "$db" --last --to "http://127.0.0.1:$P$path" --secret-env "$senv" --report "json=$OUT/$name.json" "$@" >"$OUT/$name.txt" 2>"$OUT/$name.err"
  summary "$name" $?
  kill "$hpid" 2>/dev/null; wait "$hpid" 2>/dev/null
}
# serve NAME DB PATH SECRETENV CMD ARGS…: check with --serve (the crash phase).
serve() {
  local name=$1 sdb=$2 path=$3 senv=$4 cmd=$5; shift 5
  P=$(port); export PORT=$P
  $HR check --db "$sdb" --last --to "http://127.0.0.1:$P$path" --secret-env "$senv" --serve "cd $tmp/node && $cmd" --report "json=$OUT/$name.json" "$@" >"$OUT/$name.txt" 2>"$OUT/$name.err"
  summary "$name" $?
}
reset_pg() { psql "$PG" -qc "TRUNCATE $*" >/dev/null; }
reset_redis() { redis-cli -p "$RP" flushall >/dev/null; }

if want fastify; then
  for v in correct nodedupe sigkey noawait; do
    reset_pg hh_fastify.processed, hh_fastify.invoices
    VARIANT=$v capture fastify-$v standard invoice.paid /webhooks WEBHOOK_SECRET node fastify_sw.js &&
      check fastify-$v /webhooks WEBHOOK_SECRET --probe-sql "SELECT count(*) FROM hh_fastify.invoices" --dsn "$PG"
  done
fi
if want koa; then
  for v in correct getset reencode; do
    reset_redis
    VARIANT=$v capture koa-$v shopify orders/create /webhooks/shopify SHOPIFY_SECRET node koa_shopify.js &&
      check koa-$v /webhooks/shopify SHOPIFY_SECRET --probe-redis "orders=$REDIS_URL LLEN orders"
  done
fi
if want bolt; then
  for v in correct nodedupe; do
    reset_pg hh_bolt.processed, hh_bolt.mentions
    VARIANT=$v capture bolt-$v slack event_callback /slack/events SLACK_SIGNING_SECRET node bolt_slack.js &&
      check bolt-$v /slack/events SLACK_SIGNING_SECRET --probe-sql "SELECT count(*) FROM hh_bolt.mentions" --dsn "$PG"
  done
  for v in correct ignoreretries; do
    reset_pg hh_bolt.processed, hh_bolt.mentions
    VARIANT=$v serve bolt-$v-crash "$OUT/bolt-nodedupe.db" /slack/events SLACK_SIGNING_SECRET "exec node bolt_slack.js" \
      --phases first,dups,crash --probe-sql "SELECT count(*) FROM hh_bolt.mentions" --dsn "$PG"
  done
fi
if want octokit; then
  for v in correct getset; do
    reset_redis; reset_pg hh_octo.issues
    VARIANT=$v capture octokit-$v github issues.opened /api/github/webhooks GITHUB_WEBHOOK_SECRET node octokit_redis.js &&
      check octokit-$v /api/github/webhooks GITHUB_WEBHOOK_SECRET --probe-sql "issues=SELECT count(*) FROM hh_octo.issues" --dsn "$PG" \
        --probe-redis "seen=$REDIS_URL KEYS-COUNT 'gh:delivery:*'"
  done
  reset_redis; reset_pg hh_octo.issues
  VARIANT=correct serve octokit-correct-crash "$OUT/octokit-correct.db" /api/github/webhooks GITHUB_WEBHOOK_SECRET "exec node octokit_redis.js" \
    --phases first,crash --probe-sql "issues=SELECT count(*) FROM hh_octo.issues" --dsn "$PG"
fi
if want bullmq; then
  for v in correct nojobid removeoncomplete; do
    reset_redis; reset_pg hh_bull.issues
    VARIANT=$v capture bullmq-$v github issues.opened /api/github/webhooks GITHUB_WEBHOOK_SECRET node bullmq_gh.js &&
      check bullmq-$v /api/github/webhooks GITHUB_WEBHOOK_SECRET --probe-sql "issues=SELECT count(*) FROM hh_bull.issues" --dsn "$PG"
  done
  # crash with a short lock, so that a dead worker's job comes back within --settle-max
  reset_redis; reset_pg hh_bull.issues
  LOCK_MS=2000 STALLED_MS=1000 VARIANT=correct serve bullmq-correct-crash "$OUT/bullmq-correct.db" /api/github/webhooks GITHUB_WEBHOOK_SECRET \
    "exec node bullmq_gh.js" --phases first,crash --settle-max 10s --probe-sql "issues=SELECT count(*) FROM hh_bull.issues" --dsn "$PG"
fi
if want svix; then
  # signed with svix's own library, sent through capture with curl
  svix_send='j=$(cd "$tmp/node" && BODY_OUT=$OUT/svix-body.json node sign_svix.js) &&
    curl -s -o /dev/null -X POST "http://127.0.0.1:$C/api/webhooks/clerk" -H "content-type: application/json" \
      -H "svix-id: $(echo "$j" | python3 -c "import json,sys;print(json.load(sys.stdin)[\"id\"])")" \
      -H "svix-timestamp: $(echo "$j" | python3 -c "import json,sys;print(json.load(sys.stdin)[\"ts\"])")" \
      -H "svix-signature: $(echo "$j" | python3 -c "import json,sys;print(json.load(sys.stdin)[\"sig\"])")" \
      --data-binary @"$OUT/svix-body.json"'
  for v in correct checkinsert sigkey; do
    reset_pg hh_svix.processed, hh_svix.users
    SENDCMD=$svix_send VARIANT=$v capture svix-$v svix - /api/webhooks/clerk SVIX_SECRET node plain_svix.js &&
      check svix-$v /api/webhooks/clerk SVIX_SECRET --probe-sql "users=SELECT count(*) FROM hh_svix.users" --dsn "$PG"
  done
fi
if want stripego; then
  sed 's/"api_version": "2024-06-20"/"api_version": "2025-08-27.basil"/' "$repo/internal/verify/fixtures/stripe/invoice.payment_succeeded.json" >"$OUT/basil.json"
  for v in sample correct racy; do
    rm -f "$OUT/gostripe.db"*
    send=''
    [ "$v" != sample ] && send='$HR send --provider stripe --body "$OUT/basil.json" --secret-env STRIPE_WEBHOOK_SECRET --to "http://127.0.0.1:$P/webhook" --via "http://127.0.0.1:$C" >/dev/null 2>&1'
    SENDCMD=$send DB=$OUT/gostripe.db VARIANT=$v capture stripego-$v stripe invoice.payment_succeeded /webhook STRIPE_WEBHOOK_SECRET "$tmp/go/gostripe" &&
      check stripego-$v /webhook STRIPE_WEBHOOK_SECRET --probe-sql "SELECT count(*) FROM payments" --dsn "sqlite:$OUT/gostripe.db"
  done
fi
if want python; then
  for v in correct racy; do
    rm -f "$OUT/py.db"*
    DB=$OUT/py.db VARIANT=$v capture python-$v stripe invoice.payment_succeeded /webhooks/stripe STRIPE_WEBHOOK_SECRET python3 "$src/py_stripe.py" &&
      check python-$v /webhooks/stripe STRIPE_WEBHOOK_SECRET --probe-sql "SELECT COALESCE(SUM(amount), 0) FROM credits" --dsn "sqlite:$OUT/py.db"
  done
  rm -f "$OUT/py.db"*
  DB=$OUT/py.db VARIANT=ack_then_thread serve python-ackthread-crash "$OUT/python-correct.db" /webhooks/stripe STRIPE_WEBHOOK_SECRET \
    "exec python3 $src/py_stripe.py" --phases first,dups,crash --probe-sql "SELECT COALESCE(SUM(amount), 0) FROM credits" --dsn "sqlite:$OUT/py.db"
fi
echo "reports: $OUT"
