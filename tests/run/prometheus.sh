#!/bin/bash
# The metrics endpoint (engine.metrics_listen, framework/prom.c) against real
# Prometheus tools, on loopback only:
#   (a) lcpipe check refuses addresses that are not ADDRESS:PORT; a port that
#       is taken makes lcpipe run fail at start, saying so;
#   (b) while the demo runs: GET /metrics passes `promtool check metrics`
#       (Debian's prometheus package); its samples hold together (cumulative
#       histogram buckets, _count = the +Inf bucket, the stages' in/out, every
#       worker lcore, the mempools); a later scrape has more latency samples
#       (live); OpenMetrics on request (# EOF, counter families without
#       _total); anything but GET /metrics is 404 / 405;
#   (c) telemetry's /lcpipe/stage,stats has live latency quantiles;
#   (d) a real Prometheus server scrapes it (up == 1, the histogram's series
#       stored) and evaluates every query of the shipped Grafana dashboard
#       (conf/grafana/lcpipe-dashboard.json), the latency quantile among them
#       with a value; every metric the dashboard names is one the endpoint
#       exports;
#   (e) the report counts the scrapes served.
. "$(dirname "$0")/lib.sh"

need_plugins tcp ws feedsim metrics port_ethdev sink_null
PROMTOOL=$(command -v promtool || true)
[ -n "$PROMTOOL" ] || skip "promtool not found (Debian: prometheus)"
PROMETHEUS=$(command -v prometheus || true)
DASH=$top_srcdir/conf/grafana/lcpipe-dashboard.json

# free_port: a TCP port nobody listens on at 127.0.0.1 now
free_port() {
	"$PYTHON3" -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}
# democonf OUT LISTEN: conf/demo.json with engine.metrics_listen = LISTEN
democonf() {
	"$PYTHON3" - "$top_srcdir/conf/demo.json" "$1" "$2" <<'PY' || fail "cannot write $1"
import json, sys
c = json.load(open(sys.argv[1]))
c["engine"]["metrics_listen"] = sys.argv[3]
json.dump(c, open(sys.argv[2], "w"), indent=1)
PY
}
# scrape FILE [ACCEPT]: GET /metrics into FILE; prints the HTTP status
scrape() {
	"$PYTHON3" - "http://127.0.0.1:$PORT${3:-/metrics}" "$1" "${2:-}" "${4:-GET}" <<'PY'
import sys, urllib.request, urllib.error
url, out, accept, method = sys.argv[1:5]
req = urllib.request.Request(url, method=method, headers={"Accept": accept} if accept else {})
try:
    with urllib.request.urlopen(req, timeout=10) as r:
        open(out, "wb").write(r.read())
        print(r.status, r.headers.get("Content-Type"))
except urllib.error.HTTPError as e:
    print(e.code, "")
PY
}

step "(a) addresses: refused by lcpipe check; a taken port fails the run at start"
for bad in "127.0.0.1" "localhost:9464" "127.0.0.1:0" "127.0.0.1:70000" "[::1:9464" "1.2.3:9464"; do
	democonf "$T/bad.json" "$bad"
	"$LCPIPE" check "$T/bad.json" >"$T/bad.out" 2>&1
	rc=$?
	if [ $rc -ne 0 ] && grep -q "engine.metrics_listen: \"$(printf '%s' "$bad" | sed 's/[][\.*^$]/\\&/g')\" is not ADDRESS:PORT" "$T/bad.out"; then
		ok "check refuses \"$bad\" (exit $rc)"
	else
		fail "check of metrics_listen \"$bad\": exit $rc, output: $(head -c 400 "$T/bad.out")"
	fi
done
BUSY=$(free_port)
"$PYTHON3" -c 'import socket, sys, time
s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("127.0.0.1", int(sys.argv[1]))); s.listen(1); time.sleep(60)' "$BUSY" &
HOLDER=$!
PIDS="$PIDS $HOLDER"
sleep 0.3
democonf "$T/busy.json" "127.0.0.1:$BUSY"
new_prefix
# shellcheck disable=SC2046
lcrun busy "$T/busy.json" --duration 5 --no-live -- $(eal_base) -l 0,1
expect_rc 1 "metrics_listen on a taken port"
expect_grep "$ERR" "engine.metrics_listen: cannot listen on 127.0.0.1:$BUSY" "the run says why"
kill "$HOLDER" 2>/dev/null
wait "$HOLDER" 2>/dev/null

step "(b) the demo with its endpoint: promtool, the samples, live, OpenMetrics"
PORT=$(free_port)
democonf "$T/demo.json" "127.0.0.1:$PORT"
new_prefix
# shellcheck disable=SC2046
lcstart demo "$T/demo.json" --duration 60 --no-live -- $(eal_base) -l 0,1
if ! wait_for "$ERR" "metrics endpoint: http://127.0.0.1:$PORT/metrics" 20 ||
	! wait_for "$OUT" 'delivered [0-9.]+ [kM]?obj \([1-9]' 20; then
	fail "the demo did not start its endpoint or traffic within 20 s"
	show_run
	stop_pid "$PID"
	finish
