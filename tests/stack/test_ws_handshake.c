/* SPDX-License-Identifier: BSD-3-Clause
 * test_ws_handshake.c — stack/ws_handshake.c (RFC 6455 4, both sides) through
 * stk/ws.h (L0, no DPDK, no I/O).
 *
 *   accept_vectors       stk_ws_accept_for: RFC 6455 1.3 ("dGhlIHNhbXBsZSBub25jZQ=="
 *                        -> "s3pPLMBiTxaQ9kYGzzhZRbK+xOo=") and three more computed
 *                        with Python hashlib; stk_ws_key: base64 of 16 bytes (the
 *                        RFC's "the sample nonce"), exact lengths, no overrun
 *   client_request       request line, Host, Upgrade, Connection, Key, Version 13
 *                        each once, Sec-WebSocket-Protocol only when asked, extra
 *                        headers verbatim before the blank line, "" path -> "/",
 *                        return = strlen, cap too small -> -1
 *   response_good        canonical / case and whitespace variants / a token
 *                        list in Connection / no reason phrase / the asked
 *                        subprotocol: accepted whole, byte by byte, split at
 *                        every byte, and followed by frame bytes (*used stops at
 *                        the head, in every split)
 *   response_bad         200, 400, 1010, HTTP/1.0, HTTP/2, missing / wrong
 *                        Upgrade, Connection without upgrade, missing / wrong /
 *                        padded Accept, an unasked subprotocol, the asked one
 *                        missing or different, an extension, a header line
 *                        without a colon -> -1 with h->err, whole and byte by byte
 *   head_limit           an 8192-byte head is accepted, 8193 -> -1; endless
 *                        headers (slowloris) in 7-byte pieces -> -1 by the time
 *                        8 KiB were fed, never 1; one 20000-byte chunk -> -1;
 *                        the same for the server's request parser
 *   request_good         the client's own request and hand-written variants:
 *                        path, key, protocol extracted; whole, split at every
 *                        byte, followed by frame bytes
 *   request_bad          POST, HTTP/1.0, no Host, no / wrong Upgrade, no
 *                        Connection upgrade, Version 8 / missing, key of 20 / 28
 *                        bytes, missing, empty, not base64, 17 or 18 bytes in 24
 *                        characters -> -1 with h->err
 *   server_response      101 with Accept = stk_ws_accept_for(key), protocol only
 *                        when given, cap too small -> -1; stk_ws_server_reject:
 *                        400 with a matching Content-Length
 *   tokens               tchar for every byte; Sec-WebSocket-Protocol a token list
 *                        (0xff, spaces, empty elements, quotes refused; over 63
 *                        bytes refused, not cut) on the server, the answer one
 *                        token of those asked on the client; header names are
 *                        tokens with the colon right after, both sides
 *   round_trip           client request -> server parser -> server response ->
 *                        client parser accepts (with and without subprotocol);
 *                        a server choosing another subprotocol or rejecting is
 *                        refused by the client
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <stk/ws.h>

#include "t_bytes.h"

#define KEY "dGhlIHNhbXBsZSBub25jZQ=="
#define ACCEPT "s3pPLMBiTxaQ9kYGzzhZRbK+xOo="

static const uint8_t frame_bytes[] = {0x81, 0x05, 0x48, 0x65, 0x6c, 0x6c, 0x6f, 0x89, 0x00};

/* occurrences of header `name` in a head (after the first line); value of the last one into val */
static int
hdr_count(const char *head, const char *name, char *val, size_t vcap)
{
	const char *l = strstr(head, "\r\n");
	size_t nl = strlen(name);
	int n = 0;

	while (l != NULL && l[2] != '\0' && !(l[2] == '\r' && l[3] == '\n')) {
		const char *s = l + 2, *e = strstr(s, "\r\n");

		REQUIRE(e != NULL, "header line without CRLF");
		if ((size_t)(e - s) > nl && strncasecmp(s, name, nl) == 0 && s[nl] == ':') {
			const char *v = s + nl + 1;

			while (*v == ' ')
				v++;
			if (val != NULL)
				snprintf(val, vcap, "%.*s", (int)(e - v), v);
			n++;
		}
		l = e;
	}
	return n;
}

/* a client state prepared for key/protocol */
static void
client_for(struct stk_ws_hs *h, const char *key, const char *proto)
{
	char req[1024];

	ck_assert_int_gt(stk_ws_client_request(h, req, sizeof(req), "example.com", "/chat", key,
					       proto, NULL),
			 0);
}

