/* SPDX-License-Identifier: BSD-3-Clause
 * port_ethdev_ring.c — the in-process ring pair: two rte_rings
 * and one ethdev per side (rte_eth_from_rings), see "Ring pair" in
 * port_ethdev.c. */
#include <errno.h>
#include <stdio.h>

#include <rte_bus_vdev.h>
#include <rte_errno.h>
#include <rte_eth_ring.h>
#include <rte_ethdev.h>
#include <rte_mbuf.h>
#include <rte_ring.h>

#include "port_ethdev.h"

bool
port_ethdev_rp_name_ok(const char *s)
{
	for (; *s != '\0'; s++) {
		if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') ||
		      (*s >= '0' && *s <= '9') || *s == '_'))
			return false;
	}
	return true;
}

static struct rte_ring *
port_ethdev_ring_get(struct lcp_stage *st, const char *name, unsigned size, int socket)
{
	struct rte_ring *r = rte_ring_lookup(name);

	if (r != NULL) {
		if (rte_ring_get_size(r) != size)
			lcp_log(st, LCP_LOG_WARNING,
				"ring %s exists with %u slots, not ring_size %u: using it as it is",
				name, rte_ring_get_size(r), size);
		return r;
	}
	r = rte_ring_create(name, size, socket, RING_F_SP_ENQ | RING_F_SC_DEQ);
	if (r == NULL)
		lcp_log(st, LCP_LOG_ERR, "cannot create ring %s (%u slots, socket %d): %s",
			name, size, socket, rte_strerror(rte_errno));
	return r;
}

/* Drain and free one ring of the pair; returns the mbufs freed. */
static unsigned
port_ethdev_ring_free(const char *name)
{
	struct rte_ring *r = rte_ring_lookup(name);
	struct rte_mbuf *pkts[64];
	unsigned n, total = 0;

	if (r == NULL)
		return 0;
	while ((n = rte_ring_dequeue_burst(r, (void **)pkts, RTE_DIM(pkts), NULL)) > 0) {
		rte_pktmbuf_free_bulk(pkts, n);
		total += n;
	}
	rte_ring_free(r);
	return total;
}

/* Remove our side of the ring pair; free the rings if the other side is gone. */
unsigned
port_ethdev_rp_release(struct lcp_stage *st, struct port_ethdev_ctx *x, bool have_vdev)
{
	uint16_t pid;
	unsigned freed;
	int rc;

	if (have_vdev) {
		rc = rte_vdev_uninit(x->vdev);
		if (rc != 0)
			lcp_log(st, LCP_LOG_WARNING, "removing %s: %s", x->vdev, rte_strerror(-rc));
	}
	if (rte_eth_dev_get_port_by_name(x->peer_vdev, &pid) == 0)
		return 0; /* the other side still uses the rings: it frees them */
	freed = port_ethdev_ring_free(x->ring_a) + port_ethdev_ring_free(x->ring_b);
	if (freed != 0)
		lcp_log(st, LCP_LOG_INFO, "freed %u frames left in the ring pair", freed);
	return freed;
}

/* Create (or join) the ring pair; sets x->port. */
int
port_ethdev_rp_create(struct lcp_stage *st, struct port_ethdev_ctx *x,
		      const struct port_ethdev_conf *c)
{
	struct rte_ring *a, *b, *rx, *tx;
	char ethname[RTE_RING_NAMESIZE];
	int socket = lcp_stage_socket(st);
	uint16_t pid;
	int port;

	snprintf(x->ring_a, sizeof(x->ring_a), "%s_a", c->ring_pair);
	snprintf(x->ring_b, sizeof(x->ring_b), "%s_b", c->ring_pair);
	snprintf(ethname, sizeof(ethname), "%s%u", c->ring_pair, c->ring_side);
	snprintf(x->vdev, sizeof(x->vdev), PE_VDEV_PREFIX "%s%u", c->ring_pair, c->ring_side);
	snprintf(x->peer_vdev, sizeof(x->peer_vdev), PE_VDEV_PREFIX "%s%u", c->ring_pair,
		 1 - c->ring_side);

	if (rte_eth_dev_get_port_by_name(x->vdev, &pid) == 0) {
		lcp_log(st, LCP_LOG_ERR,
			"ring pair \"%s\" side %u exists already (port %u): two stages with the same ring_pair and ring_side?",
			c->ring_pair, c->ring_side, pid);
		return -EEXIST;
	}
	a = port_ethdev_ring_get(st, x->ring_a, c->ring_size, socket);
	b = a != NULL ? port_ethdev_ring_get(st, x->ring_b, c->ring_size, socket) : NULL;
	if (a == NULL || b == NULL) {
		port_ethdev_rp_release(st, x, false);
		return -ENOMEM;
	}
	rx = c->ring_side == 0 ? a : b;
	tx = c->ring_side == 0 ? b : a;
	port = rte_eth_from_rings(ethname, &rx, 1, &tx, 1,
				  socket == SOCKET_ID_ANY ? 0 : (unsigned)socket);
	if (port < 0) {
		lcp_log(st, LCP_LOG_ERR, "rte_eth_from_rings(\"%s\") failed: %s",
			ethname, rte_strerror(rte_errno));
		port_ethdev_rp_release(st, x, false);
		return -rte_errno ? -rte_errno : -ENODEV;
	}
	x->port = (uint16_t)port;
	x->ring_pair = true;
	return 0;
}
