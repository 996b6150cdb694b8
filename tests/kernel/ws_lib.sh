# tests/kernel/ws_lib.sh — sourced by tests/kernel/ws_*.sh (L2: the ws stage
# against real WebSocket servers). Built on tcp_lib.sh (namespace, net_tap,
# cleanup, run_lcpipe / tap_up / lcpipe_wait, pycheck, ok / fail / finish):
#
#     lcpipe (inside the namespace)                          kernel (same namespace)
#     port_ethdev(net_tap0) <-> tcp 10.77.0.2/24  ==tap lcpt0==  10.77.0.1/24
#                                 ^ data / tx v                  WebSocket server
#                                 ws --msg--> hash (msg_hash)    (ws_peer.py, ws_peer_node.js,
#                                                                 ws_hostile.py)
#
# The ws stage connects at its first poll, before the tap has an address on the
# kernel's side: the tcp stage holds the SYN while it resolves 10.77.0.1
# (arp_retry_ms 500, arp_retries 20: ARP keeps asking for 10 s), so the first
# connection goes out within half a second of tap_up configuring the tap (2 s
# were not enough: under distcheck's load tap_up once took longer, and the
# held SYN died as drop_arp_unresolved).
#
# Provides: ws_conf (a whole config), server_start / server_wait (a server
# process in the namespace, with a ready file), ws_need_node (node with its ws
# module, or skip), ws_transfer_setup (a ws_peer server and the config for its
# transfer), ws_lcpipe_start / ws_lcpipe_end and ws_run_transfer (lcpipe and
# the server through a run), ws_report_common (leaks, the msg pool, drops),
# ws_check_transfer (a ws_peer transfer against msg_hash), ws_hash_check (a
# short transfer byte-exact), ws_peer_test (all
# of a transfer), ws_hostile_run / ws_hostile_check (a ws_hostile.py run and
# its checks).
# Skips (77) when the tree has no ws plugin.

# does it parse (tests/kernel/tcp_lib.sh says why)
bash -n "${BASH_SOURCE[0]}" || { echo "FAIL: ${BASH_SOURCE[0]} does not parse"; exit 99; }
. "$(dirname "$0")/tcp_lib.sh"

[ -d "$top_srcdir/plugins/ws" ] || skip "no ws plugin in this tree (plugins/ws)"
[ -e "$PLUGDIR/msg_hash.so" ] || { echo "FAIL: $PLUGDIR/msg_hash.so not built (make check builds it)"; exit 1; }
KDIR=$top_srcdir/tests/kernel
# the checks import ws_hostile.py from the source tree: no __pycache__ there
export PYTHONDONTWRITEBYTECODE=1

# ws_conf TAG WS_OPTIONS [HASH_OPTIONS] [TCP_OPTIONS] [ENGINE_OPTIONS]: write
# $W/TAG.json: port_ethdev on net_tap0, the tcp stage at 10.77.0.2/24, the ws
# stage with WS_OPTIONS (JSON members without braces; "url" among them),
# msg_hash with HASH_OPTIONS plus "result": $W/TAG.hash.json. Everything on
# lcore 1. Sets CONF, RESULT (msg_hash's), REPORT, LOG, GO (tap_up's file,
# unused by these stages).
ws_conf() {
	local tag=$1 wso=$2 hopt=${3:-} tcpo=${4:-} eng=${5:-}
	conf_begin "$tag" hash.json
	{ conf_head "$tag" "$eng"; cat <<JSON
  "stages": [
    {"name": "port", "plugin": "port_ethdev", "lcore": 1, "options": {"device": "net_tap0"}},
    {"name": "tcp", "plugin": "tcp", "lcore": 1,
     "options": {"ip": "$LC_IP/24", "device": "net_tap0", "arp_retry_ms": 500, "arp_retries": 20${tcpo:+, $tcpo}}},
    {"name": "ws", "plugin": "ws", "lcore": 1, "options": {$wso}},
    {"name": "hash", "plugin": "msg_hash", "lcore": 1,
     "options": {${hopt:+$hopt, }"result": "$RESULT"}}],
  "links": ["port.rx -> tcp.rx", "tcp.tx -> port.tx", "tcp.data -> ws.in", "ws.tx -> tcp.app",
            "ws.msg -> hash.in"] }
JSON
	} >"$CONF"
}

