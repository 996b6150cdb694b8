/* SPDX-License-Identifier: BSD-3-Clause
 * ws_tls.c — wss://: TLS (stk/tls.h) between the tcp stage's stream and the
 * WebSocket stream, on the worker lcore, no kernel socket.
 *
 *   ws_tls_init     the stage's TLS context from the options (when any URL is
 *                   wss://): trust store, versions, ciphers, tickets, ALPN
 *   ws_tls_start    tcp CONNECTED: a session (SNI and the verified name: the
 *                   URL's host or tls_server_name; the connection's ticket),
 *                   ClientHello; state TLS
 *   ws_tls_data     a tcp DATA segment: ciphertext in, plaintext out into
 *                   mbufs of rx_buffer_size (a whole record each; the engine's
 *                   when they are all held), each handed to ws_on_plain() as
 *                   a stream buffer (messages inside it are zero copy from
 *                   there on); the handshake's end starts the upgrade
 *   ws_tls_failed   count the reason, close (the alert goes out first), reconnect
 *   ws_tls_publish  record and byte counts into the stage's counters
 *
 * Copies on the receive path. Once the WebSocket is open (tls_fast_path), the
 * fast path: each record is decrypted straight from the segment into mbufs
 * (one pass, the only copy), held by the session until its tag verified, then
 * handed to ws_on_plain() one mbuf at a time (ws_tls_rx_ops). Before that, and
 * for suites the fast path does not know: OpenSSL's path, the segment into its
 * record buffer (our BIO, stack/tls.c), decryption in place, the plaintext
 * into the mbuf (SSL_read). No allocation per record either way: a read that
 * finds nothing keeps its mbuf for the next one (x->spare, or the session's
 * spares). */
#include <stdio.h>
#include <string.h>

#include <rte_mbuf.h>

#include "tls_opts.h"
#include "ws.h"

static int
ws_tls_tx(void *user, const uint8_t *p, size_t n)
{
	struct ws_conn *c = user;

	return ws_send_bytes(c->x, c, p, n) ? 0 : -1;
}

static const struct stk_tls_ops ws_tls_ops = { .tx = ws_tls_tx };

int
ws_tls_init(struct ws_ctx *x, const struct ws_conf *c)
{
	struct stk_tls_conf tc = {
		.ca_file = c->ca_file,
		.ca_path = c->ca_path,
		.insecure = c->insecure,
		.resume = c->tls_resume,
		.alpn = true,
	};
	char err[256];

	lcp_tls_opts_apply(&tc, c->tls_min_version, c->tls_max_version, c->tls_ciphers, c->tls_ciphersuites);
	x->tls_fast = c->tls_fast_path;
	if (!ws_any_tls(x))
		return 0;
	x->tls = stk_tls_ctx_new(&tc, err, sizeof(err));
	if (x->tls == NULL) {
		lcp_log(x->st, LCP_LOG_ERR, "TLS: %s", err);
		return -EINVAL;
	}
	snprintf(x->server_name, sizeof(x->server_name), "%s", c->tls_server_name);
	if (c->insecure)
		lcp_log(x->st, LCP_LOG_WARNING, "insecure: the wss:// servers' certificates and names are NOT verified");
	return 0;
}

bool
ws_tls_start(struct ws_ctx *x, struct ws_conn *c)
{
	c->state = WC_TLS;
	c->tls_fast_tried = false;
	c->t = stk_tls_new(x->tls, &ws_tls_ops, c, x->server_name[0] ? x->server_name : c->host,
			   &c->ticket);
	if (c->t == NULL) {
		ws_fail(x, c, 0, "no memory for a TLS session");
		return false;
	}
	if (stk_tls_start(c->t) != 0) {
		ws_tls_failed(x, c);
		return false;
	}
	return true;
}

void
ws_tls_failed(struct ws_ctx *x, struct ws_conn *c)
{
	static const unsigned ctr[] = {
		[STK_TLS_FAIL_NONE] = WS_C_TLS_FAIL_PROTOCOL,  [STK_TLS_FAIL_VERIFY] = WS_C_TLS_FAIL_VERIFY,
		[STK_TLS_FAIL_ALERT] = WS_C_TLS_FAIL_ALERT,     [STK_TLS_FAIL_TIMEOUT] = WS_C_TLS_FAIL_TIMEOUT,
		[STK_TLS_FAIL_PROTOCOL] = WS_C_TLS_FAIL_PROTOCOL, [STK_TLS_FAIL_TX] = WS_C_TLS_FAIL_TX,
		[STK_TLS_FAIL_NOBUF] = WS_C_DROP_NO_MBUF,
	};
	enum stk_tls_fail f = stk_tls_failure(c->t);
	char why[320];

	lcp_count(x->st, ctr[f], 1);
	snprintf(why, sizeof(why), "TLS %s (%s): %s", c->state == WC_TLS ? "handshake failed" : "failed",
		 stk_tls_fail_name(f), stk_tls_error(c->t));
	/* FIN after whatever alert OpenSSL queued; RST when nothing can be sent */
	ws_close_tcp(x, c, f == STK_TLS_FAIL_TX || f == STK_TLS_FAIL_TIMEOUT);
	lcp_count(x->st, WS_C_RECONNECTS, 1);
	ws_schedule_reconnect(x, c, why);
}

