/* SPDX-License-Identifier: BSD-3-Clause
 * stk.c — libstk's life cycle and entry points.
 *
 *   stk_config_init  defaults
 *   stk_config_check the config's rules
 *   stk_create       validate + allocate (ARP cache, connection table)
 *   stk_start        gratuitous ARP
 *   stk_input_burst  time, then each frame -> eth.c stk_eth_input, or the
 *                    next of an in-order run -> tcp_in.c stk_tcp_follow
 *   stk_poll         time, then ARP retries (arp.c) and TCP timers (tcp_timer.c)
 *   stk_destroy      every connection, queued buffer and table
 */
#include <arpa/inet.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#include "stk_priv.h"

#if defined(__x86_64__)
#include <immintrin.h>
#endif

const char *const stk_counter_names[STK_C__COUNT] = {
#define X(e, s) [STK_C_##e] = s,
	STK_COUNTERS(X)
#undef X
};

void
stk_config_init(struct stk_config *c)
{
	memset(c, 0, sizeof(*c));
	c->prefix = 24;
	c->mtu = 1500;
	c->arp_entries = 256;
	c->arp_timeout_ms = 60000;
	c->arp_retry_ms = 1000;
	c->arp_retries = 3;
	c->arp_pending = 16;
	c->max_conns = 1024;
	c->ephemeral_port_min = 49152;
	c->ephemeral_port_max = 65535;
	c->time_wait_reuse = true;
	c->rcvbuf = 1u << 20;
	c->sndbuf = 1u << 20;
	c->ooo_max_bytes = 1u << 20;
	c->ooo_max_segs = 1024;
	c->time_wait_ms = 60000;
	c->fin_wait2_ms = 60000;
	c->delack_ms = 10;
	c->rx_coalesce = true;
	c->rto_min_ms = 200;
	c->rto_max_ms = 60000;
	c->rto_init_ms = 1000;
	c->syn_retries = 5;
	c->max_retries = 12;
	c->persist_timeout_ms = 0;
	c->backlog_full = STK_BACKLOG_COOKIES;
	c->keepalive_ms = 0;
	c->keepalive_intvl_ms = 10000;
	c->keepalive_probes = 5;
	c->window_scale = true;
	c->timestamps = true;
	c->sack = true;
	c->challenge_ack_limit = 100;
	c->oow_ack_ms = 500;
}

#define SIP_ROTL(x, b) (uint64_t)(((x) << (b)) | ((x) >> (64 - (b))))
#define SIP_ROUND(v0, v1, v2, v3)                                              \
	do {                                                                   \
		v0 += v1; v1 = SIP_ROTL(v1, 13); v1 ^= v0; v0 = SIP_ROTL(v0, 32); \
		v2 += v3; v3 = SIP_ROTL(v3, 16); v3 ^= v2;                      \
		v0 += v3; v3 = SIP_ROTL(v3, 21); v3 ^= v0;                      \
		v2 += v1; v1 = SIP_ROTL(v1, 17); v1 ^= v2; v2 = SIP_ROTL(v2, 32); \
	} while (0)

/* SipHash-2-4 of three 64-bit words (24 bytes, little-endian word order) */
uint64_t
stk_siphash3(const uint64_t k[2], uint64_t m0, uint64_t m1, uint64_t m2)
{
	uint64_t v0 = k[0] ^ 0x736f6d6570736575ull, v1 = k[1] ^ 0x646f72616e646f6dull;
	uint64_t v2 = k[0] ^ 0x6c7967656e657261ull, v3 = k[1] ^ 0x7465646279746573ull;
	const uint64_t m[4] = { m0, m1, m2, 24ull << 56 };

	for (int i = 0; i < 4; i++) {
		v3 ^= m[i];
		SIP_ROUND(v0, v1, v2, v3);
		SIP_ROUND(v0, v1, v2, v3);
		v0 ^= m[i];
	}
	v2 ^= 0xff;
	for (int i = 0; i < 4; i++)
		SIP_ROUND(v0, v1, v2, v3);
	return v0 ^ v1 ^ v2 ^ v3;
}

void
stk_logf(struct stk *st, int level, const char *fmt, ...)
{
	char buf[256];
	va_list ap;

	if (st->ops.log == NULL)
		return;
	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	st->ops.log(st->ops.ctx, level, buf);
}

