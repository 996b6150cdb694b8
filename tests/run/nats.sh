#!/bin/bash
# sink_nats: msg objects published to a real nats-server (Debian's), started here
# on 127.0.0.1 and a free port (JetStream with its store in the test's temp dir),
# and read back over the NATS text protocol by tests/run/nats_peer.py (plain
# sockets, no NATS library). The feed is the demo pipeline (conf/demo.json:
# feedsim -> tcp -> ws -> metrics) with sink_nats as its sink, ended by the
# exchange's count and ws stop_on_close; crafted payloads come from msg_src.
# (a) core NATS: the subscriber receives exactly the messages lcpipe counted as
#     published (count and bytes), each on md.<venue>.<its symbol> and a tick;
#     crafted payloads (msg_src lines): symbols with dots, spaces, wildcards, a
#     tab, UTF-8, escapes, a number, none, empty, null, too long, not JSON, with
#     {conn}: every subject and payload as expected, in order, sanitized and
#     fallback counted; without fallback_subject they are drop_no_symbol;
# (b) JetStream: a stream on md.>: it holds exactly the published count, all
#     acknowledged, ids <venue>.<symbol>.<seq> read back; the same run again adds
#     nothing (every ack a duplicate); a subject no stream takes: every attempt
#     fails, is retried ack_retries times, then counted in ack_failed; acks that
#     never come: what is still in flight at stop is counted in unacked_at_stop;
# (c) no server at start (core: the reconnect buffer fills, drop_pending_full,
#     unflushed_at_stop; on_full block; JetStream: drop_not_connected;
#     retry_on_failed_connect false: the run fails at start, naming the server);
#     the server killed mid-run and started again (core, and JetStream with its
#     store kept): the run ends normally, disconnects and reconnects counted and
#     logged, every message counted somewhere, the stream consistent;
# (d) bad option combinations refused by lcpipe check (exit 78) with the reason.
# Every nats-server and subscriber is stopped by the trap of lib.sh, also on
# failure; their files are in $T.
. "$(dirname "$0")/lib.sh"

NATS_SERVER=$(command -v nats-server 2>/dev/null || true)
[ -z "$NATS_SERVER" ] && [ -x /usr/sbin/nats-server ] && NATS_SERVER=/usr/sbin/nats-server
[ -n "$NATS_SERVER" ] || skip "nats-server is not installed (Debian: nats-server)"
"$LCPIPE" describe sink_nats >/dev/null 2>&1 || skip "the sink_nats plugin is not built (no libnats at configure time)"
need_plugins tcp ws feedsim metrics
[ -f "$PLUGDIR/msg_src.so" ] || skip "the msg_src test plugin is not built ($PLUGDIR)"

peer() { "$PYTHON3" "$RUN_SRC/nats_peer.py" "$@"; }

# start_nats TAG PORT [ARGS...]: nats-server on 127.0.0.1:PORT, log in $T; sets NPID
start_nats() {
	local tag=$1 port=$2
	shift 2
	"$NATS_SERVER" -a 127.0.0.1 -p "$port" "$@" >>"$T/$tag.nats.log" 2>&1 &
	NPID=$!
	PIDS="$PIDS $NPID"
	if ! peer wait "$port" 10; then
		fail "$tag: nats-server did not come up on 127.0.0.1:$port"
		tail -n 5 "$T/$tag.nats.log"
		return 1
	fi
}

# stop_nats SIGNAL: stop the last nats-server started
stop_nats() {
	kill "-$1" "$NPID" 2>/dev/null
	wait "$NPID" 2>/dev/null
	return 0
}

# start_sub TAG PORT SUBJECT: a subscriber recording every message; sets SPID
start_sub() {
	local tag=$1 port=$2 subj=$3 n=200
	peer sub "$port" "$subj" "$T/$tag.ready" "$T/$tag.stop" "$T/$tag.sub.json" --record "$T/$tag.rec" \
		>"$T/$tag.sub.out" 2>&1 &
	SPID=$!
	PIDS="$PIDS $SPID"
	while [ ! -e "$T/$tag.ready" ] && [ $n -gt 0 ] && kill -0 "$SPID" 2>/dev/null; do
		sleep 0.05
		n=$((n - 1))
	done
	[ -e "$T/$tag.ready" ] || { fail "$tag: the subscriber did not start"; cat "$T/$tag.sub.out"; }
}

