/* SPDX-License-Identifier: BSD-3-Clause
 * ws_session.c — one WebSocket session over a byte stream (stk/ws_session.h):
 * message assembly and inflation into lent buffers, ping -> pong, the close
 * handshake, masking, compression and fragmentation of what is sent.
 *
 * Receiving is stk_wss_recv() (inline, stk/ws_session.h) for whole messages
 * inside a chunk; everything else comes here: pieces to assemble, compressed
 * pieces to inflate, control frames, errors. stk_wss_recv_next() takes the
 * two ends of a message cut by a chunk boundary without the decoder's state
 * machine (stk_ws_dec_piece). A session that failed or got the
 * peer's close takes no more bytes. Every ops.tx may end the session from the
 * inside (the caller's failure path runs stk_wss_fini): nothing here touches
 * the session after a failed tx. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <stk/ws_session.h>

/* stk_wss_recv_slow: an event that was absorbed (a piece assembled), go on */
#define WSS_CONTINUE (-1)

int
stk_wss_init(struct stk_wss *s, const struct stk_wss_conf *c)
{
	memset(s, 0, sizeof(*s));
	if (c->ops == NULL || c->ops->tx == NULL || (!c->server && c->ops->rand == NULL))
		return -EINVAL;
	stk_ws_dec_init(&s->dec, c->server, c->max_msg, c->check_utf8);
	s->server = c->server;
	s->ops = c->ops;
	s->user = c->user;
	s->st = c->stats != NULL ? c->stats : &s->own;
	s->max_msg = c->max_msg;
	s->close_code = STK_WS_CLOSE_NO_STATUS;
	if (c->pmd != NULL && c->pmd->on) {
		int r = stk_ws_inflate_init(&s->inf, c->pmd, c->server, c->max_msg, c->check_utf8);

		if (r != 0) {
			memset(s, 0, sizeof(*s));
			return r;
		}
		stk_ws_dec_pmd(&s->dec, true);
		s->pmd_on = true;
		if (c->compress) {
			r = stk_ws_deflate_init(&s->def, c->pmd, c->server, c->deflate_level, 0);
			if (r != 0) {
				stk_ws_inflate_fini(&s->inf);
				memset(s, 0, sizeof(*s));
				return r;
			}
			s->z_tx = true;
		}
	}
	s->state = STK_WSS_OPEN;
	return 0;
}

/* give the message buffer back, if there is one */
static void
wss_asm_release(struct stk_wss *s)
{
	if (s->asm_buf.data != NULL && s->ops->buf_put != NULL)
		s->ops->buf_put(s->user, &s->asm_buf);
	s->asm_buf = (struct stk_wss_buf){ 0 };
	s->asm_len = 0;
	s->asm_drop = false;
}

void
stk_wss_fini(struct stk_wss *s)
{
	if (s->state == STK_WSS_FREE)
		return;
	wss_asm_release(s);
	if (s->pmd_on)
		stk_ws_inflate_fini(&s->inf);
	if (s->z_tx)
		stk_ws_deflate_fini(&s->def);
	free(s->zbuf);
	memset(s, 0, sizeof(*s));
}

void
stk_wss_stats_moved(const struct stk_wss_stats *now, struct stk_wss_stats *pub, uint64_t delta[STK_WSS_S__N])
{
	unsigned i = 0;

#define STK_WSS_X(f)                                                           \
	delta[i++] = now->f - pub->f;                                          \
	pub->f = now->f;
	STK_WSS_STATS(STK_WSS_X)
#undef STK_WSS_X
}

/* ---- frames out ---- */

/* one frame to ops.tx: masked with a fresh key on the client */
static int
wss_tx(struct stk_wss *s, unsigned op, bool fin, unsigned rsv, const uint8_t *p, size_t n, bool control)
{
	uint8_t hdr[STK_WS_MAX_HDR], key[4];
	struct stk_wss_frame f = { .hdr = hdr, .payload = p, .len = n, .control = control };

	if (!s->server) {
		s->ops->rand(s->user, key, sizeof(key));
		f.mask = key;
	}
	f.hlen = stk_ws_hdr_rsv(hdr, op, fin, rsv, n, f.mask);
	return s->ops->tx(s->user, &f);
}