# server_start TAG CMD ARGS...: a server in the namespace, in the background,
# with --ready-file $W/TAG.ready appended; waits up to 10 s for that file.
# stdout/stderr in $W/TAG.server.out / .err. Sets SRV_PID, SRV_OUT, SRV_ERR.
server_start() {
	local tag=$1
	shift
	SRV_OUT=$W/$tag.server.out
	SRV_ERR=$W/$tag.server.err
	rm -f "$W/$tag.ready"
	say "+ $(basename "$1") $(printf '%s ' "${@:2}")"
	# not through nsx: $! must be the server itself (a function run in the
	# background is a subshell, and stopping that would leave the server)
	ip netns exec "$NS" "$@" --ready-file "$W/$tag.ready" >"$SRV_OUT" 2>"$SRV_ERR" </dev/null &
	SRV_PID=$!
	PIDS="$PIDS $SRV_PID"
	poll_while 10 "$SRV_PID" test -e "$W/$tag.ready"
	[ -e "$W/$tag.ready" ] || { fail "$(basename "$1") did not listen within 10 s"; show "$SRV_OUT" "$SRV_ERR"; return 1; }
	return 0
}

# the subscription a ws_peer server waits for before a transfer, and the same
# in the ws stage's options
SUB='{"op":"subscribe","channel":"ticks"}'
WS_SUB='"subscribe": "{\"op\":\"subscribe\",\"channel\":\"ticks\"}"'

# ws_need_node: NODE, a node that has the ws module (NODE_PATH defaults to
# Debian's node-ws), else skip
ws_need_node() {
	NODE=$(command -v node || command -v nodejs) || skip "no node on PATH"
	export NODE_PATH=${NODE_PATH:-/usr/share/nodejs}
	"$NODE" -e 'require("ws")' 2>/dev/null || skip "no ws module for node in NODE_PATH=$NODE_PATH (Debian: node-ws)"
}

# ws_transfer_setup TAG SEED TCP_OPTIONS CMD...: the ws_peer server CMD on $PORT
# (seed SEED, $COUNT messages once it got the subscription $SUB, $DURATION + 10 s
# at most, result in $W/TAG.server.json) and ws_conf TAG for that transfer, the
# tcp stage with TCP_OPTIONS (may be empty)
ws_transfer_setup() {
	local tag=$1 seed=$2 tcpo=$3
	shift 3
	server_start "$tag" "$@" --port $PORT --count "$COUNT" --seed "$seed" --expect-sub "$SUB" \
		--result "$W/$tag.server.json" --timeout $((DURATION + 10)) || finish
	ws_conf "$tag" '"url": "ws://'$K_IP:$PORT'/feed", '"$WS_SUB"',
  "ping_interval_ms": 200, "pong_timeout_ms": 20000, "reconnect_min_ms": 5000, "reconnect_max_ms": 10000' \
		'"expect": '"$COUNT"', "linger_ms": 500' "$tcpo"
}

# ws_peer_test TAG SEED CMD...: a whole transfer from the ws_peer server CMD
# (ws_transfer_setup, ws_run_transfer) and its checks (ws_check_transfer,
# ws_report_common)
ws_peer_test() {
	local tag=$1 seed=$2
	shift 2
	ws_transfer_setup "$tag" "$seed" "" "$@"
	ws_run_transfer "$(basename "$2")" "$COUNT"
	ws_check_transfer "$W/$tag.server.json" "$COUNT" "$SUB"
	ws_report_common
}

# server_wait [SECONDS]: wait for the last server, at most SECONDS (default 10),
# then stop it; sets SRV_RC (124 when it had to be stopped)
server_wait() {
	wait_or_stop "$SRV_PID" "${1:-10}" server
	SRV_RC=$WAIT_RC
	return 0
}

# ws_report_common: every run's report: it exists, the ws and tcp stages have
# counters, leaked_objects == 0, the ws and hash stages dropped nothing, and the
# ws stage released every msg object (its fini logs it otherwise: that pool is
# freed before the engine's mempool walk)
ws_report_common() {
	pycheck "report $(basename "$REPORT")" rep="$REPORT" log="$LOG" <<'PY' || show "$LOG"
r = J("rep")
st = r.get("stages", {})
check(len(st.get("ws", {}).get("counters", {})) > 0, "report: the ws stage has counters", st.get("ws"))
check(len(st.get("tcp", {}).get("counters", {})) > 0, "report: the tcp stage has counters", st.get("tcp"))
check(r.get("leaked_objects") == 0, "report: leaked_objects == 0", r.get("leaked_objects"))
for name in ("ws", "hash"):
    check(st.get(name, {}).get("drops") == 0, "report: the %s stage dropped nothing" % name,
          st.get(name, {}).get("drops_by_reason"))
log = open(A["log"], errors="replace").read()
check("never released" not in log, "the ws stage released every msg object (no 'never released' in the log)",
      [l for l in log.splitlines() if "never released" in l])
check("leak" not in log.lower(), "no leak reported in the log", [l for l in log.splitlines() if "leak" in l.lower()])
PY
}

