/* SPDX-License-Identifier: BSD-3-Clause
 * sink_nats — publish `msg` objects (market-data ticks from ws / metrics, or any
 * msg producer) to NATS, core or JetStream, through libnats (the NATS C client),
 * then free them. doc/nats.md is the user's page; this is the map of the code.
 *
 * Subject: the template option `subject` ("md.{venue}.{symbol}") compiled at init
 * into literal pieces and placeholders: {venue} (the option, folded into the
 * literal text), {symbol} (the value at the JSON path `symbol_field`, captured by
 * the metrics stage's path walk, plugins/metrics/metrics_json.c) and {conn} (the
 * msg's conn_id in decimal). A symbol is written into its token with every byte
 * NATS does not allow inside a token (whitespace, control bytes, DEL, '.', '*',
 * '>') replaced by '_' (counted once per message under `sanitized`). A message
 * without a usable symbol (missing, not a string or number, empty or longer than
 * SN_SYM_MAX bytes) goes to `fallback_subject` if set (`fallback`), else it is
 * dropped under `drop_no_symbol`.
 *
 * Core NATS (jetstream false): natsConnection_Publish() copies the message into
 * libnats's buffer, written out by its flusher thread; while the connection is
 * down, into its reconnect buffer (reconnect_buf_bytes), sent on reconnect.
 * Publishing into a full reconnect buffer fails: on_full "drop" counts
 * drop_pending_full at once, "block" retries for block_us, then drops. The
 * socket has a write deadline (write_deadline_ms), so a publish that must write
 * (buffer full while connected) never waits longer than that on a stuck server.
 * stop() flushes (PING/PONG) within flush_timeout_ms; if the connection is down
 * then, the messages published since it went down (still in the reconnect buffer,
 * counted on the lcore from natsConnection_Status() at each publish) are counted
 * under unflushed_at_stop.
 *
 * JetStream (jetstream true): each message becomes a natsMsg with a Nats-Msg-Id
 * header "<venue>.<symbol>.<seq>" (seq at the JSON path seq_field; without one
 * the message goes without an id, counted under no_msg_id) and is published with
 * js_PublishMsgAsync(). At most max_pending are in flight (published, outcome not
 * yet handled by the lcore): on_full as above. The ack handler runs on a libnats
 * thread: it only pushes {msg, outcome} into an MP/SC ring (sn_ack) that the
 * stage's lcore drains in poll(): acks and duplicates are counted and the natsMsg
 * destroyed; an error or a timeout (no ack within ack_timeout_ms) is retried with
 * the same natsMsg (same id: the server drops it if the first one had arrived)
 * up to ack_retries times, then counted under ack_failed. A small open-addressing
 * table keyed by natsMsg pointer (lcore only) holds the tries of retried messages.
 * Every message published ends in exactly one of acks, acks_duplicate,
 * ack_failed, unacked_at_stop. stop() keeps draining and retrying, waiting in
 * js_PublishAsyncComplete() slices, until nothing is in flight or
 * flush_timeout_ms passed, then takes what is still pending back from libnats
 * (js_PublishAsyncGetPendingList) and counts it under unacked_at_stop.
 *
 * Threads: libnats's connection threads inherit the CPU affinity of the thread
 * that connects (start(), the control thread); the ack subscription's dispatcher
 * thread is created at the first async publish, on the lcore, which therefore
 * borrows the control thread's affinity for that one call (sn_js_publish).
 * Connection callbacks (connected, disconnected, reconnected, closed, async
 * error) run on libnats's callback thread: they bump atomics in struct sn_shared
 * and log (lcp_log is safe from any thread); poll() turns the atomics into
 * counters. sn_shared is heap memory that outlives the context until libnats's
 * closed callback (the last one of a connection) has run; callbacks enter through
 * sn_cb_enter(), which refuses once teardown marked it dead.
 *
 * nats_Close() is never called: it is process-wide, and several sink_nats stages
 * (or other libnats users) can share the process.
 *
 * Entry points: sink_nats_validate (templates, paths, option combinations;
 * sink_nats_config.c), sink_nats_init (templates, paths, ring, table; no I/O),
 * sink_nats_start (connect), sink_nats_stop (flush, wait for acks, tear down),
 * sink_nats_fini (tear down if stop did not, free) in sink_nats_conn.c; here
 * sink_nats_process (subject, publish, free) and sink_nats_poll (acks, retries,
 * counters). */
