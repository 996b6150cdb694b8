#!/bin/bash
# L2 WebSocket: a clean stop of the ws stage against Debian's python3-websockets
# (tests/kernel/ws_peer.py --until-client-close: it streams messages 1 ms apart
# and never closes by itself), with the tcp stage listed before the ws stage
# (ws_conf). Three runs:
#   duration  engine.duration ends the run while messages flow;
#   sigterm   SIGTERM to lcpipe once the subscription arrived;
#   silent    nftables drops every segment from lcpipe to the server once it
#             is open, then SIGTERM: nobody answers our close; engine.linger
#             1 s. (SIGTERM, not a duration: the rule must be in place before
#             the stop, however long the start and nft take.)
# Asserts, duration and sigterm: lcpipe exits 0 with that stop reason; the
# server received our close frame with code 1001 and then our FIN, no RST;
# msg_hash got every message the server sent, in order (count, bytes,
# SHA-256s: frames up to the server's close are still read while closing);
# ws closes_tx >= 1, stop_closes 1, stop_closes_answered 1,
# fail_close_unfinished 0; the tcp stage reset nothing (stop_resets,
# tcp_rst_out 0); the linger ended with nothing left; no drop, no leak.
# silent: the stop is still bounded (lcpipe exits 0 well inside its timeout),
# the linger expired with the connection still closing (linger_left >= 1, the
# log says so), ws fail_close_unfinished 1, and the tcp stage reset it at stop
# (stop_resets 1).
. "$(dirname "$0")/ws_lib.sh"

PORT=8765
SUB=sub
SRV_TIMEOUT=40

# one_run TAG DURATION [ENGINE_OPTIONS]: the server, then lcpipe (DURATION s)
one_run() {
	local tag=$1
	DURATION=$2
	server_start "$tag" "$PY" "$KDIR/ws_peer.py" --port $PORT --count 0 --pace-ms 1 --until-client-close \
		--expect-sub $SUB --result "$W/$tag.server.json" --open-file "$W/$tag.open" \
		--timeout $SRV_TIMEOUT || finish
	ws_conf "$tag" '"url": "ws://'$K_IP:$PORT'/feed", "subscribe": "'$SUB'", "reconnect_min_ms": 5000,
  "reconnect_max_ms": 10000' '' '' "${3:-}"
	lcpipe_start || finish
}

# wait_open TAG: up to 20 s for the server to see our subscription
wait_open() {
	poll_while 20 "$LC_PID" test -e "$W/$1.open"
	[ -e "$W/$1.open" ] || { fail "$1: the connection did not open within 20 s"; show "$LOG" "$SRV_ERR"; return 1; }
	return 0
}

# clean_check TAG REASON: the checks of a clean stop
clean_check() {
	pycheck "$1: a clean stop" srv="$W/$1.server.json" res="$RESULT" rep="$REPORT" log="$LOG" why="$2" <<'PY' || show "$LOG" "$SRV_ERR"
s, h, rep = J("srv"), J("res"), J("rep")
print("info: server: %s messages, %s bytes in %s s; close %s, tcp_fin %s, tcp_rst %s (%s)"
      % (s.get("sent"), s.get("bytes"), s.get("send_s"), s.get("client_close_code"), s.get("tcp_fin"),
         s.get("tcp_rst"), s.get("tcp_lost")))
check(rep.get("stop_reason") == A["why"], "stopped by %s" % A["why"], rep.get("stop_reason"))
check(s.get("error") is None and s.get("served") is True, "the server saw the connection end", s.get("error"))
check(s.get("sent", 0) > 0, "the server was streaming (%s messages)" % s.get("sent"))
check(s.get("client_close_code") == 1001, "the server received our close frame with 1001", s.get("client_close_code"))
check(s.get("tcp_fin") is True and s.get("tcp_rst") is False and s.get("tcp_lost") is None,
      "then our FIN, no RST", (s.get("tcp_fin"), s.get("tcp_rst"), s.get("tcp_lost")))
check(h.get("msgs") == s.get("sent") and h.get("bytes") == s.get("bytes"),
      "msg_hash got every message the server sent (%s, %s bytes)" % (h.get("msgs"), h.get("bytes")),
      (s.get("sent"), s.get("bytes")))
check(h.get("sha256") == s.get("sha256") and h.get("sha256_lens") == s.get("sha256_lens"),
      "msg_hash: payload and (opcode, length) SHA-256 == the server's")
check(rep.get("linger_left") == 0, "the linger ended with nothing still closing", rep.get("linger_left"))
st = rep.get("stages", {})
w, t = st.get("ws", {}).get("counters", {}), st.get("tcp", {}).get("counters", {})
print("info: ws counters: " + ", ".join("%s %s" % (k, v) for k, v in sorted(w.items()) if v))
check(w.get("closes_tx", 0) >= 1 and w.get("stop_closes") == 1 and w.get("stop_closes_answered") == 1,
      "ws: closes_tx >= 1, stop_closes 1, stop_closes_answered 1",
      (w.get("closes_tx"), w.get("stop_closes"), w.get("stop_closes_answered")))
fails = {k: v for k, v in w.items() if k.startswith("fail_") and v}
check(not fails, "no ws fail_* counter moved", fails)
check(t.get("stop_resets") == 0 and t.get("tcp_rst_out") == 0 and t.get("tcp_rst_in") == 0,
      "tcp: no reset sent or received (stop_resets, tcp_rst_out, tcp_rst_in 0)",
      (t.get("stop_resets"), t.get("tcp_rst_out"), t.get("tcp_rst_in")))
check(t.get("tcp_closed") == 1, "tcp: the connection closed (tcp_closed 1)", t.get("tcp_closed"))
log = open(A["log"], errors="replace").read()
check("closed (close handshake and TCP close complete)" in log, "the ws stage logged the complete close")
PY
}

