#!/bin/bash
# tee (plugins/tee): tapping a live link without touching its objects.
# (a) frames: gen -> tee -> sink_check (the main path, sequence-checked, on
#     lcore 1) with tee.copy -> sink_pcap: the main path gets all N frames in
#     order and nothing dropped; the capture holds N frames whose payloads are
#     the sequence numbers 0..N-1 (read back with tshark when there is one);
# (b) every 10, snaplen 42: N/10 copies of 42 bytes, the main path still N;
# (c) a tap that cannot keep up (a copy pool of 64, the copies to a stalling
#     sink_check on another lcore): copies are dropped and counted
#     (drop_no_copy, or the ring's drop), the main path still gets all N in order;
# (d) messages: msg_src -> tee -> sink_file (main) with tee.msg_copy ->
#     sink_file (copy): both files the same, byte for byte.
. "$(dirname "$0")/lib.sh"

for p in tee gen sink_pcap sink_file; do
	[ -f "$top_builddir/plugins/$p/.libs/$p.so" ] || skip "plugins/$p not built"
done
[ -f "$PLUGDIR/sink_check.so" ] && [ -f "$PLUGDIR/msg_src.so" ] || skip "the test plugins are not built ($PLUGDIR)"
N=20000

# tconf OUT TEE_OPTS COPY_STAGE COPY_LCORE: gen -> tee -> check, tee.copy -> COPY_STAGE
tconf() {
	new_prefix
	cat >"$1" <<JSON
{ "eal": ["--no-huge", "--no-pci", "--no-shconf", "-m", "256", "--lcores=0@0,1@1,2@0", "--file-prefix=$PFX"],
  "plugin_path": ["$PLUGDIR"],
  "engine": {"drain_timeout": 5},
  "stages": [
    {"name": "gen", "plugin": "gen", "lcore": 1, "options": {"count": $N, "rate": 0, "size": 128}},
    {"name": "t", "plugin": "tee", "lcore": 1, "options": $2},
    {"name": "check", "plugin": "sink_check", "lcore": 1, "options": {"stop_after": $N}},
    $3],
  "links": ["gen.out -> t.in", "t.out -> check.in", {"from": "t.copy", "to": "cap.in", "ring_size": 64}] }
JSON
}

step "(a) every frame copied to a capture, the main path untouched"
tconf "$T/a.json" '{}' "{\"name\": \"cap\", \"plugin\": \"sink_pcap\", \"lcore\": 1, \"options\": {\"path\": \"$T/a.pcapng\"}}"
lcrun a "$T/a.json" --no-live
expect_rc 0 "run"
rcheck "(a)" -D N=$N \
	'ctr("check", "frames") == ctr("check", "seq_ok") == N' 'ctr("check", "seq_gap") == ctr("check", "bad_frame") == 0' \
	'ctr("t", "copies") == N' 'ctr("t", "copy_bytes") == 128 * N' 'ctr("t", "drop_no_copy") == 0' \
	'st("cap", "in") == N' 'total_drops() == 0' 'r["leaked_objects"] == 0'
if [ -n "${TSHARK:-}" ] && [ -x "$TSHARK" ]; then
	"$TSHARK" -r "$T/a.pcapng" -T fields -e data 2>/dev/null | cut -c1-16 >"$T/a.seqs"
	"$PYTHON3" - "$T/a.seqs" $N <<'PY' && ok "the capture: $N frames, sequence numbers 0..N-1 in order" || fail "the capture's frames (above)"
import sys
s = [int(l, 16) for l in open(sys.argv[1]) if l.strip()]
n = int(sys.argv[2])
assert s == list(range(n)), (len(s), s[:5])
PY
fi

step "(b) every 10th frame, cut to 42 bytes"
tconf "$T/b.json" '{"every": 10, "snaplen": 42}' "{\"name\": \"cap\", \"plugin\": \"sink_null\", \"lcore\": 1}"
lcrun b "$T/b.json" --no-live
expect_rc 0 "run"
rcheck "(b)" -D N=$N \
	'ctr("check", "seq_ok") == N' 'ctr("t", "copies") == N // 10' 'ctr("t", "copy_bytes") == 42 * (N // 10)' \
	'st("cap", "in") == N // 10' 'r["leaked_objects"] == 0'

step "(c) a tap that cannot keep up: copies dropped and counted, the main path whole"
tconf "$T/c.json" '{"copy_mbufs": 64}' "{\"name\": \"cap\", \"plugin\": \"sink_check\", \"lcore\": 2, \"options\": {\"stall_us\": 2000, \"log_max\": 0}}"
lcrun c "$T/c.json" --no-live
expect_rc 0 "run"
rcheck "(c)" -D N=$N \
	'ctr("check", "frames") == ctr("check", "seq_ok") == N' 'ctr("check", "seq_gap") == 0' \
	'ctr("t", "drop_no_copy") + ctr("t", "copy.drop_ring_full") > 0' \
	'ctr("t", "copies") + ctr("t", "drop_no_copy") == N' \
	'st("cap", "in") + ctr("t", "copy.drop_ring_full") + st("cap", "drops") >= ctr("t", "copies") - 64' \
	'r["leaked_objects"] == 0'

step "(d) messages: the copy file is the main file"
new_prefix
cat >"$T/d.json" <<JSON
{ "eal": ["--no-huge", "--no-pci", "--no-shconf", "-m", "256", "--lcores=0@0,1@1,2@0", "--file-prefix=$PFX"],
  "plugin_path": ["$PLUGDIR"],
  "engine": {"drain_timeout": 5},
  "stages": [
    {"name": "src", "plugin": "msg_src", "lcore": 1, "options": {"count": 2000}},
    {"name": "t", "plugin": "tee", "lcore": 1, "options": {"msg_copy_bytes": 32768, "msg_copies": 256}},
    {"name": "main", "plugin": "sink_file", "lcore": 1, "options": {"path": "$T/main.raw", "format": "raw"}},
    {"name": "copy", "plugin": "sink_file", "lcore": 1, "options": {"path": "$T/copy.raw", "format": "raw"}}],
  "links": ["src.out -> t.msg_in", "t.msg_out -> main.in", "t.msg_copy -> copy.in"] }
JSON
lcrun d "$T/d.json" --no-live
expect_rc 0 "run"
rcheck "(d)" 'ctr("t", "copies") == ctr("src", "msgs") == 2000' 'ctr("main", "msgs") == ctr("copy", "msgs") == 2000' \
	'ctr("t", "drop_copy_too_big") == ctr("t", "drop_no_copy") == 0' 'r["leaked_objects"] == 0'
if cmp -s "$T/main.raw" "$T/copy.raw"; then
	ok "copy.raw is main.raw ($(stat -c %s "$T/main.raw") bytes)"
else
	fail "copy.raw differs from main.raw"
fi
finish
