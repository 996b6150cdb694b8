/* SPDX-License-Identifier: BSD-3-Clause
 * tcp_in_open.c — TCP input before a connection is synchronised (RFC 9293
 * 3.10.7.2 LISTEN, 3.10.7.3 SYN-SENT): the passive open, SYN cookies
 * (RFC 4987 3.6) when the backlog is full, and the active open's answer.
 * Options are negotiated here (RFC 7323 window scaling and timestamps,
 * SACK-permitted, MSS; RFC 6928 initial window).
 *
 *   stk_tcp_passive_open         a SYN to a listener: SYN_RCVD within its
 *                                backlog; past it a SYN cookie (default), or
 *                                evict the oldest, or drop
 *                                (stk_config.backlog_full)
 *   stk_tcp_cookie_open          an ACK returning one of our SYN cookies
 *   stk_tcp_syn_sent             a segment in SYN_SENT: ESTABLISHED, or
 *                                simultaneous open, or refused; an
 *                                unacceptable ACK is reset and the SYN sent
 *                                again at once
 *   stk_tcp_established_entered  timers and counters on reaching ESTABLISHED
 *                                (here, and tcp_in_ack.c from SYN_RCVD) */
#include "tcp_in_priv.h"

/* SYN_SENT: the SYN again this soon after an unacceptable ACK was reset */
#define SYN_RESEND_MS 2

/* ---- SYN cookies (RFC 4987 3.6) ----
 * iss = t (5 bits: 64-second slots, mod 32) | MSS index (3 bits) | 24 bits of
 * SipHash-2-4 keyed with cookie_key over the 4-tuple, the peer's ISN and t.
 * An ACK is taken for a cookie when ack - 1 decodes with t now or one slot
 * before (64 to 128 s of validity) and the hash matches: a blind guess has a
 * 2^-24 chance. The connection gets the MSS from the table, nothing else. */
static const uint16_t cookie_mss[8] = { 536, 1024, 1220, 1360, 1440, 1460, 4312, 8960 };
#define COOKIE_SLOT_NS (64ull * 1000 * STK_MS)

static uint32_t
cookie_hash(const struct stk *st, uint32_t rip, uint16_t rport, uint16_t lport, uint32_t peer_isn,
	    uint32_t t)
{
	return (uint32_t)stk_siphash3(st->cookie_key, ((uint64_t)rip << 32) | st->cfg.ip,
				  ((uint64_t)rport << 48) | ((uint64_t)lport << 32) | peer_isn, t) &
	       0xffffffu;
}

static uint32_t
cookie_make(const struct stk *st, uint32_t rip, uint16_t rport, uint16_t lport, uint32_t peer_isn,
	    uint16_t peer_mss, uint16_t *mss)
{
	uint32_t t = (uint32_t)(st->now / COOKIE_SLOT_NS), i = 0;

	while (i < 7 && cookie_mss[i + 1] <= peer_mss)
		i++;
	*mss = cookie_mss[i];
	return ((t & 0x1fu) << 27) | (i << 24) | cookie_hash(st, rip, rport, lport, peer_isn, t);
}

/* the MSS of a valid cookie, 0 for an invalid one */
static uint16_t
cookie_check(const struct stk *st, uint32_t rip, uint16_t rport, uint16_t lport, uint32_t peer_isn,
	     uint32_t cookie)
{
	uint32_t now = (uint32_t)(st->now / COOKIE_SLOT_NS);

	for (uint32_t age = 0; age < 2; age++) {
		uint32_t t = now - age;

		if ((t & 0x1fu) == cookie >> 27 &&
		    cookie_hash(st, rip, rport, lport, peer_isn, t) == (cookie & 0xffffffu))
			return cookie_mss[(cookie >> 24) & 7];
	}
	return 0;
}

static void
negotiate(struct stk *st, struct stk_tcb *c, const struct stk_tcp_opts *o)
{
	uint32_t peer_mss = o->has_mss ? o->mss : 536, mss;
	unsigned ours = 0;

	while (ours < 14 && (st->cfg.rcvbuf >> ours) > 65535)
		ours++;
	c->ws_ok = st->cfg.window_scale && o->has_ws;
	c->snd_wscale = c->ws_ok ? o->wscale : 0;
	c->rcv_wscale = c->ws_ok ? (uint8_t)ours : 0;
	c->ts_ok = st->cfg.timestamps && o->has_ts;
	c->sack_ok = st->cfg.sack && o->sack_perm;
	if (c->ts_ok) {
		c->ts_recent = o->tsval;
		c->ts_recent_age = st->now;
	}
	mss = st->cfg.mtu - STK_IP4_HLEN - STK_TCP_HLEN;
	if (peer_mss < mss)
		mss = peer_mss;
	if (c->ts_ok)
		mss -= 12;
	if (mss < 64)
		mss = 64;
	c->mss = mss;
	c->cwnd = 10 * mss; /* RFC 6928 */
	if (!c->ws_ok && c->rcv_wnd > 65535)
		c->rcv_wnd = 65535;
}

