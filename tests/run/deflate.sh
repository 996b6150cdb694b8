#!/bin/bash
# permessage-deflate (RFC 7692) end to end in one process: conf/demo.json with
# feedsim accepting the ws stage's offer and compressing every message. Asserts:
#   - byte-exact delivery: msg_hash's SHA-256 over the inflated payloads equals
#     feedsim's over what it compressed (hash_payloads), with context takeover
#     and with server_no_context_takeover asked by the client, fragmented
#     compressed messages and pings between the fragments included; every
#     message was inflated (none zero copy), the counters move;
#   - the message limit applies to the inflated size: messages whose compressed
#     form is far below max_msg but that inflate beyond it fail the connection
#     with 1009 and nothing of them is delivered;
#   - "deflate": false on the client: nothing is negotiated or compressed;
#   - over wss (conf/demo-wss.json) too, and wss + deflate through the fault
#     stage's seeded loss, reordering, duplication and corruption (both ways).
. "$(dirname "$0")/lib.sh"

need_plugins tcp ws feedsim metrics
need_msg_hash
mkdir -p "$T/cfg"
ln -s "$top_srcdir/conf/tls" "$T/cfg/tls"

# zconf SRC OUT PYTHON-EDITS: SRC (a conf/ demo) with msg_hash as the sink,
# feedsim deflate on and hash_payloads, EDITS applied to ex (feedsim) / ws
zconf() {
	local src=$1 out=$2 edits=$3
	"$PYTHON3" - "$src" "$out" "$HASHDIR" "$T" "$edits" <<'PY' || fail "cannot write $out"
import json, os, sys
src, out, hashdir, tmp, edits = sys.argv[1:6]
c = json.load(open(src))
c["plugin_path"] = [hashdir]
st = {s["name"]: s for s in c["stages"]}
ex, ws = st["exchange"]["options"], st["feed"]["options"]
ex.update({"deflate": True, "hash_payloads": True, "count": 20000, "close_when_done": True})
ws.update({"reconnect_min_ms": 10000, "reconnect_max_ms": 10000})
c["stages"] = [s for s in c["stages"] if s["name"] != "sink"]
hash_opts = {"result": os.path.join(tmp, os.path.basename(out) + ".hash.json"), "expect": 20000, "linger_ms": 200}
c["stages"].append({"name": "hash", "plugin": "msg_hash", "lcore": 1, "options": hash_opts})
c["links"] = [l.replace("stats.out -> sink.msg", "stats.out -> hash.in") for l in c["links"]]
exec(edits)
json.dump(c, open(out, "w"), indent=1)
PY
}

# hash_equal TAG: feedsim's one client hash == msg_hash's
hash_equal() {
	"$PYTHON3" - "$ERR" "$T/$1.json.hash.json" <<'PY' && ok "$1: msg_hash SHA-256 == feedsim's" || fail "$1: payload hashes differ (above)"
import json, re, sys
m = re.findall(r"client 0x[0-9a-f]+: (\d+) messages, (\d+) payload bytes, sha256 ([0-9a-f]{64})", open(sys.argv[1]).read())
h = json.load(open(sys.argv[2]))
print("feedsim:", m, "msg_hash:", h["msgs"], h["bytes"], h["sha256"])
sys.exit(0 if len(m) == 1 and int(m[0][0]) == h["msgs"] and int(m[0][1]) == h["bytes"] and m[0][2] == h["sha256"] else 1)
PY
}

compressed_checks=(
	'ctr("feed", "opens") == 1' 'ctr("feed", "deflate_opens") == 1' 'ctr("exchange", "deflate_clients") == 1'
	'ctr("feed", "msgs") == 20000' 'ctr("feed", "msgs_inflated") == 20000' 'ctr("feed", "msgs_zero_copy") == 0'
	'ctr("exchange", "msgs_deflated") == 20000'
	'ctr("feed", "deflate_bytes_rx") == ctr("exchange", "deflated_bytes")'
	'ctr("feed", "inflated_bytes") == ctr("feed", "msg_bytes")'
	'ctr("feed", "deflate_bytes_rx") < ctr("feed", "msg_bytes")'
	'ctr("exchange", "fragmented_msgs") > 0' 'ctr("feed", "pings_rx") > 0'
	'ctr("feed", "fail_protocol_1002") + ctr("feed", "fail_bad_utf8_1007") + ctr("feed", "fail_too_big_1009") == 0'
	'ctr("stats", "seq_gaps") == 0' 'ctr("stats", "seq_dups") == 0'
	'r["leaked_objects"] == 0'
)

step "deflate with context takeover, byte-exact"
zconf "$top_srcdir/conf/demo.json" "$T/cfg/ctx.json" ''
demo_run ctx "$T/cfg/ctx.json" 30 "deflate run"
rcheck "context takeover" "${compressed_checks[@]}"
hash_equal ctx
expect_grep "$ERR" "open ws://10.99.0.1:8080/marketdata \(permessage-deflate\)" "the open line says so"

step "deflate, the client asks for server_no_context_takeover and a 10-bit window"
zconf "$top_srcdir/conf/demo.json" "$T/cfg/noctx.json" 'ws.update({"deflate_no_context_takeover": True, "deflate_window_bits": 10})'
demo_run noctx "$T/cfg/noctx.json" 30 "no context takeover run"
rcheck "no context takeover" "${compressed_checks[@]}"
hash_equal noctx

