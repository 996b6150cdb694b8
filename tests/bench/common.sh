# shellcheck shell=bash
# common.sh — sourced by the benchmark scripts (b1.sh, b2.sh, callgrind.sh, ...).
#
# Environment (set by `make bench`, see bench.mk; defaults for running by hand
# from the build tree's tests/ directory):
#   BENCH_BUILDDIR  where bench/b1_ring_link etc. are     (default: .)
#   BENCH_REPS      repetitions per case                   (default: 11)
#   BENCH_MS        target milliseconds per repetition     (default: 10)
#   BENCH_NICE      nice level for the measured programs   (default: -19 as root, else 0)
#   BENCH_RT        1: the measured worker lcores run SCHED_FIFO 1 (--rt; other
#                   tasks cannot preempt a repetition, RT throttling leaves them 5 %)
#                   (default: 1 as root, else 0)
#   BENCH_QUIET_WAIT seconds to wait for the 1-minute load average to drop below
#                   BENCH_QUIET_LOAD (default 1.0) before measuring (default: 0)
#   BENCH_DPDK_TEST, VALGRIND  tools (default: from PATH). Not DPDK_TEST: dpdk-test
#                   takes that variable as the name of a test to run.

# does it parse (tests/kernel/tcp_lib.sh says why)
bash -n "${BASH_SOURCE[0]}" || { echo "FAIL: ${BASH_SOURCE[0]} does not parse"; exit 99; }
: "${BENCH_BUILDDIR:=.}"
: "${BENCH_REPS:=11}"
: "${BENCH_MS:=10}"
: "${BENCH_QUIET_WAIT:=0}"
: "${BENCH_QUIET_LOAD:=1.0}"
if [ -z "${BENCH_RT:-}" ]; then
	if [ "$(id -u)" = 0 ]; then BENCH_RT=1; else BENCH_RT=0; fi
fi
BENCH_RT_OPT=
# the programs and files the scripts use: lcpipe (build tree), python3, the
# script's own directory
: "${LCPIPE:=$BENCH_BUILDDIR/../framework/lcpipe}"
PY=/usr/bin/python3
# shellcheck disable=SC2034 # used by the scripts that source this file
HERE=$(cd "$(dirname "$0")" && pwd)
# shellcheck disable=SC2034 # used by the scripts that source this file
[ "$BENCH_RT" = 1 ] && BENCH_RT_OPT=--rt
if [ -z "${BENCH_NICE:-}" ]; then
	if [ "$(id -u)" = 0 ]; then BENCH_NICE=-19; else BENCH_NICE=0; fi
fi

# EAL options every benchmark uses: no hugepages, no PCI, no shared config, its
# own runtime directory name
bench_eal() { # name
	echo "--no-huge --no-pci --no-shconf -m 256 --file-prefix=lcpbench-$1-$$ --log-level=lib.eal:error"
}

bench_need_cpus() { # n
	local n
	n=$(nproc)
	if [ "$n" -lt "$1" ]; then
		echo "SKIP: needs $1 CPUs, this machine has $n"
		exit 77
	fi
}

bench_wait_quiet() {
	local t=0 l
	while :; do
		l=$(cut -d' ' -f1 /proc/loadavg)
		if awk -v l="$l" -v m="$BENCH_QUIET_LOAD" 'BEGIN { exit !(l < m) }'; then
			return 0
		fi
		if [ "$t" -ge "$BENCH_QUIET_WAIT" ]; then
			[ "$BENCH_QUIET_WAIT" -gt 0 ] &&
				echo "note: load average still $l after ${t}s; measuring anyway (the noise gate reports it)"
			return 0
		fi
		sleep 5
		t=$((t + 5))
	done
}

bench_header() { # id title
	echo "==== $1: $2"
	echo "date:    $(date -u '+%Y-%m-%d %H:%M:%S UTC')"
	echo "host:    $(uname -srm); $(nproc) CPUs; $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')"
	echo "dpdk:    $(pkg-config --modversion libdpdk 2>/dev/null || echo '?')"
	echo "load:    $(cut -d' ' -f1-3 /proc/loadavg) (1/5/15 min) before the run"
	echo "nice:    $BENCH_NICE; SCHED_FIFO for measured lcores: $BENCH_RT"
}

# run a command at the benchmark nice level, echoing it first
bench_run() {
	echo "+ $*"
	if [ "$BENCH_NICE" != 0 ]; then
		nice -n "$BENCH_NICE" "$@"
	else
		"$@"
	fi
}

