#!/bin/bash
# Batch strategy modules on a cross-lcore link, gen@1 -> ring -> sink_check@2:
# (a) each module (batch_burst, batch_timed, batch_adaptive) delivers every frame
#     in order, nothing dropped, the report names the module on the ring;
# (b) where the module comes from: a link's own "batch" beats the source stage's
#     "strategies", which beats the global one;
# (c) batch_timed with sparse traffic (200 frames/s, batches of 64) until
#     sink_check has seen 128 frames (stop_after: the run's length follows the
#     traffic, however slowly a loaded machine lets gen produce it): the flush
#     timeout bounds the wait. With flush_us 2000 no frame is 250 ms old on
#     arrival; with flush_us 5 s and no timeout they would wait for a full batch
#     (320 ms at this rate), so the same check with a 5 s timeout must see late
#     frames — proof that it is the timer, not the traffic, that bounds them. The
#     margins are two orders of magnitude: a functional check, not a timing one;
# (d) staged objects are flushed when the pipeline drains: 10 frames under a 10 s
#     timeout all arrive before the run ends;
# (e) a bad batch config is refused by `lcpipe check` with its JSON path.
. "$(dirname "$0")/lib.sh"

N=40000
LINK='{"from": "gen.out", "to": "sink.in", "ring_size": 16384}'
for m in '"batch_burst"' '{"plugin": "batch_timed", "options": {"size": 64, "flush_us": 50}}' \
	'{"plugin": "batch_adaptive", "options": {"min": 1, "max": 512}}'; do
	name=$(printf '%s' "$m" | sed -n 's/.*\(batch_[a-z]*\).*/\1/p')
	step "(a) $name: $N frames, bursts of 7, all delivered in order"
	mkconf batch.json "$T/$name.json" STRAT="{\"batch\": $m}" GEN_STRAT='{}' COUNT=$N RATE=0 BURST=7 \
		LATE_US=0 STOP_AFTER=0 LINK="$LINK"
	lcrun "$name" "$T/$name.json" --duration 1.5 --no-live
	expect_rc 0 "$name"
	rcheck "$name" -D N=$N -D M="$name" \
		'r["drained"] == True' \
		'ring("gen.out -> sink.in")["batch"] == M' \
		'ctr("gen", "packets") == N' \
		'ctr("gen", "out.out") == N' \
		'st("sink", "in") == N' \
		'ctr("sink", "seq_ok") == N' \
		'ctr("sink", "seq_gap") + ctr("sink", "seq_old") == 0' \
		'total_drops() == 0' \
		'in_use == 0' 'r["leaked_objects"] == 0'
done

step "(b) precedence: link > source stage > global"
confrun batch.json prec1 1 "precedence: stage over global" STRAT='{"batch": "batch_adaptive"}' \
	GEN_STRAT='{"batch": "batch_timed"}' COUNT=1000 RATE=0 BURST=32 LATE_US=0 STOP_AFTER=0 LINK="$LINK"
rcheck "stage over global" 'ring("gen.out")["batch"] == "batch_timed"' 'st("sink", "in") == 1000'
mkconf batch.json "$T/prec2.json" STRAT='{"batch": "batch_adaptive"}' \
	GEN_STRAT='{"batch": "batch_timed"}' COUNT=1000 RATE=0 BURST=32 LATE_US=0 STOP_AFTER=0 \
	LINK='{"from": "gen.out", "to": "sink.in", "batch": {"plugin": "batch_burst", "options": {"size": 8}}}'
lcrun prec2 "$T/prec2.json" --duration 1 --no-live
expect_rc 0 "precedence: link over stage"
rcheck "link over stage" 'ring("gen.out")["batch"] == "batch_burst"' 'ring("gen.out")["burst"] == 8' \
	'st("sink", "in") == 1000'
confrun batch.json prec3 1 "precedence: global" STRAT='{"batch": "batch_adaptive"}' GEN_STRAT='{}' COUNT=1000 \
	RATE=0 BURST=32 LATE_US=0 STOP_AFTER=0 LINK="$LINK"
rcheck "global" 'ring("gen.out")["batch"] == "batch_adaptive"' 'st("sink", "in") == 1000'

for t in 2000:0 5000000:1; do
	us=${t%%:*}
	want_late=${t#*:}
	step "(c) batch_timed size 64, flush_us $us, 200 frames/s until 128 arrived: late (> 250 ms) frames expected: $want_late"
	mkconf batch.json "$T/sparse$us.json" \
		STRAT="{\"batch\": {\"plugin\": \"batch_timed\", \"options\": {\"size\": 64, \"flush_us\": $us}}}" \
		GEN_STRAT='{}' COUNT=0 RATE=200 BURST=1 LATE_US=250000 STOP_AFTER=128 LINK="$LINK"
	lcrun "sparse$us" "$T/sparse$us.json" --duration 60 --no-live
	expect_rc 0 "sparse, flush_us $us"
	if [ "$want_late" = 0 ]; then
		rcheck "flush_us $us bounds the wait" 'r["stop_reason"] != "duration"' \
			'ctr("sink", "frames") >= 128' 'ctr("sink", "late") == 0' 'total_drops() == 0'
	else
		rcheck "without a short timeout frames wait for a full batch" \
			'r["stop_reason"] != "duration"' 'ctr("sink", "frames") >= 128' \
			'ctr("sink", "late") > 0' 'total_drops() == 0'
	fi
done

step "(d) 10 frames staged under a 10 s timeout are flushed by the drain"
mkconf batch.json "$T/drain.json" \
	STRAT='{"batch": {"plugin": "batch_timed", "options": {"size": 64, "flush_us": 10000000}}}' \
	GEN_STRAT='{}' COUNT=10 RATE=0 BURST=1 LATE_US=0 STOP_AFTER=0 LINK="$LINK"
lcrun drain "$T/drain.json" --duration 0.5 --no-live
expect_rc 0 "drain flush"
rcheck "drain flush" 'r["drained"] == True' 'ctr("gen", "out.out") == 10' 'st("sink", "in") == 10' \
	'ctr("sink", "seq_ok") == 10' 'total_drops() == 0'

step "(e) a bad batch reference is refused with its JSON path"
mkconf batch.json "$T/bad.json" STRAT='{"batch": "counters_percore"}' GEN_STRAT='{}' COUNT=1 RATE=0 \
	BURST=1 LATE_US=0 STOP_AFTER=0 \
	LINK='{"from": "gen.out", "to": "sink.in", "batch": {"plugin": "batch_timed", "options": {"flush_us": 0}}}'
"$LCPIPE" check "$T/bad.json" >"$T/bad.out" 2>&1
rc=$?
[ $rc -eq 78 ] && ok "lcpipe check exits 78" || fail "lcpipe check exit $rc, expected 78"
grep -q 'strategies.batch: plugin "counters_percore" is a counters plugin, expected a batch plugin' "$T/bad.out" &&
	ok "global batch of the wrong kind named" || { fail "no kind error for strategies.batch"; cat "$T/bad.out"; }
grep -q 'links\[0\].batch.options.flush_us' "$T/bad.out" &&
	ok "link batch option out of range named" || { fail "no error for links[0].batch.options.flush_us"; cat "$T/bad.out"; }
finish
