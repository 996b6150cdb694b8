/* SPDX-License-Identifier: BSD-3-Clause
 * graph.c — links and the checks on the whole graph, before any lcore starts:
 * link syntax, unknown stage/port, direction, unit mismatch, self-loop, an output
 * linked twice, ring size, required ports, isolated stages, lcore availability.
 * Also which lcores EAL will have, read from the EAL arguments without EAL.
 */
#include <ctype.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lcp_priv.h"

static const char *const lcp_unit_names[] = { "?", "pkt", "stream", "msg" };

static const char *
unit_name(unsigned u)
{
	return u <= LCP_UNIT_MSG ? lcp_unit_names[u] : "?";
}

/* ---- EAL lcores ---- */

/* "1,3-5" or "(1,2)" sets; marks ids in avail; returns -1 on junk */
static int
parse_idset(const char *s, const char *end, bool *avail)
{
	while (s < end) {
		char *e;
		long a, b;

		while (s < end && (*s == '(' || *s == ')' || *s == ','))
			s++;
		if (s >= end)
			break;
		a = strtol(s, &e, 10);
		if (e == s)
			return -1;
		b = a;
		s = e;
		if (s < end && *s == '-') {
			b = strtol(s + 1, &e, 10);
			if (e == s + 1)
				return -1;
			s = e;
		}
		/* from 0, not from a: "-l -99999999999-2" must not count up from
		 * LONG_MIN (fuzz_config found that hang, 2026-12-05) */
		for (long k = a < 0 ? 0 : a; k <= b && k < LCP_MAX_LCORES; k++)
			avail[k] = true;
	}
	return 0;
}

/* --lcores: elements separated by top-level commas, each "set[@cpus]" */
static void
parse_lcores_map(const char *s, bool *avail)
{
	const char *p = s;

	while (*p) {
		const char *start = p, *at = NULL;
		int depth = 0;

		for (; *p && !(*p == ',' && depth == 0); p++) {
			if (*p == '(')
				depth++;
			else if (*p == ')')
				depth--;
			else if (*p == '@' && depth == 0 && at == NULL)
				at = p;
		}
		parse_idset(start, at ? at : p, avail);
		if (*p == ',')
			p++;
	}
}

void
lcp_eal_lcores(char *const *eal, unsigned n, bool *avail, unsigned *main_lcore)
{
	bool given = false;
	long main_arg = -1;

	memset(avail, 0, LCP_MAX_LCORES * sizeof(*avail));
	for (unsigned i = 0; i < n; i++) {
		const char *a = eal[i], *val = NULL;

#define OPTVAL(short_, long_)                                                   \
	((strcmp(a, short_) == 0 || strcmp(a, long_) == 0) && i + 1 < n ? eal[++i] : \
	 strncmp(a, long_ "=", strlen(long_) + 1) == 0 ? a + strlen(long_) + 1 :     \
	 strncmp(a, short_, 2) == 0 && strlen(short_) == 2 && a[2] ? a + 2 : NULL)
		if (strncmp(a, "-l", 2) == 0 || strncmp(a, "--lcores", 8) == 0) {
			bool is_map = strncmp(a, "--lcores", 8) == 0;

			val = is_map ? OPTVAL("--lcores", "--lcores") : OPTVAL("-l", "-l");
			if (val != NULL) {
				memset(avail, 0, LCP_MAX_LCORES * sizeof(*avail));
				if (is_map || strchr(val, '@') || strchr(val, '('))
					parse_lcores_map(val, avail);
				else
					parse_idset(val, val + strlen(val), avail);
				given = true;
			}
		} else if (strncmp(a, "-c", 2) == 0 && strncmp(a, "--", 2) != 0) {
			val = OPTVAL("-c", "-c");
			if (val != NULL) {
				unsigned long long m = strtoull(val, NULL, 16);

				memset(avail, 0, LCP_MAX_LCORES * sizeof(*avail));
				for (int k = 0; k < 64; k++)
					if (m & (1ull << k))
						avail[k] = true;
				given = true;
			}
		} else if (strncmp(a, "--main-lcore", 12) == 0) {
			val = OPTVAL("--main-lcore", "--main-lcore");
			if (val != NULL)
				main_arg = strtol(val, NULL, 10);
		}
#undef OPTVAL
	}
	if (!given) {
		cpu_set_t cs;

		if (sched_getaffinity(0, sizeof(cs), &cs) == 0) {
			for (int k = 0; k < LCP_MAX_LCORES && k < CPU_SETSIZE; k++)
				avail[k] = CPU_ISSET(k, &cs);
		} else {
			avail[0] = true;
		}
	}
	*main_lcore = 0;
	if (main_arg >= 0 && main_arg < LCP_MAX_LCORES) {
		*main_lcore = (unsigned)main_arg;
	} else {
		for (unsigned k = 0; k < LCP_MAX_LCORES; k++) {
			if (avail[k]) {
				*main_lcore = k;
				break;
			}
		}
	}
}

