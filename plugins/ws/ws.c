/* SPDX-License-Identifier: BSD-3-Clause
 * ws — WebSocket client stage: one or more connections to ws:// URLs over the
 * tcp stage, messages out as `msg` objects.
 *
 * Ports: "in" (stream from tcp.data), "tx" (stream to tcp.app: handshake,
 * subscriptions, pongs, pings, close), "msg" (msg out), "send" (msg in: sent
 * as frames on their connection, e.g. from sink_echo).
 *
 *   ws_init      URLs, options, msg pool
 *   ws_poll      connects, reconnects with backoff, handshake timeouts,
 *                pings and pong timeouts (checked every millisecond)
 *   ws_process   events and payload from tcp: CONNECTED -> GET; DATA ->
 *                handshake response, then frames (stk_ws_dec_next) -> msgs;
 *                PEER_CLOSED / CLOSED / RESET / TIMEOUT / ERROR -> reconnect
 *   ws_linger    shutdown: close 1001 on every open connection, TCP close on
 *                those still in their upgrade; done once each has the
 *                server's close frame and its TCP closed (WC_CLOSING), or gave up
 *
 * A message wholly inside one TCP segment is handed on by reference: its
 * lcp_msg points into the segment's mbuf, whose reference count it holds. A
 * message that spans segments is assembled into a buffer from the stage's
 * assembly pool (the pool strategy, assembly_size bytes each); one that outgrows
 * it moves to an rte_malloc buffer grown by doubling up to max_msg
 * (msgs_assembled_heap). The msg owns the buffer. msg objects come from a pool
 * too, so the pool strategy in the config decides where both live. Either way the msg carries the
 * rx TSC of the segment that completed it. Pings are answered with pongs
 * automatically; a close frame is answered and the connection re-opened. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <arpa/inet.h>

#include <openssl/rand.h>

#include <rte_cycles.h>
#include <rte_errno.h>
#include <rte_malloc.h>
#include <rte_mbuf.h>
#include <rte_mempool.h>

#include <lcp/lcp.h>
#include <stk/ws.h>

#define WS_RND_BYTES 4096u /* mask keys of 1,024 frames per CSPRNG call */
#define WS_RND_LOW 512u    /* below this, poll()'s tick refills the buffer */

enum { WS_P_IN, WS_P_TX, WS_P_MSG, WS_P_SEND };

static const struct lcp_port_def ws_ports[] = {
	{ .name = "in", .dir = LCP_PORT_IN, .unit = LCP_UNIT_STREAM, .flags = LCP_PORT_F_REQUIRED,
	  .doc = "stream events and payload from the tcp stage (tcp.data)" },
	{ .name = "tx", .dir = LCP_PORT_OUT, .unit = LCP_UNIT_STREAM, .flags = LCP_PORT_F_REQUIRED,
	  .doc = "commands and bytes to the tcp stage (tcp.app)" },
	{ .name = "msg", .dir = LCP_PORT_OUT, .unit = LCP_UNIT_MSG, .doc = "decoded messages" },
	{ .name = "send", .dir = LCP_PORT_IN, .unit = LCP_UNIT_MSG,
	  .doc = "messages to send: payload as one frame (msg opcode, text if not 1/2) on connection conn_id" },
	LCP_PORT_END,
};

#define WS_COUNTERS(X)                                                         \
	X(MSGS, "msgs")                                                        \
	X(MSG_BYTES, "msg_bytes")                                              \
	X(MSGS_ZERO_COPY, "msgs_zero_copy")                                    \
	X(MSGS_ASSEMBLED, "msgs_assembled")                                    \
	X(FRAMES_CONTROL, "frames_control")                                    \
	X(PINGS_RX, "pings_rx")                                                \
	X(PONGS_TX, "pongs_tx")                                                \
	X(PINGS_TX, "pings_tx")                                                \
	X(PONGS_RX, "pongs_rx")                                                \
	X(CONNECTS, "connects")                                                \
	X(OPENS, "opens")                                                      \
	X(RECONNECTS, "reconnects")                                            \
	X(SUBSCRIBES_TX, "subscribes_tx")                                      \
	X(CLOSES_RX, "closes_rx")                                              \
	X(CLOSES_TX, "closes_tx")                                              \
	X(FAIL_HANDSHAKE, "fail_handshake")                                    \
	X(FAIL_HANDSHAKE_TIMEOUT, "fail_handshake_timeout")                    \
	X(FAIL_PONG_TIMEOUT, "fail_pong_timeout")                              \
	X(FAIL_1002, "fail_protocol_1002")                                     \
	X(FAIL_1007, "fail_bad_utf8_1007")                                     \
	X(FAIL_1009, "fail_too_big_1009")                                      \
	X(FAIL_TCP, "fail_tcp")                                                \
	X(FAIL_CLOSE_UNFINISHED, "fail_close_unfinished")                      \
	X(STOP_CLOSES, "stop_closes")                                          \
	X(STOP_CLOSES_ANSWERED, "stop_closes_answered")                        \
	X(DROP_NO_MSG, "drop_no_msg")                                          \
	X(DROP_NO_MBUF, "drop_no_mbuf")                                        \
	X(DROP_ASSEMBLY_NOMEM, "drop_assembly_nomem")                          \
	X(DROP_ASSEMBLY_POOL_EMPTY, "drop_assembly_pool_empty")                \
	X(MSGS_ASSEMBLED_HEAP, "msgs_assembled_heap")                          \
	X(EVENTS_OLD_CONN, "events_old_conn")                                  \
	X(MSGS_SENT, "msgs_sent")                                              \
	X(DROP_SEND_NOT_OPEN, "drop_send_not_open")                            \
	X(DROP_AFTER_CLOSE, "drop_after_close")                                \
	X(POOL_WAITS, "pool_waits")                                            \
	X(POOL_WAIT_CYCLES, "pool_wait_cycles")                                \
	X(RAND_FALLBACKS, "rand_fallbacks")

enum {
#define X(e, s) WS_C_##e,
	WS_COUNTERS(X)
#undef X
	WS_C__N
};