/* our close frame with code (0: none), once; state as the caller set it */
static int
wss_close_tx(struct stk_wss *s, uint16_t code, const char *reason)
{
	uint8_t pl[STK_WS_MAX_CONTROL];
	size_t n = 0;
	struct stk_wss_stats *st = s->st;

	if (s->close_sent)
		return -1;
	s->close_sent = true;
	if (code != 0) {
		pl[0] = (uint8_t)(code >> 8);
		pl[1] = (uint8_t)code;
		n = 2;
		if (reason != NULL) {
			size_t r = strlen(reason);

			if (r > STK_WS_MAX_CONTROL - 2) {
				r = STK_WS_MAX_CONTROL - 2;
				while (r > 0 && ((uint8_t)reason[r] & 0xc0) == 0x80)
					r--; /* not inside a UTF-8 sequence */
			}
			memcpy(pl + 2, reason, r);
			n += r;
		}
	}
	if (wss_tx(s, STK_WS_OP_CLOSE, true, 0, pl, n, true) != 0)
		return -1;
	st->closes_tx++;
	return 0;
}

int
stk_wss_close(struct stk_wss *s, uint16_t code, const char *reason)
{
	if (s->state == STK_WSS_FREE)
		return -1;
	return wss_close_tx(s, code, reason);
}

int
stk_wss_ping(struct stk_wss *s, const void *p, size_t n)
{
	struct stk_wss_stats *st = s->st;

	if (s->state != STK_WSS_OPEN || s->close_sent || n > STK_WS_MAX_CONTROL)
		return -1;
	if (wss_tx(s, STK_WS_OP_PING, true, 0, p, n, true) != 0)
		return -1;
	st->pings_tx++;
	return 0;
}

/* the payload of a message to send: compressed into zbuf when the session
 * compresses (RSV1 in *rsv), else as it is. zbuf grows to the compressor's
 * bound for the largest message yet (an allocation only then); a message the
 * compressor cannot take goes out uncompressed (counted). */
static const uint8_t *
wss_payload(struct stk_wss *s, const uint8_t *p, size_t n, size_t *wlen, unsigned *rsv)
{
	size_t need;
	ssize_t z;

	*wlen = n;
	*rsv = 0;
	if (!s->z_tx)
		return p;
	need = stk_ws_deflate_bound(&s->def, n);
	if (need > s->zcap) {
		uint8_t *nb = realloc(s->zbuf, need);

		if (nb == NULL) {
			s->st->z_tx_uncompressed++;
			return p;
		}
		s->zbuf = nb;
		s->zcap = need;
	}
	z = stk_ws_deflate(&s->def, p, n, s->zbuf, s->zcap);
	if (z < 0) {
		s->st->z_tx_uncompressed++;
		return p;
	}
	s->st->z_msgs_tx++;
	s->st->z_bytes_tx += (uint64_t)z;
	*wlen = (size_t)z;
	*rsv = STK_WS_RSV1;
	return s->zbuf;
}

int
stk_wss_send_frag(struct stk_wss *s, unsigned opcode, const void *p, size_t n, unsigned frags, const void *ping,
		  size_t ping_len)
{
	const uint8_t *w;
	size_t wlen, per, off = 0;
	unsigned rsv;

	if (s->state != STK_WSS_OPEN || s->close_sent || (opcode != STK_WS_OP_TEXT && opcode != STK_WS_OP_BINARY) ||
	    (ping != NULL && ping_len > STK_WS_MAX_CONTROL))
		return -1;
	w = wss_payload(s, p, n, &wlen, &rsv);
	if (frags <= 1 || wlen < 2) {
		/* one frame (the ping, if asked for, still after it) */
		struct stk_wss_stats *st = s->st;

		if (wss_tx(s, opcode, true, rsv, w, wlen, false) != 0)
			return -1;
		if (ping == NULL)
			return 0;
		if (wss_tx(s, STK_WS_OP_PING, true, 0, ping, ping_len, true) != 0)
			return -1;
		st->pings_tx++;
		return 0;
	}
	per = (wlen + frags - 1) / frags;
	for (unsigned f = 0; off < wlen; f++) {
		size_t k = wlen - off < per ? wlen - off : per;
		struct stk_wss_stats *st = s->st;

		if (wss_tx(s, f == 0 ? opcode : STK_WS_OP_CONT, off + k == wlen, f == 0 ? rsv : 0, w + off, k, false) !=
		    0)
			return -1;
		off += k;
		if (f == 0 && ping != NULL) {
			if (wss_tx(s, STK_WS_OP_PING, true, 0, ping, ping_len, true) != 0)
				return -1;
			st->pings_tx++;
		}
	}
	return 0;
}

int
stk_wss_send(struct stk_wss *s, unsigned opcode, const void *p, size_t n)
{
	return stk_wss_send_frag(s, opcode, p, n, 1, NULL, 0);
}

/* ---- frames in ---- */

/* fail the session: our close with code (once), then ERROR */
static enum stk_wss_ev
wss_fail(struct stk_wss *s, uint16_t code, const char *reason, struct stk_wss_msg *m)
{
	s->state = STK_WSS_CLOSED;
	wss_asm_release(s);
	m->close_code = code;
	m->reason = reason;
	if (!s->close_sent && wss_close_tx(s, code, NULL) != 0)
		return STK_WSS_GONE;
	return STK_WSS_ERROR;
}

