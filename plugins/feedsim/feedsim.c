/* SPDX-License-Identifier: BSD-3-Clause
 * feedsim — an exchange simulator on our own TCP stack: listens, accepts
 * WebSocket clients (server side of the handshake and framing, stk/ws.h) and
 * streams synthetic market data.
 *
 * Ports: "in" (stream from its tcp stage's "data"), "tx" (stream to its tcp
 * stage's "app").
 *
 * Each message is a JSON tick, text frame:
 *   {"s":"SYM00042","n":17,"p":"101.25","q":300,"t":1764489600123456789,"x":"…"}
 * s symbol, n per-symbol sequence number (1, 2, … per client), p price, q
 * quantity, t exchange timestamp (ns, CLOCK_REALTIME at start + TSC), x padding
 * to the size drawn from the "sizes" mix.
 *
 *   fs_poll          LISTEN at first call; per streaming client: as many
 *                    messages as the rate, the batch and the send pool allow
 *                    (feedsim_tx.c)
 *   fs_process       ACCEPTED -> TLS (tls_cert and tls_key given: wss) or the
 *                    handshake; DATA -> TLS records, the upgrade request, then
 *                    client frames (ping -> pong, close -> close, text counted)
 *   fs_linger        shutdown: close 1001 to every streaming client, TCP close
 *                    of those still in their upgrade; done once every client
 *                    answered (its close frame) or went
 *
 * wss: a TLS server session per client (stk/tls.h) on this lcore. Frames are
 * staged as plaintext (up to 16 KiB, one TLS record) and encrypted when the
 * stage is full, at the end of a client's batch and after control frames; the
 * records go out in SEND mbufs of the send pool.
 *
 * venue (feedsim_venue.c): the data and non-data messages of a real venue's
 * public feed instead (Binance, Coinbase, Kraken, OKX, Bybit, Deribit); gap_every
 * skips an update id now and then, in every mode, so gap detection can be tested.
 *
 * prerender (fs_pr_render in feedsim_config.c, fs_stream_pr in feedsim_tx.c):
 * the client's whole stream (count messages) is rendered once at init into one
 * buffer of complete text frames, in b12_feed_server's shape and exact sizes
 * (symbols round robin, price and quantity fixed, no "t"), cut into steps of
 * whole frames of at most a SEND mbuf's room; each client is sent that buffer
 * by copies, steps at a time, so a poll always ends on a frame boundary (a pong
 * or the close goes between frames). Every client gets the same bytes.
 *
 * Backpressure: SEND mbufs come from the stage's own pool ("send_mbufs"); the
 * tcp stage keeps each until its bytes are acknowledged, so an empty pool means
 * "the peer is behind" and generation waits. Keep send_mbufs * ~1.9 KB below
 * the tcp stage's sndbuf. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_malloc.h>

#include "feedsim.h"

static const struct lcp_port_def fs_ports[] = {
	{ .name = "in", .dir = LCP_PORT_IN, .unit = LCP_UNIT_STREAM, .flags = LCP_PORT_F_REQUIRED,
	  .doc = "stream events and payload from the tcp stage (tcp.data)" },
	{ .name = "tx", .dir = LCP_PORT_OUT, .unit = LCP_UNIT_STREAM, .flags = LCP_PORT_F_REQUIRED,
	  .doc = "commands and bytes to the tcp stage (tcp.app)" },
	LCP_PORT_END,
};

static const char *const fs_counters[] = { FS_COUNTERS(LCP_COUNTER_NAME) NULL };

static struct fs_client *
fs_find(struct fs_ctx *x, uint32_t conn)
{
	for (unsigned i = 0; i < x->max_clients; i++)
		if (x->cl[i].state != FC_FREE && x->cl[i].conn == conn)
			return &x->cl[i];
	return NULL;
}

void
fs_drop(struct fs_ctx *x, struct fs_client *k)
{
	if (k->sha != NULL) {
		unsigned char md[32];
		char hex[65];

		EVP_DigestFinal_ex(k->sha, md, NULL);
		for (unsigned i = 0; i < 32; i++)
			snprintf(hex + 2 * i, 3, "%02x", md[i]);
		lcp_log(x->st, LCP_LOG_INFO, "client 0x%x: %" PRIu64 " messages, %" PRIu64 " payload bytes, sha256 %s",
			k->conn, k->sent, k->sha_bytes, hex);
		EVP_MD_CTX_free(k->sha);
		k->sha = NULL;
	}
	if (k->cur != NULL)
		rte_pktmbuf_free(k->cur);
	k->cur = NULL;
	rte_free(k->hs);
	k->hs = NULL;
	stk_tls_free(k->t);
	k->t = NULL;
	k->pt_n = 0;
	stk_wss_fini(&k->ws);
	k->state = FC_FREE;
}

/* the client's frames: its messages (a venue answers subscriptions), its
 * close (answered by the session: the client is dropped), a protocol error
 * (the session sent the close with the code) */
