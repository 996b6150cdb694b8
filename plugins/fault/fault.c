/* SPDX-License-Identifier: BSD-3-Clause
 * fault — seeded, reproducible fault injection on a `pkt` path, both directions.
 *
 * The stage sits on a link of frames, typically between a port and the tcp stage:
 *
 *   port.rx -> fault.a_in    fault.a_out -> tcp.rx     direction a (toward the stack)
 *   tcp.tx  -> fault.b_in    fault.b_out -> port.tx    direction b (toward the wire)
 *
 * Each direction has its own generator and its own probability for each action:
 *   drop       free the frame (counted drop_<d>_injected)
 *   duplicate  emit a deep copy (rte_pktmbuf_copy, not a second reference) right
 *              away; the original then goes on to the other actions
 *   corrupt    XOR one byte, at a seeded position, with a seeded non-zero value,
 *              inside the IPv4 datagram (never the Ethernet header, never the
 *              Ethernet padding); the position avoids the three fields a receiver
 *              must read before it can checksum anything (version/IHL, total
 *              length, TCP data offset), so the damage is always the receiver's
 *              IPv4 or TCP/UDP checksum's to catch. Pending tx checksum offloads
 *              are computed in software first and rx "checksum good" flags are
 *              cleared, so no offload hides the damage.
 *   reorder    hold the frame until `reorder_after` later frames of its
 *              direction have passed, or `reorder_us` elapsed, whichever first
 *   delay      hold the frame for `delay_us` (reorder wins if both are drawn)
 * A dropped frame gets no other action. The others combine.
 *
 * Reproducible: every frame a direction handles consumes exactly FAULT_DRAWS
 * numbers of that direction's generator, whatever happens to it, so the actions
 * taken on the i-th frame of a direction depend only on `seed` and i (the
 * duplicate copy consumes none). The generator is xoshiro256** seeded through
 * splitmix64 (seed and direction): a few shifts and multiplies per number, fine
 * in the hot path, and not cryptographic — nothing here needs to be.
 *
 * Held frames (reorder, delay) sit in a per-direction array in arrival order,
 * at most `max_held`; one more releases the oldest early (counted). poll()
 * releases what is due by time; process() releases what is due by count right
 * after the frame that made it due. Once the engine drains, poll() releases
 * everything held; stop() frees what still arrived and was held after that
 * (counted drop_<d>_held_at_stop): nothing leaks.
 *
 * Entry points: fault_validate (lcpipe check), fault_init, fault_process,
 * fault_poll, fault_stop, fault_fini.
 */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include <rte_byteorder.h>
#include <rte_cycles.h>
#include <rte_ether.h>
#include <rte_ip.h>
#include <rte_malloc.h>
#include <rte_mbuf.h>
#include <rte_tcp.h>
#include <rte_udp.h>

#include <lcp/lcp.h>

#define FAULT_MAX_HELD 65536
#define FAULT_OBUF 64 /* frames staged per direction before an emit */
#define FAULT_DRAWS 6 /* generator numbers per frame, see fault_frame() */

enum { FAULT_A_IN, FAULT_A_OUT, FAULT_B_IN, FAULT_B_OUT };

static const struct lcp_port_def fault_ports[] = {
	[FAULT_A_IN] = { .name = "a_in", .dir = LCP_PORT_IN, .unit = LCP_UNIT_PKT,
			 .doc = "direction a: frames in (e.g. from port.rx)" },
	[FAULT_A_OUT] = { .name = "a_out", .dir = LCP_PORT_OUT, .unit = LCP_UNIT_PKT,
			  .flags = LCP_PORT_F_FORWARDS(FAULT_A_IN),
			  .doc = "direction a: frames out, after the faults (e.g. to tcp.rx)" },
	[FAULT_B_IN] = { .name = "b_in", .dir = LCP_PORT_IN, .unit = LCP_UNIT_PKT,
			 .doc = "direction b: frames in (e.g. from tcp.tx)" },
	[FAULT_B_OUT] = { .name = "b_out", .dir = LCP_PORT_OUT, .unit = LCP_UNIT_PKT,
			  .flags = LCP_PORT_F_FORWARDS(FAULT_B_IN),
			  .doc = "direction b: frames out, after the faults (e.g. to port.tx)" },
	LCP_PORT_END,
};

