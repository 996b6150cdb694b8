/* SPDX-License-Identifier: BSD-3-Clause
 * msg_hash — test-only sink stage for the `msg` unit (lcp/msg.h). Built only for
 * `make check` (tests/kernel.mk) and used by the L2 WebSocket tests
 * tests/kernel/ws_*.sh behind the ws stage (ws.msg -> hash.in).
 *
 * For every message, in arrival order:
 *  - SHA-256 over the payloads (just the bytes, no framing), and a second
 *    SHA-256 over the (opcode, length) sequence: 1 byte opcode, 4 bytes length
 *    little-endian per message, so a test can tell "a message is missing or
 *    has the wrong size" from "a payload byte is wrong" when the first differs;
 *  - counts: messages, bytes, per opcode (1 text, 2 binary, anything else
 *    "other"), messages whose rx_tsc is 0, messages whose rx_tsc lies in the
 *    future (later than the TSC when they arrive here), smallest and largest;
 *  - with "record": one JSON line per message in that file:
 *      {"i": N, "conn": ID, "op": OP, "len": LEN, "tsc0": BOOL, "head": "HEX"}
 *    head = the first "record_bytes" (default 64) payload bytes in hex, so a
 *    test can assert that nothing of a bad frame was ever delivered;
 *  - then the message is freed (lcp_msg_free).
 * With "expect" = N > 0, the N-th message makes it ask the engine to end the
 * run (lcp_stage_request_stop, reason "msg_hash: done"), "linger_ms" after that
 * message (from poll(): the close handshake that follows the last message can
 * still complete). With "expect_per_conn" = "N0,N1,...", the same once
 * connection 0 has delivered N0 messages, connection 1 N1, and so on (one run
 * carrying several connections, e.g. a hostile one next to a good one).
 *
 * Per connection (conn_id < MSG_HASH_MAX_CONN, 16) the same SHA-256s and counts
 * are kept apart too, in the result's "conns".
 *
 * "result": a JSON file written at stop() and re-written at fini() if messages
 * arrived after stop(), written to PATH.tmp and renamed:
 *   {"msgs", "bytes", "sha256", "sha256_lens", "text", "binary", "other",
 *    "rx_tsc_zero", "rx_tsc_future", "min_len", "max_len", "stop_requested",
 *    "expect", "record_errors",
 *    "conns": [{"conn", "msgs", "bytes", "sha256", "sha256_lens", "max_len"}...]}
 * ("conns": the connections that delivered anything; "other_conns": messages
 * of connections beyond the 16.)
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/evp.h>

#include <rte_cycles.h>

#include <lcp/lcp.h>

#include "sha_hex.h"

enum { MSG_HASH_IN };

static const struct lcp_port_def msg_hash_ports[] = {
	[MSG_HASH_IN] = { .name = "in", .dir = LCP_PORT_IN, .unit = LCP_UNIT_MSG, .flags = LCP_PORT_F_REQUIRED,
			  .doc = "messages to hash (e.g. ws.msg)" },
	LCP_PORT_END,
};

#define MSG_HASH_COUNTERS(X)                                                   \
	X(MSGS, "msgs")                                                        \
	X(BYTES, "bytes")                                                      \
	X(TEXT, "text")                                                        \
	X(BINARY, "binary")                                                    \
	X(OTHER, "other")                                                      \
	X(RX_TSC_ZERO, "rx_tsc_zero")                                          \
	X(RX_TSC_FUTURE, "rx_tsc_future")
enum {
#define X(e, s) MSG_HASH_##e,
	MSG_HASH_COUNTERS(X)
#undef X
};
static const char *const msg_hash_counters[] = { MSG_HASH_COUNTERS(LCP_COUNTER_NAME) NULL };

struct msg_hash_conf {
	const char *result;
	const char *record;
	uint32_t record_bytes;
	uint64_t expect;
	uint32_t linger_ms;
	const char *expect_per_conn;
};

#define MSG_HASH_MAX_CONN 16

static const struct lcp_opt msg_hash_opts[] = {
	LCP_OPT_STRING(struct msg_hash_conf, result, "result", "\"\"", 0, 4095, 0,
		       "JSON result file written at stop (counts, SHA-256 of the payloads); empty = none"),
	LCP_OPT_STRING(struct msg_hash_conf, record, "record", "\"\"", 0, 4095, 0,
		       "JSON-lines file: one line per message (conn, opcode, length, first bytes in hex); empty = none"),
	LCP_OPT_UINT(struct msg_hash_conf, record_bytes, "record_bytes", "64", 0, 4096, 0,
		     "payload bytes per message in the record (hex)"),
	LCP_OPT_UINT(struct msg_hash_conf, expect, "expect", "0", 0, 1000000000, 0,
		     "end the run after this many messages; 0 = never"),
	LCP_OPT_UINT(struct msg_hash_conf, linger_ms, "linger_ms", "0", 0, 600000, 0,
		     "with expect: ask for the stop this long after the expected message"),
	LCP_OPT_STRING(struct msg_hash_conf, expect_per_conn, "expect_per_conn", "\"\"", 0, 255, 0,
		       "\"N0,N1,...\": end the run once connection i delivered Ni messages, for every i; empty = none"),
	LCP_OPT_END,
};

struct msg_hash_ctx {
	EVP_MD_CTX *md, *md_lens;
	FILE *rec;
	const char *result;
	uint32_t record_bytes;
	uint64_t expect;
	uint64_t linger_tsc;
	uint64_t stop_at; /* TSC at which to ask for the stop; 0 = not yet */
	bool stop_requested;
	bool result_written;
	bool dirty;
	uint64_t msgs, bytes, text, binary, other, tsc_zero, tsc_future;
	uint64_t min_len, max_len;
	uint64_t record_errors;
	struct {
		EVP_MD_CTX *md, *md_lens;
		uint64_t msgs, bytes, max_len, expect;
	} conn[MSG_HASH_MAX_CONN];
	unsigned n_expect_conn; /* connections 0..n-1 have an expected count */
	uint64_t other_conns;
	char hex[2 * 4096 + 1];
};

