#!/bin/bash
# L2: hostile TCP peers (issue 6, item 5). lcpipe's tcp stage listens on 7000
# (tcp_app in echo mode) and holds one long-lived GOOD connection from the
# kernel (tcp_peer.py client-echo --until-file: random bytes at 1 MB/s, echoed
# back, compared by SHA-256 at the end) while tcp_hostile.py, a crafted-frame
# peer on the tap at 10.77.0.3 (the kernel's TCP is kept out of it with an
# nftables rule), runs one phase after another on the same listener (the SYN
# flood last, so that the others do not meet a backlog full of its half-open
# connections):
#   rst   RSTs out of the window, in the window but not exact (RFC 5961
#         challenge ACKs, challenge_ack_limit per second), then an exact one
#   zero  a peer that shuts its window for ever and answers every probe
#   ooo   thousands of out-of-order, overlapping, out-of-window segments, then
#         the hole and the stream again
#   opts  malformed options and data offsets (and SYNs with bad options)
#   syn   4,000 SYNs that never complete, from 10.77.0.3 and 64 forged
#         addresses, with a real connect in the middle and one after (past
#         the backlog: SYN cookies, backlog_full's default)
# Asserts, from the hostile peer's JSON, tcp_app's result and the report: each
# phase's own checks (tcp_hostile.py), the counters each case must move, the
# bounds (tcp_half_open_peak <= backlog, tcp_ooo_held_peak <= ooo_max_segs,
# the node pool's peak <= its size with no failed get, the packet pool never
# empty, every mempool back to 0 in use, leaked_objects == 0), that
# lcpipe ran to the end and exits 0 on SIGINT, and that the GOOD connection's
# stream came back intact with no reset (tcp_app: its sha256_in equals the
# client's).
. "$(dirname "$0")/tcp_lib.sh"

DURATION=${DURATION_HOSTILE:-120}
HOSTILE=$top_srcdir/tests/kernel/tcp_hostile.py
H_IP=10.77.0.3
PORT=7000
RCVBUF=262144
SNDBUF=1048576
BACKLOG=32
OOO_SEGS=128
OOO_BYTES=65536
CH_LIMIT=50
PERSIST_MS=3000
NODES=4096

tcp_conf h '"mode": "echo", "listen": '$PORT \
	'"rcvbuf": '$RCVBUF', "sndbuf": '$SNDBUF', "backlog": '$BACKLOG', "ooo_max_segs": '$OOO_SEGS',
     "ooo_max_bytes": '$OOO_BYTES', "challenge_ack_limit": '$CH_LIMIT', "persist_timeout_ms": '$PERSIST_MS',
     "syn_retries": 2, "node_pool": '$NODES', "max_conns": 256'
lcpipe_start || finish
# the hostile peer's address: the kernel answers lcpipe's ARP for it, and its
# TCP must not answer what lcpipe sends there (RSTs for connections it does not
# know), so everything TCP from it leaves through a drop rule
nsx ip addr add $H_IP/32 dev $TAP || { fail "ip addr add $H_IP"; finish; }
nsx nft -f - <<NFT || { fail "nft rule"; finish; }
table inet lcpt_hostile {
	chain out {
		type filter hook output priority 0; policy accept;
		ip saddr $H_IP meta l4proto tcp counter drop
	}
}
NFT

# GOOD: from the kernel (10.77.0.1), until $W/stop exists
peer_start good client-echo --host $LC_IP --port $PORT --bytes 0 --until-file "$W/stop" \
	--rate 1000000 --timeout $((DURATION - 20))
GOOD_PID=$PEER_PID GOOD_OUT=$PEER_OUT GOOD_ERR=$PEER_ERR
sleep 1

say "+ tcp_hostile.py (phases rst, zero, ooo, opts, syn)"
nsx "$PY" "$HOSTILE" --iface $TAP --src $H_IP --dst $LC_IP --port $PORT --rcvbuf $RCVBUF \
	--challenge-limit $CH_LIMIT --zw-bytes $((SNDBUF + 262144)) --zw-wait 15 --timeout 80 >"$W/hostile.json" 2>"$W/hostile.err" </dev/null &
HPID=$!
PIDS="$PIDS $HPID"
wait_or_stop $HPID 85 tcp_hostile.py
H_RC=$WAIT_RC
[ "$H_RC" -eq 0 ] && ok "tcp_hostile.py: every phase saw what it expected" ||
	{ fail "tcp_hostile.py exited $H_RC"; show "$W/hostile.json" "$W/hostile.err"; }

touch "$W/stop"
PEER_PID=$GOOD_PID
peer_wait 20
[ "$PEER_RC" -eq 0 ] && ok "GOOD: client-echo got its stream back intact" ||
	{ fail "GOOD client-echo exited $PEER_RC"; show "$GOOD_OUT" "$GOOD_ERR"; }
kill -0 "$LC_PID" 2>/dev/null && ok "lcpipe still running after the hostile phases" ||
	fail "lcpipe is gone before the end"
