/* SPDX-License-Identifier: BSD-3-Clause
 * engine.c — build the running pipeline from a validated config, and tear it
 * down: EAL, the rx-TSC dynfield, mbuf pools, stages and their counter sets,
 * edges (direct calls on one lcore, SP/SC rings across lcores), the walk's
 * plan, workers. The run itself is control.c's; what stages call, stage_api.c.
 */
#include <errno.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <signal.h>
#include <time.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <rte_cycles.h>
#include <rte_eal.h>
#include <rte_errno.h>
#include <rte_launch.h>
#include <rte_lcore.h>
#include <rte_malloc.h>
#include <rte_mbuf.h>
#include <rte_mbuf_dyn.h>

#include <lcp/log.h>
#include <lcp/mbuf.h>

#include <lcp/stream.h>

#include "engine_priv.h"

int lcp_rx_tsc_offset = -1;
int lcp_stream_offset = -1;

/* the input vector of dp's input port `port`, made on first use */
static struct lcp_pend_q *
pend_of(struct lcp_stage_priv *dp, unsigned port, unsigned unit)
{
	if (dp->pend == NULL && (dp->pend = calloc(dp->cs->n_ports + 1, sizeof(*dp->pend))) == NULL)
		return NULL;
	if (dp->pend[port] == NULL)
		dp->pend[port] = lcp_pend_new(&dp->pub, port, unit, dp->socket);
	return dp->pend[port];
}

/* depth-first from sp along same-lcore links; appends sp after what it reaches */
static void
walk_dfs(struct lcp_stage_priv *sp, bool *seen, struct lcp_stage_priv **post, unsigned *n_post)
{
	seen[sp->index] = true;
	for (unsigned k = 0; k < sp->cs->n_ports; k++) {
		struct lcp_stage_priv *dp = (struct lcp_stage_priv *)sp->edges[k].dst;

		if (dp != NULL && !seen[dp->index])
			walk_dfs(dp, seen, post, n_post);
	}
	post[(*n_post)++] = sp;
}

/* The order a worker walks its input vectors in: the reverse postorder of a
 * depth-first search over the lcore's same-lcore links, started from its
 * sources (pollers), then from the stages its rings feed, then from any stage
 * left, in config order. On a DAG that is a topological order (every stage
 * after all that feed it, as rte_graph walks); a link that closes a cycle
 * (ws.tx -> tcp.app, tcp.tx -> port) points backwards, and what it carries is
 * taken in the walk's next round. */
static int
plan_walk(struct lcp_engine *e, struct lcp_worker *w)
{
	bool *seen = calloc(e->n_stages + 1, sizeof(*seen));
	struct lcp_stage_priv **post = calloc(e->n_stages + 1, sizeof(*post));
	unsigned n_post = 0, n_q = 0;

	if (seen == NULL || post == NULL)
		goto fail;
	for (unsigned i = 0; i < w->n_pollers; i++)
		if (!seen[((struct lcp_stage_priv *)w->pollers[i])->index])
			walk_dfs((struct lcp_stage_priv *)w->pollers[i], seen, post, &n_post);
	for (unsigned i = 0; i < w->n_rins; i++)
		if (!seen[((struct lcp_stage_priv *)w->rins[i].dst)->index])
			walk_dfs((struct lcp_stage_priv *)w->rins[i].dst, seen, post, &n_post);
	for (unsigned i = 0; i < w->n_stages; i++)
		if (!seen[((struct lcp_stage_priv *)w->stages[i])->index])
			walk_dfs((struct lcp_stage_priv *)w->stages[i], seen, post, &n_post);
	for (unsigned i = 0; i < n_post; i++)
		if (post[i]->pend != NULL)
			for (unsigned k = 0; k < post[i]->cs->n_ports; k++)
				n_q += post[i]->pend[k] != NULL;
	w->pends = calloc(n_q + 1, sizeof(*w->pends));
	if (w->pends == NULL)
		goto fail;
	for (unsigned i = n_post; i-- > 0;)
		if (post[i]->pend != NULL)
			for (unsigned k = 0; k < post[i]->cs->n_ports; k++)
				if (post[i]->pend[k] != NULL)
					w->pends[w->n_pends++] = post[i]->pend[k];
	free(seen);
	free(post);
	return 0;
fail:
	free(seen);
	free(post);
	return -ENOMEM;
}

