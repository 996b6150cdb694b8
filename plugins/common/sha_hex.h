/* SPDX-License-Identifier: BSD-3-Clause
 * sha_hex.h — the SHA-256 of what a running digest has taken so far, in hex,
 * for the stages that report what they received by its hash (tcp_app, and the
 * tests' msg_hash sink). Header only: libcrypto is linked by its users.
 */
#ifndef LCP_SHA_HEX_H
#define LCP_SHA_HEX_H

#include <stdio.h>

#include <openssl/evp.h>

/* hex: 64 lowercase hex digits of the digest of a copy of md (md itself goes
 * on taking data); "" when md is NULL, not SHA-256, or libcrypto fails */
static inline void
sha256_hex(const EVP_MD_CTX *md, char hex[65])
{
	unsigned char d[EVP_MAX_MD_SIZE];
	unsigned len = 0;
	EVP_MD_CTX *t = EVP_MD_CTX_new();

	hex[0] = '\0';
	if (t == NULL || md == NULL || EVP_MD_CTX_copy_ex(t, md) != 1 || EVP_DigestFinal_ex(t, d, &len) != 1 ||
	    len != 32) {
		EVP_MD_CTX_free(t);
		return;
	}
	EVP_MD_CTX_free(t);
	for (unsigned i = 0; i < len; i++)
		snprintf(hex + 2 * i, 3, "%02x", d[i]);
}

#endif
