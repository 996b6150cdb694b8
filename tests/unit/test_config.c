/* SPDX-License-Identifier: BSD-3-Clause
 * test_config.c — lcp_cfg_load() and lcp_eal_lcores() through the C API, no EAL.
 *
 * The message corpus is tests/conf-bad (through the CLI); here: the embedded
 * default job equals the shipped conf/default.json and validates, plugin_path is
 * relative to the config file, "--" EAL arguments replace the config's, the
 * lcore sets EAL will have are read right from -l / --lcores / -c / --main-lcore,
 * a message loop of pass-through stages is refused with its path, a pool smaller
 * than what the stages and rings can hold gets a warning.
 */
#include <check.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>

#include "testutil.h"

#include "../t_check.h"

static struct lcp_errs errs;
static char *cf_dir, *cf_path; /* load_conf's, freed by teardown */

static void
setup(void)
{
	memset(&errs, 0, sizeof(errs));
	unsetenv("LCP_PLUGIN_PATH");
}

static void
teardown(void)
{
	lcp_errs_free(&errs);
	free(cf_path);
	free(cf_dir);
	cf_path = cf_dir = NULL;
}

static void
assert_no_errs(void)
{
	if (errs.n)
		t_errs_dump(&errs);
	ck_assert_uint_eq(errs.n, 0);
}

/* ================= the default job ================= */

START_TEST(default_config_valid)
{
	struct lcp_cfg *c = lcp_cfg_load(NULL, NULL, 0, &errs);

	ck_assert_ptr_nonnull(c);
	assert_no_errs();
	ck_assert_str_eq(c->path, "(default config)");
	ck_assert_uint_eq(c->n_stages, 8);
	ck_assert_uint_eq(c->n_links, 10);
	for (unsigned i = 0; i < c->n_stages; i++) {
		ck_assert_ptr_nonnull(c->stages[i].pf);
		ck_assert_uint_eq(c->stages[i].lcore, 1);
	}
	for (unsigned i = 0; i < c->n_links; i++)
		ck_assert(c->links[i].valid);
	ck_assert_uint_eq(c->main_lcore, 0);
	ck_assert(c->lcore_avail[0] && c->lcore_avail[1] && !c->lcore_avail[2]);
	ck_assert_double_eq(c->eng.duration, 5);
	lcp_cfg_free(c);
}
END_TEST

/* conf/default.json is the embedded default, JSON-equal (a test, not a promise) */
START_TEST(default_config_shipped)
{
	json_error_t je;
	json_t *shipped = json_load_file(TEST_TOP_SRCDIR "/conf/default.json", JSON_REJECT_DUPLICATES, &je);
	json_t *embedded = json_loads(lcp_default_config, JSON_REJECT_DUPLICATES, &je);

	ck_assert_msg(shipped != NULL, "conf/default.json: %d:%d: %s", je.line, je.column, je.text);
	ck_assert_ptr_nonnull(embedded);
	if (!json_equal(shipped, embedded)) {
		char *a = json_dumps(shipped, JSON_SORT_KEYS), *b = json_dumps(embedded, JSON_SORT_KEYS);

		ck_abort_msg("conf/default.json differs from lcp_default_config (framework/config.c):\n"
			     "  conf/default.json: %s\n  embedded:          %s", a, b);
	}
	json_decref(shipped);
	json_decref(embedded);
}
END_TEST

/* ================= files ================= */

/* text as the file name in a fresh scratch directory (cf_dir, the file
 * cf_path), loaded */
static struct lcp_cfg *
load_conf(const char *scratch, const char *name, const char *text)
{
	cf_dir = t_scratch(scratch);
	ck_assert(asprintf(&cf_path, "%s/%s", cf_dir, name) > 0);
	t_write(cf_path, text, strlen(text));
	return lcp_cfg_load(cf_path, NULL, 0, &errs);
}

