/* SPDX-License-Identifier: BSD-3-Clause
 * b8_kernel_client.c — B8 (WebSocket echo RTT, doc/benchmarks.md): the
 * kernel-socket anchor. A WebSocket client on a plain TCP socket (TCP_NODELAY)
 * that does the handshake (libstk's client side: stk_ws_client_request /
 * stk_ws_client_response, which checks Sec-WebSocket-Accept), then, closed
 * loop, one probe outstanding:
 *
 *   t0 = rdtsc; send() one masked text frame (fresh mask key per frame) whose
 *   payload is the B8 probe (ws_rtt_hist.h: sequence number, t0); receive until the
 *   whole echo (an unmasked text frame) is in; t1 = rdtsc; check it is the
 *   probe just sent (sequence number and stamp); RTT = t1 - t0.
 *
 * The same definition as the lcpipe side (plugins/ws_rtt.c): from the moment
 * the application hands the message to its stack to the moment it holds the
 * decoded echo. --warmup probes first, not recorded; then --count recorded.
 *
 * --mode block: blocking recv(); --mode busy: recv(MSG_DONTWAIT) in a loop.
 * Other uses:
 *   --calibrate     print the TSC rate against CLOCK_MONOTONIC_RAW (JSON)
 *   --spin          the noise gate's spin loop: median cycles of 7 runs of a
 *                   fixed dependent multiply-add loop (≈ 1 ms), JSON
 *
 * Output: one JSON line: {"bench":"B8","client":"kernel_block"|"kernel_busy",
 * "rtt":{histogram in cycles (ws_rtt_hist.h)}, "tx_call":{the same for the time from
 * t0 until send() returned}, "errors":..., ...}.
 * Usage: b8_kernel_client --connect A.B.C.D:PORT [--mode block|busy]
 *          [--count N] [--warmup N] [--size BYTES] [--timeout-ms MS]
 * Pin it with taskset; b8.sh does. */
#include <arpa/inet.h>
#include <errno.h>
#include <inttypes.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>
#include <x86intrin.h>

#include <stk/ws.h>

#include "ws_rtt_hist.h" /* plugins/ws_rtt */
#include "bench_opt.h"
#include "kbench.h"

static int
kc_calibrate(void)
{
	printf("{\"bench\":\"B8\",\"tsc_hz\":%.0f}\n", kb_calibrate_hz());
	return 0;
}

/* the noise gate (kbench.h) */
static int
kc_spin(void)
{
	printf("{\"bench\":\"B8\",\"spin_cycles\":%" PRIu64 "}\n", kb_spin_median());
	return 0;
}

/* xorshift64*: the mask keys (RFC 6455 wants them unpredictable to the
 * network path; a seeded PRNG is enough against our own echo server) */
static uint64_t kc_rng;
static uint32_t
kc_rand32(void)
{
	kc_rng ^= kc_rng >> 12;
	kc_rng ^= kc_rng << 25;
	kc_rng ^= kc_rng >> 27;
	return (uint32_t)((kc_rng * 2685821657736338717ull) >> 32);
}

/* recv() on *(int *)ctx, for kb_ws_client_response */
static ssize_t
kc_recv(void *ctx, void *p, size_t n)
{
	return recv(*(const int *)ctx, p, n, 0);
}

