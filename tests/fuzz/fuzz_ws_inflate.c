/* SPDX-License-Identifier: BSD-3-Clause
 * fuzz_ws_inflate.c — libFuzzer target: the permessage-deflate inflater
 * (stk_ws_inflate in stack/ws_deflate.c) on arbitrary bytes as the compressed
 * messages of one connection, and the deflater on what inflates.
 *
 * Input:  byte 0      bit 0: we are the server (the client's parameters apply)
 *                     bit 1: the messages are text; bit 2: check UTF-8
 *                     bit 3: the peer's no_context_takeover
 *                     bits 4-6: the peer's window bits 8 + (0..7)
 *                     bit 7: deflate every inflated message again
 *         byte 1      the inflated-size limit: 1 + 37 * byte (1..9436)
 *         bytes 2..5  chunk plan of the input pieces (fuzz_common.h)
 *         bytes 6..9  chunk plan of the output regions
 *         the rest    messages: a length byte L, then L bytes (fewer at the end)
 *
 * Every message is inflated twice, by two inflaters of the same connection
 * parameters: as one piece into one region of limit + 64 bytes, and cut into
 * pieces and regions by the chunk plans (each in its own exactly sized
 * allocation). Invariants (trap on failure):
 *   - returns: MORE exactly on a non-last piece with all of it consumed, SPACE
 *     only with the region full, END / ERROR on the last piece; cursors stay
 *     inside their piece and region; an ERROR has a reason and is sticky
 *   - never more than the limit out for a message (msg_out and the bytes
 *     written), whatever the chunking
 *   - both inflaters agree: same END or ERROR with the same close code (1007,
 *     1009; nothing else from a healthy zlib), the same bytes on END, one
 *     output a prefix of the other on 1007, exactly `limit` bytes on 1009 —
 *     but for a back reference beyond the agreed window, which zlib may take
 *     from the one large region and refuse in small ones ("invalid distance
 *     too far back" in the cut feed only, its bytes a prefix of the other's)
 *   - counters: in_bytes = the compressed bytes fed, out_bytes = bytes out
 *   - with bit 7: our deflater (the peer's parameters, as the peer would use
 *     them) compresses an inflated message into at most stk_ws_deflate_bound
 *     bytes, and a third inflater gets the same bytes back
 * Leak-free: everything is released at the end of each input.
 */
#include <stdbool.h>

#include <stk/ws.h>

#include "fuzz_common.h"

struct side {
	struct stk_ws_inflate z;
	uint8_t *out; /* the message's bytes */
	size_t len, cap;
	int rc;
};

static void
put(struct side *s, const uint8_t *p, size_t n)
{
	if (s->len + n > s->cap) {
		s->cap = (s->len + n) * 2 + 64;
		s->out = realloc(s->out, s->cap);
		if (s->out == NULL)
			abort();
	}
	if (n)
		memcpy(s->out + s->len, p, n);
	s->len += n;
}

/* one message m[0..n); ic / oc: chunk plans, NULL = one piece / one region */
static int
inflate_msg(struct side *s, const uint8_t *m, size_t n, bool text, uint64_t limit,
	    struct fuzz_chunks *ic, struct fuzz_chunks *oc)
{
	size_t off = 0;

	s->len = 0;
	do {
		size_t k = ic ? fuzz_chunk_next(ic, n - off) : n - off;
		bool last = off + k == n;
		uint8_t *piece = fuzz_dup(m + off, k);
		const uint8_t *in = piece;
		unsigned flags = (last ? STK_WS_Z_LAST : 0) | (text ? STK_WS_Z_TEXT : 0);
		int rc;

		for (;;) {
			size_t rn = oc ? fuzz_chunk_next(oc, 1u << 16) : (size_t)limit + 64;
			uint8_t *region = fuzz_xmalloc(rn), *op = region;
			const uint8_t *before = in;

			rc = stk_ws_inflate(&s->z, &in, piece + k, flags, &op, region + rn);
			FUZZ_CHECK(in >= before && in <= piece + k);
			FUZZ_CHECK(op >= region && op <= region + rn);
			size_t got = (size_t)(op - region);

			put(s, region, got);
			free(region);
			FUZZ_CHECK(s->len <= limit);
			FUZZ_CHECK(s->z.msg_out <= limit);
			if (rc == STK_WS_Z_SPACE) {
				FUZZ_CHECK(got == rn);
				continue;
			}
			break;
		}
		if (rc == STK_WS_Z_MORE || rc == STK_WS_Z_END)
			FUZZ_CHECK(in == piece + k);
		free(piece);
		if (rc == STK_WS_Z_MORE) {
			FUZZ_CHECK(!last);
		} else if (rc == STK_WS_Z_END) {
			FUZZ_CHECK(last);
			FUZZ_CHECK(s->z.msg_out == s->len);
			return rc;
		} else {
			const uint8_t *q = m;
			uint8_t b, *bp = &b;

			FUZZ_CHECK(rc == STK_WS_Z_ERROR);
			FUZZ_CHECK(s->z.err != NULL);
			FUZZ_CHECK(s->z.err_code == 1007 || s->z.err_code == 1009);
			FUZZ_CHECK(stk_ws_inflate(&s->z, &q, m, STK_WS_Z_LAST, &bp, &b + 1) ==
				   STK_WS_Z_ERROR);
			return rc;
		}
		off += k;
	} while (off < n);
	FUZZ_CHECK(!"not reached");
	return 0;
}

