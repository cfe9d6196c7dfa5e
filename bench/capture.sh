#!/usr/bin/env bash
# Throughput and latency of hookreplay capture, measured in one run against
# sending straight to the same handler:
#   direct   load -> handler
#   capture  load -> hookreplay capture (answers 200 itself, stores each delivery)
#   forward  load -> hookreplay capture --forward handler -> handler
# Prints requests/s, p50 and p99 of each and their ratio to "direct".
# Knobs: CONC (connections, default 8), N (requests per target, default 3000),
# HANDLER_DELAY (work the handler does per delivery, default 0s, e.g. 5ms).
set -euo pipefail
cd "$(dirname "$0")/.."

CONC=${CONC:-8}
N=${N:-3000}
HANDLER_DELAY=${HANDLER_DELAY:-0s}
tmp=$(mktemp -d)
pids=()
cleanup() {
	for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
	wait 2>/dev/null || true
	rm -rf "$tmp"
}
trap cleanup EXIT

go build -o "$tmp/hookreplay" .
go build -o "$tmp/load" ./bench/load

# wait_for FILE PATTERN: wait until FILE has a line matching PATTERN.
wait_for() {
	for _ in $(seq 1 200); do
		if [ -s "$1" ] && grep -q "$2" "$1"; then return 0; fi
		sleep 0.05
	done
	echo "bench: timed out waiting for $1" >&2
	cat "$1" >&2 || true
	exit 1
}

"$tmp/load" serve -addr-file "$tmp/handler.addr" -delay "$HANDLER_DELAY" &
pids+=($!)
wait_for "$tmp/handler.addr" .
handler=$(cat "$tmp/handler.addr")

"$tmp/hookreplay" --db "$tmp/capture.db" capture --listen 127.0.0.1:0 >/dev/null 2>"$tmp/capture.err" &
pids+=($!)
"$tmp/hookreplay" --db "$tmp/forward.db" capture --listen 127.0.0.1:0 --forward "http://$handler" >/dev/null 2>"$tmp/forward.err" &
pids+=($!)
wait_for "$tmp/capture.err" "capturing on"
wait_for "$tmp/forward.err" "capturing on"
addr() { sed -n 's|.*capturing on http://\([^ ]*\) into.*|\1|p' "$1" | head -1; }
capture=$(addr "$tmp/capture.err")
forward=$(addr "$tmp/forward.err")

echo "go $(go env GOVERSION), $(nproc) CPUs, $(uname -sm); handler work per delivery: $HANDLER_DELAY"
"$tmp/load" run -c "$CONC" -n "$N" -body bench/testdata/invoice.paid.json \
	direct="http://$handler/webhooks/stripe" \
	capture="http://$capture/webhooks/stripe" \
	forward="http://$forward/webhooks/stripe"
echo "stored: $("$tmp/hookreplay" --db "$tmp/capture.db" list --json --limit 0 | grep -c '"id"') (capture), $("$tmp/hookreplay" --db "$tmp/forward.db" list --json --limit 0 | grep -c '"id"') (forward)"
