#!/bin/bash
# Ring full -> the link's on_full: "drop" counts what does not fit, "block"
# holds the producing lcore until the consumer makes room (backpressure).
# gen (flat out, bursts of 32) on lcore 1 -> a ring of 8 -> sink_check on
# lcore 2, which spins stall_us per burst (a consumer slower than its producer).
#  (a) block, no timeout: every frame delivered in order (seq_ok == N, nothing
#      missing), no drop at all, gen.out.backpressure_waits > 0 and the wait
#      cycles counted, the ring reported with on_full "block";
#  (b) the control: the same with drop loses frames (drop_ring_full > 0,
#      fewer than N arrive), so (a) would see a loss if block did not hold;
#  (c) block with block_timeout_us 50 under a consumer stalling 2 ms a burst:
#      the producer gives up after the timeout and drops, counted under
#      drop_ring_full; delivered + dropped == generated;
#  (d) lcpipe check refuses block links on a cycle between lcores (deadlock).
# Pool empty -> the ws stage's pool_wait_us: feedsim flat out -> tcp -> ws with
# a msgs pool of 63 (pool_ring: no per-lcore cache) on lcore 1, a stage that
# stalls 50 us a burst on lcore 2 frees them (through metrics and sink_null):
#  (e) the control, pool_wait_us 0: drop_no_msg > 0 and metrics sees gaps;
#  (f) pool_wait_us 1 s: ws waits for msgs to come back instead, nothing is
#      dropped, no sequence gap, pool_waits > 0, every pool back to 0.
. "$(dirname "$0")/lib.sh"

N=50000
step "(a) on_full block: all $N frames arrive, in order, none dropped"
# the sink ends the run at the N-th frame (60 s only bounds a hang), so a
# loaded machine delivers all N late, never fewer
confrun backpressure.json block 60 "block" COUNT=$N STALL=20 ONFULL=block BT=0 STOP=$N
gencheck "block" $N \
	'r["stop_reason"] != "duration"' \
	'ctr("sink", "frames") == N' 'ctr("sink", "seq_ok") == N' \
	'ctr("sink", "seq_missing") == 0' 'ctr("sink", "seq_old") == 0' \
	'ctr("gen", "out.drop_ring_full") == 0' 'total_drops() == 0' \
	'ctr("gen", "out.backpressure_waits") > 0' \
	'ctr("gen", "out.backpressure_cycles") > 0' \
	'ring("gen.out")["on_full"] == "block"' \
	'ring("gen.out")["block_timeout_us"] == 0'
expect_grep "$OUT" 'backpressure gen\.out: [1-9][0-9]* waits for a full ring' \
	"exit summary reports the waits"

step "(b) control: on_full drop loses frames under the same load"
confrun backpressure.json drop 3 "drop" COUNT=$N STALL=20 ONFULL=drop BT=0 STOP=0
gencheck "drop" $N \
	'ctr("gen", "out.drop_ring_full") > 0' \
	'ctr("sink", "seq_ok") < N' \
	'ctr("sink", "frames") + ctr("gen", "out.drop_ring_full") == N' \
	'"out.backpressure_waits" not in r["stages"]["gen"]["counters"]' \
	'ring("gen.out")["on_full"] == "drop"'

step "(c) on_full block with block_timeout_us 50 under a 2 ms stall: gives up and drops, counted"
confrun backpressure.json timeout 1.5 "block with timeout" COUNT=$N STALL=2000 ONFULL=block BT=50 STOP=0
gencheck "block with timeout" $N \
	'ctr("gen", "out.backpressure_waits") > 0' \
	'ctr("gen", "out.drop_ring_full") > 0' \
	'ctr("sink", "frames") + ctr("gen", "out.drop_ring_full") + ctr("sink", "drop_shutdown") == N' \
	'ring("gen.out")["block_timeout_us"] == 50'

step "(d) lcpipe check: block links on a cycle between lcores"
cat >"$T/cycle.json" <<JSON
{"eal": ["-l", "0,1,2"], "plugin_path": ["$PLUGDIR"],
 "engine": {"on_ring_full": "block"},
 "stages": [
  {"name": "gen", "plugin": "gen", "lcore": 1},
  {"name": "wa", "plugin": "port_ethdev", "lcore": 2, "options": {"ring_pair": "w", "ring_side": 0}},
  {"name": "wb", "plugin": "port_ethdev", "lcore": 2, "options": {"ring_pair": "w", "ring_side": 1}},
  {"name": "sink", "plugin": "sink_null", "lcore": 1}],
 "links": ["gen.out -> wa.tx", {"from": "wb.rx", "to": "sink.in", "on_full": "drop"}]}
JSON
"$LCPIPE" check "$T/cycle.json" >"$T/c1.out" 2>&1
rc=$?
[ $rc -eq 0 ] && ok "one block link and one drop link: no cycle, valid" || { cat "$T/c1.out"; fail "valid config refused (rc $rc)"; }
sed -i 's/"on_full": "drop"/"on_full": "block"/' "$T/cycle.json"
"$LCPIPE" check "$T/cycle.json" >"$T/c2.out" 2>&1
rc=$?
[ $rc -eq 78 ] && ok "block both ways: refused (78)" || fail "block cycle: exit $rc, expected 78"
expect_grep "$T/c2.out" 'links: on_full "block" on a cycle between lcores can deadlock: links\[[01]\] \(lcore [12] -> [12]\), links\[[01]\] \(lcore [12] -> [12]\)' \
	"the message names both links and lcores"

step "(e) control: ws msgs pool of 63, no wait: drop_no_msg, gaps, each loss flagged downstream"
# the message after a drop carries LCP_MSG_F_LOSS and how many were lost: ws
# counts msgs_after_loss, metrics loss_events and msgs_lost_upstream (all but
# the drops after the last delivered message; the ring to lcore 2 drops none)
confrun pool-wait.json nowait 2 "pool empty, no wait" MSGS=63 WAIT=0 ONFULL=block
rcheck "pool empty, no wait" \
	'ctr("feed", "drop_no_msg") > 0' \
	'ctr("stats", "seq_gaps") > 0' \
	'ctr("stats", "loss_events") == ctr("feed", "msgs_after_loss") > 0' \
	'0 < ctr("stats", "msgs_lost_upstream") <= ctr("feed", "drop_no_msg") + ctr("feed", "drop_assembly_pool_empty")' \
	'ctr("feed", "msg.drop_ring_full") == 0' \
	'ctr("feed", "pool_waits") == 0' \
	'all(p["in_use"] == 0 for p in r["pools"])' 'r["leaked_objects"] == 0'

step "(f) ws pool_wait_us 1 s: backpressure instead of drops"
confrun pool-wait.json wait 2 "pool empty, wait" MSGS=63 WAIT=1000000 ONFULL=drop
rcheck "pool empty, wait" \
	'ctr("stats", "msgs") > 1000' \
	'ctr("feed", "drop_no_msg") == 0' \
	'total_drops() == ctr("port", "drop_rx_shutdown") + ctr("exch_port", "drop_rx_shutdown")' \
	'ctr("stats", "seq_gaps") == 0' \
	'ctr("feed", "pool_waits") > 0' 'ctr("feed", "pool_wait_cycles") > 0' \
	'ctr("slow", "msgs") == ctr("stats", "msgs")' \
	'all(p["in_use"] == 0 for p in r["pools"])' 'r["leaked_objects"] == 0'
finish
