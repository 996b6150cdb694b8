#!/bin/bash
# B12 — the whole pipeline (doc/benchmarks.md "B12"): lcpipe receiving a
# WebSocket tick feed over its own stack, rx -> tcp -> ws -> metrics -> sink,
# on 1 and 2 worker lcores, against a kernel-socket C client doing the same
# work on the same feed, over the same veth. Root only (network namespaces,
# veth, af_packet); SKIP (77) otherwise.
#
# Topology (two network namespaces, one veth pair; TSO, GSO, GRO and tx/rx
# checksum offloads off on both ends, MTU 1500, so the sender's TCP sends
# 1448-byte segments (with timestamps) and an AF_PACKET socket sees complete
# checksums):
#
#   netns lcpb12s-PID                          netns lcpb12c-PID
#   b12_feed_server 10.89.0.1 -- veth b12sPID == b12cPID -- kernel: 10.89.0.2 (b12_kernel_client)
#                                                            lcpipe: net_af_packet on b12cPID,
#                                                            tcp stage 10.89.0.3, MAC 02:00:0a:59:00:03
#
# Every run: a fresh feed server (pinned to CPU $B12_SERVER_CPU) streams
# COUNT messages of SIZE payload bytes (binary frames, JSON ticks over
# $B12_SYMBOLS symbols, b12_feed_server.c) as fast as the socket takes them,
# then a close; the receiver is one of
#   kernel      b12_kernel_client (CPU $B12_CLIENT_CPU): recv() 64 KiB, a minimal
#               frame parser, plugins/metrics' tick scan and sequence check
#               (the same algorithm and hash) -- the same work as ws + metrics
#   kernel_min  the same with --scan fixed --hash mix: a parser that knows the
#               feed's layout and a well-mixed symbol hash (the cheaper anchor)
#   lcpipe1     lcpipe, EAL -l 0,1: worker lcore 1 (CPU 1) runs port_ethdev
#               (net_af_packet), tcp, ws, metrics, sink_null; main lcore on CPU 0
#   lcpipe2     lcpipe, EAL --lcores=0@0,1@1,2@0: lcore 1 (CPU 1) port + tcp,
#               lcore 2 (CPU 0, shared with the feed server: there are only
#               2 CPUs) ws + metrics + sink; tcp.data -> ws.in crosses lcores
#               (ring of 16384 >= the engine's 8191 mbufs, so it cannot overflow)
# Runs are interleaved: every round runs every size (order rotated) and, per
# size, every receiver (order rotated). Noise gate as B8: the spin loop on both
# CPUs before and after every run, re-run on > 10 % drift (at most
# B12_RERUNS times (default 1: on this shared VM the gate fires on most
# runs), then kept and counted noisy).
#
# Cycles per message:
#   kernel: the client's getrusage user+sys x the TSC rate / messages, and the
#     feed server's the same way (on a veth the kernel's receive work runs
#     partly in softirq inside the *server's* send(), and, when the receiver
#     is the bottleneck, much of the sender's inside the receiver's recv()
#     (its ACKs release the server's queued data): hence both processes)
#   lcpipe: per worker lcore, over a window sampled by b12_report.py sample
#     (telemetry /lcpipe/stats + /proc/PID/task/*/schedstat at two instants
#     while the stream runs): the thread's on-CPU time x its busy share
#     (busy / (busy + idle) TSC cycles of the engine's accounting), summed over
#     the lcores, / messages in the window. The engine's busy cycles are TSC
#     wall time, which on this shared machine include time the thread was
#     preempted; they are printed too ("wall busy"), and the --report's
#     whole-run figure is in the JSON lines (report_busy).
# Ratios: per round, lcpipe / kernel for the receiver alone and for receiver +
# the feed server of the same run; median of the per-round ratios.
#
# The ws stage runs without pings, stale-feed watchdog or a short handshake
# deadline (the feed server answers no pings; runs under valgrind are slow).
#
# Then (B12_TIMING=1) one lcpipe1 run per size with engine.stage_timing: each
# stage's own cycles per message, natively (b12_report.py timing).
# Then (B12_CG=1, valgrind present) one single-lcore lcpipe run per size under
# callgrind (--toggle-collect=lcp_worker_main; an idle dump, then a stream
# dump), split by component with b12_report.py cg: instructions per message
# per stage, empty polling turns removed.
#
# B14 (wss) runs this script through b14.sh with B12_ID=B14: the feed server
# serves TLS (OpenSSL SSL_write, one suite for everyone: B12_SUITE), with a CA
# and a server certificate for its address made here by the openssl CLI, and
# the receivers speak wss: the kernel client SSL_read on its kernel socket,
# lcpipe's ws stage a wss:// URL with ca_file. A case's suffix picks its
# stream: none = TLS, _z = TLS + permessage-deflate (server compresses, both
# receivers inflate), _ws = plain ws (B12's stream, the same-run reference for
# what TLS costs). Ratios then pair lcpipe and kernel cases of the same stream.
#
# Knobs: B12_ROUNDS (5), B12_SIZES ("64 256 1024"), B12_CASES ("kernel
# kernel_min lcpipe1 lcpipe2"), B12_MB (frame megabytes per run, 96: the
# message count is B12_MB*10^6 / frame size), B12_SYMBOLS (100), B12_OPCODE
# (binary), B12_RERUNS (1), B12_SERVER_CPU (0), B12_CLIENT_CPU (1), B12_CC
# (the feed connection's congestion control, set by the server with
# setsockopt: cubic, Linux's default; this VM's default is bbr, whose pacing
# would shape the feed, and a namespace may not pick cubic by sysctl), B12_AFP_ARGS (net_af_packet devargs, "qdisc_bypass=1,framecnt=2048":
# a ring larger than the tcp stage's 1 MiB window), B12_DRIVER (af_packet, or af_xdp: net_af_xdp on the
# same veth, its fill ring's mbufs declared held by the driver), B12_TIMING (1), B12_CG (1), B12_CG_MB (8), B12_CG_IDLE (1 s),
# B12_TCP_OPTS (more options of lcpipe's tcp stage, JSON members: '"ack_stretch": 64'),
# B12_MTU (1500; up to 9000: jumbo frames: the veth's two ends and lcpipe's tcp
# stage at that MTU, af_packet ring frames of 10 KiB unless B12_AFP_ARGS is
# given, mbufs that hold one; the kernel receivers see the same veth),
# BENCH_NICE, BENCH_QUIET_WAIT, LCPIPE, B12_KEEP=1 (keep the work directory);
# B12_ID (B12; B14 from b14.sh), B12_SUITE (TLS_AES_128_GCM_SHA256: a TLS 1.3
# suite, or a TLS 1.2 cipher name, which pins TLS 1.2), B12_DEFLATE_LEVEL (1).
set -eu
. "$(dirname "$0")/common.sh"
# shellcheck disable=SC2034 # read by bench_header
BENCH_RT=0 # nothing runs SCHED_FIFO here

