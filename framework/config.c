/* SPDX-License-Identifier: BSD-3-Clause
 * config.c — JSON config to model, reporting every error with its JSON path.
 *
 * lcp_cfg_load(): parse (line:column on syntax errors) -> top-level keys ->
 * eal, plugin_path -> registry -> engine options -> strategies -> stages (plugin,
 * kind, options, validate hook) -> links and graph (graph.c).
 */
#include <ctype.h>
#include <errno.h>
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lcp_priv.h"

/* The main job when `lcpipe run` gets no config (the same as conf/default.json
 * and conf/demo.json): an exchange simulator and a WebSocket client, each on its
 * own lcpipe TCP/IP stack, joined by an in-process net_ring pair, with metrics
 * (messages/s, MB/s, latency percentiles, sequence gaps). No root, no NIC, no
 * hugepages, a few seconds. */
const char lcp_default_config[] =
	"{\n"
	"  \"name\": \"demo: exchange simulator -> WebSocket over lcpipe's own TCP/IP -> metrics\",\n"
	"  \"eal\": [\"--no-huge\", \"--no-pci\", \"--no-shconf\", \"-m\", \"512\", \"-l\", \"0,1\",\n"
	"          \"--file-prefix=lcpipe-demo\"],\n"
	"  \"engine\": {\"duration\": 5, \"drain_timeout\": 1.0},\n"
	"  \"stages\": [\n"
	"    {\"name\": \"exch_port\", \"plugin\": \"port_ethdev\", \"lcore\": 1,\n"
	"     \"options\": {\"ring_pair\": \"demo\", \"ring_side\": 0}},\n"
	"    {\"name\": \"exch_tcp\", \"plugin\": \"tcp\", \"lcore\": 1,\n"
	"     \"options\": {\"ip\": \"10.99.0.1/24\", \"mac\": \"02:00:00:00:99:01\", \"sndbuf\": 8388608}},\n"
	"    {\"name\": \"exchange\", \"plugin\": \"feedsim\", \"lcore\": 1,\n"
	"     \"options\": {\"listen\": 8080, \"symbols\": 100, \"sizes\": \"96:70,256:25,1024:5\",\n"
	"                 \"fragment_every\": 100, \"ping_interval_ms\": 500, \"send_mbufs\": 4096}},\n"
	"    {\"name\": \"port\", \"plugin\": \"port_ethdev\", \"lcore\": 1,\n"
	"     \"options\": {\"ring_pair\": \"demo\", \"ring_side\": 1}},\n"
	"    {\"name\": \"tcp\", \"plugin\": \"tcp\", \"lcore\": 1,\n"
	"     \"options\": {\"ip\": \"10.99.0.2/24\", \"mac\": \"02:00:00:00:99:02\"}},\n"
	"    {\"name\": \"feed\", \"plugin\": \"ws\", \"lcore\": 1,\n"
	"     \"options\": {\"url\": \"ws://10.99.0.1:8080/marketdata\",\n"
	"                 \"subscribe\": \"{\\\"op\\\":\\\"subscribe\\\",\\\"channel\\\":\\\"ticks\\\"}\",\n"
	"                 \"ping_interval_ms\": 1000}},\n"
	"    {\"name\": \"stats\", \"plugin\": \"metrics\", \"lcore\": 1, \"options\": {\"log_buckets\": false}},\n"
	"    {\"name\": \"sink\", \"plugin\": \"sink_null\", \"lcore\": 1}\n"
	"  ],\n"
	"  \"links\": [\"exch_port.rx -> exch_tcp.rx\", \"exch_tcp.tx -> exch_port.tx\",\n"
	"            \"exch_tcp.data -> exchange.in\", \"exchange.tx -> exch_tcp.app\",\n"
	"            \"port.rx -> tcp.rx\", \"tcp.tx -> port.tx\",\n"
	"            \"tcp.data -> feed.in\", \"feed.tx -> tcp.app\",\n"
	"            \"feed.msg -> stats.in\", \"stats.out -> sink.msg\"]\n"
	"}\n";

static const char *const lcp_live_choices[] = { "auto", "on", "off", NULL };
const char *const lcp_on_full_choices[] = { "drop", "block", NULL };
const char *const lcp_on_full_names[] = { "drop", "block", "hold", NULL };

