#!/bin/bash
# Same-lcore run to completion: gen (count N) -> port pair -> sink_null, every
# stage on lcore 1. Direct calls only: no ring in the report; the sink gets
# exactly N; no drop anywhere; every mbuf back in its pool; exit 0.
. "$(dirname "$0")/lib.sh"

N=20000
step "gen(count=$N) -> wa =(ring pair)=> wb -> sink, all on lcore 1"
genrun pair-chain.json same 1 "same-lcore run" sink_null '{}' LG=1 LA=1 LB=1 LS=1 COUNT=$N SIZE=64
gencheck "same lcore" $N \
	'r["stop_reason"] == "duration"' \
	'st("gen", "out") == N' \
	'st("wa", "in") == N' \
	'ctr("wa", "tx_packets") == N' \
	'ctr("wb", "rx_packets") == N' \
	'st("wb", "out") == N' \
	'st("sink", "in") == N' \
	'ctr("sink", "bytes") == N * 64' \
	'len(rings) == 0' \
	'total_drops() == 0' \
	'all(st(s, "lcore") == 1 for s in stages)' \
	'list(r["lcores"]) == ["1"]' \
	'len(mempools) >= 1' \
	'all(m["in_use"] == 0 for m in mempools)'
expect_nogrep "$OUT" 'LEAK' "exit summary"
finish