: "${B12_ID:=B12}"
case $B12_ID in
B12) TLS_DEF=0 ;;
B14) TLS_DEF=1 ;;
*) echo "b12.sh: B12_ID must be B12 or B14"; exit 2 ;;
esac
ID=$B12_ID
id=$(echo "$ID" | tr '[:upper:]' '[:lower:]')
: "${B12_SUITE:=TLS_AES_128_GCM_SHA256}"
: "${B12_DEFLATE_LEVEL:=1}"

: "${B12_ROUNDS:=5}"
: "${B12_SIZES:=64 256 1024}"
: "${B12_CASES:=kernel kernel_min lcpipe1 lcpipe2}"
: "${B12_MB:=96}"
: "${B12_SYMBOLS:=100}"
: "${B12_OPCODE:=binary}"
: "${B12_RERUNS:=1}"
: "${B12_SERVER_CPU:=0}"
: "${B12_CLIENT_CPU:=1}"
: "${B12_CC:=cubic}"
: "${B12_MTU:=1500}"
VETH_MTU=$B12_MTU
export B12_MTU # b12_report.py labels every JSON line with it
mtu_eng='' mtu_tcp=''
if [ "$B12_MTU" != 1500 ]; then
	# as tests/kernel/tcp_jumbo.sh: af_packet ring frames of 10 KiB, two to a
	# block, whose data (framesz - 32) fits one mbuf of 10,240 bytes; the port
	# keeps its nominal MTU (DPDK 22.11's af_packet refuses one above 1500 but
	# carries what its ring frames hold); the tcp stage at B12_MTU
	[ "$B12_MTU" -le 9000 ] || { echo "b12.sh: B12_MTU is 9000 at most"; exit 2; }
	: "${B12_AFP_ARGS:=qdisc_bypass=1,framecnt=1024,framesz=10240,blocksz=20480}"
	mtu_eng=', "mbuf_data_room": 10368'
	mtu_tcp=", \"mtu\": $B12_MTU"
