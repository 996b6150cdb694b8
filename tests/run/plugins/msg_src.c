/* SPDX-License-Identifier: BSD-3-Clause
 * msg_src — test-only source of `msg` objects with known payloads, for the msg
 * sinks (sink_file, sink_echo). Emits `count` messages on "out", `burst` per poll,
 * cycling through the payload kinds listed in the option `kinds` (one letter each):
 *
 *   j  text, a JSON object tick: {"s":"SYM3","n":5,"p":101.25}
 *   a  text, a JSON array: [5,"x",{"a":null,"b":[true,false]}]
 *   p  text, pretty-printed JSON with LF and CR LF between tokens, trailing LF
 *   t  text, not JSON: quotes, backslashes, control characters (0x01, 0x1f, TAB,
 *      LF, CR), DEL, 2-, 3- and 4-byte UTF-8
 *   n  text that starts with '{' but does not end with '}'
 *   u  text that is not valid UTF-8 (0xff 0xfe, a lone continuation byte, a
 *      surrogate, an overlong NUL)
 *   e  empty text           E  empty binary
 *   b  binary, 1..300 bytes, with zero bytes
 *   o  opcode 9, 8 bytes (neither text nor binary)
 *   T  text, ~20 KB of 't' payloads      B  binary, 30000 bytes
 *   J  text, a ~25 KB JSON object
 *
 * conn_id = conn_base + i % conns; rx_tsc = the TSC when the burst was made;
 * opcode 1 (text) or 2 (binary). Each message is one object of the stage's own
 * mempool (header + MSG_SRC_MAX bytes of payload), given back by its release
 * callback: at fini, a pool with objects still in use is left allocated on
 * purpose, so that the engine's mempool check reports the leak (exit 3).
 *
 * With `manifest` set, every message is also recorded there before it is emitted,
 * one line each: "conn opcode rx_tsc hex(payload)\n" (the hex is empty for an
 * empty payload), so a test can compare what a sink wrote with what was sent.
 * With `stop` (default), the stage asks the engine to end the run once all
 * `count` messages are out. With `lines` set, message i is instead line
 * i % (lines in the file) of that file, as text, without its LF (the metrics
 * tests feed crafted venue messages this way). Built only for `make check`
 * (tests/run.mk). */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_common.h>
#include <rte_cycles.h>
#include <rte_mempool.h>

#include <lcp/lcp.h>

#include "test_plugin.h"

#define MSG_SRC_MAX 32768u
#define MSG_SRC_BURST_MAX 256u

enum { MS_OUT };

static const struct lcp_port_def msg_src_ports[] = {
	[MS_OUT] = { .name = "out", .dir = LCP_PORT_OUT, .unit = LCP_UNIT_MSG, .flags = LCP_PORT_F_REQUIRED,
		     .doc = "messages with known payloads" },
	LCP_PORT_END,
};

#define MSG_SRC_COUNTERS(X)                                                    \
	X(MSGS, "msgs")                                                        \
	X(BYTES, "bytes")                                                      \
	X(POOL_EMPTY, "pool_empty")
enum {
#define X(e, s) MS_C_##e,
	MSG_SRC_COUNTERS(X)
#undef X
};
static const char *const msg_src_counters[] = { MSG_SRC_COUNTERS(LCP_COUNTER_NAME) NULL };

struct msg_src_conf {
	uint64_t count;
	uint32_t burst;
	uint32_t conns;
	uint64_t conn_base;
	const char *kinds;
	const char *manifest;
	const char *lines;
	uint32_t msgs;
	bool stop;
};