# bench_stop_pids TENTHS PID...: for each process still running, SIGTERM, up to
# TENTHS tenths of a second for it to go, then SIGKILL; reap it either way
# (the scripts' cleanup traps)
bench_stop_pids() {
	local t=$1 p
	shift
	for p in "$@"; do
		if kill -0 "$p" 2>/dev/null; then
			kill -TERM "$p" 2>/dev/null || true
			for _ in $(seq "$t"); do kill -0 "$p" 2>/dev/null || break; sleep 0.1; done
			kill -KILL "$p" 2>/dev/null || true
		fi
		wait "$p" 2>/dev/null || true
	done
}

# bench_tmp: a new temporary directory in tmp, removed on exit unless BENCH_KEEP
# is set
bench_tmp() {
	tmp=$(mktemp -d)
	if [ -n "${BENCH_KEEP:-}" ]; then echo "keeping $tmp"; else trap 'rm -rf "$tmp"' EXIT; fi
}

# bench_has_valgrind: 0 when $VALGRIND runs; else says there will be no
# instruction counts
bench_has_valgrind() {
	[ -n "$VALGRIND" ] && [ -x "$VALGRIND" ] && return 0
	echo "valgrind not found: no instruction counts"
	return 1
}

# bench_callgrind DIR NAME PROG ARGS...: PROG ARGS under callgrind (pinned with
# taskset to CPU $BENCH_CG_CPU when set), its output in DIR/NAME.log; a failed
# run shows it and ends the script. Then one "case Ir" line per dump (each
# CALLGRIND_DUMP_STATS_AT("<case>"), Ir from its "summary:" line) in DIR/NAME.ir
bench_callgrind() {
	local dir=$1 name=$2 prog=$3 f
	local pin=()
	shift 2
	[ -n "${BENCH_CG_CPU:-}" ] && pin=(taskset -c "$BENCH_CG_CPU")
	echo "+ ${pin[*]:+${pin[*]} }$VALGRIND --tool=callgrind --callgrind-out-file=$dir/$name.out $*"
	"${pin[@]}" "$VALGRIND" --tool=callgrind --callgrind-out-file="$dir/$name.out" "$@" >"$dir/$name.log" 2>&1 || {
		cat "$dir/$name.log"
		echo "callgrind run of $prog failed"
		exit 1
	}
	for f in "$dir/$name.out".*; do
		awk '/^desc: Trigger: Client Request: / { c = $5 } /^summary:/ { s = $2 }
		     END { if (c != "") print c, s }' "$f"
	done >"$dir/$name.ir"
}

# bench_cg_ir IRFILE CASE: the Ir of CASE in a bench_callgrind .ir file
bench_cg_ir() {
	awk -v c="$2" '$1 == c { print $2 }' "$1"
}

# bench_lc_cg ID BASE SIZE RC: after lcpipe under callgrind (dumps "stream" and
# "idle" in BASE.cg.out.*, its report BASE.report.json, exit RC): sets stream
# and idle (the dump files), msgs, segs and bursts (from the report) and says
# them; 1 after saying the run failed
bench_lc_cg() {
	idle=$(grep -l 'Trigger: Client Request: idle\|Trigger: dump idle' "$2.cg.out".* 2>/dev/null | head -1)
	stream=$(grep -l 'Trigger: Client Request: stream\|Trigger: dump stream' "$2.cg.out".* 2>/dev/null | head -1)
	if [ "$4" != 0 ] || ! [ -s "$2.report.json" ] || [ -z "$idle" ] || [ -z "$stream" ]; then
		echo "$1: the callgrind run at $3 B failed; log: $(tail -n 5 "$2.log")"
		return 1
	fi
	read -r msgs segs bursts < <("$PY" -c 'import json,sys; r=json.load(open(sys.argv[1])); s=r["stages"]; print(s["metrics"]["counters"]["msgs"], s["tcp"]["counters"]["tcp_segs_in"], s["port"]["counters"]["rx_bursts"])' "$2.report.json")
	echo "-- $3 B: $msgs messages, $segs segments in, $bursts rx bursts with frames"
}

