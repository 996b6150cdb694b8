/* SPDX-License-Identifier: BSD-3-Clause
 * test_loader.c — the plugin loader (framework/elf_probe.c, loader.c), no EAL.
 *
 * The test plugins (tests/plugins/, built by tests/unit.mk) sit in one directory
 * per group so each registry sees only what a test wants:
 *   hdr/   refused from the ELF file alone   dup/    one name twice in one dir
 *   open/  refused after dlopen              good/   valid stubs
 *   shadow/ "test_sink" again                notso/  files that are not .so at all
 * Every broken plugin has a constructor that appends its id to $LCP_TEST_MARKER:
 * the tests assert that no file refused from its header ever ran code, and (the
 * control) that dlopen()ing the same files directly does leave the marker.
 * bugs/ holds what was once accepted: a 32-byte name without NUL, two ports with
 * one name; probe_misaligned_tables moves a good plugin's tables off alignment.
 */
#include <check.h>
#include <dlfcn.h>
#include <elf.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testutil.h"

#include "../t_check.h"

#define DESC_SIZE sizeof(struct lcp_plugin)

#if defined(__x86_64__)
#define T_EM EM_X86_64
#define T_FOREIGN_EM EM_AARCH64
#elif defined(__aarch64__)
#define T_EM EM_AARCH64
#define T_FOREIGN_EM EM_X86_64
#endif

static char *marker; /* the marker file of the current test */

static void
marker_setup(void)
{
	char *dir = t_scratch("loader-marker");

	ck_assert(asprintf(&marker, "%s/marker", dir) > 0);
	free(dir);
	unlink(marker);
	ck_assert_int_eq(setenv("LCP_TEST_MARKER", marker, 1), 0);
	unsetenv("LCP_PLUGIN_PATH");
}

static void
marker_teardown(void)
{
	unsetenv("LCP_TEST_MARKER");
	free(marker);
	marker = NULL;
}

/* the marker's content ("" if the file was never created) */
static char *
marker_text(void)
{
	char *s = t_read(marker, NULL);

	return s ? s : strdup("");
}

static void
assert_no_marker(const char *when)
{
	char *s = marker_text();

	ck_assert_msg(s[0] == '\0', "%s: a constructor ran (marker: %s)", when, s);
	free(s);
}

/* the constructors that ran wrote exactly want (one line each, in order) */
static void
assert_marker(const char *want)
{
	char *s = marker_text();

	ck_assert_str_eq(s, want);
	free(s);
}

/* one more line, id, at the end of *want */
static void
want_line(char **want, const char *id)
{
	char *w;

	ck_assert(asprintf(&w, "%s%s\n", *want, id) > 0);
	free(*want);
	*want = w;
}

static void
registry(struct lcp_registry *r, const char *d1, const char *d2)
{
	const char *dirs[2] = { d1, d2 };

	lcp_registry_init(r, dirs, d2 ? 2 : 1);
}

/* how many registry entries live under dir */
static unsigned
count_in(const struct lcp_registry *r, const char *dir)
{
	unsigned n = 0;
	size_t l = strlen(dir);

	for (unsigned i = 0; i < r->n; i++)
		if (strncmp(r->v[i].path, dir, l) == 0 && r->v[i].path[l] == '/')
			n++;
	return n;
}

/* ================= header-level refusals: never dlopen()ed ================= */

struct hdr_case {
	const char *file, *id, *name, *why;
};

static const struct hdr_case hdr_cases[] = {
	{ "bad_magic.so", "bad_magic", "test_bad_magic",
	  "bad magic: expected 0x3150434c, found 0xdeadbeef" },
	{ "abi_major.so", "abi_major", "test_abi_major", NULL /* built below: depends on LCP_ABI_MAJOR */ },
	{ "abi_minor.so", "abi_minor", "test_abi_minor", NULL /* built below: depends on LCP_ABI_MINOR */ },
	{ "bad_size.so", "bad_size", "test_bad_size", NULL /* built below: depends on sizeof */ },
	{ "sym_size.so", "sym_size", NULL, NULL },
	{ "tiny.so", "tiny", NULL, NULL },
	{ "func.so", "func", NULL, "no descriptor: lcp_plugin_descriptor is not a data object" },
	{ "hidden.so", "hidden", NULL, "no descriptor: symbol lcp_plugin_descriptor not exported" },
	{ "bad_kind.so", "bad_kind", "test_bad_kind",
	  "kind: expected 1..4 (stage, counters, pool, batch), found 9" },
	{ "bad_name.so", "bad_name", "Test-Bad.Name",
	  "name: expected [a-z0-9_]{1,31}, found \"Test-Bad.Name\"" },
	{ "no_name.so", "no_name", "", "name: expected [a-z0-9_]{1,31}, found \"\"" },
};
#define N_HDR (sizeof(hdr_cases) / sizeof(hdr_cases[0]))

