/* SPDX-License-Identifier: BSD-3-Clause
 * lcpipe — the command line: run, check, describe, list-plugins, and ab (the
 * A/B harness, in ab.c).
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include <lcp/log.h>

#include "config.h"
#include "cli.h"
#include "lcp_priv.h"

/* what the embedded default job is, read from it (so --help cannot drift) */
static void
print_default_job(FILE *f)
{
	json_t *r = json_loads(lcp_default_config, 0, NULL);
	const char *name = json_string_value(json_object_get(r, "name"));
	json_t *d = json_object_get(json_object_get(r, "engine"), "duration");

	fprintf(f, "Without CONF: the embedded default job (conf/default.json), \"%s\"", name != NULL ? name : "?");
	if (json_is_number(d) && json_number_value(d) > 0)
		fprintf(f, ", for %g s", json_number_value(d));
	fprintf(f, ".\n");
	json_decref(r);
}

static void
usage_main(FILE *f, const char *libdir)
{
	fprintf(f,
		"usage: lcpipe COMMAND [ARGS]\n"
		"\n"
		"  run [CONF] [--duration S] [--report FILE] [--live|--no-live] [-- EAL ARGS]\n"
		"                      run a pipeline (no CONF: the embedded default job)\n"
		"  check CONF [-- EAL ARGS]\n"
		"                      validate a config without starting anything; exit 78 if bad\n"
		"  describe [PLUGIN] [--json|--markdown|--schema|--man1|--man5]\n"
		"                      options, ports and counters of plugins, from their tables\n"
		"  list-plugins        plugins on the search path (and files refused, with why)\n"
		"  ab A B [--runs N] [--duration S] [--json FILE] [--svg FILE] [--quiet] [-- EAL ARGS]\n"
		"                      compare two configs: ABAB... runs, each a fresh process,\n"
		"                      behind a noise gate; medians, B/A ratios, table/JSON/SVG\n"
		"  --version, --help   this; COMMAND --help for each command\n"
		"\n"
		"Plugins are searched in the config's plugin_path, $LCP_PLUGIN_PATH, then %s.\n"
		"LCP_LOG_LEVEL=1..5 sets the log level (default 4, info).\n",
		libdir);
}

static void
help_check(FILE *f)
{
	fprintf(f, "usage: lcpipe check CONF [-- EAL ARGS]\n\n"
		   "Validate CONF fully (JSON syntax, keys, plugins, options, links, units, ports,\n"
		   "lcores, ring sizes, message loops) without starting EAL or any traffic. Prints\n"
		   "every error with its JSON path, and warnings (e.g. buffers that can hold more\n"
		   "mbufs than engine.mbufs) that do not make it fail. Exit 0 when valid, 78 when not.\n");
}

static void
help_run(FILE *f)
{
	fprintf(f, "usage: lcpipe run [CONF] [--duration S] [--report FILE] [--live|--no-live] [-- EAL ARGS]\n\n"
		   "Run the pipeline in CONF.\n");
	print_default_job(f);
	fprintf(f, "  --duration S   stop cleanly after S seconds (overrides engine.duration; 0 = until a signal)\n"
		   "  --report FILE  write the final stats as JSON to FILE\n"
		   "  --live         one live stats line, rewritten in place (default on a terminal)\n"
		   "  --no-live      periodic stats lines every engine.stats_interval seconds\n"
		   "  -- ARGS        EAL arguments replacing the config's \"eal\" array\n"
		   "SIGINT or SIGTERM drain the pipeline and stop it cleanly. Exit status: 0 ok,\n"
		   "1 runtime failure, 3 objects leaked (a mempool not back to zero in use), 4 a stage did\n"
		   "not return within engine.stop_timeout (or a second signal came), 78 bad config.\n");
}

