/* SPDX-License-Identifier: BSD-3-Clause
 * stats.c — reading counters into the live line, the exit summary, the JSON
 * report; and the mempool in-use check at exit.
 *
 * "delivered" in the live line is the sum of objects entering stages that have
 * no linked output (the pipeline's sinks).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_cycles.h>
#include <rte_mempool.h>

#include <lcp/log.h>

#include "config.h"
#include "engine_priv.h"

/* the module's value, plus what rings count for it (a ring link's out and in:
 * struct lcp_ring_in) */
uint64_t
lcp_stage_ctr(const struct lcp_stage_priv *sp, unsigned idx)
{
	uint64_t v = sp->cops->read(sp->pub.ctrs, idx);

	for (unsigned i = 0; i < sp->n_rctr; i++) {
		uint64_t enq, deq;

		if (sp->rctr[i].idx != idx)
			continue;
		lcp_ring_tally(sp->rctr[i].ri, &enq, &deq);
		v += sp->rctr[i].prod ? enq : deq;
	}
	return v;
}

static bool
is_drop(const char *name)
{
	const char *dot = strrchr(name, '.');

	return strncmp(dot ? dot + 1 : name, "drop_", 5) == 0;
}

static bool
ends_with(const char *s, const char *suffix)
{
	size_t a = strlen(s), b = strlen(suffix);

	return a >= b && strcmp(s + a - b, suffix) == 0;
}

void
lcp_stage_totals(const struct lcp_stage_priv *sp, uint64_t *in, uint64_t *out, uint64_t *drops)
{
	*in = *out = *drops = 0;
	for (unsigned k = 0; k < sp->hist_first; k++) {
		uint64_t v = lcp_stage_ctr(sp, k);

		if (is_drop(sp->ctr_names[k]))
			*drops += v;
		else if (k < sp->pub.ctr_own && ends_with(sp->ctr_names[k], ".in"))
			*in += v;
		else if (k < sp->pub.ctr_own && ends_with(sp->ctr_names[k], ".out"))
			*out += v;
	}
}

void
lcp_fmt_scaled(char *buf, size_t len, double v, const struct lcp_scale *s)
{
	while (s->div > 1 && !(v >= s->div)) /* NaN: the last step, as for a small v */
		s++;
	snprintf(buf, len, "%.*f%s", s->prec, v / s->div, s->unit);
}

/* counts and rates on the live line: 2 decimals from k up */
static void
human(char *buf, size_t len, double v)
{
	static const struct lcp_scale si[] = {
		{ 1e9, 2, " G" }, { 1e6, 2, " M" }, { 1e3, 2, " k" }, { 1, 0, " " },
	};

	lcp_fmt_scaled(buf, len, v, si);
}

void
lcp_stats_tick(struct lcp_engine *e, bool final_line)
{
	uint64_t now = rte_rdtsc(), delivered = 0, drops = 0;
	double dt, el = (double)(now - e->t_start) / (double)e->tsc_hz;
	char line[512], a[32], b[32];
	int n;

	if (e->prev.busy == NULL) {
		e->prev.busy = calloc(e->n_workers + 1, sizeof(uint64_t));
		e->prev.idle = calloc(e->n_workers + 1, sizeof(uint64_t));
	}
	bool strict = false;

	for (unsigned i = 0; i < e->n_stages; i++)
		strict |= lcp_cfg_stage_is_sink(e->stages[i]->cs, true);
	for (unsigned i = 0; i < e->n_stages; i++) {
		uint64_t in, out, dr;

		lcp_stage_totals(e->stages[i], &in, &out, &dr);
		if (lcp_cfg_stage_is_sink(e->stages[i]->cs, strict))
			delivered += in;
		drops += dr;
	}
	dt = (double)(now - e->prev.tsc) / (double)e->tsc_hz;
	human(a, sizeof(a), (double)delivered);
	human(b, sizeof(b), dt > 0 ? (double)(delivered - e->prev.delivered) / dt : 0);
	n = snprintf(line, sizeof(line), "[lcpipe] %7.1fs  delivered %sobj (%sobj/s)  drops %llu", el, a,
		     b, (unsigned long long)drops);
	for (unsigned w = 0; w < e->n_workers && n < (int)sizeof(line) - 40; w++) {
		uint64_t bu = __atomic_load_n(&e->workers[w].busy_cycles, __ATOMIC_RELAXED);
		uint64_t id = __atomic_load_n(&e->workers[w].idle_cycles, __ATOMIC_RELAXED);
		uint64_t db = bu - e->prev.busy[w], di = id - e->prev.idle[w];

		n += snprintf(line + n, sizeof(line) - (size_t)n, "  lcore%u busy %3.0f%%",
			      e->workers[w].lcore, db + di ? 100.0 * (double)db / (double)(db + di) : 0.0);
		e->prev.busy[w] = bu;
		e->prev.idle[w] = id;
	}
	e->prev.tsc = now;
	e->prev.delivered = delivered;
	if (e->live)
		fprintf(stdout, "\r%s\033[K%s", line, final_line ? "\n" : "");
	else
		fprintf(stdout, "%s\n", line);
	fflush(stdout);
	__atomic_store_n(&lcp_live_line, e->live && !final_line, __ATOMIC_RELAXED);
}

