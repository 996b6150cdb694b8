/* SPDX-License-Identifier: BSD-3-Clause
 * metrics_json — the path walk of the metrics stage (doc/metrics.md, "Paths"),
 * also sink_nats' subject templates:
 * a few dotted paths ("data.s", "arg.instId", "data.0.seqId", "data.-1.trade_id")
 * compiled into a trie, and one walk over a JSON message that captures the
 * value of each path, descending only along the trie and skipping every other
 * value whole. No DPDK, no allocation: tests/unit/test_metrics_json.c runs it
 * directly.
 */
#ifndef METRICS_JSON_H
#define METRICS_JSON_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#define METRICS_JSON_MAX_PATHS 8  /* paths per set */
#define METRICS_JSON_MAX_DEPTH 8  /* components per path */
#define METRICS_JSON_MAX_NODES 40 /* trie nodes, the root included */
#define METRICS_JSON_NAME_MAX 31  /* bytes of a path */

enum metrics_json_kind {
	METRICS_JSON_NONE = 0, /* the path is not in the message */
	METRICS_JSON_STRING,   /* p, len: the body between the quotes, escapes as sent */
	METRICS_JSON_LITERAL,  /* p, len: a number, true, false or null as sent */
	METRICS_JSON_OBJECT,   /* p, len: the whole value, braces included */
	METRICS_JSON_ARRAY,
};

struct metrics_json_span {
	const uint8_t *p;
	uint32_t len;
	uint8_t kind; /* enum metrics_json_kind */
};

/* A trie node: one path component. Children are consecutive in node[]. */
struct metrics_json_node {
	uint8_t name_off, name_len; /* the component in names[] */
	int32_t index;		    /* an array index: >= 0, -1 the last element; INT32_MIN: none */
	int8_t leaf;		    /* capture slot, or -1 for an inner node */
	uint8_t first, n;	    /* children: node[first .. first + n - 1] */
	uint8_t under_last;	    /* this node or an ancestor is a "-1" component */
	uint32_t below;		    /* slots captured at or below this node (bit mask) */
};

struct metrics_json_paths {
	struct metrics_json_node node[METRICS_JSON_MAX_NODES];
	unsigned n_nodes, n_slots;
	uint32_t all; /* every slot's bit */
	char names[METRICS_JSON_MAX_PATHS * (METRICS_JSON_NAME_MAX + 1)];
};

/* Compile n paths into ps. Path i is captured into slot slot[i] of the walk's
 * output; equal paths share a slot. Returns 0, or -EINVAL with the reason in
 * err: an empty component, more than METRICS_JSON_MAX_DEPTH components, a path
 * that is a prefix of another (its value would be both captured and walked
 * into), too many paths or nodes. */
int metrics_json_compile(struct metrics_json_paths *ps, const char *const *paths, unsigned n,
			 unsigned *slot, char *err, size_t errlen);

/* Walk the JSON text [p, end) and fill out[0 .. ps->n_slots - 1]. The first
 * occurrence of a key wins. Stops as soon as every slot is captured (what
 * follows is never read), at the end of the top-level value, or at the first
 * byte that is not JSON where a value or separator must be (what was captured
 * before stays). Keys are compared as raw bytes, escapes are not decoded. */
void metrics_json_walk(const struct metrics_json_paths *ps, const uint8_t *p, const uint8_t *end,
		       struct metrics_json_span *out);

/* the closing quote of the string whose body starts at s, or NULL */
static inline __attribute__((always_inline)) const uint8_t *
mj_str_end(const uint8_t *s, const uint8_t *end)
{
	const uint8_t *p = s, *q, *b;

	for (;;) {
		q = memchr(p, '"', (size_t)(end - p));
		if (q == NULL)
			return NULL;
		for (b = q; b > s && b[-1] == '\\'; b--)
			;
		if (((q - b) & 1) == 0)
			return q;
		p = q + 1;
	}
}

#endif
