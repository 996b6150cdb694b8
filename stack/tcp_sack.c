/* SPDX-License-Identifier: BSD-3-Clause
 * tcp_sack.c — the send side's loss recovery with a SACK peer: a scoreboard of
 * the segments in flight, RFC 6675 (SACK-based recovery), RACK-TLP (RFC 8985)
 * and D-SACK (RFC 2883) to undo a spurious reduction (as RFC 3708 / Linux).
 *
 *   stk_sb_room / stk_sb_sent   tcp_out.c records every new segment (and FIN)
 *   stk_sb_ack                  tcp_in_ack.c, every acceptable ACK: cumulative ACK,
 *                               SACK blocks (binary search in the ring), D-SACK
 *                               (undo), RFC 6675 IsLost threshold, RACK
 *   stk_sb_enter_recovery       fast recovery: ssthresh, the first lost segment
 *   stk_sb_retransmit_next      NextSeg rule 1: the lowest segment marked lost
 *   stk_sb_pipe                 RFC 6675 pipe: out - sacked - lost + retrans
 *                               (inline, stk_priv.h)
 *   stk_sb_rto                  RFC 6675 5.1: all but SACKed data is lost
 *   stk_sb_tlp_fire             tail loss probe: new data, else the last segment
 *   stk_sb_rack_timer           RACK's reordering window expired
 *
 * Records live in a ring (a power of two, grown by doubling through ops.alloc)
 * in sequence order; ids are free-running uint32 counters. A record is SACKED,
 * LOST (not SACKed, to be retransmitted) and/or RETRANS (a retransmission in
 * flight); byte sums of each give pipe without a walk. Records in flight are
 * also linked in the order of their last transmission (RACK). */
#include "stk_priv.h"

#define SB_CAP_MIN 64u
#define SB_CAP_MAX (1u << 17)
#define SB_DUPTHRESH 3

static inline struct stk_txrec *
rec(const struct stk_sb *b, uint32_t id)
{
	return &b->r[id & (b->cap - 1)];
}

static inline uint32_t
rlen(const struct stk_txrec *r)
{
	return r->end - r->seq;
}

/* ids compare by their distance: the live ones span less than 2^31 */
static inline bool
id_lt(uint32_t a, uint32_t b)
{
	return (int32_t)(a - b) < 0;
}

/* the first record ending after seq (b->tail if none): records are in
 * sequence order, so a bisection over their ids */
static uint32_t
rec_after(const struct stk_sb *b, uint32_t seq)
{
	uint32_t lo = b->head, hi = b->tail;

	while (lo != hi) {
		uint32_t m = lo + (hi - lo) / 2;

		if (SEQ_LEQ(rec(b, m)->end, seq))
			lo = m + 1;
		else
			hi = m;
	}
	return lo;
}

static void
t_unlink(struct stk_sb *b, struct stk_txrec *r)
{
	if (!(r->flags & SB_LINKED))
		return;
	if (r->tprev != SB_NIL)
		rec(b, r->tprev)->tnext = r->tnext;
	else
		b->t_first = r->tnext;
	if (r->tnext != SB_NIL)
		rec(b, r->tnext)->tprev = r->tprev;
	else
		b->t_last = r->tprev;
	r->flags &= (uint8_t)~SB_LINKED;
}

static void
t_append(struct stk_sb *b, struct stk_txrec *r, uint32_t id)
{
	t_unlink(b, r);
	r->tprev = b->t_last;
	r->tnext = SB_NIL;
	if (b->t_last != SB_NIL)
		rec(b, b->t_last)->tnext = id;
	else
		b->t_first = id;
	b->t_last = id;
	r->flags |= SB_LINKED;
}

/* a transmission's time: st->now, read once per burst, made to grow by at
 * least 1 ns per transmission, so that RACK's "sent after" (RFC 8985 6.2)
 * orders a retransmission after new data sent before it in the same burst
 * (the tie-break by sequence number would put it first, and the new data's
 * delivery would then mark the retransmission lost) */
static inline uint64_t
xmit_stamp(const struct stk *st, struct stk_sb *b)
{
	uint64_t t = st->now > b->last_xmit ? st->now : b->last_xmit + 1;

	b->last_xmit = t;
	return t;
}

void
stk_sb_free(struct stk *st, struct stk_tcb *c)
{
	if (c->sb.r != NULL)
		st->ops.free(st->ops.ctx, c->sb.r);
	memset(&c->sb, 0, sizeof(c->sb));
}

