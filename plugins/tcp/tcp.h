/* SPDX-License-Identifier: BSD-3-Clause
 * tcp.h — the tcp stage's configuration (tcp_config.c) shared with tcp.c. */
#ifndef LCP_PLUGIN_TCP_H
#define LCP_PLUGIN_TCP_H

#include <stdbool.h>
#include <stdint.h>

#include <rte_mbuf.h>

#include <lcp/lcp.h>
#include <stk/stk.h>
#include <stk/tcp.h>

struct tcp_conf {
	const char *ip;
	const char *gateway;
	const char *mac;
	const char *device;
	const char *neighbours;
	const char *connect;
	uint32_t listen;
	uint32_t backlog;
	int backlog_full; /* enum stk_backlog_full */
	int congestion;   /* enum stk_cc */
	uint32_t keepalive_s, keepalive_intvl_s, arp_timeout_s;
	bool csum_offload;
	uint32_t node_pool;
	uint32_t rx_reserve;
	uint32_t tx_mbufs;
	/* the stack's settings that an option sets as they are (its "stk." rows):
	 * a new one is a field of struct stk_config and a row of tcp_opts */
	struct stk_config stk;
};

extern const struct lcp_opt tcp_opts[];

/* fill the stack's config from the options (everything but the MAC when the
 * option leaves it to the device); 0 or -1 with a message naming the option */
int tcp_conf_to_stk(const struct tcp_conf *c, struct stk_config *k, bool *have_mac, char *msg, size_t len);
int tcp_validate(const void *conf, char *msg, size_t msglen);

enum { TCP_P_RX, TCP_P_TX, TCP_P_DATA, TCP_P_APP };

/* the stage's context (tcp.c, tcp_flow.c) */
struct tcp_sendq;
struct tcp_sq_cb {
	void *arg;
	void (*room)(void *arg, uint32_t conn, uint32_t user);           /* drained: SEND_ROOM */
	void (*close)(void *arg, struct stk_tcb *c);                     /* the CLOSE that waited */
	void (*error)(void *arg, uint32_t conn, uint32_t user, int err); /* a held SEND failed */
	void (*freed)(void *arg, uint32_t conn, uint32_t bytes);         /* held bytes thrown away */
};

struct tcp_ctx {
	struct lcp_stage *st;
	struct stk *stk;
	struct stk_config k;
	bool have_mac;
	struct rte_mempool *pool;  /* the frames it builds (tx_mbufs: the stage's own pool) */
	struct rte_mempool *evpool; /* events to the application: the engine's pool */
	unsigned pool_short;       /* allocations from pool failed in this episode (tcp.c) */
	uint64_t pool_short_since; /* TSC: the episode's first failure */
	struct lcp_pool *nodes;    /* small control objects (pool strategy) */
	uint64_t ns_mult;          /* ns = tsc * ns_mult >> 32 */
	uint64_t rnd[32];
	unsigned n_rnd;
	bool first_poll;
	uint64_t next_sync;
	uint64_t sync_every;
	uint64_t published[STK_C__COUNT];
	struct lcp_obuf tx; /* frames to the port */
	struct lcp_obuf ev; /* payload and events to the application */
	char device[64];
	char connect[32];
	uint32_t listen, backlog;
	bool csum_offload;
	bool closed_rest; /* linger: FIN sent on what no application closed */
	struct tcp_sendq *sq; /* SENDs held for room in the send buffer */
	struct tcp_sq_cb sq_cb;
	/* flow control toward the application (see the top of the file) */
	bool hold;                     /* the stack runs with rx_hold */
	struct rte_mbuf *dq_head, *dq_tail; /* "data" objects the ring refused, linked by next */
	unsigned dq_n;
	struct lcp_stream_credits *cr; /* offered when the consumer releases */
	uint32_t *out;                 /* connections with bytes handed on, not released */
	uint8_t *out_in;               /* by slot: in out[] */
	unsigned n_out;
	/* receive reserve */
	struct rte_mempool *rx_pool; /* the pool received frames come from (the port's) */
	uint32_t rx_reserve;
	bool pressure;
	uint64_t next_reserve_check;
	uint64_t reserve_every;
	uint64_t pressure_drops0;
};


