/* SPDX-License-Identifier: BSD-3-Clause
 * tcp — the user-space TCP/IP stack (libstk, stack/) as a stage.
 *
 * Ports: "rx" (pkt in, frames from the port), "tx" (pkt out, frames to the
 * port), "data" (stream out: payload and events to the application), "app"
 * (stream in: the application's SEND / CONNECT / LISTEN / CLOSE / ABORT; see
 * lcp/stream.h).
 *
 *   tcp_init      options -> struct stk_config (tcp_config.c), node pool
 *   tcp_start     MAC, MTU warning and checksum offloads from "device"; stk_create
 *   tcp_poll      first call: gratuitous ARP, "listen"/"connect" options;
 *                 then stk_poll (timers), counter publication
 *   tcp_process   "rx": stk_input_burst; "app": commands
 *   tcp_linger    shutdown (engine.linger): counts the connections whose FIN
 *                 is out (the applications close theirs); once every other
 *                 lingering stage is done, FIN on what nobody closed
 *   tcp_stop      RST on what is still open (stop_resets), final counters
 *   tcp_sendq.c   SENDs held while the send buffer is full (SEND_FULL /
 *                 SEND_ROOM to the application), drained from poll
 *
 * Flow control toward the application. When "data" is a ring to another
 * lcore, the stack runs with rx_hold: what it delivered counts against the
 * connection's receive window until released. What the ring cannot take waits
 * here, in order (tcp_dq_*), never dropped; it is released once enqueued, or,
 * when the consumer's port says LCP_PORT_F_RELEASES, once the consumer reports
 * it done (stream credits, lcp/stream.h, read back every poll). A slow
 * consumer so closes the window and slows the peer. On a same-lcore link
 * nothing is held: the consumer takes what is queued for it in this turn's
 * walk (ABI 2.0), before the stack runs again.
 *
 * Receive reserve: every 100 us the free count of the pool received frames
 * come from (the port's receive pool) is read; below rx_reserve the stack
 * holds nothing more out of order (stk_rx_pressure), so that frames, the ACKs
 * and retransmissions that free what is held among them, still find mbufs;
 * logged once per episode.
 *
 * The stack's ops map its buffers to mbufs: a received frame's mbuf becomes
 * the stream mbuf of its payload (offsets moved with rte_pktmbuf_adj/trim —
 * zero copy), frames we build come from the engine's packet pool. Events and
 * frames produced inside one stack call are staged and emitted after it
 * returns: one emit (and one ring enqueue on a link to another lcore) per
 * burst. An emit never calls back into this stage (ABI 2.0): what a same-lcore
 * application answers reaches "app" later in the worker's walk.
 *
 * Counters: the stack counts into its own array (plain adds on this lcore);
 * the stage publishes the deltas through the counters strategy every
 * millisecond and at stop, so totals at exit are exact. */
#define ALLOW_EXPERIMENTAL_API /* rte_eth_dev_conf_get() */
#include <errno.h>
#include <inttypes.h>
#include <string.h>
#include <sys/random.h>
#include <arpa/inet.h>

#include <rte_cycles.h>
#include <rte_errno.h>
#include <rte_ethdev.h>
#include <rte_malloc.h>
#include <rte_mbuf.h>
#include <rte_mempool.h>

#include <stk/tcp.h>

#include "ip4_port.h"
#include "tcp.h"

static const struct lcp_port_def tcp_ports[] = {
	{ .name = "rx", .dir = LCP_PORT_IN, .unit = LCP_UNIT_PKT, .flags = LCP_PORT_F_REQUIRED,
	  .doc = "frames received by the port" },
	{ .name = "tx", .dir = LCP_PORT_OUT, .unit = LCP_UNIT_PKT, .flags = LCP_PORT_F_REQUIRED,
	  .doc = "frames to transmit" },
	{ .name = "data", .dir = LCP_PORT_OUT, .unit = LCP_UNIT_STREAM, .flags = LCP_PORT_F_HOLDS,
	  .doc = "in-order payload and connection events to the application (never dropped: held back, counted in the receive window)" },
	{ .name = "app", .dir = LCP_PORT_IN, .unit = LCP_UNIT_STREAM,
	  .doc = "the application's commands: send, connect, listen, close, abort" },
	LCP_PORT_END,
};

