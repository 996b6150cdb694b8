/* SPDX-License-Identifier: BSD-3-Clause
 * arp.c — ARP (RFC 826) for one IPv4 interface: neighbour cache with expiry,
 * a bounded queue of frames per unresolved neighbour, gratuitous ARP, static
 * neighbours.
 *
 *   stk_arp_init / fini   the cache (open addressing, linear probing)
 *   stk_arp_input         requests for our address -> reply in place; any
 *                         request or reply about a neighbour we track or
 *                         wait for updates it and flushes its queue
 *   stk_arp_resolve       fill the dst MAC, or queue the frame and ask
 *   stk_arp_poll          retries, giving up (queued frames dropped and
 *                         counted), refresh of expired entries
 *   stk_arp_gratuitous    announce our address (stk_start)
 *
 * A REACHABLE entry older than arp_timeout_ms stays usable while a refresh
 * request goes out; if arp_retries requests get no reply it is removed. */
#include "stk_priv.h"

#define ARP_FRAME_LEN (STK_ETH_HLEN + (uint32_t)sizeof(struct stk_arp_hdr))

static inline unsigned
arp_hash(const struct stk *st, uint32_t ip)
{
	uint32_t h = ip * 0x9e3779b1u;

	return (h >> 16) & st->arp_mask;
}

static struct stk_arp_entry *
arp_find(struct stk *st, uint32_t ip)
{
	unsigned i = arp_hash(st, ip);

	for (unsigned k = 0; k <= st->arp_mask; k++, i = (i + 1) & st->arp_mask) {
		struct stk_arp_entry *e = &st->arp[i];

		if (e->state == STK_ARP_FREE)
			return NULL;
		if (e->ip == ip)
			return e;
	}
	return NULL;
}

static struct stk_arp_entry *
arp_insert(struct stk *st, uint32_t ip)
{
	unsigned i = arp_hash(st, ip);

	for (unsigned k = 0; k <= st->arp_mask; k++, i = (i + 1) & st->arp_mask) {
		struct stk_arp_entry *e = &st->arp[i];

		if (e->state == STK_ARP_FREE) {
			memset(e, 0, sizeof(*e));
			e->ip = ip;
			return e;
		}
		if (e->ip == ip)
			return e;
	}
	return NULL;
}

/* removal from a linear-probing table: re-place the cluster that follows */
static void
arp_remove(struct stk *st, struct stk_arp_entry *e)
{
	unsigned i = (unsigned)(e - st->arp);

	e->state = STK_ARP_FREE;
	for (unsigned j = (i + 1) & st->arp_mask; st->arp[j].state != STK_ARP_FREE;
	     j = (j + 1) & st->arp_mask) {
		struct stk_arp_entry tmp = st->arp[j], *n;

		st->arp[j].state = STK_ARP_FREE;
		n = arp_insert(st, tmp.ip);
		*n = tmp;
	}
}

int
stk_arp_init(struct stk *st)
{
	unsigned n = 4;

	while (n < st->cfg.arp_entries)
		n <<= 1;
	st->arp = st->ops.alloc(st->ops.ctx, n * sizeof(*st->arp));
	if (st->arp == NULL)
		return -ENOMEM;
	st->arp_mask = n - 1;
	for (unsigned i = 0; i < st->cfg.n_static; i++) {
		struct stk_arp_entry *e = arp_insert(st, st->cfg.neigh[i].ip);

		if (e == NULL)
			return -ENOSPC;
		memcpy(e->mac, st->cfg.neigh[i].mac, 6);
		e->state = STK_ARP_STATIC;
	}
	return 0;
}

static void
arp_drop_pending(struct stk *st, struct stk_arp_entry *e, bool count)
{
	while (e->pend_head != NULL) {
		struct stk_pending *p = e->pend_head;

		e->pend_head = p->next;
		stk_buf_free(st, p->b);
		st->bufs_held--;
		if (count)
			STK_CTR(st, DROP_ARP_UNRESOLVED);
		st->ops.free(st->ops.ctx, p);
	}
	e->pend_tail = NULL;
	e->n_pending = 0;
}

void
stk_arp_fini(struct stk *st)
{
	if (st->arp == NULL)
		return;
	for (unsigned i = 0; i <= st->arp_mask; i++)
		if (st->arp[i].state != STK_ARP_FREE)
			arp_drop_pending(st, &st->arp[i], false);
	st->ops.free(st->ops.ctx, st->arp);
	st->arp = NULL;
}