static const char *const ws_counters[] = {
#define X(e, s) s,
	WS_COUNTERS(X)
#undef X
	NULL,
};

struct ws_conf {
	const char *url;
	uint32_t connections;
	const char *subscribe;
	const char *protocol;
	const char *headers;
	uint32_t ping_interval_ms, pong_timeout_ms, handshake_timeout_ms;
	uint32_t reconnect_min_ms, reconnect_max_ms;
	uint32_t max_msg;
	bool check_utf8;
	uint32_t msgs;
	uint32_t assembly_size, assembly_buffers;
	int on_pool_empty;
	uint32_t pool_wait_us;
};

enum { WS_POOL_EMPTY_DROP = 0, WS_POOL_EMPTY_HEAP = 1 };
static const char *const ws_pool_empty_choices[] = { "drop", "heap", NULL };

#define C struct ws_conf
static const struct lcp_opt ws_opts[] = {
	LCP_OPT_STRING(C, url, "url", NULL, 8, 1023, LCP_OPT_F_REQUIRED,
		       "\"ws://A.B.C.D:port/path\"; several separated by commas"),
	LCP_OPT_UINT(C, connections, "connections", "1", 1, 256, 0, "connections per URL"),
	LCP_OPT_STRING(C, subscribe, "subscribe", "\"\"", 0, 65535, 0,
		       "text message(s) sent after each open, one per line (\\n-separated)"),
	LCP_OPT_STRING(C, protocol, "protocol", "\"\"", 0, 63, 0, "Sec-WebSocket-Protocol to ask for"),
	LCP_OPT_STRING(C, headers, "headers", "\"\"", 0, 4095, 0,
		       "extra request headers, \"Name: value\" lines separated by \\n"),
	LCP_OPT_UINT(C, ping_interval_ms, "ping_interval_ms", "0", 0, 3600000, 0,
		     "send a ping this often on an open connection (0: never)"),
	LCP_OPT_UINT(C, pong_timeout_ms, "pong_timeout_ms", "5000", 1, 3600000, 0,
		     "a ping unanswered this long fails the connection (then reconnect)"),
	LCP_OPT_UINT(C, handshake_timeout_ms, "handshake_timeout_ms", "5000", 1, 3600000, 0,
		     "connect + upgrade must finish within this"),
	LCP_OPT_UINT(C, reconnect_min_ms, "reconnect_min_ms", "100", 1, 3600000, 0,
		     "first reconnect delay; doubles per failure"),
	LCP_OPT_UINT(C, reconnect_max_ms, "reconnect_max_ms", "10000", 1, 3600000, 0, "reconnect delay cap"),
	LCP_OPT_UINT(C, max_msg, "max_msg", "16777216", 125, 1073741824, 0,
		     "largest message accepted; more fails the connection with 1009"),
	LCP_OPT_BOOL(C, check_utf8, "check_utf8", "true", "validate text messages (1007 on invalid UTF-8)"),
	LCP_OPT_UINT(C, msgs, "msgs", "8191", 63, 16777215, 0,
		     "msg objects in the stage's pool (pool strategy)"),
	LCP_OPT_UINT(C, assembly_size, "assembly_size", "2048", 64, 1048576, 0,
		     "bytes per assembly buffer (pool strategy) for messages spanning segments; longer ones go to the heap"),
	LCP_OPT_UINT(C, assembly_buffers, "assembly_buffers", "1024", 2, 16777215, 0,
		     "assembly buffers in the stage's pool"),
	LCP_OPT_ENUM(C, on_pool_empty, "on_pool_empty", "\"drop\"", ws_pool_empty_choices, 0,
		     "no assembly buffer left: drop the message (drop_assembly_pool_empty) or assemble it on the heap"),
	LCP_OPT_UINT(C, pool_wait_us, "pool_wait_us", "0", 0, 10000000, 0,
		     "backpressure: an empty msgs or assembly pool stalls this lcore up to this long for a consumer on another lcore to give an object back (pool_waits, pool_wait_cycles), then on_pool_empty / drop_no_msg; 0 = no wait"),
	LCP_OPT_END,
};
#undef C

enum { WC_IDLE = 0, WC_CONNECTING, WC_HANDSHAKE, WC_OPEN, WC_CLOSING };

struct ws_conn {
	unsigned idx;
	uint32_t ip;
	uint16_t port;
	char host[64];
	char path[256];
	uint8_t state;
	bool close_sent;
	bool close_rcvd;       /* WC_CLOSING: the server's close frame came (or none is due) */
	bool fin_sent;         /* WC_CLOSING: our CLOSE went to tcp */
	bool session_start;    /* the next msg is the first since the open */
	uint32_t tcp;          /* the tcp stage's connection id; 0 = none */
	uint32_t gen;          /* connection attempt (see ws_cookie) */
	struct stk_ws_hs *hs;  /* during the handshake */
	struct stk_ws_dec dec;
	uint8_t *asm_buf;      /* message spanning segments */
	size_t asm_len, asm_cap;
	uint8_t asm_kind;      /* WS_ASM_*: where asm_buf comes from */
	bool asm_drop;         /* skipping the rest of a message that had no buffer */
	uint8_t asm_op;
	uint64_t t_deadline;   /* handshake deadline (tsc) */
	uint64_t t_ping, t_pong; /* next ping; pong deadline (0: none due) */
	uint64_t t_reconnect;
	uint32_t backoff_ms;
	uint64_t msgs, bytes, opens;
};

/* the tcp cookie of a connection attempt: the connection's index + 1 in the low
 * 16 bits, the attempt's generation in the high 16, so events of an attempt we
 * gave up on (a late CONNECTED after a timeout, a RESET of an old connection)
 * are told apart from the current one's */
static inline uint32_t
ws_cookie(const struct ws_conn *c)
{
	return ((uint32_t)(c->gen & 0xffff) << 16) | (c->idx + 1);
}

enum { WS_ASM_NONE = 0, WS_ASM_POOL, WS_ASM_HEAP };

struct ws_msg {
	struct lcp_msg pub;
	struct ws_ctx *x;
	uint8_t asm_kind; /* what backing[1] is */
};

