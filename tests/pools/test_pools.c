/* SPDX-License-Identifier: BSD-3-Clause
 * test_pools.c — the four pool strategy modules (plugins/pool_mempool,
 * pool_malloc, pool_rte_malloc, pool_ring) against the lcp_pool_ops contract of
 * framework/include/lcp/pool.h (L1: EAL in the test process, no hugepages).
 *
 * Every module is loaded as the engine loads it: the built .so found by the
 * project's registry (lcp_registry_get: ELF probe, dlopen, the loader's checks),
 * its options filled from JSON by the option walker (lcp_opt_apply). Each test
 * is a loop over the variants below (a module and its options), and each runs in
 * its own forked process with its own EAL (Check's fork mode, forced: EAL cannot
 * be initialised twice in a process, and mallopt() is process-wide), with
 * --lcores mapping lcores 0, 1, 2 onto the machine's CPUs (0@0,1@1,2@0 on two).
 *
 *   descriptor    kind pool, the name, the loader's required ops
 *   invalid       n == 0 and obj_size == 0 -> NULL, errno EINVAL
 *   single_bulk   get/put of 1 and of bursts of 32: objects distinct, in_use exact
 *   layout        obj_size 1, 16, 100, 512, 1400, 2048: all n objects 16-byte
 *                 aligned, their [addr, addr + obj_size) disjoint, each filled with
 *                 its own pattern and every pattern intact after all are written
 *   exhaustion    all n taken (a burst and singles) -> a get of 1 and of 5 fail
 *                 with -ENOBUFS, in_use stays n; 3 put back -> a get of 5 fails
 *                 (all or nothing: in_use n - 3), a get of 3 succeeds with objects
 *                 none of the held ones; all back -> in_use 0 and all n again in
 *                 one burst; a pool of n == 1 likewise
 *   names_memory  pools created with the same name (and a 25-character one) at
 *                 the same time all succeed; 100 create/get/put/destroy cycles
 *                 leave DPDK's heap and the memzones where they were, and glibc's
 *                 heap within less than one smallest chunk per cycle
 *   cross_lcore   lcore 1 gets 300,000 objects of 1400 B in bursts of 1..32,
 *                 stamps each (sequence, checksum word, last byte) and passes it
 *                 through an SP/SC rte_ring to lcore 2, which checks the stamps
 *                 and the order, writes the whole object and puts it back in
 *                 bursts -> every object arrived intact, in_use 0
 *   unique        lcores 1 and 2 get and put concurrently on a small pool (so gets
 *                 also fail), tagging each object with its owner while held: an
 *                 object handed out while another lcore (or the same) holds it,
 *                 or a tag changed while held, is reported -> none; in_use 0
 *
 * Workers never call ck_assert (another thread): they record the first failure
 * as text and stop; the main lcore asserts on it. Main sleeps while workers run
 * (lcore 2 shares CPU 0 with it on a 2-CPU machine).
 */
#include <check.h>
#include <errno.h>
#include <inttypes.h>
#include <malloc.h>
#include <sched.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

#include <rte_cycles.h>
#include <rte_eal.h>
#include <rte_errno.h>
#include <rte_launch.h>
#include <rte_lcore.h>
#include <rte_malloc.h>
#include <rte_memzone.h>
#include <rte_pause.h>
#include <rte_ring.h>

#include <lcp/pool.h>

#include "lcp_priv.h"

#include "../t_check.h" /* REQUIRE, t_tcase, T_TESTS */

/* ---- the variants: a module and its options ---- */

struct tp_variant {
	const char *plugin;
	const char *options; /* JSON object, NULL = defaults */
};

static const struct tp_variant tp_variants[] = {
	{"pool_mempool", NULL},
	{"pool_mempool", "{\"cache_size\": 0}"},
	{"pool_malloc", NULL},
#ifndef __SANITIZE_ADDRESS__
	/* trim at every free; objects of 2 KiB and more mmap'ed one by one. Not under
	 * AddressSanitizer (make check-sanitizers): its malloc replaces glibc's and its
	 * mallopt() always fails, so pool_malloc refuses these options (EINVAL), as
	 * documented for a mallopt that fails. */
	{"pool_malloc", "{\"trim_threshold\": 0, \"mmap_threshold\": 2048}"},
#endif
	{"pool_rte_malloc", NULL},
	{"pool_ring", NULL},
	{"pool_ring", "{\"align\": 16}"},
};
#define TP_N_VARIANTS ((int)(sizeof(tp_variants) / sizeof(tp_variants[0])))

/* the module under test in this (forked) process */
static struct {
	struct lcp_registry reg;
	const struct lcp_plugin *desc;
	const struct lcp_pool_ops *ops;
	void *conf;
	json_t *keep;
	char label[128]; /* "pool_malloc {...}", in every failure message */
	unsigned lc1, lc2; /* the two worker lcores */
} T;

