/* SPDX-License-Identifier: BSD-3-Clause
 * tcp_config.c — the tcp stage's option table and its translation into the
 * stack's struct stk_config (also run by `lcpipe check` through validate(),
 * which also tells the engine how many mbufs a connection can hold). */
#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_ether.h>

#include "ip4_port.h"
#include "tcp.h"

/* in the order of enum stk_backlog_full */
static const char *const tcp_backlog_full_names[] = { "cookies", "evict", "drop", NULL };
/* in the order of enum stk_cc */
static const char *const tcp_congestion_names[] = { "reno", "bbr", NULL };

#define C struct tcp_conf
const struct lcp_opt tcp_opts[] = {
	LCP_OPT_STRING(C, ip, "ip", NULL, 9, 18, LCP_OPT_F_REQUIRED,
		       "our IPv4 address with its prefix length, \"A.B.C.D/len\""),
	LCP_OPT_STRING(C, gateway, "gateway", "\"\"", 0, 15, 0,
		       "IPv4 gateway for off-link destinations (\"\": on-link only)"),
	LCP_OPT_STRING(C, mac, "mac", "\"\"", 0, 17, 0,
		       "our MAC \"aa:bb:cc:dd:ee:ff\" (\"\": the MAC of \"device\")"),
	LCP_OPT_STRING(C, device, "device", "\"\"", 0, 63, 0,
		       "ethdev name whose MAC and checksum offloads to use (the port stage's device)"),
	LCP_OPT_STRING(C, neighbours, "neighbours", "\"\"", 0, 1023, 0,
		       "static ARP entries \"ip=mac,ip=mac\" (never expire, never ARPed for)"),
	LCP_OPT_STRING(C, connect, "connect", "\"\"", 0, 21, 0,
		       "\"A.B.C.D:port\" to connect to at start (events carry user 0)"),
	LCP_OPT_UINT(C, listen, "listen", "0", 0, 65535, 0,
		     "local port to listen on from start (0: none; the app can send LISTEN)"),
	LCP_OPT_UINT(C, backlog, "backlog", "64", 1, 65535, 0,
		     "half-open connections per listener (what a SYN past it gets: backlog_full)"),
	LCP_OPT_ENUM(C, backlog_full, "backlog_full", "\"cookies\"", tcp_backlog_full_names, 0,
		     "a SYN to a full backlog: \"cookies\" (SYN cookie, tcp_syncookies_sent), \"evict\" the oldest half-open one or \"drop\" the SYN (drop_tcp_backlog)"),
	LCP_OPT_UINT(C, stk.mtu, "mtu", "1500", 576, 9000, 0,
		     "IP MTU; our MSS is mtu - 40; a frame (mtu + 14 bytes) must fit one mbuf (engine.mbuf_data_room), and the start warns when it is above the MTU the device reports"),
	LCP_OPT_UINT(C, stk.max_conns, "max_conns", "1024", 1, 65535, 0,
		     "connection control blocks, TIME_WAIT included"),
	LCP_OPT_UINT(C, stk.ephemeral_port_min, "ephemeral_port_min", "49152", 1, 65535, 0,
		     "lowest local port a connect takes (RFC 6335's dynamic range starts here; as Linux's ip_local_port_range)"),
	LCP_OPT_UINT(C, stk.ephemeral_port_max, "ephemeral_port_max", "65535", 1, 65535, 0,
		     "highest local port a connect takes (>= ephemeral_port_min); a connect fails with EADDRINUSE when every port of the range is taken to that peer address and port (and no TIME_WAIT of ours can be taken over: time_wait_reuse)"),
	LCP_OPT_BOOL(C, stk.time_wait_reuse, "time_wait_reuse", "true",
		     "with every port of the range taken to a peer address and port, a connect takes over a 4-tuple this stage holds in TIME_WAIT if that connection used timestamps and the peer's last one is at least 1 s old, its ISS above the old sequence space (tcp_time_wait_reconnects; as Linux's tcp_tw_reuse = 1); false = EADDRINUSE until the TIME_WAIT ends"),
	LCP_OPT_UINT(C, stk.rcvbuf, "rcvbuf", "1048576", 3000, 1073741824, 0,
		     "receive window offered per connection, bytes (scaled when above 65535)"),
	LCP_OPT_UINT(C, stk.sndbuf, "sndbuf", "1048576", 1500, 1073741824, 0,
		     "bytes the application may queue per connection, unacknowledged included"),
	LCP_OPT_UINT(C, stk.ooo_max_bytes, "ooo_max_bytes", "1048576", 0, 1073741824, 0,
		     "out-of-order payload held per connection, bytes (>= rcvbuf: an honest peer never exceeds it)"),
	LCP_OPT_UINT(C, stk.ooo_max_segs, "ooo_max_segs", "1024", 0, 65536, 0,
		     "out-of-order segments (received frames, mbufs) held per connection"),
	LCP_OPT_UINT(C, stk.time_wait_ms, "time_wait_ms", "60000", 0, 240000, 0,
		     "TIME_WAIT duration, 2*MSL (Linux: 60 s; RFC 9293's MSL of 2 min makes 240 s); a newer SYN reopens the 4-tuple (RFC 6191) and, with every control block taken, the oldest TIME_WAIT gives way"),
	LCP_OPT_UINT(C, stk.fin_wait2_ms, "fin_wait2_ms", "60000", 1, 3600000, 0,
		     "how long FIN_WAIT_2 waits for the peer's FIN before a timeout"),
	LCP_OPT_UINT(C, stk.delack_ms, "delack_ms", "10", 1, 500, 0,
		     "delayed ACK timer (an ACK goes at least every second segment anyway)"),
	LCP_OPT_UINT(C, stk.ack_stretch, "ack_stretch", "16", 2, 64, 0,
		     "in-order full segments one ACK may cover within a receive burst: one ACK at the burst's end (tcp_stretch_acks), as Linux does under GRO; 2 = an ACK every second segment (RFC 5681)"),
	LCP_OPT_BOOL(C, stk.rx_coalesce, "rx_coalesce", "true",
		     "in-order coalescing within a receive burst, as Linux's GRO: a segment that repeats the headers of the one just delivered in order on its connection (ACK and window aside) and starts where it ended skips the checks that one passed (tcp_coalesced); false = every segment takes every check"),
	LCP_OPT_UINT(C, stk.rto_min_ms, "rto_min_ms", "200", 1, 60000, 0, "lower bound of the RTO"),
	LCP_OPT_UINT(C, stk.rto_init_ms, "rto_init_ms", "1000", 1, 60000, 0, "RTO before an RTT sample (RFC 6298)"),
	LCP_OPT_UINT(C, stk.rto_max_ms, "rto_max_ms", "60000", 1, 600000, 0, "upper bound of the backed-off RTO"),
	LCP_OPT_UINT(C, stk.syn_retries, "syn_retries", "5", 0, 20, 0,
		     "SYN / SYN-ACK retransmissions before the connect times out"),
	LCP_OPT_UINT(C, stk.max_retries, "max_retries", "12", 1, 30, 0,
		     "retransmissions of one segment (or unanswered zero-window probes in a row) before a timeout"),
	LCP_OPT_UINT(C, stk.persist_timeout_ms, "persist_timeout_ms", "0", 0, 86400000, 0,
		     "give up a connection whose peer keeps its window at zero this long with data waiting (0: never)"),
	LCP_OPT_UINT(C, keepalive_s, "keepalive_s", "0", 0, 86400, 0, "idle time before keepalive probes (0: off)"),
	LCP_OPT_UINT(C, keepalive_intvl_s, "keepalive_intvl_s", "10", 1, 3600, 0, "interval between keepalive probes"),
	LCP_OPT_UINT(C, stk.keepalive_probes, "keepalive_probes", "5", 1, 100, 0,
		     "unanswered keepalive probes before a timeout"),
	LCP_OPT_BOOL(C, stk.window_scale, "window_scale", "true", "offer window scaling (RFC 7323)"),
	LCP_OPT_BOOL(C, stk.timestamps, "timestamps", "true", "offer timestamps (RFC 7323)"),
	LCP_OPT_BOOL(C, stk.sack, "sack", "true", "offer SACK-permitted and send SACK blocks (RFC 2018)"),
	LCP_OPT_ENUM(C, congestion, "congestion", "\"reno\"", tcp_congestion_names, 0,
		     "congestion control of each connection: \"reno\" (RFC 5681, PRR through a SACK recovery) or \"bbr\" (BBR v1 as Linux's, paced: bandwidth and RTT modelled from delivery-rate samples, random loss not taken as congestion; a peer without SACK gets Reno)"),
	LCP_OPT_BOOL(C, csum_offload, "csum_offload", "true",
		     "leave IPv4/TCP checksums to the port when \"device\" has those tx offloads enabled"),
	LCP_OPT_UINT(C, stk.arp_entries, "arp_entries", "256", 4, 65536, 0, "neighbour cache size"),
	LCP_OPT_UINT(C, arp_timeout_s, "arp_timeout_s", "60", 1, 86400, 0,
		     "a resolved neighbour is re-confirmed after this"),
	LCP_OPT_UINT(C, stk.arp_retries, "arp_retries", "3", 1, 20, 0, "ARP requests before giving up"),
	LCP_OPT_UINT(C, stk.arp_retry_ms, "arp_retry_ms", "1000", 10, 60000, 0, "interval between ARP requests"),
	LCP_OPT_UINT(C, stk.arp_pending, "arp_pending", "16", 1, 4096, 0,
		     "frames queued per unresolved neighbour (more are dropped, counted)"),
	LCP_OPT_UINT(C, stk.challenge_ack_limit, "challenge_ack_limit", "100", 1, 100000, 0,
		     "RFC 5961 challenge ACKs per second, per connection (the rest counted: drop_tcp_challenge_limit)"),
	LCP_OPT_UINT(C, stk.oow_ack_ms, "oow_ack_ms", "500", 0, 60000, 0,
		     "a connection answers unacceptable segments without payload (old or out-of-window ACKs, PAWS rejects) with at most one ACK per this many ms (the rest counted: tcp_oow_acks_limited; 0: every one)"),
	LCP_OPT_UINT(C, node_pool, "node_pool", "65536", 1024, 16777216, 0,
		     "queue nodes (out-of-order, send queue, ARP pending) in the stage's node pool"),
	LCP_OPT_UINT(C, tx_mbufs, "tx_mbufs", "4095", 0, 16777216, 0,
		     "mbufs of the stage's own pool for the frames it builds, apart from the engine's pool applications send from, so retransmissions and ACKs always find one (0: the engine's pool)"),
	LCP_OPT_UINT(C, rx_reserve, "rx_reserve", "256", 0, 1048576, 0,
		     "mbufs of the packet pool kept free for receiving: below it new payload is refused unacknowledged (drop_tcp_rx_pressure) while ACKs still come in (0: no reserve)"),
	LCP_OPT_END,
};
#undef C

