/* SPDX-License-Identifier: BSD-3-Clause
 * test_tcp_sack.c — stack/tcp_sack.c (loss recovery with a SACK peer: the
 * scoreboard, RFC 6675, RACK-TLP, D-SACK undo) and stack/tcp_rate.c (its
 * delivery-rate samples) through the public API, against a fake peer that
 * SACKs what it holds (L0). MSS 1000, no timestamps; the peer's RTT is 10 ms
 * of fake clock: each round the stack's segments are delivered (or dropped),
 * then the clock moves 10 ms and the peer's ACKs (one per arriving segment,
 * SACK blocks most recent first) come back, 0.1 ms apart.
 *
 *   three_holes_one_rtt   three segments of a 20-segment flight lost: all three are
 *                         retransmitted in the round after the one that
 *                         reported them, none of the SACKed ones is resent,
 *                         no RTO (NewReno would take three rounds)
 *   dupthresh_after_reordering  after reordering was seen RACK waits 2.5 ms,
 *                         yet two holes go within 1 ms: the first on the third
 *                         duplicate ACK, the second (not the first unacked
 *                         segment) once three segments above it are SACKed
 *                         (RFC 6675 IsLost) and PRR (RFC 6937) lets it go
 *   rto_keeps_sacked      the retransmissions of two holes lost as well:
 *                         probes of the last one (within 2 SRTT + 250 us, then
 *                         each twice as long while that is below the RTO:
 *                         four), lost too, then an RTO: only the two holes go
 *                         again, never SACKed data (RFC 6675 5.1; go-back-N
 *                         would resend all)
 *   probe_in_recovery     every ACK of a recovery's retransmission lost: a
 *                         probe within 24 ms repairs it, no RTO
 *   rack_lost_retransmit  a retransmission lost: RACK (RFC 8985) sees segments
 *                         sent after it delivered and sends it a third time,
 *                         without an RTO (tcp_rack_lost)
 *   tlp_tail_loss         the last two segments of a transfer lost: the tail
 *                         loss probe fires at 2 SRTT + 250 us (not the 200 ms
 *                         RTO) with the last segment; its SACK makes RACK
 *                         resend the other; no RTO
 *   tlp_two_new_segments  every ACK of a flight lost, data queued: the probe
 *                         is two new segments (a delayed-ACK receiver answers
 *                         two at once); no reduction, no RTO, nothing resent
 *   tlp_dsack_after_ack (loop) a needless probe after the late ACK of what it
 *                         repeated, then D-SACKed, or (a peer that does not
 *                         report duplicates) answered by a plain duplicate
 *                         ACK: no reduction (tcp_tlp_recoveries 0)
 *   tlp_repair_counted (loop) a probe that repaired the last segment: one
 *                         reduction once data past it is ACKed (also after a
 *                         segment of the peer's data at the probe's end), or
 *                         when the next probe goes (2 SRTT + 250 us, not the RTO)
 *   dsack_undo            a reordered segment triggers a needless fast
 *                         retransmit; the D-SACK of that retransmission undoes
 *                         the cwnd reduction (tcp_dsack_undo): the two rounds
 *                         after send over 1.25 times what they send when the
 *                         same peer does not report the duplicate
 *   reo_wnd_dsack         RACK's reordering window after a D-SACK: a tail hole
 *                         that only RACK can find goes again 2.5 ms after the
 *                         last segment's SACK (min_rtt / 4), 5 ms once the
 *                         peer reported a needless retransmission (RFC 8985
 *                         6.2 step 4); two D-SACKs in one round trip:
 *                         5 ms too (one step per round trip)
 *   reo_wnd_decays (loop) the same hole after 15 recoveries of one loss each
 *                         since the D-SACK: 5 ms still; after 16: 2.5 ms again
 *   no_sack_newreno       a peer without SACK-permitted: NewReno, one hole per
 *                         round (the scoreboard stays out of the way)
 *   rate_samples          delivery-rate samples (tcp_rate.c): the first
 *                         flight's last ACK reads 10 segments over 10.9 ms
 *                         (the ACK phase), app-limited; the second flight's
 *                         20 over 11.9 ms, not app-limited; none without SACK
 *   rack_same_instant     new data and then a retransmission sent at one
 *                         instant (a burst of ACKs): the data's SACK does not
 *                         mark the retransmission lost (it went twice, not
 *                         three times)
 *   bbr_paces             the initial window under BBR: three segments at
 *                         once, the rest as the clock moves with no ACK (the
 *                         pacing timer), all ten within 5 ms; under Reno all
 *                         ten at once; both finish
 *   rate_app_limited      a flight the application left short is
 *                         app-limited, and so is the first one after it comes
 *                         back (sent into an empty pipe); the next is not
 */
#include <stdlib.h>
#include <string.h>

#include "harness.h"

#include "../t_check.h"

#define MSS 1000u
#define NSEG 1024
#define RTT_MS 10

static struct h_peer P;

static struct {
	uint32_t base;		/* our ISS + 1 */
	bool got[NSEG];		/* segments the peer holds */
	uint32_t cum;		/* in-order bytes */
	int recent[4];		/* latest arrivals (segment index), newest first */
	unsigned nrecent;
	unsigned tx[NSEG];	/* transmissions of each segment */
	bool drop_next[NSEG];	/* drop the next transmission of a segment */
	bool dsack;		/* the next ACK reports a duplicate first */
	bool no_dsack;		/* a peer that does not report duplicates */
	bool mute;		/* its ACKs are lost */
	uint32_t dsack_seg;
	uint32_t fin_rel;	/* relative seq of the FIN, if seen */
	bool fin;
} M;

