# tests/stop_pid.sh — sourced by tests/run/lib.sh and tests/kernel/tcp_lib.sh:
# stopping what a test started, and the files it leaves (stop_pid,
# stop_leftovers, rt_dir, drop_dir).
# stop_pid PID: stop a process the test started (often a timeout wrapper
# around lcpipe) and what it runs: SIGTERM (lcpipe drains and exits), then,
# after $STOP_PID_TENTHS tenths of a second (default 100), SIGKILL to its
# children and to it, by pid. Returns 0; a process already gone is reaped.
stop_pid() {
	local p=$1 n=${STOP_PID_TENTHS:-100} c
	kill -0 "$p" 2>/dev/null || { wait "$p" 2>/dev/null; return 0; }
	kill -TERM "$p" 2>/dev/null
	while [ "$n" -gt 0 ] && kill -0 "$p" 2>/dev/null; do
		sleep 0.1
		n=$((n - 1))
	done
	if kill -0 "$p" 2>/dev/null; then
		for c in $(ps -o pid= --ppid "$p" 2>/dev/null); do
			kill -KILL "$c" 2>/dev/null
		done
		kill -KILL "$p" 2>/dev/null
	fi
	wait "$p" 2>/dev/null
	return 0
}

# stop_leftovers: stop_pid every process of $PIDS (the test's) still running
stop_leftovers() {
	local p
	for p in $PIDS; do
		if kill -0 "$p" 2>/dev/null; then
			echo "cleanup: stopping leftover process $p"
			stop_pid "$p"
		fi
	done
}

# rt_dir DIR PREFIX: RUNTIME_DIRECTORY=DIR (made, exported) for DPDK's runtime
# files and its telemetry socket, whose path ($RUNTIME_DIRECTORY/dpdk/<prefix>/
# dpdk_telemetry.v2) must fit sun_path (108 bytes): for a deep build tree
# (distcheck) a new /tmp/PREFIX.XXXXXX instead, also in _rt_extra for drop_dir.
# LCP_PLUGIN_PATH is unset: the configs name their plugin paths.
rt_dir() {
	RUNTIME_DIRECTORY=$1
	_rt_extra=""
	if [ $((${#RUNTIME_DIRECTORY} + 60)) -gt 107 ]; then
		RUNTIME_DIRECTORY=$(mktemp -d "/tmp/$2.XXXXXX") || exit 99
		_rt_extra=$RUNTIME_DIRECTORY
	fi
	mkdir -p "$RUNTIME_DIRECTORY"
	export RUNTIME_DIRECTORY
	unset LCP_PLUGIN_PATH
}

# drop_dir DIR: remove the test's temp dir DIR and rt_dir's /tmp fallback, or
# with LCP_TEST_KEEP=1 keep them for a post-mortem
drop_dir() {
	if [ "${LCP_TEST_KEEP:-0}" = 1 ]; then
		echo "LCP_TEST_KEEP=1: keeping $1"
	else
		rm -rf "$1"
		[ -n "${_rt_extra:-}" ] && rm -rf "$_rt_extra"
	fi
}
