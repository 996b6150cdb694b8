/* SPDX-License-Identifier: BSD-3-Clause
 * test_h_ws.c — the ws stage (plugins/ws) through the plugin test harness: the
 * test is its tcp stage and its server. The first turn's poll sends CONNECT;
 * the test answers CONNECTED, reads the upgrade request off "tx", answers 101
 * with the right Sec-WebSocket-Accept, then feeds server frames as DATA events
 * and checks the messages on "msg", what ws sends back on "tx" and its
 * counters.
 *
 * open_and_frames     a text, a binary, a text in two fragments and a ping in
 *                     the segment of the 101: three msgs with exact bytes and
 *                     opcodes, one masked pong with the ping's payload; stop()
 *                     sends close 1001 and publishes the session's counts
 * one_byte_segments   the same stream one byte per DATA event: the same msgs,
 *                     all assembled (msgs_assembled) rather than zero copy
 * bad_opcode_1002     a frame with reserved opcode 0x3: close 1002 on tx,
 *                     fail_protocol_1002, a reconnect, no msg
 * stream_gap          a DATA event past the offset ws has read: fail_stream_gap,
 *                     nothing parsed across the gap
 * bad_accept          a 101 with a wrong Sec-WebSocket-Accept: fail_handshake,
 *                     no open
 * linger_close        the shutdown's linger: close 1001 on the open connection,
 *                     still closing (1) until the server's close frame (then
 *                     TCP's close, CMD_CLOSE) and tcp's CLOSED; then done (0),
 *                     stop_closes and stop_closes_answered 1, no reconnect
 * linger_reset_in_upgrade  the shutdown catches a connection in its upgrade
 *                     handshake: TCP closed at once (CMD_CLOSE); the server's
 *                     reset then counts as that handshake's failure
 *                     (fail_handshake), not as fail_tcp; done, no reconnect
 * stop_after_no_reconnect  stop_after_msgs reached in the burst that brings
 *                     the server's close: the stop is asked for and the
 *                     reconnect that close scheduled never comes
 * refused_options     a config ws refuses (no url) names the option
 */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include <arpa/inet.h>

#include <rte_cycles.h>

#include <lcp/stream.h>
#include <stk/ws.h>

#include "plugin_harness.h"

#include "../t_check.h"

#define T_CONN 7 /* the tcp connection id the test gives */

static const char t_opts[] =
	"{\"url\": \"ws://10.0.0.1:8080/feed\", \"handshake_timeout_ms\": 3600000,"
	" \"ping_interval_ms\": 0, \"stale_timeout_ms\": 0, \"deflate\": false,"
	" \"reconnect_min_ms\": 3600000, \"reconnect_max_ms\": 3600000}";

/* the one stream mbuf on "tx", its bytes copied to buf (NUL-terminated) */
static struct lcp_stream_meta
t_tx1(struct lcp_h *h, char *buf, size_t cap, size_t *len)
{
	struct rte_mbuf *m;
	struct lcp_stream_meta meta;
	const void *p;

	ck_assert_uint_eq(lcp_h_out_n(h, "tx"), 1);
	m = lcp_h_out(h, "tx")[0];
	meta = *lcp_stream_meta(m);
	*len = rte_pktmbuf_pkt_len(m);
	ck_assert_uint_lt(*len, cap);
	p = rte_pktmbuf_read(m, 0, (uint32_t)*len, buf);
	if (p != buf)
		memcpy(buf, p, *len);
	buf[*len] = '\0';
	lcp_h_out_clear(h, "tx");
	return meta;
}

/* the test's tcp stage on "in": event ev (no payload) of connection T_CONN, cookie user */
static void
t_ev(struct lcp_h *h, unsigned ev, uint32_t user)
{
	lcp_h_push1(h, "in", lcp_h_stream(h, ev, T_CONN, user, 0, NULL, 0));
}

/* the test's tcp stage on "in": DATA, the bytes [off, off + len) of T_CONN's stream */
static void
t_data(struct lcp_h *h, uint32_t user, size_t off, const void *p, size_t len)
{
	lcp_h_push1(h, "in",
		    lcp_h_stream(h, LCP_STREAM_EV_DATA, T_CONN, user, (uint32_t)off, p, len));
}

/* a ws stage (options opts, NULL: t_opts) that connected and sent its upgrade
 * request: returns the stage, the cookie in *user_out; the 101 that answers it
 * goes to resp (with extra bytes appended by the caller) */