static char tp_rtdir[512];

/* ---- EAL, once per forked test ---- */

static void
tp_eal_setup(void)
{
	char lcores[128], prefix[64];
	const char *argv[16];
	int argc = 0, ncpu = 0, cpus[3];
	cpu_set_t set;

	/* lcores 0, 1, 2 on the CPUs we may run on, round robin */
	ck_assert(sched_getaffinity(0, sizeof(set), &set) == 0);
	for (int c = 0; c < CPU_SETSIZE && ncpu < 3; c++)
		if (CPU_ISSET(c, &set))
			cpus[ncpu++] = c;
	ck_assert_msg(ncpu >= 1, "no CPU in the affinity mask");
	snprintf(lcores, sizeof(lcores), "--lcores=0@%d,1@%d,2@%d", cpus[0], cpus[1 % ncpu],
		 cpus[2 % ncpu]);
	snprintf(prefix, sizeof(prefix), "--file-prefix=lcptest-pools-%d", (int)getpid());
	argv[argc++] = "test_pools";
	argv[argc++] = "--no-huge";
	argv[argc++] = "-m";
	argv[argc++] = "64";
	argv[argc++] = "--no-pci";
	argv[argc++] = "--no-shconf";
	argv[argc++] = "--no-telemetry";
	argv[argc++] = "--log-level=lib.eal:error";
	argv[argc++] = lcores;
	argv[argc++] = prefix;
	argv[argc] = NULL;
	ck_assert_msg(rte_eal_init(argc, (char **)argv) == argc - 1,
		      "rte_eal_init(%s %s) failed: %s", lcores, prefix, rte_strerror(rte_errno));
	T.lc1 = rte_get_next_lcore(-1, 1, 0);
	T.lc2 = rte_get_next_lcore(T.lc1, 1, 0);
	ck_assert_msg(T.lc1 < RTE_MAX_LCORE && T.lc2 < RTE_MAX_LCORE, "need two worker lcores");
}

static void
tp_eal_teardown(void)
{

	if (T.keep != NULL)
		json_decref(T.keep);
	free(T.conf);
	rte_eal_cleanup();
}

/* load variant i through the registry and fill its options */
static void
tp_load(int i)
{
	const struct tp_variant *v = &tp_variants[i];
	struct lcp_errs errs = {0};
	struct lcp_plugin_file *pf;
	const struct lcp_plugin_file *refused = NULL;
	char dir[512];
	const char *dirs[1] = {dir};
	json_t *opts = NULL;

	snprintf(T.label, sizeof(T.label), "%s%s%s", v->plugin, v->options ? " " : "",
		 v->options ? v->options : "");
	snprintf(dir, sizeof(dir), "%s/plugins/%s/.libs", TEST_TOP_BUILDDIR, v->plugin);
	lcp_registry_init(&T.reg, dirs, 1);
	pf = lcp_registry_get(&T.reg, v->plugin, &refused);
	ck_assert_msg(pf != NULL, "%s: not found in %s (refused: %s)", v->plugin, dir,
		      refused && refused->refused ? refused->refused : "no");
	ck_assert_msg(strstr(pf->path, dir) == pf->path, "%s: loaded %s, not the one in %s",
		      v->plugin, pf->path, dir);
	T.desc = pf->desc;
	T.ops = pf->desc->ops;
	T.conf = calloc(1, T.desc->conf_size + 1);
	T.keep = json_array();
	if (v->options != NULL) {
		opts = json_loads(v->options, 0, NULL);
		ck_assert_msg(opts != NULL, "bad test JSON %s", v->options);
	}
	lcp_opt_apply(T.desc->options, T.desc->conf_size, opts, T.conf, "options", &errs, T.keep);
	ck_assert_msg(errs.n == 0, "%s: options refused: %s", T.label, errs.n ? errs.v[0] : "");
	if (opts != NULL)
		json_decref(opts);
}

static void *
tp_create(const char *name, size_t obj_size, unsigned n, unsigned cache)
{
	void *p;

	errno = 0;
	p = T.ops->create(T.conf, name, obj_size, n, cache, (int)rte_socket_id());
	ck_assert_msg(p != NULL, "%s: create(%s, obj_size %zu, n %u, cache %u) failed: %s",
		      T.label, name, obj_size, n, cache, strerror(errno));
	return p;
}

/* ---- worker plumbing ---- */

struct tp_err {
	char msg[256];
	volatile int set;
};

static void __attribute__((format(printf, 2, 3)))
tp_fail(struct tp_err *e, const char *fmt, ...)
{
	va_list ap;

	if (e->set)
		return;
	va_start(ap, fmt);
	vsnprintf(e->msg, sizeof(e->msg), fmt, ap);
	va_end(ap);
	__atomic_store_n(&e->set, 1, __ATOMIC_RELEASE);
}