static void
lcore_list(const struct lcp_cfg *c, struct lcp_sbuf *b)
{
	bool first = true;

	lcp_sbuf_addf(b, "%s", "");
	for (unsigned k = 0; k < LCP_MAX_LCORES; k++) {
		if (c->lcore_avail[k] && k != c->main_lcore) {
			lcp_sbuf_addf(b, "%s%u", first ? "" : ",", k);
			first = false;
		}
	}
	if (first)
		lcp_sbuf_addf(b, "(none: give EAL at least two lcores, e.g. \"-l\", \"0,1\")");
}

/* ---- links ---- */

static int
find_stage(const struct lcp_cfg *c, const char *name, size_t len)
{
	for (unsigned i = 0; i < c->n_stages; i++)
		if (strlen(c->stages[i].name) == len && strncmp(c->stages[i].name, name, len) == 0)
			return (int)i;
	return -1;
}

static const struct lcp_port_def *
stage_ports(const struct lcp_cfg_stage *s)
{
	return ((const struct lcp_stage_ops *)s->pf->desc->ops)->ports;
}

/* resolve "stage.port"; returns 0 and fills, or -1 after an error */
static int
resolve_end(struct lcp_cfg *c, const char *path, const char *ref, unsigned *stage, unsigned *port,
	    struct lcp_errs *errs)
{
	const char *dot = strrchr(ref, '.');
	int si;
	unsigned k = 0;

	*stage = UINT32_MAX;
	if (dot == NULL || dot == ref || dot[1] == '\0') {
		lcp_errs_add(errs, "%s: \"%s\" is not of the form stage.port", path, ref);
		return -1;
	}
	si = find_stage(c, ref, (size_t)(dot - ref));
	if (si < 0) {
		struct lcp_sbuf b = { 0 };
		struct lcp_suggest sg;
		char want[LCP_NAME_MAX * 2];

		snprintf(want, sizeof(want), "%.*s", (int)(dot - ref), ref);
		lcp_suggest_init(&sg, want);
		lcp_sbuf_addf(&b, "%s", "");
		for (unsigned i = 0, m = 0; i < c->n_stages; i++)
			if (c->stages[i].name[0]) {
				lcp_sbuf_addf(&b, "%s%s", m++ ? ", " : "", c->stages[i].name);
				lcp_suggest_try(&sg, c->stages[i].name);
			}
		lcp_errs_add(errs, "%s: unknown stage \"%.*s\"%s; stages: %s", path, (int)(dot - ref), ref,
			     lcp_suggest_hint(&sg), b.s);
		lcp_sbuf_free(&b);
		return -1;
	}
	*stage = (unsigned)si;
	c->stages[si].used = true; /* even if this link fails: no follow-on "isolated" */
	if (c->stages[si].pf == NULL)
		return -1; /* its plugin error is already reported */
	for (const struct lcp_port_def *p = stage_ports(&c->stages[si]); p->name; p++, k++) {
		if (strcmp(p->name, dot + 1) == 0) {
			*stage = (unsigned)si;
			*port = k;
			return 0;
		}
	}
	{
		struct lcp_sbuf b = { 0 };
		struct lcp_suggest sg;

		k = 0;
		lcp_suggest_init(&sg, dot + 1);
		lcp_sbuf_addf(&b, "%s", "");
		for (const struct lcp_port_def *p = stage_ports(&c->stages[si]); p->name; p++, k++) {
			lcp_sbuf_addf(&b, "%s%s (%s %s)", k ? ", " : "", p->name,
				      p->dir == LCP_PORT_IN ? "in" : "out", unit_name(p->unit));
			lcp_suggest_try(&sg, p->name);
		}
		lcp_errs_add(errs, "%s: stage \"%s\" (%s) has no port \"%s\"%s; ports: %s", path,
			     c->stages[si].name, c->stages[si].plugin, dot + 1, lcp_suggest_hint(&sg), b.s);
		lcp_sbuf_free(&b);
	}
	return -1;
}

