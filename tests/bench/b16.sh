#!/bin/bash
# B16 — shared-memory consumers (doc/benchmarks.md "B16", doc/shm.md): how long
# a message takes from lcpipe to a consumer in another process on the same host,
# and what reading it costs that consumer.
#
# The pipeline: conf/demo.json (feedsim -> tcp = ring pair = tcp -> ws -> metrics,
# all on worker lcore 1) with its sink replaced by sink_shm (65536 slots x 1024 B),
# feedsim paced at B16_RATE messages/s (open loop) for B16_N messages, ws ending
# the run after them. EAL --lcores=0@W,1@W: the worker and the (mostly sleeping)
# main lcore on CPU W. The consumer, bench/b16_consume (liblcpipe-shm), pinned
# with taskset to CPU C, alone there, in SCHED_FIFO 1 when BENCH_RT=1 (root: chrt),
# started first (it waits for the ring file and reads from the oldest message),
# in one of two modes:
#   spin  lcpshm_next() in a busy loop
#   wait  lcpshm_wait(): spins 50 us, then sleeps 50 us at a time
# Per message it records the TSC when the read returned minus
#   rx_tsc   the TSC at which lcpipe's port received the frame that completed the
#            message (so tcp + ws + metrics + sink_shm + the hop)
#   pub_tsc  the TSC at which sink_shm published the message's burst (the hop)
# and, in spin mode, the cycles of the lcpshm_next() call that returned it (the
# seqlock read and the payload copy; one rdtsc pair, ~40 cycles here, included).
# Same-run anchors: metrics' own rx_tsc -> metrics latency histogram (in lcpipe, the
# same lcore: the pipeline without the hop), and the anchor mode of b16_consume: a
# cache line stamped by a thread on CPU W and read by one spinning on CPU C every
# 10 us (the floor of any shared-memory hop between these two CPUs).
# The first B16_WARMUP messages of a run are read but not measured: feedsim's
# pacing counts from its start, so when the WebSocket opens it sends what the
# rate allowed meanwhile at once, and the pipeline (TCP's window) queues that
# burst for tens of ms; the consumer also opens the ring (mmap, MAP_POPULATE)
# while the first messages arrive.
# B16_ROUNDS rounds, modes rotated per round; medians over rounds. A run's feed
# lasts 0.9 s (B16_N / B16_RATE) and the anchor 0.8 s: a SCHED_FIFO thread that
# spins longer than the kernel's RT budget (sched_rt_runtime_us, 950 ms a second)
# is throttled for the rest of the second, which would show up as 50 ms latencies.
#
# Knobs: B16_ROUNDS (5), B16_RATE (100000), B16_N (90000), B16_WARMUP (20000), B16_MODES ("spin
# wait"), B16_WORKER_CPU (1), B16_CONSUMER_CPU (0), B16_ANCHOR_N (80000),
# B16_KEEP=1 (keep the work directory), BENCH_NICE, LCPIPE.
set -eu
. "$(dirname "$0")/common.sh"

: "${B16_ROUNDS:=5}"
: "${B16_RATE:=100000}"
: "${B16_N:=90000}"
: "${B16_WARMUP:=20000}"
: "${B16_MODES:=spin wait}"
: "${B16_WORKER_CPU:=1}"
: "${B16_CONSUMER_CPU:=0}"
: "${B16_ANCHOR_N:=80000}"
CONS=$BENCH_BUILDDIR/bench/b16_consume
DEMO=$HERE/../../conf/demo.json

bench_need_cpus 2
command -v taskset >/dev/null || { echo "SKIP: no taskset (Debian: util-linux)"; exit 77; }
[ -x "$PY" ] || { echo "SKIP: no /usr/bin/python3"; exit 77; }
[ "$(stat -f -c %T /dev/shm 2>/dev/null)" = tmpfs ] || { echo "SKIP: /dev/shm is not a tmpfs"; exit 77; }
for f in "$CONS" "$LCPIPE"; do
	[ -x "$f" ] || { echo "B16: $f is not built (make bench BENCH_ONLY=b16 builds it)"; exit 1; }
done
"$LCPIPE" describe sink_shm >/dev/null 2>&1 || { echo "B16: lcpipe finds no sink_shm plugin"; exit 1; }
[ "$B16_WORKER_CPU" != "$B16_CONSUMER_CPU" ] || { echo "B16: B16_WORKER_CPU and B16_CONSUMER_CPU must differ"; exit 2; }

