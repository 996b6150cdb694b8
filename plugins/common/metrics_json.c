/* SPDX-License-Identifier: BSD-3-Clause
 * metrics_json — path capture over JSON messages for the metrics stage.
 *
 *   metrics_json_compile  control path: dotted paths -> a trie laid out so that
 *                         each node's children are consecutive
 *   metrics_json_walk     per message: mj_value() on the top-level value; an
 *                         object or array on the trie is entered (mj_object,
 *                         mj_array), every other value is skipped whole (mj_skip:
 *                         memchr over strings, a depth count over brackets)
 *
 * Not a validator: the walk needs only as much structure as it passes through,
 * and stops at the first byte it cannot place.
 */
#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "metrics_json.h"

#define MJ_NO_INDEX INT32_MIN

/* ---- compile ---- */

struct mj_tmp {
	int parent;
	const char *name;
	unsigned len;
	int leaf;
	unsigned n_children;
};

static int32_t
mj_index(const char *s, unsigned len)
{
	int32_t v = 0;

	if (len == 2 && s[0] == '-' && s[1] == '1')
		return -1;
	if (len == 0 || len > 9 || (len > 1 && s[0] == '0'))
		return MJ_NO_INDEX;
	for (unsigned i = 0; i < len; i++) {
		if (s[i] < '0' || s[i] > '9')
			return MJ_NO_INDEX;
		v = v * 10 + (s[i] - '0');
	}
	return v;
}

int
metrics_json_compile(struct metrics_json_paths *ps, const char *const *paths, unsigned n,
		     unsigned *slot, char *err, size_t errlen)
{
	struct mj_tmp t[METRICS_JSON_MAX_NODES];
	int order[METRICS_JSON_MAX_NODES], pos[METRICS_JSON_MAX_NODES];
	unsigned nt = 1, no = 0, nslots = 0, noff = 0;

	memset(ps, 0, sizeof(*ps));
	if (n > METRICS_JSON_MAX_PATHS) {
		snprintf(err, errlen, "more than %d paths", METRICS_JSON_MAX_PATHS);
		return -EINVAL;
	}
	t[0] = (struct mj_tmp){.parent = -1, .leaf = -1};
	for (unsigned i = 0; i < n; i++) {
		const char *p = paths[i];
		size_t plen = strlen(p);
		int cur = 0;
		unsigned depth = 0;

		if (plen == 0 || plen > METRICS_JSON_NAME_MAX) {
			snprintf(err, errlen, "path \"%s\": 1 to %d bytes", p,
				 METRICS_JSON_NAME_MAX);
			return -EINVAL;
		}
		while (*p) {
			const char *dot = strchr(p, '.');
			unsigned len = dot ? (unsigned)(dot - p) : (unsigned)strlen(p);
			int c = -1;

			if (len == 0 || (dot != NULL && dot[1] == '\0')) {
				snprintf(err, errlen, "path \"%s\": an empty component", paths[i]);
				return -EINVAL;
			}
			if (++depth > METRICS_JSON_MAX_DEPTH) {
				snprintf(err, errlen, "path \"%s\": more than %d components",
					 paths[i], METRICS_JSON_MAX_DEPTH);
				return -EINVAL;
			}
			if (t[cur].leaf >= 0) {
				snprintf(err, errlen,
					 "path \"%s\" goes inside another path's value", paths[i]);
				return -EINVAL;
			}
			for (unsigned k = 1; k < nt && c < 0; k++)
				if (t[k].parent == cur && t[k].len == len &&
				    memcmp(t[k].name, p, len) == 0)
					c = (int)k;
			if (c < 0) {
				if (nt == METRICS_JSON_MAX_NODES) {
					snprintf(err, errlen,
						 "paths: more than %d components in all",
						 METRICS_JSON_MAX_NODES - 1);
					return -EINVAL;
				}
				t[nt] = (struct mj_tmp){
					.parent = cur, .name = p, .len = len, .leaf = -1};
				t[cur].n_children++;
				c = (int)nt++;
			}
			cur = c;
			p += len;
			if (*p == '.')
				p++;
		}
		if (t[cur].n_children != 0) {
			snprintf(err, errlen, "path \"%s\" is a prefix of another path", paths[i]);
			return -EINVAL;
		}
		if (t[cur].leaf < 0)
			t[cur].leaf = (int)nslots++;
		slot[i] = (unsigned)t[cur].leaf;
	}

	/* breadth first: each node's children end up consecutive */
	order[no++] = 0;
	pos[0] = 0;
	for (unsigned h = 0; h < no; h++) {
		int u = order[h];
		struct metrics_json_node *d = &ps->node[h];

		d->first = (uint8_t)no;
		for (unsigned k = 1; k < nt; k++) {
			if (t[k].parent == u) {
				pos[k] = (int)no;
				order[no++] = (int)k;
			}
		}
		d->n = (uint8_t)(no - d->first);
		d->leaf = (int8_t)t[u].leaf;
		if (u != 0) {
			d->name_off = (uint8_t)noff;
			d->name_len = (uint8_t)t[u].len;
			memcpy(ps->names + noff, t[u].name, t[u].len);
			noff += t[u].len;
		}
		d->index = u == 0 ? MJ_NO_INDEX : mj_index(t[u].name, t[u].len);
		d->under_last = u != 0 && (d->index == -1 || ps->node[pos[t[u].parent]].under_last);
	}
	for (unsigned h = no; h-- > 0;) {
		struct metrics_json_node *d = &ps->node[h];

		d->below = d->leaf >= 0 ? 1u << d->leaf : 0;
		for (unsigned k = 0; k < d->n; k++)
			d->below |= ps->node[d->first + k].below;
	}
	ps->n_nodes = no;
	ps->n_slots = nslots;
	ps->all = ps->node[0].below;
	return 0;
}

