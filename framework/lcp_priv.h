/* SPDX-License-Identifier: BSD-3-Clause
 * lcp_priv.h — liblcp internals shared by the engine's files and the CLI.
 * Nothing here is part of the plugin SDK (framework/include/lcp/).
 *
 * Map: opt.c (option walker) -> elf_probe.c + loader.c (plugin registry) ->
 * config.c (JSON -> model) -> graph.c (links, lcores, checks) -> engine.c
 * (build stages, rings, pools) -> runner.c (lcore loops, shutdown) -> stats.c
 * (counters, report, live line) + telemetry.c. opt_doc.c: describe/doc/schema.
 */
#ifndef LCP_PRIV_H
#define LCP_PRIV_H

#include <stdbool.h>
#include <stdint.h>
#include <jansson.h>
#include <sys/socket.h>

#include <lcp/plugin.h>
#include <lcp/opt.h>
#include <lcp/stage.h>
#include <lcp/counters.h>

#include "errs.h"
#include "lcp_paths.h"

#define LCP_EXIT_CONFIG 78 /* EX_CONFIG: bad config */
#define LCP_MAX_LCORES 128

int lcp_log_level(void);

/* ---- option walker (opt.c) ---- */
/* Validate obj (may be NULL: all defaults) against tbl and fill conf (conf_size
 * bytes, zeroed first). Errors go to errs prefixed with path. Strings in conf
 * point into obj or into values appended to keep (a JSON array kept alive as
 * long as conf). Returns the number of errors added. */
/* LCP_OPT_F_PATH strings of a filled conf made absolute against base (the
 * config file's directory; NULL: left as they are), kept alive by keep */
void lcp_opt_paths(const struct lcp_opt *tbl, void *conf, const char *base, json_t *keep);
unsigned lcp_opt_apply(const struct lcp_opt *tbl, size_t conf_size, json_t *obj, void *conf,
		       const char *path, struct lcp_errs *errs, json_t *keep);
/* one option's value v into conf, checked as lcp_opt_apply checks it; what is
 * the path in messages; 0 or -1 (in errs) */
int lcp_opt_set(const struct lcp_opt *o, json_t *v, void *conf, const char *what, struct lcp_errs *errs);
/* the row of tbl named name, or NULL */
const struct lcp_opt *lcp_opt_find(const struct lcp_opt *tbl, const char *name);
/* "path.key: unknown NOUN (did you mean ...?); allowed: ..." in errs: the
 * names of tbl, then extra (keys the table does not hold, NULL-terminated;
 * may be NULL) */
void lcp_opt_refuse_key(const struct lcp_opt *tbl, const char *const *extra, const char *noun,
			const char *path, const char *key, struct lcp_errs *errs);
/* an object of the config's own (a stage, a link) into conf: the rows'
 * defaults first, then each key of obj in tbl over them (a value refused
 * leaves the default, or for a row without one what the caller put there;
 * strings kept alive by keep); the keys in extra (objects the caller reads;
 * NULL-terminated, may be NULL) passed over, any other refused. Required rows
 * are the caller's to check, with its own message. 0, or -1 when a key or a
 * value was refused (in errs) */
int lcp_opt_set_keys(const struct lcp_opt *tbl, const char *const *extra, json_t *obj, void *conf,
		     const char *path, struct lcp_errs *errs, json_t *keep);
/* check a table itself (plugin defect); returns 0 or -1 with msg */
int lcp_opt_table_check(const struct lcp_opt *tbl, size_t conf_size, char *msg, size_t len);
const char *lcp_opt_type_name(uint32_t type);

/* ---- plugin files and registry (elf_probe.c, loader.c) ---- */
struct lcp_probe {
	uint32_t magic;
	uint16_t abi_major, abi_minor;
	uint32_t size;
	uint32_t kind;
	char name[LCP_NAME_MAX];
};
/* Read the descriptor's plain fields from an ELF shared object without loading
 * it. Returns 0, or -1 with a reason ("not a shared object: ...") in msg. */
int lcp_elf_probe(const char *path, struct lcp_probe *out, char *msg, size_t len);

struct lcp_plugin_file {
	char *path;
	char name[LCP_NAME_MAX];
	uint32_t kind;
	void *handle;                  /* dlopen handle once opened */
	const struct lcp_plugin *desc; /* once opened */
	char *refused;                 /* why it was refused, or NULL */
};

struct lcp_cfg_stage;
/* graph.c: a stage no link leaves (strict: that has no poll() either), for
 * "delivered" (stats.c) and lcpipe ab's plan */
bool lcp_cfg_stage_is_sink(const struct lcp_cfg_stage *cs, bool strict);

/* prom.c: "ADDRESS:PORT" (numeric IPv4, or IPv6 in brackets) into ss; 0 or -EINVAL */
int lcp_prom_parse(const char *s, struct sockaddr_storage *ss, socklen_t *len);

