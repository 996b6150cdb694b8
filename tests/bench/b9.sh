#!/bin/bash
# B9 — counter strategies (tests/bench/b9_counters.c; doc/benchmarks.md): the four
# counters modules against each other in one process, cycles per add with one
# and two writers and per read, ratios to counters_percore measured in the same
# run; then the instruction counts of the one-writer adds and the reads under
# valgrind --tool=callgrind (B9_CG_OPS, default BENCH_CG_ITERS, per case).
# Placement: main lcore 0 on CPU 0 (asleep), lcore A = 1 on CPU 1, lcore B = 2 on
# CPU 0.
set -eu
. "$(dirname "$0")/common.sh"

prog=$BENCH_BUILDDIR/bench/b9_counters
bench_need_cpus 2
: "${B9_CG_OPS:=${BENCH_CG_ITERS:-20000}}"
: "${VALGRIND:=$(command -v valgrind || true)}"
bench_header B9 "counter strategies: cycles per add (1 and 2 writers) and per read"
bench_wait_quiet
# shellcheck disable=SC2046
bench_run "$prog" $(bench_eal b9) --lcores=0@0,1@1,2@0 \
	-- --reps "$BENCH_REPS" --ms "$BENCH_MS" $BENCH_RT_OPT
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"

bench_has_valgrind || exit 0
bench_tmp
echo
# shellcheck disable=SC2046
bench_callgrind "$tmp" b9 "$prog" $(bench_eal cgb9) -l 0 -- --callgrind "$B9_CG_OPS"

echo "B9 instructions (callgrind Ir) per operation, one writer; $B9_CG_OPS operations per case"
echo "(add1.*: the loop included; empty_loop is the loop alone)"
anchor_add=$(bench_cg_ir "$tmp/b9.ir" b9.add1.percore.row)
anchor_read=$(bench_cg_ir "$tmp/b9.ir" b9.read.percore)
printf "%-28s %10s %12s %10s %14s\n" case ops Ir Ir/op "Ir / percore"
grep '^callgrind-case' "$tmp/b9.log" | while read -r _ c _ ops; do
	ir=$(bench_cg_ir "$tmp/b9.ir" "$c")
	case $c in b9.read.*) a=$anchor_read ;; *) a=$anchor_add ;; esac
	awk -v c="$c" -v ir="$ir" -v ops="$ops" -v a="$a" 'BEGIN {
		printf "%-28s %10d %12d %10.2f %14.2f\n", c, ops, ir, ir / ops, ir / a
		printf "{\"bench\":\"B9\",\"case\":\"callgrind.%s\",\"unit\":\"instructions/op\",\"ops\":%d,\"ir\":%d,\"ir_per_op\":%.3f,\"over_percore\":%.4f}\n", substr(c, 4), ops, ir, ir / ops, ir / a > "/dev/stderr" }'
done 2>"$tmp/b9.json"
echo
cat "$tmp/b9.json"
