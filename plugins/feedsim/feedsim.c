/* SPDX-License-Identifier: BSD-3-Clause
 * feedsim — an exchange simulator on our own TCP stack: listens, accepts
 * WebSocket clients (server side of the handshake and framing, stk/ws.h) and
 * streams synthetic market data.
 *
 * Ports: "in" (stream from its tcp stage's "data"), "tx" (stream to its tcp
 * stage's "app").
 *
 * Each message is a JSON tick, text frame:
 *   {"s":"SYM00042","n":17,"p":"101.25","q":300,"t":1764489600123456789,"x":"…"}
 * s symbol, n per-symbol sequence number (1, 2, … per client), p price, q
 * quantity, t exchange timestamp (ns, CLOCK_REALTIME at start + TSC), x padding
 * to the size drawn from the "sizes" mix.
 *
 *   feedsim_poll     LISTEN at first call; per streaming client: as many
 *                    messages as the rate, the batch and the send pool allow
 *   feedsim_process  ACCEPTED -> TLS (tls_cert and tls_key given: wss) or the
 *                    handshake; DATA -> TLS records, the upgrade request, then
 *                    client frames (ping -> pong, close -> close, text counted)
 *   feedsim_linger   shutdown: close 1001 to every streaming client, TCP close
 *                    of those still in their upgrade; done once every client
 *                    answered (its close frame) or went
 *
 * wss: a TLS server session per client (stk/tls.h) on this lcore. Frames are
 * staged as plaintext (up to 16 KiB, one TLS record) and encrypted when the
 * stage is full, at the end of a client's batch and after control frames; the
 * records go out in SEND mbufs of the send pool.
 *
 * venue (feedsim_venue.c): the data and non-data messages of a real venue's
 * public feed instead (Binance, Coinbase, Kraken, OKX, Bybit, Deribit); gap_every
 * skips an update id now and then, in every mode, so gap detection can be tested.
 *
 * prerender (fs_pr_render, fs_stream_pr): the client's whole stream (count messages) is
 * rendered once at init into one buffer of complete text frames, in
 * b12_feed_server's shape and exact sizes (symbols round robin, price and
 * quantity fixed, no "t"), cut into steps of whole frames of at most a SEND
 * mbuf's room; each client is sent that buffer by copies, steps at a time, so
 * a poll always ends on a frame boundary (a pong or the close goes between
 * frames). Every client gets the same bytes.
 *
 * Backpressure: SEND mbufs come from the stage's own pool ("send_mbufs"); the
 * tcp stage keeps each until its bytes are acknowledged, so an empty pool means
 * "the peer is behind" and generation waits. Keep send_mbufs * ~1.9 KB below
 * the tcp stage's sndbuf. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <rte_cycles.h>
#include <rte_errno.h>
#include <rte_malloc.h>
#include <rte_mbuf.h>
#include <rte_mempool.h>

#include <openssl/evp.h>

#include <lcp/lcp.h>
#include <stk/tls.h>
#include <stk/ws.h>
#include <stk/ws_session.h>

#include "feedsim_venue.h"

#define FS_PT_MAX 16384 /* plaintext staged per TLS record */

enum { FS_P_IN, FS_P_TX };

static const struct lcp_port_def fs_ports[] = {
	{ .name = "in", .dir = LCP_PORT_IN, .unit = LCP_UNIT_STREAM, .flags = LCP_PORT_F_REQUIRED,
	  .doc = "stream events and payload from the tcp stage (tcp.data)" },
	{ .name = "tx", .dir = LCP_PORT_OUT, .unit = LCP_UNIT_STREAM, .flags = LCP_PORT_F_REQUIRED,
	  .doc = "commands and bytes to the tcp stage (tcp.app)" },
	LCP_PORT_END,
};

#define FS_COUNTERS(X)                                                         \
	X(CLIENTS, "clients")                                                  \
	X(HANDSHAKES, "handshakes")                                            \
	X(MSGS, "msgs")                                                        \
	X(MSG_BYTES, "msg_bytes")                                              \
	X(FRAGMENTED, "fragmented_msgs")                                       \
	X(PINGS_TX, "pings_tx")                                                \
	X(PONGS_RX, "pongs_rx")                                                \
	X(PINGS_RX, "pings_rx")                                                \
	X(PONGS_TX, "pongs_tx")                                                \
	X(PINGS_AFTER_CLOSE, "pings_after_close")                              \
	X(CLIENT_MSGS, "client_msgs")                                          \
	X(CLOSES, "closes")                                                    \
	X(CLOSES_RX, "closes_rx")                                              \
	X(SEND_POOL_EMPTY, "send_pool_empty")                                  \
	X(SEND_FULL, "send_full")                                              \
	X(FAIL_HANDSHAKE, "fail_handshake")                                    \
	X(FAIL_PROTOCOL, "fail_protocol")                                      \
	X(DROP_TOO_MANY_CLIENTS, "drop_too_many_clients")                      \
	X(DROP_NO_MBUF, "drop_no_mbuf")                                        \
	X(EVENTS_OLD_CONN, "events_old_conn")                                  \
	X(FAIL_STREAM_GAP, "fail_stream_gap")                                  \
	X(TLS_HANDSHAKES, "tls_handshakes")                                    \
	X(TLS_RESUMED, "tls_resumed")                                          \
	X(TLS_FAIL_ALERT, "tls_fail_alert")                                    \
	X(TLS_FAIL_PROTOCOL, "tls_fail_protocol")                              \
	X(TLS_FAIL_TX, "tls_fail_tx")                                          \
	X(DEFLATE_CLIENTS, "deflate_clients")                                  \
	X(MSGS_DEFLATED, "msgs_deflated")                                      \
	X(DEFLATED_BYTES, "deflated_bytes")                                    \
	X(VENUE_CTL_MSGS, "venue_ctl_msgs")                                    \
	X(GAPS_INJECTED, "gaps_injected")                                      \
	X(ECHOED, "echoed")

enum {
#define X(e, s) FS_C_##e,
	FS_COUNTERS(X)
#undef X
};

static const char *const fs_counters[] = {
#define X(e, s) s,
	FS_COUNTERS(X)
#undef X
	NULL,
};

struct fs_conf {
	uint32_t listen;
	uint32_t symbols;
	uint32_t rate;
	uint64_t count;
	const char *sizes;
	uint32_t fragment_every, fragments;
	uint32_t ping_interval_ms;
	uint32_t send_mbufs;
	uint32_t batch;
	uint32_t max_clients;
	uint64_t seed;
	bool close_when_done;
	bool hash_payloads;
	bool echo;
	const char *tls_cert, *tls_key;
	int tls_min_version, tls_max_version;
	const char *tls_ciphers, *tls_ciphersuites;
	bool deflate;
	int32_t deflate_level;
	uint32_t deflate_window_bits;
	bool deflate_no_context_takeover;
	int venue;
	uint32_t gap_every;
	uint32_t heartbeat_every;
	bool prerender;
};

static const char *const fs_tls_versions[] = { "1.2", "1.3", NULL };

