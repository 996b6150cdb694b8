/* SPDX-License-Identifier: BSD-3-Clause
 * test_h_stage.c — what the engine gives every stage, through the plugin test
 * harness: its context (lcp_stage_ops.ctx_size, ABI 2.6, on the test-only
 * stage h_ctx) and lcp_stage_zmalloc() (on sink_null). "Freed" is read off the
 * EAL's heaps: once a first engine has come and gone, every socket's count of
 * allocated elements is the same after lcp_h_free() (or a refused
 * lcp_h_try_new()) as before it.
 *
 * ctx_engine_owned     init() finds a context in *ctx, cache-line aligned,
 *                      zeroed, ctx_size bytes of the EAL's heap; the engine
 *                      frees it after fini
 * ctx_failed_init      an init() that fails: the start is refused, and the
 *                      context is freed (no fini)
 * ctx_replaced         an init() that puts a block of its own in *ctx: the
 *                      start is refused with an error naming the stage and
 *                      ctx_size; fini gets the plugin's block and frees it, the
 *                      engine frees its own
 * stage_zmalloc        lcp_stage_zmalloc() on a sink_null stage: zeroed and
 *                      cache-line aligned; a size beyond the EAL's memory
 *                      gives NULL and one error line naming the plugin, the
 *                      stage, what and how many bytes
 */
#include <check.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <unistd.h>

#include <rte_common.h>
#include <rte_lcore.h>
#include <rte_malloc.h>

#include "plugin_harness.h"

#include "../t_check.h"

/* h_ctx's context size (tests/harness/h_ctx.c: 1000 bytes and a flag) */
#define H_CTX_SIZE 1001

/* elements allocated on the EAL's heaps, every socket */
static uint64_t
heap_count(void)
{
	uint64_t n = 0;

	for (unsigned i = 0; i < rte_socket_count(); i++) {
		struct rte_malloc_socket_stats s;

		ck_assert_int_eq(rte_malloc_get_socket_stats(rte_socket_id_by_idx(i), &s), 0);
		n += s.alloc_count;
	}
	return n;
}

/* the same, once a first engine has come and gone: what DPDK makes on first
 * use (such as the mbuf dynamic fields' registry) stays */
static uint64_t
heap_allocs(void)
{
	static bool warm;

	if (!warm) {
		lcp_h_free(lcp_h_new(&(struct lcp_h_conf){.plugin = "sink_null"}));
		warm = true;
	}
	return heap_count();
}

/* what fn(arg) writes to stderr, into buf */
static void
stderr_of(void (*fn)(void *), void *arg, char *buf, size_t len)
{
	FILE *f = tmpfile();
	size_t n;
	int saved;

	ck_assert_ptr_nonnull(f);
	fflush(stderr);
	saved = dup(2);
	dup2(fileno(f), 2);
	fn(arg);
	fflush(stderr);
	dup2(saved, 2);
	close(saved);
	rewind(f);
	n = fread(buf, 1, len - 1, f);
	buf[n] = '\0';
	fclose(f);
}

START_TEST(ctx_engine_owned)
{
	struct lcp_h *h;
	uint64_t before;
	size_t size = 0;
	void *x;

	before = heap_allocs();
	h = lcp_h_new(&(struct lcp_h_conf){.plugin = "h_ctx"});
	lcp_h_ctrs_eq(h, {"ctx_given", 1}, {"ctx_aligned", 1}, {"ctx_zeroed", 1});
	x = lcp_h_ctx(h);
	ck_assert_int_eq(rte_malloc_validate(x, &size), 0);
	ck_assert_uint_ge(size, H_CTX_SIZE);
	ck_assert_uint_eq(((const uint8_t *)x)[H_CTX_SIZE - 2], 0xa5); /* what init wrote */
	lcp_h_free(h);
	ck_assert_uint_eq(heap_allocs(), before);
}
END_TEST

struct try_arg {
	const char *options;
	char err[4096];
	struct lcp_h *h;
};

static void
try_new(void *arg)
{
	struct try_arg *a = arg;

	a->h = lcp_h_try_new(&(struct lcp_h_conf){.plugin = "h_ctx", .options = a->options},
			     a->err, sizeof(a->err));
}

/* h_ctx with these options must be refused at its start, log each of the
 * NULL-terminated lines and leave the EAL's heaps as it found them */
static void
refused(const char *options, const char *const *want)
{
	struct try_arg a = {.options = options};
	char log[8192];
	uint64_t before = heap_allocs();

	stderr_of(try_new, &a, log, sizeof(log));
	ck_assert_ptr_null(a.h);
	ck_assert_msg(strstr(a.err, "init or start failed") != NULL, "errors: %s", a.err);
	for (; *want != NULL; want++)
		ck_assert_msg(strstr(log, *want) != NULL, "no \"%s\" in the log: %s", *want, log);
	ck_assert_uint_eq(heap_allocs(), before);
}

START_TEST(ctx_failed_init)
{
	refused("{\"fail\": true}",
		(const char *const[]){"[h_ctx:dut] error: failing on purpose",
				      "[h_ctx:dut] error: init failed: Input/output error", NULL});
}
END_TEST

START_TEST(ctx_replaced)
{
	/* both blocks freed: the engine's, and the plugin's by its fini */
	refused("{\"replace\": true}",
		(const char *const[]){"[h_ctx:dut] error: init() replaced the context the engine "
				      "allocated (ctx_size 1001)",
				      NULL});
}
END_TEST

struct zmalloc_arg {
	struct lcp_stage *st;
	size_t size;
	void *p;
};

static void
zmalloc(void *arg)
{
	struct zmalloc_arg *a = arg;

	a->p = lcp_stage_zmalloc(a->st, "a test block", a->size);
}

START_TEST(stage_zmalloc)
{
	struct lcp_h *h = lcp_h_new(&(struct lcp_h_conf){.plugin = "sink_null"});
	struct zmalloc_arg a = {.st = lcp_h_stage(h), .size = 1000};
	const char *want =
		"[sink_null:dut] error: cannot allocate a test block (1099511627776 bytes) on socket ";
	unsigned char *p;
	char log[512];

	stderr_of(zmalloc, &a, log, sizeof(log));
	p = a.p;
	ck_assert_ptr_nonnull(p);
	ck_assert_str_eq(log, "");
	ck_assert_uint_eq((uintptr_t)p % RTE_CACHE_LINE_SIZE, 0);
	for (unsigned i = 0; i < 1000; i++)
		REQUIRE(p[i] == 0, "byte %u is %u", i, p[i]);
	rte_free(p);

	/* 1 TiB, where the EAL has 512 MB */
	a.size = (size_t)1 << 40;
	stderr_of(zmalloc, &a, log, sizeof(log));
	ck_assert_ptr_null(a.p);
	ck_assert_msg(strncmp(log, want, strlen(want)) == 0, "logged: %s", log);
	lcp_h_free(h);
}
END_TEST

static void
stage_tcases(Suite *s)
{
	T_TESTS(t_tcase(s, "ctx_size", NULL, NULL, 60), ctx_engine_owned, ctx_failed_init,
		ctx_replaced);
	T_TESTS(t_tcase(s, "lcp_stage_zmalloc", NULL, NULL, 60), stage_zmalloc);
}

T_MAIN("h_stage", stage_tcases)
