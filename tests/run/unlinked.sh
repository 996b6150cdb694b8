#!/bin/bash
# Unlinked outputs: what a stage emits on an output port that is not linked is
# freed and counted as "<port>.drop_unlinked" — never lost silently, never leaked.
# gen.out is a required port, so leaving it unlinked is a config error (78);
# port_ethdev.rx is optional: (a) two gens feed the two ends of a ring pair whose
# rx ports are unlinked, (b) one port on net_null (an endless source) with rx
# unlinked.
. "$(dirname "$0")/lib.sh"

step "gen.out unlinked: refused before anything starts (exit 78)"
mkconf gen-unlinked.json "$T/gen.json"
say "+ lcpipe check gen.json"
OUT=$T/check.out ERR=$T/check.err
"$LCPIPE" check "$T/gen.json" >"$OUT" 2>"$ERR"
RC=$?
expect_rc 78 "lcpipe check"
expect_grep "$ERR" 'required output port "out" of stage "gen" \(gen\) is not linked' "the error names the port"
lcrun genrun "$T/gen.json" --duration 1 --no-live
expect_rc 78 "lcpipe run"
expect_grep "$ERR" 'required output port "out" of stage "gen"' "lcpipe run says why"

NA=3000 NB=5000
step "(a) ga(count=$NA) -> pa =(ring pair)=> pb.rx unlinked; gb(count=$NB) -> pb => pa.rx unlinked"
confrun unlinked-pair.json pair 1 "ring pair with unlinked rx ports" NA=$NA NB=$NB
rcheck "unlinked rx" -D NA=$NA -D NB=$NB \
	'r["drained"] == True' \
	'ctr("ga", "packets") == NA' 'ctr("gb", "packets") == NB' \
	'ctr("pb", "rx_packets") == NA' 'ctr("pa", "rx_packets") == NB' \
	'ctr("pb", "rx.drop_unlinked") == NA' \
	'ctr("pa", "rx.drop_unlinked") == NB' \
	'ctr("pa", "rx.out") == 0 == ctr("pb", "rx.out")' \
	'st("pb", "drops_by_reason") == {"rx.drop_unlinked": NA}' \
	'total_drops() == NA + NB' \
	'in_use == 0' 'r["leaked_objects"] == 0'
expect_grep "$OUT" 'drop pb\.rx\.drop_unlinked = '"$NA" "exit summary lists the drop"

step "(b) port_ethdev on net_null (endless rx), rx unlinked, alone"
confrun unlinked-null.json null 1 "net_null with rx unlinked"
# (whether an endless rx source lets the pipeline drain is shutdown.sh's business)
rcheck "net_null rx unlinked" \
	'ctr("nul", "rx_packets") > 0' \
	'ctr("nul", "rx.drop_unlinked") == ctr("nul", "rx_packets")' \
	'ctr("nul", "rx.out") == 0' \
	'in_use == 0' 'r["leaked_objects"] == 0'
expect_grep "$ERR" 'rx is not linked' "port_ethdev says rx frames will be dropped"
finish