static void
help_describe(FILE *f)
{
	fprintf(f, "usage: lcpipe describe [PLUGIN] [--json|--markdown|--schema|--man1|--man5]\n\n"
		   "Describe plugins from their option tables: options (type, default, range),\n"
		   "ports (direction, unit), counters and histograms. Without PLUGIN: every plugin\n"
		   "and the engine options (this is doc/plugins.md). --schema: the config JSON Schema\n"
		   "(conf/lcpipe.schema.json). --man1, --man5: the man pages lcpipe(1) and\n"
		   "lcpipe.json(5) (doc/lcpipe.1, doc/lcpipe.json.5).\n");
}

static void
help_list(FILE *f)
{
	fprintf(f, "usage: lcpipe list-plugins\n\nEvery plugin on the search path: name, kind, version, "
		   "summary, file; then every file refused, with the reason.\n");
}

/* lcpipe(1), as markdown for lcp_md_to_man(): the help texts of every command */
static void
man1_markdown(struct lcp_sbuf *b)
{
	static void (*const helps[])(FILE *) = { help_run, help_check, help_describe, help_list, cli_ab_usage };
	static const char *const names[] = { "run", "check", "describe", "list-plugins", "ab" };
	char *t = NULL;
	size_t tl = 0;
	FILE *f;

	lcp_sbuf_addf(b, "## Synopsis\n\n```\n");
	f = open_memstream(&t, &tl);
	usage_main(f, "the installed plugin directory ($(pkglibdir), e.g. /usr/local/lib/lcpipe)");
	fclose(f);
	lcp_sbuf_addf(b, "%s```\n\n", t);
	free(t);
	lcp_sbuf_addf(b, "## Description\n\n"
			 "lcpipe runs a pipeline of stages (shared-object plugins) on DPDK lcores, connected by "
			 "rings and configured in a JSON file (lcpipe.json(5)): receive, a user-space TCP/IP "
			 "stack, WebSocket and TLS, measurement and sinks, each stage on the lcore the config "
			 "gives it. It validates a config before anything starts, reports every counter, "
			 "histogram and pool as it runs (stats lines, DPDK telemetry, a Prometheus endpoint) "
			 "and in a JSON report, and compares two configs on the same traffic (ab).\n\n"
			 "## Commands\n\n");
	for (unsigned i = 0; i < sizeof(helps) / sizeof(helps[0]); i++) {
		t = NULL;
		f = open_memstream(&t, &tl);
		helps[i](f);
		fclose(f);
		lcp_sbuf_addf(b, "### %s\n\n```\n%s```\n\n", names[i], t);
		free(t);
	}
	lcp_sbuf_addf(b, "## Environment\n\n"
			 "| variable | meaning |\n|---|---|\n"
			 "| `LCP_PLUGIN_PATH` | directories (colon-separated) searched for plugins after the config's `plugin_path` |\n"
			 "| `LCP_LOG_LEVEL` | 1 (errors) to 5 (debug); default 4 (info) |\n"
			 "| `RUNTIME_DIRECTORY` | where DPDK puts its runtime files and the telemetry socket |\n\n"
			 "## Exit status\n\n"
			 "| status | meaning |\n|---|---|\n"
			 "| 0 | the run ended cleanly (duration, signal, a stage's stop) or the config is valid |\n"
			 "| 1 | a runtime failure (EAL, a stage's init, the metrics endpoint's address) |\n"
			 "| 2 | a usage error |\n"
			 "| 3 | objects leaked: a mempool or pool not back to zero in use after the run |\n"
			 "| 4 | a stage did not return within `engine.stop_timeout`, or a second signal came |\n"
			 "| 78 | the config is not valid (every error printed with its JSON path) |\n\n"
			 "## Files\n\n"
			 "| file | what |\n|---|---|\n"
			 "| `$(pkgdatadir)/conf/*.json` | example configs (demo, wss, fault injection, scale-out, venues) |\n"
			 "| `$(pkgdatadir)/conf/lcpipe.schema.json` | the config's JSON Schema |\n"
			 "| `$(pkgdatadir)/conf/grafana/lcpipe-dashboard.json` | a Grafana dashboard for the metrics endpoint |\n"
			 "| `$(docdir)` | the documentation: architecture, plugins, the plugin guide, benchmarks |\n\n"
			 "## See also\n\n"
			 "lcpipe.json(5), the installed documentation (doc/architecture.md, doc/plugins.md, "
			 "doc/writing-a-plugin.md), `pkg-config --cflags lcpipe` for the plugin SDK.\n");
}

