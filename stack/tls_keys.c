/* SPDX-License-Identifier: BSD-3-Clause
 * tls_keys.c — the keys of the receive fast path (tls_fast.c) and the
 * messages that change them: what OpenSSL lets us see (the record count since
 * its last read-key change, a client's TLS 1.3 server traffic secret), the
 * read key and IV derived from it (TLS 1.3: HKDF-Expand-Label, RFC 8446 7.1,
 * 7.3; TLS 1.2: the key block from the master secret, RFC 5246 6.3), and the
 * TLS 1.3 handshake messages after the handshake (NewSessionTicket, RFC 8446
 * 4.6.1; KeyUpdate, 4.6.3 and 7.2).
 *
 *   stk_tls_msg_cb           every record header read or written: the record
 *                            counts; the server's CCS (1.2), Finished and
 *                            KeyUpdates (1.3) restart the read sequence
 *   stk_tls_keylog_cb        client: SERVER_TRAFFIC_SECRET_0 (1.3)
 *   stk_tls_fast_switch      the switch to the fast path: keys for the next
 *                            record, the sequence number from OpenSSL's count
 *   stk_tls_fast_hs_bytes    1.3 handshake messages on the fast path: tickets
 *                            skipped (counted), a KeyUpdate noted
 *   stk_tls_fast_key_update  the server's KeyUpdate: the next read secret and
 *                            keys; our own update when it asks
 *   stk_tls_key_update       send a KeyUpdate (1.3)
 *   stk_tls_send_ticket      server: send a NewSessionTicket (1.3)
 *   stk_tls_ticket_free      a client's kept ticket */
#include <string.h>

#include <openssl/core_names.h>
#include <openssl/evp.h>
#include <openssl/kdf.h>
#include <openssl/ssl.h>

#include "tls_priv.h"

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

/* every record header read or written: the record counts; the read side's
 * key changes (the fast path's sequence number and 1.3 secret) */
void
stk_tls_msg_cb(int write_p, int version, int content_type, const void *buf, size_t len, SSL *ssl, void *arg)
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
void
stk_tls_keylog_cb(const SSL *ssl, const char *line)
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
int
stk_tls_fast_switch(struct stk_tls *t)
{
	struct stk_tls_fast *f = &t->f;

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

/* TLS 1.3 handshake messages after the handshake: tickets are skipped
 * (counted), a KeyUpdate must end its record */
int
stk_tls_fast_hs_bytes(struct stk_tls *t, const uint8_t *p, size_t n, bool last_run)
{
	struct stk_tls_fast *f = &t->f;

	while (n > 0) {
		if (f->ku >= 0)
			return stk_tls_fast_fail(t, STK_TLS_FAIL_PROTOCOL, "data after a KeyUpdate in its record");
		if (f->hs_got < 4) {
			f->hs_hdr[f->hs_got++] = *p++;
			n--;
			if (f->hs_got < 4)
				continue;
			f->hs_left = (uint32_t)f->hs_hdr[1] << 16 | (uint32_t)f->hs_hdr[2] << 8 | f->hs_hdr[3];
			if (f->hs_hdr[0] != SSL3_MT_NEWSESSION_TICKET && f->hs_hdr[0] != SSL3_MT_KEY_UPDATE)
				return stk_tls_fast_fail(t, STK_TLS_FAIL_PROTOCOL, "unexpected handshake message after the handshake");
			if (f->hs_hdr[0] == SSL3_MT_KEY_UPDATE && f->hs_left != 1)
				return stk_tls_fast_fail(t, STK_TLS_FAIL_PROTOCOL, "bad KeyUpdate");
		} else {
			size_t k = n < f->hs_left ? n : f->hs_left;

			if (f->hs_hdr[0] == SSL3_MT_KEY_UPDATE) {
				if (p[0] > 1)
					return stk_tls_fast_fail(t, STK_TLS_FAIL_PROTOCOL, "bad KeyUpdate");
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
int
stk_tls_fast_key_update(struct stk_tls *t, bool requested)
{
	const EVP_MD *md = SSL_CIPHER_get_handshake_digest(SSL_get_current_cipher(t->ssl));
	uint8_t next[48];

	if (md == NULL || hkdf_label(md, t->rsec, t->rsec_len, "traffic upd", next, t->rsec_len) < 0)
		return stk_tls_fast_fail(t, STK_TLS_FAIL_PROTOCOL, "KeyUpdate: cannot derive the next secret");
	memcpy(t->rsec, next, t->rsec_len);
	OPENSSL_cleanse(next, sizeof(next));
	if (fast_keys13(t) < 0)
		return stk_tls_fast_fail(t, STK_TLS_FAIL_PROTOCOL, "KeyUpdate: cannot derive the next keys");
	t->f.seq = 0;
	if (requested && stk_tls_key_update(t, false) != 0)
		return STK_TLS_FAILED;
	return 0;
}

int
stk_tls_key_update(struct stk_tls *t, bool request_peer)
{
	int r;

	if (t->failed)
		return STK_TLS_FAILED;
	if (!t->open || t->close_sent || SSL_version(t->ssl) != TLS1_3_VERSION)
		return -ENOTSUP;
	stk_tls_err_clear();
	if (SSL_key_update(t->ssl, request_peer ? SSL_KEY_UPDATE_REQUESTED : SSL_KEY_UPDATE_NOT_REQUESTED) != 1)
		return stk_tls_ssl_fail(t, 0);
	r = SSL_do_handshake(t->ssl); /* sends it now */
	if (r == 1 && !t->tx_failed)
		return 0;
	return stk_tls_ssl_fail(t, r);
}

int
stk_tls_send_ticket(struct stk_tls *t)
{
	int r;

	if (t->failed)
		return STK_TLS_FAILED;
	if (!t->x->server || !t->open || SSL_version(t->ssl) != TLS1_3_VERSION)
		return -ENOTSUP;
	stk_tls_err_clear();
	if (SSL_new_session_ticket(t->ssl) != 1)
		return stk_tls_ssl_fail(t, 0);
	r = SSL_do_handshake(t->ssl);
	if (r == 1 && !t->tx_failed)
		return 0;
	return stk_tls_ssl_fail(t, r);
}

void
stk_tls_ticket_free(void *ticket)
{
	SSL_SESSION_free(ticket);
}
