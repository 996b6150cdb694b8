# tests/kernel/tcp_lib.sh — sourced by tests/kernel/tcp_*.sh (L2: the tcp stage
# against the Linux kernel's TCP).
#
# Topology, one network namespace per test (lcpt<pid>, removed on exit, also on
# failure, with every process the test started):
#
#     lcpipe (inside the namespace)                      kernel (same namespace)
#     port_ethdev(net_tap0) <-> tcp 10.77.0.2/24  ==tap lcpt0==  10.77.0.1/24
#                                 ^ data / app v                 tcp_peer.py
#                                 tcp_app
#
# With topo_routed (tcp_loss.sh), the kernel peer lives in a second namespace
# lcpt<pid>p (10.77.1.1/24) behind a veth pair, and the first namespace routes
# between it and the tap (10.77.1.254 / 10.77.0.1; lcpipe's tcp stage gets
# gateway 10.77.0.1): there nftables can drop segments in the forward hook, which
# is a loss neither TCP sees locally (see nft_drop_every).
#
# net_tap creates lcpt0 in the namespace lcpipe runs in; it exists only while
# lcpipe runs, so every run waits for it, gives it 10.77.0.1/24 (IPv6 off, so no
# router solicitations reach the stack) and only then lets tcp_app open its
# connections: tcp_app's "start_file" option names a file this library creates
# once the tap is configured.
#
# LCP_TCP_PORT=af_packet (benchmarks: tests/bench/b15.sh) puts a veth pair
# where the tap was: lcpt0 (10.77.0.1/24) stays in the namespace, its peer lcpv
# in a namespace of lcpipe's own (lcpt<pid>l, nothing else in it), where lcpipe
# runs its port on it with net_af_packet; offloads are off on both ends, as a
# tap has none. The default is tap. (net_af_xdp on the same veth stalled a
# sending run: after 271 frames received nothing more came in.)
#
# Provides: topo_routed, topo_standin, tcp_conf (a whole lcpipe config from tcp_app/tcp options),
# run_lcpipe / wait_tap / tap_up / lcpipe_wait, peer_start / peer_wait
# (tcp_peer.py in the namespace), nft_drop_every / nft_dropped (kernel-side loss
# with nftables), json_get and pycheck (assertions on the JSON files with
# /usr/bin/python3), ok / fail / finish.
#
# Environment (tests/Makefile.am): top_srcdir, top_builddir, LCPIPE. Skips (77)
# when not root, without ip / nft / Debian's python3, when the namespace cannot be
# made, or when the tree has no tcp plugin yet (plugins/tcp). LCP_TEST_KEEP=1
# keeps the temp dir ($W) for a post-mortem.

set -u

# a library that does not parse is read up to the error, and every check it
# defines after it would be "command not found": a suite that passes (see
# tests/unit/scripts_parse.sh)
bash -n "${BASH_SOURCE[0]}" || { echo "FAIL: ${BASH_SOURCE[0]} does not parse"; exit 99; }

TEST_NAME=$(basename "$0" .sh)
skip() { echo "SKIP: $*"; exit 77; }

[ "$(id -u)" = 0 ] || skip "needs root (network namespace, tap)"
command -v ip >/dev/null || skip "no ip (iproute2)"
command -v nft >/dev/null || skip "no nft (nftables)"
PY=/usr/bin/python3 # Debian's: python3 on PATH may be a pyenv shim
[ -x "$PY" ] || skip "no /usr/bin/python3"
: "${top_srcdir:=$(cd "$(dirname "$0")/../.." && pwd)}"
: "${top_builddir:=$top_srcdir}"
: "${LCPIPE:=$top_builddir/framework/lcpipe}"
[ -x "$LCPIPE" ] || skip "$LCPIPE not built"
[ -d "$top_srcdir/plugins/tcp" ] || skip "no tcp plugin in this tree (plugins/tcp)"
PEER=$top_srcdir/tests/kernel/tcp_peer.py
PLUGDIR=$top_builddir/tests/kernel/plugins/.libs # test-only plugins (check_LTLIBRARIES); tcp_app is plugins/tcp_app
[ -e "$top_builddir/plugins/tcp_app/.libs/tcp_app.so" ] || { echo "FAIL: plugins/tcp_app is not built"; exit 1; }

