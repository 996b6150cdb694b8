/* SPDX-License-Identifier: BSD-3-Clause
 * opt.c — the one option walker. Defaults are parsed with the same code as user
 * values, so a default that would be refused from a user is refused too.
 *
 * Entry points: lcp_opt_apply() (a plugin's or the engine's options: validate
 * + fill), lcp_opt_set_keys() (an object of the config's own, a stage or a
 * link, beside keys the caller reads), lcp_opt_set() (one value),
 * lcp_opt_table_check() (a plugin's table is itself sane), lcp_opt_type_name().
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lcp_priv.h"

const char *
lcp_opt_type_name(uint32_t type)
{
	switch (type) {
	case LCP_OPT_BOOL: return "boolean";
	case LCP_OPT_INT: return "integer";
	case LCP_OPT_UINT: return "unsigned integer";
	case LCP_OPT_DOUBLE: return "number";
	case LCP_OPT_STRING: return "string";
	case LCP_OPT_ENUM: return "string (one of a set)";
	default: return "?";
	}
}

static const char *
json_kind(const json_t *v)
{
	switch (json_typeof(v)) {
	case JSON_OBJECT: return "object";
	case JSON_ARRAY: return "array";
	case JSON_STRING: return "string";
	case JSON_INTEGER: return "integer";
	case JSON_REAL: return "number";
	case JSON_TRUE:
	case JSON_FALSE: return "boolean";
	case JSON_NULL: return "null";
	}
	return "?";
}

static void
store_int(void *p, size_t size, int64_t v)
{
	switch (size) {
	case 1: *(int8_t *)p = (int8_t)v; break;
	case 2: *(int16_t *)p = (int16_t)v; break;
	case 4: *(int32_t *)p = (int32_t)v; break;
	default: *(int64_t *)p = v; break;
	}
}

/* the smallest power of two >= x (1 for x <= 1); 0 when there is none */
static int64_t
pow2_at_least(int64_t x)
{
	if (x <= 1)
		return 1;
	if (x > (int64_t)1 << 62)
		return 0;
	return (int64_t)1 << (64 - __builtin_clzll((uint64_t)(x - 1)));
}

/* is there a power of two in [min, max]? */
static bool
pow2_within(int64_t min, int64_t max)
{
	int64_t p = pow2_at_least(min);

	return p != 0 && p <= max;
}

/* LCP_OPT_F_POW2: "N is not a power of two", with the powers of two around N
 * that [min, max] allows */
static void
pow2_refuse(const struct lcp_opt *o, int64_t x, const char *what, struct lcp_errs *errs)
{
	int64_t hi = pow2_at_least(x); /* above x: x is not a power of two */
	int64_t lo = x < 1 ? 0 : hi ? hi / 2 : (int64_t)1 << 62;

	if (lo < o->min)
		lo = 0;
	if (hi > o->max)
		hi = 0;
	if (lo && hi)
		lcp_errs_add(errs, "%s: %lld is not a power of two (e.g. %lld or %lld)", what, (long long)x,
			     (long long)lo, (long long)hi);
	else if (lo || hi)
		lcp_errs_add(errs, "%s: %lld is not a power of two (e.g. %lld)", what, (long long)x,
			     (long long)(lo ? lo : hi));
	else
		lcp_errs_add(errs, "%s: %lld is not a power of two", what, (long long)x);
}

/* Set one option from a JSON value; 0 or -1 with an error added. `what` is the
 * path to print ("stages[2].options.burst"). */