#define C struct fs_conf
static const struct lcp_opt fs_opts[] = {
	LCP_OPT_UINT(C, listen, "listen", "8080", 1, 65535, 0, "port to accept WebSocket clients on"),
	LCP_OPT_UINT(C, symbols, "symbols", "100", 1, 100000, 0, "symbols, each with its own sequence"),
	LCP_OPT_UINT(C, rate, "rate", "0", 0, 100000000, 0, "messages per second per client (0: flat out)"),
	LCP_OPT_UINT(C, count, "count", "0", 0, UINT64_MAX >> 1, 0,
		     "messages per client, then a close 1000 (0: until the run ends)"),
	LCP_OPT_STRING(C, sizes, "sizes", "\"96:70,256:25,1024:5\"", 3, 255, 0,
		       "message size mix \"bytes:weight,…\" (sizes below the tick itself send the bare tick)"),
	LCP_OPT_UINT(C, fragment_every, "fragment_every", "0", 0, 1000000, 0,
		     "send every Nth message as several frames (0: never)"),
	LCP_OPT_UINT(C, fragments, "fragments", "3", 2, 64, 0, "frames of a fragmented message"),
	LCP_OPT_UINT(C, ping_interval_ms, "ping_interval_ms", "0", 0, 3600000, 0,
		     "ping each client this often, also between fragments (0: never)"),
	LCP_OPT_UINT(C, send_mbufs, "send_mbufs", "2048", 64, 1048576, 0,
		     "SEND mbufs in flight (backpressure: the tcp stage frees them when acknowledged)"),
	LCP_OPT_UINT(C, batch, "batch", "64", 1, 4096, 0, "messages per client per poll, at most"),
	LCP_OPT_UINT(C, max_clients, "max_clients", "64", 1, 4096, 0, "clients served at once"),
	LCP_OPT_UINT(C, seed, "seed", "1", 0, UINT64_MAX >> 1, 0, "seed of the size mix and prices"),
	LCP_OPT_BOOL(C, close_when_done, "close_when_done", "true", "after count messages, close with 1000"),
	LCP_OPT_BOOL(C, hash_payloads, "hash_payloads", "false",
		     "SHA-256 over the payloads sent to each client, logged when the client goes (integrity tests; hashes every byte)"),
	LCP_OPT_BOOL(C, echo, "echo", "false",
		     "an echo server instead of a feed: every message a client sends comes back to it at once, same opcode and payload (echoed), and no ticks are sent (for ws_rtt and round-trip tests)"),
	LCP_OPT_STRING(C, tls_cert, "tls_cert", "\"\"", 0, 4095, LCP_OPT_F_PATH,
		       "serve wss: the certificate chain, a PEM file (with tls_key)"),
	LCP_OPT_STRING(C, tls_key, "tls_key", "\"\"", 0, 4095, LCP_OPT_F_PATH, "serve wss: the private key, a PEM file"),
	LCP_OPT_ENUM(C, tls_min_version, "tls_min_version", "\"1.2\"", fs_tls_versions, 0, "wss: lowest TLS version"),
	LCP_OPT_ENUM(C, tls_max_version, "tls_max_version", "\"1.3\"", fs_tls_versions, 0, "wss: highest TLS version"),
	LCP_OPT_STRING(C, tls_ciphers, "tls_ciphers", "\"\"", 0, 1023, 0,
		       "wss: TLS 1.2 cipher list (OpenSSL syntax; default OpenSSL's)"),
	LCP_OPT_STRING(C, tls_ciphersuites, "tls_ciphersuites", "\"\"", 0, 1023, 0,
		       "wss: TLS 1.3 cipher suites (OpenSSL syntax; default OpenSSL's)"),
	LCP_OPT_BOOL(C, deflate, "deflate", "false",
		     "accept a client's permessage-deflate offer (RFC 7692) and compress every message"),
	LCP_OPT_INT(C, deflate_level, "deflate_level", "-1", -1, 9, 0, "zlib level (-1: zlib's default, 6)"),
	LCP_OPT_UINT(C, deflate_window_bits, "deflate_window_bits", "15", 8, 15, 0,
		     "server_max_window_bits: the largest window our compressor uses"),
	LCP_OPT_BOOL(C, deflate_no_context_takeover, "deflate_no_context_takeover", "false",
		     "server_no_context_takeover: compress every message on its own"),
	LCP_OPT_ENUM(C, venue, "venue", "\"lcpipe\"", fs_venue_names, 0,
		     "message shapes: lcpipe (the ticks above) or a venue's public feed: binance, coinbase, kraken, okx, bybit, deribit (doc/websocket.md)"),
	LCP_OPT_UINT(C, gap_every, "gap_every", "0", 0, 1000000, 0,
		     "skip an update id before message N+1, 2N+1, ... of each symbol to each client (gaps_injected; 0: never)"),
	LCP_OPT_UINT(C, heartbeat_every, "heartbeat_every", "100", 0, 1000000, 0,
		     "venues with heartbeats (coinbase, kraken, deribit): one after every Nth data message to a client (venue_ctl_msgs; 0: never)"),
	LCP_OPT_BOOL(C, prerender, "prerender", "false",
		     "replay: render each client's whole stream once at init (count > 0 messages, at most 1 GiB of frames) as B12's feed does, {\"s\":\"SYM00042\",\"n\":17,\"p\":\"101.25\",\"q\":300,\"x\":\"aa…\"} padded to exactly the drawn size (below 50 bytes: the bare tick), symbols round robin, and send every client that buffer by copies (batch then counts SEND mbufs of whole frames); not with TLS, deflate, a venue, fragment_every, gap_every, rate, ping_interval_ms or hash_payloads"),
	LCP_OPT_END,
};
#undef C

enum { FC_FREE = 0, FC_TLS, FC_HANDSHAKE, FC_STREAM, FC_CLOSING };

#define FS_MAX_SIZES 16
#define FS_PR_MAX (1ull << 30) /* prerender: bytes of frames, at most */

/* prerender: whole frames, together at most a SEND mbuf's room (or one larger frame) */
struct fs_pr_step {
	uint32_t len;     /* frame bytes */
	uint32_t msgs;    /* frames */
	uint32_t payload; /* payload bytes */
};

struct fs_ctx;

struct fs_client {
	struct fs_ctx *x;
	uint8_t state;
	bool frag_pending_ping;
	uint32_t conn;
	uint32_t rx_off;      /* where the client's next DATA must start in its stream */
	bool tx_full;         /* tcp holds our SENDs (SEND_FULL): no ticks until SEND_ROOM */
	struct stk_ws_hs *hs;
	struct stk_wss ws;    /* the WebSocket session, after the upgrade */
	uint64_t *seq;      /* per symbol */
	uint64_t sent;
	uint64_t next_send; /* tsc (rate limit) */
	uint64_t next_ping;
	uint64_t pr_i, pr_off; /* prerender: next step and its offset in pr_buf */
	struct rte_mbuf *cur; /* SEND mbuf being filled */
	struct stk_tls *t;    /* wss */
	uint8_t *pt;          /* wss: plaintext staged for the next record */
	size_t pt_n;
	EVP_MD_CTX *sha;      /* hash_payloads: SHA-256 of the payloads sent */
	uint64_t sha_bytes;
};

struct fs_ctx {
	struct lcp_stage *st;
	struct rte_mempool *pkt;  /* commands */
	struct rte_mempool *send; /* SEND mbufs (backpressure) */
	struct fs_client *cl;
	unsigned max_clients;
	uint8_t *pr_buf;              /* prerender: the stream's frames */
	struct fs_pr_step *pr_step;   /* ... cut into steps of whole frames */
	uint64_t pr_n;                /* steps */
	struct fs_conf c;
	unsigned n_sizes;
	uint32_t size[FS_MAX_SIZES], cum[FS_MAX_SIZES], total_w;
	uint64_t rng;
	uint64_t hz, ns0, tsc0, per_msg; /* per_msg: tsc between messages at rate */
	uint64_t ping_tsc;
	unsigned seq_words; /* per (client, symbol): 1, FS_VENUE_WORDS in venue modes */
	bool listening;
	struct stk_tls_ctx *tls; /* wss */
	struct stk_ws_pmd pmd;   /* our permessage-deflate settings */
	struct stk_wss_stats wss, wss_pub; /* the sessions' counts; published (fs_publish) */
	struct lcp_obuf tx; /* commands and bytes to tcp */
	char pad[65536];
};

static inline uint64_t
fs_rand(struct fs_ctx *x)
{
	/* xorshift64*: the mix and prices only need to be reproducible */
	x->rng ^= x->rng >> 12;
	x->rng ^= x->rng << 25;
	x->rng ^= x->rng >> 27;
	return x->rng * 0x2545f4914f6cdd1dull;
}

