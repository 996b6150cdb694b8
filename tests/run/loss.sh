#!/bin/bash
# Loss, in-process: lcpipe's TCP/IP stack against itself over a ring pair, with a
# fault stage (plugins/fault) between each port_ethdev and its tcp stage, both
# directions: 1 % drop, 1 % reorder, 0.5 % duplicate, 0.1 % corrupt at each of
# the four fault points (so each direction of the path crosses two of them).
# (a) byte stream: tcp_app (send, tests/kernel/plugins) sends a random file to a
#     tcp_app in echo mode, which sends every byte back: both directions carry the
#     whole file through the faults. Asserts: the echo side and the sender both
#     received exactly the file (bytes, SHA-256); no reset / timeout / refused send;
#     each sender retransmitted; each receiver queued out-of-order segments and saw
#     duplicates; each receiver's checksum drops (drop_ip_csum + drop_tcp_csum) are
#     at least what the fault stage right in front of it corrupted and at most that
#     plus what the far fault corrupted plus what the near one duplicated; the
#     faults did inject every kind; nothing leaked.
# (b) the demo (conf/demo.json's shape: feedsim -> tcp -> port =(ring pair)= port
#     -> tcp -> ws -> metrics) with the same faults, COUNT messages, then the
#     exchange closes (1000) and the client does not reconnect; the test then stops
#     lcpipe (SIGTERM). Asserts: every message arrived (feedsim sent, ws received,
#     metrics counted COUNT, same payload bytes, the SHA-256 of the payloads the
#     exchange sent (feedsim hash_payloads) equal to that of what reached the end
#     of the pipeline (msg_hash, tests/kernel/plugins)), zero sequence gaps, zero
#     duplicates, one connection, no protocol failure; the exchange's tcp
#     retransmitted; checksum drops bounded as in (a); nothing leaked.
# Prints the figures doc/reliability.md section 2 quotes.
. "$(dirname "$0")/lib.sh"

APPDIR=$top_builddir/tests/kernel/plugins/.libs # test-only plugins; tcp_app is plugins/tcp_app
for p in fault tcp ws feedsim metrics; do
	"$LCPIPE" describe $p >/dev/null 2>&1 || skip "the $p plugin is not built"
done
[ -f "$top_builddir/plugins/tcp_app/.libs/tcp_app.so" ] || { fail "tcp_app not built ($APPDIR; make check builds it)"; finish; }

MIX='"drop": 0.01, "reorder": 0.01, "duplicate": 0.005, "corrupt": 0.001'
SIZE=${LOSS_BYTES:-4194304}
COUNT=${LOSS_MSGS:-20000}

# csum_bounds RECV_TCP NEAR_FAULT FAR_FAULT: the checksum drops of RECV_TCP, whose
# frames come through FAR_FAULT's direction b and then NEAR_FAULT's direction a
csum_bounds() {
	local t=$1 near=$2 far=$3
	printf '%s\n' \
		"ctr(\"$near\", \"a_corrupted\") - ctr(\"$near\", \"drop_a_held_at_stop\") <= ctr(\"$t\", \"drop_ip_csum\") + ctr(\"$t\", \"drop_tcp_csum\") <= ctr(\"$near\", \"a_corrupted\") + ctr(\"$far\", \"b_corrupted\") + ctr(\"$near\", \"a_duplicated\")"
}

# injected FAULT1 FAULT2: every kind was injected by the two stages together
injected() {
	local k
	for k in drop_a_injected drop_b_injected a_reordered b_reordered a_duplicated b_duplicated; do
		printf '%s\n' "ctr(\"$1\", \"$k\") + ctr(\"$2\", \"$k\") > 0"
	done
	printf '%s\n' "ctr(\"$1\", \"a_corrupted\") + ctr(\"$1\", \"b_corrupted\") + ctr(\"$2\", \"a_corrupted\") + ctr(\"$2\", \"b_corrupted\") > 0"
}

# figures F1 F2 TCP...: one line per fault kind and the retransmissions, from $REP
figures() {
	"$PYTHON3" - "$REP" "$@" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
S = r["stages"]
f = sys.argv[2:4]
c = lambda s, k: S[s]["counters"].get(k, 0)
kinds = [("dropped", "drop_%s_injected"), ("reordered", "%s_reordered"), ("duplicated", "%s_duplicated"),
         ("corrupted", "%s_corrupted")]
print("figures: run %.2f s; injected (both fault stages, both directions): %s" % (
      r.get("duration_s", 0), ", ".join("%s %d" % (n, sum(c(s, k % d) for s in f for d in "ab")) for n, k in kinds)))
for t in sys.argv[4:]:
    print("figures: %s: retransmits %d (fast %d, rto %d), segs in %d out %d, ooo %d, dup segs %d, csum drops %d" % (
          t, c(t, "tcp_retransmits"), c(t, "tcp_fast_retransmits"), c(t, "tcp_rto_expired"), c(t, "tcp_segs_in"),
          c(t, "tcp_segs_out"), c(t, "tcp_ooo_segs"), c(t, "tcp_dup_segs"), c(t, "drop_ip_csum") + c(t, "drop_tcp_csum")))
PY
}