bench_header B16 "shared-memory consumers: lcpipe (demo pipeline -> sink_shm) to a consumer process on the other CPU"
tmp=$(mktemp -d /tmp/lcpb16.XXXXXX)
RING=/dev/shm/lcpb16-$$
PIDS=""
cleanup() {
	# shellcheck disable=SC2086 # PIDS: a list of numbers
	bench_stop_pids 50 $PIDS
	rm -f "$RING"*
	if [ "${B16_KEEP:-0}" = 1 ]; then echo "B16_KEEP=1: keeping $tmp"; else rm -rf "$tmp"; fi
}
trap cleanup EXIT
trap 'exit 99' HUP INT TERM
export RUNTIME_DIRECTORY=$tmp/rt
mkdir -p "$RUNTIME_DIRECTORY"
RT=()
[ "$BENCH_RT" = 1 ] && command -v chrt >/dev/null && RT=(chrt -f 1)
echo "placement: lcpipe worker lcore 1 and main lcore 0 on CPU $B16_WORKER_CPU; the consumer on CPU $B16_CONSUMER_CPU${RT:+ (SCHED_FIFO 1)}"
echo "feed: $B16_N messages ($B16_WARMUP not measured) at $B16_RATE/s (feedsim sizes 96:70,256:25,1024:5, 100 symbols), ring 65536 x 1024 B"

# the config: conf/demo.json, sink -> sink_shm
"$PY" - "$DEMO" "$tmp/b16.json" "$RING" "$B16_N" "$B16_RATE" "$B16_WORKER_CPU" "$B16_CONSUMER_CPU" "$$" <<'PY'
import json, sys
src, out, ring, n, rate, w, c, pid = sys.argv[1:9]
d = json.load(open(src))
d["eal"] = ["--no-huge", "--no-pci", "--no-shconf", "-m", "512", "--lcores=0@%s,1@%s" % (w, w),
            "--file-prefix=lcpb16-%s" % pid, "--log-level=lib.eal:error"]
d["engine"]["duration"] = 120
for s in d["stages"]:
    if s["name"] == "sink":
        s["plugin"], s["options"] = "sink_shm", {"path": ring, "slots": 65536, "slot_size": 1024}
    if s["name"] == "exchange":
        s["options"].update({"count": int(n), "rate": int(rate)})
    if s["name"] == "feed":
        s["options"]["stop_after_msgs"] = int(n)
json.dump(d, open(out, "w"), indent=1)
PY

