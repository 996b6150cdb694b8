/* SPDX-License-Identifier: BSD-3-Clause
 * tcp_in_ack.c — the ACK field of an acceptable segment (RFC 9293 3.10.7.4
 * fifth): SYN_RCVD to ESTABLISHED, the acceptable range (RFC 5961 5.2),
 * header prediction, snd_una and the RTT (RFC 6298, RFC 7323 timestamps,
 * Karn), with a SACK peer the scoreboard and RFC 6675 recovery (tcp_sack.c),
 * else NewReno (RFC 5681, RFC 6582), the retransmission timer, our FIN
 * acknowledged, and the window update (SND.WL1/WL2).
 *
 *   stk_tcp_process_ack   every acceptable segment with ACK, from
 *                         established() in tcp_in.c; false: drop it
 *   fin_acked             FIN_WAIT_1 -> FIN_WAIT_2, CLOSING -> TIME_WAIT,
 *                         LAST_ACK -> CLOSED
 *   stk_tcp_time_wait     into TIME_WAIT, also from FIN_WAIT_2 (tcp_in.c)
 *
 * cwnd grows by the connection's algorithm (tcp_cc.c), or is set by it after
 * every ACK of a SACK peer (BBR). */
#include "tcp_in_priv.h"

void
stk_tcp_time_wait(struct stk *st, struct stk_tcb *c, unsigned t)
{
	stk_tcb_set_state(st, c, STK_TCP_TIME_WAIT);
	if (!(c->flags & TF_DEAD)) {
		stk_tcb_event(st, c, STK_EV_CLOSED, 0);
		STK_CTR(st, TCP_CLOSED);
	}
	c->flags |= TF_DEAD;
	stk_tcp_timer_clear(st, c, t);
	stk_tcp_timer_set(st, c, STK_T_2MSL, (uint64_t)st->cfg.time_wait_ms * STK_MS);
}

/* our FIN acknowledged: state moves (RFC 9293 3.10.7.4 fifth, ACK processing) */
static void
fin_acked(struct stk *st, struct stk_tcb *c)
{
	switch (c->state) {
	case STK_TCP_FIN_WAIT_1:
		stk_tcb_set_state(st, c, STK_TCP_FIN_WAIT_2);
		stk_tcp_timer_set(st, c, STK_T_2MSL, (uint64_t)st->cfg.fin_wait2_ms * STK_MS);
		break;
	case STK_TCP_CLOSING:
		stk_tcp_time_wait(st, c, STK_T_REXMT);
		break;
	case STK_TCP_LAST_ACK:
		stk_tcb_finish(st, c, STK_EV_CLOSED, 0);
		break;
	default:
		break;
	}
}

