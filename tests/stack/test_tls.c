/* SPDX-License-Identifier: BSD-3-Clause
 * test_tls.c — stack/tls*.c through stk/tls.h (L0, no DPDK, no sockets): a
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
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <stk/tls.h>

#include "tls_certs.h"

#include "../t_check.h"

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
		REQUIRE(b->p != NULL, "out of memory (%zu bytes)", b->cap);
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
	/* client fast path: arm once this much plaintext came (0: never here) */
	size_t arm_at;
	int fast_rc;      /* the last stk_tls_recv result */
	unsigned gets, delivers, discards;
};

/* fast path buffers: heap blocks of random size, poisoned when handed back */
struct fbuf {
	size_t cap;
	uint8_t p[];
};

static uint32_t rnd(void);

static void *
fast_get(void *user, uint8_t **p, size_t *cap)
{
	struct end *e = user;
	size_t n = STK_TLS_FAST_MIN_BUF + rnd() % 4000;
	struct fbuf *b = malloc(sizeof(*b) + n);

	REQUIRE(b != NULL, "out of memory (fast buffer)");
	b->cap = n;
	memset(b->p, 0x5a, n);
	*p = b->p;
	*cap = n;
	e->gets++;
	return b;
}

static void bytes_add(struct bytes *b, const uint8_t *p, size_t n);

static void
fast_deliver(void *user, void *buf, size_t n)
{
	struct end *e = user;
	struct fbuf *b = buf;

	REQUIRE(n > 0 && n <= b->cap, "deliver of %zu bytes into a %zu-byte buffer", n, b->cap);
	bytes_add(&e->got, b->p, n);
	e->delivers++;
	memset(b->p, 0xa5, b->cap);
	free(b);
}

static void
fast_discard(void *user, void *buf)
{
	struct end *e = user;
	struct fbuf *b = buf;

	e->discards++;
	memset(b->p, 0xa5, b->cap);
	free(b);
}

static const struct stk_tls_rx_ops fast_ops = {
	.get = fast_get, .deliver = fast_deliver, .discard = fast_discard
};

