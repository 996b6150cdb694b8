/* SPDX-License-Identifier: BSD-3-Clause
 * test_tcp_pair.c — two libstk instances on one fake clock, joined by an
 * in-memory wire with seeded faults (L0). A (10.0.0.2) connects to B (10.0.0.1)
 * port 80; A sends 4 MiB, B sends 1 MiB, both at once; each closes after its
 * last byte. Every stream is hashed (FNV-1a 64) as it is delivered.
 *
 *   clean            no faults: both streams identical, no retransmission, both
 *                    sides CLOSED, everything released after TIME_WAIT
 *   lossy (loop)     three seeds of drop 2 %, duplicate 1 %, reorder 2 % (+3 ms),
 *                    corrupt 1 % (one byte flipped after the Ethernet header):
 *                    the same, plus retransmissions on both sides (tcp_retransmits)
 *                    and at least one drop counter per corrupted frame (the
 *                    checksums catch every flip: otherwise the hashes differ);
 *                    A's retransmissions come from its SACK scoreboard, and
 *                    duplicated frames are reported by D-SACK and read; the
 *                    same three seeds again with BBR (tcp_bbr.c) on both sides
 *   bottleneck       a 20 Mbit/s link each way, frames queued behind each
 *                    other, 4 MiB send buffers (data always waiting): the
 *                    same as clean, and each sender's delivery
 *                    rate (tcp_rate.c) at its close is at most 102 % of
 *                    what its direction carries of payload and at least
 *                    90 % (A) or 75 % (B, whose ACKs queue behind A's data),
 *                    not app-limited
 *   bbr_bottleneck   the same link with Reno, then with BBR: BBR's delivery
 *                    rate as close, and the longest A -> B queue under a
 *                    quarter of Reno's (23 ms against 436 ms, 2026-12-07)
 *   bbr_random_loss  100 Mbit/s, 1 frame in 30 dropped each way: A's 4 MiB
 *                    take BBR less than half Reno's time (412 ms against
 *                    1410 ms of fake time, 2026-12-07)
 *   bbr_probe_rtt    BBR on a 2.5 Mbit/s link with 20 ms each way, ~14 s:
 *                    after 10 s A's flight drops to 4 segments or less for
 *                    200 ms (PROBE_RTT), having been above 8 before
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"

#include "../t_check.h"

#define A_TOTAL (4ull << 20)
#define B_TOTAL (1ull << 20)

struct side {
	struct h *h;
	struct stk_tcb *c;
	uint64_t total, sent;
	bool closed_sent, closed_ev, bad_ev;
	struct stk_tcp_rate rate; /* at its CLOSED event */
	bool rated;
	uint64_t closed_ms;       /* fake time of that event since the connect */
};

static struct side SA, SB;
static uint64_t T0_MS; /* fake time of the connect */
static const uint64_t *HA_CLOCK; /* A's (and B's) fake clock */
static struct h_wire *W;

/* what the wire sees, per direction (0: A -> B): the window scale each side
 * announced, the right edge each receiver advertised, data beyond it */
static struct {
	bool syn_seen;
	uint8_t ws; /* the shift the sender of this direction announced */
	bool ws_on;
	bool edge_set;
	uint32_t max_edge; /* highest right edge this direction's sender advertised */
	uint64_t shrinks;  /* advertised edge moved left (RFC 9293 3.8.6.2.2) by more
			    * than the scaling rounding (RFC 7323 2.4 allows < 2^ws) */
	uint32_t max_shrink;
	uint64_t beyond; /* data sent past the other side's largest edge */
	uint32_t worst;
	uint64_t frame_bytes, payload_bytes; /* every frame, its TCP payload */
} OBS[2];

/* A's data in flight as the wire sees it (the highest byte A sent, less B's
 * latest cumulative ACK), for BBR's PROBE_RTT: the most from 3 to 9 s after
 * the connect, and the longest stretch at 4 segments or less after 10 s */
static struct {
	bool on;
	uint32_t snd_max, ack;
	bool started;
	uint32_t most_before;
	uint64_t low_since, low_longest_ns;
} INF;
static uint64_t T0_NS;

