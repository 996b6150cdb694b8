/* SPDX-License-Identifier: BSD-3-Clause
 * test_ws_frame.c — stack/ws_frame.c (frame decoder, encoder, masking, close
 * codes) through stk/ws.h (L0, no DPDK).
 *
 * Streams are written by the test's own frame writer (t_frame), not by
 * stk_ws_hdr, so an encoder bug cannot hide a decoder bug; the encoder is
 * checked against RFC bytes and against t_frame. Every chunk handed to the
 * decoder is copied so that it ends right before a PROT_NONE page (an overread
 * faults). A run turns the decoder's events into a chunking-independent
 * transcript (whole messages, control frames, the error) and checks on every
 * event: pointers inside the chunk, first/last consistent, everything given
 * consumed on NEED_MORE, ERROR sticky.
 *
 *   rfc_decode           RFC 6455 5.7: unmasked "Hello", masked "Hello" (server
 *                        decoder, unmasked in place), fragmented "Hel"+"lo",
 *                        unmasked ping, masked pong, 256 B and 64 KiB binary:
 *                        exact events, zero copy, and under every chunking
 *   rfc_encode           stk_ws_hdr produces exactly the RFC header bytes and,
 *                        with stk_ws_mask, the whole masked frames; writes no
 *                        byte beyond its returned length; agrees with t_frame
 *                        for every opcode/fin/mask over many lengths, and
 *                        stk_ws_hdr_size with it
 *   length_encodings     0, 1, 125, 126, 127, 65535, 65536, 1 MiB: header length,
 *                        decoded length and payload, client and server, whole
 *                        and randomly chunked; non-minimal forms accepted
 *   chunked_every        a ~2 KB stream (mixed sizes, text/binary, fragmented,
 *                        empty fragments, pings/pongs inside messages, 16/64-bit
 *                        forms, UTF-8 split across fragments, close) fed in
 *                        chunks of every size 1..len, client and server (masked):
 *                        transcript identical, whole-message rule (below)
 *   chunked_random       the same stream under 400 seeded random chunkings with
 *                        empty chunks, and a 1.2 MB stream (64 KiB, 70000 B in
 *                        fragments, 1 MiB) under 8 random chunkings per side
 *   whole_in_one_chunk   hand-placed splits: a single-frame message is one
 *                        first && last event exactly when its payload lies in
 *                        one chunk; a fragmented one never is
 *   mask_roundtrip       stk_ws_mask at key offsets 0..3, lengths 0..64,
 *                        alignments 0..7 against a byte-wise reference, split
 *                        resumption equals one-shot, neighbours untouched,
 *                        twice = identity
 *   masked_splits        masked data and control frames through a server
 *                        decoder split at every offset and every pair of offsets
 *   control_interleaved  ping between fragments: DATA, CONTROL(full payload),
 *                        DATA in that order; 125-byte control frames split at
 *                        every offset assembled once; close code / 1005
 *   err_*                each protocol error: its close code, no DATA byte at or
 *                        after the offending frame (or byte), the message it
 *                        belongs to never completed, under every chunking
 *   close_codes_all      every code 0..65535 in a close frame against the list
 *                        1000-1003, 1007-1014, 3000-4999; stk_ws_close_code_valid
 *   utf8_in_messages     sequences split across fragments (with a ping between)
 *                        accepted; truncated at the end -> 1007; binary and
 *                        check_utf8=false not validated
 *   max_msg_limits       == max_msg accepted (single and summed), the sum resets
 *                        per message, control frames are not messages
 *   error_sticky         after ERROR every call returns ERROR with the same
 *                        code and consumes the input; dec_init starts afresh
 *   pmd_rsv1             permessage-deflate negotiated (stk_ws_dec_pmd): RSV1
 *                        text/binary messages (fragmented, with a ping inside,
 *                        empty, 16/64-bit lengths) mixed with plain ones under
 *                        every chunking, client and server: `compressed` on
 *                        every piece of exactly those messages, no UTF-8 check
 *                        on their bytes; the same stream without the
 *                        extension -> 1002
 *   pmd_rsv_errors       with the extension: RSV1 on ping / close /
 *                        continuation, RSV2 / RSV3 in any combination -> 1002;
 *                        max_msg counts a compressed message's wire bytes
 *   runs (case)          the decoding and error tests again, with
 *                        stk_ws_dec_run taking runs of whole messages (3 at
 *                        most) and stk_ws_dec_piece the pieces it can before
 *                        each stk_ws_dec_next: the same transcripts,
 *                        whole-message rule and errors; every piece equal to
 *                        stk_ws_dec_next's on a copy, decoder state included
 */
#include <check.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <stk/ws.h>

#include "t_bytes.h"

#define OP_CONT STK_WS_OP_CONT
#define OP_TEXT STK_WS_OP_TEXT
#define OP_BIN STK_WS_OP_BINARY
#define OP_CLOSE STK_WS_OP_CLOSE
#define OP_PING STK_WS_OP_PING
#define OP_PONG STK_WS_OP_PONG

static void
fill_bin(uint8_t *p, size_t n, uint64_t seed)
{
	for (size_t i = 0; i < n; i++)
		p[i] = (uint8_t)rnd(&seed);
}

/* valid UTF-8 of exactly n bytes, 1- to 4-byte sequences mixed */
static void
fill_text(uint8_t *p, size_t n, uint64_t seed)
{
	size_t i = 0;

	while (i < n) {
		uint64_t r = rnd(&seed);
		size_t k = 1 + r % 4;
		uint32_t cp;

		if (k > n - i)
			k = n - i;
		r >>= 8;
		switch (k) {
		case 1:
			p[i++] = (uint8_t)('a' + r % 26);
			break;
		case 2:
			cp = 0x80 + (uint32_t)(r % 0x780);
			p[i++] = (uint8_t)(0xc0 | (cp >> 6));
			p[i++] = (uint8_t)(0x80 | (cp & 0x3f));
			break;
		case 3:
			cp = 0x800 + (uint32_t)(r % 0xf800);
			if (cp >= 0xd800 && cp <= 0xdfff)
				cp -= 0x1000;
			p[i++] = (uint8_t)(0xe0 | (cp >> 12));
			p[i++] = (uint8_t)(0x80 | ((cp >> 6) & 0x3f));
			p[i++] = (uint8_t)(0x80 | (cp & 0x3f));
			break;
		default:
			cp = 0x10000 + (uint32_t)(r % 0x100000);
			p[i++] = (uint8_t)(0xf0 | (cp >> 18));
			p[i++] = (uint8_t)(0x80 | ((cp >> 12) & 0x3f));
			p[i++] = (uint8_t)(0x80 | ((cp >> 6) & 0x3f));
			p[i++] = (uint8_t)(0x80 | (cp & 0x3f));
		}
	}
}

/* ---- the test's own frame writer ---- */
enum { L_AUTO, L_7, L_16, L_64 };

/* b0 verbatim (FIN, RSV, opcode); `declared` in the length field (form forced
 * or minimal); key = NULL for unmasked; plen payload bytes (masked here).
 * Returns the frame's offset in s. */
static uint64_t
t_frame(struct sbuf *s, uint8_t b0, uint64_t declared, int form, const uint8_t *key, const void *pl,
	size_t plen)
{
	uint64_t at = s->len;
	uint8_t h[14], mbit = key ? 0x80 : 0;
	size_t k = 2, o;

	if (form == L_AUTO)
		form = declared < 126 ? L_7 : declared <= 0xffff ? L_16 : L_64;
	h[0] = b0;
	if (form == L_7) {
		h[1] = (uint8_t)(mbit | declared);
	} else if (form == L_16) {
		h[1] = mbit | 126;
		h[2] = (uint8_t)(declared >> 8);
		h[3] = (uint8_t)declared;
		k = 4;
	} else {
		h[1] = mbit | 127;
		for (int i = 0; i < 8; i++)
			h[2 + i] = (uint8_t)(declared >> (56 - 8 * i));
		k = 10;
	}
	if (key) {
		memcpy(h + k, key, 4);
		k += 4;
	}
	sb_put(s, h, k);
	o = s->len;
	sb_put(s, pl, plen);
	if (key)
		for (size_t i = 0; i < plen; i++)
			s->p[o + i] ^= key[i & 3];
	return at;
}

/* ---- transcripts: what a stream means, independent of chunking ---- */
static void
ts_msg(struct sbuf *t, uint8_t op, const void *d, size_t n)
{
	uint64_t n64 = n;

	sb_u8(t, 'M');
	sb_u8(t, op);
	sb_put(t, &n64, 8);
	sb_put(t, d, n);
}

static void
ts_ctl(struct sbuf *t, uint8_t op, uint16_t code, const void *d, size_t n)
{
	sb_u8(t, 'C');
	sb_u8(t, op);
	sb_u8(t, (uint8_t)(code >> 8));
	sb_u8(t, (uint8_t)code);
	sb_u8(t, (uint8_t)n);
	sb_put(t, d, n);
}

static void
ts_err(struct sbuf *t, uint16_t code)
{
	sb_u8(t, 'E');
	sb_u8(t, (uint8_t)(code >> 8));
	sb_u8(t, (uint8_t)code);
}

/* ---- scripts: a stream and what it must decode to ---- */
#define MAXM 64

struct mrange {
	uint64_t ps, pe;   /* stream offsets of the first and one past the last payload byte */
	unsigned frames;   /* data frames of the message */
	unsigned nonempty; /* of which with payload */
};

struct script {
	struct sbuf s, x; /* wire, expected transcript */
	bool mask;
	uint64_t rng;
	bool in_msg;
	uint8_t op;
	bool z; /* the message is compressed (RSV1 on its first frame) */
	struct sbuf cur;
	struct mrange r;
	unsigned nmsg;
	struct mrange m[MAXM];
};

static void
sc_init(struct script *sc, bool mask, uint64_t seed)
{
	memset(sc, 0, sizeof(*sc));
	sc->mask = mask;
	sc->rng = seed;
}

static void
sc_free(struct script *sc)
{
	sb_free(&sc->s);
	sb_free(&sc->x);
	sb_free(&sc->cur);
}

static const uint8_t *
sc_key(struct script *sc, uint8_t k[4])
{
	uint64_t r;

	if (!sc->mask)
		return NULL;
	r = rnd(&sc->rng);
	memcpy(k, &r, 4);
	return k;
}

