#!/usr/bin/env bash
# Part 6, Go benchmarks of the hot paths (go test -bench -benchmem): capture's
# read-and-tee for 1 KiB to 1 MiB bodies, the store insert (one per commit vs
# capture's group commit, --sync normal and full), signature verify and sign
# per scheme, and report rendering. The full output is kept in
# $BENCH_WORK/gobench.txt (bench/run.sh prints where).
. "$(dirname "$0")/lib.sh"

BT=${BENCHTIME:-$([ "$QUICK" = 1 ] && echo 50x || echo 300x)}
out=$BENCH_WORK/gobench.txt
log "go benchmarks (-benchtime $BT)"
{
	go test -run '^$' -bench 'CaptureBody' -benchmem -benchtime "$BT" ./internal/capture
	go test -run '^$' -bench 'Insert' -benchmem -benchtime "$BT" ./internal/store
	go test -run '^$' -bench 'Verify|Sign' -benchmem -benchtime "$BT" ./internal/verify
	go test -run '^$' -bench 'Render' -benchmem -benchtime "$BT" ./internal/report
} | grep '^Benchmark' | sed 's/-[0-9]*\([[:space:]]\)/\1/' >"$out"
# val NAME FIELD-UNIT: the number before UNIT on NAME's line.
val() { awk -v n="$1" -v u="$2" '$1 == n { for (i = 2; i <= NF; i++) if ($i == u) print $(i - 1) }' "$out" | head -1; }

row "6 go bench" "capture 1 MiB body vs 1 KiB body, allocs/op (no allocation per byte)" \
	"$(val BenchmarkCaptureBody/1024KiB allocs/op)" "$(val BenchmarkCaptureBody/1KiB allocs/op)"
row "6 go bench" "capture 1 MiB body, bytes allocated per body byte vs 1" \
	"$(awk -v b="$(val BenchmarkCaptureBody/1024KiB B/op)" 'BEGIN { printf "%.1f", b / 1048576 }')" 1
row "6 go bench" "store insert, ns per delivery: 128 per commit vs 1 per commit (--sync normal)" \
	"$(val BenchmarkInsert/normal/batch128 ns/delivery)" "$(val BenchmarkInsert/normal/batch1 ns/delivery)"
row "6 go bench" "store insert, ns per delivery, 1 per commit: --sync full vs normal" \
	"$(val BenchmarkInsert/full/batch1 ns/delivery)" "$(val BenchmarkInsert/normal/batch1 ns/delivery)"
row "6 go bench" "store insert, ns per delivery, 128 per commit: --sync full vs normal" \
	"$(val BenchmarkInsert/full/batch128 ns/delivery)" "$(val BenchmarkInsert/normal/batch128 ns/delivery)"
# one sample event per provider
for v in $(awk '$1 ~ /^BenchmarkVerify\// { split($1, p, "/"); if (!seen[p[2]]++) print $1 }' "$out"); do
	s=${v/BenchmarkVerify/BenchmarkSign}
	row "6 go bench" "verify ${v#BenchmarkVerify/}, ns/op vs sign" "$(val "$v" ns/op)" "$(val "$s" ns/op)"
done
for f in color json junit markdown; do
	row "6 go bench" "render the mixed check report as $f, ns/op vs plain text" "$(val "BenchmarkRender/$f" ns/op)" "$(val BenchmarkRender/text ns/op)"
done
