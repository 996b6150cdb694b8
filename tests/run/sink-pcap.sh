#!/bin/bash
# sink_pcap: capture N frames, read them back with tshark. (a) gen -> sink_pcap on
# one lcore: N frames of the right length, timestamps within a minute of now (DPDK
# 22.11's rte_pcapng can write the year 2251+; order is reported), gen's sequence
# numbers 0..N-1 in order, IPv4 and UDP checksums good, filed under sink_pcap's
# own interface. (b) through a ring pair and across lcores: frames received on an
# ethdev are filed under that port's interface; snaplen truncates and counts.
. "$(dirname "$0")/lib.sh"

"$LCPIPE" describe sink_pcap >/dev/null 2>&1 || skip "the sink_pcap plugin is not built"
if [ -z "${TSHARK:-}" ] || [ ! -x "$TSHARK" ]; then
	skip "tshark not found (configure looks for it on PATH)"
fi

# pcheck PCAP N LEN CAPLEN IFRE T0 T1: the capture read back by tshark
pcheck() {
	local f=$1
	say "+ tshark -r $(basename "$f") -T fields ..."
	"$TSHARK" -r "$f" -o ip.check_checksum:TRUE -o udp.check_checksum:TRUE -T fields \
		-E separator=';' -e frame.number -e frame.len -e frame.cap_len -e frame.time_epoch \
		-e frame.interface_name -e udp.payload -e ip.checksum.status -e udp.checksum.status \
		>"$f.txt" 2>"$f.err"
	local rc=$?
	if [ $rc -ne 0 ]; then
		fail "tshark -r $(basename "$f"): exit $rc"
		cat "$f.err"
		return
	fi
	grep -iE 'cut short|damaged|corrupt|malformed' "$f.err" && fail "tshark complains about the file (above)"
	shift
	"$PYTHON3" - "$f.txt" "$@" <<'PY' || fail "$(basename "$f"): capture checks (above)"
import re, sys
path, n, flen, caplen, ifre, t0, t1 = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4]), sys.argv[5], int(sys.argv[6]), int(sys.argv[7])
rows = [l.rstrip("\n").split(";") for l in open(path) if l.strip()]
bad = 0
def check(ok, what):
    global bad
    print("%s %s" % ("ok:  " if ok else "FAIL:", what))
    bad += not ok
check(len(rows) == n, "%d frames in the capture (expected %d)" % (len(rows), n))
lens = sorted(set(int(r[1]) for r in rows))
check(lens == [flen], "frame lengths %s (expected %d)" % (lens, flen))
caps = sorted(set(int(r[2]) for r in rows))
check(caps == [caplen], "captured lengths %s (expected %d)" % (caps, caplen))
ts = [float(r[3]) for r in rows]
if ts:
    check(t0 - 60 <= min(ts) and max(ts) <= t1 + 60,
          "timestamps %.3f .. %.3f within a minute of the run (%d .. %d)" % (min(ts), max(ts), t0, t1))
    # Informational only: on this VM a capture through a ring pair across lcores
    # has (rarely, under host load) shown one step back of 0.2-25 us at a burst
    # boundary, not reproduced with instrumentation; not asserted until explained.
    back = [(i + 1, ts[i - 1], ts[i]) for i in range(1, len(ts)) if ts[i] < ts[i - 1]]
    print("%s timestamps never go backwards%s" % ("ok:  " if not back else "NOTE:",
          "" if not back else ": %d steps back, first at frame %d (%.9f -> %.9f)" % ((len(back),) + back[0])))
ifs = sorted(set(r[4] for r in rows))
check(len(ifs) == 1 and re.fullmatch(ifre, ifs[0]) is not None, "interface %s (expected /%s/)" % (ifs, ifre))
seqs = [int(r[5][:16], 16) if len(r[5]) >= 16 else -1 for r in rows]
check(seqs == list(range(n)), "sequence numbers 0..%d in order%s" % (n - 1, "" if seqs == list(range(n)) else ": first %s" % seqs[:8]))
if caplen == flen:
    st = sorted(set((r[6], r[7]) for r in rows))
    check(st == [("1", "1")], "IPv4 and UDP checksums good (status %s, 1 = good)" % st)
sys.exit(1 if bad else 0)
PY
}

N=1000
step "(a) gen(count=$N, size 128) -> sink_pcap, one lcore"
mkconf direct.json "$T/a.json" LG=1 LS=1 COUNT=$N RATE=0 SIZE=128 RING=1024 \
	SINK=sink_pcap SINK_OPTS="{\"path\": \"$T/a.pcapng\"}"
t0=$(date +%s)
lcrun a "$T/a.json" --duration 1 --no-live
t1=$(date +%s)
expect_rc 0 "capture"
rcheck "capture" -D N=$N 'ctr("sink", "packets") == N' 'ctr("sink", "bytes") == N * 128' \
	'ctr("sink", "truncated") == 0' 'total_drops() == 0' 'in_use == 0' 'r["leaked_objects"] == 0'
pcheck "$T/a.pcapng" $N 128 128 'lcpipe:sink' "$t0" "$t1"

step "(b) gen@1 -> wa@2 =(ring pair)=> wb@1 -> sink_pcap@2, size 1000, snaplen 100"
mkconf pair-chain.json "$T/b.json" LG=1 LA=2 LB=1 LS=2 COUNT=$N RATE=0 SIZE=1000 \
	SINK=sink_pcap SINK_OPTS="{\"path\": \"$T/b.pcapng\", \"snaplen\": 100}"
t0=$(date +%s)
lcrun b "$T/b.json" --duration 1 --no-live
t1=$(date +%s)
expect_rc 0 "capture through a ring pair"
rcheck "capture through a ring pair" -D N=$N 'ctr("sink", "packets") == N' \
	'ctr("sink", "truncated") == N' 'total_drops() == 0' 'in_use == 0'
# frames received on an ethdev port: that port's interface block (dpdk:<port>)
pcheck "$T/b.pcapng" $N 1000 100 'dpdk:[0-9]+' "$t0" "$t1"
finish