static char *
hdr_why(const struct hdr_case *c)
{
	char *s;

	if (strcmp(c->id, "abi_major") == 0)
		ck_assert(asprintf(&s, "ABI major version: expected %d, found %d", LCP_ABI_MAJOR, LCP_ABI_MAJOR + 1) > 0);
	else if (strcmp(c->id, "abi_minor") == 0)
		ck_assert(asprintf(&s, "ABI minor version: expected at most %d, found %d (plugin built for a newer lcpipe)",
				   LCP_ABI_MINOR, LCP_ABI_MINOR + 1) > 0);
	else if (strcmp(c->id, "bad_size") == 0)
		ck_assert(asprintf(&s, "descriptor size: expected %zu, found %zu", DESC_SIZE, DESC_SIZE - 8) > 0);
	else if (strcmp(c->id, "sym_size") == 0)
		ck_assert(asprintf(&s, "descriptor size: symbol is %zu bytes, descriptor says %zu",
				   DESC_SIZE + 16, DESC_SIZE) > 0);
	else if (strcmp(c->id, "tiny") == 0)
		ck_assert(asprintf(&s, "descriptor size: expected %zu bytes, found 4", DESC_SIZE) > 0);
	else
		s = strdup(c->why);
	return s;
}

START_TEST(hdr_refused_exact)
{
	struct lcp_registry r;

	registry(&r, T_HDR, NULL);
	ck_assert_uint_eq(count_in(&r, T_HDR), N_HDR);
	for (unsigned i = 0; i < N_HDR; i++) {
		char *path, *why = hdr_why(&hdr_cases[i]);
		const struct lcp_plugin_file *pf;

		ck_assert(asprintf(&path, "%s/%s", T_HDR, hdr_cases[i].file) > 0);
		t_assert_refused(&r, path, why);
		pf = t_reg_find(&r, path);
		ck_assert_ptr_null(pf->handle);
		ck_assert_ptr_null(pf->desc);
		free(path);
		free(why);
	}
	assert_no_marker("lcp_registry_init");
	lcp_registry_fini(&r);
}
END_TEST

/* asking for a plugin by a refused name reports that file and still loads nothing */
START_TEST(hdr_get_refused_name)
{
	struct lcp_registry r;

	registry(&r, T_HDR, NULL);
	for (unsigned i = 0; i < N_HDR; i++) {
		const struct lcp_plugin_file *refused = (void *)1;
		char *path;

		if (hdr_cases[i].name == NULL || hdr_cases[i].name[0] == '\0')
			continue;
		ck_assert(asprintf(&path, "%s/%s", T_HDR, hdr_cases[i].file) > 0);
		ck_assert_ptr_null(lcp_registry_get(&r, hdr_cases[i].name, &refused));
		ck_assert_msg(refused != NULL && strcmp(refused->path, path) == 0,
			      "get(%s): refused entry %s", hdr_cases[i].name, refused ? refused->path : "NULL");
		free(path);
	}
	assert_no_marker("lcp_registry_get on refused names");
	lcp_registry_fini(&r);
}
END_TEST

/* the control: the same files do run their constructor when really loaded, so
 * the absence of a marker above means something */
START_TEST(hdr_markers_work_when_loaded)
{
	char *want = strdup("");

	for (unsigned i = 0; i < N_HDR; i++) {
		char *path;
		void *h;

		ck_assert(asprintf(&path, "%s/%s", T_HDR, hdr_cases[i].file) > 0);
		h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
		ck_assert_msg(h != NULL, "dlopen %s: %s", path, dlerror());
		dlclose(h);
		want_line(&want, hdr_cases[i].id);
		free(path);
	}
	assert_marker(want);
	free(want);
}
END_TEST

/* ================= one name twice in one directory ================= */

START_TEST(dup_both_refused)
{
	struct lcp_registry r;
	const struct lcp_plugin_file *refused;

	registry(&r, T_DUP, NULL);
	ck_assert_uint_eq(count_in(&r, T_DUP), 2);
	t_assert_refused(&r, T_DUP "/dup_a.so",
			 "duplicate plugin name \"test_dup\" (also declared by " T_DUP "/dup_b.so)");
	t_assert_refused(&r, T_DUP "/dup_b.so",
			 "duplicate plugin name \"test_dup\" (also declared by " T_DUP "/dup_a.so)");
	ck_assert_ptr_null(lcp_registry_get(&r, "test_dup", &refused));
	ck_assert_ptr_nonnull(refused);
	ck_assert_str_eq(refused->path, T_DUP "/dup_a.so");
	assert_no_marker("duplicate names");
	lcp_registry_fini(&r);
}
END_TEST

