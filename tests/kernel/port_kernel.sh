#!/bin/bash
# L2: port_ethdev against the Linux kernel, through net_af_packet on a veth pair
# and through net_tap, inside a network namespace this test creates (and removes,
# also on failure). Traffic never leaves the namespace.
#   tx: gen -> port_ethdev(af_packet on vA): the kernel's veth peer vB counts
#       exactly N received frames.
#   rx: a raw AF_PACKET socket in the namespace sends M frames on vB ->
#       port_ethdev(af_packet on vA) -> sink_pcap: M frames captured, tshark reads
#       them back with their sequence numbers.
#   tap: gen -> port_ethdev(net_tap) -> the kernel's tap interface counts N.
#   af_xdp: the same tx and rx over net_af_xdp on vA. DPDK 22.11's af_xdp keeps
#       its fill ring's mbufs after close; port_ethdev measures them at start and
#       declares them (lcp_stage_pktmbuf_pool_held): the report shows them as
#       held_by_driver, the run exits 0, and a sink that leaks 5 received
#       frames still makes it exit 3 with exactly 5 leaked objects.
#   tx_socket: gen [-> pkt_split] -> port_ethdev(af_packet on vA, tx_socket):
#       a raw socket on vB captures the frames: all N, in sequence order, IPv4
#       and UDP checksums right (so every byte arrived), from single mbufs and
#       from chains of 4 segments; chains of more than 8 segments are dropped
#       and counted (drop_tx_segs), none reaches vB.
set -u
[ "$(id -u)" = 0 ] || { echo "SKIP: needs root"; exit 77; }
command -v ip >/dev/null || { echo "SKIP: no iproute2"; exit 77; }
: "${LCPIPE:?}" "${top_builddir:?}"
PY=${PYTHON3:-/usr/bin/python3}
NS=lcpk$$
W=$(mktemp -d "$top_builddir/tests/kernel-XXXXXX")
fail() { echo "FAIL: $*"; exit 1; }
cleanup() { ip netns del "$NS" 2>/dev/null; rm -rf "$W"; }
trap cleanup EXIT
ip netns add "$NS" || { echo "SKIP: cannot create a network namespace"; exit 77; }
nsx() { ip netns exec "$NS" "$@"; }
nsx ip link add vA type veth peer name vB || fail "veth"
for i in vA vB; do
	nsx sysctl -qw net.ipv6.conf.$i.disable_ipv6=1
	nsx ip link set $i up
done
nsx ip link set lo up
rxpk() { nsx cat /sys/class/net/$1/statistics/rx_packets; }

N=2000
# gen_tx_conf TAG VDEV SIZE: $W/TAG.json, gen (N frames of SIZE bytes, 20000/s)
# into port_ethdev on the EAL device VDEV (its name before the first comma)
gen_tx_conf() {
	cat > "$W/$1.json" <<JSON
{ "eal": ["--no-huge","--no-pci","--no-shconf","-m","256","-l","0,1",
          "--file-prefix=lcpk$$-$1","--vdev=$2"],
  "engine": {"duration": 2, "drain_timeout": 1.0},
  "stages": [
    {"name":"g","plugin":"gen","lcore":1,"options":{"size":$3,"count":$N,"rate":20000}},
    {"name":"p","plugin":"port_ethdev","lcore":1,"options":{"device":"${2%%,*}"}}],
  "links": ["g.out -> p.tx"] }
JSON
}

gen_tx_conf tx net_af_packet0,iface=vA 128
before=$(rxpk vB)
nsx timeout 60 "$LCPIPE" run "$W/tx.json" --no-live --report "$W/tx.r.json" > "$W/tx.log" 2>&1 ||
	{ cat "$W/tx.log"; fail "af_packet tx run exited $?"; }
after=$(rxpk vB)
[ $((after - before)) -eq $N ] || { cat "$W/tx.log"; fail "af_packet tx: kernel vB received $((after - before)) frames, expected $N"; }
$PY - "$W/tx.r.json" $N <<'PYEOF' || fail "af_packet tx report"
import json, sys
r = json.load(open(sys.argv[1])); n = int(sys.argv[2])
c = r["stages"]["p"]["counters"]
assert c["tx_packets"] == n, c
assert r["leaked_objects"] == 0
PYEOF
echo "ok: af_packet tx: $N frames reached the kernel"

