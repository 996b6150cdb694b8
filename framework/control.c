/* SPDX-License-Identifier: BSD-3-Clause
 * control.c — lcpipe run: EAL, build and init (engine.c), start, launch the
 * workers (runner.c), the control loop (signals, stats lines, the ring
 * tally, the metrics endpoint, the duration), shutdown and the report.
 */
#include <errno.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <signal.h>
#include <time.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <rte_cycles.h>
#include <rte_eal.h>
#include <rte_errno.h>
#include <rte_launch.h>
#include <rte_lcore.h>
#include <rte_malloc.h>
#include <rte_mbuf.h>
#include <rte_mbuf_dyn.h>

#include <lcp/log.h>
#include <lcp/mbuf.h>

#include <lcp/stream.h>

#include "engine_priv.h"

/* wakes the control loop: a signal, or a stage asking to stop */
static int lcp_wake_fd = -1; /* an eventfd: write() is async-signal-safe */

void
lcp_control_wake(void)
{
	uint64_t one = 1;
	ssize_t rc = write(lcp_wake_fd, &one, sizeof(one));

	(void)rc; /* the counter cannot overflow in practice; a full one still wakes */
}

static volatile sig_atomic_t lcp_signal;
volatile sig_atomic_t lcp_signals;

static void
on_signal(int sig)
{
	lcp_signal = sig;
	lcp_signals = lcp_signals + 1;
	lcp_control_wake(); /* async-signal-safe */
}

/* this thread's CPU time, seconds (the report's control_cpu_s) */
static double
thread_cpu_s(void)
{
	struct timespec ts;

	if (clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts) != 0)
		return 0;
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* sleep until abs_tsc (a TSC value) or until woken (a signal, a stop
 * request); serve the metrics endpoint meanwhile when it is on */
static void
control_sleep(struct lcp_engine *e, uint64_t abs_tsc)
{
	struct pollfd pf[2] = { { .fd = lcp_wake_fd, .events = POLLIN }, { .fd = e->prom_fd, .events = POLLIN } };
	uint64_t now = rte_rdtsc(), v;
	int ms, pm;

	if (abs_tsc <= now)
		return;
	ms = (int)(((double)(abs_tsc - now) * 1e3 + (double)e->tsc_hz - 1) / (double)e->tsc_hz);
	pm = lcp_prom_timeout_ms(e);
	if (pm >= 0 && pm < ms)
		ms = pm;
	if (poll(pf, e->prom_fd >= 0 ? 2 : 1, ms) > 0) {
		if (pf[0].revents & POLLIN) {
			ssize_t rc = read(lcp_wake_fd, &v, sizeof(v));

			(void)rc;
		}
		if (pf[1].revents & POLLIN)
			lcp_prom_run(e);
	} else if (e->prom_fd >= 0) {
		lcp_prom_run(e); /* its timeouts */
	}
}

/* --report FILE: the final stats as JSON; 0, or -1 (logged) when it cannot be
 * written; nothing to do without a path */
static int
write_report(struct lcp_engine *e, const char *path)
{
	json_t *r;
	int rc = 0;

	if (path == NULL)
		return 0;
	r = lcp_stats_json(e, true);
	if (json_dump_file(r, path, JSON_INDENT(2) | JSON_SORT_KEYS) != 0) {
		lcp_log(NULL, LCP_LOG_ERR, "--report %s: cannot write: %s", path, strerror(errno));
		rc = -1;
	}
	json_decref(r);
	return rc;
}

static char **
eal_argv(struct lcp_cfg *c, int *argc)
{
	char **v = calloc(c->n_eal + 3, sizeof(*v));
	bool has_log = false;
	int n = 0;

	v[n++] = strdup("lcpipe");
	for (unsigned i = 0; i < c->n_eal; i++) {
		has_log |= strncmp(c->eal[i], "--log-level", 11) == 0;
		v[n++] = strdup(c->eal[i]);
	}
	if (!has_log)
		v[n++] = strdup("--log-level=lib.eal:notice");
	*argc = n;
	return v;
}

