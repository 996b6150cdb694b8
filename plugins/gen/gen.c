/* SPDX-License-Identifier: BSD-3-Clause
 * gen — a packet source for tests and benchmarks.
 *
 * Builds Ethernet/IPv4/UDP frames of a fixed size from one template made at init
 * and emits them on "out". The UDP payload starts with a 64-bit sequence number in
 * network byte order, starting at 0, so a downstream test can check order and
 * gaps; the rest of the payload is the byte pattern (offset & 0xff). The IPv4
 * header checksum is right (it is the same for every frame: id 0, DF set); the
 * UDP checksum is right too, patched per frame from the template's partial sum
 * plus the sequence number words (RFC 1624 style, no pass over the payload).
 *
 * Entry points: gen_validate (lcpipe check), gen_init (template, pool check),
 * gen_poll (token bucket, alloc, fill, emit), gen_fini.
 *
 * Rate: a token bucket on the TSC. Credit is kept in units of packets * tsc_hz so
 * that integer arithmetic is exact at any rate; it accumulates at `rate` packets a
 * second and is capped at 10 ms worth of frames (at least one burst): a short
 * stall of the lcore (a slow write() by a stage on the same lcore, preemption) is
 * made up in full bursts so the average rate holds, while a long one is not
 * turned into a flood. No sleeping: without credit poll() returns 0 (idle).
 *
 * Pool exhaustion (downstream holding every mbuf) is counted in "alloc_fail" (one
 * per failed attempt) and retried at the next poll, keeping the credit.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <arpa/inet.h>

#include <rte_byteorder.h>
#include <rte_cycles.h>
#include <rte_ether.h>
#include <rte_ip.h>
#include <rte_malloc.h>
#include <rte_mbuf.h>
#include <rte_udp.h>

#include <lcp/lcp.h>

#define GEN_MIN_SIZE 60   /* Ethernet minimum without FCS */
#define GEN_MAX_SIZE 9000
#define GEN_MAX_BURST 512
#define GEN_MAX_RATE 1000000000ull /* keeps dt * rate below 2^64 with dt <= tsc_hz */
#define GEN_HDR_LEN                                                            \
	(sizeof(struct rte_ether_hdr) + sizeof(struct rte_ipv4_hdr) +          \
	 sizeof(struct rte_udp_hdr))
#define GEN_SEQ_OFF GEN_HDR_LEN /* the sequence number starts the UDP payload */

enum { GEN_PORT_OUT };

static const struct lcp_port_def gen_ports[] = {
	{ .name = "out", .dir = LCP_PORT_OUT, .unit = LCP_UNIT_PKT,
	  .flags = LCP_PORT_F_REQUIRED,
	  .doc = "generated Ethernet/IPv4/UDP frames, sequence number first in the payload" },
	LCP_PORT_END,
};

#define GEN_COUNTERS(X)                                                        \
	X(PACKETS, "packets")                                                  \
	X(BYTES, "bytes")                                                      \
	X(ALLOC_FAIL, "alloc_fail")
enum {
#define X(e, s) GEN_##e,
	GEN_COUNTERS(X)
#undef X
};
static const char *const gen_counters[] = { GEN_COUNTERS(LCP_COUNTER_NAME) NULL };

struct gen_conf {
	uint32_t size;
	uint64_t rate;
	uint32_t burst;
	uint64_t count;
	const char *src_mac;
	const char *dst_mac;
	const char *src_ip;
	const char *dst_ip;
	uint16_t src_port;
	uint16_t dst_port;
};

