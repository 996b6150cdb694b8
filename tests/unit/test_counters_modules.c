/* SPDX-License-Identifier: BSD-3-Clause
 * test_counters_modules.c — the four counters strategies (plugins/counters_*),
 * loaded from the build tree through the engine's registry and configured by
 * the engine's option walker, against the contract of lcp/counters.h.
 *
 * concurrent (every module, several option sets): a set of 11 counters (two
 * cache lines of a row) and 3 writer slots; two worker lcores each add known
 * amounts to their own slot, 3 million adds each, through the SDK's
 * lcp_ctr_add() on a stage built as engine.c builds it (so counters_percore
 * goes through its inline row, the others through add()), calling tick() every
 * 64 adds with the TSC as the worker loop does, and flush() at the end as the
 * engine does after stop(). Meanwhile the main lcore reads every counter in a
 * loop: each must never go down and never exceed its final total. After the
 * workers return, the main lcore adds to the third slot (the control thread's,
 * as at shutdown) and flushes every slot: every read() must equal its total
 * exactly. Modules without flush() must be exact before it as well.
 *
 * batched_*: counters_batched's publishing rules, on synthetic TSCs (no timing):
 * nothing visible before `every` adds, everything at the `every`-th; tick()
 * publishes pending adds once `interval_us` has passed since the last publish,
 * not before; slots publish independently; flush() is exact.
 * sharded_*: the `shards` option's checks.
 * ring_tally_wrap: the engine's ring-link counters (read off rte_ring's 32-bit
 * indices, widened to 64 bits) across 2^32.
 *
 * EAL (--no-huge, --lcores=0@0,1@1,2@0: two worker lcores on a 2-CPU machine) is
 * initialised in each test's forked process (a checked fixture): EAL's worker
 * threads do not survive fork(), so it cannot be initialised once in the parent.
 * Under CK_FORK=no it is initialised once, by the first test.
 */
#include <check.h>
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <rte_cycles.h>
#include <rte_eal.h>
#include <rte_errno.h>
#include <rte_launch.h>
#include <rte_lcore.h>
#include <rte_pause.h>

#include <lcp/lcp.h>

#include "engine_priv.h" /* lcp_ring_tally */

#include "testutil.h"

#include "../t_check.h"

#define T_CTRS 11	 /* counters per set: a row spans two cache lines */
#define T_SLOTS 3	 /* two workers + the control thread, as the engine */
#define T_ADDS 3000000u	 /* adds per worker */
#define T_TICK_EVERY 64u /* the worker loop reads the TSC every 64th busy turn */

static const char *const t_names[T_CTRS] = {
	"in.in",
	"out.out",
	"out.drop_ring_full",
	"out.drop_unlinked",
	"drop_shutdown",
	"c5",
	"c6",
	"c7",
	"c8",
	"c9",
	"c10",
};

/* ---- EAL, once per process ---- */

static bool t_eal_up;

static void
t_eal_setup(void)
{
	char prefix[64], rt[512];
	char *argv[] = {
		"test_counters_modules",
		"--no-huge",
		"--no-pci",
		"--no-shconf",
		"--no-telemetry",
		"-m",
		"256",
		"--lcores=0@0,1@1,2@0",
		prefix,
		"--log-level=lib.eal:error",
		NULL,
	};

	if (t_eal_up)
		return;
	snprintf(prefix, sizeof(prefix), "--file-prefix=lcpt-ctrmod-%d", (int)getpid());
	/* EAL's runtime files under the build tree, as tests/run/lib.sh does */
	snprintf(rt, sizeof(rt), "%s/unit/scratch-counters-rt", TEST_BUILDDIR);
	if (mkdir(rt, 0755) != 0 && errno != EEXIST)
		ck_abort_msg("mkdir %s: %s", rt, strerror(errno));
	setenv("RUNTIME_DIRECTORY", rt, 1);
	ck_assert_msg(rte_eal_init((int)RTE_DIM(argv) - 1, argv) >= 0, "EAL init failed: %s",
		      rte_strerror(rte_errno));
	t_eal_up = true;
	ck_assert_msg(rte_lcore_count() >= 3, "expected 3 lcores (main + 2 workers), got %u",
		      rte_lcore_count());
}

/* ---- a module, through the registry and the option walker ---- */

