/* SPDX-License-Identifier: BSD-3-Clause
 * test_tcp_timer.c — stack/tcp_timer.c on the fake clock (L0): the clock moves
 * in 1 ms steps with stk_poll after each, and every transmission is timed.
 *
 *   syn_retries_timeout   SYN at 0, then rto_init_ms doubling (1, 2, 4 s) for
 *                         syn_retries, then STK_EV_TIMEOUT (ETIMEDOUT), released
 *   synack_retries        SYN-ACK retransmitted the same way; the half-open
 *                         connection is dropped without an event and its backlog
 *                         slot freed
 *   rto_backoff_timeout   RTO = rto_min_ms after 10 ms samples, doubling up to
 *                         rto_max_ms; max_retries retransmissions of the same
 *                         bytes, then STK_EV_TIMEOUT and a RST
 *   karn                  an ACK of a retransmitted segment gives no RTT sample:
 *                         the next RTO still follows the 10 ms samples
 *   keepalive             probes after keepalive_ms idle (seq SND.NXT-1); an
 *                         answered probe restarts the idle time; keepalive_probes
 *                         unanswered probes keepalive_intvl_ms apart -> TIMEOUT
 *   keepalive_off         keepalive_ms 0: ten idle minutes, nothing sent
 *   fin_wait2_timeout     FIN_WAIT_2 without the peer's FIN ends after
 *                         fin_wait2_ms with one terminal event
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"

#include "../t_check.h"

static struct h_peer P;

#define NEAR(t, want, tol) ((t) + (tol) >= (want) && (t) <= (want) + (tol))

/* the n segments (what) went out at t[i] ms: exactly nwant of them, each
 * within tol ms of want[i] */
static void
sent_at(const char *what, const uint64_t *t, unsigned n, const uint64_t *want, unsigned nwant,
	uint64_t tol)
{
	ck_assert_msg(n == nwant, "%u %s sent, expected %u", n, what, nwant);
	for (unsigned i = 0; i < n; i++)
		ck_assert_msg(NEAR(t[i], want[i], tol), "%s %u at %llu ms, expected %llu", what, i,
			      (unsigned long long)t[i], (unsigned long long)want[i]);
}

START_TEST(syn_retries_timeout)
{
	struct stk_tcb *c;
	uint64_t t0, syn_t[16], to_t = 0;
	unsigned nsyn = 0;
	uint32_t iss = 0, id;
	static const uint64_t want[] = {0, 1000, 3000, 7000};

	H->cfg.rto_init_ms = 1000;
	H->cfg.rto_max_ms = 60000;
	H->cfg.syn_retries = 3;
	h_create(H);
	t0 = h_now_ms(H);
	c = stk_tcp_connect(H->st, h_ip(H_PEER_IP), 80, 1);
	ck_assert_ptr_nonnull(c);
	id = stk_tcp_id(c);
	for (unsigned ms = 0; ms < 40000 && !to_t; ms++) {
		struct h_pkt *k;

		while ((k = h_tx_pop(H))) {
			ck_assert(k->is_tcp);
			ck_assert_uint_eq(k->flags, STK_TCP_SYN);
			if (nsyn == 0)
				iss = k->seq;
			ck_assert_uint_eq(k->seq, iss);
			ck_assert(nsyn < 16);
			syn_t[nsyn++] = h_now_ms(H) - t0;
		}
		if (h_ev_find(H, id, STK_EV_TIMEOUT, 0) >= 0)
			to_t = h_now_ms(H) - t0;
		h_advance(H, 1);
	}
	sent_at("SYN", syn_t, nsyn, want, 4, 2); /* 1 + syn_retries 3 */
	ck_assert_msg(NEAR(to_t, 15000, 2), "connect TIMEOUT at %llu ms, expected 15000",
		      (unsigned long long)to_t);
	ck_assert_int_eq(H->evs[h_ev_find(H, id, STK_EV_TIMEOUT, 0)].reason, ETIMEDOUT);
	ck_assert_uint_eq(stk_conns(H->st), 0);
	ck_assert_uint_eq(h_ctr(H, STK_C_TCP_TIMEOUTS), 1);
	ck_assert_uint_eq(h_ev_count(H, STK_EV_CONNECTED), 0);
}
END_TEST

