/* SPDX-License-Identifier: BSD-3-Clause
 * ws_conn.c — a connection's life.
 *
 *   ws_connect            IDLE, its reconnect time come: ask the resolver for a
 *                         name (RESOLVING), or CONNECT to the address
 *   ws_next_addr          the next address of the name after a failed attempt;
 *                         false when none is left
 *   ws_on_connected       tcp CONNECTED: TLS (ws_tls.c) or the upgrade
 *   ws_upgrade            HANDSHAKE: the GET, Host carrying the URL's name
 *   ws_on_open            the 101 accepted: OPEN, subscriptions start
 *   ws_conn_timers        OPEN: pong deadline, pings, paced subscriptions,
 *                         the stale-feed watchdog
 *   ws_fail               close frame (if open) and FIN, or RST; reconnect
 *   ws_ask_stop           stop_after_msgs / stop_on_close: ask the engine to
 *                         stop, and reconnect no more
 *   ws_schedule_reconnect IDLE for a delay drawn from the backoff (full
 *                         jitter), which doubles per failure and starts over
 *                         only after a connection stayed open reconnect_reset_ms
 *   ws_close_tcp          close_notify first when TLS is up, then CLOSE / ABORT
 *   ws_close_stopping     the shutdown (ws_linger): close 1001 on an open
 *                         connection, TCP's close on one in its TLS or upgrade
 *                         handshake; CLOSING until ws_close_done
 */
#include <stdio.h>
#include <string.h>

#include <rte_malloc.h>

#include "ws.h"

void
ws_close_tcp(struct ws_ctx *x, struct ws_conn *c, bool abort)
{
	struct rte_mbuf *m;

	if (c->tcp == 0)
		return;
	if (!abort && c->t != NULL && stk_tls_is_open(c->t))
		stk_tls_close(c->t); /* a failure here is the connection's end anyway */
	m = ws_cmd(x, c, abort ? LCP_STREAM_CMD_ABORT : LCP_STREAM_CMD_CLOSE);
	if (m != NULL)
		ws_tx(x, m);
}

void
ws_ask_stop(struct ws_ctx *x, const char *reason)
{
	x->stop_asked = true;
	lcp_stage_request_stop(x->st, reason);
	/* no reconnect from now on: the engine's shutdown may begin turns later,
	 * and a reconnect may already be due (a server that closed in this burst) */
	x->stopping = true;
}

void
ws_schedule_reconnect(struct ws_ctx *x, struct ws_conn *c, const char *why)
{
	uint64_t now;
	uint32_t delay;

	if (x->stop_on_close && c->t_opened != 0 && !x->stop_asked) {
		lcp_log(x->st, LCP_LOG_INFO, "conn %u (%s%s): %s; ending the run (stop_on_close)", c->idx, c->host,
			c->path, why);
		ws_ask_stop(x, "ws stop_on_close");
	}
	if (c->hs != NULL) {
		rte_free(c->hs);
		c->hs = NULL;
	}
	stk_tls_free(c->t); /* the ticket stays for the next attempt */
	c->t = NULL;
	ws_session_end(c);
	c->state = WC_IDLE;
	c->tcp = 0;
	c->gen++; /* whatever the old attempt still reports is stale from now on */
	c->t_pong = 0;
	c->t_sub = 0;
	now = ws_now();
	/* a connection that stayed up long enough proves the server takes us:
	 * start the backoff over; one kicked at once keeps it growing */
	if (c->t_opened != 0 && now - c->t_opened >= (uint64_t)x->rc_reset_ms * x->hz_ms)
		c->backoff_ms = x->rc_min;
	c->t_opened = 0;
	delay = c->backoff_ms;
	if (x->rc_jitter && c->backoff_ms > x->rc_min) {
		uint8_t r[4];
		uint32_t u;

		ws_rand(x, r, sizeof(r));
		memcpy(&u, r, sizeof(u));
		delay = x->rc_min + u % (c->backoff_ms - x->rc_min + 1);
	}
	c->t_reconnect = now + delay * x->hz_ms;
	if (x->stopping) {
		lcp_log(x->st, LCP_LOG_WARNING, "conn %u (%s%s): %s; not reconnecting (stopping)", c->idx, c->host,
			c->path, why);
		return;
	}
	lcp_log(x->st, LCP_LOG_WARNING, "conn %u (%s%s): %s; reconnecting in %u ms", c->idx, c->host, c->path, why,
		delay);
	c->backoff_ms = c->backoff_ms * 2 > x->rc_max ? x->rc_max : c->backoff_ms * 2;
}

