#!/bin/bash
# B13 — the free wire (doc/benchmarks.md "B13"): B12's receiving pipeline
# (port_ethdev -> tcp -> ws -> metrics -> sink_null, one worker lcore) fed by
# a second lcpipe process over DPDK net_memif (shared-memory rings, no
# syscalls: the stand-in for a NIC PMD on a machine without one), measured
# against kernel anchors in the same run. Root only (a network namespace);
# SKIP (77) otherwise.
#
# Cases, per size, every round (order of sizes and cases rotated per round):
#   kernel_min  netns lcpb13-PID, loopback: b12_feed_server (CPU $B13_SERVER_CPU)
#               streams text frames to b12_kernel_client --scan fixed --hash mix
#               (CPU $B13_CLIENT_CPU): recv() + a parser that knows the layout
#   kernel      the same with the client's metrics-like tick scan and hash
#   lcpipe_feed receiver lcpipe (EAL --lcores=0@S,1@C): port_ethdev
#               (net_memif0 role=server) + tcp 10.99.0.2 + ws + metrics +
#               sink_null on lcore 1 (the client's CPU); sender lcpipe (EAL
#               --lcores=0@S,1@S, both on the server's CPU): net_memif0
#               role=client + tcp 10.99.0.1 + feedsim formatting every tick
#               (sizes "SIZE:1"), started once the sampler has its first sample
#   lcpipe_replay  the same with feedsim prerender: the stream rendered at init
#               in b12_feed_server's shape and sizes (the same bytes as the
#               kernel cases get: text frames, symbols round robin) and sent by
#               copies, so the sender is never the bottleneck
# Every run streams COUNT = B13_MB*10^6 / frame bytes messages, then a close 1000.
#
# Figures:
#   kernel: the client's getrusage user+sys x the TSC rate / messages ("cyc"),
#     and client + server ("+srv": on loopback the receive path runs partly in
#     softirq inside the sender's send()); messages/s = messages / the server's
#     wall time from its first send to the client's close
#   lcpipe: the receiver's worker on-CPU busy cycles / messages over a window
#     sampled by b12_report.py sample (telemetry /lcpipe/stats and the thread's
#     /proc schedstat before the sender starts and after the feed's close):
#     on-CPU time x busy / (busy + idle) of the engine's TSC accounting, as B12
#     does, so time the worker was preempted (this VM runs other work) is not
#     counted; "wall busy": the report's lcores.1.busy_cycles (TSC cycles of the
#     turns that did work, the whole run, preemption included) / metrics msgs;
#     "+srv" adds the sender's report busy cycles; messages/s = metrics' own
#     rate over (first burst, last burst], from its stop line.
#   ratios: per round, lcpipe cyc / kernel_min cyc and / kernel cyc (receivers
#     alone); medians over rounds.
# Then one lcpipe_replay receiver run per size with engine.stage_timing (each
# stage's own cycles per message, b12_report.py timing), and (B13_CG=1,
# valgrind present) one per size under callgrind (--toggle-collect=
# lcp_worker_main; an idle dump before the sender starts, a stream dump after
# its close; b12_report.py cg splits it per stage, empty turns removed).
#
# The receiver's ws has no pings, no stale watchdog, check_utf8 $B13_CHECK_UTF8
# (the kernel client checks no UTF-8, B12's lcpipe got binary frames);
# reconnect_min_ms 1000, so a reconnect after the feed's close comes after the
# script has stopped both ends. Its first SYN goes out before the sender
# (memif client) is up and is lost: TCP's retransmission connects (~1-3 s).
#
# Knobs: B13_ROUNDS (5), B13_SIZES ("64 1024"), B13_CASES ("kernel_min kernel
# lcpipe_feed lcpipe_replay"), B13_MB (96), B13_SYMBOLS (100), B13_SERVER_CPU
# (0), B13_CLIENT_CPU (1), B13_CC (cubic), B13_CHECK_UTF8 (false), B13_TIMING
# (1), B13_TRUST (true: port_ethdev trust_checksums on both memif ports, a
# link that cannot corrupt a frame; false: the tcp stages verify), B13_TCP_OPTS
# (more options of the receiver's tcp stage, JSON members: '"rx_coalesce": false'),
# B13_CG (1), B13_CG_MB (8), B13_CG_IDLE (0.5 s), B13_KEEP=1 (keep the work
# directory), BENCH_NICE, LCPIPE.
set -eu
. "$(dirname "$0")/common.sh"
# shellcheck disable=SC2034 # read by bench_header
BENCH_RT=0

