/* SPDX-License-Identifier: BSD-3-Clause
 * ws_handshake.c — the WebSocket opening handshake (RFC 6455 4), both sides.
 *
 *   stk_ws_key / stk_ws_accept_for   Sec-WebSocket-Key and -Accept (SHA-1 and
 *                                    base64 from libcrypto)
 *   stk_ws_client_request            the GET
 *   stk_ws_client_request[_pmd]      the GET (with our permessage-deflate offer)
 *   stk_ws_client_response           resumable: gather the head (bounded by
 *                                    STK_WS_HS_MAX), then require 101, Upgrade,
 *                                    Connection, the right Accept, one of the
 *                                    asked subprotocols (or none) and no
 *                                    extension but an acceptable answer to our
 *                                    offer (ws_pmd.c)
 *   stk_ws_server_init               our permessage-deflate settings
 *   stk_ws_server_request            resumable: GET, HTTP/1.1, Host, Upgrade,
 *                                    Connection, Version 13, a 16-byte key, a
 *                                    token list as subprotocols, well-formed
 *                                    extensions (the first acceptable offer)
 *   stk_ws_server_response / reject  101 or 400
 * Header names must be tokens with the colon right after them (RFC 9112 5.1).
 */
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include <openssl/evp.h>

#include "ws_priv.h"

static const char ws_guid[] = "258EAFA5-E914-47DA-95CA-C5AB0DC85B11";

void
stk_ws_key(const uint8_t raw[16], char out[25])
{
	EVP_EncodeBlock((unsigned char *)out, raw, 16);
}

void
stk_ws_accept_for(const char *key, char out[29])
{
	unsigned char md[EVP_MAX_MD_SIZE];
	unsigned mdlen = 0;
	char buf[128];
	int n = snprintf(buf, sizeof(buf), "%s%s", key, ws_guid);

	if (n < 0 || (size_t)n >= sizeof(buf))
		n = (int)sizeof(buf) - 1;
	EVP_Digest(buf, (size_t)n, md, &mdlen, EVP_sha1(), NULL);
	EVP_EncodeBlock((unsigned char *)out, md, (int)mdlen);
}

int
stk_ws_client_request(struct stk_ws_hs *h, char *out, size_t cap, const char *host, const char *path,
		      const char *key, const char *protocol, const char *extra)
{
	return stk_ws_client_request_pmd(h, out, cap, host, path, key, protocol, extra, NULL);
}

int
stk_ws_client_request_pmd(struct stk_ws_hs *h, char *out, size_t cap, const char *host,
			  const char *path, const char *key, const char *protocol,
			  const char *extra, const struct stk_ws_pmd *offer)
{
	char ext[192] = "";
	int n;

	memset(h, 0, sizeof(*h));
	stk_ws_accept_for(key, h->accept);
	if (protocol != NULL && protocol[0] != '\0' &&
	    (strlen(protocol) >= sizeof(h->protocol) || !ws_token_list_valid(protocol)))
		return -1;
	snprintf(h->protocol, sizeof(h->protocol), "%s", protocol != NULL ? protocol : "");
	if (offer != NULL && offer->on) {
		if (ws_pmd_offer_line(offer, ext, sizeof(ext)) < 0)
			return -1;
		h->pmd_want = *offer;
	}
	n = snprintf(out, cap,
		     "GET %s HTTP/1.1\r\n"
		     "Host: %s\r\n"
		     "Upgrade: websocket\r\n"
		     "Connection: Upgrade\r\n"
		     "Sec-WebSocket-Key: %s\r\n"
		     "Sec-WebSocket-Version: 13\r\n"
		     "%s%s%s"
		     "%s%s"
		     "\r\n",
		     path[0] ? path : "/", host, key,
		     h->protocol[0] ? "Sec-WebSocket-Protocol: " : "", h->protocol,
		     h->protocol[0] ? "\r\n" : "", ext, extra != NULL ? extra : "");
	return n < 0 || (size_t)n >= cap ? -1 : n;
}

/* gather up to the blank line; 0 need more, 1 complete (*used), -1 too long */
static int
gather(struct stk_ws_hs *h, const uint8_t *p, size_t n, size_t *used)
{
	size_t before = h->have, k = n;
	char *e;

	if (k > STK_WS_HS_MAX - h->have)
		k = STK_WS_HS_MAX - h->have;
	memcpy(h->buf + h->have, p, k);
	h->have += k;
	h->buf[h->have] = '\0';
	/* Found by fuzz_ws_handshake: the head was searched and parsed as a C
	 * string, so a NUL byte in it hid the rest. Where the blank line was
	 * found then depended on how the bytes were chunked, and the server
	 * dereferenced NULL when its request line ended before a "\r\n" (a
	 * NUL, then "\r\n\r\n" in a later chunk). HTTP has no NUL in a
	 * head: refuse it, and search bytes, not strings. */
	e = memmem(h->buf + (before > 3 ? before - 3 : 0), h->have - (before > 3 ? before - 3 : 0), "\r\n\r\n", 4);
	{
		size_t head_end = e != NULL ? (size_t)(e + 4 - h->buf) : h->have;

		if (head_end > before && memchr(h->buf + before, '\0', head_end - before) != NULL) {
			h->err = "NUL byte in the handshake head";
			return -1;
		}
	}
	if (e == NULL) {
		if (h->have >= STK_WS_HS_MAX) {
			h->err = "handshake head longer than 8 KiB";
			return -1;
		}
		*used = n;
		return 0;
	}
	e[2] = '\0'; /* keep the last line's CRLF, drop the blank line */
	*used = (size_t)(e + 4 - h->buf) - before;
	return 1;
}

