/* SPDX-License-Identifier: BSD-3-Clause
 * harness.c — see harness.h. Every check here fails the test that caused it:
 * a stack that transmits a frame with a wrong checksum, the wrong source, or
 * hands the application a DATA range outside its buffer. The checks run per
 * frame, buffer and event are REQUIREs (../t_check.h): a passing ck_assert
 * costs Check a write() of its location, which made the stack suites
 * syscall-bound (minutes under valgrind).
 */
#include "harness.h"
#include "wire.h"

#include "../t_check.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const uint8_t H_OUR_MAC[6] = {0x02, 0x00, 0x00, 0x00, 0x00, 0x02};
const uint8_t H_PEER_MAC[6] = {0x02, 0x00, 0x00, 0x00, 0x00, 0x01};
const uint8_t H_PEER2_MAC[6] = {0x02, 0x00, 0x00, 0x00, 0x00, 0x03};
const uint8_t H_BCAST[6] = {0xff, 0xff, 0xff, 0xff, 0xff, 0xff};

#define H_BUF_MAGIC 0x4b425453u /* "STBK" */
#define H_BUF_DEAD 0xdeadbeefu
#define H_ALLOC_MAGIC 0x414c4f43u
#define H_ALLOC_DEAD 0xfee1deadu

struct stk_buf {
	uint32_t magic;
	uint32_t size;
	struct h *owner;
	uint8_t data[];
};

struct h_alloc_hdr {
	uint32_t magic;
	uint32_t pad;
	size_t size;
};

#define H_MAX_PEERS 16
static struct h_peer *h_peers_of[H_MAX_PEERS];
static struct h *h_peers_h[H_MAX_PEERS];

/* ------------------------------------------------------------------ misc */

static void *
xmalloc(size_t n)
{
	void *p = malloc(n);

	ck_assert_msg(p != NULL, "out of memory (%zu bytes)", n);
	return p;
}

static void *
xcalloc(size_t a, size_t n)
{
	void *p = calloc(a, n);

	ck_assert_msg(p != NULL, "out of memory");
	return p;
}

uint64_t
h_rand(uint64_t *s)
{
	uint64_t x = *s;

	x ^= x << 13;
	x ^= x >> 7;
	x ^= x << 17;
	*s = x;
	return x;
}

uint64_t
h_fnv_init(void)
{
	return 0xcbf29ce484222325ull;
}

uint64_t
h_fnv(uint64_t h, const uint8_t *p, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		h ^= p[i];
		h *= 0x100000001b3ull;
	}
	return h;
}

/* ones' complement of the folded sum; 0 over data that holds a valid checksum.
 * Computed big-endian, independently of libstk's helpers. Host-order result. */
uint16_t
h_csum(const void *data, size_t len, uint32_t sum)
{
	return (uint16_t)~wire_sum(data, len, sum);
}

static uint32_t
h_pseudo(uint32_t src_host, uint32_t dst_host, uint8_t proto, uint32_t l4len)
{
	uint32_t s = 0;

	s += src_host >> 16;
	s += src_host & 0xffff;
	s += dst_host >> 16;
	s += dst_host & 0xffff;
	s += proto;
	s += l4len;
	return s;
}





void
h_fill_pat(uint8_t *dst, uint64_t off, uint32_t len)
{
	for (uint32_t i = 0; i < len; i++)
		dst[i] = h_pat(off + i);
}

bool
h_check_pat(const uint8_t *buf, uint64_t off, uint32_t len)
{
	for (uint32_t i = 0; i < len; i++)
		if (buf[i] != h_pat(off + i))
			return false;
	return true;
}

/* ------------------------------------------------------------------ buffers */

struct stk_buf *
h_buf_new(struct h *h, uint32_t len, uint8_t **data)
{
	struct stk_buf *b = xmalloc(sizeof(*b) + len);

	b->magic = H_BUF_MAGIC;
	b->size = len;
	b->owner = h;
	h->live_bufs++;
	h->bufs_made++;
	if (h->live_bufs > h->peak_bufs)
		h->peak_bufs = h->live_bufs;
	if (data)
		*data = b->data;
	return b;
}

void
h_buf_put(struct h *h, struct stk_buf *b)
{
	REQUIRE(b != NULL, "free of a NULL buffer");
	REQUIRE(b->magic == H_BUF_MAGIC, "free of a buffer with bad magic 0x%08x (double free?)",
		b->magic);
	REQUIRE(b->owner == h, "buffer freed through the wrong stack");
	b->magic = H_BUF_DEAD;
	h->live_bufs--;
	REQUIRE(h->live_bufs >= 0, "more buffers freed than allocated");
	free(b);
}

static void
check_range(const struct stk_buf *b, const uint8_t *data, uint32_t len, const char *what)
{
	REQUIRE(b->magic == H_BUF_MAGIC, "%s: buffer with bad magic 0x%08x (use after free?)", what,
		b->magic);
	REQUIRE(data >= b->data && data + len <= b->data + b->size,
		"%s: range [%p, +%u) outside its buffer [%p, +%u)", what, (const void *)data, len,
		(const void *)b->data, b->size);
}

/* ------------------------------------------------------------------ ops */

static struct stk_buf *
op_tx_alloc(void *ctx, uint32_t len, uint8_t **data)
{
	struct h *h = ctx;

	if (h->fail_tx_alloc)
		return NULL;
	REQUIRE(len > 0 && len <= H_MAX_FRAME, "tx_alloc of %u bytes", len);
	return h_buf_new(h, len, data);
}

static void
op_buf_free(void *ctx, struct stk_buf *b)
{
	h_buf_put(ctx, b);
}

static uint64_t
op_clock(void *ctx)
{
	struct h *h = ctx;

	return *h->clock;
}

static uint64_t
op_random(void *ctx)
{
	struct h *h = ctx;

	return h_rand(&h->rng);
}

static void *
op_alloc(void *ctx, size_t size)
{
	struct h *h = ctx;
	struct h_alloc_hdr *a;

	if (h->fail_alloc)
		return NULL;
	a = calloc(1, sizeof(*a) + size);
	if (a == NULL)
		return NULL;
	a->magic = H_ALLOC_MAGIC;
	a->size = size;
	h->live_allocs++;
	h->allocs_made++;
	return a + 1;
}

