/* SPDX-License-Identifier: BSD-3-Clause
 * wss_counts.h — the WebSocket sessions' counts (libstk's struct stk_wss_stats)
 * published into a stage's own counters, for the stages that run sessions
 * (ws, feedsim): each stage maps the session counts it reports to its counters.
 */
#ifndef LCP_WSS_COUNTS_H
#define LCP_WSS_COUNTS_H

#include <stdint.h>

#include <lcp/lcp.h>
#include <stk/ws_session.h>

/* add what the counts in now moved since the last call (pub, updated) to the
 * stage's counters; map[s] is the counter of count s plus one, 0 for a count
 * the stage does not report. On the stage's lcore (lcp_count). */
static inline void
wss_counts_publish(struct lcp_stage *st, const struct stk_wss_stats *now, struct stk_wss_stats *pub,
		   const uint8_t map[STK_WSS_S__N])
{
	uint64_t d[STK_WSS_S__N];

	stk_wss_stats_moved(now, pub, d);
	for (unsigned i = 0; i < STK_WSS_S__N; i++)
		if (d[i] != 0 && map[i] != 0)
			lcp_count(st, map[i] - 1u, d[i]);
}

#endif
