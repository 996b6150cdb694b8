/* SPDX-License-Identifier: BSD-3-Clause
 * opt_doc.c — everything generated from the option tables: `lcpipe describe`
 * (JSON and Markdown), doc/plugins.md and conf/lcpipe.schema.json.
 * Nothing about options is written twice.
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"
#include "lcp_priv.h"

static const char *const lcp_units[] = { "?", "pkt", "stream", "msg" };

static json_t *
default_value(const struct lcp_opt *o)
{
	json_error_t je;

	return o->def ? json_loads(o->def, JSON_DECODE_ANY, &je) : NULL;
}

static json_t *
describe_opts(const struct lcp_opt *tbl)
{
	json_t *a = json_array();

	for (const struct lcp_opt *o = tbl; o && o->name; o++) {
		json_t *x = json_object(), *dv = default_value(o);

		json_object_set_new(x, "name", json_string(o->name));
		json_object_set_new(x, "type", json_string(lcp_opt_type_name(o->type)));
		json_object_set_new(x, "required", json_boolean(o->flags & LCP_OPT_F_REQUIRED));
		if (dv)
			json_object_set_new(x, "default", dv);
		if (o->type == LCP_OPT_INT || o->type == LCP_OPT_UINT) {
			json_object_set_new(x, "min", json_integer(o->min));
			json_object_set_new(x, "max", json_integer(o->max));
			if (o->flags & LCP_OPT_F_POW2)
				json_object_set_new(x, "power_of_two", json_true());
		} else if (o->type == LCP_OPT_DOUBLE) {
			json_object_set_new(x, "min", json_real(o->dmin));
			json_object_set_new(x, "max", json_real(o->dmax));
		} else if (o->type == LCP_OPT_STRING) {
			json_object_set_new(x, "min_length", json_integer(o->min));
			if (o->max > 0)
				json_object_set_new(x, "max_length", json_integer(o->max));
		} else if (o->type == LCP_OPT_ENUM) {
			json_t *c = json_array();

			for (int i = 0; o->choices[i]; i++)
				json_array_append_new(c, json_string(o->choices[i]));
			json_object_set_new(x, "choices", c);
		}
		json_object_set_new(x, "doc", json_string(o->doc ? o->doc : ""));
		json_array_append_new(a, x);
	}
	return a;
}

json_t *
lcp_describe_plugin(const struct lcp_plugin_file *pf, bool with_file)
{
	const struct lcp_plugin *d = pf->desc;
	json_t *j = json_object();

	json_object_set_new(j, "name", json_string(d->name));
	json_object_set_new(j, "kind", json_string(lcp_plugin_kind_name(d->kind)));
	json_object_set_new(j, "version", json_string(d->version));
	json_object_set_new(j, "summary", json_string(d->summary));
	json_object_set_new(j, "abi", json_sprintf("%u.%u", d->abi_major, d->abi_minor));
	if (with_file)
		json_object_set_new(j, "file", json_string(pf->path));
	json_object_set_new(j, "options", describe_opts(d->options));
	if (d->kind == LCP_KIND_STAGE) {
		const struct lcp_stage_ops *ops = d->ops;
		json_t *ports = json_array(), *ctrs = json_array();

		for (const struct lcp_port_def *p = ops->ports; p->name; p++) {
			json_t *x = json_object();

			json_object_set_new(x, "name", json_string(p->name));
			json_object_set_new(x, "direction", json_string(p->dir == LCP_PORT_IN ? "in" : "out"));
			json_object_set_new(x, "unit", json_string(lcp_units[p->unit]));
			json_object_set_new(x, "required", json_boolean(p->flags & LCP_PORT_F_REQUIRED));
			json_object_set_new(x, "doc", json_string(p->doc ? p->doc : ""));
			json_array_append_new(ports, x);
		}
		for (const char *const *c = ops->counters; c && *c; c++)
			json_array_append_new(ctrs, json_string(*c));
		json_object_set_new(j, "ports", ports);
		json_object_set_new(j, "counters", ctrs);
		if (lcp_stage_hists(d) != NULL) {
			json_t *hs = json_array();

			for (const struct lcp_hist_def *h = lcp_stage_hists(d); h->name; h++)
				json_array_append_new(hs, json_pack("{s:s, s:s, s:I}", "name", h->name, "help", h->help,
								    "buckets", (json_int_t)h->n_le + 1));
			json_object_set_new(j, "histograms", hs);
		}
	}
	return j;
}

static void
md_escape(struct lcp_sbuf *b, const char *s)
{
	for (; s && *s; s++) {
		if (*s == '|')
			lcp_sbuf_addf(b, "\\|");
		else
			lcp_sbuf_addf(b, "%c", *s);
	}
}

static void
md_opts(struct lcp_sbuf *b, const struct lcp_opt *tbl)
{
	if (tbl == NULL || tbl->name == NULL) {
		lcp_sbuf_addf(b, "No options.\n\n");
		return;
	}
	lcp_sbuf_addf(b, "| option | type | default | range | description |\n|---|---|---|---|---|\n");
	for (const struct lcp_opt *o = tbl; o->name; o++) {
		lcp_sbuf_addf(b, "| `%s` | %s | ", o->name, lcp_opt_type_name(o->type));
		if (o->flags & LCP_OPT_F_REQUIRED)
			lcp_sbuf_addf(b, "**required**");
		else if (o->def)
			lcp_sbuf_addf(b, "`%s`", o->def);
		else
			lcp_sbuf_addf(b, "(unset)");
		lcp_sbuf_addf(b, " | ");
		if (o->type == LCP_OPT_INT || o->type == LCP_OPT_UINT)
			lcp_sbuf_addf(b, "%lld … %lld%s", (long long)o->min, (long long)o->max,
				      o->flags & LCP_OPT_F_POW2 ? ", a power of two" : "");
		else if (o->type == LCP_OPT_DOUBLE)
			lcp_sbuf_addf(b, "%g … %g", o->dmin, o->dmax);
		else if (o->type == LCP_OPT_STRING && o->max > 0)
			lcp_sbuf_addf(b, "length %lld … %lld", (long long)o->min, (long long)o->max);
		else if (o->type == LCP_OPT_ENUM)
			for (int i = 0; o->choices[i]; i++)
				lcp_sbuf_addf(b, "%s`%s`", i ? ", " : "", o->choices[i]);
		lcp_sbuf_addf(b, " | ");
		md_escape(b, o->doc);
		if (o->flags & LCP_OPT_F_PATH)
			lcp_sbuf_addf(b, " (a relative path is taken from the config file's directory)");
		lcp_sbuf_addf(b, " |\n");
	}
	lcp_sbuf_addf(b, "\n");
}

void
lcp_describe_plugin_markdown(const struct lcp_plugin *d, struct lcp_sbuf *b)
{
	lcp_sbuf_addf(b, "## `%s` — %s plugin, version %s\n\n", d->name, lcp_plugin_kind_name(d->kind),
		      d->version);
	md_escape(b, d->summary);
	lcp_sbuf_addf(b, "\n\n### Options\n\n");
	md_opts(b, d->options);
	if (d->kind == LCP_KIND_STAGE) {
		const struct lcp_stage_ops *ops = d->ops;

		lcp_sbuf_addf(b, "### Ports\n\n| port | direction | unit | required | description |\n|---|---|---|---|---|\n");
		for (const struct lcp_port_def *p = ops->ports; p->name; p++) {
			lcp_sbuf_addf(b, "| `%s` | %s | `%s` | %s | ", p->name,
				      p->dir == LCP_PORT_IN ? "in" : "out", lcp_units[p->unit],
				      p->flags & LCP_PORT_F_REQUIRED ? "yes" : "no");
			md_escape(b, p->doc);
			lcp_sbuf_addf(b, " |\n");
		}
		lcp_sbuf_addf(b, "\n### Counters\n\nBuilt in for every stage: `<in port>.in`, `<out port>.out`, "
				 "`<out port>.drop_ring_full`, `<out port>.drop_unlinked`, `drop_shutdown`.");
		if (ops->counters && ops->counters[0]) {
			lcp_sbuf_addf(b, " Its own:");
			for (const char *const *c = ops->counters; *c; c++)
				lcp_sbuf_addf(b, "%s `%s`", c == ops->counters ? "" : ",", *c);
			lcp_sbuf_addf(b, ".");
		}
		lcp_sbuf_addf(b, "\n\n");
		if (lcp_stage_hists(d) != NULL && lcp_stage_hists(d)->name != NULL) {
			lcp_sbuf_addf(b, "### Histograms\n\n| histogram | buckets | description |\n|---|---|---|\n");
			for (const struct lcp_hist_def *h = lcp_stage_hists(d); h->name; h++) {
				lcp_sbuf_addf(b, "| `%s` | %u | ", h->name, h->n_le + 1);
				md_escape(b, h->help);
				lcp_sbuf_addf(b, " |\n");
			}
			lcp_sbuf_addf(b, "\n");
		}
	}
}

void
lcp_describe_markdown(struct lcp_registry *r, struct lcp_sbuf *b)
{
	struct lcp_plugin_file **v;
	unsigned n = lcp_registry_sorted(r, &v);

	lcp_sbuf_addf(b, "# Plugin and config reference\n\n"
			 "<!-- Generated by `lcpipe describe --markdown` from the option tables. "
			 "Do not edit: a test fails when this file differs from what the tables generate. -->\n\n"
			 "## Config file, top level\n\n"
			 "| key | type | description |\n|---|---|---|\n"
			 "| `name` | string | a name for reports |\n"
			 "| `include` | string or array of strings | configs merged in first, in order (relative to this file; at most 8 levels, no cycles): objects key by key, this file's keys last; `stages` concatenate, a stage of the same name merging into the included one; `links` concatenate without repeats |\n"
			 "| `eal` | array of strings | DPDK EAL arguments; `lcpipe run CONF -- ARGS` replaces them |\n"
			 "| `plugin_path` | array of strings | directories searched first for plugins (relative to the config file) |\n"
			 "| `engine` | object | engine options, below |\n"
			 "| `strategies` | object | `counters` (default `counters_percore`), `pool` (default `pool_mempool`), `batch` (default `batch_burst`): each a plugin name or `{\"plugin\": …, \"options\": {…}}`; a stage may override any of them in its own `strategies` (its `batch` applies to the links leaving it), a link its `batch` |\n"
			 "| `stages` | array | stage objects, below |\n"
			 "| (any string) | | `${NAME}` is replaced by the environment variable NAME, `${NAME:-default}` by default when NAME is unset (unset without a default is an error naming the JSON path); `$${` is a literal `${`; strings only (a number option cannot come from a variable) |\n"
			 "| `links` | array | `\"stage.port -> stage.port\"`, or an object: the link options below and `batch` (a batch strategy for this link: a plugin name or `{\"plugin\": …, \"options\": {…}}`) |\n\n"
			 "## `engine` options\n\n");
	md_opts(b, lcp_engine_opts);
	lcp_sbuf_addf(b, "## Stage keys\n\n"
			 "The keys of a stage object beside `options` (the plugin's options, under its "
			 "name below) and `strategies` (as the top level's, for this stage: its `batch` "
			 "applies to the links leaving it).\n\n");
	md_opts(b, lcp_stage_opts);
	lcp_sbuf_addf(b, "## Link options\n\n"
			 "The keys of a link written as an object, beside `batch`. Those without a default "
			 "take the engine's option of the same meaning.\n\n");
	md_opts(b, lcp_link_opts);
	for (unsigned i = 0; i < n; i++)
		lcp_describe_plugin_markdown(v[i]->desc, b);
	free(v);
}

/* JSON Schema of one option table */
static json_t *
schema_opts(const struct lcp_opt *tbl)
{
	json_t *s = json_object(), *props = json_object(), *req = json_array();

	json_object_set_new(s, "type", json_string("object"));
	json_object_set_new(s, "additionalProperties", json_false());
	for (const struct lcp_opt *o = tbl; o && o->name; o++) {
		json_t *p = json_object(), *dv = default_value(o);

		switch (o->type) {
		case LCP_OPT_BOOL: json_object_set_new(p, "type", json_string("boolean")); break;
		case LCP_OPT_INT:
		case LCP_OPT_UINT:
			json_object_set_new(p, "type", json_string("integer"));
			json_object_set_new(p, "minimum", json_integer(o->min));
			json_object_set_new(p, "maximum", json_integer(o->max));
			if (o->flags & LCP_OPT_F_POW2) {
				/* JSON Schema has no "power of two": list them */
				json_t *e = json_array();

				for (int64_t v = 1; v <= o->max; v *= 2) {
					if (v >= o->min)
						json_array_append_new(e, json_integer(v));
					if (v > INT64_MAX / 2)
						break;
				}
				json_object_set_new(p, "enum", e);
			}
			break;
		case LCP_OPT_DOUBLE:
			json_object_set_new(p, "type", json_string("number"));
			json_object_set_new(p, "minimum", json_real(o->dmin));
			json_object_set_new(p, "maximum", json_real(o->dmax));
			break;
		case LCP_OPT_STRING:
			json_object_set_new(p, "type", json_string("string"));
			json_object_set_new(p, "minLength", json_integer(o->min));
			if (o->max > 0)
				json_object_set_new(p, "maxLength", json_integer(o->max));
			break;
		case LCP_OPT_ENUM: {
			json_t *c = json_array();

			for (int i = 0; o->choices[i]; i++)
				json_array_append_new(c, json_string(o->choices[i]));
			json_object_set_new(p, "enum", c);
			break;
		}
		}
		if (dv)
			json_object_set_new(p, "default", dv);
		if (o->flags & LCP_OPT_F_PATH) {
			char *d = NULL;

			if (asprintf(&d, "%s (a relative path is taken from the config file's directory)",
				     o->doc ? o->doc : "") >= 0) {
				json_object_set_new(p, "description", json_string(d));
				free(d);
			}
		} else {
			json_object_set_new(p, "description", json_string(o->doc ? o->doc : ""));
		}
		json_object_set_new(props, o->name, p);
		if (o->flags & LCP_OPT_F_REQUIRED)
			json_array_append_new(req, json_string(o->name));
	}
	json_object_set_new(s, "properties", props);
	if (json_array_size(req))
		json_object_set_new(s, "required", req);
	else
		json_decref(req);
	return s;
}

