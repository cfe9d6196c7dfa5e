#!/usr/bin/env bash
# Part 5, store scale: stores of 100k and 1M deliveries (QUICK: 100k only)
# written by bench/fill (realistic Stripe/GitHub/Shopify rows, ~1.3 KB
# bodies), kept in $BENCH_CACHE between runs. Latencies are wall times of the
# whole command (process start included), median of 5; the baselines are the
# goal (list under 50 ms), the sqlite3 shell running the equivalent query, or
# the same command on a store ten times smaller (memory and TUI start: 1× is
# constant whatever the store's size). Capture's memory over 100k deliveries
# is bench/capmem.sh.
. "$(dirname "$0")/lib.sh"
[ -n "${HR:-}" ] && [ -n "${HEY:-}" ] || setup

SIZES=${SIZES:-$([ "$QUICK" = 1 ] && echo 100000 || echo "100000 1000000")}
W=$BENCH_WORK/store
mkdir -p "$W"
stamp=$(cat bench/fill/main.go internal/store/migrations.go | sha256sum | cut -c1-12)

# med5 CMD...: median wall ms of 5 runs.
med5() {
	for _ in 1 2 3 4 5; do secs "$@"; echo; done | awk '{ print $1 * 1000 }' | median | awk '{ printf "%.1f", $1 }'
}
sq() { sqlite3 "$db" "$1"; }
# measure CMD...: run CMD (stdout and stderr to /dev/null) $RUNS times (default
# 3: peak RSS varies by a few MB from run to run); sets MB (median peak RSS)
# and SECS (median wall time).
measure() {
	local i
	: >"$W/measure"
	for i in $(seq "${RUNS:-3}"); do
		/usr/bin/time -f '%M %e' -q -a -o "$W/measure" "$@" >/dev/null 2>&1 || {
			log "failed: $*"
			return 1
		}
	done
	MB=$(cut -d' ' -f1 "$W/measure" | median | awk '{ printf "%d", $1 / 1024 }')
	SECS=$(cut -d' ' -f2 "$W/measure" | median)
}
# rate N SECS: N per second.
rate() { awk -v n="$1" -v t="$2" 'BEGIN { printf "%.0f", n / t }'; }
# tui_ms DB ID: ms from starting `hookreplay tui` in a detached 120x40 tmux
# session until its screen shows delivery ID (tmux's own start included).
tui_ms() {
	local sock="hookreplay-bench-$$" t0 t1 i
	t0=$(date +%s%N)
	tmux -L "$sock" -f /dev/null new-session -d -x 120 -y 40 -s b "$HR --db $1 tui"
	for i in $(seq 2000); do
		tmux -L "$sock" capture-pane -p -t b 2>/dev/null | grep -qw "$2" && break
		sleep 0.002
	done
	t1=$(date +%s%N)
	local path
	path=$(tmux -L "$sock" display-message -p '#{socket_path}' 2>/dev/null || true)
	tmux -L "$sock" kill-server 2>/dev/null || true
	[ -z "$path" ] || rm -f "$path"
	[ "$i" -lt 2000 ] || log "tui on $1 never showed delivery $2"
	echo $(((t1 - t0) / 1000000))
}

