#!/bin/bash
# `lcpipe ab` (framework/ab/), the A/B harness, end to end:
#  (a) two demo configs (conf/demo.json's pipeline; B measures with
#      metrics_naive, the measurement control), 2 runs each, 0.5 s (LCP_TEST_AB_DURATION): exit 0, a table
#      on stdout, the JSON and SVG under their default names in the current
#      directory; abcheck.py checks
#      both configs, 2 runs each, the gate records against the noisy flags, the
#      metrics (throughput, cycles per message, latency p50/p99/p99.9, CPU, RSS,
#      the ws and tcp pools' peaks) with medians and per-pair ratios recomputed
#      from the runs, the SVG parsed as XML naming every metric with one dot per
#      run value;
#  (b) the noise gate at 0 %: every run repeated once, then kept flagged noisy
#      (two lcores and a ring, engine.stage_timing on: per-lcore and per-stage
#      cycles and the ring's high-water);
#  (c) an invalid config: exit 78 before anything runs, naming the file and the
#      JSON path of the error; both configs reported when both are bad;
#  (d) a config that passes check but whose run fails (a port on an ethdev that
#      does not exist): ab exits 1 naming the run's log, which is kept and says why;
#  (e) usage errors exit 2.
# Nothing here asserts a timing: which config is faster is not checked. Every
# run must deliver messages, though: LCP_TEST_AB_DURATION (seconds, 0.5 by
# default) lengthens the runs where the demo's handshakes take longer (2 s under
# the sanitizers, tests/sanitizers.mk).
. "$(dirname "$0")/lib.sh"

need_plugins tcp ws feedsim metrics
export TMPDIR=$T # ab's run directories (kept on failure) stay inside $T
AB_S=${LCP_TEST_AB_DURATION:-0.5}

# abrun TAG ARGS...: lcpipe ab ARGS in $T, bounded; sets RC, OUT, ERR
abrun() {
	local tag=$1
	shift
	OUT=$T/$tag.out
	ERR=$T/$tag.err
	say "+ lcpipe ab $*"
	(cd "$T" && timeout -k 5 120 "$LCPIPE" ab "$@" >"$OUT" 2>"$ERR" </dev/null)
	RC=$?
	[ "$RC" -eq 124 ] || [ "$RC" -eq 137 ] && fail "$tag: lcpipe ab did not finish within 120 s"
	return 0
}

abcheck() {
	if "$PYTHON3" "$RUN_SRC/abcheck.py" "$@"; then
		ok "abcheck $(basename "$1")"
	else
		fail "abcheck $(basename "$1") (above)"
		show_run
	fi
}

step "(a) demo vs demo with metrics_naive, 2 runs each"
mkconf ab-demo.json "$T/a.json" METRICS=metrics DURATION=$AB_S
mkconf ab-demo.json "$T/b.json" METRICS=metrics_naive DURATION=$AB_S
abrun pair "$T/a.json" "$T/b.json" --runs 2 --retries 0
expect_rc 0 "ab on two valid configs"
expect_grep "$OUT" '^msgs/s delivered +[0-9.]+ [kM]? +[0-9.]+ [kM]? +[0-9.]+ ' "the table has the throughput row"
expect_grep "$OUT" '^latency p99\.9 \(stats\) ' "the table has the metrics stage's p99.9"
expect_grep "$OUT" '^lcore 1 cycles/msg ' "the table has the lcore's cycles per message"
expect_grep "$OUT" '^metric +A median +B median +B/A +B/A min-max +verdict$' "the table has a verdict column"
expect_grep "$OUT" '^drops \(all stages\) +0 +0 +- +- +0 in both: nothing to judge$' "zeros in both: no ratio, said why"
expect_grep "$OUT" '^pool .* peak in use .* - +- +sampled at stats ticks: not judged$' "sampled peaks: no ratio, said why"
expect_grep "$OUT" '^verdict: B better / B worse when every pair' "the verdict is explained"
expect_nogrep "$OUT" '(B better|B worse|unclear).*(sampled|0 in both)' "no verdict on a row that is not judged"
expect_grep "$ERR" '^\[ab\] run A1/2 ' "progress: A1 ran"
expect_grep "$ERR" '^\[ab\] run B2/2 ' "progress: B2 ran"
if [ "$(grep -n '^\[ab\] run [AB][12]/2 ' "$ERR" | grep -v 'repeating' | sed 's/.*run \([AB][12]\).*/\1/' | tr -d '\n')" = A1B1A2B2 ]; then
	ok "runs interleaved A1 B1 A2 B2"