: "${B13_ROUNDS:=5}"
: "${B13_SIZES:=64 1024}"
: "${B13_CASES:=kernel_min kernel lcpipe_feed lcpipe_replay}"
: "${B13_MB:=96}"
: "${B13_SYMBOLS:=100}"
: "${B13_SERVER_CPU:=0}"
: "${B13_CLIENT_CPU:=1}"
: "${B13_CC:=cubic}"
: "${B13_CHECK_UTF8:=false}"
: "${B13_TRUST:=true}"
: "${B13_TCP_OPTS:=}"
tcp_more=${B13_TCP_OPTS:+, $B13_TCP_OPTS}
: "${B13_CG:=1}"
: "${B13_CG_MB:=8}"
: "${B13_CG_IDLE:=0.5}"
: "${B13_WS_BURST:=0}"
if [ "$B13_WS_BURST" -gt 0 ]; then
	WS_IN_LINK="{\"from\": \"tcp.data\", \"to\": \"ws.in\", \"burst\": $B13_WS_BURST}"
else
	WS_IN_LINK='"tcp.data -> ws.in"'
fi
: "${VALGRIND:=$(command -v valgrind || true)}"
REP12=$HERE/b12_report.py
# b12_report.py labels every JSON line with the port driver: here net_memif
export B12_DRIVER=memif
REP=$HERE/b13_report.py

bench_need_cpus 2
[ "$(id -u)" = 0 ] || { echo "SKIP: B13 needs root (a network namespace)"; exit 77; }
for t in ip taskset; do
	command -v "$t" >/dev/null || { echo "SKIP: no $t (Debian: iproute2, util-linux)"; exit 77; }
done
[ -x "$PY" ] || { echo "SKIP: no /usr/bin/python3"; exit 77; }
bench_feed_progs B13 b13 "$B13_SERVER_CPU" "$B13_CLIENT_CPU"
"$LCPIPE" describe feedsim 2>/dev/null | grep -q prerender || { echo "B13: lcpipe finds no feedsim with prerender"; exit 1; }

