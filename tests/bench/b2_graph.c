/* SPDX-License-Identifier: BSD-3-Clause
 * b2_graph.c — B2's in-process rte_graph anchor (see b2_graph.h). Nodes are
 * registered at run time (no constructors) and cloned per chain length, because
 * edges belong to nodes, not to graphs. */
#define ALLOW_EXPERIMENTAL_API 1
#include <stdio.h>
#include <string.h>

#include <rte_cycles.h>
#include <rte_graph.h>
#include <rte_graph_worker.h>
#include <rte_lcore.h>

#include "b2_graph.h"
#include "b2_graph_walk.h"

/* source: ctx holds the burst (uint16_t) */
static uint16_t
b2g_source(struct rte_graph *graph, struct rte_node *node, void **objs, uint16_t nb_objs)
{
	uint16_t burst;

	memcpy(&burst, node->ctx, sizeof(burst));
	rte_node_next_stream_get(graph, node, 0, burst);
	rte_node_next_stream_put(graph, node, 0, burst);
	return burst;
}

static uint16_t
b2g_worker(struct rte_graph *graph, struct rte_node *node, void **objs, uint16_t nb_objs)
{
	rte_node_next_stream_move(graph, node, 0);
	return nb_objs;
}

static uint16_t
b2g_sink(struct rte_graph *graph, struct rte_node *node, void **objs, uint16_t nb_objs)
{
	return nb_objs;
}

static struct rte_node_register b2g_source_reg = {
	.name = "b2_source",
	.flags = RTE_NODE_SOURCE_F,
	.process = b2g_source,
	.parent_id = RTE_NODE_ID_INVALID, /* not a clone (what RTE_NODE_REGISTER sets) */
};
static struct rte_node_register b2g_worker_reg = {
	.name = "b2_worker",
	.process = b2g_worker,
	.parent_id = RTE_NODE_ID_INVALID,
};
static struct rte_node_register b2g_sink_reg = {
	.name = "b2_sink",
	.process = b2g_sink,
	.parent_id = RTE_NODE_ID_INVALID,
};

static rte_node_t b2g_ids[3];

int
b2_graph_register(void)
{
	b2g_ids[0] = __rte_node_register(&b2g_source_reg);
	b2g_ids[1] = __rte_node_register(&b2g_worker_reg);
	b2g_ids[2] = __rte_node_register(&b2g_sink_reg);
	for (unsigned i = 0; i < 3; i++)
		if (b2g_ids[i] == RTE_NODE_ID_INVALID)
			return -1;
	return 0;
}

static void
node_name(char *buf, size_t len, unsigned n, unsigned i)
{
	/* i: 0 source, 1..n workers, n+1 sink */
	if (i == 0)
		snprintf(buf, len, "b2_source-n%u", n);
	else if (i <= n)
		snprintf(buf, len, "b2_worker-n%uw%u", n, i);
	else
		snprintf(buf, len, "b2_sink-n%u", n);
}

struct rte_graph *
b2_graph_create(unsigned n)
{
	char names[n + 2][RTE_NODE_NAMESIZE];
	const char *patterns[n + 2];
	struct rte_graph_param prm = {0};
	char gname[RTE_GRAPH_NAMESIZE], suffix[32];
	rte_node_t ids[n + 2];

	for (unsigned i = 0; i < n + 2; i++) {
		unsigned kind = i == 0 ? 0 : i <= n ? 1 : 2;

		if (i == 0 || i > n)
			snprintf(suffix, sizeof(suffix), "n%u", n);
		else
			snprintf(suffix, sizeof(suffix), "n%uw%u", n, i);
		ids[i] = rte_node_clone(b2g_ids[kind], suffix);
		if (ids[i] == RTE_NODE_ID_INVALID) {
			fprintf(stderr, "b2: rte_node_clone %u/%s failed\n", kind, suffix);
			return NULL;
		}
		node_name(names[i], sizeof(names[i]), n, i);
		patterns[i] = names[i];
	}
	for (unsigned i = 0; i < n + 1; i++) {
		const char *next = names[i + 1];

		if (rte_node_edge_update(ids[i], 0, &next, 1) != 1) {
			fprintf(stderr, "b2: edge %s -> %s failed\n", names[i], next);
			return NULL;
		}
	}
	snprintf(gname, sizeof(gname), "b2_n%u", n);
	prm.socket_id = (int)rte_socket_id();
	prm.nb_node_patterns = (uint16_t)(n + 2);
	prm.node_patterns = patterns;
	if (rte_graph_create(gname, &prm) == RTE_GRAPH_ID_INVALID) {
		fprintf(stderr, "b2: rte_graph_create %s failed\n", gname);
		return NULL;
	}
	return rte_graph_lookup(gname);
}

void
b2_graph_set_burst(struct rte_graph *g, unsigned n, unsigned burst)
{
	char name[RTE_NODE_NAMESIZE];
	struct rte_node *node;
	uint16_t b = (uint16_t)burst;

	node_name(name, sizeof(name), n, 0);
	node = rte_graph_node_get_by_name(g->name, name);
	memcpy(node->ctx, &b, sizeof(b));
}

uint64_t
b2_graph_sink_objs(struct rte_graph *g, unsigned n)
{
	char name[RTE_NODE_NAMESIZE];

	node_name(name, sizeof(name), n, n + 1);
	return rte_graph_node_get_by_name(g->name, name)->total_objs;
}

uint64_t
b2_graph_walk_stats(struct rte_graph *g, uint64_t walks)
{
	return b2_graph_walk_timed(g, walks);
}
