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
#include <inttypes.h>
#include <linux/if_packet.h>
#include <net/ethernet.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <rte_bus_vdev.h>
#include <rte_cycles.h>
#include <rte_errno.h>
#include <rte_eth_ring.h>
#include <rte_ethdev.h>
#include <rte_malloc.h>
#include <rte_mbuf.h>
#include <rte_memzone.h>
#include <rte_pause.h>
#include <rte_ring.h>

#include <lcp/lcp.h>

#define PE_MAX_QUEUES 16
#define PE_MAX_BURST 512
#define PE_MAX_DESC 32768
#define PE_DEFAULT_DESC 1024
#define PE_RP_NAME_MAX 18 /* "net_ring_" + NAME + side digit must fit RTE_RING_NAMESIZE */
#define PE_VDEV_PREFIX "net_ring_"
#define PE_CLAIM_FMT "lcp_ethdev_%u"

enum { PE_PORT_RX, PE_PORT_TX };

static const struct lcp_port_def port_ethdev_ports[] = {
	{ .name = "rx", .dir = LCP_PORT_OUT, .unit = LCP_UNIT_PKT,
	  .doc = "frames received on every rx queue, rx TSC stamped; may be left unlinked (frames are then dropped and counted)" },
	{ .name = "tx", .dir = LCP_PORT_IN, .unit = LCP_UNIT_PKT,
	  .doc = "frames to transmit on tx queue 0" },
	LCP_PORT_END,
};

#define PORT_ETHDEV_COUNTERS(X)                                                \
	X(RX_BURSTS, "rx_bursts")                                              \
	X(RX_PACKETS, "rx_packets")                                            \
	X(RX_BYTES, "rx_bytes")                                                \
	X(TX_PACKETS, "tx_packets")                                            \
	X(TX_BYTES, "tx_bytes")                                                \
	X(TX_RETRIES, "tx_retries")                                            \
	X(DROP_TX_FULL, "drop_tx_full")                                        \
	X(DROP_TX_ERROR, "drop_tx_error")                                      \
	X(DROP_TX_SEGS, "drop_tx_segs")                                        \
	X(DROP_RX_SHUTDOWN, "drop_rx_shutdown")                                \
	X(DROP_HW_IMISSED, "drop_hw_imissed")                                  \
	X(DROP_HW_IERRORS, "drop_hw_ierrors")                                  \
	X(DROP_HW_RX_NOMBUF, "drop_hw_rx_nombuf")
enum {
#define X(e, s) PE_##e,
	PORT_ETHDEV_COUNTERS(X)
#undef X
};
static const char *const port_ethdev_counters[] = {
#define X(e, s) s,
	PORT_ETHDEV_COUNTERS(X)
#undef X
	NULL,
};

struct port_ethdev_conf {
	uint16_t port;
	const char *device;
	uint16_t rx_queues;
	uint16_t tx_queues;
	uint32_t rx_desc;
	uint32_t tx_desc;
	uint32_t burst;
	uint32_t tx_retries;
	bool promiscuous;
	bool csum_offload;
	uint32_t mtu;
	const char *ring_pair;
	uint32_t ring_side;
	uint32_t ring_size;
	bool tx_socket;
	uint32_t rx_mbufs;
};

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
	LCP_OPT_UINT(struct port_ethdev_conf, ring_size, "ring_size", "1024", 64, 65536, 0,
		     "slots in each ring of the pair, a power of two (one slot stays empty); set by the side created first"),
	LCP_OPT_BOOL(struct port_ethdev_conf, tx_socket, "tx_socket", "false",
		     "transmit with sendmmsg() on an AF_PACKET socket bound to the device's kernel interface instead of the driver's tx queue (net_af_packet only)"),
	LCP_OPT_UINT(struct port_ethdev_conf, rx_mbufs, "rx_mbufs", "0", 0, 16777216, 0,
		     "mbufs of the port's own receive pool, apart from the engine's pool that applications send from, so received ACKs always find one; 0: 2 x rx_queues x rx descriptors + 1024 (ring pairs receive what the other side sent: no pool)"),
	LCP_OPT_END,
};

