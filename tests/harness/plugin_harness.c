/* SPDX-License-Identifier: BSD-3-Clause
 * plugin_harness.c — see plugin_harness.h. Everything the engine does for a
 * stage is liblcp's own code: lcp_cfg_load (registry, option walker, validate,
 * graph checks), lcp_engine_build, lcp_engine_init_stages, lcp_worker_turn,
 * lcp_worker_stop_stages, lcp_engine_teardown, lcp_mempools_check. What is
 * the harness's own: the config it writes, the h_tap stages it reads back, the
 * messages it makes, and the assertions.
 */
#include "plugin_harness.h"

#include <check.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <rte_eal.h>
#include <rte_errno.h>
#include <rte_lcore.h>
#include <rte_malloc.h>

#include <lcp/stream.h>

#include "engine_priv.h"
#include "h_tap.h"

#define H_LCORE 1      /* the stage under test and its taps */
#define H_RING_LCORE 2 /* the taps of ring_ports */
#define H_TURNS_MAX 64 /* lcp_h_stop: turns until quiet, at most */

/* a tap: the stage of that name stands at port `port` of the stage under test */
struct h_tap {
	char port[LCP_NAME_MAX];
	unsigned dut_port;
	bool out; /* an output port of the stage under test */
	struct lcp_stage_priv *sp;
};

struct lcp_h {
	struct lcp_cfg *cfg;
	struct lcp_engine *e;
	struct lcp_stage_priv *dut;
	struct h_tap taps[32];
	unsigned n_taps;
	char *dir;
	bool stopped;
	uint64_t msgs_made, msgs_freed;
};

/* ---- EAL ---- */

static bool h_eal_up;

/* the EAL arguments, also written into the config (its "eal" says which lcores
 * exist): three lcores, all on CPU 0 */
/* clang-format off */
static const char *const h_eal_args[] = {
	"--no-huge", "--no-pci", "--no-shconf", "--no-telemetry", "-m", "512",
	"--lcores=0@0,1@0,2@0", "--log-level=lib.eal:error",
};
/* clang-format on */

char *
lcp_h_scratch(const char *name)
{
	char *dir, *cmd;

	ck_assert(asprintf(&dir, "%s/harness/scratch-%s-%d", TEST_BUILDDIR, name, (int)getpid()) >
		  0);
	ck_assert(asprintf(&cmd, "rm -rf '%s' && mkdir -p '%s'", dir, dir) > 0);
	ck_assert_int_eq(system(cmd), 0);
	free(cmd);
	return dir;
}

void
lcp_h_scratch_rm(char *dir)
{
	char *cmd;

	ck_assert(asprintf(&cmd, "rm -rf '%s'", dir) > 0);
	ck_assert_int_eq(system(cmd), 0);
	free(cmd);
	free(dir);
}

void
lcp_h_eal(void)
{
	char prefix[64], rt[512];
	char *argv[RTE_DIM(h_eal_args) + 3];
	int argc = 0;

	if (h_eal_up)
		return;
	argv[argc++] = "plugin_harness";
	for (unsigned i = 0; i < RTE_DIM(h_eal_args); i++)
		argv[argc++] = (char *)h_eal_args[i];
	snprintf(prefix, sizeof(prefix), "--file-prefix=lcph-%d", (int)getpid());
	argv[argc++] = prefix;
	argv[argc] = NULL;
	/* EAL's runtime files under the build tree, as tests/run/lib.sh does */
	snprintf(rt, sizeof(rt), "%s/harness/scratch-rt", TEST_BUILDDIR);
	if (mkdir(rt, 0755) != 0 && errno != EEXIST)
		ck_abort_msg("mkdir %s: %s", rt, strerror(errno));
	setenv("RUNTIME_DIRECTORY", rt, 1);
	ck_assert_msg(rte_eal_init(argc, argv) >= 0, "EAL init failed: %s",
		      rte_strerror(rte_errno));
	h_eal_up = true;
	ck_assert_msg(rte_lcore_is_enabled(H_LCORE) && rte_lcore_is_enabled(H_RING_LCORE),
		      "expected lcores 1 and 2 besides the main lcore 0");
}

/* ---- the config ---- */

