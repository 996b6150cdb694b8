/* SPDX-License-Identifier: BSD-3-Clause
 * tcp_in.c — TCP input (RFC 9293 3.10.7 "SEGMENT ARRIVES"): header checks,
 * the 4-tuple lookup, and on a synchronised connection the steps of 3.10.7.4
 * in order. Two steps and the text step's out-of-order queue have files of
 * their own (tcp_in_priv.h): tcp_in_open.c (3.10.7.2 LISTEN with SYN
 * cookies, 3.10.7.3 SYN-SENT), tcp_in_ack.c (3.10.7.4 fifth: the ACK
 * field, header prediction first) and tcp_in_ooo.c.
 *
 *   stk_tcp_input        header checks (length, data offset, checksum,
 *                        flags, options) -> 4-tuple lookup ->
 *                          no connection: listener (stk_tcp_passive_open,
 *                          stk_tcp_cookie_open) or RST
 *                          SYN_SENT: stk_tcp_syn_sent
 *                          otherwise: established() below
 *   stk_tcp_parse_opts   MSS, WS, SACK-permitted, TS; malformed -> -1
 *   stk_tcp_follow       in-order coalescing (cfg.rx_coalesce): the next
 *                        frame of a receive burst that repeats the headers
 *                        of the segment just delivered in order, at
 *                        RCV.NXT, goes to established() without the checks
 *                        that segment passed
 *
 * established(), in RFC order: PAWS (RFC 7323) -> acceptability -> RST
 * (RFC 5961 3: exact seq resets, in-window gets a challenge ACK; after the
 * peer's FIN see rst_unacceptable) -> SYN (challenge ACK) -> ACK
 * (stk_tcp_process_ack) -> text (trim to rcv_nxt and the window; in order:
 * zero-copy delivery, then drain the out-of-order queue; out of order:
 * stk_tcp_ooo_insert, immediate ACK with SACK) -> FIN -> the answering ACK: now,
 * stretched over the burst, or delayed.
 *
 * The out-of-order queue (stk_tcp_ooo_insert, tcp_in_ooo.c) is drained here
 * from its front, with stk_tcp_ooo_pop() inline, as in-order data reaches it.
 *
 * Buffer ownership: the frame is the stack's on entry. Delivered payload
 * passes to the application (ops.event STK_EV_DATA), an out-of-order segment
 * is held in its queue node, anything else is freed here. Fields of the
 * header are read before delivery, since the application may free the frame
 * inside the event callback. */
#include "tcp_in_priv.h"

int
stk_tcp_parse_opts(const uint8_t *p, unsigned len, struct stk_tcp_opts *o)
{
	/* the options of nearly every segment once established, from Linux
	 * and BSD alike: NOP, NOP, timestamps (RFC 7323 appendix A) */
	if (len == 12 && stk_get32(p) == 0x0101080au) {
		*o = (struct stk_tcp_opts){ .has_ts = true, .tsval = stk_get32(p + 4), .tsecr = stk_get32(p + 8) };
		return 0;
	}
	memset(o, 0, sizeof(*o));
	while (len > 0) {
		unsigned k = p[0], l;

		if (k == STK_TCPOPT_EOL)
			break;
		if (k == STK_TCPOPT_NOP) {
			p++;
			len--;
			continue;
		}
		if (len < 2)
			return -1;
		l = p[1];
		if (l < 2 || l > len)
			return -1; /* runs past the header, or cannot advance */
		switch (k) {
		case STK_TCPOPT_MSS:
			if (l != 4)
				return -1;
			o->has_mss = true;
			o->mss = stk_get16(p + 2);
			break;
		case STK_TCPOPT_WSCALE:
			if (l != 3)
				return -1;
			o->has_ws = true;
			o->wscale = p[2] > 14 ? 14 : p[2]; /* RFC 7323 2.3 */
			break;
		case STK_TCPOPT_SACK_PERM:
			if (l != 2)
				return -1;
			o->sack_perm = true;
			break;
		case STK_TCPOPT_TS:
			if (l != 10)
				return -1;
			o->has_ts = true;
			o->tsval = stk_get32(p + 2);
			o->tsecr = stk_get32(p + 6);
			break;
		case STK_TCPOPT_SACK:
			o->has_sack = true;
			/* blocks of 8 bytes; a malformed length keeps what fits */
			for (unsigned i = 0; 2 + 8 * i + 8 <= l && o->n_sack < 4; i++) {
				o->sack[o->n_sack][0] = stk_get32(p + 2 + 8 * i);
				o->sack[o->n_sack][1] = stk_get32(p + 6 + 8 * i);
				o->n_sack++;
			}
			break;
		default:
			break; /* unknown kinds */
		}
		p += l;
		len -= l;
	}
	return 0;
}