START_TEST(dup_markers_work_when_loaded)
{
	void *a = dlopen(T_DUP "/dup_a.so", RTLD_NOW | RTLD_LOCAL);
	void *b = dlopen(T_DUP "/dup_b.so", RTLD_NOW | RTLD_LOCAL);

	ck_assert_ptr_nonnull(a);
	ck_assert_ptr_nonnull(b);
	dlclose(a);
	dlclose(b);
	assert_marker("dup_a\ndup_b\n");
}
END_TEST

/* the same directory twice on the path is scanned once (no self-duplicates) */
START_TEST(same_dir_twice)
{
	struct lcp_registry r;

	registry(&r, T_GOOD, T_GOOD);
	ck_assert_uint_eq(count_in(&r, T_GOOD), 4);
	ck_assert_ptr_nonnull(lcp_registry_get(&r, "test_src", NULL));
	lcp_registry_fini(&r);
}
END_TEST

/* ================= not shared objects ================= */

static const struct {
	const char *file, *why;
} notso_cases[] = {
	{ "text.so", "not a shared object: no ELF header" },
	{ "archive.so", "not a shared object: no ELF header" },
	{ "empty.so", "not a shared object: empty file" },
	{ "dir.so", "not a shared object: not a regular file" },
	{ "dangling.so", "cannot open: No such file or directory" },
	{ "exec.so", "not a shared object: ELF type 2, expected ET_DYN (3)" },
	{ "object.so", "not a shared object: ELF type 1, expected ET_DYN (3)" },
};
#define N_NOTSO (sizeof(notso_cases) / sizeof(notso_cases[0]))

START_TEST(notso_refused_exact)
{
	struct lcp_registry r;
	const struct lcp_plugin_file *refused;

	registry(&r, T_NOTSO, NULL);
	ck_assert_uint_eq(count_in(&r, T_NOTSO), N_NOTSO + 1 /* pie.so */);
	for (unsigned i = 0; i < N_NOTSO; i++) {
		char *path;

		ck_assert(asprintf(&path, "%s/%s", T_NOTSO, notso_cases[i].file) > 0);
		t_assert_refused(&r, path, notso_cases[i].why);
		free(path);
	}
	/* a PIE is ET_DYN with a good descriptor: only dlopen can tell */
	ck_assert_ptr_null(t_reg_find(&r, T_NOTSO "/pie.so")->refused);
	ck_assert_ptr_null(lcp_registry_get(&r, "test_exec", &refused));
	ck_assert_ptr_nonnull(refused);
	t_assert_refused(&r, T_NOTSO "/pie.so",
			 "dlopen failed: " T_NOTSO "/pie.so: cannot dynamically load position-independent executable");
	assert_no_marker("not shared objects");
	lcp_registry_fini(&r);
}
END_TEST

/* ================= refused after dlopen ================= */

static const struct {
	const char *file, *id, *name, *why;
} open_cases[] = {
	{ "no_init.so", "no_init", "test_no_init", "stage ops: init is NULL" },
	{ "no_process.so", "no_process", "test_no_process", "stage ops: has input ports but process is NULL" },
	{ "no_poll.so", "no_poll", "test_no_poll",
	  "stage ops: no input port and no poll: it could never do anything" },
	{ "no_ports.so", "no_ports", "test_no_ports", "stage ops: no port table" },
	{ "bad_port.so", "bad_port", "test_bad_port", "stage ops: port \"weird\": bad name, direction 1 or unit 7" },
	{ "bad_forward.so", "bad_forward", "test_bad_forward",
	  "stage ops: port \"out\": LCP_PORT_F_FORWARDS(0) must be on an output and name an input port of the same unit" },
	{ "bad_counter.so", "bad_counter", "test_bad_counter",
	  "stage ops: counter \"drop_shutdown\": expected [a-z0-9_] and not a built-in name (drop_shutdown)" },
	{ "dup_counter.so", "dup_counter", "test_dup_counter", "stage ops: counter \"packets\" declared twice" },
	{ "bad_hist.so", "bad_hist", "test_bad_hist",
	  "stage ops: histogram \"lat_seconds\": bound 2 (20) is not above bound 1 (30)" },
	{ "null_ops.so", "null_ops", "test_null_ops", "ops: expected a stage ops table, found NULL" },
	{ "no_version.so", "no_version", "test_no_version", "descriptor: version and summary are required" },
	{ "bad_opts.so", "bad_opts", "test_bad_opts", "option table row 1 (\"mode\"): enum without choices" },
	{ "ctr_no_read.so", "ctr_no_read", "test_ctr_no_read",
	  "counters ops: create, destroy, add and read are required" },
	/* its dlopen fails in relocation, before any constructor */
	{ "undef.so", NULL, "test_undef",
	  "dlopen failed: " T_OPEN "/undef.so: undefined symbol: lcp_test_no_such_function" },
};
#define N_OPEN (sizeof(open_cases) / sizeof(open_cases[0]))