static struct lcp_h *
t_connect_opts(const char *opts, char *resp, size_t cap, bool good_accept, uint32_t *user_out)
{
	struct lcp_h *h =
		lcp_h_new(&(struct lcp_h_conf){.plugin = "ws", .options = opts != NULL ? opts : t_opts});
	char req[4096], acc[29];
	struct lcp_stream_meta meta;
	const char *k;
	size_t len;
	uint32_t user;

	lcp_h_turn(h); /* the first poll connects */
	meta = t_tx1(h, req, sizeof(req), &len);
	ck_assert_uint_eq(meta.ev, LCP_STREAM_CMD_CONNECT);
	ck_assert_uint_eq(meta.addr, inet_addr("10.0.0.1"));
	ck_assert_uint_eq(meta.port, 8080);
	ck_assert_uint_eq(len, 0);
	user = meta.user;
	ck_assert_uint_eq(lcp_h_ctr(h, "connects"), 1);

	t_ev(h, LCP_STREAM_EV_CONNECTED, user);
	meta = t_tx1(h, req, sizeof(req), &len);
	ck_assert_uint_eq(meta.ev, LCP_STREAM_CMD_SEND);
	ck_assert_uint_eq(meta.conn, T_CONN);
	ck_assert_msg(strncmp(req, "GET /feed HTTP/1.1\r\n", 20) == 0, "request: %s", req);
	ck_assert_msg(strstr(req, "\r\nHost: 10.0.0.1:8080\r\n") != NULL, "request: %s", req);
	ck_assert_msg(strcmp(req + len - 4, "\r\n\r\n") == 0, "request: %s", req);
	k = strstr(req, "\r\nSec-WebSocket-Key: ");
	ck_assert_msg(k != NULL, "request: %s", req);
	k += strlen("\r\nSec-WebSocket-Key: ");
	ck_assert_ptr_nonnull(strchr(k, '\r'));
	*strchr(k, '\r') = '\0';
	stk_ws_accept_for(k, acc);
	if (!good_accept)
		acc[0] = acc[0] == 'A' ? 'B' : 'A';
	snprintf(resp, cap,
		 "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
		 "Sec-WebSocket-Accept: %s\r\n\r\n",
		 acc);
	*user_out = user;
	return h;
}

static struct lcp_h *
t_connect(char *resp, size_t cap, bool good_accept, uint32_t *user_out)
{
	return t_connect_opts(NULL, resp, cap, good_accept, user_out);
}

/* the one stream mbuf on "tx": a masked close frame with code and no reason */
static void
t_tx_close(struct lcp_h *h, unsigned code)
{
	char buf[64];
	uint8_t f[64];
	size_t len;
	struct lcp_stream_meta meta = t_tx1(h, buf, sizeof(buf), &len);

	ck_assert_uint_eq(meta.ev, LCP_STREAM_CMD_SEND);
	ck_assert_uint_eq(len, 2 + 4 + 2);
	memcpy(f, buf, len);
	ck_assert_uint_eq(f[0], 0x88);
	ck_assert_uint_eq((unsigned)((f[6] ^ f[2]) << 8 | (f[7] ^ f[3])), code);
}

/* an unmasked server frame appended at *o */
static void
t_frame(uint8_t *buf, size_t *o, unsigned opcode, bool fin, const char *payload, size_t n)
{
	*o += stk_ws_hdr(buf + *o, opcode, fin, n, NULL);
	memcpy(buf + *o, payload, n);
	*o += n;
}

/* the 101 and then: "hello" (text), 01 02 03 (binary), "wor" + "ld" (text in
 * two fragments), ping "p" */
static size_t
t_stream(uint8_t *buf, const char *resp)
{
	size_t o = strlen(resp);

	memcpy(buf, resp, o);
	t_frame(buf, &o, 1, true, "hello", 5);
	t_frame(buf, &o, 2, true, "\x01\x02\x03", 3);
	t_frame(buf, &o, 1, false, "wor", 3);
	t_frame(buf, &o, 9, true, "p", 1); /* a control frame between fragments */
	t_frame(buf, &o, 0, true, "ld", 2);
	return o;
}

