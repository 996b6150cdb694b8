/* SPDX-License-Identifier: BSD-3-Clause
 * b8_afp_tx.c — B8 diagnostic (doc/benchmarks.md "B8"): what one small frame
 * costs to transmit on a veth through an AF_PACKET socket, the two ways
 * lcpipe's port_ethdev can do it, alternated frame by frame in one process:
 *
 *   ring: what the net_af_packet driver does — copy the frame into the next
 *         slot of a PACKET_TX_RING (TPACKET_V2), mark it SEND_REQUEST, kick
 *         with sendto(fd, NULL, 0, MSG_DONTWAIT). The kernel builds the skb
 *         as the Ethernet header plus page fragments pointing into the ring.
 *   mmsg: what port_ethdev's tx_socket does — sendmmsg() of one message on a
 *         plain packet socket: one linear skb.
 *
 * Both sockets bypass the qdisc (PACKET_QDISC_BYPASS, as b8.sh's
 * qdisc_bypass=1). The frame: --size bytes (default 124, lcpipe's 64-byte
 * probe in a masked WebSocket frame in TCP/IPv4/Ethernet), Ethernet to
 * --dst-mac, IPv4/UDP to 10.99.0.9 — not the peer's address, so the peer's
 * kernel receives it through the veth and drops it at IP (no forwarding):
 * the measured call includes the veth and the peer's receive up to that drop,
 * in softirq inside the call, as for every B8 client. Cycles (rdtsc) per call
 * from before the copy (ring) / the call (mmsg) until the call returned; a
 * spin of --gap-cycles between frames. Prints one JSON line:
 * {"ring_p50", "ring_p90", "mmsg_p50", "mmsg_p90", "frames"} in cycles.
 *
 * Usage: b8_afp_tx --iface IF --dst-mac XX:XX:XX:XX:XX:XX [--count N] [--size B]
 * Run it pinned (taskset) inside the namespace of IF; b8.sh does, once per run. */
#include <arpa/inet.h>
#include <errno.h>
#include <inttypes.h>
#include <linux/if_packet.h>
#include <net/ethernet.h>
#include <net/if.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <unistd.h>
#include <x86intrin.h>

#include "bench_opt.h"

#define RING_FRAME 2048u
#define RING_FRAMES 512u
#define RING_BLOCK 4096u

static int
cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

static int
die(const char *what)
{
	fprintf(stderr, "b8_afp_tx: %s: %s\n", what, strerror(errno));
	return 1;
}

