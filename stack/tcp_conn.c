/* SPDX-License-Identifier: BSD-3-Clause
 * tcp_conn.c — TCP control blocks and the application's calls.
 *
 *   stk_tcb_alloc / stk_tcb_release   slot (id = generation << 16 | slot + 1),
 *                                     4-tuple hash, active list, queues
 *   stk_tcb_lookup                    4-tuple hash lookup (tcp_in.c)
 *   stk_tcb_event / stk_tcb_finish    events to the application
 *   stk_tcp_connect / listen / send / close / abort and accessors (stk/tcp.h)
 *   stk_tcp_iss_init                  ISS and TSval offset of a new incarnation
 *   time_wait_take                    a connect takes over our TIME_WAIT
 *                                     (time_wait_reuse, as tcp_tw_reuse)
 */
#include "stk_priv.h"

static inline unsigned
tuple_hash(const struct stk *st, uint32_t rip, uint16_t rport, uint16_t lport)
{
	uint64_t k = ((uint64_t)rip << 32) | ((uint32_t)rport << 16) | lport;

	k *= 0x9e3779b97f4a7c15ull;
	return (unsigned)(k >> 40) & st->hash_mask;
}

struct stk_tcb *
stk_tcb_lookup(struct stk *st, uint32_t rip, uint16_t rport, uint16_t lport)
{
	struct stk_tcb *c = st->hash[tuple_hash(st, rip, rport, lport)];

	for (; c != NULL; c = c->hnext)
		if (c->rip == rip && c->rport == rport && c->lport == lport)
			return c;
	return NULL;
}

void
stk_tcb_hash_insert(struct stk *st, struct stk_tcb *c)
{
	struct stk_tcb **h = &st->hash[tuple_hash(st, c->rip, c->rport, c->lport)];

	c->hnext = *h;
	*h = c;
}

static void
hash_remove(struct stk *st, struct stk_tcb *c)
{
	struct stk_tcb **h = &st->hash[tuple_hash(st, c->rip, c->rport, c->lport)];

	for (; *h != NULL; h = &(*h)->hnext)
		if (*h == c) {
			*h = c->hnext;
			return;
		}
}

/* Every control block in use: the TIME_WAIT one whose 2*MSL ends first gives
 * way (as Linux past tcp_max_tw_buckets), so a long TIME_WAIT never refuses
 * new connections. A scan of the slots, only when they are all taken. */
static struct stk_tcb *
time_wait_oldest(struct stk *st)
{
	struct stk_tcb *old = NULL;

	for (unsigned i = 0; i < st->cfg.max_conns; i++) {
		struct stk_tcb *c = st->slots[i];

		if (c != NULL && c->state == STK_TCP_TIME_WAIT && c != st->cur &&
		    (old == NULL || c->timer[STK_T_2MSL] < old->timer[STK_T_2MSL]))
			old = c;
	}
	return old;
}

/* A new control block in a free slot, or in old's place when old (a TIME_WAIT
 * that gives way) is not NULL. The memory comes first: a block that ops.alloc
 * refuses (drop_tcp_nomem, ENOMEM) leaves old as it was. */
static struct stk_tcb *
tcb_new(struct stk *st, struct stk_tcb *old)
{
	struct stk_tcb *c = st->ops.alloc(st->ops.ctx, sizeof(*c));
	unsigned s;

	if (c == NULL) {
		STK_CTR(st, DROP_TCP_NOMEM);
		errno = ENOMEM;
		return NULL;
	}
	if (old != NULL)
		stk_tcb_release(st, old);
	for (s = st->slot_hint;; s = (s + 1) % st->cfg.max_conns)
		if (st->slots[s] == NULL)
			break;
	st->slot_hint = (s + 1) % st->cfg.max_conns;
	st->slots[s] = c;
	st->slot_gen[s]++;
	c->slot = (uint16_t)s;
	c->id = ((uint32_t)st->slot_gen[s] << 16) | (s + 1);
	c->arp_idx = ~0u;
	STAILQ_INIT(&c->sq);
	st->n_conns++;
	stk_tcb_init_params(st, c);
	return c;
}

