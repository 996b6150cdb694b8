/* SPDX-License-Identifier: BSD-3-Clause
 * ab.c — `lcpipe ab A.json B.json`: the A/B harness. Two configs that differ in
 * one thing run on the same machine, interleaved ABAB..., each run a fresh
 * `lcpipe run` process (this binary, /proc/self/exe) writing a --report, each
 * behind a noise gate; per metric it reports the medians of A and B, the median
 * of the per-pair ratios B/A and their spread, as a table, JSON and an SVG chart.
 * A low-latency engineer needs that rigour because one run of either config on
 * a shared VM says little: only the paired, gated, repeated comparison does.
 *
 * Map: cli_ab() -> options -> side_load() for A and B (validation as `lcpipe
 * check`, then plan_build(): the pipeline's sinks and what leaves each lcore)
 * -> gate_calibrate() -> per pair i: side_run(A, i), side_run(B, i), each
 * attempt being gate_ns() -> child_run() -> collect() -> gate_ns(), repeated
 * while the gate says noisy -> summarise() -> print_table(), write_json(),
 * write_svg(). The metrics are defined in collect() and doc/ab-testing.md.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <math.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "config.h"
#include "cli.h"
#include "lcp_priv.h"

#define AB_DEFAULT_RUNS 5
#define AB_DEFAULT_DURATION 3.0 /* when neither --duration nor the config sets one */
#define AB_DEFAULT_RETRIES 3
#define AB_DEFAULT_GATE 0.10	  /* drift tolerated, as a fraction of the calibration */
#define AB_GATE_TARGET_NS 30e6	  /* the spin loop is sized to take about this long */
#define AB_GATE_CAL 5		  /* calibration: the median of this many loops */
#define AB_RUN_GRACE 60.0	  /* seconds a run may take beyond duration + drain_timeout */
#define AB_KILL_GRACE 10.0	  /* after SIGTERM, seconds before SIGKILL */
#define AB_P999_MIN_SAMPLES 10000 /* no p99.9 from fewer latency samples */

/* ---- the plan: read once from a validated config ---- */

/* one way objects leave an lcore */
struct ab_exit {
	char *stage; /* stage name, as in the report */
	char *ctr;   /* counter "<port>.out" (a link to another lcore); NULL: "in" (a sink) */
};

struct ab_lcore {
	unsigned lcore;
	unsigned n_stages;
	char *stage; /* the only stage on the lcore, else NULL */
	struct ab_exit *exits;
	unsigned n_exits;
	unsigned units; /* 1 << enum lcp_unit of what leaves */
};

struct ab_plan {
	char **sinks; /* stages counted as delivering (stats.c's rule) */
	unsigned n_sinks;
	unsigned units; /* 1 << enum lcp_unit of what enters the sinks */
	struct ab_lcore *lcores;
	unsigned n_lcores;
};

/* ---- runs, metrics ---- */

struct ab_gate_rec {
	double before_ns, after_ns;
};

struct ab_run {
	json_t *vals;		  /* metric id -> value, from the kept attempt */
	unsigned attempts;	  /* 1 + repetitions */
	struct ab_gate_rec *gate; /* per attempt */
	bool noisy;		  /* still noisy after the last repetition: kept, flagged */
	int status;		  /* exit status of the kept attempt */
	double wall_s, report_s;
};

struct ab_side {
	char letter; /* 'A' or 'B' */
	const char *path;
	char *tag;  /* file name without directory and .json, for output names */
	char *name; /* the config's "name" */
	double duration, timeout;
	struct ab_plan plan;
	struct lcp_cfg *cfg; /* kept to the end: see side_load() */
	struct ab_run *runs;
	unsigned noisy, repeated;
};

enum ab_kind { AB_RATE, AB_CYCLES, AB_NS, AB_KIB, AB_SEC, AB_COUNT };

struct ab_metric {
	char *id;
	char *label;
	char *unit;
	enum ab_kind kind;
	int better; /* +1: higher is better, -1: lower */
	bool sampled; /* read from a periodic sample (a peak the engine saw at a stats tick):
		       * not exact enough to judge */
	/* summarise() */
	double med[2];
	double r_med, r_min, r_max, r_q1, r_q3;
	unsigned r_n;
	unsigned left_out; /* pairs with A 0 and B not: no ratio */
	const char *nojudge; /* why no verdict is given (then no ratio is shown), or NULL */
};

/* a count whose medians are both below this is too small to judge (a ratio of
 * 3 to 2 says nothing) */
#define AB_TINY_COUNT 20

