#!/bin/bash
# L2: lcpipe's TCP against the Linux kernel's through seeded faults. The fault
# stage (plugins/fault) sits between the port (net_tap in the namespace,
# tests/kernel/tcp_lib.sh) and the tcp stage, both directions:
#     port.rx -> fault.a_in, fault.a_out -> tcp.rx     (kernel -> lcpipe)
#     tcp.tx  -> fault.b_in, fault.b_out -> port.tx    (lcpipe -> kernel)
# 1 % drop, 1 % reorder, 0.5 % duplicate, 0.1 % corrupt each way. Then
#   (a) the kernel sends a random file to tcp_app (recv);
#   (b) tcp_app sends a random file to the kernel (send).
# Asserts, for each: lcpipe exits 0; the receiver got exactly the file (bytes and
# SHA-256) and, for (b), EOF; no reset / timeout / refused send; every fault kind
# was injected in the data direction; the data sender retransmitted (for (a) the
# kernel: nstat TcpRetransSegs in the namespace; for (b) lcpipe: tcp_retransmits);
# lcpipe's checksum drops equal what direction a corrupted (the fault stage feeds
# tcp.rx directly); the kernel counted checksum errors when direction b corrupted
# a frame (nstat TcpInCsumErrors + IpInHdrErrors, at least one and at most the
# corrupted count plus direction b's duplicates); tcp queued out-of-order and
# duplicate segments; leaked_objects == 0. Prints the figures of
# doc/reliability.md section 2.
. "$(dirname "$0")/tcp_lib.sh"

"$LCPIPE" describe fault >/dev/null 2>&1 || skip "the fault plugin is not built"
command -v nstat >/dev/null || skip "no nstat (iproute2)"

RECV=${TCP_FAULT_RECV_BYTES:-16777216}
SEND=${TCP_FAULT_SEND_BYTES:-4194304}
DURATION=${DURATION_FAULT:-50}
SNDBUF=8388608
SEND_MBUFS=2048
MIX='"drop": 0.01, "reorder": 0.01, "duplicate": 0.005, "corrupt": 0.001'

# fault_conf TAG SEED APP_OPTIONS [TCP_OPTIONS]: tcp_conf (tcp_lib.sh) with the
# fault stage (seed SEED, MIX) between port and tcp. Sets CONF, RESULT, REPORT,
# LOG, GO.
fault_conf() {
	tcp_conf "$1" "$3" "${4:-}" '"mbufs": 32767' "\"seed\": $2, $MIX"
}

# the namespace's kernel counters we look at, "NAME VALUE" lines
kstat() {
	nsx nstat -asz TcpRetransSegs TcpInCsumErrors IpInHdrErrors TcpExtTCPSACKRecovery \
		TcpExtTCPSACKReorder TcpExtTCPDSACKRecv TcpExtTCPTimeouts 2>/dev/null |
		awk '$1 ~ /^(Tcp|Ip)/ {print $1, $2}'
}

