/* SPDX-License-Identifier: BSD-3-Clause
 * test_ws_deflate.c — permessage-deflate (RFC 7692): stack/ws_deflate.c (the
 * inflater and deflater) and the negotiation of stack/ws_pmd.c through the
 * handshake functions, via stk/ws.h (L0, no DPDK). Input pieces and output
 * regions handed to the inflater end right before a PROT_NONE page.
 *
 *   rfc_examples       RFC 7692 7.2.3: "Hello" (f2 48 cd c9 c9 07 00), the
 *                      shared-context second "Hello" (f2 00 11 00 00), the
 *                      no-compression block, BFINAL (with and without a
 *                      trailing 0x00), the empty message; every input chunking
 *                      and output regions of 1..8 bytes; our deflater makes the
 *                      same bytes; the RSV1 frame header
 *   context_takeover   a repeated message shrinks with context takeover and not
 *                      with no_context_takeover; each side's flag applies to the
 *                      right direction; a shared-context message into a
 *                      resetting inflater -> 1007
 *   window_bits        8..15: our deflater's output inflates with a raw zlib
 *                      inflater of exactly that window (8 too: run-length
 *                      matches); a far back reference to an inflater that
 *                      agreed to 9 bits: 1007 in small output regions, right
 *                      bytes in one
 *   chunking           every input chunk size 1..len with output regions of 1,
 *                      2, 3, 7, 64 bytes and one region: same bytes, same
 *                      counters; whole input into regions of every size 1..300;
 *                      a fuzzer's message whose tail-taking call fills its
 *                      region (the end takes one more call)
 *   round_trips        seeded random, repetitive and text messages 0..200 KB,
 *                      both directions, cap = stk_ws_deflate_bound; cap too
 *                      small -> -ENOSPC and the stream stays in step
 *   bomb               1 GiB of zeros (6.5 MiB of fixed-Huffman matches) and
 *                      a 4 KiB bomb: 1009 with exactly max_msg bytes out and
 *                      little input read; == max_msg accepted, max_msg + 1 not
 *   corrupt            bad block type, stored length mismatch, distance too
 *                      far, a message cut inside a block -> 1007 with a
 *                      reason; errors are sticky; random bytes never crash
 *   utf8               inflated text validated across 1-byte output regions:
 *                      valid, invalid byte, truncated at the end -> 1007;
 *                      binary and check_utf8 = false are not checked
 *   decoder_inflater   compressed fragmented messages with RSV1 and pings in
 *                      between, through the decoder (stk_ws_dec_pmd) and the
 *                      inflater under random chunkings
 *   negotiation        client offer x server settings through both handshake
 *                      sides: the agreed parameters, equal on both sides
 *   client_answers     responses to an offer: accepted ones with their
 *                      parameters, and each invalid or inconsistent one -> -1
 *                      with its h->err
 *   server_offers      several offers (one or several header lines): the
 *                      first acceptable one; declined ones (unknown, duplicate,
 *                      invalid parameters); malformed lists -> -1; disabled
 *                      server -> no extension
 */
#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include <zlib.h>

#include <stk/ws.h>

#include "t_bytes.h"

#define KEY "dGhlIHNhbXBsZSBub25jZQ=="

/* kinds of test data */
enum { D_RANDOM, D_REPEAT, D_TEXT, D_ZERO };

static void
fill(uint8_t *p, size_t n, int kind, uint64_t seed)
{
	switch (kind) {
	case D_RANDOM:
		rnd_bytes(p, n, seed);
		break;
	case D_REPEAT:
		for (size_t i = 0; i < n; i++)
			p[i] = (uint8_t) "abcabcabd0123"[(i * 7 + seed) % 13];
		break;
	case D_TEXT:
		rnd_text(p, n, seed);
		break;
	default:
		memset(p, 0, n);
	}
}

/* ---- negotiated parameters ---- */
static struct stk_ws_pmd
neg_of(unsigned cbits, unsigned sbits, bool cnct, bool snct)
{
	struct stk_ws_pmd p = {.on = true,
			       .client_max_window_bits = (uint8_t)cbits,
			       .server_max_window_bits = (uint8_t)sbits,
			       .client_no_context_takeover = cnct,
			       .server_no_context_takeover = snct};
	return p;
}

static const struct stk_ws_pmd neg_default = {
	.on = true, .client_max_window_bits = 15, .server_max_window_bits = 15};

/* ---- an inflater driven piece by piece ---- */
struct inf {
	struct stk_ws_inflate z;
	struct gbuf gin, gout;
	struct sbuf got; /* the last message's bytes */
};

static void
inf_init(struct inf *f, const struct stk_ws_pmd *neg, bool server, uint64_t max_msg, bool utf8,
	 size_t cap)
{
	memset(f, 0, sizeof(*f));
	ck_assert_int_eq(stk_ws_inflate_init(&f->z, neg, server, max_msg, utf8), 0);
	gb_init(&f->gin, cap);
	gb_init(&f->gout, 1 << 16);
}

static void
inf_free(struct inf *f)
{
	stk_ws_inflate_fini(&f->z);
	gb_free(&f->gin);
	gb_free(&f->gout);
	sb_free(&f->got);
}

/* One message m[0..n) in input pieces of ic bytes, output regions of oc bytes
 * (0: one region of 64 KiB). Returns END or ERROR; f->got has the output. */
static int
inf_msg(struct inf *f, const uint8_t *m, size_t n, bool text, size_t ic, size_t oc)
{
	size_t off = 0;

	f->got.len = 0;
	if (oc == 0)
		oc = f->gout.cap;
	do {
		size_t k = n - off < ic ? n - off : ic;
		bool last = off + k == n;
		const uint8_t *in = gb_place(&f->gin, m + off, k), *ie = in + k;
		unsigned flags = (last ? STK_WS_Z_LAST : 0) | (text ? STK_WS_Z_TEXT : 0);

		for (size_t guard = 0;; guard++) {
			uint8_t *o = gb_place(&f->gout, NULL, oc), *op = o;
			const uint8_t *before = in;
			int rc;

			REQUIRE(guard < (1u << 26), "inflater loops");
			rc = stk_ws_inflate(&f->z, &in, ie, flags, &op, o + oc);
			REQUIRE(in >= before && in <= ie, "input cursor outside the piece");
			REQUIRE(op >= o && op <= o + oc, "output cursor outside the region");
			sb_put(&f->got, o, (size_t)(op - o));
			if (rc == STK_WS_Z_SPACE) {
				REQUIRE(op == o + oc, "SPACE with %td bytes of room", o + oc - op);
				continue;
			}
			if (rc == STK_WS_Z_MORE) {
				REQUIRE(!last, "MORE on the last piece");
				REQUIRE(in == ie, "MORE with input left");
				break;
			}
			if (rc == STK_WS_Z_END) {
				REQUIRE(last, "END before the last piece");
				REQUIRE(in == ie, "END with input left");
				REQUIRE(f->z.msg_out == f->got.len, "msg_out %llu, %zu bytes out",
					(unsigned long long)f->z.msg_out, f->got.len);
				return rc;
			}
			REQUIRE(rc == STK_WS_Z_ERROR, "unknown return %d", rc);
			REQUIRE(f->z.err != NULL && f->z.err_code != 0, "ERROR without a reason");
			/* sticky */
			in = gb_place(&f->gin, m, 0);
			op = o;
			REQUIRE(stk_ws_inflate(&f->z, &in, in, STK_WS_Z_LAST, &op, o + oc) ==
					STK_WS_Z_ERROR,
				"ERROR is not sticky");
			return rc;
		}
		off += k;
	} while (off < n);
	ck_abort_msg("not reached");
	return 0;
}

/* deflate a message with d, into s (payload bytes) */
static size_t
defl(struct stk_ws_deflate *d, const uint8_t *m, size_t n, struct sbuf *s)
{
	size_t cap = stk_ws_deflate_bound(d, n);
	uint8_t *out = malloc(cap);
	ssize_t k;

	REQUIRE(out != NULL, "out of memory");
	k = stk_ws_deflate(d, m, n, out, cap);
	REQUIRE(k > 0, "stk_ws_deflate(%zu bytes, cap %zu) = %zd", n, cap, k);
	REQUIRE((size_t)k <= cap, "over cap");
	s->len = 0;
	sb_put(s, out, (size_t)k);
	free(out);
	return (size_t)k;
}