fi
: "${B12_AFP_ARGS:=qdisc_bypass=1,framecnt=2048}"
: "${B12_DRIVER:=af_packet}"
: "${B12_TCP_OPTS:=}"
tcp_more=${B12_TCP_OPTS:+, $B12_TCP_OPTS}
case $B12_DRIVER in
af_packet | af_xdp) PDEV=net_${B12_DRIVER}0; export B12_DRIVER ;;
*) echo "b12.sh: B12_DRIVER must be af_packet or af_xdp"; exit 2 ;;
esac
: "${B12_CG:=1}"
: "${B12_CG_MB:=8}"
: "${VALGRIND:=$(command -v valgrind || true)}"
REP=$HERE/b12_report.py

bench_need_cpus 2
[ "$(id -u)" = 0 ] || { echo "SKIP: $ID needs root (network namespaces, veth, af_packet)"; exit 77; }
for t in ip ethtool taskset; do
	command -v "$t" >/dev/null || { echo "SKIP: no $t (Debian: iproute2, ethtool, util-linux)"; exit 77; }
done
if [ "$TLS_DEF" = 1 ]; then
	command -v openssl >/dev/null || { echo "SKIP: no openssl CLI (Debian: openssl)"; exit 77; }
fi
[ -x "$PY" ] || { echo "SKIP: no /usr/bin/python3"; exit 77; }
bench_feed_progs "$ID" "$id" "$B12_SERVER_CPU" "$B12_CLIENT_CPU"

if [ "$ID" = B14 ]; then
	bench_header B14 "wss receive: lcpipe (ws stage with TLS on its worker lcore) vs a kernel-socket OpenSSL client"
else
	bench_header B12 "whole pipeline rx -> tcp -> ws -> metrics -> sink: lcpipe on 1 and 2 lcores vs a kernel-socket client"
fi
tmp=$(mktemp -d "/tmp/lcp$id.XXXXXX")
NSS=lcp${id}s-$$
NSC=lcp${id}c-$$
VS=${id}s$$
VC=${id}c$$
if [ "$B12_DRIVER" = af_packet ]; then PVDEV="$PDEV,iface=$VC${B12_AFP_ARGS:+,$B12_AFP_ARGS}"; else PVDEV="$PDEV,iface=$VC"; fi
S_IP=10.89.0.1
K_IP=10.89.0.2
L_IP=10.89.0.3
L_MAC=02:00:0a:59:00:03
PORT=9712
PIDS=""
cleanup() {
	local keep=0
	{ [ "${B12_KEEP:-0}" = 1 ] || [ "${B14_KEEP:-0}" = 1 ]; } && keep=1
	# shellcheck disable=SC2086 # PIDS: a list of numbers
	bench_veth_cleanup "$ID" $keep $PIDS
}
trap cleanup EXIT
trap 'exit 130' INT TERM

