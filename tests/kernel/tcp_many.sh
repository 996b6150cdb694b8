#!/bin/bash
# L2 (d): 100 concurrent connections. tcp_peer.py serve-many (10.77.0.1:5004)
# accepts 100 connections and sends 64 KiB of a per-connection pattern on each
# (SHA-256 counter mode from the accept index, see tcp_peer.py), then closes;
# tcp_app (recv mode) opens the 100 connections at once and ends the run when all
# 100 are done.
# Asserts: lcpipe exits 0; the server accepted 100; all 100 of tcp_app's
# connections were CONNECTED, received 65536 bytes, closed without reset/error,
# and their SHA-256s are exactly the 100 the server sent (as a set; and per
# connection by port when the tcp stage reports local ports); leaked_objects == 0.
. "$(dirname "$0")/tcp_lib.sh"

N=${TCP_MANY_CONNS:-100}
BYTES=${TCP_MANY_BYTES:-65536}
DURATION=${DURATION_MANY:-60}
peer_start d serve-many --port 5004 --conns "$N" --bytes "$BYTES" --timeout $((DURATION + 20)) || finish
tcp_conf d "\"mode\": \"recv\", \"connect\": \"10.77.0.1:5004\", \"connections\": $N, \"expect\": $N"
lcpipe_peer_run serve-many

pycheck "$N connections" res="$RESULT" rep="$REPORT" peer="$PEER_OUT" n="$N" bytes="$BYTES" <<'PY' || show "$LOG"
r, rep, p = J("res"), J("rep"), J("peer")
n, b = int(A["n"]), int(A["bytes"])
check(p.get("accepted") == n, "the kernel accepted %d connections" % n, p.get("accepted"))
cs = r.get("connections", [])
check(len(cs) == n, "%d connections in the result" % n, len(cs))
check(sorted(c["user"] for c in cs) == list(range(1, n + 1)), "users 1..%d" % n)
bad = [c for c in cs if c["events"]["connected"] != 1]
check(not bad, "all CONNECTED once", bad[:3])
bad = [c for c in cs if c["bytes_in"] != b]
check(not bad, "all received %d bytes" % b, [(c["user"], c["bytes_in"]) for c in bad][:10])
bad = [c for c in cs if c["events"]["reset"] or c["events"]["timeout"] or c["events"]["error"]
       or c["events"]["closed"] != 1]
check(not bad, "all closed cleanly (no reset, timeout or error)", [(c["user"], c["events"], c["last_reason"]) for c in bad][:5])
want = sorted(k["sha256"] for k in p.get("conns", []))
got = sorted(c["sha256_in"] for c in cs)
check(len(set(want)) == n and got == want, "the %d sha256s are exactly the server's %d patterns" % (n, n),
      "%d of ours not sent by the server" % len(set(got) - set(want)))
byport = {k["peer_port"]: k["sha256"] for k in p.get("conns", [])}
if all(c["lport"] for c in cs):
    bad = [c["user"] for c in cs if byport.get(c["lport"]) != c["sha256_in"]]
    check(not bad, "each connection got the pattern the server sent to its port", bad[:10])
check(r.get("unknown_conn_events") == 0, "no events for unknown connections", r.get("unknown_conn_events"))
PY
report_common
finish
