/* SPDX-License-Identifier: BSD-3-Clause
 * ws — WebSocket client stage: one or more connections to ws:// or wss://
 * URLs over the tcp stage, messages out as `msg` objects.
 *
 * Ports: "in" (stream from tcp.data), "tx" (stream to tcp.app: handshake,
 * subscriptions, pongs, pings, close), "msg" (msg out), "send" (msg in: sent
 * as frames on their connection, e.g. from sink_echo).
 *
 *   ws_init      URLs, options, the TLS context, msg and assembly pools
 *   ws_start     the name resolver thread (when a URL has a host name)
 *   ws_poll      connects, resolutions, reconnects with backoff, handshake
 *                timeouts, pings and pong timeouts (checked every millisecond)
 *   ws_process   events and payload from tcp: CONNECTED -> TLS or GET; DATA ->
 *                TLS records, the handshake response, then frames -> msgs;
 *                PEER_CLOSED / CLOSED / RESET / TIMEOUT / ERROR -> the next
 *                address of the name, or a reconnect
 *   ws_linger    the shutdown: close 1001 on every open connection, TCP's close
 *                on those in a handshake; done when each has the server's close
 *                frame and TCP closed (WC_CLOSING -> IDLE), or gave up
 *
 * The files of the stage and what each does: ws.h. Pings are answered with
 * pongs automatically; a close frame is answered and the connection re-opened. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_malloc.h>
#include <rte_mbuf.h>

#include "ws.h"

static const struct lcp_port_def ws_ports[] = {
	{ .name = "in", .dir = LCP_PORT_IN, .unit = LCP_UNIT_STREAM,
	  .flags = LCP_PORT_F_REQUIRED | LCP_PORT_F_RELEASES,
	  .doc = "stream events and payload from the tcp stage (tcp.data); what was read is released (flow control)",
	  /* a full segment of small ticks is a few dozen messages: the walk
	   * hands 8 at a time so metrics takes them while they are in cache
	   * (B13 at 64 B: 86 cycles/msg with whole bursts, 81-82 with 2-8) */
	  .burst = 8 },
	{ .name = "tx", .dir = LCP_PORT_OUT, .unit = LCP_UNIT_STREAM, .flags = LCP_PORT_F_REQUIRED,
	  .doc = "commands and bytes to the tcp stage (tcp.app)" },
	{ .name = "msg", .dir = LCP_PORT_OUT, .unit = LCP_UNIT_MSG, .doc = "decoded messages" },
	{ .name = "send", .dir = LCP_PORT_IN, .unit = LCP_UNIT_MSG,
	  .doc = "messages to send: payload as one frame (msg opcode, text if not 1/2) on connection conn_id" },
	LCP_PORT_END,
};

static const char *const ws_counters[] = { WS_COUNTERS(LCP_COUNTER_NAME) NULL };

static struct ws_conn *
ws_conn_of(struct ws_ctx *x, const struct lcp_stream_meta *meta)
{
	unsigned i = meta->user & 0xffff;

	if (i == 0 || i > x->n_conns)
		return NULL;
	return &x->conns[i - 1];
}

/* is this event about the connection's current attempt? */
static bool
ws_current(const struct ws_conn *c, const struct lcp_stream_meta *meta)
{
	if (c->state == WC_IDLE || c->state == WC_RESOLVING || (meta->user >> 16) != (c->gen & 0xffff))
		return false;
	return c->tcp == 0 || meta->conn == 0 || meta->conn == c->tcp;
}

/* how far the server got with its upgrade response, for the log */
static const char *
ws_hs_progress(const struct ws_conn *c)
{
	return c->hs == NULL || c->hs->have == 0 ? "before answering the upgrade"
						 : "in the middle of its upgrade response";
}