bench_header B13 "the free wire: rx -> tcp -> ws -> metrics -> sink fed by a second lcpipe over net_memif vs kernel TCP on loopback"
tmp=$(mktemp -d /tmp/lcpb13.XXXXXX)
NS=lcpb13-$$
PORT=9713
PIDS=""
cleanup() {
	# shellcheck disable=SC2086 # PIDS: a list of numbers
	bench_stop_pids 50 $PIDS
	ip netns del "$NS" 2>/dev/null || true
	rm -f "$tmp"/*.sock
	if [ "${B13_KEEP:-0}" = 1 ]; then
		echo "B13_KEEP=1: keeping $tmp"
	else
		rm -rf "$tmp"
	fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM

ip netns add "$NS" || { echo "SKIP: cannot create a network namespace"; exit 77; }
ip netns exec "$NS" sysctl -qw net.ipv6.conf.default.disable_ipv6=1 net.ipv6.conf.all.disable_ipv6=1
ip -n "$NS" link set lo up

TSC_HZ=$(taskset -c "$B13_CLIENT_CPU" "$KC" --calibrate | sed -n 's/.*"tsc_hz":\([0-9]*\).*/\1/p')
count_of() { echo $(($2 * 1000000 / ($1 + ($1 < 126 ? 2 : 4)))); }
S=$B13_SERVER_CPU
C=$B13_CLIENT_CPU
echo "tsc:     $TSC_HZ Hz (calibrated against CLOCK_MONOTONIC_RAW)"
echo "placement: kernel: feed server CPU $S, client CPU $C (taskset), netns $NS, 127.0.0.1:$PORT (lo, MTU $(ip -n "$NS" -o link show lo | sed -n 's/.* mtu \([0-9]*\).*/\1/p')), congestion control $B13_CC"
echo "           lcpipe sender EAL --lcores=0@$S,1@$S (port, tcp, feedsim on lcore 1 = CPU $S); receiver EAL --lcores=0@$S,1@$C"
echo "           (port, tcp, ws, metrics, sink on lcore 1 = CPU $C); net_memif0 over a unix socket in $tmp"
echo "           port_ethdev trust_checksums: $B13_TRUST on both memif ports (B13_TRUST); receiver tcp options: defaults${B13_TCP_OPTS:+ and $B13_TCP_OPTS}; ws check_utf8: $B13_CHECK_UTF8"
for s in $B13_SIZES; do
	echo "feed:    $s-byte text messages: $(count_of "$s" "$B13_MB") per run ($B13_MB MB of frames), $B13_SYMBOLS symbols"
done
if [ "$(cat /proc/sys/kernel/sched_autogroup_enabled 2>/dev/null || echo 0)" = 1 ]; then
	echo "sched:   autogroup on: nice $BENCH_NICE acts only within this session; other sessions' tasks share the CPUs fairly"
fi
echo "start:   $(date -u '+%Y-%m-%d %H:%M:%S UTC'); load $(cut -d' ' -f1-3 /proc/loadavg)"

export RUNTIME_DIRECTORY=$tmp/rt
mkdir -p "$RUNTIME_DIRECTORY"
N=0
# lc_confs CASE SIZE COUNT BASE [timing|cg]: BASE.snd.json and BASE.rcv.json
lc_confs() {
	local cs=$1 size=$2 count=$3 base=$4 how=${5:-} sock fs timing=false rmin=1000
	N=$((N + 1))
	sock=$tmp/m$N.sock
	fs="\"sizes\": \"$size:1\", \"symbols\": $B13_SYMBOLS, \"count\": $count"
	[ "$cs" = lcpipe_replay ] && fs="$fs, \"prerender\": true"
	[ "$how" = timing ] && timing=true
	cat >"$base.snd.json" <<JSON
{ "name": "B13 sender $cs",
  "eal": ["--no-huge", "--no-pci", "--no-shconf", "-m", "256", "--lcores=0@$S,1@$S", "--file-prefix=lcpb13s-$$-$N",
          "--vdev=net_memif0,role=client,socket=$sock", "--log-level=lib.eal:error"],
  "engine": {"duration": 900, "drain_timeout": 1.0},
  "stages": [
    {"name": "port", "plugin": "port_ethdev", "lcore": 1, "options": {"device": "net_memif0", "trust_checksums": $B13_TRUST}},
    {"name": "tcp", "plugin": "tcp", "lcore": 1, "options": {"ip": "10.99.0.1/24", "device": "net_memif0"}},
    {"name": "feed", "plugin": "feedsim", "lcore": 1, "options": {"listen": 8080, $fs}}],
  "links": ["port.rx -> tcp.rx", "tcp.tx -> port.tx", "tcp.data -> feed.in", "feed.tx -> tcp.app"] }
JSON
	cat >"$base.rcv.json" <<JSON
{ "name": "B13 receiver $cs",
  "eal": ["--no-huge", "--no-pci", "--no-shconf", "-m", "256", "--lcores=0@$S,1@$C", "--file-prefix=lcpb13r-$$-$N",
          "--vdev=net_memif0,role=server,socket=$sock", "--log-level=lib.eal:error"],
  "engine": {"duration": 900, "drain_timeout": 1.0, "stage_timing": $timing},
  "stages": [
    {"name": "port", "plugin": "port_ethdev", "lcore": 1, "options": {"device": "net_memif0", "trust_checksums": $B13_TRUST}},
    {"name": "tcp", "plugin": "tcp", "lcore": 1, "options": {"ip": "10.99.0.2/24", "device": "net_memif0"$tcp_more}},
    {"name": "ws", "plugin": "ws", "lcore": 1,
     "options": {"url": "ws://10.99.0.1:8080/b13", "subscribe": "b13 subscribe", "ping_interval_ms": 0,
                 "stale_timeout_ms": 0, "handshake_timeout_ms": 60000, "check_utf8": $B13_CHECK_UTF8,
                 "reconnect_min_ms": $rmin, "reconnect_max_ms": $rmin, "reconnect_jitter": false}},
    {"name": "metrics", "plugin": "metrics", "lcore": 1, "options": {"log_buckets": false}},
    {"name": "sink", "plugin": "sink_null", "lcore": 1}],
  "links": ["port.rx -> tcp.rx", "tcp.tx -> port.tx", $WS_IN_LINK, "ws.tx -> tcp.app",
            "ws.msg -> metrics.in", "metrics.out -> sink.msg"] }
JSON
}

# wait_log FILE REGEX SECONDS PID: 0 once REGEX is in FILE; 1 on timeout or when PID is gone
wait_log() {
	local n=$(($3 * 20))
	while [ $n -gt 0 ]; do
		grep -Eq -- "$2" "$1" 2>/dev/null && return 0
		kill -0 "$4" 2>/dev/null || { grep -Eq -- "$2" "$1" 2>/dev/null; return $?; }
		sleep 0.05
		n=$((n - 1))
	done
	return 1
}

# stop PID: SIGTERM, wait; its status
stop() {
	kill -TERM "$1" 2>/dev/null || true
	wait "$1"
}

# start_sender BASE -> SND_PID, once it runs (prerender: after rendering)
start_sender() {
	nice -n "$BENCH_NICE" "$LCPIPE" run "$1.snd.json" --no-live --report "$1.snd.report.json" >"$1.snd.log" 2>&1 </dev/null &
	SND_PID=$!
	PIDS="$PIDS $SND_PID"
	wait_log "$1.snd.log" '^\[lcpipe\] running' 120 "$SND_PID" && return 0
	echo "B13: the sender did not start: $(tail -n 5 "$1.snd.log")"
	return 1
}

# run_one SIZE CASE BASE: one run; 0 = ok
run_one() {
	local size=$1 cs=$2 base=$3 rc=0 count rp opt=()
	count=$(count_of "$size" "$B13_MB")
	case $cs in
	kernel | kernel_min)
		rm -f "$base.ready"
		ip netns exec "$NS" nice -n "$BENCH_NICE" taskset -c "$S" "$SRV" --listen "127.0.0.1:$PORT" --size "$size" \
			--count "$count" --symbols "$B13_SYMBOLS" --opcode text --ready-file "$base.ready" --cc "$B13_CC" \
			--timeout-ms 60000 >"$base.server.json" 2>"$base.server.err" </dev/null &
		SRV_PID=$!
		PIDS="$PIDS $SRV_PID"
		for _ in $(seq 500); do [ -e "$base.ready" ] || ! kill -0 "$SRV_PID" 2>/dev/null && break; sleep 0.02; done
		[ "$cs" = kernel_min ] && opt=(--scan fixed --hash mix)
		ip netns exec "$NS" nice -n "$BENCH_NICE" taskset -c "$C" "$KC" --connect "127.0.0.1:$PORT" --tsc-hz "$TSC_HZ" \
			"${opt[@]}" >"$base.client.json" 2>"$base.client.err" </dev/null || rc=$?
		wait "$SRV_PID" || rc=$((rc + 100))
		[ $rc = 0 ] && return 0
		echo "B13: $cs at $size B failed ($rc): $(cat "$base.client.err" "$base.server.err" 2>/dev/null | head -5)"
		return 1
		;;
	esac
	SND_PID=
	lc_confs "$cs" "$size" "$count" "$base" "${4:-}"
	# the receiver first (memif server); the sampler takes its first sample
	# and creates BASE.go, then the sender is started (memif client); the
	# window's end: the feed's close 1000, which follows its last message
	nice -n "$BENCH_NICE" "$LCPIPE" run "$base.rcv.json" --no-live --report "$base.report.json" >"$base.log" 2>&1 </dev/null &
	rp=$!
	PIDS="$PIDS $rp"
	wait_log "$base.log" 'server closed with 1000' 900 "$rp" &
	wp=$!
	PIDS="$PIDS $wp"
	nice -n "$BENCH_NICE" taskset -c "$S" "$PY" "$REP12" sample --sock-dir "$RUNTIME_DIRECTORY/dpdk/lcpb13r-$$-$N" \
		--pid "$rp" --server-pid "$wp" --go-file "$base.go" --out "$base.sample.json" >"$base.sample.err" 2>&1 &
	sp=$!
	PIDS="$PIDS $sp"
	for _ in $(seq 1200); do [ -e "$base.go" ] || ! kill -0 "$sp" 2>/dev/null && break; sleep 0.05; done
	if [ -e "$base.go" ] && start_sender "$base"; then
		wait "$wp" || rc=1
	else
		rc=1
		kill -TERM "$wp" 2>/dev/null || true
		wait "$wp" 2>/dev/null || true
	fi
	wait "$sp" || rc=$((rc + 1000))
	[ -n "${SND_PID:-}" ] && { stop "$SND_PID" || rc=$((rc + 10)); }
	stop "$rp" || rc=$((rc + 100))
	SND_PID=
	if [ $rc != 0 ] || ! [ -s "$base.report.json" ] || ! [ -s "$base.snd.report.json" ]; then
		echo "B13: $cs at $size B failed ($rc); sampler: $(head -c 300 "$base.sample.err") $(head -c 300 "$base.sample.json" 2>/dev/null)"
		echo "     receiver log, last 10 lines:"
		tail -n 10 "$base.log"
		echo "     sender log, last 5 lines:"
		tail -n 5 "$base.snd.log" 2>/dev/null
		return 1
	fi
	return 0
}