bench_veth_pair "feed server"
echo "tcp:     congestion control of the feed's connection: $B12_CC (setsockopt TCP_CONGESTION; the namespaces' default is $(nss sysctl -n net.ipv4.tcp_congestion_control)); client rmem $(nsc sysctl -n net.ipv4.tcp_rmem | tr -s '\t ' ' ')"
echo "port:    lcpipe's port_ethdev on $PVDEV$([ "$B12_DRIVER" = af_xdp ] && echo " (its fill ring's mbufs declared held by the driver)")"
echo "tcp stage: lcpipe's tcp options: defaults${B12_TCP_OPTS:+ and $B12_TCP_OPTS}"
echo "placement: feed server CPU $B12_SERVER_CPU (taskset); kernel client CPU $B12_CLIENT_CPU (taskset);"
echo "           lcpipe1 EAL -l 0,1: main lcore 0 = CPU 0 (control loop, sleeps), worker lcore 1 = CPU 1 (port, tcp, ws, metrics, sink)"
echo "           lcpipe2 EAL --lcores=0@0,1@1,2@0: lcore 1 = CPU 1 (port, tcp), lcore 2 = CPU 0 (ws, metrics, sink) -- CPU 0 is shared with the feed server"
echo "           telemetry sampler (b12_report.py sample) on CPU $B12_SERVER_CPU, polling every 20 ms"
if [ "$(cat /proc/sys/kernel/sched_autogroup_enabled 2>/dev/null || echo 0)" = 1 ]; then
	echo "sched:   autogroup on: nice $BENCH_NICE acts only within this session; other sessions' tasks share the CPUs fairly"
fi

# the stream of a case: its suffix (_z: TLS + permessage-deflate, _ws: plain);
# no suffix: TLS in B14, plain in B12
mode_of() {
	case $1 in
	*_z) echo z ;;
	*_ws) echo ws ;;
	*) [ "$TLS_DEF" = 1 ] && echo tls || echo ws ;;
	esac
}
recv_of() { local c=${1%_z}; echo "${c%_ws}"; }
TLSD=$tmp/tls
if [ "$TLS_DEF" = 1 ]; then
	# a CA and a server certificate for the feed's address (IP SAN), P-256 keys
	mkdir -p "$TLSD"
	(
		cd "$TLSD"
		openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 2 -subj "/CN=lcpipe $ID test CA" \
			-addext "basicConstraints=critical,CA:TRUE" -addext "keyUsage=critical,keyCertSign" \
			-keyout ca.key -out ca.pem
		openssl req -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -subj "/CN=$S_IP" -keyout server.key -out server.csr
		printf 'subjectAltName=IP:%s\nbasicConstraints=CA:FALSE\nextendedKeyUsage=serverAuth\n' "$S_IP" >ext.cnf
		openssl x509 -req -in server.csr -CA ca.pem -CAkey ca.key -CAcreateserial -days 2 -extfile ext.cnf -out server.pem
	) >"$tmp/openssl.log" 2>&1 || { echo "$ID: openssl could not make the certificates: $(tail -3 "$tmp/openssl.log")"; exit 1; }
	case $B12_SUITE in
	TLS_*) TLS_VER=1.3 ;;
	*) TLS_VER=1.2 ;;
	esac
	echo "tls:     TLS $TLS_VER, suite $B12_SUITE forced on every end (server, kernel client, lcpipe's ws); certificate: P-256 ECDSA for IP $S_IP, signed by a CA made in $TLSD (openssl $(openssl version | cut -d' ' -f2)); no session tickets"
	echo "         permessage-deflate (_z cases): the server compresses every message (libstk's deflater, zlib level $B12_DEFLATE_LEVEL, context takeover, 15-bit window), before the stream"
fi

count_of() { echo $((B12_MB * 1000000 / ($1 + ($1 < 126 ? 2 : 4)))); }
bench_wait_quiet
echo "start:   $(date -u '+%Y-%m-%d %H:%M:%S UTC'); load $(cut -d' ' -f1-3 /proc/loadavg)"
bench_kgate_init "$B12_CLIENT_CPU"
for s in $B12_SIZES; do
	echo "feed:    $s-byte $B12_OPCODE messages: $(count_of "$s") per run ($B12_MB MB of frames), $B12_SYMBOLS symbols"
done
RT_S0=$(bench_retrans "$NSS")

