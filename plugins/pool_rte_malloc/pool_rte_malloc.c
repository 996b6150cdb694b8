/* SPDX-License-Identifier: BSD-3-Clause
 * pool_rte_malloc — the pool strategy on DPDK's general-purpose heap:
 * rte_malloc_socket() per object on get, rte_free() on put, with the capacity n
 * enforced by a counter (plugins/common/pool_cap.h) as in pool_malloc.
 *
 * Why it exists: it is what DPDK code uses when it needs memory from the EAL's
 * (hugepage or, here, --no-huge) memory on a given socket without setting up a
 * mempool, and the figure the project's target compares against ("fragment
 * allocation from a mempool 19x faster than rte_malloc", B4). Every call takes
 * the socket heap's spinlock, walks its free lists, splits or joins elements,
 * and each object carries a cache-line element header: it is the slow, simple
 * choice for pools that are rarely touched on the fast path.
 *
 * Objects: cache-line aligned (rte_malloc's default alignment), on the pool's
 * socket. destroy() frees the pool only: objects still out when it runs are the
 * caller's leak (the engine reports it). No options.
 *
 * Map: pool_rte_malloc_create -> get_bulk (take n of the capacity, then
 * rte_malloc_socket each; on failure free what was taken, give back) / put_bulk
 * (rte_free each, give back) -> in_use (the counter).
 */
#include <errno.h>
#include <rte_common.h>
#include <rte_malloc.h>

#include <lcp/lcp.h>

#include "pool_cap.h"

struct pool_rte_malloc {
	size_t size;
	uint64_t n;
	int socket;
	struct pool_cap cap; /* its own cache line */
};

static void *
pool_rte_malloc_create(const void *conf, const char *name, size_t obj_size, unsigned n,
		       unsigned cache, int socket)
{
	struct pool_rte_malloc *p;

	if (n == 0 || obj_size == 0) {
		errno = EINVAL;
		return NULL;
	}
	p = rte_zmalloc_socket("pool_rte_malloc", sizeof(*p), RTE_CACHE_LINE_SIZE, socket);
	if (p == NULL) {
		errno = ENOMEM;
		return NULL;
	}
	p->size = obj_size;
	p->n = n;
	p->socket = socket;
	return p;
}

static void
pool_rte_malloc_destroy(void *pool)
{
	rte_free(pool);
}

static inline void *
pool_rte_malloc_obj(const void *pool)
{
	const struct pool_rte_malloc *p = pool;

	/* align 0: a cache line */
	return rte_malloc_socket(NULL, p->size, 0, p->socket);
}

static int
pool_rte_malloc_get_bulk(void *pool, void **objs, unsigned n)
{
	struct pool_rte_malloc *p = pool;

	return pool_cap_get_each(&p->cap, p->n, objs, n, pool_rte_malloc_obj, rte_free, p);
}

static void
pool_rte_malloc_put_bulk(void *pool, void *const *objs, unsigned n)
{
	struct pool_rte_malloc *p = pool;

	pool_cap_put_each(&p->cap, objs, n, rte_free);
}

static unsigned
pool_rte_malloc_in_use(void *pool)
{
	struct pool_rte_malloc *p = pool;

	return pool_cap_in_use(&p->cap);
}

static const struct lcp_pool_ops pool_rte_malloc_ops = {
	.create = pool_rte_malloc_create,
	.destroy = pool_rte_malloc_destroy,
	.get_bulk = pool_rte_malloc_get_bulk,
	.put_bulk = pool_rte_malloc_put_bulk,
	.in_use = pool_rte_malloc_in_use,
};

LCP_PLUGIN_EXPORT const struct lcp_plugin lcp_plugin_descriptor = {
	LCP_PLUGIN_HEADER(LCP_KIND_POOL, "pool_rte_malloc"),
	.version = "1.0.0",
	.summary = "rte_malloc_socket/rte_free per object on the pool's socket, capacity counted",
	.ops = &pool_rte_malloc_ops,
};