static void
fs_client_frames(struct fs_ctx *x, struct fs_client *k, uint8_t *p, uint8_t *end)
{
	struct stk_wss_msg w;

	for (;;) {
		switch (stk_wss_recv(&k->ws, &p, end, &w)) {
		case STK_WSS_NEED_MORE:
			return;
		case STK_WSS_MSG:
			lcp_count(x->st, FS_C_CLIENT_MSGS, 1);
			if (x->c.echo && stk_wss_send(&k->ws, w.opcode, w.data, w.len) == 0) {
				fs_push(x, k);
				lcp_count(x->st, FS_C_ECHOED, 1);
			}
			if (x->c.venue != FS_VENUE_LCPIPE) {
				char r[FS_VENUE_CTL_MAX];

				fs_venue_ctl(x, k, r, fs_venue_reply(x->c.venue, w.data, w.len, fs_now_ns(x), r,
								     sizeof(r)));
			}
			if (w.how != STK_WSS_IN_CHUNK)
				free(w.buf.data);
			if (k->state == FC_FREE)
				return; /* TLS failed */
			continue;
		case STK_WSS_PING:
		case STK_WSS_PONG:
			continue;
		case STK_WSS_CLOSE:
			lcp_log(x->st, LCP_LOG_INFO, "client 0x%x: close %u from the client%s", k->conn, w.close_code,
				w.answer ? " (the answer to ours)" : "");
			fs_close(x, k);
			fs_drop(x, k);
			return;
		case STK_WSS_ERROR:
			lcp_count(x->st, FS_C_FAIL_PROTOCOL, 1);
			lcp_log(x->st, LCP_LOG_WARNING, "client 0x%x: close %u: %s", k->conn, w.close_code, w.reason);
			fs_close(x, k);
			fs_drop(x, k);
			return;
		default: /* GONE: TLS failed, the client was dropped */
			return;
		}
	}
}

/* the client's plaintext: the upgrade request, then its frames */
static void
fs_on_plain(struct fs_ctx *x, struct fs_client *k, uint8_t *p, uint8_t *end)
{
	if (k->state == FC_HANDSHAKE) {
		size_t used = 0;
		int rc = stk_ws_server_request(k->hs, p, (size_t)(end - p), &used);
		struct stk_wss_conf wc;
		char resp[512];
		int rn;

		if (rc < 0) {
			lcp_count(x->st, FS_C_FAIL_HANDSHAKE, 1);
			lcp_log(x->st, LCP_LOG_WARNING, "client 0x%x: bad upgrade request: %s", k->conn, k->hs->err);
			rn = stk_ws_server_reject(resp, sizeof(resp), k->hs->err);
			if (rn > 0)
				fs_put_ctl(x, k, resp, (size_t)rn);
			fs_close(x, k);
			fs_drop(x, k);
			return;
		}
		if (rc == 0)
			return;
		rn = stk_ws_server_response(k->hs, resp, sizeof(resp), NULL);
		fs_put_ctl(x, k, resp, (size_t)rn);
		if (k->state == FC_FREE)
			return; /* TLS failed sending it */
		wc = (struct stk_wss_conf){ .server = true, .max_msg = 1 << 20, .check_utf8 = true, .pmd = &k->hs->pmd,
					    .compress = true, .deflate_level = x->c.deflate_level, .ops = &fs_wss_ops,
					    .user = k, .stats = &x->wss };
		if (stk_wss_init(&k->ws, &wc) != 0) {
			lcp_count(x->st, FS_C_FAIL_HANDSHAKE, 1);
			lcp_log(x->st, LCP_LOG_ERR, "client 0x%x: no memory for the session's (de)compressor", k->conn);
			fs_close(x, k);
			fs_drop(x, k);
			return;
		}
		if (k->hs->pmd.on)
			lcp_count(x->st, FS_C_DEFLATE_CLIENTS, 1);
		rte_free(k->hs);
		k->hs = NULL;
		k->state = FC_STREAM;
		k->next_send = rte_rdtsc();
		k->next_ping = k->next_send + x->ping_tsc;
		lcp_count(x->st, FS_C_HANDSHAKES, 1);
		p += used;
		if (x->c.venue != FS_VENUE_LCPIPE) {
			char h[FS_VENUE_CTL_MAX];

			fs_venue_ctl(x, k, h, fs_venue_hello(x->c.venue, fs_now_ns(x), h, sizeof(h)));
		}
	}
	if (p < end && k->state != FC_FREE)
		fs_client_frames(x, k, p, end);
}

