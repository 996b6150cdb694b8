#!/bin/bash
# L2 WebSocket: the ws stage against a hostile server (tests/kernel/ws_hostile.py,
# frames written by hand on a plain socket): one case per connection, all met in
# one lcpipe run through the ws stage's reconnects, in this order:
#  - framing (-> close 1002): a masked server frame, RSV1, RSV3, reserved
#    opcodes 3 and 0xB, a 126-byte control frame, a fragmented ping, a
#    continuation without a start, a new text / binary message inside a
#    fragmented one, a 64-bit length with the top bit set;
#  - close frames with codes 1005, 1004, 999 and a 1-byte payload (-> 1002),
#    with an invalid UTF-8 reason (-> 1007);
#  - invalid UTF-8 in a text message, split across fragments, truncated at the
#    message's end, a surrogate, an overlong form, one byte late in a frame
#    that spans TCP segments (-> 1007);
#  - a frame announcing 16 MiB with max_msg 65536, fragments adding up past it
#    (-> 1009);
#  - data after the server's close (we echo 1000, nothing delivered);
#  - valid but awkward: every byte of a frame sequence in its own TCP segment
#    (125-byte ping, non-minimal lengths, a fragmented text split inside a
#    UTF-8 character with a ping between fragments, an empty final fragment);
#    messages of exactly max_msg, whole and fragmented; frames in the same TCP
#    segment as the 101 response; a close without a code (we answer with an
#    empty close), a close 4000 with a UTF-8 reason (we echo 4000), an empty
#    ping, an unsolicited pong;
#  - TCP ending without a close frame (FIN), a RST in the middle of a message;
#    a server that never answers our pings (-> 1001 after pong_timeout_ms);
#  - a slowloris handshake (headers dribbled for ever -> handshake_timeout_ms).
# Before each case's frames the server sends "ok:<case>", which must be
# delivered. Asserts (ws_hostile_check in ws_lib.sh), per case: the close code
# our client sent (read by the server from the socket) or that it sent none,
# then closed TCP; pongs carry their pings' payloads; the slowloris connection
# dropped after ~1.5 s; the reason the ws stage logged. Overall: msg_hash got
# exactly the expected messages, in order, and no byte of any "BAD" payload;
# the ws counters fail_protocol_1002 / fail_bad_utf8_1007 / fail_too_big_1009 /
# fail_handshake / fail_handshake_timeout / fail_pong_timeout / fail_tcp /
# closes_rx / closes_tx / pings_rx / pongs_tx moved by exactly what the cases
# add up to, reconnects >= cases, the reconnect delays follow reconnect_min_ms /
# reconnect_max_ms (50 ms after an open, doubling up to 200 ms otherwise); no
# crash (exit 0), leaked_objects == 0.
# Meanwhile a second connection of the same ws stage (conn 1) receives 1,500
# messages from a well-behaved server (ws_peer.py, 5 ms apart, so that it runs
# through the hostile cases): msg_hash's per-connection SHA-256 of its payloads
# and of its (opcode, length) sequence must equal the server's, and that
# connection must never be given up (ws_good_check); the ws stage's pools (msgs,
# assembly) end at 0 in use with peak <= size and no failed get, no message
# longer than max_msg is delivered, no assembly allocation fails, every mempool
# is back to 0 (ws_bounds_check).
. "$(dirname "$0")/ws_lib.sh"

DURATION=${DURATION_WS:-60}
CASES=masked_frame,rsv1,rsv3,opcode_3,opcode_0xb,control_126,fragmented_ping,cont_without_start
CASES=$CASES,text_in_fragmented,binary_in_fragmented,len_2_63,close_1005,close_1004,close_999,close_1_byte
CASES=$CASES,close_bad_utf8_reason,bad_utf8,bad_utf8_split,utf8_truncated,utf8_surrogate,utf8_overlong
CASES=$CASES,bad_utf8_late,too_big,too_big_fragments,data_after_close,dribble_frames,exact_max_msg
CASES=$CASES,frames_with_101,close_empty,close_4000,ping_empty,unsolicited_pong,tcp_fin,tcp_rst_mid_message
CASES=$CASES,no_pong,slowloris

# the good connection next to them: 1500 messages from ws_peer.py, 5 ms apart
ws_hostile_run hostile "$CASES" "${WS_GOOD_COUNT:-1500}" 5
ws_hostile_check
ws_good_check
ws_bounds_check
ws_report_common
finish