/* The one place a struct stk_config's rules are: stk_create() runs it, and the
 * tcp stage's validate() runs it for `lcpipe check` (its option table bounds each
 * value alone; the relations between them are here). Messages name the fields as
 * the tcp stage's options are named. */
int
stk_config_check(const struct stk_config *c, char *msg, size_t len)
{
#define BAD(...) do { snprintf(msg, len, __VA_ARGS__); return -EINVAL; } while (0)
	if (c->ip == 0)
		BAD("no IPv4 address");
	if (c->prefix < 1 || c->prefix > 32)
		BAD("prefix length %u is not 1..32", c->prefix);
	if (c->mtu < 576 || c->mtu > 9000)
		BAD("mtu %u is not 576..9000", c->mtu);
	if (c->mac[0] & 1)
		BAD("the MAC address is multicast");
	if (c->arp_entries < 4 || c->arp_entries > 65536)
		BAD("arp_entries %u is not 4..65536", c->arp_entries);
	if (c->arp_retries < 1 || c->arp_retry_ms < 1)
		BAD("arp_retries and arp_retry_ms must be >= 1");
	if (c->max_conns < 1 || c->max_conns > 65535)
		BAD("max_conns %u is not 1..65535", c->max_conns);
	if (c->ephemeral_port_min < 1 || c->ephemeral_port_min > c->ephemeral_port_max)
		BAD("need 1 <= ephemeral_port_min <= ephemeral_port_max (%u, %u)", c->ephemeral_port_min,
		    c->ephemeral_port_max);
	if (c->rcvbuf < 2 * c->mtu)
		BAD("rcvbuf %u is below 2 * mtu (%u)", c->rcvbuf, 2 * c->mtu);
	if (c->rcvbuf > (1u << 30))
		BAD("rcvbuf %u is above 1 GiB", c->rcvbuf);
	if (c->sndbuf < c->mtu || c->sndbuf > (1u << 30))
		BAD("sndbuf %u is not mtu (%u)..1 GiB", c->sndbuf, c->mtu);
	if (!c->window_scale && c->rcvbuf > 65535)
		BAD("rcvbuf %u needs window_scale (without it at most 65535)", c->rcvbuf);
	if (c->rto_min_ms < 1 || c->rto_min_ms > c->rto_init_ms || c->rto_init_ms > c->rto_max_ms)
		BAD("need 1 <= rto_min_ms <= rto_init_ms <= rto_max_ms (%u, %u, %u)", c->rto_min_ms,
		    c->rto_init_ms, c->rto_max_ms);
	if (c->n_static > STK_MAX_STATIC_NEIGH)
		BAD("more than %d static neighbours", STK_MAX_STATIC_NEIGH);
	if (c->gateway != 0) {
		uint32_t m = htobe32(c->prefix == 32 ? 0xffffffffu : ~(0xffffffffu >> c->prefix));
		char gw[INET_ADDRSTRLEN], ip[INET_ADDRSTRLEN];

		if ((c->gateway & m) != (c->ip & m))
			BAD("gateway %s is not inside %s/%u", inet_ntop(AF_INET, &c->gateway, gw, sizeof(gw)),
			    inet_ntop(AF_INET, &c->ip, ip, sizeof(ip)), c->prefix);
	}
	return 0;
#undef BAD
}