/* ================= RFC 7692 7.2.3 ================= */
static const uint8_t hello[] = "Hello";
static const uint8_t rfc_hello[] = {0xf2, 0x48, 0xcd, 0xc9, 0xc9, 0x07, 0x00};
static const uint8_t rfc_hello2[] = {0xf2, 0x00, 0x11, 0x00, 0x00};
static const uint8_t rfc_stored[] = {0x00, 0x05, 0x00, 0xfa, 0xff, 0x48,
				     0x65, 0x6c, 0x6c, 0x6f, 0x00};
static const uint8_t rfc_bfinal[] = {0xf3, 0x48, 0xcd, 0xc9, 0xc9, 0x07, 0x00};
static const uint8_t rfc_bfinal0[] = {0xf3, 0x48, 0xcd, 0xc9, 0xc9, 0x07, 0x00, 0x00};
static const uint8_t rfc_empty[] = {0x00};

/* m inflates to want under every chunking, on a fresh inflater (after `pre`) */
static void
expect_msg(const uint8_t *pre, size_t pn, const uint8_t *m, size_t n, const void *want, size_t wn,
	   const char *what)
{
	for (size_t ic = 1; ic <= (n ? n : 1); ic++)
		for (size_t oc = 0; oc <= 8; oc++) {
			struct inf f;
			int rc;

			inf_init(&f, &neg_default, false, 0, true, 64);
			if (pre != NULL) {
				rc = inf_msg(&f, pre, pn, true, pn, 0);
				REQUIRE(rc == STK_WS_Z_END, "%s: the message before: %d", what, rc);
			}
			rc = inf_msg(&f, m, n, true, ic, oc);
			REQUIRE(rc == STK_WS_Z_END, "%s (pieces of %zu, out %zu): rc %d (%s)", what,
				ic, oc, rc, f.z.err ? f.z.err : "");
			REQUIRE(f.got.len == wn && (wn == 0 || memcmp(f.got.p, want, wn) == 0),
				"%s (pieces of %zu, out %zu): %zu bytes out", what, ic, oc,
				f.got.len);
			inf_free(&f);
		}
}

START_TEST(rfc_examples)
{
	struct stk_ws_deflate d;
	struct sbuf s = {0};
	uint8_t h[STK_WS_MAX_HDR];
	static const uint8_t key[4] = {1, 2, 3, 4};

	expect_msg(NULL, 0, rfc_hello, sizeof(rfc_hello), hello, 5, "Hello");
	expect_msg(rfc_hello, sizeof(rfc_hello), rfc_hello2, sizeof(rfc_hello2), hello, 5,
		   "Hello with the shared context");
	expect_msg(NULL, 0, rfc_stored, sizeof(rfc_stored), hello, 5, "no compression");
	expect_msg(NULL, 0, rfc_bfinal, sizeof(rfc_bfinal), hello, 5, "BFINAL");
	expect_msg(NULL, 0, rfc_bfinal0, sizeof(rfc_bfinal0), hello, 5, "BFINAL and 0x00");
	/* after a BFINAL message the stream starts afresh */
	expect_msg(rfc_bfinal, sizeof(rfc_bfinal), rfc_hello, sizeof(rfc_hello), hello, 5,
		   "Hello after BFINAL");
	expect_msg(NULL, 0, rfc_empty, 1, "", 0, "empty message");
	expect_msg(rfc_hello, sizeof(rfc_hello), rfc_empty, 1, "", 0, "empty message in a stream");
	expect_msg(NULL, 0, rfc_hello, 0, "", 0, "zero-byte message");

	/* our deflater: the same bytes as the RFC (zlib made them) */
	ck_assert_int_eq(stk_ws_deflate_init(&d, &neg_default, false, -1, 0), 0);
	defl(&d, hello, 5, &s);
	ck_assert_uint_eq(s.len, sizeof(rfc_hello));
	ck_assert_mem_eq(s.p, rfc_hello, sizeof(rfc_hello));
	defl(&d, hello, 5, &s);
	ck_assert_uint_eq(s.len, sizeof(rfc_hello2));
	ck_assert_mem_eq(s.p, rfc_hello2, sizeof(rfc_hello2));
	defl(&d, hello, 0, &s);
	ck_assert_uint_eq(s.len, 1);
	ck_assert_uint_eq(s.p[0], 0x00);
	ck_assert_uint_eq(d.msgs, 3);
	ck_assert_uint_eq(d.in_bytes, 10);
	ck_assert_uint_eq(d.out_bytes, sizeof(rfc_hello) + sizeof(rfc_hello2) + 1);
	stk_ws_deflate_fini(&d);
	stk_ws_deflate_fini(&d); /* twice is harmless */
	sb_free(&s);

	/* RSV1 frame headers */
	ck_assert_uint_eq(stk_ws_hdr_rsv(h, STK_WS_OP_TEXT, true, STK_WS_RSV1, 7, NULL), 2);
	ck_assert_uint_eq(h[0], 0xc1);
	ck_assert_uint_eq(h[1], 0x07);
	ck_assert_uint_eq(stk_ws_hdr_rsv(h, STK_WS_OP_BINARY, false, STK_WS_RSV1, 300, key), 8);
	ck_assert_uint_eq(h[0], 0x42);
	ck_assert_uint_eq(h[1], 0xfe);
	ck_assert_uint_eq(stk_ws_hdr_rsv(h, STK_WS_OP_CONT, true, 0, 1, NULL), 2);
	ck_assert_uint_eq(h[0], 0x80);
	ck_assert_uint_eq(stk_ws_hdr_rsv(h, STK_WS_OP_TEXT, true, 0xff, 1, NULL), 2);
	ck_assert_uint_eq(h[0], 0xf1); /* only the RSV bits of rsv */
}
END_TEST

/* ================= context takeover ================= */
START_TEST(context_takeover)
{
	uint8_t msg[600];
	struct sbuf a = {0}, b = {0};

	fill(msg, sizeof(msg), D_RANDOM, 7);
	for (int nct = 0; nct < 2; nct++)
		for (int server = 0; server < 2; server++) {
			/* our direction's flag is server_* on a server, client_* on a client */
			struct stk_ws_pmd neg = neg_of(15, 15, !server && nct, server && nct);
			struct stk_ws_deflate d;
			struct inf f;
			size_t n1, n2;

			ck_assert_int_eq(stk_ws_deflate_init(&d, &neg, server, 6, 0), 0);
			ck_assert_int_eq(d.reset_each, nct);
			/* the peer inflates with the opposite role */
			inf_init(&f, &neg, !server, 0, false, 4096);
			ck_assert_int_eq(f.z.reset_each, nct);
			n1 = defl(&d, msg, sizeof(msg), &a);
			n2 = defl(&d, msg, sizeof(msg), &b);
			if (nct) {
				REQUIRE(n1 == n2 && memcmp(a.p, b.p, n1) == 0,
					"no_context_takeover: the same message compresses "
					"differently");
			} else {
				REQUIRE(n2 < 40 && n1 > 500, "context takeover: %zu then %zu bytes",
					n1, n2);
			}
			ck_assert_int_eq(inf_msg(&f, a.p, a.len, false, 100, 0), STK_WS_Z_END);
			ck_assert_mem_eq(f.got.p, msg, sizeof(msg));
			ck_assert_int_eq(inf_msg(&f, b.p, b.len, false, 100, 0), STK_WS_Z_END);
			ck_assert_mem_eq(f.got.p, msg, sizeof(msg));
			ck_assert_uint_eq(f.z.msgs, 2);
			ck_assert_uint_eq(f.z.in_bytes, n1 + n2);
			ck_assert_uint_eq(f.z.out_bytes, 2 * sizeof(msg));
			inf_free(&f);
			if (!nct) {
				/* a resetting inflater cannot follow the shared context */
				struct stk_ws_pmd rneg = neg_of(15, 15, true, true);

				inf_init(&f, &rneg, !server, 0, false, 4096);
				ck_assert_int_eq(inf_msg(&f, a.p, a.len, false, 7, 0),
						 STK_WS_Z_END);
				ck_assert_int_eq(inf_msg(&f, b.p, b.len, false, 7, 0),
						 STK_WS_Z_ERROR);
				ck_assert_uint_eq(f.z.err_code, 1007);
				ck_assert_ptr_nonnull(f.z.zerr);
				inf_free(&f);
			}
			stk_ws_deflate_fini(&d);
		}
	/* the shared-context RFC message into a resetting inflater */
	{
		struct stk_ws_pmd rneg = neg_of(15, 15, false, true);
		struct inf f;

		inf_init(&f, &rneg, false, 0, true, 64);
		ck_assert_int_eq(inf_msg(&f, rfc_hello, sizeof(rfc_hello), true, 64, 0),
				 STK_WS_Z_END);
		ck_assert_int_eq(inf_msg(&f, rfc_hello2, sizeof(rfc_hello2), true, 64, 0),
				 STK_WS_Z_ERROR);
		ck_assert_uint_eq(f.z.err_code, 1007);
		inf_free(&f);
	}
	sb_free(&a);
	sb_free(&b);
}
END_TEST