# end_sub TAG: the subscriber reads up to a PONG and stops; SUB_COUNT, SUB_BYTES,
# SUB_SUBJECTS from what it received
end_sub() {
	local tag=$1
	touch "$T/$tag.stop"
	wait "$SPID"
	cat "$T/$tag.sub.out"
	read -r SUB_COUNT SUB_BYTES SUB_SUBJECTS < <("$PYTHON3" -c \
		'import json, sys; r = json.load(open(sys.argv[1])); print(r["count"], r["bytes"], r["subjects"])' \
		"$T/$tag.sub.json" 2>/dev/null || echo "-1 -1 -1")
}

# ctr_of STAGE COUNTER: a counter from the last report
ctr_of() {
	"$PYTHON3" -c 'import json, sys; print(json.load(open(sys.argv[1]))["stages"][sys.argv[2]]["counters"][sys.argv[3]])' \
		"$REP" "$1" "$2" 2>/dev/null || echo -1
}

# demo TAG COUNT RATE SINK_OPTS: the demo pipeline into sink_nats, in the foreground
demo() {
	peer democonf "$top_srcdir/conf/demo.json" "$T/$1.json" "$2" "$3" "$4" || fail "$1: cannot write the config"
	new_prefix
	# shellcheck disable=SC2046
	lcrun "$1" "$T/$1.json" --duration 0 --no-live -- $(eal_base) -l 0,1
}

# demo_bg: the same in the background (lcstart; lcwait to end it)
demo_bg() {
	peer democonf "$top_srcdir/conf/demo.json" "$T/$1.json" "$2" "$3" "$4" || fail "$1: cannot write the config"
	new_prefix
	# shellcheck disable=SC2046
	lcstart "$1" "$T/$1.json" --duration 0 --no-live -- $(eal_base) -l 0,1
}

# msgrun TAG SRC_OPTS SINK_OPTS: msg_src -> sink_nats
msgrun() {
	new_prefix
	peer msgconf "$T/$1.json" "$PLUGDIR" "$PFX" "$2" "$3" || fail "$1: cannot write the config"
	lcrun "$1" "$T/$1.json" --no-live
}

# the demo's accounting: what ws delivered reached the sink, every one counted
rcheck_demo() {
	rcheck "$1" -D N="$2" 'r["stop_reason"] == "ws stop_on_close"' 'ctr("stats", "msgs") == N' \
		'ctr("sink", "msg.in") == N' 'r["leaked_objects"] == 0' 'in_use == 0' "${@:3}"
}

N=20000
NJ=5000

step "(a) core NATS: the demo feed, every published message on the subscriber"
PORT=$(peer freeport)
start_nats a "$PORT"
start_sub a "$PORT" "md.>"
demo a $N 0 "{\"url\": \"nats://127.0.0.1:$PORT\", \"venue\": \"sim\", \"flush_timeout_ms\": 1000}"
expect_rc 0 "core NATS run"
rcheck_demo "core NATS" $N 'ctr("sink", "msgs") == N' 'drops("sink") == 0' 'ctr("sink", "unflushed_at_stop") == 0' \
	'ctr("sink", "connects") == 1' 'ctr("sink", "disconnects") == 0' 'ctr("sink", "sanitized") == 0' \
	'ctr("sink", "fallback") == 0' 'ctr("sink", "bytes") > 96 * N'
expect_grep "$ERR" "\[sink_nats:sink\] connected to NATS server nats://127.0.0.1:$PORT" "the connect line names the stage and the server"
end_sub a
published=$(ctr_of sink msgs)
bytes=$(ctr_of sink bytes)
if [ "$SUB_COUNT" -eq "$published" ] && [ "$SUB_BYTES" -eq "$bytes" ]; then
	ok "the subscriber received $SUB_COUNT messages, $SUB_BYTES bytes: what lcpipe published"
else
	fail "the subscriber received $SUB_COUNT messages ($SUB_BYTES bytes), lcpipe published $published ($bytes bytes)"
fi
[ "$SUB_SUBJECTS" -eq 100 ] && ok "100 subjects, one per symbol" || fail "$SUB_SUBJECTS subjects, expected 100 (symbols)"
peer check-demo "$T/a.rec" sim && ok "every message on md.sim.<its symbol>" || fail "messages on the wrong subject (above)"
stop_nats TERM