static int
tp_failed(const struct tp_err *e)
{
	return __atomic_load_n(&e->set, __ATOMIC_ACQUIRE);
}

/* sleep on the main lcore until every worker is back (they time out
 * themselves; this only guards against a worker that hangs) */
static void
tp_wait_workers(void)
{
	unsigned l;
	int waited_ms = 0;

	RTE_LCORE_FOREACH_WORKER(l)
	{
		while (rte_eal_get_lcore_state(l) == RUNNING) {
			REQUIRE(waited_ms < 600000, "%s: lcore %u still running after 600 s", T.label, l);
			usleep(1000);
			waited_ms++;
		}
		rte_eal_wait_lcore(l);
	}
}

/* A worker fails when it made no progress for TP_STALL_S: on this shared
 * machine another process's SCHED_FIFO lcores may take both CPUs for a while,
 * so there is no bound on the whole test, only on a stall. */
#define TP_STALL_S 60

static uint64_t
tp_deadline(void)
{
	return rte_get_timer_cycles() + (uint64_t)TP_STALL_S * rte_get_timer_hz();
}

/* xorshift64*: the tests' seeded randomness */
static inline uint64_t
tp_rand(uint64_t *s)
{
	*s ^= *s >> 12;
	*s ^= *s << 25;
	*s ^= *s >> 27;
	return *s * 2685821657736338717ull;
}

static int
cmp_ptr(const void *a, const void *b)
{
	uintptr_t x = (uintptr_t)*(void *const *)a, y = (uintptr_t)*(void *const *)b;

	return x < y ? -1 : x > y;
}

/* objs[0..n-1] pairwise distinct, or the index of a duplicate */
static int
tp_distinct(void *const *objs, unsigned n)
{
	void **s = malloc(n * sizeof(*s));
	int dup = -1;

	ck_assert(s != NULL);
	memcpy(s, objs, n * sizeof(*s));
	qsort(s, n, sizeof(*s), cmp_ptr);
	for (unsigned i = 1; i < n && dup < 0; i++)
		if (s[i] == s[i - 1])
			dup = (int)i;
	free(s);
	return dup;
}

/* ---- descriptor ---- */

START_TEST(descriptor)
{
	tp_load(_i);
	ck_assert_uint_eq(T.desc->kind, LCP_KIND_POOL);
	ck_assert_str_eq(T.desc->name, tp_variants[_i].plugin);
	ck_assert_msg(T.desc->version != NULL && T.desc->summary != NULL, "%s: no version/summary",
		      T.label);
	ck_assert_msg(T.ops->create && T.ops->destroy && T.ops->get_bulk && T.ops->put_bulk &&
			      T.ops->in_use,
		      "%s: an op is NULL", T.label);
}
END_TEST

/* ---- invalid arguments ---- */

START_TEST(invalid)
{
	void *p;

	tp_load(_i);
	errno = 0;
	p = T.ops->create(T.conf, "zero_n", 64, 0, 0, (int)rte_socket_id());
	ck_assert_msg(p == NULL && errno == EINVAL, "%s: n == 0 gave %p, errno %d (%s)", T.label, p,
		      errno, strerror(errno));
	errno = 0;
	p = T.ops->create(T.conf, "zero_size", 0, 16, 0, (int)rte_socket_id());
	ck_assert_msg(p == NULL && errno == EINVAL, "%s: obj_size 0 gave %p, errno %d (%s)", T.label,
		      p, errno, strerror(errno));
}
END_TEST

/* pool_ring's option: align must be a power of two (the walker accepts 24) */
START_TEST(ring_align)
{
	struct {
		uint32_t align;
	} conf = {24};
	void *p;

	tp_load(5);
	errno = 0;
	p = T.ops->create(&conf, "align24", 64, 16, 0, (int)rte_socket_id());
	ck_assert_msg(p == NULL && errno == EINVAL, "pool_ring align 24 gave %p, errno %d", p, errno);
	conf.align = 256;
	p = T.ops->create(&conf, "align256", 100, 16, 0, (int)rte_socket_id());
	ck_assert_msg(p != NULL, "pool_ring align 256: %s", strerror(errno));
	{
		void *o[16];

		ck_assert_int_eq(T.ops->get_bulk(p, o, 16), 0);
		for (unsigned i = 0; i < 16; i++)
			ck_assert_msg((uintptr_t)o[i] % 256 == 0, "align 256: object %p", o[i]);
		T.ops->put_bulk(p, o, 16);
	}
	T.ops->destroy(p);
}
END_TEST

/* ---- single and bulk ---- */