static void
ws_process(struct lcp_stage *st, void *ctx, unsigned port, void **objs, unsigned n)
{
	struct ws_ctx *x = ctx;

	if (port == WS_P_SEND) {
		ws_send_msgs(x, (struct lcp_msg **)objs, n);
		return;
	}
	for (unsigned i = 0; i < n; i++) {
		struct rte_mbuf *m = objs[i];
		struct lcp_stream_meta *meta = lcp_stream_meta(m);
		struct ws_conn *c = ws_conn_of(x, meta);

		if (unlikely(c == NULL || !ws_current(c, meta))) {
			/* a late event of an attempt we already gave up (normal after a
			 * close); one that connected after all is an orphan: reset it */
			lcp_count(st, WS_C_EVENTS_OLD_CONN, 1);
			if (meta->ev == LCP_STREAM_EV_CONNECTED && meta->conn != 0) {
				struct rte_mbuf *am = lcp_stream_mbuf(x->pkt, LCP_STREAM_CMD_ABORT, meta->conn, 0);

				if (am != NULL)
					ws_tx(x, am);
				else
					lcp_count(st, WS_C_DROP_NO_MBUF, 1);
			}
			rte_pktmbuf_free(m);
			continue;
		}
		switch (meta->ev) {
		case LCP_STREAM_EV_DATA:
			if (unlikely(meta->off != c->rx_off)) {
				ws_stream_gap(x, c, meta->off);
				break;
			}
			c->rx_off += rte_pktmbuf_pkt_len(m);
			ws_on_data(x, c, m);
			/* read: messages hold their own references to what they
			 * need, so these bytes no longer count in tcp's window */
			lcp_stream_release(x->credits, meta->conn, c->rx_off);
			break;
		case LCP_STREAM_EV_CONNECTED:
			if (c->state == WC_CONNECTING && x->stopping) {
				/* connected while we stop: no TLS, no upgrade, just TCP's close */
				c->tcp = meta->conn;
				c->rx_off = 0; /* a new stream: the last attempt's offset is not its */
				c->close_from = WC_CONNECTING;
				c->state = WC_CLOSING;
				c->close_rcvd = true;
				c->fin_sent = false;
				lcp_log(st, LCP_LOG_INFO, "conn %u: connected while stopping: closing TCP", c->idx);
				ws_close_fin(x, c);
			} else if (c->state == WC_CONNECTING) {
				ws_on_connected(x, c, meta->conn);
			}
			break;
		case LCP_STREAM_EV_PEER_CLOSED:
			if (c->state == WC_CLOSING) {
				if (!c->close_rcvd)
					lcp_log(st, LCP_LOG_WARNING,
						"conn %u: the server closed TCP before answering our close (1006)", c->idx);
				c->close_rcvd = true;
				ws_close_fin(x, c);
			} else if (c->state == WC_HANDSHAKE) {
				char why[128];

				/* the upgrade never completed: a failed handshake */
				snprintf(why, sizeof(why), "handshake failed: the server closed TCP (FIN) %s",
					 ws_hs_progress(c));
				lcp_count(st, WS_C_FAIL_HANDSHAKE, 1);
				ws_close_tcp(x, c, false);
				lcp_count(st, WS_C_RECONNECTS, 1);
				ws_schedule_reconnect(x, c, why);
			} else if (c->state == WC_TLS) {
				/* the TLS handshake never completed: a TLS failure */
				lcp_count(st, WS_C_TLS_FAIL_PROTOCOL, 1);
				ws_close_tcp(x, c, false);
				lcp_count(st, WS_C_RECONNECTS, 1);
				ws_schedule_reconnect(x, c, "TLS handshake failed: the server closed TCP (FIN) during it");
			} else if (c->state != WC_IDLE) {
				ws_close_tcp(x, c, false);
				lcp_count(st, WS_C_RECONNECTS, 1);
				ws_schedule_reconnect(x, c, "the server closed TCP without a close frame (1006)");
			}
			break;
		case LCP_STREAM_EV_CLOSED:
			if (c->state == WC_CLOSING)
				ws_close_done(x, c, c->close_rcvd ? NULL : "TCP closed before the server's close frame");
			break; /* otherwise after our close: reconnect already scheduled */
		case LCP_STREAM_EV_RESET:
		case LCP_STREAM_EV_TIMEOUT:
		case LCP_STREAM_EV_ERROR:
			if (c->state == WC_CLOSING) {
				char why[96];

				snprintf(why, sizeof(why), "tcp %s (%s)", lcp_stream_ev_name(meta->ev),
					 strerror(meta->reason));
				/* counted as it would have been a moment before the stop:
				 * a reset in a handshake is that handshake's failure */
				if (meta->ev == LCP_STREAM_EV_RESET && c->close_from == WC_TLS)
					lcp_count(st, WS_C_TLS_FAIL_PROTOCOL, 1);
				else if (meta->ev == LCP_STREAM_EV_RESET && c->close_from == WC_HANDSHAKE)
					lcp_count(st, WS_C_FAIL_HANDSHAKE, 1);
				else if (meta->ev != LCP_STREAM_EV_ERROR)
					lcp_count(st, WS_C_FAIL_TCP, 1);
				ws_close_done(x, c, why);
				break;
			}
			if (c->state == WC_TLS && meta->ev == LCP_STREAM_EV_RESET) {
				/* the server reset TCP in the middle of the TLS handshake */
				lcp_count(st, WS_C_TLS_FAIL_PROTOCOL, 1);
				lcp_count(st, WS_C_RECONNECTS, 1);
				ws_schedule_reconnect(x, c, "TLS handshake failed: the server reset TCP during it");
				break;
			}
			if (c->state == WC_HANDSHAKE && meta->ev == LCP_STREAM_EV_RESET) {
				char why[128];

				/* the server reset TCP in the middle of the upgrade */
				snprintf(why, sizeof(why), "handshake failed: the server reset TCP %s",
					 ws_hs_progress(c));
				lcp_count(st, WS_C_FAIL_HANDSHAKE, 1);
				lcp_count(st, WS_C_RECONNECTS, 1);
				ws_schedule_reconnect(x, c, why);
				break;
			}
			if (meta->ev == LCP_STREAM_EV_ERROR && meta->conn != 0 && c->state != WC_CONNECTING &&
			    meta->conn == c->tcp) {
				/* at shutdown the tcp stage may have reset first */
				lcp_log(st, lcp_stage_stopping(st) ? LCP_LOG_DEBUG : LCP_LOG_WARNING,
					"conn %u: tcp refused a command: %s", c->idx, strerror(meta->reason));
				break;
			}
			if (c->state != WC_IDLE) {
				char why[96];

				snprintf(why, sizeof(why), "tcp %s (%s)", lcp_stream_ev_name(meta->ev),
					 strerror(meta->reason));
				lcp_count(st, WS_C_FAIL_TCP, 1);
				/* a name's next address first, without backoff */
				if (c->state == WC_CONNECTING && ws_next_addr(x, c, why))
					break;
				lcp_count(st, WS_C_RECONNECTS, 1);
				ws_schedule_reconnect(x, c, why);
			}
			break;
		default:
			break;
		}
		rte_pktmbuf_free(m); /* messages hold their own references */
	}
	ws_tls_publish(x); /* the sessions' counts: at poll's tick */
	ws_flush(x);
}