static void
arp_send(struct stk *st, uint16_t op, const uint8_t *dmac, const uint8_t *tha, uint32_t tpa)
{
	uint8_t *f;
	struct stk_buf *b = st->ops.tx_alloc(st->ops.ctx, ARP_FRAME_LEN, &f);
	struct stk_eth_hdr *eh;
	struct stk_arp_hdr *ah;

	if (b == NULL) {
		STK_CTR(st, DROP_TX_NOBUF);
		return;
	}
	eh = (struct stk_eth_hdr *)f;
	ah = (struct stk_arp_hdr *)(f + STK_ETH_HLEN);
	memcpy(eh->dst, dmac, 6);
	memcpy(eh->src, st->cfg.mac, 6);
	eh->type = htobe16(STK_ETH_P_ARP);
	ah->hrd = htobe16(STK_ARP_HRD_ETHER);
	ah->pro = htobe16(STK_ETH_P_IP);
	ah->hln = 6;
	ah->pln = 4;
	ah->op = htobe16(op);
	memcpy(ah->sha, st->cfg.mac, 6);
	memcpy(&ah->spa, &st->cfg.ip, 4);
	memcpy(ah->tha, tha, 6);
	memcpy(&ah->tpa, &tpa, 4);
	stk_tx_frame(st, b, f, ARP_FRAME_LEN, 0);
}

static const uint8_t bcast[6] = { 0xff, 0xff, 0xff, 0xff, 0xff, 0xff };
static const uint8_t zero6[6];

static void
arp_request(struct stk *st, struct stk_arp_entry *e, bool unicast)
{
	arp_send(st, STK_ARP_OP_REQUEST, unicast ? e->mac : bcast, zero6, e->ip);
	STK_CTR(st, ARP_REQUESTS_TX);
}

void
stk_arp_gratuitous(struct stk *st)
{
	/* RFC 5227 announcement: a request with sender = target = our address */
	arp_send(st, STK_ARP_OP_REQUEST, bcast, zero6, st->cfg.ip);
	STK_CTR(st, ARP_GRATUITOUS_TX);
}

static void
arp_flush(struct stk *st, struct stk_arp_entry *e)
{
	while (e->pend_head != NULL) {
		struct stk_pending *p = e->pend_head;

		e->pend_head = p->next;
		memcpy(((struct stk_eth_hdr *)p->data)->dst, e->mac, 6);
		st->bufs_held--;
		stk_tx_frame(st, p->b, p->data, p->len, p->flags);
		st->ops.free(st->ops.ctx, p);
	}
	e->pend_tail = NULL;
	e->n_pending = 0;
}

void
stk_arp_input(struct stk *st, struct stk_buf *b, uint8_t *frame, uint32_t len)
{
	struct stk_arp_hdr *ah = (struct stk_arp_hdr *)(frame + STK_ETH_HLEN);
	struct stk_eth_hdr *eh = (struct stk_eth_hdr *)frame;
	struct stk_arp_entry *e;
	uint32_t spa, tpa;
	uint16_t op;

	STK_CTR(st, ARP_RX);
	if (len < ARP_FRAME_LEN || be16toh(ah->hrd) != STK_ARP_HRD_ETHER ||
	    be16toh(ah->pro) != STK_ETH_P_IP || ah->hln != 6 || ah->pln != 4) {
		STK_CTR(st, DROP_ARP_BAD);
		goto free;
	}
	op = be16toh(ah->op);
	memcpy(&spa, &ah->spa, 4);
	memcpy(&tpa, &ah->tpa, 4);
	if ((op != STK_ARP_OP_REQUEST && op != STK_ARP_OP_REPLY) || (ah->sha[0] & 1) || spa == 0) {
		STK_CTR(st, DROP_ARP_BAD); /* also probes (spa 0): nothing to learn */
		goto free;
	}
	if (spa == st->cfg.ip) {
		STK_CTR(st, DROP_ARP_BAD); /* someone claims our address */
		stk_logf(st, STK_LOG_WARNING, "arp: %02x:%02x:%02x:%02x:%02x:%02x claims our address",
			 ah->sha[0], ah->sha[1], ah->sha[2], ah->sha[3], ah->sha[4], ah->sha[5]);
		goto free;
	}
	/* learn: update what we track; create only when the packet is for us
	 * (RFC 826 merge rule) */
	e = arp_find(st, spa);
	if (e == NULL && tpa == st->cfg.ip && (spa & st->netmask) == (st->cfg.ip & st->netmask)) {
		e = arp_insert(st, spa);
		if (e == NULL)
			STK_CTR(st, DROP_ARP_CACHE_FULL);
	}
	if (e != NULL && e->state != STK_ARP_STATIC) {
		bool was = e->state == STK_ARP_REACHABLE;

		memcpy(e->mac, ah->sha, 6);
		e->state = STK_ARP_REACHABLE;
		e->updated = st->now;
		e->tries = 0;
		e->next_try = 0;
		if (!was)
			STK_CTR(st, ARP_RESOLVED);
		arp_flush(st, e);
	}
	if (op == STK_ARP_OP_REQUEST && tpa == st->cfg.ip) {
		/* reply in place */
		memcpy(eh->dst, ah->sha, 6);
		memcpy(eh->src, st->cfg.mac, 6);
		ah->op = htobe16(STK_ARP_OP_REPLY);
		memcpy(ah->tha, ah->sha, 6);
		memcpy(&ah->tpa, &spa, 4);
		memcpy(ah->sha, st->cfg.mac, 6);
		memcpy(&ah->spa, &st->cfg.ip, 4);
		STK_CTR(st, ARP_REPLIES_TX);
		stk_tx_frame(st, b, frame, ARP_FRAME_LEN, 0);
		return;
	}
free:
	stk_buf_free(st, b);
}

