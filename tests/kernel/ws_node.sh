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

ws_need_node

COUNT=${WS_NODE_COUNT:-100000}
PORT=8766
DURATION=${DURATION_WS:-75}

ws_peer_test node 11 "$NODE" "$KDIR/ws_peer_node.js"
finish