static char *
trim(char *s)
{
	char *e;

	while (isspace((unsigned char)*s))
		s++;
	e = s + strlen(s);
	while (e > s && isspace((unsigned char)e[-1]))
		*--e = '\0';
	return s;
}

/* a link object's options (lcp_link_opts) over the engine's defaults in l;
 * "from" and "to" are load_link's to check, "batch" too. A value refused
 * leaves the link invalid (-1), so a flag set for it is moot */
static int
load_link_opts(struct lcp_cfg *c, struct lcp_cfg_link *l, json_t *v, const char *path,
	       struct lcp_errs *errs)
{
	static const char *const objs[] = { "batch", NULL };
	struct lcp_link_conf lc = { .ring_size = l->ring_size, .burst = l->burst, .on_full = l->on_full,
				    .block_timeout_us = l->block_timeout_us };
	int rc = lcp_opt_set_keys(lcp_link_opts, objs, v, &lc, path, errs, c->keep);

	l->ring_size = lc.ring_size;
	l->burst = lc.burst;
	l->on_full = lc.on_full;
	l->block_timeout_us = lc.block_timeout_us;
	l->burst_set = json_object_get(v, "burst") != NULL;
	l->on_full_set = json_object_get(v, "on_full") != NULL;
	l->timeout_set = json_object_get(v, "block_timeout_us") != NULL;
	return rc;
}

static void
load_link(struct lcp_cfg *c, unsigned i, json_t *v, struct lcp_errs *errs)
{
	struct lcp_cfg_link *l = &c->links[i];
	char path[64], *from = NULL, *to = NULL;
	const struct lcp_port_def *sp, *dp;
	int bad = 0;

	snprintf(path, sizeof(path), "links[%u]", i);
	l->ring_size = c->eng.ring_size;
	l->burst = c->eng.burst;
	l->on_full = c->eng.on_ring_full;
	l->block_timeout_us = c->eng.block_timeout_us;
	if (json_is_string(v)) {
		const char *s = json_string_value(v), *arrow = strstr(s, "->");

		if (arrow == NULL) {
			lcp_errs_add(errs, "%s: expected \"stage.port -> stage.port\", got \"%s\"", path, s);
			return;
		}
		from = strndup(s, (size_t)(arrow - s));
		to = strdup(arrow + 2);
	} else if (json_is_object(v)) {
		json_t *f = json_object_get(v, "from"), *t = json_object_get(v, "to");

		if (load_link_opts(c, l, v, path, errs) < 0)
			bad = 1;
		if (f == NULL || t == NULL) {
			lcp_errs_add(errs, "%s: \"from\" and \"to\" are required strings \"stage.port\"", path);
			return;
		}
		if (!json_is_string(f) || !json_is_string(t))
			return; /* refused by load_link_opts */
		from = strdup(json_string_value(f));
		to = strdup(json_string_value(t));
		if (json_object_get(v, "batch") != NULL) {
			char p[80];

			snprintf(p, sizeof(p), "%s.batch", path);
			lcp_strategy_ref_load(c, json_object_get(v, "batch"), p, &l->batch, LCP_KIND_BATCH,
					      errs);
			if (l->batch.pf == NULL)
				bad = 1;
		}
	} else {
		lcp_errs_add(errs, "%s: expected \"stage.port -> stage.port\" or an object", path);
		return;
	}
	l->src = l->dst = UINT32_MAX;
	if (resolve_end(c, path, trim(from), &l->src, &l->src_port, errs) < 0)
		bad = 1;
	if (resolve_end(c, path, trim(to), &l->dst, &l->dst_port, errs) < 0)
		bad = 1;
	if (bad)
		goto out;
	if (l->batch.plugin == NULL)
		l->batch = c->stages[l->src].strat.batch;
	sp = &stage_ports(&c->stages[l->src])[l->src_port];
	dp = &stage_ports(&c->stages[l->dst])[l->dst_port];
	if (sp->dir != LCP_PORT_OUT) {
		lcp_errs_add(errs, "%s: %s is an input port and cannot start a link", path, trim(from));
		goto out;
	}
	if (dp->dir != LCP_PORT_IN) {
		lcp_errs_add(errs, "%s: %s is an output port and cannot end a link", path, trim(to));
		goto out;
	}
	if (l->src == l->dst) {
		lcp_errs_add(errs, "%s: self-loop: stage \"%s\" is linked to itself", path,
			     c->stages[l->src].name);
		goto out;
	}
	if (sp->unit != dp->unit) {
		lcp_errs_add(errs, "%s: unit mismatch: %s carries %s, %s expects %s", path, trim(from),
			     unit_name(sp->unit), trim(to), unit_name(dp->unit));
		goto out;
	}
	if (c->stages[l->src].link_out[l->src_port] >= 0) {
		lcp_errs_add(errs, "%s: %s is already linked by links[%d]; an output port feeds one input",
			     path, trim(from), c->stages[l->src].link_out[l->src_port]);
		goto out;
	}
	c->stages[l->src].link_out[l->src_port] = (int)i;
	c->stages[l->dst].links_in[l->dst_port]++;
	l->valid = true;
out:
	/* the link was meant to connect these: no follow-on "required port not
	 * linked" error for them, the link's own error says what is wrong */
	if (!l->valid) {
		if (l->src != UINT32_MAX)
			c->stages[l->src].link_failed = true;
		if (l->dst != UINT32_MAX)
			c->stages[l->dst].link_failed = true;
	}
	free(from);
	free(to);
}

