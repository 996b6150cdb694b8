#!/bin/bash
# Run every pair of conf/ab/PAIRS under `lcpipe ab` and print one markdown table
# (the "Results" of doc/ab-testing.md and B10 of doc/benchmarks.md).
# usage: tests/bench/ab_all.sh [LCPIPE] [OUTDIR]   (from the top of a built tree)
# Knobs: AB_RUNS (default 5), AB_DURATION (seconds per run, default 2),
#        AB_ONLY (a grep -E pattern on the PAIRS line, default: all),
#        AB_RETRIES (noise-gate repeats per run, default 3).
set -u
top=$(cd "$(dirname "$0")/../.." && pwd)
lcpipe=${1:-$top/framework/lcpipe}
out=${2:-$(mktemp -d /tmp/lcpipe-ab-all.XXXXXX)}
runs=${AB_RUNS:-5}
dur=${AB_DURATION:-2}
mkdir -p "$out"
echo "ab_all: $(date -u +%FT%TZ), $(nproc) CPUs, load $(cut -d' ' -f1-3 /proc/loadavg), runs $runs x ${dur}s, results in $out"
n=0
while read -r a b rest; do
	case $a in '' | '#'*) continue ;; esac
	[ -n "${AB_ONLY:-}" ] && ! printf '%s %s\n' "$a" "$b" | grep -Eq "$AB_ONLY" && continue
	n=$((n + 1))
	echo "== pair $n: $a vs $b"
	"$lcpipe" ab "$top/conf/ab/$a" "$top/conf/ab/$b" --runs "$runs" --duration "$dur" --retries "${AB_RETRIES:-3}" \
		--json "$out/pair$n.json" --svg "$out/pair$n.svg" >"$out/pair$n.txt" 2>&1 ||
		{ echo "ab_all: pair $n failed (exit $?), see $out/pair$n.txt"; tail -5 "$out/pair$n.txt"; }
done <"$top/conf/ab/PAIRS"
python3 - "$out" <<'PY'
import glob, json, os, sys
out = sys.argv[1]
want = ["delivered_per_s", "lat_p50", "lat_p99", "rss", "cpu"]
def fmt(v, unit):
    if v is None: return "–"
    if unit in ("msgs/s", "pkts/s", "objs/s") or unit.endswith("/s"):
        return "%.3f M" % (v / 1e6) if v >= 1e5 else "%.1f k" % (v / 1e3)
    if abs(v) >= 1000: return "%.0f" % v
    return "%.3g" % v
print("\n| pair (A → B) | metric | A median | B median | B/A median | B/A min–max | noisy runs |")
print("|---|---|---|---|---|---|---|")
for f in sorted(glob.glob(os.path.join(out, "pair*.json")), key=lambda p: int(os.path.basename(p)[4:-5])):
    j = json.load(open(f))
    pa = os.path.basename(j["a"].get("config", j["a"].get("name", "A")))
    pb = os.path.basename(j["b"].get("config", j["b"].get("name", "B")))
    first = True
    for m in j["metrics"]:
        mid = m["id"]
        if not (mid in ("delivered_per_s", "cpu_s", "max_rss_kib") or mid.startswith("cycles_per_obj.lcore")
                or mid.startswith("lat_p50_ns") or mid.startswith("lat_p99_ns")):
            continue
        r = m["ratio_b_over_a"]
        print("| %s | %s (%s) | %s | %s | %s | %s–%s | %s |" % (
            ("%s → %s" % (pa, pb)) if first else "", m["label"], m["unit"],
            fmt(m["a"]["median"], m["unit"]), fmt(m["b"]["median"], m["unit"]),
            "%.3f" % r["median"] if r["median"] is not None else "–",
            "%.3f" % r["min"] if r["min"] is not None else "–", "%.3f" % r["max"] if r["max"] is not None else "–",
            j.get("noisy_runs", "?") if first else ""))
        first = False
PY