START_TEST(synack_retries)
{
	static const struct h_topts mss = {.has_mss = true, .mss = 1460};
	static const uint64_t want[] = {0, 1000, 3000, 7000};
	uint64_t t0, sa_t[16], gone_t = 0;
	unsigned n = 0;
	struct h_pkt *k;

	H->cfg.rto_init_ms = 1000;
	H->cfg.syn_retries = 3;
	h_create(H);
	ck_assert_int_eq(stk_tcp_listen(H->st, 80, 1, 5), 0);
	h_peer_init(&P, 40000, 80);
	t0 = h_now_ms(H);
	h_tcp_seg(H, &P, STK_TCP_SYN, 100, 0, 65535, &mss, NULL, 0);
	for (unsigned ms = 0; ms < 40000 && !gone_t; ms++) {
		while ((k = h_tx_pop(H))) {
			ck_assert_uint_eq(k->flags, STK_TCP_SYN | STK_TCP_ACK);
			ck_assert(n < 16);
			sa_t[n++] = h_now_ms(H) - t0;
		}
		if (stk_conns(H->st) == 0)
			gone_t = h_now_ms(H) - t0;
		h_advance(H, 1);
	}
	sent_at("SYN-ACK", sa_t, n, want, 4, 2); /* 1 + syn_retries 3 */
	ck_assert_msg(NEAR(gone_t, 15000, 2),
		      "half-open connection dropped at %llu ms, expected 15000",
		      (unsigned long long)gone_t);
	ck_assert_uint_eq(H->n_evs, 0);
	/* the backlog slot (backlog 1) is free again */
	h_peer_init(&P, 40001, 80);
	h_tcp_seg(H, &P, STK_TCP_SYN, 100, 0, 65535, &mss, NULL, 0);
	k = h_tx_tcp(H, "SYN-ACK after the half-open one was dropped");
	ck_assert_uint_eq(k->flags, STK_TCP_SYN | STK_TCP_ACK);
}
END_TEST

/* connect with a 10 ms RTT, then one 10 ms round trip of 100 bytes:
 * SRTT 10 ms, RTO clamped to rto_min_ms */
static struct stk_tcb *
connect_rtt10(uint32_t *sent)
{
	struct stk_tcb *c;
	struct h_pkt *k;

	h_peer_init(&P, 80, 0);
	P.rtt_ms = 10;
	c = h_connect(H, &P, 1, 1000, NULL);
	ck_assert_int_eq(h_send(H, c, 0, 100), 0);
	k = h_tx_tcp(H, "data");
	ck_assert_uint_eq(k->plen, 100);
	h_advance(H, 10);
	P.rcv_nxt = P.iss + 1 + 100;
	h_peer_ack(H, &P);
	h_tx_drain(H);
	*sent = 100;
	return c;
}

START_TEST(rto_backoff_timeout)
{
	struct stk_tcb *c;
	uint32_t sent, id, seq;
	uint64_t t0, rt[32], to_t = 0;
	unsigned n = 0;
	bool rst = false;
	/* 100 200 400 800 1600 1600 apart, then give up 1600 later */
	static const uint64_t want[] = {100, 300, 700, 1500, 3100, 4700};

	H->cfg.rto_min_ms = 100;
	H->cfg.rto_init_ms = 1000;
	H->cfg.rto_max_ms = 1600;
	H->cfg.max_retries = 6;
	h_create(H);
	c = connect_rtt10(&sent);
	id = stk_tcp_id(c);
	seq = P.iss + 1 + sent;
	t0 = h_now_ms(H);
	ck_assert_int_eq(h_send(H, c, sent, 1000), 0);
	{
		struct h_pkt *k = h_tx_tcp(H, "data");

		ck_assert_uint_eq(k->seq, seq);
	}
	for (unsigned ms = 0; ms < 20000 && !to_t; ms++) {
		struct h_pkt *k;

		h_advance(H, 1);
		while ((k = h_tx_pop(H))) {
			ck_assert(k->is_tcp);
			if (k->flags & STK_TCP_RST) {
				rst = true;
				ck_assert_uint_eq(k->seq, seq + 1000);
				continue;
			}
			ck_assert_uint_eq(k->seq, seq);
			ck_assert_uint_eq(k->plen, 1000);
			ck_assert_msg(h_check_pat(k->payload, sent, 1000),
				      "retransmission with other bytes");
			ck_assert(n < 32);
			rt[n++] = h_now_ms(H) - t0;
		}
		if (h_ev_find(H, id, STK_EV_TIMEOUT, 0) >= 0)
			to_t = h_now_ms(H) - t0;
	}
	sent_at("retransmission", rt, n, want, 6, 3); /* max_retries 6 */
	ck_assert_msg(NEAR(to_t, 6300, 3), "TIMEOUT at %llu ms, expected 6300",
		      (unsigned long long)to_t);
	ck_assert_int_eq(H->evs[h_ev_find(H, id, STK_EV_TIMEOUT, 0)].reason, ETIMEDOUT);
	ck_assert_msg(rst, "no RST when giving up");
	ck_assert_uint_eq(stk_conns(H->st), 0);
	ck_assert_uint_eq(h_ctr(H, STK_C_TCP_RETRANSMITS), 6);
	ck_assert_uint_ge(h_ctr(H, STK_C_TCP_RTO_EXPIRED), 6);
	ck_assert_uint_eq(h_ctr(H, STK_C_TCP_TIMEOUTS), 1);
	ck_assert_uint_eq(stk_bufs_held(H->st), 0);
}
END_TEST

