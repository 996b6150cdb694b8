/* SPDX-License-Identifier: BSD-3-Clause
 * ws_tx.c — what the ws stage sends to the tcp stage.
 *
 *   ws_cmd          an empty command mbuf (CONNECT, CLOSE, ABORT, SEND)
 *   ws_send_bytes   bytes as SEND mbufs, all taken before any is sent
 *   ws_send         the WebSocket stream's bytes: plain, or through TLS
 *   ws_wss_tx       the session's frames (masked: the session is a client)
 *   ws_send_msgs    msgs from the "send" port, one frame each
 *   ws_rand         mask and handshake keys from a CSPRNG buffer
 */
#include <stdio.h>
#include <string.h>
#include <sys/random.h>

#include <openssl/rand.h>

#include <rte_malloc.h>
#include <rte_mempool.h>

#include "ws.h"

/* Mask keys (RFC 6455 5.3: unpredictable) come from OpenSSL's CSPRNG
 * (RAND_bytes: a DRBG in user space, seeded and reseeded from the kernel), a
 * whole buffer at a time: 1,024 frames' keys per refill, no system call on the
 * send path. The buffer is topped up from poll()'s millisecond tick once it runs
 * below WS_RND_LOW, so a frame pays for a refill only when more than ~900 go
 * out within one tick. RAND_bytes failing falls back to getrandom()
 * (rand_fallbacks); both failing (no entropy source at all) mixes the TSC into
 * the old bytes, which is not unpredictable: logged as an error. */
void
ws_rand_fill(struct ws_ctx *x)
{
	if (RAND_bytes(x->rnd, (int)sizeof(x->rnd)) != 1) {
		lcp_count(x->st, WS_C_RAND_FALLBACKS, 1);
		if (getrandom(x->rnd, sizeof(x->rnd), 0) != (ssize_t)sizeof(x->rnd)) {
			lcp_log(x->st, LCP_LOG_ERR, "no random source (RAND_bytes and getrandom "
				"failed): mask keys are predictable");
			for (unsigned k = 0; k < sizeof(x->rnd); k++)
				x->rnd[k] ^= (uint8_t)(rte_rdtsc() >> (k & 7));
		}
	}
	x->n_rnd = sizeof(x->rnd);
}

/* n random bytes, n <= WS_RND_BYTES (4 for a mask key, 16 for a handshake
 * key): one copy from the buffer, refilled first when it holds fewer */
void
ws_rand(struct ws_ctx *x, uint8_t *out, unsigned n)
{
	if (unlikely(x->n_rnd < n))
		ws_rand_fill(x);
	x->n_rnd -= n;
	memcpy(out, x->rnd + x->n_rnd, n);
}

void
ws_flush(struct ws_ctx *x)
{
	if (x->pend_msgs != 0) {
		x->delivered += x->pend_msgs;
		if (unlikely(x->stop_after != 0 && x->delivered >= x->stop_after) && !x->stop_asked) {
			lcp_log(x->st, LCP_LOG_INFO, "%" PRIu64 " messages delivered (stop_after_msgs %" PRIu64 "): ending the run",
				x->delivered, x->stop_after);
			ws_ask_stop(x, "ws stop_after_msgs");
		}
		lcp_count(x->st, WS_C_MSGS, x->pend_msgs);
		lcp_count(x->st, WS_C_MSG_BYTES, x->pend_bytes);
		if (x->pend_zc != 0)
			lcp_count(x->st, WS_C_MSGS_ZERO_COPY, x->pend_zc);
		x->pend_msgs = x->pend_bytes = x->pend_zc = 0;
	}
	/* once each: an emit never calls back into this stage (ABI 2.0) */
	lcp_obuf_flush(x->st, &x->tx);
	lcp_obuf_flush(x->st, &x->msg);
}

void
ws_tx(struct ws_ctx *x, struct rte_mbuf *m)
{
	lcp_obuf_put(x->st, &x->tx, m);
}

/* An mbuf shortage: counted every time (drop_no_mbuf), logged once per
 * episode — the first failure after mbufs were there — and its end logged
 * with how many failed in it (ws_mbuf_ok): with many connections an empty
 * pool would otherwise log a line per connection per tick. */
static void
ws_nombuf(struct ws_ctx *x, struct ws_conn *c, const char *what, size_t n)
{
	lcp_count(x->st, WS_C_DROP_NO_MBUF, 1);
	if (x->nombuf_run++ == 0)
		lcp_log(x->st, LCP_LOG_ERR,
			"conn %u: no mbuf for %s (%zu bytes): the packet pool is empty (drop_no_mbuf; "
			"not logged again until mbufs come back)", c->idx, what, n);
}

static inline void
ws_mbuf_ok(struct ws_ctx *x)
{
	if (unlikely(x->nombuf_run != 0)) {
		lcp_log(x->st, LCP_LOG_WARNING, "mbufs again, after %u allocation(s) failed", x->nombuf_run);
		x->nombuf_run = 0;
	}
}

/* an empty command mbuf (or a SEND to fill) for the connection's tcp
 * connection, with its cookie and address */