/* ---- cycles ----
 * One depth-first search for both cycle checks: nodes 0..n-1, edges given by
 * an enumerator; the first cycle found is returned as its edge ids, in order. */
struct cyc_graph {
	const struct lcp_cfg *c;
	unsigned n;       /* nodes */
	const bool *skip; /* nodes left out (may be NULL) */
	/* the first edge leaving node u at or after cursor *k (advance *k past it):
	 * its id and its target node; false when there is none left */
	bool (*next)(const struct lcp_cfg *c, unsigned u, unsigned *k, int *id, unsigned *v);
};

struct cyc_state {
	uint8_t *state; /* 0 unseen, 1 on the current path, 2 done */
	unsigned *from; /* node before it on the current path */
	int *via;       /* edge that entered it */
	int *path;      /* out: the cycle's edges */
	unsigned len;
};

static bool
cyc_dfs(const struct cyc_graph *g, struct cyc_state *s, unsigned u)
{
	unsigned k = 0, v;
	int id;

	s->state[u] = 1;
	while (g->next(g->c, u, &k, &id, &v)) {
		if (g->skip != NULL && g->skip[v])
			continue;
		if (s->state[v] == 1) {
			/* v -> ... -> u on the path, then this edge back to v */
			unsigned n = 1, x = u;

			for (; x != v; x = s->from[x])
				n++;
			s->len = n;
			s->path[--n] = id;
			for (x = u; x != v; x = s->from[x])
				s->path[--n] = s->via[x];
			return true;
		}
		if (s->state[v] == 0) {
			s->from[v] = u;
			s->via[v] = id;
			if (cyc_dfs(g, s, v))
				return true;
		}
	}
	s->state[u] = 2;
	return false;
}

/* the edges of the first cycle into path (room for g->n); its length, 0 if none */
static unsigned
find_cycle(const struct cyc_graph *g, int *path)
{
	struct cyc_state s = {
		.state = calloc(g->n + 1, 1),
		.from = calloc(g->n + 1, sizeof(unsigned)),
		.via = calloc(g->n + 1, sizeof(int)),
		.path = path,
	};

	for (unsigned u = 0; u < g->n && s.len == 0; u++)
		if (s.state[u] == 0 && (g->skip == NULL || !g->skip[u]))
			cyc_dfs(g, &s, u);
	free(s.state);
	free(s.from);
	free(s.via);
	return s.len;
}