export RUNTIME_DIRECTORY=$tmp/rt
mkdir -p "$RUNTIME_DIRECTORY"
NLC=0
lc_conf() { # case -> $tmp/lc.N.json (sets LC_CONF, LC_PFX)
	local lcores ring='' st2=1 timing=false url="ws://$S_IP:$PORT/$id" tls='' md
	NLC=$((NLC + 1))
	LC_PFX=lcp$id-$$-$NLC
	LC_CONF=$tmp/lc.$NLC.json
	md=$(mode_of "$1")
	if [ "$md" != ws ]; then
		url="wss://$S_IP:$PORT/$id"
		tls=", \"ca_file\": \"$TLSD/ca.pem\", \"tls_min_version\": \"$TLS_VER\", \"tls_max_version\": \"$TLS_VER\""
		if [ "$TLS_VER" = 1.3 ]; then
			tls="$tls, \"tls_ciphersuites\": \"$B12_SUITE\""
		else
			tls="$tls, \"tls_ciphers\": \"$B12_SUITE\""
		fi
	fi
	[ "$md" = z ] && tls="$tls, \"deflate\": true"
	case $(recv_of "$1") in
	lcpipe1) lcores='"-l", "0,1"' ;;
	lcpipe2) lcores='"--lcores=0@0,1@1,2@0"'; st2=2; ring='{"from": "tcp.data", "to": "ws.in", "ring_size": 16384}, ' ;;
	cg) lcores='"-l", "0,1"' ;;
	timing) lcores='"-l", "0,1"'; timing=true ;;
	esac
	[ -n "$ring" ] || ring='"tcp.data -> ws.in", '
	cat >"$LC_CONF" <<JSON
{ "name": "$ID $1",
  "eal": ["--no-huge", "--no-pci", "--no-shconf", "-m", "256", $lcores,
          "--file-prefix=$LC_PFX", "--vdev=$PVDEV",
          "--log-level=lib.eal:error"],
  "engine": {"duration": ${2:-120}, "drain_timeout": 1.0, "stage_timing": $timing$mtu_eng},
  "stages": [
    {"name": "port", "plugin": "port_ethdev", "lcore": 1, "options": {"device": "$PDEV"}},
    {"name": "tcp", "plugin": "tcp", "lcore": 1,
     "options": {"ip": "$L_IP/24", "device": "$PDEV", "mac": "$L_MAC"$mtu_tcp$tcp_more}},
    {"name": "ws", "plugin": "ws", "lcore": $st2,
     "options": {"url": "$url", "subscribe": "$id subscribe",
                 "reconnect_min_ms": 3600000, "reconnect_max_ms": 3600000, "ping_interval_ms": 0,
                 "stale_timeout_ms": 0, "handshake_timeout_ms": 60000$tls}},
    {"name": "metrics", "plugin": "metrics", "lcore": $st2, "options": {"log_buckets": false}},
    {"name": "sink", "plugin": "sink_null", "lcore": $st2}],
  "links": ["port.rx -> tcp.rx", "tcp.tx -> port.tx", $ring"ws.tx -> tcp.app",
            "ws.msg -> metrics.in", "metrics.out -> sink.msg"] }
JSON
}

# the feed server's and the kernel client's options for a stream mode
srv_opts() {
	case $1 in
	tls) echo "--tls-cert $TLSD/server.pem --tls-key $TLSD/server.key --tls-suite $B12_SUITE" ;;
	z) echo "--tls-cert $TLSD/server.pem --tls-key $TLSD/server.key --tls-suite $B12_SUITE --deflate --deflate-level $B12_DEFLATE_LEVEL" ;;
	esac
}
kc_opts() {
	case $1 in
	tls) echo "--tls-ca $TLSD/ca.pem --tls-suite $B12_SUITE" ;;
	z) echo "--tls-ca $TLSD/ca.pem --tls-suite $B12_SUITE --deflate" ;;
	esac
}

# start_server SIZE COUNT BASE MODE [--go-file F] -> SRV_PID
start_server() {
	local size=$1 count=$2 base=$3 md=$4
	shift 4
	rm -f "$base.ready"
	# shellcheck disable=SC2046 # srv_opts: words without blanks
	set -- "$@" $(srv_opts "$md")
	# not through nss(): $! must be the process that becomes the server
	ip netns exec "$NSS" nice -n "$BENCH_NICE" taskset -c "$B12_SERVER_CPU" "$SRV" --listen "$S_IP:$PORT" \
		--size "$size" --count "$count" --symbols "$B12_SYMBOLS" --opcode "$B12_OPCODE" --ready-file "$base.ready" \
		--cc "$B12_CC" --timeout-ms 60000 "$@" >"$base.server.json" 2>"$base.server.err" </dev/null &
	SRV_PID=$!
	PIDS="$PIDS $SRV_PID"
	# with --deflate the server compresses the run's messages before it listens
	for _ in $(seq 3000); do [ -e "$base.ready" ] && return 0; kill -0 "$SRV_PID" 2>/dev/null || break; sleep 0.02; done
	echo "$ID: the feed server did not start: $(cat "$base.server.err")"
	return 1
}

