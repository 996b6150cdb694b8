/* SPDX-License-Identifier: BSD-3-Clause
 * b2_graph.h — B2's in-process rte_graph anchor: source -> N workers -> sink,
 * the nodes of app/test/test_graph_perf.c (source: stream get/put of `burst`
 * objects without writing them; worker: rte_node_next_stream_move; sink: return).
 *
 * The walk is an inline of rte_graph_worker.h, so the stats feature is decided
 * where it is compiled: b2_graph.c keeps DPDK's build setting
 * (RTE_LIBRTE_GRAPH_STATS 1: two rte_rdtsc() and three adds per node call, as
 * dpdk-test measures); b2_graph_nostats.c compiles the same walk without it. */
#ifndef LCP_B2_GRAPH_H
#define LCP_B2_GRAPH_H

#include <stdint.h>

struct rte_graph;

/* register the three node types once; then one graph per chain length */
int b2_graph_register(void);
/* create graph "b2_n<N>": source -> N workers -> sink; NULL on failure */
struct rte_graph *b2_graph_create(unsigned n);
/* objects the source of graph g emits per walk (1..256) */
void b2_graph_set_burst(struct rte_graph *g, unsigned n, unsigned burst);
/* node calls per walk (N + 2) and objects that reached the sink (stats on only) */
uint64_t b2_graph_sink_objs(struct rte_graph *g, unsigned n);

/* `walks` walks; TSC cycles they took */
uint64_t b2_graph_walk_stats(struct rte_graph *g, uint64_t walks);
uint64_t b2_graph_walk_nostats(struct rte_graph *g, uint64_t walks);

#endif
