#!/bin/bash
# The fault stage (plugins/fault): seeded drop / duplicate / corrupt / reorder /
# delay on a frame path, both directions.
# (a) gen -> fault -> sink_check per direction, 100 000 frames each: a with
#     drop 10 %, duplicate 5 %, corrupt 2 %, reorder 5 %, delay 2 %; b with the
#     same except drop 0, corrupt 0, duplicate 10 % (per-direction overrides).
#     Every count lies within a wide statistical bound (10 standard deviations:
#     this cannot fail by chance, only when the probabilities are wrong); what the
#     sinks received adds up exactly (sent - dropped + duplicated); every held frame
#     was released and counted once; direction b (no corruption) delivered no
#     damaged frame although it duplicated and reordered (deep copies), and its
#     sink saw frames out of order; direction a's sink saw the damage; no mbuf
#     leaked.
# (b) the same config and seed again: identical action counters; (c) another
#     seed: different ones.
# (d) max_held 4 and a 10 s delay on half the frames: the oldest are released
#     early, the last ones when the engine drains, none by time; nothing lost.
# (e) frames "tcp": gen's UDP frames pass untouched (counted unmatched).
# (f) corrupt only, on a TCP byte stream (tcp_app -> tcp =(ring pair)= fault ->
#     tcp -> tcp_app, tests/kernel/plugins/tcp_app): every corrupted frame is
#     caught by the receiving tcp stage's checksum counters (drop_ip_csum +
#     drop_tcp_csum == <d>_corrupted), and the stream arrives intact (SHA-256).
. "$(dirname "$0")/lib.sh"

APPDIR=$top_builddir/tests/kernel/plugins/.libs # test-only plugins; tcp_app is plugins/tcp_app
"$LCPIPE" describe fault >/dev/null 2>&1 || skip "the fault plugin is not built"
[ -f "$PLUGDIR/sink_check.so" ] || skip "the sink_check test plugin is not built ($PLUGDIR)"

N=100000
MIX='"drop": 0.1, "duplicate": 0.05, "corrupt": 0.02, "reorder": 0.05, "delay": 0.02, "b_drop": 0, "b_corrupt": 0, "b_duplicate": 0.1'
# the counters that are decisions (a function of the seed and the frame index)
DECISIONS='drop_a_injected a_duplicated a_corrupted a_reordered a_delayed drop_b_injected b_duplicated b_corrupted b_reordered b_delayed'

decisions() { # the decision counters of stage "fault" in $REP, one line
	"$PYTHON3" -c 'import json, sys
c = json.load(open(sys.argv[1]))["stages"]["fault"]["counters"]
print(" ".join("%s=%d" % (k, c[k]) for k in sys.argv[2:]))' "$REP" $DECISIONS
}
# mix_run TAG SEED WHAT: N frames each way through the fault mix MIX seeded SEED
mix_run() {
	confrun fault-gen.json "$1" 1 "$3" COUNT=$N FAULT="{\"seed\": $2, $MIX}"
}

step "(a) 2 x $N frames through the fault mix"
mix_run a 7 "fault mix run"
# expected values and 10-sigma bounds: drop 10 % of N (sd 95); the other actions
# apply to the frames not dropped (a: 0.9 N): duplicate 5 % (sd 65), corrupt 2 %
# (sd 42), reorder 5 % (sd 65), delay 2 % of those not reordered (sd 41); b: N
# frames, duplicate 10 % (sd 95), reorder 5 % (sd 69), delay 2 % (sd 43)
rcheck "fault mix" -D N=$N \
	'r["drained"] == True' \
	'ctr("gena", "packets") == N and ctr("genb", "packets") == N' \
	'9000 <= ctr("fault", "drop_a_injected") <= 11000' \
	'3850 <= ctr("fault", "a_duplicated") <= 5150' \
	'1380 <= ctr("fault", "a_corrupted") <= 2220' \
	'3850 <= ctr("fault", "a_reordered") <= 5150' \
	'1300 <= ctr("fault", "a_delayed") <= 2110' \
	'ctr("fault", "drop_b_injected") == 0' \
	'ctr("fault", "b_corrupted") == 0' \
	'9050 <= ctr("fault", "b_duplicated") <= 10950' \
	'4310 <= ctr("fault", "b_reordered") <= 5690' \
	'1470 <= ctr("fault", "b_delayed") <= 2330' \
	'ctr("fault", "a_dup_nombuf") + ctr("fault", "b_dup_nombuf") == 0' \
	'ctr("fault", "a_corrupt_skipped") == 0' \
	'ctr("sinka", "frames") == N - ctr("fault", "drop_a_injected") + ctr("fault", "a_duplicated")' \
	'ctr("sinkb", "frames") == N + ctr("fault", "b_duplicated")' \
	'ctr("fault", "a_released_count") + ctr("fault", "a_released_time") + ctr("fault", "a_released_early") + ctr("fault", "a_released_drain") == ctr("fault", "a_reordered") + ctr("fault", "a_delayed")' \
	'ctr("fault", "b_released_count") + ctr("fault", "b_released_time") + ctr("fault", "b_released_early") + ctr("fault", "b_released_drain") == ctr("fault", "b_reordered") + ctr("fault", "b_delayed")' \
	'ctr("fault", "a_released_count") > 0 and ctr("fault", "a_released_time") > 0' \
	'ctr("fault", "drop_a_held_at_stop") + ctr("fault", "drop_b_held_at_stop") == 0' \
	'0 < ctr("fault", "a_held_peak") <= 256' \
	'drops("fault") == ctr("fault", "drop_a_injected")' \
	'ctr("sinkb", "bad_payload") + ctr("sinkb", "bad_frame") == 0' \
	'ctr("sinkb", "seq_old") > 0' \
	'0 < ctr("sinka", "bad_payload") + ctr("sinka", "bad_frame") <= ctr("fault", "a_corrupted")' \
	'in_use == 0' \
	'r["leaked_objects"] == 0'
