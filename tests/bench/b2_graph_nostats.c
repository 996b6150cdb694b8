/* SPDX-License-Identifier: BSD-3-Clause
 * b2_graph_nostats.c — the rte_graph walk of b2_graph.c compiled without the
 * stats feature (DPDK's build sets RTE_LIBRTE_GRAPH_STATS 1 in rte_config.h,
 * which every DPDK compile force-includes; undefining it here turns the inline
 * rte_graph_walk() into the one a stats-off DPDK build would run). */
#define ALLOW_EXPERIMENTAL_API 1
#include <rte_config.h>
#undef RTE_LIBRTE_GRAPH_STATS

#include <rte_cycles.h>
#include <rte_graph_worker.h>

#include "b2_graph.h"
#include "b2_graph_walk.h"

uint64_t
b2_graph_walk_nostats(struct rte_graph *g, uint64_t walks)
{
	return b2_graph_walk_timed(g, walks);
}
