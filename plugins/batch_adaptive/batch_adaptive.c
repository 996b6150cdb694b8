/* SPDX-License-Identifier: BSD-3-Clause
 * batch_adaptive — the consumer's dequeue burst follows the ring's occupancy:
 * it doubles (up to `max`) while a dequeue leaves objects behind, and halves
 * (down to `min`) when a dequeue took less than half of it and left the ring
 * empty. Small bursts while the consumer keeps up (objects leave as soon as
 * they arrive), large ones when a backlog builds (fewer, cheaper dequeues per
 * object). The producer enqueues every emit at once. One instance per link,
 * called only on the consumer's lcore, so the state needs no atomics. */
#include <errno.h>
#include <stdlib.h>

#include <lcp/lcp.h>

#include "batch_state.h"

struct batch_adaptive_conf {
	uint32_t min;
	uint32_t max;
};

static const struct lcp_opt batch_adaptive_opts[] = {
	LCP_OPT_UINT(struct batch_adaptive_conf, min, "min", "1", 1, 1024, 0,
		     "smallest dequeue burst"),
	LCP_OPT_UINT(struct batch_adaptive_conf, max, "max", "256", 1, 1024, 0,
		     "largest dequeue burst"),
	LCP_OPT_END,
};

struct batch_adaptive {
	unsigned min, max, cur;
};

static void *
batch_adaptive_create(const void *conf, unsigned burst, unsigned burst_max, unsigned ring_size,
		      int socket)
{
	const struct batch_adaptive_conf *c = conf;
	struct batch_adaptive *b;

	(void)ring_size;
	(void)socket;
	if (c->min > c->max) { /* "min" above "max": the log names the link */
		errno = EINVAL;
		return NULL;
	}
	b = batch_state_alloc(sizeof(*b));
	if (b == NULL)
		return NULL;
	b->min = c->min < burst_max ? c->min : burst_max;
	b->max = c->max < burst_max ? c->max : burst_max;
	b->cur = burst < b->min ? b->min : burst > b->max ? b->max : burst;
	return b;
}

static void
batch_adaptive_params(void *b, struct lcp_batch_params *out)
{
	batch_params_unstaged(out, ((struct batch_adaptive *)b)->cur);
}

static unsigned
batch_adaptive_dequeue_size(void *p, unsigned last, unsigned avail)
{
	struct batch_adaptive *b = p;

	if (avail > 0) {
		b->cur = b->cur * 2 > b->max ? b->max : b->cur * 2;
	} else if (last * 2 < b->cur) {
		b->cur = b->cur / 2 < b->min ? b->min : b->cur / 2;
	}
	return b->cur;
}

static const struct lcp_batch_ops batch_adaptive_ops = {
	.create = batch_adaptive_create,
	.destroy = free,
	.params = batch_adaptive_params,
	.dequeue_size = batch_adaptive_dequeue_size,
};

LCP_PLUGIN_EXPORT const struct lcp_plugin lcp_plugin_descriptor = {
	LCP_PLUGIN_HEADER(LCP_KIND_BATCH, "batch_adaptive"),
	.version = "1.0.0",
	.summary = "dequeue burst grows with ring occupancy, shrinks when the ring runs dry",
	.options = batch_adaptive_opts,
	.conf_size = sizeof(struct batch_adaptive_conf),
	.ops = &batch_adaptive_ops,
};