const struct lcp_opt lcp_engine_opts[] = {
	LCP_OPT_UINT(struct lcp_engine_conf, ring_size, "ring_size", "1024", 2, 1 << 24, LCP_OPT_F_POW2,
		     "default size of the ring on a link between lcores"),
	LCP_OPT_UINT(struct lcp_engine_conf, burst, "burst", "32", 1, 1024, 0,
		     "default number of objects dequeued from a ring at once"),
	LCP_OPT_UINT(struct lcp_engine_conf, mbufs, "mbufs", "8191", 63, 1 << 24, 0,
		     "packet mbufs in the engine's pool, per socket in use"),
	LCP_OPT_UINT(struct lcp_engine_conf, mbuf_cache, "mbuf_cache", "256", 0, 512, 0,
		     "per-lcore cache of the mbuf pool"),
	LCP_OPT_UINT(struct lcp_engine_conf, mbuf_data_room, "mbuf_data_room", "2176", 256, 65535, 0,
		     "data room of each mbuf in bytes, headroom included"),
	LCP_OPT_DOUBLE(struct lcp_engine_conf, stats_interval, "stats_interval", "1.0", 0.1, 3600, 0,
		       "seconds between stats lines when stdout is not a terminal"),
	LCP_OPT_DOUBLE(struct lcp_engine_conf, duration, "duration", "0", 0, 1e9, 0,
		       "run for this many seconds, then shut down cleanly; 0 = until SIGINT/SIGTERM"),
	LCP_OPT_DOUBLE(struct lcp_engine_conf, drain_timeout, "drain_timeout", "2.0", 0.01, 600, 0,
		       "seconds to wait for in-flight objects to drain at shutdown"),
	LCP_OPT_DOUBLE(struct lcp_engine_conf, linger, "linger", "1.5", 0, 600, 0,
		       "seconds the whole pipeline keeps running at shutdown, before any stage's stop(), while stages close their connections (WebSocket close handshakes, TCP FINs); 0 = do not wait"),
	LCP_OPT_DOUBLE(struct lcp_engine_conf, stop_timeout, "stop_timeout", "0", 0, 3600, 0,
		       "hard limit of the whole shutdown in seconds: a stage still running past it (stuck in its poll or process) is named, the report written and lcpipe exits 4 without it; a second SIGINT/SIGTERM cuts the shutdown short the same way; 0 = linger + 2 x drain_timeout + 3"),
	LCP_OPT_ENUM(struct lcp_engine_conf, live, "live", "\"auto\"", lcp_live_choices, 0,
		     "live one-line stats: auto (on a terminal), on, off"),
	LCP_OPT_BOOL(struct lcp_engine_conf, stage_timing, "stage_timing", "false",
		     "time every process/poll call: each stage's own cycles per object and a per-call histogram (costs two TSC reads per call)"),
	LCP_OPT_ENUM(struct lcp_engine_conf, on_ring_full, "on_ring_full", "\"drop\"", lcp_on_full_choices, 0,
		     "a link between lcores whose ring is full: drop what does not fit (<port>.drop_ring_full) or block the producing lcore until there is room (backpressure); a link's own on_full wins"),
	LCP_OPT_UINT(struct lcp_engine_conf, block_timeout_us, "block_timeout_us", "0", 0, 60000000, 0,
		     "on_full \"block\": give up after this many microseconds of waiting and drop the rest (counted); 0 = wait until the engine stops"),
	LCP_OPT_STRING(struct lcp_engine_conf, metrics_listen, "metrics_listen", "\"\"", 0, 63, 0,
		       "serve Prometheus / OpenMetrics text at http://ADDRESS:PORT/metrics (e.g. \"127.0.0.1:9464\", \"[::1]:9464\"), from the control thread, while the pipeline runs; it listens on that address only; \"\" = off"),
	LCP_OPT_END,
};

/* a link object (read by graph.c's load_link): "from" and "to" (checked there,
 * with a message of their own), "batch" (a strategy reference, not an option)
 * and these; without a value of their own ring_size, burst, on_full and
 * block_timeout_us take the engine's (no default here) */
const struct lcp_opt lcp_link_opts[] = {
	LCP_OPT_STRING(struct lcp_link_conf, from, "from", NULL, 0, 0, LCP_OPT_F_REQUIRED,
		       "the producing end, \"stage.port\" (an output port)"),
	LCP_OPT_STRING(struct lcp_link_conf, to, "to", NULL, 0, 0, LCP_OPT_F_REQUIRED,
		       "the consuming end, \"stage.port\" (an input port of the same unit)"),
	LCP_OPT_UINT(struct lcp_link_conf, ring_size, "ring_size", NULL, 2, 1 << 24, LCP_OPT_F_POW2,
		     "size of the ring when the link is between lcores; unset = engine.ring_size"),
	LCP_OPT_UINT(struct lcp_link_conf, burst, "burst", NULL, 1, 1024, 0,
		     "objects dequeued from the ring at once; on a link within one lcore, the most objects the worker's walk hands the consumer per call, the rest after the stages downstream ran, overriding the port's own (e.g. 8 on ws.in); unset = engine.burst"),
	LCP_OPT_ENUM(struct lcp_link_conf, on_full, "on_full", NULL, lcp_on_full_choices, 0,
		     "a full ring: drop or block, as engine.on_ring_full (unset = that); a stream link between lcores never drops: it holds when its producer keeps what the ring refuses, as tcp.data does, and blocks with no time limit otherwise"),
	LCP_OPT_UINT(struct lcp_link_conf, block_timeout_us, "block_timeout_us", NULL, 0, 60000000, 0,
		     "on_full \"block\": give up after this many microseconds and drop the rest (counted); 0 = wait until the engine stops; unset = engine.block_timeout_us; not on a stream link between lcores"),
	LCP_OPT_END,
};

