#!/bin/bash
# sink_file: msg objects to a file, read back and compared with what was sent.
# msg_src (test plugin, tests/run/plugins/msg_src.c) emits N messages of every
# payload kind (JSON ticks and arrays, pretty JSON, text with quotes, backslashes,
# control characters and UTF-8, text that is not UTF-8, empty, binary with zero
# bytes, another opcode, and ~20-30 KB ones) and records each in a manifest;
# tests/run/msgcheck.py checks the file against it.
# (a) jsonl, one lcore, default 1 MiB buffer: every line is a JSON object, payloads
#     round-trip exactly, conn/op/len/rx_tsc as sent, rx_ns from the start TSC;
# (b) jsonl across lcores with a 4 KiB buffer (records bigger than the buffer are
#     written in pieces); (c) embed_json false; (d) raw, 4 KiB buffer, across
#     lcores: records parse, payload SHA-256 equal; (e) raw with append: two runs
#     into one file; (f) a device that fails every write (/dev/full): write_errors,
#     every message in drop_write_error, nothing leaked; (g) raw and jsonl under a
#     100 KiB file size limit (short writes, then EFBIG): the file is cut back to
#     whole records, holds exactly the messages counted in msgs, in order, and
#     msgs + drop_write_error = N; (h) a path that cannot be opened: the run fails
#     at start, the error names the stage and the path; (e2) payload: every
#     payload and a newline, byte for byte, and ticks one JSON object per line.
. "$(dirname "$0")/lib.sh"

"$LCPIPE" describe sink_file >/dev/null 2>&1 || skip "the sink_file plugin is not built"
[ -f "$PLUGDIR/msg_src.so" ] || skip "the msg_src test plugin is not built ($PLUGDIR)"

N=1000
# run_file TAG LG LS SRC_EXTRA SINK_OPTS: msg_src(count $COUNT or N, manifest
# $T/TAG.manifest, SRC_EXTRA options) -> sink_file(SINK_OPTS)
run_file() {
	local tag=$1 lg=$2 ls=$3 src_extra=$4 sink_opts=$5
	mkconf msg-file.json "$T/$tag.json" LG="$lg" LS="$ls" SINK=sink_file \
		SRC_OPTS="{\"count\": ${COUNT:-$N}, \"manifest\": \"$T/$tag.manifest\"$src_extra}" \
		SINK_OPTS="$sink_opts"
	lcrun "$tag" "$T/$tag.json" --duration 20 --no-live
}

# the counters of a clean run: every message written, nothing dropped or leaked
rcheck_clean() {
	local what=$1 n=$2
	rcheck "$what" -D N="$n" 'ctr("src", "msgs") == N' 'ctr("sink", "in.in") == N' \
		'ctr("sink", "msgs") == N' 'ctr("sink", "bytes") == ctr("src", "bytes")' \
		'ctr("sink", "write_errors") == 0' 'ctr("sink", "drop_write_error") == 0' \
		'total_drops() == 0' 'in_use == 0' 'r["leaked_objects"] == 0' \
		'r["stop_reason"] == "msg_src: all messages out"'
}

msgcheck() {
	say "+ msgcheck.py $*"
	"$PYTHON3" "$RUN_SRC/msgcheck.py" "$@" || fail "msgcheck.py $1 $(basename "$2") (above)"
}

step "(a) msg_src -> sink_file jsonl, one lcore, default buffer"
run_file a 1 1 "" "{\"path\": \"$T/a.jsonl\"}"
expect_rc 0 "jsonl"
rcheck_clean "jsonl" $N
expect_grep "$ERR" "\[sink_file:sink\] writing $T/a.jsonl \(jsonl" "start line names the stage and the path"
msgcheck jsonl "$T/a.jsonl" "$T/a.manifest" --log "$ERR"

step "(b) jsonl across lcores, flush_bytes 4096 (big records in pieces)"
run_file b 1 2 ", \"burst\": 7" "{\"path\": \"$T/b.jsonl\", \"format\": \"jsonl\", \"flush_bytes\": 4096}"
expect_rc 0 "jsonl, small buffer"
rcheck_clean "jsonl, small buffer" $N
msgcheck jsonl "$T/b.jsonl" "$T/b.manifest" --log "$ERR"

step "(c) jsonl, embed_json false: JSON text as strings"
run_file c 1 1 ", \"kinds\": \"japJt\"" "{\"path\": \"$T/c.jsonl\", \"embed_json\": false}"
expect_rc 0 "jsonl, no embedding"
rcheck_clean "jsonl, no embedding" $N
msgcheck jsonl "$T/c.jsonl" "$T/c.manifest" --no-embed --log "$ERR"

step "(d) raw across lcores, flush_bytes 4096"
run_file d 1 2 "" "{\"path\": \"$T/d.raw\", \"format\": \"raw\", \"flush_bytes\": 4096}"
expect_rc 0 "raw"
rcheck_clean "raw" $N
msgcheck raw "$T/d.raw" "$T/d.manifest"

