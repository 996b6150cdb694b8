/* SPDX-License-Identifier: BSD-3-Clause
 * port_ethdev_dev.c — the ethdev: find the port, claim it for
 * one stage, check its limits, configure it with its queues and its receive
 * pool, and tear it down. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <rte_errno.h>
#include <rte_ethdev.h>
#include <rte_mbuf.h>
#include <rte_memzone.h>

#include "port_ethdev.h"

/* "0 net_null0, 1 net_ring_rp0" into buf, for error messages */
static void
port_ethdev_list_ports(char *buf, size_t len)
{
	char name[RTE_ETH_NAME_MAX_LEN];
	size_t off = 0;
	uint16_t pid;

	buf[0] = '\0';
	RTE_ETH_FOREACH_DEV(pid) {
		int k;

		if (rte_eth_dev_get_name_by_port(pid, name) != 0)
			snprintf(name, sizeof(name), "?");
		k = snprintf(buf + off, len - off, "%s%u %s", off ? ", " : "", pid, name);
		if (k < 0 || (size_t)k >= len - off)
			break;
		off += (size_t)k;
	}
	if (off == 0)
		snprintf(buf, len, "none (add --vdev to eal, e.g. \"--vdev=net_null0\")");
}

/* Find the port from the options (not ring pair). */
int
port_ethdev_resolve(struct lcp_stage *st, struct port_ethdev_ctx *x,
		    const struct port_ethdev_conf *c)
{
	char avail[256];

	if (c->device != NULL && c->device[0] != '\0') {
		if (rte_eth_dev_get_port_by_name(c->device, &x->port) != 0) {
			port_ethdev_list_ports(avail, sizeof(avail));
			lcp_log(st, LCP_LOG_ERR, "device \"%s\" not found; ethdev ports: %s",
				c->device, avail);
			return -ENODEV;
		}
		return 0;
	}
	if (!rte_eth_dev_is_valid_port(c->port)) {
		port_ethdev_list_ports(avail, sizeof(avail));
		lcp_log(st, LCP_LOG_ERR, "port %u does not exist; ethdev ports: %s",
			c->port, avail);
		return -ENODEV;
	}
	x->port = c->port;
	return 0;
}

/* Reserve the port for this stage (see "Claim" above). */
int
port_ethdev_claim(struct lcp_stage *st, struct port_ethdev_ctx *x)
{
	char mzname[RTE_MEMZONE_NAMESIZE];
	const struct rte_memzone *mz;

	snprintf(mzname, sizeof(mzname), PE_CLAIM_FMT, x->port);
	mz = rte_memzone_reserve(mzname, LCP_NAME_MAX, SOCKET_ID_ANY, 0);
	if (mz == NULL) {
		if (rte_errno == EEXIST && (mz = rte_memzone_lookup(mzname)) != NULL) {
			lcp_log(st, LCP_LOG_ERR,
				"port %u (%s) is already used by stage \"%.*s\": a port serves one stage",
				x->port, x->name, LCP_NAME_MAX - 1, (const char *)mz->addr);
			return -EBUSY;
		}
		lcp_log(st, LCP_LOG_ERR, "cannot reserve memzone %s: %s", mzname,
			rte_strerror(rte_errno));
		return -rte_errno ? -rte_errno : -ENOMEM;
	}
	snprintf(mz->addr, LCP_NAME_MAX, "%s", lcp_stage_name(st));
	x->claim = mz;
	return 0;
}

/* 0 = pick a default; otherwise check n against the device limits */
static int
port_ethdev_check_desc(struct lcp_stage *st, const char *what, uint32_t n,
		       const struct rte_eth_desc_lim *lim, uint16_t pref, uint16_t *out)
{
	if (n == 0) {
		*out = pref != 0 ? pref : PE_DEFAULT_DESC;
		return 0;
	}
	if (n < lim->nb_min || n > lim->nb_max ||
	    (lim->nb_align > 1 && n % lim->nb_align != 0)) {
		lcp_log(st, LCP_LOG_ERR,
			"%s %" PRIu32 " is outside what the device accepts: %u..%u, a multiple of %u",
			what, n, lim->nb_min, lim->nb_max, lim->nb_align ? lim->nb_align : 1);
		return -EINVAL;
	}
	*out = (uint16_t)n;
	return 0;
}

