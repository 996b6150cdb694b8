#!/usr/bin/python3
"""soak.py — reconnect continuously for a set time; report memory over time.

The main job (conf/demo.json) with the simulator closing every client after
--per-session messages (close 1000) and the ws stage re-opening after
--reconnect-ms: a new TCP connection, handshake, subscription and session every
few milliseconds for --seconds. Every --interval seconds it asks the running
lcpipe, over DPDK telemetry (/lcpipe/memory, /lcpipe/stage,feed), for the
process's resident set, the objects in use in every mempool and stage pool,
and the ws stage's opens and messages, and prints one line per sample (also
written as CSV). At the end:

  * RSS: the first sample after the warm-up (--warmup seconds) against the
    largest one after it; the run FAILS if RSS grew by more than --rss-slack-kb;
  * pools and mempools: in use at every sample (they move with the traffic in
    flight); the run FAILS if the largest value in the last third of the
    samples exceeds the largest of the first third (after the warm-up) by more
    than --pool-slack objects, i.e. when use creeps upward;
  * the exit report: leaked_objects must be 0, every session restarts the
    sequences (seq_resyncs), no gap, no duplicate.

Not part of `make check` (it runs for minutes); `make -C tests soak
SOAK_SECONDS=600`. Writes soak.csv and soak.json in --out.
"""
import argparse
import csv
import json
import os
import socket
import subprocess
import sys
import tempfile
import time


def tel_connect(path, deadline):
    while time.time() < deadline:
        if os.path.exists(path):
            try:
                s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
                s.connect(path)
                json.loads(s.recv(16384))  # the greeting
                return s
            except OSError:
                pass
        time.sleep(0.2)
    return None