START_TEST(accept_vectors)
{
	static const struct {
		const char *key, *acc;
	} v[] = {
		{KEY, ACCEPT}, /* RFC 6455 1.3 */
		{"AAAAAAAAAAAAAAAAAAAAAA==", "ICX+Yqv66kxgM0FcWaLWlFLwTAI="},
		{"x3JJHMbDL1EzLkh9GBhXDw==", "HSmrc0sMlYUkAGmm5OPpG2HaGWk="},
		{"/////////////////////w==", "XXpj4jYzLM2yUE0C7TIgMwTQh2g="},
	};
	static const uint8_t nonce[16] = "the sample nonce";
	uint8_t raw[16];
	char out[40];

	for (size_t i = 0; i < sizeof(v) / sizeof(v[0]); i++) {
		memset(out, 0x7e, sizeof(out));
		stk_ws_accept_for(v[i].key, out);
		ck_assert_str_eq(out, v[i].acc);
		ck_assert_uint_eq((unsigned char)out[29], 0x7e); /* nothing past out[28] */
	}
	memset(out, 0x7e, sizeof(out));
	stk_ws_key(nonce, out);
	ck_assert_str_eq(out, KEY);
	ck_assert_uint_eq((unsigned char)out[25], 0x7e);
	for (int i = 0; i < 16; i++)
		raw[i] = (uint8_t)i;
	stk_ws_key(raw, out);
	ck_assert_str_eq(out, "AAECAwQFBgcICQoLDA0ODw==");
	memset(raw, 0xff, 16);
	stk_ws_key(raw, out);
	ck_assert_str_eq(out, "/////////////////////w==");
}
END_TEST

START_TEST(client_request)
{
	struct stk_ws_hs h;
	char out[1024], val[256];
	int n;

	n = stk_ws_client_request(&h, out, sizeof(out), "example.com:8080", "/feed?x=1", KEY, NULL,
				  NULL);
	ck_assert_int_gt(n, 0);
	ck_assert_uint_eq((size_t)n, strlen(out));
	REQUIRE(strncmp(out, "GET /feed?x=1 HTTP/1.1\r\n", 24) == 0, "request line: %.40s", out);
	REQUIRE(n >= 4 && strcmp(out + n - 4, "\r\n\r\n") == 0, "does not end with a blank line");
	ck_assert(strstr(out, "\r\n\r\n") == out + n - 4);
	ck_assert_int_eq(hdr_count(out, "Host", val, sizeof(val)), 1);
	ck_assert_str_eq(val, "example.com:8080");
	ck_assert_int_eq(hdr_count(out, "Upgrade", val, sizeof(val)), 1);
	ck_assert(strcasecmp(val, "websocket") == 0);
	ck_assert_int_eq(hdr_count(out, "Connection", val, sizeof(val)), 1);
	ck_assert(strcasecmp(val, "Upgrade") == 0);
	ck_assert_int_eq(hdr_count(out, "Sec-WebSocket-Key", val, sizeof(val)), 1);
	ck_assert_str_eq(val, KEY);
	ck_assert_int_eq(hdr_count(out, "Sec-WebSocket-Version", val, sizeof(val)), 1);
	ck_assert_str_eq(val, "13");
	ck_assert_int_eq(hdr_count(out, "Sec-WebSocket-Protocol", NULL, 0), 0);
	ck_assert_int_eq(hdr_count(out, "Sec-WebSocket-Extensions", NULL, 0), 0);
	ck_assert_str_eq(h.accept, ACCEPT); /* prepared for the response */

	/* "" protocol = none; a protocol and extra headers */
	n = stk_ws_client_request(&h, out, sizeof(out), "h", "/", KEY, "", NULL);
	ck_assert_int_eq(hdr_count(out, "Sec-WebSocket-Protocol", NULL, 0), 0);
	n = stk_ws_client_request(&h, out, sizeof(out), "h", "/", KEY, "chat",
				  "X-A: 1\r\nX-Bee: two\r\n");
	ck_assert_int_gt(n, 0);
	ck_assert_int_eq(hdr_count(out, "Sec-WebSocket-Protocol", val, sizeof(val)), 1);
	ck_assert_str_eq(val, "chat");
	ck_assert_int_eq(hdr_count(out, "X-A", val, sizeof(val)), 1);
	ck_assert_str_eq(val, "1");
	ck_assert_int_eq(hdr_count(out, "X-Bee", val, sizeof(val)), 1);
	ck_assert_str_eq(val, "two");
	ck_assert(strcmp(out + n - 4, "\r\n\r\n") == 0);
	ck_assert(strstr(out, "\r\n\r\n") == out + n - 4);

	/* empty path */
	n = stk_ws_client_request(&h, out, sizeof(out), "h", "", KEY, NULL, NULL);
	ck_assert(strncmp(out, "GET / HTTP/1.1\r\n", 16) == 0);

	/* capacity: exactly enough (with the NUL), one short, far too small */
	{
		char big[1024], small[1024];
		int full = stk_ws_client_request(&h, big, sizeof(big), "example.com", "/chat", KEY,
						 "chat", NULL);

		ck_assert_int_gt(full, 0);
		ck_assert_int_eq(stk_ws_client_request(&h, small, (size_t)full + 1, "example.com",
						       "/chat", KEY, "chat", NULL),
				 full);
		ck_assert_str_eq(small, big);
		ck_assert_int_eq(stk_ws_client_request(&h, small, (size_t)full, "example.com",
						       "/chat", KEY, "chat", NULL),
				 -1);
		ck_assert_int_eq(stk_ws_client_request(&h, small, 10, "example.com", "/chat", KEY,
						       "chat", NULL),
				 -1);
	}
}
END_TEST

