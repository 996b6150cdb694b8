/* SPDX-License-Identifier: BSD-3-Clause
 * feedsim_venue — venue message shapes for feedsim (feedsim_venue.h).
 *
 *   fs_venue_data       one data message: fv_binance .. fv_deribit
 *   fs_venue_hello      after the handshake (Kraken: status)
 *   fs_venue_reply      to a client's text message (acks, pongs)
 *   fs_venue_heartbeat  Coinbase, Kraken and Deribit heartbeats
 *
 * Per (client, symbol) state words: st[0] messages sent, st[1] the last number
 * sent (update id, trade id, seqId, change_id), st[2] a second counter (the
 * product sequence of Coinbase, the cross sequence of Bybit). The numbering is
 * each venue's, as its public docs describe it:
 *
 *   binance   depthUpdate U..u, 1-4 ids per message, the next U = u + 1
 *   coinbase  match trade_id + 1 (the first message is a last_match), sequence
 *             jumps (other products' events in between)
 *   kraken    trade: 1-3 trades per message, trade_id + 1 each
 *   okx       books: snapshot (prevSeqId -1), then updates whose prevSeqId is
 *             the last seqId and whose seqId jumps ahead; now and then an empty
 *             update with seqId == prevSeqId (the venue's keep-alive)
 *   bybit     orderbook.50: snapshot, then deltas with u + 1, seq jumping
 *   deribit   book.*.100ms: snapshot, then changes with prev_change_id = the
 *             last change_id, change_id jumping ahead
 *
 * A skipped id (gap_every): one id is consumed without a message (binance,
 * coinbase, kraken, bybit), or one whole update is never sent (okx, deribit,
 * where the chain then breaks).
 */
#include <stdbool.h>
#include <string.h>
#include <time.h>

#include "feedsim_venue.h"

const char *const fs_venue_names[] = {
	[FS_VENUE_LCPIPE] = "lcpipe",	  [FS_VENUE_BINANCE] = "binance",
	[FS_VENUE_COINBASE] = "coinbase", [FS_VENUE_KRAKEN] = "kraken",
	[FS_VENUE_OKX] = "okx",		  [FS_VENUE_BYBIT] = "bybit",
	[FS_VENUE_DERIBIT] = "deribit",	  NULL,
};

/* ---- appending (the callers size the buffers) ---- */

struct fv {
	char *p;
};

static void
fv_s(struct fv *b, const char *s)
{
	size_t n = strlen(s);

	memcpy(b->p, s, n);
	b->p += n;
}

static void
fv_u(struct fv *b, uint64_t v)
{
	b->p = u64dec(b->p, v);
}

static void
fv_i(struct fv *b, int64_t v)
{
	if (v < 0) {
		*b->p++ = '-';
		fv_u(b, (uint64_t)0 - (uint64_t)v);
	} else {
		fv_u(b, (uint64_t)v);
	}
}

/* cents as "101.25" */
static void
fv_price(struct fv *b, uint32_t cents)
{
	fv_u(b, cents / 100);
	*b->p++ = '.';
	*b->p++ = (char)('0' + cents / 10 % 10);
	*b->p++ = (char)('0' + cents % 10);
}

static void
fv_sym5(struct fv *b, const char *pre, uint32_t sym)
{
	fv_s(b, pre);
	for (uint32_t d = 10000; d > 0; d /= 10)
		*b->p++ = (char)('0' + sym / d % 10);
}

/* the venue's name of symbol sym */
static void
fv_sym(struct fv *b, int v, uint32_t sym)
{
	fv_sym5(b, "SYM", sym);
	switch (v) {
	case FS_VENUE_COINBASE:
		fv_s(b, "-USD");
		break;
	case FS_VENUE_KRAKEN:
		fv_s(b, "/USD");
		break;
	case FS_VENUE_OKX:
		fv_s(b, "-USDT");
		break;
	case FS_VENUE_DERIBIT:
		fv_s(b, "-PERPETUAL");
		break;
	default:
		break;
	}
}

