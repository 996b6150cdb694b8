/* SPDX-License-Identifier: BSD-3-Clause
 * test_h_feedsim.c — the feedsim stage (plugins/feedsim) through the plugin
 * test harness: the test is its tcp stage and one WebSocket client. The first
 * turn's poll sends LISTEN; the test answers ACCEPTED and a client's upgrade
 * request, then turns the stage until it is idle, and reads everything it sent
 * on "tx" as one byte stream: a 101 with the right Sec-WebSocket-Accept, then
 * unmasked frames.
 *
 * ticks_well_formed  count 5 over 2 symbols, fixed size: five text frames, each
 *                    a JSON tick {"s":"SYM0000k","n":..} whose n runs 1, 2, ...
 *                    per symbol without a gap, then close 1000; msgs, msg_bytes,
 *                    handshakes and closes exact
 * gap_every_skips    gap_every 2: every symbol's n skips one after every second
 *                    message, counted in gaps_injected
 * bad_request        a request that is not an upgrade: a 400 and TCP's close,
 *                    fail_handshake, no frame
 * linger_close       count 0 (no end), batch 3: two turns send two batches, the
 *                    shutdown's linger sends close 1001 after them, no tick
 *                    after it, and is done (0) once the client's masked close
 *                    frame answers
 */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include <lcp/stream.h>
#include <stk/ws.h>

#include "plugin_harness.h"

#include "../t_check.h"

#define T_CLIENT 0x21 /* the tcp connection id of the client */

/* every SEND on "tx" so far, concatenated into buf (freed); *fin: a CLOSE
 * command (TCP's FIN) came last */
static size_t
t_sent(struct lcp_h *h, uint8_t *buf, size_t cap, bool *fin)
{
	size_t o = 0;

	*fin = false;
	for (unsigned i = 0; i < lcp_h_out_n(h, "tx"); i++) {
		struct rte_mbuf *m = lcp_h_out(h, "tx")[i];
		uint32_t len = rte_pktmbuf_pkt_len(m);
		const void *p;

		ck_assert_uint_eq(lcp_stream_meta(m)->conn, T_CLIENT);
		ck_assert_msg(!*fin, "a command after CLOSE");
		if (lcp_stream_meta(m)->ev == LCP_STREAM_CMD_CLOSE) {
			*fin = true;
			continue;
		}
		ck_assert_uint_eq(lcp_stream_meta(m)->ev, LCP_STREAM_CMD_SEND);
		ck_assert_uint_le(o + len, cap);
		p = rte_pktmbuf_read(m, 0, len, buf + o);
		if (p != buf + o)
			memcpy(buf + o, p, len);
		o += len;
	}
	lcp_h_out_clear(h, "tx");
	return o;
}

/* the LISTEN of the first poll, then ACCEPTED and the client's request req */
static void
t_open(struct lcp_h *h, const char *req)
{
	struct rte_mbuf *m;

	lcp_h_turn(h); /* the first poll listens */
	ck_assert_uint_eq(lcp_h_out_n(h, "tx"), 1);
	m = lcp_h_out(h, "tx")[0];
	ck_assert_uint_eq(lcp_stream_meta(m)->ev, LCP_STREAM_CMD_LISTEN);
	ck_assert_uint_eq(lcp_stream_meta(m)->port, 8080);
	lcp_h_out_clear(h, "tx");
	lcp_h_push1(h, "in", lcp_h_stream(h, LCP_STREAM_EV_ACCEPTED, T_CLIENT, 0, 0, NULL, 0));
	ck_assert_uint_eq(lcp_h_ctr(h, "clients"), 1);
	lcp_h_push1(h, "in", lcp_h_stream(h, LCP_STREAM_EV_DATA, T_CLIENT, 0, 0, req, strlen(req)));
}

static const char t_key[] = "dGhlIHNhbXBsZSBub25jZQ==";

static const char *
t_request(char *buf, size_t cap)
{
	struct stk_ws_hs hs;

	memset(&hs, 0, sizeof(hs));
	ck_assert_int_gt(
		stk_ws_client_request(&hs, buf, cap, "feed.test:8080", "/", t_key, NULL, NULL), 0);
	return buf;
}

