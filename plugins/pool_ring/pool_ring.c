/* SPDX-License-Identifier: BSD-3-Clause
 * pool_ring — the pool strategy without caches: one slab of n objects
 * (rte_zmalloc_socket, allocated once at create) and a freelist of pointers into
 * it on a multi-producer, multi-consumer rte_ring of exactly n slots. A get is
 * one MC dequeue of n pointers, a put one MP enqueue.
 *
 * Why it exists: it is the simplest real pool, and the one whose capacity is
 * exact from every lcore (no object parked in another lcore's cache, unlike
 * pool_mempool), at the price of a compare-and-swap on the ring's shared head
 * for every get and every put. It shows in B4 what pool_mempool's per-lcore
 * cache buys.
 *
 * Objects: obj_size rounded up to "align" (default a cache line, so objects
 * used on different lcores never share one), contiguous in the slab; in_use is
 * n - rte_ring_count(). A put of a pointer this pool did not hand out is a
 * caller bug that is not detected (the fast path checks nothing); destroy()
 * frees the slab with every object in it.
 *
 * Map: pool_ring_create (slab, ring, every object enqueued) -> get_bulk
 * (rte_ring_mc_dequeue_bulk) / put_bulk (rte_ring_mp_enqueue_bulk) -> in_use.
 */
#include <errno.h>
#include <stdio.h>
#include <rte_common.h>
#include <rte_errno.h>
#include <rte_malloc.h>
#include <rte_ring.h>

#include <lcp/lcp.h>

struct pool_ring_conf {
	uint32_t align;
};

#define C struct pool_ring_conf
static const struct lcp_opt pool_ring_opts[] = {
	LCP_OPT_UINT(C, align, "align", "64", 16, 4096, LCP_OPT_F_POW2,
		     "object alignment and stride granularity in bytes (64: no two objects share a cache line)"),
	LCP_OPT_END,
};
#undef C

struct pool_ring {
	struct rte_ring *r;
	unsigned n;
	void *slab;
};

static uint32_t pool_ring_seq; /* makes DPDK object names unique in the process */

static void
pool_ring_destroy(void *pool)
{
	struct pool_ring *p = pool;

	if (p == NULL)
		return;
	rte_ring_free(p->r);
	rte_free(p->slab);
	rte_free(p);
}

/* conf NULL: the defaults (a program using the module without the engine) */
static void *
pool_ring_create(const void *conf, const char *name, size_t obj_size, unsigned n, unsigned cache,
		 int socket)
{
	const struct pool_ring_conf *c = conf;
	size_t align = c != NULL ? c->align : RTE_CACHE_LINE_SIZE;
	char rname[RTE_RING_NAMESIZE];
	struct pool_ring *p;
	size_t stride;
	int err;

	if (n == 0 || obj_size == 0 || n > RTE_RING_SZ_MASK || !rte_is_power_of_2(align) ||
	    align < 16 || obj_size > SIZE_MAX - align) {
		errno = EINVAL;
		return NULL;
	}
	stride = RTE_ALIGN_CEIL(obj_size, align);
	if (stride > SIZE_MAX / n) {
		errno = EINVAL;
		return NULL;
	}
	p = rte_zmalloc_socket("pool_ring", sizeof(*p), RTE_CACHE_LINE_SIZE, socket);
	if (p == NULL) {
		errno = ENOMEM;
		return NULL;
	}
	p->n = n;
	p->slab = rte_zmalloc_socket("pool_ring_slab", stride * n, align, socket);
	if (p->slab == NULL) {
		err = ENOMEM;
		goto fail;
	}
	snprintf(rname, sizeof(rname), "pr%u_%s",
		 __atomic_fetch_add(&pool_ring_seq, 1, __ATOMIC_RELAXED), name ? name : "");
	/* flags 0: multi-producer, multi-consumer; EXACT_SZ: n usable slots */
	p->r = rte_ring_create(rname, n, socket, RING_F_EXACT_SZ);
	if (p->r == NULL) {
		err = rte_errno ? rte_errno : ENOMEM;
		goto fail;
	}
	for (unsigned i = 0; i < n; i++) {
		void *o = (char *)p->slab + (size_t)i * stride;

		if (rte_ring_enqueue(p->r, o) != 0) { /* cannot happen: n slots */
			err = ENOSPC;
			goto fail;
		}
	}
	return p;
fail:
	pool_ring_destroy(p);
	errno = err;
	return NULL;
}

static int
pool_ring_get_bulk(void *pool, void **objs, unsigned n)
{
	struct pool_ring *p = pool;

	return likely(rte_ring_mc_dequeue_bulk(p->r, objs, n, NULL) == n) ? 0 : -ENOBUFS;
}

static void
pool_ring_put_bulk(void *pool, void *const *objs, unsigned n)
{
	struct pool_ring *p = pool;

	/* n slots for n objects: cannot be full unless a foreign pointer is put */
	rte_ring_mp_enqueue_bulk(p->r, objs, n, NULL);
}

static unsigned
pool_ring_in_use(void *pool)
{
	struct pool_ring *p = pool;

	return p->n - rte_ring_count(p->r);
}

static const struct lcp_pool_ops pool_ring_ops = {
	.create = pool_ring_create,
	.destroy = pool_ring_destroy,
	.get_bulk = pool_ring_get_bulk,
	.put_bulk = pool_ring_put_bulk,
	.in_use = pool_ring_in_use,
};

LCP_PLUGIN_EXPORT const struct lcp_plugin lcp_plugin_descriptor = {
	LCP_PLUGIN_HEADER(LCP_KIND_POOL, "pool_ring"),
	.version = "1.0.0",
	.summary = "preallocated slab with an MP/MC rte_ring freelist, no per-lcore cache",
	.options = pool_ring_opts,
	.conf_size = sizeof(struct pool_ring_conf),
	.ops = &pool_ring_ops,
};