struct stk_tcb *
stk_tcb_alloc(struct stk *st)
{
	struct stk_tcb *old = NULL, *c;

	if (st->n_conns >= st->cfg.max_conns) {
		old = time_wait_oldest(st);
		if (old == NULL) {
			STK_CTR(st, DROP_TCP_CONN_LIMIT);
			errno = ENOBUFS;
			return NULL;
		}
	}
	c = tcb_new(st, old);
	if (c != NULL && old != NULL)
		STK_CTR(st, TCP_TIME_WAIT_RECYCLED);
	return c;
}

void
stk_tcb_init_params(struct stk *st, struct stk_tcb *c)
{
	const struct stk_config *k = &st->cfg;

	c->mss = k->mtu - STK_IP4_HLEN - STK_TCP_HLEN; /* until the peer's MSS is known */
	c->pmtu = k->mtu;
	c->rto_ns = (uint64_t)k->rto_init_ms * STK_MS;
	c->ssthresh = 0x7fffffff;
	c->cc = &stk_cc_reno; /* until ESTABLISHED: stk_cc_select() */
	c->rcv_wnd = k->rcvbuf;
	c->sndbuf = k->sndbuf;
	c->idle_since = st->now;
}

uint32_t
stk_tcb_rcv_window(const struct stk *st, const struct stk_tcb *c)
{
	/* what the out-of-order queue holds, and what the application was given
	 * and has not released (rx_hold), is not on offer again */
	uint64_t used = (uint64_t)c->ooo_bytes + stk_tcp_rx_held(c);

	return st->cfg.rcvbuf > used ? st->cfg.rcvbuf - (uint32_t)used : 0;
}

uint32_t
stk_tcb_sws_step(const struct stk *st, const struct stk_tcb *c)
{
	uint32_t mss = st->cfg.mtu - STK_IP4_HLEN - STK_TCP_HLEN, half = st->cfg.rcvbuf / 2;

	(void)c;
	return half < mss ? half : mss;
}

void
stk_ooo_purge(struct stk *st, struct stk_tcb *c)
{
	while (c->ooo != NULL) {
		struct stk_seg_node *n = c->ooo;

		c->ooo = n->next;
		stk_buf_free(st, n->b);
		st->bufs_held--;
		st->ops.free(st->ops.ctx, n);
	}
	if (c->oblk != NULL)
		st->ops.free(st->ops.ctx, c->oblk);
	c->oblk = NULL;
	c->n_oblk = c->cap_oblk = 0;
	c->ooo_bytes = 0;
	c->ooo_segs = 0;
}

/* release every send-queue node whose bytes are all below upto */
void
stk_sndq_ack(struct stk *st, struct stk_tcb *c, uint32_t upto)
{
	struct stk_snd_node *n;

	while ((n = STAILQ_FIRST(&c->sq)) != NULL && SEQ_LEQ(n->seq + n->len, upto)) {
		if (c->sq_cursor == n)
			c->sq_cursor = NULL;
		STAILQ_REMOVE_HEAD(&c->sq, next);
		c->snd_queued -= n->len;
		st->ops.buf_free(st->ops.ctx, n->b);
		st->bufs_held--;
		st->ops.free(st->ops.ctx, n);
	}
}

static void
sndq_purge(struct stk *st, struct stk_tcb *c)
{
	struct stk_snd_node *n;

	while ((n = STAILQ_FIRST(&c->sq)) != NULL) {
		STAILQ_REMOVE_HEAD(&c->sq, next);
		st->ops.buf_free(st->ops.ctx, n->b);
		st->bufs_held--;
		st->ops.free(st->ops.ctx, n);
	}
	c->sq_cursor = NULL;
	c->snd_queued = 0;
}

void
stk_tcb_release(struct stk *st, struct stk_tcb *c)
{
	if (st->cur == c) {
		/* an event callback ended the connection we are processing:
		 * the processing path frees it when it unwinds */
		c->zflags |= TZ_ZOMBIE;
		c->flags |= TF_DEAD;
		return;
	}
	if (c->zflags & TZ_BURST_ACK)
		stk_tcp_burst_ack_forget(st, c);
	stk_listener_detach(st, c);
	stk_tcb_active_remove(st, c);
	if (c->state != STK_TCP_CLOSED || c->rport != 0)
		hash_remove(st, c);
	stk_ooo_purge(st, c);
	sndq_purge(st, c);
	stk_sb_free(st, c);
	st->slots[c->slot] = NULL;
	st->n_conns--;
	st->ops.free(st->ops.ctx, c);
}

