/* SPDX-License-Identifier: BSD-3-Clause
 * tcp_in.c — TCP input (RFC 9293 3.10.7 "SEGMENT ARRIVES").
 *
 *   stk_tcp_input        header checks (length, data offset, checksum,
 *                        flags, options) -> 4-tuple lookup ->
 *                          no connection: listener (passive_open) or RST
 *                          SYN_SENT: syn_sent()
 *                          otherwise: established() below
 *   stk_tcp_parse_opts   MSS, WS, SACK-permitted, TS; malformed -> -1
 *   passive_open         a SYN to a listener: SYN_RCVD within its backlog;
 *                        past it a SYN cookie (default), or evict the oldest,
 *                        or drop (stk_config.backlog_full)
 *   cookie_open          an ACK returning one of our SYN cookies
 *
 * established(), in RFC order: PAWS (RFC 7323) -> acceptability -> RST
 * (RFC 5961 3: exact seq resets, in-window gets a challenge ACK; after the
 * peer's FIN see rst_unacceptable) -> SYN
 * (challenge ACK) -> ACK (RFC 5961 5 range check; snd_una, RTT; with a SACK
 * peer the scoreboard and RFC 6675 recovery (tcp_sack.c), else NewReno
 * RFC 5681/6582; window update, FIN acked transitions) -> text (trim to
 * rcv_nxt and the window; in order: zero-copy delivery, then drain the
 * out-of-order queue; out of order: queue, immediate ACK with SACK) -> FIN.
 *
 * Buffer ownership: the frame is the stack's on entry. Delivered payload
 * passes to the application (ops.event STK_EV_DATA), an out-of-order segment
 * is held in its queue node, anything else is freed here. Fields of the
 * header are read before delivery, since the application may free the frame
 * inside the event callback. */
#include "stk_priv.h"

struct seg {
	struct stk_buf *b;
	uint8_t *payload;
	uint32_t seq, ack, plen, seglen;
	uint32_t win; /* raw, unscaled */
	uint8_t flags;
	struct stk_tcp_opts o;
};

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
oow_ack_allowed(struct stk *st, struct stk_tcb *c, const struct seg *s)
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
time_wait_reusable(const struct stk_tcb *c, const struct seg *s)
{
	if (c->ts_ok && s->o.has_ts)
		return SEQ_GT(s->o.tsval, c->ts_recent);
	return !c->ts_ok && SEQ_GT(s->seq, c->rcv_nxt);
}

static void
challenge_ack(struct stk *st, struct stk_tcb *c)
{
	if (!challenge_allowed(st, c))
		return;
	STK_CTR(st, TCP_CHALLENGE_ACKS);
	stk_tcp_send_ack(st, c);
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

static void
passive_open(struct stk *st, struct stk_listener *l, const struct stk_ip4_hdr *ip,
	     const struct stk_tcp_hdr *th, struct seg *s)
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
		if (st->cfg.backlog_full != STK_BACKLOG_EVICT || l->ho_head == NULL)
			return;
		/* never shown to the app: no event, no RST (the source is
		 * likely forged); a late ACK from it gets the listener's RST */
		c = l->ho_head;
		c->flags |= TF_DEAD;
		stk_tcb_set_state(st, c, STK_TCP_CLOSED);
		stk_tcb_release(st, c);
	}
	c = stk_tcb_alloc(st);
	if (c == NULL)
		return; /* counted */
	c->rip = ip->src;
	c->rport = be16toh(th->sport);
	c->lport = be16toh(th->dport);
	c->user = l->user;
	c->flags |= TF_PASSIVE;
	stk_listener_attach(st, l, c);
	c->nexthop = stk_ip4_nexthop(st, c->rip);
	c->irs = s->seq;
	c->rcv_nxt = s->seq + 1;
	c->rcv_adv = c->rcv_nxt;
	c->iss = stk_tcp_isn(st, c->rip, c->rport, c->lport);
	c->snd_una = c->snd_nxt = c->snd_max = c->iss;
	c->snd_end = c->iss + 1;
	c->recover = c->iss;
	c->ts_off = (uint32_t)st->ops.random(st->ops.ctx);
	negotiate(st, c, &s->o);
	c->snd_wnd = s->win; /* never scaled in a SYN */
	c->max_snd_wnd = c->snd_wnd;
	c->snd_wl1 = s->seq;
	c->snd_wl2 = c->iss;
	c->last_rx = st->now;
	stk_tcb_set_state(st, c, STK_TCP_SYN_RCVD);
	stk_tcb_hash_insert(st, c);
	stk_tcp_output(st, c); /* SYN-ACK */
}

