/* SPDX-License-Identifier: BSD-3-Clause
 * pkt_split — test-only stage: turns every `pkt` into a chain of mbufs of at
 * most "seg" bytes each (copies from the engine's pktmbuf pool, the original
 * is freed), so that a transmitting port sees multi-segment frames. Nothing in
 * the shipped pipeline builds chains; tests/kernel/port_kernel.sh uses this to
 * check port_ethdev's tx_socket on them (and its drop_tx_segs beyond 8).
 *
 * Counters: frames (chained and emitted), segs (mbufs in those chains),
 * alloc_fail (a frame dropped because the pool was empty). Built only for
 * `make check` (tests/kernel.mk), against the SDK headers only.
 */
#include <string.h>

#include <rte_mbuf.h>

#include <lcp/lcp.h>

#include "test_plugin.h"

static const struct lcp_port_def pkt_split_ports[] = {
	{ .name = "in", .dir = LCP_PORT_IN, .unit = LCP_UNIT_PKT, .flags = LCP_PORT_F_REQUIRED,
	  .doc = "frames" },
	{ .name = "out", .dir = LCP_PORT_OUT, .unit = LCP_UNIT_PKT, .flags = LCP_PORT_F_REQUIRED,
	  .doc = "the same frames as chains of at most seg bytes per mbuf" },
	LCP_PORT_END,
};

enum { PS_FRAMES, PS_SEGS, PS_ALLOC_FAIL };
static const char *const pkt_split_counters[] = { "frames", "segs", "alloc_fail", NULL };

struct pkt_split_conf {
	uint32_t seg;
};

static const struct lcp_opt pkt_split_opts[] = {
	LCP_OPT_UINT(struct pkt_split_conf, seg, "seg", "40", 1, 2048, 0,
		     "bytes per segment, at most"),
	LCP_OPT_END,
};

static int
pkt_split_init(struct lcp_stage *st, const void *conf, void **ctx)
{
	uint32_t *seg = *ctx;

	RTE_SET_USED(st);
	*seg = ((const struct pkt_split_conf *)conf)->seg;
	return 0;
}

/* a chain holding m's bytes, or NULL (pool empty) */
static struct rte_mbuf *
pkt_split_one(struct rte_mempool *mp, const struct rte_mbuf *m, uint32_t seg)
{
	uint32_t len = rte_pktmbuf_pkt_len(m), off = 0;
	struct rte_mbuf *head = NULL;

	while (off < len) {
		uint32_t k = RTE_MIN(seg, len - off);
		struct rte_mbuf *s = rte_pktmbuf_alloc(mp);
		void *dst;
		const void *src;

		if (s == NULL) {
			rte_pktmbuf_free(head);
			return NULL;
		}
		/* rte_pktmbuf_read copies into dst only when the bytes span segments */
		dst = rte_pktmbuf_append(s, (uint16_t)k);
		src = rte_pktmbuf_read(m, off, k, dst);
		if (src != dst)
			memcpy(dst, src, k);
		if (head == NULL)
			head = s;
		else
			rte_pktmbuf_chain(head, s); /* at most 2048 segments: cannot fail */
		off += k;
	}
	return head;
}

static void
pkt_split_process(struct lcp_stage *st, void *ctx, unsigned port, void **objs, unsigned n)
{
	struct rte_mempool *mp = lcp_stage_pktmbuf_pool(st);
	uint32_t seg = *(uint32_t *)ctx;
	void *out[n];
	unsigned k = 0;
	uint64_t segs = 0;

	RTE_SET_USED(port);
	for (unsigned i = 0; i < n; i++) {
		struct rte_mbuf *c = pkt_split_one(mp, objs[i], seg);

		rte_pktmbuf_free(objs[i]);
		if (c == NULL) {
			lcp_count(st, PS_ALLOC_FAIL, 1);
			continue;
		}
		segs += c->nb_segs;
		out[k++] = c;
	}
	lcp_count(st, PS_FRAMES, k);
	lcp_count(st, PS_SEGS, segs);
	lcp_emit(st, 1, out, k);
}

static const struct lcp_stage_ops pkt_split_ops = {
	.ports = pkt_split_ports,
	.counters = pkt_split_counters,
	.init = pkt_split_init,
	.process = pkt_split_process,
	.ctx_size = sizeof(uint32_t),
};

LCP_PLUGIN_EXPORT const struct lcp_plugin lcp_plugin_descriptor = {
	LCP_PLUGIN_HEADER(LCP_KIND_STAGE, "pkt_split"),
	.version = "1.0.0",
	.summary = "test stage: copy each frame into a chain of small mbufs",
	.options = pkt_split_opts,
	.conf_size = sizeof(struct pkt_split_conf),
	.ops = &pkt_split_ops,
};