int
stk_arp_resolve(struct stk *st, uint32_t ip, struct stk_buf *b, uint8_t *frame, uint32_t len,
		uint32_t txflags, unsigned *hint)
{
	struct stk_arp_entry *e = NULL;
	struct stk_pending *p;

	if (hint != NULL && *hint <= st->arp_mask && st->arp[*hint].ip == ip &&
	    st->arp[*hint].state != STK_ARP_FREE)
		e = &st->arp[*hint];
	else
		e = arp_find(st, ip);
	if (STK_LIKELY(e != NULL && e->state >= STK_ARP_REACHABLE)) {
		if (hint != NULL)
			*hint = (unsigned)(e - st->arp);
		memcpy(((struct stk_eth_hdr *)frame)->dst, e->mac, 6);
		if (STK_UNLIKELY(e->state == STK_ARP_REACHABLE && e->next_try == 0 &&
				 st->now - e->updated > st->cfg.arp_timeout_ms * STK_MS)) {
			/* stale: keep using it, confirm by unicast */
			e->tries = 1;
			e->next_try = st->now + st->cfg.arp_retry_ms * STK_MS;
			arp_request(st, e, true);
			if (st->arp_next_poll == 0 || e->next_try < st->arp_next_poll)
				st->arp_next_poll = e->next_try;
		}
		return 0;
	}
	if (e == NULL) {
		e = arp_insert(st, ip);
		if (e == NULL) {
			STK_CTR(st, DROP_ARP_CACHE_FULL);
			stk_buf_free(st, b);
			return -ENOSPC;
		}
		e->state = STK_ARP_INCOMPLETE;
		e->tries = 1;
		e->next_try = st->now + st->cfg.arp_retry_ms * STK_MS;
		arp_request(st, e, false);
		if (st->arp_next_poll == 0 || e->next_try < st->arp_next_poll)
			st->arp_next_poll = e->next_try;
	}
	if (e->n_pending >= st->cfg.arp_pending) {
		STK_CTR(st, DROP_ARP_PENDING_FULL);
		stk_buf_free(st, b);
		return -ENOBUFS;
	}
	p = st->ops.alloc(st->ops.ctx, sizeof(*p));
	if (p == NULL) {
		STK_CTR(st, DROP_TCP_NOMEM);
		stk_buf_free(st, b);
		return -ENOMEM;
	}
	p->b = b;
	p->data = frame;
	p->len = len;
	p->flags = txflags;
	if (e->pend_tail != NULL)
		e->pend_tail->next = p;
	else
		e->pend_head = p;
	e->pend_tail = p;
	e->n_pending++;
	stk_bufs_hold(st);
	return 1;
}

unsigned
stk_arp_poll(struct stk *st)
{
	uint64_t next = 0;
	unsigned n = 0;

	st->arp_next_poll = 0;
	for (unsigned i = 0; i <= st->arp_mask; i++) {
		struct stk_arp_entry *e = &st->arp[i];

		if ((e->state != STK_ARP_INCOMPLETE && e->state != STK_ARP_REACHABLE) || e->next_try == 0)
			continue;
		if (e->next_try > st->now) {
			if (next == 0 || e->next_try < next)
				next = e->next_try;
			continue;
		}
		n++;
		if (e->tries >= st->cfg.arp_retries) {
			/* give up: unresolved, or an expired entry nobody confirmed */
			if (e->state == STK_ARP_REACHABLE)
				STK_CTR(st, ARP_EXPIRED);
			arp_drop_pending(st, e, true);
			arp_remove(st, e);
			i--; /* the slot may hold a moved entry now */
			continue;
		}
		e->tries++;
		e->next_try = st->now + st->cfg.arp_retry_ms * STK_MS;
		arp_request(st, e, e->state == STK_ARP_REACHABLE);
		if (next == 0 || e->next_try < next)
			next = e->next_try;
	}
	st->arp_next_poll = next;
	return n;
}
