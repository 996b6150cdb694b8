/* SPDX-License-Identifier: BSD-3-Clause
 * ab.c — lcpipe ab: `lcpipe ab`: the options, loading both sides, the pairs, the result (ab_priv.h).
 */
#include "ab_priv.h"

/* ---- setup ---- */

char *
file_tag(const char *path)
{
	const char *b = strrchr(path, '/');
	char *t = strdup(b ? b + 1 : path);
	size_t n = strlen(t);

	if (n > 5 && strcmp(t + n - 5, ".json") == 0)
		t[n - 5] = '\0';
	for (char *p = t; *p; p++)
		if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
		      (*p >= '0' && *p <= '9') || *p == '-' || *p == '_' || *p == '.'))
			*p = '_';
	return t;
}

/* Validate (as `lcpipe check`) and plan; 0 or LCP_EXIT_CONFIG. The config,
 * valid or not, is freed only at the end (see cli_load_checked()). */
int
side_load(struct ab *ab, struct ab_side *s)
{
	struct lcp_cfg *c;

	if (cli_load_checked(s->path, ab->eal, ab->n_eal, &s->cfg) != 0) {
		fprintf(stderr,
			"lcpipe ab: config %c (%s) is not valid (the errors above, as `lcpipe check %s` "
			"reports them); nothing run\n",
			s->letter, s->path, s->path);
		return LCP_EXIT_CONFIG;
	}
	c = s->cfg;
	s->tag = file_tag(s->path);
	s->name = strdup(c->name);
	s->duration = ab->duration_opt > 0  ? ab->duration_opt
		      : c->eng.duration > 0 ? c->eng.duration
					    : AB_DEFAULT_DURATION;
	s->timeout = s->duration + c->eng.drain_timeout + AB_RUN_GRACE;
	plan_build(&s->plan, c);
	s->runs = calloc(ab->runs, sizeof(*s->runs));
	return 0;
}

void
ab_free(struct ab *ab)
{
	for (unsigned sd = 0; sd < 2; sd++) {
		struct ab_side *s = &ab->side[sd];

		for (unsigned i = 0; s->runs && i < ab->runs; i++) {
			json_decref(s->runs[i].vals);
			free(s->runs[i].gate);
		}
		free(s->runs);
		free(s->tag);
		free(s->name);
		plan_free(&s->plan);
		lcp_cfg_free(s->cfg);
	}
	for (unsigned k = 0; k < ab->n_m; k++) {
		free(ab->m[k].id);
		free(ab->m[k].label);
		free(ab->m[k].unit);
	}
	free(ab->m);
}

void
cli_ab_usage(FILE *f)
{
	fprintf(f,
		"usage: lcpipe ab A.json B.json [--runs N] [--duration S] [--json FILE] [--svg FILE]\n"
		"                 [--quiet] [--keep] [--gate PCT] [--retries N] [-- EAL ARGS]\n\n"
		"Compare two pipeline configs on the same machine: both are validated (as `lcpipe check`),\n"
		"then run N times each, interleaved A B A B ..., every run a fresh `lcpipe run CONF\n"
		"--duration S --report FILE --no-live` process. A spin loop timed before and after every\n"
		"run (the noise gate) repeats a run that ran while the machine was busier or quieter than\n"
		"at calibration. Per metric: the medians of A and B, the median of the per-pair ratios B/A\n"
		"and their min-max; as a table, JSON and an SVG chart. See doc/ab-testing.md.\n"
		"  --runs N       runs of each config (default %d)\n"
		"  --duration S   seconds per run (default: each config's engine.duration, else %g)\n"
		"  --json FILE    the JSON result (default ab-<A>-vs-<B>.json in the current directory)\n"
		"  --svg FILE     the chart (default ab-<A>-vs-<B>.svg)\n"
		"  --quiet        no progress lines, only the table and errors\n"
		"  --keep         keep every run's log and report (in $TMPDIR/lcpipe-ab.*), not only a failed one's\n"
		"  --gate PCT     noise gate limit: drift of the spin loop from its calibration (default %.0f)\n"
		"  --retries N    repetitions of a noisy run before it is kept, flagged noisy (default %d)\n"
		"  -- ARGS        EAL arguments for both configs, replacing their \"eal\" arrays\n"
		"Exit status: 0 when every run ran, 1 when a run failed (its log is named), 2 usage,\n"
		"78 when a config is not valid, 130 when interrupted.\n",
		AB_DEFAULT_RUNS, AB_DEFAULT_DURATION, 100 * AB_DEFAULT_GATE, AB_DEFAULT_RETRIES);
}