START_TEST(open_accepted_at_scan)
{
	struct lcp_registry r;

	registry(&r, T_OPEN, NULL);
	ck_assert_uint_eq(count_in(&r, T_OPEN), N_OPEN);
	for (unsigned i = 0; i < N_OPEN; i++) {
		char *path;
		const struct lcp_plugin_file *pf;

		ck_assert(asprintf(&path, "%s/%s", T_OPEN, open_cases[i].file) > 0);
		pf = t_reg_find(&r, path);
		ck_assert_ptr_nonnull(pf);
		ck_assert_msg(pf->refused == NULL, "%s", pf->refused);
		ck_assert_str_eq(pf->name, open_cases[i].name);
		free(path);
	}
	assert_no_marker("scan only");
	lcp_registry_fini(&r);
}
END_TEST

START_TEST(open_refused_exact)
{
	struct lcp_registry r;
	char *want = strdup("");

	registry(&r, T_OPEN, NULL);
	for (unsigned i = 0; i < N_OPEN; i++) {
		const struct lcp_plugin_file *refused = NULL;
		char *path;

		ck_assert(asprintf(&path, "%s/%s", T_OPEN, open_cases[i].file) > 0);
		ck_assert_ptr_null(lcp_registry_get(&r, open_cases[i].name, &refused));
		ck_assert_ptr_nonnull(refused);
		ck_assert_str_eq(refused->path, path);
		t_assert_refused(&r, path, open_cases[i].why);
		ck_assert_ptr_null(refused->handle); /* dlclose()d */
		ck_assert_ptr_null(refused->desc);
		/* asking again does not load it again */
		ck_assert_ptr_null(lcp_registry_get(&r, open_cases[i].name, NULL));
		if (open_cases[i].id)
			want_line(&want, open_cases[i].id);
		free(path);
	}
	/* these ran their constructor (once each): dlopen has to, before checks */
	assert_marker(want);
	free(want);
	lcp_registry_fini(&r);
}
END_TEST

/* everything at once, the way list-plugins / describe see it: only the files
 * refused after dlopen ever ran code */
START_TEST(all_dirs_only_open_ran)
{
	const char *dirs[] = { T_HDR, T_DUP, T_OPEN, T_GOOD, T_NOTSO, T_SHADOW };
	struct lcp_registry r;
	struct lcp_plugin_file **v;
	unsigned n;

	lcp_registry_init(&r, dirs, 6);
	assert_no_marker("lcp_registry_init, all dirs");
	n = lcp_registry_sorted(&r, &v);
	/* sorted() opens in search order: open/ is scanned in file-name order */
	assert_marker("bad_counter\nbad_forward\nbad_hist\nbad_opts\nbad_port\nctr_no_read\ndup_counter\nno_init\nno_poll\n"
		      "no_ports\nno_process\nno_version\nnull_ops\n");
	for (unsigned i = 0; i < n; i++) {
		ck_assert_ptr_null(v[i]->refused);
		ck_assert_ptr_nonnull(v[i]->desc);
		ck_assert(strncmp(v[i]->name, "test_", 5) != 0 || strncmp(v[i]->path, T_GOOD "/", strlen(T_GOOD) + 1) == 0);
		if (i > 0)
			ck_assert(strcmp(v[i - 1]->name, v[i]->name) < 0);
	}
	free(v);
	lcp_registry_fini(&r);
}
END_TEST

/* ================= accepted plugins, names, shadowing, search path ================= */

