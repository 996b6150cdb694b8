#!/bin/bash
# wss end to end in one process: conf/demo-wss.json (feedsim serving TLS with
# conf/tls/server.pem, the ws stage verifying it against conf/tls/ca.pem),
# lcpipe's own TCP on both sides of a net_ring pair. Asserts:
#   - byte-exact delivery: msg_hash's SHA-256 over the payloads the ws stage
#     delivered equals the one feedsim logs for what it sent (hash_payloads);
#     zero gaps; TLS counters moved (handshakes, records, bytes both ways);
#   - TLS plaintext buffers: with one buffer of a whole record the records
#     beyond it go into engine mbufs (rx_buffers_empty), with
#     rx_buffer_size 0 all of them; byte-exact either way;
#   - relative paths in the config are taken from the config file's directory
#     (the run starts in another directory);
#   - resumption: feedsim closes after N messages, ws reconnects, every
#     handshake after the first resumes with the ticket;
#   - refusals: a name the certificate does not carry (tls_server_name) fails
#     verification (tls_fail_verify, feedsim sees the alert), no open; the same
#     with insecure opens, with the warning logged; TLS 1.3 only against a
#     server of TLS 1.2 only fails by the server's alert; a missing ca_file
#     stops the run at init with the file's name; feedsim with tls_cert but no
#     tls_key is refused by `lcpipe check`, so is a tls_min_version above
#     tls_max_version on either side; a server that resets TCP during
#     the TLS handshake counts as a TLS failure (tls_fail_protocol).
. "$(dirname "$0")/lib.sh"

need_plugins tcp ws feedsim metrics
need_msg_hash

# wss_conf OUT PYTHON-EDITS: conf/demo-wss.json copied next to conf/ (so that its
# relative tls/ paths resolve), with msg_hash as the sink and EDITS applied to
# the stage dicts ex (feedsim), ws (ws)
wss_conf() {
	local out=$1 edits=$2
	"$PYTHON3" - "$top_srcdir/conf/demo-wss.json" "$out" "$HASHDIR" "$T" "$edits" <<'PY' || fail "cannot write $out"
import json, os, sys
src, out, hashdir, tmp, edits = sys.argv[1:6]
c = json.load(open(src))
conf_dir = os.path.dirname(os.path.abspath(src))
c["plugin_path"] = [hashdir]
st = {s["name"]: s for s in c["stages"]}
ex, ws = st["exchange"]["options"], st["feed"]["options"]
# the paths stay relative: the copy lives beside a symlink to conf/tls
ex.update({"hash_payloads": True})
c["stages"] = [s for s in c["stages"] if s["name"] != "sink"]
c["stages"].append({"name": "hash", "plugin": "msg_hash", "lcore": 1,
                    "options": {"result": os.path.join(tmp, os.path.basename(out) + ".hash.json")}})
c["links"] = [l.replace("stats.out -> sink.msg", "stats.out -> hash.in") for l in c["links"]]
exec(edits)
json.dump(c, open(out, "w"), indent=1)
PY
}

# hash_check HASH_JSON: msg_hash's result of the last run equals what feedsim
# logged (in $ERR) for the one client it served 30000 messages
hash_check() {
	"$PYTHON3" - "$ERR" "$1" <<'PY' && ok "msg_hash SHA-256 == feedsim's" || fail "payload hashes differ (above)"
import json, re, sys
log = open(sys.argv[1]).read()
m = re.findall(r"client 0x[0-9a-f]+: (\d+) messages, (\d+) payload bytes, sha256 ([0-9a-f]{64})", log)
h = json.load(open(sys.argv[2]))
print("feedsim:", m, "msg_hash:", h["msgs"], h["bytes"], h["sha256"])
sys.exit(0 if len(m) == 1 and int(m[0][0]) == h["msgs"] == 30000 and int(m[0][1]) == h["bytes"] and m[0][2] == h["sha256"] else 1)
PY
}

# wss_run TAG SECONDS WHAT PYTHON-EDITS: wss_conf into $T/cfg/TAG.json, run for
# SECONDS (demo_run)
wss_run() {
	wss_conf "$T/cfg/$1.json" "$4"
	demo_run "$1" "$T/cfg/$1.json" "$2" "$3"
}