static void
inflight_seen(int dir, const struct h_pkt *k)
{
	uint64_t t = *HA_CLOCK - T0_NS;
	uint32_t in;

	if (dir == 0 && k->plen && (!INF.started || H_SEQ_GT(k->seq + k->plen, INF.snd_max))) {
		if (!INF.started)
			INF.ack = k->seq;
		INF.snd_max = k->seq + k->plen;
		INF.started = true;
	} else if (dir == 1 && (k->flags & STK_TCP_ACK) && INF.started && H_SEQ_GT(k->ack, INF.ack)) {
		INF.ack = k->ack;
	}
	if (!INF.started)
		return;
	in = INF.snd_max - INF.ack;
	if (t >= 3000000000ull && t < 9000000000ull && in > INF.most_before)
		INF.most_before = in;
	if (t < 10000000000ull || in == 0)
		return; /* idle at the end is no probe */
	if (in > 4 * 1448) {
		INF.low_since = 0;
		return;
	}
	if (INF.low_since == 0)
		INF.low_since = t;
	if (t - INF.low_since > INF.low_longest_ns)
		INF.low_longest_ns = t - INF.low_since;
}

static void
observe(int dir, const struct h_pkt *k)
{
	int rev = dir ^ 1;

	OBS[dir].frame_bytes += k->len;
	if (!k->is_tcp)
		return;
	OBS[dir].payload_bytes += k->plen;
	if (INF.on)
		inflight_seen(dir, k);
	if (k->flags & STK_TCP_SYN) {
		OBS[dir].syn_seen = true;
		OBS[dir].ws_on = k->o.has_ws;
		OBS[dir].ws = k->o.has_ws ? k->o.ws : 0;
		return;
	}
	if (k->flags & STK_TCP_RST)
		return;
	/* data (or FIN) against the edge the receiver (rev) advertised */
	if (k->plen && OBS[rev].edge_set) {
		uint32_t end = k->seq + k->plen;

		if (H_SEQ_GT(end, OBS[rev].max_edge)) {
			OBS[dir].beyond++;
			if (end - OBS[rev].max_edge > OBS[dir].worst)
				OBS[dir].worst = end - OBS[rev].max_edge;
		}
	}
	if (k->flags & STK_TCP_ACK) {
		bool both = OBS[0].ws_on && OBS[1].ws_on;
		uint32_t edge = k->ack + ((uint32_t)k->win << (both ? OBS[dir].ws : 0));

		if (OBS[dir].edge_set && H_SEQ_LT(edge, OBS[dir].max_edge) &&
		    OBS[dir].max_edge - edge >= (1u << (both ? OBS[dir].ws : 0))) {
			OBS[dir].shrinks++;
			if (OBS[dir].max_edge - edge > OBS[dir].max_shrink)
				OBS[dir].max_shrink = OBS[dir].max_edge - edge;
		}
		if (!OBS[dir].edge_set || H_SEQ_GT(edge, OBS[dir].max_edge))
			OBS[dir].max_edge = edge;
		OBS[dir].edge_set = true;
	}
}

static struct side *
side_of(struct h *h)
{
	return h == SA.h ? &SA : &SB;
}

static void
pair_event(struct h *h, struct stk_tcb *c, uint64_t user, enum stk_ev ev, int reason,
	   const uint8_t *data, uint32_t len)
{
	struct side *s = side_of(h);

	(void)user, (void)data, (void)len;
	switch (ev) {
	case STK_EV_CONNECTED:
	case STK_EV_ACCEPTED:
		s->c = c;
		h_conn_of(h, c)->keep_rx = false; /* hash only */
		break;
	case STK_EV_CLOSED:
		s->rated = stk_tcp_rate(c, &s->rate);
		s->closed_ms = h_now_ms(h) - T0_MS;
		s->closed_ev = true;
		s->c = NULL;
		break;
	case STK_EV_RESET:
	case STK_EV_TIMEOUT:
	case STK_EV_ERROR:
		fprintf(stderr, "[%s] terminal event %d reason %d\n", h->name, ev, reason);
		s->bad_ev = true;
		s->c = NULL;
		break;
	default:
		break;
	}
}

static void
push(struct side *s)
{
	while (s->c && s->sent < s->total) {
		uint32_t space = stk_tcp_sndbuf_space(s->c);
		uint64_t left = s->total - s->sent;
		uint32_t chunk = 16384;

		if (chunk > left)
			chunk = (uint32_t)left;
		if (space < chunk)
			return;
		ck_assert_int_eq(h_send(s->h, s->c, s->sent, chunk), 0);
		s->sent += chunk;
	}
	if (s->c && s->sent == s->total && !s->closed_sent) {
		ck_assert_int_eq(stk_tcp_close(s->h->st, s->c), 0);
		s->closed_sent = true;
	}
}

