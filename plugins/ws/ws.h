/* SPDX-License-Identifier: BSD-3-Clause
 * ws.h — the ws stage's shared definitions: counters, configuration,
 * connection and stage context, and the entry points between its files:
 *
 *   ws.c         the stage: ports, init / fini, process (events from tcp), poll
 *                (connects, timers), linger (the shutdown's close), stop
 *   ws_config.c  options, URL parsing, cross-option checks
 *   ws_conn.c    a connection's life: connect, TLS and upgrade, reconnect with
 *                backoff, failure, subscriptions, the close at shutdown
 *   ws_rx.c      received bytes: the upgrade response, then the session's
 *                events (stk/ws_session.h) -> msgs, zero copy or in buffers
 *                lent from the assembly pool (or the heap)
 *   ws_tx.c      bytes to tcp: commands, the session's frames, plain or
 *                through TLS
 *   ws_tls.c     TLS over the connection (stk/tls.h)
 *   ws_resolve.c host names, resolved on a control thread of the stage
 */
#ifndef LCP_PLUGIN_WS_H
#define LCP_PLUGIN_WS_H

#include <stdbool.h>
#include <stdint.h>
#include <pthread.h>
#include <semaphore.h>

#include <rte_cycles.h>
#include <rte_mbuf.h>

#include <lcp/lcp.h>
#include <stk/tls.h>
#include <stk/ws.h>
#include <stk/ws_session.h>

#define WS_RND_BYTES 4096u /* mask keys of 1,024 frames per CSPRNG call */
#define WS_RND_LOW 512u    /* below this, poll()'s tick refills the buffer */
#define WS_MAX_ADDRS 8     /* addresses kept per resolved name, tried in turn */

enum { WS_P_IN, WS_P_TX, WS_P_MSG, WS_P_SEND };