sleep 0.5 # the last CLOSED events reach tcp_app
kill -INT "$LC_PID"
lcpipe_wait
expect_lc_rc 0

pycheck "hostile" res="$RESULT" rep="$REPORT" good="$GOOD_OUT" hos="$W/hostile.json" \
	backlog=$BACKLOG ooo_segs=$OOO_SEGS ooo_bytes=$OOO_BYTES ch=$CH_LIMIT sndbuf=$SNDBUF \
	nodes=$NODES persist=$PERSIST_MS hip=$H_IP <<'PY' || show "$LOG"
r, rep, g, h = J("res"), J("rep"), J("good"), J("hos")
ph = h.get("phases", {})
t = rep.get("stages", {}).get("tcp", {}).get("counters", {})
C = lambda k: t.get(k, -1)
print("counters: " + json.dumps({k: v for k, v in sorted(t.items()) if v}))
print("hostile: " + json.dumps(ph))
print("pools: " + json.dumps(rep.get("pools")) + " mempools: " + json.dumps(rep.get("mempools")))
check(rep.get("stop_reason") == "SIGINT", "lcpipe ran until our SIGINT", rep.get("stop_reason"))
check(rep.get("leaked_objects") == 0, "leaked_objects == 0", rep.get("leaked_objects"))
bad = [m for m in rep.get("mempools", []) if m.get("in_use") != 0]
check(not bad, "every mempool back to 0 in use", bad)
nodes = [p for p in rep.get("pools", []) if p.get("stage") == "tcp" and p.get("name") == "nodes"]
check(len(nodes) == 1 and nodes[0]["in_use"] == 0 and nodes[0]["peak_in_use"] <= int(A["nodes"])
      and nodes[0]["get_fail"] == 0, "tcp node pool: back to 0, peak within %s, no failed get" % A["nodes"], nodes)
check(C("drop_node_pool") == 0, "no node pool exhaustion (drop_node_pool == 0)", C("drop_node_pool"))
# GOOD
k = (g.get("conns") or [{}])[0]
check(k.get("match") is True and k.get("sent", 0) > 0,
      "GOOD: %s bytes sent over %s s, all echoed back (sha256 equal)" % (k.get("sent"), k.get("seconds")), k)
goods = [c for c in r.get("connections", []) if c["peer"].startswith("10.77.0.1:") and c["bytes_in"] == k.get("sent")]
check(len(goods) == 1, "GOOD: tcp_app has one kernel connection with exactly those bytes",
      [(c["peer"], c["bytes_in"]) for c in r.get("connections", [])])
if goods:
    c = goods[0]
    check(c["sha256_in"] == k.get("sha256"), "GOOD: tcp_app's sha256_in == the client's sha256")
    ev = c["events"]
    check(ev["reset"] == 0 and ev["timeout"] == 0 and ev["error"] == 0 and ev["closed"] == 1,
          "GOOD: closed cleanly, no reset / timeout / error", ev)
byport = {}
for c in r.get("connections", []):
    if c["peer"].startswith(A["hip"] + ":"):
        byport[int(c["peer"].split(":")[1])] = c
# rst
p = ph.get("rst", {})
oow = p.get("oow_sent", -1) - p.get("oow_tap_dropped", 0)
inwin = p.get("inwin_sent", -1) - p.get("inwin_tap_dropped", 0)
check(C("drop_tcp_rst_invalid") == oow,
      "rst: drop_tcp_rst_invalid == %d out-of-window RSTs that reached lcpipe (%s sent, %s lost in the tap)"
      % (oow, p.get("oow_sent"), p.get("oow_tap_dropped")), C("drop_tcp_rst_invalid"))
check(C("tcp_challenge_acks") >= 1 and C("drop_tcp_challenge_limit") >= 1,
      "rst: challenge ACKs sent (%d) and rate-limited (drop_tcp_challenge_limit %d)"
      % (C("tcp_challenge_acks"), C("drop_tcp_challenge_limit")))
check(C("tcp_challenge_acks") + C("drop_tcp_challenge_limit") == inwin,
      "rst: each of the %d in-window RSTs got a challenge ACK or was counted over the limit (%s lost in the tap)"
      % (inwin, p.get("inwin_tap_dropped")), (C("tcp_challenge_acks"), C("drop_tcp_challenge_limit")))
check(C("tcp_rst_in") == inwin + 1, "rst: tcp_rst_in == in-window RSTs + the exact one", C("tcp_rst_in"))
check(C("tcp_challenge_acks") <= int(A["ch"]) * (int(p.get("inwin_seconds", 0) + 0.3) + 2),
      "rst: %d challenge ACKs within challenge_ack_limit %s/s over a %s s storm"
      % (C("tcp_challenge_acks"), A["ch"], p.get("inwin_seconds")))
check(C("tcp_challenge_acks") == p.get("challenge_acks_seen"),
      "rst: the peer saw every challenge ACK counted (%s)" % p.get("challenge_acks_seen"), C("tcp_challenge_acks"))
