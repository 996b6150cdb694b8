/* SPDX-License-Identifier: BSD-3-Clause
 * batch_timed — the flush-timeout design: the producer stages what it emits on
 * the link and enqueues up to `size` objects at once, or whatever it holds when
 * the oldest staged object is `flush_us` microseconds old, whichever comes
 * first; the consumer dequeues up to `size` per turn. Fewer, larger ring
 * operations for sparse or bursty producers, at a latency bounded by flush_us
 * (plus one worker turn: the age is checked once per turn). */
#include <stdlib.h>

#include <lcp/lcp.h>

#include "batch_state.h"

struct batch_timed_conf {
	uint32_t size;
	uint32_t flush_us;
};

static const struct lcp_opt batch_timed_opts[] = {
	LCP_OPT_UINT(struct batch_timed_conf, size, "size", "0", 0, 1024, 0,
		     "objects per enqueue and per dequeue; 0 = the link's burst"),
	LCP_OPT_UINT(struct batch_timed_conf, flush_us, "flush_us", "100", 1, 10000000, 0,
		     "staged objects are enqueued when the oldest is this many microseconds old"),
	LCP_OPT_END,
};

struct batch_timed {
	unsigned size;
	unsigned flush_us;
};

static void *
batch_timed_create(const void *conf, unsigned burst, unsigned burst_max, unsigned ring_size,
		   int socket)
{
	const struct batch_timed_conf *c = conf;
	struct batch_timed *b = batch_state_alloc(sizeof(*b));

	(void)socket;
	if (b == NULL)
		return NULL;
	b->size = batch_size_or_burst(c->size, burst, burst_max);
	/* a staged batch must fit in the ring, or it could never go in whole */
	if (b->size > ring_size - 1)
		b->size = ring_size - 1;
	b->flush_us = c->flush_us;
	return b;
}

static void
batch_timed_params(void *b, struct lcp_batch_params *out)
{
	const struct batch_timed *t = b;

	out->burst = t->size;
	out->stage = t->size;
	out->flush_us = t->flush_us;
}

static const struct lcp_batch_ops batch_timed_ops = {
	.create = batch_timed_create,
	.destroy = free,
	.params = batch_timed_params,
};

LCP_PLUGIN_EXPORT const struct lcp_plugin lcp_plugin_descriptor = {
	LCP_PLUGIN_HEADER(LCP_KIND_BATCH, "batch_timed"),
	.version = "1.0.0",
	.summary = "producer stages up to N objects or T microseconds, whichever first",
	.options = batch_timed_opts,
	.conf_size = sizeof(struct batch_timed_conf),
	.ops = &batch_timed_ops,
};
