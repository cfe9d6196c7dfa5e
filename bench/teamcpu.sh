#!/usr/bin/env bash
# Part 8, the team store's CPU: what one delivery costs each process when capture --forward
# stores into Postgres, beside the same into SQLite (bench/team.sh measures req/s).
# Each round runs wrk -c 16 for $DUR seconds against one capture at a time, in turn: this build
# into Postgres, with BEFORE=COMMIT that build into Postgres, and this build into SQLite, each into a
# fresh schema or file; it prints per round req/s and the CPU (user + sys, from /proc) per delivery
# of capture, of the handler and of the Postgres server (the postmaster named by
# HOOKREPLAY_BENCH_PGDATA and its children: the capture's backend, the WAL writer, the
# checkpointer; not another server on the machine), and of wrk. On a shared machine throughput follows the
# load; CPU per delivery much less so.
#   HOOKREPLAY_BENCH_PG      the server's URL (default as bench/team.sh)
#   HOOKREPLAY_BENCH_PGDATA  its data directory, readable (default /tmp/pgpriv/data)
. "$(dirname "$0")/lib.sh"
[ -n "${HR:-}" ] && [ -n "${HEY:-}" ] || setup
PG=${HOOKREPLAY_BENCH_PG:-postgres://hookreplay@127.0.0.1:5432/hookreplay_test?sslmode=disable}
PGDATA_DIR=${HOOKREPLAY_BENCH_PGDATA:-/tmp/pgpriv/data}
ROUNDS=${ROUNDS:-4}
DUR=${DUR:-3}
W=$BENCH_WORK/teamcpu
mkdir -p "$W"
pg_url() { case $PG in *\?*) echo "$PG&search_path=$1" ;; *) echo "$PG?search_path=$1" ;; esac; }
schemas=()
trap 'for s in "${schemas[@]}"; do psql "$PG" -qtAc "DROP SCHEMA IF EXISTS $s CASCADE" >/dev/null 2>&1 || true; done; bench_cleanup' EXIT
post_lua bench/testdata/invoice.paid.json >"$W/post.lua"
start_handler "$W/handler.addr"
hpid=$BG
pm=$(head -1 "$PGDATA_DIR/postmaster.pid")
cpu() { awk '{ print $14 + $15 }' "/proc/$1/stat" 2>/dev/null || echo 0; } # clock ticks
# the postmaster, the children it has reaped (an autovacuum worker that exited), and those alive
pgcpu() { { awk '{ print $14 + $15 + $16 + $17 }' "/proc/$pm/stat"; for p in $(pgrep -P "$pm"); do cpu "$p"; done; } | awk '{ s += $1 } END { print s }'; }
tick=$(getconf CLK_TCK)
# one NAME BINARY DB: a capture, a second of warm-up, $DUR seconds measured; one line.
one() {
	local port cp c0 p0 h0 out
	port=$(free_port)
	"$2" --db "$3" capture --listen "127.0.0.1:$port" --forward "http://$handler" --quiet >/dev/null 2>"$W/$1.err" &
	cp=$!
	wait_port "$port"
	"$WRK" -t 2 -c 16 -d 1s -s "$W/post.lua" "http://127.0.0.1:$port/webhooks/stripe" >/dev/null
	c0=$(cpu "$cp") p0=$(pgcpu) h0=$(cpu "$hpid")
	out=$(/usr/bin/time -f 'wrkcpu %U %S' "$WRK" -t 2 -c 16 -d "${DUR}s" -s "$W/post.lua" "http://127.0.0.1:$port/webhooks/stripe" 2>&1)
	echo "$out" | awk -v name="$1" -v c=$(($(cpu "$cp") - c0)) -v p=$(($(pgcpu) - p0)) -v h=$(($(cpu "$hpid") - h0)) -v t="$tick" \
		-v l="$(cut -d' ' -f1 /proc/loadavg)" '
		/requests in/ { n = $1 } $1 == "Requests/sec:" { r = $2 } $1 == "wrkcpu" { w = $2 + $3 }
		END { u = 1e6 / t / n; printf "%-15s %6.0f req/s  capture %6.1f  handler %6.1f  postgres %6.1f  wrk %6.1f µs/delivery  load %s\n", name, r, c * u, h * u, p * u, w * 1e6 / n, l }'
	kill -INT "$cp"
	wait "$cp" 2>/dev/null || true
}
log "teamcpu: $ROUNDS round(s) of ${DUR}s at c=16; Postgres server pid $pm (fsync=$(psql "$PG" -qtAc 'SHOW fsync'))"
for i in $(seq "$ROUNDS"); do
	s=bench_cpu_$$_$i
	schemas+=("$s" "${s}_before")
	one postgres "$HR" "$(pg_url "$s")"
	[ -z "${HR_BEFORE:-}" ] || one postgres-before "$HR_BEFORE" "$(pg_url "${s}_before")"
	one sqlite "$HR" "$W/capture-$i.db"
done
