#!/bin/bash
# L2: host names in ws:// URLs, resolved by lcpipe (getaddrinfo on the ws
# stage's resolver thread) through /etc/netns/$NS/hosts, which `ip netns exec`
# bind-mounts over /etc/hosts (with a gai.conf that orders the addresses and a
# resolv.conf that keeps any DNS query on the namespace's loopback).
#   multi.example.test  two addresses: 10.77.0.3 first (the kernel side has it,
#                       nothing listens there: connection refused), then
#                       10.77.0.1 (the server). One resolution, the refused
#                       address, then at once (no backoff) the next one: the
#                       connection opens and the transfer is byte-exact; the
#                       log names the refused address and "trying the next
#                       address"; the Host header carries the name and port
#   nosuch.example.test in no file, no DNS: every attempt is a logged, counted
#                       resolution failure (fail_resolve), retried with backoff,
#                       never a connect, never an exit
. "$(dirname "$0")/ws_lib.sh"
. "$(dirname "$0")/tls_lib.sh"

COUNT=20000
PORT=8766
BAD_IP=10.77.0.3
DURATION=${DURATION_WS:-30}
SUB='{"op":"sub"}'
printf '127.0.0.1\tlocalhost\n%s\tmulti.example.test\n%s\tmulti.example.test\n' "$BAD_IP" "$K_IP" >"$NETNS_ETC/hosts"
printf 'precedence ::ffff:%s/128 100\nprecedence ::ffff:0:0/96 10\n' "$BAD_IP" >"$NETNS_ETC/gai.conf"
printf 'nameserver 127.0.0.1\noptions timeout:1 attempts:1\n' >"$NETNS_ETC/resolv.conf"

server_start names "$PY" "$KDIR/ws_peer.py" --port $PORT --count "$COUNT" --seed 11 --expect-sub "$SUB" \
	--result "$W/names.server.json" --timeout $((DURATION + 10)) || finish
ws_conf names '"url": "ws://multi.example.test:'$PORT'/feed,ws://nosuch.example.test:'$PORT'/feed",
  "subscribe": "{\"op\":\"sub\"}", "ping_interval_ms": 200, "pong_timeout_ms": 20000,
  "reconnect_min_ms": 100, "reconnect_max_ms": 400, "reconnect_reset_ms": 0' \
	'"expect_per_conn": "'$COUNT',0", "linger_ms": 1500'
lcpipe_start || finish
nsx ip addr add $BAD_IP/24 dev $TAP || fail "ip addr add $BAD_IP/24 dev $TAP"
lcpipe_wait
server_wait 15
expect_lc_rc 0

pycheck "names" rep="$REPORT" log="$LOG" srv="$W/names.server.json" hash="$RESULT" count="$COUNT" \
	bad="$BAD_IP" port="$PORT" <<'PY'
import re
r, srv, h = J("rep"), J("srv"), J("hash")
log = open(A["log"]).read()
w = r.get("stages", {}).get("ws", {}).get("counters", {})
bad, port, count = A["bad"], A["port"], int(A["count"])
check(w.get("opens") == 1, "one open (conn 0, after the refused address)", w.get("opens"))
check(w.get("fail_tcp", 0) >= 1, "the refused address counted (fail_tcp)", w.get("fail_tcp"))
check(re.search(r"conn 0 \(multi\.example\.test, %s\): tcp reset \(Connection refused\); trying the next address" % re.escape(bad), log),
      "the log names the refused address and goes on to the next")
# before the open (afterwards the server, done, refuses on both addresses)
first = log.split("conn 0: open", 1)[0]
check(not re.search(r"conn 0 \(multi\.example\.test[^)]*\): .*; reconnecting", first),
      "no backoff between the two addresses")
check(w.get("resolves", 0) >= 1 and w.get("connects", 0) >= 2, "resolved, then two connects",
      (w.get("resolves"), w.get("connects")))
check(w.get("fail_resolve", 0) >= 2, "nosuch.example.test: every attempt a counted resolution failure",
      w.get("fail_resolve"))
check("cannot resolve nosuch.example.test" in log, "the failure is logged with the name")
c0 = [c for c in h.get("conns", []) if c.get("conn") == 0]
check(len(c0) == 1 and c0[0].get("msgs") == count and c0[0].get("sha256") == srv.get("sha256"),
      "conn 0: every message, SHA-256 == the server's", (c0[0].get("msgs") if c0 else None))
hosts = [c.get("host") for c in srv.get("conns", [])]
check(("multi.example.test:%s" % port) in hosts, "the Host header carried the name and port", hosts)
PY
ws_report_common
finish