static const char *const tcp_counters[] = { STK_COUNTERS(LCP_COUNTER_NAME) TCP_OWN_COUNTERS(LCP_COUNTER_NAME) NULL };

#define TCP_STAGE_BURST 64
#define TCP_EV_STAGE LCP_OBUF_MAX /* events of one stack call (out-of-order fills deliver many) */
#define TCP_NODE_SIZE 64 /* the stack's queue nodes and ARP pending entries fit */
#define TCP_ALLOC_HDR 16


/* ---- staging ---- */

static void
tcp_flush(struct tcp_ctx *x)
{
	lcp_obuf_flush(x->st, &x->tx);
	if (x->hold)
		tcp_ev_flush(x);
	else
		lcp_obuf_flush(x->st, &x->ev);
}

static inline void
tcp_stage_tx(struct tcp_ctx *x, struct rte_mbuf *m)
{
	lcp_obuf_put(x->st, &x->tx, m);
}

/* mid-call flushes (a full buffer) are fine: the stack tolerates application
 * calls from events (stk/tcp.h) */
static inline void
tcp_stage_ev(struct tcp_ctx *x, struct rte_mbuf *m)
{
	TCP_COUNT(x, EVENTS_OUT, 1);
	lcp_obuf_put(x->st, &x->ev, m);
}

/* ---- the stack's ops ---- */

/* make the mbuf hold exactly [data, data + len) */
static inline void
tcp_mbuf_window(struct rte_mbuf *m, uint8_t *data, uint32_t len)
{
	uint16_t off = (uint16_t)(data - rte_pktmbuf_mtod(m, uint8_t *));

	m->data_off += off;
	m->data_len = (uint16_t)len;
	m->pkt_len = len;
}

static int
tcp_op_tx(void *ctx, struct stk_buf *b, uint8_t *data, uint32_t len, uint32_t flags)
{
	struct tcp_ctx *x = ctx;
	struct rte_mbuf *m = (struct rte_mbuf *)b;

	tcp_mbuf_window(m, data, len);
	m->ol_flags = 0;
	if (flags & (STK_TX_IP_CSUM | STK_TX_TCP_CSUM)) {
		m->l2_len = 14;
		m->l3_len = 20;
		m->ol_flags = RTE_MBUF_F_TX_IPV4 | RTE_MBUF_F_TX_IP_CKSUM | RTE_MBUF_F_TX_TCP_CKSUM;
	}
	tcp_stage_tx(x, m);
	return 0;
}

/* The stage's pool ran dry (a frame could not be built): logged once per
 * episode, with what failed and its counter; an episode lasts at least a
 * second (a pool that empties and refills all the time is one episode), and
 * tcp_pool_back() ends it with how many allocations failed in it. */
static void __rte_cold
tcp_pool_empty(struct tcp_ctx *x, const char *what)
{
	if (x->pool_short++ == 0) {
		x->pool_short_since = rte_rdtsc();
		lcp_log(x->st, LCP_LOG_ERR,
			"pool %s is empty: %s lost (drop_tx_nobuf) until mbufs come back (tx_mbufs %u)",
			x->pool->name, what, x->pool->size);
	}
}

static inline void
tcp_pool_back(struct tcp_ctx *x)
{
	if (unlikely(x->pool_short != 0) && rte_rdtsc() - x->pool_short_since >= rte_get_tsc_hz()) {
		lcp_log(x->st, LCP_LOG_INFO, "pool %s has mbufs again: %u allocation(s) failed meanwhile",
			x->pool->name, x->pool_short);
		x->pool_short = 0;
	}
}

static struct stk_buf *
tcp_op_tx_alloc(void *ctx, uint32_t len, uint8_t **data)
{
	struct tcp_ctx *x = ctx;
	struct rte_mbuf *m = rte_pktmbuf_alloc(x->pool);

	if (unlikely(m == NULL)) {
		tcp_pool_empty(x, "a frame (the segment is sent again later, an ACK with the next)");
		return NULL;
	}
	tcp_pool_back(x);
	if (unlikely(len > rte_pktmbuf_tailroom(m))) {
		rte_pktmbuf_free(m);
		return NULL;
	}
	*data = (uint8_t *)rte_pktmbuf_append(m, (uint16_t)len);
	lcp_mbuf_set_rx_tsc(m, 0);
	return (struct stk_buf *)m;
}