int
lcp_engine_run(struct lcp_cfg *c, const struct lcp_run_opts *o)
{
	struct lcp_engine *e = calloc(1, sizeof(*e));
	struct sigaction sa = { .sa_handler = on_signal };
	int argc, status = 0, rc;
	char **argv = eal_argv(c, &argc), **argv_copy;
	double duration = o->duration >= 0 ? o->duration : c->eng.duration;
	uint64_t next_tick, tick, end, wake, tally;
	double cpu0;

	argv_copy = calloc((size_t)argc + 1, sizeof(*argv_copy));
	memcpy(argv_copy, argv, (size_t)argc * sizeof(*argv));
	e->cfg = c;
	if (rte_eal_init(argc, argv_copy) < 0) {
		lcp_log(NULL, LCP_LOG_ERR, "EAL init failed: %s (check the EAL arguments: %s)",
			rte_strerror(rte_errno),
			o->eal_overridden ? "those after \"--\"" : "the config's \"eal\" array");
		status = 1;
		goto out_free_args;
	}
	e->live = o->live >= 0 ? o->live : (c->eng.live == 1 || (c->eng.live == 0 && isatty(1)));
	e->prom_fd = -1;
	if (lcp_wake_fd < 0 && (lcp_wake_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC)) < 0) {
		lcp_log(NULL, LCP_LOG_ERR, "eventfd: %s", strerror(errno));
		status = 1;
		goto out_eal;
	}
	/* the metrics endpoint listens before anything runs: a taken port is a
	 * startup failure like a stage's init */
	if (lcp_engine_build(e) < 0 || lcp_engine_init_stages(e) < 0 || lcp_prom_start(e) < 0) {
		status = 1;
		e->stop_reason = "startup failure";
		e->t_start = e->t_stop = rte_rdtsc();
		lcp_engine_teardown(e);
		lcp_engine_flush_counters(e);
		lcp_mempools_check(e);
		write_report(e, o->report_path);
		goto out_eal;
	}
	lcp_signal = 0;
	lcp_signals = 0;
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	lcp_telemetry_attach(e);
	cpu0 = thread_cpu_s();
	e->t_start = rte_rdtsc();
	e->prev.tsc = e->t_start;
	for (unsigned w = 0; w < e->n_workers; w++) {
		rc = rte_eal_remote_launch(lcp_worker_main, &e->workers[w], e->workers[w].lcore);
		if (rc != 0) {
			lcp_log(NULL, LCP_LOG_ERR, "cannot launch lcore %u: %s", e->workers[w].lcore,
				strerror(-rc));
			e->stop_reason = "launch failure";
			status = 1;
			break;
		}
	}
	lcp_log(NULL, LCP_LOG_INFO, "running \"%s\": %u stages on %u worker lcores%s", c->name,
		e->n_stages, e->n_workers, duration > 0 ? "" : "; Ctrl-C stops");
	tick = (uint64_t)((e->live ? 0.5 : c->eng.stats_interval) * (double)e->tsc_hz);
	/* from the engine's TSC rate, known only after rte_eal_init() (computed
	 * before it, this was 0 and the control loop never slept) */
	tally = (uint64_t)(LCP_TALLY_PERIOD_S * (double)e->tsc_hz);
	next_tick = e->t_start + tick;
	end = duration > 0 ? e->t_start + (uint64_t)(duration * (double)e->tsc_hz) : UINT64_MAX;
	/* The control loop sleeps until the next stats line or the end of the
	 * run; a signal or lcp_stage_request_stop() wakes it at once. It used to
	 * poll every 2 ms, which on a 2-CPU machine stole a worker's or a peer's
	 * CPU 500 times a second (it showed in B8's tail latency). */
	while (status == 0) {
		uint64_t now = rte_rdtsc();

		if (lcp_signal) {
			e->stop_reason = lcp_signal == SIGINT ? "SIGINT" : "SIGTERM";
			break;
		}
		if (__atomic_load_n(&e->stop_request, __ATOMIC_ACQUIRE) != NULL) {
			e->stop_reason = e->stop_request;
			break;
		}
		if (now >= end) {
			e->stop_reason = "duration";
			break;
		}
		lcp_ring_tally_all(e); /* ring counters' 32-bit indices: see LCP_TALLY_PERIOD_S */
		if (now >= next_tick) {
			lcp_stats_tick(e, false);
			lcp_pools_sample(e);
			next_tick += tick;
			if (next_tick <= now)
				next_tick = now + tick;
		}
		wake = RTE_MIN(next_tick, end);
		control_sleep(e, RTE_MIN(wake, now + tally));
	}
	e->control_cpu_s = thread_cpu_s() - cpu0;
	lcp_prom_stop(e); /* scrapes end with the run */
	if (!lcp_engine_shutdown(e)) { /* drain, stop, wait for the lcores */
		/* a worker is still inside a stage: nothing can be torn down under
		 * it; what the counters say goes out, then lcpipe ends (status 4) */
		e->t_stop = rte_rdtsc();
		lcp_engine_flush_counters(e);
		lcp_stats_summary(e, stdout);
		write_report(e, o->report_path);
		fflush(NULL);
		_exit(4);
	}
	e->t_stop = rte_rdtsc();
	if (e->live)
		lcp_stats_tick(e, true);
	lcp_engine_teardown(e);
	lcp_engine_flush_counters(e); /* what fini and the leftovers added */
	lcp_mempools_check(e);
	lcp_telemetry_detach();
	lcp_stats_summary(e, stdout);
	if (write_report(e, o->report_path) < 0 && status == 0)
		status = 1;
	if (status == 0 && e->leaked > 0)
		status = 3;
out_eal:
	lcp_engine_free(e);
	rte_eal_cleanup();
out_free_args:
	lcp_strv_free(argv, (unsigned)argc);
	free(argv_copy);
	free(e);
	return status;
}
