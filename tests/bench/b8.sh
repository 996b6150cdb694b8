#!/bin/bash
# B8 — WebSocket echo RTT (doc/benchmarks.md "B8"): lcpipe as the WebSocket
# client against a kernel-socket C client, both to the same echo server over
# the same veth, closed loop (one 64-byte text message outstanding), with the
# same placement. Root only (network namespaces, af_packet); SKIP (77) otherwise.
#
# Topology (two network namespaces, one veth pair, offloads off on both ends):
#
#   netns lcpb8s-PID                         netns lcpb8c-PID
#   b8_echo_server 10.88.0.1 -- veth b8sPID == b8cPID -- kernel: 10.88.0.2 (b8_kernel_client)
#   (:9001 blocking, :9002 busy-poll)                  lcpipe: net_af_packet on b8cPID,
#                                                      tcp stage 10.88.0.3, MAC 02:00:0a:58:00:03
#
# Both clients use the very same veth end: the kernel client through the
# kernel's TCP on 10.88.0.2; lcpipe through an AF_PACKET socket on that
# interface (port_ethdev on net_af_packet0, qdisc_bypass=1; transmitting with
# port_ethdev's tx_socket unless B8_TX_SOCKET=0), with its own IP
# (10.88.0.3, which the kernel does not have) and its own MAC, so the kernel
# of that namespace drops lcpipe's frames as "other host" at once and never
# answers for lcpipe's address. Offloads (TSO/GSO/GRO, tx and rx checksums)
# are off on both ends: an AF_PACKET socket would otherwise see frames with
# only partial checksums.
#
# Placement (2 CPUs, printed): the echo server on CPU $B8_SERVER_CPU (taskset),
# the kernel client on CPU $B8_CLIENT_CPU (taskset); lcpipe with EAL -l 0,1:
# main lcore 0 on CPU 0 (the control loop, asleep 2 ms at a time), worker lcore
# 1 on CPU 1 running port, tcp, ws and ws_rtt. On a veth the receive side of a
# frame runs in softirq on the CPU that sent it: client -> server on CPU 1,
# server -> client on CPU 0. No SCHED_FIFO (the machine is shared); nice
# $BENCH_NICE for the server, the clients and lcpipe.
#
# Runs: each round runs, for each server mode (blocking recv / busy-poll recv,
# alternating which goes first), the three clients in a rotating order:
# kernel_block (blocking recv), kernel_busy (recv(MSG_DONTWAIT) loop), lcpipe
# (ws stage + plugins/ws_rtt). Each run: a fresh process and connection,
# B8_WARMUP probes not recorded, then B8_COUNT recorded. Noise gate: the spin
# loop (b8_kernel_client --spin) on both CPUs before and after every run; a run
# whose spin drifted more than 10 % from the reference (median of 5 at the
# start) is re-run, at most B8_RERUNS times, then kept and counted noisy.
#
# Knobs: B8_ROUNDS (9), B8_COUNT (10000), B8_WARMUP (200), B8_SIZE (64),
# B8_SERVERS ("block busy"), B8_CLIENTS ("kernel_block kernel_busy lcpipe"),
# B8_RERUNS (2), B8_SERVER_CPU (0), B8_CLIENT_CPU (1), B8_AFP_ARGS (more
# net_af_packet devargs, default "qdisc_bypass=1"), B8_EAL_LCORES (lcpipe's
# EAL lcore option, default "-l 0,1"; for diagnostics only), B8_TX_SOCKET
# (1: port_ethdev's tx_socket, sendmmsg() on a packet socket; 0: the af_packet
# driver's TX ring), BENCH_NICE,
# BENCH_QUIET_WAIT, LCPIPE (default: the build tree's framework/lcpipe),
# B8_KEEP=1 (keep the work directory).
set -eu
. "$(dirname "$0")/common.sh"
# shellcheck disable=SC2034 # read by bench_header
BENCH_RT=0 # nothing runs SCHED_FIFO here

: "${B8_ROUNDS:=9}"
: "${B8_COUNT:=10000}"
: "${B8_WARMUP:=200}"
: "${B8_SIZE:=64}"
: "${B8_SERVERS:=block busy}"
: "${B8_CLIENTS:=kernel_block kernel_busy lcpipe}"
: "${B8_RERUNS:=2}"
: "${B8_SERVER_CPU:=0}"
: "${B8_CLIENT_CPU:=1}"
: "${B8_TX_SOCKET:=1}"
export B8_TX_SOCKET
: "${B8_AFP_ARGS:=qdisc_bypass=1}"
: "${B8_EAL_LCORES:=-l 0,1}" # a diagnostic knob: the placement B8 reports is -l 0,1

