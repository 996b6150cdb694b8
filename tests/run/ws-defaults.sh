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

for p in tcp ws feedsim metrics; do
	[ -f "$top_builddir/plugins/$p/.libs/$p.so" ] || skip "plugins/$p not built"
done

# dconf OUT PYTHON-EDITS: conf/demo.json with EDITS applied to ex (feedsim) / ws
dconf() {
	"$PYTHON3" - "$top_srcdir/conf/demo.json" "$1" "$2" <<'PY' || fail "cannot write $1"
import json, sys
c = json.load(open(sys.argv[1]))
st = {s["name"]: s for s in c["stages"]}
ex, ws = st["exchange"]["options"], st["feed"]["options"]
exec(sys.argv[3])
json.dump(c, open(sys.argv[2], "w"), indent=1)
PY
}

# delays LOG: the reconnect delays the ws stage logged, as a JSON list
delays() {
	"$PYTHON3" -c 'import json, re, sys; print(json.dumps([int(d) for d in re.findall(r"\[ws:feed\] warning: conn 0 \([^)]*\): .*; reconnecting in (\d+) ms", open(sys.argv[1]).read())]))' "$1"
}

step "backoff: kicked at once, no jitter: the delays double"
dconf "$T/nojit.json" '
ex.update({"count": 50, "close_when_done": True})
ws.update({"reconnect_min_ms": 20, "reconnect_max_ms": 160, "reconnect_jitter": False, "reconnect_reset_ms": 60000})
'
new_prefix
lcrun nojit "$T/nojit.json" --duration 1 --no-live -- $(eal_base) -l 0,1
expect_rc 0 "no-jitter run"
d=$(delays "$ERR")
say "delays: $d"
"$PYTHON3" -c 'import json, sys; d = json.loads(sys.argv[1]); sys.exit(0 if d[:5] == [20, 40, 80, 160, 160] else 1)' "$d" &&
	ok "delays 20, 40, 80, 160, 160 ms" || fail "delays $d, expected 20, 40, 80, 160, 160, ..."

step "backoff: full jitter"
dconf "$T/jit.json" '
ex.update({"count": 50, "close_when_done": True})
ws.update({"reconnect_min_ms": 10, "reconnect_max_ms": 80, "reconnect_reset_ms": 60000})
'
new_prefix
lcrun jit "$T/jit.json" --duration 2 --no-live -- $(eal_base) -l 0,1
expect_rc 0 "jitter run"
d=$(delays "$ERR")
say "delays: $d"
"$PYTHON3" - "$d" <<'PY' && ok "every delay within [10, backoff], not all the backoff" || fail "jittered delays wrong: $d"
import json, sys
d = json.loads(sys.argv[1])
bound = [min(10 * 2 ** i, 80) for i in range(len(d))]
print("bounds:", bound)
sys.exit(0 if len(d) >= 8 and all(10 <= x <= b for x, b in zip(d, bound)) and d != bound else 1)
PY

step "backoff: reconnect_reset_ms 0 starts over after every open"
dconf "$T/reset.json" '
ex.update({"count": 50, "close_when_done": True})
ws.update({"reconnect_min_ms": 20, "reconnect_max_ms": 160, "reconnect_jitter": False, "reconnect_reset_ms": 0})
'
new_prefix
lcrun reset "$T/reset.json" --duration 1 --no-live -- $(eal_base) -l 0,1
expect_rc 0 "reset run"
d=$(delays "$ERR")
"$PYTHON3" -c 'import json, sys; d = json.loads(sys.argv[1]); sys.exit(0 if len(d) >= 5 and set(d) == {20} else 1)' "$d" &&
	ok "every delay 20 ms ($d)" || fail "delays $d, expected all 20"

step "the stale-feed watchdog"
dconf "$T/stale.json" '
ex.update({"rate": 2})
ws.update({"stale_timeout_ms": 200, "reconnect_min_ms": 10, "reconnect_max_ms": 10})
'
new_prefix
lcrun stale "$T/stale.json" --duration 2 --no-live -- $(eal_base) -l 0,1
expect_rc 0 "stale run"
rcheck "stale feed" 'ctr("feed", "fail_stale") >= 2' 'ctr("feed", "opens") >= 3' \
	'ctr("feed", "closes_tx") >= ctr("feed", "fail_stale")' 'r["leaked_objects"] == 0'
expect_grep "$ERR" "no message for 200 ms \(stale feed\)" "the log says why"

step "paced subscriptions"
dconf "$T/subs.json" '
ws.update({"subscribe": "{\"op\":\"sub\",\"n\":1}\n{\"op\":\"sub\",\"n\":2}\n{\"op\":\"sub\",\"n\":3}", "subscribe_interval_ms": 100})
'
new_prefix
lcrun subs "$T/subs.json" --duration 1 --no-live -- $(eal_base) -l 0,1
expect_rc 0 "subscriptions run"
rcheck "paced subscriptions" 'ctr("feed", "opens") == 1' 'ctr("feed", "subscribes_tx") == 3' \
	'ctr("feed", "subscribe_retries") == 0' 'ctr("exchange", "client_msgs") == 3'
finish
