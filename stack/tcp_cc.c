/* SPDX-License-Identifier: BSD-3-Clause
 * tcp_cc.c — congestion control: which algorithm a connection runs, Reno's
 * hooks, and pacing for an algorithm that sets a rate.
 *
 *   stk_cc_select   at ESTABLISHED: cfg.congestion, Reno without SACK
 *   stk_cc_reno     RFC 5681: slow start and congestion avoidance by byte
 *                   counting, ssthresh half the flight; the reductions (PRR,
 *                   NewReno, the RTO's one segment) are the loss-recovery
 *                   code's (tcp_in_ack.c, tcp_sack.c, tcp_timer.c)
 *   stk_pace_set    a pacing rate and its burst (tcp_bbr.c)
 *   stk_pace_wait   may a data segment go now (stk_pace_ok); else the
 *                   STK_T_PACE timer */
#include "stk_priv.h"

/* RFC 5681 3.1: slow start, then congestion avoidance by the byte counting
 * it recommends (RFC 3465 2.1): one SMSS once a cwnd's worth of bytes is
 * acknowledged, whatever the number of ACKs, so that a receiver that ACKs
 * every second segment (Linux, RFC 5681 4.2) does not halve the growth, as
 * the per-ACK SMSS*SMSS/cwnd would */
static void
reno_cong_avoid(struct stk_tcb *c, uint32_t acked)
{
	if (c->cwnd < c->ssthresh) {
		c->cwnd += acked < c->mss ? acked : c->mss;
		return;
	}
	c->ca_acked += acked; /* 0 at the start and after every cut (stk_tcp_ssthresh_cut) */
	if (c->ca_acked >= c->cwnd) {
		c->ca_acked -= c->cwnd;
		c->cwnd += c->mss;
	}
}

/* RFC 5681 (4): max(FlightSize / 2, 2 SMSS) */
static uint32_t
reno_ssthresh(struct stk_tcb *c, uint32_t flight)
{
	return flight / 2 > 2 * c->mss ? flight / 2 : 2 * c->mss;
}

/* back to the cwnd before the episode (RFC 3708, as Linux's tcp_undo_cwnd_reduction) */
static uint32_t
reno_undo_cwnd(struct stk_tcb *c)
{
	return c->cwnd > c->sb.prior_cwnd ? c->cwnd : c->sb.prior_cwnd;
}

const struct stk_cc_ops stk_cc_reno = {
	.name = "reno",
	.ssthresh = reno_ssthresh,
	.cong_avoid = reno_cong_avoid,
	.undo_cwnd = reno_undo_cwnd,
};

void
stk_cc_select(struct stk *st, struct stk_tcb *c)
{
	c->cc = st->cfg.congestion == STK_CC_BBR && c->sack_ok ? &stk_cc_bbr : &stk_cc_reno;
	if (c->cc->init)
		c->cc->init(st, c);
}

void
stk_pace_set(struct stk_tcb *c, uint64_t rate, uint32_t burst)
{
	if (rate == 0) {
		c->pacing_rate = 0;
		return;
	}
	c->pacing_rate = rate;
	c->pace_ns_per_kib = ((uint64_t)1000000000 << 10) / rate;
	c->pace_burst_ns = ((uint64_t)burst * c->pace_ns_per_kib) >> 10;
}

/* stk_pace_ok() with a pacing rate: true when the schedule lets it go */
bool
stk_pace_wait(struct stk *st, struct stk_tcb *c)
{
	uint64_t at;

	if (c->pace_next <= st->now + c->pace_burst_ns)
		return true;
	/* the schedule is a burst ahead: the next segment when it is one behind */
	at = c->pace_next - c->pace_burst_ns;
	if (c->timer[STK_T_PACE] == 0 || c->timer[STK_T_PACE] > at)
		stk_tcp_timer_set(st, c, STK_T_PACE, at - st->now);
	return false;
}
