#!/bin/bash
# Order and integrity: sink_check (tests/run/plugins/sink_check.c) checks that
# gen's sequence numbers arrive 0, 1, 2, ... with no gap, no duplicate, no
# reordering, and that every frame is a well-formed IPv4/UDP frame with gen's
# payload pattern. Over (a) one cross-lcore ring, (b) a same-lcore chain through a
# ring pair, (c) a chain crossing lcores twice. (d) with a ring of 8 that drops:
# order still holds and every missing sequence number is a counted drop.
. "$(dirname "$0")/lib.sh"

[ -f "$PLUGDIR/sink_check.so" ] || skip "test plugin $PLUGDIR/sink_check.so not built"

N=50000
# gencheck expressions shared by the lossless runs
lossless=(
	'ctr("sink", "frames") == N'
	'ctr("sink", "seq_ok") == N'
	'ctr("sink", "seq_gap") == 0'
	'ctr("sink", "seq_missing") == 0'
	'ctr("sink", "seq_old") == 0'
	'ctr("sink", "bad_frame") == 0'
	'ctr("sink", "bad_payload") == 0'
	'total_drops() == 0'
)

step "(a) gen@1 -> sink_check@2 over one ring"
genrun direct.json a 1.5 "(a)" sink_check '{}' LG=1 LS=2 COUNT=$N SIZE=200 RING=16384
gencheck "(a) cross-lcore ring" $N "${lossless[@]}" 'st("sink", "plugin") == "sink_check"' \
	'len(rings) == 1'

step "(b) gen -> wa =(ring pair)=> wb -> sink_check, all on lcore 1"
genrun pair-chain.json b 1.5 "(b)" sink_check '{}' LG=1 LA=1 LB=1 LS=1 COUNT=$N SIZE=60
gencheck "(b) same-lcore chain" $N "${lossless[@]}" 'len(rings) == 0'

step "(c) gen@1 -> wa@2 =(ring pair)=> wb@1 -> sink_check@2"
genrun pair-chain.json c 1.5 "(c)" sink_check '{}' LG=1 LA=2 LB=1 LS=2 COUNT=$N SIZE=1514
gencheck "(c) chain across lcores twice" $N "${lossless[@]}" 'len(rings) == 2'

# many frames, so that the sink's lcore runs while gen still generates: with a
# short run all drops can come before the sink's first poll (no gap to see)
ND=1000000
step "(d) ring of 8, gen bursts of 32, $ND frames: gaps exactly match the counted drops"
genrun direct.json d 1.5 "(d)" sink_check '{"log_max": 0}' LG=1 LS=2 COUNT=$ND SIZE=64 RING=8
# next = the sequence number sink_check expects next = highest seen + 1; the
# frames after it (if the last ones were dropped) are the tail
gencheck "(d) lossy ring" $ND \
	'ctr("gen", "out.drop_ring_full") > 0' \
	'ctr("sink", "seq_old") == 0' \
	'ctr("sink", "bad_frame") + ctr("sink", "bad_payload") == 0' \
	'ctr("sink", "seq_gap") > 0' \
	'ctr("sink", "frames") == ctr("sink", "seq_ok") + ctr("sink", "seq_gap") == st("sink", "in")' \
	'ctr("sink", "seq_missing") <= ctr("gen", "out.drop_ring_full")' \
	'ctr("sink", "seq_missing") + (N - (ctr("sink", "frames") + ctr("sink", "seq_missing"))) == ctr("gen", "out.drop_ring_full")'

step "(e) sink_check itself: a wrong start is seen (the checker can fail)"
genrun direct.json e 1 "(e)" sink_check '{"first": 10, "log_max": 1}' LG=1 LS=1 COUNT=1000 SIZE=64 RING=1024
rcheck "(e) expecting 10 first, gen starts at 0" \
	'ctr("sink", "frames") == 1000' \
	'ctr("sink", "seq_old") == 10' \
	'ctr("sink", "seq_ok") == 990' \
	'ctr("sink", "seq_gap") == 0'
expect_grep "$ERR" '\[sink_check:sink\] (error: )?sequence 0, expected 10 \(duplicate or reordered\)' "sink_check logs the first wrong frame"
finish
