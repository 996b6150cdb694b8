/* SPDX-License-Identifier: BSD-3-Clause
 * port_ethdev — rx and tx on one DPDK ethdev (net_ring, net_null, net_pcap,
 * net_tap, net_af_packet, a NIC...).
 *
 * Entry points, in call order:
 *   port_ethdev_validate  cross-option checks (lcpipe check, no EAL)
 *   port_ethdev_init      resolve the port (port / device / ring_pair), claim it,
 *                         check queue/descriptor/MTU limits, configure, set up queues
 *   port_ethdev_start     start the device, promiscuous mode
 *   port_ethdev_poll      rx_burst every rx queue, stamp the rx TSC, emit on "rx"
 *   port_ethdev_process   a burst on "tx": tx_burst on queue 0, bounded retries,
 *                         free and count the rest as drop_tx_full; with
 *                         tx_socket (af_packet only), sendmmsg() on a packet
 *                         socket of our own instead (port_ethdev_tx_socket_open)
 *   port_ethdev_stop      drain the rx queues (drop_rx_shutdown), read device drops
 *   port_ethdev_fini      stop and close the device, free the ring pair
 *
 * Files: this one the stage's ops; port_ethdev_dev.c the ethdev (resolve,
 * claim, configure with its queues and receive pool, teardown);
 * port_ethdev_ring.c the ring pair; port_ethdev_sock.c tx_socket.
 *
 * Receive pool: frames are received into a pool of the port's own (rx_mbufs),
 * not the engine's, which applications send from: a connection whose SENDs
 * took every mbuf there still receives the ACKs that free them. A ring pair
 * receives the mbufs the other side sent and has no pool.
 *
 * Transmit queue: everything goes out on tx queue 0, so the order of frames on the
 * wire is the order process() saw them (spreading bursts over queues would let a
 * NIC reorder a TCP stream). tx_queues > 1 are still configured and set up, for
 * drivers or peers that want matching queue counts.
 *
 * Claim: a port serves exactly one stage. init reserves a memzone named
 * "lcp_ethdev_<port>" holding the stage name (no globals in a plugin; the memzone
 * is the process-wide registry), so a second stage on the same port fails with the
 * name of the first.
 *
 * Ring pair (option ring_pair = NAME): two rte_rings NAME_a / NAME_b, created by
 * whichever side initialises first and looked up by the other, and one ethdev per
 * side made with rte_eth_from_rings(): side 0 "NAME0" receives from _a and sends
 * into _b, side 1 "NAME1" receives from _b and sends into _a. The ethdev names are
 * "net_ring_NAME0" / "net_ring_NAME1" (net_ring prefixes them). At fini each side
 * removes its own vdev; the side that finds the other one already gone drains
 * both rings (freeing and counting any mbufs still in flight as drop_rx_shutdown) and
 * frees them. net_ring attaches the rings without owning them (DEV_ATTACH), so
 * closing a port never frees a ring behind the other port's back.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <rte_cycles.h>
#include <rte_errno.h>
#include <rte_ethdev.h>
#include <rte_mbuf.h>

#include <lcp/lcp.h>

#include "port_ethdev.h"

static const struct lcp_port_def port_ethdev_ports[] = {
	{ .name = "rx", .dir = LCP_PORT_OUT, .unit = LCP_UNIT_PKT,
	  .doc = "frames received on every rx queue, rx TSC stamped; may be left unlinked (frames are then dropped and counted)" },
	{ .name = "tx", .dir = LCP_PORT_IN, .unit = LCP_UNIT_PKT,
	  .doc = "frames to transmit on tx queue 0" },
	LCP_PORT_END,
};

static const char *const port_ethdev_counters[] = { PORT_ETHDEV_COUNTERS(LCP_COUNTER_NAME) NULL };

static const struct lcp_opt port_ethdev_opts[] = {
	LCP_OPT_UINT(struct port_ethdev_conf, port, "port", "0", 0, RTE_MAX_ETHPORTS - 1, 0,
		     "ethdev port id; ignored when device or ring_pair is given"),
	LCP_OPT_STRING(struct port_ethdev_conf, device, "device", "\"\"", 0, RTE_ETH_NAME_MAX_LEN - 1, 0,
		       "ethdev name, e.g. net_tap0 or 0000:01:00.0 (rte_eth_dev_get_port_by_name); overrides port when not empty"),
	LCP_OPT_UINT(struct port_ethdev_conf, rx_queues, "rx_queues", "1", 1, PE_MAX_QUEUES, 0,
		     "rx queues, all polled by this stage (RSS spreads flows when the device supports it)"),
	LCP_OPT_UINT(struct port_ethdev_conf, tx_queues, "tx_queues", "1", 1, PE_MAX_QUEUES, 0,
		     "tx queues configured; frames are sent on queue 0 to keep their order"),
	LCP_OPT_UINT(struct port_ethdev_conf, rx_desc, "rx_desc", "0", 0, PE_MAX_DESC, 0,
		     "rx descriptors per queue, checked against the device limits; 0 = the device's preferred size (else 1024)"),
	LCP_OPT_UINT(struct port_ethdev_conf, tx_desc, "tx_desc", "0", 0, PE_MAX_DESC, 0,
		     "tx descriptors per queue, checked against the device limits; 0 = the device's preferred size (else 1024)"),
	LCP_OPT_UINT(struct port_ethdev_conf, burst, "burst", "32", 1, PE_MAX_BURST, 0,
		     "frames asked of rte_eth_rx_burst per queue and poll"),
	LCP_OPT_UINT(struct port_ethdev_conf, tx_retries, "tx_retries", "8", 0, 1000, 0,
		     "extra rte_eth_tx_burst calls for what the device did not take, before the rest is dropped (drop_tx_full)"),
	LCP_OPT_BOOL(struct port_ethdev_conf, csum_offload, "csum_offload", "true",
		     "enable the IPv4/TCP/UDP checksum offloads the device offers (rx and tx)"),
	LCP_OPT_BOOL(struct port_ethdev_conf, promiscuous, "promiscuous", "false",
		     "enable promiscuous mode (a warning if the device cannot)"),
	LCP_OPT_UINT(struct port_ethdev_conf, mtu, "mtu", "0", 0, 65535, 0,
		     "MTU to set at configure time, checked against the device limits; 0 = leave the default"),
	LCP_OPT_STRING(struct port_ethdev_conf, ring_pair, "ring_pair", "\"\"", 0, PE_RP_NAME_MAX, 0,
		       "NAME: make this port one end of an in-process ring pair ([A-Za-z0-9_], up to 18 chars); empty = off"),
	LCP_OPT_UINT(struct port_ethdev_conf, ring_side, "ring_side", "0", 0, 1, 0,
		     "which end of the ring pair this stage is: 0 or 1 (the other stage takes the other)"),
	LCP_OPT_UINT(struct port_ethdev_conf, ring_size, "ring_size", "1024", 64, 65536, LCP_OPT_F_POW2,
		     "slots in each ring of the pair (one slot stays empty); set by the side created first"),
	LCP_OPT_BOOL(struct port_ethdev_conf, tx_socket, "tx_socket", "false",
		     "transmit with sendmmsg() on an AF_PACKET socket bound to the device's kernel interface instead of the driver's tx queue (net_af_packet only)"),
	LCP_OPT_UINT(struct port_ethdev_conf, rx_mbufs, "rx_mbufs", "0", 0, 16777216, 0,
		     "mbufs of the port's own receive pool, apart from the engine's pool that applications send from, so received ACKs always find one; 0: 2 x rx_queues x rx descriptors + 1024 (ring pairs receive what the other side sent: no pool)"),
	LCP_OPT_BOOL(struct port_ethdev_conf, trust_checksums, "trust_checksums", "false",
		     "mark every received frame's IPv4 and TCP/ICMP checksums good instead of having the tcp stage verify them: only on a link that cannot corrupt a frame of its own (net_memif, a ring_pair, net_ring); never on a NIC, af_packet or tap, where the checksum is the only check"),
	LCP_OPT_END,
};

static int
port_ethdev_validate(const void *conf, char *msg, size_t msglen)
{
	const struct port_ethdev_conf *c = conf;
	bool rp = c->ring_pair != NULL && c->ring_pair[0] != '\0';
	bool dev = c->device != NULL && c->device[0] != '\0';

	if (dev && c->port != 0) {
		snprintf(msg, msglen, "give either port (%u) or device (\"%s\"), not both",
			 c->port, c->device);
		return -EINVAL;
	}
	if (!rp && c->ring_side != 0) {
		snprintf(msg, msglen, "ring_side %u needs ring_pair (the name of the pair)",
			 c->ring_side);
		return -EINVAL;
	}
	if (rp && c->tx_socket) {
		snprintf(msg, msglen, "tx_socket sends on an af_packet port's kernel interface; "
			 "ring pair \"%s\" has none", c->ring_pair);
		return -EINVAL;
	}
	if (!rp)
		return 0;
	if (!port_ethdev_rp_name_ok(c->ring_pair)) {
		snprintf(msg, msglen, "ring_pair \"%s\": use only letters, digits and '_'",
			 c->ring_pair);
		return -EINVAL;
	}
	if (dev || c->port != 0) {
		snprintf(msg, msglen, "ring_pair creates its own device: do not also give %s",
			 dev ? "device" : "port");
		return -EINVAL;
	}
	if (c->rx_queues != 1 || c->tx_queues != 1) {
		snprintf(msg, msglen, "ring_pair has one ring each way: rx_queues and tx_queues must be 1 (got %u and %u)",
			 c->rx_queues, c->tx_queues);
		return -EINVAL;
	}
	return 0;
}

static int
port_ethdev_init(struct lcp_stage *st, const void *conf, void **ctx)
{
	const struct port_ethdev_conf *c = conf;
	struct port_ethdev_ctx *x = *ctx;
	char msg[160];
	int rc;

	rc = port_ethdev_validate(conf, msg, sizeof(msg));
	if (rc != 0) {
		lcp_log(st, LCP_LOG_ERR, "%s", msg);
		return rc;
	}
	x->nb_rxq = c->rx_queues;
	x->nb_txq = c->tx_queues;
	x->burst = (uint16_t)c->burst;
	x->tx_retries = c->tx_retries;
	x->trust_csum = c->trust_checksums;
	x->promiscuous = c->promiscuous;
	x->drain_budget = UINT64_MAX;
	x->tx_fd = -1;

	if (c->ring_pair != NULL && c->ring_pair[0] != '\0')
		rc = port_ethdev_rp_create(st, x, c);
	else
		rc = port_ethdev_resolve(st, x, c);
	if (rc != 0)
		return rc;
	if (rte_eth_dev_get_name_by_port(x->port, x->name) != 0)
		snprintf(x->name, sizeof(x->name), "port%u", x->port);
	rc = port_ethdev_claim(st, x);
	if (rc != 0)
		goto fail_port;
	rc = port_ethdev_configure(st, x, c);
	if (rc != 0)
		goto fail_port;
	if (c->tx_socket) {
		rc = port_ethdev_tx_socket_open(st, x);
		if (rc != 0)
			goto fail_port;
	}
	if (x->trust_csum)
		lcp_log(st, LCP_LOG_INFO, "%s: trust_checksums: received frames' checksums are not verified "
			"(right only where the link cannot corrupt a frame: memif, ring pairs)", x->name);
	return 0;

fail_port:
	port_ethdev_teardown(st, x);
	return rc;
}

static int
port_ethdev_start(struct lcp_stage *st, void *ctx)
{
	struct port_ethdev_ctx *x = ctx;
	struct rte_ether_addr mac;
	char macs[RTE_ETHER_ADDR_FMT_SIZE] = "?";
	int rc;

	rte_eth_stats_reset(x->port); /* drop_hw_* are read as totals at stop */
	rc = rte_eth_dev_start(x->port);
	if (rc != 0) {
		lcp_log(st, LCP_LOG_ERR, "rte_eth_dev_start(%s): %s", x->name, rte_strerror(-rc));
		return rc;
	}
	x->started = true;
	if (x->keeps_fill)
		x->fill_hold = rte_mempool_in_use_count(x->rx_pool); /* nothing received yet */
	if (x->promiscuous) {
		rc = rte_eth_promiscuous_enable(x->port);
		if (rc != 0)
			lcp_log(st, LCP_LOG_WARNING, "cannot enable promiscuous mode on %s: %s",
				x->name, rte_strerror(-rc));
	}
	if (rte_eth_macaddr_get(x->port, &mac) == 0)
		rte_ether_format_addr(macs, sizeof(macs), &mac);
	lcp_log(st, LCP_LOG_INFO, "%s started, mac %s%s", x->name, macs,
		lcp_port_is_linked(st, PE_PORT_RX) ? "" :
		"; rx is not linked: received frames are dropped (rx.drop_unlinked)");
	return 0;
}