int
lcp_opt_set(const struct lcp_opt *o, json_t *v, void *conf, const char *what, struct lcp_errs *errs)
{
	char *field = (char *)conf + o->offset;

	switch (o->type) {
	case LCP_OPT_BOOL:
		if (!json_is_boolean(v))
			goto type;
		*(bool *)field = json_is_true(v);
		return 0;
	case LCP_OPT_INT:
	case LCP_OPT_UINT: {
		int64_t x;

		if (json_is_real(v)) {
			double d = json_real_value(v);

			if (d != floor(d) || fabs(d) > 9e15)
				goto type;
			x = (int64_t)d;
		} else if (json_is_integer(v)) {
			x = json_integer_value(v);
		} else {
			goto type;
		}
		if (x < o->min) {
			lcp_errs_add(errs, "%s: %lld is below the minimum %lld", what,
				     (long long)x, (long long)o->min);
			return -1;
		}
		if (x > o->max) {
			lcp_errs_add(errs, "%s: %lld is above the maximum %lld", what,
				     (long long)x, (long long)o->max);
			return -1;
		}
		if ((o->flags & LCP_OPT_F_POW2) && (x < 1 || (x & (x - 1)) != 0)) {
			pow2_refuse(o, x, what, errs);
			return -1;
		}
		store_int(field, o->size, x);
		return 0;
	}
	case LCP_OPT_DOUBLE: {
		double d;

		if (!json_is_number(v))
			goto type;
		d = json_number_value(v);
		if (d < o->dmin) {
			lcp_errs_add(errs, "%s: %g is below the minimum %g", what, d, o->dmin);
			return -1;
		}
		if (d > o->dmax) {
			lcp_errs_add(errs, "%s: %g is above the maximum %g", what, d, o->dmax);
			return -1;
		}
		*(double *)field = d;
		return 0;
	}
	case LCP_OPT_STRING: {
		size_t len;

		if (!json_is_string(v))
			goto type;
		len = json_string_length(v);
		if (len == 0 && o->min > 0) {
			lcp_errs_add(errs, "%s: empty; at least %lld byte%s", what, (long long)o->min,
				     o->min == 1 ? "" : "s");
			return -1;
		}
		if ((int64_t)len < o->min) {
			lcp_errs_add(errs, "%s: \"%s\" is shorter than %lld bytes", what,
				     json_string_value(v), (long long)o->min);
			return -1;
		}
		if (o->max > 0 && (int64_t)len > o->max) {
			lcp_errs_add(errs, "%s: a string of %zu bytes is longer than the maximum %lld",
				     what, len, (long long)o->max);
			return -1;
		}
		if (strlen(json_string_value(v)) != len) {
			lcp_errs_add(errs, "%s: string contains a NUL character", what);
			return -1;
		}
		*(const char **)field = json_string_value(v);
		return 0;
	}
	case LCP_OPT_ENUM: {
		const char *s;
		struct lcp_sbuf b = { 0 };

		if (!json_is_string(v))
			goto type;
		s = json_string_value(v);
		for (int i = 0; o->choices[i] != NULL; i++) {
			if (strcmp(s, o->choices[i]) == 0) {
				*(int *)field = i;
				return 0;
			}
		}
		lcp_sbuf_join(&b, o->choices, 0, ", ");
		lcp_errs_add(errs, "%s: \"%s\" is not one of: %s", what, s, b.s);
		lcp_sbuf_free(&b);
		return -1;
	}
	default:
		lcp_errs_add(errs, "%s: option has an unknown type %u (plugin defect)", what, o->type);
		return -1;
	}
type:
	lcp_errs_add(errs, "%s: expected %s %s, got %s", what,
		     o->type == LCP_OPT_INT || o->type == LCP_OPT_UINT ? "an" : "a",
		     lcp_opt_type_name(o->type), json_kind(v));
	return -1;
}

const struct lcp_opt *
lcp_opt_find(const struct lcp_opt *tbl, const char *name)
{
	for (const struct lcp_opt *o = tbl; o && o->name; o++)
		if (strcmp(o->name, name) == 0)
			return o;
	return NULL;
}

void
lcp_opt_refuse_key(const struct lcp_opt *tbl, const char *const *extra, const char *noun,
		   const char *path, const char *key, struct lcp_errs *errs)
{
	struct lcp_sbuf b = { 0 };
	struct lcp_suggest sg;

	lcp_suggest_init(&sg, key);
	for (const struct lcp_opt *o = tbl; o && o->name; o++) {
		lcp_sbuf_addf(&b, "%s%s", o == tbl ? "" : ", ", o->name);
		lcp_suggest_try(&sg, o->name);
	}
	for (; extra != NULL && *extra != NULL; extra++) {
		lcp_sbuf_addf(&b, "%s%s", b.len ? ", " : "", *extra);
		lcp_suggest_try(&sg, *extra);
	}
	lcp_errs_add(errs, "%s%s%s: unknown %s%s; allowed: %s", path, *path ? "." : "", key, noun,
		     lcp_suggest_hint(&sg), b.s && b.len ? b.s : "(none)");
	lcp_sbuf_free(&b);
}

/* o's default into conf, path.name in messages. A string points into the
 * parsed default, which keep holds */