static void
trim(char **s, char **e)
{
	while (*s < *e && (**s == ' ' || **s == '\t'))
		(*s)++;
	while (*e > *s && ((*e)[-1] == ' ' || (*e)[-1] == '\t'))
		(*e)--;
}

/* does a comma-separated header value contain token (case-insensitive)? */
static bool
has_token(const char *v, const char *tok)
{
	size_t tl = strlen(tok);

	while (*v) {
		const char *c = strchr(v, ',');
		char *s = (char *)v, *e = (char *)(c ? c : v + strlen(v));

		trim(&s, &e);
		if ((size_t)(e - s) == tl && strncasecmp(s, tok, tl) == 0)
			return true;
		if (c == NULL)
			break;
		v = c + 1;
	}
	return false;
}

struct hdrs {
	const char *upgrade, *connection, *accept, *protocol, *key, *version, *host;
	const char *ext[WS_EXT_LINES]; /* every Sec-WebSocket-Extensions line */
	unsigned next;
};

/* split "Name: value\r\n" lines after the first; values NUL-terminated in
 * place; -1 a malformed line, -2 too many extension lines */
static int
parse_headers(char *s, struct hdrs *hd)
{
	memset(hd, 0, sizeof(*hd));
	while (*s) {
		char *eol = strstr(s, "\r\n"), *colon, *ns, *ne, *vs, *ve;

		if (eol == NULL)
			return -1;
		*eol = '\0';
		colon = strchr(s, ':');
		if (colon == NULL || !stk_ws_is_token(s, (size_t)(colon - s)))
			return -1;
		ns = s;
		ne = colon;
		vs = colon + 1;
		ve = eol;
		trim(&vs, &ve);
		*ve = '\0';
		*ne = '\0';
#define H(name, field) else if (strcasecmp(ns, name) == 0) hd->field = vs
		if (0) {
		}
		H("Upgrade", upgrade);
		H("Connection", connection);
		H("Sec-WebSocket-Accept", accept);
		H("Sec-WebSocket-Protocol", protocol);
		else if (strcasecmp(ns, "Sec-WebSocket-Extensions") == 0) {
			if (hd->next == WS_EXT_LINES)
				return -2;
			hd->ext[hd->next++] = vs;
		}
		H("Sec-WebSocket-Key", key);
		H("Sec-WebSocket-Version", version);
		H("Host", host);
#undef H
		s = eol + 2;
	}
	return 0;
}

int
stk_ws_client_response(struct stk_ws_hs *h, const uint8_t *p, size_t n, size_t *used)
{
	struct hdrs hd;
	char *line_end;
	int rc = gather(h, p, n, used);

	if (rc <= 0)
		return rc;
	line_end = strstr(h->buf, "\r\n");
	if (line_end == NULL || strncmp(h->buf, "HTTP/1.1 ", 9) != 0) {
		h->err = "response is not HTTP/1.1";
		return -1;
	}
	if (strncmp(h->buf + 9, "101", 3) != 0 || (h->buf[12] != ' ' && h->buf[12] != '\r')) {
		h->err = "status is not 101 Switching Protocols";
		return -1;
	}
	if ((rc = parse_headers(line_end + 2, &hd)) < 0) {
		h->err = rc == -2 ? "too many Sec-WebSocket-Extensions lines"
				  : "malformed header line";
		return -1;
	}
	if (hd.upgrade == NULL || strcasecmp(hd.upgrade, "websocket") != 0) {
		h->err = "Upgrade is not websocket";
		return -1;
	}
	if (hd.connection == NULL || !has_token(hd.connection, "upgrade")) {
		h->err = "Connection does not contain upgrade";
		return -1;
	}
	if (hd.accept == NULL || strcmp(hd.accept, h->accept) != 0) {
		h->err = "Sec-WebSocket-Accept is missing or wrong";
		return -1;
	}
	if (ws_pmd_client_check(h, hd.ext, hd.next) < 0)
		return -1;
	/* one token, one of those we asked for */
	if (h->protocol[0] == '\0'
		    ? hd.protocol != NULL
		    : (hd.protocol == NULL || !stk_ws_is_token(hd.protocol, strlen(hd.protocol)) ||
		       !ws_token_list_has(h->protocol, hd.protocol, strlen(hd.protocol)))) {
		memset(&h->pmd, 0, sizeof(h->pmd));
		h->err = "Sec-WebSocket-Protocol does not match what we asked for";
		return -1;
	}
	return 1;
}

