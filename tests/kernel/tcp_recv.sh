#!/bin/bash
# L2 (a): the tcp stage receives a 256 MiB random file from the kernel's TCP.
# tcp_peer.py serve-send (10.77.0.1:5001) sends the file and closes; tcp_app (recv
# mode) connects, hashes every DATA byte in order, CLOSEs on PEER_CLOSED and ends
# the run after 1 connection is done.
# Asserts: lcpipe exits 0, stopped by tcp_app; the connection received exactly the
# file (byte count and SHA-256), saw connected / peer_closed / closed once and no
# reset / timeout / error; the server sent the whole file; the report has the tcp
# stage's counters and leaked_objects == 0; some segments took the coalesced path.
. "$(dirname "$0")/tcp_lib.sh"

SIZE=${TCP_RECV_BYTES:-268435456} # 256 MiB
DURATION=${DURATION_RECV:-120}
rand_file "$W/file" "$SIZE"
say "file: $SIZE bytes, sha256 $SHA"

peer_start a serve-send --port 5001 --file "$W/file" --timeout $((DURATION + 20)) || finish
tcp_conf a '"mode": "recv", "connect": "10.77.0.1:5001", "expect": 1'
lcpipe_peer_run serve-send
say "lcpipe ran $LC_MS ms (start to exit)"

pycheck "received file" res="$RESULT" rep="$REPORT" peer="$PEER_OUT" size="$SIZE" sha="$SHA" <<'PY' || show "$LOG"
r, rep, p = J("res"), J("rep"), J("peer")
size, sha = int(A["size"]), A["sha"]
check(rep.get("stop_reason") == "tcp_app: done", "the run was ended by tcp_app", rep.get("stop_reason"))
check(p.get("sent") == size and p.get("sha256") == sha, "the kernel sent the whole file", p)
cs = r.get("connections", [])
check(len(cs) == 1, "one connection in the result", cs)
c = conn0(r)
check(c["bytes_in"] == size, "bytes received == %d" % size, c["bytes_in"])
check(c["sha256_in"] == sha, "sha256 of the received bytes == the file's", c["sha256_in"])
ev = c["events"]
check(ev["connected"] == 1 and ev["peer_closed"] == 1 and ev["closed"] == 1,
      "events: connected, peer_closed, closed once each", ev)
check(ev["reset"] == 0 and ev["timeout"] == 0 and ev["error"] == 0, "events: no reset, timeout or error", ev)
check(r.get("unknown_conn_events") == 0, "no events for unknown connections", r.get("unknown_conn_events"))
check(rep.get("stages", {}).get("app", {}).get("counters", {}).get("bytes_in") == size, "tcp_app counter bytes_in == %d" % size,
      rep.get("stages", {}).get("app"))
t = rep.get("stages", {}).get("tcp", {}).get("counters", {})
check(0 < t.get("tcp_coalesced", 0) < t.get("tcp_segs_in", 0),
      "in-order coalescing (rx_coalesce) took some of the kernel's segments: %s of %s"
      % (t.get("tcp_coalesced"), t.get("tcp_segs_in")), t.get("tcp_coalesced"))
PY
report_common
finish