static void
set_default(const struct lcp_opt *o, void *conf, const char *path, struct lcp_errs *errs,
	    json_t *keep)
{
	json_error_t je;
	json_t *dv = json_loads(o->def, JSON_DECODE_ANY, &je);
	char what[512];

	if (dv == NULL) {
		lcp_errs_add(errs, "%s.%s: default '%s' is not valid JSON (plugin defect)", path,
			     o->name, o->def);
		return;
	}
	snprintf(what, sizeof(what), "%s.%s (default)", path, o->name);
	lcp_opt_set(o, dv, conf, what, errs);
	json_array_append_new(keep, dv);
}

int
lcp_opt_set_keys(const struct lcp_opt *tbl, const char *const *extra, json_t *obj, void *conf,
		 const char *path, struct lcp_errs *errs, json_t *keep)
{
	const char *key;
	json_t *x;
	char what[512];
	int bad = 0;

	/* the defaults first: a value refused leaves its row at the default */
	for (const struct lcp_opt *o = tbl; o->name; o++)
		if (o->def != NULL)
			set_default(o, conf, path, errs, keep);
	json_object_foreach(obj, key, x) {
		const struct lcp_opt *o = lcp_opt_find(tbl, key);

		if (o != NULL) {
			snprintf(what, sizeof(what), "%s.%s", path, key);
			if (lcp_opt_set(o, x, conf, what, errs) < 0)
				bad = 1;
		} else if (!lcp_str_in(extra, key)) {
			lcp_opt_refuse_key(tbl, extra, "key", path, key, errs);
			bad = 1;
		}
	}
	return bad ? -1 : 0;
}

unsigned
lcp_opt_apply(const struct lcp_opt *tbl, size_t conf_size, json_t *obj, void *conf,
	      const char *path, struct lcp_errs *errs, json_t *keep)
{
	unsigned before = errs->n;
	const char *key;
	json_t *v;
	char what[512];

	memset(conf, 0, conf_size);
	if (obj != NULL && !json_is_object(obj)) {
		lcp_errs_add(errs, "%s: expected an object, got %s", path, json_kind(obj));
		return errs->n - before;
	}
	/* unknown keys, listing the allowed ones */
	if (obj != NULL)
		json_object_foreach(obj, key, v)
			if (lcp_opt_find(tbl, key) == NULL)
				lcp_opt_refuse_key(tbl, NULL, "option", path, key, errs);
	for (const struct lcp_opt *o = tbl; o && o->name; o++) {
		json_t *uv = obj ? json_object_get(obj, o->name) : NULL;

		snprintf(what, sizeof(what), "%s.%s", path, o->name);
		if (uv != NULL) {
			lcp_opt_set(o, uv, conf, what, errs);
			continue;
		}
		if (o->flags & LCP_OPT_F_REQUIRED) {
			lcp_errs_add(errs, "%s: required option missing", what);
			continue;
		}
		if (o->def != NULL)
			set_default(o, conf, path, errs, keep);
	}
	return errs->n - before;
}

void
lcp_opt_paths(const struct lcp_opt *tbl, void *conf, const char *base, json_t *keep)
{
	if (base == NULL)
		return; /* the embedded config: the working directory */
	for (const struct lcp_opt *o = tbl; o && o->name; o++) {
		const char **field = (const char **)((char *)conf + o->offset);
		json_t *abs;
		char *p;

		if (o->type != LCP_OPT_STRING || !(o->flags & LCP_OPT_F_PATH) || *field == NULL || (*field)[0] == '\0' ||
		    (*field)[0] == '/')
			continue;
		if (asprintf(&p, "%s/%s", base, *field) < 0)
			continue;
		abs = json_string(p);
		free(p);
		if (abs == NULL)
			continue;
		json_array_append_new(keep, abs);
		*field = json_string_value(abs);
	}
}