static void
fs_flush(struct fs_ctx *x)
{
	lcp_obuf_flush(x->st, &x->tx);
}

static void
fs_tx(struct fs_ctx *x, struct rte_mbuf *m)
{
	lcp_obuf_put(x->st, &x->tx, m);
}

/* the end of a poll's messages to client k (rendered or replayed): the SEND
 * being filled goes out, and msgs / msg_bytes count them once */
static void
fs_burst_end(struct fs_ctx *x, struct fs_client *k, uint64_t msgs, uint64_t bytes)
{
	if (k->cur != NULL) {
		fs_tx(x, k->cur);
		k->cur = NULL;
	}
	if (msgs) {
		lcp_count(x->st, FS_C_MSGS, msgs);
		lcp_count(x->st, FS_C_MSG_BYTES, bytes);
	}
}

static struct rte_mbuf *
fs_mbuf(struct fs_ctx *x, struct rte_mempool *mp, uint32_t conn, unsigned cmd)
{
	RTE_SET_USED(x);
	return lcp_stream_mbuf(mp, cmd, conn, 0);
}

static void
fs_cmd(struct fs_ctx *x, uint32_t conn, unsigned cmd)
{
	struct rte_mbuf *m = fs_mbuf(x, x->pkt, conn, cmd);

	if (m == NULL) {
		lcp_count(x->st, FS_C_DROP_NO_MBUF, 1);
		return;
	}
	fs_tx(x, m);
}

/* FIN on the client's connection, after close_notify when TLS is up */
static void
fs_close(struct fs_ctx *x, struct fs_client *k)
{
	if (k->t != NULL && stk_tls_is_open(k->t)) {
		if (k->pt_n == 0 || stk_tls_write(k->t, k->pt, k->pt_n) == 0)
			stk_tls_close(k->t);
		k->pt_n = 0;
	}
	fs_cmd(x, k->conn, LCP_STREAM_CMD_CLOSE);
}

/* append bytes to the client's TCP stream; false when the send pool ran dry
 * (what was appended stays appended: the caller must not care, see below) */
static bool
fs_put_raw(struct fs_ctx *x, struct fs_client *k, const void *src, size_t n)
{
	const uint8_t *p = src;

	while (n > 0) {
		size_t room;

		if (k->cur == NULL) {
			k->cur = fs_mbuf(x, x->send, k->conn, LCP_STREAM_CMD_SEND);
			if (k->cur == NULL)
				return false;
		}
		room = rte_pktmbuf_tailroom(k->cur);
		if (room == 0) {
			fs_tx(x, k->cur);
			k->cur = NULL;
			continue;
		}
		if (room > n)
			room = n;
		memcpy(rte_pktmbuf_append(k->cur, (uint16_t)room), p, room);
		p += room;
		n -= room;
	}
	return true;
}

static void fs_tls_failed(struct fs_ctx *x, struct fs_client *k);

/* wss: encrypt the staged plaintext */
static bool
fs_pt_flush(struct fs_ctx *x, struct fs_client *k)
{
	if (k->pt_n == 0)
		return true;
	if (stk_tls_write(k->t, k->pt, k->pt_n) != 0) {
		k->pt_n = 0;
		fs_tls_failed(x, k);
		return false;
	}
	k->pt_n = 0;
	return true;
}

/* append bytes to the client's WebSocket stream: to TCP, or staged for TLS */
static bool
fs_put(struct fs_ctx *x, struct fs_client *k, const void *src, size_t n)
{
	const uint8_t *p = src;

	if (k->t == NULL)
		return fs_put_raw(x, k, src, n);
	while (n > 0) {
		size_t room = FS_PT_MAX - k->pt_n;

		if (room == 0) {
			if (!fs_pt_flush(x, k))
				return false;
			continue;
		}
		if (room > n)
			room = n;
		memcpy(k->pt + k->pt_n, p, room);
		k->pt_n += room;
		p += room;
		n -= room;
	}
	return true;
}

static int
fs_tls_tx(void *user, const uint8_t *p, size_t n)
{
	struct fs_client *k = user;

	if (!fs_put_raw(k->x, k, p, n))
		return -1;
	/* a record's last mbuf goes out with it: records are whole already */
	if (k->cur != NULL) {
		fs_tx(k->x, k->cur);
		k->cur = NULL;
	}
	return 0;
}

static const struct stk_tls_ops fs_tls_ops = { .tx = fs_tls_tx };

/* bytes that must go out whole (handshake, control): from the command pool,
 * or with TLS in a record of their own, sent now */
static void
fs_put_ctl(struct fs_ctx *x, struct fs_client *k, const void *src, size_t n)
{
	if (k->t != NULL) {
		if (fs_put(x, k, src, n))
			fs_pt_flush(x, k);
		return;
	}
	if (k->cur != NULL) {
		fs_tx(x, k->cur);
		k->cur = NULL;
	}
	/* every mbuf first: a shortage sends nothing rather than part of a frame
	 * (a torn stream the client could only fail on) */
	{
		struct rte_mbuf *ms[8];
		size_t room = (size_t)(rte_pktmbuf_data_room_size(x->pkt) - RTE_PKTMBUF_HEADROOM);
		unsigned cnt = (unsigned)((n + room - 1) / room);

		if (cnt > RTE_DIM(ms) || rte_pktmbuf_alloc_bulk(x->pkt, ms, cnt) != 0) {
			lcp_count(x->st, FS_C_DROP_NO_MBUF, 1);
			return;
		}
		for (unsigned i = 0; i < cnt; i++) {
			size_t q = n < room ? n : room;

			lcp_mbuf_set_rx_tsc(ms[i], 0);
			*lcp_stream_meta(ms[i]) = (struct lcp_stream_meta){ .conn = k->conn, .ev = LCP_STREAM_CMD_SEND };
			memcpy(rte_pktmbuf_append(ms[i], (uint16_t)q), src, q);
			fs_tx(x, ms[i]);
			src = (const uint8_t *)src + q;
			n -= q;
		}
	}
}

static char *
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

/* one tick of about `size` bytes into out; returns its length */
static size_t
fs_tick(struct fs_ctx *x, struct fs_client *k, char *out, uint32_t size)
{
	uint32_t sym = (uint32_t)(fs_rand(x) % x->c.symbols);
	uint64_t n = ++k->seq[sym], r = fs_rand(x);
	uint64_t ts = x->ns0 + (uint64_t)((double)(rte_rdtsc() - x->tsc0) * 1e9 / (double)x->hz);
	char *p = out;
	uint32_t cents = 10000 + (uint32_t)(r % 1000);

	if (unlikely(x->c.gap_every != 0)) { /* n counts messages; skip one id per gap_every */
		if (n > 1 && (n - 1) % x->c.gap_every == 0)
			lcp_count(x->st, FS_C_GAPS_INJECTED, 1);
		n += (n - 1) / x->c.gap_every;
	}

	memcpy(p, "{\"s\":\"SYM", 9);
	p += 9;
	for (int d = 10000; d > 0; d /= 10)
		*p++ = (char)('0' + sym / (uint32_t)d % 10);
	memcpy(p, "\",\"n\":", 6);
	p += 6;
	p = u64dec(p, n);
	memcpy(p, ",\"p\":\"", 6);
	p += 6;
	p = u64dec(p, cents / 100);
	*p++ = '.';
	*p++ = (char)('0' + cents / 10 % 10);
	*p++ = (char)('0' + cents % 10);
	memcpy(p, "\",\"q\":", 6);
	p += 6;
	p = u64dec(p, 100 * (1 + (r >> 32) % 50));
	memcpy(p, ",\"t\":", 5);
	p += 5;
	p = u64dec(p, ts);
	if ((size_t)(p - out) + 9 < size) {
		size_t pad = size - (size_t)(p - out) - 8;

		memcpy(p, ",\"x\":\"", 6);
		p += 6;
		memcpy(p, x->pad, pad);
		p += pad;
		*p++ = '"';
	}
	*p++ = '}';
	return (size_t)(p - out);
}

