#!/bin/bash
# L2 wss://: the ws stage's TLS client over lcpipe's own TCP against nginx
# (Debian's) terminating TLS on 443 in front of the plain ws_peer.py on
# 127.0.0.1:8765 (proxy_pass, HTTP/1.1, Upgrade / Connection passed on; the
# way exchanges sit behind CDNs): tls_lib.sh's nginx_start, with its own
# prefix, pid, logs and temp paths under the test dir, stopped at the end.
# ws_peer.py serves its transfer (WSS_NGINX_COUNT messages, default 20 000)
# twice (--serve 2: it closes with 1000, nginx passes that on, the ws stage
# reconnects through nginx and resumes its TLS session there):
#   v13  wss://feed.example.test/feed: the name (resolved through
#        /etc/netns/$NS/hosts) and no port, so 443; TLS 1.3; ws_peer.py with
#        permessage-deflate, agreed end to end through nginx
#   v12  the same with tls_max_version 1.2 and "deflate": false (not offered)
# Asserts for each: byte-exact delivery of both transfers through the proxy
# (ws_check_transfer: count, bytes, SHA-256 of the payloads and of the
# (opcode, length) sequence, pings and pongs both ways, the close 1000, no
# fail_*); tls_handshakes == opens == 2, tls_resumed == 1, no tls_fail_*;
# lcpipe logged the version and ALPN http/1.1; nginx's log: two upgrades
# (101) over that version with SNI feed.example.test and ALPN http/1.1, the
# second on a reused session; the server behind it got Host
# feed.example.test (no port: 443 is the scheme's); lcpipe exits 0,
# leaked_objects == 0. Skips (77) without nginx.
. "$(dirname "$0")/ws_lib.sh"
. "$(dirname "$0")/tls_lib.sh"

command -v nginx >/dev/null || skip "no nginx (Debian: nginx)"
COUNT=${WSS_NGINX_COUNT:-20000}
UP=8765
DURATION=75

# transfer TAG WS_OPTIONS: ws_peer.py (deflate on) and nginx, one lcpipe run,
# nginx stopped
transfer() {
	local tag=$1
	wss_peer_start "$tag" $UP 9 "$PY" "$KDIR/ws_peer.py" --deflate
	nginx_start "$tag" 443 $UP || finish
	wss_transfer "$tag" "$2"
	tls_stop "$NGINX_PID"
	json_lines "$NGINX_ACCESS" >"$W/$tag.access.json" || fail "nginx's access log $NGINX_ACCESS"
}

# host_check TAG: the server behind nginx got Host feed.example.test on each
host_check() {
	pycheck "$1: behind nginx" srv="$W/$1.server.json" <<'PY' || show "$NGINX_ERR"
cs = J("srv").get("conns", [])
check(len(cs) == 2 and all(c.get("host") == "feed.example.test" and c.get("tls") is None for c in cs),
      "the server behind nginx: 2 connections, Host feed.example.test (443: no port), no TLS of its own", cs)
PY
}

# nginx_case TAG VERSION DEFLATE WS_OPTIONS: transfer TAG, then its checks: the
# whole transfer, TLS VERSION with a resumed second handshake, deflate DEFLATE
# (on / off), the Host behind nginx, the report
nginx_case() {
	transfer "$1" "$4"
	wss_transfer_check "$1" nginx="$W/$1.access.json" version="$2" sni=$TLS_HOST named=1 deflate="$3"
	host_check "$1"
}

nginx_case v13 TLSv1.3 on '"url": "wss://'$TLS_HOST'/feed", "ca_file": "'$TLS_CA'"'
nginx_case v12 TLSv1.2 off \
	'"url": "wss://'$TLS_HOST'/feed", "ca_file": "'$TLS_CA'", "tls_max_version": "1.2", "deflate": false'
finish