struct ws_ctx {
	struct lcp_stage *st;
	struct rte_mempool *pkt;
	struct lcp_pool *msgs;     /* struct ws_msg objects */
	struct lcp_pool *asm_pool; /* assembly buffers of asm_size bytes */
	size_t asm_size;
	bool asm_heap_fallback;
	uint64_t pool_wait; /* pool_wait_us in TSC cycles; 0 = no wait */
	unsigned n_conns;
	struct ws_conn *conns;
	char *subscribe;
	char extra[4096];
	char protocol[64];
	uint32_t ping_ms, pong_ms, hs_ms, rc_min, rc_max;
	uint64_t max_msg;
	bool check_utf8;
	uint64_t hz_ms, next_tick;
	bool stopping;             /* the linger began: no new connection, close the open ones */
	uint8_t rnd[WS_RND_BYTES]; /* CSPRNG output for mask keys and handshake keys */
	unsigned n_rnd;            /* bytes of rnd not used yet (taken from the end) */
	struct lcp_obuf tx;  /* commands and bytes to tcp */
	struct lcp_obuf msg; /* decoded messages */
};

/* ---- helpers ---- */

/* Mask keys (RFC 6455 5.3: unpredictable) come from OpenSSL's CSPRNG
 * (RAND_bytes: a DRBG in user space, seeded and reseeded from the kernel), a
 * whole buffer at a time: 1,024 frames' keys per refill, no system call on the
 * send path. The buffer is topped up from poll()'s millisecond tick once it runs
 * below WS_RND_LOW, so a frame pays for a refill only when more than ~900 go
 * out within one tick. RAND_bytes failing falls back to getrandom()
 * (rand_fallbacks); both failing (no entropy source at all) mixes the TSC into
 * the old bytes, which is not unpredictable: logged as an error. */
static void
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
static void
ws_rand(struct ws_ctx *x, uint8_t *out, unsigned n)
{
	if (unlikely(x->n_rnd < n))
		ws_rand_fill(x);
	x->n_rnd -= n;
	memcpy(out, x->rnd + x->n_rnd, n);
}

static void
ws_flush(struct ws_ctx *x)
{
	while (x->tx.n || x->msg.n) {
		lcp_obuf_flush(x->st, &x->tx);
		lcp_obuf_flush(x->st, &x->msg);
	}
}

static void
ws_tx(struct ws_ctx *x, struct rte_mbuf *m)
{
	lcp_obuf_put(x->st, &x->tx, m);
}

static struct rte_mbuf *
ws_cmd(struct ws_ctx *x, struct ws_conn *c, unsigned cmd)
{
	struct rte_mbuf *m = rte_pktmbuf_alloc(x->pkt);
	struct lcp_stream_meta *meta;

	if (m == NULL) {
		lcp_count(x->st, WS_C_DROP_NO_MBUF, 1);
		lcp_log(x->st, LCP_LOG_ERR, "conn %u: no mbuf for a %s command", c->idx, lcp_stream_ev_name(cmd));
		return NULL;
	}
	lcp_mbuf_set_rx_tsc(m, 0);
	meta = lcp_stream_meta(m);
	memset(meta, 0, sizeof(*meta));
	meta->ev = (uint16_t)cmd;
	meta->conn = c->tcp;
	meta->user = ws_cookie(c);
	meta->addr = c->ip;
	meta->port = c->port;
	return m;
}

/* bytes on the connection: one SEND per mbuf-full. All mbufs are taken before
 * any is sent, so a shortage never puts half a frame on the wire. */
static bool
ws_send_bytes(struct ws_ctx *x, struct ws_conn *c, const uint8_t *p, size_t n)
{
	struct rte_mbuf *ms[64];
	size_t room = (size_t)(rte_pktmbuf_data_room_size(x->pkt) - RTE_PKTMBUF_HEADROOM);
	unsigned k = (unsigned)((n + room - 1) / room);

	if (k > 64 || rte_pktmbuf_alloc_bulk(x->pkt, ms, k) != 0) {
		lcp_count(x->st, WS_C_DROP_NO_MBUF, 1);
		lcp_log(x->st, LCP_LOG_ERR, "conn %u: no mbufs for %zu bytes: not sent", c->idx, n);
		return false;
	}
	for (unsigned i = 0; i < k; i++) {
		struct rte_mbuf *m = ms[i];
		struct lcp_stream_meta *meta = lcp_stream_meta(m);
		size_t q = n < room ? n : room;

		lcp_mbuf_set_rx_tsc(m, 0);
		memset(meta, 0, sizeof(*meta));
		meta->ev = LCP_STREAM_CMD_SEND;
		meta->conn = c->tcp;
		meta->user = ws_cookie(c);
		meta->addr = c->ip;
		meta->port = c->port;
		memcpy(rte_pktmbuf_append(m, (uint16_t)q), p, q);
		ws_tx(x, m);
		p += q;
		n -= q;
	}
	return true;
}

/* a client frame: masked with a fresh key (RFC 6455 5.3); false if not sent */
static bool
ws_send_frame(struct ws_ctx *x, struct ws_conn *c, unsigned op, const uint8_t *p, size_t n)
{
	uint8_t key[4], hdr[STK_WS_MAX_HDR];
	size_t h;
	struct rte_mbuf *m;
	uint8_t *tmp;
	bool ok;

	ws_rand(x, key, 4);
	h = stk_ws_hdr(hdr, op, true, n, key);
	if (h + n <= (size_t)(rte_pktmbuf_data_room_size(x->pkt) - RTE_PKTMBUF_HEADROOM)) {
		uint8_t *d;

		m = ws_cmd(x, c, LCP_STREAM_CMD_SEND);
		if (m == NULL)
			return false;
		d = (uint8_t *)rte_pktmbuf_append(m, (uint16_t)(h + n));
		memcpy(d, hdr, h);
		memcpy(d + h, p, n);
		stk_ws_mask(d + h, n, key, 0);
		ws_tx(x, m);
		return true;
	}
	tmp = rte_malloc("ws_frame", h + n, 0);
	if (tmp == NULL) {
		lcp_count(x->st, WS_C_DROP_NO_MBUF, 1);
		return false;
	}
	memcpy(tmp, hdr, h);
	memcpy(tmp + h, p, n);
	stk_ws_mask(tmp + h, n, key, 0);
	ok = ws_send_bytes(x, c, tmp, h + n);
	rte_free(tmp);
	return ok;
}

