/* SPDX-License-Identifier: BSD-3-Clause
 * test_tls.c — stack/tls.c through stk/tls.h (L0, no DPDK, no sockets): a
 * client and a server session joined by two in-memory byte queues, the
 * ciphertext handed over in seeded random chunks (down to 1 byte) from
 * exactly-sized heap copies that are poisoned as soon as the borrow ends, and
 * the plaintext read into buffers of random size (down to 1 byte). The PKI is
 * made at start (tls_certs.c).
 *
 *   versions        TLS 1.2 and 1.3 each: open on both sides, version, ALPN
 *                   http/1.1, 1 MiB + 300 KiB of random bytes each way exact,
 *                   record and byte counters move, every chunking
 *   ip_literal      the IP SAN verifies an IPv4 literal (no SNI sent); another
 *                   address fails verification
 *   verify          wrong host, expired, unknown CA -> client FAIL_VERIFY (and
 *                   the server sees the alert: FAIL_ALERT); insecure accepts the
 *                   wrong host; ca_path (a directory) verifies like ca_file
 *   resume          a second session with the first one's ticket slot resumes
 *                   (1.2 and 1.3); resume off never does; a ticket from another
 *                   server context is refused and a full handshake follows
 *   versions_bad    client 1.3 only against a server 1.2 only -> both fail,
 *                   the client by the server's alert
 *   garbage         random bytes instead of a ServerHello -> FAIL_PROTOCOL,
 *                   and FAILED ever after
 *   tx_refused      ops.tx refusing bytes -> FAIL_TX (no half records)
 *   close_notify    stk_tls_close: the peer reads CLOSED after all the data
 *   timeout         stk_tls_fail_timeout -> FAIL_TIMEOUT, reads fail
 *   bad_conf        missing ca_file / ca_path / certificate / key, a key not
 *                   matching its certificate, bad cipher lists -> NULL + message
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <stk/tls.h>

#include "tls_certs.h"

#define REQUIRE(cond, ...)                                                                         \
	do {                                                                                       \
		if (!(cond))                                                                       \
			ck_abort_msg(__VA_ARGS__);                                                 \
	} while (0)

static struct tls_certs pki;

struct bytes {
	uint8_t *p;
	size_t n, cap;
};

static void
bytes_add(struct bytes *b, const uint8_t *p, size_t n)
{
	if (b->n + n > b->cap) {
		b->cap = (b->n + n) * 2 + 64;
		b->p = realloc(b->p, b->cap);
		ck_assert_ptr_nonnull(b->p);
	}
	memcpy(b->p + b->n, p, n);
	b->n += n;
}

struct end {
	struct stk_tls *t;
	struct bytes out; /* ciphertext it sent, not yet delivered */
	struct bytes got; /* plaintext it received */
	bool refuse_tx;
	bool closed;
	int opened;       /* OPENED seen */
};

static int
end_tx(void *user, const uint8_t *p, size_t n)
{
	struct end *e = user;

	if (e->refuse_tx)
		return -1;
	bytes_add(&e->out, p, n);
	return 0;
}

static const struct stk_tls_ops end_ops = { .tx = end_tx };

static uint64_t rng_state;

static uint32_t
rnd(void)
{
	rng_state ^= rng_state << 13;
	rng_state ^= rng_state >> 7;
	rng_state ^= rng_state << 17;
	return (uint32_t)(rng_state >> 11);
}

/* deliver what `from` sent to `to`: chunks of 1..maxc bytes, reads of 1..maxr */
static void
deliver(struct end *from, struct end *to, size_t maxc, size_t maxr)
{
	size_t off = 0;

	while (off < from->out.n) {
		size_t k = 1 + rnd() % maxc;
		uint8_t *chunk;
		int r;

		if (k > from->out.n - off)
			k = from->out.n - off;
		chunk = malloc(k);
		ck_assert_ptr_nonnull(chunk);
		memcpy(chunk, from->out.p + off, k);
		off += k;
		r = stk_tls_input(to->t, chunk, k);
		if (r == STK_TLS_OPENED)
			to->opened++;
		if (r != STK_TLS_FAILED) {
			for (;;) {
				size_t cap = 1 + rnd() % maxr;
				uint8_t *buf = malloc(cap);
				ssize_t got;

				ck_assert_ptr_nonnull(buf);
				got = stk_tls_read(to->t, buf, cap);
				if (got > 0)
					bytes_add(&to->got, buf, (size_t)got);
				free(buf);
				if (got == STK_TLS_CLOSED)
					to->closed = true;
				if (got <= 0)
					break;
			}
		}
		memset(chunk, 0xa5, k); /* the borrow is over */
		free(chunk);
	}
	from->out.n = 0;
}