struct flight {
	uint32_t seg[512];
	unsigned n;
};

static void
setup(void)
{
	h_fixture_setup();
	memset(&M, 0, sizeof(M));
}

/* a second connection in one test: a new harness, the peer's model cleared */
static void
restart(void)
{
	h_destroy(H);
	H = h_new();
	h_static_peer(H);
	memset(&M, 0, sizeof(M));
}

/* the stack's segments now on the wire, by segment index (all MSS-sized) */
static void
pop_flight(struct flight *f)
{
	struct h_pkt *k;

	f->n = 0;
	while ((k = h_tx_pop(H))) {
		uint32_t rel = k->seq - M.base;

		ck_assert(k->is_tcp);
		if (k->flags & STK_TCP_FIN) {
			M.fin = true;
			M.fin_rel = rel + k->plen;
		}
		if (k->plen == 0)
			continue;
		ck_assert_msg(rel % MSS == 0 && k->plen == MSS, "segment [%u, +%u) not on the grid", rel,
			      k->plen);
		ck_assert(rel / MSS < NSEG && f->n < 512);
		ck_assert_msg(h_check_pat(k->payload, rel, k->plen), "payload at %u differs", rel);
		M.tx[rel / MSS]++;
		f->seg[f->n++] = rel / MSS;
	}
}

/* a connection to P (sack: SACK agreed) sends total bytes: its first flight
 * into f */
static struct stk_tcb *
first_flight(bool sack, uint32_t total, struct flight *f)
{
	struct h_topts synack = {.has_mss = true, .mss = MSS, .sack_perm = sack};
	struct stk_tcb *c;

	H->cfg.sndbuf = 1u << 20;
	h_create(H);
	h_peer_init(&P, 80, 0);
	P.rtt_ms = RTT_MS; /* SRTT 10 ms from the handshake */
	c = h_connect(H, &P, 1, 1000, &synack);
	M.base = P.iss + 1;
	ck_assert_int_eq(h_send(H, c, 0, total), 0);
	pop_flight(f);
	return c;
}

static bool
in_flight(const struct flight *f, uint32_t seg)
{
	for (unsigned i = 0; i < f->n; i++)
		if (f->seg[i] == seg)
			return true;
	return false;
}

/* an ACK of what the peer holds, SACK blocks around the latest arrivals first */
static void
peer_ack(void)
{
	struct h_topts o = {0};
	unsigned nb = 0, reg0;

	if (M.dsack) {
		o.sack[0][0] = M.base + M.dsack_seg * MSS;
		o.sack[0][1] = o.sack[0][0] + MSS;
		nb = 1;
		M.dsack = false;
	}
	reg0 = nb;
	for (unsigned i = 0; i < M.nrecent && nb < 4; i++) {
		uint32_t s = (uint32_t)M.recent[i], l = s, r = s;

		if (!M.got[s] || s * MSS < M.cum)
			continue;
		while (l > 0 && M.got[l - 1] && (l - 1) * MSS >= M.cum)
			l--;
		while (r + 1 < NSEG && M.got[r + 1])
			r++;
		for (unsigned j = reg0; j < nb; j++)
			if (o.sack[j][0] == M.base + l * MSS)
				goto next;
		o.sack[nb][0] = M.base + l * MSS;
		o.sack[nb][1] = M.base + (r + 1) * MSS;
		nb++;
next:;
	}
	o.nsack = nb;
	P.rcv_nxt = M.base + M.cum + (M.fin && M.cum == M.fin_rel ? 1 : 0);
	h_tcp_seg(H, &P, STK_TCP_ACK, P.snd_nxt, P.rcv_nxt, 65535, nb ? &o : NULL, NULL, 0);
}

/* one segment reaches the peer (unless dropped): it ACKs at once */
static void
arrive(uint32_t seg)
{
	if (M.drop_next[seg]) {
		M.drop_next[seg] = false;
		return;
	}
	if (M.got[seg] || seg * MSS < M.cum) {
		M.dsack = !M.no_dsack; /* RFC 2883 */
		M.dsack_seg = seg;
	} else {
		M.got[seg] = true;
		while (M.got[M.cum / MSS])
			M.cum += MSS;
		memmove(&M.recent[1], &M.recent[0], sizeof(M.recent) - sizeof(M.recent[0]));
		M.recent[0] = (int)seg;
		M.nrecent += M.nrecent < 4;
	}
	if (!M.mute)
		peer_ack();
}

/* one round trip: f's segments travel, the clock moves RTT_MS, the ACKs come
 * back one per segment; what the stack sends meanwhile is the next flight */
static void
round_trip(const struct flight *f, struct flight *next)
{
	struct flight tmp = *f;
	struct flight got = {.n = 0};

	h_advance_ns(H, RTT_MS * 1000000ull);
	for (unsigned i = 0; i < tmp.n; i++) {
		struct flight part;

		if (i > 0)
			h_advance_ns(H, 100000); /* 0.1 ms between arrivals */
		arrive(tmp.seg[i]);
		pop_flight(&part);
		for (unsigned j = 0; j < part.n && got.n < 512; j++)
			got.seg[got.n++] = part.seg[j];
	}
	*next = got;
}

/* a round trip of f, whose next flight replaces it; when nothing is in
 * flight, 1 ms of clock instead (timers) */
static void
next_round(struct flight *f)
{
	struct flight nx;

	if (f->n == 0) {
		h_advance(H, 1);
		pop_flight(f);
		return;
	}
	round_trip(f, &nx);
	*f = nx;
}

