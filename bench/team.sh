#!/usr/bin/env bash
# Part 8, the team store: the same measures on Postgres and on SQLite, side by side.
#   capture --forward into a local Postgres vs into SQLite (the same no-op handler, wrk,
#   interleaved rounds): req/s at c=16 (goal >= 0.7x SQLite's) and p50 at c=1 (goal <= 1.5x)
#   list (newest 50) of 1M deliveries on Postgres: whole-command ms vs the 50 ms goal, and vs
#   the same on a 1M SQLite store
#   the TUI's first screen on 1M on Postgres: hookreplay tui in tmux until the newest delivery
#   shows, ms vs the 300 ms goal (and the store queries alone, bench/fill -tui)
# Postgres is $HOOKREPLAY_BENCH_PG (a URL; default the local server .ci/run and the tests use,
# postgres://hookreplay@127.0.0.1:5432/hookreplay_test?sslmode=disable). Each store is a schema
# of that database: the capture ones are dropped at the end, the 1M one (bench_1000k_<stamp>, filled
# from 4,000 rows bench/fill writes, copied by the server) is kept between runs as store.sh keeps its
# SQLite files. Needs psql (postgresql-client) for the schema housekeeping.
# With BEFORE=COMMIT (lib.sh builds that hookreplay too) capture into Postgres and into SQLite,
# and list on Postgres, are also measured with that build, in the same rounds: what a change did,
# side by side.
# The load average at the start and the end is a row of its own: on a shared machine the
# ratios of one run are what holds, not its absolute figures. TEAM_ONLY=capture stops after
# the capture rows (no 1M store to fill).
. "$(dirname "$0")/lib.sh"
[ -n "${HR:-}" ] && [ -n "${HEY:-}" ] || setup

PG=${HOOKREPLAY_BENCH_PG:-postgres://hookreplay@127.0.0.1:5432/hookreplay_test?sslmode=disable}
ROUNDS=${ROUNDS:-$([ "$QUICK" = 1 ] && echo 1 || echo 3)}
DUR=${DUR:-$([ "$QUICK" = 1 ] && echo 1 || echo 3)}
N=${TEAM_N:-$([ "$QUICK" = 1 ] && echo 100000 || echo 1000000)}
W=$BENCH_WORK/team
mkdir -p "$W"
# pg_url SCHEMA: $PG with the schema as its search_path.
pg_url() { case $PG in *\?*) echo "$PG&search_path=$1" ;; *) echo "$PG?search_path=$1" ;; esac; }
psql_q() { psql "$PG" -qtAc "$1"; }
cap_schema=bench_capture_$$
drop_capture_schema() {
	psql_q "DROP SCHEMA IF EXISTS $cap_schema CASCADE" >/dev/null 2>&1 || true
	psql_q "DROP SCHEMA IF EXISTS ${cap_schema}_before CASCADE" >/dev/null 2>&1 || true
}
trap 'drop_capture_schema; bench_cleanup' EXIT

body=bench/testdata/invoice.paid.json
post_lua "$body" >"$W/post.lua"
start_handler "$W/handler.addr"

load_start=$(cut -d' ' -f1 /proc/loadavg)
declare -A PORT PID
# start_capture NAME DB [FLAGS [BINARY]]: capture --forward into DB; sets PORT[NAME], PID[NAME].
start_capture() {
	local port
	port=$(free_port)
	bg "${4:-$HR}" --db "$2" capture ${3:-} --listen "127.0.0.1:$port" --forward "http://$handler" --quiet >/dev/null 2>"$W/$1.err"
	PORT[$1]=$port
	PID[$1]=$BG
	wait_port "$port"
}
start_capture sqlite "$W/capture.db"
# SQLite's default (--sync normal) does not flush a commit to disk: it keeps
# every acknowledged delivery across a crash of hookreplay, not of the
# machine. A Postgres commit (synchronous_commit on) waits for the WAL flush
# when the server runs with fsync on, as SQLite's --sync full does.
start_capture sqlitefull "$W/capture-full.db" "--sync full"
start_capture postgres "$(pg_url "$cap_schema")"
targets="sqlite sqlitefull postgres"
if [ -n "${HR_BEFORE:-}" ]; then
	start_capture postgresbefore "$(pg_url "${cap_schema}_before")" "" "$HR_BEFORE"
	start_capture sqlitebefore "$W/capture-before.db" "" "$HR_BEFORE"
	targets="$targets postgresbefore sqlitebefore"
fi
log "team: the Postgres server has fsync=$(psql_q "SHOW fsync"), synchronous_commit on (hookreplay sets it)"