START_TEST(good_accepted)
{
	static const struct {
		const char *name;
		uint32_t kind;
	} want[] = {
		{ "test_counters", LCP_KIND_COUNTERS },
		{ "test_opts", LCP_KIND_STAGE },
		{ "test_sink", LCP_KIND_STAGE },
		{ "test_src", LCP_KIND_STAGE },
	};
	struct lcp_registry r;

	registry(&r, T_GOOD, NULL);
	ck_assert_uint_eq(count_in(&r, T_GOOD), 4);
	for (unsigned i = 0; i < 4; i++) {
		const struct lcp_plugin_file *refused = (void *)1;
		struct lcp_plugin_file *pf = lcp_registry_get(&r, want[i].name, &refused);
		char *path;

		ck_assert_ptr_nonnull(pf);
		ck_assert_ptr_null(refused);
		ck_assert_ptr_nonnull(pf->handle);
		ck_assert_ptr_nonnull(pf->desc);
		ck_assert_uint_eq(pf->kind, want[i].kind);
		ck_assert_str_eq(pf->desc->name, want[i].name);
		ck_assert(asprintf(&path, "%s/%s.so", T_GOOD, want[i].name) > 0);
		ck_assert_str_eq(pf->path, path);
		free(path);
	}
	lcp_registry_fini(&r);
}
END_TEST

START_TEST(unknown_name)
{
	struct lcp_registry r;
	const struct lcp_plugin_file *refused = (void *)1;

	registry(&r, T_GOOD, NULL);
	ck_assert_ptr_null(lcp_registry_get(&r, "no_such_plugin", &refused));
	ck_assert_ptr_null(refused);
	lcp_registry_fini(&r);
}
END_TEST

static int
cmp_strp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* "a, b, c" -> a sorted, NULL-terminated vector (into a copy of s) */
static char **
split_names(char *s, unsigned *n)
{
	char **v = calloc(strlen(s) + 2, sizeof(*v));

	*n = 0;
	for (char *save = NULL, *t = strtok_r(s, ",", &save); t; t = strtok_r(NULL, ",", &save))
		v[(*n)++] = t + (*t == ' ');
	return v;
}

START_TEST(names_list)
{
	const char *dirs[] = { T_HDR, T_DUP, T_OPEN, T_GOOD, T_NOTSO };
	static const char *const ours[] = { "test_counters", "test_opts", "test_sink", "test_src" };
	struct lcp_registry r, r2;
	struct lcp_sbuf b = { 0 }, b2 = { 0 };
	char **got, **want;
	unsigned n_got, n_want;

	lcp_registry_init(&r, dirs, 5);
	lcp_registry_names(&r, &b);
	/* what the build tree alone offers (no directory of ours) */
	lcp_registry_init(&r2, NULL, 0);
	lcp_registry_names(&r2, &b2);
	ck_assert_msg(strcmp(b2.s, "(none)") != 0, "no plugin in the build tree");
	/* expected: the build tree's names plus ours, sorted, and nothing refused */
	want = split_names(b2.s, &n_want);
	for (unsigned i = 0; i < 4; i++)
		want[n_want++] = (char *)ours[i];
	qsort(want, n_want, sizeof(*want), cmp_strp);
	{
		struct lcp_sbuf w = { 0 };

		lcp_sbuf_join(&w, (const char *const *)want, n_want, ", ");
		ck_assert_str_eq(b.s, w.s);
		lcp_sbuf_free(&w);
	}
	got = split_names(b.s, &n_got);
	ck_assert_uint_eq(n_got, n_want);
	free(got);
	free(want);
	lcp_sbuf_free(&b);
	lcp_sbuf_free(&b2);
	lcp_registry_fini(&r2);
	lcp_registry_fini(&r);
}
END_TEST

START_TEST(names_none)
{
	struct lcp_registry r = { 0 };
	struct lcp_sbuf b = { 0 };

	/* an empty registry (no directory scanned at all) */
	lcp_registry_names(&r, &b);
	ck_assert_str_eq(b.s, "(none)");
	lcp_sbuf_free(&b);
}
END_TEST

START_TEST(shadow_later_dir)
{
	struct lcp_registry r;
	struct lcp_plugin_file *pf;

	registry(&r, T_GOOD, T_SHADOW);
	t_assert_refused(&r, T_SHADOW "/shadow_sink.so",
			 "shadowed: plugin name \"test_sink\" already found earlier on the search path in " T_GOOD
			 "/test_sink.so");
	pf = lcp_registry_get(&r, "test_sink", NULL);
	ck_assert_ptr_nonnull(pf);
	ck_assert_str_eq(pf->path, T_GOOD "/test_sink.so");
	ck_assert_str_eq(pf->desc->version, "0.1");
	lcp_registry_fini(&r);

	registry(&r, T_SHADOW, T_GOOD);
	t_assert_refused(&r, T_GOOD "/test_sink.so",
			 "shadowed: plugin name \"test_sink\" already found earlier on the search path in " T_SHADOW
			 "/shadow_sink.so");
	pf = lcp_registry_get(&r, "test_sink", NULL);
	ck_assert_ptr_nonnull(pf);
	ck_assert_str_eq(pf->desc->version, "0.2-shadow");
	lcp_registry_fini(&r);
}
END_TEST

