/* SPDX-License-Identifier: BSD-3-Clause
 * kbench_tls.h — the byte stream of the kernel-socket benchmark programs
 * (B12's and B14's b12_feed_server and b12_kernel_client): a kernel TCP socket,
 * plain or with OpenSSL's libssl on it (SSL_set_fd: OpenSSL's socket BIO, the
 * way a kernel-socket application runs TLS). Header only, like kbench.h; the
 * programs link libssl through libstk.
 *
 *   kb_tls_suite         a suite name -> the TLS version it implies
 *   kb_tls_server_ctx    SSL_CTX for the feed: one version, one suite, the
 *                        certificate chain and key, no session tickets
 *   kb_tls_client_ctx    SSL_CTX for the client: one version, one suite, the
 *                        CA file as the only trust anchor, read-ahead or not
 *   kb_io_send_all       send / SSL_write all bytes
 *   kb_io_recv           recv / SSL_read once: > 0 bytes, 0 EOF (or
 *                        close_notify), -1 error
 *
 * One knob picks the protocol: a suite whose name starts with "TLS_" is a TLS
 * 1.3 ciphersuite (SSL_CTX_set_ciphersuites, both ends pinned to TLS 1.3),
 * anything else a TLS 1.2 cipher list (SSL_CTX_set_cipher_list, pinned to 1.2),
 * so every receiver of a run negotiates the same suite or fails. */
#ifndef LCP_KBENCH_TLS_H
#define LCP_KBENCH_TLS_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>

#include <openssl/err.h>
#include <openssl/ssl.h>
#include <openssl/x509v3.h>

#include "kbench.h"

struct kb_io {
	int fd;
	SSL *ssl; /* NULL: plain TCP */
};

static inline int
kb_tls_suite(SSL_CTX *c, const char *suite)
{
	int v = strncmp(suite, "TLS_", 4) == 0 ? TLS1_3_VERSION : TLS1_2_VERSION;

	if (SSL_CTX_set_min_proto_version(c, v) != 1 || SSL_CTX_set_max_proto_version(c, v) != 1)
		return -1;
	if (v == TLS1_3_VERSION)
		return SSL_CTX_set_ciphersuites(c, suite) == 1 ? 0 : -1;
	return SSL_CTX_set_cipher_list(c, suite) == 1 ? 0 : -1;
}

static inline const char *
kb_tls_err(void)
{
	static char b[160];
	unsigned long e = ERR_peek_last_error();

	if (e == 0)
		return "no OpenSSL error";
	ERR_error_string_n(e, b, sizeof(b));
	return b;
}

static inline SSL_CTX *
kb_tls_server_ctx(const char *cert, const char *key, const char *suite)
{
	SSL_CTX *c = SSL_CTX_new(TLS_server_method());

	if (c == NULL || kb_tls_suite(c, suite) < 0 || SSL_CTX_use_certificate_chain_file(c, cert) != 1 ||
	    SSL_CTX_use_PrivateKey_file(c, key, SSL_FILETYPE_PEM) != 1 || SSL_CTX_check_private_key(c) != 1) {
		fprintf(stderr, "TLS server context (suite %s, %s, %s): %s\n", suite, cert, key, kb_tls_err());
		SSL_CTX_free(c);
		return NULL;
	}
	SSL_CTX_set_options(c, SSL_OP_NO_TICKET | SSL_OP_NO_RENEGOTIATION | SSL_OP_NO_COMPRESSION);
	SSL_CTX_set_num_tickets(c, 0);
	SSL_CTX_set_session_cache_mode(c, SSL_SESS_CACHE_OFF);
	return c;
}

static inline SSL_CTX *
kb_tls_client_ctx(const char *ca, const char *suite, bool read_ahead)
{
	SSL_CTX *c = SSL_CTX_new(TLS_client_method());

	if (c == NULL || kb_tls_suite(c, suite) < 0 || SSL_CTX_load_verify_file(c, ca) != 1) {
		fprintf(stderr, "TLS client context (suite %s, CA %s): %s\n", suite, ca, kb_tls_err());
		SSL_CTX_free(c);
		return NULL;
	}
	SSL_CTX_set_options(c, SSL_OP_NO_TICKET | SSL_OP_NO_RENEGOTIATION | SSL_OP_NO_COMPRESSION);
	SSL_CTX_set_verify(c, SSL_VERIFY_PEER, NULL);
	/* read-ahead: one recv() of up to a whole record buffer instead of a
	 * 5-byte header read and a body read per record */
	SSL_CTX_set_read_ahead(c, read_ahead ? 1 : 0);
	return c;
}

static inline int
kb_io_send_all(const struct kb_io *io, const void *p, size_t n)
{
	if (io->ssl == NULL)
		return kb_send_all(io->fd, p, n);
	while (n > 0) {
		size_t done = 0;

		if (SSL_write_ex(io->ssl, p, n, &done) != 1)
			return -1;
		p = (const uint8_t *)p + done;
		n -= done;
	}
	return 0;
}

static inline ssize_t
kb_io_recv(const struct kb_io *io, void *p, size_t n)
{
	size_t got = 0;
	int r, e;

	if (io->ssl == NULL) {
		ssize_t k;

		do
			k = recv(io->fd, p, n, 0);
		while (k < 0 && errno == EINTR);
		return k < 0 ? -1 : k;
	}
	r = SSL_read_ex(io->ssl, p, n, &got);
	if (r == 1)
		return (ssize_t)got;
	e = SSL_get_error(io->ssl, r);
	return e == SSL_ERROR_ZERO_RETURN ? 0 : -1;
}

/* bytes already decrypted and waiting inside OpenSSL (poll() cannot see them) */
static inline bool
kb_io_pending(const struct kb_io *io)
{
	return io->ssl != NULL && SSL_pending(io->ssl) > 0;
}

#endif