static const char *const lcp_top_keys[] = {
	"$schema", "name", "eal", "plugin_path", "engine", "strategies", "stages", "links", "include", NULL,
};
/* a stage object (load_stage): these and lcp_stage_objs */
const struct lcp_opt lcp_stage_opts[] = {
	LCP_OPT_STRING(struct lcp_stage_keys, name, "name", NULL, 1, LCP_NAME_MAX - 1, LCP_OPT_F_REQUIRED,
		       "the stage's name, unique in the config, of the characters A-Z a-z 0-9 _ -: its ports are \"name.port\" in links, its counters and messages carry it"),
	LCP_OPT_STRING(struct lcp_stage_keys, plugin, "plugin", NULL, 1, 0, 0,
		       "the stage plugin it runs (`lcpipe list-plugins` lists them); required, but in a config that includes others, where a stage of an included stage's name changes that stage"),
	LCP_OPT_UINT(struct lcp_stage_keys, lcore, "lcore", "1", 0, LCP_MAX_LCORES - 1, 0,
		     "the worker lcore it is pinned to, one of the EAL's (`eal`: -l), not the main lcore, which runs the control loop; the stages of one lcore share its worker loop"),
	LCP_OPT_STRING(struct lcp_stage_keys, comment, "comment", NULL, 0, 0, 0, "free text, not read"),
	LCP_OPT_END,
};
const char *const lcp_stage_objs[] = { "options", "strategies", NULL };
static const char *const lcp_strategy_kinds[] = { "counters", "pool", "batch", NULL };

static void
check_keys(json_t *obj, const char *const *allowed, const char *path, const char *what,
	   struct lcp_errs *errs)
{
	const char *key;
	json_t *v;

	json_object_foreach(obj, key, v)
		if (!lcp_str_in(allowed, key))
			lcp_opt_refuse_key(NULL, allowed, what, path, key, errs);
}

static char **
string_array(json_t *a, const char *path, unsigned *n, struct lcp_errs *errs)
{
	char **v;
	size_t i;
	json_t *e;

	*n = 0;
	if (!json_is_array(a)) {
		lcp_errs_add(errs, "%s: expected an array of strings", path);
		return NULL;
	}
	v = calloc(json_array_size(a) + 1, sizeof(*v));
	json_array_foreach(a, i, e) {
		if (!json_is_string(e)) {
			lcp_errs_add(errs, "%s[%zu]: expected a string", path, i);
			continue;
		}
		v[(*n)++] = strdup(json_string_value(e));
	}
	return v;
}

/* The accepted plugin called `name`, of `kind`, or NULL after an error at `path`:
 * refused by the loader (its reason), unknown (listing what was found), or of
 * another kind. `what` prefixes the quoted name in two of the messages. */
static struct lcp_plugin_file *
find_plugin(struct lcp_cfg *c, const char *path, const char *what, const char *name,
	    uint32_t kind, struct lcp_errs *errs)
{
	const struct lcp_plugin_file *refused;
	struct lcp_plugin_file *pf = lcp_registry_get(&c->reg, name, &refused);

	if (pf == NULL) {
		struct lcp_sbuf b = { 0 };

		if (refused) {
			lcp_errs_add(errs, "%s: %s\"%s\": %s", path, what, name, refused->refused);
		} else {
			struct lcp_suggest sg;

			lcp_suggest_init(&sg, name);
			lcp_registry_suggest(&c->reg, &sg);
			lcp_registry_names(&c->reg, &b);
			lcp_errs_add(errs, "%s: unknown plugin \"%s\"%s; plugins found: %s", path, name,
				     lcp_suggest_hint(&sg), b.s);
		}
		lcp_sbuf_free(&b);
		return NULL;
	}
	if (pf->kind != kind) {
		lcp_errs_add(errs, "%s: %s\"%s\" is a %s plugin, expected a %s plugin (%s)", path, what,
			     name, lcp_plugin_kind_name(pf->kind), lcp_plugin_kind_name(kind), pf->path);
		return NULL;
	}
	return pf;
}