# ws_lcpipe_start: lcpipe on $CONF with the tap up; T0 its start (date +%s%N)
ws_lcpipe_start() {
	T0=$(date +%s%N)
	lcpipe_start || finish
}

# ws_lcpipe_end SERVER SECONDS [GONE]: lcpipe's end (T1, date +%s%N; then the
# file GONE is made, if given), then the server process's (at most SECONDS
# more); both must exit 0 (SERVER names it)
ws_lcpipe_end() {
	lcpipe_wait
	T1=$(date +%s%N)
	[ -z "${3:-}" ] || touch "$3"
	server_wait "$2"
	expect_lc_rc 0
	[ "$SRV_RC" -eq 0 ] || { fail "$1 exited $SRV_RC"; show "$SRV_OUT" "$SRV_ERR"; }
}

# ws_run_transfer SERVER COUNT: run lcpipe on $CONF with the tap up, wait for
# it and for the server process (SERVER names it in a failure), and say how
# long lcpipe took for COUNT messages
ws_run_transfer() {
	ws_lcpipe_start
	ws_lcpipe_end "$1" 15
	say "lcpipe ran $(((T1 - T0) / 1000000)) ms (start to exit) for $2 messages"
}

# ws_check_transfer SERVER_JSON COUNT SUB [OPENS]: the checks of a whole
# transfer from a ws_peer server (ws_peer.py or ws_peer_node.js; their result
# files have the same fields) against msg_hash's result ($RESULT) and the
# report ($REPORT); OPENS (default 1): the connections that carried it (a
# server with --serve OPENS; COUNT is then the total)
ws_check_transfer() {
	pycheck "messages" srv="$1" res="$RESULT" rep="$REPORT" count="$2" sub="$3" opens="${4:-1}" <<'PY' || show "$LOG" "$SRV_ERR"
s, h, rep = J("srv"), J("res"), J("rep")
n = int(A["count"])
print("info: server: %s messages, %s bytes, %s fragmented, %s pings (%s inside fragmented messages), sent in %s s"
      % (s.get("sent"), s.get("bytes"), s.get("fragmented"), s.get("pings"), s.get("pings_in_fragmented"), s.get("send_s")))
check(rep.get("stop_reason") == "msg_hash: done", "the run was ended by msg_hash", rep.get("stop_reason"))
check(s.get("served") is True and s.get("error") is None, "the server served the whole transfer", s.get("error"))
check(s.get("sent") == n, "the server sent %d messages" % n, s.get("sent"))
check(s.get("subscription") == A["sub"], "the server got our subscription", s.get("subscription"))
check(s.get("path") == "/feed", "the request path was /feed", s.get("path"))
check(s.get("client_close_code") == 1000, "we echoed the server's close code 1000", s.get("client_close_code"))
check(s.get("fragmented", 0) > 0 and s.get("max_len") == 65536 and s.get("min_len") == 0,
      "the mix had fragmented messages, 64 KiB and empty ones", s)
b = s.get("boundary_sent", {})
want = ["%d/%s%s" % (z, t, f) for z in (0, 1, 125, 126, 127, 65535, 65536) for t in ("text", "binary") for f in ("", "/frag")]
check(all(b.get(k, 0) > 0 for k in want), "every boundary size was sent as text and binary, whole and fragmented",
      [k for k in want if b.get(k, 0) == 0])
check(h.get("msgs") == s.get("sent"), "msg_hash: messages == sent", (h.get("msgs"), s.get("sent")))
check(h.get("bytes") == s.get("bytes"), "msg_hash: bytes == sent", (h.get("bytes"), s.get("bytes")))
check(h.get("sha256_lens") == s.get("sha256_lens"), "msg_hash: (opcode, length) sequence SHA-256 == the server's",
      (h.get("sha256_lens"), s.get("sha256_lens")))
check(h.get("sha256") == s.get("sha256"), "msg_hash: payload SHA-256 == the server's", (h.get("sha256"), s.get("sha256")))
check(h.get("text") == s.get("text") and h.get("binary") == s.get("binary") and h.get("other") == 0,
      "msg_hash: text / binary counts == the server's", (h.get("text"), h.get("binary"), h.get("other"), s.get("text"), s.get("binary")))
check(h.get("rx_tsc_zero") == 0 and h.get("rx_tsc_future") == 0, "every message has an rx TSC, none in the future",
      (h.get("rx_tsc_zero"), h.get("rx_tsc_future")))
check(h.get("min_len") == s.get("min_len") and h.get("max_len") == s.get("max_len"), "smallest / largest message as sent",
      (h.get("min_len"), h.get("max_len")))
st = rep.get("stages", {})
check(st.get("hash", {}).get("in") == n, "the report: hash.in == %d" % n, st.get("hash", {}).get("in"))
# a RST answering a segment of ours that crossed the server's FIN is no drop:
# the tcp stage ignores it as tcp_rst_stale, or as tcp_rst_no_conn when the
# exact answer closed the connection first (doc/tcp.md, RSTs crossing a close)
check(all(v.get("drops") == 0 for v in st.values()), "the report: no stage dropped anything",
      {k: v.get("drops_by_reason") for k, v in st.items() if v.get("drops")})
w = st.get("ws", {}).get("counters", {})
print("info: ws counters: " + ", ".join("%s %s" % (k, v) for k, v in sorted(w.items()) if v))
# the stage's totals (the per-connection numbers it logs at stop are separate)
check(w.get("msgs") == n, "ws msgs == %d" % n, w.get("msgs"))
check(w.get("msg_bytes") == s.get("bytes"), "ws msg_bytes == bytes sent", w.get("msg_bytes"))
check(w.get("msg.out") == n, "ws msg.out == %d" % n, w.get("msg.out"))
# assembled: in a pool buffer (msgs_assembled) or, past assembly_size (2048 B by
# default; the 64 KiB messages), on the heap (msgs_assembled_heap)
# with permessage-deflate agreed (deflate_opens), the compressed ones are
# inflated instead (msgs_inflated; how many depends on the server's choice)
parts = [w.get(k, 0) for k in ("msgs_zero_copy", "msgs_assembled", "msgs_assembled_heap", "msgs_inflated")]
if w.get("deflate_opens", 0) == 0:
    check(all(p > 0 for p in parts[:3]) and parts[3] == 0 and sum(parts) == n,
          "ws: zero-copy + assembled (pool) + assembled (heap) == msgs, each > 0", parts)
else:
    check(parts[3] > 0 and sum(parts) == n,
          "ws: zero-copy + assembled (pool, heap) + inflated == msgs, inflated > 0 (permessage-deflate)", parts)
check(w.get("pings_rx", 0) > 0 and w.get("pings_rx") == s.get("pings"), "ws pings_rx == the server's pings > 0",
      (w.get("pings_rx"), s.get("pings")))
check(w.get("pongs_tx") == w.get("pings_rx"), "ws pongs_tx == pings_rx", (w.get("pongs_tx"), w.get("pings_rx")))
check(s.get("pongs") == s.get("pings"), "the server got a pong for every ping", (s.get("pongs"), s.get("pings")))
if "pong_mismatch" in s:
    check(s["pong_mismatch"] == 0, "every pong carried its ping's payload, in order", s["pong_mismatch"])
if "split_utf8_fragments" in s:
    check(s["split_utf8_fragments"] > 0, "some text fragments split a UTF-8 character", s["split_utf8_fragments"])
check(w.get("closes_rx", 0) >= 1, "ws closes_rx >= 1", w.get("closes_rx"))
fails = {k: v for k, v in w.items() if k.startswith("fail_")}
check(len(fails) >= 7 and all(v == 0 for v in fails.values()), "every ws fail_* counter is 0", fails)
k = int(A["opens"])
check(w.get("opens") == k and w.get("subscribes_tx") == k, "ws: %d open(s), as many subscriptions" % k,
      (w.get("opens"), w.get("subscribes_tx")))
# our pings (every 200 ms): the server answers those it reads before its close
# frame and counts its answers (pongs_sent; a ping read after it goes
# unanswered, RFC 6455 5.5.2 leaves that to the endpoint); we must have
# received exactly those, and no more pongs than we sent pings
check(w.get("pings_tx", 0) > 0 and s.get("pongs_sent", 0) > 0
      and w.get("pongs_rx") == s.get("pongs_sent") and w.get("pongs_rx") <= w.get("pings_tx"),
      "our own pings were answered (pongs_rx == the server's pongs_sent > 0, pongs_rx <= pings_tx)",
      (w.get("pings_tx"), w.get("pongs_rx"), s.get("pongs_sent")))
PY
}

