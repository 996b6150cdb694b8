
/* SPDX-License-Identifier: BSD-3-Clause
 * b12_kernel_client.c — B12 (whole pipeline, doc/benchmarks.md): the
 * kernel-path anchor. Receives the b12_feed_server stream over a kernel TCP
 * socket and does the work lcpipe's ws + metrics stages do with it:
 *
 *   blocking recv() into a --buf byte buffer (default 64 KiB); a minimal
 *   WebSocket frame parser over what is in it (unmasked server frames, 7- and
 *   16/64-bit lengths; a frame cut by the buffer's end is moved to its start
 *   and completed by the next recv); for every data frame the tick scan of
 *   plugins/metrics (its general walk, metrics_scan_general of
 *   plugins/metrics/metrics_scan.h: walk the JSON strings with memchr, a
 *   string followed by ':' is a key, stop once "s" and "n" are found) and the
 *   per-symbol sequence check (open addressing on the symbol's bytes; in
 *   order, gap, duplicate, as metrics counts them). A close frame from the
 *   server is answered with a masked close (1000) and ends the run.
 *   --scan fixed replaces the tick scan by a parser that knows this feed's
 *   layout (symbol right after {"s":", "n": right after it): the minimal
 *   parser, a cheaper anchor than the same work lcpipe does. The symbol hash
 *   is metrics' (mt_hash: one multiply per word, the slot from the top bits);
 *   --hash fold is a hash whose slot comes from the low bits of an
 *   unfinalised mix, as metrics' once did (every symbol of this feed in 8 of
 *   8192 home slots, ~500 instructions per tick of probing; see kc_hash).
 *   --hash mix is the same as metrics (an older name).
 *
 * The handshake is libstk's client side (stk_ws_client_request /
 * stk_ws_client_response, which checks Sec-WebSocket-Accept), followed by one
 * masked text frame, the subscription, which starts the server's stream.
 *
 * Reported (one JSON line): messages, payload bytes, recv() calls, wall time,
 * getrusage(RUSAGE_SELF) user + system time from just before the first recv
 * of the stream to the close, and cpu_cycles_per_msg = (user + system time) ×
 * the TSC rate (--tsc-hz; b12.sh passes the rate calibrated by --calibrate)
 * / messages: on-CPU cycles of this process, which on a veth excludes the
 * kernel's TCP receive work done in softirq on the sender's CPU (charged to
 * the server's process: see b12_feed_server.c).
 *
 * Under valgrind --tool=callgrind the stream is its own dump (zeroed at the
 * first recv of the stream, dumped as "stream" at the close: B14 counts the
 * client's user-space instructions per message with it); natively the two
 * client requests are a few no-op instructions per run.
 *
 * Other uses:
 *   --calibrate     print the TSC rate against CLOCK_MONOTONIC_RAW (JSON)
 *   --spin          the noise gate's spin loop (the same loop as B8's):
 *                   median TSC cycles of 7 runs of a fixed dependent
 *                   multiply-add chain (≈ 0.5 ms each), JSON
 *
 * wss (B14): --tls-ca PEM [--tls-suite NAME] [--tls-read-ahead 0|1] runs TLS
 * on the connected socket with OpenSSL (SSL_set_fd, SSL_connect verifying the
 * chain against PEM and the server's IP address; kbench_tls.h), and then
 * everything above goes through SSL_read / SSL_write: SSL_read into the same
 * buffer, at most one record's plaintext (16 KiB) per call. One version and
 * one suite (default TLS_AES_128_GCM_SHA256, TLS 1.3). Read-ahead (default
 * on) lets OpenSSL read up to its record buffer per recv() instead of a
 * header and a body per record.
 *
 * permessage-deflate (B14): --deflate offers it (client_max_window_bits);
 * every RSV1 message is inflated with zlib (raw inflate, one stream for the
 * connection: context takeover; the 00 00 ff ff tail appended, RFC 7692
 * 7.2.2) into a 128 KiB buffer, and the tick scan runs on the inflated bytes.
 *
 * Usage: b12_kernel_client --connect A.B.C.D:PORT [--buf BYTES] [--tsc-hz HZ]
 *          [--rcvbuf BYTES] [--timeout-ms MS] [--scan metrics|fixed]
 *          [--hash metrics|mix|fold] [--tls-ca PEM [--tls-suite NAME]
 *          [--tls-read-ahead 0|1]] [--deflate] | --calibrate | --spin
 * Exit 0 only when the stream ended with the server's close frame and no
 * sequence gap, duplicate or malformed tick was seen. Pin it with taskset. */