/* "counters": "name" or {"plugin": "name", "options": {...}} */
void
lcp_strategy_ref_load(struct lcp_cfg *c, json_t *v, const char *path, struct lcp_strategy_ref *ref,
		      uint32_t kind, struct lcp_errs *errs)
{
	static const char *const keys[] = { "plugin", "options", NULL };
	char p[256];
	json_t *ps;

	memset(ref, 0, sizeof(*ref));
	if (json_is_string(v)) {
		ref->plugin = json_string_value(v);
	} else if (json_is_object(v)) {
		json_t *pl = json_object_get(v, "plugin");

		check_keys(v, keys, path, "key", errs);
		if (!json_is_string(pl)) {
			lcp_errs_add(errs, "%s.plugin: required, a plugin name", path);
			return;
		}
		ref->plugin = json_string_value(pl);
		ref->options = json_object_get(v, "options");
	} else {
		lcp_errs_add(errs, "%s: expected a plugin name or {\"plugin\": ..., \"options\": ...}", path);
		return;
	}
	ps = json_string(path);
	json_array_append_new(c->keep, ps);
	ref->path = json_string_value(ps);
	ref->pf = find_plugin(c, path, "plugin ", ref->plugin, kind, errs);
	if (ref->pf == NULL)
		return;
	ref->conf = calloc(1, ref->pf->desc->conf_size + 1);
	c->confs = realloc(c->confs, (c->n_confs + 1) * sizeof(*c->confs));
	c->confs[c->n_confs++] = ref->conf;
	snprintf(p, sizeof(p), "%s.options", path);
	lcp_opt_apply(ref->pf->desc->options, ref->pf->desc->conf_size, ref->options, ref->conf, p,
		      errs, c->keep);
	lcp_opt_paths(ref->pf->desc->options, ref->conf, c->dir, c->keep);
}

static const uint32_t lcp_strategy_kind_ids[] = { LCP_KIND_COUNTERS, LCP_KIND_POOL, LCP_KIND_BATCH };

static struct lcp_strategy_ref *
strategy_slot(struct lcp_strategies *s, unsigned k)
{
	return k == 0 ? &s->counters : k == 1 ? &s->pool : &s->batch;
}

/* the kinds present in obj override those in out */
static void
load_strategies(struct lcp_cfg *c, json_t *obj, const char *path, struct lcp_strategies *out,
		struct lcp_errs *errs)
{
	char p[256];

	if (!json_is_object(obj)) {
		lcp_errs_add(errs, "%s: expected an object", path);
		return;
	}
	check_keys(obj, lcp_strategy_kinds, path, "strategy kind", errs);
	for (unsigned k = 0; lcp_strategy_kinds[k]; k++) {
		json_t *v = json_object_get(obj, lcp_strategy_kinds[k]);

		if (v == NULL)
			continue;
		snprintf(p, sizeof(p), "%s.%s", path, lcp_strategy_kinds[k]);
		lcp_strategy_ref_load(c, v, p, strategy_slot(out, k), lcp_strategy_kind_ids[k], errs);
	}
}

/* the stage whose validate op runs (lcp_check_mbufs); the control thread's */
static _Thread_local struct {
	const struct lcp_cfg *c;
	struct lcp_cfg_stage *st;
} lcp_validating;

uint32_t
lcp_check_mbuf_room(void)
{
	return lcp_validating.st != NULL ? lcp_mbuf_room(lcp_validating.c) : 0;
}

void
lcp_check_mbufs(const struct lcp_mbuf_hold *h)
{
	struct lcp_cfg_stage *st = lcp_validating.st;

	if (st == NULL || h == NULL)
		return;
	st->mbufs = *h;
	st->mbufs.opt[sizeof(st->mbufs.opt) - 1] = '\0';
	st->mbufs.what[sizeof(st->mbufs.what) - 1] = '\0';
	st->has_mbufs = true;
}

/* the characters of a stage name (its length is lcp_stage_opts') */
static bool
stage_name_ok(const char *n)
{
	for (; *n; n++)
		if (!((*n >= 'a' && *n <= 'z') || (*n >= 'A' && *n <= 'Z') ||
		      (*n >= '0' && *n <= '9') || *n == '_' || *n == '-'))
			return false;
	return true;
}