static void
sc_data(struct script *sc, unsigned op, bool fin, const void *pl, size_t len, int form)
{
	uint8_t k[4];
	const uint8_t *key = sc_key(sc, k);
	uint64_t ps;

	/* op may carry RSV1 (0x40): a compressed message */
	t_frame(&sc->s, (uint8_t)((fin ? 0x80 : 0) | op), len, form, key, pl, len);
	ps = sc->s.len - len;
	if ((op & 0x0f) != OP_CONT) {
		REQUIRE(!sc->in_msg, "not true: !sc->in_msg");
		sc->in_msg = true;
		sc->op = (uint8_t)(op & 0x0f);
		sc->z = (op & 0x40) != 0;
		sc->cur.len = 0;
		memset(&sc->r, 0, sizeof(sc->r));
		sc->r.ps = UINT64_MAX;
	} else {
		REQUIRE(sc->in_msg, "not true: sc->in_msg");
	}
	sc->r.frames++;
	if (len) {
		if (sc->r.ps == UINT64_MAX)
			sc->r.ps = ps;
		sc->r.pe = ps + len;
		sc->r.nonempty++;
	}
	sb_put(&sc->cur, pl, len);
	if (fin) {
		ts_msg(&sc->x, (uint8_t)(sc->op | (sc->z ? 0x80 : 0)), sc->cur.p, sc->cur.len);
		REQUIRE(sc->nmsg < MAXM, "not true: sc->nmsg < MAXM");
		sc->m[sc->nmsg++] = sc->r;
		sc->in_msg = false;
	}
}

static void
sc_ctl(struct script *sc, unsigned op, const void *pl, size_t len)
{
	uint8_t k[4];
	const uint8_t *key = sc_key(sc, k);
	const uint8_t *b = pl;
	uint16_t code = 0;

	t_frame(&sc->s, (uint8_t)(0x80 | op), len, L_AUTO, key, pl, len);
	if (op == OP_CLOSE)
		code = len >= 2 ? (uint16_t)((b[0] << 8) | b[1]) : STK_WS_CLOSE_NO_STATUS;
	ts_ctl(&sc->x, (uint8_t)op, code, pl, len);
}

/* ---- runs: a decoder fed chunk by chunk, every event checked ---- */
struct run {
	struct stk_ws_dec d;
	struct gbuf g;
	struct sbuf t;	 /* transcript */
	struct sbuf cur; /* message being assembled */
	bool in_msg;
	uint8_t op;
	bool z;
	unsigned nmsg;
	bool whole[MAXM]; /* message i came as one first && last event */
	uint64_t *cst;	  /* stream offsets of the non-empty chunks */
	size_t nch, cstcap;
	bool errored;
	uint16_t err_code;
	uint64_t data_end; /* one past the highest stream offset of a DATA byte */
	unsigned ndata, nctl;
	unsigned npiece; /* events stk_ws_dec_piece took (run_runs) */
};

/* permessage-deflate negotiated for the decoders run_init makes (the pmd_*
 * tests set it and clear it again: CK_FORK=no runs every test in one process) */
static bool run_pmd;

/* the runs decode through stk_ws_dec_run first (at most 3 frames at a time),
 * stk_ws_dec_next for the rest: set by the "runs" cases' fixture, which run the
 * chunking and error tests again; every transcript and rule must hold as it is */
static bool run_runs;

static void
runs_on(void)
{
	run_runs = true;
}

static void
runs_off(void)
{
	run_runs = false;
}

static void
run_init(struct run *r, bool server, uint64_t max_msg, bool utf8, size_t cap)
{
	memset(r, 0, sizeof(*r));
	stk_ws_dec_init(&r->d, server, max_msg, utf8);
	stk_ws_dec_pmd(&r->d, run_pmd);
	gb_init(&r->g, cap);
}

static void
run_free(struct run *r)
{
	gb_free(&r->g);
	sb_free(&r->t);
	sb_free(&r->cur);
	free(r->cst);
	r->cst = NULL;
}

static size_t
chunk_of(const struct run *r, uint64_t off)
{
	size_t lo = 0, hi = r->nch;

	/* the last chunk starting at or before off */
	while (hi - lo > 1) {
		size_t mid = (lo + hi) / 2;

		if (r->cst[mid] <= off)
			lo = mid;
		else
			hi = mid;
	}
	return lo;
}

/* the runs' next event: stk_ws_dec_piece when it takes it, checked against
 * what stk_ws_dec_next does on a copy of the decoder (event, piece, cursor,
 * the decoder after); else stk_ws_dec_next, with the decoder untouched by
 * the refusal */
static enum stk_ws_ev
run_piece(struct run *r, uint8_t **pp, uint8_t *end, struct stk_ws_out *o)
{
	struct stk_ws_dec ref = r->d;
	struct stk_ws_out ro;
	uint8_t *q = *pp;

	if (stk_ws_dec_piece(&r->d, pp, end, o) != STK_WS_DATA) {
		REQUIRE(*pp == q && memcmp(&ref, &r->d, sizeof(ref)) == 0,
			"stk_ws_dec_piece refused, but moved the cursor or changed the decoder");
		return stk_ws_dec_next(&r->d, pp, end, o);
	}
	memset(&ro, 0, sizeof(ro));
	REQUIRE(stk_ws_dec_next(&ref, &q, end, &ro) == STK_WS_DATA, "a piece where stk_ws_dec_next has none");
	REQUIRE(q == *pp && ro.data == o->data && ro.len == o->len && ro.opcode == o->opcode &&
			ro.first == o->first && ro.last == o->last && !ro.compressed && !o->compressed,
		"stk_ws_dec_piece: piece of %zu at %p (first %d last %d), stk_ws_dec_next: %zu at %p (%d %d)",
		o->len, (void *)o->data, o->first, o->last, ro.len, (void *)ro.data, ro.first, ro.last);
	REQUIRE(memcmp(&ref, &r->d, sizeof(ref)) == 0, "the decoder after stk_ws_dec_piece differs");
	r->npiece++;
	return STK_WS_DATA;
}

static void
run_chunk(struct run *r, const uint8_t *src, uint64_t off, size_t n)
{
	uint8_t *start = gb_place(&r->g, src, n), *end = start + n, *p = start;

	if (n) {
		if (r->nch == r->cstcap) {
			r->cstcap = r->cstcap ? 2 * r->cstcap : 64;
			r->cst = realloc(r->cst, r->cstcap * sizeof(*r->cst));
			REQUIRE(r->cst != NULL, "not true: r->cst != NULL");
		}
		r->cst[r->nch++] = off;
	}
	struct stk_ws_frame f[3]; /* a run's frames (run_runs), handed out one by one */
	unsigned fk = 0, fi = 0;

	for (size_t guard = 0;; guard++) {
		struct stk_ws_out o;
		uint8_t *before = p;
		enum stk_ws_ev ev;

		REQUIRE(guard <= n + 4,
			"decoder keeps returning events without consuming (chunk at %" PRIu64 ")",
			off);
		memset(&o, 0, sizeof(o));
		if (run_runs && fi == fk && !r->errored) {
			fi = 0;
			fk = stk_ws_dec_run(&r->d, &p, end, f, 3);
			REQUIRE(fk <= 3, "a run of %u frames", fk);
			REQUIRE(fk != 0 || p == before, "an empty run moved *p");
		}
		if (fi < fk) {
			/* what stk_ws_dec_next would have said */
			ev = STK_WS_DATA;
			o.opcode = f[fi].opcode;
			o.first = o.last = true;
			o.data = (uint8_t *)(uintptr_t)f[fi].data;
			o.len = f[fi].len;
			fi++;
		} else if (run_runs && !r->errored) {
			ev = run_piece(r, &p, end, &o);
		} else {
			ev = stk_ws_dec_next(&r->d, &p, end, &o);
		}
		REQUIRE(p >= before && p <= end, "*p moved outside [%p, %p]", (void *)before,
			(void *)end);
		if (r->errored) {
			REQUIRE(ev == STK_WS_ERROR, "event %d after ERROR", ev);
			REQUIRE(o.close_code == r->err_code, "close code %u after ERROR %u",
				o.close_code, r->err_code);
			REQUIRE(p == end, "not true: p == end");
			return;
		}
		switch (ev) {
		case STK_WS_NEED_MORE:
			REQUIRE(p == end, "NEED_MORE with %td bytes left in the chunk", end - p);
			return;
		case STK_WS_DATA: {
			uint64_t doff;

			REQUIRE(o.data >= start && o.data + o.len <= end, "DATA outside the chunk");
			doff = off + (uint64_t)(o.data - start);
			REQUIRE(o.opcode == OP_TEXT || o.opcode == OP_BIN, "DATA opcode %u",
				o.opcode);
			REQUIRE(o.first == !r->in_msg, "DATA first=%d while %s a message", o.first,
				r->in_msg ? "inside" : "outside");
			if (o.first) {
				r->in_msg = true;
				r->op = o.opcode;
				r->z = o.compressed;
				r->cur.len = 0;
			} else {
				REQUIRE(o.opcode == r->op,
					"DATA opcode %u inside a message of opcode %u", o.opcode,
					r->op);
				REQUIRE(o.compressed == r->z,
					"DATA compressed=%d inside a message with compressed=%d",
					o.compressed, r->z);
			}
			REQUIRE(!o.compressed || run_pmd, "compressed DATA without the extension");
			sb_put(&r->cur, o.data, o.len);
			if (o.len && doff + o.len > r->data_end)
				r->data_end = doff + o.len;
			r->ndata++;
			if (o.last) {
				REQUIRE(r->nmsg < MAXM, "not true: r->nmsg < MAXM");
				r->whole[r->nmsg++] = o.first;
				ts_msg(&r->t, (uint8_t)(r->op | (r->z ? 0x80 : 0)), r->cur.p,
				       r->cur.len);
				r->in_msg = false;
			}
			break;
		}
		case STK_WS_CONTROL:
			REQUIRE(o.opcode == OP_CLOSE || o.opcode == OP_PING || o.opcode == OP_PONG,
				"CONTROL opcode %u", o.opcode);
			REQUIRE(o.len <= STK_WS_MAX_CONTROL, "CONTROL of %zu bytes", o.len);
			REQUIRE(o.len == 0 || o.data != NULL,
				"not true: o.len == 0 || o.data != NULL");
			if (o.opcode == OP_CLOSE)
				REQUIRE(o.close_code == STK_WS_CLOSE_NO_STATUS ||
						stk_ws_close_code_valid(o.close_code),
					"close event with code %u", o.close_code);
			ts_ctl(&r->t, o.opcode, o.opcode == OP_CLOSE ? o.close_code : 0, o.data,
			       o.len);
			r->nctl++;
			break;
		case STK_WS_ERROR: {
			struct stk_ws_out o2;
			uint8_t *q = p;

			REQUIRE(o.reason != NULL, "not true: o.reason != NULL");
			REQUIRE(o.close_code == STK_WS_CLOSE_PROTOCOL ||
					o.close_code == STK_WS_CLOSE_BAD_DATA ||
					o.close_code == STK_WS_CLOSE_TOO_BIG,
				"ERROR close code %u", o.close_code);
			ts_err(&r->t, o.close_code);
			r->errored = true;
			r->err_code = o.close_code;
			/* the rest of this chunk: still ERROR, consumed */
			memset(&o2, 0, sizeof(o2));
			ev = stk_ws_dec_next(&r->d, &q, end, &o2);
			REQUIRE(ev == STK_WS_ERROR, "event %d after ERROR in the same chunk", ev);
			REQUIRE(o2.close_code == o.close_code, "close code %u after ERROR %u",
				o2.close_code, o.close_code);
			REQUIRE(q == end, "not true: q == end");
			return;
		}
		default:
			ck_abort_msg("unknown event %d", ev);
		}
	}
}

