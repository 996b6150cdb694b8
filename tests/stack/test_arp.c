/* SPDX-License-Identifier: BSD-3-Clause
 * test_arp.c — stack/arp.c through the public API (L0, fake ops).
 *
 *   request_for_us        a request for our IP -> one unicast reply with our MAC
 *   request_not_for_us    a request for another IP -> nothing, not counted bad
 *   request_learns_sender RFC 826 merge: the requester (we are its target) is
 *                         cached, a connect to it needs no request
 *   resolve_flush_order   frames queued while unresolved (three SYNs) leave on
 *                         the reply, in order, with the peer's MAC; one request
 *   pending_bounded       arp_pending frames per neighbour: the rest counted
 *                         drop_arp_pending_full, stk_bufs_held stays bounded
 *   unresolved_gives_up   arp_retries requests arp_retry_ms apart, then the
 *                         queued frames are dropped (drop_arp_unresolved) at
 *                         arp_retries * arp_retry_ms
 *   refresh_and_expiry    a resolved entry is refreshed after arp_timeout_ms;
 *                         an answered refresh keeps it, an unanswered one expires
 *                         it (arp_expired) and the next frame asks again
 *   gratuitous_on_start   stk_start sends one gratuitous ARP (spa = tpa = ours)
 *   static_never_arps     static neighbours: no request ever, and a reply claiming
 *                         another MAC does not override them
 *   bad_arp               short, wrong hrd / pro / hln / pln -> drop_arp_bad,
 *                         no reply
 *   cache_full            more unresolved neighbours than entries: every one is
 *                         either asked for or counted drop_arp_cache_full
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"

#include "../t_check.h"

static void
setup(void)
{
	H = h_new();
	/* no SYN retransmission inside these tests */
	H->cfg.rto_init_ms = 30000;
	H->cfg.rto_max_ms = 60000;
	H->cfg.arp_retry_ms = 100;
	H->cfg.arp_retries = 3;
	H->cfg.arp_timeout_ms = 5000;
}

/* k: an Ethernet/IPv4 ARP frame op from our MAC and IP, for ip */
static void
assert_arp_from_us(const struct h_pkt *k, uint16_t op, uint32_t ip)
{
	ck_assert_msg(k->is_arp, "expected an ARP frame, got ethertype 0x%04x", k->type);
	ck_assert_uint_eq(k->arp_op, op);
	ck_assert_uint_eq(k->arp_hrd, STK_ARP_HRD_ETHER);
	ck_assert_uint_eq(k->arp_pro, STK_ETH_P_IP);
	ck_assert_uint_eq(k->arp_hln, 6);
	ck_assert_uint_eq(k->arp_pln, 4);
	ck_assert_uint_eq(k->arp_tpa, ip);
	ck_assert_uint_eq(k->arp_spa, H_OUR_IP);
	ck_assert(memcmp(k->arp_sha, H_OUR_MAC, 6) == 0);
}

START_TEST(request_for_us)
{
	struct h_pkt *k;
	struct h_snap s;

	h_create(H);
	h_snap(H, &s);
	h_arp_request(H, H_PEER_MAC, H_PEER_IP, H_OUR_IP);
	k = h_tx_must(H, "ARP reply");
	assert_arp_from_us(k, STK_ARP_OP_REPLY, H_PEER_IP);
	ck_assert_msg(memcmp(k->dst, H_PEER_MAC, 6) == 0, "reply not unicast to the requester");
	ck_assert(memcmp(k->arp_tha, H_PEER_MAC, 6) == 0);
	ck_assert_uint_eq(h_txq(H), 0);
	ck_assert_uint_eq(h_delta(H, &s, STK_C_ARP_RX), 1);
	ck_assert_uint_eq(h_delta(H, &s, STK_C_ARP_REPLIES_TX), 1);
	ck_assert_uint_eq(h_drops_delta(H, &s), 0);
	ck_assert_uint_eq(stk_bufs_held(H->st), 0);
}
END_TEST

START_TEST(request_not_for_us)
{
	struct h_snap s;

	h_create(H);
	h_snap(H, &s);
	h_arp_request(H, H_PEER_MAC, H_PEER_IP, 0x0a000009u);
	ck_assert_uint_eq(h_txq(H), 0);
	ck_assert_uint_eq(h_delta(H, &s, STK_C_ARP_REPLIES_TX), 0);
	ck_assert_uint_eq(h_delta(H, &s, STK_C_DROP_ARP_BAD), 0);
}
END_TEST