#define WS_COUNTERS(X)                                                         \
	X(MSGS, "msgs")                                                        \
	X(MSG_BYTES, "msg_bytes")                                              \
	X(MSGS_ZERO_COPY, "msgs_zero_copy")                                    \
	X(MSGS_ASSEMBLED, "msgs_assembled")                                    \
	X(FRAMES_CONTROL, "frames_control")                                    \
	X(PINGS_RX, "pings_rx")                                                \
	X(PONGS_TX, "pongs_tx")                                                \
	X(PINGS_AFTER_CLOSE, "pings_after_close")                              \
	X(PINGS_TX, "pings_tx")                                                \
	X(PONGS_RX, "pongs_rx")                                                \
	X(CONNECTS, "connects")                                                \
	X(OPENS, "opens")                                                      \
	X(RECONNECTS, "reconnects")                                            \
	X(SUBSCRIBES_TX, "subscribes_tx")                                      \
	X(SUBSCRIBE_RETRIES, "subscribe_retries")                              \
	X(FAIL_STALE, "fail_stale")                                            \
	X(CLOSES_RX, "closes_rx")                                              \
	X(CLOSES_TX, "closes_tx")                                              \
	X(FAIL_HANDSHAKE, "fail_handshake")                                    \
	X(FAIL_HANDSHAKE_TIMEOUT, "fail_handshake_timeout")                    \
	X(FAIL_PONG_TIMEOUT, "fail_pong_timeout")                              \
	X(FAIL_1002, "fail_protocol_1002")                                     \
	X(FAIL_1007, "fail_bad_utf8_1007")                                     \
	X(FAIL_1009, "fail_too_big_1009")                                      \
	X(FAIL_1011, "fail_internal_1011")                                     \
	X(FAIL_TCP, "fail_tcp")                                                \
	X(FAIL_STREAM_GAP, "fail_stream_gap")                                  \
	X(DROP_NO_MSG, "drop_no_msg")                                          \
	X(MSGS_AFTER_LOSS, "msgs_after_loss")                                  \
	X(DROP_NO_MBUF, "drop_no_mbuf")                                        \
	X(DROP_ASSEMBLY_NOMEM, "drop_assembly_nomem")                          \
	X(DROP_ASSEMBLY_POOL_EMPTY, "drop_assembly_pool_empty")                \
	X(MSGS_ASSEMBLED_HEAP, "msgs_assembled_heap")                          \
	X(EVENTS_OLD_CONN, "events_old_conn")                                  \
	X(MSGS_SENT, "msgs_sent")                                              \
	X(DROP_SEND_NOT_OPEN, "drop_send_not_open")                            \
	X(DROP_AFTER_CLOSE, "drop_after_close")                                \
	X(POOL_WAITS, "pool_waits")                                            \
	X(POOL_WAIT_CYCLES, "pool_wait_cycles")                                \
	X(RAND_FALLBACKS, "rand_fallbacks")                                    \
	X(TLS_HANDSHAKES, "tls_handshakes")                                    \
	X(TLS_RESUMED, "tls_resumed")                                          \
	X(TLS_FAIL_VERIFY, "tls_fail_verify")                                  \
	X(TLS_FAIL_ALERT, "tls_fail_alert")                                    \
	X(TLS_FAIL_TIMEOUT, "tls_fail_timeout")                                \
	X(TLS_FAIL_PROTOCOL, "tls_fail_protocol")                              \
	X(TLS_FAIL_TX, "tls_fail_tx")                                          \
	X(TLS_RECORDS_RX, "tls_records_rx")                                    \
	X(TLS_RECORDS_TX, "tls_records_tx")                                    \
	X(TLS_BYTES_RX, "tls_bytes_rx")                                        \
	X(TLS_BYTES_TX, "tls_bytes_tx")                                        \
	X(TLS_RECORDS_RX_FAST, "tls_records_rx_fast")                          \
	X(TLS_TICKETS_IGNORED, "tls_tickets_ignored")                          \
	X(RX_BUFFERS_EMPTY, "rx_buffers_empty")                                \
	X(DEFLATE_OPENS, "deflate_opens")                                      \
	X(MSGS_INFLATED, "msgs_inflated")                                      \
	X(DEFLATE_BYTES_RX, "deflate_bytes_rx")                                \
	X(INFLATED_BYTES, "inflated_bytes")                                    \
	X(RESOLVES, "resolves")                                                \
	X(FAIL_RESOLVE, "fail_resolve")                                        \
	X(STOP_CLOSES, "stop_closes")                                          \
	X(STOP_CLOSES_ANSWERED, "stop_closes_answered")                        \
	X(FAIL_CLOSE_UNFINISHED, "fail_close_unfinished")

enum {
#define X(e, s) WS_C_##e,
	WS_COUNTERS(X)
#undef X
	WS_C__N
};

struct ws_conf {
	const char *url;
	uint32_t connections;
	const char *subscribe;
	const char *protocol;
	const char *headers;
	uint32_t ping_interval_ms, pong_timeout_ms, stale_timeout_ms, handshake_timeout_ms;
	uint32_t reconnect_min_ms, reconnect_max_ms;
	bool reconnect_jitter;
	uint32_t reconnect_reset_ms, subscribe_interval_ms;
	uint32_t max_msg;
	bool check_utf8;
	uint32_t msgs;
	uint32_t assembly_size, assembly_buffers;
	int on_pool_empty;
	uint32_t pool_wait_us;
	uint64_t stop_after_msgs;
	bool stop_on_close;
	const char *ca_file, *ca_path;
	bool insecure;
	int tls_min_version, tls_max_version; /* index into lcp_tls_versions (tls_opts.h) */
	const char *tls_server_name;
	const char *tls_ciphers, *tls_ciphersuites;
	bool tls_resume;
	bool tls_fast_path;
	uint32_t rx_buffer_size, rx_buffers;
	bool deflate;
	uint32_t deflate_window_bits;
	bool deflate_no_context_takeover;
};

enum { WS_POOL_EMPTY_DROP = 0, WS_POOL_EMPTY_HEAP = 1 };


