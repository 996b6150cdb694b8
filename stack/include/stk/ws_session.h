/* SPDX-License-Identifier: BSD-3-Clause
 * stk/ws_session.h — one WebSocket session (RFC 6455 + RFC 7692) over a byte
 * stream, for either role: the layer above the frame codec of stk/ws.h, as
 * wslay's event layer is above its frame layer. No I/O, no DPDK; the ws stage
 * (client) and the feedsim stage (server) run it on their worker lcore over
 * the plaintext of a tcp (or TLS) connection, and tests/stack, tests/fuzz run
 * it in plain processes.
 *
 * What the session does (after the HTTP upgrade, which stays stk_ws_hs's):
 *   - decodes the peer's frames (stk_ws_dec) from the chunks it is given;
 *   - hands out a message wholly inside one chunk by reference (zero copy: the
 *     caller keeps the chunk alive, e.g. with a reference on its mbuf), and
 *     assembles one that spans chunks into a buffer the caller lends it
 *     (ops.buf_get: a pool first, say), grown (doubling, up to max_msg) by
 *     trading it for a bigger one;
 *   - inflates compressed messages (permessage-deflate, when negotiated) into
 *     such buffers; max_msg bounds the inflated size (1009 as soon as it is
 *     crossed, nothing of that message handed out); a message without a buffer
 *     is inflated into scratch space and dropped, so the shared LZ77 window
 *     stays whole;
 *   - answers a ping with a pong (the same payload) unless its close went out;
 *   - runs the close handshake: a peer's close is answered with the same code
 *     (none if it sent none) unless ours went first; stk_wss_close() sends ours
 *     once; a protocol error sends the close with its code (1002, 1007, 1009,
 *     1011) before the error is reported;
 *   - builds frames to send: masked with a fresh key from ops.rand on the
 *     client (RFC 6455 5.3), unmasked on the server; messages compressed when
 *     the session was asked to and the extension is in use; fragmented on
 *     request.
 * The caller keeps what is its own: the connection (TCP, TLS), timers (ping
 * interval, pong deadline, stale feed), counters of delivered messages, and
 * what a close means (reconnect, drop the client).
 *
 * Bytes out. Every frame goes to ops.tx in parts (header, payload, the mask
 * key to apply while copying it: stk_ws_mask_copy), so the caller writes it
 * wherever its frames go (an mbuf, a TLS plaintext buffer) with one copy of the
 * payload. A tx that fails may end the session from inside the callback
 * (stk_wss_fini): the session touches nothing of itself after a failed tx and
 * reports it (-1 from a send, STK_WSS_GONE from stk_wss_recv).
 *
 * Statistics. Control frames, closes and compression are counted into a
 * struct stk_wss_stats the caller gives (one for all sessions of a stage is
 * the intent: a single thread, plain adds); messages are the caller's to
 * count, from the events. */
#ifndef STK_WS_SESSION_H
#define STK_WS_SESSION_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <stk/ws.h>