/* ---- walk ---- */

struct mj_walk {
	const struct metrics_json_paths *ps;
	const uint8_t *end;
	struct metrics_json_span *out;
	uint32_t got;
	bool done;
};

static inline const uint8_t *
mj_ws(const uint8_t *p, const uint8_t *end)
{
	while (p < end && (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r'))
		p++;
	return p;
}


static inline bool
mj_delim(uint8_t c)
{
	return c == ',' || c == '}' || c == ']' || c == ':' || c == ' ' || c == '\t' || c == '\n' ||
	       c == '\r' || c == '"' || c == '{' || c == '[';
}

/* past the value at p (no leading blanks), or NULL */
static const uint8_t *
mj_skip(const uint8_t *p, const uint8_t *end)
{
	unsigned depth = 0;

	if (p >= end)
		return NULL;
	if (*p == '"') {
		p = mj_str_end(p + 1, end);
		return p ? p + 1 : NULL;
	}
	if (*p != '{' && *p != '[') {
		const uint8_t *p0 = p;

		while (p < end && !mj_delim(*p))
			p++;
		return p == p0 ? NULL : p;
	}
	for (; p < end; p++) {
		switch (*p) {
		case '"':
			p = mj_str_end(p + 1, end);
			if (p == NULL)
				return NULL;
			break;
		case '{':
		case '[':
			depth++;
			break;
		case '}':
		case ']':
			if (--depth == 0)
				return p + 1;
			break;
		default:
			break;
		}
	}
	return NULL;
}

static const uint8_t *mj_value(struct mj_walk *w, const struct metrics_json_node *nd,
			       const uint8_t *p);

static const uint8_t *
mj_object(struct mj_walk *w, const struct metrics_json_node *nd, const uint8_t *p)
{
	const struct metrics_json_paths *ps = w->ps;
	const uint8_t *end = w->end;

	p = mj_ws(p + 1, end);
	if (p < end && *p == '}')
		return p + 1;
	for (;;) {
		const struct metrics_json_node *c = NULL;
		const uint8_t *k, *q;
		size_t klen;

		if (p >= end || *p != '"')
			return NULL;
		k = p + 1;
		q = mj_str_end(k, end);
		if (q == NULL)
			return NULL;
		klen = (size_t)(q - k);
		p = mj_ws(q + 1, end);
		if (p >= end || *p != ':')
			return NULL;
		p = mj_ws(p + 1, end);
		for (unsigned i = 0; i < nd->n; i++) {
			const struct metrics_json_node *d = &ps->node[nd->first + i];

			if (d->name_len == klen && memcmp(ps->names + d->name_off, k, klen) == 0) {
				c = d;
				break;
			}
		}
		if (c != NULL && (c->under_last || (c->below & ~w->got) != 0)) {
			p = mj_value(w, c, p);
			if (w->done)
				return p;
		} else {
			p = mj_skip(p, end);
		}
		if (p == NULL)
			return NULL;
		p = mj_ws(p, end);
		if (p >= end)
			return NULL;
		if (*p == '}')
			return p + 1;
		if (*p != ',')
			return NULL;
		p = mj_ws(p + 1, end);
	}
}

static void
mj_clear(struct mj_walk *w, uint32_t slots)
{
	for (unsigned s = 0; slots != 0; s++, slots >>= 1)
		if (slots & 1)
			w->out[s].kind = METRICS_JSON_NONE;
}

static const uint8_t *
mj_array(struct mj_walk *w, const struct metrics_json_node *nd, const uint8_t *p)
{
	const struct metrics_json_paths *ps = w->ps;
	const struct metrics_json_node *last = NULL;
	const uint8_t *end = w->end;
	int32_t max_index = -1;

	for (unsigned i = 0; i < nd->n; i++) {
		const struct metrics_json_node *d = &ps->node[nd->first + i];

		if (d->index == -1)
			last = d;
		else if (d->index > max_index)
			max_index = d->index;
	}
	if (last == NULL && max_index < 0)
		return mj_skip(p, end); /* no component here indexes an array */
	p = mj_ws(p + 1, end);
	if (p < end && *p == ']') {
		p++;
		goto close;
	}
	for (int32_t i = 0;; i++) {
		const uint8_t *v = p, *after = NULL;

		if (i <= max_index) {
			for (unsigned k = 0; k < nd->n; k++) {
				const struct metrics_json_node *d = &ps->node[nd->first + k];

				if (d->index == i && (d->under_last || (d->below & ~w->got) != 0)) {
					after = mj_value(w, d, v);
					if (w->done)
						return after;
					if (after == NULL)
						return NULL;
				}
			}
		}
		if (last != NULL) {
			mj_clear(w,
				 last->below); /* the last element's values, not an earlier one's */
			after = mj_value(w, last, v);
			if (after == NULL)
				return NULL;
		}
		if (after == NULL) {
			after = mj_skip(v, end);
			if (after == NULL)
				return NULL;
		}
		p = mj_ws(after, end);
		if (p >= end)
			return NULL;
		if (*p == ']') {
			p++;
			break;
		}
		if (*p != ',')
			return NULL;
		p = mj_ws(p + 1, end);
	}
close:
	if (last != NULL && !nd->under_last) {
		uint32_t b = last->below;

		for (unsigned s = 0; b != 0; s++, b >>= 1)
			if ((b & 1) && w->out[s].kind != METRICS_JSON_NONE)
				w->got |= 1u << s;
		if (w->got == ps->all)
			w->done = true;
	}
	return p;
}

static const uint8_t *
mj_value(struct mj_walk *w, const struct metrics_json_node *nd, const uint8_t *p)
{
	const uint8_t *end = w->end, *q;

	if (p >= end)
		return NULL;
	if (nd->leaf >= 0) {
		struct metrics_json_span *o = &w->out[nd->leaf];
		uint32_t bit = 1u << nd->leaf;

		if (*p == '"') {
			q = mj_str_end(p + 1, end);
			if (q == NULL)
				return NULL;
			o->p = p + 1;
			o->len = (uint32_t)(q - p - 1);
			o->kind = METRICS_JSON_STRING;
			q++;
		} else {
			q = mj_skip(p, end);
			if (q == NULL)
				return NULL;
			o->p = p;
			o->len = (uint32_t)(q - p);
			o->kind = *p == '{'   ? METRICS_JSON_OBJECT
				  : *p == '[' ? METRICS_JSON_ARRAY
					      : METRICS_JSON_LITERAL;
		}
		if (!nd->under_last) {
			w->got |= bit;
			if (w->got == w->ps->all)
				w->done = true;
		}
		return q;
	}
	if (*p == '{')
		return mj_object(w, nd, p);
	if (*p == '[')
		return mj_array(w, nd, p);
	return mj_skip(p, end);
}

void
metrics_json_walk(const struct metrics_json_paths *ps, const uint8_t *p, const uint8_t *end,
		  struct metrics_json_span *out)
{
	struct mj_walk w = {.ps = ps, .end = end, .out = out};

	for (unsigned s = 0; s < ps->n_slots; s++)
		out[s].kind = METRICS_JSON_NONE;
	if (ps->all == 0)
		return;
	p = mj_ws(p, end);
	(void)mj_value(&w, &ps->node[0], p);
}
