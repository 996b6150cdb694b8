#!/bin/bash
# L2 (e): loss. The kernel peer sits behind a router namespace (topo_routed in
# tcp_lib.sh) whose nftables forward hook drops every 50th TCP segment in each
# direction (nft_drop_every 50): a real loss for both TCPs. Then
#   (a) the kernel sends 32 MiB to tcp_app (recv), as tcp_recv.sh;
#   (b) tcp_app sends 16 MiB to the kernel (send), as tcp_send.sh;
#   (c) the same with the tcp stage's "congestion": "bbr" (stack/tcp_bbr.c).
# Asserts, for each: lcpipe exits 0; the bytes that arrived are exactly the file
# (count and SHA-256); nft did drop segments in the sender's direction; no reset
# or timeout; leaked_objects == 0. For (b), the tcp stage's counter
# tcp_retransmits is > 0 (it lost data segments and sent them again), recovery
# went through the SACK scoreboard (tcp_sack_retransmits, tcp_sack_recoveries
# and tcp_sack_blocks_in > 0) and RTOs were rare (tcp_rto_expired at most a
# tenth of tcp_sack_recoveries, or 3); for (a) tcp_retransmits is reported, and
# the stage queued out-of-order segments (tcp_ooo_segs > 0: the loss did reach
# it). (c) has the checks of (b); its retransmissions per segment dropped are
# reported, not bounded: 1.6 and 5.6 in two runs of 2026-12-07 (doc/tcp.md,
# BBR's limits).
. "$(dirname "$0")/tcp_lib.sh"

RECV=${TCP_LOSS_RECV_BYTES:-33554432}
SEND=${TCP_LOSS_SEND_BYTES:-16777216}
DROP=${TCP_LOSS_EVERY:-50}
DURATION=${DURATION_LOSS:-60}
SNDBUF=${TCP_SNDBUF:-8388608}   # >= SEND_MBUFS * 1400, see tcp_send.sh
SEND_MBUFS=${TCP_SEND_MBUFS:-4096}
topo_routed
nft_drop_every "$DROP" || { fail "nft: cannot install the drop rules"; finish; }
ok "nft drops every ${DROP}th TCP segment in each direction (forward hook)"

# nft_snap 0|1: the nft drop counters before (d0) / after (d1) a run
nft_snap() {
	if [ "$1" = 0 ]; then d0=$(nft_dropped); else d1=$(nft_dropped); fi
}

say "== (a) kernel -> lcpipe, $RECV bytes"
rand_file "$W/fa" "$RECV"
peer_start la serve-send --port 5011 --file "$W/fa" --timeout $((DURATION + 20)) || finish
tcp_conf la "\"mode\": \"recv\", \"connect\": \"$PEER_IP:5011\", \"expect\": 1"
lcpipe_peer_run serve-send nft_snap
say "nft dropped (to kernel, to lcpipe): before $d0, after $d1"
pycheck "(a) recv with loss" res="$RESULT" rep="$REPORT" size="$RECV" sha="$SHA" d0="$d0" d1="$d1" <<'PY' || show "$LOG"
r, rep = J("res"), J("rep")
size, sha = int(A["size"]), A["sha"]
d0, d1 = [int(v) for v in A["d0"].split()], [int(v) for v in A["d1"].split()]
check(d1[1] - d0[1] > 0, "nft dropped kernel -> lcpipe segments: %d" % (d1[1] - d0[1]), (d0, d1))
c = conn0(r)
check(c["bytes_in"] == size and c["sha256_in"] == sha, "received exactly the file (%d bytes, sha256)" % size,
      (c["bytes_in"], c["sha256_in"]))
check(c["events"]["reset"] == 0 and c["events"]["timeout"] == 0, "no reset / timeout", c["events"])
t = rep.get("stages", {}).get("tcp", {}).get("counters", {})
check("tcp_retransmits" in t, "the tcp stage counts tcp_retransmits", sorted(t))
check(t.get("tcp_ooo_segs", 0) > 0, "the tcp stage queued out-of-order segments (the loss reached it)",
      t.get("tcp_ooo_segs"))
