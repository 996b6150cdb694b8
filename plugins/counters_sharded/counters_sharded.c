/* SPDX-License-Identifier: BSD-3-Clause
 * counters_sharded — the "thread-local sharded counter": S shards (option
 * `shards`, a power of two), each a cache-line aligned row of all the set's
 * counters. A writer adds with a relaxed __atomic_fetch_add to the row of the
 * shard its *thread* hashes to, whatever slot it passes: the hash of the thread id
 * is computed on the thread's first add and cached in a __thread variable, and the
 * shard is that hash masked to S. read() sums the S shards.
 *
 * Kept as a strategy because it is the design the VPN data path this project
 * started from measured 6x slower than a plain per-thread counter on its hot path
 * (shared/design/BENCHMARKS.md): it pays a lock-prefixed add (threads may share a
 * shard) and a thread-local lookup (a __tls_get_addr call from a dlopen'd object)
 * on every add, and two threads that hash to one shard contend on its lines.
 * doc/benchmarks.md B9 measures it against the per-lcore default.
 */
#include <errno.h>
#include <stdint.h>
#include <rte_branch_prediction.h>
#include <rte_common.h>
#include <rte_malloc.h>
#include <rte_eal.h>

#include <lcp/lcp.h>

#include "counters_set.h"

#define COUNTERS_SHARDED_MAX 1024

struct counters_sharded_conf {
	uint32_t shards;
};

static const struct lcp_opt counters_sharded_opts[] = {
	LCP_OPT_UINT(struct counters_sharded_conf, shards, "shards", "16", 1, COUNTERS_SHARDED_MAX,
		     LCP_OPT_F_POW2, "number of shards; a thread adds to the shard its thread id hashes to"),
	LCP_OPT_END,
};

struct counters_sharded {
	unsigned n;
	uint32_t mask; /* shards - 1 */
	size_t stride; /* uint64_t per shard row, a multiple of a cache line */
	uint64_t vals[] __rte_cache_aligned;
};

/* the calling thread's hash, computed on its first add: 0 = not yet (the top bit
 * is always set in a computed one, so the low bits, the shard index, are free) */
static __thread uint32_t counters_sharded_tls_hash;

static __rte_noinline uint32_t
counters_sharded_hash_self(void)
{
	uint32_t h = (uint32_t)rte_gettid();

	/* murmur3's fmix32: consecutive thread ids land on unrelated shards */
	h ^= h >> 16;
	h *= 0x85ebca6bu;
	h ^= h >> 13;
	h *= 0xc2b2ae35u;
	h ^= h >> 16;
	counters_sharded_tls_hash = h | 0x80000000u;
	return counters_sharded_tls_hash;
}

static void *
counters_sharded_create(const void *conf, const char *const *names, unsigned n, unsigned n_slots,
			int socket)
{
	const struct counters_sharded_conf *cf = conf;
	uint32_t shards = cf != NULL ? cf->shards : 16;
	size_t stride = counters_row_stride(n);
	struct counters_sharded *c;

	RTE_SET_USED(names);
	if (n_slots == 0) {
		errno = EINVAL;
		return NULL;
	}
	if (shards == 0 || shards > COUNTERS_SHARDED_MAX || !rte_is_power_of_2(shards)) {
		lcp_log(NULL, LCP_LOG_ERR,
			"counters_sharded: option shards: expected a power of two in 1 .. %u, "
			"found %u",
			COUNTERS_SHARDED_MAX, shards);
		errno = EINVAL;
		return NULL;
	}
	c = counters_set_zalloc("counters_sharded", sizeof(*c) + stride * shards * sizeof(uint64_t),
				socket);
	if (c == NULL)
		return NULL;
	c->n = n;
	c->mask = shards - 1;
	c->stride = stride;
	return c;
}

static void
counters_sharded_add(void *set, unsigned slot, unsigned idx, uint64_t v)
{
	struct counters_sharded *c = set;
	uint32_t h = counters_sharded_tls_hash;

	RTE_SET_USED(slot); /* the design: the thread picks the shard, not the caller */
	if (unlikely(h == 0))
		h = counters_sharded_hash_self();
	__atomic_fetch_add(&c->vals[(h & c->mask) * c->stride + idx], v, __ATOMIC_RELAXED);
}

static uint64_t
counters_sharded_read(void *set, unsigned idx)
{
	struct counters_sharded *c = set;

	return counters_rows_sum(c->vals, c->mask + 1, c->stride, idx);
}

static const struct lcp_counters_ops counters_sharded_ops = {
	.create = counters_sharded_create,
	.destroy = rte_free,
	.add = counters_sharded_add,
	.read = counters_sharded_read,
};

LCP_PLUGIN_EXPORT const struct lcp_plugin lcp_plugin_descriptor = {
	LCP_PLUGIN_HEADER(LCP_KIND_COUNTERS, "counters_sharded"),
	.version = "1.0.0",
	.summary = "shards picked by a hash of the calling thread, atomic fetch-add "
		   "(the design measured slower)",
	.options = counters_sharded_opts,
	.conf_size = sizeof(struct counters_sharded_conf),
	.ops = &counters_sharded_ops,
};
