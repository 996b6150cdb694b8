/* SPDX-License-Identifier: BSD-3-Clause
 * tls.c — TLS sessions over a byte stream with OpenSSL's libssl (stk/tls.h):
 * the handshake and the record path through a BIO of ours, both roles.
 * The other parts (tls_priv.h): tls_ctx.c (contexts: configuration, trust,
 * certificates), tls_keys.c (what the receive fast path learns of the keys,
 * its key derivation, KeyUpdate and tickets), tls_fast.c (the receive fast
 * path: records decrypted by EVP AEAD into the caller's buffers).
 *
 *   stk_tls_new         SSL + our BIO; client: SNI (RFC 6066 3), name / IP
 *                       check, ALPN (RFC 7301), the kept ticket
 *   stk_tls_start       client: ClientHello
 *   stk_tls_input       borrow ciphertext; drive the handshake
 *   stk_tls_read        SSL_read_ex into the caller's buffer (armed:
 *                       stk_tls_recv, tls_fast.c)
 *   stk_tls_write       SSL_write_ex: records out through ops.tx
 *   stk_tls_close       close_notify
 *   stk_tls_free        the session (deferred inside stk_tls_recv)
 *   stk_tls_bio_method  the BIO's methods, for each context
 *
 * The BIO is ours rather than a memory BIO pair: its read hands OpenSSL the
 * caller's borrowed bytes directly (one copy, into OpenSSL's record buffer,
 * instead of two through a memory BIO) and its write goes straight to ops.tx.
 * Its read also follows the record framing of what it hands over (5-byte
 * headers), so that an armed session feeds OpenSSL only to the end of the
 * record in progress (tls_fast.c takes over at a record boundary).
 * Failures are sorted by reason (stk_tls_failure) from the verify result, the
 * alert the peer sent (info callback) and OpenSSL's error queue, which is
 * cleared before every call so that SSL_get_error() reads this call's result. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>

#include <openssl/bio.h>
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <openssl/x509v3.h>

#include "tls_priv.h"

const unsigned char stk_tls_alpn_http11[9] = { 8, 'h', 't', 't', 'p', '/', '1', '.', '1' };

/* ---- the BIO: borrowed input, output to ops.tx ---- */

static int
bio_write(BIO *b, const char *p, int n)
{
	struct stk_tls *t = BIO_get_data(b);

	BIO_clear_retry_flags(b);
	if (n <= 0)
		return 0;
	if (t->ops->tx(t->user, (const uint8_t *)p, (size_t)n) != 0) {
		t->tx_failed = true;
		return -1; /* no retry flag: the SSL call fails */
	}
	t->x->stats.bytes_tx += (uint64_t)n;
	return n;
}

/* follow the record framing of n bytes handed to OpenSSL */
static void
trk_advance(struct stk_tls *t, const uint8_t *p, size_t n)
{
	while (n > 0) {
		if (t->trk_body == 0) {
			t->trk_hdr[t->trk_hg++] = *p++;
			n--;
			if (t->trk_hg == 5) {
				t->trk_body = (size_t)t->trk_hdr[3] << 8 | t->trk_hdr[4];
				t->trk_hg = 0;
			}
		} else {
			size_t k = n < t->trk_body ? n : t->trk_body;

			p += k;
			n -= k;
			t->trk_body -= k;
		}
	}
}

static int
bio_read(BIO *b, char *out, int n)
{
	struct stk_tls *t = BIO_get_data(b);
	size_t k;

	BIO_clear_retry_flags(b);
	if (t->in_n == 0) {
		BIO_set_retry_read(b);
		return -1;
	}
	k = (size_t)n < t->in_n ? (size_t)n : t->in_n;
	if (t->armed) {
		/* to the end of the record in progress, no further */
		size_t lim = t->trk_hg > 0 ? 5 - t->trk_hg : t->trk_body;

		if (lim == 0) {
			BIO_set_retry_read(b);
			return -1;
		}
		if (k > lim)
			k = lim;
	}
	trk_advance(t, t->in, k);
	memcpy(out, t->in, k);
	t->in += k;
	t->in_n -= k;
	return (int)k;
}

static long
bio_ctrl(BIO *b, int cmd, long num, void *ptr)
{
	struct stk_tls *t = BIO_get_data(b);

	switch (cmd) {
	case BIO_CTRL_FLUSH:
		return 1;
	case BIO_CTRL_PENDING:
		return t != NULL ? (long)t->in_n : 0;
	case BIO_CTRL_WPENDING:
		return 0;
	default:
		return 0;
	}
}

static int
bio_create(BIO *b)
{
	BIO_set_init(b, 1);
	return 1;
}

/* our BIO's methods, one set per context (stk_tls_ctx_new) */
BIO_METHOD *
stk_tls_bio_method(void)
{
	BIO_METHOD *m = BIO_meth_new(BIO_get_new_index() | BIO_TYPE_SOURCE_SINK, "stk_tls");

	if (m == NULL)
		return NULL;
	BIO_meth_set_write(m, bio_write);
	BIO_meth_set_read(m, bio_read);
	BIO_meth_set_ctrl(m, bio_ctrl);
	BIO_meth_set_create(m, bio_create);
	return m;
}

