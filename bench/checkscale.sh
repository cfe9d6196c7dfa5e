#!/usr/bin/env bash
# Part 4, check at scale (issue 28): wall time of a full default `check` of
# the demo's fixed wallet for one delivery, for 20 deliveries of a correct
# handler, and for 20 deliveries with one buggy event type among them (the
# paidnaive wallet credits invoice.paid again on every copy; 2 of the 20 are
# invoice.paid) — each with --jobs 1 and the default, side by side in one
# run, as ratios to one delivery. Every delivery is about its own customer,
# and the probe is scoped to it:
#   SELECT … FROM wallets WHERE customer = {{json:data.object.customer}}
# The buggy set must fail exactly its invoice.paid deliveries, with the same
# verdicts, phase by phase, in both modes; otherwise the row says so.
# The same three sets are then checked with a probe that is not scoped,
#   SELECT COALESCE(SUM(balance),0) FROM wallets
# which every delivery's effect shows in: the default checks the first
# delivery alone and the others as a group (docs/guide.md, "Many deliveries
# at once"). SCOPES=scoped or SCOPES=unscoped runs one of the two.
# With BEFORE=COMMIT (or HR_BEFORE=BINARY), each default check is followed
# at once by the same check with that build, interleaved, in rows of their
# own, and each before run's statuses are compared with --jobs 1's.
. "$(dirname "$0")/lib.sh"
[ -n "${HR:-}" ] && [ -n "${HEY:-}" ] || setup

W=$BENCH_WORK/checkscale
mkdir -p "$W"
SECRET=whsec_benchCheckSecret0123456789
PROBE="balance=SELECT COALESCE(SUM(balance),0) FROM wallets WHERE customer = {{json:data.object.customer}}"
UNSCOPED="balance=SELECT COALESCE(SUM(balance),0) FROM wallets"
N=${N:-20}
SCOPES=${SCOPES:-scoped unscoped}

# capture_set DB: N deliveries, each about its own customer; the 5th and
# 15th are invoice.paid, the rest invoice.payment_succeeded.
capture_set() {
	local port cap i fixture
	port=$(free_port)
	"$HR" --db "$1" capture --listen "127.0.0.1:$port" >/dev/null 2>&1 &
	cap=$!
	wait_port "$port"
	for i in $(seq "$N"); do
		fixture=internal/verify/fixtures/stripe/invoice.payment_succeeded.json
		[ $((i % 10)) = 5 ] && fixture=internal/verify/fixtures/stripe/invoice.paid.json
		sed -e "0,/\"id\": \"evt_[^\"]*\"/s//\"id\": \"evt_checkscale${i}x$RANDOM\"/" \
			-e "s/\"customer\": \"cus_[^\"]*\"/\"customer\": \"cus_scale$i\"/" "$fixture" >"$W/body.json"
		sig=$("$HR" sign --provider stripe --secret "$SECRET" <"$W/body.json")
		curl -sf -o /dev/null -X POST -H "Content-Type: application/json" -H "$sig" --data-binary "@$W/body.json" \
			"http://127.0.0.1:$port/webhooks/stripe"
	done
	stop "$cap"
}
capture_set "$W/store.db"

# check_secs VARIANT OUT [FLAGS...]: seconds of one full default check (the
# JSON report in OUT, the exit code in OUT.code) with the probe $P.
n=0
check_secs() {
	local v=$1 out=$2 port t0 t1 code=0
	shift 2
	n=$((n + 1))
	port=$(free_port)
	bg "$HR" demo serve "$v" --listen "127.0.0.1:$port" --db "$W/$v-$n.db" --secret "$SECRET" --quiet >/dev/null 2>&1
	local h=$BG
	wait_port "$port"
	t0=$(date +%s.%N)
	"${BIN:-$HR}" --db "$W/store.db" check "$@" --to "http://127.0.0.1:$port/webhooks/stripe" --secret "$SECRET" \
		--dsn "sqlite:$W/$v-$n.db" --probe-sql "$P" -q --json --no-color >"$out" 2>"$out.err" || code=$?
	t1=$(date +%s.%N)
	echo "$code" >"$out.code"
	stop "$h"
	awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.2f", b - a }'
}

# verdicts JSON: "delivery event-type phase status" per line, sorted.
verdicts() {
	python3 -c '
import json, sys
c = json.load(open(sys.argv[1]))
for d in c.get("deliveries", []):
    for p in d.get("phases", []):
        print(d["delivery_id"], d.get("event_type", ""), p["phase"], p["status"])
' "$1" | sort
}

