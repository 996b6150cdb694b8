/* SPDX-License-Identifier: BSD-3-Clause
 * tick_src — test-only `msg` source for the metrics stage (tests/run/metrics.sh):
 * emits `count` messages on "out", most of them exchange ticks over `symbols`
 * symbols in the exchange simulator's format,
 *   {"s":"SYM0003","n":17,"p":"101.25","q":300,"t":1764489600000000017}
 * with what metrics must find injected at known places, and counts what it
 * injected so that a test can compare exactly:
 *
 *   message i (0-based) is                      counted under
 *   a non-tick, if non_tick_every divides i+1   non_ticks
 *   else a malformed tick ("n":-5), if bad_every divides i+1    bad_ticks
 *   else a tick of symbol j = i % symbols, on connection j % conns:
 *     the symbol's first tick: n = first_seq    symbols_started
 *     a duplicate (n = the symbol's last n), if dup_every divides i+1
 *                                               injected_dups
 *     a gap (n = last + 1 + gap_size), if gap_every divides i+1
 *                                               injected_gaps (+= gap_size),
 *                                               injected_gap_events
 *     otherwise n = last + 1
 * Every message: msgs, bytes, and per connection conn<c>_msgs / conn<c>_bytes
 * (c < 8; conn_hi_* above). rx_tsc = rte_rdtsc() when the message is made, or 0
 * if no_tsc_every divides i+1 (no_tsc).
 *
 * layout "mixed" rotates three forms of a tick: compact, the fields in reverse
 * order, and blanks around the colons after a string that holds escaped
 * "s"/"n" keys, an odd number of escaped quotes and an escaped backslash before
 * its closing quote (a scan that ignores escapes, or gets them wrong, loses the
 * real fields after it). pad adds ,"x":"aaa…" of that many bytes before the closing brace.
 *
 * The msgs come from the stage's own rte_mempool (no cache, so the in-use count
 * is exact); release() puts them back from whichever lcore frees them. An empty
 * pool makes the stage wait (pool_empty), never drop. When all are sent it asks
 * the engine to stop (stop_when_done). At fini a pool with messages still out is
 * counted (in_use_at_fini), logged, and left allocated, so that the engine's
 * mempool check reports the leak as well.
 *
 * Built only for `make check` (tests/run.mk), against the SDK headers only.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include <rte_cycles.h>
#include <rte_malloc.h>
#include <rte_mempool.h>

#include <lcp/lcp.h>

#include "test_plugin.h"

static const struct lcp_port_def tick_src_ports[] = {
	{ .name = "out", .dir = LCP_PORT_OUT, .unit = LCP_UNIT_MSG,
	  .flags = LCP_PORT_F_REQUIRED, .doc = "the generated messages" },
	LCP_PORT_END,
};

#define TS_CONNS_NAMED 8

#define TS_CONN(X, i) X(CONN##i##_MSGS, "conn" #i "_msgs") X(CONN##i##_BYTES, "conn" #i "_bytes")
#define TICK_SRC_COUNTERS(X)                                                   \
	X(MSGS, "msgs")                                                        \
	X(BYTES, "bytes")                                                      \
	X(TICKS, "ticks")                                                      \
	X(NON_TICKS, "non_ticks")                                              \
	X(BAD_TICKS, "bad_ticks")                                              \
	X(SYMBOLS_STARTED, "symbols_started")                                  \
	X(INJECTED_GAPS, "injected_gaps")                                      \
	X(INJECTED_GAP_EVENTS, "injected_gap_events")                          \
	X(INJECTED_DUPS, "injected_dups")                                      \
	X(NO_TSC, "no_tsc")                                                    \
	X(POOL_EMPTY, "pool_empty")                                            \
	X(IN_USE_AT_FINI, "in_use_at_fini")                                    \
	TS_CONN(X, 0) TS_CONN(X, 1) TS_CONN(X, 2) TS_CONN(X, 3)                \
	TS_CONN(X, 4) TS_CONN(X, 5) TS_CONN(X, 6) TS_CONN(X, 7)                \
	X(CONN_HI_MSGS, "conn_hi_msgs")                                        \
	X(CONN_HI_BYTES, "conn_hi_bytes")

enum {
#define X(e, s) TS_##e,
	TICK_SRC_COUNTERS(X)
#undef X
	TS_N_COUNTERS
};

static const char *const tick_src_counters[] = { TICK_SRC_COUNTERS(LCP_COUNTER_NAME) NULL };

#define TS_PAD_MAX 8192
#define TS_BODY_MAX 512 /* a tick without its padding fits */
#define TS_BURST_MAX 256

