/* SPDX-License-Identifier: BSD-3-Clause
 * counters_batched — accumulate privately, publish in batches. Each writer slot
 * has a private row of plain uint64_t totals (on its own cache lines, with the
 * slot's bookkeeping) that add() bumps with ordinary adds, and a published row
 * that read() sums over the slots. A slot copies its private row into its
 * published row (relaxed 64-bit stores, only the counters that changed):
 *   - in add(), every `every` adds (option, default 64);
 *   - in tick() (ABI 1.3; the engine calls it on the slot's lcore with the TSC it
 *     read), when adds are pending and `interval_us` (default 100) µs have passed
 *     since the slot's last publish;
 *   - in flush(), unconditionally (the engine's final flush of every slot).
 * So read() lags a slot's true totals by fewer than `every` adds, and by at most
 * about `interval_us` (plus the gap between two ticks) while the engine ticks; it
 * is exact after flush(). A publish by add() takes its time from the latest
 * tick (add() reads no clock), which is never later than the true time: the
 * interval can only end early, never late.
 *
 * No `row` op: the SDK's inline add on a row would bypass the publishing.
 * Cost: an add is a plain load/add/store plus the pending count and its test, and
 * every `every` adds a copy of the changed counters (doc/benchmarks.md B9).
 *
 * Map: counters_batched_create (layout) -> _add / _tick / _flush on the writer
 * (-> counters_batched_publish) -> _read on any thread -> rte_free.
 */
#include <errno.h>
#include <stdint.h>
#include <rte_branch_prediction.h>
#include <rte_common.h>
#include <rte_malloc.h>
#include <rte_cycles.h>

#include <lcp/lcp.h>

#include "counters_set.h"

#define COUNTERS_BATCHED_EVERY_MAX (1u << 30)
#define COUNTERS_BATCHED_INTERVAL_MAX 10000000u /* 10 s */

struct counters_batched_conf {
	uint32_t every;
	uint32_t interval_us;
};

static const struct lcp_opt counters_batched_opts[] = {
	LCP_OPT_UINT(struct counters_batched_conf, every, "every", "64", 1,
		     COUNTERS_BATCHED_EVERY_MAX, 0,
		     "a writer publishes its private totals after this many adds"),
	LCP_OPT_UINT(struct counters_batched_conf, interval_us, "interval_us", "100", 0,
		     COUNTERS_BATCHED_INTERVAL_MAX, 0,
		     "and at the first engine tick this many microseconds after its last "
		     "publish, when adds are pending (0: at every tick)"),
	LCP_OPT_END,
};

/* one writer slot: written only by that slot's lcore (and by flush() once it has
 * stopped); the header and the private row are on lines no reader touches */
struct counters_batched_slot {
	uint64_t pending; /* adds since the last publish */
	uint64_t every;	  /* copies of the set's, on this slot's own line */
	uint64_t interval_tsc;
	uint64_t seen_tsc; /* now_tsc of the latest tick */
	uint64_t pub_tsc;  /* the last publish, by the clock known then */
	uint64_t *pub;	   /* this slot's published row (read by read()) */
	unsigned n;
	uint64_t priv[] __rte_cache_aligned; /* private totals, stride uint64_t */
};

struct counters_batched {
	unsigned n;
	unsigned n_slots;
	size_t stride;	  /* uint64_t per row, a multiple of a cache line */
	size_t slot_size; /* bytes per struct counters_batched_slot with its row */
	uint8_t *slots;	  /* n_slots blocks of slot_size */
	uint64_t *pub;	  /* n_slots published rows of stride */
};

static inline struct counters_batched_slot *
counters_batched_slot(struct counters_batched *c, unsigned slot)
{
	return (struct counters_batched_slot *)(c->slots + slot * c->slot_size);
}

