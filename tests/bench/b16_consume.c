/* SPDX-License-Identifier: BSD-3-Clause
 * b16_consume — B16's consumer (tests/bench/b16.sh, doc/benchmarks.md "B16"):
 * reads a sink_shm ring through liblcpipe-shm and measures, per message, the
 * TSC at which the read returned minus the message's rx_tsc (frame received by
 * lcpipe's port) and minus its pub_tsc (sink_shm published its burst), and the
 * cycles of the lcpshm_next() call that returned it (the consumer's cost: the
 * seqlock read and the copy). Prints one JSON line with p50/p99/p99.9/max.
 *
 *   b16_consume ring PATH --mode spin|wait [--wait-file S] [--max N] [--warmup N]
 *       spin: lcpshm_next() in a busy loop; wait: lcpshm_wait() (spins 50 us,
 *       then sleeps 50 us at a time); the first N messages (warmup) are read but
 *       not measured
 *   b16_consume anchor --n N --gap-ns G --cpu-a A --cpu-b B
 *       the same-run anchor: a thread on CPU A stamps a cache line (TSC, then a
 *       sequence number, release) every G ns; a thread on CPU B spins on it and
 *       records the TSC when it sees each new one minus the stamp: one cache
 *       line's trip between the two CPUs, the floor of any shared-memory hop */
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <x86intrin.h>

#include <lcpipe/shm.h>

static int
cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* "name":{"n":..,"p50":..,"p99":..,"p999":..,"max":..,"mean":..} in cycles (sorts v) */
static void
pr_dist(const char *name, uint64_t *v, size_t n, int comma)
{
	double sum = 0;

	qsort(v, n, sizeof(*v), cmp_u64);
	for (size_t i = 0; i < n; i++)
		sum += (double)v[i];
	if (n == 0) {
		printf("\"%s\":{\"n\":0}%s", name, comma ? "," : "");
		return;
	}
	printf("\"%s\":{\"n\":%zu,\"p50\":%" PRIu64 ",\"p99\":%" PRIu64 ",\"p999\":%" PRIu64 ",\"max\":%" PRIu64
	       ",\"mean\":%.1f}%s",
	       name, n, v[n / 2], v[(size_t)((double)n * 0.99)], v[(size_t)((double)n * 0.999)], v[n - 1],
	       sum / (double)n, comma ? "," : "");
}