int
lcp_opt_table_check(const struct lcp_opt *tbl, size_t conf_size, char *msg, size_t len)
{
	unsigned i = 0;

	for (const struct lcp_opt *o = tbl; o && o->name; o++, i++) {
		size_t want = 0;

		switch (o->type) {
		case LCP_OPT_BOOL: want = sizeof(bool); break;
		case LCP_OPT_INT:
		case LCP_OPT_UINT:
			want = (o->size == 1 || o->size == 2 || o->size == 4 || o->size == 8) ? o->size : 0;
			break;
		case LCP_OPT_DOUBLE: want = sizeof(double); break;
		case LCP_OPT_STRING: want = sizeof(const char *); break;
		case LCP_OPT_ENUM: want = sizeof(int); break;
		default:
			snprintf(msg, len, "option table row %u (\"%s\"): unknown type %u", i, o->name, o->type);
			return -1;
		}
		if (o->size != want) {
			snprintf(msg, len, "option table row %u (\"%s\"): field size %zu does not fit type %s",
				 i, o->name, o->size, lcp_opt_type_name(o->type));
			return -1;
		}
		if (o->offset + o->size > conf_size) {
			snprintf(msg, len, "option table row %u (\"%s\"): offset %zu + size %zu is beyond conf_size %zu",
				 i, o->name, o->offset, o->size, conf_size);
			return -1;
		}
		if (o->type == LCP_OPT_ENUM && (o->choices == NULL || o->choices[0] == NULL)) {
			snprintf(msg, len, "option table row %u (\"%s\"): enum without choices", i, o->name);
			return -1;
		}
		if (!(o->flags & LCP_OPT_F_REQUIRED) && o->def == NULL && o->type != LCP_OPT_STRING) {
			snprintf(msg, len, "option table row %u (\"%s\"): neither required nor a default", i, o->name);
			return -1;
		}
		if ((o->type == LCP_OPT_INT || o->type == LCP_OPT_UINT) && o->min > o->max) {
			snprintf(msg, len, "option table row %u (\"%s\"): min %lld > max %lld", i,
				 o->name, (long long)o->min, (long long)o->max);
			return -1;
		}
		if (o->type == LCP_OPT_INT || o->type == LCP_OPT_UINT) {
			unsigned bits = (unsigned)o->size * 8;
			int64_t lo, hi;

			if (o->type == LCP_OPT_INT) {
				lo = bits == 64 ? INT64_MIN : -((int64_t)1 << (bits - 1));
				hi = bits == 64 ? INT64_MAX : ((int64_t)1 << (bits - 1)) - 1;
			} else {
				lo = 0;
				hi = bits == 64 ? INT64_MAX : (int64_t)(((uint64_t)1 << bits) - 1);
			}
			if (o->min < lo || o->max > hi) {
				snprintf(msg, len, "option table row %u (\"%s\"): range %lld..%lld does not fit %s %u-bit field (%lld..%lld)",
					 i, o->name, (long long)o->min, (long long)o->max,
					 o->type == LCP_OPT_INT ? "a signed" : "an unsigned", bits,
					 (long long)lo, (long long)hi);
				return -1;
			}
		}
		if (o->type == LCP_OPT_DOUBLE && !(o->dmin <= o->dmax)) {
			snprintf(msg, len, "option table row %u (\"%s\"): min %g > max %g", i, o->name,
				 o->dmin, o->dmax);
			return -1;
		}
		if ((o->flags & LCP_OPT_F_POW2) && o->type != LCP_OPT_INT && o->type != LCP_OPT_UINT) {
			snprintf(msg, len, "option table row %u (\"%s\"): LCP_OPT_F_POW2 on a %s option", i,
				 o->name, lcp_opt_type_name(o->type));
			return -1;
		}
		if ((o->flags & LCP_OPT_F_POW2) && !pow2_within(o->min, o->max)) {
			snprintf(msg, len, "option table row %u (\"%s\"): LCP_OPT_F_POW2 with no power of two in %lld..%lld",
				 i, o->name, (long long)o->min, (long long)o->max);
			return -1;
		}
		for (const struct lcp_opt *q = tbl; q != o; q++) {
			if (strcmp(q->name, o->name) == 0) {
				snprintf(msg, len, "option table row %u (\"%s\"): name already used by an earlier row",
					 i, o->name);
				return -1;
			}
		}
		/* the default must pass the same checks as a user's value */
		if (o->def != NULL) {
			struct lcp_errs errs = { 0 };
			json_error_t je;
			json_t *dv = json_loads(o->def, JSON_DECODE_ANY, &je);
			char *scratch = calloc(1, conf_size + 1);
			int bad;

			if (dv == NULL) {
				snprintf(msg, len, "option table row %u (\"%s\"): default '%s' is not valid JSON",
					 i, o->name, o->def);
				free(scratch);
				return -1;
			}
			bad = lcp_opt_set(o, dv, scratch, "default", &errs);
			if (bad)
				snprintf(msg, len, "option table row %u (\"%s\"): %s", i, o->name, errs.v[0]);
			lcp_errs_free(&errs);
			json_decref(dv);
			free(scratch);
			if (bad)
				return -1;
		}
	}
	return 0;
}
