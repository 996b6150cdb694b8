/* SPDX-License-Identifier: BSD-3-Clause
 * fuzz_tls_fast.c — stack/tls_fast.c's receive fast path (stk_tls_fast_start,
 * stk_tls_recv: records decrypted with EVP AEAD straight into lent buffers)
 * on a real session whose records the input writes and then damages.
 *
 * Each input runs a handshake between a client and a server session of one of
 * the six fast-path suites (TLS 1.3 AES-128/256-GCM, ChaCha20-Poly1305; TLS
 * 1.2 ECDHE-ECDSA with the same three), arms the client's fast path (at once,
 * or after the first plaintext came on OpenSSL's path), then plays a program:
 *
 *   byte 0            suite (% 6), bit 3: arm after the first delivery
 *   FUZZ_NCHUNK bytes chunk plan for what reaches the client
 *   ops, one byte each, then their arguments:
 *     % 8 == 0  the server writes 1 + a * 64 + b bytes (a, b: the next bytes;
 *               the plaintext is a counter pattern)
 *     % 8 == 1  TLS 1.3: the server sends a KeyUpdate (bit 3: request ours)
 *     % 8 == 2  TLS 1.3: the server sends a NewSessionTicket
 *     % 8 == 3  flip bits: the pending ciphertext's byte at offset a * 256 + b
 *               (modulo its length) ^= c (c != 0)
 *     % 8 == 4  cut: drop the last a + 1 bytes of the pending ciphertext
 *     % 8 == 5  forge: append the next a % 32 input bytes to the ciphertext
 *     % 8 == 6  deliver what is pending to the client, cut by the plan
 *     % 8 == 7  the server's close_notify
 *   what is pending at the end is delivered.
 *
 * Invariants: the plaintext the client delivers is always a prefix of what
 * the server wrote (nothing unauthenticated, nothing twice, nothing out of
 * order), whatever was damaged; every lent buffer comes back (delivered or
 * discarded) with at most its capacity; a failed session has a reason and
 * stays failed; undamaged, everything arrives and the session does not fail.
 * Seeds: tests/fuzz/tls_fast/. */
#include <unistd.h>

#include <stk/tls.h>

#include "fuzz_common.h"
#include "../stack/tls_certs.h"

#define TF_MAX_OPS 64
#define TF_MAX_PLAIN (1u << 20)

struct tf_suite {
	uint16_t v;
	const char *ciphers, *suites;
};

static const struct tf_suite tf_suites[] = {
	{ STK_TLS_V13, NULL, "TLS_AES_128_GCM_SHA256" },
	{ STK_TLS_V13, NULL, "TLS_AES_256_GCM_SHA384" },
	{ STK_TLS_V13, NULL, "TLS_CHACHA20_POLY1305_SHA256" },
	{ STK_TLS_V12, "ECDHE-ECDSA-AES128-GCM-SHA256", NULL },
	{ STK_TLS_V12, "ECDHE-ECDSA-AES256-GCM-SHA384", NULL },
	{ STK_TLS_V12, "ECDHE-ECDSA-CHACHA20-POLY1305", NULL },
};

static struct tls_certs pki;
static struct stk_tls_ctx *ctxs[6][2]; /* [suite][server] */

static void
pki_remove(void)
{
	for (unsigned i = 0; i < 6; i++)
		for (unsigned s = 0; s < 2; s++)
			stk_tls_ctx_free(ctxs[i][s]);
	tls_certs_remove(&pki);
}

struct tf_bytes {
	uint8_t *p;
	size_t n, cap;
};

static void
tf_add(struct tf_bytes *b, const uint8_t *p, size_t n)
{
	fuzz_grow(&b->p, &b->cap, b->n + n);
	memcpy(b->p + b->n, p, n);
	b->n += n;
}

struct tf_end {
	struct stk_tls *t;
	struct tf_bytes out;   /* ciphertext it sent, not yet delivered */
	struct tf_bytes plain; /* server: plaintext written; client: delivered */
	unsigned gets, delivers, discards;
};

struct tf_buf {
	size_t cap;
	uint8_t p[];
};

static void *
tf_get(void *user, uint8_t **p, size_t *cap)
{
	struct tf_end *e = user;
	size_t n = STK_TLS_FAST_MIN_BUF + (e->gets * 977u) % 17000u;
	struct tf_buf *b = fuzz_xmalloc(sizeof(*b) + n);

	b->cap = n;
	*p = b->p;
	*cap = n;
	e->gets++;
	return b;
}