static void
op_free(void *ctx, void *p)
{
	struct h *h = ctx;
	struct h_alloc_hdr *a;

	if (p == NULL)
		return;
	a = (struct h_alloc_hdr *)p - 1;
	REQUIRE(a->magic == H_ALLOC_MAGIC, "ops.free of a block with bad magic (double free?)");
	a->magic = H_ALLOC_DEAD;
	h->live_allocs--;
	free(a);
}

static void
op_log(void *ctx, int level, const char *msg)
{
	struct h *h = ctx;

	REQUIRE(msg != NULL, "log with a NULL message");
	if (h->verbose)
		fprintf(stderr, "[%s %8.3f ms] <%d> %s\n", h->name ? h->name : "stk",
			(double)*h->clock / 1e6, level, msg);
}

static void
pkt_validate(struct h *h, const struct h_pkt *k)
{
	const uint8_t *f = k->frame;

	REQUIRE(k->len >= STK_ETH_HLEN, "transmitted a %u-byte frame", k->len);
	REQUIRE(memcmp(k->src, h->mac, 6) == 0, "transmitted a frame with a foreign source MAC");
	if (k->type == STK_ETH_P_ARP) {
		REQUIRE(k->is_arp, "transmitted a short ARP frame (%u bytes)", k->len);
		return;
	}
	REQUIRE(k->type == STK_ETH_P_IP, "transmitted ethertype 0x%04x", k->type);
	REQUIRE(k->is_ip, "transmitted a short IPv4 frame (%u bytes)", k->len);
	REQUIRE(k->ihl == 5, "transmitted IPv4 with ihl %u (no options out)", k->ihl);
	REQUIRE(14u + k->tot_len <= k->len, "IPv4 tot_len %u beyond the %u-byte frame", k->tot_len,
		k->len);
	REQUIRE(14u + k->tot_len == k->len || k->len == 60,
		"IPv4 frame of %u bytes carries %u bytes after tot_len %u", k->len,
		k->len - 14 - k->tot_len, k->tot_len);
	REQUIRE(k->ip_src == h->ip, "transmitted IPv4 from %08x, not our %08x", k->ip_src, h->ip);
	REQUIRE(k->ttl > 0, "transmitted TTL 0");
	REQUIRE((k->frag & (STK_IP4_MF | STK_IP4_OFFMASK)) == 0, "transmitted a fragment");
	if (k->txflags & STK_TX_IP_CSUM)
		REQUIRE(g16(f + 14 + 10) == 0, "IP checksum left to the port but field is 0x%04x",
			g16(f + 24));
	else
		REQUIRE(h_csum(f + 14, 20, 0) == 0, "transmitted a bad IPv4 header checksum");
	if (k->proto == STK_IPPROTO_TCP) {
		uint32_t l4len = k->tot_len - 20u;

		REQUIRE(k->is_tcp, "transmitted a malformed TCP header (%u bytes, hlen %u)", l4len,
			k->hlen);
		if (k->txflags & STK_TX_TCP_CSUM) {
			uint32_t ps = wire_sum(NULL, 0, h_pseudo(k->ip_src, k->ip_dst, 6, l4len));

			REQUIRE(g16(f + 34 + 16) == (uint16_t)ps,
				"TCP checksum left to the port: field 0x%04x, pseudo-header "
				"sum 0x%04x",
				g16(f + 34 + 16), ps);
		} else {
			REQUIRE(h_csum(f + 34, l4len, h_pseudo(k->ip_src, k->ip_dst, 6, l4len)) ==
					0,
				"transmitted a bad TCP checksum");
		}
	} else if (k->proto == STK_IPPROTO_ICMP) {
		REQUIRE(k->is_icmp, "transmitted a short ICMP message");
		REQUIRE(h_csum(f + 34, k->tot_len - 20u, 0) == 0,
			"transmitted a bad ICMP checksum");
	} else {
		ck_abort_msg("transmitted IP protocol %u", k->proto);
	}
}

static void h_peer_autots(struct h *h, const struct h_pkt *k);

static void
op_tx_record(struct h *h, const uint8_t *data, uint32_t len, uint32_t flags)
{
	struct h_pkt *k = xcalloc(1, sizeof(*k));

	k->frame = xmalloc(len ? len : 1);
	memcpy(k->frame, data, len);
	k->len = len;
	k->txflags = flags;
	h_parse(k, h);
	pkt_validate(h, k);
	if (h->txq_tail)
		h->txq_tail->next = k;
	else
		h->txq_head = k;
	h->txq_tail = k;
	h->txq_len++;
}

static int
op_tx(void *ctx, struct stk_buf *b, uint8_t *data, uint32_t len, uint32_t flags)
{
	struct h *h = ctx;

	REQUIRE(b != NULL && data != NULL, "tx of a NULL buffer");
	check_range(b, data, len, "tx");
	h->tx_total++;
	if (h->tx_hook) {
		struct h_pkt k = {.frame = data, .len = len, .txflags = flags};

		h_parse(&k, h);
		pkt_validate(h, &k);
		h->tx_hook(h, data, len, flags);
	} else {
		op_tx_record(h, data, len, flags);
	}
	h_buf_put(h, b);
	return 0;
}

static struct h_conn *
conn_get(struct h *h, uint32_t id)
{
	struct h_conn *x = h_conn_id(h, id);

	if (x)
		return x;
	x = xcalloc(1, sizeof(*x));
	x->id = id;
	x->keep_rx = true;
	x->rx_fnv = h_fnv_init();
	x->next = h->conns;
	h->conns = x;
	return x;
}

