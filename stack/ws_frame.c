/* SPDX-License-Identifier: BSD-3-Clause
 * ws_frame.c — WebSocket frames (RFC 6455 5): the resumable zero-copy decoder
 * and the encoder.
 *
 *   stk_ws_dec_next (inline, stk/ws.h)  whole data frames inside the chunk
 *   stk_ws_dec_init / stk_ws_dec_next_slow  decode: header (fast path when the
 *                                       whole header is in the chunk, else
 *                                       gathered byte-wise), checks, payload
 *                                       pieces unmasked in place, control
 *                                       frames assembled (<= 125 bytes)
 *   stk_ws_dec_piece                    a client's piece of a frame cut by the
 *                                       chunk's end, without the state machine
 *   stk_ws_dec_pmd                      permessage-deflate negotiated: RSV1
 *                                       allowed on a data message's first frame
 *   stk_ws_hdr / stk_ws_hdr_rsv / stk_ws_mask  encode
 *   stk_ws_close_code_valid             RFC 6455 7.4.1 / 7.4.2
 *
 * Hand-written rather than wslay (libwslay-dev): wslay copies every frame
 * into its own buffers and calls back per frame; here a message inside one TCP
 * segment is handed on by reference, the property B6 measures. */
#include <string.h>

#include <stk/ws.h>

enum { D_HDR = 0 /* stk/ws.h's inline fast path tests state == 0 */, D_DATA, D_CTL, D_ERR };

void
stk_ws_dec_init(struct stk_ws_dec *d, bool server, uint64_t max_msg, bool check_utf8)
{
	memset(d, 0, sizeof(*d));
	d->server = server;
	d->max_msg = d->max_msg_z = max_msg;
	d->check_utf8 = check_utf8;
	d->state = D_HDR;
}

void
stk_ws_dec_pmd(struct stk_ws_dec *d, bool on)
{
	d->pmd = on;
	/* a compressed message's wire bytes: what deflate makes of max_msg
	 * incompressible bytes at worst (stored blocks: 5 bytes per 16 KiB, plus
	 * the sync flush), so that any message the inflater would accept passes;
	 * the inflater keeps the exact limit on what comes out */
	d->max_msg_z = on && d->max_msg != 0 ? d->max_msg + d->max_msg / 16 + 64 : d->max_msg;
}

bool
stk_ws_close_code_valid(unsigned c)
{
	if (c >= 3000 && c <= 4999)
		return true;
	switch (c) {
	case 1000: case 1001: case 1002: case 1003: case 1007: case 1008:
	case 1009: case 1010: case 1011: case 1012: case 1013: case 1014:
		return true;
	default:
		return false;
	}
}

static enum stk_ws_ev
fail(struct stk_ws_dec *d, struct stk_ws_out *o, uint16_t code, const char *why)
{
	d->state = D_ERR;
	d->err = why;
	d->err_code = code;
	o->close_code = code;
	o->reason = why;
	o->compressed = false;
	o->data = NULL;
	o->len = 0;
	return STK_WS_ERROR;
}

void
stk_ws_mask(uint8_t *p, size_t n, const uint8_t key[4], unsigned off)
{
	stk_ws_mask_copy(p, p, n, key, off); /* in place: each word is read before it is written */
}

void
stk_ws_mask_copy(uint8_t *dst, const uint8_t *src, size_t n, const uint8_t key[4], unsigned off)
{
	uint8_t k[4] = { key[off & 3], key[(off + 1) & 3], key[(off + 2) & 3], key[(off + 3) & 3] };
	uint32_t k32;
	uint64_t k64;

	memcpy(&k32, k, 4);
	k64 = ((uint64_t)k32 << 32) | k32;
	while (n >= 8) {
		uint64_t w;

		memcpy(&w, src, 8);
		w ^= k64;
		memcpy(dst, &w, 8);
		dst += 8;
		src += 8;
		n -= 8;
	}
	for (size_t i = 0; i < n; i++)
		dst[i] = src[i] ^ k[i & 3];
}

size_t
stk_ws_hdr(uint8_t *out, unsigned opcode, bool fin, uint64_t len, const uint8_t *mask)
{
	return stk_ws_hdr_rsv(out, opcode, fin, 0, len, mask);
}