def tel(s, cmd):
    s.send(cmd.encode())
    r = json.loads(s.recv(65536).decode())
    return r.get(cmd.split(",")[0])


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--lcpipe", required=True)
    ap.add_argument("--conf", required=True, help="conf/demo.json")
    ap.add_argument("--seconds", type=float, default=600)
    ap.add_argument("--interval", type=float, default=10)
    ap.add_argument("--warmup", type=float, default=20)
    ap.add_argument("--per-session", type=int, default=20000,
                    help="messages the simulator sends each client before closing")
    ap.add_argument("--reconnect-ms", type=int, default=10)
    ap.add_argument("--rss-slack-kb", type=int, default=1024)
    ap.add_argument("--pool-slack", type=int, default=256)
    ap.add_argument("--out", default=".")
    a = ap.parse_args()

    os.makedirs(a.out, exist_ok=True)
    work = tempfile.mkdtemp(prefix="lcpipe-soak.")
    prefix = "soak%d" % os.getpid()
    c = json.load(open(a.conf))
    c["eal"] = [x for x in c["eal"] if not x.startswith("--file-prefix")] + ["--file-prefix=" + prefix]
    c.setdefault("engine", {}).update({"duration": a.seconds, "live": "off", "stats_interval": a.interval})
    for s in c["stages"]:
        if s["plugin"] == "feedsim":
            s["options"].update({"count": a.per_session, "close_when_done": True})
        if s["plugin"] == "ws":
            s["options"].update({"reconnect_min_ms": a.reconnect_ms,
                                 "reconnect_max_ms": a.reconnect_ms * 2})
            ws = s["name"]
    conf = os.path.join(work, "soak.json")
    json.dump(c, open(conf, "w"), indent=1)
    report = os.path.join(a.out, "soak-report.json")
    env = dict(os.environ, RUNTIME_DIRECTORY=work)
    log = open(os.path.join(a.out, "soak.log"), "w")
    print("+ %s run %s --report %s  (%.0f s, a new session every %d messages)" %
          (a.lcpipe, conf, report, a.seconds, a.per_session), flush=True)
    p = subprocess.Popen([a.lcpipe, "run", conf, "--report", report], env=env,
                         stdout=log, stderr=subprocess.STDOUT)
    samples = []
    try:
        s = tel_connect(os.path.join(work, "dpdk", prefix, "dpdk_telemetry.v2"), time.time() + 30)
        if s is None:
            print("soak: no telemetry socket after 30 s", file=sys.stderr)
            p.kill()
            return 2
        t0 = time.time()
        next_t = t0
        while p.poll() is None:
            try:
                m = tel(s, "/lcpipe/memory")
                st = tel(s, "/lcpipe/stage," + ws)
            except (OSError, ValueError) as e:
                print("soak: telemetry: %s" % e, file=sys.stderr)
                break
            if m is None or st is None:  # before the engine is up, or after it stopped
                time.sleep(0.2)
                continue
            row = {"t": round(time.time() - t0, 1), "rss_kb": m["rss_kb"],
                   "opens": st["opens"], "msgs": st["msgs"]}
            row.update({"mp:" + k: v for k, v in sorted(m["mempools_in_use"].items())})
            row.update({"pool:" + k: v for k, v in sorted(m["pools_in_use"].items())})
            samples.append(row)
            print("t %6.1fs  rss %7d KiB  opens %7d  msgs %11d  in use: %s" %
                  (row["t"], row["rss_kb"], row["opens"], row["msgs"],
                   " ".join("%s=%d" % (k.split(":", 1)[1], v) for k, v in row.items() if ":" in k)),
                  flush=True)
            next_t += a.interval
            time.sleep(max(0, next_t - time.time()))
        rc = p.wait(timeout=a.seconds + 120)
    finally:
        if p.poll() is None:
            p.kill()
        log.close()
        subprocess.run(["rm", "-rf", work])

    with open(os.path.join(a.out, "soak.csv"), "w", newline="") as f:
        if samples:
            w = csv.DictWriter(f, fieldnames=list(samples[0].keys()))
            w.writeheader()
            w.writerows(samples)
    fails = []
    if rc != 0:
        fails.append("lcpipe exited %d (see soak.log)" % rc)
    warm = [r for r in samples if r["t"] >= a.warmup]
    if len(warm) < 3:
        fails.append("fewer than 3 samples after the warm-up")
        base = peak = None
    else:
        base, peak = warm[0]["rss_kb"], max(r["rss_kb"] for r in warm)
        if peak - base > a.rss_slack_kb:
            fails.append("RSS grew from %d to %d KiB after the warm-up" % (base, peak))
        third = max(1, len(warm) // 3)
        for k in (k for k in warm[0] if ":" in k):
            first, last = max(r.get(k, 0) for r in warm[:third]), max(r.get(k, 0) for r in warm[-third:])
            if last > first + a.pool_slack:
                fails.append("%s in use creeps up: at most %d in the first third, %d in the last" % (k, first, last))
    r = json.load(open(report)) if os.path.exists(report) else {}
    stats = next((v for v in r.get("stages", {}).values() if v.get("plugin") == "metrics"), {})
    ctr = stats.get("counters", {})
    if r.get("leaked_objects", 1) != 0:
        fails.append("leaked_objects = %s" % r.get("leaked_objects"))
    if ctr.get("seq_gaps", 1) != 0 or ctr.get("seq_dups", 1) != 0:
        fails.append("metrics: seq_gaps %s, seq_dups %s" % (ctr.get("seq_gaps"), ctr.get("seq_dups")))
    opens = r.get("stages", {}).get(ws, {}).get("counters", {}).get("opens", 0)
    summary = {"seconds": a.seconds, "samples": len(samples), "opens": opens,
               "msgs": ctr.get("msgs"), "sessions": ctr.get("sessions"),
               "seq_resyncs": ctr.get("seq_resyncs"), "rss_kb_after_warmup": base,
               "rss_kb_peak_after_warmup": peak,
               "rss_kb_first": samples[0]["rss_kb"] if samples else None,
               "leaked_objects": r.get("leaked_objects"), "verdict": "flat" if not fails else "FAIL",
               "failures": fails}
    json.dump(summary, open(os.path.join(a.out, "soak.json"), "w"), indent=1)
    print("\nsoak: %.0f s, %s sessions (ws opens %d), %s messages; RSS %s KiB at the first sample, "
          "%s KiB after the warm-up, peak %s KiB; leaked objects %s" %
          (a.seconds, ctr.get("sessions"), opens, ctr.get("msgs"), summary["rss_kb_first"], base, peak,
           r.get("leaked_objects")))
    for f in fails:
        print("soak: FAIL: " + f)
    print("soak: %s" % summary["verdict"])
    return 0 if not fails else 1


if __name__ == "__main__":
    sys.exit(main())
