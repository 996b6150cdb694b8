#!/bin/bash
# L2 TLS peers, checked without lcpipe: every TLS server the wss_*.sh tests put
# in front of lcpipe's ws stage, met first by kernel clients inside the
# namespace (tests/kernel/wss_client.py: python3-websockets and Python's ssl
# over the kernel's TCP; `openssl verify`, `openssl s_client`), so that a
# failing wss test points at lcpipe, not at its peer. The peers listen on
# 10.77.0.1, put on the namespace's loopback here (the wss tests have it on
# the tap); feed.example.test resolves to it through /etc/netns/$NS/hosts
# (tls_lib.sh, which also makes the certificates).
# Asserts:
#   - the certificates: the server's verifies against the CA (by file and by
#     the hashed ca_path directory) for feed.example.test and 10.77.0.1; the
#     wrong-host one fails with a hostname mismatch (62), the expired one
#     with "certificate has expired" (10), the unknown CA's with "unable to
#     get local issuer certificate" (20);
#   - ws_peer.py (TLS 1.3 only, permessage-deflate, by name) and (TLS 1.2
#     only, no deflate, by IP): the client received every message the server
#     sent (count, SHA-256 of the payloads, SHA-256 of the (opcode, length)
#     sequence), the close 1000; both ends saw the configured version; the
#     server saw SNI feed.example.test by name and none by IP literal, and
#     selected ALPN http/1.1 (offered as lcpipe does); the extension agreed
#     exactly when offered; the session resumed on a second
#     connection (1.2 and 1.3);
#   - ws_peer_node.js: the same two transfers and resumptions;
#   - nginx on 443 in front of the plain ws_peer.py (deflate): the transfer by
#     name without a port (443), one 101 in nginx's log with TLSv1.3, SNI
#     feed.example.test, ALPN http/1.1 and the upstream 127.0.0.1:8765, permessage-deflate
#     agreed end to end, the session resumed;
#   - ws_peer.py with the wrong-host, expired and unknown-CA certificates: the
#     client's verification fails with the matching reason, by name and by IP;
#     with verification off (insecure) or the server name overridden to the
#     certificate's, the wrong-host one is accepted; the server got the
#     refusing client's alert (bad_certificate, certificate_expired,
#     unknown_ca) and no WebSocket connection;
#   - openssl s_server: -tls1_2 / -tls1_3 -www answer "HTTP/1.0 200 ok" over
#     that version (and resume); a client that wants the other version gets a
#     protocol_version alert; no shared cipher (1.2: only a NULL cipher; 1.3:
#     only TLS_AES_128_CCM_8_SHA256) gets a handshake_failure alert; a stopped
#     s_server (the kernel takes the ClientHello, nobody answers) makes the
#     client time out; a plain ws:// server answers the ClientHello with
#     something that is not TLS (wrong version number); s_client verifies
#     s_server's certificate and negotiates TLS 1.3.
. "$(dirname "$0")/ws_lib.sh"
. "$(dirname "$0")/tls_lib.sh"

DURATION=30
COUNT=${TLS_PEERS_COUNT:-2000}
SUB=sub
CL=$KDIR/wss_client.py
nsx ip addr add $K_IP/32 dev lo || { fail "ip addr add $K_IP/32 dev lo"; finish; }

# client OUT ARGS...: wss_client.py ARGS in the namespace, its JSON in OUT
client() {
	local out=$1
	shift
	say "+ wss_client.py $*"
	nsx "$PY" "$CL" "$@" >"$out" 2>"$out.err" </dev/null || { fail "wss_client.py $* exited $?"; show "$out.err"; }
}

