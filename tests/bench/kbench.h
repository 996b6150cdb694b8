/* SPDX-License-Identifier: BSD-3-Clause
 * kbench.h — helpers shared by the kernel-socket benchmark programs (B8's
 * b8_kernel_client and b8_echo_server, B12's b12_kernel_client and
 * b12_feed_server): clocks, TSC calibration, the spin-loop noise gate, a
 * send loop, their socket set-up (addresses, listening, timeouts, the
 * files the scripts wait for), the clients' side of the handshake and the
 * length of a frame. Header only: these programs link nothing of
 * lcpipe but libstk (and include plugins/common/ip4_port.h, header only). */
#ifndef LCP_KBENCH_H
#define LCP_KBENCH_H

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>
#include <x86intrin.h>

#include "ip4_port.h"

static inline uint64_t
kb_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC_RAW, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static inline uint64_t
kb_tv_us(struct timeval tv)
{
	return (uint64_t)tv.tv_sec * 1000000ull + (uint64_t)tv.tv_usec;
}

/* TSC ticks per second against CLOCK_MONOTONIC_RAW (the last of three 100 ms
 * windows) */
static inline double
kb_calibrate_hz(void)
{
	double best = 0;

	for (int r = 0; r < 3; r++) {
		uint64_t n0 = kb_now_ns(), t0 = __rdtsc(), n1, t1;

		do
			n1 = kb_now_ns();
		while (n1 - n0 < 100000000ull);
		t1 = __rdtsc();
		best = (double)(t1 - t0) * 1e9 / (double)(n1 - n0);
	}
	return best;
}

/* the noise gate: a dependent multiply-add chain, 7 runs; the median in cycles */
static inline uint64_t
kb_spin_median(void)
{
	uint64_t t[7];
	volatile uint64_t sink;

	for (int r = 0; r < 7; r++) {
		uint64_t x = 88172645463325252ull, t0 = __rdtsc();

		for (unsigned i = 0; i < 400000; i++)
			x = x * 6364136223846793005ull + 1442695040888963407ull;
		t[r] = __rdtsc() - t0;
		sink = x;
	}
	(void)sink;
	for (int i = 1; i < 7; i++)
		for (int j = i; j > 0 && t[j - 1] > t[j]; j--) {
			uint64_t s = t[j];

			t[j] = t[j - 1];
			t[j - 1] = s;
		}
	return t[3];
}

/* send all n bytes; a non-blocking socket whose buffer is full is retried
 * (spinning: the busy-polling modes want exactly that) */
static inline int
kb_send_all(int fd, const void *p, size_t n)
{
	const uint8_t *b = p;

	while (n > 0) {
		ssize_t k = send(fd, b, n, MSG_NOSIGNAL);

		if (k < 0) {
			if (errno == EINTR || errno == EAGAIN || errno == EWOULDBLOCK)
				continue;
			return -1;
		}
		b += k;
		n -= (size_t)k;
	}
	return 0;
}

/* "A.B.C.D:PORT" (the value of option opt; plugins/common/ip4_port.h, the
 * parser of the tcp stages' connect options) -> sa, the address part into
 * host[hostlen]; -1 after saying what is wrong on stderr as prog */
static inline int
kb_parse_addr(const char *prog, const char *opt, const char *at, struct sockaddr_in *sa, char *host,
	      size_t hostlen)
{
	uint32_t ip;
	uint16_t port;

	if (ip4_port_parse(at, &ip, &port) < 0 || hostlen < INET_ADDRSTRLEN) {
		fprintf(stderr, "%s: bad %s %s: expected A.B.C.D:PORT\n", prog, opt, at);
		return -1;
	}
	memset(sa, 0, sizeof(*sa));
	sa->sin_family = AF_INET;
	sa->sin_addr.s_addr = ip;
	sa->sin_port = htons(port);
	inet_ntop(AF_INET, &sa->sin_addr, host, (socklen_t)hostlen);
	return 0;
}

/* a TCP socket listening on sa (SO_REUSEADDR); -1 after perror as prog */
static inline int
kb_listen(const char *prog, const struct sockaddr_in *sa, int backlog)
{
	int fd = socket(AF_INET, SOCK_STREAM, 0), one = 1;

	if (fd < 0) {
		fprintf(stderr, "%s: socket: %s\n", prog, strerror(errno));
		return -1;
	}
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (bind(fd, (const struct sockaddr *)sa, sizeof(*sa)) < 0 || listen(fd, backlog) < 0) {
		fprintf(stderr, "%s: bind/listen: %s\n", prog, strerror(errno));
		close(fd);
		return -1;
	}
	return fd;
}

/* a blocking recv() on fd that waits ms milliseconds fails (EAGAIN) */
static inline void
kb_rcvtimeo(int fd, unsigned long ms)
{
	struct timeval tv = { .tv_sec = (time_t)(ms / 1000), .tv_usec = (suseconds_t)(ms % 1000) * 1000 };

	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
}

/* The WebSocket frame header at f, n >= 2 bytes of the frame here: the
 * payload length into *len, the header's length up to its mask key (2, 4 or
 * 10 bytes; a masked frame's key is the 4 bytes after) into *h. 0 while the
 * extended length is not all here. */
static inline __attribute__((always_inline)) int
kb_ws_len(const uint8_t *f, size_t n, uint64_t *len, size_t *h)
{
	*len = f[1] & 0x7f;
	*h = 2;
	if (*len == 126) {
		if (n < 4)
			return 0;
		*len = ((uint64_t)f[2] << 8) | f[3];
		*h = 4;
	} else if (*len == 127) {
		if (n < 10)
			return 0;
		*len = 0;
		for (int i = 0; i < 8; i++)
			*len = (*len << 8) | f[2 + i];
		*h = 10;
	}
	return 1;
}

/* The client's side of the WebSocket handshake once its request is sent (the
 * including program has <stk/ws.h>): reads with rx(ctx, ...) into buf[bufsz]
 * until stk_ws_client_response() takes a 101; the bytes behind it (the first
 * frames) moved to buf's start, their count in *have. -1 after saying why on
 * stderr as prog. */
static inline int
kb_ws_client_response(const char *prog, struct stk_ws_hs *hs,
		      ssize_t (*rx)(void *ctx, void *p, size_t n), void *ctx, uint8_t *buf,
		      size_t bufsz, size_t *have)
{
	for (;;) {
		ssize_t k = rx(ctx, buf, bufsz);
		size_t used = 0;
		int rc;

		if (k <= 0) {
			fprintf(stderr, "%s: connection closed during the handshake\n", prog);
			return -1;
		}
		rc = stk_ws_client_response(hs, buf, (size_t)k, &used);
		if (rc < 0) {
			fprintf(stderr, "%s: handshake failed: %s\n", prog, hs->err);
			return -1;
		}
		if (rc == 1) {
			*have = (size_t)k - used;
			memmove(buf, buf + used, *have);
			return 0;
		}
	}
}

/* create an empty file at path (NULL: none), for a script waiting on it */
static inline void
kb_touch(const char *path)
{
	FILE *f = path != NULL ? fopen(path, "w") : NULL;

	if (f != NULL)
		fclose(f);
}

#endif