static unsigned
port_ethdev_poll(struct lcp_stage *st, void *ctx)
{
	struct port_ethdev_ctx *x = ctx;
	struct rte_mbuf *pkts[PE_MAX_BURST];
	unsigned total = 0;

	/* keeps receiving while the engine drains, so that frames already on the
	 * wire reach the stages downstream, but only so many: every frame sent by
	 * this process is an mbuf of the pool, plus what the queues hold; a device
	 * fed from outside (a NIC under load, net_null) never runs dry */
	if (unlikely(lcp_stage_stopping(st))) {
		if (x->drain_budget == UINT64_MAX)
			x->drain_budget = lcp_stage_pktmbuf_pool(st)->size + (uint64_t)x->drain_max;
		if (x->drain_budget == 0)
			return 0;
	}
	for (uint16_t q = 0; q < x->nb_rxq; q++) {
		uint16_t n = rte_eth_rx_burst(x->port, q, pkts, x->burst);
		uint64_t bytes = 0, tsc;

		if (n == 0)
			continue;
		tsc = rte_rdtsc();
		for (uint16_t i = 0; i < n; i++) {
			lcp_mbuf_set_rx_tsc(pkts[i], tsc);
			pkts[i]->port = x->port; /* net_ring does not set it */
			bytes += rte_pktmbuf_pkt_len(pkts[i]);
		}
		if (x->trust_csum)
			for (uint16_t i = 0; i < n; i++)
				pkts[i]->ol_flags = (pkts[i]->ol_flags &
						     ~(RTE_MBUF_F_RX_IP_CKSUM_MASK | RTE_MBUF_F_RX_L4_CKSUM_MASK)) |
						    RTE_MBUF_F_RX_IP_CKSUM_GOOD | RTE_MBUF_F_RX_L4_CKSUM_GOOD;
		lcp_count(st, PE_RX_BURSTS, 1);
		lcp_count(st, PE_RX_PACKETS, n);
		lcp_count(st, PE_RX_BYTES, bytes);
		lcp_emit(st, PE_PORT_RX, (void **)pkts, n);
		total += n;
		if (unlikely(x->drain_budget != UINT64_MAX))
			x->drain_budget -= RTE_MIN((uint64_t)n, x->drain_budget);
	}
	return total;
}