json_t *
lcp_config_schema(struct lcp_registry *r)
{
	struct lcp_plugin_file **v;
	unsigned n = lcp_registry_sorted(r, &v);
	json_t *s, *props, *stage, *sprops, *allof, *strat, *stratref, *link;

	s = json_pack("{s:s, s:s, s:s, s:s, s:b}", "$schema", "https://json-schema.org/draft/2020-12/schema",
		      "$id", "lcpipe.schema.json", "title", "lcpipe pipeline config", "type", "object",
		      "additionalProperties", 0);
	props = json_object();
	json_object_set_new(props, "$schema", json_pack("{s:s}", "type", "string"));
	json_object_set_new(props, "name", json_pack("{s:s}", "type", "string"));
	json_object_set_new(props, "eal", json_pack("{s:s, s:{s:s}}", "type", "array", "items", "type", "string"));
	json_object_set_new(props, "plugin_path", json_pack("{s:s, s:{s:s}}", "type", "array", "items", "type", "string"));
	json_object_set_new(props, "engine", schema_opts(lcp_engine_opts));
	stratref = json_pack("{s:[{s:s}, {s:s, s:b, s:{s:{s:s}, s:{s:s}}, s:[s]}]}", "oneOf", "type", "string",
			     "type", "object", "additionalProperties", 0, "properties", "plugin", "type",
			     "string", "options", "type", "object", "required", "plugin");
	strat = json_pack("{s:s, s:b, s:{s:O, s:O, s:O}}", "type", "object", "additionalProperties", 0,
			  "properties", "counters", stratref, "pool", stratref, "batch", stratref);
	json_object_set_new(props, "strategies", strat);
	/* "required": "name" only: "plugin" is required unless the config
	 * includes others, where a stage may change an included stage's options,
	 * by name (the merged config is what lcpipe check validates whole; "then"
	 * below) */
	stage = schema_opts(lcp_stage_opts);
	sprops = json_object_get(stage, "properties");
	/* the characters of a name, which the table has no field for (config.c's
	 * stage_name_ok) */
	json_object_set_new(json_object_get(sprops, "name"), "pattern", json_string("^[A-Za-z0-9_-]*$"));
	json_object_set_new(sprops, "options", json_pack("{s:s}", "type", "object"));
	json_object_set_new(sprops, "strategies", json_incref(strat));
	allof = json_array();
	for (unsigned i = 0; i < n; i++) {
		if (v[i]->desc->kind != LCP_KIND_STAGE)
			continue;
		json_array_append_new(allof, json_pack("{s:{s:[s], s:{s:{s:s}}}, s:{s:{s:o}}}", "if", "required",
						       "plugin", "properties", "plugin", "const", v[i]->desc->name,
						       "then", "properties", "options",
						       schema_opts(v[i]->desc->options)));
	}
	json_object_set_new(stage, "allOf", allof);
	json_object_set_new(props, "stages", json_pack("{s:s, s:i, s:o}", "type", "array", "minItems", 1, "items", stage));
	link = schema_opts(lcp_link_opts);
	json_object_set(json_object_get(link, "properties"), "batch", stratref);
	json_object_set_new(props, "links",
			    json_pack("{s:s, s:{s:[{s:s, s:s}, o]}}", "type", "array", "items", "oneOf", "type",
				      "string", "pattern",
				      "^\\s*[A-Za-z0-9_-]+\\.[a-z0-9_]+\\s*->\\s*[A-Za-z0-9_-]+\\.[a-z0-9_]+\\s*$",
				      link));
	json_decref(stratref);
	json_object_set_new(s, "properties", props);
	/* stages: here or from an included file */
	json_object_set_new(props, "include",
			    json_pack("{s:[{s:s}, {s:s, s:{s:s}}]}", "oneOf", "type", "string", "type", "array", "items",
				      "type", "string"));
	json_object_set_new(s, "anyOf", json_pack("[{s:[s]}, {s:[s]}]", "required", "stages", "required", "include"));
	json_object_set_new(s, "if", json_pack("{s:{s:[s]}}", "not", "required", "include"));
	json_object_set_new(s, "then", json_pack("{s:{s:{s:{s:[s]}}}}", "properties", "stages", "items", "required", "plugin"));
	free(v);
	return s;
}

