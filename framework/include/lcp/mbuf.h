/* SPDX-License-Identifier: BSD-3-Clause
 * lcp/mbuf.h — lcpipe's mbuf dynamic field: the rx timestamp (TSC) of a frame,
 * stamped by the source that produced it (port_ethdev rx, gen) and carried
 * through every stage so latency can be measured anywhere downstream. */
#ifndef LCP_MBUF_H
#define LCP_MBUF_H

#include <stdint.h>
#include <rte_mbuf.h>
#include <rte_mbuf_dyn.h>

#ifdef __cplusplus
extern "C" {
#endif

#define LCP_RX_TSC_DYNFIELD_NAME "lcpipe_dynfield_rx_tsc"

/* Every source stage must stamp each mbuf it produces: rte_pktmbuf_alloc() does
 * not clear dynfields, so an unstamped mbuf carries a stale TSC from its last use.
 * Registered by the engine before any stage init; >= 0 afterwards. */
extern int lcp_rx_tsc_offset;

static inline uint64_t
lcp_mbuf_rx_tsc(const struct rte_mbuf *m)
{
	return *RTE_MBUF_DYNFIELD(m, lcp_rx_tsc_offset, const uint64_t *);
}

static inline void
lcp_mbuf_set_rx_tsc(struct rte_mbuf *m, uint64_t tsc)
{
	*RTE_MBUF_DYNFIELD(m, lcp_rx_tsc_offset, uint64_t *) = tsc;
}

#ifdef __cplusplus
}
#endif
#endif