print("info: tcp_retransmits %s, tcp_ooo_segs %s, drop_tcp_ooo_limit %s" % (
      t.get("tcp_retransmits"), t.get("tcp_ooo_segs"), t.get("drop_tcp_ooo_limit")))
PY
report_common

# send_case TAG CC PORT: tcp_app sends $SEND bytes to the kernel on congestion
# control CC
send_case() {
	local tag=$1 cc=$2 port=$3
	say "== ($tag) lcpipe -> kernel, $SEND bytes, congestion $cc"
	rand_file "$W/f$tag" "$SEND"
	peer_start "l$tag" serve-recv --port "$port" --conns 1 --timeout $((DURATION + 20)) || finish
	tcp_conf "l$tag" "\"mode\": \"send\", \"connect\": \"$PEER_IP:$port\", \"expect\": 1, \"file\": \"$W/f$tag\", \"send_mbufs\": $SEND_MBUFS" \
		"\"sndbuf\": $SNDBUF, \"congestion\": \"$cc\""
	lcpipe_peer_run serve-recv nft_snap
	say "nft dropped (to kernel, to lcpipe): before $d0, after $d1"
	pycheck "($tag) send with loss, $cc" res="$RESULT" rep="$REPORT" peer="$PEER_OUT" size="$SEND" sha="$SHA" \
		d0="$d0" d1="$d1" cc="$cc" <<'PY' || show "$LOG"
r, rep, p = J("res"), J("rep"), J("peer")
size, sha = int(A["size"]), A["sha"]
d0, d1 = [int(v) for v in A["d0"].split()], [int(v) for v in A["d1"].split()]
dropped = d1[0] - d0[0]
check(dropped > 0, "nft dropped lcpipe -> kernel segments: %d" % dropped, (d0, d1))
kernel_got_file(p, size, sha)
c = conn0(r)
check(r.get("refused_sends") == 0, "no SEND refused by tcp (ENOBUFS)", r.get("refused_sends"))
check(c["events"]["reset"] == 0 and c["events"]["timeout"] == 0, "no reset / timeout", c["events"])
t = rep.get("stages", {}).get("tcp", {}).get("counters", {})
check(t.get("tcp_retransmits", 0) > 0, "the tcp stage retransmitted (tcp_retransmits > 0)", t.get("tcp_retransmits"))
# the kernel agreed SACK: recovery runs from the scoreboard (RFC 6675), and RTOs
# are the exception (RACK finds lost retransmissions, TLP tail losses)
check(t.get("tcp_sack_retransmits", 0) > 0 and t.get("tcp_sack_recoveries", 0) > 0,
      "recovery used SACK (tcp_sack_retransmits > 0, tcp_sack_recoveries > 0)",
      (t.get("tcp_sack_retransmits"), t.get("tcp_sack_recoveries")))
check(t.get("tcp_sack_blocks_in", 0) > 0, "the kernel's SACK blocks were read (tcp_sack_blocks_in > 0)",
      t.get("tcp_sack_blocks_in"))
check(t.get("tcp_rto_expired", 1 << 30) * 10 <= max(t.get("tcp_sack_recoveries", 0), 30),
      "RTOs at most a tenth of the recoveries (3 when there are fewer than 30)",
      (t.get("tcp_rto_expired"), t.get("tcp_sack_recoveries")))
print("info: %s: tcp_retransmits %s, tcp_sack_retransmits %s, tcp_sack_recoveries %s, tcp_rto_expired %s, "
      "tcp_rack_lost %s, tcp_tlp_probes %s, tcp_dsack_in %s, tcp_dsack_undo %s, dropped %d, run %.1f s" % (
      A["cc"], t.get("tcp_retransmits"), t.get("tcp_sack_retransmits"), t.get("tcp_sack_recoveries"),
      t.get("tcp_rto_expired"), t.get("tcp_rack_lost"), t.get("tcp_tlp_probes"), t.get("tcp_dsack_in"),
      t.get("tcp_dsack_undo"), dropped, rep.get("duration_s", 0)))
PY
	report_common
}

send_case b reno 5012
send_case c bbr 5013
finish