fi
read -r st ct < <(scrape "$T/m1.txt")
[ "$st" = 200 ] && ok "GET /metrics: 200 ($ct)" || fail "GET /metrics: $st"
case $ct in text/plain*version=0.0.4*) ok "Prometheus text format 0.0.4" ;; *) fail "content type $ct" ;; esac
if "$PROMTOOL" check metrics <"$T/m1.txt" >"$T/promtool.out" 2>&1; then
	ok "promtool check metrics: no problems ($(grep -c '^lcpipe_' "$T/m1.txt") samples)"
else
	fail "promtool check metrics: $(head -c 600 "$T/promtool.out")"
fi
sleep 1.5
scrape "$T/m2.txt" >/dev/null
read -r st ct < <(scrape "$T/m.om" "application/openmetrics-text; version=1.0.0,text/plain;version=0.0.4;q=0.5")
case $ct in application/openmetrics-text*) ok "OpenMetrics on request ($ct)" ;; *) fail "OpenMetrics asked, got $st $ct" ;; esac
read -r st _ < <(scrape "$T/x" "" /nosuch)
[ "$st" = 404 ] && ok "GET /nosuch: 404" || fail "GET /nosuch: $st"
read -r st _ < <(scrape "$T/x" "" /metrics POST)
[ "$st" = 405 ] && ok "POST /metrics: 405" || fail "POST /metrics: $st"
"$PYTHON3" - "$T/m1.txt" "$T/m2.txt" "$T/m.om" "$DASH" <<'PY' && ok "the samples hold together; live; OpenMetrics; the dashboard's metrics exist" || fail "the scraped samples (above)"
import json, re, sys
line = re.compile(r'^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{(.*)\})? (\S+)$')
lab = re.compile(r'([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"')
def parse(path):
    fam, s = {}, []
    for l in open(path):
        l = l.rstrip("\n")
        if l.startswith("# TYPE "):
            _, _, n, t = l.split(" ", 3)
            fam[n] = t
            continue
        if not l or l.startswith("#"):
            continue
        m = line.match(l)
        assert m, "not a sample line: %r" % l
        s.append((m.group(1), dict(lab.findall(m.group(3) or "")), float(m.group(4))))
    return fam, s
fam, s1 = parse(sys.argv[1])
_, s2 = parse(sys.argv[2])
keys = [(n, tuple(sorted(l.items()))) for n, l, _ in s1]
assert len(keys) == len(set(keys)), "a series appears twice"
def get(s, n, **want):
    return [v for name, l, v in s if name == n and all(l.get(k) == x for k, x in want.items())]
for f in ("lcpipe_info", "lcpipe_port_in_objects_total", "lcpipe_port_out_objects_total", "lcpipe_drops_total",
          "lcpipe_stage_events_total", "lcpipe_latency_seconds", "lcpipe_lcore_busy_cycles_total",
          "lcpipe_mempool_in_use", "lcpipe_pool_in_use"):
    assert f in fam, "no family %s" % f
assert fam["lcpipe_latency_seconds"] == "histogram"
assert get(s1, "lcpipe_port_in_objects_total", stage="stats", port="in")[0] > 0
assert get(s1, "lcpipe_stage_events_total", stage="stats", counter="msgs")[0] > 0
assert len(get(s1, "lcpipe_lcore_busy_cycles_total")) >= 1 and min(get(s1, "lcpipe_lcore_busy_cycles_total")) > 0
def hist(s):
    b = [(l["le"], v) for n, l, v in s if n == "lcpipe_latency_seconds_bucket" and l.get("stage") == "stats"]
    les = [float(x) for x, _ in b]
    assert b[-1][0] == "+Inf" and les == sorted(les) and len(set(les)) == len(les), "le not ascending to +Inf"
    vals = [v for _, v in b]
    assert all(a <= c for a, c in zip(vals, vals[1:])), "buckets not cumulative"
    cnt = get(s, "lcpipe_latency_seconds_count", stage="stats")[0]
    assert cnt == vals[-1] and cnt > 0, (cnt, vals[-1])
    assert get(s, "lcpipe_latency_seconds_sum", stage="stats")[0] > 0
    return cnt