bool
stk_sb_room(struct stk *st, struct stk_tcb *c)
{
	struct stk_sb *b = &c->sb;
	struct stk_txrec *nr;
	uint32_t ncap;

	if (b->cap != 0 && b->tail - b->head < b->cap)
		return true;
	ncap = b->cap ? b->cap * 2 : SB_CAP_MIN;
	if (ncap > SB_CAP_MAX)
		return false;
	nr = st->ops.alloc(st->ops.ctx, ncap * sizeof(*nr));
	if (nr == NULL) {
		STK_CTR(st, DROP_TCP_NOMEM);
		return false;
	}
	if (b->cap == 0) {
		b->head = b->tail = b->rxt = b->mark = 0;
		b->t_first = b->t_last = SB_NIL;
	}
	/* the live ids keep their values: each lands in its slot of the new ring */
	for (uint32_t id = b->head; id != b->tail; id++)
		nr[id & (ncap - 1)] = *rec(b, id);
	if (b->r != NULL)
		st->ops.free(st->ops.ctx, b->r);
	b->r = nr;
	b->cap = ncap;
	return true;
}

int
stk_sb_sent(struct stk *st, struct stk_tcb *c, uint32_t seq, uint32_t len, bool fin)
{
	struct stk_sb *b = &c->sb;
	struct stk_txrec *r;
	uint32_t id;

	if (!stk_sb_room(st, c))
		return -ENOMEM;
	id = b->tail++;
	r = rec(b, id);
	r->seq = seq;
	r->end = seq + len + (fin ? 1 : 0);
	r->xmit = xmit_stamp(st, b);
	r->flags = fin ? SB_FIN : 0;
	r->tprev = r->tnext = SB_NIL;
	if (id == b->head && c->cc->tx_start)
		c->cc->tx_start(st, c); /* nothing was in flight */
	stk_rate_sent(c, r, st->now, id == b->head);
	t_append(b, r, id);
	b->out += rlen(r);
	return 0;
}

static bool
set_sacked(struct stk_sb *b, struct stk_txrec *r)
{
	uint32_t n = rlen(r);

	if (r->flags & SB_SACKED)
		return false;
	if (r->flags & SB_LOST)
		b->lost -= n;
	if (r->flags & SB_RETRANS)
		b->retrans -= n;
	r->flags = (uint8_t)((r->flags & ~(SB_LOST | SB_RETRANS)) | SB_SACKED);
	t_unlink(b, r);
	if (b->sacked == 0 || SEQ_GT(r->end, b->sack_high))
		b->sack_high = r->end;
	b->sacked += n;
	return true;
}

static bool
set_lost(struct stk_sb *b, struct stk_txrec *r, uint32_t id)
{
	uint32_t n = rlen(r);

	if ((r->flags & SB_SACKED) || (r->flags & (SB_LOST | SB_RETRANS)) == SB_LOST)
		return false;
	if (r->flags & SB_RETRANS) {
		b->retrans -= n; /* that retransmission is lost too */
		r->flags &= (uint8_t)~SB_RETRANS;
	}
	if (!(r->flags & SB_LOST)) {
		b->lost += n;
		b->rs.losses += n;
	}
	r->flags |= SB_LOST;
	t_unlink(b, r);
	if (id_lt(id, b->rxt))
		b->rxt = id;
	return true;
}

/* drop d bytes from the front of a record (a cumulative ACK inside it) */
static void
trim_front(struct stk_sb *b, struct stk_txrec *r, uint32_t d)
{
	r->seq += d;
	b->out -= d;
	if (r->flags & SB_SACKED)
		b->sacked -= d;
	if (r->flags & SB_LOST)
		b->lost -= d;
	if (r->flags & SB_RETRANS)
		b->retrans -= d;
}