log "team: capture --forward into SQLite, SQLite --sync full and Postgres, $ROUNDS round(s) of ${DUR}s at c=1 and c=16"
for c in 1 16; do
	for _ in $(seq "$ROUNDS"); do
		for t in $targets; do
			read -r p rps <<<"$(wrk_run "$W/post.lua" "http://127.0.0.1:${PORT[$t]}/webhooks/stripe" "$c")"
			echo "$p" >>"$W/p50.$t.$c"
			echo "$rps" >>"$W/rps.$t.$c"
		done
	done
done
m() { median <"$W/$1"; }
row "8 team" "capture --forward into Postgres vs into SQLite, req/s at c=16 (goal >= 0.7x)" "$(m rps.postgres.16)" "$(m rps.sqlite.16)"
row "8 team" "capture --forward into Postgres vs into SQLite, p50 ms at c=1 (goal <= 1.5x)" "$(m p50.postgres.1)" "$(m p50.sqlite.1)"
row "8 team" "capture --forward into Postgres vs into SQLite, p50 ms at c=16" "$(m p50.postgres.16)" "$(m p50.sqlite.16)"
row "8 team" "capture --forward into Postgres vs into SQLite --sync full (a flush per commit), req/s at c=16" "$(m rps.postgres.16)" "$(m rps.sqlitefull.16)"
row "8 team" "capture --forward into Postgres vs into SQLite --sync full (a flush per commit), p50 ms at c=1" "$(m p50.postgres.1)" "$(m p50.sqlitefull.1)"
if [ -n "${HR_BEFORE:-}" ]; then
	BEFORE=${BEFORE:-the build before}
	row "8 team" "capture --forward into Postgres, req/s at c=16: this build vs $BEFORE" "$(m rps.postgres.16)" "$(m rps.postgresbefore.16)"
	row "8 team" "capture --forward into Postgres, p50 ms at c=1: this build vs $BEFORE" "$(m p50.postgres.1)" "$(m p50.postgresbefore.1)"
	row "8 team" "capture --forward into Postgres vs into SQLite, req/s at c=16, both $BEFORE" "$(m rps.postgresbefore.16)" "$(m rps.sqlitebefore.16)"
	row "8 team" "capture --forward into SQLite, req/s at c=16: this build vs $BEFORE" "$(m rps.sqlite.16)" "$(m rps.sqlitebefore.16)"
	row "8 team" "capture --forward into SQLite, p50 ms at c=1: this build vs $BEFORE" "$(m p50.sqlite.1)" "$(m p50.sqlitebefore.1)"
fi
for t in $targets; do stop "${PID[$t]}"; done
drop_capture_schema
if [ "${TEAM_ONLY:-}" = capture ]; then
	row "8 team" "load average (1 min): at the start vs at the end of this run" "$load_start" "$(cut -d' ' -f1 /proc/loadavg)"
	exit 0
fi