static uint64_t
pattern_fnv(uint64_t total)
{
	static uint8_t buf[65536];
	uint64_t f = h_fnv_init();

	for (uint64_t off = 0; off < total; off += sizeof(buf)) {
		uint32_t n = (uint32_t)(total - off < sizeof(buf) ? total - off : sizeof(buf));

		h_fill_pat(buf, off, n);
		f = h_fnv(f, buf, n);
	}
	return f;
}

static struct h_conn *
only_conn(struct h *h)
{
	ck_assert_msg(h->conns != NULL && h->conns->next == NULL, "[%s] not exactly one connection",
		      h->name);
	return h->conns;
}

static struct h *HA, *HB;

/* also the teardown: a failed check leaves them to it (valgrind, CK_FORK=no) */
static uint64_t LAST_QUEUE_NS[2]; /* the wire's of the last run, per direction */

static void
pair_free(void)
{
	if (W) {
		LAST_QUEUE_NS[0] = h_wire_stats(W, 0)->max_queue_ns;
		LAST_QUEUE_NS[1] = h_wire_stats(W, 1)->max_queue_ns;
		h_wire_free(W);
	}
	W = NULL;
	h_destroy(HB); /* B reads A's clock: B first */
	h_destroy(HA);
	HA = HB = NULL;
}

/* sndbuf: both sides' (0: the stack's default, 1 MiB); cc: their congestion
 * control (STK_CC_*) */