static void
ws_tls_opened(struct ws_ctx *x, struct ws_conn *c)
{
	bool resumed = stk_tls_resumed(c->t);

	lcp_count(x->st, WS_C_TLS_HANDSHAKES, 1);
	if (resumed)
		lcp_count(x->st, WS_C_TLS_RESUMED, 1);
	lcp_log(x->st, LCP_LOG_INFO, "conn %u: %s %s%s%s", c->idx, stk_tls_version(c->t), stk_tls_cipher(c->t),
		resumed ? ", resumed" : "", stk_tls_alpn(c->t)[0] ? ", ALPN http/1.1" : "");
	ws_upgrade(x, c);
}

/* the end of the TLS stream or of the session (n: CLOSED or FAILED) */
static void
ws_tls_end(struct ws_ctx *x, struct ws_conn *c, ssize_t n)
{
	if (n == STK_TLS_CLOSED && c->state == WC_CLOSING) {
		if (!c->close_rcvd)
			lcp_log(x->st, LCP_LOG_WARNING, "conn %u: the server ended TLS before answering our close (1006)",
				c->idx);
		c->close_rcvd = true;
		ws_close_fin(x, c);
	} else if (n == STK_TLS_CLOSED) {
		ws_close_tcp(x, c, false);
		lcp_count(x->st, WS_C_RECONNECTS, 1);
		ws_schedule_reconnect(x, c, c->state == WC_OPEN ?
			"the server ended TLS (close_notify) without a close frame (1006)" :
			"the server ended TLS (close_notify) during the upgrade");
	} else if (n == STK_TLS_FAILED) {
		ws_tls_failed(x, c);
	}
}

/* an mbuf for plaintext: the one a read left, else one of rx_buffer_size,
 * else (all held by messages, or none configured) one of the engine's; NULL:
 * none at all */
static struct rte_mbuf *
ws_tls_mbuf(struct ws_ctx *x)
{
	struct rte_mbuf *pm = x->spare;

	x->spare = NULL;
	if (pm != NULL)
		return pm;
	if (x->rx_pool != NULL) {
		pm = rte_pktmbuf_alloc(x->rx_pool);
		if (likely(pm != NULL))
			return pm;
		lcp_count(x->st, WS_C_RX_BUFFERS_EMPTY, 1);
	}
	return rte_pktmbuf_alloc(x->pkt);
}

/* ---- the receive fast path's buffers ---- */

static void *
ws_tls_fast_get(void *user, uint8_t **p, size_t *cap)
{
	struct ws_conn *c = user;
	struct ws_ctx *x = c->x;
	struct rte_mbuf *pm = ws_tls_mbuf(x);

	if (pm == NULL) {
		/* the plaintext cannot wait outside the TLS stream: the session fails */
		lcp_log(x->st, LCP_LOG_ERR, "conn %u: no mbuf for TLS plaintext", c->idx);
		return NULL;
	}
	*p = rte_pktmbuf_mtod(pm, uint8_t *);
	*cap = rte_pktmbuf_tailroom(pm);
	return pm;
}

/* a verified record's plaintext (or part of it): on to the WebSocket, with
 * the rx TSC of the segment that completed the record */
static void
ws_tls_fast_deliver(void *user, void *buf, size_t n)
{
	struct ws_conn *c = user;
	struct rte_mbuf *pm = buf;

	pm->data_len = (uint16_t)n;
	pm->pkt_len = (uint32_t)n;
	lcp_mbuf_set_rx_tsc(pm, c->x->tls_rx_tsc);
	ws_on_plain(c->x, c, pm); /* may end the connection and free the session */
	rte_pktmbuf_free(pm);     /* messages hold their own references */
}

static void
ws_tls_fast_discard(void *user, void *buf)
{
	(void)user;
	rte_pktmbuf_free(buf);
}