START_TEST(single_bulk)
{
	void *p, *o, *b[32], *b2[32];

	tp_load(_i);
	p = tp_create("single", 100, 1024, 0);
	ck_assert_uint_eq(T.ops->in_use(p), 0);

	ck_assert_msg(T.ops->get_bulk(p, &o, 1) == 0, "%s: get 1 from a fresh pool", T.label);
	ck_assert_msg(o != NULL, "%s: get 1 gave NULL", T.label);
	ck_assert_uint_eq(T.ops->in_use(p), 1);
	memset(o, 0xa5, 100);
	T.ops->put_bulk(p, &o, 1);
	ck_assert_uint_eq(T.ops->in_use(p), 0);

	for (int round = 0; round < 100; round++) {
		ck_assert_msg(T.ops->get_bulk(p, b, 32) == 0, "%s: get 32, round %d", T.label, round);
		REQUIRE(T.ops->in_use(p) == 32, "%s: in_use %u after get 32", T.label,
			T.ops->in_use(p));
		ck_assert_msg(T.ops->get_bulk(p, b2, 32) == 0, "%s: second get 32", T.label);
		REQUIRE(T.ops->in_use(p) == 64, "%s: in_use %u after 2 x get 32", T.label,
			T.ops->in_use(p));
		{
			void *all[64];

			memcpy(all, b, sizeof(b));
			memcpy(all + 32, b2, sizeof(b2));
			REQUIRE(tp_distinct(all, 64) < 0, "%s: two held objects are the same",
				T.label);
		}
		for (unsigned i = 0; i < 32; i++)
			memset(b[i], i, 100);
		T.ops->put_bulk(p, b, 32);
		T.ops->put_bulk(p, b2, 32);
		REQUIRE(T.ops->in_use(p) == 0, "%s: in_use %u after put", T.label,
			T.ops->in_use(p));
	}
	T.ops->destroy(p);
}
END_TEST

/* ---- alignment, sizes, no overlap ---- */

static inline uint8_t
tp_pat(unsigned obj, size_t j)
{
	return (uint8_t)(obj * 131u + j * 7u + (j >> 8) + 1u);
}

START_TEST(layout)
{
	static const size_t sizes[] = {1, 16, 100, 512, 1400, 2048};
	const unsigned n = 300;
	void **o = calloc(n, sizeof(*o));
	void **s = calloc(n, sizeof(*s));

	ck_assert(o != NULL && s != NULL);
	tp_load(_i);
	for (unsigned k = 0; k < sizeof(sizes) / sizeof(sizes[0]); k++) {
		size_t sz = sizes[k];
		void *p = tp_create("layout", sz, n, 0);

		/* a burst, then singles */
		ck_assert_msg(T.ops->get_bulk(p, o, n / 2) == 0, "%s: get %u of %u (size %zu)",
			      T.label, n / 2, n, sz);
		for (unsigned i = n / 2; i < n; i++)
			REQUIRE(T.ops->get_bulk(p, &o[i], 1) == 0,
				"%s: get object %u of %u (size %zu) failed", T.label, i, n, sz);
		REQUIRE(T.ops->in_use(p) == n, "%s: in_use %u, all %u taken", T.label,
			T.ops->in_use(p), n);
		for (unsigned i = 0; i < n; i++) {
			REQUIRE((uintptr_t)o[i] % 16 == 0,
				"%s: object %u at %p is not 16-byte aligned (size %zu)", T.label, i,
				o[i], sz);
			for (size_t j = 0; j < sz; j++)
				((uint8_t *)o[i])[j] = tp_pat(i, j);
		}
		for (unsigned i = 0; i < n; i++)
			for (size_t j = 0; j < sz; j++)
				REQUIRE(((uint8_t *)o[i])[j] == tp_pat(i, j),
					"%s: object %u (size %zu) byte %zu overwritten: objects overlap",
					T.label, i, sz, j);
		memcpy(s, o, n * sizeof(*s));
		qsort(s, n, sizeof(*s), cmp_ptr);
		for (unsigned i = 1; i < n; i++)
			REQUIRE((uintptr_t)s[i] >= (uintptr_t)s[i - 1] + sz,
				"%s: objects %p and %p overlap (size %zu)", T.label, s[i - 1], s[i],
				sz);
		T.ops->put_bulk(p, o, n / 2);
		for (unsigned i = n / 2; i < n; i++)
			T.ops->put_bulk(p, &o[i], 1);
		REQUIRE(T.ops->in_use(p) == 0, "%s: in_use %u after all put back (size %zu)",
			T.label, T.ops->in_use(p), sz);
		T.ops->destroy(p);
	}
	free(o);
	free(s);
}
END_TEST

/* ---- exhaustion ---- */