/* DPDK's parser, the one gen's MAC options use: "aa:bb:cc:dd:ee:ff" (two hex
 * digits a byte) or "aabb:ccdd:eeff" */
static int
parse_mac(const char *s, uint8_t mac[6])
{
	struct rte_ether_addr a;

	if (rte_ether_unformat_addr(s, &a) != 0)
		return -1;
	memcpy(mac, a.addr_bytes, sizeof(a.addr_bytes));
	return 0;
}

int
tcp_conf_to_stk(const struct tcp_conf *c, struct stk_config *k, bool *have_mac, char *msg, size_t len)
{
	char buf[32];
	const char *slash = strchr(c->ip, '/');
	struct in_addr a;
	char *end;
	long pl;

	/* what the options set in the stack's own units (tcp_opts' "stk." rows);
	 * the fields no option sets are zero there, as stk_config_init() leaves
	 * them, or set below */
	*k = c->stk;
	if (slash == NULL || (size_t)(slash - c->ip) >= sizeof(buf)) {
		snprintf(msg, len, "ip \"%s\": expected \"A.B.C.D/len\"", c->ip);
		return -1;
	}
	memcpy(buf, c->ip, (size_t)(slash - c->ip));
	buf[slash - c->ip] = '\0';
	pl = strtol(slash + 1, &end, 10);
	if (inet_pton(AF_INET, buf, &a) != 1 || *end != '\0' || end == slash + 1 || pl < 1 || pl > 32) {
		snprintf(msg, len, "ip \"%s\": expected \"A.B.C.D/len\" with len 1..32", c->ip);
		return -1;
	}
	k->ip = a.s_addr;
	k->prefix = (uint8_t)pl;
	if (c->gateway[0] != '\0') {
		if (inet_pton(AF_INET, c->gateway, &a) != 1) {
			snprintf(msg, len, "gateway \"%s\" is not an IPv4 address", c->gateway);
			return -1;
		}
		k->gateway = a.s_addr;
	}
	*have_mac = c->mac[0] != '\0';
	if (*have_mac && parse_mac(c->mac, k->mac) < 0) {
		snprintf(msg, len, "mac \"%s\": expected \"aa:bb:cc:dd:ee:ff\"", c->mac);
		return -1;
	}
	if (!*have_mac && c->device[0] == '\0') {
		snprintf(msg, len, "give \"mac\" or \"device\" (the ethdev whose MAC to use)");
		return -1;
	}
	if (c->neighbours[0] != '\0') {
		const char *p = c->neighbours;

		while (*p) {
			const char *comma = strchr(p, ','), *eq;
			size_t n = comma ? (size_t)(comma - p) : strlen(p);
			char ent[64];

			if (n >= sizeof(ent) || (eq = memchr(p, '=', n)) == NULL) {
				snprintf(msg, len, "neighbours: \"%.*s\" is not \"ip=mac\"", (int)n, p);
				return -1;
			}
			memcpy(ent, p, n);
			ent[n] = '\0';
			ent[eq - p] = '\0';
			if (k->n_static >= STK_MAX_STATIC_NEIGH) {
				snprintf(msg, len, "neighbours: more than %d entries", STK_MAX_STATIC_NEIGH);
				return -1;
			}
			if (inet_pton(AF_INET, ent, &a) != 1 ||
			    parse_mac(ent + (eq - p) + 1, k->neigh[k->n_static].mac) < 0) {
				snprintf(msg, len, "neighbours: \"%.*s\" is not \"ip=mac\"", (int)n, p);
				return -1;
			}
			k->neigh[k->n_static++].ip = a.s_addr;
			p += n;
			if (*p == ',')
				p++;
		}
	}
	if (c->connect[0] != '\0') {
		uint32_t ip;
		uint16_t port;

		if (ip4_port_parse(c->connect, &ip, &port) < 0) {
			snprintf(msg, len, "connect \"%s\": expected \"A.B.C.D:port\"", c->connect);
			return -1;
		}
	}
	k->backlog_full = (uint8_t)c->backlog_full;
	k->congestion = (uint8_t)c->congestion;
	k->keepalive_ms = c->keepalive_s * 1000u;
	k->keepalive_intvl_ms = c->keepalive_intvl_s * 1000u;
	k->arp_timeout_ms = c->arp_timeout_s * 1000u;
	return 0;
}

