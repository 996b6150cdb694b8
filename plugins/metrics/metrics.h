/* SPDX-License-Identifier: BSD-3-Clause
 * metrics.h — what the metrics stage's files share: its options (struct
 * metrics_conf), the paths mode's compiled configuration, and the entry points
 * of metrics_config.c (the option table, validate, the paths mode's checks).
 * metrics.c holds the stage: the tick scan, the symbol table, the histogram,
 * process, init, stop. */
#ifndef LCP_PLUGIN_METRICS_H
#define LCP_PLUGIN_METRICS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <lcp/lcp.h>

#include "metrics_json.h"
#include "metrics_scan.h"

#define MT_MAX_CONNS 16 /* per-connection counters exist for conn_id 0..15 */
#define MT_FIELD_MAX METRICS_FIELD_MAX /* field name length */
#define MT_SYMBOLS_MAX (1u << 20)
#define MT_VALUES_MAX 8     /* values of select_value / reset_value */
#define MT_VALUE_LEN 255    /* their total length */

struct metrics_conf {
	uint32_t max_conns;
	uint32_t symbols;
	uint32_t sample;
	const char *seq_field;
	const char *symbol_field;
	const char *seq_first_field;
	const char *seq_prev_field;
	const char *select_field;
	const char *select_value;
	const char *reset_field;
	const char *reset_value;
	bool naive;
	bool log_buckets;
};


enum { MT_SEQ_PLAIN, MT_SEQ_RANGE, MT_SEQ_PREV };

/* select_value / reset_value: comma-separated, a trailing '*' for a prefix */
struct mt_values {
	unsigned n;
	uint8_t off[MT_VALUES_MAX], len[MT_VALUES_MAX];
	bool prefix[MT_VALUES_MAX];
	char buf[MT_VALUE_LEN + 1];
};


/* the paths of a conf, in slot order: symbol, seq, first/prev, select, reset */
enum { MT_PATH_SYM, MT_PATH_SEQ, MT_PATH_LO, MT_PATH_SEL, MT_PATH_RESET, MT_N_PATHS };

struct mt_pathconf {
	const char *path[MT_N_PATHS]; /* NULL: not configured */
	unsigned slot[MT_N_PATHS];
	struct metrics_json_paths pj;
	struct mt_values sel, reset;
	unsigned seq_mode;
};


/* metrics_config.c */
extern const struct lcp_opt metrics_opts[];
int metrics_validate(const void *conf, char *msg, size_t msglen);
/* whether the conf needs the paths mode (dotted fields, select, reset, ranges) */
bool mt_paths_wanted(const struct metrics_conf *c);
/* compile the conf's paths into pc; 0, or -EINVAL with the reason in msg */
int mt_paths_build(const struct metrics_conf *c, struct mt_pathconf *pc, char *msg, size_t msglen);

#endif