/* Links that block when full between lcores: a cycle of them across lcores can
 * deadlock (each lcore waits for room in a ring only the next one empties, and
 * a waiting lcore runs none of its stages). Nodes are lcores, an edge is a
 * valid "block" link from a stage on one lcore to a stage on another. */
static bool
block_next(const struct lcp_cfg *c, unsigned lc, unsigned *k, int *id, unsigned *v)
{
	for (; *k < c->n_links; (*k)++) {
		const struct lcp_cfg_link *l = &c->links[*k];
		unsigned a, b;

		if (!l->valid || l->on_full != LCP_FULL_BLOCK)
			continue; /* a holding link never waits: no edge of a deadlock */
		a = c->stages[l->src].lcore;
		b = c->stages[l->dst].lcore;
		if (a != lc || b == a || b >= LCP_MAX_LCORES)
			continue;
		*id = (int)(*k)++;
		*v = b;
		return true;
	}
	return false;
}

/* Stream links between lcores never lose a byte: TCP has acknowledged what
 * they carry, and a hole in a stream cannot be repaired. A producer port that
 * keeps what the ring refuses (LCP_PORT_F_HOLDS: tcp.data) holds; every other
 * one blocks, with no time limit (on_full "drop" or a block_timeout_us given
 * in the link is refused, naming it); the engine's on_ring_full and
 * block_timeout_us are for pkt and msg links. */
static void
check_stream_links(struct lcp_cfg *c, struct lcp_errs *errs)
{
	for (unsigned i = 0; i < c->n_links; i++) {
		struct lcp_cfg_link *l = &c->links[i];
		const struct lcp_port_def *sp;

		if (!l->valid || c->stages[l->src].lcore == c->stages[l->dst].lcore)
			continue;
		sp = &stage_ports(&c->stages[l->src])[l->src_port];
		if (sp->unit != LCP_UNIT_STREAM)
			continue;
		if (sp->flags & LCP_PORT_F_HOLDS) {
			l->on_full = LCP_FULL_HOLD;
			continue;
		}
		if (l->on_full_set && l->on_full == LCP_FULL_DROP)
			lcp_errs_add(errs, "links[%u].on_full: \"drop\" on %s.%s -> %s.%s, a stream link between lcores "
				     "%u and %u: a dropped SEND or event tears the TCP stream for good; leave on_full "
				     "out (stream links block) or put both stages on one lcore",
				     i, c->stages[l->src].name, sp->name, c->stages[l->dst].name,
				     stage_ports(&c->stages[l->dst])[l->dst_port].name, c->stages[l->src].lcore,
				     c->stages[l->dst].lcore);
		else if (l->timeout_set && l->block_timeout_us != 0)
			lcp_errs_add(errs, "links[%u].block_timeout_us: %u on a stream link between lcores: it would "
				     "drop what is still waiting after that long and tear the TCP stream; leave it out "
				     "(stream links wait until the engine stops)",
				     i, l->block_timeout_us);
		l->on_full = LCP_FULL_BLOCK;
		l->block_timeout_us = 0;
	}
}

static void
check_block_cycles(const struct lcp_cfg *c, struct lcp_errs *errs)
{
	const struct cyc_graph g = { .c = c, .n = LCP_MAX_LCORES, .next = block_next };
	int cyc[LCP_MAX_LCORES + 1];
	unsigned n = find_cycle(&g, cyc);
	struct lcp_sbuf b = { 0 };

	if (n == 0)
		return;
	for (unsigned i = 0; i < n; i++) {
		const struct lcp_cfg_link *l = &c->links[cyc[i]];

		lcp_sbuf_addf(&b, "%slinks[%d] (lcore %u -> %u)", i ? ", " : "", cyc[i],
			      c->stages[l->src].lcore, c->stages[l->dst].lcore);
	}
	lcp_errs_add(errs, "links: on_full \"block\" on a cycle between lcores can deadlock: %s; "
		     "set a pkt or msg link among them to \"drop\" (stream links cannot drop) or put its stages on one lcore", b.s);
	lcp_sbuf_free(&b);
}