START_TEST(exhaustion)
{
	const unsigned n = 100;
	void *o[100], *x[8], *p;

	tp_load(_i);
	p = tp_create("exhaust", 64, n, 0);
	ck_assert_msg(T.ops->get_bulk(p, o, 60) == 0, "%s: get 60 of 100", T.label);
	for (unsigned i = 60; i < n; i++)
		ck_assert_msg(T.ops->get_bulk(p, &o[i], 1) == 0, "%s: get object %u of %u", T.label,
			      i, n);
	ck_assert_msg(tp_distinct(o, n) < 0, "%s: the n objects are not distinct", T.label);
	ck_assert_uint_eq(T.ops->in_use(p), n);

	ck_assert_msg(T.ops->get_bulk(p, x, 1) == -ENOBUFS,
		      "%s: get 1 from an exhausted pool did not return -ENOBUFS", T.label);
	ck_assert_msg(T.ops->in_use(p) == n, "%s: in_use %u after a failed get (want %u)", T.label,
		      T.ops->in_use(p), n);
	ck_assert_msg(T.ops->get_bulk(p, x, 5) == -ENOBUFS,
		      "%s: get 5 from an exhausted pool did not return -ENOBUFS", T.label);
	ck_assert_uint_eq(T.ops->in_use(p), n);

	/* 3 back: 5 is all or nothing */
	T.ops->put_bulk(p, &o[10], 3);
	ck_assert_uint_eq(T.ops->in_use(p), n - 3);
	ck_assert_msg(T.ops->get_bulk(p, x, 5) == -ENOBUFS,
		      "%s: get 5 with 3 free did not return -ENOBUFS", T.label);
	ck_assert_msg(T.ops->in_use(p) == n - 3,
		      "%s: a failed get of 5 with 3 free took some: in_use %u, want %u", T.label,
		      T.ops->in_use(p), n - 3);
	ck_assert_msg(T.ops->get_bulk(p, x, 3) == 0,
		      "%s: get 3 with 3 free failed (a failed get of 5 kept some?)", T.label);
	for (unsigned i = 0; i < 3; i++)
		for (unsigned j = 0; j < n; j++)
			if (j < 10 || j >= 13)
				ck_assert_msg(x[i] != o[j], "%s: object %p handed out twice", T.label,
					      x[i]);
	memcpy(&o[10], x, 3 * sizeof(*x));
	ck_assert_uint_eq(T.ops->in_use(p), n);
	ck_assert_int_eq(T.ops->get_bulk(p, x, 1), -ENOBUFS);

	/* all back: the whole capacity again, in one burst */
	T.ops->put_bulk(p, o, n);
	ck_assert_uint_eq(T.ops->in_use(p), 0);
	ck_assert_msg(T.ops->get_bulk(p, o, n) == 0,
		      "%s: get all %u in one burst after putting all back failed", T.label, n);
	ck_assert_uint_eq(T.ops->in_use(p), n);
	ck_assert_int_eq(T.ops->get_bulk(p, x, 1), -ENOBUFS);
	T.ops->put_bulk(p, o, n);
	ck_assert_uint_eq(T.ops->in_use(p), 0);
	T.ops->destroy(p);

	/* n == 1 (pool_mempool: the cache is clamped to 0) */
	p = tp_create("tiny", 1, 1, 0);
	ck_assert_msg(T.ops->get_bulk(p, x, 1) == 0, "%s: n 1: get failed", T.label);
	ck_assert_msg(T.ops->get_bulk(p, &x[1], 1) == -ENOBUFS, "%s: n 1: second get did not fail",
		      T.label);
	T.ops->put_bulk(p, x, 1);
	ck_assert_int_eq(T.ops->get_bulk(p, x, 1), 0);
	ck_assert_uint_eq(T.ops->in_use(p), 1);
	T.ops->put_bulk(p, x, 1);
	ck_assert_uint_eq(T.ops->in_use(p), 0);
	T.ops->destroy(p);
}
END_TEST

/* ---- names and memory ---- */

static void
tp_mz_count(const struct rte_memzone *mz, void *arg)
{
	(*(unsigned *)arg)++;
}

struct tp_mem {
	uint64_t dpdk_bytes, dpdk_count;
	unsigned memzones;
	size_t glibc;
};

static void
tp_mem(struct tp_mem *m)
{
	struct rte_malloc_socket_stats st;

	memset(m, 0, sizeof(*m));
	for (unsigned s = 0; s < rte_socket_count(); s++) {
		if (rte_malloc_get_socket_stats(rte_socket_id_by_idx(s), &st) != 0)
			continue;
		m->dpdk_bytes += st.heap_allocsz_bytes;
		m->dpdk_count += st.alloc_count;
	}
	rte_memzone_walk(tp_mz_count, &m->memzones);
	m->glibc = mallinfo2().uordblks;
}

