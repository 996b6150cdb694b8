#!/bin/bash
# L2 flow control (issue 17 item 1): a consumer slower than a real WebSocket
# server, across lcores, loses nothing. The ws_python.sh transfer (Debian's
# python3-websockets, WS_SLOW_COUNT messages, default 50 000, of mixed sizes
# and fragmentations) with the tcp stage on lcore 1 and ws + msg_hash on lcore 2,
# the tcp.data link a 64-slot ring with on_full "drop", a msg_stall stage
# slowing lcore 2 down (WS_SLOW_STALL_US per burst, WS_SLOW_STALL_NS_MSG per
# message) and the tcp stage's rcvbuf at 256 KiB. The per-message stall, 250 us
# by default (at most 4,000 messages/s), keeps the consumer slower than the
# server however large its bursts grow: the server sends 5,000-8,000 messages/s
# here when nothing holds it back. With a stall per burst alone the consumer
# caught up by taking larger bursts, and whether the window closed depended on
# the server's speed of the day (it did not in two runs of three, 2026-12-07).
# Before flow control the ring dropped acknowledged stream bytes and ws
# failed with 1007 after a few messages. Asserts what ws_python.sh asserts
# (ws_check_transfer: count, bytes and SHA-256 of the payloads equal the
# server's; every fail_* 0; one open) and: tcp.data.drop_ring_full == 0,
# fail_stream_gap == 0, the receive window closed at least once
# (tcp_zero_window_out > 0) and the tcp stage held objects back for the ring
# (data_held_back > 0) or the window alone kept it from filling.
. "$(dirname "$0")/ws_lib.sh"

RUN_PLUGDIR=$top_builddir/tests/run/plugins/.libs
[ -e "$RUN_PLUGDIR/msg_stall.so" ] || { echo "FAIL: $RUN_PLUGDIR/msg_stall.so not built (make check builds it)"; exit 1; }
COUNT=${WS_SLOW_COUNT:-50000}
STALL=${WS_SLOW_STALL_US:-50}
STALL_MSG=${WS_SLOW_STALL_NS_MSG:-250000}
PORT=8766
DURATION=${DURATION_WS:-90}

ws_transfer_setup py 11 '"rcvbuf": 262144' "$PY" "$KDIR/ws_peer.py"
# the split: ws, a stall and msg_hash on lcore 2 (CPU 0, beside the control thread)
"$PY" - "$CONF" "$RUN_PLUGDIR" "$STALL" "$STALL_MSG" <<'PY' || { fail "cannot rewrite $CONF"; finish; }
import json, sys
path, run_plugdir, stall, stall_msg = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
c = json.load(open(path))
i = c["eal"].index("-l")
c["eal"][i:i + 2] = ["--lcores=0@0,1@1,2@0"]
c["plugin_path"].append(run_plugdir)
for s in c["stages"]:
    if s["name"] in ("ws", "hash"):
        s["lcore"] = 2
c["stages"].append({"name": "slow", "plugin": "msg_stall", "lcore": 2, "options": {"stall_us": stall, "stall_ns_msg": stall_msg}})
c["links"] = [l for l in c["links"] if l not in ("tcp.data -> ws.in", "ws.msg -> hash.in")] + [
    {"from": "tcp.data", "to": "ws.in", "ring_size": 64, "on_full": "drop"},
    "ws.msg -> slow.in", "slow.out -> hash.in"]
json.dump(c, open(path, "w"), indent=1)
PY
ws_run_transfer ws_peer.py "$COUNT"

ws_check_transfer "$W/py.server.json" "$COUNT" "$SUB"
pycheck "flow control" rep="$REPORT" <<'PY' || show "$LOG"
rep = J("rep")
t = rep["stages"]["tcp"]["counters"]
w = rep["stages"]["ws"]["counters"]
check(t.get("data.drop_ring_full", 0) == 0, "the 64-slot tcp.data ring dropped nothing", t.get("data.drop_ring_full"))
check(w.get("fail_stream_gap", 0) == 0, "ws found no hole in the stream", w.get("fail_stream_gap"))
check(t.get("tcp_zero_window_out", 0) > 0, "the receive window closed (tcp_zero_window_out %s)" % t.get("tcp_zero_window_out"),
      t.get("tcp_zero_window_out"))
print("info: data_held_back %s, tcp_window_updates %s, tcp_rcv_window_full %s" % (
      t.get("data_held_back"), t.get("tcp_window_updates"), t.get("tcp_rcv_window_full")))
PY
ws_report_common
finish