static void *
counters_batched_create(const void *conf, const char *const *names, unsigned n, unsigned n_slots,
			int socket)
{
	const struct counters_batched_conf *cf = conf;
	uint64_t every = cf != NULL ? cf->every : 64;
	uint64_t interval_us = cf != NULL ? cf->interval_us : 100;
	size_t stride = counters_row_stride(n);
	size_t slot_size = sizeof(struct counters_batched_slot) + stride * sizeof(uint64_t);
	size_t head = RTE_ALIGN_CEIL(sizeof(struct counters_batched), RTE_CACHE_LINE_SIZE);
	uint64_t now = rte_rdtsc();
	struct counters_batched *c;

	RTE_SET_USED(names);
	if (n_slots == 0 || every == 0) {
		errno = EINVAL;
		return NULL;
	}
	slot_size = RTE_ALIGN_CEIL(slot_size, RTE_CACHE_LINE_SIZE);
	c = counters_set_zalloc("counters_batched",
				head + n_slots * slot_size + n_slots * stride * sizeof(uint64_t),
				socket);
	if (c == NULL)
		return NULL;
	c->n = n;
	c->n_slots = n_slots;
	c->stride = stride;
	c->slot_size = slot_size;
	c->slots = (uint8_t *)c + head;
	c->pub = (uint64_t *)(c->slots + n_slots * slot_size);
	for (unsigned s = 0; s < n_slots; s++) {
		struct counters_batched_slot *sl = counters_batched_slot(c, s);

		sl->every = every;
		sl->interval_tsc = interval_us * rte_get_tsc_hz() / 1000000u;
		sl->seen_tsc = now;
		sl->pub_tsc = now;
		sl->pub = &c->pub[s * stride];
		sl->n = n;
	}
	return c;
}

/* copy the slot's private totals that changed into its published row */
static __rte_noinline void
counters_batched_publish(struct counters_batched_slot *sl)
{
	for (unsigned i = 0; i < sl->n; i++) {
		uint64_t v = sl->priv[i];

		/* only the changed ones: a store takes the line from its readers */
		if (v != __atomic_load_n(&sl->pub[i], __ATOMIC_RELAXED))
			__atomic_store_n(&sl->pub[i], v, __ATOMIC_RELAXED);
	}
	sl->pending = 0;
	sl->pub_tsc = sl->seen_tsc;
}

static void
counters_batched_add(void *set, unsigned slot, unsigned idx, uint64_t v)
{
	struct counters_batched_slot *sl = counters_batched_slot(set, slot);

	sl->priv[idx] += v;
	if (unlikely(++sl->pending >= sl->every))
		counters_batched_publish(sl);
}

static void
counters_batched_tick(void *set, unsigned slot, uint64_t now_tsc)
{
	struct counters_batched_slot *sl = counters_batched_slot(set, slot);

	sl->seen_tsc = now_tsc;
	/* signed: a TSC from before the last publish never ends the interval */
	if (sl->pending != 0 && (int64_t)(now_tsc - sl->pub_tsc) >= (int64_t)sl->interval_tsc)
		counters_batched_publish(sl);
}

static void
counters_batched_flush(void *set, unsigned slot)
{
	struct counters_batched_slot *sl = counters_batched_slot(set, slot);

	sl->seen_tsc = rte_rdtsc();
	counters_batched_publish(sl);
}

static uint64_t
counters_batched_read(void *set, unsigned idx)
{
	struct counters_batched *c = set;

	return counters_rows_sum(c->pub, c->n_slots, c->stride, idx);
}

static const struct lcp_counters_ops counters_batched_ops = {
	.create = counters_batched_create,
	.destroy = rte_free,
	.add = counters_batched_add,
	.flush = counters_batched_flush,
	.read = counters_batched_read,
	.tick = counters_batched_tick,
};

LCP_PLUGIN_EXPORT const struct lcp_plugin lcp_plugin_descriptor = {
	LCP_PLUGIN_HEADER(LCP_KIND_COUNTERS, "counters_batched"),
	.version = "1.0.0",
	.summary = "per-lcore private totals published every N adds or T microseconds",
	.options = counters_batched_opts,
	.conf_size = sizeof(struct counters_batched_conf),
	.ops = &counters_batched_ops,
};