static const char *const ts_layouts[] = { "compact", "mixed", NULL };
enum { TS_COMPACT, TS_MIXED };

struct tick_src_conf {
	uint64_t count;
	uint32_t symbols;
	uint32_t conns;
	uint64_t first_seq;
	uint32_t gap_every, gap_size, dup_every;
	uint32_t non_tick_every, bad_every, no_tsc_every;
	uint32_t pad;
	int layout;
	const char *symbol_field;
	const char *seq_field;
	const char *symbol_prefix;
	uint32_t burst;
	uint32_t pool;
	bool stop_when_done;
	bool produce_while_stopping;
};

static const struct lcp_opt tick_src_opts[] = {
	LCP_OPT_UINT(struct tick_src_conf, count, "count", "10000", 1, INT64_MAX, 0,
		     "messages to send"),
	LCP_OPT_UINT(struct tick_src_conf, symbols, "symbols", "16", 1, 65536, 0,
		     "symbols SYM0000.., ticks round-robin over them"),
	LCP_OPT_UINT(struct tick_src_conf, conns, "conns", "1", 1, 1024, 0,
		     "connection ids; symbol j is on connection j % conns"),
	LCP_OPT_UINT(struct tick_src_conf, first_seq, "first_seq", "1", 0, INT64_MAX / 2, 0,
		     "sequence number of each symbol's first tick"),
	LCP_OPT_UINT(struct tick_src_conf, gap_every, "gap_every", "0", 0, UINT32_MAX, 0,
		     "message i is a gap of gap_size if gap_every divides i+1 (0 = never)"),
	LCP_OPT_UINT(struct tick_src_conf, gap_size, "gap_size", "1", 1, 1000000, 0,
		     "sequence numbers skipped by each injected gap"),
	LCP_OPT_UINT(struct tick_src_conf, dup_every, "dup_every", "0", 0, UINT32_MAX, 0,
		     "message i repeats its symbol's last sequence number if dup_every divides i+1 (0 = never)"),
	LCP_OPT_UINT(struct tick_src_conf, non_tick_every, "non_tick_every", "0", 0, UINT32_MAX, 0,
		     "message i is not a tick if non_tick_every divides i+1 (0 = never)"),
	LCP_OPT_UINT(struct tick_src_conf, bad_every, "bad_every", "0", 0, UINT32_MAX, 0,
		     "message i is a tick with a negative sequence number if bad_every divides i+1 (0 = never)"),
	LCP_OPT_UINT(struct tick_src_conf, no_tsc_every, "no_tsc_every", "0", 0, UINT32_MAX, 0,
		     "message i has rx_tsc 0 if no_tsc_every divides i+1 (0 = never)"),
	LCP_OPT_UINT(struct tick_src_conf, pad, "pad", "0", 0, TS_PAD_MAX, 0,
		     "bytes of padding (\"x\":\"aaa…\") after the fields"),
	LCP_OPT_ENUM(struct tick_src_conf, layout, "layout", "\"compact\"", ts_layouts, 0,
		     "compact: the simulator's form; mixed: also reordered fields, blanks, escaped traps"),
	LCP_OPT_STRING(struct tick_src_conf, symbol_field, "symbol_field", "\"s\"", 1, 31, 0,
		       "key of the symbol"),
	LCP_OPT_STRING(struct tick_src_conf, seq_field, "seq_field", "\"n\"", 1, 31, 0,
		       "key of the sequence number"),
	LCP_OPT_STRING(struct tick_src_conf, symbol_prefix, "symbol_prefix", "\"SYM\"", 1, 27, 0,
		       "symbols are this prefix and 4 digits (a long prefix: symbols that share their first 16 bytes and more)"),
	LCP_OPT_UINT(struct tick_src_conf, burst, "burst", "32", 1, TS_BURST_MAX, 0,
		     "messages per poll"),
	LCP_OPT_UINT(struct tick_src_conf, pool, "pool", "4096", 64, 1 << 20, 0,
		     "msg objects in the stage's pool"),
	LCP_OPT_BOOL(struct tick_src_conf, stop_when_done, "stop_when_done", "true",
		     "ask the engine to stop once every message is sent"),
	LCP_OPT_BOOL(struct tick_src_conf, produce_while_stopping, "produce_while_stopping", "false",
		     "keep emitting after the engine starts to stop (a source that ignores lcp_stage_stopping(), for shutdown tests: what it emits reaches the next stage while stopping, every time)"),
	LCP_OPT_END,
};