struct rte_mbuf *
ws_cmd(struct ws_ctx *x, struct ws_conn *c, unsigned cmd)
{
	struct rte_mbuf *m = lcp_stream_mbuf(x->pkt, cmd, c->tcp, 0);
	struct lcp_stream_meta *meta;

	if (m == NULL) {
		ws_nombuf(x, c, lcp_stream_ev_name(cmd), 0);
		return NULL;
	}
	ws_mbuf_ok(x);
	meta = lcp_stream_meta(m);
	meta->user = ws_cookie(c);
	meta->addr = c->ip;
	meta->port = c->port;
	return m;
}

/* bytes on the connection: one SEND per mbuf-full. All mbufs are taken before
 * any is sent, so a shortage never puts half a frame on the wire. */
bool
ws_send_bytes(struct ws_ctx *x, struct ws_conn *c, const uint8_t *p, size_t n)
{
	struct rte_mbuf *ms[64];
	size_t room = (size_t)(rte_pktmbuf_data_room_size(x->pkt) - RTE_PKTMBUF_HEADROOM);
	unsigned k = (unsigned)((n + room - 1) / room);

	if (k > 64 || rte_pktmbuf_alloc_bulk(x->pkt, ms, k) != 0) {
		ws_nombuf(x, c, "a send", n);
		return false;
	}
	ws_mbuf_ok(x);
	for (unsigned i = 0; i < k; i++) {
		struct rte_mbuf *m = ms[i];
		size_t q = n < room ? n : room;

		lcp_mbuf_set_rx_tsc(m, 0);
		*lcp_stream_meta(m) = (struct lcp_stream_meta){ .conn = c->tcp, .ev = LCP_STREAM_CMD_SEND,
								.user = ws_cookie(c), .addr = c->ip, .port = c->port };
		memcpy(rte_pktmbuf_append(m, (uint16_t)q), p, q);
		ws_tx(x, m);
		p += q;
		n -= q;
	}
	return true;
}

/* bytes of the WebSocket stream: as they are, or through the TLS session */
bool
ws_send(struct ws_ctx *x, struct ws_conn *c, const uint8_t *p, size_t n)
{
	if (c->t == NULL)
		return ws_send_bytes(x, c, p, n);
	if (stk_tls_write(c->t, p, n) == 0)
		return true;
	ws_tls_failed(x, c);
	return false;
}

/* ops.tx of the sessions: a frame (masked by the session's key while it is
 * copied, stk_ws_mask_copy), whole or not at all. Without TLS a frame that fits
 * one mbuf is built in it; otherwise (and always with TLS, whose records are
 * written from a buffer) it is built in one. -1 when it could not go out: no
 * mbuf (counted), or TLS failed (the connection is failed: its session is
 * finished before this returns). */
int
ws_wss_tx(void *user, const struct stk_wss_frame *f)
{
	struct ws_conn *c = user;
	struct ws_ctx *x = c->x;
	size_t h = f->hlen, n = f->len;
	uint8_t local[2048], *tmp, *d;
	bool ok;

	if (c->t == NULL && h + n <= (size_t)(rte_pktmbuf_data_room_size(x->pkt) - RTE_PKTMBUF_HEADROOM)) {
		struct rte_mbuf *m = ws_cmd(x, c, LCP_STREAM_CMD_SEND);

		if (m == NULL)
			return -1;
		d = (uint8_t *)rte_pktmbuf_append(m, (uint16_t)(h + n));
		memcpy(d, f->hdr, h);
		if (f->mask != NULL)
			stk_ws_mask_copy(d + h, f->payload, n, f->mask, 0);
		else
			memcpy(d + h, f->payload, n);
		ws_tx(x, m);
		return 0;
	}
	tmp = h + n <= sizeof(local) ? local : rte_malloc("ws_frame", h + n, 0);
	if (tmp == NULL) {
		lcp_count(x->st, WS_C_DROP_NO_MBUF, 1);
		return -1;
	}
	memcpy(tmp, f->hdr, h);
	if (f->mask != NULL)
		stk_ws_mask_copy(tmp + h, f->payload, n, f->mask, 0);
	else
		memcpy(tmp + h, f->payload, n);
	ok = ws_send(x, c, tmp, h + n);
	if (tmp != local)
		rte_free(tmp);
	return ok ? 0 : -1;
}

/* ops.rand: mask keys */
void
ws_wss_rand(void *user, uint8_t *out, unsigned n)
{
	struct ws_conn *c = user;

	ws_rand(c->x, out, n);
}

void
ws_send_msgs(struct ws_ctx *x, struct lcp_msg **ms, unsigned n)
{
	for (unsigned i = 0; i < n; i++) {
		struct lcp_msg *m = ms[i];

		if (m->conn_id < x->n_conns && x->conns[m->conn_id].state == WC_OPEN &&
		    !x->conns[m->conn_id].ws.close_sent) {
			if (stk_wss_send(&x->conns[m->conn_id].ws,
					 m->opcode == STK_WS_OP_BINARY ? STK_WS_OP_BINARY : STK_WS_OP_TEXT, m->data,
					 m->len) == 0)
				lcp_count(x->st, WS_C_MSGS_SENT, 1);
		} else {
			lcp_count(x->st, WS_C_DROP_SEND_NOT_OPEN, 1);
		}
		lcp_msg_free(m);
	}
	ws_flush(x);
}