static unsigned
ws_poll(struct lcp_stage *st, void *ctx)
{
	struct ws_ctx *x = ctx;
	uint64_t now = ws_now();
	unsigned work = 0;

	if (now < x->next_tick)
		return 0;
	x->next_tick = now + x->hz_ms;
	if (x->n_rnd < WS_RND_LOW)
		ws_rand_fill(x);
	for (unsigned i = 0; i < x->n_conns; i++) {
		struct ws_conn *c = &x->conns[i];

		switch (c->state) {
		case WC_IDLE:
			if (now >= c->t_reconnect && !x->stopping && !lcp_stage_stopping(st)) {
				ws_connect(x, c);
				work++;
			}
			break;
		case WC_RESOLVING:
			if (ws_resolver_answered(c)) {
				ws_on_resolved(x, c);
				work++;
			} else if (now >= c->t_deadline) {
				char why[320];

				snprintf(why, sizeof(why), "resolving %s took longer than handshake_timeout_ms",
					 c->host);
				lcp_count(st, WS_C_FAIL_RESOLVE, 1);
				lcp_count(st, WS_C_RECONNECTS, 1);
				ws_schedule_reconnect(x, c, why);
				work++;
			}
			break;
		case WC_CONNECTING:
			if (now >= c->t_deadline) {
				lcp_count(st, WS_C_FAIL_HANDSHAKE_TIMEOUT, 1);
				if (!ws_next_addr(x, c, "connect timed out"))
					ws_fail(x, c, 0, "connect timed out");
				work++;
			}
			break;
		case WC_TLS:
			if (now >= c->t_deadline) {
				stk_tls_fail_timeout(c->t);
				ws_tls_failed(x, c);
				work++;
			}
			break;
		case WC_HANDSHAKE:
			if (now >= c->t_deadline) {
				lcp_count(st, WS_C_FAIL_HANDSHAKE_TIMEOUT, 1);
				ws_fail(x, c, 0, "upgrade timed out");
				work++;
			}
			break;
		case WC_OPEN:
			work += ws_conn_timers(x, c, now);
			break;
		default:
			break;
		}
	}
	ws_publish(x);
	ws_flush(x);
	return work;
}

