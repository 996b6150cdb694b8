/* SPDX-License-Identifier: BSD-3-Clause
 * tcp_app.h — what the tcp_app stage's files share: the counters, the modes,
 * the options (struct tcp_app_conf), a connection's entry and the context, and
 * the entry points each file gives the other.
 *
 *   tcp_app.c        the connection table, the commands to tcp (LISTEN,
 *                    CONNECT, SEND of the file, CLOSE), poll, the events and
 *                    the DATA path (hash, echo), the descriptor
 *   tcp_app_stage.c  the option table, validate, init (the file, the send
 *                    pool, the CONNECT entries), stop, fini, the result file
 */
#ifndef LCP_PLUGIN_TCP_APP_H
#define LCP_PLUGIN_TCP_APP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <openssl/evp.h>

#include <rte_mempool.h>

#include <lcp/lcp.h>

#define TCP_APP_BATCH 64         /* mbufs per lcp_emit from poll() */
#define TCP_APP_MAX_CONNECT 1000 /* "connections" */
#define TCP_APP_N_EV (LCP_STREAM_EV_SEND_ROOM + 1)

enum { TCP_APP_IN, TCP_APP_OUT };

#define TCP_APP_COUNTERS(X)                                                    \
	X(EVENTS, "events")                                                    \
	X(DATA_SEGS, "data_segs")                                              \
	X(BYTES_IN, "bytes_in")                                                \
	X(BYTES_OUT, "bytes_out")                                              \
	X(SEND_SEGS, "send_segs")                                              \
	X(CMDS, "cmds")                                                        \
	X(CONNS_DONE, "conns_done")                                            \
	X(REFUSED_SENDS, "refused_sends")                                      \
	X(ALLOC_FAIL, "alloc_fail")                                            \
	X(POOL_WAIT, "pool_wait")                                              \
	X(UNKNOWN_CONN_EVENTS, "unknown_conn_events")                          \
	X(CONN_TABLE_FULL, "conn_table_full")                                  \
	X(DROP_UNKNOWN_CONN, "drop_unknown_conn")                              \
	X(DROP_BAD_EVENT, "drop_bad_event")
enum {
#define X(e, s) TCP_APP_##e,
	TCP_APP_COUNTERS(X)
#undef X
};

enum tcp_app_mode { TCP_APP_RECV, TCP_APP_SEND, TCP_APP_ECHO };

struct tcp_app_conf {
	int mode;
	const char *connect;
	uint32_t connections;
	uint32_t listen;
	const char *file;
	const char *result;
	uint32_t expect;
	bool close_on_peer_close;
	uint64_t rate_mbps;
	uint32_t burst_bytes;
	uint32_t seg_size;
	uint32_t max_conns;
	uint32_t pool_reserve;
	const char *start_file;
	uint32_t delay_ms;
	uint32_t send_mbufs;
};

struct tcp_app_conn {
	uint32_t conn; /* tcp's id, 0 until known */
	uint32_t user;
	uint32_t addr; /* peer, network order */
	uint16_t port; /* peer, host order */
	uint16_t lport;
	int32_t next; /* hash chain, -1 = end */
	bool in_hash;
	bool terminal;
	bool sending;    /* send mode: connected, file not yet all handed to tcp */
	bool send_done;  /* send mode: whole file handed to tcp */
	bool close_want; /* CLOSE decided, not yet emitted */
	bool close_sent;
	bool tx_full;    /* SEND_FULL: tcp holds our SENDs; none more until SEND_ROOM */
	uint16_t last_reason;
	uint64_t bytes_in;
	uint64_t bytes_out;
	uint64_t file_off; /* send mode: next byte of the file to send */
	uint32_t ev[TCP_APP_N_EV];
	EVP_MD_CTX *md;
};

struct tcp_app_ctx {
	struct rte_mempool *pool;      /* the engine's: commands (and SENDs without send_mbufs) */
	struct rte_mempool *send_pool; /* send_mbufs > 0: SEND mbufs */
	int mode;
	uint32_t connect_addr; /* network order, 0 = none */
	uint16_t connect_port;
	uint16_t listen_port;
	uint32_t n_connect;
	uint32_t n_connect_sent; /* CONNECT commands emitted so far */
	const uint8_t *file; /* mmap, NULL if empty */
	size_t file_len;
	const char *result;
	const char *start_file;
	uint32_t expect;
	bool close_on_peer_close;
	uint64_t rate_Bps; /* bytes per second, 0 = no limit */
	uint32_t burst_bytes;
	uint32_t seg_size;
	uint32_t pool_reserve;
	uint64_t hz;
	uint64_t delay_tsc;
	uint64_t first_poll_tsc; /* 0 until the first poll */
	uint64_t next_check_tsc; /* start_file polling */
	uint64_t last_tsc;       /* token bucket */
	uint64_t credit;         /* bytes * hz */
	uint64_t credit_max;
	bool started;
	bool stop_requested;
	bool result_written;
	bool dirty; /* something changed after the result was written */
	uint32_t n_done;
	uint32_t n_closes; /* entries with close_want set */
	uint64_t unknown_conn_events;
	uint64_t refused_sends;
	uint64_t errors_no_conn;
	uint16_t last_error_no_conn;
	uint64_t alloc_fail;
	uint32_t max_conns;
	uint32_t n_conns;
	uint32_t hmask;
	int32_t *buckets; /* hmask + 1 heads, -1 = empty */
	struct tcp_app_conn conns[];
};

/* tcp_app.c: a new entry of the connection table (not in the hash yet), or
 * NULL when the table is full */
struct tcp_app_conn *tcp_app_new(struct lcp_stage *st, struct tcp_app_ctx *x, uint32_t user);

/* tcp_app_stage.c */
extern const struct lcp_opt tcp_app_opts[];
int tcp_app_validate(const void *conf, char *msg, size_t msglen);
int tcp_app_init(struct lcp_stage *st, const void *conf, void **ctx);
void tcp_app_stop(struct lcp_stage *st, void *ctx);
void tcp_app_fini(struct lcp_stage *st, void *ctx);

#endif
