/* SPDX-License-Identifier: BSD-3-Clause
 * feedsim_tx.c — what feedsim sends a client, and the poll that streams it.
 *
 *   fs_put_raw, fs_put   bytes appended to the client's TCP stream (SEND mbufs
 *                        of the send pool), or staged as plaintext for TLS
 *   fs_put_ctl           bytes that go out whole, now (handshake, control)
 *   fs_tick              one lcpipe tick; fs_venue_tick / fs_venue_ctl a
 *                        venue's data and non-data messages (feedsim_venue.c)
 *   fs_wss_ops           the sessions' ops: frames to the stream, the heap
 *                        for a client's assembled messages
 *   fs_stream            one client's messages of a poll: rendered, or the
 *                        prerendered buffer's steps (fs_stream_pr)
 *   fs_poll              LISTEN at first call; then every streaming client
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "feedsim.h"
#include "wss_counts.h"

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

void
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
void
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

const struct stk_tls_ops fs_tls_ops = { .tx = fs_tls_tx };

/* bytes that must go out whole (handshake, control): from the command pool,
 * or with TLS in a record of their own, sent now */
void
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

	p = fs_tick_head(p, sym, n);
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

uint32_t
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
void
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

const struct stk_wss_ops fs_wss_ops = { .tx = fs_wss_tx, .buf_get = fs_buf_get, .buf_put = fs_buf_put };

/* the sessions' counts into the stage's counters (counter + 1; 0: none) */
static const uint8_t fs_wss_ctr[STK_WSS_S__N] = {
	[STK_WSS_S_pings_rx] = FS_C_PINGS_RX + 1,   [STK_WSS_S_pongs_tx] = FS_C_PONGS_TX + 1,
	[STK_WSS_S_pings_tx] = FS_C_PINGS_TX + 1,   [STK_WSS_S_pongs_rx] = FS_C_PONGS_RX + 1,
	[STK_WSS_S_closes_rx] = FS_C_CLOSES_RX + 1, [STK_WSS_S_z_msgs_tx] = FS_C_MSGS_DEFLATED + 1,
	[STK_WSS_S_pings_after_close] = FS_C_PINGS_AFTER_CLOSE + 1,
	[STK_WSS_S_z_bytes_tx] = FS_C_DEFLATED_BYTES + 1,
};

void
fs_publish(struct fs_ctx *x)
{
	wss_counts_publish(x->st, &x->wss, &x->wss_pub, fs_wss_ctr);
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
void
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

unsigned
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