all=$(seq -s ' ' "$N")
# The buggy set: which deliveries failed, and do both modes agree?
failed() { verdicts "$1" | awk '$4 == "fail" { print $1 " " $2 }' | sort -n -u | tr '\n' ';'; }

# scale NAME PROBE: the five checks of one probe, and their rows.
scale() {
	local s=$1 one ok1 okd bad1 badd agree note f
	P=$2
	log "checkscale ($s probe): 1 delivery, $N correct, $N with invoice.paid buggy; --jobs 1 and the default; load $(cut -d' ' -f1-3 /proc/loadavg)"
	one=$(check_secs fixed "$W/$s-one.json" 1)
	[ -n "${HR_BEFORE:-}" ] && bone=$(BIN=$HR_BEFORE check_secs fixed "$W/$s-bone.json" 1)
	ok1=$(check_secs fixed "$W/$s-ok1.json" $all --jobs 1)
	okd=$(check_secs fixed "$W/$s-okd.json" $all)
	[ -n "${HR_BEFORE:-}" ] && bokd=$(BIN=$HR_BEFORE check_secs fixed "$W/$s-bokd.json" $all)
	bad1=$(check_secs paidnaive "$W/$s-bad1.json" $all --jobs 1)
	badd=$(check_secs paidnaive "$W/$s-badd.json" $all)
	[ -n "${HR_BEFORE:-}" ] && bbadd=$(BIN=$HR_BEFORE check_secs paidnaive "$W/$s-bbadd.json" $all)
	log "load at the end $(cut -d' ' -f1-3 /proc/loadavg)"
	for f in one ok1 okd; do
		[ "$(cat "$W/$s-$f.json.code")" = 0 ] || log "$s $f: the correct handler did not pass (exit $(cat "$W/$s-$f.json.code")): $(tail -1 "$W/$s-$f.json.err")"
	done
	agree=same
	[ "$(verdicts "$W/$s-bad1.json")" = "$(verdicts "$W/$s-badd.json")" ] || agree=DIFFERENT
	[ "$(verdicts "$W/$s-ok1.json")" = "$(verdicts "$W/$s-okd.json")" ] || agree=DIFFERENT
	log "$s: buggy set, failed with --jobs 1: $(failed "$W/$s-bad1.json")"
	log "$s: buggy set, failed with the default: $(failed "$W/$s-badd.json")"
	log "$s: verdicts of --jobs 1 and the default, phase by phase: $agree"
	note=$(python3 -c 'import json,sys; print(next((n for n in json.load(open(sys.argv[1])).get("notes", []) if "at a time" in n or "as a group" in n), ""))' "$W/$s-okd.json")
	log "$s default: $note"
	row "4 check scale" "$s probe: 1 delivery, full default check, s vs goal 1.5 s" "$one" 1.5
	row "4 check scale" "$s probe: $N correct deliveries, --jobs 1, s vs 1 delivery" "$ok1" "$one"
	row "4 check scale" "$s probe: $N correct deliveries, default, s vs 1 delivery (goal ≤ 3×)" "$okd" "$one"
	row "4 check scale" "$s probe: $N deliveries, invoice.paid buggy, --jobs 1, s vs 1 delivery (failed: $(failed "$W/$s-bad1.json"))" "$bad1" "$one"
	row "4 check scale" "$s probe: $N deliveries, invoice.paid buggy, default, s vs 1 delivery (failed: $(failed "$W/$s-badd.json") verdicts vs --jobs 1: $agree)" "$badd" "$one"
	[ -n "${HR_BEFORE:-}" ] || return 0
	agree=same
	[ "$(verdicts "$W/$s-bad1.json")" = "$(verdicts "$W/$s-bbadd.json")" ] || agree=DIFFERENT
	[ "$(verdicts "$W/$s-ok1.json")" = "$(verdicts "$W/$s-bokd.json")" ] || agree=DIFFERENT
	row "4 check scale" "$s probe: before, 1 delivery, s vs goal 1.5 s" "$bone" 1.5
	row "4 check scale" "$s probe: before, $N correct deliveries, default, s vs its 1 delivery" "$bokd" "$bone"
	row "4 check scale" "$s probe: before, $N deliveries, invoice.paid buggy, default, s vs its 1 delivery (failed: $(failed "$W/$s-bbadd.json") verdicts vs --jobs 1: $agree)" "$bbadd" "$bone"
}
for s in $SCOPES; do
	case $s in
	scoped) scale scoped "$PROBE" ;;
	unscoped) scale unscoped "$UNSCOPED" ;;
	*) log "unknown scope $s (want scoped or unscoped)"; exit 2 ;;
	esac
done