static void
run_pair(const struct h_wire_cfg *wc, bool faults, uint32_t sndbuf, int cc)
{
	struct h *a = HA = h_new(), *b = HB = h_new();
	uint64_t t_end, fa, fb;
	struct h_conn *ca, *cb;

	a->name = "A";
	b->name = "B";
	memset(&SA, 0, sizeof(SA));
	memset(OBS, 0, sizeof(OBS));
	memset(&SB, 0, sizeof(SB));
	SA.h = a, SA.total = A_TOTAL;
	SB.h = b, SB.total = B_TOTAL;
	/* A: 10.0.0.2 (default); B: 10.0.0.1 with the peer MAC; static both ways */
	h_static_peer(a);
	memcpy(b->cfg.mac, H_PEER_MAC, 6);
	b->cfg.ip = h_ip(H_PEER_IP);
	b->cfg.n_static = 1;
	b->cfg.neigh[0].ip = h_ip(H_OUR_IP);
	memcpy(b->cfg.neigh[0].mac, H_OUR_MAC, 6);
	b->rng = 0x2545f4914f6cdd1dull ^ wc->seed;
	a->rng ^= wc->seed * 0x9e3779b97f4a7c15ull;
	if (!a->rng)
		a->rng = 1;
	if (sndbuf)
		a->cfg.sndbuf = b->cfg.sndbuf = sndbuf;
	a->cfg.congestion = b->cfg.congestion = (uint8_t)cc;
	a->ev_hook = b->ev_hook = pair_event;
	W = h_wire_new(a, b, wc);
	h_create(a);
	h_create(b);
	ck_assert_int_eq(stk_tcp_listen(b->st, 80, 4, 1), 0);
	T0_MS = h_now_ms(a);
	HA_CLOCK = a->clock;
	T0_NS = *a->clock;
	ck_assert_ptr_nonnull(stk_tcp_connect(a->st, h_ip(H_PEER_IP), 80, 2));

	t_end = h_now_ms(a) + 600000; /* 10 minutes of fake time at most */
	while (h_now_ms(a) < t_end) {
		h_advance_ns(a, 250000);
		h_wire_pump(W);
		stk_poll(a->st);
		stk_poll(b->st);
		push(&SA);
		push(&SB);
		if (SA.bad_ev || SB.bad_ev)
			break;
		if (SA.closed_ev && SB.closed_ev && stk_conns(a->st) == 0 && stk_conns(b->st) == 0)
			break;
	}
	ck_assert_msg(!SA.bad_ev && !SB.bad_ev, "a connection was reset or timed out");
	ca = only_conn(a);
	cb = only_conn(b);
	fa = pattern_fnv(A_TOTAL);
	fb = pattern_fnv(B_TOTAL);
	ck_assert_msg(cb->rx_len == A_TOTAL, "B received %zu of %llu bytes (t = %llu ms)",
		      cb->rx_len, (unsigned long long)A_TOTAL, (unsigned long long)h_now_ms(a));
	ck_assert_msg(ca->rx_len == B_TOTAL, "A received %zu of %llu bytes", ca->rx_len,
		      (unsigned long long)B_TOTAL);
	ck_assert_msg(cb->rx_fnv == fa, "A->B stream differs (FNV %016llx, expected %016llx)",
		      (unsigned long long)cb->rx_fnv, (unsigned long long)fa);
	ck_assert_msg(ca->rx_fnv == fb, "B->A stream differs (FNV %016llx, expected %016llx)",
		      (unsigned long long)ca->rx_fnv, (unsigned long long)fb);
	ck_assert_msg(ca->peer_closed && cb->peer_closed, "PEER_CLOSED missing");
	ck_assert_msg(SA.closed_ev && SB.closed_ev, "CLOSED missing (A %d, B %d)", SA.closed_ev,
		      SB.closed_ev);
	ck_assert_msg(stk_conns(a->st) == 0 && stk_conns(b->st) == 0,
		      "connections left: A %u, B %u", stk_conns(a->st), stk_conns(b->st));
	ck_assert_uint_eq(stk_bufs_held(a->st), 0);
	ck_assert_uint_eq(stk_bufs_held(b->st), 0);
	ck_assert_uint_eq(h_ctr(b, STK_C_TCP_BYTES_IN), A_TOTAL);
	ck_assert_uint_eq(h_ctr(a, STK_C_TCP_BYTES_IN), B_TOTAL);
	ck_assert_msg(
		OBS[0].beyond == 0 && OBS[1].beyond == 0,
		"segments past the advertised window: A %llu (worst %u bytes), B %llu (worst %u)",
		(unsigned long long)OBS[0].beyond, OBS[0].worst, (unsigned long long)OBS[1].beyond,
		OBS[1].worst);
	ck_assert_msg(OBS[0].shrinks == 0 && OBS[1].shrinks == 0,
		      "window shrunk: A %llu times (by up to %u bytes), B %llu times (by up to %u)",
		      (unsigned long long)OBS[0].shrinks, OBS[0].max_shrink,
		      (unsigned long long)OBS[1].shrinks, OBS[1].max_shrink);
	if (faults) {
		const struct h_wire_stats *ab = h_wire_stats(W, 0), *ba = h_wire_stats(W, 1);

		ck_assert_uint_gt(ab->dropped + ba->dropped, 0);
		ck_assert_msg(h_ctr(a, STK_C_TCP_RETRANSMITS) > 0,
			      "A never retransmitted under loss");
		ck_assert_msg(h_ctr(b, STK_C_TCP_RETRANSMITS) > 0,
			      "B never retransmitted under loss");
		/* the wire duplicates frames: each receiver reports them (D-SACK,
		 * RFC 2883) and the sender reads them */
		ck_assert_msg(ab->duplicated == 0 || (h_ctr(b, STK_C_TCP_DSACK_OUT) > 0 &&
						       h_ctr(a, STK_C_TCP_DSACK_IN) > 0),
			      "A->B duplicates %llu: B sent %llu D-SACKs, A read %llu",
			      (unsigned long long)ab->duplicated,
			      (unsigned long long)h_ctr(b, STK_C_TCP_DSACK_OUT),
			      (unsigned long long)h_ctr(a, STK_C_TCP_DSACK_IN));
		ck_assert_msg(h_ctr(a, STK_C_TCP_SACK_RETRANSMITS) > 0,
			      "A never retransmitted from its SACK scoreboard");
		ck_assert_msg(h_drops(b) >= ab->corrupted,
			      "B: %llu drops for %llu corrupted frames",
			      (unsigned long long)h_drops(b), (unsigned long long)ab->corrupted);
		ck_assert_msg(h_drops(a) >= ba->corrupted,
			      "A: %llu drops for %llu corrupted frames",
			      (unsigned long long)h_drops(a), (unsigned long long)ba->corrupted);
		if (getenv("STK_TEST_VERBOSE"))
			fprintf(stderr,
				"seed %llu: %llu ms; A->B sent %llu dropped %llu dup %llu reord "
				"%llu corrupt %llu; "
				"rexmt A %llu (fast %llu, rto %llu) B %llu; drops A %llu B %llu\n",
				(unsigned long long)wc->seed,
				(unsigned long long)(h_now_ms(a) - (t_end - 600000)),
				(unsigned long long)ab->sent, (unsigned long long)ab->dropped,
				(unsigned long long)ab->duplicated,
				(unsigned long long)ab->reordered,
				(unsigned long long)ab->corrupted,
				(unsigned long long)h_ctr(a, STK_C_TCP_RETRANSMITS),
				(unsigned long long)h_ctr(a, STK_C_TCP_FAST_RETRANSMITS),
				(unsigned long long)h_ctr(a, STK_C_TCP_RTO_EXPIRED),
				(unsigned long long)h_ctr(b, STK_C_TCP_RETRANSMITS),
				(unsigned long long)h_drops(a), (unsigned long long)h_drops(b));
	} else {
		ck_assert_uint_eq(h_ctr(a, STK_C_TCP_RETRANSMITS), 0);
		ck_assert_uint_eq(h_ctr(b, STK_C_TCP_RETRANSMITS), 0);
		ck_assert_uint_eq(h_drops(a), 0);
		ck_assert_uint_eq(h_drops(b), 0);
	}
	/* regression (lossy, fixed in fc4b94d) — tcp_bytes_out ("first-sent" bytes) undercounts
	 * once retransmissions happened */
	ck_assert_msg(
		h_ctr(a, STK_C_TCP_BYTES_OUT) == A_TOTAL &&
			h_ctr(b, STK_C_TCP_BYTES_OUT) == B_TOTAL,
		"tcp_bytes_out A %llu (sent %llu), B %llu (sent %llu)",
		(unsigned long long)h_ctr(a, STK_C_TCP_BYTES_OUT), (unsigned long long)A_TOTAL,
		(unsigned long long)h_ctr(b, STK_C_TCP_BYTES_OUT), (unsigned long long)B_TOTAL);
	pair_free();
}