step "(a2) crafted payloads: sanitized symbols, {conn}, fallback_subject; (a3) without it"
# msg_src sends the lines in turn, conn_id 7, 8, 9 in turn; "s" comes first or
# not at all (nats_peer.py check-lines reads it so)
printf '%s\n' \
	'{"s":"BTC-USDT","n":1,"p":"1.5"}' \
	'{"s":"BTC.USD","n":2}' \
	'{"s":"ETH USD*>","n":3}' \
	'{"s":12345,"n":5}' \
	'{"s":"","n":6}' \
	'{"s":null,"n":7}' \
	'{"q":1}' \
	'not json at all' \
	'{"data":{"s":"DEEP"}}' \
	'{"s":"a\"b\\c","n":8}' \
	"{\"s\":\"$(printf 'L%.0s' $(seq 1 129))\",\"n\":9}" \
	'{"s":"ÉTH/€","n":10}' \
	"{\"s\":\"TAB$(printf '\t')X\",\"n\":11}" \
	'{"s":"SOL_USD","n":12}' >"$T/lines.txt"
PORT=$(peer freeport)
start_nats a2 "$PORT"
start_sub a2 "$PORT" "md.>"
SRC="{\"count\": 42, \"lines\": \"$T/lines.txt\", \"conns\": 3, \"conn_base\": 7}"
msgrun a2 "$SRC" "{\"url\": \"nats://127.0.0.1:$PORT\", \"venue\": \"sim\", \"subject\": \"md.{venue}.{conn}.{symbol}\",
	\"fallback_subject\": \"md.{venue}.{conn}.nosym\", \"flush_timeout_ms\": 1000}"
expect_rc 0 "crafted payloads, fallback"
# 14 lines x 3: 3 need sanitizing (dot, space and wildcards, tab), 6 have no usable symbol
rcheck "crafted payloads, fallback" 'ctr("sink", "msg.in") == 42' 'ctr("sink", "msgs") == 42' \
	'ctr("sink", "sanitized") == 9' 'ctr("sink", "fallback") == 18' 'drops("sink") == 0' 'r["leaked_objects"] == 0'
end_sub a2
peer check-lines "$T/a2.rec" "$T/lines.txt" 42 3 7 sim && ok "every subject and payload as expected, in order" ||
	fail "crafted payloads: subjects or payloads differ (above)"
start_sub a3 "$PORT" "md.>"
msgrun a3 "$SRC" "{\"url\": \"nats://127.0.0.1:$PORT\", \"venue\": \"sim\", \"subject\": \"md.{venue}.{conn}.{symbol}\"}"
expect_rc 0 "crafted payloads, no fallback"
rcheck "crafted payloads, no fallback" 'ctr("sink", "msg.in") == 42' 'ctr("sink", "msgs") == 24' \
	'ctr("sink", "drop_no_symbol") == 18' 'drops("sink") == 18' 'r["leaked_objects"] == 0'
expect_grep "$ERR" '\[sink_nats:sink\] (warning: )?message of [0-9]+ bytes on conn [0-9]+ dropped \(drop_no_symbol\)' \
	"the drop is logged with the stage"
end_sub a3
peer check-lines "$T/a3.rec" "$T/lines.txt" 42 3 7 sim --no-fallback && ok "the others as expected, in order" ||
	fail "crafted payloads without fallback: subjects or payloads differ (above)"
stop_nats TERM

step "(b) JetStream: a stream on md.>, acks, ids, and the same input again deduplicated"
PORT=$(peer freeport)
mkdir -p "$T/js"
start_nats b "$PORT" -js -sd "$T/js"
peer stream-create "$PORT" MD "md.>" || fail "cannot create the stream"
JSOPTS="{\"url\": \"nats://127.0.0.1:$PORT\", \"venue\": \"sim\", \"jetstream\": true, \"flush_timeout_ms\": 1500}"
demo b1 $NJ 0 "$JSOPTS"
expect_rc 0 "JetStream run"
rcheck_demo "JetStream" $NJ 'ctr("sink", "msgs") == N' 'ctr("sink", "acks") == N' 'ctr("sink", "acks_duplicate") == 0' \
	'ctr("sink", "ack_errors") == 0' 'ctr("sink", "ack_failed") == 0' 'ctr("sink", "unacked_at_stop") == 0' \
	'ctr("sink", "no_msg_id") == 0' 'drops("sink") == 0'
