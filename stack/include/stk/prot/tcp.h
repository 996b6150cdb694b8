/* SPDX-License-Identifier: BSD-3-Clause
 * stk/prot/tcp.h — TCP header and option kinds (RFC 9293, 7323, 2018), wire format. */
#ifndef STK_PROT_TCP_H
#define STK_PROT_TCP_H

#include <stdint.h>

#define STK_TCP_HLEN 20
#define STK_TCP_FIN 0x01
#define STK_TCP_SYN 0x02
#define STK_TCP_RST 0x04
#define STK_TCP_PSH 0x08
#define STK_TCP_ACK 0x10
#define STK_TCP_URG 0x20

#define STK_TCPOPT_EOL 0
#define STK_TCPOPT_NOP 1
#define STK_TCPOPT_MSS 2       /* len 4 */
#define STK_TCPOPT_WSCALE 3    /* len 3 */
#define STK_TCPOPT_SACK_PERM 4 /* len 2 */
#define STK_TCPOPT_SACK 5      /* len 2 + 8n */
#define STK_TCPOPT_TS 8        /* len 10 */

struct stk_tcp_hdr {
	uint16_t sport;
	uint16_t dport;
	uint32_t seq;
	uint32_t ack;
	uint8_t off;   /* data offset in 32-bit words << 4 */
	uint8_t flags;
	uint16_t win;
	uint16_t csum;
	uint16_t urp;
} __attribute__((packed));

#endif
