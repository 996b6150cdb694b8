/* SPDX-License-Identifier: BSD-3-Clause
 * tls_priv.h — what the files of TLS share (stack-internal, never installed):
 * the context and session structures, the receive fast path's state, and
 * the functions one file calls in another (none per record on the fast path:
 * fast_input and what it calls per record live in tls_fast.c).
 *
 *   tls.c       sessions: the handshake and OpenSSL's record path, our BIO
 *   tls_ctx.c   contexts: configuration, trust and verification, callbacks
 *   tls_keys.c  the fast path's keys: read sequence and secret tracking, key
 *               derivation, KeyUpdate and tickets
 *   tls_fast.c  the receive fast path: EVP AEAD into the caller's buffers */
#ifndef STK_TLS_PRIV_H
#define STK_TLS_PRIV_H

#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/ssl.h>

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
struct stk_tls_fast_buf {
	void *cookie;
	uint8_t *p;
	size_t cap, n;
};

/* the receive fast path of a session */
struct stk_tls_fast {
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
	struct stk_tls_fast_buf held[STK_TLS_FAST_HELD]; /* this record's plaintext */
	unsigned n_held;
	struct stk_tls_fast_buf spare[STK_TLS_FAST_HELD]; /* empty, ours to fill */
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
	struct stk_tls_fast f;
};

/* ALPN "http/1.1", wire form (length-prefixed): the one protocol we offer */
extern const unsigned char stk_tls_alpn_http11[9];

/* OpenSSL reads SSL_get_error() right only with an empty error queue. Ours is
 * emptied after every failure, so it is normally empty already: look before
 * clearing (ERR_clear_error walks all 16 slots, ~800 instructions, per call). */
static inline void
stk_tls_err_clear(void)
{
	if (ERR_peek_error() != 0)
		ERR_clear_error();
}

/* tls.c */
BIO_METHOD *stk_tls_bio_method(void);
/* fail the session from what OpenSSL said about call result r; FAILED */
int stk_tls_ssl_fail(struct stk_tls *t, int r);

/* tls_ctx.c: OpenSSL's last error as text, in buf */
const char *stk_tls_errstr(char *buf, size_t len);

/* tls_keys.c */
void stk_tls_msg_cb(int write_p, int version, int content_type, const void *buf, size_t len, SSL *ssl,
		    void *arg);
void stk_tls_keylog_cb(const SSL *ssl, const char *line);
int stk_tls_fast_switch(struct stk_tls *t);
int stk_tls_fast_hs_bytes(struct stk_tls *t, const uint8_t *p, size_t n, bool last_run);
int stk_tls_fast_key_update(struct stk_tls *t, bool requested);

/* tls_fast.c */
void stk_tls_fast_release(struct stk_tls *t);
int stk_tls_fast_fail(struct stk_tls *t, enum stk_tls_fail why, const char *msg);

#endif
