/* SPDX-License-Identifier: BSD-3-Clause
 * batch_burst — the default batch strategy: the consumer dequeues up to a fixed
 * N objects per turn and the producer enqueues every emit at once (no staging,
 * so it adds no latency). N is the option `size`, or the link's burst
 * (engine.burst / the link's "burst") when `size` is 0. */
#include <stdlib.h>

#include <lcp/lcp.h>

#include "batch_state.h"

struct batch_burst_conf {
	uint32_t size;
};

static const struct lcp_opt batch_burst_opts[] = {
	LCP_OPT_UINT(struct batch_burst_conf, size, "size", "0", 0, 1024, 0,
		     "objects dequeued per turn; 0 = the link's burst"),
	LCP_OPT_END,
};

struct batch_burst {
	unsigned burst;
};

static void *
batch_burst_create(const void *conf, unsigned burst, unsigned burst_max, unsigned ring_size,
		   int socket)
{
	const struct batch_burst_conf *c = conf;
	struct batch_burst *b = batch_state_alloc(sizeof(*b));

	(void)ring_size;
	(void)socket;
	if (b == NULL)
		return NULL;
	b->burst = batch_size_or_burst(c->size, burst, burst_max);
	return b;
}

static void
batch_burst_params(void *b, struct lcp_batch_params *out)
{
	batch_params_unstaged(out, ((struct batch_burst *)b)->burst);
}

static const struct lcp_batch_ops batch_burst_ops = {
	.create = batch_burst_create,
	.destroy = free,
	.params = batch_burst_params,
};

LCP_PLUGIN_EXPORT const struct lcp_plugin lcp_plugin_descriptor = {
	LCP_PLUGIN_HEADER(LCP_KIND_BATCH, "batch_burst"),
	.version = "1.0.0",
	.summary = "fixed dequeue burst, every emit enqueued at once (default)",
	.options = batch_burst_opts,
	.conf_size = sizeof(struct batch_burst_conf),
	.ops = &batch_burst_ops,
};
