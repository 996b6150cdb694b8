/* SPDX-License-Identifier: BSD-3-Clause
 * stk/ws.h — WebSocket (RFC 6455) codec: frame decoder and encoder, client and
 * server handshakes, incremental UTF-8 validation. No I/O, no allocation, no
 * DPDK: the ws and feedsim stages drive it over TCP stream chunks.
 *
 * Decoder. Zero copy and resumable on any chunking: stk_ws_dec_next() takes the
 * bytes of one chunk and returns events that point into that chunk (masked
 * payload is unmasked in place, so chunks must be writable):
 *   STK_WS_DATA     a piece of a text/binary message: data/len, with `first`
 *                   (the message's first piece) and `last` (the message is
 *                   complete). A message whose pieces are first && last in one
 *                   event lies wholly inside this chunk; otherwise the caller
 *                   assembles the pieces. Control frames interleaved inside a
 *                   fragmented message do not disturb this.
 *   STK_WS_CONTROL  a whole control frame (close, ping, pong), payload <= 125
 *                   bytes (assembled in the decoder when it spans chunks)
 *   STK_WS_ERROR    the connection must fail: close_code (1002 protocol error,
 *                   1007 bad UTF-8, 1009 too big) and reason; the decoder stays
 *                   in the error state
 *   STK_WS_NEED_MORE everything given was consumed
 * Limits checked: RSV bits (RSV1 only on the first frame of a data message, and
 * only when permessage-deflate was negotiated: stk_ws_dec_pmd()), reserved opcodes,
 * control frames over 125 bytes or fragmented, continuation without a start, a
 * new message inside a fragmented one, masking (a client must receive unmasked
 * frames, a server masked ones), 64-bit lengths with the top bit set, message
 * size over max_msg (checked at each frame header, before any payload), UTF-8 of
 * text messages across fragments and of close reasons, close codes. Non-minimal
 * length encodings are accepted. Compressed messages (RSV1) are handed on as
 * wire bytes with `compressed` set: max_msg applies to those bytes (but see below), UTF-8 is not
 * checked on them (stk_ws_inflate does it on the inflated text). Once
 * permessage-deflate is on, a compressed message's wire bytes may exceed
 * max_msg by deflate's worst-case expansion (max_msg / 16 + 64): the inflater
 * bounds what comes out at max_msg.
 *
 * permessage-deflate (RFC 7692): stk_ws_pmd_* negotiation through the handshake
 * functions below, stk_ws_inflate_* / stk_ws_deflate_* per connection (zlib). */