/* ACK processing; returns false when the segment must be dropped */
bool
stk_tcp_process_ack(struct stk *st, struct stk_tcb *c, struct stk_tcp_seg *s)
{
	uint32_t ack = s->ack, win = s->win << c->snd_wscale;

	if (c->state == STK_TCP_SYN_RCVD) {
		if (SEQ_LEQ(ack, c->snd_una) || SEQ_GT(ack, c->snd_max)) {
			STK_CTR(st, DROP_TCP_BAD_ACK);
			stk_tcp_send_ctl(st, c, STK_TCP_RST, ack);
			return false;
		}
		stk_listener_detach(st, c);
		stk_tcb_set_state(st, c, STK_TCP_ESTABLISHED);
		c->snd_wnd = win;
		c->max_snd_wnd = win;
		c->snd_wl1 = s->seq;
		c->snd_wl2 = ack;
		c->snd_una = ack;
		if (c->rexmt_shift == 0)
			stk_tcp_rtt_sample(st, c, st->now - (c->timer[STK_T_REXMT] - c->rto_ns));
		stk_tcp_established_entered(st, c);
		if (c->flags & TF_PASSIVE) {
			STK_CTR(st, TCP_ACCEPTS);
			stk_tcb_event(st, c, STK_EV_ACCEPTED, 0);
		} else {
			stk_tcb_event(st, c, STK_EV_CONNECTED, 0);
		}
		if (c->zflags & TZ_ZOMBIE)
			return false;
		/* an ACK of our FIN too, if the app closed inside the event */
	}
	/* RFC 5961 5.2: acceptable range */
	if (SEQ_GT(ack, c->snd_max)) {
		STK_CTR(st, DROP_TCP_BAD_ACK);
		stk_tcp_challenge_ack(st, c);
		return false;
	}
	if (SEQ_LT(ack, c->snd_una - c->max_snd_wnd)) {
		STK_CTR(st, DROP_TCP_BAD_ACK);
		stk_tcp_challenge_ack(st, c);
		return false;
	}
	/* header prediction, the receiving side's common case (BSD's
	 * tcp_input does the same): nothing in flight, nothing newly
	 * acknowledged, no SACK blocks. No RTT sample, congestion, scoreboard,
	 * duplicate-ACK or recovery work can follow from it (each needs
	 * snd_max != snd_una or new data acknowledged); only the window moves.
	 * Not for a pure ACK while a loss probe's episode is open: it may be the
	 * probe's duplicate ACK, which ends the episode (stk_sb_ack()). */
	if (ack == c->snd_una && c->snd_max == c->snd_una && !s->o.has_sack && !(c->flags & TF_INRECOVERY) &&
	    !(s->seglen == 0 && (c->sb.sflags & SF_TLP))) {
		c->sb.delivered = 0; /* what stk_sb_ack() would have said: nothing */
		c->sb.ack_rtt = 0;
		goto window;
	}
	if (SEQ_GT(ack, c->snd_una)) {
		uint32_t acked = ack - c->snd_una;
		bool fin_now = (c->flags & TF_SENT_FIN) && SEQ_GT(ack, c->fin_seq);

		/* RTT: a SACK peer's scoreboard knows when each segment left (ns,
		 * Karn); else timestamps when both use them (ms), else the timed
		 * segment (Karn) */
		if (c->sack_ok)
			stk_sb_ack(st, c, ack, &s->o, false);
		if (c->sack_ok && c->sb.ack_rtt != 0) {
			if (c->rexmt_shift == 0)
				stk_tcp_rtt_sample(st, c, c->sb.ack_rtt - 1);
		} else if (c->ts_ok && s->o.has_ts && s->o.tsecr != 0) {
			uint32_t d = stk_tcp_ts_now(st, c) - s->o.tsecr;

			if (d < 60000 && c->rexmt_shift == 0)
				stk_tcp_rtt_sample(st, c, (uint64_t)d * STK_MS);
		} else if ((c->flags & TF_RTT_TIMING) && SEQ_GT(ack, c->rtt_seq)) {
			stk_tcp_rtt_sample(st, c, st->now - c->rtt_start);
		}
		if ((c->flags & TF_RTT_TIMING) && SEQ_GT(ack, c->rtt_seq))
			c->flags &= ~TF_RTT_TIMING;
		c->rexmt_shift = 0;
		/* congestion control */
		if (c->sack_ok) {
			/* RFC 6675: the scoreboard (updated above) decides what
			 * goes again; PRR sets cwnd through recovery */
			if (c->flags & TF_INRECOVERY) {
				if (SEQ_GEQ(ack, c->recover)) {
					c->flags &= ~TF_INRECOVERY;
					c->dupacks = 0;
					stk_sb_exit_recovery(c);
				} else {
					stk_sb_prr(c);
				}
			} else {
				c->dupacks = 0;
				if ((c->sb.sflags & SF_LOSS) && SEQ_GEQ(ack, c->recover)) {
					c->sb.sflags &= (uint8_t)~SF_LOSS;
					stk_sb_recovery_over(c); /* RTO recovery */
				}
				if (c->cc->cong_avoid)
					c->cc->cong_avoid(c, acked);
			}
		} else if (c->flags & TF_INRECOVERY) {
			if (SEQ_GEQ(ack, c->recover)) {
				/* full ACK (RFC 6582 3.2 step 3) */
				uint32_t flight = c->snd_max - ack;

				c->cwnd = c->ssthresh < (flight > c->mss ? flight : c->mss) + c->mss
						  ? c->ssthresh
						  : (flight > c->mss ? flight : c->mss) + c->mss;
				c->flags &= ~TF_INRECOVERY;
				c->dupacks = 0;
			} else {
				/* partial ACK: the next hole goes now, deflate */
				c->snd_una = ack;
				stk_sndq_ack(st, c, ack);
				STK_CTR(st, TCP_FAST_RETRANSMITS);
				c->stats.fast_retransmits++;
				stk_tcp_retransmit_first(st, c);
				c->cwnd = c->cwnd > acked ? c->cwnd - acked : 0;
				if (acked >= c->mss)
					c->cwnd += c->mss;
				if (c->cwnd < c->mss)
					c->cwnd = c->mss;
			}
		} else {
			c->dupacks = 0;
			c->cc->cong_avoid(c, acked); /* no SACK: Reno */
		}
		c->snd_una = ack;
		stk_sndq_ack(st, c, fin_now ? c->fin_seq : ack);
		if (SEQ_LT(c->snd_nxt, c->snd_una))
			c->snd_nxt = c->snd_una;
		if (c->snd_una == c->snd_max) {
			stk_tcp_timer_clear(st, c, STK_T_REXMT);
			if (c->timer[STK_T_RACK])
				stk_tcp_timer_clear(st, c, STK_T_RACK);
		} else if (c->sack_ok) {
			stk_tcp_rexmt_arm_data(st, c); /* RFC 6298 5.3, RFC 8985 7.2 */
		} else if (!(c->flags & TF_INRECOVERY) || SEQ_GEQ(ack, c->recover)) {
			stk_tcp_rexmt_arm(st, c); /* RFC 6298 5.3 */
		}
		if (fin_now) {
			fin_acked(st, c);
			if (c->zflags & TZ_ZOMBIE)
				return false;
		}
	} else if (c->sack_ok) {
		/* a duplicate ACK is one with new SACK information (RFC 6675 2);
		 * a D-SACK alone does not count */
		if (stk_sb_ack(st, c, ack, &s->o, s->seglen == 0 && win == c->snd_wnd) &&
		    c->snd_max != c->snd_una) {
			STK_CTR(st, TCP_DUP_ACKS_IN);
			c->stats.dup_acks_in++;
			if (c->dupacks < UINT8_MAX)
				c->dupacks++;
		}
		if (c->flags & TF_INRECOVERY)
			stk_sb_prr(c);
	} else if (ack == c->snd_una && s->seglen == 0 && c->snd_max != c->snd_una &&
		   ((s->win << c->snd_wscale) == c->snd_wnd || s->o.has_sack)) {
		/* duplicate ACK (RFC 5681 2); one carrying SACK blocks reports
		 * out-of-order arrivals even when the window moved (RFC 6675) */
		STK_CTR(st, TCP_DUP_ACKS_IN);
		c->stats.dup_acks_in++;
		if (c->dupacks < UINT8_MAX) /* saturate: a wrap would stop the inflation */
			c->dupacks++;
		if (c->dupacks == 3 && !(c->flags & TF_INRECOVERY) && SEQ_GT(ack, c->recover - 1)) {
			uint32_t flight = c->snd_max - c->snd_una;

			stk_tcp_ssthresh_cut(c, flight);
			c->recover = c->snd_max;
			c->flags |= TF_INRECOVERY;
			c->flags &= ~TF_RTT_TIMING;
			STK_CTR(st, TCP_FAST_RETRANSMITS);
			c->stats.fast_retransmits++;
			stk_tcp_retransmit_first(st, c);
			c->cwnd = c->ssthresh + 3 * c->mss;
		} else if (c->dupacks > 3 && (c->flags & TF_INRECOVERY)) {
			c->cwnd += c->mss; /* inflate: a segment left the network */
		}
	}
	/* RFC 6675 5: recovery on DupThresh duplicate ACKs or once a segment
	 * counts as lost (IsLost, RACK) */
	if (c->sack_ok && !(c->flags & TF_INRECOVERY) && !(c->sb.sflags & SF_LOSS) &&
	    c->snd_max != c->snd_una && SEQ_GEQ(ack, c->recover) &&
	    (c->dupacks >= 3 || stk_sb_has_lost(c)))
		stk_sb_enter_recovery(st, c);
	if (c->sack_ok && stk_cc_model(c))
		c->cc->cong_control(st, c);
window:
	/* window update (RFC 9293 3.10.7.4 fifth, SND.WL1/WL2 rule) */
	if (SEQ_LT(c->snd_wl1, s->seq) || (c->snd_wl1 == s->seq && SEQ_LEQ(c->snd_wl2, ack))) {
		bool was_zero = c->snd_wnd == 0;

		c->snd_wnd = win;
		c->snd_wl1 = s->seq;
		c->snd_wl2 = ack;
		if (win > c->max_snd_wnd)
			c->max_snd_wnd = win;
		if (win == 0 && !was_zero)
			STK_CTR(st, TCP_ZERO_WINDOW_IN);
		if (win != 0)
			c->zw_since = 0; /* persist_timeout_ms counts one closed spell */
		if (win != 0 && c->rexmt_mode == STK_REXMT_PERSIST && c->timer[STK_T_REXMT] != 0) {
			stk_tcp_timer_clear(st, c, STK_T_REXMT);
			c->rexmt_mode = STK_REXMT_RTO;
			c->rexmt_shift = 0;
		}
	}
	if (c->state == STK_TCP_TIME_WAIT && (s->flags & STK_TCP_FIN)) {
		/* the peer's FIN again: our ACK was lost */
		c->flags |= TF_ACKNOW;
		stk_tcp_timer_set(st, c, STK_T_2MSL, (uint64_t)st->cfg.time_wait_ms * STK_MS);
	}
	return true;
}