/* feed resp to a copy of tmpl: whole, byte by byte, every 2-split, and with
 * frame bytes after it (every split); expect `want` (1 or -1) at the end */
static void
feed_all_ways(const struct stk_ws_hs *tmpl, const char *resp, int want, const char *what,
	      int (*fn)(struct stk_ws_hs *, const uint8_t *, size_t, size_t *))
{
	static struct stk_ws_hs h; /* 8 KiB: kept off the stack */
	size_t len = strlen(resp), used, tot;
	uint8_t buf[9000];
	int rc;

	/* whole */
	h = *tmpl;
	used = 12345;
	rc = fn(&h, (const uint8_t *)resp, len, &used);
	REQUIRE(rc == want, "%s: whole: %d (%s)", what, rc, h.err ? h.err : "no error");
	if (want == 1)
		REQUIRE(used == len, "%s: used %zu of %zu", what, used, len);
	else
		REQUIRE(h.err != NULL, "%s: failed without h->err", what);

	/* byte by byte */
	h = *tmpl;
	for (size_t i = 0; i < len; i++) {
		rc = fn(&h, (const uint8_t *)resp + i, 1, &used);
		if (i + 1 < len && want == 1)
			REQUIRE(rc == 0 && used == 1, "%s: byte %zu: %d used %zu", what, i, rc,
				used);
		if (rc != 0)
			break;
	}
	REQUIRE(rc == want, "%s: byte by byte: %d (%s)", what, rc, h.err ? h.err : "no error");
	if (want == 1)
		ck_assert_uint_eq(used, 1);
	else
		ck_assert(h.err != NULL);

	/* followed by frame bytes, split at every point */
	ck_assert(len + sizeof(frame_bytes) <= sizeof(buf));
	memcpy(buf, resp, len);
	memcpy(buf + len, frame_bytes, sizeof(frame_bytes));
	tot = len + sizeof(frame_bytes);
	for (size_t k = 0; k <= tot; k++) {
		h = *tmpl;
		rc = fn(&h, buf, k, &used);
		if (k >= len) {
			REQUIRE(rc == want, "%s + frames, split %zu: first call %d", what, k, rc);
			if (want == 1)
				REQUIRE(used == len, "%s + frames, split %zu: used %zu, head %zu",
					what, k, used, len);
			continue;
		}
		if (rc == -1 && want == -1)
			continue; /* may fail early */
		REQUIRE(rc == 0 && used == k, "%s + frames, split %zu: first call %d used %zu",
			what, k, rc, used);
		rc = fn(&h, buf + k, tot - k, &used);
		REQUIRE(rc == want, "%s + frames, split %zu: second call %d (%s)", what, k, rc,
			h.err ? h.err : "no error");
		if (want == 1)
			REQUIRE(used == len - k, "%s + frames, split %zu: used %zu, expected %zu",
				what, k, used, len - k);
	}
}

START_TEST(response_good)
{
	static const struct {
		const char *proto, *resp;
	} v[] = {
		{NULL,
		 "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
		 "Sec-WebSocket-Accept: " ACCEPT "\r\n\r\n"},
		{NULL, "HTTP/1.1 101 Switching Protocols\r\nupgrade:   WebSocket  \r\nCONNECTION: "
		       "keep-alive, Upgrade\r\n"
		       "Server: test\r\nsec-websocket-accept:" ACCEPT
		       "\r\nDate: Thu, 01 Jan 1970 00:00:00 GMT\r\n\r\n"},
		{NULL, "HTTP/1.1 101\r\nSec-WebSocket-Accept: " ACCEPT
		       "\r\nConnection: upgrade\r\nUpgrade: websocket\r\n\r\n"},
		{"chat",
		 "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
		 "Sec-WebSocket-Accept: " ACCEPT "\r\nSec-WebSocket-Protocol: chat\r\n\r\n"},
	};
	static struct stk_ws_hs tmpl;

	for (size_t i = 0; i < sizeof(v) / sizeof(v[0]); i++) {
		char what[32];

		client_for(&tmpl, KEY, v[i].proto);
		snprintf(what, sizeof(what), "good response %zu", i);
		feed_all_ways(&tmpl, v[i].resp, 1, what, stk_ws_client_response);
	}
}
END_TEST

#define R101 "HTTP/1.1 101 Switching Protocols\r\n"
#define UPG "Upgrade: websocket\r\n"
#define CONN "Connection: Upgrade\r\n"
#define ACC "Sec-WebSocket-Accept: " ACCEPT "\r\n"

