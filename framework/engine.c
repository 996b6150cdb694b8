/* SPDX-License-Identifier: BSD-3-Clause
 * engine.c — build the running pipeline from a validated config, and tear it
 * down: EAL, the rx-TSC dynfield, mbuf pools, stages and their counter sets,
 * edges (direct calls on one lcore, SP/SC rings across lcores), workers.
 *
 * Entry: lcp_engine_run() — build, init, start, launch workers (runner.c), control
 * loop, shutdown, report.
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

/* wakes the control loop: a signal, or a stage asking to stop */
static int lcp_wake_fd = -1; /* an eventfd: write() is async-signal-safe */

static void
wake_control(void)
{
	uint64_t one = 1;
	ssize_t rc = write(lcp_wake_fd, &one, sizeof(one));

	(void)rc; /* the counter cannot overflow in practice; a full one still wakes */
}

int lcp_rx_tsc_offset = -1;
int lcp_stream_offset = -1;

/* ---- accessors for plugins ---- */

static const struct lcp_stage_priv *
priv_of(const struct lcp_stage *st)
{
	return (const struct lcp_stage_priv *)st;
}

const char *
lcp_stage_name(const struct lcp_stage *st)
{
	return priv_of(st)->cs->name;
}

const char *
lcp_stage_plugin(const struct lcp_stage *st)
{
	return priv_of(st)->cs->plugin;
}

unsigned
lcp_stage_lcore(const struct lcp_stage *st)
{
	return priv_of(st)->cs->lcore;
}

int
lcp_stage_socket(const struct lcp_stage *st)
{
	return priv_of(st)->socket;
}

struct rte_mempool *
lcp_stage_pktmbuf_pool(const struct lcp_stage *st)
{
	const struct lcp_stage_priv *sp = priv_of(st);
	int s = sp->socket < 0 ? 0 : sp->socket;

	return sp->eng->pktpool[s];
}

struct rte_mempool *
lcp_stage_pktmbuf_pool_create(struct lcp_stage *st, const char *tag, unsigned n)
{
	struct lcp_stage_priv *sp = (struct lcp_stage_priv *)st;
	struct lcp_engine *e = sp->eng;
	const struct lcp_engine_conf *k = &e->cfg->eng;
	struct lcp_stage_pktpool *v;
	struct rte_mempool *mp;
	char name[RTE_MEMPOOL_NAMESIZE];

	v = realloc(e->stage_pktpools, (e->n_stage_pktpools + 1) * sizeof(*v));
	if (v == NULL)
		return NULL;
	e->stage_pktpools = v;
	snprintf(name, sizeof(name), "lcp_%.12s_%u", tag, sp->index);
	mp = rte_pktmbuf_pool_create(name, n, RTE_MIN(k->mbuf_cache, n / 2), 0, (uint16_t)k->mbuf_data_room,
				     sp->socket < 0 ? SOCKET_ID_ANY : sp->socket);
	if (mp != NULL)
		e->stage_pktpools[e->n_stage_pktpools++] =
			(struct lcp_stage_pktpool){ .mp = mp, .stage = lcp_stage_name(st), .held = 0 };
	return mp;
}

void
lcp_hist_set_scale(struct lcp_stage *st, unsigned h, double scale)
{
	struct lcp_stage_priv *sp = (struct lcp_stage_priv *)st;

	if (h < sp->n_hists && scale > 0)
		sp->hist_scale[h] = scale;
}

int
lcp_stage_pktmbuf_pool_held(struct lcp_stage *st, struct rte_mempool *mp, unsigned n)
{
	struct lcp_engine *e = ((struct lcp_stage_priv *)st)->eng;

	for (unsigned i = 0; i < e->n_stage_pktpools; i++)
		if (e->stage_pktpools[i].mp == mp && strcmp(e->stage_pktpools[i].stage, lcp_stage_name(st)) == 0) {
			e->stage_pktpools[i].held = n;
			return 0;
		}
	return -EINVAL;
}

