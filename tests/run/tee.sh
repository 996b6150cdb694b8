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

need_plugins tee gen sink_pcap sink_file
[ -f "$PLUGDIR/sink_check.so" ] && [ -f "$PLUGDIR/msg_src.so" ] || skip "the test plugins are not built ($PLUGDIR)"
N=20000

# trun TAG STAGES LINKS: a config of STAGES and LINKS (the bodies of the JSON
# lists) on lcores 1 and 2 with a new EAL prefix, run to its end
trun() {
	new_prefix
	cat >"$T/$1.json" <<JSON
{ "eal": ["--no-huge", "--no-pci", "--no-shconf", "-m", "256", "--lcores=0@0,1@1,2@0", "--file-prefix=$PFX"],
  "plugin_path": ["$PLUGDIR"],
  "engine": {"drain_timeout": 5},
  "stages": [
$2],
  "links": [$3] }
JSON
	lcrun "$1" "$T/$1.json" --no-live
	expect_rc 0 "run"
}

# tcopy TAG TEE_OPTS COPY_STAGE: trun of gen -> tee -> check, tee.copy -> COPY_STAGE (cap)
tcopy() {
	trun "$1" "$(cat <<JSON
    {"name": "gen", "plugin": "gen", "lcore": 1, "options": {"count": $N, "rate": 0, "size": 128}},
    {"name": "t", "plugin": "tee", "lcore": 1, "options": $2},
    {"name": "check", "plugin": "sink_check", "lcore": 1, "options": {"stop_after": $N}},
    $3
JSON
)" '"gen.out -> t.in", "t.out -> check.in", {"from": "t.copy", "to": "cap.in", "ring_size": 64}'
}

step "(a) every frame copied to a capture, the main path untouched"
tcopy a '{}' "{\"name\": \"cap\", \"plugin\": \"sink_pcap\", \"lcore\": 1, \"options\": {\"path\": \"$T/a.pcapng\"}}"
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
tcopy b '{"every": 10, "snaplen": 42}' "{\"name\": \"cap\", \"plugin\": \"sink_null\", \"lcore\": 1}"
rcheck "(b)" -D N=$N \
	'ctr("check", "seq_ok") == N' 'ctr("t", "copies") == N // 10' 'ctr("t", "copy_bytes") == 42 * (N // 10)' \
	'st("cap", "in") == N // 10' 'r["leaked_objects"] == 0'

step "(c) a tap that cannot keep up: copies dropped and counted, the main path whole"
tcopy c '{"copy_mbufs": 64}' "{\"name\": \"cap\", \"plugin\": \"sink_check\", \"lcore\": 2, \"options\": {\"stall_us\": 2000, \"log_max\": 0}}"
rcheck "(c)" -D N=$N \
	'ctr("check", "frames") == ctr("check", "seq_ok") == N' 'ctr("check", "seq_gap") == 0' \
	'ctr("t", "drop_no_copy") + ctr("t", "copy.drop_ring_full") > 0' \
	'ctr("t", "copies") + ctr("t", "drop_no_copy") == N' \
	'st("cap", "in") + ctr("t", "copy.drop_ring_full") + st("cap", "drops") >= ctr("t", "copies") - 64' \
	'r["leaked_objects"] == 0'

step "(d) messages: the copy file is the main file"
trun d "$(cat <<JSON
    {"name": "src", "plugin": "msg_src", "lcore": 1, "options": {"count": 2000}},
    {"name": "t", "plugin": "tee", "lcore": 1, "options": {"msg_copy_bytes": 32768, "msg_copies": 256}},
    {"name": "main", "plugin": "sink_file", "lcore": 1, "options": {"path": "$T/main.raw", "format": "raw"}},
    {"name": "copy", "plugin": "sink_file", "lcore": 1, "options": {"path": "$T/copy.raw", "format": "raw"}}
JSON
)" '"src.out -> t.msg_in", "t.msg_out -> main.in", "t.msg_copy -> copy.in"'
rcheck "(d)" 'ctr("t", "copies") == ctr("src", "msgs") == 2000' 'ctr("main", "msgs") == ctr("copy", "msgs") == 2000' \
	'ctr("t", "drop_copy_too_big") == ctr("t", "drop_no_copy") == 0' 'r["leaked_objects"] == 0'
if cmp -s "$T/main.raw" "$T/copy.raw"; then
	ok "copy.raw is main.raw ($(stat -c %s "$T/main.raw") bytes)"
else
	fail "copy.raw differs from main.raw"
fi
finish
