/* SPDX-License-Identifier: BSD-3-Clause
 * tcp_out.c — TCP output.
 *
 *   stk_tcp_output        send what the state, the peer's window and cwnd
 *                         (+ Limited Transmit, RFC 3042, on duplicate ACKs 1, 2)
 *                         allow: SYN / SYN-ACK, data segmented to the MSS (a SACK
 *                         peer in recovery: segments marked lost first, then new
 *                         data, while pipe < cwnd, RFC 6675; each new segment
 *                         recorded in the scoreboard, tcp_sack.c)
 *                         (no Nagle: latency first), FIN, or a pending ACK;
 *                         data at the pacing rate when the congestion control
 *                         sets one (tcp_cc.c: else the STK_T_PACE timer);
 *                         arms the retransmission or persist timer
 *   stk_tcp_xmit          build and send one segment (seq, len, flags):
 *                         headers, options (MSS/WS/SACK-permitted/TS on SYN;
 *                         TS and SACK blocks after), payload copied from the
 *                         send queue, checksums (software or left to the port)
 *   stk_tcp_output_probe  up to two new segments beyond cwnd (tail loss probe)
 *   stk_tcp_send_ack      a pure ACK now
 *   stk_tcp_send_ctl      a control segment (RST on abort, probes)
 *   stk_tcp_respond_rst   RST for a segment that has no connection
 *   stk_tcp_send_cookie_synack  a SYN-ACK without a connection (SYN cookie)
 *
 * Sending copies payload from the application's buffers into a fresh frame:
 * the queue keeps the original until it is acknowledged, so a retransmission
 * can be rebuilt at any offset and with the current options. */
#include "stk_priv.h"

#define HDRS (STK_ETH_HLEN + STK_IP4_HLEN + STK_TCP_HLEN)

static unsigned
our_wscale(const struct stk *st)
{
	unsigned s = 0;

	while (s < 14 && (st->cfg.rcvbuf >> s) > 65535)
		s++;
	return s;
}

/* SACK blocks from the out-of-order queue's blocks (no walk of its
 * segments): first the block holding the most recent arrival, then those
 * holding the arrivals before it, newest first (RFC 2018 section 4), then the
 * rest in order. */
static unsigned
sack_blocks(const struct stk_tcb *c, uint32_t *blk, unsigned max)
{
	unsigned used[STK_SACK_HIST], nu = 0, out = 0;

	for (unsigned h = 0; h < c->n_sack_hist && out < max; h++) {
		uint32_t a = c->sack_hist[h];
		unsigned i = stk_oblk_find(c->oblk, c->n_oblk, a);
		bool dup = false;

		if (i == c->n_oblk || SEQ_LT(a, c->oblk[i].seq))
			continue; /* delivered since */
		for (unsigned k = 0; k < nu; k++)
			dup |= used[k] == i;
		if (dup)
			continue;
		used[nu++] = i;
		blk[2 * out] = c->oblk[i].seq;
		blk[2 * out + 1] = c->oblk[i].end;
		out++;
	}
	for (unsigned i = 0; i < c->n_oblk && out < max; i++) {
		bool dup = false;

		for (unsigned k = 0; k < nu; k++)
			dup |= used[k] == i;
		if (dup)
			continue;
		blk[2 * out] = c->oblk[i].seq;
		blk[2 * out + 1] = c->oblk[i].end;
		out++;
	}
	return out;
}

/* copy len bytes of queued data starting at seq into dst */
static void
sndq_copy(struct stk_tcb *c, uint32_t seq, uint8_t *dst, uint32_t len)
{
	struct stk_snd_node *n = c->sq_cursor;

	if (n == NULL || SEQ_GT(n->seq, seq))
		n = STAILQ_FIRST(&c->sq);
	while (n != NULL && SEQ_GEQ(seq, n->seq + n->len))
		n = STAILQ_NEXT(n, next);
	c->sq_cursor = n;
	while (len > 0 && n != NULL) {
		uint32_t off = seq - n->seq, k = n->len - off;

		if (k > len)
			k = len;
		memcpy(dst, n->data + off, k);
		dst += k;
		seq += k;
		len -= k;
		if (off + k == n->len)
			n = STAILQ_NEXT(n, next);
	}
}