/* ---- build ---- */

static const struct lcp_port_def *
ports_of(const struct lcp_stage_priv *sp)
{
	return ((const struct lcp_stage_ops *)sp->cs->pf->desc->ops)->ports;
}

static char *
xasprintf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static char *
xasprintf(const char *fmt, ...)
{
	va_list ap;
	char *s;

	va_start(ap, fmt);
	if (vasprintf(&s, fmt, ap) < 0)
		abort();
	va_end(ap);
	return s;
}

/* output port k of sp is linked to a stage on another lcore with on_full "block" */
static bool
link_blocks(const struct lcp_engine *e, const struct lcp_stage_priv *sp, unsigned k)
{
	const struct lcp_cfg_link *l;

	if (sp->cs->link_out[k] < 0)
		return false;
	l = &e->cfg->links[sp->cs->link_out[k]];
	return l->on_full == LCP_FULL_BLOCK && e->cfg->stages[l->dst].lcore != sp->cs->lcore;
}

/* counter layout: per port "<p>.in" | "<p>.out", "<p>.drop_ring_full",
 * "<p>.drop_unlinked" [, "<p>.backpressure_waits", "<p>.backpressure_cycles"
 * when its link blocks]; then "drop_shutdown"; then the stage's own */
static int
build_counters(struct lcp_engine *e, struct lcp_stage_priv *sp)
{
	const struct lcp_stage_ops *ops = sp->cs->pf->desc->ops;
	unsigned n = 0, k = 0, cap = 1;

	for (const struct lcp_port_def *p = ops->ports; p->name; p++)
		cap += p->dir == LCP_PORT_IN ? 1 : 5;
	cap++; /* drop_loop */
	for (const char *const *c = ops->counters; c && *c; c++)
		cap++;
	sp->hists = lcp_stage_hists(sp->cs->pf->desc);
	for (const struct lcp_hist_def *h = sp->hists; h && h->name; h++) {
		sp->n_hists++;
		cap += h->n_le + 2;
	}
	if (sp->n_hists > 0) {
		sp->hist_ctr = calloc(sp->n_hists, sizeof(*sp->hist_ctr));
		sp->hist_scale = calloc(sp->n_hists, sizeof(*sp->hist_scale));
		if (sp->hist_ctr == NULL || sp->hist_scale == NULL)
			return -ENOMEM;
	}
	sp->ctr_names = calloc(cap + 1, sizeof(char *));
	sp->ctr_in = calloc(sp->cs->n_ports + 1, sizeof(uint32_t));
	sp->edges = rte_zmalloc_socket("lcp_edges", (sp->cs->n_ports + 1) * sizeof(struct lcp_edge),
				       RTE_CACHE_LINE_SIZE, sp->socket);
	if (sp->ctr_names == NULL || sp->ctr_in == NULL || sp->edges == NULL)
		return -ENOMEM;
	for (const struct lcp_port_def *p = ops->ports; p->name; p++, k++) {
		if (p->dir == LCP_PORT_IN) {
			sp->ctr_in[k] = n;
			sp->ctr_names[n++] = xasprintf("%s.in", p->name);
		} else {
			sp->edges[k].ctr_out = n;
			sp->ctr_names[n++] = xasprintf("%s.out", p->name);
			sp->ctr_names[n++] = xasprintf("%s.drop_ring_full", p->name);
			sp->ctr_names[n++] = xasprintf("%s.drop_unlinked", p->name);
			if (link_blocks(e, sp, k)) {
				struct lcp_edge_full *f;

				if (sp->full == NULL &&
				    (sp->full = calloc(sp->cs->n_ports + 1, sizeof(*sp->full))) == NULL)
					return -ENOMEM;
				f = &sp->full[k];
				f->block = true;
				f->timeout = (uint64_t)e->cfg->links[sp->cs->link_out[k]].block_timeout_us *
					     rte_get_tsc_hz() / 1000000;
				f->ctr_waits = n;
				sp->ctr_names[n++] = xasprintf("%s.backpressure_waits", p->name);
				f->ctr_cycles = n;
				sp->ctr_names[n++] = xasprintf("%s.backpressure_cycles", p->name);
			}
		}
		sp->edges[k].unit = p->unit;
	}
	sp->ctr_drop_shutdown = n;
	sp->ctr_names[n++] = xasprintf("drop_shutdown");
	sp->ctr_drop_loop = n;
	sp->ctr_names[n++] = xasprintf("drop_loop");
	sp->pub.ctr_own = n;
	for (const char *const *c = ops->counters; c && *c; c++)
		sp->ctr_names[n++] = strdup(*c);
	/* histograms last: the report, telemetry and the metrics endpoint show
	 * them as histograms, not as counters */
	sp->hist_first = n;
	for (unsigned h = 0; h < sp->n_hists; h++) {
		sp->hist_ctr[h] = n;
		sp->hist_scale[h] = 1.0;
		for (unsigned b = 0; b <= sp->hists[h].n_le; b++)
			sp->ctr_names[n++] = xasprintf("%s.b%u", sp->hists[h].name, b);
		sp->ctr_names[n++] = xasprintf("%s.sum", sp->hists[h].name);
	}
	sp->pub.hist_ctr = sp->hist_ctr;
	sp->n_ctrs = n;
	sp->cops = sp->cs->strat.counters.pf->desc->ops;
	sp->pub.ctrs = sp->cops->create(sp->cs->strat.counters.conf, sp->ctr_names, n, e->n_workers + 1,
					sp->socket);
	if (sp->pub.ctrs == NULL) {
		lcp_log(NULL, LCP_LOG_ERR, "stage %s: counters %s: create failed: %s", sp->cs->name,
			sp->cs->strat.counters.plugin, strerror(errno));
		return -ENOMEM;
	}
	sp->pub.ctr_add = sp->cops->add;
	sp->pub.ctr_row = sp->cops->row != NULL ? sp->cops->row(sp->pub.ctrs, sp->pub.slot) : NULL;
	return 0;
}