static void
ws_asm_free(struct ws_ctx *x, uint8_t kind, void *buf)
{
	if (kind == WS_ASM_POOL)
		lcp_pool_put(x->asm_pool, buf);
	else if (kind == WS_ASM_HEAP)
		rte_free(buf);
}

/* give back a connection's partly assembled message */
static void
ws_asm_release(struct ws_ctx *x, struct ws_conn *c)
{
	ws_asm_free(x, c->asm_kind, c->asm_buf);
	c->asm_buf = NULL;
	c->asm_kind = WS_ASM_NONE;
	c->asm_len = c->asm_cap = 0;
	c->asm_drop = false;
}

static uint64_t
ws_now(void)
{
	return rte_rdtsc();
}

static void
ws_schedule_reconnect(struct ws_ctx *x, struct ws_conn *c, const char *why)
{
	if (c->hs != NULL) {
		rte_free(c->hs);
		c->hs = NULL;
	}
	ws_asm_release(x, c);
	c->state = WC_IDLE;
	c->tcp = 0;
	c->gen++; /* whatever the old attempt still reports is stale from now on */
	c->close_sent = false;
	c->t_pong = 0;
	c->t_reconnect = ws_now() + c->backoff_ms * x->hz_ms;
	if (x->stopping) {
		lcp_log(x->st, LCP_LOG_WARNING, "conn %u (%s%s): %s; not reconnecting (stopping)", c->idx, c->host,
			c->path, why);
		return;
	}
	lcp_log(x->st, LCP_LOG_WARNING, "conn %u (%s%s): %s; reconnecting in %u ms", c->idx, c->host, c->path, why,
		c->backoff_ms);
	c->backoff_ms = c->backoff_ms * 2 > x->rc_max ? x->rc_max : c->backoff_ms * 2;
}

/* fail the connection: close frame with code if open, then RST */
static void
ws_fail(struct ws_ctx *x, struct ws_conn *c, uint16_t code, const char *why)
{
	struct rte_mbuf *m;

	if (c->state == WC_OPEN && code != 0 && !c->close_sent) {
		uint8_t pl[2] = { (uint8_t)(code >> 8), (uint8_t)code };

		ws_send_frame(x, c, STK_WS_OP_CLOSE, pl, 2);
		lcp_count(x->st, WS_C_CLOSES_TX, 1);
		c->close_sent = true;
	}
	if (c->tcp != 0) {
		/* close (FIN after the close frame), the peer's reply does not matter */
		m = ws_cmd(x, c, code != 0 ? LCP_STREAM_CMD_CLOSE : LCP_STREAM_CMD_ABORT);
		if (m != NULL)
			ws_tx(x, m);
	}
	if (code != 0)
		lcp_log(x->st, LCP_LOG_WARNING, "conn %u: close %u: %s", c->idx, code, why);
	lcp_count(x->st, WS_C_RECONNECTS, 1);
	ws_schedule_reconnect(x, c, why);
}

/* ---- closing at shutdown (WC_CLOSING) ---- */

/* our side of TCP: CLOSE (a FIN after what is queued), once; without an mbuf
 * it is tried again at the next linger call */
static void
ws_close_tcp(struct ws_ctx *x, struct ws_conn *c)
{
	struct rte_mbuf *m;

	if (c->fin_sent || c->tcp == 0)
		return;
	m = ws_cmd(x, c, LCP_STREAM_CMD_CLOSE);
	if (m == NULL)
		return;
	ws_tx(x, m);
	c->fin_sent = true;
}

/* the end of a connection closed at shutdown: why == NULL when the close
 * handshake and the TCP close both completed */
static void
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
	ws_asm_release(x, c);
	c->state = WC_IDLE;
	c->tcp = 0;
	c->gen++;
	c->close_sent = c->close_rcvd = c->fin_sent = false;
	c->t_pong = c->t_ping = 0;
}

/* the pipeline is stopping: an open connection sends close 1001 and waits for
 * the server's close frame, then closes TCP; one in its upgrade closes TCP */
static void
ws_close_stopping(struct ws_ctx *x, struct ws_conn *c)
{
	if (c->state == WC_HANDSHAKE) {
		rte_free(c->hs);
		c->hs = NULL;
		c->state = WC_CLOSING;
		c->close_rcvd = true; /* no close frame on a connection never opened */
		c->fin_sent = false;
		lcp_log(x->st, LCP_LOG_INFO, "conn %u: stopping during the upgrade: closing TCP", c->idx);
		ws_close_tcp(x, c);
		return;
	}
	c->state = WC_CLOSING;
	c->close_rcvd = c->fin_sent = false;
	c->t_pong = c->t_ping = 0;
	if (!c->close_sent) {
		uint8_t pl[2] = { STK_WS_CLOSE_GOING_AWAY >> 8, STK_WS_CLOSE_GOING_AWAY & 0xff };

		if (ws_send_frame(x, c, STK_WS_OP_CLOSE, pl, 2)) {
			lcp_count(x->st, WS_C_CLOSES_TX, 1);
			lcp_count(x->st, WS_C_STOP_CLOSES, 1);
			c->close_sent = true;
			lcp_log(x->st, LCP_LOG_INFO, "conn %u: stopping: close 1001 sent", c->idx);
			return;
		}
		/* no mbuf for the close frame (counted): TCP's close is all there is */
		c->close_rcvd = true;
		ws_close_tcp(x, c);
	}
}

static void
ws_msg_release(struct lcp_msg *pm)
{
	struct ws_msg *m = (struct ws_msg *)pm;

	if (pm->backing[0] != NULL)
		rte_pktmbuf_free(pm->backing[0]);
	if (pm->backing[1] != NULL)
		ws_asm_free(m->x, m->asm_kind, pm->backing[1]);
	lcp_pool_put(m->x->msgs, m);
}