static void
tcp_op_buf_free(void *ctx, struct stk_buf *b)
{
	rte_pktmbuf_free((struct rte_mbuf *)b);
}

static uint64_t
tcp_op_clock(void *ctx)
{
	struct tcp_ctx *x = ctx;

	return (uint64_t)(((unsigned __int128)rte_rdtsc() * x->ns_mult) >> 32);
}

static uint64_t
tcp_op_random(void *ctx)
{
	struct tcp_ctx *x = ctx;

	if (x->n_rnd == 0) {
		/* the kernel's CSPRNG, 256 bytes at a time (ISNs, ports) */
		if (getrandom(x->rnd, sizeof(x->rnd), 0) != (ssize_t)sizeof(x->rnd))
			for (unsigned i = 0; i < 32; i++)
				x->rnd[i] ^= rte_rdtsc() * 0x9e3779b97f4a7c15ull;
		x->n_rnd = 32;
	}
	return x->rnd[--x->n_rnd];
}

/* Small objects (the out-of-order and send queue nodes, ARP pending frames)
 * come from the stage's node pool, built by the pool strategy the config picks;
 * larger ones (control blocks, tables) from rte_zmalloc. A 16-byte header says
 * which. An empty node pool is counted (drop_node_pool) and the stack drops
 * what needed the node: an out-of-order segment the peer then retransmits. */
static void *
tcp_op_alloc(void *ctx, size_t size)
{
	struct tcp_ctx *x = ctx;
	uint8_t *p;

	if (size + TCP_ALLOC_HDR <= TCP_NODE_SIZE + TCP_ALLOC_HDR && x->nodes != NULL) {
		void *o;

		o = lcp_pool_get(x->nodes);
		if (o == NULL) {
			TCP_COUNT(x, DROP_NODE_POOL, 1);
			return NULL;
		}
		p = o;
		memset(p, 0, TCP_ALLOC_HDR + size);
		p[0] = 1;
		return p + TCP_ALLOC_HDR;
	}
	p = rte_zmalloc_socket("tcp", size + TCP_ALLOC_HDR, RTE_CACHE_LINE_SIZE, lcp_stage_socket(x->st));
	if (p == NULL)
		return NULL;
	p[0] = 2;
	return p + TCP_ALLOC_HDR;
}

static void
tcp_op_free(void *ctx, void *ptr)
{
	struct tcp_ctx *x = ctx;
	uint8_t *p = (uint8_t *)ptr - TCP_ALLOC_HDR;

	if (p[0] == 1)
		lcp_pool_put(x->nodes, p);
	else
		rte_free(p);
}

static void
tcp_op_log(void *ctx, int level, const char *msg)
{
	struct tcp_ctx *x = ctx;
	int l = level <= STK_LOG_ERR ? LCP_LOG_ERR : level == STK_LOG_WARNING ? LCP_LOG_WARNING
						  : level == STK_LOG_INFO ? LCP_LOG_INFO : LCP_LOG_DEBUG;

	lcp_log(x->st, l, "%s", msg);
}

static struct rte_mbuf *
tcp_event_mbuf(struct tcp_ctx *x, struct stk_tcb *c, uint64_t user, unsigned ev, int reason)
{
	struct rte_mbuf *m = lcp_stream_mbuf(x->evpool, ev, c != NULL ? stk_tcp_id(c) : 0, rte_rdtsc());
	struct lcp_stream_meta *meta;

	if (m == NULL) {
		TCP_COUNT(x, DROP_EVENT_NOMBUF, 1);
		lcp_log(x->st, LCP_LOG_ERR, "no mbuf in %s for a %s event of connection 0x%x: event lost",
			x->evpool->name, lcp_stream_ev_name(ev), c != NULL ? stk_tcp_id(c) : 0);
		return NULL;
	}
	meta = lcp_stream_meta(m);
	meta->reason = (uint16_t)reason;
	meta->user = (uint32_t)user;
	if (c != NULL)
		stk_tcp_peer(c, &meta->addr, &meta->port, &meta->lport);
	return m;
}