/* ---- man pages: the markdown above, as roff ----
 * The subset the generators write: "#" (the title, dropped), "##" sections,
 * "###" subsections, tables (each row a tagged paragraph: the first cell the
 * tag, the others after it), ``` blocks, paragraphs, `code` and **bold**. */

/* one line of text, roff-escaped; inline `code` and **bold** in bold */
static void
man_text(struct lcp_sbuf *b, const char *s, size_t n)
{
	static const struct {
		const char *from, *to;
	} sub[] = { { "…", "..." }, { "—", "\\(em" }, { "–", "\\(en" }, { "→", "\\(->" }, { "≤", "\\(<=" },
		    { "≥", "\\(>=" }, { "×", "\\(mu" }, { "µ", "\\(mc" }, { "’", "'" } };
	bool bold = false;

	for (size_t i = 0; i < n; i++) {
		const char *p = s + i;
		bool done = false;

		if (*p == '`' || (p[0] == '*' && i + 1 < n && p[1] == '*')) {
			lcp_sbuf_addf(b, "%s", bold ? "\\fR" : "\\fB");
			bold = !bold;
			if (*p == '*')
				i++;
			continue;
		}
		if (*p == '\\') {
			lcp_sbuf_addf(b, "\\e");
			continue;
		}
		if (*p == '-') {
			lcp_sbuf_addf(b, "\\-");
			continue;
		}
		if ((*p == '.' || *p == '\'') && (i == 0)) {
			lcp_sbuf_addf(b, "\\&%c", *p);
			continue;
		}
		for (unsigned k = 0; k < sizeof(sub) / sizeof(sub[0]) && !done; k++) {
			size_t l = strlen(sub[k].from);

			if (i + l <= n && strncmp(p, sub[k].from, l) == 0) {
				lcp_sbuf_addf(b, "%s", sub[k].to);
				i += l - 1;
				done = true;
			}
		}
		if (!done)
			lcp_sbuf_addf(b, "%c", *p);
	}
	if (bold)
		lcp_sbuf_addf(b, "\\fR");
}