static void
print_errs(const struct lcp_errs *errs)
{
	for (unsigned i = 0; i < errs->n; i++)
		fprintf(stderr, "error: %s\n", errs->v[i]);
}

/* split argv at "--" */
int
cli_split_eal(int argc, char **argv, char ***eal, unsigned *n_eal)
{
	for (int i = 0; i < argc; i++) {
		if (strcmp(argv[i], "--") == 0) {
			*eal = argv + i + 1;
			*n_eal = (unsigned)(argc - i - 1);
			return i;
		}
	}
	*eal = NULL;
	*n_eal = 0;
	return argc;
}

int
cli_load_checked(const char *path, char **eal, unsigned n_eal, struct lcp_cfg **cfg)
{
	struct lcp_errs errs = { 0 };
	int rc = 0;

	*cfg = lcp_cfg_load(path, eal, n_eal, &errs);
	for (unsigned i = 0; *cfg != NULL && i < (*cfg)->warns.n; i++)
		fprintf(stderr, "warning: %s\n", (*cfg)->warns.v[i]);
	if (errs.n > 0) {
		print_errs(&errs);
		fprintf(stderr, "%s: %u error%s\n", path, errs.n, errs.n == 1 ? "" : "s");
		rc = LCP_EXIT_CONFIG;
	}
	lcp_errs_free(&errs);
	return rc;
}

static int
cmd_check(int argc, char **argv)
{
	struct lcp_cfg *c;
	char **eal;
	unsigned n_eal, n_lcores = 0;
	int rc;

	argc = cli_split_eal(argc, argv, &eal, &n_eal);
	if (argc >= 2 && (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0)) {
		help_check(stdout);
		return 0;
	}
	if (argc != 2) {
		fprintf(stderr, "usage: lcpipe check CONF [-- EAL ARGS]\n");
		return 2;
	}
	rc = cli_load_checked(argv[1], eal, n_eal, &c);
	if (rc == 0) {
		bool seen[LCP_MAX_LCORES] = { false };

		for (unsigned i = 0; i < c->n_stages; i++)
			if (!seen[c->stages[i].lcore]) {
				seen[c->stages[i].lcore] = true;
				n_lcores++;
			}
		printf("%s: ok (%u stage%s, %u link%s, %u worker lcore%s)\n", argv[1], c->n_stages,
		       c->n_stages == 1 ? "" : "s", c->n_links, c->n_links == 1 ? "" : "s", n_lcores,
		       n_lcores == 1 ? "" : "s");
	}
	lcp_cfg_free(c);
	return rc;
}