/* ---- session ---- */

struct stk_tls *
stk_tls_new(struct stk_tls_ctx *x, const struct stk_tls_ops *ops, void *user, const char *name, void **resume)
{
	struct stk_tls *t = calloc(1, sizeof(*t));
	BIO *b;

	if (t == NULL)
		return NULL;
	t->x = x;
	t->ops = ops;
	t->user = user;
	t->alert_rx = -1;
	ERR_clear_error();
	t->ssl = SSL_new(x->ssl);
	b = t->ssl != NULL ? BIO_new(x->bio) : NULL;
	if (b == NULL)
		goto fail;
	BIO_set_data(b, t);
	SSL_set_bio(t->ssl, b, b); /* one BIO for both directions, owned by the SSL */
	/* read ahead: one SSL_read pulls all the borrowed bytes into the record
	 * buffer at once, instead of a header then a body per call */
	SSL_set_read_ahead(t->ssl, 1);
	SSL_set_app_data(t->ssl, t);
	if (x->server) {
		SSL_set_accept_state(t->ssl);
		return t;
	}
	SSL_set_connect_state(t->ssl);
	if (name != NULL && name[0]) {
		struct in_addr a;
		bool ip = inet_pton(AF_INET, name, &a) == 1;

		/* SNI carries DNS names only (RFC 6066 3) */
		if (!ip && SSL_set_tlsext_host_name(t->ssl, name) != 1)
			goto fail;
		if (!x->insecure) {
			X509_VERIFY_PARAM *vp = SSL_get0_param(t->ssl);

			X509_VERIFY_PARAM_set_hostflags(vp, X509_CHECK_FLAG_NO_PARTIAL_WILDCARDS);
			if ((ip ? X509_VERIFY_PARAM_set1_ip_asc(vp, name) : X509_VERIFY_PARAM_set1_host(vp, name, 0)) != 1)
				goto fail;
		}
	}
	if (x->alpn && SSL_set_alpn_protos(t->ssl, stk_tls_alpn_http11, sizeof(stk_tls_alpn_http11)) != 0)
		goto fail;
	if (x->resume && resume != NULL) {
		t->resume = resume;
		if (*resume != NULL && SSL_set_session(t->ssl, *resume) != 1)
			ERR_clear_error(); /* a ticket it will not take: a full handshake */
	}
	return t;
fail:
	ERR_clear_error();
	stk_tls_free(t);
	return NULL;
}

void
stk_tls_free(struct stk_tls *t)
{
	if (t == NULL)
		return;
	if (t->depth > 0) {
		t->zombie = true; /* inside stk_tls_recv: freed on its way out */
		return;
	}
	stk_tls_fast_release(t);
	/* A connection that ends without close_notify (a TCP reset, a peer that
	 * just closes, as feeds do) would make OpenSSL mark a TLS 1.2 session not
	 * resumable; RFC 8446 dropped that rule, and a failed session is marked
	 * by OpenSSL itself. */
	if (t->open && !t->failed)
		SSL_set_shutdown(t->ssl, SSL_SENT_SHUTDOWN | SSL_RECEIVED_SHUTDOWN);
	SSL_free(t->ssl); /* and the BIO */
	free(t);
}

/* fail the session from what OpenSSL said about call result r; FAILED */
int
stk_tls_ssl_fail(struct stk_tls *t, int r)
{
	int e = SSL_get_error(t->ssl, r);
	long vr = SSL_get_verify_result(t->ssl);
	char buf[160];

	t->failed = true;
	t->open = false;
	if (t->tx_failed) {
		t->fail = STK_TLS_FAIL_TX;
		snprintf(t->err, sizeof(t->err), "no buffers to send TLS records");
	} else if (!t->x->server && !t->x->insecure && vr != X509_V_OK) {
		t->fail = STK_TLS_FAIL_VERIFY;
		snprintf(t->err, sizeof(t->err), "certificate verify failed: %s",
			 X509_verify_cert_error_string(vr));
	} else if (t->alert_rx >= 0) {
		t->fail = STK_TLS_FAIL_ALERT;
		snprintf(t->err, sizeof(t->err), "alert from the peer: %s",
			 SSL_alert_desc_string_long(t->alert_rx));
	} else {
		t->fail = STK_TLS_FAIL_PROTOCOL;
		if (e == SSL_ERROR_SSL)
			snprintf(t->err, sizeof(t->err), "%s", stk_tls_errstr(buf, sizeof(buf)));
		else if (e == SSL_ERROR_SYSCALL || e == SSL_ERROR_ZERO_RETURN)
			snprintf(t->err, sizeof(t->err), "the peer ended the stream inside TLS");
		else
			snprintf(t->err, sizeof(t->err), "SSL error %d", e);
	}
	ERR_clear_error();
	return STK_TLS_FAILED;
}