static uint32_t
fs_size(struct fs_ctx *x)
{
	uint32_t r = (uint32_t)(fs_rand(x) % x->total_w);

	for (unsigned i = 0; i < x->n_sizes; i++)
		if (r < x->cum[i])
			return x->size[i];
	return x->size[x->n_sizes - 1];
}

/* what is staged for the client out now: the TLS record written, the SEND
 * mbuf being filled sent */
static void
fs_push(struct fs_ctx *x, struct fs_client *k)
{
	if (k->t != NULL && !fs_pt_flush(x, k))
		return;
	if (k->cur != NULL) {
		fs_tx(x, k->cur);
		k->cur = NULL;
	}
}

/* ops.tx of the sessions: a data frame appended to the client's stream (sent
 * with the batch), a control frame out at once (fs_put_ctl) */
static int
fs_wss_tx(void *user, const struct stk_wss_frame *f)
{
	struct fs_client *k = user;
	struct fs_ctx *x = k->x;

	if (f->control) {
		uint8_t b[STK_WS_MAX_HDR + STK_WS_MAX_CONTROL];

		memcpy(b, f->hdr, f->hlen);
		memcpy(b + f->hlen, f->payload, f->len);
		fs_put_ctl(x, k, b, f->hlen + f->len);
		return k->state == FC_FREE ? -1 : 0;
	}
	if (!fs_put(x, k, f->hdr, f->hlen) || !fs_put(x, k, f->payload, f->len))
		return -1;
	return 0;
}

/* ops.buf_get / buf_put: a client's messages that span segments (a few
 * subscriptions) are assembled on the heap */
static int
fs_buf_get(void *user, struct stk_wss_buf *b, size_t need, bool grow)
{
	RTE_SET_USED(user);
	RTE_SET_USED(grow);
	b->data = malloc(need);
	b->cap = need;
	b->kind = 0;
	return b->data != NULL ? 0 : -1;
}

static void
fs_buf_put(void *user, struct stk_wss_buf *b)
{
	RTE_SET_USED(user);
	free(b->data);
}

static const struct stk_wss_ops fs_wss_ops = { .tx = fs_wss_tx, .buf_get = fs_buf_get, .buf_put = fs_buf_put };

/* the sessions' counts into the stage's counters (counter + 1; 0: none) */
static const uint8_t fs_wss_ctr[STK_WSS_S__N] = {
	[STK_WSS_S_pings_rx] = FS_C_PINGS_RX + 1,   [STK_WSS_S_pongs_tx] = FS_C_PONGS_TX + 1,
	[STK_WSS_S_pings_tx] = FS_C_PINGS_TX + 1,   [STK_WSS_S_pongs_rx] = FS_C_PONGS_RX + 1,
	[STK_WSS_S_closes_rx] = FS_C_CLOSES_RX + 1, [STK_WSS_S_z_msgs_tx] = FS_C_MSGS_DEFLATED + 1,
	[STK_WSS_S_pings_after_close] = FS_C_PINGS_AFTER_CLOSE + 1,
	[STK_WSS_S_z_bytes_tx] = FS_C_DEFLATED_BYTES + 1,
};

static void
fs_publish(struct fs_ctx *x)
{
	uint64_t d[STK_WSS_S__N];

	stk_wss_stats_moved(&x->wss, &x->wss_pub, d);
	for (unsigned i = 0; i < STK_WSS_S__N; i++)
		if (d[i] != 0 && fs_wss_ctr[i] != 0)
			lcp_count(x->st, fs_wss_ctr[i] - 1u, d[i]);
}

/* a ping carrying the TSC */
static void
fs_ping(struct fs_client *k)
{
	uint64_t now = rte_rdtsc();

	stk_wss_ping(&k->ws, &now, sizeof(now));
}

/* hash_payloads: the message's payload into the client's SHA-256 (libcrypto) */
static void
fs_hash(struct fs_ctx *x, struct fs_client *k, const void *p, size_t len)
{
	if (k->sha == NULL) {
		k->sha = EVP_MD_CTX_new();
		if (k->sha == NULL || EVP_DigestInit_ex(k->sha, EVP_sha256(), NULL) != 1) {
			lcp_log(x->st, LCP_LOG_ERR, "client 0x%x: cannot start a SHA-256", k->conn);
			EVP_MD_CTX_free(k->sha);
			k->sha = NULL;
			return;
		}
		k->sha_bytes = 0;
	}
	EVP_DigestUpdate(k->sha, p, len);
	k->sha_bytes += len;
}

static uint64_t
fs_now_ns(const struct fs_ctx *x)
{
	return x->ns0 + (uint64_t)((double)(rte_rdtsc() - x->tsc0) * 1e9 / (double)x->hz);
}

/* venue modes: a data message drawn like fs_tick's (symbol, then 64 random bits) */
static size_t
fs_venue_tick(struct fs_ctx *x, struct fs_client *k, char *out, uint32_t size, uint32_t *sym)
{
	struct fs_venue_in in = { .size = size, .gap_every = x->c.gap_every };
	uint64_t gaps = 0;
	size_t n;

	in.sym = (uint32_t)(fs_rand(x) % x->c.symbols);
	in.r = fs_rand(x);
	in.ts_ns = fs_now_ns(x);
	n = fs_venue_data(x->c.venue, k->seq + (size_t)in.sym * FS_VENUE_WORDS, &in, out, &gaps);
	if (gaps != 0)
		lcp_count(x->st, FS_C_GAPS_INJECTED, gaps);
	*sym = in.sym;
	return n;
}

/* venue modes: one of the venue's non-data messages (n <= FS_VENUE_CTL_MAX),
 * a text frame that goes out whole, now */
static void
fs_venue_ctl(struct fs_ctx *x, struct fs_client *k, const char *p, size_t n)
{
	if (n == 0 || n > FS_VENUE_CTL_MAX)
		return;
	if (unlikely(x->c.hash_payloads))
		fs_hash(x, k, p, n);
	if (stk_wss_send(&k->ws, STK_WS_OP_TEXT, p, n) != 0)
		return;
	fs_push(x, k);
	lcp_count(x->st, FS_C_VENUE_CTL_MSGS, 1);
}

static void fs_drop(struct fs_ctx *x, struct fs_client *k);

/* prerender: the next steps of the buffer to one client, at most batch of
 * them (each at most a SEND mbuf of whole frames): a poll ends on a frame
 * boundary. Returns messages sent. */
static unsigned
fs_stream_pr(struct fs_ctx *x, struct fs_client *k)
{
	uint64_t msgs = 0, bytes = 0;

	for (unsigned n = 0; n < x->c.batch; n++) {
		const struct fs_pr_step *s;

		if (k->pr_i == x->pr_n) {
			if (x->c.close_when_done) {
				stk_wss_close(&k->ws, STK_WS_CLOSE_NORMAL, NULL);
				lcp_count(x->st, FS_C_CLOSES, 1);
				k->state = FC_CLOSING;
			}
			break;
		}
		/* room for the largest step (a 64 KiB frame: 33 mbufs), so none is torn */
		if (rte_mempool_avail_count(x->send) < 40) {
			lcp_count(x->st, FS_C_SEND_POOL_EMPTY, 1);
			break;
		}
		s = &x->pr_step[k->pr_i];
		if (!fs_put_raw(x, k, x->pr_buf + k->pr_off, s->len)) {
			/* cannot happen with the reserve above; a torn stream must not go on */
			lcp_count(x->st, FS_C_DROP_NO_MBUF, 1);
			lcp_log(x->st, LCP_LOG_ERR, "client 0x%x: send pool empty inside a frame: aborting", k->conn);
			fs_cmd(x, k->conn, LCP_STREAM_CMD_ABORT);
			fs_drop(x, k);
			break;
		}
		k->pr_i++;
		k->pr_off += s->len;
		k->sent += s->msgs;
		msgs += s->msgs;
		bytes += s->payload;
	}
	fs_burst_end(x, k, msgs, bytes);
	return (unsigned)msgs;
}

