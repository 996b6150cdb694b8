/* SPDX-License-Identifier: BSD-3-Clause
 * ws_deflate.c — permessage-deflate data (RFC 7692 7.2) with zlib's raw
 * DEFLATE, one inflater and one deflater per connection.
 *
 *   stk_ws_inflate_init / _fini   z_stream for the peer's messages
 *   stk_ws_inflate                pieces of a message in, bytes out into the
 *                                 caller's memory; the 00 00 ff ff tail at the
 *                                 end; the inflated-size limit; UTF-8 of text
 *   stk_ws_deflate_init / _fini   z_stream for our messages
 *   stk_ws_deflate / _bound       one whole message, sync flush, tail removed
 *
 * Context takeover is zlib's own: the stream goes on from message to message,
 * inflateReset / deflateReset start afresh for *_no_context_takeover. A message
 * that ends its stream with a BFINAL block (RFC 7692 7.2.3.4) resets the
 * inflater; bytes after such a block start a new stream (what other
 * implementations send). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <zlib.h>

#include <stk/ws.h>

enum { Z_ST_IDLE = 0, Z_ST_MSG, Z_ST_ERR };

static const uint8_t tail4[4] = {0x00, 0x00, 0xff, 0xff};

static int
zfail(struct stk_ws_inflate *z, uint16_t code, const char *why, const char *zmsg)
{
	z->state = Z_ST_ERR;
	z->err_code = code;
	z->err = why;
	z->zerr = zmsg;
	return STK_WS_Z_ERROR;
}

int
stk_ws_inflate_init(struct stk_ws_inflate *z, const struct stk_ws_pmd *neg, bool server,
		    uint64_t max_msg, bool check_utf8)
{
	unsigned bits = server ? neg->client_max_window_bits : neg->server_max_window_bits;
	z_stream *zs;

	memset(z, 0, sizeof(*z));
	if (!neg->on || (bits != 0 && (bits < 8 || bits > 15)))
		return -EINVAL;
	if (bits == 0)
		bits = 15;
	/* at least 9: a larger window inflates a smaller one's stream, and zlib
	 * based peers that agreed to 8 compress with 9 */
	if (bits < 9)
		bits = 9;
	zs = calloc(1, sizeof(*zs));
	if (zs == NULL)
		return -ENOMEM;
	if (inflateInit2(zs, -(int)bits) != Z_OK) {
		free(zs);
		return -ENOMEM;
	}
	z->zs = zs;
	z->window_bits = (uint8_t)bits;
	z->max_msg = max_msg;
	z->check_utf8 = check_utf8;
	z->reset_each = server ? neg->client_no_context_takeover : neg->server_no_context_takeover;
	z->state = Z_ST_IDLE;
	return 0;
}

void
stk_ws_inflate_fini(struct stk_ws_inflate *z)
{
	if (z->zs != NULL) {
		inflateEnd(z->zs);
		free(z->zs);
		z->zs = NULL;
	}
	z->state = Z_ST_ERR;
	z->err_code = STK_WS_CLOSE_INTERNAL;
	z->err = "inflater finished";
}

/* the message is complete */
static int
msg_end(struct stk_ws_inflate *z, bool text)
{
	z_stream *zs = z->zs;

	if (z->pend && !z->boundary)
		return zfail(z, STK_WS_CLOSE_BAD_DATA,
			     "compressed message does not end on a deflate block boundary", NULL);
	if (text && z->check_utf8 && z->utf8 != STK_UTF8_ACCEPT)
		return zfail(z, STK_WS_CLOSE_BAD_DATA, "inflated text is not valid UTF-8", NULL);
	if (z->reset_each)
		inflateReset(zs);
	z->state = Z_ST_IDLE;
	z->msgs++;
	return STK_WS_Z_END;
}