bench_need_cpus 2
[ "$(id -u)" = 0 ] || { echo "SKIP: B8 needs root (network namespaces, veth, af_packet)"; exit 77; }
for t in ip ethtool taskset timeout; do
	command -v "$t" >/dev/null || { echo "SKIP: no $t"; exit 77; }
done
[ -x "$PY" ] || { echo "SKIP: no /usr/bin/python3"; exit 77; }
SRV=$BENCH_BUILDDIR/bench/b8_echo_server
KC=$BENCH_BUILDDIR/bench/b8_kernel_client
AFPTX=$BENCH_BUILDDIR/bench/b8_afp_tx
PLUGDIR=$(cd "$BENCH_BUILDDIR/../plugins/ws_rtt/.libs" 2>/dev/null && pwd || echo "$BENCH_BUILDDIR/../plugins/ws_rtt/.libs")
for f in "$SRV" "$KC" "$AFPTX" "$LCPIPE" "$PLUGDIR/ws_rtt.so"; do
	[ -e "$f" ] || { echo "B8: $f is not built (make bench BENCH_ONLY=b8 builds it)"; exit 1; }
done

bench_header B8 "WebSocket echo RTT: lcpipe vs a kernel-socket client, same echo server, same veth"
tmp=$(mktemp -d /tmp/lcpb8.XXXXXX)
NSS=lcpb8s-$$
NSC=lcpb8c-$$
VS=b8s$$
VC=b8c$$
S_IP=10.88.0.1
K_IP=10.88.0.2
L_IP=10.88.0.3
L_MAC=02:00:0a:58:00:03
PIDS=""
LC_PID=""
cleanup() {
	# SIGTERM (timeout passes it on to lcpipe, which drains and stops)
	# shellcheck disable=SC2086 # PIDS: a list of numbers
	bench_veth_cleanup B8 "${B8_KEEP:-0}" $LC_PID $PIDS
}
trap cleanup EXIT
trap 'exit 130' INT TERM

bench_veth_pair "echo server"
echo "placement: echo server CPU $B8_SERVER_CPU (taskset); kernel client CPU $B8_CLIENT_CPU (taskset); lcpipe EAL -l 0,1: main lcore 0 = CPU 0 (control loop, sleeps), worker lcore 1 = CPU 1 (port_ethdev, tcp, ws, ws_rtt)"
echo "probes:  $B8_SIZE-byte text messages (masked client frames of $((B8_SIZE + 6)) B, echoes of $((B8_SIZE + 2)) B), closed loop; $B8_WARMUP warm-up + $B8_COUNT recorded per run; $B8_ROUNDS rounds; servers: $B8_SERVERS; clients: $B8_CLIENTS"
if [ "$(cat /proc/sys/kernel/sched_autogroup_enabled 2>/dev/null || echo 0)" = 1 ]; then
	echo "sched:   autogroup on: nice $BENCH_NICE acts only within this session, other sessions' tasks share the CPUs fairly"
fi

# servers: port 9001 blocking, 9002 busy-poll; both pinned, both always up (a
# busy-poll server spins only while a connection is open; between connections
# it blocks in accept())
declare -A PORT=([block]=9001 [busy]=9002)
for m in $B8_SERVERS; do
	rm -f "$tmp/srv.$m.ready"
	echo "+ ip netns exec $NSS taskset -c $B8_SERVER_CPU $SRV --listen $S_IP:${PORT[$m]} --mode $m"
	# not through nss(): $! must be the process that becomes the server
	ip netns exec "$NSS" nice -n "$BENCH_NICE" taskset -c "$B8_SERVER_CPU" "$SRV" --listen "$S_IP:${PORT[$m]}" --mode "$m" \
		--ready-file "$tmp/srv.$m.ready" >"$tmp/srv.$m.out" 2>"$tmp/srv.$m.err" </dev/null &
	PIDS="$PIDS $!"
	for _ in $(seq 100); do [ -e "$tmp/srv.$m.ready" ] && break; sleep 0.05; done
	[ -e "$tmp/srv.$m.ready" ] || { echo "B8: the $m echo server did not start"; cat "$tmp/srv.$m.err"; exit 1; }
done