static int
worker_index(struct lcp_engine *e, unsigned lcore)
{
	for (unsigned i = 0; i < e->n_workers; i++)
		if (e->workers[i].lcore == lcore)
			return (int)i;
	return -1;
}

/* the batch module of cross-lcore link li (edge ed of sp's port k, ring ri):
 * consumer dequeue size, and producer staging when the module asks for it */
static int
build_batch(struct lcp_engine *e, struct lcp_stage_priv *sp, unsigned k, struct lcp_edge *ed,
	    struct lcp_ring_in *ri, const struct lcp_cfg_link *l, unsigned li, int socket)
{
	const struct lcp_batch_ops *bo = l->batch.pf->desc->ops;
	struct lcp_batch_params bp = { .burst = l->burst };
	struct lcp_stage_buf *b;
	struct lcp_worker *pw;

	ri->bops = bo;
	ri->batch_name = l->batch.plugin;
	ri->batch = bo->create(l->batch.conf, l->burst, LCP_BURST_MAX, l->ring_size, socket);
	if (ri->batch == NULL) {
		lcp_log(NULL, LCP_LOG_ERR, "links[%u]: batch %s: create failed: %s (%s)", li,
			l->batch.plugin, strerror(errno), l->batch.path);
		return -1;
	}
	bo->params(ri->batch, &bp);
	ri->burst = bp.burst == 0 ? 1 : bp.burst > LCP_BURST_MAX ? LCP_BURST_MAX : bp.burst;
	ri->dequeue_size = bo->dequeue_size;
	ri->last = ri->burst;
	if (bp.stage <= 1)
		return 0;
	bp.stage = RTE_MIN(bp.stage, (unsigned)LCP_BURST_MAX);
	b = rte_zmalloc_socket("lcp_stage_buf", sizeof(*b) + bp.stage * sizeof(void *),
			       RTE_CACHE_LINE_SIZE, sp->socket);
	if (sp->sbuf == NULL)
		sp->sbuf = calloc(sp->cs->n_ports + 1, sizeof(*sp->sbuf));
	if (b == NULL || sp->sbuf == NULL) {
		rte_free(b);
		return -1;
	}
	b->r = ed->ring;
	b->src = &sp->pub;
	b->e = ed;
	b->full = sp->full != NULL && sp->full[k].block ? &sp->full[k] : NULL;
	b->cap = bp.stage;
	b->max_age = (uint64_t)((double)bp.flush_us * 1e-6 * (double)e->tsc_hz);
	sp->sbuf[k] = b;
	ed->ring = NULL; /* lcp_emit() now goes out of line, to the staging */
	pw = &e->workers[worker_index(e, sp->cs->lcore)];
	pw->sbufs = realloc(pw->sbufs, (pw->n_sbufs + 1) * sizeof(*pw->sbufs));
	pw->sbufs[pw->n_sbufs++] = b;
	return 0;
}

