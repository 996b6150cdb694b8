# tests/stop_pid.sh — sourced by tests/run/lib.sh and tests/kernel/tcp_lib.sh.
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