# bench_feed_progs ID ONLY SERVER_CPU CLIENT_CPU: SRV and KC (B12's feed server
# and kernel-socket client) and LIBTOOL; ends the script when they or LCPIPE are
# not built (make bench BENCH_ONLY=ONLY builds them) or when the server's and
# the client's CPU are the same
bench_feed_progs() {
	local f
	SRV=$BENCH_BUILDDIR/bench/b12_feed_server
	KC=$BENCH_BUILDDIR/bench/b12_kernel_client
	# shellcheck disable=SC2034 # used by the scripts that source this file
	LIBTOOL=$BENCH_BUILDDIR/../libtool
	for f in "$SRV" "$KC" "$LCPIPE"; do
		[ -e "$f" ] || { echo "$1: $f is not built (make bench BENCH_ONLY=$2 builds it)"; exit 1; }
	done
	[ "$3" != "$4" ] || { echo "$1: the feed server and the client need different CPUs (${1}_SERVER_CPU, ${1}_CLIENT_CPU)"; exit 2; }
}

# ---- the noise gate of the kernel-socket benchmarks (b8.sh, b12.sh) ----
# $KC (b8_kernel_client, b12_kernel_client) --spin on CPUs 0 and 1 before and
# after every run, against reference medians taken at the start

# bench_kgate_init CPU: TSC_HZ ($KC --calibrate on CPU), REF0 and REF1 (median
# of five spins on CPU 0 / CPU 1); says them
bench_kgate_init() {
	TSC_HZ=$(taskset -c "$1" "$KC" --calibrate | sed -n 's/.*"tsc_hz":\([0-9]*\).*/\1/p')
	REF0=$(for _ in 1 2 3 4 5; do bench_kspin 0; done | bench_median)
	REF1=$(for _ in 1 2 3 4 5; do bench_kspin 1; done | bench_median)
	echo "tsc:     $TSC_HZ Hz (calibrated against CLOCK_MONOTONIC_RAW); gate reference spin: CPU 0 $REF0, CPU 1 $REF1 cycles"
}
bench_kspin() { taskset -c "$1" "$KC" --spin | sed -n 's/.*"spin_cycles":\([0-9]*\).*/\1/p'; }
bench_median() { sort -n | awk '{ a[NR] = $1 } END { print a[int((NR + 1) / 2)] }'; }
bench_drift() { # spin ref -> 1 when off by more than 10 %
	awk -v s="$1" -v r="$2" 'BEGIN { d = s / r - 1; if (d < 0) d = -d; print (d > 0.10) ? 1 : 0 }'
}

# bench_kgated RERUNS OUT_FORMAT R X Y CMD...: "CMD OUT", OUT being OUT_FORMAT
# (printf) of the attempt 0, 1, ...; an attempt whose spins drifted is run
# again, at most RERUNS times (then kept as noisy). Every attempt is a line
# "R X Y attempt OUT failed|kept|noisy|rerun" of $tmp/runs.tsv; 1 when CMD failed
bench_kgated() {
	local reruns=$1 fmt=$2 r=$3 x=$4 y=$5 a=0 out b0 b1 e0 e1 bad
	shift 5
	while :; do
		# shellcheck disable=SC2059
		out=$(printf "$fmt" "$a")
		b0=$(bench_kspin 0)
		b1=$(bench_kspin 1)
		if ! "$@" "$out"; then
			printf '%s\t%s\t%s\t%s\t%s\t%s\n' "$r" "$x" "$y" "$a" "$out" failed >>"$tmp/runs.tsv"
			return 1
		fi
		e0=$(bench_kspin 0)
		e1=$(bench_kspin 1)
		bad=$(($(bench_drift "$b0" "$REF0") + $(bench_drift "$b1" "$REF1") + $(bench_drift "$e0" "$REF0") + $(bench_drift "$e1" "$REF1")))
		if [ "$bad" = 0 ]; then
			printf '%s\t%s\t%s\t%s\t%s\t%s\n' "$r" "$x" "$y" "$a" "$out" kept >>"$tmp/runs.tsv"
			return 0
		fi
		if [ "$a" -ge "$reruns" ]; then
			printf '%s\t%s\t%s\t%s\t%s\t%s\n' "$r" "$x" "$y" "$a" "$out" noisy >>"$tmp/runs.tsv"
			return 0
		fi
		[ "${BENCH_DEBUG:-0}" = 1 ] && echo "gate: round $r $x $y: spins $b0/$b1 before, $e0/$e1 after (ref $REF0/$REF1): re-run"
		printf '%s\t%s\t%s\t%s\t%s\t%s\n' "$r" "$x" "$y" "$a" "$out" rerun >>"$tmp/runs.tsv"
		a=$((a + 1))
	done
}