#ifndef STK_WS_H
#define STK_WS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#ifdef __cplusplus
extern "C" {
#endif

enum stk_ws_opcode {
	STK_WS_OP_CONT = 0x0,
	STK_WS_OP_TEXT = 0x1,
	STK_WS_OP_BINARY = 0x2,
	STK_WS_OP_CLOSE = 0x8,
	STK_WS_OP_PING = 0x9,
	STK_WS_OP_PONG = 0xa,
};

enum stk_ws_close_code {
	STK_WS_CLOSE_NORMAL = 1000,
	STK_WS_CLOSE_GOING_AWAY = 1001,
	STK_WS_CLOSE_PROTOCOL = 1002,
	STK_WS_CLOSE_UNSUPPORTED = 1003,
	STK_WS_CLOSE_NO_STATUS = 1005, /* never on the wire: "close frame without a code" */
	STK_WS_CLOSE_ABNORMAL = 1006,  /* never on the wire: "closed without a close frame" */
	STK_WS_CLOSE_BAD_DATA = 1007,
	STK_WS_CLOSE_POLICY = 1008,
	STK_WS_CLOSE_TOO_BIG = 1009,
	STK_WS_CLOSE_INTERNAL = 1011,
};

#define STK_WS_MAX_HDR 14
#define STK_WS_MAX_CONTROL 125

/* ---- UTF-8 ---- */
#define STK_UTF8_ACCEPT 0u /* between code points */
#define STK_UTF8_REJECT 1u
/* Continue validating from state; returns the new state (ACCEPT at a code
 * point boundary, REJECT for ever after an error, another value inside a
 * sequence). Overlong forms, surrogates and code points above U+10FFFF are
 * rejected (RFC 3629). ASCII runs go 8 bytes at a time. */
uint32_t stk_utf8_validate(uint32_t state, const uint8_t *p, size_t n);

/* ---- decoder ---- */
enum stk_ws_ev {
	STK_WS_NEED_MORE = 0,
	STK_WS_DATA = 1,
	STK_WS_CONTROL = 2,
	STK_WS_ERROR = 3,
};

struct stk_ws_out {
	uint8_t opcode;    /* DATA: the message's (TEXT/BINARY); CONTROL: the frame's */
	bool first, last;  /* DATA */
	bool compressed;   /* DATA: the message has RSV1 (permessage-deflate), on every piece */
	uint8_t *data;
	size_t len;
	uint16_t close_code; /* CONTROL close: the peer's code (1005 when absent); ERROR: ours */
	const char *reason;  /* ERROR: why (static); CONTROL close: NULL (reason in data after the code) */
};

/* Public so it can be embedded; fields are the decoder's. */
struct stk_ws_dec {
	uint64_t max_msg;     /* 0 = no limit */
	bool server;          /* we are the server: frames must be masked */
	bool check_utf8;
	/* frame */
	uint8_t state;        /* 0: between frames (the inline fast path relies on it) */
	uint8_t hlen, hneed;
	uint8_t opcode, fin, masked;
	uint8_t hdr[STK_WS_MAX_HDR];
	uint8_t key[4];
	uint8_t key_off;
	uint64_t remaining;   /* payload bytes of the current frame still to come */
	/* message */
	uint8_t msg_op;       /* 0: no data message in progress; | STK_WS_MSG_Z: compressed */
	bool msg_first;       /* the next data piece is the message's first */
	bool pmd;             /* permessage-deflate: RSV1 allowed on a message's first frame
			       * (here, in padding: the fields above keep their offsets) */
	uint64_t msg_len;
	uint32_t utf8;
	/* control frame assembly */
	uint8_t ctl_len;
	uint8_t ctl[STK_WS_MAX_CONTROL];
	const char *err;
	uint16_t err_code;
	uint64_t max_msg_z;   /* wire bytes of a compressed message (stk_ws_dec_pmd) */
};

/* in stk_ws_dec.msg_op: the message in progress is compressed (RSV1); being
 * no opcode, it also keeps the message out of the TEXT UTF-8 checks */
#define STK_WS_MSG_Z 0x80u

void stk_ws_dec_init(struct stk_ws_dec *d, bool server, uint64_t max_msg, bool check_utf8);
/* After stk_ws_dec_init: permessage-deflate was negotiated (on) or not. */
void stk_ws_dec_pmd(struct stk_ws_dec *d, bool on);
/* The resumable state machine behind stk_ws_dec_next(). */
enum stk_ws_ev stk_ws_dec_next_slow(struct stk_ws_dec *d, uint8_t **p, uint8_t *end, struct stk_ws_out *o);

/* the UTF-8 state after a piece of text, from state u: ASCII pieces of up to
 * 64 bytes (fragments, ticks) without a call — two overlapping 8-byte loads
 * cover 8..16 bytes, two or four overlapping 16-byte loads (SSE2, the x86-64
 * baseline) 17..64; the rest through stk_utf8_validate() */
static inline __attribute__((always_inline)) uint32_t
stk_ws_utf8_piece(uint32_t u, const uint8_t *p, size_t len)
{
	uint64_t acc = 0;

#if defined(__SSE2__)
	if (u == STK_UTF8_ACCEPT && len > 16 && len <= 64) {
		__m128i a = _mm_or_si128(_mm_loadu_si128((const __m128i *)(const void *)p),
					 _mm_loadu_si128((const __m128i *)(const void *)(p + len - 16)));

		if (len > 32)
			a = _mm_or_si128(a, _mm_or_si128(_mm_loadu_si128((const __m128i *)(const void *)(p + 16)),
							 _mm_loadu_si128((const __m128i *)(const void *)(p + len - 32))));
		if (_mm_movemask_epi8(a) == 0)
			return u;
		return stk_utf8_validate(u, p, len);
	}
#endif
	if (u == STK_UTF8_ACCEPT && len <= 16) {
		if (len >= 8) {
			uint64_t w1, w2;

			__builtin_memcpy(&w1, p, 8);
			__builtin_memcpy(&w2, p + len - 8, 8);
			acc = w1 | w2;
		} else {
			for (size_t i = 0; i < len; i++)
				acc |= p[i];
		}
		if ((acc & 0x8080808080808080ull) == 0)
			return u;
	}
	return stk_utf8_validate(u, p, len);
}

/* Decode from *p (advanced past what was consumed) up to end.
 * Inline fast path for what a client reading market data mostly sees: between
 * frames, a whole data frame (text, binary or continuation, FIN or not, 7- or
 * 16-bit length, not empty unless final, not of a compressed message) inside
 * the chunk, within max_msg and valid UTF-8 so far if text. Compressed messages
 * cost an inflate each anyway; leaving them out keeps this path as it was for
 * plain frames (B6: one store more). Everything else, errors included, goes through
 * stk_ws_dec_next_slow(), which decides exactly as if the fast path did not
 * exist. (B6 in doc/benchmarks.md.) */
static inline enum stk_ws_ev
stk_ws_dec_next(struct stk_ws_dec *d, uint8_t **pp, uint8_t *end, struct stk_ws_out *o)
{
	uint8_t *p = *pp;
	size_t avail = (size_t)(end - p);

	if (__builtin_expect(d->state == 0 && d->hlen == 0 && !d->server && avail >= 2, 1)) {
		unsigned b0 = p[0], b1 = p[1], op = b0 & 0x0fu;
		bool fin = b0 & 0x80u, cont = op == STK_WS_OP_CONT;

		if ((b0 & 0x70u) == 0 && b1 <= 126 &&
		    (cont ? (unsigned)(d->msg_op - 1) < 0x7fu /* in a message, not compressed */
			  : (op == STK_WS_OP_TEXT || op == STK_WS_OP_BINARY) && d->msg_op == 0)) {
			size_t len = b1, h = 2;
			uint64_t total;
			unsigned mop = cont ? d->msg_op : op;
			uint32_t u = cont ? d->utf8 : STK_UTF8_ACCEPT;

			if (b1 == 126) {
				if (avail < 4)
					goto slow;
				len = ((size_t)p[2] << 8) | p[3];
				h = 4;
			}
			total = (cont ? d->msg_len : 0) + len;
			if (avail - h < len || (d->max_msg != 0 && total > d->max_msg) || (len == 0 && !fin))
				goto slow;
			if (mop == STK_WS_OP_TEXT && d->check_utf8) {
				u = stk_ws_utf8_piece(u, p + h, len);
				if (u == STK_UTF8_REJECT || (fin && u != STK_UTF8_ACCEPT))
					goto slow; /* the state machine reports the error */
			}
			o->opcode = (uint8_t)mop;
			o->first = cont ? d->msg_first : true;
			o->last = fin;
			o->compressed = false;
			o->data = p + h;
			o->len = len;
			o->reason = NULL;
			if (fin) {
				d->msg_op = 0;
			} else {
				d->msg_op = (uint8_t)mop;
				d->msg_first = false;
				d->msg_len = total;
				d->utf8 = u;
			}
			*pp = p + h + len;
			return STK_WS_DATA;
		}
	}
slow:
	return stk_ws_dec_next_slow(d, pp, end, o);
}

/* One whole message in a frame, as stk_ws_dec_run() hands it out. */
struct stk_ws_frame {
	const uint8_t *data;
	uint32_t len;
	uint8_t opcode; /* STK_WS_OP_TEXT or STK_WS_OP_BINARY */
};

/* A run of whole messages for a client's receive loop: while the next frame is
 * an unfragmented, uncompressed text or binary message (FIN, no RSV bits,
 * unmasked, a 7- or 16-bit length) wholly inside [*pp, end), within max_msg
 * and valid UTF-8 if text, it goes into f[] (at most max) and *pp moves past
 * it. Returns how many; it stops before anything else (a fragment, a control
 * or compressed frame, a frame cut by the chunk's end, an error), which
 * stk_ws_dec_next() then decodes. Each frame taken is one that
 * stk_ws_dec_next() would return as STK_WS_DATA, first and last, with no
 * change to the decoder's state — the run only checks once what it checks per
 * frame (between messages, a client), so a market-data feed's ticks cost a
 * header test, a bounds test and the UTF-8 test each. */
static inline unsigned
stk_ws_dec_run(const struct stk_ws_dec *d, uint8_t **pp, const uint8_t *end, struct stk_ws_frame *f,
	       unsigned max)
{
	uint8_t *p = *pp;
	unsigned n = 0;
	/* what the loop reads of the decoder, read once */
	uint64_t lim = d->max_msg != 0 ? d->max_msg : UINT64_MAX;
	unsigned text_chk = d->check_utf8 ? 0x81u : 0x100u; /* b0 that is validated */

	if (d->state != 0 || d->hlen != 0 || d->server || d->msg_op != 0)
		return 0;
	while (n < max && end - p >= 2) {
		unsigned b0 = p[0];
		size_t len = p[1], h = 2;

		/* 0x81 / 0x82: FIN, no RSV, text / binary; len <= 126: unmasked */
		if (b0 - 0x81u > 1u || len > 126)
			break;
		if (len == 126) {
			if (end - p < 4)
				break;
			len = ((size_t)p[2] << 8) | p[3];
			h = 4;
		}
		if ((size_t)(end - p) - h < len || len > lim)
			break;
		if (b0 == text_chk && stk_ws_utf8_piece(STK_UTF8_ACCEPT, p + h, len) != STK_UTF8_ACCEPT)
			break; /* stk_ws_dec_next() reports it */
		f[n].data = p + h;
		f[n].len = (uint32_t)len;
		f[n].opcode = (uint8_t)(b0 & 0x0fu);
		n++;
		p += h + len;
	}
	*pp = p;
	return n;
}

/* stk_ws_dec_next() for a piece of a data frame that a chunk boundary cuts,
 * without the general state machine (a client's receive loop, after a run):
 * between messages, the first piece of a frame as stk_ws_dec_run() takes
 * (FIN, no RSV, unmasked text or binary, 7- or 16-bit length, within
 * max_msg) whose header is in the chunk and whose payload runs past its end;
 * inside an unmasked, uncompressed frame's payload, the next piece. Returns
 * STK_WS_DATA with *o and *pp, and the decoder, as stk_ws_dec_next() leaves
 * them; -1 when the next event is anything else or the piece is not valid
 * UTF-8 (stk_ws_dec_next() reports it): nothing consumed, nothing changed. */
int stk_ws_dec_piece(struct stk_ws_dec *d, uint8_t **pp, uint8_t *end, struct stk_ws_out *o);

/* valid close code on the wire (RFC 6455 7.4) */
bool stk_ws_close_code_valid(unsigned code);

/* ---- encoder ---- */
/* Frame header for a payload of len bytes; mask = NULL for an unmasked
 * (server) frame, else the 4-byte key to announce. Returns its length (2..14). */
size_t stk_ws_hdr(uint8_t *out, unsigned opcode, bool fin, uint64_t len, const uint8_t *mask);
/* the length of the header stk_ws_hdr() writes, for sizing a buffer of frames */
static inline size_t
stk_ws_hdr_size(uint64_t len, bool masked)
{
	return (len < 126 ? 2u : len <= 0xffff ? 4u : 10u) + (masked ? 4u : 0u);
}
#define STK_WS_RSV1 0x40u /* permessage-deflate: the message is compressed */
#define STK_WS_RSV2 0x20u
#define STK_WS_RSV3 0x10u
/* stk_ws_hdr with RSV bits (STK_WS_RSV1 on the first frame of a compressed
 * message; bits outside 0x70 are ignored) */
size_t stk_ws_hdr_rsv(uint8_t *out, unsigned opcode, bool fin, unsigned rsv, uint64_t len,
		      const uint8_t *mask);
/* XOR n bytes with key, starting at key byte `off` (0..3, for resuming) */
void stk_ws_mask(uint8_t *p, size_t n, const uint8_t key[4], unsigned off);
/* dst = src XOR key (from key byte `off`), n bytes, in one pass: a frame
 * payload copied and masked at once */
void stk_ws_mask_copy(uint8_t *dst, const uint8_t *src, size_t n, const uint8_t key[4], unsigned off);

/* ---- permessage-deflate parameters (RFC 7692 7.1) ---- */
/* One struct, three uses:
 *  - client offer (stk_ws_client_request_pmd): on = offer the extension;
 *    client_max_window_bits 0 = offer the parameter without a value (the server
 *    may pick any 8..15 for our compressor), 8..15 = offer that value (we
 *    compress with at most that); server_max_window_bits 0 = not offered,
 *    8..15 = ask the server to compress with at most that; the two flags are
 *    offered as given.
 *  - server settings (stk_ws_server_init): on = accept offers;
 *    server_max_window_bits 0 or 15 = compress with up to 15 bits, 8..14 = at
 *    most that (stated in every response); client_max_window_bits 0 or 15 = no
 *    wish, 8..14 = ask the client for at most that (only when the client offered
 *    the parameter, as RFC 7692 requires); the flags: always put in the response.
 *  - negotiated (stk_ws_hs.pmd after the handshake): on = in use; both window
 *    bits concrete (8..15, 15 when not stated); the flags as agreed. Give it to
 *    stk_ws_dec_pmd(), stk_ws_inflate_init(), stk_ws_deflate_init().
 * Window 8: zlib's raw deflate cannot make an 8-bit window. When 8 is agreed
 * for our own compressor, stk_ws_deflate compresses with run-length matches only
 * (Z_RLE: every match is at distance 1), which stays inside any window. Our
 * inflater runs with the agreed window, at least 9 bits (a larger window
 * decodes a smaller one's stream; zlib-based peers that agreed to 8 compress
 * with 9). zlib checks a back reference against its window plus what the
 * current call has written, so a misbehaving peer's reference beyond the
 * agreed window fails (1007) or inflates correctly depending on how large the
 * caller's output regions are; what is inflated is always right. */
struct stk_ws_pmd {
	bool on;
	uint8_t client_max_window_bits, server_max_window_bits;
	bool client_no_context_takeover, server_no_context_takeover;
};

/* ---- handshake (RFC 6455 4) ---- */
#define STK_WS_HS_MAX 8192 /* longest request/response head accepted */

struct stk_ws_hs {
	size_t have;
	char buf[STK_WS_HS_MAX + 1];
	char accept[32];      /* client: the Sec-WebSocket-Accept we expect */
	char protocol[64];    /* client: subprotocol(s) asked for ("" = none); server: those asked */
	/* server side, after a request parsed */
	char path[256];
	char key[32];
	const char *err;      /* why it failed */
	/* permessage-deflate: client: our offer; server: our settings (stk_ws_server_init) */
	struct stk_ws_pmd pmd_want;
	/* after a 1 (accepted): what was negotiated (pmd.on false: no extension) */
	struct stk_ws_pmd pmd;
	/* server, after a 1 with pmd.on: the client's offer we accepted (client
	 * form: window bits 0 = not stated) */
	struct stk_ws_pmd pmd_offer;
};

/* client: base64 of 16 random bytes (the caller supplies them from a CSPRNG) */
void stk_ws_key(const uint8_t raw[16], char out[25]);
/* base64(SHA-1(key + GUID)) */
void stk_ws_accept_for(const char *key, char out[29]);
/* client: write the GET request; protocol = one subprotocol or a comma
 * separated list of them (tokens), or NULL; extra = "Name: value\r\n"... or NULL.
 * Prepares h for the response. Returns the length, or -1 if cap is too small
 * or protocol is not a list of tokens. No extension is offered. */
int stk_ws_client_request(struct stk_ws_hs *h, char *out, size_t cap, const char *host, const char *path,
			  const char *key, const char *protocol, const char *extra);
/* client: the same, offering permessage-deflate as `offer` says (NULL or
 * !offer->on: no offer). -1 also for window bits outside 0, 8..15. */
int stk_ws_client_request_pmd(struct stk_ws_hs *h, char *out, size_t cap, const char *host,
			      const char *path, const char *key, const char *protocol,
			      const char *extra, const struct stk_ws_pmd *offer);
/* client: feed response bytes. Returns 0 = need more, 1 = accepted (*used =
 * bytes of the head; what follows is frame data; h->pmd = what was
 * negotiated), -1 = failed (h->err). Without an offer any extension in the
 * response fails; with one, only permessage-deflate with parameters valid and
 * consistent with the offer (RFC 7692 7.1) is accepted. */
int stk_ws_client_response(struct stk_ws_hs *h, const uint8_t *p, size_t n, size_t *used);
/* server: clear h and set our permessage-deflate settings (NULL: none), before
 * the first stk_ws_server_request. A zeroed h is the same as settings NULL. */
void stk_ws_server_init(struct stk_ws_hs *h, const struct stk_ws_pmd *settings);
/* server: feed request bytes; same returns; on 1, h->path, h->key, h->protocol,
 * and h->pmd: the first permessage-deflate offer acceptable under
 * h->pmd_want (pmd.on false when none). A malformed Sec-WebSocket-Protocol or
 * Sec-WebSocket-Extensions fails the request (-1); offers of other extensions
 * and unacceptable offers are declined. */
int stk_ws_server_request(struct stk_ws_hs *h, const uint8_t *p, size_t n, size_t *used);
/* server: the 101 response for h (after stk_ws_server_request returned 1),
 * with the Sec-WebSocket-Extensions line when h->pmd.on. protocol: the one
 * subprotocol chosen (a token) or NULL; -1 when cap is too small or protocol is
 * not a token. */
int stk_ws_server_response(const struct stk_ws_hs *h, char *out, size_t cap, const char *protocol);
/* server: a 400 response with a reason line */
int stk_ws_server_reject(char *out, size_t cap, const char *why);
/* is [p, p+n) a token (RFC 9110 5.6.2: 1*tchar)? */
bool stk_ws_is_token(const char *p, size_t n);

/* ---- permessage-deflate data (RFC 7692 7.2), zlib ---- */
/* Inflater: one per connection, for the peer's compressed messages. init
 * allocates the z_stream (zlib allocates its window at the first message);
 * nothing is allocated per message (inflateReset). The caller owns the output
 * memory: stk_ws_inflate writes into [*out, out_end) and says when it needs
 * more room. Inflated bytes per message are limited to max_msg (0 = none):
 * output stops at the limit and the message fails with 1009 as soon as one
 * byte more would come, so a decompression bomb costs at most max_msg bytes.
 * Fields are public for reading (counters, error); the rest is the inflater's. */
struct stk_ws_inflate {
	void *zs;               /* z_stream */
	uint64_t max_msg;       /* inflated bytes per message, 0 = no limit */
	bool check_utf8;        /* validate text messages (STK_WS_Z_TEXT) */
	bool reset_each;        /* the peer's no_context_takeover: fresh stream per message */
	uint8_t window_bits;    /* what inflate runs with (9..15, see struct stk_ws_pmd) */
	uint8_t state;
	bool pend;              /* bytes fed since the message start or a stream end */
	bool full;              /* the last inflate() filled its output: it may hold more */
	bool boundary;          /* the stream is between deflate blocks */
	uint8_t tail;           /* bytes of 00 00 ff ff fed at the message end */
	uint8_t scratch;        /* where a byte past max_msg goes (never to the caller) */
	uint32_t utf8;
	uint64_t msg_in, msg_out;      /* this message: compressed bytes fed, inflated bytes out */
	uint64_t in_bytes, out_bytes;  /* all messages: compressed bytes fed, inflated bytes out */
	uint64_t msgs;                 /* messages completed */
	const char *err;        /* STK_WS_Z_ERROR: why (static) */
	const char *zerr;       /* zlib's message for corrupt data (static), or NULL */
	uint16_t err_code;      /* 1007 corrupt or bad UTF-8, 1009 too big, 1011 zlib failed */
};

enum stk_ws_zr {
	STK_WS_Z_ERROR = -1, /* z->err_code, z->err; sticky: every later call returns it */
	STK_WS_Z_MORE = 0,   /* all input consumed, the message goes on (not LAST) */
	STK_WS_Z_SPACE = 1,  /* output full: call again with more room and the rest of the input */
	STK_WS_Z_END = 2,    /* LAST: the message is complete (z->msg_out bytes in all) */
};
#define STK_WS_Z_LAST 1u /* this is the message's last piece (stk_ws_out.last) */
#define STK_WS_Z_TEXT 2u /* the message is text (checked as UTF-8 when check_utf8) */

/* neg: what was negotiated (neg->on must be set); server: we are the server
 * (the peer is the client: its window bits and no_context_takeover apply).
 * Returns 0, -EINVAL or -ENOMEM. */
int stk_ws_inflate_init(struct stk_ws_inflate *z, const struct stk_ws_pmd *neg, bool server,
			uint64_t max_msg, bool check_utf8);
/* Inflate a piece of a compressed message (the DATA pieces of one message, in
 * order, any chunking, empty pieces allowed): consumes from *in up to in_end,
 * writes from *out up to out_end, advancing both. With STK_WS_Z_LAST the
 * message's end is processed (the 00 00 ff ff tail of RFC 7692 7.2.2 appended
 * internally). Returns enum stk_ws_zr; on SPACE grow or replace the output and
 * call again with the same flags (an empty region is fine: SPACE, except once
 * the message has max_msg bytes out: then no room is needed, the call returns
 * END or ERROR 1009). A compressed message of zero bytes is an empty message. */
int stk_ws_inflate(struct stk_ws_inflate *z, const uint8_t **in, const uint8_t *in_end,
		   unsigned flags, uint8_t **out, uint8_t *out_end);
/* free the z_stream; z may be zeroed or already finished */
void stk_ws_inflate_fini(struct stk_ws_inflate *z);

/* Deflater: one per connection, for our outgoing messages. */
struct stk_ws_deflate {
	void *zs;               /* z_stream */
	bool reset_each;        /* our no_context_takeover */
	uint8_t window_bits;    /* agreed window for our compressor (8..15) */
	uint64_t in_bytes, out_bytes, msgs; /* all messages: bytes in, payload bytes out */
};
/* neg: negotiated; server: we are the server (our window bits and
 * no_context_takeover are the server_* ones). level: zlib level 0..9 or -1
 * (default 6); mem_level 1..9 or 0 (default 8). Returns 0, -EINVAL, -ENOMEM. */
int stk_ws_deflate_init(struct stk_ws_deflate *z, const struct stk_ws_pmd *neg, bool server,
			int level, int mem_level);
/* an output capacity with which stk_ws_deflate never fails for n input bytes */
size_t stk_ws_deflate_bound(const struct stk_ws_deflate *z, size_t n);
/* Compress one whole message into out[0..cap): the payload of an RSV1 message
 * (trailing 00 00 ff ff removed, RFC 7692 7.2.1). Returns its length, or
 * -ENOSPC when cap is too small (the stream is reset: nothing of this message
 * is in the context; send it uncompressed or retry), -EIO on a zlib failure.
 * A message compressed here must be sent (the context includes it); messages
 * sent uncompressed do not pass through here. */
ssize_t stk_ws_deflate(struct stk_ws_deflate *z, const uint8_t *in, size_t n, uint8_t *out,
		       size_t cap);
void stk_ws_deflate_fini(struct stk_ws_deflate *z);

#ifdef __cplusplus
}
#endif
#endif