/* run both directions until neither has anything to send */
static void
pump(struct end *c, struct end *s, size_t maxc, size_t maxr)
{
	for (int i = 0; i < 64 && (c->out.n || s->out.n); i++) {
		deliver(c, s, maxc, maxr);
		deliver(s, c, maxc, maxr);
	}
}

static struct stk_tls_ctx *
ctx(const struct stk_tls_conf *c)
{
	char err[256];
	struct stk_tls_ctx *x = stk_tls_ctx_new(c, err, sizeof(err));

	REQUIRE(x != NULL, "stk_tls_ctx_new: %s", err);
	return x;
}

static struct stk_tls_ctx *
server_ctx(const char *cert, const char *key, uint16_t minv, uint16_t maxv, bool resume)
{
	struct stk_tls_conf c = { .server = true, .cert_file = cert, .key_file = key, .min_version = minv,
				  .max_version = maxv, .resume = resume, .alpn = true };

	return ctx(&c);
}

static struct stk_tls_ctx *
client_ctx(uint16_t minv, uint16_t maxv, bool insecure, bool resume)
{
	struct stk_tls_conf c = { .ca_file = pki.ca, .min_version = minv, .max_version = maxv,
				  .insecure = insecure, .resume = resume, .alpn = true };

	return ctx(&c);
}

static void
end_free(struct end *e)
{
	stk_tls_free(e->t);
	free(e->out.p);
	free(e->got.p);
	memset(e, 0, sizeof(*e));
}

/* a client of cx to name and a server of sx; handshake run with chunking maxc */
static void
connect_pair(struct end *c, struct end *s, struct stk_tls_ctx *cx, struct stk_tls_ctx *sx, const char *name,
	     void **slot, size_t maxc)
{
	memset(c, 0, sizeof(*c));
	memset(s, 0, sizeof(*s));
	c->t = stk_tls_new(cx, &end_ops, c, name, slot);
	s->t = stk_tls_new(sx, &end_ops, s, NULL, NULL);
	ck_assert_ptr_nonnull(c->t);
	ck_assert_ptr_nonnull(s->t);
	ck_assert_int_eq(stk_tls_start(c->t), 0);
	pump(c, s, maxc, 4096);
}

static void
send_all(struct end *e, const uint8_t *p, size_t n)
{
	/* in application-sized writes, as the ws stage makes them */
	size_t off = 0;

	while (off < n) {
		size_t k = 1 + rnd() % 3000;

		if (k > n - off)
			k = n - off;
		ck_assert_int_eq(stk_tls_write(e->t, p + off, k), 0);
		off += k;
	}
}

