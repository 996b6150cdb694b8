#!/bin/bash
# L2 WebSocket: the ws stage against Debian's python3-websockets server
# (tests/kernel/ws_peer.py) over lcpipe's own TCP, net_tap in a namespace.
# The server waits for the ws stage's subscription, sends WS_PY_COUNT (default
# 100 000) messages of mixed sizes (0 B .. 64 KiB, every boundary 0/1/125/126/
# 127/65535/65536 as text and binary, whole and fragmented), server-fragmented
# messages (with pings between their fragments), pings, then closes (1000).
# msg_hash hashes what the ws stage delivers and ends the run WS_PY_COUNT
# messages later (+ 500 ms for the close handshake).
# Asserts: lcpipe exits 0, stopped by msg_hash; the server served the whole
# transfer, got the expected subscription and our close echo (1000); msg_hash's
# count, bytes, SHA-256 of the payloads and SHA-256 of the (opcode, length)
# sequence equal the server's, as do its text / binary counts; no message has
# rx_tsc 0 or in the future; ws counters: msgs == sent, zero-copy and assembled
# messages both seen, pings_rx == the server's pings > 0, pongs_tx == pings_rx
# (and the server got a pong for every ping), closes_rx >= 1, every fail_*
# counter 0, one open, one subscription; our own pings (ping_interval_ms 200,
# pong_timeout_ms 20000: the peers run on a loaded 2-CPU machine)
# were answered; leaked_objects == 0, every msg object released. The checks are
# ws_check_transfer and ws_report_common in ws_lib.sh.
# Then "ports": the same server on port 8766 serves three transfers of 300
# messages (--serve 3), closing each; the ws stage reconnects 150..200 ms
# after each close, and the tcp stage's ephemeral range is 50000..50002.
# Asserts: msg_hash got the 900 messages byte-exact (sizes and SHA-256s equal
# the server's), three connects and three opens, every ws fail_* 0, tcp's
# drop_tcp_bad_ack 0, and the three connections had the three local ports of
# the range, one each: each connection we close is held in TIME_WAIT
# (time_wait_ms) with its port, so the next connect takes another
# (doc/tcp.md, Limits). `lcpipe check` refuses ephemeral_port_min above
# ephemeral_port_max, naming both.
. "$(dirname "$0")/ws_lib.sh"

COUNT=${WS_PY_COUNT:-100000}
PORT=8765
DURATION=${DURATION_WS:-75}

ws_peer_test py 7 "$PY" "$KDIR/ws_peer.py"

DURATION=60
server_start ports "$PY" "$KDIR/ws_peer.py" --port 8766 --count 300 --seed 9 --expect-sub "$SUB" --serve 3 \
	--result "$W/ports.server.json" --timeout 70 || finish
ws_conf ports '"url": "ws://'$K_IP':8766/feed", '"$WS_SUB"', "reconnect_min_ms": 150, "reconnect_max_ms": 200' \
	'"expect": 900, "linger_ms": 50' '"ephemeral_port_min": 50000, "ephemeral_port_max": 50002'
ws_run_transfer ws_peer.py 900
ws_hash_check ports "$W/ports.server.json" 900 3
pycheck "ports" rep="$REPORT" log="$LOG" <<'PY' || show "$LOG" "$SRV_ERR"
import re
st = J("rep").get("stages", {})
w, t = st.get("ws", {}).get("counters", {}), st.get("tcp", {}).get("counters", {})
check(t.get("tcp_connects") == 3, "three connects", t.get("tcp_connects"))
fails = {k: v for k, v in w.items() if k.startswith("fail_") and v}
check(not fails, "every ws fail_* counter is 0", fails)
check(t.get("drop_tcp_bad_ack", 0) == 0, "tcp: drop_tcp_bad_ack 0", t.get("drop_tcp_bad_ack"))
ports = re.findall(r"\(local (\d+)\) closed", open(A["log"], errors="replace").read())
check(sorted(ports) == ["50000", "50001", "50002"], "the three connections had local ports 50000..50002, one each",
      ports)
PY
ws_report_common
sed 's/"ephemeral_port_max": 50002/"ephemeral_port_max": 49999/' "$CONF" >"$W/ports-bad.json"
if "$LCPIPE" check "$W/ports-bad.json" >"$W/ports-bad.out" 2>&1; then
	fail "lcpipe check accepted ephemeral_port_min 50000 above ephemeral_port_max 49999"
elif grep -q "need ephemeral_port_min <= ephemeral_port_max (50000, 49999)" "$W/ports-bad.out"; then
	ok "lcpipe check refuses ephemeral_port_min above ephemeral_port_max, naming both"
else
	fail "lcpipe check refused the range without naming it"
	show "$W/ports-bad.out"
fi
finish