int
main(int argc, char **argv)
{
	const char *ifname = NULL, *mac = NULL;
	unsigned count = 20000, size = 124, o;
	uint64_t gap = 4000;
	uint8_t fr[1500], dst[6];
	int one = 1, v = TPACKET_V2;
	const struct bench_opt opts[] = {
		BENCH_OPT_STR("iface", &ifname),
		BENCH_OPT_STR("dst-mac", &mac),
		BENCH_OPT_UINT("count", &count),
		BENCH_OPT_UINT("size", &size),
		BENCH_OPT_U64("gap-cycles", &gap),
		BENCH_OPT_END,
	};

	if (bench_opt_parse(argc, argv, opts, "b8_afp_tx", NULL) < 0)
		return 2;
	if (ifname == NULL || mac == NULL || count == 0 || size < 42 || size > sizeof(fr) ||
	    sscanf(mac, "%hhx:%hhx:%hhx:%hhx:%hhx:%hhx", &dst[0], &dst[1], &dst[2], &dst[3],
		   &dst[4], &dst[5]) != 6) {
		fprintf(stderr, "usage: b8_afp_tx --iface IF --dst-mac XX:XX:XX:XX:XX:XX "
				"[--count N] [--size 42..1500] [--gap-cycles C]\n");
		return 2;
	}

	/* Ethernet, IPv4 (checksum right), UDP without a checksum, zero payload */
	memset(fr, 0, sizeof(fr));
	memcpy(fr, dst, 6);
	memcpy(fr + 6, "\x02\x00\x0a\x58\x00\x63", 6);
	fr[12] = 0x08;
	{
		uint8_t *ip = fr + 14;
		uint32_t sum = 0;
		uint16_t tot = (uint16_t)(size - 14);

		ip[0] = 0x45;
		ip[2] = (uint8_t)(tot >> 8);
		ip[3] = (uint8_t)tot;
		ip[6] = 0x40;
		ip[8] = 64;
		ip[9] = 17;
		memcpy(ip + 12, "\x0a\x58\x00\x63\x0a\x63\x00\x09", 8); /* 10.88.0.99 -> 10.99.0.9 */
		for (unsigned i = 0; i < 20; i += 2)
			sum += (uint32_t)(ip[i] << 8 | ip[i + 1]);
		while (sum >> 16)
			sum = (sum & 0xffff) + (sum >> 16);
		ip[10] = (uint8_t)(~sum >> 8);
		ip[11] = (uint8_t)~sum;
		ip[20] = 0x9c; ip[21] = 0x40; ip[22] = 0x23; ip[23] = 0x29; /* 40000 -> 9001 */
		ip[24] = (uint8_t)((tot - 20) >> 8);
		ip[25] = (uint8_t)(tot - 20);
	}

	struct sockaddr_ll sll = { .sll_family = AF_PACKET, .sll_ifindex = (int)if_nametoindex(ifname) };
	struct tpacket_req req = { .tp_block_size = RING_BLOCK,
				   .tp_block_nr = RING_FRAMES * RING_FRAME / RING_BLOCK,
				   .tp_frame_size = RING_FRAME, .tp_frame_nr = RING_FRAMES };
	int rfd = socket(AF_PACKET, SOCK_RAW, 0), mfd = socket(AF_PACKET, SOCK_RAW, 0);
	uint8_t *ring;

	if (sll.sll_ifindex == 0)
		return die(ifname);
	if (rfd < 0 || mfd < 0)
		return die("socket(AF_PACKET)");
	if (setsockopt(rfd, SOL_PACKET, PACKET_VERSION, &v, sizeof(v)) != 0 ||
	    setsockopt(rfd, SOL_PACKET, PACKET_QDISC_BYPASS, &one, sizeof(one)) != 0 ||
	    setsockopt(mfd, SOL_PACKET, PACKET_QDISC_BYPASS, &one, sizeof(one)) != 0 ||
	    setsockopt(rfd, SOL_PACKET, PACKET_TX_RING, &req, sizeof(req)) != 0)
		return die("setsockopt");
	ring = mmap(NULL, (size_t)RING_FRAMES * RING_FRAME, PROT_READ | PROT_WRITE, MAP_SHARED, rfd, 0);
	if (ring == MAP_FAILED)
		return die("mmap");
	if (bind(rfd, (struct sockaddr *)&sll, sizeof(sll)) != 0 ||
	    bind(mfd, (struct sockaddr *)&sll, sizeof(sll)) != 0)
		return die("bind");

	uint64_t *tr = calloc(count, sizeof(*tr)), *tm = calloc(count, sizeof(*tm));
	struct iovec iov = { .iov_base = fr, .iov_len = size };
	struct mmsghdr mh = { .msg_hdr = { .msg_iov = &iov, .msg_iovlen = 1 } };
	unsigned slot = 0;

	if (tr == NULL || tm == NULL)
		return die("calloc");
	for (unsigned i = 0; i < 2 * count; i++) {
		uint64_t t0, t1;

		if (i & 1) {
			t0 = __rdtsc();
			if (sendmmsg(mfd, &mh, 1, MSG_DONTWAIT) != 1)
				return die("sendmmsg");
			tm[i / 2] = __rdtsc() - t0;
		} else {
			struct tpacket2_hdr *h = (struct tpacket2_hdr *)(ring + (size_t)slot * RING_FRAME);

			t0 = __rdtsc();
			while (__atomic_load_n(&h->tp_status, __ATOMIC_ACQUIRE) != TP_STATUS_AVAILABLE) {
				struct pollfd p = { .fd = rfd, .events = POLLOUT };

				if (poll(&p, 1, 1000) < 0)
					return die("poll");
			}
			memcpy((uint8_t *)h + TPACKET2_HDRLEN - sizeof(struct sockaddr_ll), fr, size);
			h->tp_len = size;
			__atomic_store_n(&h->tp_status, TP_STATUS_SEND_REQUEST, __ATOMIC_RELEASE);
			if (sendto(rfd, NULL, 0, MSG_DONTWAIT, NULL, 0) < 0 && errno != EAGAIN &&
			    errno != ENOBUFS)
				return die("sendto");
			tr[i / 2] = __rdtsc() - t0;
			slot = (slot + 1) % RING_FRAMES;
		}
		t1 = __rdtsc();
		while (__rdtsc() - t1 < gap)
			_mm_pause();
	}
	qsort(tr, count, sizeof(*tr), cmp_u64);
	qsort(tm, count, sizeof(*tm), cmp_u64);
	o = count / 2;
	printf("{\"ring_p50\":%" PRIu64 ",\"ring_p90\":%" PRIu64 ",\"mmsg_p50\":%" PRIu64
	       ",\"mmsg_p90\":%" PRIu64 ",\"frames\":%u,\"size\":%u}\n",
	       tr[o], tr[count * 9 / 10], tm[o], tm[count * 9 / 10], count, size);
	return 0;
}