static void
tcp_log_conn(struct tcp_ctx *x, struct stk_tcb *c, const char *what)
{
	const struct stk_tcp_stats *s = stk_tcp_stats(c);
	struct stk_tcp_rate r;
	char a[INET_ADDRSTRLEN], rate[96] = "";
	uint32_t ip;
	uint16_t port, lport;

	stk_tcp_peer(c, &ip, &port, &lport);
	inet_ntop(AF_INET, &ip, a, sizeof(a));
	if (stk_tcp_rate(c, &r))
		snprintf(rate, sizeof(rate), ", delivery rate %.3f Mbit/s%s, min RTT %" PRIu64 " us",
			 (double)r.bytes_per_s * 8 / 1e6, r.app_limited ? " (app-limited)" : "",
			 r.min_rtt_ns / 1000);
	lcp_log(x->st, LCP_LOG_INFO,
		"conn 0x%x %s:%u (local %u) %s: segs in %" PRIu64 " out %" PRIu64 ", bytes in %" PRIu64
		" out %" PRIu64 ", retransmits %" PRIu64 " (fast %" PRIu64 ", rto %" PRIu64 "), out of order %" PRIu64
		", duplicates %" PRIu64 ", dup acks %" PRIu64 ", window probes %" PRIu64 ", drops %" PRIu64 "%s",
		stk_tcp_id(c), a, port, lport, what, s->segs_in, s->segs_out, s->bytes_in, s->bytes_out,
		s->retransmits, s->fast_retransmits, s->rto_expired, s->ooo_segs, s->dup_segs, s->dup_acks_in,
		s->window_probes, s->drops, rate);
}

static void
tcp_op_event(void *ctx, struct stk_tcb *c, uint64_t user, enum stk_ev ev, int reason, struct stk_buf *b,
	     uint8_t *data, uint32_t len)
{
	struct tcp_ctx *x = ctx;
	struct rte_mbuf *m;

	if (likely(ev == STK_EV_DATA)) {
		struct lcp_stream_meta *meta;

		m = (struct rte_mbuf *)b;
		tcp_mbuf_window(m, data, len);
		meta = lcp_stream_meta(m);
		meta->conn = stk_tcp_id(c);
		meta->ev = LCP_STREAM_EV_DATA;
		meta->reason = 0;
		meta->user = (uint32_t)user;
		meta->off = stk_tcp_rx_offset(c) - len;
		stk_tcp_peer(c, &meta->addr, &meta->port, &meta->lport);
		tcp_stage_ev(x, m);
		return;
	}
	/* enum stk_ev and enum lcp_stream_ev share their values */
	if (ev >= STK_EV_CLOSED) {
		uint32_t held = tcp_sq_drop(x->sq, stk_tcp_id(c));

		if (held != 0)
			TCP_COUNT(x, SENDQ_FREED_BYTES, held);
		tcp_log_conn(x, c, ev == STK_EV_CLOSED ? "closed" : ev == STK_EV_RESET ? "reset"
							     : ev == STK_EV_TIMEOUT ? "timed out" : "failed");
	}
	m = tcp_event_mbuf(x, c, user, (unsigned)ev, reason);
	if (m != NULL)
		tcp_stage_ev(x, m);
}

_Static_assert((int)STK_EV_DATA == (int)LCP_STREAM_EV_DATA && (int)STK_EV_ERROR == (int)LCP_STREAM_EV_ERROR &&
		       (int)STK_EV_CLOSED == (int)LCP_STREAM_EV_CLOSED &&
		       (int)STK_EV_ACCEPTED == (int)LCP_STREAM_EV_ACCEPTED,
	       "stack events and stream events share values");

/* ---- stage ---- */

static void
tcp_sync_counters(struct tcp_ctx *x)
{
	const uint64_t *now = stk_counters(x->stk);

	for (unsigned i = 0; i < STK_C__COUNT; i++)
		if (now[i] != x->published[i]) {
			lcp_count(x->st, i, now[i] - x->published[i]);
			x->published[i] = now[i];
		}
}

/* the send queue's callbacks (below, with the commands) */
static void tcp_sq_room(void *arg, uint32_t conn, uint32_t user);
static void tcp_sq_close(void *arg, struct stk_tcb *c);
static void tcp_sq_error(void *arg, uint32_t conn, uint32_t user, int err);
static void tcp_sq_freed(void *arg, uint32_t conn, uint32_t bytes);

