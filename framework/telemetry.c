/* SPDX-License-Identifier: BSD-3-Clause
 * telemetry.c — DPDK telemetry commands:
 *   /lcpipe/stats        per stage: in, out, drops; per lcore busy/idle cycles
 *   /lcpipe/stage,NAME   every counter of one stage
 *   /lcpipe/memory       objects in use per mempool and per stage pool, and the
 *                        process's resident set (for soak runs: all flat)
 * Telemetry callbacks take no user argument in DPDK 22.11 and cannot be
 * unregistered, so the running engine is reached through one pointer guarded by
 * a mutex; after shutdown the commands answer an error.
 */
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include <unistd.h>

#include <rte_mempool.h>
#include <rte_telemetry.h>

#include "engine_priv.h"

static pthread_mutex_t lcp_tel_lock = PTHREAD_MUTEX_INITIALIZER;
static struct lcp_engine *lcp_tel_engine;
static bool lcp_tel_registered;

/* telemetry keys allow only [A-Za-z0-9_/]: anything else becomes '/' */
static void
tel_key(char *key, size_t len, const char *a, const char *b)
{
	snprintf(key, len, "%s%s%s", a, b ? "/" : "", b ? b : "");
	for (char *p = key; *p; p++)
		if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') ||
		      *p == '_'))
			*p = '/';
}

static int
tel_stats(const char *cmd, const char *params, struct rte_tel_data *d)
{
	struct lcp_engine *e;
	int rc = 0;

	pthread_mutex_lock(&lcp_tel_lock);
	e = lcp_tel_engine;
	if (e == NULL) {
		rc = -1;
		goto out;
	}
	rte_tel_data_start_dict(d);
	rte_tel_data_add_dict_string(d, "name", e->cfg->name);
	for (unsigned i = 0; i < e->n_stages; i++) {
		struct lcp_stage_priv *sp = e->stages[i];
		struct rte_tel_data *s = rte_tel_data_alloc();
		uint64_t in, out, dr;

		if (s == NULL)
			break;
		lcp_stage_totals(sp, &in, &out, &dr);
		rte_tel_data_start_dict(s);
		rte_tel_data_add_dict_string(s, "plugin", sp->cs->plugin);
		rte_tel_data_add_dict_u64(s, "lcore", sp->cs->lcore);
		rte_tel_data_add_dict_u64(s, "in", in);
		rte_tel_data_add_dict_u64(s, "out", out);
		rte_tel_data_add_dict_u64(s, "drops", dr);
		rte_tel_data_add_dict_container(d, sp->cs->name, s, 0);
	}
	for (unsigned w = 0; w < e->n_workers; w++) {
		struct rte_tel_data *l = rte_tel_data_alloc();
		char key[32];

		if (l == NULL)
			break;
		rte_tel_data_start_dict(l);
		rte_tel_data_add_dict_u64(l, "busy_cycles",
					  __atomic_load_n(&e->workers[w].busy_cycles, __ATOMIC_RELAXED));
		rte_tel_data_add_dict_u64(l, "idle_cycles",
					  __atomic_load_n(&e->workers[w].idle_cycles, __ATOMIC_RELAXED));
		snprintf(key, sizeof(key), "lcore%u", e->workers[w].lcore);
		rte_tel_data_add_dict_container(d, key, l, 0);
	}
out:
	pthread_mutex_unlock(&lcp_tel_lock);
	return rc;
}