void
lcp_stage_request_stop(struct lcp_stage *st, const char *why)
{
	struct lcp_stage_priv *sp = (struct lcp_stage_priv *)st;
	const char *none = NULL;

	/* the first request wins; why must stay valid (a literal) */
	if (__atomic_compare_exchange_n(&sp->eng->stop_request, &none,
					why != NULL ? why : lcp_stage_name(st), false, __ATOMIC_RELEASE,
					__ATOMIC_RELAXED))
		wake_control();
}

bool
lcp_port_is_linked(const struct lcp_stage *st, unsigned port)
{
	const struct lcp_stage_priv *sp = priv_of(st);

	return port < sp->cs->n_ports &&
	       (sp->cs->link_out[port] >= 0 || sp->cs->links_in[port] > 0);
}

/* Stage n objects on a link whose batch module asks for producer staging;
 * enqueue whenever the buffer fills. The age of the oldest object is taken
 * only when the module has a flush timeout. */
static void
stage_buf_put(struct lcp_stage_buf *b, void **objs, unsigned n)
{
	while (n > 0) {
		unsigned take = RTE_MIN(b->cap - b->n, n);

		if (b->n == 0 && b->max_age != 0)
			b->first_tsc = rte_rdtsc();
		memcpy(&b->objs[b->n], objs, take * sizeof(*objs));
		__atomic_store_n(&b->n, b->n + take, __ATOMIC_RELAXED);
		objs += take;
		n -= take;
		if (b->n == b->cap)
			lcp_stage_buf_flush(b);
	}
}

/* Out of line: a ring that was full, a port that is not linked — or a link
 * that stages (its edge has neither ring nor dst, see struct lcp_stage_buf). */
void
lcp_emit_drop(struct lcp_stage *st, const struct lcp_edge *e, void **objs, unsigned n)
{
	struct lcp_stage_priv *sp = (struct lcp_stage_priv *)st;

	if (e->ring == NULL && e->dst == NULL && sp->sbuf != NULL) {
		struct lcp_stage_buf *b = sp->sbuf[e - sp->edges];

		if (b != NULL) {
			stage_buf_put(b, objs, n);
			return;
		}
	}
	if (e->ring != NULL && sp->full != NULL && sp->full[e - sp->edges].block) {
		/* "<port>.out" is read off the ring */
		unsigned k = lcp_ring_enqueue_wait(st, &sp->full[e - sp->edges], e->ring, objs, n);

		objs += k;
		n -= k;
		if (n == 0)
			return;
	}
	lcp_objs_free(e->unit, objs, n);
	lcp_ctr_add(st, e->ctr_drop, n);
}

/* A same-lcore input vector is full: double it (or more) on its socket. The
 * worker does this; rte_realloc takes the heap's lock, so a vector grows a few
 * times early in a run and then stays. Out of memory: the emit is dropped
 * under the edge's "<port>.drop_ring_full", logged once per stage. */
int
lcp_pend_grow(struct lcp_stage *st, const struct lcp_edge *e, void **objs, unsigned n)
{
	struct lcp_pend_q *q = (struct lcp_pend_q *)e->pend;
	struct lcp_stage_priv *sp = (struct lcp_stage_priv *)st;
	uint64_t want = (uint64_t)q->pub.cap * 2;
	void **v = NULL;

	while (want < (uint64_t)q->pub.n + n)
		want *= 2;
	if (want <= UINT32_MAX / sizeof(void *))
		v = rte_realloc_socket(q->pub.objs, want * sizeof(void *), RTE_CACHE_LINE_SIZE, q->socket);
	if (v != NULL) {
		q->pub.objs = v;
		q->pub.cap = (uint32_t)want;
		return 0;
	}
	lcp_objs_free(e->unit, objs, n);
	lcp_ctr_add(st, e->ctr_drop, n);
	if (!sp->grow_logged) {
		sp->grow_logged = true;
		lcp_log(st, LCP_LOG_ERR,
			"the input vector of %s (lcore %u) holds %u objects and cannot grow (no memory): %u "
			"dropped (drop_ring_full)",
			((struct lcp_stage_priv *)e->dst)->cs->name, sp->cs->lcore, q->pub.n, n);
	}
	return -1;
}

