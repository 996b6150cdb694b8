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

: "${BENCH_BUILDDIR:=.}"
: "${BENCH_REPS:=11}"
: "${BENCH_MS:=10}"
: "${BENCH_QUIET_WAIT:=0}"
: "${BENCH_QUIET_LOAD:=1.0}"
if [ -z "${BENCH_RT:-}" ]; then
	if [ "$(id -u)" = 0 ]; then BENCH_RT=1; else BENCH_RT=0; fi
fi
BENCH_RT_OPT=
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