static void
feed_fixed(struct run *r, const uint8_t *s, size_t len, size_t c)
{
	for (size_t off = 0; off < len; off += c)
		run_chunk(r, s + off, off, len - off < c ? len - off : c);
}

/* split at the given ascending points */
static void
feed_points(struct run *r, const uint8_t *s, size_t len, const size_t *pts, size_t n)
{
	size_t prev = 0;

	for (size_t i = 0; i <= n; i++) {
		size_t to = i < n ? pts[i] : len;

		run_chunk(r, s + prev, prev, to - prev);
		prev = to;
	}
}

/* random chunk sizes 0..k (k itself random per feed, from ks), some empty */
static void
feed_random(struct run *r, const uint8_t *s, size_t len, uint64_t seed, const size_t *ks,
	    size_t nks)
{
	size_t k = ks[rnd(&seed) % nks], off = 0;

	if (k > len)
		k = len;
	while (off < len) {
		size_t c = (size_t)(rnd(&seed) % (k + 1));

		if (c > len - off)
			c = len - off;
		run_chunk(r, s + off, off, c);
		off += c;
	}
	run_chunk(r, s + len, len, 0);
}

static void
assert_transcript(const struct sbuf *got, const struct sbuf *want, const char *what)
{
	size_t i = 0, n = got->len < want->len ? got->len : want->len;

	while (i < n && got->p[i] == want->p[i])
		i++;
	REQUIRE(got->len == want->len && i == n,
		"%s: transcript differs at byte %zu (got %zu bytes, expected %zu)", what, i,
		got->len, want->len);
}

/* the decoded run equals the script; the whole-message rule holds */
static void
check_script(const struct run *r, const struct script *sc, const char *what)
{
	REQUIRE(!r->errored, "%s: unexpected ERROR %u (%s)", what, r->err_code,
		r->d.err ? r->d.err : "?");
	REQUIRE(!r->in_msg, "%s: a message is still open", what);
	assert_transcript(&r->t, &sc->x, what);
	REQUIRE(r->nmsg == sc->nmsg, "%s: %u messages, expected %u", what, r->nmsg, sc->nmsg);
	for (unsigned i = 0; i < sc->nmsg; i++) {
		const struct mrange *m = &sc->m[i];
		bool one = m->nonempty == 0 || chunk_of(r, m->ps) == chunk_of(r, m->pe - 1);

		if (r->whole[i])
			REQUIRE(one,
				"%s: message %u came as one event but its payload spans chunks",
				what, i);
		if (m->frames == 1)
			REQUIRE(r->whole[i] == one,
				"%s: single-frame message %u: one event = %d, payload in one chunk "
				"= %d",
				what, i, r->whole[i], one);
	}
}

/* sc's stream fed in chunks of every size, 1 to its length, to a decoder with
 * max_msg: each time just as sc says; the pieces stk_ws_dec_piece took in all
 * (run_runs) */
static size_t
script_every_chunking(const struct script *sc, bool server, uint64_t max_msg, const char *what)
{
	char w[128];
	size_t pieces = 0;

	for (size_t c = 1; c <= sc->s.len; c++) {
		struct run r;

		run_init(&r, server, max_msg, true, sc->s.len);
		feed_fixed(&r, sc->s.p, sc->s.len, c);
		snprintf(w, sizeof(w), "%s (%s), chunks of %zu", what, server ? "server" : "client",
			 c);
		check_script(&r, sc, w);
		pieces += r.npiece;
		run_free(&r);
	}
	return pieces;
}

/* sc's stream fed in random chunkings (feed_random, sizes from ks) for seeds
 * 1..seeds, each times seed_mul: each time just as sc says */
static void
script_random_chunkings(const struct script *sc, bool server, uint64_t seeds, uint64_t seed_mul,
			const size_t *ks, size_t nks, const char *what)
{
	char w[64];

	for (uint64_t seed = 1; seed <= seeds; seed++) {
		struct run r;

		run_init(&r, server, 0, true, sc->s.len);
		feed_random(&r, sc->s.p, sc->s.len, seed * seed_mul, ks, nks);
		snprintf(w, sizeof(w), "%s %s, seed %" PRIu64, server ? "server" : "client", what,
			 seed);
		check_script(&r, sc, w);
		run_free(&r);
	}
}

static enum stk_ws_ev
dec1(struct stk_ws_dec *d, uint8_t **p, uint8_t *end, struct stk_ws_out *o)
{
	memset(o, 0, sizeof(*o));
	return stk_ws_dec_next(d, p, end, o);
}

/* every chunking of s decodes to the transcript x */
static void
every_chunking(const uint8_t *s, size_t len, bool server, const struct sbuf *x, const char *what)
{
	char w[128];

	for (size_t c = 1; c <= len; c++) {
		struct run r;

		run_init(&r, server, 0, true, len);
		feed_fixed(&r, s, len, c);
		snprintf(w, sizeof(w), "%s, chunks of %zu", what, c);
		REQUIRE(!r.errored, "%s: ERROR %u", w, r.err_code);
		REQUIRE(!r.in_msg, "%s: message still open", w);
		assert_transcript(&r.t, x, w);
		run_free(&r);
	}
}

/* ================= RFC 6455 5.7 ================= */
static const uint8_t rfc_hello[] = {0x81, 0x05, 0x48, 0x65, 0x6c, 0x6c, 0x6f};
static const uint8_t rfc_hello_masked[] = {0x81, 0x85, 0x37, 0xfa, 0x21, 0x3d,
					   0x7f, 0x9f, 0x4d, 0x51, 0x58};
static const uint8_t rfc_frag[] = {0x01, 0x03, 0x48, 0x65, 0x6c, 0x80, 0x02, 0x6c, 0x6f};
static const uint8_t rfc_ping[] = {0x89, 0x05, 0x48, 0x65, 0x6c, 0x6c, 0x6f};
static const uint8_t rfc_pong_masked[] = {0x8a, 0x85, 0x37, 0xfa, 0x21, 0x3d,
					  0x7f, 0x9f, 0x4d, 0x51, 0x58};
static const uint8_t rfc_key[4] = {0x37, 0xfa, 0x21, 0x3d};
static const uint8_t rfc_hdr256[] = {0x82, 0x7e, 0x01, 0x00};
static const uint8_t rfc_hdr64k[] = {0x82, 0x7f, 0x00, 0x00, 0x00, 0x00, 0x00, 0x01, 0x00, 0x00};

START_TEST(rfc_decode)
{
	struct stk_ws_dec d;
	struct stk_ws_out o;
	uint8_t buf[16], *p, *big;
	struct sbuf x = {0};
	size_t bl = 10 + 65536;

	/* single-frame unmasked text */
	memcpy(buf, rfc_hello, sizeof(rfc_hello));
	stk_ws_dec_init(&d, false, 0, true);
	p = buf;
	ck_assert_int_eq(dec1(&d, &p, buf + 7, &o), STK_WS_DATA);
	ck_assert_uint_eq(o.opcode, OP_TEXT);
	ck_assert(o.first && o.last);
	ck_assert_uint_eq(o.len, 5);
	ck_assert(o.data == buf + 2); /* zero copy */
	ck_assert(memcmp(o.data, "Hello", 5) == 0);
	ck_assert_int_eq(dec1(&d, &p, buf + 7, &o), STK_WS_NEED_MORE);
	ck_assert(p == buf + 7);

	/* masked, to a server decoder: unmasked in place */
	memcpy(buf, rfc_hello_masked, sizeof(rfc_hello_masked));
	stk_ws_dec_init(&d, true, 0, true);
	p = buf;
	ck_assert_int_eq(dec1(&d, &p, buf + 11, &o), STK_WS_DATA);
	ck_assert(o.first && o.last && o.opcode == OP_TEXT);
	ck_assert(o.data == buf + 6 && o.len == 5);
	ck_assert(memcmp(buf + 6, "Hello", 5) == 0);
	ck_assert_int_eq(dec1(&d, &p, buf + 11, &o), STK_WS_NEED_MORE);

	/* fragmented unmasked text */
	memcpy(buf, rfc_frag, sizeof(rfc_frag));
	stk_ws_dec_init(&d, false, 0, true);
	p = buf;
	ck_assert_int_eq(dec1(&d, &p, buf + 9, &o), STK_WS_DATA);
	ck_assert(o.first && !o.last && o.opcode == OP_TEXT && o.len == 3 &&
		  memcmp(o.data, "Hel", 3) == 0);
	ck_assert_int_eq(dec1(&d, &p, buf + 9, &o), STK_WS_DATA);
	ck_assert(!o.first && o.last && o.opcode == OP_TEXT && o.len == 2 &&
		  memcmp(o.data, "lo", 2) == 0);
	ck_assert_int_eq(dec1(&d, &p, buf + 9, &o), STK_WS_NEED_MORE);

	/* unmasked ping (to a client) */
	memcpy(buf, rfc_ping, sizeof(rfc_ping));
	stk_ws_dec_init(&d, false, 0, true);
	p = buf;
	ck_assert_int_eq(dec1(&d, &p, buf + 7, &o), STK_WS_CONTROL);
	ck_assert(o.opcode == OP_PING && o.len == 5 && memcmp(o.data, "Hello", 5) == 0);
	ck_assert(p == buf + 7);

	/* masked pong (to a server) */
	memcpy(buf, rfc_pong_masked, sizeof(rfc_pong_masked));
	stk_ws_dec_init(&d, true, 0, true);
	p = buf;
	ck_assert_int_eq(dec1(&d, &p, buf + 11, &o), STK_WS_CONTROL);
	ck_assert(o.opcode == OP_PONG && o.len == 5 && memcmp(o.data, "Hello", 5) == 0);

	/* 256 bytes and 64 KiB binary, unmasked */
	big = malloc(bl);
	ck_assert(big != NULL);
	memcpy(big, rfc_hdr256, 4);
	fill_bin(big + 4, 256, 256);
	stk_ws_dec_init(&d, false, 0, true);
	p = big;
	ck_assert_int_eq(dec1(&d, &p, big + 4 + 256, &o), STK_WS_DATA);
	ck_assert(o.first && o.last && o.opcode == OP_BIN && o.len == 256 && o.data == big + 4);
	memcpy(big, rfc_hdr64k, 10);
	fill_bin(big + 10, 65536, 65536);
	stk_ws_dec_init(&d, false, 0, true);
	p = big;
	ck_assert_int_eq(dec1(&d, &p, big + bl, &o), STK_WS_DATA);
	ck_assert(o.first && o.last && o.opcode == OP_BIN && o.len == 65536 && o.data == big + 10);
	ck_assert(p == big + bl);

	/* and every chunking of the small ones */
	ts_msg(&x, OP_TEXT, "Hello", 5);
	every_chunking(rfc_hello, sizeof(rfc_hello), false, &x, "RFC Hello");
	every_chunking(rfc_hello_masked, sizeof(rfc_hello_masked), true, &x, "RFC masked Hello");
	every_chunking(rfc_frag, sizeof(rfc_frag), false, &x, "RFC Hel+lo");
	x.len = 0;
	ts_ctl(&x, OP_PING, 0, "Hello", 5);
	every_chunking(rfc_ping, sizeof(rfc_ping), false, &x, "RFC ping");
	x.len = 0;
	ts_ctl(&x, OP_PONG, 0, "Hello", 5);
	every_chunking(rfc_pong_masked, sizeof(rfc_pong_masked), true, &x, "RFC masked pong");
	x.len = 0;
	memcpy(big, rfc_hdr256, 4);
	fill_bin(big + 4, 256, 256);
	ts_msg(&x, OP_BIN, big + 4, 256);
	every_chunking(big, 4 + 256, false, &x, "RFC 256 B");
	sb_free(&x);
	free(big);
}
END_TEST