/* ================= window bits ================= */
/* inflate with zlib directly, raw, exactly `bits` (8 allowed) */
static bool
zlib_inflates(const struct sbuf *c, unsigned bits, const uint8_t *want, size_t wn)
{
	static const uint8_t tail[4] = {0, 0, 0xff, 0xff};
	z_stream zs;
	uint8_t *buf = malloc(wn + 16), *in = malloc(c->len + 4);
	bool ok;
	int rc;

	memset(&zs, 0, sizeof(zs));
	REQUIRE(buf != NULL && in != NULL, "out of memory");
	memcpy(in, c->p, c->len);
	memcpy(in + c->len, tail, 4);
	REQUIRE(inflateInit2(&zs, -(int)bits) == Z_OK, "inflateInit2(-%u)", bits);
	zs.next_in = in;
	zs.avail_in = (uInt)c->len + 4;
	zs.next_out = buf;
	zs.avail_out = (uInt)wn + 16;
	rc = inflate(&zs, Z_SYNC_FLUSH);
	ok = (rc == Z_OK || rc == Z_BUF_ERROR) && zs.avail_in == 0 && zs.total_out == wn &&
	     memcmp(buf, want, wn) == 0;
	inflateEnd(&zs);
	free(buf);
	free(in);
	return ok;
}

START_TEST(window_bits)
{
	/* 3000 random bytes, then the first 1000 again: a match 3000 back */
	static uint8_t msg[4000];
	struct sbuf c = {0};

	fill(msg, 3000, D_RANDOM, 3);
	memcpy(msg + 3000, msg, 1000);
	for (unsigned bits = 8; bits <= 15; bits++)
		for (int server = 0; server < 2; server++) {
			struct stk_ws_pmd neg = neg_of(bits, bits, false, false);
			struct stk_ws_deflate d;
			struct inf f;

			ck_assert_int_eq(stk_ws_deflate_init(&d, &neg, server, 9, 0), 0);
			ck_assert_uint_eq(d.window_bits, bits);
			defl(&d, msg, sizeof(msg), &c);
			REQUIRE(zlib_inflates(&c, bits, msg, sizeof(msg)),
				"window %u: our output does not inflate with a %u-bit window", bits,
				bits);
			if (bits >= 12)
				REQUIRE(c.len < 3300,
					"window %u: the match was not used (%zu bytes)", bits,
					c.len);
			inf_init(&f, &neg, !server, 0, false, 8192);
			ck_assert_uint_eq(f.z.window_bits, bits < 9 ? 9 : bits);
			ck_assert_int_eq(inf_msg(&f, c.p, c.len, false, 999, 0), STK_WS_Z_END);
			ck_assert_mem_eq(f.got.p, msg, sizeof(msg));
			inf_free(&f);
			/* the repetitive kind with 8 bits: run-length matches still compress */
			if (bits == 8) {
				static uint8_t zeros[5000];

				defl(&d, zeros, sizeof(zeros), &c);
				REQUIRE(c.len < 100, "window 8: 5000 zeros in %zu bytes", c.len);
			}
			stk_ws_deflate_fini(&d);
		}
	/* a 15-bit stream with a far match, to an inflater that agreed to 9
	 * bits: 1007 when the output comes in small regions; with one region
	 * zlib can copy from it, and the bytes are right */
	{
		struct stk_ws_deflate d;
		struct stk_ws_pmd n15 = neg_of(15, 15, false, false),
				  n9 = neg_of(15, 9, false, false);
		struct inf f;

		ck_assert_int_eq(stk_ws_deflate_init(&d, &n15, true, 9, 0), 0);
		defl(&d, msg, sizeof(msg), &c);
		inf_init(&f, &n9, false, 0, false, 8192);
		ck_assert_int_eq(inf_msg(&f, c.p, c.len, false, 64, 7), STK_WS_Z_ERROR);
		ck_assert_uint_eq(f.z.err_code, 1007);
		inf_free(&f);
		inf_init(&f, &n9, false, 0, false, 8192);
		ck_assert_int_eq(inf_msg(&f, c.p, c.len, false, c.len, 0), STK_WS_Z_END);
		ck_assert_mem_eq(f.got.p, msg, sizeof(msg));
		inf_free(&f);
		stk_ws_deflate_fini(&d);
	}
	/* invalid arguments */
	{
		struct stk_ws_deflate d;
		struct stk_ws_inflate z;
		struct stk_ws_pmd off = {0}, bad = neg_of(16, 7, false, false);

		ck_assert_int_eq(stk_ws_deflate_init(&d, &off, false, -1, 0), -EINVAL);
		ck_assert_int_eq(stk_ws_deflate_init(&d, &bad, false, -1, 0), -EINVAL);
		ck_assert_int_eq(stk_ws_deflate_init(&d, &bad, true, -1, 0), -EINVAL);
		ck_assert_int_eq(stk_ws_deflate_init(&d, &neg_default, true, 10, 0), -EINVAL);
		ck_assert_int_eq(stk_ws_inflate_init(&z, &off, false, 0, false), -EINVAL);
		ck_assert_int_eq(stk_ws_inflate_init(&z, &bad, true, 0, false), -EINVAL);
		stk_ws_inflate_fini(&z);
	}
	sb_free(&c);
}
END_TEST

/* ================= chunking ================= */
START_TEST(chunking)
{
	static const size_t ocs[] = {1, 2, 3, 7, 64, 0};
	uint8_t msg[700];
	struct stk_ws_deflate d;
	struct sbuf c1 = {0}, c2 = {0};

	/* two messages: the second leans on the first (context takeover) */
	fill(msg, sizeof(msg), D_TEXT, 11);
	ck_assert_int_eq(stk_ws_deflate_init(&d, &neg_default, true, 6, 0), 0);
	defl(&d, msg, sizeof(msg), &c1);
	defl(&d, msg, sizeof(msg), &c2);
	stk_ws_deflate_fini(&d);
	for (size_t ic = 1; ic <= c1.len; ic++)
		for (size_t oi = 0; oi < sizeof(ocs) / sizeof(ocs[0]); oi++) {
			struct inf f;
			int rc;

			inf_init(&f, &neg_default, false, 0, true, c1.len);
			rc = inf_msg(&f, c1.p, c1.len, true, ic, ocs[oi]);
			REQUIRE(rc == STK_WS_Z_END && f.got.len == sizeof(msg) &&
					memcmp(f.got.p, msg, sizeof(msg)) == 0,
				"message 1, pieces of %zu, out %zu: rc %d, %zu bytes", ic, ocs[oi],
				rc, f.got.len);
			rc = inf_msg(&f, c2.p, c2.len, true, ic, ocs[oi]);
			REQUIRE(rc == STK_WS_Z_END && f.got.len == sizeof(msg) &&
					memcmp(f.got.p, msg, sizeof(msg)) == 0,
				"message 2, pieces of %zu, out %zu: rc %d, %zu bytes", ic, ocs[oi],
				rc, f.got.len);
			REQUIRE(f.z.in_bytes == c1.len + c2.len &&
					f.z.out_bytes == 2 * sizeof(msg) && f.z.msgs == 2,
				"counters");
			inf_free(&f);
		}
	/* found by fuzz_ws_inflate: the call that takes the tail fills its
	 * region exactly; the end is then one more call, which must not lose
	 * "between blocks" */
	{
		static const uint8_t fz[] = {0xec, 0xc1, 0x31, 0x01, 0x00, 0x00, 0x00, 0xc2,
					     0xa0, 0xf5, 0x4f, 0x6d, 0x0d, 0x0f, 0xa0, 0x00,
					     0x00, 0x00, 0x00, 0x2e, 0x00, 0x00, 0x00, 0x0c};
		struct stk_ws_pmd neg = neg_of(15, 15, true, false);
		struct inf f;
		size_t whole;

		inf_init(&f, &neg, true, 0, true, 64);
		ck_assert_int_eq(inf_msg(&f, fz, sizeof(fz), true, sizeof(fz), 0), STK_WS_Z_END);
		whole = f.got.len;
		ck_assert_uint_eq(whole, 7359);
		inf_free(&f);
		inf_init(&f, &neg, true, 0, true, 64);
		ck_assert_int_eq(inf_msg(&f, fz, sizeof(fz), true, sizeof(fz), 11), STK_WS_Z_END);
		ck_assert_uint_eq(f.got.len, whole);
		inf_free(&f);
	}
	/* runs of zeros (long matches), whole, into regions of every size */
	for (size_t n = 200; n <= 3000; n += 700) {
		static uint8_t run[3000];
		struct stk_ws_deflate dz;
		struct sbuf cz = {0};

		fill(run, n, D_ZERO, 0);
		ck_assert_int_eq(stk_ws_deflate_init(&dz, &neg_default, true, 9, 0), 0);
		defl(&dz, run, n, &cz);
		for (size_t oc = 1; oc <= 300; oc++) {
			struct inf f;
			int rc;

			inf_init(&f, &neg_default, false, 0, false, cz.len);
			rc = inf_msg(&f, cz.p, cz.len, false, cz.len, oc);
			REQUIRE(rc == STK_WS_Z_END && f.got.len == n,
				"%zu zeros, out %zu: rc %d (%s)", n, oc, rc,
				f.z.err ? f.z.err : "");
			inf_free(&f);
		}
		stk_ws_deflate_fini(&dz);
		sb_free(&cz);
	}
	/* the two text messages, whole, into regions of every size */
	for (size_t oc = 1; oc <= 300; oc++) {
		struct inf f;
		int rc;

		inf_init(&f, &neg_default, false, 0, true, c1.len);
		rc = inf_msg(&f, c1.p, c1.len, true, c1.len, oc);
		REQUIRE(rc == STK_WS_Z_END && f.got.len == sizeof(msg),
			"whole, out %zu: rc %d (%s)", oc, rc, f.z.err ? f.z.err : "");
		rc = inf_msg(&f, c2.p, c2.len, true, c2.len, oc);
		REQUIRE(rc == STK_WS_Z_END && f.got.len == sizeof(msg),
			"whole 2, out %zu: rc %d (%s)", oc, rc, f.z.err ? f.z.err : "");
		inf_free(&f);
	}
	sb_free(&c1);
	sb_free(&c2);
}
END_TEST

