/* SPDX-License-Identifier: BSD-3-Clause
 * feedsim_config.c — feedsim's options and its life: the option table,
 * validate (TLS pairs, the size mix, what prerender cannot replay), the size
 * mix parsed (fs_parse_sizes), prerender's rendering of the whole stream
 * (fs_pr_tick, fs_pr_render), the TLS server context, init and fini.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <rte_errno.h>
#include <rte_malloc.h>

#include "tls_opts.h"
#include "feedsim.h"

#define C struct fs_conf
const struct lcp_opt fs_opts[] = {
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
	LCP_TLS_OPTS(C),
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

int
fs_validate(const void *conf, char *msg, size_t msglen)
{
	const struct fs_conf *c = conf;
	uint32_t max;

	if (!c->tls_cert[0] != !c->tls_key[0]) {
		snprintf(msg, msglen, "tls_cert and tls_key go together (wss needs both)");
		return -1;
	}
	if (lcp_tls_opts_check(c->tls_min_version, c->tls_max_version, msg, msglen) < 0)
		return -1;
	if (fs_parse_sizes(c->sizes, NULL, &max, msg, msglen) < 0)
		return -1;
	if (!c->prerender)
		return 0;
	{
		/* what prerender cannot replay: per-client or per-message work */
		const char *bad = NULL;
		uint64_t frame = max + stk_ws_hdr_size(max, false);

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

	p = fs_tick_head(p, sym, n);
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
	cap = (size_t)c->count * (max + stk_ws_hdr_size(max, false));
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
		.resume = true,
		.alpn = true,
	};
	char err[256];

	if (!c->tls_cert[0])
		return 0;
	lcp_tls_opts_apply(&tc, c->tls_min_version, c->tls_max_version, c->tls_ciphers, c->tls_ciphersuites);
	x->tls = stk_tls_ctx_new(&tc, err, sizeof(err));
	if (x->tls == NULL) {
		lcp_log(x->st, LCP_LOG_ERR, "TLS: %s", err);
		return -EINVAL;
	}
	for (unsigned i = 0; i < x->max_clients; i++) {
		x->cl[i].pt = lcp_stage_zmalloc(x->st, "a client's TLS plaintext buffer", FS_PT_MAX);
		if (x->cl[i].pt == NULL)
			return -ENOMEM;
	}
	return 0;
}

int
fs_init(struct lcp_stage *st, const void *conf, void **ctx)
{
	const struct fs_conf *c = conf;
	struct fs_ctx *x = *ctx;
	char name[RTE_MEMPOOL_NAMESIZE], msg[256];
	struct timespec ts;
	size_t seq_bytes;
	int rc = -ENOMEM;

	x->st = st;
	lcp_obuf_init(&x->tx, FS_P_TX, 128);
	x->c = *c;
	x->c.sizes = NULL;
	if (fs_parse_sizes(c->sizes, x, NULL, msg, sizeof(msg)) < 0) {
		lcp_log(st, LCP_LOG_ERR, "%s", msg);
		return -EINVAL;
	}
	x->pkt = lcp_stage_pktmbuf_pool(st);
	x->max_clients = c->max_clients;
	x->cl = lcp_stage_zmalloc(st, "the client table", c->max_clients * sizeof(*x->cl));
	if (x->cl == NULL)
		goto nomem;
	x->seq_words = c->venue == FS_VENUE_LCPIPE ? 1 : FS_VENUE_WORDS;
	seq_bytes = (size_t)c->symbols * x->seq_words * sizeof(uint64_t);
	for (unsigned i = 0; i < c->max_clients; i++) {
		x->cl[i].x = x;
		x->cl[i].seq = lcp_stage_zmalloc(st, "a client's sequence numbers", seq_bytes);
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
	return rc;
}

void
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
}