START_TEST(response_bad)
{
	static const struct {
		const char *proto, *resp, *why;
	} v[] = {
		{NULL, "HTTP/1.1 200 OK\r\n" UPG CONN ACC "\r\n", "status 200"},
		{NULL, "HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n", "status 400"},
		{NULL, "HTTP/1.1 1010 Odd\r\n" UPG CONN ACC "\r\n", "status 1010"},
		{NULL, "HTTP/1.0 101 Switching Protocols\r\n" UPG CONN ACC "\r\n", "HTTP/1.0"},
		{NULL, "HTTP/2 101 Switching Protocols\r\n" UPG CONN ACC "\r\n", "HTTP/2"},
		{NULL, R101 CONN ACC "\r\n", "no Upgrade"},
		{NULL, R101 "Upgrade: h2c\r\n" CONN ACC "\r\n", "Upgrade: h2c"},
		{NULL, R101 "Upgrade: websocket2\r\n" CONN ACC "\r\n", "Upgrade: websocket2"},
		{NULL, R101 UPG ACC "\r\n", "no Connection"},
		{NULL, R101 UPG "Connection: keep-alive\r\n" ACC "\r\n",
		 "Connection without upgrade"},
		{NULL, R101 UPG "Connection: upgrades\r\n" ACC "\r\n", "Connection: upgrades"},
		{NULL, R101 UPG CONN "\r\n", "no Accept"},
		{NULL, R101 UPG CONN "Sec-WebSocket-Accept: ICX+Yqv66kxgM0FcWaLWlFLwTAI=\r\n\r\n",
		 "Accept of another key"},
		{NULL, R101 UPG CONN "Sec-WebSocket-Accept: " ACCEPT "x\r\n\r\n",
		 "Accept with a suffix"},
		{NULL, R101 UPG CONN "Sec-WebSocket-Accept: s3pPLMBiTxaQ9kYGzzhZRbK+xOo\r\n\r\n",
		 "Accept cut short"},
		{NULL, R101 UPG CONN ACC "Sec-WebSocket-Protocol: chat\r\n\r\n",
		 "subprotocol not asked for"},
		{"chat", R101 UPG CONN ACC "\r\n", "asked subprotocol missing"},
		{"chat", R101 UPG CONN ACC "Sec-WebSocket-Protocol: superchat\r\n\r\n",
		 "another subprotocol"},
		{NULL, R101 UPG CONN ACC "Sec-WebSocket-Extensions: permessage-deflate\r\n\r\n",
		 "an extension"},
		{NULL, R101 UPG CONN ACC "this line has no colon\r\n\r\n",
		 "header line without a colon"},
	};
	static struct stk_ws_hs tmpl;

	for (size_t i = 0; i < sizeof(v) / sizeof(v[0]); i++) {
		client_for(&tmpl, KEY, v[i].proto);
		feed_all_ways(&tmpl, v[i].resp, -1, v[i].why, stk_ws_client_response);
	}
}
END_TEST

/* a head of exactly `len` bytes: start, padding headers, end */
static size_t
padded(char *out, size_t len, const char *start, const char *end)
{
	size_t n = strlen(start), e = strlen(end);

	strcpy(out, start);
	while (n + e < len) {
		size_t room = len - n - e, k;

		/* "X-Pad: <v>\r\n" with at least one byte of value, at most 100 */
		ck_assert(room >= 10);
		k = room - 10 > 100 ? 100 : room - 10;
		if (room - 10 > 100 && room - 10 - 100 < 10)
			k = 50; /* leave enough for one more line */
		memcpy(out + n, "X-Pad: ", 7);
		memset(out + n + 7, 'p', k + 1);
		memcpy(out + n + 8 + k, "\r\n", 2);
		n += 10 + k;
	}
	strcpy(out + n, end);
	ck_assert_uint_eq(strlen(out), len);
	return len;
}