struct lcp_pend_q *
lcp_pend_new(struct lcp_stage *dst, unsigned port, unsigned unit, int socket)
{
	struct lcp_pend_q *q = rte_zmalloc_socket("lcp_pend", sizeof(*q), RTE_CACHE_LINE_SIZE, socket);

	if (q == NULL)
		return NULL;
	q->pub.objs = rte_malloc_socket("lcp_pend_objs", LCP_PEND_INIT * sizeof(void *), RTE_CACHE_LINE_SIZE,
					socket);
	q->spare = rte_malloc_socket("lcp_pend_objs", LCP_PEND_INIT * sizeof(void *), RTE_CACHE_LINE_SIZE,
				     socket);
	if (q->pub.objs == NULL || q->spare == NULL) {
		lcp_pend_free(q);
		return NULL;
	}
	q->pub.cap = q->spare_cap = LCP_PEND_INIT;
	q->port = (uint16_t)port;
	q->unit = (uint16_t)unit;
	q->dst = dst;
	q->socket = socket;
	return q;
}

void
lcp_pend_free(struct lcp_pend_q *q)
{
	if (q == NULL)
		return;
	rte_free(q->pub.objs);
	rte_free(q->spare);
	rte_free(q);
}

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

int
lcp_engine_build(struct lcp_engine *e)
{
	struct lcp_cfg *c = e->cfg;
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
	int rc;

	e->tsc_hz = rte_get_tsc_hz();
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
	/* packet pools, one per socket in use */
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
	/* stages */
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
	/* edges: same lcore = direct call, else an SP/SC ring owned by the consumer */
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
	for (unsigned w = 0; w < e->n_workers; w++)
		if (plan_walk(e, &e->workers[w]) < 0)
			return -1;
	return build_ring_ctrs(e);
}

int
lcp_engine_init_stages(struct lcp_engine *e)
{
	for (unsigned i = 0; i < e->n_stages; i++) {
		struct lcp_stage_priv *sp = e->stages[i];
		int rc = sp->pub.ops->init(&sp->pub, sp->cs->conf, &sp->pub.ctx);

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

		if (sp != NULL && sp->inited && sp->pub.ops->fini != NULL)
			sp->pub.ops->fini(&sp->pub, sp->pub.ctx);
		if (sp != NULL)
			sp->inited = false;
	}
}

