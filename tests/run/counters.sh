#!/bin/bash
# Every counters strategy (plugins/counters_*) in a real run: gen@1 -> wa@1 (a
# direct, same-lcore edge) =(ring pair)=> wb@2 -> sink@1 (a cross-lcore ring),
# so counters are written from two worker lcores and, at shutdown, the control
# thread, while the engine reads them for the periodic stats lines. One run per
# module chosen globally ("strategies": {"counters": ...}), one with options and
# a per-stage override. In each report: the stages used the module asked for;
# what gen counted out (at most N objects: a loaded machine may end the run
# first) equals what each hop counted in and out and what the sink counted in,
# objects and bytes; no drop, every mbuf back.
# counters_batched publishes on the engine's tick() and final flush(): its totals
# are exact only if the engine flushes every slot.
# counters_null, the measurement control (B10), records nothing: `lcpipe check`
# accepts it, `describe` says what it is, and in its runs every counter is 0
# while the objects still reach the sink — the counts of a ring link, which the
# engine reads off the ring's indices, not from the module, and gen's own log
# line say so.
. "$(dirname "$0")/lib.sh"

N=150000
SIZE=96
RATE=200000 # 0.75 s of traffic: the engine ticks and reads while it flows

# run TAG COUNTERS SINK_STRATEGIES WANT_GLOBAL WANT_SINK
run() {
	local tag=$1 counters=$2 sink_strat=$3 want=$4 want_sink=$5
	step "$tag: strategies.counters = $counters; sink.strategies = $sink_strat"
	mkconf counters.json "$T/$tag.json" COUNT=$N RATE=$RATE SIZE=$SIZE \
		COUNTERS="$counters" SINK_STRATEGIES="$sink_strat"
	lcrun "$tag" "$T/$tag.json" --duration 2 --no-live
	expect_rc 0 "$tag"
	# gen stops at N, or earlier if the run's duration ends first (a loaded
	# machine): what matters is that every count agrees with what gen counted
	rcheck "$tag" -D N=$N -D SIZE=$SIZE -D M="$want" -D MS="$want_sink" \
		'all(st(s, "counters_strategy") == M for s in ("gen", "wa", "wb"))' \
		'st("sink", "counters_strategy") == MS' \
		'r["drained"] == True' \
		'0 < ctr("gen", "packets") <= N' \
		'ctr("gen", "bytes") == ctr("gen", "packets") * SIZE' \
		'ctr("gen", "out.out") == st("gen", "out") == ctr("gen", "packets")' \
		'st("wa", "in") == ctr("wa", "tx.in") == ctr("gen", "packets")' \
		'ctr("wa", "tx_packets") == ctr("gen", "packets")' \
		'ctr("wa", "tx_bytes") == ctr("gen", "bytes")' \
		'ctr("wb", "rx_packets") == ctr("gen", "packets")' \
		'ctr("wb", "rx_bytes") == ctr("gen", "bytes")' \
		'ctr("wb", "rx.out") == st("wb", "out") == ctr("gen", "packets")' \
		'st("sink", "in") == ctr("sink", "in.in") == ctr("gen", "packets")' \
		'ctr("sink", "bytes") == ctr("gen", "bytes")' \
		'ring("wb.rx -> sink.in")["high_water"] > 0' \
		'total_drops() == 0' \
		'in_use == 0' 'r["leaked_objects"] == 0'
}

run percore '"counters_percore"' '{}' counters_percore counters_percore
run atomic '"counters_atomic"' '{}' counters_atomic counters_atomic
run sharded '"counters_sharded"' '{}' counters_sharded counters_sharded
run batched '"counters_batched"' '{}' counters_batched counters_batched
# options, and a stage that overrides the global choice
run mixed '{"plugin": "counters_sharded", "options": {"shards": 2}}' \
	'{"counters": {"plugin": "counters_batched", "options": {"every": 1000000, "interval_us": 50}}}' \
	counters_sharded counters_batched
run batched_flush_only '{"plugin": "counters_batched", "options": {"every": 1073741824, "interval_us": 10000000}}' \
	'{"counters": "counters_atomic"}' counters_batched counters_atomic

# run_null TAG COUNTERS: counters_null in the same pipeline
run_null() {
	local tag=$1 counters=$2
	step "$tag: strategies.counters = $counters (records nothing)"
	mkconf counters.json "$T/$tag.json" COUNT=$N RATE=$RATE SIZE=$SIZE \
		COUNTERS="$counters" SINK_STRATEGIES='{}'
	"$LCPIPE" check "$T/$tag.json" >"$T/$tag.check" 2>&1
	RC=$?
	expect_rc 0 "$tag: lcpipe check"
	lcrun "$tag" "$T/$tag.json" --duration 2 --no-live
	expect_rc 0 "$tag"
	expect_grep "$ERR" "generated $N frames" "$tag: gen sent them all"
	rcheck "$tag" -D N=$N \
		'all(st(s, "counters_strategy") == "counters_null" for s in stages)' \
		'r["drained"] == True' \
		'sum(ctr("gen", c) for c in st("gen", "counters")) == 0' \
		'sum(ctr("wa", c) for c in st("wa", "counters")) == 0' \
		'sum(v for c, v in st("wb", "counters").items() if c != "rx.out") == 0' \
		'sum(v for c, v in st("sink", "counters").items() if c != "in.in") == 0' \
		'st("gen", "out") == st("wa", "in") == st("wa", "out") == 0' \
		'ctr("wb", "rx.out") == ctr("sink", "in.in") == st("sink", "in") == N' \
		'ring("wb.rx -> sink.in")["high_water"] > 0' \
		'in_use == 0' 'r["leaked_objects"] == 0'
}

step "counters_null: lcpipe describe"
"$LCPIPE" describe counters_null >"$T/describe-null.md" 2>&1
RC=$?
expect_rc 0 "describe counters_null"
expect_grep "$T/describe-null.md" "counters plugin" "describe counters_null: its kind"
expect_grep "$T/describe-null.md" "measurement control" "describe counters_null: what it is"
expect_grep "$T/describe-null.md" "scratch_row" "describe counters_null: its option"
run_null null '"counters_null"'
run_null null_scratch '{"plugin": "counters_null", "options": {"scratch_row": true}}'
finish
