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
 * Entry points: sink_nats_validate (templates, paths, option combinations),
 * sink_nats_init (templates, paths, ring, table; no I/O), sink_nats_start
 * (connect), sink_nats_process (subject, publish, free), sink_nats_poll (acks,
 * retries, counters), sink_nats_stop (flush, wait for acks, tear down),
 * sink_nats_fini (tear down if stop did not, free). */
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <rte_common.h>
#include <rte_cycles.h>
#include <rte_malloc.h>
#include <rte_pause.h>
#include <rte_ring.h>
#include <rte_ring_elem.h>

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

/* ---- ports, counters, options ---- */

enum { SN_IN };

static const struct lcp_port_def sink_nats_ports[] = {
	[SN_IN] = { .name = "msg", .dir = LCP_PORT_IN, .unit = LCP_UNIT_MSG, .flags = LCP_PORT_F_REQUIRED,
		    .doc = "messages to publish (payload as is), then free" },
	LCP_PORT_END,
};

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
static const char *const sink_nats_counters[] = {
#define X(e, s) s,
	SINK_NATS_COUNTERS(X)
#undef X
	NULL,
};

enum { SN_FULL_DROP, SN_FULL_BLOCK };
static const char *const sink_nats_on_full[] = { "drop", "block", NULL };

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

/* defaults of the JetStream-only and block-only options, as numbers too: a
 * non-default value without jetstream (or without on_full block) is refused */
#define SN_DEF_MAX_PENDING 16384
#define SN_DEF_ACK_TIMEOUT_MS 5000
#define SN_DEF_ACK_RETRIES 2
#define SN_DEF_SEQ_FIELD "n"
#define SN_DEF_BLOCK_US 1000
#define SN_STR_(x) #x
#define SN_STR(x) SN_STR_(x)

#define C struct sink_nats_conf
static const struct lcp_opt sink_nats_opts[] = {
	LCP_OPT_STRING(C, url, "url", "\"nats://127.0.0.1:4222\"", 1, 1023, 0,
		       "NATS server URL, or several separated by commas (nats://host:port; libnats tries them in turn)"),
	LCP_OPT_STRING(C, name, "name", "\"\"", 0, 255, 0,
		       "connection name shown by the server's monitoring; empty: \"lcpipe/<stage name>\""),
	LCP_OPT_STRING(C, subject, "subject", "\"md.{venue}.{symbol}\"", 1, 255, 0,
		       "subject template: literal tokens and {venue}, {symbol} (from symbol_field), {conn} (the msg's conn_id); "
		       "no wildcards, no empty tokens (doc/nats.md)"),
	LCP_OPT_STRING(C, venue, "venue", "\"default\"", 1, SN_VENUE_MAX, 0,
		       "value of {venue}: one subject token (no whitespace, '.', '*' or '>')"),
	LCP_OPT_STRING(C, symbol_field, "symbol_field", "\"s\"", 1, METRICS_JSON_NAME_MAX, 0,
		       "JSON path of the symbol in each message (dotted, as metrics' paths: \"s\", \"data.s\", \"arg.instId\")"),
	LCP_OPT_STRING(C, fallback_subject, "fallback_subject", "\"\"", 0, 255, 0,
		       "subject template ({venue}, {conn}; no {symbol}) for messages without a usable symbol; "
		       "empty: drop them under drop_no_symbol"),
	LCP_OPT_BOOL(C, jetstream, "jetstream", "false",
		     "publish to JetStream: asynchronous publishes, acknowledged by the stream, with a Nats-Msg-Id "
		     "\"<venue>.<symbol>.<seq>\" for deduplication; false: core NATS (at most once)"),
	LCP_OPT_STRING(C, seq_field, "seq_field", "\"" SN_DEF_SEQ_FIELD "\"", 1, METRICS_JSON_NAME_MAX, 0,
		       "jetstream: JSON path of the per-symbol sequence number that makes the message id"),
	LCP_OPT_UINT(C, max_pending, "max_pending", SN_STR(SN_DEF_MAX_PENDING), 1, 1048576, 0,
		     "jetstream: messages in flight at most (published, not yet acknowledged); then on_full"),
	LCP_OPT_UINT(C, ack_timeout_ms, "ack_timeout_ms", SN_STR(SN_DEF_ACK_TIMEOUT_MS), 1, 600000, 0,
		     "jetstream: an ack not back after this many ms is a failed attempt (retried, then ack_failed)"),
	LCP_OPT_UINT(C, ack_retries, "ack_retries", SN_STR(SN_DEF_ACK_RETRIES), 0, 100, 0,
		     "jetstream: publish a message again (same id) this many times after an error or a timeout"),
	LCP_OPT_ENUM(C, on_full, "on_full", "\"drop\"", sink_nats_on_full, 0,
		     "buffer full (core: the reconnect buffer; jetstream: max_pending in flight): drop and count "
		     "drop_pending_full, or block: wait up to block_us for room, then drop and count"),
	LCP_OPT_UINT(C, block_us, "block_us", SN_STR(SN_DEF_BLOCK_US), 1, 1000000, 0,
		     "on_full block: the longest wait for room per message, in microseconds (the lcore waits)"),
	LCP_OPT_UINT(C, reconnect_buf_bytes, "reconnect_buf_bytes", "8388608", 4096, 1073741824, 0,
		     "bytes of publishes libnats keeps while disconnected, sent on reconnect"),
	LCP_OPT_INT(C, max_reconnect, "max_reconnect", "-1", -1, 1000000, 0,
		    "reconnect attempts per server before the connection is closed for good; -1: for ever"),
	LCP_OPT_UINT(C, reconnect_wait_ms, "reconnect_wait_ms", "250", 1, 600000, 0,
		     "wait between two attempts to reach the same server, in ms"),
	LCP_OPT_UINT(C, connect_timeout_ms, "connect_timeout_ms", "2000", 1, 600000, 0,
		     "timeout of one connection attempt, in ms"),
	LCP_OPT_BOOL(C, retry_on_failed_connect, "retry_on_failed_connect", "true",
		     "no server at start: start anyway and keep trying in the background (core publishes are buffered "
		     "meanwhile); false: the run fails at start"),
	LCP_OPT_UINT(C, write_deadline_ms, "write_deadline_ms", "200", 1, 60000, 0,
		     "longest a socket write may wait for a server that does not read; past it the connection is "
		     "dropped and re-established (bounds how long a publish can hold the lcore)"),
	LCP_OPT_UINT(C, flush_timeout_ms, "flush_timeout_ms", "1000", 0, 600000, 0,
		     "stop: the longest wait for the server to confirm what was published (core: a flush; "
		     "jetstream: the outstanding acks); keep it below engine.drain_timeout"),
	LCP_OPT_END,
};
#undef C

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