struct t_mod {
	struct lcp_registry reg;
	const struct lcp_plugin *desc;
	const struct lcp_counters_ops *ops;
	void *conf;
	json_t *keep;
};

/* options: JSON text or NULL (the defaults) */
static void
t_mod_load(struct t_mod *m, const char *name, const char *options)
{
	struct lcp_plugin_file *pf;
	struct lcp_errs errs = {0};
	json_t *obj = NULL;

	memset(m, 0, sizeof(*m));
	unsetenv("LCP_PLUGIN_PATH");
	lcp_registry_init(&m->reg, NULL, 0); /* the build tree's plugins */
	pf = lcp_registry_get(&m->reg, name, NULL);
	ck_assert_msg(pf != NULL, "%s: not found among the build tree's plugins", name);
	ck_assert_msg(pf->kind == LCP_KIND_COUNTERS, "%s: kind %u, expected counters", name,
		      pf->kind);
	m->desc = pf->desc;
	m->ops = m->desc->ops;
	if (options != NULL) {
		obj = json_loads(options, 0, NULL);
		ck_assert_msg(obj != NULL, "bad test options %s", options);
	}
	m->keep = json_array();
	m->conf = calloc(1, m->desc->conf_size + 1);
	ck_assert_ptr_nonnull(m->conf);
	lcp_opt_apply(m->desc->options, m->desc->conf_size, obj, m->conf,
		      "strategies.counters.options", &errs, m->keep);
	if (errs.n)
		t_errs_dump(&errs);
	ck_assert_msg(errs.n == 0, "%s: options %s refused", name, options ? options : "(none)");
	lcp_errs_free(&errs);
	json_decref(obj);
}

static void
t_mod_free(struct t_mod *m)
{
	free(m->conf);
	json_decref(m->keep);
	lcp_registry_fini(&m->reg);
}

/* ================= concurrent writers, concurrent reader ================= */

struct t_case {
	const char *plugin;
	const char *options;
};

static const struct t_case t_cases[] = {
	{"counters_percore", NULL},
	{"counters_atomic", NULL},
	{"counters_sharded", NULL},
	/* both writers in one shard: every add contends */
	{"counters_sharded", "{\"shards\": 1}"},
	{"counters_batched", NULL},
	/* published only by tick() (at every tick) and flush() */
	{"counters_batched", "{\"every\": 1073741824, \"interval_us\": 0}"},
	/* published at every add */
	{"counters_batched", "{\"every\": 1, \"interval_us\": 10000000}"},
	/* published only by flush(): read() stays 0 until the end */
	{"counters_batched", "{\"every\": 1073741824, \"interval_us\": 10000000}"},
};

/* what worker slot s adds at its k-th add: to counter k % T_CTRS */
static inline uint64_t
t_amount(unsigned slot, uint64_t k)
{
	return (slot + 1) * (1 + k % 13);
}

struct t_writer {
	const struct lcp_counters_ops *ops;
	void *set;
	unsigned slot;
	uint32_t *done;
};

static int
t_writer_main(void *arg)
{
	struct t_writer *w = arg;
	const struct lcp_counters_ops *ops = w->ops;
	/* a stage's counter fields, as engine.c build_counters() sets them */
	struct lcp_stage st = {
		.ctrs = w->set,
		.ctr_add = ops->add,
		.slot = w->slot,
		.ctr_row = ops->row != NULL ? ops->row(w->set, w->slot) : NULL,
	};

	for (uint64_t k = 0; k < T_ADDS; k++) {
		lcp_ctr_add(&st, (unsigned)(k % T_CTRS), t_amount(w->slot, k));
		if (ops->tick != NULL && k % T_TICK_EVERY == T_TICK_EVERY - 1)
			ops->tick(w->set, w->slot, rte_rdtsc());
	}
	if (ops->flush != NULL) /* the engine: on the worker, after its stages' stop() */
		ops->flush(w->set, w->slot);
	__atomic_fetch_add(w->done, 1, __ATOMIC_RELEASE);
	return 0;
}