START_TEST(plugin_path_relative_to_config)
{
	char *want;
	struct lcp_cfg *c;

	/* scratch is TEST_BUILDDIR/unit/scratch-config-pp: ../../plugins is ours */
	c = load_conf("config-pp", "pp.json",
		      "{\"eal\": [\"-l\", \"0,1\"], \"plugin_path\": [\"../../plugins/good/.libs\"],\n"
		      " \"stages\": [{\"name\": \"a\", \"plugin\": \"test_src\"},\n"
		      "            {\"name\": \"b\", \"plugin\": \"test_sink\"}],\n"
		      " \"links\": [\"a.out -> b.in\"]}\n");
	ck_assert_ptr_nonnull(c);
	assert_no_errs();
	ck_assert_uint_eq(c->n_plugin_path, 1);
	ck_assert(asprintf(&want, "%s/../../plugins/good/.libs", cf_dir) > 0);
	ck_assert_str_eq(c->plugin_path[0], want);
	ck_assert_str_eq(c->reg.dirs[0], want);
	free(want);
	ck_assert(asprintf(&want, "%s/../../plugins/good/.libs/test_src.so", cf_dir) > 0);
	ck_assert_str_eq(c->stages[0].pf->path, want);
	free(want);
	lcp_cfg_free(c);
}
END_TEST

START_TEST(plugin_path_absolute)
{
	struct lcp_cfg *c;

	c = load_conf("config-ppabs", "pp.json",
		      "{\"eal\": [\"-l\", \"0,1\"], \"plugin_path\": [\"" T_GOOD "\"],\n"
		      " \"stages\": [{\"name\": \"a\", \"plugin\": \"test_opts\", \"options\": {\"label\": \"xy\"}}]}\n");
	ck_assert_ptr_nonnull(c);
	assert_no_errs();
	ck_assert_str_eq(c->stages[0].pf->path, T_GOOD "/test_opts.so");
	lcp_cfg_free(c);
}
END_TEST

/* a plugin of the wrong kind for its role: the loader accepts it, the config
 * refuses the use, naming the file */
START_TEST(wrong_kind_for_role)
{
	struct lcp_cfg *c;

	c = load_conf("config-kind", "k.json",
		      "{\"eal\": [\"-l\", \"0,1\"], \"plugin_path\": [\"" T_GOOD "\"],\n"
		      " \"strategies\": {\"counters\": \"test_sink\"},\n"
		      " \"stages\": [{\"name\": \"a\", \"plugin\": \"test_counters\"}]}\n");
	ck_assert_ptr_nonnull(c);
	if (errs.n != 2)
		t_errs_dump(&errs);
	ck_assert_uint_eq(errs.n, 2);
	ck_assert_str_eq(errs.v[0], "strategies.counters: plugin \"test_sink\" is a stage plugin, expected a counters "
				    "plugin (" T_GOOD "/test_sink.so)");
	ck_assert_str_eq(errs.v[1], "stages[0].plugin: \"test_counters\" is a counters plugin, expected a stage plugin ("
				    T_GOOD "/test_counters.so)");
	ck_assert_ptr_null(c->strat.counters.pf);
	ck_assert_ptr_null(c->stages[0].pf);
	lcp_cfg_free(c);
}
END_TEST

START_TEST(cannot_open)
{
	struct lcp_cfg *c = lcp_cfg_load(TEST_BUILDDIR "/unit/no-such.json", NULL, 0, &errs);

	ck_assert_ptr_null(c);
	ck_assert_uint_eq(errs.n, 1);
	ck_assert_str_eq(errs.v[0], TEST_BUILDDIR "/unit/no-such.json: cannot open: No such file or directory");
}
END_TEST

START_TEST(syntax_error_returns_null)
{
	ck_assert_ptr_null(
		load_conf("config-syntax", "s.json", "{\n  \"eal\": [\"-l\" \"0,1\"]\n}\n"));
	ck_assert_uint_eq(errs.n, 1);
	{
		char *want;

		/* jansson's column is where the offending token ends */
		ck_assert(asprintf(&want, "%s:2:20: JSON syntax error: ']' expected near '\"0,1\"'",
				   cf_path) > 0);
		ck_assert_str_eq(errs.v[0], want);
		free(want);
	}
}
END_TEST

/* ================= EAL arguments ================= */

