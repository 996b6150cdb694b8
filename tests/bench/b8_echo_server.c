/* SPDX-License-Identifier: BSD-3-Clause
 * b8_echo_server.c — B8 (WebSocket echo RTT, doc/benchmarks.md): a minimal
 * WebSocket echo server on kernel sockets, the one peer every B8 client talks
 * to (the kernel-socket client in both modes and lcpipe), so its own latency is
 * the same in every figure.
 *
 * One connection at a time (blocking accept): the handshake is parsed and
 * answered with libstk's server side (stk_ws_server_request /
 * stk_ws_server_response: Sec-WebSocket-Accept = base64(SHA-1(key + GUID))),
 * then every frame is echoed: a data frame (text, binary, continuation) is sent
 * back unmasked with the same opcode and FIN bit, a ping gets a pong with its
 * payload, a close is echoed and the connection closed. All frames found in
 * one recv() are answered with one send(). TCP_NODELAY on every connection.
 *
 * --mode block: blocking recv(); --mode busy: recv(MSG_DONTWAIT) in a loop
 * (the process never sleeps while a connection is open).
 *
 * Usage: b8_echo_server --listen A.B.C.D:PORT [--mode block|busy]
 *                       [--ready-file PATH] [--quiet]
 * Per connection, one JSON line on stdout: frames and bytes echoed, how it
 * ended, and in TSC cycles the p50 / p99 of the server's own part of a round
 * trip every client pays alike: its send() of the echoes ("send_*": the kernel's
 * TCP transmit, the veth and, in softirq on this CPU, the client side's receive)
 * and a turn ("turn_*": recv() return -> that send() returned).
 * Pin it with taskset; b8.sh does. */
#include <arpa/inet.h>
#include <errno.h>
#include <inttypes.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <stk/ws.h>
#include "ws_rtt_hist.h" /* plugins/ws_rtt */
#include "bench_opt.h"
#include "kbench.h"

#define SRV_BUF (1u << 20) /* largest frame accepted: a little under 1 MiB */

struct srv_conn {
	int fd;
	bool busy;
	uint8_t *in, *out;
	size_t have, out_len;
	uint64_t frames, bytes, pings, spins;
	uint64_t t_in;             /* TSC when the recv() that brought these frames returned */
	struct b8_hist send, turn; /* the echo's send() call; recv() return -> send() return */
	const char *end;
};

/* an unmasked frame of n payload bytes (copied from p) into the output buffer */
static void
srv_frame_out(struct srv_conn *c, unsigned b0, const uint8_t *p, size_t n)
{
	uint8_t *o = c->out + c->out_len;
	size_t h = 2;

	o[0] = (uint8_t)b0;
	if (n < 126) {
		o[1] = (uint8_t)n;
	} else if (n < 65536) {
		o[1] = 126;
		o[2] = (uint8_t)(n >> 8);
		o[3] = (uint8_t)n;
		h = 4;
	} else {
		o[1] = 127;
		for (int i = 0; i < 8; i++)
			o[2 + i] = (uint8_t)((uint64_t)n >> (56 - 8 * i));
		h = 10;
	}
	memcpy(o + h, p, n);
	c->out_len += h + n;
}

/* the frames in c->in[0, have): echo each whole one; keep a partial one.
 * 1 = go on, 0 = close the connection (close frame or protocol error) */
static int
srv_frames(struct srv_conn *c)
{
	size_t off = 0;
	int go = 1;

	while (go && c->have - off >= 2) {
		uint8_t *f = c->in + off;
		unsigned b0 = f[0], op = b0 & 0x0f;
		uint64_t len;
		size_t h;

		if (!(f[1] & 0x80)) {
			c->end = "unmasked frame from the client";
			return 0;
		}
		if (!kb_ws_len(f, c->have - off, &len, &h))
			break;
		if (len > SRV_BUF - 64) {
			c->end = "frame too big";
			return 0;
		}
		if (c->have - off < h + 4 + len)
			break;
		{
			uint8_t *key = f + h, *p = f + h + 4;

			for (uint64_t i = 0; i < len; i++)
				p[i] ^= key[i & 3];
			if (c->out_len + len + 14 > SRV_BUF) {
				if (kb_send_all(c->fd, c->out, c->out_len) < 0) {
					c->end = "send failed";
					return 0;
				}
				c->out_len = 0;
			}
			switch (op) {
			case STK_WS_OP_CONT:
			case STK_WS_OP_TEXT:
			case STK_WS_OP_BINARY:
				srv_frame_out(c, b0 & 0x8f, p, len);
				c->frames++;
				c->bytes += len;
				break;
			case STK_WS_OP_PING:
				srv_frame_out(c, 0x80 | STK_WS_OP_PONG, p, len);
				c->pings++;
				break;
			case STK_WS_OP_PONG:
				break;
			case STK_WS_OP_CLOSE:
				srv_frame_out(c, 0x80 | STK_WS_OP_CLOSE, p, len > 2 ? 2 : len);
				c->end = "close frame";
				go = 0;
				break;
			default:
				c->end = "bad opcode";
				return 0;
			}
		}
		off += h + 4 + len;
	}
	if (c->out_len > 0) {
		uint64_t t0 = __rdtsc(), t1;

		if (kb_send_all(c->fd, c->out, c->out_len) < 0) {
			c->end = "send failed";
			return 0;
		}
		t1 = __rdtsc();
		b8_hist_add(&c->send, t1 - t0);
		b8_hist_add(&c->turn, t1 - c->t_in);
		c->out_len = 0;
	}
	memmove(c->in, c->in + off, c->have - off);
	c->have -= off;
	return go;
}