# 0. the certificates
vfy() { # WHAT WANT(ok|error N) ARGS...
	local what=$1 want=$2 out rc
	shift 2
	out=$(openssl verify "$@" 2>&1)
	rc=$?
	case $want in
	ok) [ $rc -eq 0 ] && ok "certificate: $what" || fail "certificate: $what: $out" ;;
	*) [ $rc -ne 0 ] && printf '%s\n' "$out" | grep -q "^error ${want#error } " && ok "certificate: $what ($want)" ||
		fail "certificate: $what: expected $want: $out" ;;
	esac
}
vfy "server, CA file, feed.example.test" ok -CAfile "$TLS_CA" -verify_hostname $TLS_HOST "$TLS_SERVER_CERT"
vfy "server, CA file, 10.77.0.1" ok -CAfile "$TLS_CA" -verify_ip $K_IP "$TLS_SERVER_CERT"
vfy "server, CA path" ok -CApath "$TLS_CAPATH" -verify_hostname $TLS_HOST "$TLS_SERVER_CERT"
vfy "wrong host" "error 62" -CAfile "$TLS_CA" -verify_hostname $TLS_HOST "$TLS_WRONG_CERT"
vfy "wrong host by IP" "error 64" -CAfile "$TLS_CA" -verify_ip $K_IP "$TLS_WRONG_CERT"
vfy "expired" "error 10" -CAfile "$TLS_CA" -verify_hostname $TLS_HOST "$TLS_EXPIRED_CERT"
vfy "unknown CA" "error 20" -CAfile "$TLS_CA" -verify_hostname $TLS_HOST "$TLS_UNKNOWN_CERT"

# transfer_check TAG SERVER_JSON CLIENT_JSON VERSION DEFLATE(0|1) SNI(-: none) [NGINX]:
# the client got what the server sent, over VERSION (at both ends; behind nginx
# the server has no TLS), the extension agreed iff DEFLATE, SNI as given
transfer_check() {
	pycheck "$1: transfer" srv="$2" cl="$3" ver="$4" deflate="$5" sni="$6" nginx="${7:-0}" count="$COUNT" <<'PY'
s, c = J("srv"), J("cl")
n, ver, defl = int(A["count"]), A["ver"], A["deflate"] == "1"
check(s.get("served") is True and s.get("error") is None and s.get("sent") == n,
      "the server sent its %d messages" % n, (s.get("served"), s.get("error"), s.get("sent")))
check(c.get("error") is None and c.get("msgs") == n and c.get("bytes") == s.get("bytes"),
      "the client received them all (%s messages, %s bytes)" % (c.get("msgs"), c.get("bytes")), c.get("error"))
check(c.get("sha256") == s.get("sha256") and c.get("sha256_lens") == s.get("sha256_lens"),
      "payload and (opcode, length) SHA-256 equal the server's", (c.get("sha256"), s.get("sha256")))
check(c.get("close_code") == 1000, "the server's close 1000", c.get("close_code"))
check((c.get("tls") or {}).get("version") == ver, "the client negotiated " + ver, c.get("tls"))
conn = (s.get("conns") or [{}])[0]
if A["nginx"] == "1":
    check(conn.get("tls") is None, "the server behind nginx has no TLS", conn.get("tls"))
else:
    t = conn.get("tls") or {}
    check(t.get("version") == ver and t.get("resumed") is False, "the server negotiated %s (a full handshake)" % ver, t)
    check(t.get("sni") == (None if A["sni"] == "-" else A["sni"]), "the server got SNI %s" % A["sni"], t.get("sni"))
    check(t.get("alpn") == "http/1.1", "the server selected ALPN http/1.1", t.get("alpn"))
check(conn.get("extensions") == (["permessage-deflate"] if defl else []),
      "permessage-deflate %s" % ("agreed" if defl else "neither offered nor agreed"),
      (conn.get("offered_extensions"), conn.get("extensions")))
check(bool(c.get("extensions")) == defl, "the response's extensions %s" % ("agreed deflate" if defl else "empty"),
      c.get("extensions"))
PY
}

# resume_check TAG PROBE_JSON VERSION: two handshakes, the second resumed
resume_check() {
	pycheck "$1: resumption" pr="$2" ver="$3" <<'PY'
cs = J("pr").get("conns", [])
check(len(cs) == 2 and all(c.get("ok") and c.get("version") == A["ver"] for c in cs),
      "two %s handshakes" % A["ver"], cs)
check(len(cs) == 2 and cs[0].get("resumed") is False and cs[1].get("resumed") is True,
      "the second connection resumed the first one's session", [c.get("resumed") for c in cs])
PY
}

