/* SPDX-License-Identifier: BSD-3-Clause
 * b2_graph_walk.h — B2's timed rte_graph walk, compiled twice: by b2_graph.c
 * with DPDK's stats setting, by b2_graph_nostats.c without it (see b2_graph.h).
 * Include it after <rte_graph_worker.h>, whose inline rte_graph_walk() it
 * runs. */
#ifndef LCP_B2_GRAPH_WALK_H
#define LCP_B2_GRAPH_WALK_H

#include <stdint.h>

#include <rte_cycles.h>

/* `walks` walks of g; TSC cycles they took */
static inline uint64_t
b2_graph_walk_timed(struct rte_graph *g, uint64_t walks)
{
	uint64_t t0 = rte_rdtsc_precise();

	for (uint64_t i = 0; i < walks; i++)
		rte_graph_walk(g);
	return rte_rdtsc_precise() - t0;
}

#endif
