/* SPDX-License-Identifier: BSD-3-Clause
 * sink_file — write `msg` objects (WebSocket messages from the ws stage, or any
 * other msg producer) to a file, then free them. Three formats:
 *
 * format "jsonl" (default): one JSON object per line, keys in this order:
 *
 *   {"rx_tsc":N,"rx_ns":N,"conn":N,"op":"text","len":N,"data":...}
 *
 *   rx_tsc  the message's rx TSC (lcp_msg.rx_tsc), as is
 *   rx_ns   rx_tsc converted to nanoseconds since this stage's start() (the TSC read
 *           there, at rte_get_tsc_hz()); negative if stamped before it; null when
 *           rx_tsc is 0 (not stamped)
 *   conn    lcp_msg.conn_id
 *   op      "text" (opcode 1), "binary" (opcode 2), otherwise the opcode as a number
 *   len     payload length in bytes
 *   data    the payload:
 *           - text whose first byte is '{' or '[' and whose last non-whitespace byte
 *             is the matching '}' or ']', with embed_json on (the default): the
 *             payload itself, embedded as a JSON value, NOT validated — this trusts
 *             the producer to send JSON (set embed_json false for producers that
 *             may not). CR and LF bytes (legal only as whitespace between JSON
 *             tokens) are written as spaces, so the record stays on one line and
 *             the value is the same; the bytes can differ in that whitespace;
 *           - other text that is valid UTF-8: a JSON string; '"' and '\' are
 *             backslash-escaped, control characters (0x00-0x1f) written \u00XX,
 *             everything else (UTF-8 included) as is, so it decodes to the exact
 *             payload;
 *   data_b64  instead of data, for binary messages, any other opcode, and text that
 *           is not valid UTF-8: the payload in standard base64 with padding.
 * Formatting is by hand, no JSON library: numbers two digits at a time, strings with
 * a byte-class table behind an 8-bytes-at-a-time (SWAR) scan for plain ASCII, UTF-8
 * checked on the way; about 100 ns for a 30-byte tick here.
 *
 * format "raw": length-prefixed records, back to back, no file header:
 *
 *   offset 0   u32 little-endian  payload length L
 *   offset 4   u8                 opcode (low 8 bits of lcp_msg.opcode)
 *   offset 5   u64 little-endian  rx_tsc
 *   offset 13  L bytes            the payload, as is
 *
 * format "payload": each message's payload as is, then a newline (0x0a): the
 * feed's own text, one message per line, for tools that read lines (jq, grep).
 * A payload that holds a newline itself spans lines: use jsonl or raw for
 * feeds whose messages may.
 *
 * Writing: records are formatted into a user-space buffer of flush_bytes bytes,
 * written with write(2) when the next record might not fit, and at stop(). A record
 * whose worst-case size exceeds the whole buffer is written on its own (raw: one
 * writev of header and payload; jsonl: through the buffer in pieces). write(2)
 * blocks the stage's lcore: stages sharing the lcore wait for it.
 *
 * Counters: msgs and bytes (payload bytes) count records once they have reached
 * the file, i.e. when their buffer is written (so they lag by up to one buffer
 * while running, and are exact at the end). A failed write(2) counts one
 * write_errors and every message of that buffer under drop_write_error; if part of
 * the buffer had been written, the file is truncated back to the end of the last
 * whole record (regular files), so it always ends on a record boundary and writing
 * goes on with the next buffer. If it cannot be truncated (not a regular file), the
 * stage gives up on the file: every later message is counted in drop_write_error.
 * At the end, "in.in" == msgs + drop_write_error.
 *
 * Entry points: sink_file_init (buffer; no I/O), sink_file_start (open, TSC
 * reference), sink_file_process (format, free), sink_file_stop (flush),
 * sink_file_fini (flush what is left, close). */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include <sys/uio.h>

#include <rte_byteorder.h>
#include <rte_common.h>
#include <rte_cycles.h>
#include <rte_malloc.h>

#include <lcp/lcp.h>
#include <stk/ws.h>