static void
tf_deliver(void *user, void *buf, size_t n)
{
	struct tf_end *e = user;
	struct tf_buf *b = buf;

	FUZZ_CHECK(n > 0 && n <= b->cap);
	tf_add(&e->plain, b->p, n);
	e->delivers++;
	free(b);
}

static void
tf_discard(void *user, void *buf)
{
	struct tf_end *e = user;

	e->discards++;
	free(buf);
}

static const struct stk_tls_rx_ops tf_rx_ops = { .get = tf_get, .deliver = tf_deliver, .discard = tf_discard };

static int
tf_tx(void *user, const uint8_t *p, size_t n)
{
	tf_add(&((struct tf_end *)user)->out, p, n);
	return 0;
}

static const struct stk_tls_ops tf_ops = { .tx = tf_tx };

/* ciphertext from `from` into `to`, cut by the plan; the client's
 * fast path (or its OpenSSL reads before it is armed) after each chunk */
static void
tf_pass(struct tf_end *from, struct tf_end *to, struct fuzz_chunks *ch, bool client, bool arm_late)
{
	size_t off = 0;

	while (off < from->out.n) {
		size_t k = ch != NULL ? fuzz_chunk_next(ch, from->out.n - off) : from->out.n - off;
		uint8_t *chunk = fuzz_dup(from->out.p + off, k);
		int r = stk_tls_input(to->t, chunk, k);

		off += k;
		if (r != STK_TLS_FAILED && client && stk_tls_fast_armed(to->t)) {
			r = stk_tls_recv(to->t);
			FUZZ_CHECK(r == STK_TLS_AGAIN || r == STK_TLS_CLOSED || r == STK_TLS_FAILED);
		} else if (r != STK_TLS_FAILED && stk_tls_is_open(to->t)) {
			for (;;) {
				uint8_t buf[4096];
				ssize_t got = stk_tls_read(to->t, buf, sizeof(buf));

				if (got <= 0)
					break;
				tf_add(&to->plain, buf, (size_t)got);
				if (client && arm_late) {
					FUZZ_CHECK(stk_tls_fast_start(to->t, &tf_rx_ops, to) == 0);
					r = stk_tls_recv(to->t);
					FUZZ_CHECK(r == STK_TLS_AGAIN || r == STK_TLS_CLOSED || r == STK_TLS_FAILED);
					break;
				}
			}
		}
		memset(chunk, 0xa5, k); /* the borrow is over */
		free(chunk);
	}
	from->out.n = 0;
}

