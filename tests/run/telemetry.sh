#!/bin/bash
# DPDK telemetry: while a pipeline runs, dpdk-telemetry.py (the stock DPDK client)
# answers /lcpipe/stats (every stage with in/out/drops, every worker lcore) and
# /lcpipe/stage,NAME (every counter of one stage) with live, non-zero counters,
# /lcpipe/memory (resident set, objects in use per mempool and stage pool);
# an unknown stage gets an error (null), not a crash. The socket lives in the
# test's own RUNTIME_DIRECTORY, found through the unique --file-prefix.
. "$(dirname "$0")/lib.sh"

if [ -z "${DPDK_TELEMETRY:-}" ] || [ ! -x "$DPDK_TELEMETRY" ]; then
	skip "dpdk-telemetry.py not found (configure looks for it on PATH)"
fi

step "gen@1 (rate-limited) -> sink_null@2 for 3 s, queried while it runs"
mkconf direct.json "$T/tel.json" LG=1 LS=2 COUNT=0 RATE=100000 SIZE=64 RING=16384 \
	SINK=sink_null SINK_OPTS='{}'
lcstart tel "$T/tel.json" --duration 3 --no-live
if ! wait_for "$ERR" '\[lcpipe\] running' 20; then
	fail "lcpipe did not report running within 20 s"
	show_run
	stop_pid "$PID"
	lcwait
	finish
fi
# frames have flowed once a stats line says so
wait_for "$OUT" 'delivered [0-9.]+ [kM]?obj \([1-9]' 10 || say "(no stats line with traffic yet)"

# all queries over one connection (the client reads commands from stdin), one
# JSON reply per line, in order
CMDS='/lcpipe/stats
/lcpipe/stage,sink
/lcpipe/stage,gen
/lcpipe/stage,nosuch
/lcpipe/memory
/'
say "+ dpdk-telemetry.py -f $PFX <<< \"${CMDS//$'\n'/ }\""
echo "$CMDS" | timeout 20 "$PYTHON3" "$DPDK_TELEMETRY" -f "$PFX" >"$T/tel.replies" 2>"$T/tel.client.err"
rc=$?
if [ $rc -ne 0 ] || [ "$(grep -c '^{' "$T/tel.replies")" -ne 6 ]; then
	fail "dpdk-telemetry.py: exit $rc, expected 6 JSON replies"
	cat "$T/tel.replies" "$T/tel.client.err"
fi
i=0
for f in stats stage genstage nosuch memory list; do
	i=$((i + 1))
	grep '^{' "$T/tel.replies" | sed -n "${i}p" >"$T/$f.json"
done

# tcheck FILE CMD EXPR...: assertions on the reply to CMD (v = the reply's value)
tcheck() {
	local f=$1 cmd=$2
	shift 2
	"$PYTHON3" - "$f" "$cmd" "$@" <<'PY' || fail "telemetry reply to $cmd (above)"
import json, sys
path, cmd, exprs = sys.argv[1], sys.argv[2], sys.argv[3:]
text = open(path).read()
try:
    # one JSON object per reply line
    replies = [json.loads(l) for l in text.splitlines() if l.strip().startswith("{")]
    v = [x for x in replies if cmd in x][0][cmd]
except Exception as e:
    print("FAIL: no JSON reply for %s in %r (%s)" % (cmd, text[:400], e))
    sys.exit(1)
def c(d, name):
    """counter NAME of a stage reply; telemetry keys cannot hold '.', so the engine
    may spell "in.in" as "in/in" or "in_in" """
    for k in (name, name.replace(".", "/"), name.replace(".", "_")):
        if k in d:
            return d[k]
    raise KeyError("no counter %s (nor with . as / or _) in the reply" % name)
bad = 0
for e in exprs:
    try:
        res = eval(e, {"v": v, "c": c})
    except Exception as ex:
        res = "error: %s" % ex
    print("%s %s %s%s" % ("ok:  " if res is True else "FAIL:", cmd, e,
                         "   [%s]" % res if isinstance(res, str) else ""))
    bad += res is not True
if bad:
    print("reply: %s" % json.dumps(v, sort_keys=True))
sys.exit(1 if bad else 0)
PY
}
tcheck "$T/stats.json" /lcpipe/stats \
	'isinstance(v, dict)' \
	'"gen" in v and "sink" in v' \
	'v["gen"]["plugin"] == "gen" and v["sink"]["plugin"] == "sink_null"' \
	'v["gen"]["lcore"] == 1 and v["sink"]["lcore"] == 2' \
	'v["gen"]["out"] > 0' \
	'v["sink"]["in"] > 0' \
	'v["sink"]["in"] <= v["gen"]["out"]' \
	'"lcore1" in v and "lcore2" in v' \
	'v["lcore1"]["busy_cycles"] + v["lcore1"]["idle_cycles"] > 0'
# /lcpipe/stage,NAME is "every counter of one stage": the names the report lists
# (a "." in a name may be spelled "/" or "_" in the reply).
# (DPDK 22.11 telemetry refuses dict keys with characters other than
# [A-Za-z0-9_/]: rte_tel_data_add_dict_u64() returns -EINVAL for "in.in", and a
# caller that ignores it silently loses the counter.) The sink's "in.in" is its
# ring's consumer index, which moves at the dequeue, before the sink counts the
# burst's bytes: a live query may see one burst (32) more in than counted.
tcheck "$T/stage.json" /lcpipe/stage \
	'isinstance(v, dict)' \
	'c(v, "in.in") > 0' \
	'0 <= 64 * c(v, "in.in") - v["bytes"] <= 64 * 32' \
	'v["drop_shutdown"] == 0'
tcheck "$T/genstage.json" /lcpipe/stage \
	'v["packets"] > 0' 'c(v, "out.out") > 0' 'c(v, "out.drop_ring_full") >= 0'
tcheck "$T/nosuch.json" /lcpipe/stage 'v is None'
tcheck "$T/memory.json" /lcpipe/memory \
	'v["rss_kb"] > 1024' \
	'"lcp_pkt_s0" in v["mempools_in_use"]' \
	'0 <= v["mempools_in_use"]["lcp_pkt_s0"] <= 8191' \
	'isinstance(v["pools_in_use"], dict)'
tcheck "$T/list.json" / '"/lcpipe/stats" in v' '"/lcpipe/stage" in v' '"/lcpipe/memory" in v'

lcwait
expect_rc 0 "the run after the queries"
rcheck "final report" 'r["stop_reason"] == "duration"' 'r["drained"] == True' \
	'st("sink", "in") == ctr("gen", "packets") > 0' 'in_use == 0'
for s in sink gen; do
	"$PYTHON3" - "$T/$([ $s = sink ] && echo stage || echo genstage).json" "$REP" "$s" <<'PY' || fail "/lcpipe/stage,$s does not list every counter of the stage"
import json, sys
reply = list(json.loads(open(sys.argv[1]).read()).values())[0] or {}
norm = lambda k: k.replace(".", "_").replace("/", "_")
want = set(norm(k) for k in json.load(open(sys.argv[2]))["stages"][sys.argv[3]]["counters"])
got = set(norm(k) for k in reply)
if want == got:
    print("ok:   /lcpipe/stage,%s lists the stage's %d counters" % (sys.argv[3], len(want)))
    sys.exit(0)
print("FAIL: /lcpipe/stage,%s: counters in the report but not in the reply: %s; in the reply only: %s"
      % (sys.argv[3], sorted(want - got), sorted(got - want)))
sys.exit(1)
PY
done
finish
