#!/bin/bash
# The ws stage's production behaviour, in one process against feedsim
# (conf/demo.json's pipeline):
#   - reconnect backoff: a server that accepts and closes at once (feedsim
#     count 50, close_when_done) gets reconnects whose delays double (the
#     backoff does not start over, the connections never stay open for
#     reconnect_reset_ms); without jitter exactly 20, 40, 80, 160, 160 ms; with
#     full jitter each delay lies in [reconnect_min_ms, the backoff] and they
#     are not all equal to the backoff; with reconnect_reset_ms 0 every delay
#     is reconnect_min_ms again;
#   - the stale-feed watchdog: a feed of 2 messages per second and
#     stale_timeout_ms 200 closes (1001) and re-opens, counted (fail_stale);
#   - paced subscriptions: three lines arrive, in order, one per open, counted
#     once each (subscribes_tx), none retried.
. "$(dirname "$0")/lib.sh"

need_plugins tcp ws feedsim metrics

# drun TAG SECONDS WHAT PYTHON-EDITS: conf/demo.json with EDITS applied to ex
# (feedsim) / ws, run for SECONDS (demo_run)
drun() {
	"$PYTHON3" - "$top_srcdir/conf/demo.json" "$T/$1.json" "$4" <<'PY' || fail "cannot write $T/$1.json"
import json, sys
c = json.load(open(sys.argv[1]))
st = {s["name"]: s for s in c["stages"]}
ex, ws = st["exchange"]["options"], st["feed"]["options"]
exec(sys.argv[3])
json.dump(c, open(sys.argv[2], "w"), indent=1)
PY
	demo_run "$1" "$T/$1.json" "$2" "$3"
}

# backoff TAG SECONDS WS-OPTIONS WANT WHAT: feedsim accepts and closes at once
# (count 50, close_when_done), ws with WS-OPTIONS (a Python dict) reconnects
# for SECONDS; the delays it logged, d, must make the Python expression WANT true
# (b: the backoff without jitter of reconnect_min_ms 10, reconnect_max_ms 80)
backoff() {
	drun "$1" "$2" "$1 run" "
ex.update({\"count\": 50, \"close_when_done\": True})
ws.update($3)
"
	d=$("$PYTHON3" -c 'import json, re, sys; print(json.dumps([int(d) for d in re.findall(r"\[ws:feed\] warning: conn 0 \([^)]*\): .*; reconnecting in (\d+) ms", open(sys.argv[1]).read())]))' "$ERR")
	say "delays: $d"
	"$PYTHON3" -c '
import json, sys
d = json.loads(sys.argv[1])
b = [min(10 * 2 ** i, 80) for i in range(len(d))]
sys.exit(0 if eval(sys.argv[2]) else 1)' "$d" "$4" && ok "$5" || fail "$5: delays $d, not $4"
}

step "backoff: kicked at once, no jitter: the delays double"
backoff nojit 1 '{"reconnect_min_ms": 20, "reconnect_max_ms": 160, "reconnect_jitter": False, "reconnect_reset_ms": 60000}' \
	'd[:5] == [20, 40, 80, 160, 160]' "delays 20, 40, 80, 160, 160 ms"

step "backoff: full jitter"
backoff jit 2 '{"reconnect_min_ms": 10, "reconnect_max_ms": 80, "reconnect_reset_ms": 60000}' \
	'len(d) >= 8 and all(10 <= x <= y for x, y in zip(d, b)) and d != b' "every delay within [10, backoff], not all the backoff"

step "backoff: reconnect_reset_ms 0 starts over after every open"
backoff reset 1 '{"reconnect_min_ms": 20, "reconnect_max_ms": 160, "reconnect_jitter": False, "reconnect_reset_ms": 0}' \
	'len(d) >= 5 and set(d) == {20}' "every delay 20 ms"

step "the stale-feed watchdog"
drun stale 2 "stale run" '
ex.update({"rate": 2})
ws.update({"stale_timeout_ms": 200, "reconnect_min_ms": 10, "reconnect_max_ms": 10})
'
rcheck "stale feed" 'ctr("feed", "fail_stale") >= 2' 'ctr("feed", "opens") >= 3' \
	'ctr("feed", "closes_tx") >= ctr("feed", "fail_stale")' 'r["leaked_objects"] == 0'
expect_grep "$ERR" "no message for 200 ms \(stale feed\)" "the log says why"

step "paced subscriptions"
drun subs 1 "subscriptions run" '
ws.update({"subscribe": "{\"op\":\"sub\",\"n\":1}\n{\"op\":\"sub\",\"n\":2}\n{\"op\":\"sub\",\"n\":3}", "subscribe_interval_ms": 100})
'
rcheck "paced subscriptions" 'ctr("feed", "opens") == 1' 'ctr("feed", "subscribes_tx") == 3' \
	'ctr("feed", "subscribe_retries") == 0' 'ctr("exchange", "client_msgs") == 3'
finish
