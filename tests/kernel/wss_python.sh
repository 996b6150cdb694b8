#!/bin/bash
# L2 wss://: the ws stage's TLS client over lcpipe's own TCP against Debian's
# python3-websockets with an ssl.SSLContext (tests/kernel/ws_peer.py
# --tls-cert), certificates from tls_lib.sh (a test CA; feed.example.test and
# 10.77.0.1; a wrong-host, an expired and an unknown-CA one), feed.example.test
# resolved by lcpipe through /etc/netns/$NS/hosts.
# Runs and what each asserts:
#   v13    server TLS 1.3 only, permessage-deflate on (it compresses every
#          message), wss://feed.example.test:8443/feed (the name), ca_file,
#          tls_min_version 1.3; the server sends WSS_PY_COUNT (default
#          20 000) messages of mixed sizes, closes (1000), the ws stage
#          reconnects and gets them again (--serve 2): byte-exact delivery of
#          both (ws_check_transfer: count, bytes, SHA-256 of the payloads and
#          of the (opcode, length) sequence, pings, pongs, closes, no fail_*);
#          tls_handshakes == opens == 2, tls_resumed == 1 (the ticket of the
#          first connection), no tls_fail_*, ciphertext > payload bytes;
#          lcpipe logged TLSv1.3 and ALPN http/1.1; the server saw TLSv1.3, SNI
#          feed.example.test, Host feed.example.test:8443, a full handshake
#          then a resumed one, and no alert but close_notify from lcpipe; the
#          name was resolved (/etc/netns hosts) before each connect;
#          permessage-deflate agreed on both connections, messages inflated
#   v12    server 1.2..1.3 (deflate on), tls_max_version 1.2, "deflate":
#          false, wss://10.77.0.1:8443/feed (an IPv4 literal: the
#          certificate's IP SAN is verified, no SNI sent, nothing resolved),
#          ca_path (the hashed CA directory): as v13 over TLSv1.2 (resumption
#          from a TLS 1.2 ticket), permessage-deflate not offered
#   noresume  tls_resume false: two full handshakes (tls_resumed 0, the
#          server resumed none), both transfers byte-exact; the server
#          (without deflate) declined lcpipe's permessage-deflate offer
#   wrong / expired / unknown  the server's certificate names another host /
#          has expired / comes from a CA lcpipe does not trust: every attempt
#          refused (tls_fail_verify >= 1, opens 0, no other failure, no TLS
#          handshake, nothing delivered), the reason logged (hostname
#          mismatch, certificate has expired, unable to get local issuer
#          certificate), the server got lcpipe's alert (bad_certificate,
#          certificate_expired, unknown_ca) and no WebSocket connection
#   insecure  the wrong-host server with insecure true: accepted (byte-exact,
#          one handshake), the warning logged at start
#   server_name  the wrong-host server at wss://10.77.0.1:8443 with
#          tls_server_name other.example.test (its name): accepted, SNI
#          other.example.test
# Every run: lcpipe exits 0, leaked_objects == 0, every msg object released.
. "$(dirname "$0")/ws_lib.sh"
. "$(dirname "$0")/tls_lib.sh"

COUNT=${WSS_PY_COUNT:-20000}
PORT=8443
# a refused run: 3 s of attempts, 100..400 ms apart
WS_RETRY='"handshake_timeout_ms": 1500, "reconnect_min_ms": 100, "reconnect_max_ms": 400'
CA='"ca_file": "'$TLS_CA'"'
PEER=$KDIR/ws_peer.py
TLS_SRV=(--tls-cert "$TLS_SERVER_CERT" --tls-key "$TLS_SERVER_KEY")

# transfer TAG SERVER_ARGS WS_OPTIONS: ws_peer.py and one lcpipe run (tls_lib.sh's
# wss_transfer)
transfer() {
	DURATION=75
	# shellcheck disable=SC2086
	wss_peer_start "$1" $PORT 7 "$PY" "$PEER" $2
	wss_transfer "$1" "$3"
}