/* stream to one client; returns messages sent */
static unsigned
fs_stream(struct fs_ctx *x, struct fs_client *k, uint64_t now)
{
	char buf[70000];
	unsigned n = 0;
	uint64_t bytes = 0;

	if (x->pr_buf != NULL)
		return fs_stream_pr(x, k);

	if (x->ping_tsc && now >= k->next_ping) {
		fs_ping(k);
		k->next_ping = now + x->ping_tsc;
	}
	while (n < x->c.batch) {
		uint32_t sym = 0;
		size_t len;

		if (x->c.count && k->sent >= x->c.count) {
			if (x->c.close_when_done) {
				stk_wss_close(&k->ws, STK_WS_CLOSE_NORMAL, NULL);
				lcp_count(x->st, FS_C_CLOSES, 1);
				k->state = FC_CLOSING;
			}
			break;
		}
		if (x->per_msg) {
			if (now < k->next_send)
				break;
			k->next_send += x->per_msg;
			if (k->next_send + 1000 * x->per_msg < now)
				k->next_send = now; /* do not burst to catch up after a stall */
		}
		/* need room for the largest message: stop while the pool is low */
		if (rte_mempool_avail_count(x->send) < 40) {
			lcp_count(x->st, FS_C_SEND_POOL_EMPTY, 1);
			break;
		}
		if (likely(x->c.venue == FS_VENUE_LCPIPE))
			len = fs_tick(x, k, buf, fs_size(x));
		else
			len = fs_venue_tick(x, k, buf, fs_size(x), &sym);
		if (unlikely(x->c.hash_payloads))
			fs_hash(x, k, buf, len);
		if (x->c.fragment_every && (k->sent + 1) % x->c.fragment_every == 0) {
			uint64_t tsc = rte_rdtsc();

			/* with pings on, one inside the message */
			stk_wss_send_frag(&k->ws, STK_WS_OP_TEXT, buf, len, x->c.fragments,
					  x->ping_tsc ? &tsc : NULL, sizeof(tsc));
			lcp_count(x->st, FS_C_FRAGMENTED, 1);
		} else {
			stk_wss_send(&k->ws, STK_WS_OP_TEXT, buf, len);
		}
		if (unlikely(k->state == FC_FREE))
			return n; /* TLS failed: the client is gone */
		k->sent++;
		bytes += len;
		n++;
		if (x->c.venue != FS_VENUE_LCPIPE && x->c.heartbeat_every != 0 &&
		    k->sent % x->c.heartbeat_every == 0) {
			char hb[FS_VENUE_CTL_MAX];

			fs_venue_ctl(x, k, hb,
				     fs_venue_heartbeat(x->c.venue, sym, k->seq + (size_t)sym * FS_VENUE_WORDS,
							fs_now_ns(x), hb, sizeof(hb)));
			if (unlikely(k->state == FC_FREE))
				return n; /* TLS failed */
		}
	}
	if (k->t != NULL && !fs_pt_flush(x, k))
		return n;
	fs_burst_end(x, k, n, bytes);
	return n;
}

static struct fs_client *
fs_find(struct fs_ctx *x, uint32_t conn)
{
	for (unsigned i = 0; i < x->max_clients; i++)
		if (x->cl[i].state != FC_FREE && x->cl[i].conn == conn)
			return &x->cl[i];
	return NULL;
}

static void
fs_drop(struct fs_ctx *x, struct fs_client *k)
{
	if (k->sha != NULL) {
		unsigned char md[32];
		char hex[65];

		EVP_DigestFinal_ex(k->sha, md, NULL);
		for (unsigned i = 0; i < 32; i++)
			snprintf(hex + 2 * i, 3, "%02x", md[i]);
		lcp_log(x->st, LCP_LOG_INFO, "client 0x%x: %" PRIu64 " messages, %" PRIu64 " payload bytes, sha256 %s",
			k->conn, k->sent, k->sha_bytes, hex);
		EVP_MD_CTX_free(k->sha);
		k->sha = NULL;
	}
	if (k->cur != NULL)
		rte_pktmbuf_free(k->cur);
	k->cur = NULL;
	rte_free(k->hs);
	k->hs = NULL;
	stk_tls_free(k->t);
	k->t = NULL;
	k->pt_n = 0;
	stk_wss_fini(&k->ws);
	k->state = FC_FREE;
}

/* the client's frames: its messages (a venue answers subscriptions), its
 * close (answered by the session: the client is dropped), a protocol error
 * (the session sent the close with the code) */
static void
fs_client_frames(struct fs_ctx *x, struct fs_client *k, uint8_t *p, uint8_t *end)
{
	struct stk_wss_msg w;

	for (;;) {
		switch (stk_wss_recv(&k->ws, &p, end, &w)) {
		case STK_WSS_NEED_MORE:
			return;
		case STK_WSS_MSG:
			lcp_count(x->st, FS_C_CLIENT_MSGS, 1);
			if (x->c.echo && stk_wss_send(&k->ws, w.opcode, w.data, w.len) == 0) {
				fs_push(x, k);
				lcp_count(x->st, FS_C_ECHOED, 1);
			}
			if (x->c.venue != FS_VENUE_LCPIPE) {
				char r[FS_VENUE_CTL_MAX];

				fs_venue_ctl(x, k, r, fs_venue_reply(x->c.venue, w.data, w.len, fs_now_ns(x), r,
								     sizeof(r)));
			}
			if (w.how != STK_WSS_IN_CHUNK)
				free(w.buf.data);
			if (k->state == FC_FREE)
				return; /* TLS failed */
			continue;
		case STK_WSS_PING:
		case STK_WSS_PONG:
			continue;
		case STK_WSS_CLOSE:
			lcp_log(x->st, LCP_LOG_INFO, "client 0x%x: close %u from the client%s", k->conn, w.close_code,
				w.answer ? " (the answer to ours)" : "");
			fs_close(x, k);
			fs_drop(x, k);
			return;
		case STK_WSS_ERROR:
			lcp_count(x->st, FS_C_FAIL_PROTOCOL, 1);
			lcp_log(x->st, LCP_LOG_WARNING, "client 0x%x: close %u: %s", k->conn, w.close_code, w.reason);
			fs_close(x, k);
			fs_drop(x, k);
			return;
		default: /* GONE: TLS failed, the client was dropped */
			return;
		}
	}
}