static int
cmd_run(int argc, char **argv)
{
	static const struct option lo[] = {
		{ "duration", required_argument, NULL, 'd' },
		{ "report", required_argument, NULL, 'r' },
		{ "live", no_argument, NULL, 'L' },
		{ "no-live", no_argument, NULL, 'N' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct lcp_run_opts o = { .duration = -1, .live = -1 };
	struct lcp_errs errs = { 0 };
	struct lcp_cfg *c;
	const char *conf = NULL;
	char **eal, *end;
	unsigned n_eal;
	int opt, rc;

	argc = cli_split_eal(argc, argv, &eal, &n_eal);
	optind = 1;
	while ((opt = getopt_long(argc, argv, "d:r:h", lo, NULL)) != -1) {
		switch (opt) {
		case 'd':
			o.duration = strtod(optarg, &end);
			if (*end || o.duration < 0) {
				fprintf(stderr, "lcpipe run: --duration: expected seconds >= 0, got \"%s\"\n", optarg);
				return 2;
			}
			break;
		case 'r': o.report_path = optarg; break;
		case 'L': o.live = 1; break;
		case 'N': o.live = 0; break;
		case 'h':
			help_run(stdout);
			return 0;
		default:
			return 2;
		}
	}
	if (optind < argc)
		conf = argv[optind++];
	if (optind < argc) {
		fprintf(stderr, "lcpipe run: unexpected argument \"%s\"\n", argv[optind]);
		return 2;
	}
	c = lcp_cfg_load(conf, eal, n_eal, &errs);
	if (errs.n > 0) {
		print_errs(&errs);
		fprintf(stderr, "%s: %u error%s; nothing started\n", conf ? conf : "(default config)",
			errs.n, errs.n == 1 ? "" : "s");
		lcp_cfg_free(c);
		lcp_errs_free(&errs);
		return LCP_EXIT_CONFIG;
	}
	for (unsigned i = 0; i < c->warns.n; i++)
		lcp_log(NULL, LCP_LOG_WARNING, "%s", c->warns.v[i]);
	o.eal_overridden = n_eal > 0;
	rc = lcp_engine_run(c, &o);
	lcp_cfg_free(c);
	return rc;
}

static int
cmd_describe(int argc, char **argv)
{
	struct lcp_registry r;
	const char *name = NULL;
	enum { MD, JSON, SCHEMA, MAN1, MAN5 } fmt = MD;
	int rc = 0;

	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--json") == 0)
			fmt = JSON;
		else if (strcmp(argv[i], "--markdown") == 0)
			fmt = MD;
		else if (strcmp(argv[i], "--schema") == 0)
			fmt = SCHEMA;
		else if (strcmp(argv[i], "--man1") == 0)
			fmt = MAN1;
		else if (strcmp(argv[i], "--man5") == 0)
			fmt = MAN5;
		else if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
			help_describe(stdout);
			return 0;
		} else if (argv[i][0] == '-') {
			fprintf(stderr, "lcpipe describe: unknown option %s\n", argv[i]);
			return 2;
		} else {
			name = argv[i];
		}
	}
	if (fmt == MAN1) {
		struct lcp_sbuf md = { 0 }, b = { 0 };

		man1_markdown(&md);
		lcp_md_to_man(md.s, "lcpipe", 1, "a DPDK lcore pipeline engine", &b);
		printf("%s", b.s);
		lcp_sbuf_free(&md);
		lcp_sbuf_free(&b);
		return 0;
	}
	lcp_registry_init(&r, NULL, 0);
	if (fmt == MAN5) {
		struct lcp_sbuf md = { 0 }, b = { 0 };

		lcp_describe_markdown(&r, &md);
		lcp_md_to_man(md.s, "lcpipe.json", 5, "lcpipe pipeline configuration: keys, engine options, every plugin's options, ports and counters", &b);
		printf("%s", b.s);
		lcp_sbuf_free(&md);
		lcp_sbuf_free(&b);
	} else if (fmt == SCHEMA) {
		json_t *s = lcp_config_schema(&r);

		json_dumpf(s, stdout, JSON_INDENT(2) | JSON_SORT_KEYS);
		printf("\n");
		json_decref(s);
	} else if (name != NULL) {
		const struct lcp_plugin_file *refused;
		struct lcp_plugin_file *pf = lcp_registry_get(&r, name, &refused);

		if (pf == NULL) {
			struct lcp_sbuf b = { 0 };

			if (refused)
				fprintf(stderr, "lcpipe describe: %s\n", refused->refused);
			struct lcp_suggest sg;

			lcp_suggest_init(&sg, name);
			lcp_registry_suggest(&r, &sg);
			lcp_registry_names(&r, &b);
			fprintf(stderr, "lcpipe describe: unknown plugin \"%s\"%s; plugins found: %s\n", name,
				lcp_suggest_hint(&sg), b.s);
			lcp_sbuf_free(&b);
			rc = 1;
		} else if (fmt == JSON) {
			json_t *j = lcp_describe_plugin(pf, true);

			json_dumpf(j, stdout, JSON_INDENT(2));
			printf("\n");
			json_decref(j);
		} else {
			struct lcp_sbuf b = { 0 };

			lcp_describe_plugin_markdown(pf->desc, &b);
			printf("%s", b.s);
			lcp_sbuf_free(&b);
		}
	} else if (fmt == JSON) {
		struct lcp_plugin_file **v;
		unsigned n = lcp_registry_sorted(&r, &v);
		json_t *a = json_array();

		for (unsigned i = 0; i < n; i++)
			json_array_append_new(a, lcp_describe_plugin(v[i], false));
		json_dumpf(a, stdout, JSON_INDENT(2));
		printf("\n");
		json_decref(a);
		free(v);
	} else {
		struct lcp_sbuf b = { 0 };

		lcp_describe_markdown(&r, &b);
		printf("%s", b.s);
		lcp_sbuf_free(&b);
	}
	lcp_registry_fini(&r);
	return rc;
}