#include <inttypes.h>
#include <limits.h>
#include <pthread.h>
#include <string.h>

#include <rte_branch_prediction.h>
#include <rte_common.h>
#include <rte_cycles.h>
#include <rte_pause.h>
#include <rte_ring.h>
#include <rte_ring_elem.h>

#include "sink_nats.h"

/* ---- ports, counters ---- */

enum { SN_IN };

static const struct lcp_port_def sink_nats_ports[] = {
	[SN_IN] = { .name = "msg", .dir = LCP_PORT_IN, .unit = LCP_UNIT_MSG, .flags = LCP_PORT_F_REQUIRED,
		    .doc = "messages to publish (payload as is), then free" },
	LCP_PORT_END,
};

static const char *const sink_nats_counters[] = { SINK_NATS_COUNTERS(LCP_COUNTER_NAME) NULL };

/* ---- subject and message id ---- */

/* the symbol's bytes into a token: bytes NATS refuses become '_' */
static const uint8_t sn_tok_map[256] = {
	[0x00 ... 0x20] = '_', [0x7f] = '_', ['.'] = '_', ['*'] = '_', ['>'] = '_',
};

/* write the symbol token at o; returns true if a byte was replaced */
static inline bool
sn_put_symbol(char *o, const uint8_t *sym, uint32_t len)
{
	bool repl = false;

	for (uint32_t i = 0; i < len; i++) {
		uint8_t c = sym[i], r = sn_tok_map[c];

		o[i] = (char)(r != 0 ? r : c);
		repl |= r != 0;
	}
	return repl;
}

static inline size_t
sn_put_u64(char *o, uint64_t v)
{
	char tmp[SN_CONN_DIGITS];
	size_t n = 0;

	do {
		tmp[n++] = (char)('0' + v % 10);
		v /= 10;
	} while (v != 0);
	for (size_t i = 0; i < n; i++)
		o[i] = tmp[n - 1 - i];
	return n;
}

/* fill a template into out (SN_SUBJ_MAX bytes): returns the length; *repl set if
 * the symbol had bytes replaced */
static size_t
sn_tpl_fill(const struct sn_tpl *t, char *out, const uint8_t *sym, uint32_t sym_len, uint64_t conn, bool *repl)
{
	size_t o = 0;

	for (unsigned i = 0; i < t->n; i++) {
		switch (t->seg[i].kind) {
		case SN_T_LIT:
			memcpy(out + o, t->lit + t->seg[i].off, t->seg[i].len);
			o += t->seg[i].len;
			break;
		case SN_T_SYMBOL:
			*repl |= sn_put_symbol(out + o, sym, sym_len);
			o += sym_len;
			break;
		default:
			o += sn_put_u64(out + o, conn);
			break;
		}
	}
	out[o] = '\0';
	return o;
}

/* a captured value usable as a token or id: a string, or a number (a literal
 * that starts like one); 1..max bytes */
static inline bool
sn_span_ok(const struct metrics_json_span *sp, uint32_t max)
{
	if (sp->len == 0 || sp->len > max)
		return false;
	if (sp->kind == METRICS_JSON_STRING)
		return true;
	return sp->kind == METRICS_JSON_LITERAL && (sp->p[0] == '-' || (sp->p[0] >= '0' && sp->p[0] <= '9'));
}

