#!/bin/bash
# Same-lcore dispatch (ABI 2.0): an emit to a stage on the same lcore queues
# onto its input vector and the worker's walk hands it over later; no
# process() runs inside another. gen -> a.in, a.out -> b.in, b.out -> a.back,
# all on lcore 1 (plain_pass stages): every frame gen sends goes a -> b and
# back to a, which frees it. Under ABI 1.x's run to completion a's process()
# on "back" ran inside a's own call on "in" (through b's): plain_pass counts
# such calls in "reentered", which must be 0 on both, with every frame back,
# nothing dropped or leaked — with stage_timing off and on (the timed walk
# counts each stage's objects exactly once). Then the same with "burst": 4 on
# a.out -> b.in: the walk hands b at most 4 frames per call (b's timed calls
# >= N / 4, every one of its objects counted once), a piece at a time with the
# stages after b run in between, and still nothing re-entered.
. "$(dirname "$0")/lib.sh"

need_plugins gen

N=200000
for timing in false true; do
	step "request and reply through a cycle on one lcore, stage_timing $timing"
	mkconf walk.json "$T/walk-$timing.json" COUNT=$N TIMING=$timing LINK_AB='"a.out -> b.in"'
	lcrun "walk-$timing" "$T/walk-$timing.json" --duration 2 --no-live
	expect_rc 0 "walk, stage_timing $timing"
	rcheck "walk, stage_timing $timing" -D N=$N \
		'r["drained"] == True' \
		'ctr("gen", "packets") == N' \
		'st("a", "in") == 2 * N' \
		'ctr("a", "in.in") == N' \
		'st("b", "in") == N' \
		'ctr("a", "back.in") == N' \
		'ctr("a", "back_freed") == N' \
		'ctr("a", "reentered") == 0' \
		'ctr("b", "reentered") == 0' \
		'ctr("a", "drop_loop") + ctr("b", "drop_loop") == 0' \
		'total_drops() == 0' \
		'r["leaked_objects"] == 0'
	if [ $timing = true ]; then
		rcheck "walk timing" -D N=$N \
			'st("a", "timing")["objects"] == 2 * N' \
			'st("b", "timing")["objects"] == N' \
			'st("gen", "timing")["objects"] == N'
	fi
done

step "a link burst: the walk hands b 4 frames at a time"
confrun walk.json walk-burst 2 "walk, burst 4" COUNT=$N TIMING=true \
	LINK_AB='{"from": "a.out", "to": "b.in", "burst": 4}'
rcheck "walk, burst 4" -D N=$N \
	'r["drained"] == True' \
	'ctr("a", "back_freed") == N' \
	'ctr("a", "reentered") == 0' \
	'ctr("b", "reentered") == 0' \
	'st("b", "timing")["objects"] == N' \
	'st("b", "timing")["calls"] >= N // 4' \
	'total_drops() == 0' \
	'r["leaked_objects"] == 0'
finish
