#!/bin/bash
# B1 — ring link between stages (tests/bench/b1_ring_link.c; doc/benchmarks.md).
# Placement: main lcore 0 on CPU 0 (asleep), producer lcore 1 on CPU 1, consumer
# lcore 2 on CPU 0.
set -eu
. "$(dirname "$0")/common.sh"

bench_need_cpus 2
bench_header B1 "ring link: cycles/object, cross lcore and same lcore"
bench_wait_quiet
# shellcheck disable=SC2046
bench_run "$BENCH_BUILDDIR/bench/b1_ring_link" $(bench_eal b1) --lcores=0@0,1@1,2@0 \
	-- --reps "$BENCH_REPS" --ms "$BENCH_MS" $BENCH_RT_OPT
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"