# TSC rate (the kernel's view, CLOCK_MONOTONIC_RAW) and the gate's reference
bench_wait_quiet
echo "start:   $(date -u '+%Y-%m-%d %H:%M:%S UTC'); load $(cut -d' ' -f1-3 /proc/loadavg)"
bench_kgate_init "$B8_CLIENT_CPU"
# diagnostic: one small frame on the veth through af_packet's TX ring (what the
# driver does) and through sendmmsg() (port_ethdev's tx_socket), alternated,
# dropped at IP by the server namespace (bench/b8_afp_tx.c)
S_MAC=$(ip -n "$NSS" -o link show "$VS" | sed -n 's/.*link\/ether \([0-9a-f:]*\).*/\1/p')
AFP_TX=$(nsc nice -n "$BENCH_NICE" taskset -c "$B8_CLIENT_CPU" "$AFPTX" --iface "$VC" --dst-mac "$S_MAC" \
	--count 20000 --size $((B8_SIZE + 60)))
echo "afp tx:  $AFP_TX (cycles per $((B8_SIZE + 60))-byte frame on $VC, dropped at IP by the peer: ring = af_packet TX ring + sendto() kick, mmsg = sendmmsg())"
echo "{\"bench\": \"B8\", \"case\": \"afp_tx\", \"tsc_hz\": $TSC_HZ, \"result\": $AFP_TX}"
RT_S0=$(bench_retrans "$NSS")
RT_C0=$(bench_retrans "$NSC")

LC_LCORES_JSON=$(printf '"%s", ' $B8_EAL_LCORES)
LC_LCORES_JSON=${LC_LCORES_JSON%, }
[ "$B8_EAL_LCORES" = "-l 0,1" ] || echo "placement: lcpipe EAL $B8_EAL_LCORES (B8_EAL_LCORES; not the reported placement)"
export RUNTIME_DIRECTORY=$tmp/rt
mkdir -p "$RUNTIME_DIRECTORY"
LC_PORT_OPTS=""
[ "$B8_TX_SOCKET" = 1 ] && LC_PORT_OPTS=', "tx_socket": true'
NLC=0
lc_conf() { # server-mode -> $tmp/lc.N.json
	NLC=$((NLC + 1))
	cat >"$tmp/lc.$NLC.json" <<JSON
{ "name": "B8 lcpipe client ($1 server)",
  "eal": ["--no-huge", "--no-pci", "--no-shconf", "-m", "256", $LC_LCORES_JSON,
          "--file-prefix=lcpb8-$$-$NLC", "--vdev=net_af_packet0,iface=$VC${B8_AFP_ARGS:+,$B8_AFP_ARGS}",
          "--log-level=lib.eal:error"],
  "engine": {"duration": 60, "drain_timeout": 1.0},
  "plugin_path": ["$PLUGDIR"],
  "stages": [
    {"name": "port", "plugin": "port_ethdev", "lcore": 1, "options": {"device": "net_af_packet0"$LC_PORT_OPTS}},
    {"name": "tcp", "plugin": "tcp", "lcore": 1,
     "options": {"ip": "$L_IP/24", "device": "net_af_packet0", "mac": "$L_MAC"}},
    {"name": "ws", "plugin": "ws", "lcore": 1,
     "options": {"url": "ws://$S_IP:${PORT[$1]}/b8", "subscribe": "b8 start"}},
    {"name": "rtt", "plugin": "ws_rtt", "lcore": 1,
     "options": {"count": $B8_COUNT, "warmup": $B8_WARMUP, "size": $B8_SIZE,
                 "result": "$tmp/lc.$NLC.result.json"}}],
  "links": ["port.rx -> tcp.rx", "tcp.tx -> port.tx", "tcp.data -> ws.in", "ws.tx -> tcp.app",
            "ws.msg -> rtt.in", "rtt.out -> ws.send"] }
JSON
}

