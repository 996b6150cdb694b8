#!/bin/bash
# ws_rtt (plugins/ws_rtt) against feedsim as an echo server (its "echo" option),
# both over lcpipe's own TCP on a ring pair (conf/demo.json's wiring):
# (a) 2000 probes recorded after 100 of warmup: every probe's echo arrives and
#     matches (no bad echoes), the run ends itself ("ws_rtt: done"), the result
#     file says complete, and the SDK histograms rtt_seconds, rx_path_seconds,
#     wire_seconds, tx_call_seconds hold the 2000 recorded probes each with
#     0 < p50 <= p99; feedsim echoed every probe and the subscription;
# (b) no echo server (feedsim without echo): the first probe never starts, or
#     starts and stalls: the run ends with "ws_rtt: stalled" or by duration,
#     and the result file says not complete with the reason.
. "$(dirname "$0")/lib.sh"

need_plugins ws_rtt feedsim ws tcp port_ethdev

# rttconf OUT ECHO(true|false)
rttconf() {
	new_prefix
	"$PYTHON3" - "$top_srcdir/conf/demo.json" "$1" "$2" "$T" "$PFX" <<'PY' || fail "cannot write $1"
import json, sys
c = json.load(open(sys.argv[1]))
out, echo, tmp, pfx = sys.argv[2], sys.argv[3] == "true", sys.argv[4], sys.argv[5]
c["eal"] = ["--no-huge", "--no-pci", "--no-shconf", "-m", "256", "-l", "0,1", "--file-prefix=" + pfx]
c["engine"]["duration"] = 20
st = {s["name"]: s for s in c["stages"]}
st["exchange"]["options"]["echo"] = echo
st["exchange"]["options"].pop("ping_interval_ms", None)
st["feed"]["options"]["subscribe"] = "hello"
c["stages"] = [s for s in c["stages"] if s["name"] not in ("stats", "sink")]
c["stages"].append({"name": "rtt", "plugin": "ws_rtt", "lcore": 1,
                    "options": {"count": 2000, "warmup": 100, "size": 64, "timeout_ms": 1000,
                                "result": tmp + "/rtt-" + ("echo" if echo else "none") + ".json"}})
c["links"] = [l for l in c["links"] if "stats" not in l and "sink" not in l] + ["feed.msg -> rtt.in", "rtt.out -> feed.send"]
json.dump(c, open(out, "w"), indent=1)
PY
}

step "(a) probes against feedsim's echo"
rttconf "$T/a.json" true
lcrun a "$T/a.json" --no-live
expect_rc 0 "run"
rcheck "(a)" \
	'r["stop_reason"] == "ws_rtt: done"' \
	'ctr("rtt", "recorded") == 2000' 'ctr("rtt", "echoes") == ctr("rtt", "probes") == 2100' \
	'ctr("rtt", "bad_echoes") == ctr("rtt", "drop_no_msg") == 0' \
	'ctr("exchange", "echoed") == 2101' \
	'all(hist("rtt", h)["count"] == 2000 for h in ("rtt_seconds", "rx_path_seconds", "wire_seconds", "tx_call_seconds"))' \
	'0 < hist("rtt", "rtt_seconds")["p50"] <= hist("rtt", "rtt_seconds")["p99"] < 1' \
	'hist("rtt", "wire_seconds")["p50"] <= hist("rtt", "rtt_seconds")["p50"]' \
	'r["leaked_objects"] == 0'
"$PYTHON3" - "$T/rtt-echo.json" <<'PY' && ok "the result file: complete, 2000 round trips" || fail "result file (above)"
import json, sys
r = json.loads(open(sys.argv[1]).read())
assert r["complete"] is True and r["error"] is None, r
assert r["rtt"]["n"] == 2000 and r["count"] == 2000 and r["warmup"] == 100, r["rtt"]
PY

step "(b) no echo: the run says the probes stalled"
rttconf "$T/b.json" false
lcrun b "$T/b.json" --no-live
expect_rc 0 "run"
rcheck "(b)" 'r["stop_reason"] in ("ws_rtt: stalled", "duration")' 'ctr("rtt", "recorded") == 0' 'r["leaked_objects"] == 0'
"$PYTHON3" - "$T/rtt-none.json" <<'PY' && ok "the result file: not complete, with the reason" || fail "result file (above)"
import json, sys
r = json.loads(open(sys.argv[1]).read())
assert r["complete"] is False and r["error"], r
PY
finish
