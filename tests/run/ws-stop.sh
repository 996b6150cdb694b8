#!/bin/bash
# A clean stop of a WebSocket session, whatever the stage order: the demo
# pipeline (feedsim -> tcp -> net_ring pair -> tcp -> ws -> metrics, in
# process) ended by --duration, by SIGTERM, with its stages in the order of
# conf/demo.json (each tcp before its application), reversed (each application
# before its tcp), with the client's ws on another lcore than its tcp (ring
# links both ways), and over TLS (conf/demo-wss.json: the close frames inside
# TLS, then close_notify, then FIN). Each time both sides close with 1001 during the engine's
# linger, before any stop(): ws sent its close (closes_tx, stop_closes) and got
# the server's answer (stop_closes_answered, closes_rx), feedsim sent its own
# 1001 (closes) and logged the client's 1001, each TCP connection closed with
# FINs (tcp_closed on both stacks) and nothing was reset (tcp_rst_out,
# tcp_rst_in, stop_resets 0 on both stacks), the linger ended with nothing left
# (linger_left 0), drained, no fail_* counter moved, nothing leaked.
# Then connections that no application closes (tcp_app, which has no linger
# op, sending a file at 200 Mbit/s to a tcp_app receiving it, over two tcp
# stages): in the linger's second round each tcp stage sends a FIN on its end
# (stop_fins 1 on both), both close, nothing is reset (tcp_rst_out,
# stop_resets 0), nothing is left when the linger ends.
. "$(dirname "$0")/lib.sh"

need_plugins tcp ws feedsim metrics port_ethdev sink_null

# variant CONF_OUT ORDER: conf/demo.json (conf/demo-wss.json for wss) with its
# stages in ORDER (demo, reversed, split, wss: as in the file) and the
# exchange's rate limited (the close goes out while ticks are in flight,
# without a 2-CPU machine spending the run flat out)
variant() {
	local src=$top_srcdir/conf/demo.json
	[ "$2" = wss ] && src=$top_srcdir/conf/demo-wss.json
	"$PYTHON3" - "$src" "$1" "$2" <<'PY' || fail "cannot write the $2 config"
import json, sys
c = json.load(open(sys.argv[1]))
order = sys.argv[3]
st = {s["name"]: s for s in c["stages"]}
st["exchange"]["options"]["rate"] = 20000
if order == "reversed":
    names = ["exchange", "exch_tcp", "exch_port", "sink", "stats", "feed", "tcp", "port"]
    c["stages"] = [st[n] for n in names]
elif order == "split":
    for n in ("feed", "stats", "sink"):
        st[n]["lcore"] = 2
    # lossless: a ring that drops stream data would cut the stream (ws fails
    # the connection on the hole: fail_stream_gap) whenever lcore 2 is starved
    c["links"] = [l for l in c["links"] if l != "tcp.data -> feed.in"] + [
        {"from": "tcp.data", "to": "feed.in", "on_full": "block"}]
c["engine"]["linger"] = 5.0  # a bound: the close takes milliseconds here
json.dump(c, open(sys.argv[2], "w"), indent=1)
PY
}

# clean_stop WHAT REASON: the checks of a clean stop on the last run
clean_stop() {
	rcheck "$1" -D REASON="$2" \
		'r["stop_reason"] == REASON' \
		'r["drained"] == True' \
		'r["linger_left"] == 0' \
		'ctr("feed", "opens") == 1' \
		'ctr("feed", "closes_tx") == 1' \
		'(ctr("feed", "stop_closes"), ctr("feed", "stop_closes_answered")) in ((1, 1), (0, 0))' \
		'ctr("feed", "closes_rx") == 1' \
		'ctr("feed", "fail_close_unfinished") == 0' \
		'sum(v for k, v in r["stages"]["feed"]["counters"].items() if k.startswith("fail_")) == 0' \
		'ctr("exchange", "closes") == 1' \
		'ctr("exchange", "closes_rx") == 1' \
		'ctr("tcp", "tcp_closed") == 1' \
		'ctr("exch_tcp", "tcp_closed") == 1' \
		'ctr("tcp", "tcp_rst_out") + ctr("tcp", "tcp_rst_in") + ctr("tcp", "stop_resets") == 0' \
		'ctr("exch_tcp", "tcp_rst_out") + ctr("exch_tcp", "tcp_rst_in") + ctr("exch_tcp", "stop_resets") == 0' \
		'ctr("stats", "msgs") > 0' \
		'ctr("stats", "seq_gaps") == 0' \
		'r["leaked_objects"] == 0'
	expect_grep "$ERR" '\[feedsim:exchange\] client 0x[0-9a-f]+: close 1001 from the client' "$1: feedsim got the client's 1001"
	# whichever side's linger ran first closed first (lcores race in "split")
	expect_grep "$ERR" '\[ws:feed\] conn 0: (the server answered our close with 1001|the server closed first with 1001 while we stop)' "$1: ws got the server's 1001"
	expect_grep "$ERR" '\[ws:feed\] conn 0 \([^)]*\): closed \(close handshake and TCP close complete\)' "$1: ws closed cleanly"
	expect_nogrep "$ERR" 'connection\(s\) still open reset|still closing after' "$1: nothing reset at stop"
}