int
stk_ws_inflate(struct stk_ws_inflate *z, const uint8_t **in, const uint8_t *in_end, unsigned flags,
	       uint8_t **out, uint8_t *out_end)
{
	z_stream *zs = z->zs;
	bool last = flags & STK_WS_Z_LAST, text = flags & STK_WS_Z_TEXT;

	if (z->state == Z_ST_ERR)
		return STK_WS_Z_ERROR;
	if (z->state == Z_ST_IDLE) {
		z->state = Z_ST_MSG;
		z->msg_in = z->msg_out = 0;
		z->pend = false;
		z->full = false;
		z->tail = 0;
		z->utf8 = STK_UTF8_ACCEPT;
	}
	for (;;) {
		bool feeding_tail = false, drain = false, scratch;
		size_t room = (size_t)(out_end - *out), avail_in, got_in, got_out;
		uint64_t lim = z->max_msg ? z->max_msg - z->msg_out : UINT64_MAX;
		int rc;

		if (*in < in_end) {
			avail_in = (size_t)(in_end - *in);
			zs->next_in = (Bytef *)(uintptr_t)*in;
		} else if (last && z->pend && z->tail < 4) {
			feeding_tail = true;
			avail_in = 4u - z->tail;
			zs->next_in = (Bytef *)(uintptr_t)(tail4 + z->tail);
		} else if (last && z->full) {
			/* the last call filled its output: what zlib still holds */
			drain = true;
			avail_in = 0;
			zs->next_in = (Bytef *)(uintptr_t)tail4;
		} else if (last) {
			return msg_end(z, text);
		} else {
			return STK_WS_Z_MORE;
		}
		if (room == 0 && lim != 0)
			return STK_WS_Z_SPACE; /* at the limit no room is needed: see scratch */
		if (avail_in > UINT32_MAX)
			avail_in = UINT32_MAX;
		zs->avail_in = (uInt)avail_in;
		scratch = lim == 0;
		if (scratch) {
			/* at the limit: one more byte out means too big */
			zs->next_out = &z->scratch;
			zs->avail_out = 1;
		} else {
			size_t k = room;

			if (k > lim)
				k = (size_t)lim;
			if (k > UINT32_MAX)
				k = UINT32_MAX;
			zs->next_out = *out;
			zs->avail_out = (uInt)k;
		}
		{
			uInt ai = zs->avail_in, ao = zs->avail_out;

			rc = inflate(zs, Z_SYNC_FLUSH);
			got_in = ai - zs->avail_in;
			got_out = ao - zs->avail_out;
			z->full = zs->avail_out == 0;
			/* between blocks (zlib's mode TYPE); a call that cannot move
			 * leaves TYPE for TYPEDO, so only calls that moved count */
			if (got_in != 0 || got_out != 0)
				z->boundary = (zs->data_type & 128) != 0;
		}
		if (scratch && got_out != 0)
			return zfail(z, STK_WS_CLOSE_TOO_BIG,
				     "inflated message over the size limit", NULL);
		if (feeding_tail) {
			z->tail = (uint8_t)(z->tail + got_in);
		} else {
			*in += got_in;
			z->msg_in += got_in;
			z->in_bytes += got_in;
			if (got_in)
				z->pend = true;
		}
		if (!scratch && got_out) {
			if (text && z->check_utf8) {
				z->utf8 = stk_utf8_validate(z->utf8, *out, got_out);
				if (z->utf8 == STK_UTF8_REJECT) {
					*out += got_out;
					z->msg_out += got_out;
					z->out_bytes += got_out;
					return zfail(z, STK_WS_CLOSE_BAD_DATA,
						     "inflated text is not valid UTF-8", NULL);
				}
			}
			*out += got_out;
			z->msg_out += got_out;
			z->out_bytes += got_out;
		}
		switch (rc) {
		case Z_OK:
		case Z_BUF_ERROR:
			break;
		case Z_STREAM_END:
			/* a BFINAL block ended the stream: what follows is a new one */
			inflateReset(zs);
			z->pend = false;
			if (feeding_tail)
				z->tail = 4;
			break;
		case Z_MEM_ERROR:
			return zfail(z, STK_WS_CLOSE_INTERNAL, "inflate out of memory", NULL);
		case Z_DATA_ERROR:
		case Z_NEED_DICT:
			return zfail(z, STK_WS_CLOSE_BAD_DATA, "corrupt deflate data", zs->msg);
		default:
			return zfail(z, STK_WS_CLOSE_INTERNAL, "inflate failed", zs->msg);
		}
		if (!drain && got_in == 0 && got_out == 0 && rc != Z_STREAM_END) {
			if (zs->avail_out == 0)
				continue; /* full: SPACE or the limit probe next round */
			/* input left, room left, no progress: cannot happen with zlib */
			return zfail(z, STK_WS_CLOSE_INTERNAL, "inflate made no progress", zs->msg);
		}
	}
}