/* rounds until everything is acknowledged */
static void
finish_transfer(struct flight *f, uint32_t total)
{
	for (int round = 0; round < 400 && M.cum < total; round++)
		next_round(f);
	ck_assert_msg(M.cum == total, "%u of %u bytes delivered", M.cum, total);
}

START_TEST(three_holes_one_rtt)
{
	const uint32_t total = 40 * MSS;
	struct flight f, f1;

	first_flight(true, total, &f);
	ck_assert_uint_eq(f.n, 10); /* IW10 */
	round_trip(&f, &f1);
	ck_assert_uint_eq(f1.n, 20); /* slow start: segments 10 to 29 */
	M.drop_next[11] = M.drop_next[14] = M.drop_next[17] = true;
	round_trip(&f1, &f);
	/* the round after: the three holes, and no SACKed segment */
	ck_assert_msg(in_flight(&f, 11) && in_flight(&f, 14) && in_flight(&f, 17),
		      "holes 11, 14, 17 retransmitted in one round: %d %d %d", in_flight(&f, 11),
		      in_flight(&f, 14), in_flight(&f, 17));
	for (uint32_t s = 0; s < 30; s++)
		if (s != 11 && s != 14 && s != 17)
			ck_assert_msg(M.tx[s] == 1, "segment %u (SACKed) sent %u times", s, M.tx[s]);
	ck_assert_uint_eq(h_ctr(H, STK_C_TCP_SACK_RETRANSMITS), 3);
	ck_assert_uint_eq(h_ctr(H, STK_C_TCP_SACK_RECOVERIES), 1);
	finish_transfer(&f, total);
	for (uint32_t s = 0; s < 40; s++)
		ck_assert_msg(M.tx[s] == ((s == 11 || s == 14 || s == 17) ? 2u : 1u), "segment %u sent %u times",
			      s, M.tx[s]);
	ck_assert_uint_eq(h_ctr(H, STK_C_TCP_RETRANSMITS), 3);
	ck_assert_uint_eq(h_ctr(H, STK_C_TCP_RTO_EXPIRED), 0);
	ck_assert_uint_gt(h_ctr(H, STK_C_TCP_SACK_BLOCKS_IN), 0);
}
END_TEST

/* RFC 6675's DupThresh still acts at once when RACK waits: after reordering
 * was seen, RACK's window is min_rtt / 4 (2.5 ms here), yet three SACKed
 * segments above a hole make it lost (IsLost) and it goes as soon as PRR lets
 * it; two holes, so that the second is not the first unacknowledged segment
 * (which DupThresh duplicate ACKs mark by themselves) */
START_TEST(dupthresh_after_reordering)
{
	const uint32_t total = 100 * MSS;
	struct flight f, f1, f2, nx = {.n = 0};
	uint32_t h1, h2;
	int at1 = -1, at2 = -1;

	first_flight(true, total, &f);
	round_trip(&f, &f1);
	ck_assert_uint_eq(f1.n, 20);
	/* segments 11 and 12 swapped on the way: reordering, no loss */
	f1.seg[1] = 12;
	f1.seg[2] = 11;
	round_trip(&f1, &f2);
	ck_assert_uint_eq(h_ctr(H, STK_C_TCP_SACK_RECOVERIES), 0);
	ck_assert_uint_eq(h_ctr(H, STK_C_TCP_RETRANSMITS), 0);
	ck_assert_uint_ge(f2.n, 20);
	h1 = f2.seg[1];
	h2 = f2.seg[3];
	M.drop_next[h1] = M.drop_next[h2] = true;
	h_advance_ns(H, RTT_MS * 1000000ull);
	for (unsigned i = 0; i < f2.n; i++) {
		struct flight part;

		if (i > 0)
			h_advance_ns(H, 100000); /* 0.1 ms apart */
		arrive(f2.seg[i]);
		pop_flight(&part);
		if (at1 < 0 && in_flight(&part, h1))
			at1 = (int)i;
		if (at2 < 0 && in_flight(&part, h2))
			at2 = (int)i;
		for (unsigned j = 0; j < part.n; j++)
			nx.seg[nx.n++] = part.seg[j];
		if (i == 10)
			ck_assert_uint_eq(h_ctr(H, STK_C_TCP_RACK_LOST), 0);
	}
	/* the first on the third duplicate ACK (segments 2, 4, 5 of the flight) */
	ck_assert_msg(at1 == 5, "hole %u resent at arrival %d, want 5", h1, at1);
	/* the second once PRR allows, within 1 ms, long before RACK's 2.5 ms */
	ck_assert_msg(at2 > 5 && at2 <= 10, "hole %u resent at arrival %d, want 6..10", h2, at2);
	finish_transfer(&nx, total);
	ck_assert_uint_eq(M.tx[h1], 2);
	ck_assert_uint_eq(M.tx[h2], 2);
	ck_assert_uint_eq(h_ctr(H, STK_C_TCP_RTO_EXPIRED), 0);
}
END_TEST

/* the next transmission (what) comes lo..hi ms from now and is the one
 * segment seg */
static void
next_sent(struct flight *f, uint64_t lo, uint64_t hi, uint32_t seg, const char *what)
{
	uint64_t t = h_run(H, 5000, 1, true);

	ck_assert_msg(t >= lo && t <= hi, "%s after %llu ms, expected %llu..%llu", what,
		      (unsigned long long)t, (unsigned long long)lo, (unsigned long long)hi);
	pop_flight(f);
	ck_assert_msg(f->n == 1 && f->seg[0] == seg, "%s: %u segments, first %u", what, f->n,
		      f->seg[0]);
}