/* The same counters for each direction; D is the direction's letter. */
#define FAULT_DIR_COUNTERS(X, D)                                               \
	X(DROPPED, "drop_" D "_injected")                                      \
	X(DUPLICATED, D "_duplicated")                                         \
	X(CORRUPTED, D "_corrupted")                                           \
	X(REORDERED, D "_reordered")                                           \
	X(DELAYED, D "_delayed")                                               \
	X(DUP_NOMBUF, D "_dup_nombuf")                                         \
	X(CORRUPT_SKIPPED, D "_corrupt_skipped")                               \
	X(UNMATCHED, D "_unmatched")                                           \
	X(RELEASED_COUNT, D "_released_count")                                 \
	X(RELEASED_TIME, D "_released_time")                                   \
	X(RELEASED_EARLY, D "_released_early")                                 \
	X(RELEASED_DRAIN, D "_released_drain")                                 \
	X(HELD_PEAK, D "_held_peak")                                           \
	X(HELD_AT_STOP, "drop_" D "_held_at_stop")

enum {
#define X(e, s) FC_##e,
	FAULT_DIR_COUNTERS(X, "")
#undef X
	FC__PER_DIR
};

static const char *const fault_counters[] = {
	FAULT_DIR_COUNTERS(LCP_COUNTER_NAME, "a") FAULT_DIR_COUNTERS(LCP_COUNTER_NAME, "b") NULL
};

enum fault_action { FA_DROP, FA_DUPLICATE, FA_CORRUPT, FA_REORDER, FA_DELAY, FA__N };
static const char *const fault_action_names[FA__N] = {
	"drop", "duplicate", "corrupt", "reorder", "delay",
};

enum fault_frames { FF_ALL, FF_IPV4, FF_TCP };
static const char *const fault_frames_choices[] = { "all", "ipv4", "tcp", NULL };

struct fault_conf {
	uint64_t seed;
	double p[FA__N];       /* both directions */
	double pd[2][FA__N];   /* per direction; < 0: take p[] */
	uint32_t reorder_after;
	uint32_t reorder_us;
	uint32_t delay_us;
	uint32_t max_held;
	int frames;
};

#define FAULT_P(fld, nm, what)                                                 \
	LCP_OPT_DOUBLE(struct fault_conf, fld, nm, "0", 0, 1, 0,               \
		       "probability, both directions, that a frame is " what)
/* a per-direction probability: DIR "a" or "b", ACT an action name */
#define FAULT_PD(d, i, dir, act)                                               \
	LCP_OPT_DOUBLE(struct fault_conf, pd[d][i], dir "_" act, "-1", -1, 1, 0,  \
		       act " probability of direction " dir " (" dir "_in -> " dir   \
			   "_out) only; -1 = take \"" act "\"")

static const struct lcp_opt fault_opts[] = {
	LCP_OPT_UINT(struct fault_conf, seed, "seed", "1", 0, INT64_MAX, 0,
		     "seed of both directions' generators: the same seed and the same frames give the same actions"),
	FAULT_P(p[FA_DROP], "drop", "dropped (freed, counted drop_<d>_injected)"),
	FAULT_P(p[FA_DUPLICATE], "duplicate", "duplicated (a deep copy is emitted at once)"),
	FAULT_P(p[FA_CORRUPT], "corrupt", "corrupted (one byte of its IPv4 datagram flipped, for the checksums to catch)"),
	FAULT_P(p[FA_REORDER], "reorder", "held back until reorder_after later frames passed or reorder_us elapsed"),
	FAULT_P(p[FA_DELAY], "delay", "held for delay_us"),
	FAULT_PD(0, FA_DROP, "a", "drop"),
	FAULT_PD(0, FA_DUPLICATE, "a", "duplicate"),
	FAULT_PD(0, FA_CORRUPT, "a", "corrupt"),
	FAULT_PD(0, FA_REORDER, "a", "reorder"),
	FAULT_PD(0, FA_DELAY, "a", "delay"),
	FAULT_PD(1, FA_DROP, "b", "drop"),
	FAULT_PD(1, FA_DUPLICATE, "b", "duplicate"),
	FAULT_PD(1, FA_CORRUPT, "b", "corrupt"),
	FAULT_PD(1, FA_REORDER, "b", "reorder"),
	FAULT_PD(1, FA_DELAY, "b", "delay"),
	LCP_OPT_UINT(struct fault_conf, reorder_after, "reorder_after", "3", 1, 1000000, 0,
		     "a reordered frame is released after this many later frames of its direction..."),
	LCP_OPT_UINT(struct fault_conf, reorder_us, "reorder_us", "1000", 0, 60000000, 0,
		     "... or after this many microseconds, whichever comes first"),
	LCP_OPT_UINT(struct fault_conf, delay_us, "delay_us", "1000", 0, 60000000, 0,
		     "a delayed frame is held this many microseconds"),
	LCP_OPT_UINT(struct fault_conf, max_held, "max_held", "256", 1, FAULT_MAX_HELD, 0,
		     "frames held at most per direction; one more releases the oldest early (<d>_released_early)"),
	LCP_OPT_ENUM(struct fault_conf, frames, "frames", "\"all\"", fault_frames_choices, 0,
		     "which frames the faults apply to: all, ipv4 or tcp (IPv4/TCP); the others pass untouched (<d>_unmatched)"),
	LCP_OPT_END,
};

