#!/bin/bash
# port_ethdev's trust_checksums (doc/plugins.md): on a ring pair with the
# exchange's fault stage flipping one byte of 2 % of the IPv4 datagrams it
# sends, before they enter the ring (conf/fault-demo.json, drops, reordering
# and duplicates off; the client's fault stage passes frames untouched):
#   (a) default (verify): every corrupted frame is dropped by a checksum
#       (drop_ip_csum + drop_tcp_csum == exch_fault's b_corrupted) and the
#       stream arrives whole (metrics: no gap, no bad tick)
#   (b) trust_checksums on the client's port: the same frames reach the stack
#       with their checksums marked good, and no checksum drop is counted —
#       the option does what it says, which is why it is only for links that
#       cannot corrupt a frame of their own (the fault stage stands for one
#       that does)
#   (c) a clean ring pair with trust_checksums on both ports: every message
#       arrives, in order
. "$(dirname "$0")/lib.sh"

need_plugins tcp ws feedsim metrics fault port_ethdev
mkdir -p "$T/cfg"

# tconf OUT CORRUPT TRUST_CLIENT TRUST_EXCHANGE
tconf() {
	"$PYTHON3" - "$top_srcdir/conf/fault-demo.json" "$@" <<'PY' || fail "cannot write $2"
import json, sys
src, out, corrupt, tc, te = sys.argv[1:6]
c = json.load(open(src))
st = {s["name"]: s for s in c["stages"]}
for n in ("fault", "exch_fault"):
    o = st[n]["options"]
    o.update({"drop": 0, "reorder": 0, "duplicate": 0, "corrupt": 0})
st["exch_fault"]["options"]["b_corrupt"] = float(corrupt)
st["exchange"]["options"].update({"count": 20000, "close_when_done": True, "fragment_every": 0,
                                  "ping_interval_ms": 0, "sizes": "96:1"})
st["feed"]["options"].update({"reconnect_min_ms": 3600000, "reconnect_max_ms": 3600000, "ping_interval_ms": 0})
st["port"]["options"]["trust_checksums"] = tc == "1"
st["exch_port"]["options"]["trust_checksums"] = te == "1"
json.dump(c, open(out, "w"), indent=1)
PY
}

step "(a) verify (the default): corrupted frames die on a checksum, the stream is whole"
tconf "$T/cfg/verify.json" 0.02 0 0
demo_run verify "$T/cfg/verify.json" 8 "verify run"
rcheck "verify" 'ctr("exch_fault", "b_corrupted") > 0' \
	'ctr("tcp", "drop_ip_csum") + ctr("tcp", "drop_tcp_csum") == ctr("exch_fault", "b_corrupted")' \
	'ctr("stats", "msgs") == 20000' 'ctr("stats", "seq_gaps") == 0' 'ctr("stats", "bad_tick") == 0'
expect_nogrep "$ERR" "trust_checksums" "no trust notice by default"

step "(b) trust_checksums on the client's port: nothing is verified"
tconf "$T/cfg/trust.json" 0.02 1 0
new_prefix
lcrun trust "$T/cfg/trust.json" --duration 8 --no-live -- $(eal_base) -l 0,1
rcheck "trust" 'ctr("exch_fault", "b_corrupted") > 0' \
	'ctr("tcp", "drop_ip_csum") + ctr("tcp", "drop_tcp_csum") == 0'
expect_grep "$ERR" "net_ring_fdemo1: trust_checksums: received frames' checksums are not verified" "the trust notice"

step "(c) trust_checksums on a clean ring pair: every message, in order"
tconf "$T/cfg/clean.json" 0 1 1
demo_run clean "$T/cfg/clean.json" 8 "clean run"
rcheck "clean" 'ctr("stats", "msgs") == 20000' 'ctr("stats", "seq_gaps") == 0' 'ctr("stats", "bad_tick") == 0' \
	'ctr("tcp", "drop_ip_csum") + ctr("tcp", "drop_tcp_csum") == 0' 'ctr("exch_fault", "b_corrupted") == 0'
finish