static void
tp_cycle(const char *name)
{
	void *p = tp_create(name, 1400, 200, 0), *o[40];

	REQUIRE(T.ops->get_bulk(p, o, 40) == 0, "%s: get 40", T.label);
	T.ops->put_bulk(p, o, 40);
	T.ops->destroy(p);
}

#define TP_CYCLES 100u

START_TEST(names_memory)
{
	static const char name25[] = "abcdefghijklmnopqrstuvwxy";
	struct tp_mem before, after;
	void *p[6];

	tp_load(_i);
	/* the same name three times, and the longest name three times, at once */
	for (unsigned i = 0; i < 6; i++)
		p[i] = tp_create(i < 3 ? "same" : name25, 64, 64, 0);
	for (unsigned i = 0; i < 6; i++)
		T.ops->destroy(p[i]);

	tp_cycle("warm"); /* first-use allocations (glibc's tcache, DPDK tailqs) */
	tp_mem(&before);
	for (unsigned i = 0; i < TP_CYCLES; i++)
		tp_cycle("cycle");
	tp_mem(&after);
	ck_assert_msg(after.dpdk_bytes == before.dpdk_bytes && after.dpdk_count == before.dpdk_count,
		      "%s: DPDK heap %" PRIu64 " B in %" PRIu64 " allocations before %u "
		      "create/destroy cycles, %" PRIu64 " B in %" PRIu64 " after",
		      T.label, before.dpdk_bytes, before.dpdk_count, TP_CYCLES, after.dpdk_bytes,
		      after.dpdk_count);
	ck_assert_msg(after.memzones == before.memzones,
		      "%s: %u memzones before %u create/destroy cycles, %u after", T.label,
		      before.memzones, TP_CYCLES, after.memzones);
	/* glibc's figure covers every thread's arena, and EAL's own threads may
	 * allocate meanwhile; a leak of even the smallest chunk (32 B) per cycle
	 * grows it by TP_CYCLES * 32 */
	ck_assert_msg(after.glibc < before.glibc + TP_CYCLES * 32,
		      "%s: glibc heap in use %zu B before %u create/destroy cycles, %zu after",
		      T.label, before.glibc, TP_CYCLES, after.glibc);
}
END_TEST

/* ---- alloc on one lcore, write and free on another ---- */

#define TP_XL_OBJS 300000u
#define TP_XL_SIZE 1400u
#define TP_XL_MAGIC 0x9e3779b97f4a7c15ull

struct tp_xl {
	void *pool;
	struct rte_ring *r;
	uint64_t produced, consumed, retries;
	struct tp_err err;
};

struct tp_stamp {
	uint64_t seq;
	uint64_t check; /* seq ^ TP_XL_MAGIC */
};

/* the other lcore has not caught up: pause once, or after TP_STALL_S without
 * progress (deadline) fail as "<who> for <n> s at seq <seq>" and return false */
static bool
tp_xl_wait(struct tp_xl *x, uint64_t deadline, const char *who, uint64_t seq)
{
	if (rte_get_timer_cycles() > deadline) {
		tp_fail(&x->err, "%s for %d s at seq %" PRIu64, who, TP_STALL_S, seq);
		return false;
	}
	rte_pause();
	return true;
}

static int
tp_xl_producer(void *arg)
{
	struct tp_xl *x = arg;
	void *o[32];
	uint64_t seq = 0, deadline = tp_deadline();

	while (seq < TP_XL_OBJS && !tp_failed(&x->err)) {
		unsigned b = 1 + (unsigned)(seq % 32), done = 0;

		if (b > TP_XL_OBJS - seq)
			b = (unsigned)(TP_XL_OBJS - seq);
		if (T.ops->get_bulk(x->pool, o, b) != 0) {
			/* the other lcore holds them (ring, its cache): wait */
			x->retries++;
			if (!tp_xl_wait(x, deadline, "producer: no object", seq))
				break;
			continue;
		}
		for (unsigned i = 0; i < b; i++) {
			struct tp_stamp *s = o[i];

			s->seq = seq + i;
			s->check = (seq + i) ^ TP_XL_MAGIC;
			((uint8_t *)o[i])[TP_XL_SIZE - 1] = (uint8_t)(seq + i);
		}
		while (done < b) {
			unsigned k = rte_ring_sp_enqueue_burst(x->r, o + done, b - done, NULL);

			if (k > 0)
				deadline = tp_deadline();
			done += k;
			if (done < b && rte_get_timer_cycles() > deadline) {
				tp_fail(&x->err, "producer: ring full for %d s", TP_STALL_S);
				return 0;
			}
		}
		seq += b;
		deadline = tp_deadline();
	}
	x->produced = seq;
	return 0;
}

