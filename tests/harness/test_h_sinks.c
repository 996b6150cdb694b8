/* SPDX-License-Identifier: BSD-3-Clause
 * test_h_sinks.c — the sinks sink_null, sink_file, sink_echo, sink_shm and
 * sink_pcap through the plugin test harness: what each frees (mbufs back in
 * the pool, harness messages released), writes or passes on, and its counters.
 *
 * null_frees_all       pkt, stream and msg objects on their three ports: all
 *                      freed at once, per-port in counts, bytes of the mbufs
 * null_count_bytes_off count_bytes false: nothing added to bytes
 * file_payload         format payload: the file is empty until stop() (one
 *                      buffer), then exactly each payload and a newline; msgs
 *                      and bytes (of payload) count what was written
 * file_raw             format raw: exact length-prefixed records (length,
 *                      opcode, rx TSC, payload)
 * file_jsonl           format jsonl: one JSON object per message, conn, op,
 *                      len, data (an object embedded, a string) or data_b64
 * file_cannot_open     a path in a directory that does not exist: init fails,
 *                      nothing is left behind
 * echo_sample          sample 2: the 1st, 3rd, 5th message passed on unchanged,
 *                      the others freed and counted as skipped
 * echo_unlinked        out unlinked: every message freed, the echoed ones
 *                      counted under sink_echo's own drop_unlinked
 * shm_ring             sink_shm into a ring of 8 slots of 16 bytes, read back
 *                      with liblcpipe-shm: each message's payload, conn and
 *                      opcode in order, one too long left out (drop_too_big,
 *                      and the next message's dropped = 1), every message
 *                      freed; closed at stop (-EPIPE after the last one);
 *                      keep false: the file is gone after fini
 * pcap_frames          sink_pcap with snaplen 64: the pcapng file read back
 *                      block by block holds one Enhanced Packet Block per
 *                      frame, in order, with the captured bytes equal to the
 *                      frame's first snaplen bytes and its original length; the
 *                      long frame counted as truncated; every mbuf freed
 * sink_count_example   the out-of-tree example of doc/writing-a-plugin.md
 *                      (doc/.libs/sink_count.so), as its "Testing it in C"
 *                      shows it: one frame accepted, one refused, both freed
 */
#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sys/stat.h>
#include <unistd.h>

#include <jansson.h>

#include <lcpipe/shm.h>

#include <lcp/stream.h>

#include "plugin_harness.h"

#include "../t_check.h"

/* ---- sink_null ---- */

START_TEST(null_frees_all)
{
	struct lcp_h *h = lcp_h_new(&(struct lcp_h_conf){.plugin = "sink_null"});
	static const uint8_t z[128];
	void *p[3], *s[2], *m[2];

	p[0] = lcp_h_pkt(h, z, 60);
	p[1] = lcp_h_pkt(h, z, 70);
	p[2] = lcp_h_pkt(h, z, 80);
	s[0] = lcp_h_stream(h, LCP_STREAM_EV_DATA, 1, 0, 0, z, 100);
	s[1] = lcp_h_stream(h, LCP_STREAM_EV_CLOSED, 1, 0, 100, NULL, 0);
	m[0] = lcp_h_msg(h, 0, 1, "hello", 5);
	m[1] = lcp_h_msg(h, 0, 2, "xyz", 3);
	ck_assert_uint_eq(lcp_h_mbufs_in_use(h), 5);
	lcp_h_push(h, "in", p, 3);
	lcp_h_push(h, "stream", s, 2);
	lcp_h_push(h, "msg", m, 2);
	ck_assert_uint_eq(lcp_h_mbufs_in_use(h), 0);
	ck_assert_uint_eq(lcp_h_msgs_freed(h), 2);
	lcp_h_ctrs_eq(h, {"in.in", 3}, {"stream.in", 2}, {"msg.in", 2},
		      {"bytes", 60 + 70 + 80 + 100 + 5 + 3});
	lcp_h_free(h);
}
END_TEST