# The 1M stores: Postgres in a kept schema, SQLite in store.sh's cache file.
# A filled schema is kept whatever hookreplay version filled it (opening it
# migrates it); one cut short is filled again.
stamp=$(cat bench/fill/main.go | sha256sum | cut -c1-12)
big=bench_$((N / 1000))k_$stamp
if [ "$(psql_q "SELECT count(*) FROM information_schema.tables WHERE table_schema = '$big' AND table_name = 'deliveries'")" != 1 ] ||
	[ "$(psql_q "SELECT count(*) >= $N FROM $big.deliveries")" != t ]; then
	for s in $(psql_q "SELECT nspname FROM pg_namespace WHERE nspname LIKE 'bench_$((N / 1000))k_%'"); do psql_q "DROP SCHEMA $s CASCADE" >/dev/null 2>&1; done
	# bench/fill writes 4,000 realistic deliveries through the store (on a busy
	# 2-core machine at a few hundred a second: 1M that way takes most of an
	# hour); the server copies them into the rest, each copy its own event id
	# and arrival time, in one statement.
	log "team: filling $N deliveries into Postgres schema $big"
	seed=4000
	"$FILL" -db "$(pg_url "$big")" -n "$seed"
	cols=$(psql_q "SELECT string_agg(column_name, ', ' ORDER BY ordinal_position) FROM information_schema.columns
		WHERE table_schema = '$big' AND table_name = 'deliveries' AND column_name NOT IN ('id', 'received_at', 'event_id')")
	psql_q "INSERT INTO $big.deliveries (received_at, event_id, $cols)
		SELECT d.received_at - g * $seed * 1000000000::bigint, d.event_id || '_' || g, $cols
		FROM generate_series(1, $((N / seed - 1))) g, $big.deliveries d ORDER BY g, d.id" >/dev/null
	# as autovacuum leaves a table that has been there a while: statistics and
	# the visibility map (count(*) is then an index-only scan)
	psql_q "VACUUM ANALYZE $big.deliveries" >/dev/null
fi
# SQLite: store.sh's file of N deliveries, whatever schema it was filled at
# (opening it migrates it); filled here only when there is none.
lite=$(ls -t "$BENCH_CACHE"/store-"$N"-*.db 2>/dev/null | head -1 || true)
if [ -z "$lite" ]; then
	lite="$BENCH_CACHE/store-$N-$stamp.db"
	log "team: filling $N deliveries into $lite"
	"$FILL" -db "$lite" -n "$N"
fi
pgbig=$(pg_url "$big")
k=$((N / 1000))k
med5() {
	for _ in 1 2 3 4 5; do secs "$@"; echo; done | awk '{ print $1 * 1000 }' | median | awk '{ printf "%.1f", $1 }'
}
"$HR" --db "$pgbig" list >/dev/null # warm the server's cache as a user's second list would find it
row "8 team $k" "list (newest 50) on Postgres, ms vs goal 50 ms" "$(med5 "$HR" --db "$pgbig" list)" 50
row "8 team $k" "list (newest 50), ms: Postgres vs SQLite" "$(med5 "$HR" --db "$pgbig" list)" "$(med5 "$HR" --db "$lite" list)"
row "8 team $k" "list's store work in process (open, newest 50 twice; bench/fill -list), ms: Postgres vs SQLite" \
	"$(for _ in 1 2 3 4 5; do "$FILL" -db "$pgbig" -list; done | median)" "$(for _ in 1 2 3 4 5; do "$FILL" -db "$lite" -list; done | median)"
if [ -n "${HR_BEFORE:-}" ]; then
	row "8 team $k" "list (newest 50) on Postgres, ms: this build vs $BEFORE" "$(med5 "$HR" --db "$pgbig" list)" "$(med5 "$HR_BEFORE" --db "$pgbig" list)"
fi
row "8 team $k" "process start alone (hookreplay --version), ms" "$(med5 "$HR" --version)" 50
if command -v pgbench >/dev/null; then
	# what a new connection costs the server (a backend forked and set up), whoever asks
	printf 'SELECT 1;\n' >"$W/one.sql"
	row "8 team $k" "a new Postgres connection alone (pgbench -C, SELECT 1), ms" \
		"$(pgbench -n -C -T 3 -f "$W/one.sql" "$PG" 2>/dev/null | awk -F' = ' '/average connection time/ { print $2 + 0 }')" 50
fi
row "8 team $k" "list --source bench --provider github (newest 50) on Postgres, ms vs goal 50 ms" "$(med5 "$HR" --db "$pgbig" list --source bench --provider github)" 50
row "8 team $k" "TUI first load on Postgres (open, count, newest 120 rows; bench/fill -tui), ms vs goal 300 ms" \
	"$(for _ in 1 2 3 4 5; do "$FILL" -db "$pgbig" -tui; done | median)" 300
# tui_ms DB ID: ms from starting `hookreplay tui` in a detached 120x40 tmux session until its
# screen shows delivery ID (tmux's own start included), as store.sh measures it.
tui_ms() {
	local sock="hookreplay-bench-$$" t0 t1 i path
	t0=$(date +%s%N)
	tmux -L "$sock" -f /dev/null new-session -d -x 120 -y 40 -s b "$HR --db '$1' tui"
	for i in $(seq 2000); do
		tmux -L "$sock" capture-pane -p -t b 2>/dev/null | grep -qw "$2" && break
		sleep 0.002
	done
	t1=$(date +%s%N)
	path=$(tmux -L "$sock" display-message -p '#{socket_path}' 2>/dev/null || true)
	tmux -L "$sock" kill-server 2>/dev/null || true
	[ -z "$path" ] || rm -f "$path"
	[ "$i" -lt 2000 ] || log "tui on $1 never showed delivery $2"
	echo $(((t1 - t0) / 1000000))
}
if command -v tmux >/dev/null; then
	newest=$(psql_q "SELECT max(id) FROM $big.deliveries")
	row "8 team $k" "TUI first screen on Postgres (hookreplay tui in tmux until the newest delivery shows), ms vs goal 300 ms" \
		"$(for _ in 1 2 3 4 5; do tui_ms "$pgbig" "$newest"; done | median)" 300
	row "8 team $k" "TUI first screen in tmux, ms: Postgres vs SQLite" \
		"$(for _ in 1 2 3; do tui_ms "$pgbig" "$newest"; done | median)" "$(for _ in 1 2 3; do tui_ms "$lite" "$N"; done | median)"
fi
row "8 team" "load average (1 min): at the start vs at the end of this run" "$load_start" "$(cut -d' ' -f1 /proc/loadavg)"
