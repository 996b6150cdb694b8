/* SPDX-License-Identifier: BSD-3-Clause
 * fuzz_tcp_input.c — libFuzzer target: Ethernet / IPv4 / TCP input of libStk
 * (stack/eth.c, ip4.c, icmp.c, arp.c, tcp_in.c, tcp_in_open.c, tcp_in_ack.c
 * and, through what input triggers, tcp_out.c, tcp_timer.c, tcp_conn.c) with
 * one connection driven into a chosen state first. A self-contained fake
 * environment (no Check, no tests/stack/harness.c): exactly sized malloc'd
 * buffers, a fake clock, a seeded random source, counted allocations. Byte
 * order and checksums come from tests/stack/wire.h, shared with the harness.
 *
 * Input:  byte 0  the state: 0 CLOSED (no socket), 1 LISTEN, 2 SYN_SENT,
 *                 3 SYN_RCVD, 4 ESTABLISHED, 5 FIN_WAIT_1, 6 FIN_WAIT_2,
 *                 7 CLOSE_WAIT, 8 CLOSING, 9 LAST_ACK, 10 TIME_WAIT (mod 11);
 *                 bit 7 also: stretch ACKs on (ack_stretch 4); bit 6 also:
 *                 congestion control BBR (paced; with SACK agreed)
 *         byte 1  bit 0: the peer offers timestamps, 1: SACK, 2: window scale,
 *                 3: MSS 536 (else 1460), 4: 3000 bytes queued for sending once
 *                 established, 5: passive open (listen + accept) for the states
 *                 after SYN_RCVD (else connect), 6: keepalive 1 s,
 *                 7: small buffers (rcvbuf 3000, 4 out-of-order segments)
 *         then records until the input ends:
 *           ctl (1 byte), len (2 bytes, big endian), len bytes of frame
 *           ctl bit 0: addresses: Ethernet to us from the peer, type IPv4,
 *                      version 4 (ihl at least 5), protocol TCP, IP addresses
 *                      and ports of the connection
 *               bit 1: lengths: IP total length = frame length - 14, no
 *                      fragment bits, TTL 64 if 0
 *               bit 2: checksums: IP header and TCP recomputed
 *               bit 3: seq and ack relative: seq += what the stack last acked,
 *                      ack += the highest sequence number the stack sent
 *               bit 4: a timestamps option in the header gets the peer's next
 *                      TSval and echoes the stack's last one
 *               bits 5-6: clock advance before the frame (0, 1 ms, 250 ms, 3 s),
 *                      then stk_poll
 *               bit 7: hold the frame and hand it over with the next one in one
 *                      stk_input_burst()
 *           len 0 is an application action instead (ctl & 7): 0 poll, 1 send
 *           100 bytes, 2 send 2000 bytes, 3 close, 4 abort, 5 send 1 byte,
 *           6 listen on the port again, 7 connect another connection
 * At the end the clock runs 8 x 30 s (timers: retransmission give-up, TIME_WAIT,
 * FIN_WAIT_2, keepalive), the stack is destroyed, and every buffer and every
 * allocation must be back (leaks also show in LSan).
 *
 * Invariants checked on the way (trap on failure): the driver reaches the state
 * asked for; every transmitted frame comes from our MAC and IP with correct IP
 * and TCP checksums; DATA lies inside its buffer and is not empty; no event for
 * a connection after its terminal event; no DATA after PEER_CLOSED.
 *
 * Every input runs twice, with in-order coalescing (cfg.rx_coalesce) and
 * without: every frame sent, every event with its bytes, and every counter but
 * tcp_coalesced must be the same (a digest of each run).
 */
#include <errno.h>
#include <stdbool.h>

#include <stk/stk.h>
#include <stk/tcp.h>
#include <stk/prot/eth.h>
#include <stk/prot/ip4.h>
#include <stk/prot/tcp.h>

#include "fuzz_common.h"
#include "../stack/wire.h"

#define OUR_IP 0x0a000002u  /* 10.0.0.2, host order */
#define PEER_IP 0x0a000001u /* 10.0.0.1 */
#define PEER_PORT 40000
#define LISTEN_PORT 80
#define PEER_ISN 1000000u
#define MAX_FRAME 4096
#define MAX_BURST 16
#define BUF_MAGIC 0x46425546u
#define NTRACK 64