START_TEST(search_path_order)
{
	struct lcp_registry r;
	const char *cfg[] = { T_GOOD };
	unsigned i;

	ck_assert_int_eq(setenv("LCP_PLUGIN_PATH", T_SHADOW ":" T_DUP, 1), 0);
	lcp_registry_init(&r, cfg, 1);
	ck_assert_uint_ge(r.n_dirs, 3);
	ck_assert_str_eq(r.dirs[0], T_GOOD);
	ck_assert_str_eq(r.dirs[1], T_SHADOW);
	ck_assert_str_eq(r.dirs[2], T_DUP);
	/* then, from the build tree, every plugins/<name>/.libs */
	for (i = 3; i < r.n_dirs; i++)
		if (strcmp(r.dirs[i], TEST_TOP_BUILDDIR "/plugins/sink_null/.libs") == 0)
			break;
	ck_assert_msg(i < r.n_dirs, "build-tree sink_null not on the search path");
	/* the config's directory wins over LCP_PLUGIN_PATH */
	t_assert_refused(&r, T_SHADOW "/shadow_sink.so",
			 "shadowed: plugin name \"test_sink\" already found earlier on the search path in " T_GOOD
			 "/test_sink.so");
	lcp_registry_fini(&r);
	/* a missing directory is skipped */
	{
		const char *missing[] = { T_PLUGINS "/no-such-dir" };

		lcp_registry_init(&r, missing, 1);
		ck_assert_str_eq(r.dirs[0], T_PLUGINS "/no-such-dir");
		ck_assert_uint_eq(count_in(&r, T_PLUGINS "/no-such-dir"), 0);
		lcp_registry_fini(&r);
	}
}
END_TEST

/* ================= lcp_elf_probe directly ================= */

static char probe_msg[512];

static int
probe(const char *path, struct lcp_probe *p)
{
	strcpy(probe_msg, "");
	return lcp_elf_probe(path, p, probe_msg, sizeof(probe_msg));
}

START_TEST(probe_good)
{
	struct lcp_probe p;

	ck_assert_int_eq(probe(T_GOOD "/test_opts.so", &p), 0);
	ck_assert_uint_eq(p.magic, LCP_PLUGIN_MAGIC);
	ck_assert_uint_eq(p.abi_major, LCP_ABI_MAJOR);
	ck_assert_uint_eq(p.abi_minor, LCP_ABI_MINOR);
	ck_assert_uint_eq(p.size, DESC_SIZE);
	ck_assert_uint_eq(p.kind, LCP_KIND_STAGE);
	ck_assert_str_eq(p.name, "test_opts");
	/* header fields are read as they are; judging them is the registry's job */
	ck_assert_int_eq(probe(T_HDR "/abi_major.so", &p), 0);
	ck_assert_uint_eq(p.abi_major, LCP_ABI_MAJOR + 1);
	ck_assert_int_eq(probe(T_HDR "/bad_magic.so", &p), 0);
	ck_assert_uint_eq(p.magic, 0xdeadbeefu);
	ck_assert_int_eq(probe(T_HDR "/bad_kind.so", &p), 0);
	ck_assert_uint_eq(p.kind, 9);
}
END_TEST

/* copy a good plugin into scratch, let `patch` change it, probe it */
static int
probe_patched(const char *name, size_t keep, void (*patch)(unsigned char *, size_t), struct lcp_probe *p)
{
	size_t len = 0;
	unsigned char *buf = (unsigned char *)t_read(T_GOOD "/test_src.so", &len);
	char *dir = t_scratch("loader-probe"), *path;
	int rc;

	ck_assert_ptr_nonnull(buf);
	if (keep < len)
		len = keep;
	if (patch)
		patch(buf, len);
	ck_assert(asprintf(&path, "%s/%s", dir, name) > 0);
	t_write(path, buf, len);
	rc = probe(path, p);
	free(path);
	free(dir);
	free(buf);
	return rc;
}

static void
patch_class32(unsigned char *b, size_t n)
{
	(void)n;
	b[EI_CLASS] = ELFCLASS32;
}

static void
patch_bigendian(unsigned char *b, size_t n)
{
	(void)n;
	b[EI_DATA] = ELFDATA2MSB;
}

static void
patch_machine(unsigned char *b, size_t n)
{
	uint16_t em = T_FOREIGN_EM;

	(void)n;
	memcpy(b + offsetof(Elf64_Ehdr, e_machine), &em, sizeof(em));
}

