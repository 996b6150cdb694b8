#!/usr/bin/python3
"""b11.py — B11: burst x flush-timeout sweep on a cross-lcore link (BENCHMARKS.md).

The pipeline is conf/ab/burst_32.json (the demo feed: feedsim -> tcp -> ws on
lcore 1, metrics -> sink on lcore 2) with the ws -> metrics ring's batch module
set per case: batch_burst (dequeue N, no staging) and batch_timed (the producer
stages up to N or T us). Two loads, each a fresh lcpipe process per case:
  flat out      feedsim unlimited: messages/s delivered to the sink
  paced         feedsim at RATE msg/s: p50 / p99 latency (rx TSC -> metrics)
Cases run interleaved (every case once per round, REPS rounds, order rotated per
round); the table has the median and the min-max per case. No same-run anchor
applies to a sweep (BENCHMARKS.md: "find the knee"); batch_burst at N = 32 is the
reference row each ratio is taken against, within the same round.

usage: b11.py LCPIPE CONF_AB_DIR [--reps N] [--duration S] [--rate R] [--json FILE]
"""
import argparse
import copy
import json
import os
import statistics
import subprocess
import sys
import tempfile

BURSTS = [1, 8, 32, 64]
FLUSH = [None, 20, 200, 2000]  # None: batch_burst


def case_conf(base, burst, flush_us, rate, prefix):
    c = copy.deepcopy(base)
    c["eal"] = [a if not a.startswith("--file-prefix") else "--file-prefix=" + prefix for a in c["eal"]]
    c["engine"]["burst"] = burst
    c["engine"]["live"] = "off"
    if flush_us is None:
        c["strategies"] = {"batch": {"plugin": "batch_burst", "options": {"size": burst}}}
    else:
        c["strategies"] = {"batch": {"plugin": "batch_timed", "options": {"size": burst, "flush_us": flush_us}}}
    for s in c["stages"]:
        if s["name"] == "exchange":
            s["options"]["rate"] = rate
    return c


def run(lcpipe, conf, duration, tmp):
    path = os.path.join(tmp, "c.json")
    rep = os.path.join(tmp, "r.json")
    with open(path, "w") as f:
        json.dump(conf, f)
    if os.path.exists(rep):
        os.unlink(rep)
    p = subprocess.run([lcpipe, "run", path, "--duration", str(duration), "--report", rep, "--no-live"],
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=duration + 60)
    if p.returncode != 0 or not os.path.exists(rep):
        sys.stderr.write(p.stdout.decode(errors="replace")[-3000:])
        raise SystemExit("b11: lcpipe run failed (%d)" % p.returncode)
    with open(rep) as f:
        r = json.load(f)
    st = r["stages"]
    m = st["stats"]["counters"]
    return {
        "msgs_per_s": st["sink"]["in"] / r["duration_s"],
        "p50_us": m["lat_p50_ns"] / 1000.0,
        "p99_us": m["lat_p99_ns"] / 1000.0,
        "drops": sum(s["drops"] for s in st.values()) - sum(
            v for s in st.values() for k, v in s["drops_by_reason"].items() if k.endswith("drop_rx_shutdown")),
        "gaps": m["seq_gaps"],
    }


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("lcpipe")
    ap.add_argument("confdir")
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--duration", type=float, default=2.0)
    ap.add_argument("--rate", type=int, default=200000)
    ap.add_argument("--json")
    a = ap.parse_args()
    with open(os.path.join(a.confdir, "burst_32.json")) as f:
        base = json.load(f)
    cases = [(b, t) for b in BURSTS for t in FLUSH]
    res = {(load, c): [] for load in ("flat", "paced") for c in cases}
    with tempfile.TemporaryDirectory(prefix="b11.") as tmp:
        for rnd in range(a.reps):
            order = cases[rnd % len(cases):] + cases[:rnd % len(cases)]
            for c in order:
                for load, rate in (("flat", 0), ("paced", a.rate)):
                    conf = case_conf(base, c[0], c[1], rate, "lcpbench-b11-%d" % os.getpid())
                    res[(load, c)].append(run(a.lcpipe, conf, a.duration, tmp))
            print("b11: round %d/%d done" % (rnd + 1, a.reps), flush=True)
    out = []
    print("\nB11 burst x flush sweep, %d rounds of %.1f s per case; flat out, and paced at %d msg/s"
          % (a.reps, a.duration, a.rate))
    print("%-6s %-10s | %14s %9s | %10s %10s | %s" % ("burst", "flush_us", "flat Mmsg/s", "vs 32/-",
                                                      "paced p50", "paced p99", "drops (flat/paced)"))
    ref = res[("flat", (32, None))]
    for c in cases:
        fl = res[("flat", c)]
        pa = res[("paced", c)]
        mps = statistics.median(x["msgs_per_s"] for x in fl)
        ratio = statistics.median(x["msgs_per_s"] / y["msgs_per_s"] for x, y in zip(fl, ref))
        p50 = statistics.median(x["p50_us"] for x in pa)
        p99 = statistics.median(x["p99_us"] for x in pa)
        drops = (sum(x["drops"] for x in fl), sum(x["drops"] for x in pa))
        print("%-6d %-10s | %8.3f %5.2f%% %8.2fx | %8.1fus %8.1fus | %d/%d" % (
            c[0], "-" if c[1] is None else c[1], mps / 1e6,
            100.0 * (max(x["msgs_per_s"] for x in fl) - min(x["msgs_per_s"] for x in fl)) / mps,
            ratio, p50, p99, drops[0], drops[1]))
        row = {"bench": "b11", "burst": c[0], "flush_us": c[1], "batch": "batch_burst" if c[1] is None else "batch_timed",
               "flat_msgs_per_s_median": mps, "flat_ratio_vs_burst32": ratio,
               "paced_rate": a.rate, "paced_p50_us_median": p50, "paced_p99_us_median": p99,
               "drops_flat": drops[0], "drops_paced": drops[1], "rounds": a.reps}
        out.append(row)
        print(json.dumps(row))
    if a.json:
        with open(a.json, "w") as f:
            json.dump(out, f, indent=1)


if __name__ == "__main__":
    main()
