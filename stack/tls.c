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
 *   stk_tls_fast_start  arm the receive fast path (client, AEAD suites)
 *   stk_tls_recv        armed: drain OpenSSL to the record boundary, then
 *                       fast_input: records decrypted by EVP AEAD from the
 *                       borrowed bytes into the caller's buffers (rx_ops)
 *
 * The BIO is ours rather than a memory BIO pair: its read hands OpenSSL the
 * caller's borrowed bytes directly (one copy, into OpenSSL's record buffer,
 * instead of two through a memory BIO) and its write goes straight to ops.tx.
 * Failures are sorted by reason (stk_tls_failure) from the verify result, the
 * alert the peer sent (info callback) and OpenSSL's error queue, which is
 * cleared before every call so that SSL_get_error() reads this call's result.
 *
 * Fast path. The framing of the bytes handed to OpenSSL is tracked (5-byte
 * headers); the read sequence number is the count of records OpenSSL read
 * since its last read-key change (msg callback: the server's CCS in 1.2, its
 * Finished and KeyUpdates in 1.3). Armed, bio_read feeds OpenSSL only to the
 * end of the record in progress; once SSL_read wants more with nothing
 * pending, the keys are derived (1.3: the keylog callback's
 * SERVER_TRAFFIC_SECRET_0, advanced by KeyUpdates, HKDF-Expand-Label; 1.2: the
 * master key through the TLS PRF) and every later record is ours. */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <arpa/inet.h>

#include <openssl/bio.h>
#include <openssl/core_names.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/kdf.h>
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

#define TLS_MAX_PLAIN 16384u
#define TLS_TAG 16u

/* a plaintext buffer of the caller's */
struct fast_buf {
	void *cookie;
	uint8_t *p;
	size_t cap, n;
};