/* the fast path's result after input */
static void
fast_recv(struct end *to)
{
	to->fast_rc = stk_tls_recv(to->t);
	if (to->fast_rc == STK_TLS_CLOSED)
		to->closed = true;
}

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
		REQUIRE(chunk != NULL, "out of memory (%zu-byte chunk)", k);
		memcpy(chunk, from->out.p + off, k);
		off += k;
		r = stk_tls_input(to->t, chunk, k);
		if (r == STK_TLS_OPENED)
			to->opened++;
		if (r != STK_TLS_FAILED && stk_tls_fast_armed(to->t)) {
			fast_recv(to);
		} else if (r != STK_TLS_FAILED) {
			for (;;) {
				size_t cap = 1 + rnd() % maxr;
				uint8_t *buf = malloc(cap);
				ssize_t got;

				REQUIRE(buf != NULL, "out of memory (%zu-byte read buffer)", cap);
				got = stk_tls_read(to->t, buf, cap);
				if (got > 0)
					bytes_add(&to->got, buf, (size_t)got);
				free(buf);
				if (got == STK_TLS_CLOSED)
					to->closed = true;
				if (got <= 0)
					break;
				if (to->arm_at > 0 && to->got.n >= to->arm_at) {
					/* mid-stream: OpenSSL may hold records read ahead */
					ck_assert_int_eq(stk_tls_fast_start(to->t, &fast_ops, to), 0);
					to->arm_at = 0;
					fast_recv(to);
					break;
				}
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

/* free the client; every buffer lent came back */
static void
fast_end_free(struct end *c)
{
	stk_tls_free(c->t);
	c->t = NULL;
	REQUIRE(c->gets == c->delivers + c->discards, "buffers: %u lent, %u delivered, %u discarded", c->gets,
		c->delivers, c->discards);
	end_free(c);
}

/* both ends (fast: c is the fast path's client) and both contexts */
static void
pair_free(struct end *c, struct end *s, struct stk_tls_ctx *cx, struct stk_tls_ctx *sx, bool fast)
{
	if (fast)
		fast_end_free(c);
	else
		end_free(c);
	end_free(s);
	stk_tls_ctx_free(cx);
	stk_tls_ctx_free(sx);
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
		int r;

		if (k > n - off)
			k = n - off;
		r = stk_tls_write(e->t, p + off, k);
		REQUIRE(r == 0, "stk_tls_write of %zu bytes at %zu: %d", k, off, r);
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
		pair_free(&c, &s, cx, sx, false);
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
	pair_free(&c, &s, cx, sx, false);
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
	pair_free(&c, &s, cx, sx, false);
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
	pair_free(&c, &s, cx, sx, false);
	/* ca_path */
	sx = server_ctx(pki.good, pki.good_key, 0, 0, true);
	cx = ctx(&cc);
	connect_pair(&c, &s, cx, sx, TLS_TEST_HOST, NULL, 1448);
	REQUIRE(stk_tls_is_open(c.t), "ca_path: %s", stk_tls_error(c.t));
	end_free(&c);
	end_free(&s);
	connect_pair(&c, &s, cx, sx, "other.example.test", NULL, 1448);
	ck_assert_int_eq(stk_tls_failure(c.t), STK_TLS_FAIL_VERIFY);
	pair_free(&c, &s, cx, sx, false);
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
	pair_free(&c, &s, cx, sx, false);
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
	pair_free(&c, &s, cx, sx, false);
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
	pair_free(&c, &s, cx, sx, false);
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

/* ---- receive fast path (client) ---- */

struct suite {
	uint16_t v;
	const char *ciphers, *suites; /* 1.2 list, 1.3 suites */
	const char *name;             /* as stk_tls_cipher says it */
};

static const struct suite fast_suites[] = {
	{ STK_TLS_V13, NULL, "TLS_AES_128_GCM_SHA256", "TLS_AES_128_GCM_SHA256" },
	{ STK_TLS_V13, NULL, "TLS_AES_256_GCM_SHA384", "TLS_AES_256_GCM_SHA384" },
	{ STK_TLS_V13, NULL, "TLS_CHACHA20_POLY1305_SHA256", "TLS_CHACHA20_POLY1305_SHA256" },
	{ STK_TLS_V12, "ECDHE-ECDSA-AES128-GCM-SHA256", NULL, "ECDHE-ECDSA-AES128-GCM-SHA256" },
	{ STK_TLS_V12, "ECDHE-ECDSA-AES256-GCM-SHA384", NULL, "ECDHE-ECDSA-AES256-GCM-SHA384" },
	{ STK_TLS_V12, "ECDHE-ECDSA-CHACHA20-POLY1305", NULL, "ECDHE-ECDSA-CHACHA20-POLY1305" },
};
#define N_FAST_SUITES (sizeof(fast_suites) / sizeof(fast_suites[0]))

static void
suite_ctxs(const struct suite *su, struct stk_tls_ctx **cx, struct stk_tls_ctx **sx)
{
	struct stk_tls_conf sc = { .server = true, .cert_file = pki.good, .key_file = pki.good_key,
				   .min_version = su->v, .max_version = su->v, .resume = true, .alpn = true,
				   .ciphers = su->ciphers, .ciphersuites = su->suites };
	struct stk_tls_conf cc = { .ca_file = pki.ca, .min_version = su->v, .max_version = su->v,
				   .resume = true, .alpn = true, .ciphers = su->ciphers, .ciphersuites = su->suites };

	*sx = ctx(&sc);
	*cx = ctx(&cc);
}

/* a client and a server of suite su, and their contexts; the client's fast
 * path armed right after the handshake (arm_at 0) or once arm_at bytes of
 * plaintext came */
static void
fast_pair(struct end *c, struct end *s, const struct suite *su, struct stk_tls_ctx **cx,
	  struct stk_tls_ctx **sx, size_t maxc, size_t arm_at)
{
	suite_ctxs(su, cx, sx);
	connect_pair(c, s, *cx, *sx, TLS_TEST_HOST, NULL, maxc);
	REQUIRE(stk_tls_is_open(c->t) && stk_tls_is_open(s->t), "%s: not open: %s / %s", su->name,
		stk_tls_error(c->t), stk_tls_error(s->t));
	ck_assert_str_eq(stk_tls_cipher(c->t), su->name);
	if (arm_at == 0)
		ck_assert_int_eq(stk_tls_fast_start(c->t, &fast_ops, c), 0);
	else
		c->arm_at = arm_at;
}

static uint8_t *
rnd_bytes(size_t n)
{
	uint8_t *p = malloc(n);

	ck_assert_ptr_nonnull(p);
	for (size_t i = 0; i < n; i++)
		p[i] = (uint8_t)rnd();
	return p;
}

START_TEST(fast_suites_exact)
{
	static const size_t chunks[] = { 1, 7, 100, 1448, 20000 };
	const struct suite *su = &fast_suites[_i];
	size_t n2 = 300 * 1024, n1 = 10 * 1024;
	uint8_t *a = rnd_bytes(n1), *b = rnd_bytes(n2);

	for (unsigned k = 0; k < sizeof(chunks) / sizeof(chunks[0]); k++) {
		for (int mid = 0; mid < 2; mid++) {
			struct stk_tls_ctx *cx, *sx;
			struct end c, s;
			size_t big = k == 0 ? 64 * 1024 : n2;
			const struct stk_tls_stats *cs, *ss;

			rng_state = 0x1234567ull + k * 2 + (unsigned)mid;
			fast_pair(&c, &s, su, &cx, &sx, chunks[k], mid ? 1 + rnd() % (big / 2) : 0);
			cs = stk_tls_ctx_stats(cx);
			ss = stk_tls_ctx_stats(sx);
			send_all(&s, b, big);
			send_all(&c, a, n1);
			pump(&c, &s, chunks[k], 5000);
			ck_assert(stk_tls_fast_armed(c.t));
			REQUIRE(c.got.n == big && memcmp(c.got.p, b, big) == 0,
				"%s chunks %zu mid %d: server -> client %zu of %zu bytes (%s)", su->name, chunks[k], mid,
				c.got.n, big, stk_tls_error(c.t));
			REQUIRE(s.got.n == n1 && memcmp(s.got.p, a, n1) == 0, "client -> server: %zu of %zu", s.got.n,
				n1);
			REQUIRE(cs->records_rx == ss->records_tx && cs->records_rx_fast > big / 16384 / 2 &&
					(mid || cs->records_rx_fast > big / 16384) &&
					cs->records_rx_fast < cs->records_rx,
				"records: client rx %lu (fast %lu), server tx %lu", (unsigned long)cs->records_rx,
				(unsigned long)cs->records_rx_fast, (unsigned long)ss->records_tx);
			ck_assert_uint_eq(cs->bytes_rx, ss->bytes_tx);
			ck_assert_int_eq(stk_tls_failure(c.t), STK_TLS_FAIL_NONE);
			pair_free(&c, &s, cx, sx, true);
		}
	}
	free(a);
	free(b);
}
END_TEST

START_TEST(fast_unsupported)
{
	static const struct suite other[] = {
		{ STK_TLS_V13, NULL, "TLS_AES_128_CCM_SHA256", "TLS_AES_128_CCM_SHA256" },
		{ STK_TLS_V12, "ECDHE-ECDSA-AES128-SHA256", NULL, "ECDHE-ECDSA-AES128-SHA256" },
	};

	for (unsigned i = 0; i < 2; i++) {
		struct stk_tls_ctx *cx, *sx;
		struct end c, s;

		suite_ctxs(&other[i], &cx, &sx);
		connect_pair(&c, &s, cx, sx, TLS_TEST_HOST, NULL, 1448);
		ck_assert_str_eq(stk_tls_cipher(c.t), other[i].name);
		ck_assert_int_eq(stk_tls_fast_start(c.t, &fast_ops, &c), -ENOTSUP);
		ck_assert_int_eq(stk_tls_fast_start(s.t, &fast_ops, &s), -EINVAL); /* servers: OpenSSL's path */
		ck_assert(!stk_tls_fast_armed(c.t));
		send_all(&s, (const uint8_t *)"still there", 11);
		pump(&c, &s, 1448, 4096);
		ck_assert_uint_eq(c.got.n, 11);
		ck_assert_uint_eq(stk_tls_ctx_stats(cx)->records_rx_fast, 0);
		pair_free(&c, &s, cx, sx, true);
	}
}
END_TEST

/* offset of record i (0-based) in a ciphertext stream; its length in *len */
static size_t
record_at(const struct bytes *b, unsigned i, size_t *len)
{
	size_t off = 0;

	for (;;) {
		ck_assert_uint_le(off + 5, b->n);
		*len = (size_t)b->p[off + 3] << 8 | b->p[off + 4];
		if (i-- == 0)
			return off;
		off += 5 + *len;
	}
}

START_TEST(fast_tamper)
{
	static const unsigned which[] = { 0, 2, 3, 5 }; /* 1.3 AES-128, ChaCha; 1.2 AES-128, ChaCha */
	static const size_t chunks[] = { 1, 100, 1448 };

	for (unsigned w = 0; w < 4; w++)
		for (int tag = 0; tag < 2; tag++)
			for (unsigned k = 0; k < 3; k++) {
				const struct suite *su = &fast_suites[which[w]];
				struct stk_tls_ctx *cx, *sx;
				struct end c, s;
				uint8_t *m = rnd_bytes(10000);
				size_t off, len;

				rng_state = 99 + k;
				fast_pair(&c, &s, su, &cx, &sx, chunks[k], 0);
				ck_assert_int_eq(stk_tls_write(s.t, m, 100), 0);
				ck_assert_int_eq(stk_tls_write(s.t, m + 100, 9000), 0);
				ck_assert_int_eq(stk_tls_write(s.t, m + 9100, 900), 0);
				off = record_at(&s.out, 1, &len);
				ck_assert_uint_gt(len, 9000);
				s.out.p[tag ? off + 5 + len - 1 : off + 5 + 30] ^= 0x01;
				deliver(&s, &c, chunks[k], 4096);
				REQUIRE(stk_tls_failure(c.t) == STK_TLS_FAIL_PROTOCOL &&
						strstr(stk_tls_error(c.t), "bad record mac") != NULL,
					"%s tag %d: %s", su->name, tag, stk_tls_error(c.t));
				ck_assert_int_eq(c.fast_rc, STK_TLS_FAILED);
				/* the first record only: nothing of the bad one */
				REQUIRE(c.got.n == 100 && memcmp(c.got.p, m, 100) == 0, "%s: %zu bytes delivered",
					su->name, c.got.n);
				ck_assert_uint_ge(c.discards, 2); /* 9000 bytes were held in several buffers */
				ck_assert_int_eq(stk_tls_recv(c.t), STK_TLS_FAILED);
				pair_free(&c, &s, cx, sx, true);
				free(m);
			}
}
END_TEST

START_TEST(fast_close)
{
	for (unsigned i = 0; i < N_FAST_SUITES; i += 3)
		for (int mid = 0; mid < 2; mid++) {
			const struct suite *su = &fast_suites[i];
			struct stk_tls_ctx *cx, *sx;
			struct end c, s;
			uint8_t *m = rnd_bytes(50000);

			rng_state = 7 + (unsigned)mid;
			fast_pair(&c, &s, su, &cx, &sx, 100, mid ? 20000 : 0);
			send_all(&s, m, 50000);
			ck_assert_int_eq(stk_tls_close(s.t), 0);
			deliver(&s, &c, 100, 3000);
			ck_assert(c.closed);
			REQUIRE(c.got.n == 50000 && memcmp(c.got.p, m, 50000) == 0, "%s: %zu bytes", su->name,
				c.got.n);
			ck_assert_int_eq(stk_tls_failure(c.t), STK_TLS_FAIL_NONE);
			ck_assert_int_eq(stk_tls_recv(c.t), STK_TLS_CLOSED);
			ck_assert_int_eq(stk_tls_read(c.t, (uint8_t[4]){ 0 }, 4), STK_TLS_CLOSED);
			pair_free(&c, &s, cx, sx, true);
			free(m);
		}
}
END_TEST

START_TEST(fast_key_update)
{
	static const size_t chunks[] = { 1, 1448 };

	for (unsigned i = 0; i < 3; i++) /* the TLS 1.3 suites */
		for (unsigned k = 0; k < 2; k++)
			for (int mid = 0; mid < 2; mid++) {
				const struct suite *su = &fast_suites[i];
				struct stk_tls_ctx *cx, *sx;
				struct end c, s;
				size_t n = 30000;
				uint8_t *m = rnd_bytes(4 * n);
				const struct stk_tls_stats *cs;
				uint64_t tx0;

				rng_state = 1000 + k * 2 + (unsigned)mid;
				/* mid: armed inside the first part, the first update may
				 * still be OpenSSL's to read */
				fast_pair(&c, &s, su, &cx, &sx, chunks[k], mid ? n - 100 : 0);
				cs = stk_tls_ctx_stats(cx);
				tx0 = cs->records_tx;
				send_all(&s, m, n);
				ck_assert_int_eq(stk_tls_key_update(s.t, false), 0);
				send_all(&s, m + n, n);
				deliver(&s, &c, chunks[k], 5000);
				ck_assert_uint_eq(c.out.n, 0); /* nothing asked of the client */
				ck_assert_uint_eq(cs->records_tx, tx0);
				ck_assert_int_eq(stk_tls_key_update(s.t, true), 0);
				send_all(&s, m + 2 * n, n);
				deliver(&s, &c, chunks[k], 5000);
				/* the client's own KeyUpdate went out */
				ck_assert_uint_eq(cs->records_tx, tx0 + 1);
				REQUIRE(c.got.n == 3 * n && memcmp(c.got.p, m, 3 * n) == 0, "%s: %zu of %zu bytes (%s)",
					su->name, c.got.n, 3 * n, stk_tls_error(c.t));
				ck_assert(stk_tls_fast_armed(c.t));
				send_all(&c, m, 5000); /* under the client's new key */
				send_all(&s, m + 3 * n, n);
				pump(&c, &s, chunks[k], 5000);
				REQUIRE(s.got.n == 5000 && memcmp(s.got.p, m, 5000) == 0, "client -> server after the update: %s",
					stk_tls_error(s.t));
				REQUIRE(c.got.n == 4 * n && memcmp(c.got.p, m, 4 * n) == 0, "%s: %zu bytes", su->name,
					c.got.n);
				ck_assert_uint_gt(cs->records_rx_fast, 0);
				pair_free(&c, &s, cx, sx, true);
				free(m);
			}
}
END_TEST

START_TEST(fast_ticket)
{
	const struct suite *su = &fast_suites[0];
	struct stk_tls_ctx *cx, *sx;
	struct end c, s;
	uint8_t *m = rnd_bytes(20000);

	rng_state = 5;
	fast_pair(&c, &s, su, &cx, &sx, 7, 0);
	send_all(&s, m, 10000);
	ck_assert_int_eq(stk_tls_send_ticket(s.t), 0);
	send_all(&s, m + 10000, 10000);
	ck_assert_int_eq(stk_tls_send_ticket(c.t), -ENOTSUP); /* servers only */
	deliver(&s, &c, 7, 5000);
	REQUIRE(c.got.n == 20000 && memcmp(c.got.p, m, 20000) == 0, "%zu bytes (%s)", c.got.n, stk_tls_error(c.t));
	ck_assert_uint_eq(stk_tls_ctx_stats(cx)->tickets_ignored, 1);
	ck_assert_int_eq(stk_tls_failure(c.t), STK_TLS_FAIL_NONE);
	pair_free(&c, &s, cx, sx, true);
	free(m);
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
	TCase *tc = t_tcase(s, "session", NULL, NULL, 120);

	T_TESTS(tc, versions, ip_literal, verify, resume, versions_bad, garbage, tx_refused,
		close_notify, timeout, bad_conf);
	tc = t_tcase(s, "fast", NULL, NULL, 300);
	tcase_add_loop_test(tc, fast_suites_exact, 0, N_FAST_SUITES);
	T_TESTS(tc, fast_unsupported, fast_tamper, fast_close, fast_key_update, fast_ticket);
	return s;
}

/* --bench old|fast N: the client's receive of N 64-byte messages sent in
 * 16 KiB records (TLS 1.3 AES-128-GCM), fed in 1448-byte segments, read into
 * 2 KiB buffers. For callgrind: --toggle-collect=bench_rx. */
static void __attribute__((noinline))
bench_rx(struct end *c, const struct bytes *ct, bool fast)
{
	static uint8_t buf[2048];

	for (size_t off = 0; off < ct->n; off += 1448) {
		size_t k = ct->n - off < 1448 ? ct->n - off : 1448;

		stk_tls_input(c->t, ct->p + off, k);
		if (fast) {
			stk_tls_recv(c->t);
			continue;
		}
		while (stk_tls_read(c->t, buf, sizeof(buf)) > 0)
			c->delivers++;
	}
}

static uint8_t bench_pool[64][2048];

static void *
bench_get(void *user, uint8_t **p, size_t *cap)
{
	struct end *e = user;
	uint8_t *b = bench_pool[e->gets++ % 64];

	*p = b;
	*cap = 2048;
	return b;
}

static void
bench_deliver(void *user, void *buf, size_t n)
{
	struct end *e = user;

	(void)buf;
	(void)n;
	e->delivers++;
}

static void
bench_deliver_discard(void *user, void *buf)
{
	(void)user;
	(void)buf;
}

static const struct stk_tls_rx_ops bench_ops = { .get = bench_get, .deliver = bench_deliver,
						 .discard = bench_deliver_discard };

static int
bench(bool fast, size_t n)
{
	const struct suite *su = &fast_suites[0];
	struct stk_tls_ctx *cx, *sx;
	struct end c, s;
	uint8_t rec[16384];
	size_t sent = 0;
	struct bytes ct = { 0 };

	for (size_t i = 0; i < sizeof(rec); i++)
		rec[i] = (uint8_t)i;
	suite_ctxs(su, &cx, &sx);
	connect_pair(&c, &s, cx, sx, TLS_TEST_HOST, NULL, 1448);
	if (fast && stk_tls_fast_start(c.t, &bench_ops, &c) != 0)
		return 1;
	/* one record first: the fast path switches there, outside the measure */
	ck_assert_int_eq(stk_tls_write(s.t, rec, 64), 0);
	deliver(&s, &c, 1448, 2048);
	for (; sent < n * 64; sent += sizeof(rec))
		ck_assert_int_eq(stk_tls_write(s.t, rec, sizeof(rec)), 0);
	ct = s.out;
	s.out = (struct bytes){ 0 };
	bench_rx(&c, &ct, fast);
	printf("bench %s: %zu messages of 64 B in %zu records, %u buffers delivered, %lu records fast\n",
	       fast ? "fast" : "old", n, sent / sizeof(rec), c.delivers,
	       (unsigned long)stk_tls_ctx_stats(cx)->records_rx_fast);
	free(ct.p);
	pair_free(&c, &s, cx, sx, false);
	return 0;
}

static bool bench_fast;
static size_t bench_n;

START_TEST(bench_test)
{
	ck_assert_int_eq(bench(bench_fast, bench_n), 0);
}
END_TEST

int
main(int argc, char **argv)
{
	SRunner *sr;
	int failed;

	if (tls_certs_make(&pki, ".") < 0) {
		fprintf(stderr, "test_tls: cannot make the test PKI in .\n");
		return EXIT_FAILURE;
	}
	if (argc == 4 && strcmp(argv[1], "--bench") == 0) {
		Suite *s = suite_create("tls_bench");
		TCase *tc = t_tcase(s, "bench", NULL, NULL, 600);

		bench_fast = strcmp(argv[2], "fast") == 0;
		bench_n = strtoul(argv[3], NULL, 10);
		T_TESTS(tc, bench_test);
		sr = srunner_create(s);
		srunner_set_fork_status(sr, CK_NOFORK);
	} else {
		sr = srunner_create(tls_suite());
	}
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	tls_certs_remove(&pki);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