static void
check_exchange(uint16_t v)
{
	static const size_t chunks[] = { 1, 7, 100, 1448, 20000 };
	size_t n1 = 1 << 20, n2 = 300 * 1024;
	uint8_t *a = malloc(n1), *b = malloc(n2);

	for (size_t i = 0; i < n1; i++)
		a[i] = (uint8_t)rnd();
	for (size_t i = 0; i < n2; i++)
		b[i] = (uint8_t)rnd();
	for (unsigned k = 0; k < sizeof(chunks) / sizeof(chunks[0]); k++) {
		struct stk_tls_ctx *sx = server_ctx(pki.good, pki.good_key, v, v, true);
		struct stk_tls_ctx *cx = client_ctx(v, v, false, true);
		struct end c, s;
		size_t big = k == 0 ? 64 * 1024 : n1; /* 1-byte chunks: a smaller transfer */
		const struct stk_tls_stats *cs = stk_tls_ctx_stats(cx), *ss = stk_tls_ctx_stats(sx);

		rng_state = 0x9e3779b97f4a7c15ull + k;
		connect_pair(&c, &s, cx, sx, TLS_TEST_HOST, NULL, chunks[k]);
		REQUIRE(stk_tls_is_open(c.t) && stk_tls_is_open(s.t), "not open (chunks %zu): %s / %s", chunks[k],
			stk_tls_error(c.t), stk_tls_error(s.t));
		ck_assert_int_eq(c.opened, 1);
		ck_assert_int_eq(s.opened, 1);
		ck_assert_str_eq(stk_tls_version(c.t), v == STK_TLS_V13 ? "TLSv1.3" : "TLSv1.2");
		ck_assert_str_eq(stk_tls_alpn(c.t), "http/1.1");
		ck_assert_str_eq(stk_tls_alpn(s.t), "http/1.1");
		send_all(&c, a, big);
		send_all(&s, b, n2);
		pump(&c, &s, chunks[k], k == 0 ? 3 : 5000);
		REQUIRE(s.got.n == big && memcmp(s.got.p, a, big) == 0, "client -> server: %zu of %zu bytes",
			s.got.n, big);
		REQUIRE(c.got.n == n2 && memcmp(c.got.p, b, n2) == 0, "server -> client: %zu of %zu bytes",
			c.got.n, n2);
		REQUIRE(cs->records_tx > big / 16384 && cs->records_rx > n2 / 16384 && ss->records_rx == cs->records_tx &&
				ss->records_tx == cs->records_rx,
			"records: client tx %lu rx %lu, server tx %lu rx %lu", (unsigned long)cs->records_tx,
			(unsigned long)cs->records_rx, (unsigned long)ss->records_tx, (unsigned long)ss->records_rx);
		REQUIRE(cs->bytes_tx == ss->bytes_rx && ss->bytes_tx == cs->bytes_rx && cs->bytes_tx > big,
			"bytes: client tx %lu, server rx %lu", (unsigned long)cs->bytes_tx,
			(unsigned long)ss->bytes_rx);
		end_free(&c);
		end_free(&s);
		stk_tls_ctx_free(cx);
		stk_tls_ctx_free(sx);
	}
	free(a);
	free(b);
}

START_TEST(versions)
{
	check_exchange(STK_TLS_V12);
	check_exchange(STK_TLS_V13);
}
END_TEST

START_TEST(ip_literal)
{
	struct stk_tls_ctx *sx = server_ctx(pki.good, pki.good_key, 0, 0, true);
	struct stk_tls_ctx *cx = client_ctx(0, 0, false, true);
	struct end c, s;

	connect_pair(&c, &s, cx, sx, TLS_TEST_IP, NULL, 1448);
	REQUIRE(stk_tls_is_open(c.t), "IP SAN: %s", stk_tls_error(c.t));
	end_free(&c);
	end_free(&s);
	connect_pair(&c, &s, cx, sx, "10.77.0.9", NULL, 1448);
	ck_assert(!stk_tls_is_open(c.t));
	ck_assert_int_eq(stk_tls_failure(c.t), STK_TLS_FAIL_VERIFY);
	end_free(&c);
	end_free(&s);
	stk_tls_ctx_free(cx);
	stk_tls_ctx_free(sx);
}
END_TEST

static void
expect_refused(const char *cert, const char *key, const char *name, const char *why_part)
{
	struct stk_tls_ctx *sx = server_ctx(cert, key, 0, 0, true);
	struct stk_tls_ctx *cx = client_ctx(0, 0, false, true);
	struct end c, s;

	connect_pair(&c, &s, cx, sx, name, NULL, 1448);
	ck_assert(!stk_tls_is_open(c.t));
	ck_assert_int_eq(stk_tls_failure(c.t), STK_TLS_FAIL_VERIFY);
	REQUIRE(strstr(stk_tls_error(c.t), why_part) != NULL, "%s: expected \"%s\" in \"%s\"", cert, why_part,
		stk_tls_error(c.t));
	ck_assert_int_eq(stk_tls_failure(s.t), STK_TLS_FAIL_ALERT);
	ck_assert_int_eq(stk_tls_read(c.t, (uint8_t[8]){ 0 }, 8), STK_TLS_FAILED);
	ck_assert_int_eq(stk_tls_write(c.t, (const uint8_t *)"x", 1), STK_TLS_FAILED);
	end_free(&c);
	end_free(&s);
	stk_tls_ctx_free(cx);
	stk_tls_ctx_free(sx);
}