static void
msg_hash_free_md(struct msg_hash_ctx *x)
{
	EVP_MD_CTX_free(x->md);
	EVP_MD_CTX_free(x->md_lens);
	for (unsigned i = 0; i < MSG_HASH_MAX_CONN; i++) {
		EVP_MD_CTX_free(x->conn[i].md);
		EVP_MD_CTX_free(x->conn[i].md_lens);
	}
}

/* "N0,N1,...": 0 or -1 */
static int
msg_hash_parse_expect(struct msg_hash_ctx *x, const char *s)
{
	while (*s != '\0') {
		char *end;
		unsigned long long v;

		if (x->n_expect_conn == MSG_HASH_MAX_CONN || *s < '0' || *s > '9')
			return -1;
		errno = 0;
		v = strtoull(s, &end, 10);
		if (errno != 0 || (*end != ',' && *end != '\0'))
			return -1;
		x->conn[x->n_expect_conn++].expect = v;
		s = *end == ',' ? end + 1 : end;
	}
	return 0;
}

static int
msg_hash_init(struct lcp_stage *st, const void *conf, void **ctx)
{
	const struct msg_hash_conf *c = conf;
	struct msg_hash_ctx *x = *ctx;

	x->md = EVP_MD_CTX_new();
	x->md_lens = EVP_MD_CTX_new();
	if (x->md == NULL || x->md_lens == NULL || EVP_DigestInit_ex(x->md, EVP_sha256(), NULL) != 1 ||
	    EVP_DigestInit_ex(x->md_lens, EVP_sha256(), NULL) != 1) {
		lcp_log(st, LCP_LOG_ERR, "cannot set up SHA-256");
		goto fail;
	}
	for (unsigned i = 0; i < MSG_HASH_MAX_CONN; i++) {
		x->conn[i].md = EVP_MD_CTX_new();
		x->conn[i].md_lens = EVP_MD_CTX_new();
		if (x->conn[i].md == NULL || x->conn[i].md_lens == NULL ||
		    EVP_DigestInit_ex(x->conn[i].md, EVP_sha256(), NULL) != 1 ||
		    EVP_DigestInit_ex(x->conn[i].md_lens, EVP_sha256(), NULL) != 1) {
			lcp_log(st, LCP_LOG_ERR, "cannot set up SHA-256");
			goto fail;
		}
	}
	if (msg_hash_parse_expect(x, c->expect_per_conn) < 0) {
		lcp_log(st, LCP_LOG_ERR, "expect_per_conn \"%s\": expected \"N0,N1,...\" (at most %d)",
			c->expect_per_conn, MSG_HASH_MAX_CONN);
		goto fail;
	}
	if (c->record[0] != '\0') {
		x->rec = fopen(c->record, "w");
		if (x->rec == NULL) {
			lcp_log(st, LCP_LOG_ERR, "record %s: %s", c->record, strerror(errno));
			goto fail;
		}
	}
	x->result = c->result;
	x->record_bytes = c->record_bytes;
	x->expect = c->expect;
	x->linger_tsc = (uint64_t)c->linger_ms * (rte_get_tsc_hz() / 1000);
	x->min_len = UINT64_MAX;
	return 0;
fail:
	msg_hash_free_md(x);
	if (x->rec != NULL)
		fclose(x->rec);
	return -EINVAL;
}

