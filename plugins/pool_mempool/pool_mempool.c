/* SPDX-License-Identifier: BSD-3-Clause
 * pool_mempool — the default pool strategy: one rte_mempool (multi-producer,
 * multi-consumer ring underneath) with a per-lcore object cache. A get or put on an
 * EAL lcore is served from that lcore's cache (a few loads and stores, no atomic)
 * and touches the shared ring only to refill or flush cache-sized batches; a
 * non-EAL thread has no cache and goes to the ring every time.
 *
 * Why a module and not just "the" pool: the cache is what makes the fast path
 * cheap, and it is also the limit to know about — objects parked in one lcore's
 * cache (up to 1.5 × cache) are not available to another lcore, so on a pool
 * sized exactly for its load a get on lcore A can fail with -ENOBUFS while in_use
 * is below n. Size n with that slack, or choose pool_ring (no cache).
 *
 * Cache size: the option "cache_size" when >= 0, else the size the stage asks
 * for, else 256; then clamped to RTE_MEMPOOL_CACHE_MAX_SIZE and to n / 1.5 (DPDK
 * refuses a cache whose flush threshold, 1.5 × size, exceeds n).
 * Objects are cache-line aligned (rte_mempool's default).
 *
 * Map: pool_mempool_create -> rte_mempool_create; get_bulk / put_bulk -> a
 * single-object fast path on the lcore's cache, else rte_mempool_get_bulk /
 * rte_mempool_put_bulk; in_use ->
 * rte_mempool_in_use_count (sums the lcores' caches: control path).
 */
#include <errno.h>
#include <stdio.h>
#include <rte_common.h>
#include <rte_errno.h>
#include <rte_mempool.h>

#include <lcp/lcp.h>

#define POOL_MEMPOOL_CACHE_DEFAULT 256

struct pool_mempool_conf {
	int32_t cache_size;
};

#define C struct pool_mempool_conf
static const struct lcp_opt pool_mempool_opts[] = {
	LCP_OPT_INT(C, cache_size, "cache_size", "-1", -1, RTE_MEMPOOL_CACHE_MAX_SIZE, 0,
		    "objects cached per lcore: -1 = what the stage asks for (256 if it asks 0), "
		    "0 = no cache; clamped to n / 1.5"),
	LCP_OPT_END,
};
#undef C

static uint32_t pool_mempool_seq; /* makes DPDK object names unique in the process */

/* the cache size actually used for a pool of n (see the header comment) */
static unsigned
pool_mempool_cache_for(const struct pool_mempool_conf *c, unsigned n, unsigned asked)
{
	unsigned cache;

	if (c != NULL && c->cache_size >= 0)
		cache = (unsigned)c->cache_size;
	else
		cache = asked != 0 ? asked : POOL_MEMPOOL_CACHE_DEFAULT;
	if (cache > RTE_MEMPOOL_CACHE_MAX_SIZE)
		cache = RTE_MEMPOOL_CACHE_MAX_SIZE;
	/* DPDK: the flush threshold (cache * 1.5) must not exceed n */
	if ((uint64_t)cache * 3 / 2 > n)
		cache = (unsigned)((uint64_t)n * 2 / 3);
	return cache;
}

/* conf NULL: the defaults (a program using the module without the engine) */
static void *
pool_mempool_create(const void *conf, const char *name, size_t obj_size, unsigned n,
		    unsigned cache, int socket)
{
	const struct pool_mempool_conf *c = conf;
	char mp_name[RTE_MEMPOOL_NAMESIZE];
	struct rte_mempool *mp;

	if (n == 0 || obj_size == 0 || obj_size > UINT32_MAX) {
		errno = EINVAL;
		return NULL;
	}
	snprintf(mp_name, sizeof(mp_name), "pm%u_%s",
		 __atomic_fetch_add(&pool_mempool_seq, 1, __ATOMIC_RELAXED), name ? name : "");
	mp = rte_mempool_create(mp_name, n, (unsigned)obj_size, pool_mempool_cache_for(c, n, cache),
				0, NULL, NULL, NULL, NULL, socket, 0);
	if (mp == NULL) {
		errno = rte_errno ? rte_errno : ENOMEM;
		return NULL;
	}
	return mp;
}

static void
pool_mempool_destroy(void *pool)
{
	rte_mempool_free(pool);
}

/* One object (lcp_pool_get/lcp_pool_put, what stages mostly call) with the
 * calling lcore's cache able to serve it: exactly what rte_mempool_get_bulk /
 * rte_mempool_put_bulk do in that case (pop from / push onto the top of the
 * cache while it stays within its flush threshold), as rte_mempool_default_cache
 * finds the cache, without their general loops, memcpy and trace points.
 * Everything else goes to DPDK's functions, out of line so that the fast path
 * needs no stack frame. */
static inline struct rte_mempool_cache *
pool_mempool_cache(struct rte_mempool *mp)
{
	unsigned lcore = rte_lcore_id();

	return mp->cache_size != 0 && lcore < RTE_MAX_LCORE ? &mp->local_cache[lcore] : NULL;
}

static __rte_noinline int
pool_mempool_get_slow(struct rte_mempool *mp, void **objs, unsigned n)
{
	/* all or nothing; DPDK says -ENOENT, the contract -ENOBUFS */
	return rte_mempool_get_bulk(mp, objs, n) == 0 ? 0 : -ENOBUFS;
}

static int
pool_mempool_get_bulk(void *pool, void **objs, unsigned n)
{
	struct rte_mempool *mp = pool;

	if (n == 1) {
		struct rte_mempool_cache *c = pool_mempool_cache(mp);

		if (likely(c != NULL && c->len > 0)) {
			objs[0] = c->objs[--c->len];
			return 0;
		}
	}
	return pool_mempool_get_slow(mp, objs, n);
}

static __rte_noinline void
pool_mempool_put_slow(struct rte_mempool *mp, void *const *objs, unsigned n)
{
	rte_mempool_put_bulk(mp, objs, n);
}

static void
pool_mempool_put_bulk(void *pool, void *const *objs, unsigned n)
{
	struct rte_mempool *mp = pool;

	if (n == 1) {
		struct rte_mempool_cache *c = pool_mempool_cache(mp);

		if (likely(c != NULL && c->len < c->flushthresh)) {
			c->objs[c->len++] = objs[0];
			return;
		}
	}
	pool_mempool_put_slow(mp, objs, n);
}

static unsigned
pool_mempool_in_use(void *pool)
{
	return rte_mempool_in_use_count(pool);
}

static const struct lcp_pool_ops pool_mempool_ops = {
	.create = pool_mempool_create,
	.destroy = pool_mempool_destroy,
	.get_bulk = pool_mempool_get_bulk,
	.put_bulk = pool_mempool_put_bulk,
	.in_use = pool_mempool_in_use,
};

LCP_PLUGIN_EXPORT const struct lcp_plugin lcp_plugin_descriptor = {
	LCP_PLUGIN_HEADER(LCP_KIND_POOL, "pool_mempool"),
	.version = "1.0.0",
	.summary = "rte_mempool with a per-lcore cache, MP/MC (default)",
	.options = pool_mempool_opts,
	.conf_size = sizeof(struct pool_mempool_conf),
	.ops = &pool_mempool_ops,
};