START_TEST(verify)
{
	struct stk_tls_ctx *sx, *cx;
	struct stk_tls_conf cc = { .ca_path = pki.ca_dir, .alpn = true };
	struct end c, s;

	expect_refused(pki.wrong, pki.wrong_key, TLS_TEST_HOST, "mismatch");
	expect_refused(pki.expired, pki.expired_key, TLS_TEST_HOST, "expired");
	expect_refused(pki.rogue, pki.rogue_key, TLS_TEST_HOST, "local issuer");
	/* insecure: the wrong host is accepted */
	sx = server_ctx(pki.wrong, pki.wrong_key, 0, 0, true);
	cx = client_ctx(0, 0, true, true);
	connect_pair(&c, &s, cx, sx, TLS_TEST_HOST, NULL, 1448);
	REQUIRE(stk_tls_is_open(c.t), "insecure: %s", stk_tls_error(c.t));
	end_free(&c);
	end_free(&s);
	stk_tls_ctx_free(cx);
	stk_tls_ctx_free(sx);
	/* ca_path */
	sx = server_ctx(pki.good, pki.good_key, 0, 0, true);
	cx = ctx(&cc);
	connect_pair(&c, &s, cx, sx, TLS_TEST_HOST, NULL, 1448);
	REQUIRE(stk_tls_is_open(c.t), "ca_path: %s", stk_tls_error(c.t));
	end_free(&c);
	end_free(&s);
	connect_pair(&c, &s, cx, sx, "other.example.test", NULL, 1448);
	ck_assert_int_eq(stk_tls_failure(c.t), STK_TLS_FAIL_VERIFY);
	end_free(&c);
	end_free(&s);
	stk_tls_ctx_free(cx);
	stk_tls_ctx_free(sx);
}
END_TEST

/* open a session with slot, exchange a little (TLS 1.3 tickets come after the
 * handshake), close; returns whether it was resumed */
static bool
session_with(struct stk_tls_ctx *cx, struct stk_tls_ctx *sx, void **slot)
{
	struct end c, s;
	bool resumed;

	connect_pair(&c, &s, cx, sx, TLS_TEST_HOST, slot, 1448);
	REQUIRE(stk_tls_is_open(c.t), "resume: %s", stk_tls_error(c.t));
	send_all(&s, (const uint8_t *)"hello", 5);
	send_all(&c, (const uint8_t *)"hi", 2);
	pump(&c, &s, 1448, 4096);
	ck_assert_uint_eq(c.got.n, 5);
	resumed = stk_tls_resumed(c.t);
	ck_assert_int_eq(resumed, stk_tls_resumed(s.t));
	end_free(&c);
	end_free(&s);
	return resumed;
}

START_TEST(resume)
{
	for (uint16_t v = STK_TLS_V12; v <= STK_TLS_V13; v++) {
		struct stk_tls_ctx *sx = server_ctx(pki.good, pki.good_key, v, v, true);
		struct stk_tls_ctx *sx2 = server_ctx(pki.good, pki.good_key, v, v, true);
		struct stk_tls_ctx *cx = client_ctx(v, v, false, true);
		struct stk_tls_ctx *nx = client_ctx(v, v, false, false);
		void *slot = NULL, *nslot = NULL;

		ck_assert(!session_with(cx, sx, &slot));
		ck_assert_ptr_nonnull(slot);
		ck_assert(session_with(cx, sx, &slot));
		ck_assert(session_with(cx, sx, &slot));
		/* another server's ticket keys: a full handshake, then a new ticket */
		ck_assert(!session_with(cx, sx2, &slot));
		ck_assert(session_with(cx, sx2, &slot));
		/* resume off */
		ck_assert(!session_with(nx, sx, &nslot));
		ck_assert(!session_with(nx, sx, &nslot));
		ck_assert_ptr_null(nslot);
		stk_tls_ticket_free(slot);
		stk_tls_ctx_free(cx);
		stk_tls_ctx_free(nx);
		stk_tls_ctx_free(sx);
		stk_tls_ctx_free(sx2);
	}
}
END_TEST