/* turn until idle (flat out: no rate, no timer involved) */
static void
t_run(struct lcp_h *h)
{
	unsigned turns = 0;

	while (lcp_h_turn(h) != 0)
		ck_assert_uint_lt(++turns, 1000);
}

/* the frame at *o: opcode, payload and its length; false at the end */
static bool
t_next_frame(const uint8_t *b, size_t n, size_t *o, unsigned *opcode, const uint8_t **p,
	     size_t *len)
{
	size_t h = 2;

	if (*o == n)
		return false;
	ck_assert_uint_ge(n - *o, 2);
	ck_assert_uint_eq(b[*o] & 0x80, 0x80);	/* FIN: no fragments asked for */
	ck_assert_uint_eq(b[*o + 1] & 0x80, 0); /* a server does not mask */
	*opcode = b[*o] & 0x0f;
	*len = b[*o + 1] & 0x7f;
	if (*len == 126) {
		*len = (size_t)b[*o + 2] << 8 | b[*o + 3];
		h = 4;
	}
	ck_assert_uint_ne(*len, 127);
	ck_assert_uint_le(*o + h + *len, n);
	*p = b + *o + h;
	*o += h + *len;
	return true;
}

/* the 101 at the start of b: its length */
static size_t
t_check_101(const uint8_t *b, size_t n)
{
	char acc[29], want[64];
	const char *end = memmem(b, n, "\r\n\r\n", 4);

	ck_assert_ptr_nonnull(end);
	ck_assert_msg(strncmp((const char *)b, "HTTP/1.1 101 ", 13) == 0, "response: %.*s", (int)n,
		      b);
	stk_ws_accept_for(t_key, acc);
	snprintf(want, sizeof(want), "\r\nSec-WebSocket-Accept: %s\r\n", acc);
	ck_assert_msg(memmem(b, (size_t)(end + 2 - (const char *)b), want, strlen(want)) != NULL,
		      "response: %.*s", (int)(end - (const char *)b), b);
	return (size_t)(end + 4 - (const char *)b);
}

/* the ticks of b after the 101: checks each, per-symbol sequences with a skip
 * after every `gap`-th message of a symbol (0: none), a close frame with code
 * `code` last if any (*closed); returns the text frames */
static unsigned
t_check_ticks(const uint8_t *b, size_t n, size_t o, unsigned symbols, unsigned gap, unsigned code,
	      uint64_t *bytes, bool *closed)
{
	uint64_t next[8] = {0}, seen[8] = {0};
	unsigned frames = 0, opcode;
	const uint8_t *p;
	size_t len;

	*bytes = 0;
	*closed = false;
	while (t_next_frame(b, n, &o, &opcode, &p, &len)) {
		char tick[4096], sym[16];
		unsigned long long s, seq;
		int used = 0;

		ck_assert_msg(!*closed, "a frame after the close");
		if (opcode == 8) {
			ck_assert_uint_eq(len, 2);
			ck_assert_uint_eq((unsigned)(p[0] << 8 | p[1]), code);
			*closed = true;
			continue;
		}
		ck_assert_uint_eq(opcode, 1);
		ck_assert_uint_lt(len, sizeof(tick));
		memcpy(tick, p, len);
		tick[len] = '\0';
		ck_assert_msg(sscanf(tick, "{\"s\":\"%15[A-Z0-9]\",\"n\":%llu,%n", sym, &seq,
				     &used) == 2 &&
				      used > 0,
			      "not a tick: %s", tick);
		ck_assert_msg(tick[len - 1] == '}', "not a JSON object: %s", tick);
		ck_assert_msg(sscanf(sym, "SYM%llu", &s) == 1 && s < symbols, "symbol %s", sym);
		if (next[s] == 0)
			next[s] = 1;
		ck_assert_msg(seq == next[s], "%s: n %llu, expected %llu", sym, seq,
			      (unsigned long long)next[s]);
		seen[s]++;
		next[s] = seq + 1 + (gap != 0 && seen[s] % gap == 0);
		*bytes += len;
		frames++;
	}
	return frames;
}