static int
srv_handshake(struct srv_conn *c)
{
	static struct stk_ws_hs hs;
	char resp[1024];
	uint8_t buf[4096];
	int rc = 0, n;

	memset(&hs, 0, sizeof(hs));
	while (rc == 0) {
		ssize_t k = recv(c->fd, buf, sizeof(buf), 0);
		size_t used = 0;

		if (k <= 0) {
			c->end = k == 0 ? "eof during the handshake" : "recv failed during the handshake";
			return -1;
		}
		rc = stk_ws_server_request(&hs, buf, (size_t)k, &used);
		if (rc < 0) {
			n = stk_ws_server_reject(resp, sizeof(resp), hs.err ? hs.err : "bad request");
			if (n > 0)
				(void)kb_send_all(c->fd, (const uint8_t *)resp, (size_t)n);
			c->end = "bad upgrade request";
			return -1;
		}
		if (rc == 1 && used < (size_t)k) { /* frames right behind the request */
			memcpy(c->in, buf + used, (size_t)k - used);
			c->have = (size_t)k - used;
		}
	}
	n = stk_ws_server_response(&hs, resp, sizeof(resp), NULL);
	if (n < 0 || kb_send_all(c->fd, (const uint8_t *)resp, (size_t)n) < 0) {
		c->end = "cannot send the 101 response";
		return -1;
	}
	return 0;
}

static void
srv_serve(struct srv_conn *c)
{
	int one = 1;

	setsockopt(c->fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	c->have = c->out_len = 0;
	c->frames = c->bytes = c->pings = c->spins = 0;
	b8_hist_reset(&c->send);
	b8_hist_reset(&c->turn);
	c->end = NULL;
	if (srv_handshake(c) < 0)
		return;
	if (c->have > 0 && !srv_frames(c))
		return;
	for (;;) {
		ssize_t k = recv(c->fd, c->in + c->have, SRV_BUF - c->have, c->busy ? MSG_DONTWAIT : 0);

		if (k > 0) {
			c->t_in = __rdtsc();
			c->have += (size_t)k;
			if (!srv_frames(c))
				return;
			if (c->have == SRV_BUF) {
				c->end = "frame too big";
				return;
			}
			continue;
		}
		if (k == 0) {
			c->end = "eof";
			return;
		}
		if (errno == EAGAIN || errno == EWOULDBLOCK) {
			c->spins++;
			continue;
		}
		if (errno == EINTR)
			continue;
		c->end = errno == ECONNRESET ? "reset by the client" : "recv failed";
		return;
	}
}

int
main(int argc, char **argv)
{
	const char *listen_at = NULL, *ready = NULL;
	char host[64];
	struct sockaddr_in sa = { .sin_family = AF_INET };
	struct srv_conn c = { .fd = -1 };
	bool quiet = false;
	int lfd, mode = 0;
	static const char *const modes[] = { "block", "busy", NULL };
	const struct bench_opt opts[] = {
		BENCH_OPT_STR("listen", &listen_at),
		BENCH_OPT_WORD("mode", &mode, modes),
		BENCH_OPT_STR("ready-file", &ready),
		BENCH_OPT_FLAG("quiet", &quiet),
		BENCH_OPT_END,
	};
	uint64_t nconn = 0;

	if (bench_opt_parse(argc, argv, opts, "b8_echo_server",
			    "--listen A.B.C.D:PORT [--mode block|busy] [--ready-file PATH] [--quiet]") < 0)
		return 2;
	c.busy = mode == 1;
	if (listen_at == NULL) {
		fprintf(stderr, "b8_echo_server: --listen A.B.C.D:PORT is required\n");
		return 2;
	}
	if (kb_parse_addr("b8_echo_server", "--listen", listen_at, &sa, host, sizeof(host)) < 0)
		return 2;
	signal(SIGPIPE, SIG_IGN);
	c.in = malloc(SRV_BUF);
	c.out = malloc(SRV_BUF + 64);
	if (c.in == NULL || c.out == NULL) {
		perror("b8_echo_server");
		return 1;
	}
	lfd = kb_listen("b8_echo_server", &sa, 16);
	if (lfd < 0)
		return 1;
	kb_touch(ready);
	for (;;) {
		c.fd = accept(lfd, NULL, NULL);
		if (c.fd < 0) {
			if (errno == EINTR || errno == ECONNABORTED)
				continue;
			perror("b8_echo_server: accept");
			return 1;
		}
		srv_serve(&c);
		close(c.fd);
		nconn++;
		if (!quiet) {
			printf("{\"conn\":%" PRIu64 ",\"mode\":\"%s\",\"frames\":%" PRIu64 ",\"bytes\":%" PRIu64
			       ",\"pings\":%" PRIu64 ",\"empty_polls\":%" PRIu64 ",\"end\":\"%s\""
			       ",\"send_p50\":%.1f,\"send_p99\":%.1f,\"turn_p50\":%.1f,\"turn_p99\":%.1f}\n",
			       nconn, c.busy ? "busy" : "block", c.frames, c.bytes, c.pings, c.spins,
			       c.end ? c.end : "?", b8_hist_pct(&c.send, 0.50), b8_hist_pct(&c.send, 0.99),
			       b8_hist_pct(&c.turn, 0.50), b8_hist_pct(&c.turn, 0.99));
			fflush(stdout);
		}
	}
}