static void
msg_hash_record(struct msg_hash_ctx *x, const struct lcp_msg *m)
{
	uint32_t n = m->len < x->record_bytes ? m->len : x->record_bytes;
	static const char digits[] = "0123456789abcdef";

	for (uint32_t i = 0; i < n; i++) {
		x->hex[2 * i] = digits[m->data[i] >> 4];
		x->hex[2 * i + 1] = digits[m->data[i] & 15];
	}
	x->hex[2 * n] = '\0';
	if (fprintf(x->rec,
		    "{\"i\": %" PRIu64 ", \"conn\": %" PRIu64 ", \"op\": %u, \"len\": %" PRIu32
		    ", \"tsc0\": %s, \"head\": \"%s\"}\n",
		    x->msgs, m->conn_id, m->opcode, m->len, m->rx_tsc == 0 ? "true" : "false", x->hex) < 0)
		x->record_errors++;
}

static void
msg_hash_process(struct lcp_stage *st, void *ctx, unsigned port, void **objs, unsigned n)
{
	struct msg_hash_ctx *x = ctx;
	uint64_t now = rte_rdtsc();

	(void)port;
	if (x->result_written)
		x->dirty = true;
	for (unsigned i = 0; i < n; i++) {
		struct lcp_msg *m = objs[i];
		uint8_t lens[5] = { (uint8_t)m->opcode, (uint8_t)m->len, (uint8_t)(m->len >> 8),
				    (uint8_t)(m->len >> 16), (uint8_t)(m->len >> 24) };

		EVP_DigestUpdate(x->md, m->data, m->len);
		EVP_DigestUpdate(x->md_lens, lens, sizeof(lens));
		if (m->conn_id < MSG_HASH_MAX_CONN) {
			typeof(x->conn[0]) *k = &x->conn[m->conn_id];

			EVP_DigestUpdate(k->md, m->data, m->len);
			EVP_DigestUpdate(k->md_lens, lens, sizeof(lens));
			k->msgs++;
			k->bytes += m->len;
			if (m->len > k->max_len)
				k->max_len = m->len;
		} else {
			x->other_conns++;
		}
		if (x->rec != NULL)
			msg_hash_record(x, m);
		x->msgs++;
		x->bytes += m->len;
		if (m->len < x->min_len)
			x->min_len = m->len;
		if (m->len > x->max_len)
			x->max_len = m->len;
		lcp_count(st, MSG_HASH_MSGS, 1);
		lcp_count(st, MSG_HASH_BYTES, m->len);
		if (m->opcode == 1) {
			x->text++;
			lcp_count(st, MSG_HASH_TEXT, 1);
		} else if (m->opcode == 2) {
			x->binary++;
			lcp_count(st, MSG_HASH_BINARY, 1);
		} else {
			x->other++;
			lcp_count(st, MSG_HASH_OTHER, 1);
		}
		if (m->rx_tsc == 0) {
			x->tsc_zero++;
			lcp_count(st, MSG_HASH_RX_TSC_ZERO, 1);
		} else if (m->rx_tsc > now) {
			x->tsc_future++;
			lcp_count(st, MSG_HASH_RX_TSC_FUTURE, 1);
		}
		lcp_msg_free(m);
		if (x->expect != 0 && x->msgs == x->expect && x->stop_at == 0)
			x->stop_at = now + x->linger_tsc + 1;
		if (x->n_expect_conn > 0 && x->stop_at == 0) {
			unsigned k = 0;

			while (k < x->n_expect_conn && x->conn[k].msgs >= x->conn[k].expect)
				k++;
			if (k == x->n_expect_conn)
				x->stop_at = now + x->linger_tsc + 1;
		}
	}
}

static unsigned
msg_hash_poll(struct lcp_stage *st, void *ctx)
{
	struct msg_hash_ctx *x = ctx;

	if (x->stop_at != 0 && !x->stop_requested && rte_rdtsc() >= x->stop_at) {
		x->stop_requested = true;
		lcp_log(st, LCP_LOG_INFO, "%" PRIu64 " message(s): ending the run", x->msgs);
		lcp_stage_request_stop(st, "msg_hash: done");
	}
	return 0;
}

