#!/bin/bash
# sink_echo: every (sampled) message is passed on unchanged, zero copy, and
# nothing is lost. msg_src (tests/run/plugins/msg_src.c) -> sink_echo -> a sink:
# (a) one lcore, into sink_null: every message echoed, counted on both sides,
#     payload bytes equal, no drops, every msg object back in msg_src's pool;
# (b) across lcores (src@1 -> echo@2 -> sink_file@1), sample 3: the 1st, 4th, 7th
#     ... message echoed, the others counted in skipped; the file holds exactly
#     those messages, unchanged (conn, opcode, rx_tsc, payload), in order;
# (c) "out" not linked: every message freed and counted in drop_unlinked (the
#     engine's out.drop_unlinked stays 0), with a warning at start;
# (d) the real thing, in-process: feedsim (exchange simulator) -> tcp =(ring
#     pair)= tcp -> ws -> sink_echo -> ws.send -> back to feedsim, with sink_echo
#     on ws's lcore (a same-lcore cycle: nested calls) and on another lcore
#     (rings both ways): every message feedsim sent comes back to it, nothing
#     dropped, every msg object released.
. "$(dirname "$0")/lib.sh"

"$LCPIPE" describe sink_echo >/dev/null 2>&1 || skip "the sink_echo plugin is not built"
[ -f "$PLUGDIR/msg_src.so" ] || skip "the msg_src test plugin is not built ($PLUGDIR)"

N=1000
step "(a) msg_src -> sink_echo -> sink_null.msg, one lcore"
mkconf msg-echo.json "$T/a.json" LG=1 LE=1 LS=1 SINK=sink_null SINK_OPTS="{}" \
	SRC_OPTS="{\"count\": $N}" ECHO_OPTS="{}" \
	LINKS='["src.out -> echo.in", "echo.out -> sink.msg"]'
lcrun a "$T/a.json" --duration 20 --no-live
expect_rc 0 "echo, one lcore"
rcheck "echo, one lcore" -D N=$N 'ctr("src", "msgs") == N' 'ctr("echo", "in.in") == N' \
	'ctr("echo", "echoed") == N' 'ctr("echo", "out.out") == N' 'ctr("echo", "skipped") == 0' \
	'ctr("echo", "bytes") == ctr("src", "bytes")' 'ctr("sink", "msg.in") == N' \
	'ctr("sink", "bytes") == ctr("src", "bytes")' 'total_drops() == 0' 'in_use == 0' \
	'r["leaked_objects"] == 0' 'r["stop_reason"] == "msg_src: all messages out"'

step "(b) msg_src@1 -> sink_echo@2 (sample 3) -> sink_file@1: the sampled messages, unchanged"
mkconf msg-echo.json "$T/b.json" LG=1 LE=2 LS=1 SINK=sink_file \
	SINK_OPTS="{\"path\": \"$T/b.jsonl\"}" ECHO_OPTS="{\"sample\": 3}" \
	SRC_OPTS="{\"count\": $N, \"burst\": 5, \"manifest\": \"$T/b.manifest\"}" \
	LINKS='["src.out -> echo.in", "echo.out -> sink.in"]'
lcrun b "$T/b.json" --duration 20 --no-live
expect_rc 0 "echo, sample 3, across lcores"
rcheck "echo, sample 3, across lcores" -D N=$N -D E=$(((N + 2) / 3)) 'ctr("echo", "in.in") == N' \
	'ctr("echo", "echoed") == E' 'ctr("echo", "skipped") == N - E' 'ctr("echo", "out.out") == E' \
	'ctr("sink", "in.in") == E' 'ctr("sink", "msgs") == E' 'ctr("sink", "bytes") == ctr("echo", "bytes")' \
	'total_drops() == 0' 'in_use == 0' 'r["leaked_objects"] == 0'
say "+ msgcheck.py jsonl b.jsonl b.manifest --every 3"
"$PYTHON3" "$RUN_SRC/msgcheck.py" jsonl "$T/b.jsonl" "$T/b.manifest" --every 3 ||
	fail "the echoed messages in b.jsonl (above)"

step "(c) sink_echo with \"out\" unlinked"
confrun msg-file.json c 20 "echo, out unlinked" LG=1 LS=1 SINK=sink_echo SINK_OPTS="{}" SRC_OPTS="{\"count\": $N}"
rcheck "echo, out unlinked" -D N=$N 'ctr("sink", "in.in") == N' 'ctr("sink", "drop_unlinked") == N' \
	'ctr("sink", "echoed") == 0' 'ctr("sink", "out.drop_unlinked") == 0' 'drops("sink") == N' \
	'in_use == 0' 'r["leaked_objects"] == 0'
expect_grep "$ERR" '\[sink_echo:sink\] (warning: )?port "out" is not linked' "the warning at start"

step "(d) feedsim -> ws -> sink_echo -> ws.send -> feedsim"
if ! "$LCPIPE" describe feedsim >/dev/null 2>&1 || ! "$LCPIPE" describe ws >/dev/null 2>&1; then
	say "(skipped: the feedsim or ws plugin is not built)"
else
	M=3000
	for le in 1 2; do
		mkconf msg-echo-ws.json "$T/d$le.json" LE=$le COUNT=$M ECHO_OPTS="{}"
		# a ring pair and echo rings big enough for every message in flight:
		# drops there would be the engine's (no backpressure), not sink_echo's.
		# Not asserted: the ports' drop_rx_shutdown (the tcp stages' RSTs at stop)
		lcrun "d$le" "$T/d$le.json" --duration 3 --no-live
		expect_rc 0 "ws echo, sink_echo on lcore $le"
		rcheck "ws echo, sink_echo on lcore $le" -D M=$M 'ctr("exchange", "msgs") == M' \
			'ctr("feed", "opens") == 1' 'ctr("feed", "msg.out") == M' 'ctr("echo", "in.in") == M' \
			'ctr("echo", "echoed") == M' 'ctr("feed", "send.in") == M' 'ctr("feed", "msgs_sent") == M' \
			'ctr("feed", "drop_send_not_open") == 0' \
			'ctr("exchange", "client_msgs") == M + ctr("feed", "subscribes_tx")' \
			'drops("echo") == 0' 'drops("feed") == 0' 'drops("exchange") == 0' 'in_use == 0' \
			'r["leaked_objects"] == 0'
		expect_nogrep "$ERR" "never released" "every ws msg object released"
	done
fi
finish