#include <arpa/inet.h>
#include <errno.h>
#include <inttypes.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>
#include <x86intrin.h>

#include <zlib.h>
#if defined(__has_include)
#if __has_include(<valgrind/callgrind.h>)
#include <valgrind/callgrind.h>
#define KC_HAVE_CALLGRIND 1
#endif
#endif
#ifndef KC_HAVE_CALLGRIND
#define CALLGRIND_ZERO_STATS
#define CALLGRIND_DUMP_STATS_AT(s) ((void)(s))
#endif

#include <stk/ws.h>
#include "bench_opt.h"
#include "kbench.h"
#include "kbench_tls.h"
#include "metrics_scan.h"

#define KC_TABLE (1u << 13) /* slots: twice the 4096 symbols metrics tracks by default */

/* the noise gate (kbench.h) */
static int
kc_spin(void)
{
	printf("{\"bench\":\"B12\",\"spin_cycles\":%" PRIu64 "}\n", kb_spin_median());
	return 0;
}

/* a masked client frame of n payload bytes into out (n <= 125) */
static size_t
kc_client_frame(uint8_t *out, unsigned op, const void *payload, size_t n)
{
	uint8_t key[4];
	size_t h;

	if (getrandom(key, sizeof(key), 0) != (ssize_t)sizeof(key))
		memset(key, 0x5a, sizeof(key));
	h = stk_ws_hdr(out, op, true, n, key);
	memcpy(out + h, payload, n);
	stk_ws_mask(out + h, n, key, 0);
	return h + n;
}

/* ---- the tick scan and the sequence check: plugins/metrics' algorithm ---- */
struct kc_sym {
	uint64_t key[4];
	uint64_t last;
	uint32_t len;
};

struct kc_stats {
	uint64_t msgs, bytes, ticks, non_tick, bad_tick, symbols, table_full;
	uint64_t in_order, gaps, gap_events, dups, other_frames;
	uint64_t inflated, zbytes; /* messages inflated, their compressed payload bytes */
};

static struct kc_sym kc_tab[KC_TABLE];
static unsigned kc_nsyms;

static bool kc_fold; /* --hash fold */

/* plugins/metrics' mt_hash (for connection 0): the home slot from the top 13
 * bits of a multiply per word; --hash fold takes the low bits of an
 * unfinalised mix instead, as mt_hash did once: symbols that differ only in
 * their last bytes ("SYM00042") then share few home slots */
static inline uint64_t
kc_hash(const uint64_t key[4], uint32_t len)
{
	uint64_t h;

	if (kc_fold) {
		h = len * 0x9e3779b97f4a7c15ull;
		for (unsigned i = 0; i < (len + 7) / 8; i++) {
			h ^= key[i];
			h *= 0xff51afd7ed558ccdull;
			h ^= h >> 32;
		}
		return (h ^ (h >> 29)) & (KC_TABLE - 1);
	}
	h = key[0] * 0x9e3779b97f4a7c15ull + key[1] * 0xc2b2ae3d27d4eb4full + len * 0xff51afd7ed558ccdull;
	if (__builtin_expect(len > 16, 0))
		h += key[2] * 0x165667b19e3779f9ull + key[3] * 0xd6e8feb86659fd93ull;
	return h >> (64 - 13);
}
_Static_assert(KC_TABLE == 1u << 13, "kc_hash takes 13 bits");

static inline void
kc_track(struct kc_stats *s, const uint64_t key[4], uint32_t len, uint64_t seq)
{
	uint64_t i = kc_hash(key, len);
	struct kc_sym *e;

	for (;;) {
		e = &kc_tab[i];
		if (e->len == 0)
			break;
		if (e->len == len && e->key[0] == key[0] && e->key[1] == key[1] && e->key[2] == key[2] &&
		    e->key[3] == key[3]) {
			uint64_t last = e->last;

			if (__builtin_expect(seq > last, 1)) {
				e->last = seq;
				if (__builtin_expect(seq - last == 1, 1)) {
					s->in_order++;
				} else {
					s->gaps += seq - last - 1;
					s->gap_events++;
				}
			} else {
				s->dups++;
			}
			return;
		}
		i = (i + 1) & (KC_TABLE - 1);
	}
	if (kc_nsyms >= KC_TABLE / 2) {
		s->table_full++;
		return;
	}
	memcpy(e->key, key, sizeof(e->key));
	e->last = seq;
	e->len = len;
	kc_nsyms++;
	s->symbols++;
}