/* ================= round trips ================= */
START_TEST(round_trips)
{
	uint64_t seed = 42;
	static uint8_t msg[200000], out[260000];

	for (int cfg = 0; cfg < 4; cfg++) {
		struct stk_ws_pmd neg =
			neg_of(9 + (unsigned)cfg * 2, 15 - (unsigned)cfg, cfg & 1, cfg & 2);

		for (int server = 0; server < 2; server++) {
			struct stk_ws_deflate d;
			struct inf f;

			ck_assert_int_eq(stk_ws_deflate_init(&d, &neg, server, cfg == 3 ? 1 : -1,
							     cfg == 2 ? 4 : 0),
					 0);
			inf_init(&f, &neg, !server, 0, true, sizeof(out));
			for (int i = 0; i < 24; i++) {
				size_t n = (size_t)(rnd(&seed) % (i < 20 ? 5000 : sizeof(msg)));
				int kind = (int)(rnd(&seed) % 4);
				size_t bound = stk_ws_deflate_bound(&d, n);
				ssize_t k;
				int rc;

				fill(msg, n, kind, rnd(&seed));
				REQUIRE(bound <= sizeof(out), "bound %zu", bound);
				if (i % 5 == 4 && n > 100) {
					/* too small: -ENOSPC, nothing kept, the next try goes */
					k = stk_ws_deflate(&d, msg, n, out,
							   kind == D_RANDOM ? n / 2 : 3);
					REQUIRE(k == -ENOSPC, "cap too small: %zd", k);
				}
				k = stk_ws_deflate(&d, msg, n, out, bound);
				REQUIRE(k > 0 && (size_t)k <= bound,
					"deflate %zu bytes (kind %d): %zd", n, kind, k);
				if (kind == D_RANDOM && n > 0)
					REQUIRE((size_t)k <= n + n / 100 + 64,
						"random data: %zu bytes grew to %zd", n, k);
				rc = inf_msg(&f, out, (size_t)k, kind == D_TEXT,
					     1 + rnd(&seed) % 3000,
					     (size_t)(rnd(&seed) % 3) * 1000);
				REQUIRE(rc == STK_WS_Z_END,
					"cfg %d server %d message %d (%zu bytes, kind %d): rc %d "
					"%s",
					cfg, server, i, n, kind, rc, f.z.err ? f.z.err : "");
				REQUIRE(f.got.len == n && (n == 0 || memcmp(f.got.p, msg, n) == 0),
					"message %d differs", i);
			}
			ck_assert_uint_eq(f.z.msgs, 24);
			ck_assert_uint_eq(d.msgs, 24);
			ck_assert_uint_eq(d.in_bytes, f.z.out_bytes);
			ck_assert_uint_eq(d.out_bytes, f.z.in_bytes);
			inf_free(&f);
			stk_ws_deflate_fini(&d);
		}
	}
}
END_TEST

/* ================= bombs ================= */
struct bits {
	struct sbuf s;
	uint32_t acc;
	unsigned n;
};

/* LSB first, as DEFLATE packs */
static void
bw(struct bits *b, uint32_t v, unsigned n)
{
	for (unsigned i = 0; i < n; i++) {
		b->acc |= ((v >> i) & 1u) << b->n;
		if (++b->n == 8) {
			uint8_t c = (uint8_t)b->acc;

			sb_put(&b->s, &c, 1);
			b->acc = 0;
			b->n = 0;
		}
	}
}

/* Huffman codes go most significant bit first */
static void
bw_code(struct bits *b, uint32_t code, unsigned len)
{
	for (unsigned i = len; i-- > 0;)
		bw(b, (code >> i) & 1u, 1);
}

/* a fixed-Huffman block: one 0x00, then `matches` x (258, distance 1); then
 * the sync flush's block header, the rest of it left to the inflater */
static void
make_bomb(struct sbuf *out, uint64_t matches)
{
	struct bits b = {{0}, 0, 0};

	bw(&b, 0, 1);	      /* BFINAL 0 */
	bw(&b, 1, 2);	      /* fixed Huffman */
	bw_code(&b, 0x30, 8); /* literal 0 */
	for (uint64_t i = 0; i < matches; i++) {
		bw_code(&b, 0xc5, 8); /* length 258: symbol 285 */
		bw_code(&b, 0, 5);    /* distance 1 */
	}
	bw_code(&b, 0, 7); /* end of block */
	bw(&b, 0, 3);	   /* stored block header of the sync flush */
	if (b.n)
		bw(&b, 0, 8 - b.n);
	*out = b.s;
}

