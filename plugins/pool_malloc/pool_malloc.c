/* SPDX-License-Identifier: BSD-3-Clause
 * pool_malloc — the pool strategy that is no pool: every get is a glibc malloc()
 * per object, every put a free(). The capacity n is enforced by a counter
 * (pool_cap.h), so exhaustion is observable and memory bounded like with the
 * other modules.
 *
 * Why it exists: it is the allocator a C programmer reaches for first, and the
 * anchor every other module is measured against (B4). glibc serves small
 * objects from its per-thread cache (tcache, 7 chunks per size class) and
 * per-thread arenas, cheaply while a thread frees what it allocated; an object
 * freed on another lcore goes to that lcore's tcache or takes the owning
 * arena's lock. When frees leave more than M_TRIM_THRESHOLD (128 KiB by
 * default, adjusted dynamically by glibc) free at the top of a heap, glibc gives
 * the memory back to the kernel inside that free() (brk or madvise): thousands
 * of cycles for one put. Objects of M_MMAP_THRESHOLD or more are mmap'ed one by one.
 *
 * Options "trim_threshold" and "mmap_threshold": -1 (default) leaves glibc's
 * setting alone; a value >= 0 is passed to mallopt() once, at create. mallopt is
 * PROCESS-WIDE: it changes malloc for every stage, the engine and DPDK's
 * non-hugepage allocations, and the last pool created wins. Setting either one
 * also turns off glibc's dynamic adjustment of both thresholds.
 *
 * Objects: obj_size rounded up to 16 bytes; glibc returns 16-byte aligned memory
 * on 64-bit targets (checked at compile time). destroy() frees the pool only:
 * objects still out when it runs are the caller's leak (the engine reports it).
 *
 * Map: pool_malloc_create (mallopt, the pool struct) -> get_bulk (take n of the
 * capacity, then malloc each; on a failed malloc free what was taken, give back)
 * / put_bulk (free each, give back) -> in_use (the counter).
 */
#include <errno.h>
#include <malloc.h>
#include <stddef.h>
#include <stdlib.h>
#include <rte_common.h>

#include <lcp/lcp.h>

#include "pool_cap.h"

/* what get_bulk promises: malloc's alignment is that of max_align_t */
_Static_assert(_Alignof(max_align_t) >= 16, "glibc malloc must return 16-byte aligned memory");

struct pool_malloc_conf {
	int32_t trim_threshold;
	int32_t mmap_threshold;
};

#define C struct pool_malloc_conf
static const struct lcp_opt pool_malloc_opts[] = {
	LCP_OPT_INT(C, trim_threshold, "trim_threshold", "-1", -1, INT32_MAX, 0,
		    "bytes: mallopt(M_TRIM_THRESHOLD) once at create, PROCESS-WIDE; -1 = "
		    "leave glibc's (128 KiB, dynamic)"),
	LCP_OPT_INT(C, mmap_threshold, "mmap_threshold", "-1", -1, 32 * 1024 * 1024, 0,
		    "bytes: mallopt(M_MMAP_THRESHOLD) once at create, PROCESS-WIDE; -1 = "
		    "leave glibc's (128 KiB, dynamic)"),
	LCP_OPT_END,
};
#undef C

struct pool_malloc {
	size_t size; /* obj_size rounded up to 16 */
	uint64_t n;
	struct pool_cap cap; /* its own cache line */
};

static void *
pool_malloc_create(const void *conf, const char *name, size_t obj_size, unsigned n,
		   unsigned cache, int socket)
{
	const struct pool_malloc_conf *c = conf;
	struct pool_malloc *p;

	if (n == 0 || obj_size == 0 || obj_size > SIZE_MAX - 15) {
		errno = EINVAL;
		return NULL;
	}
	/* mallopt returns 1 on success, 0 on error */
	if (c != NULL && c->trim_threshold >= 0 && mallopt(M_TRIM_THRESHOLD, c->trim_threshold) != 1) {
		errno = EINVAL;
		return NULL;
	}
	if (c != NULL && c->mmap_threshold >= 0 && mallopt(M_MMAP_THRESHOLD, c->mmap_threshold) != 1) {
		errno = EINVAL;
		return NULL;
	}
	if (posix_memalign((void **)&p, RTE_CACHE_LINE_SIZE, sizeof(*p)) != 0) {
		errno = ENOMEM;
		return NULL;
	}
	p->size = RTE_ALIGN_CEIL(obj_size, (size_t)16);
	p->n = n;
	p->cap.in_use = 0;
	return p;
}

static void
pool_malloc_destroy(void *pool)
{
	free(pool);
}

static inline void *
pool_malloc_obj(const void *pool)
{
	return malloc(((const struct pool_malloc *)pool)->size);
}

static int
pool_malloc_get_bulk(void *pool, void **objs, unsigned n)
{
	struct pool_malloc *p = pool;

	return pool_cap_get_each(&p->cap, p->n, objs, n, pool_malloc_obj, free, p);
}

static void
pool_malloc_put_bulk(void *pool, void *const *objs, unsigned n)
{
	struct pool_malloc *p = pool;

	pool_cap_put_each(&p->cap, objs, n, free);
}

static unsigned
pool_malloc_in_use(void *pool)
{
	struct pool_malloc *p = pool;

	return pool_cap_in_use(&p->cap);
}

static const struct lcp_pool_ops pool_malloc_ops = {
	.create = pool_malloc_create,
	.destroy = pool_malloc_destroy,
	.get_bulk = pool_malloc_get_bulk,
	.put_bulk = pool_malloc_put_bulk,
	.in_use = pool_malloc_in_use,
};

LCP_PLUGIN_EXPORT const struct lcp_plugin lcp_plugin_descriptor = {
	LCP_PLUGIN_HEADER(LCP_KIND_POOL, "pool_malloc"),
	.version = "1.0.0",
	.summary = "glibc malloc/free per object, capacity counted (mallopt options are process-wide)",
	.options = pool_malloc_opts,
	.conf_size = sizeof(struct pool_malloc_conf),
	.ops = &pool_malloc_ops,
};