# run_client SERVER CLIENT OUT: one run; OUT gets the result line; 0 = ok
run_client() {
	local srv=$1 cl=$2 out=$3 rc=0
	case $cl in
	kernel_block | kernel_busy)
		nsc nice -n "$BENCH_NICE" taskset -c "$B8_CLIENT_CPU" "$KC" --connect "$S_IP:${PORT[$srv]}" \
			--mode "${cl#kernel_}" --count "$B8_COUNT" --warmup "$B8_WARMUP" --size "$B8_SIZE" \
			>"$out" 2>"$out.err" </dev/null || rc=$?
		if [ $rc != 0 ]; then
			echo "B8: $cl against the $srv server failed ($rc): $(cat "$out.err")"
			return 1
		fi
		;;
	lcpipe)
		lc_conf "$srv"
		ip netns exec "$NSC" nice -n "$BENCH_NICE" timeout -k 5 90 "$LCPIPE" run "$tmp/lc.$NLC.json" --no-live \
			--report "$tmp/lc.$NLC.report.json" >"$tmp/lc.$NLC.log" 2>&1 </dev/null &
		LC_PID=$!
		wait "$LC_PID" || rc=$?
		LC_PID=""
		if [ $rc != 0 ] || ! grep -q '"complete":true' "$tmp/lc.$NLC.result.json" 2>/dev/null; then
			echo "B8: lcpipe against the $srv server failed (exit $rc); its log ($tmp/lc.$NLC.log), last 25 lines:"
			tail -n 25 "$tmp/lc.$NLC.log"
			[ -e "$tmp/lc.$NLC.result.json" ] && cut -c1-600 "$tmp/lc.$NLC.result.json"
			return 1
		fi
		cp "$tmp/lc.$NLC.result.json" "$out"
		echo "$tmp/lc.$NLC.report.json" >"$out.report"
		;;
	esac
	return 0
}

echo "+ $(basename "$KC") --connect $S_IP:PORT --mode block|busy --count $B8_COUNT --warmup $B8_WARMUP --size $B8_SIZE  (ip netns exec $NSC taskset -c $B8_CLIENT_CPU)"
echo "+ lcpipe run lc.N.json --no-live --report lc.N.report.json  (ip netns exec $NSC; EAL -l 0,1 --vdev=net_af_packet0,iface=$VC${B8_AFP_ARGS:+,$B8_AFP_ARGS}; port_ethdev tx_socket: $([ "$B8_TX_SOCKET" = 1 ] && echo "on (sendmmsg on a packet socket)" || echo "off (the driver's TX ring)"))"
: >"$tmp/runs.tsv"
t_start=$(date +%s)
failed=0
bench_krounds "$B8_ROUNDS" "$B8_RERUNS" "$tmp/res." ".json" "$B8_SERVERS" "$B8_CLIENTS" run_client
RT_S1=$(bench_retrans "$NSS")
RT_C1=$(bench_retrans "$NSC")
sleep 0.3 # the servers' last per-connection lines
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg); $(($(date +%s) - t_start)) s"
echo "kernel TCP retransmissions during the runs: server netns $((RT_S1 - RT_S0)), client netns $((RT_C1 - RT_C0))"

"$PY" - "$tmp" "$TSC_HZ" "$B8_COUNT" "$B8_WARMUP" "$B8_SIZE" "$B8_SERVERS" "$B8_CLIENTS" \
	"$B8_SERVER_CPU" "$B8_CLIENT_CPU" <<'PY' || failed=$((failed + 1))
import json, os, sys, statistics as stat
tmp, hz, count, warmup, size = sys.argv[1], float(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5])
servers, clients = sys.argv[6].split(), sys.argv[7].split()
scpu, ccpu = sys.argv[8], sys.argv[9]
us = lambda c: c * 1e6 / hz if c is not None else float("nan")  # p99.9 is null below 1000 probes
runs = [l.rstrip("\n").split("\t") for l in open(tmp + "/runs.tsv") if l.strip()]
res, bad = {}, 0
jl = [] # JSON result lines, printed at the end
gate = {}
for r, srv, cl, a, path, st in runs:
    g = gate.setdefault((srv, cl), {"rerun": 0, "noisy": 0, "failed": 0})
    if st in g:
        g[st] += 1
    if st in ("kept", "noisy"):
        j = json.loads(open(path).read())
        if j.get("rtt", {}).get("n") != count:
            print("FAIL: %s: %s samples, expected %d" % (path, j.get("rtt", {}).get("n"), count)); bad += 1
        res[(int(r), srv, cl)] = j

# the servers saw every frame: per connection, in run order
for srv in servers:
    lines = [json.loads(l) for l in open("%s/srv.%s.out" % (tmp, srv)) if l.startswith("{")]
    att = [x for x in runs if x[1] == srv]
    exp = [warmup + count + (1 if x[2] == "lcpipe" else 0) for x in att if x[5] != "failed"]
    got = [l["frames"] for l in lines]
    if got[:len(exp)] != exp:
        print("FAIL: the %s server's echoed frames per connection %s != expected %s" % (srv, got[:8], exp[:8])); bad += 1
    else:
        print("check: the %s server echoed every probe of all %d connections (%d frames)" % (srv, len(exp), sum(exp)))

