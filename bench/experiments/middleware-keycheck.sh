#!/usr/bin/env bash
# keycheck on real idempotency middleware (docs/keycheck.md, "Tried on real
# middleware"). Builds, in a temp dir and at run time only, a small messaging
# API on Fiber v2 and on Fiber v3 with middleware/idempotency set up as their
# docs show (app.Use(idempotency.New())), and, when npm is there, one on NestJS 10
# with @node-idempotency/nestjs as its README shows, and one on Express 4 with
# express-idempotency as its README shows; then runs hookreplay
# keycheck with every input on each, under each profile. Nothing third-party is
# committed: the modules come from the Go module proxy and npm when it runs.
#
#   bash bench/experiments/middleware-keycheck.sh            # all
#   ONLY=fiber2 bash bench/experiments/middleware-keycheck.sh  # fiber2 fiber3 nest express
#
# Needs network access to the Go module proxy (and npm for nest and express;
# redis-server for Fiber's outage run). Writes each run's report to $OUT (default:
# a temp dir; the APIs' own output to $OUT/servers.log) and prints a summary per
# run: its exit code, counts and every check's status. About 12 minutes.
set -euo pipefail
repo=$(cd "$(dirname "$0")/../.." && pwd)
tmp=$(mktemp -d)
OUT=${OUT:-$tmp/reports}
mkdir -p "$OUT"
pids=()
cleanup() { for p in "${pids[@]:-}"; do [ -n "$p" ] && kill "$p" 2>/dev/null || true; done; rm -rf "$tmp/go" "$tmp/nest" "$tmp/express"; }
trap cleanup EXIT
(cd "$repo" && go build -o "$tmp/hr" .)
HR="$tmp/hr --db $tmp/hr.db"
# The versions docs/keycheck.md reports; FIBER2=latest to try another.
FIBER2=${FIBER2:-v2.52.15} FIBER3=${FIBER3:-v3.1.0}

port() { shuf -i 20000-60000 -n 1; }
wait_up() { for _ in $(seq 100); do curl -s -o /dev/null "http://127.0.0.1:$1/debug/count" && return 0; sleep 0.1; done; echo "API on $1 did not start" >&2; return 1; }

# keycheck NAME PORT PROFILE KEYHEADER [flags...]
keycheck() {
  local name=$1 p=$2 prof=$3 kh=$4; shift 4
  set +e
  $HR keycheck --to "http://127.0.0.1:$p/v1/messages" --key-header "$kh" --profile "$prof" \
    --body '{"to":"+31600000000","text":"hi {{nonce}}"}' -H 'Authorization: AccessKey acct_a' \
    --slow-body '{"to":"+31600000000","text":"slow {{nonce}}","delay_ms":600}' \
    --fail-body '{"to":"+31600000000","text":"fail {{nonce}}","fail_once":true}' --invalid-body '{"to":"+31600000000"}' \
    --other-account 'Authorization: AccessKey acct_b' \
    --also 'PATCH /v1/messages/{id} {"text":"edited"}' --also 'DELETE /v1/messages/{id}' \
    --probe-http "count=http://127.0.0.1:$p/debug/count" -q "$@" >"$OUT/$name-$prof.txt" 2>&1
  local rc=$?
  set -e
  printf '%-24s exit %d  %s\n' "$name $prof" "$rc" "$(grep -E '^\s+[0-9]+ checks:' "$OUT/$name-$prof.txt" | sed 's/^ *//')"
  awk '$2 ~ /^(pass|fail|warn|info|skip|inconclusive|error)$/ {printf "%s:%s ", $3, $2} END {print ""}' "$OUT/$name-$prof.txt" | fold -s -w 150 | sed 's/^/    /'
  [ "$rc" = 2 ] && sed 's/^/    /' "$OUT/$name-$prof.txt" | tail -3 || true
}

# The Go API: one source, written for Fiber v2; v3's is derived from it.
# FAIL_STYLE=status makes the handler write its 4xx/5xx and return nil (the
# middleware keeps what was written); the default returns fiber.NewError (the
# middleware keeps nothing a handler returned as an error).
mkdir -p "$tmp/go/v2" "$tmp/go/v3"
cat >"$tmp/go/v2/main.go" <<'EOF'
// A messaging API on Fiber, its Idempotency-Key handled by middleware/idempotency as its docs show
// (REDIS_PORT set: the docs' Storage option with gofiber/storage's Redis).
package main