START_TEST(bomb)
{
	struct sbuf gib = {0}, small = {0};
	const uint64_t limit = 1 << 20;
	struct stk_ws_pmd neg = neg_default;
	struct inf f;

	make_bomb(&gib, (1ull << 30) / 258);
	REQUIRE(gib.len < 7u << 20, "the 1 GiB bomb is %zu bytes", gib.len);
	/* as 64 KiB frames, into 256 KiB regions */
	inf_init(&f, &neg, false, limit, false, 1 << 16);
	ck_assert_int_eq(inf_msg(&f, gib.p, gib.len, false, 1 << 16, 1 << 16), STK_WS_Z_ERROR);
	ck_assert_uint_eq(f.z.err_code, 1009);
	ck_assert_uint_eq(f.got.len, limit);
	ck_assert_uint_eq(f.z.msg_out, limit);
	ck_assert_uint_eq(f.z.out_bytes, limit);
	REQUIRE(f.z.in_bytes < 64 * 1024, "%llu compressed bytes read for 1 MiB out",
		(unsigned long long)f.z.in_bytes);
	for (size_t i = 0; i < f.got.len; i++)
		REQUIRE(f.got.p[i] == 0, "byte %zu is not 0", i);
	inf_free(&f);

	/* 4 KiB that would give ~650 KB, limit 64 KiB, 1-byte pieces */
	make_bomb(&small, 4096 * 8 / 13);
	REQUIRE(small.len <= 4100, "small bomb of %zu bytes", small.len);
	inf_init(&f, &neg, false, 65536, false, 64);
	ck_assert_int_eq(inf_msg(&f, small.p, small.len, false, 1, 4096), STK_WS_Z_ERROR);
	ck_assert_uint_eq(f.z.err_code, 1009);
	ck_assert_uint_eq(f.got.len, 65536);
	inf_free(&f);

	/* exactly at the limit: accepted; one below: too big */
	{
		uint64_t out = 1 + 258 * (uint64_t)(small.len ? 100 : 0);
		struct sbuf m = {0};

		make_bomb(&m, 100);
		/* a region of exactly the limit: one call ends the message, no room
		 * asked for at the limit */
		for (int d = -1; d <= 0; d++) {
			uint8_t *buf = malloc(out), *op = buf;
			const uint8_t *in = m.p;
			int rc;

			inf_init(&f, &neg, true, out + (uint64_t)(int64_t)d, false, 64);
			rc = stk_ws_inflate(&f.z, &in, m.p + m.len, STK_WS_Z_LAST, &op,
					    buf + out + d);
			REQUIRE(d == 0 ? rc == STK_WS_Z_END
				       : rc == STK_WS_Z_ERROR && f.z.err_code == 1009,
				"region = limit %+d: rc %d", d, rc);
			ck_assert_uint_eq((size_t)(op - buf), out + (uint64_t)(int64_t)d);
			inf_free(&f);
			free(buf);
		}
		for (int d = -1; d <= 1; d++) {
			for (size_t oc = 1; oc <= 3; oc++) {
				int rc;

				inf_init(&f, &neg, true, out + (uint64_t)(int64_t)d, false, 4096);
				rc = inf_msg(&f, m.p, m.len, false, 5, oc);
				if (d >= 0) {
					REQUIRE(rc == STK_WS_Z_END, "limit %+d: rc %d", d, rc);
					ck_assert_uint_eq(f.got.len, out);
				} else {
					REQUIRE(rc == STK_WS_Z_ERROR && f.z.err_code == 1009,
						"limit %+d: rc %d", d, rc);
					ck_assert_uint_eq(f.got.len, out - 1);
				}
				inf_free(&f);
			}
		}
		sb_free(&m);
	}
	sb_free(&gib);
	sb_free(&small);
}
END_TEST

/* ================= corrupt data ================= */
static void
expect_corrupt(const uint8_t *pre, size_t pn, const uint8_t *m, size_t n, const char *what)
{
	for (size_t ic = 1; ic <= n; ic++) {
		struct inf f;

		inf_init(&f, &neg_default, false, 0, false, 64);
		if (pre != NULL)
			ck_assert_int_eq(inf_msg(&f, pre, pn, false, pn, 0), STK_WS_Z_END);
		REQUIRE(inf_msg(&f, m, n, false, ic, 3) == STK_WS_Z_ERROR,
			"%s (pieces of %zu): no error", what, ic);
		REQUIRE(f.z.err_code == 1007, "%s: code %u (%s)", what, f.z.err_code, f.z.err);
		inf_free(&f);
	}
}

START_TEST(corrupt)
{
	static const uint8_t btype3[] = {0x07, 0x00};
	static const uint8_t stored_len[] = {0x00, 0x05, 0x00, 0xfb, 0xff, 'H',
					     'e',  'l',	 'l',  'o',  0x00};
	static const uint8_t cut[] = {0xf2, 0x48, 0xcd};
	static const uint8_t kept_tail[] = {0xf2, 0x48, 0xcd, 0xc9, 0xc9, 0x07,
					    0x00, 0x00, 0x00, 0xff, 0xff};
	uint64_t seed = 99;
	uint8_t junk[300];

	expect_corrupt(NULL, 0, btype3, sizeof(btype3), "block type 3");
	expect_corrupt(NULL, 0, stored_len, sizeof(stored_len), "stored block length mismatch");
	expect_corrupt(NULL, 0, rfc_hello2, sizeof(rfc_hello2), "distance too far back");
	expect_corrupt(NULL, 0, cut, sizeof(cut), "cut inside a block");
	expect_corrupt(NULL, 0, kept_tail, sizeof(kept_tail), "00 00 ff ff left in the payload");
	expect_corrupt(rfc_hello, sizeof(rfc_hello), btype3, sizeof(btype3),
		       "block type 3 in a stream");
	{
		struct inf f;

		inf_init(&f, &neg_default, false, 0, false, 64);
		ck_assert_int_eq(inf_msg(&f, btype3, sizeof(btype3), false, 2, 0), STK_WS_Z_ERROR);
		ck_assert_str_eq(f.z.err, "corrupt deflate data");
		ck_assert_ptr_nonnull(f.z.zerr);
		/* a later message: still the error */
		ck_assert_int_eq(inf_msg(&f, rfc_hello, sizeof(rfc_hello), false, 7, 0),
				 STK_WS_Z_ERROR);
		ck_assert_uint_eq(f.z.err_code, 1007);
		inf_free(&f);
	}
	/* random bytes: an end or an error, never more than the limit */
	for (int i = 0; i < 3000; i++) {
		size_t n = 1 + rnd(&seed) % sizeof(junk);
		struct inf f;
		int rc;

		fill(junk, n, D_RANDOM, rnd(&seed));
		if (i & 1)
			junk[0] = (uint8_t)((junk[0] & ~6u) |
					    2u); /* fixed Huffman: decodes further */
		inf_init(&f, &neg_default, i & 2, 4096, i & 4, 512);
		rc = inf_msg(&f, junk, n, i & 4, 1 + rnd(&seed) % 40, 1 + rnd(&seed) % 100);
		REQUIRE(rc == STK_WS_Z_END || rc == STK_WS_Z_ERROR, "rc %d", rc);
		REQUIRE(f.got.len <= 4096, "%zu bytes out over a 4096 limit", f.got.len);
		if (rc == STK_WS_Z_ERROR)
			REQUIRE(f.z.err_code == 1007 || f.z.err_code == 1009, "code %u",
				f.z.err_code);
		inf_free(&f);
	}
}
END_TEST

/* ================= UTF-8 of inflated text ================= */
static int
text_case(const void *m, size_t n, bool text, bool check, size_t oc, uint16_t *code)
{
	struct stk_ws_deflate d;
	struct sbuf c = {0};
	struct inf f;
	int rc;

	ck_assert_int_eq(stk_ws_deflate_init(&d, &neg_default, true, -1, 0), 0);
	defl(&d, m, n, &c);
	inf_init(&f, &neg_default, false, 0, check, 4096);
	rc = inf_msg(&f, c.p, c.len, text, 1, oc);
	*code = f.z.err_code;
	inf_free(&f);
	stk_ws_deflate_fini(&d);
	sb_free(&c);
	return rc;
}

START_TEST(utf8)
{
	static const char good[] =
		"caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x92\xb0 z\xc3\xa9ro \xe2\x82\xac\xe2\x82\xac";
	static const char bad_mid[] = "caf\xc3\xa9 \xff \xe2\x82\xac";
	static const char truncated[] = "caf\xc3\xa9 \xe2\x82";
	static const char surrogate[] = "ok \xed\xa0\x80 no";
	uint16_t code;

	for (size_t oc = 1; oc <= 5; oc++) {
		ck_assert_int_eq(text_case(good, strlen(good), true, true, oc, &code),
				 STK_WS_Z_END);
		ck_assert_int_eq(text_case(bad_mid, strlen(bad_mid), true, true, oc, &code),
				 STK_WS_Z_ERROR);
		ck_assert_uint_eq(code, 1007);
		ck_assert_int_eq(text_case(truncated, strlen(truncated), true, true, oc, &code),
				 STK_WS_Z_ERROR);
		ck_assert_uint_eq(code, 1007);
		ck_assert_int_eq(text_case(surrogate, strlen(surrogate), true, true, oc, &code),
				 STK_WS_Z_ERROR);
		ck_assert_uint_eq(code, 1007);
		/* not text, or not asked: not checked */
		ck_assert_int_eq(text_case(bad_mid, strlen(bad_mid), false, true, oc, &code),
				 STK_WS_Z_END);
		ck_assert_int_eq(text_case(truncated, strlen(truncated), true, false, oc, &code),
				 STK_WS_Z_END);
	}
	/* the state does not leak from one message into the next */
	{
		struct stk_ws_deflate d;
		struct sbuf c = {0};
		struct inf f;

		ck_assert_int_eq(stk_ws_deflate_init(&d, &neg_default, true, -1, 0), 0);
		inf_init(&f, &neg_default, false, 0, true, 4096);
		defl(&d, (const uint8_t *)good, strlen(good), &c);
		ck_assert_int_eq(inf_msg(&f, c.p, c.len, true, 3, 2), STK_WS_Z_END);
		defl(&d, (const uint8_t *)"\xe2\x82", 2, &c);
		ck_assert_int_eq(inf_msg(&f, c.p, c.len, false, 3, 2), STK_WS_Z_END); /* binary */
		defl(&d, (const uint8_t *)"\xac ok", 4, &c);
		ck_assert_int_eq(inf_msg(&f, c.p, c.len, true, 3, 2), STK_WS_Z_ERROR);
		ck_assert_uint_eq(f.z.err_code, 1007);
		ck_assert_str_eq(f.z.err, "inflated text is not valid UTF-8");
		inf_free(&f);
		stk_ws_deflate_fini(&d);
		sb_free(&c);
	}
}
END_TEST