/* --scan fixed: what a hand-written parser for this one feed would do — the
 * symbol is the string right after the leading {"s":" and the sequence number
 * follows the "n": right after it (blanks skipped); anything else is not a tick */
static inline int
kc_scan_fixed(const uint8_t *p, const uint8_t *end, uint64_t key[4], uint32_t *len, uint64_t *seq)
{
	const uint8_t *q, *v;
	uint64_t n = 0;
	size_t sl;

	if (end - p < 12 || memcmp(p, "{\"s\":\"", 6) != 0)
		return METRICS_SCAN_NON_TICK;
	q = memchr(p + 6, '"', (size_t)(end - p - 6));
	if (q == NULL || (sl = (size_t)(q - p - 6)) == 0 || sl > METRICS_SYM_MAX)
		return METRICS_SCAN_BAD;
	if (end - q < 6 || memcmp(q, "\",\"n\":", 6) != 0)
		return METRICS_SCAN_NON_TICK;
	key[0] = key[1] = key[2] = key[3] = 0;
	memcpy(key, p + 6, sl);
	*len = (uint32_t)sl;
	v = metrics_scan_skip_ws(q + 6, end);
	q = v;
	while (v < end && *v >= '0' && *v <= '9' && v - q < 19)
		n = n * 10 + (unsigned)(*v++ - '0');
	if (v == q || (v < end && *v >= '0' && *v <= '9'))
		return METRICS_SCAN_BAD;
	*seq = n;
	return METRICS_SCAN_TICK;
}

static bool kc_fixed; /* --scan fixed */
/* --scan metrics: plugins/metrics' general walk for "s" and "n" (set up in main) */
static struct metrics_scan kc_sc;

static inline void
kc_message(struct kc_stats *s, const uint8_t *p, size_t n)
{
	uint64_t key[4], seq = 0;
	uint32_t len = 0;
	int r;

	s->msgs++;
	s->bytes += n;
	r = n == 0 ? METRICS_SCAN_NON_TICK : kc_fixed ? kc_scan_fixed(p, p + n, key, &len, &seq) : metrics_scan_general(&kc_sc, p, p + n, key, &len, &seq);
	if (__builtin_expect(r != METRICS_SCAN_TICK, 0)) {
		if (r == METRICS_SCAN_BAD)
			s->bad_tick++;
		else
			s->non_tick++;
		return;
	}
	s->ticks++;
	kc_track(s, key, len, seq);
}

/* ---- permessage-deflate: zlib, one raw inflate stream for the connection ---- */
static z_stream kc_zs;
static bool kc_z_on, kc_z_reset;
static uint8_t kc_zout[1u << 17];
static const char *kc_err;

static inline int
kc_inflate_step(const uint8_t *p, size_t n)
{
	int r;

	kc_zs.next_in = (Bytef *)(uintptr_t)p;
	kc_zs.avail_in = (uInt)n;
	r = inflate(&kc_zs, Z_SYNC_FLUSH);
	if ((r != Z_OK && r != Z_BUF_ERROR) || kc_zs.avail_in != 0) {
		kc_err = r == Z_OK || r == Z_BUF_ERROR ? "an inflated message larger than 128 KiB" : "corrupt deflate data";
		return -1;
	}
	return 0;
}

/* one compressed message: inflate, then the tick scan on the result */
static inline int
kc_inflate(struct kc_stats *s, const uint8_t *p, size_t n)
{
	static const uint8_t tail[4] = { 0x00, 0x00, 0xff, 0xff };

	if (!kc_z_on) {
		kc_err = "a compressed message without permessage-deflate";
		return -1;
	}
	kc_zs.next_out = kc_zout;
	kc_zs.avail_out = sizeof(kc_zout);
	if (kc_inflate_step(p, n) < 0 || kc_inflate_step(tail, sizeof(tail)) < 0)
		return -1;
	if (kc_z_reset)
		inflateReset(&kc_zs);
	s->inflated++;
	s->zbytes += n;
	kc_message(s, kc_zout, sizeof(kc_zout) - kc_zs.avail_out);
	return 0;
}