static uint32_t
window_to_offer(struct stk *st, struct stk_tcb *c, bool syn)
{
	uint32_t w = stk_tcb_rcv_window(st, c), edge;

	if (syn)
		return w > 65535 ? 65535 : w;
	/* never move the right edge left, and move it right only by an SWS
	 * step at least (RFC 9293 3.8.6.2.2): a window that frees up a little
	 * at a time (rx_hold) is not offered in slivers */
	edge = c->rcv_nxt + w;
	if (SEQ_GT(c->rcv_adv, c->rcv_nxt)) {
		if (SEQ_LT(edge, c->rcv_adv + stk_tcb_sws_step(st, c)))
			w = c->rcv_adv - c->rcv_nxt;
	} else if (w < stk_tcb_sws_step(st, c)) {
		w = 0;
	}
	/* tcp_zero_window_out counts spells of a closed window, not segments */
	if (w == 0 && !(c->zflags & TZ_ZWND_OUT)) {
		c->zflags |= TZ_ZWND_OUT;
		STK_CTR(st, TCP_ZERO_WINDOW_OUT);
	} else if (w != 0) {
		c->zflags &= ~TZ_ZWND_OUT;
	}
	w >>= c->rcv_wscale;
	if (w > 65535)
		w = 65535;
	return w;
}

/* Generic segment builder; c may be NULL (RST to a stray segment). */
static int
seg_out(struct stk *st, struct stk_tcb *c, uint32_t rip, uint16_t rport, uint16_t lport, uint32_t seq,
	uint32_t ack, uint8_t flags, uint32_t len, const uint8_t *opts, unsigned optlen, uint32_t win)
{
	uint32_t tcplen = STK_TCP_HLEN + optlen + len, flen = STK_ETH_HLEN + STK_IP4_HLEN + tcplen;
	bool off = st->cfg.tx_csum_offload;
	struct stk_tcp_hdr *th;
	struct stk_ip4_hdr *ip;
	struct stk_buf *b;
	uint8_t *f;

	b = st->ops.tx_alloc(st->ops.ctx, flen, &f);
	if (STK_UNLIKELY(b == NULL)) {
		STK_CTR(st, DROP_TX_NOBUF);
		return -ENOBUFS;
	}
	ip = (struct stk_ip4_hdr *)(f + STK_ETH_HLEN);
	th = (struct stk_tcp_hdr *)(f + STK_ETH_HLEN + STK_IP4_HLEN);
	th->sport = htobe16(lport);
	th->dport = htobe16(rport);
	th->seq = htobe32(seq);
	th->ack = htobe32(ack);
	th->off = (uint8_t)(((STK_TCP_HLEN + optlen) / 4) << 4);
	th->flags = flags;
	th->win = htobe16((uint16_t)win);
	th->csum = 0;
	th->urp = 0;
	if (optlen)
		memcpy(th + 1, opts, optlen);
	if (len)
		sndq_copy(c, seq + ((flags & STK_TCP_SYN) ? 1 : 0), (uint8_t *)(th + 1) + optlen, len);
	stk_ip4_fill(st, ip, rip, STK_IPPROTO_TCP, tcplen, off);
	if (off)
		th->csum = (uint16_t)~stk_csum_fold(stk_ip4_pseudo(st->cfg.ip, rip, STK_IPPROTO_TCP, tcplen));
	else
		th->csum = stk_csum_fold(stk_csum_partial(th, tcplen,
							  stk_ip4_pseudo(st->cfg.ip, rip, STK_IPPROTO_TCP, tcplen)));
	STK_CTR(st, TCP_SEGS_OUT);
	if (c != NULL) {
		c->stats.segs_out++;
		return stk_eth_output(st, b, f, flen, c->nexthop,
				      off ? (STK_TX_IP_CSUM | STK_TX_TCP_CSUM) : 0, &c->arp_idx);
	}
	return stk_eth_output(st, b, f, flen, stk_ip4_nexthop(st, rip), off ? (STK_TX_IP_CSUM | STK_TX_TCP_CSUM) : 0,
			      NULL);
}

