/* SPDX-License-Identifier: BSD-3-Clause
 * feedsim_venue — the message shapes of real venues for feedsim's `venue`
 * option (doc/websocket.md, "Venue modes"): data messages with each venue's
 * per-symbol numbering, and its non-data messages (subscription answers,
 * status, heartbeats, pongs). Pure formatting: feedsim_tx.c draws the
 * randomness and sends what these return; the per-(client, symbol) state words
 * are feedsim's (allocated in feedsim_config.c, zeroed per client at accept).
 */
#ifndef FEEDSIM_VENUE_H
#define FEEDSIM_VENUE_H

#include <stddef.h>
#include <stdint.h>

enum fs_venue {
	FS_VENUE_LCPIPE = 0, /* feedsim's own ticks (feedsim_tx.c) */
	FS_VENUE_BINANCE,
	FS_VENUE_COINBASE,
	FS_VENUE_KRAKEN,
	FS_VENUE_OKX,
	FS_VENUE_BYBIT,
	FS_VENUE_DERIBIT,
};

/* v in decimal at p; returns the end */
static inline char *
u64dec(char *p, uint64_t v)
{
	char t[24];
	int i = 0;

	do {
		t[i++] = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	while (i)
		*p++ = t[--i];
	return p;
}

/* the option's choices, in enum order, NULL-terminated */
extern const char *const fs_venue_names[];

#define FS_VENUE_WORDS 3      /* uint64_t of state per (client, symbol) */
#define FS_VENUE_MAX 1024     /* bytes of a data message beyond its size target, at most */
#define FS_VENUE_CTL_MAX 1024 /* bytes of a non-data message, at most */

/* what one data message is made of */
struct fs_venue_in {
	uint32_t sym;	    /* symbol index */
	uint64_t r;	    /* 64 random bits */
	uint64_t ts_ns;	    /* exchange time, ns since the epoch */
	uint32_t size;	    /* size target (book venues add price levels up to it) */
	uint32_t gap_every; /* skip an update id before message N+1, 2N+1, ... (0: never) */
};

/* One data message of venue v into out (room for in->size + FS_VENUE_MAX);
 * st: the symbol's FS_VENUE_WORDS words for this client, zero before its first
 * message. *gaps is incremented when an update id (or a whole update, for
 * venues that chain messages) was skipped before this one. Returns the length. */
size_t fs_venue_data(int v, uint64_t *st, const struct fs_venue_in *in, char *out, uint64_t *gaps);

/* The message the venue sends right after the handshake (Kraken's status), into
 * out (cap bytes, at least FS_VENUE_CTL_MAX: less gives 0); 0: none. */
size_t fs_venue_hello(int v, uint64_t ts_ns, char *out, size_t cap);

/* The answer to a text message from the client (a subscription answer, a pong);
 * 0: none. */
size_t fs_venue_reply(int v, const uint8_t *msg, size_t len, uint64_t ts_ns, char *out, size_t cap);

/* The venue's heartbeat, about symbol sym (st its state words); 0: the venue
 * has none. */
size_t fs_venue_heartbeat(int v, uint32_t sym, const uint64_t *st, uint64_t ts_ns, char *out,
			  size_t cap);

#endif
