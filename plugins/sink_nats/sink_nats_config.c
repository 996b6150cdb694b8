/* SPDX-License-Identifier: BSD-3-Clause
 * sink_nats_config.c — sink_nats's options: the option table, the subject
 * templates compiled into literal pieces and placeholders (sn_tpl_compile), the
 * JSON paths of symbol and sequence (sn_paths_compile), and validate (the
 * templates, the paths, the option combinations). init compiles the same
 * templates and paths into the context (sink_nats_conn.c).
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <rte_common.h>

#include "sink_nats.h"

/* defaults of the JetStream-only and block-only options, as numbers too: a
 * non-default value without jetstream (or without on_full block) is refused */
#define SN_DEF_MAX_PENDING 16384
#define SN_DEF_ACK_TIMEOUT_MS 5000
#define SN_DEF_ACK_RETRIES 2
#define SN_DEF_SEQ_FIELD "n"
#define SN_DEF_BLOCK_US 1000
#define SN_STR_(x) #x
#define SN_STR(x) SN_STR_(x)

const char *const sink_nats_on_full[] = { "drop", "block", NULL };

#define C struct sink_nats_conf
const struct lcp_opt sink_nats_opts[] = {
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

/* n literal bytes onto t (the room checked by the caller), in its last
 * segment when that is literal, else in a new one; false: no segment left */
static bool
sn_tpl_lit(struct sn_tpl *t, const char *b, size_t n)
{
	if (t->n == 0 || t->seg[t->n - 1].kind != SN_T_LIT) {
		if (t->n == SN_TPL_SEGS)
			return false;
		t->seg[t->n].kind = SN_T_LIT;
		t->seg[t->n].off = (uint16_t)t->lit_len;
		t->seg[t->n].len = 0;
		t->n++;
	}
	memcpy(t->lit + t->lit_len, b, n);
	t->lit_len += (unsigned)n;
	t->seg[t->n - 1].len = (uint16_t)(t->seg[t->n - 1].len + n);
	t->worst += n;
	return true;
}

/* Compile template s of option `what`; {venue} becomes venue's text. {symbol}
 * only if allow_symbol. Returns 0 or -EINVAL with the reason in err. */
int
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
				if (!sn_tpl_lit(t, venue, vl))
					goto too_many;
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
		if (!sn_tpl_lit(t, p, 1))
			goto too_many;
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

/* ---- JSON paths ---- */

/* compile symbol_field (slot 0) and, for JetStream, seq_field (slot 1) */
int
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

/* ---- validate ---- */

int
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