static const struct stk_tls_rx_ops ws_tls_rx_ops = {
	.get = ws_tls_fast_get,
	.deliver = ws_tls_fast_deliver,
	.discard = ws_tls_fast_discard,
};

/* the WebSocket is open: ask for the fast path once */
static void
ws_tls_fast_ask(struct ws_ctx *x, struct ws_conn *c)
{
	int r;

	c->tls_fast_tried = true;
	r = stk_tls_fast_start(c->t, &ws_tls_rx_ops, c);
	if (r == 0)
		lcp_log(x->st, LCP_LOG_INFO, "conn %u: TLS receive fast path (%s)", c->idx, stk_tls_cipher(c->t));
	else
		lcp_log(x->st, LCP_LOG_INFO, "conn %u: no TLS receive fast path for %s %s: OpenSSL's read path",
			c->idx, stk_tls_version(c->t), stk_tls_cipher(c->t));
}

void
ws_tls_data(struct ws_ctx *x, struct ws_conn *c, struct rte_mbuf *seg)
{
	uint32_t gen = c->gen;
	int r = stk_tls_input(c->t, rte_pktmbuf_mtod(seg, const uint8_t *), seg->data_len);

	x->tls_rx_tsc = lcp_mbuf_rx_tsc(seg);
	if (r == STK_TLS_FAILED) {
		ws_tls_failed(x, c);
		return;
	}
	if (r == STK_TLS_OPENED) {
		ws_tls_opened(x, c);
		if (c->gen != gen)
			return;
	}
	for (;;) {
		struct rte_mbuf *pm;
		ssize_t n;

		if (stk_tls_fast_armed(c->t)) {
			/* everything left of the segment, through ws_tls_rx_ops */
			n = stk_tls_recv(c->t);
			if (n != STK_TLS_AGAIN && c->gen == gen && c->t != NULL)
				ws_tls_end(x, c, n);
			return;
		}
		pm = ws_tls_mbuf(x);
		if (pm == NULL) {
			/* the plaintext cannot wait outside the TLS stream: end the connection */
			lcp_count(x->st, WS_C_DROP_NO_MBUF, 1);
			ws_fail(x, c, 0, "no mbuf for TLS plaintext");
			return;
		}
		n = stk_tls_read(c->t, rte_pktmbuf_mtod(pm, uint8_t *), rte_pktmbuf_tailroom(pm));
		if (n <= 0) {
			x->spare = pm;
			ws_tls_end(x, c, n);
			return;
		}
		pm->data_len = (uint16_t)n;
		pm->pkt_len = (uint32_t)n;
		lcp_mbuf_set_rx_tsc(pm, lcp_mbuf_rx_tsc(seg));
		ws_on_plain(x, c, pm);
		rte_pktmbuf_free(pm); /* messages hold their own references */
		if (c->gen != gen || c->t == NULL)
			return;
		/* open now: the rest of the stream from the next record boundary */
		if (x->tls_fast && c->state == WC_OPEN && !c->tls_fast_tried)
			ws_tls_fast_ask(x, c);
	}
}

void
ws_tls_publish(struct ws_ctx *x)
{
	const struct stk_tls_stats *s;

	if (x->tls == NULL)
		return;
	s = stk_tls_ctx_stats(x->tls);
/* each counter gets what its field gained since the last publish */
#define WS_TLS_PUB(field, ctr)                                                 \
	do {                                                                   \
		if (s->field != x->tls_pub.field)                              \
			lcp_count(x->st, ctr, s->field - x->tls_pub.field);   \
	} while (0)
	WS_TLS_PUB(records_rx, WS_C_TLS_RECORDS_RX);
	WS_TLS_PUB(records_tx, WS_C_TLS_RECORDS_TX);
	WS_TLS_PUB(bytes_rx, WS_C_TLS_BYTES_RX);
	WS_TLS_PUB(bytes_tx, WS_C_TLS_BYTES_TX);
	WS_TLS_PUB(records_rx_fast, WS_C_TLS_RECORDS_RX_FAST);
	WS_TLS_PUB(tickets_ignored, WS_C_TLS_TICKETS_IGNORED);
#undef WS_TLS_PUB
	x->tls_pub = *s;
}

void
ws_tls_fini(struct ws_ctx *x)
{
	for (unsigned i = 0; i < x->n_conns; i++) {
		stk_tls_free(x->conns[i].t);
		x->conns[i].t = NULL;
		stk_tls_ticket_free(x->conns[i].ticket);
		x->conns[i].ticket = NULL;
	}
	if (x->spare != NULL)
		rte_pktmbuf_free(x->spare);
	x->spare = NULL;
	stk_tls_ctx_free(x->tls);
	x->tls = NULL;
}