void
stk_tcb_set_state(struct stk *st, struct stk_tcb *c, enum stk_tcp_state s)
{
	(void)st;
	c->state = (uint8_t)s;
}

void
stk_tcb_event(struct stk *st, struct stk_tcb *c, enum stk_ev ev, int reason)
{
	if (c->flags & TF_DEAD)
		return;
	st->ops.event(st->ops.ctx, c, c->user, ev, reason, NULL, NULL, 0);
}

/* A terminal event: the app hears it once (unless it aborted or already heard
 * one), then the control block goes. */
void
stk_tcb_finish(struct stk *st, struct stk_tcb *c, enum stk_ev ev, int reason)
{
	switch (ev) {
	case STK_EV_CLOSED: STK_CTR(st, TCP_CLOSED); break;
	case STK_EV_RESET: STK_CTR(st, TCP_RESETS); break;
	case STK_EV_TIMEOUT: STK_CTR(st, TCP_TIMEOUTS); break;
	default: break;
	}
	/* a half-open passive connection was never shown to the app */
	if (c->state == STK_TCP_SYN_RCVD && (c->flags & TF_PASSIVE))
		c->flags |= TF_DEAD;
	stk_tcb_event(st, c, ev, reason);
	c->flags |= TF_DEAD;
	stk_tcb_set_state(st, c, STK_TCP_CLOSED);
	stk_tcb_release(st, c);
}

/* The listener keeps its half-open connections in arrival order, so that a
 * SYN flood can evict the oldest (backlog_evict, tcp_in_open.c stk_tcp_passive_open). */
void
stk_listener_attach(struct stk *st, struct stk_listener *l, struct stk_tcb *c)
{
	c->listener_of = l;
	TAILQ_INSERT_TAIL(&l->ho, c, holink);
	l->pending++;
	if (++st->half_open > st->ctr[STK_C_TCP_HALF_OPEN_PEAK])
		st->ctr[STK_C_TCP_HALF_OPEN_PEAK] = st->half_open;
}

void
stk_listener_detach(struct stk *st, struct stk_tcb *c)
{
	struct stk_listener *l = c->listener_of;

	if (l == NULL)
		return;
	TAILQ_REMOVE(&l->ho, c, holink);
	c->listener_of = NULL;
	l->pending--;
	st->half_open--;
}

struct stk_listener *
stk_listener_find(struct stk *st, uint16_t port)
{
	for (struct stk_listener *l = st->listeners; l != NULL; l = l->next)
		if (l->port == port)
			return l;
	return NULL;
}

/* ---- the application's calls ---- */

static bool
port_in_use(struct stk *st, uint16_t lport, uint32_t rip, uint16_t rport)
{
	return stk_listener_find(st, lport) != NULL || stk_tcb_lookup(st, rip, rport, lport) != NULL;
}

/* the ephemeral range (ephemeral_port_min..max) and its k-th port, modulo */
static inline unsigned
eph_count(const struct stk *st)
{
	return st->cfg.ephemeral_port_max - st->cfg.ephemeral_port_min + 1u;
}

static inline uint16_t
eph_port(const struct stk *st, unsigned k)
{
	return (uint16_t)(st->cfg.ephemeral_port_min + k % eph_count(st));
}

static void
iss_set(struct stk_tcb *c, uint32_t iss)
{
	c->iss = iss;
	c->snd_una = c->snd_nxt = c->snd_max = iss;
	c->snd_end = iss + 1;
	c->recover = iss;
}

/* A new incarnation's send side: its ISS and its TSval offset, both from one
 * keyed hash of the 4-tuple (as Linux's secure_tcp_seq_and_ts_off()).
 * ISS = M + F, M the 4 us clock (RFC 9293 3.4.1), F the hash's low half
 * (RFC 6528); TSval = the ms clock + the high half (RFC 7323 5.4). Neither can
 * be guessed from outside, and for one 4-tuple both rise with the clock over
 * this stack's life: a peer still holding the previous incarnation in
 * TIME_WAIT takes the new SYN (RFC 6191: a newer timestamp, or a sequence
 * above the old space) instead of answering it with the old one's ACK. A
 * random offset per connection broke that half the time. The key is this
 * stack's own: across a restart the comparison is a coin toss again; a SYN
 * that gets the old ACK resets it and goes again 2 ms later
 * (stk_tcp_syn_sent). A SYN cookie's connection keeps no timestamps. */
