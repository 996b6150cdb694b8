#!/bin/bash
# L2 (h): mbuf exhaustion does not freeze connections (issue 17 item 5). Two
# connections of tcp_app send TCP_EXHAUST_BYTES each (default 8 MiB) to the
# kernel through the routed namespace whose nftables drop every 30th TCP
# segment each way, flat out (rate 0), SEND mbufs from the engine's packet
# pool (send_mbufs 0, tcp_app's own pool_reserve 0), a send buffer larger than
# the file and the engine's pool at 4095 mbufs: the applications' data and the
# stack's queues can take every mbuf of that pool. The port receives into a
# pool of its own (port_ethdev rx_mbufs), so the ACKs that free the send
# queues still come in, and the out-of-order queue holds nothing more while
# that pool runs low (tcp rx_reserve). Asserts: lcpipe exits 0 (ended by
# tcp_app: both connections done); the kernel received exactly the file on
# both (count, SHA-256, EOF); no reset, no timeout; leaked_objects == 0.
. "$(dirname "$0")/tcp_lib.sh"

SIZE=${TCP_EXHAUST_BYTES:-8388608}
DURATION=${DURATION_EXHAUST:-60}
topo_routed
nft_drop_every 30 || { fail "nft: cannot install the drop rules"; finish; }
ok "nft drops every 30th TCP segment in each direction (forward hook)"

rand_file "$W/f" "$SIZE"
peer_start ex serve-recv --port 5013 --conns 2 --timeout $((DURATION + 20)) || finish
tcp_conf ex "\"mode\": \"send\", \"connect\": \"$PEER_IP:5013\", \"connections\": 2, \"expect\": 2, \"file\": \"$W/f\", \"send_mbufs\": 0, \"pool_reserve\": 0, \"rate_mbps\": 0" \
	"\"sndbuf\": $((2 * SIZE))" '"mbufs": 4095'
lcpipe_peer_run serve-recv
pycheck "exhaustion" res="$RESULT" rep="$REPORT" peer="$PEER_OUT" size="$SIZE" sha="$SHA" <<'PY' || show "$LOG"
r, rep, p = J("res"), J("rep"), J("peer")
size, sha = int(A["size"]), A["sha"]
conns = p.get("conns") or []
check(len(conns) == 2, "the kernel accepted two connections", len(conns))
for i, k in enumerate(conns):
    check(k.get("bytes") == size and k.get("sha256") == sha and k.get("eof"),
          "connection %d: the kernel received exactly the file (%d bytes, sha256) and EOF" % (i, size),
          {x: k.get(x) for x in ("bytes", "eof")})
cs = r.get("connections") or []
check(len(cs) == 2, "tcp_app had two connections", len(cs))
for i, c in enumerate(cs):
    check(c["events"]["reset"] == 0 and c["events"]["timeout"] == 0, "connection %d: no reset / timeout" % i,
          c["events"])
check(rep.get("stop_reason") == "tcp_app: done", "the run ended when both transfers were done",
      rep.get("stop_reason"))
check(r.get("refused_sends") == 0, "no SEND refused by tcp", r.get("refused_sends"))
t = rep.get("stages", {}).get("tcp", {}).get("counters", {})
pt = rep.get("stages", {}).get("port", {}).get("counters", {})
print("info: run %.1f s; tcp: retransmits %s, drop_tx_nobuf %s, drop_tcp_rx_pressure %s, rx_pressure_episodes %s, "
      "bufs_held_peak %s; port: %s" % (rep.get("duration_s", 0), t.get("tcp_retransmits"), t.get("drop_tx_nobuf"),
      t.get("drop_tcp_rx_pressure"), t.get("rx_pressure_episodes"), t.get("bufs_held_peak"),
      {k: v for k, v in pt.items() if "drop" in k or "nombuf" in k or "alloc" in k}))
PY
report_common
finish