step "(a) $SIZE bytes each way: tcp_app send -> echo -> back, through the faults"
head -c "$SIZE" /dev/urandom >"$T/a.bin" || { fail "cannot make the file"; finish; }
SHA=$(sha256sum "$T/a.bin" | cut -d' ' -f1)
mkconf fault-xfer.json "$T/a.json" APPDIR="$APPDIR" DURATION=50 \
	FAULT_A="{\"seed\": 21, $MIX}" FAULT_B="{\"seed\": 121, $MIX}" \
	APP_A="{\"mode\": \"send\", \"connect\": \"10.98.0.2:7000\", \"file\": \"$T/a.bin\", \"expect\": 1, \"send_mbufs\": 2048, \"result\": \"$T/a.a.json\"}" \
	APP_B="{\"mode\": \"echo\", \"listen\": 7000, \"result\": \"$T/a.b.json\"}"
LCP_TIMEOUT=80 lcrun a "$T/a.json" --no-live
expect_rc 0 "echo transfer through faults"
mapfile -t CB < <(csum_bounds tcp_b fault_b fault_a; csum_bounds tcp_a fault_a fault_b; injected fault_a fault_b)
rcheck "echo transfer through faults" \
	'r["stop_reason"] == "tcp_app: done"' \
	'ctr("tcp_a", "tcp_retransmits") > 0 and ctr("tcp_b", "tcp_retransmits") > 0' \
	'ctr("tcp_a", "tcp_ooo_segs") > 0 and ctr("tcp_b", "tcp_ooo_segs") > 0' \
	'ctr("tcp_a", "tcp_dup_segs") > 0 and ctr("tcp_b", "tcp_dup_segs") > 0' \
	"${CB[@]}" \
	'ctr("app_a", "refused_sends") == 0' \
	'in_use == 0' 'r["leaked_objects"] == 0'
figures fault_a fault_b tcp_a tcp_b
"$PYTHON3" - "$T/a.a.json" "$T/a.b.json" "$SHA" "$SIZE" <<'PY' || fail "(a) the byte streams (above)"
import json, sys
sha, size, bad = sys.argv[3], int(sys.argv[4]), 0
for who, path in (("sender (the echo)", sys.argv[1]), ("echo side", sys.argv[2])):
    c = json.load(open(path))["connections"][0]
    ev = c["events"]
    good = c["bytes_in"] == size and c["sha256_in"] == sha and c["bytes_out"] == size
    good = good and ev["closed"] == 1 and ev["reset"] == 0 and ev["timeout"] == 0 and ev["error"] == 0
    print("%s: %s received %d bytes sha256 %s, sent %d, events %s" % (
          "ok" if good else "FAIL", who, c["bytes_in"], c["sha256_in"], c["bytes_out"], ev))
    bad += not good
sys.exit(1 if bad else 0)
PY

step "(b) the demo through the faults: $COUNT messages"
# the client must not reconnect (a second stream would restart the sequences)
mkconf fault-demo.json "$T/b.json" DURATION=50 COUNT=$COUNT APPDIR="$APPDIR" \
	FAULT_A="{\"seed\": 11, $MIX}" FAULT_B="{\"seed\": 12, $MIX}"
LCP_TIMEOUT=80 lcstart b "$T/b.json" --no-live
if wait_for "$ERR" 'server closed with 1000' 45; then
	ok "the exchange sent $COUNT messages and closed"
else
	fail "no close by the exchange within 45 s"
fi
stop_pid "$PID"
wait "$PID" 2>/dev/null
RC=0
[ -s "$REP" ] || fail "no report after SIGTERM"
mapfile -t CB < <(csum_bounds tcp fault exch_fault; csum_bounds exch_tcp exch_fault fault; injected fault exch_fault)
rcheck "demo through faults" -D N=$COUNT \
	'ctr("exchange", "msgs") == N' \
	'ctr("feed", "msgs") == N' \
	'ctr("stats", "msgs") == N and ctr("stats", "ticks") == N' \
	'ctr("feed", "msg_bytes") == ctr("exchange", "msg_bytes")' \
	'ctr("stats", "seq_gaps") == 0 and ctr("stats", "gap_events") == 0' \
	'ctr("stats", "seq_dups") == 0' \
	'ctr("stats", "symbols") == 100' \
	'ctr("feed", "opens") == 1 and ctr("exchange", "handshakes") == 1' \
	'ctr("feed", "fail_protocol_1002") + ctr("feed", "fail_bad_utf8_1007") + ctr("feed", "fail_too_big_1009") + ctr("feed", "fail_pong_timeout") == 0' \
	'ctr("exchange", "fragmented_msgs") > 0 and ctr("feed", "pongs_tx") > 0' \
	'ctr("exch_tcp", "tcp_retransmits") > 0' \
	'ctr("tcp", "tcp_ooo_segs") > 0 and ctr("tcp", "tcp_dup_segs") > 0' \
	"${CB[@]}" \
	'in_use == 0' 'r["leaked_objects"] == 0'
SENT=$(sed -n 's/.*\[feedsim:exchange\] client 0x[0-9a-f]*: \([0-9]*\) messages, \([0-9]*\) payload bytes, sha256 \([0-9a-f]*\).*/\1 \2 \3/p' "$OUT" "$ERR" | tail -n 1)
GOT=$("$PYTHON3" -c 'import json,sys; h=json.load(open(sys.argv[1])); print(h["msgs"], h["bytes"], h["sha256"])' "$T/b.hash.json" 2>/dev/null)
if [ -n "$SENT" ] && [ "$SENT" = "$GOT" ]; then
	ok "payload SHA-256: the exchange sent and the sink received the same $SENT"
else
	fail "payload SHA-256: the exchange sent \"$SENT\", the sink received \"$GOT\""
fi
figures fault exch_fault exch_tcp tcp
say "figures: $(grep -h 'metrics:stats' "$OUT" "$ERR" | tail -n 1)"
finish