import (
	"fmt"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/gofiber/fiber/v2/middleware/idempotency"
	"github.com/gofiber/storage/redis/v3"
)

type msgIn struct {
	To       string `json:"to"`
	Text     string `json:"text"`
	DelayMS  int    `json:"delay_ms"`
	FailOnce bool   `json:"fail_once"`
}

func main() {
	var mu sync.Mutex
	ops, next := 0, 0
	seen := map[string]bool{}
	msgs := map[string]fiber.Map{}
	statusStyle := os.Getenv("FAIL_STYLE") == "status"

	app := fiber.New(fiber.Config{DisableStartupMessage: true})
	if rp := os.Getenv("REDIS_PORT"); rp != "" {
		// The docs' Storage option, with gofiber/storage's Redis.
		port := 0
		fmt.Sscan(rp, &port)
		app.Use(idempotency.New(idempotency.Config{Storage: redis.New(redis.Config{Host: "127.0.0.1", Port: port})}))
	} else {
		app.Use(idempotency.New())
	}
	app.Get("/debug/count", func(c *fiber.Ctx) error {
		mu.Lock()
		defer mu.Unlock()
		return c.SendString(fmt.Sprint(ops))
	})
	auth := func(c *fiber.Ctx) error {
		if !strings.HasPrefix(c.Get("Authorization"), "AccessKey ") {
			return c.Status(401).JSON(fiber.Map{"error": "unauthorized"})
		}
		return c.Next()
	}
	fail := func(c *fiber.Ctx, status int, msg string) error {
		if statusStyle {
			return c.Status(status).JSON(fiber.Map{"error": msg})
		}
		return fiber.NewError(status, msg)
	}
	app.Get("/v1/messages", auth, func(c *fiber.Ctx) error {
		mu.Lock()
		defer mu.Unlock()
		return c.JSON(fiber.Map{"count": len(msgs)})
	})
	app.Post("/v1/messages", auth, func(c *fiber.Ctx) error {
		var in msgIn
		if err := c.BodyParser(&in); err != nil || in.Text == "" {
			return fail(c, 400, "text is required")
		}
		if in.FailOnce {
			mu.Lock()
			first := !seen[in.Text]
			seen[in.Text] = true
			mu.Unlock()
			if first {
				return fail(c, 500, "temporary failure")
			}
		}
		if in.DelayMS > 0 {
			time.Sleep(time.Duration(in.DelayMS) * time.Millisecond)
		}
		mu.Lock()
		defer mu.Unlock()
		next++
		ops++
		id := fmt.Sprintf("msg_%d", next)
		m := fiber.Map{"id": id, "to": in.To, "text": in.Text, "created": time.Now().UnixNano()}
		msgs[id] = m
		return c.Status(201).JSON(m)
	})
	app.Patch("/v1/messages/:id", auth, func(c *fiber.Ctx) error {
		mu.Lock()
		defer mu.Unlock()
		m, ok := msgs[c.Params("id")]
		if !ok {
			return fail(c, 404, "not found")
		}
		var in map[string]any
		_ = c.BodyParser(&in)
		for k, v := range in {
			m[k] = v
		}
		m["updated"] = time.Now().UnixNano()
		ops++
		return c.JSON(m)
	})
	app.Delete("/v1/messages/:id", auth, func(c *fiber.Ctx) error {
		mu.Lock()
		defer mu.Unlock()
		id := c.Params("id")
		if _, ok := msgs[id]; !ok {
			return fail(c, 404, "not found")
		}
		delete(msgs, id)
		ops++
		return c.JSON(fiber.Map{"id": id, "deleted": true})
	})
	if err := app.Listen(os.Args[1]); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}
EOF
sed -e 's#gofiber/fiber/v2#gofiber/fiber/v3#g' -e 's/c \*fiber.Ctx/c fiber.Ctx/g' -e 's/c.BodyParser(&in)/c.Bind().Body(\&in)/g' \
  -e 's/fiber.New(fiber.Config{DisableStartupMessage: true})/fiber.New()/' \
  -e 's/app.Listen(os.Args\[1\])/app.Listen(os.Args[1], fiber.ListenConfig{DisableStartupMessage: true})/' \
  "$tmp/go/v2/main.go" >"$tmp/go/v3/main.go"