/* a segment delivered (SACKed or cumulatively acknowledged) for the first time */
static void
delivered(struct stk *st, struct stk_tcb *c, const struct stk_txrec *r, uint32_t prev_high, bool had_sack)
{
	struct stk_sb *b = &c->sb;
	uint64_t rtt = st->now - r->xmit;

	/* never retransmitted, below what was SACKed before: the network reordered */
	if (!(r->flags & SB_EVER_RETRANS) && had_sack && SEQ_LT(r->end, prev_high))
		b->sflags |= SF_REORDER;
	/* RFC 8985 6.2 step 2: an RTT shorter than the minimum came from the
	 * original transmission, not the retransmission it is taken for. Ours
	 * is stricter, shorter than half the SRTT: where queueing moves the RTT
	 * by more than the minimum (a paced sender's standing queue, B15: min
	 * RTT 0.1-0.2 ms, RTTs of milliseconds), a delayed original's ACK reads as
	 * a retransmission's RTT above the minimum, and taking it marks
	 * everything sent before that retransmission lost at once (a cascade of
	 * needless retransmissions, one D-SACK each). A retransmission's own
	 * ACK comes about an SRTT after it; one that comes much sooner is left
	 * out, and the next segment sent after it that is delivered updates
	 * RACK instead. */
	if ((r->flags & SB_EVER_RETRANS) &&
	    (rtt < b->min_rtt || rtt < (uint64_t)c->srtt_us * 500))
		return;
	b->rack_rtt = rtt;
	if (stk_sent_after(r->xmit, r->end, b->rack_xmit, b->rack_end)) {
		b->rack_xmit = r->xmit;
		b->rack_end = r->end;
	}
}

/* RFC 8985 6.2 step 4 */
static uint64_t
reo_wnd(const struct stk_tcb *c)
{
	const struct stk_sb *b = &c->sb;
	uint64_t w, srtt = (uint64_t)c->srtt_us * 1000;

	if (!(b->sflags & SF_REORDER) &&
	    ((c->flags & TF_INRECOVERY) || (b->sflags & SF_LOSS) || b->sacked >= SB_DUPTHRESH * c->mss))
		return 0;
	w = (1 + (uint64_t)b->reo_steps) * (b->min_rtt / 4);
	return srtt != 0 && w > srtt ? srtt : w;
}

/* RACK (RFC 8985 6.2 step 5): a segment sent before the most recently sent one
 * that was delivered is lost once reo_wnd past its RTT; the first that is not
 * yet arms the reordering timer. */
static void
rack_detect(struct stk *st, struct stk_tcb *c)
{
	struct stk_sb *b = &c->sb;
	uint64_t reo;

	if (b->rack_xmit == 0 && b->rack_end == 0)
		return; /* nothing delivered yet */
	reo = reo_wnd(c);
	for (uint32_t id = b->t_first, nx; id != SB_NIL; id = nx) {
		struct stk_txrec *r = rec(b, id);
		uint64_t deadline;

		nx = r->tnext;
		if (!stk_sent_after(b->rack_xmit, b->rack_end, r->xmit, r->end))
			break;
		deadline = r->xmit + b->rack_rtt + reo;
		if (deadline > st->now) {
			stk_tcp_timer_set(st, c, STK_T_RACK, deadline - st->now);
			return;
		}
		if (set_lost(b, r, id))
			STK_CTR(st, TCP_RACK_LOST);
	}
	if (c->timer[STK_T_RACK])
		stk_tcp_timer_clear(st, c, STK_T_RACK);
}

/* RFC 6675 IsLost(): DupThresh SACKed segments, or more than (DupThresh - 1)
 * MSS SACKed bytes, above a byte. Below the highest such point every segment
 * not SACKed (nor retransmitted already) is lost; b->mark remembers how far
 * that was applied, so each record is looked at once. */
static void
threshold_mark(struct stk_tcb *c)
{
	struct stk_sb *b = &c->sb;
	uint32_t id, cnt = 0, bytes = 0, edge = 0, lo;
	bool found = false;

	if (b->sacked == 0 || b->head == b->tail)
		return;
	lo = id_lt(b->mark, b->head) ? b->head : b->mark;
	/* the record holding the highest SACKed byte, then down */
	id = rec_after(b, b->sack_high - 1);
	if (id == b->tail)
		id--;
	if (id_lt(id, lo))
		return; /* all of it applied already */
	for (;; id--) {
		const struct stk_txrec *r = rec(b, id);

		if (r->flags & SB_SACKED) {
			cnt++;
			bytes += rlen(r);
			if (cnt >= SB_DUPTHRESH || bytes > (SB_DUPTHRESH - 1) * c->mss) {
				edge = r->seq;
				found = true;
				break;
			}
		}
		if (id == lo)
			break;
	}
	if (!found)
		return;
	for (id = lo; id != b->tail; id++) {
		struct stk_txrec *r = rec(b, id);

		if (SEQ_GT(r->end, edge))
			break;
		if (!(r->flags & SB_RETRANS))
			set_lost(b, r, id);
	}
	b->mark = id;
}

