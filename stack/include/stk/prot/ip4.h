/* SPDX-License-Identifier: BSD-3-Clause
 * stk/prot/ip4.h — IPv4 header (RFC 791), wire format only. */
#ifndef STK_PROT_IP4_H
#define STK_PROT_IP4_H

#include <stdint.h>

#define STK_IP4_HLEN 20
#define STK_IPPROTO_ICMP 1
#define STK_IPPROTO_TCP 6
#define STK_IPPROTO_UDP 17
#define STK_IP4_DF 0x4000
#define STK_IP4_MF 0x2000
#define STK_IP4_OFFMASK 0x1fff

struct stk_ip4_hdr {
	uint8_t ver_ihl;   /* version 4 << 4 | header length in 32-bit words */
	uint8_t tos;
	uint16_t tot_len;  /* network order, as all multi-byte fields */
	uint16_t id;
	uint16_t frag;     /* flags DF/MF + fragment offset */
	uint8_t ttl;
	uint8_t proto;
	uint16_t csum;
	uint32_t src;
	uint32_t dst;
} __attribute__((packed));

#endif