START_TEST(clean)
{
	const struct h_wire_cfg wc = {.seed = 7, .delay_ns = 1000000, .observe = observe};

	run_pair(&wc, false, 0, STK_CC_RENO);
}
END_TEST

START_TEST(lossy)
{
	const struct h_wire_cfg wc = {
		.seed = 1000 + (uint64_t)(_i % 3) * 7777,
		.drop_ppm = 20000,
		.dup_ppm = 10000,
		.reorder_ppm = 20000,
		.corrupt_ppm = 10000,
		.delay_ns = 1000000,
		.reorder_ns = 3000000,
		.observe = observe,
	};

	run_pair(&wc, true, 0, _i < 3 ? STK_CC_RENO : STK_CC_BBR);
}
END_TEST

/* the delivery rate a side measured (tcp_rate.c) against what its direction
 * of the wire could carry of its payload: the link rate times the payload's
 * share of the bytes sent that way (headers and the other side's ACKs take
 * the rest) */
static void
check_rate(const struct side *s, int dir, uint64_t rate_bps, double low)
{
	double cap = (double)rate_bps / 8 * (double)OBS[dir].payload_bytes / (double)OBS[dir].frame_bytes;
	double got = (double)s->rate.bytes_per_s;

	if (getenv("STK_TEST_VERBOSE"))
		fprintf(stderr, "[%s] delivery rate %.0f B/s (%s), payload capacity %.0f B/s: %.3f\n",
			s->h->name, got, s->rate.app_limited ? "app-limited" : "not app-limited", cap,
			got / cap);
	ck_assert_msg(s->rated, "[%s] no delivery-rate sample", s->h->name);
	ck_assert_msg(!s->rate.app_limited, "[%s] a bulk sender's rate marked app-limited",
		      s->h->name);
	ck_assert_msg(got > low * cap && got < 1.02 * cap,
		      "[%s] delivery rate %.0f B/s against a capacity of %.0f B/s", s->h->name,
		      got, cap);
	ck_assert_uint_eq(s->rate.delivered, s->total + 1); /* and the FIN */
}

START_TEST(bottleneck)
{
	const struct h_wire_cfg wc = {
		.seed = 11, .delay_ns = 1000000, .rate_bps = 20000000, .observe = observe};

	/* a send buffer above the peer's window (1 MiB): data always waits,
	 * the path is the limit, not the application (stk_rate_check_app_limited) */
	run_pair(&wc, false, 4u << 20, STK_CC_RENO);
	check_rate(&SA, 0, wc.rate_bps, 0.9);
	/* B's ACKs queue behind A's 4 MiB while B sends: the ACK phase of its
	 * samples grows with that queue, so they read lower (0.87 of what its
	 * direction carries, 2026-12-07) */
	check_rate(&SB, 1, wc.rate_bps, 0.75);
}
END_TEST