static int
handshake(struct stk_tls *t)
{
	int r;

	stk_tls_err_clear();
	r = SSL_do_handshake(t->ssl);
	if (r == 1) {
		t->open = true;
		return STK_TLS_OPENED;
	}
	if (SSL_get_error(t->ssl, r) == SSL_ERROR_WANT_READ && !t->tx_failed)
		return STK_TLS_AGAIN;
	return stk_tls_ssl_fail(t, r);
}

int
stk_tls_start(struct stk_tls *t)
{
	return handshake(t) == STK_TLS_FAILED ? STK_TLS_FAILED : 0;
}

int
stk_tls_input(struct stk_tls *t, const uint8_t *p, size_t n)
{
	if (t->failed)
		return STK_TLS_FAILED;
	t->in = p;
	t->in_n = n;
	t->x->stats.bytes_rx += n;
	if (t->open)
		return STK_TLS_AGAIN;
	return handshake(t);
}

ssize_t
stk_tls_read(struct stk_tls *t, uint8_t *out, size_t cap)
{
	size_t got = 0;
	int r, e;

	if (t->failed)
		return STK_TLS_FAILED;
	if (t->closed)
		return STK_TLS_CLOSED;
	if (!t->open) {
		t->in_n = 0;
		return STK_TLS_AGAIN;
	}
	if (t->armed)
		return stk_tls_recv(t);
	stk_tls_err_clear();
	r = SSL_read_ex(t->ssl, out, cap, &got);
	if (r == 1)
		return (ssize_t)got;
	e = SSL_get_error(t->ssl, r);
	if (e == SSL_ERROR_WANT_READ && !t->tx_failed) {
		t->in_n = 0; /* OpenSSL took everything it was given */
		return STK_TLS_AGAIN;
	}
	if (e == SSL_ERROR_ZERO_RETURN) {
		t->closed = true;
		t->in_n = 0;
		ERR_clear_error();
		return STK_TLS_CLOSED;
	}
	t->in_n = 0;
	return stk_tls_ssl_fail(t, r);
}

int
stk_tls_write(struct stk_tls *t, const uint8_t *p, size_t n)
{
	size_t done = 0;
	int r;

	if (t->failed || !t->open || t->close_sent)
		return STK_TLS_FAILED;
	if (n == 0)
		return 0;
	stk_tls_err_clear();
	r = SSL_write_ex(t->ssl, p, n, &done);
	if (r == 1 && done == n)
		return 0;
	return stk_tls_ssl_fail(t, r);
}

int
stk_tls_close(struct stk_tls *t)
{
	int r;

	if (t->failed || !t->open || t->close_sent)
		return t->failed ? STK_TLS_FAILED : 0;
	t->close_sent = true;
	stk_tls_err_clear();
	r = SSL_shutdown(t->ssl); /* 0: sent, the peer's is still to come */
	if (r >= 0 && !t->tx_failed)
		return 0;
	return stk_tls_ssl_fail(t, r);
}

void
stk_tls_fail_timeout(struct stk_tls *t)
{
	if (t->failed)
		return;
	t->failed = true;
	t->open = false;
	t->fail = STK_TLS_FAIL_TIMEOUT;
	snprintf(t->err, sizeof(t->err), "handshake timed out");
}

bool
stk_tls_is_open(const struct stk_tls *t)
{
	return t->open;
}

bool
stk_tls_resumed(const struct stk_tls *t)
{
	return SSL_session_reused(t->ssl) == 1;
}

enum stk_tls_fail
stk_tls_failure(const struct stk_tls *t)
{
	return t->failed ? t->fail : STK_TLS_FAIL_NONE;
}

const char *
stk_tls_fail_name(enum stk_tls_fail f)
{
	static const char *const n[] = {
		[STK_TLS_FAIL_NONE] = "none",	    [STK_TLS_FAIL_VERIFY] = "verify",
		[STK_TLS_FAIL_ALERT] = "alert",	    [STK_TLS_FAIL_TIMEOUT] = "timeout",
		[STK_TLS_FAIL_PROTOCOL] = "protocol", [STK_TLS_FAIL_TX] = "tx",
		[STK_TLS_FAIL_NOBUF] = "nobuf",
	};

	return (unsigned)f < sizeof(n) / sizeof(n[0]) ? n[f] : "?";
}

const char *
stk_tls_error(const struct stk_tls *t)
{
	return t->failed ? t->err : "";
}

const char *
stk_tls_version(const struct stk_tls *t)
{
	return SSL_get_version(t->ssl);
}

const char *
stk_tls_cipher(const struct stk_tls *t)
{
	return SSL_get_cipher_name(t->ssl);
}

const char *
stk_tls_alpn(const struct stk_tls *t)
{
	static const char none[] = "";
	const unsigned char *p;
	unsigned n;

	SSL_get0_alpn_selected(t->ssl, &p, &n);
	/* "http/1.1" is the only protocol offered or selected */
	return n == sizeof(stk_tls_alpn_http11) - 1 && memcmp(p, stk_tls_alpn_http11 + 1, n) == 0 ? "http/1.1" : none;
}
