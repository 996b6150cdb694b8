#!/usr/bin/python3
"""b13_scale.py — helpers of b13_scale.sh (B13 scale-out, doc/benchmarks.md).

  b13_scale.py conf SRC OUT LANES COUNT SIZE PREFIX LCORES
      conf/scaleout.json with lanes 1..LANES only (LANES 1: the l1_* stages),
      COUNT messages of SIZE bytes per lane, the EAL file prefix and --lcores
  b13_scale.py sample --pid P --log LOG --lanes N --out JSON [--timeout S]
      once LOG says "[lcpipe] running": the wall clock and each worker thread's
      /proc schedstat (rte-worker-i runs lane i; taken before the workers are
      launched); again for lane i when its ws
      stage logs the feed's close 1000; JSON out
  b13_scale.py anchor KIND SECONDS CPU...
      the same-run anchor: one process per CPU (pinned), all at once, running
      KIND for SECONDS: alu (an integer loop: what two CPUs give a job that
      shares nothing, not even memory) or mem (copies of a 64 MiB buffer, past
      the L3: DRAM bandwidth); prints {"cpus": [...], "rates": [per CPU]}
  b13_scale.py summary RUNS.TSV COUNT TARGET
      RUNS.TSV lines: PAIR CASE BASE (CASE 1lane or 2lanes; BASE.report.json,
      BASE.log, BASE.sample.json): per-run checks, per-pair ratios, the table
      and one JSON line per case and for the ratio
"""
import json
import os
import re
import statistics as stat
import sys
import time

UNIT = {"": 1.0, "k": 1e3, "M": 1e6, "G": 1e9}


def cmd_conf(argv):
    src, out, lanes, count, size, prefix, lcores = argv
    lanes, count, size = int(lanes), int(count), int(size)
    c = json.load(open(src))
    keep = tuple("l%d_" % i for i in range(1, lanes + 1))
    c["stages"] = [s for s in c["stages"] if s["name"].startswith(keep)]
    c["links"] = [l for l in c["links"] if l.startswith(keep)]
    eal = [a for a in c["eal"] if not a.startswith(("--file-prefix", "--lcores"))]
    c["eal"] = eal + ["--lcores=" + lcores, "--file-prefix=" + prefix, "--log-level=lib.eal:error"]
    c["engine"]["duration"] = 0
    c["name"] = "B13 scale-out: %d lane(s)" % lanes
    for s in c["stages"]:
        if s["plugin"] == "feedsim":
            s["options"].update({"count": count, "sizes": "%d:1" % size})
    json.dump(c, open(out, "w"), indent=1)
    return 0


def schedstat(pid):
    """{thread name: (on-CPU ns, runqueue wait ns)}"""
    r = {}
    try:
        for tid in os.listdir("/proc/%d/task" % pid):
            try:
                name = open("/proc/%d/task/%s/comm" % (pid, tid)).read().strip()
                run, wait = open("/proc/%d/task/%s/schedstat" % (pid, tid)).read().split()[:2]
            except OSError:
                continue
            r[name] = (int(run), int(wait))
    except OSError:
        pass
    return r


