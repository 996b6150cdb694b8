#!/bin/bash
# A run that cannot stop the normal way still ends (issue 17, bounded
# shutdown):
#  (a) a message loop on one lcore (gen -> a -> b -> a, plain_pass stages
#      passing frames on): the worker's walk stops after LCP_WALK_ROUNDS rounds,
#      drops and counts what is still queued (drop_loop, logged once per stage);
#      the run ends at its duration, drained, exit 0, nothing leaked;
#  (b) a stage stuck in process() once the engine stops (msg_stall
#      hang_at_stop) with engine.stop_timeout 2: lcpipe names the stage (stall:
#      no stage's call runs inside another's), writes the report (stuck, the counters) and exits 4;
#  (c) the same with stop_timeout 300: a second SIGTERM during the shutdown
#      cuts it short at once: exit 4, logged as "a second signal".
. "$(dirname "$0")/lib.sh"

need_plugins gen fault sink_null

step "(a) a message loop on one lcore ends with its run"
confrun loop.json loop 1 "loop"
rcheck "loop" \
	'r["stop_reason"] == "duration"' \
	'r["drained"] == True' \
	'ctr("gen", "packets") == 1000' \
	'ctr("a", "drop_loop") + ctr("b", "drop_loop") == 1000' \
	'r["leaked_objects"] == 0' \
	'"stuck" not in r'
expect_grep "$ERR" 'message loop: objects are still queued for its input "in" after 16 rounds of lcore 1.s walk; [0-9]+ dropped \(drop_loop\)' \
	"the loop is logged with the input"

step "(b) a stage stuck at stop: named, report written, exit 4"
confrun_rc 4 stuck.json stuck 0.5 "stuck" LIMIT=2
rcheck "stuck" \
	'r["stop_reason"] == "duration"' \
	'r["stuck"] == "stall (lcore 1)"' \
	'ctr("stall", "msgs") > 0'
expect_grep "$ERR" 'stop: lcore 1 still inside stage stall .* \(engine\.stop_timeout\); exiting without it' \
	"the stuck stage is named"

step "(c) a second SIGTERM cuts the shutdown short"
mkconf stuck.json "$T/stuck2.json" LIMIT=300
lcstart sig "$T/stuck2.json" --duration 0 --no-live
if wait_for "$ERR" 'running "stuck' 20; then
	sleep 0.3
	# to lcpipe itself: the timeout wrapper passes on only the first signal
	LP=$(pgrep -P "$PID" | head -1)
	say "+ kill -TERM $LP (twice, 1 s apart)"
	kill -TERM "${LP:-$PID}"
	sleep 1
	kill -TERM "${LP:-$PID}"
else
	fail "the run did not start within 20 s"
fi
lcwait
expect_rc 4 "second signal"
expect_grep "$ERR" 'stop: lcore 1 still inside stage stall .* \(a second signal\); exiting without it' \
	"the second signal ended the shutdown"
rcheck "second signal" 'r["stop_reason"] == "SIGTERM"' 'r["stuck"] == "stall (lcore 1)"'

finish
