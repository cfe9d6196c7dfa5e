#!/usr/bin/env bash
# Part 3b, race detection: how often a check-then-insert handler is caught.
# The handler is the demo's racy wallet (examples/wallet): it SELECTs the
# event id, waits --race-window, then INSERTs it and credits $50.00, with no
# unique constraint. Each trial uses a fresh event id; a trial is caught when
# the wallet was credited more than once for it. Per window (0.2, 1, 5 ms)
# and trial, side by side, each method with its own handler and database:
#   check  hookreplay check --phases first,burst   (caught: exit 1)
#   hey    hey -n 20 -c 20 of the delivery         (caught: balance grew > $50)
#   curl   10 sequential curl resends              (caught: balance grew > $50)
. "$(dirname "$0")/lib.sh"
[ -n "${HR:-}" ] && [ -n "${HEY:-}" ] || setup

TRIALS=${TRIALS:-$([ "$QUICK" = 1 ] && echo 5 || echo 30)}
W=$BENCH_WORK/detect
mkdir -p "$W"
SECRET=whsec_benchDetectSecret0123456789
CUSTOMER=cus_QpB3d9uYnWx2Ke
FIXTURE=internal/verify/fixtures/stripe/invoice.payment_succeeded.json
PROBE="SELECT COALESCE(SUM(balance),0) FROM wallets WHERE customer='$CUSTOMER'"

cap_port=$(free_port)
bg "$HR" --db "$W/hookreplay.db" capture --listen "127.0.0.1:$cap_port" >/dev/null 2>&1
wait_port "$cap_port"

# racy NAME WINDOW: a racy handler with its own database; sets ADDR.
declare -A ADDR HPID
racy() {
	local port
	port=$(free_port)
	bg "$HR" demo serve racy --listen "127.0.0.1:$port" --db "$W/$1.db" --race-window "$2" --secret "$SECRET" --quiet >/dev/null 2>&1
	HPID[$1]=$BG
	wait_port "$port"
	ADDR[$1]="127.0.0.1:$port"
}
balance() { sqlite3 "$W/$1.db" "$PROBE"; }

log "detect: $TRIALS trial(s) per window"
for window in 0.2ms 1ms 5ms; do
	for m in check hey curl; do racy "$m-$window" "$window"; done
	caught_check=0 caught_hey=0 caught_curl=0
	for i in $(seq "$TRIALS"); do
		body="$W/body.json"
		sed "0,/\"id\": \"evt_[^\"]*\"/s//\"id\": \"evt_bench${window}x${i}x$RANDOM$RANDOM\"/" "$FIXTURE" >"$body"
		sig=$("$HR" sign --provider stripe --secret "$SECRET" <"$body")
		curl -sf -o /dev/null -X POST -H "Content-Type: application/json" -H "$sig" --data-binary "@$body" \
			"http://127.0.0.1:$cap_port/webhooks/stripe"

		set +e
		"$HR" --db "$W/hookreplay.db" check --last --to "http://${ADDR[check-$window]}/webhooks/stripe" \
			--probe-sql "$PROBE" --dsn "sqlite:$W/check-$window.db" --secret "$SECRET" --phases first,burst -q --no-color >"$W/check.out" 2>&1
		code=$?
		set -e
		case $code in
		1) caught_check=$((caught_check + 1)) ;;
		0) ;;
		*) log "check exited $code: $(tail -2 "$W/check.out")" ;;
		esac

		b0=$(balance "hey-$window")
		"$HEY" -n 20 -c 20 -m POST -T application/json -H "$sig" -D "$body" "http://${ADDR[hey-$window]}/webhooks/stripe" >/dev/null
		sleep 0.02
		[ $(($(balance "hey-$window") - b0)) -gt 5000 ] && caught_hey=$((caught_hey + 1))

		b0=$(balance "curl-$window")
		for _ in $(seq 10); do
			curl -s -o /dev/null -X POST -H "Content-Type: application/json" -H "$sig" --data-binary "@$body" \
				"http://${ADDR[curl-$window]}/webhooks/stripe"
		done
		sleep 0.02
		[ $(($(balance "curl-$window") - b0)) -gt 5000 ] && caught_curl=$((caught_curl + 1))
	done
	for m in check hey curl; do stop "${HPID[$m-$window]}"; done
	pct() { awk -v a="$1" -v n="$TRIALS" 'BEGIN { printf "%.0f%%", 100 * a / n }'; }
	row "3 race" "caught in $TRIALS trials, ${window} window: check --phases first,burst vs hey -n 20 -c 20" \
		"$(pct $caught_check)" "$(pct $caught_hey)" "$(awk -v a=$caught_check -v b=$caught_hey 'BEGIN { if (b == 0) print (a > 0 ? "∞" : "-"); else printf "%.2f×", a / b }')"
	row "3 race" "caught in $TRIALS trials, ${window} window: check vs 10 sequential curls" \
		"$(pct $caught_check)" "$(pct $caught_curl)" "$(awk -v a=$caught_check -v b=$caught_curl 'BEGIN { if (b == 0) print (a > 0 ? "∞" : "-"); else printf "%.2f×", a / b }')"
done