TAP=lcpt0
K_IP=10.77.0.1  # the kernel's end of the tap
LC_IP=10.77.0.2 # lcpipe's tcp stage
NS=lcpt$$
: "${LCP_TCP_PORT:=tap}"
case $LCP_TCP_PORT in
tap) PDEV=net_tap0 VDEV=net_tap0,iface=$TAP NS_LC=$NS ;;
af_packet) PDEV=net_af_packet0 VDEV=net_af_packet0,iface=lcpv,qdisc_bypass=1,framecnt=2048 NS_LC=${NS}l ;;
*) echo "FAIL: LCP_TCP_PORT is tap or af_packet, not \"$LCP_TCP_PORT\""; exit 1 ;;
esac
NS_PEER=$NS # where tcp_peer.py runs: the same namespace, or lcpt<pid>p (topo_routed)
NS_STANDIN="" # topo_standin: a kernel TCP where lcpipe stands (lcpt<pid>k)
PEER_IP=$K_IP # the kernel peer's address
TCP_GW=""     # JSON member for the tcp stage: the gateway in topo_routed
DURATION=${DURATION:-60} # engine.duration of each run (a bound, not the expected time)

FAILS=0
PIDS=""
N_RUN=0
LC_PID=""
GO=""

mkdir -p "$top_builddir/tests" || exit 99
W=$(mktemp -d "$top_builddir/tests/$TEST_NAME.XXXXXX") || exit 99

# stop_pid PID: SIGTERM, then SIGKILL (tests/stop_pid.sh); here after 5 s; and
# stop_leftovers, rt_dir, drop_dir
STOP_PID_TENTHS=50
. "$top_srcdir/tests/stop_pid.sh"

cleanup() {
	stop_leftovers
	ip netns del "$NS" 2>/dev/null
	[ "$NS_PEER" != "$NS" ] && ip netns del "$NS_PEER" 2>/dev/null
	[ -n "$NS_STANDIN" ] && ip netns del "$NS_STANDIN" 2>/dev/null
	[ "$NS_LC" != "$NS" ] && ip netns del "$NS_LC" 2>/dev/null
	drop_dir "$W"
}
trap cleanup EXIT
trap 'exit 99' HUP INT TERM

# DPDK's runtime files (and its telemetry socket, whose path must fit sun_path)
rt_dir "$W/rt" lcpt-rt

# _ns_new NS WHAT: a new namespace NS (WHAT names it in a skip), lo up, IPv6 off
# for every interface made in it from now on (the tap): nothing but IPv4 and
# ARP reaches the stack
_ns_new() {
	ip netns add "$1" 2>/dev/null || skip "cannot create $2"
	ip netns exec "$1" ip link set lo up
	ip netns exec "$1" sysctl -qw net.ipv6.conf.default.disable_ipv6=1 net.ipv6.conf.all.disable_ipv6=1 2>/dev/null
}

_ns_new "$NS" "a network namespace"
nsx() { ip netns exec "$NS" "$@"; }
if [ "$NS_LC" != "$NS" ]; then
	_ns_new "$NS_LC" "lcpipe's network namespace"
	nsx ip link add $TAP type veth peer name lcpv netns "$NS_LC" || skip "cannot make a veth pair"
	nsx ip addr add $K_IP/24 dev $TAP
	nsx ip link set $TAP up
	ip netns exec "$NS_LC" ip link set lcpv up
	nsx ethtool -K $TAP tso off gso off gro off tx off rx off >/dev/null 2>&1
	ip netns exec "$NS_LC" ethtool -K lcpv tso off gso off gro off tx off rx off >/dev/null 2>&1
	echo "port: $PDEV on lcpv (netns $NS_LC), a veth whose peer $TAP ($K_IP) is in $NS"
fi

nsp() { ip netns exec "$NS_PEER" "$@"; }

# _topo_leg NS NTH R_IF NS_IF NET: a new namespace NS (the NTH one, for a skip)
# behind the router (namespace $NS) on a veth pair: R_IF NET.254/24 in the
# router, NS_IF NET.1/24 in NS with its default route through R_IF; lo up, IPv6
# off; offloads off on both ends, so that the forward hook sees (and drops)
# single MSS-sized segments rather than whole GSO/GRO bursts (1: no ethtool)
_topo_leg() {
	local ns=$1 rif=$3 nif=$4 net=$5
	_ns_new "$ns" "a $2 network namespace"
	nsx ip link add "$rif" type veth peer name "$nif" netns "$ns" || skip "cannot make a veth pair"
	nsx ip addr add "$net.254/24" dev "$rif"
	nsx ip link set "$rif" up
	ip netns exec "$ns" ip addr add "$net.1/24" dev "$nif"
	ip netns exec "$ns" ip link set "$nif" up
	ip netns exec "$ns" ip route add default via "$net.254"
	command -v ethtool >/dev/null || return 1
	nsx ethtool -K "$rif" tso off gso off gro off >/dev/null 2>&1
	ip netns exec "$ns" ethtool -K "$nif" tso off gso off gro off >/dev/null 2>&1
}

