/* SPDX-License-Identifier: BSD-3-Clause
 * loader.c — the plugin registry: scan the search path, probe every *.so without
 * loading it (elf_probe.c), refuse what does not fit, dlopen on first use.
 *
 * Search path, in order: the config's plugin_path, $LCP_PLUGIN_PATH, then the
 * build tree's plugins/<name>/.libs when this process runs from the build tree,
 * otherwise the installed $(pkglibdir). Two files declaring the same name in one
 * directory are both refused (the choice would be arbitrary); across directories
 * the earlier directory wins and the later file is listed as shadowed.
 */
#include <ctype.h>
#include <stdarg.h>
#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <glob.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <lcp/log.h>
#include <lcp/pool.h>
#include <lcp/batch.h>

#include "lcp_priv.h"

const char *
lcp_plugin_kind_name(uint32_t kind)
{
	switch (kind) {
	case LCP_KIND_STAGE: return "stage";
	case LCP_KIND_COUNTERS: return "counters";
	case LCP_KIND_POOL: return "pool";
	case LCP_KIND_BATCH: return "batch";
	default: return "unknown";
	}
}

static void
refuse(struct lcp_plugin_file *pf, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void
refuse(struct lcp_plugin_file *pf, const char *fmt, ...)
{
	char why[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(why, sizeof(why), fmt, ap);
	va_end(ap);
	free(pf->refused);
	if (asprintf(&pf->refused, "%s: refused: %s", pf->path, why) < 0)
		abort();
}

static int
name_ok(const char *n)
{
	if (*n == '\0')
		return 0;
	for (; *n; n++)
		if (!(islower((unsigned char)*n) || isdigit((unsigned char)*n) || *n == '_'))
			return 0;
	return 1;
}

/* checks on what the probe read; the same ones run again on the loaded copy */
static int
check_header(struct lcp_plugin_file *pf, const struct lcp_probe *p)
{
	if (p->magic != LCP_PLUGIN_MAGIC) {
		refuse(pf, "bad magic: expected 0x%08x, found 0x%08x", LCP_PLUGIN_MAGIC, p->magic);
		return -1;
	}
	if (p->abi_major != LCP_ABI_MAJOR) {
		refuse(pf, "ABI major version: expected %u, found %u", LCP_ABI_MAJOR, p->abi_major);
		return -1;
	}
	if (p->abi_minor > LCP_ABI_MINOR) {
		refuse(pf, "ABI minor version: expected at most %u, found %u (plugin built for a newer lcpipe)",
		       LCP_ABI_MINOR, p->abi_minor);
		return -1;
	}
	if (p->size != sizeof(struct lcp_plugin)) {
		refuse(pf, "descriptor size: expected %zu, found %u", sizeof(struct lcp_plugin), p->size);
		return -1;
	}
	if (p->kind < LCP_KIND_STAGE || p->kind > LCP_KIND_BATCH) {
		refuse(pf, "kind: expected 1..4 (stage, counters, pool, batch), found %u", p->kind);
		return -1;
	}
	if (!name_ok(p->name)) {
		refuse(pf, "name: expected [a-z0-9_]{1,%d}, found \"%s\"", LCP_NAME_MAX - 1, p->name);
		return -1;
	}
	return 0;
}

static void
add_file(struct lcp_registry *r, const char *path, unsigned first_of_dir)
{
	struct lcp_plugin_file *pf;
	struct lcp_probe p;
	char why[512];

	r->v = realloc(r->v, (r->n + 1) * sizeof(*r->v));
	if (r->v == NULL)
		abort();
	pf = &r->v[r->n++];
	memset(pf, 0, sizeof(*pf));
	pf->path = strdup(path);
	if (lcp_elf_probe(path, &p, why, sizeof(why)) < 0) {
		refuse(pf, "%s", why);
		return;
	}
	snprintf(pf->name, sizeof(pf->name), "%s", p.name);
	pf->kind = p.kind;
	if (check_header(pf, &p) < 0)
		return;
	for (unsigned i = 0; i < r->n - 1; i++) {
		struct lcp_plugin_file *o = &r->v[i];

		if (strcmp(o->name, pf->name) != 0)
			continue;
		if (i >= first_of_dir) {
			/* same directory: both refused */
			refuse(pf, "duplicate plugin name \"%s\" (also declared by %s)", pf->name, o->path);
			if (o->refused == NULL)
				refuse(o, "duplicate plugin name \"%s\" (also declared by %s)", o->name, pf->path);
		} else if (o->refused == NULL) {
			refuse(pf, "shadowed: plugin name \"%s\" already found earlier on the search path in %s",
			       pf->name, o->path);
		}
		return;
	}
}

static int
cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static void
scan_dir(struct lcp_registry *r, const char *dir, bool warn_missing)
{
	DIR *d = opendir(dir);
	struct dirent *de;
	char **names = NULL;
	unsigned n = 0, first = r->n;

	if (d == NULL) {
		if (warn_missing)
			lcp_log(NULL, LCP_LOG_WARNING, "plugin directory %s: %s", dir, strerror(errno));
		return;
	}
	while ((de = readdir(d)) != NULL) {
		size_t l = strlen(de->d_name);

		if (l < 4 || strcmp(de->d_name + l - 3, ".so") != 0)
			continue;
		/* the build tree's and the plugin directory's lib*.so are libraries
		 * built beside the plugins (sink_shm's consumer library), not plugins;
		 * a directory the user names is taken whole */
		if (!warn_missing && strncmp(de->d_name, "lib", 3) == 0)
			continue;
		names = realloc(names, (n + 1) * sizeof(*names));
		if (names == NULL || asprintf(&names[n], "%s/%s", dir, de->d_name) < 0)
			abort();
		n++;
	}
	closedir(d);
	if (n > 1) /* qsort's base must not be NULL, even for 0 elements (UBSan) */
		qsort(names, n, sizeof(*names), cmp_str); /* deterministic order */
	for (unsigned i = 0; i < n; i++) {
		add_file(r, names[i], first);
		free(names[i]);
	}
	free(names);
}

static void
add_dir(struct lcp_registry *r, const char *dir)
{
	for (unsigned i = 0; i < r->n_dirs; i++)
		if (strcmp(r->dirs[i], dir) == 0)
			return;
	r->dirs = realloc(r->dirs, (r->n_dirs + 1) * sizeof(*r->dirs));
	if (r->dirs == NULL)
		abort();
	r->dirs[r->n_dirs++] = strdup(dir);
}

static bool
running_from_build_tree(void)
{
	char exe[PATH_MAX];
	ssize_t l = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	size_t bl = strlen(LCP_ABS_BUILDDIR);

	if (l <= 0)
		return false;
	exe[l] = '\0';
	/* an install prefix inside the build tree is not the build tree */
	if (strncmp(exe, LCP_PREFIX "/", strlen(LCP_PREFIX) + 1) == 0)
		return false;
	return strncmp(exe, LCP_ABS_BUILDDIR "/", bl + 1) == 0;
}

void
lcp_registry_init(struct lcp_registry *r, const char *const *cfg_dirs, unsigned n)
{
	const char *env = getenv("LCP_PLUGIN_PATH");
	unsigned n_user;

	memset(r, 0, sizeof(*r));
	for (unsigned i = 0; i < n; i++)
		add_dir(r, cfg_dirs[i]);
	if (env != NULL && *env) {
		char *copy = strdup(env), *save = NULL;

		for (char *t = strtok_r(copy, ":", &save); t; t = strtok_r(NULL, ":", &save))
			add_dir(r, t);
		free(copy);
	}
	n_user = r->n_dirs;
	if (running_from_build_tree()) {
		glob_t g;

		if (glob(LCP_ABS_BUILDDIR "/plugins/*/.libs", GLOB_ONLYDIR, NULL, &g) == 0) {
			for (size_t i = 0; i < g.gl_pathc; i++)
				add_dir(r, g.gl_pathv[i]);
			globfree(&g);
		}
	} else {
		add_dir(r, LCP_PKGLIBDIR);
	}
	for (unsigned i = 0; i < r->n_dirs; i++)
		scan_dir(r, r->dirs[i], i < n_user);
}

static int
check_stage_ops(struct lcp_plugin_file *pf, const struct lcp_stage_ops *ops)
{
	unsigned n_in = 0;

	if (ops->init == NULL) {
		refuse(pf, "stage ops: init is NULL");
		return -1;
	}
	if (ops->ports == NULL) {
		refuse(pf, "stage ops: no port table");
		return -1;
	}
	for (const struct lcp_port_def *p = ops->ports; p->name; p++) {
		if (!name_ok(p->name) || (p->dir != LCP_PORT_IN && p->dir != LCP_PORT_OUT) ||
		    p->unit < LCP_UNIT_PKT || p->unit > LCP_UNIT_MSG) {
			refuse(pf, "stage ops: port \"%s\": bad name, direction %u or unit %u",
			       p->name, p->dir, p->unit);
			return -1;
		}
		n_in += p->dir == LCP_PORT_IN;
		if (p->flags & LCP_PORT_F_FORWARD) {
			unsigned from = LCP_PORT_FORWARD_FROM(p->flags), k = 0;
			const struct lcp_port_def *q = ops->ports;

			for (; q->name && k < from; q++, k++)
				;
			if (p->dir != LCP_PORT_OUT || q->name == NULL || q->dir != LCP_PORT_IN ||
			    q->unit != p->unit) {
				refuse(pf, "stage ops: port \"%s\": LCP_PORT_F_FORWARDS(%u) must be on an output and name an input port of the same unit",
				       p->name, from);
				return -1;
			}
		}
		if (((p->flags & LCP_PORT_F_HOLDS) && (p->dir != LCP_PORT_OUT || p->unit != LCP_UNIT_STREAM)) ||
		    ((p->flags & LCP_PORT_F_RELEASES) && (p->dir != LCP_PORT_IN || p->unit != LCP_UNIT_STREAM))) {
			refuse(pf, "stage ops: port \"%s\": LCP_PORT_F_%s belongs on a stream %s port", p->name,
			       (p->flags & LCP_PORT_F_HOLDS) ? "HOLDS" : "RELEASES",
			       (p->flags & LCP_PORT_F_HOLDS) ? "output" : "input");
			return -1;
		}
		for (const struct lcp_port_def *q = ops->ports; q != p; q++) {
			if (strcmp(q->name, p->name) == 0) {
				refuse(pf, "stage ops: port \"%s\" declared twice", p->name);
				return -1;
			}
		}
	}
	for (const char *const *c = ops->counters; c && *c; c++) {
		if (!name_ok(*c) || strcmp(*c, "drop_shutdown") == 0) {
			refuse(pf, "stage ops: counter \"%s\": expected [a-z0-9_] and not a built-in name (drop_shutdown)",
			       *c);
			return -1;
		}
		for (const char *const *d = ops->counters; d != c; d++) {
			if (strcmp(*c, *d) == 0) {
				refuse(pf, "stage ops: counter \"%s\" declared twice", *c);
				return -1;
			}
		}
	}
	if (n_in > 0 && ops->process == NULL) {
		refuse(pf, "stage ops: has input ports but process is NULL");
		return -1;
	}
	if (n_in == 0 && ops->poll == NULL) {
		refuse(pf, "stage ops: no input port and no poll: it could never do anything");
		return -1;
	}
	return 0;
}

/* ABI 2.2 histograms: names [a-z][a-z0-9_]* and unique, 1..LCP_HIST_MAX_LE
 * strictly ascending bounds, a help line */
static int
check_hists(struct lcp_plugin_file *pf, const struct lcp_hist_def *h)
{
	for (const struct lcp_hist_def *d = h; d != NULL && d->name != NULL; d++) {
		if (!name_ok(d->name) || d->name[0] < 'a' || d->name[0] > 'z' || d->help == NULL ||
		    d->le == NULL || d->n_le < 1 || d->n_le > LCP_HIST_MAX_LE) {
			refuse(pf, "stage ops: histogram \"%s\": expected a name [a-z][a-z0-9_]*, a help line and 1..%u bounds",
			       d->name, LCP_HIST_MAX_LE);
			return -1;
		}
		for (unsigned k = 1; k < d->n_le; k++)
			if (d->le[k] <= d->le[k - 1]) {
				refuse(pf, "stage ops: histogram \"%s\": bound %u (%llu) is not above bound %u (%llu)",
				       d->name, k, (unsigned long long)d->le[k], k - 1,
				       (unsigned long long)d->le[k - 1]);
				return -1;
			}
		for (const struct lcp_hist_def *e = h; e != d; e++)
			if (strcmp(e->name, d->name) == 0) {
				refuse(pf, "stage ops: histogram \"%s\" declared twice", d->name);
				return -1;
			}
	}
	return 0;
}

int
lcp_plugin_open(struct lcp_plugin_file *pf)
{
	const struct lcp_plugin *d;
	struct lcp_probe p;
	char why[512];

	if (pf->refused != NULL)
		return -1;
	if (pf->desc != NULL)
		return 0;
	/* RTLD_NODELETE: a plugin pulls in DPDK driver libraries whose constructors
	 * register buses and drivers once per process; unloading them with a config
	 * and loading them again for the next (lcpipe ab validates two configs)
	 * would run those constructors twice, which DPDK answers with a panic */
	pf->handle = dlopen(pf->path, RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE);
	if (pf->handle == NULL) {
		refuse(pf, "dlopen failed: %s", dlerror());
		return -1;
	}
	d = dlsym(pf->handle, LCP_PLUGIN_SYMBOL);
	if (d == NULL) {
		refuse(pf, "no descriptor: dlsym(%s) failed", LCP_PLUGIN_SYMBOL);
		goto fail;
	}
	/* the loaded copy must say what the file said */
	p.magic = d->magic;
	p.abi_major = d->abi_major;
	p.abi_minor = d->abi_minor;
	p.size = d->size;
	p.kind = d->kind;
	memcpy(p.name, d->name, LCP_NAME_MAX);
	p.name[LCP_NAME_MAX - 1] = '\0';
	if (check_header(pf, &p) < 0)
		goto fail;
	if (strcmp(p.name, pf->name) != 0 || p.kind != pf->kind) {
		refuse(pf, "descriptor changed between probe and load");
		goto fail;
	}
	if (d->ops == NULL) {
		refuse(pf, "ops: expected a %s ops table, found NULL", lcp_plugin_kind_name(d->kind));
		goto fail;
	}
	if (d->version == NULL || d->summary == NULL) {
		refuse(pf, "descriptor: version and summary are required");
		goto fail;
	}
	if (lcp_opt_table_check(d->options, d->conf_size, why, sizeof(why)) < 0) {
		refuse(pf, "%s", why);
		goto fail;
	}
	if (d->kind == LCP_KIND_STAGE && (check_stage_ops(pf, d->ops) < 0 || check_hists(pf, lcp_stage_hists(d)) < 0))
		goto fail;
	if (d->kind == LCP_KIND_COUNTERS) {
		const struct lcp_counters_ops *co = d->ops;

		if (!co->create || !co->destroy || !co->add || !co->read) {
			refuse(pf, "counters ops: create, destroy, add and read are required");
			goto fail;
		}
	}
	if (d->kind == LCP_KIND_POOL) {
		const struct lcp_pool_ops *po = d->ops;

		if (!po->create || !po->destroy || !po->get_bulk || !po->put_bulk || !po->in_use) {
			refuse(pf, "pool ops: create, destroy, get_bulk, put_bulk and in_use are required");
			goto fail;
		}
	}
	if (d->kind == LCP_KIND_BATCH) {
		const struct lcp_batch_ops *bo = d->ops;

		if (!bo->create || !bo->destroy || !bo->params) {
			refuse(pf, "batch ops: create, destroy and params are required");
			goto fail;
		}
	}
	pf->desc = d;
	return 0;
fail:
	dlclose(pf->handle);
	pf->handle = NULL;
	return -1;
}

struct lcp_plugin_file *
lcp_registry_get(struct lcp_registry *r, const char *name, const struct lcp_plugin_file **refused)
{
	if (refused)
		*refused = NULL;
	for (unsigned i = 0; i < r->n; i++) {
		struct lcp_plugin_file *pf = &r->v[i];

		if (pf->name[0] == '\0' || strcmp(pf->name, name) != 0)
			continue;
		if (pf->refused == NULL && lcp_plugin_open(pf) == 0)
			return pf;
		if (refused && *refused == NULL)
			*refused = pf;
	}
	return NULL;
}

void
lcp_registry_names(struct lcp_registry *r, struct lcp_sbuf *b)
{
	struct lcp_plugin_file **v;
	unsigned n = lcp_registry_sorted(r, &v);

	lcp_sbuf_addf(b, "%s", "");
	for (unsigned i = 0; i < n; i++)
		lcp_sbuf_addf(b, "%s%s", i ? ", " : "", v[i]->name);
	if (n == 0)
		lcp_sbuf_addf(b, "(none)");
	free(v);
}

void
lcp_registry_suggest(struct lcp_registry *r, struct lcp_suggest *sg)
{
	struct lcp_plugin_file **v;
	unsigned n = lcp_registry_sorted(r, &v);

	for (unsigned i = 0; i < n; i++)
		lcp_suggest_try(sg, v[i]->name);
	free(v);
}

static int
cmp_pf(const void *a, const void *b)
{
	return strcmp((*(struct lcp_plugin_file *const *)a)->name,
		      (*(struct lcp_plugin_file *const *)b)->name);
}

unsigned
lcp_registry_sorted(struct lcp_registry *r, struct lcp_plugin_file ***out)
{
	unsigned n = 0;

	*out = calloc(r->n + 1, sizeof(**out));
	for (unsigned i = 0; i < r->n; i++)
		if (r->v[i].refused == NULL && lcp_plugin_open(&r->v[i]) == 0)
			(*out)[n++] = &r->v[i];
	qsort(*out, n, sizeof(**out), cmp_pf);
	return n;
}

void
lcp_registry_fini(struct lcp_registry *r)
{
	for (unsigned i = 0; i < r->n; i++) {
		if (r->v[i].handle)
			dlclose(r->v[i].handle);
		free(r->v[i].path);
		free(r->v[i].refused);
	}
	lcp_strv_free(r->dirs, r->n_dirs);
	free(r->v);
	memset(r, 0, sizeof(*r));
}