/* ns since the epoch as RFC 3339 with microseconds: 2025-01-01T00:00:00.123456Z */
static void
fv_iso(struct fv *b, uint64_t ns)
{
	time_t s = (time_t)(ns / 1000000000u);
	uint64_t us = ns / 1000 % 1000000;
	struct tm tm;

	gmtime_r(&s, &tm);
	b->p += strftime(b->p, 24, "%Y-%m-%dT%H:%M:%S", &tm);
	*b->p++ = '.';
	for (uint64_t d = 100000; d > 0; d /= 10)
		*b->p++ = (char)('0' + us / d % 10);
	*b->p++ = 'Z';
}

/* 32 hex digits as a UUID, from two words */
static void
fv_uuid(struct fv *b, uint64_t a, uint64_t c)
{
	static const char hex[] = "0123456789abcdef";

	for (int i = 0; i < 32; i++) {
		uint64_t w = i < 16 ? a : c;

		if (i == 8 || i == 12 || i == 16 || i == 20)
			*b->p++ = '-';
		*b->p++ = hex[(w >> (4 * (i & 15))) & 15];
	}
}

enum { FV_LVL_PQ, FV_LVL_OKX, FV_LVL_DERIBIT };

/* price levels from cents going away from the touch (dir -1 bids, +1 asks):
 * one, then more while the message stays below limit bytes */
static void
fv_levels(struct fv *b, const char *out, size_t limit, uint32_t cents, int dir, uint32_t qty,
	  int style, bool first_change)
{
	for (unsigned i = 0;; i++) {
		uint32_t c = (uint32_t)((int)cents + dir * (int)i);

		if (i > 0)
			*b->p++ = ',';
		switch (style) {
		case FV_LVL_OKX:
			fv_s(b, "[\"");
			fv_price(b, c);
			fv_s(b, "\",\"");
			fv_u(b, qty + i);
			fv_s(b, "\",\"0\",\"");
			fv_u(b, 1 + i % 7);
			fv_s(b, "\"]");
			break;
		case FV_LVL_DERIBIT:
			fv_s(b, first_change ? "[\"new\"," : "[\"change\",");
			fv_price(b, c);
			*b->p++ = ',';
			fv_u(b, qty + i);
			fv_s(b, ".0]");
			break;
		default:
			fv_s(b, "[\"");
			fv_price(b, c);
			fv_s(b, "\",\"");
			fv_u(b, qty + i);
			fv_s(b, "\"]");
			break;
		}
		if ((size_t)(b->p - out) + 40 >= limit || i >= 4000 || c <= 1)
			break;
	}
}

/* ---- data messages ---- */

/* the symbol's next message number m (1, 2, ...); true when an id is skipped before it */
static bool
fv_next(uint64_t *st, const struct fs_venue_in *in, uint64_t *gaps)
{
	uint64_t m = ++st[0];

	if (in->gap_every != 0 && m > 1 && (m - 1) % in->gap_every == 0) {
		(*gaps)++;
		return true;
	}
	return false;
}

/* a start number for the symbol's first message: large, distinct per symbol */
static uint64_t
fv_start(const struct fs_venue_in *in)
{
	return 1000000ull * (in->sym + 1) + ((in->r >> 8) & 0xffff);
}

static size_t
fv_binance(uint64_t *st, const struct fs_venue_in *in, char *out, uint64_t *gaps)
{
	struct fv b = {out};
	uint32_t cents = 10000 + (uint32_t)(in->r % 1000);
	uint64_t first, last;
	bool gap = fv_next(st, in, gaps);

	if (st[0] == 1)
		st[1] = fv_start(in) - 1;
	first = st[1] + 1 + gap;
	last = first + ((in->r >> 40) & 3);
	st[1] = last;
	fv_sym5(&b, "{\"stream\":\"sym", in->sym);
	fv_s(&b, "@depth@100ms\",\"data\":{\"e\":\"depthUpdate\",\"E\":");
	fv_u(&b, in->ts_ns / 1000000);
	fv_s(&b, ",\"s\":\"");
	fv_sym(&b, FS_VENUE_BINANCE, in->sym);
	fv_s(&b, "\",\"U\":");
	fv_u(&b, first);
	fv_s(&b, ",\"u\":");
	fv_u(&b, last);
	fv_s(&b, ",\"b\":[");
	fv_levels(&b, out, in->size, cents, -1, 100 * (1 + (uint32_t)(in->r >> 32) % 50), FV_LVL_PQ,
		  false);
	fv_s(&b, "],\"a\":[");
	fv_levels(&b, out, 0, cents + 1, 1, 100, FV_LVL_PQ, false);
	fv_s(&b, "]}}");
	return (size_t)(b.p - out);
}