static void
load_stage(struct lcp_cfg *c, unsigned i, json_t *s, struct lcp_errs *errs)
{
	struct lcp_cfg_stage *st = &c->stages[i];
	struct lcp_stage_keys keys = { 0 };
	json_t *strat;
	char path[64], p[128];

	snprintf(path, sizeof(path), "stages[%u]", i);
	if (!json_is_object(s)) {
		lcp_errs_add(errs, "%s: expected an object", path);
		return;
	}
	lcp_opt_set_keys(lcp_stage_opts, lcp_stage_objs, s, &keys, path, errs, c->keep);
	if (json_object_get(s, "name") == NULL) {
		lcp_errs_add(errs, "%s.name: required, a string", path);
	} else if (keys.name == NULL) {
		/* refused by the walker: not a string, or its length */
	} else if (!stage_name_ok(keys.name)) {
		lcp_errs_add(errs, "%s.name: \"%s\" is not a valid stage name: 1 to %d characters of [A-Za-z0-9_-]",
			     path, keys.name, LCP_NAME_MAX - 1);
	} else {
		snprintf(st->name, sizeof(st->name), "%s", keys.name);
		for (unsigned j = 0; j < i; j++) {
			if (strcmp(c->stages[j].name, st->name) == 0) {
				lcp_errs_add(errs, "%s.name: duplicate stage name \"%s\" (also stages[%u])",
					     path, st->name, j);
				break;
			}
		}
	}
	st->lcore = keys.lcore;
	st->options = json_object_get(s, "options");
	st->strat = c->strat;
	strat = json_object_get(s, "strategies");
	if (strat != NULL) {
		snprintf(p, sizeof(p), "%s.strategies", path);
		load_strategies(c, strat, p, &st->strat, errs);
	}
	if (json_object_get(s, "plugin") == NULL)
		lcp_errs_add(errs, "%s.plugin: required, a plugin name", path);
	if (keys.plugin == NULL)
		return;
	st->plugin = keys.plugin;
	snprintf(p, sizeof(p), "%s.plugin", path);
	st->pf = find_plugin(c, p, "", st->plugin, LCP_KIND_STAGE, errs);
	if (st->pf == NULL)
		return;
	{
		const struct lcp_plugin *d = st->pf->desc;
		const struct lcp_stage_ops *ops = d->ops;
		unsigned before = errs->n;

		st->conf = calloc(1, d->conf_size + 1);
		snprintf(p, sizeof(p), "%s.options", path);
		lcp_opt_apply(d->options, d->conf_size, st->options, st->conf, p, errs, c->keep);
		lcp_opt_paths(d->options, st->conf, c->dir, c->keep);
		if (errs->n == before && ops->validate != NULL) {
			char msg[512] = "";
			int rc;

			lcp_validating.c = c;
			lcp_validating.st = st;
			rc = ops->validate(st->conf, msg, sizeof(msg));
			lcp_validating.st = NULL;
			if (rc != 0) {
				lcp_errs_add(errs, "%s: %s", p, msg[0] ? msg : "invalid (no reason given)");
				st->has_mbufs = false;
			}
		}
		for (const struct lcp_port_def *pd = ops->ports; pd->name; pd++)
			st->n_ports++;
		st->links_in = calloc(st->n_ports + 1, sizeof(*st->links_in));
		st->link_out = malloc((st->n_ports + 1) * sizeof(*st->link_out));
		for (unsigned k = 0; k <= st->n_ports; k++)
			st->link_out[k] = -1;
	}
}

static char *
read_all(FILE *f, size_t *len)
{
	char *buf = NULL;
	size_t cap = 0, n = 0, r;

	do {
		if (cap - n < 4096) {
			cap = cap ? cap * 2 : 8192;
			buf = realloc(buf, cap);
		}
		r = fread(buf + n, 1, cap - n, f);
		n += r;
	} while (r > 0);
	*len = n;
	return buf;
}

/* ---- includes and ${VAR} ----
 * "include": "FILE" or ["FILE", ...] at the top level: each FILE (relative to
 * the including file's directory) is loaded with the same rules, its own
 * includes first, and merged in order; then the including file's keys on top.
 * Merging: objects key by key (the later one wins); at the top level
 * "stages" concatenate, a stage whose name is already there merging into it
 * (so a config can include a base pipeline and change one stage's options),
 * and "links" concatenate without repeating an identical one; any other
 * value is replaced. At most LCP_INCLUDE_DEPTH levels; a cycle is refused. */
#define LCP_INCLUDE_DEPTH 8

static void
merge_into(json_t *dst, json_t *src, bool top)
{
	const char *k;
	json_t *sv;

	json_object_foreach(src, k, sv) {
		json_t *dv = json_object_get(dst, k);

		if (dv != NULL && json_is_object(dv) && json_is_object(sv)) {
			merge_into(dv, sv, false);
		} else if (top && dv != NULL && json_is_array(dv) && json_is_array(sv) && strcmp(k, "stages") == 0) {
			size_t i, j;
			json_t *s, *d;

			json_array_foreach(sv, i, s) {
				const char *n = json_string_value(json_object_get(s, "name"));
				bool merged = false;

				json_array_foreach(dv, j, d) {
					const char *m = json_string_value(json_object_get(d, "name"));

					if (n != NULL && m != NULL && strcmp(n, m) == 0 && json_is_object(d) && json_is_object(s)) {
						merge_into(d, s, false);
						merged = true;
						break;
					}
				}
				if (!merged)
					json_array_append(dv, s);
			}
		} else if (top && dv != NULL && json_is_array(dv) && json_is_array(sv) && strcmp(k, "links") == 0) {
			size_t i, j;
			json_t *s, *d;

			json_array_foreach(sv, i, s) {
				bool seen = false;

				json_array_foreach(dv, j, d)
					seen |= json_equal(d, s);
				if (!seen)
					json_array_append(dv, s);
			}
		} else {
			json_object_set(dst, k, sv);
		}
	}
}