/* the client's plaintext: the upgrade request, then its frames */
static void
fs_on_plain(struct fs_ctx *x, struct fs_client *k, uint8_t *p, uint8_t *end)
{
	if (k->state == FC_HANDSHAKE) {
		size_t used = 0;
		int rc = stk_ws_server_request(k->hs, p, (size_t)(end - p), &used);
		struct stk_wss_conf wc;
		char resp[512];
		int rn;

		if (rc < 0) {
			lcp_count(x->st, FS_C_FAIL_HANDSHAKE, 1);
			lcp_log(x->st, LCP_LOG_WARNING, "client 0x%x: bad upgrade request: %s", k->conn, k->hs->err);
			rn = stk_ws_server_reject(resp, sizeof(resp), k->hs->err);
			if (rn > 0)
				fs_put_ctl(x, k, resp, (size_t)rn);
			fs_close(x, k);
			fs_drop(x, k);
			return;
		}
		if (rc == 0)
			return;
		rn = stk_ws_server_response(k->hs, resp, sizeof(resp), NULL);
		fs_put_ctl(x, k, resp, (size_t)rn);
		if (k->state == FC_FREE)
			return; /* TLS failed sending it */
		wc = (struct stk_wss_conf){ .server = true, .max_msg = 1 << 20, .check_utf8 = true, .pmd = &k->hs->pmd,
					    .compress = true, .deflate_level = x->c.deflate_level, .ops = &fs_wss_ops,
					    .user = k, .stats = &x->wss };
		if (stk_wss_init(&k->ws, &wc) != 0) {
			lcp_count(x->st, FS_C_FAIL_HANDSHAKE, 1);
			lcp_log(x->st, LCP_LOG_ERR, "client 0x%x: no memory for the session's (de)compressor", k->conn);
			fs_close(x, k);
			fs_drop(x, k);
			return;
		}
		if (k->hs->pmd.on)
			lcp_count(x->st, FS_C_DEFLATE_CLIENTS, 1);
		rte_free(k->hs);
		k->hs = NULL;
		k->state = FC_STREAM;
		k->next_send = rte_rdtsc();
		k->next_ping = k->next_send + x->ping_tsc;
		lcp_count(x->st, FS_C_HANDSHAKES, 1);
		p += used;
		if (x->c.venue != FS_VENUE_LCPIPE) {
			char h[FS_VENUE_CTL_MAX];

			fs_venue_ctl(x, k, h, fs_venue_hello(x->c.venue, fs_now_ns(x), h, sizeof(h)));
		}
	}
	if (p < end && k->state != FC_FREE)
		fs_client_frames(x, k, p, end);
}

static void
fs_tls_failed(struct fs_ctx *x, struct fs_client *k)
{
	enum stk_tls_fail f = stk_tls_failure(k->t);

	lcp_count(x->st, f == STK_TLS_FAIL_ALERT ? FS_C_TLS_FAIL_ALERT
			 : f == STK_TLS_FAIL_TX  ? FS_C_TLS_FAIL_TX
						  : FS_C_TLS_FAIL_PROTOCOL,
		  1);
	lcp_log(x->st, LCP_LOG_WARNING, "client 0x%x: TLS %s: %s", k->conn, stk_tls_fail_name(f), stk_tls_error(k->t));
	fs_cmd(x, k->conn, f == STK_TLS_FAIL_TX ? LCP_STREAM_CMD_ABORT : LCP_STREAM_CMD_CLOSE);
	fs_drop(x, k);
}

/* wss: a segment of ciphertext; plaintext read into a buffer of this lcore's
 * stack (feedsim parses the client's few bytes there) */
static void
fs_tls_data(struct fs_ctx *x, struct fs_client *k, struct rte_mbuf *m)
{
	struct stk_tls *t = k->t;
	uint8_t buf[4096];
	int r = stk_tls_input(t, rte_pktmbuf_mtod(m, const uint8_t *), m->data_len);
	ssize_t n;

	if (r == STK_TLS_FAILED) {
		fs_tls_failed(x, k);
		return;
	}
	if (r == STK_TLS_OPENED) {
		k->state = FC_HANDSHAKE;
		lcp_count(x->st, FS_C_TLS_HANDSHAKES, 1);
		if (stk_tls_resumed(t))
			lcp_count(x->st, FS_C_TLS_RESUMED, 1);
	}
	while ((n = stk_tls_read(t, buf, sizeof(buf))) > 0) {
		fs_on_plain(x, k, buf, buf + n);
		if (k->t != t)
			return; /* dropped */
	}
	if (n == STK_TLS_CLOSED) {
		fs_close(x, k);
		fs_drop(x, k);
	} else if (n == STK_TLS_FAILED) {
		fs_tls_failed(x, k);
	}
}

static void
fs_process(struct lcp_stage *st, void *ctx, unsigned port, void **objs, unsigned n)
{
	struct fs_ctx *x = ctx;

	for (unsigned i = 0; i < n; i++) {
		struct rte_mbuf *m = objs[i];
		struct lcp_stream_meta *meta = lcp_stream_meta(m);
		struct fs_client *k = fs_find(x, meta->conn);

		switch (meta->ev) {
		case LCP_STREAM_EV_ACCEPTED: {
			struct fs_client *f = NULL;

			for (unsigned j = 0; j < x->max_clients && f == NULL; j++)
				if (x->cl[j].state == FC_FREE)
					f = &x->cl[j];
			if (f == NULL) {
				lcp_count(st, FS_C_DROP_TOO_MANY_CLIENTS, 1);
				fs_cmd(x, meta->conn, LCP_STREAM_CMD_ABORT);
				break;
			}
			memset(f->seq, 0, (size_t)x->c.symbols * x->seq_words * sizeof(f->seq[0]));
			f->hs = rte_zmalloc("fs_hs", sizeof(*f->hs), 0);
			if (f->hs == NULL) {
				fs_cmd(x, meta->conn, LCP_STREAM_CMD_ABORT);
				break;
			}
			stk_ws_server_init(f->hs, x->c.deflate ? &x->pmd : NULL);
			f->conn = meta->conn;
			f->rx_off = 0;
			f->tx_full = false;
			f->state = FC_HANDSHAKE;
			f->sent = 0;
			f->pr_i = 0;
			f->pr_off = 0;
			f->cur = NULL;
			f->pt_n = 0;
			lcp_count(st, FS_C_CLIENTS, 1);
			if (x->tls != NULL) {
				f->t = stk_tls_new(x->tls, &fs_tls_ops, f, NULL, NULL);
				if (f->t == NULL) {
					lcp_log(st, LCP_LOG_ERR, "client 0x%x: no memory for a TLS session", f->conn);
					fs_cmd(x, meta->conn, LCP_STREAM_CMD_ABORT);
					fs_drop(x, f);
					break;
				}
				f->state = FC_TLS;
			}
			break;
		}
		case LCP_STREAM_EV_DATA:
			if (k != NULL && unlikely(meta->off != k->rx_off)) {
				/* stream bytes lost between tcp and us: nothing after
				 * the hole can be parsed */
				lcp_count(st, FS_C_FAIL_STREAM_GAP, 1);
				lcp_log(st, LCP_LOG_WARNING, "client 0x%x: %u byte(s) of its stream lost before us: closing",
					k->conn, meta->off - k->rx_off);
				fs_close(x, k);
				fs_drop(x, k);
				break;
			}
			if (k != NULL)
				k->rx_off += rte_pktmbuf_pkt_len(m);
			if (k == NULL)
				lcp_count(st, FS_C_EVENTS_OLD_CONN, 1);
			else if (k->t != NULL)
				fs_tls_data(x, k, m);
			else
				fs_on_plain(x, k, rte_pktmbuf_mtod(m, uint8_t *), rte_pktmbuf_mtod(m, uint8_t *) + m->data_len);
			break;
		case LCP_STREAM_EV_SEND_FULL:
			/* the client reads slower than we send: hold its ticks */
			if (k != NULL) {
				k->tx_full = true;
				lcp_count(st, FS_C_SEND_FULL, 1);
			}
			break;
		case LCP_STREAM_EV_SEND_ROOM:
			if (k != NULL)
				k->tx_full = false;
			break;
		case LCP_STREAM_EV_PEER_CLOSED:
			if (k != NULL) {
				fs_close(x, k);
				fs_drop(x, k);
			}
			break;
		case LCP_STREAM_EV_CLOSED:
		case LCP_STREAM_EV_RESET:
		case LCP_STREAM_EV_TIMEOUT:
			if (k != NULL)
				fs_drop(x, k);
			break;
		case LCP_STREAM_EV_ERROR:
			if (meta->conn == 0 || k == NULL)
				lcp_log(st, LCP_LOG_ERR, "tcp refused a command: %s", strerror(meta->reason));
			break;
		default:
			break;
		}
		rte_pktmbuf_free(m);
	}
	fs_flush(x);
}