START_TEST(eal_override_replaces_config)
{
	char *over[] = { "--no-huge", "-l", "0,2" };
	struct lcp_cfg *c;

	/* as written: lcore 2 is not given to EAL */
	c = load_conf("config-eal", "e.json",
		      "{\"eal\": [\"-l\", \"0,1\"], \"plugin_path\": [\"" T_GOOD "\"],\n"
		      " \"stages\": [{\"name\": \"a\", \"plugin\": \"test_src\", \"lcore\": 2},\n"
		      "            {\"name\": \"b\", \"plugin\": \"test_sink\", \"lcore\": 2}],\n"
		      " \"links\": [\"a.out -> b.in\"]}\n");
	ck_assert_uint_eq(errs.n, 2);
	ck_assert_str_eq(errs.v[0], "stages[0].lcore: lcore 2 is not available to EAL; worker lcores: 1");
	ck_assert_str_eq(errs.v[1], "stages[1].lcore: lcore 2 is not available to EAL; worker lcores: 1");
	lcp_cfg_free(c);
	lcp_errs_free(&errs);
	/* with "-- --no-huge -l 0,2" it is, and the config's array is ignored */
	c = lcp_cfg_load(cf_path, over, 3, &errs);
	assert_no_errs();
	ck_assert_uint_eq(c->n_eal, 3);
	ck_assert_str_eq(c->eal[2], "0,2");
	ck_assert(c->lcore_avail[2] && !c->lcore_avail[1]);
	lcp_cfg_free(c);
}
END_TEST

static const struct {
	const char *args[5];
	const char *avail; /* the lcores EAL will have, as "0,1,..." */
	unsigned main_lcore;
} eal_cases[] = {
	{ { "-l", "0,1" }, "0,1", 0 },
	{ { "-l0-3" }, "0,1,2,3", 0 },
	{ { "--no-huge", "-l", "2,5-6", "-m", "64" }, "2,5,6", 2 },
	{ { "-l", "0-3", "--main-lcore", "2" }, "0,1,2,3", 2 },
	{ { "-l", "0-3", "--main-lcore=3" }, "0,1,2,3", 3 },
	{ { "--lcores=0@0,1@1,2@0" }, "0,1,2", 0 },
	{ { "--lcores", "(4-5)@0,7" }, "4,5,7", 4 },
	{ { "-c", "0x6" }, "1,2", 1 },
	{ { "-c0xf0" }, "4,5,6,7", 4 },
};

START_TEST(eal_lcores)
{
	bool avail[LCP_MAX_LCORES];
	unsigned main_lcore = 999, n = 0;
	struct lcp_sbuf b = { 0 };

	while (n < 5 && eal_cases[_i].args[n])
		n++;
	lcp_eal_lcores((char *const *)eal_cases[_i].args, n, avail, &main_lcore);
	lcp_sbuf_addf(&b, "%s", "");
	for (unsigned k = 0; k < LCP_MAX_LCORES; k++)
		if (avail[k])
			lcp_sbuf_addf(&b, "%s%u", b.len ? "," : "", k);
	ck_assert_msg(strcmp(b.s, eal_cases[_i].avail) == 0, "case %d: lcores %s, expected %s", _i, b.s,
		      eal_cases[_i].avail);
	ck_assert_uint_eq(main_lcore, eal_cases[_i].main_lcore);
	lcp_sbuf_free(&b);
}
END_TEST

/* no -l/-c/--lcores: EAL takes the CPUs this process may run on */
START_TEST(eal_lcores_default_affinity)
{
	bool avail[LCP_MAX_LCORES];
	unsigned main_lcore = 999;
	cpu_set_t cs;

	ck_assert_int_eq(sched_getaffinity(0, sizeof(cs), &cs), 0);
	lcp_eal_lcores(NULL, 0, avail, &main_lcore);
	for (unsigned k = 0; k < LCP_MAX_LCORES; k++)
		ck_assert_int_eq(avail[k], CPU_ISSET(k, &cs) ? 1 : 0);
	ck_assert(avail[main_lcore]);
	for (unsigned k = 0; k < main_lcore; k++)
		ck_assert(!avail[k]);
}
END_TEST

/* ================= message loops (graph.c) ================= */

/* Stages: src (test_src), a (metrics), b (sink_echo), f and g (fault: a_in ->
 * a_out, b_in -> b_out), t (test_opts: answers, declares no forwarding); all on
 * lcore 1 but g, on lcore LG. A loop made only of pass-throughs is refused with
 * its path; a cycle of stages that is not one of ports, or that goes through a
 * stage answering with objects of its own, is not. */