# topo_routed: move the kernel peer behind a router (see the top of this file).
topo_routed() {
	NS_PEER=${NS}p
	_topo_leg "$NS_PEER" second vA vB 10.77.1 ||
		say "note: no ethtool: the forward hook may see GSO bursts (a drop then loses several segments)"
	nsx sysctl -qw net.ipv4.ip_forward=1
	PEER_IP=10.77.1.1
	TCP_GW='"gateway": "'$K_IP'"'
}

# topo_standin (after topo_routed): a third namespace lcpt<pid>k behind the same
# router, 10.77.2.1/24 on a veth pair (vK in the router, offloads off): the
# kernel's TCP standing where lcpipe stands, so that a benchmark can run Linux
# over the same router and the same nft rules (nft_drop_every N vK) as its
# same-run anchor (tests/bench/b15.sh). Sets NS_STANDIN and STANDIN_IP.
topo_standin() {
	NS_STANDIN=${NS}k
	_topo_leg "$NS_STANDIN" third vK vKs 10.77.2 || true
	STANDIN_IP=10.77.2.1
}
nss() { ip netns exec "$NS_STANDIN" "$@"; }

say() { printf '%s\n' "$*"; }
ok() { printf 'ok: %s\n' "$*"; }
fail() {
	FAILS=$((FAILS + 1))
	printf 'FAIL: %s\n' "$*"
}
finish() {
	if [ "$FAILS" -gt 0 ]; then
		say "$TEST_NAME: $FAILS check(s) failed"
		exit 1
	fi
	say "$TEST_NAME: all checks passed"
	exit 0
}
# the end of a log file after a failure
show() {
	local f
	for f in "$@"; do
		[ -s "$f" ] || continue
		say "--- $(basename "$f"), last 30 lines:"
		tail -n 30 "$f"
	done
	say "---"
}

# conf_begin TAG RESULT_SUFFIX: the next run's files — CONF ($W/TAG.json),
# RESULT ($W/TAG.RESULT_SUFFIX), REPORT, LOG, GO (stale ones removed) — and its
# number N_RUN (the EAL file prefix)
conf_begin() {
	N_RUN=$((N_RUN + 1))
	CONF=$W/$1.json
	RESULT=$W/$1.$2
	REPORT=$W/$1.report.json
	LOG=$W/$1.log
	GO=$W/$1.go
	rm -f "$RESULT" "$REPORT" "$GO"
}