/* whole frames in [p, p+n): messages counted; returns the bytes consumed, or
 * (size_t)-1 on a protocol error; *close_code when a close frame came */
static size_t
kc_frames(struct kc_stats *s, const uint8_t *p, size_t n, int *close_code)
{
	size_t off = 0;

	while (n - off >= 2) {
		const uint8_t *f = p + off;
		unsigned b0 = f[0], op = b0 & 0x0f;
		uint64_t len;
		size_t h;

		if (__builtin_expect(f[1] & 0x80, 0)) {
			kc_err = "protocol error (masked frame from the server)";
			return (size_t)-1;
		}
		if (!kb_ws_len(f, n - off, &len, &h))
			break;
		if (n - off < h + len)
			break;
		if (__builtin_expect((op == STK_WS_OP_BINARY || op == STK_WS_OP_TEXT) && (b0 & 0x80), 1)) {
			if (__builtin_expect(b0 & STK_WS_RSV1, 0)) {
				if (kc_inflate(s, f + h, (size_t)len) < 0)
					return (size_t)-1;
			} else {
				kc_message(s, f + h, (size_t)len);
			}
		} else if (op == STK_WS_OP_CLOSE) {
			*close_code = len >= 2 ? (f[h] << 8) | f[h + 1] : 1005;
			return off + h + (size_t)len;
		} else {
			s->other_frames++; /* fragments, pings, pongs: not sent by b12_feed_server */
		}
		off += h + (size_t)len;
	}
	return off;
}

/* kb_io_recv on ctx (a struct kb_io), for kb_ws_client_response */
static ssize_t
kc_io_recv(void *ctx, void *p, size_t n)
{
	return kb_io_recv(ctx, p, n);
}

