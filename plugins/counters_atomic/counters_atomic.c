/* SPDX-License-Identifier: BSD-3-Clause
 * counters_atomic — the shared-counter strategy: one 64-bit counter per index for
 * all writers (the set starts on a cache line; its counters are packed), add() a
 * relaxed __atomic_fetch_add (a lock-prefixed add), read() an atomic load. The
 * writer slot is ignored, so there is no per-slot row (no `row` op) and nothing to
 * flush. It is the textbook "shared atomic" the per-lcore default is measured
 * against (doc/benchmarks.md B9): cheap to read, and every add from two lcores to
 * counters on one cache line moves that line between their CPUs.
 */
#include <errno.h>
#include <stdint.h>
#include <rte_common.h>
#include <rte_malloc.h>

#include <lcp/lcp.h>

#include "counters_set.h"

struct counters_atomic {
	unsigned n;
	uint64_t vals[] __rte_cache_aligned;
};

static void *
counters_atomic_create(const void *conf, const char *const *names, unsigned n, unsigned n_slots,
		       int socket)
{
	size_t len = counters_row_stride(n) * sizeof(uint64_t); /* one row */
	struct counters_atomic *c;

	RTE_SET_USED(conf);
	RTE_SET_USED(names);
	if (n_slots == 0) {
		errno = EINVAL;
		return NULL;
	}
	c = counters_set_zalloc("counters_atomic", sizeof(*c) + len, socket);
	if (c == NULL)
		return NULL;
	c->n = n;
	return c;
}

static void
counters_atomic_add(void *set, unsigned slot, unsigned idx, uint64_t v)
{
	struct counters_atomic *c = set;

	RTE_SET_USED(slot);
	__atomic_fetch_add(&c->vals[idx], v, __ATOMIC_RELAXED);
}

static uint64_t
counters_atomic_read(void *set, unsigned idx)
{
	struct counters_atomic *c = set;

	return __atomic_load_n(&c->vals[idx], __ATOMIC_RELAXED);
}

static const struct lcp_counters_ops counters_atomic_ops = {
	.create = counters_atomic_create,
	.destroy = rte_free,
	.add = counters_atomic_add,
	.read = counters_atomic_read,
};

LCP_PLUGIN_EXPORT const struct lcp_plugin lcp_plugin_descriptor = {
	LCP_PLUGIN_HEADER(LCP_KIND_COUNTERS, "counters_atomic"),
	.version = "1.0.0",
	.summary = "one shared uint64 per counter for all lcores, atomic fetch-add",
	.ops = &counters_atomic_ops,
};
