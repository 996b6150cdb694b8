/* SPDX-License-Identifier: BSD-3-Clause
 * stk/tls.h — TLS 1.2 / 1.3 over a byte stream (OpenSSL's libssl), for both
 * roles. No I/O, no DPDK, no kernel socket: the caller moves the bytes. The ws
 * and feedsim stages run it over a connection of the tcp stage, on the worker
 * lcore; nothing here blocks.
 *
 * Context (one per stage, one thread): the configuration, the trust store
 * (loaded whole at creation, so verification never reads a file on the worker),
 * the server's certificate and key, record and byte counts.
 *
 * Session (one per connection attempt). The caller
 *   - feeds ciphertext as it arrives: stk_tls_input(p, n) borrows the bytes and
 *     drives the handshake; the bytes must stay valid until stk_tls_read()
 *     returned STK_TLS_AGAIN (OpenSSL pulls them through a BIO of ours, copying
 *     them into its record buffer: no staging copy of ours);
 *   - pulls plaintext into buffers of its own with stk_tls_read() until it
 *     returns STK_TLS_AGAIN (everything fed is consumed) — no allocation here
 *     per record;
 *   - writes plaintext with stk_tls_write(); the records come out through
 *     ops.tx, as do handshake flights, alerts, tickets and close_notify.
 * The handshake has no timer of its own: the caller fails a session that takes
 * too long (stk_tls_fail_timeout, so that the reason is counted alike).
 *
 * Receive fast path (client, AEAD suites), the way kTLS does it: OpenSSL
 * keeps the handshake and everything we send; once stk_tls_fast_start() armed
 * it, the peer's records are decrypted by our code (EVP AEAD) straight from
 * the borrowed ciphertext into the caller's plaintext buffers, one pass,
 * streaming across segments. The switch happens at a record boundary: OpenSSL
 * is fed only to the end of the record in progress and drained first. A
 * record's plaintext is held in the caller's buffers until its tag verified,
 * then handed back (ops.deliver); a record that fails hands them back empty
 * (ops.discard). Suites: TLS 1.3 AES-128/256-GCM, ChaCha20-Poly1305; TLS 1.2
 * AES-GCM and ChaCha20-Poly1305 suites; others stay on OpenSSL's path.
 *
 * Client sessions send SNI (DNS names only, RFC 6066 3), offer ALPN http/1.1,
 * verify the chain and the name (or the IP address of an IP literal) unless the
 * context is insecure, and resume from the ticket kept in the caller's slot
 * (stk_tls_new's `resume`), refreshed by every ticket the server sends. */
