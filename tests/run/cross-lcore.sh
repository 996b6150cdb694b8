#!/bin/bash
# Cross-lcore links are rings: (a) gen on lcore 1 -> sink on lcore 2; (b) a chain
# that crosses lcores twice, gen@1 -> wa@2 =(ring pair)=> wb@1 -> sink@2. Rings are
# larger than the mbuf pool, so nothing can be lost: the report lists each ring
# with high_water > 0, in == out along the chain, exactly N delivered, no drop.
# (c) a ring of 8 under a source that emits bursts of 32: drop_ring_full counted,
# and sink.in + drops == generated (nothing lost silently).
. "$(dirname "$0")/lib.sh"

N=50000
step "(a) gen(count=$N)@1 -> sink@2, one ring"
genrun direct.json two 1.5 "gen@1 -> sink@2" sink_null '{}' LG=1 LS=2 COUNT=$N SIZE=64 RING=16384
gencheck "gen@1 -> sink@2" $N \
	'st("sink", "in") == N' \
	'st("gen", "lcore") == 1' 'st("sink", "lcore") == 2' \
	'sorted(r["lcores"]) == ["1", "2"]' \
	'len(rings) == 1' \
	'ring("gen.out -> sink.in")["size"] >= 16383' \
	'0 < ring("gen.out -> sink.in")["high_water"] <= ring("gen.out -> sink.in")["size"]' \
	'ring("gen.out -> sink.in")["count"] == 0' \
	'total_drops() == 0'
# the control thread sleeps between its wake-ups (stats, ring tallies every
# 0.5 s): a few ms of CPU in 1.5 s; one that never sleeps spends about all of it
rcheck "control thread sleeps" \
	'r["control_cpu_s"] < 0.25 * r["duration_s"]'

step "(b) gen@1 -> wa@2 =(ring pair)=> wb@1 -> sink@2: two rings, in == out along the chain"
genrun pair-chain.json chain 1.5 "cross-lcore chain" sink_null '{}' LG=1 LA=2 LB=1 LS=2 COUNT=$N SIZE=100
gencheck "cross-lcore chain" $N \
	'st("gen", "out") == N == st("wa", "in")' \
	'ctr("wa", "tx_packets") == N == ctr("wb", "rx_packets")' \
	'st("wb", "out") == N == st("sink", "in")' \
	'ctr("sink", "bytes") == N * 100' \
	'len(rings) == 2' \
	'ring("gen.out -> wa.tx")["high_water"] > 0' \
	'ring("wb.rx -> sink.in")["high_water"] > 0' \
	'all(g["count"] == 0 for g in rings)' \
	'total_drops() == 0'

step "(c) ring of 8 between gen@1 (bursts of 32, count $N) and sink@2: drops counted, none silent"
genrun direct.json small 1.5 "ring of 8" sink_null '{}' LG=1 LS=2 COUNT=$N SIZE=64 RING=8
gencheck "ring of 8" $N \
	'ctr("gen", "out.drop_ring_full") > 0' \
	'st("sink", "in") > 0' \
	'ctr("gen", "out.out") == st("sink", "in")' \
	'st("sink", "in") + ctr("gen", "out.drop_ring_full") + ctr("sink", "drop_shutdown") == N' \
	'st("sink", "in") + total_drops() == N' \
	'drops("gen") == ctr("gen", "out.drop_ring_full")' \
	'r["stages"]["gen"]["drops_by_reason"] == {"out.drop_ring_full": ctr("gen", "out.drop_ring_full")}' \
	'ring("gen.out")["size"] in (7, 8)' \
	'0 < ring("gen.out")["high_water"] <= ring("gen.out")["size"]'
expect_grep "$OUT" 'drop gen\.out\.drop_ring_full = [1-9]' "exit summary lists the drop reason"
finish
