/* SPDX-License-Identifier: BSD-3-Clause
 * port_ethdev.h — what the port_ethdev stage's files share: its limits,
 * counters, option and context structs, and the entry points of
 *   port_ethdev_dev.c   the ethdev: find it, claim it, configure its queues
 *                       and receive pool, tear it down
 *   port_ethdev_ring.c  an in-process ring pair as two ethdevs
 *   port_ethdev_sock.c  tx_socket: sendmmsg() on an AF_PACKET socket
 * port_ethdev.c holds the stage's ops (options, init ... fini). */
#ifndef LCP_PLUGIN_PORT_ETHDEV_H
#define LCP_PLUGIN_PORT_ETHDEV_H

#include <stdbool.h>
#include <stdint.h>

#include <rte_ethdev.h>
#include <rte_memzone.h>
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
	bool trust_checksums;
};

struct port_ethdev_ctx {
	uint16_t port;
	uint16_t nb_rxq;
	uint16_t nb_txq;
	uint16_t burst;
	uint32_t tx_retries;
	bool trust_csum;       /* trust_checksums: rx frames marked checksum-good */
	uint64_t drain_budget; /* frames rx may still take once the engine stops
				* (set at the first poll that sees it); UINT64_MAX before */
	uint32_t drain_max; /* frames per rx queue drained at stop, at most: a source
			     * like net_null never runs dry */
	bool configured; /* needs rte_eth_dev_close (or vdev removal) at fini */
	bool started;
	bool promiscuous;
	bool ring_pair;
	int tx_fd; /* tx_socket: the AF_PACKET socket; -1 otherwise */
	struct rte_mempool *rx_pool; /* our receive pool (NULL on a ring pair) */
	bool keeps_fill;    /* net_af_xdp: the driver keeps its fill ring's mbufs past close */
	unsigned fill_hold; /* keeps_fill: rx_pool's mbufs in use at start, before any rx */
	const struct rte_memzone *claim;
	char name[RTE_ETH_NAME_MAX_LEN];  /* ethdev name, for logs */
	char vdev[RTE_RING_NAMESIZE];     /* ring pair: our vdev, "net_ring_NAME<side>" */
	char peer_vdev[RTE_RING_NAMESIZE]; /* ring pair: the other side's vdev */
	char ring_a[RTE_RING_NAMESIZE];
	char ring_b[RTE_RING_NAMESIZE];
};

/* port_ethdev_ring.c */
bool port_ethdev_rp_name_ok(const char *s);
/* create (or join) the ring pair; sets x->port. 0 or a negative errno (logged) */
int port_ethdev_rp_create(struct lcp_stage *st, struct port_ethdev_ctx *x, const struct port_ethdev_conf *c);
/* remove our side (its vdev when have_vdev); free the rings if the other side
 * is gone. Returns the mbufs freed from them */
unsigned port_ethdev_rp_release(struct lcp_stage *st, struct port_ethdev_ctx *x, bool have_vdev);

/* port_ethdev_dev.c */
int port_ethdev_resolve(struct lcp_stage *st, struct port_ethdev_ctx *x, const struct port_ethdev_conf *c);
int port_ethdev_claim(struct lcp_stage *st, struct port_ethdev_ctx *x);
int port_ethdev_configure(struct lcp_stage *st, struct port_ethdev_ctx *x, const struct port_ethdev_conf *c);
unsigned port_ethdev_teardown(struct lcp_stage *st, struct port_ethdev_ctx *x);

/* port_ethdev_sock.c */
int port_ethdev_tx_socket_open(struct lcp_stage *st, struct port_ethdev_ctx *x);
/* n frames of bytes bytes on the socket; every mbuf is freed, counted */
void port_ethdev_tx_socket(struct lcp_stage *st, struct port_ethdev_ctx *x, struct rte_mbuf **pkts, unsigned n,
			   uint64_t bytes);

#endif