#ifndef STK_TLS_H
#define STK_TLS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#ifdef __cplusplus
extern "C" {
#endif

#define STK_TLS_V12 0x0303
#define STK_TLS_V13 0x0304

struct stk_tls_conf {
	bool server;
	/* client: trust anchors; both NULL or "": the system store (OpenSSL's
	 * default file, SSL_CERT_FILE overrides it). ca_path's files are read at
	 * creation, not looked up by hash during a handshake. */
	const char *ca_file, *ca_path;
	bool insecure;                     /* client: no chain or name check */
	const char *cert_file, *key_file;  /* server: PEM (the chain may follow the leaf) */
	uint16_t min_version, max_version; /* STK_TLS_V12 / V13; 0: 1.2 / 1.3 */
	const char *ciphers;      /* TLS 1.2 cipher list; NULL or "": OpenSSL's default */
	const char *ciphersuites; /* TLS 1.3 suites; NULL or "": OpenSSL's default */
	bool resume;              /* client: offer the kept ticket; server: issue tickets */
	bool alpn;                /* offer (client) / select (server) ALPN "http/1.1" */
};

/* why a session failed */
enum stk_tls_fail {
	STK_TLS_FAIL_NONE = 0,
	STK_TLS_FAIL_VERIFY,   /* the peer's certificate chain or name */
	STK_TLS_FAIL_ALERT,    /* the peer sent a fatal alert */
	STK_TLS_FAIL_TIMEOUT,  /* the caller's handshake deadline (stk_tls_fail_timeout) */
	STK_TLS_FAIL_PROTOCOL, /* anything else: bad records, no shared version or cipher, EOF */
	STK_TLS_FAIL_TX,       /* ops.tx refused bytes: the stream would have a hole */
	STK_TLS_FAIL_NOBUF,    /* fast path: rx_ops.get had no buffer for plaintext */
};

struct stk_tls_stats {
	uint64_t records_rx, records_tx; /* TLS records (headers seen by the record layer) */
	uint64_t bytes_rx, bytes_tx;     /* ciphertext bytes */
	uint64_t records_rx_fast;        /* of records_rx: decrypted on the fast path */
	uint64_t tickets_ignored;        /* fast path: TLS 1.3 NewSessionTickets not kept */
};

struct stk_tls_ops {
	/* n bytes of ciphertext to send, in OpenSSL's buffer (copy them). Return 0,
	 * or -1 when they cannot be queued: the session then fails (FAIL_TX), since
	 * a TLS stream cannot skip bytes. */
	int (*tx)(void *user, const uint8_t *p, size_t n);
};

/* The fast path's plaintext buffers, lent by the caller. Buffers of at least
 * STK_TLS_FAST_MIN_BUF bytes always hold a whole record (at most
 * STK_TLS_FAST_HELD buffers are held at once). The callbacks run inside
 * stk_tls_recv() (and stk_tls_free(): discard). */
#define STK_TLS_FAST_HELD 24
#define STK_TLS_FAST_MIN_BUF 1024
struct stk_tls_rx_ops {
	/* a buffer to decrypt into: its cookie (non-NULL), *p and *cap set; NULL
	 * when there is none (the session fails: FAIL_NOBUF). The session holds it
	 * until deliver or discard. */
	void *(*get)(void *user, uint8_t **p, size_t *cap);
	/* buf holds n > 0 bytes of verified plaintext, in stream order; it is the
	 * caller's again. deliver may write, close or free the session
	 * (stk_tls_free: stk_tls_recv then returns at once, AGAIN). */
	void (*deliver)(void *user, void *buf, size_t n);
	/* buf comes back with nothing in it (its record failed, the session ended
	 * or was freed); it is the caller's again. Must not call the session. */
	void (*discard)(void *user, void *buf);
};

struct stk_tls_ctx;
struct stk_tls;

/* NULL with a message in err when the configuration or a file is bad */
struct stk_tls_ctx *stk_tls_ctx_new(const struct stk_tls_conf *c, char *err, size_t errlen);
void stk_tls_ctx_free(struct stk_tls_ctx *x);
const struct stk_tls_stats *stk_tls_ctx_stats(const struct stk_tls_ctx *x);

/* A session. Client: `name` is the server's host from the URL (DNS name or
 * IPv4 literal: SNI and the verified identity); `resume` points at the
 * caller's slot for the connection's ticket (NULL: no resumption), which
 * outlives sessions and is freed with stk_tls_ticket_free(). Server: name and
 * resume NULL. NULL on no memory. The client's first flight goes out at
 * stk_tls_start(). */
struct stk_tls *stk_tls_new(struct stk_tls_ctx *x, const struct stk_tls_ops *ops, void *user, const char *name,
			    void **resume);
void stk_tls_free(struct stk_tls *t);
void stk_tls_ticket_free(void *ticket);

/* client: send the ClientHello; 0 or STK_TLS_FAILED */
int stk_tls_start(struct stk_tls *t);

/* return values of stk_tls_input / stk_tls_read */
#define STK_TLS_AGAIN 0      /* read: nothing more until more input */
#define STK_TLS_CLOSED (-1)  /* the peer sent close_notify: no more data */
#define STK_TLS_FAILED (-2)  /* the session failed: stk_tls_failure() */
#define STK_TLS_OPENED 1     /* input: the handshake completed during this call */

/* Ciphertext in (borrowed until stk_tls_read returns AGAIN). During the
 * handshake it advances it: OPENED when it completed here (plaintext may
 * follow: read it), AGAIN when it needs more, FAILED. Once open: AGAIN. */
int stk_tls_input(struct stk_tls *t, const uint8_t *p, size_t n);
/* Plaintext out: > 0 bytes written into out (at most cap), AGAIN, CLOSED, FAILED. */
ssize_t stk_tls_read(struct stk_tls *t, uint8_t *out, size_t cap);
/* Arm the receive fast path (an open client session): 0, after which the
 * caller calls stk_tls_recv() instead of stk_tls_read() after each input;
 * -ENOTSUP: the suite or version is not one of the fast path's (or its keys
 * were not seen), -EINVAL: a server or not open, -ENOMEM. On error the session
 * goes on as before (stk_tls_read). */
int stk_tls_fast_start(struct stk_tls *t, const struct stk_tls_rx_ops *ops, void *user);
/* true once armed */
bool stk_tls_fast_armed(const struct stk_tls *t);
/* Consume all the borrowed input (armed sessions): plaintext through
 * ops.deliver, OpenSSL's buffered records first. AGAIN (the input is done
 * with), CLOSED (close_notify), FAILED (held buffers discarded). */
int stk_tls_recv(struct stk_tls *t);
/* TLS 1.3: send a KeyUpdate (request_peer: ask the peer to update too). 0, or
 * -ENOTSUP (not TLS 1.3 or not open), FAILED. */
int stk_tls_key_update(struct stk_tls *t, bool request_peer);
/* TLS 1.3 server: send one more NewSessionTicket now. 0, -ENOTSUP, FAILED. */
int stk_tls_send_ticket(struct stk_tls *t);
/* Plaintext to send (open sessions only): 0, or FAILED. All or nothing. */
int stk_tls_write(struct stk_tls *t, const uint8_t *p, size_t n);
/* close_notify (once; an open session only). 0 or FAILED. */
int stk_tls_close(struct stk_tls *t);
/* the caller's deadline passed during the handshake */
void stk_tls_fail_timeout(struct stk_tls *t);

bool stk_tls_is_open(const struct stk_tls *t);
bool stk_tls_resumed(const struct stk_tls *t);
enum stk_tls_fail stk_tls_failure(const struct stk_tls *t);
const char *stk_tls_fail_name(enum stk_tls_fail f);
/* why it failed, for a log line ("certificate verify failed: Hostname mismatch", ...) */
const char *stk_tls_error(const struct stk_tls *t);
/* "TLSv1.3", "TLS_AES_128_GCM_SHA256", the ALPN protocol ("" if none) */
const char *stk_tls_version(const struct stk_tls *t);
const char *stk_tls_cipher(const struct stk_tls *t);
const char *stk_tls_alpn(const struct stk_tls *t);

#ifdef __cplusplus
}
#endif
#endif
