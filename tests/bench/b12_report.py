#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""b12_report.py -- the Python half of B12 and B14 (tests/bench/b12.sh, b14.sh; doc/benchmarks.md
"B12", "B14"). Every subcommand takes --bench B12|B14 (default B12): the JSON lines' "bench", the
targets, and for B14 the stream of each case from its suffix (none: TLS, _z: TLS +
permessage-deflate, _ws: plain), checked per run and used to pair lcpipe with kernel cases.

  sample  --sock-dir D --pid P --server-pid S --go-file G --out F [--interval SEC]
          Around one lcpipe run: connect to its DPDK telemetry socket
          (D/**/dpdk_telemetry.v2), poll /lcpipe/stats until the engine answers,
          take sample A and create G (the feed server, waiting for G after the
          subscription, then starts the stream); when the feed server process S
          has exited, take sample B. A sample = /lcpipe/stats (per stage in/out, per lcore
          busy/idle TSC cycles) and, for every thread of lcpipe (pid P), its name
          and /proc/P/task/T/schedstat (on-CPU ns, runqueue-wait ns, timeslices).
          Between A and B every figure is a difference of the same two instants,
          so the window needs no alignment with the stream's first or last byte.
  report  DIR TSC_HZ
          Reads DIR/runs.tsv and each run's files, checks them, prints the tables
          and one JSON line per result; exit 1 when a check fails.
  timing  TSV TSC_HZ
          Per stage, from lcpipe1 runs with engine.stage_timing (TSV: size, run
          base and optionally the case per line): each stage's own TSC cycles (the report's timing)
          per message and per segment, its share of the worker's busy cycles,
          and that share of the run's on-CPU busy cycles per message (the
          sample window's figure, as for the runs above); "loop" is what no
          stage owns (the worker loop, empty polls inside busy turns).
          B13 (b13.sh) uses timing and cg with --bench B13: its runs have no
          sampler (no on-CPU column) and its port is the net_memif PMD.
  cg      CALLGRIND_OUT MSGS SEGMENTS [MAPS|- [IDLE_OUT RX_BURSTS]] [--report LCPIPE_REPORT]
          (B14: then the same run split by what the instructions do; see cg_tls)
  cgk     CALLGRIND_OUT MSGS PLAINTEXT_BYTES [LCPIPE_CG_OUTPUT]   (B14)
          The kernel client's stream dump split the same way, beside lcpipe's
          Instructions per message of one single-lcore lcpipe run under
          callgrind (--toggle-collect=lcp_worker_main), by component: each
          function's own cost goes to its object (a stage plugin, liblcp, the
          af_packet PMD), and the inclusive cost of its calls into shared
          libraries (libc, librte_eal/mempool/mbuf/ring, ld.so) goes to the
          caller's component, so libc's memchr counts under metrics and
          rte_free's memset under ws. Prints a table and JSON lines. MAPS, a
          copy of /proc/PID/maps taken during the run, resolves code callgrind
          left in object "???" (here port_ethdev.so and counters_percore.so:
          valgrind 3.19 reads no symbols for a plugin whose file lcpipe's
          elf_probe mapped read-only before dlopen mapped it again). IDLE_OUT,
          a dump of the same process taken while it only polled (before the
          stream), gives each component's instructions per empty turn; the
          stream's empty turns (its turns, counted as calls of ws_poll, minus
          the port's RX_BURSTS with frames) are subtracted, so the figures are
          per message of work, not of polling.