START_TEST(rto_keeps_sacked)
{
	const uint32_t total = 10 * MSS;
	struct flight f, f1, f2;

	first_flight(true, total, &f);
	ck_assert_uint_eq(f.n, 10);
	/* 0 and 5 lost, then their retransmissions too */
	M.drop_next[0] = M.drop_next[5] = true;
	round_trip(&f, &f1);
	ck_assert_msg(in_flight(&f1, 0) && in_flight(&f1, 5), "holes 0 and 5 retransmitted");
	ck_assert_uint_eq(f1.n, 2);
	M.drop_next[0] = M.drop_next[5] = true;
	round_trip(&f1, &f2);
	ck_assert_uint_eq(f2.n, 0);
	/* nothing comes back: probes of the last segment not SACKed (5), at
	 * most 2 SRTT + 250 us after the last ACK, then each twice as long
	 * after the one before while that is shorter than the RTO (200 ms):
	 * 20, 40, 81, 162 ms, all lost */
	next_sent(&f, 0, 24, 5, "first probe (the RTO is 200)");
	next_sent(&f, 40, 42, 5, "second probe");
	next_sent(&f, 80, 83, 5, "third probe");
	next_sent(&f, 160, 164, 5, "fourth probe");
	ck_assert_uint_eq(h_ctr(H, STK_C_TCP_TLP_PROBES), 4);
	ck_assert_uint_eq(h_ctr(H, STK_C_TCP_RTO_EXPIRED), 0);
	/* then the RTO (a fifth probe would wait 324 ms): every segment not
	 * SACKed is lost, 0 goes first */
	next_sent(&f, 200, 5000, 0, "the RTO's retransmission");
	ck_assert_uint_eq(h_ctr(H, STK_C_TCP_TLP_PROBES), 4);
	ck_assert_uint_eq(h_ctr(H, STK_C_TCP_RTO_EXPIRED), 1);
	finish_transfer(&f, total);
	for (uint32_t s = 0; s < 10; s++)
		ck_assert_msg(M.tx[s] == (s == 0 ? 3u : s == 5 ? 7u : 1u), "segment %u sent %u times", s,
			      M.tx[s]);
	ck_assert_uint_eq(h_ctr(H, STK_C_TCP_RTO_EXPIRED), 1);
}
END_TEST

/* the last ACKs of a recovery lost while only its retransmission was in
 * flight: a probe 2 SRTT + 250 us later (in recovery, as QUIC's PTO), not the
 * 200 ms RTO */
START_TEST(probe_in_recovery)
{
	const uint32_t total = 10 * MSS;
	struct flight f, f1, f2;
	uint64_t t;

	first_flight(true, total, &f);
	M.drop_next[9] = true; /* the last: found lost by the probe below */
	M.drop_next[0] = true;
	round_trip(&f, &f1);
	ck_assert_uint_eq(h_ctr(H, STK_C_TCP_SACK_RECOVERIES), 1);
	ck_assert(in_flight(&f1, 0));
	/* f1 arrives, every ACK of it lost */
	M.mute = true;
	round_trip(&f1, &f2);
	M.mute = false;
	ck_assert_uint_eq(f2.n, 0);
	t = h_run(H, 5000, 1, true);
	ck_assert_msg(t <= 24, "probe in recovery after %llu ms (an RTO takes 200)", (unsigned long long)t);
	ck_assert_uint_eq(h_ctr(H, STK_C_TCP_TLP_PROBES), 1);
	ck_assert_uint_eq(h_ctr(H, STK_C_TCP_RTO_EXPIRED), 0);
	pop_flight(&f);
	ck_assert_uint_eq(f.n, 1);
	finish_transfer(&f, total);
	ck_assert_uint_eq(h_ctr(H, STK_C_TCP_RTO_EXPIRED), 0);
}
END_TEST

START_TEST(rack_lost_retransmit)
{
	const uint32_t total = 60 * MSS;
	struct flight f, f1, f2;

	first_flight(true, total, &f);
	M.drop_next[2] = true;
	round_trip(&f, &f1);
	ck_assert(in_flight(&f1, 2));
	ck_assert_uint_gt(f1.n, 1); /* new data after the retransmission */
	M.drop_next[2] = true;	    /* the retransmission is lost too */
	round_trip(&f1, &f2);
	ck_assert_msg(in_flight(&f2, 2), "the lost retransmission of segment 2 was not sent again");
	ck_assert_uint_ge(h_ctr(H, STK_C_TCP_RACK_LOST), 1);
	finish_transfer(&f2, total);
	ck_assert_uint_eq(M.tx[2], 3);
	ck_assert_uint_eq(h_ctr(H, STK_C_TCP_RTO_EXPIRED), 0);
	ck_assert_uint_eq(h_ctr(H, STK_C_TCP_RETRANSMITS), 2);
}
END_TEST