/* a drop or error reason: counted, and its first few logged with the reason */
static void
sn_drop_log(struct sink_nats_ctx *x, unsigned c, const char *subj, natsStatus s)
{
	const char *last;

	if (x->logged[c] >= SN_ERR_LOG_MAX)
		return;
	x->logged[c]++;
	last = nats_GetLastError(NULL);
	lcp_log(x->st, LCP_LOG_ERR, "message to %s dropped (%s): %s%s%s%s", subj != NULL ? subj : "?",
		sink_nats_counters[c], natsStatus_GetText(s), last != NULL ? ": " : "", last != NULL ? last : "",
		x->logged[c] == SN_ERR_LOG_MAX ? "; further ones are only counted" : "");
}

/* ---- the try table (JetStream retries), lcore only ---- */

static inline uint32_t
sn_try_hash(const natsMsg *m, uint32_t mask)
{
	uint64_t v = (uint64_t)(uintptr_t)m;

	v ^= v >> 33;
	v *= 0xff51afd7ed558ccdull;
	v ^= v >> 33;
	return (uint32_t)v & mask;
}

/* tries recorded for m (0 if none); removes the entry */
uint32_t
sn_try_take(struct sink_nats_ctx *x, const natsMsg *m)
{
	uint32_t mask = x->tries_mask, i = sn_try_hash(m, mask), j, k, tries;

	while (x->tries[i].m != m) {
		if (x->tries[i].m == NULL)
			return 0;
		i = (i + 1) & mask;
	}
	tries = x->tries[i].tries;
	/* backward-shift deletion: no tombstones */
	j = i;
	for (;;) {
		j = (j + 1) & mask;
		if (x->tries[j].m == NULL)
			break;
		k = sn_try_hash(x->tries[j].m, mask);
		if ((j > i && (k <= i || k > j)) || (j < i && k <= i && k > j)) {
			x->tries[i] = x->tries[j];
			i = j;
		}
	}
	x->tries[i].m = NULL;
	return tries;
}

static void
sn_try_put(struct sink_nats_ctx *x, natsMsg *m, uint32_t tries)
{
	uint32_t mask = x->tries_mask, i = sn_try_hash(m, mask);

	while (x->tries[i].m != NULL && x->tries[i].m != m)
		i = (i + 1) & mask;
	x->tries[i].m = m;
	x->tries[i].tries = tries;
}

/* ---- publishing ---- */

/* js_PublishMsgAsync; the first call on this lcore creates libnats's ack
 * subscription and its dispatcher thread, which inherits the calling thread's
 * affinity: lend it the control thread's CPUs for that call */
static natsStatus
sn_js_publish(struct sink_nats_ctx *x, natsMsg **m)
{
	jsPubOptions po;
	natsStatus s;

	jsPubOptions_Init(&po);
	po.MaxWait = x->c->ack_timeout_ms;
	if (likely(x->js_started))
		return js_PublishMsgAsync(x->js, m, &po);
	{
		pthread_t self = pthread_self();
		cpu_set_t mine;
		bool moved = x->have_ctl_cpus && pthread_getaffinity_np(self, sizeof(mine), &mine) == 0 &&
			     pthread_setaffinity_np(self, sizeof(x->ctl_cpus), &x->ctl_cpus) == 0;

		s = js_PublishMsgAsync(x->js, m, &po);
		if (moved)
			pthread_setaffinity_np(self, sizeof(mine), &mine);
	}
	x->js_started = true;
	return s;
}

