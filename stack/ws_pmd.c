/* SPDX-License-Identifier: BSD-3-Clause
 * ws_pmd.c — header tokens and the permessage-deflate negotiation (RFC 7692
 * 5, 7.1) on Sec-WebSocket-Extensions values, for ws_handshake.c.
 *
 *   stk_ws_is_token, ws_token_list_*   tchar (RFC 9110 5.6.2), 1#token lists
 *   ext_next                           one element of an extension list
 *                                      (RFC 6455 9.1): token *(";" param),
 *                                      param = token ["=" (token | quoted-string)]
 *   pmd_offer_line / pmd_response_line the header lines we send
 *   ws_pmd_client_check                the server's answer against our offer
 *   ws_pmd_server_pick                 the first offer we can accept
 *
 * Names of extensions and parameters compare case-insensitively; whitespace is
 * allowed around ",", ";" and "="; empty list elements are skipped. Quoted
 * values must be tokens once unescaped (RFC 6455 9.1). */
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "ws_priv.h"

static bool
tchar(unsigned char c)
{
	if ((c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'))
		return true;
	return c != '\0' && strchr("!#$%&'*+-.^_`|~", c) != NULL;
}

bool
stk_ws_is_token(const char *p, size_t n)
{
	if (n == 0)
		return false;
	for (size_t i = 0; i < n; i++)
		if (!tchar((unsigned char)p[i]))
			return false;
	return true;
}

static const char *
ows(const char *p)
{
	while (*p == ' ' || *p == '\t')
		p++;
	return p;
}

static const char *
token_end(const char *p)
{
	while (tchar((unsigned char)*p))
		p++;
	return p;
}

bool
ws_token_list_valid(const char *v)
{
	const char *p = ows(v);

	for (;;) {
		const char *e = token_end(p);

		if (e == p)
			return false;
		p = ows(e);
		if (*p == '\0')
			return true;
		if (*p != ',')
			return false;
		p = ows(p + 1);
	}
}

bool
ws_token_list_has(const char *v, const char *tok, size_t n)
{
	const char *p = ows(v);

	while (*p) {
		const char *e = token_end(p);

		if ((size_t)(e - p) == n && memcmp(p, tok, n) == 0)
			return true;
		if (e == p)
			return false;
		p = ows(e);
		if (*p == ',')
			p = ows(p + 1);
	}
	return false;
}

/* ---- extension lists ---- */
#define EXT_PARAMS 8

struct ext_par {
	const char *name, *val; /* val: NULL = no value; quoted: inside the quotes */
	size_t nlen, vlen;
	bool quoted;
};

struct ext {
	const char *name;
	size_t nlen;
	unsigned np;
	bool overflow; /* more than EXT_PARAMS parameters */
	struct ext_par par[EXT_PARAMS];
};

/* the next element at *sp: 1 one (in e), 0 the end, -1 a syntax error */
static int
ext_next(const char **sp, struct ext *e)
{
	const char *p = ows(*sp), *t;

	while (*p == ',')
		p = ows(p + 1);
	if (*p == '\0') {
		*sp = p;
		return 0;
	}
	memset(e, 0, sizeof(*e));
	t = token_end(p);
	if (t == p)
		return -1;
	e->name = p;
	e->nlen = (size_t)(t - p);
	p = ows(t);
	while (*p == ';') {
		struct ext_par pp = {0};

		p = ows(p + 1);
		t = token_end(p);
		if (t == p)
			return -1;
		pp.name = p;
		pp.nlen = (size_t)(t - p);
		p = ows(t);
		if (*p == '=') {
			p = ows(p + 1);
			if (*p == '"') {
				const char *q = ++p;

				for (;;) {
					if (*p == '"')
						break;
					if (*p == '\\')
						p++;
					if (!tchar((unsigned char)*p))
						return -1; /* also the end of the string */
					p++;
				}
				if (p == q)
					return -1;
				pp.val = q;
				pp.vlen = (size_t)(p - q);
				pp.quoted = true;
				p++;
			} else {
				t = token_end(p);
				if (t == p)
					return -1;
				pp.val = p;
				pp.vlen = (size_t)(t - p);
				p = t;
			}
			p = ows(p);
		}
		if (e->np < EXT_PARAMS)
			e->par[e->np++] = pp;
		else
			e->overflow = true;
	}
	if (*p != ',' && *p != '\0')
		return -1;
	*sp = p;
	return 1;
}

static bool
name_is(const char *p, size_t n, const char *want)
{
	return strlen(want) == n && strncasecmp(p, want, n) == 0;
}

/* a window-bits value: 8..15 (no leading zero), 0 = no value, -1 = invalid */
static int
par_bits(const struct ext_par *pp)
{
	char v[4];
	size_t n = 0;

	if (pp->val == NULL)
		return 0;
	for (size_t i = 0; i < pp->vlen; i++) {
		char c = pp->val[i];

		if (pp->quoted && c == '\\')
			c = pp->val[++i];
		if (n == sizeof(v) - 1)
			return -1;
		v[n++] = c;
	}
	v[n] = '\0';
	if (n == 1 && (v[0] == '8' || v[0] == '9'))
		return v[0] - '0';
	if (n == 2 && v[0] == '1' && v[1] >= '0' && v[1] <= '5')
		return 10 + v[1] - '0';
	return -1;
}

enum { P_SNCT, P_CNCT, P_SMWB, P_CMWB, P_N };
static const char *const par_names[P_N] = {
	[P_SNCT] = "server_no_context_takeover",
	[P_CNCT] = "client_no_context_takeover",
	[P_SMWB] = "server_max_window_bits",
	[P_CMWB] = "client_max_window_bits",
};

static int
par_id(const struct ext_par *pp)
{
	for (int i = 0; i < P_N; i++)
		if (name_is(pp->name, pp->nlen, par_names[i]))
			return i;
	return -1;
}

static const char pmd_name[] = "permessage-deflate";

static bool
bits_ok(unsigned b, bool zero_ok)
{
	return (zero_ok && b == 0) || (b >= 8 && b <= 15);
}

/* ---- what we send ---- */
int
ws_pmd_offer_line(const struct stk_ws_pmd *w, char *out, size_t cap)
{
	char cm[8] = "", sm[32] = "";
	int n;

	if (!bits_ok(w->client_max_window_bits, true) || !bits_ok(w->server_max_window_bits, true))
		return -1;
	if (w->client_max_window_bits)
		snprintf(cm, sizeof(cm), "=%u", w->client_max_window_bits);
	if (w->server_max_window_bits)
		snprintf(sm, sizeof(sm), "; server_max_window_bits=%u", w->server_max_window_bits);
	n = snprintf(out, cap, "Sec-WebSocket-Extensions: %s; client_max_window_bits%s%s%s%s\r\n",
		     pmd_name, cm, sm,
		     w->client_no_context_takeover ? "; client_no_context_takeover" : "",
		     w->server_no_context_takeover ? "; server_no_context_takeover" : "");
	return n < 0 || (size_t)n >= cap ? -1 : n;
}

int
ws_pmd_response_line(const struct stk_ws_pmd *neg, const struct stk_ws_pmd *offer, char *out,
		     size_t cap)
{
	char cm[32] = "", sm[32] = "";
	int n;

	if (!bits_ok(neg->client_max_window_bits, false) ||
	    !bits_ok(neg->server_max_window_bits, false))
		return -1;
	/* stated when the client asked for it (it then requires it) or when lower than 15 */
	if (offer->server_max_window_bits != 0 || neg->server_max_window_bits < 15)
		snprintf(sm, sizeof(sm), "; server_max_window_bits=%u",
			 neg->server_max_window_bits);
	if (neg->client_max_window_bits < 15)
		snprintf(cm, sizeof(cm), "; client_max_window_bits=%u",
			 neg->client_max_window_bits);
	n = snprintf(out, cap, "Sec-WebSocket-Extensions: %s%s%s%s%s\r\n", pmd_name,
		     neg->server_no_context_takeover ? "; server_no_context_takeover" : "",
		     neg->client_no_context_takeover ? "; client_no_context_takeover" : "", sm, cm);
	return n < 0 || (size_t)n >= cap ? -1 : n;
}

/* ---- client: the server's answer ---- */
static int
cfail(struct stk_ws_hs *h, const char *why)
{
	memset(&h->pmd, 0, sizeof(h->pmd));
	h->err = why;
	return -1;
}

/* why a *_max_window_bits in the response is refused: [server?][above?] */
static const char *const bits_refused[2][2] = {
	{ "invalid client_max_window_bits in the response",
	  "client_max_window_bits above the value we offered" },
	{ "invalid server_max_window_bits in the response",
	  "server_max_window_bits above the value we offered" },
};

static int
client_one(struct stk_ws_hs *h, const struct ext *e)
{
	const struct stk_ws_pmd *w = &h->pmd_want;
	struct stk_ws_pmd neg = {.on = true};
	bool seen[P_N] = {false};
	int cm = 0;

	if (!w->on || !name_is(e->name, e->nlen, pmd_name))
		return cfail(h, "the server chose an extension we did not offer");
	if (e->overflow)
		return cfail(h, "permessage-deflate response with too many parameters");
	for (unsigned i = 0; i < e->np; i++) {
		const struct ext_par *pp = &e->par[i];
		int id = par_id(pp), b;

		if (id < 0)
			return cfail(h, "unknown permessage-deflate parameter in the response");
		if (seen[id])
			return cfail(h, "duplicate permessage-deflate parameter in the response");
		seen[id] = true;
		switch (id) {
		case P_SNCT:
		case P_CNCT:
			if (pp->val != NULL)
				return cfail(h,
					     "*_no_context_takeover with a value in the response");
			if (id == P_SNCT)
				neg.server_no_context_takeover = true;
			else
				neg.client_no_context_takeover = true;
			break;
		default: { /* P_SMWB, or P_CMWB (we always offer it) */
			bool srv = id == P_SMWB;
			uint8_t offered = srv ? w->server_max_window_bits : w->client_max_window_bits;

			b = par_bits(pp);
			if (b <= 0)
				return cfail(h, bits_refused[srv][0]);
			if (offered != 0 && b > offered)
				return cfail(h, bits_refused[srv][1]);
			if (srv)
				neg.server_max_window_bits = (uint8_t)b;
			else
				cm = b;
			break;
		}
		}
	}
	if (w->server_max_window_bits != 0 && !seen[P_SMWB])
		return cfail(h, "server_max_window_bits offered but missing in the response");
	if (w->server_no_context_takeover && !seen[P_SNCT])
		return cfail(h, "server_no_context_takeover offered but missing in the response");
	if (!seen[P_SMWB])
		neg.server_max_window_bits = 15;
	neg.client_max_window_bits =
		(uint8_t)(cm			      ? cm
			  : w->client_max_window_bits ? w->client_max_window_bits
						      : 15);
	/* offered: a promise we keep whatever the answer */
	neg.client_no_context_takeover |= w->client_no_context_takeover;
	h->pmd = neg;
	return 0;
}

int
ws_pmd_client_check(struct stk_ws_hs *h, const char *const *lines, unsigned n)
{
	unsigned count = 0;

	memset(&h->pmd, 0, sizeof(h->pmd));
	for (unsigned i = 0; i < n; i++) {
		const char *s = lines[i];
		struct ext e;
		int rc;

		while ((rc = ext_next(&s, &e)) == 1) {
			if (count++ != 0)
				return cfail(h, "more than one extension in the response");
			if (client_one(h, &e) < 0)
				return -1;
		}
		if (rc < 0)
			return cfail(h, "malformed Sec-WebSocket-Extensions in the response");
	}
	return 0;
}

/* ---- server: the client's offers ---- */
/* 1: acceptable (neg, offer filled), 0: declined */
static int
server_try(const struct stk_ws_pmd *cfg, const struct ext *e, struct stk_ws_pmd *neg,
	   struct stk_ws_pmd *offer)
{
	bool seen[P_N] = {false};
	unsigned ours = cfg->server_max_window_bits ? cfg->server_max_window_bits : 15;
	unsigned want = cfg->client_max_window_bits ? cfg->client_max_window_bits : 15;

	memset(offer, 0, sizeof(*offer));
	offer->on = true;
	if (e->overflow)
		return 0;
	for (unsigned i = 0; i < e->np; i++) {
		const struct ext_par *pp = &e->par[i];
		int id = par_id(pp), b;

		/* RFC 7692 7: decline unknown, duplicate and invalid parameters */
		if (id < 0 || seen[id])
			return 0;
		seen[id] = true;
		switch (id) {
		case P_SNCT:
		case P_CNCT:
			if (pp->val != NULL)
				return 0;
			if (id == P_SNCT)
				offer->server_no_context_takeover = true;
			else
				offer->client_no_context_takeover = true;
			break;
		case P_SMWB:
			b = par_bits(pp);
			if (b <= 0)
				return 0;
			offer->server_max_window_bits = (uint8_t)b;
			break;
		default: /* P_CMWB: a value is optional */
			b = par_bits(pp);
			if (b < 0)
				return 0;
			offer->client_max_window_bits = (uint8_t)b;
			break;
		}
	}
	memset(neg, 0, sizeof(*neg));
	neg->on = true;
	neg->server_no_context_takeover =
		offer->server_no_context_takeover || cfg->server_no_context_takeover;
	neg->client_no_context_takeover =
		offer->client_no_context_takeover || cfg->client_no_context_takeover;
	neg->server_max_window_bits =
		(uint8_t)(offer->server_max_window_bits != 0 && offer->server_max_window_bits < ours
				  ? offer->server_max_window_bits
				  : ours);
	neg->client_max_window_bits = 15;
	if (seen[P_CMWB]) {
		unsigned v = offer->client_max_window_bits ? offer->client_max_window_bits : 15;

		neg->client_max_window_bits = (uint8_t)(want < v ? want : v);
	}
	return 1;
}

int
ws_pmd_server_pick(struct stk_ws_hs *h, const char *const *lines, unsigned n)
{
	struct stk_ws_pmd cfg = h->pmd_want;
	bool picked = false;

	memset(&h->pmd, 0, sizeof(h->pmd));
	memset(&h->pmd_offer, 0, sizeof(h->pmd_offer));
	if (!bits_ok(cfg.server_max_window_bits, true) ||
	    !bits_ok(cfg.client_max_window_bits, true))
		cfg.on = false; /* settings out of range: accept nothing */
	for (unsigned i = 0; i < n; i++) {
		const char *s = lines[i];
		struct ext e;
		int rc;

		while ((rc = ext_next(&s, &e)) == 1)
			if (cfg.on && !picked && name_is(e.name, e.nlen, pmd_name))
				picked = server_try(&cfg, &e, &h->pmd, &h->pmd_offer) == 1;
		if (rc < 0) {
			memset(&h->pmd, 0, sizeof(h->pmd));
			memset(&h->pmd_offer, 0, sizeof(h->pmd_offer));
			h->err = "malformed Sec-WebSocket-Extensions";
			return -1;
		}
	}
	if (!picked) {
		memset(&h->pmd, 0, sizeof(h->pmd));
		memset(&h->pmd_offer, 0, sizeof(h->pmd_offer));
	}
	return 0;
}
