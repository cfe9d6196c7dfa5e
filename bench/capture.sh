#!/usr/bin/env bash
# Part 1, capture overhead: wrk at concurrency 1, 16 and 64 against the same
# no-op Go handler (bench/load serve), in interleaved rounds:
#   direct        wrk -> handler
#   nginx         wrk -> nginx proxy_pass, keep-alive upstream -> handler (the usual reverse proxy)
#   forward       wrk -> hookreplay capture --forward (default --sync normal) -> handler
#   forward-full  the same with --sync full
#   self          wrk -> hookreplay capture answering itself
#   before        capture --forward built from $BEFORE (when set)
# Then a kill -9 round: hey sends for a while, capture is killed mid-run, and
# the 200s hey saw are compared with the rows in the store.
. "$(dirname "$0")/lib.sh"
[ -n "${HR:-}" ] && [ -n "${HEY:-}" ] || setup

ROUNDS=${ROUNDS:-$([ "$QUICK" = 1 ] && echo 1 || echo 3)}
DUR=${DUR:-$([ "$QUICK" = 1 ] && echo 1 || echo 2)}
W=$BENCH_WORK/capture
mkdir -p "$W"
body=bench/testdata/invoice.paid.json
post_lua "$body" >"$W/post.lua"

start_handler "$W/handler.addr"

start_nginx "$W/nginx" "$handler"

# start_capture NAME BINARY ARGS...: a capture into $W/NAME.db; sets PORT_<NAME>.
declare -A PORT PID
start_capture() {
	local name=$1 bin=$2 port
	shift 2
	port=$(free_port)
	bg "$bin" --db "$W/$name.db" capture --listen "127.0.0.1:$port" "$@" >/dev/null 2>"$W/$name.err"
	PORT[$name]=$port
	PID[$name]=$BG
	wait_port "$port"
}
start_capture forward "$HR" --forward "http://$handler"
start_capture forward-full "$HR" --forward "http://$handler" --sync full
start_capture self "$HR"
targets=(direct nginx forward forward-full self)
url_of() {
	case $1 in
	direct) echo "http://$handler/webhooks/stripe" ;;
	nginx) echo "http://127.0.0.1:$ngx_port/webhooks/stripe" ;;
	*) echo "http://127.0.0.1:${PORT[$1]}/webhooks/stripe" ;;
	esac
}
if [ -n "${HR_BEFORE:-}" ]; then
	start_capture before "${HR_BEFORE:-}" --forward "http://$handler"
	targets+=(before)
fi


log "capture: $ROUNDS round(s) of ${DUR}s per target and concurrency"
for c in 1 16 64; do
	for r in $(seq "$ROUNDS"); do
		for t in "${targets[@]}"; do
			read -r p rps <<<"$(wrk_run "$W/post.lua" "$(url_of "$t")" "$c")"
			echo "$p" >>"$W/p50.$t.$c"
			echo "$rps" >>"$W/rps.$t.$c"
		done
	done
done
m() { median <"$W/$1"; }
for c in 1 16 64; do
	for t in "${targets[@]}"; do
		[ "$t" = direct ] && continue
		[ "$t" = nginx ] && continue
		row "1 capture" "$t p50 ms vs nginx, c=$c" "$(m "p50.$t.$c")" "$(m "p50.nginx.$c")"
		row "1 capture" "$t req/s vs nginx, c=$c" "$(m "rps.$t.$c")" "$(m "rps.nginx.$c")"
	done
	row "1 capture" "nginx p50 ms vs direct, c=$c" "$(m "p50.nginx.$c")" "$(m "p50.direct.$c")"
	row "1 capture" "nginx req/s vs direct, c=$c" "$(m "rps.nginx.$c")" "$(m "rps.direct.$c")"
done
# CPU per delivery: the proxy's own CPU time (user + system, from /proc)
# per request over hey -n N -c 16 — capture's process against nginx's
# workers — in interleaved rounds. Less noisy than rates on a shared
# machine: it does not count the time spent waiting for a core.
ticks() {
	local t=0 p
	for p in "$@"; do t=$((t + $(awk '{ print $14 + $15 }' "/proc/$p/stat"))); done
	echo "$t"
}
CPU_N=$([ "$QUICK" = 1 ] && echo 10000 || echo 20000)
tck=$(getconf CLK_TCK)
ngx_workers=$(pgrep -P "$NGX_PID" | tr '\n' ' ')
for _ in $(seq "$((ROUNDS < 2 ? ROUNDS : 2))"); do
	for t in nginx forward self ${HR_BEFORE:+before}; do
		if [ "$t" = nginx ]; then pids=$ngx_workers; else pids=${PID[$t]}; fi
		# shellcheck disable=SC2086
		a=$(ticks $pids)
		"$HEY" -n "$CPU_N" -c 16 -m POST -T application/json -D "$body" "$(url_of "$t")" >/dev/null
		# shellcheck disable=SC2086
		z=$(ticks $pids)
		awk -v a="$a" -v z="$z" -v n="$CPU_N" -v hz="$tck" 'BEGIN { printf "%.1f\n", (z - a) * 1e6 / hz / n }' >>"$W/cpu.$t"
	done
done
row "1 capture" "CPU µs per delivery, hey -c 16: capture --forward vs nginx's workers" "$(m cpu.forward)" "$(m cpu.nginx)"
row "1 capture" "CPU µs per delivery, hey -c 16: capture answering itself vs nginx's workers" "$(m cpu.self)" "$(m cpu.nginx)"
if [ -n "${HR_BEFORE:-}" ]; then
	row "1 capture" "CPU µs per delivery, hey -c 16: capture --forward vs before" "$(m cpu.forward)" "$(m cpu.before)"
fi

for t in "${targets[@]}"; do
	case $t in direct | nginx) ;; *) stop "${PID[$t]}" ;; esac
done

# kill -9 round: every response hey saw as 200 must be a row in the store.
for mode in normal full; do
	db="$W/kill-$mode.db"
	port=$(free_port)
	"$HR" --db "$db" capture --listen "127.0.0.1:$port" --forward "http://$handler" --sync "$mode" >/dev/null 2>&1 &
	cap=$!
	wait_port "$port"
	"$HEY" -z 3s -c 16 -m POST -T application/json -D "$body" "http://127.0.0.1:$port/webhooks/stripe" >"$W/kill-$mode.hey" 2>&1 &
	heyp=$!
	sleep 1.5
	kill -9 "$cap"
	wait "$cap" 2>/dev/null || true
	wait "$heyp" || true
	acked=$(awk '/\[200\]/ { print $2 }' "$W/kill-$mode.hey")
	stored=$(sqlite3 "$db" 'SELECT count(*) FROM deliveries')
	lost=$(awk -v a="${acked:-0}" -v s="$stored" 'BEGIN { print (a > s) ? a - s : 0 }')
	row "1 capture" "kill -9 mid-load, --sync $mode: stored rows vs acked 200s (lost: $lost)" "$stored" "${acked:-0}"
done
