#!/bin/bash
# L2 (g): the stack answers ICMP echo. lcpipe runs port_ethdev + tcp + tcp_app
# (listening on 7001, nothing connects); the kernel pings 10.77.0.2 five times,
# 0.2 s apart, 2 s wait each (iputils ping, or tcp_peer.py ping over a raw socket
# when ping is not installed, or TCP_PING_PY=1); then lcpipe is stopped with
# SIGINT.
# Asserts: 5 of 5 replies (0 % loss); lcpipe exits 0; leaked_objects == 0.
. "$(dirname "$0")/tcp_lib.sh"

DURATION=${DURATION_PING:-30}
tcp_conf g '"mode": "recv", "listen": 7001'
lcpipe_start || finish
if command -v ping >/dev/null && [ -z "${TCP_PING_PY:-}" ]; then
	say "+ ping -c 5 -i 0.2 -W 2 $LC_IP"
	nsx ping -c 5 -i 0.2 -W 2 $LC_IP >"$W/ping.out" 2>&1
	prc=$?
	cat "$W/ping.out"
	if [ $prc -eq 0 ] && grep -q ' 0% packet loss' "$W/ping.out"; then
		ok "ping: 5 of 5 replies"
	else
		fail "ping $LC_IP: exit $prc, not 0% loss"
		show "$LOG"
	fi
else
	peer_start g ping --host $LC_IP --count 5 --interval 0.2 --wait 2
	peer_wait 30
	cat "$PEER_OUT"
	if [ "$PEER_RC" -eq 0 ]; then
		ok "ping (tcp_peer.py, raw socket): 5 of 5 replies"
	else
		fail "ping (tcp_peer.py) $LC_IP: exit $PEER_RC"
		show "$PEER_ERR" "$LOG"
	fi
fi
kill -INT "$LC_PID"
lcpipe_wait
expect_lc_rc 0
report_common
finish