static void
op_event(void *ctx, struct stk_tcb *c, uint64_t user, enum stk_ev ev, int reason, struct stk_buf *b,
	 uint8_t *data, uint32_t len)
{
	struct h *h = ctx;
	struct h_conn *x;
	struct h_ev *e;
	uint32_t id;

	REQUIRE(c != NULL, "event %d with a NULL tcb", ev);
	id = stk_tcp_id(c);
	REQUIRE(id != 0, "event %d for a tcb with id 0", ev);
	x = conn_get(h, id);
	REQUIRE(x->terminal == 0, "event %d for tcb %u after its terminal event %d", ev, id,
		x->terminal);
	if (h->n_evs == h->cap_evs) {
		h->cap_evs = h->cap_evs ? h->cap_evs * 2 : 256;
		h->evs = realloc(h->evs, h->cap_evs * sizeof(*h->evs));
		REQUIRE(h->evs != NULL, "out of memory (events)");
	}
	e = &h->evs[h->n_evs++];
	*e = (struct h_ev){
		.ev = ev, .id = id, .user = user, .reason = reason, .len = len, .t_ns = *h->clock};
	x->c = c;
	x->user = user;
	if (h->verbose)
		fprintf(stderr, "[%s %8.3f ms] event %d tcb %u user %llu reason %d len %u\n",
			h->name ? h->name : "stk", (double)*h->clock / 1e6, ev, id,
			(unsigned long long)user, reason, len);
	switch (ev) {
	case STK_EV_DATA:
		REQUIRE(b != NULL && data != NULL, "DATA without a buffer");
		check_range(b, data, len, "DATA");
		REQUIRE(len > 0, "DATA event of 0 bytes");
		REQUIRE(x->terminal == 0 && !x->peer_closed, "DATA after PEER_CLOSED");
		if (x->keep_rx) {
			if (x->rx_len + len > x->rx_cap) {
				x->rx_cap = (x->rx_len + len) * 2;
				x->rx = realloc(x->rx, x->rx_cap);
				REQUIRE(x->rx != NULL, "out of memory (delivered bytes)");
			}
			memcpy(x->rx + x->rx_len, data, len);
		}
		x->rx_len += len;
		x->rx_fnv = h_fnv(x->rx_fnv, data, len);
		x->n_data++;
		break;
	case STK_EV_CONNECTED:
		x->connected = true;
		h->last_new = c;
		break;
	case STK_EV_ACCEPTED:
		x->accepted = true;
		h->last_new = c;
		break;
	case STK_EV_PEER_CLOSED:
		x->peer_closed = true;
		break;
	default:
		break;
	}
	if (ev != STK_EV_DATA)
		REQUIRE(b == NULL, "event %d with a buffer", ev);
	if (h->ev_hook)
		h->ev_hook(h, c, user, ev, reason, data, len);
	if (ev == STK_EV_DATA)
		h_buf_put(h, b); /* the application's: freed with its own free */
	if (ev == STK_EV_CLOSED || ev == STK_EV_RESET || ev == STK_EV_TIMEOUT ||
	    ev == STK_EV_ERROR) {
		x->terminal = ev;
		x->terminal_reason = reason;
		x->c = NULL;
		if (h->last_new == c)
			h->last_new = NULL;
		for (int i = 0; i < H_MAX_PEERS; i++)
			if (h_peers_h[i] == h && h_peers_of[i]->c == c)
				h_peers_of[i]->c = NULL;
	}
}

/* ------------------------------------------------------------------ lifecycle */

