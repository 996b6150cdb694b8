/* SPDX-License-Identifier: BSD-3-Clause
 * stk/prot/icmp.h — ICMP header (RFC 792), wire format only. */
#ifndef STK_PROT_ICMP_H
#define STK_PROT_ICMP_H

#include <stdint.h>

#define STK_ICMP_ECHOREPLY 0
#define STK_ICMP_ECHO 8
#define STK_ICMP_UNREACH 3
#define STK_ICMP_FRAG_NEEDED 4 /* code of UNREACH: DF set, the next hop's MTU in bytes 6-7 (RFC 1191) */

struct stk_icmp_hdr {
	uint8_t type;
	uint8_t code;
	uint16_t csum;
	uint16_t id;
	uint16_t seq;
} __attribute__((packed));

#endif