static double
now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int
run_ring(const char *path, int wait_mode, double wait_file, size_t max, uint64_t warmup)
{
	struct lcpshm *h = NULL;
	struct lcpshm_stats st;
	struct lcpshm_info in;
	uint64_t *rx, *pub, *cost, slow = 0, slow_first = 0, slow_last = 0, skipped = 0;
	size_t n = 0;
	char err[512];
	uint8_t *buf;
	double t0 = now_s();
	int rc;

	while ((rc = lcpshm_open(path, LCPSHM_OLDEST, &h, err, sizeof(err))) == -ENOENT && now_s() - t0 < wait_file)
		usleep(1000);
	if (rc < 0) {
		fprintf(stderr, "b16_consume: %s\n", err);
		return 1;
	}
	lcpshm_info(h, &in);
	rx = malloc(max * sizeof(*rx));
	pub = malloc(max * sizeof(*pub));
	cost = malloc(max * sizeof(*cost));
	buf = malloc(lcpshm_slot_size(h));
	if (rx == NULL || pub == NULL || cost == NULL || buf == NULL) {
		fprintf(stderr, "b16_consume: out of memory\n");
		return 1;
	}
	memset(rx, 0, max * sizeof(*rx)); /* touch the pages now */
	memset(pub, 0, max * sizeof(*pub));
	memset(cost, 0, max * sizeof(*cost));
	for (;;) {
		struct lcpshm_msg m;
		uint64_t a, b;

		if (wait_mode || n == 0) {
			/* spin mode too until the first message: a SCHED_FIFO spinner must
			 * not use up its RT budget (950 ms/s) before the feed starts */
			rc = lcpshm_wait(h, &m, buf, lcpshm_slot_size(h), 30000000000ll);
			b = __rdtsc();
			a = b;
		} else {
			a = __rdtsc();
			rc = lcpshm_next(h, &m, buf, lcpshm_slot_size(h));
			b = __rdtsc();
		}
		if (rc == 1) {
			if (m.seq < warmup) { /* the start-up transient: not measured */
				skipped++;
				continue;
			}
			if (b - m.pub_tsc > in.tsc_hz / 1000) { /* later than 1 ms after the publish */
				if (slow++ == 0)
					slow_first = m.seq;
				slow_last = m.seq;
			}
			if (n < max) {
				rx[n] = b - m.rx_tsc;
				pub[n] = b - m.pub_tsc;
				cost[n] = b - a;
				n++;
			}
			continue;
		}
		if (rc == 0 && !wait_mode && n > 0)
			continue;
		break; /* -EPIPE: closed and drained; 0 in wait mode: 30 s without a message */
	}
	lcpshm_stats(h, &st);
	lcpshm_info(h, &in);
	printf("{\"mode\":\"%s\",\"tsc_hz\":%" PRIu64 ",\"received\":%" PRIu64 ",\"lost\":%" PRIu64
	       ",\"overruns\":%" PRIu64 ",\"torn\":%" PRIu64 ",\"published\":%" PRIu64 ",\"end\":\"%s\","
	       "\"warmup_skipped\":%" PRIu64 ",\"over_1ms\":{\"n\":%" PRIu64 ",\"first_seq\":%" PRIu64 ",\"last_seq\":%" PRIu64 "},",
	       wait_mode ? "wait" : "spin", in.tsc_hz, st.received, st.lost, st.overruns, st.torn, in.write_seq,
	       rc == -EPIPE ? "closed" : rc == 0 ? "timeout" : "error", skipped, slow, slow_first, slow_last);
	pr_dist("rx_to_read", rx, n, 1);
	pr_dist("pub_to_read", pub, n, 1);
	if (wait_mode)
		printf("\"next_cost\":{\"n\":0}}\n");
	else {
		pr_dist("next_cost", cost, n, 0);
		printf("}\n");
	}
	lcpshm_close(h);
	return rc == -EPIPE ? 0 : 1;
}

/* ---- the anchor: one cache line between two CPUs ---- */

struct anc {
	_Alignas(128) uint64_t stamp; /* the writer's TSC: one word, no tearing */
	_Alignas(128) uint64_t n, gap;
	int cpu_a, cpu_b;
	uint64_t *lat;
	uint64_t negative; /* reads whose TSC was below the stamp (TSC skew between the CPUs) */
};

static void
pin(int cpu)
{
	cpu_set_t s;

	CPU_ZERO(&s);
	CPU_SET(cpu, &s);
	if (pthread_setaffinity_np(pthread_self(), sizeof(s), &s) != 0)
		fprintf(stderr, "b16_consume: cannot pin a thread to CPU %d\n", cpu);
}

static void *
anc_writer(void *arg)
{
	struct anc *a = arg;
	uint64_t next;

	pin(a->cpu_a);
	usleep(10000);
	next = __rdtsc();
	for (uint64_t i = 1; i <= a->n; i++) {
		while (__rdtsc() < next)
			_mm_pause();
		__atomic_store_n(&a->stamp, __rdtsc(), __ATOMIC_RELEASE);
		next += a->gap;
	}
	return NULL;
}