static void
t_ticks(unsigned gap)
{
	char opts[256], req[1024];
	struct lcp_h *h;
	static uint8_t b[1 << 16];
	uint64_t bytes;
	bool closed, fin;
	size_t n, o;

	snprintf(opts, sizeof(opts),
		 "{\"symbols\": 2, \"count\": 5, \"sizes\": \"200:1\", \"seed\": 7, \"gap_every\": "
		 "%u}",
		 gap);
	h = lcp_h_new(&(struct lcp_h_conf){.plugin = "feedsim", .options = opts});
	t_open(h, t_request(req, sizeof(req)));
	ck_assert_uint_eq(lcp_h_ctr(h, "handshakes"), 1);
	t_run(h);
	n = t_sent(h, b, sizeof(b), &fin);
	o = t_check_101(b, n);
	ck_assert_uint_eq(t_check_ticks(b, n, o, 2, gap, 1000, &bytes, &closed), 5);
	ck_assert(closed);
	lcp_h_ctrs_eq(h, {"msgs", 5}, {"msg_bytes", bytes}, {"closes", 1}, {"fail_handshake", 0},
		      {"in.in", 2});
	lcp_h_free(h);
}

START_TEST(ticks_well_formed)
{
	t_ticks(0);
}
END_TEST

START_TEST(gap_every_skips)
{
	t_ticks(2);
}
END_TEST

START_TEST(bad_request)
{
	struct lcp_h *h =
		lcp_h_new(&(struct lcp_h_conf){.plugin = "feedsim", .options = "{\"count\": 5}"});
	static uint8_t b[8192];
	bool fin;
	size_t n;

	t_open(h, "GET / HTTP/1.1\r\nHost: feed.test\r\n\r\n");
	t_run(h);
	lcp_h_ctrs_eq(h, {"fail_handshake", 1}, {"handshakes", 0}, {"msgs", 0});
	n = t_sent(h, b, sizeof(b), &fin);
	ck_assert(fin);
	ck_assert_msg(n > 13 && strncmp((const char *)b, "HTTP/1.1 400 ", 13) == 0,
		      "response: %.*s", (int)n, b);
	lcp_h_free(h);
}
END_TEST

START_TEST(linger_close)
{
	struct lcp_h *h = lcp_h_new(&(struct lcp_h_conf){
		.plugin = "feedsim",
		.options = "{\"symbols\": 3, \"count\": 0, \"batch\": 3, \"sizes\": \"100:1\"}"});
	static uint8_t b[1 << 16];
	/* a client's close 1001: masked, key 01 02 03 04 */
	const uint8_t close_frame[8] = {0x88, 0x82, 1, 2, 3, 4, 0x03 ^ 1, 0xe9 ^ 2};
	char req[1024];
	uint64_t bytes;
	bool closed, fin;
	size_t n, o;
	unsigned frames;

	t_open(h, t_request(req, sizeof(req)));
	lcp_h_turn(h);
	lcp_h_turn(h);
	ck_assert_uint_eq(lcp_h_linger(h, false), 1);
	n = t_sent(h, b, sizeof(b), &fin);
	o = t_check_101(b, n);
	frames = t_check_ticks(b, n, o, 3, 0, 1001, &bytes, &closed);
	ck_assert(closed);
	ck_assert(!fin);
	/* two polls of a batch each (flat out), then the linger: none after the close */
	ck_assert_uint_eq(frames, 6);
	ck_assert_uint_eq(lcp_h_ctr(h, "msgs"), 6);
	ck_assert_uint_eq(lcp_h_ctr(h, "closes"), 1);
	/* sources do not produce while draining */
	lcp_h_turn(h);
	ck_assert_uint_eq(lcp_h_out_n(h, "tx"), 0);
	ck_assert_uint_eq(lcp_h_linger(h, false), 1);
	lcp_h_push1(h, "in",
		    lcp_h_stream(h, LCP_STREAM_EV_DATA, T_CLIENT, 0, (uint32_t)strlen(req),
				 close_frame, 8));
	ck_assert_uint_eq(lcp_h_linger(h, true), 0);
	ck_assert_uint_eq(lcp_h_ctr(h, "closes_rx"),
			  1); /* the session's count, published by linger */
	lcp_h_free(h);
}
END_TEST

static void
feedsim_tcases(Suite *s)
{
	T_TESTS(t_tcase(s, "feedsim", NULL, NULL, 60), ticks_well_formed, gap_every_skips,
		bad_request, linger_close);
}

T_MAIN("h_feedsim", feedsim_tcases)