static bool
in_list(const char *list, const char *name)
{
	size_t n = strlen(name);

	for (const char *p = list; p != NULL && *p;) {
		const char *end = strchr(p, ',');
		size_t k = end ? (size_t)(end - p) : strlen(p);

		if (k == n && strncmp(p, name, n) == 0)
			return true;
		p = end ? end + 1 : NULL;
	}
	return false;
}

static json_t *
h_json(const char *what, const char *text)
{
	json_error_t je;
	json_t *v = json_loads(text, 0, &je);

	ck_assert_msg(v != NULL, "the test's %s is not JSON: %s (%s)", what, je.text, text);
	return v;
}

static const char *const h_unit_port[] = {
	[LCP_UNIT_PKT] = "pkt",
	[LCP_UNIT_STREAM] = "stream",
	[LCP_UNIT_MSG] = "msg",
};

/* the config: "dut" and a tap at each of its linked ports. The plugin's port
 * table comes from the registry, as lcp_cfg_load will find it. */
static json_t *
h_config(struct lcp_h *h, const struct lcp_h_conf *c)
{
	const char *dirs[2] = {TEST_BUILDDIR "/harness/.libs", c->plugin_dir};
	json_t *root = json_object(), *stages = json_array(), *links = json_array(),
	       *eal = json_array();
	json_t *dut =
		json_pack("{s:s, s:s, s:i}", "name", "dut", "plugin", c->plugin, "lcore", H_LCORE);
	const struct lcp_stage_ops *ops;
	struct lcp_registry reg;
	struct lcp_plugin_file *pf;
	unsigned k = 0;

	lcp_registry_init(&reg, dirs, c->plugin_dir != NULL ? 2 : 1);
	pf = lcp_registry_get(&reg, c->plugin, NULL);
	ck_assert_msg(pf != NULL, "plugin %s: not found in the build tree", c->plugin);
	ck_assert_msg(pf->kind == LCP_KIND_STAGE, "plugin %s: not a stage plugin", c->plugin);
	ops = pf->desc->ops;
	for (unsigned i = 0; i < RTE_DIM(h_eal_args); i++)
		json_array_append_new(eal, json_string(h_eal_args[i]));
	json_object_set_new(root, "name", json_sprintf("plugin harness: %s", c->plugin));
	json_object_set_new(root, "eal", eal);
	json_object_set_new(root, "plugin_path",
			    c->plugin_dir != NULL ? json_pack("[s, s]", dirs[0], dirs[1])
						  : json_pack("[s]", dirs[0]));
	if (c->engine != NULL)
		json_object_set_new(root, "engine", h_json("engine", c->engine));
	if (c->options != NULL)
		json_object_set_new(dut, "options", h_json("options", c->options));
	if (c->strategies != NULL)
		json_object_set_new(dut, "strategies", h_json("strategies", c->strategies));
	json_array_append_new(stages, dut);
	for (const struct lcp_port_def *p = ops->ports; p->name != NULL; p++, k++) {
		struct h_tap *t;
		bool out = p->dir == LCP_PORT_OUT, ring = out && in_list(c->ring_ports, p->name);
		char name[LCP_NAME_MAX + 2], dut_end[2 * LCP_NAME_MAX], tap_end[3 * LCP_NAME_MAX];
		json_t *l;

		if (in_list(c->unlinked, p->name))
			continue;
		ck_assert_uint_lt(h->n_taps, RTE_DIM(h->taps));
		t = &h->taps[h->n_taps++];
		snprintf(t->port, sizeof(t->port), "%s", p->name);
		t->dut_port = k;
		t->out = out;
		snprintf(name, sizeof(name), "h-%s", p->name);
		json_array_append_new(stages,
				      json_pack("{s:s, s:s, s:i}", "name", name, "plugin", "h_tap",
						"lcore", ring ? H_RING_LCORE : H_LCORE));
		snprintf(dut_end, sizeof(dut_end), "dut.%s", p->name);
		snprintf(tap_end, sizeof(tap_end), "%s.%s%s", name, h_unit_port[p->unit],
			 out ? "" : "_out");
		l = json_pack("{s:s, s:s}", "from", out ? dut_end : tap_end, "to",
			      out ? tap_end : dut_end);
		if (ring && c->link != NULL) {
			json_t *more = h_json("link", c->link);

			json_object_update(l, more);
			json_decref(more);
		}
		json_array_append_new(links, l);
	}
	json_object_set_new(root, "stages", stages);
	json_object_set_new(root, "links", links);
	lcp_registry_fini(&reg);
	return root;
}

