/* SPDX-License-Identifier: BSD-3-Clause
 * fuzz_ws_session.c — libFuzzer target: the WebSocket session layer
 * (stack/ws_session.c over the codec of stack/ws_frame.c and ws_deflate.c)
 * reading an arbitrary byte stream from its peer, answering it, echoing what
 * it delivers, with buffers that are sometimes refused and a tx that may fail.
 *
 * Input:  byte 0      bit 0: the session is the server (else the client)
 *                     bit 1: permessage-deflate in use; bit 2: no_context_takeover
 *                     (both directions); bit 3: check UTF-8; bit 4: compress
 *                     what we send; bit 5: echo every message back (every
 *                     third one in 2..8 fragments, a ping inside); bit 6: tx
 *                     number byte 10 fails, and every one after it; bit 7: the
 *                     failing tx
 *                     finishes the session (stk_wss_fini, free) from inside
 *         byte 1      max_msg: 0 none, else 8 * byte (8..2040)
 *         bytes 2..5  chunk plan of the stream (fuzz_common.h)
 *         bytes 6..9  buffer plan: buf_get call i (first or grow) is refused
 *                     when bit i % 32 of these 32 bits is set
 *         byte 10     see bit 6
 *         byte 11     bits 0-2: the peer's window bits - 8, bits 3-5: ours - 8;
 *                     bit 6: a ping of ours after every 4th chunk; bit 7: our
 *                     close (1000) after the 2nd chunk
 *         the rest    the stream from the peer, cut by the chunk plan (each
 *                     chunk in its own exactly sized allocation); a chunk
 *                     whose index plus the input's length is odd is read as
 *                     a client's receive loop reads (stk_wss_recv_run, then
 *                     stk_wss_recv_next), the others with stk_wss_recv
 *
 * Invariants (trap on failure):
 *   - the cursor stays in the chunk; NEED_MORE only with the chunk consumed
 *   - MSG: TEXT or BINARY; IN_CHUNK data inside the chunk, ASSEMBLED / INFLATED
 *     data = buf.data with len <= buf.cap in a buffer lent and not given back
 *     (then it is ours); len <= max_msg when set; text valid UTF-8 with
 *     check_utf8 (every byte read: ASan sees a bad range)
 *   - after ERROR or CLOSE nothing but NEED_MORE (the rest of the stream is
 *     still fed); GONE exactly when a tx failed in the call, and the input
 *     stops there; a send, ping or close whose tx failed returns -1, one on a
 *     session not OPEN or after our close returns -1
 *   - ERROR: 1002, 1007, 1009 or 1011 with a reason, state CLOSED, and our
 *     close with that code the last frame sent (unless ours went out before)
 *   - CLOSE: 1005 or a valid code; answer iff our close went out first; else
 *     our close echoes the code (no payload for 1005); state CLOSED
 *   - PING: answered by a pong with its payload, unless our close went out
 *   - buffers: need <= max_msg when set, a grow asks for more than the buffer
 *     it replaces, every buf_put gives back a lent buffer once; none out after
 *     stk_wss_fini
 *   - every frame sent: header consistent with the frame (length, mask bit and
 *     key, control flag, control frames final and <= 125 bytes), masked iff we
 *     are the client, RSV1 only on a first data frame with compression on, at
 *     most one close and nothing after it; the whole tx stream read by a
 *     reference decoder of the other role without error, and each echoed
 *     message read back (inflated when RSV1) equal to what was sent
 */
#include <stdbool.h>

#include <stk/ws.h>
#include <stk/ws_session.h>

#include "fuzz_common.h"

struct lent {
	uint8_t *data;
	size_t cap;
	bool out;
};

struct fz {
	struct stk_wss *s; /* NULL once a failing tx finished it */
	bool server, pmd, utf8, tx_fini;
	uint64_t max_msg;
	/* buffers */
	struct lent *bufs;
	size_t nbufs;
	uint32_t refuse;
	unsigned ncalls;
	size_t cur_cap;
	/* tx */
	unsigned ntx;
	long fail_at; /* -1: none */
	unsigned failed;
	uint64_t rnd;
	bool close_out; /* a close frame went to tx */
	uint16_t close_out_code;
	uint8_t last_op; /* the last frame sent */
	uint8_t last_pl[STK_WS_MAX_CONTROL];
	size_t last_len;
	/* the reference decoder of the other role over everything sent */
	struct stk_ws_dec ref;
	struct stk_ws_inflate ref_inf;
	bool ref_inf_on;
	uint8_t *rmsg; /* the message being read back */
	size_t rlen, rcap;
	bool rz;
	const uint8_t *sending; /* the message being echoed */
	size_t sending_len;
	unsigned echoed;
};

