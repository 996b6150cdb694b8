/* SPDX-License-Identifier: BSD-3-Clause
 * b12_feed_server.c — B12 (whole pipeline, doc/benchmarks.md): the feed. A
 * WebSocket server on kernel sockets that streams exchange ticks as fast as
 * the socket takes them, to one client: the kernel-socket anchor
 * (b12_kernel_client) or lcpipe (port_ethdev, tcp, ws, metrics, sink_null).
 * Every B12 receiver gets the very same byte stream from the same program.
 *
 * One connection (accept with a timeout), the server side of the RFC 6455
 * handshake (libstk: stk_ws_server_request / stk_ws_server_response, SHA-1 and
 * base64 from libcrypto), then it waits for the client's first data frame (the
 * subscription; its content is not looked at) and streams --count messages:
 * unmasked binary (or --opcode text) frames of exactly --size payload bytes,
 * each a JSON tick of the shape feedsim sends,
 *
 *   {"s":"SYM00042","n":17,"p":"101.25","q":300,"x":"aaaa…"}
 *
 * symbol `s` (--symbols of them, round robin), `n` the symbol's sequence
 * number (1, 2, …), `x` padding to the size (when `n` gains a digit, the
 * frame's tail moves right by one byte and `x` loses one).
 *
 * Sending: one buffer of pre-built frames holding a whole number of symbol
 * rounds, at least --buf bytes (default 64 KiB; 900 frames at 64 B with 100
 * symbols), goes out with one blocking send() (looped over partial sends);
 * then every frame's `n` is advanced by the rounds in the buffer (a decimal
 * add in place, a few cycles per frame) and the buffer goes again. The last
 * pass sends only the frames still due. Then a close frame (1000), and the
 * server reads until the client's close frame (or EOF): the time from the
 * first send to that close is the transfer time (wall_ns); the client's close
 * follows its last message on the same stream, so every message is in by then.
 *
 * Reported (one JSON line on stdout): messages, payload and frame bytes, wall
 * time, getrusage(RUSAGE_SELF) user and system time over the same window (the
 * kernel's receive work for a veth peer — its TCP, or af_packet's copy into
 * the ring — runs in softirq inside this process's send() and is charged
 * here), context switches, and TCP_INFO (data segments sent, retransmissions,
 * MSS). Pin it with taskset; b12.sh does.
 *
 * --cc NAME: the connection's congestion control (setsockopt TCP_CONGESTION;
 * as root any algorithm the kernel has, not only those a network namespace
 * may pick by sysctl); the one in use is reported.
 *
 * --go-file PATH: after the subscription, wait until PATH exists before the
 * first send (b12.sh lets its sampler take the window's first sample of an
 * lcpipe run before the stream starts). --sub-file PATH: created when the
 * subscription has arrived.
 *
 * Usage: b12_feed_server --listen A.B.C.D:PORT --size BYTES --count N
 *          [--symbols N] [--opcode binary|text] [--buf BYTES]
 *          [--ready-file PATH] [--go-file PATH] [--sub-file PATH] [--cc NAME]
 *          [--timeout-ms MS] */
#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <netinet/in.h>
#include <linux/tcp.h> /* struct tcp_info with tcpi_data_segs_out (glibc's is older) */
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <stk/ws.h>
#include "kbench.h"


/* wait until fd is readable, at most ms; 1 = readable, 0 = timeout, -1 = error */
static int
fs_wait_in(int fd, unsigned ms)
{
	struct pollfd pf = { .fd = fd, .events = POLLIN };
	int rc;

	do
		rc = poll(&pf, 1, (int)ms);
	while (rc < 0 && errno == EINTR);
	return rc;
}

/* add d to the sequence number of frame f (flen bytes) whose last digit is
 * at f[*last] and which has *w digits; when it gains a digit, the bytes from
 * its first digit to the end of the padding move right by one (the padding
 * loses its last 'a'). -1 when the padding is used up. */