static int
tp_xl_consumer(void *arg)
{
	struct tp_xl *x = arg;
	void *o[32];
	uint64_t want = 0, deadline = tp_deadline();

	while (want < TP_XL_OBJS && !tp_failed(&x->err)) {
		unsigned n = rte_ring_sc_dequeue_burst(x->r, o, 1 + (unsigned)(want % 29), NULL);

		if (n == 0) {
			if (!tp_xl_wait(x, deadline, "consumer: nothing", want))
				break;
			continue;
		}
		for (unsigned i = 0; i < n; i++, want++) {
			struct tp_stamp *s = o[i];
			uint8_t last = ((uint8_t *)o[i])[TP_XL_SIZE - 1];

			if (s->seq != want || s->check != (want ^ TP_XL_MAGIC) ||
			    last != (uint8_t)want) {
				tp_fail(&x->err,
					"consumer: object %p: seq %" PRIu64 " check %#" PRIx64
					" last byte %u, want seq %" PRIu64 " (corrupted in transit)",
					o[i], s->seq, s->check, last, want);
				return 0;
			}
			/* the consumer writes the whole object before freeing it */
			memset(o[i], (int)(want & 0xff), TP_XL_SIZE);
		}
		T.ops->put_bulk(x->pool, o, n);
		deadline = tp_deadline();
	}
	x->consumed = want;
	return 0;
}

START_TEST(cross_lcore)
{
	struct tp_xl x = {0};
	char rn[32];

	tp_load(_i);
	x.pool = tp_create("xlcore", TP_XL_SIZE, 2048, 0);
	snprintf(rn, sizeof(rn), "tpxl%d", (int)getpid());
	x.r = rte_ring_create(rn, 1024, (int)rte_socket_id(), RING_F_SP_ENQ | RING_F_SC_DEQ);
	ck_assert(x.r != NULL);
	ck_assert_int_eq(rte_eal_remote_launch(tp_xl_consumer, &x, T.lc2), 0);
	ck_assert_int_eq(rte_eal_remote_launch(tp_xl_producer, &x, T.lc1), 0);
	tp_wait_workers();
	ck_assert_msg(!x.err.set, "%s: %s", T.label, x.err.msg);
	ck_assert_msg(x.produced == TP_XL_OBJS && x.consumed == TP_XL_OBJS,
		      "%s: produced %" PRIu64 ", consumed %" PRIu64 " of %u", T.label, x.produced,
		      x.consumed, TP_XL_OBJS);
	ck_assert_msg(T.ops->in_use(x.pool) == 0,
		      "%s: in_use %u after every object was put back on the other lcore", T.label,
		      T.ops->in_use(x.pool));
	rte_ring_free(x.r);
	T.ops->destroy(x.pool);
}
END_TEST

/* ---- concurrent gets and puts never hand out a held object ---- */

#define TP_UQ_ITERS 200000u
#define TP_UQ_HOLD 48u

struct tp_uq {
	void *pool;
	uint64_t secret; /* owner tags: no allocator writes such a word */
	uint64_t gets[2], fails[2];
	struct tp_err err;
};

struct tp_uq_arg {
	struct tp_uq *u;
	unsigned who;
};

static inline uint64_t
tp_owned(const struct tp_uq *u, unsigned who)
{
	return u->secret ^ (0x100u + who);
}

static inline uint64_t
tp_freed(const struct tp_uq *u)
{
	return u->secret ^ 0xf7eeu;
}

static void
tp_uq_release(struct tp_uq *u, unsigned who, void **held, unsigned *n_held, unsigned k)
{
	for (unsigned i = 0; i < k; i++) {
		uint64_t *tag = held[i];
		uint64_t t = __atomic_load_n(tag, __ATOMIC_RELAXED);

		if (t != tp_owned(u, who))
			tp_fail(&u->err,
				"lcore #%u: object %p changed while held (tag %#" PRIx64
				"): handed out to someone else too",
				who, held[i], t);
		__atomic_store_n(tag, tp_freed(u), __ATOMIC_RELAXED);
	}
	T.ops->put_bulk(u->pool, held, k);
	memmove(held, held + k, (*n_held - k) * sizeof(*held));
	*n_held -= k;
}