echo "+ ${RT[*]:+${RT[*]} }taskset -c $B16_CONSUMER_CPU b16_consume anchor --n $B16_ANCHOR_N --gap-ns 10000 --cpu-a $B16_WORKER_CPU --cpu-b $B16_CONSUMER_CPU"
echo "+ ${RT[*]:+${RT[*]} }taskset -c $B16_CONSUMER_CPU b16_consume ring $RING --mode spin|wait --wait-file 60 --warmup $B16_WARMUP &"
echo "+ lcpipe run b16.json --no-live --report R.report.json   (conf/demo.json, sink -> sink_shm)"
: >"$tmp/runs.tsv"
failed=0
read -r -a MODES <<<"$B16_MODES"
t_start=$(date +%s)
for r in $(seq 1 "$B16_ROUNDS"); do
	base=$tmp/r$r
	if nice -n "$BENCH_NICE" "${RT[@]}" taskset -c "$B16_CONSUMER_CPU" "$CONS" anchor --n "$B16_ANCHOR_N" --gap-ns 10000 \
		--cpu-a "$B16_WORKER_CPU" --cpu-b "$B16_CONSUMER_CPU" >"$base.anchor.json" 2>"$base.anchor.err"; then
		printf '%s\tanchor\t%s\n' "$r" "$base.anchor" >>"$tmp/runs.tsv"
	else
		echo "B16: the anchor failed: $(cat "$base.anchor.err")"
		failed=$((failed + 1))
	fi
	for mi in $(seq 0 $((${#MODES[@]} - 1))); do
		m=${MODES[$(((mi + r - 1) % ${#MODES[@]}))]}
		b=$base.$m
		rm -f "$RING"
		nice -n "$BENCH_NICE" "${RT[@]}" taskset -c "$B16_CONSUMER_CPU" "$CONS" ring "$RING" --mode "$m" --wait-file 60 --warmup "$B16_WARMUP" \
			>"$b.json" 2>"$b.err" &
		cp=$!
		PIDS="$PIDS $cp"
		rc=0
		nice -n "$BENCH_NICE" "$LCPIPE" run "$tmp/b16.json" --no-live --report "$b.report.json" >"$b.log" 2>&1 </dev/null || rc=$?
		wait "$cp" || rc=$((rc + 100))
		if [ $rc = 0 ] && [ -s "$b.json" ] && [ -s "$b.report.json" ]; then
			printf '%s\t%s\t%s\n' "$r" "$m" "$b" >>"$tmp/runs.tsv"
		else
			echo "B16: round $r, $m failed ($rc): $(cat "$b.err") $(tail -n 5 "$b.log")"
			failed=$((failed + 1))
		fi
	done
	printf 'round %d of %d done (%ds; load %s)\n' "$r" "$B16_ROUNDS" $(($(date +%s) - t_start)) "$(cut -d' ' -f1 /proc/loadavg)"
done
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg); $(($(date +%s) - t_start)) s"

"$PY" - "$tmp/runs.tsv" "$B16_RATE" "$B16_N" "$B16_WORKER_CPU" "$B16_CONSUMER_CPU" <<'PY' || failed=$((failed + 1))
import json, statistics, sys
runs, rate, n, wcpu, ccpu = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4], sys.argv[5]
by = {}
bad = 0
for line in open(runs):
    r, mode, base = line.rstrip("\n").split("\t")
    c = json.loads(open(base + ".json").read().strip().splitlines()[-1])
    if mode != "anchor":
        rep = json.load(open(base + ".report.json"))
        sk = rep["stages"]["sink"]["counters"]
        h = rep["stages"]["stats"].get("histograms", {}).get("latency_seconds", {})
        c["metrics_lat_ns"] = {k: h[k] * 1e9 for k in ("p50", "p99", "p999") if k in h}
        c["sink_published"] = sk["published"]
        if c["received"] != sk["published"] or c["lost"] != 0:
            print("B16: round %s %s: the consumer received %d of %d published, lost %d"
                  % (r, mode, c["received"], sk["published"], c["lost"]))
            bad += 1
    by.setdefault(mode, []).append(c)

def med(xs):
    return statistics.median(xs) if xs else float("nan")

anc = by.get("anchor", [])
hz = med([a["tsc_hz"] for m in by for a in by[m]])
ns = lambda cyc: cyc * 1e9 / hz
a50 = med([a["line_to_read"]["p50"] for a in anc])
print()
print("B16: TSC %.1f MHz; %d round(s); cycles (ns); median over rounds of each run's quantile; "
      "min-max over rounds in brackets" % (hz / 1e6, len(anc)))
fmt = "%-34s %22s %22s %22s %10s"
print(fmt % ("case", "p50", "p99", "p99.9", "samples"))

def row(name, runs, key, scale=1.0):
    if not runs:
        return None
    out = {}
    cells = []
    for q in ("p50", "p99", "p999"):
        v = [x[key][q] * scale for x in runs]
        out[q] = med(v)
        cells.append("%.0f (%.0f ns) [%.0f-%.0f]" % (med(v), ns(med(v)), min(v), max(v)))
    smp = med([x[key]["n"] for x in runs])
    print(fmt % (name, cells[0], cells[1], cells[2], "%d" % smp))
    return out

res = {}
res["anchor"] = row("anchor: cache line CPU %s->%s" % (wcpu, ccpu), anc, "line_to_read")
for mode in ("spin", "wait"):
    rs = by.get(mode, [])
    if not rs:
        continue
    res[mode + ".rx_to_read"] = row("%s: rx_tsc -> read" % mode, rs, "rx_to_read")
    res[mode + ".pub_to_read"] = row("%s: publish -> read" % mode, rs, "pub_to_read")
    if mode == "spin":
        res["spin.next_cost"] = row("spin: lcpshm_next() per message", rs, "next_cost")
    ml = [x["metrics_lat_ns"] for x in rs if x["metrics_lat_ns"]]
    if ml:
        cells = ["%.0f ns" % med([m[q] for m in ml]) for q in ("p50", "p99", "p999")]
        print(fmt % ("%s: rx_tsc -> metrics (in lcpipe)" % mode, cells[0], cells[1], cells[2], "(histogram)"))
        res[mode + ".metrics"] = {q: med([m[q] for m in ml]) for q in ("p50", "p99", "p999")}
print()
for mode in ("spin", "wait"):
    k = mode + ".pub_to_read"
    if res.get(k) and res.get("anchor"):
        print("%s: publish -> read p50 / anchor p50 = %.2f" % (mode, res[k]["p50"] / res["anchor"]["p50"]))
for k, v in res.items():
    if v is None:
        continue
    unit = "ns" if k.endswith(".metrics") else "cycles"
    d = {"bench": "B16", "case": k, "unit": unit, "tsc_hz": hz, "rate": rate, "messages": n,
         "worker_cpu": int(wcpu), "consumer_cpu": int(ccpu), "rounds": len(anc)}
    d.update({q: round(x, 1) for q, x in v.items()})
    if k.endswith("pub_to_read") and res.get("anchor"):
        d["ratio_p50_to_anchor"] = round(v["p50"] / res["anchor"]["p50"], 3)
    print(json.dumps(d))
sys.exit(1 if bad else 0)
PY
[ "$failed" = 0 ] || { echo "B16: $failed run(s) or check(s) failed"; exit 1; }
exit 0