step "max_msg bounds the inflated size"
# 1024-byte ticks of padding compress to well under 300 bytes on the wire, and
# inflate to 1024: over max_msg 300 -> 1009, nothing delivered
zconf "$top_srcdir/conf/demo.json" "$T/cfg/big.json" '
ex.update({"sizes": "1024:1", "fragment_every": 0})
ws.update({"max_msg": 300})
c["stages"][-1]["options"].pop("expect")
'
demo_run big "$T/cfg/big.json" 1 "max_msg run"
rcheck "inflated over max_msg" \
	'ctr("feed", "fail_too_big_1009") >= 1' 'ctr("feed", "msgs") == 0' \
	'ctr("feed", "deflate_bytes_rx") > 0' 'ctr("feed", "inflated_bytes") <= 300 * ctr("feed", "fail_too_big_1009")' \
	'r["leaked_objects"] == 0'

step "\"deflate\": false on the client: no extension"
zconf "$top_srcdir/conf/demo.json" "$T/cfg/off.json" 'ws.update({"deflate": False})'
demo_run off "$T/cfg/off.json" 30 "deflate off run"
rcheck "deflate off" 'ctr("feed", "msgs") == 20000' 'ctr("feed", "deflate_opens") == 0' \
	'ctr("exchange", "deflate_clients") == 0' 'ctr("feed", "msgs_inflated") == 0' 'ctr("feed", "msgs_zero_copy") > 0'
hash_equal off

step "deflate over wss"
cp "$top_srcdir/conf/demo-wss.json" "$T/cfg/demo-wss.json"
zconf "$T/cfg/demo-wss.json" "$T/cfg/wssz.json" ''
demo_run wssz "$T/cfg/wssz.json" 30 "wss + deflate run"
rcheck "wss + deflate" "${compressed_checks[@]}" 'ctr("feed", "tls_handshakes") == 1'
hash_equal wssz
step "wss + deflate with 64 assembly buffers: inflated messages packed into receive buffers"
# feedsim fills 16 KiB records with batches of 1,000 small ticks; a record's
# messages are inflated before its consumers run. Packed, they hold receive
# buffers (rx_buffer_size), not one assembly buffer each; with no receive
# buffers (0) each needs one, and those beyond the 64 are dropped (counted)
for v in "16640 == 0" "0 > 0"; do
	set -- $v
	zconf "$T/cfg/demo-wss.json" "$T/cfg/pack$1.json" "ex.update({'batch': 1000, 'sizes': '64:1', 'fragment_every': 0})
ws.update({'assembly_buffers': 64, 'rx_buffer_size': $1})
c['stages'][-1]['options'].pop('expect')"
	demo_run "pack$1" "$T/cfg/pack$1.json" 10 "wss + deflate, rx_buffer_size $1"
	rcheck "rx_buffer_size $1" "ctr(\"feed\", \"drop_assembly_pool_empty\") $2 $3" \
		'ctr("feed", "msgs") + ctr("feed", "drop_assembly_pool_empty") == 20000' 'r["leaked_objects"] == 0'
	[ "$1" = 0 ] || hash_equal "pack$1"
done

step "wss + deflate through seeded loss, reordering, duplication and corruption both ways"
# conf/fault-demo.json (1 % drop, 1 % reorder, 0.5 % duplicate on each side;
# corruption raised to 2 %: the 20,000 compressed messages make only some 500
# frames each way, too few for the demo's 0.1 % to corrupt one every run) with
# feedsim serving wss and compressing: what TCP repairs must reach TLS (whose
# records would fail their tag otherwise) and the inflater exactly
cp "$top_srcdir/conf/fault-demo.json" "$T/cfg/fault-demo.json"
zconf "$T/cfg/fault-demo.json" "$T/cfg/faultz.json" '
ex.update({"listen": 8443, "tls_cert": "tls/server.pem", "tls_key": "tls/server.key", "send_mbufs": 1024})
ws.update({"url": "wss://10.99.0.1:8443/marketdata", "ca_file": "tls/ca.pem", "handshake_timeout_ms": 20000})
for n in ("fault", "exch_fault"):
    st[n]["options"]["corrupt"] = 0.02
'
demo_run faultz "$T/cfg/faultz.json" 60 "wss + deflate through faults"
rcheck "wss + deflate through faults" "${compressed_checks[@]}" 'ctr("feed", "tls_handshakes") == 1' \
	'ctr("fault", "drop_a_injected") + ctr("exch_fault", "drop_b_injected") > 0' \
	'ctr("fault", "drop_b_injected") + ctr("exch_fault", "drop_a_injected") > 0' \
	'ctr("fault", "a_reordered") + ctr("exch_fault", "b_reordered") > 0' \
	'ctr("fault", "a_corrupted") + ctr("exch_fault", "b_corrupted") > 0' \
	'ctr("tcp", "tcp_ooo_segs") + ctr("exch_tcp", "tcp_ooo_segs") > 0' \
	'ctr("feed", "tls_fail_protocol") + ctr("feed", "tls_fail_alert") == 0'
hash_equal faultz
finish