/* a byte NATS does not allow inside a subject token */
static inline bool
sn_bad_token_byte(uint8_t c)
{
	return c <= 0x20 || c == 0x7f || c == '.' || c == '*' || c == '>';
}

/* venue: one token, checked whole */
static int
sn_check_token(const char *what, const char *v, char *err, size_t errlen)
{
	size_t n = strlen(v);

	if (n == 0) {
		snprintf(err, errlen, "%s is empty", what);
		return -EINVAL;
	}
	for (size_t i = 0; i < n; i++)
		if (sn_bad_token_byte((uint8_t)v[i])) {
			snprintf(err, errlen,
				 "%s \"%s\" is not one NATS subject token: byte %zu (0x%02x) is whitespace, a control byte, "
				 "'.', '*' or '>'",
				 what, v, i, (unsigned)(uint8_t)v[i]);
			return -EINVAL;
		}
	return 0;
}

/* Compile template s of option `what`; {venue} becomes venue's text. {symbol}
 * only if allow_symbol. Returns 0 or -EINVAL with the reason in err. */
static int
sn_tpl_compile(struct sn_tpl *t, const char *what, const char *s, const char *venue, bool allow_symbol,
	       char *err, size_t errlen)
{
	static const struct {
		const char *name;
		int kind; /* -1: venue */
	} ph[] = { { "venue", -1 }, { "symbol", SN_T_SYMBOL }, { "conn", SN_T_CONN } };
	bool tok_empty = true; /* the current token has nothing yet */
	unsigned n_ph = 0;
	const char *p = s;

	memset(t, 0, sizeof(*t));
	if (*p == '\0') {
		snprintf(err, errlen, "%s is empty", what);
		return -EINVAL;
	}
	while (*p != '\0') {
		if (*p == '{') {
			const char *e = strchr(p, '}');
			size_t k;
			int kind = -2;

			if (e == NULL) {
				snprintf(err, errlen, "%s \"%s\": '{' at byte %zu is not closed", what, s, (size_t)(p - s));
				return -EINVAL;
			}
			for (k = 0; k < RTE_DIM(ph); k++)
				if ((size_t)(e - p - 1) == strlen(ph[k].name) && memcmp(p + 1, ph[k].name, (size_t)(e - p - 1)) == 0)
					kind = ph[k].kind;
			if (kind == -2) {
				snprintf(err, errlen, "%s \"%s\": unknown placeholder %.*s (known: {venue}, {symbol}, {conn})",
					 what, s, (int)(e - p + 1), p);
				return -EINVAL;
			}
			if (kind == SN_T_SYMBOL && !allow_symbol) {
				snprintf(err, errlen, "%s \"%s\": {symbol} is not allowed here (this subject is for messages "
					 "without a symbol)", what, s);
				return -EINVAL;
			}
			if (++n_ph > SN_TPL_PH_MAX) {
				snprintf(err, errlen, "%s \"%s\": more than %u placeholders", what, s, SN_TPL_PH_MAX);
				return -EINVAL;
			}
			if (kind == -1) { /* venue: literal text */
				size_t vl = strlen(venue);

				if (t->lit_len + vl >= sizeof(t->lit)) {
					snprintf(err, errlen, "%s \"%s\" is too long with venue \"%s\"", what, s, venue);
					return -EINVAL;
				}
				if (t->n == 0 || t->seg[t->n - 1].kind != SN_T_LIT) {
					if (t->n == SN_TPL_SEGS)
						goto too_many;
					t->seg[t->n].kind = SN_T_LIT;
					t->seg[t->n].off = (uint16_t)t->lit_len;
					t->seg[t->n].len = 0;
					t->n++;
				}
				memcpy(t->lit + t->lit_len, venue, vl);
				t->lit_len += (unsigned)vl;
				t->seg[t->n - 1].len = (uint16_t)(t->seg[t->n - 1].len + vl);
				t->worst += vl;
			} else {
				if (t->n == SN_TPL_SEGS)
					goto too_many;
				t->seg[t->n].kind = (uint8_t)kind;
				t->n++;
				if (kind == SN_T_SYMBOL) {
					t->has_symbol = true;
					t->worst += SN_SYM_MAX;
				} else {
					t->has_conn = true;
					t->worst += SN_CONN_DIGITS;
				}
			}
			tok_empty = false;
			p = e + 1;
			continue;
		}
		if (*p == '}') {
			snprintf(err, errlen, "%s \"%s\": '}' at byte %zu has no '{'", what, s, (size_t)(p - s));
			return -EINVAL;
		}
		if (*p == '.') {
			if (tok_empty) {
				snprintf(err, errlen, "%s \"%s\": empty token at byte %zu (a leading '.' or \"..\")", what, s,
					 (size_t)(p - s));
				return -EINVAL;
			}
			tok_empty = true;
		} else if (sn_bad_token_byte((uint8_t)*p)) {
			snprintf(err, errlen,
				 "%s \"%s\": byte %zu (0x%02x) is not allowed in a subject (whitespace, control bytes and the "
				 "wildcards '*' and '>')",
				 what, s, (size_t)(p - s), (unsigned)(uint8_t)*p);
			return -EINVAL;
		} else {
			tok_empty = false;
		}
		if (t->lit_len + 1 >= sizeof(t->lit))
			goto too_long;
		if (t->n == 0 || t->seg[t->n - 1].kind != SN_T_LIT) {
			if (t->n == SN_TPL_SEGS)
				goto too_many;
			t->seg[t->n].kind = SN_T_LIT;
			t->seg[t->n].off = (uint16_t)t->lit_len;
			t->seg[t->n].len = 0;
			t->n++;
		}
		t->lit[t->lit_len++] = *p;
		t->seg[t->n - 1].len++;
		t->worst++;
		p++;
	}
	if (tok_empty) {
		snprintf(err, errlen, "%s \"%s\": ends with an empty token (a trailing '.')", what, s);
		return -EINVAL;
	}
	if (t->worst >= SN_SUBJ_MAX)
		goto too_long;
	return 0;
too_many:
	snprintf(err, errlen, "%s \"%s\": more than %u pieces", what, s, SN_TPL_SEGS);
	return -EINVAL;
too_long:
	snprintf(err, errlen, "%s \"%s\": subjects could exceed %u bytes", what, s, SN_SUBJ_MAX - 1);
	return -EINVAL;
}

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