# probe_check TAG PROBE_JSON KIND REASON|VERSION [STATUS]: a probe's only
# connection failed with KIND (verify / alert / protocol / timeout) and the
# reason (verify message or OpenSSL reason) contains REASON; or KIND "ok": it
# negotiated VERSION (and the upgrade answer's status line is STATUS)
probe_check() {
	pycheck "$1" pr="$2" kind="$3" what="$4" status="${5:-}" <<'PY'
cs = J("pr").get("conns", [])
c = cs[0] if cs else {}
e = c.get("error") or {}
if A["kind"] == "ok":
    check(c.get("ok") is True and c.get("version") == A["what"], "handshake done, " + A["what"], c)
    if A["status"]:
        check(c.get("status") == A["status"], "the server answered " + A["status"], c.get("status"))
else:
    why = e.get("verify") or e.get("reason") or ""
    check(c.get("ok") is False and e.get("kind") == A["kind"] and A["what"].lower() in why.lower(),
          "refused: %s (%s)" % (A["kind"], why), c)
PY
}

TLS_SRV=(--tls-cert "$TLS_SERVER_CERT" --tls-key "$TLS_SERVER_KEY")

# peer_pair TAG LABEL PORT SEED DEFLATE CMD...: the ws peer CMD with TLS twice,
# each time probed for resumption and read by a transfer client: TLS 1.3 only
# with permessage-deflate (its server option DEFLATE, split into words) on PORT,
# reached by name; TLS 1.2 only on PORT + 1, reached by address, seed SEED + 1
peer_pair() {
	local tag=$1 label=$2 port=$3 seed=$4 z=$5
	shift 5
	# shellcheck disable=SC2086
	server_start "${tag}13" "$@" --port $port --count "$COUNT" --seed $seed --expect-sub $SUB \
		--result "$W/${tag}13.json" --timeout $DURATION "${TLS_SRV[@]}" --tls-min 1.3 $z || finish
	client "$W/${tag}13.resume.json" probe $TLS_HOST $port --ca "$TLS_CA" --resume
	client "$W/${tag}13.client.json" transfer "wss://$TLS_HOST:$port/feed" --ca "$TLS_CA" --deflate --sub $SUB
	server_wait 10
	transfer_check "$label 1.3 deflate" "$W/${tag}13.json" "$W/${tag}13.client.json" TLSv1.3 1 $TLS_HOST
	resume_check "$label 1.3" "$W/${tag}13.resume.json" TLSv1.3

	port=$((port + 1))
	server_start "${tag}12" "$@" --port $port --count "$COUNT" --seed $((seed + 1)) --expect-sub $SUB \
		--result "$W/${tag}12.json" --timeout $DURATION "${TLS_SRV[@]}" --tls-max 1.2 || finish
	client "$W/${tag}12.resume.json" probe $K_IP $port --ca "$TLS_CA" --resume
	client "$W/${tag}12.client.json" transfer "wss://$K_IP:$port/feed" --ca "$TLS_CA" --sub $SUB
	server_wait 10
	transfer_check "$label 1.2" "$W/${tag}12.json" "$W/${tag}12.client.json" TLSv1.2 0 -
	resume_check "$label 1.2" "$W/${tag}12.resume.json" TLSv1.2
}

# 1. ws_peer.py
peer_pair py ws_peer.py 9443 3 --deflate "$PY" "$KDIR/ws_peer.py"

# 2. ws_peer_node.js
NODE=$(command -v node || command -v nodejs)
export NODE_PATH=${NODE_PATH:-/usr/share/nodejs}
if [ -n "$NODE" ] && "$NODE" -e 'require("ws")' 2>/dev/null; then
	peer_pair node ws_peer_node.js 9445 5 "--deflate 1" "$NODE" "$KDIR/ws_peer_node.js"
else
	say "note: no node with the ws module (NODE_PATH=$NODE_PATH): ws_peer_node.js not checked"
fi

