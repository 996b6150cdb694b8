/* SPDX-License-Identifier: BSD-3-Clause
 * lcp/pool.h — the pool strategy (plugins of kind LCP_KIND_POOL, ABI 1.3) and the
 * fixed-size object pools stages get from it.
 *
 * A stage asks for a pool with lcp_pool_create(); the engine builds it with the
 * pool module the config selects for that stage ("strategies": {"pool": ...},
 * globally or per stage; default pool_mempool). Objects may be taken on one
 * lcore and given back on another, with every module: that is how a msg made by
 * the ws stage is released by a sink on another lcore.
 *
 * Exhaustion is never fatal: get returns -ENOBUFS, the pool counts it
 * ("get_fail" in the report's "pools" section) and the stage decides (drop with
 * one of its drop_ counters, or backpressure).
 */
#ifndef LCP_POOL_H
#define LCP_POOL_H

#include <stddef.h>
#include <stdint.h>
#include <rte_branch_prediction.h>

#ifdef __cplusplus
extern "C" {
#endif

struct lcp_stage;

/* The module's ops. Every call but create/destroy may run on any EAL lcore
 * (workers and the main lcore) concurrently with the others. */
struct lcp_pool_ops {
	/* n objects of obj_size bytes, aligned to at least 16 bytes; cache is the
	 * per-lcore cache size asked for (a module without caches ignores it);
	 * name (< 26 characters, unique in the process) for diagnostics.
	 * Return NULL and set errno on failure. */
	void *(*create)(const void *conf, const char *name, size_t obj_size, unsigned n,
			unsigned cache, int socket);
	void (*destroy)(void *pool);
	/* all or nothing: 0 with n objects in objs, or -ENOBUFS with none taken */
	int (*get_bulk)(void *pool, void **objs, unsigned n);
	void (*put_bulk)(void *pool, void *const *objs, unsigned n);
	/* objects handed out and not yet put back: exact when no get/put runs */
	unsigned (*in_use)(void *pool);
	void *reserved[4];
};

/* A stage's pool. Public only for the inlines below. */
struct lcp_pool {
	void *pool;                     /* module-private */
	int (*get_bulk)(void *pool, void **objs, unsigned n);
	void (*put_bulk)(void *pool, void *const *objs, unsigned n);
	uint64_t get_fail;              /* failed gets (atomic add, cold path) */
	const struct lcp_pool_ops *ops;
	struct lcp_stage *st;
	size_t obj_size;
	unsigned n;
	char name[32];
	const char *module;
	unsigned peak;                  /* largest in_use seen by the stats ticks */
	void *reserved[2];
};

/* Control path (init/start/fini): a pool of n objects of obj_size bytes for st,
 * with the module the config selects for st. NULL after logging why. cache 0
 * means the module's default. */
struct lcp_pool *lcp_pool_create(struct lcp_stage *st, const char *name, size_t obj_size,
				 unsigned n, unsigned cache);
/* Control path: free the pool. Objects still out are reported (log + the
 * engine's leak count) and the pool is freed anyway. NULL is allowed. */
void lcp_pool_free(struct lcp_pool *p);
/* objects out right now */
unsigned lcp_pool_in_use(const struct lcp_pool *p);

static inline int
lcp_pool_get_bulk(struct lcp_pool *p, void **objs, unsigned n)
{
	int rc = p->get_bulk(p->pool, objs, n);

	if (unlikely(rc != 0))
		__atomic_fetch_add(&p->get_fail, 1, __ATOMIC_RELAXED);
	return rc;
}

/* one object, or NULL (counted in get_fail) */
static inline void *
lcp_pool_get(struct lcp_pool *p)
{
	void *o;

	return lcp_pool_get_bulk(p, &o, 1) == 0 ? o : NULL;
}

static inline void
lcp_pool_put_bulk(struct lcp_pool *p, void *const *objs, unsigned n)
{
	p->put_bulk(p->pool, objs, n);
}

static inline void
lcp_pool_put(struct lcp_pool *p, void *obj)
{
	p->put_bulk(p->pool, &obj, 1);
}

#ifdef __cplusplus
}
#endif
#endif