struct h *
h_new(void)
{
	struct h *h = xcalloc(1, sizeof(*h));

	h->clock = &h->own_clock;
	h->own_clock = 1000000000ull; /* t = 1 s: never 0 */
	h->rng = 0x9e3779b97f4a7c15ull;
	h->verbose = getenv("STK_TEST_VERBOSE") != NULL;
	stk_config_init(&h->cfg);
	memcpy(h->cfg.mac, H_OUR_MAC, 6);
	h->cfg.ip = h_ip(H_OUR_IP);
	h->cfg.prefix = H_PREFIX;
	h->cfg.gateway = 0;
	h->cfg.tx_csum_offload = false;
	h->cfg.time_wait_ms = 1000; /* the tests' connections end within their runs */
	h->ops = (struct stk_ops){
		.ctx = h,
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
	return h;
}

void
h_static_peer(struct h *h)
{
	unsigned i = h->cfg.n_static++;

	ck_assert(i < STK_MAX_STATIC_NEIGH);
	h->cfg.neigh[i].ip = h_ip(H_PEER_IP);
	memcpy(h->cfg.neigh[i].mac, H_PEER_MAC, 6);
}

struct stk *
h_try_create(struct h *h, char *errmsg, size_t errlen)
{
	memcpy(h->mac, h->cfg.mac, 6);
	h->ip = __builtin_bswap32(h->cfg.ip);
	h->st = stk_create(&h->cfg, &h->ops, errmsg, errlen);
	return h->st;
}

void
h_create(struct h *h)
{
	char err[256] = "";

	ck_assert_msg(h_try_create(h, err, sizeof(err)) != NULL, "stk_create failed: %s", err);
}

static void
free_pkts(struct h_pkt *k)
{
	while (k) {
		struct h_pkt *n = k->next;

		free(k->frame);
		free(k);
		k = n;
	}
}

struct h *H;

void
h_fixture_setup(void)
{
	H = h_new();
	h_static_peer(H);
}

void
h_fixture_teardown(void)
{
	h_destroy(H);
	H = NULL;
}

void
h_destroy(struct h *h)
{
	struct h_conn *x, *n;

	if (h == NULL)
		return;
	if (h->st) {
		h->tx_hook = NULL; /* frames sent while tearing down land in the queue */
		stk_destroy(h->st);
		h->st = NULL;
	}
	free_pkts(h->txq_head);
	free_pkts(h->popped);
	for (int i = 0; i < H_MAX_PEERS; i++)
		if (h_peers_h[i] == h)
			h_peers_h[i] = NULL, h_peers_of[i] = NULL;
	for (x = h->conns; x; x = n) {
		n = x->next;
		free(x->rx);
		free(x);
	}
	free(h->evs);
	{
		long bufs = h->live_bufs, allocs = h->live_allocs;

		free(h);
		ck_assert_msg(bufs == 0, "leak: %ld buffers still live after stk_destroy", bufs);
		ck_assert_msg(allocs == 0,
			      "leak: %ld ops.alloc blocks still live after stk_destroy", allocs);
	}
}

/* ------------------------------------------------------------------ clock */

uint64_t
h_now_ms(const struct h *h)
{
	return *h->clock / 1000000ull;
}

void
h_advance_ns(struct h *h, uint64_t ns)
{
	*h->clock += ns;
}

unsigned
h_poll(struct h *h)
{
	return stk_poll(h->st);
}

void
h_advance(struct h *h, uint64_t ms)
{
	*h->clock += ms * 1000000ull;
	stk_poll(h->st);
}

uint64_t
h_run(struct h *h, uint64_t ms, uint64_t step_ms, bool stop_on_tx)
{
	uint64_t done = 0;

	if (step_ms == 0)
		step_ms = 1;
	while (done < ms) {
		if (stop_on_tx && h->txq_len)
			break;
		h_advance(h, step_ms);
		done += step_ms;
	}
	return done;
}

/* ------------------------------------------------------------------ counters */

uint64_t
h_ctr(const struct h *h, enum stk_ctr c)
{
	return stk_counters(h->st)[c];
}

uint64_t
h_drops(const struct h *h)
{
	uint64_t s = 0;

	for (int i = 0; i < STK_C__COUNT; i++)
		if (strncmp(stk_counter_names[i], "drop_", 5) == 0)
			s += stk_counters(h->st)[i];
	return s;
}

void
h_snap(const struct h *h, struct h_snap *s)
{
	memcpy(s->v, stk_counters(h->st), sizeof(s->v));
}

uint64_t
h_delta(const struct h *h, const struct h_snap *s, enum stk_ctr c)
{
	return stk_counters(h->st)[c] - s->v[c];
}

uint64_t
h_drops_delta(const struct h *h, const struct h_snap *s)
{
	uint64_t d = 0;

	for (int i = 0; i < STK_C__COUNT; i++)
		if (strncmp(stk_counter_names[i], "drop_", 5) == 0)
			d += stk_counters(h->st)[i] - s->v[i];
	return d;
}

void
h_assert_only(const struct h *h, const struct h_snap *s, ...)
{
	bool allowed[STK_C__COUNT] = {false};
	va_list ap;
	int c;

	allowed[STK_C_RX_FRAMES] = allowed[STK_C_RX_BYTES] = allowed[STK_C_IP_RX] = true;
	allowed[STK_C_TCP_SEGS_IN] = allowed[STK_C_TCP_COALESCED] = allowed[STK_C_ARP_RX] = true;
	va_start(ap, s);
	while ((c = va_arg(ap, int)) >= 0)
		allowed[c] = true;
	va_end(ap);
	for (int i = 0; i < STK_C__COUNT; i++)
		if (!allowed[i])
			REQUIRE(stk_counters(h->st)[i] == s->v[i], "counter %s changed by %lld",
				stk_counter_names[i],
				(long long)(stk_counters(h->st)[i] - s->v[i]));
}

/* ------------------------------------------------------------------ tx queue */

unsigned
h_txq(const struct h *h)
{
	return h->txq_len;
}

struct h_pkt *
h_tx_pop(struct h *h)
{
	struct h_pkt *k = h->txq_head;

	if (k == NULL)
		return NULL;
	h->txq_head = k->next;
	if (h->txq_head == NULL)
		h->txq_tail = NULL;
	h->txq_len--;
	k->next = h->popped;
	h->popped = k;
	h_peer_autots(h, k);
	return k;
}

struct h_pkt *
h_tx_must(struct h *h, const char *what)
{
	struct h_pkt *k = h_tx_pop(h);

	ck_assert_msg(k != NULL, "expected a transmitted frame: %s", what);
	return k;
}

struct h_pkt *
h_tx_tcp(struct h *h, const char *what)
{
	struct h_pkt *k = h_tx_must(h, what);

	ck_assert_msg(k->is_tcp, "expected a TCP segment (%s), got ethertype 0x%04x proto %u", what,
		      k->type, k->proto);
	return k;
}

unsigned
h_tx_flush(struct h *h)
{
	unsigned n = 0;
	struct h_pkt *k;

	while ((k = h->txq_head) != NULL) {
		h->txq_head = k->next;
		h->txq_len--;
		h_peer_autots(h, k);
		free(k->frame);
		free(k);
		n++;
	}
	h->txq_tail = NULL;
	return n;
}

unsigned
h_tx_drain(struct h *h)
{
	unsigned n = 0;

	while (h_tx_pop(h))
		n++;
	return n;
}

static void
parse_tcp_opts(struct h_pkt *k, const uint8_t *o, unsigned len, bool *bad)
{
	unsigned i = 0;

	while (i < len) {
		uint8_t kind = o[i], l;

		if (kind == STK_TCPOPT_EOL)
			break;
		if (kind == STK_TCPOPT_NOP) {
			i++;
			continue;
		}
		if (i + 1 >= len) {
			*bad = true;
			return;
		}
		l = o[i + 1];
		if (l < 2 || i + l > len) {
			*bad = true;
			return;
		}
		switch (kind) {
		case STK_TCPOPT_MSS:
			if (l != 4)
				*bad = true;
			else
				k->o.has_mss = true, k->o.mss = g16(o + i + 2);
			break;
		case STK_TCPOPT_WSCALE:
			if (l != 3)
				*bad = true;
			else
				k->o.has_ws = true, k->o.ws = o[i + 2];
			break;
		case STK_TCPOPT_SACK_PERM:
			if (l != 2)
				*bad = true;
			else
				k->o.sack_perm = true;
			break;
		case STK_TCPOPT_TS:
			if (l != 10)
				*bad = true;
			else
				k->o.has_ts = true, k->o.tsval = g32(o + i + 2),
				k->o.tsecr = g32(o + i + 6);
			break;
		case STK_TCPOPT_SACK:
			if ((l - 2) % 8 || l < 10 || (l - 2) / 8 > H_MAX_SACK) {
				*bad = true;
			} else {
				k->o.nsack = (l - 2u) / 8u;
				for (unsigned j = 0; j < k->o.nsack; j++) {
					k->o.sack[j][0] = g32(o + i + 2 + 8 * j);
					k->o.sack[j][1] = g32(o + i + 6 + 8 * j);
				}
			}
			break;
		default:
			break;
		}
		i += l;
	}
}

void
h_parse(struct h_pkt *k, const struct h *h)
{
	const uint8_t *f = k->frame;
	uint32_t len = k->len;

	(void)h;
	if (len < 14)
		return;
	memcpy(k->dst, f, 6);
	memcpy(k->src, f + 6, 6);
	k->type = g16(f + 12);
	if (k->type == STK_ETH_P_ARP && len >= 14 + 28) {
		const uint8_t *a = f + 14;

		k->is_arp = true;
		k->arp_hrd = g16(a);
		k->arp_pro = g16(a + 2);
		k->arp_hln = a[4];
		k->arp_pln = a[5];
		k->arp_op = g16(a + 6);
		memcpy(k->arp_sha, a + 8, 6);
		k->arp_spa = g32(a + 14);
		memcpy(k->arp_tha, a + 18, 6);
		k->arp_tpa = g32(a + 24);
		return;
	}
	if (k->type != STK_ETH_P_IP || len < 34)
		return;
	{
		const uint8_t *ip = f + 14;

		if ((ip[0] >> 4) != 4)
			return;
		k->ihl = ip[0] & 15;
		k->tos = ip[1];
		k->tot_len = g16(ip + 2);
		k->ip_id = g16(ip + 4);
		k->frag = g16(ip + 6);
		k->ttl = ip[8];
		k->proto = ip[9];
		k->ip_src = g32(ip + 12);
		k->ip_dst = g32(ip + 16);
		if (k->ihl < 5 || 14u + k->tot_len > len || k->tot_len < k->ihl * 4u)
			return;
		k->is_ip = true;
		{
			const uint8_t *l4 = ip + k->ihl * 4;
			uint32_t l4len = k->tot_len - k->ihl * 4u;

			if (k->proto == STK_IPPROTO_ICMP && l4len >= 8) {
				k->is_icmp = true;
				k->icmp_type = l4[0];
				k->icmp_code = l4[1];
				k->icmp_id = g16(l4 + 4);
				k->icmp_seq = g16(l4 + 6);
				k->payload = l4 + 8;
				k->plen = l4len - 8;
			} else if (k->proto == STK_IPPROTO_TCP && l4len >= 20) {
				bool bad = false;

				k->sport = g16(l4);
				k->dport = g16(l4 + 2);
				k->seq = g32(l4 + 4);
				k->ack = g32(l4 + 8);
				k->hlen = (l4[12] >> 4) * 4u;
				k->flags = l4[13];
				k->win = g16(l4 + 14);
				if (k->hlen < 20 || k->hlen > l4len)
					return;
				parse_tcp_opts(k, l4 + 20, k->hlen - 20, &bad);
				if (bad)
					return;
				k->is_tcp = true;
				k->payload = l4 + k->hlen;
				k->plen = l4len - k->hlen;
			}
		}
	}
}

/* ------------------------------------------------------------------ injection */

void
h_inject(struct h *h, const uint8_t *frame, uint32_t len, uint32_t flags)
{
	uint8_t *d;
	struct stk_buf *b = h_buf_new(h, len, &d);
	struct stk_rx rx;

	if (len)
		memcpy(d, frame, len);
	rx = (struct stk_rx){.b = b, .data = d, .len = len, .flags = flags};
	stk_input_burst(h->st, &rx, 1);
}

void
h_inject_burst(struct h *h, const uint8_t *const *frames, const uint32_t *lens, unsigned n)
{
	struct stk_rx *rx = xcalloc(n ? n : 1, sizeof(*rx));

	for (unsigned i = 0; i < n; i++) {
		uint8_t *d;

		rx[i].b = h_buf_new(h, lens[i], &d);
		memcpy(d, frames[i], lens[i]);
		rx[i].data = d;
		rx[i].len = lens[i];
	}
	stk_input_burst(h->st, rx, n);
	free(rx);
}

/* ------------------------------------------------------------------ builders */

uint32_t
h_build_eth(uint8_t *out, const uint8_t *dst, const uint8_t *src, uint16_t type)
{
	memcpy(out, dst, 6);
	memcpy(out + 6, src, 6);
	p16(out + 12, type);
	return 14;
}

uint32_t
h_build_arp(uint8_t *out, const uint8_t *eth_dst, const uint8_t *eth_src, uint16_t op,
	    const uint8_t *sha, uint32_t spa, const uint8_t *tha, uint32_t tpa)
{
	static const uint8_t zero[6];
	uint8_t *a = out + h_build_eth(out, eth_dst, eth_src, STK_ETH_P_ARP);

	p16(a, STK_ARP_HRD_ETHER);
	p16(a + 2, STK_ETH_P_IP);
	a[4] = 6;
	a[5] = 4;
	p16(a + 6, op);
	memcpy(a + 8, sha, 6);
	p32(a + 14, spa);
	memcpy(a + 18, tha ? tha : zero, 6);
	p32(a + 24, tpa);
	return 14 + 28;
}

void
h_arp_request(struct h *h, const uint8_t *mac, uint32_t ip, uint32_t target_ip)
{
	uint8_t f[64];
	uint32_t n = h_build_arp(f, H_BCAST, mac, STK_ARP_OP_REQUEST, mac, ip, NULL, target_ip);

	h_inject(h, f, n, 0);
}

void
h_arp_reply(struct h *h, const uint8_t *mac, uint32_t ip)
{
	uint8_t f[64];
	uint32_t n = h_build_arp(f, h->mac, mac, STK_ARP_OP_REPLY, mac, ip, h->mac, h->ip);

	h_inject(h, f, n, 0);
}

void
h_fix_ip_csum(uint8_t *frame)
{
	uint8_t *ip = frame + 14;
	unsigned hl = (ip[0] & 15) * 4u;

	p16(ip + 10, 0);
	p16(ip + 10, h_csum(ip, hl, 0));
}

uint32_t
h_build_ip4(struct h *h, uint8_t *out, const uint8_t *src_mac, uint32_t src, uint32_t dst,
	    uint8_t proto, const uint8_t *l4, uint32_t l4len)
{
	uint8_t *ip = out + h_build_eth(out, h->mac, src_mac, STK_ETH_P_IP);
	static uint16_t id = 1;

	ck_assert(l4len + 34 <= H_MAX_FRAME);
	ip[0] = 0x45;
	ip[1] = 0;
	p16(ip + 2, (uint16_t)(20 + l4len));
	p16(ip + 4, id++);
	p16(ip + 6, STK_IP4_DF);
	ip[8] = 64;
	ip[9] = proto;
	p32(ip + 12, src);
	p32(ip + 16, dst);
	h_fix_ip_csum(out);
	memmove(ip + 20, l4, l4len);
	return 34 + l4len;
}

uint32_t
h_build_icmp_echo(struct h *h, uint8_t *out, uint8_t type, uint16_t id, uint16_t seq,
		  const uint8_t *payload, uint32_t plen)
{
	uint8_t m[H_MAX_FRAME];

	m[0] = type;
	m[1] = 0;
	p16(m + 2, 0);
	p16(m + 4, id);
	p16(m + 6, seq);
	memcpy(m + 8, payload, plen);
	p16(m + 2, h_csum(m, 8 + plen, 0));
	return h_build_ip4(h, out, H_PEER_MAC, H_PEER_IP, h->ip, STK_IPPROTO_ICMP, m, 8 + plen);
}

void
h_fix_tcp_csum(uint8_t *frame, uint32_t l4len)
{
	uint8_t *ip = frame + 14;
	uint8_t *t = ip + (ip[0] & 15) * 4u;

	if (l4len < 18)
		return;
	p16(t + 16, 0);
	p16(t + 16, h_csum(t, l4len, h_pseudo(g32(ip + 12), g32(ip + 16), 6, l4len)));
}

static unsigned
build_opts(uint8_t *o, const struct h_peer *p, const struct h_topts *x)
{
	unsigned n = 0;
	bool ts = false;
	uint32_t tsval = 0, tsecr = 0;

	if (x && x->raw) {
		memcpy(o, x->raw, x->rawlen);
		return x->rawlen;
	}
	if (x && x->has_ts)
		ts = true, tsval = x->tsval, tsecr = x->tsecr;
	else if (p->ts && !(x && x->no_auto_ts))
		ts = true, tsval = p->tsval, tsecr = p->ts_recent;
	if (x && x->has_mss) {
		o[n++] = STK_TCPOPT_MSS;
		o[n++] = 4;
		p16(o + n, x->mss);
		n += 2;
	}
	if (x && x->sack_perm && ts) {
		o[n++] = STK_TCPOPT_SACK_PERM;
		o[n++] = 2;
	} else if (x && x->sack_perm) {
		o[n++] = STK_TCPOPT_NOP;
		o[n++] = STK_TCPOPT_NOP;
		o[n++] = STK_TCPOPT_SACK_PERM;
		o[n++] = 2;
	} else if (ts) {
		o[n++] = STK_TCPOPT_NOP;
		o[n++] = STK_TCPOPT_NOP;
	}
	if (ts) {
		o[n++] = STK_TCPOPT_TS;
		o[n++] = 10;
		p32(o + n, tsval);
		p32(o + n + 4, tsecr);
		n += 8;
	}
	if (x && x->has_ws) {
		o[n++] = STK_TCPOPT_NOP;
		o[n++] = STK_TCPOPT_WSCALE;
		o[n++] = 3;
		o[n++] = x->ws;
	}
	if (x && x->nsack) {
		o[n++] = STK_TCPOPT_NOP;
		o[n++] = STK_TCPOPT_NOP;
		o[n++] = STK_TCPOPT_SACK;
		o[n++] = (uint8_t)(2 + 8 * x->nsack);
		for (unsigned j = 0; j < x->nsack; j++) {
			p32(o + n, x->sack[j][0]);
			p32(o + n + 4, x->sack[j][1]);
			n += 8;
		}
	}
	ck_assert_msg(n <= 40 && n % 4 == 0, "builder: %u option bytes", n);
	return n;
}

uint32_t
h_build_tcp(struct h *h, uint8_t *out, const struct h_peer *p, uint8_t flags, uint32_t seq,
	    uint32_t ack, uint16_t win, const struct h_topts *o, const uint8_t *payload,
	    uint32_t len)
{
	uint8_t seg[H_MAX_FRAME];
	unsigned ol = build_opts(seg + 20, p, o);
	unsigned hl = 20 + ol;

	ck_assert(hl + len + 34 <= H_MAX_FRAME);
	p16(seg, p->port);
	p16(seg + 2, p->lport);
	p32(seg + 4, seq);
	p32(seg + 8, ack);
	seg[12] = (uint8_t)(((hl + 3) / 4) << 4);
	seg[13] = flags;
	p16(seg + 14, win);
	p16(seg + 16, 0);
	p16(seg + 18, 0);
	if (len)
		memcpy(seg + hl, payload, len);
	p16(seg + 16, h_csum(seg, hl + len, h_pseudo(p->ip, h->ip, 6, hl + len)));
	return h_build_ip4(h, out, p->mac, p->ip, h->ip, STK_IPPROTO_TCP, seg, hl + len);
}

void
h_tcp_seg(struct h *h, struct h_peer *p, uint8_t flags, uint32_t seq, uint32_t ack, uint16_t win,
	  const struct h_topts *o, const uint8_t *payload, uint32_t len)
{
	uint8_t f[H_MAX_FRAME];
	uint32_t n = h_build_tcp(h, f, p, flags, seq, ack, win, o, payload, len);

	if (p->ts)
		p->tsval++;
	h_inject(h, f, n, 0);
}

void
h_peer_data(struct h *h, struct h_peer *p, const uint8_t *payload, uint32_t len)
{
	h_tcp_seg(h, p, STK_TCP_ACK | STK_TCP_PSH, p->snd_nxt, p->rcv_nxt, p->win, NULL, payload,
		  len);
	p->snd_nxt += len;
}

void
h_peer_ack(struct h *h, struct h_peer *p)
{
	h_tcp_seg(h, p, STK_TCP_ACK, p->snd_nxt, p->rcv_nxt, p->win, NULL, NULL, 0);
}

void
h_peer_saw(struct h_peer *p, const struct h_pkt *k)
{
	if (k->is_tcp && k->o.has_ts)
		p->ts_recent = k->o.tsval;
}

static void
h_peer_autots(struct h *h, const struct h_pkt *k)
{
	if (!k->is_tcp)
		return;
	for (int i = 0; i < H_MAX_PEERS; i++) {
		struct h_peer *p = h_peers_of[i];

		if (h_peers_h[i] == h && p && k->dport == p->port && k->sport == p->lport &&
		    k->ip_dst == p->ip)
			h_peer_saw(p, k);
	}
}

void
h_peer_init(struct h_peer *p, uint16_t port, uint16_t lport)
{
	memset(p, 0, sizeof(*p));
	memcpy(p->mac, H_PEER_MAC, 6);
	p->ip = H_PEER_IP;
	p->port = port;
	p->lport = lport;
	p->win = 65535;
	p->tsval = 1000;
}

static void
peer_register(struct h *h, struct h_peer *p)
{
	int free_i = -1;

	for (int i = 0; i < H_MAX_PEERS; i++) {
		if (h_peers_of[i] == p) {
			h_peers_h[i] = h;
			return;
		}
		if (h_peers_h[i] == NULL && free_i < 0)
			free_i = i;
	}
	ck_assert_msg(free_i >= 0, "too many peers");
	h_peers_of[free_i] = p;
	h_peers_h[free_i] = h;
}

/* ------------------------------------------------------------------ handshakes */

static const struct h_topts h_default_synopts = {.has_mss = true, .mss = 1460};

/* a SYN's window is not scaled (RFC 7323 2.2): the receive buffer, up to
 * 65535 (nothing received yet) */
static void
syn_window_check(const struct h *h, const struct h_pkt *k)
{
	ck_assert_msg(k->win == (h->cfg.rcvbuf > 65535 ? 65535 : h->cfg.rcvbuf),
		      "SYN window %u, rcvbuf %u", k->win, h->cfg.rcvbuf);
}

struct stk_tcb *
h_connect(struct h *h, struct h_peer *p, uint64_t user, uint32_t peer_isn,
	  const struct h_topts *synack)
{
	struct stk_tcb *c;
	struct h_pkt *k = NULL;
	unsigned ev0 = h_ev_count(h, STK_EV_CONNECTED);
	uint16_t lport = 0;
	struct h_topts o;

	peer_register(h, p);
	if (synack == NULL)
		synack = &h_default_synopts;
	c = stk_tcp_connect(h->st, h_ip(p->ip), p->port, user);
	ck_assert_msg(c != NULL, "stk_tcp_connect failed: %s", strerror(errno));
	ck_assert_int_eq(stk_tcp_state(c), STK_TCP_SYN_SENT);
	stk_tcp_peer(c, NULL, NULL, &lport);
	p->lport = lport;
	p->c = c;
	for (int tries = 0; tries < 4 && k == NULL; tries++) {
		k = h_tx_pop(h);
		if (k == NULL) {
			h_poll(h);
			continue;
		}
		if (k->is_arp && k->arp_op == STK_ARP_OP_REQUEST && k->arp_tpa == p->ip) {
			h_arp_reply(h, p->mac, p->ip);
			k = NULL;
			continue;
		}
	}
	ck_assert_msg(k != NULL, "no SYN after stk_tcp_connect");
	ck_assert_msg(k->is_tcp, "expected a SYN, got ethertype 0x%04x", k->type);
	ck_assert_msg(k->flags == STK_TCP_SYN, "SYN flags 0x%02x", k->flags);
	ck_assert_uint_eq(k->dport, p->port);
	ck_assert_uint_eq(k->sport, lport);
	ck_assert_uint_eq(k->ip_dst, p->ip);
	ck_assert_msg(memcmp(k->dst, p->mac, 6) == 0, "SYN to the wrong MAC");
	ck_assert_uint_eq(k->plen, 0);
	syn_window_check(h, k);
	p->iss = k->seq;
	p->syn_opts = k->o;
	if (p->rtt_ms)
		h_advance(h, p->rtt_ms);
	p->ts = k->o.has_ts && synack->has_ts;
	if (k->o.has_ts)
		p->ts_recent = k->o.tsval;
	o = *synack;
	if (o.has_ts) {
		o.tsval = p->tsval;
		o.tsecr = k->o.tsval;
	}
	o.no_auto_ts = true;
	h_tcp_seg(h, p, STK_TCP_SYN | STK_TCP_ACK, peer_isn, p->iss + 1, p->win, &o, NULL, 0);
	if (o.has_ts)
		p->tsval++;
	p->snd_nxt = peer_isn + 1;
	p->rcv_nxt = p->iss + 1;
	k = h_tx_tcp(h, "ACK of the SYN-ACK");
	ck_assert_msg(k->flags == STK_TCP_ACK, "third segment flags 0x%02x", k->flags);
	ck_assert_uint_eq(k->seq, p->iss + 1);
	ck_assert_uint_eq(k->ack, peer_isn + 1);
	ck_assert_uint_eq(k->plen, 0);
	ck_assert_msg(k->o.has_ts == p->ts, "timestamps on the ACK: %d, negotiated %d", k->o.has_ts,
		      p->ts);
	ck_assert_int_eq(stk_tcp_state(c), STK_TCP_ESTABLISHED);
	ck_assert_uint_eq(h_ev_count(h, STK_EV_CONNECTED), ev0 + 1);
	ck_assert_ptr_eq(h->last_new, c);
	return c;
}

struct stk_tcb *
h_accept(struct h *h, struct h_peer *p, uint32_t peer_isn, const struct h_topts *syn)
{
	struct h_pkt *k;
	unsigned ev0 = h_ev_count(h, STK_EV_ACCEPTED);
	struct h_topts o;

	peer_register(h, p);
	if (syn == NULL)
		syn = &h_default_synopts;
	o = *syn;
	o.no_auto_ts = true;
	if (o.has_ts) {
		o.tsval = p->tsval;
		o.tsecr = 0;
	}
	p->ts = false;
	h_tcp_seg(h, p, STK_TCP_SYN, peer_isn, 0, p->win, &o, NULL, 0);
	if (o.has_ts)
		p->tsval++;
	k = h_tx_tcp(h, "SYN-ACK");
	ck_assert_msg(k->flags == (STK_TCP_SYN | STK_TCP_ACK), "SYN-ACK flags 0x%02x", k->flags);
	ck_assert_uint_eq(k->ack, peer_isn + 1);
	ck_assert_uint_eq(k->dport, p->port);
	ck_assert_uint_eq(k->sport, p->lport);
	ck_assert_uint_eq(k->plen, 0);
	syn_window_check(h, k);
	p->iss = k->seq;
	p->syn_opts = k->o;
	p->ts = syn->has_ts && k->o.has_ts;
	if (k->o.has_ts) {
		p->ts_recent = k->o.tsval;
		ck_assert_msg(k->o.tsecr == o.tsval, "SYN-ACK TSecr %u, SYN TSval %u", k->o.tsecr,
			      o.tsval);
	}
	p->snd_nxt = peer_isn + 1;
	p->rcv_nxt = p->iss + 1;
	if (p->rtt_ms)
		h_advance(h, p->rtt_ms);
	h_peer_ack(h, p);
	ck_assert_uint_eq(h_ev_count(h, STK_EV_ACCEPTED), ev0 + 1);
	ck_assert_msg(h->last_new != NULL, "no tcb from ACCEPTED");
	p->c = h->last_new;
	ck_assert_int_eq(stk_tcp_state(p->c), STK_TCP_ESTABLISHED);
	return p->c;
}

/* ------------------------------------------------------------------ events */

struct h_conn *
h_conn_id(struct h *h, uint32_t id)
{
	for (struct h_conn *x = h->conns; x; x = x->next)
		if (x->id == id)
			return x;
	return NULL;
}

struct h_conn *
h_conn_of(struct h *h, const struct stk_tcb *c)
{
	for (struct h_conn *x = h->conns; x; x = x->next)
		if (x->c == c && c != NULL)
			return x;
	if (c)
		return conn_get(h, stk_tcp_id(c));
	return NULL;
}

unsigned
h_ev_count(const struct h *h, enum stk_ev ev)
{
	unsigned n = 0;

	for (unsigned i = 0; i < h->n_evs; i++)
		if (h->evs[i].ev == ev)
			n++;
	return n;
}

int
h_ev_find(const struct h *h, uint32_t id, enum stk_ev ev, unsigned from)
{
	for (unsigned i = from; i < h->n_evs; i++)
		if (h->evs[i].ev == ev && (id == 0 || h->evs[i].id == id))
			return (int)i;
	return -1;
}

/* ------------------------------------------------------------------ app */

int
h_send(struct h *h, struct stk_tcb *c, uint64_t pat_off, uint32_t len)
{
	uint8_t *d;
	struct stk_buf *b = h_buf_new(h, len + 8, &d);
	int r;

	/* payload 8 bytes into the buffer: the stack must use data, not the start */
	memset(d, 0xee, 8);
	h_fill_pat(d + 8, pat_off, len);
	r = stk_tcp_send(h->st, c, b, d + 8, len);
	if (r < 0)
		h_buf_put(h, b); /* not taken: still ours */
	return r;
}

/* ------------------------------------------------------------------ wire */

struct h_wf {
	struct h_wf *next;
	uint64_t due;
	uint64_t order;
	int dir; /* 0: a -> b */
	uint32_t len;
	uint8_t data[];
};

struct h_wire {
	struct h *ab[2];
	struct h_wire_cfg cfg;
	uint64_t rng;
	uint64_t order;
	struct h_wf *q; /* sorted by (due, order) */
	struct h_wire_stats st[2];
	uint64_t busy_until[2]; /* rate_bps: the link is sending until then */
};

static void
wire_insert(struct h_wire *w, int dir, const uint8_t *data, uint32_t len, uint64_t due)
{
	struct h_wf *f = xmalloc(sizeof(*f) + len), **pp;

	f->due = due;
	f->order = w->order++;
	f->dir = dir;
	f->len = len;
	memcpy(f->data, data, len);
	for (pp = &w->q; *pp && (*pp)->due <= due; pp = &(*pp)->next)
		;
	f->next = *pp;
	*pp = f;
}

static bool
chance(struct h_wire *w, unsigned ppm)
{
	return ppm && h_rand(&w->rng) % 1000000u < ppm;
}

static void
wire_tx(struct h *h, const uint8_t *frame, uint32_t len, uint32_t flags)
{
	struct h_wire *w = h->hook_ctx;
	int dir = h == w->ab[0] ? 0 : 1;
	struct h_wire_stats *s = &w->st[dir];
	uint64_t due = *h->clock + w->cfg.delay_ns;
	uint8_t tmp[H_MAX_FRAME];

	s->sent++;
	if (w->cfg.observe) {
		struct h_pkt k = {.frame = (uint8_t *)frame, .len = len, .txflags = flags};

		h_parse(&k, h);
		w->cfg.observe(dir, &k);
	}
	if (chance(w, w->cfg.drop_ppm)) {
		s->dropped++;
		return;
	}
	if (w->cfg.rate_bps) {
		uint64_t start = w->busy_until[dir] > *h->clock ? w->busy_until[dir] : *h->clock;

		if (start - *h->clock > s->max_queue_ns)
			s->max_queue_ns = start - *h->clock;
		w->busy_until[dir] = start + (uint64_t)len * 8 * 1000000000ull / w->cfg.rate_bps;
		due = w->busy_until[dir] + w->cfg.delay_ns;
	}
	memcpy(tmp, frame, len);
	if (len > 14 && chance(w, w->cfg.corrupt_ppm)) {
		uint32_t at = 14 + (uint32_t)(h_rand(&w->rng) % (len - 14));

		tmp[at] ^= (uint8_t)(1 + h_rand(&w->rng) % 255);
		s->corrupted++;
	}
	if (chance(w, w->cfg.reorder_ppm)) {
		due += w->cfg.reorder_ns;
		s->reordered++;
	}
	wire_insert(w, dir, tmp, len, due);
	if (chance(w, w->cfg.dup_ppm)) {
		s->duplicated++;
		wire_insert(w, dir, tmp, len, due + 1);
	}
}

struct h_wire *
h_wire_new(struct h *a, struct h *b, const struct h_wire_cfg *cfg)
{
	struct h_wire *w = xcalloc(1, sizeof(*w));

	w->ab[0] = a;
	w->ab[1] = b;
	w->cfg = *cfg;
	w->rng = cfg->seed ? cfg->seed : 1;
	b->clock = a->clock;
	a->tx_hook = b->tx_hook = wire_tx;
	a->hook_ctx = b->hook_ctx = w;
	return w;
}

unsigned
h_wire_pump(struct h_wire *w)
{
	unsigned n = 0;
	uint64_t now = *w->ab[0]->clock;

	while (w->q && w->q->due <= now) {
		struct h_wf *f = w->q;
		struct h *dst = w->ab[f->dir ^ 1];

		w->q = f->next;
		w->st[f->dir].delivered++;
		h_inject(dst, f->data, f->len, 0);
		free(f);
		n++;
	}
	return n;
}

void
h_wire_free(struct h_wire *w)
{
	while (w->q) {
		struct h_wf *f = w->q;

		w->q = f->next;
		free(f);
	}
	w->ab[0]->tx_hook = w->ab[1]->tx_hook = NULL;
	w->ab[0]->hook_ctx = w->ab[1]->hook_ctx = NULL;
	free(w);
}

const struct h_wire_stats *
h_wire_stats(const struct h_wire *w, int dir)
{
	return &w->st[dir];
}
