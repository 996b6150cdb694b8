/* SPDX-License-Identifier: BSD-3-Clause
 * ip4_port.h — "A.B.C.D:port", the form of the tcp and tcp_app stages' connect
 * options, into an IPv4 address and a port. Header only.
 */
#ifndef LCP_IP4_PORT_H
#define LCP_IP4_PORT_H

#include <arpa/inet.h>
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* *ip in network order, *port 1..65535: 0, or -EINVAL with nothing written
 * (no colon, not a dotted quad, a port that is empty, 0, above 65535 or followed
 * by anything) */
static inline int
ip4_port_parse(const char *s, uint32_t *ip, uint16_t *port)
{
	char host[INET_ADDRSTRLEN];
	const char *colon = strrchr(s, ':');
	struct in_addr a;
	unsigned long p;
	char *end;

	if (colon == NULL || (size_t)(colon - s) >= sizeof(host))
		return -EINVAL;
	memcpy(host, s, (size_t)(colon - s));
	host[colon - s] = '\0';
	if (inet_pton(AF_INET, host, &a) != 1)
		return -EINVAL;
	errno = 0;
	p = strtoul(colon + 1, &end, 10);
	if (errno != 0 || end == colon + 1 || *end != '\0' || p == 0 || p > UINT16_MAX)
		return -EINVAL;
	*ip = a.s_addr;
	*port = (uint16_t)p;
	return 0;
}

#endif