START_TEST(head_limit)
{
	static struct stk_ws_hs tmpl, h;
	static char buf[20001];
	const char *start = R101 UPG CONN, *end = ACC "\r\n";
	size_t used, fed;
	int rc;

	/* 8192 bytes accepted (also with frame bytes behind it), 8193 refused */
	client_for(&tmpl, KEY, NULL);
	padded(buf, STK_WS_HS_MAX, start, end);
	h = tmpl;
	ck_assert_int_eq(stk_ws_client_response(&h, (const uint8_t *)buf, STK_WS_HS_MAX, &used), 1);
	ck_assert_uint_eq(used, STK_WS_HS_MAX);
	memcpy(buf + STK_WS_HS_MAX, frame_bytes, sizeof(frame_bytes));
	h = tmpl;
	ck_assert_int_eq(stk_ws_client_response(&h, (const uint8_t *)buf,
						STK_WS_HS_MAX + sizeof(frame_bytes), &used),
			 1);
	ck_assert_uint_eq(used, STK_WS_HS_MAX);
	padded(buf, STK_WS_HS_MAX + 1, start, end);
	h = tmpl;
	ck_assert_int_eq(stk_ws_client_response(&h, (const uint8_t *)buf, STK_WS_HS_MAX + 1, &used),
			 -1);
	ck_assert(h.err != NULL);

	/* slowloris: headers that never end, 7 bytes at a time */
	h = tmpl;
	rc = stk_ws_client_response(&h, (const uint8_t *)start, strlen(start), &used);
	ck_assert_int_eq(rc, 0);
	fed = strlen(start);
	while (fed < 3 * STK_WS_HS_MAX) {
		rc = stk_ws_client_response(&h, (const uint8_t *)"X-A: b\n", 7, &used);
		fed += 7;
		if (rc != 0)
			break;
		ck_assert_uint_eq(used, 7);
	}
	ck_assert_int_eq(rc, -1);
	ck_assert(h.err != NULL);
	REQUIRE(fed <= STK_WS_HS_MAX + 7, "failed only after %zu bytes", fed);
	/* ... and with proper CRLF lines */
	h = tmpl;
	fed = 0;
	rc = 0;
	while (rc == 0 && fed < 3 * STK_WS_HS_MAX) {
		rc = stk_ws_client_response(&h, (const uint8_t *)(fed ? "X-B: c\r\n" : start),
					    fed ? 8 : strlen(start), &used);
		fed += fed ? 8 : strlen(start);
	}
	ck_assert_int_eq(rc, -1);
	REQUIRE(fed <= STK_WS_HS_MAX + 8, "failed only after %zu bytes", fed);

	/* one big chunk without an end */
	memset(buf, 'a', 20000);
	h = tmpl;
	ck_assert_int_eq(stk_ws_client_response(&h, (const uint8_t *)buf, 20000, &used), -1);
	ck_assert(h.err != NULL);

	/* the server's parser: the same bound */
	memset(&h, 0, sizeof(h));
	rc = stk_ws_server_request(&h, (const uint8_t *)"GET / HTTP/1.1\r\nHost: x\r\n", 25, &used);
	ck_assert_int_eq(rc, 0);
	fed = 25;
	while (rc == 0 && fed < 3 * STK_WS_HS_MAX) {
		rc = stk_ws_server_request(&h, (const uint8_t *)"X-B: c\r\n", 8, &used);
		fed += 8;
	}
	ck_assert_int_eq(rc, -1);
	ck_assert(h.err != NULL);
	REQUIRE(fed <= STK_WS_HS_MAX + 8, "server: failed only after %zu bytes", fed);
}
END_TEST

#define RQ(line, rest) line "\r\n" rest "\r\n"
#define HOST "Host: example.com\r\n"
#define RUPG "Upgrade: websocket\r\n"
#define RCONN "Connection: Upgrade\r\n"
#define RKEY "Sec-WebSocket-Key: " KEY "\r\n"
#define RVER "Sec-WebSocket-Version: 13\r\n"

START_TEST(request_good)
{
	static struct stk_ws_hs h, zero;
	char req[1024];
	size_t used;
	int n;

	/* the client's own request, with and without a subprotocol */
	for (int pr = 0; pr < 2; pr++) {
		n = stk_ws_client_request(&h, req, sizeof(req), "example.com", "/md/feed?sym=ABC",
					  KEY, pr ? "v2.feed" : NULL,
					  "Origin: http://example.com\r\n");
		ck_assert_int_gt(n, 0);
		memset(&h, 0, sizeof(h));
		ck_assert_int_eq(stk_ws_server_request(&h, (const uint8_t *)req, (size_t)n, &used),
				 1);
		ck_assert_uint_eq(used, (size_t)n);
		ck_assert_str_eq(h.path, "/md/feed?sym=ABC");
		ck_assert_str_eq(h.key, KEY);
		ck_assert_str_eq(h.protocol, pr ? "v2.feed" : "");
		feed_all_ways(&zero, req, 1, "client's own request", stk_ws_server_request);
	}
	/* hand-written variants */
	{
		static const char *v[] = {
			RQ("GET /chat HTTP/1.1", HOST RUPG RCONN RKEY RVER),
			RQ("GET / HTTP/1.1",
			   "host: a:1\r\nupgrade: WebSocket\r\nconnection: keep-alive, Upgrade\r\n"
			   "sec-websocket-key:   " KEY "  \r\nsec-websocket-version: 13\r\n"
			   "User-Agent: t\r\n"),
			RQ("GET /x HTTP/1.1",
			   RVER RKEY "Sec-WebSocket-Protocol: chat\r\n" RCONN RUPG HOST),
		};
		static const char *paths[] = {"/chat", "/", "/x"};

		for (size_t i = 0; i < 3; i++) {
			char what[32];

			memset(&h, 0, sizeof(h));
			ck_assert_int_eq(stk_ws_server_request(&h, (const uint8_t *)v[i],
							       strlen(v[i]), &used),
					 1);
			ck_assert_str_eq(h.path, paths[i]);
			ck_assert_str_eq(h.key, KEY);
			ck_assert_str_eq(h.protocol, i == 2 ? "chat" : "");
			snprintf(what, sizeof(what), "request %zu", i);
			feed_all_ways(&zero, v[i], 1, what, stk_ws_server_request);
		}
	}
}
END_TEST