static const struct lcp_opt gen_opts[] = {
	LCP_OPT_UINT(struct gen_conf, size, "size", "64", GEN_MIN_SIZE, GEN_MAX_SIZE, 0,
		     "frame length in bytes, Ethernet header included, FCS excluded; must fit one mbuf of the engine's pool"),
	LCP_OPT_UINT(struct gen_conf, rate, "rate", "0", 0, (int64_t)GEN_MAX_RATE, 0,
		     "packets per second (TSC token bucket, no sleeping); 0 = as fast as possible"),
	LCP_OPT_UINT(struct gen_conf, burst, "burst", "32", 1, GEN_MAX_BURST, 0,
		     "frames allocated and emitted per poll at most"),
	LCP_OPT_UINT(struct gen_conf, count, "count", "0", 0, INT64_MAX, 0,
		     "total frames to generate, then stay idle; 0 = unlimited"),
	LCP_OPT_STRING(struct gen_conf, src_mac, "src_mac", "\"02:00:00:00:00:01\"", 1, 17, 0,
		       "Ethernet source address (unicast), e.g. 02:00:00:00:00:01"),
	LCP_OPT_STRING(struct gen_conf, dst_mac, "dst_mac", "\"02:00:00:00:00:02\"", 1, 17, 0,
		       "Ethernet destination address, e.g. 02:00:00:00:00:02 or ff:ff:ff:ff:ff:ff"),
	LCP_OPT_STRING(struct gen_conf, src_ip, "src_ip", "\"10.0.0.1\"", 7, 15, 0,
		       "IPv4 source address, dotted quad"),
	LCP_OPT_STRING(struct gen_conf, dst_ip, "dst_ip", "\"10.0.0.2\"", 7, 15, 0,
		       "IPv4 destination address, dotted quad"),
	LCP_OPT_UINT(struct gen_conf, src_port, "src_port", "1024", 0, UINT16_MAX, 0,
		     "UDP source port"),
	LCP_OPT_UINT(struct gen_conf, dst_port, "dst_port", "1024", 0, UINT16_MAX, 0,
		     "UDP destination port"),
	LCP_OPT_END,
};

struct gen_ctx {
	struct rte_mempool *pool;
	uint32_t size;
	uint32_t burst;
	uint64_t rate;     /* packets per second, 0 = flat out */
	uint64_t count;    /* 0 = unlimited */
	uint64_t seq;      /* next sequence number == frames emitted so far */
	uint64_t hz;       /* TSC frequency */
	uint64_t credit;   /* packets * hz */
	uint64_t credit_max;
	uint64_t last_tsc; /* 0 until the first poll */
	uint32_t udp_sum;  /* template UDP checksum partial sum, sequence number 0 */
	uint8_t tmpl[] __rte_cache_aligned; /* `size` bytes */
};

/* Parse the address options; on error write a one-line reason into msg. */
static int
gen_parse_addrs(const struct gen_conf *c, struct rte_ether_addr *smac,
		struct rte_ether_addr *dmac, struct in_addr *sip, struct in_addr *dip,
		char *msg, size_t msglen)
{
	if (rte_ether_unformat_addr(c->src_mac, smac) != 0) {
		snprintf(msg, msglen, "src_mac \"%s\" is not a MAC address (want xx:xx:xx:xx:xx:xx)",
			 c->src_mac);
		return -EINVAL;
	}
	if (!rte_is_unicast_ether_addr(smac)) {
		snprintf(msg, msglen, "src_mac \"%s\" is a multicast/broadcast address; a source must be unicast",
			 c->src_mac);
		return -EINVAL;
	}
	if (rte_ether_unformat_addr(c->dst_mac, dmac) != 0) {
		snprintf(msg, msglen, "dst_mac \"%s\" is not a MAC address (want xx:xx:xx:xx:xx:xx)",
			 c->dst_mac);
		return -EINVAL;
	}
	if (inet_pton(AF_INET, c->src_ip, sip) != 1) {
		snprintf(msg, msglen, "src_ip \"%s\" is not an IPv4 address (want a dotted quad such as 10.0.0.1)",
			 c->src_ip);
		return -EINVAL;
	}
	if (inet_pton(AF_INET, c->dst_ip, dip) != 1) {
		snprintf(msg, msglen, "dst_ip \"%s\" is not an IPv4 address (want a dotted quad such as 10.0.0.2)",
			 c->dst_ip);
		return -EINVAL;
	}
	return 0;
}

static int
gen_validate(const void *conf, char *msg, size_t msglen)
{
	const struct gen_conf *c = conf;
	struct rte_ether_addr smac, dmac;
	struct in_addr sip, dip;

	return gen_parse_addrs(c, &smac, &dmac, &sip, &dip, msg, msglen);
}

/* Build the template frame (sequence number 0) and its UDP partial sum. */
static void
gen_build_template(struct gen_ctx *x, const struct gen_conf *c,
		   const struct rte_ether_addr *smac, const struct rte_ether_addr *dmac,
		   struct in_addr sip, struct in_addr dip)
{
	struct rte_ether_hdr *eth = (struct rte_ether_hdr *)x->tmpl;
	struct rte_ipv4_hdr *ip = (struct rte_ipv4_hdr *)(eth + 1);
	struct rte_udp_hdr *udp = (struct rte_udp_hdr *)(ip + 1);
	uint8_t *payload = (uint8_t *)(udp + 1);
	uint16_t ip_len = (uint16_t)(c->size - sizeof(*eth));
	uint16_t udp_len = (uint16_t)(ip_len - sizeof(*ip));
	uint32_t sum;