/* connection states: IDLE -> [RESOLVING] -> CONNECTING -> [TLS] -> HANDSHAKE
 * (the HTTP upgrade) -> OPEN; any failure -> IDLE (reconnect after backoff).
 * At shutdown (ws_linger): OPEN, TLS, HANDSHAKE, and CONNECTING once connected
 * -> CLOSING (our close sent, waiting for the server's and for TCP's end) -> IDLE */
enum { WC_IDLE = 0, WC_RESOLVING, WC_CONNECTING, WC_TLS, WC_HANDSHAKE, WC_OPEN, WC_CLOSING };


struct ws_ctx;

struct ws_conn {
	struct ws_ctx *x;
	unsigned idx;
	/* inflated messages are packed into an mbuf of rx_pool, many to one,
	 * each holding a reference: the next one is written at zpack_used */
	struct rte_mbuf *zpack;
	uint32_t zpack_used;
	uint32_t zpack_spare;  /* references on zpack taken for messages, not yet given */
	uint32_t ip;           /* the address being tried (network order) */
	uint16_t port;
	bool tls;              /* wss:// */
	bool named;            /* the host is a DNS name (resolved before each connect) */
	char host[254];        /* as in the URL: SNI, the verified name */
	char hosthdr[262];     /* the Host header: host[:port] */
	char path[256];
	uint8_t state;
	bool close_rcvd;       /* CLOSING: the server's close frame came (or none is due) */
	bool fin_sent;         /* CLOSING: our TCP close went out */
	uint8_t close_from;    /* CLOSING: the state the close started from (WC_OPEN, WC_TLS, WC_HANDSHAKE, WC_CONNECTING) */
	bool session_start;    /* the next msg is the first since the open */
	uint32_t tcp;          /* the tcp stage's connection id; 0 = none */
	uint32_t gen;          /* connection attempt (see ws_cookie) */
	struct stk_ws_hs *hs;  /* during the handshake */
	struct stk_wss ws;     /* the WebSocket session, once open (FREE before) */
	uint64_t t_deadline;   /* handshake deadline (tsc) */
	uint64_t t_ping, t_pong; /* next ping; pong deadline (0: none due) */
	uint64_t t_reconnect;
	uint64_t t_opened;     /* when it opened (tsc): the backoff starts over after reconnect_reset_ms */
	uint64_t t_last_msg;   /* the last message delivered (tsc): the stale-feed watchdog */
	uint64_t t_sub;        /* the next subscription message is due (0: none left) */
	const char *sub_next;  /* the next subscription line to send */
	uint32_t backoff_ms;
	uint64_t msgs, bytes, opens;
	uint32_t lost;         /* messages dropped since the last one delivered (LCP_MSG_F_LOSS) */
	uint32_t rx_off;       /* the stream offset the next DATA event must start at */
	/* TLS (wss://) */
	struct stk_tls *t;     /* this attempt's session */
	bool tls_fast_tried;   /* the receive fast path was asked for (once open) */
	void *ticket;          /* the last session ticket, across reconnects */
	/* names: the worker asks (rq_gen), the resolver answers (rs_gen) */
	uint32_t rq_gen, rs_gen; /* atomics: __atomic release / acquire */
	int rs_err;            /* getaddrinfo's answer to rq_gen (0: addresses) */
	uint8_t rs_n, next_addr;
	uint32_t rs_addr[WS_MAX_ADDRS];
};

/* the tcp cookie of a connection attempt: the connection's index + 1 in the low
 * 16 bits, the attempt's generation in the high 16, so events of an attempt we
 * gave up on (a late CONNECTED after a timeout, a RESET of an old connection)
 * are told apart from the current one's */
static inline uint32_t
ws_cookie(const struct ws_conn *c)
{
	return ((uint32_t)(c->gen & 0xffff) << 16) | (c->idx + 1);
}

/* where an assembled message's buffer is: none (by reference into its
 * segment), the assembly pool, the heap; WS_ASM_PACK: a slice of the
 * connection's pack (ws_conn.zpack) that an inflated message is being written
 * into, by reference once it is whole */
