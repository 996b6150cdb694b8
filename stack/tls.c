/* SPDX-License-Identifier: BSD-3-Clause
 * tls.c — TLS over a byte stream with OpenSSL's libssl (stk/tls.h).
 *
 *   stk_tls_ctx_new     SSL_CTX: versions, ciphers, trust store (whole files,
 *                       read now), certificate + key, tickets, ALPN, our BIO
 *                       method, the record counter (msg callback)
 *   stk_tls_new         SSL + our BIO; client: SNI, name / IP check, ALPN,
 *                       the kept ticket
 *   stk_tls_start       client: ClientHello
 *   stk_tls_input       borrow ciphertext; drive the handshake
 *   stk_tls_read        SSL_read_ex into the caller's buffer
 *   stk_tls_write       SSL_write_ex: records out through ops.tx
 *   stk_tls_close       close_notify
 *
 * The BIO is ours rather than a memory BIO pair: its read hands OpenSSL the
 * caller's borrowed bytes directly (one copy, into OpenSSL's record buffer,
 * instead of two through a memory BIO) and its write goes straight to ops.tx.
 * Failures are sorted by reason (stk_tls_failure) from the verify result, the
 * alert the peer sent (info callback) and OpenSSL's error queue, which is
 * cleared before every call so that SSL_get_error() reads this call's result. */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <arpa/inet.h>

#include <openssl/bio.h>
#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/ssl.h>
#include <openssl/x509v3.h>

#include <stk/tls.h>

struct stk_tls_ctx {
	SSL_CTX *ssl;
	BIO_METHOD *bio;
	bool server, insecure, resume, alpn;
	struct stk_tls_stats stats;
};

struct stk_tls {
	struct stk_tls_ctx *x;
	SSL *ssl;
	const struct stk_tls_ops *ops;
	void *user;
	void **resume;      /* the caller's ticket slot (client) */
	const uint8_t *in;  /* borrowed ciphertext not yet pulled by OpenSSL */
	size_t in_n;
	bool open, closed, close_sent, failed, tx_failed;
	enum stk_tls_fail fail;
	int alert_rx;       /* fatal alert the peer sent, -1: none */
	char err[192];
};

static const unsigned char alpn_http11[] = { 8, 'h', 't', 't', 'p', '/', '1', '.', '1' };

/* OpenSSL reads SSL_get_error() right only with an empty error queue. Ours is
 * emptied after every failure, so it is normally empty already: look before
 * clearing (ERR_clear_error walks all 16 slots, ~800 instructions, per call). */
static inline void
err_clear(void)
{
	if (ERR_peek_error() != 0)
		ERR_clear_error();
}

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

/* ---- callbacks ---- */

/* every record header read or written: the record counts */
static void
msg_cb(int write_p, int version, int content_type, const void *buf, size_t len, SSL *ssl, void *arg)
{
	struct stk_tls_ctx *x = arg;

	if (content_type != SSL3_RT_HEADER)
		return;
	if (write_p)
		x->stats.records_tx++;
	else
		x->stats.records_rx++;
}

static void
info_cb(const SSL *ssl, int where, int ret)
{
	struct stk_tls *t = SSL_get_app_data(ssl);

	/* SSL_CB_READ_ALERT and SSL_CB_WRITE_ALERT share the SSL_CB_ALERT bit */
	if (t != NULL && (where & SSL_CB_ALERT) && (where & SSL_CB_READ) && (ret >> 8) == SSL3_AL_FATAL)
		t->alert_rx = ret & 0xff;
}

/* a new ticket (client): into the caller's slot, replacing the older one */
static int
new_session_cb(SSL *ssl, SSL_SESSION *sess)
{
	struct stk_tls *t = SSL_get_app_data(ssl);

	if (t == NULL || t->resume == NULL)
		return 0;
	if (*t->resume != NULL)
		SSL_SESSION_free(*t->resume);
	*t->resume = sess;
	return 1; /* the reference is ours */
}

static int
alpn_select_cb(SSL *ssl, const unsigned char **out, unsigned char *outlen, const unsigned char *in,
	       unsigned inlen, void *arg)
{
	unsigned char *sel;

	if (SSL_select_next_proto(&sel, outlen, alpn_http11, sizeof(alpn_http11), in, inlen) !=
	    OPENSSL_NPN_NEGOTIATED)
		return SSL_TLSEXT_ERR_NOACK; /* go on without ALPN */
	*out = sel;
	return SSL_TLSEXT_ERR_OK;
}

/* ---- context ---- */

static const char *
ssl_errstr(char *buf, size_t len)
{
	unsigned long e = ERR_peek_last_error();

	if (e == 0)
		snprintf(buf, len, "unknown error");
	else
		ERR_error_string_n(e, buf, len);
	return buf;
}