# 3. nginx on 443 in front of the plain ws_peer.py
if command -v nginx >/dev/null; then
	server_start ngx-up "$PY" "$KDIR/ws_peer.py" --port 8765 --count "$COUNT" --seed 8 --expect-sub $SUB \
		--result "$W/ngx.json" --timeout $DURATION --deflate || finish
	ngx_srv=$SRV_PID
	nginx_start ngx 443 8765 || finish
	client "$W/ngx.resume.json" probe $TLS_HOST 443 --ca "$TLS_CA" --resume
	client "$W/ngx.client.json" transfer "wss://$TLS_HOST/feed" --ca "$TLS_CA" --deflate --sub $SUB
	server_wait 10
	tls_stop "$NGINX_PID"
	transfer_check "nginx 1.3 deflate" "$W/ngx.json" "$W/ngx.client.json" TLSv1.3 1 - 1
	resume_check "nginx" "$W/ngx.resume.json" TLSv1.3
	json_lines "$NGINX_ACCESS" >"$W/ngx.access.json"
	pycheck "nginx: its log" acc="$W/ngx.access.json" srv="$W/ngx.json" <<'PY' || show "$NGINX_ERR"
up = [l for l in J("acc") if l.get("status") == "101"]
check(len(up) == 1, "one upgrade (101) through nginx", J("acc"))
u = up[0] if up else {}
check(u.get("ssl_protocol") == "TLSv1.3" and u.get("ssl_server_name") == "feed.example.test"
      and u.get("ssl_alpn_protocol") == "http/1.1", "nginx: TLSv1.3, SNI feed.example.test, ALPN http/1.1", u)
check(u.get("upstream_addr") == "127.0.0.1:8765" and "permessage-deflate" in u.get("extensions", ""),
      "nginx passed the upgrade (with the deflate offer) to 127.0.0.1:8765", u)
conn = (J("srv").get("conns") or [{}])[0]
check(conn.get("host") == "feed.example.test", "the server got Host feed.example.test (no port: 443)", conn.get("host"))
PY
else
	say "note: no nginx (Debian: nginx): the proxy not checked"
fi

# 4. ws_peer.py with the bad certificates (each ends by itself after 8 s
# without a WebSocket connection: exit 2, its result lists the alerts it got)
port=9450
bad_pids=""
for bad in WRONG EXPIRED UNKNOWN; do
	eval "cert=\$TLS_${bad}_CERT key=\$TLS_${bad}_KEY"
	server_start "bad-$bad" "$PY" "$KDIR/ws_peer.py" --port $port --count 1 --result "$W/bad-$bad.json" \
		--timeout 8 --tls-cert "$cert" --tls-key "$key" || finish
	bad_pids="$bad_pids $SRV_PID"
	client "$W/bad-$bad.name.json" probe $TLS_HOST $port --ca "$TLS_CA"
	client "$W/bad-$bad.ip.json" probe $K_IP $port --ca "$TLS_CA"
	case $bad in
	WRONG)
		probe_check "wrong host, by name" "$W/bad-$bad.name.json" verify "Hostname mismatch"
		probe_check "wrong host, by IP" "$W/bad-$bad.ip.json" verify "IP address mismatch"
		client "$W/bad-$bad.insecure.json" probe $TLS_HOST $port --insecure
		probe_check "wrong host, verification off: accepted" "$W/bad-$bad.insecure.json" ok TLSv1.3
		client "$W/bad-$bad.override.json" probe $K_IP $port --ca "$TLS_CA" --server-name other.example.test
		probe_check "wrong host, server name other.example.test: accepted" "$W/bad-$bad.override.json" ok TLSv1.3
		;;
	EXPIRED)
		probe_check "expired, by name" "$W/bad-$bad.name.json" verify "certificate has expired"
		probe_check "expired, by IP" "$W/bad-$bad.ip.json" verify "certificate has expired"
		;;
	UNKNOWN)
		probe_check "unknown CA, by name" "$W/bad-$bad.name.json" verify "unable to get local issuer certificate"
		probe_check "unknown CA, by IP" "$W/bad-$bad.ip.json" verify "unable to get local issuer certificate"
		;;
	esac
	port=$((port + 1))
done
set -- $bad_pids
for bad in WRONG EXPIRED UNKNOWN; do
	wait_or_stop "$1" 15 "ws_peer.py ($bad)"
	shift
	[ "$WAIT_RC" -eq 2 ] && ok "ws_peer.py ($bad): no WebSocket connection (exit 2)" ||
		fail "ws_peer.py ($bad) exited $WAIT_RC, expected 2 (no WebSocket connection)"
