#!/bin/bash
# L2 WebSocket: the ws stage against broken upgrade responses
# (tests/kernel/ws_hostile.py), one per connection, met in one lcpipe run through
# the ws stage's reconnects: status 200, a wrong Sec-WebSocket-Accept, no
# Upgrade, no Connection, an extension we did not offer, a subprotocol we did
# not ask for, HTTP/1.0, a head over 8 KiB, a FIN instead of a response, a RST
# instead of a response; then a valid connection ("done").
# Asserts (ws_hostile_check in ws_lib.sh), per case: the client dropped the
# connection at once, without a close frame (it never opened), and logged why;
# ws fail_handshake == 10 (the FIN and the RST are failed handshakes too, logged
# as such), every other fail_* counter 0, reconnects / connects >= 10, reconnect delays
# doubling 50, 100, 200, 200 ms...; the valid
# connection after them delivered "done" (the stage recovered);
# no crash (exit 0), leaked_objects == 0.
. "$(dirname "$0")/ws_lib.sh"

DURATION=${DURATION_WS:-60}
CASES=handshake_200,handshake_wrong_accept,handshake_no_upgrade,handshake_no_connection
CASES=$CASES,handshake_extension,handshake_protocol,handshake_http10,handshake_huge,handshake_eof
CASES=$CASES,handshake_rst

ws_hostile_run handshake "$CASES"
ws_hostile_check
ws_report_common
finish