static void
established_entered(struct stk *st, struct stk_tcb *c)
{
	STK_CTR(st, TCP_ESTABLISHED);
	c->rexmt_shift = 0;
	stk_tcp_timer_clear(st, c, STK_T_REXMT);
	if (st->cfg.keepalive_ms)
		stk_tcp_timer_set(st, c, STK_T_KEEP, (uint64_t)st->cfg.keepalive_ms * STK_MS);
}

/* An ACK to a listener that sent SYN cookies lately: a connection if ack - 1
 * is one of our cookies for this 4-tuple and the peer's ISN (seq - 1). The
 * tcb is made ESTABLISHED at once (ACCEPTED); the caller then processes the
 * segment on it (data on the ACK). NULL when it is no cookie (or no memory). */
static struct stk_tcb *
cookie_open(struct stk *st, struct stk_listener *l, const struct stk_ip4_hdr *ip,
	    const struct stk_tcp_hdr *th, struct seg *s)
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
	c = stk_tcb_alloc(st);
	if (c == NULL)
		return NULL; /* counted */
	STK_CTR(st, TCP_SYNCOOKIES_OK);
	c->rip = ip->src;
	c->rport = be16toh(th->sport);
	c->lport = be16toh(th->dport);
	c->user = l->user;
	c->flags |= TF_PASSIVE;
	c->nexthop = stk_ip4_nexthop(st, c->rip);
	c->irs = s->seq - 1;
	c->rcv_nxt = s->seq;
	c->iss = s->ack - 1;
	c->snd_una = c->snd_nxt = c->snd_max = c->snd_end = s->ack;
	c->recover = c->iss;
	c->ts_off = (uint32_t)st->ops.random(st->ops.ctx);
	memset(&o, 0, sizeof(o));
	o.has_mss = true;
	o.mss = mss;
	negotiate(st, c, &o); /* no WS, SACK or TS: the cookie kept none */
	c->rcv_adv = c->rcv_nxt + (st->cfg.rcvbuf > 65535 ? 65535 : st->cfg.rcvbuf); /* the SYN-ACK's */
	c->snd_wnd = s->win;
	c->max_snd_wnd = c->snd_wnd;
	c->snd_wl1 = s->seq;
	c->snd_wl2 = s->ack;
	c->last_rx = st->now;
	stk_tcb_set_state(st, c, STK_TCP_ESTABLISHED);
	stk_tcb_hash_insert(st, c);
	established_entered(st, c);
	STK_CTR(st, TCP_ACCEPTS);
	return c;
}

