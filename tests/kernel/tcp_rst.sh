#!/bin/bash
# L2 (f): the peer resets the connection. tcp_peer.py serve-send --rst-after 1 MiB
# of a 4 MiB file: it sends 1 MiB and closes with SO_LINGER {1, 0}, so the kernel
# sends RST; tcp_app (recv mode) ends the run when the connection is done.
# Asserts: lcpipe exits 0; the connection saw exactly one RESET (ECONNRESET), no
# CLOSED; what it received is a prefix of the file, at most 1 MiB (the SHA-256 of
# the file's first bytes_in bytes matches), and all 1 MiB when the kernel had it
# acked before the RST (serve-send waits up to 2 s for that); leaked_objects == 0.
. "$(dirname "$0")/tcp_lib.sh"

DURATION=${DURATION_RST:-30}
head -c 4194304 /dev/urandom >"$W/file" || { fail "cannot make the file"; finish; }
peer_start f serve-send --port 5006 --file "$W/file" --rst-after 1048576 --timeout $((DURATION + 20)) || finish
tcp_conf f '"mode": "recv", "connect": "10.77.0.1:5006", "expect": 1'
lcpipe_start || finish
lcpipe_wait
peer_wait
expect_lc_rc 0
[ "$PEER_RC" -eq 0 ] || { fail "serve-send --rst-after exited $PEER_RC"; show "$PEER_OUT" "$PEER_ERR"; }

pycheck "reset" res="$RESULT" rep="$REPORT" peer="$PEER_OUT" file="$W/file" <<'PY' || show "$LOG"
import errno, hashlib
r, rep, p = J("res"), J("rep"), J("peer")
check(rep.get("stop_reason") == "tcp_app: done", "the run was ended by tcp_app", rep.get("stop_reason"))
cs = r.get("connections", [])
check(len(cs) == 1, "one connection in the result", cs)
c = conn0(r)
ev = c["events"]
check(ev["connected"] == 1, "connected", ev)
check(ev["reset"] == 1, "events.reset == 1", ev)
check(ev["closed"] == 0 and ev["timeout"] == 0, "no closed / timeout", ev)
check(c["last_reason"] == errno.ECONNRESET, "reason ECONNRESET (%d)" % errno.ECONNRESET, c["last_reason"])
n = c["bytes_in"]
check(0 < n <= 1048576, "received 0 < %d <= 1 MiB before the reset" % n, n)
if p.get("unacked_at_rst") == 0:
    check(n == 1048576, "the peer had all 1 MiB acked before its RST: all of it arrived", n)
with open(A["file"], "rb") as f:
    pre = f.read(n)
check(hashlib.sha256(pre).hexdigest() == c["sha256_in"], "what arrived is the file's first %d bytes" % n)
PY
report_common
finish