static int
add_ring_ctr(struct lcp_stage_priv *sp, unsigned idx, struct lcp_ring_in *ri, bool prod)
{
	struct lcp_ring_ctr *a = realloc(sp->rctr, (sp->n_rctr + 1) * sizeof(*a));

	if (a == NULL)
		return -ENOMEM;
	sp->rctr = a;
	a[sp->n_rctr++] = (struct lcp_ring_ctr){ .idx = idx, .ri = ri, .prod = prod };
	return 0;
}

/* A ring link's "<out>.out" and "<in>.in" are read off the ring
 * (lcp_ring_tally), not added per burst. Not the out count of a plugin built
 * before ABI 1.4 on a link it enqueues to itself: its lcp_emit() adds it. */
static int
build_ring_ctrs(struct lcp_engine *e)
{
	for (unsigned li = 0; li < e->cfg->n_links; li++) {
		struct lcp_ring_in *ri = e->ring_of_link[li];
		const struct lcp_cfg_link *l = &e->cfg->links[li];
		struct lcp_stage_priv *sp, *dp;

		if (ri == NULL)
			continue;
		sp = e->stages[l->src];
		dp = e->stages[l->dst];
		if (add_ring_ctr(sp, sp->edges[l->src_port].ctr_out, ri, true) < 0)
			return -ENOMEM;
		if (add_ring_ctr(dp, ri->ctr_in, ri, false) < 0)
			return -ENOMEM;
	}
	return 0;
}

/* every ring's tally, so no 32-bit index wraps unseen (control loop) */
void
lcp_ring_tally_all(struct lcp_engine *e)
{
	for (unsigned w = 0; w < e->n_workers; w++)
		for (unsigned r = 0; r < e->workers[w].n_rins; r++)
			lcp_ring_tally(&e->workers[w].rins[r], NULL, NULL);
}

/* the mbuf dynamic fields every stage reads: the stream metadata and the rx TSC */
static int
build_dynfields(void)
{
	static const struct rte_mbuf_dynfield tsc_desc = {
		.name = LCP_RX_TSC_DYNFIELD_NAME,
		.size = sizeof(uint64_t),
		.align = __alignof__(uint64_t),
	};
	static const struct rte_mbuf_dynfield stream_desc = {
		.name = LCP_STREAM_DYNFIELD_NAME,
		.size = sizeof(struct lcp_stream_meta),
		.align = __alignof__(struct lcp_stream_meta),
	};

	lcp_stream_offset = rte_mbuf_dynfield_register(&stream_desc);
	if (lcp_stream_offset < 0) {
		lcp_log(NULL, LCP_LOG_ERR, "cannot register the stream mbuf dynfield: %s",
			rte_strerror(rte_errno));
		return -1;
	}
	lcp_rx_tsc_offset = rte_mbuf_dynfield_register(&tsc_desc);
	if (lcp_rx_tsc_offset < 0) {
		lcp_log(NULL, LCP_LOG_ERR, "cannot register the rx TSC mbuf dynfield: %s",
			rte_strerror(rte_errno));
		return -1;
	}
	return 0;
}