static const uint8_t our_mac[6] = { 0x02, 0, 0, 0, 0, 0x02 };
static const uint8_t peer_mac[6] = { 0x02, 0, 0, 0, 0, 0x01 };

struct stk_buf {
	uint32_t magic;
	uint32_t size;
	uint8_t data[];
};

struct track {
	uint32_t id;
	bool peer_closed, dead;
};

struct f {
	struct stk *st;
	uint64_t clock, rng;
	long live_bufs, live_allocs;
	struct stk_tcb *c; /* the connection under test, NULL once dead */
	uint16_t lport;    /* the stack's port of it */
	bool ts;           /* timestamps negotiated (peer offered, stack agrees) */
	bool have_stack;   /* something was received from the stack */
	uint32_t stack_nxt, stack_ack, stack_tsval;
	uint32_t peer_nxt, peer_tsval;
	struct track tr[NTRACK];
	unsigned ntr;
	uint64_t digest; /* FNV-1a of what the stack did: frames, events, bytes */
};

static void
digest(struct f *f, const void *p, size_t n)
{
	const uint8_t *b = p;

	for (size_t i = 0; i < n; i++)
		f->digest = (f->digest ^ b[i]) * 0x100000001b3ull;
}

static uint32_t
pseudo(const uint8_t *ip, uint32_t l4len)
{
	return wire_sum(ip + 12, 8, 0) + STK_IPPROTO_TCP + l4len;
}

static bool
after(uint32_t a, uint32_t b)
{
	return (int32_t)(a - b) > 0;
}

/* ---------------------------------------------------------------- buffers */

static struct stk_buf *
buf_new(struct f *f, uint32_t len, uint8_t **data)
{
	struct stk_buf *b = fuzz_xmalloc(sizeof(*b) + len);

	b->magic = BUF_MAGIC;
	b->size = len;
	f->live_bufs++;
	*data = b->data;
	return b;
}

static void
buf_put(struct f *f, struct stk_buf *b)
{
	FUZZ_CHECK(b != NULL && b->magic == BUF_MAGIC);
	b->magic = 0;
	f->live_bufs--;
	free(b);
}

/* ---------------------------------------------------------------- ops */

static struct track *
track_of(struct f *f, uint32_t id)
{
	for (unsigned i = 0; i < f->ntr; i++)
		if (f->tr[i].id == id)
			return &f->tr[i];
	if (f->ntr == NTRACK)
		return NULL;
	f->tr[f->ntr] = (struct track){ .id = id };
	return &f->tr[f->ntr++];
}

/* what the peer learns from a segment of the stack's */
static void
peer_saw(struct f *f, const uint8_t *t, uint32_t l4len)
{
	unsigned hl = (t[12] >> 4) * 4u, i;
	uint32_t seq = g32(t + 4), end;
	uint8_t fl = t[13];

	FUZZ_CHECK(hl >= 20 && hl <= l4len);
	if (g16(t + 2) != PEER_PORT)
		return;
	if (f->lport == 0) /* the SYN of stk_tcp_connect(), before it returned */
		f->lport = g16(t);
	else if (g16(t) != f->lport)
		return;
	end = seq + (l4len - hl) + ((fl & STK_TCP_SYN) ? 1 : 0) + ((fl & STK_TCP_FIN) ? 1 : 0);
	if (!f->have_stack || after(end, f->stack_nxt))
		f->stack_nxt = end;
	if (fl & STK_TCP_ACK)
		f->stack_ack = g32(t + 8);
	f->have_stack = true;
	for (i = 20; i < hl;) {
		uint8_t k = t[i];

		if (k == STK_TCPOPT_EOL)
			break;
		if (k == STK_TCPOPT_NOP) {
			i++;
			continue;
		}
		FUZZ_CHECK(i + 1 < hl && t[i + 1] >= 2 && i + t[i + 1] <= hl);
		if (k == STK_TCPOPT_TS && t[i + 1] == 10)
			f->stack_tsval = g32(t + i + 2);
		i += t[i + 1];
	}
}