size_t
stk_ws_hdr_rsv(uint8_t *out, unsigned opcode, bool fin, unsigned rsv, uint64_t len,
	       const uint8_t *mask)
{
	size_t h = 2;

	out[0] = (uint8_t)((fin ? 0x80 : 0) | (rsv & 0x70) | (opcode & 0x0f));
	if (len < 126) {
		out[1] = (uint8_t)len;
	} else if (len <= 0xffff) {
		out[1] = 126;
		out[2] = (uint8_t)(len >> 8);
		out[3] = (uint8_t)len;
		h = 4;
	} else {
		out[1] = 127;
		for (int i = 0; i < 8; i++)
			out[2 + i] = (uint8_t)(len >> (56 - 8 * i));
		h = 10;
	}
	if (mask != NULL) {
		out[1] |= 0x80;
		memcpy(out + h, mask, 4);
		h += 4;
	}
	return h;
}

/* header bytes complete in h: check and set up the frame */
static enum stk_ws_ev
header(struct stk_ws_dec *d, const uint8_t *h, struct stk_ws_out *o)
{
	uint8_t b0 = h[0], b1 = h[1], op = b0 & 0x0f, l7 = b1 & 0x7f;
	uint64_t len;
	unsigned k = 2;

	if (b0 & 0x30)
		return fail(d, o, STK_WS_CLOSE_PROTOCOL,
			    "RSV2 or RSV3 set (no extension defines them)");
	if (b0 & 0x40) {
		if (!d->pmd)
			return fail(d, o, STK_WS_CLOSE_PROTOCOL,
				    "RSV1 set without a negotiated extension");
		if (op >= 0x8)
			return fail(d, o, STK_WS_CLOSE_PROTOCOL, "RSV1 on a control frame");
		if (op == STK_WS_OP_CONT)
			return fail(d, o, STK_WS_CLOSE_PROTOCOL, "RSV1 on a continuation frame");
	}
	d->fin = b0 >> 7;
	d->masked = b1 >> 7;
	if (d->masked != d->server)
		return fail(d, o, STK_WS_CLOSE_PROTOCOL,
			    d->server ? "unmasked frame from a client" : "masked frame from the server");
	if (l7 == 126) {
		len = ((uint64_t)h[2] << 8) | h[3];
		k = 4;
	} else if (l7 == 127) {
		len = 0;
		for (int i = 0; i < 8; i++)
			len = (len << 8) | h[2 + i];
		if (len >> 63)
			return fail(d, o, STK_WS_CLOSE_PROTOCOL, "64-bit length with the most significant bit set");
		k = 10;
	} else {
		len = l7;
	}
	if (d->masked) {
		memcpy(d->key, h + k, 4);
		d->key_off = 0;
	}
	d->remaining = len;
	d->opcode = op;
	if (op >= 0x8) {
		if (op > STK_WS_OP_PONG)
			return fail(d, o, STK_WS_CLOSE_PROTOCOL, "reserved control opcode");
		if (!d->fin)
			return fail(d, o, STK_WS_CLOSE_PROTOCOL, "fragmented control frame");
		if (len > STK_WS_MAX_CONTROL)
			return fail(d, o, STK_WS_CLOSE_PROTOCOL, "control frame payload over 125 bytes");
		d->ctl_len = 0;
		d->state = D_CTL;
		return STK_WS_NEED_MORE;
	}
	if (op == STK_WS_OP_CONT) {
		if (d->msg_op == 0)
			return fail(d, o, STK_WS_CLOSE_PROTOCOL, "continuation frame without a message to continue");
	} else if (op == STK_WS_OP_TEXT || op == STK_WS_OP_BINARY) {
		if (d->msg_op != 0)
			return fail(d, o, STK_WS_CLOSE_PROTOCOL, "new message inside a fragmented one");
		d->msg_op = (uint8_t)(op | ((b0 & 0x40) ? STK_WS_MSG_Z : 0));
		d->msg_first = true;
		d->msg_len = 0;
		d->utf8 = STK_UTF8_ACCEPT;
	} else {
		return fail(d, o, STK_WS_CLOSE_PROTOCOL, "reserved data opcode");
	}
	{
		uint64_t lim = (d->msg_op & STK_WS_MSG_Z) ? d->max_msg_z : d->max_msg;

		if (lim != 0 && (len > lim || d->msg_len + len > lim))
			return fail(d, o, STK_WS_CLOSE_TOO_BIG, "message over the size limit");
	}
	d->msg_len += len;
	d->state = D_DATA;
	return STK_WS_NEED_MORE;
}