struct ts_sym {
	uint64_t last;
	bool started;
};

struct tick_src_ctx {
	struct tick_src_conf c;
	struct rte_mempool *pool;
	struct ts_sym *syms;
	uint64_t i; /* next message index */
	bool done;
	char pad[TS_PAD_MAX + 1];
};

static int
tick_src_init(struct lcp_stage *st, const void *conf, void **ctx)
{
	struct tick_src_ctx *x = *ctx;

	x->c = *(const struct tick_src_conf *)conf;
	memset(x->pad, 'a', x->c.pad);
	x->syms = lcp_stage_zmalloc(st, "the symbols", x->c.symbols * sizeof(*x->syms));
	if (x->syms != NULL)
		x->pool = tp_msg_pool_create(st, "tks_", x->c.pool, TS_BODY_MAX + x->c.pad);
	if (x->syms == NULL || x->pool == NULL) {
		rte_mempool_free(x->pool);
		rte_free(x->syms);
		return -ENOMEM;
	}
	return 0;
}

static bool
ts_every(uint32_t every, uint64_t i)
{
	return every != 0 && (i + 1) % every == 0;
}

/* write message i into m; c[] is the per-poll count */
static void
ts_make(struct tick_src_ctx *x, struct tp_msg *m, uint64_t i, uint64_t *c)
{
	const struct tick_src_conf *k = &x->c;
	char *b = (char *)m->data;
	size_t cap = TS_BODY_MAX, n;
	uint32_t j = (uint32_t)(i % k->symbols);
	uint64_t conn = j % k->conns, seq;
	unsigned p_int = 100 + (unsigned)(i % 50), p_frac = (unsigned)(i % 100);
	unsigned q = 100 + (unsigned)(i % 1000);
	uint64_t t = 1764489600000000000ull + i;
	const char *sf = k->symbol_field, *nf = k->seq_field, *sp = k->symbol_prefix;

	if (ts_every(k->non_tick_every, i)) {
		conn = i % k->conns;
		c[TS_NON_TICKS]++;
		if (i % 2 == 0) /* no fields at all */
			n = (size_t)snprintf(b, cap, "{\"type\":\"ack\",\"id\":%" PRIu64 ",\"note\":\"subscribed\"", i);
		else /* a symbol but no sequence number */
			n = (size_t)snprintf(b, cap, "{\"type\":\"status\",\"%s\":\"%s%04" PRIu32 "\",\"state\":\"open\"", sf, sp, j);
	} else if (ts_every(k->bad_every, i)) {
		c[TS_BAD_TICKS]++;
		n = (size_t)snprintf(b, cap, "{\"%s\":\"%s%04" PRIu32 "\",\"%s\":-5,\"p\":\"%u.%02u\"", sf, sp, j, nf, p_int, p_frac);
	} else {
		struct ts_sym *s = &x->syms[j];

		c[TS_TICKS]++;
		if (!s->started) {
			seq = k->first_seq;
			s->started = true;
			c[TS_SYMBOLS_STARTED]++;
		} else if (ts_every(k->dup_every, i)) {
			seq = s->last;
			c[TS_INJECTED_DUPS]++;
		} else if (ts_every(k->gap_every, i)) {
			seq = s->last + 1 + k->gap_size;
			c[TS_INJECTED_GAPS] += k->gap_size;
			c[TS_INJECTED_GAP_EVENTS]++;
		} else {
			seq = s->last + 1;
		}
		s->last = seq;
		switch (k->layout == TS_MIXED ? i % 3 : 0) {
		case 0:
			n = (size_t)snprintf(b, cap, "{\"%s\":\"%s%04" PRIu32 "\",\"%s\":%" PRIu64 ",\"p\":\"%u.%02u\",\"q\":%u,\"t\":%" PRIu64,
					     sf, sp, j, nf, seq, p_int, p_frac, q, t);
			break;
		case 1:
			n = (size_t)snprintf(b, cap, "{\"t\":%" PRIu64 ",\"q\":%u,\"%s\":%" PRIu64 ",\"p\":\"%u.%02u\",\"%s\":\"%s%04" PRIu32 "\"",
					     t, q, nf, seq, p_int, p_frac, sf, sp, j);
			break;
		default:
			n = (size_t)snprintf(b, cap, "{\"e\":\"trade\",\"note\":\"a \\\"%s\\\":\\\"FAKE\\\",\\\"%s\\\":1 \\\"odd trap\\\\\" , \"%s\" : %" PRIu64 " , \"%s\" :\"%s%04" PRIu32 "\",\"p\":\"%u.%02u\"",
					     sf, nf, nf, seq, sf, sp, j, p_int, p_frac);
			break;
		}
	}
	if (k->pad > 0) {
		memcpy(b + n, ",\"x\":\"", 6);
		n += 6;
		memcpy(b + n, x->pad, k->pad);
		n += k->pad;
		b[n++] = '"';
	}
	b[n++] = '}';

	tp_msg_set(m, x->pool, x, conn, ts_every(k->no_tsc_every, i) ? 0 : rte_rdtsc(), (uint32_t)n,
		   1 /* a text message */);
	if (m->pub.rx_tsc == 0)
		c[TS_NO_TSC]++;
	c[TS_MSGS]++;
	c[TS_BYTES] += n;
	if (conn < TS_CONNS_NAMED) {
		c[TS_CONN0_MSGS + 2 * conn]++;
		c[TS_CONN0_BYTES + 2 * conn] += n;
	} else {
		c[TS_CONN_HI_MSGS]++;
		c[TS_CONN_HI_BYTES] += n;
	}
}

