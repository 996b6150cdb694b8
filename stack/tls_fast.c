/* SPDX-License-Identifier: BSD-3-Clause
 * tls_fast.c — the receive fast path of a TLS client session (stk/tls.h):
 * once armed, records are decrypted by EVP AEAD (AES-GCM, ChaCha20-Poly1305)
 * straight from the borrowed ciphertext into buffers the caller lends
 * (stk_tls_rx_ops), instead of through OpenSSL's record buffer and
 * SSL_read_ex. Record protection as in RFC 8446 5.2-5.3 (TLS 1.3: per-record
 * nonce from the IV and the sequence number, the header as AAD, the inner
 * content type at the end) and RFC 5246 6.2.3.3 with RFC 5288 / RFC 7905
 * (TLS 1.2: explicit or implicit nonce, the sequence number in the AAD).
 *
 *   stk_tls_fast_start  arm: the suite (AEAD only, else -ENOTSUP), a cipher
 *                       context; the keys come at the switch (tls_keys.c)
 *   stk_tls_recv        armed: before the switch fast_drain (OpenSSL's
 *                       records to a record boundary through the lent
 *                       buffers, then stk_tls_fast_switch); after it
 *                       fast_input
 *   fast_input          the borrowed bytes record by record: header
 *                       (fast_record_start: checks, nonce, AAD), body
 *                       decrypted into lent buffers, tag verified, then
 *                       fast_record_done: data delivered (fast_deliver),
 *                       1.3 handshake messages to tls_keys.c, alerts
 *   stk_tls_fast_fail   the session fails on the fast path, with a reason
 *   stk_tls_fast_release  lent buffers back, the cipher context freed
 *
 * Framing. The read sequence number is the count of records OpenSSL read
 * since its last read-key change (tls_keys.c). Armed, the BIO (tls.c) feeds
 * OpenSSL only to the end of the record in progress; once SSL_read wants
 * more with nothing pending, the keys are derived and every later record is
 * ours. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/ssl.h>

#include "tls_priv.h"

int
stk_tls_fast_start(struct stk_tls *t, const struct stk_tls_rx_ops *ops, void *user)
{
	const SSL_CIPHER *sc;
	const EVP_CIPHER *ciph;
	struct stk_tls_fast *f = &t->f;
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
	struct stk_tls_fast *f = &t->f;

	for (unsigned i = 0; i < f->n_held; i++)
		f->ops->discard(f->user, f->held[i].cookie);
	for (unsigned i = 0; i < f->n_spare; i++)
		f->ops->discard(f->user, f->spare[i].cookie);
	f->n_held = f->n_spare = 0;
}

void
stk_tls_fast_release(struct stk_tls *t)
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
int
stk_tls_fast_fail(struct stk_tls *t, enum stk_tls_fail why, const char *msg)
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
static struct stk_tls_fast_buf *
fast_buf_get(struct stk_tls *t)
{
	struct stk_tls_fast *f = &t->f;
	struct stk_tls_fast_buf *b;

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
fast_recycle(struct stk_tls_fast *f)
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
	struct stk_tls_fast *f = &t->f;
	unsigned n = f->n_held, i;
	struct stk_tls_fast_buf hb[STK_TLS_FAST_HELD];

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

/* a record's tag verified: what it carries. AGAIN, CLOSED, FAILED. */
static int
fast_record_done(struct stk_tls *t)
{
	struct stk_tls_fast *f = &t->f;
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
			struct stk_tls_fast_buf *b = &f->held[i];

			while (b->n > 0 && b->p[b->n - 1] == 0)
				b->n--;
			if (b->n > 0)
				type = b->p[--b->n];
		}
		if (type == SSL3_RT_APPLICATION_DATA) {
			if (f->hs_got > 0)
				return stk_tls_fast_fail(t, STK_TLS_FAIL_PROTOCOL, "data inside a handshake message");
			return fast_deliver(t);
		}
		if (type == SSL3_RT_HANDSHAKE) {
			for (unsigned i = 0; i < f->n_held; i++)
				if (stk_tls_fast_hs_bytes(t, f->held[i].p, f->held[i].n, i + 1 == f->n_held) < 0)
					return STK_TLS_FAILED;
			fast_recycle(f);
			if (f->ku >= 0) {
				int req = f->ku;

				f->ku = -1;
				return stk_tls_fast_key_update(t, req == 1) < 0 ? STK_TLS_FAILED : STK_TLS_AGAIN;
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
			return stk_tls_fast_fail(t, STK_TLS_FAIL_PROTOCOL, "bad alert record");
		if (f->ctl[1] == SSL3_AD_CLOSE_NOTIFY) {
			t->closed = true;
			fast_discard_all(t);
			return STK_TLS_CLOSED;
		}
		t->alert_rx = f->ctl[1];
		snprintf(m, sizeof(m), "alert from the peer: %s", SSL_alert_desc_string_long(f->ctl[1]));
		return stk_tls_fast_fail(t, STK_TLS_FAIL_ALERT, m);
	}
	return stk_tls_fast_fail(t, STK_TLS_FAIL_PROTOCOL, "unexpected record type after the handshake");
}