static inline int
fs_seq_add(uint8_t *f, size_t flen, size_t *last, unsigned *w, uint64_t d)
{
	uint8_t *p = f + *last;
	unsigned i = 0;

	while (d != 0) {
		unsigned v;

		if (i == *w) { /* a new leading digit */
			size_t first = *last + 1 - *w;

			if (f[flen - 3] != 'a')
				return -1;
			memmove(f + first + 1, f + first, flen - 3 - first);
			(*last)++;
			(*w)++;
			p = f + first; /* the new leading digit's place */
			*p = '0';
		}
		v = (unsigned)(*p - '0') + (unsigned)(d % 10);
		d /= 10;
		if (v >= 10) {
			v -= 10;
			d++;
		}
		*p-- = (uint8_t)('0' + v);
		i++;
	}
	return 0;
}

/* the client frames in [p, p+n): 1 = a data frame was seen (*data), a close
 * frame (*close); returns the bytes of whole frames consumed */
static size_t
fs_client_frames(const uint8_t *p, size_t n, bool *data, bool *close_seen)
{
	size_t off = 0;

	while (n - off >= 2) {
		const uint8_t *f = p + off;
		unsigned op = f[0] & 0x0f;
		uint64_t len = f[1] & 0x7f;
		size_t h = 2 + ((f[1] & 0x80) ? 4 : 0);

		if (len == 126) {
			if (n - off < 4)
				break;
			len = ((uint64_t)f[2] << 8) | f[3];
			h += 2;
		} else if (len == 127) {
			if (n - off < 10)
				break;
			len = 0;
			for (int i = 0; i < 8; i++)
				len = (len << 8) | f[2 + i];
			h += 8;
		}
		if (n - off < h + len)
			break;
		if (op == STK_WS_OP_TEXT || op == STK_WS_OP_BINARY || op == STK_WS_OP_CONT)
			*data = true;
		else if (op == STK_WS_OP_CLOSE)
			*close_seen = true;
		off += h + (size_t)len;
	}
	return off;
}