void
stk_tcp_iss_init(const struct stk *st, struct stk_tcb *c)
{
	uint64_t f = stk_siphash3(st->isn_key, ((uint64_t)c->rip << 32) | st->cfg.ip,
				  ((uint64_t)c->rport << 16) | c->lport, 0);

	c->ts_off = (uint32_t)(f >> 32);
	iss_set(c, (uint32_t)(st->now / 4000) + (uint32_t)f);
}

/* Every port of the range is taken to this peer address and port: a 4-tuple
 * this stack holds in TIME_WAIT may be taken over, as Linux's tcp_tw_reuse
 * does (tcp_twsk_unique()), only where that connection used timestamps and
 * the peer's last one is at least a second old. The new SYN's TSval is then
 * above all the old connection sent (one offset per 4-tuple,
 * stk_tcp_iss_init), so the peer's PAWS (RFC 7323 5) keeps the old
 * connection's segments out of the new one, and a peer TIME_WAIT takes the SYN
 * (RFC 6191). Returns that connection, NULL if none qualifies. */
static struct stk_tcb *
time_wait_take(struct stk *st, uint32_t ip, uint16_t port, unsigned first)
{
	for (unsigned i = 0; i < eph_count(st); i++) {
		uint16_t p = eph_port(st, first + i);
		struct stk_tcb *c = stk_tcb_lookup(st, ip, port, p);

		if (c != NULL && c->state == STK_TCP_TIME_WAIT && c != st->cur && c->ts_ok &&
		    st->now - c->ts_recent_age >= 1000 * STK_MS && stk_listener_find(st, p) == NULL)
			return c;
	}
	return NULL;
}

struct stk_tcb *
stk_tcp_connect(struct stk *st, uint32_t ip, uint16_t port, uint64_t user)
{
	struct stk_tcb *c, *tw = NULL;
	uint16_t lport = 0;
	uint32_t tw_nxt = 0;
	unsigned first;

	st->now = st->ops.clock_ns(st->ops.ctx);
	if (ip == 0 || port == 0) {
		errno = EINVAL;
		return NULL;
	}
	if (stk_ip4_nexthop(st, ip) == 0) {
		STK_CTR(st, DROP_NO_ROUTE);
		errno = EHOSTUNREACH;
		return NULL;
	}
	/* RFC 6056 3.3.1 (Algorithm 1): a random port of the range, then the
	 * next free one: nothing to learn from one connection's port about the
	 * next one's */
	first = (unsigned)(st->ops.random(st->ops.ctx) % eph_count(st));
	for (unsigned i = 0; i < eph_count(st); i++) {
		uint16_t p = eph_port(st, first + i);

		if (!port_in_use(st, p, ip, port)) {
			lport = p;
			break;
		}
	}
	if (lport == 0 && st->cfg.time_wait_reuse)
		tw = time_wait_take(st, ip, port, first);
	if (tw != NULL) {
		lport = tw->lport;
		tw_nxt = tw->snd_nxt;
	}
	if (lport == 0) {
		errno = EADDRINUSE;
		return NULL;
	}
	c = tw != NULL ? tcb_new(st, tw) : stk_tcb_alloc(st);
	if (c == NULL)
		return NULL;
	c->rip = ip;
	c->rport = port;
	c->lport = lport;
	c->user = user;
	stk_tcp_iss_init(st, c);
	/* a taken-over TIME_WAIT: the new sequence space starts above the old
	 * one and its largest window (Linux: tw_snd_nxt + 65535 + 2) */
	if (tw != NULL) {
		STK_CTR(st, TCP_TIME_WAIT_RECONNECTS);
		if (SEQ_LT(c->iss, tw_nxt + 65537u))
			iss_set(c, tw_nxt + 65537u);
	}
	c->nexthop = stk_ip4_nexthop(st, ip);
	stk_tcb_set_state(st, c, STK_TCP_SYN_SENT);
	stk_tcb_hash_insert(st, c);
	STK_CTR(st, TCP_CONNECTS);
	stk_tcp_output(st, c); /* the SYN; arms the retransmission timer */
	return c;
}