static int
run_anchor(uint64_t n, uint64_t gap_ns, int cpu_a, int cpu_b)
{
	struct anc *a = aligned_alloc(128, sizeof(*a));
	pthread_t t;
	uint64_t hz, t0, s0 = now_s() * 1e9, seen = 0, got = 0;
	double s1;

	/* the TSC rate, measured: 100 ms against CLOCK_MONOTONIC */
	t0 = __rdtsc();
	usleep(100000);
	s1 = now_s() * 1e9;
	hz = (uint64_t)((double)(__rdtsc() - t0) * 1e9 / (s1 - (double)s0));
	memset(a, 0, sizeof(*a));
	a->n = n;
	a->gap = gap_ns * hz / 1000000000u;
	a->cpu_a = cpu_a;
	a->cpu_b = cpu_b;
	a->lat = calloc(n, sizeof(uint64_t));
	pin(cpu_b);
	{
		/* the writer starts on its CPU: under SCHED_FIFO a thread left on ours
		 * would never run while we spin */
		pthread_attr_t at;
		cpu_set_t s;

		CPU_ZERO(&s);
		CPU_SET(cpu_a, &s);
		pthread_attr_init(&at);
		pthread_attr_setinheritsched(&at, PTHREAD_INHERIT_SCHED);
		if (pthread_attr_setaffinity_np(&at, sizeof(s), &s) != 0 || pthread_create(&t, &at, anc_writer, a) != 0) {
			fprintf(stderr, "b16_consume: cannot start the writer on CPU %d\n", cpu_a);
			return 1;
		}
		pthread_attr_destroy(&at);
	}
	/* until the writer is done: its last stamp, then no new one for 10 ms */
	for (uint64_t idle = 0, last_change = __rdtsc(); got < n; idle++) {
		uint64_t s = __atomic_load_n(&a->stamp, __ATOMIC_ACQUIRE);
		uint64_t now = __rdtsc();

		if (s != seen) {
			if (now >= s)
				a->lat[got++] = now - s;
			else
				a->negative++;
			seen = s;
			last_change = now;
		} else {
			if (seen != 0 && now - last_change > hz / 100)
				break;
			_mm_pause();
		}
	}
	pthread_join(t, NULL);
	printf("{\"mode\":\"anchor\",\"tsc_hz\":%" PRIu64 ",\"cpu_a\":%d,\"cpu_b\":%d,\"gap_ns\":%" PRIu64
	       ",\"stamps\":%" PRIu64 ",\"negative\":%" PRIu64 ",",
	       hz, cpu_a, cpu_b, gap_ns, n, a->negative);
	pr_dist("line_to_read", a->lat, got, 0);
	printf("}\n");
	return 0;
}

int
main(int argc, char **argv)
{
	if (argc >= 3 && strcmp(argv[1], "ring") == 0) {
		int wait_mode = 0;
		double wf = 30;
		size_t max = 10000000;
		uint64_t warmup = 0;

		for (int i = 3; i + 1 < argc; i += 2) {
			if (strcmp(argv[i], "--mode") == 0)
				wait_mode = strcmp(argv[i + 1], "wait") == 0;
			else if (strcmp(argv[i], "--wait-file") == 0)
				wf = atof(argv[i + 1]);
			else if (strcmp(argv[i], "--max") == 0)
				max = (size_t)atoll(argv[i + 1]);
			else if (strcmp(argv[i], "--warmup") == 0)
				warmup = strtoull(argv[i + 1], NULL, 10);
		}
		return run_ring(argv[2], wait_mode, wf, max, warmup);
	}
	if (argc >= 2 && strcmp(argv[1], "anchor") == 0) {
		uint64_t n = 100000, gap = 10000;
		int ca = 1, cb = 0;

		for (int i = 2; i + 1 < argc; i += 2) {
			if (strcmp(argv[i], "--n") == 0)
				n = strtoull(argv[i + 1], NULL, 10);
			else if (strcmp(argv[i], "--gap-ns") == 0)
				gap = strtoull(argv[i + 1], NULL, 10);
			else if (strcmp(argv[i], "--cpu-a") == 0)
				ca = atoi(argv[i + 1]);
			else if (strcmp(argv[i], "--cpu-b") == 0)
				cb = atoi(argv[i + 1]);
		}
		return run_anchor(n, gap, ca, cb);
	}
	fprintf(stderr, "usage: b16_consume ring PATH [--mode spin|wait] [--wait-file S] [--max N] [--warmup N]\n"
			"       b16_consume anchor [--n N] [--gap-ns G] [--cpu-a A] [--cpu-b B]\n");
	return 2;
}
