/* SPDX-License-Identifier: BSD-3-Clause
 * pool.c — the pools stages make with lcp_pool_create(): built by the pool
 * module the config selects for the stage, listed for the report (module, size,
 * objects out, peak, failed gets) and checked for leaks when freed.
 *
 * Control path only: create and free run on the control thread (stage init and
 * fini), so the list needs no lock; get/put are the inlines of lcp/pool.h and
 * go straight to the module.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <rte_malloc.h>

#include <lcp/log.h>

#include "engine_priv.h"

struct lcp_pool *
lcp_pool_create(struct lcp_stage *st, const char *name, size_t obj_size, unsigned n,
		unsigned cache)
{
	struct lcp_stage_priv *sp = (struct lcp_stage_priv *)st;
	struct lcp_engine *e = sp->eng;
	const struct lcp_strategy_ref *ref = &sp->cs->strat.pool;
	const struct lcp_pool_ops *ops = ref->pf->desc->ops;
	struct lcp_pool *p, **v;
	char dname[26];

	p = rte_zmalloc_socket("lcp_pool", sizeof(*p), RTE_CACHE_LINE_SIZE, sp->socket);
	v = realloc(e->pools, (e->n_pools + 1) * sizeof(*e->pools));
	if (p == NULL || v == NULL) {
		lcp_log(st, LCP_LOG_ERR, "pool %s: out of memory", name);
		rte_free(p);
		return NULL;
	}
	e->pools = v;
	/* DPDK object names are short: a process-unique prefix and the start of
	 * the stage's own name; the report carries the full one */
	snprintf(dname, sizeof(dname), "lp%u_%s", e->pool_seq++, name);
	p->pool = ops->create(ref->conf, dname, obj_size, n, cache, sp->socket);
	if (p->pool == NULL) {
		lcp_log(st, LCP_LOG_ERR, "pool %s: %s cannot make %u objects of %zu bytes: %s (%s)", name,
			ref->plugin, n, obj_size, strerror(errno), ref->path);
		rte_free(p);
		return NULL;
	}
	p->get_bulk = ops->get_bulk;
	p->put_bulk = ops->put_bulk;
	p->ops = ops;
	p->st = st;
	p->obj_size = obj_size;
	p->n = n;
	p->module = ref->plugin;
	snprintf(p->name, sizeof(p->name), "%s", name);
	e->pools[e->n_pools++] = p;
	return p;
}

unsigned
lcp_pool_in_use(const struct lcp_pool *p)
{
	return p->ops->in_use(p->pool);
}

static json_t *
pool_json(const struct lcp_pool *p, unsigned in_use)
{
	return json_pack("{s:s, s:s, s:s, s:I, s:I, s:I, s:I, s:I}", "stage", lcp_stage_name(p->st),
			 "name", p->name, "module", p->module, "obj_size", (json_int_t)p->obj_size,
			 "objects", (json_int_t)p->n, "in_use", (json_int_t)in_use, "peak_in_use",
			 (json_int_t)(p->peak > in_use ? p->peak : in_use), "get_fail",
			 (json_int_t)__atomic_load_n(&p->get_fail, __ATOMIC_RELAXED));
}

void
lcp_pool_free(struct lcp_pool *p)
{
	struct lcp_engine *e;
	unsigned in_use;

	if (p == NULL)
		return;
	e = ((struct lcp_stage_priv *)p->st)->eng;
	in_use = p->ops->in_use(p->pool);
	if (in_use != 0) {
		lcp_log(p->st, LCP_LOG_ERR, "pool %s (%s): %u of %u objects were never given back", p->name,
			p->module, in_use, p->n);
		e->pool_leaked += in_use;
	}
	if (e->pool_reports == NULL)
		e->pool_reports = json_array();
	json_array_append_new(e->pool_reports, pool_json(p, in_use));
	for (unsigned i = 0; i < e->n_pools; i++) {
		if (e->pools[i] == p) {
			e->pools[i] = e->pools[--e->n_pools];
			break;
		}
	}
	p->ops->destroy(p->pool);
	rte_free(p);
}

/* called by the stats ticks: keep a peak of objects out */
void
lcp_pools_sample(struct lcp_engine *e)
{
	for (unsigned i = 0; i < e->n_pools; i++) {
		unsigned u = e->pools[i]->ops->in_use(e->pools[i]->pool);

		if (u > e->pools[i]->peak)
			e->pools[i]->peak = u;
	}
}

/* live pools, then those already freed */
json_t *
lcp_pools_json(struct lcp_engine *e)
{
	json_t *a = json_array();
	size_t i;
	json_t *v;

	for (unsigned k = 0; k < e->n_pools; k++)
		json_array_append_new(a, pool_json(e->pools[k], e->pools[k]->ops->in_use(e->pools[k]->pool)));
	json_array_foreach(e->pool_reports, i, v)
		json_array_append(a, v);
	return a;
}
