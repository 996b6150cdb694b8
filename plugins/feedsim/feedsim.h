/* SPDX-License-Identifier: BSD-3-Clause
 * feedsim.h — what the feedsim stage's files share: the counters, the options
 * (struct fs_conf), a client and the context, the small inlines every file
 * uses (the random draw, the tx buffer, the clock), and the entry points each
 * file gives the others.
 *
 *   feedsim.c         the events from tcp: accept, TLS, the upgrade, the
 *                     client's frames; client drop, linger, the descriptor
 *   feedsim_tx.c      what goes to a client: bytes to tcp (plain or through
 *                     TLS), ticks and venue messages, the stream per poll, poll
 *   feedsim_config.c  the option table, validate, the size mix, prerender's
 *                     rendering, init, fini
 *   feedsim_venue.c   the venues' message shapes (feedsim_venue.h)
 */
#ifndef LCP_PLUGIN_FEEDSIM_H
#define LCP_PLUGIN_FEEDSIM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <rte_cycles.h>
#include <rte_mbuf.h>
#include <rte_mempool.h>

#include <openssl/evp.h>

#include <lcp/lcp.h>
#include <stk/tls.h>
#include <stk/ws.h>
#include <stk/ws_session.h>

#include "feedsim_venue.h"

#define FS_PT_MAX 16384 /* plaintext staged per TLS record */

enum { FS_P_IN, FS_P_TX };

#define FS_COUNTERS(X)                                                         \
	X(CLIENTS, "clients")                                                  \
	X(HANDSHAKES, "handshakes")                                            \
	X(MSGS, "msgs")                                                        \
	X(MSG_BYTES, "msg_bytes")                                              \
	X(FRAGMENTED, "fragmented_msgs")                                       \
	X(PINGS_TX, "pings_tx")                                                \
	X(PONGS_RX, "pongs_rx")                                                \
	X(PINGS_RX, "pings_rx")                                                \
	X(PONGS_TX, "pongs_tx")                                                \
	X(PINGS_AFTER_CLOSE, "pings_after_close")                              \
	X(CLIENT_MSGS, "client_msgs")                                          \
	X(CLOSES, "closes")                                                    \
	X(CLOSES_RX, "closes_rx")                                              \
	X(SEND_POOL_EMPTY, "send_pool_empty")                                  \
	X(SEND_FULL, "send_full")                                              \
	X(FAIL_HANDSHAKE, "fail_handshake")                                    \
	X(FAIL_PROTOCOL, "fail_protocol")                                      \
	X(DROP_TOO_MANY_CLIENTS, "drop_too_many_clients")                      \
	X(DROP_NO_MBUF, "drop_no_mbuf")                                        \
	X(EVENTS_OLD_CONN, "events_old_conn")                                  \
	X(FAIL_STREAM_GAP, "fail_stream_gap")                                  \
	X(TLS_HANDSHAKES, "tls_handshakes")                                    \
	X(TLS_RESUMED, "tls_resumed")                                          \
	X(TLS_FAIL_ALERT, "tls_fail_alert")                                    \
	X(TLS_FAIL_PROTOCOL, "tls_fail_protocol")                              \
	X(TLS_FAIL_TX, "tls_fail_tx")                                          \
	X(DEFLATE_CLIENTS, "deflate_clients")                                  \
	X(MSGS_DEFLATED, "msgs_deflated")                                      \
	X(DEFLATED_BYTES, "deflated_bytes")                                    \
	X(VENUE_CTL_MSGS, "venue_ctl_msgs")                                    \
	X(GAPS_INJECTED, "gaps_injected")                                      \
	X(ECHOED, "echoed")

enum {
#define X(e, s) FS_C_##e,
	FS_COUNTERS(X)
#undef X
};

struct fs_conf {
	uint32_t listen;
	uint32_t symbols;
	uint32_t rate;
	uint64_t count;
	const char *sizes;
	uint32_t fragment_every, fragments;
	uint32_t ping_interval_ms;
	uint32_t send_mbufs;
	uint32_t batch;
	uint32_t max_clients;
	uint64_t seed;
	bool close_when_done;
	bool hash_payloads;
	bool echo;
	const char *tls_cert, *tls_key;
	int tls_min_version, tls_max_version;
	const char *tls_ciphers, *tls_ciphersuites;
	bool deflate;
	int32_t deflate_level;
	uint32_t deflate_window_bits;
	bool deflate_no_context_takeover;
	int venue;
	uint32_t gap_every;
	uint32_t heartbeat_every;
	bool prerender;
};

enum { FC_FREE = 0, FC_TLS, FC_HANDSHAKE, FC_STREAM, FC_CLOSING };

#define FS_MAX_SIZES 16
#define FS_PR_MAX (1ull << 30) /* prerender: bytes of frames, at most */

/* prerender: whole frames, together at most a SEND mbuf's room (or one larger frame) */
struct fs_pr_step {
	uint32_t len;     /* frame bytes */
	uint32_t msgs;    /* frames */
	uint32_t payload; /* payload bytes */
};

struct fs_ctx;