mkdir -p "$T/cfg" "$T/elsewhere"
ln -s "$top_srcdir/conf/tls" "$T/cfg/tls"

step "wss: one session of 30000 messages, byte-exact"
wss_conf "$T/cfg/one.json" '
ex.update({"count": 30000, "close_when_done": True})
ws.update({"reconnect_min_ms": 10000, "reconnect_max_ms": 10000})
c["stages"][-1]["options"].update({"expect": 30000, "linger_ms": 200})
'
new_prefix
cd "$T/elsewhere" || fail "cd"
lcrun one "$T/cfg/one.json" --duration 20 --no-live -- $(eal_base) -l 0,1
cd - >/dev/null || fail "cd -"
expect_rc 0 "wss run"
rcheck "wss" \
	'ctr("feed", "opens") == 1' \
	'ctr("feed", "tls_handshakes") == 1' \
	'ctr("feed", "tls_resumed") == 0' \
	'ctr("feed", "tls_records_rx") > 0' 'ctr("feed", "tls_records_tx") >= 3' \
	'ctr("feed", "tls_records_rx_fast") > 0' \
	'ctr("feed", "tls_bytes_rx") > ctr("feed", "msg_bytes")' \
	'ctr("feed", "tls_fail_verify") + ctr("feed", "tls_fail_alert") + ctr("feed", "tls_fail_protocol") + ctr("feed", "tls_fail_timeout") + ctr("feed", "tls_fail_tx") == 0' \
	'ctr("feed", "msgs") == 30000' \
	'ctr("feed", "msgs_zero_copy") > 0' \
	'ctr("feed", "rx_buffers_empty") == 0' \
	'ctr("exchange", "tls_handshakes") == 1' \
	'ctr("stats", "seq_gaps") == 0' 'ctr("stats", "seq_dups") == 0' \
	'r["leaked_objects"] == 0'
hash_check "$T/one.json.hash.json"

step "wss: one TLS buffer of a whole record: the rest in the engine's mbufs, byte-exact"
# rx_buffers 1: while the messages of one record hold the buffer, the next
# records are decrypted into engine mbufs (rx_buffers_empty); rx_buffer_size
# 0: only engine mbufs, no pool
for v in "1 16640" "1 0"; do
	set -- $v
	wss_run "buf$2" 20 "wss run, rx_buffers $1, rx_buffer_size $2" "
ex.update({'count': 30000, 'close_when_done': True})
ws.update({'reconnect_min_ms': 10000, 'reconnect_max_ms': 10000, 'rx_buffers': $1, 'rx_buffer_size': $2})
c['stages'][-1]['options'].update({'expect': 30000, 'linger_ms': 200})
"
	if [ "$2" = 0 ]; then empty='== 0'; else empty='> 0'; fi
	rcheck "rx_buffers $1, rx_buffer_size $2" \
		'ctr("feed", "msgs") == 30000' \
		'ctr("feed", "tls_records_rx_fast") > 0' \
		"ctr(\"feed\", \"rx_buffers_empty\") $empty" \
		'ctr("stats", "seq_gaps") == 0' \
		'r["leaked_objects"] == 0'
	hash_check "$T/buf$2.json.hash.json"
done

step "wss: reconnects resume with the session ticket"
# three sessions of 3,000 messages: msg_hash ends the run at the 9,000th, so no
# fourth attempt is in flight when the counters are read
wss_run resume 30 "wss reconnects" '
ex.update({"count": 3000, "close_when_done": True})
ws.update({"reconnect_min_ms": 10, "reconnect_max_ms": 20, "reconnect_jitter": False})
c["stages"][-1]["options"].update({"expect": 9000, "linger_ms": 0})
'
rcheck "resumption" \
	'r["stop_reason"] == "msg_hash: done"' \
	'ctr("feed", "opens") == 3' \
	'ctr("feed", "tls_handshakes") == 3' \
	'ctr("feed", "tls_resumed") == 2' \
	'ctr("exchange", "tls_resumed") == 2' \
	'ctr("feed", "msgs") == 9000' \
	'ctr("stats", "seq_gaps") == 0' \
	'r["leaked_objects"] == 0'