static struct lent *
lent_of(struct fz *z, const struct stk_wss_buf *b)
{
	FUZZ_CHECK(b->kind < z->nbufs);
	FUZZ_CHECK(z->bufs[b->kind].out && z->bufs[b->kind].data == b->data);
	return &z->bufs[b->kind];
}

static int
fz_buf_get(void *user, struct stk_wss_buf *b, size_t need, bool g)
{
	struct fz *z = user;
	unsigned i = z->ncalls++;
	struct lent *l;

	FUZZ_CHECK(z->s != NULL);
	if (z->max_msg)
		FUZZ_CHECK(need <= z->max_msg);
	if (g)
		FUZZ_CHECK(need > z->cur_cap);
	if ((z->refuse >> (i % 32)) & 1)
		return -1;
	z->bufs = realloc(z->bufs, (z->nbufs + 1) * sizeof(*z->bufs));
	if (z->bufs == NULL)
		abort();
	l = &z->bufs[z->nbufs];
	l->data = fuzz_xmalloc(need); /* exactly need */
	l->cap = need;
	l->out = true;
	z->cur_cap = need;
	b->data = l->data;
	b->cap = need;
	b->kind = (uint32_t)z->nbufs++;
	return 0;
}

static void
fz_buf_put(void *user, struct stk_wss_buf *b)
{
	struct fz *z = user;
	struct lent *l = lent_of(z, b);

	l->out = false;
	free(l->data);
	l->data = NULL;
}

static void
fz_rand(void *user, uint8_t *out, unsigned n)
{
	struct fz *z = user;

	for (unsigned i = 0; i < n; i++) {
		z->rnd = z->rnd * 6364136223846793005ull + 1442695040888963407ull;
		out[i] = (uint8_t)(z->rnd >> 56);
	}
}

/* a whole message read back by the reference decoder */
static void
ref_message(struct fz *z)
{
	const uint8_t *m = z->rmsg;
	size_t n = z->rlen;
	uint8_t *out = NULL;
	size_t olen = 0, ocap = 0;

	if (z->rz) {
		const uint8_t *in = z->rmsg;
		int r;

		FUZZ_CHECK(z->ref_inf_on);
		do {
			uint8_t *o, *o0;

			fuzz_grow(&out, &ocap, olen + 4096);
			o0 = o = out + olen;
			r = stk_ws_inflate(&z->ref_inf, &in, z->rmsg + z->rlen, STK_WS_Z_LAST, &o,
					   out + ocap);
			olen += (size_t)(o - o0);
		} while (r == STK_WS_Z_SPACE);
		FUZZ_CHECK(r == STK_WS_Z_END);
		m = out;
		n = olen;
	}
	FUZZ_CHECK(z->sending != NULL);
	FUZZ_CHECK(n == z->sending_len && (n == 0 || memcmp(m, z->sending, n) == 0));
	z->echoed++;
	free(out);
}

/* a frame sent, through the reference decoder */
static void
ref_feed(struct fz *z, uint8_t *p, size_t n)
{
	uint8_t *end = p + n;

	for (;;) {
		struct stk_ws_out o;
		int e = stk_ws_dec_next(&z->ref, &p, end, &o);

		FUZZ_CHECK(e != STK_WS_ERROR);
		if (e == STK_WS_NEED_MORE)
			break;
		if (e == STK_WS_DATA) {
			if (o.first) {
				z->rlen = 0;
				z->rz = o.compressed;
			}
			fuzz_grow(&z->rmsg, &z->rcap, z->rlen + o.len);
			if (o.len)
				memcpy(z->rmsg + z->rlen, o.data, o.len);
			z->rlen += o.len;
			if (o.last)
				ref_message(z);
		}
	}
	FUZZ_CHECK(p == end);
}

