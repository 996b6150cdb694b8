/* SPDX-License-Identifier: BSD-3-Clause
 * ab_priv.h — `lcpipe ab A.json B.json`: the A/B harness. Two configs that differ in
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
 *write_svg(). The metrics are defined in collect() and doc/ab-testing.md.
 *
 * Files: ab.c (options, the pairs), ab_plan.c (the config's pipeline),
 * ab_run.c (noise gate, child runs, metrics), ab_stats.c (medians, ratios,
 * verdicts), ab_output.c (table, JSON, SVG). What they share is here.
 */
#ifndef LCP_AB_PRIV_H
#define LCP_AB_PRIV_H

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

/* A difference of less than this (as a ratio) is not called either way */
#define AB_VERDICT_MIN 0.01

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

/* SIGINT or SIGTERM received (ab_run.c) */
extern volatile sig_atomic_t ab_signal;

/* ab_plan.c */
const struct lcp_stage_ops *stage_ops(const struct lcp_cfg_stage *cs);
struct ab_lcore *plan_lcore(struct ab_plan *p, unsigned lcore);
void lcore_exit(struct ab_lcore *lc, const char *stage, const char *port);
int lcore_cmp(const void *a, const void *b);
void plan_build(struct ab_plan *p, const struct lcp_cfg *c);
void plan_free(struct ab_plan *p);
const char *unit_word(unsigned units, bool plural);

/* ab_run.c */
void progress(const struct ab *ab, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
struct ab_metric *metric(struct ab *ab, const char *id, enum ab_kind kind, int better, const char *unit, const char *label_fmt, ...) __attribute__((format(printf, 6, 7)));
void ab_on_signal(int sig);
double now_ns(void);
uint64_t gate_work(uint64_t iters);
double gate_ns(struct ab *ab);
int gate_calibrate(struct ab *ab);
double gate_drift(const struct ab *ab, double ns);
void put(json_t *vals, const struct ab_metric *m, double v);
bool get_uint(json_t *o, const char *key, double *v);
int lcore_objects(const struct ab_lcore *lc, json_t *stages, double *n, char *err, size_t len);
int collect(struct ab *ab, struct ab_side *s, json_t *rep, const struct rusage *ru, json_t *vals, double *report_s, char *err, size_t len);
int child_run(struct ab *ab, char *const argv[], const char *log, double timeout, int *wstatus, struct rusage *ru, char *err, size_t len);
char *run_file(const struct ab *ab, const struct ab_side *s, unsigned i, const char *ext);
void fmt_status(char *buf, size_t len, int st);
int side_run(struct ab *ab, struct ab_side *s, unsigned i);

/* ab_stats.c */
int dcmp(const void *a, const void *b);
double quantile(const double *v, unsigned n, double q);
bool run_val(const struct ab_run *r, const char *id, double *v);
void summarise(struct ab *ab);
int verdict(const struct ab_metric *m);
const char *verdict_text(const struct ab_metric *m);
const char *no_ratio_text(const struct ab_metric *m);

/* ab_output.c */
void fmt_value(char *buf, size_t len, enum ab_kind kind, double v);
void fmt_ratio(char *buf, size_t len, double r);
void print_table(const struct ab *ab, FILE *f);
json_t *jnum(double v);
json_t *side_json(const struct ab *ab, const struct ab_side *s);
int write_json(const struct ab *ab, const char *path);
void xml_text(FILE *f, const char *s);
void svg_side(FILE *f, const struct ab *ab, const struct ab_metric *m, unsigned sd, double y, double lo, double hi);
int write_svg(const struct ab *ab, const char *path);

/* ab.c */
char *file_tag(const char *path);
int side_load(struct ab *ab, struct ab_side *s);
void ab_free(struct ab *ab);
int parse_uint(const char *opt, const char *s, unsigned min, unsigned max, unsigned *out);
int parse_pos(const char *opt, const char *s, bool zero_ok, double *out);

#endif
