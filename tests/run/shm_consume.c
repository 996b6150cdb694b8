/* SPDX-License-Identifier: BSD-3-Clause
 * shm_consume — a consumer of sink_shm's ring built against liblcpipe-shm, for
 * tests/run/shm.sh. Reads every message until the producer closes the ring,
 * checks each payload as one of feedsim's JSON ticks ({"s":"SYM..","n":N,...}):
 * per (conn_id, symbol), n starts at 1 and grows by exactly 1, except across
 * messages the ring lost (gap_msgs counts what the holes account for), and
 * prints one JSON line of what it saw.
 *
 * usage: shm_consume PATH [--wait-file S] [--oldest] [--delay-us N] [--timeout S]
 *                          [--info]
 *   --wait-file S  retry the open for up to S seconds while PATH does not exist
 *   --oldest       start at the oldest message in the ring (default: the next)
 *   --delay-us N   sleep N us after each message (a slow consumer)
 *   --timeout S    give up after S seconds without a message (end "timeout")
 *   --info         print the ring's header as JSON and exit
 * Exit: 0 read to the end; 1 error; 3 not a ring (EBADMSG); 4 another layout
 * version (EPROTONOSUPPORT); 5 inconsistent header (EINVAL); 2 usage. */
#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <lcpipe/shm.h>

#define SC_KEYS 65536 /* (conn, symbol) pairs, open addressing */

struct sc_key {
	uint64_t conn;
	char sym[24];
	uint64_t last; /* 0: free */
};

struct sc_ctx {
	struct sc_key *keys;
	uint64_t ticks, bad, symbols, in_order, gaps, gap_msgs, seq_errors, first_not_one;
	uint64_t dropped_sum, loss_flags, full;
};

static uint64_t
sc_hash(uint64_t conn, const char *s, size_t n)
{
	uint64_t h = 1469598103934665603ull ^ conn;

	for (size_t i = 0; i < n; i++)
		h = (h ^ (uint8_t)s[i]) * 1099511628211ull;
	return h;
}

/* "s":"..." and "n":digits in a {...} payload */
static void
sc_tick(struct sc_ctx *c, uint64_t conn, const char *p, size_t len)
{
	const char *s, *e, *q;
	uint64_t n = 0, h;
	size_t sl;

	if (len < 2 || p[0] != '{' || p[len - 1] != '}') {
		c->bad++;
		return;
	}
	s = memmem(p, len, "\"s\":\"", 5);
	q = memmem(p, len, "\"n\":", 4);
	if (s == NULL || q == NULL) {
		c->bad++;
		return;
	}
	s += 5;
	e = memchr(s, '"', (size_t)(p + len - s));
	sl = e == NULL ? 0 : (size_t)(e - s);
	q += 4;
	if (sl == 0 || sl >= sizeof(((struct sc_key *)0)->sym) || q >= p + len || *q < '0' || *q > '9') {
		c->bad++;
		return;
	}
	for (; q < p + len && *q >= '0' && *q <= '9'; q++)
		n = n * 10 + (uint64_t)(*q - '0');
	c->ticks++;
	h = sc_hash(conn, s, sl);
	for (unsigned i = 0; i < SC_KEYS; i++) {
		struct sc_key *k = &c->keys[(h + i) & (SC_KEYS - 1)];

		if (k->last == 0) {
			k->conn = conn;
			memcpy(k->sym, s, sl);
			k->sym[sl] = '\0';
			k->last = n;
			c->symbols++;
			if (n != 1)
				c->first_not_one++;
			return;
		}
		if (k->conn == conn && strlen(k->sym) == sl && memcmp(k->sym, s, sl) == 0) {
			if (n == k->last + 1) {
				c->in_order++;
			} else if (n > k->last + 1) {
				c->gaps++;
				c->gap_msgs += n - k->last - 1;
			} else {
				c->seq_errors++;
			}
			k->last = n;
			return;
		}
	}
	c->full++;
}

static double
sc_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

