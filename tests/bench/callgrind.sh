#!/bin/bash
# Instruction counts of the single-lcore hot paths (BENCHMARKS.md rule 5):
# b1_ring_link --callgrind ITERS (same-lcore direct link, and a one-lcore
# enqueue+dequeue of the ring link) and b2_dispatch --callgrind ITERS (every
# N x burst x variant of B2). Each case runs ITERS times between
# CALLGRIND_ZERO_STATS and CALLGRIND_DUMP_STATS_AT("<case>"), so one dump file
# per case; Ir comes from its "summary:" line. Repeatable whatever the machine does.
set -eu
. "$(dirname "$0")/common.sh"

: "${BENCH_CG_ITERS:=20000}"
: "${VALGRIND:=$(command -v valgrind || true)}"
if [ -z "$VALGRIND" ] || [ ! -x "$VALGRIND" ]; then
	echo "SKIP: valgrind not found"
	exit 77
fi
bench_header CG "callgrind instruction counts, $BENCH_CG_ITERS iterations per case"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

cg() { # name program
	# shellcheck disable=SC2046
	bench_callgrind "$tmp" "$1" "$2" $(bench_eal "cg$1") -l 0 -- --callgrind "$BENCH_CG_ITERS"
}

cg b1 "$BENCH_BUILDDIR/bench/b1_ring_link"
cg b2 "$BENCH_BUILDDIR/bench/b2_dispatch"

echo
echo "B1 (one lcore) instructions per object; ring1 = enqueue and dequeue on the same lcore"
printf "%-34s %6s %12s %10s %10s\n" case burst Ir Ir/object Ir/burst
grep '^callgrind-case' "$tmp/b1.log" | while read -r _ c _ objs; do
	ir=$(bench_cg_ir "$tmp/b1.ir" "$c")
	b=${c##*.b}
	awk -v c="${c%.b*}" -v b="$b" -v ir="$ir" -v o="$objs" 'BEGIN {
		printf "%-34s %6d %12d %10.2f %10.1f\n", c, b, ir, ir / o, ir / o * b
		printf "{\"bench\":\"B1\",\"case\":\"callgrind.%s\",\"burst\":%d,\"unit\":\"instructions/object\",\"ir\":%d,\"objects\":%d,\"ir_per_object\":%.3f,\"ir_per_burst\":%.2f}\n", c, b, ir, o, ir / o, ir / o * b > "/dev/stderr" }'
done 2>"$tmp/b1.json"

echo
echo "B2 instructions per stage call (node call), N + 2 calls per burst"
printf "%-26s %4s %6s %12s %14s %16s\n" variant N burst Ir Ir/stage-call Ir/obj/stage-call
grep '^callgrind-case' "$tmp/b2.log" | while read -r _ c _ objs _ calls; do
	ir=$(bench_cg_ir "$tmp/b2.ir" "$c")
	awk -v c="$c" -v ir="$ir" -v o="$objs" -v k="$calls" 'BEGIN {
		split(c, p, "."); v = p[2]; n = substr(p[3], 2); b = substr(p[4], 2)
		printf "%-26s %4d %6d %12d %14.2f %16.4f\n", v, n, b, ir, ir / k, ir / k / b
		printf "{\"bench\":\"B2\",\"case\":\"callgrind.%s\",\"n_stages\":%d,\"burst\":%d,\"unit\":\"instructions/stage-call\",\"ir\":%d,\"stage_calls\":%d,\"ir_per_stage_call\":%.3f,\"ir_per_object_per_stage_call\":%.5f}\n", v, n, b, ir, k, ir / k, ir / k / b > "/dev/stderr" }'
done 2>"$tmp/b2.json"
echo
cat "$tmp/b1.json" "$tmp/b2.json"
