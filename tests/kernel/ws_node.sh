#!/bin/bash
# L2 WebSocket: the ws stage against Node's `ws` server (Debian's node-ws,
# tests/kernel/ws_peer_node.js) over lcpipe's own TCP, net_tap in a namespace.
# The same transfer as ws_python.sh from another implementation's framing:
# WS_NODE_COUNT (default 100 000) messages of mixed sizes (every boundary
# 0/1/125/126/127/65535/65536 as text and binary, whole and fragmented),
# server-fragmented messages cut at random byte offsets (text fragments split
# UTF-8 characters), pings (also between fragments), then close (1000).
# Asserts what ws_python.sh asserts (ws_check_transfer in ws_lib.sh), plus: every
# pong carried its ping's payload, in order, and some text fragment split a
# UTF-8 character. Skips (77) without node on PATH or the ws module in
# NODE_PATH (default /usr/share/nodejs, Debian's node-ws).
. "$(dirname "$0")/ws_lib.sh"

NODE=$(command -v node || command -v nodejs) || skip "no node on PATH"
export NODE_PATH=${NODE_PATH:-/usr/share/nodejs}
"$NODE" -e 'require("ws")' 2>/dev/null || skip "no ws module for node in NODE_PATH=$NODE_PATH (Debian: node-ws)"

COUNT=${WS_NODE_COUNT:-100000}
PORT=8766
SUB='{"op":"subscribe","channel":"ticks"}'
DURATION=${DURATION_WS:-75}

server_start node "$NODE" "$KDIR/ws_peer_node.js" --port $PORT --count "$COUNT" --seed 11 --expect-sub "$SUB" \
	--result "$W/node.server.json" --timeout $((DURATION + 10)) || finish
ws_conf node '"url": "ws://'$K_IP:$PORT'/feed", "subscribe": "{\"op\":\"subscribe\",\"channel\":\"ticks\"}",
  "ping_interval_ms": 200, "pong_timeout_ms": 20000, "reconnect_min_ms": 5000, "reconnect_max_ms": 10000' \
	'"expect": '"$COUNT"', "linger_ms": 500'
ws_run_transfer ws_peer_node.js "$COUNT"

ws_check_transfer "$W/node.server.json" "$COUNT" "$SUB"
ws_report_common
finish
