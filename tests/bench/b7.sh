#!/bin/bash
# B7 — libstk's TCP receive path (tests/bench/b7_tcp_rx.c; doc/benchmarks.md)
# against kernel TCP in the same run: b7_tcp_rx measures the stack's cases and,
# interleaved with them in every repetition, a kernel TCP stream over loopback
# and (as root) over a veth pair between two network namespaces this script
# creates with segmentation offloads off (1448-byte segments, as the stack sees
# them). Then the stack's cases once more under callgrind (instructions per
# segment / per ACK, repeatable).
#
# Placement: b7_tcp_rx runs under `taskset -c $B7_CPU` (default 1); the kernel
# anchor's receiver process is pinned to the same CPU, its sender to
# $B7_PEER_CPU (default 0) (sched_setaffinity in the forked children).
# No SCHED_FIFO: BENCH_RT does not apply here (the machine is shared).
#
# Knobs (besides common.sh's): BENCH_REPS (>= 9), BENCH_MS (at least 20 is
# used), BENCH_CG_ITERS (segments per callgrind case), B7_LO_MB (MB per
# repetition over loopback, default 64), B7_VETH_MB (default 32; 0 = no veth),
# B7_CPU, B7_PEER_CPU.
set -eu
. "$(dirname "$0")/common.sh"
# b7_tcp_rx has no --rt: nothing runs SCHED_FIFO here (bench_header prints this)
BENCH_RT=0

: "${B7_CPU:=1}"
: "${B7_PEER_CPU:=0}"
: "${B7_LO_MB:=64}"
: "${B7_VETH_MB:=32}"
: "${BENCH_CG_ITERS:=20000}"
: "${VALGRIND:=$(command -v valgrind || true)}"
ms=$BENCH_MS
awk -v m="$ms" 'BEGIN { exit !(m < 20) }' && ms=20

bench_need_cpus 2
bench_header B7 "libstk TCP receive path vs kernel TCP (loopback, veth)"
prog="$BENCH_BUILDDIR/bench/b7_tcp_rx"
tmp=$(mktemp -d)
nsr=
nst=
vr=
cleanup() {
	# deleting a namespace deletes the veth end in it; the pair goes with either
	if [ -n "$nsr" ]; then ip netns del "$nsr" 2>/dev/null || true; fi
	if [ -n "$nst" ]; then ip netns del "$nst" 2>/dev/null || true; fi
	if [ -n "$vr" ]; then ip link del "$vr" 2>/dev/null || true; fi
	rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# veth between two namespaces: receiver in $nsr (10.77.7.1), sender in $nst
veth_opts=()
if [ "$B7_VETH_MB" -gt 0 ] && [ "$(id -u)" = 0 ] && command -v ip >/dev/null &&
	command -v ethtool >/dev/null; then
	nsr=lcpb7r-$$
	nst=lcpb7s-$$
	vr=b7r$$
	vs=b7s$$
	if ip netns add "$nsr" && ip netns add "$nst" &&
		ip link add "$vr" type veth peer name "$vs" &&
		ip link set "$vr" netns "$nsr" && ip link set "$vs" netns "$nst" &&
		ip -n "$nsr" addr add 10.77.7.1/30 dev "$vr" &&
		ip -n "$nst" addr add 10.77.7.2/30 dev "$vs" &&
		ip -n "$nsr" link set "$vr" up && ip -n "$nst" link set "$vs" up &&
		ip -n "$nsr" link set lo up && ip -n "$nst" link set lo up &&
		ip netns exec "$nsr" ethtool -K "$vr" tso off gso off gro off &&
		ip netns exec "$nst" ethtool -K "$vs" tso off gso off gro off; then
		echo "veth:    $vr (10.77.7.1, netns $nsr, receiver) <-> $vs (10.77.7.2, netns $nst, sender), MTU $(ip -n "$nsr" -o link show "$vr" | sed -n 's/.* mtu \([0-9]*\).*/\1/p')"
		for x in "$nsr:$vr" "$nst:$vs"; do
			echo "         ${x#*:}: $(ip netns exec "${x%%:*}" ethtool -k "${x#*:}" | grep -E '^(tcp-segmentation-offload|generic-segmentation-offload|generic-receive-offload|tx-checksumming|rx-checksumming):' | tr -s ' \n' ' ')"
		done
		veth_opts=(--veth-rx-ns "$nsr" --veth-tx-ns "$nst" --veth-ip 10.77.7.1 --veth-mb "$B7_VETH_MB")
	else
		echo "veth:    setup failed; the veth anchor is skipped"
	fi
else
	echo "veth:    skipped (needs root, ip and ethtool, and B7_VETH_MB > 0)"
fi

if [ "$(cat /proc/sys/kernel/sched_autogroup_enabled 2>/dev/null || echo 0)" = 1 ]; then
	echo "sched:   autogroup on: nice $BENCH_NICE acts only within this session, other sessions' tasks share the CPUs fairly"
fi
bench_wait_quiet
bench_run taskset -c "$B7_CPU" "$prog" --reps "$BENCH_REPS" --ms "$ms" \
	--rx-cpu "$B7_CPU" --tx-cpu "$B7_PEER_CPU" --lo-mb "$B7_LO_MB" "${veth_opts[@]}"
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"

# ---- callgrind: instructions per segment / per ACK ----
echo
bench_has_valgrind || exit 0
BENCH_CG_CPU=$B7_CPU bench_callgrind "$tmp" b7 "$prog" --callgrind "$BENCH_CG_ITERS"
grep '^check ' "$tmp/b7.log" || true
echo "B7 callgrind, $BENCH_CG_ITERS segments (rx) / ACKs (send) per case; net = minus the harness case"
printf "%-18s %-8s %12s %10s %10s\n" case unit Ir Ir/unit net
hrx=$(bench_cg_ir "$tmp/b7.ir" b7.harness.rx)
hack=$(bench_cg_ir "$tmp/b7.ir" b7.harness.ack)
grep '^callgrind-case' "$tmp/b7.log" | while read -r _ c _ units _ unit; do
	ir=$(bench_cg_ir "$tmp/b7.ir" "$c")
	awk -v c="$c" -v ir="$ir" -v u="$units" -v unit="$unit" -v hrx="$hrx" -v hack="$hack" 'BEGIN {
		h = (unit == "ack") ? hack : hrx
		net = (c ~ /harness/) ? "-" : sprintf("%.1f", (ir - h) / u)
		printf "%-18s %-8s %12d %10.1f %10s\n", substr(c, 4), unit, ir, ir / u, net
		printf "{\"bench\":\"B7\",\"case\":\"callgrind.%s\",\"unit\":\"instructions/%s\",\"ir\":%d,\"units\":%d,\"ir_per_unit\":%.2f%s}\n", substr(c, 4), unit, ir, u, ir / u, (c ~ /harness/) ? "" : sprintf(",\"net_ir_per_unit\":%.2f", (ir - h) / u) > "/dev/stderr" }'
done 2>"$tmp/b7cg.json"
echo
cat "$tmp/b7cg.json"
