/* SPDX-License-Identifier: BSD-3-Clause
 * fuzz_metrics_json.c — the metrics stage's path walk (plugins/common/metrics_json.c)
 * on arbitrary messages.
 *
 * Input: byte 0 picks a path set (byte % FJ_NSETS: the six venue profiles of
 * conf/exchanges/ and one of top-level arrays, nesting and shared prefixes);
 * the rest is the message, copied into an allocation of exactly its size, so a
 * read past its end is a read past the allocation (ASan in fuzzing builds,
 * valgrind by hand).
 *
 * Invariants, for each slot the walk filled: the span lies inside the message;
 * a string span sits between two quotes; an object span starts with '{', an array
 * span with '[', and both end with a closing bracket of either kind; a literal is not empty and
 * holds no blank, quote, comma, colon, bracket or brace. The same message walked twice gives the
 * same spans (the walk keeps no state). The tick scan (metrics_scan.h): where the
 * known-layout reader takes the message, its outcome (and symbol, length,
 * sequence) is the general walk's, for the default field names and others.
 */
#include "fuzz_common.h"

#include "metrics_json.h"
#include "metrics_scan.h"

static const char *const fj_sets[][METRICS_JSON_MAX_PATHS + 1] = {
	{"data.s", "data.u", "data.U", "data.e", NULL},
	{"product_id", "trade_id", "type", NULL},
	{"data.0.symbol", "data.-1.trade_id", "data.0.trade_id", "channel", "type", NULL},
	{"arg.instId", "data.0.seqId", "data.0.prevSeqId", "action", NULL},
	{"data.s", "data.u", "topic", "type", NULL},
	{"params.data.instrument_name", "params.data.change_id", "params.data.prev_change_id",
	 "params.channel", "params.data.type", NULL},
	{"0", "1.0", "1.-1.k", "2.a.b.c.d.e.f", "1.-1.j.-1", "x", "-1", NULL},
};
#define FJ_NSETS (sizeof(fj_sets) / sizeof(fj_sets[0]))

static int
fj_delim(uint8_t c)
{
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '"' || c == ',' ||
	       c == ':' || c == '[' || c == ']' || c == '{' || c == '}';
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct metrics_json_paths ps[FJ_NSETS];
	static int compiled;
	struct metrics_json_span out[METRICS_JSON_MAX_PATHS], again[METRICS_JSON_MAX_PATHS];
	const struct metrics_json_paths *p;
	uint8_t *m;
	size_t n;

	if (!compiled) {
		for (unsigned s = 0; s < FJ_NSETS; s++) {
			unsigned k = 0, slot[METRICS_JSON_MAX_PATHS];
			char err[160];

			while (fj_sets[s][k] != NULL)
				k++;
			if (metrics_json_compile(&ps[s], fj_sets[s], k, slot, err, sizeof(err)) !=
			    0) {
				fprintf(stderr, "path set %u: %s\n", s, err);
				__builtin_trap();
			}
		}
		compiled = 1;
	}
	if (size == 0)
		return 0;
	p = &ps[data[0] % FJ_NSETS];
	n = size - 1;
	m = malloc(n ? n : 1);
	FUZZ_CHECK(m != NULL);
	memcpy(m, data + 1, n);
	metrics_json_walk(p, m, m + n, out);
	for (unsigned s = 0; s < p->n_slots; s++) {
		const struct metrics_json_span *o = &out[s];

		if (o->kind == METRICS_JSON_NONE)
			continue;
		FUZZ_CHECK(o->p >= m && o->p + o->len <= m + n);
		switch (o->kind) {
		case METRICS_JSON_STRING:
			FUZZ_CHECK(o->p > m && o->p[-1] == '"' && o->p + o->len < m + n &&
				   o->p[o->len] == '"');
			break;
		case METRICS_JSON_OBJECT: /* brackets are counted, not matched: "{]" is a value */
			FUZZ_CHECK(o->len >= 2 && o->p[0] == '{' &&
				   (o->p[o->len - 1] == '}' || o->p[o->len - 1] == ']'));
			break;
		case METRICS_JSON_ARRAY:
			FUZZ_CHECK(o->len >= 2 && o->p[0] == '[' &&
				   (o->p[o->len - 1] == '}' || o->p[o->len - 1] == ']'));
			break;
		case METRICS_JSON_LITERAL:
			FUZZ_CHECK(o->len >= 1);
			for (uint32_t i = 0; i < o->len; i++)
				FUZZ_CHECK(!fj_delim(o->p[i]));
			break;
		default:
			FUZZ_CHECK(0);
		}
	}
	{
		static struct metrics_scan sc[2];
		static int scan_init;

		if (!scan_init) {
			metrics_scan_init(&sc[0], "s", "n");
			metrics_scan_init(&sc[1], "sym", "seqId");
			scan_init = 1;
		}
		for (unsigned k = 0; k < 2; k++) {
			uint64_t k1[4] = {0}, k2[4] = {0}, s1 = 0, s2 = 0;
			uint32_t l1 = 0, l2 = 0;
			int r1 = metrics_scan_known(&sc[k], m, m + n, k1, &l1, &s1);
			int r2 = metrics_scan_general(&sc[k], m, m + n, k2, &l2, &s2);

			if (r1 < 0)
				continue;
			FUZZ_CHECK(r1 == r2);
			if (r1 == METRICS_SCAN_TICK)
				FUZZ_CHECK(l1 == l2 && s1 == s2 && memcmp(k1, k2, sizeof(k1)) == 0);
		}
	}
	metrics_json_walk(p, m, m + n, again);
	for (unsigned s = 0; s < p->n_slots; s++) {
		FUZZ_CHECK(again[s].kind == out[s].kind);
		if (out[s].kind != METRICS_JSON_NONE)
			FUZZ_CHECK(again[s].p == out[s].p && again[s].len == out[s].len);
	}
	free(m);
	return 0;
}
