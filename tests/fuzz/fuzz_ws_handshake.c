/* SPDX-License-Identifier: BSD-3-Clause
 * fuzz_ws_handshake.c — libFuzzer target: the WebSocket opening handshake parsers
 * in stack/ws_handshake.c: stk_ws_client_response (the client reading the
 * server's HTTP 101) and stk_ws_server_request (the server reading the GET).
 *
 * Input:  byte 0      bit 0: server side (parse a request), else client side
 *                     bit 1: client side: we asked for subprotocol "chat"
 *                     bit 2: permessage-deflate: client side offered,
 *                            server side enabled
 *                     bits 3-7: its parameters (pmd_from, below)
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
 *     total), same error, same path / key / protocol, same negotiated
 *     permessage-deflate parameters
 *   - the head is within STK_WS_HS_MAX bytes
 *   - client side, accepted: the negotiated parameters are within 8..15 and
 *     consistent with the offer (window bits at most what was offered,
 *     server_no_context_takeover when offered); nothing negotiated without
 *     an offer
 *   - server side, accepted: the protocol is a list of tokens;
 *     stk_ws_server_response() for that request (with its first protocol and
 *     the extension accepted) is accepted by stk_ws_client_response() of a
 *     client that sent that key, asked for that protocol and made the offer
 *     the server accepted, and both sides agree on the parameters; a GET
 *     built by stk_ws_client_request_pmd() with the same path, key, protocol
 *     and offer is accepted by stk_ws_server_request() with the same settings
 *     and parses back to them
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
	struct stk_ws_pmd pmd;
};

/* bits 3-7 of byte 0: the client's offer or the server's settings */
static struct stk_ws_pmd
pmd_from(uint8_t b)
{
	static const uint8_t cm[4] = {0, 8, 12, 15};
	struct stk_ws_pmd p = {0};

	p.on = (b >> 2) & 1;
	p.client_no_context_takeover = (b >> 3) & 1;
	p.server_no_context_takeover = (b >> 4) & 1;
	p.server_max_window_bits = (b >> 5) & 1 ? 10 : 0;
	p.client_max_window_bits = cm[(b >> 6) & 3];
	return p;
}

static bool
pmd_eq(const struct stk_ws_pmd *a, const struct stk_ws_pmd *b)
{
	return a->on == b->on && a->client_max_window_bits == b->client_max_window_bits &&
	       a->server_max_window_bits == b->server_max_window_bits &&
	       a->client_no_context_takeover == b->client_no_context_takeover &&
	       a->server_no_context_takeover == b->server_no_context_takeover;
}

static void
setup(struct stk_ws_hs *h, bool server, bool proto, const struct stk_ws_pmd *pmd)
{
	char req[512];

	if (server) {
		stk_ws_server_init(h, pmd);
		return;
	}
	FUZZ_CHECK(stk_ws_client_request_pmd(h, req, sizeof(req), "example.com", "/chat", rfc_key,
					     proto ? "chat" : NULL, NULL, pmd) > 0);
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
		r->pmd = h->pmd;
	}
}

static bool
bits_ok(unsigned b)
{
	return b >= 8 && b <= 15;
}