D1=$(decisions)
say "decisions, seed 7: $D1"

step "(b) the same seed again: the same actions"
mix_run b 7 "fault mix run, same seed"
rcheck "same seed" 'in_use == 0' 'r["leaked_objects"] == 0'
D2=$(decisions)
if [ -n "$D1" ] && [ "$D1" = "$D2" ]; then
	ok "seed 7 twice: identical decision counters"
else
	fail "seed 7 twice: decision counters differ: '$D1' vs '$D2'"
fi

step "(c) another seed: other actions"
mix_run c 8 "fault mix run, seed 8"
rcheck "seed 8" '9000 <= ctr("fault", "drop_a_injected") <= 11000' 'in_use == 0' 'r["leaked_objects"] == 0'
D3=$(decisions)
if [ -n "$D3" ] && [ "$D1" != "$D3" ]; then
	ok "seeds 7 and 8: different decision counters"
else
	fail "seeds 7 and 8 gave the same decision counters: '$D3'"
fi

step "(d) max_held 4, half the frames delayed 10 s: early and drain releases"
M=10000
confrun fault-gen.json d 0.5 "max_held run" COUNT=$M \
	FAULT='{"seed": 3, "a_delay": 0.5, "delay_us": 10000000, "max_held": 4}'
rcheck "max_held" -D M=$M \
	'4000 <= ctr("fault", "a_delayed") <= 6000' \
	'ctr("fault", "a_held_peak") == 4' \
	'ctr("fault", "a_released_early") == ctr("fault", "a_delayed") - ctr("fault", "a_released_drain")' \
	'1 <= ctr("fault", "a_released_drain") <= 4' \
	'ctr("fault", "a_released_time") == 0' \
	'ctr("fault", "drop_a_held_at_stop") == 0' \
	'ctr("sinka", "frames") == M' \
	'ctr("sinkb", "frames") == M' \
	'ctr("fault", "b_delayed") == 0' \
	'in_use == 0' 'r["leaked_objects"] == 0'

step "(e) frames \"tcp\": UDP frames pass untouched"
confrun fault-gen.json e 0.5 "frames tcp run" COUNT=$M FAULT='{"drop": 1, "frames": "tcp"}'
rcheck "frames tcp" -D M=$M \
	'ctr("fault", "a_unmatched") == M and ctr("fault", "b_unmatched") == M' \
	'ctr("fault", "drop_a_injected") + ctr("fault", "drop_b_injected") == 0' \
	'ctr("sinka", "frames") == M and ctr("sinka", "seq_ok") == M' \
	'in_use == 0'

step "(f) corrupt only, on a TCP byte stream: the receivers' checksums catch every one"
if [ ! -f "$top_builddir/plugins/tcp_app/.libs/tcp_app.so" ] || ! "$LCPIPE" describe tcp >/dev/null 2>&1; then
	fail "tcp_app ($APPDIR) or the tcp plugin is not built"
else
	head -c 2097152 /dev/urandom >"$T/f.bin" || fail "cannot make the file"
	SHA=$(sha256sum "$T/f.bin" | cut -d' ' -f1)
	mkconf fault-xfer.json "$T/f.json" APPDIR="$APPDIR" DURATION=30 \
		FAULT_A='{}' FAULT_B='{"seed": 5, "corrupt": 0.02}' \
		APP_A="{\"mode\": \"send\", \"connect\": \"10.98.0.2:7000\", \"file\": \"$T/f.bin\", \"expect\": 1, \"send_mbufs\": 1024, \"result\": \"$T/f.a.json\"}" \
		APP_B="{\"mode\": \"recv\", \"listen\": 7000, \"result\": \"$T/f.b.json\"}"
	lcrun f "$T/f.json" --no-live
	expect_rc 0 "corrupt-only transfer"
	# direction a of fault_b feeds tcp_b directly; direction b reaches tcp_a
	# through the ring pair, where frames in flight at stop are freed by port_a
	rcheck "corrupt caught" \
		'r["stop_reason"] == "tcp_app: done"' \
		'ctr("fault_b", "a_corrupted") > 0 and ctr("fault_b", "b_corrupted") > 0' \
		'ctr("tcp_b", "drop_ip_csum") + ctr("tcp_b", "drop_tcp_csum") == ctr("fault_b", "a_corrupted")' \
		'ctr("fault_b", "b_corrupted") - ctr("port_a", "drop_rx_shutdown") <= ctr("tcp_a", "drop_ip_csum") + ctr("tcp_a", "drop_tcp_csum") <= ctr("fault_b", "b_corrupted")' \
		'ctr("tcp_a", "tcp_retransmits") > 0' \
		'in_use == 0' 'r["leaked_objects"] == 0'
	say "+ compare the bytes tcp_app(b) received with the file"
	"$PYTHON3" - "$T/f.b.json" "$SHA" 2097152 <<'PY' || fail "the stream through corruption (above)"
import json, sys
c = json.load(open(sys.argv[1]))["connections"][0]
ok = c["bytes_in"] == int(sys.argv[3]) and c["sha256_in"] == sys.argv[2]
print("%s: received %d bytes, sha256 %s (want %s)" % ("ok" if ok else "FAIL", c["bytes_in"], c["sha256_in"], sys.argv[2]))
sys.exit(0 if ok else 1)
PY
fi
finish
