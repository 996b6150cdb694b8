/* SPDX-License-Identifier: BSD-3-Clause
 * ab_plan.c — lcpipe ab: the plan: what a validated config says about its
 * pipeline (its sinks, by graph.c's rule; what leaves each lcore) (ab_priv.h).
 */
#include "ab_priv.h"

/* ---- the plan ---- */

const struct lcp_stage_ops *
stage_ops(const struct lcp_cfg_stage *cs)
{
	return (const struct lcp_stage_ops *)cs->pf->desc->ops;
}

struct ab_lcore *
plan_lcore(struct ab_plan *p, unsigned lcore)
{
	for (unsigned i = 0; i < p->n_lcores; i++)
		if (p->lcores[i].lcore == lcore)
			return &p->lcores[i];
	p->lcores = realloc(p->lcores, (p->n_lcores + 1) * sizeof(*p->lcores));
	memset(&p->lcores[p->n_lcores], 0, sizeof(*p->lcores));
	p->lcores[p->n_lcores].lcore = lcore;
	return &p->lcores[p->n_lcores++];
}

void
lcore_exit(struct ab_lcore *lc, const char *stage, const char *port)
{
	struct ab_exit *x;

	lc->exits = realloc(lc->exits, (lc->n_exits + 1) * sizeof(*lc->exits));
	x = &lc->exits[lc->n_exits++];
	x->stage = strdup(stage);
	x->ctr = NULL;
	if (port != NULL && asprintf(&x->ctr, "%s.out", port) < 0)
		x->ctr = NULL;
}

int
lcore_cmp(const void *a, const void *b)
{
	const struct ab_lcore *x = a, *y = b;

	return x->lcore < y->lcore ? -1 : x->lcore > y->lcore;
}

void
plan_build(struct ab_plan *p, const struct lcp_cfg *c)
{
	bool strict = false;

	for (unsigned i = 0; i < c->n_stages; i++)
		strict |= lcp_cfg_stage_is_sink(&c->stages[i], true);
	for (unsigned i = 0; i < c->n_stages; i++) {
		const struct lcp_cfg_stage *cs = &c->stages[i];
		const struct lcp_port_def *ports = stage_ops(cs)->ports;
		struct ab_lcore *lc = plan_lcore(p, cs->lcore);

		lc->stage = lc->n_stages++ == 0 ? (char *)cs->name : NULL;
		if (lcp_cfg_stage_is_sink(cs, strict)) {
			p->sinks = realloc(p->sinks, (p->n_sinks + 1) * sizeof(*p->sinks));
			p->sinks[p->n_sinks++] = strdup(cs->name);
			lcore_exit(lc, cs->name, NULL);
			for (unsigned k = 0; k < cs->n_ports; k++)
				if (ports[k].dir == LCP_PORT_IN && cs->links_in[k] > 0) {
					p->units |= 1u << ports[k].unit;
					lc->units |= 1u << ports[k].unit;
				}
		}
		for (unsigned k = 0; k < cs->n_ports; k++) {
			int l = cs->link_out[k];

			if (l >= 0 && c->stages[c->links[l].dst].lcore != cs->lcore) {
				lcore_exit(lc, cs->name, ports[k].name);
				lc->units |= 1u << ports[k].unit;
			}
		}
	}
	for (unsigned i = 0; i < p->n_lcores; i++)
		if (p->lcores[i].stage != NULL)
			p->lcores[i].stage = strdup(p->lcores[i].stage);
	qsort(p->lcores, p->n_lcores, sizeof(*p->lcores), lcore_cmp);
}

void
plan_free(struct ab_plan *p)
{
	lcp_strv_free(p->sinks, p->n_sinks);
	for (unsigned i = 0; i < p->n_lcores; i++) {
		for (unsigned k = 0; k < p->lcores[i].n_exits; k++) {
			free(p->lcores[i].exits[k].stage);
			free(p->lcores[i].exits[k].ctr);
		}
		free(p->lcores[i].exits);
		free(p->lcores[i].stage);
	}
	free(p->lcores);
	memset(p, 0, sizeof(*p));
}

/* singular and plural name of what a set of units counts */
const char *
unit_word(unsigned units, bool plural)
{
	switch (units) {
	case 1u << LCP_UNIT_PKT:
		return plural ? "pkts" : "pkt";
	case 1u << LCP_UNIT_MSG:
		return plural ? "msgs" : "msg";
	case 1u << LCP_UNIT_STREAM:
		return plural ? "stream mbufs" : "stream mbuf";
	default:
		return plural ? "objs" : "obj";
	}
}
