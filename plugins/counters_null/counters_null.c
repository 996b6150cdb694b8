/* SPDX-License-Identifier: BSD-3-Clause
 * counters_null — a measurement control, not a counters strategy: it records
 * nothing and every read() is 0, so a report, the stats lines and telemetry show
 * zeros for every counter while the pipeline runs as usual. B10 compares the
 * engine's instrumentation against a run with it (as sink_null is the control of
 * a sink).
 *
 * What "nothing" is within the ABI: lcp_ctr_add() is inline in every stage and
 * either stores to the slot's row (ctr_row) or calls add(); no strategy can make
 * the engine skip it. The default is the call of an empty add() with no row:
 * nothing is stored anywhere, but the indirect call costs more than
 * counters_percore's inline row store (B9: the call path 4.6 cycles per add, the
 * row 1.8), so a run with it is an upper bound of the cost of "no counters" and
 * the overhead measured against it a lower bound. "scratch_row": true gives each writer slot a private
 * row that nobody reads, so the adds are the same inline stores as
 * counters_percore's: the cheapest the ABI allows, and what remains between the
 * two is what reading and publishing the counters costs. */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <rte_common.h>
#include <rte_malloc.h>

#include <lcp/lcp.h>

#include "counters_set.h"

struct counters_null_conf {
	bool scratch_row;
};

static const struct lcp_opt counters_null_opts[] = {
	LCP_OPT_BOOL(struct counters_null_conf, scratch_row, "scratch_row", "false",
		     "give each writer slot a row of its own that nobody reads (adds are inline "
		     "stores, as with counters_percore) instead of an empty add() call"),
	LCP_OPT_END,
};

struct counters_null {
	size_t stride;	 /* uint64_t per scratch row; 0 without scratch rows */
	uint64_t rows[] __rte_cache_aligned; /* written, never read */
};

static void *
counters_null_create(const void *conf, const char *const *names, unsigned n, unsigned n_slots,
		     int socket)
{
	const struct counters_null_conf *cf = conf;
	size_t stride = 0;
	struct counters_null *c;

	RTE_SET_USED(names);
	if (n_slots == 0) {
		errno = EINVAL;
		return NULL;
	}
	if (cf != NULL && cf->scratch_row)
		stride = counters_row_stride(n);
	c = counters_set_zalloc("counters_null", sizeof(*c) + stride * n_slots * sizeof(uint64_t),
				socket);
	if (c == NULL)
		return NULL;
	c->stride = stride;
	return c;
}

static void
counters_null_add(void *set, unsigned slot, unsigned idx, uint64_t v)
{
	RTE_SET_USED(set);
	RTE_SET_USED(slot);
	RTE_SET_USED(idx);
	RTE_SET_USED(v);
}

static uint64_t
counters_null_read(void *set, unsigned idx)
{
	RTE_SET_USED(set);
	RTE_SET_USED(idx);
	return 0;
}

/* NULL (the engine calls add()) unless scratch_row */
static uint64_t *
counters_null_row(void *set, unsigned slot)
{
	struct counters_null *c = set;

	return c->stride != 0 ? &c->rows[slot * c->stride] : NULL;
}

static const struct lcp_counters_ops counters_null_ops = {
	.create = counters_null_create,
	.destroy = rte_free,
	.add = counters_null_add,
	.read = counters_null_read,
	.row = counters_null_row,
};

LCP_PLUGIN_EXPORT const struct lcp_plugin lcp_plugin_descriptor = {
	LCP_PLUGIN_HEADER(LCP_KIND_COUNTERS, "counters_null"),
	.version = "1.0.0",
	.summary = "measurement control: records nothing, every counter reads 0 (reports show "
		   "zeros)",
	.options = counters_null_opts,
	.conf_size = sizeof(struct counters_null_conf),
	.ops = &counters_null_ops,
};