int
main(int argc, char **argv)
{
	const char *at = NULL;
	unsigned long bufsz = 65536, timeout_ms = 30000, rcvbuf = 0;
	double hz = 0;
	struct sockaddr_in sa = { .sin_family = AF_INET };
	static struct stk_ws_hs hs;
	static struct kc_stats st;
	uint8_t *buf, raw[16], fr[64];
	char key[25], req[2048], host[64];
	size_t have = 0;
	int fd, n, close_code = -1;
	const char *end = "close";
	const char *tls_ca = NULL, *tls_suite = "TLS_AES_128_GCM_SHA256";
	bool deflate = false, calibrate = false, spin = false;
	int read_ahead = 1, scan = 0, hash = 0;
	SSL_CTX *tls_ctx = NULL;
	struct kb_io io = { .fd = -1 };
	static const char *const scans[] = { "metrics", "fixed", NULL };
	static const char *const hashes[] = { "metrics", "mix", "fold", NULL };
	const struct bench_opt opts[] = {
		BENCH_OPT_STR("connect", &at),
		BENCH_OPT_ULONG("buf", &bufsz),
		BENCH_OPT_DOUBLE("tsc-hz", &hz),
		BENCH_OPT_ULONG("rcvbuf", &rcvbuf),
		BENCH_OPT_ULONG("timeout-ms", &timeout_ms),
		BENCH_OPT_WORD("scan", &scan, scans),
		BENCH_OPT_WORD("hash", &hash, hashes),
		BENCH_OPT_FLAG("calibrate", &calibrate),
		BENCH_OPT_FLAG("spin", &spin),
		BENCH_OPT_STR("tls-ca", &tls_ca),
		BENCH_OPT_STR("tls-suite", &tls_suite),
		BENCH_OPT_INT("tls-read-ahead", &read_ahead),
		BENCH_OPT_FLAG("deflate", &deflate),
		BENCH_OPT_END,
	};

	if (bench_opt_parse(argc, argv, opts, "b12_kernel_client",
			    "--connect A.B.C.D:PORT [--buf BYTES] [--tsc-hz HZ] "
			    "[--rcvbuf BYTES] [--timeout-ms MS] [--scan metrics|fixed] [--hash metrics|mix|fold] "
			    "[--tls-ca PEM [--tls-suite NAME] [--tls-read-ahead 0|1]] [--deflate] | --calibrate | --spin") < 0)
		return 2;
	if (calibrate) {
		printf("{\"bench\":\"B12\",\"tsc_hz\":%.0f}\n", kb_calibrate_hz());
		return 0;
	}
	if (spin)
		return kc_spin();
	kc_fixed = scan == 1;
	kc_fold = hash == 2;
	if (at == NULL || bufsz < 4096 || bufsz > (256ul << 20)) {
		fprintf(stderr, "b12_kernel_client: --connect is required; --buf 4096..256 MiB\n");
		return 2;
	}
	metrics_scan_init(&kc_sc, "s", "n");
	if (hz <= 0)
		hz = kb_calibrate_hz();
	if (kb_parse_addr("b12_kernel_client", "--connect", at, &sa, host, sizeof(host)) < 0)
		return 2;
	buf = malloc(bufsz);
	if (buf == NULL) {
		perror("b12_kernel_client");
		return 1;
	}
	if (getrandom(raw, sizeof(raw), 0) != (ssize_t)sizeof(raw))
		memset(raw, 0x3c, sizeof(raw));
	signal(SIGPIPE, SIG_IGN); /* OpenSSL writes with plain send() */
	if (tls_ca != NULL && (tls_ctx = kb_tls_client_ctx(tls_ca, tls_suite, read_ahead)) == NULL)
		return 1;

	fd = socket(AF_INET, SOCK_STREAM, 0);
	if (fd < 0) {
		perror("b12_kernel_client: socket");
		return 1;
	}
	if (rcvbuf != 0)
		setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &rcvbuf, sizeof(int));
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		perror("b12_kernel_client: connect");
		return 1;
	}
	kb_rcvtimeo(fd, timeout_ms); /* a blocking recv() that waits this long fails the run */

	io.fd = fd;
	if (tls_ctx != NULL) {
		io.ssl = SSL_new(tls_ctx);
		if (io.ssl == NULL || SSL_set_fd(io.ssl, fd) != 1 ||
		    X509_VERIFY_PARAM_set1_ip_asc(SSL_get0_param(io.ssl), host) != 1 || SSL_connect(io.ssl) != 1) {
			fprintf(stderr, "b12_kernel_client: TLS handshake failed: %s (verify: %s)\n", kb_tls_err(),
				io.ssl != NULL ? X509_verify_cert_error_string(SSL_get_verify_result(io.ssl)) : "-");
			return 1;
		}
	}

	/* handshake */
	stk_ws_key(raw, key);
	{
		const struct stk_ws_pmd offer = { .on = deflate };

		n = stk_ws_client_request_pmd(&hs, req, sizeof(req), at, "/b12", key, NULL, NULL, &offer);
	}
	if (n < 0 || kb_io_send_all(&io, req, (size_t)n) < 0) {
		perror("b12_kernel_client: upgrade request");
		return 1;
	}
	if (kb_ws_client_response("b12_kernel_client", &hs, kc_io_recv, &io, buf, bufsz, &have) < 0)
		return 1;
	if (deflate) {
		if (!hs.pmd.on) {
			fprintf(stderr, "b12_kernel_client: --deflate: the server declined permessage-deflate\n");
			return 1;
		}
		if (inflateInit2(&kc_zs, -(int)(hs.pmd.server_max_window_bits < 9 ? 9 : hs.pmd.server_max_window_bits)) !=
		    Z_OK) {
			fprintf(stderr, "b12_kernel_client: inflateInit2 failed\n");
			return 1;
		}
		kc_z_on = true;
		kc_z_reset = hs.pmd.server_no_context_takeover;
	}
	{
		size_t fl = kc_client_frame(fr, STK_WS_OP_TEXT, "b12 subscribe", 13);

		if (kb_io_send_all(&io, fr, fl) < 0) {
			perror("b12_kernel_client: subscribe");
			return 1;
		}
	}

	/* the stream */
	struct rusage ru0, ru1;
	uint64_t t0, t1, recvs = 0, rbytes = 0;

	CALLGRIND_ZERO_STATS;
	getrusage(RUSAGE_SELF, &ru0);
	t0 = kb_now_ns();
	for (;;) {
		size_t used;
		ssize_t k;

		if (have > 0) {
			used = kc_frames(&st, buf, have, &close_code);
			if (used == (size_t)-1) {
				end = kc_err;
				break;
			}
			if (close_code >= 0)
				break;
			if (used > 0) {
				have -= used;
				if (have > 0)
					memmove(buf, buf + used, have);
			} else if (have == bufsz) {
				end = "a frame larger than the buffer";
				break;
			}
		}
		k = kb_io_recv(&io, buf + have, bufsz - have);
		if (k > 0) {
			recvs++;
			rbytes += (uint64_t)k;
			have += (size_t)k;
			continue;
		}
		end = k == 0 ? "eof before the close frame" : "recv failed or timed out";
		break;
	}
	t1 = kb_now_ns();
	getrusage(RUSAGE_SELF, &ru1);
	CALLGRIND_DUMP_STATS_AT("stream");
	if (close_code >= 0) {
		uint8_t cc[2] = { 1000 >> 8, 1000 & 0xff };
		size_t fl = kc_client_frame(fr, STK_WS_OP_CLOSE, cc, 2);

		(void)kb_io_send_all(&io, fr, fl);
		shutdown(fd, SHUT_WR);
		while (kb_io_recv(&io, buf, bufsz) > 0)
			;
	}
	close(fd);

	uint64_t ut = kb_tv_us(ru1.ru_utime) - kb_tv_us(ru0.ru_utime);
	uint64_t stime = kb_tv_us(ru1.ru_stime) - kb_tv_us(ru0.ru_stime);
	bool ok = close_code == 1000 && st.gaps == 0 && st.dups == 0 && st.bad_tick == 0 && st.non_tick == 0 &&
		  st.table_full == 0 && st.other_frames == 0 && (!deflate || st.inflated == st.msgs);

	printf("{\"bench\":\"B12\",\"role\":\"kernel_client\",\"scan\":\"%s\",\"hash\":\"%s\",\"msgs\":%" PRIu64 ",\"payload_bytes\":%" PRIu64
	       ",\"stream_bytes\":%" PRIu64 ",\"recvs\":%" PRIu64 ",\"buf\":%lu,\"wall_ns\":%" PRIu64
	       ",\"utime_us\":%" PRIu64 ",\"stime_us\":%" PRIu64 ",\"nvcsw\":%ld,\"nivcsw\":%ld,\"tsc_hz\":%.0f,"
	       "\"cpu_cycles_per_msg\":%.2f,\"ticks\":%" PRIu64 ",\"symbols\":%" PRIu64 ",\"seq_in_order\":%" PRIu64
	       ",\"seq_gaps\":%" PRIu64 ",\"gap_events\":%" PRIu64 ",\"seq_dups\":%" PRIu64 ",\"non_tick\":%" PRIu64
	       ",\"bad_tick\":%" PRIu64 ",\"other_frames\":%" PRIu64 ",\"tls_version\":\"%s\",\"tls_cipher\":\"%s\","
	       "\"tls_read_ahead\":%s,\"deflate\":%s,\"inflated\":%" PRIu64 ",\"deflate_bytes\":%" PRIu64
	       ",\"close_code\":%d,\"end\":\"%s\",\"ok\":%s}\n",
	       kc_fixed ? "fixed" : "metrics", kc_fold ? "fold" : "metrics", st.msgs, st.bytes, rbytes, recvs, bufsz, t1 - t0, ut, stime, ru1.ru_nvcsw - ru0.ru_nvcsw,
	       ru1.ru_nivcsw - ru0.ru_nivcsw, hz, st.msgs ? (double)(ut + stime) * 1e-6 * hz / (double)st.msgs : 0.0,
	       st.ticks, st.symbols, st.in_order, st.gaps, st.gap_events, st.dups, st.non_tick, st.bad_tick,
	       st.other_frames, io.ssl != NULL ? SSL_get_version(io.ssl) : "", io.ssl != NULL ? SSL_get_cipher_name(io.ssl) : "",
	       io.ssl != NULL && read_ahead ? "true" : "false", kc_z_on ? "true" : "false", st.inflated, st.zbytes,
	       close_code, end, ok ? "true" : "false");
	SSL_free(io.ssl);
	SSL_CTX_free(tls_ctx);
	if (kc_z_on)
		inflateEnd(&kc_zs);
	free(buf);
	return ok ? 0 : 1;
}