def hist_merge(hs):
    m = {}
    for h in hs:
        for lo, c in h["hist"]:
            m[lo] = m.get(lo, 0) + c
    return m
def hist_pct(m, n, q, mn, mx, sub=6):
    rank = max(1, min(n, int(q * n + 0.999999)))
    acc = 0
    for lo in sorted(m):
        acc += m[lo]
        if acc >= rank:
            w = 1 if lo < (1 << sub) else 1 << (lo.bit_length() - 1 - sub)
            return min(max(lo + (w - 1) / 2.0, mn), mx)
    return mx
def pooled(hs):
    m = hist_merge(hs)
    n = sum(h["n"] for h in hs)
    mn, mx = min(h["min"] for h in hs), max(h["max"] for h in hs)
    return n, {q: hist_pct(m, n, p, mn, mx) for q, p in (("p50", .5), ("p99", .99), ("p99_9", .999))}, mx
def q13(v):
    v = sorted(v)
    if len(v) < 2:
        return v[0], v[0]
    qs = stat.quantiles(v, n=4, method="inclusive")
    return qs[0], qs[2]

rounds = sorted({k[0] for k in res})
print()
print("B8 per run (µs; TSC %.0f Hz; %d recorded probes per run)" % (hz, count))
print("%-5s %-6s %-13s %9s %9s %9s %9s %9s" % ("round", "server", "client", "min", "p50", "p99", "p99.9", "max"))
for r in rounds:
    for srv in servers:
        for cl in clients:
            j = res.get((r, srv, cl))
            if j is None:
                continue
            h = j["rtt"]
            print("%-5d %-6s %-13s %9.2f %9.2f %9.2f %9.2f %9.1f" % (r, srv, cl, us(h["min"]), us(h["p50"]), us(h["p99"]),
                  us(h["p99_9"]), us(h["max"])))

print()
print("B8 summary: echo RTT in µs, medians over runs (IQR of the per-run p50s); pooled = all runs' histograms merged")
print("%-6s %-13s %4s %8s %8s %17s %8s %8s %9s %8s %8s %8s %9s %13s" % ("server", "client", "runs", "best p50", "p50", "(IQR)",
      "p99", "p99.9", "max", "pool p50", "pool p99", "p99.9", "samples", "noisy/re-runs"))
summ = {}
for srv in servers:
    for cl in clients:
        js = [res[(r, srv, cl)] for r in rounds if (r, srv, cl) in res]
        if not js:
            continue
        hs = [j["rtt"] for j in js]
        p50s = [h["p50"] for h in hs]
        q1, q3 = q13(p50s)
        n, pp, mx = pooled(hs)
        s = {"runs": len(js), "p50": stat.median(p50s), "p50_q1": q1, "p50_q3": q3,
             "p99": stat.median([h["p99"] for h in hs]), "p99_9": stat.median([h["p99_9"] for h in hs]),
             "max": mx, "pooled_n": n, "pooled": pp, "min": min(h["min"] for h in hs)}
        summ[(srv, cl)] = s
        g = gate.get((srv, cl), {})
        print("%-6s %-13s %4d %8.2f %8.2f %17s %8.2f %8.2f %9.1f %8.2f %8.2f %8.2f %9d %6d/%-6d" % (
            srv, cl, len(js), us(min(p50s)), us(s["p50"]), "(%.2f-%.2f)" % (us(q1), us(q3)), us(s["p99"]), us(s["p99_9"]), us(mx),
            us(pp["p50"]), us(pp["p99"]), us(pp["p99_9"]), n, g.get("noisy", 0), g.get("rerun", 0)))
        jl.append(json.dumps({"bench": "B8", "case": "%s.%s" % (srv, cl), "unit": "cycles/round trip", "tsc_hz": hz,
                          "size": size, "runs": len(js), "samples_per_run": count, "median_p50": s["p50"],
                          "p50_q1": q1, "p50_q3": q3, "median_p99": s["p99"], "median_p99_9": s["p99_9"],
                          "max": mx, "min": s["min"], "pooled_samples": n, "pooled_p50": pp["p50"],
                          "pooled_p99": pp["p99"], "pooled_p99_9": pp["p99_9"],
                          "median_p50_us": round(us(s["p50"]), 3), "reruns": g.get("rerun", 0),
                          "kept_noisy": g.get("noisy", 0), "failed": g.get("failed", 0),
                          "placement": {"server_cpu": int(scpu), "client_cpu": int(ccpu),
                                        "lcpipe": "-l 0,1, stages on lcore 1"},
                          "lcpipe_tx": "tx_socket" if os.environ.get("B8_TX_SOCKET") == "1" else "af_packet tx ring"}))