for n in $SIZES; do
	db="$BENCH_CACHE/store-$n-$stamp.db"
	if [ ! -s "$db" ]; then
		rm -f "$BENCH_CACHE"/store-"$n"-*.db*
		log "store: filling $n deliveries into $db"
		t=$(secs "$FILL" -db "$db" -n "$n")
		row "5 store $n" "fill (bench helper, batched store inserts), deliveries/s" "$(awk -v n="$n" -v t="$t" 'BEGIN { printf "%.0f", n / t }')" "-" "-"
	fi
	k=$((n / 1000))k
	size=$(stat -c %s "$db")
	wire=$(sq "SELECT avg(length(raw_request)) FROM deliveries")
	row "5 store $k" "db bytes per delivery vs its wire bytes" "$(awk -v s="$size" -v n="$n" 'BEGIN { printf "%.0f", s / n }')" "$(printf '%.0f' "$wire")"
	row "5 store $k" "list (newest 50), ms vs goal 50 ms" "$(med5 "$HR" --db "$db" list)" 50
	row "5 store $k" "list --provider github, ms vs goal 50 ms" "$(med5 "$HR" --db "$db" list --provider github)" 50
	row "5 store $k" "list --type 'orders/*', ms vs goal 50 ms" "$(med5 "$HR" --db "$db" list --type 'orders/*')" 50
	row "5 store $k" "list --event-id (oldest), ms vs goal 50 ms" "$(med5 "$HR" --db "$db" list --event-id evt_000000000001)" 50
	row "5 store $k" "list ms vs sqlite3 shell, same query" "$(med5 "$HR" --db "$db" list)" \
		"$(med5 sqlite3 "$db" "SELECT id, received_at, provider, event_type, event_id, method, target, length(raw_request), response_status FROM deliveries ORDER BY id DESC LIMIT 50")"
	mid=$((n / 2))
	row "5 store $k" "show ID, ms vs sqlite3 shell reading its row" "$(med5 "$HR" --db "$db" show "$mid")" \
		"$(med5 sqlite3 "$db" "SELECT * FROM deliveries WHERE id = $mid")"
	row "5 store $k" "TUI first load (open, count, newest 120 rows; bench/fill -tui), ms vs goal 50 ms" \
		"$(for _ in 1 2 3 4 5; do "$FILL" -db "$db" -tui; done | median)" 50
	small="$BENCH_CACHE/store-$((n / 10))-$stamp.db"
	[ -s "$small" ] || "$FILL" -db "$small" -n $((n / 10))
	sk=$((n / 10000))k
	if command -v tmux >/dev/null; then
		row "5 store $k" "TUI start: hookreplay tui in tmux until its first screen shows the newest delivery, ms vs the same on $sk" \
			"$(for _ in 1 2 3; do tui_ms "$db" "$n"; done | median)" "$(for _ in 1 2 3; do tui_ms "$small" $((n / 10)); done | median)"
	fi
	# Whole-store walks: constant memory is the same peak RSS as on a store ten
	# times smaller. At 1M only list --json, once (one pass; the table makes two).
	RUNS=$([ "$n" -gt 100000 ] && echo 1 || echo 3)
	measure "$HR" --db "$db" list --limit 0 --json
	row "5 store $k" "list --limit 0 --json peak RSS, MB vs the same on $sk deliveries (constant memory: 1×)" "$MB" "$(measure "$HR" --db "$small" list --limit 0 --json && echo "$MB")"
	row "5 store $k" "list --limit 0 --json, deliveries/s" "$(rate "$n" "$SECS")" "-" "-"
	if [ "$n" -le 100000 ]; then
		measure "$HR" --db "$db" list --limit 0
		row "5 store $k" "list --limit 0 (table) peak RSS, MB vs the same on $sk deliveries (constant memory: 1×)" "$MB" "$(measure "$HR" --db "$small" list --limit 0 && echo "$MB")"
		row "5 store $k" "list --limit 0 (table, two passes), deliveries/s" "$(rate "$n" "$SECS")" "-" "-"
		if [ -n "${HR_BEFORE:-}" ]; then
			for json in --json ""; do
				# A store of a newer schema is refused by an older binary: no row then.
				if before=$(RUNS=1 measure "${HR_BEFORE:-}" --db "$db" list --limit 0 $json && echo "$MB"); then
					row "5 store $k" "list --limit 0 ${json:-(table)} peak RSS, MB, vs before the fixes" \
						"$(measure "$HR" --db "$db" list --limit 0 $json && echo "$MB")" "$before"
				fi
			done
		fi
		measure "$HR" --db "$db" export -o "$W/export.jsonl"
		tq=$(secs sqlite3 "$db" "SELECT * FROM deliveries")
		row "5 store $k" "export (jsonl), deliveries/s vs sqlite3 shell reading the same rows" "$(rate "$n" "$SECS")" "$(rate "$n" "$tq")"
		row "5 store $k" "export (jsonl) peak RSS, MB vs the same on $sk deliveries (constant memory: 1×)" \
			"$MB" "$(measure "$HR" --db "$small" export -o "$W/small.jsonl" && echo "$MB")"
		rm -f "$W/import.db"*
		RUNS=1 measure "$HR" --db "$W/import.db" import "$W/export.jsonl"
		got=$(sqlite3 "$W/import.db" "SELECT count(*) FROM deliveries")
		[ "$got" = "$n" ] || log "import stored $got of $n"
		row "5 store $k" "import (jsonl), deliveries/s" "$(rate "$n" "$SECS")" "-" "-"
		row "5 store $k" "import (jsonl) peak RSS, MB vs the same on $sk deliveries (constant memory: 1×)" \
			"$MB" "$(RUNS=1 measure "$HR" --db "$W/import-small.db" import "$W/small.jsonl" && echo "$MB")"
		rm -f "$W"/*.jsonl "$W"/import*.db*
	fi
	unset RUNS
done
