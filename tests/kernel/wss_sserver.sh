#!/bin/bash
# L2 wss://: TLS handshake edge cases for the ws stage's client, against
# `openssl s_server` (tls_lib.sh's sserver_start: the good certificate for
# feed.example.test, the URL wss://feed.example.test:8443/, the test CA) and,
# for a server that does not speak TLS, the plain ws_peer.py. Each case is one
# lcpipe run of 3 s (engine duration) in which the ws stage tries again and
# again (handshake_timeout_ms 1000, reconnects 100..400 ms apart); each
# asserts that no connection opened and nothing was delivered, that every
# attempt was counted under the one counter the case maps to (>= 1; every
# other fail_* / tls_fail_* counter 0), that lcpipe logged the reason for
# each, and where s_server says why, that it did:
#   www12 / www13   s_server -www -tls1_2 / -tls1_3: the TLS handshake
#                   completes over that version (tls_handshakes == one per
#                   attempt, logged with the version), and s_server's
#                   answer to the upgrade, decrypted, is "HTTP/1.0 200 ok":
#                   fail_handshake ("response is not HTTP/1.1")
#   min13           s_server -tls1_2 only, tls_min_version 1.3: s_server
#                   answers with a protocol_version alert: tls_fail_alert
#   max12           s_server -tls1_3 only, tls_max_version 1.2: the same
#   nocipher12      s_server -tls1_2 with only a NULL cipher (which lcpipe
#                   does not offer): handshake_failure alert ("no shared
#                   cipher"): tls_fail_alert
#   nocipher13      s_server -tls1_3 with only TLS_AES_128_CCM_8_SHA256 (not
#                   in OpenSSL's default suites): the same
#   ciphersuites13  that s_server with tls_ciphersuites
#                   TLS_AES_128_CCM_8_SHA256: the handshake completes with that
#                   suite (then fail_handshake, as www13)
#   stall           s_server stopped (SIGSTOP): the kernel accepts and takes
#                   the ClientHello, nothing answers: tls_fail_timeout (and
#                   not fail_handshake_timeout)
#   notls           wss:// at a plain ws:// server (ws_peer.py): the answer to
#                   the ClientHello is not TLS: tls_fail_protocol (an attempt
#                   the one-threaded Python server did not answer within the
#                   1 s handshake timeout, under a loaded CI, may count
#                   tls_fail_timeout, or fail_handshake_timeout when it did
#                   not accept in time; found by CI's distcheck and sanitizer
#                   runs, 2026-12-05)
# Every run: lcpipe exits 0, leaked_objects == 0. Each case has its own server
# port (8443, 8444, ...), so no connect meets a 4-tuple that an earlier case
# (another stack: other ISN and timestamp keys) left in s_server's TIME_WAIT:
# such a SYN draws the old connection's ACK and costs a RST and a resend
# (doc/tcp.md, Limits), which is not what these cases test (found by CI:
# nocipher12 counted one fail_handshake_timeout, 2026-12-05).
. "$(dirname "$0")/ws_lib.sh"
. "$(dirname "$0")/tls_lib.sh"

PORT=8442
# next_port: the next case's server port, and the ws stage's URL for it
next_port() {
	PORT=$((PORT + 1))
	URL='"url": "wss://'$TLS_HOST:$PORT'/", "subscribe": "sub", "ca_file": "'$TLS_CA'"'
}
WS_RETRY='"handshake_timeout_ms": 1000, "reconnect_min_ms": 100, "reconnect_max_ms": 400'

# case TAG WS_OPTIONS CHECK_ARGS... -- S_SERVER_ARGS...: s_server with those
# arguments, one lcpipe run, wss_refused_check with CHECK_ARGS, s_server stopped
case_sserver() {
	local tag=$1 wso=$2 chk=() pid
	shift 2
	while [ $# -gt 0 ] && [ "$1" != -- ]; do
		chk+=("$1")
		shift
	done
	shift
	next_port
	sserver_start "$tag" $PORT "$@" || finish
	pid=$SS_PID
	[ "$tag" = stall ] && sserver_stall
	DURATION=3
	ws_conf "$tag" "$URL, $WS_RETRY${wso:+, $wso}" '"expect": 1'
	wss_run
	tls_stop "$pid"
	wss_refused_check "$tag" sserver="$SS_ERR" "${chk[@]}"
	ws_report_common
}

case_sserver www12 "" counter=fail_handshake handshakes=each version=TLSv1.2 why="response is not HTTP/1.1" \
	-- -www -tls1_2
case_sserver www13 "" counter=fail_handshake handshakes=each version=TLSv1.3 why="response is not HTTP/1.1" \
	-- -www -tls1_3
case_sserver min13 '"tls_min_version": "1.3"' counter=tls_fail_alert why="protocol version" \
	sserver_says="unsupported protocol" -- -www -tls1_2
case_sserver max12 '"tls_max_version": "1.2"' counter=tls_fail_alert why="protocol version" \
	sserver_says="unsupported protocol" -- -www -tls1_3
case_sserver nocipher12 "" counter=tls_fail_alert why="handshake failure" sserver_says="no shared cipher" \
	-- -www -tls1_2 -cipher 'ECDHE-ECDSA-NULL-SHA:@SECLEVEL=0'
case_sserver nocipher13 "" counter=tls_fail_alert why="handshake failure" sserver_says="no shared cipher" \
	-- -www -tls1_3 -ciphersuites TLS_AES_128_CCM_8_SHA256
case_sserver ciphersuites13 '"tls_ciphersuites": "TLS_AES_128_CCM_8_SHA256"' counter=fail_handshake \
	handshakes=each version=TLSv1.3 cipher=TLS_AES_128_CCM_8_SHA256 why="response is not HTTP/1.1" \
	-- -www -tls1_3 -ciphersuites TLS_AES_128_CCM_8_SHA256
case_sserver stall "" counter=tls_fail_timeout why="timeout" -- -www

# notls: the plain ws_peer.py where a TLS server should be
DURATION=3
next_port
server_start notls "$PY" "$KDIR/ws_peer.py" --port $PORT --count 1 --result "$W/notls.server.json" --timeout 60 ||
	finish
ws_conf notls "$URL, $WS_RETRY" '"expect": 1'
wss_run
srv_term
wss_refused_check notls counter=tls_fail_protocol why="wrong version number" slow_ok=1
ws_report_common
finish
