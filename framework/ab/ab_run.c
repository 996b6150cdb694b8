/* SPDX-License-Identifier: BSD-3-Clause
 * ab_run.c — lcpipe ab: running: the noise gate, one run as a child process, the metrics read from its report (ab_priv.h).
 */
#include "ab_priv.h"

volatile sig_atomic_t ab_signal; /* SIGINT/SIGTERM received */

/* SIGINT and SIGTERM are noted (and passed on to a running child); SIGALRM, the
 * wait4() timer, only interrupts the wait */
void
ab_on_signal(int sig)
{
	if (sig != SIGALRM)
		ab_signal = sig;
}


void
progress(const struct ab *ab, const char *fmt, ...)
{
	va_list ap;

	if (ab->quiet)
		return;
	va_start(ap, fmt);
	fputs("[ab] ", stderr);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
}

double
now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

/* ---- noise gate ---- */

/* A fixed amount of integer work: a serial xorshift chain (each step needs the
 * last, so neither the compiler nor the CPU can shorten it). */
uint64_t
gate_work(uint64_t iters)
{
	uint64_t x = 0x9e3779b97f4a7c15ull, acc = 0;

	for (uint64_t i = 0; i < iters; i++) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		acc += x;
	}
	return acc;
}

double
gate_ns(struct ab *ab)
{
	double t0 = now_ns();

	ab->gate_sink += gate_work(ab->gate_iters);
	return now_ns() - t0;
}

/* size the loop to about AB_GATE_TARGET_NS, then the calibration: the median
 * of AB_GATE_CAL timings of that fixed loop */
int
gate_calibrate(struct ab *ab)
{
	double t, v[AB_GATE_CAL];

	ab->gate_iters = 1u << 20;
	gate_ns(ab); /* warm-up */
	t = gate_ns(ab);
	for (unsigned i = 0; i < 2; i++) /* the fastest of three: least disturbed */
		t = fmin(t, gate_ns(ab));
	if (t <= 0)
		return -1;
	ab->gate_iters = (uint64_t)((double)ab->gate_iters * AB_GATE_TARGET_NS / t);
	if (ab->gate_iters < 1000)
		ab->gate_iters = 1000;
	for (unsigned i = 0; i < AB_GATE_CAL; i++)
		ab->gate_cal[i] = v[i] = gate_ns(ab);
	qsort(v, AB_GATE_CAL, sizeof(v[0]), dcmp);
	ab->gate_cal_ns = quantile(v, AB_GATE_CAL, 0.5);
	return ab->gate_cal_ns > 0 ? 0 : -1;
}

double
gate_drift(const struct ab *ab, double ns)
{
	return ns / ab->gate_cal_ns - 1.0;
}

/* ---- metrics ---- */


/* the metric id, registered on first sight (the order of first sight is the
 * order of the table and the chart) */
struct ab_metric *
metric(struct ab *ab, const char *id, enum ab_kind kind, int better, const char *unit,
       const char *label_fmt, ...)
{
	struct ab_metric *m;
	va_list ap;

	for (unsigned i = 0; i < ab->n_m; i++)
		if (strcmp(ab->m[i].id, id) == 0)
			return &ab->m[i];
	ab->m = realloc(ab->m, (ab->n_m + 1) * sizeof(*ab->m));
	m = &ab->m[ab->n_m++];
	memset(m, 0, sizeof(*m));
	m->id = strdup(id);
	m->unit = strdup(unit);
	m->kind = kind;
	m->better = better;
	va_start(ap, label_fmt);
	if (vasprintf(&m->label, label_fmt, ap) < 0)
		m->label = strdup(id);
	va_end(ap);
	return m;
}

void
put(json_t *vals, const struct ab_metric *m, double v)
{
	if (isfinite(v))
		json_object_set_new(vals, m->id, json_real(v));
}

bool
get_uint(json_t *o, const char *key, double *v)
{
	json_t *j = json_object_get(o, key);

	if (!json_is_integer(j))
		return false;
	*v = (double)json_integer_value(j);
	return true;
}