/* ---- JSON paths ---- */

/* compile symbol_field (slot 0) and, for JetStream, seq_field (slot 1) */
static int
sn_paths_compile(struct metrics_json_paths *ps, const struct sink_nats_conf *c, unsigned slot[2], char *err,
		 size_t errlen)
{
	const char *paths[2] = { c->symbol_field, c->seq_field };
	unsigned n = c->jetstream ? 2 : 1;
	char e[160];

	if (c->jetstream && strcmp(c->symbol_field, c->seq_field) == 0) {
		snprintf(err, errlen, "seq_field and symbol_field are the same path \"%s\"", c->seq_field);
		return -EINVAL;
	}
	if (metrics_json_compile(ps, paths, n, slot, e, sizeof(e)) != 0) {
		snprintf(err, errlen, "symbol_field \"%s\"%s%s%s: %s", c->symbol_field, c->jetstream ? ", seq_field \"" : "",
			 c->jetstream ? c->seq_field : "", c->jetstream ? "\"" : "", e);
		return -EINVAL;
	}
	if (!c->jetstream)
		slot[1] = slot[0];
	return 0;
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

/* ---- validate ---- */

static int
sink_nats_validate(const void *conf, char *msg, size_t msglen)
{
	const struct sink_nats_conf *c = conf;
	struct metrics_json_paths ps;
	struct sn_tpl t;
	unsigned slot[2];

	if (sn_check_token("venue", c->venue, msg, msglen) != 0)
		return -EINVAL;
	if (sn_tpl_compile(&t, "subject", c->subject, c->venue, true, msg, msglen) != 0)
		return -EINVAL;
	if (c->fallback_subject[0] != '\0') {
		struct sn_tpl f;

		if (!t.has_symbol) {
			snprintf(msg, msglen,
				 "fallback_subject is set but subject \"%s\" has no {symbol}: every message would go to "
				 "subject, fallback_subject never",
				 c->subject);
			return -EINVAL;
		}
		if (sn_tpl_compile(&f, "fallback_subject", c->fallback_subject, c->venue, false, msg, msglen) != 0)
			return -EINVAL;
	}
	if (sn_paths_compile(&ps, c, slot, msg, msglen) != 0)
		return -EINVAL;
	if (!c->jetstream) {
		const char *js_only = NULL;

		if (c->max_pending != SN_DEF_MAX_PENDING)
			js_only = "max_pending";
		else if (c->ack_timeout_ms != SN_DEF_ACK_TIMEOUT_MS)
			js_only = "ack_timeout_ms";
		else if (c->ack_retries != SN_DEF_ACK_RETRIES)
			js_only = "ack_retries";
		else if (strcmp(c->seq_field, SN_DEF_SEQ_FIELD) != 0)
			js_only = "seq_field";
		if (js_only != NULL) {
			snprintf(msg, msglen,
				 "%s applies only with \"jetstream\": true (core NATS has no acks; its buffer is "
				 "reconnect_buf_bytes)",
				 js_only);
			return -EINVAL;
		}
	}
	if (c->on_full != SN_FULL_BLOCK && c->block_us != SN_DEF_BLOCK_US) {
		snprintf(msg, msglen, "block_us applies only with \"on_full\": \"block\"");
		return -EINVAL;
	}
	if (c->retry_on_failed_connect && c->max_reconnect == 0) {
		snprintf(msg, msglen,
			 "retry_on_failed_connect needs reconnect attempts (max_reconnect -1 or > 0), not max_reconnect 0");
		return -EINVAL;
	}
	if (strchr(c->url, ' ') != NULL || strchr(c->url, '\t') != NULL) {
		snprintf(msg, msglen, "url \"%s\" holds whitespace: separate several servers with commas only", c->url);
		return -EINVAL;
	}
	return 0;
}

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

static inline bool
sn_cb_enter(struct sn_shared *sh)
{
	__atomic_add_fetch(&sh->in_cb, 1, __ATOMIC_SEQ_CST);
	if (__atomic_load_n(&sh->dead, __ATOMIC_SEQ_CST)) {
		__atomic_sub_fetch(&sh->in_cb, 1, __ATOMIC_SEQ_CST);
		return false;
	}
	return true;
}

static inline void
sn_cb_leave(struct sn_shared *sh)
{
	__atomic_sub_fetch(&sh->in_cb, 1, __ATOMIC_SEQ_CST);
}

static void
sn_url_now(natsConnection *nc, char *buf, size_t n)
{
	if (natsConnection_GetConnectedUrl(nc, buf, n) != NATS_OK || buf[0] == '\0')
		snprintf(buf, n, "?");
}

/* a connection came (back): count it under ctr and say so ("connected to URL
 * (after retrying)", "reconnected to NATS server URL") */
static void
sn_on_link(natsConnection *nc, struct sn_shared *sh, uint64_t *ctr, bool again)
{
	char url[256];

	if (!sn_cb_enter(sh))
		return;
	__atomic_add_fetch(ctr, 1, __ATOMIC_RELAXED);
	sn_url_now(nc, url, sizeof(url));
	if (again)
		lcp_log(sh->st, LCP_LOG_NOTICE, "reconnected to NATS server %s", url);
	else
		lcp_log(sh->st, LCP_LOG_NOTICE, "connected to %s (after retrying)", url);
	sn_cb_leave(sh);
}

static void
sn_on_connected(natsConnection *nc, void *closure)
{
	struct sn_shared *sh = closure;

	sn_on_link(nc, sh, &sh->connects, false);
}

static void
sn_on_disconnected(natsConnection *nc, void *closure)
{
	struct sn_shared *sh = closure;

	RTE_SET_USED(nc);
	if (!sn_cb_enter(sh))
		return;
	if (!__atomic_load_n(&sh->tearing, __ATOMIC_RELAXED)) { /* not our own close */
		__atomic_add_fetch(&sh->disconnects, 1, __ATOMIC_RELAXED);
		if (sh->max_reconnect < 0)
			lcp_log(sh->st, LCP_LOG_WARNING,
				"disconnected from NATS server %s: reconnecting every %" PRIu32 " ms for ever; up to %" PRIu32
				" bytes of publishes are kept meanwhile",
				sh->url, sh->reconnect_wait_ms, sh->reconnect_buf);
		else
			lcp_log(sh->st, LCP_LOG_WARNING,
				"disconnected from NATS server %s: reconnecting every %" PRIu32 " ms, %" PRId32
				" attempts per server at most; up to %" PRIu32 " bytes of publishes are kept meanwhile",
				sh->url, sh->reconnect_wait_ms, sh->max_reconnect, sh->reconnect_buf);
	}
	sn_cb_leave(sh);
}

static void
sn_on_reconnected(natsConnection *nc, void *closure)
{
	struct sn_shared *sh = closure;

	sn_on_link(nc, sh, &sh->reconnects, true);
}

static void
sn_on_closed(natsConnection *nc, void *closure)
{
	struct sn_shared *sh = closure;

	RTE_SET_USED(nc);
	if (sn_cb_enter(sh)) {
		if (!__atomic_load_n(&sh->tearing, __ATOMIC_RELAXED))
			lcp_log(sh->st, LCP_LOG_ERR,
				"connection to NATS server %s closed for good (reconnect attempts exhausted, max_reconnect %" PRId32
				"): every later message is dropped (drop_closed)",
				sh->url, sh->max_reconnect);
		sn_cb_leave(sh);
	}
	/* the last callback of the connection: teardown may free sh after this */
	__atomic_store_n(&sh->closed_seen, 1, __ATOMIC_RELEASE);
}

static void
sn_on_error(natsConnection *nc, natsSubscription *sub, natsStatus err, void *closure)
{
	struct sn_shared *sh = closure;
	const char *txt = NULL;
	uint32_t k;

	RTE_SET_USED(sub);
	if (!sn_cb_enter(sh))
		return;
	__atomic_add_fetch(&sh->async_errors, 1, __ATOMIC_RELAXED);
	k = __atomic_fetch_add(&sh->err_logs, 1, __ATOMIC_RELAXED);
	if (k < SN_ERR_LOG_MAX) {
		natsConnection_GetLastError(nc, &txt);
		lcp_log(sh->st, LCP_LOG_ERR, "asynchronous error from NATS server %s: %s (%s)%s", sh->url,
			natsStatus_GetText(err), txt != NULL ? txt : "",
			k + 1 == SN_ERR_LOG_MAX ? "; further ones are only counted (async_errors)" : "");
	}
	sn_cb_leave(sh);
}

/* JetStream: an ack, a negative ack or a timeout of one published message. The
 * lcore does everything else; the ring cannot be full (see sn_js_inflight) */
static void
sn_on_ack(jsCtx *js, natsMsg *m, jsPubAck *pa, jsPubAckErr *pae, void *closure)
{
	struct sn_shared *sh = closure;
	struct sn_ack a = { .m = m };
	uint32_t k;

	RTE_SET_USED(js);
	if (!sn_cb_enter(sh)) {
		natsMsg_Destroy(m);
		return;
	}
	if (pa != NULL) {
		a.outcome = pa->Duplicate ? SN_ACK_DUP : SN_ACK_OK;
	} else {
		a.outcome = pae != NULL && pae->Err == NATS_TIMEOUT ? SN_ACK_TIMEOUT : SN_ACK_ERR;
		a.code = pae != NULL ? (int32_t)pae->ErrCode : 0;
		k = __atomic_fetch_add(&sh->ack_logs, 1, __ATOMIC_RELAXED);
		if (k < SN_ERR_LOG_MAX)
			lcp_log(sh->st, LCP_LOG_WARNING,
				"JetStream publish to %s not acknowledged: %s (error code %d); retried up to ack_retries times, "
				"then counted under ack_failed%s",
				natsMsg_GetSubject(m),
				a.outcome == SN_ACK_TIMEOUT ? "no ack within ack_timeout_ms"
				: pae != NULL && pae->ErrText != NULL ? pae->ErrText : "error",
				(int)a.code, k + 1 == SN_ERR_LOG_MAX ? "; further ones are only counted (ack_errors)" : "");
	}
	if (rte_ring_mp_enqueue_elem(sh->acks, &a, sizeof(a)) != 0) {
		/* cannot happen (the ring holds every message in flight); counted */
		__atomic_add_fetch(&sh->ack_lost, 1, __ATOMIC_RELAXED);
		natsMsg_Destroy(m);
	}
	sn_cb_leave(sh);
}

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
static uint32_t
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

/* attempts in flight: published, completion not handled yet */
static inline uint64_t
sn_js_inflight(const struct sink_nats_ctx *x)
{
	return x->sent - x->done - __atomic_load_n(&x->sh->ack_lost, __ATOMIC_RELAXED);
}

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
static unsigned
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
static void
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

/* ---- start, stop, teardown ---- */

static natsStatus
sn_options(struct sink_nats_ctx *x, const char *name)
{
	const struct sink_nats_conf *c = x->c;
	struct sn_shared *sh = x->sh;
	natsStatus s;

	s = natsOptions_Create(&x->opts);
	if (s == NATS_OK)
		s = natsOptions_SetURL(x->opts, c->url);
	if (s == NATS_OK)
		s = natsOptions_SetName(x->opts, name);
	if (s == NATS_OK)
		s = natsOptions_SetTimeout(x->opts, c->connect_timeout_ms);
	if (s == NATS_OK)
		s = natsOptions_SetAllowReconnect(x->opts, true);
	if (s == NATS_OK)
		s = natsOptions_SetMaxReconnect(x->opts, c->max_reconnect);
	if (s == NATS_OK)
		s = natsOptions_SetReconnectWait(x->opts, c->reconnect_wait_ms);
	if (s == NATS_OK)
		s = natsOptions_SetReconnectBufSize(x->opts, (int)c->reconnect_buf_bytes);
	if (s == NATS_OK)
		s = natsOptions_SetWriteDeadline(x->opts, c->write_deadline_ms);
	if (s == NATS_OK)
		s = natsOptions_SetNoEcho(x->opts, true);
	if (s == NATS_OK)
		s = natsOptions_SetRetryOnFailedConnect(x->opts, c->retry_on_failed_connect, sn_on_connected, sh);
	if (s == NATS_OK)
		s = natsOptions_SetDisconnectedCB(x->opts, sn_on_disconnected, sh);
	if (s == NATS_OK)
		s = natsOptions_SetReconnectedCB(x->opts, sn_on_reconnected, sh);
	if (s == NATS_OK)
		s = natsOptions_SetClosedCB(x->opts, sn_on_closed, sh);
	if (s == NATS_OK)
		s = natsOptions_SetErrorHandler(x->opts, sn_on_error, sh);
	return s;
}

static int
sink_nats_start(struct lcp_stage *st, void *ctx)
{
	struct sink_nats_ctx *x = ctx;
	const struct sink_nats_conf *c = x->c;
	char name[300];
	const char *last = NULL;
	natsStatus s;

	x->have_ctl_cpus = pthread_getaffinity_np(pthread_self(), sizeof(x->ctl_cpus), &x->ctl_cpus) == 0;
	if (c->name[0] != '\0')
		snprintf(name, sizeof(name), "%s", c->name);
	else
		snprintf(name, sizeof(name), "lcpipe/%s", lcp_stage_name(st));
	s = sn_options(x, name);
	if (s != NATS_OK) {
		last = nats_GetLastError(NULL);
		lcp_log(st, LCP_LOG_ERR, "cannot set up libnats options for %s: %s%s%s", c->url, natsStatus_GetText(s),
			last != NULL ? ": " : "", last != NULL ? last : "");
		return -EINVAL;
	}
	s = natsConnection_Connect(&x->nc, x->opts);
	if (s == NATS_OK) {
		char url[256];

		__atomic_add_fetch(&x->sh->connects, 1, __ATOMIC_RELAXED);
		sn_url_now(x->nc, url, sizeof(url));
		lcp_log(st, LCP_LOG_INFO, "connected to NATS server %s", url);
	} else if (s == NATS_NOT_YET_CONNECTED) {
		lcp_log(st, LCP_LOG_WARNING,
			"no NATS server at %s yet: starting anyway, retrying every %" PRIu32 " ms in the background; %s",
			c->url, c->reconnect_wait_ms,
			c->jetstream ? "JetStream messages are dropped until connected (drop_not_connected)"
				     : "publishes are kept in the reconnect buffer (reconnect_buf_bytes) meanwhile");
	} else {
		last = nats_GetLastError(NULL);
		lcp_log(st, LCP_LOG_ERR, "cannot connect to NATS server %s: %s%s%s%s", c->url, natsStatus_GetText(s),
			last != NULL ? ": " : "", last != NULL ? last : "",
			c->retry_on_failed_connect ? "" : " (retry_on_failed_connect is false)");
		x->nc = NULL;
		return -ECONNREFUSED;
	}
	if (c->jetstream) {
		jsOptions jo;

		jsOptions_Init(&jo);
		/* the lcore bounds what is in flight itself (sn_js_inflight); libnats's
		 * own count drops a little later (after the ack handler returns), so its
		 * limit, a backstop, has some slack */
		jo.PublishAsync.MaxPending = (int64_t)c->max_pending + SN_JS_SLACK;
		jo.PublishAsync.StallWait = 1;
		jo.PublishAsync.AckHandler = sn_on_ack;
		jo.PublishAsync.AckHandlerClosure = x->sh;
		s = natsConnection_JetStream(&x->js, x->nc, &jo);
		if (s != NATS_OK) {
			last = nats_GetLastError(NULL);
			lcp_log(st, LCP_LOG_ERR, "cannot make a JetStream context on %s: %s%s%s", c->url, natsStatus_GetText(s),
				last != NULL ? ": " : "", last != NULL ? last : "");
			x->js = NULL;
			return -EIO;
		}
	}
	lcp_log(st, LCP_LOG_INFO,
		"publishing to %s as \"%s\" (%s), subject %s, venue %s%s%s%s; on_full %s", c->url, name,
		c->jetstream ? "JetStream" : "core NATS", c->subject, c->venue, x->has_fb ? ", fallback " : "",
		x->has_fb ? c->fallback_subject : "", c->jetstream ? ", ids <venue>.<symbol>.<seq>" : "",
		sink_nats_on_full[c->on_full]);
	return 0;
}

/* wait up to ms for *flag to become nonzero */
static bool
sn_wait_flag(const uint32_t *flag, uint32_t want, unsigned ms)
{
	for (unsigned i = 0; i < ms * 10; i++) {
		if (__atomic_load_n(flag, __ATOMIC_ACQUIRE) == want)
			return true;
		usleep(100);
	}
	return __atomic_load_n(flag, __ATOMIC_ACQUIRE) == want;
}

/* close and destroy everything libnats holds for this stage; count what is
 * still unacknowledged. Idempotent (stop, and fini if stop did not run). */
static void
sn_teardown(struct sink_nats_ctx *x)
{
	struct sn_shared *sh = x->sh;
	bool closed = true;

	if (x->torn_down)
		return;
	x->torn_down = true;
	if (sh != NULL)
		__atomic_store_n(&sh->tearing, 1, __ATOMIC_RELAXED);
	if (x->js != NULL) {
		natsMsgList pend;

		if (js_PublishAsyncGetPendingList(&pend, x->js) == NATS_OK) {
			/* taken back from libnats: their acks, if any come, are ignored */
			for (int i = 0; i < pend.Count; i++)
				if (pend.Msgs[i] != NULL)
					sn_try_take(x, pend.Msgs[i]);
			sn_count(x, SN_C_UNACKED_AT_STOP, (uint64_t)pend.Count);
			x->done += (uint64_t)pend.Count;
			natsMsgList_Destroy(&pend);
		}
		jsCtx_Destroy(x->js);
	}
	if (x->nc != NULL) {
		natsConnection_Close(x->nc);
		natsConnection_Destroy(x->nc);
		closed = sn_wait_flag(&sh->closed_seen, 1, SN_TEARDOWN_WAIT_MS);
	}
	if (x->opts != NULL)
		natsOptions_Destroy(x->opts);
	if (sh != NULL) {
		uint32_t zero = 0;

		__atomic_store_n(&sh->dead, 1, __ATOMIC_SEQ_CST);
		if (!sn_wait_flag(&sh->in_cb, zero, SN_TEARDOWN_WAIT_MS))
			closed = false;
		sn_sync_counters(x);
		if (x->acks != NULL) /* completions that came in before the end */
			while (sn_js_drain(x, false) != 0)
				;
	}
	x->js = NULL;
	x->nc = NULL;
	x->opts = NULL;
	if (sh != NULL && !closed) {
		/* a libnats callback may still come: leave sh to it (a few bytes),
		 * dead; and the ring too if a callback is still inside */
		lcp_log(x->st, LCP_LOG_WARNING,
			"libnats did not confirm the connection's close within %u ms: leaving its callback state allocated",
			SN_TEARDOWN_WAIT_MS);
		if (__atomic_load_n(&sh->in_cb, __ATOMIC_ACQUIRE) != 0)
			x->acks = NULL;
		x->sh = NULL;
	}
}

static void
sink_nats_stop(struct lcp_stage *st, void *ctx)
{
	struct sink_nats_ctx *x = ctx;
	const struct sink_nats_conf *c = x->c;
	uint64_t hz = rte_get_tsc_hz();
	uint64_t deadline = rte_rdtsc() + (uint64_t)c->flush_timeout_ms * hz / 1000;

	if (x->js != NULL) {
		for (;;) {
			jsPubOptions po;
			uint64_t now;

			while (sn_js_drain(x, true) != 0)
				;
			if (sn_js_inflight(x) == 0)
				break;
			now = rte_rdtsc();
			if (now >= deadline)
				break;
			jsPubOptions_Init(&po);
			po.MaxWait = (int64_t)RTE_MIN((deadline - now) * 1000 / hz + 1, (uint64_t)50);
			js_PublishAsyncComplete(x->js, &po);
		}
		if (sn_js_inflight(x) != 0)
			lcp_log(st, LCP_LOG_WARNING,
				"%" PRIu64 " message(s) still without an ack after flush_timeout_ms %" PRIu32
				" (unacked_at_stop)",
				sn_js_inflight(x), c->flush_timeout_ms);
	} else if (x->nc != NULL) {
		natsStatus s = c->flush_timeout_ms > 0 ? natsConnection_FlushTimeout(x->nc, c->flush_timeout_ms)
						       : NATS_TIMEOUT;

		if (s != NATS_OK) {
			bool up = natsConnection_Status(x->nc) == NATS_CONN_STATUS_CONNECTED;

			if (!up && x->down_pending != 0) {
				sn_count(x, SN_C_UNFLUSHED_AT_STOP, x->down_pending);
				lcp_log(st, LCP_LOG_ERR,
					"NATS server %s not reachable at stop: %" PRIu64
					" message(s) published while disconnected never reached it (unflushed_at_stop)",
					c->url, x->down_pending);
			} else if (up) {
				lcp_log(st, LCP_LOG_ERR,
					"flush to NATS server %s at stop: %s within flush_timeout_ms %" PRIu32
					": what it had not read yet may be lost (not counted per message)",
					c->url, natsStatus_GetText(s), c->flush_timeout_ms);
			}
		}
	}
	sn_teardown(x);
	lcp_log(st, LCP_LOG_INFO,
		"published %" PRIu64 " message(s) (%" PRIu64 " bytes)%s; acks %" PRIu64 ", duplicates %" PRIu64
		", failed %" PRIu64 ", unacked at stop %" PRIu64 ", unflushed at stop %" PRIu64 "; dropped: no symbol %" PRIu64
		", pending full %" PRIu64 ", not connected %" PRIu64 ", closed %" PRIu64 ", too big %" PRIu64
		", publish error %" PRIu64 "; disconnects %" PRIu64 ", reconnects %" PRIu64,
		x->t[SN_C_MSGS], x->t[SN_C_BYTES], c->jetstream ? " to JetStream" : "", x->t[SN_C_ACKS],
		x->t[SN_C_ACKS_DUPLICATE], x->t[SN_C_ACK_FAILED], x->t[SN_C_UNACKED_AT_STOP], x->t[SN_C_UNFLUSHED_AT_STOP],
		x->t[SN_C_DROP_NO_SYMBOL], x->t[SN_C_DROP_PENDING_FULL], x->t[SN_C_DROP_NOT_CONNECTED],
		x->t[SN_C_DROP_CLOSED], x->t[SN_C_DROP_TOO_BIG], x->t[SN_C_DROP_PUBLISH_ERROR], x->t[SN_C_DISCONNECTS],
		x->t[SN_C_RECONNECTS]);
}

/* ---- init, fini ---- */

static void
sn_free(struct sink_nats_ctx *x)
{
	rte_ring_free(x->acks);
	if (x->sh != NULL) {
		free(x->sh->url);
		free(x->sh);
	}
	rte_free(x->tries);
	rte_free(x);
}

static int
sink_nats_init(struct lcp_stage *st, const void *conf, void **ctx)
{
	const struct sink_nats_conf *c = conf;
	int socket = lcp_stage_socket(st);
	struct sink_nats_ctx *x;
	char err[256];

	x = rte_zmalloc_socket("sink_nats", sizeof(*x), RTE_CACHE_LINE_SIZE, socket);
	if (x == NULL) {
		lcp_log(st, LCP_LOG_ERR, "cannot allocate the context on socket %d", socket);
		return -ENOMEM;
	}
	x->st = st;
	x->c = c;
	if (sn_tpl_compile(&x->tpl, "subject", c->subject, c->venue, true, err, sizeof(err)) != 0 ||
	    (c->fallback_subject[0] != '\0' &&
	     sn_tpl_compile(&x->fb, "fallback_subject", c->fallback_subject, c->venue, false, err, sizeof(err)) != 0) ||
	    sn_paths_compile(&x->ps, c, x->slot, err, sizeof(err)) != 0) {
		lcp_log(st, LCP_LOG_ERR, "%s", err);
		rte_free(x);
		return -EINVAL;
	}
	x->has_fb = c->fallback_subject[0] != '\0';
	x->venue_len = strlen(c->venue);
	memcpy(x->venue, c->venue, x->venue_len + 1);
	x->block_tsc = (uint64_t)c->block_us * rte_get_tsc_hz() / 1000000;
	x->sh = calloc(1, sizeof(*x->sh));
	if (x->sh == NULL || (x->sh->url = strdup(c->url)) == NULL) {
		lcp_log(st, LCP_LOG_ERR, "cannot allocate the callback state");
		free(x->sh);
		rte_free(x);
		return -ENOMEM;
	}
	x->sh->st = st;
	x->sh->max_reconnect = c->max_reconnect;
	x->sh->reconnect_wait_ms = c->reconnect_wait_ms;
	x->sh->reconnect_buf = c->reconnect_buf_bytes;
	if (c->jetstream) {
		char rname[RTE_RING_NAMESIZE];
		uint32_t cap = rte_align32pow2(2 * c->max_pending);

		snprintf(rname, sizeof(rname), "sn_%.16s_%" PRIxPTR, lcp_stage_name(st), ((uintptr_t)x >> 6) & 0xffffff);
		x->sh->acks = rte_ring_create_elem(rname, sizeof(struct sn_ack), c->max_pending + 1, socket,
						   RING_F_SC_DEQ | RING_F_EXACT_SZ);
		x->tries = rte_zmalloc_socket("sink_nats_tries", sizeof(*x->tries) * cap, RTE_CACHE_LINE_SIZE, socket);
		x->tries_mask = cap - 1;
		x->acks = x->sh->acks;
		if (x->sh->acks == NULL || x->tries == NULL) {
			lcp_log(st, LCP_LOG_ERR, "cannot allocate the ack ring and table for max_pending %" PRIu32 " on socket %d",
				c->max_pending, socket);
			sn_free(x);
			return -ENOMEM;
		}
	}
	*ctx = x;
	return 0;
}

static void
sink_nats_fini(struct lcp_stage *st, void *ctx)
{
	struct sink_nats_ctx *x = ctx;

	RTE_SET_USED(st);
	if (x == NULL)
		return;
	sn_teardown(x); /* stop() did not run: a failed start somewhere */
	sn_free(x);
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