def cmd_sample(argv):
    a = {}
    i = 0
    while i < len(argv):
        a[argv[i].lstrip("-")] = argv[i + 1]
        i += 2
    pid, log, lanes, out = int(a["pid"]), a["log"], int(a["lanes"]), a["out"]
    deadline = time.monotonic() + float(a.get("timeout", 300))
    res = {"lanes": {}}

    def text():
        try:
            return open(log, errors="replace").read()
        except OSError:
            return ""

    def alive():
        return os.path.exists("/proc/%d" % pid)

    # the worker threads' counts from before their launch (EAL creates them
    # waiting, before the stages' init and feedsim's rendering), so their
    # on-CPU time counts from the first turn; the wall clock from "running"
    workers = ["rte-worker-%d" % i for i in range(1, lanes + 1)]
    s0 = {}
    while True:
        if not s0:
            s = schedstat(pid)
            if all(w in s for w in workers):
                s0 = s
        if s0 and "[lcpipe] running" in text():
            break
        if not alive() or time.monotonic() > deadline:
            res["error"] = "lcpipe did not start"
            json.dump(res, open(out, "w"))
            return 1
        time.sleep(0.002)
    t0 = time.monotonic()
    res["start"] = {"t": t0, "threads": s0}
    left = set(range(1, lanes + 1))
    while left:
        t = text()
        now = time.monotonic()
        for i in sorted(left):
            if re.search(r"\[ws:l%d_feed\] .*server closed with 1000" % i, t):
                s = schedstat(pid)
                w = "rte-worker-%d" % i
                res["lanes"][str(i)] = {"t": now, "wall_s": now - t0,
                                       "run_s": (s[w][0] - s0[w][0]) * 1e-9 if w in s and w in s0 else None,
                                       "wait_s": (s[w][1] - s0[w][1]) * 1e-9 if w in s and w in s0 else None}
                left.discard(i)
        if left and (not alive() or now > deadline):
            res["error"] = "lane(s) %s did not close with 1000" % sorted(left)
            json.dump(res, open(out, "w"))
            return 1
        time.sleep(0.005)
    json.dump(res, open(out, "w"))
    return 0


def anchor_child(kind, seconds, cpu, wfd):
    os.sched_setaffinity(0, {cpu})
    n = 0
    if kind == "alu":
        x = 1
        t0 = time.monotonic()
        while True:
            for _ in range(20000):
                x = (x * 1103515245 + 12345) & 0xffffffff
            n += 20000
            t = time.monotonic() - t0
            if t >= seconds:
                break
    else:
        src = bytearray(64 << 20)
        dst = bytearray(64 << 20)
        dst[:] = src  # touch every page first
        t0 = time.monotonic()
        while True:
            dst[:] = src
            n += len(src)
            t = time.monotonic() - t0
            if t >= seconds:
                break
    os.write(wfd, ("%r\n" % (n / t)).encode())
    os._exit(0)


def cmd_anchor(argv):
    kind, seconds, cpus = argv[0], float(argv[1]), [int(c) for c in argv[2:]]
    pipes, kids = [], []
    for c in cpus:
        r, w = os.pipe()
        pid = os.fork()
        if pid == 0:
            os.close(r)
            anchor_child(kind, seconds, c, w)
        os.close(w)
        pipes.append(r)
        kids.append(pid)
    rates = []
    for r, pid in zip(pipes, kids):
        with os.fdopen(r) as f:
            rates.append(float(f.read().strip() or "nan"))
        os.waitpid(pid, 0)
    print(json.dumps({"kind": kind, "cpus": cpus, "rates": rates}))
    return 0


def lane_figures(rep, log, samp, i):
    """one lane's figures and checks: (dict, ok, why)"""
    st = rep["stages"]
    m = st["l%d_stats" % i]["counters"]
    sent = st["l%d_exchange" % i]["counters"]["msgs"]
    f = {"msgs": m["msgs"], "rate": float("nan")}
    # metrics' stop line: msg/s to 3 digits; MB/s x 1e6 / bytes per message
    # (every message has the same size) gives more
    mm = re.search(r"\[metrics:l%d_stats\] (\d+) messages \(([\d.]+) ([kMG]?)msg/s\), ([\d.]+) MB/s" % i, log)
    if mm and m["msgs"] > 0:
        f["rate"] = float(mm.group(4)) * 1e6 / (m["bytes"] / m["msgs"])
        f["rate_line"] = float(mm.group(2)) * UNIT[mm.group(3)]
    ls = samp.get("lanes", {}).get(str(i), {})
    if ls.get("run_s") is not None and ls["wall_s"] > 0:
        f["on_cpu"] = ls["run_s"] / ls["wall_s"]
        f["off_cpu"] = ls["wait_s"] / (ls["run_s"] + ls["wait_s"]) if ls["run_s"] + ls["wait_s"] > 0 else 0.0
        # messages per second of the worker's on-CPU time from "running" to the close
        f["rate_cpu"] = m["msgs"] / ls["run_s"] if ls["run_s"] > 0 else float("nan")
    lc = rep["lcores"].get(str(i), {})
    f["wall_busy"] = lc.get("busy_cycles", 0) / m["msgs"] if m["msgs"] else float("nan")
    ok = (m["msgs"] == sent and m["ticks"] == m["msgs"] and m["seq_gaps"] == 0 and m["sessions"] == 1
          and f["rate"] == f["rate"])
    why = "l%d: metrics msgs %d of %d sent, ticks %d, gaps %d, sessions %d, rate %s" % (
        i, m["msgs"], sent, m["ticks"], m["seq_gaps"], m["sessions"], f["rate"])
    return f, ok, why


