#!/usr/bin/env bash
# The ceiling of capture --forward's two ratio goals (issue 14): side by side
# in interleaved wrk rounds at concurrency 1 and 16, against nginx proxy_pass
# (keep-alive upstream) and the same no-op handler:
#   forward   hookreplay capture --forward as shipped (commit, then answer)
#   nostore   an experiment build that stores nothing (bench/experiments/nostore.patch):
#             the most capture's proxying could reach whatever the store did
#   spool     an experiment build that appends each delivery to a file, answers,
#             and fills SQLite behind it (bench/experiments/spool.patch; no recovery,
#             not shippable): what taking the commit off the answer's path would give
# The patches apply to the commit named in their first line's comment or to
# a later one that has not changed the lines they touch; the script says so
# when one does not apply. Not part of run.sh: it builds two extra binaries.
. "$(dirname "$0")/lib.sh"
setup

ROUNDS=${ROUNDS:-$([ "$QUICK" = 1 ] && echo 1 || echo 3)}
DUR=${DUR:-$([ "$QUICK" = 1 ] && echo 1 || echo 2)}
W=$BENCH_WORK/ceiling
mkdir -p "$W"
declare -A BIN=([forward]="$HR")
for exp in nostore spool; do
	src=$W/src-$exp
	mkdir -p "$src" && git archive HEAD | tar -x -C "$src"
	if ! git -C "$src" apply "$PWD/bench/experiments/$exp.patch" 2>"$W/$exp.apply"; then
		log "bench/experiments/$exp.patch does not apply to HEAD any more: $(head -1 "$W/$exp.apply")"
		exit 1
	fi
	log "building the $exp experiment"
	(cd "$src" && go build -o "$W/hookreplay-$exp" .)
	BIN[$exp]=$W/hookreplay-$exp
done

body=bench/testdata/invoice.paid.json
post_lua "$body" >"$W/post.lua"
start_handler "$W/handler.addr"
start_nginx "$W/nginx" "$handler"
declare -A PORT
for t in forward nostore spool; do
	port=$(free_port)
	bg "${BIN[$t]}" --db "$W/$t.db" capture --listen "127.0.0.1:$port" --forward "http://$handler" >/dev/null 2>"$W/$t.err"
	PORT[$t]=$port
	wait_port "$port"
done
PORT[nginx]=$ngx_port

log "ceiling: $ROUNDS round(s) of ${DUR}s per target and concurrency"
for c in 1 16; do
	for _ in $(seq "$ROUNDS"); do
		for t in nginx forward nostore spool; do
			read -r p rps <<<"$(wrk_run "$W/post.lua" "http://127.0.0.1:${PORT[$t]}/webhooks/stripe" "$c")"
			echo "$p" >>"$W/p50.$t.$c"
			echo "$rps" >>"$W/rps.$t.$c"
		done
	done
done
m() { median <"$W/$1"; }
for t in forward nostore spool; do
	row "1 ceiling" "$t p50 ms vs nginx, c=1 (goal ≤ 1.5×)" "$(m "p50.$t.1")" "$(m p50.nginx.1)"
done
for t in forward nostore spool; do
	row "1 ceiling" "$t req/s vs nginx, c=16 (goal ≥ 0.5×)" "$(m "rps.$t.16")" "$(m rps.nginx.16)"
done
