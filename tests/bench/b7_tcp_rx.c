/* SPDX-License-Identifier: BSD-3-Clause
 * b7_tcp_rx.c — B7: libstk's TCP receive path (stack/, no DPDK, no EAL) in
 * cycles per segment, against the kernel's TCP receiving a stream over loopback
 * and over a veth pair in the same run (doc/benchmarks.md, BENCHMARKS.md).
 *
 * The stack runs with this program's ops: frames come from a preallocated LIFO
 * pool of 2048-byte buffers (tx_alloc, tx and buf_free take and return them),
 * clock_ns is the TSC, random is xorshift64*, alloc/free are calloc/free (the
 * tcp stage uses a mempool for small nodes instead). The application frees every
 * STK_EV_DATA buffer at once after touching its first byte.
 *
 * Cases (one stack per case; all interleaved in every repetition):
 *   harness.rx   per segment: take a pool buffer, memcpy a 1514-byte template
 *                frame into it, patch seq + TCP checksum, give it back (no
 *                stack): what every rx case below includes besides the stack
 *   inorder.sw   32 in-order data segments per stk_input_burst (+ stk_poll),
 *                1448 payload bytes + a 12-byte timestamp option each, checksums
 *                verified in software by the stack
 *   inorder.off  the same with STK_RX_IP_CSUM_OK | STK_RX_L4_CSUM_OK (checksums
 *                verified by the NIC) and tx_csum_offload (the stack's ACKs too)
 *   inorder.off.nocoal  inorder.off with rx_coalesce off: every segment takes
 *                every header check (the others coalesce 31 of each 32)
 *   ooo.sw/.off  every pair swapped (2k+1 before 2k): half the segments go
 *                through the out-of-order queue
 *   harness.ack  per ACK: memcpy a 66-byte ACK template, patch ack + TSecr +
 *                checksum, give it back
 *   send.sw/.off the stack sends: the app queues 1448-byte buffers
 *                (stk_tcp_send, which transmits at once), the peer ACKs every
 *                2 segments (16 ACKs per stk_input_burst); cycles per ACK
 *                processed, i.e. per 2 segments built, sent and acknowledged
 * Kernel anchor, per repetition, in forked processes (receiver on --rx-cpu,
 * sender on --tx-cpu): a TCP stream of --lo-mb MB over 127.0.0.1 in 64 KiB
 * send()/recv(), then --veth-mb MB over a veth pair between two network
 * namespaces (set up by b7.sh with TSO/GSO/GRO off: 1448-byte segments). CPU
 * time of each process from getrusage(RUSAGE_SELF) (utime + stime) around the
 * measured part, converted to cycles per MB of payload with the TSC rate; the
 * CPU time of ksoftirqd on both CPUs over the same window is reported too.
 *
 * Usage: b7_tcp_rx [--reps N] [--ms M] [--quick] [--callgrind SEGS]
 *                  [--rx-cpu C] [--tx-cpu C] [--lo-mb N] [--veth-mb N]
 *                  [--veth-rx-ns NAME --veth-tx-ns NAME --veth-ip A.B.C.D]
 * Pin it (taskset -c C); b7.sh does. MB = 10^6 bytes of TCP payload.
 */
#include <arpa/inet.h>
#include <ctype.h>
#include <dirent.h>
#include <endian.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <math.h>
#include <netinet/in.h>
#include <sched.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#if defined(__x86_64__) || defined(__i386__)
#include <x86intrin.h>
#define B7_HAVE_TSC 1
#endif

#if defined(__has_include)
#if __has_include(<valgrind/callgrind.h>)
#include <valgrind/callgrind.h>
#define B7_HAVE_CALLGRIND 1
#endif
#endif
#ifndef B7_HAVE_CALLGRIND
#define CALLGRIND_ZERO_STATS
#define CALLGRIND_DUMP_STATS_AT(s) ((void)(s))
#endif

#include <stk/stk.h>
#include <stk/tcp.h>
#include <stk/prot/eth.h>
#include <stk/prot/ip4.h>
#include <stk/prot/tcp.h>

#include "bench_opt.h"
#include "bench_stats.h"

/* ---- constants ---- */
#define B7_MSS 1448u		      /* payload per segment (1460 - 12 bytes of TS) */
#define B7_HDRS (14u + 20u + 32u)     /* Ethernet + IPv4 + TCP with TS option */
#define B7_FRAME (B7_HDRS + B7_MSS)   /* 1514 */
#define B7_ACKFRAME B7_HDRS	      /* 66: a pure ACK with TS */
#define B7_BURST 32u		      /* frames per stk_input_burst */
#define B7_BUFSZ 2048u		      /* pool buffer data size */
#define B7_POOL 1024u		      /* pool buffers */
#define B7_TX_INFLIGHT (64u * B7_MSS) /* send path: queued + unacked bytes at most */
#define B7_MAX_REPS BENCH_MAX_REPS
#define B7_DRIFT_MAX 0.10 /* noise gate, as bench_util.h */
#define B7_OFFCPU_MAX 0.05
#define B7_RERUNS_MAX 5
#define B7_TARGET 0.25 /* our rx CPU per MB <= 1/4 of the kernel's */
#define B7_PORT 5001
#define B7_MB 1e6

/* frame offsets */
#define O_IP 14u
#define O_TCP 34u
#define O_SEQ (O_TCP + 4u)
#define O_ACK (O_TCP + 8u)
#define O_TCSUM (O_TCP + 16u)
#define O_TSVAL (O_TCP + 24u)
#define O_TSECR (O_TCP + 28u)
#define O_PAYLOAD (O_TCP + 32u)

static const uint8_t our_mac[6] = {0x02, 0x00, 0x00, 0x00, 0x00, 0x02};
static const uint8_t peer_mac[6] = {0x02, 0x00, 0x00, 0x00, 0x00, 0x01};
#define OUR_IP 0x0a000002u  /* 10.0.0.2, host order */
#define PEER_IP 0x0a000001u /* 10.0.0.1 */
#define PEER_TSVAL 0x1000u

/* ---- time ---- */
static inline uint64_t
tsc(void)
{
#ifdef B7_HAVE_TSC
	return __rdtsc();
#else
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC_RAW, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
#endif
}

/* serialised reads around timed regions */
static inline uint64_t
tsc_precise(void)
{
#ifdef B7_HAVE_TSC
	_mm_lfence();
	uint64_t t = __rdtsc();
	_mm_lfence();
	return t;
#else
	return tsc();
#endif
}