static size_t
fv_coinbase(uint64_t *st, const struct fs_venue_in *in, char *out, uint64_t *gaps)
{
	struct fv b = {out};
	uint32_t cents = 10000 + (uint32_t)(in->r % 1000);
	bool gap = fv_next(st, in, gaps), first = st[0] == 1;

	if (first) {
		st[1] = fv_start(in) - 1;
		st[2] = 10 * fv_start(in);
	}
	st[1] += 1 + gap;
	st[2] += 1 + ((in->r >> 40) & 7);
	fv_s(&b, first ? "{\"type\":\"last_match\",\"trade_id\":"
		       : "{\"type\":\"match\",\"trade_id\":");
	fv_u(&b, st[1]);
	fv_s(&b, ",\"maker_order_id\":\"");
	fv_uuid(&b, in->r, st[2]);
	fv_s(&b, "\",\"taker_order_id\":\"");
	fv_uuid(&b, in->r * 0x9e3779b97f4a7c15ull, st[1]);
	fv_s(&b, (in->r >> 20) & 1 ? "\",\"side\":\"sell\",\"size\":\""
				   : "\",\"side\":\"buy\",\"size\":\"");
	fv_price(&b, 1 + (uint32_t)(in->r >> 32) % 5000);
	fv_s(&b, "\",\"price\":\"");
	fv_price(&b, cents);
	fv_s(&b, "\",\"product_id\":\"");
	fv_sym(&b, FS_VENUE_COINBASE, in->sym);
	fv_s(&b, "\",\"sequence\":");
	fv_u(&b, st[2]);
	fv_s(&b, ",\"time\":\"");
	fv_iso(&b, in->ts_ns);
	fv_s(&b, "\"}");
	return (size_t)(b.p - out);
}

static size_t
fv_kraken(uint64_t *st, const struct fs_venue_in *in, char *out, uint64_t *gaps)
{
	struct fv b = {out};
	uint32_t cents = 10000 + (uint32_t)(in->r % 1000);
	unsigned n = 1 + (unsigned)((in->r >> 40) % 3);
	bool gap = fv_next(st, in, gaps);

	if (st[0] == 1)
		st[1] = fv_start(in) - 1;
	st[1] += gap;
	fv_s(&b, "{\"channel\":\"trade\",\"type\":\"update\",\"data\":[");
	for (unsigned i = 0; i < n; i++) {
		fv_s(&b, i ? ",{\"symbol\":\"" : "{\"symbol\":\"");
		fv_sym(&b, FS_VENUE_KRAKEN, in->sym);
		fv_s(&b, (in->r >> (20 + i)) & 1 ? "\",\"side\":\"sell\",\"price\":"
						 : "\",\"side\":\"buy\",\"price\":");
		fv_price(&b, cents + i);
		fv_s(&b, ",\"qty\":");
		fv_price(&b, 1 + (uint32_t)(in->r >> 32) % 5000 + i);
		fv_s(&b, ",\"ord_type\":\"market\",\"trade_id\":");
		fv_u(&b, ++st[1]);
		fv_s(&b, ",\"timestamp\":\"");
		fv_iso(&b, in->ts_ns);
		fv_s(&b, "\"}");
	}
	fv_s(&b, "]}");
	return (size_t)(b.p - out);
}