/* Challenge ACKs are limited per connection: a stack-wide budget is a side
 * channel (CVE-2016-5696: an off-path host counts the challenge ACKs it gets
 * back to learn that its guess of a 4-tuple hit a connection that spent some) */
static bool
challenge_allowed(struct stk *st, struct stk_tcb *c)
{
	if (st->now - c->challenge_window >= 1000 * STK_MS) {
		c->challenge_window = st->now;
		c->challenge_count = 0;
	}
	if (c->challenge_count >= st->cfg.challenge_ack_limit) {
		STK_CTR(st, DROP_TCP_CHALLENGE_LIMIT);
		return false;
	}
	c->challenge_count++;
	return true;
}

/* A duplicate ACK in answer to an unacceptable segment without payload (or a
 * SYN) at most once per oow_ack_ms on a connection, as Linux's
 * tcp_oow_rate_limited: two hosts that disagree about the window otherwise
 * ACK each other's ACKs without end. Segments with payload (zero-window
 * probes, retransmissions) are always answered. */
static bool
oow_ack_allowed(struct stk *st, struct stk_tcb *c, const struct stk_tcp_seg *s)
{
	if (s->plen > 0 && !(s->flags & STK_TCP_SYN))
		return true;
	if (c->oow_ack_at != 0 && st->now - c->oow_ack_at < (uint64_t)st->cfg.oow_ack_ms * STK_MS) {
		STK_CTR(st, TCP_OOW_ACKS_LIMITED);
		return false;
	}
	c->oow_ack_at = st->now;
	return true;
}

/* RFC 6191: a SYN may open a new incarnation of a 4-tuple still in TIME_WAIT
 * when its timestamp is newer than the last one of the old incarnation, or,
 * without timestamps, when it starts above the old incarnation's sequence
 * space (RFC 1122 4.2.2.13) */
static bool
time_wait_reusable(const struct stk_tcb *c, const struct stk_tcp_seg *s)
{
	if (c->ts_ok && s->o.has_ts)
		return SEQ_GT(s->o.tsval, c->ts_recent);
	return !c->ts_ok && SEQ_GT(s->seq, c->rcv_nxt);
}

/* a challenge ACK (RFC 5961 3.2, 4.2, 5.2) within the connection's budget */
void
stk_tcp_challenge_ack(struct stk *st, struct stk_tcb *c)
{
	if (!challenge_allowed(st, c))
		return;
	STK_CTR(st, TCP_CHALLENGE_ACKS);
	stk_tcp_send_ack(st, c);
}

/* in-order payload to the application (STK_EV_DATA), rcv_nxt past it */
static void
deliver(struct stk *st, struct stk_tcb *c, struct stk_buf *b, uint8_t *data, uint32_t len)
{
	c->rcv_nxt += len;
	if (!st->cfg.rx_hold)
		c->rcv_rel = c->rcv_nxt - c->irs - 1; /* consumed once delivered */
	STK_CTR_ADD(st, TCP_BYTES_IN, len);
	c->stats.bytes_in += len;
	if (c->flags & TF_DEAD) {
		stk_buf_free(st, b); /* the app aborted: nobody to give it to */
		return;
	}
	st->ops.event(st->ops.ctx, c, c->user, STK_EV_DATA, 0, b, data, len);
}