static int
op_tx(void *ctx, struct stk_buf *b, uint8_t *data, uint32_t len, uint32_t flags)
{
	struct f *f = ctx;

	FUZZ_CHECK(b != NULL && b->magic == BUF_MAGIC);
	FUZZ_CHECK(data >= b->data && len <= b->size && (size_t)(data - b->data) <= b->size - len);
	FUZZ_CHECK(flags == 0); /* no checksum offload configured */
	FUZZ_CHECK(len >= STK_ETH_HLEN && memcmp(data + 6, our_mac, 6) == 0);
	if (g16(data + 12) == STK_ETH_P_IP) {
		const uint8_t *ip = data + 14;
		uint32_t tot;

		FUZZ_CHECK(len >= 34 && ip[0] == 0x45);
		tot = g16(ip + 2);
		FUZZ_CHECK(tot >= 20 && 14 + tot <= len);
		FUZZ_CHECK(g32(ip + 12) == OUR_IP);
		FUZZ_CHECK(wire_sum(ip, 20, 0) == 0xffff);
		if (ip[9] == STK_IPPROTO_TCP) {
			FUZZ_CHECK(tot >= 40);
			FUZZ_CHECK(wire_sum(ip + 20, tot - 20, pseudo(ip, tot - 20)) == 0xffff);
			if (g32(ip + 16) == PEER_IP)
				peer_saw(f, ip + 20, tot - 20);
		} else {
			FUZZ_CHECK(ip[9] == STK_IPPROTO_ICMP);
			FUZZ_CHECK(wire_sum(ip + 20, tot - 20, 0) == 0xffff);
		}
	} else {
		FUZZ_CHECK(g16(data + 12) == STK_ETH_P_ARP);
	}
	digest(f, data, len);
	buf_put(f, b);
	return 0;
}

static struct stk_buf *
op_tx_alloc(void *ctx, uint32_t len, uint8_t **data)
{
	FUZZ_CHECK(len > 0 && len <= 9216);
	return buf_new(ctx, len, data);
}

static void
op_buf_free(void *ctx, struct stk_buf *b)
{
	buf_put(ctx, b);
}

static uint64_t
op_clock(void *ctx)
{
	return ((struct f *)ctx)->clock;
}

static uint64_t
op_random(void *ctx)
{
	struct f *f = ctx;
	uint64_t x = f->rng;

	x ^= x << 13;
	x ^= x >> 7;
	x ^= x << 17;
	f->rng = x;
	return x;
}

static void *
op_alloc(void *ctx, size_t size)
{
	struct f *f = ctx;
	void *p = calloc(1, size);

	if (p != NULL)
		f->live_allocs++;
	return p;
}

static void
op_free(void *ctx, void *p)
{
	struct f *f = ctx;

	if (p == NULL)
		return;
	f->live_allocs--;
	free(p);
}

static void
op_log(void *ctx, int level, const char *msg)
{
	FUZZ_CHECK(msg != NULL);
	if (getenv("FUZZ_VERBOSE"))
		fprintf(stderr, "<%d> %s\n", level, msg);
}

static void
op_event(void *ctx, struct stk_tcb *c, uint64_t user, enum stk_ev ev, int reason, struct stk_buf *b,
	 uint8_t *data, uint32_t len)
{
	struct f *f = ctx;
	struct track *t;

	FUZZ_CHECK(c != NULL);
	t = track_of(f, stk_tcp_id(c));
	FUZZ_CHECK(t == NULL || !t->dead);
	digest(f, &ev, sizeof(ev));
	digest(f, &reason, sizeof(reason));
	digest(f, &len, sizeof(len));
	if (ev == STK_EV_DATA)
		digest(f, data, len);
	if (ev == STK_EV_DATA) {
		FUZZ_CHECK(b != NULL && b->magic == BUF_MAGIC && data != NULL && len > 0);
		FUZZ_CHECK(data >= b->data && len <= b->size && (size_t)(data - b->data) <= b->size - len);
		FUZZ_CHECK(t == NULL || !t->peer_closed);
		buf_put(f, b); /* the application's */
		return;
	}
	FUZZ_CHECK(b == NULL);
	switch (ev) {
	case STK_EV_ACCEPTED:
		if (f->c == NULL) {
			uint32_t ip;
			uint16_t port;

			f->c = c;
			stk_tcp_peer(c, &ip, &port, &f->lport);
		}
		break;
	case STK_EV_PEER_CLOSED:
		if (t)
			t->peer_closed = true;
		break;
	case STK_EV_CLOSED:
	case STK_EV_RESET:
	case STK_EV_TIMEOUT:
	case STK_EV_ERROR:
		if (t)
			t->dead = true;
		if (f->c == c)
			f->c = NULL;
		break;
	default:
		break;
	}
}

