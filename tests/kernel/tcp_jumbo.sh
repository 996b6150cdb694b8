#!/bin/bash
# L2: jumbo frames. The tcp stage at "mtu" 9000 (MSS 8960) against the
# kernel's TCP over a veth whose two ends have MTU 9000: lcpipe's port on
# net_af_packet (LCP_TCP_PORT=af_packet in tcp_lib.sh) with ring frames that
# hold a 9014-byte frame and mbufs that hold a ring frame (engine
# mbuf_data_room 10368: 10,240 bytes of room). DPDK 22.11's af_packet driver
# refuses an MTU above 1500 at configure (its max frame is 1518) but carries
# what its ring frames hold, so the port keeps its nominal 1500.
# Asserts:
#  1. receive: 32 MiB from tcp_peer.py serve-send, byte-exact; the kernel sent
#     in segments of our MSS (its snd_mss: 8960 less 12 bytes of timestamps)
#     and the stack's segments averaged more than a 1500-byte MTU carries; the
#     tcp stage warned at start that its mtu is above the device's;
#  2. send: 32 MiB to serve-recv in SENDs of one MSS (tcp_app seg_size 8948:
#     with smaller SENDs the segments' size depends on timing, no Nagle),
#     byte-exact; the kernel received segments of that size (its rcv_mss) and
#     the stack's averaged more than 1460 bytes;
#  3. the port stage given "mtu" 9000 is refused at init (exit 1), the message
#     giving the range the driver takes (up to 1500);
#  4. the same config with engine.mbuf_data_room too small for a 9014-byte
#     frame is refused by `lcpipe check` (exit 78), the message naming the
#     room it needs.
# Runs 1 and 2: lcpipe exits 0, leaked_objects == 0.
export LCP_TCP_PORT=af_packet
. "$(dirname "$0")/tcp_lib.sh"

SIZE=${TCP_JUMBO_BYTES:-33554432} # 32 MiB
DURATION=${DURATION_JUMBO:-60}
MTU=9000
# af_packet: ring frames of 10 KiB, two to a block (the driver walks the ring
# at a stride of framesz: a block must hold whole frames, no slack); a ring
# frame's data (framesz - 32 bytes) must fit one mbuf, so 10,240 bytes of room
# (mbuf_data_room = room + 128 bytes of headroom)
ROOM=10368
VDEV=net_af_packet0,iface=lcpv,qdisc_bypass=1,framecnt=1024,framesz=10240,blocksz=20480
nsx ip link set "$TAP" mtu $MTU || skip "cannot set MTU $MTU on the veth"
ip netns exec "$NS_LC" ip link set lcpv mtu $MTU || skip "cannot set MTU $MTU on the veth"
rand_file "$W/file" "$SIZE"
say "file: $SIZE bytes, sha256 $SHA; mtu $MTU on both ends"

ENG="\"mbuf_data_room\": $ROOM, \"mbufs\": 4096"

# 1. receive
peer_start r serve-send --port 5011 --file "$W/file" --timeout $((DURATION + 20)) || finish
tcp_conf r '"mode": "recv", "connect": "10.77.0.1:5011", "expect": 1' "\"mtu\": $MTU" "$ENG"
lcpipe_peer_run serve-send
pycheck "received over mtu $MTU" res="$RESULT" rep="$REPORT" peer="$PEER_OUT" size="$SIZE" sha="$SHA" <<'PY' || show "$LOG"
r, rep, p = J("res"), J("rep"), J("peer")
size, sha = int(A["size"]), A["sha"]
check(p.get("sent") == size and p.get("sha256") == sha, "the kernel sent the whole file", p)
check(8948 <= p.get("snd_mss", 0) <= 8960,
      "the kernel sent in segments of our MSS, 8960 less 12 of timestamps: snd_mss %s" % p.get("snd_mss"),
      p.get("snd_mss"))