static void
roundtrip(const struct stk_ws_pmd *neg, bool server, bool text, uint64_t limit,
	  struct stk_ws_deflate *d, struct side *c, const struct side *a)
{
	size_t cap = stk_ws_deflate_bound(d, a->len);
	uint8_t *buf = fuzz_xmalloc(cap);
	ssize_t k = stk_ws_deflate(d, a->out, a->len, buf, cap);

	(void)neg;
	(void)server;
	FUZZ_CHECK(k > 0 && (size_t)k <= cap);
	FUZZ_CHECK(inflate_msg(c, buf, (size_t)k, text, limit, NULL, NULL) == STK_WS_Z_END);
	FUZZ_CHECK(c->len == a->len);
	FUZZ_CHECK(a->len == 0 || memcmp(c->out, a->out, a->len) == 0);
	free(buf);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fuzz_chunks ic = {{0}, 0}, oc = {{0}, 0};
	struct stk_ws_pmd neg = {.on = true};
	struct side a = {0}, b = {0}, c = {0};
	struct stk_ws_deflate d = {0};
	bool server, text, utf8, again;
	unsigned bits;
	uint64_t limit, fed = 0;
	size_t off;

	if (size < 2 + 2 * FUZZ_NCHUNK)
		return 0;
	server = data[0] & 1;
	text = (data[0] >> 1) & 1;
	utf8 = (data[0] >> 2) & 1;
	bits = 8 + ((data[0] >> 4) & 7);
	again = data[0] >> 7;
	limit = 1 + 37u * data[1];
	memcpy(ic.sel, data + 2, FUZZ_NCHUNK);
	memcpy(oc.sel, data + 2 + FUZZ_NCHUNK, FUZZ_NCHUNK);
	/* the peer's parameters: the client's when we are the server */
	if (server) {
		neg.client_max_window_bits = (uint8_t)bits;
		neg.client_no_context_takeover = (data[0] >> 3) & 1;
		neg.server_max_window_bits = 15;
	} else {
		neg.server_max_window_bits = (uint8_t)bits;
		neg.server_no_context_takeover = (data[0] >> 3) & 1;
		neg.client_max_window_bits = 15;
	}
	FUZZ_CHECK(stk_ws_inflate_init(&a.z, &neg, server, limit, utf8) == 0);
	FUZZ_CHECK(stk_ws_inflate_init(&b.z, &neg, server, limit, utf8) == 0);
	if (again) {
		FUZZ_CHECK(stk_ws_inflate_init(&c.z, &neg, server, limit, utf8) == 0);
		/* the peer compresses: the opposite role, level 1, small memory */
		FUZZ_CHECK(stk_ws_deflate_init(&d, &neg, !server, 1, 1) == 0);
	}

	off = 2 + 2 * FUZZ_NCHUNK;
	while (off < size) {
		size_t n = data[off++];
		int ra, rb;

		if (n > size - off)
			n = size - off;
		ra = inflate_msg(&a, data + off, n, text, limit, NULL, NULL);
		rb = inflate_msg(&b, data + off, n, text, limit, &ic, &oc);
		if (ra != rb) {
			/* zlib checks a back reference against its window plus what
			 * the current call wrote: beyond the agreed window it may pass
			 * in one large region and fail in small ones (stk/ws.h) */
			FUZZ_CHECK(ra == STK_WS_Z_END && rb == STK_WS_Z_ERROR &&
				   b.z.err_code == 1007 && b.z.zerr != NULL &&
				   strcmp(b.z.zerr, "invalid distance too far back") == 0);
			FUZZ_CHECK(b.len <= a.len &&
				   (b.len == 0 || memcmp(a.out, b.out, b.len) == 0));
			break;
		}
		if (ra == STK_WS_Z_END) {
			fed += n;
			FUZZ_CHECK(a.len == b.len);
			FUZZ_CHECK(a.len == 0 || memcmp(a.out, b.out, a.len) == 0);
			FUZZ_CHECK(a.z.in_bytes == fed && b.z.in_bytes == fed);
			FUZZ_CHECK(a.z.out_bytes == b.z.out_bytes);
			if (again)
				roundtrip(&neg, server, text, limit, &d, &c, &a);
		} else {
			size_t k = a.len < b.len ? a.len : b.len;

			/* the same window divergence as above: the whole feed got past
			 * the back reference and then over the limit (1009), the
			 * small regions stopped at it (1007) */
			if (a.z.err_code != b.z.err_code) {
				FUZZ_CHECK(a.z.err_code == 1009 && b.z.err_code == 1007 && b.z.zerr != NULL &&
					   strcmp(b.z.zerr, "invalid distance too far back") == 0 && b.len <= a.len);
				FUZZ_CHECK(k == 0 || memcmp(a.out, b.out, k) == 0);
				break;
			}
			FUZZ_CHECK(k == 0 || memcmp(a.out, b.out, k) == 0);
			if (a.z.err_code == 1009)
				FUZZ_CHECK(a.len == limit && b.len == limit);
			break;
		}
		off += n;
	}
	stk_ws_inflate_fini(&a.z);
	stk_ws_inflate_fini(&b.z);
	stk_ws_inflate_fini(&c.z);
	stk_ws_deflate_fini(&d);
	free(a.out);
	free(b.out);
	free(c.out);
	return 0;
}