/* the three messages of t_stream, `assembled` of them copied out of segments */
static void
t_check_msgs(struct lcp_h *h, unsigned assembled)
{
	struct lcp_msg **m = (struct lcp_msg **)lcp_h_out(h, "msg");
	uint8_t pong[64];
	char buf[64];
	struct lcp_stream_meta meta;
	size_t len;

	ck_assert_uint_eq(lcp_h_out_n(h, "msg"), 3);
	ck_assert_uint_eq(m[0]->opcode, 1);
	ck_assert_uint_eq(m[0]->len, 5);
	ck_assert_mem_eq(m[0]->data, "hello", 5);
	ck_assert_uint_eq(m[1]->opcode, 2);
	ck_assert_uint_eq(m[1]->len, 3);
	ck_assert_mem_eq(m[1]->data, "\x01\x02\x03", 3);
	ck_assert_uint_eq(m[2]->opcode, 1);
	ck_assert_uint_eq(m[2]->len, 5);
	ck_assert_mem_eq(m[2]->data, "world", 5);
	ck_assert_uint_eq(m[0]->flags & LCP_MSG_F_SESSION_START, LCP_MSG_F_SESSION_START);
	ck_assert_uint_eq(m[1]->flags & LCP_MSG_F_SESSION_START, 0);
	ck_assert_uint_eq(m[0]->conn_id, m[2]->conn_id);
	/* the first message is set up one field at a time (it starts the
	 * session), the next from the segment's template: the same owner,
	 * release, flags but the session's, no loss */
	for (unsigned i = 0; i < 3; i++) {
		ck_assert_uint_eq(m[i]->flags & (LCP_MSG_F_BULK | LCP_MSG_F_LOSS), LCP_MSG_F_BULK);
		ck_assert_uint_eq(m[i]->conn_id, m[0]->conn_id);
		ck_assert_ptr_eq(m[i]->owner, m[0]->owner);
		ck_assert_ptr_eq(m[i]->release, m[0]->release);
		ck_assert_uint_eq(m[i]->lost, 0);
	}
	if (assembled == 0) { /* by reference into the one segment */
		ck_assert_ptr_nonnull(m[0]->backing[0]);
		ck_assert_ptr_eq(m[1]->backing[0], m[0]->backing[0]);
		ck_assert_ptr_null(m[0]->backing[1]);
		ck_assert_ptr_null(m[1]->backing[1]);
		ck_assert_uint_eq(m[1]->rx_tsc, m[0]->rx_tsc);
	}
	lcp_h_ctrs_eq(h, {"opens", 1}, {"msgs", 3}, {"msg_bytes", 13}, {"msg.out", 3},
		      {"msgs_zero_copy", 3 - assembled}, {"msgs_assembled", assembled},
		      {"fail_protocol_1002", 0});
	/* the pong: FIN + opcode 0xA, masked, 1 byte, the ping's payload */
	meta = t_tx1(h, buf, sizeof(buf), &len);
	ck_assert_uint_eq(meta.ev, LCP_STREAM_CMD_SEND);
	ck_assert_uint_eq(meta.conn, T_CONN);
	ck_assert_uint_eq(len, 2 + 4 + 1);
	memcpy(pong, buf, len);
	ck_assert_uint_eq(pong[0], 0x8a);
	ck_assert_uint_eq(pong[1], 0x80 | 1);
	ck_assert_uint_eq(pong[6] ^ pong[2], 'p');
	/* the messages hold the segment's mbuf; freeing them gives it back */
	lcp_h_out_clear(h, "msg");
	ck_assert_uint_eq(lcp_h_mbufs_in_use(h), 0);
	/* stop(): close 1001 on the open connection, and the session's counts
	 * (published at a poll's millisecond tick, and at stop) */
	lcp_h_stop(h);
	lcp_h_ctrs_eq(h, {"stop_closes", 1}, {"pings_rx", 1}, {"pongs_tx", 1});
	t_tx_close(h, 1001);
}

/* a ws stage whose connection got the 101 (with a right or a wrong
 * Sec-WebSocket-Accept) and t_stream's frames, all in one segment or (bytewise)
 * one byte a segment; *len: the bytes of the stream (len NULL: not wanted) */
static struct lcp_h *
t_open_stream(bool good_accept, bool bytewise, size_t *len)
{
	char resp[256];
	uint8_t buf[512];
	size_t n, seg;
	uint32_t user;
	struct lcp_h *h = t_connect(resp, sizeof(resp), good_accept, &user);

	n = t_stream(buf, resp);
	seg = bytewise ? 1 : n;
	for (size_t i = 0; i < n; i += seg)
		t_data(h, user, i, buf + i, seg);
	if (len != NULL)
		*len = n;
	return h;
}

START_TEST(open_and_frames)
{
	struct lcp_h *h = t_open_stream(true, false, NULL);

	ck_assert_uint_eq(lcp_h_ctr(h, "in.in"), 2);
	t_check_msgs(h, 1); /* whole frames point into the segment; fragments are copied */
	lcp_h_free(h);
}
END_TEST