/* one lcp_worker per worker lcore that has stages, checked against EAL's lcores */
static int
build_workers(struct lcp_engine *e)
{
	struct lcp_cfg *c = e->cfg;

	/* the authoritative lcore check, now that EAL has parsed its arguments */
	for (unsigned i = 0; i < c->n_stages; i++) {
		unsigned l = c->stages[i].lcore;

		if (l >= RTE_MAX_LCORE || !rte_lcore_is_enabled(l) || l == rte_get_main_lcore()) {
			lcp_log(NULL, LCP_LOG_ERR, "stages[%u].lcore: lcore %u is not a worker lcore of EAL (main lcore %u)",
				i, l, rte_get_main_lcore());
			return -1;
		}
		if (worker_index(e, l) < 0) {
			e->workers = realloc(e->workers, (e->n_workers + 1) * sizeof(*e->workers));
			memset(&e->workers[e->n_workers], 0, sizeof(*e->workers));
			e->workers[e->n_workers].lcore = l;
			e->workers[e->n_workers].eng = e;
			e->workers[e->n_workers].slot = e->n_workers;
			e->n_workers++;
		}
	}
	/* realloc may not keep the cache alignment the stats fields ask for */
	{
		struct lcp_worker *w = rte_zmalloc("lcp_workers", e->n_workers * sizeof(*w),
						   RTE_CACHE_LINE_SIZE);

		if (w == NULL)
			return -1;
		memcpy(w, e->workers, e->n_workers * sizeof(*w));
		free(e->workers);
		e->workers = w;
	}
	e->main_slot = e->n_workers;
	return 0;
}

/* the packet pools, one per socket in use */
static int
build_pktpools(struct lcp_engine *e)
{
	struct lcp_cfg *c = e->cfg;

	for (unsigned i = 0; i < c->n_stages; i++) {
		int s = (int)rte_lcore_to_socket_id(c->stages[i].lcore);
		char name[RTE_MEMPOOL_NAMESIZE];

		if (s < 0 || s >= RTE_MAX_NUMA_NODES)
			s = 0;
		if (e->pktpool[s] != NULL)
			continue;
		snprintf(name, sizeof(name), "lcp_pkt_s%d", s);
		e->pktpool[s] = rte_pktmbuf_pool_create(name, c->eng.mbufs, c->eng.mbuf_cache, 0,
							(uint16_t)c->eng.mbuf_data_room, s);
		if (e->pktpool[s] == NULL) {
			lcp_log(NULL, LCP_LOG_ERR, "engine.mbufs: cannot create %u mbufs of %u bytes on socket %d: %s",
				c->eng.mbufs, c->eng.mbuf_data_room, s, rte_strerror(rte_errno));
			return -1;
		}
	}
	return 0;
}

/* the stages: context on their lcore's socket, counters, timing, and their
 * place in their worker's lists (stages, tickers, pollers, lingerers) */
static int
build_stages(struct lcp_engine *e)
{
	struct lcp_cfg *c = e->cfg;
	int rc;

	e->n_stages = c->n_stages;
	e->stages = calloc(c->n_stages, sizeof(*e->stages));
	for (unsigned i = 0; i < c->n_stages; i++) {
		struct lcp_cfg_stage *cs = &c->stages[i];
		int socket = (int)rte_lcore_to_socket_id(cs->lcore);
		struct lcp_stage_priv *sp = rte_zmalloc_socket("lcp_stage", sizeof(*sp),
							       RTE_CACHE_LINE_SIZE, socket);
		struct lcp_worker *w = &e->workers[worker_index(e, cs->lcore)];

		if (sp == NULL)
			return -1;
		e->stages[i] = sp;
		sp->eng = e;
		sp->cs = cs;
		sp->index = i;
		sp->socket = socket;
		sp->pub.ops = cs->pf->desc->ops;
		sp->pub.slot = w->slot;
		sp->worker = w;
		if (c->eng.stage_timing) {
			sp->tm = rte_zmalloc_socket("lcp_timing", sizeof(*sp->tm), RTE_CACHE_LINE_SIZE, socket);
			if (sp->tm == NULL)
				return -1;
			sp->pub.timed = 1;
		}
		sp->pub.run_state = &e->run_state;
		sp->pub.priv = sp;
		rc = build_counters(e, sp);
		if (rc < 0)
			return -1;
		sp->pub.edges = sp->edges;
		w->stages = realloc(w->stages, (w->n_stages + 1) * sizeof(*w->stages));
		w->stages[w->n_stages++] = &sp->pub;
		if (sp->cops->tick != NULL) {
			w->tickers = realloc(w->tickers, (w->n_tickers + 1) * sizeof(*w->tickers));
			w->tickers[w->n_tickers++] = &sp->pub;
		}
		if (sp->pub.ops->poll != NULL) {
			w->pollers = realloc(w->pollers, (w->n_pollers + 1) * sizeof(*w->pollers));
			w->pollers[w->n_pollers++] = &sp->pub;
		}
		if (sp->pub.ops->linger != NULL) {
			sp->linger = sp->pub.ops->linger;
			sp->linger_n = LCP_LINGER_UNSEEN;
			w->lingerers = realloc(w->lingerers, (w->n_lingerers + 1) * sizeof(*w->lingerers));
			w->lingerers[w->n_lingerers++] = sp;
			e->n_lingerers++;
		}
	}
	return 0;
}

