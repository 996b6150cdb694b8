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
 * Limits checked: RSV bits (no extension is ever negotiated), reserved opcodes,
 * control frames over 125 bytes or fragmented, continuation without a start, a
 * new message inside a fragmented one, masking (a client must receive unmasked
 * frames, a server masked ones), 64-bit lengths with the top bit set, message
 * size over max_msg (checked at each frame header, before any payload), UTF-8 of
 * text messages across fragments and of close reasons, close codes. Non-minimal
 * length encodings are accepted. */
#ifndef STK_WS_H
#define STK_WS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

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
	uint8_t msg_op;       /* 0: no data message in progress */
	bool msg_first;       /* the next data piece is the message's first */
	uint64_t msg_len;
	uint32_t utf8;
	/* control frame assembly */
	uint8_t ctl_len;
	uint8_t ctl[STK_WS_MAX_CONTROL];
	const char *err;
	uint16_t err_code;
};

void stk_ws_dec_init(struct stk_ws_dec *d, bool server, uint64_t max_msg, bool check_utf8);
/* The resumable state machine behind stk_ws_dec_next(). */
enum stk_ws_ev stk_ws_dec_next_slow(struct stk_ws_dec *d, uint8_t **p, uint8_t *end, struct stk_ws_out *o);

/* Decode from *p (advanced past what was consumed) up to end.
 * Inline fast path for what a client reading market data mostly sees: between
 * frames, a whole data frame (text, binary or continuation, FIN or not, 7- or
 * 16-bit length, not empty unless final) inside the chunk, within max_msg and
 * valid UTF-8 so far if text. Everything else, errors included, goes through
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
		    (cont ? d->msg_op != 0 : (op == STK_WS_OP_TEXT || op == STK_WS_OP_BINARY) && d->msg_op == 0)) {
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
				uint64_t acc = 0;

				/* short ASCII pieces (fragments, tiny ticks) without a call:
				 * two overlapping 8-byte loads cover 8..16 bytes */
				if (u == STK_UTF8_ACCEPT && len <= 16) {
					if (len >= 8) {
						uint64_t w1, w2;

						__builtin_memcpy(&w1, p + h, 8);
						__builtin_memcpy(&w2, p + h + len - 8, 8);
						acc = w1 | w2;
					} else {
						for (size_t i = 0; i < len; i++)
							acc |= p[h + i];
					}
				}
				if (u != STK_UTF8_ACCEPT || len > 16 || (acc & 0x8080808080808080ull)) {
					u = stk_utf8_validate(u, p + h, len);
					if (u == STK_UTF8_REJECT || (fin && u != STK_UTF8_ACCEPT))
						goto slow; /* the state machine reports the error */
				}
			}
			o->opcode = (uint8_t)mop;
			o->first = cont ? d->msg_first : true;
			o->last = fin;
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

/* valid close code on the wire (RFC 6455 7.4) */
bool stk_ws_close_code_valid(unsigned code);

/* ---- encoder ---- */
/* Frame header for a payload of len bytes; mask = NULL for an unmasked
 * (server) frame, else the 4-byte key to announce. Returns its length (2..14). */
size_t stk_ws_hdr(uint8_t *out, unsigned opcode, bool fin, uint64_t len, const uint8_t *mask);
/* XOR n bytes with key, starting at key byte `off` (0..3, for resuming) */
void stk_ws_mask(uint8_t *p, size_t n, const uint8_t key[4], unsigned off);

/* ---- handshake (RFC 6455 4) ---- */
#define STK_WS_HS_MAX 8192 /* longest request/response head accepted */

struct stk_ws_hs {
	size_t have;
	char buf[STK_WS_HS_MAX + 1];
	char accept[32];      /* client: the Sec-WebSocket-Accept we expect */
	char protocol[64];    /* client: the one subprotocol we asked for ("" = none); server: what was asked */
	/* server side, after a request parsed */
	char path[256];
	char key[32];
	const char *err;      /* why it failed */
};

/* client: base64 of 16 random bytes (the caller supplies them from a CSPRNG) */
void stk_ws_key(const uint8_t raw[16], char out[25]);
/* base64(SHA-1(key + GUID)) */
void stk_ws_accept_for(const char *key, char out[29]);
/* client: write the GET request; extra = "Name: value\r\n"... or NULL.
 * Prepares h for the response. Returns the length, or -1 if cap is too small. */
int stk_ws_client_request(struct stk_ws_hs *h, char *out, size_t cap, const char *host, const char *path,
			  const char *key, const char *protocol, const char *extra);
/* client: feed response bytes. Returns 0 = need more, 1 = accepted (*used =
 * bytes of the head; what follows is frame data), -1 = failed (h->err). */
int stk_ws_client_response(struct stk_ws_hs *h, const uint8_t *p, size_t n, size_t *used);
/* server: feed request bytes; same returns; on 1, h->path, h->key, h->protocol */
int stk_ws_server_request(struct stk_ws_hs *h, const uint8_t *p, size_t n, size_t *used);
/* server: the 101 response for h (after stk_ws_server_request returned 1) */
int stk_ws_server_response(const struct stk_ws_hs *h, char *out, size_t cap, const char *protocol);
/* server: a 400 response with a reason line */
int stk_ws_server_reject(char *out, size_t cap, const char *why);

#ifdef __cplusplus
}
#endif
#endif
