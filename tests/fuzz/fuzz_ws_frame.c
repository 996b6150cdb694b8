/* SPDX-License-Identifier: BSD-3-Clause
 * fuzz_ws_frame.c — libFuzzer target: the WebSocket frame decoder (stack/ws_frame.c,
 * stack/utf8.c, the inline fast path in stk/ws.h) and, on what it decodes, the
 * encoder (stk_ws_hdr, stk_ws_mask).
 *
 * Input:  byte 0      bit 0: server side (frames must be masked), else client
 *                     bit 1: check UTF-8
 *                     bits 2-3: max_msg 0 (none) / 16 / 200 / 70000
 *                     bit 4: permessage-deflate negotiated (RSV1 allowed on
 *                            a data message's first frame)
 *                     bit 5: the chunk plan's decode takes runs of whole
 *                            messages first (stk_ws_dec_run, 1..8 at a time
 *                            by the chunk's size), then the pieces of cut
 *                            frames that stk_ws_dec_piece takes
 *         bytes 1..4  chunk plan (fuzz_common.h): sizes 1..64 or "the rest"
 *         the rest    the byte stream from the peer
 *
 * The stream is decoded twice: as one chunk and cut by the chunk plan (each
 * chunk in its own exactly sized buffer). Invariants (trap on failure):
 *   - NEED_MORE only when the whole chunk was consumed; the cursor stays inside
 *     the chunk; DATA and CONTROL pieces lie inside the chunk / within 125 bytes
 *   - DATA pieces: `first` exactly on a message's first piece, one opcode and
 *     one `compressed` per message (never without bit 4), message size within
 *     max_msg (a compressed message's wire bytes: within max_msg + max_msg / 16
 *     + 64, deflate's worst case, stk_ws_dec_pmd(); the inflater keeps the
 *     exact limit on what comes out)
 *   - CONTROL close: code 1005 without payload, else a valid code
 *   - ERROR: 1002, 1007 or 1009, and the decoder keeps returning it
 *   - both feeds give the same complete messages, control frames and error code;
 *     without an error the same partial message; with one, what the single
 *     chunk delivered of the failing message is a prefix of what the chunks
 *     delivered (valid bytes before a bad UTF-8 byte may go out chunk by chunk)
 *   - a run's frames are exactly what stk_ws_dec_next returns, one call each,
 *     on a copy of the decoder (whole messages, not compressed), and leave the
 *     decoder as those calls do; a piece stk_ws_dec_piece takes is exactly
 *     stk_ws_dec_next's, the decoder after byte for byte the same; one it
 *     refuses leaves the decoder and the cursor as they were
 *   - every complete message and control frame, encoded again as one frame
 *     (masked on the server side, RSV1 when compressed), decodes to the same
 *     bytes and flag
 */
#include <stdbool.h>

#include <stk/ws.h>

#include "fuzz_common.h"

struct wlog {
	uint8_t *log; /* canonical events: complete messages, control frames, error */
	size_t len, cap;
	uint8_t *msg; /* the message in progress */
	size_t mlen, mcap;
	bool in_msg;
	uint8_t msg_op;
	bool msg_z;
	bool err;
	uint16_t err_code;
	bool roundtrip; /* re-encode what completes */
	bool server, utf8, pmd;
	bool runs; /* feed takes runs (stk_ws_dec_run) first */
	uint64_t max_msg;
};

static void
log_put(struct wlog *L, const void *p, size_t n)
{
	if (n == 0)
		return; /* p may be NULL */
	fuzz_grow(&L->log, &L->cap, L->len + n);
	memcpy(L->log + L->len, p, n);
	L->len += n;
}

/* encode one frame (FIN) and decode it with a fresh decoder of the same kind */
static void
roundtrip(const struct wlog *L, unsigned op, bool z, const uint8_t *data, size_t len,
	  uint16_t close_code)
{
	static const uint8_t key[4] = { 0x37, 0xfa, 0x21, 0x3d };
	struct stk_ws_dec d;
	struct stk_ws_out o;
	uint8_t *f = fuzz_xmalloc(STK_WS_MAX_HDR + len), *p, *end;
	size_t h = z ? stk_ws_hdr_rsv(f, op, true, STK_WS_RSV1, len, L->server ? key : NULL)
		     : stk_ws_hdr(f, op, true, len, L->server ? key : NULL);
	enum stk_ws_ev ev;

	FUZZ_CHECK(h >= 2 && h <= STK_WS_MAX_HDR);
	if (len)
		memcpy(f + h, data, len);
	if (L->server)
		stk_ws_mask(f + h, len, key, 0);
	stk_ws_dec_init(&d, L->server, L->max_msg, L->utf8);
	stk_ws_dec_pmd(&d, L->pmd);
	p = f;
	end = f + h + len;
	ev = stk_ws_dec_next(&d, &p, end, &o);
	if (op >= STK_WS_OP_CLOSE) {
		FUZZ_CHECK(ev == STK_WS_CONTROL);
		FUZZ_CHECK(o.opcode == op);
		if (op == STK_WS_OP_CLOSE)
			FUZZ_CHECK(o.close_code == close_code);
	} else {
		FUZZ_CHECK(ev == STK_WS_DATA);
		FUZZ_CHECK(o.opcode == op && o.first && o.last && o.compressed == z);
	}
	FUZZ_CHECK(o.len == len);
	FUZZ_CHECK(len == 0 || memcmp(o.data, data, len) == 0);
	FUZZ_CHECK(p == end);
	ev = stk_ws_dec_next(&d, &p, end, &o);
	FUZZ_CHECK(ev == STK_WS_NEED_MORE && p == end);
	free(f);
}