START_TEST(request_bad)
{
	static const struct {
		const char *req, *why;
	} v[] = {
		{RQ("POST /chat HTTP/1.1", HOST RUPG RCONN RKEY RVER), "POST"},
		{RQ("GET /chat HTTP/1.0", HOST RUPG RCONN RKEY RVER), "HTTP/1.0"},
		{RQ("GET /chat", HOST RUPG RCONN RKEY RVER), "no version in the request line"},
		{RQ("GET /chat HTTP/1.1", RUPG RCONN RKEY RVER), "no Host"},
		{RQ("GET /chat HTTP/1.1", HOST RCONN RKEY RVER), "no Upgrade"},
		{RQ("GET /chat HTTP/1.1", HOST "Upgrade: h2c\r\n" RCONN RKEY RVER), "Upgrade: h2c"},
		{RQ("GET /chat HTTP/1.1", HOST RUPG RKEY RVER), "no Connection"},
		{RQ("GET /chat HTTP/1.1", HOST RUPG "Connection: keep-alive\r\n" RKEY RVER),
		 "Connection without upgrade"},
		{RQ("GET /chat HTTP/1.1", HOST RUPG RCONN RKEY "Sec-WebSocket-Version: 8\r\n"),
		 "version 8"},
		{RQ("GET /chat HTTP/1.1", HOST RUPG RCONN RKEY), "no version"},
		{RQ("GET /chat HTTP/1.1", HOST RUPG RCONN RVER), "no key"},
		{RQ("GET /chat HTTP/1.1",
		    HOST RUPG RCONN "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25j\r\n" RVER),
		 "key of 20 characters"},
		{RQ("GET /chat HTTP/1.1",
		    HOST RUPG RCONN "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZSEhIQ==\r\n" RVER),
		 "key of 28 characters (20 bytes)"},
		{RQ("GET /chat HTTP/1.1",
		    HOST RUPG RCONN "Sec-WebSocket-Key: !!!!!!!!!!!!!!!!!!!!!A==\r\n" RVER),
		 "key not base64"},
		{RQ("GET /chat HTTP/1.1",
		    HOST RUPG RCONN "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZSEh\r\n" RVER),
		 "key of 24 characters but 18 bytes"},
		{RQ("GET /chat HTTP/1.1",
		    HOST RUPG RCONN "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZSE=\r\n" RVER),
		 "key of 24 characters but 17 bytes"},
		{RQ("GET /chat HTTP/1.1", HOST RUPG RCONN "Sec-WebSocket-Key: \r\n" RVER),
		 "empty key"},
		{RQ("GET /chat HTTP/1.1", HOST RUPG RCONN RKEY RVER "no colon here\r\n"),
		 "header line without a colon"},
	};
	static struct stk_ws_hs zero;

	for (size_t i = 0; i < sizeof(v) / sizeof(v[0]); i++)
		feed_all_ways(&zero, v[i].req, -1, v[i].why, stk_ws_server_request);
}
END_TEST

START_TEST(server_response)
{
	static struct stk_ws_hs h;
	char req[1024], out[1024], val[128], acc[29];
	size_t used;
	int n, full;

	n = stk_ws_client_request(&h, req, sizeof(req), "example.com", "/",
				  "x3JJHMbDL1EzLkh9GBhXDw==", NULL, NULL);
	memset(&h, 0, sizeof(h));
	ck_assert_int_eq(stk_ws_server_request(&h, (const uint8_t *)req, (size_t)n, &used), 1);
	for (int pr = 0; pr < 3; pr++) {
		const char *proto = pr == 0 ? NULL : pr == 1 ? "" : "chat";

		n = stk_ws_server_response(&h, out, sizeof(out), proto);
		ck_assert_int_gt(n, 0);
		ck_assert_uint_eq((size_t)n, strlen(out));
		ck_assert(strncmp(out, "HTTP/1.1 101 ", 13) == 0);
		ck_assert(strcmp(out + n - 4, "\r\n\r\n") == 0 &&
			  strstr(out, "\r\n\r\n") == out + n - 4);
		ck_assert_int_eq(hdr_count(out, "Sec-WebSocket-Accept", val, sizeof(val)), 1);
		ck_assert_str_eq(val, "HSmrc0sMlYUkAGmm5OPpG2HaGWk=");
		stk_ws_accept_for(h.key, acc);
		ck_assert_str_eq(val, acc);
		ck_assert_int_eq(hdr_count(out, "Upgrade", val, sizeof(val)), 1);
		ck_assert(strcasecmp(val, "websocket") == 0);
		ck_assert_int_eq(hdr_count(out, "Connection", val, sizeof(val)), 1);
		ck_assert(strcasecmp(val, "upgrade") == 0);
		ck_assert_int_eq(hdr_count(out, "Sec-WebSocket-Protocol", val, sizeof(val)),
				 pr == 2 ? 1 : 0);
		if (pr == 2)
			ck_assert_str_eq(val, "chat");
	}
	full = stk_ws_server_response(&h, out, sizeof(out), "chat");
	ck_assert_int_eq(stk_ws_server_response(&h, out, (size_t)full + 1, "chat"), full);
	ck_assert_int_eq(stk_ws_server_response(&h, out, (size_t)full, "chat"), -1);
	ck_assert_int_eq(stk_ws_server_response(&h, out, 16, "chat"), -1);

	/* 400 */
	n = stk_ws_server_reject(out, sizeof(out), "Sec-WebSocket-Version is not 13");
	ck_assert_int_gt(n, 0);
	ck_assert(strncmp(out, "HTTP/1.1 400 ", 13) == 0);
	ck_assert_int_eq(hdr_count(out, "Content-Length", val, sizeof(val)), 1);
	{
		const char *body = strstr(out, "\r\n\r\n");

		ck_assert(body != NULL);
		body += 4;
		ck_assert_uint_eq(strtoul(val, NULL, 10), strlen(body));
		ck_assert(strstr(body, "Sec-WebSocket-Version is not 13") != NULL);
	}
	ck_assert_int_eq(stk_ws_server_reject(out, 20, "why"), -1);
}
END_TEST