START_TEST(versions_bad)
{
	struct stk_tls_ctx *sx = server_ctx(pki.good, pki.good_key, STK_TLS_V12, STK_TLS_V12, true);
	struct stk_tls_ctx *cx = client_ctx(STK_TLS_V13, STK_TLS_V13, false, true);
	struct end c, s;

	connect_pair(&c, &s, cx, sx, TLS_TEST_HOST, NULL, 1448);
	ck_assert(!stk_tls_is_open(c.t));
	ck_assert(!stk_tls_is_open(s.t));
	ck_assert_int_eq(stk_tls_failure(s.t), STK_TLS_FAIL_PROTOCOL);
	REQUIRE(stk_tls_failure(c.t) == STK_TLS_FAIL_ALERT, "client failure %s: %s",
		stk_tls_fail_name(stk_tls_failure(c.t)), stk_tls_error(c.t));
	REQUIRE(strstr(stk_tls_error(c.t), "protocol version") != NULL, "%s", stk_tls_error(c.t));
	end_free(&c);
	end_free(&s);
	stk_tls_ctx_free(cx);
	stk_tls_ctx_free(sx);
}
END_TEST

START_TEST(garbage)
{
	struct stk_tls_ctx *cx = client_ctx(0, 0, false, true);
	struct end c = { 0 };
	uint8_t junk[512];

	rng_state = 42;
	for (size_t i = 0; i < sizeof(junk); i++)
		junk[i] = (uint8_t)rnd();
	junk[0] = 0x16; /* a handshake record header, then nonsense */
	junk[1] = 0x03;
	junk[2] = 0x03;
	c.t = stk_tls_new(cx, &end_ops, &c, TLS_TEST_HOST, NULL);
	ck_assert_int_eq(stk_tls_start(c.t), 0);
	ck_assert_uint_gt(c.out.n, 0); /* the ClientHello */
	ck_assert_int_eq(stk_tls_input(c.t, junk, sizeof(junk)), STK_TLS_FAILED);
	ck_assert_int_eq(stk_tls_failure(c.t), STK_TLS_FAIL_PROTOCOL);
	ck_assert_str_ne(stk_tls_error(c.t), "");
	ck_assert_int_eq(stk_tls_input(c.t, junk, 10), STK_TLS_FAILED);
	ck_assert_int_eq(stk_tls_read(c.t, junk, sizeof(junk)), STK_TLS_FAILED);
	end_free(&c);
	stk_tls_ctx_free(cx);
}
END_TEST

START_TEST(tx_refused)
{
	struct stk_tls_ctx *sx = server_ctx(pki.good, pki.good_key, 0, 0, true);
	struct stk_tls_ctx *cx = client_ctx(0, 0, false, true);
	struct end c, s;

	/* during the handshake */
	memset(&c, 0, sizeof(c));
	c.refuse_tx = true;
	c.t = stk_tls_new(cx, &end_ops, &c, TLS_TEST_HOST, NULL);
	ck_assert_int_eq(stk_tls_start(c.t), STK_TLS_FAILED);
	ck_assert_int_eq(stk_tls_failure(c.t), STK_TLS_FAIL_TX);
	end_free(&c);
	/* when open */
	connect_pair(&c, &s, cx, sx, TLS_TEST_HOST, NULL, 1448);
	ck_assert(stk_tls_is_open(c.t));
	c.refuse_tx = true;
	ck_assert_int_eq(stk_tls_write(c.t, (const uint8_t *)"abc", 3), STK_TLS_FAILED);
	ck_assert_int_eq(stk_tls_failure(c.t), STK_TLS_FAIL_TX);
	ck_assert_uint_eq(c.out.n, 0);
	end_free(&c);
	end_free(&s);
	stk_tls_ctx_free(cx);
	stk_tls_ctx_free(sx);
}
END_TEST

START_TEST(close_notify)
{
	struct stk_tls_ctx *sx = server_ctx(pki.good, pki.good_key, 0, 0, true);
	struct stk_tls_ctx *cx = client_ctx(0, 0, false, true);
	struct end c, s;

	connect_pair(&c, &s, cx, sx, TLS_TEST_HOST, NULL, 1448);
	send_all(&c, (const uint8_t *)"last words", 10);
	ck_assert_int_eq(stk_tls_close(c.t), 0);
	ck_assert_int_eq(stk_tls_close(c.t), 0); /* once */
	ck_assert_int_eq(stk_tls_write(c.t, (const uint8_t *)"x", 1), STK_TLS_FAILED);
	pump(&c, &s, 3, 4);
	ck_assert_uint_eq(s.got.n, 10);
	ck_assert(memcmp(s.got.p, "last words", 10) == 0);
	ck_assert(s.closed);
	ck_assert_int_eq(stk_tls_read(s.t, (uint8_t[4]){ 0 }, 4), STK_TLS_CLOSED);
	ck_assert_int_eq(stk_tls_failure(s.t), STK_TLS_FAIL_NONE);
	end_free(&c);
	end_free(&s);
	stk_tls_ctx_free(cx);
	stk_tls_ctx_free(sx);
}
END_TEST