struct ab {
	struct ab_side side[2];
	struct ab_metric *m;
	unsigned n_m;
	unsigned runs, retries;
	double tol, duration_opt;
	bool quiet, keep;
	const char *json_path, *svg_path;
	char **eal;
	unsigned n_eal;
	char exe[PATH_MAX];
	char dir[PATH_MAX]; /* logs and reports of the runs */
	uint64_t gate_iters;
	double gate_cal_ns, gate_cal[AB_GATE_CAL];
	volatile uint64_t gate_sink;
};

static volatile sig_atomic_t ab_signal; /* SIGINT/SIGTERM received */

/* SIGINT and SIGTERM are noted (and passed on to a running child); SIGALRM, the
 * wait4() timer, only interrupts the wait */
static void
ab_on_signal(int sig)
{
	if (sig != SIGALRM)
		ab_signal = sig;
}

static void progress(const struct ab *ab, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void
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

static double
now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

/* ---- statistics ---- */

static int
dcmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/* quantile q of n sorted values, linear between order statistics */
static double
quantile(const double *v, unsigned n, double q)
{
	double h;
	unsigned lo;

	if (n == 0)
		return NAN;
	h = (double)(n - 1) * q;
	lo = (unsigned)h;
	if (lo + 1 >= n)
		return v[n - 1];
	return v[lo] + (h - (double)lo) * (v[lo + 1] - v[lo]);
}

/* ---- noise gate ---- */

/* A fixed amount of integer work: a serial xorshift chain (each step needs the
 * last, so neither the compiler nor the CPU can shorten it). */
static uint64_t
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

static double
gate_ns(struct ab *ab)
{
	double t0 = now_ns();

	ab->gate_sink += gate_work(ab->gate_iters);
	return now_ns() - t0;
}

/* size the loop to about AB_GATE_TARGET_NS, then the calibration: the median
 * of AB_GATE_CAL timings of that fixed loop */
static int
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

static double
gate_drift(const struct ab *ab, double ns)
{
	return ns / ab->gate_cal_ns - 1.0;
}

/* ---- the plan ---- */

static const struct lcp_stage_ops *
stage_ops(const struct lcp_cfg_stage *cs)
{
	return (const struct lcp_stage_ops *)cs->pf->desc->ops;
}

/* stats.c's rule for "delivered": a sink has no linked output; with strict,
 * also no poll() (the tx-only end of a loopback port pair is not a sink when
 * there is a real one) */
static bool
cfg_is_sink(const struct lcp_cfg_stage *cs, bool strict)
{
	for (unsigned k = 0; k < cs->n_ports; k++)
		if (cs->link_out[k] >= 0)
			return false;
	return !strict || stage_ops(cs)->poll == NULL;
}

static struct ab_lcore *
plan_lcore(struct ab_plan *p, unsigned lcore)
{
	for (unsigned i = 0; i < p->n_lcores; i++)
		if (p->lcores[i].lcore == lcore)
			return &p->lcores[i];
	p->lcores = realloc(p->lcores, (p->n_lcores + 1) * sizeof(*p->lcores));
	memset(&p->lcores[p->n_lcores], 0, sizeof(*p->lcores));
	p->lcores[p->n_lcores].lcore = lcore;
	return &p->lcores[p->n_lcores++];
}

static void
lcore_exit(struct ab_lcore *lc, const char *stage, const char *port)
{
	struct ab_exit *x;

	lc->exits = realloc(lc->exits, (lc->n_exits + 1) * sizeof(*lc->exits));
	x = &lc->exits[lc->n_exits++];
	x->stage = strdup(stage);
	x->ctr = NULL;
	if (port != NULL && asprintf(&x->ctr, "%s.out", port) < 0)
		x->ctr = NULL;
}

static int
lcore_cmp(const void *a, const void *b)
{
	const struct ab_lcore *x = a, *y = b;

	return x->lcore < y->lcore ? -1 : x->lcore > y->lcore;
}

static void
plan_build(struct ab_plan *p, const struct lcp_cfg *c)
{
	bool strict = false;

	for (unsigned i = 0; i < c->n_stages; i++)
		strict |= cfg_is_sink(&c->stages[i], true);
	for (unsigned i = 0; i < c->n_stages; i++) {
		const struct lcp_cfg_stage *cs = &c->stages[i];
		const struct lcp_port_def *ports = stage_ops(cs)->ports;
		struct ab_lcore *lc = plan_lcore(p, cs->lcore);

		lc->stage = lc->n_stages++ == 0 ? (char *)cs->name : NULL;
		if (cfg_is_sink(cs, strict)) {
			p->sinks = realloc(p->sinks, (p->n_sinks + 1) * sizeof(*p->sinks));
			p->sinks[p->n_sinks++] = strdup(cs->name);
			lcore_exit(lc, cs->name, NULL);
			for (unsigned k = 0; k < cs->n_ports; k++)
				if (ports[k].dir == LCP_PORT_IN && cs->links_in[k] > 0) {
					p->units |= 1u << ports[k].unit;
					lc->units |= 1u << ports[k].unit;
				}
		}
		for (unsigned k = 0; k < cs->n_ports; k++) {
			int l = cs->link_out[k];

			if (l >= 0 && c->stages[c->links[l].dst].lcore != cs->lcore) {
				lcore_exit(lc, cs->name, ports[k].name);
				lc->units |= 1u << ports[k].unit;
			}
		}
	}
	for (unsigned i = 0; i < p->n_lcores; i++)
		if (p->lcores[i].stage != NULL)
			p->lcores[i].stage = strdup(p->lcores[i].stage);
	qsort(p->lcores, p->n_lcores, sizeof(*p->lcores), lcore_cmp);
}

static void
plan_free(struct ab_plan *p)
{
	for (unsigned i = 0; i < p->n_sinks; i++)
		free(p->sinks[i]);
	free(p->sinks);
	for (unsigned i = 0; i < p->n_lcores; i++) {
		for (unsigned k = 0; k < p->lcores[i].n_exits; k++) {
			free(p->lcores[i].exits[k].stage);
			free(p->lcores[i].exits[k].ctr);
		}
		free(p->lcores[i].exits);
		free(p->lcores[i].stage);
	}
	free(p->lcores);
	memset(p, 0, sizeof(*p));
}

/* singular and plural name of what a set of units counts */
static const char *
unit_word(unsigned units, bool plural)
{
	switch (units) {
	case 1u << LCP_UNIT_PKT:
		return plural ? "pkts" : "pkt";
	case 1u << LCP_UNIT_MSG:
		return plural ? "msgs" : "msg";
	case 1u << LCP_UNIT_STREAM:
		return plural ? "stream mbufs" : "stream mbuf";
	default:
		return plural ? "objs" : "obj";
	}
}

/* ---- metrics ---- */

static struct ab_metric *metric(struct ab *ab, const char *id, enum ab_kind kind, int better,
				const char *unit, const char *label_fmt, ...)
	__attribute__((format(printf, 6, 7)));

/* the metric id, registered on first sight (the order of first sight is the
 * order of the table and the chart) */
static struct ab_metric *
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

static void
put(json_t *vals, const struct ab_metric *m, double v)
{
	if (isfinite(v))
		json_object_set_new(vals, m->id, json_real(v));
}

static bool
get_uint(json_t *o, const char *key, double *v)
{
	json_t *j = json_object_get(o, key);

	if (!json_is_integer(j))
		return false;
	*v = (double)json_integer_value(j);
	return true;
}

/* the objects that left lcore lc, from the report's stages */
static int
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
static int
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

	/* latency: the gauges every metrics stage sets at stop */
	json_object_foreach (stages, key, st) {
		static const struct {
			const char *ctr, *name, *hkey;
		} q[] = { { "lat_p50_ns", "p50", "p50" },
			  { "lat_p99_ns", "p99", "p99" },
			  { "lat_p999_ns", "p99.9", "p999" } };
		json_t *ctrs = json_object_get(st, "counters");
		const char *plugin = json_string_value(json_object_get(st, "plugin"));

		if (plugin == NULL || strcmp(plugin, "metrics") != 0 ||
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
static int
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

static char *
run_file(const struct ab *ab, const struct ab_side *s, unsigned i, const char *ext)
{
	char *p;

	if (asprintf(&p, "%s/%c%u.%s", ab->dir, s->letter, i + 1, ext) < 0)
		return NULL;
	return p;
}

static void
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

static void fmt_value(char *buf, size_t len, enum ab_kind kind, double v);

/* Run i of side s: attempts until the gate is quiet before and after, or the
 * retries are used up (then kept, flagged noisy). 0, or the exit status ab
 * must end with. */
static int
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

/* ---- summary ---- */

static bool
run_val(const struct ab_run *r, const char *id, double *v)
{
	json_t *j = json_object_get(r->vals, id);

	if (!json_is_number(j))
		return false;
	*v = json_number_value(j);
	return true;
}

static void
summarise(struct ab *ab)
{
	double *v = calloc(ab->runs, sizeof(double));

	for (unsigned k = 0; k < ab->n_m; k++) {
		struct ab_metric *m = &ab->m[k];
		unsigned n;

		for (unsigned sd = 0; sd < 2; sd++) {
			n = 0;
			for (unsigned i = 0; i < ab->runs; i++)
				if (run_val(&ab->side[sd].runs[i], m->id, &v[n]))
					n++;
			qsort(v, n, sizeof(*v), dcmp);
			m->med[sd] = quantile(v, n, 0.5);
		}
		n = 0;
		for (unsigned i = 0; i < ab->runs; i++) {
			double a, b;

			if (!run_val(&ab->side[0].runs[i], m->id, &a) ||
			    !run_val(&ab->side[1].runs[i], m->id, &b))
				continue;
			if (a != 0)
				v[n++] = b / a;
			else if (b == 0)
				v[n++] = 1.0; /* 0 and 0: the same */
			else
				m->left_out++;
		}
		qsort(v, n, sizeof(*v), dcmp);
		m->r_n = n;
		if (m->sampled)
			m->nojudge = "sampled at stats ticks: not judged";
		else if (m->med[0] == 0 && m->med[1] == 0)
			m->nojudge = "0 in both: nothing to judge";
		else if (m->kind == AB_COUNT && isfinite(m->med[0]) && isfinite(m->med[1]) &&
			 m->med[0] < AB_TINY_COUNT && m->med[1] < AB_TINY_COUNT)
			m->nojudge = "too few (< 20) to judge";
		m->r_med = quantile(v, n, 0.5);
		m->r_q1 = quantile(v, n, 0.25);
		m->r_q3 = quantile(v, n, 0.75);
		m->r_min = n ? v[0] : NAN;
		m->r_max = n ? v[n - 1] : NAN;
	}
	free(v);
}

/* value with its unit, scaled for reading: rates k/M/G, times ns/us/ms */
static void
fmt_value(char *buf, size_t len, enum ab_kind kind, double v)
{
	if (!isfinite(v)) {
		snprintf(buf, len, "-");
		return;
	}
	switch (kind) {
	case AB_RATE:
		if (v >= 1e9)
			snprintf(buf, len, "%.3f G", v / 1e9);
		else if (v >= 1e6)
			snprintf(buf, len, "%.3f M", v / 1e6);
		else if (v >= 1e3)
			snprintf(buf, len, "%.2f k", v / 1e3);
		else
			snprintf(buf, len, "%.1f", v);
		break;
	case AB_CYCLES:
		snprintf(buf, len, v >= 100 ? "%.0f" : "%.1f", v);
		break;
	case AB_NS:
		if (v >= 1e6)
			snprintf(buf, len, "%.2f ms", v / 1e6);
		else if (v >= 1e3)
			snprintf(buf, len, "%.2f us", v / 1e3);
		else
			snprintf(buf, len, "%.0f ns", v);
		break;
	case AB_KIB:
		snprintf(buf, len, "%.1f MiB", v / 1024);
		break;
	case AB_SEC:
		snprintf(buf, len, "%.3f s", v);
		break;
	case AB_COUNT:
		snprintf(buf, len, "%.0f", v);
		break;
	}
}

static void
fmt_ratio(char *buf, size_t len, double r)
{
	if (isfinite(r))
		snprintf(buf, len, "%.3f", r);
	else
		snprintf(buf, len, "-");
}

/* A difference of less than this (as a ratio) is not called either way */
#define AB_VERDICT_MIN 0.01

/* +1: B is better over the whole spread of the ratios (every pair differs by
 * more than AB_VERDICT_MIN the same way), -1: B is worse, 0: neither */
static int
verdict(const struct ab_metric *m)
{
	if (m->r_n == 0 || m->nojudge != NULL)
		return 0;
	if (m->r_min > 1.0 + AB_VERDICT_MIN)
		return m->better;
	if (m->r_max < 1.0 - AB_VERDICT_MIN)
		return -m->better;
	return 0;
}

/* the verdict in words: "B better", "B worse", "unclear" (the spread straddles
 * 1 +- AB_VERDICT_MIN), "no ratio" (no pair has both values) */
static const char *
verdict_text(const struct ab_metric *m)
{
	int vd = verdict(m);

	if (m->nojudge != NULL)
		return "not judged";
	if (m->r_n == 0)
		return "no ratio";
	return vd > 0 ? "B better" : vd < 0 ? "B worse" : "unclear";
}

/* why a metric has no ratio */
static const char *
no_ratio_text(const struct ab_metric *m)
{
	if (!isfinite(m->med[0]))
		return "only in B: no ratio";
	if (!isfinite(m->med[1]))
		return "only in A: no ratio";
	return "A is 0, B is not: no ratio";
}

static void
print_table(const struct ab *ab, FILE *f)
{
	char a[32], b[32], r[16], lo[16], hi[16];

	fprintf(f, "\nlcpipe ab: A = %s, B = %s\n", ab->side[0].path, ab->side[1].path);
	fprintf(f,
		"  %u runs each, interleaved ABAB..., %.3g s / %.3g s per run; noise gate %.1f ms, limit %.0f %%: "
		"A %u noisy, %u repeated; B %u noisy, %u repeated\n",
		ab->runs, ab->side[0].duration, ab->side[1].duration, ab->gate_cal_ns / 1e6,
		100 * ab->tol, ab->side[0].noisy, ab->side[0].repeated, ab->side[1].noisy,
		ab->side[1].repeated);
	fprintf(f, "%-44s %14s %14s %7s %15s %s\n", "metric", "A median", "B median", "B/A",
		"B/A min-max", "verdict");
	for (unsigned k = 0; k < ab->n_m; k++) {
		const struct ab_metric *m = &ab->m[k];
		bool judged = m->nojudge == NULL && m->r_n > 0;
		char range[40], why[96] = "";

		fmt_value(a, sizeof(a), m->kind, m->med[0]);
		fmt_value(b, sizeof(b), m->kind, m->med[1]);
		fmt_ratio(r, sizeof(r), m->r_med);
		fmt_ratio(lo, sizeof(lo), m->r_min);
		fmt_ratio(hi, sizeof(hi), m->r_max);
		snprintf(range, sizeof(range), "%s-%s", lo, hi);
		if (m->left_out > 0 && judged)
			snprintf(why, sizeof(why), "; %u pair%s left out (A 0, B not)", m->left_out,
				 m->left_out == 1 ? "" : "s");
		fprintf(f, "%-44.44s %14s %14s %7s %15s %s%s\n", m->label, a, b, judged ? r : "-",
			judged ? range : "-",
			m->nojudge != NULL ? m->nojudge : m->r_n == 0 ? no_ratio_text(m) : verdict_text(m), why);
	}
	fprintf(f, "verdict: B better / B worse when every pair's ratio is on that side of 1 by more than %.0f %%; "
		   "unclear otherwise; rows without a ratio say why\n",
		100 * AB_VERDICT_MIN);
	fflush(f);
}

/* ---- JSON ---- */

static json_t *
jnum(double v)
{
	return isfinite(v) ? json_real(v) : json_null();
}

static json_t *
side_json(const struct ab *ab, const struct ab_side *s)
{
	json_t *o = json_object(), *runs = json_array();

	json_object_set_new(o, "config", json_string(s->path));
	json_object_set_new(o, "name", json_string(s->name));
	json_object_set_new(o, "duration_s", json_real(s->duration));
	json_object_set_new(o, "delivered_unit", json_string(unit_word(s->plan.units, false)));
	json_object_set_new(o, "noisy_runs", json_integer(s->noisy));
	json_object_set_new(o, "repeated_runs", json_integer(s->repeated));
	for (unsigned i = 0; i < ab->runs; i++) {
		const struct ab_run *r = &s->runs[i];
		json_t *jr = json_object(), *gate = json_array();

		for (unsigned g = 0; g < r->attempts; g++)
			json_array_append_new(gate, json_pack("{s:f, s:f, s:f, s:f}", "before_ns",
							      r->gate[g].before_ns, "after_ns",
							      r->gate[g].after_ns, "before_drift",
							      gate_drift(ab, r->gate[g].before_ns),
							      "after_drift",
							      gate_drift(ab, r->gate[g].after_ns)));
		json_object_set_new(jr, "index", json_integer(i + 1));
		json_object_set_new(jr, "attempts", json_integer(r->attempts));
		json_object_set_new(jr, "noisy", json_boolean(r->noisy));
		json_object_set_new(jr, "gate", gate);
		json_object_set_new(jr, "exit_status", json_integer(WEXITSTATUS(r->status)));
		json_object_set_new(jr, "wall_s", json_real(r->wall_s));
		json_object_set_new(jr, "report_duration_s", json_real(r->report_s));
		json_object_set_new(jr, "metrics", json_incref(r->vals));
		json_array_append_new(runs, jr);
	}
	json_object_set_new(o, "runs", runs);
	return o;
}

static int
write_json(const struct ab *ab, const char *path)
{
	json_t *o = json_object(), *ms = json_array(), *gate = json_object(), *cal = json_array();
	int rc;

	json_object_set_new(o, "tool", json_string("lcpipe ab"));
	json_object_set_new(o, "lcpipe_version", json_string(PACKAGE_VERSION));
	json_object_set_new(o, "runs_per_config", json_integer(ab->runs));
	json_object_set_new(o, "order", json_string("ABAB"));
	json_object_set_new(o, "a", side_json(ab, &ab->side[0]));
	json_object_set_new(o, "b", side_json(ab, &ab->side[1]));
	json_object_set_new(o, "noisy_runs", json_integer(ab->side[0].noisy + ab->side[1].noisy));
	for (unsigned i = 0; i < AB_GATE_CAL; i++)
		json_array_append_new(cal, json_real(ab->gate_cal[i]));
	json_object_set_new(gate, "loop",
			    json_string("xorshift64 chain, timed with CLOCK_MONOTONIC"));
	json_object_set_new(gate, "iterations", json_integer((json_int_t)ab->gate_iters));
	json_object_set_new(gate, "calibration_ns", json_real(ab->gate_cal_ns));
	json_object_set_new(gate, "calibration_samples_ns", cal);
	json_object_set_new(gate, "tolerance", json_real(ab->tol));
	json_object_set_new(gate, "max_retries", json_integer(ab->retries));
	json_object_set_new(o, "noise_gate", gate);
	for (unsigned k = 0; k < ab->n_m; k++) {
		const struct ab_metric *m = &ab->m[k];
		json_t *jm = json_object(), *ratio = json_object();

		json_object_set_new(jm, "id", json_string(m->id));
		json_object_set_new(jm, "label", json_string(m->label));
		json_object_set_new(jm, "unit", json_string(m->unit));
		json_object_set_new(jm, "better", json_string(m->better > 0 ? "higher" : "lower"));
		for (unsigned sd = 0; sd < 2; sd++) {
			json_t *js = json_object(), *vals = json_array();

			for (unsigned i = 0; i < ab->runs; i++) {
				double v;

				json_array_append_new(vals,
						      run_val(&ab->side[sd].runs[i], m->id, &v)
							      ? json_real(v)
							      : json_null());
			}
			json_object_set_new(js, "median", jnum(m->med[sd]));
			json_object_set_new(js, "values", vals);
			json_object_set_new(jm, sd ? "b" : "a", js);
		}
		json_object_set_new(ratio, "median", jnum(m->r_med));
		json_object_set_new(ratio, "min", jnum(m->r_min));
		json_object_set_new(ratio, "max", jnum(m->r_max));
		json_object_set_new(ratio, "q1", jnum(m->r_q1));
		json_object_set_new(ratio, "q3", jnum(m->r_q3));
		json_object_set_new(ratio, "pairs", json_integer(m->r_n));
		json_object_set_new(jm, "ratio_b_over_a", ratio);
		json_object_set_new(ratio, "pairs_left_out", json_integer(m->left_out));
		json_object_set_new(jm, "verdict", json_string(verdict_text(m)));
		json_object_set_new(jm, "sampled", json_boolean(m->sampled));
		if (m->nojudge != NULL || m->r_n == 0)
			json_object_set_new(jm, "why", json_string(m->nojudge ? m->nojudge : no_ratio_text(m)));
		json_array_append_new(ms, jm);
	}
	json_object_set_new(o, "metrics", ms);
	rc = json_dump_file(o, path, JSON_INDENT(2));
	json_decref(o);
	return rc;
}

/* ---- SVG ---- */

static void
xml_text(FILE *f, const char *s)
{
	for (; *s; s++) {
		switch (*s) {
		case '&':
			fputs("&amp;", f);
			break;
		case '<':
			fputs("&lt;", f);
			break;
		case '>':
			fputs("&gt;", f);
			break;
		case '"':
			fputs("&quot;", f);
			break;
		case '\'':
			fputs("&apos;", f);
			break;
		default:
			/* control characters are not allowed in XML 1.0 */
			fputc((unsigned char)*s < 0x20 ? ' ' : *s, f);
		}
	}
}

#define SVG_W 1060
#define SVG_LABEL_X 12
#define SVG_X0 330 /* plot area */
#define SVG_X1 720
#define SVG_RATIO_X 745
#define SVG_TOP 124
#define SVG_ROW 50
#define SVG_COLOR_A "#1f77b4"
#define SVG_COLOR_B "#e8710a"

static void
svg_side(FILE *f, const struct ab *ab, const struct ab_metric *m, unsigned sd, double y, double lo,
	 double hi)
{
	const char *color = sd ? SVG_COLOR_B : SVG_COLOR_A;
	double span = hi - lo;

	fprintf(f, "<text x=\"%d\" y=\"%.1f\" class=\"s\" fill=\"%s\">%c</text>\n", SVG_X0 - 14,
		y + 4, color, sd ? 'B' : 'A');
	fprintf(f, "<line x1=\"%d\" y1=\"%.1f\" x2=\"%d\" y2=\"%.1f\" stroke=\"#ddd\"/>\n", SVG_X0,
		y, SVG_X1, y);
	for (unsigned i = 0; i < ab->runs; i++) {
		const struct ab_run *r = &ab->side[sd].runs[i];
		double v;

		if (!run_val(r, m->id, &v))
			continue;
		fprintf(f,
			"<circle cx=\"%.1f\" cy=\"%.1f\" r=\"4\" fill=\"%s\" fill-opacity=\"%s\" stroke=\"%s\">"
			"<title>%c run %u: %.6g %s%s</title></circle>\n",
			SVG_X0 + (v - lo) / span * (SVG_X1 - SVG_X0), y, r->noisy ? "none" : color,
			r->noisy ? "1" : "0.6", color, sd ? 'B' : 'A', i + 1, v, m->unit,
			r->noisy ? " (noisy)" : "");
	}
	if (isfinite(m->med[sd])) {
		double x = SVG_X0 + (m->med[sd] - lo) / span * (SVG_X1 - SVG_X0);

		fprintf(f,
			"<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"%s\" stroke-width=\"3\">"
			"<title>median %c: %.6g %s</title></line>\n",
			x, y - 8, x, y + 8, color, sd ? 'B' : 'A', m->med[sd], m->unit);
	}
}

static int
write_svg(const struct ab *ab, const char *path)
{
	unsigned h = SVG_TOP + ab->n_m * SVG_ROW + 40;
	FILE *f = fopen(path, "w");
	int rc;

	if (f == NULL)
		return -1;
	fprintf(f,
		"<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
		"<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%u\" viewBox=\"0 0 %d %u\" "
		"font-family=\"sans-serif\" font-size=\"12\">\n",
		SVG_W, h, SVG_W, h);
	fprintf(f, "<title>lcpipe ab: ");
	xml_text(f, ab->side[0].path);
	fprintf(f, " vs ");
	xml_text(f, ab->side[1].path);
	fprintf(f,
		"</title>\n<style>.s{font-size:10px}.h{font-weight:bold}.g{fill:#777}</style>\n");
	fprintf(f, "<rect width=\"100%%\" height=\"100%%\" fill=\"white\"/>\n");
	fprintf(f,
		"<text x=\"%d\" y=\"22\" class=\"h\" font-size=\"15\">lcpipe ab: <tspan fill=\"%s\">A = ",
		SVG_LABEL_X, SVG_COLOR_A);
	xml_text(f, ab->side[0].tag);
	fprintf(f, "</tspan> vs <tspan fill=\"%s\">B = ", SVG_COLOR_B);
	xml_text(f, ab->side[1].tag);
	fprintf(f, "</tspan></text>\n<text x=\"%d\" y=\"40\" class=\"g\">A: ", SVG_LABEL_X);
	xml_text(f, ab->side[0].path);
	fprintf(f, " — ");
	xml_text(f, ab->side[0].name);
	fprintf(f, "</text>\n<text x=\"%d\" y=\"55\" class=\"g\">B: ", SVG_LABEL_X);
	xml_text(f, ab->side[1].path);
	fprintf(f, " — ");
	xml_text(f, ab->side[1].name);
	fprintf(f, "</text>\n");
	fprintf(f,
		"<text x=\"%d\" y=\"72\" class=\"g\">%u runs each, interleaved ABAB…, %.3g s / %.3g s "
		"per run; noise gate %.1f ms ±%.0f %%: %u noisy run(s) kept, %u repeated.</text>\n",
		SVG_LABEL_X, ab->runs, ab->side[0].duration, ab->side[1].duration,
		ab->gate_cal_ns / 1e6, 100 * ab->tol, ab->side[0].noisy + ab->side[1].noisy,
		ab->side[0].repeated + ab->side[1].repeated);
	fprintf(f,
		"<text x=\"%d\" y=\"87\" class=\"g\">Dots: one per run (hollow: noisy, kept after its last "
		"repetition); bar: median. Each row has its own scale: the numbers under it are its lowest "
		"and highest run.</text>\n",
		SVG_LABEL_X);
	fprintf(f,
		"<text x=\"%d\" y=\"%d\" class=\"h\">B/A: median of the per-pair ratios</text>\n",
		SVG_RATIO_X, SVG_TOP - 20);
	fprintf(f, "<text x=\"%d\" y=\"%d\" class=\"s g\">[min–max of the ratios] verdict</text>\n",
		SVG_RATIO_X + 110, SVG_TOP - 6);
	for (unsigned k = 0; k < ab->n_m; k++) {
		const struct ab_metric *m = &ab->m[k];
		double y = SVG_TOP + k * SVG_ROW, lo = INFINITY, hi = -INFINITY, vlo, vhi;
		char a[32], b[32], r[16], rl[16], rh[16];
		int vd = verdict(m);

		for (unsigned sd = 0; sd < 2; sd++)
			for (unsigned i = 0; i < ab->runs; i++) {
				double v;

				if (run_val(&ab->side[sd].runs[i], m->id, &v)) {
					lo = fmin(lo, v);
					hi = fmax(hi, v);
				}
			}
		if (!isfinite(lo))
			lo = hi = 0;
		vlo = lo;
		vhi = hi;
		if (hi - lo < 1e-9 * fmax(fabs(hi), 1.0)) {
			double d = fmax(fabs(hi) * 0.01, 0.5);

			lo -= d;
			hi += d;
		} else {
			double d = (hi - lo) * 0.05;

			lo -= d;
			hi += d;
		}
		if (vlo >= 0 && lo < 0) /* no negative scale for values that cannot be */
			lo = 0;
		if (k % 2 == 0)
			fprintf(f,
				"<rect x=\"0\" y=\"%.1f\" width=\"%d\" height=\"%d\" fill=\"#f6f8fa\"/>\n",
				y, SVG_W, SVG_ROW);
		fprintf(f, "<g>\n<text x=\"%d\" y=\"%.1f\" class=\"h\">", SVG_LABEL_X, y + 18);
		xml_text(f, m->label);
		fmt_value(a, sizeof(a), m->kind, m->med[0]);
		fmt_value(b, sizeof(b), m->kind, m->med[1]);
		fprintf(f,
			"</text>\n<text x=\"%d\" y=\"%.1f\" class=\"s g\">%s, %s is better; median A %s, B %s</text>\n",
			SVG_LABEL_X, y + 34, m->unit, m->better > 0 ? "higher" : "lower", a, b);
		svg_side(f, ab, m, 0, y + 14, lo, hi);
		svg_side(f, ab, m, 1, y + 30, lo, hi);
		fmt_value(a, sizeof(a), m->kind, vlo);
		fmt_value(b, sizeof(b), m->kind, vhi);
		fprintf(f,
			"<text x=\"%.1f\" y=\"%.1f\" class=\"s g\" text-anchor=\"middle\">%s</text>\n",
			fmax(SVG_X0 + (vlo - lo) / (hi - lo) * (SVG_X1 - SVG_X0), SVG_X0 + 20.0),
			y + 45, a);
		if (vhi > vlo)
			fprintf(f,
				"<text x=\"%.1f\" y=\"%.1f\" class=\"s g\" text-anchor=\"middle\">%s</text>\n",
				fmin(SVG_X0 + (vhi - lo) / (hi - lo) * (SVG_X1 - SVG_X0),
				     SVG_X1 - 20.0),
				y + 45, b);
		fmt_ratio(r, sizeof(r), m->r_med);
		fmt_ratio(rl, sizeof(rl), m->r_min);
		fmt_ratio(rh, sizeof(rh), m->r_max);
		fprintf(f,
			"<text x=\"%d\" y=\"%.1f\" font-size=\"14\" class=\"h\" fill=\"%s\">B/A %s</text>\n",
			SVG_RATIO_X, y + 24,
			vd > 0	 ? "#1a7f37"
			: vd < 0 ? "#c62828"
				 : "#555",
			r);
		if (m->r_n > 0 && m->nojudge == NULL)
			fprintf(f, "<text x=\"%d\" y=\"%.1f\" class=\"g\">[%s–%s] %s</text>\n",
				SVG_RATIO_X + 110, y + 24, rl, rh, verdict_text(m));
		else
			fprintf(f, "<text x=\"%d\" y=\"%.1f\" class=\"g\">%s</text>\n",
				SVG_RATIO_X + 110, y + 24, m->nojudge ? m->nojudge : no_ratio_text(m));
		fprintf(f, "</g>\n");
	}
	fprintf(f,
		"<text x=\"%d\" y=\"%u\" class=\"s g\">green: every pair has B better by more than 1 %%; "
		"red: every pair has B worse by more than 1 %%; grey: neither (no clear difference). "
		"lcpipe %s</text>\n</svg>\n",
		SVG_LABEL_X, h - 14, PACKAGE_VERSION);
	rc = ferror(f) ? -1 : 0;
	if (fclose(f) != 0)
		rc = -1;
	return rc;
}

/* ---- setup ---- */

static char *
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
static int
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

static void
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

static int
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

static int
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