/* ================= decoder + inflater ================= */
static void
frame(struct sbuf *s, unsigned b0, const uint8_t *p, size_t n)
{
	uint8_t h[STK_WS_MAX_HDR];
	size_t k = stk_ws_hdr_rsv(h, b0 & 0x0f, b0 & 0x80, b0 & 0x70, n, NULL);

	sb_put(s, h, k);
	sb_put(s, p, n);
}

START_TEST(decoder_inflater)
{
	static const uint8_t ping[] = "hi";
	static uint8_t m[3][3000];
	static const unsigned kind[3] = {D_TEXT, D_RANDOM, D_REPEAT};
	struct stk_ws_deflate d;
	struct sbuf wire = {0}, c = {0};
	struct gbuf g;
	uint64_t seed = 5;

	/* server side compresses: text in 3 frames with a ping inside, binary in
	 * one, repetitive text uncompressed, then repetitive compressed */
	ck_assert_int_eq(stk_ws_deflate_init(&d, &neg_default, true, -1, 0), 0);
	for (int i = 0; i < 3; i++)
		fill(m[i], sizeof(m[i]), (int)kind[i], (uint64_t)i);
	defl(&d, m[0], sizeof(m[0]), &c);
	frame(&wire, 0x40 | STK_WS_OP_TEXT, c.p, 10);
	frame(&wire, 0x89, ping, 2);
	frame(&wire, STK_WS_OP_CONT, c.p + 10, c.len - 20);
	frame(&wire, 0x80 | STK_WS_OP_CONT, c.p + c.len - 10, 10);
	defl(&d, m[1], sizeof(m[1]), &c);
	frame(&wire, 0xc0 | STK_WS_OP_BINARY, c.p, c.len);
	frame(&wire, 0x80 | STK_WS_OP_TEXT, m[2], sizeof(m[2]));
	defl(&d, m[2], sizeof(m[2]), &c);
	frame(&wire, 0xc0 | STK_WS_OP_TEXT, c.p, c.len);
	stk_ws_deflate_fini(&d);

	gb_init(&g, wire.len);
	for (int run = 0; run < 200; run++) {
		struct stk_ws_dec dec;
		struct stk_ws_inflate z;
		static uint8_t outbuf[4000];
		struct sbuf msg = {0};
		size_t off = 0, maxc = 1 + rnd(&seed) % (run < 100 ? 16 : 4000);
		unsigned done = 0, ctl = 0;
		bool z_on = false;

		stk_ws_dec_init(&dec, false, 1 << 20, true);
		stk_ws_dec_pmd(&dec, true);
		ck_assert_int_eq(stk_ws_inflate_init(&z, &neg_default, false, 1 << 20, true), 0);
		while (off < wire.len) {
			size_t k = 1 + rnd(&seed) % maxc;
			uint8_t *p, *end;
			struct stk_ws_out o;
			enum stk_ws_ev ev;

			if (k > wire.len - off)
				k = wire.len - off;
			p = gb_place(&g, wire.p + off, k);
			end = p + k;
			while ((ev = stk_ws_dec_next(&dec, &p, end, &o)) != STK_WS_NEED_MORE) {
				REQUIRE(ev != STK_WS_ERROR, "decoder error %u: %s", o.close_code,
					o.reason);
				if (ev == STK_WS_CONTROL) {
					ctl++;
					continue;
				}
				if (o.first) {
					msg.len = 0;
					z_on = o.compressed;
				}
				REQUIRE(o.compressed == z_on,
					"compressed flag changes inside a message");
				if (o.compressed) {
					const uint8_t *in = o.data;
					unsigned fl =
						(o.last ? STK_WS_Z_LAST : 0) |
						(o.opcode == STK_WS_OP_TEXT ? STK_WS_Z_TEXT : 0);
					int rc;

					do {
						uint8_t *op = outbuf;

						rc = stk_ws_inflate(&z, &in, o.data + o.len, fl,
								    &op, outbuf + sizeof(outbuf));
						sb_put(&msg, outbuf, (size_t)(op - outbuf));
					} while (rc == STK_WS_Z_SPACE);
					REQUIRE(rc == (o.last ? STK_WS_Z_END : STK_WS_Z_MORE),
						"inflate rc %d (%s)", rc, z.err ? z.err : "");
				} else {
					sb_put(&msg, o.data, o.len);
				}
				if (o.last) {
					unsigned i = done == 3 ? 2 : done;

					REQUIRE(done < 4, "too many messages");
					REQUIRE(o.compressed == (done != 2),
						"message %u: compressed %d", done, o.compressed);
					REQUIRE(msg.len == sizeof(m[i]) &&
							memcmp(msg.p, m[i], msg.len) == 0,
						"message %u differs (run %d)", done, run);
					done++;
				}
			}
			off += k;
		}
		REQUIRE(done == 4 && ctl == 1, "%u messages, %u control frames", done, ctl);
		stk_ws_inflate_fini(&z);
		sb_free(&msg);
	}
	gb_free(&g);
	sb_free(&wire);
	sb_free(&c);
}
END_TEST

/* ================= negotiation ================= */
/* the whole handshake: 1 accepted (both pmd out), or -1 from whichever side */
static int
handshake(const struct stk_ws_pmd *offer, const struct stk_ws_pmd *cfg, struct stk_ws_pmd *cpmd,
	  struct stk_ws_pmd *spmd, char *resp, size_t rcap)
{
	static struct stk_ws_hs c, s;
	char req[2048];
	size_t used;
	int n;

	n = stk_ws_client_request_pmd(&c, req, sizeof(req), "h", "/", KEY, NULL, NULL, offer);
	if (n < 0)
		return -2;
	stk_ws_server_init(&s, cfg);
	if (stk_ws_server_request(&s, (const uint8_t *)req, (size_t)n, &used) != 1)
		return -1;
	n = stk_ws_server_response(&s, resp, rcap, NULL);
	REQUIRE(n > 0, "server response");
	*spmd = s.pmd;
	if (stk_ws_client_response(&c, (const uint8_t *)resp, (size_t)n, &used) != 1)
		return -1;
	*cpmd = c.pmd;
	return 1;
}

struct pmdv {
	unsigned cm, sm; /* window bits */
	bool cn, sn;	 /* no_context_takeover */
};
#define OFF 99 /* no offer / server disabled / nothing agreed */

static struct stk_ws_pmd
mk(const struct pmdv *v)
{
	struct stk_ws_pmd p = {0};

	if (v->cm == OFF)
		return p;
	p.on = true;
	p.client_max_window_bits = (uint8_t)v->cm;
	p.server_max_window_bits = (uint8_t)v->sm;
	p.client_no_context_takeover = v->cn;
	p.server_no_context_takeover = v->sn;
	return p;
}

/* case i of a table: what side agreed on is want */
static void
pmd_is(size_t i, const char *side, const struct stk_ws_pmd *got, const struct stk_ws_pmd *want)
{
	REQUIRE(memcmp(got, want, sizeof(*want)) == 0, "case %zu: %s agreed on %d %u %u %d %d", i,
		side, got->on, got->client_max_window_bits, got->server_max_window_bits,
		got->client_no_context_takeover, got->server_no_context_takeover);
}