# rx_run TAG CONF: run CONF in the background, send M raw frames on vB once it
# runs (sequence numbers 0..M-1 after an Ethernet header), SIGINT it; RC its exit
rx_run() {
	local tag=$1 conf=$2 pid
	ip netns exec "$NS" "$LCPIPE" run "$conf" --no-live --report "$W/$tag.r.json" > "$W/$tag.log" 2>&1 &
	pid=$!
	for _ in $(seq 100); do grep -q "running" "$W/$tag.log" && break; sleep 0.1; done
	grep -q "running" "$W/$tag.log" || { kill -9 $pid; cat "$W/$tag.log"; fail "$tag: the pipeline did not start"; }
	nsx $PY - $M <<'PYEOF' || { kill $pid; fail "$tag: raw sender"; }
import socket, struct, sys, time
m = int(sys.argv[1])
s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW)
s.bind(("vB", 0))
for i in range(m):
    eth = b"\x02\x00\x00\x00\x00\xaa" + b"\x02\x00\x00\x00\x00\xbb" + b"\x88\xb5"
    s.send(eth + struct.pack(">Q", i) + bytes(50))
    if i % 100 == 99:
        time.sleep(0.01)
PYEOF
	sleep 0.5
	kill -INT $pid
	wait $pid
	RC=$?
}

# rx: kernel raw socket -> lcpipe
M=500
cat > "$W/rx.json" <<JSON
{ "eal": ["--no-huge","--no-pci","--no-shconf","-m","256","-l","0,1",
          "--file-prefix=lcpk$$-rx","--vdev=net_af_packet0,iface=vA"],
  "engine": {"drain_timeout": 1.0},
  "stages": [
    {"name":"p","plugin":"port_ethdev","lcore":1,"options":{"device":"net_af_packet0"}},
    {"name":"cap","plugin":"sink_pcap","lcore":1,"options":{"path":"$W/rx.pcapng"}}],
  "links": ["p.rx -> cap.in"] }
JSON
rx_run rx "$W/rx.json"
[ "$RC" -eq 0 ] || { cat "$W/rx.log"; fail "rx run exited $RC"; }
$PY - "$W/rx.r.json" $M <<'PYEOF' || { cat "$W/rx.log"; fail "af_packet rx report"; }
import json, sys
r = json.load(open(sys.argv[1])); m = int(sys.argv[2])
assert r["stop_reason"] == "SIGINT", r["stop_reason"]
assert r["stages"]["cap"]["counters"]["packets"] == m, r["stages"]["cap"]["counters"]
assert r["stages"]["p"]["counters"]["rx_packets"] == m
assert r["leaked_objects"] == 0
PYEOF
if [ -n "${TSHARK:-}" ] && [ -x "$TSHARK" ]; then
	seqs=$("$TSHARK" -r "$W/rx.pcapng" -T fields -e data 2>/dev/null | cut -c1-16 | uniq | wc -l)
	[ "$seqs" -eq $M ] || fail "tshark read $seqs distinct sequence numbers, expected $M"
fi
echo "ok: af_packet rx: $M kernel frames captured"

# tx_socket: frames sent with sendmmsg() on a packet socket, captured on vB
KPLUG=$top_builddir/tests/kernel/plugins/.libs # pkt_split (check_LTLIBRARIES)
[ -e "$KPLUG/pkt_split.so" ] || fail "$KPLUG/pkt_split.so not built (make check builds it)"
# txs_run TAG SPLIT_SEG (0 = no pkt_split) EXPECTED_FRAMES_ON_vB
txs_run() {
	local tag=$1 seg=$2 want=$3 split="" link='"g.out -> p.tx"'
	if [ "$seg" != 0 ]; then
		split=',{"name":"s","plugin":"pkt_split","lcore":1,"options":{"seg":'$seg'}}'
		link='"g.out -> s.in", "s.out -> p.tx"'
	fi
	cat > "$W/$tag.json" <<JSON
{ "eal": ["--no-huge","--no-pci","--no-shconf","-m","256","-l","0,1",
          "--file-prefix=lcpk$$-$tag","--vdev=net_af_packet0,iface=vA"],
  "engine": {"duration": 3, "drain_timeout": 1.0},
  "plugin_path": ["$KPLUG"],
  "stages": [
    {"name":"g","plugin":"gen","lcore":1,"options":{"size":128,"count":$N,"rate":10000}},
    {"name":"p","plugin":"port_ethdev","lcore":1,"options":{"device":"net_af_packet0","tx_socket":true}}$split],
  "links": [$link] }
JSON
	rm -f "$W/$tag.ready"
	nsx timeout 30 $PY - "$W/$tag.ready" "$W/$tag.cap" $N "$(dirname "$0")" <<'PYEOF' &
import socket, struct, sys, time
ready, out, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, sys.argv[4])
from tcp_hostile import csum  # RFC 1071: 0 over a header that carries its checksum
s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(0x0800))
# room for every frame of the run even when this process is slow to read (make
# check runs other tests beside it): SO_RCVBUFFORCE, we are root
s.setsockopt(socket.SOL_SOCKET, 33, 32 << 20)  # SO_RCVBUFFORCE
s.bind(("vB", 0))
s.settimeout(0.5)
open(ready, "w").close()
seqs, bad, idle = [], 0, 0
while idle < 6:  # 3 s without a frame after the last one
    try:
        f = s.recv(4096)
    except socket.timeout:
        idle += 1
        continue
    idle = 0
    ip = f[14:34]
    if ip[9] != 17:
        continue
    udp = f[34:]
    pseudo = ip[12:20] + struct.pack("!BBH", 0, 17, len(udp))
    if len(f) != 128 or csum(ip) != 0 or csum(pseudo + udp) != 0:
        bad += 1
        continue
    seqs.append(struct.unpack("!Q", udp[8:16])[0])