int
port_ethdev_configure(struct lcp_stage *st, struct port_ethdev_ctx *x,
		      const struct port_ethdev_conf *c)
{
	struct rte_mempool *pool = lcp_stage_pktmbuf_pool(st);
	struct rte_eth_conf ec;
	struct rte_eth_dev_info di;
	uint16_t nrxd, ntxd;
	uint32_t max_mtu;
	int socket, rc;

	if (pool == NULL) {
		lcp_log(st, LCP_LOG_ERR, "the engine has no packet mbuf pool for socket %d",
			lcp_stage_socket(st));
		return -ENOENT;
	}
	rc = rte_eth_dev_info_get(x->port, &di);
	if (rc != 0) {
		lcp_log(st, LCP_LOG_ERR, "rte_eth_dev_info_get(%u): %s", x->port, rte_strerror(-rc));
		return rc;
	}
	if (c->rx_queues > di.max_rx_queues || c->tx_queues > di.max_tx_queues) {
		lcp_log(st, LCP_LOG_ERR,
			"%s (driver %s) has at most %u rx and %u tx queues; asked for %u and %u",
			x->name, di.driver_name, di.max_rx_queues, di.max_tx_queues,
			c->rx_queues, c->tx_queues);
		return -EINVAL;
	}
	rc = port_ethdev_check_desc(st, "rx_desc", c->rx_desc, &di.rx_desc_lim,
				    di.default_rxportconf.ring_size, &nrxd);
	if (rc == 0)
		rc = port_ethdev_check_desc(st, "tx_desc", c->tx_desc, &di.tx_desc_lim,
					    di.default_txportconf.ring_size, &ntxd);
	if (rc != 0)
		return rc;
	/* ethdev also bounds the MTU by the largest frame (max_rx_pktlen, less
	 * the overhead it assumes: the gap to max_mtu when the driver gives one,
	 * otherwise an Ethernet header and CRC), which is where DPDK 22.11's
	 * virtual drivers say 1500: check both, so the message gives the range */
	max_mtu = di.max_mtu;
	if (di.max_rx_pktlen != 0) {
		uint32_t ovh = di.max_mtu != UINT16_MAX && di.max_rx_pktlen > di.max_mtu ?
				       di.max_rx_pktlen - di.max_mtu : RTE_ETHER_HDR_LEN + RTE_ETHER_CRC_LEN;

		if (di.max_rx_pktlen > ovh && di.max_rx_pktlen - ovh < max_mtu)
			max_mtu = di.max_rx_pktlen - ovh;
	}
	if (c->mtu != 0 && (c->mtu < di.min_mtu || c->mtu > max_mtu)) {
		lcp_log(st, LCP_LOG_ERR, "mtu %" PRIu32 " is outside what %s accepts: %u..%" PRIu32,
			c->mtu, x->name, di.min_mtu, max_mtu);
		return -EINVAL;
	}

	memset(&ec, 0, sizeof(ec));
	ec.rxmode.mtu = c->mtu; /* 0: ethdev keeps RTE_ETHER_MTU */
	if (c->csum_offload) {
		/* stages that build frames (tcp) see these through
		 * rte_eth_dev_conf_get() and leave the checksums to the device */
		ec.txmode.offloads = di.tx_offload_capa & (RTE_ETH_TX_OFFLOAD_IPV4_CKSUM |
							   RTE_ETH_TX_OFFLOAD_TCP_CKSUM |
							   RTE_ETH_TX_OFFLOAD_UDP_CKSUM);
		ec.rxmode.offloads = di.rx_offload_capa & (RTE_ETH_RX_OFFLOAD_IPV4_CKSUM |
							   RTE_ETH_RX_OFFLOAD_TCP_CKSUM |
							   RTE_ETH_RX_OFFLOAD_UDP_CKSUM);
	}
	if (c->rx_queues > 1 && di.flow_type_rss_offloads != 0) {
		ec.rxmode.mq_mode = RTE_ETH_MQ_RX_RSS;
		ec.rx_adv_conf.rss_conf.rss_hf =
			(RTE_ETH_RSS_IP | RTE_ETH_RSS_TCP | RTE_ETH_RSS_UDP) &
			di.flow_type_rss_offloads;
	} else if (c->rx_queues > 1) {
		lcp_log(st, LCP_LOG_WARNING,
			"%s has no RSS: %u rx queues are set up but the device decides what lands where",
			x->name, c->rx_queues);
	}
	rc = rte_eth_dev_configure(x->port, c->rx_queues, c->tx_queues, &ec);
	if (rc != 0) {
		lcp_log(st, LCP_LOG_ERR, "rte_eth_dev_configure(%s, %u rxq, %u txq): %s",
			x->name, c->rx_queues, c->tx_queues, rte_strerror(-rc));
		return rc;
	}
	x->configured = true;
	rc = rte_eth_dev_adjust_nb_rx_tx_desc(x->port, &nrxd, &ntxd);
	if (rc != 0) {
		lcp_log(st, LCP_LOG_ERR, "rte_eth_dev_adjust_nb_rx_tx_desc(%s): %s", x->name,
			rte_strerror(-rc));
		return rc;
	}
	/* what an rx queue can hold (descriptors, or the ring), twice, plus a burst */
	x->drain_max = 2u * (x->ring_pair ? c->ring_size : nrxd) + PE_MAX_BURST;

	socket = rte_eth_dev_socket_id(x->port);
	if (socket < 0)
		socket = lcp_stage_socket(st);
	else if (lcp_stage_socket(st) >= 0 && socket != lcp_stage_socket(st))
		lcp_log(st, LCP_LOG_WARNING,
			"%s is on socket %d but the stage runs on socket %d: expect slower rx/tx",
			x->name, socket, lcp_stage_socket(st));
	if (!x->ring_pair) {
		/* received frames come from a pool of their own: applications
		 * that send from the engine's pool cannot take the mbufs the
		 * ACKs freeing their send queues must arrive in */
		unsigned n = c->rx_mbufs != 0 ? c->rx_mbufs : 2u * c->rx_queues * nrxd + 1024;

		pool = lcp_stage_pktmbuf_pool_create(st, "rx", n);
		if (pool == NULL) {
			lcp_log(st, LCP_LOG_ERR, "rx_mbufs: cannot create a receive pool of %u mbufs: %s", n,
				rte_strerror(rte_errno));
			return -ENOMEM;
		}
	}
	x->rx_pool = x->ring_pair ? NULL : pool;
	/* DPDK 22.11's net_af_xdp fills its fill ring with rx_pool mbufs at queue
	 * setup, replaces each one it receives, and never gives them back (its
	 * close deletes the ring, not the mbufs): port_ethdev_teardown() tells the
	 * engine how many, as measured at start */
	x->keeps_fill = !x->ring_pair && strcmp(di.driver_name, "net_af_xdp") == 0;
	for (uint16_t q = 0; q < c->rx_queues; q++) {
		rc = rte_eth_rx_queue_setup(x->port, q, nrxd, (unsigned)socket, NULL, pool);
		if (rc != 0) {
			lcp_log(st, LCP_LOG_ERR, "rx queue %u setup on %s (%u descriptors): %s",
				q, x->name, nrxd, rte_strerror(-rc));
			return rc;
		}
	}
	for (uint16_t q = 0; q < c->tx_queues; q++) {
		rc = rte_eth_tx_queue_setup(x->port, q, ntxd, (unsigned)socket, NULL);
		if (rc != 0) {
			lcp_log(st, LCP_LOG_ERR, "tx queue %u setup on %s (%u descriptors): %s",
				q, x->name, ntxd, rte_strerror(-rc));
			return rc;
		}
	}
	if (x->ring_pair)
		lcp_log(st, LCP_LOG_INFO,
			"port %u %s: ring pair \"%s\" side %u, rx from %s, tx into %s (%u slots each), burst %u",
			x->port, x->name, c->ring_pair, c->ring_side,
			c->ring_side == 0 ? x->ring_a : x->ring_b,
			c->ring_side == 0 ? x->ring_b : x->ring_a, c->ring_size, c->burst);
	else
		lcp_log(st, LCP_LOG_INFO,
			"port %u %s (driver %s): %u rx queue(s) x %u desc, %u tx queue(s) x %u desc, mtu %u, burst %u, "
			"receive pool %s of %u mbufs",
			x->port, x->name, di.driver_name, c->rx_queues, nrxd, c->tx_queues, ntxd,
			c->mtu ? c->mtu : RTE_ETHER_MTU, c->burst, pool->name, pool->size);
	return 0;
}

