#!/usr/bin/env bash
# Part 3a, burst tightness: the spread between the first and the last request
# body fully received by the handler (bench/load serve, GET /spread), for
# bursts of 20 and 100 copies of one delivery, in interleaved rounds:
#   ours   hookreplay replay --order burst -n N (last-byte synchronised)
#   hey    hey -n N -c N
#   curl   a shell loop of N background curls
. "$(dirname "$0")/lib.sh"
[ -n "${HR:-}" ] && [ -n "${HEY:-}" ] || setup

ROUNDS=${ROUNDS:-$([ "$QUICK" = 1 ] && echo 2 || echo 5)}
W=$BENCH_WORK/burst
mkdir -p "$W"
body=bench/testdata/invoice.paid.json
start_handler "$W/handler.addr"
URL="http://$handler/webhooks/stripe"

cap_port=$(free_port)
"$HR" --db "$W/bench.db" capture --listen "127.0.0.1:$cap_port" >/dev/null 2>&1 &
cap=$!
wait_port "$cap_port"
curl -s -o /dev/null -X POST -H 'Content-Type: application/json' --data-binary "@$body" "http://127.0.0.1:$cap_port/webhooks/stripe"
stop "$cap"

# spread_ms N: the spread of the last burst, in ms, once N bodies arrived.
spread_ms() {
	sleep 0.1
	read -r count ns <<<"$(curl -s "http://$handler/spread")"
	[ "$count" = "$1" ] || log "burst: $count of $1 bodies arrived"
	awk -v ns="$ns" 'BEGIN { printf "%.3f\n", ns / 1e6 }'
}
curl -s "http://$handler/spread" >/dev/null

log "burst: $ROUNDS round(s) of 20 and 100"
for n in 20 100; do
	for _ in $(seq "$ROUNDS"); do
		"$HR" --db "$W/bench.db" replay --last --to "$URL" -n "$n" --order burst >/dev/null 2>&1
		spread_ms "$n" >>"$W/ours.$n"
		"$HEY" -n "$n" -c "$n" -m POST -T application/json -D "$body" "$URL" >/dev/null
		spread_ms "$n" >>"$W/hey.$n"
		curls=()
		for _ in $(seq "$n"); do
			curl -s -o /dev/null -X POST -H 'Content-Type: application/json' --data-binary "@$body" "$URL" &
			curls+=($!)
		done
		wait "${curls[@]}" || true
		spread_ms "$n" >>"$W/curl.$n"
	done
	row "3 burst" "spread of $n bodies, ms: replay --order burst vs hey -n $n -c $n" "$(median <"$W/ours.$n")" "$(median <"$W/hey.$n")"
	row "3 burst" "spread of $n bodies, ms: replay --order burst vs $n background curls" "$(median <"$W/ours.$n")" "$(median <"$W/curl.$n")"
done