#define C struct msg_src_conf
static const struct lcp_opt msg_src_opts[] = {
	LCP_OPT_UINT(C, count, "count", "1000", 0, INT64_MAX, 0, "messages to emit"),
	LCP_OPT_UINT(C, burst, "burst", "32", 1, MSG_SRC_BURST_MAX, 0, "messages per poll at most"),
	LCP_OPT_UINT(C, conns, "conns", "3", 1, 1000000, 0, "conn_id = conn_base + i % conns"),
	LCP_OPT_UINT(C, conn_base, "conn_base", "0", 0, INT64_MAX, 0, "first conn_id"),
	LCP_OPT_STRING(C, kinds, "kinds", "\"japtnueEboTBJ\"", 1, 64, 0,
		       "payload kinds to cycle through, one letter each (see msg_src.c)"),
	LCP_OPT_STRING(C, manifest, "manifest", "\"\"", 0, 4095, 0,
		       "record every message in this file (conn opcode rx_tsc hex)"),
	LCP_OPT_STRING(C, lines, "lines", "\"\"", 0, 4095, 0,
		       "a file: message i is its line i % lines, as text (kinds ignored)"),
	LCP_OPT_UINT(C, msgs, "msgs", "511", 63, 65535, 0, "msg objects in the pool"),
	LCP_OPT_BOOL(C, stop, "stop", "true", "end the run once every message is out"),
	LCP_OPT_END,
};
#undef C

struct msg_src_ctx {
	struct msg_src_conf conf;
	struct rte_mempool *pool;
	FILE *manifest;
	uint64_t i; /* next message number */
	bool done;
	char *text;          /* lines: the file, LFs replaced by NULs */
	size_t *line;        /* offsets of its lines */
	size_t n_lines;
};

static int
msg_src_read_lines(struct lcp_stage *st, struct msg_src_ctx *x)
{
	FILE *f = fopen(x->conf.lines, "r");
	long sz;

	if (f == NULL || fseek(f, 0, SEEK_END) != 0 || (sz = ftell(f)) < 0 || fseek(f, 0, SEEK_SET) != 0) {
		lcp_log(st, LCP_LOG_ERR, "cannot read %s: %s", x->conf.lines, strerror(errno));
		if (f != NULL)
			fclose(f);
		return -EIO;
	}
	x->text = malloc((size_t)sz + 1);
	x->line = malloc(((size_t)sz + 1) * sizeof(*x->line));
	if (x->text == NULL || x->line == NULL || fread(x->text, 1, (size_t)sz, f) != (size_t)sz) {
		fclose(f);
		return -ENOMEM;
	}
	fclose(f);
	x->text[sz] = '\n';
	for (size_t o = 0; o < (size_t)sz;) {
		char *e = memchr(x->text + o, '\n', (size_t)sz + 1 - o);

		*e = '\0';
		if ((size_t)(e - x->text) - o >= MSG_SRC_MAX) {
			lcp_log(st, LCP_LOG_ERR, "%s: line %zu is longer than %u bytes", x->conf.lines,
				x->n_lines + 1, MSG_SRC_MAX - 1);
			return -EINVAL;
		}
		x->line[x->n_lines++] = o;
		o = (size_t)(e - x->text) + 1;
	}
	if (x->n_lines == 0) {
		lcp_log(st, LCP_LOG_ERR, "%s: no lines", x->conf.lines);
		return -EINVAL;
	}
	return 0;
}

static int
msg_src_validate(const void *conf, char *msg, size_t msglen)
{
	const struct msg_src_conf *c = conf;

	for (const char *k = c->kinds; *k; k++)
		if (strchr("japtnueEboTBJ", *k) == NULL) {
			snprintf(msg, msglen, "kinds: unknown kind '%c' (known: japtnueEboTBJ)", *k);
			return -EINVAL;
		}
	return 0;
}

static const char msg_src_text[] =
	"tick \"q\" said \\\"hi\\\" C:\\path\\x ctl:\x01\x02\x1f\x7f tab\there lf\ncr\rend "
	"\xc3\xa9 \xc3\xbc \xe4\xb8\xad\xe6\x96\x87 \xf0\x9f\x98\x80 \xe2\x82\xac #";

