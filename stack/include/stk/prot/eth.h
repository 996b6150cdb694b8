/* SPDX-License-Identifier: BSD-3-Clause
 * stk/prot/eth.h — Ethernet II header (wire format only). */
#ifndef STK_PROT_ETH_H
#define STK_PROT_ETH_H

#include <stdint.h>

#define STK_ETH_ALEN 6
#define STK_ETH_HLEN 14
#define STK_ETH_P_IP 0x0800
#define STK_ETH_P_ARP 0x0806
#define STK_ETH_P_VLAN 0x8100

struct stk_eth_hdr {
	uint8_t dst[STK_ETH_ALEN];
	uint8_t src[STK_ETH_ALEN];
	uint16_t type; /* network order */
} __attribute__((packed));

#endif