static size_t
fv_okx(uint64_t *st, const struct fs_venue_in *in, char *out, uint64_t *gaps)
{
	struct fv b = {out};
	uint32_t cents = 10000 + (uint32_t)(in->r % 1000);
	bool gap = fv_next(st, in, gaps), first = st[0] == 1;
	bool idle = !first && ((in->r >> 48) & 31) == 0; /* no change: seqId == prevSeqId */
	uint64_t prev, seq;

	if (first) {
		prev = 0;
		seq = fv_start(in);
	} else {
		if (gap)
			st[1] += 1 + ((in->r >> 52) & 7); /* an update that is never sent */
		prev = st[1];
		seq = idle ? prev : prev + 1 + ((in->r >> 40) & 15);
	}
	st[1] = seq;
	fv_s(&b, "{\"arg\":{\"channel\":\"books\",\"instId\":\"");
	fv_sym(&b, FS_VENUE_OKX, in->sym);
	fv_s(&b, first ? "\"},\"action\":\"snapshot\",\"data\":[{\"asks\":["
		       : "\"},\"action\":\"update\",\"data\":[{\"asks\":[");
	if (!idle) {
		fv_levels(&b, out, in->size, cents + 1, 1, 100 * (1 + (uint32_t)(in->r >> 32) % 50),
			  FV_LVL_OKX, false);
		fv_s(&b, "],\"bids\":[");
		fv_levels(&b, out, 0, cents, -1, 100, FV_LVL_OKX, false);
	} else {
		fv_s(&b, "],\"bids\":[");
	}
	fv_s(&b, "],\"ts\":\"");
	fv_u(&b, in->ts_ns / 1000000);
	fv_s(&b, "\",\"checksum\":");
	fv_i(&b, (int32_t)(uint32_t)(in->r >> 16));
	fv_s(&b, ",\"prevSeqId\":");
	if (first)
		fv_s(&b, "-1");
	else
		fv_u(&b, prev);
	fv_s(&b, ",\"seqId\":");
	fv_u(&b, seq);
	fv_s(&b, "}]}");
	return (size_t)(b.p - out);
}

static size_t
fv_bybit(uint64_t *st, const struct fs_venue_in *in, char *out, uint64_t *gaps)
{
	struct fv b = {out};
	uint32_t cents = 10000 + (uint32_t)(in->r % 1000);
	uint64_t ms = in->ts_ns / 1000000;
	bool gap = fv_next(st, in, gaps), first = st[0] == 1;

	if (first) {
		st[1] = fv_start(in) - 1;
		st[2] = 20 * fv_start(in);
	}
	st[1] += 1 + gap;
	st[2] += 1 + ((in->r >> 40) & 31);
	fv_sym5(&b, "{\"topic\":\"orderbook.50.SYM", in->sym);
	fv_s(&b, first ? "\",\"type\":\"snapshot\",\"ts\":" : "\",\"type\":\"delta\",\"ts\":");
	fv_u(&b, ms);
	fv_s(&b, ",\"data\":{\"s\":\"");
	fv_sym(&b, FS_VENUE_BYBIT, in->sym);
	fv_s(&b, "\",\"b\":[");
	fv_levels(&b, out, in->size, cents, -1, 100 * (1 + (uint32_t)(in->r >> 32) % 50), FV_LVL_PQ,
		  false);
	fv_s(&b, "],\"a\":[");
	fv_levels(&b, out, 0, cents + 1, 1, 100, FV_LVL_PQ, false);
	fv_s(&b, "],\"u\":");
	fv_u(&b, st[1]);
	fv_s(&b, ",\"seq\":");
	fv_u(&b, st[2]);
	fv_s(&b, "},\"cts\":");
	fv_u(&b, ms > 2 ? ms - 2 : ms);
	fv_s(&b, "}");
	return (size_t)(b.p - out);
}