START_TEST(concurrent)
{
	const struct t_case *tc = &t_cases[_i];
	const char *label = tc->options ? tc->options : "(defaults)";
	uint64_t want[T_CTRS] = {0}, last[T_CTRS] = {0};
	struct t_writer w[2];
	unsigned lcores[2], nl = 0, l;
	uint32_t done = 0;
	uint64_t reads = 0, bad_reads = 0;
	char bad[256] = "";
	struct t_mod m;
	void *set;

	t_mod_load(&m, tc->plugin, tc->options);
	set = m.ops->create(m.conf, t_names, T_CTRS, T_SLOTS, SOCKET_ID_ANY);
	ck_assert_msg(set != NULL, "%s %s: create failed: %s", tc->plugin, label, strerror(errno));
	for (unsigned s = 0; s < 2; s++)
		for (uint64_t k = 0; k < T_ADDS; k++)
			want[k % T_CTRS] += t_amount(s, k);
	for (unsigned i = 0; i < T_CTRS; i++)
		want[i] += 1000 + i; /* the control thread's adds, below */

	RTE_LCORE_FOREACH_WORKER(l)
	{
		if (nl < 2)
			lcores[nl++] = l;
	}
	ck_assert_uint_eq(nl, 2);
	for (unsigned s = 0; s < 2; s++) {
		w[s] = (struct t_writer){.ops = m.ops, .set = set, .slot = s, .done = &done};
		ck_assert_int_eq(rte_eal_remote_launch(t_writer_main, &w[s], lcores[s]), 0);
	}
	/* read while they write: monotonic, bounded by the final totals */
	for (bool last_pass = false;;) {
		bool finished = __atomic_load_n(&done, __ATOMIC_ACQUIRE) == 2;

		for (unsigned i = 0; i < T_CTRS; i++) {
			uint64_t v = m.ops->read(set, i);

			reads++;
			if ((v < last[i] || v > want[i]) && bad_reads++ == 0)
				snprintf(bad, sizeof(bad),
					 "counter %s read %" PRIu64 " after %" PRIu64
					 " (final total %" PRIu64 "), read #%" PRIu64,
					 t_names[i], v, last[i], want[i], reads);
			if (v > last[i])
				last[i] = v;
		}
		if (last_pass)
			break;
		last_pass = finished;
	}
	rte_eal_mp_wait_lcore();
	ck_assert_msg(bad_reads == 0,
		      "%s %s: %" PRIu64 " of %" PRIu64 " concurrent reads went backwards or "
		      "beyond the final total; first: %s",
		      tc->plugin, label, bad_reads, reads, bad);

	/* the control thread's slot, as the engine uses it at shutdown */
	for (unsigned i = 0; i < T_CTRS; i++)
		m.ops->add(set, T_SLOTS - 1, i, 1000 + i);
	if (m.ops->flush == NULL) {
		for (unsigned i = 0; i < T_CTRS; i++)
			ck_assert_msg(m.ops->read(set, i) == want[i],
				      "%s %s (no flush op): counter %s reads %" PRIu64
				      " after the writers returned, expected %" PRIu64,
				      tc->plugin, label, t_names[i], m.ops->read(set, i), want[i]);
	} else {
		for (unsigned s = 0; s < T_SLOTS; s++)
			m.ops->flush(set, s); /* the engine: every slot, on the control thread */
	}
	for (unsigned i = 0; i < T_CTRS; i++)
		ck_assert_msg(m.ops->read(set, i) == want[i],
			      "%s %s: counter %s reads %" PRIu64 " after flush, expected exactly "
			      "%" PRIu64,
			      tc->plugin, label, t_names[i], m.ops->read(set, i), want[i]);
	m.ops->destroy(set);
	t_mod_free(&m);
}
END_TEST

/* ================= counters_batched: the publishing rules ================= */

static void *
t_batched(struct t_mod *m, const char *options)
{
	void *set;

	t_mod_load(m, "counters_batched", options);
	ck_assert_ptr_null(m->ops->row); /* a row would bypass the publishing */
	ck_assert_ptr_nonnull(m->ops->tick);
	ck_assert_ptr_nonnull(m->ops->flush);
	set = m->ops->create(m->conf, t_names, T_CTRS, T_SLOTS, SOCKET_ID_ANY);
	ck_assert_msg(set != NULL, "create failed: %s", strerror(errno));
	return set;
}

#define t_assert_reads(ops_, set_, idx_, want_, when_)                                             \
	ck_assert_msg((ops_)->read((set_), (idx_)) == (want_),                                     \
		      "counters_batched: %s: counter %s reads %" PRIu64 ", expected %" PRIu64,     \
		      (when_), t_names[idx_], (ops_)->read((set_), (idx_)), (uint64_t)(want_))

