#!/usr/bin/env bash
# Same verdicts (issue 28): `check --json` of the build before the check
# speed-ups ($BEFORE, default e13c1a2: before the overlap of first's
# late-effect window and the group of unscoped deliveries) and of the work
# tree, default and --jobs 1, on handlers written for this and not for
# hookreplay's tests (bench/verdicts/qah.go, bench/verdicts/node-hook.js; the
# modes are listed there). For every handler and set of deliveries it prints
# each build's phase statuses per delivery, the copies named by violations,
# the exit code and the wall time, and marks a run whose statuses differ
# from the first 'before' run of the same case.
#
#   bash bench/verdicts.sh                          # every handler, 3 rounds
#   ONLY='correct racy audit' REPS=1 bash bench/verdicts.sh
#   SETS='one mix' bash bench/verdicts.sh           # one | mix | scoped
#
# Sets of deliveries, captured with `hookreplay send --via` into a store:
#   one     a Stripe payment_intent.succeeded alone
#   mix     7 deliveries: Stripe (2), GitHub (2), Shopify, WhatsApp (2), with
#           the unscoped probe SELECT count(*) FROM effects (a group in the default)
#   scoped  6 Stripe deliveries of different event types, the probe scoped
#           to {{json:data.object.id}} (deliveries side by side)
# The node handlers handle Stripe only: their mix is the scoped set with an
# unscoped probe. A handler name ending in -s is that mode checked with
# --settle 1s (credit-email-s: its receipt may come 700 ms after the answer,
# later than the settle the first delivery teaches). Needs go, node (no npm packages) and python3. About 40
# minutes for every handler with REPS=3 on 2 cores.
. "$(dirname "$0")/lib.sh"
BEFORE=${BEFORE:-e13c1a2}
build
REPS=${REPS:-3}
SETS=${SETS:-one mix scoped}
ONLY=${ONLY:-correct racy async-ok async-bug job job-bug email email-bug credit-email credit-email-s credit-email-bug redelivered audit slow flaky node node-naive}
W=$BENCH_WORK/verdicts
REPO=$PWD
mkdir -p "$W/out" "$W/h"
export SECRET=whsec_benchVerdictsSecret0123456789

cp bench/verdicts/qah.go "$W/h/main.go" && sed -i '1,2d' "$W/h/main.go"
(cd "$W/h" && printf 'module qah\n\ngo 1.26.0\n' >go.mod && GOFLAGS=-mod=mod go get modernc.org/sqlite@v1.62.0 >/dev/null 2>&1 &&
	go build -o "$W/qah" .) || { log "building bench/verdicts/qah.go failed"; exit 1; }

# The deliveries: capture stores what send delivers through it.
cport=$(free_port)
bg "$HR" capture --listen "127.0.0.1:$cport" --db "$W/store.db" -q >/dev/null
wait_port "$cport"
for ev in stripe:payment_intent.succeeded stripe:invoice.paid github:push shopify:orders/create \
	whatsapp:messages github:issues.opened whatsapp:statuses \
	stripe:payment_intent.succeeded stripe:checkout.session.completed stripe:invoice.paid \
	stripe:charge.refunded stripe:customer.subscription.created stripe:customer.subscription.deleted; do
	"$HR" send --provider "${ev%%:*}" --event "${ev#*:}" --to http://127.0.0.1:1/hook \
		--via "http://127.0.0.1:$cport" --secret-env SECRET >/dev/null
done
stop "$BG"