/* A control block for a passive open, from the SYN or the ACK of a cookie:
 * the 4-tuple from the segment, the listener's user, the next hop. NULL when
 * none is left (counted). */
static struct stk_tcb *
passive_tcb(struct stk *st, const struct stk_listener *l, const struct stk_ip4_hdr *ip,
	    const struct stk_tcp_hdr *th)
{
	struct stk_tcb *c = stk_tcb_alloc(st);

	if (c == NULL)
		return NULL;
	c->rip = ip->src;
	c->rport = be16toh(th->sport);
	c->lport = be16toh(th->dport);
	c->user = l->user;
	c->flags |= TF_PASSIVE;
	c->nexthop = stk_ip4_nexthop(st, c->rip);
	return c;
}

/* the peer's window from the segment (never scaled: a SYN's, or an ACK
 * after a cookie that kept no WS), then state and the 4-tuple hash */
static void
passive_tcb_enter(struct stk *st, struct stk_tcb *c, const struct stk_tcp_seg *s, uint32_t wl2,
		  enum stk_tcp_state state)
{
	c->snd_wnd = s->win;
	c->max_snd_wnd = c->snd_wnd;
	c->snd_wl1 = s->seq;
	c->snd_wl2 = wl2;
	c->last_rx = st->now;
	stk_tcb_set_state(st, c, state);
	stk_tcb_hash_insert(st, c);
}

void
stk_tcp_passive_open(struct stk *st, struct stk_listener *l, const struct stk_ip4_hdr *ip,
		     const struct stk_tcp_hdr *th, struct stk_tcp_seg *s)
{
	struct stk_tcb *c;

	if (l->pending >= l->backlog) {
		/* backlog full (a SYN flood, or more connects at once than it
		 * holds): by default a SYN cookie, which costs no state and
		 * lets an honest peer in whatever the flood does */
		if (st->cfg.backlog_full == STK_BACKLOG_COOKIES) {
			uint16_t mss;
			uint32_t iss = cookie_make(st, ip->src, be16toh(th->sport), be16toh(th->dport), s->seq,
						   s->o.has_mss ? s->o.mss : 536, &mss);

			if (stk_ip4_nexthop(st, ip->src) == 0) {
				STK_CTR(st, DROP_NO_ROUTE);
				return;
			}
			STK_CTR(st, TCP_SYNCOOKIES_SENT);
			l->cookies_until = st->now + 2 * COOKIE_SLOT_NS;
			stk_tcp_send_cookie_synack(st, ip, th, iss, mss);
			return;
		}
		/* otherwise a flood of SYNs that never complete keeps the backlog
		 * full until they time out (syn_retries): the oldest half-open
		 * connection makes room (STK_BACKLOG_EVICT; an honest peer that
		 * completes within backlog newer SYNs is not hurt), or the new
		 * SYN is dropped (STK_BACKLOG_DROP) */
		STK_CTR(st, DROP_TCP_BACKLOG);
		if (st->cfg.backlog_full != STK_BACKLOG_EVICT || TAILQ_EMPTY(&l->ho))
			return;
		/* never shown to the app: no event, no RST (the source is
		 * likely forged); a late ACK from it gets the listener's RST */
		c = TAILQ_FIRST(&l->ho);
		c->flags |= TF_DEAD;
		stk_tcb_set_state(st, c, STK_TCP_CLOSED);
		stk_tcb_release(st, c);
	}
	c = passive_tcb(st, l, ip, th);
	if (c == NULL)
		return;
	stk_listener_attach(st, l, c);
	c->irs = s->seq;
	c->rcv_nxt = s->seq + 1;
	c->rcv_adv = c->rcv_nxt;
	stk_tcp_iss_init(st, c);
	negotiate(st, c, &s->o);
	passive_tcb_enter(st, c, s, c->iss, STK_TCP_SYN_RCVD);
	stk_tcp_output(st, c); /* SYN-ACK */
}

void
stk_tcp_established_entered(struct stk *st, struct stk_tcb *c)
{
	STK_CTR(st, TCP_ESTABLISHED);
	stk_cc_select(st, c);
	c->rexmt_shift = 0;
	stk_tcp_timer_clear(st, c, STK_T_REXMT);
	if (st->cfg.keepalive_ms)
		stk_tcp_timer_set(st, c, STK_T_KEEP, (uint64_t)st->cfg.keepalive_ms * STK_MS);
}

/* An ACK to a listener that sent SYN cookies lately: a connection if ack - 1
 * is one of our cookies for this 4-tuple and the peer's ISN (seq - 1). The
 * tcb is made ESTABLISHED at once (ACCEPTED); the caller then processes the
 * segment on it (data on the ACK). NULL when it is no cookie (or no memory). */
