#!/bin/bash
# engine.stage_timing: every process/poll call is timed and charged to its stage
# (since ABI 2.0 no call runs inside another). (a) gen@1 -> sink@1 (the sink's
# input vector, handed to it by the walk) and (b) gen@1 -> ring -> sink@2: the report's per-stage "timing" counts
# exactly the objects each stage handled, cycles are positive, percentiles are
# ordered; (c) off by default: no "timing" in the report.
. "$(dirname "$0")/lib.sh"

N=20000
for lcores in 1:1 1:2; do
	ls=${lcores#*:}
	step "stage_timing, gen@1 -> sink@$ls, $N frames"
	mkconf batch.json "$T/t$ls.json" STRAT='{}' GEN_STRAT='{}' COUNT=$N RATE=0 BURST=16 LATE_US=0 STOP_AFTER=0 \
		LINK='{"from": "gen.out", "to": "sink.in", "ring_size": 32768}'
	sed -i "s/\"lcore\": 2, \"options\": {\"late_us\"/\"lcore\": $ls, \"options\": {\"late_us\"/; s/\"engine\": {/\"engine\": {\"stage_timing\": true, /" "$T/t$ls.json"
	lcrun "t$ls" "$T/t$ls.json" --duration 1 --no-live
	expect_rc 0 "stage_timing gen@1 -> sink@$ls"
	rcheck "timing, sink on lcore $ls" -D N=$N -D LS=$ls \
		'st("sink", "lcore") == LS' \
		'st("sink", "in") == N' \
		'st("gen", "timing")["objects"] == N' \
		'st("sink", "timing")["objects"] == N' \
		'st("gen", "timing")["calls"] >= N // 16' \
		'st("sink", "timing")["calls"] >= 1' \
		'st("gen", "timing")["cycles"] > 0' 'st("sink", "timing")["cycles"] > 0' \
		'0 < st("sink", "timing")["call_p50_ns"] <= st("sink", "timing")["call_p99_ns"] <= st("sink", "timing")["call_max_ns"]' \
		'total_drops() == 0'
	grep -q '^timing sink ' "$OUT" && ok "the summary has a timing line for sink" ||
		fail "no timing line for sink in the summary"
done
step "(c) off by default"
confrun batch.json off 0.5 "timing off" STRAT='{}' GEN_STRAT='{}' COUNT=100 RATE=0 BURST=16 LATE_US=0 STOP_AFTER=0 \
	LINK='{"from": "gen.out", "to": "sink.in"}'
rcheck "no timing when off" '"timing" not in r["stages"]["sink"]' 'st("sink", "in") == 100'
finish