START_TEST(tlp_tail_loss)
{
	const uint32_t total = 5 * MSS;
	struct flight f, f1;
	uint64_t t0, t;

	first_flight(true, total, &f);
	ck_assert_uint_eq(f.n, 5);
	M.drop_next[3] = M.drop_next[4] = true;
	round_trip(&f, &f1);
	ck_assert_uint_eq(f1.n, 0); /* two SACK-less ACKs of 0..2: nothing to do */
	t0 = h_now_ms(H);
	t = h_run(H, 1000, 1, true);
	/* SRTT 10 ms: the probe at 2 SRTT + 250 us after the last ACK */
	ck_assert_msg(t >= 20 && t <= 21, "tail loss probe after %llu ms (want ~20)", (unsigned long long)t);
	ck_assert_uint_eq(h_ctr(H, STK_C_TCP_TLP_PROBES), 1);
	ck_assert_uint_eq(h_ctr(H, STK_C_TCP_RTO_EXPIRED), 0);
	pop_flight(&f);
	ck_assert_msg(f.n == 1 && f.seg[0] == 4, "the probe is the last segment (%u segments, first %u)", f.n,
		      f.seg[0]);
	(void)t0;
	/* its SACK shows segment 3 lost (RACK) */
	round_trip(&f, &f1);
	ck_assert_msg(in_flight(&f1, 3), "segment 3 not resent after the probe's SACK");
	finish_transfer(&f1, total);
	ck_assert_uint_eq(h_ctr(H, STK_C_TCP_RTO_EXPIRED), 0);
	ck_assert_uint_eq(M.tx[3], 2);
	ck_assert_uint_eq(M.tx[4], 2);
}
END_TEST

/* every ACK of a flight lost with more data queued (a receiver that answers
 * a flight with one ACK, and that one lost): the probe sends two new
 * segments, not one, so that a receiver delaying the ACK of a lone segment
 * answers at once (RFC 5681 4.2); their ACK covers the whole flight; no
 * reduction, no RTO */
START_TEST(tlp_two_new_segments)
{
	const uint32_t total = 30 * MSS;
	struct flight f, f1;
	uint64_t t;

	first_flight(true, total, &f);
	ck_assert_uint_eq(f.n, 10); /* IW10 */
	M.mute = true;
	round_trip(&f, &f1);
	M.mute = false;
	ck_assert_uint_eq(f1.n, 0);
	t = h_run(H, 1000, 1, true);
	ck_assert_msg(t <= 12, "probe %llu ms after the flight's arrival (2 SRTT after it went)",
		      (unsigned long long)t);
	pop_flight(&f);
	ck_assert_msg(f.n == 2 && f.seg[0] == 10 && f.seg[1] == 11,
		      "the probe: %u segments, first %u (want 10 and 11)", f.n, f.seg[0]);
	ck_assert_uint_eq(h_ctr(H, STK_C_TCP_TLP_PROBES), 1);
	finish_transfer(&f, total);
	for (uint32_t s = 0; s < 30; s++)
		ck_assert_msg(M.tx[s] == 1, "segment %u sent %u times", s, M.tx[s]);
	ck_assert_uint_eq(h_ctr(H, STK_C_TCP_TLP_PROBES), 1);
	ck_assert_uint_eq(h_ctr(H, STK_C_TCP_TLP_RECOVERIES), 0);
	ck_assert_uint_eq(h_ctr(H, STK_C_TCP_SACK_RECOVERIES), 0);
	ck_assert_uint_eq(h_ctr(H, STK_C_TCP_RTO_EXPIRED), 0);
}
END_TEST

/* a tail loss probe of the last of five segments (no new data to send);
 * lost: the segment dropped on the way (the probe then waits for a delayed
 * ACK too: one segment out), or -1: all five arrive and the peer's ACKs of
 * them are held back (sent later by the caller) */
static struct stk_tcb *
tail_probe(int lost, struct flight *f)
{
	struct stk_tcb *c;
	struct flight nx;

	c = first_flight(true, 5 * MSS, f);
	ck_assert_uint_eq(f->n, 5);
	if (lost >= 0)
		M.drop_next[lost] = true;
	else
		M.mute = true; /* every segment arrives, their ACKs are late */
	round_trip(f, &nx);
	M.mute = false;
	ck_assert_uint_eq(nx.n, 0);
	h_run(H, 1000, 1, true);
	pop_flight(f);
	ck_assert_msg(f->n == 1 && f->seg[0] == 4, "the probe: %u segments, first %u", f->n,
		      f->seg[0]);
	ck_assert_uint_eq(h_ctr(H, STK_C_TCP_TLP_PROBES), 1);
	return c;
}

/* a needless probe after the late ACK of the segments it repeated (that ACK
 * reaches exactly the probe's end): no loss, no reduction. RFC 8985 7.4.2
 * waits for (0) the probe's D-SACK, or (1) from a peer that does not report
 * duplicates, the probe's own duplicate ACK: with nothing else in flight and
 * no SACK block it is the receiving side's common case, header prediction,
 * which must still end the episode (else the ACK of the next data, past the
 * probe, counts a repaired loss) */
START_TEST(tlp_dsack_after_ack)
{
	struct stk_tcb *c;
	struct flight f, nx;

	M.no_dsack = _i == 1;
	c = tail_probe(-1, &f);
	peer_ack(); /* the late ACK of all five */
	arrive(4);  /* the probe: a duplicate, D-SACKed (or not) */
	ck_assert_uint_eq(h_ctr(H, STK_C_TCP_DSACK_IN), _i == 0 ? 1 : 0);
	ck_assert_uint_eq(h_ctr(H, STK_C_TCP_TLP_RECOVERIES), 0);
	/* cwnd was not halved: 11 segments (IW10, one more for the ACK) go at once */
	ck_assert_int_eq(h_send(H, c, 5 * MSS, 30 * MSS), 0);
	pop_flight(&f);
	ck_assert_msg(f.n >= 10, "%u segments after a needless probe (a reduction leaves 5)", f.n);
	round_trip(&f, &nx); /* ACKs past the probe */
	ck_assert_uint_eq(h_ctr(H, STK_C_TCP_TLP_RECOVERIES), 0);
	finish_transfer(&nx, 35 * MSS);
	ck_assert_uint_eq(h_ctr(H, STK_C_TCP_TLP_RECOVERIES), 0);
}
END_TEST