int
main(int argc, char **argv)
{
	static const struct option lo[] = {
		{ "listen", required_argument, NULL, 'l' },
		{ "size", required_argument, NULL, 's' },
		{ "count", required_argument, NULL, 'n' },
		{ "symbols", required_argument, NULL, 'S' },
		{ "opcode", required_argument, NULL, 'o' },
		{ "buf", required_argument, NULL, 'b' },
		{ "ready-file", required_argument, NULL, 'r' },
		{ "go-file", required_argument, NULL, 'g' },
		{ "sub-file", required_argument, NULL, 'u' },
		{ "cc", required_argument, NULL, 'c' },
		{ "timeout-ms", required_argument, NULL, 't' },
		{ NULL, 0, NULL, 0 },
	};
	const char *listen_at = NULL, *ready = NULL, *go = NULL, *cc = NULL, *sub = NULL;
	char cc_used[16] = "?";
	unsigned long size = 64, symbols = 100, bufmin = 65536, timeout_ms = 30000;
	unsigned long long count = 0;
	unsigned opcode = STK_WS_OP_BINARY;
	struct sockaddr_in sa = { .sin_family = AF_INET };
	static struct stk_ws_hs hs;
	static uint8_t in[65536];
	size_t have = 0;
	int o, lfd, fd, one = 1;

	while ((o = getopt_long(argc, argv, "", lo, NULL)) != -1) {
		switch (o) {
		case 'l':
			listen_at = optarg;
			break;
		case 's':
			size = strtoul(optarg, NULL, 0);
			break;
		case 'n':
			count = strtoull(optarg, NULL, 0);
			break;
		case 'S':
			symbols = strtoul(optarg, NULL, 0);
			break;
		case 'o':
			if (strcmp(optarg, "text") == 0)
				opcode = STK_WS_OP_TEXT;
			else if (strcmp(optarg, "binary") != 0) {
				fprintf(stderr, "b12_feed_server: --opcode binary|text\n");
				return 2;
			}
			break;
		case 'b':
			bufmin = strtoul(optarg, NULL, 0);
			break;
		case 'r':
			ready = optarg;
			break;
		case 'g':
			go = optarg;
			break;
		case 'c':
			cc = optarg;
			break;
		case 'u':
			sub = optarg;
			break;
		case 't':
			timeout_ms = strtoul(optarg, NULL, 0);
			break;
		default:
			fprintf(stderr, "usage: b12_feed_server --listen A.B.C.D:PORT --size BYTES --count N "
					"[--symbols N] [--opcode binary|text] [--buf BYTES] [--ready-file PATH] "
					"[--go-file PATH] [--sub-file PATH] [--cc NAME] [--timeout-ms MS]\n");
			return 2;
		}
	}
	/* the shortest tick: {"s":"SYM00000","n":1,"p":"101.25","q":300,"x":""} (50 bytes); the padding
	 * must also hold the digits n gains (checked as they come) */
	if (listen_at == NULL || count == 0 || symbols == 0 || symbols > 99999 || size < 50 || size > 65535 ||
	    bufmin < 1 || bufmin > (64ul << 20)) {
		fprintf(stderr, "b12_feed_server: --listen and --count > 0 are required; --size 50..65535; "
				"--symbols 1..99999; --buf 1..64 MiB\n");
		return 2;
	}
	if ((count + symbols - 1) / symbols >= 10000000000ull) {
		fprintf(stderr, "b12_feed_server: --count / --symbols must stay below 10^10\n");
		return 2;
	}
	{
		char host[64];
		const char *colon = strrchr(listen_at, ':');

		if (colon == NULL || (size_t)(colon - listen_at) >= sizeof(host)) {
			fprintf(stderr, "b12_feed_server: bad --listen %s\n", listen_at);
			return 2;
		}
		memcpy(host, listen_at, (size_t)(colon - listen_at));
		host[colon - listen_at] = '\0';
		if (inet_pton(AF_INET, host, &sa.sin_addr) != 1) {
			fprintf(stderr, "b12_feed_server: bad address %s\n", host);
			return 2;
		}
		sa.sin_port = htons((uint16_t)atoi(colon + 1));
	}
	signal(SIGPIPE, SIG_IGN);

	/* the buffer of pre-built frames: `rounds` rounds of all symbols */
	size_t hlen = size < 126 ? 2 : 4, flen = hlen + size;
	size_t rounds = (bufmin + symbols * flen - 1) / (symbols * flen);
	size_t nfr = rounds * symbols, blen = nfr * flen;
	uint8_t *buf = malloc(blen);
	size_t *nlast = malloc(nfr * sizeof(*nlast)); /* offset in its frame of each frame's last sequence digit */
	unsigned *nw = malloc(nfr * sizeof(*nw));    /* and its digits */

	if (buf == NULL || nlast == NULL || nw == NULL) {
		perror("b12_feed_server");
		return 1;
	}
	for (size_t j = 0; j < nfr; j++) {
		uint8_t *f = buf + j * flen;
		char head[96];
		int k;

		stk_ws_hdr(f, opcode, true, size, NULL);
		k = snprintf(head, sizeof(head), "{\"s\":\"SYM%05lu\",\"n\":%llu,\"p\":\"101.25\",\"q\":300,\"x\":\"",
			     (unsigned long)(j % symbols), (unsigned long long)(j / symbols + 1));
		if (k < 0 || (size_t)k + 2 > size) {
			fprintf(stderr, "b12_feed_server: --size %lu is below the tick's %d bytes\n", size, k + 2);
			return 2;
		}
		memcpy(f + hlen, head, (size_t)k);
		memset(f + hlen + k, 'a', size - 2 - (size_t)k);
		memcpy(f + hlen + size - 2, "\"}", 2);
		nw[j] = (unsigned)snprintf(head, sizeof(head), "%llu", (unsigned long long)(j / symbols + 1));
		nlast[j] = hlen + strlen("{\"s\":\"SYM00000\",\"n\":") + nw[j] - 1;
	}

	lfd = socket(AF_INET, SOCK_STREAM, 0);
	if (lfd < 0) {
		perror("b12_feed_server: socket");
		return 1;
	}
	setsockopt(lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (bind(lfd, (struct sockaddr *)&sa, sizeof(sa)) < 0 || listen(lfd, 4) < 0) {
		perror("b12_feed_server: bind/listen");
		return 1;
	}
	if (ready != NULL) {
		FILE *f = fopen(ready, "w");

		if (f != NULL)
			fclose(f);
	}
	if (fs_wait_in(lfd, (unsigned)timeout_ms) != 1) {
		fprintf(stderr, "b12_feed_server: no client within %lu ms\n", timeout_ms);
		return 1;
	}
	fd = accept(lfd, NULL, NULL);
	if (fd < 0) {
		perror("b12_feed_server: accept");
		return 1;
	}
	close(lfd);
	if (cc != NULL && setsockopt(fd, IPPROTO_TCP, TCP_CONGESTION, cc, (socklen_t)strlen(cc)) < 0) {
		fprintf(stderr, "b12_feed_server: congestion control %s: %s\n", cc, strerror(errno));
		return 1;
	}
	{
		socklen_t l = sizeof(cc_used) - 1;

		if (getsockopt(fd, IPPROTO_TCP, TCP_CONGESTION, cc_used, &l) == 0)
			cc_used[l < sizeof(cc_used) ? l : sizeof(cc_used) - 1] = '\0';
		cc_used[strcspn(cc_used, "\n")] = '\0';
	}

	/* handshake */
	for (int rc = 0; rc == 0;) {
		ssize_t k;
		size_t used = 0;

		if (fs_wait_in(fd, (unsigned)timeout_ms) != 1 || (k = recv(fd, in, sizeof(in), 0)) <= 0) {
			fprintf(stderr, "b12_feed_server: no upgrade request\n");
			return 1;
		}
		rc = stk_ws_server_request(&hs, in, (size_t)k, &used);
		if (rc < 0) {
			char resp[512];
			int n = stk_ws_server_reject(resp, sizeof(resp), hs.err ? hs.err : "bad request");

			if (n > 0)
				(void)kb_send_all(fd, (const uint8_t *)resp, (size_t)n);
			fprintf(stderr, "b12_feed_server: bad upgrade request: %s\n", hs.err ? hs.err : "?");
			return 1;
		}
		if (rc == 1) {
			char resp[1024];
			int n = stk_ws_server_response(&hs, resp, sizeof(resp), NULL);

			have = (size_t)k - used;
			memmove(in, in + used, have);
			if (n < 0 || kb_send_all(fd, (const uint8_t *)resp, (size_t)n) < 0) {
				fprintf(stderr, "b12_feed_server: cannot send the 101 response\n");
				return 1;
			}
		}
	}
	/* the subscription (any data frame) */
	{
		bool data = false, cl = false;

		for (;;) {
			size_t used = fs_client_frames(in, have, &data, &cl);
			ssize_t k;

			memmove(in, in + used, have - used);
			have -= used;
			if (data || cl)
				break;
			if (have == sizeof(in) || fs_wait_in(fd, (unsigned)timeout_ms) != 1 ||
			    (k = recv(fd, in + have, sizeof(in) - have, 0)) <= 0) {
				fprintf(stderr, "b12_feed_server: no subscription from the client\n");
				return 1;
			}
			have += (size_t)k;
		}
		if (cl) {
			fprintf(stderr, "b12_feed_server: the client closed before subscribing\n");
			return 1;
		}
	}

	if (sub != NULL) {
		FILE *f = fopen(sub, "w");

		if (f != NULL)
			fclose(f);
	}
	if (go != NULL) {
		uint64_t until = kb_now_ns() + (uint64_t)timeout_ms * 1000000ull;

		while (access(go, F_OK) != 0) {
			if (kb_now_ns() > until) {
				fprintf(stderr, "b12_feed_server: no %s within %lu ms\n", go, timeout_ms);
				return 1;
			}
			usleep(1000);
		}
	}

	/* stream */
	struct rusage ru0, ru1;
	uint64_t t0, t_sent, t1, sent = 0, passes = 0;
	bool closed = false;
	const char *end = "close";

	getrusage(RUSAGE_SELF, &ru0);
	t0 = kb_now_ns();
	while (sent < count) {
		size_t k = count - sent < nfr ? (size_t)(count - sent) : nfr;

		if (passes > 0)
			for (size_t j = 0; j < k; j++)
				if (fs_seq_add(buf + j * flen, flen, &nlast[j], &nw[j], rounds) < 0) {
					fprintf(stderr, "b12_feed_server: --size %lu leaves no room for %u-digit sequence numbers\n",
						size, nw[j] + 1);
					return 2;
				}
		if (kb_send_all(fd, buf, k * flen) < 0) {
			fprintf(stderr, "b12_feed_server: send failed after %" PRIu64 " messages: %s\n", sent,
				strerror(errno));
			return 1;
		}
		sent += k;
		passes++;
	}
	t_sent = kb_now_ns();
	{
		uint8_t cf[4] = { 0x80 | STK_WS_OP_CLOSE, 2, 1000 >> 8, 1000 & 0xff };

		if (kb_send_all(fd, cf, sizeof(cf)) < 0) {
			fprintf(stderr, "b12_feed_server: cannot send the close frame\n");
			return 1;
		}
	}
	/* the client's close (or EOF) */
	while (!closed) {
		bool data = false;
		ssize_t k;
		size_t used;

		if (fs_wait_in(fd, (unsigned)timeout_ms) != 1) {
			end = "timeout waiting for the client's close";
			break;
		}
		k = recv(fd, in + have, sizeof(in) - have, 0);
		if (k <= 0) {
			end = k == 0 ? "eof" : "recv failed";
			break;
		}
		have += (size_t)k;
		used = fs_client_frames(in, have, &data, &closed);
		memmove(in, in + used, have - used);
		have -= used;
		if (have == sizeof(in)) {
			end = "client frame too big";
			break;
		}
	}
	t1 = kb_now_ns();
	getrusage(RUSAGE_SELF, &ru1);

	struct tcp_info ti;
	socklen_t til = sizeof(ti);

	memset(&ti, 0, sizeof(ti));
	(void)getsockopt(fd, IPPROTO_TCP, TCP_INFO, &ti, &til);
	close(fd);
	printf("{\"bench\":\"B12\",\"role\":\"feed_server\",\"size\":%lu,\"opcode\":\"%s\",\"symbols\":%lu,"
	       "\"msgs\":%" PRIu64 ",\"payload_bytes\":%" PRIu64 ",\"frame_bytes\":%" PRIu64 ",\"buf_bytes\":%zu,"
	       "\"passes\":%" PRIu64 ",\"wall_ns\":%" PRIu64 ",\"send_ns\":%" PRIu64 ",\"utime_us\":%" PRIu64
	       ",\"stime_us\":%" PRIu64 ",\"nvcsw\":%ld,\"nivcsw\":%ld,\"tcp_data_segs_out\":%u,"
	       "\"tcp_segs_out\":%u,\"tcp_total_retrans\":%u,\"tcp_snd_mss\":%u,\"tcp_rtt_us\":%u,"
	       "\"tcp_cc\":\"%s\",\"end\":\"%s\",\"complete\":%s}\n",
	       size, opcode == STK_WS_OP_TEXT ? "text" : "binary", symbols, sent, sent * size, sent * flen, blen,
	       passes, t1 - t0, t_sent - t0, kb_tv_us(ru1.ru_utime) - kb_tv_us(ru0.ru_utime),
	       kb_tv_us(ru1.ru_stime) - kb_tv_us(ru0.ru_stime), ru1.ru_nvcsw - ru0.ru_nvcsw,
	       ru1.ru_nivcsw - ru0.ru_nivcsw, ti.tcpi_data_segs_out, ti.tcpi_segs_out, ti.tcpi_total_retrans,
	       ti.tcpi_snd_mss, ti.tcpi_rtt, cc_used, end, closed ? "true" : "false");
	free(buf);
	free(nlast);
	free(nw);
	return closed ? 0 : 1;
}