static void ws_flush(struct ws_ctx *x);

/* an object from pool p; empty: wait up to pool_wait_us (backpressure), counted.
 * What this lcore has staged is emitted first: the messages waiting in our own
 * output buffer are the ones whose release would refill the pool. */
static inline void *
ws_pool_get(struct ws_ctx *x, struct lcp_pool *p)
{
	uint64_t waited;
	void *o;

	if (likely(x->pool_wait == 0))
		return lcp_pool_get(p);
	if (likely(p->get_bulk(p->pool, &o, 1) == 0))
		return o;
	ws_flush(x);
	o = lcp_pool_get_wait(p, x->pool_wait, &waited);
	lcp_count(x->st, WS_C_POOL_WAITS, 1);
	lcp_count(x->st, WS_C_POOL_WAIT_CYCLES, waited);
	return o;
}

static struct lcp_msg *
ws_msg_new(struct ws_ctx *x, struct ws_conn *c, unsigned op, const uint8_t *data, size_t len, uint64_t tsc)
{
	struct ws_msg *m;

	m = ws_pool_get(x, x->msgs);
	if (m == NULL) {
		lcp_count(x->st, WS_C_DROP_NO_MSG, 1);
		return NULL;
	}
	m->x = x;
	m->asm_kind = WS_ASM_NONE;
	m->pub.conn_id = c->idx;
	m->pub.rx_tsc = tsc;
	m->pub.data = data;
	m->pub.len = (uint32_t)len;
	m->pub.opcode = (uint16_t)op;
	m->pub.flags = c->session_start ? LCP_MSG_F_SESSION_START : 0;
	c->session_start = false;
	m->pub.release = ws_msg_release;
	m->pub.owner = x;
	m->pub.backing[0] = m->pub.backing[1] = NULL;
	return &m->pub;
}

static void
ws_emit_msg(struct ws_ctx *x, struct ws_conn *c, struct lcp_msg *m)
{
	c->msgs++;
	c->bytes += m->len;
	lcp_count(x->st, WS_C_MSGS, 1);
	lcp_count(x->st, WS_C_MSG_BYTES, m->len);
	lcp_obuf_put(x->st, &x->msg, m);
}

static void
ws_subscribe(struct ws_ctx *x, struct ws_conn *c)
{
	const char *p = x->subscribe;

	while (p != NULL && *p) {
		const char *nl = strchr(p, '\n');
		size_t n = nl ? (size_t)(nl - p) : strlen(p);

		if (n > 0) {
			ws_send_frame(x, c, STK_WS_OP_TEXT, (const uint8_t *)p, n);
			lcp_count(x->st, WS_C_SUBSCRIBES_TX, 1);
		}
		p = nl ? nl + 1 : NULL;
	}
}