transfer v13 "--tls-cert $TLS_SERVER_CERT --tls-key $TLS_SERVER_KEY --tls-min 1.3 --deflate" \
	'"url": "wss://'$TLS_HOST:$PORT'/feed", '"$CA"', "tls_min_version": "1.3"'
wss_transfer_check v13 version=TLSv1.3 sni=$TLS_HOST host=$TLS_HOST:$PORT named=1 deflate=on

transfer v12 "--tls-cert $TLS_SERVER_CERT --tls-key $TLS_SERVER_KEY --deflate" \
	'"url": "wss://'$K_IP:$PORT'/feed", "ca_path": "'$TLS_CAPATH'", "tls_max_version": "1.2", "deflate": false'
wss_transfer_check v12 version=TLSv1.2 sni=- host=$K_IP:$PORT named=0 deflate=off

# the short runs: fewer messages
COUNT=500
transfer noresume "--tls-cert $TLS_SERVER_CERT --tls-key $TLS_SERVER_KEY" \
	'"url": "wss://'$TLS_HOST:$PORT'/feed", '"$CA"', "tls_resume": false'
ws_hash_check noresume "$W/noresume.server.json" $((2 * COUNT)) 2
wss_tls_check noresume srv="$W/noresume.server.json" version=TLSv1.3 handshakes=2 resumed=0 sni=$TLS_HOST
ws_report_common

# refused TAG CERT_NAME WHY ALERT: a server with that certificate, 3 s of attempts
refused() {
	local tag=$1 cert key
	eval "cert=\$TLS_${2}_CERT key=\$TLS_${2}_KEY"
	DURATION=3
	server_start "$tag" "$PY" "$PEER" --port $PORT --count 1 --result "$W/$tag.server.json" --timeout 60 \
		--tls-cert "$cert" --tls-key "$key" || finish
	ws_conf "$tag" '"url": "wss://'$TLS_HOST:$PORT'/feed", "subscribe": "sub", '"$CA, $WS_RETRY" '"expect": 1'
	wss_run
	srv_term
	[ "$SRV_RC" -eq 2 ] || { fail "ws_peer.py exited $SRV_RC, expected 2 (no WebSocket connection)"; show "$SRV_ERR"; }
	wss_refused_check "$tag" counter=tls_fail_verify why="$3" srv="$W/$tag.server.json" alert="$4"
	ws_report_common
}
refused wrong WRONG "hostname mismatch" BAD_CERTIFICATE
refused expired EXPIRED "certificate has expired" CERTIFICATE_EXPIRED
refused unknown UNKNOWN "unable to get local issuer certificate" UNKNOWN_CA

COUNT=200
transfer insecure "--tls-cert $TLS_WRONG_CERT --tls-key $TLS_WRONG_KEY" \
	'"url": "wss://'$TLS_HOST:$PORT'/feed", "insecure": true'
ws_hash_check insecure "$W/insecure.server.json" $((2 * COUNT)) 2
wss_tls_check insecure srv="$W/insecure.server.json" version=TLSv1.3 handshakes=2 resumed=1 sni=$TLS_HOST
grep -q '\[ws:ws\] warning: insecure' "$LOG" && ok "insecure: the warning logged at start" ||
	{ fail "insecure: no warning in the log"; show "$LOG"; }
ws_report_common

transfer server_name "--tls-cert $TLS_WRONG_CERT --tls-key $TLS_WRONG_KEY" \
	'"url": "wss://'$K_IP:$PORT'/feed", '"$CA"', "tls_server_name": "other.example.test"'
ws_hash_check server_name "$W/server_name.server.json" $((2 * COUNT)) 2
wss_tls_check server_name srv="$W/server_name.server.json" version=TLSv1.3 handshakes=2 resumed=1 \
	sni=other.example.test
ws_report_common
finish