# run_one SIZE CASE BASE: one run; 0 = ok
run_one() {
	local size=$1 cs=$2 base=$3 rc=0 count lp sp md
	count=$(count_of "$size")
	md=$(mode_of "$cs")
	case $(recv_of "$cs") in
	lcpipe* | timing) start_server "$size" "$count" "$base" "$md" --go-file "$base.go" || return 1 ;;
	*) start_server "$size" "$count" "$base" "$md" || return 1 ;;
	esac
	case $(recv_of "$cs") in
	kernel | kernel_min)
		local opt=()
		[ "$(recv_of "$cs")" = kernel_min ] && opt=(--scan fixed --hash mix)
		# shellcheck disable=SC2207 # kc_opts: words without blanks
		opt+=($(kc_opts "$md"))
		nsc nice -n "$BENCH_NICE" taskset -c "$B12_CLIENT_CPU" "$KC" --connect "$S_IP:$PORT" --tsc-hz "$TSC_HZ" \
			"${opt[@]}" >"$base.client.json" 2>"$base.client.err" </dev/null || rc=$?
		wait "$SRV_PID" || rc=$((rc + 100))
		if [ $rc != 0 ]; then
			echo "$ID: $cs at $size B failed ($rc): $(cat "$base.client.err" "$base.server.err" 2>/dev/null | head -5)"
			return 1
		fi
		;;
	lcpipe1 | lcpipe2 | timing)
		lc_conf "$cs"
		cp "$LC_CONF" "$base.conf.json"
		ip netns exec "$NSC" nice -n "$BENCH_NICE" "$LCPIPE" run "$LC_CONF" --no-live \
			--report "$base.report.json" >"$base.log" 2>&1 </dev/null &
		lp=$!
		PIDS="$PIDS $lp"
		# the sampler at the benchmark's nice level: on CPU 0 it competes with lcpipe2's lcore 2
		nice -n "$BENCH_NICE" taskset -c "$B12_SERVER_CPU" "$PY" "$REP" sample --sock-dir "$RUNTIME_DIRECTORY/dpdk/$LC_PFX" \
			--pid "$lp" --server-pid "$SRV_PID" --go-file "$base.go" --out "$base.sample.json" >"$base.sample.err" 2>&1 &
		sp=$!
		wait "$SRV_PID" || rc=100
		wait "$sp" || rc=$((rc + 10))
		kill -TERM "$lp" 2>/dev/null || true
		wait "$lp" || rc=$((rc + 1))
		if [ $rc != 0 ] || ! [ -s "$base.report.json" ]; then
			echo "$ID: $cs at $size B failed ($rc): server: $(head -c 300 "$base.server.err"); sampler: $(head -c 300 "$base.sample.err") $(head -c 300 "$base.sample.json")"
			echo "     lcpipe log ($base.log), last 15 lines:"
			tail -n 15 "$base.log"
			return 1
		fi
		;;
	esac
	return 0
}

SRV_X='' KC_X=''
if [ "$TLS_DEF" = 1 ]; then
	SRV_X=" $(srv_opts tls) [--deflate --deflate-level $B12_DEFLATE_LEVEL] (_ws cases: none of these)"
	KC_X=" $(kc_opts tls) [--deflate] (_ws cases: none of these)"