/* the objects that left lcore lc, from the report's stages */
int
lcore_objects(const struct ab_lcore *lc, json_t *stages, double *n, char *err, size_t len)
{
	*n = 0;
	for (unsigned k = 0; k < lc->n_exits; k++) {
		json_t *st = json_object_get(stages, lc->exits[k].stage);
		double v;

		if (lc->exits[k].ctr == NULL
			    ? !get_uint(st, "in", &v)
			    : !get_uint(json_object_get(st, "counters"), lc->exits[k].ctr, &v)) {
			snprintf(err, len, "report: stages.%s.%s%s missing", lc->exits[k].stage,
				 lc->exits[k].ctr ? "counters." : "",
				 lc->exits[k].ctr ? lc->exits[k].ctr : "in");
			return -1;
		}
		*n += v;
	}
	return 0;
}

/* Every metric of one run, from its --report and wait4()'s rusage. */
int
collect(struct ab *ab, struct ab_side *s, json_t *rep, const struct rusage *ru, json_t *vals,
	double *report_s, char *err, size_t len)
{
	json_t *stages = json_object_get(rep, "stages"), *lcores = json_object_get(rep, "lcores");
	json_t *dur = json_object_get(rep, "duration_s"), *st, *a, *tm;
	const char *key, *uw = unit_word(s->plan.units, true);
	double secs, delivered = 0, drops = 0, pool_fail = 0, samples, v;
	bool have_pools = false;
	char unit[32];
	size_t i;

	if (!json_is_number(dur) || !json_is_object(stages) || !json_is_object(lcores)) {
		snprintf(err, len, "report: no duration_s, stages or lcores");
		return -1;
	}
	secs = json_number_value(dur);
	*report_s = secs;
	if (secs <= 0) {
		snprintf(err, len, "report: duration_s %g", secs);
		return -1;
	}

	/* throughput: objects entering the sinks per second of the run */
	for (unsigned k = 0; k < s->plan.n_sinks; k++) {
		if (!get_uint(json_object_get(stages, s->plan.sinks[k]), "in", &v)) {
			snprintf(err, len, "report: stages.%s.in missing", s->plan.sinks[k]);
			return -1;
		}
		delivered += v;
	}
	snprintf(unit, sizeof(unit), "%s/s", uw);
	put(vals, metric(ab, "delivered_per_s", AB_RATE, +1, unit, "%s/s delivered", uw),
	    delivered / secs);

	/* cost: busy cycles of each lcore per object leaving it */
	for (unsigned k = 0; k < s->plan.n_lcores; k++) {
		const struct ab_lcore *lc = &s->plan.lcores[k];
		const char *w = unit_word(lc->units, false);
		char id[64], lk[16];
		double busy, n;

		snprintf(lk, sizeof(lk), "%u", lc->lcore);
		if (!get_uint(json_object_get(lcores, lk), "busy_cycles", &busy)) {
			snprintf(err, len, "report: lcores.%s.busy_cycles missing", lk);
			return -1;
		}
		if (lcore_objects(lc, stages, &n, err, len) < 0)
			return -1;
		if (lc->n_exits == 0 || n == 0)
			continue; /* nothing leaves it (or nothing did): no per-object cost */
		snprintf(id, sizeof(id), "cycles_per_obj.lcore%u", lc->lcore);
		snprintf(unit, sizeof(unit), "cycles/%s", w);
		if (lc->stage != NULL)
			put(vals,
			    metric(ab, id, AB_CYCLES, -1, unit, "lcore %u (%s) cycles/%s",
				   lc->lcore, lc->stage, w),
			    busy / n);
		else
			put(vals,
			    metric(ab, id, AB_CYCLES, -1, unit, "lcore %u cycles/%s", lc->lcore, w),
			    busy / n);
	}

	/* per stage: drops, and with engine.stage_timing its own cycles per object
	 * (since ABI 2.0 no stage call runs inside another) */
	json_object_foreach (stages, key, st) {
		if (get_uint(st, "drops", &v))
			drops += v;
		tm = json_object_get(st, "timing");
		if (json_is_number(json_object_get(tm, "cycles_per_object")) &&
		    get_uint(tm, "objects", &v) && v > 0) {
			char id[96];

			snprintf(id, sizeof(id), "stage_cycles_per_obj.%s", key);
			put(vals,
			    metric(ab, id, AB_CYCLES, -1, "cycles/obj", "stage %s own cycles/obj", key),
			    json_number_value(json_object_get(tm, "cycles_per_object")));
		}
	}

	/* latency: the gauges every metrics stage (metrics, or its measurement
	 * control metrics_naive) sets at stop */
	json_object_foreach (stages, key, st) {
		static const struct {
			const char *ctr, *name, *hkey;
		} q[] = { { "lat_p50_ns", "p50", "p50" },
			  { "lat_p99_ns", "p99", "p99" },
			  { "lat_p999_ns", "p99.9", "p999" } };
		json_t *ctrs = json_object_get(st, "counters");
		const char *plugin = json_string_value(json_object_get(st, "plugin"));

		if (plugin == NULL ||
		    (strcmp(plugin, "metrics") != 0 && strcmp(plugin, "metrics_naive") != 0) ||
		    !get_uint(ctrs, "lat_samples", &samples) || samples == 0)
			continue;
		for (unsigned k = 0; k < sizeof(q) / sizeof(q[0]); k++) {
			/* the histogram's quantile (interpolated in its bucket, ABI 2.2)
			 * when the report has it, else the stage's gauge (its bucket's
			 * upper bound, up to 25 % above) */
			json_t *hq = json_object_get(json_object_get(json_object_get(st, "histograms"),
								     "latency_seconds"),
						     q[k].hkey);
			char id[96];

			if (k == 2 && samples < AB_P999_MIN_SAMPLES)
				continue; /* too few samples to say */
			snprintf(id, sizeof(id), "%s.%s", q[k].ctr, key);
			if (json_is_number(hq))
				put(vals, metric(ab, id, AB_NS, -1, "ns", "latency %s (%s)", q[k].name, key),
				    json_number_value(hq) * 1e9);
			else if (get_uint(ctrs, q[k].ctr, &v))
				put(vals,
				    metric(ab, id, AB_NS, -1, "ns", "latency %s (%s)", q[k].name,
					   key),
				    v);
		}
	}

	/* CPU and memory of the whole process */
	put(vals, metric(ab, "cpu_s", AB_SEC, -1, "s", "CPU user+sys"),
	    (double)ru->ru_utime.tv_sec + (double)ru->ru_utime.tv_usec / 1e6 +
		    (double)ru->ru_stime.tv_sec + (double)ru->ru_stime.tv_usec / 1e6);
	put(vals, metric(ab, "max_rss_kib", AB_KIB, -1, "KiB", "peak RSS"), (double)ru->ru_maxrss);

	/* the pool strategy's pools (report "pools"): objects out at peak, as the
	 * engine sampled it, and failed gets */
	json_array_foreach (json_object_get(rep, "pools"), i, a) {
		const char *name = json_string_value(json_object_get(a, "name"));
		const char *stage = json_string_value(json_object_get(a, "stage"));
		char id[160], pn[128];
		struct ab_metric *m;

		if (name == NULL)
			continue;
		snprintf(pn, sizeof(pn), "%s%s%s", stage ? stage : "", stage ? "." : "", name);
		if (get_uint(a, "get_fail", &v)) {
			pool_fail += v;
			have_pools = true;
		}
		if (!get_uint(a, "peak_in_use", &v))
			continue;
		snprintf(id, sizeof(id), "pool_peak_in_use.%s", pn);
		m = metric(ab, id, AB_COUNT, -1, "objs", "pool %s peak in use", pn);
		m->sampled = true; /* at the engine's stats ticks: a peak between two is missed */
		put(vals, m, v);
	}
	if (have_pools)
		put(vals, metric(ab, "pool_get_fail", AB_COUNT, -1, "gets", "pool failed gets (all)"),
		    pool_fail);
	/* rings between lcores: the most objects ever waiting */
	json_array_foreach (json_object_get(rep, "rings"), i, a) {
		const char *link = json_string_value(json_object_get(a, "link"));
		double idx;
		char id[64];

		if (link == NULL || !get_uint(a, "index", &idx) || !get_uint(a, "high_water", &v))
			continue;
		snprintf(id, sizeof(id), "ring_high_water.links%.0f", idx);
		put(vals, metric(ab, id, AB_COUNT, -1, "objs", "ring high-water %s", link), v);
	}
	put(vals, metric(ab, "drops", AB_COUNT, -1, "objs", "drops (all stages)"), drops);
	return 0;
}