else
	fail "runs not interleaved ABAB"
	show_run
fi
abcheck "$T/ab-a-vs-b.json" "$T/ab-a-vs-b.svg" --a "$T/a.json" --b "$T/b.json" --runs 2 \
	--retries 0 --tol 0.10 \
	--metric delivered_per_s --metric cycles_per_obj.lcore1 --metric lat_p50_ns.stats \
	--metric lat_p99_ns.stats --metric cpu_s --metric max_rss_kib \
	--metric-prefix pool_peak_in_use. --metric-prefix pool_get_fail
ls "$T"/lcpipe-ab.* >/dev/null 2>&1 && fail "the run directory was not removed after a good ab" ||
	ok "the run directory was removed"

step "(b) noise gate at 0 %: every run repeated once, kept noisy"
mkconf ab-gen.json "$T/g32.json" BURST=32 DURATION=$AB_S
mkconf ab-gen.json "$T/g8.json" BURST=8 DURATION=$AB_S
abrun gate "$T/g32.json" "$T/g8.json" --runs 1 --gate 0 --retries 1 --quiet \
	--json "$T/gate.json" --svg "$T/gate.svg"
expect_rc 0 "ab with a 0 % gate"
expect_nogrep "$ERR" '^\[ab\]' "--quiet: no progress lines"
abcheck "$T/gate.json" "$T/gate.svg" --a "$T/g32.json" --b "$T/g8.json" --runs 1 --retries 1 \
	--tol 0 --noisy-all \
	--metric delivered_per_s --metric cycles_per_obj.lcore1 --metric cycles_per_obj.lcore2 \
	--metric ring_high_water.links0 --metric stage_cycles_per_obj.gen \
	--metric stage_cycles_per_obj.sink
expect_grep "$OUT" '^lcore 1 \(gen\) cycles/pkt ' "an lcore with one stage is named by it, in packets"
expect_grep "$OUT" '^lcore 2 \(sink\) cycles/pkt ' "the sink's lcore"

step "(b2) counts under 20 in both: not judged, said so in the SVG too"
# 100 frames/s, one a poll: the ring never holds 20, so its high-water row is "too few
# (< 20) to judge" -- text with a '<' that the SVG must escape
mkconf ab-gen.json "$T/s32.json" BURST=32 DURATION=$AB_S
mkconf ab-gen.json "$T/s8.json" BURST=8 DURATION=$AB_S
sed -i 's/"rate": 200000/"rate": 100, "burst": 1/' "$T/s32.json" "$T/s8.json"
abrun slow "$T/s32.json" "$T/s8.json" --runs 1 --retries 0 --quiet --json "$T/slow.json" --svg "$T/slow.svg"
expect_rc 0 "ab of two slow feeds"
"$PYTHON3" - "$T/slow.json" "$T/slow.svg" <<'PY' && ok "the row says why, in the JSON and the well-formed SVG" ||
import json, sys
import xml.etree.ElementTree as ET
m = {m["id"]: m for m in json.load(open(sys.argv[1]))["metrics"]}["ring_high_water.links0"]
print("ring_high_water.links0:", m)
assert m.get("why") == "too few (< 20) to judge", "the row is judged"
text = "".join(ET.parse(sys.argv[2]).getroot().itertext())
assert "too few (< 20) to judge" in text, "the reason is not in the SVG"
PY
	fail "a row not judged for its small counts (above)"