static int
fz_tx(void *user, const struct stk_wss_frame *f)
{
	struct fz *z = user;
	unsigned i = z->ntx++, op;
	size_t ext, hl;
	uint64_t len = 0;
	uint8_t *w;

	FUZZ_CHECK(z->s != NULL);
	if (z->fail_at >= 0 && i >= (unsigned long)z->fail_at) {
		z->failed++;
		if (z->tx_fini) {
			stk_wss_fini(z->s);
			free(z->s);
			z->s = NULL;
		}
		return -1;
	}
	/* the header against the frame */
	FUZZ_CHECK(f->hlen >= 2 && f->hlen <= STK_WS_MAX_HDR);
	ext = (f->hdr[1] & 0x7f) == 126 ? 2 : (f->hdr[1] & 0x7f) == 127 ? 8 : 0;
	hl = 2 + ext + ((f->hdr[1] & 0x80) ? 4 : 0);
	FUZZ_CHECK(hl == f->hlen);
	if (ext == 0)
		len = f->hdr[1] & 0x7f;
	for (size_t k = 0; k < ext; k++)
		len = len << 8 | f->hdr[2 + k];
	FUZZ_CHECK(len == f->len);
	FUZZ_CHECK(((f->hdr[1] & 0x80) != 0) == !z->server);
	FUZZ_CHECK((f->mask != NULL) == !z->server);
	if (f->mask)
		FUZZ_CHECK(memcmp(f->hdr + f->hlen - 4, f->mask, 4) == 0);
	op = f->hdr[0] & 0x0fu;
	FUZZ_CHECK(f->control == (op >= 8));
	FUZZ_CHECK(!z->close_out); /* nothing after our close */
	if (f->control) {
		FUZZ_CHECK(f->len <= STK_WS_MAX_CONTROL && (f->hdr[0] & 0x80));
		FUZZ_CHECK((f->hdr[0] & 0x70) == 0);
		memcpy(z->last_pl, f->payload, f->len);
	} else {
		FUZZ_CHECK((f->hdr[0] & 0x30) == 0);
		if (f->hdr[0] & 0x40)
			FUZZ_CHECK(z->pmd && op != STK_WS_OP_CONT);
	}
	z->last_op = (uint8_t)op;
	z->last_len = f->len;
	if (op == STK_WS_OP_CLOSE) {
		z->close_out = true;
		z->close_out_code =
			f->len >= 2 ? (uint16_t)(f->payload[0] << 8 | f->payload[1]) : 1005;
	}
	/* the wire bytes, to the reference decoder */
	w = fuzz_xmalloc(f->hlen + f->len);
	memcpy(w, f->hdr, f->hlen);
	if (f->mask)
		stk_ws_mask_copy(w + f->hlen, f->payload, f->len, f->mask, 0);
	else if (f->len)
		memcpy(w + f->hlen, f->payload, f->len);
	ref_feed(z, w, f->hlen + f->len);
	free(w);
	return 0;
}

/* a send / ping / close of ours; false: the session is gone */
static bool
fz_sent(struct fz *z, int rc, unsigned failed_before, bool was_open)
{
	if (z->failed != failed_before) {
		FUZZ_CHECK(rc == -1);
		return z->s != NULL;
	}
	if (!was_open)
		FUZZ_CHECK(rc == -1);
	return true;
}