static uint64_t
ns_of(clockid_t id)
{
	struct timespec ts;

	clock_gettime(id, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* ---- the buffer pool ---- */
struct stk_buf {
	struct stk_buf *next;
	uint8_t pad[56];
	uint8_t data[B7_BUFSZ];
} __attribute__((aligned(64)));

struct b7_conn;

static struct {
	/* pool */
	struct stk_buf *bufs, *free_head;
	unsigned nfree;
	/* clock */
	double hz;
	uint64_t tsc0, ns_mult; /* ns = (tsc - tsc0) * ns_mult >> 32 */
	uint64_t rng;
	/* counters of the ops */
	uint64_t tx_frames, tx_bytes, data_events, other_events, sink;
	/* setup: capture what the stack transmits */
	bool capture;
	uint8_t cap[256];
	uint32_t cap_len;
	struct b7_conn *accept_into;
	/* delivery check (warm-up only) */
	bool verify;
	uint64_t verify_bad;
	bool verbose;
} g;

static void
die(const char *what)
{
	fprintf(stderr, "b7: %s\n", what);
	exit(1);
}

static inline struct stk_buf *
pool_get(void)
{
	struct stk_buf *b = g.free_head;

	if (__builtin_expect(b == NULL, 0))
		die("buffer pool exhausted");
	g.free_head = b->next;
	g.nfree--;
	return b;
}

static inline void
pool_put(struct stk_buf *b)
{
	b->next = g.free_head;
	g.free_head = b;
	g.nfree++;
}

static void
pool_init(void)
{
	g.bufs = aligned_alloc(64, sizeof(struct stk_buf) * B7_POOL);
	if (g.bufs == NULL)
		die("no memory for the pool");
	memset(g.bufs, 0, sizeof(struct stk_buf) * B7_POOL);
	for (unsigned i = B7_POOL; i-- > 0;)
		pool_put(&g.bufs[i]);
}

/* ---- checksums ---- */
static uint64_t
sum16(const void *p, size_t len, uint64_t s)
{
	const uint8_t *q = p;

	for (; len >= 2; q += 2, len -= 2) {
		uint16_t w;

		memcpy(&w, q, 2);
		s += w;
	}
	if (len)
		s += *q;
	return s;
}

static inline uint16_t
fold(uint64_t s)
{
	while (s >> 16)
		s = (s & 0xffff) + (s >> 16);
	return (uint16_t)~s;
}

static inline uint64_t
sum32(uint32_t be)
{
	return (be & 0xffff) + (be >> 16);
}

/* ---- frames from the peer ---- */
struct b7_conn {
	struct stk *st;
	struct stk_tcb *c;
	uint16_t sport;
	uint32_t peer_isn, our_isn, stk_ts0;
	uint64_t stk_ts0_ns; /* our clock when the stack stamped stk_ts0 */
	uint32_t next_seq;   /* rx: seq of the next data segment */
	uint32_t acked;	     /* tx: highest ACK sent by the peer */
	uint32_t queued_hi;  /* tx: seq after the last byte the app queued */
	uint64_t injected;   /* rx: payload bytes injected */
	uint64_t delivered;  /* payload bytes in DATA events */
	uint32_t expect;     /* verify: seq of the next delivered byte */
	uint64_t send_refused;
	/* templates: a data segment (seq 0) and a pure ACK (ack 0, TSecr 0) */
	uint8_t dtmpl[B7_FRAME] __attribute__((aligned(64)));
	uint8_t atmpl[B7_ACKFRAME] __attribute__((aligned(64)));
	uint64_t dsum, asum; /* TCP sums of the templates, pseudo-header included, csum 0 */
};

static inline void
put32(uint8_t *p, uint32_t v)
{
	v = htobe32(v);
	memcpy(p, &v, 4);
}

static inline uint32_t
get32(const uint8_t *p)
{
	uint32_t v;

	memcpy(&v, p, 4);
	return be32toh(v);
}

static inline uint16_t
get16(const uint8_t *p)
{
	uint16_t v;

	memcpy(&v, p, 2);
	return be16toh(v);
}

/* Build a frame from the peer (10.0.0.1:sport) to us (10.0.0.2:5001) with
 * correct checksums; returns its length. *tsum (if not NULL) gets the TCP sum
 * with the checksum field 0, pseudo-header included, before folding. */
static uint32_t
build(uint8_t *f, uint16_t sport, uint32_t seq, uint32_t ack, uint8_t flags, uint16_t win,
      const uint8_t *opts, unsigned optlen, uint32_t plen, uint64_t *tsum)
{
	struct stk_eth_hdr *eh = (struct stk_eth_hdr *)f;
	struct stk_ip4_hdr *ip = (struct stk_ip4_hdr *)(f + O_IP);
	struct stk_tcp_hdr *th = (struct stk_tcp_hdr *)(f + O_TCP);
	uint32_t tcplen = STK_TCP_HLEN + optlen + plen;
	uint16_t ipsum, tcsum;
	uint64_t s;

	memcpy(eh->dst, our_mac, 6);
	memcpy(eh->src, peer_mac, 6);
	eh->type = htobe16(STK_ETH_P_IP);
	ip->ver_ihl = 0x45;
	ip->tos = 0;
	ip->tot_len = htobe16((uint16_t)(STK_IP4_HLEN + tcplen));
	ip->id = htobe16(0x4242);
	ip->frag = htobe16(STK_IP4_DF);
	ip->ttl = 64;
	ip->proto = STK_IPPROTO_TCP;
	ip->csum = 0;
	ip->src = htobe32(PEER_IP);
	ip->dst = htobe32(OUR_IP);
	ipsum = fold(sum16(ip, STK_IP4_HLEN, 0));
	memcpy(&ip->csum, &ipsum, 2);
	th->sport = htobe16(sport);
	th->dport = htobe16(B7_PORT);
	th->seq = htobe32(seq);
	th->ack = htobe32(ack);
	th->off = (uint8_t)(((STK_TCP_HLEN + optlen) / 4) << 4);
	th->flags = flags;
	th->win = htobe16(win);
	th->csum = 0;
	th->urp = 0;
	memcpy(f + O_TCP + STK_TCP_HLEN, opts, optlen);
	for (uint32_t i = 0; i < plen; i++)
		f[O_TCP + STK_TCP_HLEN + optlen + i] = (uint8_t)('a' + i % 26);
	/* pseudo-header: src, dst, proto, TCP length */
	s = sum16(&ip->src, 8, 0) + htobe16(STK_IPPROTO_TCP) + htobe16((uint16_t)tcplen);
	s = sum16(th, tcplen, s);
	if (tsum != NULL)
		*tsum = s;
	tcsum = fold(s);
	memcpy(&th->csum, &tcsum, 2);
	return O_TCP + tcplen;
}

/* NOP NOP TS(tsval, tsecr): 12 bytes, as Linux sends on established connections */
static void
ts_opt(uint8_t *o, uint32_t tsval, uint32_t tsecr)
{
	o[0] = 1;
	o[1] = 1;
	o[2] = STK_TCPOPT_TS;
	o[3] = 10;
	put32(o + 4, tsval);
	put32(o + 8, tsecr);
}

/* per segment: seq and the TCP checksum (incremental from the template's sum) */
static inline void
patch_seq(uint8_t *f, uint64_t tsum, uint32_t seq)
{
	uint32_t be = htobe32(seq);
	uint16_t c = fold(tsum + sum32(be));

	memcpy(f + O_SEQ, &be, 4);
	memcpy(f + O_TCSUM, &c, 2);
}

static inline void
patch_ack(uint8_t *f, uint64_t tsum, uint32_t ack, uint32_t tsecr)
{
	uint32_t a = htobe32(ack), t = htobe32(tsecr);
	uint16_t c = fold(tsum + sum32(a) + sum32(t));

	memcpy(f + O_ACK, &a, 4);
	memcpy(f + O_TSECR, &t, 4);
	memcpy(f + O_TCSUM, &c, 2);
}

/* the stack's TS clock as the peer would echo it */
static inline uint32_t
stk_ts_now(const struct b7_conn *k, uint64_t now_ns)
{
	return k->stk_ts0 + (uint32_t)((now_ns - k->stk_ts0_ns) / 1000000u);
}

/* ---- ops ---- */
static inline uint64_t
now_ns(void)
{
	return (uint64_t)(((unsigned __int128)(tsc() - g.tsc0) * g.ns_mult) >> 32);
}

static int
op_tx(void *ctx, struct stk_buf *b, uint8_t *data, uint32_t len, uint32_t flags)
{
	(void)ctx;
	(void)flags;
	g.tx_frames++;
	g.tx_bytes += len;
	if (__builtin_expect(g.capture, 0)) {
		g.cap_len = len < sizeof(g.cap) ? len : (uint32_t)sizeof(g.cap);
		memcpy(g.cap, data, g.cap_len);
	}
	pool_put(b);
	return 0;
}

static struct stk_buf *
op_tx_alloc(void *ctx, uint32_t len, uint8_t **data)
{
	struct stk_buf *b;

	(void)ctx;
	if (len > B7_BUFSZ || g.free_head == NULL)
		return NULL;
	b = pool_get();
	*data = b->data;
	return b;
}

static void
op_buf_free(void *ctx, struct stk_buf *b)
{
	(void)ctx;
	pool_put(b);
}

static uint64_t
op_clock(void *ctx)
{
	(void)ctx;
	return now_ns();
}

static uint64_t
op_random(void *ctx)
{
	uint64_t x = g.rng;

	(void)ctx;
	x ^= x >> 12;
	x ^= x << 25;
	x ^= x >> 27;
	g.rng = x;
	return x * 0x2545f4914f6cdd1dull;
}

static void *
op_alloc(void *ctx, size_t size)
{
	(void)ctx;
	return calloc(1, size);
}

static void
op_free(void *ctx, void *p)
{
	(void)ctx;
	free(p);
}

static void
op_log(void *ctx, int level, const char *msg)
{
	(void)ctx;
	if (g.verbose || level <= STK_LOG_WARNING)
		fprintf(stderr, "b7: stk log %d: %s\n", level, msg);
}

static void
op_event(void *ctx, struct stk_tcb *c, uint64_t user, enum stk_ev ev, int reason, struct stk_buf *b,
	 uint8_t *data, uint32_t len)
{
	struct b7_conn *k = (struct b7_conn *)(uintptr_t)user;

	(void)ctx;
	if (__builtin_expect(ev == STK_EV_DATA, 1)) {
		k->delivered += len;
		g.data_events++;
		g.sink += data[0];
		if (__builtin_expect(g.verify, 0)) {
			/* the frame's seq + the offset of data in its payload */
			uint32_t pos =
				get32(b->data + O_SEQ) + (uint32_t)(data - (b->data + O_PAYLOAD));

			if (pos != k->expect ||
			    data[0] != (uint8_t)('a' + (data - (b->data + O_PAYLOAD)) % 26))
				g.verify_bad++;
			k->expect = pos + len;
		}
		pool_put(b);
		return;
	}
	if (ev == STK_EV_ACCEPTED && g.accept_into != NULL) {
		g.accept_into->c = c;
		stk_tcp_set_user(c, (uint64_t)(uintptr_t)g.accept_into);
		g.accept_into = NULL;
		return;
	}
	g.other_events++;
	fprintf(stderr, "b7: unexpected event %d (reason %d) on a connection\n", (int)ev, reason);
}

static const struct stk_ops b7_ops = {
	.tx = op_tx,
	.tx_alloc = op_tx_alloc,
	.buf_free = op_buf_free,
	.clock_ns = op_clock,
	.random = op_random,
	.alloc = op_alloc,
	.free = op_free,
	.log = op_log,
	.event = op_event,
};

/* ---- stacks and connections ---- */
static struct stk *
stack_new(bool offload, bool coalesce)
{
	struct stk_config cfg;
	char err[128];
	struct stk *st;

	stk_config_init(&cfg);
	memcpy(cfg.mac, our_mac, 6);
	cfg.ip = htobe32(OUR_IP);
	cfg.prefix = 24;
	cfg.n_static = 1;
	cfg.neigh[0].ip = htobe32(PEER_IP);
	memcpy(cfg.neigh[0].mac, peer_mac, 6);
	cfg.max_conns = 16;
	cfg.tx_csum_offload = offload;
	cfg.rx_coalesce = coalesce;
	st = stk_create(&cfg, &b7_ops, err, sizeof(err));
	if (st == NULL) {
		fprintf(stderr, "b7: stk_create: %s\n", err);
		exit(1);
	}
	stk_start(st);
	if (stk_tcp_listen(st, B7_PORT, 8, 0) != 0)
		die("stk_tcp_listen failed");
	return st;
}

/* a pool buffer holding a copy of frame, as r (with rx flags); its data, to patch */
static inline uint8_t *
rx_copy(struct stk_rx *r, const uint8_t *frame, uint32_t len, uint32_t flags)
{
	struct stk_buf *b = pool_get();

	memcpy(b->data, frame, len);
	r->b = b;
	r->data = b->data;
	r->len = len;
	r->flags = flags;
	return b->data;
}

static void
inject1(struct stk *st, const uint8_t *frame, uint32_t len)
{
	struct stk_rx rx;

	rx_copy(&rx, frame, len, 0);
	stk_input_burst(st, &rx, 1);
}

/* SYN (MSS 1460, SACK-permitted, TS, WS 7: Linux's order) -> our SYN-ACK -> ACK */
static void
conn_open(struct stk *st, struct b7_conn *k, uint16_t sport)
{
	uint8_t f[128], o[40];
	unsigned n = 0, off, i;
	uint32_t len;
	bool ts = false;

	memset(k, 0, sizeof(*k));
	k->st = st;
	k->sport = sport;
	k->peer_isn = 0x9e370000u + sport * 7919u;
	o[n++] = STK_TCPOPT_MSS;
	o[n++] = 4;
	o[n++] = 1460 >> 8;
	o[n++] = 1460 & 0xff;
	o[n++] = STK_TCPOPT_SACK_PERM;
	o[n++] = 2;
	o[n++] = STK_TCPOPT_TS;
	o[n++] = 10;
	put32(o + n, PEER_TSVAL);
	put32(o + n + 4, 0);
	n += 8;
	o[n++] = 1;
	o[n++] = STK_TCPOPT_WSCALE;
	o[n++] = 3;
	o[n++] = 7;
	len = build(f, sport, k->peer_isn, 0, STK_TCP_SYN, 64240, o, n, 0, NULL);
	g.capture = true;
	g.cap_len = 0;
	inject1(st, f, len);
	g.capture = false;
	/* our SYN-ACK */
	if (g.cap_len < O_TCP + 20 || g.cap[O_TCP + 13] != (STK_TCP_SYN | STK_TCP_ACK) ||
	    get16(g.cap + O_TCP + 2) != sport || get32(g.cap + O_ACK) != k->peer_isn + 1)
		die("no SYN-ACK for the injected SYN");
	k->our_isn = get32(g.cap + O_SEQ);
	k->stk_ts0_ns = now_ns();
	off = (g.cap[O_TCP + 12] >> 4) * 4u;
	for (i = O_TCP + 20; i < O_TCP + off && i < g.cap_len;) {
		if (g.cap[i] == 0)
			break;
		if (g.cap[i] == 1) {
			i++;
			continue;
		}
		if (g.cap[i] == STK_TCPOPT_TS) {
			k->stk_ts0 = get32(g.cap + i + 2);
			ts = true;
		}
		if (g.cap[i + 1] < 2)
			break;
		i += g.cap[i + 1];
	}
	if (!ts)
		die("the SYN-ACK has no timestamp option");
	/* ACK -> ESTABLISHED, STK_EV_ACCEPTED */
	ts_opt(o, PEER_TSVAL, k->stk_ts0);
	len = build(f, sport, k->peer_isn + 1, k->our_isn + 1, STK_TCP_ACK, 0xffff, o, 12, 0, NULL);
	g.accept_into = k;
	inject1(st, f, len);
	if (k->c == NULL || stk_tcp_state(k->c) != STK_TCP_ESTABLISHED)
		die("the connection was not accepted");
	k->next_seq = k->peer_isn + 1;
	k->expect = k->next_seq;
	k->acked = k->our_isn + 1;
	k->queued_hi = k->our_isn + 1;
	/* templates: data segment with seq 0; ACK with ack 0 and TSecr 0 */
	ts_opt(o, PEER_TSVAL, k->stk_ts0);
	build(k->dtmpl, sport, 0, k->our_isn + 1, STK_TCP_ACK, 0xffff, o, 12, B7_MSS, &k->dsum);
	ts_opt(o, PEER_TSVAL, 0);
	build(k->atmpl, sport, k->peer_isn + 1, 0, STK_TCP_ACK, 0xffff, o, 12, 0, &k->asum);
}

/* ---- cases ---- */
enum b7_kind { K_HARNESS_RX, K_RX, K_HARNESS_ACK, K_TX };

struct b7_case {
	const char *name, *label, *unit;
	enum b7_kind kind;
	bool ooo, off, nocoal;
	struct stk *st;
	struct b7_conn *k; /* the connection, or the template source for a harness */
	uint32_t hseq;	   /* harness: its own sequence / ack counter */
	uint64_t iters;	   /* bursts per repetition */
	/* per repetition, per unit: on-CPU cycles (thread CPU time x TSC rate: the
	 * kernel anchor's accounting), TSC cycles of wall time, off-CPU fraction */
	double v[B7_MAX_REPS], vw[B7_MAX_REPS], offcpu[B7_MAX_REPS];
	unsigned rejected, noisy;
	uint64_t units_total;
};

/* rx[0..B7_BURST): the data template with seq from seq on, every pair swapped
 * for an ooo case; the harness and the stack's cases build them the same way */
static inline void
data_burst(const struct b7_case *c, struct stk_rx *rx, uint32_t seq, uint32_t flags)
{
	const struct b7_conn *k = c->k;

	for (unsigned j = 0; j < B7_BURST; j++) {
		unsigned pos = c->ooo ? (j ^ 1u) : j;

		patch_seq(rx_copy(&rx[j], k->dtmpl, B7_FRAME, flags), k->dsum, seq + pos * B7_MSS);
	}
}

/* r: the ACK template acknowledging ack, echoing tsecr */
static inline void
ack_frame(const struct b7_conn *k, struct stk_rx *r, uint32_t ack, uint32_t tsecr, uint32_t flags)
{
	patch_ack(rx_copy(r, k->atmpl, B7_ACKFRAME, flags), k->asum, ack, tsecr);
}

/* the harness: the frames built, as if handed on, straight back to the pool */
static inline void
harness_put(struct stk_rx *rx, unsigned n)
{
	__asm__ volatile("" : : "r"(rx) : "memory");
	for (unsigned j = 0; j < n; j++)
		pool_put(rx[j].b);
}

/* the rx flags of a case's frames: checksums verified by the NIC (.off) or not */
static inline uint32_t
rx_flags(const struct b7_case *c)
{
	return c->off ? (STK_RX_IP_CSUM_OK | STK_RX_L4_CSUM_OK) : 0;
}

static uint64_t
run_harness_rx(struct b7_case *c, uint64_t iters, uint64_t *units)
{
	struct stk_rx rx[B7_BURST];
	uint64_t t0 = tsc_precise(), t1;

	for (uint64_t i = 0; i < iters; i++) {
		data_burst(c, rx, c->hseq, 0);
		c->hseq += B7_BURST * B7_MSS;
		harness_put(rx, B7_BURST);
	}
	t1 = tsc_precise();
	*units = iters * B7_BURST;
	return t1 - t0;
}

static uint64_t
run_rx(struct b7_case *c, uint64_t iters, uint64_t *units)
{
	struct b7_conn *k = c->k;
	struct stk_rx rx[B7_BURST];
	uint32_t fl = rx_flags(c);
	uint64_t t0 = tsc_precise(), t1;

	for (uint64_t i = 0; i < iters; i++) {
		data_burst(c, rx, k->next_seq, fl);
		k->next_seq += B7_BURST * B7_MSS;
		stk_input_burst(c->st, rx, B7_BURST);
		stk_poll(c->st);
	}
	t1 = tsc_precise();
	k->injected += iters * B7_BURST * B7_MSS;
	*units = iters * B7_BURST;
	return t1 - t0;
}

static uint64_t
run_harness_ack(struct b7_case *c, uint64_t iters, uint64_t *units)
{
	const struct b7_conn *k = c->k;
	struct stk_rx rx[B7_BURST];
	const unsigned n = B7_BURST / 2;
	uint64_t t0 = tsc_precise(), t1;

	for (uint64_t i = 0; i < iters; i++) {
		uint32_t tsecr = stk_ts_now(k, now_ns());

		for (unsigned j = 0; j < n; j++) {
			c->hseq += 2 * B7_MSS;
			ack_frame(k, &rx[j], c->hseq, tsecr, 0);
		}
		harness_put(rx, n);
	}
	t1 = tsc_precise();
	*units = iters * n;
	return t1 - t0;
}

static uint64_t
run_tx(struct b7_case *c, uint64_t iters, uint64_t *units)
{
	struct b7_conn *k = c->k;
	struct stk_rx rx[B7_BURST];
	uint32_t fl = rx_flags(c);
	const struct stk_tcp_stats *ts = stk_tcp_stats(k->c);
	uint64_t acks = 0, t0 = tsc_precise(), t1;

	for (uint64_t i = 0; i < iters; i++) {
		uint32_t hi, tsecr;
		unsigned n = 0;

		/* the application: up to 32 buffers, at most B7_TX_INFLIGHT unacked */
		for (unsigned j = 0; j < B7_BURST && k->queued_hi - k->acked < B7_TX_INFLIGHT;
		     j++) {
			struct stk_buf *b = pool_get();

			if (stk_tcp_send(c->st, k->c, b, b->data, B7_MSS) < 0) {
				pool_put(b);
				k->send_refused++;
				break;
			}
			k->queued_hi += B7_MSS;
		}
		/* the peer: one ACK per 2 segments sent */
		hi = k->our_isn + 1 + (uint32_t)ts->bytes_out;
		tsecr = stk_ts_now(k, now_ns());
		while (n < B7_BURST && (int32_t)(hi - k->acked) >= (int32_t)(2 * B7_MSS)) {
			k->acked += 2 * B7_MSS;
			ack_frame(k, &rx[n++], k->acked, tsecr, fl);
		}
		stk_input_burst(c->st, rx, n);
		stk_poll(c->st);
		acks += n;
	}
	t1 = tsc_precise();
	*units = acks;
	return t1 - t0;
}

static uint64_t
run_case(struct b7_case *c, uint64_t iters, uint64_t *units)
{
	switch (c->kind) {
	case K_HARNESS_RX:
		return run_harness_rx(c, iters, units);
	case K_RX:
		return run_rx(c, iters, units);
	case K_HARNESS_ACK:
		return run_harness_ack(c, iters, units);
	case K_TX:
		return run_tx(c, iters, units);
	}
	return 0;
}

/* ---- statistics (bench_stats.c) and the noise gate (as tests/bench/bench_util.c,
 * without DPDK) ---- */

/* NaN entries (failed anchor runs) are left out; none left: all NaN */
static void
summarize(const double *v, unsigned n, struct bench_summary *s)
{
	double t[B7_MAX_REPS];
	unsigned m = 0;

	for (unsigned i = 0; i < n && i < B7_MAX_REPS; i++)
		if (!isnan(v[i]))
			t[m++] = v[i];
	if (m == 0) {
		memset(s, 0, sizeof(*s));
		s->min = s->q1 = s->med = s->q3 = s->max = NAN;
		return;
	}
	bench_summarize(t, m, s);
}

static double
median(const double *v, unsigned n)
{
	struct bench_summary s;

	summarize(v, n, &s);
	return s.med;
}

static volatile uint64_t spin_sink;

static uint64_t
spin(uint64_t iters)
{
	uint64_t x = 1, t0 = tsc_precise();

	for (uint64_t i = 0; i < iters; i++) {
		x = x * 6364136223846793005ull + 1442695040888963407ull;
		__asm__ volatile("" : "+r"(x));
	}
	spin_sink = x;
	return tsc_precise() - t0;
}

static struct {
	uint64_t iters;
	double ref;
} gate;

static void
gate_calibrate(void)
{
	double v[7];
	uint64_t c = spin(100000);

	gate.iters = (uint64_t)(100000.0 * (g.hz / 1000.0) / (double)(c ? c : 1));
	if (gate.iters < 1000)
		gate.iters = 1000;
	for (unsigned i = 0; i < 7; i++)
		v[i] = (double)spin(gate.iters);
	gate.ref = median(v, 7);
}

static double
drift(uint64_t cycles)
{
	return fabs(((double)cycles - gate.ref) / gate.ref);
}

/* one repetition of a case with the gate: spin, run, spin; re-run when either
 * spin drifted > 10 % or the thread was off its CPU > 5 % of the run */
static void
rep_case(struct b7_case *c, unsigned r)
{
	for (unsigned t = 0;; t++) {
		uint64_t units, cyc, s0, s1, cpu0, wall0, cpu, wall;
		double off;
		bool ok;

		s0 = spin(gate.iters);
		cpu0 = ns_of(CLOCK_THREAD_CPUTIME_ID);
		wall0 = ns_of(CLOCK_MONOTONIC);
		cyc = run_case(c, c->iters, &units);
		cpu = ns_of(CLOCK_THREAD_CPUTIME_ID) - cpu0;
		wall = ns_of(CLOCK_MONOTONIC) - wall0;
		s1 = spin(gate.iters);
		off = (wall == 0 || cpu >= wall) ? 0 : (double)(wall - cpu) / (double)wall;
		ok = drift(s0) <= B7_DRIFT_MAX && drift(s1) <= B7_DRIFT_MAX && off <= B7_OFFCPU_MAX;
		if (!ok && getenv("BENCH_DEBUG"))
			fprintf(stderr, "b7: %s rejected: spin drift %.3f/%.3f, off-CPU %.4f\n",
				c->name, drift(s0), drift(s1), off);
		if (ok || t >= B7_RERUNS_MAX) {
			if (!ok)
				c->noisy++;
			c->units_total += units;
			c->v[r] = units ? (double)cpu * g.hz / 1e9 / (double)units : NAN;
			c->vw[r] = units ? (double)cyc / (double)units : NAN;
			c->offcpu[r] = off;
			return;
		}
		c->rejected++;
	}
}

/* ---- kernel anchor ---- */
struct k_side {
	double cpu_ns, wall_ns;
	uint64_t bytes;
	int err; /* errno of the first failure, 0 = ok */
	char what[48];
};

struct k_result {
	bool ok;
	double rx_ns, tx_ns, ksoft_ns, wall_ns;
	uint64_t bytes;
};

static double
ru_ns(void)
{
	struct rusage r;

	getrusage(RUSAGE_SELF, &r);
	return (double)(r.ru_utime.tv_sec + r.ru_stime.tv_sec) * 1e9 +
	       (double)(r.ru_utime.tv_usec + r.ru_stime.tv_usec) * 1e3;
}

static int
pin_cpu(int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	return sched_setaffinity(0, sizeof(set), &set);
}

static int
enter_ns(const char *ns)
{
	char path[256];
	int fd, rc;

	if (ns == NULL)
		return 0;
	snprintf(path, sizeof(path), "/run/netns/%s", ns);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	rc = setns(fd, CLONE_NEWNET);
	close(fd);
	return rc;
}

static void
k_fail(int wfd, struct k_side *r, const char *what)
{
	r->err = errno ? errno : EIO;
	snprintf(r->what, sizeof(r->what), "%s", what);
	if (write(wfd, r, sizeof(*r)) < 0)
		_exit(2);
	_exit(1);
}

#define K_CHUNK 65536u

static void
k_receiver(int cpu, const char *ns, const char *ip, uint64_t warm, int portfd, int wfd)
{
	struct k_side r = {0};
	struct sockaddr_in a = {.sin_family = AF_INET};
	socklen_t al = sizeof(a);
	static char buf[K_CHUNK];
	uint64_t got = 0, w0;
	int s, c, one = 1;
	ssize_t n;
	double t0;

	alarm(60);
	if (pin_cpu(cpu) < 0)
		k_fail(wfd, &r, "sched_setaffinity");
	if (enter_ns(ns) < 0)
		k_fail(wfd, &r, "setns");
	s = socket(AF_INET, SOCK_STREAM, 0);
	if (s < 0)
		k_fail(wfd, &r, "socket");
	setsockopt(s, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	inet_pton(AF_INET, ip, &a.sin_addr);
	if (bind(s, (struct sockaddr *)&a, sizeof(a)) < 0 || listen(s, 1) < 0 ||
	    getsockname(s, (struct sockaddr *)&a, &al) < 0)
		k_fail(wfd, &r, "bind/listen");
	if (write(portfd, &a.sin_port, sizeof(a.sin_port)) != sizeof(a.sin_port))
		k_fail(wfd, &r, "write port");
	c = accept(s, NULL, NULL);
	if (c < 0)
		k_fail(wfd, &r, "accept");
	/* warm-up, then a go byte: both sides start measuring at the same point */
	while (got < warm) {
		n = recv(c, buf, K_CHUNK, 0);
		if (n <= 0)
			k_fail(wfd, &r, "recv (warm-up)");
		got += (uint64_t)n;
	}
	if (send(c, "g", 1, 0) != 1)
		k_fail(wfd, &r, "send go");
	t0 = ru_ns();
	w0 = ns_of(CLOCK_MONOTONIC);
	got = 0;
	for (;;) {
		n = recv(c, buf, K_CHUNK, 0);
		if (n < 0)
			k_fail(wfd, &r, "recv");
		if (n == 0)
			break;
		got += (uint64_t)n;
	}
	r.cpu_ns = ru_ns() - t0;
	r.wall_ns = (double)(ns_of(CLOCK_MONOTONIC) - w0);
	r.bytes = got;
	close(c);
	close(s);
	if (write(wfd, &r, sizeof(r)) != sizeof(r))
		_exit(2);
	_exit(0);
}

static void
k_sender(int cpu, const char *ns, const char *ip, uint16_t port_be, uint64_t warm, uint64_t bytes,
	 int wfd)
{
	struct k_side r = {0};
	struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = port_be};
	static char buf[K_CHUNK];
	uint64_t sent = 0;
	char go;
	int s;
	double t0;

	alarm(60);
	memset(buf, 'x', sizeof(buf));
	if (pin_cpu(cpu) < 0)
		k_fail(wfd, &r, "sched_setaffinity");
	if (enter_ns(ns) < 0)
		k_fail(wfd, &r, "setns");
	s = socket(AF_INET, SOCK_STREAM, 0);
	if (s < 0)
		k_fail(wfd, &r, "socket");
	inet_pton(AF_INET, ip, &a.sin_addr);
	if (connect(s, (struct sockaddr *)&a, sizeof(a)) < 0)
		k_fail(wfd, &r, "connect");
	while (sent < warm) {
		ssize_t n = send(s, buf, K_CHUNK, 0);

		if (n <= 0)
			k_fail(wfd, &r, "send (warm-up)");
		sent += (uint64_t)n;
	}
	if (recv(s, &go, 1, 0) != 1)
		k_fail(wfd, &r, "recv go");
	t0 = ru_ns();
	sent = 0;
	while (sent < bytes) {
		size_t want = bytes - sent < K_CHUNK ? (size_t)(bytes - sent) : K_CHUNK;
		ssize_t n = send(s, buf, want, 0);

		if (n <= 0)
			k_fail(wfd, &r, "send");
		sent += (uint64_t)n;
	}
	shutdown(s, SHUT_WR);
	/* the receiver closes once it has everything: the tail is in our CPU time */
	while (recv(s, &go, 1, 0) > 0)
		;
	r.cpu_ns = ru_ns() - t0;
	r.bytes = sent;
	close(s);
	if (write(wfd, &r, sizeof(r)) != sizeof(r))
		_exit(2);
	_exit(0);
}

static pid_t ksoftirqd_pid[2];

static void
find_ksoftirqd(void)
{
	DIR *d = opendir("/proc");
	struct dirent *e;

	if (d == NULL)
		return;
	while ((e = readdir(d)) != NULL) {
		char path[300], comm[64];
		FILE *f;

		if (!isdigit((unsigned char)e->d_name[0]))
			continue;
		snprintf(path, sizeof(path), "/proc/%s/comm", e->d_name);
		f = fopen(path, "r");
		if (f == NULL)
			continue;
		if (fgets(comm, sizeof(comm), f) != NULL) {
			if (strcmp(comm, "ksoftirqd/0\n") == 0)
				ksoftirqd_pid[0] = (pid_t)atoi(e->d_name);
			else if (strcmp(comm, "ksoftirqd/1\n") == 0)
				ksoftirqd_pid[1] = (pid_t)atoi(e->d_name);
		}
		fclose(f);
	}
	closedir(d);
}

/* on-CPU ns of both ksoftirqd threads (/proc/PID/schedstat, first field) */
static double
ksoftirqd_ns(void)
{
	double t = 0;

	for (unsigned i = 0; i < 2; i++) {
		char path[64];
		unsigned long long v;
		FILE *f;

		if (ksoftirqd_pid[i] == 0)
			continue;
		snprintf(path, sizeof(path), "/proc/%d/schedstat", (int)ksoftirqd_pid[i]);
		f = fopen(path, "r");
		if (f == NULL)
			continue;
		if (fscanf(f, "%llu", &v) == 1)
			t += (double)v;
		fclose(f);
	}
	return t;
}

static bool k_reported;

static bool
k_read(int fd, struct k_side *r, const char *who, const char *name)
{
	ssize_t n = read(fd, r, sizeof(*r));

	if (n != (ssize_t)sizeof(*r)) {
		if (!k_reported)
			fprintf(stderr, "b7: kernel %s: the %s died without a result\n", name, who);
		k_reported = true;
		return false;
	}
	if (r->err) {
		if (!k_reported)
			fprintf(stderr, "b7: kernel %s: %s: %s: %s\n", name, who, r->what,
				strerror(r->err));
		k_reported = true;
		return false;
	}
	return true;
}

static struct k_result
kernel_run(const char *name, const char *ns_rx, const char *ns_tx, const char *ip, uint64_t bytes,
	   int cpu_rx, int cpu_tx)
{
	struct k_result res = {0};
	struct k_side rr = {0}, rt = {0};
	int pport[2], prx[2], ptx[2];
	uint16_t port_be = 0;
	pid_t rx, tx = -1;
	double ks0, ks1;
	const uint64_t warm = 4u << 20;

	fflush(stdout);
	fflush(stderr);
	if (pipe(pport) < 0 || pipe(prx) < 0 || pipe(ptx) < 0)
		die("pipe");
	rx = fork();
	if (rx == 0) {
		close(pport[0]);
		close(prx[0]);
		close(ptx[0]);
		close(ptx[1]);
		k_receiver(cpu_rx, ns_rx, ip, warm, pport[1], prx[1]);
	}
	close(pport[1]);
	close(prx[1]);
	if (rx > 0 && read(pport[0], &port_be, sizeof(port_be)) == sizeof(port_be)) {
		ks0 = ksoftirqd_ns();
		tx = fork();
		if (tx == 0) {
			close(pport[0]);
			close(prx[0]);
			close(ptx[0]);
			k_sender(cpu_tx, ns_tx, ip, port_be, warm, bytes, ptx[1]);
		}
		close(ptx[1]);
		res.ok = k_read(prx[0], &rr, "receiver", name);
		res.ok = k_read(ptx[0], &rt, "sender", name) && res.ok;
		ks1 = ksoftirqd_ns();
		res.ksoft_ns = ks1 - ks0;
	} else {
		close(ptx[1]);
		k_read(prx[0], &rr, "receiver", name);
	}
	close(pport[0]);
	close(prx[0]);
	close(ptx[0]);
	if (rx > 0)
		waitpid(rx, NULL, 0);
	if (tx > 0)
		waitpid(tx, NULL, 0);
	if (res.ok && (rr.bytes != bytes || rt.bytes != bytes)) {
		fprintf(stderr,
			"b7: kernel %s: %" PRIu64 " bytes received, %" PRIu64 " sent, %" PRIu64
			" expected\n",
			name, rr.bytes, rt.bytes, bytes);
		res.ok = false;
	}
	res.rx_ns = rr.cpu_ns;
	res.tx_ns = rt.cpu_ns;
	res.wall_ns = rr.wall_ns;
	res.bytes = bytes;
	return res;
}

/* ---- options ---- */
static struct {
	unsigned reps;
	double ms;
	uint64_t cg_segs;
	bool quick;
	int rx_cpu, tx_cpu;
	unsigned lo_mb, veth_mb;
	const char *veth_rx_ns, *veth_tx_ns, *veth_ip;
} opt = {.reps = 11, .ms = 20, .rx_cpu = 1, .tx_cpu = 0, .lo_mb = 64, .veth_mb = 32};

static void
parse_opts(int argc, char **argv)
{
	const struct bench_opt opts[] = {
		BENCH_OPT_UINT("reps", &opt.reps),
		BENCH_OPT_DOUBLE("ms", &opt.ms),
		BENCH_OPT_U64("callgrind", &opt.cg_segs),
		BENCH_OPT_FLAG("quick", &opt.quick),
		BENCH_OPT_INT("rx-cpu", &opt.rx_cpu),
		BENCH_OPT_INT("tx-cpu", &opt.tx_cpu),
		BENCH_OPT_UINT("lo-mb", &opt.lo_mb),
		BENCH_OPT_UINT("veth-mb", &opt.veth_mb),
		BENCH_OPT_STR("veth-rx-ns", &opt.veth_rx_ns),
		BENCH_OPT_STR("veth-tx-ns", &opt.veth_tx_ns),
		BENCH_OPT_STR("veth-ip", &opt.veth_ip),
		BENCH_OPT_FLAG("verbose", &g.verbose),
		BENCH_OPT_END,
	};

	if (bench_opt_parse(argc, argv, opts, argv[0],
			    "[--reps N] [--ms M] [--quick] [--callgrind SEGS] [--rx-cpu C] "
			    "[--tx-cpu C] [--lo-mb N] [--veth-mb N] [--veth-rx-ns NAME "
			    "--veth-tx-ns NAME --veth-ip A.B.C.D]") < 0)
		exit(2);
	if (opt.quick) {
		if (opt.reps > 3)
			opt.reps = 3;
		opt.ms = 5;
		if (opt.lo_mb > 16)
			opt.lo_mb = 16;
		if (opt.veth_mb > 8)
			opt.veth_mb = 8;
	}
	if (opt.reps < 1)
		opt.reps = 1;
	if (opt.reps > B7_MAX_REPS)
		opt.reps = B7_MAX_REPS;
	if (!opt.quick && opt.reps < 9)
		fprintf(stderr, "b7: --reps %u is below the 9 BENCHMARKS.md asks for\n", opt.reps);
	if (opt.veth_rx_ns == NULL || opt.veth_tx_ns == NULL || opt.veth_ip == NULL)
		opt.veth_mb = 0;
}

/* ---- setup ---- */
enum { C_HRX, C_IN_SW, C_IN_OFF, C_OOO_SW, C_OOO_OFF, C_HACK, C_TX_SW, C_TX_OFF, C_IN_NOCO, C_N };

static struct b7_case cases[C_N] = {
	[C_HRX] = {.name = "harness.rx",
		   .label = "harness: copy 1514 B + patch, no stack",
		   .unit = "cycles/segment",
		   .kind = K_HARNESS_RX},
	[C_IN_SW] = {.name = "inorder.sw",
		     .label = "in-order, software checksums",
		     .unit = "cycles/segment",
		     .kind = K_RX},
	[C_IN_OFF] = {.name = "inorder.off",
		      .label = "in-order, checksums offloaded",
		      .unit = "cycles/segment",
		      .kind = K_RX,
		      .off = true},
	[C_OOO_SW] = {.name = "ooo.sw",
		      .label = "pairs swapped, software checksums",
		      .unit = "cycles/segment",
		      .kind = K_RX,
		      .ooo = true},
	[C_OOO_OFF] = {.name = "ooo.off",
		       .label = "pairs swapped, checksums offloaded",
		       .unit = "cycles/segment",
		       .kind = K_RX,
		       .ooo = true,
		       .off = true},
	[C_HACK] = {.name = "harness.ack",
		    .label = "harness: copy 66 B ACK + patch, no stack",
		    .unit = "cycles/ack",
		    .kind = K_HARNESS_ACK},
	[C_TX_SW] = {.name = "send.sw",
		     .label = "send path, per ACK (2 segs), sw csum",
		     .unit = "cycles/ack",
		     .kind = K_TX},
	[C_TX_OFF] = {.name = "send.off",
		      .label = "send path, per ACK (2 segs), offloaded",
		      .unit = "cycles/ack",
		      .kind = K_TX,
		      .off = true},
	[C_IN_NOCO] = {.name = "inorder.off.nocoal",
		       .label = "in-order, offloaded, rx_coalesce off",
		       .unit = "cycles/segment",
		       .kind = K_RX,
		       .off = true,
		       .nocoal = true},
};

static struct b7_conn conns[C_N];

static void
setup(void)
{
	uint16_t sport = 40001;

	for (unsigned i = 0; i < C_N; i++) {
		struct b7_case *c = &cases[i];

		if (c->kind == K_RX || c->kind == K_TX) {
			c->st = stack_new(c->off, !c->nocoal);
			conn_open(c->st, &conns[i], sport++);
			c->k = &conns[i];
		}
	}
	cases[C_HRX].k = &conns[C_IN_SW];
	cases[C_HRX].hseq = 1;
	cases[C_HACK].k = &conns[C_TX_SW];
	cases[C_HACK].hseq = 1;
}

/* after everything: the stack delivered what was injected, dropped nothing */
static int
check_all(bool print)
{
	int bad = 0;
	uint64_t held = 0;

	for (unsigned i = 0; i < C_N; i++) {
		struct b7_case *c = &cases[i];
		const uint64_t *ctr;
		uint64_t drops = 0;

		if (c->st == NULL)
			continue;
		ctr = stk_counters(c->st);
		for (unsigned j = 0; j < STK_C__COUNT; j++)
			if (strncmp(stk_counter_names[j], "drop_", 5) == 0)
				drops += ctr[j];
		held += stk_bufs_held(c->st);
		if (print)
			printf("check %-18s segs_in %" PRIu64 " acks_out %" PRIu64
			       " (%.3f per segment in) "
			       "segs_out %" PRIu64 " ooo_segs %" PRIu64 " ooo_filled %" PRIu64
			       " retransmits %" PRIu64 " drops %" PRIu64 " bufs_held %" PRIu64
			       " coalesced %" PRIu64 "\n",
			       c->name, ctr[STK_C_TCP_SEGS_IN], ctr[STK_C_TCP_ACKS_OUT],
			       ctr[STK_C_TCP_SEGS_IN] ? (double)ctr[STK_C_TCP_ACKS_OUT] /
								(double)ctr[STK_C_TCP_SEGS_IN]
						      : 0.0,
			       ctr[STK_C_TCP_SEGS_OUT], ctr[STK_C_TCP_OOO_SEGS],
			       ctr[STK_C_TCP_OOO_FILLED], ctr[STK_C_TCP_RETRANSMITS], drops,
			       stk_bufs_held(c->st), ctr[STK_C_TCP_COALESCED]);
		if (drops != 0 || ctr[STK_C_TCP_RETRANSMITS] != 0) {
			fprintf(stderr, "b7: %s: %" PRIu64 " drops, %" PRIu64 " retransmits\n",
				c->name, drops, ctr[STK_C_TCP_RETRANSMITS]);
			bad = 1;
		}
		if (c->kind == K_RX) {
			if (c->k->delivered != c->k->injected) {
				fprintf(stderr,
					"b7: %s: %" PRIu64 " bytes delivered of %" PRIu64
					" injected\n",
					c->name, c->k->delivered, c->k->injected);
				bad = 1;
			}
			if (stk_bufs_held(c->st) != 0) {
				fprintf(stderr,
					"b7: %s: the stack holds %" PRIu64
					" buffers after whole bursts\n",
					c->name, stk_bufs_held(c->st));
				bad = 1;
			}
		}
	}
	if (B7_POOL - g.nfree != held) {
		fprintf(stderr, "b7: %u pool buffers out, the stacks hold %" PRIu64 "\n",
			B7_POOL - g.nfree, held);
		bad = 1;
	}
	if (g.verify_bad || g.other_events) {
		fprintf(stderr,
			"b7: %" PRIu64 " misdelivered DATA events, %" PRIu64 " unexpected events\n",
			g.verify_bad, g.other_events);
		bad = 1;
	}
	return bad;
}

static void
clock_init(void)
{
	uint64_t n0, n1, t0, t1;
	struct timespec d = {.tv_sec = 0, .tv_nsec = 100000000};

	n0 = ns_of(CLOCK_MONOTONIC_RAW);
	t0 = tsc_precise();
	nanosleep(&d, NULL);
	t1 = tsc_precise();
	n1 = ns_of(CLOCK_MONOTONIC_RAW);
	g.hz = (double)(t1 - t0) * 1e9 / (double)(n1 - n0);
	g.tsc0 = tsc();
	g.ns_mult = (uint64_t)(1e9 * 4294967296.0 / g.hz);
	g.rng = 0x9e3779b97f4a7c15ull ^ (uint64_t)getpid();
}

static void
cpus_str(char *buf, size_t len)
{
	cpu_set_t set;
	size_t o = 0;

	buf[0] = '\0';
	if (sched_getaffinity(0, sizeof(set), &set) != 0)
		return;
	for (int c = 0; c < CPU_SETSIZE && o + 8 < len; c++)
		if (CPU_ISSET(c, &set))
			o += (size_t)snprintf(buf + o, len - o, "%s%d", o ? "," : "", c);
}

/* ---- callgrind mode ---- */
static int
callgrind_mode(uint64_t segs)
{
	uint64_t iters = (segs + B7_BURST - 1) / B7_BURST, units;

	for (unsigned i = 0; i < C_N; i++) /* warm: allocator, caches, cwnd */
		run_case(&cases[i], cases[i].kind == K_TX ? 400 : 64, &units);
	for (unsigned i = 0; i < C_N; i++) {
		struct b7_case *c = &cases[i];
		/* send: 16 ACKs per iteration in steady state */
		uint64_t it = c->kind == K_TX || c->kind == K_HARNESS_ACK ? 2 * iters : iters;
		char name[64];

		snprintf(name, sizeof(name), "b7.%s", c->name);
		CALLGRIND_ZERO_STATS;
		run_case(c, it, &units);
		CALLGRIND_DUMP_STATS_AT(name);
		printf("callgrind-case %s units %" PRIu64 " unit %s\n", name, units,
		       c->kind == K_TX || c->kind == K_HARNESS_ACK ? "ack" : "segment");
	}
	return check_all(true);
}

/* ---- main ---- */
struct k_series {
	const char *name; /* loopback / veth */
	unsigned mb;
	double rx[B7_MAX_REPS], tx[B7_MAX_REPS], sum[B7_MAX_REPS], ks[B7_MAX_REPS]; /* cycles/MB */
	double gbps[B7_MAX_REPS];
	unsigned failed;
};

static void
k_rep(struct k_series *ks, unsigned r, const char *ns_rx, const char *ns_tx, const char *ip)
{
	struct k_result kr = kernel_run(ks->name, ns_rx, ns_tx, ip, (uint64_t)ks->mb * 1000000u,
					opt.rx_cpu, opt.tx_cpu);
	double per = g.hz / 1e9 / ((double)kr.bytes / B7_MB); /* ns -> cycles per MB */

	if (!kr.ok) {
		ks->rx[r] = ks->tx[r] = ks->sum[r] = ks->ks[r] = ks->gbps[r] = NAN;
		ks->failed++;
		return;
	}
	ks->rx[r] = kr.rx_ns * per;
	ks->tx[r] = kr.tx_ns * per;
	ks->sum[r] = ks->rx[r] + ks->tx[r];
	ks->ks[r] = kr.ksoft_ns * per;
	ks->gbps[r] = kr.wall_ns > 0 ? (double)kr.bytes * 8 / kr.wall_ns : NAN;
}

static void
print_row(const char *name, const char *label, const double *v, unsigned n, const char *extra)
{
	struct bench_summary s;

	summarize(v, n, &s);
	printf("%-14s %-40s %10.1f %10.1f %10.1f %10.1f %s\n", name, label, s.min, s.med, s.q1,
	       s.q3, extra);
}

static void
json_case(const char *name, const char *unit, const double *v, unsigned n, const char *extra,
	  const char *placement)
{
	struct bench_summary s;

	summarize(v, n, &s);
	printf("{\"bench\":\"B7\",\"case\":\"%s\",\"unit\":\"%s\",\"tsc_hz\":%.0f,\"reps\":%u,"
	       "\"rep_ms\":%.0f,\"n\":%u,\"min\":%.3f,\"q1\":%.3f,\"median\":%.3f,\"q3\":%.3f,"
	       "\"iqr\":%.3f,\"max\":%.3f%s,\"placement\":%s}\n",
	       name, unit, g.hz, opt.reps, opt.ms, s.n, s.min, s.q1, s.med, s.q3, s.q3 - s.q1,
	       s.max, extra, placement);
}

int
main(int argc, char **argv)
{
	double net[C_N][B7_MAX_REPS], mb[C_N][B7_MAX_REPS], extra_ooo[2][B7_MAX_REPS];
	struct k_series klo = {.name = "loopback"}, kveth = {.name = "veth"};
	char cpus[64], placement[256], ex[512];
	unsigned R;
	int bad;

	setvbuf(stdout, NULL, _IOLBF, 0);
	parse_opts(argc, argv);
	signal(SIGPIPE, SIG_IGN);
	clock_init();
	pool_init();
	setup();
	cpus_str(cpus, sizeof(cpus));
	if (opt.cg_segs > 0)
		return callgrind_mode(opt.cg_segs);

	R = opt.reps;
	klo.mb = opt.lo_mb;
	kveth.mb = opt.veth_mb;
	snprintf(placement, sizeof(placement),
		 "{\"stack\":\"%s\",\"kernel_rx\":\"%d\",\"kernel_tx\":\"%d\"}", cpus, opt.rx_cpu,
		 opt.tx_cpu);
	printf("B7: libstk TCP receive path vs kernel TCP (cycles per segment / per MB of payload, "
	       "MB = 1e6 B)\n");
	printf("TSC %.1f MHz (rdtsc against CLOCK_MONOTONIC_RAW over 100 ms)\n", g.hz / 1e6);
	printf("placement: libstk cases on CPU %s (this process; one stack per case, one thread); "
	       "kernel anchor: receiver process on CPU %d, sender process on CPU %d\n",
	       cpus, opt.rx_cpu, opt.tx_cpu);
	if (strchr(cpus, ',') != NULL || strchr(cpus, '-') != NULL)
		printf("warning: this process is not pinned to one CPU (run it under taskset -c "
		       "N)\n");
	printf("ops: LIFO pool of %u x %u-byte buffers; clock_ns = TSC (read once per "
	       "stk_input_burst "
	       "/ stk_poll / stk_tcp_send); alloc/free = calloc/free (the tcp stage uses a mempool "
	       "for "
	       "queue nodes); the app frees each DATA buffer after touching its first byte\n",
	       B7_POOL, B7_BUFSZ);
	printf("segments: %u payload bytes + NOP NOP TS, IPv4 + TCP checksums valid, %u per "
	       "stk_input_burst, then one stk_poll; every rx case includes harness.rx (copy the "
	       "1514-byte frame + patch seq/checksum), net = case - harness.rx of the same "
	       "repetition\n",
	       B7_MSS, B7_BURST);
	printf("reps %u x >= %.0f ms per case, interleaved (order rotated per repetition), the "
	       "kernel streams after the cases in every repetition; noise gate: 1 ms spin "
	       "before/after, re-run on > 10 %% drift or > 5 %% off-CPU, kept as noisy after %d "
	       "re-runs\n",
	       R, opt.ms, B7_RERUNS_MAX);

	/* warm-up with the delivery check on, then size the repetitions */
	g.verify = true;
	for (unsigned i = 0; i < C_N; i++) {
		uint64_t units, cyc;

		run_case(&cases[i], cases[i].kind == K_TX ? 2000 : 300, &units);
		cyc = run_case(&cases[i], 200, &units);
		cases[i].iters = (uint64_t)(opt.ms * 1e-3 * g.hz / ((double)cyc / 200.0)) + 1;
		if (cases[i].iters < 20)
			cases[i].iters = 20;
	}
	g.verify = false;
	if (check_all(false) != 0)
		die("the warm-up failed its checks (see above)");
	gate_calibrate();
	find_ksoftirqd();

	for (unsigned r = 0; r < R; r++) {
		for (unsigned i = 0; i < C_N; i++)
			rep_case(&cases[(i + r) % C_N], r);
		if (klo.mb)
			k_rep(&klo, r, NULL, NULL, "127.0.0.1");
		if (kveth.mb)
			k_rep(&kveth, r, opt.veth_rx_ns, opt.veth_tx_ns, opt.veth_ip);
		for (unsigned i = 0; i < C_N; i++) {
			double h = cases[i].kind == K_TX ? cases[C_HACK].v[r] : cases[C_HRX].v[r];
			double per_mb = cases[i].kind == K_TX || cases[i].kind == K_HARNESS_ACK
						? B7_MB / (2.0 * B7_MSS)
						: B7_MB / B7_MSS;

			net[i][r] = cases[i].v[r] - h;
			mb[i][r] = net[i][r] * per_mb;
		}
		extra_ooo[0][r] = 2 * (cases[C_OOO_SW].v[r] - cases[C_IN_SW].v[r]);
		extra_ooo[1][r] = 2 * (cases[C_OOO_OFF].v[r] - cases[C_IN_OFF].v[r]);
	}

	/* ---- tables ---- */
	printf("\nlibstk, on-CPU cycles per segment (per ACK for send.*): thread CPU time x TSC "
	       "rate, "
	       "as the kernel anchor's getrusage; wall = TSC cycles over the same runs (includes "
	       "time preempted); net = minus the harness of the same repetition\n");
	printf("%-14s %-40s %10s %10s %10s %10s %s\n", "case", "what", "min", "median", "q1", "q3",
	       "  net median | net cycles/MB | wall median | off-CPU median | units/rep | gate "
	       "re-runs/noisy");
	for (unsigned i = 0; i < C_N; i++) {
		struct b7_case *c = &cases[i];
		bool h = c->kind == K_HARNESS_RX || c->kind == K_HARNESS_ACK;

		if (h)
			snprintf(ex, sizeof(ex),
				 "  %10s | %13s | %11.1f | %13.1f%% | %9" PRIu64 " | %u/%u", "-",
				 "-", median(c->vw, R), 100 * median(c->offcpu, R),
				 c->units_total / R, c->rejected, c->noisy);
		else
			snprintf(ex, sizeof(ex),
				 "  %10.1f | %13.0f | %11.1f | %13.1f%% | %9" PRIu64 " | %u/%u",
				 median(net[i], R), median(mb[i], R), median(c->vw, R),
				 100 * median(c->offcpu, R), c->units_total / R, c->rejected,
				 c->noisy);
		print_row(c->name, c->label, c->v, R, ex);
	}
	print_row("ooo.sw-extra", "extra per out-of-order seg, 2*(ooo-inorder)", extra_ooo[0], R,
		  "");
	print_row("ooo.off-extra", "same, checksums offloaded", extra_ooo[1], R, "");

	struct k_series *ksers[2] = {&klo, &kveth};
	printf("\nkernel TCP anchor (cycles per MB of payload: getrusage utime+stime x TSC; "
	       "ksoftirqd = "
	       "both CPUs' ksoftirqd over the same window)\n");
	printf("%-14s %-40s %10s %10s %10s %10s %s\n", "anchor", "what", "min", "median", "q1",
	       "q3", "");
	for (unsigned s = 0; s < 2; s++) {
		struct k_series *k = ksers[s];
		char lbl[64], nm[40];

		if (k->mb == 0) {
			printf("%-14s (not run%s)\n", k->name,
			       s == 1 ? ": needs root and b7.sh's namespaces "
					"(--veth-rx-ns/--veth-tx-ns/--veth-ip)"
				      : "");
			continue;
		}
		snprintf(ex, sizeof(ex), "%u MB per rep; %.2f Gbit/s payload (median); %u failed",
			 k->mb, median(k->gbps, R), k->failed);
		snprintf(nm, sizeof(nm), "%s.rx", k->name);
		snprintf(lbl, sizeof(lbl), "receiver process");
		print_row(nm, lbl, k->rx, R, ex);
		snprintf(nm, sizeof(nm), "%s.tx", k->name);
		print_row(nm, "sender process", k->tx, R, "");
		snprintf(nm, sizeof(nm), "%s.rx+tx", k->name);
		print_row(nm, "receiver + sender", k->sum, R, "");
		snprintf(nm, sizeof(nm), "%s.ksoftirqd", k->name);
		print_row(nm, "ksoftirqd/0 + /1 (not in the above)", k->ks, R, "");
	}

	/* ratios: median of per-repetition ratios */
	struct {
		const char *ours;
		unsigned ci;
		bool gross;
	} ov[] = {
		{"inorder.off.net", C_IN_OFF, false},
		{"inorder.sw.net", C_IN_SW, false},
		{"inorder.off.gross", C_IN_OFF, true},
		{"inorder.sw.gross", C_IN_SW, true},
	};
	double ratios[4][4][B7_MAX_REPS];
	const char *anames[4] = {"kernel_loopback_rx", "kernel_loopback_rxtx", "kernel_veth_rx",
				 "kernel_veth_rxtx"};

	printf("\nB7 target: our receive path <= 1/4 of the kernel's CPU per MB (ratio <= %.2f); "
	       "ratio = "
	       "median of per-repetition ratios\n",
	       B7_TARGET);
	printf("%-20s %-22s %14s %14s %8s %s\n", "ours (cycles/MB)", "anchor", "ours median",
	       "anchor median", "ratio", "target met");
	for (unsigned o = 0; o < 4; o++) {
		for (unsigned a = 0; a < 4; a++) {
			struct k_series *k = ksers[a / 2];
			const double *av = (a % 2) ? k->sum : k->rx;
			double ourv[B7_MAX_REPS], rmed;

			if (k->mb == 0)
				continue;
			for (unsigned r = 0; r < R; r++) {
				ourv[r] = ov[o].gross ? cases[ov[o].ci].v[r] * B7_MB / B7_MSS
						      : mb[ov[o].ci][r];
				ratios[o][a][r] = ourv[r] / av[r];
			}
			rmed = median(ratios[o][a], R);
			printf("%-20s %-22s %14.0f %14.0f %8.3f %s\n", ov[o].ours, anames[a],
			       median(ourv, R), median(av, R), rmed,
			       rmed <= B7_TARGET ? "yes" : "no");
		}
	}

	/* ---- JSON ---- */
	printf("\n");
	for (unsigned i = 0; i < C_N; i++) {
		struct b7_case *c = &cases[i];
		bool h = c->kind == K_HARNESS_RX || c->kind == K_HARNESS_ACK;
		const char *inc =
			c->kind == K_HARNESS_RX
				? "pool get + memcpy 1514 B + seq/csum patch + pool put"
			: c->kind == K_HARNESS_ACK
				? "pool get + memcpy 66 B + ack/TSecr/csum patch + pool put"
			: c->kind == K_RX
				? "harness.rx + stk_input_burst(32) + stk_poll + DATA event (touch "
				  "1 byte, free) + the stack's ACKs via tx_alloc/tx"
				: "2 x stk_tcp_send (segment built, copied, sent) + harness.ack + "
				  "stk_input_burst(16 ACKs) + stk_poll + acked buffers freed";

		struct bench_summary ws;
		int o;

		summarize(c->vw, R, &ws);
		o = snprintf(
			ex, sizeof(ex),
			",\"basis\":\"on-CPU (thread CPU time x TSC rate)\",\"wall_min\":%.3f,"
			"\"wall_median\":%.3f,\"offcpu_median\":%.4f,\"units_per_rep\":%" PRIu64
			",\"includes\":\"%s\",\"gate_reruns\":%u,\"gate_noisy\":%u",
			ws.min, ws.med, median(c->offcpu, R), c->units_total / R, inc, c->rejected,
			c->noisy);
		if (!h && o > 0 && (size_t)o < sizeof(ex))
			snprintf(ex + o, sizeof(ex) - (size_t)o,
				 ",\"net_median\":%.3f,\"net_cycles_per_MB\":%.1f,\"csum\":\"%s\"",
				 median(net[i], R), median(mb[i], R),
				 c->off ? "offloaded" : "software");
		json_case(c->name, c->unit, c->v, R, ex, placement);
	}
	json_case("ooo.sw.extra_per_ooo_segment", "cycles/segment", extra_ooo[0], R,
		  ",\"derived\":\"2*(ooo.sw - inorder.sw) per repetition\"", placement);
	json_case("ooo.off.extra_per_ooo_segment", "cycles/segment", extra_ooo[1], R,
		  ",\"derived\":\"2*(ooo.off - inorder.off) per repetition\"", placement);
	for (unsigned i = C_IN_SW; i <= C_OOO_OFF; i++) {
		char nm[48];

		snprintf(nm, sizeof(nm), "%s.net_per_MB", cases[i].name);
		json_case(nm, "cycles/MB", mb[i], R,
			  ",\"derived\":\"(case - harness.rx) x 1e6/1448\"", placement);
	}
	for (unsigned s = 0; s < 2; s++) {
		struct k_series *k = ksers[s];
		const char *part[4] = {"rx", "tx", "rxtx", "ksoftirqd"};
		const double *pv[4] = {k->rx, k->tx, k->sum, k->ks};

		if (k->mb == 0)
			continue;
		for (unsigned p = 0; p < 4; p++) {
			char nm[48];

			snprintf(nm, sizeof(nm), "kernel_%s_%s", k->name, part[p]);
			snprintf(ex, sizeof(ex),
				 ",\"mb_per_rep\":%u,\"failed\":%u,\"gbps_median\":%.3f,"
				 "\"segments\":\"%s\"",
				 k->mb, k->failed, median(k->gbps, R),
				 s == 0 ? "loopback MTU 65536, GSO/GRO as default"
					: "veth MTU 1500, TSO/GSO/GRO off");
			json_case(nm, "cycles/MB", pv[p], R, ex, placement);
		}
	}
	for (unsigned o = 0; o < 4; o++)
		for (unsigned a = 0; a < 4; a++) {
			struct k_series *k = ksers[a / 2];
			const double *av = (a % 2) ? k->sum : k->rx;
			double ourv[B7_MAX_REPS], rmed;
			struct bench_summary rs;

			if (k->mb == 0)
				continue;
			for (unsigned r = 0; r < R; r++)
				ourv[r] = ov[o].gross ? cases[ov[o].ci].v[r] * B7_MB / B7_MSS
						      : mb[ov[o].ci][r];
			summarize(ratios[o][a], R, &rs);
			rmed = rs.med;
			printf("{\"bench\":\"B7\",\"case\":\"vs_kernel.%s\",\"unit\":\"cycles/"
			       "MB\",\"tsc_hz\":%.0f,"
			       "\"reps\":%u,\"median\":%.1f,\"anchor\":\"%s\",\"anchor_median\":%."
			       "1f,"
			       "\"ratio\":%.4f,\"ratio_q1\":%.4f,\"ratio_q3\":%.4f,\"target_"
			       "ratio\":%.2f,"
			       "\"target_met\":%s,\"placement\":%s}\n",
			       ov[o].ours, g.hz, R, median(ourv, R), anames[a], median(av, R), rmed,
			       rs.q1, rs.q3, B7_TARGET, rmed <= B7_TARGET ? "true" : "false",
			       placement);
		}

	printf("\n");
	bad = check_all(true);
	printf("pool: %u of %u buffers free; %" PRIu64 " DATA events, %" PRIu64
	       " frames sent by the stacks\n",
	       g.nfree, B7_POOL, g.data_events, g.tx_frames);
	return bad;
}