#define SF_RAW_HDR 13u          /* u32 len + u8 opcode + u64 rx_tsc */
#define SF_JSON_FIXED 192u      /* a jsonl record without its payload, at most */
#define SF_ESC_CHUNK 512u       /* payload bytes escaped per room check */
#define SF_B64_CHUNK 384u       /* payload bytes base64-encoded per room check (x3) */
#define SF_COPY_CHUNK 4096u     /* payload bytes copied per room check */
#define SF_ERR_LOG_MAX 3        /* write errors logged one by one, then counted only */

enum { SF_IN };

static const struct lcp_port_def sink_file_ports[] = {
	[SF_IN] = { .name = "in", .dir = LCP_PORT_IN, .unit = LCP_UNIT_MSG, .flags = LCP_PORT_F_REQUIRED,
		    .doc = "messages to write, then free" },
	LCP_PORT_END,
};

#define SINK_FILE_COUNTERS(X)                                                  \
	X(MSGS, "msgs")                                                        \
	X(BYTES, "bytes")                                                      \
	X(WRITE_ERRORS, "write_errors")                                        \
	X(DROP_WRITE_ERROR, "drop_write_error")
enum {
#define X(e, s) SF_C_##e,
	SINK_FILE_COUNTERS(X)
#undef X
};
static const char *const sink_file_counters[] = { SINK_FILE_COUNTERS(LCP_COUNTER_NAME) NULL };

enum { SF_FMT_JSONL, SF_FMT_RAW, SF_FMT_PAYLOAD };
static const char *const sink_file_formats[] = { "jsonl", "raw", "payload", NULL };

struct sink_file_conf {
	const char *path;
	int format;
	uint32_t flush_bytes;
	bool append;
	bool embed_json;
};

#define C struct sink_file_conf
static const struct lcp_opt sink_file_opts[] = {
	LCP_OPT_STRING(C, path, "path", NULL, 1, 4095, LCP_OPT_F_REQUIRED,
		       "file to write; created if missing, truncated at start unless append"),
	LCP_OPT_ENUM(C, format, "format", "\"jsonl\"", sink_file_formats, 0,
		     "jsonl: one JSON object per message and line; raw: length-prefixed binary records; payload: each payload as is and a newline (doc/sinks.md)"),
	LCP_OPT_UINT(C, flush_bytes, "flush_bytes", "1048576", 4096, 1073741824, 0,
		     "size of the write buffer: one write(2) when it is full and at stop"),
	LCP_OPT_BOOL(C, append, "append", "false", "append to an existing file instead of truncating it"),
	LCP_OPT_BOOL(C, embed_json, "embed_json", "true",
		     "jsonl: embed text that looks like a JSON object or array ({...} or [...]) as a JSON value, "
		     "unvalidated (trusts the producer); false: always a JSON string"),
	LCP_OPT_END,
};
#undef C

struct sink_file_ctx {
	struct lcp_stage *st;
	const char *path;   /* from the conf, valid until fini */
	int format;
	bool append, embed_json;
	int fd;             /* -1 until start */
	bool regular;       /* a regular file: can be truncated after a failed write */
	bool broken;        /* gave up on the file: every message is dropped */
	uint8_t *buf;
	size_t cap, used;
	uint64_t buf_msgs, buf_bytes; /* records (and their payload bytes) in buf */
	uint64_t file_off;  /* end of the last whole record in the file */
	/* a record too big for the buffer, written in pieces */
	bool big, big_failed;
	uint64_t big_written;
	/* rx_tsc -> ns since start: ns = d * 10^9 / hz as d * mul_hi + (d * mul_lo) >> 64,
	 * mul = 10^9 * 2^64 / hz (exact to 1 ns, no division per message) */
	uint64_t tsc0, hz, mul_hi, mul_lo;
	/* totals for the closing log line (counters are write-only for a plugin) */
	uint64_t msgs, bytes, errors, dropped;
	unsigned errs_logged;
};

/* ---- the file ---- */