/* the receive fast path of a session */
struct fast {
	const struct stk_tls_rx_ops *ops;
	void *user;
	EVP_CIPHER_CTX *cc;
	bool on;          /* the switch happened: records are ours */
	bool v13, xnonce; /* TLS 1.3; TLS 1.2 GCM (8-byte explicit nonce) */
	int nid;
	size_t keylen;
	uint8_t iv[12];
	uint64_t seq;
	/* the record in progress */
	uint8_t hdr[5];
	unsigned hdr_got, xn_got, tag_got;
	uint8_t xn[8], tag[TLS_TAG];
	size_t body_left;
	bool to_ctl;       /* 1.2 alert: into ctl, not the caller's buffers */
	uint8_t ctl[2];
	size_t ctl_n;
	struct fast_buf held[STK_TLS_FAST_HELD]; /* this record's plaintext */
	unsigned n_held;
	struct fast_buf spare[STK_TLS_FAST_HELD]; /* empty, ours to fill */
	unsigned n_spare;
	/* 1.3 handshake messages (tickets, KeyUpdate), across records */
	uint8_t hs_hdr[4];
	unsigned hs_got;
	uint32_t hs_left;
	int ku;            /* a KeyUpdate ended the record: its request_update, -1 none */
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
	/* framing of the bytes handed to OpenSSL (its record in progress) */
	uint8_t trk_hdr[5];
	unsigned trk_hg;    /* header bytes seen of the record in progress */
	size_t trk_body;    /* its body bytes still to come */
	/* OpenSSL's read side: records since its last read-key change; 1.3 secret */
	uint64_t rd_recs;
	uint8_t rsec[48];
	size_t rsec_len;
	bool armed, zombie;
	unsigned depth;     /* inside stk_tls_recv: stk_tls_free is deferred */
	struct fast f;
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

/* ---- callbacks ---- */

/* every record header read or written: the record counts */
static int hkdf_label(const EVP_MD *md, const uint8_t *sec, size_t slen, const char *label, uint8_t *out,
		      size_t olen);

/* every record header read or written: the record counts; the read side's
 * key changes (the fast path's sequence number and 1.3 secret) */
static void
msg_cb(int write_p, int version, int content_type, const void *buf, size_t len, SSL *ssl, void *arg)
{
	struct stk_tls_ctx *x = arg;
	struct stk_tls *t = SSL_get_app_data(ssl);
	const uint8_t *m = buf;

	if (content_type == SSL3_RT_HEADER) {
		if (write_p) {
			x->stats.records_tx++;
		} else {
			x->stats.records_rx++;
			/* TLS 1.2: the records after the server's CCS are under its new key */
			if (t != NULL)
				t->rd_recs = len >= 1 && m[0] == SSL3_RT_CHANGE_CIPHER_SPEC ? 0 : t->rd_recs + 1;
		}
		return;
	}
	if (write_p || t == NULL || x->server)
		return;
	if (content_type == SSL3_RT_HANDSHAKE && len >= 1 && SSL_version(ssl) == TLS1_3_VERSION) {
		if (m[0] == SSL3_MT_FINISHED) {
			t->rd_recs = 0;
		} else if (m[0] == SSL3_MT_KEY_UPDATE) {
			const EVP_MD *md = SSL_CIPHER_get_handshake_digest(SSL_get_current_cipher(ssl));
			uint8_t next[48];

			t->rd_recs = 0;
			if (md != NULL && t->rsec_len > 0 &&
			    hkdf_label(md, t->rsec, t->rsec_len, "traffic upd", next, t->rsec_len) == 0)
				memcpy(t->rsec, next, t->rsec_len);
			else
				t->rsec_len = 0; /* lost: the fast path is refused */
			OPENSSL_cleanse(next, sizeof(next));
		}
	}
}

static int
hexval(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/* client: the server's first application traffic secret (TLS 1.3) */
static void
keylog_cb(const SSL *ssl, const char *line)
{
	static const char pre[] = "SERVER_TRAFFIC_SECRET_0 ";
	struct stk_tls *t = SSL_get_app_data(ssl);
	const char *h;
	size_t n = 0;

	if (t == NULL || strncmp(line, pre, sizeof(pre) - 1) != 0)
		return;
	h = strchr(line + sizeof(pre) - 1, ' '); /* after the client random */
	if (h == NULL)
		return;
	for (h++; n < sizeof(t->rsec) && hexval(h[0]) >= 0 && hexval(h[1]) >= 0; h += 2)
		t->rsec[n++] = (uint8_t)(hexval(h[0]) << 4 | hexval(h[1]));
	t->rsec_len = n;
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
	if (!c->server)
		SSL_CTX_set_keylog_callback(x->ssl, keylog_cb);
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

static void fast_release(struct stk_tls *t);

void
stk_tls_free(struct stk_tls *t)
{
	if (t == NULL)
		return;
	if (t->depth > 0) {
		t->zombie = true; /* inside stk_tls_recv: freed on its way out */
		return;
	}
	fast_release(t);
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
	if (t->armed)
		return stk_tls_recv(t);
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
	return n == sizeof(alpn_http11) - 1 && memcmp(p, alpn_http11 + 1, n) == 0 ? "http/1.1" : none;
}

/* ---- receive fast path ---- */

/* HKDF-Expand-Label(secret, label, "", olen) (RFC 8446 7.1) */
static int
hkdf_label(const EVP_MD *md, const uint8_t *sec, size_t slen, const char *label, uint8_t *out, size_t olen)
{
	uint8_t info[2 + 1 + 6 + 32 + 1];
	size_t ll = strlen(label);
	int mode = EVP_KDF_HKDF_MODE_EXPAND_ONLY, r = -1;
	EVP_KDF *kdf;
	EVP_KDF_CTX *kc = NULL;

	if (ll > 32)
		return -1;
	info[0] = (uint8_t)(olen >> 8);
	info[1] = (uint8_t)olen;
	info[2] = (uint8_t)(6 + ll);
	memcpy(info + 3, "tls13 ", 6);
	memcpy(info + 9, label, ll);
	info[9 + ll] = 0; /* no context */
	kdf = EVP_KDF_fetch(NULL, OSSL_KDF_NAME_HKDF, NULL);
	if (kdf != NULL)
		kc = EVP_KDF_CTX_new(kdf);
	if (kc != NULL) {
		OSSL_PARAM p[] = {
			OSSL_PARAM_construct_int(OSSL_KDF_PARAM_MODE, &mode),
			OSSL_PARAM_construct_utf8_string(OSSL_KDF_PARAM_DIGEST, (char *)EVP_MD_get0_name(md), 0),
			OSSL_PARAM_construct_octet_string(OSSL_KDF_PARAM_KEY, (void *)sec, slen),
			OSSL_PARAM_construct_octet_string(OSSL_KDF_PARAM_INFO, info, 10 + ll),
			OSSL_PARAM_construct_end(),
		};

		r = EVP_KDF_derive(kc, out, olen, p) == 1 ? 0 : -1;
	}
	EVP_KDF_CTX_free(kc);
	EVP_KDF_free(kdf);
	return r;
}

/* TLS 1.2 key block: PRF(master, "key expansion", server_random || client_random) */
static int
tls12_key_block(SSL *ssl, const EVP_MD *md, uint8_t *out, size_t olen)
{
	uint8_t ms[48], seed[13 + 64];
	size_t msn = SSL_SESSION_get_master_key(SSL_get_session(ssl), ms, sizeof(ms));
	EVP_KDF *kdf = EVP_KDF_fetch(NULL, OSSL_KDF_NAME_TLS1_PRF, NULL);
	EVP_KDF_CTX *kc = kdf != NULL ? EVP_KDF_CTX_new(kdf) : NULL;
	int r = -1;

	memcpy(seed, "key expansion", 13);
	if (kc != NULL && msn == sizeof(ms) && SSL_get_server_random(ssl, seed + 13, 32) == 32 &&
	    SSL_get_client_random(ssl, seed + 45, 32) == 32) {
		OSSL_PARAM p[] = {
			OSSL_PARAM_construct_utf8_string(OSSL_KDF_PARAM_DIGEST, (char *)EVP_MD_get0_name(md), 0),
			OSSL_PARAM_construct_octet_string(OSSL_KDF_PARAM_SECRET, ms, msn),
			OSSL_PARAM_construct_octet_string(OSSL_KDF_PARAM_SEED, seed, sizeof(seed)),
			OSSL_PARAM_construct_end(),
		};

		r = EVP_KDF_derive(kc, out, olen, p) == 1 ? 0 : -1;
	}
	OPENSSL_cleanse(ms, sizeof(ms));
	EVP_KDF_CTX_free(kc);
	EVP_KDF_free(kdf);
	return r;
}

/* the read key and IV from the 1.3 secret; the key into the cipher context */
static int
fast_keys13(struct stk_tls *t)
{
	const EVP_MD *md = SSL_CIPHER_get_handshake_digest(SSL_get_current_cipher(t->ssl));
	uint8_t key[32];
	int r;

	if (md == NULL || t->rsec_len != (size_t)EVP_MD_get_size(md))
		return -1;
	r = hkdf_label(md, t->rsec, t->rsec_len, "key", key, t->f.keylen) == 0 &&
			    hkdf_label(md, t->rsec, t->rsec_len, "iv", t->f.iv, 12) == 0 &&
			    EVP_DecryptInit_ex(t->f.cc, NULL, NULL, key, NULL) == 1 ?
		    0 :
		    -1;
	OPENSSL_cleanse(key, sizeof(key));
	return r;
}

/* the switch: keys for the next record, sequence number from OpenSSL's count */
static int
fast_switch(struct stk_tls *t)
{
	struct fast *f = &t->f;

	f->seq = t->rd_recs;
	if (f->v13) {
		if (fast_keys13(t) < 0)
			return -1;
	} else {
		const EVP_MD *md = SSL_CIPHER_get_handshake_digest(SSL_get_current_cipher(t->ssl));
		size_t ivl = f->xnonce ? 4 : 12;
		uint8_t kb[2 * 32 + 2 * 12];
		int r;

		if (md == NULL || tls12_key_block(t->ssl, md, kb, 2 * f->keylen + 2 * ivl) < 0)
			return -1;
		/* client_key, server_key, client_iv, server_iv: ours to read are the server's */
		memcpy(f->iv, kb + 2 * f->keylen + ivl, ivl);
		r = EVP_DecryptInit_ex(f->cc, NULL, NULL, kb + f->keylen, NULL) == 1 ? 0 : -1;
		OPENSSL_cleanse(kb, sizeof(kb));
		if (r < 0)
			return -1;
	}
	f->on = true;
	return 0;
}

int
stk_tls_fast_start(struct stk_tls *t, const struct stk_tls_rx_ops *ops, void *user)
{
	const SSL_CIPHER *sc;
	const EVP_CIPHER *ciph;
	struct fast *f = &t->f;
	int v;

	if (t->x->server || !t->open || t->failed || t->closed)
		return -EINVAL;
	if (t->armed)
		return 0;
	sc = SSL_get_current_cipher(t->ssl);
	v = SSL_version(t->ssl);
	if (sc == NULL || (v != TLS1_3_VERSION && v != TLS1_2_VERSION))
		return -ENOTSUP;
	f->nid = SSL_CIPHER_get_cipher_nid(sc);
	switch (f->nid) {
	case NID_aes_128_gcm:
		ciph = EVP_aes_128_gcm();
		f->keylen = 16;
		break;
	case NID_aes_256_gcm:
		ciph = EVP_aes_256_gcm();
		f->keylen = 32;
		break;
	case NID_chacha20_poly1305:
		ciph = EVP_chacha20_poly1305();
		f->keylen = 32;
		break;
	default:
		return -ENOTSUP; /* CCM, CBC, ...: OpenSSL's path */
	}
	f->v13 = v == TLS1_3_VERSION;
	f->xnonce = !f->v13 && f->nid != NID_chacha20_poly1305;
	if (f->v13 && t->rsec_len == 0)
		return -ENOTSUP; /* the secret was not seen */
	if (!f->v13 && SSL_SESSION_get_master_key(SSL_get_session(t->ssl), NULL, 0) != 48)
		return -ENOTSUP;
	f->cc = EVP_CIPHER_CTX_new();
	if (f->cc == NULL || EVP_DecryptInit_ex(f->cc, ciph, NULL, NULL, NULL) != 1) {
		EVP_CIPHER_CTX_free(f->cc);
		f->cc = NULL;
		ERR_clear_error();
		return -ENOMEM;
	}
	f->ops = ops;
	f->user = user;
	f->ku = -1;
	t->armed = true;
	return 0;
}

bool
stk_tls_fast_armed(const struct stk_tls *t)
{
	return t->armed;
}

static void
fast_discard_all(struct stk_tls *t)
{
	struct fast *f = &t->f;

	for (unsigned i = 0; i < f->n_held; i++)
		f->ops->discard(f->user, f->held[i].cookie);
	for (unsigned i = 0; i < f->n_spare; i++)
		f->ops->discard(f->user, f->spare[i].cookie);
	f->n_held = f->n_spare = 0;
}

static void
fast_release(struct stk_tls *t)
{
	OPENSSL_cleanse(t->rsec, sizeof(t->rsec));
	if (!t->armed)
		return;
	fast_discard_all(t);
	EVP_CIPHER_CTX_free(t->f.cc);
	t->f.cc = NULL;
	OPENSSL_cleanse(t->f.iv, sizeof(t->f.iv));
}

/* the session fails on the fast path: why, FAILED */
static int
fast_fail(struct stk_tls *t, enum stk_tls_fail why, const char *msg)
{
	t->failed = true;
	t->open = false;
	t->fail = why;
	snprintf(t->err, sizeof(t->err), "%s", msg);
	fast_discard_all(t);
	ERR_clear_error();
	return STK_TLS_FAILED;
}

/* an empty buffer to decrypt into: a spare one or the caller's */
static struct fast_buf *
fast_buf_get(struct stk_tls *t)
{
	struct fast *f = &t->f;
	struct fast_buf *b;

	if (f->n_held == STK_TLS_FAST_HELD)
		return NULL;
	b = &f->held[f->n_held];
	if (f->n_spare > 0) {
		*b = f->spare[--f->n_spare];
	} else {
		b->cookie = f->ops->get(f->user, &b->p, &b->cap);
		if (b->cookie == NULL)
			return NULL;
	}
	b->n = 0;
	f->n_held++;
	return b;
}

/* the held buffers back among the spares, emptied */
static void
fast_recycle(struct fast *f)
{
	for (unsigned i = 0; i < f->n_held; i++) {
		f->held[i].n = 0;
		f->spare[f->n_spare++] = f->held[i];
	}
	f->n_held = 0;
}

/* a verified data record: its buffers to the caller. AGAIN, or FAILED / the
 * session freed (t->zombie) by deliver. */
static int
fast_deliver(struct stk_tls *t)
{
	struct fast *f = &t->f;
	unsigned n = f->n_held, i;
	struct fast_buf hb[STK_TLS_FAST_HELD];

	memcpy(hb, f->held, n * sizeof(hb[0]));
	f->n_held = 0;
	for (i = 0; i < n; i++) {
		if (hb[i].n == 0) {
			f->spare[f->n_spare++] = hb[i];
			continue;
		}
		f->ops->deliver(f->user, hb[i].cookie, hb[i].n);
		if (t->zombie || t->failed) {
			/* the rest goes back empty */
			for (i++; i < n; i++)
				f->ops->discard(f->user, hb[i].cookie);
			return t->failed ? STK_TLS_FAILED : STK_TLS_AGAIN;
		}
	}
	return STK_TLS_AGAIN;
}

/* TLS 1.3 handshake messages after the handshake: tickets are skipped
 * (counted), a KeyUpdate must end its record */
static int
fast_hs_bytes(struct stk_tls *t, const uint8_t *p, size_t n, bool last_run)
{
	struct fast *f = &t->f;

	while (n > 0) {
		if (f->ku >= 0)
			return fast_fail(t, STK_TLS_FAIL_PROTOCOL, "data after a KeyUpdate in its record");
		if (f->hs_got < 4) {
			f->hs_hdr[f->hs_got++] = *p++;
			n--;
			if (f->hs_got < 4)
				continue;
			f->hs_left = (uint32_t)f->hs_hdr[1] << 16 | (uint32_t)f->hs_hdr[2] << 8 | f->hs_hdr[3];
			if (f->hs_hdr[0] != SSL3_MT_NEWSESSION_TICKET && f->hs_hdr[0] != SSL3_MT_KEY_UPDATE)
				return fast_fail(t, STK_TLS_FAIL_PROTOCOL, "unexpected handshake message after the handshake");
			if (f->hs_hdr[0] == SSL3_MT_KEY_UPDATE && f->hs_left != 1)
				return fast_fail(t, STK_TLS_FAIL_PROTOCOL, "bad KeyUpdate");
		} else {
			size_t k = n < f->hs_left ? n : f->hs_left;

			if (f->hs_hdr[0] == SSL3_MT_KEY_UPDATE) {
				if (p[0] > 1)
					return fast_fail(t, STK_TLS_FAIL_PROTOCOL, "bad KeyUpdate");
				f->ku = p[0];
			}
			p += k;
			n -= k;
			f->hs_left -= (uint32_t)k;
		}
		if (f->hs_got == 4 && f->hs_left == 0) {
			if (f->hs_hdr[0] == SSL3_MT_NEWSESSION_TICKET)
				t->x->stats.tickets_ignored++;
			f->hs_got = 0;
		}
	}
	(void)last_run;
	return 0;
}

/* a KeyUpdate from the server: the next read secret; our own update when asked */
static int
fast_key_update(struct stk_tls *t, bool requested)
{
	const EVP_MD *md = SSL_CIPHER_get_handshake_digest(SSL_get_current_cipher(t->ssl));
	uint8_t next[48];

	if (md == NULL || hkdf_label(md, t->rsec, t->rsec_len, "traffic upd", next, t->rsec_len) < 0)
		return fast_fail(t, STK_TLS_FAIL_PROTOCOL, "KeyUpdate: cannot derive the next secret");
	memcpy(t->rsec, next, t->rsec_len);
	OPENSSL_cleanse(next, sizeof(next));
	if (fast_keys13(t) < 0)
		return fast_fail(t, STK_TLS_FAIL_PROTOCOL, "KeyUpdate: cannot derive the next keys");
	t->f.seq = 0;
	if (requested && stk_tls_key_update(t, false) != 0)
		return STK_TLS_FAILED;
	return 0;
}

/* a record's tag verified: what it carries. AGAIN, CLOSED, FAILED. */
static int
fast_record_done(struct stk_tls *t)
{
	struct fast *f = &t->f;
	int type;

	f->seq++;
	t->x->stats.records_rx++;
	t->x->stats.records_rx_fast++;
	if (!f->v13) {
		type = f->hdr[0];
		if (type == SSL3_RT_APPLICATION_DATA)
			return fast_deliver(t);
	} else {
		/* TLSInnerPlaintext: content, type, zeros */
		type = 0;
		for (unsigned i = f->n_held; i-- > 0 && type == 0;) {
			struct fast_buf *b = &f->held[i];

			while (b->n > 0 && b->p[b->n - 1] == 0)
				b->n--;
			if (b->n > 0)
				type = b->p[--b->n];
		}
		if (type == SSL3_RT_APPLICATION_DATA) {
			if (f->hs_got > 0)
				return fast_fail(t, STK_TLS_FAIL_PROTOCOL, "data inside a handshake message");
			return fast_deliver(t);
		}
		if (type == SSL3_RT_HANDSHAKE) {
			for (unsigned i = 0; i < f->n_held; i++)
				if (fast_hs_bytes(t, f->held[i].p, f->held[i].n, i + 1 == f->n_held) < 0)
					return STK_TLS_FAILED;
			fast_recycle(f);
			if (f->ku >= 0) {
				int req = f->ku;

				f->ku = -1;
				return fast_key_update(t, req == 1) < 0 ? STK_TLS_FAILED : STK_TLS_AGAIN;
			}
			return STK_TLS_AGAIN;
		}
		if (type == SSL3_RT_ALERT) {
			f->ctl_n = 0;
			for (unsigned i = 0; i < f->n_held; i++)
				for (size_t j = 0; j < f->held[i].n; j++)
					if (f->ctl_n++ < sizeof(f->ctl))
						f->ctl[f->ctl_n - 1] = f->held[i].p[j];
			fast_recycle(f);
		}
	}
	if (type == SSL3_RT_ALERT) {
		char m[96];

		if (f->ctl_n != 2)
			return fast_fail(t, STK_TLS_FAIL_PROTOCOL, "bad alert record");
		if (f->ctl[1] == SSL3_AD_CLOSE_NOTIFY) {
			t->closed = true;
			fast_discard_all(t);
			return STK_TLS_CLOSED;
		}
		t->alert_rx = f->ctl[1];
		snprintf(m, sizeof(m), "alert from the peer: %s", SSL_alert_desc_string_long(f->ctl[1]));
		return fast_fail(t, STK_TLS_FAIL_ALERT, m);
	}
	return fast_fail(t, STK_TLS_FAIL_PROTOCOL, "unexpected record type after the handshake");
}

/* a record header: checks, nonce and AAD (1.2 GCM: after the explicit nonce) */
static int
fast_record_start(struct stk_tls *t)
{
	struct fast *f = &t->f;
	size_t len = (size_t)f->hdr[3] << 8 | f->hdr[4], over = TLS_TAG + (f->xnonce ? 8 : 0);
	uint8_t nonce[12], aad[13];
	int outl;

	if (f->hdr[1] != 0x03 || f->hdr[2] != 0x03)
		return fast_fail(t, STK_TLS_FAIL_PROTOCOL, "bad record version");
	if (f->v13) {
		if (f->hdr[0] != SSL3_RT_APPLICATION_DATA)
			return fast_fail(t, STK_TLS_FAIL_PROTOCOL, "unexpected record type after the handshake");
		if (len < TLS_TAG + 1 || len > TLS_MAX_PLAIN + 1 + TLS_TAG)
			return fast_fail(t, STK_TLS_FAIL_PROTOCOL, "bad record length");
	} else {
		if (f->hdr[0] == SSL3_RT_HANDSHAKE)
			return fast_fail(t, STK_TLS_FAIL_PROTOCOL,
					 "TLS 1.2 renegotiation is not supported on the receive fast path");
		if (f->hdr[0] != SSL3_RT_APPLICATION_DATA && f->hdr[0] != SSL3_RT_ALERT)
			return fast_fail(t, STK_TLS_FAIL_PROTOCOL, "unexpected record type after the handshake");
		if (len < over || len - over > TLS_MAX_PLAIN)
			return fast_fail(t, STK_TLS_FAIL_PROTOCOL, "bad record length");
		if (f->xnonce && f->xn_got < 8)
			return 0; /* the explicit nonce first */
	}
	f->body_left = len - over;
	f->to_ctl = f->hdr[0] == SSL3_RT_ALERT;
	f->ctl_n = 0;
	if (f->to_ctl && f->body_left != 2)
		return fast_fail(t, STK_TLS_FAIL_PROTOCOL, "bad alert record");
	if (f->xnonce) {
		memcpy(nonce, f->iv, 4);
		memcpy(nonce + 4, f->xn, 8);
	} else {
		memcpy(nonce, f->iv, 12);
		for (int i = 0; i < 8; i++)
			nonce[4 + i] ^= (uint8_t)(f->seq >> (56 - 8 * i));
	}
	if (f->v13) {
		memcpy(aad, f->hdr, 5);
	} else {
		for (int i = 0; i < 8; i++)
			aad[i] = (uint8_t)(f->seq >> (56 - 8 * i));
		aad[8] = f->hdr[0];
		aad[9] = 0x03;
		aad[10] = 0x03;
		aad[11] = (uint8_t)(f->body_left >> 8);
		aad[12] = (uint8_t)f->body_left;
	}
	if (EVP_DecryptInit_ex(f->cc, NULL, NULL, NULL, nonce) != 1 ||
	    EVP_DecryptUpdate(f->cc, NULL, &outl, aad, f->v13 ? 5 : 13) != 1)
		return fast_fail(t, STK_TLS_FAIL_PROTOCOL, "cannot start the record's decryption");
	return 0;
}

/* the rest of the borrowed input, record by record: AGAIN, CLOSED, FAILED */
static int
fast_input(struct stk_tls *t)
{
	struct fast *f = &t->f;

	while (t->in_n > 0) {
		if (f->hdr_got < 5) {
			f->hdr[f->hdr_got++] = *t->in++;
			t->in_n--;
			if (f->hdr_got == 5) {
				f->xn_got = f->tag_got = 0;
				f->body_left = 0;
				if (fast_record_start(t) < 0)
					return STK_TLS_FAILED;
			}
			continue;
		}
		if (f->xnonce && f->xn_got < 8) {
			f->xn[f->xn_got++] = *t->in++;
			t->in_n--;
			if (f->xn_got == 8 && fast_record_start(t) < 0)
				return STK_TLS_FAILED;
			continue;
		}
		if (f->body_left > 0) {
			size_t k = t->in_n < f->body_left ? t->in_n : f->body_left;
			uint8_t *out;
			int outl;

			if (f->to_ctl) {
				out = f->ctl + f->ctl_n;
				f->ctl_n += k;
			} else {
				struct fast_buf *b = f->n_held > 0 ? &f->held[f->n_held - 1] : NULL;

				if (b == NULL || b->n == b->cap) {
					b = fast_buf_get(t);
					if (b == NULL)
						return f->n_held == STK_TLS_FAST_HELD ?
							       fast_fail(t, STK_TLS_FAIL_PROTOCOL,
									 "plaintext buffers too small for a record") :
							       fast_fail(t, STK_TLS_FAIL_NOBUF, "no buffer for plaintext");
				}
				if (k > b->cap - b->n)
					k = b->cap - b->n;
				out = b->p + b->n;
				b->n += k;
			}
			if (EVP_DecryptUpdate(f->cc, out, &outl, t->in, (int)k) != 1 || (size_t)outl != k)
				return fast_fail(t, STK_TLS_FAIL_PROTOCOL, "decryption failed");
			t->in += k;
			t->in_n -= k;
			f->body_left -= k;
			continue;
		}
		{
			size_t k = TLS_TAG - f->tag_got;
			uint8_t fin[16];
			int outl = 0, r;

			if (k > t->in_n)
				k = t->in_n;
			memcpy(f->tag + f->tag_got, t->in, k);
			f->tag_got += (unsigned)k;
			t->in += k;
			t->in_n -= k;
			if (f->tag_got < TLS_TAG)
				break;
			f->hdr_got = 0;
			if (EVP_CIPHER_CTX_ctrl(f->cc, EVP_CTRL_AEAD_SET_TAG, TLS_TAG, f->tag) != 1 ||
			    EVP_DecryptFinal_ex(f->cc, fin, &outl) != 1 || outl != 0)
				return fast_fail(t, STK_TLS_FAIL_PROTOCOL, "decryption failed or bad record mac");
			r = fast_record_done(t);
			if (r != STK_TLS_AGAIN || t->zombie)
				return r;
		}
	}
	return STK_TLS_AGAIN;
}

/* before the switch: OpenSSL's records to the boundary, through get/deliver.
 * AGAIN with t->f.on once switched, AGAIN (more input needed), CLOSED, FAILED */
static int
fast_drain(struct stk_tls *t)
{
	for (;;) {
		struct fast *f = &t->f;
		struct fast_buf *b = fast_buf_get(t);
		size_t got = 0;
		int r, e;

		if (b == NULL)
			return fast_fail(t, STK_TLS_FAIL_NOBUF, "no buffer for plaintext");
		err_clear();
		r = SSL_read_ex(t->ssl, b->p, b->cap, &got);
		if (r == 1) {
			b->n = got;
			r = fast_deliver(t);
			if (r != STK_TLS_AGAIN || t->zombie)
				return r;
			continue;
		}
		fast_recycle(f);
		e = SSL_get_error(t->ssl, r);
		if (e == SSL_ERROR_WANT_READ && !t->tx_failed) {
			if (t->trk_hg > 0 || t->trk_body > 0 || SSL_has_pending(t->ssl)) {
				t->in_n = 0; /* the record in progress is not all here */
				return STK_TLS_AGAIN;
			}
			if (fast_switch(t) < 0)
				return fast_fail(t, STK_TLS_FAIL_PROTOCOL, "cannot derive the fast path's keys");
			return STK_TLS_AGAIN;
		}
		if (e == SSL_ERROR_ZERO_RETURN) {
			t->closed = true;
			t->in_n = 0;
			ERR_clear_error();
			fast_discard_all(t);
			return STK_TLS_CLOSED;
		}
		t->in_n = 0;
		r = tls_fail(t, r);
		fast_discard_all(t);
		return r;
	}
}

int
stk_tls_recv(struct stk_tls *t)
{
	int r;

	if (t->failed)
		return STK_TLS_FAILED;
	if (t->closed)
		return STK_TLS_CLOSED;
	if (!t->armed) {
		t->in_n = 0;
		return STK_TLS_AGAIN;
	}
	t->depth++;
	r = STK_TLS_AGAIN;
	if (!t->f.on)
		r = fast_drain(t);
	if (r == STK_TLS_AGAIN && !t->zombie && t->f.on)
		r = fast_input(t);
	t->in_n = 0;
	t->depth--;
	if (t->zombie) {
		t->zombie = false;
		stk_tls_free(t);
		return STK_TLS_AGAIN;
	}
	return r;
}

int
stk_tls_key_update(struct stk_tls *t, bool request_peer)
{
	int r;

	if (t->failed)
		return STK_TLS_FAILED;
	if (!t->open || t->close_sent || SSL_version(t->ssl) != TLS1_3_VERSION)
		return -ENOTSUP;
	err_clear();
	if (SSL_key_update(t->ssl, request_peer ? SSL_KEY_UPDATE_REQUESTED : SSL_KEY_UPDATE_NOT_REQUESTED) != 1)
		return tls_fail(t, 0);
	r = SSL_do_handshake(t->ssl); /* sends it now */
	if (r == 1 && !t->tx_failed)
		return 0;
	return tls_fail(t, r);
}

int
stk_tls_send_ticket(struct stk_tls *t)
{
	int r;

	if (t->failed)
		return STK_TLS_FAILED;
	if (!t->x->server || !t->open || SSL_version(t->ssl) != TLS1_3_VERSION)
		return -ENOTSUP;
	err_clear();
	if (SSL_new_session_ticket(t->ssl) != 1)
		return tls_fail(t, 0);
	r = SSL_do_handshake(t->ssl);
	if (r == 1 && !t->tx_failed)
		return 0;
	return tls_fail(t, r);
}