# check WHAT: the assertions for the last run ($RESULT, $REPORT, peer output,
# kernel counters before/after)
run_check() {
	pycheck "$1" res="$RESULT" rep="$REPORT" peer="$PEER_OUT" size="$2" sha="$3" dir="$4" \
		k0="$W/$5.k0" k1="$W/$5.k1" <<'PY' || show "$LOG"
r, rep, p = J("res"), J("rep"), J("peer")
size, sha, d = int(A["size"]), A["sha"], A["dir"]
def kread(path):
    v = {}
    for line in open(path):
        k, n = line.split()
        v[k] = int(n)
    return v
k0, k1 = kread(A["k0"]), kread(A["k1"])
kd = {k: k1.get(k, 0) - k0.get(k, 0) for k in set(k0) | set(k1)}
S = rep.get("stages", {})
f = S.get("fault", {}).get("counters", {})
t = S.get("tcp", {}).get("counters", {})
c = conn0(r)
if d == "recv":
    check(c["bytes_in"] == size and c["sha256_in"] == sha, "lcpipe received exactly the file (%d bytes, sha256)" % size,
          (c["bytes_in"], c["sha256_in"]))
    check(kd.get("TcpRetransSegs", 0) > 0, "the kernel retransmitted (TcpRetransSegs %d)" % kd.get("TcpRetransSegs", 0), kd)
    data, acks = "a", "b"
else:
    kernel_got_file(p, size, sha)
    check(r.get("refused_sends") == 0, "no SEND refused by tcp (ENOBUFS)", r.get("refused_sends"))
    check(t.get("tcp_retransmits", 0) > 0, "lcpipe retransmitted (tcp_retransmits %d)" % t.get("tcp_retransmits", 0))
    data, acks = "b", "a"
check(c["events"]["reset"] == 0 and c["events"]["timeout"] == 0, "no reset / timeout", c["events"])
for kind in ("drop_%s_injected", "%s_reordered", "%s_duplicated"):
    check(f.get(kind % data, 0) > 0, "fault injected %s in the data direction" % (kind % data), f.get(kind % data))
check(f.get("a_corrupted", 0) + f.get("b_corrupted", 0) > 0, "fault corrupted frames",
      (f.get("a_corrupted"), f.get("b_corrupted")))
# direction a feeds tcp.rx directly: every corrupted frame is a checksum drop
lc = t.get("drop_ip_csum", 0) + t.get("drop_tcp_csum", 0)
check(f.get("a_corrupted", 0) - f.get("drop_a_held_at_stop", 0) <= lc <= f.get("a_corrupted", 0),
      "lcpipe's checksum drops (%d) == frames corrupted toward it (%d)" % (lc, f.get("a_corrupted", 0)))
# direction b reaches the kernel through the tap (frames queued at stop may be lost)
kc = kd.get("TcpInCsumErrors", 0) + kd.get("IpInHdrErrors", 0)
bc = f.get("b_corrupted", 0)
if bc > 0:
    check(0 < kc <= bc + f.get("b_duplicated", 0),
          "the kernel's checksum errors (%d) match frames corrupted toward it (%d)" % (kc, bc), kd)
else:
    check(kc == 0, "no frame corrupted toward the kernel, no checksum error there", kd)
check(t.get("tcp_ooo_segs", 0) + t.get("tcp_dup_segs", 0) + t.get("tcp_dup_acks_in", 0) > 0,
      "tcp saw out-of-order / duplicate segments or duplicate acks")
check(rep.get("leaked_objects") == 0, "leaked_objects == 0", rep.get("leaked_objects"))
inj = ", ".join("%s %d/%d" % (n, f.get(k % "a", 0), f.get(k % "b", 0)) for n, k in (
    ("dropped", "drop_%s_injected"), ("reordered", "%s_reordered"), ("duplicated", "%s_duplicated"),
    ("corrupted", "%s_corrupted")))
print("figures: %s: %d bytes in %.2f s; injected (to lcpipe/to kernel): %s" % (d, size, rep.get("duration_s", 0), inj))
print("figures: lcpipe tcp: retransmits %d (fast %d, rto %d), ooo %d, dup segs %d, csum drops %d" % (
      t.get("tcp_retransmits", 0), t.get("tcp_fast_retransmits", 0), t.get("tcp_rto_expired", 0),
      t.get("tcp_ooo_segs", 0), t.get("tcp_dup_segs", 0), lc))
print("figures: kernel: " + ", ".join("%s %d" % (k, kd[k]) for k in sorted(kd)))
PY
}

# kstat_to TAG 0|1: kstat before / after run TAG, in $W/TAG.k0 / .k1
kstat_to() {
	kstat >"$W/$1.k$2"
}

say "== (a) kernel -> lcpipe, $RECV bytes"
rand_file "$W/fa" "$RECV"
peer_start fa serve-send --port 5021 --file "$W/fa" --timeout $((DURATION + 20)) || finish
fault_conf fa 31 "\"mode\": \"recv\", \"connect\": \"$K_IP:5021\", \"expect\": 1"
lcpipe_peer_run serve-send kstat_to fa
run_check "(a) kernel -> lcpipe through faults" "$RECV" "$SHA" recv fa

say "== (b) lcpipe -> kernel, $SEND bytes"
rand_file "$W/fb" "$SEND"
peer_start fb serve-recv --port 5022 --conns 1 --timeout $((DURATION + 20)) || finish
fault_conf fb 32 "\"mode\": \"send\", \"connect\": \"$K_IP:5022\", \"expect\": 1, \"file\": \"$W/fb\", \"send_mbufs\": $SEND_MBUFS" \
	"\"sndbuf\": $SNDBUF"
lcpipe_peer_run serve-recv kstat_to fb
run_check "(b) lcpipe -> kernel through faults" "$SEND" "$SHA" send fb
finish