"""
import glob
import json
import os
import re
import socket
import statistics as stat
import sys
import time


BENCH = "B12"
REPORT = None
# the lcpipe cases' port driver (b12.sh B12_DRIVER; b13.sh sets memif) and the
# link's MTU (b12.sh B12_MTU): every JSON line says which
PORT_DRIVER = os.environ.get("B12_DRIVER", "af_packet")
LINK_MTU = int(os.environ.get("B12_MTU", "1500"))


def jprint(j, **kw):
    """one JSON result line, with the port driver of the lcpipe cases and the MTU"""
    print(json.dumps(dict(j, port_driver=PORT_DRIVER, mtu=LINK_MTU), **kw))


def take_bench(argv):
    """argv without its --bench X (sets BENCH) and --report FILE (cg: the run's lcpipe report)"""
    global BENCH, REPORT
    out = []
    it = iter(argv)
    for a in it:
        if a == "--bench":
            BENCH = next(it)
        elif a == "--report":
            REPORT = next(it)
        else:
            out.append(a)
    return out


def mode_of(case):
    """the stream of a case: tls, z (TLS + permessage-deflate) or ws (plain)"""
    if case.endswith("_z"):
        return "z"
    if case.endswith("_ws"):
        return "ws"
    return "tls" if BENCH == "B14" else "ws"


# ---------------------------------------------------------------- sample
def tel_connect(sock_dir, deadline):
    while time.monotonic() < deadline:
        for p in glob.glob(os.path.join(sock_dir, "**", "dpdk_telemetry.v2"), recursive=True):
            s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
            try:
                s.connect(p)
                s.recv(1 << 16)  # the info message
                return s
            except OSError:
                s.close()
        time.sleep(0.05)
    return None


def tel_query(s, cmd):
    s.send(cmd.encode())
    return json.loads(s.recv(1 << 20).decode())[cmd]


def threads(pid):
    out = {}
    for t in os.listdir("/proc/%d/task" % pid):
        try:
            comm = open("/proc/%d/task/%s/comm" % (pid, t)).read().strip()
            on, wait, slices = (int(x) for x in open("/proc/%d/task/%s/schedstat" % (pid, t)).read().split()[:3])
            st = open("/proc/%d/task/%s/stat" % (pid, t)).read()
            f = st[st.rindex(")") + 2:].split()
            utime, stime = int(f[11]), int(f[12])  # fields 14 and 15: clock ticks
        except (OSError, ValueError, IndexError):
            continue
        out[t] = {"comm": comm, "on_cpu_ns": on, "run_delay_ns": wait, "slices": slices,
                  "utime_ticks": utime, "stime_ticks": stime}
    return out


def alive(pid):
    try:
        st = open("/proc/%d/stat" % pid).read()
    except OSError:
        return False
    return st[st.rindex(")") + 2] not in "ZX"


def take(s, pid):
    t0 = time.monotonic_ns()
    st = tel_query(s, "/lcpipe/stats")
    th = threads(pid)
    return {"t_ns": t0, "t_end_ns": time.monotonic_ns(), "stats": st, "threads": th}


def cmd_sample(argv):
    a = dict(zip(argv[::2], argv[1::2]))
    sock_dir, pid, spid, out = a["--sock-dir"], int(a["--pid"]), int(a["--server-pid"]), a["--out"]
    go = a["--go-file"]
    interval = float(a.get("--interval", "0.02"))
    res = {"A": None, "B": None, "error": None}
    s = tel_connect(sock_dir, time.monotonic() + 60)
    if s is None:
        res["error"] = "no telemetry socket under %s" % sock_dir
    else:
        try:
            while res["A"] is None:
                if not alive(spid):
                    res["error"] = "the feed server ended before the engine answered"
                    break
                st = tel_query(s, "/lcpipe/stats")
                if isinstance(st, dict) and "sink" in st and st["sink"].get("in", 0) == 0:
                    res["A"] = take(s, pid)
                    open(go, "w").close()
                    break
                if isinstance(st, dict) and "sink" in st:
                    res["error"] = "the sink already saw messages: the server did not wait for %s" % go
                    break
                time.sleep(interval)
            while res["A"] is not None and alive(spid):
                time.sleep(interval)
            if res["A"] is not None:
                res["B"] = take(s, pid)
        except (OSError, ValueError, KeyError) as e:
            res["error"] = "telemetry: %r" % (e,)
    with open(out, "w") as f:
        json.dump(res, f)
    return 0 if res["error"] is None else 1


# ---------------------------------------------------------------- report
def load_json_line(path):
    for line in open(path):
        if line.startswith("{"):
            return json.loads(line)
    raise ValueError("no JSON line in " + path)


def lcore_of(comm):
    m = re.match(r"(?:rte|lcore)-worker-(\d+)$", comm)
    return int(m.group(1)) if m else None


def window(samp, hz):
    """per-lcore figures between samples A and B"""
    A, B = samp["A"], samp["B"]
    sa, sb = A["stats"], B["stats"]
    w = {"wall_s": (B["t_ns"] - A["t_ns"]) * 1e-9, "msgs": sb["sink"]["in"] - sa["sink"]["in"],
         "segments": sb["port"]["out"] - sa["port"]["out"], "lcores": {}}
    for tid, tb in B["threads"].items():
        lc = lcore_of(tb["comm"])
        ta = A["threads"].get(tid)
        if lc is None or ta is None:
            continue
        key = "lcore%d" % lc
        busy = sb[key]["busy_cycles"] - sa[key]["busy_cycles"]
        idle = sb[key]["idle_cycles"] - sa[key]["idle_cycles"]
        on = (tb["on_cpu_ns"] - ta["on_cpu_ns"]) * 1e-9 * hz
        wait = (tb["run_delay_ns"] - ta["run_delay_ns"]) * 1e-9 * hz
        frac = busy / (busy + idle) if busy + idle else 0.0
        ut = tb.get("utime_ticks", 0) - ta.get("utime_ticks", 0)
        stk = tb.get("stime_ticks", 0) - ta.get("stime_ticks", 0)
        w["lcores"][lc] = {"busy": busy, "idle": idle, "on_cpu": on, "run_delay": wait,
                           "busy_ratio": frac, "busy_on_cpu": on * frac,
                           "off_cpu_share": wait / (on + wait) if on + wait else 0.0,
                           "sys_share": stk / (ut + stk) if ut + stk else None, "ticks": ut + stk}
    return w


# tcp stage drops the peer's TCP repairs by retransmitting: an ACK not sent for
# want of an mbuf (the pool is empty while the ws lcore lags in lcpipe2), a
# retransmitted duplicate refused by PAWS or as outside the window
TCP_RECOVERED = ("drop_tx_nobuf", "drop_tcp_paws", "drop_tcp_out_of_window", "drop_tcp_ooo_limit")


def q13(v):
    v = sorted(v)
    if len(v) < 2:
        return v[0], v[0]
    q = stat.quantiles(v, n=4, method="inclusive")
    return q[0], q[2]


def cmd_report(argv):
    argv = take_bench(argv)
    tmp, hz = argv[0], float(argv[1])
    suites = {}   # (TLS version, cipher) the feed server negotiated -> runs
    runs = [l.rstrip("\n").split("\t") for l in open(os.path.join(tmp, "runs.tsv")) if l.strip()]
    bad = 0
    res = {}      # (round, size, case) -> figures
    gate = {}
    jl = []
    for r, size, case, att, base, status in runs:
        g = gate.setdefault((int(size), case), {"rerun": 0, "noisy": 0, "failed": 0, "kept": 0})
        g[status] = g.get(status, 0) + 1
        if status not in ("kept", "noisy"):
            continue
        size = int(size)
        srv = load_json_line(base + ".server.json")
        f = {"round": int(r), "size": size, "case": case, "noisy": status == "noisy",
             "server": srv, "count": srv["msgs"]}
        scpu = (srv["utime_us"] + srv["stime_us"]) * 1e-6 * hz
        f["server_cyc"] = scpu / srv["msgs"]
        f["rate"] = srv["msgs"] / (srv["wall_ns"] * 1e-9)
        f["segs"] = srv["tcp_data_segs_out"]
        f["retrans"] = srv["tcp_total_retrans"]
        if not srv.get("complete"):
            print("FAIL: %s: the feed server did not see the client's close (%s)" % (base, srv.get("end")))
            bad += 1
        md = mode_of(case)
        f["mode"] = md
        if md != "ws":
            k = (srv.get("tls_version", ""), srv.get("tls_cipher", ""))
            suites[k] = suites.get(k, 0) + 1
            if not k[1]:
                print("FAIL: %s: no TLS on the feed (%s)" % (base, k))
                bad += 1
        if (md == "z") != bool(srv.get("deflate")):
            print("FAIL: %s: the feed server's deflate is %s for a %s case" % (base, srv.get("deflate"), md))
            bad += 1
        f["wire_bytes_per_msg"] = srv.get("wire_frame_bytes", srv["frame_bytes"]) / srv["msgs"]
        if case.startswith("kernel"):
            kc = load_json_line(base + ".client.json")
            f["client"] = kc
            f["cyc"] = (kc["utime_us"] + kc["stime_us"]) * 1e-6 * hz / kc["msgs"]
            f["cyc_user"] = kc["utime_us"] * 1e-6 * hz / kc["msgs"]
            f["cyc_sys"] = kc["stime_us"] * 1e-6 * hz / kc["msgs"]
            if not kc["ok"] or kc["msgs"] != srv["msgs"] or kc["seq_in_order"] != srv["msgs"] - srv["symbols"]:
                print("FAIL: %s: kernel client: ok=%s msgs %d (sent %d), in order %d, gaps %d, dups %d"
                      % (base, kc["ok"], kc["msgs"], srv["msgs"], kc["seq_in_order"], kc["seq_gaps"], kc["seq_dups"]))
                bad += 1
            if md != "ws" and (kc.get("tls_cipher") != srv.get("tls_cipher") or kc.get("tls_version") != srv.get("tls_version")):
                print("FAIL: %s: kernel client TLS %s %s, server %s %s" % (base, kc.get("tls_version"), kc.get("tls_cipher"),
                      srv.get("tls_version"), srv.get("tls_cipher")))
                bad += 1
            if md == "z" and kc.get("inflated") != kc["msgs"]:
                print("FAIL: %s: kernel client inflated %s of %d messages" % (base, kc.get("inflated"), kc["msgs"]))
                bad += 1
        else:
            rep = json.load(open(base + ".report.json"))
            samp = json.load(open(base + ".sample.json"))
            mc = rep["stages"]["metrics"]["counters"]
            f["report"] = {k: v for k, v in rep.items() if k in ("lcores", "duration_s", "stop_reason")}
            msgs = mc["msgs"]
            f["report_busy_cyc"] = sum(l["busy_cycles"] for l in rep["lcores"].values()) / msgs
            f["report_lcore_busy_cyc"] = {int(k): l["busy_cycles"] / msgs for k, l in rep["lcores"].items()}
            pc = rep["stages"]["port"]["counters"]
            tc = rep["stages"]["tcp"]["counters"]
            wc = rep["stages"]["ws"]["counters"]
            f["rx_burst_avg"] = pc["rx_packets"] / pc["rx_bursts"] if pc["rx_bursts"] else 0
            f["acks_per_seg"] = tc["tcp_acks_out"] / tc["tcp_segs_in"] if tc["tcp_segs_in"] else 0
            f["tx_frames_per_rx_burst"] = pc["tx_packets"] / pc["rx_bursts"] if pc["rx_bursts"] else 0
            f["assembled_share"] = wc["msgs_assembled"] / wc["msgs"] if wc["msgs"] else 0
            f["tcp_ooo"] = tc["tcp_ooo_segs"]
            f["tcp_dup"] = tc["tcp_dup_segs"]
            f["lcp_segs"] = tc["tcp_segs_in"]
            problems = []
            if msgs != srv["msgs"] or mc["ticks"] != msgs:
                problems.append("metrics saw %d messages, %d ticks (sent %d)" % (msgs, mc["ticks"], srv["msgs"]))
            for k in ("seq_gaps", "seq_dups", "bad_tick", "symbol_table_full"):
                if mc[k] != 0:
                    problems.append("metrics %s = %d" % (k, mc[k]))
            if mc["symbols"] != srv["symbols"]:
                problems.append("metrics symbols %d != %d" % (mc["symbols"], srv["symbols"]))
            if md != "ws" and wc.get("tls_handshakes") != 1:
                problems.append("ws tls_handshakes = %s (want 1)" % wc.get("tls_handshakes"))
            if md == "z" and wc.get("msgs_inflated") != msgs:
                problems.append("ws msgs_inflated = %s of %d" % (wc.get("msgs_inflated"), msgs))
            if md != "ws":
                f["tls_records"] = wc.get("tls_records_rx", 0)
            # frames the tcp stage refused or could not answer are re-sent by the
            # feed's TCP (the stream stays whole: metrics checks it); anything
            # else dropped fails the run
            recovered = {}
            for sn, st in rep["stages"].items():
                for k, v in st.get("drops_by_reason", {}).items():
                    if (sn == "tcp" and k in TCP_RECOVERED) or (sn == "port" and k == "drop_rx_shutdown"):
                        recovered["%s.%s" % (sn, k)] = v
                    else:
                        problems.append("%s.%s = %d" % (sn, k, v))
            f["recovered_drops"] = recovered
            if rep.get("leaked_objects", 1):
                problems.append("leaked objects %s" % rep.get("leaked_objects"))
            if samp.get("error") or samp.get("A") is None or samp.get("B") is None:
                problems.append("sampler: %s" % samp.get("error"))
            if problems:
                print("FAIL: %s: %s" % (base, "; ".join(problems)))
                bad += 1
                continue
            w = window(samp, hz)
            f["window"] = w
            if w["msgs"] <= 0 or not w["lcores"]:
                print("FAIL: %s: empty sample window (%d msgs, lcores %s)" % (base, w["msgs"], list(w["lcores"])))
                bad += 1
                continue
            f["cyc"] = sum(l["busy_on_cpu"] for l in w["lcores"].values()) / w["msgs"]
            f["cyc_wall_busy"] = sum(l["busy"] for l in w["lcores"].values()) / w["msgs"]
            f["cyc_on_cpu"] = sum(l["on_cpu"] for l in w["lcores"].values()) / w["msgs"]
            f["lcore_cyc"] = {lc: l["busy_on_cpu"] / w["msgs"] for lc, l in w["lcores"].items()}
            f["lcore_cyc_per_seg"] = {lc: l["busy_on_cpu"] / w["segments"] for lc, l in w["lcores"].items()} \
                if w["segments"] > 0 else {}
            f["lcore_busy_ratio"] = {lc: l["busy_ratio"] for lc, l in w["lcores"].items()}
            f["lcore_off_cpu"] = {lc: l["off_cpu_share"] for lc, l in w["lcores"].items()}
            f["lcore_sys_share"] = {lc: l["sys_share"] for lc, l in w["lcores"].items()}
            f["msgs_per_seg_window"] = w["msgs"] / w["segments"] if w["segments"] else 0
        f["sum_cyc"] = f["cyc"] + f["server_cyc"]
        res[(f["round"], size, case)] = f

    sizes = sorted({k[1] for k in res})
    cases = []
    for k in res:
        if k[2] not in cases:
            cases.append(k[2])
    order = ["kernel", "kernel_min", "lcpipe1", "lcpipe2"]
    order = [c + sfx for sfx in ("", "_z", "_ws") for c in order]
    cases = [c for c in order if c in cases] + [c for c in cases if c not in order]
    rounds = sorted({k[0] for k in res})
    ghz = hz / 1e9

    def med(vals):
        return stat.median(vals) if vals else float("nan")

    print()
    print(BENCH + " per run: receiver cycles/msg (kernel: getrusage user+sys x TSC; lcpipe: on-CPU busy, see below),")
    print("feed server cycles/msg, msgs/s (server: first send -> client's close), 1448-byte segments sent, retransmissions")
    print("%-5s %5s %-10s %10s %10s %10s %10s %9s %8s %7s %s" % ("round", "size", "case", "receiver", "server", "sum",
          "Mmsg/s", "segs", "retrans", "noisy", "lcpipe: per lcore busy-on-CPU cyc/msg (busy ratio, off-CPU share); wall busy cyc/msg"))
    for r in rounds:
        for size in sizes:
            for c in cases:
                f = res.get((r, size, c))
                if f is None:
                    continue
                extra = ""
                if "lcore_cyc" in f:
                    extra = " ".join("l%d %.0f (%.2f, %.2f)" % (lc, f["lcore_cyc"][lc], f["lcore_busy_ratio"][lc],
                                     f["lcore_off_cpu"][lc]) for lc in sorted(f["lcore_cyc"]))
                    extra += "; wall %.0f" % f["cyc_wall_busy"]
                print("%-5d %5d %-10s %10.1f %10.1f %10.1f %10.3f %9d %8d %7s %s" % (r, size, c, f["cyc"], f["server_cyc"],
                      f["sum_cyc"], f["rate"] / 1e6, f["segs"], f["retrans"], "noisy" if f["noisy"] else "", extra))

    print()
    print(BENCH + " summary (medians over runs; TSC %.4f GHz). receiver = cycles per message in the receiving process:" % ghz)
    print("  kernel, kernel_min: b12_kernel_client's user+sys CPU time (getrusage) x TSC rate / messages")
    if suites:
        print("  TLS (the feed server's SSL_get_version / SSL_get_cipher_name, every TLS run): " +
              ", ".join("%s %s (%d runs)" % (v, c, n) for (v, c), n in sorted(suites.items())))
        if len(suites) > 1:
            print("FAIL: the runs did not all negotiate the same TLS version and suite")
            bad += 1
    print("  lcpipe1/2: per worker lcore, its thread's on-CPU time (schedstat) x its busy share (telemetry busy/idle")
    print("             cycles) over the sample window, summed over lcores, / messages in the window")
    print("server = b12_feed_server's user+sys CPU per message (on a veth the receiver side's kernel work partly runs there)")
    hdr = "%5s %-10s %4s %9s %9s %17s %9s %9s %9s %9s %10s %11s %8s" % (
        "size", "case", "runs", "min", "receiver", "(IQR)", "user", "sys", "server", "sum", "Mmsg/s", "wall busy", "retrans")
    print(hdr)
    summ = {}
    for size in sizes:
        for c in cases:
            fs = [res[(r, size, c)] for r in rounds if (r, size, c) in res]
            if not fs:
                continue
            v = [f["cyc"] for f in fs]
            q1, q3 = q13(v)
            s = {"runs": len(fs), "min": min(v), "med": med(v), "q1": q1, "q3": q3,
                 "server": med([f["server_cyc"] for f in fs]), "sum": med([f["sum_cyc"] for f in fs]),
                 "rate": med([f["rate"] for f in fs]), "retrans": sum(f["retrans"] for f in fs),
                 "segs": med([f["segs"] for f in fs]), "count": fs[0]["count"]}
            if c.startswith("kernel"):
                s["user"] = med([f["cyc_user"] for f in fs])
                s["sys"] = med([f["cyc_sys"] for f in fs])
            else:
                s["wall_busy"] = med([f["cyc_wall_busy"] for f in fs])
                s["report_busy"] = med([f["report_busy_cyc"] for f in fs])
                lcs = sorted(fs[0]["lcore_cyc"])
                s["lcore"] = {lc: med([f["lcore_cyc"][lc] for f in fs if lc in f["lcore_cyc"]]) for lc in lcs}
                s["lcore_seg"] = {lc: med([f["lcore_cyc_per_seg"][lc] for f in fs if lc in f["lcore_cyc_per_seg"]])
                                  for lc in lcs}
                s["lcore_busy_ratio"] = {lc: med([f["lcore_busy_ratio"][lc] for f in fs]) for lc in lcs}
                s["lcore_off_cpu"] = {lc: med([f["lcore_off_cpu"][lc] for f in fs]) for lc in lcs}
                s["lcore_sys_share"] = {lc: med([f["lcore_sys_share"][lc] for f in fs
                                                 if f.get("lcore_sys_share", {}).get(lc) is not None]) for lc in lcs}
                s["rx_burst_avg"] = med([f["rx_burst_avg"] for f in fs])
                s["acks_per_seg"] = med([f["acks_per_seg"] for f in fs])
                s["assembled_share"] = med([f["assembled_share"] for f in fs])
                s["msgs_per_seg"] = med([f["msgs_per_seg_window"] for f in fs])
                s["tcp_ooo"] = sum(f["tcp_ooo"] for f in fs)
                rd = {}
                for f in fs:
                    for k, v in f.get("recovered_drops", {}).items():
                        rd[k] = rd.get(k, 0) + v
                s["recovered_drops"] = rd
            summ[(size, c)] = s
            g = gate.get((size, c), {})
            print("%5d %-10s %4d %9.1f %9.1f %17s %9s %9s %9.1f %9.1f %10.3f %11s %8d" % (
                size, c, s["runs"], s["min"], s["med"], "(%.1f-%.1f)" % (q1, q3),
                "%.1f" % s["user"] if "user" in s else "", "%.1f" % s["sys"] if "sys" in s else "",
                s["server"], s["sum"], s["rate"] / 1e6, "%.1f" % s["wall_busy"] if "wall_busy" in s else "", s["retrans"]))
            j = {"bench": BENCH, "case": "%s.%d" % (c, size), "unit": "cycles/message", "tsc_hz": hz, "size": size,
                 "messages_per_run": s["count"], "runs": s["runs"], "receiver_min": s["min"], "receiver_median": s["med"],
                 "receiver_q1": q1, "receiver_q3": q3, "server_median": s["server"], "sum_median": s["sum"],
                 "msgs_per_s_median": s["rate"], "segments_per_run": s["segs"], "retransmissions": s["retrans"],
                 "reruns": g.get("rerun", 0), "kept_noisy": g.get("noisy", 0), "failed": g.get("failed", 0)}
            for k in ("user", "sys", "wall_busy", "report_busy", "rx_burst_avg", "acks_per_seg", "assembled_share",
                      "msgs_per_seg", "tcp_ooo", "recovered_drops"):
                if k in s:
                    j[k] = s[k]
            if "lcore" in s:
                j["lcores"] = {str(lc): {"cycles_per_msg": s["lcore"][lc], "cycles_per_segment": s["lcore_seg"].get(lc),
                                         "busy_ratio": s["lcore_busy_ratio"][lc], "off_cpu_share": s["lcore_off_cpu"][lc],
                                         "kernel_share": s["lcore_sys_share"][lc]}
                               for lc in s["lcore"]}
            jl.append(j)

    # lcpipe per lcore, per segment
    print()
    print("lcpipe per lcore (medians): busy-on-CPU cycles per message and per received segment, busy ratio, off-CPU share,")
    print("kernel share (the thread's stime / (utime + stime) over the window, /proc/PID/task/TID/stat, 10 ms ticks)")
    print("(lcpipe1: lcore 1 = port, tcp, ws, metrics, sink; lcpipe2: lcore 1 = port + tcp, lcore 2 = ws + metrics + sink)")
    for size in sizes:
        for c in cases:
            s = summ.get((size, c))
            if s is None or "lcore" not in s:
                continue
            print("  %5d %-8s " % (size, c) + "; ".join(
                "lcore %d: %.1f/msg, %.0f/segment, busy %.2f, off-CPU %.2f, kernel %.2f" % (lc, s["lcore"][lc], s["lcore_seg"][lc],
                s["lcore_busy_ratio"][lc], s["lcore_off_cpu"][lc], s["lcore_sys_share"][lc]) for lc in sorted(s["lcore"])) +
                "; %.2f msgs/segment, rx burst %.1f, %.2f ACKs/segment, %.0f %% of messages assembled; %d out-of-order segments%s"
                % (s["msgs_per_seg"], s["rx_burst_avg"], s["acks_per_seg"], 100 * s["assembled_share"], s["tcp_ooo"],
                   "; drops TCP repaired (all runs): " + ", ".join("%s %d" % kv for kv in sorted(s["recovered_drops"].items()))
                   if s["recovered_drops"] else ""))

    # ratios, per round
    print()
    print(BENCH + " ratios lcpipe / kernel path, cycles per message: median of per-round ratios (min-max, pairs)")
    print("  'receiver' = lcpipe's worker lcores / the kernel client process alone;")
    print("  'with server' = (lcpipe + the feed server of its run) / (kernel client + the feed server of its run)")
    if BENCH == "B14":
        print("  (B14: lcpipe and kernel cases of the same stream: TLS, TLS + deflate (_z), plain ws (_ws))")
    for size in sizes:
        for lc in [c for c in cases if c.startswith("lcpipe")]:
            for an in [c for c in cases if c.startswith("kernel") and (BENCH == "B12" or mode_of(c) == mode_of(lc))]:
                if BENCH == "B14":
                    targets = {64: 0.5} if mode_of(lc) == "tls" else {}
                elif an == "kernel":
                    # issue 18: <= 1.0x the same-work kernel client at 64 B and 1 KiB
                    # (the minimal-parser client is shown, with no target)
                    targets = {64: 1.0, 1024: 1.0}
                else:
                    targets = {}
                for kind, key in (("receiver", "cyc"), ("with server", "sum_cyc")):
                    rs = [res[(r, size, lc)][key] / res[(r, size, an)][key] for r in rounds
                          if (r, size, lc) in res and (r, size, an) in res]
                    if not rs:
                        continue
                    m = stat.median(rs)
                    t = targets.get(size)
                    verdict = ""
                    if t is not None:
                        verdict = "target <= %.3f: %s" % (t, "met" if m <= t else "NOT met (%.1fx over)" % (m / t))
                    print("  %5d %-8s / %-10s %-12s %7.3f (%.3f-%.3f, %d)  %s" % (size, lc, an, kind, m, min(rs), max(rs),
                          len(rs), verdict))
                    jl.append({"bench": BENCH, "case": "ratio.%s_over_%s.%s.%d" % (lc, an, "receiver" if key == "cyc" else
                               "with_server", size), "size": size, "ratio": m, "ratio_min": min(rs), "ratio_max": max(rs),
                               "pairs": len(rs), "anchor_figure": "client only" if key == "cyc" else "client + server",
                               "target": t, "target_met": (m <= t) if t is not None else None})

    if BENCH == "B14":
        # what TLS and deflate add, per receiver: per-round differences of the same receiver's cases
        print()
        print("B14 what each layer adds, cycles per message: median of per-round differences (min-max, pairs)")
        for size in sizes:
            for rc in ("kernel", "lcpipe1"):
                for hi, lo, what in (("", "_ws", "TLS (tls - plain ws)"), ("_z", "", "permessage-deflate (tls+deflate - tls)")):
                    a, b = rc + hi, rc + lo
                    ds = [res[(r, size, a)]["cyc"] - res[(r, size, b)]["cyc"] for r in rounds
                          if (r, size, a) in res and (r, size, b) in res]
                    if not ds:
                        continue
                    m = stat.median(ds)
                    print("  %5d %-8s %-40s %8.1f (%.1f-%.1f, %d)" % (size, rc, what, m, min(ds), max(ds), len(ds)))
                    jl.append({"bench": BENCH, "case": "delta.%s.%s_minus_%s.%d" % (rc, a, b, size), "size": size,
                               "cycles_per_msg": m, "min": min(ds), "max": max(ds), "pairs": len(ds)})
        print()
        for j in jl:
            jprint(j, sort_keys=False)
        return 1 if bad else 0

    # throughput targets
    print()
    print("B12 throughput per core from cycles (TSC rate / busy-on-CPU cycles per unit of one lcore)")
    for size in sizes:
        s1 = summ.get((size, "lcpipe1"))
        s2 = summ.get((size, "lcpipe2"))
        if s1 is not None:
            cap = hz / s1["med"]
            line = "  %5d B lcpipe1 (whole pipeline on 1 lcore): %.2f M msgs/s per core, %.2f M segments/s per core" % (
                size, cap / 1e6, hz / s1["lcore_seg"][1] / 1e6 if s1["lcore_seg"].get(1) else float("nan"))
            if size == 64:
                line += "; target >= 20 M msgs/s: %s" % ("met" if cap >= 20e6 else "NOT met (%.1fx short)" % (20e6 / cap))
            print(line)
            jl.append({"bench": "B12", "case": "capacity.lcpipe1.%d" % size, "msgs_per_s_per_core": cap,
                       "segments_per_s_per_core": hz / s1["lcore_seg"][1] if s1["lcore_seg"].get(1) else None,
                       "target_msgs_per_s": 20e6 if size == 64 else None,
                       "target_met": (cap >= 20e6) if size == 64 else None})
        if s2 is not None and s2["lcore_seg"].get(1):
            seg = hz / s2["lcore_seg"][1]
            line = "  %5d B lcpipe2 lcore 1 (port + tcp only): %.2f M segments/s per core; lcore 2 (ws + metrics + sink): %.2f M msgs/s per core" % (
                size, seg / 1e6, hz / s2["lcore"][2] / 1e6 if s2["lcore"].get(2) else float("nan"))
            met = seg >= 5e6
            line += "; target >= 5 M segments/s: %s" % ("met" if met else "NOT met (%.1fx short)" % (5e6 / seg))
            print(line)
            jl.append({"bench": "B12", "case": "capacity.lcpipe2_rx_tcp.%d" % size, "segments_per_s_per_core": seg,
                       "target_segments_per_s": 5e6, "target_met": met,
                       "ws_metrics_sink_msgs_per_s_per_core": hz / s2["lcore"][2] if s2["lcore"].get(2) else None})
    print()
    for j in jl:
        jprint(j, sort_keys=False)
    return 1 if bad else 0


# ---------------------------------------------------------------- stage timing
def cmd_timing(argv):
    argv = take_bench(argv)
    hz = float(argv[1])
    bad = 0
    jl = []
    order = ["port", "tcp", "ws", "metrics", "sink"]
    print("%5s %-10s %-8s %12s %12s %8s %14s %14s  %s" % ("size", "case", "stage", "own cyc/msg", "cyc/segment", "share",
          "on-CPU cyc/msg", "p50 ns/call", "calls, objects"))
    for line in open(argv[0]):
        size, base = line.split()[:2]
        case = line.split()[2] if len(line.split()) > 2 else "lcpipe1"
        rep = json.load(open(base + ".report.json"))
        w = None  # B13 runs have no sampler: no on-CPU figures
        if os.path.exists(base + ".sample.json"):
            samp = json.load(open(base + ".sample.json"))
            if samp.get("error") or not samp.get("B"):
                print("FAIL: %s: sampler: %s" % (base, samp.get("error")))
                bad += 1
                continue
            w = window(samp, hz)
        st = rep["stages"]
        msgs = st["metrics"]["counters"]["msgs"]
        segs = st["tcp"]["counters"]["tcp_segs_in"]
        busy = sum(l["busy_cycles"] for l in rep["lcores"].values())
        oncpu = sum(l["busy_on_cpu"] for l in w["lcores"].values()) / w["msgs"] if w and w["msgs"] else float("nan")
        rows = []
        for name in order:
            t = st[name].get("timing")
            if t is None:
                continue
            rows.append((name, t["cycles"], t))
        loop = busy - sum(r[1] for r in rows)
        for name, cyc, t in rows + [("loop", loop, None)]:
            share = cyc / busy if busy else 0
            print("%5s %-10s %-8s %12.1f %12.1f %7.1f%% %14.1f %14s  %s" % (
                size, case, name, cyc / msgs, cyc / segs, 100 * share, share * oncpu,
                "%.0f" % t.get("call_p50_ns", float("nan")) if t else "", "%d, %d" % (t["calls"], t["objects"]) if t else ""))
            jl.append({"bench": BENCH, "case": ("stage_timing.%s.%s" % (size, name)) if BENCH != "B14" else
                       "stage_timing.%s.%s.%s" % (case, size, name), "size": int(size),
                       "own_cycles_per_msg": cyc / msgs, "own_cycles_per_segment": cyc / segs,
                       "share_of_busy": share, "on_cpu_cycles_per_msg": share * oncpu,
                       "calls": t["calls"] if t else None, "objects": t["objects"] if t else None})
        if w is None:
            print("%5s %-10s %-8s %12.1f %12.1f %7s   (busy cycles of the run)" % (
                size, case, "all", busy / msgs, busy / segs, "100%"))
            continue
        print("%5s %-10s %-8s %12.1f %12.1f %7s %14.1f   (busy cycles of the run; on-CPU busy cycles per message in the window; "
              "worker off-CPU %.0f %%, kernel %.0f %% of its CPU time)" % (
                  size, case, "all", busy / msgs, busy / segs, "100%", oncpu,
                  100 * w["lcores"][1]["off_cpu_share"], 100 * (w["lcores"][1]["sys_share"] or 0)))
    for j in jl:
        jprint(j)
    return 1 if bad else 0


# ---------------------------------------------------------------- callgrind
SHARED = ("libc.so", "librte_eal", "librte_mempool", "librte_mbuf", "librte_ring", "ld-linux", "libcrypto",
          "libjansson", "libm.so", "???", "librte_ethdev", "librte_telemetry", "librte_kvargs", "libnuma")


MAPS = []  # (lo, hi, path) of executable mappings


def resolve(ob, fn):
    """the object of fn: callgrind's, or for code it put in "???", the mapping holding fn's address"""
    if ob.endswith("???") and fn.startswith("0x"):
        a = int(fn, 16)
        for lo, hi, p in MAPS:
            if lo <= a < hi:
                return p
    return ob


def component(ob):
    b = os.path.basename(ob)
    if b.endswith(".so") and "/plugins/" in ob:
        return {"counters_percore": "counters"}.get(b[:-3], b[:-3])  # port_ethdev, tcp, ws, metrics, sink_null
    if b.startswith("liblcp"):
        return "framework"
    if "af_packet" in b:
        return "af_packet_pmd"
    if "net_memif" in b:
        return "memif_pmd"
    if "mempool_ring" in b:
        return None  # mempool handler: shared
    for s in SHARED:
        if s in b:
            return None
    return None if b in ("", "???") else b


def cg_costs(path):
    """A callgrind file's cost lines, its compressed names expanded: yields
    (ob, fi, fn, None, None, 0, Ir) for a function's own instructions (fi: the
    file they come from, inlined ones included) and (ob, fi, fn, cob, cfn,
    calls, inclusive Ir) for its calls of cfn in cob (never None)"""
    names = {"ob": {}, "fl": {}, "fn": {}}

    def name(kind, v):
        m = re.match(r"\((\d+)\)(?: (.*))?$", v)
        if not m:
            return v
        if m.group(2) is not None:
            names[kind][m.group(1)] = m.group(2)
        return names[kind].get(m.group(1), "?")

    ob = fl = fi = fn = ""
    cob = cfn = None
    in_call = False
    ncalls = 0
    for line in open(path):
        line = line.rstrip("\n")
        if not line or line[0] == "#":
            continue
        c0 = line[0]
        if c0.isdigit() or c0 in "+-*":
            parts = line.split()
            cost = int(parts[1]) if len(parts) > 1 else 0
            if in_call:
                in_call = False
                yield ob, fi, fn, cob, cfn, ncalls, cost
                cob = None  # a cob= line names the object of the next call only
                continue
            yield ob, fi, fn, None, None, 0, cost
            continue
        k, _, v = line.partition("=")
        if k == "ob":
            ob = name("ob", v)
        elif k == "fl":
            fl = fi = name("fl", v)
        elif k in ("fi", "fe"):
            fi = name("fl", v)
        elif k == "fn":
            fn = name("fn", v)
            fi = fl
            cob, cfn = None, None
        elif k in ("cob", "cfob"):
            cob = name("ob", v)
        elif k == "cfn":
            cfn = name("fn", v)
        elif k in ("cfi", "cfl"):
            name("fl", v)
        elif k == "calls":
            in_call = True
            ncalls = int(v.split()[0])
            if cob is None:
                cob = ob


def cg_parse(path):
    """callgrind file -> (components, total Ir, worker turns = calls of ws_poll)"""
    selfc, shared_in = {}, {}
    total = turns = 0
    for ob, _, fn, cob, cfn, ncalls, cost in cg_costs(path):
        if cob is not None:  # a call
            comp = component(resolve(ob, fn))
            if comp is not None and component(resolve(cob, cfn)) is None:
                shared_in[(comp, fn, cob, cfn)] = shared_in.get((comp, fn, cob, cfn), 0) + cost
            if cfn == "ws_poll":
                turns += ncalls
            continue
        selfc[(ob, fn)] = selfc.get((ob, fn), 0) + cost
        total += cost
    comps = {}
    for (o, f), c in selfc.items():
        comp = component(resolve(o, f))
        if comp is None:
            continue
        comps.setdefault(comp, {"self": 0, "shared": 0, "top_shared": {}})["self"] += c
    for (comp, f, o, cf), c in shared_in.items():
        if "libcrypto" in o:
            # B12: SHA-1/base64 of the upgrade, once per connection; B14: TLS (libssl's calls are its own component)
            comp = "ws_handshake" if BENCH != "B14" else "ws_libcrypto"
        d = comps.setdefault(comp, {"self": 0, "shared": 0, "top_shared": {}})
        d["shared"] += c
        key = "%s (%s)" % (cf, os.path.basename(resolve(o, cf)))
        d["top_shared"][key] = d["top_shared"].get(key, 0) + c
    return comps, total, turns


# ---------------------------------------------------------------- callgrind, B14: the TLS receive path
# Every instruction of the dump goes to one of these, by what it does:
TLS_CATS = [
    ("aes_gcm", "AES-GCM: libcrypto's AES-NI/PCLMUL kernels (aesni_gcm_decrypt, ghash, ctr32) and CRYPTO_gcm128_*"),
    ("openssl", "the rest of OpenSSL: libssl's record layer and SSL_read, EVP and the provider's GCM glue"),
    ("openssl_err", "OpenSSL's error queue: ERR_clear_error / ERR_peek_* (stk_tls_read clears it before each SSL call)"),
    ("copy_bio", "copy 1: the segment into OpenSSL's record buffer (memcpy in our BIO read, stack/tls.c bio_read)"),
    ("copy_ssl", "copy 2: memcpy called from libssl (SSL_read's copy of the plaintext into our mbuf)"),
    ("tls_glue", "our TLS glue: stack/tls*.c (bio_*, stk_tls_*) and plugins/ws/ws_tls.c (mbuf per read)"),
    ("frame_decoder", "the WebSocket frame decoder: stack/ws_frame.c and its inline fast path (stk/ws.h)"),
    ("inflate", "permessage-deflate: zlib and stack/ws_deflate.c"),
    ("ws", "the rest of the ws stage: msg objects, assembly, emit (plugins/ws)"),
    ("metrics", "metrics: tick scan, symbol table, latency histogram (with its memchr / memcmp)"),
    ("tcp", "tcp stage and libstk's TCP/IP (software checksums)"),
    ("port", "port_ethdev and the af_packet PMD (its copies out of / into the rings)"),
    ("pool", "pool_mempool"),
    ("sink", "sink_null"),
    ("framework", "liblcp: the worker loop"),
    ("counters", "counters_percore"),
    ("client", "b12_kernel_client's own code: recv loop, frame parser, tick scan, sequence check (inlined into main)"),
    ("other", "anything else"),
]
_AES_FN = re.compile(r"^(CRYPTO_gcm128|gcm_|aesni_|aes_|AES_|ossl_aes|ossl_gcm|vpaes|bsaes)")
_MEMCPY = re.compile(r"(memcpy|memmove|mempcpy)")
_AES_ADDR = {}


def _aes_code(ob, fn):
    """an unnamed libcrypto function whose code (up to its first ret) has AES-NI or PCLMUL instructions"""
    key = (ob, fn)
    if key not in _AES_ADDR:
        n = 0
        try:
            import subprocess
            a = int(fn, 16)
            out = subprocess.run(["objdump", "-d", "--no-show-raw-insn", "--start-address=%d" % a,
                                  "--stop-address=%d" % (a + 8192), ob], capture_output=True, text=True).stdout
            for line in out.splitlines()[7:]:
                if re.search(r"\sret", line):
                    break
                if re.search(r"aes(enc|dec)|pclmul", line):
                    n += 1
        except (OSError, ValueError):
            n = 0
        _AES_ADDR[key] = n > 0
    return _AES_ADDR[key]


# libstk's TLS: stack/tls.c, tls_ctx.c, tls_keys.c, tls_fast.c and the inlines of tls_priv.h
STK_TLS_FILE = re.compile(r"stack/tls(_ctx|_keys|_fast)?\.c$|stack/tls_priv\.h$")


def tls_cat(ob, fl, fn):
    """the category of the code at (object, file, function); None: a shared library (libc, DPDK, ld.so),
    whose cost goes to its callers"""
    ob = resolve(ob, fn)
    b = os.path.basename(ob)
    if "libcrypto" in b:
        if fn.startswith("ERR_"):
            return "openssl_err"
        if _AES_FN.match(fn) or (fn.startswith("0x") and _aes_code(ob, fn)):
            return "aes_gcm"
        return "openssl"
    if "libssl" in b:
        return "openssl"
    if b.startswith("libz."):
        return "inflate"
    if b.startswith("b12_kernel_client"):
        return "inflate" if fl.endswith("ws_deflate.c") else "client"
    comp = component(ob)
    if comp is None:
        return None
    if comp == "ws":
        if STK_TLS_FILE.search(fl) or fl.endswith("ws_tls.c"):
            return "tls_glue"
        if fl.endswith("stack/ws_frame.c") or fl.endswith("stk/ws.h"):
            return "frame_decoder"
        if fl.endswith("ws_deflate.c"):
            return "inflate"
        return "ws"
    return {"port_ethdev": "port", "af_packet_pmd": "port", "pool_mempool": "pool", "sink_null": "sink"}.get(
        comp, comp if comp in ("tcp", "metrics", "framework", "counters") else "other")


def cg_tls_parse(path):
    """callgrind file -> {category: Ir} (shared libraries' own instructions split over their callers in
    proportion to each call's inclusive cost, up to the first non-shared caller), worker turns"""
    selfc = {}    # (ob, fn) -> {file: Ir}
    callers = {}  # callee (ob, fn) -> {caller (ob, fn, file): inclusive Ir}
    glue = {"err_incl": 0, "ssl_reads": 0, "bio_reads": 0}  # from stack/tls*.c: ERR_* inclusive Ir; SSL_read_ex, BIO reads
    turns = 0
    for ob, fi, fn, cob, cfn, ncalls, cost in cg_costs(path):
        if cob is not None:  # a call
            d = callers.setdefault((cob, cfn), {})
            k = (ob, fn, fi)
            d[k] = d.get(k, 0) + cost
            if STK_TLS_FILE.search(fi):
                if cfn.startswith("ERR_"):
                    glue["err_incl"] += cost
                elif cfn == "SSL_read_ex":
                    glue["ssl_reads"] += ncalls
            if cfn == "bio_read":
                glue["bio_reads"] += ncalls
            if cfn == "ws_poll":
                turns += ncalls
            continue
        d = selfc.setdefault((ob, fn), {})
        d[fi] = d.get(fi, 0) + cost
    memo = {}

    def attr(key, depth=0):
        """where the instructions of shared function key go: {category: fraction}"""
        if key in memo:
            return memo[key]
        memo[key] = {"other": 1.0}  # a cycle through shared code
        cs = callers.get(key, {})
        tot = sum(cs.values())
        out = {}
        if tot <= 0 or depth > 40:
            out = {"other": 1.0}
        else:
            for (o, f, file_), c in cs.items():
                w = c / tot
                cat = tls_cat(o, file_, f)
                if cat is None:
                    for k2, v2 in attr((o, f), depth + 1).items():
                        out[k2] = out.get(k2, 0.0) + w * v2
                    continue
                if _MEMCPY.search(key[1]):
                    if cat == "tls_glue" and f == "bio_read":
                        cat = "copy_bio"
                    elif cat == "openssl" and "libssl" in os.path.basename(resolve(o, f)):
                        cat = "copy_ssl"
                out[cat] = out.get(cat, 0.0) + w
        memo[key] = out
        return out

    cats = {}
    for (o, f), files in selfc.items():
        for file_, c in files.items():
            cat = tls_cat(o, file_, f)
            if cat is not None:
                cats[cat] = cats.get(cat, 0) + c
                continue
            for k2, v2 in attr((o, f)).items():
                cats[k2] = cats.get(k2, 0) + c * v2
    cats["_glue"] = glue
    return cats, turns


def cg_tls(path, msgs, segs, idle_path, rx_bursts, report):
    """B14: the TLS receive path of one callgrind run, by what the instructions do"""
    cats, turns = cg_tls_parse(path)
    glue = cats.pop("_glue")
    idle_turns = 0
    ipt = {}
    if idle_path is not None:
        icats, iturns = cg_tls_parse(idle_path)
        icats.pop("_glue")
        if iturns > 0:
            ipt = {c: v / iturns for c, v in icats.items()}
            idle_turns = max(0, turns - rx_bursts)
    wc = report["stages"]["ws"]["counters"] if report else {}
    recs, cbytes = wc.get("tls_records_rx", 0), wc.get("tls_bytes_rx", 0)
    print()
    print("%s callgrind, the TLS receive path by what it does (the stream dump; shared libraries' instructions go to"
          " their callers; the empty turns removed per category from the idle dump)" % BENCH)
    print("  %d messages, %d segments, %d TLS records received (%.1f messages, %.0f ciphertext bytes per record)"
          % (msgs, segs, recs, msgs / recs if recs else 0, cbytes / recs if recs else 0))
    print("  %-14s %12s %10s %12s %12s  %s" % ("category", "Ir", "Ir/msg", "Ir/record", "Ir/KiB ct", "what"))
    out = []
    total = 0.0
    for cat, what in TLS_CATS:
        ir = cats.get(cat, 0.0) - ipt.get(cat, 0.0) * idle_turns
        if abs(ir) < 0.5 and cat not in ("aes_gcm", "copy_bio", "copy_ssl", "frame_decoder", "metrics"):
            continue
        total += ir
        print("  %-14s %12.0f %10.1f %12.0f %12.1f  %s" % (cat, ir, ir / msgs, ir / recs if recs else 0,
              ir / (cbytes / 1024.0) if cbytes else 0, what))
        out.append({"category": cat, "ir": ir, "ir_per_msg": ir / msgs, "ir_per_record": ir / recs if recs else None,
                    "ir_per_kib_ciphertext": ir / (cbytes / 1024.0) if cbytes else None})
    tls = sum(o["ir"] for o in out if o["category"] in ("aes_gcm", "openssl", "openssl_err", "copy_bio", "copy_ssl",
                                                        "tls_glue"))
    print("  %-14s %12.0f %10.1f %12.0f %12.1f  all TLS (AES-GCM + OpenSSL + error queue + both copies + glue): %.0f %%"
          % ("tls", tls, tls / msgs, tls / recs if recs else 0, tls / (cbytes / 1024.0) if cbytes else 0,
             100.0 * tls / total if total else 0))
    print("  %-14s %12.0f %10.1f" % ("all", total, total / msgs))
    print("  stack/tls*.c's calls: %d SSL_read_ex (%.2f per segment, %.2f per record), %d BIO reads; its ERR_* calls"
          " with what they call: %.1f Ir/msg (%.0f per SSL call)" % (
              glue["ssl_reads"], glue["ssl_reads"] / segs if segs else 0, glue["ssl_reads"] / recs if recs else 0,
              glue["bio_reads"], glue["err_incl"] / msgs, glue["err_incl"] / glue["ssl_reads"] if glue["ssl_reads"] else 0))
    jprint({"bench": BENCH, "case": "callgrind_tls", "unit": "instructions", "messages": msgs,
                      "segments": segs, "tls_records": recs, "tls_bytes": cbytes, "ir_per_msg": total / msgs,
                      "tls_ir_per_msg": tls / msgs, "empty_turns": idle_turns, "ssl_read_calls": glue["ssl_reads"],
                      "bio_read_calls": glue["bio_reads"], "err_calls_incl_ir_per_msg": glue["err_incl"] / msgs,
                      "categories": out})


def cmd_cgk(argv):
    """B14: the kernel client's stream dump, split like lcpipe's (user space only: the kernel's TCP receive and
    its copy into the socket buffer and out of it in recv() are not counted) and, with LCPIPE_TLS_JSON (the
    callgrind_tls line of lcpipe's run at the same size), side by side"""
    argv = take_bench(argv)
    path, msgs, sbytes = argv[0], int(argv[1]), int(argv[2])
    lc = None
    if len(argv) > 3:
        for line in open(argv[3]):
            if line.startswith("{") and '"case": "callgrind_tls' in line:
                lc = json.loads(line)
    cats, _ = cg_tls_parse(path)
    glue = cats.pop("_glue")
    lcc = {c["category"]: c["ir_per_msg"] for c in lc["categories"]} if lc else {}
    print()
    print("%s callgrind, b12_kernel_client's stream (SSL_read on a kernel socket): %d messages, %d plaintext bytes"
          % (BENCH, msgs, sbytes))
    print("  %-14s %12s %10s %12s %14s  %s" % ("category", "Ir", "Ir/msg", "Ir/KiB pt", "lcpipe Ir/msg", "what"))
    out = []
    total = lct = 0.0
    for cat, what in TLS_CATS:
        ir = cats.get(cat, 0.0)
        if abs(ir) < 0.5 and cat not in lcc:
            continue
        total += ir
        lct += lcc.get(cat, 0.0)
        print("  %-14s %12.0f %10.1f %12.1f %14s  %s" % (cat, ir, ir / msgs, ir / (sbytes / 1024.0),
              "%.1f" % lcc[cat] if cat in lcc else "", what))
        out.append({"category": cat, "ir": ir, "ir_per_msg": ir / msgs})
    tcats = ("aes_gcm", "openssl", "openssl_err", "copy_bio", "copy_ssl", "tls_glue")
    tls = sum(cats.get(c, 0.0) for c in tcats)
    print("  %-14s %12.0f %10.1f %12.1f %14s  all TLS in user space" % ("tls", tls, tls / msgs, tls / (sbytes / 1024.0),
          "%.1f" % lc["tls_ir_per_msg"] if lc else ""))
    print("  %-14s %12.0f %10.1f %12s %14s" % ("all", total, total / msgs, "", "%.1f" % lc["ir_per_msg"] if lc else ""))
    jprint({"bench": BENCH, "case": "callgrind_tls_kernel_client", "unit": "instructions", "messages": msgs,
                      "plaintext_bytes": sbytes, "ir_per_msg": total / msgs, "tls_ir_per_msg": tls / msgs,
                      "lcpipe_tls_ir_per_msg": lc["tls_ir_per_msg"] if lc else None, "categories": out})
    return 0


def cmd_cg(argv):
    argv = take_bench(argv)
    path, msgs, segs = argv[0], int(argv[1]), int(argv[2])
    if len(argv) > 3 and argv[3] != "-":
        for line in open(argv[3]):
            f = line.split()
            if len(f) >= 6 and "x" in f[1]:
                lo, hi = (int(x, 16) for x in f[0].split("-"))
                MAPS.append((lo, hi, f[5]))
    comps, total, turns = cg_parse(path)
    # idle-turn correction: an idle dump of the same process (the stream not yet
    # started) gives Ir per empty turn per component; the stream's empty turns
    # are its turns minus its non-empty rx bursts (one lcore, run to completion:
    # a turn does work only when a burst of frames arrived)
    idle_per_turn, idle_turns = {}, 0
    if len(argv) > 5:
        icomps, itotal, iturns = cg_parse(argv[4])
        rx_bursts = int(argv[5])
        if iturns > 0:
            idle_per_turn = {c: (d["self"] + d["shared"]) / iturns for c, d in icomps.items()}
            idle_turns = max(0, turns - rx_bursts)
            print("idle dump: %d empty turns, %.1f Ir per empty turn (%s); stream: %d turns, %d with frames, %d empty"
                  % (iturns, itotal / iturns, ", ".join("%s %.1f" % (c, v) for c, v in sorted(idle_per_turn.items())),
                     turns, rx_bursts, idle_turns))
            removed = idle_turns * itotal / iturns
            if total and removed > 0.5 * total:
                # an empty turn's cost moves by a few instructions with the state of the
                # connection (timers armed or not): large corrections carry that error
                print("note: the empty turns were %.0f %% of what was collected; the per-stage figures carry about "
                      "+-%.0f Ir/msg of that correction's error (2 %% of an empty turn per empty turn)"
                      % (100.0 * removed / total, 0.02 * removed / msgs))
    order = ["port_ethdev", "af_packet_pmd", "memif_pmd", "tcp", "ws", "ws_libcrypto", "libssl.so.3", "metrics", "sink_null", "framework",
             "counters", "ws_handshake"]
    print("%-14s %14s %12s %12s %12s  %s" % ("component", "Ir", "Ir/msg", "Ir/segment", "idle turns",
                                            "largest calls into shared libraries (Ir/msg)"))
    out = []
    run = 0
    for comp in order + sorted(c for c in comps if c not in order):
        d = comps.get(comp)
        if d is None:
            continue
        idle = idle_per_turn.get(comp, 0.0) * idle_turns
        ir = d["self"] + d["shared"] - idle
        if comp != "ws_handshake":
            run += ir
        top = sorted(d["top_shared"].items(), key=lambda x: -x[1])[:3]
        print("%-14s %14d %12.1f %12.1f %12d  %s" % (comp, ir, ir / msgs, ir / segs if segs else 0, idle,
              ", ".join("%s %.1f" % (k, v / msgs) for k, v in top if v / msgs >= 0.5)))
        out.append({"component": comp, "ir": ir, "ir_per_msg": ir / msgs, "ir_per_segment": ir / segs if segs else None,
                    "self_ir": d["self"], "shared_lib_ir": d["shared"], "idle_turns_ir_removed": idle})
    print("%-14s %14d %12.1f %12.1f  (the stream without its empty turns and the one-off ws_handshake; collected %d)"
          % ("all", run, run / msgs, run / segs if segs else 0, total))
    jprint({"bench": BENCH, "case": "callgrind", "unit": "instructions", "messages": msgs, "segments": segs,
                      "ir_collected": total, "ir_stream": run, "ir_per_msg": run / msgs,
                      "ir_per_segment": run / segs if segs else None, "turns": turns, "empty_turns": idle_turns,
                      "components": out})
    if BENCH == "B14":
        rep = json.load(open(REPORT)) if REPORT else None
        cg_tls(path, msgs, segs, argv[4] if len(argv) > 5 else None, int(argv[5]) if len(argv) > 5 else 0, rep)
    return 0


if __name__ == "__main__":
    cmds = {"sample": cmd_sample, "report": cmd_report, "timing": cmd_timing, "cg": cmd_cg, "cgk": cmd_cgk}
    if len(sys.argv) < 2 or sys.argv[1] not in cmds:
        print(__doc__)
        sys.exit(2)
    sys.exit(cmds[sys.argv[1]](sys.argv[2:]))