/* the peer's FIN, in order (RFC 9293 3.10.7.4 eighth) */
static void
fin_received(struct stk *st, struct stk_tcb *c)
{
	c->rcv_nxt++;
	c->flags |= TF_ACKNOW | TF_RCVD_FIN;
	switch (c->state) {
	case STK_TCP_ESTABLISHED:
		stk_tcb_set_state(st, c, STK_TCP_CLOSE_WAIT);
		stk_tcb_event(st, c, STK_EV_PEER_CLOSED, 0);
		break;
	case STK_TCP_FIN_WAIT_1:
		/* our FIN not acknowledged yet (else we would be in FIN_WAIT_2) */
		stk_tcb_set_state(st, c, STK_TCP_CLOSING);
		stk_tcb_event(st, c, STK_EV_PEER_CLOSED, 0);
		break;
	case STK_TCP_FIN_WAIT_2:
		stk_tcb_event(st, c, STK_EV_PEER_CLOSED, 0);
		stk_tcp_time_wait(st, c, STK_T_DELACK);
		break;
	default:
		break;
	}
}

/* a RST that reset the connection (RFC 9293 3.10.7.4 second) */
static void
rst_reset(struct stk *st, struct stk_tcb *c)
{
	if (c->state == STK_TCP_SYN_RCVD && (c->flags & TF_PASSIVE)) {
		c->flags |= TF_DEAD; /* never shown to the app: back to LISTEN */
		stk_tcb_finish(st, c, STK_EV_RESET, ECONNRESET);
	} else if (c->state == STK_TCP_SYN_RCVD) {
		stk_tcb_finish(st, c, STK_EV_RESET, ECONNREFUSED);
	} else if (c->state == STK_TCP_TIME_WAIT || c->state == STK_TCP_CLOSING ||
		   c->state == STK_TCP_LAST_ACK) {
		stk_tcb_finish(st, c, STK_EV_CLOSED, 0);
	} else {
		stk_tcb_finish(st, c, STK_EV_RESET, ECONNRESET);
	}
}

/* A RST outside the window (wnd from RCV.NXT). Dropped (RFC 5961 3.2), with
 * two cases after the peer's FIN, when a host that closed answers a segment of
 * ours that was sent before its FIN reached us: its RST takes its seq from our
 * SEG.ACK (RFC 9293 3.10.7.1), which lies below RCV.NXT.
 *  - at the FIN itself (RCV.NXT - 1) in CLOSE-WAIT, CLOSING or LAST-ACK: it
 *    resets, as in Linux (tcp_reset_check): our segment acknowledged all but
 *    the FIN (or the peer sent FIN, then RST at the FIN's seq: macOS aborting,
 *    Linux's reason);
 *  - below, within a window: stale (our segment crossed the peer's last data
 *    and FIN, e.g. our close_notify and FIN crossing a TLS server's): ignored
 *    and counted tcp_rst_stale, not a drop, as a duplicate segment is; the
 *    peer's data is all here, and a current segment of ours gets an exact RST.
 * Linux ignores that one too: it is not in its window (tcp_sequence). */
static void
rst_unacceptable(struct stk *st, struct stk_tcb *c, const struct stk_tcp_seg *s, uint32_t wnd)
{
	if (c->flags & TF_RCVD_FIN) {
		if (s->seq == c->rcv_nxt - 1 &&
		    (c->state == STK_TCP_CLOSE_WAIT || c->state == STK_TCP_CLOSING ||
		     c->state == STK_TCP_LAST_ACK)) {
			STK_CTR(st, TCP_RST_IN);
			rst_reset(st, c);
			return;
		}
		if (SEQ_LT(s->seq, c->rcv_nxt) && c->rcv_nxt - s->seq <= wnd + 1) {
			STK_CTR(st, TCP_RST_STALE);
			return;
		}
	}
	STK_CTR(st, DROP_TCP_RST_INVALID);
}