/* the edges: a link within one lcore appends to the consumer's input vector;
 * across lcores it is an SP/SC ring owned by the consumer's worker */
static int
build_edges(struct lcp_engine *e)
{
	struct lcp_cfg *c = e->cfg;

	e->ring_of_link = calloc(c->n_links + 1, sizeof(*e->ring_of_link));
	e->link_credits = calloc(c->n_links + 1, sizeof(*e->link_credits));
	for (unsigned i = 0; i < c->n_stages; i++) {
		struct lcp_stage_priv *sp = e->stages[i];
		unsigned k = 0;

		for (const struct lcp_port_def *p = ports_of(sp); p->name; p++, k++) {
			struct lcp_edge *ed = &sp->edges[k];

			if (p->dir != LCP_PORT_OUT)
				continue;
			ed->ctr_drop = ed->ctr_out + 2; /* drop_unlinked until linked */
			if (sp->cs->link_out[k] < 0)
				continue;
			{
				unsigned li = (unsigned)sp->cs->link_out[k];
				struct lcp_cfg_link *l = &c->links[li];
				struct lcp_stage_priv *dp = e->stages[l->dst];

				if (dp->cs->lcore == sp->cs->lcore) {
					struct lcp_pend_q *q = pend_of(dp, l->dst_port, p->unit);

					if (q == NULL) {
						lcp_log(NULL, LCP_LOG_ERR, "links[%u]: no memory for the input vector of %s",
							li, dp->cs->name);
						return -1;
					}
					/* the smallest burst a link into this input gives,
					 * else what the port declares */
					if (l->burst_set && (!q->chunk_set || l->burst < q->chunk)) {
						q->chunk = l->burst;
						q->chunk_set = true;
					} else if (!q->chunk_set) {
						q->chunk = ports_of(dp)[l->dst_port].burst;
					}
					ed->dst = &dp->pub;
					ed->pend = &q->pub;
					ed->dst_port = (uint16_t)l->dst_port;
					ed->dst_ctr_in = dp->ctr_in[l->dst_port];
					/* a vector that cannot grow drops what it cannot take */
					ed->ctr_drop = ed->ctr_out + 1;
				} else {
					struct lcp_worker *w = &e->workers[worker_index(e, dp->cs->lcore)];
					struct lcp_ring_in *ri;
					char name[RTE_RING_NAMESIZE];

					snprintf(name, sizeof(name), "lcp_link%u", li);
					ed->ring = rte_ring_create(name, l->ring_size, dp->socket,
								   RING_F_SP_ENQ | RING_F_SC_DEQ);
					if (ed->ring == NULL) {
						lcp_log(NULL, LCP_LOG_ERR, "links[%u]: cannot create a ring of %u: %s",
							li, l->ring_size, rte_strerror(rte_errno));
						return -1;
					}
					ed->ctr_drop = ed->ctr_out + 1;
					/* cache-aligned, on the worker's socket: the consumer
					 * reads its entry every turn; in the C heap it would
					 * share lines with whatever the control thread
					 * allocates next to it */
					ri = rte_realloc_socket(w->rins, (w->n_rins + 1) * sizeof(*w->rins),
								RTE_CACHE_LINE_SIZE,
								(int)rte_lcore_to_socket_id(w->lcore));
					if (ri == NULL)
						return -1;
					w->rins = ri;
					ri = &w->rins[w->n_rins++];
					memset(ri, 0, sizeof(*ri));
					ri->r = ed->ring;
					ri->dst = &dp->pub;
					ri->port = (uint16_t)l->dst_port;
					ri->unit = p->unit;
					ri->ctr_in = dp->ctr_in[l->dst_port];
					ri->burst = l->burst;
					ri->link = li;
					ri->tally = rte_zmalloc_socket("lcp_ring_tally", sizeof(*ri->tally),
								       RTE_CACHE_LINE_SIZE, dp->socket);
					if (ri->tally == NULL)
						return -1;
					rte_spinlock_init(&ri->tally->lock);
					if (build_batch(e, sp, k, ed, ri, l, li, dp->socket) < 0)
						return -1;
				}
			}
		}
	}
	/* ring_of_link pointers, now that the rins arrays are final */
	for (unsigned w = 0; w < e->n_workers; w++)
		for (unsigned r = 0; r < e->workers[w].n_rins; r++)
			e->ring_of_link[e->workers[w].rins[r].link] = &e->workers[w].rins[r];
	return 0;
}

