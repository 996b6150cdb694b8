/* SPDX-License-Identifier: BSD-3-Clause
 * lcp/stream.h — the `stream` unit: an mbuf of in-order TCP payload (or an empty
 * mbuf carrying an event or a command) with a per-connection header in an mbuf
 * dynfield (ABI 1.2).
 *
 * Direction tcp -> application ("data" port of the tcp stage): `ev` is one of
 * LCP_STREAM_EV_*; for LCP_STREAM_EV_DATA the mbuf's data is the payload, handed
 * over zero-copy (the received frame's mbuf with its offsets moved to the
 * payload). Every other event arrives in an empty mbuf.
 *
 * Direction application -> tcp ("app" port of the tcp stage): `ev` is one of
 * LCP_STREAM_CMD_*. SEND carries the bytes to send in the mbuf (single segment or
 * chained); the tcp stage owns the mbuf from then on. CONNECT and LISTEN carry
 * their address in addr/port and a cookie in `user` that every event of the
 * resulting connection(s) echoes back. CLOSE sends FIN after the queued data;
 * ABORT sends RST. A SEND the connection's send buffer cannot take is held by
 * the tcp stage, in order, until acknowledgements make room: never refused for
 * it, never half-taken. The first one held raises SEND_FULL (the application
 * should stop producing for that connection), the drain SEND_ROOM. An
 * application ignores events it does not know. Every DATA event carries the offset of its first byte in the
 * connection's byte stream (`off`): the DATA events of a connection, in order,
 * continue one another exactly; an application that finds a gap (a ring that
 * dropped stream mbufs between tcp and it) must not parse across it.
 *
 * The consumer of a stream mbuf frees it with rte_pktmbuf_free(). A consumer
 * whose input port says LCP_PORT_F_RELEASES also reports how far it got
 * (lcp_stream_release, below): until then the bytes count against the
 * connection's receive window. */
#ifndef LCP_STREAM_H
#define LCP_STREAM_H

#include <stdint.h>
#include <rte_mbuf.h>
#include <rte_mbuf_dyn.h>

#include <lcp/mbuf.h>