/* write all n bytes; 0, or -errno with *done bytes written */
static int
sf_write_all(int fd, const uint8_t *p, size_t n, size_t *done)
{
	*done = 0;
	while (*done < n) {
		ssize_t k = write(fd, p + *done, n - *done);

		if (k < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (k == 0)
			return -EIO;
		*done += (size_t)k;
	}
	return 0;
}

/* A write failed after `partial` bytes of the current piece reached the file:
 * count it, then put the file back on the last record boundary (file_off) or give
 * up on it. `lost`: messages whose records were lost. */
static void
sf_write_failed(struct sink_file_ctx *x, int err, uint64_t partial, uint64_t lost)
{
	struct lcp_stage *st = x->st;
	bool trunc_ok = true;

	lcp_count(st, SF_C_WRITE_ERRORS, 1);
	lcp_count(st, SF_C_DROP_WRITE_ERROR, lost);
	x->errors++;
	x->dropped += lost;
	if (partial > 0) {
		/* part of a record is in the file: cut it off */
		trunc_ok = x->regular && ftruncate(x->fd, (off_t)x->file_off) == 0 &&
			   (x->append || lseek(x->fd, (off_t)x->file_off, SEEK_SET) == (off_t)x->file_off);
	}
	if (!trunc_ok) {
		lcp_log(st, LCP_LOG_ERR,
			"write to %s failed after %" PRIu64 " bytes: %s; cannot truncate it back to %" PRIu64
			" bytes (%s): giving up on the file, every later message is dropped (drop_write_error)",
			x->path, partial, strerror(-err), x->file_off,
			x->regular ? strerror(errno) : "not a regular file");
		x->broken = true;
		return;
	}
	if (x->errs_logged < SF_ERR_LOG_MAX) {
		x->errs_logged++;
		lcp_log(st, LCP_LOG_ERR,
			"write to %s failed: %s; %" PRIu64 " message(s) lost (drop_write_error), the file ends "
			"after the last whole record (%" PRIu64 " bytes)%s",
			x->path, strerror(-err), lost, x->file_off,
			x->errs_logged == SF_ERR_LOG_MAX ? "; further write errors are only counted" : "");
	}
}

/* write the buffer out: its records are in the file (counted) or lost (counted) */
static void
sf_flush(struct sink_file_ctx *x)
{
	size_t done;
	int rc;

	if (x->used == 0)
		return;
	rc = sf_write_all(x->fd, x->buf, x->used, &done);
	if (likely(rc == 0)) {
		x->file_off += x->used;
		lcp_count(x->st, SF_C_MSGS, x->buf_msgs);
		lcp_count(x->st, SF_C_BYTES, x->buf_bytes);
		x->msgs += x->buf_msgs;
		x->bytes += x->buf_bytes;
	} else {
		sf_write_failed(x, rc, done, x->buf_msgs);
	}
	x->used = 0;
	x->buf_msgs = x->buf_bytes = 0;
}

/* ---- big records: written through the buffer in pieces ---- */

static void
sf_big_begin(struct sink_file_ctx *x)
{
	sf_flush(x); /* the buffer holds only this record from now on */
	x->big = true;
	x->big_failed = false;
	x->big_written = 0;
}

/* write out what the buffer holds of the big record */
static void
sf_big_spill(struct sink_file_ctx *x)
{
	size_t done;
	int rc;

	if (!x->big_failed) {
		rc = sf_write_all(x->fd, x->buf, x->used, &done);
		if (likely(rc == 0)) {
			x->big_written += x->used;
		} else {
			x->big_failed = true;
			sf_write_failed(x, rc, x->big_written + done, 1);
		}
	}
	x->used = 0; /* after a failure the rest of the record is formatted and discarded */
}

static void
sf_big_end(struct sink_file_ctx *x, uint32_t len)
{
	sf_big_spill(x);
	if (!x->big_failed) {
		x->file_off += x->big_written;
		lcp_count(x->st, SF_C_MSGS, 1);
		lcp_count(x->st, SF_C_BYTES, len);
		x->msgs++;
		x->bytes += len;
	}
	x->big = false;
}

/* make room for n more bytes: a no-op for a normal record (its worst case was
 * checked before it started); spills a big record */
static inline uint8_t *
sf_room(struct sink_file_ctx *x, size_t n)
{
	if (unlikely(x->cap - x->used < n))
		sf_big_spill(x);
	return x->buf + x->used;
}

/* ---- jsonl formatting, by hand ---- */

/* byte classes for JSON strings: 0 as is, 1 escape, 2 start of a UTF-8 sequence */
static const uint8_t sf_esc_class[256] = {
	[0x00 ... 0x1f] = 1, ['"'] = 1, ['\\'] = 1, [0x80 ... 0xff] = 2,
};
static const char sf_hex[] = "0123456789abcdef";
static const char sf_b64[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

/* length of the valid UTF-8 sequence at p (lead byte >= 0x80), 0 if invalid:
 * the stack's validator (stk_utf8_validate, RFC 3629: no overlongs, no
 * surrogates, nothing above U+10FFFF) judges the bytes its lead byte announces */
static inline unsigned
sf_utf8_len(const uint8_t *p, size_t n)
{
	unsigned k = p[0] >= 0xf0 ? 4 : p[0] >= 0xe0 ? 3 : 2;

	return k <= n && stk_utf8_validate(STK_UTF8_ACCEPT, p, k) == STK_UTF8_ACCEPT ? k : 0;
}

static bool
sf_utf8_valid(const uint8_t *p, size_t n)
{
	return stk_utf8_validate(STK_UTF8_ACCEPT, p, n) == STK_UTF8_ACCEPT;
}

static inline uint8_t *
sf_put(uint8_t *o, const char *s, size_t n)
{
	memcpy(o, s, n);
	return o + n;
}
#define SF_PUT(o, lit) sf_put((o), (lit), sizeof(lit) - 1)

static const char sf_digits2[201] =
	"00010203040506070809101112131415161718192021222324252627282930313233343536373839"
	"40414243444546474849505152535455565758596061626364656667686970717273747576777879"
	"8081828384858687888990919293949596979899";

static const uint64_t sf_pow10[20] = {
	1ull, 10ull, 100ull, 1000ull, 10000ull, 100000ull, 1000000ull, 10000000ull, 100000000ull,
	1000000000ull, 10000000000ull, 100000000000ull, 1000000000000ull, 10000000000000ull,
	100000000000000ull, 1000000000000000ull, 10000000000000000ull, 100000000000000000ull,
	1000000000000000000ull, 10000000000000000000ull,
};

/* v in decimal: the digit count from the bit length (log10(2) ~ 1233/4096, then one
 * comparison), then the digits from the end, two at a time */
static inline uint8_t *
sf_u64(uint8_t *o, uint64_t v)
{
	unsigned n = ((64 - (unsigned)__builtin_clzll(v | 1)) * 1233) >> 12;
	uint8_t *e;

	n += n < 20 && v >= sf_pow10[n]; /* now the number of digits, 1..20 */
	n += n == 0;
	e = o + n;
	while (v >= 100) {
		unsigned r = (unsigned)(v % 100);

		v /= 100;
		e -= 2;
		memcpy(e, sf_digits2 + 2 * r, 2);
	}
	if (v >= 10)
		memcpy(e - 2, sf_digits2 + 2 * v, 2);
	else
		e[-1] = (uint8_t)('0' + v);
	return o + n;
}

/* SWAR tests on 8 bytes at once (true if ANY byte matches; per-byte flags can
 * have false positives, so a hit is resolved byte by byte) */
#define SF_ONES 0x0101010101010101ull
#define SF_HIGHS 0x8080808080808080ull
static inline uint64_t
sf_has_zero(uint64_t v)
{
	return (v - SF_ONES) & ~v & SF_HIGHS;
}

/* a byte that a JSON string cannot hold as is (< 0x20, '"', '\') or non-ASCII */
static inline bool
sf_word_special(uint64_t v)
{
	return ((v | ((v - SF_ONES * 0x20) & ~v)) & SF_HIGHS) != 0 ||
	       sf_has_zero(v ^ (SF_ONES * '"')) != 0 || sf_has_zero(v ^ (SF_ONES * '\\')) != 0;
}

/* the payload as the body of a JSON string (no quotes). Returns -1 at invalid
 * UTF-8 (what was written so far stays in the buffer), else 0. */
static int
sf_json_escape(struct sink_file_ctx *x, const uint8_t *p, size_t n)
{
	size_t i = 0;

	while (i < n) {
		size_t end = RTE_MIN(n, i + SF_ESC_CHUNK);
		/* 6 output bytes per input byte at most, plus a UTF-8 sequence
		 * running up to 3 bytes past `end` */
		uint8_t *o = sf_room(x, (end - i) * 6 + 3);

		while (i < end) {
			uint8_t c;
			unsigned k;

			if (i + 8 <= end) { /* 8 plain bytes at a time */
				uint64_t v;

				memcpy(&v, p + i, 8);
				if (!sf_word_special(v)) {
					memcpy(o, &v, 8);
					o += 8;
					i += 8;
					continue;
				}
			}
			c = p[i];
			if (likely(sf_esc_class[c] == 0)) {
				*o++ = c;
				i++;
				continue;
			}
			if (c < 0x80) {
				*o++ = '\\';
				if (c == '"' || c == '\\') {
					*o++ = c;
				} else {
					*o++ = 'u';
					*o++ = '0';
					*o++ = '0';
					*o++ = (uint8_t)sf_hex[c >> 4];
					*o++ = (uint8_t)sf_hex[c & 15];
				}
				i++;
				continue;
			}
			k = sf_utf8_len(p + i, n - i);
			if (unlikely(k == 0)) {
				x->used = (size_t)(o - x->buf);
				return -1;
			}
			memcpy(o, p + i, k);
			o += k;
			i += k;
		}
		x->used = (size_t)(o - x->buf);
	}
	return 0;
}

static void
sf_base64(struct sink_file_ctx *x, const uint8_t *p, size_t n)
{
	size_t i = 0;

	while (i < n) {
		size_t end = RTE_MIN(n, i + SF_B64_CHUNK);
		uint8_t *o = sf_room(x, (end - i + 2) / 3 * 4);

		for (; i + 3 <= end; i += 3) {
			uint32_t v = (uint32_t)p[i] << 16 | (uint32_t)p[i + 1] << 8 | p[i + 2];

			*o++ = (uint8_t)sf_b64[v >> 18];
			*o++ = (uint8_t)sf_b64[(v >> 12) & 63];
			*o++ = (uint8_t)sf_b64[(v >> 6) & 63];
			*o++ = (uint8_t)sf_b64[v & 63];
		}
		if (i < end) { /* the last 1 or 2 bytes (chunks are multiples of 3) */
			uint32_t v = (uint32_t)p[i] << 16 | (i + 1 < end ? (uint32_t)p[i + 1] << 8 : 0);

			*o++ = (uint8_t)sf_b64[v >> 18];
			*o++ = (uint8_t)sf_b64[(v >> 12) & 63];
			*o++ = i + 1 < end ? (uint8_t)sf_b64[(v >> 6) & 63] : '=';
			*o++ = '=';
			i = end;
		}
		x->used = (size_t)(o - x->buf);
	}
}

/* embedded JSON: copied, CR and LF turned into spaces */
static void
sf_json_raw(struct sink_file_ctx *x, const uint8_t *p, size_t n)
{
	for (size_t i = 0; i < n;) {
		size_t k = RTE_MIN(n - i, (size_t)SF_COPY_CHUNK), j = 0;
		uint8_t *o = sf_room(x, k);

		for (; j + 8 <= k; j += 8) {
			uint64_t v;

			memcpy(&v, p + i + j, 8);
			memcpy(o + j, &v, 8);
			if (unlikely(sf_has_zero(v ^ (SF_ONES * '\n')) | sf_has_zero(v ^ (SF_ONES * '\r'))))
				for (size_t b = j; b < j + 8; b++)
					if (o[b] == '\n' || o[b] == '\r')
						o[b] = ' ';
		}
		for (; j < k; j++) {
			uint8_t c = p[i + j];

			o[j] = c == '\n' || c == '\r' ? ' ' : c;
		}
		x->used += k;
		i += k;
	}
}

/* text that looks like a JSON object or array: '{' ... '}' or '[' ... ']' */
static inline bool
sf_looks_json(const uint8_t *p, uint32_t n)
{
	uint8_t want;

	if (n < 2 || (p[0] != '{' && p[0] != '['))
		return false;
	want = p[0] == '{' ? '}' : ']';
	while (n > 1 && (p[n - 1] == ' ' || p[n - 1] == '\n' || p[n - 1] == '\r' || p[n - 1] == '\t'))
		n--;
	return p[n - 1] == want;
}

/* TSC cycles -> ns */
static inline uint64_t
sf_ns(const struct sink_file_ctx *x, uint64_t d)
{
	return d * x->mul_hi + (uint64_t)(((unsigned __int128)d * x->mul_lo) >> 64);
}

/* the file was given up while making room for m: m is dropped */
static inline bool
sf_gave_up(struct sink_file_ctx *x)
{
	if (likely(!x->broken))
		return false;
	lcp_count(x->st, SF_C_DROP_WRITE_ERROR, 1);
	x->dropped++;
	return true;
}

/* one jsonl record */
static void
sf_jsonl(struct sink_file_ctx *x, const struct lcp_msg *m)
{
	uint64_t worst = SF_JSON_FIXED + (uint64_t)m->len * 6;
	bool text = m->opcode == 1;
	bool embed = text && x->embed_json && sf_looks_json(m->data, m->len);
	size_t data_at;
	uint8_t *o;

	if (unlikely(x->cap - x->used < worst)) {
		if (worst > x->cap) {
			sf_big_begin(x);
			/* no rewinding once pieces are out: decide text vs base64 first */
			if (text && !embed && !sf_utf8_valid(m->data, m->len))
				text = false;
		} else {
			sf_flush(x);
		}
		if (sf_gave_up(x)) {
			x->big = false;
			return;
		}
	}
	o = x->buf + x->used; /* room for SF_JSON_FIXED is there in every case */
	o = SF_PUT(o, "{\"rx_tsc\":");
	o = sf_u64(o, m->rx_tsc);
	o = SF_PUT(o, ",\"rx_ns\":");
	if (m->rx_tsc == 0) {
		o = SF_PUT(o, "null");
	} else if (m->rx_tsc >= x->tsc0) {
		o = sf_u64(o, sf_ns(x, m->rx_tsc - x->tsc0));
	} else {
		*o++ = '-';
		o = sf_u64(o, sf_ns(x, x->tsc0 - m->rx_tsc));
	}
	o = SF_PUT(o, ",\"conn\":");
	o = sf_u64(o, m->conn_id);
	if (m->opcode == 1) {
		o = SF_PUT(o, ",\"op\":\"text\"");
	} else if (m->opcode == 2) {
		o = SF_PUT(o, ",\"op\":\"binary\"");
	} else {
		o = SF_PUT(o, ",\"op\":");
		o = sf_u64(o, m->opcode);
	}
	o = SF_PUT(o, ",\"len\":");
	o = sf_u64(o, m->len);
	data_at = (size_t)(o - x->buf);
	if (embed) {
		o = SF_PUT(o, ",\"data\":");
		x->used = (size_t)(o - x->buf);
		sf_json_raw(x, m->data, m->len);
	} else if (text) {
		o = SF_PUT(o, ",\"data\":\"");
		x->used = (size_t)(o - x->buf);
		if (unlikely(sf_json_escape(x, m->data, m->len) != 0)) {
			/* not UTF-8 after all (normal records only: big ones were
			 * checked first): rewind and write it as base64 */
			x->used = data_at;
			o = SF_PUT(x->buf + x->used, ",\"data_b64\":\"");
			x->used = (size_t)(o - x->buf);
			sf_base64(x, m->data, m->len);
		}
		*sf_room(x, 1) = '"';
		x->used++;
	} else {
		o = SF_PUT(o, ",\"data_b64\":\"");
		x->used = (size_t)(o - x->buf);
		sf_base64(x, m->data, m->len);
		*sf_room(x, 1) = '"';
		x->used++;
	}
	o = sf_room(x, 2);
	o[0] = '}';
	o[1] = '\n';
	x->used += 2;
	if (unlikely(x->big)) {
		sf_big_end(x, m->len);
	} else {
		x->buf_msgs++;
		x->buf_bytes += m->len;
	}
}

/* ---- raw records ---- */

static inline void
sf_raw_hdr(uint8_t *h, const struct lcp_msg *m)
{
	uint32_t len = rte_cpu_to_le_32(m->len);
	uint64_t tsc = rte_cpu_to_le_64(m->rx_tsc);

	memcpy(h, &len, 4);
	h[4] = (uint8_t)m->opcode;
	memcpy(h + 5, &tsc, 8);
}

static void
sf_record(struct sink_file_ctx *x, const struct lcp_msg *m, const uint8_t *hdr, uint32_t hl,
	  const uint8_t *tail, uint32_t tl)
{
	uint64_t need = hl + (uint64_t)m->len + tl;

	if (unlikely(x->cap - x->used < need)) {
		sf_flush(x);
		if (sf_gave_up(x))
			return;
		if (need > x->cap) { /* on its own: header, payload and tail in one writev */
			struct iovec iov[3] = { { (void *)(uintptr_t)hdr, hl },
						{ (void *)(uintptr_t)m->data, m->len },
						{ (void *)(uintptr_t)tail, tl } };
			uint64_t done = 0;
			int rc = 0;

			while (done < need) {
				struct iovec v[3];
				uint64_t skip = done;
				unsigned k0 = 0, nv = 0;
				ssize_t k;

				while (k0 < 3 && skip >= iov[k0].iov_len) /* the iovecs fully written */
					skip -= iov[k0++].iov_len;
				for (unsigned a = k0; a < 3; a++)
					if (iov[a].iov_len > (a == k0 ? skip : 0)) {
						v[nv].iov_base = (uint8_t *)iov[a].iov_base + (a == k0 ? skip : 0);
						v[nv++].iov_len = iov[a].iov_len - (a == k0 ? skip : 0);
					}
				k = writev(x->fd, v, (int)nv);
				if (k < 0 && errno == EINTR)
					continue;
				if (k <= 0) {
					rc = k < 0 ? -errno : -EIO;
					break;
				}
				done += (uint64_t)k;
			}
			if (rc == 0) {
				x->file_off += need;
				lcp_count(x->st, SF_C_MSGS, 1);
				lcp_count(x->st, SF_C_BYTES, m->len);
				x->msgs++;
				x->bytes += m->len;
			} else {
				sf_write_failed(x, rc, done, 1);
			}
			return;
		}
	}
	if (hl != 0)
		memcpy(x->buf + x->used, hdr, hl);
	if (m->len != 0)
		memcpy(x->buf + x->used + hl, m->data, m->len);
	if (tl != 0)
		memcpy(x->buf + x->used + hl + m->len, tail, tl);
	x->used += need;
	x->buf_msgs++;
	x->buf_bytes += m->len;
}

static void
sf_raw(struct sink_file_ctx *x, const struct lcp_msg *m)
{
	uint8_t h[SF_RAW_HDR];

	sf_raw_hdr(h, m);
	sf_record(x, m, h, SF_RAW_HDR, NULL, 0);
}

/* format "payload": the payload and a newline */
static void
sf_payload(struct sink_file_ctx *x, const struct lcp_msg *m)
{
	static const uint8_t nl = '\n';

	sf_record(x, m, NULL, 0, &nl, 1);
}

/* ---- the stage ---- */

static int
sink_file_init(struct lcp_stage *st, const void *conf, void **ctx)
{
	const struct sink_file_conf *c = conf;
	struct sink_file_ctx *x = *ctx;

	x->st = st;
	x->path = c->path;
	x->format = c->format;
	x->append = c->append;
	x->embed_json = c->embed_json;
	x->fd = -1;
	x->cap = c->flush_bytes;
	x->buf = rte_malloc_socket("sink_file_buf", x->cap, RTE_CACHE_LINE_SIZE, lcp_stage_socket(st));
	if (x->buf == NULL) {
		lcp_log(st, LCP_LOG_ERR, "%s: cannot allocate the write buffer (flush_bytes %zu) on socket %d",
			c->path, x->cap, lcp_stage_socket(st));
		return -ENOMEM;
	}
	return 0;
}

static int
sink_file_start(struct lcp_stage *st, void *ctx)
{
	struct sink_file_ctx *x = ctx;
	struct stat sb;
	int flags = O_WRONLY | O_CREAT | O_CLOEXEC | (x->append ? O_APPEND : O_TRUNC);

	x->fd = open(x->path, flags, 0644);
	if (x->fd < 0) {
		int err = errno;

		lcp_log(st, LCP_LOG_ERR, "cannot open %s for writing: %s", x->path, strerror(err));
		return -err;
	}
	x->regular = fstat(x->fd, &sb) == 0 && S_ISREG(sb.st_mode);
	x->file_off = x->regular && x->append ? (uint64_t)sb.st_size : 0;
	x->hz = rte_get_tsc_hz();
	{
		unsigned __int128 mul = ((unsigned __int128)1000000000u << 64) / x->hz;

		x->mul_hi = (uint64_t)(mul >> 64);
		x->mul_lo = (uint64_t)mul;
	}
	x->tsc0 = rte_rdtsc();
	lcp_log(st, LCP_LOG_INFO,
		"writing %s (%s%s, flush_bytes %zu); rx_ns: TSC %" PRIu64 " at start, %" PRIu64 " Hz", x->path,
		sink_file_formats[x->format], x->append ? ", appending" : "", x->cap, x->tsc0, x->hz);
	return 0;
}

static void
sink_file_process(struct lcp_stage *st, void *ctx, unsigned port, void **objs, unsigned n)
{
	struct sink_file_ctx *x = ctx;
	struct lcp_msg **msgs = (struct lcp_msg **)objs;

	RTE_SET_USED(port); /* one input port */
	if (unlikely(x->broken || x->fd < 0)) {
		lcp_count(st, SF_C_DROP_WRITE_ERROR, n);
		x->dropped += n;
		lcp_objs_free(LCP_UNIT_MSG, objs, n);
		return;
	}
	for (unsigned i = 0; i < n; i++) {
		if (likely(!x->broken)) {
			if (x->format == SF_FMT_JSONL)
				sf_jsonl(x, msgs[i]);
			else if (x->format == SF_FMT_RAW)
				sf_raw(x, msgs[i]);
			else
				sf_payload(x, msgs[i]);
		} else {
			lcp_count(st, SF_C_DROP_WRITE_ERROR, 1);
			x->dropped++;
		}
	}
	lcp_msgs_free(msgs, n);
}

static void
sink_file_stop(struct lcp_stage *st, void *ctx)
{
	struct sink_file_ctx *x = ctx;

	if (x->fd >= 0 && !x->broken)
		sf_flush(x);
	RTE_SET_USED(st);
}

static void
sink_file_fini(struct lcp_stage *st, void *ctx)
{
	struct sink_file_ctx *x = ctx;

	if (x->fd >= 0) {
		if (!x->broken)
			sf_flush(x); /* stop() did not run (a failed start elsewhere): nothing lost */
		if (close(x->fd) != 0)
			lcp_log(st, LCP_LOG_ERR, "closing %s: %s", x->path, strerror(errno));
		lcp_log(st, LCP_LOG_INFO,
			"wrote %" PRIu64 " messages (%" PRIu64 " payload bytes) to %s; %" PRIu64
			" write error(s), %" PRIu64 " message(s) dropped",
			x->msgs, x->bytes, x->path, x->errors, x->dropped);
	}
	rte_free(x->buf);
}

static const struct lcp_stage_ops sink_file_ops = {
	.ports = sink_file_ports,
	.counters = sink_file_counters,
	.init = sink_file_init,
	.start = sink_file_start,
	.process = sink_file_process,
	.stop = sink_file_stop,
	.fini = sink_file_fini,
	.ctx_size = sizeof(struct sink_file_ctx),
};

LCP_PLUGIN_EXPORT const struct lcp_plugin lcp_plugin_descriptor = {
	LCP_PLUGIN_HEADER(LCP_KIND_STAGE, "sink_file"),
	.version = "1.0.0",
	.summary = "write msg objects to a file (JSON lines or length-prefixed raw records), then free them",
	.options = sink_file_opts,
	.conf_size = sizeof(struct sink_file_conf),
	.ops = &sink_file_ops,
};