int
main(int argc, char **argv)
{
	const char *path = NULL, *end = "closed";
	double wait_file = 0, timeout = 30, t0;
	unsigned flags = 0, delay_us = 0;
	bool info = false;
	struct lcpshm *h = NULL;
	struct lcpshm_stats st;
	struct lcpshm_info in;
	struct sc_ctx c;
	char err[512];
	uint64_t first;
	uint8_t *buf;
	int rc;

	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--oldest") == 0)
			flags |= LCPSHM_OLDEST;
		else if (strcmp(argv[i], "--info") == 0)
			info = true;
		else if (strcmp(argv[i], "--wait-file") == 0 && i + 1 < argc)
			wait_file = atof(argv[++i]);
		else if (strcmp(argv[i], "--delay-us") == 0 && i + 1 < argc)
			delay_us = (unsigned)atoi(argv[++i]);
		else if (strcmp(argv[i], "--timeout") == 0 && i + 1 < argc)
			timeout = atof(argv[++i]);
		else if (argv[i][0] != '-' && path == NULL)
			path = argv[i];
		else
			path = NULL, i = argc;
	}
	if (path == NULL) {
		fprintf(stderr, "usage: shm_consume PATH [--wait-file S] [--oldest] [--delay-us N] [--timeout S] [--info]\n");
		return 2;
	}
	t0 = sc_now();
	while ((rc = lcpshm_open(path, flags, &h, err, sizeof(err))) == -ENOENT && sc_now() - t0 < wait_file)
		usleep(1000);
	if (rc < 0) {
		fprintf(stderr, "shm_consume: %s\n", err);
		return rc == -EBADMSG ? 3 : rc == -EPROTONOSUPPORT ? 4 : rc == -EINVAL ? 5 : 1;
	}
	lcpshm_info(h, &in);
	if (info) {
		printf("{\"stage\":\"%s\",\"version\":%" PRIu32 ",\"slots\":%" PRIu32 ",\"slot_size\":%" PRIu32
		       ",\"slot_stride\":%" PRIu32 ",\"pid\":%" PRId32 ",\"tsc_hz\":%" PRIu64 ",\"write_seq\":%" PRIu64
		       ",\"drops\":%" PRIu64 ",\"closed\":%d,\"status\":\"%s\"}\n",
		       in.stage, in.version, in.slots, in.slot_size, in.slot_stride, in.pid, in.tsc_hz, in.write_seq,
		       in.drops, in.closed, lcpshm_state_name(lcpshm_status(h)));
		lcpshm_close(h);
		return 0;
	}
	first = in.next;
	memset(&c, 0, sizeof(c));
	c.keys = calloc(SC_KEYS, sizeof(*c.keys));
	buf = malloc(lcpshm_slot_size(h));
	if (c.keys == NULL || buf == NULL) {
		fprintf(stderr, "shm_consume: out of memory\n");
		return 1;
	}
	for (;;) {
		struct lcpshm_msg m;

		rc = lcpshm_wait(h, &m, buf, lcpshm_slot_size(h), (int64_t)(timeout * 1e9));
		if (rc == 0) {
			end = "timeout";
			break;
		}
		if (rc == -EPIPE)
			break;
		if (rc < 0) {
			fprintf(stderr, "shm_consume: %s: %s\n", path, strerror(-rc));
			return 1;
		}
		sc_tick(&c, m.conn_id, (const char *)buf, m.len);
		c.dropped_sum += m.dropped;
		c.loss_flags += (m.flags & LCPSHM_F_LOSS) != 0;
		if (delay_us != 0)
			usleep(delay_us);
	}
	lcpshm_stats(h, &st);
	lcpshm_info(h, &in);
	printf("{\"first\":%" PRIu64 ",\"received\":%" PRIu64 ",\"bytes\":%" PRIu64 ",\"overruns\":%" PRIu64
	       ",\"lost\":%" PRIu64 ",\"torn\":%" PRIu64 ",\"end\":\"%s\",\"status\":\"%s\",\"write_seq\":%" PRIu64
	       ",\"drops\":%" PRIu64 ",\"ticks\":%" PRIu64 ",\"bad\":%" PRIu64 ",\"symbols\":%" PRIu64
	       ",\"in_order\":%" PRIu64 ",\"gaps\":%" PRIu64 ",\"gap_msgs\":%" PRIu64 ",\"seq_errors\":%" PRIu64
	       ",\"first_not_one\":%" PRIu64 ",\"dropped_sum\":%" PRIu64 ",\"loss_flags\":%" PRIu64
	       ",\"keys_full\":%" PRIu64 "}\n",
	       first, st.received, st.bytes, st.overruns, st.lost, st.torn, end, lcpshm_state_name(lcpshm_status(h)),
	       in.write_seq, in.drops, c.ticks, c.bad, c.symbols, c.in_order, c.gaps, c.gap_msgs, c.seq_errors,
	       c.first_not_one, c.dropped_sum, c.loss_flags, c.full);
	free(buf);
	free(c.keys);
	lcpshm_close(h);
	return 0;
}