/* nothing is visible before `every` adds; the every-th publishes all counters */
START_TEST(batched_every)
{
	struct t_mod m;
	void *set = t_batched(&m, "{\"every\": 8, \"interval_us\": 10000000}");
	const struct lcp_counters_ops *o = m.ops;
	char when[64];

	for (unsigned k = 1; k < 8; k++) {
		o->add(set, 0, 0, 1);
		snprintf(when, sizeof(when), "after %u of every=8 adds", k);
		t_assert_reads(o, set, 0, 0, when);
	}
	o->add(set, 0, 0, 1);
	t_assert_reads(o, set, 0, 8, "after the 8th add (every=8)");
	/* adds to several counters count together */
	o->add(set, 0, 1, 5);
	for (unsigned k = 0; k < 6; k++)
		o->add(set, 0, 0, 1);
	t_assert_reads(o, set, 1, 0, "7 adds after a publish");
	t_assert_reads(o, set, 0, 8, "7 adds after a publish");
	o->add(set, 0, 2, 3);
	t_assert_reads(o, set, 0, 14, "8 adds after a publish, to three counters");
	t_assert_reads(o, set, 1, 5, "8 adds after a publish, to three counters");
	t_assert_reads(o, set, 2, 3, "8 adds after a publish, to three counters");
	/* another slot: its own count, its own row */
	for (unsigned k = 0; k < 7; k++)
		o->add(set, 1, 0, 100);
	t_assert_reads(o, set, 0, 14, "7 adds on slot 1");
	o->add(set, 1, 3, 1);
	t_assert_reads(o, set, 0, 714, "the 8th add on slot 1");
	t_assert_reads(o, set, 3, 1, "the 8th add on slot 1");
	/* flush: exact */
	o->add(set, 0, 0, 2);
	o->add(set, 2, 4, 9);
	t_assert_reads(o, set, 0, 714, "pending adds before flush");
	for (unsigned s = 0; s < T_SLOTS; s++)
		o->flush(set, s);
	t_assert_reads(o, set, 0, 716, "after flush");
	t_assert_reads(o, set, 4, 9, "after flush");
	/* flush with nothing pending changes nothing */
	o->flush(set, 0);
	t_assert_reads(o, set, 0, 716, "after a second flush");
	o->destroy(set);
	t_mod_free(&m);
}
END_TEST

/* the defaults from the option table: every 64 adds */
START_TEST(batched_defaults)
{
	struct t_mod m;
	void *set = t_batched(&m, NULL);
	const struct lcp_counters_ops *o = m.ops;

	for (unsigned k = 0; k < 63; k++)
		o->add(set, 2, 7, 1);
	t_assert_reads(o, set, 7, 0, "63 adds with the default every (64)");
	o->add(set, 2, 7, 1);
	t_assert_reads(o, set, 7, 64, "64 adds with the default every (64)");
	o->destroy(set);
	t_mod_free(&m);
}
END_TEST

/* tick() publishes pending adds once interval_us has passed since the last
 * publish, and not before; synthetic TSCs from a known start */
START_TEST(batched_tick)
{
	struct t_mod m;
	/* before create: the "earlier TSC" below must be earlier than the set's
	 * clock however long create takes (t0 - iv was not when create and the
	 * rdtsc after it were more than 2 intervals apart: a loaded machine, ASan) */
	uint64_t tpre = rte_rdtsc();
	void *set = t_batched(&m, "{\"every\": 1073741824, \"interval_us\": 100}");
	const struct lcp_counters_ops *o = m.ops;
	uint64_t us = rte_get_tsc_hz() / 1000000, iv = 100 * us;
	uint64_t t0 = rte_rdtsc(); /* after create: at least its clock */
	uint64_t t1 = t0 + 2 * iv;

	o->add(set, 0, 0, 3);
	o->tick(set, 0, tpre - iv); /* a TSC from before the set: never publishes */
	t_assert_reads(o, set, 0, 0, "tick with an earlier TSC");
	o->tick(set, 0, t1);
	t_assert_reads(o, set, 0, 3, "tick 2 intervals after create");
	o->add(set, 0, 0, 4);
	o->tick(set, 0, t1 + iv / 2);
	t_assert_reads(o, set, 0, 3, "tick half an interval after the last publish");
	o->tick(set, 0, t1 + iv - us);
	t_assert_reads(o, set, 0, 3, "tick 1 us before the interval ends");
	o->tick(set, 0, t1 + iv + us);
	t_assert_reads(o, set, 0, 7, "tick 1 us after the interval ended");
	/* another slot's tick does not publish slot 0 */
	o->add(set, 0, 1, 1);
	o->tick(set, 1, t1 + 100 * iv);
	t_assert_reads(o, set, 1, 0, "slot 1 ticked, slot 0 pending");
	/* slot 0's own tick does */
	o->tick(set, 0, t1 + 100 * iv);
	t_assert_reads(o, set, 1, 1, "slot 0 ticked long after");
	o->flush(set, 0);
	t_assert_reads(o, set, 0, 7, "after flush");
	t_assert_reads(o, set, 1, 1, "after flush");
	o->destroy(set);
	t_mod_free(&m);
}
END_TEST