/* root after its includes are merged in (a new reference), or NULL after an
 * error; chain: the files being included, for the cycle check */
static json_t *
resolve_includes(json_t *root, const char *path, const char *dir, const char **chain, unsigned depth,
		 struct lcp_errs *errs)
{
	json_t *inc = json_object_get(root, "include"), *out, *one;
	size_t i;

	if (inc == NULL)
		return json_incref(root);
	if (json_is_string(inc)) {
		one = json_array();
		json_array_append(one, inc);
	} else if (json_is_array(inc)) {
		one = json_incref(inc);
	} else {
		lcp_errs_add(errs, "%s: include: expected a file name or an array of them", path);
		return NULL;
	}
	out = json_object();
	json_array_foreach(one, i, inc) {
		const char *f = json_string_value(inc);
		char *p = NULL, *d, *text;
		FILE *fp;
		size_t len;
		json_error_t je;
		json_t *sub, *res;
		bool cycle = false;
		char *rp;

		if (f == NULL || f[0] == '\0') {
			lcp_errs_add(errs, "%s: include[%zu]: expected a file name", path, i);
			continue;
		}
		if (asprintf(&p, "%s/%s", dir, f) < 0)
			continue;
		if (f[0] == '/') {
			free(p);
			p = strdup(f);
		}
		rp = realpath(p, NULL); /* the same file however it is named: for the cycle check */
		for (int k = -1; rp != NULL && k < (int)depth; k++)
			cycle |= strcmp(chain[k], rp) == 0; /* chain[-1]: the top file */
		if (cycle || depth >= LCP_INCLUDE_DEPTH) {
			lcp_errs_add(errs, "%s: include[%zu]: \"%s\": %s", path, i, f,
				     cycle ? "includes a file that includes it (a cycle)" : "more than 8 levels of includes");
			free(rp);
			free(p);
			continue;
		}
		if ((fp = fopen(p, "r")) == NULL) {
			lcp_errs_add(errs, "%s: include[%zu]: cannot open %s: %s", path, i, p, strerror(errno));
			free(rp);
			free(p);
			continue;
		}
		text = read_all(fp, &len);
		fclose(fp);
		sub = json_loadb(text, len, JSON_REJECT_DUPLICATES, &je);
		free(text);
		if (sub == NULL || !json_is_object(sub)) {
			if (sub == NULL)
				lcp_errs_add(errs, "%s:%d:%d: JSON syntax error: %s (included by %s)", p, je.line,
					     je.column, je.text, path);
			else
				lcp_errs_add(errs, "%s: an included config must be a JSON object (included by %s)", p,
					     path);
			json_decref(sub);
			free(rp);
			free(p);
			continue;
		}
		chain[depth] = rp != NULL ? rp : p;
		d = strdup(p);
		res = resolve_includes(sub, p, dirname(d), chain, depth + 1, errs);
		free(d);
		json_decref(sub);
		if (res != NULL) {
			merge_into(out, res, true);
			json_decref(res);
		}
		free(rp);
		free(p);
	}
	json_decref(one);
	merge_into(out, root, true);
	json_object_del(out, "include");
	return out;
}

/* ${NAME} and ${NAME:-default} in every string value, from the environment;
 * "$${" stands for a literal "${". An unset NAME without a default is an error
 * naming the JSON path. */
