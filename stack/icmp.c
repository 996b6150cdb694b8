/* SPDX-License-Identifier: BSD-3-Clause
 * icmp.c — ICMP echo (RFC 792): a request to our address is answered in place
 * (same buffer, addresses swapped, type 0, checksums updated), so `ping` from
 * a peer works. "Fragmentation needed" (RFC 1191) about a TCP segment of ours
 * lowers that connection's MSS (stk_tcp_frag_needed). Other types are counted
 * and dropped. */
#include "stk_priv.h"

void
stk_icmp_input(struct stk *st, struct stk_buf *b, uint8_t *frame, uint32_t len, uint32_t l3off,
	       uint32_t l4off, uint32_t l4len, uint32_t flags)
{
	struct stk_eth_hdr *eh = (struct stk_eth_hdr *)frame;
	struct stk_ip4_hdr *ip = (struct stk_ip4_hdr *)(frame + l3off);
	struct stk_icmp_hdr *ic = (struct stk_icmp_hdr *)(frame + l4off);
	uint32_t tot = l4off + l4len, src;
	unsigned hint = ~0u;

	(void)len;
	if (l4len < sizeof(*ic) ||
	    (!(flags & STK_RX_L4_CSUM_OK) && stk_csum_fold(stk_csum_partial(ic, l4len, 0)) != 0)) {
		STK_CTR(st, DROP_ICMP_BAD);
		goto drop;
	}
	if (ic->type == STK_ICMP_UNREACH && ic->code == STK_ICMP_FRAG_NEEDED) {
		/* the quoted datagram: its IPv4 header and 8 bytes of its TCP header */
		const uint8_t *q = (const uint8_t *)ic + sizeof(*ic);
		uint32_t qlen = l4len - (uint32_t)sizeof(*ic), ihl = qlen > 0 ? (q[0] & 0xfu) * 4u : 0;
		const struct stk_ip4_hdr *qip = (const struct stk_ip4_hdr *)q;

		STK_CTR(st, ICMP_FRAG_NEEDED);
		if (ihl < STK_IP4_HLEN || qlen < ihl + 8 || qip->proto != STK_IPPROTO_TCP || qip->src != st->cfg.ip ||
		    stk_tcp_frag_needed(st, qip->dst, stk_get16(q + ihl + 2), stk_get16(q + ihl), stk_get32(q + ihl + 4),
					stk_get16(&ic->seq)) < 0)
			STK_CTR(st, DROP_ICMP_UNMATCHED);
		goto drop;
	}
	if (ic->type != STK_ICMP_ECHO || ic->code != 0) {
		STK_CTR(st, DROP_ICMP_TYPE);
		goto drop;
	}
	STK_CTR(st, ICMP_ECHO_RX);
	src = ip->src;
	if (stk_ip4_nexthop(st, src) == 0) {
		STK_CTR(st, DROP_NO_ROUTE);
		goto drop;
	}
	ic->type = STK_ICMP_ECHOREPLY;
	ic->csum = 0;
	ic->csum = stk_csum_fold(stk_csum_partial(ic, l4len, 0));
	/* the reply: a fresh header without options in front of the ICMP message */
	if (l4off - l3off != STK_IP4_HLEN) {
		memmove(frame + l3off + STK_IP4_HLEN, ic, l4len);
		tot = l3off + STK_IP4_HLEN + l4len;
	}
	stk_ip4_fill(st, ip, src, STK_IPPROTO_ICMP, l4len, false);
	memcpy(eh->dst, eh->src, 6);
	STK_CTR(st, ICMP_ECHO_TX);
	/* route back through the neighbour cache: the requester's MAC if on-link,
	 * the gateway's otherwise (never trust the frame's source for routing) */
	stk_eth_output(st, b, frame, tot, stk_ip4_nexthop(st, src), 0, &hint);
	return;
drop:
	stk_buf_free(st, b);
}