/* the stage's own counters, after the stack's (tcp.c names them) */
#define TCP_OWN_COUNTERS(X)                                                    \
	X(EVENTS_OUT, "events_out")                                            \
	X(COMMANDS_IN, "commands_in")                                          \
	X(CMD_ERRORS, "cmd_errors")                                            \
	X(DROP_MULTISEG, "drop_multiseg")                                      \
	X(DROP_EVENT_NOMBUF, "drop_event_nombuf")                              \
	X(DROP_UNKNOWN_CMD, "drop_unknown_cmd")                                \
	X(DROP_NODE_POOL, "drop_node_pool")                                    \
	X(STOP_FINS, "stop_fins")                                              \
	X(STOP_RESETS, "stop_resets")                                          \
	X(SENDQ_HELD, "sendq_held")                                            \
	X(SENDQ_FULL_EVENTS, "sendq_full_events")                              \
	X(SENDQ_FREED_BYTES, "sendq_freed_bytes")                              \
	X(DATA_HELD_BACK, "data_held_back")                                    \
	X(RX_PRESSURE_EPISODES, "rx_pressure_episodes")

enum {
#define X(e, s) TCP_C_##e,
	TCP_OWN_COUNTERS(X)
#undef X
};

/* add v to the stage's own counter e */
#define TCP_COUNT(x, e, v) lcp_count((x)->st, (unsigned)STK_C__COUNT + TCP_C_##e, (v))

/* free a list of single-segment mbufs linked through next; how many */
static inline unsigned
tcp_mbuf_list_free(struct rte_mbuf *m)
{
	unsigned n = 0;

	while (m != NULL) {
		struct rte_mbuf *next = m->next;

		m->next = NULL;
		rte_pktmbuf_free(m);
		m = next;
		n++;
	}
	return n;
}

/* tcp_flow.c: flow control toward the application and the receive reserve */
/* init: the credits table when the consumer releases (0 or -ENOMEM) */
int tcp_flow_init(struct tcp_ctx *x, const struct tcp_conf *c);
/* start, before stk_create: whether the stack holds delivered data (k.rx_hold) */
void tcp_flow_start(struct tcp_ctx *x);
void tcp_flow_fini(struct tcp_ctx *x);
/* hold mode: emit what is staged on "data", keeping what the ring refuses */
void tcp_ev_flush(struct tcp_ctx *x);
/* poll: the held-back objects, the consumer's releases, the reserve; work done */
unsigned tcp_flow_poll(struct tcp_ctx *x);

/* tcp_sendq.c: SENDs held until the send buffer has room (backpressure) */
struct tcp_sendq *tcp_sq_create(struct lcp_stage *st, unsigned max_conns);
void tcp_sq_free(struct tcp_sendq *q);
/* a SEND on c: 0 the stack took m, 1 held (*full_now: SEND_FULL is due), or
 * a negative errno (not taken: the caller frees m and reports it) */
int tcp_sq_send(struct tcp_sendq *q, struct stk *stk, struct stk_tcb *c, struct rte_mbuf *m, uint32_t user,
		bool *full_now);
/* a CLOSE on conn: true when it must wait behind held data (done at the drain) */
bool tcp_sq_close_later(struct tcp_sendq *q, uint32_t conn);
/* conn died: free what it held; the bytes */
uint32_t tcp_sq_drop(struct tcp_sendq *q, uint32_t conn);
/* give held SENDs to the stack as room allows; SENDs handed over */
unsigned tcp_sq_drain(struct tcp_sendq *q, struct stk *stk, const struct tcp_sq_cb *cb);

#endif