START_TEST(round_trip)
{
	static struct stk_ws_hs cl, sv;
	static const char *protos[] = {NULL, "chat"};
	char req[1024], resp[1024];
	uint8_t raw[16];
	char key[25];
	size_t used;
	int n;

	for (int i = 0; i < 16; i++)
		raw[i] = (uint8_t)(i * 37 + 5);
	stk_ws_key(raw, key);
	for (int pr = 0; pr < 2; pr++) {
		n = stk_ws_client_request(&cl, req, sizeof(req), "10.0.0.1:9000", "/ws", key,
					  protos[pr], NULL);
		ck_assert_int_gt(n, 0);
		memset(&sv, 0, sizeof(sv));
		ck_assert_int_eq(stk_ws_server_request(&sv, (const uint8_t *)req, (size_t)n, &used),
				 1);
		ck_assert_str_eq(sv.key, key);
		ck_assert_str_eq(sv.protocol, protos[pr] ? protos[pr] : "");
		n = stk_ws_server_response(&sv, resp, sizeof(resp), sv.protocol);
		ck_assert_int_gt(n, 0);
		ck_assert_int_eq(
			stk_ws_client_response(&cl, (const uint8_t *)resp, (size_t)n, &used), 1);
		ck_assert_uint_eq(used, (size_t)n);
	}
	/* the server picks another subprotocol: refused */
	n = stk_ws_client_request(&cl, req, sizeof(req), "h", "/ws", key, "chat", NULL);
	memset(&sv, 0, sizeof(sv));
	ck_assert_int_eq(stk_ws_server_request(&sv, (const uint8_t *)req, (size_t)n, &used), 1);
	n = stk_ws_server_response(&sv, resp, sizeof(resp), "superchat");
	ck_assert_int_eq(stk_ws_client_response(&cl, (const uint8_t *)resp, (size_t)n, &used), -1);
	ck_assert(cl.err != NULL);
	/* the server rejects: refused */
	n = stk_ws_client_request(&cl, req, sizeof(req), "h", "/ws", key, NULL, NULL);
	n = stk_ws_server_reject(resp, sizeof(resp), "no");
	ck_assert_int_eq(stk_ws_client_response(&cl, (const uint8_t *)resp, (size_t)n, &used), -1);
	ck_assert(cl.err != NULL);
}
END_TEST

/* ================= header tokens (RFC 9110 5.6.2) ================= */
static bool
ref_tchar(int c)
{
	return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
	       (c != 0 && strchr("!#$%&'*+-.^_`|~", c) != NULL);
}