/* ---------------------------------------------------------------- frames */

static void
inject(struct f *f, const uint8_t *frame, uint32_t len)
{
	uint8_t *d;
	struct stk_rx rx;

	rx.b = buf_new(f, len, &d);
	if (len)
		memcpy(d, frame, len);
	rx.data = d;
	rx.len = len;
	rx.flags = 0;
	stk_input_burst(f->st, &rx, 1);
}

/* a well-formed segment from the peer (the driver's) */
static void
seg(struct f *f, uint8_t flags, uint32_t seq, uint32_t ack, const uint8_t *opt_bits, const uint8_t *pl,
    uint32_t plen)
{
	uint8_t fr[MAX_FRAME];
	uint8_t *ip = fr + 14, *t = ip + 20, *o = t + 20;
	unsigned ol = 0;

	memset(fr, 0, sizeof(fr));
	memcpy(fr, our_mac, 6);
	memcpy(fr + 6, peer_mac, 6);
	p16(fr + 12, STK_ETH_P_IP);
	if (opt_bits != NULL) { /* SYN options */
		o[ol++] = STK_TCPOPT_MSS;
		o[ol++] = 4;
		p16(o + ol, (*opt_bits & 8) ? 536 : 1460);
		ol += 2;
		if (*opt_bits & 2) {
			o[ol++] = STK_TCPOPT_NOP;
			o[ol++] = STK_TCPOPT_NOP;
			o[ol++] = STK_TCPOPT_SACK_PERM;
			o[ol++] = 2;
		}
		if (*opt_bits & 4) {
			o[ol++] = STK_TCPOPT_NOP;
			o[ol++] = STK_TCPOPT_WSCALE;
			o[ol++] = 3;
			o[ol++] = 7;
		}
	}
	if ((opt_bits != NULL && (*opt_bits & 1)) || (opt_bits == NULL && f->ts)) {
		o[ol++] = STK_TCPOPT_NOP;
		o[ol++] = STK_TCPOPT_NOP;
		o[ol++] = STK_TCPOPT_TS;
		o[ol++] = 10;
		p32(o + ol, f->peer_tsval++);
		p32(o + ol + 4, (flags & STK_TCP_ACK) ? f->stack_tsval : 0);
		ol += 8;
	}
	p16(t, PEER_PORT);
	p16(t + 2, f->lport);
	p32(t + 4, seq);
	p32(t + 8, ack);
	t[12] = (uint8_t)(((20 + ol) / 4) << 4);
	t[13] = flags;
	p16(t + 14, 65535);
	if (plen)
		memcpy(t + 20 + ol, pl, plen);
	/* IP header, then the TCP checksum needs its addresses */
	ip[0] = 0x45;
	p16(ip + 2, (uint16_t)(40 + ol + plen));
	p16(ip + 6, STK_IP4_DF);
	ip[8] = 64;
	ip[9] = STK_IPPROTO_TCP;
	p32(ip + 12, PEER_IP);
	p32(ip + 16, OUR_IP);
	p16(ip + 10, (uint16_t)~wire_sum(ip, 20, 0));
	p16(t + 16, 0);
	p16(t + 16, (uint16_t)~wire_sum(t, 20 + ol + plen, pseudo(ip, 20 + ol + plen)));
	inject(f, fr, 14 + 40 + ol + plen);
}