START_TEST(timeout)
{
	struct stk_tls_ctx *cx = client_ctx(0, 0, false, true);
	struct end c = { 0 };

	c.t = stk_tls_new(cx, &end_ops, &c, TLS_TEST_HOST, NULL);
	ck_assert_int_eq(stk_tls_start(c.t), 0);
	stk_tls_fail_timeout(c.t);
	ck_assert_int_eq(stk_tls_failure(c.t), STK_TLS_FAIL_TIMEOUT);
	ck_assert_str_eq(stk_tls_fail_name(stk_tls_failure(c.t)), "timeout");
	ck_assert_int_eq(stk_tls_read(c.t, (uint8_t[4]){ 0 }, 4), STK_TLS_FAILED);
	end_free(&c);
	stk_tls_ctx_free(cx);
}
END_TEST

static void
expect_conf_error(const struct stk_tls_conf *c, const char *part)
{
	char err[256] = "";
	struct stk_tls_ctx *x = stk_tls_ctx_new(c, err, sizeof(err));

	REQUIRE(x == NULL, "accepted; expected an error with \"%s\"", part);
	REQUIRE(strstr(err, part) != NULL, "expected \"%s\" in \"%s\"", part, err);
}

START_TEST(bad_conf)
{
	struct stk_tls_conf c;

	c = (struct stk_tls_conf){ .ca_file = "/nonexistent/ca.pem" };
	expect_conf_error(&c, "ca_file /nonexistent/ca.pem");
	c = (struct stk_tls_conf){ .ca_path = "/nonexistent" };
	expect_conf_error(&c, "ca_path /nonexistent");
	c = (struct stk_tls_conf){ .ca_path = pki.dir }; /* only PEM files one level down: has ca.pem */
	{
		char err[256];
		struct stk_tls_ctx *x = stk_tls_ctx_new(&c, err, sizeof(err));

		REQUIRE(x != NULL, "%s", err);
		stk_tls_ctx_free(x);
	}
	c = (struct stk_tls_conf){ .server = true };
	expect_conf_error(&c, "needs a certificate");
	c = (struct stk_tls_conf){ .server = true, .cert_file = "/nonexistent.pem", .key_file = pki.good_key };
	expect_conf_error(&c, "certificate /nonexistent.pem");
	c = (struct stk_tls_conf){ .server = true, .cert_file = pki.good, .key_file = pki.wrong_key };
	expect_conf_error(&c, "does not match");
	c = (struct stk_tls_conf){ .ca_file = pki.ca, .ciphers = "NO-SUCH-CIPHER" };
	expect_conf_error(&c, "ciphers");
	c = (struct stk_tls_conf){ .ca_file = pki.ca, .ciphersuites = "TLS_NO_SUCH" };
	expect_conf_error(&c, "ciphersuites");
	c = (struct stk_tls_conf){ .ca_file = pki.ca, .min_version = STK_TLS_V13, .max_version = STK_TLS_V12 };
	expect_conf_error(&c, "version");
}
END_TEST

static Suite *
tls_suite(void)
{
	Suite *s = suite_create("tls");
	TCase *tc = tcase_create("session");

	tcase_add_test(tc, versions);
	tcase_add_test(tc, ip_literal);
	tcase_add_test(tc, verify);
	tcase_add_test(tc, resume);
	tcase_add_test(tc, versions_bad);
	tcase_add_test(tc, garbage);
	tcase_add_test(tc, tx_refused);
	tcase_add_test(tc, close_notify);
	tcase_add_test(tc, timeout);
	tcase_add_test(tc, bad_conf);
	tcase_set_timeout(tc, 120);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	SRunner *sr;
	int failed;

	if (tls_certs_make(&pki, ".") < 0) {
		fprintf(stderr, "test_tls: cannot make the test PKI in .\n");
		return EXIT_FAILURE;
	}
	sr = srunner_create(tls_suite());
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	tls_certs_remove(&pki);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