fi
echo "+ ip netns exec $NSS taskset -c $B12_SERVER_CPU $(basename "$SRV") --listen $S_IP:$PORT --size SIZE --count N --symbols $B12_SYMBOLS --opcode $B12_OPCODE --cc $B12_CC [--go-file R.go]$SRV_X"
echo "+ ip netns exec $NSC taskset -c $B12_CLIENT_CPU $(basename "$KC") --connect $S_IP:$PORT --tsc-hz $TSC_HZ [--scan fixed --hash mix]$KC_X"
echo "+ ip netns exec $NSC lcpipe run lc.N.json --no-live --report R.report.json  (EAL --vdev=$PVDEV)"
echo "+ b12_report.py sample --sock-dir \$RUNTIME_DIRECTORY/dpdk/PREFIX --pid LCPIPE_PID --server-pid SERVER_PID --go-file R.go --out R.sample.json  (lcpipe runs: the server waits for R.go)"
: >"$tmp/runs.tsv"
t_start=$(date +%s)
failed=0
bench_krounds "$B12_ROUNDS" "$B12_RERUNS" "$tmp/r" "" "$B12_SIZES" "$B12_CASES" run_one
RT_S1=$(bench_retrans "$NSS")
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg); $(($(date +%s) - t_start)) s"
echo "kernel TCP retransmissions by the feed servers during the runs: $((RT_S1 - RT_S0))"
"$PY" "$REP" report "$tmp" "$TSC_HZ" --bench "$ID" || failed=$((failed + 1))

# ---- per stage, natively: engine.stage_timing ----
# lcpipe1's pipeline once more per size with "stage_timing": true (two TSC reads
# per process()/poll() call, so not in the runs above): each stage's own cycles
# per message (nested same-lcore calls subtracted), scaled to on-CPU cycles by
# the sampler's window like the runs above.
# One run per size and per stream of the lcpipe1 cases (B14: TLS, and TLS +
# deflate when a _z case ran).
if [ "${B12_TIMING:-1}" = 1 ]; then
	echo
	echo "==== $ID per stage: lcpipe1 with engine.stage_timing, one run per size"
	: >"$tmp/timing.tsv"
	tcases=timing
	case " $B12_CASES " in *" lcpipe1_z "*) tcases="$tcases timing_z" ;; esac
	[ "$TLS_DEF" = 1 ] && case " $B12_CASES " in *" lcpipe1_ws "*) tcases="$tcases timing_ws" ;; esac
	for size in $B12_SIZES; do
		for tc in $tcases; do
			base=$tmp/$tc.$size
			if run_one "$size" "$tc" "$base"; then
				printf '%s\t%s\t%s\n' "$size" "$base" "lcpipe1${tc#timing}" >>"$tmp/timing.tsv"
			else
				failed=$((failed + 1))
			fi
		done
	done
	"$PY" "$REP" timing "$tmp/timing.tsv" "$TSC_HZ" --bench "$ID" || failed=$((failed + 1))
fi