/* frames in [p, end) of segment m */
static void
ws_frames(struct ws_ctx *x, struct ws_conn *c, struct rte_mbuf *seg, uint8_t *p, uint8_t *end)
{
	uint64_t tsc = lcp_mbuf_rx_tsc(seg);
	struct stk_ws_out o;
	enum stk_ws_ev ev;

	while ((ev = stk_ws_dec_next(&c->dec, &p, end, &o)) != STK_WS_NEED_MORE) {
		if (likely(ev == STK_WS_DATA)) {
			struct lcp_msg *m;

			if (likely(o.first && o.last)) {
				/* wholly inside this segment: by reference */
				m = ws_msg_new(x, c, o.opcode, o.data, o.len, tsc);
				if (m == NULL)
					continue;
				rte_mbuf_refcnt_update(seg, 1);
				m->backing[0] = seg;
				lcp_count(x->st, WS_C_MSGS_ZERO_COPY, 1);
				ws_emit_msg(x, c, m);
				continue;
			}
			if (o.first) {
				c->asm_len = 0;
				c->asm_op = o.opcode;
				c->asm_drop = false;
			}
			if (c->asm_drop) { /* the message had no buffer: skip its rest */
				if (o.last)
					c->asm_drop = false;
				continue;
			}
			if (c->asm_buf == NULL) {
				/* a pool buffer first: most messages that span segments
				 * are small, and a pool is what the strategy measures */
				c->asm_buf = ws_pool_get(x, x->asm_pool);
				if (c->asm_buf != NULL) {
					c->asm_kind = WS_ASM_POOL;
					c->asm_cap = x->asm_size;
				} else if (!x->asm_heap_fallback) {
					lcp_count(x->st, WS_C_DROP_ASSEMBLY_POOL_EMPTY, 1);
					c->asm_drop = !o.last;
					continue;
				}
			}
			if (c->asm_len + o.len > c->asm_cap) {
				/* longer than a pool buffer: grow on the heap */
				size_t cap = c->asm_cap ? c->asm_cap * 2 : 4096;
				uint8_t *nb;

				while (cap < c->asm_len + o.len)
					cap *= 2;
				if (cap > x->max_msg)
					cap = x->max_msg;
				nb = rte_malloc("ws_asm", cap, 0);
				if (nb == NULL) {
					lcp_count(x->st, WS_C_DROP_ASSEMBLY_NOMEM, 1);
					ws_fail(x, c, STK_WS_CLOSE_INTERNAL, "no memory to assemble a message");
					return;
				}
				if (c->asm_len > 0)
					memcpy(nb, c->asm_buf, c->asm_len);
				ws_asm_free(x, c->asm_kind, c->asm_buf);
				c->asm_buf = nb;
				c->asm_kind = WS_ASM_HEAP;
				c->asm_cap = cap;
			}
			memcpy(c->asm_buf + c->asm_len, o.data, o.len);
			c->asm_len += o.len;
			if (o.last) {
				m = ws_msg_new(x, c, c->asm_op, c->asm_buf, c->asm_len, tsc);
				if (m == NULL) {
					ws_asm_release(x, c);
					continue;
				}
				m->backing[1] = c->asm_buf; /* the msg owns the buffer now */
				((struct ws_msg *)m)->asm_kind = c->asm_kind;
				lcp_count(x->st, c->asm_kind == WS_ASM_HEAP ? WS_C_MSGS_ASSEMBLED_HEAP
									     : WS_C_MSGS_ASSEMBLED, 1);
				c->asm_buf = NULL;
				c->asm_kind = WS_ASM_NONE;
				c->asm_len = c->asm_cap = 0;
				ws_emit_msg(x, c, m);
			}
			continue;
		}
		if (ev == STK_WS_CONTROL) {
			lcp_count(x->st, WS_C_FRAMES_CONTROL, 1);
			if (o.opcode == STK_WS_OP_PING) {
				lcp_count(x->st, WS_C_PINGS_RX, 1);
				if (!c->close_sent) {
					ws_send_frame(x, c, STK_WS_OP_PONG, o.data, o.len);
					lcp_count(x->st, WS_C_PONGS_TX, 1);
				}
			} else if (o.opcode == STK_WS_OP_PONG) {
				lcp_count(x->st, WS_C_PONGS_RX, 1);
				c->t_pong = 0;
			} else {
				char why[96];

				lcp_count(x->st, WS_C_CLOSES_RX, 1);
				if (c->state == WC_CLOSING) {
					/* the answer to our close 1001: TCP goes next */
					lcp_count(x->st, WS_C_STOP_CLOSES_ANSWERED, 1);
					c->close_rcvd = true;
					lcp_log(x->st, LCP_LOG_INFO, "conn %u: the server answered our close with %u",
						c->idx, o.close_code);
					ws_close_tcp(x, c);
					return;
				}
				snprintf(why, sizeof(why), "server closed with %u", o.close_code);
				if (!c->close_sent) {
					uint8_t pl[2] = { (uint8_t)(o.close_code >> 8), (uint8_t)o.close_code };

					/* echo the code (RFC 6455 5.5.1); none if it sent none */
					ws_send_frame(x, c, STK_WS_OP_CLOSE, pl,
						      o.close_code == STK_WS_CLOSE_NO_STATUS ? 0 : 2);
					lcp_count(x->st, WS_C_CLOSES_TX, 1);
					c->close_sent = true;
				}
				if (x->stopping) {
					/* a close from the server while we stop: wait for TCP too */
					c->state = WC_CLOSING;
					c->close_rcvd = true;
					c->fin_sent = false;
					ws_close_tcp(x, c);
					return;
				}
				{
					struct rte_mbuf *cm = ws_cmd(x, c, LCP_STREAM_CMD_CLOSE);

					if (cm != NULL)
						ws_tx(x, cm);
				}
				lcp_count(x->st, WS_C_RECONNECTS, 1);
				ws_schedule_reconnect(x, c, why);
				return;
			}
			continue;
		}
		/* protocol error */
		lcp_count(x->st, o.close_code == STK_WS_CLOSE_BAD_DATA ? WS_C_FAIL_1007
				 : o.close_code == STK_WS_CLOSE_TOO_BIG ? WS_C_FAIL_1009
									: WS_C_FAIL_1002,
			  1);
		ws_fail(x, c, o.close_code, o.reason);
		return;
	}
}

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
	if (c->state == WC_IDLE || (meta->user >> 16) != (c->gen & 0xffff))
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
ws_on_connected(struct ws_ctx *x, struct ws_conn *c, uint32_t tcp)
{
	uint8_t raw[16];
	char key[25], req[6144];
	int n;

	c->tcp = tcp;
	c->state = WC_HANDSHAKE;
	c->hs = rte_zmalloc("ws_hs", sizeof(*c->hs), 0);
	if (c->hs == NULL) {
		ws_fail(x, c, 0, "no memory for the handshake");
		return;
	}
	ws_rand(x, raw, 16);
	stk_ws_key(raw, key);
	n = stk_ws_client_request(c->hs, req, sizeof(req), c->host, c->path, key, x->protocol, x->extra);
	if (n < 0) {
		ws_fail(x, c, 0, "the upgrade request does not fit 6 KiB");
		return;
	}
	ws_send_bytes(x, c, (const uint8_t *)req, (size_t)n);
}

static void
ws_on_data(struct ws_ctx *x, struct ws_conn *c, struct rte_mbuf *m)
{
	uint8_t *p = rte_pktmbuf_mtod(m, uint8_t *), *end = p + m->data_len;

	if (c->state == WC_HANDSHAKE) {
		size_t used = 0;
		int rc = stk_ws_client_response(c->hs, p, m->data_len, &used);

		if (rc < 0) {
			char why[160];

			snprintf(why, sizeof(why), "handshake failed: %s", c->hs->err);
			lcp_count(x->st, WS_C_FAIL_HANDSHAKE, 1);
			ws_fail(x, c, 0, why);
			return;
		}
		if (rc == 0)
			return;
		rte_free(c->hs);
		c->hs = NULL;
		c->state = WC_OPEN;
		c->opens++;
		c->backoff_ms = x->rc_min;
		stk_ws_dec_init(&c->dec, false, x->max_msg, x->check_utf8);
		c->t_ping = x->ping_ms ? ws_now() + x->ping_ms * x->hz_ms : 0;
		lcp_count(x->st, WS_C_OPENS, 1);
		c->session_start = true;
		lcp_log(x->st, LCP_LOG_INFO, "conn %u: open %s%s", c->idx, c->host, c->path);
		ws_subscribe(x, c);
		p += used;
	}
	if (c->state == WC_CLOSING) {
		/* stopping: frames up to the server's close are still read (and
		 * delivered); after it, data is dropped; on a connection closed in
		 * its upgrade, what comes is the late response (no message) */
		if (!c->close_rcvd) {
			if (p < end)
				ws_frames(x, c, m, p, end);
		} else {
			lcp_count(x->st, c->close_sent ? WS_C_DROP_AFTER_CLOSE : WS_C_EVENTS_OLD_CONN, 1);
		}
		return;
	}
	if (c->state != WC_OPEN || c->close_sent) {
		lcp_count(x->st, WS_C_DROP_AFTER_CLOSE, 1);
		return;
	}
	if (p < end)
		ws_frames(x, c, m, p, end);
}

