/* SPDX-License-Identifier: BSD-3-Clause
 * fuzz_config.c — libFuzzer target: config loading (framework/config.c, graph.c,
 * opt.c: the option walker, the plugins' validate hooks, loader.c's registry)
 * from the input as JSON text, with the build tree's plugins. No EAL.
 *
 * The input goes into a memfd and lcp_cfg_load() reads it as
 * /proc/self/fd/<n>, the way `lcpipe check FILE` reads a file. Plugins: the
 * registry of a run from the build tree (plugins/<name>/.libs) and
 * LCP_PLUGIN_PATH. At init every plugin is opened once and kept open
 * (RTLD_NODELETE), so a run re-probes the directories but never loads a
 * plugin's code again.
 *
 * Invariants (trap on failure):
 *   - NULL from lcp_cfg_load only with an error; no error message is empty
 *   - a config without errors has stages, each resolved to a plugin, valid
 *     links, and the same config written back with json_dumps() loads again
 *     without errors to the same number of stages and links
 */
#include <stdbool.h>
#include <sys/mman.h>
#include <unistd.h>

#include "lcp_priv.h"

#include "fuzz_common.h"

static int memfd = -1;
static char mempath[64];
static struct lcp_registry keep_reg; /* holds every plugin open */

int LLVMFuzzerInitialize(int *argc, char ***argv);

int
LLVMFuzzerInitialize(int *argc, char ***argv)
{
	struct lcp_plugin_file **v;
	unsigned n;

	(void)argc;
	(void)argv;
	memfd = memfd_create("fuzz_config", MFD_CLOEXEC);
	if (memfd < 0) {
		perror("memfd_create");
		abort();
	}
	snprintf(mempath, sizeof(mempath), "/proc/self/fd/%d", memfd);
	lcp_registry_init(&keep_reg, NULL, 0);
	n = lcp_registry_sorted(&keep_reg, &v);
	free(v);
	fprintf(stderr, "fuzz_config: %u plugins loaded from %u directories\n", n, keep_reg.n_dirs);
	if (n == 0) {
		fprintf(stderr, "fuzz_config: no plugin found: run from the build tree or set LCP_PLUGIN_PATH\n");
		abort();
	}
	return 0;
}

static struct lcp_cfg *
load_text(const char *text, size_t len, struct lcp_errs *errs)
{
	if (ftruncate(memfd, 0) < 0 || (len && pwrite(memfd, text, len, 0) != (ssize_t)len)) {
		perror("memfd write");
		abort();
	}
	return lcp_cfg_load(mempath, NULL, 0, errs);
}

static void
check_errs(const struct lcp_errs *e)
{
	for (unsigned i = 0; i < e->n; i++)
		FUZZ_CHECK(e->v[i] != NULL && e->v[i][0] != '\0');
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct lcp_errs errs = { 0 };
	struct lcp_cfg *c;

	if (memfd < 0)
		LLVMFuzzerInitialize(NULL, NULL);
	c = load_text((const char *)data, size, &errs);
	check_errs(&errs);
	if (c == NULL) {
		FUZZ_CHECK(errs.n > 0);
	} else if (errs.n == 0) {
		struct lcp_errs errs2 = { 0 };
		struct lcp_cfg *c2;
		char *text;

		FUZZ_CHECK(c->n_stages > 0);
		for (unsigned i = 0; i < c->n_stages; i++)
			FUZZ_CHECK(c->stages[i].pf != NULL && c->stages[i].pf->desc != NULL);
		for (unsigned i = 0; i < c->n_links; i++)
			FUZZ_CHECK(c->links[i].valid && c->links[i].src < c->n_stages && c->links[i].dst < c->n_stages);
		text = json_dumps(c->root, JSON_ENCODE_ANY);
		FUZZ_CHECK(text != NULL);
		c2 = load_text(text, strlen(text), &errs2);
		if (errs2.n) {
			for (unsigned i = 0; i < errs2.n; i++)
				fprintf(stderr, "after json_dumps: %s\n", errs2.v[i]);
		}
		FUZZ_CHECK(c2 != NULL && errs2.n == 0);
		FUZZ_CHECK(c2->n_stages == c->n_stages && c2->n_links == c->n_links);
		lcp_cfg_free(c2);
		lcp_errs_free(&errs2);
		free(text);
	}
	lcp_cfg_free(c);
	lcp_errs_free(&errs);
	return 0;
}