enum { WS_ASM_NONE = 0, WS_ASM_POOL, WS_ASM_HEAP, WS_ASM_PACK };

struct ws_msg {
	struct lcp_msg pub;
	struct ws_ctx *x;
	uint8_t asm_kind; /* what backing[1] is */
};

struct ws_ctx {
	struct lcp_stage *st;
	struct lcp_msg_owner owner; /* our msgs' owner: their release_bulk */
	struct lcp_stream_credits *credits; /* tcp.data's, when it asks for releases */
	struct rte_mempool *pkt;
	struct lcp_pool *msgs;     /* struct ws_msg objects */
	struct lcp_pool *asm_pool; /* assembly buffers of asm_size bytes */
	size_t asm_size;
	bool asm_heap_fallback;
	uint64_t pool_wait; /* pool_wait_us in TSC cycles; 0 = no wait */
	unsigned n_conns;
	struct ws_conn *conns;
	char *subscribe;
	char extra[4096];
	char protocol[64];
	uint32_t ping_ms, pong_ms, hs_ms, rc_min, rc_max;
	uint32_t stale_ms, rc_reset_ms, sub_ms;
	bool rc_jitter;
	uint64_t max_msg;
	bool check_utf8;
	uint64_t hz_ms, next_tick;
	bool stopping;             /* the shutdown began (ws_linger) or we asked for it: never reconnect */
	uint64_t delivered;        /* messages emitted, for stop_after_msgs */
	uint64_t stop_after;       /* stop_after_msgs, 0: never */
	bool stop_on_close;        /* a connection that was open ends: end the run */
	bool stop_asked;           /* lcp_stage_request_stop() called */
	uint8_t rnd[WS_RND_BYTES]; /* CSPRNG output for mask keys and handshake keys */
	unsigned n_rnd;            /* bytes of rnd not used yet (taken from the end) */
	struct lcp_obuf tx;  /* commands and bytes to tcp */
	struct lcp_obuf msg; /* decoded messages */
	/* messages, their bytes and the zero-copy ones emitted since the
	 * counters were last added (ws_flush adds them: once per burst) */
	uint64_t pend_msgs, pend_bytes, pend_zc;
	/* msg objects taken from the pool WS_MCACHE at a time (one pool call
	 * per burst of ticks, not one per tick); given back at fini */
#define WS_MCACHE 32
	unsigned mcache_n;
	void *mcache[WS_MCACHE];
	/* permessage-deflate */
	bool deflate;                 /* offer it */
	struct stk_ws_pmd pmd_offer;
	/* the sessions' counts (control frames, closes, compression) and what
	 * the counters already hold of them (ws_publish) */
	struct stk_wss_stats wss, wss_pub;
	/* TLS */
	struct stk_tls_ctx *tls;
	char server_name[254];        /* tls_server_name; "": each URL's host */
	struct stk_tls_stats tls_pub; /* what the counters already hold */
	struct rte_mempool *rx_pool;  /* rx_buffer_size buffers (TLS records, inflated messages); NULL: none */
	struct rte_mbuf *spare;       /* plaintext mbuf a read did not fill */
	unsigned nombuf_run;          /* mbuf allocations failed in a row (ws_nombuf) */
	bool tls_fast;                /* tls_fast_path */
	uint64_t tls_rx_tsc;          /* rx TSC of the segment being decrypted */
	/* names */
	bool resolver_up;
	volatile bool resolver_quit;
	pthread_t resolver;
	sem_t resolver_sem;
};

extern const struct lcp_opt ws_opts[];

static inline uint64_t
ws_now(void)
{
	return rte_rdtsc();
}

/* ws_config.c */
int ws_parse_url(const char *u, size_t n, struct ws_conn *c, char *err, size_t errlen);
int ws_validate(const void *conf, char *msg, size_t msglen);

