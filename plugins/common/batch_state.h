/* SPDX-License-Identifier: BSD-3-Clause
 * batch_state.h — what the batch strategies (batch_burst, batch_timed,
 * batch_adaptive) do alike: one malloc'ed state per link (destroy is free
 * itself); a size that is the option's or, when that is 0, the link's burst,
 * never above burst_max; params without producer staging (every emit enqueued
 * at once).
 */
#ifndef LCP_BATCH_STATE_H
#define LCP_BATCH_STATE_H

#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include <lcp/lcp.h>

/* a link's state of size bytes; NULL with errno ENOMEM */
static inline void *
batch_state_alloc(size_t size)
{
	void *b = malloc(size);

	if (b == NULL)
		errno = ENOMEM;
	return b;
}

/* the option size, or the link's burst when it is 0; at most burst_max */
static inline unsigned
batch_size_or_burst(uint32_t size, unsigned burst, unsigned burst_max)
{
	unsigned n = size != 0 ? size : burst;

	return n > burst_max ? burst_max : n;
}

/* params of a strategy that only sets the dequeue burst: no staging */
static inline void
batch_params_unstaged(struct lcp_batch_params *out, unsigned burst)
{
	out->burst = burst;
	out->stage = 0;
	out->flush_us = 0;
}

#endif