# run1 HANDLER SET BUILD ROUND: one check, its JSON report and "exit seconds" in $W/out.
run1() {
	local h=$1 set=$2 b=$3 r=$4 d port smtp hp bin extra=() probes ids t0 t1 rc
	d=$(mktemp -d "$W/run.XXXX")
	cp "$W/store.db" "$d/store.db"
	port=$(free_port) smtp=$(free_port)
	case $h in *-s) extra=(--settle 1s) ;; esac # the receipt can come 700 ms after the answer
	case $b in before) bin=$HR_BEFORE ;; after) bin=$HR ;; jobs1) bin=$HR extra+=(--jobs 1) ;; esac
	case $h in
	node | node-naive) (cd "$d" && PORT=$port MODE=${h#node-} exec node "$REPO/bench/verdicts/node-hook.js") 2>"$d/h.log" & ;;
	*) (cd "$d" && exec "$W/qah" -addr "127.0.0.1:$port" -db app.db -secret "$SECRET" -mode "${h%-s}" -smtp "127.0.0.1:$smtp") 2>"$d/h.log" & ;;
	esac
	hp=$!
	wait_port "$port"
	local all='effects=SELECT count(*) FROM effects' one='effects=SELECT count(*) FROM effects WHERE obj = {{json:data.object.id}}'
	case $h in
	node*) [ "$set" = scoped ] && probes=(--probe-http "credits=http://127.0.0.1:$port/count?obj={{json:data.object.id}}") ||
		probes=(--probe-http "credits=http://127.0.0.1:$port/count") ;;
	credit-email*) probes=(--dsn "sqlite:$d/app.db" --probe-sql "$all" --smtp-sink "127.0.0.1:$smtp") ;;
	email*) probes=(--smtp-sink "127.0.0.1:$smtp") ;;
	redelivered) probes=(--dsn "sqlite:$d/app.db" --probe-sql "$all" --probe-sql 'flag=SELECT count(*) FROM processed WHERE redelivered = 1') ;;
	audit) probes=(--dsn "sqlite:$d/app.db" --probe-sql 'audit=SELECT count(*) FROM audit_log' --probe-sql "$all") ;;
	job*) [ "$set" = scoped ] && probes=(--dsn "sqlite:$d/app.db" --probe-sql "$one" --probe-sql 'jobs=SELECT count(*) FROM jobs WHERE obj = {{json:data.object.id}}') ||
		probes=(--dsn "sqlite:$d/app.db" --probe-sql "$all" --probe-sql 'jobs=SELECT count(*) FROM jobs') ;;
	*) [ "$set" = scoped ] && probes=(--dsn "sqlite:$d/app.db" --probe-sql "$one") || probes=(--dsn "sqlite:$d/app.db" --probe-sql "$all") ;;
	esac
	case $set in
	one) ids=(1) ;;
	mix) case $h in node*) ids=(8 9 10 11 12 13) ;; *) ids=(1 2 3 4 5 6 7) ;; esac ;;
	scoped) ids=(8 9 10 11 12 13) ;;
	esac
	t0=$(date +%s.%N)
	"$bin" check "${ids[@]}" --db "$d/store.db" --to "http://127.0.0.1:$port/hook" --secret-env SECRET \
		"${probes[@]}" "${extra[@]}" --json -q >"$W/out/$h.$set.$b.$r.json" 2>"$W/out/$h.$set.$b.$r.err"
	rc=$?
	t1=$(date +%s.%N)
	stop "$hp"
	echo "$rc $(python3 -c "print(round($t1 - $t0, 1))")" >"$W/out/$h.$set.$b.$r.time"
}

for r in $(seq 1 "$REPS"); do
	for h in $ONLY; do
		for set in $SETS; do
			case $h in email* | audit | redelivered | credit-email*) [ "$set" = scoped ] && continue ;; esac
			for b in before after jobs1; do
				log "round $r: $h $set $b"
				run1 "$h" "$set" "$b" "$r" || true
			done
		done
	done
done

python3 - "$W/out" <<'EOF'
import collections, glob, json, os, sys
out = sys.argv[1]
runs = collections.defaultdict(dict)
for f in sorted(glob.glob(out + '/*.time')):
    h, s, b, r = os.path.basename(f)[:-5].rsplit('.', 3)
    rc, wall = open(f).read().split()
    try:
        d = json.load(open(f[:-5] + '.json'))
        ph = [(x['delivery_id'], p['phase'], p['status'], tuple(sorted({v.get('copy', 0) for v in p.get('violations') or []})))
              for x in d['deliveries'] for p in x['phases']]
    except Exception:
        ph = None
    runs[(h, s)][(b, r)] = (rc, wall, ph)
def show(ph):
    if not ph:
        return 'no report'
    by = collections.OrderedDict()
    for dl, p, st, cp in ph:
        if p in ('crash', 'retention', 'order') and st == 'skip':
            continue
        by.setdefault(dl, []).append(p + ':' + st + (str(list(cp)) if st == 'fail' and any(cp) else ''))
    return ' | '.join('%s %s' % (k, ' '.join(v)) for k, v in by.items())
for (h, s), rr in sorted(runs.items()):
    print('== %s, %s' % (h, s))
    ref = next((v[2] for k, v in sorted(rr.items()) if k[0] == 'before'), None)
    for (b, r), (rc, wall, ph) in sorted(rr.items(), key=lambda kv: (['before', 'after', 'jobs1'].index(kv[0][0]), kv[0][1])):
        st = [(a, p, x) for a, p, x, _ in ph] if ph else None
        rst = [(a, p, x) for a, p, x, _ in ref] if ref else None
        print('  %-6s %s exit %s %6ss  %s%s' % (b, r, rc, wall, show(ph), '' if st == rst else '   <-- differs from before'))
EOF