# lcpipe's own split of its round trip
print()
print("Where the time goes (µs: median of per-run p50s / pooled p99 / pooled p99.9). tx_call: from the send stamp until the send returned -- lcpipe:")
print("lcp_emit() of the probe (ws encode, tcp, port tx: sendmmsg() with tx_socket, else af_packet's sendto() kick; inside either the kernel runs the veth and")
print("the server side's TCP receive in softirq); kernel: send(). lcpipe only: wire = send stamp -> port rx stamp of the echo;")
print("rx_path = port rx stamp -> ws_rtt (tcp, ws decode); rtt = wire + rx_path")
for srv in servers:
    for cl in clients:
        js = [res[(r, srv, cl)] for r in rounds if (r, srv, cl) in res]
        if not js:
            continue
        ks = [k for k in ("tx_call", "wire", "rx_path", "rtt") if k in js[0]]
        m = {k: (stat.median([j[k]["p50"] for j in js]), pooled([j[k] for j in js])[1]) for k in ks}
        print("  %-5s server, %-13s " % (srv, cl) + ", ".join("%s %.2f/%.1f/%.1f" % (k, us(m[k][0]), us(m[k][1]["p99"]),
              us(m[k][1]["p99_9"])) for k in ks))

print()
print("B8 ratios of p50 (median of per-round ratios; min-max); target: lcpipe/kernel_block <= 0.48 (52 % below) and lcpipe/kernel_busy <= 1.00")
for srv in servers:
    for anchor, lim in (("kernel_block", 0.48), ("kernel_busy", 1.0)):
        rs = [res[(r, srv, "lcpipe")]["rtt"]["p50"] / res[(r, srv, anchor)]["rtt"]["p50"] for r in rounds
              if (r, srv, "lcpipe") in res and (r, srv, anchor) in res]
        if not rs:
            continue
        r99 = [res[(r, srv, "lcpipe")]["rtt"]["p99"] / res[(r, srv, anchor)]["rtt"]["p99"] for r in rounds
               if (r, srv, "lcpipe") in res and (r, srv, anchor) in res]
        med = stat.median(rs)
        met = med <= lim
        print("  %-5s server: lcpipe / %-12s p50 %.3f (%.3f-%.3f, %d pairs) -> %s; p99 ratio %.3f" % (
            srv, anchor, med, min(rs), max(rs), len(rs), "target met" if met else "target NOT met", stat.median(r99)))
        jl.append(json.dumps({"bench": "B8", "case": "%s.lcpipe_over_%s" % (srv, anchor), "ratio_p50": med,
                          "ratio_p50_min": min(rs), "ratio_p50_max": max(rs), "pairs": len(rs), "ratio_p99": stat.median(r99),
                          "target": lim, "target_met": met}))
print()
for l in jl:
    print(l)
sys.exit(1 if bad else 0)
PY
# lcpipe's reports: leaks, drops, retransmissions
"$PY" - "$tmp" <<'PY' || failed=$((failed + 1))
import glob, json, sys
leaks = drops = 0
rt = {"tcp_retransmits": 0, "tcp_rto_expired": 0}
n = 0
for p in sorted(glob.glob(sys.argv[1] + "/lc.*.report.json")):
    r = json.load(open(p))
    n += 1
    leaks += r.get("leaked_objects", 1)
    for s in r.get("stages", {}).values():
        drops += s.get("drops", 0)
    c = r.get("stages", {}).get("tcp", {}).get("counters", {})
    for k in rt:
        rt[k] += c.get(k, 0)
    if r.get("stop_reason") != "ws_rtt: done":
        print("FAIL: %s: stop reason %r" % (p, r.get("stop_reason")))
        leaks += 1
print("lcpipe runs: %d; leaked objects %d, drops %d, retransmissions %d (RTO %d)" % (n, leaks, drops,
      rt["tcp_retransmits"], rt["tcp_rto_expired"]))
sys.exit(1 if leaks else 0)
PY
[ "$failed" = 0 ] || { echo "B8: $failed run(s) or check(s) failed"; exit 1; }
exit 0