static unsigned
fs_poll(struct lcp_stage *st, void *ctx)
{
	struct fs_ctx *x = ctx;
	unsigned work = 0;
	uint64_t now;

	if (unlikely(!x->listening)) {
		struct rte_mbuf *m = fs_mbuf(x, x->pkt, 0, LCP_STREAM_CMD_LISTEN);

		if (m == NULL)
			return 0;
		lcp_stream_meta(m)->port = (uint16_t)x->c.listen;
		fs_tx(x, m);
		x->listening = true;
		fs_flush(x);
		return 1;
	}
	if (lcp_stage_stopping(st))
		return 0;
	now = rte_rdtsc();
	for (unsigned i = 0; i < x->max_clients && !x->c.echo; i++) /* an echo server sends no ticks */
		if (x->cl[i].state == FC_STREAM && !x->cl[i].tx_full)
			work += fs_stream(x, &x->cl[i], now);
	fs_publish(x);
	fs_flush(x);
	return work;
}

/* the shutdown (engine.linger), on every turn: streaming clients get close
 * 1001 (and are dropped when their close frame answers it, fs_client_frames),
 * clients in their TLS or upgrade handshake are closed; returns the clients
 * still there */
static unsigned
fs_linger(struct lcp_stage *st, void *ctx, bool last)
{
	struct fs_ctx *x = ctx;
	unsigned n = 0;

	RTE_SET_USED(last);
	for (unsigned i = 0; i < x->max_clients; i++) {
		struct fs_client *k = &x->cl[i];

		if (k->state == FC_STREAM) {
			stk_wss_close(&k->ws, STK_WS_CLOSE_GOING_AWAY, NULL);
			lcp_count(st, FS_C_CLOSES, 1);
			if (k->state == FC_STREAM) /* not failed by TLS meanwhile */
				k->state = FC_CLOSING;
		} else if (k->state == FC_HANDSHAKE || k->state == FC_TLS) {
			fs_close(x, k);
			fs_drop(x, k);
		}
		n += k->state != FC_FREE;
	}
	fs_publish(x);
	fs_flush(x);
	return n;
}

static int
fs_parse_sizes(const char *s, struct fs_ctx *x, uint32_t *maxp, char *msg, size_t len)
{
	unsigned n = 0;
	uint32_t w = 0, max = 0;

	while (*s) {
		char *e;
		unsigned long sz = strtoul(s, &e, 10), wt;

		if (e == s || *e != ':' || sz < 1 || sz > 65536) {
			snprintf(msg, len, "sizes: expected \"bytes:weight,…\" with bytes 1..65536 at \"%s\"", s);
			return -1;
		}
		s = e + 1;
		wt = strtoul(s, &e, 10);
		if (e == s || (*e != ',' && *e != '\0') || wt == 0 || wt > 1000000 || n == FS_MAX_SIZES) {
			snprintf(msg, len, "sizes: bad weight (1..1000000, at most %d entries) at \"%s\"", FS_MAX_SIZES, s);
			return -1;
		}
		w += (uint32_t)wt;
		if (sz > max)
			max = (uint32_t)sz;
		if (x != NULL) {
			x->size[n] = (uint32_t)sz;
			x->cum[n] = w;
		}
		n++;
		s = *e == ',' ? e + 1 : e;
	}
	if (n == 0) {
		snprintf(msg, len, "sizes: empty");
		return -1;
	}
	if (x != NULL) {
		x->n_sizes = n;
		x->total_w = w;
	}
	if (maxp != NULL)
		*maxp = max;
	return 0;
}

static int
fs_validate(const void *conf, char *msg, size_t msglen)
{
	const struct fs_conf *c = conf;
	uint32_t max;

	if (!c->tls_cert[0] != !c->tls_key[0]) {
		snprintf(msg, msglen, "tls_cert and tls_key go together (wss needs both)");
		return -1;
	}
	if (c->tls_min_version > c->tls_max_version) {
		snprintf(msg, msglen, "tls_min_version %s is above tls_max_version %s",
			 fs_tls_versions[c->tls_min_version], fs_tls_versions[c->tls_max_version]);
		return -1;
	}
	if (fs_parse_sizes(c->sizes, NULL, &max, msg, msglen) < 0)
		return -1;
	if (!c->prerender)
		return 0;
	{
		/* what prerender cannot replay: per-client or per-message work */
		const char *bad = NULL;
		uint64_t frame = max + (max < 126 ? 2u : max < 65536 ? 4u : 10u);

		if (c->tls_cert[0])
			bad = "tls_cert";
		else if (c->deflate)
			bad = "deflate";
		else if (c->venue != FS_VENUE_LCPIPE)
			bad = "venue";
		else if (c->fragment_every != 0)
			bad = "fragment_every";
		else if (c->gap_every != 0)
			bad = "gap_every";
		else if (c->rate != 0)
			bad = "rate";
		else if (c->ping_interval_ms != 0)
			bad = "ping_interval_ms";
		else if (c->hash_payloads)
			bad = "hash_payloads";

		if (bad != NULL) {
			snprintf(msg, msglen, "prerender replays one rendered stream: it does not go with %s", bad);
			return -1;
		}
		if (c->count == 0) {
			snprintf(msg, msglen, "prerender needs count > 0 (the messages rendered at init)");
			return -1;
		}
		if (c->count > FS_PR_MAX / frame) {
			snprintf(msg, msglen,
				 "prerender: count %" PRIu64 " x up to %" PRIu64 " frame bytes (sizes) is above the 1 GiB bound; at most %" PRIu64 " messages",
				 c->count, frame, (uint64_t)(FS_PR_MAX / frame));
			return -1;
		}
	}
	return 0;
}

/* prerender: one tick of b12_feed_server's shape into out, exactly size
 * bytes (the bare tick when size is below it, with "x":"" 50 bytes at n 1);
 * returns its length */
static size_t
fs_pr_tick(char *out, uint32_t sym, uint64_t n, uint32_t size)
{
	static const char mid[] = ",\"p\":\"101.25\",\"q\":300";
	char *p = out;
	size_t l;

	memcpy(p, "{\"s\":\"SYM", 9);
	p += 9;
	for (int d = 10000; d > 0; d /= 10)
		*p++ = (char)('0' + sym / (uint32_t)d % 10);
	memcpy(p, "\",\"n\":", 6);
	p += 6;
	p = u64dec(p, n);
	memcpy(p, mid, sizeof(mid) - 1);
	p += sizeof(mid) - 1;
	l = (size_t)(p - out);
	if (l + 8 <= size) {
		memcpy(p, ",\"x\":\"", 6);
		p += 6;
		memset(p, 'a', size - l - 8);
		p += size - l - 8;
		*p++ = '"';
	}
	*p++ = '}';
	return (size_t)(p - out);
}

/* prerender: the stream of count messages into pr_buf, cut into steps of
 * whole frames of at most room bytes (a larger frame is a step of its own) */