# conf_head TAG [ENGINE_OPTIONS]: on stdout, a config's start up to its stages:
# name, EAL (no hugepages, lcores 0-1, the port's vdev: net_tap0 on $TAP), engine,
# plugin path
conf_head() {
	cat <<JSON
{ "name": "$TEST_NAME $1",
  "eal": ["--no-huge", "--no-pci", "--no-shconf", "-m", "512", "-l", "0,1",
          "--file-prefix=lcpt$$-$N_RUN", "--vdev=$VDEV"],
  "engine": {"duration": $DURATION, "drain_timeout": 2.0${2:+, $2}},
  "plugin_path": ["$PLUGDIR"],
JSON
}

# tcp_conf TAG APP_OPTIONS [TCP_OPTIONS] [ENGINE_OPTIONS] [FAULT_OPTIONS]: write
# $W/TAG.json, the whole config: port_ethdev on $PDEV (net_tap0, iface lcpt0), the tcp
# stage at 10.77.0.2/24, tcp_app with APP_OPTIONS (JSON members, without
# braces) plus "result": $W/TAG.result.json and "start_file": $W/TAG.go;
# TCP_OPTIONS and ENGINE_OPTIONS are more JSON members for the tcp stage and
# the engine (with topo_routed the tcp stage also gets "gateway"); with
# FAULT_OPTIONS, the fault stage with those options between port and tcp;
# PORT_OPTS, when set, more JSON members for the port stage.
# Sets CONF, RESULT, REPORT, LOG, GO.
tcp_conf() {
	local tag=$1 app=$2 tcpo=${3:-} eng=${4:-} fault=${5:-} fst='' rx=tcp.rx tx=port.tx
	[ -n "$TCP_GW" ] && tcpo=${tcpo:+$tcpo, }$TCP_GW
	if [ -n "$fault" ]; then
		fst='
    {"name": "fault", "plugin": "fault", "lcore": 1, "options": {'$fault'}},'
		rx='fault.a_in", "fault.a_out -> tcp.rx'
		tx='fault.b_in", "fault.b_out -> port.tx'
	fi
	conf_begin "$tag" result.json
	{ conf_head "$tag" "$eng"; cat <<JSON
  "stages": [
    {"name": "port", "plugin": "port_ethdev", "lcore": 1, "options": {"device": "$PDEV"${PORT_OPTS:+, $PORT_OPTS}}},$fst
    {"name": "tcp", "plugin": "tcp", "lcore": 1,
     "options": {"ip": "$LC_IP/24", "device": "$PDEV"${tcpo:+, $tcpo}}},
    {"name": "app", "plugin": "tcp_app", "lcore": 1,
     "options": {${app:+$app, }"result": "$RESULT", "start_file": "$GO"}}],
  "links": ["port.rx -> $rx", "tcp.tx -> $tx", "tcp.data -> app.in", "app.out -> tcp.app"] }
JSON
	} >"$CONF"
}

# run_lcpipe CONF REPORT LOG: lcpipe in its namespace, in the background, bounded
# by `timeout` (engine duration + 30 s); sets LC_PID (the timeout process, which
# passes SIGINT/SIGTERM on to lcpipe)
run_lcpipe() {
	local conf=$1 rep=$2 log=$3
	say "+ lcpipe run $(basename "$conf") --report $(basename "$rep")"
	ip netns exec "$NS_LC" timeout -k 5 $((${DURATION%.*} + 30)) \
		"$LCPIPE" run "$conf" --no-live --report "$rep" >"$log" 2>&1 </dev/null &
	LC_PID=$!
	PIDS="$PIDS $LC_PID"
}

# poll_while SECONDS PID CMD...: up to SECONDS for CMD to succeed while PID
# lives; 1 if it did not
poll_while() {
	local n=$(($1 * 20)) pid=$2
	shift 2
	while [ $n -gt 0 ]; do
		"$@" && return 0
		kill -0 "$pid" 2>/dev/null || return 1
		sleep 0.05
		n=$((n - 1))
	done
	return 1
}

# wait_tap: up to 10 s for lcpt0 to appear (lcpipe made it); 1 if it did not
wait_tap() {
	poll_while 10 "$LC_PID" nsx test -e /sys/class/net/$TAP
}

# tap_up: wait for the tap, give the kernel's end 10.77.0.1/24, IPv6 off, up;
# then create $GO so that tcp_app emits its LISTEN / CONNECT commands (the veth
# of LCP_TCP_PORT=af_packet is up before lcpipe starts)
tap_up() {
	if [ "$LCP_TCP_PORT" != tap ]; then
		touch "$GO"
		return 0
	fi
	if ! wait_tap; then
		fail "the tap $TAP did not appear within 10 s (lcpipe not running?)"
		show "$LOG"
		return 1
	fi
	nsx sysctl -qw net.ipv6.conf.$TAP.disable_ipv6=1 2>/dev/null
	nsx ip addr add $K_IP/24 dev $TAP || { fail "ip addr add $K_IP/24 dev $TAP"; return 1; }
	nsx ip link set $TAP up || { fail "ip link set $TAP up"; return 1; }
	touch "$GO"
	return 0
}

# lcpipe_start TAG: run_lcpipe with the files of the last tcp_conf, then tap_up
lcpipe_start() {
	run_lcpipe "$CONF" "$REPORT" "$LOG"
	tap_up
}

# lcpipe_wait: wait for the last lcpipe; sets LC_RC (124/137: the timeout hit);
# with LCP_TCP_PORT=af_packet, its port must have run on that driver
lcpipe_wait() {
	wait "$LC_PID"
	LC_RC=$?
	if [ "$LC_RC" -eq 124 ] || [ "$LC_RC" -eq 137 ]; then
		fail "lcpipe did not end within its timeout (engine duration $DURATION s + 30 s)"
		show "$LOG"
	fi
	if [ "$LCP_TCP_PORT" != tap ] && ! grep -q "(driver net_$LCP_TCP_PORT)" "$LOG"; then
		fail "lcpipe's port did not run on net_$LCP_TCP_PORT"
		show "$LOG"
	fi
	return 0
}