START_TEST(null_count_bytes_off)
{
	struct lcp_h *h = lcp_h_new(
		&(struct lcp_h_conf){.plugin = "sink_null", .options = "{\"count_bytes\": false}"});
	static const uint8_t z[128];

	lcp_h_push1(h, "in", lcp_h_pkt(h, z, 64));
	lcp_h_push1(h, "msg", lcp_h_msg(h, 0, 1, "hello", 5));
	lcp_h_ctrs_eq(h, {"in.in", 1}, {"msg.in", 1}, {"bytes", 0});
	ck_assert_uint_eq(lcp_h_mbufs_in_use(h), 0);
	ck_assert_uint_eq(lcp_h_msgs_freed(h), 1);
	lcp_h_free(h);
}
END_TEST

/* ---- sink_file ---- */

static char *
t_slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	char *buf = malloc(1 << 16);

	ck_assert_msg(f != NULL, "%s: %s", path, strerror(errno));
	*len = fread(buf, 1, (1 << 16) - 1, f);
	buf[*len] = '\0';
	fclose(f);
	return buf;
}

/* a sink_file stage writing to <scratch>/out in format fmt; the path to *path,
 * the scratch directory to *dir (the test removes it) */
static struct lcp_h *
t_file(const char *fmt, char **path, char **dir)
{
	char opts[1024];
	struct lcp_h *h;

	*dir = lcp_h_scratch("sink_file_out");
	ck_assert(asprintf(path, "%s/out", *dir) > 0);
	snprintf(opts, sizeof(opts),
		 "{\"path\": \"%s\", \"format\": \"%s\", \"flush_bytes\": 65536}", *path, fmt);
	h = lcp_h_new(&(struct lcp_h_conf){.plugin = "sink_file", .options = opts});
	return h;
}

/* the end of a t_file test: the stage, the path and the scratch directory gone */
static void
t_file_end(struct lcp_h *h, char *path, char *dir)
{
	lcp_h_free(h);
	free(path);
	lcp_h_scratch_rm(dir);
}

START_TEST(file_payload)
{
	char *path, *got, *dir;
	size_t len;
	struct lcp_h *h = t_file("payload", &path, &dir);
	void *m[3];

	m[0] = lcp_h_msg(h, 0, 1, "a", 1);
	m[1] = lcp_h_msg(h, 1, 1, "bb", 2);
	m[2] = lcp_h_msg(h, 2, 1, "{\"x\":1}", 7);
	lcp_h_push(h, "in", m, 3);
	ck_assert_uint_eq(lcp_h_msgs_freed(h), 3);
	got = t_slurp(path, &len);
	ck_assert_uint_eq(len, 0); /* in the buffer until it fills or stop() */
	free(got);
	lcp_h_stop(h);
	got = t_slurp(path, &len);
	ck_assert_uint_eq(len, 13);
	ck_assert_mem_eq(got, "a\nbb\n{\"x\":1}\n", 13);
	/* counted as written: messages and their payload bytes */
	lcp_h_ctrs_eq(h, {"msgs", 3}, {"bytes", 1 + 2 + 7}, {"drop_write_error", 0});
	free(got);
	t_file_end(h, path, dir);
}
END_TEST

START_TEST(file_raw)
{
	char *path, *got, *dir;
	size_t len;
	struct lcp_h *h = t_file("raw", &path, &dir);
	struct lcp_msg *m[2];
	static const uint8_t want[] = {
		3, 0, 0, 0, 1, 0x08, 0x07, 0x06, 0x05, 0x04, 0x03, 0x02, 0x01, 'a',  'b',  'c',
		2, 0, 0, 0, 2, 0x11, 0,	   0,	 0,    0,    0,	   0,	 0,    0x00, 0xff,
	};

	m[0] = lcp_h_msg(h, 0, 1, "abc", 3);
	m[0]->rx_tsc = 0x0102030405060708ull;
	m[1] = lcp_h_msg(h, 5, 2, "\x00\xff", 2);
	m[1]->rx_tsc = 0x11;
	lcp_h_push(h, "in", (void **)m, 2);
	lcp_h_stop(h);
	got = t_slurp(path, &len);
	ck_assert_uint_eq(len, sizeof(want));
	ck_assert_mem_eq(got, want, sizeof(want));
	ck_assert_uint_eq(lcp_h_ctr(h, "msgs"), 2);
	ck_assert_uint_eq(lcp_h_ctr(h, "bytes"), 3 + 2);
	ck_assert_uint_eq(lcp_h_msgs_freed(h), 2);
	free(got);
	t_file_end(h, path, dir);
}
END_TEST