struct stk *
stk_create(const struct stk_config *c, const struct stk_ops *ops, char *errmsg, size_t errlen)
{
	char dummy[8];
	struct stk *st;
	unsigned hs;

	if (errmsg == NULL) {
		errmsg = dummy;
		errlen = sizeof(dummy);
	}
	if (ops->tx == NULL || ops->tx_alloc == NULL || ops->buf_free == NULL || ops->clock_ns == NULL ||
	    ops->random == NULL || ops->alloc == NULL || ops->free == NULL || ops->event == NULL) {
		snprintf(errmsg, errlen, "an ops callback is missing");
		errno = EINVAL;
		return NULL;
	}
	if (stk_config_check(c, errmsg, errlen) < 0) {
		errno = EINVAL;
		return NULL;
	}
	st = ops->alloc(ops->ctx, sizeof(*st));
	if (st == NULL)
		goto nomem;
	st->cfg = *c;
	st->ops = *ops;
	st->netmask = htobe32(c->prefix == 32 ? 0xffffffffu : ~(0xffffffffu >> c->prefix));
	st->now = ops->clock_ns(ops->ctx);
	st->ip_id = (uint16_t)ops->random(ops->ctx);
	st->cookie_key[0] = ops->random(ops->ctx);
	st->cookie_key[1] = ops->random(ops->ctx);
	for (hs = 64; hs < 2 * c->max_conns; hs <<= 1)
		;
	st->hash_mask = hs - 1;
	st->hash = ops->alloc(ops->ctx, hs * sizeof(*st->hash));
	st->slots = ops->alloc(ops->ctx, c->max_conns * sizeof(*st->slots));
	st->slot_gen = ops->alloc(ops->ctx, c->max_conns * sizeof(*st->slot_gen));
	if (st->hash == NULL || st->slots == NULL || st->slot_gen == NULL || stk_arp_init(st) < 0)
		goto nomem_st;
	st->isn_key[0] = ops->random(ops->ctx);
	st->isn_key[1] = ops->random(ops->ctx);
	return st;
nomem_st:
	stk_destroy(st);
nomem:
	snprintf(errmsg, errlen, "out of memory");
	errno = ENOMEM;
	return NULL;
}

void
stk_destroy(struct stk *st)
{
	void *ctx;

	if (st == NULL)
		return;
	ctx = st->ops.ctx;
	if (st->slots != NULL)
		for (unsigned i = 0; i < st->cfg.max_conns; i++)
			if (st->slots[i] != NULL) {
				st->slots[i]->flags |= TF_DEAD; /* no events while tearing down */
				stk_tcb_release(st, st->slots[i]);
			}
	while (st->listeners != NULL) {
		struct stk_listener *l = st->listeners;

		st->listeners = l->next;
		st->ops.free(ctx, l);
	}
	stk_arp_fini(st);
	if (st->hash != NULL)
		st->ops.free(ctx, st->hash);
	if (st->slots != NULL)
		st->ops.free(ctx, st->slots);
	if (st->slot_gen != NULL)
		st->ops.free(ctx, st->slot_gen);
	st->ops.free(ctx, st);
}

void
stk_start(struct stk *st)
{
	st->now = st->ops.clock_ns(st->ops.ctx);
	stk_arp_gratuitous(st);
}

static void
stk_eth_input(struct stk *st, struct stk_buf *b, uint8_t *frame, uint32_t len, uint32_t flags)
{
	const struct stk_eth_hdr *eh = (const struct stk_eth_hdr *)frame;
	uint16_t type;

	STK_CTR(st, RX_FRAMES);
	STK_CTR_ADD(st, RX_BYTES, len);
	if (STK_UNLIKELY(len < STK_ETH_HLEN)) {
		STK_CTR(st, DROP_ETH_SHORT);
		goto drop;
	}
	/* ours, broadcast, or multicast (ARP requests are broadcast) */
	if (STK_UNLIKELY(memcmp(eh->dst, st->cfg.mac, 6) != 0 && !(eh->dst[0] & 1))) {
		STK_CTR(st, DROP_ETH_NOT_OURS);
		goto drop;
	}
	type = be16toh(eh->type);
	if (STK_LIKELY(type == STK_ETH_P_IP)) {
		stk_ip4_input(st, b, frame, len, flags);
		return;
	}
	if (type == STK_ETH_P_ARP) {
		stk_arp_input(st, b, frame, len);
		return;
	}
	STK_CTR(st, DROP_ETH_TYPE);
drop:
	stk_buf_free(st, b);
}

void
stk_input_burst(struct stk *st, const struct stk_rx *rx, unsigned n)
{
	if (n == 0)
		return;
	st->now = st->ops.clock_ns(st->ops.ctx);
	st->in_burst = st->cfg.ack_stretch > 2;
	for (unsigned i = 0; i < n; i++) {
		if (st->follow.c != NULL && stk_tcp_follow(st, rx[i].b, rx[i].data, rx[i].len, rx[i].flags))
			continue;
		st->follow.c = NULL; /* a run lasts while its frames come one after another */
		st->rx_more = i + 1 < n; /* a run can only start where a frame follows */
		stk_eth_input(st, rx[i].b, rx[i].data, rx[i].len, rx[i].flags);
	}
	st->follow.c = NULL;
	st->in_burst = false;
	stk_tcp_burst_acks(st);
}