static const struct {
	const char *links;
	const char *err; /* NULL: valid */
} loop_cases[] = {
	{ "\"a.out -> b.in\", \"b.out -> a.in\"",
	  "links: a.out -> b.in -> b.out -> a.in forms a message loop on lcore 1: a (metrics), b (sink_echo) "
	  "pass on what they receive, so the same objects would go round for ever (links[2], links[3]); "
	  "remove one of these links or end the path in a stage that consumes what it receives" },
	/* the same loop listed from b: the path starts at the link listed first */
	{ "\"b.out -> a.in\", \"a.out -> b.in\"",
	  "links: b.out -> a.in -> a.out -> b.in forms a message loop on lcore 1: b (sink_echo), a (metrics) "
	  "pass on what they receive, so the same objects would go round for ever (links[2], links[3]); "
	  "remove one of these links or end the path in a stage that consumes what it receives" },
	/* f -> g -> f on one direction, through two lcores */
	{ "\"f.a_out -> g.a_in\", \"g.a_out -> f.a_in\"",
	  "links: f.a_out -> g.a_in -> g.a_out -> f.a_in forms a message loop across lcores: f (fault), g (fault) "
	  "pass on what they receive, so the same objects would go round for ever (links[2], links[3]); "
	  "remove one of these links or end the path in a stage that consumes what it receives" },
	/* f <-> g, a into b and back into a: f.b_out is fed by b_in only */
	{ "\"f.a_out -> g.a_in\", \"g.a_out -> f.b_in\", \"f.b_out -> t.in\", \"t.out -> f.a_in\"", NULL },
	/* through a stage that answers (t): a request and its reply, not a loop */
	{ "\"a.out -> b.in\", \"f.a_out -> t.in\", \"t.out -> f.a_in\"", NULL },
};

START_TEST(message_loops)
{
	char *text;
	unsigned n_loop = 0;
	struct lcp_cfg *c;

	ck_assert(asprintf(&text,
			   "{\"eal\": [\"-l\", \"0-2\"], \"plugin_path\": [\"" T_GOOD "\"],\n"
			   " \"stages\": [{\"name\": \"src\", \"plugin\": \"test_src\"},\n"
			   "  {\"name\": \"a\", \"plugin\": \"metrics\"}, {\"name\": \"b\", \"plugin\": \"sink_echo\"},\n"
			   "  {\"name\": \"f\", \"plugin\": \"fault\"}, {\"name\": \"g\", \"plugin\": \"fault\", \"lcore\": 2},\n"
			   "  {\"name\": \"t\", \"plugin\": \"test_opts\", \"options\": {\"label\": \"ab\"}}],\n"
			   " \"links\": [\"src.out -> f.a_in\", \"src.msg -> a.in\", %s]}\n",
			   loop_cases[_i].links) > 0);
	c = load_conf("config-loops", "loop.json", text);
	ck_assert_ptr_nonnull(c);
	/* stages a case leaves unlinked are isolated: the only other error */
	for (unsigned i = 0; i < errs.n; i++) {
		if (strstr(errs.v[i], "\" is isolated: no link uses it") != NULL)
			continue;
		if (loop_cases[_i].err == NULL || n_loop > 0)
			t_errs_dump(&errs);
		ck_assert_ptr_nonnull(loop_cases[_i].err);
		ck_assert_uint_eq(n_loop, 0);
		ck_assert_str_eq(errs.v[i], loop_cases[_i].err);
		n_loop++;
	}
	ck_assert_uint_eq(n_loop, loop_cases[_i].err != NULL);
	lcp_cfg_free(c);
	free(text);
}
END_TEST

/* ================= mbuf budget (graph.c, tcp's validate) ================= */

/* conf/demo.json: the applications' SENDs are what the engine's pool holds
 * (received frames are the other side's, built in each tcp stage's own
 * tx_mbufs pool): exch_tcp 1 connection × 4096 mbufs of sndbuf 8 MiB, tcp 1 ×
 * 512 of sndbuf 1 MiB, no ring: 4,608. A pool of 4,608 holds it, 4,607 does
 * not. */