/* a stage plugin's histograms: ops->hists of a plugin built for ABI 2.2 or
 * later (older ones had a reserved NULL there), else NULL */
static inline const struct lcp_hist_def *
lcp_stage_hists(const struct lcp_plugin *d)
{
	const struct lcp_stage_ops *ops = d->ops;

	return d->kind == LCP_KIND_STAGE && d->abi_minor >= 2 ? ops->hists : NULL;
}

/* a stage plugin's context size: ops->ctx_size of a plugin built for ABI 2.6
 * or later (older ones had a reserved NULL there), else 0 */
static inline size_t
lcp_stage_ctx_size(const struct lcp_plugin *d)
{
	const struct lcp_stage_ops *ops = d->ops;

	return d->kind == LCP_KIND_STAGE && d->abi_minor >= 6 ? ops->ctx_size : 0;
}

struct lcp_registry {
	struct lcp_plugin_file *v; /* accepted and refused, in search order */
	unsigned n;
	char **dirs;
	unsigned n_dirs;
};

/* search path: cfg_dirs (config plugin_path), LCP_PLUGIN_PATH, then the build
 * tree's plugins when running from it, else $(pkglibdir) */
void lcp_registry_init(struct lcp_registry *r, const char *const *cfg_dirs, unsigned n);
/* accepted plugin by name, opened (dlopen) on first use; NULL if none. If the
 * only file with that name was refused, *refused gets it. */
struct lcp_plugin_file *lcp_registry_get(struct lcp_registry *r, const char *name,
					 const struct lcp_plugin_file **refused);
/* open (dlopen + checks) a probed file; 0 or -1 (pf->refused set) */
int lcp_plugin_open(struct lcp_plugin_file *pf);
void lcp_registry_names(struct lcp_registry *r, struct lcp_sbuf *b);
/* every plugin name of the registry offered to a "did you mean" */
void lcp_registry_suggest(struct lcp_registry *r, struct lcp_suggest *sg);
void lcp_registry_fini(struct lcp_registry *r);

/* ---- config model (config.c, graph.c) ---- */
struct lcp_engine_conf {
	uint32_t ring_size;
	uint32_t burst;
	uint32_t mbufs;
	uint32_t mbuf_cache;
	uint32_t mbuf_data_room;
	double stats_interval;
	double duration;
	double drain_timeout;
	double linger;
	double stop_timeout; /* 0: linger + 2 x drain_timeout + 3 s */
	int live; /* 0 auto, 1 on, 2 off */
	bool stage_timing;
	int on_ring_full;          /* enum lcp_on_full: default of every link between lcores */
	uint32_t block_timeout_us; /* on_full "block": give up and drop after this; 0 = never */
	const char *metrics_listen; /* "ADDRESS:PORT" of the metrics endpoint; "" = none */
};

/* what a link between lcores does when its ring is full */
/* LCP_FULL_HOLD: a stream link whose producer port holds (LCP_PORT_F_HOLDS) */
enum lcp_on_full { LCP_FULL_DROP = 0, LCP_FULL_BLOCK = 1, LCP_FULL_HOLD = 2 };
extern const struct lcp_opt lcp_engine_opts[];
/* a link object's keys but "batch" (graph.c): from, to and the options whose
 * default is the engine's value of the same name */
struct lcp_link_conf {
	const char *from, *to;
	uint32_t ring_size;
	uint32_t burst;
	int on_full; /* enum lcp_on_full, drop or block */
	uint32_t block_timeout_us;
};
extern const struct lcp_opt lcp_link_opts[];

/* a stage object's keys (config.c's load_stage) but "options" and
 * "strategies" (lcp_stage_objs), which are objects of their own */
struct lcp_stage_keys {
	const char *name, *plugin, *comment;
	uint32_t lcore;
};
extern const struct lcp_opt lcp_stage_opts[];
extern const char *const lcp_stage_objs[];

struct lcp_strategy_ref {
	const char *plugin;       /* name */
	json_t *options;          /* may be NULL */
	struct lcp_plugin_file *pf;
	void *conf;               /* filled option struct, owned by lcp_cfg.confs */
	const char *path;         /* JSON path it came from, e.g. "stages[2].strategies.pool" */
};

/* the strategy modules in effect: globally, per stage, per link (batch) */
struct lcp_strategies {
	struct lcp_strategy_ref counters, pool, batch;
};

struct lcp_cfg_stage {
	char name[LCP_NAME_MAX];
	const char *plugin;
	struct lcp_plugin_file *pf; /* NULL when unresolved */
	unsigned lcore;
	json_t *options;
	void *conf;
	struct lcp_strategies strat; /* global ones with this stage's overrides */
	unsigned n_ports;
	unsigned *links_in;  /* per port: how many links end here */
	int *link_out;       /* per port: link index leaving here, -1 if none */
	bool used;
	bool link_failed; /* a link naming this stage was refused */
	bool has_mbufs;   /* its validate op said what it can hold (lcp_check_mbufs) */
	struct lcp_mbuf_hold mbufs;
};

