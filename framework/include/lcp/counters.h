/* SPDX-License-Identifier: BSD-3-Clause
 * lcp/counters.h — the counters strategy (plugins of kind LCP_KIND_COUNTERS).
 *
 * The engine creates one counter set per stage (built-in per-port in/out/drop
 * counters, then the stage's own) and writes it only from the stage's lcore slot,
 * except at shutdown where the control thread uses its own slot. read() may run on
 * any thread at any time and must not tear a 64-bit value; it returns what has
 * been published (a module that batches may lag by up to its flush interval;
 * after the final flush() calls every total is exact).
 */
#ifndef LCP_COUNTERS_H
#define LCP_COUNTERS_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* the fast path: add v to counter idx from writer slot `slot` */
typedef void (*lcp_counters_add_t)(void *set, unsigned slot, unsigned idx, uint64_t v);
/* optional (ABI 1.1): slot's private row of plain uint64_t counters, indexed like
 * names[]. When a strategy provides it, the SDK's inlines add to the row directly
 * (relaxed load + store, no call) instead of calling add(); only a strategy whose
 * add() is exactly that may provide it. */
typedef uint64_t *(*lcp_counters_row_t)(void *set, unsigned slot);

struct lcp_counters_ops {
	/* names[0..n-1]; n_slots writers (slot numbers 0..n_slots-1); allocate on
	 * `socket` (SOCKET_ID_ANY allowed). Return NULL and set errno on failure. */
	void *(*create)(const void *conf, const char *const *names, unsigned n,
			unsigned n_slots, int socket);
	void (*destroy)(void *set);
	lcp_counters_add_t add;
	/* publish whatever slot has accumulated privately; may be NULL */
	void (*flush)(void *set, unsigned slot);
	/* the current total of counter idx over all slots */
	uint64_t (*read)(void *set, unsigned idx);
	lcp_counters_row_t row; /* optional, ABI 1.1 */
	/* optional, ABI 1.3: called on slot's lcore on the worker turns that read
	 * the TSC (every idle turn, every 64th busy turn) with that TSC; a module
	 * that publishes on a timer does it here. flush() is still called to
	 * publish everything: on the worker after its stages' stop(), and for
	 * every slot on the control thread once the workers have returned. */
	void (*tick)(void *set, unsigned slot, uint64_t now_tsc);
	void *reserved[2];
};

#ifdef __cplusplus
}
#endif
#endif
