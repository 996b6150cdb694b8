#!/bin/bash
# B1 — ring link between stages (tests/bench/b1_ring_link.c; doc/benchmarks.md).
# Placement: main lcore 0 on CPU 0 (asleep), producer lcore 1 on CPU 1, consumer
# lcore 2 on CPU 0.
#
# B1_PROCS (default 5) separate processes: on this VM the raw anchor itself
# moves 2-4x from one process to the next (burst 1: 35-97 cycles/object,
# burst 32: 2-10), with the host's placement of the two vCPUs, so one process's
# ratio is one sample. The summary gives each process's lcp/raw ratio (the
# median of its per-repetition pairs) and their median.
set -eu
. "$(dirname "$0")/common.sh"

: "${B1_PROCS:=5}"
bench_need_cpus 2
bench_header B1 "ring link: cycles/object, cross lcore and same lcore ($B1_PROCS processes)"
bench_wait_quiet
tmp=$(mktemp -d /tmp/lcpb1.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
for p in $(seq 1 "$B1_PROCS"); do
	echo "---- process $p of $B1_PROCS"
	# shellcheck disable=SC2046
	bench_run "$BENCH_BUILDDIR/bench/b1_ring_link" $(bench_eal b1) --lcores=0@0,1@1,2@0 \
		-- --reps "$BENCH_REPS" --ms "$BENCH_MS" $BENCH_RT_OPT | tee "$tmp/p$p.out"
done
echo
echo "B1 cross lcore over $B1_PROCS processes: per process, the case's median cycles/object and ratio to raw (median of pairs)"
python3 - "$tmp"/p*.out <<'PY'
import json, statistics, sys
cases = ["raw", "lcp", "rawprod_rawstate", "rawprod_rawcall", "emit_rawcons", "rawctr_rawcons", "rawprod_worker", "rawprod_copy"]
per = {}  # (case, burst) -> [(median, ratio)]
for f in sys.argv[1:]:
    for line in open(f):
        if not line.startswith('{"bench":"B1"'):
            continue
        r = json.loads(line)
        if r["group"] != "cross" or r["case"] not in cases:
            continue
        per.setdefault((r["case"], r["burst"]), []).append(
            (r["median"], r.get("ratio_median_of_pairs", 1.0)))
print("%-16s %5s  %-44s  %s" % ("case", "burst", "cycles/object per process", "ratio per process -> median"))
for b in (1, 8, 32):
    for c in cases:
        v = per.get((c, b), [])
        if not v:
            continue
        cyc = " ".join("%.1f" % m for m, _ in v)
        rat = " ".join("%.2f" % r for _, r in v)
        med = statistics.median(r for _, r in v)
        print("%-16s %5d  %-44s  %s -> %.2f" % (c, b, cyc, rat if c != "raw" else "anchor", med))
        if c == "lcp":
            print(json.dumps({"bench": "B1", "group": "cross_procs", "case": "lcp", "burst": b,
                              "procs": len(v), "ratios": [round(r, 4) for _, r in v],
                              "ratio_median": round(med, 4), "target_ratio": 1.10,
                              "target_met_median": med <= 1.10,
                              "procs_met": sum(1 for _, r in v if r <= 1.10)}))
PY
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"
