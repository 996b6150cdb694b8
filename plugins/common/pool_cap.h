/* SPDX-License-Identifier: BSD-3-Clause
 * pool_cap.h — capacity accounting for the pool strategies that allocate one
 * object at a time from a general-purpose allocator (pool_malloc, pool_rte_malloc).
 *
 * Such an allocator never runs out at n objects by itself; the count below makes
 * the pool's capacity real, so exhaustion is observable (-ENOBUFS, as with the
 * other modules) and the memory a stage can hold is bounded. One relaxed atomic
 * on its own cache line: take = fetch_add then check, undone on overflow; give =
 * fetch_sub. Near the limit two racing takes may both be undone although one of
 * them alone would fit (a spurious -ENOBUFS, never an overshoot). The counter is
 * a cache line that every lcore using the pool writes: that is this accounting's
 * cost, visible in B4's cross-lcore case.
 *
 * pool_cap_get_each / pool_cap_put_each are such a pool's get_bulk and put_bulk
 * around its allocator's one-object calls (inlined, the calls direct).
 */
#ifndef LCP_POOL_CAP_H
#define LCP_POOL_CAP_H

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <rte_branch_prediction.h>
#include <rte_common.h>

struct pool_cap {
	/* objects out, including ones being taken; alone on its cache line (the
	 * struct is cache-line aligned and sized) */
	uint64_t in_use __rte_cache_aligned;
};

/* reserve n of cap; false (nothing reserved) when that would exceed cap */
static inline bool
pool_cap_take(struct pool_cap *c, uint64_t cap, unsigned n)
{
	uint64_t old = __atomic_fetch_add(&c->in_use, n, __ATOMIC_RELAXED);

	if (unlikely(old + n > cap)) {
		__atomic_fetch_sub(&c->in_use, n, __ATOMIC_RELAXED);
		return false;
	}
	return true;
}

static inline void
pool_cap_give(struct pool_cap *c, unsigned n)
{
	__atomic_fetch_sub(&c->in_use, n, __ATOMIC_RELAXED);
}

/* get_bulk: take n of cap, then objs[i] = alloc(pool) for each; when one
 * fails, release() the ones taken and give the n back. 0 or -ENOBUFS. */
static __rte_always_inline int
pool_cap_get_each(struct pool_cap *c, uint64_t cap, void **objs, unsigned n,
		  void *(*alloc)(const void *pool), void (*release)(void *obj), const void *pool)
{
	unsigned i;

	if (unlikely(!pool_cap_take(c, cap, n)))
		return -ENOBUFS;
	for (i = 0; i < n; i++) {
		objs[i] = alloc(pool);
		if (unlikely(objs[i] == NULL))
			goto undo;
	}
	return 0;
undo:
	while (i > 0)
		release(objs[--i]);
	pool_cap_give(c, n);
	return -ENOBUFS;
}

/* put_bulk: release() each of the n objects, give the n back */
static __rte_always_inline void
pool_cap_put_each(struct pool_cap *c, void *const *objs, unsigned n, void (*release)(void *obj))
{
	for (unsigned i = 0; i < n; i++)
		release(objs[i]);
	pool_cap_give(c, n);
}

static inline unsigned
pool_cap_in_use(const struct pool_cap *c)
{
	return (unsigned)__atomic_load_n(&c->in_use, __ATOMIC_RELAXED);
}

#endif