step "wss: a name the certificate does not carry is refused"
wss_run wrongname 1 "wrong name run" 'ws.update({"tls_server_name": "other.lcpipe.test", "reconnect_min_ms": 50})'
rcheck "wrong name" \
	'ctr("feed", "opens") == 0' 'ctr("feed", "msgs") == 0' \
	'ctr("feed", "tls_fail_verify") >= 2' \
	'ctr("feed", "tls_handshakes") == 0' \
	'ctr("exchange", "tls_fail_alert") >= 2' \
	'r["leaked_objects"] == 0'
expect_grep "$ERR" "certificate verify failed: [Hh]ostname mismatch" "the refusal names the reason"

step "wss: insecure accepts it, with a warning"
wss_run insecure 1 "insecure run" 'ws.update({"tls_server_name": "other.lcpipe.test", "insecure": True, "ca_file": ""})'
rcheck "insecure" 'ctr("feed", "opens") == 1' 'ctr("feed", "msgs") > 1000' 'ctr("feed", "tls_fail_verify") == 0'
expect_grep "$ERR" "insecure: the wss:// servers' certificates and names are NOT verified" "the warning"

step "wss: TLS 1.3 only against a TLS 1.2 server"
wss_run version 1 "version mismatch run" '
ex.update({"tls_max_version": "1.2"})
ws.update({"tls_min_version": "1.3", "reconnect_min_ms": 50})
'
rcheck "version mismatch" 'ctr("feed", "opens") == 0' 'ctr("feed", "tls_fail_alert") >= 1' \
	'ctr("exchange", "tls_fail_protocol") >= 1'
expect_grep "$ERR" "alert from the peer: protocol version" "the alert is named"

step "wss: a server that resets TCP in the TLS handshake"
# feedsim serves one client: the second connection is aborted (RST) as soon as
# it is accepted, while its TLS handshake is under way
wss_run rst 1 "reset-in-handshake run" '
ex.update({"max_clients": 1})
ws.update({"connections": 2, "reconnect_min_ms": 50, "reconnect_max_ms": 100})
'
rcheck "reset in the TLS handshake" 'ctr("feed", "opens") == 1' 'ctr("feed", "tls_fail_protocol") >= 2' \
	'ctr("exchange", "drop_too_many_clients") >= 2' 'ctr("feed", "fail_tcp") == 0' 'r["leaked_objects"] == 0'
expect_grep "$ERR" "TLS handshake failed: the server reset TCP during it" "the log says so"

step "wss: configuration errors"
wss_conf "$T/cfg/noca.json" 'ws.update({"ca_file": "tls/no-such-ca.pem"})'
new_prefix
lcrun noca "$T/cfg/noca.json" --duration 1 --no-live -- $(eal_base) -l 0,1
[ "$RC" -ne 0 ] && ok "a missing ca_file stops the run (exit $RC)" || fail "a missing ca_file: exit 0"
expect_grep "$ERR" "ca_file $T/cfg/tls/no-such-ca.pem" "the error names the file, from the config's directory"
wss_conf "$T/cfg/nokey.json" 'ex.pop("tls_key")'
"$LCPIPE" check "$T/cfg/nokey.json" >"$T/nokey.out" 2>&1
RC=$?
[ "$RC" -eq 78 ] && ok "lcpipe check refuses tls_cert without tls_key (78)" || fail "lcpipe check: exit $RC"
expect_grep "$T/nokey.out" "tls_cert and tls_key go together" "the check says why"
# the TLS version range, the same check on the client and the server side
wss_conf "$T/cfg/vers.json" 'ws.update({"tls_min_version": "1.3", "tls_max_version": "1.2"}); ex.update({"tls_min_version": "1.3", "tls_max_version": "1.2"})'
"$LCPIPE" check "$T/cfg/vers.json" >"$T/vers.out" 2>&1
RC=$?
[ "$RC" -eq 78 ] && ok "lcpipe check refuses tls_min_version above tls_max_version (78)" || fail "lcpipe check: exit $RC"
[ "$(grep -c 'options: tls_min_version 1.3 is above tls_max_version 1.2' "$T/vers.out")" -eq 2 ] &&
	ok "both stages say why" || fail "the version range is not refused on both stages: $(cat "$T/vers.out")"
"$LCPIPE" check "$top_srcdir/conf/demo-wss.json" >"$T/check.out" 2>&1 && ok "conf/demo-wss.json checks" ||
	fail "lcpipe check conf/demo-wss.json"
finish