/* A DATA event that does not continue the stream where the last one ended:
 * bytes TCP delivered (and acknowledged) were lost between the tcp stage and
 * us (a ring between lcores dropped stream mbufs: the producer's
 * <port>.drop_ring_full). Nothing after the hole can be framed: fail the
 * connection (close 1011, reconnect) rather than parse across it. */
void
ws_stream_gap(struct ws_ctx *x, struct ws_conn *c, uint32_t off)
{
	char why[160];

	lcp_count(x->st, WS_C_FAIL_STREAM_GAP, 1);
	snprintf(why, sizeof(why),
		 "%u byte(s) of the TCP stream lost between tcp and ws (a ring dropped stream data: "
		 "see drop_ring_full of the tcp stage's data link)", off - c->rx_off);
	ws_fail(x, c, STK_WS_CLOSE_INTERNAL, why);
}

/* fail the connection: close frame with code if open, then FIN; RST if no code */
void
ws_fail(struct ws_ctx *x, struct ws_conn *c, uint16_t code, const char *why)
{
	if (c->state == WC_OPEN && code != 0 && !c->ws.close_sent) {
		uint32_t gen = c->gen;

		stk_wss_close(&c->ws, code, NULL);
		if (c->gen != gen)
			return; /* sending failed the connection already */
	}
	/* the peer's reply does not matter */
	ws_close_tcp(x, c, code == 0);
	if (code != 0)
		lcp_log(x->st, LCP_LOG_WARNING, "conn %u: close %u: %s", c->idx, code, why);
	lcp_count(x->st, WS_C_RECONNECTS, 1);
	ws_schedule_reconnect(x, c, why);
}

/* CONNECT to c->ip; a fresh attempt (generation) and deadline */
static void
ws_connect_ip(struct ws_ctx *x, struct ws_conn *c)
{
	struct rte_mbuf *m;

	c->gen++;
	m = ws_cmd(x, c, LCP_STREAM_CMD_CONNECT);
	if (m == NULL) {
		c->state = WC_IDLE; /* counted in ws_cmd; the next tick tries again */
		return;
	}
	ws_tx(x, m);
	c->state = WC_CONNECTING;
	c->t_deadline = ws_now() + x->hs_ms * x->hz_ms;
	lcp_count(x->st, WS_C_CONNECTS, 1);
}

void
ws_connect(struct ws_ctx *x, struct ws_conn *c)
{
	if (!c->named) {
		ws_connect_ip(x, c);
		return;
	}
	c->state = WC_RESOLVING;
	c->t_deadline = ws_now() + x->hs_ms * x->hz_ms;
	ws_resolver_ask(x, c);
}

/* the resolver answered c's question (poll saw rs_gen == rq_gen) */
void
ws_on_resolved(struct ws_ctx *x, struct ws_conn *c)
{
	char why[320];

	if (c->rs_err != 0 || c->rs_n == 0) {
		snprintf(why, sizeof(why), "cannot resolve %s: %s", c->host, ws_resolve_strerror(c->rs_err));
		lcp_count(x->st, WS_C_FAIL_RESOLVE, 1);
		lcp_count(x->st, WS_C_RECONNECTS, 1);
		ws_schedule_reconnect(x, c, why);
		return;
	}
	lcp_count(x->st, WS_C_RESOLVES, 1);
	c->next_addr = 0;
	ws_next_addr(x, c, NULL);
}

bool
ws_next_addr(struct ws_ctx *x, struct ws_conn *c, const char *why)
{
	char a[16];
	const uint8_t *b;

	if (!c->named || c->next_addr >= c->rs_n)
		return false;
	if (why != NULL) {
		b = (const uint8_t *)&c->ip;
		snprintf(a, sizeof(a), "%u.%u.%u.%u", b[0], b[1], b[2], b[3]);
		lcp_log(x->st, LCP_LOG_WARNING, "conn %u (%s, %s): %s; trying the next address", c->idx, c->host, a,
			why);
	}
	if (c->t != NULL) {
		stk_tls_free(c->t);
		c->t = NULL;
	}
	c->tcp = 0;
	c->ip = c->rs_addr[c->next_addr++];
	ws_connect_ip(x, c);
	return true;
}