static void
on_data(struct wlog *L, const struct stk_ws_out *o)
{
	FUZZ_CHECK(o->opcode == STK_WS_OP_TEXT || o->opcode == STK_WS_OP_BINARY);
	FUZZ_CHECK(o->first == !L->in_msg);
	FUZZ_CHECK(L->pmd || !o->compressed);
	if (o->first) {
		L->in_msg = true;
		L->msg_op = o->opcode;
		L->msg_z = o->compressed;
		L->mlen = 0;
	} else {
		FUZZ_CHECK(o->opcode == L->msg_op);
		FUZZ_CHECK(o->compressed == L->msg_z);
	}
	fuzz_grow(&L->msg, &L->mcap, L->mlen + o->len);
	if (o->len)
		memcpy(L->msg + L->mlen, o->data, o->len);
	L->mlen += o->len;
	if (L->max_msg != 0)
		FUZZ_CHECK(L->mlen <= (L->msg_z ? L->max_msg + L->max_msg / 16 + 64 : L->max_msg));
	if (o->last) {
		uint64_t n = L->mlen;
		uint8_t opz = (uint8_t)(L->msg_op | (L->msg_z ? 0x80 : 0));

		log_put(L, "M", 1);
		log_put(L, &opz, 1);
		log_put(L, &n, sizeof(n));
		log_put(L, L->msg, L->mlen);
		if (L->roundtrip)
			roundtrip(L, L->msg_op, L->msg_z, L->msg, L->mlen, 0);
		L->in_msg = false;
		L->mlen = 0;
	}
}

static void
on_control(struct wlog *L, const struct stk_ws_out *o)
{
	uint8_t n = (uint8_t)o->len;

	FUZZ_CHECK(o->opcode == STK_WS_OP_CLOSE || o->opcode == STK_WS_OP_PING ||
		   o->opcode == STK_WS_OP_PONG);
	FUZZ_CHECK(o->len <= STK_WS_MAX_CONTROL);
	if (o->opcode == STK_WS_OP_CLOSE) {
		if (o->len == 0)
			FUZZ_CHECK(o->close_code == STK_WS_CLOSE_NO_STATUS);
		else
			FUZZ_CHECK(o->len >= 2 && stk_ws_close_code_valid(o->close_code) &&
				   o->close_code == (((unsigned)o->data[0] << 8) | o->data[1]));
	}
	log_put(L, "C", 1);
	log_put(L, &o->opcode, 1);
	log_put(L, &o->close_code, 2);
	log_put(L, &n, 1);
	log_put(L, o->data, o->len);
	if (L->roundtrip)
		roundtrip(L, o->opcode, false, o->data, o->len, o->close_code);
}

/* a run of whole messages from *p: each frame is checked against
 * stk_ws_dec_next on a copy of the decoder, then logged as that call's piece */
static void
feed_run(struct stk_ws_dec *d, uint8_t **p, uint8_t *end, unsigned max, struct wlog *L)
{
	struct stk_ws_frame f[8];
	struct stk_ws_dec d2 = *d;
	uint8_t *q = *p;
	unsigned n = stk_ws_dec_run(d, p, end, f, max);

	FUZZ_CHECK(n <= max && *p >= q && *p <= end);
	for (unsigned i = 0; i < n; i++) {
		struct stk_ws_out o;

		memset(&o, 0, sizeof(o));
		FUZZ_CHECK(stk_ws_dec_next(&d2, &q, end, &o) == STK_WS_DATA);
		FUZZ_CHECK(o.first && o.last && !o.compressed && o.opcode == f[i].opcode &&
			   o.data == f[i].data && o.len == f[i].len);
		on_data(L, &o);
	}
	FUZZ_CHECK(q == *p);
	FUZZ_CHECK(d2.state == d->state && d2.hlen == d->hlen && d2.msg_op == d->msg_op &&
		   d2.msg_len == d->msg_len);
}

/* stk_ws_dec_piece, where it takes the next event: checked against
 * stk_ws_dec_next on a copy of the decoder (the piece, the cursor, the decoder
 * after), then logged as that call's piece; false: it refused, and moved and
 * changed nothing */
