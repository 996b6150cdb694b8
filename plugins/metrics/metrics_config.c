/* SPDX-License-Identifier: BSD-3-Clause
 * metrics_config.c — the metrics stage's options: the option table, the
 * checks of `lcpipe check` (validate) and the paths mode's compilation
 * (select/reset values, the JSON paths), shared with init (metrics.h).
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "metrics.h"

/* ---- options ---- */

/* the rows metrics_naive has too (its table is the default mode's) */
#define MT_OPT_MAX_CONNS \
	LCP_OPT_UINT(struct metrics_conf, max_conns, "max_conns", "16", 0, MT_MAX_CONNS, 0, \
		     "connections (conn_id 0 .. max_conns-1) with their own conn<i>_msgs/_bytes counters; the others count under conn_other_*")
#define MT_OPT_SYMBOLS \
	LCP_OPT_UINT(struct metrics_conf, symbols, "symbols", "4096", 1, MT_SYMBOLS_MAX, 0, \
		     "(conn_id, symbol) pairs whose sequence is tracked (128 bytes each); ticks of further symbols count under symbol_table_full")
#define MT_OPT_SAMPLE \
	LCP_OPT_UINT(struct metrics_conf, sample, "sample", "1", 1, 1000000000, 0, \
		     "latency of every Nth message (the 1st, N+1th, ...); 1 = every message")
#define MT_OPT_SEQ_FIELD \
	LCP_OPT_STRING(struct metrics_conf, seq_field, "seq_field", "\"n\"", 1, MT_FIELD_MAX, 0, \
		       "JSON key of a tick's sequence number (an unsigned decimal); in paths mode a path such as \"data.u\" (the last update id of a range), a number or a string of digits")
#define MT_OPT_SYMBOL_FIELD \
	LCP_OPT_STRING(struct metrics_conf, symbol_field, "symbol_field", "\"s\"", 1, MT_FIELD_MAX, 0, \
		       "JSON key of a tick's symbol (a string of at most 31 bytes); in paths mode a path such as \"data.s\" or \"arg.instId\"")
#define MT_OPT_LOG_BUCKETS \
	LCP_OPT_BOOL(struct metrics_conf, log_buckets, "log_buckets", "true", \
		     "log the histogram's bucket bounds (ns) at start")

const struct lcp_opt metrics_opts[] = {
	MT_OPT_MAX_CONNS,
	MT_OPT_SYMBOLS,
	MT_OPT_SAMPLE,
	MT_OPT_SEQ_FIELD,
	MT_OPT_SYMBOL_FIELD,
	LCP_OPT_STRING(struct metrics_conf, seq_first_field, "seq_first_field", "\"\"", 0, MT_FIELD_MAX, 0,
		       "path of the first update id a message covers (Binance \"U\"): it must be the last message's seq_field + 1; \"\" = single numbers; sets paths mode"),
	LCP_OPT_STRING(struct metrics_conf, seq_prev_field, "seq_prev_field", "\"\"", 0, MT_FIELD_MAX, 0,
		       "path of the sequence number of the message before (OKX \"prevSeqId\", Deribit \"prev_change_id\"): it must equal the last seq_field; \"\" = off; sets paths mode"),
	LCP_OPT_STRING(struct metrics_conf, select_field, "select_field", "\"\"", 0, MT_FIELD_MAX, 0,
		       "path of a field whose value picks the messages that are ticks (\"e\", \"type\", \"channel\"); the others count under unselected; \"\" = every message; sets paths mode"),
	LCP_OPT_STRING(struct metrics_conf, select_value, "select_value", "\"\"", 0, MT_VALUE_LEN, 0,
		       "values of select_field that pick a message, comma-separated, a trailing * matches a prefix (\"depthUpdate\", \"snapshot,update\", \"orderbook.*\")"),
	LCP_OPT_STRING(struct metrics_conf, reset_field, "reset_field", "\"\"", 0, MT_FIELD_MAX, 0,
		       "path of a field whose value marks a message (a snapshot) that restarts its symbol's sequence (seq_resets) instead of being judged; \"\" = off; sets paths mode"),
	LCP_OPT_STRING(struct metrics_conf, reset_value, "reset_value", "\"\"", 0, MT_VALUE_LEN, 0,
		       "values of reset_field that restart the sequence, as select_value (\"snapshot\")"),
	MT_OPT_LOG_BUCKETS,
	LCP_OPT_END,
};