START_TEST(tokens)
{
	static struct stk_ws_hs h, zero, tmpl;
	char req[1024], resp[1024];
	size_t used;

	/* every byte against the tchar list */
	for (int c = 0; c < 256; c++) {
		char t[3] = {'a', (char)c, 'b'};

		REQUIRE(stk_ws_is_token(t, 3) == ref_tchar(c), "byte 0x%02x", c);
		REQUIRE(stk_ws_is_token(t + 1, 1) == ref_tchar(c), "byte 0x%02x alone", c);
	}
	ck_assert(!stk_ws_is_token("", 0));

	/* server: Sec-WebSocket-Protocol must be a token list */
	{
		static const char *good[] = {"chat", "chat, superchat", "a,b",
					     "v2.feed\t,\tx-y_z~1", "!#$%&'*+-.^_`|~"};
		static const char *want[] = {"chat", "chat, superchat", "a,b",
					     "v2.feed\t,\tx-y_z~1", "!#$%&'*+-.^_`|~"};
		static const char *bad[] = {
			"\xff",	 "a\xff", "a b", "a,,b", ", a", "a,",	"a;b",
			"\"a\"", "a\x7f", "(a)", "a/b",	 "a=b", "\x01", "\xc3\xa9t\xc3\xa9"};

		for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
			snprintf(req, sizeof(req),
				 RQ("GET / HTTP/1.1",
				    HOST RUPG RCONN RKEY RVER "Sec-WebSocket-Protocol: %s\r\n"),
				 good[i]);
			memset(&h, 0, sizeof(h));
			REQUIRE(stk_ws_server_request(&h, (const uint8_t *)req, strlen(req),
						      &used) == 1,
				"protocol \"%s\": %s", good[i], h.err ? h.err : "");
			ck_assert_str_eq(h.protocol, want[i]);
		}
		for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
			snprintf(req, sizeof(req),
				 RQ("GET / HTTP/1.1",
				    HOST RUPG RCONN RKEY RVER "Sec-WebSocket-Protocol: %s\r\n"),
				 bad[i]);
			feed_all_ways(&zero, req, -1, bad[i], stk_ws_server_request);
			memset(&h, 0, sizeof(h));
			ck_assert_int_eq(
				stk_ws_server_request(&h, (const uint8_t *)req, strlen(req), &used),
				-1);
			ck_assert_str_eq(h.err, "Sec-WebSocket-Protocol is not a list of tokens");
		}
		/* longer than h->protocol keeps: refused, not cut */
		snprintf(req, sizeof(req),
			 RQ("GET / HTTP/1.1",
			    HOST RUPG RCONN RKEY RVER "Sec-WebSocket-Protocol: %s,b\r\n"),
			 "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa");
		memset(&h, 0, sizeof(h));
		ck_assert_int_eq(
			stk_ws_server_request(&h, (const uint8_t *)req, strlen(req), &used), -1);
		ck_assert_str_eq(h.err, "Sec-WebSocket-Protocol longer than 63 bytes");
	}
	/* header names: tokens, the colon right after */
	{
		static const char *bad[] = {"Bad Name: x\r\n", "Upgrade : websocket\r\n",
					    "\xffX: y\r\n", ": empty\r\n", " Folded: x\r\n"};

		for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
			snprintf(req, sizeof(req),
				 RQ("GET / HTTP/1.1", HOST RUPG RCONN RKEY RVER "%s"), bad[i]);
			memset(&h, 0, sizeof(h));
			ck_assert_int_eq(
				stk_ws_server_request(&h, (const uint8_t *)req, strlen(req), &used),
				-1);
			ck_assert_str_eq(h.err, "malformed header line");
			snprintf(resp, sizeof(resp), R101 UPG CONN ACC "%s\r\n", bad[i]);
			client_for(&tmpl, KEY, NULL);
			feed_all_ways(&tmpl, resp, -1, bad[i], stk_ws_client_response);
		}
	}
	/* client: what we ask for must be a token list; the answer one of them */
	ck_assert_int_eq(stk_ws_client_request(&h, req, sizeof(req), "h", "/", KEY, "a b", NULL),
			 -1);
	ck_assert_int_eq(stk_ws_client_request(&h, req, sizeof(req), "h", "/", KEY, "\xff", NULL),
			 -1);
	ck_assert_int_eq(stk_ws_client_request(&h, req, sizeof(req), "h", "/", KEY, "a,", NULL),
			 -1);
	{
		static const struct {
			const char *answer;
			int want;
		} v[] = {
			{"superchat", 1}, {"chat", 1},	 {"chat, superchat", -1},
			{"\xff", -1},	  {"other", -1}, {"sup", -1},
		};

		for (size_t i = 0; i < sizeof(v) / sizeof(v[0]); i++) {
			client_for(&tmpl, KEY, "chat, superchat");
			snprintf(resp, sizeof(resp),
				 R101 UPG CONN ACC "Sec-WebSocket-Protocol: %s\r\n\r\n",
				 v[i].answer);
			feed_all_ways(&tmpl, resp, v[i].want, v[i].answer, stk_ws_client_response);
		}
	}
	/* server: the chosen protocol must be a token */
	memset(&h, 0, sizeof(h));
	ck_assert_int_eq(stk_ws_server_request(
				 &h,
				 (const uint8_t *)RQ("GET / HTTP/1.1", HOST RUPG RCONN RKEY RVER),
				 strlen(RQ("GET / HTTP/1.1", HOST RUPG RCONN RKEY RVER)), &used),
			 1);
	ck_assert_int_eq(stk_ws_server_response(&h, resp, sizeof(resp), "a b"), -1);
	ck_assert_int_eq(stk_ws_server_response(&h, resp, sizeof(resp), "\xff"), -1);
	ck_assert_int_gt(stk_ws_server_response(&h, resp, sizeof(resp), "chat"), 0);
}
END_TEST

static void
ws_handshake_tcases(Suite *s)
{
	T_TESTS(t_tcase(s, "client", NULL, NULL, 30), accept_vectors, client_request, response_good,
		response_bad, head_limit);

	T_TESTS(t_tcase(s, "server", NULL, NULL, 30), request_good, request_bad, server_response,
		round_trip, tokens);
}

T_MAIN("ws_handshake", ws_handshake_tcases)