static bool
feed_piece(struct stk_ws_dec *d, uint8_t **p, uint8_t *end, struct wlog *L)
{
	struct stk_ws_dec d2 = *d;
	struct stk_ws_out o, o2;
	uint8_t *q = *p;

	memset(&o, 0, sizeof(o));
	if (stk_ws_dec_piece(d, p, end, &o) != STK_WS_DATA) {
		FUZZ_CHECK(*p == q && memcmp(d, &d2, sizeof(d2)) == 0);
		return false;
	}
	memset(&o2, 0, sizeof(o2));
	FUZZ_CHECK(stk_ws_dec_next(&d2, &q, end, &o2) == STK_WS_DATA);
	FUZZ_CHECK(q == *p && o2.data == o.data && o2.len == o.len && o2.opcode == o.opcode &&
		   o2.first == o.first && o2.last == o.last && !o2.compressed && !o.compressed);
	FUZZ_CHECK(memcmp(d, &d2, sizeof(d2)) == 0);
	on_data(L, &o);
	return true;
}

/* decode one chunk to the end */
static void
feed(struct stk_ws_dec *d, uint8_t *chunk, size_t n, struct wlog *L)
{
	uint8_t *p = chunk, *end = chunk + n;
	struct stk_ws_out o;
	enum stk_ws_ev ev;

	for (;;) {
		memset(&o, 0, sizeof(o));
		if (L->runs && !L->err) {
			feed_run(d, &p, end, 1 + (unsigned)(n % 8), L);
			if (feed_piece(d, &p, end, L))
				continue;
		}
		if (L->err) {
			/* sticky: the error again, whatever follows */
			ev = stk_ws_dec_next(d, &p, end, &o);
			FUZZ_CHECK(ev == STK_WS_ERROR && o.close_code == L->err_code);
			return;
		}
		ev = stk_ws_dec_next(d, &p, end, &o);
		FUZZ_CHECK(p >= chunk && p <= end);
		switch (ev) {
		case STK_WS_NEED_MORE:
			FUZZ_CHECK(p == end);
			return;
		case STK_WS_DATA:
			FUZZ_CHECK(o.len == 0 || (o.data >= chunk && o.data + o.len <= p));
			on_data(L, &o);
			break;
		case STK_WS_CONTROL:
			on_control(L, &o);
			break;
		case STK_WS_ERROR:
			FUZZ_CHECK(o.close_code == STK_WS_CLOSE_PROTOCOL || o.close_code == STK_WS_CLOSE_BAD_DATA ||
				   o.close_code == STK_WS_CLOSE_TOO_BIG);
			FUZZ_CHECK(o.reason != NULL);
			L->err = true;
			L->err_code = o.close_code;
			log_put(L, "E", 1);
			log_put(L, &o.close_code, 2);
			break;
		default:
			FUZZ_CHECK(!"unknown event");
		}
	}
}

static void
wlog_free(struct wlog *L)
{
	free(L->log);
	free(L->msg);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const uint64_t max_msgs[4] = { 0, 16, 200, 70000 };
	struct fuzz_chunks plan = { { 0 }, 0 };
	struct wlog whole = { 0 }, cut = { 0 };
	struct stk_ws_dec d;
	const uint8_t *s;
	size_t n, off;
	uint8_t *buf;

	if (size < 1 + FUZZ_NCHUNK)
		return 0;
	whole.server = cut.server = data[0] & 1;
	whole.utf8 = cut.utf8 = (data[0] >> 1) & 1;
	whole.max_msg = cut.max_msg = max_msgs[(data[0] >> 2) & 3];
	whole.pmd = cut.pmd = (data[0] >> 4) & 1;
	whole.roundtrip = true;
	cut.runs = (data[0] >> 5) & 1;
	memcpy(plan.sel, data + 1, FUZZ_NCHUNK);
	s = data + 1 + FUZZ_NCHUNK;
	n = size - 1 - FUZZ_NCHUNK;

	/* one chunk (the decoder unmasks in place: a private copy) */
	stk_ws_dec_init(&d, whole.server, whole.max_msg, whole.utf8);
	stk_ws_dec_pmd(&d, whole.pmd);
	buf = fuzz_dup(s, n);
	feed(&d, buf, n, &whole);
	free(buf);

	/* the chunk plan */
	stk_ws_dec_init(&d, cut.server, cut.max_msg, cut.utf8);
	stk_ws_dec_pmd(&d, cut.pmd);
	for (off = 0; off < n;) {
		size_t k = fuzz_chunk_next(&plan, n - off);

		buf = fuzz_dup(s + off, k);
		feed(&d, buf, k, &cut);
		free(buf);
		off += k;
	}

	FUZZ_CHECK(whole.err == cut.err);
	FUZZ_CHECK(whole.len == cut.len && (whole.len == 0 || memcmp(whole.log, cut.log, whole.len) == 0));
	if (!whole.err) {
		FUZZ_CHECK(whole.in_msg == cut.in_msg);
		FUZZ_CHECK(whole.mlen == cut.mlen && (whole.mlen == 0 || memcmp(whole.msg, cut.msg, whole.mlen) == 0));
	} else if (whole.in_msg) {
		FUZZ_CHECK(cut.in_msg && whole.mlen <= cut.mlen &&
			   (whole.mlen == 0 || memcmp(whole.msg, cut.msg, whole.mlen) == 0));
	}
	wlog_free(&whole);
	wlog_free(&cut);
	return 0;
}