struct stk_tcb *
stk_tcp_cookie_open(struct stk *st, struct stk_listener *l, const struct stk_ip4_hdr *ip,
		    const struct stk_tcp_hdr *th, struct stk_tcp_seg *s)
{
	struct stk_tcp_opts o;
	struct stk_tcb *c;
	uint16_t mss;

	if ((s->flags & (STK_TCP_SYN | STK_TCP_RST | STK_TCP_ACK)) != STK_TCP_ACK ||
	    st->now >= l->cookies_until)
		return NULL;
	mss = cookie_check(st, ip->src, be16toh(th->sport), be16toh(th->dport), s->seq - 1, s->ack - 1);
	if (mss == 0)
		return NULL;
	c = passive_tcb(st, l, ip, th);
	if (c == NULL)
		return NULL;
	STK_CTR(st, TCP_SYNCOOKIES_OK);
	c->irs = s->seq - 1;
	c->rcv_nxt = s->seq;
	c->iss = s->ack - 1;
	c->snd_una = c->snd_nxt = c->snd_max = c->snd_end = s->ack;
	c->recover = c->iss;
	memset(&o, 0, sizeof(o));
	o.has_mss = true;
	o.mss = mss;
	negotiate(st, c, &o); /* no WS, SACK or TS: the cookie kept none */
	c->rcv_adv = c->rcv_nxt + (st->cfg.rcvbuf > 65535 ? 65535 : st->cfg.rcvbuf); /* the SYN-ACK's */
	passive_tcb_enter(st, c, s, s->ack, STK_TCP_ESTABLISHED);
	stk_tcp_established_entered(st, c);
	STK_CTR(st, TCP_ACCEPTS);
	return c;
}

void
stk_tcp_syn_sent(struct stk *st, struct stk_tcb *c, struct stk_tcp_seg *s)
{
	if (s->flags & STK_TCP_ACK) {
		if (SEQ_LEQ(s->ack, c->iss) || SEQ_GT(s->ack, c->snd_max)) {
			STK_CTR(st, DROP_TCP_BAD_ACK);
			if (s->flags & STK_TCP_RST)
				return;
			stk_tcp_send_ctl(st, c, STK_TCP_RST, s->ack);
			/* Most often the peer's TIME_WAIT of an older incarnation
			 * of the 4-tuple, which did not take our SYN (RFC 6191)
			 * and answered with its old ACK: the RST ends it, so the
			 * SYN goes again in SYN_RESEND_MS rather than one RTO
			 * later. Once, before any retransmission (as Linux's
			 * tcp_rcv_synsent_state_process()). */
			if (c->rexmt_shift == 0)
				stk_tcp_timer_set(st, c, STK_T_REXMT, SYN_RESEND_MS * STK_MS);
			return;
		}
	}
	if (s->flags & STK_TCP_RST) {
		STK_CTR(st, TCP_RST_IN);
		if (s->flags & STK_TCP_ACK) {
			stk_tcb_finish(st, c, STK_EV_RESET, ECONNREFUSED);
			return;
		}
		STK_CTR(st, DROP_TCP_RST_INVALID);
		return;
	}
	if (!(s->flags & STK_TCP_SYN)) {
		STK_CTR(st, DROP_TCP_STATE);
		return;
	}
	c->irs = s->seq;
	c->rcv_nxt = s->seq + 1;
	c->rcv_adv = c->rcv_nxt;
	negotiate(st, c, &s->o);
	c->snd_wnd = s->win;
	c->max_snd_wnd = c->snd_wnd;
	c->snd_wl1 = s->seq;
	c->snd_wl2 = s->ack;
	c->last_rx = st->now;
	if (s->flags & STK_TCP_ACK) {
		c->snd_una = s->ack;
		if (c->flags & TF_RTT_TIMING)
			c->flags &= ~TF_RTT_TIMING;
		if (c->rexmt_shift == 0) /* Karn: only an unretransmitted SYN times the RTT */
			stk_tcp_rtt_sample(st, c, st->now - (c->timer[STK_T_REXMT] - c->rto_ns));
		stk_tcb_set_state(st, c, STK_TCP_ESTABLISHED);
		stk_tcp_established_entered(st, c);
		c->flags |= TF_ACKNOW;
		stk_tcb_event(st, c, STK_EV_CONNECTED, 0);
		if (c->zflags & TZ_ZOMBIE)
			return;
		stk_tcp_output(st, c); /* the ACK, and any data queued meanwhile */
		return;
	}
	/* simultaneous open (RFC 9293 3.10.7.3 fifth) */
	stk_tcb_set_state(st, c, STK_TCP_SYN_RCVD);
	c->snd_nxt = c->iss;
	stk_tcp_output(st, c);
}
