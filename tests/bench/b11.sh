#!/bin/bash
# B11: burst x flush-timeout sweep on the ws -> metrics ring of conf/ab/burst_32.json
# (bench/b11.py says how). Runs the built lcpipe on two worker lcores; lcore 2
# shares CPU 0 with the main lcore (a 2-CPU machine has no third CPU).
# Knobs: BENCH_B11_REPS (default 3), BENCH_B11_S (seconds per case, default 2),
#        BENCH_B11_RATE (paced load, msg/s, default 200000).
. "$(dirname "$0")/common.sh"
top_builddir=${top_builddir:-$BENCH_BUILDDIR/..}
top_srcdir=${top_srcdir:-$(cd "$(dirname "$0")/../.." && pwd)}
lcpipe=$top_builddir/framework/lcpipe
[ -x "$lcpipe" ] || { echo "b11: $lcpipe not built"; exit 77; }
bench_need_cpus 2 || exit 77
echo "B11: $(nproc) CPUs; placement: lcore 1 = CPU 1, lcore 2 and main = CPU 0"
exec python3 "$top_srcdir/tests/bench/b11.py" "$lcpipe" "$top_srcdir/conf/ab" \
	--reps "${BENCH_B11_REPS:-3}" --duration "${BENCH_B11_S:-2}" --rate "${BENCH_B11_RATE:-200000}" \
	--json "${BENCH_BUILDDIR}/bench-b11.json"