START_TEST(request_learns_sender)
{
	struct stk_tcb *c;
	struct h_pkt *k;

	h_create(H);
	h_arp_request(H, H_PEER_MAC, H_PEER_IP, H_OUR_IP);
	h_tx_drain(H);
	c = stk_tcp_connect(H->st, h_ip(H_PEER_IP), 80, 1);
	ck_assert_ptr_nonnull(c);
	k = h_tx_must(H, "SYN without a request: RFC 826 merge of the requester");
	ck_assert_msg(k->is_tcp, "sent ethertype 0x%04x (an ARP request?) instead of the SYN",
		      k->type);
	ck_assert(memcmp(k->dst, H_PEER_MAC, 6) == 0);
	ck_assert_uint_eq(h_ctr(H, STK_C_ARP_REQUESTS_TX), 0);
}
END_TEST

START_TEST(resolve_flush_order)
{
	struct stk_tcb *c[3];
	uint16_t lport[3];
	struct h_pkt *k;

	H->cfg.arp_pending = 8;
	h_create(H);
	for (int i = 0; i < 3; i++) {
		c[i] = stk_tcp_connect(H->st, h_ip(H_PEER_IP), 80, 10 + i);
		ck_assert_ptr_nonnull(c[i]);
		stk_tcp_peer(c[i], NULL, NULL, &lport[i]);
	}
	h_poll(H);
	k = h_tx_must(H, "ARP request");
	assert_arp_from_us(k, STK_ARP_OP_REQUEST, H_PEER_IP);
	ck_assert_msg(memcmp(k->dst, H_BCAST, 6) == 0, "first request not broadcast");
	ck_assert_msg(h_txq(H) == 0, "%u frames sent while unresolved", h_txq(H));
	ck_assert_uint_eq(h_ctr(H, STK_C_ARP_REQUESTS_TX), 1);
	ck_assert_uint_eq(stk_bufs_held(H->st), 3);

	h_arp_reply(H, H_PEER_MAC, H_PEER_IP);
	ck_assert_uint_eq(h_ctr(H, STK_C_ARP_RESOLVED), 1);
	for (int i = 0; i < 3; i++) {
		k = h_tx_tcp(H, "queued SYN");
		ck_assert_uint_eq(k->flags, STK_TCP_SYN);
		ck_assert_msg(memcmp(k->dst, H_PEER_MAC, 6) == 0,
			      "queued frame left with a wrong dst MAC");
		ck_assert_msg(k->sport == lport[i],
			      "queued SYN %d out of order: port %u, expected %u", i, k->sport,
			      lport[i]);
	}
	ck_assert_uint_eq(h_txq(H), 0);
	ck_assert_uint_eq(stk_bufs_held(H->st), 0);

	/* resolved: the next frame goes at once */
	ck_assert_ptr_nonnull(stk_tcp_connect(H->st, h_ip(H_PEER_IP), 81, 20));
	k = h_tx_tcp(H, "SYN after resolution");
	ck_assert(memcmp(k->dst, H_PEER_MAC, 6) == 0);
	ck_assert_uint_eq(h_ctr(H, STK_C_ARP_REQUESTS_TX), 1);
}
END_TEST

START_TEST(pending_bounded)
{
	unsigned n = 0;

	H->cfg.arp_pending = 2;
	h_create(H);
	for (int i = 0; i < 6; i++) {
		ck_assert_ptr_nonnull(stk_tcp_connect(H->st, h_ip(H_PEER_IP), 80, i + 1));
		ck_assert_msg(stk_bufs_held(H->st) <= 2, "%llu frames held, arp_pending 2",
			      (unsigned long long)stk_bufs_held(H->st));
	}
	ck_assert_uint_eq(h_ctr(H, STK_C_DROP_ARP_PENDING_FULL), 4);
	h_tx_drain(H);
	h_arp_reply(H, H_PEER_MAC, H_PEER_IP);
	for (struct h_pkt *k; (k = h_tx_pop(H));)
		if (k->is_tcp)
			n++;
	ck_assert_uint_eq(n, 2);
	ck_assert_uint_eq(stk_bufs_held(H->st), 0);
}
END_TEST