stored=$(peer stream-count "$PORT" MD)
[ "$stored" = "$NJ" ] && ok "the stream holds $stored messages, as published" || fail "the stream holds $stored messages, expected $NJ"
peer stream-check "$PORT" MD sim 20 && ok "stored subjects and Nats-Msg-Id as expected" || fail "stored messages (above)"
demo b2 $NJ 0 "$JSOPTS"
expect_rc 0 "JetStream run, same input again"
rcheck_demo "JetStream again" $NJ 'ctr("sink", "msgs") == N' 'ctr("sink", "acks") == 0' \
	'ctr("sink", "acks_duplicate") == N' 'ctr("sink", "unacked_at_stop") == 0' 'drops("sink") == 0'
stored=$(peer stream-count "$PORT" MD)
[ "$stored" = "$NJ" ] && ok "the stream still holds $stored messages: the second run was deduplicated" ||
	fail "the stream holds $stored messages after the second run, expected $NJ"

step "(b3) JetStream, a subject no stream takes: every attempt fails, retried, then ack_failed"
printf '%s\n' '{"s":"SYM1","n":1}' '{"s":"SYM2","n":2}' >"$T/ticks.txt"
msgrun b3 "{\"count\": 30, \"lines\": \"$T/ticks.txt\"}" \
	"{\"url\": \"nats://127.0.0.1:$PORT\", \"venue\": \"sim\", \"subject\": \"nostream.{venue}.{symbol}\",
	\"jetstream\": true, \"ack_retries\": 1, \"flush_timeout_ms\": 2000}"
expect_rc 0 "JetStream without a stream"
rcheck "JetStream without a stream" 'ctr("sink", "msgs") == 30' 'ctr("sink", "acks") == 0' \
	'ctr("sink", "ack_errors") == 60' 'ctr("sink", "ack_retries") == 30' 'ctr("sink", "ack_failed") == 30' \
	'ctr("sink", "unacked_at_stop") == 0' 'r["leaked_objects"] == 0'
expect_grep "$ERR" '\[sink_nats:sink\] (warning: )?JetStream publish to nostream\.sim\.SYM[12] not acknowledged' \
	"the failed ack is logged with the stage and the subject"

step "(b4) JetStream, acks that never come: counted under unacked_at_stop"
# a plain subscriber on y.> takes the messages and never answers: no stream, but
# a responder, so no error either; the acks would time out after a minute
start_sub b4 "$PORT" "y.>"
msgrun b4 "{\"count\": 300, \"lines\": \"$T/ticks.txt\"}" \
	"{\"url\": \"nats://127.0.0.1:$PORT\", \"subject\": \"y.{symbol}\", \"jetstream\": true,
	\"ack_timeout_ms\": 60000, \"flush_timeout_ms\": 300}"
expect_rc 0 "JetStream, no acks"
rcheck "JetStream, no acks" 'ctr("sink", "msgs") == 300' 'ctr("sink", "unacked_at_stop") == 300' \
	'ctr("sink", "acks") + ctr("sink", "acks_duplicate") + ctr("sink", "ack_failed") == 0' 'r["leaked_objects"] == 0'
expect_grep "$ERR" '\[sink_nats:sink\] (warning: )?300 message\(s\) still without an ack after flush_timeout_ms 300' \
	"what stays unacknowledged is logged"
end_sub b4
[ "$SUB_COUNT" -eq 300 ] && ok "the subscriber saw the 300 messages" || fail "the subscriber saw $SUB_COUNT messages, expected 300"
stop_nats TERM

step "(c1) no server at start"
PORT=$(peer freeport) # nothing listens there
demo c1 $N 0 "{\"url\": \"nats://127.0.0.1:$PORT\", \"reconnect_buf_bytes\": 65536, \"reconnect_wait_ms\": 50,
	\"flush_timeout_ms\": 300}"