for v in 2 3; do
  [ -n "${ONLY:-}" ] && [ "$ONLY" != "fiber$v" ] && continue
  (cd "$tmp/go/v$v" && go mod init "fiberapi$v" >/dev/null 2>&1 && go get "github.com/gofiber/fiber/v$v@$(eval echo "\$FIBER$v")" github.com/gofiber/storage/redis/v3@v3.4.3 >/dev/null 2>&1 && go mod tidy >/dev/null 2>&1 && go build -o api .)
  ver=$(cd "$tmp/go/v$v" && go list -m -f '{{.Version}}' "github.com/gofiber/fiber/v$v")
  for style in error status; do
    p=$(port)
    FAIL_STYLE=$style "$tmp/go/v$v/api" "127.0.0.1:$p" >>"$OUT/servers.log" 2>&1 & pids+=($!)
    wait_up "$p"
    echo "== fiber v$v $ver, handler errors as $style"
    # The default key header first: the middleware reads X-Idempotency-Key.
    [ "$style" = error ] && keycheck "fiber$v-defaultheader" "$p" bird Idempotency-Key
    for prof in bird ietf stripe; do keycheck "fiber$v-$style" "$p" "$prof" X-Idempotency-Key; done
    kill "${pids[-1]}"; wait "${pids[-1]}" 2>/dev/null || true
  done
  # outage: the same API with its keys in Redis, stopped and started again.
  if command -v redis-server >/dev/null; then
    rp=$(port) p=$(port)
    up="redis-server --port $rp --bind 127.0.0.1 --save '' --appendonly no --daemonize yes && sleep 0.3"
    sh -c "$up" >/dev/null
    REDIS_PORT=$rp "$tmp/go/v$v/api" "127.0.0.1:$p" >>"$OUT/servers.log" 2>&1 & pids+=($!)
    wait_up "$p"
    echo "== fiber v$v $ver, Redis storage"
    keycheck "fiber$v-redis" "$p" bird X-Idempotency-Key --store-down-cmd "redis-cli -p $rp shutdown nosave" --store-up-cmd "$up"
    kill "${pids[-1]}"; wait "${pids[-1]}" 2>/dev/null || true
    redis-cli -p "$rp" shutdown nosave >/dev/null 2>&1 || true
  fi
done

# NestJS 10 on Express with @node-idempotency/nestjs 1.0.4 (its Express
# plugin, @node-idempotency/express, is not on npm).
if { [ -z "${ONLY:-}" ] || [ "$ONLY" = nest ]; } && command -v npm >/dev/null; then
  mkdir -p "$tmp/nest" && cd "$tmp/nest"
  npm init -y >/dev/null
  npm install --silent @node-idempotency/nestjs@1.0.4 @nestjs/common@10 @nestjs/core@10 @nestjs/platform-express@10 reflect-metadata rxjs@7 typescript@5 >/dev/null 2>&1
  cat >tsconfig.json <<'EOF'
{"compilerOptions":{"target":"ES2021","module":"commonjs","experimentalDecorators":true,"emitDecoratorMetadata":true,"strict":false,"esModuleInterop":true,"skipLibCheck":true,"outDir":"dist"},"files":["app.ts"]}
EOF
  cat >app.ts <<'EOF'
// A small messaging API on NestJS 10 (Express platform) whose Idempotency-Key
// handling is @node-idempotency/nestjs 1.0.4 as its README shows:
// NodeIdempotencyModule.forRootAsync({storage: {adapter: memory}}) and
// @Idempotent() on the handlers. Operations counted at GET /debug/count.
import "reflect-metadata";
import { Module, Controller, Get, Post, Patch, Delete, Body, Param, Headers, HttpCode,
  HttpException, BadRequestException, UnauthorizedException, NotFoundException } from "@nestjs/common";
import { NestFactory } from "@nestjs/core";
import { NodeIdempotencyModule, Idempotent } from "@node-idempotency/nestjs";
import { StorageAdapterEnum } from "@node-idempotency/shared";

let ops = 0, next = 0;
const seen = new Set<string>();
const msgs = new Map<string, any>();
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
function auth(h?: string) {
  if (!h || !h.startsWith("AccessKey ")) throw new UnauthorizedException();
}

@Controller()
class MessagesController {
  @Get("debug/count")
  count(): string { return String(ops); }

  @Get("v1/messages")
  list(@Headers("authorization") a?: string) { auth(a); return { count: msgs.size }; }

  @Idempotent()
  @Post("v1/messages")
  @HttpCode(201)
  async create(@Body() b: any, @Headers("authorization") a?: string) {
    auth(a);
    if (!b || !b.text) throw new BadRequestException("text is required");
    if (b.fail_once && !seen.has(b.text)) { seen.add(b.text); throw new HttpException("temporary failure", 500); }
    if (b.delay_ms) await sleep(b.delay_ms);
    next++; ops++;
    const m = { id: `msg_${next}`, to: b.to, text: b.text, created: Date.now() };
    msgs.set(m.id, m);
    return m;
  }

