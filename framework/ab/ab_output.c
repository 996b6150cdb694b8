/* SPDX-License-Identifier: BSD-3-Clause
 * ab_output.c — lcpipe ab: output: the table, the JSON and the SVG chart (ab_priv.h).
 */
#include "ab_priv.h"

/* value with its unit, scaled for reading: rates k/M/G, times ns/us/ms */
void
fmt_value(char *buf, size_t len, enum ab_kind kind, double v)
{
	static const struct lcp_scale rate[] = {
		{ 1e9, 3, " G" }, { 1e6, 3, " M" }, { 1e3, 2, " k" }, { 1, 1, "" },
	};
	static const struct lcp_scale ns[] = { { 1e6, 2, " ms" }, { 1e3, 2, " us" }, { 1, 0, " ns" } };

	if (!isfinite(v)) {
		snprintf(buf, len, "-");
		return;
	}
	switch (kind) {
	case AB_RATE:
		lcp_fmt_scaled(buf, len, v, rate);
		break;
	case AB_CYCLES:
		snprintf(buf, len, v >= 100 ? "%.0f" : "%.1f", v);
		break;
	case AB_NS:
		lcp_fmt_scaled(buf, len, v, ns);
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

void
fmt_ratio(char *buf, size_t len, double r)
{
	if (isfinite(r))
		snprintf(buf, len, "%.3f", r);
	else
		snprintf(buf, len, "-");
}


void
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

json_t *
jnum(double v)
{
	return isfinite(v) ? json_real(v) : json_null();
}

json_t *
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

int
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

void
xml_text(FILE *f, const char *s)
{
	static const char *const ent[] = {
		['&'] = "&amp;", ['<'] = "&lt;", ['>'] = "&gt;", ['"'] = "&quot;", ['\''] = "&apos;",
	};

	for (; *s; s++) {
		unsigned char ch = (unsigned char)*s;

		if (ch < sizeof(ent) / sizeof(ent[0]) && ent[ch] != NULL)
			fputs(ent[ch], f);
		else /* control characters are not allowed in XML 1.0 */
			fputc(ch < 0x20 ? ' ' : ch, f);
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

void
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

int
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
		fprintf(f, "</text>\n<text x=\"%d\" y=\"%.1f\" class=\"s g\">", SVG_LABEL_X, y + 34);
		xml_text(f, m->unit);
		fprintf(f, ", %s is better; median A %s, B %s</text>\n", m->better > 0 ? "higher" : "lower", a, b);
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
		/* the words are escaped: "too few (< 20) to judge" */
		fprintf(f, "<text x=\"%d\" y=\"%.1f\" class=\"g\">", SVG_RATIO_X + 110, y + 24);
		if (m->r_n > 0 && m->nojudge == NULL) {
			fprintf(f, "[%s–%s] ", rl, rh);
			xml_text(f, verdict_text(m));
		} else {
			xml_text(f, m->nojudge ? m->nojudge : no_ratio_text(m));
		}
		fprintf(f, "</text>\n</g>\n");
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
