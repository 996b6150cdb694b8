#!/bin/bash
# B2 — stage dispatch (tests/bench/b2_dispatch.c; doc/benchmarks.md), with the
# external anchor `dpdk-test graph_perf_autotest` run before and after it
# (D B D), same placement: main lcore 0 on CPU 0, the measured lcore 1 on CPU 1.
#
# What graph_perf_autotest prints (DPDK 22.11 lib/graph/graph_stats.c): per node,
# `calls` and `objs` are totals since the graph was created; `objs/call` and
# `cycles/call` are integer-truncated deltas over the ~1 s window between two
# rte_graph_cluster_stats_get() calls; `objs/sec(10E6)` is the window's objects
# divided by the window's *whole* seconds (1). `cycles/call` is rdtsc around
# node->process() only: the node's own work plus one rdtsc, not the walk. So two
# figures per node call come out of it:
#   process-only   median cycles/call of the 4 worker nodes
#   walk-inclusive TSC Hz x 1 s / sum over nodes of (objs/sec x 1e6 / objs/call),
#                  i.e. the lcore's cycles per node call, walk and stats included
#                  (approximate: the window is 1 s plus the stats call)
# for test cases graph_hr_4s_1n_1src_1snk (burst 256) and ..._brst_one (burst 1):
# source -> 4 workers -> sink, one lcore.
set -eu
. "$(dirname "$0")/common.sh"

bench_need_cpus 2
bench_header B2 "stage dispatch: N pass-through stages on one lcore, vs rte_graph"
: "${BENCH_DPDK_TEST:=$(command -v dpdk-test || true)}"
# dpdk-test runs the test named by $DPDK_TEST in its environment and exits
# (meson's way); the path configure found must not reach it under that name
unset DPDK_TEST
bench_tmp

run_dpdk_test() { # i
	if [ -z "$BENCH_DPDK_TEST" ] || [ ! -x "$BENCH_DPDK_TEST" ]; then
		echo "dpdk-test not found (Debian package dpdk-dev): the external anchor is skipped"
		return 0
	fi
	echo "+ DPDK_TEST=graph_perf_autotest $BENCH_DPDK_TEST --no-huge -m 512 --no-pci --no-shconf -l 0,1 --file-prefix=lcpbench-gp$1-$$"
	DPDK_TEST=graph_perf_autotest nice -n "$BENCH_NICE" "$BENCH_DPDK_TEST" --no-huge -m 512 \
		--no-pci --no-shconf -l 0,1 --file-prefix="lcpbench-gp$1-$$" </dev/null >"$tmp/gp$1.txt" 2>&1 || true
	if ! grep -q 'TestCase \[ *1\]' "$tmp/gp$1.txt"; then
		echo "dpdk-test graph_perf_autotest did not run its cases; its output ends with:"
		tail -n 15 "$tmp/gp$1.txt"
		return 0
	fi
	# the two linear-chain cases, as printed
	awk '/^\+---/ { blk = blk $0 "\n"; next } /^\|/ { blk = blk $0 "\n"; next }
	     /TestCase \[ *[01]\]/ { printf "%s%s\n", blk, $0 } /TestCase/ { blk = "" }' "$tmp/gp$1.txt"
}

bench_wait_quiet
run_dpdk_test 1
# shellcheck disable=SC2046
bench_run "$BENCH_BUILDDIR/bench/b2_dispatch" $(bench_eal b2) --lcores=0@0,1@1 \
	-- --reps "$BENCH_REPS" --ms "$BENCH_MS" $BENCH_RT_OPT | tee "$tmp/b2.txt"
run_dpdk_test 2
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"

[ -f "$tmp/gp1.txt" ] || exit 0
hz=$(sed -n 's/.*TSC \([0-9.]*\) MHz.*/\1/p' "$tmp/b2.txt" | head -n1)
hz=${hz:-2100}
echo
echo "dpdk-test graph_perf_autotest (source -> 4 workers -> sink), TSC $hz MHz, before (1) and after (2) b2_dispatch"
printf "%-4s %-40s %5s %22s %26s\n" run case burst "process-only cyc/call" "walk-incl. cyc/node call"
for i in 1 2; do
	[ -f "$tmp/gp$i.txt" ] || continue
	awk -F'|' -v run="$i" -v mhz="$hz" '
	function flush(name,   burst, n, j, k, t, med, walk) {
		burst = (name ~ /brst_one/) ? 1 : 256
		n = nw; for (j = 1; j <= n; j++) for (k = j + 1; k <= n; k++) if (w[k] < w[j]) { t = w[j]; w[j] = w[k]; w[k] = t }
		med = n ? ((n % 2) ? w[(n + 1) / 2] : (w[n / 2] + w[n / 2 + 1]) / 2) : 0
		walk = calls > 0 ? mhz * 1e6 / calls : 0
		printf "%-4s %-40s %5d %22.1f %26.1f\n", run, name, burst, med, walk
		printf "{\"bench\":\"B2\",\"case\":\"dpdk_test_graph_perf\",\"run\":%d,\"test\":\"%s\",\"burst\":%d,\"n_stages\":4,\"calls_per_walk\":6,\"unit\":\"cycles/node-call\",\"tsc_hz\":%.0f,\"process_only_median\":%.1f,\"walk_inclusive\":%.2f,\"placement\":{\"main\":{\"lcore\":0,\"cpus\":\"0\"},\"lcore1\":\"1\"}}\n", run, name, burst, mhz * 1e6, med, walk > "/dev/stderr"
	}
	/^\|test_graph_perf_/ {
		gsub(/ /, "", $2)
		if ($2 ~ /worker/) w[++nw] = $8 + 0
		if ($6 + 0 > 0) calls += ($7 * 1e6) / ($6 + 0)
		next
	}
	/TestCase \[ *[01]\]/ { flush($0 ~ /brst_one/ ? "graph_hr_4s_1n_1src_1snk_brst_one" : "graph_hr_4s_1n_1src_1snk") }
	/TestCase/ { nw = 0; calls = 0 }
	' "$tmp/gp$i.txt" 2>"$tmp/gp$i.json"
done
echo
cat "$tmp"/gp*.json