START_TEST(file_jsonl)
{
	char *path, *got, *dir, *line, *save = NULL;
	size_t len;
	struct lcp_h *h = t_file("jsonl", &path, &dir);
	void *m[3];
	unsigned n = 0;

	m[0] = lcp_h_msg(h, 4, 1, "{\"s\":\"SYM1\",\"n\":5}", 18);
	m[1] = lcp_h_msg(h, 5, 1, "he said \"hi\"\n", 13);
	m[2] = lcp_h_msg(h, 6, 2, "\x00\x01\x02\x03", 4);
	lcp_h_push(h, "in", m, 3);
	lcp_h_stop(h);
	got = t_slurp(path, &len);
	ck_assert_uint_gt(len, 0);
	ck_assert_uint_eq(got[len - 1], '\n');
	for (line = strtok_r(got, "\n", &save); line != NULL;
	     line = strtok_r(NULL, "\n", &save), n++) {
		json_error_t je;
		json_t *o = json_loads(line, 0, &je);

		ck_assert_msg(o != NULL, "line %u is not JSON: %s (%s)", n, je.text, line);
		ck_assert_int_eq(json_integer_value(json_object_get(o, "conn")), 4 + n);
		switch (n) {
		case 0:
			ck_assert_str_eq(json_string_value(json_object_get(o, "op")), "text");
			ck_assert_int_eq(json_integer_value(json_object_get(o, "len")), 18);
			ck_assert_int_eq(json_integer_value(
						 json_object_get(json_object_get(o, "data"), "n")),
					 5);
			ck_assert_str_eq(
				json_string_value(json_object_get(json_object_get(o, "data"), "s")),
				"SYM1");
			break;
		case 1:
			ck_assert_str_eq(json_string_value(json_object_get(o, "data")),
					 "he said \"hi\"\n");
			break;
		default:
			ck_assert_str_eq(json_string_value(json_object_get(o, "op")), "binary");
			ck_assert_str_eq(json_string_value(json_object_get(o, "data_b64")),
					 "AAECAw==");
			ck_assert_ptr_null(json_object_get(o, "data"));
			break;
		}
		json_decref(o);
	}
	ck_assert_uint_eq(n, 3);
	ck_assert_uint_eq(lcp_h_ctr(h, "msgs"), 3);
	ck_assert_uint_eq(lcp_h_ctr(h, "bytes"), 18 + 13 + 4);
	free(got);
	t_file_end(h, path, dir);
}
END_TEST

START_TEST(file_cannot_open)
{
	char err[4096];
	struct lcp_h *h = lcp_h_try_new(
		&(struct lcp_h_conf){.plugin = "sink_file",
				     .options = "{\"path\": \"/nonexistent-dir/x/out\"}"},
		err, sizeof(err));

	ck_assert_ptr_null(h);
	ck_assert_msg(strstr(err, "init or start failed") != NULL, "errors: %s", err);
}
END_TEST

/* ---- sink_echo ---- */

START_TEST(echo_sample)
{
	struct lcp_h *h = lcp_h_new(
		&(struct lcp_h_conf){.plugin = "sink_echo", .options = "{\"sample\": 2}"});
	struct lcp_msg *m[5], **out;
	static const char *const p[5] = {"m0", "m1x", "m2xx", "m3xxx", "m4xxxx"};

	for (unsigned i = 0; i < 5; i++)
		m[i] = lcp_h_msg(h, i, 1, p[i], strlen(p[i]));
	lcp_h_push(h, "in", (void **)m, 5);
	ck_assert_uint_eq(lcp_h_out_n(h, "out"), 3);
	out = (struct lcp_msg **)lcp_h_out(h, "out");
	ck_assert_ptr_eq(out[0], m[0]);
	ck_assert_ptr_eq(out[1], m[2]);
	ck_assert_ptr_eq(out[2], m[4]);
	ck_assert_uint_eq(lcp_h_msgs_freed(h), 2); /* m1, m3 */
	lcp_h_ctrs_eq(h, {"echoed", 3}, {"skipped", 2}, {"bytes", 2 + 4 + 6}, {"drop_unlinked", 0},
		      {"out.out", 3});
	lcp_h_out_clear(h, "out");
	ck_assert_uint_eq(lcp_h_msgs_freed(h), 5);
	lcp_h_free(h);
}
END_TEST