static int
fs_pr_render(struct fs_ctx *x, const struct fs_conf *c, size_t room)
{
	uint32_t max;
	size_t cap, len = 0, steps_cap = 1024;
	struct fs_pr_step *cur;
	char msg[256];
	uint64_t t0 = rte_rdtsc();

	fs_parse_sizes(c->sizes, NULL, &max, msg, sizeof(msg));
	cap = (size_t)c->count * (max + (max < 126 ? 2u : max < 65536 ? 4u : 10u));
	/* plain heap: the buffer may be larger than the EAL's memory; pages
	 * never written (sizes below the largest) are never touched */
	x->pr_buf = malloc(cap);
	x->pr_step = malloc(steps_cap * sizeof(*x->pr_step));
	if (x->pr_buf == NULL || x->pr_step == NULL) {
		lcp_log(x->st, LCP_LOG_ERR, "prerender: no memory for %zu bytes of frames", cap);
		return -ENOMEM;
	}
	x->pr_n = 0;
	cur = NULL;
	for (uint64_t j = 0; j < c->count; j++) {
		uint32_t sym = (uint32_t)(j % c->symbols);
		char tick[70000];
		size_t plen = fs_pr_tick(tick, sym, j / c->symbols + 1, fs_size(x));
		size_t hlen = stk_ws_hdr(x->pr_buf + len, STK_WS_OP_TEXT, true, plen, NULL);
		size_t flen = hlen + plen;

		memcpy(x->pr_buf + len + hlen, tick, plen);
		len += flen;
		if (cur == NULL || cur->len + flen > room) {
			if (x->pr_n == steps_cap) {
				struct fs_pr_step *ns = realloc(x->pr_step, 2 * steps_cap * sizeof(*ns));

				if (ns == NULL) {
					lcp_log(x->st, LCP_LOG_ERR, "prerender: no memory for the steps");
					return -ENOMEM;
				}
				x->pr_step = ns;
				steps_cap *= 2;
			}
			cur = &x->pr_step[x->pr_n++];
			*cur = (struct fs_pr_step){ 0 };
		}
		cur->len += (uint32_t)flen;
		cur->msgs++;
		cur->payload += (uint32_t)plen;
	}
	lcp_log(x->st, LCP_LOG_INFO, "prerender: %" PRIu64 " messages, %zu bytes of frames in %" PRIu64 " steps, rendered in %.2f s",
		c->count, len, x->pr_n, (double)(rte_rdtsc() - t0) / (double)rte_get_tsc_hz());
	return 0;
}

/* wss: the server context and every client's plaintext stage */
static int
fs_tls_init(struct fs_ctx *x, const struct fs_conf *c)
{
	struct stk_tls_conf tc = {
		.server = true,
		.cert_file = c->tls_cert,
		.key_file = c->tls_key,
		.min_version = (uint16_t)(STK_TLS_V12 + c->tls_min_version),
		.max_version = (uint16_t)(STK_TLS_V12 + c->tls_max_version),
		.ciphers = c->tls_ciphers,
		.ciphersuites = c->tls_ciphersuites,
		.resume = true,
		.alpn = true,
	};
	char err[256];

	if (!c->tls_cert[0])
		return 0;
	x->tls = stk_tls_ctx_new(&tc, err, sizeof(err));
	if (x->tls == NULL) {
		lcp_log(x->st, LCP_LOG_ERR, "TLS: %s", err);
		return -EINVAL;
	}
	for (unsigned i = 0; i < x->max_clients; i++) {
		x->cl[i].pt = rte_malloc_socket("feedsim_pt", FS_PT_MAX, 0, lcp_stage_socket(x->st));
		if (x->cl[i].pt == NULL)
			return -ENOMEM;
	}
	return 0;
}

static int
fs_init(struct lcp_stage *st, const void *conf, void **ctx)
{
	const struct fs_conf *c = conf;
	struct fs_ctx *x;
	char name[RTE_MEMPOOL_NAMESIZE], msg[256];
	struct timespec ts;
	int rc = -ENOMEM;

	x = rte_zmalloc_socket("feedsim", sizeof(*x), RTE_CACHE_LINE_SIZE, lcp_stage_socket(st));
	if (x == NULL)
		return -ENOMEM;
	x->st = st;
	lcp_obuf_init(&x->tx, FS_P_TX, 128);
	x->c = *c;
	x->c.sizes = NULL;
	if (fs_parse_sizes(c->sizes, x, NULL, msg, sizeof(msg)) < 0) {
		lcp_log(st, LCP_LOG_ERR, "%s", msg);
		rte_free(x);
		return -EINVAL;
	}
	x->pkt = lcp_stage_pktmbuf_pool(st);
	x->max_clients = c->max_clients;
	x->cl = rte_zmalloc_socket("feedsim_cl", c->max_clients * sizeof(*x->cl), 0, lcp_stage_socket(st));
	if (x->cl == NULL)
		goto nomem;
	x->seq_words = c->venue == FS_VENUE_LCPIPE ? 1 : FS_VENUE_WORDS;
	for (unsigned i = 0; i < c->max_clients; i++) {
		x->cl[i].x = x;
		x->cl[i].seq = rte_zmalloc_socket("feedsim_seq", (size_t)c->symbols * x->seq_words * sizeof(uint64_t),
						  0, lcp_stage_socket(st));
		if (x->cl[i].seq == NULL)
			goto nomem;
	}
	rc = fs_tls_init(x, c);
	if (rc < 0)
		goto fail;
	snprintf(name, sizeof(name), "fss_%.20s", lcp_stage_name(st));
	x->send = rte_pktmbuf_pool_create(name, c->send_mbufs, 0, RTE_MBUF_PRIV_ALIGN, 2048 + RTE_PKTMBUF_HEADROOM,
					  lcp_stage_socket(st));
	if (x->send == NULL) {
		lcp_log(st, LCP_LOG_ERR, "cannot create the send pool (%u mbufs): %s", c->send_mbufs,
			rte_strerror(rte_errno));
		goto fail;
	}
	memset(x->pad, 'a', sizeof(x->pad));
	x->pmd = (struct stk_ws_pmd){ .on = true, .server_max_window_bits = (uint8_t)c->deflate_window_bits,
				      .server_no_context_takeover = c->deflate_no_context_takeover };
	x->rng = c->seed * 0x9e3779b97f4a7c15ull + 1;
	x->hz = rte_get_tsc_hz();
	clock_gettime(CLOCK_REALTIME, &ts);
	x->ns0 = (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
	x->tsc0 = rte_rdtsc();
	x->per_msg = c->rate ? x->hz / c->rate : 0;
	x->ping_tsc = c->ping_interval_ms ? x->hz / 1000 * c->ping_interval_ms : 0;
	if (c->prerender) {
		rc = fs_pr_render(x, c, (size_t)(rte_pktmbuf_data_room_size(x->send) - RTE_PKTMBUF_HEADROOM));
		if (rc < 0)
			goto fail;
	}
	*ctx = x;
	return 0;
nomem:
	rc = -ENOMEM;
fail:
	if (x->cl != NULL)
		for (unsigned i = 0; i < c->max_clients; i++) {
			rte_free(x->cl[i].seq);
			rte_free(x->cl[i].pt);
		}
	stk_tls_ctx_free(x->tls);
	rte_mempool_free(x->send);
	free(x->pr_buf);
	free(x->pr_step);
	rte_free(x->cl);
	rte_free(x);
	return rc;
}

static void
fs_fini(struct lcp_stage *st, void *ctx)
{
	struct fs_ctx *x = ctx;

	for (unsigned i = 0; i < x->max_clients; i++) {
		fs_drop(x, &x->cl[i]);
		rte_free(x->cl[i].seq);
		rte_free(x->cl[i].pt);
	}
	stk_tls_ctx_free(x->tls);
	fs_publish(x);
	for (unsigned i = 0; i < x->tx.n; i++)
		rte_pktmbuf_free(x->tx.objs[i]);
	if (rte_mempool_in_use_count(x->send) != 0)
		lcp_log(st, LCP_LOG_ERR, "%u send mbufs never came back", rte_mempool_in_use_count(x->send));
	rte_mempool_free(x->send);
	free(x->pr_buf);
	free(x->pr_step);
	rte_free(x->cl);
	rte_free(x);
}

static const struct lcp_stage_ops fs_ops = {
	.ports = fs_ports,
	.counters = fs_counters,
	.validate = fs_validate,
	.init = fs_init,
	.poll = fs_poll,
	.process = fs_process,
	.fini = fs_fini,
	.linger = fs_linger,
};

LCP_PLUGIN_EXPORT const struct lcp_plugin lcp_plugin_descriptor = {
	LCP_PLUGIN_HEADER(LCP_KIND_STAGE, "feedsim"),
	.version = "1.0.0",
	.summary = "exchange simulator: WebSocket server (ws or wss) on the tcp stage streaming JSON ticks",
	.options = fs_opts,
	.conf_size = sizeof(struct fs_conf),
	.ops = &fs_ops,
};