# bench_krounds ROUNDS RERUNS PREFIX SUFFIX XS YS CMD...: ROUNDS rounds of
# "CMD X Y OUT" for every X of the list XS and Y of the list YS, each round
# starting both lists one further on, every run gated (bench_kgated; OUT is
# PREFIX<round>.X.Y.<attempt>SUFFIX); counts the failed runs in failed; says
# the time since the script's t_start after each round
bench_krounds() {
	local rounds=$1 reruns=$2 pre=$3 suf=$4 r xi yi x y
	local -a xs ys
	read -r -a xs <<<"$5"
	read -r -a ys <<<"$6"
	shift 6
	for r in $(seq 1 "$rounds"); do
		for xi in $(seq 0 $((${#xs[@]} - 1))); do
			x=${xs[$(((xi + r - 1) % ${#xs[@]}))]}
			for yi in $(seq 0 $((${#ys[@]} - 1))); do
				y=${ys[$(((yi + r - 1) % ${#ys[@]}))]}
				bench_kgated "$reruns" "$pre$r.$x.$y.%s$suf" "$r" "$x" "$y" "$@" "$x" "$y" || failed=$((failed + 1))
			done
		done
		# shellcheck disable=SC2154 # t_start: the script's
		printf 'round %d of %d done (%ds; load %s)\n' "$r" "$rounds" $(($(date +%s) - t_start)) "$(cut -d' ' -f1 /proc/loadavg)"
	done
}

# bench_retrans NETNS: the kernel's TCP RetransSegs in NETNS
bench_retrans() { ip netns exec "$1" awk '/^Tcp:/ { if (h) { print $13; exit } h = 1 }' /proc/net/snmp; }

# the veth benchmarks (b8.sh, b12.sh): a command in NSS / NSC
nss() { ip netns exec "$NSS" "$@"; }
nsc() { ip netns exec "$NSC" "$@"; }

# bench_veth_cleanup NAME KEEP PID...: the PIDs stopped (3 s, then SIGKILL), NSS
# and NSC deleted, $tmp removed unless KEEP is 1 (NAME_KEEP=1 said)
bench_veth_cleanup() {
	local name=$1 keep=$2
	shift 2
	bench_stop_pids 30 "$@"
	ip netns del "$NSS" 2>/dev/null || true
	ip netns del "$NSC" 2>/dev/null || true
	if [ "$keep" = 1 ]; then
		echo "${name}_KEEP=1: keeping $tmp"
	else
		rm -rf "$tmp"
	fi
}

# bench_veth_pair WHAT: the network namespaces NSS (WHAT, at S_IP on VS) and NSC
# (the receivers: the kernel at K_IP on VC, lcpipe at L_IP / L_MAC over
# af_packet), IPv6 off, joined by a veth pair with its offloads off and MTU
# VETH_MTU (1500) (SKIP without namespaces); says what it made
bench_veth_pair() {
	local n x
	ip netns add "$NSS" && ip netns add "$NSC" || { echo "SKIP: cannot create network namespaces"; exit 77; }
	for n in "$NSS" "$NSC"; do
		ip netns exec "$n" sysctl -qw net.ipv6.conf.default.disable_ipv6=1 net.ipv6.conf.all.disable_ipv6=1
		ip -n "$n" link set lo up
	done
	ip link add "$VS" type veth peer name "$VC"
	ip link set "$VS" netns "$NSS"
	ip link set "$VC" netns "$NSC"
	ip -n "$NSS" addr add "$S_IP/24" dev "$VS"
	ip -n "$NSC" addr add "$K_IP/24" dev "$VC"
	ip -n "$NSS" link set "$VS" mtu "${VETH_MTU:-1500}" up
	ip -n "$NSC" link set "$VC" mtu "${VETH_MTU:-1500}" up
	ip netns exec "$NSS" ethtool -K "$VS" tso off gso off gro off tx off rx off >/dev/null 2>&1 || true
	ip netns exec "$NSC" ethtool -K "$VC" tso off gso off gro off tx off rx off >/dev/null 2>&1 || true
	echo "veth:    $VS ($S_IP, netns $NSS, $1) <-> $VC (netns $NSC: kernel $K_IP; lcpipe $L_IP mac $L_MAC over af_packet), MTU $(ip -n "$NSS" -o link show "$VS" | sed -n 's/.* mtu \([0-9]*\).*/\1/p')"
	for x in "$NSS:$VS" "$NSC:$VC"; do
		echo "         ${x#*:}: $(ip netns exec "${x%%:*}" ethtool -k "${x#*:}" | grep -E '^(tcp-segmentation-offload|generic-segmentation-offload|generic-receive-offload|tx-checksumming|rx-checksumming):' | tr -s ' \n' ' ')"
	done
}