/* BBR against Reno on the same bottleneck: the same bytes, a rate as close to
 * the link's, and a standing queue a fraction of the one Reno fills (the
 * peer's window, 1 MiB, at 2.4 MB/s: ~400 ms) */
START_TEST(bbr_bottleneck)
{
	const struct h_wire_cfg wc = {
		.seed = 11, .delay_ns = 1000000, .rate_bps = 20000000, .observe = observe};
	uint64_t reno_q, bbr_q;

	run_pair(&wc, false, 4u << 20, STK_CC_RENO);
	reno_q = LAST_QUEUE_NS[0];
	run_pair(&wc, false, 4u << 20, STK_CC_BBR);
	bbr_q = LAST_QUEUE_NS[0];
	check_rate(&SA, 0, wc.rate_bps, 0.9);
	if (getenv("STK_TEST_VERBOSE"))
		fprintf(stderr, "A->B queue at most: Reno %.1f ms, BBR %.1f ms\n", reno_q / 1e6,
			bbr_q / 1e6);
	ck_assert_msg(bbr_q * 4 < reno_q, "A->B queue at most %.1f ms with BBR, %.1f ms with Reno",
		      bbr_q / 1e6, reno_q / 1e6);
}
END_TEST

/* random loss, 1 frame in 30 each way (B15's, in fake time): Reno takes a
 * loss for congestion and holds a few segments; BBR keeps sending at the
 * link's rate */
START_TEST(bbr_random_loss)
{
	const struct h_wire_cfg wc = {.seed = 5,
				      .drop_ppm = 33333,
				      .delay_ns = 1000000,
				      .rate_bps = 100000000,
				      .observe = observe};
	uint64_t reno_ms, bbr_ms;

	run_pair(&wc, true, 4u << 20, STK_CC_RENO);
	reno_ms = SA.closed_ms;
	run_pair(&wc, true, 4u << 20, STK_CC_BBR);
	bbr_ms = SA.closed_ms;
	if (getenv("STK_TEST_VERBOSE"))
		fprintf(stderr, "4 MiB under 1/30 loss at 100 Mbit/s: Reno %llu ms, BBR %llu ms\n",
			(unsigned long long)reno_ms, (unsigned long long)bbr_ms);
	ck_assert_msg(bbr_ms * 2 < reno_ms, "4 MiB under loss: BBR took %llu ms, Reno %llu ms",
		      (unsigned long long)bbr_ms, (unsigned long long)reno_ms);
}
END_TEST

/* BBR's PROBE_RTT: on a 2.5 Mbit/s path with 40 ms of round trip, a transfer
 * of ~14 s; no RTT sample below the one at the start (BBR keeps a queue), so
 * the min RTT is 10 s old at 10 s: the flight drops to 4 segments for 200 ms
 * and a round, then grows back */
START_TEST(bbr_probe_rtt)
{
	const struct h_wire_cfg wc = {
		.seed = 3, .delay_ns = 20000000, .rate_bps = 2500000, .observe = observe};

	memset(&INF, 0, sizeof(INF));
	INF.on = true;
	run_pair(&wc, false, 4u << 20, STK_CC_BBR);
	INF.on = false;
	if (getenv("STK_TEST_VERBOSE"))
		fprintf(stderr, "in flight: at most %u bytes from 3 to 9 s; after 10 s at most 4 "
				"segments for %.1f ms at a stretch; transfer %llu ms\n",
			INF.most_before, INF.low_longest_ns / 1e6, (unsigned long long)SA.closed_ms);
	ck_assert_msg(SA.closed_ms > 11000, "the transfer took only %llu ms",
		      (unsigned long long)SA.closed_ms);
	ck_assert_msg(INF.most_before > 8 * 1448, "at most %u bytes in flight before 9 s",
		      INF.most_before);
	ck_assert_msg(INF.low_longest_ns >= 190000000, "PROBE_RTT: 4 segments or less for %.1f ms",
		      INF.low_longest_ns / 1e6);
}
END_TEST

static void
tcp_pair_tcases(Suite *s)
{
	TCase *tc = t_tcase(s, "pair", NULL, pair_free, 120);

	T_TESTS(tc, clean, bottleneck, bbr_bottleneck, bbr_random_loss, bbr_probe_rtt);
	tcase_add_loop_test(tc, lossy, 0, 6);
}

T_MAIN("stack_tcp_pair", tcp_pair_tcases)