START_TEST(rfc_encode)
{
	uint8_t out[32], pl[5];
	size_t h;

	memset(out, 0xee, sizeof(out));
	h = stk_ws_hdr(out, OP_TEXT, true, 5, NULL);
	ck_assert_uint_eq(h, 2);
	ck_assert(memcmp(out, rfc_hello, 2) == 0);
	ck_assert_uint_eq(out[2], 0xee); /* nothing written past the header */

	memset(out, 0xee, sizeof(out));
	h = stk_ws_hdr(out, OP_TEXT, true, 5, rfc_key);
	ck_assert_uint_eq(h, 6);
	memcpy(out + 6, "Hello", 5);
	stk_ws_mask(out + 6, 5, rfc_key, 0);
	ck_assert(memcmp(out, rfc_hello_masked, sizeof(rfc_hello_masked)) == 0);

	h = stk_ws_hdr(out, OP_TEXT, false, 3, NULL);
	ck_assert(h == 2 && out[0] == 0x01 && out[1] == 0x03);
	h = stk_ws_hdr(out, OP_CONT, true, 2, NULL);
	ck_assert(h == 2 && out[0] == 0x80 && out[1] == 0x02);

	h = stk_ws_hdr(out, OP_PING, true, 5, NULL);
	ck_assert(h == 2 && memcmp(out, rfc_ping, 2) == 0);
	h = stk_ws_hdr(out, OP_PONG, true, 5, rfc_key);
	memcpy(pl, "Hello", 5);
	stk_ws_mask(pl, 5, rfc_key, 0);
	ck_assert(h == 6 && memcmp(out, rfc_pong_masked, 6) == 0 &&
		  memcmp(pl, rfc_pong_masked + 6, 5) == 0);

	memset(out, 0xee, sizeof(out));
	h = stk_ws_hdr(out, OP_BIN, true, 256, NULL);
	ck_assert(h == 4 && memcmp(out, rfc_hdr256, 4) == 0 && out[4] == 0xee);
	memset(out, 0xee, sizeof(out));
	h = stk_ws_hdr(out, OP_BIN, true, 65536, NULL);
	ck_assert(h == 10 && memcmp(out, rfc_hdr64k, 10) == 0 && out[10] == 0xee);

	/* the encoder agrees with the test's writer everywhere */
	{
		static const uint64_t lens[] = {0,
						1,
						2,
						124,
						125,
						126,
						127,
						128,
						255,
						256,
						1000,
						65534,
						65535,
						65536,
						65537,
						1u << 20,
						0xffffffffull,
						0x100000000ull,
						0x7fffffffffffffffull};
		static const unsigned ops[] = {OP_CONT,	 OP_TEXT, OP_BIN,
					       OP_CLOSE, OP_PING, OP_PONG};
		uint8_t key[4] = {0xde, 0xad, 0xbe, 0xef};

		for (size_t li = 0; li < sizeof(lens) / sizeof(lens[0]); li++)
			for (size_t oi = 0; oi < 6; oi++)
				for (int fin = 0; fin < 2; fin++)
					for (int m = 0; m < 2; m++) {
						struct sbuf s = {0};

						t_frame(&s, (uint8_t)((fin ? 0x80 : 0) | ops[oi]),
							lens[li], L_AUTO, m ? key : NULL, NULL, 0);
						memset(out, 0xee, sizeof(out));
						h = stk_ws_hdr(out, ops[oi], fin, lens[li],
							       m ? key : NULL);
						REQUIRE(h == s.len && memcmp(out, s.p, h) == 0,
							"header for op %u fin %d len %" PRIu64
							" mask %d",
							ops[oi], fin, lens[li], m);
						ck_assert_uint_le(h, STK_WS_MAX_HDR);
						ck_assert_uint_eq(h, stk_ws_hdr_size(lens[li], m));
						ck_assert_uint_eq(out[h], 0xee);
						sb_free(&s);
					}
	}
}
END_TEST

/* ================= lengths ================= */
START_TEST(length_encodings)
{
	static const uint64_t lens[] = {0, 1, 125, 126, 127, 65535, 65536, 1u << 20};
	static const size_t hl[] = {2, 2, 2, 4, 4, 4, 10, 10};
	static const size_t ks[] = {1000, 70000, 300000};
	uint8_t key[4] = {0x01, 0x80, 0xfe, 0x7f};

	for (size_t i = 0; i < sizeof(lens) / sizeof(lens[0]); i++) {
		for (int server = 0; server < 2; server++) {
			size_t n = (size_t)lens[i], h, tot;
			uint8_t *pl = malloc(n + 1), *fr = malloc(n + 14);
			struct stk_ws_dec d;
			struct stk_ws_out o;
			struct gbuf g;
			uint8_t *b, *p;
			struct sbuf x = {0};

			ck_assert(pl && fr);
			fill_bin(pl, n, lens[i] + 7);
			h = stk_ws_hdr(fr, OP_BIN, true, lens[i], server ? key : NULL);
			ck_assert_uint_eq(h, hl[i] + (server ? 4 : 0));
			memcpy(fr + h, pl, n);
			if (server)
				stk_ws_mask(fr + h, n, key, 0);
			tot = h + n;

			/* whole, in place */
			gb_init(&g, tot);
			b = gb_place(&g, fr, tot);
			p = b;
			stk_ws_dec_init(&d, server, 0, true);
			ck_assert_int_eq(dec1(&d, &p, b + tot, &o), STK_WS_DATA);
			ck_assert(o.first && o.last && o.opcode == OP_BIN);
			ck_assert_uint_eq(o.len, n);
			ck_assert(o.data == b + h);
			REQUIRE(n == 0 || memcmp(o.data, pl, n) == 0,
				"len %zu server %d: payload differs", n, server);
			ck_assert_int_eq(dec1(&d, &p, b + tot, &o), STK_WS_NEED_MORE);
			ck_assert(p == b + tot);
			gb_free(&g);

			/* randomly chunked */
			ts_msg(&x, OP_BIN, pl, n);
			for (uint64_t seed = 1; seed <= 3; seed++) {
				struct run r;

				run_init(&r, server, 0, true, tot);
				feed_random(&r, fr, tot, seed * 1000 + i, ks, 3);
				ck_assert(!r.errored);
				assert_transcript(&r.t, &x, "length, random chunks");
				run_free(&r);
			}
			sb_free(&x);
			free(pl);
			free(fr);
		}
	}

	/* non-minimal encodings are accepted */
	{
		struct script sc;
		uint8_t b[200];

		sc_init(&sc, false, 1);
		fill_bin(b, sizeof(b), 3);
		sc_data(&sc, OP_BIN, true, NULL, 0, L_16);
		sc_data(&sc, OP_BIN, true, b, 5, L_64);
		sc_data(&sc, OP_BIN, true, b, 126, L_64);
		sc_data(&sc, OP_TEXT, true, "x", 1, L_16);
		sc_ctl(&sc, OP_PING, "p", 1);
		every_chunking(sc.s.p, sc.s.len, false, &sc.x, "non-minimal lengths");
		sc_free(&sc);
	}
}
END_TEST

/* ================= chunked streams ================= */
static void
build_medium(struct script *sc)
{
	uint8_t b[1100];

	sc_data(sc, OP_TEXT, true, "Hello", 5, L_AUTO);
	sc_data(sc, OP_BIN, true, NULL, 0, L_AUTO);
	sc_ctl(sc, OP_PING, "Hello", 5);
	sc_data(sc, OP_TEXT, false, "Hel", 3, L_AUTO);
	sc_ctl(sc, OP_PING, "p1", 2);
	sc_data(sc, OP_CONT, true, "lo", 2, L_AUTO);
	fill_bin(b, 126, 1);
	sc_data(sc, OP_BIN, true, b, 126, L_AUTO);
	fill_text(b, 125, 2);
	sc_data(sc, OP_TEXT, true, b, 125, L_AUTO);
	/* 300 bytes in four fragments, one empty, a pong inside */
	fill_bin(b, 300, 3);
	sc_data(sc, OP_BIN, false, b, 100, L_AUTO);
	sc_ctl(sc, OP_PONG, NULL, 0);
	sc_data(sc, OP_CONT, false, NULL, 0, L_AUTO);
	sc_data(sc, OP_CONT, false, b + 100, 150, L_AUTO);
	sc_data(sc, OP_CONT, true, b + 250, 50, L_AUTO);
	/* U+1F600 over four 1-byte fragments, a ping in the middle */
	sc_data(sc, OP_TEXT, false, "\xf0", 1, L_AUTO);
	sc_data(sc, OP_CONT, false, "\x9f", 1, L_AUTO);
	sc_ctl(sc, OP_PING, "mid", 3);
	sc_data(sc, OP_CONT, false, "\x98", 1, L_AUTO);
	sc_data(sc, OP_CONT, true, "\x80", 1, L_AUTO);
	/* non-minimal length forms */
	sc_data(sc, OP_BIN, true, "0123456789", 10, L_64);
	sc_data(sc, OP_TEXT, true, "abcde", 5, L_16);
	/* empty first fragment, then all of it */
	sc_data(sc, OP_TEXT, false, NULL, 0, L_AUTO);
	sc_data(sc, OP_CONT, true, "twenty bytes of text", 20, L_AUTO);
	/* empty last fragment */
	fill_text(b, 20, 4);
	sc_data(sc, OP_TEXT, false, b, 20, L_AUTO);
	sc_data(sc, OP_CONT, true, NULL, 0, L_AUTO);
	fill_bin(b, 125, 5);
	sc_ctl(sc, OP_PING, b, 125);
	fill_bin(b, 1000, 6);
	sc_data(sc, OP_BIN, true, b, 1000, L_AUTO);
	/* an empty fragmented message */
	sc_data(sc, OP_TEXT, false, NULL, 0, L_AUTO);
	sc_data(sc, OP_CONT, true, NULL, 0, L_AUTO);
	/* text cut mid-sequence at fragment boundaries */
	fill_text(b, 200, 7);
	sc_data(sc, OP_TEXT, false, b, 77, L_AUTO);
	sc_data(sc, OP_CONT, false, b + 77, 61, L_AUTO);
	sc_ctl(sc, OP_PONG, "x", 1);
	sc_data(sc, OP_CONT, true, b + 138, 62, L_AUTO);
	sc_ctl(sc, OP_CLOSE,
	       "\x03\xe8"
	       "bye",
	       5);
}

