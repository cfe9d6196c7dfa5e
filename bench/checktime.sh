#!/usr/bin/env bash
# Part 4, check time: wall time of a full default `check` (every phase the
# inputs allow) of the demo's fixed wallet handler (effects land before it
# answers) for one delivery and for 10 deliveries, the same with the crash
# phase (--serve), and of the demo's async wallet whose effect lands 500 ms
# after its answer. The baseline column is the goal (issue 28: 1.5 s for one
# delivery, 3 s with crash) or, with BEFORE (or HR_BEFORE) set, the binary
# before the fixes, measured in the same rounds, interleaved.
. "$(dirname "$0")/lib.sh"
[ -n "${HR:-}" ] && [ -n "${HEY:-}" ] || setup

W=$BENCH_WORK/checktime
mkdir -p "$W"
SECRET=whsec_benchCheckSecret0123456789
PROBE="SELECT COALESCE(SUM(balance),0) FROM wallets"
FIXTURE=internal/verify/fixtures/stripe/invoice.payment_succeeded.json

cap_port=$(free_port)
"$HR" --db "$W/hookreplay.db" capture --listen "127.0.0.1:$cap_port" >/dev/null 2>&1 &
cap=$!
wait_port "$cap_port"
for i in $(seq 10); do
	sed "0,/\"id\": \"evt_[^\"]*\"/s//\"id\": \"evt_checktime${i}x$RANDOM\"/" "$FIXTURE" >"$W/body.json"
	sig=$("$HR" sign --provider stripe --secret "$SECRET" <"$W/body.json")
	curl -sf -o /dev/null -X POST -H "Content-Type: application/json" -H "$sig" --data-binary "@$W/body.json" \
		"http://127.0.0.1:$cap_port/webhooks/stripe"
done
stop "$cap"

# handler VARIANT [FLAGS]: a fresh demo wallet; sets H_ADDR, H_DB, H_PID.
n=0
handler() {
	local port v=$1
	shift
	n=$((n + 1))
	port=$(free_port)
	H_DB="$W/$v-$n.db"
	bg "$HR" demo serve "$v" --listen "127.0.0.1:$port" --db "$H_DB" --secret "$SECRET" --quiet "$@" >/dev/null 2>&1
	H_PID=$BG
	wait_port "$port"
	H_ADDR="127.0.0.1:$port"
}
# check_secs BINARY VARIANT [IDS...]: seconds of one full default check.
check_secs() {
	local bin=$1 v=$2 t
	shift 2
	local flags=()
	[ "$v" = async ] && flags=(--delay 500ms)
	handler "$v" "${flags[@]}"
	local sel=("$@")
	[ ${#sel[@]} -eq 0 ] && sel=(--last)
	local t0 t1 code=0
	t0=$(date +%s.%N)
	"$bin" --db "$W/hookreplay.db" check "${sel[@]}" --to "http://$H_ADDR/webhooks/stripe" --secret "$SECRET" \
		--dsn "sqlite:$H_DB" --probe-sql "$PROBE" -q --no-color >"$W/check.out" 2>&1 || code=$?
	t1=$(date +%s.%N)
	[ "$code" = 0 ] || log "check of the $v handler exited $code (a correct handler must pass): $(tail -1 "$W/check.out")"
	t=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.2f", b - a }')
	stop "$H_PID"
	echo "$t"
}

# serve_secs BINARY: seconds of one full default check with the crash phase:
# check starts (--serve), kills and restarts the fixed wallet itself.
serve_secs() {
	local bin=$1 port t0 t1 code=0
	port=$(free_port)
	n=$((n + 1))
	t0=$(date +%s.%N)
	"$bin" --db "$W/hookreplay.db" check --last --to "http://127.0.0.1:$port/webhooks/stripe" --secret "$SECRET" \
		--dsn "sqlite:$W/serve-$n.db" --probe-sql "$PROBE" -q --no-color \
		--serve "$bin demo serve fixed --listen 127.0.0.1:$port --db $W/serve-$n.db --secret $SECRET --quiet" >"$W/check.out" 2>&1 || code=$?
	t1=$(date +%s.%N)
	[ "$code" = 0 ] || log "check --serve of the fixed handler exited $code (a correct handler must pass): $(tail -1 "$W/check.out")"
	awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.2f\n", b - a }'
}

ROUNDS=${ROUNDS:-$([ "$QUICK" = 1 ] && echo 1 || echo 3)}
log "checktime: $ROUNDS round(s), load $(cut -d' ' -f1-3 /proc/loadavg)"
for _ in $(seq "$ROUNDS"); do
	check_secs "$HR" fixed >>"$W/fast1"
	[ -n "${HR_BEFORE:-}" ] && check_secs "${HR_BEFORE:-}" fixed >>"$W/before1"
	serve_secs "$HR" >>"$W/serve1"
	[ -n "${HR_BEFORE:-}" ] && serve_secs "${HR_BEFORE:-}" >>"$W/beforeserve1"
done
row "4 check time" "full default check, fast correct handler, 1 delivery, s vs goal 1.5 s" "$(median <"$W/fast1")" 1.5
[ -n "${HR_BEFORE:-}" ] && row "4 check time" "the same, s vs before the fixes" "$(median <"$W/fast1")" "$(median <"$W/before1")"
row "4 check time" "the same with crash (--serve), s vs goal 3 s" "$(median <"$W/serve1")" 3
[ -n "${HR_BEFORE:-}" ] && row "4 check time" "the same with crash, s vs before the fixes" "$(median <"$W/serve1")" "$(median <"$W/beforeserve1")"
if [ "$QUICK" != 1 ]; then
	t10=$(check_secs "$HR" fixed $(seq 10))
	row "4 check time" "10 deliveries, s per delivery vs goal 1.5 s" "$(awk -v t="$t10" 'BEGIN { printf "%.2f", t / 10 }')" 1.5
fi
ta=$(check_secs "$HR" async)
row "4 check time" "correct handler whose effect lands 500 ms after its answer, 1 delivery, s vs the fast handler" "$ta" "$(median <"$W/fast1")"