/* ---- one run: a child process ---- */

/* fork + exec argv with stdout and stderr into log. Sets *wstatus and *ru.
 * Returns 0 when the child was waited for, -1 when it could not start, 1 when
 * it outlived timeout seconds (stopped with SIGTERM, then SIGKILL), 2 when ab
 * was interrupted (the signal is passed on; the child was waited for). */
int
child_run(struct ab *ab, char *const argv[], const char *log, double timeout, int *wstatus,
	  struct rusage *ru, char *err, size_t len)
{
	struct itimerval it = { .it_interval = { 0, 200000 }, .it_value = { 0, 200000 } };
	struct itimerval off = { { 0, 0 }, { 0, 0 } };
	double t0 = now_ns(), kill_at = 0;
	bool termed = false, forwarded = false;
	int fd, nul, rc = 0;
	pid_t pid;

	fd = open(log, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0) {
		snprintf(err, len, "cannot create %s: %s", log, strerror(errno));
		return -1;
	}
	nul = open("/dev/null", O_RDONLY | O_CLOEXEC);
	if (nul < 0) {
		snprintf(err, len, "/dev/null: %s", strerror(errno));
		close(fd);
		return -1;
	}
	fflush(NULL);
	pid = fork();
	if (pid < 0) {
		snprintf(err, len, "fork: %s", strerror(errno));
		close(fd);
		close(nul);
		return -1;
	}
	if (pid == 0) {
		/* async-signal-safe calls only until exec */
		if (dup2(nul, 0) < 0 || dup2(fd, 1) < 0 || dup2(fd, 2) < 0)
			_exit(127);
		execv(ab->exe, argv);
		_exit(127);
	}
	close(fd);
	close(nul);
	/* a periodic timer makes wait4() return EINTR, so the deadline and a
	 * signal are noticed whatever the timing */
	setitimer(ITIMER_REAL, &it, NULL);
	for (;;) {
		pid_t r = wait4(pid, wstatus, 0, ru);
		double t = now_ns();

		if (r == pid)
			break;
		if (r < 0 && errno != EINTR) {
			snprintf(err, len, "wait4: %s", strerror(errno));
			rc = -1;
			kill(pid, SIGKILL);
			waitpid(pid, wstatus, 0);
			break;
		}
		if (ab_signal && !forwarded) {
			kill(pid, ab_signal);
			forwarded = true;
		}
		if (!termed && t - t0 > timeout * 1e9) {
			kill(pid, SIGTERM);
			termed = true;
			kill_at = t + AB_KILL_GRACE * 1e9;
		} else if (termed && t > kill_at) {
			kill(pid, SIGKILL);
			kill_at = t + 1e12;
		}
	}
	setitimer(ITIMER_REAL, &off, NULL);
	if (rc == 0 && termed) {
		snprintf(err, len, "still running after %.0f s: stopped", timeout);
		rc = 1;
	}
	if (rc == 0 && ab_signal)
		rc = 2;
	return rc;
}