/* the fuzzer's frame, fixed up as ctl says (frame is a writable copy) */
static void
fixup(struct f *f, uint8_t ctl, uint8_t *fr, uint32_t len)
{
	uint8_t *ip = fr + 14, *t;
	unsigned ihl;
	uint32_t tot, l4;

	if (len < 14)
		return;
	if (ctl & 1) {
		memcpy(fr, our_mac, 6);
		memcpy(fr + 6, peer_mac, 6);
		p16(fr + 12, STK_ETH_P_IP);
	}
	if (len < 34)
		return;
	if (ctl & 1) {
		if ((ip[0] & 15) < 5)
			ip[0] = 0x45;
		ip[0] = (uint8_t)(0x40 | (ip[0] & 15));
		ip[9] = STK_IPPROTO_TCP;
		p32(ip + 12, PEER_IP);
		p32(ip + 16, OUR_IP);
	}
	if (ctl & 2) {
		p16(ip + 2, (uint16_t)(len - 14 > 65535 ? 65535 : len - 14));
		p16(ip + 6, (uint16_t)(g16(ip + 6) & STK_IP4_DF));
		if (ip[8] == 0)
			ip[8] = 64;
	}
	ihl = (ip[0] & 15) * 4u;
	tot = g16(ip + 2);
	if (ihl < 20 || 14 + ihl > len)
		return;
	t = ip + ihl;
	l4 = len - 14 - ihl;
	if (tot >= ihl && tot - ihl < l4)
		l4 = tot - ihl;
	if (l4 >= 4 && (ctl & 1)) {
		p16(t, PEER_PORT);
		p16(t + 2, f->lport);
	}
	if (l4 >= 12 && (ctl & 8)) {
		p32(t + 4, g32(t + 4) + f->stack_ack);
		p32(t + 8, g32(t + 8) + f->stack_nxt);
	}
	if (l4 >= 20 && (ctl & 16)) {
		unsigned hl = (t[12] >> 4) * 4u, i;

		if (hl > l4)
			hl = l4;
		for (i = 20; i + 1 < hl;) {
			if (t[i] == STK_TCPOPT_EOL)
				break;
			if (t[i] == STK_TCPOPT_NOP) {
				i++;
				continue;
			}
			if (t[i + 1] < 2)
				break;
			if (t[i] == STK_TCPOPT_TS && t[i + 1] == 10 && i + 10 <= hl) {
				p32(t + i + 2, f->peer_tsval++);
				p32(t + i + 6, f->stack_tsval);
			}
			i += t[i + 1];
		}
	}
	if (ctl & 4) {
		p16(ip + 10, 0);
		p16(ip + 10, (uint16_t)~wire_sum(ip, ihl, 0));
		if (l4 >= 18) {
			p16(t + 16, 0);
			p16(t + 16, (uint16_t)~wire_sum(t, l4, pseudo(ip, l4)));
		}
	}
}

/* ---------------------------------------------------------------- the app */

static void
app_send(struct f *f, uint32_t n)
{
	uint8_t *d;
	struct stk_buf *b;

	if (f->c == NULL)
		return;
	b = buf_new(f, n, &d);
	for (uint32_t i = 0; i < n; i++)
		d[i] = (uint8_t)(i * 131u + 7u);
	if (stk_tcp_send(f->st, f->c, b, d, n) != 0)
		buf_put(f, b); /* refused: still ours */
}

static void
app_action(struct f *f, unsigned a)
{
	switch (a) {
	case 0:
		stk_poll(f->st);
		break;
	case 1:
		app_send(f, 100);
		break;
	case 2:
		app_send(f, 2000);
		break;
	case 3:
		if (f->c)
			stk_tcp_close(f->st, f->c);
		break;
	case 4:
		if (f->c) {
			struct track *t = track_of(f, stk_tcp_id(f->c));

			stk_tcp_abort(f->st, f->c); /* no event follows */
			if (t)
				t->dead = true;
			f->c = NULL;
		}
		break;
	case 5:
		app_send(f, 1);
		break;
	case 6:
		stk_tcp_listen(f->st, LISTEN_PORT, 4, 2); /* -EADDRINUSE when listening */
		break;
	case 7:
		stk_tcp_connect(f->st, __builtin_bswap32(PEER_IP), PEER_PORT + 1, 3);
		break;
	}
}

/* ---------------------------------------------------------------- setup */

static void
want_state(struct f *f, enum stk_tcp_state s)
{
	FUZZ_CHECK(f->c != NULL);
	if (stk_tcp_state(f->c) != s) {
		fprintf(stderr, "driver: state %s, wanted %s\n", stk_tcp_state_name(stk_tcp_state(f->c)),
			stk_tcp_state_name(s));
		__builtin_trap();
	}
}