START_TEST(negotiation)
{
	static const struct {
		struct pmdv offer, cfg, want;
		const char *line; /* in the 101, NULL = none */
	} t[] = {
		/* no offer / server off */
		{{OFF}, {0, 0, false, false}, {OFF}, NULL},
		{{0, 0, false, false}, {OFF}, {OFF}, NULL},
		/* defaults */
		{{0, 0, false, false},
		 {0, 0, false, false},
		 {15, 15, false, false},
		 "permessage-deflate\r\n"},
		/* the server's wishes */
		{{0, 0, false, false},
		 {10, 12, true, true},
		 {10, 12, true, true},
		 "permessage-deflate; server_no_context_takeover; client_no_context_takeover; "
		 "server_max_window_bits=12; client_max_window_bits=10\r\n"},
		/* the client's wishes */
		{{12, 9, true, true},
		 {0, 0, false, false},
		 {12, 9, true, true},
		 "permessage-deflate; server_no_context_takeover; client_no_context_takeover; "
		 "server_max_window_bits=9; client_max_window_bits=12\r\n"},
		/* both: the smaller windows */
		{{12, 9, false, false},
		 {10, 11, false, false},
		 {10, 9, false, false},
		 "permessage-deflate; server_max_window_bits=9; client_max_window_bits=10\r\n"},
		{{9, 14, false, false},
		 {10, 11, false, false},
		 {9, 11, false, false},
		 "permessage-deflate; server_max_window_bits=11; client_max_window_bits=9\r\n"},
		/* 8 bits: agreed (our compressor runs with run-length matches) */
		{{8, 8, false, false},
		 {0, 0, false, false},
		 {8, 8, false, false},
		 "permessage-deflate; server_max_window_bits=8; client_max_window_bits=8\r\n"},
		/* 15 asked for is stated back */
		{{15, 15, false, false},
		 {0, 15, false, false},
		 {15, 15, false, false},
		 "permessage-deflate; server_max_window_bits=15\r\n"},
	};
	char resp[1024];

	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		struct stk_ws_pmd offer = mk(&t[i].offer), cfg = mk(&t[i].cfg),
				  want = mk(&t[i].want), cp, sp;
		char *ext;

		REQUIRE(handshake(&offer, &cfg, &cp, &sp, resp, sizeof(resp)) == 1,
			"case %zu: handshake failed", i);
		pmd_is(i, "client", &cp, &want);
		pmd_is(i, "server", &sp, &want);
		ext = strstr(resp, "Sec-WebSocket-Extensions: ");
		if (t[i].line == NULL) {
			REQUIRE(ext == NULL, "case %zu: an extension line", i);
		} else {
			REQUIRE(ext != NULL, "case %zu: no extension line", i);
			ext += strlen("Sec-WebSocket-Extensions: ");
			REQUIRE(strncmp(ext, t[i].line, strlen(t[i].line)) == 0, "case %zu: %s", i,
				ext);
		}
	}
	/* the offer line itself */
	{
		static struct stk_ws_hs c;
		struct stk_ws_pmd o = {.on = true,
				       .client_max_window_bits = 10,
				       .server_max_window_bits = 12,
				       .client_no_context_takeover = true,
				       .server_no_context_takeover = true};
		char req[1024];

		ck_assert_int_gt(stk_ws_client_request_pmd(&c, req, sizeof(req), "h", "/", KEY,
							   NULL, NULL, &o),
				 0);
		ck_assert_ptr_nonnull(
			strstr(req, "\r\nSec-WebSocket-Extensions: permessage-deflate; "
				    "client_max_window_bits=10; server_max_window_bits=12; "
				    "client_no_context_takeover; server_no_context_takeover\r\n"));
		o = (struct stk_ws_pmd){.on = true};
		ck_assert_int_gt(stk_ws_client_request_pmd(&c, req, sizeof(req), "h", "/", KEY,
							   NULL, NULL, &o),
				 0);
		ck_assert_ptr_nonnull(
			strstr(req, "\r\nSec-WebSocket-Extensions: permessage-deflate; "
				    "client_max_window_bits\r\n"));
		o.on = false;
		ck_assert_int_gt(stk_ws_client_request_pmd(&c, req, sizeof(req), "h", "/", KEY,
							   NULL, NULL, &o),
				 0);
		ck_assert_ptr_null(strstr(req, "Extensions"));
		ck_assert_int_gt(
			stk_ws_client_request(&c, req, sizeof(req), "h", "/", KEY, NULL, NULL), 0);
		ck_assert_ptr_null(strstr(req, "Extensions"));
		o = (struct stk_ws_pmd){.on = true, .client_max_window_bits = 7};
		ck_assert_int_eq(stk_ws_client_request_pmd(&c, req, sizeof(req), "h", "/", KEY,
							   NULL, NULL, &o),
				 -1);
		o = (struct stk_ws_pmd){.on = true, .server_max_window_bits = 16};
		ck_assert_int_eq(stk_ws_client_request_pmd(&c, req, sizeof(req), "h", "/", KEY,
							   NULL, NULL, &o),
				 -1);
	}
}
END_TEST

/* a response with extension lines `ext` ("...\r\n" lines) to an offer */
static int
answer(const struct stk_ws_pmd *offer, const char *ext, struct stk_ws_hs *c)
{
	char req[1024], resp[2048];
	size_t used;
	int n;

	ck_assert_int_gt(
		stk_ws_client_request_pmd(c, req, sizeof(req), "h", "/", KEY, NULL, NULL, offer),
		0);
	n = snprintf(
		resp, sizeof(resp),
		"HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
		"Sec-WebSocket-Accept: s3pPLMBiTxaQ9kYGzzhZRbK+xOo=\r\n%s\r\n",
		ext);
	return stk_ws_client_response(c, (const uint8_t *)resp, (size_t)n, &used);
}

START_TEST(client_answers)
{
	static const struct {
		struct pmdv offer;
		const char *ext;
		struct pmdv want; /* cm == 0: must fail */
		const char *err;
	} t[] = {
		{{0, 0, false, false}, "", {OFF}, NULL},
		{{0, 0, false, false},
		 "Sec-WebSocket-Extensions: permessage-deflate\r\n",
		 {15, 15, false, false}},
		{{0, 0, false, false},
		 "Sec-WebSocket-Extensions: Permessage-Deflate ; Server_No_Context_Takeover\r\n",
		 {15, 15, false, true}},
		{{0, 0, false, false},
		 "Sec-WebSocket-Extensions: permessage-deflate; "
		 "client_max_window_bits=\"9\";server_max_window_bits=8\r\n",
		 {9, 8, false, false}},
		{{11, 0, true, false},
		 "Sec-WebSocket-Extensions: permessage-deflate\r\n",
		 {11, 15, true, false}},
		{{0, 12, false, true},
		 "Sec-WebSocket-Extensions: permessage-deflate; server_no_context_takeover; "
		 "server_max_window_bits=12\r\n",
		 {15, 12, false, true}},
		{{0, 0, false, false},
		 "Sec-WebSocket-Extensions: ,\r\nSec-WebSocket-Extensions: permessage-deflate\r\n",
		 {15, 15, false, false}},
		/* failures */
		{{OFF},
		 "Sec-WebSocket-Extensions: permessage-deflate\r\n",
		 {0},
		 "the server chose an extension we did not offer"},
		{{0, 0, false, false},
		 "Sec-WebSocket-Extensions: x-webkit-deflate-frame\r\n",
		 {0},
		 "the server chose an extension we did not offer"},
		{{0, 0, false, false},
		 "Sec-WebSocket-Extensions: permessage-deflate, permessage-deflate\r\n",
		 {0},
		 "more than one extension in the response"},
		{{0, 0, false, false},
		 "Sec-WebSocket-Extensions: permessage-deflate\r\nSec-WebSocket-Extensions: "
		 "permessage-deflate\r\n",
		 {0},
		 "more than one extension in the response"},
		{{0, 0, false, false},
		 "Sec-WebSocket-Extensions: permessage-deflate; server_no_context_takeover; "
		 "server_no_context_takeover\r\n",
		 {0},
		 "duplicate permessage-deflate parameter in the response"},
		{{0, 0, false, false},
		 "Sec-WebSocket-Extensions: permessage-deflate; x=1\r\n",
		 {0},
		 "unknown permessage-deflate parameter in the response"},
		{{0, 0, false, false},
		 "Sec-WebSocket-Extensions: permessage-deflate; client_no_context_takeover=1\r\n",
		 {0},
		 "*_no_context_takeover with a value in the response"},
		{{0, 0, false, false},
		 "Sec-WebSocket-Extensions: permessage-deflate; server_max_window_bits\r\n",
		 {0},
		 "invalid server_max_window_bits in the response"},
		{{0, 0, false, false},
		 "Sec-WebSocket-Extensions: permessage-deflate; server_max_window_bits=7\r\n",
		 {0},
		 "invalid server_max_window_bits in the response"},
		{{0, 0, false, false},
		 "Sec-WebSocket-Extensions: permessage-deflate; server_max_window_bits=16\r\n",
		 {0},
		 "invalid server_max_window_bits in the response"},
		{{0, 0, false, false},
		 "Sec-WebSocket-Extensions: permessage-deflate; server_max_window_bits=09\r\n",
		 {0},
		 "invalid server_max_window_bits in the response"},
		{{0, 10, false, false},
		 "Sec-WebSocket-Extensions: permessage-deflate; server_max_window_bits=11\r\n",
		 {0},
		 "server_max_window_bits above the value we offered"},
		{{0, 0, false, false},
		 "Sec-WebSocket-Extensions: permessage-deflate; client_max_window_bits\r\n",
		 {0},
		 "invalid client_max_window_bits in the response"},
		{{10, 0, false, false},
		 "Sec-WebSocket-Extensions: permessage-deflate; client_max_window_bits=12\r\n",
		 {0},
		 "client_max_window_bits above the value we offered"},
		{{0, 10, false, false},
		 "Sec-WebSocket-Extensions: permessage-deflate\r\n",
		 {0},
		 "server_max_window_bits offered but missing in the response"},
		{{0, 0, false, true},
		 "Sec-WebSocket-Extensions: permessage-deflate\r\n",
		 {0},
		 "server_no_context_takeover offered but missing in the response"},
		{{0, 0, false, false},
		 "Sec-WebSocket-Extensions: permessage-deflate; \xff\r\n",
		 {0},
		 "malformed Sec-WebSocket-Extensions in the response"},
		{{0, 0, false, false},
		 "Sec-WebSocket-Extensions: permessage-deflate;\r\n",
		 {0},
		 "malformed Sec-WebSocket-Extensions in the response"},
		{{0, 0, false, false},
		 "Sec-WebSocket-Extensions: permessage-deflate; server_max_window_bits=\"10\r\n",
		 {0},
		 "malformed Sec-WebSocket-Extensions in the response"},
		{{0, 0, false, false},
		 "Sec-WebSocket-Extensions: permessage-deflate x\r\n",
		 {0},
		 "malformed Sec-WebSocket-Extensions in the response"},
	};
	static struct stk_ws_hs c;

	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		struct stk_ws_pmd offer = mk(&t[i].offer);
		int rc = answer(&offer, t[i].ext, &c);

		if (t[i].err == NULL) {
			struct stk_ws_pmd want = mk(&t[i].want);

			REQUIRE(rc == 1, "case %zu: %d (%s)", i, rc, c.err ? c.err : "");
			pmd_is(i, "client", &c.pmd, &want);
		} else {
			REQUIRE(rc == -1, "case %zu: accepted", i);
			REQUIRE(c.err != NULL && strcmp(c.err, t[i].err) == 0,
				"case %zu: err \"%s\"", i, c.err ? c.err : "");
			REQUIRE(!c.pmd.on, "case %zu: pmd on after a failure", i);
		}
	}
}
END_TEST