/* a heading: backticks and quotes dropped, upper case for .SH */
static void
man_heading(struct lcp_sbuf *b, const char *macro, const char *p, size_t n, bool upper)
{
	struct lcp_sbuf t = { 0 };

	for (size_t i = 0; i < n; i++)
		if (p[i] != '`' && p[i] != '"')
			lcp_sbuf_addf(&t, "%c", upper && (unsigned char)p[i] < 0x80 ? (char)toupper((unsigned char)p[i]) : p[i]);
	lcp_sbuf_addf(b, "%s \"", macro);
	man_text(b, t.s ? t.s : "", t.len);
	lcp_sbuf_addf(b, "\"\n");
	free(t.s);
}

/* a table row "| a | b | c |" as .TP: a, then "(b; c)" and the last cell */
static void
man_row(struct lcp_sbuf *b, const char *line, size_t n, unsigned ncols)
{
	const char *cell[16];
	size_t len[16];
	unsigned k = 0;
	const char *p = line + 1, *end = line + n;

	while (p < end && k < 16) {
		const char *q = p;

		while (q < end && !(*q == '|' && q[-1] != '\\'))
			q++;
		if (q >= end)
			break;
		while (p < q && *p == ' ')
			p++;
		cell[k] = p;
		len[k] = (size_t)(q - p);
		while (len[k] > 0 && cell[k][len[k] - 1] == ' ')
			len[k]--;
		k++;
		p = q + 1;
	}
	if (k == 0)
		return;
	lcp_sbuf_addf(b, ".TP\n");
	man_text(b, cell[0], len[0]);
	lcp_sbuf_addf(b, "\n");
	if (k > 2 || (k == 2 && ncols > 2)) {
		lcp_sbuf_addf(b, "(");
		for (unsigned i = 1; i + 1 < k; i++) {
			if (i > 1)
				lcp_sbuf_addf(b, "; ");
			man_text(b, cell[i], len[i]);
		}
		lcp_sbuf_addf(b, ")\n.br\n");
	}
	if (k >= 2) {
		/* "\|" in a cell is a literal bar */
		struct lcp_sbuf t = { 0 };

		for (size_t i = 0; i < len[k - 1]; i++)
			if (!(cell[k - 1][i] == '\\' && i + 1 < len[k - 1] && cell[k - 1][i + 1] == '|'))
				lcp_sbuf_addf(&t, "%c", cell[k - 1][i]);
		man_text(b, t.s ? t.s : "", t.len);
		free(t.s);
		lcp_sbuf_addf(b, "\n");
	}
}