void
fs_tls_failed(struct fs_ctx *x, struct fs_client *k)
{
	enum stk_tls_fail f = stk_tls_failure(k->t);

	lcp_count(x->st, f == STK_TLS_FAIL_ALERT ? FS_C_TLS_FAIL_ALERT
			 : f == STK_TLS_FAIL_TX  ? FS_C_TLS_FAIL_TX
						  : FS_C_TLS_FAIL_PROTOCOL,
		  1);
	lcp_log(x->st, LCP_LOG_WARNING, "client 0x%x: TLS %s: %s", k->conn, stk_tls_fail_name(f), stk_tls_error(k->t));
	fs_cmd(x, k->conn, f == STK_TLS_FAIL_TX ? LCP_STREAM_CMD_ABORT : LCP_STREAM_CMD_CLOSE);
	fs_drop(x, k);
}

/* wss: a segment of ciphertext; plaintext read into a buffer of this lcore's
 * stack (feedsim parses the client's few bytes there) */
static void
fs_tls_data(struct fs_ctx *x, struct fs_client *k, struct rte_mbuf *m)
{
	struct stk_tls *t = k->t;
	uint8_t buf[4096];
	int r = stk_tls_input(t, rte_pktmbuf_mtod(m, const uint8_t *), m->data_len);
	ssize_t n;

	if (r == STK_TLS_FAILED) {
		fs_tls_failed(x, k);
		return;
	}
	if (r == STK_TLS_OPENED) {
		k->state = FC_HANDSHAKE;
		lcp_count(x->st, FS_C_TLS_HANDSHAKES, 1);
		if (stk_tls_resumed(t))
			lcp_count(x->st, FS_C_TLS_RESUMED, 1);
	}
	while ((n = stk_tls_read(t, buf, sizeof(buf))) > 0) {
		fs_on_plain(x, k, buf, buf + n);
		if (k->t != t)
			return; /* dropped */
	}
	if (n == STK_TLS_CLOSED) {
		fs_close(x, k);
		fs_drop(x, k);
	} else if (n == STK_TLS_FAILED) {
		fs_tls_failed(x, k);
	}
}

