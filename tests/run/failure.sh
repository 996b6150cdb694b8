#!/bin/bash
# Failure paths end promptly (each run bounded at 30 s), with a non-zero exit
# status and a message that names the stage, and leave nothing behind:
#  (a) a stage whose init fails (port_ethdev naming an ethdev that does not
#      exist) after five stages initialised fine: exit 1, the message names the
#      stage and lists the ethdevs there are, the stages already initialised are
#      finalised (gen logs its fini line), no mbuf leaked;
#  (b) two stages claiming one ethdev: the second is refused, naming the first;
#  (c) a stage whose start fails (sink_pcap cannot create its file): exit 1;
#  (d) a sink that really leaks mbufs: exit 3, leaked_objects and the pool's
#      in_use say how many, the summary flags it (the leak check can fail);
#  (e) port_ethdev's tx_socket on a device that is not af_packet (net_null):
#      refused at init, naming the device and its driver; on a ring pair:
#      refused by lcpipe check (exit 78).
# After a startup failure the --report file must still be written, with the
# mempool check: that is how "nothing leaked" is known.
. "$(dirname "$0")/lib.sh"

# startup_report WHAT: the report of a run that failed before traffic started
startup_report() {
	if [ ! -s "$REP" ]; then
		fail "$1: no --report written after a startup failure, so nothing says whether mbufs leaked (the mempool check runs only after a full run)"
		return
	fi
	rcheck "$1" 'r["stop_reason"] == "startup failure"' 'in_use == 0' 'r["leaked_objects"] == 0'
}

step "(a) init of stage px fails: device \"net_null9\" does not exist"
confrun_rc 1 init-fail.json init 1 "init failure"
expect_grep "$ERR" '\[port_ethdev:px\] (error: )?device "net_null9" not found; ethdev ports: 0 net_null0' "the error names the stage and the ethdevs there are"
expect_grep "$ERR" '\[port_ethdev:px\] (error: )?init failed' "the engine names the stage that failed"
expect_grep "$ERR" '\[gen:gen\] generated 0 frames' "stages initialised before it are finalised (gen)"
expect_grep "$ERR" '\[gen:g2\] generated 0 frames' "stages initialised before it are finalised (g2)"
expect_nogrep "$ERR" 'running "' "no lcore started"
expect_nogrep "$ERR" 'removing net_ring|Segmentation|Aborted|core dumped' "clean teardown"
startup_report "init failure"

step "(b) two stages on one ethdev: the second is refused"
confrun_rc 1 claim-twice.json claim 1 "ethdev claimed twice"
expect_grep "$ERR" '\[port_ethdev:p2\] (error: )?port 0 \(net_null0\) is already used by stage "p1"' "the error names both stages"
startup_report "ethdev claimed twice"

step "(c) start of stage cap fails: sink_pcap cannot create its file"
if "$LCPIPE" describe sink_pcap >/dev/null 2>&1; then
	confrun_rc 1 start-fail.json start 1 "start failure"
	expect_grep "$ERR" '\[sink_pcap:cap\] (error: )?cannot create .*/no-such-dir/cap\.pcapng: No such file or directory' "the error names the stage and the file"
	expect_grep "$ERR" '\[sink_pcap:cap\] (error: )?start failed' "the engine names the stage that failed"
	expect_grep "$ERR" '\[gen:gen\] generated 0 frames' "every stage is finalised"
	startup_report "start failure"
else
	say "NOTE: the sink_pcap plugin is not built: (c) skipped"
fi

step "(d) a sink that keeps 5 mbufs forever: exit 3"
if [ -f "$PLUGDIR/sink_check.so" ]; then
	confrun_rc 3 direct.json leak 1 "leaked mbufs" LG=1 LS=1 COUNT=1000 RATE=0 SIZE=64 RING=1024 \
		SINK=sink_check SINK_OPTS='{"leak": 5}'
	rcheck "leaked mbufs" 'r["leaked_objects"] == 5' 'in_use == 5' 'st("sink", "in") == 1000'
	expect_grep "$OUT" 'mempool lcp_pkt_s0: 5 of [0-9]+ in use  <- LEAK' "the summary flags the pool"
	expect_grep "$ERR" 'mempool lcp_pkt_s0: 5 of [0-9]+ objects still in use after shutdown' "the log says so"
else
	say "NOTE: tests/run/plugins/sink_check.so not built: (d) skipped"
fi
step "(e) tx_socket on net_null0 (not af_packet): refused at init"
confrun_rc 1 tx-socket-null.json txs 1 "tx_socket on net_null"
expect_grep "$ERR" '\[port_ethdev:p\] (error: )?tx_socket: net_null0 \(driver net_null\) is not an af_packet port; tx_socket works only with net_af_packet' "the error names the device and its driver"
startup_report "tx_socket on net_null"
mkconf tx-socket-ring-pair.json "$T/txrp.json"
RC=0
"$LCPIPE" check "$T/txrp.json" >"$T/txrp.check" 2>&1 || RC=$?
expect_rc 78 "lcpipe check: tx_socket on a ring pair"
expect_grep "$T/txrp.check" '^error: stages\[1\]\.options: tx_socket sends on an af_packet port.s kernel interface; ring pair "rp" has none$' "check names the stage's options"
finish