static void
subst_env(json_t *v, const char *path, struct lcp_errs *errs)
{
	if (json_is_object(v)) {
		const char *k;
		json_t *x;

		json_object_foreach(v, k, x) {
			char *p = NULL;

			if (asprintf(&p, "%s%s%s", path, path[0] ? "." : "", k) >= 0) {
				subst_env(x, p, errs);
				free(p);
			}
		}
	} else if (json_is_array(v)) {
		size_t i;
		json_t *x;

		json_array_foreach(v, i, x) {
			char *p = NULL;

			if (asprintf(&p, "%s[%zu]", path, i) >= 0) {
				subst_env(x, p, errs);
				free(p);
			}
		}
	} else if (json_is_string(v) && strchr(json_string_value(v), '$') != NULL) {
		const char *s = json_string_value(v);
		struct lcp_sbuf b = { 0 };
		bool bad = false;

		while (*s) {
			if (s[0] == '$' && s[1] == '$' && s[2] == '{') {
				lcp_sbuf_addf(&b, "${");
				s += 3;
			} else if (s[0] == '$' && s[1] == '{') {
				const char *e = strchr(s + 2, '}'), *dflt = NULL;
				size_t nlen;
				char name[128];
				const char *val;

				if (e == NULL) {
					lcp_errs_add(errs, "%s: \"${\" without its closing \"}\" (write \"$${\" for a literal \"${\")",
						     path);
					bad = true;
					break;
				}
				nlen = (size_t)(e - s - 2);
				for (size_t k = 0; k + 1 < nlen; k++)
					if (s[2 + k] == ':' && s[3 + k] == '-') {
						dflt = s + 4 + k;
						nlen = k;
						break;
					}
				if (nlen == 0 || nlen >= sizeof(name)) {
					lcp_errs_add(errs, "%s: \"%.*s\": expected ${NAME} or ${NAME:-default}", path,
						     (int)(e - s + 1), s);
					bad = true;
					break;
				}
				memcpy(name, s + 2, nlen);
				name[nlen] = '\0';
				for (size_t k = 0; k < nlen; k++)
					if (!(isalnum((unsigned char)name[k]) || name[k] == '_') || isdigit((unsigned char)name[0])) {
						lcp_errs_add(errs, "%s: ${%s}: a variable name is [A-Za-z_][A-Za-z0-9_]*", path, name);
						bad = true;
						break;
					}
				if (bad)
					break;
				val = getenv(name);
				if (val != NULL)
					lcp_sbuf_addf(&b, "%s", val);
				else if (dflt != NULL)
					lcp_sbuf_addf(&b, "%.*s", (int)(e - dflt), dflt);
				else {
					lcp_errs_add(errs, "%s: ${%s} is not set in the environment (give a default: ${%s:-VALUE})",
						     path, name, name);
					bad = true;
					break;
				}
				s = e + 1;
			} else {
				lcp_sbuf_addf(&b, "%c", *s++);
			}
		}
		if (!bad)
			json_string_set(v, b.s ? b.s : "");
		free(b.s);
	}
}