static enum stk_ws_ev
control_done(struct stk_ws_dec *d, struct stk_ws_out *o)
{
	d->state = D_HDR;
	o->opcode = d->opcode;
	o->data = d->ctl;
	o->len = d->ctl_len;
	o->first = o->last = true;
	o->compressed = false;
	o->reason = NULL;
	o->close_code = 0;
	if (d->opcode == STK_WS_OP_CLOSE) {
		if (d->ctl_len == 1)
			return fail(d, o, STK_WS_CLOSE_PROTOCOL, "close frame with a 1-byte payload");
		if (d->ctl_len >= 2) {
			unsigned code = ((unsigned)d->ctl[0] << 8) | d->ctl[1];

			if (!stk_ws_close_code_valid(code))
				return fail(d, o, STK_WS_CLOSE_PROTOCOL, "invalid close code");
			if (stk_utf8_validate(STK_UTF8_ACCEPT, d->ctl + 2, d->ctl_len - 2u) != STK_UTF8_ACCEPT)
				return fail(d, o, STK_WS_CLOSE_BAD_DATA, "close reason is not valid UTF-8");
			o->close_code = (uint16_t)code;
		} else {
			o->close_code = STK_WS_CLOSE_NO_STATUS;
		}
	}
	return STK_WS_CONTROL;
}

/* the data piece [p, p + n) of the message in progress out, the last one
 * when last: the message's flags into *o, *pp past it */
static inline enum stk_ws_ev
data_out(struct stk_ws_dec *d, uint8_t **pp, uint8_t *p, size_t n, bool last, struct stk_ws_out *o)
{
	o->opcode = d->msg_op & 0x0fu;
	o->first = d->msg_first;
	o->last = last;
	o->compressed = d->msg_op >> 7;
	o->data = p;
	o->len = n;
	o->reason = NULL;
	d->msg_first = false;
	if (last)
		d->msg_op = 0;
	*pp = p + n;
	return STK_WS_DATA;
}

/* What stk_ws_dec_next_slow() does for the piece, with its checks folded
 * into one test each: header() for a whole-message frame, then the D_DATA
 * step for an unmasked payload. The UTF-8 state is computed before anything
 * changes, so -1 leaves the decoder as it was. */
int
stk_ws_dec_piece(struct stk_ws_dec *d, uint8_t **pp, uint8_t *end, struct stk_ws_out *o)
{
	uint8_t *p = *pp;
	size_t avail = (size_t)(end - p), n;
	uint32_t u;
	bool last;

	if (d->server)
		return -1;
	if (d->state == D_HDR) {
		unsigned b0;
		size_t len, h = 2;

		/* as stk_ws_dec_run takes: FIN, no RSV, text / binary, unmasked */
		if (d->hlen != 0 || d->msg_op != 0 || avail < 3)
			return -1;
		b0 = p[0];
		len = p[1];
		if (b0 - 0x81u > 1u || len > 126)
			return -1;
		if (len == 126) {
			if (avail < 5)
				return -1;
			len = ((size_t)p[2] << 8) | p[3];
			h = 4;
		}
		/* the payload starts here and runs past the end */
		if (avail - h >= len || avail == h || (d->max_msg != 0 && len > d->max_msg))
			return -1;
		n = avail - h;
		u = STK_UTF8_ACCEPT;
		if (b0 == 0x81u && d->check_utf8 && (u = stk_ws_utf8_piece(u, p + h, n)) == STK_UTF8_REJECT)
			return -1;
		/* header() */
		d->fin = 1;
		d->masked = 0;
		d->opcode = (uint8_t)(b0 & 0x0fu);
		d->msg_op = d->opcode;
		d->msg_first = true;
		d->msg_len = len;
		d->remaining = len;
		d->state = D_DATA;
		p += h;
	} else if (d->state == D_DATA && !d->masked && !(d->msg_op & STK_WS_MSG_Z) && d->remaining != 0 &&
		   avail != 0) {
		n = avail < d->remaining ? avail : (size_t)d->remaining;
		u = d->utf8;
		if (d->msg_op == STK_WS_OP_TEXT && d->check_utf8) {
			u = stk_ws_utf8_piece(u, p, n);
			if (u == STK_UTF8_REJECT || (d->fin && n == d->remaining && u != STK_UTF8_ACCEPT))
				return -1; /* stk_ws_dec_next_slow fails it */
		}
	} else {
		return -1;
	}
	/* the D_DATA step */
	d->remaining -= n;
	d->utf8 = u;
	last = d->fin && d->remaining == 0;
	if (d->remaining == 0)
		d->state = D_HDR;
	return data_out(d, pp, p, n, last, o);
}

