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
 * wss (B14): --tls-cert PEM --tls-key PEM [--tls-suite NAME] serves TLS on the
 * accepted socket with OpenSSL (SSL_accept, then the handshake, the stream and
 * the close all through SSL_read / SSL_write; kbench_tls.h): one version and
 * one suite (default TLS_AES_128_GCM_SHA256, TLS 1.3), no session tickets.
 * Each pass's buffer goes to one SSL_write, which cuts it into 16 KiB records.
 * The rusage window then includes the encryption.
 *
 * permessage-deflate (B14): --deflate [--deflate-level N] accepts the client's
 * offer (server_max_window_bits 15, context takeover; the client must offer
 * and must not ask for less) and sends every message compressed (RSV1), with
 * libstk's deflater (stk_ws_deflate, as feedsim does; zlib level N, default
 * 1). The whole run's compressed frames are made before listening, from the
 * same buffer passes as above (compression is ~1-10 us a message: done on
 * the fly it would pace the feed far below the receivers), and then streamed
 * --buf bytes per send. Reported: compressed payload bytes and the time the
 * compression took (outside the rusage window).
 *
 * Usage: b12_feed_server --listen A.B.C.D:PORT --size BYTES --count N
 *          [--symbols N] [--opcode binary|text] [--buf BYTES]
 *          [--ready-file PATH] [--go-file PATH] [--sub-file PATH] [--cc NAME]
 *          [--timeout-ms MS] [--tls-cert PEM --tls-key PEM [--tls-suite NAME]]
 *          [--deflate [--deflate-level N]] */
#include <arpa/inet.h>
#include <errno.h>
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
#include "bench_opt.h"
#include "kbench.h"
#include "kbench_tls.h"


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

