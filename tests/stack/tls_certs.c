/* SPDX-License-Identifier: BSD-3-Clause
 * tls_certs.c — see tls_certs.h. P-256 keys, SHA-256 signatures, X.509 v3
 * with the extensions a verifier checks (basicConstraints, keyUsage, SAN). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>

#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509v3.h>

#include "tls_certs.h"

static int
add_ext(X509 *c, X509 *issuer, int nid, const char *value)
{
	X509V3_CTX v;
	X509_EXTENSION *e;
	int ok;

	X509V3_set_ctx_nodb(&v);
	X509V3_set_ctx(&v, issuer, c, NULL, NULL, 0);
	e = X509V3_EXT_conf_nid(NULL, &v, nid, value);
	if (e == NULL)
		return -1;
	ok = X509_add_ext(c, e, -1);
	X509_EXTENSION_free(e);
	return ok == 1 ? 0 : -1;
}

/* a certificate for key k, valid from now + from_s to now + to_s; issuer NULL:
 * self-signed CA */
static X509 *
mkcert(EVP_PKEY *k, const char *cn, X509 *issuer, EVP_PKEY *ikey, long from_s, long to_s, const char *san,
       long serial)
{
	X509 *c = X509_new();
	X509_NAME *n;

	if (c == NULL)
		return NULL;
	X509_set_version(c, 2);
	ASN1_INTEGER_set(X509_get_serialNumber(c), serial);
	X509_gmtime_adj(X509_getm_notBefore(c), from_s);
	X509_gmtime_adj(X509_getm_notAfter(c), to_s);
	X509_set_pubkey(c, k);
	n = X509_get_subject_name(c);
	X509_NAME_add_entry_by_txt(n, "CN", MBSTRING_ASC, (const unsigned char *)cn, -1, -1, 0);
	X509_set_issuer_name(c, issuer != NULL ? X509_get_subject_name(issuer) : n);
	if (issuer == NULL) {
		if (add_ext(c, c, NID_basic_constraints, "critical,CA:TRUE") < 0 ||
		    add_ext(c, c, NID_key_usage, "critical,keyCertSign,cRLSign") < 0 ||
		    add_ext(c, c, NID_subject_key_identifier, "hash") < 0)
			goto fail;
	} else {
		if (add_ext(c, issuer, NID_basic_constraints, "critical,CA:FALSE") < 0 ||
		    add_ext(c, issuer, NID_key_usage, "critical,digitalSignature") < 0 ||
		    add_ext(c, issuer, NID_ext_key_usage, "serverAuth") < 0 ||
		    add_ext(c, issuer, NID_subject_alt_name, san) < 0 ||
		    add_ext(c, issuer, NID_authority_key_identifier, "keyid") < 0)
			goto fail;
	}
	if (X509_sign(c, ikey != NULL ? ikey : k, EVP_sha256()) == 0)
		goto fail;
	return c;
fail:
	X509_free(c);
	return NULL;
}

/* the certificate c (c NULL: the key k) into path, as PEM */
static int
write_pem(const char *path, X509 *c, EVP_PKEY *k)
{
	FILE *f = fopen(path, "w");
	int ok;

	if (f == NULL)
		return -1;
	ok = c != NULL ? PEM_write_X509(f, c) : PEM_write_PrivateKey(f, k, NULL, NULL, 0, NULL, NULL);
	return fclose(f) == 0 && ok == 1 ? 0 : -1;
}

/* a server certificate and its key into cert / key */
static int
leaf(const char *cert, const char *key, const char *cn, const char *san, X509 *ca, EVP_PKEY *cakey, long from_s,
     long to_s, long serial)
{
	EVP_PKEY *k = EVP_EC_gen("P-256");
	X509 *c = k != NULL ? mkcert(k, cn, ca, cakey, from_s, to_s, san, serial) : NULL;
	int rc = c != NULL && write_pem(cert, c, NULL) == 0 && write_pem(key, NULL, k) == 0 ? 0 : -1;

	X509_free(c);
	EVP_PKEY_free(k);
	return rc;
}