static void
mp_walk(struct rte_mempool *mp, void *arg)
{
	struct lcp_engine *e = arg;
	unsigned in_use = rte_mempool_in_use_count(mp), held = 0;
	const char *by = NULL;
	json_t *o = json_object();

	for (unsigned i = 0; i < e->n_stage_pktpools; i++)
		if (e->stage_pktpools[i].mp == mp) {
			held = e->stage_pktpools[i].held;
			by = e->stage_pktpools[i].stage;
		}
	json_object_set_new(o, "name", json_string(mp->name));
	json_object_set_new(o, "size", json_integer(mp->size));
	json_object_set_new(o, "in_use", json_integer(in_use));
	if (held > 0) {
		/* a driver keeps these past close by its design
		 * (lcp_stage_pktmbuf_pool_held); only what is above them leaked */
		json_object_set_new(o, "held_by_driver", json_integer(held));
		json_object_set_new(o, "held_for", json_string(by));
	}
	json_object_set_new(o, "leaked", json_integer(in_use > held ? in_use - held : 0));
	json_array_append_new(e->mempools, o);
	if (in_use > held) {
		if (held > 0)
			lcp_log(NULL, LCP_LOG_ERR,
				"mempool %s: %u of %u objects still in use after shutdown, %u more than the %u "
				"stage %s declared held by its driver (leak)",
				mp->name, in_use, mp->size, in_use - held, held, by);
		else
			lcp_log(NULL, LCP_LOG_ERR, "mempool %s: %u of %u objects still in use after shutdown (leak)",
				mp->name, in_use, mp->size);
		e->leaked += in_use - held;
	}
}

void
lcp_mempools_check(struct lcp_engine *e)
{
	json_decref(e->mempools);
	e->mempools = json_array();
	e->leaked = e->pool_leaked; /* pools of the pool strategy counted when freed */
	rte_mempool_walk(mp_walk, e);
}

void
lcp_hist_read(const struct lcp_stage_priv *sp, unsigned h, uint64_t *b, uint64_t *count, uint64_t *sum)
{
	unsigned c = sp->hist_ctr[h], n = sp->hists[h].n_le;

	*count = 0;
	for (unsigned k = 0; k <= n; k++) {
		b[k] = lcp_stage_ctr(sp, c + k);
		*count += b[k];
	}
	*sum = lcp_stage_ctr(sp, c + n + 1);
}

double
lcp_hist_quantile(const struct lcp_stage_priv *sp, unsigned h, const uint64_t *b, uint64_t count, double q)
{
	const struct lcp_hist_def *d = &sp->hists[h];
	double rank = q * (double)count, seen = 0, scale = sp->hist_scale[h];

	if (count == 0)
		return 0;
	for (unsigned k = 0; k < d->n_le; k++) {
		if (b[k] > 0 && seen + (double)b[k] >= rank) {
			double lo = k == 0 ? 0 : (double)d->le[k - 1], hi = (double)d->le[k];

			return (lo + (hi - lo) * (rank - seen) / (double)b[k]) * scale;
		}
		seen += (double)b[k];
	}
	return (double)d->le[d->n_le - 1] * scale;
}

