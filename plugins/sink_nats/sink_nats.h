/* SPDX-License-Identifier: BSD-3-Clause
 * sink_nats.h — what the sink_nats stage's files share: the limits, the counters,
 * the options (struct sink_nats_conf), the compiled subject template, the state
 * libnats's threads touch (struct sn_shared), the context, and the entry points
 * each file gives the others.
 *
 *   sink_nats.c         the per-message path: subject, message id, publish (core
 *                       or JetStream), acks and retries, poll; the descriptor
 *   sink_nats_config.c  the option table, subject templates and paths compiled,
 *                       validate
 *   sink_nats_conn.c    libnats's callbacks, init, start (connect), stop (flush,
 *                       wait for acks), teardown, fini
 */
#ifndef LCP_PLUGIN_SINK_NATS_H
#define LCP_PLUGIN_SINK_NATS_H

#include <sched.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <nats/nats.h>

#include <lcp/lcp.h>

#include "metrics_json.h"

#define SN_SUBJ_MAX 1024u    /* bytes of a subject, NUL included */
#define SN_SYM_MAX 128u      /* bytes of a symbol token */
#define SN_VENUE_MAX 64u     /* bytes of the venue */
#define SN_SEQ_MAX 32u       /* bytes of the sequence in a message id */
#define SN_ID_MAX (SN_VENUE_MAX + SN_SYM_MAX + SN_SEQ_MAX + 3u)
#define SN_TPL_SEGS 32u      /* pieces of a compiled template */
#define SN_TPL_PH_MAX 8u     /* placeholders in a template */
#define SN_CONN_DIGITS 20u
#define SN_ERR_LOG_MAX 3u    /* errors logged one by one per reason, then counted only */
#define SN_ACK_BURST 64u
#define SN_JS_SLACK 16     /* libnats's MaxPending above max_pending */
#define SN_TEARDOWN_WAIT_MS 2000u

#define SINK_NATS_COUNTERS(X)                                                  \
	X(MSGS, "msgs")                                                        \
	X(BYTES, "bytes")                                                      \
	X(FALLBACK, "fallback")                                                \
	X(SANITIZED, "sanitized")                                              \
	X(NO_MSG_ID, "no_msg_id")                                              \
	X(ACKS, "acks")                                                        \
	X(ACKS_DUPLICATE, "acks_duplicate")                                    \
	X(ACK_ERRORS, "ack_errors")                                            \
	X(ACK_RETRIES, "ack_retries")                                          \
	X(ACK_FAILED, "ack_failed")                                            \
	X(UNACKED_AT_STOP, "unacked_at_stop")                                  \
	X(UNFLUSHED_AT_STOP, "unflushed_at_stop")                              \
	X(CONNECTS, "connects")                                                \
	X(DISCONNECTS, "disconnects")                                          \
	X(RECONNECTS, "reconnects")                                            \
	X(ASYNC_ERRORS, "async_errors")                                        \
	X(DROP_NO_SYMBOL, "drop_no_symbol")                                    \
	X(DROP_PENDING_FULL, "drop_pending_full")                              \
	X(DROP_NOT_CONNECTED, "drop_not_connected")                            \
	X(DROP_CLOSED, "drop_closed")                                          \
	X(DROP_TOO_BIG, "drop_too_big")                                        \
	X(DROP_PUBLISH_ERROR, "drop_publish_error")
enum {
#define X(e, s) SN_C_##e,
	SINK_NATS_COUNTERS(X)
#undef X
	SN_C_N
};

enum { SN_FULL_DROP, SN_FULL_BLOCK };
/* the choices of on_full, NULL-terminated (sink_nats_config.c) */
extern const char *const sink_nats_on_full[];

struct sink_nats_conf {
	const char *url;
	const char *name;
	const char *subject;
	const char *venue;
	const char *symbol_field;
	const char *fallback_subject;
	bool jetstream;
	const char *seq_field;
	uint32_t max_pending;
	uint32_t ack_timeout_ms;
	uint32_t ack_retries;
	int on_full;
	uint32_t block_us;
	uint32_t reconnect_buf_bytes;
	int32_t max_reconnect;
	uint32_t reconnect_wait_ms;
	uint32_t connect_timeout_ms;
	bool retry_on_failed_connect;
	uint32_t write_deadline_ms;
	uint32_t flush_timeout_ms;
};

/* ---- subject templates ---- */

enum { SN_T_LIT, SN_T_SYMBOL, SN_T_CONN };