static void
msg_hash_write_result(struct lcp_stage *st, struct msg_hash_ctx *x)
{
	char tmp[4200], sha[65], sha_lens[65];
	FILE *f;

	x->result_written = true;
	x->dirty = false;
	if (x->rec != NULL && fflush(x->rec) != 0)
		x->record_errors++;
	if (x->result == NULL || x->result[0] == '\0')
		return;
	sha256_hex(x->md, sha);
	sha256_hex(x->md_lens, sha_lens);
	snprintf(tmp, sizeof(tmp), "%s.tmp", x->result);
	f = fopen(tmp, "w");
	if (f == NULL) {
		lcp_log(st, LCP_LOG_ERR, "cannot write %s: %s", tmp, strerror(errno));
		return;
	}
	fprintf(f,
		"{\"msgs\": %" PRIu64 ", \"bytes\": %" PRIu64 ", \"sha256\": \"%s\", \"sha256_lens\": \"%s\",\n"
		" \"text\": %" PRIu64 ", \"binary\": %" PRIu64 ", \"other\": %" PRIu64 ",\n"
		" \"rx_tsc_zero\": %" PRIu64 ", \"rx_tsc_future\": %" PRIu64 ", \"min_len\": %" PRId64
		", \"max_len\": %" PRIu64 ",\n"
		" \"expect\": %" PRIu64 ", \"stop_requested\": %s, \"record_errors\": %" PRIu64
		", \"other_conns\": %" PRIu64 ",\n \"conns\": [",
		x->msgs, x->bytes, sha, sha_lens, x->text, x->binary, x->other, x->tsc_zero, x->tsc_future,
		x->msgs ? (int64_t)x->min_len : (int64_t)-1, x->max_len, x->expect,
		x->stop_requested ? "true" : "false", x->record_errors, x->other_conns);
	for (unsigned i = 0, first = 1; i < MSG_HASH_MAX_CONN; i++) {
		if (x->conn[i].msgs == 0)
			continue;
		sha256_hex(x->conn[i].md, sha);
		sha256_hex(x->conn[i].md_lens, sha_lens);
		fprintf(f,
			"%s\n  {\"conn\": %u, \"msgs\": %" PRIu64 ", \"bytes\": %" PRIu64
			", \"sha256\": \"%s\", \"sha256_lens\": \"%s\", \"max_len\": %" PRIu64 "}",
			first ? "" : ",", i, x->conn[i].msgs, x->conn[i].bytes, sha, sha_lens, x->conn[i].max_len);
		first = 0;
	}
	fprintf(f, "]}\n");
	if (ferror(f) | (fclose(f) != 0)) {
		lcp_log(st, LCP_LOG_ERR, "cannot write %s", tmp);
		return;
	}
	if (rename(tmp, x->result) != 0)
		lcp_log(st, LCP_LOG_ERR, "cannot rename %s to %s: %s", tmp, x->result, strerror(errno));
}

static void
msg_hash_stop(struct lcp_stage *st, void *ctx)
{
	struct msg_hash_ctx *x = ctx;

	lcp_log(st, LCP_LOG_INFO, "%" PRIu64 " messages, %" PRIu64 " bytes", x->msgs, x->bytes);
	msg_hash_write_result(st, x);
}

static void
msg_hash_fini(struct lcp_stage *st, void *ctx)
{
	struct msg_hash_ctx *x = ctx;

	if (!x->result_written || x->dirty)
		msg_hash_write_result(st, x);
	if (x->rec != NULL && fclose(x->rec) != 0)
		lcp_log(st, LCP_LOG_ERR, "cannot write the record: %s", strerror(errno));
	msg_hash_free_md(x);
}

static const struct lcp_stage_ops msg_hash_ops = {
	.ports = msg_hash_ports,
	.counters = msg_hash_counters,
	.init = msg_hash_init,
	.poll = msg_hash_poll,
	.process = msg_hash_process,
	.stop = msg_hash_stop,
	.fini = msg_hash_fini,
	.ctx_size = sizeof(struct msg_hash_ctx),
};

LCP_PLUGIN_EXPORT const struct lcp_plugin lcp_plugin_descriptor = {
	LCP_PLUGIN_HEADER(LCP_KIND_STAGE, "msg_hash"),
	.version = "1.0.0",
	.summary = "test sink for msg: SHA-256 of the payloads in order, counts, optional per-message record",
	.options = msg_hash_opts,
	.conf_size = sizeof(struct msg_hash_conf),
	.ops = &msg_hash_ops,
};
