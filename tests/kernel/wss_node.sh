#!/bin/bash
# L2 wss://: the ws stage's TLS client over lcpipe's own TCP against Node's
# `ws` on an https server (tests/kernel/ws_peer_node.js --tls-cert: Debian's
# node-ws, Node's TLS), certificates from tls_lib.sh. The transfer of
# ws_node.sh (WSS_NODE_COUNT messages, default 20 000, fragments cut at random
# byte offsets, pings between fragments), served twice (--serve 2: the
# server closes with 1000, the ws stage reconnects and resumes its session):
#   v13  server TLS 1.3 only, permessage-deflate with
#        server_no_context_takeover (ws then compresses only messages of 1 KiB
#        and more: compressed and plain ones alternate, each compressed one
#        from a fresh context), wss://feed.example.test:8443/feed (resolved
#        through /etc/netns/$NS/hosts), ca_file: deflate agreed on both
#        connections, messages inflated and zero-copy ones alike
#   v12  server 1.2..1.3 (deflate on), tls_max_version 1.2, "deflate": false,
#        wss://10.77.0.1:8443/feed (the certificate's IP SAN, no SNI),
#        ca_path: deflate not offered
# Asserts for each: byte-exact delivery of both transfers (ws_check_transfer:
# count, bytes, SHA-256 of the payloads and of the (opcode, length) sequence,
# every pong with its ping's payload, UTF-8 split across fragments, no
# fail_*), tls_handshakes == opens == 2, tls_resumed == 1, no tls_fail_*,
# lcpipe logged the version and ALPN http/1.1; the server saw that version,
# the SNI (none for the IP literal), ALPN http/1.1, the Host, a full then a
# resumed handshake; lcpipe exits 0, leaked_objects == 0.
# Skips (77) without node on PATH or the ws module in NODE_PATH.
. "$(dirname "$0")/ws_lib.sh"
. "$(dirname "$0")/tls_lib.sh"

ws_need_node

COUNT=${WSS_NODE_COUNT:-20000}
PORT=8443
DURATION=75

# transfer TAG SERVER_ARGS WS_OPTIONS (tls_lib.sh's wss_transfer)
transfer() {
	# shellcheck disable=SC2086
	wss_peer_start "$1" $PORT 11 "$NODE" "$KDIR/ws_peer_node.js" \
		--tls-cert "$TLS_SERVER_CERT" --tls-key "$TLS_SERVER_KEY" $2
	wss_transfer "$1" "$3"
}

transfer v13 "--tls-min 1.3 --deflate 2" '"url": "wss://'$TLS_HOST:$PORT'/feed", "ca_file": "'$TLS_CA'"'
wss_transfer_check v13 version=TLSv1.3 sni=$TLS_HOST host=$TLS_HOST:$PORT named=1 deflate=on

transfer v12 "--deflate 1" \
	'"url": "wss://'$K_IP:$PORT'/feed", "ca_path": "'$TLS_CAPATH'", "tls_max_version": "1.2", "deflate": false'
wss_transfer_check v12 version=TLSv1.2 sni=- host=$K_IP:$PORT named=0 deflate=off
finish
