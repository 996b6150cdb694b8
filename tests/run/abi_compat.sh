#!/bin/bash
# Plugin ABI 1.4 moved a ring link's "<port>.out" from lcp_emit() to the engine,
# which reads it off the ring. A plugin built against the 1.3 SDK still adds it
# in its inlined lcp_emit(): the engine must then leave the ring's count out, or
# the link would count every object twice (or, the other way round, not at all).
# abi13_pass (run/plugins/abi13_pass.c) is such a plugin: gen@1 -> abi13_pass@1
# (direct) -> sink_check@2 (a ring), once on a plain ring link (the plugin
# enqueues and counts) and once on a staged one (batch_timed: the engine
# enqueues, so the engine's ring count is used), both blocking when the ring is
# full (the plugin's partial enqueues then go on in the engine, which counts
# them for a 1.3 plugin). Each time: the plugin's out == what gen sent == what
# the sink counted in == frames checked in order. The plugin's ops also fill the
# slot that became the linger op in ABI 1.6: the engine never calls it for a 1.3
# plugin (linger_calls 0, nothing lingered: linger_s 0).
. "$(dirname "$0")/lib.sh"

N=20000

for mode in plain staged; do
	if [ $mode = plain ]; then
		LINK='{"from": "old.out", "to": "sink.in", "on_full": "block"}'
	else
		LINK='{"from": "old.out", "to": "sink.in", "on_full": "block", "batch": {"plugin": "batch_timed", "options": {"size": 16, "flush_us": 50}}}'
	fi
	step "($mode) abi13_pass on a ring link: its out counted once"
	mkconf abi-compat.json "$T/$mode.json" COUNT=$N LINK="$LINK"
	lcrun $mode "$T/$mode.json" --duration 1.5 --no-live
	expect_rc 0 "$mode"
	rcheck "$mode" -D N=$N \
		'r["drained"] == True' \
		'ctr("gen", "packets") == N' \
		'st("old", "in") == N' \
		'ctr("old", "out.out") == N' \
		'st("old", "out") == N' \
		'st("sink", "in") == N' \
		'ctr("sink", "seq_ok") == N' \
		'total_drops() == 0' \
		'ctr("old", "linger_calls") == 0' \
		'r["linger_s"] == 0' \
		'in_use == 0'
done

finish