/* ws_tx.c */
void ws_rand_fill(struct ws_ctx *x);
void ws_rand(struct ws_ctx *x, uint8_t *out, unsigned n);
void ws_flush(struct ws_ctx *x);
void ws_tx(struct ws_ctx *x, struct rte_mbuf *m);
struct rte_mbuf *ws_cmd(struct ws_ctx *x, struct ws_conn *c, unsigned cmd);
bool ws_send_bytes(struct ws_ctx *x, struct ws_conn *c, const uint8_t *p, size_t n);
bool ws_send(struct ws_ctx *x, struct ws_conn *c, const uint8_t *p, size_t n);
int ws_wss_tx(void *user, const struct stk_wss_frame *f);
void ws_wss_rand(void *user, uint8_t *out, unsigned n);
void ws_send_msgs(struct ws_ctx *x, struct lcp_msg **ms, unsigned n);

/* ws_rx.c */
extern const struct stk_wss_ops ws_wss_ops;
void ws_session_end(struct ws_conn *c);
int ws_rx_pool_init(struct ws_ctx *x, const struct ws_conf *c);

/* is any of the stage's URLs wss://? */
static inline bool
ws_any_tls(const struct ws_ctx *x)
{
	for (unsigned i = 0; i < x->n_conns; i++)
		if (x->conns[i].tls)
			return true;
	return false;
}
void ws_msg_owner_init(struct ws_ctx *x); /* the release_bulk of our msgs (ABI 1.9) */
void ws_publish(struct ws_ctx *x);
void ws_on_data(struct ws_ctx *x, struct ws_conn *c, struct rte_mbuf *m);
void ws_on_plain(struct ws_ctx *x, struct ws_conn *c, struct rte_mbuf *m);

/* ws_conn.c */
/* reason: a literal (the report's stop_reason) */
void ws_ask_stop(struct ws_ctx *x, const char *reason);
void ws_schedule_reconnect(struct ws_ctx *x, struct ws_conn *c, const char *why);
void ws_fail(struct ws_ctx *x, struct ws_conn *c, uint16_t code, const char *why);
void ws_stream_gap(struct ws_ctx *x, struct ws_conn *c, uint32_t off);
void ws_close_tcp(struct ws_ctx *x, struct ws_conn *c, bool abort);
void ws_connect(struct ws_ctx *x, struct ws_conn *c);
void ws_on_connected(struct ws_ctx *x, struct ws_conn *c, uint32_t tcp);
void ws_upgrade(struct ws_ctx *x, struct ws_conn *c);
void ws_on_open(struct ws_ctx *x, struct ws_conn *c);
bool ws_next_addr(struct ws_ctx *x, struct ws_conn *c, const char *why);
void ws_on_resolved(struct ws_ctx *x, struct ws_conn *c);
void ws_subscribe(struct ws_ctx *x, struct ws_conn *c);
unsigned ws_conn_timers(struct ws_ctx *x, struct ws_conn *c, uint64_t now);
void ws_close_stopping(struct ws_ctx *x, struct ws_conn *c);
void ws_close_fin(struct ws_ctx *x, struct ws_conn *c);
void ws_close_done(struct ws_ctx *x, struct ws_conn *c, const char *why);

/* ws_tls.c */
int ws_tls_init(struct ws_ctx *x, const struct ws_conf *c);
bool ws_tls_start(struct ws_ctx *x, struct ws_conn *c);
void ws_tls_data(struct ws_ctx *x, struct ws_conn *c, struct rte_mbuf *m);
void ws_tls_failed(struct ws_ctx *x, struct ws_conn *c);
void ws_tls_publish(struct ws_ctx *x);
void ws_tls_fini(struct ws_ctx *x);

/* ws_resolve.c */
int ws_resolver_start(struct ws_ctx *x);
void ws_resolver_ask(struct ws_ctx *x, struct ws_conn *c);
void ws_resolver_stop(struct ws_ctx *x);
bool ws_resolver_answered(const struct ws_conn *c);
const char *ws_resolve_strerror(int e);

#endif