static unsigned
put_ts(struct stk *st, struct stk_tcb *c, uint8_t *o)
{
	o[0] = STK_TCPOPT_NOP;
	o[1] = STK_TCPOPT_NOP;
	o[2] = STK_TCPOPT_TS;
	o[3] = 10;
	stk_put32(o + 4, stk_tcp_ts_now(st, c));
	stk_put32(o + 8, c->ts_recent);
	return 12;
}

int
stk_tcp_xmit(struct stk *st, struct stk_tcb *c, uint32_t seq, uint32_t len, uint8_t flags)
{
	uint8_t opts[40];
	unsigned ol = 0;
	bool syn = flags & STK_TCP_SYN;
	uint32_t win;

	if (syn) {
		uint16_t mss = (uint16_t)(st->cfg.mtu - STK_IP4_HLEN - STK_TCP_HLEN);
		bool synack = flags & STK_TCP_ACK;
		bool ws = synack ? c->ws_ok : st->cfg.window_scale;
		bool sack = synack ? c->sack_ok : st->cfg.sack;
		bool ts = synack ? c->ts_ok : st->cfg.timestamps;

		opts[ol++] = STK_TCPOPT_MSS;
		opts[ol++] = 4;
		stk_put16(opts + ol, mss);
		ol += 2;
		if (ws) {
			opts[ol++] = STK_TCPOPT_NOP;
			opts[ol++] = STK_TCPOPT_WSCALE;
			opts[ol++] = 3;
			opts[ol++] = (uint8_t)our_wscale(st);
		}
		if (sack && ts) {
			opts[ol++] = STK_TCPOPT_SACK_PERM;
			opts[ol++] = 2;
			opts[ol++] = STK_TCPOPT_TS;
			opts[ol++] = 10;
			stk_put32(opts + ol, stk_tcp_ts_now(st, c));
			stk_put32(opts + ol + 4, synack ? c->ts_recent : 0);
			ol += 8;
		} else if (ts) {
			ol += put_ts(st, c, opts + ol);
			if (!synack)
				stk_put32(opts + ol - 4, 0);
		} else if (sack) {
			opts[ol++] = STK_TCPOPT_NOP;
			opts[ol++] = STK_TCPOPT_NOP;
			opts[ol++] = STK_TCPOPT_SACK_PERM;
			opts[ol++] = 2;
		}
	} else {
		if (c->ts_ok)
			ol += put_ts(st, c, opts);
		if (c->sack_ok && (c->ooo != NULL || c->dsack) && (flags & STK_TCP_ACK)) {
			uint32_t blk[8];
			unsigned nb = 0, max = c->ts_ok ? 3 : 4;

			if (c->dsack) {
				/* RFC 2883: the duplicate first, then the usual blocks */
				blk[0] = c->dsack_s;
				blk[1] = c->dsack_e;
				nb = 1;
				c->dsack = false;
				STK_CTR(st, TCP_DSACK_OUT);
			}
			nb += sack_blocks(c, blk + 2 * nb, max - nb);
			if (nb > 0) {
				opts[ol++] = STK_TCPOPT_NOP;
				opts[ol++] = STK_TCPOPT_NOP;
				opts[ol++] = STK_TCPOPT_SACK;
				opts[ol++] = (uint8_t)(2 + 8 * nb);
				for (unsigned i = 0; i < 2 * nb; i++, ol += 4)
					stk_put32(opts + ol, blk[i]);
			}
		}
	}
	/* options beyond the timestamps (SACK blocks) come out of the payload */
	if (len > 0) {
		uint32_t room = c->pmtu - STK_IP4_HLEN - STK_TCP_HLEN - ol;

		if (len > room) {
			len = room;
			flags &= (uint8_t)~STK_TCP_FIN; /* the FIN follows the rest */
		}
	}
	win = window_to_offer(st, c, syn);
	if (flags & STK_TCP_ACK) {
		uint32_t edge = c->rcv_nxt + (syn ? win : win << c->rcv_wscale);

		if (SEQ_GT(edge, c->rcv_adv))
			c->rcv_adv = edge;
		c->last_ack_sent = c->rcv_nxt;
		c->segs_unacked = 0;
		c->flags &= ~TF_ACKNOW;
		if (c->timer[STK_T_DELACK])
			stk_tcp_timer_clear(st, c, STK_T_DELACK);
	}
	if (seg_out(st, c, c->rip, c->rport, c->lport, seq, (flags & STK_TCP_ACK) ? c->rcv_nxt : 0, flags, len,
		    opts, ol, win) < 0)
		return -ENOBUFS;
	stk_pace_sent(st, c, len);
	return (int)len;
}