static int
tcp_init(struct lcp_stage *st, const void *conf, void **ctx)
{
	const struct tcp_conf *c = conf;
	struct tcp_ctx *x = *ctx;
	char msg[256];

	x->st = st;
	lcp_obuf_init(&x->tx, TCP_P_TX, TCP_STAGE_BURST);
	lcp_obuf_init(&x->ev, TCP_P_DATA, TCP_EV_STAGE);
	if (tcp_conf_to_stk(c, &x->k, &x->have_mac, msg, sizeof(msg)) < 0) {
		lcp_log(st, LCP_LOG_ERR, "%s", msg);
		return -EINVAL;
	}
	snprintf(x->device, sizeof(x->device), "%s", c->device);
	snprintf(x->connect, sizeof(x->connect), "%s", c->connect);
	x->listen = c->listen;
	x->backlog = c->backlog;
	x->csum_offload = c->csum_offload;
	/* the frames the stack builds come from a pool of the stage's own:
	 * applications that send from the engine's pool can take all of it, and
	 * the retransmissions whose ACKs free it must still go; events come from
	 * the engine's (frames never take what an event needs) */
	x->evpool = lcp_stage_pktmbuf_pool(st);
	x->pool = c->tx_mbufs != 0 ? lcp_stage_pktmbuf_pool_create(st, "tcp", c->tx_mbufs) : x->evpool;
	if (x->pool == NULL || x->evpool == NULL) {
		lcp_log(st, LCP_LOG_ERR, "tx_mbufs: no packet mbuf pool of %u on socket %d: %s", c->tx_mbufs,
			lcp_stage_socket(st), rte_strerror(rte_errno));
		return -ENOENT;
	}
	x->sq = tcp_sq_create(st, c->stk.max_conns);
	x->sq_cb = (struct tcp_sq_cb){ .arg = x, .room = tcp_sq_room, .close = tcp_sq_close, .error = tcp_sq_error,
				       .freed = tcp_sq_freed };
	x->nodes = lcp_pool_create(st, "nodes", TCP_NODE_SIZE + TCP_ALLOC_HDR, c->node_pool, 0);
	if (x->nodes == NULL || x->sq == NULL || tcp_flow_init(x, c) < 0) {
		lcp_pool_free(x->nodes);
		tcp_sq_free(x->sq);
		return -ENOMEM;
	}
	x->ns_mult = (uint64_t)(((unsigned __int128)1000000000u << 32) / rte_get_tsc_hz());
	x->sync_every = rte_get_tsc_hz() / 1000;
	return 0;
}

static int
tcp_start(struct lcp_stage *st, void *ctx)
{
	struct tcp_ctx *x = ctx;
	char err[256];
	struct stk_ops ops = {
		.ctx = x, .tx = tcp_op_tx, .tx_alloc = tcp_op_tx_alloc, .buf_free = tcp_op_buf_free,
		.clock_ns = tcp_op_clock, .random = tcp_op_random, .alloc = tcp_op_alloc,
		.free = tcp_op_free, .log = tcp_op_log, .event = tcp_op_event,
	};
	bool offload = false;

	if (x->device[0] != '\0') {
		uint16_t port, mtu;
		struct rte_eth_conf ec;
		struct rte_ether_addr mac;

		if (rte_eth_dev_get_port_by_name(x->device, &port) != 0) {
			lcp_log(st, LCP_LOG_ERR, "options.device: no ethdev named \"%s\"", x->device);
			return -ENODEV;
		}
		if (!x->have_mac) {
			if (rte_eth_macaddr_get(port, &mac) != 0) {
				lcp_log(st, LCP_LOG_ERR, "cannot read the MAC of %s", x->device);
				return -ENODEV;
			}
			memcpy(x->k.mac, mac.addr_bytes, 6);
		}
		/* A NIC drops frames above the MTU it was configured with. DPDK
		 * 22.11's virtual drivers (af_packet, tap, memif) report 1500 at
		 * most but carry what their rings hold: a warning, not a refusal. */
		if (rte_eth_dev_get_mtu(port, &mtu) == 0 && x->k.mtu > mtu)
			lcp_log(st, LCP_LOG_WARNING,
				"options.mtu: %u is above the MTU %s reports (%u): a device that enforces it "
				"drops the larger frames (give the port stage \"mtu\": %u where its driver "
				"accepts it)",
				x->k.mtu, x->device, mtu, x->k.mtu);
		if (rte_eth_dev_conf_get(port, &ec) == 0) {
			const uint64_t need = RTE_ETH_TX_OFFLOAD_IPV4_CKSUM | RTE_ETH_TX_OFFLOAD_TCP_CKSUM;

			offload = (ec.txmode.offloads & need) == need;
		}
	}
	x->k.tx_csum_offload = offload && x->csum_offload;
	tcp_flow_start(x);
	x->stk = stk_create(&x->k, &ops, err, sizeof(err));
	if (x->stk == NULL) {
		lcp_log(st, LCP_LOG_ERR, "cannot create the stack: %s", err);
		return -EINVAL;
	}
	{
		char a[INET_ADDRSTRLEN];

		inet_ntop(AF_INET, &x->k.ip, a, sizeof(a));
		lcp_log(st, LCP_LOG_INFO,
			"%s/%u mac %02x:%02x:%02x:%02x:%02x:%02x mtu %u, checksums %s, rcvbuf %u sndbuf %u", a,
			x->k.prefix, x->k.mac[0], x->k.mac[1], x->k.mac[2], x->k.mac[3], x->k.mac[4], x->k.mac[5],
			x->k.mtu, x->k.tx_csum_offload ? "offloaded on tx" : "in software", x->k.rcvbuf,
			x->k.sndbuf);
	}
	x->first_poll = true;
	return 0;
}

