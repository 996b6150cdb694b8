/* SPDX-License-Identifier: BSD-3-Clause
 * ip4.c — IPv4 (RFC 791) for one interface.
 *
 *   stk_ip4_input   validate (version, IHL, total length vs frame, checksum,
 *                   TTL, destination, fragments) -> icmp.c | tcp_in.c
 *   stk_ip4_fill    header for our datagrams (DF set, no options)
 *   stk_ip4_nexthop on-link destination or the gateway (0: no route)
 *   stk_ip4_pseudo  TCP pseudo-header sum
 *
 * Fragments are counted (drop_ip_fragment) and dropped: the peers we serve
 * (TCP with MSS negotiation, DF set both ways) do not fragment. Options in
 * received headers are skipped; we never send any. */
#include "stk_priv.h"

_Static_assert(__BYTE_ORDER == __LITTLE_ENDIAN, "stk_csum_partial assumes a little-endian host");

uint32_t
stk_ip4_nexthop(const struct stk *st, uint32_t dst)
{
	if ((dst & st->netmask) == (st->cfg.ip & st->netmask))
		return dst;
	return st->cfg.gateway;
}

uint32_t
stk_ip4_pseudo(uint32_t src, uint32_t dst, uint8_t proto, uint32_t l4len)
{
	uint64_t s = (uint64_t)(src & 0xffff) + (src >> 16) + (dst & 0xffff) + (dst >> 16) +
		     htobe16((uint16_t)proto) + htobe16((uint16_t)l4len);

	s = (s & 0xffffffffu) + (s >> 32);
	return (uint32_t)s;
}

void
stk_ip4_fill(struct stk *st, struct stk_ip4_hdr *ip, uint32_t dst, uint8_t proto, uint32_t l4len,
	     bool csum_offload)
{
	ip->ver_ihl = 0x45;
	ip->tos = 0;
	ip->tot_len = htobe16((uint16_t)(STK_IP4_HLEN + l4len));
	ip->id = htobe16(st->ip_id++);
	ip->frag = htobe16(STK_IP4_DF);
	ip->ttl = 64;
	ip->proto = proto;
	ip->csum = 0;
	ip->src = st->cfg.ip;
	ip->dst = dst;
	if (!csum_offload)
		ip->csum = stk_csum_fold(stk_csum_partial(ip, STK_IP4_HLEN, 0));
}

void
stk_ip4_input(struct stk *st, struct stk_buf *b, uint8_t *frame, uint32_t len, uint32_t flags)
{
	struct stk_ip4_hdr *ip = (struct stk_ip4_hdr *)(frame + STK_ETH_HLEN);
	uint32_t ihl, tot, l3 = len - STK_ETH_HLEN;

	STK_CTR(st, IP_RX);
	if (STK_UNLIKELY(l3 < STK_IP4_HLEN)) {
		STK_CTR(st, DROP_IP_SHORT);
		goto drop;
	}
	if (STK_UNLIKELY((ip->ver_ihl >> 4) != 4)) {
		STK_CTR(st, DROP_IP_VERSION);
		goto drop;
	}
	ihl = (ip->ver_ihl & 0xfu) * 4;
	if (STK_UNLIKELY(ihl < STK_IP4_HLEN || ihl > l3)) {
		STK_CTR(st, DROP_IP_HDR_LEN);
		goto drop;
	}
	tot = be16toh(ip->tot_len);
	if (STK_UNLIKELY(tot < ihl || tot > l3)) {
		STK_CTR(st, DROP_IP_TOTAL_LEN);
		goto drop;
	}
	/* tot < l3: Ethernet padding (frames under 60 bytes), ignored from here */
	if (!(flags & STK_RX_IP_CSUM_OK) && STK_UNLIKELY(stk_csum_fold(stk_csum_partial(ip, ihl, 0)) != 0)) {
		STK_CTR(st, DROP_IP_CSUM);
		goto drop;
	}
	if (STK_UNLIKELY(ip->ttl == 0)) {
		STK_CTR(st, DROP_IP_TTL);
		goto drop;
	}
	if (STK_UNLIKELY(ip->dst != st->cfg.ip)) {
		STK_CTR(st, DROP_IP_NOT_OURS);
		goto drop;
	}
	if (STK_UNLIKELY(be16toh(ip->frag) & (STK_IP4_MF | STK_IP4_OFFMASK))) {
		STK_CTR(st, DROP_IP_FRAGMENT);
		goto drop;
	}
	if (STK_LIKELY(ip->proto == STK_IPPROTO_TCP)) {
		stk_tcp_input(st, b, frame, ip, (uint8_t *)ip + ihl, tot - ihl, flags);
		return;
	}
	if (ip->proto == STK_IPPROTO_ICMP) {
		stk_icmp_input(st, b, frame, len, STK_ETH_HLEN, STK_ETH_HLEN + ihl, tot - ihl, flags);
		return;
	}
	STK_CTR(st, DROP_IP_PROTO);
drop:
	stk_buf_free(st, b);
}