/* "1 MiB", "64 KiB", "3000 B" */
static const char *
tcp_bytes_str(uint32_t v, char *buf, size_t len)
{
	if (v >= (1u << 20) && v % (1u << 20) == 0)
		snprintf(buf, len, "%u MiB", v >> 20);
	else if (v >= 1024 && v % 1024 == 0)
		snprintf(buf, len, "%u KiB", v >> 10);
	else
		snprintf(buf, len, "%u B", v);
	return buf;
}

/* A frame of mtu bytes and its Ethernet header must fit one mbuf: the stage
 * sends from one (tx_alloc), and receives only frames in one (a chained frame
 * is drop_multiseg). Checked against engine.mbuf_data_room; -1 with msg. */
static int
tcp_frame_fits(uint32_t mtu, char *msg, size_t msglen)
{
	uint32_t room = lcp_check_mbuf_room(), frame = mtu + RTE_ETHER_HDR_LEN;

	if (room == 0 || frame <= room)
		return 0; /* not checking a config, or it fits */
	snprintf(msg, msglen,
		 "mtu %u makes frames of %u bytes, more than one mbuf holds (%u: engine.mbuf_data_room less "
		 "%u of headroom); raise engine.mbuf_data_room to %u or more",
		 mtu, frame, room, RTE_PKTMBUF_HEADROOM, frame + RTE_PKTMBUF_HEADROOM);
	return -1;
}