START_TEST(echo_unlinked)
{
	struct lcp_h *h = lcp_h_new(&(struct lcp_h_conf){.plugin = "sink_echo", .unlinked = "out"});
	void *m[3];

	for (unsigned i = 0; i < 3; i++)
		m[i] = lcp_h_msg(h, i, 1, "x", 1);
	lcp_h_push(h, "in", m, 3);
	ck_assert_uint_eq(lcp_h_msgs_freed(h), 3);
	lcp_h_ctrs_eq(h, {"drop_unlinked", 3}, {"out.drop_unlinked", 0}, {"echoed", 0},
		      {"in.in", 3});
	lcp_h_free(h);
}
END_TEST

/* ---- sink_count, the guide's example ---- */

START_TEST(sink_count_example)
{
	struct lcp_h *h =
		lcp_h_new(&(struct lcp_h_conf){.plugin = "sink_count",
					       .options = "{\"max_size\": 63}",
					       .plugin_dir = TEST_TOP_BUILDDIR "/doc/.libs"});
	static const uint8_t frame[64];
	void *p[2] = {lcp_h_pkt(h, frame, 60), lcp_h_pkt(h, frame, 64)};

	lcp_h_push(h, "in", p, 2);
	lcp_h_ctrs_eq(h, {"pkts", 1}, {"bytes", 60}, {"drop_too_big", 1});
	ck_assert_uint_eq(lcp_h_mbufs_in_use(h), 0); /* both freed */
	lcp_h_free(h);
}
END_TEST

/* ---- sink_shm ---- */

START_TEST(shm_ring)
{
	char path[128], opts[512], err[256], buf[64];
	static const char big[] = "a message of 20 b.";
	struct lcpshm *r = NULL;
	struct lcpshm_msg m;
	struct stat sb;
	struct lcp_h *h;
	void *in[3];

	snprintf(path, sizeof(path), "/dev/shm/lcph-%d-ring", (int)getpid());
	snprintf(opts, sizeof(opts), "{\"path\": \"%s\", \"slots\": 8, \"slot_size\": 16}", path);
	h = lcp_h_new(&(struct lcp_h_conf){.plugin = "sink_shm", .options = opts});
	ck_assert_msg(lcpshm_open(path, LCPSHM_OLDEST, &r, err, sizeof(err)) == 0, "%s", err);

	in[0] = lcp_h_msg(h, 3, 1, "alpha", 5);
	in[1] = lcp_h_msg(h, 4, 2, "b", 1);
	in[2] = lcp_h_msg(h, 3, 1, big, sizeof(big) - 1); /* 18 bytes > 16 */
	lcp_h_push(h, "msg", in, 3);
	lcp_h_push1(h, "msg", lcp_h_msg(h, 5, 1, "z", 1));
	lcp_h_ctrs_eq(h, {"published", 3}, {"drop_too_big", 1}, {"bytes", 5 + 1 + 1});
	ck_assert_uint_eq(lcp_h_msgs_freed(h), 4);

	ck_assert_int_eq(lcpshm_next(r, &m, buf, sizeof(buf)), 1);
	ck_assert_uint_eq(m.seq, 0);
	ck_assert_uint_eq(m.len, 5);
	ck_assert(memcmp(buf, "alpha", 5) == 0);
	ck_assert_uint_eq(m.conn_id, 3);
	ck_assert_uint_eq(m.opcode, 1);
	ck_assert_uint_eq(m.dropped, 0);
	ck_assert_int_eq(lcpshm_next(r, &m, buf, sizeof(buf)), 1);
	ck_assert_uint_eq(m.len, 1);
	ck_assert_uint_eq(buf[0], 'b');
	ck_assert_uint_eq(m.conn_id, 4);
	ck_assert_uint_eq(m.opcode, 2);
	ck_assert_int_eq(lcpshm_next(r, &m, buf, sizeof(buf)), 1);
	ck_assert_uint_eq(m.len, 1);
	ck_assert_uint_eq(buf[0], 'z');
	ck_assert_uint_eq(m.dropped, 1); /* the one left out before it */
	ck_assert_int_eq(lcpshm_next(r, &m, buf, sizeof(buf)), 0); /* nothing more yet */

	lcp_h_stop(h);
	ck_assert_int_eq(lcpshm_next(r, &m, buf, sizeof(buf)), -EPIPE);
	ck_assert_int_eq(lcpshm_status(r), LCPSHM_CLOSED);
	lcpshm_close(r);
	lcp_h_free(h);
	ck_assert_msg(stat(path, &sb) != 0 && errno == ENOENT, "%s is still there after fini (keep false)",
		      path);
}
END_TEST