json_t *
lcp_hists_json(const struct lcp_stage_priv *sp)
{
	static const struct {
		const char *key;
		double q;
	} qs[] = { { "p50", 0.5 }, { "p90", 0.9 }, { "p99", 0.99 }, { "p999", 0.999 } };
	json_t *o = json_object();

	for (unsigned h = 0; h < sp->n_hists; h++) {
		const struct lcp_hist_def *d = &sp->hists[h];
		uint64_t b[LCP_HIST_MAX_LE + 1], count, sum;
		json_t *x = json_object(), *le = json_array(), *bk = json_array();

		lcp_hist_read(sp, h, b, &count, &sum);
		for (unsigned k = 0; k < d->n_le; k++)
			json_array_append_new(le, json_real((double)d->le[k] * sp->hist_scale[h]));
		for (unsigned k = 0; k <= d->n_le; k++)
			json_array_append_new(bk, json_integer((json_int_t)b[k]));
		json_object_set_new(x, "help", json_string(d->help));
		json_object_set_new(x, "le", le);
		json_object_set_new(x, "buckets", bk);
		json_object_set_new(x, "count", json_integer((json_int_t)count));
		json_object_set_new(x, "sum", json_real((double)sum * sp->hist_scale[h]));
		for (unsigned i = 0; i < sizeof(qs) / sizeof(qs[0]); i++)
			json_object_set_new(x, qs[i].key, json_real(lcp_hist_quantile(sp, h, b, count, qs[i].q)));
		json_object_set_new(o, d->name, x);
	}
	return o;
}

json_t *
lcp_stats_json(struct lcp_engine *e, bool final)
{
	json_t *r = json_object(), *stages = json_object(), *lcores = json_object(), *rings = json_array();
	uint64_t end = final && e->t_stop ? e->t_stop : rte_rdtsc();

	json_object_set_new(r, "lcpipe_version", json_string(PACKAGE_VERSION));
	json_object_set_new(r, "config", json_string(e->cfg->path));
	json_object_set_new(r, "name", json_string(e->cfg->name));
	json_object_set_new(r, "tsc_hz", json_integer((json_int_t)e->tsc_hz));
	json_object_set_new(r, "duration_s", json_real((double)(end - e->t_start) / (double)e->tsc_hz));
	if (final) {
		json_object_set_new(r, "control_cpu_s", json_real(e->control_cpu_s));
		json_object_set_new(r, "stop_reason", json_string(e->stop_reason ? e->stop_reason : "?"));
		json_object_set_new(r, "drained", json_boolean(e->drained));
		if (e->stuck[0] != '\0')
			json_object_set_new(r, "stuck", json_string(e->stuck));
		/* the shutdown's linger: how long, and what the stages still
		 * closed when it ended (0: every one finished) */
		json_object_set_new(r, "linger_s", json_real(e->linger_s));
		json_object_set_new(r, "linger_left", json_integer((json_int_t)e->linger_left));
	}
	if (e->cfg->eng.metrics_listen != NULL && e->cfg->eng.metrics_listen[0] != '\0')
		json_object_set_new(r, "metrics_endpoint",
				    json_pack("{s:s, s:I}", "listen", e->cfg->eng.metrics_listen, "scrapes",
					      (json_int_t)e->prom_scrapes));
	for (unsigned i = 0; i < e->n_stages; i++) {
		struct lcp_stage_priv *sp = e->stages != NULL ? e->stages[i] : NULL;
		json_t *s, *ctrs, *drops;

		if (sp == NULL || sp->pub.ctrs == NULL) /* build stopped before it */
			continue;
		s = json_object();
		ctrs = json_object();
		drops = json_object();
		uint64_t in, out, dr;

		for (unsigned k = 0; k < sp->hist_first; k++) {
			uint64_t v = lcp_stage_ctr(sp, k);

			json_object_set_new(ctrs, sp->ctr_names[k], json_integer((json_int_t)v));
			if (is_drop(sp->ctr_names[k]) && v > 0)
				json_object_set_new(drops, sp->ctr_names[k], json_integer((json_int_t)v));
		}
		lcp_stage_totals(sp, &in, &out, &dr);
		json_object_set_new(s, "plugin", json_string(sp->cs->plugin));
		json_object_set_new(s, "lcore", json_integer(sp->cs->lcore));
		json_object_set_new(s, "counters_strategy", json_string(sp->cs->strat.counters.plugin));
		json_object_set_new(s, "pool_strategy", json_string(sp->cs->strat.pool.plugin));
		json_object_set_new(s, "in", json_integer((json_int_t)in));
		json_object_set_new(s, "out", json_integer((json_int_t)out));
		json_object_set_new(s, "drops", json_integer((json_int_t)dr));
		json_object_set_new(s, "drops_by_reason", drops);
		json_object_set_new(s, "counters", ctrs);
		if (sp->n_hists > 0)
			json_object_set_new(s, "histograms", lcp_hists_json(sp));
		if (sp->tm != NULL)
			json_object_set_new(s, "timing", lcp_timing_json(e, sp));
		json_object_set_new(stages, sp->cs->name, s);
	}
	for (unsigned w = 0; w < e->n_workers; w++) {
		struct lcp_worker *wk = &e->workers[w];
		uint64_t bu = __atomic_load_n(&wk->busy_cycles, __ATOMIC_RELAXED);
		uint64_t id = __atomic_load_n(&wk->idle_cycles, __ATOMIC_RELAXED);
		json_t *o = json_object();
		char key[16];

		json_object_set_new(o, "busy_cycles", json_integer((json_int_t)bu));
		json_object_set_new(o, "idle_cycles", json_integer((json_int_t)id));
		json_object_set_new(o, "busy_ratio", json_real(bu + id ? (double)bu / (double)(bu + id) : 0));
		json_object_set_new(o, "loops", json_integer((json_int_t)__atomic_load_n(&wk->loops, __ATOMIC_RELAXED)));
		json_object_set_new(o, "stages", json_integer(wk->n_stages));
		snprintf(key, sizeof(key), "%u", wk->lcore);
		json_object_set_new(lcores, key, o);
	}
	for (unsigned l = 0; l < e->cfg->n_links; l++) {
		struct lcp_ring_in *ri = e->ring_of_link ? e->ring_of_link[l] : NULL;
		struct lcp_cfg_link *cl = &e->cfg->links[l];
		json_t *o;
		char desc[160];

		if (ri == NULL)
			continue;
		o = json_object();
		snprintf(desc, sizeof(desc), "%s.%s -> %s.%s", e->cfg->stages[cl->src].name,
			 ((const struct lcp_stage_ops *)e->cfg->stages[cl->src].pf->desc->ops)->ports[cl->src_port].name,
			 e->cfg->stages[cl->dst].name,
			 ((const struct lcp_stage_ops *)e->cfg->stages[cl->dst].pf->desc->ops)->ports[cl->dst_port].name);
		json_object_set_new(o, "link", json_string(desc));
		json_object_set_new(o, "index", json_integer(l));
		json_object_set_new(o, "size", json_integer(rte_ring_get_capacity(ri->r)));
		json_object_set_new(o, "high_water", json_integer(__atomic_load_n(&ri->hwm, __ATOMIC_RELAXED)));
		json_object_set_new(o, "count", json_integer(rte_ring_count(ri->r)));
		json_object_set_new(o, "batch", json_string(ri->batch_name));
		json_object_set_new(o, "burst", json_integer(ri->burst));
		json_object_set_new(o, "on_full", json_string(lcp_on_full_names[cl->on_full]));
		if (cl->on_full == LCP_FULL_BLOCK)
			json_object_set_new(o, "block_timeout_us", json_integer(cl->block_timeout_us));
		json_array_append_new(rings, o);
	}
	json_object_set_new(r, "stages", stages);
	json_object_set_new(r, "lcores", lcores);
	json_object_set_new(r, "rings", rings);
	json_object_set_new(r, "pools", lcp_pools_json(e));
	if (final && e->mempools) {
		json_object_set_new(r, "mempools", json_incref(e->mempools));
		json_object_set_new(r, "leaked_objects", json_integer((json_int_t)e->leaked));
	}
	return r;
}