static void
undo(struct stk *st, struct stk_tcb *c)
{
	struct stk_sb *b = &c->sb;

	c->cwnd = c->cc->undo_cwnd(c);
	if (c->ssthresh < b->prior_ssthresh)
		c->ssthresh = b->prior_ssthresh;
	b->sflags &= (uint8_t)~SF_UNDO;
	b->sflags |= SF_UNDONE;
	STK_CTR(st, TCP_DSACK_UNDO);
	/* nothing left to repair: the episode is over (Linux: back to Open) */
	if ((c->flags & TF_INRECOVERY) && b->lost == 0) {
		c->flags &= ~TF_INRECOVERY;
		c->dupacks = 0;
		c->recover = c->snd_una;
	}
}

/* a tail loss probe's retransmission repaired a loss: one reduction, unless
 * a recovery already made it */
static void
tlp_repaired(struct stk *st, struct stk_tcb *c)
{
	if ((c->flags & TF_INRECOVERY) || (c->sb.sflags & SF_LOSS))
		return;
	stk_tcp_ssthresh_cut(c, c->cwnd);
	if (!stk_cc_model(c))
		c->cwnd = c->ssthresh;
	STK_CTR(st, TCP_TLP_RECOVERIES);
}

/* a D-SACK block: data that arrived twice (RFC 2883) */
static void
dsack_in(struct stk *st, struct stk_tcb *c, uint32_t l, uint32_t r)
{
	struct stk_sb *b = &c->sb;

	STK_CTR(st, TCP_DSACK_IN);
	/* RFC 8985 6.2 step 4: a retransmission was needless, so RACK waited too
	 * little; one more quarter of min_rtt, once per round trip */
	if (!(b->sflags & SF_DSACK_RND)) {
		if (b->reo_steps < UINT8_MAX)
			b->reo_steps++;
		b->reo_persist = 16;
		b->dsack_round = c->snd_max;
		b->sflags |= SF_DSACK_RND;
	}
	if ((b->sflags & SF_TLP_RXT) && SEQ_GEQ(l, b->tlp_seq) && SEQ_LEQ(r, b->tlp_high))
		b->sflags |= SF_TLP_DSACK;
	if ((b->sflags & SF_UNDO) && SEQ_GEQ(l, b->undo_marker)) {
		b->undo_retrans -= (int32_t)((r - l + c->mss - 1) / c->mss);
		if (b->undo_retrans <= 0)
			undo(st, c); /* every retransmission of the episode was needless */
	}
}

