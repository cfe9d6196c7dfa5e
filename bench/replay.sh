#!/usr/bin/env bash
# Replay throughput as a ratio against a plain load generator, on the same
# no-op handler in the same run, plus the burst-spread benchmarks.
#
#   bench/replay.sh [COPIES]        (default 5000)
#
# hookreplay: `replay --concurrency 16 -n COPIES` of one captured Stripe
# delivery, every copy on its own connection, each attempt recorded in SQLite.
# Reference: `hey -c 16 -n COPIES` (installed through the Go module proxy) with
# keep-alive disabled, so both open one connection per request; the keep-alive
# figure is printed too. Throughput is copies (requests) per second of wall time
# of the sending itself (hookreplay: run started → finished as stored).
set -euo pipefail
cd "$(dirname "$0")/.."
COPIES=${1:-5000}
work=$(mktemp -d)
pids=()
cleanup() {
	for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
	rm -rf "$work"
}
trap cleanup EXIT

echo "building hookreplay, the no-op handler and hey (go install github.com/rakyll/hey@v0.1.5)..."
go build -o "$work/hookreplay" .
go build -o "$work/noop" ./bench/replay/noop
GOBIN="$work" GOFLAGS=-mod=mod go install github.com/rakyll/hey@v0.1.5

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
wait_port() { for _ in $(seq 100); do (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null && return 0; sleep 0.05; done; echo "port $1 never opened" >&2; exit 1; }

noop_port=$(free_port)
"$work/noop" "127.0.0.1:$noop_port" & pids+=($!)
wait_port "$noop_port"
URL="http://127.0.0.1:$noop_port/hooks/stripe"

# One real delivery in a fresh store, through capture.
db="$work/bench.db"
cap_port=$(free_port)
"$work/hookreplay" --db "$db" capture --listen "127.0.0.1:$cap_port" >/dev/null & cap=$!
wait_port "$cap_port"
python3 - "$cap_port" <<'PY'
import socket, sys
raw = open("internal/replay/testdata/stripe_invoice_paid.http", "rb").read()
s = socket.create_connection(("127.0.0.1", int(sys.argv[1])))
s.sendall(raw)
s.recv(4096)
s.close()
PY
kill "$cap" && wait "$cap" 2>/dev/null || true
python3 - "$work/body.json" <<'PY'
import sys
raw = open("internal/replay/testdata/stripe_invoice_paid.http", "rb").read()
open(sys.argv[1], "wb").write(raw.split(b"\r\n\r\n", 1)[1])
PY

echo "warming up..."
"$work/hookreplay" --db "$db" replay --last --to "$URL" -n 200 --concurrency 16 --json >/dev/null
"$work/hey" -n 200 -c 16 -m POST -T application/json -D "$work/body.json" "$URL" >/dev/null

echo "hookreplay replay -n $COPIES --concurrency 16 ..."
t0=$(date +%s.%N)
"$work/hookreplay" --db "$db" replay --last --to "$URL" -n "$COPIES" --concurrency 16 --json >"$work/run.json"
t1=$(date +%s.%N)
read -r hr_rate hr_ok <<<"$(python3 - "$work/run.json" "$COPIES" <<'PY'
import json, sys
from datetime import datetime
d = json.load(open(sys.argv[1]))
def t(s):
    s = s.replace("Z", "+00:00")
    head, _, frac = s.partition(".")
    if frac:
        digits = "".join(c for c in frac if c.isdigit())
        tz = frac[len(digits):]
        s = head + "." + digits[:6] + tz
    return datetime.fromisoformat(s)
secs = (t(d["run"]["finished_at"]) - t(d["run"]["started_at"])).total_seconds()
print(int(sys.argv[2]) / secs, d["summary"]["classes"].get("2xx", 0))
PY
)"
hr_wall=$(python3 -c "print($COPIES/($t1-$t0))")

echo "hey -n $COPIES -c 16 -disable-keepalive ..."
hey_rate=$("$work/hey" -n "$COPIES" -c 16 -disable-keepalive -m POST -T application/json -D "$work/body.json" "$URL" | awk '/Requests\/sec/ {print $2}')
hey_ka=$("$work/hey" -n "$COPIES" -c 16 -m POST -T application/json -D "$work/body.json" "$URL" | awk '/Requests\/sec/ {print $2}')

printf '\n%-46s %10.0f copies/s  (%s of %s answered 2xx; %.0f/s including process start)\n' "hookreplay replay --concurrency 16" "$hr_rate" "$hr_ok" "$COPIES" "$hr_wall"
printf '%-46s %10.0f req/s\n' "hey -c 16 -disable-keepalive (new conn each)" "$hey_rate"
printf '%-46s %10.0f req/s\n' "hey -c 16 (keep-alive)" "$hey_ka"
printf '%-46s %10.2f\n' "ratio hookreplay / hey (new conn each)" "$(python3 -c "print($hr_rate/$hey_rate)")"
printf '%-46s %10.2f\n' "ratio hookreplay / hey (keep-alive)" "$(python3 -c "print($hr_rate/$hey_ka)")"

echo
echo "burst spread (last-byte synchronisation, loopback, handler in process):"
go test -run '^$' -bench 'BurstSpread' -benchtime 300x ./internal/replay | grep -E '^Benchmark'
