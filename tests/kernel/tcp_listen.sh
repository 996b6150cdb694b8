#!/bin/bash
# L2 (c): a passive open. tcp_app (echo mode) LISTENs on 7000; the kernel's
# tcp_peer.py client-echo connects to 10.77.0.2:7000 (retrying while the listener
# is not up yet), sends 1 MiB of random bytes and reads them back; then lcpipe is
# stopped with SIGINT.
# Asserts: the client got back exactly what it sent; tcp_app saw one ACCEPTED
# connection that received and echoed 1 MiB with the client's SHA-256 and was
# closed without reset; lcpipe exits 0 on SIGINT (stop_reason SIGINT);
# leaked_objects == 0.
. "$(dirname "$0")/tcp_lib.sh"

BYTES=${TCP_ECHO_BYTES:-1048576}
DURATION=${DURATION_LISTEN:-60}
tcp_conf c '"mode": "echo", "listen": 7000' '"sndbuf": 4194304'
lcpipe_start || finish
peer_start c client-echo --host $LC_IP --port 7000 --bytes "$BYTES" --timeout 30
peer_wait 60
[ "$PEER_RC" -eq 0 ] && ok "client-echo: $BYTES bytes came back intact" ||
	{ fail "client-echo exited $PEER_RC"; show "$PEER_OUT" "$PEER_ERR" "$LOG"; }
sleep 0.5 # the connection's last events (CLOSED) reach tcp_app
kill -INT "$LC_PID"
lcpipe_wait
expect_lc_rc 0

pycheck "echo" res="$RESULT" rep="$REPORT" peer="$PEER_OUT" bytes="$BYTES" <<'PY' || show "$LOG"
r, rep, p = J("res"), J("rep"), J("peer")
n = int(A["bytes"])
check(rep.get("stop_reason") == "SIGINT", "stop_reason SIGINT", rep.get("stop_reason"))
k = (p.get("conns") or [{}])[0]
check(k.get("match") is True and k.get("received") == n, "the client got its %d bytes back" % n, k)
cs = r.get("connections", [])
check(len(cs) == 1, "one connection in the result", cs)
c = conn0(r)
check(c["events"]["accepted"] == 1, "tcp_app saw it ACCEPTED", c["events"])
check(c["peer"].startswith("10.77.0.1:"), "peer is the kernel (10.77.0.1)", c["peer"])
check(c["lport"] in (0, 7000), "local port 7000", c["lport"])
check(c["bytes_in"] == n and c["bytes_out"] == n, "tcp_app received and echoed %d bytes" % n, c)
check(c["sha256_in"] == k.get("sha256"), "sha256 of the received bytes == the client's", c["sha256_in"])
check(c["events"]["reset"] == 0 and c["events"]["error"] == 0, "no reset or error", c["events"])
check(c["events"]["peer_closed"] == 1 and c["events"]["closed"] == 1, "peer_closed then closed", c["events"])
PY
report_common
finish