void
ws_on_connected(struct ws_ctx *x, struct ws_conn *c, uint32_t tcp)
{
	c->tcp = tcp;
	c->rx_off = 0;
	if (c->tls)
		ws_tls_start(x, c);
	else
		ws_upgrade(x, c);
}

void
ws_upgrade(struct ws_ctx *x, struct ws_conn *c)
{
	uint8_t raw[16];
	char key[25], req[6144];
	int n;

	c->state = WC_HANDSHAKE;
	c->hs = rte_zmalloc("ws_hs", sizeof(*c->hs), 0);
	if (c->hs == NULL) {
		ws_fail(x, c, 0, "no memory for the handshake");
		return;
	}
	ws_rand(x, raw, 16);
	stk_ws_key(raw, key);
	n = stk_ws_client_request_pmd(c->hs, req, sizeof(req), c->hosthdr, c->path, key, x->protocol, x->extra,
				      x->deflate ? &x->pmd_offer : NULL);
	if (n < 0) {
		ws_fail(x, c, 0, "the upgrade request does not fit 6 KiB");
		return;
	}
	if (!ws_send(x, c, (const uint8_t *)req, (size_t)n) && c->state == WC_HANDSHAKE)
		ws_fail(x, c, 0, "no mbufs for the upgrade request");
}

void
ws_on_open(struct ws_ctx *x, struct ws_conn *c)
{
	struct stk_ws_pmd pmd = c->hs->pmd;
	struct stk_wss_conf wc;

	rte_free(c->hs);
	c->hs = NULL;
	c->state = WC_OPEN;
	c->opens++;
	c->t_opened = c->t_last_msg = ws_now();
	/* we never compress what we send (subscriptions, a few a session): no
	 * compressor's window per connection */
	wc = (struct stk_wss_conf){ .server = false, .max_msg = x->max_msg, .check_utf8 = x->check_utf8,
				    .pmd = &pmd, .compress = false, .ops = &ws_wss_ops, .user = c,
				    .stats = &x->wss };
	if (stk_wss_init(&c->ws, &wc) != 0) {
		ws_fail(x, c, 0, "no memory for the session's inflater");
		return;
	}
	if (pmd.on)
		lcp_count(x->st, WS_C_DEFLATE_OPENS, 1);
	c->t_ping = x->ping_ms ? ws_now() + x->ping_ms * x->hz_ms : 0;
	lcp_count(x->st, WS_C_OPENS, 1);
	c->session_start = true;
	c->lost = 0; /* a new session starts over anyway (LCP_MSG_F_SESSION_START) */
	lcp_log(x->st, LCP_LOG_INFO, "conn %u: open %s%s%s%s", c->idx, c->tls ? "wss://" : "ws://", c->hosthdr, c->path,
		pmd.on ? " (permessage-deflate)" : "");
	c->sub_next = x->subscribe;
	ws_subscribe(x, c);
}

/* The subscription messages, one text frame per line, from c->sub_next: the
 * first at once, then one per subscribe_interval_ms (all at once with 0), from
 * poll's tick. A line that cannot be sent (no mbuf) is retried at the next
 * tick (subscribe_retries), never counted as sent. */
void
ws_subscribe(struct ws_ctx *x, struct ws_conn *c)
{
	const char *p = c->sub_next;

	c->t_sub = 0;
	while (p != NULL && *p) {
		const char *nl = strchr(p, '\n');
		size_t n = nl ? (size_t)(nl - p) : strlen(p);

		if (n > 0) {
			if (stk_wss_send(&c->ws, STK_WS_OP_TEXT, p, n) != 0) {
				if (c->state != WC_OPEN)
					return; /* TLS failed: the connection is gone */
				lcp_count(x->st, WS_C_SUBSCRIBE_RETRIES, 1);
				c->sub_next = p;
				c->t_sub = ws_now() + x->hz_ms;
				return;
			}
			lcp_count(x->st, WS_C_SUBSCRIBES_TX, 1);
		}
		p = nl ? nl + 1 : NULL;
		if (n > 0 && x->sub_ms != 0 && p != NULL && *p) {
			c->sub_next = p;
			c->t_sub = ws_now() + (uint64_t)x->sub_ms * x->hz_ms;
			return;
		}
	}
	c->sub_next = NULL;
}