static size_t
fv_deribit(uint64_t *st, const struct fs_venue_in *in, char *out, uint64_t *gaps)
{
	struct fv b = {out};
	uint32_t cents = 10000 + (uint32_t)(in->r % 1000);
	bool gap = fv_next(st, in, gaps), first = st[0] == 1;
	uint64_t prev = st[1], id;

	if (first) {
		id = fv_start(in);
	} else {
		if (gap)
			prev += 1 + ((in->r >> 52) & 7); /* a change that is never sent */
		id = prev + 1 + ((in->r >> 40) & 3);
	}
	st[1] = id;
	fv_s(&b,
	     "{\"jsonrpc\":\"2.0\",\"method\":\"subscription\",\"params\":{\"channel\":\"book.");
	fv_sym(&b, FS_VENUE_DERIBIT, in->sym);
	fv_s(&b, first ? ".100ms\",\"data\":{\"type\":\"snapshot\",\"timestamp\":"
		       : ".100ms\",\"data\":{\"type\":\"change\",\"timestamp\":");
	fv_u(&b, in->ts_ns / 1000000);
	if (!first) {
		fv_s(&b, ",\"prev_change_id\":");
		fv_u(&b, prev);
	}
	fv_s(&b, ",\"instrument_name\":\"");
	fv_sym(&b, FS_VENUE_DERIBIT, in->sym);
	fv_s(&b, "\",\"change_id\":");
	fv_u(&b, id);
	fv_s(&b, ",\"bids\":[");
	fv_levels(&b, out, in->size, cents, -1, 10 * (1 + (uint32_t)(in->r >> 32) % 50),
		  FV_LVL_DERIBIT, first);
	fv_s(&b, "],\"asks\":[");
	fv_levels(&b, out, 0, cents + 1, 1, 20, FV_LVL_DERIBIT, first);
	fv_s(&b, "]}}}");
	return (size_t)(b.p - out);
}

size_t
fs_venue_data(int v, uint64_t *st, const struct fs_venue_in *in, char *out, uint64_t *gaps)
{
	switch (v) {
	case FS_VENUE_BINANCE:
		return fv_binance(st, in, out, gaps);
	case FS_VENUE_COINBASE:
		return fv_coinbase(st, in, out, gaps);
	case FS_VENUE_KRAKEN:
		return fv_kraken(st, in, out, gaps);
	case FS_VENUE_OKX:
		return fv_okx(st, in, out, gaps);
	case FS_VENUE_BYBIT:
		return fv_bybit(st, in, out, gaps);
	case FS_VENUE_DERIBIT:
		return fv_deribit(st, in, out, gaps);
	default:
		return 0;
	}
}

/* ---- non-data messages ---- */

#define FV_CTL_MIN FS_VENUE_CTL_MAX /* room the non-data messages need */

size_t
fs_venue_hello(int v, uint64_t ts_ns, char *out, size_t cap)
{
	struct fv b = {out};

	if (cap < FV_CTL_MIN || v != FS_VENUE_KRAKEN)
		return 0;
	fv_s(&b, "{\"channel\":\"status\",\"type\":\"update\",\"data\":[{\"version\":\"2.0.0\","
		 "\"system\":\"online\",\"api_version\":\"v2\",\"connection_id\":");
	fv_u(&b, 1000000000000000000ull + ts_ns % 1000000000000000000ull);
	fv_s(&b, "}]}");
	return (size_t)(b.p - out);
}

/* the digits after "key": in msg, or 0 */
static uint64_t
fv_find_uint(const uint8_t *msg, size_t len, const char *key)
{
	size_t kl = strlen(key);
	const uint8_t *p = memmem(msg, len, key, kl), *end = msg + len;
	uint64_t v = 0;

	if (p == NULL)
		return 0;
	for (p += kl; p < end && (*p == ' ' || *p == ':'); p++)
		;
	for (; p < end && *p >= '0' && *p <= '9' && v < UINT64_MAX / 10 - 9; p++)
		v = v * 10 + (uint64_t)(*p - '0');
	return v;
}

static bool
fv_has(const uint8_t *msg, size_t len, const char *s)
{
	return memmem(msg, len, s, strlen(s)) != NULL;
}