unsigned
stk_poll(struct stk *st)
{
	unsigned n = 0;

	st->now = st->ops.clock_ns(st->ops.ctx);
	if (st->arp_next_poll != 0 && st->now >= st->arp_next_poll)
		n += stk_arp_poll(st);
	if (!LIST_EMPTY(&st->active) && st->timer_min != 0 && st->now >= st->timer_min)
		n += stk_tcp_timers_run(st);
	return n;
}

const uint64_t *
stk_counters(const struct stk *st)
{
	return st->ctr;
}

uint64_t
stk_bufs_held(const struct stk *st)
{
	return st->bufs_held;
}

void
stk_bufs_hold(struct stk *st)
{
	if (++st->bufs_held > st->ctr[STK_C_BUFS_HELD_PEAK])
		st->ctr[STK_C_BUFS_HELD_PEAK] = st->bufs_held;
}

void
stk_rx_pressure(struct stk *st, bool on)
{
	st->rx_pressure = on;
}

unsigned
stk_conns(const struct stk *st)
{
	return st->n_conns;
}

/* Internet checksum (RFC 1071): the ones'-complement sum of 16-bit words is
 * the end-around-carry sum of any wider words, folded at the end.
 *
 *   csum_scalar  64-bit words into two 128-bit accumulators (add + adc per
 *                word, two chains in flight); tails, and where no vector
 *                unit is known
 *   csum_sse2    32-bit words zero-extended into 64-bit lanes, 32 bytes per
 *                turn in two accumulators (SSE2: the x86-64 baseline)
 *   csum_avx2    the same 64 bytes per turn, picked at the first call when
 *                the CPU has AVX2 (Debian builds for the baseline)
 * A 64-bit lane takes 2^32 32-bit words before it could carry out, far beyond
 * any buffer here. No library in Debian offers this for plain buffers outside
 * DPDK (rte_raw_cksum), which stack/ must not include. */
static uint64_t
csum_add64(uint64_t a, uint64_t b)
{
	a += b;
	return a + (a < b);
}

static uint32_t
csum_fold64(uint64_t s)
{
	uint64_t t = (s & 0xffffffffu) + (s >> 32);

	t = (t & 0xffffffffu) + (t >> 32);
	return (uint32_t)t;
}

static uint32_t
csum_scalar(const uint8_t *p, size_t len, uint32_t sum)
{
	unsigned __int128 a = sum, b = 0;
	uint64_t s, t;

	while (len >= 32) {
		uint64_t w0, w1, w2, w3;

		memcpy(&w0, p, 8);
		memcpy(&w1, p + 8, 8);
		memcpy(&w2, p + 16, 8);
		memcpy(&w3, p + 24, 8);
		a += w0;
		b += w1;
		a += w2;
		b += w3;
		p += 32;
		len -= 32;
	}
	while (len >= 8) {
		uint64_t w;

		memcpy(&w, p, 8);
		a += w;
		p += 8;
		len -= 8;
	}
	if (len) {
		uint64_t w = 0;

		memcpy(&w, p, len); /* little-endian: the tail pads with zero bytes */
		b += w;
	}
	a += b;
	/* 128 -> 64 -> 32 bits, end-around carry each time */
	s = (uint64_t)a;
	t = (uint64_t)(a >> 64);
	return csum_fold64(csum_add64(s, t));
}

#if defined(__x86_64__)
/* sum plus the n 64-bit lane totals of a vector loop, folded to 32 bits */
static inline uint32_t
csum_add_lanes(uint32_t sum, const uint64_t *l, unsigned n)
{
	uint64_t s = sum;

	for (unsigned k = 0; k < n; k++)
		s = csum_add64(s, l[k]);
	return csum_fold64(s);
}