START_TEST(unresolved_gives_up)
{
	uint64_t t0, times[16];
	unsigned n = 0;
	uint64_t dropped_at = 0;
	const unsigned retries = 3, retry = 100;

	H->cfg.arp_retries = retries;
	H->cfg.arp_retry_ms = retry;
	h_create(H);
	t0 = h_now_ms(H);
	ck_assert_ptr_nonnull(stk_tcp_connect(H->st, h_ip(H_PEER_IP), 80, 1));
	ck_assert_ptr_nonnull(stk_tcp_connect(H->st, h_ip(H_PEER_IP), 80, 2));
	ck_assert_uint_eq(stk_bufs_held(H->st), 2);
	for (unsigned ms = 0; ms <= retries * retry * 2; ms++) {
		struct h_pkt *k;

		while ((k = h_tx_pop(H))) {
			assert_arp_from_us(k, STK_ARP_OP_REQUEST, H_PEER_IP);
			ck_assert(n < 16);
			times[n++] = h_now_ms(H) - t0;
		}
		if (!dropped_at && h_ctr(H, STK_C_DROP_ARP_UNRESOLVED))
			dropped_at = h_now_ms(H) - t0;
		h_advance(H, 1);
	}
	ck_assert_msg(n == retries, "%u requests, arp_retries %u", n, retries);
	for (unsigned i = 1; i < n; i++)
		ck_assert_msg(times[i] - times[i - 1] >= retry &&
				      times[i] - times[i - 1] <= retry + 10,
			      "request %u after %llu ms, arp_retry_ms %u", i,
			      (unsigned long long)(times[i] - times[i - 1]), retry);
	ck_assert_msg(dropped_at >= retries * retry && dropped_at <= retries * retry + retry / 2,
		      "queued frames dropped at %llu ms, expected %u ms",
		      (unsigned long long)dropped_at, retries * retry);
	ck_assert_uint_eq(h_ctr(H, STK_C_DROP_ARP_UNRESOLVED), 2);
	ck_assert_uint_eq(stk_bufs_held(H->st), 0);
}
END_TEST

/* run ms of traffic: the peer sends one byte every 50 ms (the stack ACKs it);
 * ARP requests for the peer are answered when answer; returns requests seen */
static unsigned
traffic(struct h_peer *p, unsigned ms, bool answer, uint64_t *first_req_ms)
{
	unsigned reqs = 0;
	uint8_t byte = 'x';

	for (unsigned t = 0; t < ms; t++) {
		struct h_pkt *k;

		if (t % 50 == 0 && p->c)
			h_peer_data(H, p, &byte, 1);
		while ((k = h_tx_pop(H))) {
			if (k->is_arp) {
				assert_arp_from_us(k, STK_ARP_OP_REQUEST, H_PEER_IP);
				if (reqs++ == 0 && first_req_ms)
					*first_req_ms = h_now_ms(H);
				if (answer)
					h_arp_reply(H, H_PEER_MAC, H_PEER_IP);
			} else {
				ck_assert_msg(memcmp(k->dst, H_PEER_MAC, 6) == 0,
					      "frame to a wrong MAC");
			}
		}
		h_advance(H, 1);
	}
	return reqs;
}

START_TEST(refresh_and_expiry)
{
	struct h_peer p;
	uint64_t t_res, t_req = 0;
	unsigned reqs;

	H->cfg.arp_timeout_ms = 1000;
	H->cfg.arp_retry_ms = 100;
	H->cfg.arp_retries = 3;
	H->cfg.delack_ms = 10;
	h_create(H);
	h_peer_init(&p, 80, 0);
	h_connect(H, &p, 1, 5000, NULL); /* resolves through ARP */
	ck_assert_uint_eq(h_ctr(H, STK_C_ARP_RESOLVED), 1);
	t_res = h_now_ms(H);

	/* answered refresh */
	reqs = traffic(&p, 1500, true, &t_req);
	ck_assert_msg(reqs == 1,
		      "%u requests within 1.5 x arp_timeout_ms of traffic (one refresh, answered)",
		      reqs);
	ck_assert_msg(t_req - t_res >= 1000 - 1 && t_req - t_res <= 1000 + 2 * 100 + 60,
		      "refresh request %llu ms after resolution, arp_timeout_ms 1000",
		      (unsigned long long)(t_req - t_res));
	ck_assert_uint_eq(h_ctr(H, STK_C_ARP_EXPIRED), 0);
	ck_assert_uint_eq(h_ctr(H, STK_C_DROP_ARP_UNRESOLVED), 0);

	/* unanswered refresh: the entry expires */
	reqs = traffic(&p, 3000, false, NULL);
	ck_assert_msg(reqs >= 3, "%u requests while unanswered", reqs);
	ck_assert_uint_ge(h_ctr(H, STK_C_ARP_EXPIRED), 1);
}
END_TEST

START_TEST(gratuitous_on_start)
{
	struct h_pkt *k;

	h_create(H);
	ck_assert_uint_eq(h_txq(H), 0);
	stk_start(H->st);
	k = h_tx_must(H, "gratuitous ARP");
	ck_assert(k->is_arp);
	ck_assert_msg(memcmp(k->dst, H_BCAST, 6) == 0, "gratuitous ARP not broadcast");
	ck_assert(k->arp_op == STK_ARP_OP_REQUEST || k->arp_op == STK_ARP_OP_REPLY);
	ck_assert(memcmp(k->arp_sha, H_OUR_MAC, 6) == 0);
	ck_assert_uint_eq(k->arp_spa, H_OUR_IP);
	ck_assert_uint_eq(k->arp_tpa, H_OUR_IP);
	ck_assert_uint_eq(h_txq(H), 0);
	ck_assert_uint_eq(h_ctr(H, STK_C_ARP_GRATUITOUS_TX), 1);
}
END_TEST