static int
ws_init(struct lcp_stage *st, const void *conf, void **ctx)
{
	const struct ws_conf *c = conf;
	struct ws_ctx *x = *ctx;
	char err[256];
	unsigned n_urls = 0;
	const char *p;

	for (p = c->url; *p; p++)
		n_urls += *p == ',';
	n_urls++;
	x->st = st;
	ws_msg_owner_init(x);
	x->pkt = lcp_stage_pktmbuf_pool(st);
	lcp_obuf_init(&x->tx, WS_P_TX, 64);
	lcp_obuf_init(&x->msg, WS_P_MSG, 64);
	x->n_conns = n_urls * c->connections;
	x->conns = lcp_stage_zmalloc(st, "the connection table", x->n_conns * sizeof(*x->conns));
	x->subscribe = strdup(c->subscribe);
	if (x->conns == NULL || x->subscribe == NULL)
		goto nomem;
	p = c->url;
	for (unsigned u = 0; u < n_urls; u++) {
		const char *comma = strchr(p, ',');
		size_t n = comma ? (size_t)(comma - p) : strlen(p);

		for (unsigned k = 0; k < c->connections; k++) {
			struct ws_conn *wc = &x->conns[u * c->connections + k];

			if (ws_parse_url(p, n, wc, err, sizeof(err)) < 0) {
				lcp_log(st, LCP_LOG_ERR, "%s", err);
				goto inval;
			}
			wc->x = x;
			wc->idx = u * c->connections + k;
			wc->backoff_ms = c->reconnect_min_ms;
		}
		p += n + (comma ? 1 : 0);
	}
	/* extra headers: "\n"-separated lines -> CRLF */
	{
		size_t o = 0;

		for (p = c->headers; *p && o + 3 < sizeof(x->extra); p++) {
			if (*p == '\n') {
				x->extra[o++] = '\r';
				x->extra[o++] = '\n';
			} else {
				x->extra[o++] = *p;
			}
		}
		if (o > 0 && (o < 2 || x->extra[o - 1] != '\n')) {
			x->extra[o++] = '\r';
			x->extra[o++] = '\n';
		}
		x->extra[o] = '\0';
	}
	snprintf(x->protocol, sizeof(x->protocol), "%s", c->protocol);
	x->ping_ms = c->ping_interval_ms;
	x->pong_ms = c->pong_timeout_ms;
	x->hs_ms = c->handshake_timeout_ms;
	x->rc_min = c->reconnect_min_ms;
	x->rc_max = c->reconnect_max_ms;
	x->rc_jitter = c->reconnect_jitter;
	x->stop_after = c->stop_after_msgs;
	x->stop_on_close = c->stop_on_close;
	x->rc_reset_ms = c->reconnect_reset_ms;
	x->stale_ms = c->stale_timeout_ms;
	x->sub_ms = c->subscribe_interval_ms;
	x->max_msg = c->max_msg;
	x->check_utf8 = c->check_utf8;
	x->deflate = c->deflate;
	x->pmd_offer = (struct stk_ws_pmd){ .on = true, .server_max_window_bits = (uint8_t)c->deflate_window_bits,
					    .server_no_context_takeover = c->deflate_no_context_takeover };
	x->hz_ms = rte_get_tsc_hz() / 1000;
	x->asm_size = c->assembly_size;
	x->asm_heap_fallback = c->on_pool_empty == WS_POOL_EMPTY_HEAP;
	x->pool_wait = (uint64_t)c->pool_wait_us * rte_get_tsc_hz() / 1000000;
	x->msgs = lcp_pool_create(st, "msgs", sizeof(struct ws_msg), c->msgs, 0);
	if (x->msgs == NULL)
		goto nomem;
	x->asm_pool = lcp_pool_create(st, "assembly", c->assembly_size, c->assembly_buffers, 0);
	if (x->asm_pool == NULL) {
		lcp_pool_free(x->msgs);
		goto nomem;
	}
	if (ws_rx_pool_init(x, c) < 0) {
		lcp_pool_free(x->msgs);
		lcp_pool_free(x->asm_pool);
		goto nomem;
	}
	if (ws_tls_init(x, c) < 0) {
		lcp_pool_free(x->msgs);
		lcp_pool_free(x->asm_pool);
		goto inval;
	}
	return 0;
inval:
	free(x->subscribe);
	rte_free(x->conns);
	return -EINVAL;
nomem:
	free(x->subscribe);
	rte_free(x->conns);
	return -ENOMEM;
}