void
lcp_md_to_man(const char *md, const char *name, int section, const char *what, struct lcp_sbuf *b)
{
	const char *p = md;
	bool code = false, in_table = false, para = false;
	unsigned ncols = 0;

	lcp_sbuf_addf(b, ".\\\" Generated by `lcpipe describe --man%d` from the option tables and help texts.\n"
			 ".\\\" Do not edit: a test fails when this file differs from what they generate.\n"
			 ".TH %s %d \"\" \"lcpipe %s\" \"lcpipe\"\n.SH NAME\n%s \\- %s\n",
		      section, name, section, PACKAGE_VERSION, name, what);
	while (*p) {
		const char *nl = strchr(p, '\n');
		size_t n = nl ? (size_t)(nl - p) : strlen(p);

		if (n >= 3 && strncmp(p, "```", 3) == 0) {
			lcp_sbuf_addf(b, code ? ".fi\n.RE\n" : ".RS 2\n.nf\n");
			code = !code;
		} else if (code) {
			for (size_t i = 0; i < n; i++) {
				if (p[i] == '\\')
					lcp_sbuf_addf(b, "\\e");
				else if (i == 0 && (p[i] == '.' || p[i] == '\''))
					lcp_sbuf_addf(b, "\\&%c", p[i]);
				else if (p[i] == '-')
					lcp_sbuf_addf(b, "\\-");
				else
					lcp_sbuf_addf(b, "%c", p[i]);
			}
			lcp_sbuf_addf(b, "\n");
		} else if (n > 0 && p[0] == '|') {
			bool sep = true;

			for (size_t i = 0; i < n; i++)
				sep &= p[i] == '|' || p[i] == '-' || p[i] == ' ' || p[i] == ':';
			if (!in_table) { /* the header row: its column count only */
				ncols = 0;
				for (size_t i = 1; i < n; i++)
					ncols += p[i] == '|';
				in_table = true;
			} else if (!sep) {
				man_row(b, p, n, ncols);
			}
			para = false;
		} else if (n >= 2 && strncmp(p, "# ", 2) == 0) {
			/* the document's title: NAME says it */
		} else if (n >= 3 && strncmp(p, "## ", 3) == 0) {
			man_heading(b, ".SH", p + 3, n - 3, true);
			para = false;
		} else if (n >= 4 && strncmp(p, "### ", 4) == 0) {
			man_heading(b, ".SS", p + 4, n - 4, false);
			para = false;
		} else if (n == 0) {
			in_table = false;
			para = false;
		} else if (n >= 4 && strncmp(p, "<!--", 4) == 0) {
			/* a comment of the markdown */
		} else {
			if (!para)
				lcp_sbuf_addf(b, ".PP\n");
			para = true;
			man_text(b, p, n);
			lcp_sbuf_addf(b, "\n");
		}
		p += n + (nl ? 1 : 0);
	}
	if (code)
		lcp_sbuf_addf(b, ".fi\n.RE\n");
}