struct lcp_cfg *
lcp_cfg_load(const char *path, char *const *eal_override, unsigned n_override, struct lcp_errs *errs)
{
	struct lcp_cfg *c;
	json_error_t je;
	json_t *v, *arr;
	size_t i;

	c = calloc(1, sizeof(*c));
	c->keep = json_array();
	if (path == NULL) {
		c->path = strdup("(default config)");
		c->dir = strdup(".");
		c->root = json_loads(lcp_default_config, JSON_REJECT_DUPLICATES, &je);
	} else {
		FILE *f = strcmp(path, "-") == 0 ? stdin : fopen(path, "r");
		char *text, *d;
		size_t len;

		if (f == NULL) {
			lcp_errs_add(errs, "%s: cannot open: %s", path, strerror(errno));
			lcp_cfg_free(c);
			return NULL;
		}
		text = read_all(f, &len);
		if (f != stdin)
			fclose(f);
		c->path = strdup(path);
		d = strdup(path);
		c->dir = strdup(dirname(d));
		free(d);
		c->root = json_loadb(text, len, JSON_REJECT_DUPLICATES, &je);
		free(text);
	}
	if (c->root == NULL) {
		lcp_errs_add(errs, "%s:%d:%d: JSON syntax error: %s", c->path, je.line, je.column, je.text);
		lcp_cfg_free(c);
		return NULL;
	}
	if (!json_is_object(c->root)) {
		lcp_errs_add(errs, "%s: the config must be a JSON object", c->path);
		lcp_cfg_free(c);
		return NULL;
	}
	{
		const char *chain[LCP_INCLUDE_DEPTH + 1];
		char *abs = realpath(c->path, NULL);
		unsigned ne = errs->n;
		json_t *merged;

		chain[0] = abs != NULL ? abs : c->path;
		merged = resolve_includes(c->root, c->path, c->dir, chain + 1, 0, errs);
		free(abs);
		if (merged == NULL || errs->n > ne) {
			json_decref(merged);
			lcp_cfg_free(c);
			return NULL;
		}
		json_decref(c->root);
		c->root = merged;
		subst_env(c->root, "", errs);
		if (errs->n > ne) {
			lcp_cfg_free(c);
			return NULL;
		}
	}
	check_keys(c->root, lcp_top_keys, "", "top-level key", errs);
	v = json_object_get(c->root, "name");
	if (v != NULL && !json_is_string(v))
		lcp_errs_add(errs, "name: expected a string");
	c->name = strdup(json_is_string(v) ? json_string_value(v) : c->path);

	/* EAL arguments: the config's, or the command line's after "--" */
	if (n_override > 0) {
		c->eal = calloc(n_override + 1, sizeof(*c->eal));
		for (unsigned k = 0; k < n_override; k++)
			c->eal[k] = strdup(eal_override[k]);
		c->n_eal = n_override;
	} else if ((v = json_object_get(c->root, "eal")) != NULL) {
		c->eal = string_array(v, "eal", &c->n_eal, errs);
	}
	lcp_eal_lcores(c->eal, c->n_eal, c->lcore_avail, &c->main_lcore);
	{
		unsigned n_set = 0;

		for (unsigned k = 0; k < c->n_eal; k++) {
			const char *a = c->eal[k];

			if (strncmp(a, "--lcores", 8) == 0 ||
			    (a[0] == '-' && (a[1] == 'l' || a[1] == 'c') && (a[2] == '\0' || isdigit((unsigned char)a[2]))))
				n_set++;
		}
		if (n_set > 1)
			lcp_errs_add(errs, "%s: the lcore set is given %u times (-l, -c, --lcores); EAL refuses more than one",
				     n_override ? "EAL arguments after --" : "eal", n_set);
	}

	if ((v = json_object_get(c->root, "plugin_path")) != NULL) {
		c->plugin_path = string_array(v, "plugin_path", &c->n_plugin_path, errs);
		for (unsigned k = 0; k < c->n_plugin_path; k++) {
			if (c->plugin_path[k][0] != '/') {
				char *abs;

				if (asprintf(&abs, "%s/%s", c->dir, c->plugin_path[k]) < 0)
					abort();
				free(c->plugin_path[k]);
				c->plugin_path[k] = abs;
			}
		}
	}
	lcp_registry_init(&c->reg, (const char *const *)c->plugin_path, c->n_plugin_path);

	lcp_opt_apply(lcp_engine_opts, sizeof(c->eng), json_object_get(c->root, "engine"), &c->eng,
		      "engine", errs, c->keep);
	if (c->eng.metrics_listen != NULL && c->eng.metrics_listen[0] != '\0') {
		struct sockaddr_storage ss;
		socklen_t len;

		if (lcp_prom_parse(c->eng.metrics_listen, &ss, &len) < 0)
			lcp_errs_add(errs, "engine.metrics_listen: \"%s\" is not ADDRESS:PORT (a numeric IPv4 address, or an IPv6 one in brackets, and a port 1..65535), e.g. \"127.0.0.1:9464\"",
				     c->eng.metrics_listen);
	}

	/* the defaults first, then what the config says */
	{
		static const char *const dflt[] = { "counters_percore", "pool_mempool", "batch_burst" };

		for (unsigned k = 0; k < 3; k++) {
			json_t *d = json_string(dflt[k]);
			char p[64];

			json_array_append_new(c->keep, d);
			snprintf(p, sizeof(p), "strategies.%s (default)", lcp_strategy_kinds[k]);
			lcp_strategy_ref_load(c, d, p, strategy_slot(&c->strat, k), lcp_strategy_kind_ids[k],
					      errs);
		}
	}
	if ((v = json_object_get(c->root, "strategies")) != NULL)
		load_strategies(c, v, "strategies", &c->strat, errs);

	arr = json_object_get(c->root, "stages");
	if (!json_is_array(arr) || json_array_size(arr) == 0) {
		lcp_errs_add(errs, "stages: required, a non-empty array of stages");
	} else {
		c->n_stages = (unsigned)json_array_size(arr);
		c->stages = calloc(c->n_stages, sizeof(*c->stages));
		json_array_foreach(arr, i, v)
			load_stage(c, (unsigned)i, v, errs);
	}
	lcp_graph_check(c, errs);
	if (errs->n == 0)
		lcp_mbuf_budget(c);
	return c;
}

void
lcp_cfg_free(struct lcp_cfg *c)
{
	if (c == NULL)
		return;
	for (unsigned i = 0; i < c->n_stages; i++) {
		free(c->stages[i].conf);
		free(c->stages[i].links_in);
		free(c->stages[i].link_out);
	}
	for (unsigned i = 0; i < c->n_confs; i++)
		free(c->confs[i]);
	free(c->confs);
	free(c->stages);
	free(c->links);
	lcp_strv_free(c->eal, c->n_eal);
	lcp_strv_free(c->plugin_path, c->n_plugin_path);
	lcp_registry_fini(&c->reg);
	lcp_errs_free(&c->warns);
	json_decref(c->root);
	json_decref(c->keep);
	free(c->path);
	free(c->dir);
	free(c->name);
	free(c);
}