c = byport.get(41001)
check(c is not None and c["events"]["reset"] == 1 and c["events"]["accepted"] == 1,
      "rst: the exact RST reset that connection (RESET event)", c and c["events"])
check(C("tcp_resets") == 1, "rst: tcp_resets == 1 (that connection only)", C("tcp_resets"))
# syn
p = ph.get("syn", {})
check(0 < C("tcp_half_open_peak") <= int(A["backlog"]),
      "syn: half-open peak %d <= backlog %s (%s SYNs sent)" % (C("tcp_half_open_peak"), A["backlog"], p.get("syn_sent")))
arrived = p.get("syn_sent", -1) - p.get("tap_tx_dropped", 0)
check(C("tcp_syncookies_sent") >= arrived - int(A["backlog"]) and C("drop_tcp_backlog") == 0,
      "syn: past the backlog every SYN got a cookie: tcp_syncookies_sent %d >= %d SYNs that reached lcpipe - backlog, none dropped"
      % (C("tcp_syncookies_sent"), arrived), C("drop_tcp_backlog"))
check(C("tcp_syncookies_ok") == 2, "syn: both real connects completed through a cookie (tcp_syncookies_ok %d)" % C("tcp_syncookies_ok"))
check(C("drop_tcp_conn_limit") == 0, "syn: max_conns never reached", C("drop_tcp_conn_limit"))
legit = [c for c in r.get("connections", []) if c["peer"].startswith("10.77.0.1:") and c["bytes_in"] == 1000]
check(len(legit) == 2 and all(c["events"]["closed"] == 1 for c in legit),
      "syn: the two real connects (during / after) were accepted, echoed 1000 bytes, closed",
      [(c["peer"], c["events"]) for c in legit])
# zero
p = ph.get("zero", {})
c = byport.get(41002)
check(C("tcp_zero_window_in") >= 1 and C("tcp_window_probes") >= p.get("probes_seen", 1 << 60),
      "zero: tcp_zero_window_in %d, tcp_window_probes %d (peer saw %s)"
      % (C("tcp_zero_window_in"), C("tcp_window_probes"), p.get("probes_seen")))
check(C("tcp_sndbuf_full") >= 1 and C("sendq_held") >= 1, "zero: the echo past sndbuf was held (tcp_sndbuf_full %d, sendq_held %d)" % (C("tcp_sndbuf_full"), C("sendq_held")))
check(C("tcp_persist_timeouts") == 1 and c is not None and c["events"]["timeout"] == 1,
      "zero: given up after persist_timeout_ms (tcp_persist_timeouts 1, TIMEOUT event)", c and c["events"])
check(p.get("rst_after_s") is not None and p["rst_after_s"] >= int(A["persist"]) / 1000.0,
      "zero: the RST came %s s after the window closed (persist_timeout_ms %s)" % (p.get("rst_after_s"), A["persist"]))
check(C("drop_tx_nobuf") == 0 and C("drop_event_nombuf") == 0,
      "the packet pool never ran dry (drop_tx_nobuf, drop_event_nombuf == 0); bufs_held_peak %d" % C("bufs_held_peak"))
# ooo
p = ph.get("ooo", {})
c = byport.get(41003)
check(C("drop_tcp_ooo_limit") >= 1, "ooo: drop_tcp_ooo_limit %d" % C("drop_tcp_ooo_limit"))
check(0 < C("tcp_ooo_held_peak") <= int(A["ooo_segs"]),
      "ooo: tcp_ooo_held_peak %d <= ooo_max_segs %s" % (C("tcp_ooo_held_peak"), A["ooo_segs"]))
check(C("drop_tcp_out_of_window") >= p.get("far_sent", 1 << 60) + p.get("beyond_sent", 0),
      "ooo: drop_tcp_out_of_window %d >= %s far + %s beyond"
      % (C("drop_tcp_out_of_window"), p.get("far_sent"), p.get("beyond_sent")))
check(C("tcp_partial_dup") >= 1 and C("tcp_ooo_filled") >= 1, "ooo: overlaps trimmed, the hole filled")
check(c is not None and c["bytes_in"] == p.get("stream_bytes") and c["sha256_in"] == p.get("sha256")
      and c["events"]["closed"] == 1, "ooo: tcp_app got exactly the stream (sha256) and closed",
      c and (c["bytes_in"], c["events"]))
# opts
p = ph.get("opts", {})
c = byport.get(41004)
check(C("drop_tcp_bad_opt") == p.get("bad_opt_sent"),
      "opts: drop_tcp_bad_opt == %s malformed-option segments" % p.get("bad_opt_sent"), C("drop_tcp_bad_opt"))
check(C("drop_tcp_bad_off") == p.get("bad_off_sent"),
      "opts: drop_tcp_bad_off == %s bad data offsets" % p.get("bad_off_sent"), C("drop_tcp_bad_off"))
check(c is not None and c["bytes_in"] == 200 and c["sha256_in"] == p.get("sha256"),
      "opts: tcp_app got exactly the 200 good bytes", c and c["bytes_in"])
PY
finish