/* time from now to the first retransmission of the segment just sent */
static uint64_t
time_to_rexmt(uint32_t seq)
{
	uint64_t t0 = h_now_ms(H);

	for (unsigned ms = 0; ms < 10000; ms++) {
		struct h_pkt *k;

		h_advance(H, 1);
		while ((k = h_tx_pop(H)))
			if (k->is_tcp && k->plen && k->seq == seq)
				return h_now_ms(H) - t0;
	}
	return ~0ull;
}

START_TEST(karn)
{
	struct stk_tcb *c;
	uint32_t sent, seq_a, seq_b, seq_c;
	uint64_t t;
	unsigned n = 0;

	H->cfg.rto_min_ms = 100;
	H->cfg.rto_init_ms = 1000;
	H->cfg.rto_max_ms = 60000;
	h_create(H);
	c = connect_rtt10(&sent);
	/* A: sent, retransmitted at +100, +300, +700, then ACKed at +710 */
	seq_a = P.iss + 1 + sent;
	ck_assert_int_eq(h_send(H, c, sent, 100), 0);
	sent += 100;
	h_tx_drain(H);
	for (unsigned ms = 0; ms < 710; ms++) {
		struct h_pkt *k;

		h_advance(H, 1);
		while ((k = h_tx_pop(H)))
			n += k->plen && k->seq == seq_a;
	}
	ck_assert_msg(n == 3, "%u retransmissions of A in 710 ms, expected 3 (100, 300, 700)", n);
	P.rcv_nxt = seq_a + 100;
	h_peer_ack(H, &P);
	h_tx_drain(H);
	/* B: a clean 10 ms sample */
	seq_b = P.iss + 1 + sent;
	ck_assert_int_eq(h_send(H, c, sent, 100), 0);
	sent += 100;
	h_tx_drain(H);
	h_advance(H, 10);
	P.rcv_nxt = seq_b + 100;
	h_peer_ack(H, &P);
	h_tx_drain(H);
	/* C: its RTO reflects 10 ms samples only -> rto_min_ms */
	seq_c = P.iss + 1 + sent;
	ck_assert_int_eq(h_send(H, c, sent, 100), 0);
	h_tx_drain(H);
	t = time_to_rexmt(seq_c);
	ck_assert_msg(
		t >= 100 && t <= 200,
		"RTO %llu ms after A's ambiguous ACK; with Karn it is rto_min 100 ms (a 710 ms "
		"sample gives ~700)",
		(unsigned long long)t);
}
END_TEST