/* a probe that repaired the loss of the last segment: its ACK reaches the
 * probe's end and no D-SACK follows. One reduction (tcp_tlp_recoveries), when
 * (0) data sent next is acknowledged past the probe, or (1) every ACK of that
 * data lost, when the next probe goes, 2 SRTT + 250 us after it (not the RTO:
 * the episode waiting for its D-SACK does not hold back the next probe), or
 * (2) as (0), with a segment of the peer's data before that ACK: it carries
 * the same ACK number, yet is not the probe's duplicate ACK (RFC 5681 2) */
START_TEST(tlp_repair_counted)
{
	struct stk_tcb *c;
	struct flight f, nx;

	c = tail_probe(4, &f);
	round_trip(&f, &nx);
	ck_assert_uint_eq(M.cum, 5 * MSS);
	ck_assert_uint_eq(h_ctr(H, STK_C_TCP_TLP_RECOVERIES), 0); /* not yet: a D-SACK may follow */
	ck_assert_int_eq(h_send(H, c, 5 * MSS, 5 * MSS), 0);
	pop_flight(&f);
	ck_assert_uint_eq(f.n, 5);
	if (_i == 2) {
		static const uint8_t data[100];

		/* the peer's own data, its ACK at the probe's end: no verdict */
		h_tcp_seg(H, &P, STK_TCP_ACK | STK_TCP_PSH, P.snd_nxt, P.rcv_nxt, 65535, NULL, data,
			  sizeof(data));
		P.snd_nxt += sizeof(data);
		ck_assert_uint_eq(h_ctr(H, STK_C_TCP_TLP_RECOVERIES), 0);
	}
	M.mute = _i == 1;
	round_trip(&f, &nx);
	M.mute = false;
	if (_i == 1) {
		ck_assert_uint_eq(h_ctr(H, STK_C_TCP_TLP_RECOVERIES), 0);
		/* 2 SRTT + 250 us after the send: the last new segment again */
		next_sent(&nx, 0, 24, 9, "the next probe (the RTO is 200)");
		ck_assert_uint_eq(h_ctr(H, STK_C_TCP_TLP_PROBES), 2);
	}
	ck_assert_uint_eq(h_ctr(H, STK_C_TCP_TLP_RECOVERIES), 1);
	finish_transfer(&nx, 10 * MSS);
	ck_assert_uint_eq(h_ctr(H, STK_C_TCP_TLP_RECOVERIES), 1);
	ck_assert_uint_eq(h_ctr(H, STK_C_TCP_RTO_EXPIRED), 0);
}
END_TEST

/* a transfer of nseg segments through needless fast retransmits of the
 * first late (1 or 2) segments of a flight, whose duplicates the peer reports
 * (D-SACK, one ACK each, in one round trip) or keeps quiet about; f: the
 * flight sent in the round that carried the reports */
static void
dsack_episode(bool report, unsigned late, uint32_t nseg, struct flight *f)
{
	const uint32_t total = nseg * MSS;
	struct flight f1, f2, f3;

	M.no_dsack = !report;
	first_flight(true, total, f);
	/* slow start: a flight of 20 */
	round_trip(f, &f1);
	ck_assert_uint_eq(f1.n, 20);
	/* in the next round, segment 10 (and 11) come last: reordered, not lost */
	for (unsigned i = 0; i < f1.n; i++)
		f2.seg[i] = f1.seg[(i + late) % f1.n];
	f2.n = f1.n;
	round_trip(&f2, &f3);
	ck_assert_uint_eq(h_ctr(H, STK_C_TCP_SACK_RECOVERIES), 1);
	ck_assert_msg(in_flight(&f3, 10) && (late < 2 || in_flight(&f3, 11)),
		      "segments 10 to %u retransmitted (needlessly)", 9 + late);
	ck_assert_uint_eq(h_ctr(H, STK_C_TCP_DSACK_UNDO), 0);
	/* the retransmissions arrive as duplicates: the D-SACKs */
	round_trip(&f3, f);
	ck_assert_uint_eq(h_ctr(H, STK_C_TCP_DSACK_IN), report ? late : 0);
	ck_assert_uint_eq(h_ctr(H, STK_C_TCP_DSACK_UNDO), report ? 1 : 0);
}

/* segments sent in the two rounds after the one that carried the needless
 * retransmission's D-SACK (or would have: the peer may keep quiet about it) */
static unsigned
dsack_scenario(bool report)
{
	const uint32_t total = 200 * MSS;
	struct flight f, f1, f2;
	unsigned n;

	dsack_episode(report, 1, 200, &f);
	round_trip(&f, &f1);
	round_trip(&f1, &f2);
	n = f1.n + f2.n;
	finish_transfer(&f2, total);
	ck_assert_uint_eq(h_ctr(H, STK_C_TCP_RTO_EXPIRED), 0);
	return n;
}

START_TEST(dsack_undo)
{
	unsigned with, without;

	with = dsack_scenario(true);
	restart();
	without = dsack_scenario(false);
	ck_assert_msg(with > without + without / 4,
		      "segments sent after the episode: %u with the D-SACK undo, %u without", with, without);
}
END_TEST