/* payload of message i of kind k into d; returns its length, *op the opcode */
static uint32_t
msg_src_fill(uint8_t *d, uint64_t i, char k, uint16_t *op)
{
	char *s = (char *)d;
	uint32_t n = 0;
	int w;

	*op = 1;
	switch (k) {
	case 'j':
		w = snprintf(s, MSG_SRC_MAX, "{\"s\":\"SYM%" PRIu64 "\",\"n\":%" PRIu64 ",\"p\":%" PRIu64 ".%02u}",
			     i % 7, i, 100 + i % 50, (unsigned)(i % 4) * 25);
		return (uint32_t)w;
	case 'a':
		w = snprintf(s, MSG_SRC_MAX, "[%" PRIu64 ",\"x\",{\"a\":null,\"b\":[true,false]}]", i);
		return (uint32_t)w;
	case 'p':
		w = snprintf(s, MSG_SRC_MAX, "{\n  \"n\": %" PRIu64 ",\r\n  \"v\": [1,\n 2, \"a b\"]\n}\n", i);
		return (uint32_t)w;
	case 't':
		w = snprintf(s, MSG_SRC_MAX, "%s%" PRIu64, msg_src_text, i);
		return (uint32_t)w;
	case 'n':
		w = snprintf(s, MSG_SRC_MAX, "{not json %" PRIu64 " \"x\"", i);
		return (uint32_t)w;
	case 'u':
		w = snprintf(s, MSG_SRC_MAX, "bad \xff\xfe utf8 \x80 \xed\xa0\x80 \xc0\x80 %" PRIu64, i);
		return (uint32_t)w;
	case 'e':
		return 0;
	case 'E':
		*op = 2;
		return 0;
	case 'b':
		*op = 2;
		n = (uint32_t)(i * 37 % 300) + 1;
		for (uint32_t b = 0; b < n; b++)
			d[b] = b % 5 == 0 ? 0 : (uint8_t)(i + b * 7);
		return n;
	case 'o':
		*op = 9;
		for (n = 0; n < 8; n++)
			d[n] = (uint8_t)(i >> (8 * n));
		return n;
	case 'T':
		while (n + sizeof(msg_src_text) + 24 < 20000) {
			w = snprintf(s + n, MSG_SRC_MAX - n, "%s%" PRIu64 ";", msg_src_text, i);
			n += (uint32_t)w;
		}
		return n;
	case 'B':
		*op = 2;
		for (n = 0; n < 30000; n++)
			d[n] = (uint8_t)((n * 131 + i) >> 3);
		return n;
	case 'J':
		n = (uint32_t)snprintf(s, MSG_SRC_MAX, "{\"big\":%" PRIu64 ",\"a\":[", i);
		for (unsigned v = 0; n < 25000; v++)
			n += (uint32_t)snprintf(s + n, MSG_SRC_MAX - n, "%s{\"v\":%u,\"s\":\"\\\"q\\\"\"}",
						v ? "," : "", v);
		n += (uint32_t)snprintf(s + n, MSG_SRC_MAX - n, "]}");
		return n;
	default:
		return 0;
	}
}

static int
msg_src_init(struct lcp_stage *st, const void *conf, void **ctx)
{
	struct msg_src_ctx *x = *ctx;

	x->conf = *(const struct msg_src_conf *)conf;
	x->pool = tp_msg_pool_create(st, "msgsrc_", x->conf.msgs, MSG_SRC_MAX);
	if (x->pool == NULL)
		return -ENOMEM;
	if (x->conf.lines[0] != '\0' && msg_src_read_lines(st, x) != 0) {
		free(x->text);
		free(x->line);
		rte_mempool_free(x->pool);
		return -EINVAL;
	}
	return 0;
}

