#!/bin/bash
# The main job: conf/demo.json (= conf/default.json, the embedded default) for a
# short run. feedsim streams ticks over WebSocket through two instances of
# lcpipe's TCP/IP stack joined by a net_ring pair; the client's messages go
# through metrics. Asserts what a newcomer is promised: messages flow (and at a
# non-trivial count), zero sequence gaps and duplicates, the handshake and the
# subscription happened, no protocol failure, no reconnect, fragmented messages
# and pings went through, nothing leaked. Also `lcpipe run` with no config runs the
# same job (checked with `lcpipe check` on the embedded default).
. "$(dirname "$0")/lib.sh"

need_plugins tcp ws feedsim metrics
step "conf/demo.json for 2 s"
# -- replaces the config's eal array: a unique file prefix for this test
demo_run demo "$top_srcdir/conf/demo.json" 2 "demo run"
rcheck "demo" \
	'r["stop_reason"] == "duration"' \
	'r["drained"] == True' \
	'ctr("stats", "msgs") > 10000' \
	'ctr("stats", "ticks") == ctr("stats", "msgs")' \
	'ctr("stats", "seq_gaps") == 0' \
	'ctr("stats", "gap_events") == 0' \
	'ctr("stats", "seq_dups") == 0' \
	'ctr("stats", "symbols") == 100' \
	'ctr("stats", "lat_samples") > 0' \
	'ctr("feed", "opens") == 1' \
	'ctr("feed", "reconnects") == 0' \
	'ctr("feed", "subscribes_tx") == 1' \
	'ctr("feed", "msgs_zero_copy") > 0' \
	'ctr("feed", "msgs_assembled") > 0' \
	'ctr("feed", "pings_rx") > 0' \
	'ctr("feed", "pongs_tx") + ctr("feed", "pings_after_close") == ctr("feed", "pings_rx")' \
	'ctr("feed", "fail_protocol_1002") + ctr("feed", "fail_bad_utf8_1007") + ctr("feed", "fail_too_big_1009") == 0' \
	'ctr("exchange", "handshakes") == 1' \
	'ctr("exchange", "client_msgs") == 1' \
	'ctr("exchange", "fragmented_msgs") > 0' \
	'ctr("exchange", "msgs") >= ctr("stats", "msgs")' \
	'ctr("tcp", "tcp_established") == 1' \
	'ctr("exch_tcp", "tcp_accepts") == 1' \
	'r["leaked_objects"] == 0'
if grep -q 'sequence gaps 0 (events 0), duplicates 0' "$OUT" "$ERR"; then
	ok "the metrics summary line says: sequence gaps 0, duplicates 0"
else
	fail "no metrics summary line with zero gaps in the output"
fi

step "reconnects: feedsim closes each client after 20000 messages, ws re-opens"
# the demo with the simulator's count/close_when_done and a 10 ms reconnect: each
# session restarts the sequences at 1; metrics must take that as a restart
# (seq_resyncs, once per symbol and session: the first message of each session
# carries LCP_MSG_F_SESSION_START), not as duplicates or gaps
"$PYTHON3" - "$top_srcdir/conf/demo.json" "$T/reconnect.json" <<'PY' || fail "cannot write the reconnect config"
import json, sys
c = json.load(open(sys.argv[1]))
for s in c["stages"]:
    if s["name"] == "exchange":
        s["options"].update({"count": 20000, "close_when_done": True})
    if s["name"] == "feed":
        s["options"].update({"reconnect_min_ms": 10, "reconnect_max_ms": 20})
json.dump(c, open(sys.argv[2], "w"))
PY
demo_run reconnect "$T/reconnect.json" 2 "demo with reconnects"
rcheck "demo with reconnects" \
	'ctr("feed", "opens") >= 3' \
	'ctr("stats", "sessions") == ctr("feed", "opens")' \
	'ctr("stats", "seq_dups") == 0' 'ctr("stats", "seq_gaps") == 0' \
	'100 * (ctr("stats", "sessions") - 2) <= ctr("stats", "seq_resyncs") <= 100 * (ctr("stats", "sessions") - 1)' \
	'ctr("stats", "symbols") + ctr("stats", "seq_in_order") + ctr("stats", "gap_events") + ctr("stats", "seq_dups") + ctr("stats", "seq_resyncs") + ctr("stats", "symbol_table_full") == ctr("stats", "ticks")' \
	'r["leaked_objects"] == 0'

step "ws ends the run: stop_after_msgs, stop_on_close"
# issue 19 item 6: a capture of N messages, or of one session, without a duration
"$PYTHON3" - "$top_srcdir/conf/demo.json" "$T" <<'PY' || fail "cannot write the stop configs"
import json, sys
for tag, feed, exch in (("after", {"stop_after_msgs": 100000}, {}),
                        ("close", {"stop_on_close": True}, {"count": 20000, "close_when_done": True})):
    c = json.load(open(sys.argv[1]))
    c["engine"]["duration"] = 0
    for s in c["stages"]:
        if s["name"] == "feed":
            s["options"].update(feed)
        if s["name"] == "exchange":
            s["options"].update(exch)
    json.dump(c, open("%s/stop-%s.json" % (sys.argv[2], tag), "w"))
PY
demo_run stop-after "$T/stop-after.json" 0 "stop_after_msgs"
rcheck "stop_after_msgs" \
	'r["stop_reason"] == "ws stop_after_msgs"' \
	'r["drained"] == True' \
	'ctr("stats", "msgs") >= 100000' \
	'ctr("stats", "seq_gaps") == 0' \
	'r["leaked_objects"] == 0'
expect_grep "$ERR" 'messages delivered \(stop_after_msgs 100000\): ending the run' "stop_after_msgs is logged"
demo_run stop-close "$T/stop-close.json" 0 "stop_on_close"
rcheck "stop_on_close" \
	'r["stop_reason"] == "ws stop_on_close"' \
	'r["drained"] == True' \
	'ctr("stats", "msgs") == 20000' \
	'ctr("feed", "opens") == 1' \
	'ctr("feed", "connects") == 1' \
	'r["leaked_objects"] == 0'

step "the embedded default is this job"
"$LCPIPE" check "$top_srcdir/conf/default.json" >"$T/check.out" 2>&1 || fail "lcpipe check conf/default.json"
cmp -s "$top_srcdir/conf/default.json" "$top_srcdir/conf/demo.json" &&
	ok "conf/default.json == conf/demo.json" || fail "conf/default.json differs from conf/demo.json"
# run --help describes the job it runs without a config (issue 19: it used to
# describe a generator job that no longer existed)
want=$("$PYTHON3" -c 'import json, sys; c = json.load(open(sys.argv[1])); print("\"%s\", for %g s." % (c["name"], c["engine"]["duration"]))' "$top_srcdir/conf/default.json")
if "$LCPIPE" run --help | grep -qF -- "Without CONF: the embedded default job (conf/default.json), $want"; then
	ok "run --help names the default job and its duration"
else
	fail "run --help does not say: $want"
fi
finish
