/* SPDX-License-Identifier: BSD-3-Clause
 * tls_ctx.c — TLS contexts (stk/tls.h): one SSL_CTX per configuration, shared
 * by its sessions: versions (TLS 1.2, 1.3), ciphers, the trust store (whole
 * files, read now) and peer verification, the server's certificate and key,
 * tickets (stateless, RFC 8446 4.6.1 / RFC 5077), ALPN (RFC 7301), our BIO
 * method (tls.c), and the callbacks every session of it reports through.
 *
 *   stk_tls_ctx_new     the context from stk_tls_conf, or NULL and a message
 *   stk_tls_ctx_free    the context (after its sessions)
 *   stk_tls_ctx_stats   records, bytes and tickets, all its sessions
 *   stk_tls_errstr      OpenSSL's last error as text (tls.c too)
 *
 * Callbacks set here: info_cb (the fatal alert a peer sent, for
 * stk_tls_failure), new_session_cb (a client's ticket into its slot),
 * alpn_select_cb (a server's "http/1.1"), and from tls_keys.c stk_tls_msg_cb
 * (record counts, the read side's key changes) and stk_tls_keylog_cb (a
 * client's TLS 1.3 server traffic secret). */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/ssl.h>
#include <openssl/x509v3.h>

#include "tls_priv.h"

/* a fatal alert from the peer: kept for stk_tls_failure */
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

/* server: "http/1.1" when the client offers it, else no ALPN */
static int
alpn_select_cb(SSL *ssl, const unsigned char **out, unsigned char *outlen, const unsigned char *in,
	       unsigned inlen, void *arg)
{
	unsigned char *sel;

	if (SSL_select_next_proto(&sel, outlen, stk_tls_alpn_http11, sizeof(stk_tls_alpn_http11), in,
				  inlen) != OPENSSL_NPN_NEGOTIATED)
		return SSL_TLSEXT_ERR_NOACK; /* go on without ALPN */
	*out = sel;
	return SSL_TLSEXT_ERR_OK;
}

/* OpenSSL's last error as text, in buf */
const char *
stk_tls_errstr(char *buf, size_t len)
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
		snprintf(err, errlen, "ca_file %s: %s", c->ca_file, stk_tls_errstr(e, sizeof(e)));
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
	x->bio = stk_tls_bio_method();
	if (x->ssl == NULL || x->bio == NULL) {
		snprintf(err, errlen, "cannot create the TLS context: %s", stk_tls_errstr(e, sizeof(e)));
		goto fail;
	}
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
	SSL_CTX_set_msg_callback(x->ssl, stk_tls_msg_cb);
	SSL_CTX_set_msg_callback_arg(x->ssl, x);
	SSL_CTX_set_info_callback(x->ssl, info_cb);
	if (!c->server)
		SSL_CTX_set_keylog_callback(x->ssl, stk_tls_keylog_cb);
	if (c->server) {
		if (c->cert_file == NULL || !c->cert_file[0] || c->key_file == NULL || !c->key_file[0]) {
			snprintf(err, errlen, "a TLS server needs a certificate and a key");
			goto fail;
		}
		if (SSL_CTX_use_certificate_chain_file(x->ssl, c->cert_file) != 1) {
			snprintf(err, errlen, "certificate %s: %s", c->cert_file, stk_tls_errstr(e, sizeof(e)));
			goto fail;
		}
		if (SSL_CTX_use_PrivateKey_file(x->ssl, c->key_file, SSL_FILETYPE_PEM) != 1 &&
		    ERR_GET_REASON(ERR_peek_last_error()) != X509_R_KEY_VALUES_MISMATCH) {
			snprintf(err, errlen, "key %s: %s", c->key_file, stk_tls_errstr(e, sizeof(e)));
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