static int
msg_src_start(struct lcp_stage *st, void *ctx)
{
	struct msg_src_ctx *x = ctx;

	if (x->conf.manifest[0] != '\0') {
		x->manifest = fopen(x->conf.manifest, "w");
		if (x->manifest == NULL) {
			lcp_log(st, LCP_LOG_ERR, "cannot create %s: %s", x->conf.manifest, strerror(errno));
			return -EIO;
		}
	}
	return 0;
}

static void
msg_src_record(struct msg_src_ctx *x, const struct lcp_msg *m)
{
	static const char hex[] = "0123456789abcdef";

	fprintf(x->manifest, "%" PRIu64 " %u %" PRIu64 " ", m->conn_id, m->opcode, m->rx_tsc);
	for (uint32_t b = 0; b < m->len; b++) {
		putc(hex[m->data[b] >> 4], x->manifest);
		putc(hex[m->data[b] & 15], x->manifest);
	}
	putc('\n', x->manifest);
}

static unsigned
msg_src_poll(struct lcp_stage *st, void *ctx)
{
	struct msg_src_ctx *x = ctx;
	struct lcp_msg *out[MSG_SRC_BURST_MAX];
	size_t nk = strlen(x->conf.kinds);
	uint64_t tsc, bytes = 0;
	unsigned n = 0;

	if (x->done || lcp_stage_stopping(st))
		return 0;
	tsc = rte_rdtsc();
	while (n < x->conf.burst && x->i < x->conf.count) {
		struct tp_msg *m;
		uint32_t len;
		uint16_t op = 1;

		if (rte_mempool_get(x->pool, (void **)&m) != 0) {
			lcp_count(st, MS_C_POOL_EMPTY, 1);
			break;
		}
		if (x->n_lines != 0) {
			const char *l = x->text + x->line[x->i % x->n_lines];

			len = (uint32_t)strlen(l);
			memcpy(m->data, l, len);
		} else {
			len = msg_src_fill(m->data, x->i, x->conf.kinds[x->i % nk], &op);
		}
		tp_msg_set(m, x->pool, x, x->conf.conn_base + x->i % x->conf.conns, tsc, len, op);
		if (x->manifest != NULL)
			msg_src_record(x, &m->pub);
		bytes += m->pub.len;
		out[n++] = &m->pub;
		x->i++;
	}
	if (n > 0) {
		lcp_count(st, MS_C_MSGS, n);
		lcp_count(st, MS_C_BYTES, bytes);
		lcp_emit(st, MS_OUT, (void **)out, n);
	}
	if (x->i == x->conf.count) {
		x->done = true;
		if (x->manifest != NULL)
			fflush(x->manifest);
		lcp_log(st, LCP_LOG_INFO, "%" PRIu64 " messages out", x->i);
		if (x->conf.stop)
			lcp_stage_request_stop(st, "msg_src: all messages out");
	}
	return n;
}

static void
msg_src_fini(struct lcp_stage *st, void *ctx)
{
	struct msg_src_ctx *x = ctx;

	if (x->manifest != NULL)
		fclose(x->manifest);
	free(x->text);
	free(x->line);
	tp_msg_pool_fini(st, x->pool);
}

static const struct lcp_stage_ops msg_src_ops = {
	.ports = msg_src_ports,
	.counters = msg_src_counters,
	.validate = msg_src_validate,
	.init = msg_src_init,
	.start = msg_src_start,
	.poll = msg_src_poll,
	.fini = msg_src_fini,
	.ctx_size = sizeof(struct msg_src_ctx),
};

LCP_PLUGIN_EXPORT const struct lcp_plugin lcp_plugin_descriptor = {
	LCP_PLUGIN_HEADER(LCP_KIND_STAGE, "msg_src"),
	.version = "1.0.0",
	.summary = "test source: msg objects with known payloads (JSON, escapes, UTF-8, binary, big)",
	.options = msg_src_opts,
	.conf_size = sizeof(struct msg_src_conf),
	.ops = &msg_src_ops,
};