# the wss config's tls/ paths are relative to its directory
mkdir -p "$T/cfg"
ln -s "$top_srcdir/conf/tls" "$T/cfg/tls"

for order in demo reversed split wss; do
	step "($order) --duration 3"
	variant "$T/cfg/$order.json" $order
	new_prefix
	# shellcheck disable=SC2046
	lcrun "$order" "$T/cfg/$order.json" --duration 3 --no-live -- $(eal_base) --lcores=0@0,1@1,2@0
	expect_rc 0 "$order"
	clean_stop "$order, duration" duration
done

step "(tcp_app) connections no application closes: FIN from the tcp stages"
APPDIR=$top_builddir/tests/kernel/plugins/.libs # test-only plugins; tcp_app is plugins/tcp_app
if [ -e "$top_builddir/plugins/tcp_app/.libs/tcp_app.so" ]; then
	head -c 67108864 /dev/urandom >"$T/big.bin"
	mkconf fault-xfer.json "$T/apps.json" APPDIR="$APPDIR" DURATION=1.5 FAULT_A='{}' FAULT_B='{}' \
		APP_A="{\"mode\": \"send\", \"connect\": \"10.98.0.2:7000\", \"file\": \"$T/big.bin\", \"rate_mbps\": 200}" \
		APP_B="{\"mode\": \"recv\", \"listen\": 7000}"
	lcrun apps "$T/apps.json" --no-live
	expect_rc 0 "tcp_app"
	rcheck "tcp_app, duration" \
		'r["stop_reason"] == "duration"' \
		'r["drained"] == True' \
		'r["linger_left"] == 0' \
		'ctr("tcp_a", "stop_fins") == 1' \
		'ctr("tcp_b", "stop_fins") == 1' \
		'ctr("tcp_a", "tcp_closed") == 1' \
		'ctr("tcp_b", "tcp_closed") == 1' \
		'ctr("tcp_a", "tcp_rst_out") + ctr("tcp_a", "tcp_rst_in") + ctr("tcp_a", "stop_resets") == 0' \
		'ctr("tcp_b", "tcp_rst_out") + ctr("tcp_b", "tcp_rst_in") + ctr("tcp_b", "stop_resets") == 0' \
		'r["leaked_objects"] == 0'
	expect_grep "$ERR" '\[tcp:tcp_a\] stopping: FIN on 1 connection\(s\) no application closed' "tcp_a FINs its connection"
else
	fail "tcp_app.so not built (make check builds it): $APPDIR"
fi

step "(demo) SIGTERM once messages flow"
variant "$T/sig.json" demo
new_prefix
# shellcheck disable=SC2046
lcstart sig "$T/sig.json" --duration 0 --no-live -- $(eal_base) --lcores=0@0,1@1,2@0
if wait_for "$ERR" '\[ws:feed\] conn 0: open' 20; then
	sleep 0.3
	say "+ kill -TERM $PID"
	kill -TERM "$PID"
else
	fail "SIGTERM: the ws stage did not open within 20 s"
	show_run
	stop_pid "$PID"
fi
lcwait
expect_rc 0 "SIGTERM"
clean_stop "demo, SIGTERM" SIGTERM

finish
