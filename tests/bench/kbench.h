/* SPDX-License-Identifier: BSD-3-Clause
 * kbench.h — helpers shared by the kernel-socket benchmark programs (B8's
 * b8_kernel_client and b8_echo_server, B12's b12_kernel_client and
 * b12_feed_server): clocks, TSC calibration, the spin-loop noise gate, and a
 * send loop. Header only: these programs link nothing of lcpipe but libstk. */
#ifndef LCP_KBENCH_H
#define LCP_KBENCH_H

#include <errno.h>
#include <stdint.h>
#include <time.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <x86intrin.h>

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

#endif