bool
stk_sb_ack(struct stk *st, struct stk_tcb *c, uint32_t ack, const struct stk_tcp_opts *o, bool pure)
{
	struct stk_sb *b = &c->sb;
	const struct stk_txrec *newest = NULL; /* of those the cumulative ACK delivers */
	uint32_t prev_high = b->sack_high;
	bool had_sack = b->sacked > 0, news = false;

	b->delivered = 0;
	b->ack_rtt = 0;
	b->rs.has_prior = false;
	b->rs.losses = 0;
	b->rs.prior_in_flight = stk_sb_pipe(c);
	if (b->cap == 0)
		return false;
	if ((b->sflags & SF_DSACK_RND) && SEQ_GEQ(ack, b->dsack_round))
		b->sflags &= (uint8_t)~SF_DSACK_RND;
	if (b->head != b->tail && SEQ_GT(ack, rec(b, b->head)->seq))
		b->tlp_count = 0; /* new data acknowledged */
	/* cumulative */
	while (b->head != b->tail) {
		struct stk_txrec *r = rec(b, b->head);

		if (SEQ_GT(r->end, ack)) {
			if (SEQ_LT(r->seq, ack)) {
				if (!(r->flags & SB_SACKED)) {
					stk_rate_delivered(c, r, st->now);
					b->delivered += ack - r->seq;
				}
				trim_front(b, r, ack - r->seq);
			}
			break;
		}
		if (!(r->flags & SB_SACKED)) {
			/* the rate sample takes the most recently sent: its
			 * slot keeps the record until the next send */
			if (newest == NULL || stk_sent_after(r->xmit, r->end, newest->xmit, newest->end))
				newest = r;
			delivered(st, c, r, prev_high, had_sack);
			b->delivered += rlen(r);
			/* Karn: only a segment sent once times the path */
			if (!(r->flags & SB_EVER_RETRANS))
				b->ack_rtt = st->now - r->xmit + 1;
		}
		b->out -= rlen(r);
		if (r->flags & SB_SACKED)
			b->sacked -= rlen(r);
		if (r->flags & SB_LOST)
			b->lost -= rlen(r);
		if (r->flags & SB_RETRANS)
			b->retrans -= rlen(r);
		t_unlink(b, r);
		b->head++;
	}
	if (newest != NULL)
		stk_rate_delivered(c, newest, st->now);
	if (id_lt(b->rxt, b->head))
		b->rxt = b->head;
	/* SACK blocks */
	for (unsigned i = 0; i < o->n_sack; i++) {
		uint32_t l = o->sack[i][0], rr = o->sack[i][1], id;

		if (!SEQ_LT(l, rr))
			continue;
		/* RFC 2883 4: the first block is a D-SACK when it lies below the
		 * cumulative ACK or inside the second block */
		if (i == 0 && (SEQ_LEQ(rr, ack) || (o->n_sack > 1 && SEQ_GEQ(l, o->sack[1][0]) &&
						    SEQ_LEQ(rr, o->sack[1][1])))) {
			dsack_in(st, c, l, rr);
			continue;
		}
		if (SEQ_LEQ(rr, ack) || SEQ_GT(rr, c->snd_max))
			continue; /* stale, or beyond what we sent */
		STK_CTR(st, TCP_SACK_BLOCKS_IN);
		if (b->head == b->tail)
			continue;
		for (id = rec_after(b, l); id != b->tail; id++) {
			struct stk_txrec *r = rec(b, id);

			if (SEQ_GT(r->end, rr))
				break;
			if (SEQ_LT(r->seq, l) || (r->flags & SB_SACKED))
				continue; /* partly covered: not SACKed */
			stk_rate_delivered(c, r, st->now);
			delivered(st, c, r, prev_high, had_sack);
			set_sacked(b, r);
			b->delivered += rlen(r);
			news = true;
		}
	}
	if (b->sacked == 0)
		b->sack_high = ack;
	stk_rate_gen(c, st->now);
	if (news)
		threshold_mark(c);
	rack_detect(st, c);
	/* the end of a tail loss probe episode (RFC 8985 7.4.2, as Linux's
	 * tcp_process_tlp_ack) */
	if ((b->sflags & SF_TLP) && SEQ_GEQ(ack, b->tlp_high)) {
		if ((b->sflags & (SF_TLP_RXT | SF_TLP_DSACK)) == SF_TLP_RXT) {
			if (SEQ_GT(ack, b->tlp_high))
				tlp_repaired(st, c); /* past the probe, and no D-SACK of it */
			else if (SEQ_GT(ack, c->snd_una) || news || !pure)
				return news; /* the original's ACK: the probe's D-SACK may follow */
			/* else the probe's own duplicate ACK: both copies arrived */
		}
		b->sflags &= (uint8_t)~(SF_TLP | SF_TLP_RXT | SF_TLP_DSACK);
	}
	return news;
}

/* the lowest record marked lost and not retransmitted since; SB_NIL if none */
static uint32_t
next_lost(struct stk_tcb *c)
{
	struct stk_sb *b = &c->sb;

	if (b->lost == 0 || b->lost == b->retrans)
		return SB_NIL; /* every lost byte is being retransmitted */
	if (id_lt(b->rxt, b->head))
		b->rxt = b->head;
	for (; b->rxt != b->tail; b->rxt++) {
		const struct stk_txrec *r = rec(b, b->rxt);

		if ((r->flags & (SB_LOST | SB_RETRANS | SB_SACKED)) == SB_LOST)
			return b->rxt;
	}
	return SB_NIL;
}

bool
stk_sb_has_lost(struct stk_tcb *c)
{
	return c->sb.cap != 0 && next_lost(c) != SB_NIL;
}

/* send a record again, in as many segments as the options leave room for */
static int
xmit_rec(struct stk *st, struct stk_tcb *c, const struct stk_txrec *r)
{
	bool fin = r->flags & SB_FIN;
	uint32_t seq = r->seq, left = rlen(r) - (fin ? 1 : 0);

	for (;;) {
		int k = stk_tcp_xmit(st, c, seq, left, STK_TCP_ACK | (fin ? STK_TCP_FIN : 0));

		if (k < 0)
			return k;
		seq += (uint32_t)k;
		left -= (uint32_t)k;
		if (left == 0)
			return 0;
	}
}