int
stk_tcp_listen(struct stk *st, uint16_t port, unsigned backlog, uint64_t user)
{
	struct stk_listener *l;

	if (port == 0 || backlog == 0)
		return -EINVAL;
	if (stk_listener_find(st, port) != NULL)
		return -EADDRINUSE;
	l = st->ops.alloc(st->ops.ctx, sizeof(*l));
	if (l == NULL)
		return -ENOMEM;
	l->port = port;
	TAILQ_INIT(&l->ho);
	l->backlog = backlog;
	l->user = user;
	l->next = st->listeners;
	st->listeners = l;
	return 0;
}

int
stk_tcp_unlisten(struct stk *st, uint16_t port)
{
	for (struct stk_listener **p = &st->listeners; *p != NULL; p = &(*p)->next)
		if ((*p)->port == port) {
			struct stk_listener *l = *p;

			/* half-open connections keep a pointer: drop them */
			while (!TAILQ_EMPTY(&l->ho))
				stk_tcb_finish(st, TAILQ_FIRST(&l->ho), STK_EV_ERROR, ECONNABORTED);
			*p = l->next;
			st->ops.free(st->ops.ctx, l);
			return 0;
		}
	return -ENOENT;
}

uint32_t
stk_tcp_sndbuf_space(const struct stk_tcb *c)
{
	return c->snd_queued < c->sndbuf ? c->sndbuf - c->snd_queued : 0;
}

int
stk_tcp_send(struct stk *st, struct stk_tcb *c, struct stk_buf *b, const uint8_t *data, uint32_t len)
{
	struct stk_snd_node *n;

	if (c->flags & TF_DEAD)
		return -ENOTCONN;
	if (c->flags & TF_SENT_FIN)
		return -EPIPE;
	switch (c->state) {
	case STK_TCP_SYN_SENT:
	case STK_TCP_SYN_RCVD:
	case STK_TCP_ESTABLISHED:
	case STK_TCP_CLOSE_WAIT:
		break;
	default:
		return -ENOTCONN;
	}
	if (len == 0) {
		st->ops.buf_free(st->ops.ctx, b);
		return 0;
	}
	if (len > stk_tcp_sndbuf_space(c)) {
		STK_CTR(st, TCP_SNDBUF_FULL); /* not a drop: the tcp stage holds it (tcp_sendq.c) */
		return -ENOBUFS;
	}
	n = st->ops.alloc(st->ops.ctx, sizeof(*n));
	if (n == NULL) {
		STK_CTR(st, DROP_TCP_NOMEM);
		return -ENOMEM;
	}
	stk_rate_check_app_limited(c);
	n->b = b;
	n->data = data;
	n->len = len;
	/* data after the SYN: the first byte's seq is iss + 1 */
	n->seq = c->snd_end;
	c->snd_end += len;
	STAILQ_INSERT_TAIL(&c->sq, n, next);
	c->snd_queued += len;
	stk_bufs_hold(st);
	if (c->state == STK_TCP_ESTABLISHED || c->state == STK_TCP_CLOSE_WAIT) {
		st->now = st->ops.clock_ns(st->ops.ctx);
		stk_tcp_output(st, c);
	}
	return 0;
}