static void
build_large(struct script *sc)
{
	size_t n = (1u << 20) + 1;
	uint8_t *b = malloc(n);

	ck_assert(b != NULL);
	fill_bin(b, 65536, 11);
	sc_data(sc, OP_BIN, true, b, 65536, L_AUTO);
	sc_ctl(sc, OP_PING, "large", 5);
	fill_text(b, 70000, 12);
	sc_data(sc, OP_TEXT, false, b, 30001, L_AUTO);
	sc_ctl(sc, OP_PONG, "in between", 10);
	sc_data(sc, OP_CONT, false, b + 30001, 39998, L_AUTO);
	sc_data(sc, OP_CONT, true, b + 69999, 1, L_AUTO);
	fill_bin(b, n, 13);
	sc_data(sc, OP_BIN, true, b, n, L_AUTO);
	sc_data(sc, OP_TEXT, true, "end", 3, L_AUTO);
	free(b);
}

START_TEST(chunked_every)
{
	for (int server = 0; server < 2; server++) {
		struct script sc;
		size_t pieces;

		sc_init(&sc, server, 0xabc + (uint64_t)server);
		build_medium(&sc);
		ck_assert_uint_gt(sc.s.len, 1500);
		pieces = script_every_chunking(&sc, server, 0, "medium");
		/* the runs' client takes the cut frames' pieces without the state machine */
		if (run_runs && !server)
			ck_assert_uint_gt(pieces, sc.s.len);
		sc_free(&sc);
	}
}
END_TEST

START_TEST(chunked_random)
{
	static const size_t ks_med[] = {1, 2, 3, 5, 8, 16, 64, 200, 1500, SIZE_MAX};
	static const size_t ks_large[] = {7, 100, 1000, 5000, 70000, SIZE_MAX};

	for (int server = 0; server < 2; server++) {
		struct script sc;

		sc_init(&sc, server, 0xdef + (uint64_t)server);
		build_medium(&sc);
		script_random_chunkings(&sc, server, 400, 1, ks_med,
					sizeof(ks_med) / sizeof(ks_med[0]), "medium");
		sc_free(&sc);

		sc_init(&sc, server, 0x1a + (uint64_t)server);
		build_large(&sc);
		script_random_chunkings(&sc, server, 8, 77, ks_large,
					sizeof(ks_large) / sizeof(ks_large[0]), "large");
		sc_free(&sc);
	}
}
END_TEST

START_TEST(whole_in_one_chunk)
{
	/* A = "Hello" at 0..6 (payload 2..6), B = 200 B binary at 7..210 (payload
	 * 11..210), C = "ab" + "cd" fragmented at 211..218 */
	static const struct {
		size_t pts[2], n;
		bool a, b;
		unsigned ndata;
	} cases[] = {
		{{0}, 0, true, true, 4},	{{1}, 1, true, true, 4},
		{{2}, 1, true, true, 4},	{{4}, 1, false, true, 5},
		{{6}, 1, false, true, 5},	{{7}, 1, true, true, 4},
		{{9}, 1, true, true, 4},	{{11}, 1, true, true, 4},
		{{12}, 1, true, false, 5},	{{210}, 1, true, false, 5},
		{{211}, 1, true, true, 4},	{{213}, 1, true, true, 4},
		{{3, 100}, 2, false, false, 6}, {{11, 211}, 2, true, true, 4},
	};
	struct script sc;
	uint8_t b[200];

	sc_init(&sc, false, 0);
	sc_data(&sc, OP_TEXT, true, "Hello", 5, L_AUTO);
	fill_bin(b, 200, 9);
	sc_data(&sc, OP_BIN, true, b, 200, L_AUTO);
	sc_data(&sc, OP_TEXT, false, "ab", 2, L_AUTO);
	sc_data(&sc, OP_CONT, true, "cd", 2, L_AUTO);
	ck_assert_uint_eq(sc.s.len, 219);
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct run r;
		char what[48];

		run_init(&r, false, 0, true, sc.s.len);
		feed_points(&r, sc.s.p, sc.s.len, cases[i].pts, cases[i].n);
		snprintf(what, sizeof(what), "case %zu", i);
		check_script(&r, &sc, what);
		REQUIRE(r.whole[0] == cases[i].a, "case %zu: Hello whole = %d", i, r.whole[0]);
		REQUIRE(r.whole[1] == cases[i].b, "case %zu: binary whole = %d", i, r.whole[1]);
		REQUIRE(!r.whole[2], "case %zu: a fragmented message came as one event", i);
		ck_assert_uint_eq(r.ndata, cases[i].ndata);
		run_free(&r);
	}
	sc_free(&sc);
}
END_TEST

/* ================= masking ================= */
START_TEST(mask_roundtrip)
{
	uint8_t orig[80], buf[96], ref[80];
	uint64_t seed = 42;

	for (int kk = 0; kk < 4; kk++) {
		uint8_t key[4];

		fill_bin(key, 4, seed++);
		if (kk == 0)
			memcpy(key, rfc_key, 4);
		for (unsigned off = 0; off < 4; off++)
			for (size_t n = 0; n <= 64; n++)
				for (size_t al = 0; al < 8; al++) {
					fill_bin(orig, n, seed++);
					memset(buf, 0x5a, sizeof(buf));
					memcpy(buf + 8 + al, orig, n);
					for (size_t i = 0; i < n; i++)
						ref[i] = orig[i] ^ key[(off + i) & 3];
					stk_ws_mask(buf + 8 + al, n, key, off);
					REQUIRE(n == 0 || memcmp(buf + 8 + al, ref, n) == 0,
						"mask off %u len %zu align %zu differs from the "
						"reference",
						off, n, al);
					for (size_t i = 0; i < 8 + al; i++)
						REQUIRE(buf[i] == 0x5a,
							"mask len %zu wrote before the start", n);
					for (size_t i = 8 + al + n; i < sizeof(buf); i++)
						REQUIRE(buf[i] == 0x5a,
							"mask len %zu wrote past the end", n);
					/* resuming at every split point equals one shot */
					for (size_t a = 0; a <= n; a++) {
						uint8_t t[80];

						memcpy(t, orig, n);
						stk_ws_mask(t, a, key, off);
						stk_ws_mask(t + a, n - a, key, (off + a) & 3);
						REQUIRE(n == 0 || memcmp(t, ref, n) == 0,
							"mask off %u len %zu split at %zu", off, n,
							a);
					}
					stk_ws_mask(buf + 8 + al, n, key, off);
					REQUIRE(n == 0 || memcmp(buf + 8 + al, orig, n) == 0,
						"mask twice is not the identity (off %u len %zu)",
						off, n);
				}
	}
}
END_TEST

START_TEST(masked_splits)
{
	struct script sc;
	uint8_t t[37], b[30];
	size_t len, pts[2];

	sc_init(&sc, true, 0x77);
	fill_text(t, sizeof(t), 21);
	sc_data(&sc, OP_TEXT, true, t, sizeof(t), L_AUTO);
	fill_bin(b, 23, 22);
	sc_ctl(&sc, OP_PING, b, 23);
	fill_bin(b, 30, 23);
	sc_data(&sc, OP_BIN, false, b, 13, L_AUTO);
	sc_ctl(&sc, OP_PONG, "pong!", 5);
	sc_data(&sc, OP_CONT, true, b + 13, 17, L_AUTO);
	sc_ctl(&sc, OP_CLOSE, "\x03\xe9", 2);
	len = sc.s.len;
	for (pts[0] = 0; pts[0] <= len; pts[0]++) {
		struct run r;

		run_init(&r, true, 0, true, len);
		feed_points(&r, sc.s.p, len, pts, 1);
		check_script(&r, &sc, "masked, one split");
		run_free(&r);
		for (pts[1] = pts[0]; pts[1] <= len; pts[1]++) {
			run_init(&r, true, 0, true, len);
			feed_points(&r, sc.s.p, len, pts, 2);
			check_script(&r, &sc, "masked, two splits");
			run_free(&r);
		}
	}
	sc_free(&sc);
}
END_TEST