/* the assembled (or inflated) message out: the buffer is the caller's now */
static enum stk_wss_ev
wss_emit(struct stk_wss *s, struct stk_wss_msg *m, uint8_t how)
{
	m->opcode = s->asm_op;
	m->how = how;
	m->data = s->asm_buf.data;
	m->len = s->asm_len;
	m->buf = s->asm_buf;
	s->asm_buf = (struct stk_wss_buf){ 0 };
	s->asm_len = 0;
	return STK_WSS_MSG;
}

/* the first buffer of a message, of at least need bytes, for how
 * (STK_WSS_ASSEMBLED, STK_WSS_INFLATED: ops.buf_get sees it in kind); false:
 * the message is dropped (its rest skipped) */
static bool
wss_buf_first(struct stk_wss *s, size_t need, uint32_t how)
{
	if (need == 0)
		need = 1;
	if (s->max_msg != 0 && need > s->max_msg)
		need = (size_t)s->max_msg;
	s->asm_buf.kind = how;
	if (s->ops->buf_get != NULL && s->ops->buf_get(s->user, &s->asm_buf, need, false) == 0)
		return true;
	s->asm_buf = (struct stk_wss_buf){ 0 };
	s->st->msgs_dropped++;
	s->asm_drop = true;
	return false;
}

/* room for need bytes: a buffer of twice the size (or more, up to max_msg)
 * for the one held, the bytes copied over; false: none (the caller fails the
 * session with 1011) */
static bool
wss_buf_grow(struct stk_wss *s, size_t need)
{
	struct stk_wss_buf nb = { 0 };
	size_t cap = s->asm_buf.cap ? s->asm_buf.cap * 2 : 4096;

	while (cap < need)
		cap *= 2;
	if (s->max_msg != 0 && cap > s->max_msg)
		cap = s->max_msg > need ? (size_t)s->max_msg : need;
	if (s->ops->buf_get == NULL || s->ops->buf_get(s->user, &nb, cap, true) != 0)
		return false;
	if (s->asm_len > 0)
		memcpy(nb.data, s->asm_buf.data, s->asm_len);
	if (s->ops->buf_put != NULL)
		s->ops->buf_put(s->user, &s->asm_buf);
	s->asm_buf = nb;
	return true;
}

/* a piece of a compressed message: inflated into the message's buffer (grown
 * as the inflater asks), or into scratch space when it has none */
static int
wss_inflate(struct stk_wss *s, const struct stk_ws_out *o, struct stk_wss_msg *m)
{
	const uint8_t *in = o->data, *ie = o->data + o->len;
	unsigned fl = (o->last ? STK_WS_Z_LAST : 0) | (s->asm_op == STK_WS_OP_TEXT ? STK_WS_Z_TEXT : 0);
	struct stk_wss_stats *st = s->st;

	st->z_bytes_rx += o->len;
	if (o->first && s->asm_buf.data == NULL)
		wss_buf_first(s, o->len + 1, STK_WSS_INFLATED);
	for (;;) {
		uint8_t *out, *oe, *o0;
		int r;

		if (s->asm_drop) {
			out = s->zscratch;
			oe = out + sizeof(s->zscratch);
		} else {
			/* at max_msg the inflater needs no room: it ends the message or
			 * fails it with 1009 itself */
			if (s->asm_len == s->asm_buf.cap && (s->max_msg == 0 || s->asm_buf.cap < s->max_msg) &&
			    !wss_buf_grow(s, s->asm_buf.cap + 1))
				return (int)wss_fail(s, STK_WS_CLOSE_INTERNAL, "no memory to inflate a message", m);
			out = s->asm_buf.data + s->asm_len;
			oe = s->asm_buf.data + s->asm_buf.cap;
		}
		o0 = out;
		r = stk_ws_inflate(&s->inf, &in, ie, fl, &out, oe);
		st->inflated_bytes += (uint64_t)(out - o0);
		if (!s->asm_drop)
			s->asm_len += (size_t)(out - o0);
		if (r == STK_WS_Z_SPACE)
			continue;
		if (r == STK_WS_Z_ERROR)
			return (int)wss_fail(s, s->inf.err_code, s->inf.err, m);
		if (r != STK_WS_Z_END)
			return WSS_CONTINUE;
		if (s->asm_drop) {
			s->asm_drop = false;
			return WSS_CONTINUE;
		}
		st->z_msgs_rx++;
		return (int)wss_emit(s, m, STK_WSS_INFLATED);
	}
}