c = conn0(r)
check(c["bytes_in"] == size and c["sha256_in"] == sha, "received exactly the file", c)
ev = c["events"]
check(ev["reset"] == 0 and ev["timeout"] == 0 and ev["error"] == 0, "events: no reset, timeout or error", ev)
t = rep.get("stages", {}).get("tcp", {}).get("counters", {})
segs, by = t.get("tcp_segs_in", 0), t.get("tcp_bytes_in", 0)
check(segs > 0 and by / segs > 1460, "the stack's segments in averaged more than 1460 bytes: %s / %s" % (by, segs), t)
check(t.get("drop_multiseg", 0) == 0, "no chained frame dropped", t.get("drop_multiseg"))
PY
report_common
want="options.mtu: $MTU is above the MTU $PDEV reports (1500)"
if grep -qF "$want" "$LOG"; then
	ok "warned at start: $want"
else
	fail "no \"$want\" in the log"
	show "$LOG"
fi

# 2. send
peer_start s serve-recv --port 5012 --conns 1 --timeout $((DURATION + 20)) || finish
tcp_conf s "\"mode\": \"send\", \"connect\": \"10.77.0.1:5012\", \"expect\": 1, \"file\": \"$W/file\", \"send_mbufs\": 2048, \"seg_size\": 8948" \
	"\"mtu\": $MTU, \"sndbuf\": 8388608" "$ENG"
lcpipe_peer_run serve-recv
pycheck "sent over mtu $MTU" res="$RESULT" rep="$REPORT" peer="$PEER_OUT" size="$SIZE" sha="$SHA" <<'PY' || show "$LOG"
r, rep, p = J("res"), J("rep"), J("peer")
size, sha = int(A["size"]), A["sha"]
k = kernel_got_file(p, size, sha)
check(8948 <= k.get("rcv_mss", 0) <= 8960,
      "the kernel received segments of 8960 bytes less options: rcv_mss %s" % k.get("rcv_mss"), k.get("rcv_mss"))
c = conn0(r)
check(c["bytes_out"] == size and c["send_done"], "tcp_app handed all %d bytes to tcp" % size, c)
t = rep.get("stages", {}).get("tcp", {}).get("counters", {})
segs, by = t.get("tcp_segs_out", 0), t.get("tcp_bytes_out", 0)
check(segs > 0 and by / segs > 1460, "the stack's segments out averaged more than 1460 bytes: %s / %s" % (by, segs), t)
ev = c["events"]
check(ev["reset"] == 0 and ev["timeout"] == 0 and ev["error"] == 0, "events: no reset, timeout or error", ev)
PY
report_common

# 3. the port given "mtu" 9000: refused at init, with the range the driver
# takes (ethdev's frame bound, not only its max_mtu)
PORT_OPTS="\"mtu\": $MTU"
tcp_conf p '"mode": "recv"' "\"mtu\": $MTU" "$ENG"
PORT_OPTS=""
run_lcpipe "$CONF" "$REPORT" "$LOG"
wait "$LC_PID"
LC_RC=$?
expect_lc_rc 1
want="mtu $MTU is outside what $PDEV accepts: [0-9]*\.\.1500\$"
if grep -q "$want" "$LOG"; then
	ok "refused at init: $want"
else
	fail "no \"$want\" in the log"
	show "$LOG"
fi

# 4. mbufs too small for the frame: refused by lcpipe check
tcp_conf c '"mode": "recv"' "\"mtu\": $MTU"
"$LCPIPE" check "$CONF" >"$W/check.out" 2>&1
rc=$?
want="stages[1].options: mtu $MTU makes frames of 9014 bytes, more than one mbuf holds (2048: engine.mbuf_data_room less 128 of headroom); raise engine.mbuf_data_room to 9142 or more"
if [ "$rc" -eq 78 ] && grep -qF "error: $want" "$W/check.out"; then
	ok "lcpipe check refused it (78): $want"
else
	fail "lcpipe check exited $rc, expected 78 with \"error: $want\""
	show "$W/check.out"
fi
finish