/* a record header: checks, nonce and AAD (1.2 GCM: after the explicit nonce) */
static int
fast_record_start(struct stk_tls *t)
{
	struct stk_tls_fast *f = &t->f;
	size_t len = (size_t)f->hdr[3] << 8 | f->hdr[4], over = TLS_TAG + (f->xnonce ? 8 : 0);
	uint8_t nonce[12], aad[13];
	int outl;

	if (f->hdr[1] != 0x03 || f->hdr[2] != 0x03)
		return stk_tls_fast_fail(t, STK_TLS_FAIL_PROTOCOL, "bad record version");
	if (f->v13) {
		if (f->hdr[0] != SSL3_RT_APPLICATION_DATA)
			return stk_tls_fast_fail(t, STK_TLS_FAIL_PROTOCOL, "unexpected record type after the handshake");
		if (len < TLS_TAG + 1 || len > TLS_MAX_PLAIN + 1 + TLS_TAG)
			return stk_tls_fast_fail(t, STK_TLS_FAIL_PROTOCOL, "bad record length");
	} else {
		if (f->hdr[0] == SSL3_RT_HANDSHAKE)
			return stk_tls_fast_fail(t, STK_TLS_FAIL_PROTOCOL,
					 "TLS 1.2 renegotiation is not supported on the receive fast path");
		if (f->hdr[0] != SSL3_RT_APPLICATION_DATA && f->hdr[0] != SSL3_RT_ALERT)
			return stk_tls_fast_fail(t, STK_TLS_FAIL_PROTOCOL, "unexpected record type after the handshake");
		if (len < over || len - over > TLS_MAX_PLAIN)
			return stk_tls_fast_fail(t, STK_TLS_FAIL_PROTOCOL, "bad record length");
		if (f->xnonce && f->xn_got < 8)
			return 0; /* the explicit nonce first */
	}
	f->body_left = len - over;
	f->to_ctl = f->hdr[0] == SSL3_RT_ALERT;
	f->ctl_n = 0;
	if (f->to_ctl && f->body_left != 2)
		return stk_tls_fast_fail(t, STK_TLS_FAIL_PROTOCOL, "bad alert record");
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
		return stk_tls_fast_fail(t, STK_TLS_FAIL_PROTOCOL, "cannot start the record's decryption");
	return 0;
}

/* the rest of the borrowed input, record by record: AGAIN, CLOSED, FAILED */
static int
fast_input(struct stk_tls *t)
{
	struct stk_tls_fast *f = &t->f;

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
				struct stk_tls_fast_buf *b = f->n_held > 0 ? &f->held[f->n_held - 1] : NULL;

				if (b == NULL || b->n == b->cap) {
					b = fast_buf_get(t);
					if (b == NULL)
						return f->n_held == STK_TLS_FAST_HELD ?
							       stk_tls_fast_fail(t, STK_TLS_FAIL_PROTOCOL,
									 "plaintext buffers too small for a record") :
							       stk_tls_fast_fail(t, STK_TLS_FAIL_NOBUF, "no buffer for plaintext");
				}
				if (k > b->cap - b->n)
					k = b->cap - b->n;
				out = b->p + b->n;
				b->n += k;
			}
			if (EVP_DecryptUpdate(f->cc, out, &outl, t->in, (int)k) != 1 || (size_t)outl != k)
				return stk_tls_fast_fail(t, STK_TLS_FAIL_PROTOCOL, "decryption failed");
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
				return stk_tls_fast_fail(t, STK_TLS_FAIL_PROTOCOL, "decryption failed or bad record mac");
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
		struct stk_tls_fast *f = &t->f;
		struct stk_tls_fast_buf *b = fast_buf_get(t);
		size_t got = 0;
		int r, e;

		if (b == NULL)
			return stk_tls_fast_fail(t, STK_TLS_FAIL_NOBUF, "no buffer for plaintext");
		stk_tls_err_clear();
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
			if (stk_tls_fast_switch(t) < 0)
				return stk_tls_fast_fail(t, STK_TLS_FAIL_PROTOCOL, "cannot derive the fast path's keys");
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
		r = stk_tls_ssl_fail(t, r);
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
