#!/bin/bash
# Shared-nothing scale-out in one process (conf/scaleout.json): two complete
# lanes, each feedsim (prerender) -> tcp =(its own ring pair)= tcp -> ws ->
# metrics -> sink_null on its own worker lcore (lane 1 on lcore 1, lane 2 on
# lcore 2), one connection per lane:
#  (a) lcpipe check passes conf/scaleout.json as shipped;
#  (b) run with COUNT messages per lane: each lane's metrics stage sees every
#      message, each a tick, in order (msgs == ticks == COUNT, seq_gaps 0),
#      then its feed's close 1000;
#  (c) nothing is shared between the lanes' lcores: the report lists no ring
#      (no link crosses lcores), every l1_* stage is on lcore 1 and every l2_*
#      on lcore 2, 8 stages each, and both lcores did work.
. "$(dirname "$0")/lib.sh"

need_plugins tcp ws feedsim metrics port_ethdev sink_null
COUNT=200000
CONF=$top_srcdir/conf/scaleout.json

step "(a) lcpipe check conf/scaleout.json"
if "$LCPIPE" check "$CONF" >"$T/check.out" 2>&1; then
	ok "conf/scaleout.json passes lcpipe check"
else
	fail "lcpipe check refused conf/scaleout.json"
	cat "$T/check.out"
fi

step "(b) two lanes, $COUNT messages each, every one in order"
# the shipped config with this test's file prefix, COUNT messages per lane,
# no duration (stopped once both feeds closed); on a 1-CPU machine both
# worker lcores share CPU 0
new_prefix
"$PYTHON3" - "$CONF" "$T/scaleout.json" "$PFX" "$COUNT" "$(nproc)" <<'PY' || fail "cannot write the config"
import json, sys
src, out, pfx, count, ncpu = sys.argv[1:6]
c = json.load(open(src))
c["eal"] = [a for a in c["eal"] if not a.startswith("--file-prefix")] + ["--file-prefix=" + pfx]
if int(ncpu) < 2:
    c["eal"] = [("--lcores=0@0,1@0,2@0" if a.startswith("--lcores") else a) for a in c["eal"]]
c["engine"]["duration"] = 0
for s in c["stages"]:
    if s["plugin"] == "feedsim":
        s["options"]["count"] = int(count)
json.dump(c, open(out, "w"), indent=1)
PY
lcstart lanes "$T/scaleout.json" --no-live
n=0
for _ in $(seq 500); do
	n=$(grep -c 'server closed with 1000' "$ERR" 2>/dev/null)
	[ "${n:-0}" -ge 2 ] && break
	kill -0 "$PID" 2>/dev/null || break
	sleep 0.05
done
[ "${n:-0}" -ge 2 ] && ok "both feeds closed with 1000" || fail "$n of 2 feeds closed with 1000 within 25 s"
stop_pid "$PID"
wait "$PID" 2>/dev/null
for l in l1 l2; do
	rcheck "lane $l" -D N=$COUNT \
		"ctr('${l}_exchange', 'msgs') == N" \
		"ctr('${l}_stats', 'msgs') == N" \
		"ctr('${l}_stats', 'ticks') == N" \
		"ctr('${l}_stats', 'seq_gaps') == 0" \
		"ctr('${l}_stats', 'seq_dups') == 0" \
		"ctr('${l}_stats', 'bad_tick') == 0" \
		"ctr('${l}_stats', 'sessions') == 1" \
		"ctr('${l}_feed', 'opens') == 1" \
		"ctr('${l}_sink', 'msg.in') == N"
done

step "(c) shared-nothing: no ring, each lcore runs only its own lane"
rcheck "placement" \
	'rings == []' \
	'sorted(r["lcores"]) == ["1", "2"]' \
	'r["lcores"]["1"]["stages"] == 8' \
	'r["lcores"]["2"]["stages"] == 8' \
	'[s for s in stages if st(s, "lcore") != (1 if s.startswith("l1_") else 2)] == []' \
	'r["lcores"]["1"]["busy_cycles"] > 0' \
	'r["lcores"]["2"]["busy_cycles"] > 0' \
	'r["leaked_objects"] == 0'
finish