static unsigned
tick_src_poll(struct lcp_stage *st, void *ctx)
{
	struct tick_src_ctx *x = ctx;
	void *objs[TS_BURST_MAX];
	uint64_t c[TS_N_COUNTERS] = { 0 };
	unsigned n;

	if (x->done || (lcp_stage_stopping(st) && !x->c.produce_while_stopping))
		return 0;
	n = (unsigned)RTE_MIN((uint64_t)x->c.burst, x->c.count - x->i);
	if (rte_mempool_get_bulk(x->pool, objs, n) != 0) {
		lcp_count(st, TS_POOL_EMPTY, 1);
		return 0;
	}
	for (unsigned k = 0; k < n; k++)
		ts_make(x, objs[k], x->i++, c);
	tp_count_burst(st, c, TS_N_COUNTERS);
	lcp_emit(st, 0, objs, n);
	if (x->i == x->c.count) {
		x->done = true;
		lcp_log(st, LCP_LOG_INFO, "all %" PRIu64 " messages sent", x->c.count);
		if (x->c.stop_when_done)
			lcp_stage_request_stop(st, "tick_src: all messages sent");
	}
	return n;
}

static void
tick_src_fini(struct lcp_stage *st, void *ctx)
{
	struct tick_src_ctx *x = ctx;
	unsigned in_use = tp_msg_pool_fini(st, x->pool);

	if (in_use != 0)
		lcp_count(st, TS_IN_USE_AT_FINI, in_use);
	rte_free(x->syms);
}

static const struct lcp_stage_ops tick_src_ops = {
	.ports = tick_src_ports,
	.counters = tick_src_counters,
	.init = tick_src_init,
	.poll = tick_src_poll,
	.fini = tick_src_fini,
	.ctx_size = sizeof(struct tick_src_ctx),
};

LCP_PLUGIN_EXPORT const struct lcp_plugin lcp_plugin_descriptor = {
	LCP_PLUGIN_HEADER(LCP_KIND_STAGE, "tick_src"),
	.version = "1.0.0",
	.summary = "test source: JSON ticks as msgs, with injected gaps, duplicates and non-ticks",
	.options = tick_src_opts,
	.conf_size = sizeof(struct tick_src_conf),
	.ops = &tick_src_ops,
};