/* interval_us 0: every tick publishes what is pending */
START_TEST(batched_tick_zero)
{
	struct t_mod m;
	void *set = t_batched(&m, "{\"every\": 1073741824, \"interval_us\": 0}");
	const struct lcp_counters_ops *o = m.ops;
	uint64_t t = rte_rdtsc();

	for (unsigned k = 1; k <= 5; k++) {
		o->add(set, 1, 5, k);
		t_assert_reads(o, set, 5, k * (k - 1) / 2, "before the tick (interval_us 0)");
		o->tick(set, 1, t + k);
		t_assert_reads(o, set, 5, k * (k + 1) / 2, "after the tick (interval_us 0)");
	}
	o->destroy(set);
	t_mod_free(&m);
}
END_TEST

/* ================= counters_sharded: the shards option ================= */

START_TEST(sharded_shards_option)
{
	static const char *const refused[] = {"{\"shards\": 0}", "{\"shards\": 2048}",
					      "{\"shards\": -1}", "{\"shards\": 12}"};
	struct t_mod m;
	void *set;

	/* a power of two within range: accepted, works */
	t_mod_load(&m, "counters_sharded", "{\"shards\": 64}");
	ck_assert_ptr_null(m.ops->row);
	set = m.ops->create(m.conf, t_names, T_CTRS, T_SLOTS, SOCKET_ID_ANY);
	ck_assert_ptr_nonnull(set);
	/* the slot does not pick the shard: any slot number adds the same */
	m.ops->add(set, 0, 3, 5);
	m.ops->add(set, 2, 3, 6);
	ck_assert_uint_eq(m.ops->read(set, 3), 11);
	m.ops->destroy(set);
	t_mod_free(&m);

	/* not a power of two, given to create() without the walker (which refuses
	 * it, below): create() refuses it too */
	t_mod_load(&m, "counters_sharded", "{\"shards\": 16}");
	*(uint32_t *)m.conf = 12; /* struct counters_sharded_conf: its one field */
	errno = 0;
	ck_assert_msg(m.ops->create(m.conf, t_names, T_CTRS, T_SLOTS, SOCKET_ID_ANY) == NULL,
		      "counters_sharded: shards 12 (not a power of two) was accepted");
	ck_assert_int_eq(errno, EINVAL);
	t_mod_free(&m);

	/* out of range or not a power of two (LCP_OPT_F_POW2): the option walker refuses */
	for (unsigned i = 0; i < RTE_DIM(refused); i++) {
		struct lcp_registry reg;
		struct lcp_plugin_file *pf;
		struct lcp_errs errs = {0};
		json_t *obj = json_loads(refused[i], 0, NULL), *keep = json_array();
		void *conf;

		lcp_registry_init(&reg, NULL, 0);
		pf = lcp_registry_get(&reg, "counters_sharded", NULL);
		ck_assert_ptr_nonnull(pf);
		conf = calloc(1, pf->desc->conf_size + 1);
		lcp_opt_apply(pf->desc->options, pf->desc->conf_size, obj, conf, "o", &errs, keep);
		ck_assert_msg(errs.n == 1, "counters_sharded: options %s: %u errors, expected 1",
			      refused[i], errs.n);
		ck_assert_msg(strstr(errs.v[0], "o.shards") != NULL, "message %s names no path",
			      errs.v[0]);
		lcp_errs_free(&errs);
		free(conf);
		json_decref(obj);
		json_decref(keep);
		lcp_registry_fini(&reg);
	}
}
END_TEST