static void
active_open(struct f *f, uint8_t opts)
{
	uint32_t ip;
	uint16_t port;

	f->c = stk_tcp_connect(f->st, __builtin_bswap32(PEER_IP), PEER_PORT, 1);
	FUZZ_CHECK(f->c != NULL);
	stk_tcp_peer(f->c, &ip, &port, &f->lport);
	FUZZ_CHECK(f->have_stack); /* the SYN went out (static neighbour: no ARP) */
}

static void
passive_syn(struct f *f, uint8_t opts)
{
	FUZZ_CHECK(stk_tcp_listen(f->st, LISTEN_PORT, 4, 1) == 0);
	f->lport = LISTEN_PORT;
	seg(f, STK_TCP_SYN, PEER_ISN, 0, &opts, NULL, 0);
	f->peer_nxt = PEER_ISN + 1;
	FUZZ_CHECK(f->have_stack); /* SYN-ACK */
	f->ts = (opts & 1) && f->stack_tsval != 0;
}

static void
establish(struct f *f, uint8_t opts)
{
	if (opts & 0x20) {
		passive_syn(f, opts);
		seg(f, STK_TCP_ACK, f->peer_nxt, f->stack_nxt, NULL, NULL, 0);
		FUZZ_CHECK(f->c != NULL); /* ACCEPTED */
	} else {
		active_open(f, opts);
		seg(f, STK_TCP_SYN | STK_TCP_ACK, PEER_ISN, f->stack_nxt, &opts, NULL, 0);
		f->peer_nxt = PEER_ISN + 1;
		f->ts = (opts & 1) && f->stack_tsval != 0;
	}
	want_state(f, STK_TCP_ESTABLISHED);
	if (opts & 0x10)
		app_send(f, 3000);
}

static void
peer_fin(struct f *f, uint32_t ack)
{
	seg(f, STK_TCP_FIN | STK_TCP_ACK, f->peer_nxt, ack, NULL, NULL, 0);
	f->peer_nxt++;
}

static void
drive(struct f *f, unsigned state, uint8_t opts)
{
	uint32_t before_fin;

	switch (state) {
	case 0: /* CLOSED: nothing listens, no connection */
		break;
	case 1:
		FUZZ_CHECK(stk_tcp_listen(f->st, LISTEN_PORT, 4, 1) == 0);
		f->lport = LISTEN_PORT;
		break;
	case 2:
		active_open(f, opts);
		want_state(f, STK_TCP_SYN_SENT);
		break;
	case 3:
		passive_syn(f, opts);
		/* the half-open connection is not the application's yet */
		break;
	case 4:
		establish(f, opts);
		break;
	case 5: /* FIN_WAIT_1 */
		establish(f, opts);
		stk_tcp_close(f->st, f->c);
		want_state(f, STK_TCP_FIN_WAIT_1);
		break;
	case 6: /* FIN_WAIT_2: our FIN (and the data) acked */
		establish(f, opts);
		stk_tcp_close(f->st, f->c);
		seg(f, STK_TCP_ACK, f->peer_nxt, f->stack_nxt, NULL, NULL, 0);
		want_state(f, STK_TCP_FIN_WAIT_2);
		break;
	case 7: /* CLOSE_WAIT */
		establish(f, opts);
		peer_fin(f, f->stack_nxt);
		want_state(f, STK_TCP_CLOSE_WAIT);
		break;
	case 8: /* CLOSING: both FINs crossed, ours not acked */
		establish(f, opts);
		before_fin = f->stack_nxt;
		stk_tcp_close(f->st, f->c);
		if (f->stack_nxt == before_fin) /* the FIN waits behind queued data */
			break;
		peer_fin(f, before_fin);
		want_state(f, STK_TCP_CLOSING);
		break;
	case 9: /* LAST_ACK */
		establish(f, opts);
		peer_fin(f, f->stack_nxt);
		stk_tcp_close(f->st, f->c);
		want_state(f, STK_TCP_LAST_ACK);
		break;
	case 10: /* TIME_WAIT: invisible to the application */
		establish(f, opts);
		stk_tcp_close(f->st, f->c);
		seg(f, STK_TCP_ACK, f->peer_nxt, f->stack_nxt, NULL, NULL, 0);
		want_state(f, STK_TCP_FIN_WAIT_2);
		peer_fin(f, f->stack_nxt);
		FUZZ_CHECK(f->c == NULL && stk_conns(f->st) == 1);
		break;
	}
}

