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

static inline void
lcp_msg_free(struct lcp_msg *m)
{
	m->release(m);
}

#ifdef __cplusplus
}
#endif
#endif
