/* SPDX-License-Identifier: BSD-3-Clause
 * stage_api.c — what the engine offers a running stage (lcp/stage.h,
 * lcp/stage_worker.h): accessors, its receive pools, histograms' scale, the
 * stop request, and the out-of-line parts of lcp_emit() (drops, staging, the
 * input vectors of the walk).
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

void *
lcp_stage_zmalloc(struct lcp_stage *st, const char *what, size_t size)
{
	int socket = lcp_stage_socket(st);
	void *p = rte_zmalloc_socket(lcp_stage_plugin(st), size, RTE_CACHE_LINE_SIZE, socket);

	if (p == NULL)
		lcp_log(st, LCP_LOG_ERR, "cannot allocate %s (%zu bytes) on socket %d", what, size,
			socket);
	return p;
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
	return lcp_stage_pktmbuf_pool_create_sized(st, tag, n, priv_of(st)->eng->cfg->eng.mbuf_data_room);
}

struct rte_mempool *
lcp_stage_pktmbuf_pool_create_sized(struct lcp_stage *st, const char *tag, unsigned n, unsigned data_room)
{
	struct lcp_stage_priv *sp = (struct lcp_stage_priv *)st;
	struct lcp_engine *e = sp->eng;
	const struct lcp_engine_conf *k = &e->cfg->eng;
	struct lcp_stage_pktpool *v;
	struct rte_mempool *mp;
	char name[RTE_MEMPOOL_NAMESIZE];

	if (data_room > UINT16_MAX || data_room <= RTE_PKTMBUF_HEADROOM) {
		rte_errno = EINVAL;
		return NULL;
	}
	v = realloc(e->stage_pktpools, (e->n_stage_pktpools + 1) * sizeof(*v));
	if (v == NULL)
		return NULL;
	e->stage_pktpools = v;
	snprintf(name, sizeof(name), "lcp_%.12s_%u", tag, sp->index);
	mp = rte_pktmbuf_pool_create(name, n, RTE_MIN(k->mbuf_cache, n / 2), 0, (uint16_t)data_room,
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
		lcp_control_wake();
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