static void
engine_free(struct lcp_engine *e)
{
	for (unsigned i = 0; i < e->n_stages; i++) {
		struct lcp_stage_priv *sp = e->stages[i];

		if (sp == NULL)
			continue;
		if (sp->pub.ctrs)
			sp->cops->destroy(sp->pub.ctrs);
		for (unsigned k = 0; k < sp->n_ctrs; k++)
			free((char *)sp->ctr_names[k]);
		free(sp->ctr_names);
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

static volatile sig_atomic_t lcp_signal;
volatile sig_atomic_t lcp_signals;

static void
on_signal(int sig)
{
	lcp_signal = sig;
	lcp_signals = lcp_signals + 1;
	wake_control(); /* async-signal-safe */
}

/* this thread's CPU time, seconds (the report's control_cpu_s) */
static double
thread_cpu_s(void)
{
	struct timespec ts;

	if (clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts) != 0)
		return 0;
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* sleep until abs_tsc (a TSC value) or until woken (a signal, a stop
 * request); serve the metrics endpoint meanwhile when it is on */
static void
control_sleep(struct lcp_engine *e, uint64_t abs_tsc)
{
	struct pollfd pf[2] = { { .fd = lcp_wake_fd, .events = POLLIN }, { .fd = e->prom_fd, .events = POLLIN } };
	uint64_t now = rte_rdtsc(), v;
	int ms, pm;

	if (abs_tsc <= now)
		return;
	ms = (int)(((double)(abs_tsc - now) * 1e3 + (double)e->tsc_hz - 1) / (double)e->tsc_hz);
	pm = lcp_prom_timeout_ms(e);
	if (pm >= 0 && pm < ms)
		ms = pm;
	if (poll(pf, e->prom_fd >= 0 ? 2 : 1, ms) > 0) {
		if (pf[0].revents & POLLIN) {
			ssize_t rc = read(lcp_wake_fd, &v, sizeof(v));

			(void)rc;
		}
		if (pf[1].revents & POLLIN)
			lcp_prom_run(e);
	} else if (e->prom_fd >= 0) {
		lcp_prom_run(e); /* its timeouts */
	}
}

static char **
eal_argv(struct lcp_cfg *c, int *argc)
{
	char **v = calloc(c->n_eal + 3, sizeof(*v));
	bool has_log = false;
	int n = 0;

	v[n++] = strdup("lcpipe");
	for (unsigned i = 0; i < c->n_eal; i++) {
		has_log |= strncmp(c->eal[i], "--log-level", 11) == 0;
		v[n++] = strdup(c->eal[i]);
	}
	if (!has_log)
		v[n++] = strdup("--log-level=lib.eal:notice");
	*argc = n;
	return v;
}

int
lcp_engine_run(struct lcp_cfg *c, const struct lcp_run_opts *o)
{
	struct lcp_engine *e = calloc(1, sizeof(*e));
	struct sigaction sa = { .sa_handler = on_signal };
	int argc, status = 0, rc;
	char **argv = eal_argv(c, &argc), **argv_copy;
	double duration = o->duration >= 0 ? o->duration : c->eng.duration;
	uint64_t next_tick, tick, end, wake, tally;
	double cpu0;

	argv_copy = calloc((size_t)argc + 1, sizeof(*argv_copy));
	memcpy(argv_copy, argv, (size_t)argc * sizeof(*argv));
	e->cfg = c;
	if (rte_eal_init(argc, argv_copy) < 0) {
		lcp_log(NULL, LCP_LOG_ERR, "EAL init failed: %s (check the EAL arguments: %s)",
			rte_strerror(rte_errno),
			o->eal_overridden ? "those after \"--\"" : "the config's \"eal\" array");
		status = 1;
		goto out_free_args;
	}
	e->live = o->live >= 0 ? o->live : (c->eng.live == 1 || (c->eng.live == 0 && isatty(1)));
	e->prom_fd = -1;
	if (lcp_wake_fd < 0 && (lcp_wake_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC)) < 0) {
		lcp_log(NULL, LCP_LOG_ERR, "eventfd: %s", strerror(errno));
		status = 1;
		goto out_eal;
	}
	/* the metrics endpoint listens before anything runs: a taken port is a
	 * startup failure like a stage's init */
	if (lcp_engine_build(e) < 0 || lcp_engine_init_stages(e) < 0 || lcp_prom_start(e) < 0) {
		status = 1;
		e->stop_reason = "startup failure";
		e->t_start = e->t_stop = rte_rdtsc();
		lcp_engine_teardown(e);
		lcp_engine_flush_counters(e);
		lcp_mempools_check(e);
		if (o->report_path != NULL) {
			json_t *r = lcp_stats_json(e, true);

			if (json_dump_file(r, o->report_path, JSON_INDENT(2) | JSON_SORT_KEYS) != 0)
				lcp_log(NULL, LCP_LOG_ERR, "--report %s: cannot write: %s", o->report_path,
					strerror(errno));
			json_decref(r);
		}
		goto out_eal;
	}
	lcp_signal = 0;
	lcp_signals = 0;
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	lcp_telemetry_attach(e);
	cpu0 = thread_cpu_s();
	e->t_start = rte_rdtsc();
	e->prev.tsc = e->t_start;
	for (unsigned w = 0; w < e->n_workers; w++) {
		rc = rte_eal_remote_launch(lcp_worker_main, &e->workers[w], e->workers[w].lcore);
		if (rc != 0) {
			lcp_log(NULL, LCP_LOG_ERR, "cannot launch lcore %u: %s", e->workers[w].lcore,
				strerror(-rc));
			e->stop_reason = "launch failure";
			status = 1;
			break;
		}
	}
	lcp_log(NULL, LCP_LOG_INFO, "running \"%s\": %u stages on %u worker lcores%s", c->name,
		e->n_stages, e->n_workers, duration > 0 ? "" : "; Ctrl-C stops");
	tick = (uint64_t)((e->live ? 0.5 : c->eng.stats_interval) * (double)e->tsc_hz);
	/* from the engine's TSC rate, known only after rte_eal_init() (computed
	 * before it, this was 0 and the control loop never slept) */
	tally = (uint64_t)(LCP_TALLY_PERIOD_S * (double)e->tsc_hz);
	next_tick = e->t_start + tick;
	end = duration > 0 ? e->t_start + (uint64_t)(duration * (double)e->tsc_hz) : UINT64_MAX;
	/* The control loop sleeps until the next stats line or the end of the
	 * run; a signal or lcp_stage_request_stop() wakes it at once. It used to
	 * poll every 2 ms, which on a 2-CPU machine stole a worker's or a peer's
	 * CPU 500 times a second (it showed in B8's tail latency). */
	while (status == 0) {
		uint64_t now = rte_rdtsc();

		if (lcp_signal) {
			e->stop_reason = lcp_signal == SIGINT ? "SIGINT" : "SIGTERM";
			break;
		}
		if (__atomic_load_n(&e->stop_request, __ATOMIC_ACQUIRE) != NULL) {
			e->stop_reason = e->stop_request;
			break;
		}
		if (now >= end) {
			e->stop_reason = "duration";
			break;
		}
		lcp_ring_tally_all(e); /* ring counters' 32-bit indices: see LCP_TALLY_PERIOD_S */
		if (now >= next_tick) {
			lcp_stats_tick(e, false);
			lcp_pools_sample(e);
			next_tick += tick;
			if (next_tick <= now)
				next_tick = now + tick;
		}
		wake = RTE_MIN(next_tick, end);
		control_sleep(e, RTE_MIN(wake, now + tally));
	}
	e->control_cpu_s = thread_cpu_s() - cpu0;
	lcp_prom_stop(e); /* scrapes end with the run */
	if (!lcp_engine_shutdown(e)) { /* drain, stop, wait for the lcores */
		/* a worker is still inside a stage: nothing can be torn down under
		 * it; what the counters say goes out, then lcpipe ends (status 4) */
		e->t_stop = rte_rdtsc();
		lcp_engine_flush_counters(e);
		lcp_stats_summary(e, stdout);
		if (o->report_path != NULL) {
			json_t *r = lcp_stats_json(e, true);

			if (json_dump_file(r, o->report_path, JSON_INDENT(2) | JSON_SORT_KEYS) != 0)
				lcp_log(NULL, LCP_LOG_ERR, "--report %s: cannot write: %s", o->report_path,
					strerror(errno));
			json_decref(r);
		}
		fflush(NULL);
		_exit(4);
	}
	e->t_stop = rte_rdtsc();
	if (e->live)
		lcp_stats_tick(e, true);
	lcp_engine_teardown(e);
	lcp_engine_flush_counters(e); /* what fini and the leftovers added */
	lcp_mempools_check(e);
	lcp_telemetry_detach();
	lcp_stats_summary(e, stdout);
	if (o->report_path != NULL) {
		json_t *r = lcp_stats_json(e, true);

		if (json_dump_file(r, o->report_path, JSON_INDENT(2) | JSON_SORT_KEYS) != 0) {
			lcp_log(NULL, LCP_LOG_ERR, "--report %s: cannot write: %s", o->report_path,
				strerror(errno));
			status = status ? status : 1;
		}
		json_decref(r);
	}
	if (status == 0 && e->leaked > 0)
		status = 3;
out_eal:
	engine_free(e);
	rte_eal_cleanup();
out_free_args:
	for (int i = 0; i < argc; i++)
		free(argv[i]);
	free(argv);
	free(argv_copy);
	free(e);
	return status;
}