struct lcp_cfg_link {
	unsigned src, src_port, dst, dst_port;
	uint32_t ring_size;
	uint32_t burst;
	struct lcp_strategy_ref batch; /* link's own, else the source stage's */
	int on_full;                   /* enum lcp_on_full */
	uint32_t block_timeout_us;
	bool on_full_set, timeout_set; /* given in the link itself */
	bool burst_set;                /* "burst" given: on a same-lcore link, the walk's piece size */
	bool valid;
};

struct lcp_cfg {
	json_t *root;
	json_t *keep; /* parsed defaults kept alive */
	char *path;
	char *dir;
	char *name;
	char **eal;
	unsigned n_eal;
	char **plugin_path;
	unsigned n_plugin_path;
	struct lcp_engine_conf eng;
	struct lcp_strategies strat; /* global, defaults filled in */
	void **confs;                /* every strategy conf allocated, freed with the cfg */
	unsigned n_confs;
	struct lcp_cfg_stage *stages;
	unsigned n_stages;
	struct lcp_cfg_link *links;
	unsigned n_links;
	bool lcore_avail[LCP_MAX_LCORES];
	unsigned main_lcore;
	struct lcp_registry reg;
	struct lcp_errs warns; /* warnings of a valid config: printed, never fatal */
};

/* Load and validate: every error goes to errs. eal_override (argv after "--")
 * replaces the config's "eal" array when n_override > 0. path NULL: the embedded
 * default config. Returns NULL only when the file cannot be read or parsed. */
struct lcp_cfg *lcp_cfg_load(const char *path, char *const *eal_override, unsigned n_override,
			     struct lcp_errs *errs);
void lcp_cfg_free(struct lcp_cfg *c);
/* graph checks (graph.c), called by lcp_cfg_load */
void lcp_graph_check(struct lcp_cfg *c, struct lcp_errs *errs);
/* whether the stages and rings can hold more mbufs than engine.mbufs; a warning
 * into c->warns (graph.c), called by lcp_cfg_load on a config without errors */
void lcp_mbuf_budget(struct lcp_cfg *c);
/* payload bytes of one mbuf: engine.mbuf_data_room less the headroom */
uint32_t lcp_mbuf_room(const struct lcp_cfg *c);
/* "kind": "name" or {"plugin": "name", "options": {...}} at path (config.c) */
void lcp_strategy_ref_load(struct lcp_cfg *c, json_t *v, const char *path,
			   struct lcp_strategy_ref *ref, uint32_t kind, struct lcp_errs *errs);
/* lcores from EAL args (graph.c) */
void lcp_eal_lcores(char *const *eal, unsigned n, bool *avail, unsigned *main_lcore);
extern const char lcp_default_config[];
/* the live stats line is on screen without its newline: log lines clear it first (log.c) */
extern int lcp_live_line;
/* one step of a scale for reading a number: at or above div, v / div with prec
 * decimals and unit; the last step (div 1) takes what is left (stats.c) */
struct lcp_scale {
	double div;
	int prec;
	const char *unit;
};
void lcp_fmt_scaled(char *buf, size_t len, double v, const struct lcp_scale *s);
extern const char *const lcp_on_full_choices[]; /* "drop", "block" */
extern const char *const lcp_on_full_names[];   /* the same, and "hold" */

/* ---- engine (engine.c, runner.c, stats.c, telemetry.c) ---- */
struct lcp_run_opts {
	const char *report_path;
	double duration; /* < 0: from config */
	int live;        /* -1: from config */
	bool eal_overridden; /* EAL arguments came from the command line */
};
/* EAL init, build, run until signal/duration, shut down, report. Returns an exit
 * status: 0 ok, 1 runtime failure, 3 objects leaked (mempool in use after exit). */
int lcp_engine_run(struct lcp_cfg *c, const struct lcp_run_opts *o);

/* ---- describe (opt_doc.c) ---- */
json_t *lcp_describe_plugin(const struct lcp_plugin_file *pf, bool with_file);
void lcp_describe_plugin_markdown(const struct lcp_plugin *d, struct lcp_sbuf *b);
void lcp_describe_markdown(struct lcp_registry *r, struct lcp_sbuf *b);
/* markdown of the generators above (headings, tables, code blocks, paragraphs)
 * as a man page NAME(section): "NAME \- what" */
void lcp_md_to_man(const char *md, const char *name, int section, const char *what, struct lcp_sbuf *b);
json_t *lcp_config_schema(struct lcp_registry *r);
/* all accepted plugins sorted by name, opened */
unsigned lcp_registry_sorted(struct lcp_registry *r, struct lcp_plugin_file ***out);

#endif