step "(e) raw, append: two runs into one file"
run_file e1 1 1 "" "{\"path\": \"$T/e.raw\", \"format\": \"raw\", \"append\": true}"
expect_rc 0 "raw, append, first run"
rcheck_clean "raw, append, first run" $N
run_file e2 1 1 ", \"conn_base\": 1099511627776" "{\"path\": \"$T/e.raw\", \"format\": \"raw\", \"append\": true}"
expect_rc 0 "raw, append, second run"
rcheck_clean "raw, append, second run" $N
msgcheck raw "$T/e.raw" "$T/e1.manifest" "$T/e2.manifest"
# and without append the file starts over
COUNT=10 run_file e3 1 1 "" "{\"path\": \"$T/e.raw\", \"format\": \"raw\"}"
expect_rc 0 "raw, truncating"
msgcheck raw "$T/e.raw" "$T/e3.manifest"

step "(e2) payload: each payload and a newline, 4 KiB buffer, across lcores"
# issue 19 item 6: the feed's own text, one message per line (jq, grep); every
# kind, 30 KB binaries included (bigger than the buffer: one writev with the
# newline), byte for byte
run_file p 1 2 "" "{\"path\": \"$T/p.txt\", \"format\": \"payload\", \"flush_bytes\": 4096}"
expect_rc 0 "payload"
rcheck_clean "payload" $N
msgcheck payload "$T/p.txt" "$T/p.manifest"
COUNT=50 run_file p2 1 1 ", \"kinds\": \"j\"" "{\"path\": \"$T/p2.txt\", \"format\": \"payload\"}"
expect_rc 0 "payload, ticks"
[ "$(wc -l <"$T/p2.txt")" -eq 50 ] && "$PYTHON3" -c 'import json, sys; [json.loads(l) for l in open(sys.argv[1])]' "$T/p2.txt" &&
	ok "50 ticks, one JSON object per line" || fail "the ticks file is not one JSON object per line"

step "(f) every write fails (/dev/full): counted, nothing leaked"
if [ -w /dev/full ]; then
	run_file f 1 1 "" "{\"path\": \"/dev/full\", \"flush_bytes\": 65536}"
	expect_rc 0 "write errors do not fail the run"
	rcheck "write errors" -D N=$N 'ctr("sink", "in.in") == N' 'ctr("sink", "msgs") == 0' \
		'ctr("sink", "bytes") == 0' 'ctr("sink", "write_errors") >= 1' \
		'ctr("sink", "drop_write_error") == N' 'drops("sink") == N' 'in_use == 0' \
		'r["leaked_objects"] == 0'
	expect_grep "$ERR" "\[sink_file:sink\] (error: )?write to /dev/full failed: No space left on device" \
		"the error names the stage and the path"
else
	say "(skipped: /dev/full is not writable here)"
fi

step "(g) a file size limit (RLIMIT_FSIZE): partial writes, the file cut back to whole records"
# The limit applies to every file of the process, msg_src's manifest included, so
# the reference manifest comes from a run without it (same msg_src options: same
# messages, other rx_tsc). SIGXFSZ is ignored, so write(2) returns short, then EFBIG.
printf '#!/bin/bash\ntrap "" XFSZ\nulimit -f 100 || exit 99 # KiB\nexec "%s" "$@"\n' "$LCPIPE" >"$T/lcpipe-fsize"
chmod +x "$T/lcpipe-fsize"
for fmt in raw jsonl; do
	run_file "h0-$fmt" 1 1 "" "{\"path\": \"$T/h0.$fmt\", \"format\": \"$fmt\"}"
	expect_rc 0 "reference run ($fmt)"
	mkconf msg-file.json "$T/h-$fmt.json" LG=1 LS=1 SINK=sink_file SRC_OPTS="{\"count\": $N}" \
		SINK_OPTS="{\"path\": \"$T/h.$fmt\", \"format\": \"$fmt\", \"flush_bytes\": 4096}"
	LCPIPE=$T/lcpipe-fsize lcrun "h-$fmt" "$T/h-$fmt.json" --duration 20 --no-live
	expect_rc 0 "$fmt under a 100 KiB file size limit"
	rcheck "$fmt under a file size limit" -D N=$N 'ctr("sink", "in.in") == N' \
		'ctr("sink", "msgs") + ctr("sink", "drop_write_error") == N' 'ctr("sink", "msgs") > 0' \
		'ctr("sink", "write_errors") >= 1' 'in_use == 0' 'r["leaked_objects"] == 0'
	expect_grep "$ERR" "\[sink_file:sink\] (error: )?write to $T/h.$fmt failed: File too large" \
		"the error names the stage and the path"
	written=$("$PYTHON3" -c 'import json, sys; print(json.load(open(sys.argv[1]))["stages"]["sink"]["counters"]["msgs"])' "$REP" 2>/dev/null)
	msgcheck "$fmt" "$T/h.$fmt" "$T/h0-$fmt.manifest" --no-tsc --subsequence --count "${written:--1}"
	say "$(wc -c <"$T/h.$fmt") bytes in h.$fmt"
done

step "(h) a path that cannot be opened: the run fails at start"
run_file g 1 1 "" "{\"path\": \"$T/no/such/dir/g.jsonl\"}"
expect_rc 1 "cannot open"
expect_grep "$ERR" "\[sink_file:sink\] (error: )?cannot open $T/no/such/dir/g.jsonl for writing: No such file or directory" \
	"the error names the stage and the path"
finish