step "(c) an invalid config: exit 78, nothing run"
sed 's/"log_buckets"/"log_bucket"/' "$T/b.json" >"$T/bad.json"
abrun bad "$T/a.json" "$T/bad.json" --runs 1 --json "$T/bad-out.json"
expect_rc 78 "ab with an invalid B"
expect_grep "$ERR" '^error: stages\[6\]\.options\.log_bucket: unknown option' "the error has its JSON path"
expect_grep "$ERR" "^$T/bad\\.json: 1 error" "the error count names the file"
expect_grep "$ERR" "config B \\($T/bad\\.json\\) is not valid" "ab says which config"
expect_nogrep "$ERR" '^\[ab\] run' "no run started"
[ -e "$T/bad-out.json" ] && fail "a JSON result was written for an invalid config" || ok "no JSON result"
# A invalid, B valid: freeing A (its plugins dlclosed) before loading B once
# made DPDK's driver libraries load twice and panic
abrun bad2 "$T/bad.json" "$T/b.json" --runs 1
expect_rc 78 "ab with an invalid A and a valid B"
expect_grep "$ERR" "config A \\($T/bad\\.json\\) is not valid" "A reported"
expect_nogrep "$ERR" 'PANIC|tailq' "no DPDK panic from loading plugins twice"
sed 's/"burst": @BURST@/"burst": 0/' "$RUN_SRC/conf/ab-gen.json" | sed "s|@PREFIX@|$PFX|; s|@DURATION@|0.5|" >"$T/bad2.json"
abrun bad3 "$T/bad.json" "$T/bad2.json"
expect_rc 78 "ab with both configs invalid"
expect_grep "$ERR" "config A \\($T/bad\\.json\\) is not valid" "A reported"
expect_grep "$ERR" '^error: links\[0\]\.burst: 0 is below the minimum 1' "B's error, with its JSON path"
expect_grep "$ERR" "config B \\($T/bad2\\.json\\) is not valid" "B reported too"
abrun bad4 "$T/a.json" "$T/no-such.json"
expect_rc 78 "ab with a B that does not exist"
expect_grep "$ERR" "$T/no-such\\.json: cannot open" "the missing file is named"

step "(d) a run that fails: exit 1, its log named and kept"
mkconf init-fail.json "$T/fail.json"
abrun runfail "$T/fail.json" "$T/g8.json" --runs 2 --json "$T/fail-out.json"
expect_rc 1 "ab when A's run fails"
expect_grep "$ERR" "run A1/2 \\($T/fail\\.json\\) failed: exit status 1; its output: $T/lcpipe-ab\\.[A-Za-z0-9]+/A1\\.log" "the failed run and its log are named"
log=$(sed -n 's/.*its output: \(.*\.log\)$/\1/p' "$ERR" | head -n 1)
if [ -n "$log" ] && [ -f "$log" ]; then
	ok "the log is kept: $log"
	expect_grep "$log" 'device "net_null9" not found' "the log says why the run failed"
else
	fail "the failed run's log ($log) is not there"
fi
expect_nogrep "$ERR" '^\[ab\] run B1' "nothing runs after a failure"
[ -e "$T/fail-out.json" ] && fail "a JSON result was written after a failed run" || ok "no JSON result"

step "(e) usage"
abrun u1 "$T/a.json"
expect_rc 2 "one config"
abrun u3 "$T/a.json" "$T/b.json" "$T/b.json"
expect_rc 2 "three configs"
abrun u2 "$T/a.json" "$T/b.json" --runs 0
expect_rc 2 "--runs 0"
expect_grep "$ERR" '--runs: expected an integer 1\.\.1000, got "0"' "--runs 0 is refused with the range"
finish