START_TEST(probe_crafted)
{
	struct lcp_probe p;
	char *want;

	ck_assert_int_eq(probe_patched("class32.so", SIZE_MAX, patch_class32, &p), -1);
	ck_assert(asprintf(&want, "not a shared object for this machine: ELF class 1, data 1, machine %u", T_EM) > 0);
	ck_assert_str_eq(probe_msg, want);
	free(want);
	ck_assert_int_eq(probe_patched("be.so", SIZE_MAX, patch_bigendian, &p), -1);
	ck_assert(asprintf(&want, "not a shared object for this machine: ELF class 2, data 2, machine %u", T_EM) > 0);
	ck_assert_str_eq(probe_msg, want);
	free(want);
	ck_assert_int_eq(probe_patched("machine.so", SIZE_MAX, patch_machine, &p), -1);
	ck_assert(asprintf(&want, "not a shared object for this machine: ELF class 2, data 1, machine %u",
			   T_FOREIGN_EM) > 0);
	ck_assert_str_eq(probe_msg, want);
	free(want);
	/* only the ELF header: section and program headers are beyond the end */
	ck_assert_int_eq(probe_patched("hdr-only.so", sizeof(Elf64_Ehdr), NULL, &p), -1);
	ck_assert_str_eq(probe_msg, "not a shared object: ELF headers out of bounds");
	/* shorter than an ELF header */
	ck_assert_int_eq(probe_patched("short.so", 20, NULL, &p), -1);
	ck_assert_str_eq(probe_msg, "not a shared object: no ELF header");
	/* the untouched copy probes fine (the harness itself is sound) */
	ck_assert_int_eq(probe_patched("copy.so", SIZE_MAX, NULL, &p), 0);
	ck_assert_str_eq(p.name, "test_src");
}
END_TEST

/* write len bytes of b to path and probe it: counted in *ok or *refused, a
 * refusal with its reason (what n: the file's case, for the failure message) */
static void
probe_written(const char *path, const unsigned char *b, size_t len, unsigned *ok, unsigned *refused,
	      const char *what, size_t n)
{
	struct lcp_probe p;

	t_write(path, b, len);
	if (probe(path, &p) == 0) {
		(*ok)++;
	} else {
		ck_assert_msg(probe_msg[0] != '\0', "refused without a reason (%s %zu)", what, n);
		(*refused)++;
	}
}

/* untrusted input: every truncation and many corruptions of a real plugin must
 * give 0 or -1 with a reason, never a crash (Check forks: a crash fails this) */
START_TEST(probe_never_crashes)
{
	size_t len = 0;
	unsigned char *orig = (unsigned char *)t_read(T_GOOD "/test_src.so", &len);
	unsigned char *buf = malloc(len);
	char *dir = t_scratch("loader-fuzz"), *path;
	uint32_t seed = 12345;
	unsigned ok = 0, refused = 0;

	ck_assert_ptr_nonnull(orig);
	ck_assert(asprintf(&path, "%s/f.so", dir) > 0);
	for (size_t cut = 1; cut < len; cut += (cut < 4096 ? 7 : 211))
		probe_written(path, orig, cut, &ok, &refused, "cut at", cut);
	for (unsigned round = 0; round < 3000; round++) {
		memcpy(buf, orig, len);
		for (unsigned k = 0; k < 4; k++) {
			seed = seed * 1103515245u + 12345u;
			/* every other round only the first 4 KiB: ELF, program and
			 * section headers */
			size_t span = (round & 1) && len > 4096 ? 4096 : len;
			size_t at = (seed >> 8) % span;

			seed = seed * 1103515245u + 12345u;
			buf[at] = (unsigned char)(seed >> 16);
		}
		probe_written(path, buf, len, &ok, &refused, "round", round);
	}
	ck_assert_uint_gt(refused, 0);
	ck_assert_uint_gt(ok, 0);
	free(path);
	free(dir);
	free(buf);
	free(orig);
}
END_TEST

#define T_BUGS T_PLUGINS "/bugs/.libs"

/* a 32-byte name without NUL is refused, not truncated */
START_TEST(loader_unterminated_name)
{
	struct lcp_registry r;
	const struct lcp_plugin_file *pf;

	registry(&r, T_BUGS, NULL);
	pf = t_reg_find(&r, T_BUGS "/long_name.so");
	ck_assert_ptr_nonnull(pf);
	ck_assert_msg(pf->refused != NULL,
		      "a 32-byte name without NUL was accepted as \"%s\" (truncated to 31)", pf->name);
	lcp_registry_fini(&r);
}
END_TEST