/* one run of the input; the digest of what the stack did */
static uint64_t
run(const uint8_t *data, size_t size, bool coalesce)
{
	static const uint64_t adv_ns[4] = { 0, 1000000ull, 250000000ull, 3000000000ull };
	struct stk_ops ops;
	struct stk_config cfg;
	struct f *f;
	struct stk_rx rx[MAX_BURST];
	unsigned nrx = 0;
	size_t off;
	char err[128];
	uint8_t opts;

	uint64_t result;

	f = calloc(1, sizeof(*f));
	if (f == NULL)
		abort();
	f->clock = 1000000000ull;
	f->rng = 0x9e3779b97f4a7c15ull;
	f->peer_tsval = 5000;
	f->digest = 0xcbf29ce484222325ull;
	opts = data[1];

	stk_config_init(&cfg);
	memcpy(cfg.mac, our_mac, 6);
	cfg.ip = __builtin_bswap32(OUR_IP);
	cfg.prefix = 24;
	cfg.n_static = 1;
	cfg.neigh[0].ip = __builtin_bswap32(PEER_IP);
	memcpy(cfg.neigh[0].mac, peer_mac, 6);
	cfg.rx_coalesce = coalesce;
	if (data[0] & 0x80)
		cfg.ack_stretch = 4; /* stretch ACKs: the cap and the burst's end both reached */
	if (data[0] & 0x40)
		cfg.congestion = STK_CC_BBR;
	if (opts & 0x40)
		cfg.keepalive_ms = 1000;
	if (opts & 0x80) {
		cfg.rcvbuf = 3000;
		cfg.sndbuf = 3000;
		cfg.ooo_max_segs = 4;
		cfg.ooo_max_bytes = 3000;
	}
	ops = (struct stk_ops){
		.ctx = f,
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
	f->st = stk_create(&cfg, &ops, err, sizeof(err));
	if (f->st == NULL) {
		fprintf(stderr, "stk_create: %s\n", err);
		__builtin_trap();
	}
	stk_start(f->st);
	drive(f, data[0] % 11u, opts);

	for (off = 2; off + 3 <= size;) {
		uint8_t ctl = data[off];
		uint32_t len = g16(data + off + 1);
		uint8_t *d;

		off += 3;
		if (len > size - off)
			len = (uint32_t)(size - off);
		if (len > MAX_FRAME)
			len = MAX_FRAME;
		if (adv_ns[(ctl >> 5) & 3] != 0) {
			f->clock += adv_ns[(ctl >> 5) & 3];
			stk_poll(f->st);
		}
		if (len == 0) {
			app_action(f, ctl & 7);
			continue;
		}
		rx[nrx].b = buf_new(f, len, &d);
		memcpy(d, data + off, len);
		fixup(f, ctl, d, len);
		rx[nrx].data = d;
		rx[nrx].len = len;
		rx[nrx].flags = 0;
		nrx++;
		off += len;
		if (!(ctl & 0x80) || nrx == MAX_BURST) {
			stk_input_burst(f->st, rx, nrx);
			nrx = 0;
		}
	}
	if (nrx)
		stk_input_burst(f->st, rx, nrx);
	for (int i = 0; i < 8; i++) {
		f->clock += 30000000000ull;
		stk_poll(f->st);
	}
	for (int i = 0; i < STK_C__COUNT; i++)
		if (i != STK_C_TCP_COALESCED)
			digest(f, &stk_counters(f->st)[i], sizeof(uint64_t));
	FUZZ_CHECK(coalesce || stk_counters(f->st)[STK_C_TCP_COALESCED] == 0);
	stk_destroy(f->st);
	if (f->live_bufs != 0 || f->live_allocs != 0) {
		fprintf(stderr, "leak: %ld buffers, %ld allocations live after stk_destroy\n", f->live_bufs,
			f->live_allocs);
		__builtin_trap();
	}
	result = f->digest;
	free(f);
	return result;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 2)
		return 0;
	FUZZ_CHECK(run(data, size, true) == run(data, size, false));
	return 0;
}