/* What one connection can hold of the engine's mbufs, in full mbufs: the send
 * buffer (sndbuf / the mbuf's payload room: the applications' SENDs come from
 * the engine's pool). The frames it receives are the port's (its receive pool)
 * and those it builds come from the stage's own pool (tx_mbufs); with
 * tx_mbufs 0 those are the engine's too, and a peer on a ring pair holds them:
 * a receive window of full-size segments (rcvbuf / MSS) and the out-of-order
 * queue (at most ooo_max_segs, and one per byte of ooo_max_bytes) count then. */
static void
tcp_mbufs(const struct tcp_conf *c)
{
	const struct stk_config *k = &c->stk;
	struct lcp_mbuf_hold h = { 0 };
	uint32_t room = lcp_check_mbuf_room(), mss = k->mtu - 40;
	uint64_t rx, ooo, tx;
	char r[16], s[16];

	if (room == 0)
		return; /* not checking a config */
	rx = (k->rcvbuf + mss - 1) / mss;
	ooo = k->ooo_max_segs < k->ooo_max_bytes ? k->ooo_max_segs : k->ooo_max_bytes;
	tx = (k->sndbuf + room - 1) / room;
	h.max_conns = k->max_conns;
	h.conns = c->connect[0] != '\0';
	if (c->tx_mbufs != 0) {
		h.per_conn = tx;
		snprintf(h.opt, sizeof(h.opt), "sndbuf");
		snprintf(h.what, sizeof(h.what), "%llu mbufs of sndbuf %s", (unsigned long long)tx,
			 tcp_bytes_str(k->sndbuf, s, sizeof(s)));
	} else {
		h.per_conn = rx + ooo + tx;
		snprintf(h.opt, sizeof(h.opt), "%s",
			 rx >= tx && rx >= ooo ? "rcvbuf" : tx >= ooo ? "sndbuf" : "ooo_max_segs");
		snprintf(h.what, sizeof(h.what),
			 "%llu frames of rcvbuf %s + %llu of ooo_max_segs + %llu mbufs of sndbuf %s (tx_mbufs 0)",
			 (unsigned long long)rx, tcp_bytes_str(k->rcvbuf, r, sizeof(r)), (unsigned long long)ooo,
			 (unsigned long long)tx, tcp_bytes_str(k->sndbuf, s, sizeof(s)));
	}
	lcp_check_mbufs(&h);
}

int
tcp_validate(const void *conf, char *msg, size_t msglen)
{
	struct stk_config k;
	bool have_mac;
	const struct tcp_conf *c = conf;

	if (tcp_conf_to_stk(c, &k, &have_mac, msg, msglen) < 0)
		return -1;
	/* the relations between the values: the stack's own rules, those
	 * stk_create() applies at start (without "mac" the address is all
	 * zero here, which they accept; the port's is taken at start) */
	if (stk_config_check(&k, msg, msglen) < 0)
		return -1;
	if (tcp_frame_fits(k.mtu, msg, msglen) < 0)
		return -1;
	tcp_mbufs(c);
	return 0;
}