/* get("") does not answer with a file refused before its name was read */
START_TEST(registry_get_empty_name)
{
	struct lcp_registry r;
	const struct lcp_plugin_file *refused = NULL;

	registry(&r, T_NOTSO, NULL);
	ck_assert_ptr_null(lcp_registry_get(&r, "", &refused));
	ck_assert_msg(refused == NULL, "get(\"\") answered with %s", refused ? refused->refused : "");
	lcp_registry_fini(&r);
}
END_TEST

/* check_stage_ops() refuses two ports with one name */
START_TEST(loader_duplicate_port_name)
{
	struct lcp_registry r;
	const struct lcp_plugin_file *refused = NULL;

	registry(&r, T_BUGS, NULL);
	ck_assert_msg(lcp_registry_get(&r, "test_dup_port", &refused) == NULL,
		      "a stage with two ports named \"in\" was accepted");
	lcp_registry_fini(&r);
}
END_TEST

/* a copy of a good plugin with its section header table (what = 0) or its
 * .dynsym (what = 1) moved to the end of the file, one byte off 8-byte alignment;
 * before the fix the probe read them misaligned and accepted the file */
START_TEST(probe_misaligned_tables)
{
	size_t len = 0;
	char *orig = t_read(T_GOOD "/test_src.so", &len);
	char *dir = t_scratch("bugs-align"), *path;
	struct lcp_probe p;
	char msg[512];

	ck_assert_ptr_nonnull(orig);
	ck_assert(asprintf(&path, "%s/misaligned.so", dir) > 0);
	for (int what = 0; what < 2; what++) {
		Elf64_Ehdr eh;
		Elf64_Shdr *sh;
		size_t end = (len + 8) / 8 * 8 + 1, tlen;
		uint64_t toff;
		char *buf;

		memcpy(&eh, orig, sizeof(eh));
		ck_assert_uint_eq(eh.e_shentsize, sizeof(Elf64_Shdr));
		sh = calloc(eh.e_shnum, sizeof(*sh));
		ck_assert_ptr_nonnull(sh);
		memcpy(sh, orig + eh.e_shoff, eh.e_shnum * sizeof(*sh));
		if (what == 0) {
			toff = eh.e_shoff;
			tlen = eh.e_shnum * sizeof(Elf64_Shdr);
			eh.e_shoff = end;
		} else {
			unsigned i = 0;

			while (i < eh.e_shnum && sh[i].sh_type != SHT_DYNSYM)
				i++;
			ck_assert_uint_lt(i, eh.e_shnum);
			toff = sh[i].sh_offset;
			tlen = sh[i].sh_size;
			sh[i].sh_offset = end;
		}
		buf = calloc(1, end + tlen);
		ck_assert_ptr_nonnull(buf);
		memcpy(buf, orig, len);
		memcpy(buf + end, orig + toff, tlen);
		memcpy(buf, &eh, sizeof(eh));
		if (what == 1)
			memcpy(buf + eh.e_shoff, sh, eh.e_shnum * sizeof(*sh));
		t_write(path, buf, end + tlen);
		ck_assert_msg(lcp_elf_probe(path, &p, msg, sizeof(msg)) == -1,
			      "a plugin with its %s at a misaligned offset was accepted",
			      what == 0 ? "section headers" : ".dynsym");
		ck_assert_str_eq(msg, what == 0 ? "not a shared object: ELF headers misaligned"
						: "no descriptor: no dynamic symbol table");
		free(buf);
		free(sh);
	}
	free(path);
	free(dir);
	free(orig);
}
END_TEST

static void
loader_tcases(Suite *s)
{
	T_TESTS(t_tcase(s, "header", marker_setup, marker_teardown, 0), hdr_refused_exact,
		hdr_get_refused_name, hdr_markers_work_when_loaded, dup_both_refused,
		dup_markers_work_when_loaded, same_dir_twice, notso_refused_exact);

	T_TESTS(t_tcase(s, "open", marker_setup, marker_teardown, 0), open_accepted_at_scan,
		open_refused_exact, all_dirs_only_open_ran);

	T_TESTS(t_tcase(s, "registry", marker_setup, marker_teardown, 0), good_accepted,
		unknown_name, names_list, names_none, shadow_later_dir, search_path_order,
		loader_unterminated_name, registry_get_empty_name, loader_duplicate_port_name);

	T_TESTS(t_tcase(s, "probe", NULL, NULL, 120), probe_good, probe_crafted,
		probe_never_crashes, probe_misaligned_tables);
}

T_MAIN("loader", loader_tcases)
