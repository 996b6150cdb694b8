#!/bin/bash
# B15 — bulk transfers under loss (doc/benchmarks.md "B15"): lcpipe's TCP
# sending to and receiving from the Linux kernel over a veth router that drops
# every 30th TCP segment each way (nftables, forward hook), against Linux TCP
# itself on the same path in the same run.
#
#   lcpipe (tcp_app, net_tap lcpt0) --+                        +-- tcp_peer.py (kernel)
#                                     +-- router ns (nft) -----+   10.77.1.1
#   kernel stand-in 10.77.2.1 (vK) ---+
#
# topo_routed / topo_standin / nft_drop_every from tests/kernel/tcp_lib.sh: the
# anchor is a kernel TCP in a third namespace behind the same router, its veth
# under the same 1/30 drop rules, talking to the same tcp_peer.py servers.
# Cases, B15_BYTES (64 MiB) each, interleaved per repetition (B15_REPS, 3):
#   send    lcpipe -> kernel server, one run per congestion control of
#           B15_LCP_CC (the tcp stage's "congestion": "reno bbr")
#                                     | anchors: stand-in -> kernel server, one
#           per congestion control of B15_CC ("cubic bbr": Linux's default
#           build and Debian's, and this host's kernel default)
#   recv    kernel server -> lcpipe   | anchor: kernel server -> stand-in; the
#           server sends with B15_RECV_CC (bbr) to both, so that the receiver
#           and not a loss-bound sender sets the pace
# Each Linux sender's algorithm is set on its socket (tcp_peer.py --cc) and
# checked in its output: a namespace's default is its host's, which differs
# from machine to machine.
# under: "clean" (no drop, the regression check), "loss" (1/30 each way), and
# "loss+reorder" (the same plus lcpipe's fault stage holding back 1 % of the
# frames each way behind 3 later ones: tc netem does not exist here, so only
# lcpipe's side can be reordered; its anchor is the "loss" kernel figure).
# Time: the kernel server's, from accept to the peer's FIN (send) or to EOF
# (recv); every transfer is checked (bytes and SHA-256). Result: the median
# of the repetitions per case, and the median of the per-repetition ratios
# lcpipe / Linux, per anchor (target <= 1.2 under loss). For sending, also
# "ratio2": lcpipe sending / Linux sending to lcpipe over the same path (the recv
# case of the same repetition: it shares lcpipe's transport, not its
# receiver). One JSON line per case.
# lcpipe's port: net_tap (lcpt0), or with LCP_TCP_PORT=af_packet net_af_packet
# on a veth pair in its place (tests/kernel/tcp_lib.sh): the same stack over a
# cheaper transport, which splits a ratio between the two.
# Needs root (namespaces, tap, nft); SKIP (77) otherwise.
set -u
: "${BENCH_BUILDDIR:=$(pwd)}"
top_builddir=$(cd "$BENCH_BUILDDIR/.." && pwd)
B15_BYTES=${B15_BYTES:-67108864}
B15_REPS=${B15_REPS:-3}
B15_EVERY=${B15_EVERY:-30}
B15_CASES=${B15_CASES:-"clean loss reorder"}
B15_CC=${B15_CC:-"cubic bbr"}
B15_RECV_CC=${B15_RECV_CC:-bbr}
B15_LCP_CC=${B15_LCP_CC:-"reno bbr"}
DURATION=${B15_DURATION:-150}
. "$(dirname "$0")/../kernel/tcp_lib.sh"
"$LCPIPE" describe fault >/dev/null 2>&1 || skip "the fault plugin is not built"

SNDBUF=8388608
SEND_MBUFS=4096
topo_routed
topo_standin

# b15_conf TAG APP_OPTIONS REORDER(0|1) CC: tcp_conf's pipeline, with the fault
# stage between port and tcp when REORDER is 1, the tcp stage on congestion
# control CC
b15_conf() {
	if [ "$3" = 0 ]; then
		tcp_conf "$1" "$2" "\"sndbuf\": $SNDBUF, \"congestion\": \"$4\""
	else
		tcp_conf "$1" "$2" "\"sndbuf\": $SNDBUF, \"congestion\": \"$4\"" '"mbufs": 32767' \
			"\"seed\": $RANDOM, \"reorder\": 0.01, \"reorder_after\": 3, \"frames\": \"tcp\""
	fi
}

head -c "$B15_BYTES" /dev/urandom >"$W/file" || { fail "cannot make the file"; finish; }
SHA=$(sha256sum "$W/file" | cut -d' ' -f1)
OUT=$W/b15.results # lines: case side who rep seconds
: >"$OUT"
PORT=5100

