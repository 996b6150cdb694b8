#!/bin/bash
# The pool strategy in a real pipeline: the ws stage's msg objects and assembly
# buffers and the tcp stage's queue nodes come from the module the config picks;
# messages are made on lcore 1 and freed on lcore 2 (metrics -> sink), so every
# object crosses lcores before it goes back.
# (a) each module (pool_mempool, pool_malloc, pool_rte_malloc, pool_ring) at a
#     paced feed with fragmented and segment-spanning messages: zero sequence
#     gaps, nothing dropped, the report lists the stage's pools with the module,
#     nothing out at exit, no failed get; the per-stage override keeps exch_tcp
#     on pool_mempool;
# (b) assembly_size below the messages: they outgrow the pool buffer and are
#     assembled on the heap (msgs_assembled_heap), still with zero gaps.
. "$(dirname "$0")/lib.sh"

need_plugins tcp ws feedsim metrics pool_mempool pool_malloc pool_rte_malloc pool_ring
for m in pool_mempool pool_malloc pool_rte_malloc pool_ring; do
	step "(a) $m: msgs and assembly buffers taken on lcore 1, freed on lcore 2"
	mkconf pools.json "$T/$m.json" POOL=$m POOL_REF="\"$m\"" SIZES='200:60,1400:40' RATE=20000 ASM=2048 \
		EMPTY=drop
	lcrun "$m" "$T/$m.json" --duration 1.5 --no-live
	expect_rc 0 "$m"
	rcheck "$m" -D M=$m \
		'r["drained"] == True' \
		'ctr("stats", "msgs") > 500' \
		'ctr("stats", "seq_gaps") == 0' 'ctr("stats", "seq_dups") == 0' \
		'ctr("feed", "msgs_assembled") > 0' 'ctr("feed", "msgs_zero_copy") > 0' \
		'ctr("feed", "drop_no_msg") + ctr("feed", "drop_assembly_pool_empty") == 0' \
		'st("feed", "pool_strategy") == M' 'st("exch_tcp", "pool_strategy") == "pool_mempool"' \
		'sorted(p["name"] for p in r["pools"] if p["stage"] == "feed") == ["assembly", "msgs"]' \
		'all(p["module"] == M for p in r["pools"] if p["stage"] in ("feed", "tcp"))' \
		'[p["module"] for p in r["pools"] if p["stage"] == "exch_tcp"] == ["pool_mempool"]' \
		'all(p["in_use"] == 0 and p["get_fail"] == 0 for p in r["pools"])' \
		'st("sink", "in") == ctr("stats", "msgs")' \
		'r["leaked_objects"] == 0'
done

step "(b) messages longer than assembly_size go to the heap"
confrun pools.json heap 1.5 "assembly on the heap" POOL=pool_ring POOL_REF='"pool_ring"' SIZES='1400:100' RATE=20000 ASM=256 \
	EMPTY=drop
rcheck "heap assembly" \
	'ctr("stats", "msgs") > 500' 'ctr("stats", "seq_gaps") == 0' \
	'ctr("feed", "msgs_assembled_heap") > 0' \
	'ctr("feed", "drop_assembly_pool_empty") + ctr("feed", "drop_assembly_nomem") == 0' \
	'all(p["in_use"] == 0 for p in r["pools"])' 'r["leaked_objects"] == 0'
finish