static void
syn_sent(struct stk *st, struct stk_tcb *c, struct seg *s)
{
	if (s->flags & STK_TCP_ACK) {
		if (SEQ_LEQ(s->ack, c->iss) || SEQ_GT(s->ack, c->snd_max)) {
			STK_CTR(st, DROP_TCP_BAD_ACK);
			if (!(s->flags & STK_TCP_RST))
				stk_tcp_send_ctl(st, c, STK_TCP_RST, s->ack);
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
		established_entered(st, c);
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

/* a duplicate [s, e) arrived: the next ACK reports it first (RFC 2883) */
static void
dsack_note(struct stk_tcb *c, uint32_t s, uint32_t e)
{
	if (!c->sack_ok || !SEQ_LT(s, e))
		return;
	c->dsack = true;
	c->dsack_s = s;
	c->dsack_e = e;
}

/* the first block ending after seq (n_oblk if none): bisection */
static unsigned
oblk_find(const struct stk_tcb *c, uint32_t seq)
{
	unsigned lo = 0, hi = c->n_oblk;

	while (lo < hi) {
		unsigned m = lo + (hi - lo) / 2;

		if (SEQ_LEQ(c->oblk[m].end, seq))
			lo = m + 1;
		else
			hi = m;
	}
	return lo;
}

static bool
oblk_reserve(struct stk *st, struct stk_tcb *c)
{
	struct stk_ooo_blk *nb;
	unsigned cap;

	if (c->n_oblk < c->cap_oblk)
		return true;
	cap = c->cap_oblk ? 2 * c->cap_oblk : 8;
	nb = st->ops.alloc(st->ops.ctx, cap * sizeof(*nb));
	if (nb == NULL)
		return false;
	if (c->n_oblk)
		memcpy(nb, c->oblk, c->n_oblk * sizeof(*nb));
	if (c->oblk != NULL)
		st->ops.free(st->ops.ctx, c->oblk);
	c->oblk = nb;
	c->cap_oblk = cap;
	return true;
}

static void
oblk_remove(struct stk_tcb *c, unsigned i)
{
	memmove(&c->oblk[i], &c->oblk[i + 1], (c->n_oblk - i - 1) * sizeof(c->oblk[0]));
	c->n_oblk--;
}

/* unlink the queue's first segment (the first block's head) */
static struct stk_seg_node *
ooo_pop(struct stk_tcb *c)
{
	struct stk_seg_node *n = c->ooo;

	c->ooo = n->next;
	if (c->oblk[0].tail == n) {
		oblk_remove(c, 0);
	} else {
		c->oblk[0].head = n->next;
		c->oblk[0].seq = n->next->seq;
	}
	return n;
}

/* Insert into the out-of-order queue: bisection finds the block the segment
 * starts in or the gap before one; its front is trimmed against that block
 * (what it repeats is D-SACKed), its tail against the next block; it then
 * extends a block, joins two, or starts one. A segment reaching past the
 * next block keeps only what fits the gap (the peer resends the rest). */
static void
ooo_insert(struct stk *st, struct stk_tcb *c, struct seg *s, bool fin)
{
	uint32_t seq = s->seq, len = s->plen;
	uint8_t *data = s->payload;
	unsigned i = oblk_find(c, seq), nx;
	int app = -1; /* the block it extends at its end */
	bool front = false; /* its front repeated held data */
	struct stk_seg_node *n, *pred;

	if (i < c->n_oblk && SEQ_LEQ(c->oblk[i].seq, seq)) {
		struct stk_ooo_blk *b = &c->oblk[i];
		uint32_t d = b->end - seq;

		if (b->tail->fin || SEQ_LEQ(seq + len + (fin ? 1 : 0), b->end)) {
			/* all there already (or data after the FIN: nonsense) */
			STK_CTR(st, TCP_DUP_SEGS);
			c->stats.dup_segs++;
			dsack_note(c, seq, seq + len);
			stk_buf_free(st, s->b);
			return;
		}
		if (d > len)
			d = len;
		dsack_note(c, seq, seq + d);
		front = true;
		STK_CTR(st, TCP_PARTIAL_DUP);
		seq += d;
		data += d;
		len -= d;
		app = (int)i;
		nx = i + 1;
	} else {
		if (i > 0 && c->oblk[i - 1].end == seq && !c->oblk[i - 1].tail->fin)
			app = (int)i - 1;
		nx = i;
	}
	/* trim the tail against the next block */
	if (nx < c->n_oblk && SEQ_GT(seq + len + (fin ? 1 : 0), c->oblk[nx].seq)) {
		if (SEQ_GT(seq + len, c->oblk[nx].seq)) {
			uint32_t e = SEQ_MIN(seq + len, c->oblk[nx].end);

			if (!front)
				dsack_note(c, c->oblk[nx].seq, e);
			len = c->oblk[nx].seq - seq;
		}
		fin = false; /* a FIN where data goes on is nonsense */
		STK_CTR(st, TCP_PARTIAL_DUP);
	}
	if (len == 0 && !fin) {
		stk_buf_free(st, s->b);
		return;
	}
	if (c->ooo_segs >= st->cfg.ooo_max_segs || c->ooo_bytes + len > st->cfg.ooo_max_bytes) {
		STK_CTR(st, DROP_TCP_OOO_LIMIT);
		c->stats.drops++;
		stk_buf_free(st, s->b);
		return;
	}
	n = st->ops.alloc(st->ops.ctx, sizeof(*n));
	if (n == NULL || !oblk_reserve(st, c)) {
		if (n != NULL)
			st->ops.free(st->ops.ctx, n);
		STK_CTR(st, DROP_TCP_NOMEM);
		c->stats.drops++;
		stk_buf_free(st, s->b);
		return;
	}
	n->seq = seq;
	n->len = len;
	n->fin = fin;
	n->b = s->b;
	n->data = data;
	/* link after the last segment before it */
	pred = app >= 0 ? c->oblk[app].tail : (i > 0 ? c->oblk[i - 1].tail : NULL);
	if (pred != NULL) {
		n->next = pred->next;
		pred->next = n;
	} else {
		n->next = c->ooo;
		c->ooo = n;
	}
	if (app >= 0) {
		struct stk_ooo_blk *b = &c->oblk[app];

		b->end = seq + len + (fin ? 1 : 0);
		b->tail = n;
		if ((unsigned)app + 1 < c->n_oblk && b->end == c->oblk[app + 1].seq) {
			b->end = c->oblk[app + 1].end; /* the hole between two blocks filled */
			b->tail = c->oblk[app + 1].tail;
			oblk_remove(c, (unsigned)app + 1);
		}
	} else if (i < c->n_oblk && seq + len + (fin ? 1 : 0) == c->oblk[i].seq) {
		c->oblk[i].seq = seq; /* just before block i */
		c->oblk[i].head = n;
	} else {
		memmove(&c->oblk[i + 1], &c->oblk[i], (c->n_oblk - i) * sizeof(c->oblk[0]));
		c->oblk[i] = (struct stk_ooo_blk){ .seq = seq, .end = seq + len + (fin ? 1 : 0), .head = n, .tail = n };
		c->n_oblk++;
	}
	c->ooo_bytes += len;
	c->ooo_segs++;
	if (c->ooo_segs > st->ctr[STK_C_TCP_OOO_HELD_PEAK])
		st->ctr[STK_C_TCP_OOO_HELD_PEAK] = c->ooo_segs;
	stk_bufs_hold(st);
	memmove(&c->sack_hist[1], &c->sack_hist[0], sizeof(c->sack_hist) - sizeof(c->sack_hist[0]));
	c->sack_hist[0] = seq;
	c->n_sack_hist += c->n_sack_hist < STK_SACK_HIST;
	STK_CTR(st, TCP_OOO_SEGS);
	c->stats.ooo_segs++;
}

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
		stk_tcb_set_state(st, c, STK_TCP_TIME_WAIT);
		stk_tcb_event(st, c, STK_EV_CLOSED, 0);
		STK_CTR(st, TCP_CLOSED);
		c->flags |= TF_DEAD;
		stk_tcp_timer_clear(st, c, STK_T_REXMT);
		stk_tcp_timer_set(st, c, STK_T_2MSL, (uint64_t)st->cfg.time_wait_ms * STK_MS);
		break;
	case STK_TCP_LAST_ACK:
		stk_tcb_finish(st, c, STK_EV_CLOSED, 0);
		break;
	default:
		break;
	}
}

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
		stk_tcb_set_state(st, c, STK_TCP_TIME_WAIT);
		if (!(c->flags & TF_DEAD)) {
			stk_tcb_event(st, c, STK_EV_CLOSED, 0);
			STK_CTR(st, TCP_CLOSED);
		}
		c->flags |= TF_DEAD;
		stk_tcp_timer_clear(st, c, STK_T_DELACK);
		stk_tcp_timer_set(st, c, STK_T_2MSL, (uint64_t)st->cfg.time_wait_ms * STK_MS);
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
rst_unacceptable(struct stk *st, struct stk_tcb *c, const struct seg *s, uint32_t wnd)
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

/* RFC 5681 3.1: slow start, then congestion avoidance */
static void
cwnd_grow(struct stk_tcb *c, uint32_t acked)
{
	if (c->cwnd < c->ssthresh)
		c->cwnd += acked < c->mss ? acked : c->mss;
	else
		c->cwnd += (c->mss * c->mss) / c->cwnd > 0 ? (c->mss * c->mss) / c->cwnd : 1;
}

/* ACK processing; returns false when the segment must be dropped */
static bool
process_ack(struct stk *st, struct stk_tcb *c, struct seg *s)
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
		established_entered(st, c);
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
		challenge_ack(st, c);
		return false;
	}
	if (SEQ_LT(ack, c->snd_una - c->max_snd_wnd)) {
		STK_CTR(st, DROP_TCP_BAD_ACK);
		challenge_ack(st, c);
		return false;
	}
	/* header prediction, the receiving side's common case (BSD's
	 * tcp_input does the same): nothing in flight, nothing newly
	 * acknowledged, no SACK blocks. No RTT sample, congestion, scoreboard,
	 * duplicate-ACK or recovery work can follow from it (each needs
	 * snd_max != snd_una or new data acknowledged); only the window moves. */
	if (ack == c->snd_una && c->snd_max == c->snd_una && !s->o.has_sack && !(c->flags & TF_INRECOVERY)) {
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
			stk_sb_ack(st, c, ack, &s->o);
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
				if ((c->sb.sflags & SF_LOSS) && SEQ_GEQ(ack, c->recover))
					c->sb.sflags &= (uint8_t)~SF_LOSS;
				cwnd_grow(c, acked);
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
			cwnd_grow(c, acked);
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
		if (stk_sb_ack(st, c, ack, &s->o) && c->snd_max != c->snd_una) {
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

			c->ssthresh = flight / 2 > 2 * c->mss ? flight / 2 : 2 * c->mss;
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

static void
established(struct stk *st, struct stk_tcb *c, struct seg *s)
{
	uint32_t wnd = SEQ_GT(c->rcv_adv, c->rcv_nxt) ? c->rcv_adv - c->rcv_nxt : 0;
	bool acceptable, fin = s->flags & STK_TCP_FIN;

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
				dsack_note(c, s->seq, s->seq + s->plen);
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
			process_ack(st, c, s); /* RFC 9293 3.10.7.4: a zero window still takes ACKs */
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
			challenge_ack(st, c);
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
		challenge_ack(st, c);
		goto drop;
	}
	if (!(s->flags & STK_TCP_ACK)) {
		STK_CTR(st, DROP_TCP_BAD_FLAGS);
		goto drop;
	}
	/* timestamps: remember the peer's (RFC 7323 4.3) */
	if (c->ts_ok && s->o.has_ts && SEQ_LEQ(s->seq, c->last_ack_sent)) {
		c->ts_recent = s->o.tsval;
		c->ts_recent_age = st->now;
	}
	c->last_rx = st->now;
	c->keep_probes = 0;
	if (!process_ack(st, c, s))
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

			dsack_note(c, s->seq, s->seq + (d < s->plen ? d : s->plen));
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
				struct stk_seg_node *n = ooo_pop(c);
				uint32_t d = c->rcv_nxt - n->seq;

				/* the in-order segment repeated what was held */
				if (d > 0)
					dsack_note(c, n->seq, n->seq + (d < n->len ? d : n->len));

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
			struct seg t = *s;

			s->b = NULL;
			ooo_insert(st, c, &t, fin);
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

void
stk_tcp_input(struct stk *st, struct stk_buf *b, uint8_t *frame, struct stk_ip4_hdr *ip, uint8_t *l4,
	      uint32_t l4len, uint32_t flags)
{
	struct stk_tcp_hdr *th = (struct stk_tcp_hdr *)l4;
	struct stk_tcb *c, *prev;
	struct seg s;
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
			passive_open(st, l, ip, th, &s);
			goto drop;
		}
		if (l != NULL && (c = cookie_open(st, l, ip, th, &s)) != NULL) {
			/* ACCEPTED, then the segment itself (data on the ACK) */
			c->stats.segs_in++;
			prev = st->cur;
			st->cur = c;
			stk_tcb_event(st, c, STK_EV_ACCEPTED, 0);
			if (c->zflags & TZ_ZOMBIE)
				stk_buf_free(st, s.b);
			else
				established(st, c, &s);
			st->cur = prev;
			if (c->zflags & TZ_ZOMBIE)
				stk_tcb_release(st, c);
			return;
		}
		STK_CTR(st, DROP_TCP_NO_CONN);
		stk_tcp_respond_rst(st, ip, th, s.seglen);
		goto drop;
	}
	c->stats.segs_in++;
	prev = st->cur;
	st->cur = c;
	if (c->state == STK_TCP_SYN_SENT) {
		syn_sent(st, c, &s);
		if (s.b != NULL)
			stk_buf_free(st, s.b);
	} else {
		established(st, c, &s);
	}
	st->cur = prev;
	if (c->zflags & TZ_ZOMBIE)
		stk_tcb_release(st, c);
	return;
drop:
	stk_buf_free(st, b);
}