int
stk_tcp_close(struct stk *st, struct stk_tcb *c)
{
	if (c->flags & (TF_DEAD | TF_SENT_FIN))
		return -ENOTCONN;
	st->now = st->ops.clock_ns(st->ops.ctx);
	switch (c->state) {
	case STK_TCP_SYN_SENT:
		/* nothing synchronised yet: just go, with the CLOSED event every
		 * close ends in (found by fuzz_tcp_input: TF_DEAD was set first, so
		 * the tcb was released without an event and the application, told
		 * by stk/tcp.h that only abort is silent, went on using it) */
		stk_tcb_finish(st, c, STK_EV_CLOSED, 0);
		return 0;
	case STK_TCP_SYN_RCVD:
	case STK_TCP_ESTABLISHED:
		c->flags |= TF_SENT_FIN;
		c->fin_seq = c->snd_end;
		if (c->state == STK_TCP_ESTABLISHED)
			stk_tcb_set_state(st, c, STK_TCP_FIN_WAIT_1);
		break;
	case STK_TCP_CLOSE_WAIT:
		c->flags |= TF_SENT_FIN;
		c->fin_seq = c->snd_end;
		stk_tcb_set_state(st, c, STK_TCP_LAST_ACK);
		break;
	default:
		return -ENOTCONN;
	}
	stk_tcp_output(st, c);
	return 0;
}

void
stk_tcp_abort(struct stk *st, struct stk_tcb *c)
{
	st->now = st->ops.clock_ns(st->ops.ctx);
	if (c->state != STK_TCP_SYN_SENT && c->state != STK_TCP_CLOSED && c->state != STK_TCP_TIME_WAIT)
		stk_tcp_send_ctl(st, c, STK_TCP_RST | STK_TCP_ACK, c->snd_nxt);
	c->flags |= TF_DEAD;
	stk_tcb_finish(st, c, STK_EV_CLOSED, 0);
}

unsigned
stk_tcp_abort_all(struct stk *st)
{
	unsigned n = 0;

	st->now = st->ops.clock_ns(st->ops.ctx);
	for (unsigned i = 0; i < st->cfg.max_conns; i++) {
		struct stk_tcb *c = st->slots[i];

		if (c == NULL)
			continue;
		if (c->state != STK_TCP_TIME_WAIT && c->state != STK_TCP_SYN_SENT) {
			stk_tcp_send_ctl(st, c, STK_TCP_RST | STK_TCP_ACK, c->snd_nxt);
			n++;
		}
		c->flags |= TF_DEAD;
		stk_tcb_release(st, c);
	}
	return n;
}

unsigned
stk_tcp_close_all(struct stk *st)
{
	unsigned n = 0;

	for (unsigned i = 0; i < st->cfg.max_conns; i++) {
		struct stk_tcb *c = st->slots[i];

		if (c == NULL || (c->flags & (TF_DEAD | TF_SENT_FIN)))
			continue;
		/* a passive half-open connection was never shown to the application */
		if (c->state == STK_TCP_SYN_RCVD && (c->flags & TF_PASSIVE))
			continue;
		if (c->state == STK_TCP_SYN_SENT || c->state == STK_TCP_SYN_RCVD ||
		    c->state == STK_TCP_ESTABLISHED || c->state == STK_TCP_CLOSE_WAIT) {
			/* SYN_SENT ends at once (CLOSED event): its slot may be reused
			 * by an event handler, so it is looked at no further */
			if (stk_tcp_close(st, c) == 0)
				n++;
		}
	}
	return n;
}

unsigned
stk_tcp_closing(const struct stk *st, bool all)
{
	unsigned n = 0;

	for (unsigned i = 0; i < st->cfg.max_conns; i++) {
		const struct stk_tcb *c = st->slots[i];

		if (c == NULL || (c->flags & TF_DEAD) || c->state == STK_TCP_TIME_WAIT ||
		    c->state == STK_TCP_CLOSED)
			continue;
		if (c->state == STK_TCP_SYN_RCVD && (c->flags & TF_PASSIVE))
			continue;
		if (all || (c->flags & TF_SENT_FIN))
			n++;
	}
	return n;
}

uint32_t
stk_tcp_id(const struct stk_tcb *c)
{
	return c->id;
}

uint32_t
stk_tcp_rx_offset(const struct stk_tcb *c)
{
	return c->rcv_nxt - c->irs - 1;
}

uint32_t
stk_tcp_rx_held(const struct stk_tcb *c)
{
	/* before the peer's SYN there is no stream (irs and rcv_nxt unset): 0,
	 * not 2^32 - 1, or the SYN would offer a zero window */
	if (c->state == STK_TCP_SYN_SENT)
		return 0;
	return c->rcv_nxt - c->irs - 1 - c->rcv_rel;
}