/* RACK's reordering window after a D-SACK (RFC 8985 6.2 step 4): the report
 * of a needless retransmission widens it from a quarter of min_rtt (2.5 ms
 * here) to two; without the report it stays; 16 recoveries later it is one
 * quarter again. Here, after that many recoveries of one loss each (every
 * other round, the third segment of the flight), the transfer's
 * second-to-last segment is lost: one segment SACKed above it is too few for
 * RFC 6675's IsLost, so RACK alone finds it, reo_wnd after the last one's
 * RTT. Returns the ms from that SACK to the retransmission. */
static uint64_t
tail_hole_wait(bool report, unsigned late, unsigned recoveries)
{
	const uint32_t nseg = 200 + 50 * recoveries, hole = nseg - 2;
	struct flight f, nx;
	uint64_t t;

	dsack_episode(report, late, nseg, &f);
	/* the episode's own recovery ended with the undo, not counted */
	for (int round = 0; round < 300 && h_ctr(H, STK_C_TCP_SACK_RECOVERIES) < 1 + recoveries;
	     round++) {
		if (round % 2 == 0 && f.n >= 6)
			M.drop_next[f.seg[2]] = true;
		next_round(&f);
	}
	ck_assert_uint_eq(h_ctr(H, STK_C_TCP_SACK_RECOVERIES), 1 + recoveries);
	next_round(&f); /* the last of them ends */
	next_round(&f);
	ck_assert_uint_eq(h_ctr(H, STK_C_TCP_SACK_RECOVERIES), 1 + recoveries);
	ck_assert_uint_eq(h_ctr(H, STK_C_TCP_RTO_EXPIRED), 0);
	M.drop_next[hole] = true;
	for (int round = 0; round < 100 && !in_flight(&f, hole); round++)
		next_round(&f);
	ck_assert_msg(in_flight(&f, hole) && f.seg[f.n - 1] == hole + 1,
		      "segments %u and %u in one flight, in that order", hole, hole + 1);
	round_trip(&f, &nx);
	ck_assert_uint_eq(nx.n, 0);
	ck_assert_uint_eq(M.cum, hole * MSS);
	t = h_run(H, 1000, 1, true);
	pop_flight(&f);
	ck_assert_msg(f.n == 1 && f.seg[0] == hole, "%u segments, first %u (want the hole, %u)",
		      f.n, f.seg[0], hole);
	ck_assert_uint_eq(h_ctr(H, STK_C_TCP_TLP_PROBES), 0);
	return t;
}

/* RACK resent the hole t ms after the last SACK: lo..hi as expected when
 * (what) */
static void
hole_after(uint64_t t, uint64_t lo, uint64_t hi, const char *what)
{
	ck_assert_msg(t >= lo && t <= hi, "%s: the hole resent after %llu ms, want %llu..%llu",
		      what, (unsigned long long)t, (unsigned long long)lo, (unsigned long long)hi);
}

START_TEST(reo_wnd_dsack)
{
	uint64_t quiet, reported, two;

	quiet = tail_hole_wait(false, 1, 0);
	restart();
	reported = tail_hole_wait(true, 1, 0);
	restart();
	two = tail_hole_wait(true, 2, 0);
	hole_after(quiet, 2, 3, "without a D-SACK (min_rtt / 4)");
	hole_after(reported, 4, 6, "after a D-SACK (twice min_rtt / 4)");
	hole_after(two, 4, 6,
		   "after two D-SACKs in one round trip (one step per round trip, not per D-SACK)");
}
END_TEST

/* ... and 16 recoveries after the D-SACK, one quarter again; after 15, still two */
START_TEST(reo_wnd_decays)
{
	uint64_t t = tail_hole_wait(true, 1, _i ? 16 : 15);

	if (_i == 0)
		hole_after(t, 4, 6, "15 recoveries after the D-SACK (still twice min_rtt / 4)");
	else
		hole_after(t, 2, 3, "16 recoveries after the D-SACK (min_rtt / 4 again)");
}
END_TEST

START_TEST(no_sack_newreno)
{
	const uint32_t total = 40 * MSS;
	struct flight f, f1;

	first_flight(false, total, &f);
	M.drop_next[1] = M.drop_next[4] = M.drop_next[7] = true;
	round_trip(&f, &f1);
	ck_assert(in_flight(&f1, 1));
	ck_assert(!in_flight(&f1, 4) && !in_flight(&f1, 7));
	finish_transfer(&f1, total);
	ck_assert_uint_eq(h_ctr(H, STK_C_TCP_SACK_RETRANSMITS), 0);
	ck_assert_uint_eq(h_ctr(H, STK_C_TCP_SACK_RECOVERIES), 0);
	ck_assert_uint_ge(h_ctr(H, STK_C_TCP_FAST_RETRANSMITS), 3);
}
END_TEST

/* delivery-rate samples (stack/tcp_rate.c), to the nanosecond of the fixture:
 * a flight sent at once, its ACKs 10 ms later and 0.1 ms apart */
