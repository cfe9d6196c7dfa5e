#!/usr/bin/env bash
# The performance table of docs/performance.md: installs what hookreplay is
# compared against (nginx and wrk from Debian packages, hey from the Go module
# proxy, into $BENCH_CACHE), runs every part side by side and prints one
# Markdown table of ratios, ours vs the baseline measured in the same run.
#
#   bench/run.sh                   everything (< 10 min)
#   QUICK=1 bench/run.sh           fewer rounds and trials, 100k store only (< 2 min)
#   BEFORE=<commit> bench/run.sh   also rows for hookreplay built at that commit
#   PARTS="capture replay" bench/run.sh   only some parts
#
# Each part runs on its own too: bench/capture.sh, replay.sh, burst.sh,
# detect.sh, checktime.sh, checkscale.sh, store.sh, capmem.sh, gobench.sh. Not part of the
# table: bench/ceiling.sh (capture --forward against two experiment builds).
# Not in the default PARTS because it needs a Postgres server: bench/team.sh
# (Postgres vs SQLite; PARTS=team bench/run.sh, or HOOKREPLAY_BENCH_PG=URL).
. "$(dirname "$0")/lib.sh"
PARTS=${PARTS:-capture replay burst detect checktime checkscale store capmem gobench}
start=$(date +%s)
load0=$(cut -d' ' -f1-3 /proc/loadavg)
setup
: >"$ROWS"
for p in $PARTS; do
	t0=$(date +%s)
	bash "bench/$p.sh"
	log "$p took $(($(date +%s) - t0)) s"
done
cpu=$(awk -F': ' '/model name/ { print $2; exit }' /proc/cpuinfo)
{
	echo
	echo "$(date -u '+%Y-%m-%d %H:%M UTC'), $(nproc) CPUs ($cpu), load average $load0 at the start and $(cut -d' ' -f1-3 /proc/loadavg) at the end;"
	echo "$(go env GOVERSION), hookreplay $(git rev-parse --short HEAD)$([ -n "$(git status --porcelain)" ] && echo ' (with uncommitted changes)')${BEFORE:+, before = $(git rev-parse --short "$BEFORE")}, $([ "$QUICK" = 1 ] && echo 'QUICK=1, ')took $(($(date +%s) - start)) s"
	echo
	table_head
	cat "$ROWS"
} | tee "$BENCH_WORK/table.md"
: >"$ROWS" # printed once
if [ -n "${TABLE_OUT:-}" ]; then cp "$BENCH_WORK/table.md" "$TABLE_OUT"; fi