static int
offers(const struct stk_ws_pmd *cfg, const char *ext, struct stk_ws_hs *s, char *resp, size_t rcap)
{
	char req[2048];
	size_t used;
	int n = snprintf(
		req, sizeof(req),
		"GET / HTTP/1.1\r\nHost: h\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
		"Sec-WebSocket-Key: " KEY "\r\nSec-WebSocket-Version: 13\r\n%s\r\n",
		ext);
	int rc;

	stk_ws_server_init(s, cfg);
	rc = stk_ws_server_request(s, (const uint8_t *)req, (size_t)n, &used);
	if (rc == 1)
		REQUIRE(stk_ws_server_response(s, resp, rcap, NULL) > 0, "response");
	return rc;
}

START_TEST(server_offers)
{
	static const struct {
		const char *ext;
		struct pmdv want; /* OFF: declined */
		const char *err;  /* the request fails */
	} t[] = {
		{"", {OFF}},
		{"Sec-WebSocket-Extensions: permessage-deflate\r\n", {15, 15, false, false}},
		{"Sec-WebSocket-Extensions: x-foo; a=1; b=\"two\", permessage-deflate; "
		 "client_max_window_bits\r\n",
		 {15, 15, false, false}},
		/* the first acceptable one */
		{"Sec-WebSocket-Extensions: permessage-deflate; server_max_window_bits=9; x=1, "
		 "permessage-deflate; server_max_window_bits=10\r\n",
		 {15, 10, false, false}},
		{"Sec-WebSocket-Extensions: permessage-deflate; client_max_window_bits=9; "
		 "client_max_window_bits=9\r\n"
		 "Sec-WebSocket-Extensions: permessage-deflate; client_max_window_bits=11\r\n",
		 {11, 15, false, false}},
		{"Sec-WebSocket-Extensions: permessage-deflate; server_max_window_bits\r\n"
		 "Sec-WebSocket-Extensions: permessage-deflate; server_no_context_takeover=yes, "
		 "permessage-deflate; server_max_window_bits=\"8\"; client_no_context_takeover\r\n",
		 {15, 8, true, false}},
		/* all declined */
		{"Sec-WebSocket-Extensions: permessage-deflate; server_max_window_bits=16, "
		 "permessage-deflate; "
		 "client_max_window_bits=0, permessage-deflate; c=1, x-foo\r\n",
		 {OFF}},
		/* malformed: the request fails */
		{"Sec-WebSocket-Extensions: permessage-deflate; \xff\r\n",
		 {OFF},
		 "malformed Sec-WebSocket-Extensions"},
		{"Sec-WebSocket-Extensions: permessage-deflate\r\nSec-WebSocket-Extensions: "
		 "a;;b\r\n",
		 {OFF},
		 "malformed Sec-WebSocket-Extensions"},
		{"Sec-WebSocket-Extensions: x=\r\n", {OFF}, "malformed Sec-WebSocket-Extensions"},
		{"Sec-WebSocket-Extensions: a; b=\"c d\"\r\n",
		 {OFF},
		 "malformed Sec-WebSocket-Extensions"},
		{"Sec-WebSocket-Extensions: a\r\nSec-WebSocket-Extensions: "
		 "a\r\nSec-WebSocket-Extensions: a\r\n"
		 "Sec-WebSocket-Extensions: a\r\nSec-WebSocket-Extensions: "
		 "a\r\nSec-WebSocket-Extensions: a\r\n"
		 "Sec-WebSocket-Extensions: a\r\nSec-WebSocket-Extensions: "
		 "a\r\nSec-WebSocket-Extensions: a\r\n",
		 {OFF},
		 "too many Sec-WebSocket-Extensions lines"},
	};
	static struct stk_ws_hs s;
	struct stk_ws_pmd cfg = {.on = true};
	char resp[1024];

	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		int rc = offers(&cfg, t[i].ext, &s, resp, sizeof(resp));

		if (t[i].err != NULL) {
			REQUIRE(rc == -1 && s.err != NULL && strcmp(s.err, t[i].err) == 0,
				"case %zu: %d \"%s\"", i, rc, s.err ? s.err : "");
			continue;
		}
		{
			struct stk_ws_pmd want = mk(&t[i].want);

			REQUIRE(rc == 1, "case %zu: %d (%s)", i, rc, s.err ? s.err : "");
			pmd_is(i, "server", &s.pmd, &want);
			REQUIRE((strstr(resp, "Sec-WebSocket-Extensions") != NULL) == want.on,
				"case %zu: response line", i);
		}
	}
	/* a server that is not enabled (or zeroed) accepts none */
	cfg.on = false;
	ck_assert_int_eq(offers(&cfg, "Sec-WebSocket-Extensions: permessage-deflate\r\n", &s, resp,
				sizeof(resp)),
			 1);
	ck_assert(!s.pmd.on);
	ck_assert_ptr_null(strstr(resp, "Extensions"));
	ck_assert_int_eq(offers(NULL, "Sec-WebSocket-Extensions: permessage-deflate\r\n", &s, resp,
				sizeof(resp)),
			 1);
	ck_assert(!s.pmd.on);
	/* settings out of range: none either */
	cfg = (struct stk_ws_pmd){.on = true, .server_max_window_bits = 7};
	ck_assert_int_eq(offers(&cfg, "Sec-WebSocket-Extensions: permessage-deflate\r\n", &s, resp,
				sizeof(resp)),
			 1);
	ck_assert(!s.pmd.on);
}
END_TEST

static void
ws_deflate_tcases(Suite *s)
{
	T_TESTS(t_tcase(s, "data", NULL, NULL, 120), rfc_examples, context_takeover, window_bits,
		chunking, round_trips, bomb, corrupt, utf8, decoder_inflater);

	T_TESTS(t_tcase(s, "negotiation", NULL, NULL, 30), negotiation, client_answers,
		server_offers);
}

T_MAIN("ws_deflate", ws_deflate_tcases)