/* every module: only counters_percore may expose a row (its add() is exactly the
 * SDK's inline add); create() refuses zero slots */
START_TEST(ops_shape)
{
	static const char *const mods[] = {"counters_percore", "counters_atomic",
					   "counters_sharded", "counters_batched"};

	for (unsigned i = 0; i < RTE_DIM(mods); i++) {
		struct t_mod m;

		t_mod_load(&m, mods[i], NULL);
		ck_assert_msg((m.ops->row != NULL) == (i == 0), "%s: row op %s", mods[i],
			      m.ops->row ? "present" : "missing");
		errno = 0;
		ck_assert_msg(m.ops->create(m.conf, t_names, T_CTRS, 0, SOCKET_ID_ANY) == NULL &&
				      errno == EINVAL,
			      "%s: create with 0 slots did not fail with EINVAL", mods[i]);
		t_mod_free(&m);
	}
}
END_TEST

/* A ring link's out and in counts are read off the ring's 32-bit tail
 * indices and widened (engine_priv.h: lcp_ring_tally). An empty ring whose
 * indices all sit 256 below 2^32 (a state any ring reaches after that many
 * objects) moves 768 objects in bursts of 32, tallied every 256: the totals
 * must pass 2^32 exactly. Then 10 objects dequeued at teardown (leftover)
 * count as enqueued but not as in. */
START_TEST(ring_tally_wrap)
{
	const uint32_t base = 0xffffff00u;
	struct rte_ring *r = rte_ring_create("t_tally", 1024, SOCKET_ID_ANY,
					     RING_F_SP_ENQ | RING_F_SC_DEQ);
	struct lcp_ring_in ri;
	struct lcp_ring_tally tally;
	void *objs[32];
	uint64_t enq, deq, total = 5;
	uint32_t seen = 0xfffffff0u;

	lcp_tally_widen(&total, &seen, 0x10);
	ck_assert_uint_eq(total, 5 + 0x20);
	ck_assert_uint_eq(seen, 0x10);

	ck_assert_ptr_nonnull(r);
	memset(&ri, 0, sizeof(ri));
	memset(&tally, 0, sizeof(tally));
	rte_spinlock_init(&tally.lock);
	ri.r = r;
	ri.tally = &tally;
	r->prod.head = r->prod.tail = r->cons.head = r->cons.tail = base;
	lcp_ring_tally(&ri, &enq, &deq);
	ck_assert_uint_eq(enq, base);
	ck_assert_uint_eq(deq, base);
	for (unsigned i = 0; i < RTE_DIM(objs); i++)
		objs[i] = (void *)(uintptr_t)(i + 1);
	for (unsigned round = 1; round <= 3; round++) {
		for (unsigned k = 0; k < 256 / 32; k++) {
			ck_assert_uint_eq(rte_ring_sp_enqueue_bulk(r, objs, 32, NULL), 32);
			ck_assert_uint_eq(rte_ring_sc_dequeue_bulk(r, objs, 32, NULL), 32);
		}
		lcp_ring_tally(&ri, &enq, &deq);
		ck_assert_uint_eq(enq, (uint64_t)base + 256 * round);
		ck_assert_uint_eq(deq, (uint64_t)base + 256 * round);
	}
	ck_assert_uint_gt(enq, UINT32_MAX);
	ck_assert_uint_eq(rte_ring_sp_enqueue_bulk(r, objs, 10, NULL), 10);
	ck_assert_uint_eq(rte_ring_sc_dequeue_bulk(r, objs, 10, NULL), 10);
	tally.leftover += 10; /* as free_ring_leftovers() does */
	lcp_ring_tally(&ri, &enq, &deq);
	ck_assert_uint_eq(enq, (uint64_t)base + 778);
	ck_assert_uint_eq(deq, (uint64_t)base + 768);
	rte_ring_free(r);
}
END_TEST

static void
counters_modules_tcases(Suite *s)
{
	TCase *tc = t_tcase(s, "concurrent", t_eal_setup, NULL, 120);

	tcase_add_loop_test(tc, concurrent, 0, (int)RTE_DIM(t_cases));
	T_TESTS(t_tcase(s, "rules", t_eal_setup, NULL, 30), ops_shape, batched_every,
		batched_defaults, batched_tick, batched_tick_zero, sharded_shards_option,
		ring_tally_wrap);
}

T_MAIN("counters_modules", counters_modules_tcases)