# frames the kernel dropped because this socket was full (PACKET_STATISTICS)
packets, drops = struct.unpack("II", s.getsockopt(263, 6, 8))
with open(out, "w") as fo:
    fo.write("%d %d %d %d\n" % (len(seqs), bad, int(seqs == list(range(len(seqs)))), drops))
PYEOF
	local cpid=$!
	for _ in $(seq 100); do [ -e "$W/$tag.ready" ] && break; sleep 0.05; done
	nsx timeout 60 "$LCPIPE" run "$W/$tag.json" --no-live --report "$W/$tag.r.json" > "$W/$tag.log" 2>&1 ||
		{ cat "$W/$tag.log"; fail "$tag: run exited $?"; }
	wait $cpid || fail "$tag: capture failed"
	read -r got bad inorder cdrops < "$W/$tag.cap"
	[ "$cdrops" -eq 0 ] || fail "$tag: the capture socket on vB overflowed ($cdrops frames dropped by the kernel before it read them): the test, not lcpipe"
	[ "$got" -eq "$want" ] && [ "$bad" -eq 0 ] && [ "$inorder" -eq 1 ] ||
		{ cat "$W/$tag.log"; fail "$tag: vB captured $got good frames (expected $want), $bad bad, in order: $inorder"; }
	grep -q "transmitting with sendmmsg() on an AF_PACKET socket" "$W/$tag.log" ||
		{ cat "$W/$tag.log"; fail "$tag: port_ethdev did not say it uses tx_socket"; }
}
txs_run txs 0 $N
$PY - "$W/txs.r.json" $N <<'PYEOF' || fail "tx_socket report"
import json, sys
r = json.load(open(sys.argv[1])); n = int(sys.argv[2])
c = r["stages"]["p"]["counters"]
assert c["tx_packets"] == n and c["tx_bytes"] == 128 * n, c
assert c["drop_tx_full"] == 0 and c["drop_tx_error"] == 0 and c["drop_tx_segs"] == 0, c
# what the port sends must not come back to its own rx (the driver's socket
# listens on the same interface)
assert c["rx_packets"] == 0, "port received its own frames: %r" % c
assert r["leaked_objects"] == 0
PYEOF
echo "ok: tx_socket: $N frames captured on vB, in order, checksums right"
txs_run txs4 40 $N
$PY - "$W/txs4.r.json" $N <<'PYEOF' || fail "tx_socket chains report"
import json, sys
r = json.load(open(sys.argv[1])); n = int(sys.argv[2])
assert r["stages"]["s"]["counters"]["segs"] == 4 * n, r["stages"]["s"]["counters"]
c = r["stages"]["p"]["counters"]
assert c["tx_packets"] == n and c["tx_bytes"] == 128 * n and c["drop_tx_segs"] == 0, c
assert r["leaked_objects"] == 0
PYEOF
echo "ok: tx_socket: $N frames of 4 segments captured on vB, in order, checksums right"
txs_run txs13 10 0
$PY - "$W/txs13.r.json" $N <<'PYEOF' || fail "tx_socket long chains report"
import json, sys
r = json.load(open(sys.argv[1])); n = int(sys.argv[2])
c = r["stages"]["p"]["counters"]
assert c["drop_tx_segs"] == n and c["tx_packets"] == 0 and c["tx_bytes"] == 0, c
assert r["leaked_objects"] == 0
PYEOF
echo "ok: tx_socket: $N frames of 13 segments dropped as drop_tx_segs, none sent"