static void
ws_send_msgs(struct ws_ctx *x, struct lcp_msg **ms, unsigned n)
{
	for (unsigned i = 0; i < n; i++) {
		struct lcp_msg *m = ms[i];

		if (m->conn_id < x->n_conns && x->conns[m->conn_id].state == WC_OPEN &&
		    !x->conns[m->conn_id].close_sent) {
			if (ws_send_frame(x, &x->conns[m->conn_id],
					  m->opcode == STK_WS_OP_BINARY ? STK_WS_OP_BINARY : STK_WS_OP_TEXT, m->data,
					  m->len))
				lcp_count(x->st, WS_C_MSGS_SENT, 1);
		} else {
			lcp_count(x->st, WS_C_DROP_SEND_NOT_OPEN, 1);
		}
		lcp_msg_free(m);
	}
	ws_flush(x);
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
				struct rte_mbuf *am = rte_pktmbuf_alloc(x->pkt);

				if (am != NULL) {
					struct lcp_stream_meta *ameta = lcp_stream_meta(am);

					memset(ameta, 0, sizeof(*ameta));
					lcp_mbuf_set_rx_tsc(am, 0);
					ameta->ev = LCP_STREAM_CMD_ABORT;
					ameta->conn = meta->conn;
					ws_tx(x, am);
				} else {
					lcp_count(st, WS_C_DROP_NO_MBUF, 1);
				}
			}
			rte_pktmbuf_free(m);
			continue;
		}
		switch (meta->ev) {
		case LCP_STREAM_EV_DATA:
			ws_on_data(x, c, m);
			break;
		case LCP_STREAM_EV_CONNECTED:
			if (c->state == WC_CONNECTING && x->stopping) {
				/* connected while we stop: no upgrade, just TCP's close */
				c->tcp = meta->conn;
				c->state = WC_CLOSING;
				c->close_rcvd = true;
				c->fin_sent = false;
				lcp_log(st, LCP_LOG_INFO, "conn %u: connected while stopping: closing TCP", c->idx);
				ws_close_tcp(x, c);
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
				ws_close_tcp(x, c);
			} else if (c->state != WC_IDLE) {
				struct rte_mbuf *cm = ws_cmd(x, c, LCP_STREAM_CMD_CLOSE);
				char why[128];

				if (cm != NULL)
					ws_tx(x, cm);
				lcp_count(st, WS_C_RECONNECTS, 1);
				if (c->state == WC_HANDSHAKE) {
					/* the upgrade never completed: a failed handshake */
					lcp_count(st, WS_C_FAIL_HANDSHAKE, 1);
					snprintf(why, sizeof(why), "handshake failed: the server closed TCP (FIN) %s",
						 ws_hs_progress(c));
					ws_schedule_reconnect(x, c, why);
				} else {
					ws_schedule_reconnect(x, c, "the server closed TCP without a close frame (1006)");
				}
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
				if (meta->ev != LCP_STREAM_EV_ERROR)
					lcp_count(st, WS_C_FAIL_TCP, 1);
				ws_close_done(x, c, why);
				break;
			}
			if (c->state == WC_HANDSHAKE && meta->ev == LCP_STREAM_EV_RESET) {
				char why[128];

				/* the server reset TCP in the middle of the upgrade */
				lcp_count(st, WS_C_FAIL_HANDSHAKE, 1);
				lcp_count(st, WS_C_RECONNECTS, 1);
				snprintf(why, sizeof(why), "handshake failed: the server reset TCP %s",
					 ws_hs_progress(c));
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
				lcp_count(st, WS_C_RECONNECTS, 1);
				ws_schedule_reconnect(x, c, why);
			}
			break;
		default:
			break;
		}
		rte_pktmbuf_free(m); /* messages hold their own references */
	}
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
			if (now >= c->t_reconnect && !lcp_stage_stopping(st)) {
				struct rte_mbuf *m = ws_cmd(x, c, LCP_STREAM_CMD_CONNECT);

				if (m != NULL) {
					ws_tx(x, m);
					c->state = WC_CONNECTING;
					c->t_deadline = now + x->hs_ms * x->hz_ms;
					lcp_count(st, WS_C_CONNECTS, 1);
					work++;
				}
			}
			break;
		case WC_CONNECTING:
		case WC_HANDSHAKE:
			if (now >= c->t_deadline) {
				lcp_count(st, WS_C_FAIL_HANDSHAKE_TIMEOUT, 1);
				ws_fail(x, c, 0, "connect/upgrade timed out");
				work++;
			}
			break;
		case WC_OPEN:
			if (c->t_pong != 0 && now >= c->t_pong) {
				lcp_count(st, WS_C_FAIL_PONG_TIMEOUT, 1);
				ws_fail(x, c, STK_WS_CLOSE_GOING_AWAY, "pong timeout");
				work++;
			} else if (c->t_ping != 0 && now >= c->t_ping) {
				uint64_t tsc = now;

				ws_send_frame(x, c, STK_WS_OP_PING, (const uint8_t *)&tsc, sizeof(tsc));
				lcp_count(st, WS_C_PINGS_TX, 1);
				c->t_ping = now + x->ping_ms * x->hz_ms;
				if (c->t_pong == 0)
					c->t_pong = now + x->pong_ms * x->hz_ms;
				work++;
			}
			break;
		default:
			break;
		}
	}
	ws_flush(x);
	return work;
}