# ---- callgrind: instructions per message per stage, single lcore ----
# lcpipe1's configuration under callgrind, collecting inside lcp_worker_main
# only. The feed server waits (--go-file) after the subscription: the counts
# are zeroed, the worker polls an idle pipeline for B12_CG_IDLE s, that is
# dumped ("idle": instructions per empty turn), then the stream runs and is
# dumped ("stream"); b12_report.py cg removes the stream's empty turns (under
# valgrind the worker waits for the feed most of the time on this machine).
CGCTL=$(command -v callgrind_control || true)
: "${B12_CG_IDLE:=1}"
if [ "$B12_CG" = 1 ] && [ -n "$VALGRIND" ] && [ -x "$VALGRIND" ] && [ -n "$CGCTL" ] && [ -x "$LIBTOOL" ]; then
	echo
	echo "==== $ID callgrind: lcpipe1 under valgrind --tool=callgrind --toggle-collect=lcp_worker_main, $B12_CG_MB MB of frames per size"
	for size in $B12_SIZES; do
		base=$tmp/cg.$size
		count=$((B12_CG_MB * 1000000 / (size + (size < 126 ? 2 : 4))))
		start_server "$size" "$count" "$base" "$(mode_of cg)" --go-file "$base.go" --sub-file "$base.sub" || { failed=$((failed + 1)); continue; }
		lc_conf cg 900
		echo "+ ip netns exec $NSC libtool --mode=execute $VALGRIND --tool=callgrind --toggle-collect=lcp_worker_main lcpipe run lc.$NLC.json ($size B, $count messages)"
		ip netns exec "$NSC" "$LIBTOOL" --mode=execute "$VALGRIND" --tool=callgrind --callgrind-out-file="$base.cg.out" \
			--toggle-collect=lcp_worker_main "$LCPIPE" run "$LC_CONF" --no-live \
			--report "$base.report.json" >"$base.log" 2>&1 </dev/null &
		lp=$!
		PIDS="$PIDS $lp"
		rc=0
		for _ in $(seq 1200); do [ -e "$base.sub" ] || ! kill -0 "$SRV_PID" 2>/dev/null && break; sleep 0.1; done
		if [ -e "$base.sub" ]; then
			"$CGCTL" -z "$lp" >/dev/null 2>&1
			sleep "$B12_CG_IDLE"
			"$CGCTL" -d idle "$lp" >/dev/null 2>&1
			: >"$base.go"
			wait "$SRV_PID" || rc=1
			"$CGCTL" -d stream "$lp" >/dev/null 2>&1
			# the plugins' mappings, for the code callgrind leaves in object "???"
			cp "/proc/$lp/maps" "$base.maps" 2>/dev/null || true
		else
			rc=1
		fi
		kill -TERM "$lp" 2>/dev/null || true
		wait "$lp" || rc=1
		bench_lc_cg "$ID" "$base" "$size" "$rc" || { failed=$((failed + 1)); continue; }
		"$PY" "$REP" cg "$stream" "$msgs" "$segs" "$base.maps" "$idle" "$bursts" --bench "$ID" --report "$base.report.json" |
			sed -e "s/\"case\": \"callgrind\"/\"case\": \"callgrind.lcpipe1.$size\"/" \
				-e "s/\"case\": \"callgrind_tls\"/\"case\": \"callgrind_tls.lcpipe1.$size\"/" | tee "$base.cg.txt" ||
			failed=$((failed + 1))
		[ "$TLS_DEF" = 1 ] || continue
		# B14: the kernel client under callgrind on the same stream (its own dump of the stream)
		base=$tmp/cgk.$size
		start_server "$size" "$count" "$base" tls || { failed=$((failed + 1)); continue; }
		echo "+ ip netns exec $NSC $VALGRIND --tool=callgrind $(basename "$KC") --connect $S_IP:$PORT $(kc_opts tls)  ($size B, $count messages)"
		# shellcheck disable=SC2046 # kc_opts: words without blanks
		if nsc "$VALGRIND" --tool=callgrind --callgrind-out-file="$base.cg.out" "$KC" --connect "$S_IP:$PORT" \
			--tsc-hz "$TSC_HZ" --timeout-ms 120000 $(kc_opts tls) >"$base.client.json" 2>"$base.client.err" </dev/null &&
			wait "$SRV_PID" && stream=$(grep -l 'Trigger: Client Request: stream' "$base.cg.out".* 2>/dev/null | head -1) &&
			[ -n "$stream" ]; then
			read -r msgs sbytes < <("$PY" -c 'import json,sys; c=json.loads(open(sys.argv[1]).readline()); print(c["msgs"], c["stream_bytes"])' "$base.client.json")
			"$PY" "$REP" cgk "$stream" "$msgs" "$sbytes" "$tmp/cg.$size.cg.txt" --bench "$ID" |
				sed "s/\"case\": \"callgrind_tls_kernel_client\"/\"case\": \"callgrind_tls_kernel_client.$size\"/" ||
				failed=$((failed + 1))
		else
			echo "$ID: the kernel client's callgrind run at $size B failed: $(tail -n 3 "$base.client.err" "$base.server.err")"
			kill -TERM "$SRV_PID" 2>/dev/null || true
			wait "$SRV_PID" 2>/dev/null || true
			failed=$((failed + 1))
		fi
	done
else
	echo "callgrind part skipped (B12_CG=$B12_CG, valgrind '${VALGRIND:-}', callgrind_control '${CGCTL:-}')"
fi
[ "$failed" = 0 ] || { echo "$ID: $failed run(s) or check(s) failed"; exit 1; }
exit 0
