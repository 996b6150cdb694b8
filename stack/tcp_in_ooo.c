/* SPDX-License-Identifier: BSD-3-Clause
 * tcp_in_ooo.c — the out-of-order queue of RFC 9293 3.10.7.4's text step:
 * segments that arrive beyond RCV.NXT are held until the hole before them is
 * filled, and the blocks they form are what our SACK option reports (RFC 2018,
 * duplicates first per RFC 2883).
 *
 * The queue is a list of segments in sequence order (stk_seg_node) beside a
 * sorted array of the blocks of adjacent data they form (stk_ooo_blk), the
 * most recently changed first in sack_hist. Insertion is here;
 * tcp_in.c drains the queue from its front with stk_tcp_ooo_pop()
 * (tcp_in_priv.h, inline) as in-order data reaches it. */
#include "tcp_in_priv.h"

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

/* Insert into the out-of-order queue: bisection finds the block the segment
 * starts in or the gap before one; its front is trimmed against that block
 * (what it repeats is D-SACKed), its tail against the next block; it then
 * extends a block, joins two, or starts one. A segment reaching past the
 * next block keeps only what fits the gap (the peer resends the rest). */
void
stk_tcp_ooo_insert(struct stk *st, struct stk_tcb *c, const struct stk_tcp_seg *s, bool fin)
{
	uint32_t seq = s->seq, len = s->plen;
	uint8_t *data = s->payload;
	unsigned i = stk_oblk_find(c->oblk, c->n_oblk, seq), nx;
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
			stk_tcp_dsack_note(c, seq, seq + len);
			stk_buf_free(st, s->b);
			return;
		}
		if (d > len)
			d = len;
		stk_tcp_dsack_note(c, seq, seq + d);
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
				stk_tcp_dsack_note(c, c->oblk[nx].seq, e);
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
			stk_tcp_oblk_remove(c, (unsigned)app + 1);
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