void
stk_tcp_send_ack(struct stk *st, struct stk_tcb *c)
{
	STK_CTR(st, TCP_ACKS_OUT);
	stk_tcp_xmit(st, c, c->snd_nxt, 0, STK_TCP_ACK);
}

int
stk_tcp_send_ctl(struct stk *st, struct stk_tcb *c, uint8_t flags, uint32_t seq)
{
	if (flags & STK_TCP_RST) {
		STK_CTR(st, TCP_RST_OUT);
		return seg_out(st, c, c->rip, c->rport, c->lport, seq, c->rcv_nxt, flags, 0, NULL, 0, 0);
	}
	return stk_tcp_xmit(st, c, seq, 0, flags);
}

void
stk_tcp_respond_rst(struct stk *st, const struct stk_ip4_hdr *ip, const struct stk_tcp_hdr *th,
		    uint32_t seglen)
{
	uint32_t seq = 0, ack = 0;
	uint8_t flags = STK_TCP_RST;

	if (th->flags & STK_TCP_RST)
		return; /* never answer a RST */
	if (stk_ip4_nexthop(st, ip->src) == 0)
		return;
	if (th->flags & STK_TCP_ACK) {
		seq = be32toh(th->ack);
	} else {
		ack = be32toh(th->seq) + seglen;
		flags |= STK_TCP_ACK;
	}
	STK_CTR(st, TCP_RST_OUT);
	seg_out(st, NULL, ip->src, be16toh(th->sport), be16toh(th->dport), seq, ack, flags, 0, NULL, 0, 0);
}

void
stk_tcp_send_cookie_synack(struct stk *st, const struct stk_ip4_hdr *ip, const struct stk_tcp_hdr *th,
			   uint32_t iss, uint16_t mss)
{
	uint8_t opts[4] = { STK_TCPOPT_MSS, 4, 0, 0 };
	uint32_t win = st->cfg.rcvbuf > 65535 ? 65535 : st->cfg.rcvbuf;

	stk_put16(opts + 2, mss);
	seg_out(st, NULL, ip->src, be16toh(th->sport), be16toh(th->dport), iss, be32toh(th->seq) + 1,
		STK_TCP_SYN | STK_TCP_ACK, 0, opts, sizeof(opts), win);
}

