/* SPDX-License-Identifier: BSD-3-Clause
 * ws_rx.c — what the ws stage receives: the upgrade response, then the
 * WebSocket session's events (stk/ws_session.h).
 *
 *   ws_on_data       a tcp DATA event: through TLS (ws_tls.c) or as it is
 *   ws_on_plain      the stream's plaintext: handshake response, then frames
 *   ws_frames        stk_wss_recv_run, stk_wss_recv_next -> msgs; the server's close -> reconnect
 *   ws_buf_*         the buffers the session assembles and inflates into:
 *                    packs of the receive pool (inflated messages, many to a
 *                    buffer), the assembly pool, then the heap
 *   ws_msg_*         msg objects from the stage's pool, released by consumers
 *
 * A message wholly inside one buffer is handed on by reference: its lcp_msg
 * points into the mbuf, whose reference count it holds. A message that spans
 * buffers (or comes compressed) is assembled (inflated) by the session into a
 * buffer lent from the stage's assembly pool (assembly_size bytes each); one
 * that outgrows it moves to an rte_malloc buffer grown by doubling up to
 * max_msg (msgs_assembled_heap). The msg owns the buffer. Either way the msg
 * carries the rx TSC of the segment that completed it. Pings are answered,
 * closes echoed and protocol errors closed by the session. */
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include <rte_errno.h>
#include <rte_malloc.h>

#include "ws.h"
#include "wss_counts.h"

/* References on a segment (or a pack) are taken WS_SEG_REFS at a time: one
 * atomic add for up to that many messages of it instead of one each, and the
 * unused ones given back when its frames are done (the pack is let go). The
 * holder's own reference keeps it alive meanwhile, so a consumer that frees a
 * message before the give-back never takes the count to zero. */
#define WS_SEG_REFS 64