/* a client's negotiated parameters against its offer */
static void
client_accepted(const struct stk_ws_hs *h)
{
	const struct stk_ws_pmd *w = &h->pmd_want, *p = &h->pmd;

	if (!w->on) {
		FUZZ_CHECK(!p->on);
		return;
	}
	if (!p->on)
		return; /* declined */
	FUZZ_CHECK(bits_ok(p->client_max_window_bits) && bits_ok(p->server_max_window_bits));
	if (w->client_max_window_bits)
		FUZZ_CHECK(p->client_max_window_bits <= w->client_max_window_bits);
	if (w->server_max_window_bits)
		FUZZ_CHECK(p->server_max_window_bits <= w->server_max_window_bits);
	if (w->server_no_context_takeover)
		FUZZ_CHECK(p->server_no_context_takeover);
	if (w->client_no_context_takeover)
		FUZZ_CHECK(p->client_no_context_takeover);
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

	char first[64] = "";
	const struct stk_ws_pmd *cfg = &h->pmd_want;
	struct stk_ws_pmd offer = h->pmd_offer;

	FUZZ_CHECK(strlen(h->key) == 24);
	FUZZ_CHECK(strlen(h->protocol) < sizeof(h->protocol));
	if (h->protocol[0] != '\0') {
		/* the first of the asked subprotocols */
		const char *p = h->protocol + strspn(h->protocol, " \t");
		size_t k = strcspn(p, " \t,");

		FUZZ_CHECK(stk_ws_is_token(p, k));
		memcpy(first, p, k);
	}
	if (h->pmd.on) {
		FUZZ_CHECK(cfg->on && offer.on);
		FUZZ_CHECK(bits_ok(h->pmd.client_max_window_bits) &&
			   bits_ok(h->pmd.server_max_window_bits));
	}
	n = stk_ws_server_response(h, out, sizeof(out), first[0] ? first : NULL);
	FUZZ_CHECK(n > 0);
	/* a client that sent h->key, asked for h->protocol, offered what was accepted */
	n = stk_ws_client_request_pmd(&c, req, sizeof(req), "example.com", h->path, h->key,
				      h->protocol, NULL, h->pmd.on ? &offer : NULL);
	FUZZ_CHECK(n > 0);
	FUZZ_CHECK(stk_ws_client_response(&c, (const uint8_t *)out, strlen(out), &used) == 1);
	FUZZ_CHECK(used == strlen(out));
	FUZZ_CHECK(pmd_eq(&c.pmd, &h->pmd));
	client_accepted(&c);
	/* that client's request, parsed by a second server with the same settings */
	stk_ws_server_init(&s2, cfg);
	if (h->path[0] == '\0')
		return; /* stk_ws_client_request sends "/" for "" */
	FUZZ_CHECK(stk_ws_server_request(&s2, (const uint8_t *)req, (size_t)n, &used) == 1);
	FUZZ_CHECK(used == (size_t)n);
	FUZZ_CHECK(strcmp(s2.path, h->path) == 0);
	FUZZ_CHECK(strcmp(s2.key, h->key) == 0);
	FUZZ_CHECK(strcmp(s2.protocol, h->protocol) == 0);
	/* the rebuilt offer always states client_max_window_bits, which a server
	 * with a client window wish answers */
	if (!h->pmd.on || cfg->client_max_window_bits == 0 || cfg->client_max_window_bits == 15)
		FUZZ_CHECK(pmd_eq(&s2.pmd, &h->pmd));
	else
		FUZZ_CHECK(s2.pmd.on);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	/* static: struct stk_ws_hs holds an 8 KiB buffer */
	static struct stk_ws_hs h;
	struct fuzz_chunks plan = { { 0 }, 0 };
	struct hres whole = { 0 }, cut = { 0 };
	bool server, proto;
	struct stk_ws_pmd pmd;
	const uint8_t *s;
	size_t n, off, used, total;
	uint8_t *buf;
	int rc;

	if (size < 1 + FUZZ_NCHUNK)
		return 0;
	server = data[0] & 1;
	proto = (data[0] >> 1) & 1;
	pmd = pmd_from(data[0]);
	memcpy(plan.sel, data + 1, FUZZ_NCHUNK);
	s = data + 1 + FUZZ_NCHUNK;
	n = size - 1 - FUZZ_NCHUNK;

	/* one chunk */
	setup(&h, server, proto, &pmd);
	buf = fuzz_dup(s, n);
	rc = n ? step(&h, server, buf, n, &used) : 0;
	free(buf);
	finish(&h, &whole, rc, rc == 1 ? used : 0);
	if (rc == 1 && server)
		server_roundtrip(&h);
	if (rc == 1 && !server)
		client_accepted(&h);

	/* the chunk plan */
	setup(&h, server, proto, &pmd);
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
		FUZZ_CHECK(pmd_eq(&whole.pmd, &cut.pmd));
	}
	return 0;
}
