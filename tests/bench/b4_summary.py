#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
# b4_summary.py — B4's tables from the per-process results b4.sh collected
# (doc/benchmarks.md "B4"). Input: raw.jsonl (one line per round x setting x
# pattern x size, from bench/b4_pools, with "round" added by b4.sh), cg.txt
# (callgrind: "b4.<setting>.<pattern>.s<size> objects get_fail Ir" per line),
# the number of rounds. A round's value for a case is the median of that
# process's gated repetitions; per case and setting this prints min / median /
# IQR over the rounds, and the median (min-max) of the per-round ratios to
# pool_mempool in the same round. Quantiles: linear interpolation (type 7, as
# bench_util.c). Every summary is also a JSON line.
import json
import sys
from collections import defaultdict

TARGET = 19.0  # "fragment allocation from a mempool 19x faster than rte_malloc"
ANCHOR = "mempool"


def quantile(v, q):
    s = sorted(v)
    if not s:
        return float("nan")
    pos = q * (len(s) - 1)
    i = int(pos)
    if i + 1 >= len(s):
        return s[-1]
    return s[i] + (pos - i) * (s[i + 1] - s[i])


def med(v):
    return quantile(v, 0.5)


def main():
    raw, cg, rounds = sys.argv[1], sys.argv[2], int(sys.argv[3])
    rows = [json.loads(line) for line in open(raw) if line.strip()]
    if not rows:
        print("b4: no results")
        return 1
    # (pattern, size) -> setting -> round -> row
    by = defaultdict(lambda: defaultdict(dict))
    settings, patterns, sizes = [], [], []
    for r in rows:
        for lst, k in ((settings, r["setting"]), (patterns, r["pattern"]), (sizes, r["size"])):
            if k not in lst:
                lst.append(k)
        by[(r["pattern"], r["size"])][r["setting"]][r["round"]] = r
    hz = rows[0]["tsc_hz"]
    placement = rows[0]["placement"]
    order = [ANCHOR] + [s for s in settings if s != ANCHOR]

    def ratios(case, a, b):
        """per-round value(a) / value(b), rounds where both ran"""
        ra, rb = by[case][a], by[case][b]
        return [ra[k]["median"] / rb[k]["median"] for k in sorted(ra) if k in rb and rb[k]["median"] > 0]

    print(f"B4 pool strategies: cycles per object (TSC {hz / 1e6:.1f} MHz), {rounds} rounds, "
          f"one process per setting and round; value per round = median of that process's "
          f"repetitions; ratio = median (min-max) of per-round ratios to {ANCHOR}")
    hdr = f"{'pattern':<10} {'size':>5} {'setting':<16} {'min':>10} {'median':>10} {'q1-q3':>21} " \
          f"{'ratio':>9} {'(min-max)':>19} {'rerun':>5} {'noisy':>5} {'retries':>9} {'sleeps/kobj':>11}"
    summ = []
    for pat in patterns:
        print()
        print(hdr)
        for size in sizes:
            case = (pat, size)
            for s in order:
                if s not in by[case]:
                    continue
                v = [x["median"] for x in by[case][s].values()]
                rr = ratios(case, s, ANCHOR) if s != ANCHOR else []
                rerun = sum(x["gate_reruns"] for x in by[case][s].values())
                noisy = sum(x["gate_noisy"] for x in by[case][s].values())
                retr = sum(x["get_retries"] for x in by[case][s].values())
                fails = sum(x["get_fail"] for x in by[case][s].values())
                nobj = sum(x["objects_per_rep"] * len(x["reps"]) for x in by[case][s].values())
                sleeps = sum(x["sleeps"] for x in by[case][s].values())
                skobj = 1e3 * sleeps / nobj if nobj else 0.0
                q1, q3 = quantile(v, 0.25), quantile(v, 0.75)
                rs = f"{med(rr):9.3f} ({min(rr):8.3f}-{max(rr):8.3f})" if rr else f"{'anchor':>9} {'':19}"
                print(f"{pat:<10} {size:>5} {s:<16} {min(v):10.2f} {med(v):10.2f} "
                      f"{q1:10.2f}-{q3:10.2f} {rs} {rerun:5d} {noisy:5d} {retr:9d} {skobj:11.2f}")
                j = {"bench": "B4", "summary": "case", "pattern": pat, "size": size, "setting": s,
                     "module": next(iter(by[case][s].values()))["module"],
                     "options": next(iter(by[case][s].values()))["options"],
                     "unit": "cycles/object", "tsc_hz": hz, "rounds": len(v),
                     "min": round(min(v), 3), "median": round(med(v), 3),
                     "q1": round(q1, 3), "q3": round(q3, 3), "iqr": round(q3 - q1, 3),
                     "max": round(max(v), 3), "gate_reruns": rerun, "gate_noisy": noisy,
                     "get_retries": retr, "get_fail": fails,
                     "sleeps_per_kobj": round(skobj, 3), "placement": placement}
                if rr:
                    j.update({"anchor": ANCHOR, "ratio_median_of_rounds": round(med(rr), 4),
                              "ratio_min": round(min(rr), 4), "ratio_max": round(max(rr), 4)})
                summ.append(j)

    if "rte_malloc" in settings:
        print()
        print(f"target: rte_malloc / mempool cycles per object >= {TARGET:.0f} "
              f"(median of per-round ratios, min-max)")
        for pat in patterns:
            for size in sizes:
                rr = ratios((pat, size), "rte_malloc", ANCHOR)
                if not rr:
                    continue
                m = med(rr)
                print(f"  {pat:<10} {size:>5} B: {m:8.2f} ({min(rr):.2f}-{max(rr):.2f})  "
                      f"{'met' if m >= TARGET else 'NOT met'}")
                summ.append({"bench": "B4", "summary": "target", "pattern": pat, "size": size,
                             "ratio": "rte_malloc/mempool", "median_of_rounds": round(m, 3),
                             "min": round(min(rr), 3), "max": round(max(rr), 3),
                             "target": TARGET, "target_met": m >= TARGET})
    if "malloc" in settings:
        for other in ("malloc_notrim", "malloc_trim0"):
            if other not in settings:
                continue
            print()
            print(f"glibc: {other} / malloc (same round; < 1: the mallopt setting is cheaper)")
            for pat in patterns:
                for size in sizes:
                    rr = ratios((pat, size), other, "malloc")
                    if rr:
                        print(f"  {pat:<10} {size:>5} B: {med(rr):8.3f} ({min(rr):.3f}-{max(rr):.3f})")
                        summ.append({"bench": "B4", "summary": "glibc", "pattern": pat,
                                     "size": size, "ratio": f"{other}/malloc",
                                     "median_of_rounds": round(med(rr), 4),
                                     "min": round(min(rr), 4), "max": round(max(rr), 4)})

    cgl = [line.split() for line in open(cg) if line.strip()]
    if cgl:
        print()
        print("callgrind: instructions per object (one lcore, the main lcore's cache for mempool)")
        print(f"{'setting':<16} {'pattern':<10} {'size':>5} {'objects':>9} {'Ir':>12} {'Ir/object':>10}")
        for c, objs, fails, ir in cgl:
            _, s, pat, sz = c.split(".")
            objs, ir = int(objs), int(ir)
            print(f"{s:<16} {pat:<10} {sz[1:]:>5} {objs:9d} {ir:12d} {ir / objs:10.1f}")
            summ.append({"bench": "B4", "summary": "callgrind", "setting": s, "pattern": pat,
                         "size": int(sz[1:]), "unit": "instructions/object", "objects": objs,
                         "ir": ir, "ir_per_object": round(ir / objs, 2),
                         "get_fail": int(fails)})
    print()
    for j in summ:
        print(json.dumps(j, separators=(",", ":")))
    return 0


if __name__ == "__main__":
    sys.exit(main())