START_TEST(one_byte_segments)
{
	size_t n;
	struct lcp_h *h = t_open_stream(true, true, &n);

	ck_assert_uint_eq(lcp_h_ctr(h, "in.in"), 1 + n);
	t_check_msgs(h, 3); /* every message spans segments */
	lcp_h_free(h);
}
END_TEST

START_TEST(bad_opcode_1002)
{
	char resp[256], out[64];
	uint8_t buf[512], f[32];
	size_t n, len;
	struct lcp_stream_meta meta;
	uint32_t user;
	struct lcp_h *h = t_connect(resp, sizeof(resp), true, &user);

	n = strlen(resp);
	memcpy(buf, resp, n);
	t_frame(buf, &n, 3, true, "x", 1);
	t_frame(buf, &n, 1, true, "late", 4); /* after the error: never a msg */
	t_data(h, user, 0, buf, n);
	lcp_h_ctrs_eq(h, {"opens", 1}, {"fail_protocol_1002", 1}, {"reconnects", 1}, {"msgs", 0});
	ck_assert_uint_eq(lcp_h_out_n(h, "msg"), 0);
	/* first on tx: the close frame 1002, masked (then TCP's close) */
	ck_assert_uint_ge(lcp_h_out_n(h, "tx"), 1);
	{
		struct rte_mbuf *m = lcp_h_out(h, "tx")[0];

		meta = *lcp_stream_meta(m);
		len = rte_pktmbuf_pkt_len(m);
		ck_assert_uint_eq(meta.ev, LCP_STREAM_CMD_SEND);
		ck_assert_uint_ge(len, 2 + 4 + 2);
		ck_assert_uint_le(len, sizeof(out));
		memcpy(f, rte_pktmbuf_read(m, 0, (uint32_t)len, out), len);
	}
	ck_assert_uint_eq(f[0], 0x88);
	ck_assert_uint_eq(f[1] & 0x80, 0x80);
	ck_assert_uint_eq((unsigned)((f[6] ^ f[2]) << 8 | (f[7] ^ f[3])), 1002);
	lcp_h_free(h);
}
END_TEST

START_TEST(stream_gap)
{
	char resp[256];
	uint8_t buf[512];
	size_t n, r;
	uint32_t user;
	struct lcp_h *h = t_connect(resp, sizeof(resp), true, &user);

	n = t_stream(buf, resp);
	r = strlen(resp);
	t_data(h, user, 0, buf, r);
	ck_assert_uint_eq(lcp_h_ctr(h, "opens"), 1);
	/* skip the first frame's 7 bytes: the next segment starts past rx_off */
	t_data(h, user, r + 7, buf + r + 7, n - r - 7);
	ck_assert_uint_eq(lcp_h_ctr(h, "fail_stream_gap"), 1);
	ck_assert_uint_eq(lcp_h_ctr(h, "msgs"), 0);
	ck_assert_uint_eq(lcp_h_out_n(h, "msg"), 0);
	lcp_h_free(h);
}
END_TEST

START_TEST(bad_accept)
{
	struct lcp_h *h = t_open_stream(false, false, NULL);

	lcp_h_ctrs_eq(h, {"fail_handshake", 1}, {"opens", 0}, {"msgs", 0});
	ck_assert_uint_eq(lcp_h_out_n(h, "msg"), 0);
	lcp_h_free(h);
}
END_TEST

/* draining after the linger: nothing sent and no reconnect however many turns */
static void
t_drained(struct lcp_h *h)
{
	for (unsigned i = 0; i < 8; i++)
		lcp_h_turn(h);
	ck_assert_uint_eq(lcp_h_out_n(h, "tx"), 0);
	ck_assert_uint_eq(lcp_h_ctr(h, "connects"), 1);
	ck_assert_uint_eq(lcp_h_ctr(h, "reconnects"), 0);
}