#ifdef __cplusplus
extern "C" {
#endif

#define LCP_STREAM_DYNFIELD_NAME "lcpipe_dynfield_stream"

enum lcp_stream_ev {
	LCP_STREAM_EV_DATA = 1,        /* payload in the mbuf */
	LCP_STREAM_EV_CONNECTED = 2,   /* active open completed */
	LCP_STREAM_EV_ACCEPTED = 3,    /* passive open completed (user = the listener's) */
	LCP_STREAM_EV_PEER_CLOSED = 4, /* FIN received: no more data will come */
	LCP_STREAM_EV_CLOSED = 5,      /* both directions closed; the id is dead */
	LCP_STREAM_EV_RESET = 6,       /* RST received (reason ECONNRESET or ECONNREFUSED); dead */
	LCP_STREAM_EV_TIMEOUT = 7,     /* retransmissions or keepalive gave up; dead */
	LCP_STREAM_EV_ERROR = 8,       /* a command failed (reason = errno); the connection, if any, lives on */
	LCP_STREAM_EV_SEND_FULL = 9,   /* ABI 1.7: the send buffer is full, SENDs are being held
					* (none is lost): stop sending until SEND_ROOM */
	LCP_STREAM_EV_SEND_ROOM = 10,  /* ABI 1.7: what was held went into the send buffer */
};

enum lcp_stream_cmd {
	LCP_STREAM_CMD_SEND = 16,    /* the mbuf's bytes on connection `conn` */
	LCP_STREAM_CMD_CONNECT = 17, /* to addr:port; conn is ignored */
	LCP_STREAM_CMD_LISTEN = 18,  /* on local port `port` */
	LCP_STREAM_CMD_CLOSE = 19,   /* FIN after queued data */
	LCP_STREAM_CMD_ABORT = 20,   /* RST now */
};

struct lcp_stream_meta {
	uint32_t conn;   /* connection id given by the tcp stage (never 0) */
	uint16_t ev;     /* enum lcp_stream_ev or enum lcp_stream_cmd */
	uint16_t reason; /* errno value for RESET/TIMEOUT/ERROR, else 0 */
	uint32_t addr;   /* peer IPv4 address, network byte order */
	uint16_t port;   /* peer port (host order); for LISTEN the local port */
	uint16_t lport;  /* local port (host order) */
	uint32_t user;   /* application cookie from CONNECT / LISTEN */
	uint32_t off;    /* ABI 1.7, DATA: offset of the first byte in the peer's stream
			  * (mod 2^32): a consumer that finds it beyond what it has
			  * seen knows a piece of the stream was lost on the way */
};

/* Registered by the engine before any stage init; >= 0 afterwards. */
extern int lcp_stream_offset;

static inline struct lcp_stream_meta *
lcp_stream_meta(struct rte_mbuf *m)
{
	return RTE_MBUF_DYNFIELD(m, lcp_stream_offset, struct lcp_stream_meta *);
}

/* An empty stream mbuf from mp carrying ev (an event or a command) on
 * connection conn: the rest of its header zeroed, its rx TSC set to tsc (0 for
 * what an application sends). NULL when mp is empty (the caller counts it).
 * The one way ws, feedsim and tcp build their commands and events. */
static inline struct rte_mbuf *
lcp_stream_mbuf(struct rte_mempool *mp, unsigned ev, uint32_t conn, uint64_t tsc)
{
	struct rte_mbuf *m = rte_pktmbuf_alloc(mp);
	struct lcp_stream_meta *meta;

	if (m == NULL)
		return NULL;
	lcp_mbuf_set_rx_tsc(m, tsc);
	meta = lcp_stream_meta(m);
	*meta = (struct lcp_stream_meta){ .conn = conn, .ev = (uint16_t)ev };
	return m;
}

/* ---- ABI 1.8: stream credits, flow control across lcores ----
 *
 * A producer of stream objects (the tcp stage) that wants to know when its
 * consumer is done with the bytes it handed on offers a table here; a consumer
 * whose input port says LCP_PORT_F_RELEASES writes into it, per connection, the
 * stream offset (lcp_stream_meta.off counting) up to which it has finished with
 * the bytes: one 64-bit store, no message, any lcore. The producer reads it
 * back when it likes (the tcp stage: every poll, for the connections that have
 * bytes out) and counts what lies beyond it as still held (the receive window
 * stays closed by that much). Slot conn & mask holds conn << 32 | offset, so
 * a write about a dead connection can never be read as one about the next
 * connection in the same slot. */
struct lcp_stream_credits {
	uint32_t mask;     /* slots - 1 (a power of two minus one) */
	uint32_t reserved;
	uint64_t slot[];   /* conn << 32 | released offset; 0 = nothing yet */
};

/* consumer: done with connection conn's bytes up to offset off (cr may be NULL) */
static inline void
lcp_stream_release(struct lcp_stream_credits *cr, uint32_t conn, uint32_t off)
{
	if (cr != NULL)
		__atomic_store_n(&cr->slot[conn & cr->mask], (uint64_t)conn << 32 | off, __ATOMIC_RELEASE);
}

/* producer: the offset conn's consumer released up to; false when it has
 * written nothing about conn yet */
static inline bool
lcp_stream_released(const struct lcp_stream_credits *cr, uint32_t conn, uint32_t *off)
{
	uint64_t v = __atomic_load_n(&cr->slot[conn & cr->mask], __ATOMIC_ACQUIRE);

	if ((uint32_t)(v >> 32) != conn)
		return false;
	*off = (uint32_t)v;
	return true;
}

struct lcp_stage;
/* producer, from init(): offer cr for the link leaving output port out_port
 * (the producer owns it and frees it at fini, after the run) */
void lcp_stream_credits_offer(struct lcp_stage *st, unsigned out_port, struct lcp_stream_credits *cr);
/* producer: whether the stage that out_port is linked to releases what it is
 * given (its input port has LCP_PORT_F_RELEASES) */
bool lcp_port_consumer_releases(const struct lcp_stage *st, unsigned out_port);
/* consumer, from start() on: the table its producer offered for the link into
 * input port in_port; NULL when none (then releases are not needed) */
struct lcp_stream_credits *lcp_stream_credits(const struct lcp_stage *st, unsigned in_port);

static inline const char *
lcp_stream_ev_name(unsigned ev)
{
	static const char *const n[] = {
		[LCP_STREAM_EV_DATA] = "data", [LCP_STREAM_EV_CONNECTED] = "connected",
		[LCP_STREAM_EV_ACCEPTED] = "accepted", [LCP_STREAM_EV_PEER_CLOSED] = "peer_closed",
		[LCP_STREAM_EV_CLOSED] = "closed", [LCP_STREAM_EV_RESET] = "reset",
		[LCP_STREAM_EV_TIMEOUT] = "timeout", [LCP_STREAM_EV_ERROR] = "error",
		[LCP_STREAM_EV_SEND_FULL] = "send_full", [LCP_STREAM_EV_SEND_ROOM] = "send_room",
		[LCP_STREAM_CMD_SEND] = "send", [LCP_STREAM_CMD_CONNECT] = "connect",
		[LCP_STREAM_CMD_LISTEN] = "listen", [LCP_STREAM_CMD_CLOSE] = "close",
		[LCP_STREAM_CMD_ABORT] = "abort",
	};

	return ev < sizeof(n) / sizeof(n[0]) && n[ev] != NULL ? n[ev] : "?";
}

#ifdef __cplusplus
}
#endif
#endif
