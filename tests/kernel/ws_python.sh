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
. "$(dirname "$0")/ws_lib.sh"

COUNT=${WS_PY_COUNT:-100000}
PORT=8765
DURATION=${DURATION_WS:-75}

ws_peer_test py 7 "$PY" "$KDIR/ws_peer.py"
finish
