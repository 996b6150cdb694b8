/* SPDX-License-Identifier: BSD-3-Clause
 * lcp/msg.h — the `msg` unit: one application message (e.g. a WebSocket message).
 * The producer owns the memory behind it and says how to give it back through
 * release(); whoever holds the last reference calls lcp_msg_free(). */
#ifndef LCP_MSG_H
#define LCP_MSG_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

struct lcp_msg;

/* flags */
#define LCP_MSG_F_SESSION_START 0x0001u /* first message of its conn_id since the
					 * connection (re)opened: per-connection
					 * state such as sequence numbers starts over */
#define LCP_MSG_F_LOSS 0x0002u          /* ABI 1.7: the producer dropped messages of this
					 * conn_id before this one (`lost` says how
					 * many): a consumer's view (an order book) is
					 * incomplete from here */
#define LCP_MSG_F_BULK 0x0004u          /* ABI 1.9: owner points to a struct
					 * lcp_msg_owner; lcp_msgs_free() hands the
					 * owner runs of its messages at once */

typedef void (*lcp_msg_release_t)(struct lcp_msg *m);

struct lcp_msg {
	uint64_t conn_id;   /* producer-defined connection id */
	uint64_t rx_tsc;    /* TSC of the frame that completed the message */
	const uint8_t *data; /* payload */
	uint32_t len;       /* payload length in bytes */
	uint16_t opcode;    /* producer-defined, e.g. WebSocket opcode */
	uint16_t flags;
	lcp_msg_release_t release; /* frees the message and what backs it */
	void *owner;        /* for release() */
	void *backing[2];   /* for release(): the buffers behind data */
	uint32_t lost;      /* ABI 1.7, with LCP_MSG_F_LOSS only: messages of this conn_id
			     * dropped since the one before (a producer built before
			     * 1.7 never sets the flag; do not read it without) */
};

/* ABI 1.9: what a producer that sets LCP_MSG_F_BULK points owner at. */
struct lcp_msg_owner {
	/* free n messages, all of this owner, as n release() calls would:
	 * one reference count update per buffer they share, one pool put */
	void (*release_bulk)(struct lcp_msg *const *m, unsigned n);
};

static inline void
lcp_msg_free(struct lcp_msg *m)
{
	m->release(m);
}

/* ABI 1.9: free n messages. Consecutive messages of one owner that sets
 * LCP_MSG_F_BULK go to its release_bulk() together (a burst of ticks cut from
 * one segment costs one reference update, not one per tick); the others
 * release() one by one. Consumers free a burst with this (lcp_objs_free()
 * does). */
static inline void
lcp_msgs_free(struct lcp_msg *const *m, unsigned n)
{
	unsigned i = 0;

	while (i < n) {
		struct lcp_msg *a = m[i];
		unsigned j = i + 1;

		if (a->flags & LCP_MSG_F_BULK) {
			while (j < n && m[j]->owner == a->owner && (m[j]->flags & LCP_MSG_F_BULK))
				j++;
			((const struct lcp_msg_owner *)a->owner)->release_bulk(m + i, j - i);
		} else {
			a->release(a);
		}
		i = j;
	}
}

#ifdef __cplusplus
}
#endif
#endif