char *
run_file(const struct ab *ab, const struct ab_side *s, unsigned i, const char *ext)
{
	char *p;

	if (asprintf(&p, "%s/%c%u.%s", ab->dir, s->letter, i + 1, ext) < 0)
		return NULL;
	return p;
}

void
fmt_status(char *buf, size_t len, int st)
{
	if (WIFEXITED(st))
		snprintf(buf, len, "exit status %d", WEXITSTATUS(st));
	else if (WIFSIGNALED(st))
		snprintf(buf, len, "killed by signal %d (%s)", WTERMSIG(st),
			 strsignal(WTERMSIG(st)));
	else
		snprintf(buf, len, "wait status 0x%x", st);
}


/* Run i of side s: attempts until the gate is quiet before and after, or the
 * retries are used up (then kept, flagged noisy). 0, or the exit status ab
 * must end with. */
int
side_run(struct ab *ab, struct ab_side *s, unsigned i)
{
	struct ab_run *r = &s->runs[i];
	char dur[32], err[512] = "", what[64];
	char *log = run_file(ab, s, i, "log"), *rep_path = run_file(ab, s, i, "report.json");
	char **argv = calloc(10 + ab->n_eal, sizeof(*argv)); /* 8 + "--" + EAL + NULL */
	int n = 0, rc = 0;

	snprintf(dur, sizeof(dur), "%.17g", s->duration);
	argv[n++] = "lcpipe";
	argv[n++] = "run";
	argv[n++] = (char *)s->path;
	argv[n++] = "--duration";
	argv[n++] = dur;
	argv[n++] = "--report";
	argv[n++] = rep_path;
	argv[n++] = "--no-live";
	if (ab->n_eal > 0) {
		argv[n++] = "--";
		for (unsigned k = 0; k < ab->n_eal; k++)
			argv[n++] = ab->eal[k];
	}
	argv[n] = NULL;
	snprintf(what, sizeof(what), "run %c%u/%u", s->letter, i + 1, ab->runs);

	for (;;) {
		struct ab_gate_rec *g;
		struct rusage ru;
		json_error_t je;
		json_t *rep;
		double t0, db, da;
		int ws = 0, cr;

		if (ab_signal) {
			fprintf(stderr, "lcpipe ab: interrupted before %s\n", what);
			rc = 130;
			goto out;
		}
		r->gate = realloc(r->gate, (r->attempts + 1) * sizeof(*r->gate));
		g = &r->gate[r->attempts++];
		json_decref(r->vals);
		r->vals = json_object();
		unlink(rep_path);
		g->before_ns = gate_ns(ab);
		t0 = now_ns();
		memset(&ru, 0, sizeof(ru));
		cr = child_run(ab, argv, log, s->timeout, &ws, &ru, err, sizeof(err));
		r->wall_s = (now_ns() - t0) / 1e9;
		r->status = ws;
		if (cr == 2) {
			fprintf(stderr, "lcpipe ab: interrupted during %s (%s); its output: %s\n",
				what, s->path, log);
			rc = 130;
			goto out;
		}
		if (cr != 0) {
			fprintf(stderr, "lcpipe ab: %s (%s) failed: %s; its output: %s\n", what,
				s->path, err, log);
			rc = 1;
			goto out;
		}
		if (!WIFEXITED(ws) || WEXITSTATUS(ws) != 0) {
			fmt_status(err, sizeof(err), ws);
			fprintf(stderr, "lcpipe ab: %s (%s) failed: %s; its output: %s\n", what,
				s->path, err, log);
			rc = 1;
			goto out;
		}
		g->after_ns = gate_ns(ab); /* right after wait4(), before any other work */
		rep = json_load_file(rep_path, 0, &je);
		if (rep == NULL ||
		    collect(ab, s, rep, &ru, r->vals, &r->report_s, err, sizeof(err)) < 0) {
			fprintf(stderr, "lcpipe ab: %s (%s): %s: %s; its output: %s\n", what,
				s->path, rep_path, rep == NULL ? je.text : err, log);
			json_decref(rep);
			rc = 1;
			goto out;
		}
		json_decref(rep);
		db = gate_drift(ab, g->before_ns);
		da = gate_drift(ab, g->after_ns);
		if (fabs(db) <= ab->tol && fabs(da) <= ab->tol) {
			r->noisy = false;
		} else if (r->attempts > ab->retries) {
			r->noisy = true;
			s->noisy++;
		} else {
			progress(
				ab,
				"%s: noise gate drift %+.1f %% before, %+.1f %% after (limit %.0f %%): repeating (%u of %u)",
				what, 100 * db, 100 * da, 100 * ab->tol, r->attempts, ab->retries);
			continue;
		}
		if (r->attempts > 1)
			s->repeated++;
		if (!ab->quiet) {
			char v[32];
			json_t *j = json_object_get(r->vals, "delivered_per_s");

			fmt_value(v, sizeof(v), AB_RATE, j ? json_number_value(j) : NAN);
			progress(ab, "%s %-12s %s %s/s, gate %+.1f %% / %+.1f %%%s", what, s->tag,
				 v, unit_word(s->plan.units, true), 100 * db, 100 * da,
				 r->noisy ? "  NOISY (kept after the last repetition)" : "");
		}
		break;
	}
	if (!ab->keep) {
		unlink(log);
		unlink(rep_path);
	}
out:
	free(argv);
	free(log);
	free(rep_path);
	return rc;
}
