/* SPDX-License-Identifier: BSD-3-Clause
 * tls_certs.h — a throw-away PKI for TLS tests (libcrypto, no openssl CLI):
 * a CA, server certificates signed by it, PEM files in a fresh directory. */
#ifndef TESTS_STACK_TLS_CERTS_H
#define TESTS_STACK_TLS_CERTS_H

#include <stdbool.h>

#define TLS_TEST_HOST "feed.example.test"
#define TLS_TEST_IP "10.77.0.1"

struct tls_certs {
	char dir[256];
	char ca[300];           /* the CA's certificate */
	char ca_dir[300];       /* a directory holding only the CA's certificate */
	char good[300], good_key[300];       /* TLS_TEST_HOST + TLS_TEST_IP, valid */
	char wrong[300], wrong_key[300];     /* other.example.test, valid */
	char expired[300], expired_key[300]; /* TLS_TEST_HOST, expired yesterday */
	char rogue[300], rogue_key[300];     /* TLS_TEST_HOST, signed by another CA */
};

/* make the PKI in a new directory below base ("." for the working directory);
 * 0 or -1 */
int tls_certs_make(struct tls_certs *c, const char *base);
void tls_certs_remove(const struct tls_certs *c);
/* for a process that runs many inputs (fuzz targets): the PKI made in c on the
 * first call, below base, and cleanup (which removes it) registered with
 * atexit; whether it is there */
bool tls_certs_once(struct tls_certs *c, const char *base, void (*cleanup)(void));

#endif
