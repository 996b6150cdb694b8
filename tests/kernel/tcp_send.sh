#!/bin/bash
# L2 (b): the tcp stage sends a 64 MiB random file to the kernel's TCP.
# tcp_peer.py serve-recv (10.77.0.1:5002) reads to EOF; tcp_app (send mode)
# connects, sends the file in SEND commands (at most send_mbufs of them unacked,
# see tcp_app.c), then CLOSEs.
# Asserts: lcpipe exits 0; the kernel received exactly the file (byte count and
# SHA-256) and saw EOF; tcp_app handed the whole file to tcp with no refused send
# (ENOBUFS) and the connection closed cleanly; leaked_objects == 0.
. "$(dirname "$0")/tcp_lib.sh"

SIZE=${TCP_SEND_BYTES:-67108864} # 64 MiB
DURATION=${DURATION_SEND:-90}
# pacing (tcp_app.c): at most SEND_MBUFS * 1400 bytes outstanding, which tcp's
# send buffer must hold (4096 * 1400 = 5.5 MiB < 8 MiB)
SNDBUF=${TCP_SNDBUF:-8388608}
SEND_MBUFS=${TCP_SEND_MBUFS:-4096}
rand_file "$W/file" "$SIZE"
say "file: $SIZE bytes, sha256 $SHA; tcp sndbuf $SNDBUF, tcp_app send_mbufs $SEND_MBUFS"

peer_start b serve-recv --port 5002 --conns 1 --timeout $((DURATION + 20)) || finish
tcp_conf b "\"mode\": \"send\", \"connect\": \"10.77.0.1:5002\", \"expect\": 1, \"file\": \"$W/file\", \"send_mbufs\": $SEND_MBUFS" \
	"\"sndbuf\": $SNDBUF"
lcpipe_peer_run serve-recv

pycheck "sent file" res="$RESULT" rep="$REPORT" peer="$PEER_OUT" size="$SIZE" sha="$SHA" <<'PY' || show "$LOG"
r, rep, p = J("res"), J("rep"), J("peer")
size, sha = int(A["size"]), A["sha"]
kernel_got_file(p, size, sha)
cs = r.get("connections", [])
check(len(cs) == 1, "one connection in the result", cs)
c = conn0(r)
check(c["bytes_out"] == size and c["send_done"], "tcp_app handed all %d bytes to tcp" % size, c)
check(r.get("refused_sends") == 0, "no SEND refused by tcp (ENOBUFS)", r.get("refused_sends"))
ev = c["events"]
check(ev["connected"] == 1 and ev["closed"] == 1, "events: connected and closed once", ev)
check(ev["reset"] == 0 and ev["timeout"] == 0 and ev["error"] == 0, "events: no reset, timeout or error", ev)
check(rep.get("stop_reason") == "tcp_app: done", "the run was ended by tcp_app", rep.get("stop_reason"))
PY
report_common
finish
