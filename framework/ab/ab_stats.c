/* SPDX-License-Identifier: BSD-3-Clause
 * ab_stats.c — lcpipe ab: statistics: medians, the per-pair ratios, the verdicts (ab_priv.h).
 */
#include "ab_priv.h"

/* ---- statistics ---- */

int
dcmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/* quantile q of n sorted values, linear between order statistics */
double
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

bool
run_val(const struct ab_run *r, const char *id, double *v)
{
	json_t *j = json_object_get(r->vals, id);

	if (!json_is_number(j))
		return false;
	*v = json_number_value(j);
	return true;
}

void
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



/* +1: B is better over the whole spread of the ratios (every pair differs by
 * more than AB_VERDICT_MIN the same way), -1: B is worse, 0: neither */
int
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
const char *
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
const char *
no_ratio_text(const struct ab_metric *m)
{
	if (!isfinite(m->med[0]))
		return "only in B: no ratio";
	if (!isfinite(m->med[1]))
		return "only in A: no ratio";
	return "A is 0, B is not: no ratio";
}
