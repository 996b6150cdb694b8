#!/bin/bash
# B13 scale-out (doc/benchmarks.md "B13", issue 18 item 5): shared-nothing
# lanes on one machine. conf/scaleout.json, one lcpipe process: a lane is a
# complete pipeline on one worker lcore, feedsim (prerender: the stream is
# rendered at init and replayed by copies) -> tcp -> port_ethdev ring pair
# laneN -> tcp -> ws -> metrics -> sink_null, one connection; no link crosses
# lcores (checked: the report lists no ring).
#
# Cases, interleaved A B per pair, B13S_PAIRS pairs:
#   1lane   lane 1 on lcore 1 (EAL --lcores=0@C0,1@C0)
#   2lanes  lane 1 on lcore 1 and lane 2 on lcore 2 (--lcores=0@C0,1@C0,2@C1),
#           running at once; each lane its own connection
# C0 C1 = B13S_CPUS ("0 1"). The main lcore shares C0 and sleeps in the
# control loop. Each lane runs its sender and its receiver on its lcore, so
# 2 lanes use both CPUs of this VM.
#
# Figures, per lane: messages/s = the lane's metrics rate over (first burst,
# last burst] from its stop line (MB/s x 10^6 / bytes per message); on-CPU
# share = the worker thread's on-CPU time (/proc schedstat) / wall time from
# "[lcpipe] running" to the lane's close 1000 (b13_scale.py sample).
# Per pair: ratio = (lane 1 + lane 2 of 2lanes) / 1lane; also the same ratio
# of messages per on-CPU second ("cpu-norm": what the lanes would do with a
# CPU each, whatever else this VM runs). Result: the median of per-pair
# ratios, with min, max and IQR; target >= B13S_TARGET (1.8).
# Anchors, same run, before each pair (b13_scale.py anchor, placed and
# prioritised as lcpipe): one process per CPU for B13S_ANCHOR_S s, on C0
# alone and then on C0 and C1 at once: alu, an integer loop (what the second
# CPU gives a job that shares nothing), and mem, copies of a 64 MiB buffer
# (what it gives a job bound by the memory both CPUs share); their ratios are
# computed like the lanes'. Every run
# checks each lane: metrics msgs == feedsim msgs == COUNT, ticks == msgs,
# seq_gaps 0, one session, and no ring in the report.
#
# Scheduling: with autogroup on (this VM), a session's tasks together get one
# fair share of the machine against every other session's, however many
# threads it runs, and nice acts only inside the session: 2 lanes would split
# the 1-lane case's share instead of adding a CPU. So each lcpipe runs in a
# session of its own (setsid) whose autogroup gets nice BENCH_NICE
# (/proc/PID/autogroup; B13S_AUTOGROUP=1, the default as root with autogroup
# on); B13S_AUTOGROUP=0 leaves it in this session, as the other benchmarks do.
#
# Knobs: B13S_PAIRS (9), B13S_COUNT (10000000 messages per lane), B13S_SIZE
# (64 bytes), B13S_CPUS ("0 1"), B13S_CONF (conf/scaleout.json), B13S_TARGET (1.8), B13S_ANCHOR_S (0.3; 0: no anchors), B13S_AUTOGROUP, B13S_KEEP=1 (keep the
# work directory), BENCH_NICE, LCPIPE.
set -eu
. "$(dirname "$0")/common.sh"
# shellcheck disable=SC2034 # read by bench_header
BENCH_RT=0

: "${B13S_PAIRS:=9}"
: "${B13S_COUNT:=10000000}"
: "${B13S_SIZE:=64}"
: "${B13S_CPUS:=0 1}"
: "${B13S_TARGET:=1.8}"
: "${B13S_ANCHOR_S:=0.3}"
AG_ON=$(cat /proc/sys/kernel/sched_autogroup_enabled 2>/dev/null || echo 0)
if [ -z "${B13S_AUTOGROUP:-}" ]; then
	B13S_AUTOGROUP=0
	[ "$(id -u)" = 0 ] && [ "$AG_ON" = 1 ] && B13S_AUTOGROUP=1