int
tls_certs_make(struct tls_certs *c, const char *base)
{
	EVP_PKEY *cak = NULL, *rk = NULL;
	X509 *ca = NULL, *rca = NULL;
	char cadir_cert[400];
	int rc = -1;

	memset(c, 0, sizeof(*c));
	snprintf(c->dir, sizeof(c->dir), "%s/tls_certs.XXXXXX", base);
	if (mkdtemp(c->dir) == NULL)
		return -1;
	snprintf(c->ca, sizeof(c->ca), "%s/ca.pem", c->dir);
	snprintf(c->ca_dir, sizeof(c->ca_dir), "%s/cadir", c->dir);
	snprintf(c->good, sizeof(c->good), "%s/good.pem", c->dir);
	snprintf(c->good_key, sizeof(c->good_key), "%s/good.key", c->dir);
	snprintf(c->wrong, sizeof(c->wrong), "%s/wrong.pem", c->dir);
	snprintf(c->wrong_key, sizeof(c->wrong_key), "%s/wrong.key", c->dir);
	snprintf(c->expired, sizeof(c->expired), "%s/expired.pem", c->dir);
	snprintf(c->expired_key, sizeof(c->expired_key), "%s/expired.key", c->dir);
	snprintf(c->rogue, sizeof(c->rogue), "%s/rogue.pem", c->dir);
	snprintf(c->rogue_key, sizeof(c->rogue_key), "%s/rogue.key", c->dir);
	snprintf(cadir_cert, sizeof(cadir_cert), "%s/ca.crt", c->ca_dir);
	cak = EVP_EC_gen("P-256");
	rk = EVP_EC_gen("P-256");
	if (cak == NULL || rk == NULL)
		goto out;
	ca = mkcert(cak, "lcpipe test CA", NULL, NULL, -3600, 86400L * 30, NULL, 1);
	rca = mkcert(rk, "lcpipe rogue CA", NULL, NULL, -3600, 86400L * 30, NULL, 1);
	if (ca == NULL || rca == NULL || write_pem(c->ca, ca, NULL) < 0 || mkdir(c->ca_dir, 0700) != 0 ||
	    write_pem(cadir_cert, ca, NULL) < 0)
		goto out;
	if (leaf(c->good, c->good_key, TLS_TEST_HOST, "DNS:" TLS_TEST_HOST ",IP:" TLS_TEST_IP, ca, cak, -3600,
		 86400L * 30, 2) < 0 ||
	    leaf(c->wrong, c->wrong_key, "other.example.test", "DNS:other.example.test", ca, cak, -3600, 86400L * 30,
		 3) < 0 ||
	    leaf(c->expired, c->expired_key, TLS_TEST_HOST, "DNS:" TLS_TEST_HOST, ca, cak, -86400L * 30, -86400L, 4) <
		    0 ||
	    leaf(c->rogue, c->rogue_key, TLS_TEST_HOST, "DNS:" TLS_TEST_HOST, rca, rk, -3600, 86400L * 30, 5) < 0)
		goto out;
	rc = 0;
out:
	X509_free(ca);
	X509_free(rca);
	EVP_PKEY_free(cak);
	EVP_PKEY_free(rk);
	if (rc < 0)
		tls_certs_remove(c);
	return rc;
}

bool
tls_certs_once(struct tls_certs *c, const char *base, void (*cleanup)(void))
{
	static int state; /* 0 not made, 1 made, -1 failed */

	if (state == 0) {
		state = tls_certs_make(c, base) == 0 ? 1 : -1;
		if (state == 1)
			atexit(cleanup);
	}
	return state == 1;
}

void
tls_certs_remove(const struct tls_certs *c)
{
	const char *files[] = { c->ca, c->good, c->good_key, c->wrong, c->wrong_key, c->expired,
				c->expired_key, c->rogue, c->rogue_key };
	char cadir_cert[400];

	if (c->dir[0] == '\0')
		return;
	for (unsigned i = 0; i < sizeof(files) / sizeof(files[0]); i++)
		unlink(files[i]);
	snprintf(cadir_cert, sizeof(cadir_cert), "%s/ca.crt", c->ca_dir);
	unlink(cadir_cert);
	rmdir(c->ca_dir);
	rmdir(c->dir);
}