/* a piece of a data message */
static int
wss_data(struct stk_wss *s, const struct stk_ws_out *o, struct stk_wss_msg *m)
{
	if (o->first) {
		s->asm_len = 0;
		s->asm_op = o->opcode;
		s->asm_drop = false;
		if (o->last && !o->compressed) {
			m->opcode = o->opcode;
			m->how = STK_WSS_IN_CHUNK;
			m->data = o->data;
			m->len = o->len;
			return (int)STK_WSS_MSG;
		}
	}
	if (o->compressed)
		return wss_inflate(s, o, m);
	if (s->asm_drop) { /* the message had no buffer: skip its rest */
		if (o->last)
			s->asm_drop = false;
		return WSS_CONTINUE;
	}
	if (s->asm_buf.data == NULL && !wss_buf_first(s, o->len, STK_WSS_ASSEMBLED)) {
		if (o->last)
			s->asm_drop = false;
		return WSS_CONTINUE;
	}
	if (s->asm_len + o->len > s->asm_buf.cap && !wss_buf_grow(s, s->asm_len + o->len))
		return (int)wss_fail(s, STK_WS_CLOSE_INTERNAL, "no memory to assemble a message", m);
	memcpy(s->asm_buf.data + s->asm_len, o->data, o->len);
	s->asm_len += o->len;
	if (!o->last)
		return WSS_CONTINUE;
	return (int)wss_emit(s, m, STK_WSS_ASSEMBLED);
}

/* a control frame: ping -> pong; close -> our answer, then CLOSE */
static enum stk_wss_ev
wss_control(struct stk_wss *s, struct stk_ws_out *o, struct stk_wss_msg *m)
{
	struct stk_wss_stats *st = s->st;

	st->frames_control_rx++;
	m->opcode = o->opcode;
	m->data = o->data;
	m->len = o->len;
	if (o->opcode == STK_WS_OP_PING) {
		st->pings_rx++;
		if (!s->close_sent) {
			/* CLOSED while the pong goes out: a tx that fails ends the
			 * session for good (GONE), finished inside or not */
			s->state = STK_WSS_CLOSED;
			if (wss_tx(s, STK_WS_OP_PONG, true, 0, o->data, o->len, true) != 0)
				return STK_WSS_GONE;
			s->state = STK_WSS_OPEN;
			st->pongs_tx++;
		} else {
			st->pings_after_close++;
		}
		return STK_WSS_PING;
	}
	if (o->opcode == STK_WS_OP_PONG) {
		st->pongs_rx++;
		return STK_WSS_PONG;
	}
	st->closes_rx++;
	s->close_rcvd = true;
	s->close_code = o->close_code;
	s->state = STK_WSS_CLOSED;
	wss_asm_release(s); /* a message the close cut short */
	m->close_code = o->close_code;
	m->answer = s->close_sent;
	m->reason = NULL;
	if (o->len >= 2) {
		m->data = o->data + 2;
		m->len = o->len - 2;
	} else {
		m->len = 0;
	}
	/* echo the code (RFC 6455 5.5.1), none if it sent none */
	if (!s->close_sent &&
	    wss_close_tx(s, o->close_code == STK_WS_CLOSE_NO_STATUS ? 0 : o->close_code, NULL) != 0)
		return STK_WSS_GONE;
	return STK_WSS_CLOSE;
}

enum stk_wss_ev
stk_wss_recv_slow(struct stk_wss *s, uint8_t **p, uint8_t *end, struct stk_wss_msg *m, int ev,
		  struct stk_ws_out *o)
{
	if (s->state != STK_WSS_OPEN) {
		*p = end;
		return STK_WSS_NEED_MORE;
	}
	for (;;) {
		int r;

		if (ev < 0)
			ev = (int)stk_ws_dec_next(&s->dec, p, end, o);
		switch (ev) {
		case STK_WS_NEED_MORE:
			return STK_WSS_NEED_MORE;
		case STK_WS_DATA:
			r = wss_data(s, o, m);
			break;
		case STK_WS_CONTROL:
			return wss_control(s, o, m);
		default:
			return wss_fail(s, o->close_code, o->reason, m);
		}
		if (r != WSS_CONTINUE)
			return (enum stk_wss_ev)r;
		ev = -1;
	}
}

enum stk_wss_ev
stk_wss_recv_next(struct stk_wss *s, uint8_t **p, uint8_t *end, struct stk_wss_msg *m)
{
	struct stk_ws_out o;

	if (s->state == STK_WSS_OPEN && stk_ws_dec_piece(&s->dec, p, end, &o) == STK_WS_DATA) {
		int r = wss_data(s, &o, m);

		if (r != WSS_CONTINUE)
			return (enum stk_wss_ev)r;
		/* a piece absorbed at the chunk's end: the decoder needs more */
		if (*p == end)
			return STK_WSS_NEED_MORE;
	}
	return stk_wss_recv(s, p, end, m);
}