# ws_hash_check WHAT SERVER_JSON COUNT OPENS: a short transfer's checks (when
# ws_check_transfer's, made for long ones, are more than needed): msg_hash got
# the COUNT messages the server sent (bytes, SHA-256 of the payloads and of the
# (opcode, length) sequence) over OPENS connection(s), the run ended by msg_hash
ws_hash_check() {
	pycheck "$1: messages" srv="$2" res="$RESULT" rep="$REPORT" count="$3" opens="$4" <<'PY' || show "$LOG" "$SRV_ERR"
s, h, rep = J("srv"), J("res"), J("rep")
n, k = int(A["count"]), int(A["opens"])
w = rep.get("stages", {}).get("ws", {}).get("counters", {})
check(rep.get("stop_reason") == "msg_hash: done", "the run was ended by msg_hash", rep.get("stop_reason"))
check(s.get("served") is True and s.get("error") is None and s.get("sent") == n,
      "the server sent its %d messages" % n, (s.get("served"), s.get("error"), s.get("sent")))
check(h.get("msgs") == n and h.get("bytes") == s.get("bytes"), "msg_hash: %s messages, %s bytes == sent"
      % (h.get("msgs"), h.get("bytes")), s.get("bytes"))
check(h.get("sha256") == s.get("sha256") and h.get("sha256_lens") == s.get("sha256_lens"),
      "msg_hash: payload and (opcode, length) SHA-256 == the server's", (h.get("sha256"), s.get("sha256")))
check(w.get("opens") == k, "ws opens == %d" % k, w.get("opens"))
PY
}