/* ================= control frames ================= */
START_TEST(control_interleaved)
{
	struct stk_ws_dec d;
	struct stk_ws_out o;
	struct sbuf s = {0};
	uint8_t *p, *end, b[125];

	/* "Hel", ping "abc", "lo" in one chunk: events in wire order */
	t_frame(&s, 0x01, 3, L_AUTO, NULL, "Hel", 3);
	t_frame(&s, 0x89, 3, L_AUTO, NULL, "abc", 3);
	t_frame(&s, 0x80, 2, L_AUTO, NULL, "lo", 2);
	stk_ws_dec_init(&d, false, 0, true);
	p = s.p;
	end = s.p + s.len;
	ck_assert_int_eq(dec1(&d, &p, end, &o), STK_WS_DATA);
	ck_assert(o.first && !o.last && o.len == 3 && memcmp(o.data, "Hel", 3) == 0);
	ck_assert_int_eq(dec1(&d, &p, end, &o), STK_WS_CONTROL);
	ck_assert(o.opcode == OP_PING && o.len == 3 && memcmp(o.data, "abc", 3) == 0);
	ck_assert_int_eq(dec1(&d, &p, end, &o), STK_WS_DATA);
	ck_assert(!o.first && o.last && o.opcode == OP_TEXT && o.len == 2 &&
		  memcmp(o.data, "lo", 2) == 0);
	ck_assert_int_eq(dec1(&d, &p, end, &o), STK_WS_NEED_MORE);
	sb_free(&s);

	/* close frames: code and reason, and no code at all */
	t_frame(&s, 0x88, 5, L_AUTO, NULL,
		"\x03\xe8"
		"bye",
		5);
	t_frame(&s, 0x88, 0, L_AUTO, NULL, NULL, 0);
	stk_ws_dec_init(&d, false, 0, true);
	p = s.p;
	end = s.p + s.len;
	ck_assert_int_eq(dec1(&d, &p, end, &o), STK_WS_CONTROL);
	ck_assert(o.opcode == OP_CLOSE && o.close_code == 1000 && o.len == 5 &&
		  memcmp(o.data + 2, "bye", 3) == 0);
	ck_assert_int_eq(dec1(&d, &p, end, &o), STK_WS_CONTROL);
	ck_assert(o.opcode == OP_CLOSE && o.close_code == STK_WS_CLOSE_NO_STATUS && o.len == 0);
	sb_free(&s);

	/* 125-byte control frames (masked and not), inside a message, split at every offset */
	for (int server = 0; server < 2; server++) {
		struct script sc;

		sc_init(&sc, server, 5);
		fill_bin(b, 125, 31);
		sc_data(&sc, OP_BIN, false, "before", 6, L_AUTO);
		sc_ctl(&sc, OP_PING, b, 125);
		sc_data(&sc, OP_CONT, true, "after", 5, L_AUTO);
		b[0] = 0x0f;
		b[1] = 0xa0; /* 4000 */
		fill_text(b + 2, 123, 32);
		sc_ctl(&sc, OP_CLOSE, b, 125);
		for (size_t k = 0; k <= sc.s.len; k++) {
			struct run r;

			run_init(&r, server, 0, true, sc.s.len);
			feed_points(&r, sc.s.p, sc.s.len, &k, 1);
			check_script(&r, &sc, "control split");
			ck_assert_uint_eq(r.nctl, 2);
			run_free(&r);
		}
		sc_free(&sc);
	}
}
END_TEST

/* ================= protocol errors ================= */
/* s starts over with a valid "ok" text frame, so earlier DATA exists */
static void
start_ok(struct sbuf *s, bool server)
{
	static const uint8_t key[4] = {0xa1, 0xb2, 0xc3, 0xd4};

	s->len = 0;
	t_frame(s, 0x81, 2, L_AUTO, server ? key : NULL, "ok", 2);
}

static const uint8_t K[4] = {0x11, 0x22, 0x33, 0x44};

/* the key for the side: masked to a server, unmasked to a client */
#define SK(server) ((server) ? K : NULL)

static void
expect_err(const char *what, const struct sbuf *s, bool server, uint64_t max_msg, bool utf8,
	   uint16_t code, uint64_t bad_off, unsigned msgs_before)
{
	for (size_t c = 1; c <= s->len; c++) {
		struct run r;

		run_init(&r, server, max_msg, utf8, s->len);
		feed_fixed(&r, s->p, s->len, c);
		REQUIRE(r.errored, "%s (%s, chunks of %zu): no ERROR", what,
			server ? "server" : "client", c);
		REQUIRE(r.err_code == code,
			"%s (%s, chunks of %zu): close code %u, expected %u (%s)", what,
			server ? "server" : "client", c, r.err_code, code, r.d.err ? r.d.err : "?");
		REQUIRE(r.data_end <= bad_off,
			"%s (%s, chunks of %zu): DATA delivered up to offset %" PRIu64
			", the bad part starts at %" PRIu64,
			what, server ? "server" : "client", c, r.data_end, bad_off);
		REQUIRE(r.nmsg == msgs_before,
			"%s (%s, chunks of %zu): %u messages completed, expected %u", what,
			server ? "server" : "client", c, r.nmsg, msgs_before);
		run_free(&r);
	}
}

START_TEST(err_masking)
{
	struct sbuf s = {0};
	uint64_t at;

	/* a masked frame to a client */
	start_ok(&s, false);
	at = t_frame(&s, 0x81, 5, L_AUTO, K, "Hello", 5);
	expect_err("masked frame to a client", &s, false, 0, true, 1002, at, 1);
	start_ok(&s, false);
	at = t_frame(&s, 0x89, 2, L_AUTO, K, "hi", 2);
	expect_err("masked ping to a client", &s, false, 0, true, 1002, at, 1);
	/* an unmasked frame to a server */
	start_ok(&s, true);
	at = t_frame(&s, 0x82, 5, L_AUTO, NULL, "Hello", 5);
	expect_err("unmasked frame to a server", &s, true, 0, true, 1002, at, 1);
	start_ok(&s, true);
	at = t_frame(&s, 0x8a, 0, L_AUTO, NULL, NULL, 0);
	expect_err("unmasked pong to a server", &s, true, 0, true, 1002, at, 1);
	sb_free(&s);
}
END_TEST

START_TEST(err_rsv)
{
	static const uint8_t rsv[] = {0x40, 0x20, 0x10, 0x70};
	struct sbuf s = {0};
	uint64_t at;

	for (int server = 0; server < 2; server++)
		for (size_t i = 0; i < sizeof(rsv); i++) {
			start_ok(&s, server);
			at = t_frame(&s, 0x81 | rsv[i], 5, L_AUTO, SK(server), "Hello", 5);
			expect_err("RSV on a text frame", &s, server, 0, true, 1002, at, 1);
			start_ok(&s, server);
			at = t_frame(&s, 0x89 | rsv[i], 2, L_AUTO, SK(server), "hi", 2);
			expect_err("RSV on a ping", &s, server, 0, true, 1002, at, 1);
			/* on a continuation: "abc" may have been delivered, the message never
			 * completes */
			start_ok(&s, server);
			t_frame(&s, 0x02, 3, L_AUTO, SK(server), "abc", 3);
			at = t_frame(&s, 0x80 | rsv[i], 3, L_AUTO, SK(server), "def", 3);
			expect_err("RSV on a continuation", &s, server, 0, true, 1002, at, 1);
		}
	sb_free(&s);
}
END_TEST

START_TEST(err_opcodes)
{
	static const uint8_t ops[] = {3, 4, 5, 6, 7, 0xb, 0xc, 0xd, 0xe, 0xf};
	struct sbuf s = {0};
	uint64_t at;

	for (int server = 0; server < 2; server++)
		for (size_t i = 0; i < sizeof(ops); i++)
			for (int fin = 0; fin < 2; fin++) {
				char what[64];

				start_ok(&s, server);
				at = t_frame(&s, (uint8_t)((fin ? 0x80 : 0) | ops[i]), 3, L_AUTO,
					     SK(server), "xyz", 3);
				snprintf(what, sizeof(what), "reserved opcode 0x%x fin %d", ops[i],
					 fin);
				expect_err(what, &s, server, 0, true, 1002, at, 1);
			}
	sb_free(&s);
}
END_TEST

START_TEST(err_control)
{
	static const uint8_t cops[] = {0x8, 0x9, 0xa};
	uint8_t b[130];
	struct sbuf s = {0};
	uint64_t at;

	fill_bin(b, sizeof(b), 5);
	b[0] = 0x03;
	b[1] = 0xe8;
	for (int server = 0; server < 2; server++)
		for (size_t i = 0; i < sizeof(cops); i++) {
			/* 126 bytes (16-bit form), 127 (64-bit form) */
			start_ok(&s, server);
			at = t_frame(&s, 0x80 | cops[i], 126, L_AUTO, SK(server), b, 126);
			expect_err("control frame of 126 bytes", &s, server, 0, false, 1002, at, 1);
			start_ok(&s, server);
			at = t_frame(&s, 0x80 | cops[i], 127, L_64, SK(server), b, 127);
			expect_err("control frame of 127 bytes", &s, server, 0, false, 1002, at, 1);
			/* fragmented control frame */
			start_ok(&s, server);
			at = t_frame(&s, cops[i], 2, L_AUTO, SK(server), b, 2);
			expect_err("control frame with FIN=0", &s, server, 0, true, 1002, at, 1);
			/* ... also inside a fragmented message */
			start_ok(&s, server);
			t_frame(&s, 0x01, 3, L_AUTO, SK(server), "abc", 3);
			at = t_frame(&s, cops[i], 2, L_AUTO, SK(server), b, 2);
			expect_err("FIN=0 control inside a message", &s, server, 0, true, 1002, at,
				   1);
		}
	/* the limit itself: 125 bytes, also in a non-minimal 16-bit form, is fine */
	for (int server = 0; server < 2; server++) {
		struct sbuf x = {0};

		s.len = 0;
		t_frame(&s, 0x89, 125, L_AUTO, SK(server), b, 125);
		t_frame(&s, 0x8a, 125, L_16, SK(server), b, 125);
		ts_ctl(&x, OP_PING, 0, b, 125);
		ts_ctl(&x, OP_PONG, 0, b, 125);
		every_chunking(s.p, s.len, server, &x, "125-byte control frames");
		sb_free(&x);
	}
	sb_free(&s);
}
END_TEST

START_TEST(err_sequence)
{
	struct sbuf s = {0};
	uint64_t at;

	for (int server = 0; server < 2; server++) {
		/* continuation at the very start */
		s.len = 0;
		at = t_frame(&s, 0x80, 2, L_AUTO, SK(server), "lo", 2);
		expect_err("continuation first", &s, server, 0, true, 1002, at, 0);
		/* continuation after a complete message */
		start_ok(&s, server);
		at = t_frame(&s, 0x00, 2, L_AUTO, SK(server), "lo", 2);
		expect_err("continuation after a complete message", &s, server, 0, true, 1002, at,
			   1);
		/* continuation after a completed fragmented message */
		s.len = 0;
		t_frame(&s, 0x02, 1, L_AUTO, SK(server), "a", 1);
		t_frame(&s, 0x80, 1, L_AUTO, SK(server), "b", 1);
		at = t_frame(&s, 0x80, 1, L_AUTO, SK(server), "c", 1);
		expect_err("continuation after a fragmented message ended", &s, server, 0, true,
			   1002, at, 1);
		/* a new TEXT / BINARY inside a fragmented message */
		start_ok(&s, server);
		t_frame(&s, 0x01, 3, L_AUTO, SK(server), "Hel", 3);
		at = t_frame(&s, 0x81, 2, L_AUTO, SK(server), "lo", 2);
		expect_err("TEXT inside a fragmented message", &s, server, 0, true, 1002, at, 1);
		start_ok(&s, server);
		t_frame(&s, 0x01, 3, L_AUTO, SK(server), "Hel", 3);
		t_frame(&s, 0x89, 0, L_AUTO, SK(server), NULL, 0);
		at = t_frame(&s, 0x02, 2, L_AUTO, SK(server), "lo", 2);
		expect_err("BINARY inside a fragmented message (after a ping)", &s, server, 0, true,
			   1002, at, 1);
		/* ... also when the first fragment was empty */
		s.len = 0;
		t_frame(&s, 0x02, 0, L_AUTO, SK(server), NULL, 0);
		at = t_frame(&s, 0x82, 2, L_AUTO, SK(server), "lo", 2);
		expect_err("BINARY after an empty first fragment", &s, server, 0, true, 1002, at,
			   0);
	}
	sb_free(&s);
}
END_TEST