struct port_ethdev_ctx {
	uint16_t port;
	uint16_t nb_rxq;
	uint16_t nb_txq;
	uint16_t burst;
	uint32_t tx_retries;
	uint64_t drain_budget; /* frames rx may still take once the engine stops
				* (set at the first poll that sees it); UINT64_MAX before */
	uint32_t drain_max; /* frames per rx queue drained at stop, at most: a source
			     * like net_null never runs dry */
	bool configured; /* needs rte_eth_dev_close (or vdev removal) at fini */
	bool started;
	bool promiscuous;
	bool ring_pair;
	int tx_fd; /* tx_socket: the AF_PACKET socket; -1 otherwise */
	const struct rte_memzone *claim;
	char name[RTE_ETH_NAME_MAX_LEN];  /* ethdev name, for logs */
	char vdev[RTE_RING_NAMESIZE];     /* ring pair: our vdev, "net_ring_NAME<side>" */
	char peer_vdev[RTE_RING_NAMESIZE]; /* ring pair: the other side's vdev */
	char ring_a[RTE_RING_NAMESIZE];
	char ring_b[RTE_RING_NAMESIZE];
};

static bool
port_ethdev_rp_name_ok(const char *s)
{
	for (; *s != '\0'; s++) {
		if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') ||
		      (*s >= '0' && *s <= '9') || *s == '_'))
			return false;
	}
	return true;
}

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
	if ((c->ring_size & (c->ring_size - 1)) != 0) {
		snprintf(msg, msglen, "ring_size %u is not a power of two", c->ring_size);
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
static unsigned
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
static int
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

/* Find the port from the options (not ring pair). */
static int
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
static int
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

static int
port_ethdev_configure(struct lcp_stage *st, struct port_ethdev_ctx *x,
		      const struct port_ethdev_conf *c)
{
	struct rte_mempool *pool = lcp_stage_pktmbuf_pool(st);
	struct rte_eth_conf ec;
	struct rte_eth_dev_info di;
	uint16_t nrxd, ntxd;
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
	if (c->mtu != 0 && (c->mtu < di.min_mtu || c->mtu > di.max_mtu)) {
		lcp_log(st, LCP_LOG_ERR, "mtu %" PRIu32 " is outside what %s accepts: %u..%u",
			c->mtu, x->name, di.min_mtu, di.max_mtu);
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

/* tx_socket: an AF_PACKET socket of protocol 0 (it receives nothing) bound to
 * the kernel interface behind the port, with the qdisc bypassed. Why: the
 * af_packet driver transmits through a PACKET_TX_RING, from which the kernel
 * builds each skb as the link header plus page fragments pointing into the
 * ring, marked zero-copy; on a veth (or a bridge, or loopback-like paths) the
 * kernel must then copy those fragments into fresh pages before the frame
 * can cross, and the receiver pulls its headers out of them again. A
 * sendmmsg() on a plain packet socket builds one linear skb per frame below a
 * page: one copy, no page allocation. Measured in doc/benchmarks.md (B8). */
static int
port_ethdev_tx_socket_open(struct lcp_stage *st, struct port_ethdev_ctx *x)
{
	struct rte_eth_dev_info info;
	struct sockaddr_ll sll = { .sll_family = AF_PACKET };
	int one = 1, rc;

	/* only af_packet: its kernel interface is the wire side. A tap's kernel
	 * interface is the other end of the wire (a frame sent there would come
	 * back to the driver's rx), and others have none. */
	rc = rte_eth_dev_info_get(x->port, &info);
	if (rc != 0 || info.if_index == 0 || info.driver_name == NULL ||
	    strcmp(info.driver_name, "net_af_packet") != 0) {
		lcp_log(st, LCP_LOG_ERR, "tx_socket: %s (driver %s) is not an af_packet port; "
			"tx_socket works only with net_af_packet", x->name,
			rc == 0 && info.driver_name != NULL ? info.driver_name : "?");
		return -ENOTSUP;
	}
	x->tx_fd = socket(AF_PACKET, SOCK_RAW | SOCK_CLOEXEC, 0);
	if (x->tx_fd < 0) {
		rc = -errno;
		lcp_log(st, LCP_LOG_ERR, "tx_socket: socket(AF_PACKET): %s", strerror(-rc));
		return rc;
	}
	/* straight to the driver, as net_af_packet's qdisc_bypass=1 does (the
	 * default): no qdisc layer, no queueing behind other traffic */
	sll.sll_ifindex = (int)info.if_index;
	if (setsockopt(x->tx_fd, SOL_PACKET, PACKET_QDISC_BYPASS, &one, sizeof(one)) != 0 ||
	    bind(x->tx_fd, (struct sockaddr *)&sll, sizeof(sll)) != 0) {
		rc = -errno;
		lcp_log(st, LCP_LOG_ERR, "tx_socket: PACKET_QDISC_BYPASS and bind to ifindex %u: %s",
			info.if_index, strerror(-rc));
		close(x->tx_fd);
		x->tx_fd = -1;
		return rc;
	}
	lcp_log(st, LCP_LOG_INFO, "%s: transmitting with sendmmsg() on an AF_PACKET socket "
		"(ifindex %u), not the driver's tx queue", x->name, info.if_index);
	return 0;
}

/* Stop and close the device or remove our ring-pair vdev; returns the mbufs
 * freed from the ring pair. Used by fini and by a failing init. */
static unsigned
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

static int
port_ethdev_init(struct lcp_stage *st, const void *conf, void **ctx)
{
	const struct port_ethdev_conf *c = conf;
	struct port_ethdev_ctx *x;
	char msg[160];
	int rc;

	rc = port_ethdev_validate(conf, msg, sizeof(msg));
	if (rc != 0) {
		lcp_log(st, LCP_LOG_ERR, "%s", msg);
		return rc;
	}
	x = rte_zmalloc_socket("port_ethdev", sizeof(*x), RTE_CACHE_LINE_SIZE,
			       lcp_stage_socket(st));
	if (x == NULL) {
		lcp_log(st, LCP_LOG_ERR, "cannot allocate the context on socket %d",
			lcp_stage_socket(st));
		return -ENOMEM;
	}
	x->nb_rxq = c->rx_queues;
	x->nb_txq = c->tx_queues;
	x->burst = (uint16_t)c->burst;
	x->tx_retries = c->tx_retries;
	x->promiscuous = c->promiscuous;
	x->drain_budget = UINT64_MAX;
	x->tx_fd = -1;

	if (c->ring_pair != NULL && c->ring_pair[0] != '\0')
		rc = port_ethdev_rp_create(st, x, c);
	else
		rc = port_ethdev_resolve(st, x, c);
	if (rc != 0)
		goto fail;
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
	*ctx = x;
	return 0;

fail_port:
	port_ethdev_teardown(st, x);
fail:
	rte_free(x);
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

#define PE_SOCK_MAX_SEGS 8 /* segments of one frame sent by tx_socket; more: drop_tx_segs */
#define PE_SOCK_CHUNK 64    /* frames per sendmmsg() */

struct pe_sock_tally {
	unsigned sent, full, segs, err, tries;
	uint64_t lost; /* bytes not sent */
};

/* tx_socket, up to PE_SOCK_CHUNK frames: one sendmmsg() call when the kernel
 * takes them all; what it does not take for lack of room (EAGAIN, ENOBUFS) is
 * retried like a full tx queue (tx_retries), then dropped as drop_tx_full; a
 * frame it refuses (any other errno) is dropped as drop_tx_error and the rest
 * go on. Every mbuf is freed here: the kernel copied what it sent. */
static void
port_ethdev_tx_socket_chunk(struct lcp_stage *st, struct port_ethdev_ctx *x,
			    struct rte_mbuf **pkts, unsigned n, struct pe_sock_tally *t)
{
	struct mmsghdr m[PE_SOCK_CHUNK];
	struct iovec iov[PE_SOCK_CHUNK][PE_SOCK_MAX_SEGS];
	struct rte_mbuf *keep[PE_SOCK_CHUNK];
	unsigned nm = 0, done = 0, tries = 0;

	for (unsigned i = 0; i < n; i++) {
		unsigned k = 0;

		if (unlikely(pkts[i]->nb_segs > PE_SOCK_MAX_SEGS)) {
			t->lost += rte_pktmbuf_pkt_len(pkts[i]);
			t->segs++;
			rte_pktmbuf_free(pkts[i]);
			continue;
		}
		for (struct rte_mbuf *s = pkts[i]; s != NULL; s = s->next, k++) {
			iov[nm][k].iov_base = rte_pktmbuf_mtod(s, void *);
			iov[nm][k].iov_len = s->data_len;
		}
		m[nm] = (struct mmsghdr){ .msg_hdr = { .msg_iov = iov[nm], .msg_iovlen = k } };
		keep[nm++] = pkts[i];
	}
	while (done < nm) {
		int r = sendmmsg(x->tx_fd, m + done, nm - done, MSG_DONTWAIT);

		if (r > 0) {
			t->sent += (unsigned)r;
			rte_pktmbuf_free_bulk(keep + done, (unsigned)r);
			done += (unsigned)r;
			continue;
		}
		if (r < 0 && errno != EAGAIN && errno != ENOBUFS && errno != EINTR) {
			if (t->err++ == 0)
				lcp_log(st, LCP_LOG_WARNING, "tx_socket: %s: sendmmsg: %s (a frame of %u "
					"bytes dropped as drop_tx_error)", x->name, strerror(errno),
					rte_pktmbuf_pkt_len(keep[done]));
			t->lost += rte_pktmbuf_pkt_len(keep[done]);
			rte_pktmbuf_free(keep[done]);
			done++;
			continue;
		}
		if (tries == x->tx_retries)
			break;
		tries++;
		rte_pause();
	}
	t->tries += tries;
	if (unlikely(done < nm)) {
		for (unsigned i = done; i < nm; i++)
			t->lost += rte_pktmbuf_pkt_len(keep[i]);
		t->full += nm - done;
		rte_pktmbuf_free_bulk(keep + done, nm - done);
	}
}

static void
port_ethdev_tx_socket(struct lcp_stage *st, struct port_ethdev_ctx *x, struct rte_mbuf **pkts,
		      unsigned n, uint64_t bytes)
{
	struct pe_sock_tally t = { 0 };

	for (unsigned i = 0; i < n; i += PE_SOCK_CHUNK)
		port_ethdev_tx_socket_chunk(st, x, pkts + i, RTE_MIN(n - i, (unsigned)PE_SOCK_CHUNK), &t);
	if (t.tries != 0)
		lcp_count(st, PE_TX_RETRIES, t.tries);
	if (unlikely(t.full != 0))
		lcp_count(st, PE_DROP_TX_FULL, t.full);
	if (unlikely(t.segs != 0))
		lcp_count(st, PE_DROP_TX_SEGS, t.segs);
	if (unlikely(t.err != 0))
		lcp_count(st, PE_DROP_TX_ERROR, t.err);
	lcp_count(st, PE_TX_PACKETS, t.sent);
	lcp_count(st, PE_TX_BYTES, bytes - t.lost);
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
	unsigned freed;

	if (x == NULL)
		return;
	freed = port_ethdev_teardown(st, x);
	if (freed != 0)
		lcp_count(st, PE_DROP_RX_SHUTDOWN, freed);
	rte_free(x);
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
};

LCP_PLUGIN_EXPORT const struct lcp_plugin lcp_plugin_descriptor = {
	LCP_PLUGIN_HEADER(LCP_KIND_STAGE, "port_ethdev"),
	.version = "1.0.0",
	.summary = "receive and transmit on a DPDK ethdev, or one end of an in-process ring pair",
	.options = port_ethdev_opts,
	.conf_size = sizeof(struct port_ethdev_conf),
	.ops = &port_ethdev_ops,
};
