/* SPDX-License-Identifier: BSD-3-Clause
 * lcp/batch.h — the batch strategy (plugins of kind LCP_KIND_BATCH, ABI 1.3):
 * how a cross-lcore link (an rte_ring) is filled and drained.
 *
 * The module sets the policy, the engine runs the mechanism:
 *  - consumer side: each worker turn dequeues up to dequeue_size() objects
 *    (or params.burst when dequeue_size is NULL) from the ring;
 *  - producer side: with params.stage > 1 the objects a stage emits on the link
 *    are staged in a buffer of that many pointers and enqueued when it is full,
 *    or when the oldest staged object is params.flush_us old (checked every
 *    worker turn), or when the pipeline drains; with params.stage <= 1 every
 *    emit is enqueued at once.
 * Same-lcore links are direct calls and have no batching. Selected with
 * "strategies": {"batch": ...} globally, per stage (its output links) or per
 * link ({"from", "to", "batch"}); default batch_burst with the link's burst.
 */
#ifndef LCP_BATCH_H
#define LCP_BATCH_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

struct lcp_batch_params {
	unsigned burst;    /* fixed dequeue size, 1..burst_max */
	unsigned stage;    /* producer staging size, 0/1 = none, max burst_max */
	uint64_t flush_us; /* staged objects' maximum age; 0 = no age limit */
};

struct lcp_batch_ops {
	/* one instance per link. burst is the link's configured burst (engine.burst
	 * or the link's own), burst_max the largest dequeue the engine allows,
	 * ring_size the ring's capacity. NULL and errno on failure. */
	void *(*create)(const void *conf, unsigned burst, unsigned burst_max, unsigned ring_size,
			int socket);
	void (*destroy)(void *b);
	/* the constant part, read once when the link is built */
	void (*params)(void *b, struct lcp_batch_params *out);
	/* optional, called on the consumer's lcore before every dequeue: how many
	 * objects to dequeue (1..burst_max). last = what the previous dequeue
	 * returned, avail = what it left in the ring. */
	unsigned (*dequeue_size)(void *b, unsigned last, unsigned avail);
	void *reserved[4];
};

#ifdef __cplusplus
}
#endif
#endif