static int
ws_start(struct lcp_stage *st, void *ctx)
{
	struct ws_ctx *x = ctx;

	x->credits = lcp_stream_credits(st, WS_P_IN); /* NULL: tcp does not ask */
	return ws_resolver_start(ctx);
}

/* The shutdown (engine.linger), on every turn until it returns 0: open
 * connections send close 1001, those in a handshake close TCP
 * (ws_close_stopping); each is done when the server's close frame came and TCP
 * closed (ws_close_done), or it gave up. Nothing reconnects any more. */
static unsigned
ws_linger(struct lcp_stage *st, void *ctx, bool last)
{
	struct ws_ctx *x = ctx;
	unsigned n = 0;

	RTE_SET_USED(st);
	RTE_SET_USED(last);
	x->stopping = true;
	for (unsigned i = 0; i < x->n_conns; i++) {
		struct ws_conn *c = &x->conns[i];

		if (c->state == WC_OPEN || c->state == WC_TLS || c->state == WC_HANDSHAKE ||
		    c->state == WC_RESOLVING)
			ws_close_stopping(x, c);
		n += c->state != WC_IDLE;
	}
	ws_publish(x);
	ws_flush(x);
	return n;
}

static void
ws_stop(struct lcp_stage *st, void *ctx)
{
	struct ws_ctx *x = ctx;

	for (unsigned i = 0; i < x->n_conns; i++) {
		struct ws_conn *c = &x->conns[i];

		lcp_log(st, LCP_LOG_INFO, "conn %u %s%s: %" PRIu64 " messages, %" PRIu64 " bytes, %" PRIu64 " opens",
			c->idx, c->hosthdr, c->path, c->msgs, c->bytes, c->opens);
		if (c->state == WC_OPEN && !c->ws.close_sent) {
			if (stk_wss_close(&c->ws, STK_WS_CLOSE_GOING_AWAY, NULL) == 0)
				lcp_count(st, WS_C_STOP_CLOSES, 1);
		} else if (c->state == WC_CLOSING && c->ws.close_sent) {
			/* a WebSocket close handshake that did not finish */
			lcp_count(st, WS_C_FAIL_CLOSE_UNFINISHED, 1);
			lcp_log(st, LCP_LOG_WARNING,
				"conn %u: close not finished when the pipeline stopped (engine.linger): waiting for %s",
				c->idx, !c->close_rcvd ? "the server's close frame" : "TCP to close");
		} else if (c->state == WC_CLOSING) {
			/* closed in its handshake: no WebSocket session to end */
			lcp_log(st, LCP_LOG_WARNING,
				"conn %u: TCP close (in the handshake) not finished when the pipeline stopped (engine.linger)",
				c->idx);
		}
	}
	ws_publish(x);
	ws_flush(x);
}

static void
ws_fini(struct lcp_stage *st, void *ctx)
{
	struct ws_ctx *x = ctx;

	ws_resolver_stop(x);
	for (unsigned i = 0; i < x->n_conns; i++) {
		rte_free(x->conns[i].hs);
		ws_session_end(&x->conns[i]);
	}
	ws_tls_fini(x);
	for (unsigned i = 0; i < x->tx.n; i++)
		rte_pktmbuf_free(x->tx.objs[i]);
	for (unsigned i = 0; i < x->msg.n; i++)
		lcp_msg_free(x->msg.objs[i]);
	if (x->mcache_n != 0)
		lcp_pool_put_bulk(x->msgs, x->mcache, x->mcache_n);
	lcp_pool_free(x->msgs); /* reports objects never given back */
	lcp_pool_free(x->asm_pool);
	free(x->subscribe);
	rte_free(x->conns);
}

static const struct lcp_stage_ops ws_ops = {
	.ports = ws_ports,
	.counters = ws_counters,
	.validate = ws_validate,
	.init = ws_init,
	.start = ws_start,
	.poll = ws_poll,
	.process = ws_process,
	.stop = ws_stop,
	.fini = ws_fini,
	.ctx_size = sizeof(struct ws_ctx),
	.linger = ws_linger,
};

LCP_PLUGIN_EXPORT const struct lcp_plugin lcp_plugin_descriptor = {
	LCP_PLUGIN_HEADER(LCP_KIND_STAGE, "ws"),
	.version = "1.0.0",
	.summary = "WebSocket client (ws://, wss://) over the tcp stage: TLS, handshake, subscriptions, pings, reconnects, msgs out",
	.options = ws_opts,
	.conf_size = sizeof(struct ws_conf),
	.ops = &ws_ops,
};