static void
tcp_cmd_error(struct tcp_ctx *x, uint32_t conn, uint32_t user, int err)
{
	struct rte_mbuf *m;

	TCP_COUNT(x, CMD_ERRORS, 1);
	m = tcp_event_mbuf(x, NULL, user, LCP_STREAM_EV_ERROR, err);
	if (m != NULL) {
		lcp_stream_meta(m)->conn = conn;
		tcp_stage_ev(x, m);
	}
}

static void
tcp_first_poll(struct tcp_ctx *x)
{
	x->first_poll = false;
	stk_start(x->stk);
	if (x->listen != 0) {
		int rc = stk_tcp_listen(x->stk, (uint16_t)x->listen, x->backlog, 0);

		if (rc < 0) {
			lcp_log(x->st, LCP_LOG_ERR, "options.listen: cannot listen on port %u: %s", x->listen,
				strerror(-rc));
			tcp_cmd_error(x, 0, 0, -rc);
		}
	}
	if (x->connect[0] != '\0') {
		uint32_t ip;
		uint16_t port;

		if (ip4_port_parse(x->connect, &ip, &port) == 0 &&
		    stk_tcp_connect(x->stk, ip, port, 0) == NULL) {
			lcp_log(x->st, LCP_LOG_ERR, "options.connect: cannot connect to %s: %s", x->connect,
				strerror(errno));
			tcp_cmd_error(x, 0, 0, errno);
		}
	}
}

static unsigned
tcp_poll(struct lcp_stage *st, void *ctx)
{
	struct tcp_ctx *x = ctx;
	unsigned n;
	uint64_t now;

	if (unlikely(x->first_poll))
		tcp_first_poll(x);
	n = stk_poll(x->stk);
	n += tcp_sq_drain(x->sq, x->stk, &x->sq_cb);
	n += tcp_flow_poll(x);
	now = rte_rdtsc();
	if (now >= x->next_sync) {
		x->next_sync = now + x->sync_every;
		tcp_sync_counters(x);
	}
	if (x->tx.n || x->ev.n)
		tcp_flush(x);
	return n;
}

static void
tcp_rx(struct tcp_ctx *x, struct rte_mbuf **pkts, unsigned n)
{
	struct stk_rx rx[TCP_STAGE_BURST];
	unsigned k = 0;

	for (unsigned i = 0; i < n; i++) {
		struct rte_mbuf *m = pkts[i];
		uint64_t ol = m->ol_flags;

		if (unlikely(m->nb_segs != 1)) {
			TCP_COUNT(x, DROP_MULTISEG, 1);
			rte_pktmbuf_free(m);
			continue;
		}
		x->rx_pool = m->pool; /* the receive reserve watches it (tcp_flow.c) */
		rx[k].b = (struct stk_buf *)m;
		rx[k].data = rte_pktmbuf_mtod(m, uint8_t *);
		rx[k].len = m->data_len;
		rx[k].flags = ((ol & RTE_MBUF_F_RX_IP_CKSUM_MASK) == RTE_MBUF_F_RX_IP_CKSUM_GOOD ? STK_RX_IP_CSUM_OK : 0) |
			      ((ol & RTE_MBUF_F_RX_L4_CKSUM_MASK) == RTE_MBUF_F_RX_L4_CKSUM_GOOD ? STK_RX_L4_CSUM_OK : 0);
		if (++k == TCP_STAGE_BURST) {
			stk_input_burst(x->stk, rx, k);
			k = 0;
		}
	}
	stk_input_burst(x->stk, rx, k);
}