/* Stop and close the device or remove our ring-pair vdev; returns the mbufs
 * freed from the ring pair. Used by fini and by a failing init. */
unsigned
port_ethdev_teardown(struct lcp_stage *st, struct port_ethdev_ctx *x)
{
	unsigned freed = 0;
	int rc;

	if (x->started) {
		rc = rte_eth_dev_stop(x->port);
		if (rc != 0)
			lcp_log(st, LCP_LOG_WARNING, "rte_eth_dev_stop(%s): %s", x->name,
				rte_strerror(-rc));
		x->started = false;
	}
	if (x->ring_pair) {
		freed = port_ethdev_rp_release(st, x, true);
	} else if (x->configured) {
		/* releases the queues and the mbufs a driver keeps in its rx ring */
		rc = rte_eth_dev_close(x->port);
		if (rc != 0)
			lcp_log(st, LCP_LOG_WARNING, "rte_eth_dev_close(%s): %s", x->name,
				rte_strerror(-rc));
	}
	if (x->keeps_fill && x->fill_hold > 0 && lcp_stage_pktmbuf_pool_held(st, x->rx_pool, x->fill_hold) == 0)
		lcp_log(st, LCP_LOG_INFO,
			"%s: the driver keeps the %u mbufs of its fill ring after close (net_af_xdp, DPDK 22.11): "
			"%s reports them as held by the driver; more in use than that is a leak",
			x->name, x->fill_hold, x->rx_pool->name);
	x->keeps_fill = false;
	x->configured = false;
	x->ring_pair = false;
	if (x->tx_fd >= 0) {
		close(x->tx_fd);
		x->tx_fd = -1;
	}
	if (x->claim != NULL) {
		rte_memzone_free(x->claim);
		x->claim = NULL;
	}
	return freed;
}
