/* SPDX-License-Identifier: BSD-3-Clause
 * eth.c — Ethernet output. (Input dispatch is stk_eth_input in stk.c.)
 *
 *   stk_eth_output  fill src MAC and type; dst from the neighbour cache
 *                   (arp.c stk_arp_resolve, which may queue the frame)
 *   stk_tx_frame    hand a finished frame to ops.tx, counting it
 */
#include "stk_priv.h"

void
stk_tx_frame(struct stk *st, struct stk_buf *b, uint8_t *frame, uint32_t len, uint32_t flags)
{
	if (STK_UNLIKELY(st->ops.tx(st->ops.ctx, b, frame, len, flags) < 0)) {
		STK_CTR(st, DROP_TX);
		return;
	}
	STK_CTR(st, TX_FRAMES);
	STK_CTR_ADD(st, TX_BYTES, len);
}

int
stk_eth_output(struct stk *st, struct stk_buf *b, uint8_t *frame, uint32_t len, uint32_t nexthop,
	       uint32_t txflags, unsigned *arp_hint)
{
	struct stk_eth_hdr *eh = (struct stk_eth_hdr *)frame;
	int rc;

	memcpy(eh->src, st->cfg.mac, 6);
	eh->type = htobe16(STK_ETH_P_IP);
	rc = stk_arp_resolve(st, nexthop, b, frame, len, txflags, arp_hint);
	if (rc == 0)
		stk_tx_frame(st, b, frame, len, txflags);
	return rc < 0 ? rc : 0;
}