static void
port_ethdev_process(struct lcp_stage *st, void *ctx, unsigned port, void **objs,
		    unsigned n)
{
	struct port_ethdev_ctx *x = ctx;
	struct rte_mbuf **pkts = (struct rte_mbuf **)objs;
	uint64_t bytes = 0, lost = 0;
	unsigned sent = 0, tries = 0;

	RTE_SET_USED(port); /* one input port */
	/* count bytes first: the driver may free what it took */
	for (unsigned i = 0; i < n; i++)
		bytes += rte_pktmbuf_pkt_len(pkts[i]);
	if (x->tx_fd >= 0) {
		port_ethdev_tx_socket(st, x, pkts, n, bytes);
		return;
	}
	for (;;) {
		unsigned want = RTE_MIN(n - sent, (unsigned)UINT16_MAX);

		sent += rte_eth_tx_burst(x->port, 0, pkts + sent, (uint16_t)want);
		if (sent == n || tries == x->tx_retries)
			break;
		tries++;
		rte_pause();
	}
	if (tries != 0)
		lcp_count(st, PE_TX_RETRIES, tries);
	if (unlikely(sent < n)) {
		for (unsigned i = sent; i < n; i++)
			lost += rte_pktmbuf_pkt_len(pkts[i]);
		rte_pktmbuf_free_bulk(pkts + sent, n - sent);
		lcp_count(st, PE_DROP_TX_FULL, n - sent);
	}
	lcp_count(st, PE_TX_PACKETS, sent);
	lcp_count(st, PE_TX_BYTES, bytes - lost);
}