# ---- duration: engine.duration ends the run
one_run duration 4
lcpipe_wait
server_wait 15
expect_lc_rc 0
[ "$SRV_RC" -eq 0 ] || { fail "duration: ws_peer.py exited $SRV_RC"; show "$SRV_OUT" "$SRV_ERR"; }
clean_check duration duration
ws_report_common

# ---- sigterm: SIGTERM while messages flow
one_run sigterm 60
if wait_open sigterm; then
	sleep 0.5
	say "+ kill -TERM $LC_PID (the timeout wrapper passes it on)"
	kill -TERM "$LC_PID"
fi
lcpipe_wait
server_wait 15
expect_lc_rc 0
[ "$SRV_RC" -eq 0 ] || { fail "sigterm: ws_peer.py exited $SRV_RC"; show "$SRV_OUT" "$SRV_ERR"; }
clean_check sigterm SIGTERM
ws_report_common

# ---- silent: nothing we send reaches the server once it is open
SRV_TIMEOUT=30
one_run silent 60 '"linger": 1.0'
if wait_open silent; then
	nsx nft add table inet lcpstop &&
		nsx nft add chain inet lcpstop in '{ type filter hook input priority 0; }' &&
		nsx nft add rule inet lcpstop in ip saddr $LC_IP tcp dport $PORT drop ||
		fail "silent: cannot add the nftables drop rule"
fi
say "+ kill -TERM $LC_PID (the timeout wrapper passes it on)"
kill -TERM "$LC_PID" 2>/dev/null
lcpipe_wait
server_wait 2 # it waits for a close that never reaches it: stopped
expect_lc_rc 0
pycheck "silent: a bounded stop" rep="$REPORT" log="$LOG" <<'PY' || show "$LOG"
rep = J("rep")
st = rep.get("stages", {})
w, t = st.get("ws", {}).get("counters", {}), st.get("tcp", {}).get("counters", {})
print("info: linger %.2f s, %s left; ws stop_closes %s, answered %s, unfinished %s; tcp stop_resets %s"
      % (rep.get("linger_s", -1), rep.get("linger_left"), w.get("stop_closes"), w.get("stop_closes_answered"),
         w.get("fail_close_unfinished"), t.get("stop_resets")))
check(rep.get("stop_reason") == "SIGTERM", "stopped by SIGTERM", rep.get("stop_reason"))
check(rep.get("linger_left", 0) >= 1, "the linger expired with the connection still closing", rep.get("linger_left"))
check(w.get("stop_closes") == 1 and w.get("stop_closes_answered") == 0, "ws: our close went unanswered",
      (w.get("stop_closes"), w.get("stop_closes_answered")))
check(w.get("fail_close_unfinished") == 1, "ws: fail_close_unfinished 1", w.get("fail_close_unfinished"))
check(t.get("stop_resets") == 1, "tcp: the connection was reset at stop (stop_resets 1)", t.get("stop_resets"))
log = open(A["log"], errors="replace").read()
check("still closing after 1.00 s (engine.linger)" in log, "the engine logged the expired linger")
check("close not finished when the pipeline stopped" in log, "the ws stage logged the unfinished close")
PY
ws_report_common
finish