/* ---- build ---- */

static void
h_free_all(struct lcp_h *h)
{
	if (h->e != NULL) {
		lcp_engine_free(h->e);
		free(h->e);
	}
	if (h->cfg != NULL)
		lcp_cfg_free(h->cfg);
	lcp_h_scratch_rm(h->dir);
	free(h);
}

struct lcp_h *
lcp_h_try_new(const struct lcp_h_conf *c, char *err, size_t len)
{
	struct lcp_h *h = calloc(1, sizeof(*h));
	struct lcp_errs errs = {0};
	char *path;
	json_t *root;
	size_t o = 0;

	ck_assert(h != NULL);
	lcp_h_eal();
	err[0] = '\0';
	unsetenv("LCP_PLUGIN_PATH");
	h->dir = lcp_h_scratch(c->plugin);
	root = h_config(h, c);
	ck_assert(asprintf(&path, "%s/pipeline.json", h->dir) > 0);
	ck_assert_int_eq(json_dump_file(root, path, JSON_INDENT(2)), 0);
	json_decref(root);
	h->cfg = lcp_cfg_load(path, NULL, 0, &errs);
	free(path);
	if (h->cfg == NULL || errs.n > 0) {
		for (unsigned i = 0; i < errs.n && o < len; i++)
			o += (size_t)snprintf(err + o, len - o, "%s\n", errs.v[i]);
		lcp_errs_free(&errs);
		h_free_all(h);
		return NULL;
	}
	h->e = calloc(1, sizeof(*h->e));
	ck_assert(h->e != NULL);
	h->e->cfg = h->cfg;
	h->e->prom_fd = -1;
	if (lcp_engine_build(h->e) < 0) {
		snprintf(err, len, "lcp_engine_build failed (see the log)\n");
		h_free_all(h);
		return NULL;
	}
	h->dut = h->e->stages[0];
	for (unsigned i = 0; i < h->n_taps; i++)
		h->taps[i].sp = h->e->stages[i + 1];
	if (lcp_engine_init_stages(h->e) < 0) {
		snprintf(err, len, "init or start failed (see the log)\n");
		lcp_engine_teardown(h->e);
		h_free_all(h);
		return NULL;
	}
	for (unsigned w = 0; w < h->e->n_workers; w++)
		lcp_worker_resolve(&h->e->workers[w]);
	return h;
}

struct lcp_h *
lcp_h_new(const struct lcp_h_conf *c)
{
	char err[4096];
	struct lcp_h *h = lcp_h_try_new(c, err, sizeof(err));

	ck_assert_msg(h != NULL, "%s: refused:\n%s", c->plugin, err);
	return h;
}

struct lcp_stage *
lcp_h_stage(struct lcp_h *h)
{
	return &h->dut->pub;
}

void *
lcp_h_ctx(struct lcp_h *h)
{
	return h->dut->pub.ctx;
}

struct rte_mempool *
lcp_h_pktpool(struct lcp_h *h)
{
	return lcp_stage_pktmbuf_pool(&h->dut->pub);
}

/* ---- objects ---- */

struct rte_mbuf *
lcp_h_pkt(struct lcp_h *h, const void *data, size_t len)
{
	struct rte_mbuf *m = rte_pktmbuf_alloc(lcp_h_pktpool(h));
	char *p;

	ck_assert_msg(m != NULL, "the engine's mbuf pool is empty");
	lcp_mbuf_set_rx_tsc(m, rte_rdtsc());
	p = rte_pktmbuf_append(m, (uint16_t)len);
	ck_assert_msg(len <= UINT16_MAX && p != NULL, "%zu bytes do not fit one mbuf", len);
	if (len > 0)
		memcpy(p, data, len);
	return m;
}

struct rte_mbuf *
lcp_h_stream(struct lcp_h *h, unsigned ev, uint32_t conn, uint32_t user, uint32_t off,
	     const void *data, size_t len)
{
	struct rte_mbuf *m = lcp_stream_mbuf(lcp_h_pktpool(h), ev, conn, rte_rdtsc());
	struct lcp_stream_meta *meta;
	char *p;

	ck_assert_msg(m != NULL, "the engine's mbuf pool is empty");
	meta = lcp_stream_meta(m);
	meta->user = user;
	meta->off = off;
	if (len > 0) {
		p = rte_pktmbuf_append(m, (uint16_t)len);
		ck_assert_msg(len <= UINT16_MAX && p != NULL, "%zu bytes do not fit one mbuf", len);
		memcpy(p, data, len);
	}
	return m;
}

