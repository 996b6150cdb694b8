/* SPDX-License-Identifier: BSD-3-Clause
 * tcp_in_priv.h — what the files of TCP input share (stack-internal, never
 * installed): the segment being processed and the steps of RFC 9293 3.10.7
 * that tcp_in.c calls in the other files, each at most once per segment.
 *
 *   tcp_in.c       header checks, 4-tuple lookup, 3.10.7.4 in order (PAWS,
 *                  acceptability, RST, SYN, text, FIN), the answering ACK
 *   tcp_in_ooo.c   the text step's out-of-order queue (insertion; the
 *                  drain is inline below)
 *   tcp_in_open.c  3.10.7.2 LISTEN (passive open, SYN cookies), 3.10.7.3
 *                  SYN-SENT
 *   tcp_in_ack.c   3.10.7.4 fifth: the ACK field, header prediction first */
#ifndef STK_TCP_IN_PRIV_H
#define STK_TCP_IN_PRIV_H

#include "stk_priv.h"

/* a segment being processed; fields in host order */
struct stk_tcp_seg {
	struct stk_buf *b; /* NULL once passed on (delivered or queued) */
	uint8_t *payload;
	uint32_t seq, ack, plen, seglen;
	uint32_t win; /* raw, unscaled */
	uint8_t flags;
	struct stk_tcp_opts o;
};

/* tcp_in.c */
void stk_tcp_challenge_ack(struct stk *st, struct stk_tcb *c);

/* tcp_in_open.c */
void stk_tcp_passive_open(struct stk *st, struct stk_listener *l, const struct stk_ip4_hdr *ip,
			  const struct stk_tcp_hdr *th, struct stk_tcp_seg *s);
struct stk_tcb *stk_tcp_cookie_open(struct stk *st, struct stk_listener *l,
				    const struct stk_ip4_hdr *ip, const struct stk_tcp_hdr *th,
				    struct stk_tcp_seg *s);
void stk_tcp_syn_sent(struct stk *st, struct stk_tcb *c, struct stk_tcp_seg *s);
void stk_tcp_established_entered(struct stk *st, struct stk_tcb *c);

/* tcp_in_ack.c: false when the segment is to be dropped (a bad ACK, or the
 * connection went away inside an event) */
bool stk_tcp_process_ack(struct stk *st, struct stk_tcb *c, struct stk_tcp_seg *s);
/* tcp_in_ack.c: into TIME_WAIT, from CLOSING (our FIN acked) or FIN_WAIT_2
 * (their FIN): CLOSED to the application once, timer t no longer needed */
void stk_tcp_time_wait(struct stk *st, struct stk_tcb *c, unsigned t);

/* tcp_in_ooo.c: the text step's out-of-order queue; insert takes s->b (held
 * or freed) and leaves s as it was */
void stk_tcp_ooo_insert(struct stk *st, struct stk_tcb *c, const struct stk_tcp_seg *s, bool fin);

/* Inline here, for both files: the text step calls them per duplicate and per
 * segment it drains from the queue. */

/* a duplicate [s, e) arrived: the next ACK reports it first (RFC 2883) */
static inline void
stk_tcp_dsack_note(struct stk_tcb *c, uint32_t s, uint32_t e)
{
	if (!c->sack_ok || !SEQ_LT(s, e))
		return;
	c->dsack = true;
	c->dsack_s = s;
	c->dsack_e = e;
}

static inline void
stk_tcp_oblk_remove(struct stk_tcb *c, unsigned i)
{
	memmove(&c->oblk[i], &c->oblk[i + 1], (c->n_oblk - i - 1) * sizeof(c->oblk[0]));
	c->n_oblk--;
}

/* unlink the queue's first segment (the first block's head) */
static inline struct stk_seg_node *
stk_tcp_ooo_pop(struct stk_tcb *c)
{
	struct stk_seg_node *n = c->ooo;

	c->ooo = n->next;
	if (c->oblk[0].tail == n) {
		stk_tcp_oblk_remove(c, 0);
	} else {
		c->oblk[0].head = n->next;
		c->oblk[0].seq = n->next->seq;
	}
	return n;
}

#endif