/* wait for input on io: 1 = readable (or plaintext already inside OpenSSL), 0 = timeout, -1 = error */
static int
fs_wait_io(const struct kb_io *io, unsigned ms)
{
	return kb_io_pending(io) ? 1 : fs_wait_in(io->fd, ms);
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

/* --deflate: the whole run's messages, each compressed with libstk's deflater
 * (context takeover, 15-bit window), as RSV1 frames into *out (malloc'd,
 * *outlen bytes; *zpayload compressed payload bytes). The frames come from the
 * template buffer's passes exactly as the plain stream sends them (and the
 * template's sequence numbers are advanced on the way). 0, or -1 with a
 * message on stderr. */
static int
fs_precompress(uint8_t *buf, size_t flen, size_t hlen, size_t nfr, size_t rounds, size_t *nlast, unsigned *nw,
	       uint64_t count, unsigned opcode, int level, uint8_t **out, size_t *outlen, uint64_t *zpayload)
{
	const struct stk_ws_pmd neg = { .on = true, .client_max_window_bits = 15, .server_max_window_bits = 15 };
	struct stk_ws_deflate z;
	size_t size = flen - hlen, cap, len = 0, bound;
	uint64_t done = 0, pass = 0;
	uint8_t *o;

	if (stk_ws_deflate_init(&z, &neg, true, level, 0) != 0) {
		fprintf(stderr, "b12_feed_server: deflate init failed\n");
		return -1;
	}
	bound = stk_ws_deflate_bound(&z, size);
	cap = (size_t)count * (size / 4 + 16) + bound + 16;
	o = malloc(cap);
	if (o == NULL) {
		perror("b12_feed_server: deflate buffer");
		return -1;
	}
	while (done < count) {
		size_t k = count - done < nfr ? (size_t)(count - done) : nfr;

		for (size_t j = 0; j < k; j++) {
			uint8_t *f = buf + j * flen;
			ssize_t zl;

			if (pass > 0 && fs_seq_add(f, flen, &nlast[j], &nw[j], rounds) < 0) {
				fprintf(stderr, "b12_feed_server: --size %zu leaves no room for %u-digit sequence numbers\n",
					size, nw[j] + 1);
				goto fail;
			}
			if (cap - len < bound + 16) {
				uint8_t *no = realloc(o, cap * 2);

				if (no == NULL) {
					perror("b12_feed_server: deflate buffer");
					goto fail;
				}
				o = no;
				cap *= 2;
			}
			/* compress after a 10-byte gap, then put the header right before it */
			zl = stk_ws_deflate(&z, f + hlen, size, o + len + 10, cap - len - 10);
			if (zl < 0) {
				fprintf(stderr, "b12_feed_server: deflate failed (%zd)\n", zl);
				goto fail;
			}
			{
				uint8_t h[10];
				size_t hl = stk_ws_hdr_rsv(h, opcode, true, STK_WS_RSV1, (uint64_t)zl, NULL);

				memmove(o + len + hl, o + len + 10, (size_t)zl);
				memcpy(o + len, h, hl);
				len += hl + (size_t)zl;
			}
			*zpayload += (uint64_t)zl;
		}
		done += k;
		pass++;
	}
	stk_ws_deflate_fini(&z);
	*out = o;
	*outlen = len;
	return 0;
fail:
	stk_ws_deflate_fini(&z);
	free(o);
	return -1;
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
		uint64_t len;
		size_t h;

		if (!kb_ws_len(f, n - off, &len, &h))
			break;
		h += (f[1] & 0x80) ? 4 : 0; /* the mask key */
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
	const char *listen_at = NULL, *ready = NULL, *go = NULL, *cc = NULL, *sub = NULL;
	const char *tls_cert = NULL, *tls_key = NULL, *tls_suite = "TLS_AES_128_GCM_SHA256";
	bool deflate = false;
	int deflate_level = 1;
	uint8_t *zbuf = NULL;
	size_t zlen = 0;
	uint64_t zpayload = 0, deflate_ns = 0;
	SSL_CTX *tls_ctx = NULL;
	struct kb_io io = { .fd = -1 };
	char cc_used[16] = "?", host[64];
	unsigned long size = 64, symbols = 100, bufmin = 65536, timeout_ms = 30000;
	uint64_t count = 0;
	unsigned opcode = STK_WS_OP_BINARY;
	struct sockaddr_in sa = { .sin_family = AF_INET };
	static struct stk_ws_hs hs;
	static uint8_t in[65536];
	size_t have = 0;
	int lfd, fd, opcode_word = 0;
	static const char *const opcodes[] = { "binary", "text", NULL };
	const struct bench_opt opts[] = {
		BENCH_OPT_STR("listen", &listen_at),
		BENCH_OPT_ULONG("size", &size),
		BENCH_OPT_U64("count", &count),
		BENCH_OPT_ULONG("symbols", &symbols),
		BENCH_OPT_WORD("opcode", &opcode_word, opcodes),
		BENCH_OPT_ULONG("buf", &bufmin),
		BENCH_OPT_STR("ready-file", &ready),
		BENCH_OPT_STR("go-file", &go),
		BENCH_OPT_STR("sub-file", &sub),
		BENCH_OPT_STR("cc", &cc),
		BENCH_OPT_ULONG("timeout-ms", &timeout_ms),
		BENCH_OPT_STR("tls-cert", &tls_cert),
		BENCH_OPT_STR("tls-key", &tls_key),
		BENCH_OPT_STR("tls-suite", &tls_suite),
		BENCH_OPT_FLAG("deflate", &deflate),
		BENCH_OPT_INT("deflate-level", &deflate_level),
		BENCH_OPT_END,
	};

	if (bench_opt_parse(argc, argv, opts, "b12_feed_server",
			    "--listen A.B.C.D:PORT --size BYTES --count N "
			    "[--symbols N] [--opcode binary|text] [--buf BYTES] [--ready-file PATH] "
			    "[--go-file PATH] [--sub-file PATH] [--cc NAME] [--timeout-ms MS] "
			    "[--tls-cert PEM --tls-key PEM [--tls-suite NAME]] [--deflate [--deflate-level N]]") < 0)
		return 2;
	if (opcode_word == 1)
		opcode = STK_WS_OP_TEXT;
	/* the shortest tick: {"s":"SYM00000","n":1,"p":"101.25","q":300,"x":""} (50 bytes); the padding
	 * must also hold the digits n gains (checked as they come) */
	if (listen_at == NULL || count == 0 || symbols == 0 || symbols > 99999 || size < 50 || size > 65535 ||
	    bufmin < 1 || bufmin > (64ul << 20)) {
		fprintf(stderr, "b12_feed_server: --listen and --count > 0 are required; --size 50..65535; "
				"--symbols 1..99999; --buf 1..64 MiB\n");
		return 2;
	}
	if ((tls_cert == NULL) != (tls_key == NULL) || deflate_level < 0 || deflate_level > 9) {
		fprintf(stderr, "b12_feed_server: --tls-cert and --tls-key go together; --deflate-level 0..9\n");
		return 2;
	}
	if ((count + symbols - 1) / symbols >= 10000000000ull) {
		fprintf(stderr, "b12_feed_server: --count / --symbols must stay below 10^10\n");
		return 2;
	}
	if (kb_parse_addr("b12_feed_server", "--listen", listen_at, &sa, host, sizeof(host)) < 0)
		return 2;
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

	if (deflate) {
		uint64_t z0 = kb_now_ns();

		if (fs_precompress(buf, flen, hlen, nfr, rounds, nlast, nw, count, opcode, deflate_level, &zbuf, &zlen,
				   &zpayload) < 0)
			return 1;
		deflate_ns = kb_now_ns() - z0;
	}
	if (tls_cert != NULL && (tls_ctx = kb_tls_server_ctx(tls_cert, tls_key, tls_suite)) == NULL)
		return 1;

	lfd = kb_listen("b12_feed_server", &sa, 4);
	if (lfd < 0)
		return 1;
	kb_touch(ready);
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

	io.fd = fd;
	if (tls_ctx != NULL) {
		/* blocking TLS reads must not wait for ever on a stalled client */
		kb_rcvtimeo(fd, timeout_ms);
		io.ssl = SSL_new(tls_ctx);
		if (io.ssl == NULL || SSL_set_fd(io.ssl, fd) != 1 || SSL_accept(io.ssl) != 1) {
			fprintf(stderr, "b12_feed_server: TLS handshake failed: %s\n", kb_tls_err());
			return 1;
		}
	}

	/* handshake */
	if (deflate) {
		const struct stk_ws_pmd set = { .on = true, .server_max_window_bits = 15 };

		stk_ws_server_init(&hs, &set);
	}
	for (int rc = 0; rc == 0;) {
		ssize_t k;
		size_t used = 0;

		if (fs_wait_io(&io, (unsigned)timeout_ms) != 1 || (k = kb_io_recv(&io, in, sizeof(in))) <= 0) {
			fprintf(stderr, "b12_feed_server: no upgrade request\n");
			return 1;
		}
		rc = stk_ws_server_request(&hs, in, (size_t)k, &used);
		if (rc < 0) {
			char resp[512];
			int n = stk_ws_server_reject(resp, sizeof(resp), hs.err ? hs.err : "bad request");

			if (n > 0)
				(void)kb_io_send_all(&io, resp, (size_t)n);
			fprintf(stderr, "b12_feed_server: bad upgrade request: %s\n", hs.err ? hs.err : "?");
			return 1;
		}
		if (rc == 1) {
			char resp[1024];
			int n = stk_ws_server_response(&hs, resp, sizeof(resp), NULL);

			have = (size_t)k - used;
			memmove(in, in + used, have);
			if (deflate && (!hs.pmd.on || hs.pmd.server_max_window_bits != 15 || hs.pmd.server_no_context_takeover)) {
				fprintf(stderr, "b12_feed_server: --deflate: the client did not offer permessage-deflate with "
						"a 15-bit server window and context takeover (the frames are compressed that way)\n");
				return 1;
			}
			if (n < 0 || kb_io_send_all(&io, resp, (size_t)n) < 0) {
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
			if (have == sizeof(in) || fs_wait_io(&io, (unsigned)timeout_ms) != 1 ||
			    (k = kb_io_recv(&io, in + have, sizeof(in) - have)) <= 0) {
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

	kb_touch(sub);
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
	for (size_t off = 0; deflate && off < zlen; passes++) {
		size_t k = zlen - off < blen ? zlen - off : blen;

		if (kb_io_send_all(&io, zbuf + off, k) < 0) {
			fprintf(stderr, "b12_feed_server: send failed after %zu of %zu bytes: %s %s\n", off, zlen,
				strerror(errno), io.ssl != NULL ? kb_tls_err() : "");
			return 1;
		}
		off += k;
		sent = count;
	}
	while (sent < count) {
		size_t k = count - sent < nfr ? (size_t)(count - sent) : nfr;

		if (passes > 0)
			for (size_t j = 0; j < k; j++)
				if (fs_seq_add(buf + j * flen, flen, &nlast[j], &nw[j], rounds) < 0) {
					fprintf(stderr, "b12_feed_server: --size %lu leaves no room for %u-digit sequence numbers\n",
						size, nw[j] + 1);
					return 2;
				}
		if (kb_io_send_all(&io, buf, k * flen) < 0) {
			fprintf(stderr, "b12_feed_server: send failed after %" PRIu64 " messages: %s %s\n", sent,
				strerror(errno), io.ssl != NULL ? kb_tls_err() : "");
			return 1;
		}
		sent += k;
		passes++;
	}
	t_sent = kb_now_ns();
	{
		uint8_t cf[4] = { 0x80 | STK_WS_OP_CLOSE, 2, 1000 >> 8, 1000 & 0xff };

		if (kb_io_send_all(&io, cf, sizeof(cf)) < 0) {
			fprintf(stderr, "b12_feed_server: cannot send the close frame\n");
			return 1;
		}
	}
	/* the client's close (or EOF) */
	while (!closed) {
		bool data = false;
		ssize_t k;
		size_t used;

		if (fs_wait_io(&io, (unsigned)timeout_ms) != 1) {
			end = "timeout waiting for the client's close";
			break;
		}
		k = kb_io_recv(&io, in + have, sizeof(in) - have);
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
	printf("{\"bench\":\"B12\",\"role\":\"feed_server\",\"size\":%lu,\"opcode\":\"%s\",\"symbols\":%lu,"
	       "\"msgs\":%" PRIu64 ",\"payload_bytes\":%" PRIu64 ",\"frame_bytes\":%" PRIu64 ",\"buf_bytes\":%zu,"
	       "\"passes\":%" PRIu64 ",\"wall_ns\":%" PRIu64 ",\"send_ns\":%" PRIu64 ",\"utime_us\":%" PRIu64
	       ",\"stime_us\":%" PRIu64 ",\"nvcsw\":%ld,\"nivcsw\":%ld,\"tcp_data_segs_out\":%u,"
	       "\"tcp_segs_out\":%u,\"tcp_total_retrans\":%u,\"tcp_snd_mss\":%u,\"tcp_rtt_us\":%u,"
	       "\"tcp_cc\":\"%s\",\"tls_version\":\"%s\",\"tls_cipher\":\"%s\",\"deflate\":%s,"
	       "\"deflate_level\":%d,\"wire_payload_bytes\":%" PRIu64 ",\"wire_frame_bytes\":%" PRIu64
	       ",\"deflate_ns\":%" PRIu64 ",\"end\":\"%s\",\"complete\":%s}\n",
	       size, opcode == STK_WS_OP_TEXT ? "text" : "binary", symbols, sent, sent * size, sent * flen, blen,
	       passes, t1 - t0, t_sent - t0, kb_tv_us(ru1.ru_utime) - kb_tv_us(ru0.ru_utime),
	       kb_tv_us(ru1.ru_stime) - kb_tv_us(ru0.ru_stime), ru1.ru_nvcsw - ru0.ru_nvcsw,
	       ru1.ru_nivcsw - ru0.ru_nivcsw, ti.tcpi_data_segs_out, ti.tcpi_segs_out, ti.tcpi_total_retrans,
	       ti.tcpi_snd_mss, ti.tcpi_rtt, cc_used, io.ssl != NULL ? SSL_get_version(io.ssl) : "",
	       io.ssl != NULL ? SSL_get_cipher_name(io.ssl) : "", deflate ? "true" : "false", deflate_level,
	       deflate ? zpayload : sent * size, deflate ? (uint64_t)zlen : sent * flen, deflate_ns, end,
	       closed ? "true" : "false");
	SSL_free(io.ssl);
	SSL_CTX_free(tls_ctx);
	close(fd);
	free(zbuf);
	free(buf);
	free(nlast);
	free(nw);
	return closed ? 0 : 1;
}