static void
tf_free(struct tf_end *e)
{
	stk_tls_free(e->t);
	free(e->out.p);
	free(e->plain.p);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fuzz_chunks ch = { { 0 }, 0 };
	struct tf_end c = { 0 }, s = { 0 };
	const struct tf_suite *su;
	unsigned si, ops = 0;
	bool arm_late, damaged = false, closed = false;
	char err[256];

	if (size < 1 + FUZZ_NCHUNK)
		return 0;
	FUZZ_CHECK(tls_certs_once(&pki, "/tmp", pki_remove));
	si = data[0] % 6u;
	arm_late = (data[0] & 8) != 0;
	su = &tf_suites[si];
	memcpy(ch.sel, data + 1, FUZZ_NCHUNK);
	data += 1 + FUZZ_NCHUNK;
	size -= 1 + FUZZ_NCHUNK;
	for (unsigned srv = 0; srv < 2; srv++) {
		struct stk_tls_conf k = { .server = srv == 1, .min_version = su->v, .max_version = su->v,
					  .alpn = true, .ciphers = su->ciphers, .ciphersuites = su->suites };

		if (ctxs[si][srv] != NULL)
			continue;
		if (srv == 1) {
			k.cert_file = pki.good;
			k.key_file = pki.good_key;
		} else {
			k.ca_file = pki.ca;
		}
		ctxs[si][srv] = stk_tls_ctx_new(&k, err, sizeof(err));
		FUZZ_CHECK(ctxs[si][srv] != NULL);
	}
	c.t = stk_tls_new(ctxs[si][0], &tf_ops, &c, TLS_TEST_HOST, NULL);
	s.t = stk_tls_new(ctxs[si][1], &tf_ops, &s, NULL, NULL);
	FUZZ_CHECK(c.t != NULL && s.t != NULL);
	FUZZ_CHECK(stk_tls_start(c.t) == 0);
	for (int i = 0; i < 8 && (c.out.n || s.out.n); i++) {
		tf_pass(&c, &s, NULL, false, false);
		tf_pass(&s, &c, NULL, true, false);
	}
	FUZZ_CHECK(stk_tls_is_open(c.t) && stk_tls_is_open(s.t));
	if (!arm_late)
		FUZZ_CHECK(stk_tls_fast_start(c.t, &tf_rx_ops, &c) == 0);

	while (size > 0 && ops++ < TF_MAX_OPS) {
		uint8_t op = data[0] % 8u, a = size > 1 ? data[1] : 0, b = size > 2 ? data[2] : 0;
		uint8_t x = size > 3 ? data[3] : 0;

		data++;
		size--;
		switch (op) {
		case 0: {
			size_t n = 1 + (size_t)a * 64 + b;
			uint8_t *p;

			data += size < 2 ? size : 2;
			size -= size < 2 ? size : 2;
			if (closed || s.plain.n + n > TF_MAX_PLAIN)
				break;
			p = fuzz_xmalloc(n);
			for (size_t i = 0; i < n; i++)
				p[i] = (uint8_t)((s.plain.n + i) * 131u + ((s.plain.n + i) >> 8));
			FUZZ_CHECK(stk_tls_write(s.t, p, n) == 0);
			tf_add(&s.plain, p, n);
			free(p);
			break;
		}
		case 1:
			if (!closed && su->v == STK_TLS_V13)
				FUZZ_CHECK(stk_tls_key_update(s.t, (data[-1] & 8) != 0) == 0);
			break;
		case 2:
			if (!closed && su->v == STK_TLS_V13)
				FUZZ_CHECK(stk_tls_send_ticket(s.t) == 0);
			break;
		case 3:
			data += size < 3 ? size : 3;
			size -= size < 3 ? size : 3;
			if (s.out.n > 0 && x != 0) {
				s.out.p[((size_t)a * 256 + b) % s.out.n] ^= x;
				damaged = true;
			}
			break;
		case 4:
			data += size < 1 ? size : 1;
			size -= size < 1 ? size : 1;
			if (s.out.n > 0) {
				s.out.n -= (size_t)a + 1 < s.out.n ? (size_t)a + 1 : s.out.n;
				damaged = true;
			}
			break;
		case 5: {
			size_t n = size > 0 ? (size_t)(a % 32u) : 0;

			data += size < 1 ? size : 1;
			size -= size < 1 ? size : 1;
			if (n > size)
				n = size;
			if (n > 0) {
				tf_add(&s.out, data, n);
				damaged = true;
			}
			data += n;
			size -= n;
			break;
		}
		case 6:
			tf_pass(&s, &c, &ch, true, arm_late);
			break;
		case 7:
			if (!closed)
				FUZZ_CHECK(stk_tls_close(s.t) == 0);
			closed = true;
			break;
		}
		/* what the server wrote may only have been cut short, never changed */
		FUZZ_CHECK(c.plain.n <= s.plain.n && (c.plain.n == 0 || memcmp(c.plain.p, s.plain.p, c.plain.n) == 0));
	}
	tf_pass(&s, &c, &ch, true, arm_late);
	FUZZ_CHECK(c.plain.n <= s.plain.n && (c.plain.n == 0 || memcmp(c.plain.p, s.plain.p, c.plain.n) == 0));
	if (stk_tls_failure(c.t) != STK_TLS_FAIL_NONE) {
		FUZZ_CHECK(stk_tls_error(c.t)[0] != '\0');
		if (stk_tls_fast_armed(c.t))
			FUZZ_CHECK(stk_tls_recv(c.t) == STK_TLS_FAILED);
	}
	if (!damaged) {
		FUZZ_CHECK(stk_tls_failure(c.t) == STK_TLS_FAIL_NONE);
		FUZZ_CHECK(c.plain.n == s.plain.n);
	}
	stk_tls_free(c.t);
	c.t = NULL;
	FUZZ_CHECK(c.gets == c.delivers + c.discards);
	tf_free(&c);
	tf_free(&s);
	return 0;
}