static void
fs_process(struct lcp_stage *st, void *ctx, unsigned port, void **objs, unsigned n)
{
	struct fs_ctx *x = ctx;

	for (unsigned i = 0; i < n; i++) {
		struct rte_mbuf *m = objs[i];
		struct lcp_stream_meta *meta = lcp_stream_meta(m);
		struct fs_client *k = fs_find(x, meta->conn);

		switch (meta->ev) {
		case LCP_STREAM_EV_ACCEPTED: {
			struct fs_client *f = NULL;

			for (unsigned j = 0; j < x->max_clients && f == NULL; j++)
				if (x->cl[j].state == FC_FREE)
					f = &x->cl[j];
			if (f == NULL) {
				lcp_count(st, FS_C_DROP_TOO_MANY_CLIENTS, 1);
				fs_cmd(x, meta->conn, LCP_STREAM_CMD_ABORT);
				break;
			}
			memset(f->seq, 0, (size_t)x->c.symbols * x->seq_words * sizeof(f->seq[0]));
			f->hs = rte_zmalloc("fs_hs", sizeof(*f->hs), 0);
			if (f->hs == NULL) {
				fs_cmd(x, meta->conn, LCP_STREAM_CMD_ABORT);
				break;
			}
			stk_ws_server_init(f->hs, x->c.deflate ? &x->pmd : NULL);
			f->conn = meta->conn;
			f->rx_off = 0;
			f->tx_full = false;
			f->state = FC_HANDSHAKE;
			f->sent = 0;
			f->pr_i = 0;
			f->pr_off = 0;
			f->cur = NULL;
			f->pt_n = 0;
			lcp_count(st, FS_C_CLIENTS, 1);
			if (x->tls != NULL) {
				f->t = stk_tls_new(x->tls, &fs_tls_ops, f, NULL, NULL);
				if (f->t == NULL) {
					lcp_log(st, LCP_LOG_ERR, "client 0x%x: no memory for a TLS session", f->conn);
					fs_cmd(x, meta->conn, LCP_STREAM_CMD_ABORT);
					fs_drop(x, f);
					break;
				}
				f->state = FC_TLS;
			}
			break;
		}
		case LCP_STREAM_EV_DATA:
			if (k != NULL && unlikely(meta->off != k->rx_off)) {
				/* stream bytes lost between tcp and us: nothing after
				 * the hole can be parsed */
				lcp_count(st, FS_C_FAIL_STREAM_GAP, 1);
				lcp_log(st, LCP_LOG_WARNING, "client 0x%x: %u byte(s) of its stream lost before us: closing",
					k->conn, meta->off - k->rx_off);
				fs_close(x, k);
				fs_drop(x, k);
				break;
			}
			if (k != NULL)
				k->rx_off += rte_pktmbuf_pkt_len(m);
			if (k == NULL)
				lcp_count(st, FS_C_EVENTS_OLD_CONN, 1);
			else if (k->t != NULL)
				fs_tls_data(x, k, m);
			else
				fs_on_plain(x, k, rte_pktmbuf_mtod(m, uint8_t *), rte_pktmbuf_mtod(m, uint8_t *) + m->data_len);
			break;
		case LCP_STREAM_EV_SEND_FULL:
			/* the client reads slower than we send: hold its ticks */
			if (k != NULL) {
				k->tx_full = true;
				lcp_count(st, FS_C_SEND_FULL, 1);
			}
			break;
		case LCP_STREAM_EV_SEND_ROOM:
			if (k != NULL)
				k->tx_full = false;
			break;
		case LCP_STREAM_EV_PEER_CLOSED:
			if (k != NULL) {
				fs_close(x, k);
				fs_drop(x, k);
			}
			break;
		case LCP_STREAM_EV_CLOSED:
		case LCP_STREAM_EV_RESET:
		case LCP_STREAM_EV_TIMEOUT:
			if (k != NULL)
				fs_drop(x, k);
			break;
		case LCP_STREAM_EV_ERROR:
			if (meta->conn == 0 || k == NULL)
				lcp_log(st, LCP_LOG_ERR, "tcp refused a command: %s", strerror(meta->reason));
			break;
		default:
			break;
		}
		rte_pktmbuf_free(m);
	}
	fs_flush(x);
}

/* the shutdown (engine.linger), on every turn: streaming clients get close
 * 1001 (and are dropped when their close frame answers it, fs_client_frames),
 * clients in their TLS or upgrade handshake are closed; returns the clients
 * still there */
static unsigned
fs_linger(struct lcp_stage *st, void *ctx, bool last)
{
	struct fs_ctx *x = ctx;
	unsigned n = 0;

	RTE_SET_USED(last);
	for (unsigned i = 0; i < x->max_clients; i++) {
		struct fs_client *k = &x->cl[i];

		if (k->state == FC_STREAM) {
			stk_wss_close(&k->ws, STK_WS_CLOSE_GOING_AWAY, NULL);
			lcp_count(st, FS_C_CLOSES, 1);
			if (k->state == FC_STREAM) /* not failed by TLS meanwhile */
				k->state = FC_CLOSING;
		} else if (k->state == FC_HANDSHAKE || k->state == FC_TLS) {
			fs_close(x, k);
			fs_drop(x, k);
		}
		n += k->state != FC_FREE;
	}
	fs_publish(x);
	fs_flush(x);
	return n;
}

static const struct lcp_stage_ops fs_ops = {
	.ports = fs_ports,
	.counters = fs_counters,
	.validate = fs_validate,
	.init = fs_init,
	.poll = fs_poll,
	.process = fs_process,
	.fini = fs_fini,
	.ctx_size = sizeof(struct fs_ctx),
	.linger = fs_linger,
};

LCP_PLUGIN_EXPORT const struct lcp_plugin lcp_plugin_descriptor = {
	LCP_PLUGIN_HEADER(LCP_KIND_STAGE, "feedsim"),
	.version = "1.0.0",
	.summary = "exchange simulator: WebSocket server (ws or wss) on the tcp stage streaming JSON ticks",
	.options = fs_opts,
	.conf_size = sizeof(struct fs_conf),
	.ops = &fs_ops,
};