expect_rc 0 "core, no server"
rcheck_demo "core, no server" $N 'ctr("sink", "msgs") + ctr("sink", "drop_pending_full") == N' \
	'ctr("sink", "drop_pending_full") > 0' 'drops("sink") == ctr("sink", "drop_pending_full")' \
	'ctr("sink", "unflushed_at_stop") == ctr("sink", "msgs")' 'ctr("sink", "msgs") > 0' 'ctr("sink", "connects") == 0'
expect_grep "$ERR" "\[sink_nats:sink\] (warning: )?no NATS server at nats://127.0.0.1:$PORT yet" "the start names the stage and the server"
expect_grep "$ERR" "\[sink_nats:sink\] (error: )?NATS server nats://127.0.0.1:$PORT not reachable at stop: [0-9]+ message\(s\)" \
	"what never reached the server is logged"
msgrun c1b "{\"count\": 2000, \"lines\": \"$T/ticks.txt\"}" \
	"{\"url\": \"nats://127.0.0.1:$PORT\", \"reconnect_buf_bytes\": 4096, \"on_full\": \"block\", \"block_us\": 100,
	\"flush_timeout_ms\": 100}"
expect_rc 0 "core, no server, on_full block"
rcheck "core, no server, on_full block" 'ctr("sink", "msg.in") == 2000' \
	'ctr("sink", "msgs") + ctr("sink", "drop_pending_full") == 2000' 'ctr("sink", "drop_pending_full") > 0' \
	'ctr("sink", "unflushed_at_stop") == ctr("sink", "msgs")' 'r["leaked_objects"] == 0'
msgrun c1j "{\"count\": 200, \"lines\": \"$T/ticks.txt\"}" \
	"{\"url\": \"nats://127.0.0.1:$PORT\", \"jetstream\": true, \"flush_timeout_ms\": 100}"
expect_rc 0 "JetStream, no server"
rcheck "JetStream, no server" 'ctr("sink", "msg.in") == 200' 'ctr("sink", "drop_not_connected") == 200' \
	'ctr("sink", "msgs") == 0' 'r["leaked_objects"] == 0'
msgrun c1n "{\"count\": 200, \"lines\": \"$T/ticks.txt\"}" \
	"{\"url\": \"nats://127.0.0.1:$PORT\", \"retry_on_failed_connect\": false, \"connect_timeout_ms\": 500}"
expect_rc 1 "retry_on_failed_connect false: the run fails at start"
expect_grep "$ERR" "\[sink_nats:sink\] (error: )?cannot connect to NATS server nats://127.0.0.1:$PORT" \
	"the failure names the stage and the server"

step "(c2) core NATS, the server killed mid-run and started again"
PORT=$(peer freeport)
start_nats c2 "$PORT"
NK=25000
# a small reconnect buffer: what the server misses while it is down may overflow it
demo_bg c2 $NK 5000 "{\"url\": \"nats://127.0.0.1:$PORT\", \"reconnect_wait_ms\": 100, \"reconnect_buf_bytes\": 65536,
	\"flush_timeout_ms\": 1000}"
if wait_for "$ERR" "connected to NATS server" 20; then
	sleep 1
	kill -0 "$PID" 2>/dev/null || fail "c2: the run ended before the server was killed"
	stop_nats KILL
	wait_for "$ERR" "disconnected from NATS server nats://127.0.0.1:$PORT" 10 &&
		ok "the disconnect is logged with the stage and the server" || fail "no disconnect line"
	start_nats c2 "$PORT"
	wait_for "$ERR" "reconnected to NATS server nats://127.0.0.1:$PORT" 15 &&
		ok "the reconnect is logged" || fail "no reconnect line"
else
	fail "c2: lcpipe never connected"
fi
lcwait
expect_rc 0 "core NATS, server killed and restarted"
rcheck_demo "core, server killed" $NK 'ctr("sink", "msgs") + drops("sink") == N' 'ctr("sink", "msgs") > 0' \
	'drops("sink") == ctr("sink", "drop_pending_full")' \
	'ctr("sink", "disconnects") >= 1' 'ctr("sink", "reconnects") >= 1' 'ctr("sink", "unflushed_at_stop") == 0'
expect_grep "$ERR" "\[sink_nats:sink\] (warning: )?disconnected from NATS server" "the disconnect line names the stage"
stop_nats TERM