/* handle up to `max` completions: count, destroy, retry. Returns how many. */
unsigned
sn_js_drain(struct sink_nats_ctx *x, bool may_retry)
{
	struct sn_ack a[SN_ACK_BURST];
	unsigned n = rte_ring_sc_dequeue_burst_elem(x->sh->acks, a, sizeof(a[0]), SN_ACK_BURST, NULL);

	for (unsigned i = 0; i < n; i++) {
		natsMsg *m = a[i].m;
		uint32_t tries = sn_try_take(x, m);

		x->done++;
		if (a[i].outcome == SN_ACK_OK || a[i].outcome == SN_ACK_DUP) {
			sn_count(x, a[i].outcome == SN_ACK_OK ? SN_C_ACKS : SN_C_ACKS_DUPLICATE, 1);
			natsMsg_Destroy(m);
			continue;
		}
		sn_count(x, SN_C_ACK_ERRORS, 1);
		if (tries >= x->c->ack_retries) {
			sn_count(x, SN_C_ACK_FAILED, 1);
			natsMsg_Destroy(m);
			continue;
		}
		if (!may_retry) {
			sn_count(x, SN_C_UNACKED_AT_STOP, 1);
			natsMsg_Destroy(m);
			continue;
		}
		{
			natsMsg *r = m;
			natsStatus s = sn_js_publish(x, &r);

			if (s == NATS_OK) {
				sn_count(x, SN_C_ACK_RETRIES, 1);
				sn_try_put(x, m, tries + 1);
				x->sent++;
			} else {
				sn_count(x, SN_C_ACK_FAILED, 1);
				if (x->logged[SN_C_ACK_FAILED] < SN_ERR_LOG_MAX) {
					x->logged[SN_C_ACK_FAILED]++;
					lcp_log(x->st, LCP_LOG_ERR, "retry of a message to %s failed: %s (ack_failed)",
						natsMsg_GetSubject(r), natsStatus_GetText(s));
				}
				natsMsg_Destroy(r);
			}
		}
	}
	return n;
}

/* turn what libnats's threads counted into counters */
void
sn_sync_counters(struct sink_nats_ctx *x)
{
	struct sn_shared *sh = x->sh;
	uint64_t v;

	if (sh == NULL)
		return;
#define SN_SYNC(field, seen, ctr)                                               \
	v = __atomic_load_n(&sh->field, __ATOMIC_RELAXED);                     \
	if (v != x->seen) {                                                    \
		sn_count(x, ctr, v - x->seen);                                 \
		x->seen = v;                                                   \
	}
	SN_SYNC(connects, seen_connects, SN_C_CONNECTS)
	SN_SYNC(disconnects, seen_disconnects, SN_C_DISCONNECTS)
	SN_SYNC(reconnects, seen_reconnects, SN_C_RECONNECTS)
	SN_SYNC(async_errors, seen_async, SN_C_ASYNC_ERRORS)
	SN_SYNC(ack_lost, seen_ack_lost, SN_C_ACK_FAILED)
#undef SN_SYNC
}

/* map a failed publish to its drop reason */
static unsigned
sn_drop_reason(natsStatus s)
{
	switch (s) {
	case NATS_INSUFFICIENT_BUFFER:
	case NATS_TIMEOUT: /* js: stalled at MaxPending */
		return SN_C_DROP_PENDING_FULL;
	case NATS_CONNECTION_CLOSED:
		return SN_C_DROP_CLOSED;
	case NATS_NO_SERVER_SUPPORT: /* headers before the first connection */
	case NATS_NOT_YET_CONNECTED:
		return SN_C_DROP_NOT_CONNECTED;
	case NATS_MAX_PAYLOAD:
		return SN_C_DROP_TOO_BIG;
	default:
		return SN_C_DROP_PUBLISH_ERROR;
	}
}