/* first unacknowledged segment again (fast retransmit, partial ACK) */
int
stk_tcp_frag_needed(struct stk *st, uint32_t rip, uint16_t rport, uint16_t lport, uint32_t seq, uint16_t mtu)
{
	struct stk_tcb *c = stk_tcb_lookup(st, rip, rport, lport);
	uint32_t mss;
	bool was;

	/* RFC 5927 4.1: only about data in flight */
	if (c == NULL || (c->flags & TF_DEAD) || !stk_tcp_state_sends(c->state) || SEQ_LT(seq, c->snd_una) ||
	    !SEQ_LT(seq, c->snd_max))
		return -1;
	/* RFC 1191 3: no MTU (an old router) or an absurd one: the smallest a host
	 * must take, 576 (a 536-byte MSS) */
	if (mtu < 576)
		mtu = 576;
	if (mtu >= c->pmtu)
		return 0; /* nothing to lower */
	c->pmtu = mtu;
	mss = mtu - STK_IP4_HLEN - STK_TCP_HLEN - (c->ts_ok ? 12 : 0);
	if (mss >= c->mss)
		return 0;
	c->mss = mss;
	STK_CTR(st, TCP_PMTU_LOWERED);
	stk_logf(st, STK_LOG_INFO, "conn 0x%x: path MTU %u: segments of %u bytes from now on", c->id, mtu, mss);
	/* what is in flight was too big for the path: send it again in the
	 * smaller segments, without taking it as congestion (cwnd kept, as
	 * Linux's tcp_simple_retransmit) */
	st->now = st->ops.clock_ns(st->ops.ctx);
	c->flags &= ~TF_RTT_TIMING; /* Karn */
	c->dupacks = 0;
	was = (c->flags & TF_INRECOVERY) != 0;
	c->flags &= ~TF_INRECOVERY;
	if (c->sack_ok && c->sb.head != c->sb.tail)
		stk_sb_rto(st, c, was); /* all but what the peer SACKed is lost */
	else
		c->snd_nxt = c->snd_una; /* go-back-N */
	c->recover = c->snd_max;
	stk_tcp_output(st, c);
	if (c->timer[STK_T_REXMT] == 0 && c->snd_una != c->snd_max)
		stk_tcp_rexmt_arm(st, c);
	return 0;
}

void
stk_tcp_retransmit_first(struct stk *st, struct stk_tcb *c)
{
	uint32_t len = c->snd_max - c->snd_una;
	uint8_t fl = STK_TCP_ACK;

	if (TF_SENT_FIN & c->flags && SEQ_GEQ(c->snd_una, c->fin_seq)) {
		len = 0;
		fl |= STK_TCP_FIN;
	} else {
		if (c->flags & TF_SENT_FIN && SEQ_GT(c->snd_max, c->fin_seq))
			len = c->fin_seq - c->snd_una;
		if (len > c->mss)
			len = c->mss;
	}
	if (len == 0 && !(fl & STK_TCP_FIN))
		return;
	STK_CTR(st, TCP_RETRANSMITS);
	c->stats.retransmits++;
	if (c->flags & TF_RTT_TIMING && SEQ_LEQ(c->snd_una, c->rtt_seq))
		c->flags &= ~TF_RTT_TIMING; /* Karn */
	stk_tcp_xmit(st, c, c->snd_una, len, fl);
	stk_tcp_rexmt_arm(st, c);
}

/* probe: the most new segments a tail loss probe sends (RFC 8985 7.3),
 * beyond cwnd but within the peer's window; 0 for ordinary output */
