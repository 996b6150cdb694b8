#!/bin/bash
# Shutdown: the duration limit, SIGINT and SIGTERM each stop a running pipeline
# cleanly — exit 0, stop_reason right, drained, every mbuf back in its pool — while
# traffic is in flight (gen rate-limited, no count, through a chain crossing lcores
# twice). The drain must deliver what was in flight: every generated frame reaches
# the sink, in order (sink_check), none dropped. An rx port on a device that never
# runs dry (net_null, like a NIC under load) must not keep the pipeline from
# draining. Then SIGINT through sink_pcap: the capture holds every frame and
# reads back cleanly.
. "$(dirname "$0")/lib.sh"

RATE=200000
if [ -f "$PLUGDIR/sink_check.so" ]; then SINK=sink_check; else SINK=sink_null; fi
say "sink: $SINK"

# rcheck expressions for a clean stop with everything delivered
clean=(
	'r["drained"] == True'
	'ctr("gen", "packets") > 0'
	'st("sink", "in") == ctr("gen", "packets")'
	'total_drops() == 0'
	'all(g["count"] == 0 for g in rings)'
	'in_use == 0'
	'r["leaked_objects"] == 0'
)
if [ "$SINK" = sink_check ]; then
	clean+=('ctr("sink", "seq_ok") == ctr("gen", "packets")'
		'ctr("sink", "seq_gap") + ctr("sink", "seq_old") + ctr("sink", "bad_frame") == 0')
fi

step "(a) --duration 1"
confrun pair-chain.json dur 1 "--duration 1" LG=1 LA=2 LB=1 LS=2 COUNT=0 RATE=$RATE SIZE=64 \
	SINK=$SINK SINK_OPTS='{}'
rcheck "--duration" "${clean[@]}" 'r["stop_reason"] == "duration"' 'r["duration_s"] >= 1.0'
expect_grep "$OUT" 'stopped by duration, drained' "exit summary"

# sig NAME: run with no duration limit, send NAME once traffic flows
sig() {
	local s=$1
	step "($s) $s while traffic is in flight (--duration 0)"
	mkconf pair-chain.json "$T/$s.json" LG=1 LA=2 LB=1 LS=2 COUNT=0 RATE=$RATE SIZE=64 \
		SINK=$SINK SINK_OPTS='{}'
	lcstart "$s" "$T/$s.json" --duration 0 --no-live
	if ! wait_for "$ERR" '\[lcpipe\] running' 20; then
		fail "$s: lcpipe did not report running within 20 s"
		show_run
		stop_pid "$PID"
		lcwait
		return
	fi
	# periodic stats lines every 0.2 s: wait for one showing frames delivered
	wait_for "$OUT" 'delivered [0-9.]+ [kM]?obj \([1-9]' 10 || say "(no stats line with traffic yet)"
	sleep 0.3
	say "+ kill -${s#SIG} $PID"
	kill -"${s#SIG}" "$PID"
	lcwait
	expect_rc 0 "$s"
	rcheck "$s" "${clean[@]}" "r[\"stop_reason\"] == \"$s\""
	expect_grep "$OUT" "stopped by $s, drained" "exit summary"
}
sig SIGINT
sig SIGTERM

step "(endless) SIGTERM with an rx port that never runs dry (net_null -> sink_null)"
# DRAIN asks sources to stop producing. A port receiving live traffic (a NIC
# under load; net_null here) must stop taking new frames too, or the pipeline is
# never quiet: shutdown would always wait engine.drain_timeout and end undrained.
mkconf endless.json "$T/endless.json"
lcstart endless "$T/endless.json" --duration 0 --no-live
if wait_for "$ERR" '\[lcpipe\] running' 20; then
	sleep 0.3
	say "+ kill -TERM $PID"
	kill -TERM "$PID"
else
	fail "endless: lcpipe did not report running within 20 s"
	stop_pid "$PID"
fi
lcwait
expect_rc 0 "SIGTERM, endless rx"
rcheck "SIGTERM, endless rx" \
	'r["stop_reason"] == "SIGTERM"' \
	'ctr("nul", "rx_packets") > 0' \
	'st("sink", "in") == ctr("nul", "rx.out")' \
	'ctr("nul", "rx_packets") == ctr("nul", "rx.out") + ctr("nul", "rx.drop_unlinked") + ctr("nul", "rx.drop_ring_full")' \
	'in_use == 0' 'r["leaked_objects"] == 0' \
	'r["drained"] == True'
expect_nogrep "$ERR" 'not quiet after' "no drain timeout warning"

step "(pcap) SIGINT with a capture through sink_pcap"
if ! "$LCPIPE" describe sink_pcap >/dev/null 2>&1; then
	say "NOTE: the sink_pcap plugin is not built: this part is skipped"
else
	mkconf pair-chain.json "$T/pcap.json" LG=1 LA=2 LB=1 LS=2 COUNT=0 RATE=50000 SIZE=128 \
		SINK=sink_pcap SINK_OPTS="{\"path\": \"$T/sig.pcapng\"}"
	lcstart pcap "$T/pcap.json" --duration 0 --no-live
	if wait_for "$ERR" '\[lcpipe\] running' 20; then
		wait_for "$OUT" 'delivered [0-9.]+ [kM]?obj \([1-9]' 10 || say "(no stats line with traffic yet)"
		sleep 0.3
		say "+ kill -INT $PID"
		kill -INT "$PID"
	else
		fail "pcap: lcpipe did not report running within 20 s"
		stop_pid "$PID"
	fi
	lcwait
	expect_rc 0 "SIGINT with sink_pcap"
	rcheck "SIGINT with sink_pcap" \
		'r["stop_reason"] == "SIGINT"' 'r["drained"] == True' \
		'ctr("gen", "packets") > 0' \
		'ctr("sink", "packets") == st("sink", "in") == ctr("gen", "packets")' \
		'total_drops() == 0' 'in_use == 0' 'r["leaked_objects"] == 0'
	if [ -z "${TSHARK:-}" ] || [ ! -x "$TSHARK" ]; then
		say "NOTE: tshark not found: the capture is not read back"
	else
		want=$("$PYTHON3" -c 'import json,sys; print(json.load(open(sys.argv[1]))["stages"]["sink"]["counters"]["packets"])' "$REP")
		got=$("$TSHARK" -r "$T/sig.pcapng" -T fields -e frame.number 2>"$T/tshark.err" | wc -l)
		trc=${PIPESTATUS[0]}
		if [ "$trc" -ne 0 ] || grep -qiE 'cut short|appears to be damaged|corrupt' "$T/tshark.err"; then
			fail "tshark -r sig.pcapng: exit $trc"
			cat "$T/tshark.err"
		else
			ok "tshark reads the capture back (exit 0)"
		fi
		if [ "$got" -eq "$want" ]; then
			ok "capture holds $got frames = sink_pcap's packets counter"
		else
			fail "capture holds $got frames, sink_pcap counted $want"
		fi
	fi
fi
finish