static int
tp_uq_worker(void *arg)
{
	struct tp_uq_arg *a = arg;
	struct tp_uq *u = a->u;
	unsigned who = a->who, n_held = 0;
	void *held[TP_UQ_HOLD + 8], *o[8];
	uint64_t rs = 0x12345678u + who * 0x9e3779b9u, deadline = tp_deadline();

	for (unsigned it = 0; it < TP_UQ_ITERS && !tp_failed(&u->err); it++) {
		unsigned k = 1 + (unsigned)(tp_rand(&rs) % 8);

		if (n_held + k <= TP_UQ_HOLD && T.ops->get_bulk(u->pool, o, k) == 0) {
			u->gets[who] += k;
			for (unsigned i = 0; i < k; i++) {
				uint64_t *tag = o[i];
				uint64_t t = __atomic_load_n(tag, __ATOMIC_RELAXED);

				if (t == tp_owned(u, 0) || t == tp_owned(u, 1) ||
				    !__atomic_compare_exchange_n(tag, &t, tp_owned(u, who), false,
								 __ATOMIC_RELAXED, __ATOMIC_RELAXED)) {
					tp_fail(&u->err,
						"lcore #%u: got object %p while it is held (tag %#" PRIx64
						", owner #%d)",
						who, o[i], t,
						t == tp_owned(u, 0) ? 0 : t == tp_owned(u, 1) ? 1 : -1);
					return 0;
				}
				held[n_held++] = o[i];
			}
		} else if (n_held + k <= TP_UQ_HOLD) {
			u->fails[who]++;
		}
		/* give back a random number of the oldest, sometimes all */
		if (n_held > 0 && tp_rand(&rs) % 3 == 0)
			tp_uq_release(u, who, held, &n_held,
				      1 + (unsigned)(tp_rand(&rs) % n_held));
		/* every iteration is progress; a stall is a worker descheduled */
		if ((it & 1023) == 0) {
			uint64_t now = rte_get_timer_cycles();

			if (now > deadline) {
				tp_fail(&u->err, "lcore #%u: 1024 iterations took over %d s", who,
					TP_STALL_S);
				break;
			}
			deadline = now + (uint64_t)TP_STALL_S * rte_get_timer_hz();
		}
	}
	if (n_held > 0)
		tp_uq_release(u, who, held, &n_held, n_held);
	return 0;
}

START_TEST(unique)
{
	struct tp_uq u = {0};
	struct tp_uq_arg a[2] = {{&u, 0}, {&u, 1}};

	tp_load(_i);
	ck_assert(getrandom(&u.secret, sizeof(u.secret), 0) == sizeof(u.secret));
	u.secret |= 1ull << 63; /* not a user-space pointer, not a size */
	u.pool = tp_create("unique", 64, 96, 0);
	ck_assert_int_eq(rte_eal_remote_launch(tp_uq_worker, &a[0], T.lc1), 0);
	ck_assert_int_eq(rte_eal_remote_launch(tp_uq_worker, &a[1], T.lc2), 0);
	tp_wait_workers();
	ck_assert_msg(!u.err.set, "%s: %s", T.label, u.err.msg);
	ck_assert_msg(u.gets[0] > 0 && u.gets[1] > 0, "%s: gets: %" PRIu64 " and %" PRIu64,
		      T.label, u.gets[0], u.gets[1]);
	ck_assert_msg(T.ops->in_use(u.pool) == 0, "%s: in_use %u after both lcores put all back",
		      T.label, T.ops->in_use(u.pool));
	T.ops->destroy(u.pool);
}
END_TEST

static Suite *
pools_suite(void)
{
	Suite *s = suite_create("pools");
	TCase *tc;

	tc = t_tcase(s, "contract", tp_eal_setup, tp_eal_teardown, 60);
	tcase_add_loop_test(tc, descriptor, 0, TP_N_VARIANTS);
	tcase_add_loop_test(tc, invalid, 0, TP_N_VARIANTS);
	T_TESTS(tc, ring_align);
	tcase_add_loop_test(tc, single_bulk, 0, TP_N_VARIANTS);
	tcase_add_loop_test(tc, layout, 0, TP_N_VARIANTS);
	tcase_add_loop_test(tc, exhaustion, 0, TP_N_VARIANTS);
	tcase_add_loop_test(tc, names_memory, 0, TP_N_VARIANTS);

	/* long: a stall (TP_STALL_S) fails, a slow machine does not */
	tc = t_tcase(s, "lcores", tp_eal_setup, tp_eal_teardown, 900);
	tcase_add_loop_test(tc, cross_lcore, 0, TP_N_VARIANTS);
	tcase_add_loop_test(tc, unique, 0, TP_N_VARIANTS);
	return s;
}

int
main(void)
{
	SRunner *sr = srunner_create(pools_suite());
	char cmd[600];
	int failed;

	/* EAL's runtime files under the build tree, removed at the end */
	snprintf(tp_rtdir, sizeof(tp_rtdir), "%s/pools/scratch-rt-%d", TEST_BUILDDIR,
		 (int)getpid());
	snprintf(cmd, sizeof(cmd), "mkdir -p '%s'", tp_rtdir);
	if (system(cmd) != 0)
		return EXIT_FAILURE;
	setenv("RUNTIME_DIRECTORY", tp_rtdir, 1);
	/* one EAL per test: never run two tests in one process */
	srunner_set_fork_status(sr, CK_FORK);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tp_rtdir);
	if (system(cmd) != 0)
		return EXIT_FAILURE;
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