static int
output(struct stk *st, struct stk_tcb *c, uint32_t probe)
{
	uint32_t win, sent = 0;
	/* a SACK peer in recovery: pipe against cwnd, lost segments first (RFC 6675 5) */
	bool rec = c->sack_ok && !probe &&
		   ((c->flags & TF_INRECOVERY) || (c->sb.sflags & SF_LOSS) || c->sb.lost != 0);

	if (c->flags & TF_DEAD && !(c->state == STK_TCP_TIME_WAIT))
		return 0;
	switch (c->state) {
	case STK_TCP_SYN_SENT:
		if (c->snd_nxt == c->iss) {
			stk_tcp_xmit(st, c, c->iss, 0, STK_TCP_SYN);
			c->snd_nxt = c->iss + 1;
			if (SEQ_GT(c->snd_nxt, c->snd_max))
				c->snd_max = c->snd_nxt;
			stk_tcp_rexmt_arm(st, c);
		}
		return 0;
	case STK_TCP_SYN_RCVD:
		if (c->snd_nxt == c->iss) {
			stk_tcp_xmit(st, c, c->iss, 0, STK_TCP_SYN | STK_TCP_ACK);
			c->snd_nxt = c->iss + 1;
			if (SEQ_GT(c->snd_nxt, c->snd_max))
				c->snd_max = c->snd_nxt;
			stk_tcp_rexmt_arm(st, c);
		}
		return 0;
	default:
		if (stk_tcp_state_sends(c->state))
			break;
		if (c->flags & TF_ACKNOW)
			stk_tcp_send_ack(st, c);
		return 0;
	}
	win = c->snd_wnd < c->cwnd ? c->snd_wnd : c->cwnd;
	/* Limited Transmit (RFC 3042, a SHOULD of RFC 5681 3.2): the first and
	 * second duplicate ACK each let one new segment go beyond cwnd (cwnd
	 * itself unchanged), so that a small flight that lost a segment still
	 * brings the third duplicate ACK of fast retransmit instead of an RTO.
	 * Only previously unsent data: not while going back after an RTO. */
	if (c->dupacks > 0 && c->dupacks < 3 && !(c->flags & TF_INRECOVERY) && c->snd_nxt == c->snd_max) {
		uint32_t lt = c->cwnd + (uint32_t)c->dupacks * c->mss;

		win = c->snd_wnd < lt ? c->snd_wnd : lt;
	}
	for (;;) {
		uint32_t data_end = c->snd_end, avail, usable, len, inflight;
		uint8_t fl = STK_TCP_ACK;
		int k;

		avail = SEQ_GT(data_end, c->snd_nxt) ? data_end - c->snd_nxt : 0;
		inflight = c->snd_nxt - c->snd_una;
		usable = win > inflight ? win - inflight : 0;
		if (rec || probe) {
			uint32_t pipe = stk_sb_pipe(c), room = c->cwnd > pipe ? c->cwnd - pipe : 0;
			uint32_t edge = c->snd_una + c->snd_wnd;

			if (rec && room >= c->mss && stk_sb_has_lost(c)) {
				if (!stk_pace_ok(st, c))
					break; /* STK_T_PACE sends it */
				if (stk_sb_retransmit_next(st, c)) {
					sent++;
					continue;
				}
			}
			usable = SEQ_GT(edge, c->snd_nxt) ? edge - c->snd_nxt : 0;
			if (probe && sent >= probe)
				usable = 0;
			else if (!probe && room < usable)
				usable = room;
		}
		len = avail < c->mss ? avail : c->mss;
		if (len > usable) {
			/* sender SWS avoidance (RFC 9293 3.8.6.2.1): a short
			 * segment only when nothing is in flight to clock out
			 * more, or when it is half the peer's largest window */
			len = usable;
			if (inflight > 0 && len < c->max_snd_wnd / 2)
				len = 0;
		}
		if (len == 0) {
			/* FIN once every byte before it is out */
			if ((c->flags & TF_SENT_FIN) && c->snd_nxt == c->fin_seq && avail == 0 &&
			    !(probe && sent >= probe)) {
				if (c->sack_ok && !stk_sb_room(st, c))
					break;
				stk_tcp_xmit(st, c, c->snd_nxt, 0, STK_TCP_ACK | STK_TCP_FIN);
				if (c->sack_ok)
					stk_sb_sent(st, c, c->snd_nxt, 0, true);
				c->snd_nxt = c->fin_seq + 1;
				if (SEQ_GT(c->snd_nxt, c->snd_max))
					c->snd_max = c->snd_nxt;
				sent++;
			}
			break;
		}
		if (avail == len && (c->flags & TF_SENT_FIN) && len <= usable)
			fl |= STK_TCP_FIN | STK_TCP_PSH;
		else if (avail == len)
			fl |= STK_TCP_PSH;
		if (!probe && !stk_pace_ok(st, c))
			break; /* STK_T_PACE sends it */
		if (c->sack_ok && !stk_sb_room(st, c)) {
			/* no record for it: the timer (or the next ACK) tries again */
			if (c->timer[STK_T_REXMT] == 0)
				stk_tcp_rexmt_arm(st, c);
			break;
		}
		k = stk_tcp_xmit(st, c, c->snd_nxt, len, fl);
		if (k < 0) {
			/* no buffer: the retransmission timer tries again */
			if (c->timer[STK_T_REXMT] == 0)
				stk_tcp_rexmt_arm(st, c);
			break;
		}
		if ((uint32_t)k < len) {
			len = (uint32_t)k; /* SACK options took room */
			fl &= (uint8_t)~STK_TCP_FIN;
		}
		if (SEQ_LT(c->snd_nxt, c->snd_max)) {
			STK_CTR(st, TCP_RETRANSMITS);
			c->stats.retransmits++;
		}
		if (SEQ_GT(c->snd_nxt + len, c->snd_max)) {
			/* new bytes: those beyond what was ever sent */
			uint32_t fresh = c->snd_nxt + len - (SEQ_GT(c->snd_max, c->snd_nxt) ? c->snd_max : c->snd_nxt);

			if ((c->flags & TF_SENT_FIN) && SEQ_GT(c->snd_max, c->fin_seq))
				fresh = 0; /* snd_max counts the FIN */
			STK_CTR_ADD(st, TCP_BYTES_OUT, fresh);
			if (c->sack_ok)
				stk_sb_prr_out(c, fresh);
			c->stats.bytes_out += fresh;
			if (!(c->flags & TF_RTT_TIMING)) {
				c->flags |= TF_RTT_TIMING;
				c->rtt_seq = c->snd_nxt;
				c->rtt_start = st->now;
			}
		}
		if (c->sack_ok)
			stk_sb_sent(st, c, c->snd_nxt, len, fl & STK_TCP_FIN);
		c->snd_nxt += len + ((fl & STK_TCP_FIN) ? 1 : 0);
		if (SEQ_GT(c->snd_nxt, c->snd_max))
			c->snd_max = c->snd_nxt;
		sent++;
	}
	if (probe)
		return (int)sent;
	if (sent == 0 && (c->flags & TF_ACKNOW))
		stk_tcp_send_ack(st, c);
	if (c->snd_max != c->snd_una) {
		if (c->timer[STK_T_REXMT] == 0 || c->rexmt_mode != STK_REXMT_RTO)
			stk_tcp_rexmt_arm_data(st, c);
	} else if (c->snd_wnd == 0 && SEQ_GT(c->snd_end, c->snd_nxt) && c->timer[STK_T_REXMT] == 0) {
		/* peer's window closed with data waiting: probe it */
		c->rexmt_mode = STK_REXMT_PERSIST;
		if (c->zw_since == 0) {
			c->zw_since = st->now;
			c->probe_sent = 0; /* no probe yet */
			c->probes_unanswered = 0;
		}
		stk_tcp_timer_set(st, c, STK_T_REXMT, c->rto_ns);
	}
	return (int)sent;
}

int
stk_tcp_output(struct stk *st, struct stk_tcb *c)
{
	/* the receiving side calls this after every segment: with nothing
	 * queued or in flight, no ACK owed, no FIN and no loss to repair,
	 * output() would send nothing and arm nothing */
	if (c->state == STK_TCP_ESTABLISHED && c->snd_end == c->snd_nxt && c->snd_max == c->snd_una &&
	    !(c->flags & (TF_ACKNOW | TF_SENT_FIN | TF_INRECOVERY | TF_DEAD)) &&
	    (!c->sack_ok || (!(c->sb.sflags & SF_LOSS) && c->sb.lost == 0)))
		return 0;
	return output(st, c, 0);
}

/* Two segments where the data and the peer's window allow, not RFC 8985's
 * one: a delayed-ACK receiver (Linux: 40 ms at least) holds the ACK of one
 * in-order segment, longer than the second probe waits, but ACKs a second
 * full-sized one at once (RFC 5681 4.2). When the ACK of the whole flight was
 * what got lost, one new segment brought nothing before the second probe; QUIC
 * sends up to two for the same reason (RFC 9002 6.2.4). */
bool
stk_tcp_output_probe(struct stk *st, struct stk_tcb *c)
{
	return output(st, c, 2) > 0;
}