# af_xdp: tx and rx through net_af_xdp; the fill ring it keeps is declared, not leaked
xdp_conf() { # TAG DURATION STAGES LINKS
	cat > "$W/$1.json" <<JSON
{ "eal": ["--no-huge","--no-pci","--no-shconf","-m","256","-l","0,1",
          "--file-prefix=lcpk$$-$1","--vdev=net_af_xdp0,iface=vA"],
  "engine": {"duration": $2, "drain_timeout": 1.0},
  "plugin_path": ["$top_builddir/tests/run/plugins/.libs"],
  "stages": [ $3,
    {"name":"p","plugin":"port_ethdev","lcore":1,"options":{"device":"net_af_xdp0"}}],
  "links": [$4] }
JSON
}
xdp_conf xtx 2 '{"name":"g","plugin":"gen","lcore":1,"options":{"size":128,"count":'$N',"rate":20000}}' '"g.out -> p.tx"'
before=$(rxpk vB)
nsx timeout 60 "$LCPIPE" run "$W/xtx.json" --no-live --report "$W/xtx.r.json" > "$W/xtx.log" 2>&1
rc=$?
if [ $rc -ne 0 ] && grep -qiE "af_xdp.*(not supported|failed to|cannot)|xsk|Failed to create umem|driver net_af_xdp not found" "$W/xtx.log" &&
	! grep -q "net_af_xdp0 started" "$W/xtx.log"; then
	grep -iE "af_xdp|xsk" "$W/xtx.log" | head -5
	echo "SKIP (part): net_af_xdp cannot open vA on this kernel; the af_xdp cases did not run"
else
	[ $rc -eq 0 ] || { cat "$W/xtx.log"; fail "af_xdp tx run exited $rc"; }
	after=$(rxpk vB)
	[ $((after - before)) -eq $N ] || { cat "$W/xtx.log"; fail "af_xdp tx: vB received $((after - before)) frames, expected $N"; }
	grep -q "keeps the [0-9]* mbufs of its fill ring" "$W/xtx.log" || { cat "$W/xtx.log"; fail "af_xdp: no line about the fill ring"; }
	$PY - "$W/xtx.r.json" $N <<'PYEOF' || fail "af_xdp tx report"
import json, sys
r = json.load(open(sys.argv[1])); n = int(sys.argv[2])
assert r["stages"]["p"]["counters"]["tx_packets"] == n
assert r["leaked_objects"] == 0, r["mempools"]
rx = [m for m in r["mempools"] if m.get("held_for") == "p"]
assert len(rx) == 1 and rx[0]["held_by_driver"] > 0, r["mempools"]
assert rx[0]["in_use"] == rx[0]["held_by_driver"] and rx[0]["leaked"] == 0, rx
PYEOF
	echo "ok: af_xdp tx: $N frames reached the kernel; the fill ring's mbufs reported as held by the driver"

	# rx into a sink that keeps 5 frames: a leak on top of the driver's hold
	xdp_conf xrx 30 '{"name":"k","plugin":"sink_check","lcore":1,"options":{"leak":5,"log_max":0}}' '"p.rx -> k.in"'
	rx_run xrx "$W/xrx.json"
	rc=$RC
	[ $rc -eq 3 ] || { cat "$W/xrx.log"; fail "af_xdp rx with a leaking sink exited $rc, expected 3 (leak)"; }
	$PY - "$W/xrx.r.json" $M <<'PYEOF' || { cat "$W/xrx.log"; fail "af_xdp rx report"; }
import json, sys
r = json.load(open(sys.argv[1])); m = int(sys.argv[2])
assert r["stages"]["p"]["counters"]["rx_packets"] == m, r["stages"]["p"]["counters"]
assert r["stages"]["k"]["counters"]["frames"] == m, r["stages"]["k"]["counters"]
assert r["leaked_objects"] == 5, (r["leaked_objects"], r["mempools"])
rx = [x for x in r["mempools"] if x.get("held_for") == "p"]
assert len(rx) == 1 and rx[0]["leaked"] == 5 and rx[0]["in_use"] == rx[0]["held_by_driver"] + 5, rx
PYEOF
	grep -q "5 more than the [0-9]* stage p declared held by its driver (leak)" "$W/xrx.log" ||
		{ cat "$W/xrx.log"; fail "af_xdp rx: the leak line does not say what is above the driver's hold"; }
	echo "ok: af_xdp rx: $M kernel frames received; 5 kept by the sink are leaked above the driver's hold"
fi

# tap: lcpipe creates the tap interface inside the namespace
gen_tx_conf tap net_tap0,iface=lcptap0 100
ip netns exec "$NS" timeout 60 "$LCPIPE" run "$W/tap.json" --no-live --report "$W/tap.r.json" > "$W/tap.log" 2>&1 &
pid=$!
# the tap exists only while lcpipe runs: read its counter at the end of the run
for _ in $(seq 100); do nsx test -e /sys/class/net/lcptap0 && break; sleep 0.05; done
nsx sysctl -qw net.ipv6.conf.lcptap0.disable_ipv6=1 2>/dev/null
last=0
while kill -0 $pid 2>/dev/null; do
	v=$(nsx cat /sys/class/net/lcptap0/statistics/rx_packets 2>/dev/null) && last=$v
	sleep 0.05
done
wait $pid || { cat "$W/tap.log"; fail "tap run exited $?"; }
[ "$last" -eq $N ] || { cat "$W/tap.log"; fail "tap: kernel received $last frames, expected $N"; }
echo "ok: tap tx: $N frames reached the kernel"
echo "PASS"