int
stk_ws_server_request(struct stk_ws_hs *h, const uint8_t *p, size_t n, size_t *used)
{
	struct hdrs hd;
	char *line_end, *sp1, *sp2;
	unsigned char raw[64];
	int rc = gather(h, p, n, used), k;

	if (rc <= 0)
		return rc;
	line_end = strstr(h->buf, "\r\n");
	*line_end = '\0';
	sp1 = strchr(h->buf, ' ');
	sp2 = sp1 ? strchr(sp1 + 1, ' ') : NULL;
	if (strncmp(h->buf, "GET ", 4) != 0 || sp2 == NULL || strcmp(sp2 + 1, "HTTP/1.1") != 0) {
		h->err = "request line is not \"GET <path> HTTP/1.1\"";
		return -1;
	}
	snprintf(h->path, sizeof(h->path), "%.*s", (int)(sp2 - sp1 - 1), sp1 + 1);
	if ((rc = parse_headers(line_end + 2, &hd)) < 0) {
		h->err = rc == -2 ? "too many Sec-WebSocket-Extensions lines"
				  : "malformed header line";
		return -1;
	}
	if (hd.host == NULL) {
		h->err = "no Host header";
		return -1;
	}
	if (hd.upgrade == NULL || !has_token(hd.upgrade, "websocket")) {
		h->err = "Upgrade is not websocket";
		return -1;
	}
	if (hd.connection == NULL || !has_token(hd.connection, "upgrade")) {
		h->err = "Connection does not contain upgrade";
		return -1;
	}
	if (hd.version == NULL || strcmp(hd.version, "13") != 0) {
		h->err = "Sec-WebSocket-Version is not 13";
		return -1;
	}
	if (hd.key == NULL || strlen(hd.key) != 24 ||
	    (k = EVP_DecodeBlock(raw, (const unsigned char *)hd.key, 24)) != 18 || hd.key[22] != '=' ||
	    hd.key[23] != '=') {
		h->err = "Sec-WebSocket-Key is not the base64 of 16 bytes";
		return -1;
	}
	/* a comma-separated list of tokens, short enough to keep whole ("" = none) */
	if (hd.protocol != NULL && hd.protocol[0] != '\0' &&
	    (!ws_token_list_valid(hd.protocol) || strlen(hd.protocol) >= sizeof(h->protocol))) {
		h->err = strlen(hd.protocol) >= sizeof(h->protocol)
				 ? "Sec-WebSocket-Protocol longer than 63 bytes"
				 : "Sec-WebSocket-Protocol is not a list of tokens";
		return -1;
	}
	if (ws_pmd_server_pick(h, hd.ext, hd.next) < 0)
		return -1;
	snprintf(h->key, sizeof(h->key), "%s", hd.key);
	snprintf(h->protocol, sizeof(h->protocol), "%s", hd.protocol != NULL ? hd.protocol : "");
	return 1;
}

void
stk_ws_server_init(struct stk_ws_hs *h, const struct stk_ws_pmd *settings)
{
	memset(h, 0, sizeof(*h));
	if (settings != NULL)
		h->pmd_want = *settings;
}

int
stk_ws_server_response(const struct stk_ws_hs *h, char *out, size_t cap, const char *protocol)
{
	char acc[29], ext[192] = "";
	int n;

	if (protocol != NULL && protocol[0] != '\0' && !stk_ws_is_token(protocol, strlen(protocol)))
		return -1;
	if (h->pmd.on && ws_pmd_response_line(&h->pmd, &h->pmd_offer, ext, sizeof(ext)) < 0)
		return -1;
	stk_ws_accept_for(h->key, acc);
	n = snprintf(out, cap,
		     "HTTP/1.1 101 Switching Protocols\r\n"
		     "Upgrade: websocket\r\n"
		     "Connection: Upgrade\r\n"
		     "Sec-WebSocket-Accept: %s\r\n"
		     "%s%s%s"
		     "%s"
		     "\r\n",
		     acc, protocol && protocol[0] ? "Sec-WebSocket-Protocol: " : "",
		     protocol ? protocol : "", protocol && protocol[0] ? "\r\n" : "", ext);
	return n < 0 || (size_t)n >= cap ? -1 : n;
}

int
stk_ws_server_reject(char *out, size_t cap, const char *why)
{
	int n = snprintf(out, cap,
			 "HTTP/1.1 400 Bad Request\r\nContent-Type: text/plain\r\nContent-Length: %zu\r\n"
			 "Connection: close\r\n\r\n%s\n",
			 strlen(why) + 1, why);

	return n < 0 || (size_t)n >= cap ? -1 : n;
}