struct fs_client {
	struct fs_ctx *x;
	uint8_t state;
	bool frag_pending_ping;
	uint32_t conn;
	uint32_t rx_off;      /* where the client's next DATA must start in its stream */
	bool tx_full;         /* tcp holds our SENDs (SEND_FULL): no ticks until SEND_ROOM */
	struct stk_ws_hs *hs;
	struct stk_wss ws;    /* the WebSocket session, after the upgrade */
	uint64_t *seq;      /* per symbol */
	uint64_t sent;
	uint64_t next_send; /* tsc (rate limit) */
	uint64_t next_ping;
	uint64_t pr_i, pr_off; /* prerender: next step and its offset in pr_buf */
	struct rte_mbuf *cur; /* SEND mbuf being filled */
	struct stk_tls *t;    /* wss */
	uint8_t *pt;          /* wss: plaintext staged for the next record */
	size_t pt_n;
	EVP_MD_CTX *sha;      /* hash_payloads: SHA-256 of the payloads sent */
	uint64_t sha_bytes;
};

struct fs_ctx {
	struct lcp_stage *st;
	struct rte_mempool *pkt;  /* commands */
	struct rte_mempool *send; /* SEND mbufs (backpressure) */
	struct fs_client *cl;
	unsigned max_clients;
	uint8_t *pr_buf;              /* prerender: the stream's frames */
	struct fs_pr_step *pr_step;   /* ... cut into steps of whole frames */
	uint64_t pr_n;                /* steps */
	struct fs_conf c;
	unsigned n_sizes;
	uint32_t size[FS_MAX_SIZES], cum[FS_MAX_SIZES], total_w;
	uint64_t rng;
	uint64_t hz, ns0, tsc0, per_msg; /* per_msg: tsc between messages at rate */
	uint64_t ping_tsc;
	unsigned seq_words; /* per (client, symbol): 1, FS_VENUE_WORDS in venue modes */
	bool listening;
	struct stk_tls_ctx *tls; /* wss */
	struct stk_ws_pmd pmd;   /* our permessage-deflate settings */
	struct stk_wss_stats wss, wss_pub; /* the sessions' counts; published (fs_publish) */
	struct lcp_obuf tx; /* commands and bytes to tcp */
	char pad[65536];
};

static inline uint64_t
fs_rand(struct fs_ctx *x)
{
	/* xorshift64*: the mix and prices only need to be reproducible */
	x->rng ^= x->rng >> 12;
	x->rng ^= x->rng << 25;
	x->rng ^= x->rng >> 27;
	return x->rng * 0x2545f4914f6cdd1dull;
}

static inline void
fs_flush(struct fs_ctx *x)
{
	lcp_obuf_flush(x->st, &x->tx);
}

static inline void
fs_tx(struct fs_ctx *x, struct rte_mbuf *m)
{
	lcp_obuf_put(x->st, &x->tx, m);
}

static inline struct rte_mbuf *
fs_mbuf(struct fs_ctx *x, struct rte_mempool *mp, uint32_t conn, unsigned cmd)
{
	RTE_SET_USED(x);
	return lcp_stream_mbuf(mp, cmd, conn, 0);
}

/* the head of feedsim's own tick: {"s":"SYM<5 digits>","n":<n> (feedsim_tx.c
 * writes the rest; the prerendered stream is made the same way) */
static inline char *
fs_tick_head(char *p, uint32_t sym, uint64_t n)
{
	memcpy(p, "{\"s\":\"SYM", 9);
	p += 9;
	for (int d = 10000; d > 0; d /= 10)
		*p++ = (char)('0' + sym / (uint32_t)d % 10);
	memcpy(p, "\",\"n\":", 6);
	p += 6;
	return u64dec(p, n);
}

static inline uint64_t
fs_now_ns(const struct fs_ctx *x)
{
	return x->ns0 + (uint64_t)((double)(rte_rdtsc() - x->tsc0) * 1e9 / (double)x->hz);
}

/* feedsim.c */
void fs_drop(struct fs_ctx *x, struct fs_client *k);
void fs_tls_failed(struct fs_ctx *x, struct fs_client *k);

/* feedsim_tx.c */
extern const struct stk_tls_ops fs_tls_ops;
extern const struct stk_wss_ops fs_wss_ops;
void fs_cmd(struct fs_ctx *x, uint32_t conn, unsigned cmd);
void fs_close(struct fs_ctx *x, struct fs_client *k);
void fs_put_ctl(struct fs_ctx *x, struct fs_client *k, const void *src, size_t n);
void fs_push(struct fs_ctx *x, struct fs_client *k);
uint32_t fs_size(struct fs_ctx *x);
void fs_publish(struct fs_ctx *x);
void fs_venue_ctl(struct fs_ctx *x, struct fs_client *k, const char *p, size_t n);
unsigned fs_poll(struct lcp_stage *st, void *ctx);

/* feedsim_config.c */
extern const struct lcp_opt fs_opts[];
int fs_validate(const void *conf, char *msg, size_t msglen);
int fs_init(struct lcp_stage *st, const void *conf, void **ctx);
void fs_fini(struct lcp_stage *st, void *ctx);

#endif