/* ---- deflate ---- */
int
stk_ws_deflate_init(struct stk_ws_deflate *z, const struct stk_ws_pmd *neg, bool server, int level,
		    int mem_level)
{
	unsigned bits = server ? neg->server_max_window_bits : neg->client_max_window_bits;
	int strategy = Z_DEFAULT_STRATEGY, zbits;
	z_stream *zs;

	memset(z, 0, sizeof(*z));
	if (bits == 0)
		bits = 15;
	if (!neg->on || bits < 8 || bits > 15 || level < -1 || level > 9 || mem_level < 0 ||
	    mem_level > 9)
		return -EINVAL;
	zbits = (int)bits;
	if (bits == 8) {
		/* zlib's raw deflate has no 8-bit window: matches at distance 1
		 * only, which any window holds */
		zbits = 9;
		strategy = Z_RLE;
	}
	zs = calloc(1, sizeof(*zs));
	if (zs == NULL)
		return -ENOMEM;
	if (deflateInit2(zs, level, Z_DEFLATED, -zbits, mem_level ? mem_level : 8, strategy) !=
	    Z_OK) {
		free(zs);
		return -ENOMEM;
	}
	z->zs = zs;
	z->window_bits = (uint8_t)bits;
	z->reset_each = server ? neg->server_no_context_takeover : neg->client_no_context_takeover;
	return 0;
}

void
stk_ws_deflate_fini(struct stk_ws_deflate *z)
{
	if (z->zs != NULL) {
		deflateEnd(z->zs);
		free(z->zs);
		z->zs = NULL;
	}
}

size_t
stk_ws_deflate_bound(const struct stk_ws_deflate *z, size_t n)
{
	/* deflateBound covers the blocks (stored blocks at worst, 5 bytes per
	 * 16 KiB), plus the sync flush's empty block (we drop 4 of its <= 6) */
	size_t b = n + n / 16383 * 5 + 5 + 16;

	if (z->zs != NULL && n <= UINT32_MAX) {
		size_t d = deflateBound(z->zs, (uLong)n) + 16;

		if (d > b)
			b = d;
	}
	return b;
}

ssize_t
stk_ws_deflate(struct stk_ws_deflate *z, const uint8_t *in, size_t n, uint8_t *out, size_t cap)
{
	z_stream *zs = z->zs;
	uint8_t spill[8], last4[4];
	size_t capz = cap > UINT32_MAX ? UINT32_MAX : cap, left = n, total, spilled = 0;
	bool in_spill = false;

	if (zs == NULL)
		return -EIO;
	if (n == 0) {
		/* RFC 7692 7.2.3.6: an empty stored block's header; zlib would
		 * refuse a second flush in a row */
		if (cap < 1)
			return -ENOSPC;
		out[0] = 0x00;
		z->msgs++;
		z->out_bytes++;
		return 1;
	}
	/* into out, then into spill: the 4 bytes we drop may stick out of cap */
	zs->next_out = out;
	zs->avail_out = (uInt)capz;
	zs->next_in = (Bytef *)(uintptr_t)in;
	for (;;) {
		size_t k = left > UINT32_MAX ? UINT32_MAX : left;
		int flush = k == left ? Z_SYNC_FLUSH : Z_NO_FLUSH, rc;

		if (zs->avail_out == 0) {
			if (in_spill)
				goto nospace;
			in_spill = true;
			zs->next_out = spill;
			zs->avail_out = sizeof(spill);
		}
		zs->avail_in = (uInt)k;
		rc = deflate(zs, flush);
		if (rc != Z_OK && rc != Z_BUF_ERROR)
			goto fail;
		left -= k - zs->avail_in;
		if (left == 0 && flush == Z_SYNC_FLUSH && zs->avail_out != 0)
			break;
	}
	if (in_spill) {
		spilled = sizeof(spill) - zs->avail_out;
		total = capz;
	} else {
		total = capz - zs->avail_out;
	}
	if (spilled > 4)
		goto nospace;
	if (total + spilled < 4)
		goto fail;
	for (size_t i = 0; i < 4; i++) {
		size_t pos = total + spilled - 4 + i;

		last4[i] = pos < total ? out[pos] : spill[pos - total];
	}
	if (memcmp(last4, tail4, 4) != 0)
		goto fail; /* a sync flush always ends so */
	total = total + spilled - 4;
	if (z->reset_each)
		deflateReset(zs);
	z->in_bytes += n;
	z->out_bytes += total;
	z->msgs++;
	return (ssize_t)total;
nospace:
	deflateReset(zs);
	return -ENOSPC;
fail:
	deflateReset(zs);
	return -EIO;
}