struct fault_held {
	struct rte_mbuf *m;
	uint64_t due_tsc;   /* release at this TSC */
	uint64_t due_count; /* release once the direction has seen this many frames */
};

struct fault_dir {
	uint64_t s[4];              /* xoshiro256** state */
	uint64_t thr[FA__N];        /* a draw (53 bits) below thr[i] takes action i */
	uint64_t seen;              /* frames arrived on this direction's input */
	uint64_t next_tsc;          /* earliest due_tsc held (UINT64_MAX: none) */
	uint64_t next_count;        /* earliest due_count held (UINT64_MAX: none) */
	uint32_t n_held;
	uint32_t peak;
	unsigned out_port;
	unsigned ctr;               /* index of the direction's first counter */
	struct fault_held *held;    /* max_held entries, oldest first */
	struct lcp_obuf ob;
};

struct fault_ctx {
	struct lcp_stage *st;
	struct rte_mempool *pool; /* for the duplicates and private copies */
	uint64_t reorder_tsc;
	uint64_t delay_tsc;
	uint32_t reorder_after;
	uint32_t max_held;
	int frames;
	struct fault_dir d[2];
};

/* ---- generator: splitmix64 to seed, xoshiro256** to draw (Blackman/Vigna) ---- */

static uint64_t
fault_splitmix(uint64_t *x)
{
	uint64_t z = (*x += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

static inline uint64_t
fault_rotl(uint64_t x, int k)
{
	return (x << k) | (x >> (64 - k));
}

static inline uint64_t
fault_next(uint64_t s[4])
{
	uint64_t r = fault_rotl(s[1] * 5, 7) * 9;
	uint64_t t = s[1] << 17;

	s[2] ^= s[0];
	s[3] ^= s[1];
	s[1] ^= s[2];
	s[0] ^= s[3];
	s[2] ^= t;
	s[3] = fault_rotl(s[3], 45);
	return r;
}

/* probability -> threshold on a 53-bit draw; 1 -> always, 0 -> never */
static uint64_t
fault_threshold(double p)
{
	if (p <= 0)
		return 0;
	if (p >= 1)
		return 1ull << 53;
	return (uint64_t)ldexp(p, 53);
}

static int
fault_validate(const void *conf, char *msg, size_t msglen)
{
	const struct fault_conf *c = conf;

	for (unsigned d = 0; d < 2; d++)
		for (unsigned i = 0; i < FA__N; i++)
			if (c->pd[d][i] < 0 && c->pd[d][i] != -1) {
				snprintf(msg, msglen,
					 "%c_%s %g: a probability is 0 .. 1, or -1 to take \"%s\"",
					 'a' + d, fault_action_names[i], c->pd[d][i],
					 fault_action_names[i]);
				return -EINVAL;
			}
	return 0;
}

static int
fault_init(struct lcp_stage *st, const void *conf, void **ctx)
{
	const struct fault_conf *c = conf;
	struct fault_ctx *x = *ctx;
	uint64_t hz = rte_get_tsc_hz();
	char probs[2][160];

	x->st = st;
	x->pool = lcp_stage_pktmbuf_pool(st);
	if (x->pool == NULL) {
		lcp_log(st, LCP_LOG_ERR, "the engine has no packet mbuf pool for socket %d",
			lcp_stage_socket(st));
		return -ENOENT;
	}
	x->reorder_tsc = (uint64_t)c->reorder_us * hz / 1000000;
	x->delay_tsc = (uint64_t)c->delay_us * hz / 1000000;
	x->reorder_after = c->reorder_after;
	x->max_held = c->max_held;
	x->frames = c->frames;
	for (unsigned d = 0; d < 2; d++) {
		struct fault_dir *fd = &x->d[d];
		uint64_t sm = c->seed ^ (d == 0 ? 0x61ull : 0x62ull) << 56;
		int len = 0;

		for (unsigned i = 0; i < 4; i++)
			fd->s[i] = fault_splitmix(&sm);
		for (unsigned i = 0; i < FA__N; i++) {
			double p = c->pd[d][i] >= 0 ? c->pd[d][i] : c->p[i];

			fd->thr[i] = fault_threshold(p);
			len += snprintf(probs[d] + len, sizeof(probs[d]) - (size_t)len, "%s%s %g",
					i ? ", " : "", fault_action_names[i], p);
		}
		fd->next_tsc = UINT64_MAX;
		fd->next_count = UINT64_MAX;
		fd->out_port = d == 0 ? FAULT_A_OUT : FAULT_B_OUT;
		fd->ctr = d * FC__PER_DIR;
		lcp_obuf_init(&fd->ob, fd->out_port, FAULT_OBUF);
		fd->held = lcp_stage_zmalloc(st, "the max_held frame slots",
					     sizeof(*fd->held) * c->max_held);
		if (fd->held == NULL) {
			rte_free(x->d[0].held);
			return -ENOMEM;
		}
	}
	lcp_log(st, LCP_LOG_INFO,
		"seed %" PRIu64 ", frames %s; a: %s; b: %s; reorder after %" PRIu32
		" frames or %" PRIu32 " us, delay %" PRIu32 " us, max_held %" PRIu32,
		c->seed, fault_frames_choices[c->frames], probs[0], probs[1], c->reorder_after,
		c->reorder_us, c->delay_us, c->max_held);
	return 0;
}

/* ---- corruption ---- */

/* Offsets into the frame of the IPv4 header, the L4 header, and the end of the
 * datagram; false if the frame is not a well-formed IPv4 frame in one segment. */
static bool
fault_ipv4(const struct rte_mbuf *m, uint32_t *l3, uint32_t *l4, uint32_t *end, uint8_t *proto)
{
	const uint8_t *p = rte_pktmbuf_mtod(m, const uint8_t *);
	const struct rte_ether_hdr *eth = (const struct rte_ether_hdr *)p;
	const struct rte_ipv4_hdr *ip;
	uint32_t ihl, tot;

	if (m->nb_segs != 1 || m->data_len < sizeof(*eth) + sizeof(*ip) ||
	    eth->ether_type != rte_cpu_to_be_16(RTE_ETHER_TYPE_IPV4))
		return false;
	ip = (const struct rte_ipv4_hdr *)(eth + 1);
	ihl = (ip->version_ihl & 0xfu) * 4u;
	tot = rte_be_to_cpu_16(ip->total_length);
	if ((ip->version_ihl >> 4) != 4 || ihl < sizeof(*ip) || tot < ihl ||
	    sizeof(*eth) + tot > m->data_len)
		return false;
	*l3 = sizeof(*eth);
	*l4 = sizeof(*eth) + ihl;
	*end = sizeof(*eth) + tot;
	*proto = ip->next_proto_id;
	return true;
}

static bool
fault_matches(const struct fault_ctx *x, const struct rte_mbuf *m)
{
	uint32_t l3, l4, end;
	uint8_t proto;

	if (x->frames == FF_ALL)
		return true;
	if (!fault_ipv4(m, &l3, &l4, &end, &proto))
		return false;
	return x->frames == FF_IPV4 || proto == IPPROTO_TCP;
}

/* Checksums a tx offload would have filled in: computed now, flags cleared, so
 * that the corruption reaches the wire as damage and is not summed over. */
static void
fault_tx_csums(struct rte_mbuf *m, uint32_t l3, uint32_t l4, uint8_t proto)
{
	uint64_t ol = m->ol_flags;
	struct rte_ipv4_hdr *ip = rte_pktmbuf_mtod_offset(m, struct rte_ipv4_hdr *, l3);

	if (ol & RTE_MBUF_F_TX_IP_CKSUM) {
		ip->hdr_checksum = 0;
		ip->hdr_checksum = rte_ipv4_cksum(ip);
	}
	if ((ol & RTE_MBUF_F_TX_L4_MASK) == RTE_MBUF_F_TX_TCP_CKSUM && proto == IPPROTO_TCP) {
		struct rte_tcp_hdr *th = rte_pktmbuf_mtod_offset(m, struct rte_tcp_hdr *, l4);

		th->cksum = 0;
		th->cksum = rte_ipv4_udptcp_cksum(ip, th);
	} else if ((ol & RTE_MBUF_F_TX_L4_MASK) == RTE_MBUF_F_TX_UDP_CKSUM &&
		   proto == IPPROTO_UDP) {
		struct rte_udp_hdr *uh = rte_pktmbuf_mtod_offset(m, struct rte_udp_hdr *, l4);

		uh->dgram_cksum = 0;
		uh->dgram_cksum = rte_ipv4_udptcp_cksum(ip, uh);
	}
	m->ol_flags &= ~(RTE_MBUF_F_TX_IP_CKSUM | RTE_MBUF_F_TX_L4_MASK);
	/* the "checksum good" verdict of a receiving port no longer holds */
	m->ol_flags &= ~(RTE_MBUF_F_RX_IP_CKSUM_MASK | RTE_MBUF_F_RX_L4_CKSUM_MASK);
}

/* Flip one byte of m's IPv4 datagram; r's high half picks the position, its low
 * half the XOR value (1 .. 255).
 * Returns the frame to pass on (a private copy if m's data was shared, m itself
 * otherwise), or NULL with *m left alone when nothing could be corrupted. */
static struct rte_mbuf *
fault_corrupt(struct fault_ctx *x, struct rte_mbuf *m, uint64_t r)
{
	uint32_t l3, l4, end, n_ip, n_l4, skip_l4, n, k, off;
	uint8_t proto, *p;

	if (!fault_ipv4(m, &l3, &l4, &end, &proto))
		return NULL;
	/* eligible: IPv4 header bytes except 0 (version/IHL), 2 and 3 (total
	 * length); L4 bytes except a TCP header's data offset (byte 12) */
	n_ip = (l4 - l3) - 3;
	n_l4 = end - l4;
	skip_l4 = proto == IPPROTO_TCP && n_l4 > 12 ? 1 : 0;
	n = n_ip + n_l4 - skip_l4;
	if (n == 0)
		return NULL;
	if (!RTE_MBUF_DIRECT(m) || rte_mbuf_refcnt_read(m) != 1) {
		/* someone else sees these bytes (a clone): damage a copy only */
		struct rte_mbuf *c = rte_pktmbuf_copy(m, x->pool, 0, UINT32_MAX);

		if (c == NULL || c->nb_segs != 1) {
			rte_pktmbuf_free(c);
			return NULL;
		}
		rte_pktmbuf_free(m);
		m = c;
	}
	k = (uint32_t)(((r >> 32) * n) >> 32);
	if (k == 0)
		off = l3 + 1;
	else if (k < n_ip)
		off = l3 + 3 + k; /* k = 1 .. n_ip-1 -> header bytes 4 .. ihl-1 */
	else {
		off = l4 + (k - n_ip);
		if (skip_l4 && off >= l4 + 12)
			off++;
	}
	fault_tx_csums(m, l3, l4, proto);
	p = rte_pktmbuf_mtod(m, uint8_t *);
	p[off] ^= (uint8_t)(1 + (uint32_t)r % 255);
	return m;
}

/* ---- holding ---- */

/* recompute the earliest due time and count */
static void
fault_rescan(struct fault_dir *fd)
{
	fd->next_tsc = UINT64_MAX;
	fd->next_count = UINT64_MAX;
	for (uint32_t i = 0; i < fd->n_held; i++) {
		if (fd->held[i].due_tsc < fd->next_tsc)
			fd->next_tsc = fd->held[i].due_tsc;
		if (fd->held[i].due_count < fd->next_count)
			fd->next_count = fd->held[i].due_count;
	}
}

/* take held[i] out (the rest keep their order) and stage it for emission */
static void
fault_release(struct fault_ctx *x, struct fault_dir *fd, uint32_t i, unsigned ctr)
{
	struct rte_mbuf *m = fd->held[i].m;

	memmove(&fd->held[i], &fd->held[i + 1], (fd->n_held - i - 1) * sizeof(fd->held[0]));
	fd->n_held--;
	lcp_count(x->st, fd->ctr + ctr, 1);
	/* the entry is gone before the put (which may flush) */
	lcp_obuf_put(x->st, &fd->ob, m);
}

/* release what is due at `now` (by time) or by the direction's frame count;
 * all = everything (the engine is draining). Returns how many. */
static unsigned
fault_release_due(struct fault_ctx *x, struct fault_dir *fd, uint64_t now, bool all)
{
	unsigned n = 0;

	while (fd->n_held > 0 &&
	       (all || now >= fd->next_tsc || fd->seen >= fd->next_count)) {
		uint32_t i;
		unsigned why = FC_RELEASED_DRAIN;

		for (i = 0; i < fd->n_held; i++) {
			if (all)
				break;
			if (fd->seen >= fd->held[i].due_count) {
				why = FC_RELEASED_COUNT;
				break;
			}
			if (now >= fd->held[i].due_tsc) {
				why = FC_RELEASED_TIME;
				break;
			}
		}
		if (i == fd->n_held) { /* stale minimum */
			fault_rescan(fd);
			continue;
		}
		fault_release(x, fd, i, why);
		fault_rescan(fd);
		n++;
	}
	return n;
}

static void
fault_hold(struct fault_ctx *x, struct fault_dir *fd, struct rte_mbuf *m, uint64_t due_tsc,
	   uint64_t due_count)
{
	struct fault_held *h;

	while (fd->n_held >= x->max_held) {
		fault_release(x, fd, 0, FC_RELEASED_EARLY);
		fault_rescan(fd);
	}
	h = &fd->held[fd->n_held++];
	h->m = m;
	h->due_tsc = due_tsc;
	h->due_count = due_count;
	if (due_tsc < fd->next_tsc)
		fd->next_tsc = due_tsc;
	if (due_count < fd->next_count)
		fd->next_count = due_count;
	if (fd->n_held > fd->peak) {
		lcp_count(x->st, fd->ctr + FC_HELD_PEAK, fd->n_held - fd->peak);
		fd->peak = fd->n_held;
	}
}

/* ---- the fast path ---- */

/* One frame of direction fd: draw its FAULT_DRAWS numbers, apply the actions. */
static inline void
fault_frame(struct fault_ctx *x, struct fault_dir *fd, struct rte_mbuf *m, uint64_t now)
{
	uint64_t r[FAULT_DRAWS];
	bool reorder, delay;

	fd->seen++;
	if (!fault_matches(x, m)) {
		lcp_count(x->st, fd->ctr + FC_UNMATCHED, 1);
		lcp_obuf_put(x->st, &fd->ob, m);
		return;
	}
	/* always all of them: the i-th frame's fate depends on the seed and i only */
	for (unsigned i = 0; i < FAULT_DRAWS; i++)
		r[i] = fault_next(fd->s);
	if ((r[FA_DROP] >> 11) < fd->thr[FA_DROP]) {
		lcp_count(x->st, fd->ctr + FC_DROPPED, 1);
		rte_pktmbuf_free(m);
		return;
	}
	if ((r[FA_DUPLICATE] >> 11) < fd->thr[FA_DUPLICATE]) {
		struct rte_mbuf *c = rte_pktmbuf_copy(m, x->pool, 0, UINT32_MAX);

		if (c != NULL) {
			lcp_count(x->st, fd->ctr + FC_DUPLICATED, 1);
			lcp_obuf_put(x->st, &fd->ob, c);
		} else {
			lcp_count(x->st, fd->ctr + FC_DUP_NOMBUF, 1);
		}
	}
	if ((r[FA_CORRUPT] >> 11) < fd->thr[FA_CORRUPT]) {
		/* r[5]: the position (high half) and the XOR value (low half) */
		struct rte_mbuf *c = fault_corrupt(x, m, r[5]);

		if (c != NULL) {
			m = c;
			lcp_count(x->st, fd->ctr + FC_CORRUPTED, 1);
		} else {
			lcp_count(x->st, fd->ctr + FC_CORRUPT_SKIPPED, 1);
		}
	}
	reorder = (r[FA_REORDER] >> 11) < fd->thr[FA_REORDER];
	delay = (r[FA_DELAY] >> 11) < fd->thr[FA_DELAY];
	if (reorder) {
		lcp_count(x->st, fd->ctr + FC_REORDERED, 1);
		fault_hold(x, fd, m, now + x->reorder_tsc, fd->seen + x->reorder_after);
	} else if (delay) {
		lcp_count(x->st, fd->ctr + FC_DELAYED, 1);
		fault_hold(x, fd, m, now + x->delay_tsc, UINT64_MAX);
	} else {
		lcp_obuf_put(x->st, &fd->ob, m);
	}
}

static void
fault_process(struct lcp_stage *st, void *ctx, unsigned port, void **objs, unsigned n)
{
	struct fault_ctx *x = ctx;
	struct fault_dir *fd = &x->d[port == FAULT_A_IN ? 0 : 1];
	uint64_t now = rte_rdtsc();

	(void)st;
	for (unsigned i = 0; i < n; i++) {
		fault_frame(x, fd, objs[i], now);
		if (fd->n_held > 0 && (fd->seen >= fd->next_count || now >= fd->next_tsc))
			fault_release_due(x, fd, now, false);
	}
	lcp_obuf_flush(x->st, &fd->ob);
}

static unsigned
fault_poll(struct lcp_stage *st, void *ctx)
{
	struct fault_ctx *x = ctx;
	bool all = lcp_stage_stopping(st);
	unsigned n = 0;
	uint64_t now;

	if (x->d[0].n_held == 0 && x->d[1].n_held == 0)
		return 0;
	now = rte_rdtsc();
	for (unsigned d = 0; d < 2; d++) {
		struct fault_dir *fd = &x->d[d];

		if (fd->n_held > 0 && (all || now >= fd->next_tsc)) {
			n += fault_release_due(x, fd, now, all);
			lcp_obuf_flush(st, &fd->ob);
		}
	}
	return n;
}

/* The pipeline has drained (poll released everything then): free what arrived
 * and was held since, counted. Emitting now could reach a stage already stopped. */
static void
fault_stop(struct lcp_stage *st, void *ctx)
{
	struct fault_ctx *x = ctx;

	for (unsigned d = 0; d < 2; d++) {
		struct fault_dir *fd = &x->d[d];

		lcp_obuf_flush(st, &fd->ob);
		if (fd->n_held > 0) {
			lcp_count(st, fd->ctr + FC_HELD_AT_STOP, fd->n_held);
			for (uint32_t i = 0; i < fd->n_held; i++)
				rte_pktmbuf_free(fd->held[i].m);
			fd->n_held = 0;
		}
	}
}

static void
fault_fini(struct lcp_stage *st, void *ctx)
{
	struct fault_ctx *x = ctx;

	(void)st;
	for (unsigned d = 0; d < 2; d++) {
		for (uint32_t i = 0; i < x->d[d].n_held; i++) /* stop() did not run */
			rte_pktmbuf_free(x->d[d].held[i].m);
		rte_free(x->d[d].held);
	}
}

static const struct lcp_stage_ops fault_ops = {
	.ports = fault_ports,
	.counters = fault_counters,
	.validate = fault_validate,
	.init = fault_init,
	.poll = fault_poll,
	.process = fault_process,
	.stop = fault_stop,
	.fini = fault_fini,
	.ctx_size = sizeof(struct fault_ctx),
};

LCP_PLUGIN_EXPORT const struct lcp_plugin lcp_plugin_descriptor = {
	LCP_PLUGIN_HEADER(LCP_KIND_STAGE, "fault"),
	.version = "1.0.0",
	.summary = "seeded fault injection on a frame path, both directions: drop, duplicate, corrupt, reorder, delay",
	.options = fault_opts,
	.conf_size = sizeof(struct fault_conf),
	.ops = &fault_ops,
};
