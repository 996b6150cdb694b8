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
# (time_wait_ms) with its port, so the next connect takes a free one, and no
# TIME_WAIT is taken over (tcp_time_wait_reconnects 0). `lcpipe check`
# refuses ephemeral_port_min above ephemeral_port_max, naming both.
# Then "reuse": the same on port 8767 with a range of one port, 50010, and
# reconnects 1200..1250 ms after each close: every connect finds the port in
# our TIME_WAIT and takes it over (time_wait_reuse: the old connection used
# timestamps, the peer's last one is over 1 s old), so all three connections
# had 50010, tcp_time_wait_reconnects is 2, and Linux took each new SYN on
# the old 4-tuple (drop_tcp_bad_ack 0, every ws fail_* 0, byte-exact).
. "$(dirname "$0")/ws_lib.sh"

COUNT=${WS_PY_COUNT:-100000}
PORT=8765
DURATION=${DURATION_WS:-75}

ws_peer_test py 7 "$PY" "$KDIR/ws_peer.py"

DURATION=60
# ports_case TAG SERVER_PORT PORT_MIN PORT_MAX RECONNECT_MIN_MS PORTS TW_RECONNECTS:
# three transfers of 300 messages from one ws_peer.py (--serve 3); PORTS the
# local ports the three connections must have had (sorted, comma-separated),
# TW_RECONNECTS the connects that must have taken over a TIME_WAIT of ours
ports_case() {
	local tag=$1 sport=$2 pmin=$3 pmax=$4 rmin=$5 ports=$6 twr=$7
	server_start "$tag" "$PY" "$KDIR/ws_peer.py" --port "$sport" --count 300 --seed 9 --expect-sub "$SUB" \
		--serve 3 --result "$W/$tag.server.json" --timeout 70 || finish
	ws_conf "$tag" '"url": "ws://'$K_IP:$sport'/feed", '"$WS_SUB"', "reconnect_min_ms": '$rmin', "reconnect_max_ms": '$((rmin + 50)) \
		'"expect": 900, "linger_ms": 50' '"ephemeral_port_min": '$pmin', "ephemeral_port_max": '$pmax
	ws_run_transfer ws_peer.py 900
	ws_hash_check "$tag" "$W/$tag.server.json" 900 3
	pycheck "$tag" rep="$REPORT" log="$LOG" ports="$ports" twr="$twr" <<'PY' || show "$LOG" "$SRV_ERR"
import re
st = J("rep").get("stages", {})
w, t = st.get("ws", {}).get("counters", {}), st.get("tcp", {}).get("counters", {})
check(t.get("tcp_connects") == 3, "three connects", t.get("tcp_connects"))
fails = {k: v for k, v in w.items() if k.startswith("fail_") and v}
check(not fails, "every ws fail_* counter is 0", fails)
check(t.get("drop_tcp_bad_ack", 0) == 0, "tcp: drop_tcp_bad_ack 0", t.get("drop_tcp_bad_ack"))
check(t.get("tcp_time_wait_reconnects", 0) == int(A["twr"]),
      "tcp: tcp_time_wait_reconnects == %s" % A["twr"], t.get("tcp_time_wait_reconnects"))
ports = re.findall(r"\(local (\d+)\) closed", open(A["log"], errors="replace").read())
check(sorted(ports) == A["ports"].split(","), "the three connections had local ports " + A["ports"], ports)
PY
	ws_report_common
}
ports_case ports 8766 50000 50002 150 50000,50001,50002 0
sed 's/"ephemeral_port_max": 50002/"ephemeral_port_max": 49999/' "$CONF" >"$W/ports-bad.json"
if "$LCPIPE" check "$W/ports-bad.json" >"$W/ports-bad.out" 2>&1; then
	fail "lcpipe check accepted ephemeral_port_min 50000 above ephemeral_port_max 49999"
elif grep -q "need 1 <= ephemeral_port_min <= ephemeral_port_max (50000, 49999)" "$W/ports-bad.out"; then
	ok "lcpipe check refuses ephemeral_port_min above ephemeral_port_max, naming both"
else
	fail "lcpipe check refused the range without naming it"
	show "$W/ports-bad.out"
fi
ports_case reuse 8767 50010 50010 1200 50010,50010,50010 2
finish