/* ---- the send queue's events (tcp_sendq.c) ---- */

static void
tcp_send_ev(struct tcp_ctx *x, uint32_t conn, uint32_t user, unsigned ev)
{
	struct rte_mbuf *m = tcp_event_mbuf(x, NULL, user, ev, 0);

	if (m != NULL) {
		lcp_stream_meta(m)->conn = conn;
		tcp_stage_ev(x, m);
	}
}

/* the first SEND held on conn: the application should stop sending there */
static void
tcp_send_full(struct tcp_ctx *x, uint32_t conn, uint32_t user)
{
	TCP_COUNT(x, SENDQ_FULL_EVENTS, 1);
	tcp_send_ev(x, conn, user, LCP_STREAM_EV_SEND_FULL);
}

static void
tcp_sq_room(void *arg, uint32_t conn, uint32_t user)
{
	tcp_send_ev(arg, conn, user, LCP_STREAM_EV_SEND_ROOM);
}

static void
tcp_sq_close(void *arg, struct stk_tcb *c)
{
	struct tcp_ctx *x = arg;

	stk_tcp_close(x->stk, c);
}

static void
tcp_sq_error(void *arg, uint32_t conn, uint32_t user, int err)
{
	tcp_cmd_error(arg, conn, user, err);
}

static void
tcp_sq_freed(void *arg, uint32_t conn, uint32_t bytes)
{
	struct tcp_ctx *x = arg;

	RTE_SET_USED(conn);
	TCP_COUNT(x, SENDQ_FREED_BYTES, bytes);
}

static void
tcp_app(struct tcp_ctx *x, struct rte_mbuf **ms, unsigned n)
{
	TCP_COUNT(x, COMMANDS_IN, n);
	for (unsigned i = 0; i < n; i++) {
		struct rte_mbuf *m = ms[i];
		struct lcp_stream_meta *meta = lcp_stream_meta(m);
		uint32_t conn = meta->conn, user = meta->user;
		struct stk_tcb *c = NULL;
		int rc = 0;

		switch (meta->ev) {
		case LCP_STREAM_CMD_SEND:
			c = stk_tcp_by_id(x->stk, conn);
			if (c == NULL) {
				rc = -ENOTCONN;
				break;
			}
			if (m->nb_segs != 1) {
				rc = -EMSGSIZE; /* chained sends: see doc/tcp.md */
				break;
			}
			{
				bool full_now;

				rc = tcp_sq_send(x->sq, x->stk, c, m, user, &full_now);
				if (rc == 1) {
					TCP_COUNT(x, SENDQ_HELD, 1);
					if (full_now)
						tcp_send_full(x, conn, user);
				}
				if (rc >= 0)
					continue; /* the stack (or the send queue) owns m now */
			}
			break;
		case LCP_STREAM_CMD_CONNECT:
			c = stk_tcp_connect(x->stk, meta->addr, meta->port, user);
			conn = 0;
			if (c == NULL)
				rc = -errno;
			break;
		case LCP_STREAM_CMD_LISTEN:
			rc = stk_tcp_listen(x->stk, meta->port, x->backlog, user);
			conn = 0;
			break;
		case LCP_STREAM_CMD_CLOSE:
			c = stk_tcp_by_id(x->stk, conn);
			if (c != NULL && tcp_sq_close_later(x->sq, conn))
				break; /* the FIN goes after what is held */
			rc = c == NULL ? -ENOTCONN : stk_tcp_close(x->stk, c);
			break;
		case LCP_STREAM_CMD_ABORT:
			c = stk_tcp_by_id(x->stk, conn);
			if (c == NULL) {
				rc = -ENOTCONN;
			} else {
				uint32_t held = tcp_sq_drop(x->sq, conn);

				if (held != 0)
					TCP_COUNT(x, SENDQ_FREED_BYTES, held);
				stk_tcp_abort(x->stk, c);
			}
			break;
		default:
			TCP_COUNT(x, DROP_UNKNOWN_CMD, 1);
			lcp_log(x->st, LCP_LOG_WARNING, "app: unknown command %u on connection 0x%x", meta->ev,
				conn);
			rte_pktmbuf_free(m);
			continue;
		}
		if (rc < 0) {
			lcp_log(x->st, LCP_LOG_DEBUG, "app: %s on connection 0x%x: %s", lcp_stream_ev_name(meta->ev),
				conn, strerror(-rc));
			tcp_cmd_error(x, conn, user, -rc);
		}
		rte_pktmbuf_free(m);
	}
}