static void
established(struct stk *st, struct stk_tcb *c, struct stk_tcp_seg *s, bool follow)
{
	uint32_t wnd = SEQ_GT(c->rcv_adv, c->rcv_nxt) ? c->rcv_adv - c->rcv_nxt : 0;
	bool acceptable, fin = s->flags & STK_TCP_FIN;

	/* a follower (stk_tcp_follow) is ACK data at rcv_nxt inside rcv_adv,
	 * with the header of a segment that passed the checks below a moment
	 * ago on this connection: each would pass again (PAWS: the same TSval,
	 * no older than ts_recent; acceptable: inside the advertised window,
	 * which the window below only widens; no RST, no SYN) */
	if (follow)
		goto accepted;
	if (c->state != STK_TCP_SYN_RCVD) {
		/* what the next ACK will offer: the free space, but never more
		 * than the window field can carry (65535 unscaled) */
		uint32_t next = stk_tcb_rcv_window(st, c), cap = 65535u << c->rcv_wscale;

		if (next > cap)
			next = cap;
		if (wnd < next)
			wnd = next;
	}
	/* PAWS (RFC 7323 5.3) */
	if (c->ts_ok && s->o.has_ts && !(s->flags & STK_TCP_RST) && SEQ_LT(s->o.tsval, c->ts_recent) &&
	    st->now - c->ts_recent_age < 24ull * 86400 * 1000 * STK_MS) {
		STK_CTR(st, DROP_TCP_PAWS);
		c->stats.drops++;
		if (oow_ack_allowed(st, c, s))
			c->flags |= TF_ACKNOW;
		goto drop_ack;
	}
	/* acceptability (RFC 9293 3.10.7.4 first) */
	/* zero-length segments: up to and including the right edge, as Linux
	 * (tcp_sequence) and BSD do: a peer that sent exactly to our edge
	 * acknowledges with SEG.SEQ = RCV.NXT + RCV.WND, and answering that
	 * with an ACK hands the peer a false duplicate ACK */
	if (s->seglen == 0)
		acceptable = SEQ_GEQ(s->seq, c->rcv_nxt) && SEQ_LEQ(s->seq, c->rcv_nxt + wnd);
	else
		acceptable = wnd != 0 &&
			     ((SEQ_GEQ(s->seq, c->rcv_nxt) && SEQ_LT(s->seq, c->rcv_nxt + wnd)) ||
			      (SEQ_GEQ(s->seq + s->seglen - 1, c->rcv_nxt) &&
			       SEQ_LT(s->seq + s->seglen - 1, c->rcv_nxt + wnd)));
	/* a zero-length segment at rcv_nxt - 1 (keepalive / window probe) */
	if (!acceptable) {
		bool at_edge = false;

		if (s->flags & STK_TCP_RST) {
			rst_unacceptable(st, c, s, wnd);
			goto drop;
		}
		if (SEQ_LEQ(s->seq + s->seglen, c->rcv_nxt)) {
			if (s->seglen > 0) {
				STK_CTR(st, TCP_DUP_SEGS);
				c->stats.dup_segs++;
				stk_tcp_dsack_note(c, s->seq, s->seq + s->plen);
			}
		} else if (SEQ_GEQ(s->seq, c->rcv_nxt) && SEQ_LEQ(s->seq, c->rcv_nxt + wnd)) {
			/* at the right edge of a window that is full (a zero-window
			 * probe, or a peer that overran it): refused, not
			 * acknowledged, sent again by the peer once it opens */
			STK_CTR(st, TCP_RCV_WINDOW_FULL);
			at_edge = true;
		} else {
			STK_CTR(st, DROP_TCP_OUT_OF_WINDOW);
			c->stats.drops++;
		}
		/* an ACK in it still tells us about the peer's receive side */
		if ((s->flags & STK_TCP_ACK) && (s->seglen == 0 || at_edge) && c->state != STK_TCP_SYN_RCVD) {
			stk_tcp_process_ack(st, c, s); /* RFC 9293 3.10.7.4: a zero window still takes ACKs */
			if (c->zflags & TZ_ZOMBIE)
				goto drop;
		}
		if (oow_ack_allowed(st, c, s))
			c->flags |= TF_ACKNOW;
		goto drop_ack;
	}
	/* RST (RFC 5961 3.2) */
	if (s->flags & STK_TCP_RST) {
		STK_CTR(st, TCP_RST_IN);
		if (s->seq != c->rcv_nxt) {
			stk_tcp_challenge_ack(st, c);
			goto drop;
		}
		rst_reset(st, c);
		goto drop;
	}
	/* SYN in a synchronised state (RFC 5961 4.2) */
	if (s->flags & STK_TCP_SYN) {
		if (c->state == STK_TCP_SYN_RCVD && s->seq == c->irs) {
			/* the peer retransmitted its SYN: our SYN-ACK again */
			c->snd_nxt = c->iss;
			stk_tcp_output(st, c);
			goto drop;
		}
		stk_tcp_challenge_ack(st, c);
		goto drop;
	}
	if (!(s->flags & STK_TCP_ACK)) {
		STK_CTR(st, DROP_TCP_BAD_FLAGS);
		goto drop;
	}
accepted:
	/* timestamps: remember the peer's (RFC 7323 4.3) */
	if (c->ts_ok && s->o.has_ts && SEQ_LEQ(s->seq, c->last_ack_sent)) {
		c->ts_recent = s->o.tsval;
		c->ts_recent_age = st->now;
	}
	c->last_rx = st->now;
	c->keep_probes = 0;
	if (!stk_tcp_process_ack(st, c, s))
		goto drop;
	/* text */
	if (s->plen > 0 || fin) {
		if (c->state != STK_TCP_ESTABLISHED && c->state != STK_TCP_FIN_WAIT_1 &&
		    c->state != STK_TCP_FIN_WAIT_2) {
			/* after the peer's FIN: nothing more can be accepted */
			if (s->plen > 0) {
				STK_CTR(st, DROP_TCP_STATE);
				c->stats.drops++;
			}
			c->flags |= TF_ACKNOW;
			goto drop_ack;
		}
		/* trim what we already have */
		if (SEQ_LT(s->seq, c->rcv_nxt)) {
			uint32_t d = c->rcv_nxt - s->seq;

			stk_tcp_dsack_note(c, s->seq, s->seq + (d < s->plen ? d : s->plen));
			if (d >= s->plen) {
				if (s->plen > 0) {
					STK_CTR(st, TCP_DUP_SEGS);
					c->stats.dup_segs++;
				}
				s->payload += s->plen;
				s->plen = 0;
			} else {
				STK_CTR(st, TCP_PARTIAL_DUP);
				s->payload += d;
				s->plen -= d;
			}
			s->seq = c->rcv_nxt;
			c->flags |= TF_ACKNOW;
		}
		/* trim beyond the window */
		if (SEQ_GT(s->seq + s->plen, c->rcv_nxt + wnd)) {
			s->plen = c->rcv_nxt + wnd - s->seq;
			fin = false;
		}
		if (s->seq == c->rcv_nxt) {
			bool filled = c->ooo != NULL;

			if (s->plen > 0) {
				struct stk_buf *b = s->b;

				s->b = NULL;
				c->segs_unacked++;
				deliver(st, c, b, s->payload, s->plen);
				if (c->zflags & TZ_ZOMBIE)
					goto drop;
			}
			/* the queue's head may continue where we are now */
			while (c->ooo != NULL && SEQ_LEQ(c->ooo->seq, c->rcv_nxt)) {
				struct stk_seg_node *n = stk_tcp_ooo_pop(c);
				uint32_t d = c->rcv_nxt - n->seq;

				/* the in-order segment repeated what was held */
				if (d > 0)
					stk_tcp_dsack_note(c, n->seq, n->seq + (d < n->len ? d : n->len));

				c->ooo_bytes -= n->len;
				c->ooo_segs--;
				st->bufs_held--;
				if (n->fin && d <= n->len)
					fin = true;
				if (d < n->len) {
					STK_CTR(st, TCP_OOO_FILLED);
					deliver(st, c, n->b, n->data + d, n->len - d);
				} else {
					stk_buf_free(st, n->b);
				}
				st->ops.free(st->ops.ctx, n);
				if (c->zflags & TZ_ZOMBIE)
					goto drop;
			}
			if (filled)
				c->flags |= TF_ACKNOW; /* RFC 5681 4.2: a hole filled */
			if (fin) {
				fin_received(st, c);
				if (c->zflags & TZ_ZOMBIE)
					goto drop;
			}
		} else if (STK_UNLIKELY(st->rx_pressure) && (s->plen > 0 || fin)) {
			/* the owner is short of buffers (stk_rx_pressure): hold no
			 * more out of order; the peer sends it again. What arrives in
			 * order still goes to the application, and fills the holes
			 * that free what the queue holds. */
			STK_CTR(st, DROP_TCP_RX_PRESSURE);
			c->stats.drops++;
			c->flags |= TF_ACKNOW;
		} else if (s->plen > 0 || fin) {
			/* out of order: hold it, ACK now with SACK (RFC 5681 4.2) */
			stk_tcp_ooo_insert(st, c, s, fin);
			s->b = NULL;
			c->flags |= TF_ACKNOW;
		}
	}
drop_ack:
	if (c->flags & TF_ACKNOW || c->segs_unacked >= 2) {
		if (c->state == STK_TCP_TIME_WAIT || (c->flags & TF_DEAD && c->state != STK_TCP_TIME_WAIT)) {
			if (c->state == STK_TCP_TIME_WAIT)
				stk_tcp_send_ack(st, c);
		} else if (!(c->flags & TF_ACKNOW) && c->segs_unacked < st->cfg.ack_stretch && st->in_burst &&
			   ((c->zflags & TZ_BURST_ACK) || st->n_burst_ack < STK_BURST_ACK_MAX)) {
			/* a stretch ACK: this burst's later segments join it */
			if (!(c->zflags & TZ_BURST_ACK)) {
				c->zflags |= TZ_BURST_ACK;
				st->burst_ack[st->n_burst_ack++] = c;
			}
			stk_tcp_output(st, c);
		} else {
			stk_tcp_output(st, c);
			if (c->flags & TF_ACKNOW || c->segs_unacked >= 2)
				stk_tcp_send_ack(st, c);
		}
	} else {
		if (c->segs_unacked > 0 && c->timer[STK_T_DELACK] == 0)
			stk_tcp_timer_set(st, c, STK_T_DELACK, (uint64_t)st->cfg.delack_ms * STK_MS);
		stk_tcp_output(st, c);
	}
drop:
	if (s->b != NULL)
		stk_buf_free(st, s->b);
	s->b = NULL;
}