int
lcp_engine_build(struct lcp_engine *e)
{
	e->tsc_hz = rte_get_tsc_hz();
	if (build_dynfields() < 0 || build_workers(e) < 0 || build_pktpools(e) < 0 ||
	    build_stages(e) < 0 || build_edges(e) < 0)
		return -1;
	for (unsigned w = 0; w < e->n_workers; w++)
		if (plan_walk(e, &e->workers[w]) < 0)
			return -1;
	return build_ring_ctrs(e);
}

/* the context of a plugin that sets ctx_size is the engine's: allocated
 * here, freed by lcp_engine_teardown() after fini(), or after an init() that
 * failed (no fini()) */
static int
init_stage(struct lcp_stage_priv *sp)
{
	size_t size = lcp_stage_ctx_size(sp->cs->pf->desc);
	int rc;

	if (size > 0) {
		sp->own_ctx = lcp_stage_zmalloc(&sp->pub, "the context", size);
		if (sp->own_ctx == NULL)
			return -ENOMEM;
		sp->pub.ctx = sp->own_ctx;
	}
	rc = sp->pub.ops->init(&sp->pub, sp->cs->conf, &sp->pub.ctx);
	if (rc == 0 && size > 0 && sp->pub.ctx != sp->own_ctx) {
		/* fini() gets what init() put there, then the engine's is freed */
		lcp_log(&sp->pub, LCP_LOG_ERR,
			"init() replaced the context the engine allocated (ctx_size %zu)", size);
		sp->inited = true;
		return -EPROTO;
	}
	return rc;
}

int
lcp_engine_init_stages(struct lcp_engine *e)
{
	for (unsigned i = 0; i < e->n_stages; i++) {
		struct lcp_stage_priv *sp = e->stages[i];
		int rc = init_stage(sp);

		if (rc != 0) {
			lcp_log(&sp->pub, LCP_LOG_ERR, "init failed: %s", strerror(rc < 0 ? -rc : rc));
			return -1;
		}
		sp->inited = true;
	}
	for (unsigned i = 0; i < e->n_stages; i++) {
		struct lcp_stage_priv *sp = e->stages[i];

		if (sp->pub.ops->start == NULL)
			continue;
		if (sp->pub.ops->start(&sp->pub, sp->pub.ctx) != 0) {
			lcp_log(&sp->pub, LCP_LOG_ERR, "start failed");
			return -1;
		}
	}
	return 0;
}

/* objects still in rings or input vectors after the workers exited: free and
 * count (a stage's start() may emit before any walk; a run cut short leaves
 * what it left) */