static bool
ref_code_ok(unsigned c)
{
	return (c >= 1000 && c <= 1003) || (c >= 1007 && c <= 1014) || (c >= 3000 && c <= 4999);
}

START_TEST(err_close)
{
	static const unsigned bad[] = {0, 999, 1004, 1005, 1006, 1015, 1016, 2999, 5000, 65535};
	static const unsigned good[] = {1000, 1001, 1002, 1003, 1007, 1008, 1009,
					1010, 1011, 1012, 1013, 1014, 3000, 4999};
	static const struct {
		const char *r;
		size_t n;
	} badr[] = {
		{"\xff", 1}, {"ok\xc3", 3}, {"\xed\xa0\x80", 3}, {"\xc0\x80", 2}, {"a\x80z", 3}};
	struct sbuf s = {0};
	uint8_t b[16];
	uint64_t at;

	for (int server = 0; server < 2; server++) {
		/* one byte of payload */
		start_ok(&s, server);
		at = t_frame(&s, 0x88, 1, L_AUTO, SK(server), "\x03", 1);
		expect_err("close with a 1-byte payload", &s, server, 0, true, 1002, at, 1);
		for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
			char what[48];

			b[0] = (uint8_t)(bad[i] >> 8);
			b[1] = (uint8_t)bad[i];
			start_ok(&s, server);
			at = t_frame(&s, 0x88, 2, L_AUTO, SK(server), b, 2);
			snprintf(what, sizeof(what), "close code %u", bad[i]);
			expect_err(what, &s, server, 0, true, 1002, at, 1);
		}
		for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
			struct sbuf x = {0};
			char what[48];

			b[0] = (uint8_t)(good[i] >> 8);
			b[1] = (uint8_t)good[i];
			memcpy(b + 2, "r\xc3\xa9", 3);
			s.len = 0;
			t_frame(&s, 0x88, 5, L_AUTO, SK(server), b, 5);
			ts_ctl(&x, OP_CLOSE, (uint16_t)good[i], b, 5);
			snprintf(what, sizeof(what), "close code %u accepted", good[i]);
			every_chunking(s.p, s.len, server, &x, what);
			sb_free(&x);
		}
		/* reasons that are not UTF-8 -> 1007 (even with check_utf8 off: close
		 * reasons are always checked) */
		for (size_t i = 0; i < sizeof(badr) / sizeof(badr[0]); i++) {
			b[0] = 0x03;
			b[1] = 0xe8;
			memcpy(b + 2, badr[i].r, badr[i].n);
			start_ok(&s, server);
			at = t_frame(&s, 0x88, 2 + badr[i].n, L_AUTO, SK(server), b, 2 + badr[i].n);
			expect_err("close reason not UTF-8", &s, server, 0, true, 1007, at, 1);
		}
	}
	sb_free(&s);
}
END_TEST

START_TEST(close_codes_all)
{
	for (unsigned c = 0; c <= 0xffff; c++) {
		uint8_t fr[4] = {0x88, 0x02, (uint8_t)(c >> 8), (uint8_t)c}, *p = fr;
		struct stk_ws_dec d;
		struct stk_ws_out o;
		enum stk_ws_ev ev;

		REQUIRE(stk_ws_close_code_valid(c) == ref_code_ok(c), "stk_ws_close_code_valid(%u)",
			c);
		stk_ws_dec_init(&d, false, 0, true);
		ev = dec1(&d, &p, fr + 4, &o);
		if (ref_code_ok(c))
			REQUIRE(ev == STK_WS_CONTROL && o.close_code == c,
				"close code %u: event %d code %u", c, ev, o.close_code);
		else
			REQUIRE(ev == STK_WS_ERROR && o.close_code == 1002,
				"close code %u: event %d code %u", c, ev, o.close_code);
	}
}
END_TEST

START_TEST(err_length)
{
	static const uint64_t tops[] = {0x8000000000000000ull, 0xffffffffffffffffull,
					0x8000000000000005ull};
	struct sbuf s = {0};
	uint8_t b[8] = "payload";
	uint64_t at;

	for (int server = 0; server < 2; server++)
		for (size_t i = 0; i < 3; i++) {
			start_ok(&s, server);
			/* the length field lies; a few payload bytes follow anyway */
			at = t_frame(&s, 0x82, tops[i], L_64, SK(server), b, 8);
			expect_err("64-bit length with the top bit set", &s, server, 0, true, 1002,
				   at, 1);
		}
	/* 2^63 - 1 is a legal length: the payload streams as non-last pieces */
	{
		struct run r;

		s.len = 0;
		t_frame(&s, 0x82, 0x7fffffffffffffffull, L_64, NULL, b, 8);
		run_init(&r, false, 0, true, s.len);
		feed_fixed(&r, s.p, s.len, 3);
		ck_assert(!r.errored);
		ck_assert(r.in_msg && r.nmsg == 0);
		ck_assert_uint_eq(r.cur.len, 8);
		ck_assert(memcmp(r.cur.p, b, 8) == 0);
		run_free(&r);
	}
	sb_free(&s);
}
END_TEST

START_TEST(err_too_big)
{
	uint8_t b[300];
	struct sbuf s = {0};
	uint64_t at;

	fill_bin(b, sizeof(b), 99);
	for (int server = 0; server < 2; server++) {
		/* single frames over the limit: no DATA for them at all */
		start_ok(&s, server);
		at = t_frame(&s, 0x82, 101, L_AUTO, SK(server), b, 101);
		expect_err("101 bytes, max_msg 100", &s, server, 100, true, 1009, at, 1);
		start_ok(&s, server);
		at = t_frame(&s, 0x82, 200, L_AUTO, SK(server), b, 200);
		expect_err("200 bytes (16-bit length), max_msg 100", &s, server, 100, true, 1009,
			   at, 1);
		start_ok(&s, server);
		at = t_frame(&s, 0x82, 1ull << 62, L_64, SK(server), b, 50);
		expect_err("2^62 bytes, max_msg 100", &s, server, 100, true, 1009, at, 1);
		start_ok(&s, server);
		at = t_frame(&s, 0x82, 0x7fffffffffffffffull, L_64, SK(server), b, 50);
		expect_err("2^63-1 bytes, max_msg 100", &s, server, 100, true, 1009, at, 1);
		/* over the limit only summed over fragments: the first fragment may
		 * have been delivered, nothing of the one that crosses the limit, the
		 * message never completes */
		start_ok(&s, server);
		t_frame(&s, 0x02, 60, L_AUTO, SK(server), b, 60);
		at = t_frame(&s, 0x80, 41, L_AUTO, SK(server), b + 60, 41);
		expect_err("60 + 41 bytes, max_msg 100", &s, server, 100, true, 1009, at, 1);
		start_ok(&s, server);
		t_frame(&s, 0x01, 40, L_AUTO, SK(server),
			"0123456789012345678901234567890123456789", 40);
		t_frame(&s, 0x89, 3, L_AUTO, SK(server), "png", 3);
		t_frame(&s, 0x00, 40, L_AUTO, SK(server),
			"0123456789012345678901234567890123456789", 40);
		at = t_frame(&s, 0x80, 21, L_AUTO, SK(server), "012345678901234567890", 21);
		expect_err("40 + ping + 40 + 21 text, max_msg 100", &s, server, 100, true, 1009, at,
			   1);
	}
	sb_free(&s);
}
END_TEST

START_TEST(max_msg_limits)
{
	uint8_t b[300];

	fill_bin(b, sizeof(b), 98);
	for (int server = 0; server < 2; server++) {
		struct script sc;

		sc_init(&sc, server, 3);
		sc_data(&sc, OP_BIN, true, b, 100, L_AUTO);
		sc_data(&sc, OP_BIN, false, b, 60, L_AUTO);
		sc_ctl(&sc, OP_PING, b, 125); /* control frames are not messages */
		sc_data(&sc, OP_CONT, true, b + 60, 40, L_AUTO);
		sc_data(&sc, OP_BIN, false, b, 99, L_AUTO); /* the sum restarts per message */
		sc_data(&sc, OP_CONT, false, NULL, 0, L_AUTO);
		sc_data(&sc, OP_CONT, true, b, 1, L_AUTO);
		sc_data(&sc, OP_BIN, true, b, 100, L_64);
		script_every_chunking(&sc, server, 100, "max_msg 100, messages of exactly 100");
		sc_free(&sc);
	}
}
END_TEST

START_TEST(err_utf8_text)
{
	struct sbuf s = {0};
	uint64_t at;

	for (int server = 0; server < 2; server++) {
		/* one frame, a bad byte inside */
		start_ok(&s, server);
		at = t_frame(&s, 0x81, 5, L_AUTO, SK(server), "Hel\xffo", 5);
		expect_err("0xFF in a text frame", &s, server, 0, true, 1007,
			   at + (server ? 6 : 2) + 3, 1);
		start_ok(&s, server);
		at = t_frame(&s, 0x81, 8, L_AUTO, SK(server), "Hello \xc0\x80", 8);
		expect_err("overlong NUL in text", &s, server, 0, true, 1007,
			   at + (server ? 6 : 2) + 6, 1);
		start_ok(&s, server);
		at = t_frame(&s, 0x81, 6, L_AUTO, SK(server), "ab\xed\xa0\x80z", 6);
		expect_err("surrogate in text", &s, server, 0, true, 1007,
			   at + (server ? 6 : 2) + 3, 1);
		/* in the second fragment */
		start_ok(&s, server);
		t_frame(&s, 0x01, 3, L_AUTO, SK(server), "Hel", 3);
		at = t_frame(&s, 0x80, 3, L_AUTO, SK(server), "l\xffo", 3);
		expect_err("0xFF in a continuation", &s, server, 0, true, 1007,
			   at + (server ? 6 : 2) + 1, 1);
		/* a sequence left open by one fragment, broken by the next */
		start_ok(&s, server);
		t_frame(&s, 0x01, 5, L_AUTO, SK(server), "abc\xe2\x82", 5);
		at = t_frame(&s, 0x80, 1, L_AUTO, SK(server), "A", 1);
		expect_err("open sequence broken by the next fragment", &s, server, 0, true, 1007,
			   at + (server ? 6 : 2), 1);
		/* truncated at the end of the message: single frame, fragmented, an empty last
		 * fragment */
		start_ok(&s, server);
		at = t_frame(&s, 0x81, 5, L_AUTO, SK(server), "abc\xe2\x82", 5);
		expect_err("sequence truncated at the message end", &s, server, 0, true, 1007,
			   s.len, 1);
		start_ok(&s, server);
		t_frame(&s, 0x01, 4, L_AUTO, SK(server), "abc\xf0", 4);
		t_frame(&s, 0x89, 1, L_AUTO, SK(server), "p", 1);
		at = t_frame(&s, 0x80, 2, L_AUTO, SK(server), "\x9f\x98", 2);
		expect_err("4-byte sequence truncated at the end of the last fragment", &s, server,
			   0, true, 1007, s.len, 1);
		start_ok(&s, server);
		t_frame(&s, 0x01, 4, L_AUTO, SK(server), "abc\xc3", 4);
		at = t_frame(&s, 0x80, 0, L_AUTO, SK(server), NULL, 0);
		expect_err("open sequence, then an empty last fragment", &s, server, 0, true, 1007,
			   s.len, 1);
	}
	sb_free(&s);
}
END_TEST