void
lcp_stats_summary(struct lcp_engine *e, FILE *f)
{
	double secs = (double)(e->t_stop - e->t_start) / (double)e->tsc_hz;

	fprintf(f, "\nlcpipe: \"%s\" ran %.2f s, stopped by %s%s\n", e->cfg->name, secs,
		e->stop_reason ? e->stop_reason : "?", e->drained ? ", drained" : ", NOT fully drained");
	fprintf(f, "%-20s %-18s %5s %16s %16s %12s\n", "stage", "plugin", "lcore", "in", "out", "drops");
	for (unsigned i = 0; i < e->n_stages; i++) {
		struct lcp_stage_priv *sp = e->stages[i];
		uint64_t in, out, dr;

		lcp_stage_totals(sp, &in, &out, &dr);
		fprintf(f, "%-20s %-18s %5u %16llu %16llu %12llu\n", sp->cs->name, sp->cs->plugin,
			sp->cs->lcore, (unsigned long long)in, (unsigned long long)out,
			(unsigned long long)dr);
	}
	for (unsigned i = 0; i < e->n_stages; i++) {
		struct lcp_stage_priv *sp = e->stages[i];

		for (unsigned k = 0; k < sp->hist_first; k++) {
			uint64_t v = lcp_stage_ctr(sp, k);

			if (v > 0 && is_drop(sp->ctr_names[k]))
				fprintf(f, "  drop %s.%s = %llu\n", sp->cs->name, sp->ctr_names[k],
					(unsigned long long)v);
		}
		for (unsigned k = 0; sp->full != NULL && k < sp->cs->n_ports; k++) {
			const struct lcp_edge_full *fu = &sp->full[k];
			uint64_t waits, cyc;

			if (!fu->block || (waits = lcp_stage_ctr(sp, fu->ctr_waits)) == 0)
				continue;
			cyc = lcp_stage_ctr(sp, fu->ctr_cycles);
			fprintf(f, "  backpressure %s.%s: %llu waits for a full ring, %.3f ms waiting\n",
				sp->cs->name, ((const struct lcp_stage_ops *)sp->cs->pf->desc->ops)->ports[k].name,
				(unsigned long long)waits, (double)cyc * 1e3 / (double)e->tsc_hz);
		}
	}
	for (unsigned i = 0; i < e->n_stages; i++) {
		struct lcp_stage_priv *sp = e->stages[i];
		json_t *t;

		if (sp->tm == NULL || sp->tm->calls == 0)
			continue;
		t = lcp_timing_json(e, sp);
		fprintf(f, "timing %-13s %8.1f cycles/object (own), %llu calls, per call p50 %.0f ns p99 %.0f ns max %.0f ns\n",
			sp->cs->name, json_real_value(json_object_get(t, "cycles_per_object")),
			(unsigned long long)sp->tm->calls, json_real_value(json_object_get(t, "call_p50_ns")),
			json_real_value(json_object_get(t, "call_p99_ns")),
			json_real_value(json_object_get(t, "call_max_ns")));
		json_decref(t);
	}
	for (unsigned w = 0; w < e->n_workers; w++) {
		uint64_t bu = e->workers[w].busy_cycles, id = e->workers[w].idle_cycles;

		fprintf(f, "lcore %u: busy %.1f%% of %.2f s (%llu turns)\n", e->workers[w].lcore,
			bu + id ? 100.0 * (double)bu / (double)(bu + id) : 0.0,
			(double)(bu + id) / (double)e->tsc_hz, (unsigned long long)e->workers[w].loops);
	}
	for (unsigned w = 0; w < e->n_workers; w++)
		for (unsigned r = 0; r < e->workers[w].n_rins; r++)
			fprintf(f, "ring links[%u]: capacity %u, high-water %u, batch %s\n",
				e->workers[w].rins[r].link, rte_ring_get_capacity(e->workers[w].rins[r].r),
				e->workers[w].rins[r].hwm, e->workers[w].rins[r].batch_name);
	{
		json_t *pl = lcp_pools_json(e), *m;
		size_t i;

		json_array_foreach(pl, i, m)
			fprintf(f, "pool %s.%s (%s): %lld of %lld in use at exit, peak %lld, failed gets %lld%s\n",
				json_string_value(json_object_get(m, "stage")),
				json_string_value(json_object_get(m, "name")),
				json_string_value(json_object_get(m, "module")),
				(long long)json_integer_value(json_object_get(m, "in_use")),
				(long long)json_integer_value(json_object_get(m, "objects")),
				(long long)json_integer_value(json_object_get(m, "peak_in_use")),
				(long long)json_integer_value(json_object_get(m, "get_fail")),
				json_integer_value(json_object_get(m, "in_use")) ? "  <- LEAK" : "");
		json_decref(pl);
	}
	if (e->mempools) {
		size_t i;
		json_t *m;

		json_array_foreach(e->mempools, i, m)
		{
			long long held = json_integer_value(json_object_get(m, "held_by_driver"));
			char note[96] = "";

			if (held > 0)
				snprintf(note, sizeof(note), " (%lld held by %s's driver)", held,
					 json_string_value(json_object_get(m, "held_for")));
			fprintf(f, "mempool %s: %lld of %lld in use%s%s\n",
				json_string_value(json_object_get(m, "name")),
				(long long)json_integer_value(json_object_get(m, "in_use")),
				(long long)json_integer_value(json_object_get(m, "size")), note,
				json_integer_value(json_object_get(m, "leaked")) ? "  <- LEAK" : "");
		}
	}
	fflush(f);
}