static void
free_ring_leftovers(struct lcp_engine *e)
{
	void *objs[LCP_BURST_MAX];

	for (unsigned w = 0; w < e->n_workers; w++)
		for (unsigned i = 0; i < e->workers[w].n_pends; i++) {
			struct lcp_pend_q *q = e->workers[w].pends[i];
			struct lcp_stage_priv *dp = (struct lcp_stage_priv *)q->dst;

			if (q->pub.n == 0)
				continue;
			lcp_objs_free(q->unit, q->pub.objs, q->pub.n);
			dp->pub.ctr_add(dp->pub.ctrs, e->main_slot, dp->ctr_drop_shutdown, q->pub.n);
			q->pub.n = 0;
		}
	for (unsigned w = 0; w < e->n_workers; w++) {
		for (unsigned r = 0; r < e->workers[w].n_rins; r++) {
			struct lcp_ring_in *ri = &e->workers[w].rins[r];
			struct lcp_stage_priv *dp = (struct lcp_stage_priv *)ri->dst;
			unsigned n;

			while ((n = rte_ring_sc_dequeue_burst(ri->r, objs, LCP_BURST_MAX, NULL)) > 0) {
				rte_spinlock_lock(&ri->tally->lock);
				ri->tally->leftover += n; /* not "<port>.in" */
				rte_spinlock_unlock(&ri->tally->lock);
				lcp_objs_free(ri->unit, objs, n);
				dp->pub.ctr_add(dp->pub.ctrs, e->main_slot, dp->ctr_drop_shutdown, n);
			}
		}
	}
}

/* after the workers returned */
void
lcp_engine_teardown(struct lcp_engine *e)
{
	free_ring_leftovers(e);
	for (unsigned i = e->n_stages; i-- > 0;) {
		struct lcp_stage_priv *sp = e->stages[i];

		if (sp == NULL)
			continue;
		if (sp->inited && sp->pub.ops->fini != NULL)
			sp->pub.ops->fini(&sp->pub, sp->pub.ctx);
		sp->inited = false;
		rte_free(sp->own_ctx);
		sp->own_ctx = NULL;
	}
}

void
lcp_engine_free(struct lcp_engine *e)
{
	for (unsigned i = 0; i < e->n_stages; i++) {
		struct lcp_stage_priv *sp = e->stages[i];

		if (sp == NULL)
			continue;
		if (sp->pub.ctrs)
			sp->cops->destroy(sp->pub.ctrs);
		lcp_strv_free((char **)sp->ctr_names, sp->n_ctrs);
		free(sp->ctr_in);
		free(sp->hist_ctr);
		free(sp->hist_scale);
		for (unsigned k = 0; k < sp->cs->n_ports; k++) {
			rte_ring_free(sp->edges ? sp->edges[k].ring : NULL);
			if (sp->sbuf != NULL && sp->sbuf[k] != NULL) {
				rte_ring_free(sp->sbuf[k]->r);
				rte_free(sp->sbuf[k]);
			}
		}
		for (unsigned k = 0; sp->pend != NULL && k < sp->cs->n_ports; k++)
			lcp_pend_free(sp->pend[k]);
		free(sp->pend);
		free(sp->sbuf);
		free(sp->full);
		free(sp->rctr);
		rte_free(sp->tm);
		rte_free(sp->edges);
		rte_free(sp);
	}
	free(e->stages);
	for (unsigned w = 0; w < e->n_workers; w++) {
		for (unsigned r = 0; r < e->workers[w].n_rins; r++)
			if (e->workers[w].rins[r].batch != NULL)
				e->workers[w].rins[r].bops->destroy(e->workers[w].rins[r].batch);
		free(e->workers[w].stages);
		free(e->workers[w].pollers);
		for (unsigned r = 0; r < e->workers[w].n_rins; r++)
			rte_free(e->workers[w].rins[r].tally);
		rte_free(e->workers[w].rins);
		free(e->workers[w].sbufs);
		free(e->workers[w].tickers);
		free(e->workers[w].lingerers);
		free(e->workers[w].pends);
	}
	free(e->pools);
	json_decref(e->pool_reports);
	rte_free(e->workers);
	free(e->ring_of_link);
	free(e->link_credits);
	free(e->prev.busy);
	free(e->prev.idle);
	for (int s = 0; s < RTE_MAX_NUMA_NODES; s++)
		rte_mempool_free(e->pktpool[s]);
	for (unsigned i = 0; i < e->n_stage_pktpools; i++)
		rte_mempool_free(e->stage_pktpools[i].mp);
	free(e->stage_pktpools);
	json_decref(e->mempools);
}