/* metrics_naive (metrics_naive.c): no paths mode */
const struct lcp_opt metrics_naive_opts[] = {
	MT_OPT_MAX_CONNS,
	MT_OPT_SYMBOLS,
	MT_OPT_SAMPLE,
	MT_OPT_SEQ_FIELD,
	MT_OPT_SYMBOL_FIELD,
	MT_OPT_LOG_BUCKETS,
	LCP_OPT_END,
};

static int
metrics_check_field(const char *what, const char *f, char *msg, size_t msglen)
{
	for (const char *p = f; *p; p++) {
		if (*p == '"' || *p == '\\' || (unsigned char)*p < 0x20) {
			snprintf(msg, msglen, "%s \"%s\": a key with a quote, backslash or control character cannot be matched", what, f);
			return -EINVAL;
		}
	}
	return 0;
}

/* ---- paths mode: options ---- */



static int
mt_values_parse(const char *what, const char *s, struct mt_values *v, char *msg, size_t msglen)
{
	size_t o = 0;

	memset(v, 0, sizeof(*v));
	snprintf(v->buf, sizeof(v->buf), "%s", s);
	for (;;) {
		const char *e = strchr(s + o, ',');
		size_t len = e ? (size_t)(e - s - o) : strlen(s + o);
		bool prefix = len > 0 && s[o + len - 1] == '*';

		if (len == 0) {
			snprintf(msg, msglen, "%s \"%s\": an empty value", what, s);
			return -EINVAL;
		}
		if (v->n == MT_VALUES_MAX) {
			snprintf(msg, msglen, "%s \"%s\": more than %d values", what, s, MT_VALUES_MAX);
			return -EINVAL;
		}
		if (memchr(s + o, '*', len - prefix) != NULL) {
			snprintf(msg, msglen, "%s \"%s\": '*' only at the end of a value (a prefix)", what, s);
			return -EINVAL;
		}
		v->off[v->n] = (uint8_t)o;
		v->len[v->n] = (uint8_t)(len - prefix);
		v->prefix[v->n] = prefix;
		v->n++;
		if (e == NULL)
			return 0;
		o += len + 1;
	}
}

bool
mt_paths_wanted(const struct metrics_conf *c)
{
	return c->seq_first_field[0] != '\0' || c->seq_prev_field[0] != '\0' ||
	       c->select_field[0] != '\0' || c->reset_field[0] != '\0' ||
	       strchr(c->symbol_field, '.') != NULL || strchr(c->seq_field, '.') != NULL;
}



