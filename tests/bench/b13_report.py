#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""b13_report.py RUNS_TSV TSC_HZ -- the table of B13 (tests/bench/b13.sh; doc/benchmarks.md "B13").

RUNS_TSV: round, size, case, run base per line. Per run:
  kernel, kernel_min  BASE.client.json, BASE.server.json (b12_kernel_client, b12_feed_server):
      cycles/msg = the client's getrusage user+sys x TSC_HZ / messages; "+srv" adds the
      server's; messages/s = messages / the server's wall time (first send to the client's close)
  lcpipe_*            BASE.report.json, BASE.log, BASE.sample.json (receiver; the sample is
      b12_report.py sample's), BASE.snd.report.json (sender):
      cycles/msg = the receiver's worker on-CPU busy cycles in the sampled window (its
      thread's on-CPU time from schedstat x the engine's busy share, as B12) / the
      messages in the window; "wall busy" = the report's lcores.1.busy_cycles (TSC,
      the whole run, a preempted turn counted whole) / metrics msgs; "+srv" adds the
      sender's report busy cycles per message to "wall busy"; messages/s = metrics' rate
      over (first burst, last burst] from its stop line in BASE.log
Checks every run (all messages, ticks, in sequence), prints medians over rounds of the
figures and of the per-round ratios lcpipe / kernel_min and lcpipe / kernel (receivers
alone), the targets of issue 18, and one JSON line per result; exit 1 when a check fails.
"""
import json
import os
import re
import statistics as stat
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from b12_report import window  # noqa: E402

UNIT = {"": 1.0, "k": 1e3, "M": 1e6, "G": 1e9}
# issue 18: lcpipe_replay's receiver cycles/msg and ratio to kernel_min, per size
TARGETS = {64: (130.0, 1.0), 1024: (None, 0.5)}


def line_json(path):
    with open(path) as f:
        return json.loads(f.readline())


def kernel_run(base, hz):
    srv, kc = line_json(base + ".server.json"), line_json(base + ".client.json")
    f = {"msgs": kc["msgs"],
         "cyc": (kc["utime_us"] + kc["stime_us"]) * 1e-6 * hz / kc["msgs"],
         "srv": (srv["utime_us"] + srv["stime_us"]) * 1e-6 * hz / srv["msgs"],
         "rate": srv["msgs"] / (srv["wall_ns"] * 1e-9)}
    f["both"] = f["cyc"] + f["srv"]
    f["wall"] = f["cyc"]
    ok = kc["ok"] and srv.get("complete") and kc["msgs"] == srv["msgs"] and kc["seq_gaps"] == 0 and \
        kc["seq_in_order"] == srv["msgs"] - srv["symbols"]
    why = "client ok=%s msgs %d of %d, in order %d, gaps %d" % (kc["ok"], kc["msgs"], srv["msgs"], kc["seq_in_order"],
                                                              kc["seq_gaps"])
    return f, ok, why


def lcpipe_run(base, hz):
    rep = json.load(open(base + ".report.json"))
    snd = json.load(open(base + ".snd.report.json"))
    mc = rep["stages"]["metrics"]["counters"]
    sent = snd["stages"]["feed"]["counters"]["msgs"]
    msgs = mc["msgs"]
    f = {"msgs": msgs, "wall": rep["lcores"]["1"]["busy_cycles"] / msgs if msgs else float("nan"),
         "srv": snd["lcores"]["1"]["busy_cycles"] / msgs if msgs else float("nan"), "rate": float("nan")}
    f["both"] = f["wall"] + f["srv"]
    samp = json.load(open(base + ".sample.json"))
    if samp.get("error") or not samp.get("B"):
        return f, False, "sampler: %s" % samp.get("error")
    w = window(samp, hz)
    f["cyc"] = sum(l["busy_on_cpu"] for l in w["lcores"].values()) / w["msgs"] if w["msgs"] else float("nan")
    f["off_cpu"] = w["lcores"][1]["off_cpu_share"] if 1 in w["lcores"] else float("nan")
    m = re.search(r"\[metrics:metrics\] (\d+) messages \(([\d.]+) ([kMG]?)msg/s\)", open(base + ".log").read())
    if m:
        f["rate"] = float(m.group(2)) * UNIT[m.group(3)]
    ok = w["msgs"] == msgs and msgs == sent and msgs > 0 and mc["ticks"] == msgs and mc["seq_gaps"] == 0 and \
        mc["seq_in_order"] == msgs - mc["symbols"] and mc["sessions"] == 1
    why = "window msgs %d, metrics msgs %d of %d sent, ticks %d, gaps %d, in order %d, symbols %d, sessions %d" % (
        w["msgs"], msgs, sent, mc["ticks"], mc["seq_gaps"], mc["seq_in_order"], mc["symbols"], mc["sessions"])
    return f, ok, why


def main(argv):
    tsv, hz = argv[0], float(argv[1])
    res = {}  # (size, case) -> {round: figures}
    bad = 0
    for line in open(tsv):
        if not line.strip():
            continue
        r, size, case, base = line.rstrip("\n").split("\t")
        try:
            f, ok, why = (kernel_run if case.startswith("kernel") else lcpipe_run)(base, hz)
        except (OSError, KeyError, ValueError) as e:
            print("FAIL: %s: %s" % (base, e))
            bad += 1
            continue
        if not ok:
            print("FAIL: %s: %s" % (base, why))
            bad += 1
            continue
        res.setdefault((int(size), case), {})[int(r)] = f
    jl = []
    print()
    print("%5s %-14s %4s %10s %14s %10s %10s %10s %9s %9s %8s" % ("size", "case", "runs", "cyc/msg", "(min-max)",
                                                                    "wall busy", "+srv", "Mmsg/s", "x k_min", "x kernel",
                                                                    "off-CPU"))
    for (size, case) in sorted(res, key=lambda k: (k[0], k[1])):
        runs = res[(size, case)]
        med = {k: stat.median(f[k] for f in runs.values()) for k in ("cyc", "wall", "both", "rate")}
        ratios = {}
        for anchor in ("kernel_min", "kernel"):
            a = res.get((size, anchor), {})
            v = [runs[r]["cyc"] / a[r]["cyc"] for r in runs if r in a]
            ratios[anchor] = stat.median(v) if v and not case.startswith("kernel") else None
        cyc = [f["cyc"] for f in runs.values()]
        off = [f["off_cpu"] for f in runs.values() if "off_cpu" in f]
        print("%5d %-14s %4d %10.1f %14s %10.1f %10.1f %10.2f %9s %9s %8s" % (
            size, case, len(runs), med["cyc"], "(%.0f-%.0f)" % (min(cyc), max(cyc)), med["wall"], med["both"],
            med["rate"] / 1e6,
            "%.2f" % ratios["kernel_min"] if ratios["kernel_min"] is not None else "",
            "%.2f" % ratios["kernel"] if ratios["kernel"] is not None else "",
            "%.0f %%" % (100 * stat.median(off)) if off else ""))
        jl.append({"bench": "B13", "case": "%s.%d" % (case, size), "size": size, "runs": len(runs),
                   "cycles_per_msg": med["cyc"], "wall_busy_cycles_per_msg": med["wall"],
                   "cycles_per_msg_with_sender": med["both"],
                   "msgs_per_s": med["rate"], "ratio_kernel_min": ratios["kernel_min"],
                   "ratio_kernel": ratios["kernel"],
                   "per_round": {str(r): {k: round(v, 1) for k, v in f.items()} for r, f in sorted(runs.items())}})
    print("cyc/msg: the receiver alone, CPU time (kernel: the client's getrusage; lcpipe: the worker's on-CPU busy "
          "cycles in the sampled window); wall busy: lcpipe's report busy cycles (TSC); +srv: the sender's added "
          "(kernel: getrusage; lcpipe: to wall busy); x k_min, x kernel: medians of per-round ratios of cyc/msg; "
          "off-CPU: the lcpipe worker's runqueue wait / (on-CPU + wait) in the window")
    for size, (cmax, rmax) in sorted(TARGETS.items()):
        j = next((j for j in jl if j["case"] == "lcpipe_replay.%d" % size), None)
        if j is None:
            continue
        parts = []
        if cmax is not None:
            parts.append("%.1f cycles/msg (target <= %.0f: %s)" % (j["cycles_per_msg"], cmax,
                                                                  "met" if j["cycles_per_msg"] <= cmax else "not met"))
        if j["ratio_kernel_min"] is not None:
            parts.append("%.2fx kernel_min (target <= %.1fx: %s)" % (j["ratio_kernel_min"], rmax,
                                                                     "met" if j["ratio_kernel_min"] <= rmax else "not met"))
        print("target at %d B: lcpipe_replay %s" % (size, ", ".join(parts)))
    for j in jl:
        print(json.dumps(j))
    return 1 if bad else 0


if __name__ == "__main__":
    if len(sys.argv) != 3:
        print(__doc__)
        sys.exit(2)
    sys.exit(main(sys.argv[1:]))
