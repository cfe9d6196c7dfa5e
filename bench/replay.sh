#!/usr/bin/env bash
# Part 2, replay throughput: `replay --last -n N --concurrency 16` of one
# captured Stripe delivery (every attempt stored) vs hey -n N -c 16 with
# keep-alive (and without it) on the same request and no-op handler, in
# interleaved rounds. Our rate is copies over the run's own stored duration
# (started → finished), hey's its Requests/sec.
. "$(dirname "$0")/lib.sh"
[ -n "${HR:-}" ] && [ -n "${HEY:-}" ] || setup

COPIES=${COPIES:-$([ "$QUICK" = 1 ] && echo 2000 || echo 5000)}
ROUNDS=${ROUNDS:-$([ "$QUICK" = 1 ] && echo 1 || echo 3)}
W=$BENCH_WORK/replay
mkdir -p "$W"

port=$(free_port)
bg "$NOOP" "127.0.0.1:$port"
wait_port "$port"
URL="http://127.0.0.1:$port/hooks/stripe"

# One real delivery in a fresh store, through capture.
body=$W/body.json
python3 - "$body" <<'PY'
import sys
raw = open("internal/replay/testdata/stripe_invoice_paid.http", "rb").read()
open(sys.argv[1], "wb").write(raw.split(b"\r\n\r\n", 1)[1])
PY
cap_port=$(free_port)
"$HR" --db "$W/bench.db" capture --listen "127.0.0.1:$cap_port" >/dev/null 2>&1 &
cap=$!
wait_port "$cap_port"
curl -s -o /dev/null -X POST -H 'Content-Type: application/json' -H 'Stripe-Signature: t=1700000000,v1=00' \
	--data-binary "@$body" "http://127.0.0.1:$cap_port/hooks/stripe"
stop "$cap"

# replay_rate BINARY: copies/s of one replay run, from its stored start and finish.
replay_rate() {
	"$1" --db "$W/bench.db" replay --last --to "$URL" -n "$COPIES" --concurrency 16 --json >"$W/run.json" 2>"$W/replay.err"
	python3 - "$W/run.json" "$COPIES" <<'PY'
import json, sys
from datetime import datetime
d = json.load(open(sys.argv[1]))
def t(s):
    head, _, frac = s.replace("Z", "+00:00").partition(".")
    if frac:
        digits = "".join(c for c in frac if c.isdigit())
        s = head + "." + digits[:6] + frac[len(digits):]
    return datetime.fromisoformat(s)
ok = d["summary"]["classes"].get("2xx", 0)
if ok != int(sys.argv[2]):
    print("replay: only %d of %s answered 2xx" % (ok, sys.argv[2]), file=sys.stderr)
print(int(sys.argv[2]) / (t(d["run"]["finished_at"]) - t(d["run"]["started_at"])).total_seconds())
PY
}
hey_rate() {
	"$HEY" -n "$COPIES" -c 16 "$@" -m POST -T application/json -D "$body" "$URL" | awk '/Requests\/sec/ { print $2 }'
}

log "replay: $ROUNDS round(s) of $COPIES copies"
"$HR" --db "$W/bench.db" replay --last --to "$URL" -n 200 --concurrency 16 >/dev/null 2>&1 # warm up
for _ in $(seq "$ROUNDS"); do
	replay_rate "$HR" >>"$W/ours"
	hey_rate >>"$W/hey-ka"
	hey_rate -disable-keepalive >>"$W/hey-new"
	[ -n "${HR_BEFORE:-}" ] && replay_rate "${HR_BEFORE:-}" >>"$W/before"
done
m() { median <"$W/$1" | awk '{ printf "%.0f", $1 }'; }
row "2 replay" "replay -n $COPIES --concurrency 16, copies/s vs hey -c 16 keep-alive" "$(m ours)" "$(m hey-ka)"
row "2 replay" "replay copies/s vs hey -c 16 -disable-keepalive" "$(m ours)" "$(m hey-new)"
if [ -n "${HR_BEFORE:-}" ]; then
	row "2 replay" "before the fixes: replay copies/s vs hey keep-alive" "$(m before)" "$(m hey-ka)"
fi