START_TEST(utf8_in_messages)
{
	for (int server = 0; server < 2; server++) {
		struct script sc;
		struct sbuf s = {0}, x = {0};
		struct run r;

		sc_init(&sc, server, 17);
		/* "café!" with é split across fragments, a ping in between */
		sc_data(&sc, OP_TEXT, false, "caf\xc3", 4, L_AUTO);
		sc_ctl(&sc, OP_PING, "between", 7);
		sc_data(&sc, OP_CONT, true, "\xa9!", 2, L_AUTO);
		/* U+20AC split 1 + 2, U+10FFFF split 3 + 1 */
		sc_data(&sc, OP_TEXT, false, "\xe2", 1, L_AUTO);
		sc_data(&sc, OP_CONT, true, "\x82\xac", 2, L_AUTO);
		sc_data(&sc, OP_TEXT, false, "\xf4\x8f\xbf", 3, L_AUTO);
		sc_data(&sc, OP_CONT, false, NULL, 0, L_AUTO);
		sc_data(&sc, OP_CONT, true, "\xbf", 1, L_AUTO);
		/* binary is not validated */
		sc_data(&sc, OP_BIN, true, "\xff\xfe\xc0\x80", 4, L_AUTO);
		script_every_chunking(&sc, server, 0, "UTF-8 across fragments");
		sc_free(&sc);

		/* check_utf8 = false: invalid text passes through */
		t_frame(&s, 0x81, 5, L_AUTO, SK(server), "Hel\xffo", 5);
		t_frame(&s, 0x81, 1, L_AUTO, SK(server), "\xc3", 1);
		ts_msg(&x, OP_TEXT, "Hel\xffo", 5);
		ts_msg(&x, OP_TEXT, "\xc3", 1);
		for (size_t c = 1; c <= s.len; c++) {
			run_init(&r, server, 0, false, s.len);
			feed_fixed(&r, s.p, s.len, c);
			REQUIRE(!r.errored, "check_utf8 off: ERROR %u", r.err_code);
			assert_transcript(&r.t, &x, "check_utf8 off");
			run_free(&r);
		}
		sb_free(&s);
		sb_free(&x);
	}
}
END_TEST

START_TEST(error_sticky)
{
	uint8_t bad[] = {0x83, 0x01, 'x'};
	uint8_t good[] = {0x81, 0x02, 'o', 'k'};
	struct stk_ws_dec d;
	struct stk_ws_out o;
	uint8_t *p;

	stk_ws_dec_init(&d, false, 0, true);
	p = bad;
	ck_assert_int_eq(dec1(&d, &p, bad + 3, &o), STK_WS_ERROR);
	ck_assert_uint_eq(o.close_code, 1002);
	ck_assert(o.reason != NULL);
	for (int i = 0; i < 5; i++) {
		uint8_t g[4];

		memcpy(g, good, 4);
		p = g;
		ck_assert_int_eq(dec1(&d, &p, g + 4, &o), STK_WS_ERROR);
		ck_assert_uint_eq(o.close_code, 1002);
		ck_assert(o.reason != NULL);
		ck_assert(p == g + 4);
		p = g;
		ck_assert_int_eq(dec1(&d, &p, g, &o), STK_WS_ERROR); /* even with nothing */
		ck_assert_uint_eq(o.close_code, 1002);
	}
	/* a fresh init decodes again */
	stk_ws_dec_init(&d, false, 0, true);
	p = good;
	ck_assert_int_eq(dec1(&d, &p, good + 4, &o), STK_WS_DATA);
	ck_assert(o.first && o.last && o.len == 2 && memcmp(o.data, "ok", 2) == 0);
}
END_TEST

/* ================= permessage-deflate: RSV1 ================= */
/* compressed (RSV1) and plain messages mixed: the bytes of a compressed text
 * message are not UTF-8 */
static void
build_pmd(struct script *sc)
{
	uint8_t z[400];

	fill_bin(z, sizeof(z), 77);
	z[3] = 0xff; /* never valid UTF-8 */
	sc_data(sc, 0x40 | OP_TEXT, true, z, 40, L_AUTO);
	sc_data(sc, OP_TEXT, true, "plain", 5, L_AUTO);
	sc_data(sc, 0x40 | OP_BIN, false, z + 40, 30, L_AUTO);
	sc_ctl(sc, OP_PING, "p", 1);
	sc_data(sc, OP_CONT, false, NULL, 0, L_AUTO);
	sc_data(sc, OP_CONT, true, z + 70, 200, L_16);
	sc_data(sc, 0x40 | OP_TEXT, false, z + 270, 3, L_AUTO);
	sc_data(sc, OP_CONT, true, z, 126, L_AUTO);
	sc_data(sc, 0x40 | OP_BIN, true, NULL, 0, L_AUTO);
	sc_data(sc, OP_BIN, true, z, 16, L_AUTO);
	sc_data(sc, 0x40 | OP_TEXT, true, z + 100, 300, L_64);
	sc_ctl(sc, OP_CLOSE, "\x03\xe8", 2);
}

START_TEST(pmd_rsv1)
{
	run_pmd = true;
	for (int server = 0; server < 2; server++) {
		struct script sc;

		sc_init(&sc, server, 0x5eed + (uint64_t)server);
		build_pmd(&sc);
		/* every chunking: the inline fast path and the state machine agree */
		script_every_chunking(&sc, server, 1000, "pmd");
		/* without the extension: 1002 at the first compressed frame */
		run_pmd = false;
		expect_err("RSV1 without the extension", &sc.s, server, 0, true, 1002, 0, 0);
		run_pmd = true;
		sc_free(&sc);
	}
	run_pmd = false;
}
END_TEST

START_TEST(pmd_rsv_errors)
{
	static const uint8_t rsv23[] = {0x20, 0x10, 0x30, 0x60, 0x50, 0x70};
	struct sbuf s = {0};
	uint64_t at;
	uint8_t b[200];

	fill_bin(b, sizeof(b), 5);
	run_pmd = true;
	for (int server = 0; server < 2; server++) {
		start_ok(&s, server);
		at = t_frame(&s, 0xc9, 2, L_AUTO, SK(server), "hi", 2);
		expect_err("RSV1 on a ping", &s, server, 0, true, 1002, at, 1);
		start_ok(&s, server);
		at = t_frame(&s, 0xc8, 2, L_AUTO, SK(server), "\x03\xe8", 2);
		expect_err("RSV1 on a close", &s, server, 0, true, 1002, at, 1);
		start_ok(&s, server);
		t_frame(&s, 0x42, 3, L_AUTO, SK(server), "abc", 3);
		at = t_frame(&s, 0xc0, 3, L_AUTO, SK(server), "def", 3);
		expect_err("RSV1 on a continuation", &s, server, 0, true, 1002, at, 1);
		start_ok(&s, server);
		t_frame(&s, 0x02, 3, L_AUTO, SK(server), "abc", 3);
		at = t_frame(&s, 0xc0, 3, L_AUTO, SK(server), "def", 3);
		expect_err("RSV1 on the continuation of a plain message", &s, server, 0, true, 1002,
			   at, 1);
		for (size_t i = 0; i < sizeof(rsv23); i++) {
			start_ok(&s, server);
			at = t_frame(&s, 0x81 | rsv23[i], 5, L_AUTO, SK(server), "Hello", 5);
			expect_err("RSV2/RSV3 with the extension", &s, server, 0, true, 1002, at,
				   1);
		}
		/* the wire size of a compressed message counts against max_msg plus
		 * deflate's worst-case expansion (100 + 100 / 16 + 64 = 170) */
		start_ok(&s, server);
		t_frame(&s, 0x41, 100, L_AUTO, SK(server), b, 100);
		at = t_frame(&s, 0x80, 71, L_AUTO, SK(server), b + 100, 71);
		expect_err("compressed 100 + 71 bytes, max_msg 100", &s, server, 100, true, 1009, at,
			   1);
		start_ok(&s, server);
		at = t_frame(&s, 0xc2, 171, L_AUTO, SK(server), b, 171);
		expect_err("compressed 171 bytes, max_msg 100", &s, server, 100, true, 1009, at, 1);
	}
	run_pmd = false;
	sb_free(&s);
}
END_TEST

static void
ws_frame_tcases(Suite *s)
{
	T_TESTS(t_tcase(s, "rfc", NULL, NULL, 30), rfc_decode, rfc_encode, length_encodings);

	T_TESTS(t_tcase(s, "chunking", NULL, NULL, 60), chunked_every, chunked_random,
		whole_in_one_chunk, masked_splits, control_interleaved, pmd_rsv1);

	T_TESTS(t_tcase(s, "mask", NULL, NULL, 30), mask_roundtrip);

	T_TESTS(t_tcase(s, "errors", NULL, NULL, 30), err_masking, err_rsv, err_opcodes,
		err_control, err_sequence, err_close, close_codes_all, err_length, err_too_big,
		max_msg_limits, err_utf8_text, utf8_in_messages, error_sticky, pmd_rsv_errors);

	/* the same decodes with stk_ws_dec_run taking runs of whole messages first */
	T_TESTS(t_tcase(s, "runs", runs_on, runs_off, 60), rfc_decode, length_encodings,
		chunked_every, chunked_random, whole_in_one_chunk, control_interleaved, pmd_rsv1,
		err_rsv, err_opcodes, err_sequence, err_length, err_too_big, max_msg_limits,
		err_utf8_text, utf8_in_messages, pmd_rsv_errors);
}

T_MAIN("ws_frame", ws_frame_tcases)