/* Message loops: links made only of pass-throughs. Nodes are links; an edge
 * goes from link i to link j when j leaves the stage i enters through an output
 * that passes on what arrives on i's input port (LCP_PORT_F_FORWARDS). Around
 * such a cycle the same objects go for ever: on one lcore lcp_emit() recurses
 * into the stages until its depth limit drops them (drop_loop), across lcores
 * they fill the rings. A cycle through a stage that answers with objects of its
 * own (tcp.data -> ws.in, ws.tx -> tcp.app) is a request and its reply: it ends
 * when the protocol does, and is not refused. */
static bool
forward_next(const struct lcp_cfg *c, unsigned i, unsigned *k, int *id, unsigned *v)
{
	const struct lcp_cfg_link *li = &c->links[i];

	if (!li->valid)
		return false;
	for (; *k < c->n_links; (*k)++) {
		const struct lcp_cfg_link *lj = &c->links[*k];
		uint16_t f;

		if (!lj->valid || lj->src != li->dst)
			continue;
		f = stage_ports(&c->stages[lj->src])[lj->src_port].flags;
		if (!(f & LCP_PORT_F_FORWARD) || LCP_PORT_FORWARD_FROM(f) != li->dst_port)
			continue;
		*id = (int)*k;
		*v = (*k)++;
		return true;
	}
	return false;
}

/* one message loop: cyc[0..n-1], links */
static void
report_forward_loop(const struct lcp_cfg *c, const int *cyc, unsigned n, struct lcp_errs *errs)
{
	struct lcp_sbuf path = { 0 }, ids = { 0 }, stages = { 0 };
	unsigned first = 0;
	bool one_lcore = true;

	/* start at the link listed first in the config */
	for (unsigned i = 1; i < n; i++)
		if (cyc[i] < cyc[first])
			first = i;
	for (unsigned m = 0; m < n; m++) {
		const struct lcp_cfg_link *l = &c->links[cyc[(first + m) % n]];
		const struct lcp_cfg_stage *s = &c->stages[l->src], *d = &c->stages[l->dst];

		lcp_sbuf_addf(&path, "%s%s.%s -> %s.%s", m ? " -> " : "", s->name,
			      stage_ports(s)[l->src_port].name, d->name, stage_ports(d)[l->dst_port].name);
		lcp_sbuf_addf(&ids, "%slinks[%d]", m ? ", " : "", cyc[(first + m) % n]);
		lcp_sbuf_addf(&stages, "%s%s (%s)", m ? ", " : "", s->name, s->plugin);
		one_lcore &= d->lcore == s->lcore;
	}
	if (one_lcore)
		lcp_errs_add(errs, "links: %s forms a message loop on lcore %u: %s pass on what they receive, so the same objects would go round for ever (%s); remove one of these links or end the path in a stage that consumes what it receives",
			     path.s, c->stages[c->links[cyc[first]].src].lcore, stages.s, ids.s);
	else
		lcp_errs_add(errs, "links: %s forms a message loop across lcores: %s pass on what they receive, so the same objects would go round for ever (%s); remove one of these links or end the path in a stage that consumes what it receives",
			     path.s, stages.s, ids.s);
	lcp_sbuf_free(&path);
	lcp_sbuf_free(&ids);
	lcp_sbuf_free(&stages);
}

/* every loop, each once: the links of a loop reported are left out of the next search */
static void
check_forward_loops(const struct lcp_cfg *c, struct lcp_errs *errs)
{
	bool *skip = calloc(c->n_links + 1, sizeof(*skip));
	const struct cyc_graph g = { .c = c, .n = c->n_links, .skip = skip, .next = forward_next };
	int *cyc = calloc(c->n_links + 1, sizeof(*cyc));
	unsigned n;

	while ((n = find_cycle(&g, cyc)) > 0) {
		report_forward_loop(c, cyc, n, errs);
		for (unsigned i = 0; i < n; i++)
			skip[cyc[i]] = true;
	}
	free(cyc);
	free(skip);
}