START_TEST(static_never_arps)
{
	static const uint8_t other[6] = {0x02, 0, 0, 0, 0, 0x99};
	struct h_peer p;
	struct h_pkt *k;
	uint8_t byte = 'y';

	h_static_peer(H);
	H->cfg.arp_timeout_ms = 500;
	h_create(H);
	h_peer_init(&p, 80, 0);
	h_connect(H, &p, 1, 100, NULL);
	/* a reply claiming another MAC for the static neighbour */
	{
		uint8_t f[64];
		uint32_t n = h_build_arp(f, H_OUR_MAC, other, STK_ARP_OP_REPLY, other, H_PEER_IP,
					 H_OUR_MAC, H_OUR_IP);

		h_inject(H, f, n, 0);
	}
	for (int i = 0; i < 40; i++) {
		h_peer_data(H, &p, &byte, 1);
		h_advance(H, 100);
		while ((k = h_tx_pop(H))) {
			ck_assert_msg(!k->is_arp, "ARP frame sent for a static neighbour");
			ck_assert_msg(memcmp(k->dst, H_PEER_MAC, 6) == 0,
				      "static neighbour overridden by an ARP reply");
		}
	}
	ck_assert_uint_eq(h_ctr(H, STK_C_ARP_REQUESTS_TX), 0);
	ck_assert_uint_eq(h_ctr(H, STK_C_ARP_EXPIRED), 0);
}
END_TEST

/* bad ARP variants, all asking for our IP */
START_TEST(bad_arp)
{
	uint8_t f[64];
	uint32_t n;
	struct h_snap s;
	int v = _i;

	h_create(H);
	n = h_build_arp(f, H_BCAST, H_PEER_MAC, STK_ARP_OP_REQUEST, H_PEER_MAC, H_PEER_IP, NULL,
			H_OUR_IP);
	switch (v) {
	case 0: /* short: 27 bytes of ARP */
		n = 14 + 27;
		break;
	case 1: /* only the fixed part */
		n = 14 + 8;
		break;
	case 2:
		f[14 + 1] = 6; /* hrd 6 (IEEE 802) */
		break;
	case 3:
		f[14 + 2] = 0x86, f[14 + 3] = 0xdd; /* pro IPv6 */
		break;
	case 4:
		f[14 + 4] = 8; /* hln */
		break;
	case 5:
		f[14 + 5] = 16; /* pln */
		break;
	case 6: /* empty ARP payload */
		n = 14;
		break;
	}
	h_snap(H, &s);
	h_inject(H, f, n, 0);
	ck_assert_msg(h_txq(H) == 0, "variant %d: a frame was sent", v);
	ck_assert_msg(h_delta(H, &s, STK_C_DROP_ARP_BAD) == 1, "variant %d: drop_arp_bad +%llu", v,
		      (unsigned long long)h_delta(H, &s, STK_C_DROP_ARP_BAD));
	ck_assert_uint_eq(h_delta(H, &s, STK_C_ARP_REPLIES_TX), 0);
	h_assert_only(H, &s, STK_C_DROP_ARP_BAD, -1);
}
END_TEST

START_TEST(cache_full)
{
	const unsigned n = 12;

	H->cfg.arp_entries = 4;
	H->cfg.arp_pending = 4;
	h_create(H);
	for (unsigned i = 0; i < n; i++) {
		struct stk_tcb *c = stk_tcp_connect(H->st, h_ip(0x0a000010u + i), 80, i + 1);

		(void)c; /* may fail: the SYN cannot be queued */
	}
	h_poll(H);
	ck_assert_msg(h_ctr(H, STK_C_ARP_REQUESTS_TX) + h_ctr(H, STK_C_DROP_ARP_CACHE_FULL) >= n,
		      "%u destinations: %llu requests + %llu cache_full", n,
		      (unsigned long long)h_ctr(H, STK_C_ARP_REQUESTS_TX),
		      (unsigned long long)h_ctr(H, STK_C_DROP_ARP_CACHE_FULL));
	ck_assert_uint_ge(h_ctr(H, STK_C_DROP_ARP_CACHE_FULL), n - 4);
	ck_assert_uint_le(stk_bufs_held(H->st), 4 * 4);
}
END_TEST

static void
arp_tcases(Suite *s)
{
	TCase *tc = t_tcase(s, "arp", setup, h_fixture_teardown, 20);

	T_TESTS(tc, request_for_us, request_not_for_us, request_learns_sender, resolve_flush_order,
		pending_bounded, unresolved_gives_up, refresh_and_expiry, gratuitous_on_start,
		static_never_arps);
	tcase_add_loop_test(tc, bad_arp, 0, 7);
	T_TESTS(tc, cache_full);
}

T_MAIN("stack_arp", arp_tcases)
