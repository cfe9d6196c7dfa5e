#!/usr/bin/env bash
# Detection rate of a check-then-insert race, three ways, side by side in one run.
#
# The handler is the example wallet's "racy" variant (examples/wallet/racy.go):
# it SELECTs the event id, waits a window of W ms (5–20 ms, drawn per trial:
# the other work a real handler does there), then INSERTs the id and credits
# the wallet, with no unique constraint. A duplicate credited = detected.
#
# Per trial, each method gets its own fresh handler and database and one
# signed Stripe invoice.payment_succeeded ($50.00) with a fresh event id:
#   check  hookreplay check --phases first,dups,burst (n=10, burst=20): detected when it exits 1
#   curl   a shell loop of 10 curl resends of the same delivery:        detected when balance > 5000
#   hey    hey -n 20 -c 20 of the same delivery:                        detected when balance > 5000
#
# Usage: bench/detect.sh [TRIALS]      (default 50)
#        WINDOW_MIN_MS=0 WINDOW_MAX_MS=2 bench/detect.sh   (a narrower window)
# Needs: go, curl, sqlite3. hey is installed with `go install` (Go module proxy).
set -euo pipefail
cd "$(dirname "$0")/.."

TRIALS=${1:-50}
WMIN=${WINDOW_MIN_MS:-5}
WMAX=${WINDOW_MAX_MS:-20}
SECRET=whsec_benchDetectSecret0123456789
CUSTOMER=cus_QpB3d9uYnWx2Ke
FIXTURE=internal/verify/fixtures/stripe/invoice.payment_succeeded.json

for tool in curl sqlite3 go; do
	command -v "$tool" >/dev/null || { echo "detect.sh: $tool is required" >&2; exit 2; }
done

WORK=$(mktemp -d /tmp/hookreplay-detect.XXXXXX)
PIDS=()
cleanup() {
	for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null || true; done
	wait 2>/dev/null || true
	rm -rf "$WORK"
}
trap cleanup EXIT

echo "building hookreplay and installing hey (github.com/rakyll/hey) into $WORK/bin ..."
go build -o "$WORK/bin/hookreplay" .
GOBIN="$WORK/bin" go install github.com/rakyll/hey@latest
HR="$WORK/bin/hookreplay"
HEY="$WORK/bin/hey"

free_port() { python3 - <<'EOF' 2>/dev/null || echo $((20000 + RANDOM % 20000))
import socket
s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1]); s.close()
EOF
}

wait_port() { # host:port
	for _ in $(seq 1 200); do
		(exec 3<>"/dev/tcp/${1%:*}/${1#*:}") 2>/dev/null && return 0
		sleep 0.02
	done
	echo "detect.sh: nothing listens on $1" >&2
	return 1
}

# start_racy WINDOW DB -> prints addr; records the pid
start_racy() {
	local port addr
	port=$(free_port)
	addr="127.0.0.1:$port"
	"$HR" demo serve racy --listen "$addr" --db "$2" --race-window "$1" --secret "$SECRET" --quiet >/dev/null 2>&1 &
	RACY_PID=$!
	wait_port "$addr"
	RACY_ADDR=$addr
}

stop_racy() { kill "$RACY_PID" 2>/dev/null || true; wait "$RACY_PID" 2>/dev/null || true; }

balance() { sqlite3 "$1" "SELECT COALESCE(SUM(balance),0) FROM wallets WHERE customer='$CUSTOMER'"; }

# The capture proxy stores one delivery per trial for `hookreplay check`.
CAP_PORT=$(free_port)
"$HR" --db "$WORK/hookreplay.db" capture --listen "127.0.0.1:$CAP_PORT" >/dev/null 2>&1 &
PIDS+=($!)
wait_port "127.0.0.1:$CAP_PORT"

det_check=0 det_curl=0 det_hey=0
start=$(date +%s)
for i in $(seq 1 "$TRIALS"); do
	window="$((WMIN + RANDOM % (WMAX - WMIN + 1)))ms"
	body="$WORK/body-$i.json"
	# A fresh event id for this trial (the first "id" is the event's).
	sed "0,/\"id\": \"evt_[^\"]*\"/s//\"id\": \"evt_bench${i}x$RANDOM$RANDOM\"/" "$FIXTURE" >"$body"
	sig=$("$HR" sign --provider stripe --secret "$SECRET" <"$body")
	curl -sf -o /dev/null -X POST -H "Content-Type: application/json" -H "$sig" --data-binary "@$body" \
		"http://127.0.0.1:$CAP_PORT/webhooks/stripe"

	# 1. hookreplay check
	start_racy "$window" "$WORK/check-$i.db"
	set +e
	"$HR" --db "$WORK/hookreplay.db" check --last --to "http://$RACY_ADDR/webhooks/stripe" --secret "$SECRET" \
		--probe-sql "SELECT COALESCE(SUM(balance),0) FROM wallets WHERE customer='$CUSTOMER'" --dsn "sqlite:$WORK/check-$i.db" \
		--phases first,dups,burst --settle 50ms -q --no-color >"$WORK/check-$i.txt" 2>&1
	code=$?
	set -e
	stop_racy
	case $code in
	1) det_check=$((det_check + 1)) ;;
	0) ;;
	*) echo "trial $i: hookreplay check exited $code:" >&2; cat "$WORK/check-$i.txt" >&2 ;;
	esac

	# 2. ten sequential curl resends
	start_racy "$window" "$WORK/curl-$i.db"
	for _ in $(seq 1 10); do
		curl -s -o /dev/null -X POST -H "Content-Type: application/json" -H "$sig" --data-binary "@$body" \
			"http://$RACY_ADDR/webhooks/stripe"
	done
	sleep 0.05
	b=$(balance "$WORK/curl-$i.db")
	stop_racy
	[ "$b" -gt 5000 ] && det_curl=$((det_curl + 1))

	# 3. hey -n 20 -c 20
	start_racy "$window" "$WORK/hey-$i.db"
	"$HEY" -n 20 -c 20 -m POST -T application/json -H "$sig" -D "$body" "http://$RACY_ADDR/webhooks/stripe" >/dev/null
	sleep 0.05
	b=$(balance "$WORK/hey-$i.db")
	stop_racy
	[ "$b" -gt 5000 ] && det_hey=$((det_hey + 1))

	printf '\rtrial %d/%d  check %d  curl %d  hey %d' "$i" "$TRIALS" "$det_check" "$det_curl" "$det_hey"
done
echo
took=$(($(date +%s) - start))
pct() { awk -v a="$1" -v n="$TRIALS" 'BEGIN { printf "%5.1f%%", 100 * a / n }'; }
echo
echo "racy handler, ${WMIN}–${WMAX} ms check-then-insert window, $TRIALS trials ($took s):"
printf '  %-44s %3d/%d  %s\n' "hookreplay check (first,dups,burst)" "$det_check" "$TRIALS" "$(pct "$det_check")"
printf '  %-44s %3d/%d  %s\n' "shell loop of 10 curl resends" "$det_curl" "$TRIALS" "$(pct "$det_curl")"
printf '  %-44s %3d/%d  %s\n' "hey -n 20 -c 20" "$det_hey" "$TRIALS" "$(pct "$det_hey")"