START_TEST(mbuf_budget_demo)
{
	static const unsigned mbufs[] = { 8191, 4608, 4607 };
	char *text, *demo, *at;
	struct lcp_cfg *c;

	demo = t_read(TEST_TOP_SRCDIR "/conf/demo.json", NULL);
	ck_assert_ptr_nonnull(demo);
	at = strstr(demo, "\"engine\": {");
	ck_assert_ptr_nonnull(at);
	at += strlen("\"engine\": {");
	ck_assert(asprintf(&text, "%.*s\"mbufs\": %u, %s", (int)(at - demo), demo, mbufs[_i], at) > 0);
	c = load_conf("config-mbufs", "demo.json", text);
	ck_assert_ptr_nonnull(c);
	assert_no_errs();
	ck_assert_uint_eq(c->eng.mbufs, mbufs[_i]);
	if (mbufs[_i] >= 4608) {
		ck_assert_uint_eq(c->warns.n, 0);
	} else {
		ck_assert_uint_eq(c->warns.n, 1);
		ck_assert_str_eq(c->warns.v[0],
				 "stages[1].options.sndbuf: the mbuf pool can run dry: exch_tcp (stages[1]): 1 connection × "
				 "(4096 mbufs of sndbuf 8 MiB) = 4,096; tcp (stages[4]): 1 connection × (512 mbufs of "
				 "sndbuf 1 MiB) = 512; together 4,608 mbufs can be held, more than engine.mbufs 4,607: "
				 "raise engine.mbufs to at least 4,608 or lower these options, the connections or "
				 "the ring sizes");
	}
	lcp_cfg_free(c);
	free(text);
	free(demo);
}
END_TEST

/* a config with errors gets no warning: the budget needs a valid graph */
START_TEST(mbuf_budget_not_on_errors)
{
	struct lcp_cfg *c;

	c = load_conf("config-mbufs-err", "e.json",
		      "{\"eal\": [\"-l\", \"0,1\"], \"engine\": {\"mbufs\": 63},\n"
		      " \"stages\": [{\"name\": \"t\", \"plugin\": \"tcp\", \"options\": {\"ip\": \"10.0.0.1/24\", \"mac\": \"02:00:00:00:00:01\"}},\n"
		      "            {\"name\": \"x\", \"plugin\": \"no_such_plugin\"}],\n"
		      " \"links\": []}\n");
	ck_assert_ptr_nonnull(c);
	ck_assert_uint_gt(errs.n, 0);
	ck_assert(c->stages[0].has_mbufs);
	ck_assert_uint_eq(c->warns.n, 0);
	lcp_cfg_free(c);
}
END_TEST

/* an lcore set given twice (-l, -c, --lcores) is refused by `lcpipe check`,
 * as EAL 22.11 refuses it */
START_TEST(eal_lcore_option_twice)
{
	static const char text[] =
		"{\"eal\": [\"-l\", \"0,1\", \"-l\", \"0,1\"], \"plugin_path\": [\"" T_GOOD "\"],\n"
		" \"stages\": [{\"name\": \"a\", \"plugin\": \"test_src\"},\n"
		"            {\"name\": \"b\", \"plugin\": \"test_sink\"}],\n"
		" \"links\": [\"a.out -> b.in\"]}\n";
	struct lcp_cfg *c;

	c = load_conf("bugs-eal", "twice.json", text);
	/* EAL 22.11: "Option -l is ignored, because (-l) is set!" then usage, init fails */
	ck_assert_msg(errs.n > 0, "\"-l\" given twice passes lcpipe check; rte_eal_init refuses it");
	lcp_cfg_free(c);
}
END_TEST

static void
config_tcases(Suite *s)
{
	TCase *tc;

	T_TESTS(t_tcase(s, "default", setup, teardown, 0), default_config_valid,
		default_config_shipped);

	T_TESTS(t_tcase(s, "files", setup, teardown, 0), plugin_path_relative_to_config,
		plugin_path_absolute, wrong_kind_for_role, cannot_open, syntax_error_returns_null);

	tc = t_tcase(s, "eal", setup, teardown, 0);
	T_TESTS(tc, eal_override_replaces_config);
	tcase_add_loop_test(tc, eal_lcores, 0, (int)(sizeof(eal_cases) / sizeof(eal_cases[0])));
	T_TESTS(tc, eal_lcores_default_affinity, eal_lcore_option_twice);

	tc = t_tcase(s, "loops", setup, teardown, 0);
	tcase_add_loop_test(tc, message_loops, 0, (int)(sizeof(loop_cases) / sizeof(loop_cases[0])));

	tc = t_tcase(s, "mbufs", setup, teardown, 0);
	tcase_add_loop_test(tc, mbuf_budget_demo, 0, 3);
	T_TESTS(tc, mbuf_budget_not_on_errors);
}

T_MAIN("config", config_tcases)