static void
retransmitted(struct stk *st, struct stk_tcb *c, struct stk_txrec *r, uint32_t id)
{
	struct stk_sb *b = &c->sb;

	if (!(r->flags & SB_RETRANS))
		b->retrans += rlen(r);
	r->flags |= SB_RETRANS | SB_EVER_RETRANS;
	r->xmit = xmit_stamp(st, b);
	stk_rate_sent(c, r, st->now, false);
	t_append(b, r, id);
	STK_CTR(st, TCP_RETRANSMITS);
	c->stats.retransmits++;
	if (b->sflags & SF_UNDO)
		b->undo_retrans++;
	stk_sb_prr_out(c, rlen(r));
	if ((c->flags & TF_RTT_TIMING) && SEQ_LEQ(r->seq, c->rtt_seq))
		c->flags &= ~TF_RTT_TIMING; /* Karn */
}

bool
stk_sb_retransmit_next(struct stk *st, struct stk_tcb *c)
{
	uint32_t id = next_lost(c);
	struct stk_txrec *r;

	if (id == SB_NIL)
		return false;
	r = rec(&c->sb, id);
	if (xmit_rec(st, c, r) < 0)
		return false;
	retransmitted(st, c, r, id);
	STK_CTR(st, TCP_SACK_RETRANSMITS);
	if (c->flags & TF_INRECOVERY) {
		STK_CTR(st, TCP_FAST_RETRANSMITS);
		c->stats.fast_retransmits++;
	}
	return true;
}

void
stk_sb_enter_recovery(struct stk *st, struct stk_tcb *c)
{
	struct stk_sb *b = &c->sb;
	uint32_t flight = c->snd_max - c->snd_una;

	b->prior_cwnd = c->cwnd;
	b->prior_ssthresh = c->ssthresh;
	b->undo_marker = c->snd_una;
	b->undo_retrans = 0;
	b->sflags |= SF_UNDO;
	b->sflags &= (uint8_t)~SF_UNDONE;
	stk_tcp_ssthresh_cut(c, flight);
	c->recover = c->snd_max;
	c->flags |= TF_INRECOVERY;
	c->flags &= ~TF_RTT_TIMING;
	b->recover_fs = flight ? flight : 1;
	b->prr_delivered = b->prr_out = 0;
	STK_CTR(st, TCP_SACK_RECOVERIES);
	/* entered on DupThresh duplicate ACKs: the first segment is lost */
	if (next_lost(c) == SB_NIL && b->head != b->tail)
		set_lost(b, rec(b, b->head), b->head);
	/* cwnd from PRR; its first send is the retransmission of the first lost
	 * segment, whatever pipe is (RFC 6675 5 step 4.3), by the caller's output */
	stk_sb_prr(c);
}

/* RFC 6937 3: proportional rate reduction, with slow start reduction bound */
void
stk_sb_prr(struct stk_tcb *c)
{
	struct stk_sb *b = &c->sb;
	uint32_t pipe = stk_sb_pipe(c);
	int64_t sndcnt;

	if (stk_cc_model(c))
		return; /* the algorithm sets cwnd (cong_control) */
	b->prr_delivered += b->delivered;
	if (pipe > c->ssthresh) {
		sndcnt = (int64_t)(((uint64_t)b->prr_delivered * c->ssthresh + b->recover_fs - 1) / b->recover_fs) -
			 b->prr_out;
	} else {
		int64_t lim = (int64_t)b->prr_delivered - b->prr_out;

		if (lim < (int64_t)b->delivered)
			lim = b->delivered;
		lim += c->mss;
		sndcnt = (int64_t)c->ssthresh - pipe;
		if (sndcnt > lim)
			sndcnt = lim;
	}
	if (sndcnt < 0)
		sndcnt = 0;
	if (b->prr_out == 0 && sndcnt < c->mss)
		sndcnt = c->mss; /* the fast retransmit itself */
	c->cwnd = pipe + (uint32_t)sndcnt;
	b->delivered = 0;
}

void
stk_sb_recovery_over(struct stk_tcb *c)
{
	struct stk_sb *b = &c->sb;

	if (b->reo_persist > 0 && --b->reo_persist == 0)
		b->reo_steps = 0;
}

