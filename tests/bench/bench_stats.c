/* SPDX-License-Identifier: BSD-3-Clause
 * bench_stats.c — see bench_stats.h. */
#include <stdlib.h>
#include <string.h>

#include "bench_stats.h"

static int
cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/* linear interpolation between order statistics (type 7, as R and numpy) */
static double
quantile(const double *sorted, unsigned n, double q)
{
	double pos = q * (n - 1);
	unsigned i = (unsigned)pos;
	double f = pos - i;

	if (i + 1 >= n)
		return sorted[n - 1];
	return sorted[i] + f * (sorted[i + 1] - sorted[i]);
}

void
bench_summarize(const double *v, unsigned n, struct bench_summary *s)
{
	double t[BENCH_MAX_REPS];

	memset(s, 0, sizeof(*s));
	if (n == 0)
		return;
	if (n > BENCH_MAX_REPS)
		n = BENCH_MAX_REPS;
	memcpy(t, v, n * sizeof(*t));
	qsort(t, n, sizeof(*t), cmp_double);
	s->n = n;
	s->min = t[0];
	s->max = t[n - 1];
	s->q1 = quantile(t, n, 0.25);
	s->med = quantile(t, n, 0.5);
	s->q3 = quantile(t, n, 0.75);
}

double
bench_median(const double *v, unsigned n)
{
	struct bench_summary s;

	bench_summarize(v, n, &s);
	return s.med;
}