fi
HELP=$HERE/b13_scale.py
: "${B13S_CONF:=$HERE/../../conf/scaleout.json}"
SRC=$B13S_CONF

bench_need_cpus 2
[ -x "$PY" ] || { echo "SKIP: no /usr/bin/python3"; exit 77; }
[ -e "$LCPIPE" ] || { echo "B13s: $LCPIPE is not built"; exit 1; }
[ -e "$SRC" ] || { echo "B13s: no $SRC"; exit 1; }
"$LCPIPE" describe feedsim 2>/dev/null | grep -q prerender || { echo "B13s: lcpipe finds no feedsim with prerender"; exit 1; }
read -r C0 C1 <<<"$B13S_CPUS"
[ -n "${C1:-}" ] && [ "$C0" != "$C1" ] || { echo "B13s: B13S_CPUS needs two different CPUs"; exit 2; }

bench_header B13s "scale-out: 1 shared-nothing lane on 1 worker lcore vs 2 lanes on 2 (conf/scaleout.json)"
tmp=$(mktemp -d /tmp/lcpb13s.XXXXXX)
PIDS=""
cleanup() {
	# shellcheck disable=SC2086 # PIDS: a list of numbers
	bench_stop_pids 50 $PIDS
	if [ "${B13S_KEEP:-0}" = 1 ]; then
		echo "B13S_KEEP=1: keeping $tmp"
	else
		rm -rf "$tmp"
	fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM

echo "placement: 1lane EAL --lcores=0@$C0,1@$C0 (lane 1 on CPU $C0); 2lanes --lcores=0@$C0,1@$C0,2@$C1"
echo "           (lane 1 on CPU $C0, lane 2 on CPU $C1); the main lcore on CPU $C0 sleeps between stats lines"
echo "feed:      per lane $B13S_COUNT $B13S_SIZE-byte text messages (feedsim prerender, 100 symbols), one connection"
echo "           over its own ring pair (port_ethdev trust_checksums on both ends, as conf/scaleout.json)"
if [ "$AG_ON" = 1 ] && [ "$B13S_AUTOGROUP" = 1 ]; then
	echo "sched:     autogroup on: each lcpipe in a session of its own (setsid) with autogroup nice $BENCH_NICE (B13S_AUTOGROUP=1)"
elif [ "$AG_ON" = 1 ]; then
	echo "sched:     autogroup on: nice $BENCH_NICE acts only within this session; other sessions' tasks share the CPUs fairly,"
	echo "           and this session's share is split between the lanes (B13S_AUTOGROUP=0)"
fi
echo "start:     $(date -u '+%Y-%m-%d %H:%M:%S UTC'); load $(cut -d' ' -f1-3 /proc/loadavg)"

export RUNTIME_DIRECTORY=$tmp/rt
mkdir -p "$RUNTIME_DIRECTORY"
N=0

# run_one CASE BASE: one run; 0 = ok
run_one() {
	local cs=$1 base=$2 lanes lcores rc=0 lp wp
	N=$((N + 1))
	if [ "$cs" = 1lane ]; then
		lanes=1 lcores="0@$C0,1@$C0"
	else
		lanes=2 lcores="0@$C0,1@$C0,2@$C1"
	fi
	"$PY" "$HELP" conf "$SRC" "$base.json" "$lanes" "$B13S_COUNT" "$B13S_SIZE" "lcpb13s-$$-$N" "$lcores" || return 1
	if [ "$B13S_AUTOGROUP" = 1 ]; then
		# the autogroup's nice is set from inside the new session: written
		# from here, it could reach this session's if setsid had not run yet
		rm -f "$base.pid"
		setsid -w sh -c 'echo "$1" >/proc/self/autogroup || echo "B13s: cannot set the autogroup nice" >&2
			echo $$ >"$2.pid"; shift 2; exec "$@"' sh "$BENCH_NICE" "$base" \
			nice -n "$BENCH_NICE" "$LCPIPE" run "$base.json" --no-live --report "$base.report.json" >"$base.log" 2>&1 </dev/null &
		wp=$!
		PIDS="$PIDS $wp"
		for _ in $(seq 200); do [ -s "$base.pid" ] || ! kill -0 "$wp" 2>/dev/null && break; sleep 0.01; done
		lp=$(cat "$base.pid" 2>/dev/null || echo "$wp")
		PIDS="$PIDS $lp"
	else
		nice -n "$BENCH_NICE" "$LCPIPE" run "$base.json" --no-live --report "$base.report.json" >"$base.log" 2>&1 </dev/null &
		lp=$!
		wp=$lp
		PIDS="$PIDS $lp"
	fi
	"$PY" "$HELP" sample --pid "$lp" --log "$base.log" --lanes "$lanes" --out "$base.sample.json" --timeout 300 \
		>"$base.sample.err" 2>&1 || rc=1
	kill -TERM "$lp" 2>/dev/null || true
	wait "$wp" || rc=$((rc + 10))
	if [ $rc != 0 ] || ! [ -s "$base.report.json" ]; then
		echo "B13s: $cs failed ($rc); sampler: $(head -c 300 "$base.sample.err") $(head -c 300 "$base.sample.json" 2>/dev/null)"
		echo "      log, last 10 lines:"
		tail -n 10 "$base.log"
		return 1
	fi
	return 0
}

# anchor KIND PAIR: b13_scale.py anchor on C0 alone, then on C0 and C1 at
# once, placed and prioritised as lcpipe is; lines "PAIR KIND JSON" in anchors.tsv
anchor() {
	local cpus j
	for cpus in "$C0" "$C0 $C1"; do
		if [ "$B13S_AUTOGROUP" = 1 ]; then
			# shellcheck disable=SC2086 # cpus: one or two words
			j=$(setsid -w sh -c 'echo "$1" >/proc/self/autogroup; shift; exec "$@"' sh "$BENCH_NICE" \
				nice -n "$BENCH_NICE" "$PY" "$HELP" anchor "$1" "$B13S_ANCHOR_S" $cpus) || return 1
		else
			# shellcheck disable=SC2086
			j=$(nice -n "$BENCH_NICE" "$PY" "$HELP" anchor "$1" "$B13S_ANCHOR_S" $cpus) || return 1
		fi
		printf '%s\t%s\n' "$2" "$j" >>"$tmp/anchors.tsv"
	done
}

echo "+ b13_scale.py anchor alu|mem $B13S_ANCHOR_S $C0; b13_scale.py anchor alu|mem $B13S_ANCHOR_S $C0 $C1   (the same-run anchors)"
echo "+ b13_scale.py conf conf/scaleout.json R.json LANES $B13S_COUNT $B13S_SIZE PREFIX LCORES"
echo "+ lcpipe run R.json --no-live --report R.report.json"
echo "+ b13_scale.py sample --pid LCPIPE_PID --log R.log --lanes LANES --out R.sample.json   (then SIGTERM to lcpipe)"
: >"$tmp/runs.tsv"
: >"$tmp/anchors.tsv"
t_start=$(date +%s)
failed=0
for p in $(seq 1 "$B13S_PAIRS"); do
	if [ "$B13S_ANCHOR_S" != 0 ]; then
		anchor alu "$p" && anchor mem "$p" || { echo "B13s: the anchor failed"; failed=$((failed + 1)); }
	fi
	for cs in 1lane 2lanes; do
		base=$tmp/p$p.$cs
		if run_one "$cs" "$base"; then
			printf '%s\t%s\t%s\n' "$p" "$cs" "$base" >>"$tmp/runs.tsv"
		else
			failed=$((failed + 1))
		fi
	done
	printf 'pair %d of %d done (%ds; load %s)\n' "$p" "$B13S_PAIRS" $(($(date +%s) - t_start)) "$(cut -d' ' -f1 /proc/loadavg)"
done
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg); $(($(date +%s) - t_start)) s"
"$PY" "$HELP" summary "$tmp/runs.tsv" "$B13S_COUNT" "$B13S_TARGET" "$tmp/anchors.tsv" || failed=$((failed + 1))
[ "$failed" = 0 ] || { echo "B13s: $failed run(s) or check(s) failed"; exit 1; }
exit 0
