/* SPDX-License-Identifier: BSD-3-Clause
 * test_plugin.h — what the test-only stage plugins (tests/run/plugins,
 * tests/kernel/plugins) share: a burst's counts, and msg objects taken from
 * a stage's own mempool (msg_src, tick_src: tp_msg_pool_create,
 * tp_msg_pool_fini). Header only, against the SDK headers only: each plugin
 * stays one self-contained .so. */
#ifndef LCP_TEST_PLUGIN_H
#define LCP_TEST_PLUGIN_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include <rte_common.h>
#include <rte_errno.h>
#include <rte_mempool.h>

#include <lcp/lcp.h>

/* what one burst counted: c[k] into counter k, for every k < n with c[k] != 0 */
static inline void
tp_count_burst(struct lcp_stage *st, const uint64_t *c, unsigned n)
{
	for (unsigned k = 0; k < n; k++)
		if (c[k] != 0)
			lcp_count(st, k, c[k]);
}

/* a msg object of the stage's own mempool (no cache: the in-use count is
 * exact), its payload after it; release() puts it back from any lcore */
struct tp_msg {
	struct lcp_msg pub;
	struct rte_mempool *pool;
	uint8_t data[];
};

static inline void
tp_msg_release(struct lcp_msg *pm)
{
	struct tp_msg *m = (struct tp_msg *)pm;

	rte_mempool_put(m->pool, m);
}

/* m (an object of pool) as the message of len bytes of its data, of owner */
static inline void
tp_msg_set(struct tp_msg *m, struct rte_mempool *pool, void *owner, uint64_t conn_id,
	   uint64_t rx_tsc, uint32_t len, uint16_t opcode)
{
	m->pool = pool;
	m->pub.conn_id = conn_id;
	m->pub.rx_tsc = rx_tsc;
	m->pub.data = m->data;
	m->pub.len = len;
	m->pub.opcode = opcode;
	m->pub.flags = 0;
	m->pub.release = tp_msg_release;
	m->pub.owner = owner;
	m->pub.backing[0] = m->pub.backing[1] = NULL;
}

/* the stage's msg pool: n objects of `max` payload bytes each, named prefix and
 * the stage's name (cut to the mempool name's size), on the stage's socket;
 * NULL after logging why */
static inline struct rte_mempool *
tp_msg_pool_create(struct lcp_stage *st, const char *prefix, unsigned n, size_t max)
{
	char name[RTE_MEMPOOL_NAMESIZE];
	struct rte_mempool *pool;

	snprintf(name, sizeof(name), "%s%s", prefix, lcp_stage_name(st));
	pool = rte_mempool_create(name, n, sizeof(struct tp_msg) + max, 0, 0, NULL, NULL, NULL,
				  NULL, lcp_stage_socket(st), 0);
	if (pool == NULL)
		lcp_log(st, LCP_LOG_ERR, "cannot create the msg pool %s (%u objects): %s", name, n,
			rte_strerror(rte_errno));
	return pool;
}

/* at fini: the pool freed when every object came back; otherwise it is left
 * allocated, so that the engine's mempool check reports the leak too, and
 * logged ("never released"). Returns how many objects were still out. */
static inline unsigned
tp_msg_pool_fini(struct lcp_stage *st, struct rte_mempool *pool)
{
	unsigned in_use = rte_mempool_in_use_count(pool);

	if (in_use != 0)
		lcp_log(st, LCP_LOG_ERR,
			"%u msg objects never released: leaving the pool for the engine's leak check",
			in_use);
	else
		rte_mempool_free(pool);
	return in_use;
}

#endif