# ws_hostile_run TAG CASES [GOOD_COUNT [GOOD_PACE_MS]]: ws_hostile.py on port
# 8767 serving CASES (comma-separated, "done" added at the end) one per
# connection, and one lcpipe run whose ws stage (max_msg 65536,
# handshake_timeout_ms 1500, pings every 500 ms with pong_timeout_ms 2000,
# reconnects after 50..200 ms) meets them all in that order through its
# reconnects; msg_hash records every message and ends the run 300 ms after the
# last one expected ("done"). With GOOD_COUNT, the same ws stage has a second
# connection (conn 1; the hostile one is conn 0) to a well-behaved server,
# ws_peer.py on port 8768, which sends GOOD_COUNT messages (GOOD_PACE_MS apart,
# 5 by default, so that the transfer runs through the hostile cases) and
# closes; msg_hash then ends the run once both connections delivered all they
# should (expect_per_conn). Sets HOSTILE_JSON, RECORD, GOOD_JSON ("" without a
# good server) (and what ws_conf sets).
ws_hostile_run() {
	local tag=$1 cases=$2 good=${3:-} pace=${4:-5} n_msgs url expect good_pid="" linger=3
	HOSTILE_JSON=$W/$tag.server.json
	RECORD=$W/$tag.record.jsonl
	n_msgs=$("$PY" -c 'import sys
sys.path.insert(0, sys.argv[1])
from ws_hostile import CASES
print(sum(len(CASES[c]["msgs"]) for c in sys.argv[2].split(",") + ["done"] if c))' "$KDIR" "$cases") ||
		{ fail "cannot read the cases of ws_hostile.py"; finish; }
	GOOD_JSON=""
	url="ws://$K_IP:8767/hostile"
	expect='"expect": '$n_msgs
	if [ -n "$good" ]; then
		GOOD_JSON=$W/$tag.good.json
		server_start "$tag-good" "$PY" "$KDIR/ws_peer.py" --port 8768 --count "$good" --pace-ms "$pace" \
			--expect-sub sub --result "$GOOD_JSON" --timeout $((DURATION + 10)) --linger "$DURATION" \
			--stop-file "$W/$tag.gone" || finish
		good_pid=$SRV_PID
		linger=$DURATION # the good transfer may outlast the cases: hold on (answering pings) until lcpipe goes
		url="$url,ws://$K_IP:8768/feed"
		expect='"expect_per_conn": "'$n_msgs,$good'"'
	fi
	server_start "$tag" "$PY" "$KDIR/ws_hostile.py" --port 8767 --cases "$cases" --result "$HOSTILE_JSON" \
		--timeout $((DURATION + 10)) --linger "$linger" --stop-file "$W/$tag.gone" || finish
	ws_conf "$tag" '"url": "'$url'", "subscribe": "sub", "max_msg": 65536,
  "handshake_timeout_ms": 1500, "ping_interval_ms": 500, "pong_timeout_ms": 2000,
  "reconnect_min_ms": 50, "reconnect_max_ms": 200, "reconnect_jitter": false, "reconnect_reset_ms": 0,
  "stale_timeout_ms": 0' \
		"$expect"', "linger_ms": 300, "record": "'"$RECORD"'"'
	ws_lcpipe_start
	# once lcpipe is gone: both servers hold the reconnects that follow their
	# last case / transfer (--linger) until one is dropped; a reconnect the
	# run's end overtook (msg_hash stops 300 ms after the last message, the ws
	# stage reconnects 50 ms after a close, later under ASan) never comes, and
	# they would wait out --linger: the stop file tells them the client is gone
	ws_lcpipe_end ws_hostile.py 10 "$W/$tag.gone"
	if [ -n "$good_pid" ]; then
		wait_or_stop "$good_pid" 10 ws_peer.py
		[ "$WAIT_RC" -eq 0 ] || { fail "ws_peer.py (the good server) exited $WAIT_RC"; show "$W/$tag-good.server.err"; }
	fi
	say "lcpipe ran $(((T1 - T0) / 1000000)) ms (start to exit); the server's view:"
	cat "$SRV_OUT"
}

# ws_good_check: the good connection of a ws_hostile_run with GOOD_COUNT (conn
# 1): msg_hash's per-connection result equals what ws_peer.py sent (count,
# bytes, payload SHA-256, (opcode, length) SHA-256), the server got our
# subscription, a pong for every ping and our answer to its close 1000, and
# the ws stage never gave that connection up before the server's close
ws_good_check() {
	pycheck "good connection" good="$GOOD_JSON" res="$RESULT" log="$LOG" <<'PY' || show "$LOG"
import re
g, h = J("good"), J("res")
h1 = ([k for k in h.get("conns", []) if k.get("conn") == 1] or [{}])[0]
print("info: good server: %s messages, %s bytes, %s fragmented, %s pings, sent in %s s"
      % (g.get("sent"), g.get("bytes"), g.get("fragmented"), g.get("pings"), g.get("send_s")))
check(g.get("served") is True and g.get("error") is None, "good: the server served its whole transfer", g.get("error"))
check(g.get("subscription") == "sub", "good: the server got our subscription", g.get("subscription"))
check(h1.get("msgs") == g.get("sent") and h1.get("bytes") == g.get("bytes"),
      "good: msg_hash got %s messages, %s bytes from conn 1 == sent" % (h1.get("msgs"), h1.get("bytes")),
      (g.get("sent"), g.get("bytes")))
check(h1.get("sha256") == g.get("sha256"), "good: payload SHA-256 of conn 1 == the server's", (h1.get("sha256"), g.get("sha256")))
check(h1.get("sha256_lens") == g.get("sha256_lens"), "good: (opcode, length) SHA-256 of conn 1 == the server's")
check(g.get("pongs") == g.get("pings") and g.get("pings", 0) > 0, "good: a pong for each of the server's %s pings" % g.get("pings"))
check(g.get("client_close_code") == 1000, "good: we answered the server's close 1000", g.get("client_close_code"))
log = open(A["log"], errors="replace").read()
gave_up = re.findall(r"\[ws:ws\] warning: conn 1 \([^)]*\): (.*); reconnecting in", log)
check(all("close" in w and "1000" in w for w in gave_up[:1]) and len(gave_up) <= 1,
      "good: conn 1 ended only by the server's close (never failed by the hostile cases)", gave_up)
PY
}

# ws_bounds_check: the ws stage's memory stayed within its limits: its pools
# (msgs, assembly) back to 0 in use, peak <= their size, no failed get; no
# message delivered longer than max_msg (65536) and none assembled on the heap
# past it (drop_assembly_nomem 0, the 16 MiB cases failed with 1009 before);
# the engine's mempools back to 0 in use
ws_bounds_check() {
	pycheck "ws memory bounds" res="$RESULT" rep="$REPORT" <<'PY' || show "$LOG"
h, rep = J("res"), J("rep")
pools = [p for p in rep.get("pools", []) if p.get("stage") == "ws"]
print("info: ws pools: " + json.dumps(pools))
check(sorted(p.get("name") for p in pools) == ["assembly", "msgs"], "ws: pools msgs and assembly reported",
      [p.get("name") for p in pools])
for p in pools:
    check(p.get("in_use") == 0 and p.get("peak_in_use", 1 << 62) <= p.get("objects", 0) and p.get("get_fail") == 0,
          "ws pool %s: 0 in use at exit, peak %s <= %s objects, no failed get"
          % (p.get("name"), p.get("peak_in_use"), p.get("objects")), p)
w = rep.get("stages", {}).get("ws", {}).get("counters", {})
check(h.get("max_len", 1 << 62) <= 65536, "no message longer than max_msg 65536 delivered (largest %s)" % h.get("max_len"))
check(w.get("drop_assembly_nomem", 0) == 0 and w.get("drop_no_msg", 0) == 0 and w.get("drop_assembly_pool_empty", 0) == 0,
      "ws: no assembly / msg allocation failure", {k: w.get(k) for k in ("drop_assembly_nomem", "drop_no_msg", "drop_assembly_pool_empty")})
bad = [m for m in rep.get("mempools", []) if m.get("in_use") != 0]
check(not bad, "every mempool back to 0 in use", bad)
PY
}

# ws_hostile_check: the checks of a ws_hostile_run, from the expectations of each
# case in ws_hostile.py's CASES: per case, the close code our client sent (read
# by the server from the socket) or none, that it then closed TCP (or, for a
# failed handshake, dropped it at once; for the slowloris after the 1.5 s
# handshake timeout), the pongs the server got for its pings, and the reason
# the ws stage logged; overall, msg_hash's record holds exactly the expected
# messages in order and no byte of any "BAD" payload, the ws counters moved by
# exactly the sum of the cases' expectations, and no two client frames had the
# same mask key.
ws_hostile_check() {
	pycheck "hostile cases" srv="$HOSTILE_JSON" res="$RESULT" rep="$REPORT" rec="$RECORD" log="$LOG" \
		kdir="$KDIR" good="$GOOD_JSON" <<'PY' || show "$LOG" "$SRV_OUT" "$SRV_ERR"
import re
sys.path.insert(0, A["kdir"])
from ws_hostile import CASES
s, h, rep = J("srv"), J("res"), J("rep")
g = J("good") if A["good"] else None  # the good connection (conn 1), if any
order = s.get("order", [])
served = s.get("cases", [])
check(rep.get("stop_reason") == "msg_hash: done", "the run was ended by msg_hash (after \"done\")", rep.get("stop_reason"))
check(s.get("error") is None, "the server served every case", s.get("error"))
check([c.get("case") for c in served] == order, "cases served in order, one per connection: " + ",".join(order),
      [c.get("case") for c in served])
log = open(A["log"], errors="replace").read()
# every time the ws stage gives a connection up (ws_fail, a close, a timeout, tcp)
whys = re.findall(r"\[ws:ws\] warning: conn 0 \([^)]*\): (.*); reconnecting in", log)
for i, c in enumerate(served):
    name, kind = c.get("case"), c.get("kind")
    k = CASES[name]
    why = whys[i] if i < len(whys) else None
    if not check(c.get("error") is None, "%s: served without a server-side error" % name, c.get("error")):
        continue
    if kind == "handshake":
        check(c.get("close_codes") == [] and (c.get("dropped") in ("fin", "rst") or
                                              (c.get("dropped") == "server-rst" and k["send"] == "RST")),
              "%s: the client dropped the connection (%s) without a close frame, %.2f s after accept"
              % (name, c.get("dropped"), c.get("elapsed_s", -1)), c)
        if name == "slowloris":
            check(0.5 <= c.get("elapsed_s", -1) <= 3.0, "slowloris: dropped by the handshake timeout (1.5 s), after %.2f s"
                  % c.get("elapsed_s", -1), c)
        else:
            check(c.get("elapsed_s", 99) < 1.4, "%s: dropped before the 1.5 s handshake timeout (%.2f s)"
                  % (name, c.get("elapsed_s", -1)), c)
    else:
        check(c.get("subscription") == "sub", "%s: the client was open (its subscription arrived)" % name, c.get("subscription"))
        if kind != "rst":
            want = [] if k["close"] is None else [k["close"]]
            check(c.get("close_codes") == want, "%s: the client sent %s" % (name, "close %s" % k["close"] if want else "no close frame"),
                  c.get("close_codes"))
            check(c.get("frames_after") == [], "%s: no data frame from the client after its subscription" % name, c.get("frames_after"))
            check(c.get("dropped") in ("fin", "rst"), "%s: then it closed TCP (%s)" % (name, c.get("dropped")), c.get("dropped"))
        if k.get("pongs"):
            got = [p for p in c.get("pongs", []) if p in [x.decode("latin-1") for x in k["pongs"]]]
            check(got == [x.decode("latin-1") for x in k["pongs"]], "%s: a pong with the payload of each ping, in order" % name,
                  c.get("pongs"))
        if k.get("no_pong"):
            check(c.get("pings_from_client", 0) >= 1, "%s: the client pinged (%d) and gave up without pongs"
                  % (name, c.get("pings_from_client", 0)), c)
    check(why is not None and k["why"] in why, "%s: the ws stage logged why: %s" % (name, why), k["why"])
check(len(whys) >= len(order), "the ws stage gave up %d connections (>= %d cases)" % (len(whys), len(order)), whys)
# mask keys (RFC 6455 5.3: unpredictable): every client frame's key differs from
# every other's (a repeat among a few dozen 32-bit keys from a working CSPRNG has
# a chance of about 1e-6)
keys = s.get("mask_keys", [])
check(len(keys) >= 2 and len(set(keys)) == len(keys),
      "%d client frames, %d distinct mask keys" % (len(keys), len(set(keys))), keys)
# reconnect_min_ms 50 / reconnect_max_ms 200: the delay is 50 ms after a
# connection that opened, else twice the previous one, at most 200 ms
delays = [int(d) for d in re.findall(r"\[ws:ws\] warning: conn 0 \([^)]*\): .*; reconnecting in (\d+) ms", log)]
want_d, prev = [], 25
for c in order:
    prev = 50 if CASES[c]["kind"] != "handshake" else min(2 * prev, 200)
    want_d.append(prev)
check(delays[:len(order)] == want_d, "reconnect delays: 50 ms after an open connection, doubling to 200 ms otherwise",
      {"got": delays[:len(order)], "want": want_d})
# what msg_hash received: exactly the expected messages, in order; nothing of a bad frame
recs = []
try:
    with open(A["rec"]) as f:
        recs = [json.loads(l) for l in f if l.strip()]
except (OSError, ValueError) as e:
    check(False, "read the record", e)
check(all(r["conn"] in ((0, 1) if g is not None else (0,)) for r in recs), "messages only from the expected connections",
      sorted(set(r["conn"] for r in recs)))
recs = [r for r in recs if r["conn"] == 0]  # the hostile connection's
got = [bytes.fromhex(r["head"]).decode("utf-8", "replace") if r["len"] <= 64 else "(len %d)" % r["len"] for r in recs]
want_msgs = [m for c in order for m in CASES[c]["msgs"]]
check(got == want_msgs, "msg_hash got exactly the %d expected messages in order (and nothing else)" % len(want_msgs),
      {"got": got, "want": want_msgs})
check(not any("424144" in r["head"] for r in recs), "no delivered message carries \"BAD\" (no byte of a bad frame delivered)",
      [r for r in recs if "424144" in r["head"]])
check(all(not r["tsc0"] for r in recs), "every delivered message has an rx TSC", [r for r in recs if r["tsc0"]])
h0 = ([k for k in h.get("conns", []) if k.get("conn") == 0] or [{}])[0]
check(h0.get("msgs") == len(want_msgs) and h.get("record_errors") == 0,
      "msg_hash result: %d messages from the hostile connection" % len(want_msgs), (h0.get("msgs"), h.get("record_errors")))
# counters: exactly what the cases add up to
w = rep.get("stages", {}).get("ws", {}).get("counters", {})
print("info: ws counters: " + ", ".join("%s %s" % (k, v) for k, v in sorted(w.items()) if v))
ctrs = ["fail_protocol_1002", "fail_bad_utf8_1007", "fail_too_big_1009", "fail_handshake", "fail_handshake_timeout",
        "fail_pong_timeout", "fail_tcp", "closes_rx", "closes_tx", "pings_rx", "pongs_tx"]
# the good connection's share: the server's close (and our answer), its pings
# (and our pongs); it fails nothing
good_ctr = {} if g is None else {"closes_rx": 1, "closes_tx": 1, "pings_rx": g.get("pings", 0),
                                 "pongs_tx": g.get("pings", 0)}
# the shutdown's close 1001 on the connections still open at the end (the
# reconnects held after "done"), and the answers to it
stop_ctr = {"closes_tx": w.get("stop_closes", 0), "closes_rx": w.get("stop_closes_answered", 0)}
n_conns = 1 if g is None else 2
check(stop_ctr["closes_rx"] <= stop_ctr["closes_tx"] <= n_conns,
      "at most one close 1001 at stop per connection (%d), at most one answer each" % n_conns, stop_ctr)
for ctr in ctrs:
    want = sum(CASES[c]["ctr"].get(ctr, 0) for c in order) + good_ctr.get(ctr, 0) + stop_ctr.get(ctr, 0)
    check(w.get(ctr) == want, "ws %s == %d%s%s" % (ctr, want, " (good connection included)" if ctr in good_ctr else "",
                                                 " (the stop's included)" if stop_ctr.get(ctr) else ""),
          w.get(ctr))
check(w.get("reconnects", 0) >= len(order) and w.get("connects", 0) >= len(order),
      "ws reconnects and connects >= %d (one per case)" % len(order), (w.get("reconnects"), w.get("connects")))
n_open = sum(1 for c in order if CASES[c]["kind"] != "handshake")
check(w.get("opens", 0) >= n_open, "ws opens >= %d" % n_open, w.get("opens"))
PY
}