void
stk_tcp_rx_release(struct stk *st, struct stk_tcb *c, uint32_t off)
{
	uint32_t known, now;

	if (!st->cfg.rx_hold || (c->flags & TF_DEAD) || !SEQ_GT(off, c->rcv_rel) ||
	    SEQ_GT(off, stk_tcp_rx_offset(c)))
		return;
	c->rcv_rel = off;
	switch (c->state) {
	case STK_TCP_ESTABLISHED:
	case STK_TCP_FIN_WAIT_1:
	case STK_TCP_FIN_WAIT_2:
		break;
	default:
		return; /* the peer sends no more data: no window to update */
	}
	/* a window update when the window the peer knows is less than half of
	 * what it could be now, and at least one SWS step smaller (Linux's
	 * __tcp_cleanup_rbuf: the window at least doubles) */
	known = SEQ_GT(c->rcv_adv, c->rcv_nxt) ? c->rcv_adv - c->rcv_nxt : 0;
	now = stk_tcb_rcv_window(st, c);
	if (now > (65535u << c->rcv_wscale))
		now = 65535u << c->rcv_wscale;
	if (now >= known + stk_tcb_sws_step(st, c) && now / 2 >= known) {
		st->now = st->ops.clock_ns(st->ops.ctx);
		STK_CTR(st, TCP_WINDOW_UPDATES);
		stk_tcp_send_ack(st, c);
	}
}

struct stk_tcb *
stk_tcp_by_id(struct stk *st, uint32_t id)
{
	unsigned s = (id & 0xffff);
	struct stk_tcb *c;

	if (s == 0 || s > st->cfg.max_conns)
		return NULL;
	c = st->slots[s - 1];
	if (c == NULL || c->id != id || (c->flags & TF_DEAD))
		return NULL;
	return c;
}

uint64_t
stk_tcp_user(const struct stk_tcb *c)
{
	return c->user;
}

void
stk_tcp_set_user(struct stk_tcb *c, uint64_t user)
{
	c->user = user;
}

enum stk_tcp_state
stk_tcp_state(const struct stk_tcb *c)
{
	return (enum stk_tcp_state)c->state;
}

const char *
stk_tcp_state_name(enum stk_tcp_state s)
{
	static const char *const n[] = {
		"CLOSED", "LISTEN", "SYN_SENT", "SYN_RCVD", "ESTABLISHED", "FIN_WAIT_1",
		"FIN_WAIT_2", "CLOSE_WAIT", "CLOSING", "LAST_ACK", "TIME_WAIT",
	};

	return (unsigned)s < sizeof(n) / sizeof(n[0]) ? n[s] : "?";
}

void
stk_tcp_peer(const struct stk_tcb *c, uint32_t *ip, uint16_t *port, uint16_t *lport)
{
	if (ip != NULL)
		*ip = c->rip;
	if (port != NULL)
		*port = c->rport;
	if (lport != NULL)
		*lport = c->lport;
}

const struct stk_tcp_stats *
stk_tcp_stats(const struct stk_tcb *c)
{
	return &c->stats;
}

/* the stretch ACKs of the burst that just ended (stk_input_burst): one ACK for
 * every connection that still owes one (an ACK sent meanwhile, with data or a
 * window update, cleared segs_unacked) */
void
stk_tcp_burst_acks(struct stk *st)
{
	for (unsigned i = 0; i < st->n_burst_ack; i++) {
		struct stk_tcb *c = st->burst_ack[i];

		c->zflags &= (uint16_t)~TZ_BURST_ACK;
		if (c->segs_unacked > 0 && !(c->flags & TF_DEAD) && c->state != STK_TCP_CLOSED) {
			STK_CTR(st, TCP_STRETCH_ACKS);
			stk_tcp_send_ack(st, c);
		}
	}
	st->n_burst_ack = 0;
}

/* c goes away in the middle of a burst: out of the stretch-ACK list */
void
stk_tcp_burst_ack_forget(struct stk *st, struct stk_tcb *c)
{
	for (unsigned i = 0; i < st->n_burst_ack; i++)
		if (st->burst_ack[i] == c) {
			st->burst_ack[i] = st->burst_ack[--st->n_burst_ack];
			break;
		}
	c->zflags &= (uint16_t)~TZ_BURST_ACK;
}
