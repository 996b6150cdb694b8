#!/bin/bash
# B6 — the WebSocket decoder (tests/bench/b6_ws_decode.c; doc/benchmarks.md):
# libstk's stk_ws_dec_next against memcpy of the same bytes and wslay
# (libwslay-dev) in the same process, then the instruction counts of the same
# cases under valgrind --tool=callgrind (B6_CG_FRAMES, default BENCH_CG_ITERS,
# frames per case and variant).
# Placement: EAL -l 1, everything measured on the main lcore (CPU 1); no
# SCHED_FIFO (the program never asks for it). SKIPs (77) without libwslay-dev.
set -eu
. "$(dirname "$0")/common.sh"

prog=$BENCH_BUILDDIR/bench/b6_ws_decode
if [ ! -x "$prog" ]; then
	echo "SKIP: $prog not built (needs libwslay-dev: <wslay/wslay.h>, -lwslay)"
	exit 77
fi
bench_need_cpus 2
# the program never asks for SCHED_FIFO (other sessions run `make check` here)
# shellcheck disable=SC2034 # read by bench_header (common.sh)
BENCH_RT=0
: "${B6_CG_FRAMES:=${BENCH_CG_ITERS:-20000}}"
: "${VALGRIND:=$(command -v valgrind || true)}"
bench_header B6 "WebSocket decoder: cycles/frame, stk vs memcpy and wslay"
echo "wslay:   libwslay1 $(dpkg-query -W -f='${Version}' libwslay1 2>/dev/null || echo '?')"
bench_wait_quiet
# shellcheck disable=SC2046
bench_run "$prog" $(bench_eal b6) -l 1 -- --reps "$BENCH_REPS" --ms "$BENCH_MS"
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"

bench_has_valgrind || exit 0
bench_tmp
echo
# shellcheck disable=SC2046
bench_callgrind "$tmp" b6 "$prog" $(bench_eal cgb6) -l 0 -- --callgrind "$B6_CG_FRAMES"

echo "B6 instructions (callgrind Ir) per frame; $B6_CG_FRAMES+ frames per case and variant"
printf "%-36s %10s %12s %10s %12s %14s\n" case frames Ir Ir/frame Ir/wire-byte "Ir / stk Ir"
grep '^callgrind-case' "$tmp/b6.log" | while read -r _ c _ fr _ wb _ pb; do
	ir=$(bench_cg_ir "$tmp/b6.ir" "$c")
	# the case name without the variant: b6.<variant>.<kind>.<size>.<layout>
	k=${c#b6.*.}
	stk=$(bench_cg_ir "$tmp/b6.ir" "b6.stk.$k")
	awk -v c="$c" -v ir="$ir" -v fr="$fr" -v wb="$wb" -v pb="$pb" -v stk="$stk" -v k="$k" 'BEGIN {
		split(c, p, "."); v = p[2]
		sp = (stk > 0) ? ir / stk : 0
		printf "%-36s %10d %12d %10.1f %12.3f %14s\n", c, fr, ir, ir / fr, ir / wb, (v == "stk") ? "" : sprintf("%.2f", sp)
		printf "{\"bench\":\"B6\",\"case\":\"callgrind.%s\",\"variant\":\"%s\",\"unit\":\"instructions/frame\",\"frames\":%d,\"ir\":%d,\"ir_per_frame\":%.3f,\"ir_per_wire_byte\":%.4f,\"payload_bytes\":%d%s}\n", k, v, fr, ir, ir / fr, ir / wb, pb, (v == "stk") ? "" : sprintf(",\"anchor_over_stk\":%.4f", sp) > "/dev/stderr" }'
done 2>"$tmp/b6.json"
echo
cat "$tmp/b6.json"