/* every certificate of every file in dir into the store, now */
static int
load_ca_dir(X509_STORE *st, const char *dir, char *err, size_t errlen)
{
	DIR *d = opendir(dir);
	struct dirent *de;
	unsigned n = 0;

	if (d == NULL) {
		snprintf(err, errlen, "ca_path %s: %s", dir, strerror(errno));
		return -1;
	}
	while ((de = readdir(d)) != NULL) {
		char path[4096];
		struct stat sb;
		FILE *f;
		X509 *c;

		if (de->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
		if (stat(path, &sb) != 0 || !S_ISREG(sb.st_mode) || (f = fopen(path, "r")) == NULL)
			continue;
		while ((c = PEM_read_X509(f, NULL, NULL, NULL)) != NULL) {
			/* the same certificate twice (a hash link and its file) is fine */
			if (X509_STORE_add_cert(st, c) == 1)
				n++;
			X509_free(c);
		}
		ERR_clear_error(); /* the end of each file reads as a PEM error */
		fclose(f);
	}
	closedir(d);
	if (n == 0) {
		snprintf(err, errlen, "ca_path %s: no PEM certificate in it", dir);
		return -1;
	}
	return 0;
}

static int
load_trust(struct stk_tls_ctx *x, const struct stk_tls_conf *c, char *err, size_t errlen)
{
	bool file = c->ca_file != NULL && c->ca_file[0], path = c->ca_path != NULL && c->ca_path[0];
	char e[160];

	if (file && SSL_CTX_load_verify_file(x->ssl, c->ca_file) != 1) {
		snprintf(err, errlen, "ca_file %s: %s", c->ca_file, ssl_errstr(e, sizeof(e)));
		return -1;
	}
	if (path && load_ca_dir(SSL_CTX_get_cert_store(x->ssl), c->ca_path, err, errlen) < 0)
		return -1;
	if (!file && !path) {
		const char *env = getenv(X509_get_default_cert_file_env());
		const char *def = env != NULL && env[0] ? env : X509_get_default_cert_file();

		if (SSL_CTX_load_verify_file(x->ssl, def) != 1) {
			ERR_clear_error();
			if (load_ca_dir(SSL_CTX_get_cert_store(x->ssl), X509_get_default_cert_dir(), err, errlen) < 0) {
				snprintf(err, errlen, "no system trust store (%s, %s): give ca_file or ca_path", def,
					 X509_get_default_cert_dir());
				return -1;
			}
		}
	}
	return 0;
}

struct stk_tls_ctx *
stk_tls_ctx_new(const struct stk_tls_conf *c, char *err, size_t errlen)
{
	struct stk_tls_ctx *x = calloc(1, sizeof(*x));
	char e[160];
	long opts = SSL_OP_NO_RENEGOTIATION | SSL_OP_NO_COMPRESSION;
	int minv, maxv;

	if (x == NULL) {
		snprintf(err, errlen, "no memory");
		return NULL;
	}
	ERR_clear_error();
	x->server = c->server;
	x->insecure = c->insecure;
	x->resume = c->resume;
	x->alpn = c->alpn;
	x->ssl = SSL_CTX_new(c->server ? TLS_server_method() : TLS_client_method());
	x->bio = BIO_meth_new(BIO_get_new_index() | BIO_TYPE_SOURCE_SINK, "stk_tls");
	if (x->ssl == NULL || x->bio == NULL) {
		snprintf(err, errlen, "cannot create the TLS context: %s", ssl_errstr(e, sizeof(e)));
		goto fail;
	}
	BIO_meth_set_write(x->bio, bio_write);
	BIO_meth_set_read(x->bio, bio_read);
	BIO_meth_set_ctrl(x->bio, bio_ctrl);
	BIO_meth_set_create(x->bio, bio_create);
	if (!c->resume)
		opts |= SSL_OP_NO_TICKET;
	SSL_CTX_set_options(x->ssl, opts);
	minv = c->min_version ? c->min_version : TLS1_2_VERSION;
	maxv = c->max_version ? c->max_version : TLS1_3_VERSION;
	if (minv > maxv || minv < TLS1_2_VERSION || maxv > TLS1_3_VERSION ||
	    SSL_CTX_set_min_proto_version(x->ssl, minv) != 1 || SSL_CTX_set_max_proto_version(x->ssl, maxv) != 1) {
		snprintf(err, errlen, "bad TLS version range 0x%04x..0x%04x (TLS 1.2 and 1.3 only)", minv, maxv);
		goto fail;
	}
	if (c->ciphers != NULL && c->ciphers[0] && SSL_CTX_set_cipher_list(x->ssl, c->ciphers) != 1) {
		snprintf(err, errlen, "ciphers \"%s\": none usable", c->ciphers);
		goto fail;
	}
	if (c->ciphersuites != NULL && c->ciphersuites[0] && SSL_CTX_set_ciphersuites(x->ssl, c->ciphersuites) != 1) {
		snprintf(err, errlen, "ciphersuites \"%s\": none usable", c->ciphersuites);
		goto fail;
	}
	SSL_CTX_set_msg_callback(x->ssl, msg_cb);
	SSL_CTX_set_msg_callback_arg(x->ssl, x);
	SSL_CTX_set_info_callback(x->ssl, info_cb);
	if (c->server) {
		if (c->cert_file == NULL || !c->cert_file[0] || c->key_file == NULL || !c->key_file[0]) {
			snprintf(err, errlen, "a TLS server needs a certificate and a key");
			goto fail;
		}
		if (SSL_CTX_use_certificate_chain_file(x->ssl, c->cert_file) != 1) {
			snprintf(err, errlen, "certificate %s: %s", c->cert_file, ssl_errstr(e, sizeof(e)));
			goto fail;
		}
		if (SSL_CTX_use_PrivateKey_file(x->ssl, c->key_file, SSL_FILETYPE_PEM) != 1 &&
		    ERR_GET_REASON(ERR_peek_last_error()) != X509_R_KEY_VALUES_MISMATCH) {
			snprintf(err, errlen, "key %s: %s", c->key_file, ssl_errstr(e, sizeof(e)));
			goto fail;
		}
		if (ERR_peek_last_error() != 0 || SSL_CTX_check_private_key(x->ssl) != 1) {
			snprintf(err, errlen, "key %s does not match certificate %s", c->key_file, c->cert_file);
			goto fail;
		}
		/* stateless tickets only: no server-side cache to grow */
		SSL_CTX_set_session_cache_mode(x->ssl, SSL_SESS_CACHE_OFF);
		if (!c->resume)
			SSL_CTX_set_num_tickets(x->ssl, 0);
		if (c->alpn)
			SSL_CTX_set_alpn_select_cb(x->ssl, alpn_select_cb, NULL);
	} else {
		if (!c->insecure) {
			if (load_trust(x, c, err, errlen) < 0)
				goto fail;
			SSL_CTX_set_verify(x->ssl, SSL_VERIFY_PEER, NULL);
		} else {
			SSL_CTX_set_verify(x->ssl, SSL_VERIFY_NONE, NULL);
		}
		SSL_CTX_set_session_cache_mode(x->ssl, SSL_SESS_CACHE_CLIENT | SSL_SESS_CACHE_NO_INTERNAL_STORE);
		SSL_CTX_sess_set_new_cb(x->ssl, new_session_cb);
	}
	ERR_clear_error();
	return x;
fail:
	ERR_clear_error();
	stk_tls_ctx_free(x);
	return NULL;
}

void
stk_tls_ctx_free(struct stk_tls_ctx *x)
{
	if (x == NULL)
		return;
	SSL_CTX_free(x->ssl);
	BIO_meth_free(x->bio);
	free(x);
}

const struct stk_tls_stats *
stk_tls_ctx_stats(const struct stk_tls_ctx *x)
{
	return &x->stats;
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
	if (x->alpn && SSL_set_alpn_protos(t->ssl, alpn_http11, sizeof(alpn_http11)) != 0)
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
	/* A connection that ends without close_notify (a TCP reset, a peer that
	 * just closes, as feeds do) would make OpenSSL mark a TLS 1.2 session not
	 * resumable; RFC 8446 dropped that rule, and a failed session is marked
	 * by OpenSSL itself. */
	if (t->open && !t->failed)
		SSL_set_shutdown(t->ssl, SSL_SENT_SHUTDOWN | SSL_RECEIVED_SHUTDOWN);
	SSL_free(t->ssl); /* and the BIO */
	free(t);
}

void
stk_tls_ticket_free(void *ticket)
{
	SSL_SESSION_free(ticket);
}

/* fail the session from what OpenSSL said about call result r; FAILED */
static int
tls_fail(struct stk_tls *t, int r)
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
			snprintf(t->err, sizeof(t->err), "%s", ssl_errstr(buf, sizeof(buf)));
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

	err_clear();
	r = SSL_do_handshake(t->ssl);
	if (r == 1) {
		t->open = true;
		return STK_TLS_OPENED;
	}
	if (SSL_get_error(t->ssl, r) == SSL_ERROR_WANT_READ && !t->tx_failed)
		return STK_TLS_AGAIN;
	return tls_fail(t, r);
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
	err_clear();
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
	return tls_fail(t, r);
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
	err_clear();
	r = SSL_write_ex(t->ssl, p, n, &done);
	if (r == 1 && done == n)
		return 0;
	return tls_fail(t, r);
}

int
stk_tls_close(struct stk_tls *t)
{
	int r;

	if (t->failed || !t->open || t->close_sent)
		return t->failed ? STK_TLS_FAILED : 0;
	t->close_sent = true;
	err_clear();
	r = SSL_shutdown(t->ssl); /* 0: sent, the peer's is still to come */
	if (r >= 0 && !t->tx_failed)
		return 0;
	return tls_fail(t, r);
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
	return n == sizeof(alpn_http11) - 1 && memcmp(p, alpn_http11 + 1, n) == 0 ? "http/1.1" : none;
}
