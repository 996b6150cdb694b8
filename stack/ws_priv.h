/* SPDX-License-Identifier: BSD-3-Clause
 * ws_priv.h — between ws_handshake.c and ws_pmd.c: header-list syntax and the
 * permessage-deflate negotiation on parsed Sec-WebSocket-Extensions values. */
#ifndef STK_WS_PRIV_H
#define STK_WS_PRIV_H

#include <stk/ws.h>

/* Sec-WebSocket-Extensions header lines of one head, in order */
#define WS_EXT_LINES 8

/* 1#token with optional whitespace around the commas (Sec-WebSocket-Protocol);
 * the empty string is not a list */
bool ws_token_list_valid(const char *v);
/* is [tok, tok+n) one of the elements of the token list v? */
bool ws_token_list_has(const char *v, const char *tok, size_t n);

/* the header lines we send, "Sec-WebSocket-Extensions: ...\r\n": our offer
 * (window bits 0 or 8..15), and the server's answer for neg given the offer
 * accepted; length, or -1 if cap is too small or a value is out of range */
int ws_pmd_offer_line(const struct stk_ws_pmd *w, char *out, size_t cap);
int ws_pmd_response_line(const struct stk_ws_pmd *neg, const struct stk_ws_pmd *offer, char *out,
			 size_t cap);
/* client: check the response's extension lines against h->pmd_want and set
 * h->pmd; -1 with h->err on failure */
int ws_pmd_client_check(struct stk_ws_hs *h, const char *const *lines, unsigned n);
/* server: syntax-check the request's extension lines, then pick the first
 * acceptable permessage-deflate offer under h->pmd_want into h->pmd and
 * h->pmd_offer; -1 with h->err on a malformed header */
int ws_pmd_server_pick(struct stk_ws_hs *h, const char *const *lines, unsigned n);

#endif