/* a harness message: the struct and its payload in one block */
struct h_msg {
	struct lcp_msg m;
	struct lcp_h *h;
	uint8_t data[];
};

static void
h_msg_release(struct lcp_msg *m)
{
	struct h_msg *hm = (struct h_msg *)m;

	hm->h->msgs_freed++;
	free(hm);
}

struct lcp_msg *
lcp_h_msg(struct lcp_h *h, uint64_t conn_id, uint16_t opcode, const void *data, size_t len)
{
	struct h_msg *hm = calloc(1, sizeof(*hm) + len + 1);

	ck_assert(hm != NULL);
	memcpy(hm->data, data, len);
	hm->h = h;
	hm->m.conn_id = conn_id;
	hm->m.rx_tsc = rte_rdtsc();
	hm->m.data = hm->data;
	hm->m.len = (uint32_t)len;
	hm->m.opcode = opcode;
	hm->m.release = h_msg_release;
	h->msgs_made++;
	return &hm->m;
}

uint64_t
lcp_h_msgs_freed(struct lcp_h *h)
{
	return h->msgs_freed;
}

uint64_t
lcp_h_msgs_live(struct lcp_h *h)
{
	return h->msgs_made - h->msgs_freed;
}

/* ---- running ---- */

static struct h_tap *
h_tap(struct lcp_h *h, const char *port, bool out)
{
	for (unsigned i = 0; i < h->n_taps; i++)
		if (strcmp(h->taps[i].port, port) == 0) {
			ck_assert_msg(h->taps[i].out == out, "port %s of %s is an %s port", port,
				      h->cfg->stages[0].plugin, out ? "input" : "output");
			return &h->taps[i];
		}
	ck_abort_msg("%s has no linked port %s", h->cfg->stages[0].plugin, port);
	return NULL;
}

unsigned
lcp_h_turn(struct lcp_h *h)
{
	unsigned work = 0;

	for (unsigned w = 0; w < h->e->n_workers; w++)
		work += lcp_worker_turn(&h->e->workers[w], h->stopped);
	return work;
}

unsigned
lcp_h_push(struct lcp_h *h, const char *port, void **objs, unsigned n)
{
	struct h_tap *t = h_tap(h, port, false);
	const struct lcp_port_def *pd =
		&((const struct lcp_stage_ops *)h->dut->pub.ops)->ports[t->dut_port];

	ck_assert_msg(!h->stopped, "push after lcp_h_stop");
	/* the tap's output port of the unit of the stage's input port */
	lcp_emit(&t->sp->pub, H_TAP_PKT_OUT + pd->unit - LCP_UNIT_PKT, objs, n);
	return lcp_h_turn(h);
}

unsigned
lcp_h_push1(struct lcp_h *h, const char *port, void *obj)
{
	return lcp_h_push(h, port, &obj, 1);
}

static struct h_tap_ctx *
h_out_ctx(struct lcp_h *h, const char *port)
{
	return h_tap(h, port, true)->sp->pub.ctx;
}

unsigned
lcp_h_out_n(struct lcp_h *h, const char *port)
{
	return h_out_ctx(h, port)->n;
}

void **
lcp_h_out(struct lcp_h *h, const char *port)
{
	return h_out_ctx(h, port)->objs;
}

unsigned
lcp_h_out_bursts(struct lcp_h *h, const char *port)
{
	return h_out_ctx(h, port)->calls;
}

void
lcp_h_out_clear(struct lcp_h *h, const char *port)
{
	struct h_tap_ctx *t = h_out_ctx(h, port);

	if (t->n != 0)
		lcp_objs_free(t->unit, t->objs, t->n);
	t->n = 0;
}

/* ---- reading ---- */

static int
h_ctr_index(struct lcp_h *h, const char *name)
{
	for (unsigned k = 0; k < h->dut->n_ctrs; k++)
		if (strcmp(h->dut->ctr_names[k], name) == 0)
			return (int)k;
	return -1;
}