static void
sn_publish_core(struct sink_nats_ctx *x, const char *subj, const struct lcp_msg *m)
{
	bool up = natsConnection_Status(x->nc) == NATS_CONN_STATUS_CONNECTED;
	natsStatus s;

	if (up)
		x->down_pending = 0; /* the reconnect buffer went out with the reconnect */
	s = natsConnection_Publish(x->nc, subj, m->data, (int)m->len);
	if (unlikely(s == NATS_INSUFFICIENT_BUFFER && x->c->on_full == SN_FULL_BLOCK)) {
		uint64_t end = rte_rdtsc() + x->block_tsc;

		while (s == NATS_INSUFFICIENT_BUFFER && rte_rdtsc() < end) {
			rte_delay_us_block(10);
			s = natsConnection_Publish(x->nc, subj, m->data, (int)m->len);
		}
		up = natsConnection_Status(x->nc) == NATS_CONN_STATUS_CONNECTED;
	}
	if (likely(s == NATS_OK)) {
		sn_count(x, SN_C_MSGS, 1);
		sn_count(x, SN_C_BYTES, m->len);
		if (!up)
			x->down_pending++;
		return;
	}
	{
		unsigned r = sn_drop_reason(s);

		sn_count(x, r, 1);
		sn_drop_log(x, r, subj, s);
	}
}

static void
sn_publish_js(struct sink_nats_ctx *x, const char *subj, const struct lcp_msg *m, const char *id)
{
	natsMsg *nm = NULL;
	natsStatus s;
	unsigned r;

	if (unlikely(sn_js_inflight(x) >= x->c->max_pending)) {
		sn_js_drain(x, true);
		if (x->c->on_full == SN_FULL_BLOCK) {
			uint64_t end = rte_rdtsc() + x->block_tsc;

			while (sn_js_inflight(x) >= x->c->max_pending && rte_rdtsc() < end) {
				if (sn_js_drain(x, true) == 0)
					rte_pause();
			}
		}
		if (sn_js_inflight(x) >= x->c->max_pending) {
			sn_count(x, SN_C_DROP_PENDING_FULL, 1);
			if (x->logged[SN_C_DROP_PENDING_FULL] < SN_ERR_LOG_MAX) {
				x->logged[SN_C_DROP_PENDING_FULL]++;
				lcp_log(x->st, LCP_LOG_ERR,
					"message to %s dropped (drop_pending_full): %" PRIu32
					" messages in flight without an ack (max_pending)%s",
					subj, x->c->max_pending,
					x->logged[SN_C_DROP_PENDING_FULL] == SN_ERR_LOG_MAX ? "; further ones are only counted" : "");
			}
			return;
		}
	}
	s = natsMsg_Create(&nm, subj, NULL, (const char *)m->data, (int)m->len);
	if (s == NATS_OK && id != NULL)
		s = natsMsgHeader_Set(nm, "Nats-Msg-Id", id);
	if (s == NATS_OK)
		s = sn_js_publish(x, &nm);
	natsMsg_Destroy(nm); /* NULL once libnats took it */
	if (likely(s == NATS_OK)) {
		x->sent++;
		sn_count(x, SN_C_MSGS, 1);
		sn_count(x, SN_C_BYTES, m->len);
		if (id == NULL)
			sn_count(x, SN_C_NO_MSG_ID, 1);
		return;
	}
	r = sn_drop_reason(s);
	sn_count(x, r, 1);
	sn_drop_log(x, r, subj, s);
}