START_TEST(rate_samples)
{
	struct flight f;
	struct stk_tcp_rate r;
	struct stk_tcb *c = first_flight(true, 40 * MSS, &f);

	ck_assert_uint_eq(f.n, 10);
	ck_assert(!stk_tcp_rate(c, &r)); /* nothing delivered yet */
	next_round(&f);
	/* the last ACK of the first flight: 10 segments since the flight
	 * began, the ACK phase (10.9 ms) longer than the send phase (0); the
	 * data was queued with the path idle: app-limited */
	ck_assert(stk_tcp_rate(c, &r));
	ck_assert_uint_eq(r.bytes_per_s, 10ull * MSS * 1000000000 / 10900000);
	ck_assert(r.app_limited);
	ck_assert_uint_eq(r.delivered, 10 * MSS);
	ck_assert_uint_eq(r.min_rtt_ns, RTT_MS * 1000000ull);
	/* the second flight, two segments per ACK of the first: its last
	 * segment went with the first flight's last ACK (10 segments
	 * delivered then), its ACK came 11.9 ms later with 30 delivered */
	ck_assert_uint_eq(f.n, 20);
	next_round(&f);
	ck_assert(stk_tcp_rate(c, &r));
	ck_assert_uint_eq(r.bytes_per_s, 20ull * MSS * 1000000000 / 11900000);
	ck_assert(!r.app_limited);
	ck_assert_uint_eq(r.delivered, 30 * MSS);
	finish_transfer(&f, 40 * MSS);

	/* no SACK: no scoreboard, no samples */
	restart();
	c = first_flight(false, 20 * MSS, &f);
	finish_transfer(&f, 20 * MSS);
	ck_assert(!stk_tcp_rate(c, &r));
}
END_TEST

/* app-limited samples: a flight the application left short, and the first
 * flight after it came back, which went out with the pipe empty */
START_TEST(rate_app_limited)
{
	struct flight f;
	struct stk_tcp_rate r;
	struct stk_tcb *c = first_flight(true, 3 * MSS, &f);

	next_round(&f);
	ck_assert(stk_tcp_rate(c, &r));
	ck_assert(r.app_limited);
	ck_assert_uint_eq(r.bytes_per_s, 3ull * MSS * 1000000000 / 10200000);
	ck_assert_int_eq(h_send(H, c, 3 * MSS, 60 * MSS), 0);
	pop_flight(&f);
	ck_assert_uint_eq(f.n, 13); /* cwnd: 10 segments and 3 acknowledged */
	next_round(&f);
	ck_assert(stk_tcp_rate(c, &r));
	ck_assert_msg(r.app_limited, "a flight sent into an idle pipe is not app-limited");
	/* what went out once the first of those ACKs came back was sent with
	 * data waiting */
	next_round(&f);
	ck_assert(stk_tcp_rate(c, &r));
	ck_assert_msg(!r.app_limited, "the idle spell did not end");
	finish_transfer(&f, 63 * MSS);
}
END_TEST

/* RACK's "sent after" (RFC 8985 6.2) when a burst of ACKs makes the stack
 * send new data and then a retransmission at one instant of its clock: the
 * new data's SACK must not mark that retransmission lost (a tie of times
 * broken by sequence number would put the retransmission first) */
START_TEST(rack_same_instant)
{
	struct flight f, nx, part;

	first_flight(true, 60 * MSS, &f);
	ck_assert_uint_eq(f.n, 10);
	M.drop_next[3] = true;
	/* the flight's ACKs all at one instant: 0-2 release new data, 4-6
	 * bring recovery and the retransmission of 3, after that data */
	h_advance_ns(H, RTT_MS * 1000000ull);
	nx.n = 0;
	for (unsigned i = 0; i < f.n; i++) {
		arrive(f.seg[i]);
		pop_flight(&part);
		for (unsigned j = 0; j < part.n; j++)
			nx.seg[nx.n++] = part.seg[j];
	}
	ck_assert(in_flight(&nx, 3));
	ck_assert_uint_eq(M.tx[3], 2);
	finish_transfer(&nx, 60 * MSS);
	ck_assert_msg(M.tx[3] == 2, "segment 3 went %u times (its retransmission taken for lost)",
		      M.tx[3]);
}
END_TEST

/* pacing (tcp_cc.c) under BBR (tcp_bbr.c): the initial window goes at
 * 2.885 times the window over the handshake's RTT, a burst of three segments
 * and the rest as the clock moves, with no ACK in between (the STK_T_PACE
 * timer); Reno sends the whole window at once */
START_TEST(bbr_paces)
{
	for (int bbr = 0; bbr < 2; bbr++) {
		struct flight f, more;
		unsigned first;

		if (bbr)
			restart();
		H->cfg.congestion = bbr ? STK_CC_BBR : STK_CC_RENO;
		first_flight(true, 40 * MSS, &f);
		first = f.n;
		for (int ms = 0; ms < 5; ms++) {
			h_advance(H, 1);
			pop_flight(&more);
			for (unsigned i = 0; i < more.n; i++)
				f.seg[f.n++] = more.seg[i];
		}
		if (bbr)
			ck_assert_msg(first == 3 && f.n == 10,
				      "BBR: %u segments at once, %u within 5 ms (3, 10 expected)", first,
				      f.n);
		else
			ck_assert_msg(first == 10 && f.n == 10,
				      "Reno: %u segments at once, %u within 5 ms (10, 10 expected)", first,
				      f.n);
		finish_transfer(&f, 40 * MSS);
	}
}
END_TEST

static void
tcp_sack_tcases(Suite *s)
{
	TCase *tc = t_tcase(s, "recovery", setup, h_fixture_teardown, 30);

	T_TESTS(tc, three_holes_one_rtt, dupthresh_after_reordering, rto_keeps_sacked,
		probe_in_recovery, rack_lost_retransmit, tlp_tail_loss, tlp_two_new_segments, dsack_undo,
		reo_wnd_dsack);
	tcase_add_loop_test(tc, tlp_dsack_after_ack, 0, 2);
	tcase_add_loop_test(tc, tlp_repair_counted, 0, 3);
	tcase_add_loop_test(tc, reo_wnd_decays, 0, 2);
	T_TESTS(tc, no_sack_newreno, rate_samples, rate_app_limited, bbr_paces, rack_same_instant);
}

T_MAIN("stack_tcp_sack", tcp_sack_tcases)