/* an open connection's timers, from poll's millisecond tick; work done */
unsigned
ws_conn_timers(struct ws_ctx *x, struct ws_conn *c, uint64_t now)
{
	if (c->t_pong != 0 && now >= c->t_pong) {
		lcp_count(x->st, WS_C_FAIL_PONG_TIMEOUT, 1);
		ws_fail(x, c, STK_WS_CLOSE_GOING_AWAY, "pong timeout");
		return 1;
	}
	if (x->stale_ms != 0 && now - c->t_last_msg >= (uint64_t)x->stale_ms * x->hz_ms && now > c->t_last_msg) {
		char why[96];

		snprintf(why, sizeof(why), "no message for %u ms (stale feed)", x->stale_ms);
		lcp_count(x->st, WS_C_FAIL_STALE, 1);
		ws_fail(x, c, STK_WS_CLOSE_GOING_AWAY, why);
		return 1;
	}
	if (c->t_sub != 0 && now >= c->t_sub) {
		ws_subscribe(x, c);
		return 1;
	}
	if (c->t_ping != 0 && now >= c->t_ping) {
		uint64_t tsc = now;

		c->t_ping = now + x->ping_ms * x->hz_ms;
		if (c->t_pong == 0)
			c->t_pong = now + x->pong_ms * x->hz_ms;
		stk_wss_ping(&c->ws, &tsc, sizeof(tsc)); /* no mbuf: the pong timer still runs */
		return 1;
	}
	return 0;
}

/* CLOSING: our side of TCP (close_notify first over TLS, then the FIN), once */
void
ws_close_fin(struct ws_ctx *x, struct ws_conn *c)
{
	if (c->fin_sent)
		return;
	c->fin_sent = true;
	ws_close_tcp(x, c, false);
}

/* the end of a connection closed at shutdown: why == NULL when the close
 * handshake and the TCP close both completed */
void
ws_close_done(struct ws_ctx *x, struct ws_conn *c, const char *why)
{
	if (why == NULL)
		lcp_log(x->st, LCP_LOG_INFO, "conn %u (%s%s): closed (close handshake and TCP close complete)", c->idx,
			c->host, c->path);
	else
		lcp_log(x->st, LCP_LOG_WARNING, "conn %u (%s%s): close not completed: %s", c->idx, c->host, c->path,
			why);
	if (c->hs != NULL) {
		rte_free(c->hs);
		c->hs = NULL;
	}
	stk_tls_free(c->t);
	c->t = NULL;
	ws_session_end(c);
	c->state = WC_IDLE;
	c->tcp = 0;
	c->gen++;
	c->close_rcvd = c->fin_sent = false;
	c->t_pong = c->t_ping = c->t_sub = c->t_opened = 0;
}

/* The shutdown: an open connection sends close 1001 and waits for the
 * server's close frame, then closes TCP; one in its TLS or upgrade handshake
 * closes TCP at once; one resolving its name gives up. */
void
ws_close_stopping(struct ws_ctx *x, struct ws_conn *c)
{
	if (c->state == WC_RESOLVING) {
		c->state = WC_IDLE; /* no TCP yet; the resolver's answer is not looked at */
		return;
	}
	if (c->state == WC_TLS || c->state == WC_HANDSHAKE) {
		rte_free(c->hs);
		c->hs = NULL;
		lcp_log(x->st, LCP_LOG_INFO, "conn %u: stopping during the %s handshake: closing TCP", c->idx,
			c->state == WC_TLS ? "TLS" : "upgrade");
		c->close_from = c->state;
		c->state = WC_CLOSING;
		c->close_rcvd = true; /* no close frame on a connection never opened */
		c->fin_sent = false;
		ws_close_fin(x, c);
		return;
	}
	if (c->state != WC_OPEN)
		return;
	c->close_from = WC_OPEN;
	c->state = WC_CLOSING;
	c->close_rcvd = c->fin_sent = false;
	c->t_pong = c->t_ping = 0;
	if (!c->ws.close_sent) {
		uint32_t gen = c->gen;

		if (stk_wss_close(&c->ws, STK_WS_CLOSE_GOING_AWAY, NULL) == 0) {
			lcp_count(x->st, WS_C_STOP_CLOSES, 1);
			lcp_log(x->st, LCP_LOG_INFO, "conn %u: stopping: close 1001 sent", c->idx);
			return;
		}
		if (c->gen != gen)
			return; /* sending failed the connection (TLS) */
		/* no mbuf for the close frame (counted): TCP's close is all there is */
		c->close_rcvd = true;
		ws_close_fin(x, c);
	}
}