#ifdef __cplusplus
extern "C" {
#endif

/* A message buffer lent by the caller: data, its capacity, and a tag of the
 * caller's (where it came from: pool, heap) given back with it. */
struct stk_wss_buf {
	uint8_t *data;
	size_t cap;
	uint32_t kind;
};

/* A frame to send: hdr[0..hlen) then payload[0..len), the payload XORed with
 * mask (4 bytes, from key byte 0) when mask != NULL. control: a ping, pong or
 * close (at most 2 + 125 bytes after the header), which the caller should not
 * hold back behind data it batches. */
struct stk_wss_frame {
	const uint8_t *hdr;
	size_t hlen;
	const uint8_t *payload;
	size_t len;
	const uint8_t *mask;
	bool control;
};

struct stk_wss_ops {
	/* send a frame whole (all of it or nothing): 0, or -1 if it could not go out */
	int (*tx)(void *user, const struct stk_wss_frame *f);
	/* n unpredictable bytes (mask keys; the client only) */
	void (*rand)(void *user, uint8_t *out, unsigned n);
	/* lend a buffer of at least need bytes (need <= max_msg): fill b, return 0.
	 * grow false: the first buffer of a message; -1 drops the message (its
	 * later pieces are skipped; the caller counts why). On entry b->kind says
	 * what it is for: STK_WSS_ASSEMBLED (need: its first piece) or
	 * STK_WSS_INFLATED (need: its first compressed piece; the inflated size
	 * is known only at its end, and is mostly small); the callee sets kind to
	 * its own tag. grow true: a bigger
	 * one to replace the message's (the session copies the bytes over and
	 * gives the old one back); -1 fails the session with 1011. May be NULL:
	 * every message that does not lie in one chunk is dropped. */
	int (*buf_get)(void *user, struct stk_wss_buf *b, size_t need, bool grow);
	/* take back a buffer the session holds (a grown-out one, a message cut
	 * short by an error or by stk_wss_fini) */
	void (*buf_put)(void *user, struct stk_wss_buf *b);
};

/* The counts, one uint64_t each (X(field, what)):
 *   frames_control_rx  pings, pongs and closes received
 *   pings_after_close  pings received after our close went out: not
 *                      answered (pings_rx = pongs_tx + pings_after_close)
 *   msgs_dropped       messages skipped: no buffer (buf_get -1 or NULL)
 *   z_msgs_rx          compressed messages inflated whole
 *   z_bytes_rx, inflated_bytes   compressed bytes received, inflated from them
 *   z_msgs_tx, z_bytes_tx        messages sent compressed, their payload bytes
 *   z_tx_uncompressed  messages sent as they are: the compressor failed or
 *                      had no room */
#define STK_WSS_STATS(X)                                                       \
	X(frames_control_rx)                                                   \
	X(pings_rx)                                                            \
	X(pongs_tx)                                                            \
	X(pings_after_close)                                                   \
	X(pings_tx)                                                            \
	X(pongs_rx)                                                            \
	X(closes_rx)                                                           \
	X(closes_tx)                                                           \
	X(msgs_dropped)                                                        \
	X(z_msgs_rx)                                                           \
	X(z_bytes_rx)                                                          \
	X(inflated_bytes)                                                      \
	X(z_msgs_tx)                                                           \
	X(z_bytes_tx)                                                          \
	X(z_tx_uncompressed)

struct stk_wss_stats {
#define STK_WSS_X(f) uint64_t f;
	STK_WSS_STATS(STK_WSS_X)
#undef STK_WSS_X
};

enum {
#define STK_WSS_X(f) STK_WSS_S_##f,
	STK_WSS_STATS(STK_WSS_X)
#undef STK_WSS_X
	STK_WSS_S__N
};

/* What moved since *pub (the counts already published): delta[i] for count
 * STK_WSS_S_i, and *pub = *now. For a stage that adds the sessions' counts
 * to counters of its own now and then. */
void stk_wss_stats_moved(const struct stk_wss_stats *now, struct stk_wss_stats *pub,
			 uint64_t delta[STK_WSS_S__N]);


struct stk_wss_conf {
	bool server;          /* our role: the peer's frames must be masked */
	uint64_t max_msg;     /* message bytes (inflated), 0 = no limit */
	bool check_utf8;      /* text messages and close reasons must be UTF-8 */
	/* permessage-deflate as negotiated (stk_ws_hs.pmd), NULL or !on: none */
	const struct stk_ws_pmd *pmd;
	bool compress;        /* with pmd: compress the messages we send */
	int deflate_level;    /* zlib level 0..9, -1: default */
	const struct stk_wss_ops *ops;
	void *user;
	struct stk_wss_stats *stats; /* NULL: not counted */
};

enum {
	STK_WSS_FREE = 0,   /* zeroed, or after stk_wss_fini */
	STK_WSS_OPEN,       /* messages both ways */
	STK_WSS_CLOSED,     /* the peer's close came (answered), or we failed the session */
};

/* Public so it can be embedded; the fields are the session's (read: state,
 * close_sent, close_rcvd, close_code, pmd_on). */
struct stk_wss {
	struct stk_ws_dec dec;
	uint8_t state;
	bool server;
	bool close_sent;      /* our close frame went out (or was tried) */
	bool close_rcvd;      /* the peer's close frame came */
	bool pmd_on;          /* permessage-deflate in use */
	bool z_tx;            /* compress what we send */
	uint16_t close_code;  /* the peer's (1005: none) after close_rcvd */
	const struct stk_wss_ops *ops;
	void *user;
	struct stk_wss_stats *st;
	uint64_t max_msg;
	/* the message being assembled or inflated */
	struct stk_wss_buf asm_buf; /* data NULL: none */
	size_t asm_len;
	uint8_t asm_op;
	bool asm_drop;        /* skipping (or inflating into scratch) the rest of a message */
	struct stk_ws_inflate inf;
	struct stk_ws_deflate def;
	uint8_t *zbuf;        /* our compressed message (heap, grown as needed) */
	size_t zcap;
	struct stk_wss_stats own; /* where counts go when the conf gives no stats */
	uint8_t zscratch[1024];   /* where a dropped compressed message is inflated */
};

/* Start a session on a connection whose upgrade completed. Returns 0, -EINVAL
 * (no ops.tx; a client without ops.rand), -ENOMEM (zlib). On failure nothing is
 * held (stk_wss_fini is harmless). */
int stk_wss_init(struct stk_wss *s, const struct stk_wss_conf *c);
/* Give back what the session holds (zlib streams, the message being assembled
 * through ops.buf_put); s is FREE after. Safe on a zeroed or finished s. */
void stk_wss_fini(struct stk_wss *s);

/* ---- receiving ---- */
enum stk_wss_ev {
	STK_WSS_NEED_MORE = 0, /* the chunk is consumed */
	STK_WSS_MSG,           /* a whole message (see struct stk_wss_msg) */
	STK_WSS_PING,          /* a ping came (answered already, unless our close went out) */
	STK_WSS_PONG,          /* a pong came */
	STK_WSS_CLOSE,         /* the peer's close came: close_code, reason; answered */
	STK_WSS_ERROR,         /* we failed the session: close_code (ours, sent), reason */
	STK_WSS_GONE,          /* a tx failed: the session may be finished already; stop */
};

enum {
	STK_WSS_IN_CHUNK = 0,  /* data points into the chunk given */
	STK_WSS_ASSEMBLED,     /* data is buf.data: the buffer is the caller's now */
	STK_WSS_INFLATED,      /* the same, inflated */
};

struct stk_wss_msg {
	uint8_t opcode;        /* MSG: STK_WS_OP_TEXT / BINARY; PING / PONG / CLOSE: the frame's */
	uint8_t how;           /* MSG: STK_WSS_IN_CHUNK / ASSEMBLED / INFLATED */
	bool answer;           /* CLOSE: it answers our close (ours went first) */
	const uint8_t *data;   /* MSG: the message; PING / PONG: the payload; CLOSE: the reason */
	size_t len;
	struct stk_wss_buf buf; /* ASSEMBLED / INFLATED */
	uint16_t close_code;   /* CLOSE: the peer's (1005: none); ERROR: ours */
	const char *reason;    /* ERROR: why (static) */
};
/* PING / PONG / CLOSE data may point into the session: valid until the next
 * call on it. */

/* The rest of stk_wss_recv: the event the decoder returned (ev, *o; ev < 0:
 * none decoded yet), then on through the chunk. */
enum stk_wss_ev stk_wss_recv_slow(struct stk_wss *s, uint8_t **p, uint8_t *end, struct stk_wss_msg *m,
				  int ev, struct stk_ws_out *o);

/* Decode from *p (advanced past what was consumed) up to end; the chunk must
 * be writable (masked payload is unmasked in place: a client's frames on the
 * server). Call until STK_WSS_NEED_MORE; after ERROR, CLOSE or GONE the session
 * takes no more bytes (later calls consume the chunk and return NEED_MORE).
 * Inline fast path: a whole uncompressed data frame that is a whole message
 * inside the chunk (what a market-data client mostly sees) is returned without
 * a call. */
static inline enum stk_wss_ev
stk_wss_recv(struct stk_wss *s, uint8_t **p, uint8_t *end, struct stk_wss_msg *m)
{
	struct stk_ws_out o;
	enum stk_ws_ev ev;

	if (__builtin_expect(s->state != STK_WSS_OPEN || *p == end, 0))
		return stk_wss_recv_slow(s, p, end, m, -1, &o);
	ev = stk_ws_dec_next(&s->dec, p, end, &o);
	if (__builtin_expect(ev == STK_WS_DATA && o.first && o.last && !o.compressed, 1)) {
		m->opcode = o.opcode;
		m->how = STK_WSS_IN_CHUNK;
		m->data = o.data;
		m->len = o.len;
		return STK_WSS_MSG;
	}
	return stk_wss_recv_slow(s, p, end, m, (int)ev, &o);
}

/* A run of whole messages (stk_ws_dec_run) for an OPEN session: what as many
 * stk_wss_recv() calls would return as STK_WSS_MSG with how STK_WSS_IN_CHUNK,
 * at most max, *p moved past them; 0 when the next thing is anything else,
 * which stk_wss_recv() then decodes. A receive loop calls this first and
 * stk_wss_recv() when it returns fewer than max. */
static inline unsigned
stk_wss_recv_run(struct stk_wss *s, uint8_t **p, uint8_t *end, struct stk_ws_frame *f, unsigned max)
{
	if (__builtin_expect(s->state != STK_WSS_OPEN, 0))
		return 0;
	return stk_ws_dec_run(&s->dec, p, end, f, max);
}

/* The receive loop's call after a run stopped short (stk_wss_recv_run
 * returned fewer than max): what stk_wss_recv() returns, with the two ends
 * of a message that a chunk boundary cuts taken without the decoder's state
 * machine (stk_ws_dec_piece): the first piece into a buffer (ops.buf_get) and
 * NEED_MORE, then at the next chunk's start the rest and the message
 * (STK_WSS_ASSEMBLED). What a feed of messages larger than a few hundred
 * bytes meets once per TCP segment. */
enum stk_wss_ev stk_wss_recv_next(struct stk_wss *s, uint8_t **p, uint8_t *end, struct stk_wss_msg *m);

/* ---- sending (0 sent; -1 not: the session is not OPEN or our close went
 * out (for data and pings), or the tx failed (the session may be finished
 * then). A fragmented message whose tx fails after its first frame is cut
 * short on the wire: the caller must end the connection.) ---- */
/* a whole message in one frame; compressed when the session compresses */
int stk_wss_send(struct stk_wss *s, unsigned opcode, const void *p, size_t n);
/* the same cut into `frags` frames of equal size (of the compressed payload
 * when it is compressed; 0 or 1: one frame), with a ping of ping[0..ping_len)
 * after the first frame when ping != NULL (a control frame inside a
 * fragmented message, as servers do) */
int stk_wss_send_frag(struct stk_wss *s, unsigned opcode, const void *p, size_t n, unsigned frags,
		      const void *ping, size_t ping_len);
/* a ping (n <= 125) */
int stk_wss_ping(struct stk_wss *s, const void *p, size_t n);
/* our close: code (0: none in the frame) and a reason (UTF-8, NULL = none;
 * cut to fit 123 bytes); sent once: -1 when it went out already */
int stk_wss_close(struct stk_wss *s, uint16_t code, const char *reason);

#ifdef __cplusplus
}
#endif
#endif
