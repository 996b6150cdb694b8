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
finish