/* an assembly buffer back (WS_ASM_PACK: a slice not taken, nothing to do) */
static void
ws_asm_free(struct ws_ctx *x, uint8_t kind, void *buf)
{
	if (kind == WS_ASM_POOL)
		lcp_pool_put(x->asm_pool, buf);
	else if (kind == WS_ASM_HEAP)
		rte_free(buf);
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

/* lcp_msgs_free() of a run of our messages (ABI 1.9): a run of them cut from
 * one segment gives its references back with one update (and the last one by
 * rte_pktmbuf_free, which frees the segment when it is the last holder); one
 * pool put for all */
static void
ws_msgs_release(struct lcp_msg *const *pm, unsigned n)
{
	struct ws_ctx *x = ((struct ws_msg *)pm[0])->x;
	unsigned i = 0;

	while (i < n) {
		struct rte_mbuf *seg = pm[i]->backing[0];
		unsigned j = i + 1;

		if (pm[i]->backing[1] != NULL)
			ws_asm_free(x, ((struct ws_msg *)pm[i])->asm_kind, pm[i]->backing[1]);
		if (seg != NULL) {
			while (j < n && j - i < INT16_MAX && pm[j]->backing[0] == seg &&
			       pm[j]->backing[1] == NULL)
				j++;
			if (j - i > 1)
				rte_mbuf_refcnt_update(seg, (int16_t)-(int)(j - i - 1));
			rte_pktmbuf_free(seg);
		}
		i = j;
	}
	lcp_pool_put_bulk(x->msgs, (void *const *)pm, n);
}

void
ws_msg_owner_init(struct ws_ctx *x)
{
	x->owner.release_bulk = ws_msgs_release;
}


/* an object from pool p; empty: wait up to pool_wait_us (backpressure), counted.
 * What this lcore has staged is emitted first: on a link to another lcore the
 * messages waiting in our own output buffer are the ones whose release would
 * refill the pool (a consumer on this lcore runs only after this call). */
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

/* a message object from the cache (refilled a cacheful at a time), or NULL:
 * counted as drop_no_msg and as lost before the connection's next message */
static __rte_always_inline struct ws_msg *
ws_msg_take(struct ws_ctx *x, struct ws_conn *c)
{
	struct ws_msg *m;

	/* a cacheful at once through the module's op (a refill that does not
	 * fit is not a failed get: the single get below counts those) */
	if (unlikely(x->mcache_n == 0) && x->msgs->get_bulk(x->msgs->pool, x->mcache, WS_MCACHE) == 0)
		x->mcache_n = WS_MCACHE;
	if (likely(x->mcache_n != 0))
		m = x->mcache[--x->mcache_n];
	else
		m = ws_pool_get(x, x->msgs); /* fewer than a cacheful left: one, maybe waiting */
	if (m == NULL) {
		lcp_count(x->st, WS_C_DROP_NO_MSG, 1);
		c->lost++;
	}
	return m;
}

/* what every message of connection c received at tsc starts as: the fields
 * ws_msg_new and ws_frames' per-segment template share */
static __rte_always_inline struct ws_msg
ws_msg_proto(struct ws_ctx *x, const struct ws_conn *c, uint64_t tsc)
{
	return (struct ws_msg){
		.pub = { .conn_id = c->idx, .rx_tsc = tsc, .flags = LCP_MSG_F_BULK,
			 .release = ws_msg_release, .owner = &x->owner },
		.x = x,
		.asm_kind = WS_ASM_NONE,
	};
}

/* A segment's template, for the messages cut from it by reference (most of
 * them): held in four 16-byte registers and one word, so each message costs
 * those stores plus its data pointer and one word of len, opcode and flags,
 * not a setup of its eleven fields one by one. Laid out as struct ws_msg is: */
_Static_assert(offsetof(struct lcp_msg, data) == 16 && offsetof(struct lcp_msg, len) == 24 &&
		       offsetof(struct lcp_msg, opcode) == 28 && offsetof(struct lcp_msg, flags) == 30 &&
		       offsetof(struct lcp_msg, release) == 32 && sizeof(struct ws_msg) == 88,
	       "ws_seg_tmpl's layout");

struct ws_seg_tmpl {
#if defined(__SSE2__)
	__m128i q0, q2, q3, q4; /* bytes 0-15, 32-47, 48-63, 64-79 */
	uint64_t w10;           /* bytes 80-87 */
#else
	struct ws_msg m;
#endif
	uint64_t opflags;       /* bytes 28-31: opcode, flags (above len's 32 bits) */
};

static __rte_always_inline void
ws_seg_tmpl_init(struct ws_seg_tmpl *t, struct ws_ctx *x, const struct ws_conn *c, uint64_t tsc,
		 struct rte_mbuf *seg)
{
	struct ws_msg m = ws_msg_proto(x, c, tsc);

	m.pub.backing[0] = seg;
	t->opflags = (uint64_t)LCP_MSG_F_BULK << 48;
#if defined(__SSE2__)
	t->q0 = _mm_loadu_si128((const __m128i *)(const void *)&m);
	t->q2 = _mm_loadu_si128((const __m128i *)(const void *)((const char *)&m + 32));
	t->q3 = _mm_loadu_si128((const __m128i *)(const void *)((const char *)&m + 48));
	t->q4 = _mm_loadu_si128((const __m128i *)(const void *)((const char *)&m + 64));
	memcpy(&t->w10, (const char *)&m + 80, 8);
#else
	t->m = m;
#endif
}

static __rte_always_inline void
ws_seg_tmpl_put(const struct ws_seg_tmpl *t, struct ws_msg *wm, const uint8_t *data, uint32_t len,
		unsigned op)
{
	uint64_t w3 = t->opflags | (uint64_t)op << 32 | len;
	char *b = (char *)wm;

#if defined(__SSE2__)
	_mm_storeu_si128((__m128i *)(void *)b, t->q0);
	_mm_storeu_si128((__m128i *)(void *)(b + 32), t->q2);
	_mm_storeu_si128((__m128i *)(void *)(b + 48), t->q3);
	_mm_storeu_si128((__m128i *)(void *)(b + 64), t->q4);
	memcpy(b + 80, &t->w10, 8);
#else
	*wm = t->m;
#endif
	memcpy(b + 16, &data, 8);
	memcpy(b + 24, &w3, 8);
}

static __rte_always_inline struct lcp_msg *
ws_msg_new(struct ws_ctx *x, struct ws_conn *c, unsigned op, const uint8_t *data, size_t len, uint64_t tsc)
{
	struct ws_msg *m = ws_msg_take(x, c);

	if (m == NULL)
		return NULL;
	*m = ws_msg_proto(x, c, tsc);
	m->pub.data = data;
	m->pub.len = (uint32_t)len;
	m->pub.opcode = (uint16_t)op;
	if (unlikely(c->session_start)) {
		m->pub.flags |= LCP_MSG_F_SESSION_START;
		c->session_start = false;
	}
	if (unlikely(c->lost != 0)) {
		/* what was dropped before this one, for the consumers (metrics) */
		m->pub.flags |= LCP_MSG_F_LOSS;
		m->pub.lost = c->lost;
		lcp_count(x->st, WS_C_MSGS_AFTER_LOSS, 1);
		c->lost = 0;
	}
	return &m->pub;
}

static __rte_always_inline void
ws_emit_msg(struct ws_ctx *x, struct ws_conn *c, struct lcp_msg *m)
{
	c->msgs++;
	c->bytes += m->len;
	c->t_last_msg = m->rx_tsc != 0 ? m->rx_tsc : ws_now(); /* the stale-feed watchdog */
	x->pend_msgs++;
	x->pend_bytes += m->len;
	lcp_obuf_put(x->st, &x->msg, m);
}


/* the stage's receive buffers (rx_buffer_size), when a URL is wss:// or
 * permessage-deflate is offered: 0, or -ENOMEM (logged) */
int
ws_rx_pool_init(struct ws_ctx *x, const struct ws_conf *c)
{
	if ((!c->deflate && !ws_any_tls(x)) || c->rx_buffer_size == 0)
		return 0;
	x->rx_pool = lcp_stage_pktmbuf_pool_create_sized(x->st, "wsrx", c->rx_buffers,
							 c->rx_buffer_size + RTE_PKTMBUF_HEADROOM);
	if (x->rx_pool == NULL) {
		lcp_log(x->st, LCP_LOG_ERR, "no memory for %u receive buffers of %u bytes: %s", c->rx_buffers,
			c->rx_buffer_size, rte_strerror(rte_errno));
		return -ENOMEM;
	}
	return 0;
}

/* Inflated messages are packed: each is written at the end of the
 * connection's pack (an mbuf of rx_pool) and handed on by reference to it,
 * like a message inside a segment, so a record that inflates to thousands of
 * ticks holds a few buffers, not thousands of assembly buffers until its
 * consumers run. A pack with less than WS_ZPACK_ROOM left is replaced; a
 * message that outgrows its slice is moved to the heap by the session. */
#define WS_ZPACK_ROOM 2048u

/* c's pack let go: the references taken for messages and not given, then
 * its own (its messages keep theirs) */
static void
ws_zpack_drop(struct ws_conn *c)
{
	if (c->zpack == NULL)
		return;
	if (c->zpack_spare != 0)
		rte_mbuf_refcnt_update(c->zpack, -(int16_t)c->zpack_spare);
	rte_pktmbuf_free(c->zpack);
	c->zpack = NULL;
	c->zpack_spare = 0;
}

/* b: a slice of c's pack, at least need bytes; false: no pack buffer */
static bool
ws_zpack_slice(struct ws_ctx *x, struct ws_conn *c, struct stk_wss_buf *b, size_t need)
{
	uint32_t tail = c->zpack != NULL ? rte_pktmbuf_tailroom(c->zpack) : 0;
	uint32_t room = c->zpack_used < tail ? tail - c->zpack_used : 0; /* used is rounded up */

	if (room < WS_ZPACK_ROOM || room < need) {
		struct rte_mbuf *m = rte_pktmbuf_alloc(x->rx_pool);

		if (m == NULL) {
			lcp_count(x->st, WS_C_RX_BUFFERS_EMPTY, 1);
			return false;
		}
		ws_zpack_drop(c);
		c->zpack = m;
		c->zpack_used = 0;
		room = rte_pktmbuf_tailroom(m);
		if (room < need)
			return false;
	}
	b->data = rte_pktmbuf_mtod(c->zpack, uint8_t *) + c->zpack_used;
	b->cap = room;
	b->kind = WS_ASM_PACK;
	return true;
}

/* ops.buf_get: the first buffer of a message: an inflated one's a slice of
 * the connection's pack; else (or no pack buffer) from the assembly pool (one
 * larger than a pool buffer, or with the pool empty and on_pool_empty "heap",
 * from the heap); none: the message is dropped (drop_assembly_pool_empty).
 * A bigger one (grow) from the heap; none: the session fails with 1011
 * (drop_assembly_nomem). */
static int
ws_buf_get(void *user, struct stk_wss_buf *b, size_t need, bool grow)
{
	struct ws_conn *c = user;
	struct ws_ctx *x = c->x;

	if (!grow && b->kind == STK_WSS_INFLATED && x->rx_pool != NULL && ws_zpack_slice(x, c, b, need))
		return 0;
	if (!grow && need <= x->asm_size) {
		b->data = ws_pool_get(x, x->asm_pool);
		if (b->data != NULL) {
			b->cap = x->asm_size;
			b->kind = WS_ASM_POOL;
			return 0;
		}
		if (!x->asm_heap_fallback) {
			lcp_count(x->st, WS_C_DROP_ASSEMBLY_POOL_EMPTY, 1);
			c->lost++;
			return -1;
		}
		need = x->asm_size;
	}
	b->data = rte_malloc("ws_asm", need, 0);
	if (b->data == NULL) {
		lcp_count(x->st, WS_C_DROP_ASSEMBLY_NOMEM, 1);
		c->lost += !grow; /* a grow that fails fails the connection (1011) */
		lcp_log(x->st, LCP_LOG_ERR, "conn %u: no memory (%zu bytes) to assemble a message", c->idx, need);
		return -1;
	}
	b->cap = need;
	b->kind = WS_ASM_HEAP;
	return 0;
}

static void
ws_buf_put(void *user, struct stk_wss_buf *b)
{
	struct ws_conn *c = user;

	ws_asm_free(c->x, (uint8_t)b->kind, b->data);
}

/* the session of a connection that ends (its buffers back) */
void
ws_session_end(struct ws_conn *c)
{
	stk_wss_fini(&c->ws);
	ws_zpack_drop(c);
}

/* the sessions' counts into the stage's counters (counter + 1; 0: none:
 * drops are counted where they happen, messages as they are delivered) */
static const uint8_t ws_wss_ctr[STK_WSS_S__N] = {
	[STK_WSS_S_frames_control_rx] = WS_C_FRAMES_CONTROL + 1,
	[STK_WSS_S_pings_rx] = WS_C_PINGS_RX + 1,
	[STK_WSS_S_pongs_tx] = WS_C_PONGS_TX + 1,
	[STK_WSS_S_pings_after_close] = WS_C_PINGS_AFTER_CLOSE + 1,
	[STK_WSS_S_pings_tx] = WS_C_PINGS_TX + 1,
	[STK_WSS_S_pongs_rx] = WS_C_PONGS_RX + 1,
	[STK_WSS_S_closes_rx] = WS_C_CLOSES_RX + 1,
	[STK_WSS_S_closes_tx] = WS_C_CLOSES_TX + 1,
	[STK_WSS_S_z_bytes_rx] = WS_C_DEFLATE_BYTES_RX + 1,
	[STK_WSS_S_inflated_bytes] = WS_C_INFLATED_BYTES + 1,
};

void
ws_publish(struct ws_ctx *x)
{
	wss_counts_publish(x->st, &x->wss, &x->wss_pub, ws_wss_ctr);
	ws_tls_publish(x);
}

/* a message the session assembled or inflated: the msg owns the buffer, or
 * (packed) holds a reference to the pack and the pack moves past it */
static void
ws_buf_msg(struct ws_ctx *x, struct ws_conn *c, const struct stk_wss_msg *w, uint64_t tsc)
{
	struct lcp_msg *m = ws_msg_new(x, c, w->opcode, w->data, w->len, tsc);

	if (m == NULL) {
		ws_asm_free(x, (uint8_t)w->buf.kind, w->buf.data);
		return;
	}
	if (w->buf.kind == WS_ASM_PACK) {
		if (unlikely(c->zpack_spare == 0)) { /* as ws_seg_ref: one atomic add for many */
			rte_mbuf_refcnt_update(c->zpack, WS_SEG_REFS);
			c->zpack_spare = WS_SEG_REFS;
		}
		c->zpack_spare--;
		m->backing[0] = c->zpack;
		c->zpack_used += (uint32_t)RTE_ALIGN_CEIL(w->len, 8);
		lcp_count(x->st, WS_C_MSGS_INFLATED, 1);
		ws_emit_msg(x, c, m);
		return;
	}
	m->backing[1] = w->buf.data;
	((struct ws_msg *)m)->asm_kind = (uint8_t)w->buf.kind;
	lcp_count(x->st, w->how == STK_WSS_INFLATED ? WS_C_MSGS_INFLATED
		  : w->buf.kind == WS_ASM_HEAP ? WS_C_MSGS_ASSEMBLED_HEAP : WS_C_MSGS_ASSEMBLED, 1);
	ws_emit_msg(x, c, m);
}

/* the server's close frame (answered by the session) */
static void
ws_server_closed(struct ws_ctx *x, struct ws_conn *c, const struct stk_wss_msg *w)
{
	char why[96];

	if (c->state == WC_CLOSING) {
		/* the answer to our close 1001: TCP goes next */
		lcp_count(x->st, WS_C_STOP_CLOSES_ANSWERED, 1);
		c->close_rcvd = true;
		lcp_log(x->st, LCP_LOG_INFO, "conn %u: the server answered our close with %u", c->idx, w->close_code);
		ws_close_fin(x, c);
		return;
	}
	snprintf(why, sizeof(why), "server closed with %u", w->close_code);
	if (x->stopping || lcp_stage_stopping(x->st)) {
		/* the server closed while we stop (also before this lcore's first
		 * linger turn: the server's stage on another lcore may linger
		 * first): answered; wait for TCP too, no reconnect */
		lcp_log(x->st, LCP_LOG_INFO, "conn %u: the server closed first with %u while we stop: answered",
			c->idx, w->close_code);
		c->close_from = WC_OPEN;
		c->state = WC_CLOSING;
		c->close_rcvd = true;
		c->fin_sent = false;
		ws_close_fin(x, c);
		return;
	}
	ws_close_tcp(x, c, false);
	lcp_count(x->st, WS_C_RECONNECTS, 1);
	ws_schedule_reconnect(x, c, why);
}

/* a segment's messages by reference: its template, the references taken on it
 * and not yet given to a message, what was handed on (counted once, at the end) */
struct ws_seg_run {
	struct ws_seg_tmpl tmpl;
	struct rte_mbuf *seg;
	uint64_t tsc;
	unsigned spare;
	uint64_t msgs, bytes;
};

/* m, backed by the segment: one of its references, counted, staged */
static __rte_always_inline void
ws_seg_ref(struct ws_ctx *x, struct ws_seg_run *r, struct lcp_msg *m)
{
	if (unlikely(r->spare == 0)) {
		rte_mbuf_refcnt_update(r->seg, WS_SEG_REFS);
		r->spare = WS_SEG_REFS;
	}
	r->spare--;
	r->msgs++;
	r->bytes += m->len;
	lcp_obuf_put(x->st, &x->msg, m);
}

/* one message wholly inside the segment: by reference */
static __rte_always_inline void
ws_seg_msg(struct ws_ctx *x, struct ws_conn *c, struct ws_seg_run *r, const uint8_t *data, uint32_t len,
	   unsigned op)
{
	struct lcp_msg *m;

	if (likely(!c->session_start && c->lost == 0)) {
		/* the usual one: the segment's template */
		struct ws_msg *wm = ws_msg_take(x, c);

		if (wm == NULL)
			return;
		ws_seg_tmpl_put(&r->tmpl, wm, data, len, op);
		m = &wm->pub;
	} else if ((m = ws_msg_new(x, c, op, data, len, r->tsc)) == NULL) {
		return;
	} else {
		m->backing[0] = r->seg;
	}
	ws_seg_ref(x, r, m);
}

#define WS_RUN 32 /* messages decoded at once by stk_wss_recv_run */

/* frames in [p, end) of segment seg: runs of whole messages first
 * (stk_wss_recv_run), anything else one event at a time (stk_wss_recv_next) */
static void
ws_frames(struct ws_ctx *x, struct ws_conn *c, struct rte_mbuf *seg, uint8_t *p, uint8_t *end)
{
	struct ws_seg_run r = { .seg = seg, .tsc = lcp_mbuf_rx_tsc(seg) };
	struct stk_wss_msg w;

	ws_seg_tmpl_init(&r.tmpl, x, c, r.tsc, seg);
	for (;;) {
		struct stk_ws_frame f[WS_RUN];
		unsigned k = stk_wss_recv_run(&c->ws, &p, end, f, WS_RUN), i = 0;

		if (likely(!c->session_start && c->lost == 0)) {
			/* the usual run: ws_seg_msg's first case with the
			 * connection's state read once */
			for (; i < k; i++) {
				struct ws_msg *wm = ws_msg_take(x, c);

				if (unlikely(wm == NULL)) { /* counted; the rest as ws_seg_msg */
					i++;
					break;
				}
				ws_seg_tmpl_put(&r.tmpl, wm, f[i].data, f[i].len, f[i].opcode);
				ws_seg_ref(x, &r, &wm->pub);
			}
		}
		for (; i < k; i++)
			ws_seg_msg(x, c, &r, f[i].data, f[i].len, f[i].opcode);
		if (k == WS_RUN)
			continue;
		switch (stk_wss_recv_next(&c->ws, &p, end, &w)) {
		case STK_WSS_NEED_MORE:
			goto out;
		case STK_WSS_MSG:
			if (likely(w.how == STK_WSS_IN_CHUNK))
				ws_seg_msg(x, c, &r, w.data, (uint32_t)w.len, w.opcode);
			else
				ws_buf_msg(x, c, &w, r.tsc);
			continue;
		case STK_WSS_PONG:
			c->t_pong = 0;
			continue;
		case STK_WSS_PING:
			continue;
		case STK_WSS_CLOSE:
			ws_server_closed(x, c, &w);
			goto out;
		case STK_WSS_ERROR:
			lcp_count(x->st, w.close_code == STK_WS_CLOSE_BAD_DATA ? WS_C_FAIL_1007
					 : w.close_code == STK_WS_CLOSE_TOO_BIG ? WS_C_FAIL_1009
					 : w.close_code == STK_WS_CLOSE_INTERNAL ? WS_C_FAIL_1011
										: WS_C_FAIL_1002,
				  1);
			ws_fail(x, c, w.close_code, w.reason);
			goto out;
		default: /* GONE: a send failed (TLS), the connection ended */
			goto out;
		}
	}
out:
	if (r.spare != 0)
		rte_mbuf_refcnt_update(seg, -(int16_t)r.spare);
	if (r.msgs != 0) { /* what ws_emit_msg counts, for the segment's messages at once */
		c->msgs += r.msgs;
		c->bytes += r.bytes;
		c->t_last_msg = r.tsc != 0 ? r.tsc : ws_now(); /* the stale-feed watchdog */
		x->pend_msgs += r.msgs;
		x->pend_bytes += r.bytes;
		x->pend_zc += r.msgs;
	}
}

const struct stk_wss_ops ws_wss_ops = {
	.tx = ws_wss_tx,
	.rand = ws_wss_rand,
	.buf_get = ws_buf_get,
	.buf_put = ws_buf_put,
};


/* plaintext of the WebSocket stream in m (a tcp segment, or a TLS record's
 * plaintext): the upgrade response, then frames */
void
ws_on_plain(struct ws_ctx *x, struct ws_conn *c, struct rte_mbuf *m)
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
		ws_on_open(x, c);
		if (c->state != WC_OPEN)
			return; /* a subscription could not be sent */
		p += used;
	}
	if (c->state == WC_CLOSING) {
		/* stopping: frames up to the server's close are still read (and
		 * delivered) */
		if (!c->close_rcvd && p < end)
			ws_frames(x, c, m, p, end);
		return;
	}
	if (c->state != WC_OPEN || c->ws.close_sent) {
		lcp_count(x->st, WS_C_DROP_AFTER_CLOSE, 1);
		return;
	}
	if (p < end)
		ws_frames(x, c, m, p, end);
}

/* a DATA event of the connection's tcp connection */
void
ws_on_data(struct ws_ctx *x, struct ws_conn *c, struct rte_mbuf *m)
{
	if (c->state == WC_CLOSING && c->close_rcvd) {
		/* stopping, nothing more to read: what follows the server's close
		 * frame (its close_notify), or a late answer on a connection closed
		 * in its handshake */
		lcp_count(x->st, WS_C_EVENTS_OLD_CONN, 1);
		return;
	}
	if (c->tls && (c->state == WC_TLS || c->t != NULL))
		ws_tls_data(x, c, m);
	else
		ws_on_plain(x, c, m);
}