START_TEST(linger_close)
{
	char resp[256], buf[64];
	uint8_t close_frame[4] = {0x88, 0x02, 0x03, 0xe9}; /* unmasked close 1001 */
	struct lcp_stream_meta meta;
	size_t len, r;
	uint32_t user;
	struct lcp_h *h = t_connect(resp, sizeof(resp), true, &user);

	r = strlen(resp);
	t_data(h, user, 0, resp, r);
	ck_assert_uint_eq(lcp_h_ctr(h, "opens"), 1);
	ck_assert_uint_eq(lcp_h_linger(h, false), 1);
	t_tx_close(h, 1001);
	ck_assert_uint_eq(lcp_h_ctr(h, "stop_closes"), 1);
	/* nothing more until the server answers */
	ck_assert_uint_eq(lcp_h_linger(h, false), 1);
	ck_assert_uint_eq(lcp_h_out_n(h, "tx"), 0);
	/* the server's close: TCP's close follows */
	t_data(h, user, r, close_frame, 4);
	ck_assert_uint_eq(lcp_h_ctr(h, "stop_closes_answered"), 1);
	meta = t_tx1(h, buf, sizeof(buf), &len);
	ck_assert_uint_eq(meta.ev, LCP_STREAM_CMD_CLOSE);
	ck_assert_uint_eq(meta.conn, T_CONN);
	ck_assert_uint_eq(lcp_h_linger(h, true), 1);
	t_ev(h, LCP_STREAM_EV_CLOSED, user);
	ck_assert_uint_eq(lcp_h_linger(h, true), 0);
	t_drained(h);
	ck_assert_uint_eq(lcp_h_ctr(h, "fail_close_unfinished"), 0);
	lcp_h_free(h);
}
END_TEST

START_TEST(linger_reset_in_upgrade)
{
	char resp[256], buf[64];
	struct lcp_stream_meta meta;
	size_t len;
	uint32_t user;
	struct lcp_h *h = t_connect(resp, sizeof(resp), true, &user); /* the 101 never sent */

	ck_assert_uint_eq(lcp_h_linger(h, false), 1);
	meta = t_tx1(h, buf, sizeof(buf), &len);
	ck_assert_uint_eq(meta.ev, LCP_STREAM_CMD_CLOSE);
	ck_assert_uint_eq(meta.conn, T_CONN);
	t_ev(h, LCP_STREAM_EV_RESET, user);
	ck_assert_uint_eq(lcp_h_linger(h, true), 0);
	lcp_h_ctrs_eq(h, {"fail_handshake", 1}, {"fail_tcp", 0}, {"opens", 0});
	t_drained(h);
	lcp_h_free(h);
}
END_TEST

/* stop_after_msgs reached in the burst that also brings the server's close
 * 1000: that close schedules a reconnect (1 ms here), but ws asked for the
 * stop, so it never connects again however long the control thread takes to
 * act on the request (the harness never does). */
START_TEST(stop_after_no_reconnect)
{
	static const char opts[] =
		"{\"url\": \"ws://10.0.0.1:8080/feed\", \"handshake_timeout_ms\": 3600000,"
		" \"ping_interval_ms\": 0, \"stale_timeout_ms\": 0, \"deflate\": false,"
		" \"reconnect_min_ms\": 1, \"reconnect_max_ms\": 1, \"stop_after_msgs\": 1}";
	char resp[256];
	uint8_t buf[512];
	size_t o;
	uint32_t user;
	struct lcp_h *h = t_connect_opts(opts, resp, sizeof(resp), true, &user);
	uint64_t until;

	o = strlen(resp);
	memcpy(buf, resp, o);
	t_frame(buf, &o, 1, true, "hello", 5);
	t_frame(buf, &o, 8, true, "\x03\xe8", 2); /* close 1000 */
	t_data(h, user, 0, buf, o);
	ck_assert_uint_eq(lcp_h_out_n(h, "msg"), 1);
	ck_assert_str_eq(lcp_h_stop_request(h), "ws stop_after_msgs");
	/* 50 ms of turns: the 1 ms reconnect delay and ws's 1 ms poll tick pass
	 * many times over */
	until = rte_rdtsc() + rte_get_tsc_hz() / 20;
	while (rte_rdtsc() < until)
		lcp_h_turn(h);
	for (unsigned i = 0; i < lcp_h_out_n(h, "tx"); i++)
		ck_assert_uint_ne(lcp_stream_meta(lcp_h_out(h, "tx")[i])->ev, LCP_STREAM_CMD_CONNECT);
	ck_assert_uint_eq(lcp_h_ctr(h, "connects"), 1);
	lcp_h_free(h);
}
END_TEST

START_TEST(refused_options)
{
	char err[4096];
	struct lcp_h *h = lcp_h_try_new(
		&(struct lcp_h_conf){.plugin = "ws", .options = "{\"connections\": 2}"}, err,
		sizeof(err));

	ck_assert_ptr_null(h);
	ck_assert_msg(strstr(err, "stages[0].options.url: required") != NULL, "errors: %s", err);
}
END_TEST

static void
ws_tcases(Suite *s)
{
	T_TESTS(t_tcase(s, "ws", NULL, NULL, 60), open_and_frames, one_byte_segments,
		bad_opcode_1002, stream_gap, bad_accept, linger_close, linger_reset_in_upgrade,
		stop_after_no_reconnect, refused_options);
}

T_MAIN("h_ws", ws_tcases)
