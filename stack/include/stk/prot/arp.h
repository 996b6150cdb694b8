/* SPDX-License-Identifier: BSD-3-Clause
 * stk/prot/arp.h — ARP for IPv4 over Ethernet (RFC 826), wire format only. */
#ifndef STK_PROT_ARP_H
#define STK_PROT_ARP_H

#include <stdint.h>

#define STK_ARP_HRD_ETHER 1
#define STK_ARP_OP_REQUEST 1
#define STK_ARP_OP_REPLY 2

struct stk_arp_hdr {
	uint16_t hrd;    /* 1 */
	uint16_t pro;    /* 0x0800 */
	uint8_t hln;     /* 6 */
	uint8_t pln;     /* 4 */
	uint16_t op;
	uint8_t sha[6];
	uint32_t spa;    /* network order; unaligned in frames: access with memcpy */
	uint8_t tha[6];
	uint32_t tpa;
} __attribute__((packed));

#endif