/* in-order coalescing: a connection whose next segment may follow the last
 * (established() handles the rest as for any in-order segment: the window
 * field, the out-of-order queue it may drain, an application that closed) */
static inline bool
follow_ok(const struct stk_tcb *c)
{
	return c->state == STK_TCP_ESTABLISHED && !(c->zflags & TZ_ZOMBIE);
}

/* the headers a follower must repeat (stk_tcp_follow) */
static void
follow_note(struct stk *st, const struct stk_ip4_hdr *ip, const struct stk_tcp_hdr *th, unsigned off,
	    const struct stk_tcp_opts *o)
{
	struct stk_follow *fw = &st->follow;
	const uint8_t *h = (const uint8_t *)th;

	fw->src = ip->src;
	memcpy(&fw->ports, h, 4);
	fw->offfl = (uint16_t)(h[12] << 8 | (h[13] & ~STK_TCP_PSH));
	fw->hlen = off;
	memcpy(fw->opt, h + STK_TCP_HLEN, off - STK_TCP_HLEN);
	fw->o = *o;
}

void
stk_tcp_input(struct stk *st, struct stk_buf *b, uint8_t *frame, struct stk_ip4_hdr *ip, uint8_t *l4,
	      uint32_t l4len, uint32_t flags)
{
	struct stk_tcp_hdr *th = (struct stk_tcp_hdr *)l4;
	struct stk_tcb *c, *prev;
	struct stk_tcp_seg s;
	unsigned off;

	(void)frame;
	STK_CTR(st, TCP_SEGS_IN);
	if (STK_UNLIKELY(l4len < STK_TCP_HLEN)) {
		STK_CTR(st, DROP_TCP_SHORT);
		goto drop;
	}
	off = (th->off >> 4) * 4u;
	if (STK_UNLIKELY(off < STK_TCP_HLEN || off > l4len)) {
		STK_CTR(st, DROP_TCP_BAD_OFF);
		goto drop;
	}
	if (!(flags & STK_RX_L4_CSUM_OK) &&
	    STK_UNLIKELY(stk_csum_fold(stk_csum_partial(l4, l4len, stk_ip4_pseudo(ip->src, ip->dst,
									       STK_IPPROTO_TCP, l4len))) != 0)) {
		STK_CTR(st, DROP_TCP_CSUM);
		goto drop;
	}
	s.flags = th->flags;
	if (STK_UNLIKELY((s.flags & (STK_TCP_SYN | STK_TCP_FIN)) == (STK_TCP_SYN | STK_TCP_FIN) ||
			 (s.flags & (STK_TCP_SYN | STK_TCP_RST)) == (STK_TCP_SYN | STK_TCP_RST))) {
		STK_CTR(st, DROP_TCP_BAD_FLAGS);
		goto drop;
	}
	if (off > STK_TCP_HLEN) {
		if (STK_UNLIKELY(stk_tcp_parse_opts(l4 + STK_TCP_HLEN, off - STK_TCP_HLEN, &s.o) < 0)) {
			STK_CTR(st, DROP_TCP_BAD_OPT);
			goto drop;
		}
	} else {
		memset(&s.o, 0, sizeof(s.o));
	}
	if (STK_UNLIKELY(be16toh(th->dport) == 0 || be16toh(th->sport) == 0)) {
		STK_CTR(st, DROP_TCP_NO_CONN);
		goto drop;
	}
	s.b = b;
	s.seq = be32toh(th->seq);
	s.ack = be32toh(th->ack);
	s.win = be16toh(th->win);
	s.payload = l4 + off;
	s.plen = l4len - off;
	s.seglen = s.plen + ((s.flags & STK_TCP_SYN) ? 1 : 0) + ((s.flags & STK_TCP_FIN) ? 1 : 0);

	c = stk_tcb_lookup(st, ip->src, be16toh(th->sport), be16toh(th->dport));
	if (c != NULL && c->state == STK_TCP_TIME_WAIT &&
	    (s.flags & (STK_TCP_SYN | STK_TCP_ACK | STK_TCP_RST)) == STK_TCP_SYN && c != st->cur &&
	    stk_listener_find(st, be16toh(th->dport)) != NULL && time_wait_reusable(c, &s)) {
		/* a new incarnation of the 4-tuple: the old one gives way */
		STK_CTR(st, TCP_TIME_WAIT_REUSED);
		stk_tcb_release(st, c);
		c = NULL;
	}
	if (c == NULL) {
		struct stk_listener *l = stk_listener_find(st, be16toh(th->dport));

		if (l != NULL && (s.flags & (STK_TCP_SYN | STK_TCP_ACK | STK_TCP_RST)) == STK_TCP_SYN) {
			stk_tcp_passive_open(st, l, ip, th, &s);
			goto drop;
		}
		if (l != NULL && (c = stk_tcp_cookie_open(st, l, ip, th, &s)) != NULL) {
			/* ACCEPTED, then the segment itself (data on the ACK) */
			c->stats.segs_in++;
			prev = st->cur;
			st->cur = c;
			stk_tcb_event(st, c, STK_EV_ACCEPTED, 0);
			if (c->zflags & TZ_ZOMBIE)
				stk_buf_free(st, s.b);
			else
				established(st, c, &s, false);
			st->cur = prev;
			if (c->zflags & TZ_ZOMBIE)
				stk_tcb_release(st, c);
			return;
		}
		if (s.flags & STK_TCP_RST) {
			/* discarded, never answered (RFC 9293 3.10.7.1): the answers
			 * of a peer host whose socket is gone, to segments of ours
			 * that crossed its FIN, arrive in any order; the exact one
			 * closes the connection, those after it find none */
			STK_CTR(st, TCP_RST_NO_CONN);
			goto drop;
		}
		STK_CTR(st, DROP_TCP_NO_CONN);
		stk_tcp_respond_rst(st, ip, th, s.seglen);
		goto drop;
	}
	c->stats.segs_in++;
	prev = st->cur;
	st->cur = c;
	if (c->state == STK_TCP_SYN_SENT) {
		stk_tcp_syn_sent(st, c, &s);
		if (s.b != NULL)
			stk_buf_free(st, s.b);
	} else if (st->cfg.rx_coalesce && st->rx_more && (s.flags & (uint8_t)~STK_TCP_PSH) == STK_TCP_ACK &&
		   s.plen > 0 && !s.o.has_sack && c->state == STK_TCP_ESTABLISHED) {
		/* it may lead a run (another frame follows in the burst): its
		 * headers noted before the application can free the frame, the
		 * run opened once it went in order */
		uint32_t end = s.seq + s.plen;

		follow_note(st, ip, th, off, &s.o);
		established(st, c, &s, false);
		if (c->rcv_nxt == end && follow_ok(c))
			st->follow.c = c;
	} else {
		established(st, c, &s, false);
	}
	st->cur = prev;
	if (c->zflags & TZ_ZOMBIE)
		stk_tcb_release(st, c);
	return;
drop:
	stk_buf_free(st, b);
}