size_t
fs_venue_reply(int v, const uint8_t *msg, size_t len, uint64_t ts_ns, char *out, size_t cap)
{
	struct fv b = {out};
	uint64_t id = fv_find_uint(msg, len, "\"id\"");

	if (cap < FV_CTL_MIN)
		return 0;
	switch (v) {
	case FS_VENUE_BINANCE:
		fv_s(&b, "{\"result\":null,\"id\":");
		fv_u(&b, id);
		fv_s(&b, "}");
		break;
	case FS_VENUE_COINBASE:
		fv_s(&b, "{\"type\":\"subscriptions\",\"channels\":[{\"name\":\"matches\","
			 "\"product_ids\":[\"");
		fv_sym(&b, FS_VENUE_COINBASE, 0);
		fv_s(&b, "\"]},{\"name\":\"heartbeat\",\"product_ids\":[\"");
		fv_sym(&b, FS_VENUE_COINBASE, 0);
		fv_s(&b, "\"]}]}");
		break;
	case FS_VENUE_KRAKEN:
		if (fv_has(msg, len, "\"ping\"")) {
			fv_s(&b, "{\"method\":\"pong\",\"time_in\":\"");
		} else {
			fv_s(&b, "{\"method\":\"subscribe\",\"result\":{\"channel\":\"trade\","
				 "\"snapshot\":false,\"symbol\":\"");
			fv_sym(&b, FS_VENUE_KRAKEN, 0);
			fv_s(&b, "\"},\"success\":true,\"time_in\":\"");
		}
		fv_iso(&b, ts_ns);
		fv_s(&b, "\",\"time_out\":\"");
		fv_iso(&b, ts_ns + 1000);
		fv_s(&b, "\"}");
		break;
	case FS_VENUE_OKX:
		if (len == 4 && memcmp(msg, "ping", 4) == 0) {
			fv_s(&b, "pong");
			break;
		}
		fv_s(&b, "{\"event\":\"subscribe\",\"arg\":{\"channel\":\"books\",\"instId\":\"");
		fv_sym(&b, FS_VENUE_OKX, 0);
		fv_s(&b, "\"},\"connId\":\"a4d3ae55\"}");
		break;
	case FS_VENUE_BYBIT:
		fv_s(&b,
		     fv_has(msg, len, "\"ping\"")
			     ? "{\"success\":true,\"ret_msg\":\"pong\",\"conn_id\":"
			       "\"cejreaspqfh3sjdnldmg-p\",\"req_id\":\"\",\"op\":\"ping\"}"
			     : "{\"success\":true,\"ret_msg\":\"\",\"conn_id\":"
			       "\"cejreaspqfh3sjdnldmg-p\",\"req_id\":\"\",\"op\":\"subscribe\"}");
		break;
	case FS_VENUE_DERIBIT:
		fv_s(&b, "{\"jsonrpc\":\"2.0\",\"id\":");
		fv_u(&b, id);
		fv_s(&b, ",\"result\":[\"book.");
		fv_sym(&b, FS_VENUE_DERIBIT, 0);
		fv_s(&b, ".100ms\"],\"usIn\":");
		fv_u(&b, ts_ns / 1000);
		fv_s(&b, ",\"usOut\":");
		fv_u(&b, ts_ns / 1000 + 70);
		fv_s(&b, ",\"usDiff\":70,\"testnet\":false}");
		break;
	default:
		return 0;
	}
	return (size_t)(b.p - out);
}

size_t
fs_venue_heartbeat(int v, uint32_t sym, const uint64_t *st, uint64_t ts_ns, char *out, size_t cap)
{
	struct fv b = {out};

	if (cap < FV_CTL_MIN)
		return 0;
	switch (v) {
	case FS_VENUE_COINBASE:
		fv_s(&b, "{\"type\":\"heartbeat\",\"last_trade_id\":");
		fv_u(&b, st[1]);
		fv_s(&b, ",\"product_id\":\"");
		fv_sym(&b, FS_VENUE_COINBASE, sym);
		fv_s(&b, "\",\"sequence\":");
		fv_u(&b, st[2]);
		fv_s(&b, ",\"time\":\"");
		fv_iso(&b, ts_ns);
		fv_s(&b, "\"}");
		break;
	case FS_VENUE_KRAKEN:
		fv_s(&b, "{\"channel\":\"heartbeat\"}");
		break;
	case FS_VENUE_DERIBIT:
		fv_s(&b, "{\"jsonrpc\":\"2.0\",\"method\":\"heartbeat\",\"params\":{\"type\":"
			 "\"heartbeat\"}}");
		break;
	default:
		return 0;
	}
	return (size_t)(b.p - out);
}
