#!/bin/bash
# L2 WebSocket: connection refused. Nothing listens on the server's port (8769)
# for the first 2 s, so the kernel answers each SYN with a RST (the tcp stage:
# RESET, ECONNREFUSED); then ws_hostile.py starts there and serves "done" (a
# message, then close 1000). The ws stage has handshake_timeout_ms 5000 and
# reconnects after 100 ms doubling up to 400 ms.
# Asserts: lcpipe exits 0 after "done"; every refused attempt counts as a tcp
# failure (ws fail_tcp >= 1) and is retried with the backoff, so no attempt has
# to wait for the 5 s handshake timeout (fail_handshake_timeout == 0) and the
# run ends (300 ms after "done") soon after the server started (the time is
# printed, not asserted);
# leaked_objects == 0.
# The refusal of an attempt is told apart from a late event of an old one by
# the attempt's generation in the event (ws_current() in plugins/ws/ws.c): while
# the attempt is connecting it has no TCP connection id yet.
. "$(dirname "$0")/ws_lib.sh"

DURATION=${DURATION_WS:-60}
PORT=8769
HOSTILE_JSON=$W/rf.server.json
ws_conf rf '"url": "ws://'$K_IP:$PORT'/rf", "subscribe": "sub", "handshake_timeout_ms": 5000,
  "reconnect_min_ms": 100, "reconnect_max_ms": 400' '"expect": 1, "linger_ms": 300'
ws_lcpipe_start
sleep 2
t_srv=$(date +%s%N)
server_start rf "$PY" "$KDIR/ws_hostile.py" --port $PORT --cases "" --result "$HOSTILE_JSON" \
	--timeout $((DURATION + 10)) --linger 1 || finish
ws_lcpipe_end ws_hostile.py 10
# how soon lcpipe ended after the server started is printed, not asserted (no
# timing assertion in make check): that no attempt waited for the 5 s handshake
# timeout is fail_handshake_timeout == 0 below
say "lcpipe ran $(((T1 - T0) / 1000000)) ms (start to exit); the server started after $(((t_srv - T0) / 1000000)) ms; lcpipe ended $(((T1 - t_srv) / 1000000)) ms after it (300 ms of it after \"done\")"

pycheck "refused" srv="$HOSTILE_JSON" res="$RESULT" rep="$REPORT" log="$LOG" <<'PY' || show "$LOG" "$SRV_OUT" "$SRV_ERR"
s, h, rep = J("srv"), J("res"), J("rep")
check(rep.get("stop_reason") == "msg_hash: done", "the run was ended by msg_hash (after \"done\")", rep.get("stop_reason"))
cs = s.get("cases", [])
check(len(cs) == 1 and cs[0].get("error") is None and cs[0].get("close_codes") == [1000],
      "the server's \"done\" case: served, our close 1000", cs)
check(h.get("msgs") == 1, "msg_hash: 1 message (\"done\")", h.get("msgs"))
w = rep.get("stages", {}).get("ws", {}).get("counters", {})
t = rep.get("stages", {}).get("tcp", {}).get("counters", {})
print("info: ws counters: " + ", ".join("%s %s" % (k, v) for k, v in sorted(w.items()) if v))
print("info: tcp: connects %s, resets %s, established %s" % (t.get("tcp_connects"), t.get("tcp_resets"), t.get("tcp_established")))
check(t.get("tcp_resets", 0) >= 1, "the kernel refused at least one connect (tcp_resets >= 1)", t.get("tcp_resets"))
check(w.get("fail_tcp", 0) >= 1, "ws counted the refusals as tcp failures (fail_tcp >= 1)", w.get("fail_tcp"))
check(w.get("fail_handshake_timeout") == 0, "no attempt waited for the 5 s handshake timeout", w.get("fail_handshake_timeout"))
PY
ws_report_common
finish