  @Idempotent()
  @Patch("v1/messages/:id")
  patch(@Param("id") id: string, @Body() b: any, @Headers("authorization") a?: string) {
    auth(a);
    const m = msgs.get(id);
    if (!m) throw new NotFoundException();
    Object.assign(m, b, { updated: Date.now() }); ops++;
    return m;
  }

  @Idempotent()
  @Delete("v1/messages/:id")
  remove(@Param("id") id: string, @Headers("authorization") a?: string) {
    auth(a);
    if (!msgs.delete(id)) throw new NotFoundException();
    ops++;
    return { id, deleted: true };
  }
}

@Module({
  imports: [NodeIdempotencyModule.forRootAsync({ storage: { adapter: StorageAdapterEnum.memory } })],
  controllers: [MessagesController],
})
class AppModule {}

async function main() {
  const app = await NestFactory.create(AppModule, { logger: ["error"] });
  const [host, port] = (globalThis as any).process.argv[2].split(":");
  await app.listen(Number(port), host);
}
main();
EOF
  npx tsc -p .
  p=$(port)
  node dist/app.js "127.0.0.1:$p" >>"$OUT/servers.log" 2>&1 & pids+=($!)
  wait_up "$p"
  echo "== nestjs 10 + @node-idempotency/nestjs 1.0.4"
  for prof in bird ietf stripe; do keycheck nest "$p" "$prof" Idempotency-Key; done
  cd "$repo"
fi
# Express 4 with express-idempotency 1.0.6, mounted as its README shows.
if { [ -z "${ONLY:-}" ] || [ "$ONLY" = express ]; } && command -v npm >/dev/null; then
  mkdir -p "$tmp/express" && cd "$tmp/express"
  npm init -y >/dev/null
  npm install --silent express@4 express-idempotency@1.0.6 >/dev/null 2>&1
  cat >app.js <<'EOF'
// Express 4 + express-idempotency 1.0.6 as its README shows.
const express = require('express');
const idempotency = require('express-idempotency');
const app = express();
app.use(express.json());
let ops = 0, next = 0; const seen = new Set(); const msgs = new Map();
app.get('/debug/count', (req, res) => res.send(String(ops)));
app.post('*', idempotency.idempotency());
const auth = (req, res) => { if (!(req.get('authorization') || '').startsWith('AccessKey ')) { res.status(401).json({error: 'unauthorized'}); return false; } return true; };
app.get('/v1/messages', (req, res) => { if (auth(req, res)) res.json({count: msgs.size}); });
app.post('/v1/messages', async (req, res) => {
  const svc = idempotency.getSharedIdempotencyService();
  if (svc.isHit(req)) return;
  if (!auth(req, res)) return;
  const b = req.body || {};
  if (!b.text) return res.status(400).json({error: 'text is required'});
  if (b.fail_once && !seen.has(b.text)) { seen.add(b.text); svc.reportError(req); return res.status(500).json({error: 'temporary failure'}); }
  if (b.delay_ms) await new Promise(r => setTimeout(r, b.delay_ms));
  next++; ops++;
  const m = {id: `msg_${next}`, to: b.to, text: b.text, created: Date.now()};
  msgs.set(m.id, m);
  res.status(201).json(m);
});
app.patch('/v1/messages/:id', (req, res) => { if (!auth(req, res)) return; const m = msgs.get(req.params.id); if (!m) return res.status(404).json({error:'not found'}); Object.assign(m, req.body, {updated: Date.now()}); ops++; res.json(m); });
app.delete('/v1/messages/:id', (req, res) => { if (!auth(req, res)) return; if (!msgs.delete(req.params.id)) return res.status(404).json({error:'not found'}); ops++; res.json({id: req.params.id, deleted: true}); });
const [host, port] = process.argv[2].split(':');
app.listen(Number(port), host);
EOF
  p=$(port)
  node app.js "127.0.0.1:$p" >>"$OUT/servers.log" 2>&1 & pids+=($!)
  wait_up "$p"
  echo "== express 4 + express-idempotency 1.0.6"
  for prof in bird ietf stripe; do keycheck express "$p" "$prof" Idempotency-Key; done
  cd "$repo"
fi
echo "reports in $OUT"