static void
fz_echo(struct fz *z, const struct stk_wss_msg *m, unsigned nmsg)
{
	unsigned before = z->failed, echoed = z->echoed;
	bool open = z->s->state == STK_WSS_OPEN && !z->s->close_sent;
	int rc;

	z->sending = m->data;
	z->sending_len = m->len;
	if (nmsg % 3 == 2)
		rc = stk_wss_send_frag(z->s, m->opcode, m->data, m->len, (unsigned)(2 + m->len % 7),
				       "e", 1);
	else
		rc = stk_wss_send(z->s, m->opcode, m->data, m->len);
	fz_sent(z, rc, before, open);
	if (rc == 0)
		FUZZ_CHECK(z->echoed == echoed + 1);
	z->sending = NULL;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct stk_wss_ops ops = {
		.tx = fz_tx, .rand = fz_rand, .buf_get = fz_buf_get, .buf_put = fz_buf_put};
	struct stk_wss_stats st = {0};
	struct stk_ws_pmd pmd = {0};
	struct stk_wss_conf c = {0};
	struct fuzz_chunks plan = {{0}, 0};
	struct fz z = {0};
	bool ended = false, gone = false, echo;
	unsigned nchunk = 0, nmsg = 0, peer_bits, our_bits;
	size_t off;
	uint8_t b11;

	if (size < 12)
		return 0;
	z.server = data[0] & 1;
	z.pmd = (data[0] >> 1) & 1;
	z.utf8 = (data[0] >> 3) & 1;
	echo = (data[0] >> 5) & 1;
	z.fail_at = (data[0] >> 6) & 1 ? data[10] : -1;
	z.tx_fini = data[0] >> 7;
	z.max_msg = 8u * data[1];
	memcpy(plan.sel, data + 2, FUZZ_NCHUNK);
	z.refuse = (uint32_t)data[6] | (uint32_t)data[7] << 8 | (uint32_t)data[8] << 16 |
		   (uint32_t)data[9] << 24;
	z.rnd = 0x9e3779b97f4a7c15ull ^ size;
	b11 = data[11];
	peer_bits = 8 + (b11 & 7);
	our_bits = 8 + ((b11 >> 3) & 7);

	pmd.on = true;
	pmd.client_no_context_takeover = pmd.server_no_context_takeover = (data[0] >> 2) & 1;
	pmd.client_max_window_bits = (uint8_t)(z.server ? peer_bits : our_bits);
	pmd.server_max_window_bits = (uint8_t)(z.server ? our_bits : peer_bits);
	c.server = z.server;
	c.max_msg = z.max_msg;
	c.check_utf8 = z.utf8;
	c.pmd = z.pmd ? &pmd : NULL;
	c.compress = (data[0] >> 4) & 1;
	c.deflate_level = 1;
	c.ops = &ops;
	c.user = &z;
	c.stats = &st;

	/* the reference reader of what we send: the other role, no limits */
	stk_ws_dec_init(&z.ref, !z.server, 0, false);
	if (z.pmd) {
		stk_ws_dec_pmd(&z.ref, true);
		FUZZ_CHECK(stk_ws_inflate_init(&z.ref_inf, &pmd, !z.server, 0, false) == 0);
		z.ref_inf_on = true;
	}
	z.s = fuzz_xmalloc(sizeof(*z.s));
	FUZZ_CHECK(stk_wss_init(z.s, &c) == 0);
	FUZZ_CHECK(z.s->pmd_on == z.pmd);

	off = 12;
	while (off < size && z.s != NULL) {
		size_t k = fuzz_chunk_next(&plan, size - off);
		uint8_t *chunk = fuzz_dup(data + off, k), *p = chunk, *end = chunk + k;

		/* the receive loop of this chunk: chunks whose index plus the
		 * input's length is odd are read as a client's loop reads them */
		bool loop = ((nchunk + size) & 1) != 0;
		struct stk_ws_frame f[4];
		unsigned fi = 0, fk = 0;

		for (;;) {
			struct stk_wss_msg m;
			unsigned before = z.failed;
			bool close_was_out = z.s->close_sent, had_close = z.close_out;
			enum stk_wss_ev e;

			memset(&m, 0, sizeof(m));
			if (loop && fi == fk) {
				fi = 0;
				fk = stk_wss_recv_run(z.s, &p, end, f, 1 + (unsigned)(k % 4));
				FUZZ_CHECK(fk <= 1 + k % 4);
			}
			if (fi < fk) {
				e = STK_WSS_MSG;
				m.opcode = f[fi].opcode;
				m.how = STK_WSS_IN_CHUNK;
				m.data = f[fi].data;
				m.len = f[fi].len;
				fi++;
			} else {
				e = loop ? stk_wss_recv_next(z.s, &p, end, &m) : stk_wss_recv(z.s, &p, end, &m);
			}
			if (z.failed != before) {
				FUZZ_CHECK(e == STK_WSS_GONE);
			} else {
				FUZZ_CHECK(e != STK_WSS_GONE);
				FUZZ_CHECK(p >= chunk && p <= end);
			}
			if (e == STK_WSS_NEED_MORE) {
				FUZZ_CHECK(p == end);
				break;
			}
			FUZZ_CHECK(!ended);
			if (e == STK_WSS_GONE) {
				ended = gone = true;
				break;
			}
			switch (e) {
			case STK_WSS_MSG: {
				uint32_t sum = 0;

				FUZZ_CHECK(m.opcode == STK_WS_OP_TEXT ||
					   m.opcode == STK_WS_OP_BINARY);
				if (m.how == STK_WSS_IN_CHUNK) {
					FUZZ_CHECK(m.len == 0 ||
						   (m.data >= chunk && m.data + m.len <= end));
				} else {
					FUZZ_CHECK(m.how == STK_WSS_ASSEMBLED ||
						   m.how == STK_WSS_INFLATED);
					FUZZ_CHECK(m.how == STK_WSS_ASSEMBLED || z.pmd);
					lent_of(&z, &m.buf);
					FUZZ_CHECK(m.data == m.buf.data && m.len <= m.buf.cap);
				}
				if (z.max_msg)
					FUZZ_CHECK(m.len <= z.max_msg);
				for (size_t i = 0; i < m.len; i++)
					sum += m.data[i];
				(void)sum;
				if (m.opcode == STK_WS_OP_TEXT && z.utf8)
					FUZZ_CHECK(stk_utf8_validate(STK_UTF8_ACCEPT, m.data,
								     m.len) == STK_UTF8_ACCEPT);
				if (echo)
					fz_echo(&z, &m, nmsg);
				nmsg++;
				if (m.how != STK_WSS_IN_CHUNK) {
					/* ours now (the echo may have finished the session: the
					 * buffer stays ours all the same) */
					struct lent *l = lent_of(&z, &m.buf);

					l->out = false;
					free(l->data);
					l->data = NULL;
				}
				break;
			}
			case STK_WSS_PING:
				FUZZ_CHECK(m.len <= STK_WS_MAX_CONTROL);
				if (!close_was_out) {
					FUZZ_CHECK(z.last_op == STK_WS_OP_PONG &&
						   z.last_len == m.len);
					FUZZ_CHECK(m.len == 0 ||
						   memcmp(z.last_pl, m.data, m.len) == 0);
				}
				break;
			case STK_WSS_PONG:
				FUZZ_CHECK(m.len <= STK_WS_MAX_CONTROL);
				break;
			case STK_WSS_CLOSE:
				ended = true;
				FUZZ_CHECK(m.close_code == 1005 ||
					   stk_ws_close_code_valid(m.close_code));
				FUZZ_CHECK(m.answer == close_was_out);
				FUZZ_CHECK(z.s->state == STK_WSS_CLOSED && z.s->close_rcvd);
				FUZZ_CHECK(m.len <= STK_WS_MAX_CONTROL - 2);
				if (!close_was_out) {
					FUZZ_CHECK(!had_close && z.close_out);
					FUZZ_CHECK(z.close_out_code == m.close_code);
				}
				break;
			case STK_WSS_ERROR:
				ended = true;
				FUZZ_CHECK(m.close_code == 1002 || m.close_code == 1007 ||
					   m.close_code == 1009 || m.close_code == 1011);
				FUZZ_CHECK(m.reason != NULL);
				FUZZ_CHECK(z.s->state == STK_WSS_CLOSED && z.s->close_sent);
				if (!close_was_out) {
					FUZZ_CHECK(!had_close && z.close_out);
					FUZZ_CHECK(z.close_out_code == m.close_code);
				}
				break;
			default:
				FUZZ_CHECK(!"unknown event");
			}
			if (z.s == NULL) /* an echo's tx finished it */
				break;
		}
		free(chunk);
		off += k;
		nchunk++;
		/* GONE: stop (the session cannot have marked itself); after ERROR
		 * and CLOSE the rest is fed to check that it is only consumed */
		if (z.s == NULL || gone)
			break;
		if ((b11 >> 6) & 1 && nchunk % 4 == 0) {
			unsigned before = z.failed;
			bool open = z.s->state == STK_WSS_OPEN && !z.s->close_sent;

			if (!fz_sent(&z, stk_wss_ping(z.s, "fz", 2), before, open))
				break;
		}
		if (b11 >> 7 && nchunk == 2 && z.s != NULL) {
			unsigned before = z.failed;
			bool open = !z.s->close_sent;
			int rc = stk_wss_close(z.s, 1000, "fuzz");

			if (!fz_sent(&z, rc, before, open))
				break;
			if (open && z.failed == before)
				FUZZ_CHECK(rc == 0 && z.close_out && z.close_out_code == 1000);
			/* nothing more of ours: data, pings, a second close */
			FUZZ_CHECK(stk_wss_send(z.s, STK_WS_OP_BINARY, "x", 1) == -1);
			FUZZ_CHECK(stk_wss_close(z.s, 1000, NULL) == -1);
		}
	}
	if (z.s != NULL) {
		stk_wss_fini(z.s);
		FUZZ_CHECK(z.s->state == STK_WSS_FREE);
		stk_wss_fini(z.s);
		free(z.s);
	}
	for (size_t i = 0; i < z.nbufs; i++)
		FUZZ_CHECK(!z.bufs[i].out);
	free(z.bufs);
	free(z.rmsg);
	if (z.ref_inf_on)
		stk_ws_inflate_fini(&z.ref_inf);
	return 0;
}