done
pycheck "the clients' alerts" w="$W/bad-WRONG.json" e="$W/bad-EXPIRED.json" u="$W/bad-UNKNOWN.json" <<'PY'
for k, want in (("w", "BAD_CERTIFICATE"), ("e", "CERTIFICATE_EXPIRED"), ("u", "UNKNOWN_CA")):
    al = [a for a in J(k).get("alerts_rx", []) if a != "CLOSE_NOTIFY"]
    check(al == [want, want], "%s: the server got %s from both refusing clients" % (A[k].rsplit("/", 1)[-1], want), al)
PY

# 5. openssl s_server edge cases
# sserver_version V PORT PIN WHAT: s_server -tls1_V on PORT: a probe that upgrades
# and resumes on TLS 1.V; a client pinned by PIN (WHAT) gets a protocol alert
sserver_version() {
	local v=$1 port=$2 pin=$3 what=$4
	sserver_start "s1$v" "$port" -www "-tls1_$v" || finish
	client "$W/s1$v.json" probe $TLS_HOST "$port" --ca "$TLS_CA" --upgrade / --resume
	probe_check "s_server -tls1_$v -www" "$W/s1$v.json" ok "TLSv1.$v" "HTTP/1.0 200 ok"
	resume_check "s_server -tls1_$v" "$W/s1$v.json" "TLSv1.$v"
	# shellcheck disable=SC2086
	client "$W/s1$v.pinned.json" probe $TLS_HOST "$port" --ca "$TLS_CA" $pin
	probe_check "s_server -tls1_$v, $what" "$W/s1$v.pinned.json" alert PROTOCOL_VERSION
}
sserver_version 2 9460 "--tls-min 1.3" "client 1.3 only"
sserver_version 3 9461 "--tls-max 1.2" "client 1.2 only"
out=$(nsx openssl s_client -connect $K_IP:9461 -servername $TLS_HOST -CAfile "$TLS_CA" -verify_return_error \
	-verify_hostname $TLS_HOST -brief </dev/null 2>&1)
if printf '%s\n' "$out" | grep -q "^Verification: OK" && printf '%s\n' "$out" | grep -q "^Protocol version: TLSv1.3"; then
	ok "s_client: s_server's certificate verified, TLSv1.3"
else
	fail "s_client against s_server -tls1_3: $out"
fi

sserver_start nc12 9462 -www -tls1_2 -cipher 'ECDHE-ECDSA-NULL-SHA:@SECLEVEL=0' || finish
client "$W/nc12.json" probe $TLS_HOST 9462 --ca "$TLS_CA"
probe_check "s_server 1.2 with only a NULL cipher: no shared cipher" "$W/nc12.json" alert HANDSHAKE_FAILURE
sserver_start nc13 9463 -www -tls1_3 -ciphersuites TLS_AES_128_CCM_8_SHA256 || finish
client "$W/nc13.json" probe $TLS_HOST 9463 --ca "$TLS_CA"
probe_check "s_server 1.3 with only TLS_AES_128_CCM_8_SHA256: no shared cipher" "$W/nc13.json" alert HANDSHAKE_FAILURE
grep -q "no shared cipher" "$W/nc12.sserver.err" "$W/nc13.sserver.err" && ok "s_server logged \"no shared cipher\"" ||
	fail "s_server did not log \"no shared cipher\""

sserver_start stall 9464 -www || finish
sserver_stall
client "$W/stall.json" probe $TLS_HOST 9464 --ca "$TLS_CA" --timeout 2
probe_check "s_server stopped (SIGSTOP): the handshake stalls" "$W/stall.json" timeout "timed out"

server_start plain "$PY" "$KDIR/ws_peer.py" --port 9465 --count 1 --result "$W/plain.json" --timeout $DURATION || finish
client "$W/plain.probe.json" probe $TLS_HOST 9465 --ca "$TLS_CA"
probe_check "a plain ws:// server: not TLS" "$W/plain.probe.json" protocol WRONG_VERSION_NUMBER
tls_stop "$SRV_PID"
finish
