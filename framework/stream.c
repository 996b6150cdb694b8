/* SPDX-License-Identifier: BSD-3-Clause
 * stream.c — what the engine does for producers that must not lose what they
 * emit (lcp_emit_try) and for stream credits between a producer and its
 * consumer (lcp/stream.h):
 *
 *   lcp_emit_try_link           a ring link (or a staged or blocking one) that
 *                               leaves what does not fit with the caller
 *   lcp_stream_credits_offer    the producer's table, kept per link
 *   lcp_port_consumer_releases  whether the consumer's port releases
 *   lcp_stream_credits          the consumer finds its producer's table */
#include <rte_ring.h>

#include <lcp/stage_worker.h>
#include <lcp/stream.h>

#include "engine_priv.h"

unsigned
lcp_emit_try_link(struct lcp_stage *st, const struct lcp_edge *e, void **objs, unsigned n)
{
	struct lcp_stage_priv *sp = (struct lcp_stage_priv *)st;
	unsigned port = (unsigned)(e - sp->edges), k;
	struct rte_ring *r = e->ring;

	if (r == NULL && sp->sbuf != NULL && sp->sbuf[port] != NULL) {
		/* a link whose batch module stages: what lcp_emit() staged on it
		 * goes first, then these go straight to the ring, never staged */
		struct lcp_stage_buf *b = sp->sbuf[port];

		lcp_stage_buf_flush(b);
		r = b->r;
	}
	if (r == NULL) {
		lcp_emit_drop(st, e, objs, n); /* not linked: freed and counted */
		return n;
	}
	if (n == 0)
		return 0;
	/* "<port>.out": read off the ring */
	k = rte_ring_sp_enqueue_burst(r, objs, n, NULL);
	if (k < n && sp->full != NULL && sp->full[port].block)
		k += lcp_ring_enqueue_wait(st, &sp->full[port], r, objs + k, n - k);
	return k;
}

void
lcp_stream_credits_offer(struct lcp_stage *st, unsigned out_port, struct lcp_stream_credits *cr)
{
	struct lcp_stage_priv *sp = (struct lcp_stage_priv *)st;
	int li = out_port < sp->cs->n_ports ? sp->cs->link_out[out_port] : -1;

	if (li >= 0)
		sp->eng->link_credits[li] = cr;
}

bool
lcp_port_consumer_releases(const struct lcp_stage *st, unsigned out_port)
{
	const struct lcp_stage_priv *sp = (const struct lcp_stage_priv *)st;
	const struct lcp_cfg *c = sp->eng->cfg;
	const struct lcp_cfg_link *l;
	const struct lcp_stage_ops *ops;
	int li = out_port < sp->cs->n_ports ? sp->cs->link_out[out_port] : -1;

	if (li < 0)
		return false;
	l = &c->links[li];
	ops = c->stages[l->dst].pf->desc->ops;
	return (ops->ports[l->dst_port].flags & LCP_PORT_F_RELEASES) != 0;
}

struct lcp_stream_credits *
lcp_stream_credits(const struct lcp_stage *st, unsigned in_port)
{
	const struct lcp_stage_priv *sp = (const struct lcp_stage_priv *)st;
	const struct lcp_cfg *c = sp->eng->cfg;
	struct lcp_stream_credits *found = NULL;
	unsigned n = 0;

	for (unsigned li = 0; li < c->n_links; li++)
		if (c->links[li].valid && c->links[li].dst == sp->index && c->links[li].dst_port == in_port) {
			found = sp->eng->link_credits[li];
			n++;
		}
	return n == 1 ? found : NULL; /* several producers into one port: none */
}