bool
stk_tcp_follow(struct stk *st, struct stk_buf *b, uint8_t *frame, uint32_t len, uint32_t flags)
{
	struct stk_follow *fw = &st->follow;
	struct stk_tcb *c = fw->c, *prev;
	const struct stk_eth_hdr *eh = (const struct stk_eth_hdr *)frame;
	struct stk_ip4_hdr *ip = (struct stk_ip4_hdr *)(frame + STK_ETH_HLEN);
	uint8_t *l4 = frame + STK_ETH_HLEN + STK_IP4_HLEN;
	const struct stk_tcp_hdr *th = (const struct stk_tcp_hdr *)l4;
	struct stk_tcp_seg s;
	uint32_t tot, l4len, ports;

	/* the headers the last segment had: Ethernet to us, IPv4 without
	 * options or fragments, the same source, ports, offset, flags (PSH
	 * aside) and option bytes, and payload; the ACK and window fields may
	 * move (the ACK step takes them as for any segment) */
	if (len < STK_ETH_HLEN + STK_IP4_HLEN + fw->hlen)
		return false;
	memcpy(&ports, l4, 4);
	tot = be16toh(ip->tot_len);
	if (memcmp(eh->dst, st->cfg.mac, 6) != 0 || eh->type != htobe16(STK_ETH_P_IP) || ip->ver_ihl != 0x45 ||
	    ip->proto != STK_IPPROTO_TCP || ip->ttl == 0 || ip->src != fw->src || ip->dst != st->cfg.ip ||
	    (be16toh(ip->frag) & (STK_IP4_MF | STK_IP4_OFFMASK)) != 0 || tot <= STK_IP4_HLEN + fw->hlen ||
	    tot > len - STK_ETH_HLEN || ports != fw->ports ||
	    (uint16_t)(l4[12] << 8 | (l4[13] & ~STK_TCP_PSH)) != fw->offfl)
		return false;
	/* the options: timestamps alone (12 bytes) in two loads, else memcmp */
	if (fw->hlen == STK_TCP_HLEN + 12) {
		uint64_t a8, w8;
		uint32_t a4, w4;

		memcpy(&a8, l4 + STK_TCP_HLEN, 8);
		memcpy(&w8, fw->opt, 8);
		memcpy(&a4, l4 + STK_TCP_HLEN + 8, 4);
		memcpy(&w4, fw->opt + 8, 4);
		if (a8 != w8 || a4 != w4)
			return false;
	} else if (memcmp(l4 + STK_TCP_HLEN, fw->opt, fw->hlen - STK_TCP_HLEN) != 0) {
		return false;
	}
	l4len = tot - STK_IP4_HLEN;
	if (!(flags & STK_RX_IP_CSUM_OK) && stk_csum_fold(stk_csum_partial(ip, STK_IP4_HLEN, 0)) != 0)
		return false;
	if (!(flags & STK_RX_L4_CSUM_OK) &&
	    stk_csum_fold(stk_csum_partial(l4, l4len, stk_ip4_pseudo(ip->src, ip->dst, STK_IPPROTO_TCP, l4len))) != 0)
		return false;
	/* at RCV.NXT and inside the window we advertised: in order and
	 * untrimmed, as the last one went */
	s.seq = be32toh(th->seq);
	s.plen = l4len - fw->hlen;
	if (s.seq != c->rcv_nxt || !follow_ok(c) || !SEQ_GT(c->rcv_adv, c->rcv_nxt) ||
	    s.plen > c->rcv_adv - c->rcv_nxt)
		return false;
	s.b = b;
	s.payload = l4 + fw->hlen;
	s.ack = be32toh(th->ack);
	s.win = be16toh(th->win);
	s.flags = th->flags;
	s.seglen = s.plen;
	s.o = fw->o;
	/* what eth, IPv4 and TCP input count for every segment */
	STK_CTR(st, RX_FRAMES);
	STK_CTR_ADD(st, RX_BYTES, len);
	STK_CTR(st, IP_RX);
	STK_CTR(st, TCP_SEGS_IN);
	STK_CTR(st, TCP_COALESCED);
	c->stats.segs_in++;
	prev = st->cur;
	st->cur = c;
	established(st, c, &s, true);
	st->cur = prev;
	if (c->zflags & TZ_ZOMBIE) {
		fw->c = NULL;
		stk_tcb_release(st, c);
	} else if (!follow_ok(c)) {
		fw->c = NULL;
	}
	return true;
}