static void
sink_nats_process(struct lcp_stage *st, void *ctx, unsigned port, void **objs, unsigned n)
{
	struct sink_nats_ctx *x = ctx;
	struct lcp_msg **msgs = (struct lcp_msg **)objs;
	struct metrics_json_span sp[METRICS_JSON_MAX_PATHS];
	char subj[SN_SUBJ_MAX];
	char id[SN_ID_MAX + 1];

	RTE_SET_USED(port); /* one input port */
	RTE_SET_USED(st);
	if (unlikely(x->nc == NULL)) { /* start did not connect (cannot happen once started) */
		sn_count(x, SN_C_DROP_NOT_CONNECTED, n);
		lcp_msgs_free(msgs, n);
		return;
	}
	for (unsigned i = 0; i < n; i++) {
		const struct lcp_msg *m = msgs[i];
		const struct metrics_json_span *sym = &sp[x->slot[0]], *seq = &sp[x->slot[1]];
		const char *idp = NULL;
		bool repl = false;

		if (unlikely(m->len > (uint32_t)INT_MAX)) {
			sn_count(x, SN_C_DROP_TOO_BIG, 1);
			continue;
		}
		metrics_json_walk(&x->ps, m->data, m->data + m->len, sp);

		if (likely(sn_span_ok(sym, SN_SYM_MAX))) {
			sn_tpl_fill(&x->tpl, subj, sym->p, sym->len, m->conn_id, &repl);
			if (unlikely(repl))
				sn_count(x, SN_C_SANITIZED, 1);
			if (x->js != NULL && sn_span_ok(seq, SN_SEQ_MAX)) {
				size_t o = 0;
				bool seq_ok = true;

				for (uint32_t k = 0; k < seq->len; k++)
					seq_ok &= seq->p[k] > 0x20 && seq->p[k] < 0x7f;
				if (seq_ok) {
					memcpy(id, x->venue, x->venue_len);
					o = x->venue_len;
					id[o++] = '.';
					sn_put_symbol(id + o, sym->p, sym->len);
					o += sym->len;
					id[o++] = '.';
					memcpy(id + o, seq->p, seq->len);
					o += seq->len;
					id[o] = '\0';
					idp = id;
				}
			}
		} else if (x->has_fb) {
			sn_tpl_fill(&x->fb, subj, NULL, 0, m->conn_id, &repl);
			sn_count(x, SN_C_FALLBACK, 1);
		} else {
			sn_count(x, SN_C_DROP_NO_SYMBOL, 1);
			if (x->logged[SN_C_DROP_NO_SYMBOL] < SN_ERR_LOG_MAX) {
				x->logged[SN_C_DROP_NO_SYMBOL]++;
				lcp_log(x->st, LCP_LOG_WARNING,
					"message of %" PRIu32 " bytes on conn %" PRIu64
					" dropped (drop_no_symbol): no usable symbol at \"%s\" (missing, not a string or number, "
					"empty or longer than %u bytes) and no fallback_subject%s",
					m->len, m->conn_id, x->c->symbol_field, SN_SYM_MAX,
					x->logged[SN_C_DROP_NO_SYMBOL] == SN_ERR_LOG_MAX ? "; further ones are only counted" : "");
			}
			continue;
		}
		if (x->js != NULL)
			sn_publish_js(x, subj, m, idp);
		else
			sn_publish_core(x, subj, m);
	}
	lcp_msgs_free(msgs, n);
}

static unsigned
sink_nats_poll(struct lcp_stage *st, void *ctx)
{
	struct sink_nats_ctx *x = ctx;
	unsigned n = 0;
	uint64_t now;

	RTE_SET_USED(st);
	if (x->js != NULL && !x->torn_down)
		n = sn_js_drain(x, true);
	now = rte_rdtsc();
	if (now >= x->next_sync) {
		x->next_sync = now + rte_get_tsc_hz() / 1000;
		sn_sync_counters(x);
	}
	return n;
}

static const struct lcp_stage_ops sink_nats_ops = {
	.ports = sink_nats_ports,
	.counters = sink_nats_counters,
	.validate = sink_nats_validate,
	.init = sink_nats_init,
	.start = sink_nats_start,
	.poll = sink_nats_poll,
	.process = sink_nats_process,
	.stop = sink_nats_stop,
	.fini = sink_nats_fini,
	.ctx_size = sizeof(struct sink_nats_ctx),
};

LCP_PLUGIN_EXPORT const struct lcp_plugin lcp_plugin_descriptor = {
	LCP_PLUGIN_HEADER(LCP_KIND_STAGE, "sink_nats"),
	.version = "1.0.0",
	.summary = "publish msg objects to NATS (core, or JetStream with acks and dedupe ids) on subjects made from "
		   "venue and symbol, then free them",
	.options = sink_nats_opts,
	.conf_size = sizeof(struct sink_nats_conf),
	.ops = &sink_nats_ops,
};