def cmd_summary(argv):
    runs_tsv, count, target = argv[0], int(argv[1]), float(argv[2])
    anchors = {}
    if len(argv) > 3 and os.path.exists(argv[3]):
        for line in open(argv[3]):
            pair, j = line.split("\t", 1)
            a = json.loads(j)
            anchors.setdefault(int(pair), {}).setdefault(a["kind"], {})[len(a["cpus"])] = a["rates"]
    res = {}
    bad = 0
    for line in open(runs_tsv):
        pair, case, base = line.split()
        try:
            rep = json.load(open(base + ".report.json"))
            log = open(base + ".log", errors="replace").read()
            samp = json.load(open(base + ".sample.json"))
        except (OSError, ValueError) as e:
            print("FAIL: %s: %s" % (base, e))
            bad += 1
            continue
        n = 1 if case == "1lane" else 2
        lanes = {}
        ok_all = rep.get("rings") == [] and not samp.get("error")
        why = [] if ok_all else ["rings %s, sampler %s" % (rep.get("rings"), samp.get("error"))]
        for i in range(1, n + 1):
            f, ok, w = lane_figures(rep, log, samp, i)
            ok_all = ok_all and ok and f["msgs"] == count
            if not ok or f["msgs"] != count:
                why.append(w)
            lanes[i] = f
        if not ok_all:
            print("FAIL: pair %s %s: %s" % (pair, case, "; ".join(why)))
            bad += 1
            continue
        res.setdefault(int(pair), {})[case] = lanes

    pairs = sorted(p for p in res if "1lane" in res[p] and "2lanes" in res[p])
    print()
    print("%4s %11s %11s %11s %9s %8s %7s %7s  %s" % ("pair", "1 lane", "2: lane 1", "2: lane 2", "ratio",
                                                     "cpu-norm", "alu", "mem", "on-CPU share (1 lane | lane 1, lane 2)"))
    ratios, cratios = [], []
    aratios = {"alu": [], "mem": []}
    for p in pairs:
        a, b = res[p]["1lane"], res[p]["2lanes"]
        r = (b[1]["rate"] + b[2]["rate"]) / a[1]["rate"]
        ratios.append(r)
        cr = float("nan")
        if all("rate_cpu" in x for x in (a[1], b[1], b[2])):
            cr = (b[1]["rate_cpu"] + b[2]["rate_cpu"]) / a[1]["rate_cpu"]
            cratios.append(cr)
        ar = {}
        for k in ("alu", "mem"):
            x = anchors.get(p, {}).get(k, {})
            ar[k] = sum(x[2]) / x[1][0] if 1 in x and 2 in x and x[1][0] > 0 else float("nan")
            if ar[k] == ar[k]:
                aratios[k].append(ar[k])
        print("%4d %11.3f %11.3f %11.3f %9.3f %8.3f %7.3f %7.3f  %s | %s, %s" % (
            p, a[1]["rate"] / 1e6, b[1]["rate"] / 1e6, b[2]["rate"] / 1e6, r, cr, ar["alu"], ar["mem"],
            *("%3.0f %%" % (100 * x.get("on_cpu", float("nan"))) for x in (a[1], b[1], b[2]))))
    print("(Mmsg/s: each lane's metrics rate over its first to last burst; ratio: (lane 1 + lane 2) / 1 lane; "
          "cpu-norm: the same with each lane's messages per second of its worker's on-CPU time, "
          "from 'running' to its close; alu, mem: the anchors' (CPU 0 + CPU 1 at once) / CPU 0 alone, "
          "measured just before the pair; on-CPU share: that time / the wall time)")
    if not pairs:
        print("B13s: no complete pair")
        return 1
    med = stat.median(ratios)
    q = stat.quantiles(ratios, n=4) if len(ratios) >= 2 else [med, med, med]
    one = [res[p]["1lane"][1]["rate"] for p in pairs]
    l1 = [res[p]["2lanes"][1]["rate"] for p in pairs]
    l2 = [res[p]["2lanes"][2]["rate"] for p in pairs]
    print()
    print("ratio, %d pairs: min %.3f, median %.3f, max %.3f (IQR %.3f-%.3f); target >= %.1f: %s" % (
        len(ratios), min(ratios), med, max(ratios), q[0], q[2], target, "met" if med >= target else "not met"))
    if cratios:
        print("cpu-normalised ratio: min %.3f, median %.3f, max %.3f" % (min(cratios), stat.median(cratios),
                                                                       max(cratios)))
    for k in ("alu", "mem"):
        if aratios[k]:
            print("anchor %s ratio: min %.3f, median %.3f, max %.3f" % (k, min(aratios[k]), stat.median(aratios[k]),
                                                                     max(aratios[k])))
    print("Mmsg/s medians: 1 lane %.3f; 2 lanes: lane 1 %.3f, lane 2 %.3f, sum %.3f" % (
        stat.median(one) / 1e6, stat.median(l1) / 1e6, stat.median(l2) / 1e6,
        stat.median([x + y for x, y in zip(l1, l2)]) / 1e6))
    for case, lanes in (("1lane", (1,)), ("2lanes", (1, 2))):
        j = {"bench": "B13s", "case": case, "pairs": len(pairs)}
        for i in lanes:
            v = [res[p][case][i] for p in pairs]
            j["lane%d_msgs_per_s" % i] = stat.median(x["rate"] for x in v)
            j["lane%d_msgs_per_s_min" % i] = min(x["rate"] for x in v)
            j["lane%d_msgs_per_s_max" % i] = max(x["rate"] for x in v)
            j["lane%d_on_cpu" % i] = stat.median(x.get("on_cpu", float("nan")) for x in v)
            j["lane%d_wall_busy_cycles_per_msg" % i] = stat.median(x["wall_busy"] for x in v)
        print(json.dumps(j))
    print(json.dumps({"bench": "B13s", "case": "ratio", "pairs": len(pairs), "min": min(ratios), "median": med,
                      "max": max(ratios), "q1": q[0], "q3": q[2], "per_pair": [round(x, 4) for x in ratios],
                      "cpu_normalised_median": stat.median(cratios) if cratios else None,
                      "anchor_alu_median": stat.median(aratios["alu"]) if aratios["alu"] else None,
                      "anchor_mem_median": stat.median(aratios["mem"]) if aratios["mem"] else None,
                      "target": target, "met": med >= target}))
    return 1 if bad else 0


def main(argv):
    if len(argv) < 2:
        print(__doc__)
        return 2
    cmd = {"conf": cmd_conf, "sample": cmd_sample, "anchor": cmd_anchor, "summary": cmd_summary}.get(argv[1])
    if cmd is None:
        print(__doc__)
        return 2
    return cmd(argv[2:])


if __name__ == "__main__":
    sys.exit(main(sys.argv))