START_TEST(keepalive)
{
	struct stk_tcb *c;
	uint64_t t_last, probe_t[16], to_t = 0;
	unsigned n = 0;
	uint32_t id;

	H->cfg.keepalive_ms = 1000;
	H->cfg.keepalive_intvl_ms = 200;
	H->cfg.keepalive_probes = 3;
	h_create(H);
	h_peer_init(&P, 80, 0);
	c = h_connect(H, &P, 1, 1000, NULL);
	id = stk_tcp_id(c);
	t_last = h_now_ms(H);
	for (unsigned ms = 0; ms < 10000 && !to_t; ms++) {
		struct h_pkt *k;

		h_advance(H, 1);
		while ((k = h_tx_pop(H))) {
			if (k->flags & STK_TCP_RST)
				continue;
			ck_assert_msg(k->flags == STK_TCP_ACK, "keepalive flags 0x%02x", k->flags);
			ck_assert_msg(k->seq == P.iss,
				      "keepalive at seq ISS+%d, expected SND.NXT-1",
				      (int)(k->seq - P.iss));
			ck_assert_uint_le(k->plen, 1);
			ck_assert(n < 16);
			probe_t[n++] = h_now_ms(H);
			if (n == 1)
				h_peer_ack(H, &P); /* only the first is answered */
		}
		if (h_ev_find(H, id, STK_EV_TIMEOUT, 0) >= 0)
			to_t = h_now_ms(H);
	}
	ck_assert_msg(n == 4, "%u keepalive probes, expected 1 answered + 3 unanswered", n);
	ck_assert_msg(NEAR(probe_t[0] - t_last, 1000, 2),
		      "first probe after %llu ms idle, keepalive_ms 1000",
		      (unsigned long long)(probe_t[0] - t_last));
	ck_assert_msg(NEAR(probe_t[1] - probe_t[0], 1000, 2), "probe after an answer %llu ms later",
		      (unsigned long long)(probe_t[1] - probe_t[0]));
	ck_assert_msg(NEAR(probe_t[2] - probe_t[1], 200, 2), "unanswered probe interval %llu ms",
		      (unsigned long long)(probe_t[2] - probe_t[1]));
	ck_assert_msg(NEAR(probe_t[3] - probe_t[2], 200, 2), "unanswered probe interval %llu ms",
		      (unsigned long long)(probe_t[3] - probe_t[2]));
	ck_assert_msg(to_t && NEAR(to_t - probe_t[3], 200, 2),
		      "TIMEOUT %llu ms after the last probe",
		      (unsigned long long)(to_t - probe_t[3]));
	ck_assert_int_eq(H->evs[h_ev_find(H, id, STK_EV_TIMEOUT, 0)].reason, ETIMEDOUT);
	ck_assert_uint_eq(h_ctr(H, STK_C_TCP_KEEPALIVES), 4);
	ck_assert_uint_eq(stk_conns(H->st), 0);
}
END_TEST

START_TEST(keepalive_off)
{
	struct stk_tcb *c;

	H->cfg.keepalive_ms = 0;
	h_create(H);
	h_peer_init(&P, 80, 0);
	c = h_connect(H, &P, 1, 1000, NULL);
	h_run(H, 600000, 100, false);
	ck_assert_uint_eq(h_txq(H), 0);
	ck_assert_uint_eq(h_ctr(H, STK_C_TCP_KEEPALIVES), 0);
	ck_assert_int_eq(stk_tcp_state(c), STK_TCP_ESTABLISHED);
	ck_assert_uint_eq(H->n_evs, 1);
}
END_TEST

START_TEST(fin_wait2_timeout)
{
	struct stk_tcb *c;
	struct h_pkt *k;
	uint32_t id;
	uint64_t t0;
	unsigned term;

	H->cfg.fin_wait2_ms = 3000;
	h_create(H);
	h_peer_init(&P, 80, 0);
	c = h_connect(H, &P, 1, 1000, NULL);
	id = stk_tcp_id(c);
	ck_assert_int_eq(stk_tcp_close(H->st, c), 0);
	k = h_tx_tcp(H, "FIN");
	ck_assert(k->flags & STK_TCP_FIN);
	P.rcv_nxt = k->seq + 1;
	h_peer_ack(H, &P);
	ck_assert_int_eq(stk_tcp_state(c), STK_TCP_FIN_WAIT_2);
	t0 = h_now_ms(H);
	h_run(H, 2900, 10, false);
	ck_assert_msg(stk_conns(H->st) == 1, "FIN_WAIT_2 ended before fin_wait2_ms");
	h_run(H, 200, 10, false);
	ck_assert_msg(stk_conns(H->st) == 0,
		      "FIN_WAIT_2 still there %llu ms later, fin_wait2_ms 3000",
		      (unsigned long long)(h_now_ms(H) - t0));
	term = h_ev_count(H, STK_EV_CLOSED) + h_ev_count(H, STK_EV_TIMEOUT) +
	       h_ev_count(H, STK_EV_RESET) + h_ev_count(H, STK_EV_ERROR);
	ck_assert_msg(term == 1, "%u terminal events for the FIN_WAIT_2 connection", term);
	ck_assert_ptr_null(stk_tcp_by_id(H->st, id));
}
END_TEST

static void
tcp_timer_tcases(Suite *s)
{
	T_TESTS(t_tcase(s, "rto", h_fixture_setup, h_fixture_teardown, 30), syn_retries_timeout,
		synack_retries, rto_backoff_timeout, karn);

	T_TESTS(t_tcase(s, "idle", h_fixture_setup, h_fixture_teardown, 30), keepalive,
		keepalive_off, fin_wait2_timeout);
}

T_MAIN("stack_tcp_timer", tcp_timer_tcases)