static void
tcp_process(struct lcp_stage *st, void *ctx, unsigned port, void **objs, unsigned n)
{
	struct tcp_ctx *x = ctx;

	if (unlikely(x->first_poll))
		tcp_first_poll(x);
	if (port == TCP_P_RX)
		tcp_rx(x, (struct rte_mbuf **)objs, n);
	else
		tcp_app(x, (struct rte_mbuf **)objs, n);
	tcp_flush(x);
}

/* The shutdown's linger: the applications close their connections (a
 * WebSocket close, then CLOSE); until they are done this stage only counts the
 * connections whose FIN is out, so the engine waits for their peers. Once every
 * lingering stage is done (last: the engine's second round), what nobody
 * closed gets a FIN, and the count covers every connection until it is CLOSED
 * or in TIME_WAIT. */
static unsigned
tcp_linger(struct lcp_stage *st, void *ctx, bool last)
{
	struct tcp_ctx *x = ctx;

	if (x->stk == NULL)
		return 0;
	if (last && !x->closed_rest) {
		unsigned n = stk_tcp_close_all(x->stk);

		x->closed_rest = true;
		if (n > 0) {
			TCP_COUNT(x, STOP_FINS, n);
			lcp_log(st, LCP_LOG_INFO, "stopping: FIN on %u connection(s) no application closed", n);
		}
		tcp_flush(x);
	}
	return stk_tcp_closing(x->stk, x->closed_rest);
}

static void
tcp_stop(struct lcp_stage *st, void *ctx)
{
	struct tcp_ctx *x = ctx;
	unsigned n;

	if (x->stk == NULL)
		return;
	/* the run is over: tell every peer still connected (RST), so none waits on us */
	n = stk_tcp_abort_all(x->stk);
	if (n > 0) {
		TCP_COUNT(x, STOP_RESETS, n);
		lcp_log(st, LCP_LOG_WARNING, "stop: %u connection(s) still open reset (engine.linger over)", n);
	}
	tcp_flush(x);
	tcp_sync_counters(x);
}

static void
tcp_fini(struct lcp_stage *st, void *ctx)
{
	struct tcp_ctx *x = ctx;

	if (x->stk != NULL) {
		unsigned live = stk_conns(x->stk);

		if (live > 0)
			lcp_log(st, LCP_LOG_INFO, "%u connection(s) still open at exit: released", live);
		stk_destroy(x->stk); /* frees every held frame and queued buffer */
		/* what destroy freed never left: drop what it staged */
		for (unsigned i = 0; i < x->tx.n; i++)
			rte_pktmbuf_free(x->tx.objs[i]);
		for (unsigned i = 0; i < x->ev.n; i++)
			rte_pktmbuf_free(x->ev.objs[i]);
	}
	tcp_flow_fini(x);
	tcp_sq_free(x->sq);
	lcp_pool_free(x->nodes);
}

static const struct lcp_stage_ops tcp_ops = {
	.ports = tcp_ports,
	.counters = tcp_counters,
	.validate = tcp_validate,
	.init = tcp_init,
	.start = tcp_start,
	.poll = tcp_poll,
	.process = tcp_process,
	.stop = tcp_stop,
	.fini = tcp_fini,
	.ctx_size = sizeof(struct tcp_ctx),
	.linger = tcp_linger,
};

LCP_PLUGIN_EXPORT const struct lcp_plugin lcp_plugin_descriptor = {
	LCP_PLUGIN_HEADER(LCP_KIND_STAGE, "tcp"),
	.version = "1.0.0",
	.summary = "user-space TCP/IP (Ethernet, ARP, IPv4, ICMP echo, TCP) over a port, stream to the app",
	.options = tcp_opts,
	.conf_size = sizeof(struct tcp_conf),
	.ops = &tcp_ops,
};