int
main(int argc, char **argv)
{
	const char *at = NULL;
	bool busy = false;
	unsigned long count = 10000, warmup = 200, size = 64, timeout_ms = 2000;
	struct sockaddr_in sa = { .sin_family = AF_INET };
	static struct stk_ws_hs hs;
	static struct b8_hist h, txh;
	uint8_t frame[B8_PROBE_MAX + 14], rbuf[65536], raw[16];
	char key[25], req[2048], host[64];
	size_t have = 0, hl, flen;
	uint64_t t_start, errors = 0, eagain = 0;
	int fd, one = 1, n, mode = 0;
	bool calibrate = false, spin = false;
	static const char *const modes[] = { "block", "busy", NULL };
	const struct bench_opt opts[] = {
		BENCH_OPT_STR("connect", &at),
		BENCH_OPT_WORD("mode", &mode, modes),
		BENCH_OPT_ULONG("count", &count),
		BENCH_OPT_ULONG("warmup", &warmup),
		BENCH_OPT_ULONG("size", &size),
		BENCH_OPT_ULONG("timeout-ms", &timeout_ms),
		BENCH_OPT_FLAG("calibrate", &calibrate),
		BENCH_OPT_FLAG("spin", &spin),
		BENCH_OPT_END,
	};

	if (bench_opt_parse(argc, argv, opts, "b8_kernel_client",
			    "--connect A.B.C.D:PORT [--mode block|busy] [--count N] [--warmup N] "
			    "[--size BYTES] [--timeout-ms MS] | --calibrate | --spin") < 0)
		return 2;
	if (calibrate)
		return kc_calibrate();
	if (spin)
		return kc_spin();
	busy = mode == 1;
	if (at == NULL || size < B8_PROBE_MIN || size > B8_PROBE_MAX || count == 0) {
		fprintf(stderr, "b8_kernel_client: --connect is required; --size %u..%u; --count > 0\n",
			B8_PROBE_MIN, B8_PROBE_MAX);
		return 2;
	}
	if (kb_parse_addr("b8_kernel_client", "--connect", at, &sa, host, sizeof(host)) < 0)
		return 2;
	if (getrandom(raw, sizeof(raw), 0) != (ssize_t)sizeof(raw) ||
	    getrandom(&kc_rng, sizeof(kc_rng), 0) != (ssize_t)sizeof(kc_rng))
		kc_rng = __rdtsc();
	kc_rng |= 1;

	fd = socket(AF_INET, SOCK_STREAM, 0);
	if (fd < 0 || connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		perror("b8_kernel_client: connect");
		return 1;
	}
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	kb_rcvtimeo(fd, timeout_ms); /* a blocking recv() that waits this long fails the run */

	/* handshake (blocking in both modes) */
	stk_ws_key(raw, key);
	n = stk_ws_client_request(&hs, req, sizeof(req), at, "/b8", key, NULL, NULL);
	if (n < 0 || kb_send_all(fd, req, (size_t)n) < 0) {
		perror("b8_kernel_client: upgrade request");
		return 1;
	}
	if (kb_ws_client_response("b8_kernel_client", &hs, kc_recv, &fd, rbuf, sizeof(rbuf), &have) < 0)
		return 1;
	if (have != 0) {
		fprintf(stderr, "b8_kernel_client: unexpected bytes after the 101 response\n");
		return 1;
	}

	/* probes */
	hl = stk_ws_hdr(frame, STK_WS_OP_TEXT, true, size, (const uint8_t *)"\0\0\0\0");
	flen = hl + size;
	b8_hist_reset(&h);
	b8_hist_reset(&txh);
	t_start = kb_now_ns();
	for (unsigned long i = 0; i < warmup + count; i++) {
		uint32_t mk = kc_rand32();
		uint8_t *mask = frame + hl - 4, *pl = frame + hl;
		size_t want = 2 + size; /* the echo: 0x81, len, payload */
		uint64_t t0, t_sent, t1, seq, stamp;
		uint64_t deadline;

		memcpy(mask, &mk, 4);
		t0 = __rdtsc();
		b8_probe_fill(pl, (unsigned)size, i, t0);
		stk_ws_mask(pl, size, mask, 0);
		if (kb_send_all(fd, frame, flen) < 0) {
			perror("b8_kernel_client: send");
			return 1;
		}
		t_sent = __rdtsc();
		deadline = 0;
		while (have < want) {
			ssize_t k = recv(fd, rbuf + have, sizeof(rbuf) - have, busy ? MSG_DONTWAIT : 0);

			if (k > 0) {
				have += (size_t)k;
				continue;
			}
			if (k == 0) {
				fprintf(stderr, "b8_kernel_client: the server closed the connection at probe %lu\n", i);
				return 1;
			}
			if (errno == EINTR)
				continue;
			if ((errno == EAGAIN || errno == EWOULDBLOCK) && !busy) {
				fprintf(stderr, "b8_kernel_client: no echo for probe %lu within %lu ms\n", i, timeout_ms);
				return 1;
			}
			if (errno == EAGAIN || errno == EWOULDBLOCK) {
				eagain++;
				if ((eagain & 0xfff) == 0) {
					uint64_t now = kb_now_ns();

					if (deadline == 0)
						deadline = now + timeout_ms * 1000000ull;
					else if (now > deadline) {
						fprintf(stderr, "b8_kernel_client: no echo for probe %lu within %lu ms\n", i,
							timeout_ms);
						return 1;
					}
				}
				continue;
			}
			perror("b8_kernel_client: recv");
			return 1;
		}
		t1 = __rdtsc();
		if (rbuf[0] != 0x81 || rbuf[1] != size || b8_probe_parse(rbuf + 2, size, &seq, &stamp) < 0 ||
		    seq != i || stamp != t0) {
			errors++;
			fprintf(stderr, "b8_kernel_client: probe %lu: the echo is not the probe sent\n", i);
			return 1;
		}
		have -= want;
		if (have > 0)
			memmove(rbuf, rbuf + want, have);
		if (i >= warmup) {
			b8_hist_add(&h, t1 - t0);
			b8_hist_add(&txh, t_sent - t0);
		}
	}
	{
		uint64_t ns = kb_now_ns() - t_start;
		uint8_t cl[8];
		size_t ch = stk_ws_hdr(cl, STK_WS_OP_CLOSE, true, 2, (const uint8_t *)"\0\0\0\0");

		cl[ch] = 1000 >> 8;
		cl[ch + 1] = 1000 & 0xff;
		(void)kb_send_all(fd, cl, ch + 2);
		close(fd);
		printf("{\"bench\":\"B8\",\"client\":\"kernel_%s\",\"size\":%lu,\"warmup\":%lu,\"errors\":%" PRIu64
		       ",\"empty_polls\":%" PRIu64 ",\"wall_ns\":%" PRIu64 ",\"rtt\":{",
		       busy ? "busy" : "block", size, warmup, errors, eagain, ns);
		b8_hist_json(stdout, &h);
		printf("},\"tx_call\":{");
		b8_hist_json(stdout, &txh);
		printf("}}\n");
	}
	return 0;
}
