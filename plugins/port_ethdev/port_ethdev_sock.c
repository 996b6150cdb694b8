/* SPDX-License-Identifier: BSD-3-Clause
 * port_ethdev_sock.c — tx_socket (net_af_packet only):
 * transmit with sendmmsg() on an AF_PACKET socket of our own. */
#include <errno.h>
#include <linux/if_packet.h>
#include <net/ethernet.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <rte_ethdev.h>
#include <rte_mbuf.h>
#include <rte_pause.h>

#include "port_ethdev.h"

#define PE_SOCK_MAX_SEGS 8 /* segments of one frame sent by tx_socket; more: drop_tx_segs */
#define PE_SOCK_CHUNK 64    /* frames per sendmmsg() */

struct pe_sock_tally {
	unsigned sent, full, segs, err, tries;
	uint64_t lost; /* bytes not sent */
};

/* tx_socket: an AF_PACKET socket of protocol 0 (it receives nothing) bound to
 * the kernel interface behind the port, with the qdisc bypassed. Why: the
 * af_packet driver transmits through a PACKET_TX_RING, from which the kernel
 * builds each skb as the link header plus page fragments pointing into the
 * ring, marked zero-copy; on a veth (or a bridge, or loopback-like paths) the
 * kernel must then copy those fragments into fresh pages before the frame
 * can cross, and the receiver pulls its headers out of them again. A
 * sendmmsg() on a plain packet socket builds one linear skb per frame below a
 * page: one copy, no page allocation. Measured in doc/benchmarks.md (B8). */
int
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

void
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