struct sn_tpl {
	unsigned n;
	struct {
		uint8_t kind;
		uint16_t off, len; /* SN_T_LIT: text in lit[] */
	} seg[SN_TPL_SEGS];
	char lit[SN_SUBJ_MAX];
	unsigned lit_len;
	bool has_symbol, has_conn;
	size_t worst; /* longest subject it can make, NUL excluded */
};

/* ---- what libnats threads touch ---- */

enum { SN_ACK_OK, SN_ACK_DUP, SN_ACK_ERR, SN_ACK_TIMEOUT };

struct sn_ack {
	natsMsg *m;
	uint32_t outcome;
	int32_t code;
};

struct sn_shared {
	struct lcp_stage *st;
	char *url;            /* the url option, for log lines (a copy: this may outlive the conf) */
	struct rte_ring *acks; /* JetStream completions, MP/SC */
	uint32_t dead;        /* teardown: callbacks return at once */
	uint32_t in_cb;       /* callbacks running */
	uint32_t closed_seen; /* libnats's closed callback ran: no callback follows */
	uint32_t tearing;     /* our own close: the closed callback is expected */
	uint32_t reconnect_wait_ms;
	int32_t max_reconnect;
	uint32_t reconnect_buf;
	uint64_t connects, disconnects, reconnects, async_errors, ack_lost; /* atomics */
	uint32_t ack_logs, err_logs;
};

/* ---- the context ---- */

struct sn_try {
	natsMsg *m;
	uint32_t tries;
};

struct sink_nats_ctx {
	struct lcp_stage *st;
	const struct sink_nats_conf *c;
	struct sn_shared *sh;
	struct rte_ring *acks; /* sh->acks, freed here */
	natsOptions *opts;
	natsConnection *nc;
	jsCtx *js;
	bool torn_down;
	struct sn_tpl tpl, fb;
	bool has_fb;
	struct metrics_json_paths ps;
	unsigned slot[2]; /* symbol, seq */
	char venue[SN_VENUE_MAX + 1];
	size_t venue_len;
	uint64_t block_tsc;
	/* JetStream */
	uint64_t sent, done; /* attempts published, completions handled (lcore) */
	struct sn_try *tries;
	uint32_t tries_mask;
	bool js_started;
	cpu_set_t ctl_cpus; /* the control thread's CPUs (start), lent for the first js publish */
	bool have_ctl_cpus;
	/* core: messages published while the connection was not up (they are in
	 * libnats's reconnect buffer until it is) */
	uint64_t down_pending;
	/* what poll() last turned into counters */
	uint64_t seen_connects, seen_disconnects, seen_reconnects, seen_async, seen_ack_lost;
	uint64_t next_sync;
	/* totals for log lines (counters are write-only for a plugin) */
	uint64_t t[SN_C_N];
	unsigned logged[SN_C_N];
};

static inline void
sn_count(struct sink_nats_ctx *x, unsigned c, uint64_t v)
{
	lcp_count(x->st, c, v);
	x->t[c] += v;
}

/* attempts in flight: published, completion not handled yet */
static inline uint64_t
sn_js_inflight(const struct sink_nats_ctx *x)
{
	return x->sent - x->done - __atomic_load_n(&x->sh->ack_lost, __ATOMIC_RELAXED);
}

/* sink_nats_config.c */
extern const struct lcp_opt sink_nats_opts[];
int sink_nats_validate(const void *conf, char *msg, size_t msglen);
int sn_tpl_compile(struct sn_tpl *t, const char *what, const char *s, const char *venue, bool allow_symbol,
		   char *err, size_t errlen);
int sn_paths_compile(struct metrics_json_paths *ps, const struct sink_nats_conf *c, unsigned slot[2], char *err,
		     size_t errlen);

/* sink_nats.c: the try table, the ack ring's drain, the callbacks' counts */
uint32_t sn_try_take(struct sink_nats_ctx *x, const natsMsg *m);
unsigned sn_js_drain(struct sink_nats_ctx *x, bool may_retry);
void sn_sync_counters(struct sink_nats_ctx *x);

/* sink_nats_conn.c */
int sink_nats_init(struct lcp_stage *st, const void *conf, void **ctx);
int sink_nats_start(struct lcp_stage *st, void *ctx);
void sink_nats_stop(struct lcp_stage *st, void *ctx);
void sink_nats_fini(struct lcp_stage *st, void *ctx);

#endif