int
parse_uint(const char *opt, const char *s, unsigned min, unsigned max, unsigned *out)
{
	char *end;
	unsigned long v;

	errno = 0;
	v = strtoul(s, &end, 10);
	if (*s == '\0' || *end || errno || v < min || v > max || s[0] == '-') {
		fprintf(stderr, "lcpipe ab: %s: expected an integer %u..%u, got \"%s\"\n", opt, min,
			max, s);
		return -1;
	}
	*out = (unsigned)v;
	return 0;
}

int
parse_pos(const char *opt, const char *s, bool zero_ok, double *out)
{
	char *end;
	double v = strtod(s, &end);

	if (*s == '\0' || *end || !isfinite(v) || v < 0 || (!zero_ok && v == 0)) {
		fprintf(stderr, "lcpipe ab: %s: expected a number %s 0, got \"%s\"\n", opt,
			zero_ok ? ">=" : ">", s);
		return -1;
	}
	*out = v;
	return 0;
}

int
cli_ab(int argc, char **argv)
{
	static const struct option lo[] = {
		{ "runs", required_argument, NULL, 'n' },
		{ "duration", required_argument, NULL, 'd' },
		{ "json", required_argument, NULL, 'j' },
		{ "svg", required_argument, NULL, 's' },
		{ "quiet", no_argument, NULL, 'q' },
		{ "keep", no_argument, NULL, 'k' },
		{ "gate", required_argument, NULL, 'g' },
		{ "retries", required_argument, NULL, 'r' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct ab *ab = calloc(1, sizeof(*ab));
	struct sigaction sa = { .sa_handler = ab_on_signal }, old[3];
	char *json_def = NULL, *svg_def = NULL;
	const char *tmp;
	double pct = 100 * AB_DEFAULT_GATE;
	int opt, rc = 0;
	ssize_t l;

	ab->runs = AB_DEFAULT_RUNS;
	ab->retries = AB_DEFAULT_RETRIES;
	argc = cli_split_eal(argc, argv, &ab->eal, &ab->n_eal);
	optind = 1;
	while ((opt = getopt_long(argc, argv, "n:d:qh", lo, NULL)) != -1) {
		switch (opt) {
		case 'n':
			if (parse_uint("--runs", optarg, 1, 1000, &ab->runs) < 0)
				rc = 2;
			break;
		case 'd':
			if (parse_pos("--duration", optarg, false, &ab->duration_opt) < 0)
				rc = 2;
			break;
		case 'j':
			ab->json_path = optarg;
			break;
		case 's':
			ab->svg_path = optarg;
			break;
		case 'q':
			ab->quiet = true;
			break;
		case 'k':
			ab->keep = true;
			break;
		case 'g':
			if (parse_pos("--gate", optarg, true, &pct) < 0)
				rc = 2;
			break;
		case 'r':
			if (parse_uint("--retries", optarg, 0, 100, &ab->retries) < 0)
				rc = 2;
			break;
		case 'h':
			cli_ab_usage(stdout);
			goto out;
		default:
			rc = 2;
		}
	}
	if (rc == 0 && argc - optind != 2) {
		fprintf(stderr, "lcpipe ab: expected two configs, A and B (lcpipe ab --help)\n");
		rc = 2;
	}
	if (rc != 0)
		goto out;
	ab->tol = pct / 100;
	ab->side[0].letter = 'A';
	ab->side[0].path = argv[optind];
	ab->side[1].letter = 'B';
	ab->side[1].path = argv[optind + 1];

	/* both validated before anything runs; both reported */
	if (side_load(ab, &ab->side[0]) != 0)
		rc = LCP_EXIT_CONFIG;
	if (side_load(ab, &ab->side[1]) != 0)
		rc = LCP_EXIT_CONFIG;
	if (rc != 0)
		goto out;

	if (ab->json_path == NULL) {
		if (asprintf(&json_def, "ab-%s-vs-%s.json", ab->side[0].tag, ab->side[1].tag) < 0)
			json_def = NULL;
		ab->json_path = json_def;
	}
	if (ab->svg_path == NULL) {
		if (asprintf(&svg_def, "ab-%s-vs-%s.svg", ab->side[0].tag, ab->side[1].tag) < 0)
			svg_def = NULL;
		ab->svg_path = svg_def;
	}
	l = readlink("/proc/self/exe", ab->exe, sizeof(ab->exe) - 1);
	if (l <= 0 || ab->json_path == NULL || ab->svg_path == NULL) {
		fprintf(stderr, "lcpipe ab: /proc/self/exe: %s\n", strerror(errno));
		rc = 1;
		goto out;
	}
	ab->exe[l] = '\0';
	tmp = getenv("TMPDIR");
	snprintf(ab->dir, sizeof(ab->dir), "%s/lcpipe-ab.XXXXXX", tmp && *tmp ? tmp : "/tmp");
	if (mkdtemp(ab->dir) == NULL) {
		fprintf(stderr, "lcpipe ab: cannot create %s: %s\n", ab->dir, strerror(errno));
		rc = 1;
		goto out;
	}
	sigemptyset(&sa.sa_mask);
	sa.sa_flags = 0; /* no SA_RESTART: wait4() returns EINTR */
	sigaction(SIGALRM, &sa, &old[0]);
	sigaction(SIGINT, &sa, &old[1]);
	sigaction(SIGTERM, &sa, &old[2]);

	if (gate_calibrate(ab) < 0) {
		fprintf(stderr, "lcpipe ab: cannot calibrate the noise gate\n");
		rc = 1;
		goto out_sig;
	}
	progress(ab, "A = %s (\"%s\"), %.3g s per run", ab->side[0].path, ab->side[0].name,
		 ab->side[0].duration);
	progress(ab, "B = %s (\"%s\"), %.3g s per run", ab->side[1].path, ab->side[1].name,
		 ab->side[1].duration);
	progress(
		ab,
		"noise gate: %llu xorshift steps, %.2f ms (median of %d: %.2f %.2f %.2f %.2f %.2f), limit %.0f %%; "
		"runs: %s, logs in %s",
		(unsigned long long)ab->gate_iters, ab->gate_cal_ns / 1e6, AB_GATE_CAL,
		ab->gate_cal[0] / 1e6, ab->gate_cal[1] / 1e6, ab->gate_cal[2] / 1e6,
		ab->gate_cal[3] / 1e6, ab->gate_cal[4] / 1e6, 100 * ab->tol, ab->exe, ab->dir);
	for (unsigned i = 0; i < ab->runs && rc == 0; i++)
		for (unsigned sd = 0; sd < 2 && rc == 0; sd++)
			rc = side_run(ab, &ab->side[sd], i);
	if (rc != 0) {
		fprintf(stderr, "lcpipe ab: stopped; logs and reports kept in %s\n", ab->dir);
		goto out_sig;
	}
	if (!ab->keep)
		rmdir(ab->dir);
	summarise(ab);
	print_table(ab, stdout);
	if (write_json(ab, ab->json_path) != 0) {
		fprintf(stderr, "lcpipe ab: cannot write %s\n", ab->json_path);
		rc = 1;
	}
	if (write_svg(ab, ab->svg_path) != 0) {
		fprintf(stderr, "lcpipe ab: cannot write %s: %s\n", ab->svg_path, strerror(errno));
		rc = 1;
	}
	if (rc == 0)
		printf("\nwrote %s and %s%s%s\n", ab->json_path, ab->svg_path,
		       ab->keep ? "; runs kept in " : "", ab->keep ? ab->dir : "");
out_sig:
	sigaction(SIGALRM, &old[0], NULL);
	sigaction(SIGINT, &old[1], NULL);
	sigaction(SIGTERM, &old[2], NULL);
out:
	free(json_def);
	free(svg_def);
	ab_free(ab);
	free(ab);
	return rc;
}
