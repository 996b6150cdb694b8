/* SPDX-License-Identifier: BSD-3-Clause
 * fuzz_ws_handshake.c — libFuzzer target: the WebSocket opening handshake parsers
 * in stack/ws_handshake.c: stk_ws_client_response (the client reading the
 * server's HTTP 101) and stk_ws_server_request (the server reading the GET).
 *
 * Input:  byte 0      bit 0: server side (parse a request), else client side
 *                     bit 1: client side: we asked for subprotocol "chat"
 *         bytes 1..4  chunk plan (fuzz_common.h)
 *         the rest    the bytes from the peer
 * The client side's request used the RFC 6455 1.3 key, so the accept value the
 * parser wants is "s3pPLMBiTxaQ9kYGzzhZRbK+xOo=" (in the seed corpus).
 *
 * The bytes are parsed twice, as one chunk and cut by the chunk plan (each
 * chunk in its own exactly sized buffer). Invariants (trap on failure):
 *   - results are 0 (need more), 1 or -1 and nothing is fed after 1 / -1;
 *     on 0 all of the chunk was used, on 1 at most the chunk; on -1 h->err
 *   - both feeds end alike: same result, same head length (the bytes used in
 *     total), same error, same path / key / protocol (server side)
 *   - the head is within STK_WS_HS_MAX bytes
 *   - server side, accepted: stk_ws_server_response() for that request is
 *     accepted by stk_ws_client_response() of a client that sent that key and
 *     asked for that protocol; a GET built by stk_ws_client_request() with the
 *     same path, key and protocol is accepted by stk_ws_server_request() and
 *     parses back to them
 */
#include <stdbool.h>

#include <stk/ws.h>

#include "fuzz_common.h"

static const char rfc_key[] = "dGhlIHNhbXBsZSBub25jZQ==";

struct hres {
	int rc;
	size_t used;
	const char *err;
	char path[256], key[32], protocol[64];
};

static void
setup(struct stk_ws_hs *h, bool server, bool proto)
{
	char req[512];

	if (server) {
		memset(h, 0, sizeof(*h));
		return;
	}
	FUZZ_CHECK(stk_ws_client_request(h, req, sizeof(req), "example.com", "/chat", rfc_key,
					 proto ? "chat" : NULL, NULL) > 0);
}

static int
step(struct stk_ws_hs *h, bool server, const uint8_t *p, size_t n, size_t *used)
{
	int rc;

	*used = (size_t)-1;
	rc = server ? stk_ws_server_request(h, p, n, used) : stk_ws_client_response(h, p, n, used);
	FUZZ_CHECK(rc == 0 || rc == 1 || rc == -1);
	if (rc == 0)
		FUZZ_CHECK(*used == n);
	else if (rc == 1)
		FUZZ_CHECK(*used <= n);
	else
		FUZZ_CHECK(h->err != NULL);
	FUZZ_CHECK(h->have <= STK_WS_HS_MAX);
	return rc;
}

static void
finish(const struct stk_ws_hs *h, struct hres *r, int rc, size_t used)
{
	r->rc = rc;
	r->used = used;
	r->err = rc < 0 ? h->err : NULL;
	if (rc == 1) {
		memcpy(r->path, h->path, sizeof(r->path));
		memcpy(r->key, h->key, sizeof(r->key));
		memcpy(r->protocol, h->protocol, sizeof(r->protocol));
	}
}

/* what an accepted request leads to, with our own encoders on the other side */
static void
server_roundtrip(const struct stk_ws_hs *h)
{
	static struct stk_ws_hs c, s2;
	char out[STK_WS_HS_MAX + 1];
	char req[STK_WS_HS_MAX + 1];
	size_t used;
	int n;

	FUZZ_CHECK(strlen(h->key) == 24);
	n = stk_ws_server_response(h, out, sizeof(out), h->protocol);
	FUZZ_CHECK(n > 0);
	/* a client that sent h->key and asked for h->protocol */
	n = stk_ws_client_request(&c, req, sizeof(req), "example.com", h->path, h->key, h->protocol, NULL);
	FUZZ_CHECK(n > 0);
	FUZZ_CHECK(stk_ws_client_response(&c, (const uint8_t *)out, strlen(out), &used) == 1);
	FUZZ_CHECK(used == strlen(out));
	/* that client's request, parsed by a second server */
	memset(&s2, 0, sizeof(s2));
	if (h->path[0] == '\0')
		return; /* stk_ws_client_request sends "/" for "" */
	FUZZ_CHECK(stk_ws_server_request(&s2, (const uint8_t *)req, (size_t)n, &used) == 1);
	FUZZ_CHECK(used == (size_t)n);
	FUZZ_CHECK(strcmp(s2.path, h->path) == 0);
	FUZZ_CHECK(strcmp(s2.key, h->key) == 0);
	FUZZ_CHECK(strcmp(s2.protocol, h->protocol) == 0);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	/* static: struct stk_ws_hs holds an 8 KiB buffer */
	static struct stk_ws_hs h;
	struct fuzz_chunks plan = { { 0 }, 0 };
	struct hres whole = { 0 }, cut = { 0 };
	bool server, proto;
	const uint8_t *s;
	size_t n, off, used, total;
	uint8_t *buf;
	int rc;

	if (size < 1 + FUZZ_NCHUNK)
		return 0;
	server = data[0] & 1;
	proto = (data[0] >> 1) & 1;
	memcpy(plan.sel, data + 1, FUZZ_NCHUNK);
	s = data + 1 + FUZZ_NCHUNK;
	n = size - 1 - FUZZ_NCHUNK;

	/* one chunk */
	setup(&h, server, proto);
	buf = fuzz_dup(s, n);
	rc = n ? step(&h, server, buf, n, &used) : 0;
	free(buf);
	finish(&h, &whole, rc, rc == 1 ? used : 0);
	if (rc == 1 && server)
		server_roundtrip(&h);

	/* the chunk plan */
	setup(&h, server, proto);
	rc = 0;
	total = 0;
	for (off = 0; off < n && rc == 0;) {
		size_t k = fuzz_chunk_next(&plan, n - off);

		buf = fuzz_dup(s + off, k);
		rc = step(&h, server, buf, k, &used);
		free(buf);
		if (rc >= 0)
			total += used;
		off += k;
	}
	finish(&h, &cut, rc, rc == 1 ? total : 0);

	FUZZ_CHECK(whole.rc == cut.rc);
	FUZZ_CHECK(whole.used == cut.used);
	FUZZ_CHECK(whole.err == cut.err);
	if (whole.rc == 1) {
		FUZZ_CHECK(whole.used <= n);
		FUZZ_CHECK(strcmp(whole.path, cut.path) == 0);
		FUZZ_CHECK(strcmp(whole.key, cut.key) == 0);
		FUZZ_CHECK(strcmp(whole.protocol, cut.protocol) == 0);
	}
	return 0;
}