void
lcp_graph_check(struct lcp_cfg *c, struct lcp_errs *errs)
{
	json_t *arr = json_object_get(c->root, "links"), *v;
	size_t i;

	if (arr != NULL && !json_is_array(arr)) {
		lcp_errs_add(errs, "links: expected an array");
		arr = NULL;
	}
	if (arr != NULL) {
		c->n_links = (unsigned)json_array_size(arr);
		c->links = calloc(c->n_links + 1, sizeof(*c->links));
		json_array_foreach(arr, i, v)
			load_link(c, (unsigned)i, v, errs);
		check_stream_links(c, errs);
		check_block_cycles(c, errs);
		check_forward_loops(c, errs);
	}
	for (unsigned s = 0; s < c->n_stages; s++) {
		struct lcp_cfg_stage *st = &c->stages[s];
		unsigned k = 0;

		if (st->lcore < LCP_MAX_LCORES && st->name[0]) {
			if (!c->lcore_avail[st->lcore]) {
				struct lcp_sbuf b = { 0 };

				lcore_list(c, &b);
				lcp_errs_add(errs, "stages[%u].lcore: lcore %u is not available to EAL; worker lcores: %s",
					     s, st->lcore, b.s);
				lcp_sbuf_free(&b);
			} else if (st->lcore == c->main_lcore) {
				struct lcp_sbuf b = { 0 };

				lcore_list(c, &b);
				lcp_errs_add(errs, "stages[%u].lcore: lcore %u is the main lcore, which runs the control loop; worker lcores: %s",
					     s, st->lcore, b.s);
				lcp_sbuf_free(&b);
			}
		}
		if (st->pf == NULL || st->name[0] == '\0')
			continue;
		if (!st->used && c->n_stages > 1) {
			lcp_errs_add(errs, "stages[%u]: stage \"%s\" is isolated: no link uses it", s, st->name);
			continue;
		}
		for (const struct lcp_port_def *p = stage_ports(st); p->name; p++, k++) {
			bool linked = p->dir == LCP_PORT_IN ? st->links_in[k] > 0 : st->link_out[k] >= 0;

			if ((p->flags & LCP_PORT_F_REQUIRED) && !linked && !st->link_failed)
				lcp_errs_add(errs, "stages[%u]: required %s port \"%s\" of stage \"%s\" (%s) is not linked",
					     s, p->dir == LCP_PORT_IN ? "input" : "output", p->name,
					     st->name, st->plugin);
		}
	}
}

/* ---- mbuf budget ---- */

#ifndef RTE_PKTMBUF_HEADROOM
#define RTE_PKTMBUF_HEADROOM 128
#endif

uint32_t
lcp_mbuf_room(const struct lcp_cfg *c)
{
	uint32_t r = c->eng.mbuf_data_room;

	return r > RTE_PKTMBUF_HEADROOM ? r - RTE_PKTMBUF_HEADROOM : 1;
}

/* "12,345" */
static const char *
count_str(uint64_t v, char *buf, size_t len)
{
	char tmp[32];
	int n = snprintf(tmp, sizeof(tmp), "%llu", (unsigned long long)v), o = 0;

	for (int i = 0; i < n && (size_t)o + 2 < len; i++) {
		if (i > 0 && (n - i) % 3 == 0)
			buf[o++] = ',';
		buf[o++] = tmp[i];
	}
	buf[o] = '\0';
	return buf;
}

/* connections a transport stage carries: those the stages on its stream ports
 * open or serve (one for a stage that does not say), its own, at least one, at
 * most its max_conns */
static uint64_t
transport_conns(const struct lcp_cfg *c, unsigned t)
{
	const struct lcp_mbuf_hold *h = &c->stages[t].mbufs;
	uint64_t n = h->conns;
	bool *seen = calloc(c->n_stages + 1, sizeof(*seen));

	for (unsigned i = 0; i < c->n_links; i++) {
		const struct lcp_cfg_link *l = &c->links[i];
		unsigned o;

		if (!l->valid || stage_ports(&c->stages[l->src])[l->src_port].unit != LCP_UNIT_STREAM)
			continue;
		if (l->src != t && l->dst != t)
			continue;
		o = l->src == t ? l->dst : l->src;
		if (seen[o])
			continue;
		seen[o] = true;
		n += c->stages[o].has_mbufs && c->stages[o].mbufs.conns ? c->stages[o].mbufs.conns : 1;
	}
	free(seen);
	if (n == 0)
		n = 1;
	return n < h->max_conns ? n : h->max_conns;
}