# run_again SIZE CASE BASE [timing|cg]: run_one, and once more when an lcpipe
# run failed: DPDK 22.11's memif can fault the process that still polls when its
# peer disconnects (doc/architecture.md, Known limits), after the window
run_again() {
	run_one "$@" && return 0
	case $2 in kernel | kernel_min) return 1 ;; esac
	echo "B13: $2 at $1 B: running it again"
	rm -f "$3".*
	run_one "$@"
}

echo "+ ip netns exec $NS taskset -c $S $(basename "$SRV") --listen 127.0.0.1:$PORT --size SIZE --count N --symbols $B13_SYMBOLS --opcode text --cc $B13_CC"
echo "+ ip netns exec $NS taskset -c $C $(basename "$KC") --connect 127.0.0.1:$PORT --tsc-hz $TSC_HZ [--scan fixed --hash mix]"
echo "+ lcpipe run R.rcv.json --no-live --report R.report.json       (port ... sink, memif server)"
echo "+ b12_report.py sample --sock-dir \$RUNTIME_DIRECTORY/dpdk/PREFIX --pid RECEIVER_PID --server-pid WAITER_PID --go-file R.go --out R.sample.json"
echo "+ lcpipe run R.snd.json --no-live --report R.snd.report.json   (feedsim [prerender], memif client; started on R.go)"
echo "  (both stopped after the feed's close 1000 in the receiver's log, which ends the waiter and the window)"
: >"$tmp/runs.tsv"
t_start=$(date +%s)
read -r -a CASES <<<"$B13_CASES"
read -r -a SIZES <<<"$B13_SIZES"
failed=0
for r in $(seq 1 "$B13_ROUNDS"); do
	for zi in $(seq 0 $((${#SIZES[@]} - 1))); do
		size=${SIZES[$(((zi + r - 1) % ${#SIZES[@]}))]}
		for ci in $(seq 0 $((${#CASES[@]} - 1))); do
			cs=${CASES[$(((ci + r - 1) % ${#CASES[@]}))]}
			base=$tmp/r$r.$size.$cs
			if run_again "$size" "$cs" "$base"; then
				printf '%s\t%s\t%s\t%s\n' "$r" "$size" "$cs" "$base" >>"$tmp/runs.tsv"
			else
				failed=$((failed + 1))
			fi
		done
	done
	printf 'round %d of %d done (%ds; load %s)\n' "$r" "$B13_ROUNDS" $(($(date +%s) - t_start)) "$(cut -d' ' -f1 /proc/loadavg)"
done
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg); $(($(date +%s) - t_start)) s"
"$PY" "$REP" "$tmp/runs.tsv" "$TSC_HZ" || failed=$((failed + 1))

# ---- per stage, natively: engine.stage_timing ----
if [ "${B13_TIMING:-1}" = 1 ]; then
	echo
	echo "==== B13 per stage: the lcpipe_replay receiver with engine.stage_timing, one run per size"
	: >"$tmp/timing.tsv"
	for size in $B13_SIZES; do
		base=$tmp/timing.$size
		if run_again "$size" lcpipe_replay "$base" timing; then
			printf '%s\t%s\t%s\n' "$size" "$base" replay >>"$tmp/timing.tsv"
		else
			failed=$((failed + 1))
		fi
	done
	"$PY" "$REP12" timing "$tmp/timing.tsv" "$TSC_HZ" --bench B13 || failed=$((failed + 1))
fi

# ---- callgrind: instructions per message per stage ----
# The receiver under callgrind, collecting inside lcp_worker_main only: once
# it runs, the sender is started and the counts zeroed; after the feed's close
# the sender is stopped and the stream dumped ("stream"), then B13_CG_IDLE s
# of idle polling (no connection; the ws stage's one reconnect, 1 s after the
# close, falls at most at its end) are dumped ("idle"), whose cost per empty
# turn b12_report.py cg removes from the stream's empty turns. feedsim has no
# go file, so the idle sample comes after the stream. valgrind runs with
# --fair-sched=yes: memif's control messages are handled by an EAL thread
# that valgrind's default scheduling starves while the worker polls.
CGCTL=$(command -v callgrind_control || true)
if [ "$B13_CG" = 1 ] && [ -n "$VALGRIND" ] && [ -x "$VALGRIND" ] && [ -n "$CGCTL" ] && [ -x "$LIBTOOL" ]; then
	echo
	echo "==== B13 callgrind: the lcpipe_replay receiver under valgrind --tool=callgrind --toggle-collect=lcp_worker_main, $B13_CG_MB MB of frames per size"
	for size in $B13_SIZES; do
		base=$tmp/cg.$size
		count=$(count_of "$size" "$B13_CG_MB")
		lc_confs lcpipe_replay "$size" "$count" "$base" cg
		echo "+ libtool --mode=execute $VALGRIND --tool=callgrind --fair-sched=yes --toggle-collect=lcp_worker_main lcpipe run cg.$size.rcv.json ($size B, $count messages)"
		"$LIBTOOL" --mode=execute "$VALGRIND" --tool=callgrind --fair-sched=yes --callgrind-out-file="$base.cg.out" \
			--toggle-collect=lcp_worker_main "$LCPIPE" run "$base.rcv.json" --no-live \
			--report "$base.report.json" >"$base.log" 2>&1 </dev/null &
		lp=$!
		PIDS="$PIDS $lp"
		rc=0
		SND_PID=
		if wait_log "$base.log" '^\[lcpipe\] running' 300 "$lp" && start_sender "$base"; then
			"$CGCTL" -z "$lp" >/dev/null 2>&1
			wait_log "$base.log" 'server closed with 1000' 900 "$lp" || rc=1
			stop "$SND_PID" || rc=1
			"$CGCTL" -d stream "$lp" >/dev/null 2>&1
			sleep "$B13_CG_IDLE"
			"$CGCTL" -d idle "$lp" >/dev/null 2>&1
			cp "/proc/$lp/maps" "$base.maps" 2>/dev/null || true
		else
			[ -n "$SND_PID" ] && stop "$SND_PID"
			rc=1
		fi
		stop "$lp" || rc=1
		bench_lc_cg B13 "$base" "$size" "$rc" || { failed=$((failed + 1)); continue; }
		"$PY" "$REP12" cg "$stream" "$msgs" "$segs" "$base.maps" "$idle" "$bursts" --bench B13 |
			sed -e "s/\"case\": \"callgrind\"/\"case\": \"callgrind.lcpipe_replay.$size\"/" || failed=$((failed + 1))
	done
else
	echo "callgrind part skipped (B13_CG=$B13_CG, valgrind '${VALGRIND:-}', callgrind_control '${CGCTL:-}')"
fi
[ "$failed" = 0 ] || { echo "B13: $failed run(s) or check(s) failed"; exit 1; }
exit 0