static void
port_ethdev_stop(struct lcp_stage *st, void *ctx)
{
	struct port_ethdev_ctx *x = ctx;
	struct rte_mbuf *pkts[PE_MAX_BURST];
	struct rte_eth_stats es;
	uint64_t drained = 0;

	/* the pipeline is quiet: what the device still holds has nowhere to go */
	for (uint16_t q = 0; q < x->nb_rxq; q++) {
		for (uint32_t got = 0; got < x->drain_max;) {
			uint16_t n = rte_eth_rx_burst(x->port, q, pkts, PE_MAX_BURST);

			if (n == 0)
				break;
			rte_pktmbuf_free_bulk(pkts, n);
			got += n;
			drained += n;
		}
	}
	for (uint16_t q = 0; q < x->nb_txq; q++)
		(void)rte_eth_tx_done_cleanup(x->port, q, 0); /* -ENOTSUP is fine */
	if (x->keeps_fill) /* net_af_xdp has no tx_done_cleanup: an empty burst takes in its completion
			    * ring (the copies of what it sent, rx_pool mbufs); twice, for what the first kicked */
		for (int k = 0; k < 2; k++)
			(void)rte_eth_tx_burst(x->port, 0, pkts, 0);
	if (drained != 0) {
		lcp_count(st, PE_DROP_RX_SHUTDOWN, drained);
		lcp_log(st, LCP_LOG_INFO, "freed %" PRIu64 " frames still queued on %s at stop",
			drained, x->name);
	}
	if (rte_eth_stats_get(x->port, &es) == 0) {
		lcp_count(st, PE_DROP_HW_IMISSED, es.imissed);
		lcp_count(st, PE_DROP_HW_IERRORS, es.ierrors);
		lcp_count(st, PE_DROP_HW_RX_NOMBUF, es.rx_nombuf);
	}
}

static void
port_ethdev_fini(struct lcp_stage *st, void *ctx)
{
	struct port_ethdev_ctx *x = ctx;
	unsigned freed = port_ethdev_teardown(st, x);

	if (freed != 0)
		lcp_count(st, PE_DROP_RX_SHUTDOWN, freed);
}

static const struct lcp_stage_ops port_ethdev_ops = {
	.ports = port_ethdev_ports,
	.counters = port_ethdev_counters,
	.validate = port_ethdev_validate,
	.init = port_ethdev_init,
	.start = port_ethdev_start,
	.poll = port_ethdev_poll,
	.process = port_ethdev_process,
	.stop = port_ethdev_stop,
	.fini = port_ethdev_fini,
	.ctx_size = sizeof(struct port_ethdev_ctx),
};

LCP_PLUGIN_EXPORT const struct lcp_plugin lcp_plugin_descriptor = {
	LCP_PLUGIN_HEADER(LCP_KIND_STAGE, "port_ethdev"),
	.version = "1.0.0",
	.summary = "receive and transmit on a DPDK ethdev, or one end of an in-process ring pair",
	.options = port_ethdev_opts,
	.conf_size = sizeof(struct port_ethdev_conf),
	.ops = &port_ethdev_ops,
};
