#!/bin/bash
# feedsim's replay mode (prerender): the demo pipeline (feedsim -> tcp ->
# net_ring pair -> tcp -> ws -> metrics, in one process) with the stream
# rendered at init and sent by copies:
#  (a) 64-byte ticks in B12's shape: every message arrives (metrics msgs ==
#      feedsim msgs == count), each is a tick (ticks == msgs) exactly 64
#      bytes, in sequence (seq_gaps 0, seq_in_order == msgs - symbols), then
#      feedsim's close 1000;
#  (b) a size mix with bare ticks (below 50 bytes) and frames larger than a
#      SEND mbuf (5000 bytes): the same, bytes equal on both ends;
#  (c) lcpipe check refuses prerender with deflate (naming both), with count
#      0, and with more than 1 GiB of frames.
. "$(dirname "$0")/lib.sh"

need_plugins tcp ws feedsim metrics port_ethdev sink_null

# pconf OUT PYTHON-EDITS: conf/demo.json, feedsim (ex) in prerender mode, the
# client (ws) without pings and reconnects, with EDITS applied
pconf() {
	new_prefix
	"$PYTHON3" - "$top_srcdir/conf/demo.json" "$1" "$PFX" "$2" <<'PY' || fail "cannot write $1"
import json, sys
c = json.load(open(sys.argv[1]))
c["eal"] = [a for a in c["eal"] if not a.startswith("--file-prefix")] + ["--file-prefix=" + sys.argv[3]]
c["engine"]["duration"] = 0
st = {s["name"]: s for s in c["stages"]}
ex, ws = st["exchange"]["options"], st["feed"]["options"]
for k in ("fragment_every", "ping_interval_ms"):
    ex.pop(k, None)
ex.update({"prerender": True, "symbols": 100})
ws.update({"ping_interval_ms": 0, "stale_timeout_ms": 0, "reconnect_min_ms": 3600000, "reconnect_max_ms": 3600000})
exec(sys.argv[4])
json.dump(c, open(sys.argv[2], "w"), indent=1)
PY
}

# replay TAG CONF: run until the client logs feedsim's close 1000, then SIGTERM
replay() {
	lcstart "$1" "$2" --no-live
	wait_for "$ERR" 'server closed with 1000' 25 || fail "$1: no close 1000 from feedsim within 25 s"
	stop_pid "$PID"
	wait "$PID" 2>/dev/null
	RC=0
	expect_grep "$ERR" '\[feedsim:exchange\] prerender: [0-9]+ messages' "$1: rendered at init"
}

step "(a) 64-byte ticks, replayed"
pconf "$T/p64.json" 'ex.update({"count": 200000, "sizes": "64:1"})'
replay p64 "$T/p64.json"
rcheck "64-byte replay" \
	'ctr("exchange", "msgs") == 200000' \
	'ctr("exchange", "msg_bytes") == 200000 * 64' \
	'ctr("stats", "msgs") == 200000' \
	'ctr("stats", "ticks") == 200000' \
	'ctr("stats", "bytes") == 200000 * 64' \
	'ctr("stats", "seq_gaps") == 0' \
	'ctr("stats", "seq_dups") == 0' \
	'ctr("stats", "seq_in_order") == 200000 - 100' \
	'ctr("stats", "non_tick") == 0' \
	'ctr("exchange", "closes") == 1' \
	'ctr("feed", "opens") == 1' \
	'r["leaked_objects"] == 0'

step "(b) a size mix: bare ticks and frames larger than a SEND mbuf"
pconf "$T/mix.json" 'ex.update({"count": 30000, "sizes": "40:1,64:4,1024:2,5000:1", "seed": 7})'
replay mix "$T/mix.json"
rcheck "mixed replay" \
	'ctr("exchange", "msgs") == 30000' \
	'ctr("stats", "msgs") == 30000' \
	'ctr("stats", "ticks") == 30000' \
	'ctr("stats", "bytes") == ctr("exchange", "msg_bytes")' \
	'ctr("stats", "seq_gaps") == 0' \
	'ctr("stats", "seq_in_order") == 30000 - 100' \
	'ctr("feed", "opens") == 1' \
	'r["leaked_objects"] == 0'

step "(c) lcpipe check refuses what prerender cannot replay"
# check_refuses WHAT CONF REGEX
check_refuses() {
	"$LCPIPE" check "$2" >"$T/check.out" 2>&1
	rc=$?
	[ $rc -eq 78 ] && ok "$1: lcpipe check exits 78" || { fail "$1: lcpipe check exit $rc, expected 78"; cat "$T/check.out"; }
	expect_grep "$T/check.out" "$3" "$1"
}
pconf "$T/bad1.json" 'ex.update({"count": 1000, "deflate": True})'
check_refuses "with deflate" "$T/bad1.json" 'prerender .*deflate'
pconf "$T/bad2.json" 'ex.update({"count": 0})'
check_refuses "count 0" "$T/bad2.json" 'prerender needs count > 0'
pconf "$T/bad3.json" 'ex.update({"count": 20000000, "sizes": "64:1,1024:1"})'
check_refuses "over 1 GiB" "$T/bad3.json" 'prerender: count 20000000 .*1 GiB'
pconf "$T/good.json" 'ex.update({"count": 1000})'
"$LCPIPE" check "$T/good.json" >"$T/check.out" 2>&1 && ok "a good prerender config passes check" ||
	{ fail "lcpipe check refused a good prerender config"; cat "$T/check.out"; }
finish