# one_run CASE SIDE WHO REP: one transfer; appends "CASE SIDE WHO REP SECONDS"
# (SECONDS "fail" when it did not complete exactly). WHO: lcpipe (receiving),
# lcpipe-CC (sending on congestion control CC), or linux-CC (the stand-in, its
# sending socket on congestion control CC)
one_run() {
	local cs=$1 side=$2 who=$3 rep=$4 reo=0 secs tag=$1-$2-$3-$4 ok cc="" want=""
	PORT=$((PORT + 1))
	[ "$cs" = reorder ] && reo=1
	if [ "$side" = send ]; then
		peer_start "$tag" serve-recv --port $PORT --conns 1 --timeout $((DURATION + 20)) || return
	else
		peer_start "$tag" serve-send --port $PORT --file "$W/file" --timeout $((DURATION + 20)) \
			--cc "$B15_RECV_CC" || return
	fi
	if [ "${who%%-*}" = lcpipe ]; then
		if [ "$side" = send ]; then
			b15_conf "$tag" "\"mode\": \"send\", \"connect\": \"$PEER_IP:$PORT\", \"expect\": 1, \"file\": \"$W/file\", \"send_mbufs\": $SEND_MBUFS" $reo "${who#lcpipe-}"
		else
			b15_conf "$tag" "\"mode\": \"recv\", \"connect\": \"$PEER_IP:$PORT\", \"expect\": 1" $reo reno
		fi
		lcpipe_start || return
		lcpipe_wait
		peer_wait
	else
		if [ "$side" = send ]; then
			nss "$PY" "$PEER" client-send --host "$PEER_IP" --port $PORT --file "$W/file" \
				--timeout $DURATION --cc "${who#linux-}" >"$W/$tag.client.json" 2>&1
		else
			nss "$PY" "$PEER" client-recv --host "$PEER_IP" --port $PORT \
				--timeout $DURATION >"$W/$tag.client.json" 2>&1
		fi
		peer_wait
	fi
	if [ "$side" = send ]; then
		ok=$(json_get "$PEER_OUT" 'j["conns"][0]["bytes"] == '"$B15_BYTES"' and j["conns"][0]["sha256"] == "'"$SHA"'"' 2>/dev/null)
		secs=$(json_get "$PEER_OUT" 'j["conns"][0]["seconds"]' 2>/dev/null)
	else
		ok=true
		if [ "$who" = lcpipe ]; then
			ok=$(json_get "$RESULT" 'j["connections"][0]["bytes_in"] == '"$B15_BYTES"' and j["connections"][0]["sha256_in"] == "'"$SHA"'"' 2>/dev/null)
		else
			ok=$(json_get "$W/$tag.client.json" 'j["bytes"] == '"$B15_BYTES"' and j["sha256"] == "'"$SHA"'"' 2>/dev/null)
		fi
		secs=$(json_get "$PEER_OUT" 'j["seconds"]' 2>/dev/null)
	fi
	# a Linux sender's congestion control, as its socket reported it
	if [ "$side" = recv ]; then
		want=$B15_RECV_CC cc=$(json_get "$PEER_OUT" 'j.get("cc")' 2>/dev/null)
	elif [ "${who%%-*}" != lcpipe ]; then
		want=${who#linux-} cc=$(json_get "$W/$tag.client.json" 'j.get("cc")' 2>/dev/null)
	fi
	[ "$cc" = "$want" ] || { fail "$tag: the sender used \"$cc\", not $want"; ok=false; }
	if [ "$ok" != true ] || [ -z "$secs" ]; then
		fail "$tag: the transfer did not complete exactly"
		show "$PEER_OUT" "$PEER_ERR" "${LOG:-}"
		secs=fail
	fi
	if [ "${who%%-*}" = lcpipe ] && [ -s "$REPORT" ]; then
		json_get "$REPORT" '" ".join("%s=%s" % (k, j["stages"]["tcp"]["counters"].get(k)) for k in ["tcp_retransmits", "tcp_sack_retransmits", "tcp_sack_recoveries", "tcp_tlp_recoveries", "tcp_rto_expired", "tcp_tlp_probes", "tcp_rack_lost", "tcp_dsack_in", "tcp_dsack_undo", "tcp_ooo_segs"])' >"$W/$tag.ctr" 2>/dev/null
	fi
	say "$tag: $secs s $(cat "$W/$tag.ctr" 2>/dev/null)"
	echo "$cs $side $who $rep $secs" >>"$OUT"
}

say "B15: $B15_BYTES bytes per transfer, $B15_REPS repetitions, drop 1/$B15_EVERY each way under loss"
say "Linux senders: $B15_CC (send anchors), $B15_RECV_CC (the server of the recv case); this host's default: $(nss sysctl -n net.ipv4.tcp_congestion_control)"
say "placement: lcpipe EAL -l 0,1, every stage on lcore 1 (port: $PDEV); kernel peers unpinned ($(nproc) vCPUs)"
for cs in $B15_CASES; do
	if [ "$cs" != clean ] && [ -z "${LOSS_ON:-}" ]; then
		nft_drop_every "$B15_EVERY" || { fail "nft: cannot install the drop rules"; finish; }
		nft_drop_every "$B15_EVERY" vK || { fail "nft: cannot install the drop rules (vK)"; finish; }
		LOSS_ON=1
	fi
	for rep in $(seq 1 "$B15_REPS"); do
		for cc in $B15_LCP_CC; do one_run "$cs" send "lcpipe-$cc" "$rep"; done
		if [ "$cs" != reorder ]; then
			for cc in $B15_CC; do one_run "$cs" send "linux-$cc" "$rep"; done
		fi
		one_run "$cs" recv lcpipe "$rep"
		[ "$cs" = reorder ] || one_run "$cs" recv "linux-$B15_RECV_CC" "$rep"
	done
	[ -n "${LOSS_ON:-}" ] && say "nft dropped (to kernel, to lcpipe): $(nft_dropped); (to kernel, to stand-in): $(nft_dropped vK)"
done

"$PY" - "$OUT" "$B15_BYTES" "$PDEV" <<'PY'
import json, statistics, sys
rows = [l.split() for l in open(sys.argv[1]) if l.strip()]
size = int(sys.argv[2])
port = sys.argv[3]
t = {}
for cs, side, who, rep, secs in rows:
    if secs != "fail":
        t.setdefault((cs, side, who), {})[int(rep)] = float(secs)
anchors = sorted({who for (_, _, who) in t if who.startswith("linux-")})
# lcpipe's runs: receiving, "lcpipe"; sending, one per congestion control
lcps = sorted({who for (_, _, who) in t if who.startswith("lcpipe")})
print("%-8s %-4s %-5s %-12s %10s %10s %8s %7s %7s %9s %7s" % ("case", "side", "lc cc", "anchor", "lcpipe s",
      "linux s", "ratio", "lc MB/s", "target", "path lx s", "ratio2"))
for cs in ["clean", "loss", "reorder"]:
    for side in ["send", "recv"]:
      for lcp in lcps:
        lc = t.get((cs, side, lcp), {})
        if not lc:
            continue
        lcc = lcp[len("lcpipe-"):] if lcp != "lcpipe" else "-"
        for who in anchors:
            # the reorder case has no Linux run of its own: its anchor is "loss"
            lx = t.get((cs, side, who), {}) or (t.get(("loss", side, who), {}) if cs == "reorder" else {})
            if not lx:
                continue
            ratios = [lc[r] / lx[r] for r in lc if r in lx and lx[r] > 0]
            mlc = statistics.median(lc.values())
            mlx = statistics.median(lx.values())
            ratio = statistics.median(ratios) if ratios else float("nan")
            target = 1.2 if cs != "clean" else None
            # second anchor for sending: Linux sending over lcpipe's own path (its
            # port: net_tap, or net_af_packet on a veth; the recv case of the same
            # repetition: kernel server -> lcpipe)
            path = t.get((cs, "recv", "lcpipe"), {}) if side == "send" else {}
            r2 = [lc[r] / path[r] for r in lc if r in path and path[r] > 0]
            mpath = statistics.median(path.values()) if path else float("nan")
            ratio2 = statistics.median(r2) if r2 else float("nan")
            print("%-8s %-4s %-5s %-12s %10.2f %10.2f %8.2f %7.1f %7s %9.2f %7.2f" % (cs, side, lcc, who, mlc, mlx,
                  ratio, size / mlc / 1e6, "<= 1.2" if target else "-", mpath, ratio2))
            print(json.dumps({"bench": "B15", "case": cs, "side": side, "bytes": size, "port": port,
                              "lcpipe_cc": lcc if lcc != "-" else None,
                              "anchor_cc": who[len("linux-"):],
                              "lcpipe_s": sorted(lc.values()), "linux_s": sorted(lx.values()),
                              "lcpipe_median_s": mlc, "linux_median_s": mlx, "ratio_median": ratio,
                              "anchor": "linux same run" + (" (loss, no reordering)" if cs == "reorder" else ""),
                              "path_linux_sender_median_s": mpath if path else None,
                              "ratio_path_median": ratio2 if r2 else None,
                              "target": target, "met": (ratio <= target) if target else None}))
PY
finish
