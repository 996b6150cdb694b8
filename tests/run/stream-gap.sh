#!/bin/bash
# A hole in a TCP stream is found, never parsed across (issue 17 item 3): the
# demo with the client's ws, metrics and sink on lcore 2 and the tcp stage on
# lcore 1, the tcp.data link's ring at 16 slots with on_full "drop" and the
# exchange unpaced: the ring drops stream mbufs TCP has acknowledged
# (tcp.data.drop_ring_full > 0). Every DATA event carries its offset in the
# stream (lcp_stream_meta.off): ws sees the first byte it was not given,
# fails the connection (fail_stream_gap > 0, close 1011) and reconnects; no
# frame is misread across a hole (fail_protocol_1002, fail_bad_utf8_1007,
# fail_too_big_1009 stay 0) and every message delivered is a whole tick
# (metrics: bad_tick == 0). Without the check the decoder reads on from the
# wrong byte (seen: 1007 after 5 messages, or garbage delivered).
. "$(dirname "$0")/lib.sh"

for p in tcp ws feedsim metrics port_ethdev sink_null; do
	[ -f "$top_builddir/plugins/$p/.libs/$p.so" ] || skip "plugins/$p not built"
done

"$PYTHON3" - "$top_srcdir/conf/demo.json" "$T/gap.json" <<'PY' || fail "cannot write the config"
import json, sys
c = json.load(open(sys.argv[1]))
for s in c["stages"]:
    if s["name"] in ("feed", "stats", "sink"):
        s["lcore"] = 2
    if s["name"] == "exchange":
        s["options"]["rate"] = 0
c["links"] = [l for l in c["links"] if l != "tcp.data -> feed.in"] + [
    {"from": "tcp.data", "to": "feed.in", "ring_size": 16, "on_full": "drop"}]
c["engine"]["linger"] = 0.5
json.dump(c, open(sys.argv[2], "w"), indent=1)
PY

step "a 16-slot tcp.data ring that drops: the hole is found, the connection restarted"
new_prefix
# shellcheck disable=SC2046
lcrun gap "$T/gap.json" --duration 3 --no-live -- $(eal_base) --lcores=0@0,1@1,2@0
expect_rc 0 "gap"
rcheck "gap" \
	'ctr("tcp", "data.drop_ring_full") > 0' \
	'ctr("feed", "fail_stream_gap") > 0' \
	'ctr("feed", "reconnects") >= ctr("feed", "fail_stream_gap")' \
	'ctr("feed", "fail_protocol_1002") + ctr("feed", "fail_bad_utf8_1007") + ctr("feed", "fail_too_big_1009") == 0' \
	'ctr("stats", "msgs") > 0' \
	'ctr("stats", "bad_tick") == 0' \
	'r["leaked_objects"] == 0'
expect_grep "$ERR" '\[ws:feed\] warning: conn 0: close 1011: [0-9]+ byte\(s\) of the TCP stream lost between tcp and ws' \
	"the hole is logged with its size"
finish