static int
ws_parse_url(const char *u, size_t n, struct ws_conn *c, char *err, size_t errlen)
{
	char buf[1024], *hp, *slash, *colon;
	struct in_addr a;
	unsigned long port = 80;

	if (n >= sizeof(buf) || n < 5 || strncmp(u, "ws://", 5) != 0) {
		snprintf(err, errlen, "url \"%.*s\": expected ws://A.B.C.D:port/path (wss:// is not supported)",
			 (int)n, u);
		return -1;
	}
	memcpy(buf, u, n);
	buf[n] = '\0';
	hp = buf + 5;
	slash = strchr(hp, '/');
	snprintf(c->path, sizeof(c->path), "%s", slash ? slash : "/");
	if (slash)
		*slash = '\0';
	snprintf(c->host, sizeof(c->host), "%.63s", hp);
	colon = strchr(hp, ':');
	if (colon) {
		char *e;

		*colon = '\0';
		port = strtoul(colon + 1, &e, 10);
		if (*e != '\0' || port == 0 || port > 65535) {
			snprintf(err, errlen, "url \"%.*s\": bad port", (int)n, u);
			return -1;
		}
	}
	if (inet_pton(AF_INET, hp, &a) != 1) {
		snprintf(err, errlen, "url \"%.*s\": the host must be an IPv4 address (no DNS)", (int)n, u);
		return -1;
	}
	c->ip = a.s_addr;
	c->port = (uint16_t)port;
	return 0;
}

static int
ws_validate(const void *conf, char *msg, size_t msglen)
{
	const struct ws_conf *c = conf;
	const char *p = c->url;

	while (*p) {
		const char *comma = strchr(p, ',');
		size_t n = comma ? (size_t)(comma - p) : strlen(p);
		struct ws_conn tmp;

		if (ws_parse_url(p, n, &tmp, msg, msglen) < 0)
			return -1;
		p += n + (comma ? 1 : 0);
	}
	if (c->reconnect_min_ms > c->reconnect_max_ms) {
		snprintf(msg, msglen, "reconnect_min_ms %u is above reconnect_max_ms %u", c->reconnect_min_ms,
			 c->reconnect_max_ms);
		return -1;
	}
	return 0;
}

static int
ws_init(struct lcp_stage *st, const void *conf, void **ctx)
{
	const struct ws_conf *c = conf;
	struct ws_ctx *x;
	char err[256];
	unsigned n_urls = 0;
	const char *p;

	for (p = c->url; *p; p++)
		n_urls += *p == ',';
	n_urls++;
	x = rte_zmalloc_socket("ws", sizeof(*x), RTE_CACHE_LINE_SIZE, lcp_stage_socket(st));
	if (x == NULL)
		return -ENOMEM;
	x->st = st;
	x->pkt = lcp_stage_pktmbuf_pool(st);
	lcp_obuf_init(&x->tx, WS_P_TX, 64);
	lcp_obuf_init(&x->msg, WS_P_MSG, 64);
	x->n_conns = n_urls * c->connections;
	x->conns = rte_zmalloc_socket("ws_conns", x->n_conns * sizeof(*x->conns), RTE_CACHE_LINE_SIZE,
				      lcp_stage_socket(st));
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
	x->max_msg = c->max_msg;
	x->check_utf8 = c->check_utf8;
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
	*ctx = x;
	return 0;
inval:
	free(x->subscribe);
	rte_free(x->conns);
	rte_free(x);
	return -EINVAL;
nomem:
	free(x->subscribe);
	rte_free(x->conns);
	rte_free(x);
	return -ENOMEM;
}

/* The shutdown (engine.linger): on every turn until it returns 0. Open
 * connections send close 1001 (ws_close_stopping), those in their upgrade close
 * TCP; each is done when the server's close frame came and TCP closed
 * (ws_close_done), or it gave up. No connection opens any more (ws_poll). */
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

		if (c->state == WC_OPEN || c->state == WC_HANDSHAKE)
			ws_close_stopping(x, c);
		else if (c->state == WC_CLOSING && c->close_rcvd)
			ws_close_tcp(x, c); /* when an mbuf was missing before */
		n += c->state != WC_IDLE;
	}
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
			c->idx, c->host, c->path, c->msgs, c->bytes, c->opens);
		if (c->state == WC_OPEN && !c->close_sent) {
			uint8_t pl[2] = { STK_WS_CLOSE_GOING_AWAY >> 8, STK_WS_CLOSE_GOING_AWAY & 0xff };

			if (ws_send_frame(x, c, STK_WS_OP_CLOSE, pl, 2)) {
				lcp_count(st, WS_C_CLOSES_TX, 1);
				lcp_count(st, WS_C_STOP_CLOSES, 1);
			}
			c->close_sent = true;
		} else if (c->state == WC_CLOSING) {
			lcp_count(st, WS_C_FAIL_CLOSE_UNFINISHED, 1);
			lcp_log(st, LCP_LOG_WARNING, "conn %u: close not finished when the pipeline stopped (%s): "
				"waiting for %s", c->idx, "engine.linger",
				!c->close_rcvd ? "the server's close frame" : "TCP to close");
		}
	}
	ws_flush(x);
}

static void
ws_fini(struct lcp_stage *st, void *ctx)
{
	struct ws_ctx *x = ctx;

	for (unsigned i = 0; i < x->n_conns; i++) {
		rte_free(x->conns[i].hs);
		ws_asm_release(x, &x->conns[i]);
	}
	for (unsigned i = 0; i < x->tx.n; i++)
		rte_pktmbuf_free(x->tx.objs[i]);
	for (unsigned i = 0; i < x->msg.n; i++)
		lcp_msg_free(x->msg.objs[i]);
	lcp_pool_free(x->msgs); /* reports objects never given back */
	lcp_pool_free(x->asm_pool);
	free(x->subscribe);
	rte_free(x->conns);
	rte_free(x);
}

static const struct lcp_stage_ops ws_ops = {
	.ports = ws_ports,
	.counters = ws_counters,
	.validate = ws_validate,
	.init = ws_init,
	.poll = ws_poll,
	.process = ws_process,
	.stop = ws_stop,
	.fini = ws_fini,
	.linger = ws_linger,
};

LCP_PLUGIN_EXPORT const struct lcp_plugin lcp_plugin_descriptor = {
	LCP_PLUGIN_HEADER(LCP_KIND_STAGE, "ws"),
	.version = "1.0.0",
	.summary = "WebSocket client over the tcp stage: handshake, subscriptions, pings, reconnects, msgs out",
	.options = ws_opts,
	.conf_size = sizeof(struct ws_conf),
	.ops = &ws_ops,
};