	rte_ether_addr_copy(dmac, &eth->dst_addr);
	rte_ether_addr_copy(smac, &eth->src_addr);
	eth->ether_type = rte_cpu_to_be_16(RTE_ETHER_TYPE_IPV4);

	ip->version_ihl = RTE_IPV4_VHL_DEF;
	ip->type_of_service = 0;
	ip->total_length = rte_cpu_to_be_16(ip_len);
	ip->packet_id = 0; /* RFC 6864: atomic datagrams (DF set) may use id 0 */
	ip->fragment_offset = rte_cpu_to_be_16(RTE_IPV4_HDR_DF_FLAG);
	ip->time_to_live = 64;
	ip->next_proto_id = IPPROTO_UDP;
	ip->hdr_checksum = 0;
	ip->src_addr = sip.s_addr;
	ip->dst_addr = dip.s_addr;
	ip->hdr_checksum = rte_ipv4_cksum(ip);

	udp->src_port = rte_cpu_to_be_16(c->src_port);
	udp->dst_port = rte_cpu_to_be_16(c->dst_port);
	udp->dgram_len = rte_cpu_to_be_16(udp_len);
	udp->dgram_cksum = 0;

	for (uint32_t i = 0; i < (uint32_t)(udp_len - sizeof(*udp)); i++)
		payload[i] = i < sizeof(uint64_t) ? 0 : (uint8_t)i;

	/* pseudo header + UDP header (checksum 0) + payload (sequence 0) */
	sum = rte_ipv4_phdr_cksum(ip, 0);
	sum += rte_raw_cksum(udp, udp_len);
	x->udp_sum = sum;
}

static int
gen_init(struct lcp_stage *st, const void *conf, void **ctx)
{
	const struct gen_conf *c = conf;
	struct rte_mempool *pool = lcp_stage_pktmbuf_pool(st);
	struct rte_ether_addr smac, dmac;
	struct in_addr sip, dip;
	struct gen_ctx *x;
	char msg[160];
	uint32_t room;
	int rc;

	rc = gen_parse_addrs(c, &smac, &dmac, &sip, &dip, msg, sizeof(msg));
	if (rc != 0) {
		lcp_log(st, LCP_LOG_ERR, "%s", msg);
		return rc;
	}
	if (pool == NULL) {
		lcp_log(st, LCP_LOG_ERR, "the engine has no packet mbuf pool for socket %d",
			lcp_stage_socket(st));
		return -ENOENT;
	}
	room = rte_pktmbuf_data_room_size(pool);
	room = room > RTE_PKTMBUF_HEADROOM ? room - RTE_PKTMBUF_HEADROOM : 0;
	if (c->size > room) {
		lcp_log(st, LCP_LOG_ERR,
			"size %" PRIu32 " does not fit one mbuf of pool \"%s\" (%" PRIu32
			" bytes of data room after the %u-byte headroom): lower size or raise the engine's mbuf data room",
			c->size, pool->name, room, (unsigned)RTE_PKTMBUF_HEADROOM);
		return -EINVAL;
	}

	x = lcp_stage_zmalloc(st, "the context and its frame", sizeof(*x) + c->size);
	if (x == NULL)
		return -ENOMEM;
	x->pool = pool;
	x->size = c->size;
	x->burst = c->burst;
	x->rate = c->rate;
	x->count = c->count;
	x->hz = rte_get_tsc_hz();
	x->credit_max = RTE_MAX((uint64_t)c->burst, c->rate / 100) * x->hz;
	gen_build_template(x, c, &smac, &dmac, sip, dip);

	snprintf(msg, sizeof(msg), c->rate ? "%" PRIu64 " pps" : "unlimited", c->rate);
	lcp_log(st, LCP_LOG_INFO,
		"%" PRIu32 "-byte frames %s:%u -> %s:%u, rate %s, count %" PRIu64 "%s, burst %" PRIu32,
		c->size, c->src_ip, c->src_port, c->dst_ip, c->dst_port, msg, c->count,
		c->count ? "" : " (unlimited)", c->burst);
	*ctx = x;
	return 0;
}