/* ---- sink_pcap ---- */

START_TEST(pcap_frames)
{
	char *dir = lcp_h_scratch("sink_pcap_out"), *path, opts[512];
	uint8_t f[3][200];
	static const size_t flen[3] = { 60, 100, 200 };
	size_t len, off = 0;
	unsigned epb = 0;
	struct lcp_h *h;
	uint8_t *file;
	void *p[3];

	ck_assert(asprintf(&path, "%s/cap.pcapng", dir) > 0);
	snprintf(opts, sizeof(opts), "{\"path\": \"%s\", \"snaplen\": 64, \"timestamp\": \"capture\"}", path);
	h = lcp_h_new(&(struct lcp_h_conf){.plugin = "sink_pcap", .options = opts});
	for (unsigned i = 0; i < 3; i++) {
		for (unsigned k = 0; k < sizeof(f[i]); k++)
			f[i][k] = (uint8_t)(i * 31 + k);
		p[i] = lcp_h_pkt(h, f[i], flen[i]);
	}
	lcp_h_push(h, "in", p, 3);
	ck_assert_uint_eq(lcp_h_ctr(h, "packets"), 3);
	ck_assert_uint_eq(lcp_h_ctr(h, "truncated"), 2); /* 100 and 200 bytes > 64 */
	ck_assert_uint_eq(lcp_h_mbufs_in_use(h), 0);
	lcp_h_stop(h);
	lcp_h_free(h);

	/* pcapng (RFC draft-ietf-opsawg-pcapng): blocks of type, total length,
	 * body, total length; an EPB (type 6) body is interface id, timestamp
	 * high and low, captured length, original length, then the data */
	file = (uint8_t *)t_slurp(path, &len);
	while (off + 12 <= len) {
		uint32_t type, blen;

		memcpy(&type, file + off, 4);
		memcpy(&blen, file + off + 4, 4);
		ck_assert_msg(blen >= 12 && blen % 4 == 0 && off + blen <= len, "block at %zu: length %u", off, blen);
		if (type == 6) {
			uint32_t cap, orig;

			ck_assert_uint_lt(epb, 3);
			memcpy(&cap, file + off + 20, 4);
			memcpy(&orig, file + off + 24, 4);
			ck_assert_uint_eq(orig, flen[epb]);
			ck_assert_uint_eq(cap, flen[epb] < 64 ? flen[epb] : 64);
			ck_assert(memcmp(file + off + 28, f[epb], cap) == 0);
			epb++;
		}
		off += blen;
	}
	ck_assert_uint_eq(off, len);
	ck_assert_uint_eq(epb, 3);
	free(file);
	free(path);
	lcp_h_scratch_rm(dir);
}
END_TEST

static void
sinks_tcases(Suite *s)
{
	T_TESTS(t_tcase(s, "sink_null", NULL, NULL, 60), null_frees_all, null_count_bytes_off);
	T_TESTS(t_tcase(s, "sink_file", NULL, NULL, 60), file_payload, file_raw, file_jsonl,
		file_cannot_open);
	T_TESTS(t_tcase(s, "sink_echo", NULL, NULL, 60), echo_sample, echo_unlinked);
	T_TESTS(t_tcase(s, "sink_shm", NULL, NULL, 60), shm_ring);
	T_TESTS(t_tcase(s, "sink_pcap", NULL, NULL, 60), pcap_frames);
	T_TESTS(t_tcase(s, "sink_count", NULL, NULL, 60), sink_count_example);
}

T_MAIN("h_sinks", sinks_tcases)