int
mt_paths_build(const struct metrics_conf *c, struct mt_pathconf *pc, char *msg, size_t msglen)
{
	const char *list[MT_N_PATHS];
	unsigned idx[MT_N_PATHS], n = 0, slot[MT_N_PATHS];
	char err[160];
	static const char *const names[MT_N_PATHS] = { "symbol_field", "seq_field", NULL, "select_field",
						       "reset_field" };

	memset(pc, 0, sizeof(*pc));
	pc->path[MT_PATH_SYM] = c->symbol_field;
	pc->path[MT_PATH_SEQ] = c->seq_field;
	pc->seq_mode = MT_SEQ_PLAIN;
	if (c->seq_first_field[0] != '\0' && c->seq_prev_field[0] != '\0') {
		snprintf(msg, msglen, "seq_first_field and seq_prev_field are both set: a message's sequence is a range (first, last) or a chain (prev, this), not both");
		return -EINVAL;
	}
	if (c->seq_first_field[0] != '\0') {
		pc->path[MT_PATH_LO] = c->seq_first_field;
		pc->seq_mode = MT_SEQ_RANGE;
	} else if (c->seq_prev_field[0] != '\0') {
		pc->path[MT_PATH_LO] = c->seq_prev_field;
		pc->seq_mode = MT_SEQ_PREV;
	}
	if ((c->select_field[0] == '\0') != (c->select_value[0] == '\0')) {
		snprintf(msg, msglen, "select_field and select_value go together (\"%s\", \"%s\")",
			 c->select_field, c->select_value);
		return -EINVAL;
	}
	if ((c->reset_field[0] == '\0') != (c->reset_value[0] == '\0')) {
		snprintf(msg, msglen, "reset_field and reset_value go together (\"%s\", \"%s\")",
			 c->reset_field, c->reset_value);
		return -EINVAL;
	}
	if (c->select_field[0] != '\0') {
		pc->path[MT_PATH_SEL] = c->select_field;
		if (mt_values_parse("select_value", c->select_value, &pc->sel, msg, msglen) != 0)
			return -EINVAL;
	}
	if (c->reset_field[0] != '\0') {
		pc->path[MT_PATH_RESET] = c->reset_field;
		if (mt_values_parse("reset_value", c->reset_value, &pc->reset, msg, msglen) != 0)
			return -EINVAL;
	}
	if (pc->path[MT_PATH_LO] != NULL) {
		const char *lo = pc->seq_mode == MT_SEQ_RANGE ? "seq_first_field" : "seq_prev_field";

		if (strcmp(pc->path[MT_PATH_LO], c->seq_field) == 0 ||
		    strcmp(pc->path[MT_PATH_LO], c->symbol_field) == 0) {
			snprintf(msg, msglen, "%s \"%s\" is also the symbol or sequence field", lo,
				 pc->path[MT_PATH_LO]);
			return -EINVAL;
		}
	}
	for (unsigned k = 0; k < MT_N_PATHS; k++) {
		if (pc->path[k] != NULL) {
			idx[n] = k;
			list[n++] = pc->path[k];
		}
	}
	if (metrics_json_compile(&pc->pj, list, n, slot, err, sizeof(err)) != 0) {
		for (unsigned i = 0; i < n; i++) {
			char q[MT_FIELD_MAX + 8];

			snprintf(q, sizeof(q), "path \"%s\"", list[i]);
			if (strncmp(err, q, strlen(q)) == 0) {
				const char *what = names[idx[i]] ? names[idx[i]]
					: pc->seq_mode == MT_SEQ_RANGE ? "seq_first_field" : "seq_prev_field";

				snprintf(msg, msglen, "%s: %s", what, err);
				return -EINVAL;
			}
		}
		snprintf(msg, msglen, "paths: %s", err);
		return -EINVAL;
	}
	for (unsigned i = 0; i < n; i++)
		pc->slot[idx[i]] = slot[i];
	return 0;
}

int
metrics_validate(const void *conf, char *msg, size_t msglen)
{
	const struct metrics_conf *c = conf;
	struct mt_pathconf pc;

	if (metrics_check_field("seq_field", c->seq_field, msg, msglen) != 0 ||
	    metrics_check_field("symbol_field", c->symbol_field, msg, msglen) != 0 ||
	    metrics_check_field("seq_first_field", c->seq_first_field, msg, msglen) != 0 ||
	    metrics_check_field("seq_prev_field", c->seq_prev_field, msg, msglen) != 0 ||
	    metrics_check_field("select_field", c->select_field, msg, msglen) != 0 ||
	    metrics_check_field("reset_field", c->reset_field, msg, msglen) != 0)
		return -EINVAL;
	if (strcmp(c->seq_field, c->symbol_field) == 0) {
		snprintf(msg, msglen, "seq_field and symbol_field are both \"%s\"", c->seq_field);
		return -EINVAL;
	}
	if (!mt_paths_wanted(c)) {
		if (c->select_value[0] != '\0' || c->reset_value[0] != '\0') {
			snprintf(msg, msglen, "%s without %s", c->select_value[0] ? "select_value" : "reset_value",
				 c->select_value[0] ? "select_field" : "reset_field");
			return -EINVAL;
		}
		return 0;
	}
	return mt_paths_build(c, &pc, msg, msglen);
}
