/* SPDX-License-Identifier: BSD-3-Clause
 * counters_set.h — what the counters strategies (counters_percore,
 * counters_atomic, counters_sharded, counters_batched, counters_null) lay out
 * the same way: a set is one zeroed, cache-line aligned rte_zmalloc block on
 * the requested socket (destroy is rte_free itself); a row of the set's n
 * counters is a whole number of cache lines; read() of a strategy with several
 * rows sums the counter over them with relaxed loads (each row has its own
 * writer).
 */
#ifndef LCP_COUNTERS_SET_H
#define LCP_COUNTERS_SET_H

#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <rte_common.h>
#include <rte_malloc.h>

/* uint64_t per row of n counters: a multiple of a cache line (one line when
 * n is 0) */
static inline size_t
counters_row_stride(unsigned n)
{
	return RTE_ALIGN_CEIL((size_t)(n ? n : 1), RTE_CACHE_LINE_SIZE / sizeof(uint64_t));
}

/* a zeroed set of size bytes, cache-line aligned, on socket; NULL with errno
 * ENOMEM */
static inline void *
counters_set_zalloc(const char *name, size_t size, int socket)
{
	void *c = rte_zmalloc_socket(name, size, RTE_CACHE_LINE_SIZE, socket);

	if (c == NULL)
		errno = ENOMEM;
	return c;
}

/* counter idx summed over n_rows rows of stride uint64_t from vals */
static inline uint64_t
counters_rows_sum(const uint64_t *vals, unsigned n_rows, size_t stride, unsigned idx)
{
	uint64_t sum = 0;

	for (unsigned s = 0; s < n_rows; s++)
		sum += __atomic_load_n(&vals[s * stride + idx], __ATOMIC_RELAXED);
	return sum;
}

#endif