/* How many frames the token bucket allows now, at most `want`. */
static inline unsigned
gen_tokens(struct gen_ctx *x, unsigned want)
{
	uint64_t now = rte_rdtsc();
	uint64_t dt, avail;

	if (unlikely(x->last_tsc == 0)) { /* first poll: one frame right away */
		x->last_tsc = now;
		x->credit = x->hz;
	}
	dt = now - x->last_tsc;
	x->last_tsc = now;
	if (dt > x->hz)
		dt = x->hz;
	x->credit += dt * x->rate;
	if (x->credit > x->credit_max)
		x->credit = x->credit_max;
	avail = x->credit / x->hz;
	return avail < want ? (unsigned)avail : want;
}

static unsigned
gen_poll(struct lcp_stage *st, void *ctx)
{
	struct gen_ctx *x = ctx;
	struct rte_mbuf *pkts[GEN_MAX_BURST];
	unsigned n = x->burst;
	uint64_t tsc;

	if (lcp_stage_stopping(st))
		return 0;
	if (x->count != 0) {
		if (x->seq >= x->count)
			return 0;
		if (x->count - x->seq < n)
			n = (unsigned)(x->count - x->seq);
	}
	if (x->rate != 0) {
		n = gen_tokens(x, n);
		if (n == 0)
			return 0;
	}
	if (unlikely(rte_pktmbuf_alloc_bulk(x->pool, pkts, n) != 0)) {
		lcp_count(st, GEN_ALLOC_FAIL, 1);
		return 0; /* credit kept: retried next poll */
	}

	tsc = rte_rdtsc();
	for (unsigned i = 0; i < n; i++) {
		struct rte_mbuf *m = pkts[i];
		uint8_t *d = rte_pktmbuf_mtod(m, uint8_t *);
		uint64_t be_seq = rte_cpu_to_be_64(x->seq + i);
		struct rte_udp_hdr *udp;
		uint16_t w[4];
		uint32_t sum;

		rte_memcpy(d, x->tmpl, x->size);
		memcpy(d + GEN_SEQ_OFF, &be_seq, sizeof(be_seq));
		/* patch the UDP checksum: template sum + the sequence number words */
		memcpy(w, &be_seq, sizeof(w));
		sum = x->udp_sum + w[0] + w[1] + w[2] + w[3];
		sum = (sum & 0xffff) + (sum >> 16);
		sum = (sum & 0xffff) + (sum >> 16);
		sum = (~sum) & 0xffff;
		udp = (struct rte_udp_hdr *)(d + sizeof(struct rte_ether_hdr) +
					     sizeof(struct rte_ipv4_hdr));
		udp->dgram_cksum = sum == 0 ? 0xffff : (uint16_t)sum;

		m->data_len = (uint16_t)x->size;
		m->pkt_len = x->size;
		m->packet_type = RTE_PTYPE_L2_ETHER | RTE_PTYPE_L3_IPV4 | RTE_PTYPE_L4_UDP;
		m->l2_len = sizeof(struct rte_ether_hdr);
		m->l3_len = sizeof(struct rte_ipv4_hdr);
		lcp_mbuf_set_rx_tsc(m, tsc);
	}
	x->seq += n;
	if (x->rate != 0)
		x->credit -= (uint64_t)n * x->hz;

	lcp_count(st, GEN_PACKETS, n);
	lcp_count(st, GEN_BYTES, (uint64_t)n * x->size);
	lcp_emit(st, GEN_PORT_OUT, (void **)pkts, n);
	return n;
}

static void
gen_fini(struct lcp_stage *st, void *ctx)
{
	struct gen_ctx *x = ctx;

	if (x == NULL)
		return;
	lcp_log(st, LCP_LOG_INFO, "generated %" PRIu64 " frames", x->seq);
	rte_free(x);
}

static const struct lcp_stage_ops gen_ops = {
	.ports = gen_ports,
	.counters = gen_counters,
	.validate = gen_validate,
	.init = gen_init,
	.poll = gen_poll,
	.fini = gen_fini,
};

LCP_PLUGIN_EXPORT const struct lcp_plugin lcp_plugin_descriptor = {
	LCP_PLUGIN_HEADER(LCP_KIND_STAGE, "gen"),
	.version = "1.0.0",
	.summary = "generate Ethernet/IPv4/UDP frames with a sequence number, at a set rate",
	.options = gen_opts,
	.conf_size = sizeof(struct gen_conf),
	.ops = &gen_ops,
};