# lcpipe_peer_run PEER_WHAT [SNAP...]: lcpipe on $CONF with the tap up, then the
# peer started before it, both to their end and exiting 0 (PEER_WHAT names the
# peer in a failure). SNAP, a command, runs with one more argument 0 before
# lcpipe starts and 1 once both ended. LC_MS: lcpipe's run in ms.
lcpipe_peer_run() {
	local what=$1 t0 t1
	shift
	[ $# -eq 0 ] || "$@" 0
	t0=$(date +%s%N)
	lcpipe_start || finish
	lcpipe_wait
	t1=$(date +%s%N)
	peer_wait
	[ $# -eq 0 ] || "$@" 1
	# shellcheck disable=SC2034 # for the tests that say it
	LC_MS=$(((t1 - t0) / 1000000))
	expect_lc_rc 0
	[ "$PEER_RC" -eq 0 ] || { fail "$what exited $PEER_RC"; show "$PEER_OUT" "$PEER_ERR"; }
}

# rand_file FILE BYTES: BYTES random bytes in FILE, their sha256 in SHA
rand_file() {
	head -c "$2" /dev/urandom >"$1" || { fail "cannot make the $2-byte file"; finish; }
	# shellcheck disable=SC2034 # for the tests' checks
	SHA=$(sha256sum "$1" | cut -d' ' -f1)
}

# expect_lc_rc WANT: the last lcpipe exited WANT
expect_lc_rc() {
	if [ "$LC_RC" -eq "$1" ]; then
		ok "lcpipe exit status $LC_RC"
	else
		fail "lcpipe exit status $LC_RC, expected $1 (0 ok, 1 runtime failure, 3 leaked objects, 78 bad config)"
		show "$LOG"
	fi
}

# peer_start TAG SUBCOMMAND ARGS...: tcp_peer.py in the namespace, in the
# background (in $NS_PEER), stdout in $W/TAG.peer.json; for a server (serve-*), waits up to 10 s
# until it listens (--ready-file). Sets PEER_PID, PEER_OUT, PEER_ERR.
peer_start() {
	local tag=$1 sub=$2
	shift 2
	PEER_OUT=$W/$tag.peer.json
	PEER_ERR=$W/$tag.peer.err
	case $sub in
	serve-*) set -- "$@" --ready-file "$W/$tag.ready" ;;
	esac
	say "+ tcp_peer.py $sub $*"
	nsp "$PY" "$PEER" "$sub" "$@" >"$PEER_OUT" 2>"$PEER_ERR" </dev/null &
	PEER_PID=$!
	PIDS="$PIDS $PEER_PID"
	case $sub in
	serve-*)
		poll_while 10 "$PEER_PID" test -e "$W/$tag.ready"
		[ -e "$W/$tag.ready" ] || { fail "tcp_peer.py $sub did not listen within 10 s"; show "$PEER_OUT" "$PEER_ERR"; return 1; }
		;;
	esac
	return 0
}

# wait_or_stop PID SECONDS WHAT: wait for PID (a child of this shell: not in a
# subshell) at most SECONDS, then stop it; sets WAIT_RC (124 when it had to be
# stopped)
wait_or_stop() {
	local pid=$1 n=$(($2 * 20))
	while [ $n -gt 0 ] && kill -0 "$pid" 2>/dev/null; do
		sleep 0.05
		n=$((n - 1))
	done
	if kill -0 "$pid" 2>/dev/null; then
		say "$3 still running $2 s after lcpipe ended: stopping it"
		stop_pid "$pid"
		WAIT_RC=124
		return 0
	fi
	wait "$pid"
	WAIT_RC=$?
	return 0
}

# peer_wait [SECONDS]: wait for the last tcp_peer.py, at most SECONDS (default
# 10: called once lcpipe has ended, a server has nothing more to wait for), then
# stop it; sets PEER_RC (124 when it had to be stopped)
peer_wait() {
	wait_or_stop "$PEER_PID" "${1:-10}" tcp_peer.py
	PEER_RC=$WAIT_RC
	return 0
}