static uint32_t
csum_sse2(const uint8_t *p, size_t len, uint32_t sum)
{
	const __m128i z = _mm_setzero_si128();
	__m128i a = z, b = z;
	uint64_t l[4];
	size_t n = len & ~(size_t)31;

	for (size_t i = 0; i < n; i += 32) {
		__m128i v = _mm_loadu_si128((const __m128i *)(const void *)(p + i));
		__m128i w = _mm_loadu_si128((const __m128i *)(const void *)(p + i + 16));

		a = _mm_add_epi64(a, _mm_unpacklo_epi32(v, z));
		b = _mm_add_epi64(b, _mm_unpackhi_epi32(v, z));
		a = _mm_add_epi64(a, _mm_unpacklo_epi32(w, z));
		b = _mm_add_epi64(b, _mm_unpackhi_epi32(w, z));
	}
	_mm_storeu_si128((__m128i *)(void *)l, a);
	_mm_storeu_si128((__m128i *)(void *)(l + 2), b);
	return csum_scalar(p + n, len - n, csum_add_lanes(sum, l, 4));
}

__attribute__((target("avx2"))) static uint32_t
csum_avx2(const uint8_t *p, size_t len, uint32_t sum)
{
	const __m256i z = _mm256_setzero_si256();
	__m256i a = z, b = z;
	uint64_t l[8];
	size_t n = len & ~(size_t)63;

	for (size_t i = 0; i < n; i += 64) {
		__m256i v = _mm256_loadu_si256((const __m256i *)(const void *)(p + i));
		__m256i w = _mm256_loadu_si256((const __m256i *)(const void *)(p + i + 32));

		a = _mm256_add_epi64(a, _mm256_unpacklo_epi32(v, z));
		b = _mm256_add_epi64(b, _mm256_unpackhi_epi32(v, z));
		a = _mm256_add_epi64(a, _mm256_unpacklo_epi32(w, z));
		b = _mm256_add_epi64(b, _mm256_unpackhi_epi32(w, z));
	}
	_mm256_storeu_si256((__m256i *)(void *)l, a);
	_mm256_storeu_si256((__m256i *)(void *)(l + 4), b);
	/* the tail goes to legacy-SSE code: clear the upper halves first. GCC 12
	 * emits no VZEROUPPER before this tail call, and on Intel cores SSE code
	 * run with them dirty is slowed down (each instruction merges the upper
	 * half) until the next VZEROUPPER: this checksum took 6x its cycles, and
	 * the SSE code after it paid too (doc/benchmarks.md, B7) */
	_mm256_zeroupper();
	return csum_sse2(p + n, len - n, csum_add_lanes(sum, l, 8));
}

typedef uint32_t (*csum_fn)(const uint8_t *p, size_t len, uint32_t sum);

static uint32_t csum_pick(const uint8_t *p, size_t len, uint32_t sum);
static csum_fn csum_impl = csum_pick;

/* the first call: AVX2 when the CPU has it (a benign race: every thread
 * stores the same pointer) */
static uint32_t
csum_pick(const uint8_t *p, size_t len, uint32_t sum)
{
	__builtin_cpu_init();
	csum_impl = __builtin_cpu_supports("avx2") ? csum_avx2 : csum_sse2;
	return csum_impl(p, len, sum);
}

int
stk_csum_use(const char *impl)
{
	__builtin_cpu_init();
	if (strcmp(impl, "scalar") == 0)
		csum_impl = csum_scalar;
	else if (strcmp(impl, "sse2") == 0)
		csum_impl = csum_sse2;
	else if (strcmp(impl, "avx2") == 0 && __builtin_cpu_supports("avx2"))
		csum_impl = csum_avx2;
	else
		return -1;
	return 0;
}

const char *
stk_csum_impl(void)
{
	if (csum_impl == csum_pick)
		(void)stk_csum_partial("", 0, 0);
	return csum_impl == csum_avx2 ? "avx2" : csum_impl == csum_sse2 ? "sse2" : "scalar";
}

uint32_t
stk_csum_partial(const void *data, size_t len, uint32_t sum)
{
	/* short buffers (headers) in the scalar loop: no call through a pointer */
	if (len < 64)
		return csum_scalar(data, len, sum);
	return csum_impl(data, len, sum);
}
#else
const char *
stk_csum_impl(void)
{
	return "scalar";
}

int
stk_csum_use(const char *impl)
{
	return strcmp(impl, "scalar") == 0 ? 0 : -1;
}

uint32_t
stk_csum_partial(const void *data, size_t len, uint32_t sum)
{
	return csum_scalar(data, len, sum);
}
#endif

uint16_t
stk_csum_fold(uint32_t sum)
{
	sum = (sum & 0xffff) + (sum >> 16);
	sum = (sum & 0xffff) + (sum >> 16);
	return (uint16_t)~sum;
}