static int
cmd_list(int argc, char **argv)
{
	struct lcp_registry r;
	struct lcp_plugin_file **v;
	unsigned n, refused = 0;

	if (argc > 1) {
		if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0) {
			help_list(stdout);
			return 0;
		}
		fprintf(stderr, "usage: lcpipe list-plugins\n");
		return 2;
	}
	lcp_registry_init(&r, NULL, 0);
	n = lcp_registry_sorted(&r, &v);
	printf("%-20s %-9s %-8s %-60s %s\n", "name", "kind", "version", "summary", "file");
	for (unsigned i = 0; i < n; i++)
		printf("%-20s %-9s %-8s %-60s %s\n", v[i]->name, lcp_plugin_kind_name(v[i]->kind),
		       v[i]->desc->version, v[i]->desc->summary, v[i]->path);
	for (unsigned i = 0; i < r.n; i++)
		if (r.v[i].refused) {
			if (refused++ == 0)
				printf("\n");
			printf("%s\n", r.v[i].refused);
		}
	printf("\nsearch path:");
	for (unsigned i = 0; i < r.n_dirs; i++)
		printf(" %s", r.dirs[i]);
	printf("\n");
	free(v);
	lcp_registry_fini(&r);
	return 0;
}

int
main(int argc, char **argv)
{
	if (argc < 2) {
		usage_main(stderr, LCP_PKGLIBDIR);
		return 2;
	}
	if (strcmp(argv[1], "--version") == 0 || strcmp(argv[1], "version") == 0) {
		printf("lcpipe %s (plugin ABI %d.%d)\n", PACKAGE_VERSION, LCP_ABI_MAJOR, LCP_ABI_MINOR);
		return 0;
	}
	if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0 || strcmp(argv[1], "help") == 0) {
		usage_main(stdout, LCP_PKGLIBDIR);
		return 0;
	}
	if (strcmp(argv[1], "run") == 0)
		return cmd_run(argc - 1, argv + 1);
	if (strcmp(argv[1], "check") == 0)
		return cmd_check(argc - 1, argv + 1);
	if (strcmp(argv[1], "describe") == 0)
		return cmd_describe(argc - 1, argv + 1);
	if (strcmp(argv[1], "list-plugins") == 0)
		return cmd_list(argc - 1, argv + 1);
	if (strcmp(argv[1], "ab") == 0)
		return cli_ab(argc - 1, argv + 1);
	fprintf(stderr, "lcpipe: unknown command \"%s\"\n\n", argv[1]);
	usage_main(stderr, LCP_PKGLIBDIR);
	return 2;
}