# nft_drop_every N: drop every Nth TCP segment in each direction between lcpipe
# and the kernel peer (each direction its own "numgen inc" counter); the table
# stays for the rest of the test.
#  - one namespace: lcpipe -> kernel in the input hook (a real loss: the kernel's
#    TCP never sees the segment, lcpipe's stack must retransmit), kernel -> lcpipe
#    in the output hook. Beware: a drop in the output hook is reported to the
#    kernel's TCP (ip_queue_xmit fails), which just sends the segment again, so
#    lcpipe's stack never sees a gap in that direction.
#  - topo_routed: both directions in the forward hook of the router namespace,
#    invisible to both TCPs: real loss both ways.
#  - nft_drop_every N IFACE (topo_routed): the same on another interface of the
#    router (topo_standin's vK), counted as "to_kernel_IFACE" / "to_IFACE".
nft_drop_every() {
	local ifc=${2:-$TAP} tk=to_kernel tl=to_lcpipe
	if [ "$ifc" != "$TAP" ]; then
		tk=to_kernel_$ifc
		tl=to_$ifc
	fi
	if [ "$NS_PEER" != "$NS" ]; then
		nsx nft -f - <<NFT
table inet lcpt_loss {
	chain lossfw {
		type filter hook forward priority 0; policy accept;
		iifname "$ifc" meta l4proto tcp numgen inc mod $1 == 0 counter drop comment "$tk"
		oifname "$ifc" meta l4proto tcp numgen inc mod $1 == 0 counter drop comment "$tl"
	}
}
NFT
	else
		nsx nft -f - <<NFT
table inet lcpt_loss {
	chain in {
		type filter hook input priority 0; policy accept;
		iifname "$TAP" meta l4proto tcp numgen inc mod $1 == 0 counter drop comment "to_kernel"
	}
	chain out {
		type filter hook output priority 0; policy accept;
		oifname "$TAP" meta l4proto tcp numgen inc mod $1 == 0 counter drop comment "to_lcpipe"
	}
}
NFT
	fi
}

# nft_dropped [IFACE]: "TO_KERNEL TO_LCPIPE" (or TO_IFACE), segments dropped so
# far by the two rules
nft_dropped() {
	local t k l tk=to_kernel tl=to_lcpipe
	if [ -n "${1:-}" ] && [ "$1" != "$TAP" ]; then
		tk=to_kernel_$1
		tl=to_$1
	fi
	t=$(nsx nft list table inet lcpt_loss 2>/dev/null)
	k=$(printf '%s\n' "$t" | sed -n 's/.*counter packets \([0-9]*\).*"'"$tk"'".*/\1/p')
	l=$(printf '%s\n' "$t" | sed -n 's/.*counter packets \([0-9]*\).*"'"$tl"'".*/\1/p')
	echo "${k:-0} ${l:-0}"
}

# json_get FILE EXPR: print EXPR, a Python expression over the parsed file `j`
# (strings as they are, anything else as JSON), e.g.
#   json_get "$REPORT" 'j["stages"]["tcp"]["counters"]["tcp_retransmits"]'
json_get() {
	"$PY" -c 'import json, sys
j = json.load(open(sys.argv[1]))
v = eval(sys.argv[2])
print(v if isinstance(v, str) else json.dumps(v))' "$1" "$2"
}

# pycheck WHAT [--with NAME]... [NAME=VALUE]... <<'PY' ... PY: Python
# assertions read from stdin, run by pycheck.py (its docstring lists what they
# see: A, J(name), conn0(r), check(cond, msg[, detail]), ...), which prints
# "ok: msg" or "FAIL: msg: detail" per check. Any failed check (or an exception)
# fails WHAT.
pycheck() {
	local what=$1
	shift
	if "$PY" "$top_srcdir/tests/kernel/pycheck.py" "$@"; then
		return 0
	fi
	FAILS=$((FAILS + 1))
	say "FAIL: $what (checks above)"
	return 1
}

# report_common: the checks every run's report gets: it exists, the tcp stage
# has counters, and no mbuf leaked
report_common() {
	pycheck "report $(basename "$REPORT")" rep="$REPORT" <<'PY' || show "$LOG"
r = J("rep")
t = r.get("stages", {}).get("tcp", {})
check(len(t.get("counters", {})) > 0, "report: the tcp stage has counters", t)
check(r.get("leaked_objects") == 0, "report: leaked_objects == 0", r.get("leaked_objects"))
PY
}
