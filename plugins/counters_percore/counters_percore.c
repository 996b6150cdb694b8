/* SPDX-License-Identifier: BSD-3-Clause
 * counters_percore — the default counters strategy: one plain uint64_t per counter
 * per writer slot, each slot's row on its own cache lines. add() is a relaxed load
 * and store (no lock prefix: one writer per slot); read() sums the rows. */
#include <errno.h>
#include <stdint.h>
#include <rte_common.h>
#include <rte_malloc.h>

#include <lcp/lcp.h>

#include "counters_set.h"

struct counters_percore {
	unsigned n;
	unsigned n_slots;
	size_t stride; /* uint64_t per row, a multiple of a cache line */
	uint64_t vals[] __rte_cache_aligned;
};

static void *
counters_percore_create(const void *conf, const char *const *names, unsigned n,
			unsigned n_slots, int socket)
{
	size_t stride = counters_row_stride(n);
	struct counters_percore *c;

	if (n_slots == 0) {
		errno = EINVAL;
		return NULL;
	}
	c = counters_set_zalloc("counters_percore",
				sizeof(*c) + stride * n_slots * sizeof(uint64_t), socket);
	if (c == NULL)
		return NULL;
	c->n = n;
	c->n_slots = n_slots;
	c->stride = stride;
	return c;
}

static void
counters_percore_add(void *set, unsigned slot, unsigned idx, uint64_t v)
{
	struct counters_percore *c = set;
	uint64_t *p = &c->vals[slot * c->stride + idx];

	__atomic_store_n(p, __atomic_load_n(p, __ATOMIC_RELAXED) + v, __ATOMIC_RELAXED);
}

static uint64_t
counters_percore_read(void *set, unsigned idx)
{
	struct counters_percore *c = set;

	return counters_rows_sum(c->vals, c->n_slots, c->stride, idx);
}

/* add() above is a relaxed load + store on this row: the SDK inlines exactly that */
static uint64_t *
counters_percore_row(void *set, unsigned slot)
{
	struct counters_percore *c = set;

	return &c->vals[slot * c->stride];
}

static const struct lcp_counters_ops counters_percore_ops = {
	.row = counters_percore_row,
	.create = counters_percore_create,
	.destroy = rte_free,
	.add = counters_percore_add,
	.read = counters_percore_read,
};

LCP_PLUGIN_EXPORT const struct lcp_plugin lcp_plugin_descriptor = {
	LCP_PLUGIN_HEADER(LCP_KIND_COUNTERS, "counters_percore"),
	.version = "1.0.0",
	.summary = "plain per-lcore uint64 counters on their own cache lines (default)",
	.ops = &counters_percore_ops,
};