c1, c2 = hist(s1), hist(s2)
assert c2 > c1, "no new latency samples between two scrapes 1.5 s apart (%d, %d)" % (c1, c2)
om = open(sys.argv[3]).read()
assert om.endswith("# EOF\n"), "OpenMetrics must end with # EOF"
assert "# TYPE lcpipe_drops counter\n" in om and "\nlcpipe_drops_total{" in om
assert "# TYPE lcpipe info\n" in om and "\nlcpipe_info{" in om
# every metric the dashboard queries is exported
names = set(n for n, _, _ in s1)
d = json.load(open(sys.argv[4]))
exprs = [t["expr"] for p in d["panels"] for t in p.get("targets", [])]
used = set(re.findall(r'\blcpipe_[a-z0-9_]+', " ".join(exprs)))
missing = sorted(u for u in used if u not in names and u not in fam)  # a family may have no series here (no cross-lcore ring)
assert used and not missing, "dashboard metrics not exported: %s" % missing
PY

step "(c) telemetry: live latency quantiles of the metrics stage"
if [ -n "${DPDK_TELEMETRY:-}" ] && [ -x "$DPDK_TELEMETRY" ]; then
	echo "/lcpipe/stage,stats" | timeout 20 "$PYTHON3" "$DPDK_TELEMETRY" -f "$PFX" >"$T/tel.json" 2>"$T/tel.err"
	"$PYTHON3" - "$T/tel.json" <<'PY' && ok "/lcpipe/stage,stats: latency_seconds count and p50/p99 while running" || fail "telemetry quantiles: $(head -c 400 "$T/tel.json")"
import json, sys
r = [json.loads(l) for l in open(sys.argv[1]) if l.startswith("{")]
v = [x for x in r if "/lcpipe/stage" in x][0]["/lcpipe/stage"]
assert v["latency_seconds/count"] > 0, v.get("latency_seconds/count")
p50, p99 = float(v["latency_seconds/p50"]), float(v["latency_seconds/p99"])
assert 0 < p50 <= p99, (p50, p99)
assert "latency_seconds/b0" not in v and not any(k.startswith("latency_seconds.b") for k in v)
PY
else
	say "(dpdk-telemetry.py not found: telemetry part not run)"
fi

step "(d) a Prometheus server scrapes it and evaluates the Grafana dashboard's queries"
if [ -n "$PROMETHEUS" ]; then
	PPORT=$(free_port)
	mkdir -p "$T/prom"
	cat >"$T/prom/prometheus.yml" <<YML
global: {scrape_interval: 1s, evaluation_interval: 1s}
scrape_configs:
  - job_name: lcpipe
    static_configs: [{targets: ["127.0.0.1:$PORT"]}]
YML
	"$PROMETHEUS" --config.file="$T/prom/prometheus.yml" --storage.tsdb.path="$T/prom/data" \
		--web.listen-address="127.0.0.1:$PPORT" >"$T/prom/log" 2>&1 &
	PROMPID=$!
	PIDS="$PIDS $PROMPID"
	"$PYTHON3" - "$PPORT" "$DASH" <<'PY' && ok "Prometheus: up, the histogram stored, every dashboard query valid, the latency quantile has a value" || { fail "Prometheus server checks (above)"; tail -n 20 "$T/prom/log"; }
import json, sys, time, urllib.parse, urllib.request
base = "http://127.0.0.1:%s/api/v1/query?query=" % sys.argv[1]
def q(e):
    with urllib.request.urlopen(base + urllib.parse.quote(e), timeout=5) as r:
        j = json.load(r)
    assert j["status"] == "success", (e, j)
    return j["data"]["result"]
deadline = time.time() + 40
while True:
    try:
        up = q('up{job="lcpipe"}')
        n = q('lcpipe_latency_seconds_count{job="lcpipe"}')
        lat = q('histogram_quantile(0.5, sum by (le) (rate(lcpipe_latency_seconds_bucket{job="lcpipe"}[4s])))')
        if up and up[0]["value"][1] == "1" and n and float(n[0]["value"][1]) > 0 and lat and float(lat[0]["value"][1]) > 0:
            break
    except Exception as e:  # the server still starting
        err = e
    if time.time() > deadline:
        raise SystemExit("Prometheus did not see lcpipe's series within 40 s (up=%r)" % (locals().get("up"),))
    time.sleep(0.5)
d = json.load(open(sys.argv[2]))
for p in d["panels"]:
    for t in p.get("targets", []):
        e = t["expr"].replace('job=~"$job", instance=~"$instance"', 'job="lcpipe"').replace("$__rate_interval", "4s")
        q(e)  # valid PromQL, evaluated
print("latency p50 from Prometheus: %s s" % lat[0]["value"][1])
PY
	kill "$PROMPID" 2>/dev/null
	wait "$PROMPID" 2>/dev/null
else
	say "(prometheus server not found: part (d) not run)"
fi

step "(e) the run ends; the report counts the scrapes"
stop_pid "$PID"
lcwait
expect_rc 0 "demo with the endpoint, stopped by SIGTERM"
rcheck "report" -D "PORT=$PORT" \
	'r["metrics_endpoint"]["listen"] == "127.0.0.1:%d" % PORT' \
	'r["metrics_endpoint"]["scrapes"] >= 4' \
	'r["leaked_objects"] == 0'
finish