bool
lcp_h_has_ctr(struct lcp_h *h, const char *name)
{
	return h_ctr_index(h, name) >= 0;
}

uint64_t
lcp_h_ctr(struct lcp_h *h, const char *name)
{
	int k = h_ctr_index(h, name);

	ck_assert_msg(k >= 0, "%s has no counter %s", h->cfg->stages[0].plugin, name);
	/* the harness is the stage's lcore: publishing its slot is safe here */
	lcp_engine_flush_counters(h->e);
	return lcp_stage_ctr(h->dut, (unsigned)k);
}

void
lcp_h_ctrs_eq_list(struct lcp_h *h, const struct lcp_h_ctr_want *want)
{
	for (const struct lcp_h_ctr_want *w = want; w->name != NULL; w++) {
		uint64_t v = lcp_h_ctr(h, w->name);

		ck_assert_msg(v == w->v, "counter %s: %llu, expected %llu", w->name,
			      (unsigned long long)v, (unsigned long long)w->v);
	}
}

unsigned
lcp_h_mbufs_in_use(struct lcp_h *h)
{
	unsigned n = 0;

	for (int s = 0; s < RTE_MAX_NUMA_NODES; s++)
		if (h->e->pktpool[s] != NULL)
			n += rte_mempool_in_use_count(h->e->pktpool[s]);
	return n;
}

unsigned
lcp_h_pools_in_use(struct lcp_h *h)
{
	unsigned n = 0;

	for (unsigned i = 0; i < h->e->n_pools; i++)
		n += lcp_pool_in_use(h->e->pools[i]);
	return n;
}

const char *
lcp_h_stop_request(struct lcp_h *h)
{
	return __atomic_load_n(&h->e->stop_request, __ATOMIC_ACQUIRE);
}

/* ---- shutdown ---- */

unsigned
lcp_h_linger(struct lcp_h *h, bool last)
{
	ck_assert_msg(h->dut->linger != NULL, "%s has no linger op", h->cfg->stages[0].plugin);
	ck_assert_msg(!h->stopped, "linger after lcp_h_stop");
	__atomic_store_n(&h->e->run_state, LCP_RUN_DRAIN, __ATOMIC_RELEASE);
	for (unsigned i = 0; i < h->e->n_stages; i++)
		__atomic_store_n(&h->e->stages[i]->linger_last, last, __ATOMIC_RELEASE);
	lcp_h_turn(h);
	return __atomic_load_n(&h->dut->linger_n, __ATOMIC_RELAXED);
}

void
lcp_h_stop(struct lcp_h *h)
{
	unsigned turns = 0;

	if (h->stopped)
		return;
	__atomic_store_n(&h->e->run_state, LCP_RUN_STOP, __ATOMIC_RELEASE);
	for (unsigned w = 0; w < h->e->n_workers; w++)
		lcp_worker_stop_stages(&h->e->workers[w]);
	h->stopped = true;
	while (lcp_h_turn(h) != 0)
		ck_assert_msg(++turns < H_TURNS_MAX, "still working after %u turns past stop()",
			      turns);
	__atomic_store_n(&h->e->run_state, LCP_RUN_EXIT, __ATOMIC_RELEASE);
	/* a stop() may have staged objects after the last turn looked */
	for (unsigned w = 0; w < h->e->n_workers; w++)
		for (unsigned b = 0; b < h->e->workers[w].n_sbufs; b++)
			lcp_stage_buf_flush(h->e->workers[w].sbufs[b]);
}

void
lcp_h_free(struct lcp_h *h)
{
	uint64_t leaked, live;

	lcp_h_stop(h);
	for (unsigned i = 0; i < h->n_taps; i++)
		if (h->taps[i].out)
			lcp_h_out_clear(h, h->taps[i].port);
	lcp_engine_flush_counters(h->e);
	lcp_engine_teardown(h->e); /* fini, and whatever is left in rings and vectors */
	lcp_engine_flush_counters(h->e);
	lcp_mempools_check(h->e);
	leaked = h->e->leaked;
	live = lcp_h_msgs_live(h);
	h_free_all(h);
	ck_assert_msg(leaked == 0, "%" PRIu64 " objects leaked (mempools or pools, see the log)",
		      leaked);
	ck_assert_msg(live == 0, "%" PRIu64 " harness messages were never released", live);
}