void
stk_sb_exit_recovery(struct stk_tcb *c)
{
	struct stk_sb *b = &c->sb;

	stk_sb_recovery_over(c);
	if (stk_cc_model(c))
		return;
	if (b->sflags & SF_UNDONE)
		c->cwnd = c->cwnd > b->prior_cwnd ? c->cwnd : b->prior_cwnd;
	else
		c->cwnd = c->ssthresh; /* RFC 6937: the reduction ends at ssthresh */
}

void
stk_sb_rto(struct stk *st, struct stk_tcb *c, bool was_recovering)
{
	struct stk_sb *b = &c->sb;

	(void)st;
	if (!was_recovering && !(b->sflags & SF_LOSS)) {
		b->prior_cwnd = c->cwnd;
		b->prior_ssthresh = c->ssthresh;
		b->undo_marker = c->snd_una;
		b->undo_retrans = 0;
		b->sflags |= SF_UNDO;
	} else if (b->sflags & SF_LOSS) {
		b->sflags &= (uint8_t)~SF_UNDO; /* a second RTO: no undo */
	}
	for (uint32_t id = b->head; id != b->tail; id++) {
		struct stk_txrec *r = rec(b, id);

		/* a second RTO in a row: the peer may have reneged (RFC 2018 8),
		 * so SACKed data goes again too */
		if ((r->flags & SB_SACKED) && c->rexmt_shift >= 2) {
			r->flags &= (uint8_t)~SB_SACKED;
			b->sacked -= rlen(r);
		}
		if (r->flags & SB_RETRANS) {
			r->flags &= (uint8_t)~SB_RETRANS;
			b->retrans -= rlen(r);
		}
		set_lost(b, r, id);
		if (!(r->flags & SB_SACKED))
			t_unlink(b, r);
	}
	b->rxt = b->head;
	b->mark = b->tail;
	b->sflags |= SF_LOSS;
	b->sflags &= (uint8_t)~(SF_TLP | SF_TLP_RXT | SF_TLP_DSACK);
	if (c->timer[STK_T_RACK])
		stk_tcp_timer_clear(st, c, STK_T_RACK);
}

void
stk_sb_tlp_fire(struct stk *st, struct stk_tcb *c)
{
	struct stk_sb *b = &c->sb;

	c->rexmt_mode = STK_REXMT_RTO;
	STK_CTR(st, TCP_TLP_PROBES);
	/* the last episode's probe went again and was acknowledged, and a whole
	 * probe timeout brought no D-SACK of it: it repaired a loss */
	if ((b->sflags & (SF_TLP | SF_TLP_RXT | SF_TLP_DSACK)) == (SF_TLP | SF_TLP_RXT) &&
	    !stk_sb_probe_out(c))
		tlp_repaired(st, c);
	if (b->tlp_count > 0 && stk_sb_probe_out(c)) {
		/* the first probe brought nothing: the second repeats the last
		 * segment not SACKed (the probe itself may be what was lost) */
		b->sflags &= (uint8_t)~SF_TLP;
	}
	b->sflags |= SF_TLP;
	b->sflags &= (uint8_t)~(SF_TLP_RXT | SF_TLP_DSACK);
	b->tlp_seq = c->snd_max;
	/* new data if the peer's window takes it, else the last segment again */
	if (!stk_tcp_output_probe(st, c)) {
		for (uint32_t id = b->tail; id != b->head;) {
			struct stk_txrec *r = rec(b, --id);

			if (r->flags & SB_SACKED)
				continue;
			if (xmit_rec(st, c, r) == 0) {
				retransmitted(st, c, r, id);
				b->sflags |= SF_TLP_RXT;
				b->tlp_seq = r->seq;
			}
			break;
		}
	}
	b->tlp_high = c->snd_max;
	b->tlp_count++;
	stk_tcp_rexmt_arm_probe(st, c); /* the next probe if none answers, or the RTO */
}

void
stk_sb_rack_timer(struct stk *st, struct stk_tcb *c)
{
	rack_detect(st, c);
	if (!(c->flags & TF_INRECOVERY) && !(c->sb.sflags & SF_LOSS) && SEQ_GEQ(c->snd_una, c->recover) &&
	    stk_sb_has_lost(c))
		stk_sb_enter_recovery(st, c);
	stk_tcp_output(st, c);
}