enum stk_ws_ev
stk_ws_dec_next_slow(struct stk_ws_dec *d, uint8_t **pp, uint8_t *end, struct stk_ws_out *o)
{
	uint8_t *p = *pp;
	enum stk_ws_ev ev;

	for (;;) {
		switch (d->state) {
		case D_HDR: {
			size_t avail = (size_t)(end - p);

			if (d->hlen == 0) {
				size_t need;

				if (avail < 2) {
					if (avail == 1) {
						d->hdr[0] = *p++;
						d->hlen = 1;
					}
					*pp = p;
					return STK_WS_NEED_MORE;
				}
				need = 2 + ((p[1] & 0x7f) == 126 ? 2 : (p[1] & 0x7f) == 127 ? 8 : 0) + ((p[1] & 0x80) ? 4 : 0);
				if (avail >= need) {
					/* fast path: the whole header is here */
					const uint8_t *h = p;

					p += need;
					ev = header(d, h, o);
					if (ev != STK_WS_NEED_MORE) {
						*pp = p;
						return ev;
					}
					break;
				}
				memcpy(d->hdr, p, avail);
				d->hlen = (uint8_t)avail;
				d->hneed = (uint8_t)need;
				*pp = end;
				return STK_WS_NEED_MORE;
			}
			/* gathering a split header */
			if (d->hlen == 1) {
				if (avail == 0) {
					*pp = p;
					return STK_WS_NEED_MORE;
				}
				d->hdr[1] = *p++;
				d->hlen = 2;
				avail--;
				d->hneed = (uint8_t)(2 + ((d->hdr[1] & 0x7f) == 126 ? 2 : (d->hdr[1] & 0x7f) == 127 ? 8 : 0) +
						     ((d->hdr[1] & 0x80) ? 4 : 0));
			}
			{
				size_t k = d->hneed - d->hlen;

				if (k > avail)
					k = avail;
				memcpy(d->hdr + d->hlen, p, k);
				d->hlen = (uint8_t)(d->hlen + k);
				p += k;
				if (d->hlen < d->hneed) {
					*pp = p;
					return STK_WS_NEED_MORE;
				}
			}
			d->hlen = 0;
			ev = header(d, d->hdr, o);
			if (ev != STK_WS_NEED_MORE) {
				*pp = p;
				return ev;
			}
			break;
		}
		case D_DATA: {
			size_t n = (size_t)(end - p);
			bool last;

			if (n > d->remaining)
				n = (size_t)d->remaining;
			if (n == 0 && d->remaining != 0) {
				*pp = p;
				return STK_WS_NEED_MORE;
			}
			if (d->masked) {
				stk_ws_mask(p, n, d->key, d->key_off);
				d->key_off = (uint8_t)((d->key_off + n) & 3);
			}
			d->remaining -= n;
			last = d->fin && d->remaining == 0;
			if (d->msg_op == STK_WS_OP_TEXT && d->check_utf8) {
				d->utf8 = stk_utf8_validate(d->utf8, p, n);
				if (d->utf8 == STK_UTF8_REJECT || (last && d->utf8 != STK_UTF8_ACCEPT)) {
					*pp = p + n;
					return fail(d, o, STK_WS_CLOSE_BAD_DATA, "text message is not valid UTF-8");
				}
			}
			if (d->remaining == 0)
				d->state = D_HDR;
			if (n == 0 && !last) {
				/* an empty non-final fragment: nothing to hand on */
				continue;
			}
			return data_out(d, pp, p, n, last, o);
		}
		case D_CTL: {
			size_t n = (size_t)(end - p);

			if (n > d->remaining)
				n = (size_t)d->remaining;
			memcpy(d->ctl + d->ctl_len, p, n);
			if (d->masked) {
				stk_ws_mask(d->ctl + d->ctl_len, n, d->key, d->key_off);
				d->key_off = (uint8_t)((d->key_off + n) & 3);
			}
			d->ctl_len = (uint8_t)(d->ctl_len + n);
			d->remaining -= n;
			p += n;
			if (d->remaining != 0) {
				*pp = p;
				return STK_WS_NEED_MORE;
			}
			*pp = p;
			return control_done(d, o);
		}
		default:
			*pp = end;
			o->compressed = false;
			o->close_code = d->err_code;
			o->reason = d->err;
			o->data = NULL;
			o->len = 0;
			return STK_WS_ERROR;
		}
	}
}
