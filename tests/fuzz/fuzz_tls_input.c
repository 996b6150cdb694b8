/* SPDX-License-Identifier: BSD-3-Clause
 * fuzz_tls_input.c — stack/tls.c's receive path (stk_tls_input, stk_tls_read
 * and the BIO behind them) on arbitrary bytes.
 *
 * Input: 1 byte of mode, FUZZ_NCHUNK bytes of chunk plan, then the bytes a
 * peer sends, cut into chunks by the plan:
 *   mode & 1 == 0  a client session (after its ClientHello) reads them as the
 *                  server's flight and records
 *   mode & 1 == 1  a server session (certificate made at the first call) reads
 *                  them as the client's
 *   mode & 2       TLS 1.2 only (else 1.2..1.3)
 *   mode & 4       insecure client (no verification: the handshake gets further)
 * Contexts are made once per mode and freed at exit (with the PKI, in /tmp).
 * Invariants: every call returns one of its documented values; after FAILED
 * everything fails; a failure has a reason and a message; reads never write
 * past the buffer given (exactly sized allocation); no leak at the end. Seeds:
 * tests/fuzz/tls_input/ (a real ClientHello, a real server flight, records of
 * an open session). */
#include <unistd.h>

#include <stk/tls.h>

#include "fuzz_common.h"
#include "../stack/tls_certs.h"

static struct tls_certs pki;

static struct stk_tls_ctx **ctx_list;

static void
pki_remove(void)
{
	for (unsigned i = 0; ctx_list != NULL && i < 8; i++)
		stk_tls_ctx_free(ctx_list[i]);
	tls_certs_remove(&pki);
}

static int
sink_tx(void *user, const uint8_t *p, size_t n)
{
	(void)user;
	(void)p;
	(void)n;
	return 0; /* what we send is not looked at */
}

static const struct stk_tls_ops sink_ops = { .tx = sink_tx };

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct stk_tls_ctx *ctxs[8]; /* per mode, made once: loading files costs */
	struct stk_tls_conf c = { .alpn = true, .resume = true };
	struct fuzz_chunks ch = { { 0 }, 0 };
	struct stk_tls_ctx *x;
	struct stk_tls *t;
	char err[256];
	uint8_t mode;
	bool failed = false;

	if (size < 1 + FUZZ_NCHUNK)
		return 0;
	FUZZ_CHECK(tls_certs_once(&pki, "/tmp", pki_remove));
	ctx_list = ctxs;
	mode = data[0];
	memcpy(ch.sel, data + 1, FUZZ_NCHUNK);
	data += 1 + FUZZ_NCHUNK;
	size -= 1 + FUZZ_NCHUNK;
	c.server = mode & 1;
	c.max_version = (mode & 2) ? STK_TLS_V12 : 0;
	c.insecure = (mode & 4) != 0;
	c.ca_file = pki.ca;
	c.cert_file = pki.good;
	c.key_file = pki.good_key;
	x = ctxs[mode & 7];
	if (x == NULL)
		x = ctxs[mode & 7] = stk_tls_ctx_new(&c, err, sizeof(err));
	FUZZ_CHECK(x != NULL);
	t = stk_tls_new(x, &sink_ops, NULL, c.server ? NULL : TLS_TEST_HOST, NULL);
	FUZZ_CHECK(t != NULL);
	if (!c.server)
		FUZZ_CHECK(stk_tls_start(t) == 0);
	while (size > 0) {
		size_t k = fuzz_chunk_next(&ch, size);
		uint8_t *chunk = fuzz_xmalloc(k);
		int r;

		memcpy(chunk, data, k);
		data += k;
		size -= k;
		r = stk_tls_input(t, chunk, k);
		FUZZ_CHECK(r == STK_TLS_AGAIN || r == STK_TLS_OPENED || r == STK_TLS_FAILED);
		FUZZ_CHECK(!failed || r == STK_TLS_FAILED);
		if (r == STK_TLS_OPENED)
			FUZZ_CHECK(stk_tls_is_open(t));
		for (;;) {
			size_t cap = (size_t)(k % 7) + 1;
			uint8_t *out = fuzz_xmalloc(cap);
			ssize_t got = stk_tls_read(t, out, cap);

			free(out);
			FUZZ_CHECK(got == STK_TLS_AGAIN || got == STK_TLS_CLOSED || got == STK_TLS_FAILED ||
				   (got > 0 && (size_t)got <= cap));
			if (got == STK_TLS_FAILED)
				failed = true;
			if (got <= 0)
				break;
		}
		if (r == STK_TLS_FAILED)
			failed = true;
		if (failed) {
			FUZZ_CHECK(stk_tls_failure(t) != STK_TLS_FAIL_NONE);
			FUZZ_CHECK(stk_tls_error(t)[0] != '\0');
			FUZZ_CHECK(stk_tls_input(t, chunk, k) == STK_TLS_FAILED);
		}
		memset(chunk, 0xa5, k); /* the borrow is over */
		free(chunk);
	}
	stk_tls_free(t);
	return 0;
}
