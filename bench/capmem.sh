#!/usr/bin/env bash
# Part 5, capture's memory over many deliveries: `hookreplay capture`
# answering itself, and with --forward to the no-op handler (bench/load
# serve), receives N deliveries (100k; QUICK: 20k) from hey at concurrency
# 16, in three batches; after each (at 10 %, 50 % and 100 % of N) the capture
# process's VmRSS and VmHWM (/proc/PID/status) and its Go live heap (the last
# GODEBUG=gctrace line) are read. Flat memory is a ratio of 1× between the
# end and the first sample: nothing is kept per delivery stored.
. "$(dirname "$0")/lib.sh"
[ -n "${HR:-}" ] && [ -n "${HEY:-}" ] || setup

N=${N:-$([ "$QUICK" = 1 ] && echo 20000 || echo 100000)}
W=$BENCH_WORK/capmem
mkdir -p "$W"
body=bench/testdata/invoice.paid.json

start_handler "$W/handler.addr"

# status_mb PID FIELD: a /proc/PID/status size (VmRSS, VmHWM) in MB.
status_mb() { awk -v f="$2:" '$1 == f { printf "%.1f", $2 / 1024 }' "/proc/$1/status"; }
# heap_mb FILE: the live heap after the last garbage collection gctrace logged, in MB.
heap_mb() { grep '^gc ' "$1" | tail -1 | sed -E 's/.* [0-9]+->[0-9]+->([0-9]+) MB.*/\1/'; }

k() { echo "$(($1 / 1000))k"; }
for mode in self forward; do
	db="$W/$mode.db"
	port=$(free_port)
	args=()
	[ "$mode" = forward ] && args=(--forward "http://$handler")
	GODEBUG=gctrace=1 bg "$HR" --db "$db" capture --listen "127.0.0.1:$port" "${args[@]}" >/dev/null 2>"$W/$mode.err"
	cap=$BG
	wait_port "$port"
	sent=0
	for upto in $((N / 10)) $((N / 2)) "$N"; do
		"$HEY" -n $((upto - sent)) -c 16 -m POST -T application/json -D "$body" \
			"http://127.0.0.1:$port/webhooks/stripe" >"$W/$mode.$upto.hey"
		sent=$upto
		sleep 0.5 # the last commits and a garbage collection settle
		echo "$(status_mb "$cap" VmRSS) $(status_mb "$cap" VmHWM) $(heap_mb "$W/$mode.err")" >"$W/$mode.$upto.mem"
	done
	secs=$(cat "$W/$mode".*.hey | awk '$1 == "Total:" { t += $2 } END { print t }')
	stop "$cap"
	stored=$(sqlite3 "$db" 'SELECT count(*) FROM deliveries')
	acked=$(cat "$W/$mode".*.hey | awk '/\[200\]/ { n += $2 } END { print n + 0 }')
	[ "$stored" = "$N" ] && [ "$acked" = "$N" ] || log "capmem $mode: $acked answered 200 and $stored stored of $N sent"
	read -r rss1 hwm1 heap1 <"$W/$mode.$((N / 10)).mem"
	read -r rss5 hwm5 heap5 <"$W/$mode.$((N / 2)).mem"
	read -r rss hwm heap <"$W/$mode.$N.mem"
	what="capture $([ "$mode" = forward ] && echo '--forward' || echo '(answering itself)')"
	row "5 capture memory" "$what VmRSS MB after $(k "$N") deliveries vs after $(k $((N / 10))) (flat: 1×; $(k $((N / 2))): $rss5 MB; Go live heap $heap1, $heap5, $heap MB)" "$rss" "$rss1"
	row "5 capture memory" "$what peak RSS (VmHWM) MB after $(k "$N") vs after $(k $((N / 10))) ($(k $((N / 2))): $hwm5 MB)" "$hwm" "$hwm1"
	row "5 capture memory" "$what: $stored of $N stored, deliveries/s at c=16" "$(awk -v n="$N" -v t="$secs" 'BEGIN { printf "%.0f", n / t }')" "-" "-"
	rm -f "$db"*
done