void
lcp_mbuf_budget(struct lcp_cfg *c)
{
	struct lcp_sbuf parts = { 0 }, ring_ids = { 0 };
	uint64_t total = 0, top = 0, rings = 0;
	unsigned n_rings = 0, n_parts = 0;
	int top_stage = -1;
	char a[32], b[32], d[32];

	for (unsigned s = 0; s < c->n_stages; s++) {
		const struct lcp_cfg_stage *st = &c->stages[s];
		const struct lcp_mbuf_hold *h = &st->mbufs;
		uint64_t conns = 0, sum;

		if (!st->has_mbufs)
			continue;
		if (h->max_conns > 0)
			conns = transport_conns(c, s);
		sum = h->fixed + conns * h->per_conn;
		if (sum == 0)
			continue;
		total += sum;
		if (sum > top) {
			top = sum;
			top_stage = (int)s;
		}
		if (conns > 0)
			lcp_sbuf_addf(&parts, "%s%s (stages[%u]): %s connection%s × (%s) = %s", n_parts ? "; " : "",
				      st->name, s, count_str(conns, a, sizeof(a)), conns == 1 ? "" : "s", h->what,
				      count_str(sum, b, sizeof(b)));
		else
			lcp_sbuf_addf(&parts, "%s%s (stages[%u]): %s = %s", n_parts ? "; " : "", st->name, s,
				      h->what, count_str(sum, b, sizeof(b)));
		n_parts++;
	}
	for (unsigned i = 0; i < c->n_links; i++) {
		const struct lcp_cfg_link *l = &c->links[i];
		unsigned u;

		if (!l->valid || c->stages[l->src].lcore == c->stages[l->dst].lcore)
			continue;
		u = stage_ports(&c->stages[l->src])[l->src_port].unit;
		if (u != LCP_UNIT_PKT && u != LCP_UNIT_STREAM)
			continue;
		rings += l->ring_size - 1; /* an rte_ring holds one less than its size */
		lcp_sbuf_addf(&ring_ids, "%slinks[%u]", n_rings++ ? ", " : "", i);
	}
	if (top_stage < 0 || total + rings <= c->eng.mbufs)
		goto out;
	if (n_rings > 0)
		lcp_sbuf_addf(&parts, "; %u ring%s of links between lcores (%s) = %s", n_rings,
			      n_rings == 1 ? "" : "s", ring_ids.s, count_str(rings, a, sizeof(a)));
	lcp_errs_add(&c->warns,
		     "stages[%d].options%s%s: the mbuf pool can run dry: %s; together %s mbufs can be held, "
		     "more than engine.mbufs %s: raise engine.mbufs to at least %s or lower these options, "
		     "the connections or the ring sizes",
		     top_stage, c->stages[top_stage].mbufs.opt[0] ? "." : "", c->stages[top_stage].mbufs.opt,
		     parts.s, count_str(total + rings, a, sizeof(a)), count_str(c->eng.mbufs, b, sizeof(b)),
		     count_str(total + rings, d, sizeof(d)));
out:
	lcp_sbuf_free(&parts);
	lcp_sbuf_free(&ring_ids);
}

/* A sink of the graph: no linked output. With strict, also no poll(): a port
 * whose rx is unlinked ends one branch (gen -> port tx) but in a loopback the
 * frames it sends come back through another port to the real sink, and counting
 * both would double "delivered". Strict sinks are used when there are any.
 * The stats' "delivered" and lcpipe ab's plan both use it. */
bool
lcp_cfg_stage_is_sink(const struct lcp_cfg_stage *cs, bool strict)
{
	const struct lcp_stage_ops *ops = cs->pf->desc->ops;

	for (unsigned k = 0; k < cs->n_ports; k++)
		if (cs->link_out[k] >= 0)
			return false;
	return !strict || ops->poll == NULL;
}