step "(c3) JetStream, the server stopped mid-run and started again with its store"
PORT=$(peer freeport)
rm -rf "$T/js3"
mkdir -p "$T/js3"
start_nats c3 "$PORT" -js -sd "$T/js3"
peer stream-create "$PORT" MD "md.>" || fail "cannot create the stream"
demo_bg c3 $NK 5000 "{\"url\": \"nats://127.0.0.1:$PORT\", \"venue\": \"sim\", \"jetstream\": true,
	\"reconnect_wait_ms\": 100, \"ack_timeout_ms\": 1000, \"ack_retries\": 5, \"flush_timeout_ms\": 1500}"
if wait_for "$ERR" "connected to NATS server" 20; then
	sleep 1
	kill -0 "$PID" 2>/dev/null || fail "c3: the run ended before the server was stopped"
	stop_nats TERM
	wait_for "$ERR" "disconnected from NATS server" 10 || fail "no disconnect line"
	start_nats c3 "$PORT" -js -sd "$T/js3"
	wait_for "$ERR" "reconnected to NATS server" 15 || fail "no reconnect line"
else
	fail "c3: lcpipe never connected"
fi
lcwait
expect_rc 0 "JetStream, server stopped and restarted"
rcheck_demo "JetStream, server stopped" $NK 'ctr("sink", "msgs") + drops("sink") == N' \
	'ctr("sink", "msgs") == ctr("sink", "acks") + ctr("sink", "acks_duplicate") + ctr("sink", "ack_failed") + ctr("sink", "unacked_at_stop")' \
	'ctr("sink", "disconnects") >= 1' 'ctr("sink", "reconnects") >= 1' 'ctr("sink", "acks") > 0'
stored=$(peer stream-count "$PORT" MD)
acked=$(($(ctr_of sink acks) + $(ctr_of sink acks_duplicate)))
unsure=$(($(ctr_of sink ack_failed) + $(ctr_of sink unacked_at_stop)))
if [ "$stored" -ge "$acked" ] && [ "$stored" -le $((acked + unsure)) ]; then
	ok "the stream holds $stored messages: every acknowledged one ($acked), once, and at most the $unsure unconfirmed"
else
	fail "the stream holds $stored messages; acknowledged $acked, unconfirmed $unsure"
fi
stop_nats TERM

step "(d) bad option combinations: lcpipe check refuses them"
# check_bad WHAT SINK_OPTS REGEX: exit 78 and the reason, under the stage's options
check_bad() {
	new_prefix
	peer msgconf "$T/bad.json" "$PLUGDIR" "$PFX" '{"count": 1}' "$2" || fail "cannot write the config"
	"$LCPIPE" check "$T/bad.json" >"$T/bad.out" 2>&1
	RC=$?
	if [ "$RC" -eq 78 ] && grep -Eq -- "stages\[1\]\.options.*$3" "$T/bad.out"; then
		ok "$1: refused (78) with /$3/"
	else
		fail "$1: exit $RC, expected 78 with /$3/:"
		cat "$T/bad.out"
	fi
}
check_bad "unknown placeholder" '{"subject": "md.{venue}.{sym}"}' 'unknown placeholder \{sym\}'
check_bad "venue not a token" '{"venue": "bin.ance"}' 'venue "bin.ance" is not one NATS subject token'
check_bad "wildcard in the subject" '{"subject": "md.*.{symbol}"}' "byte 3 \\(0x2a\\) is not allowed in a subject"
check_bad "empty token" '{"subject": "md..{symbol}"}' 'empty token'
check_bad "block_us without block" '{"block_us": 500}' 'block_us applies only with "on_full": "block"'
check_bad "a JetStream option without JetStream" '{"ack_retries": 5}' 'ack_retries applies only with "jetstream": true'
check_bad "fallback without {symbol}" '{"subject": "md.{venue}.all", "fallback_subject": "md.x"}' \
	'fallback_subject is set but subject "md.\{venue\}.all" has no \{symbol\}'
check_bad "{symbol} in the fallback" '{"fallback_subject": "md.{symbol}"}' '\{symbol\} is not allowed here'
check_bad "same path twice" '{"jetstream": true, "seq_field": "s"}' 'seq_field and symbol_field are the same path'
check_bad "retry without reconnects" '{"max_reconnect": 0}' 'retry_on_failed_connect needs reconnect attempts'
check_bad "unknown on_full" '{"on_full": "wait"}' 'on_full'
finish