static int
tel_stage(const char *cmd, const char *params, struct rte_tel_data *d)
{
	struct lcp_engine *e;
	int rc = -1;

	pthread_mutex_lock(&lcp_tel_lock);
	e = lcp_tel_engine;
	for (unsigned i = 0; e && params && i < e->n_stages; i++) {
		struct lcp_stage_priv *sp = e->stages[i];

		if (strcmp(sp->cs->name, params) != 0)
			continue;
		rte_tel_data_start_dict(d);
		for (unsigned k = 0; k < sp->hist_first && k < RTE_TEL_MAX_DICT_ENTRIES; k++) {
			char key[RTE_TEL_MAX_STRING_LEN];

			tel_key(key, sizeof(key), sp->ctr_names[k], NULL); /* "in.in" -> "in/in" */
			rte_tel_data_add_dict_u64(d, key, lcp_stage_ctr(sp, k));
		}
		/* histograms: their count, sum and live quantiles (telemetry in
		 * DPDK 22.11 has no floating point values: strings, "%g") */
		for (unsigned h = 0; h < sp->n_hists; h++) {
			static const char *const qn[] = { "p50", "p90", "p99", "p999" };
			static const double qv[] = { 0.5, 0.9, 0.99, 0.999 };
			uint64_t b[LCP_HIST_MAX_LE + 1], count, sum;
			char key[RTE_TEL_MAX_STRING_LEN], v[32];

			lcp_hist_read(sp, h, b, &count, &sum);
			tel_key(key, sizeof(key), sp->hists[h].name, "count");
			rte_tel_data_add_dict_u64(d, key, count);
			tel_key(key, sizeof(key), sp->hists[h].name, "sum");
			snprintf(v, sizeof(v), "%g", (double)sum * sp->hist_scale[h]);
			rte_tel_data_add_dict_string(d, key, v);
			for (unsigned q = 0; q < 4; q++) {
				tel_key(key, sizeof(key), sp->hists[h].name, qn[q]);
				snprintf(v, sizeof(v), "%g", lcp_hist_quantile(sp, h, b, count, qv[q]));
				rte_tel_data_add_dict_string(d, key, v);
			}
		}
		rc = 0;
	}
	pthread_mutex_unlock(&lcp_tel_lock);
	return rc;
}

static void
tel_mempool(struct rte_mempool *mp, void *arg)
{
	struct rte_tel_data *m = arg;
	char key[RTE_TEL_MAX_STRING_LEN];

	tel_key(key, sizeof(key), mp->name, NULL);
	rte_tel_data_add_dict_u64(m, key, rte_mempool_in_use_count(mp));
}

static uint64_t
rss_kb(void)
{
	unsigned long pages = 0, rss = 0;
	FILE *f = fopen("/proc/self/statm", "r");

	if (f == NULL)
		return 0;
	if (fscanf(f, "%lu %lu", &pages, &rss) != 2)
		rss = 0;
	fclose(f);
	return (uint64_t)rss * (uint64_t)sysconf(_SC_PAGESIZE) / 1024;
}

static int
tel_memory(const char *cmd, const char *params, struct rte_tel_data *d)
{
	struct rte_tel_data *m, *p;
	struct lcp_engine *e;
	int rc = -1;

	pthread_mutex_lock(&lcp_tel_lock);
	e = lcp_tel_engine;
	if (e == NULL)
		goto out;
	m = rte_tel_data_alloc();
	p = rte_tel_data_alloc();
	if (m == NULL || p == NULL) {
		rte_tel_data_free(m);
		rte_tel_data_free(p);
		goto out;
	}
	rte_tel_data_start_dict(d);
	rte_tel_data_add_dict_u64(d, "rss_kb", rss_kb());
	rte_tel_data_start_dict(m);
	rte_mempool_walk(tel_mempool, m);
	rte_tel_data_add_dict_container(d, "mempools_in_use", m, 0);
	rte_tel_data_start_dict(p);
	for (unsigned k = 0; k < e->n_pools; k++) {
		char key[RTE_TEL_MAX_STRING_LEN];

		tel_key(key, sizeof(key), lcp_stage_name(e->pools[k]->st), e->pools[k]->name);
		rte_tel_data_add_dict_u64(p, key, lcp_pool_in_use(e->pools[k]));
	}
	rte_tel_data_add_dict_container(d, "pools_in_use", p, 0);
	rc = 0;
out:
	pthread_mutex_unlock(&lcp_tel_lock);
	return rc;
}

void
lcp_telemetry_attach(struct lcp_engine *e)
{
	pthread_mutex_lock(&lcp_tel_lock);
	lcp_tel_engine = e;
	if (!lcp_tel_registered) {
		rte_telemetry_register_cmd("/lcpipe/stats", tel_stats,
					   "lcpipe per-stage in/out/drops and per-lcore busy/idle cycles");
		rte_telemetry_register_cmd("/lcpipe/stage", tel_stage,
					   "every counter of one stage. Parameters: stage name");
		rte_telemetry_register_cmd("/lcpipe/memory", tel_memory,
					   "objects in use per mempool and per stage pool; resident set in KiB");
		lcp_tel_registered = true;
	}
	pthread_mutex_unlock(&lcp_tel_lock);
}

void
lcp_telemetry_detach(void)
{
	pthread_mutex_lock(&lcp_tel_lock);
	lcp_tel_engine = NULL;
	pthread_mutex_unlock(&lcp_tel_lock);
}
