/* SPDX-License-Identifier: BSD-3-Clause
 * engine_priv.h — the running engine: stages, workers, rings, pools. */
#ifndef LCP_ENGINE_PRIV_H
#define LCP_ENGINE_PRIV_H

#include <signal.h>

#include <rte_common.h>
#include <rte_mempool.h>
#include <rte_ring.h>
#include <rte_spinlock.h>

#include <lcp/stage_worker.h>
#include <lcp/pool.h>
#include <lcp/batch.h>
#include <lcp/hist_log4.h>

#include "lcp_priv.h"

#define LCP_BURST_MAX 1024

struct lcp_engine;

/* a cross-lcore link, seen from its consumer */
struct lcp_ring_in {
	struct rte_ring *r;
	struct lcp_stage *dst;
	uint16_t port;
	uint16_t unit;
	uint32_t ctr_in;
	uint32_t burst;
	uint32_t hwm; /* high-water mark seen at dequeue (consumer writes) */
	unsigned link;
	/* batch strategy of the link */
	unsigned (*dequeue_size)(void *b, unsigned last, unsigned avail); /* NULL: burst */
	void *batch;
	const struct lcp_batch_ops *bops;
	const char *batch_name;
	unsigned last, avail;
	/* resolved by the worker when it starts (after every stage's init):
	 * the consumer's hot path then loads nothing through dst */
	lcp_stage_process_t process; /* dst's process(), or the timed wrapper */
	void *ctx;                   /* dst's ctx */
	struct lcp_ring_tally *tally; /* the link's out / in counts (below) */
};

/* The link's "<out>.out" (producer) and "<in>.in" (consumer) counts are not
 * added per burst: they are the ring's producer and consumer tail indices,
 * widened from 32 to 64 bits by lcp_ring_tally() (the control loop calls it at
 * least every LCP_TALLY_PERIOD_S, far more often than a ring can move 2^32
 * objects). leftover: objects the control thread dequeued at teardown (counted
 * as drop_shutdown, not as in). Its own cache line, away from what the
 * consumer reads every turn: only readers write it. */
struct lcp_ring_tally {
	rte_spinlock_t lock;
	uint32_t prod_seen, cons_seen;
	uint64_t prod_total, cons_total;
	uint64_t leftover;
} __rte_cache_aligned;

/* the longest the control loop sleeps between two lcp_ring_tally() of every
 * ring: 2^32 objects through one ring take several seconds even at 1-2
 * cycles per object */
#define LCP_TALLY_PERIOD_S 0.5

/* *total += how far a 32-bit index moved since *seen (mod 2^32) */
static inline void
lcp_tally_widen(uint64_t *total, uint32_t *seen, uint32_t now)
{
	*total += (uint32_t)(now - *seen);
	*seen = now;
}

/* bring the link's totals up to the ring's indices; any thread */
static inline void
lcp_ring_tally(const struct lcp_ring_in *ri, uint64_t *enq, uint64_t *deq)
{
	struct lcp_ring_tally *t = ri->tally;

	rte_spinlock_lock(&t->lock);
	lcp_tally_widen(&t->prod_total, &t->prod_seen,
			__atomic_load_n(&ri->r->prod.tail, __ATOMIC_ACQUIRE));
	lcp_tally_widen(&t->cons_total, &t->cons_seen,
			__atomic_load_n(&ri->r->cons.tail, __ATOMIC_ACQUIRE));
	if (enq != NULL)
		*enq = t->prod_total;
	if (deq != NULL)
		*deq = t->cons_total - t->leftover;
	rte_spinlock_unlock(&t->lock);
}

/* a counter of a stage that is read off a ring (see struct lcp_ring_in) */
struct lcp_ring_ctr {
	unsigned idx;             /* the stage's counter index */
	struct lcp_ring_in *ri;
	bool prod;                /* "<out>.out" of the producer, else "<in>.in" */
};

/* on_full "block" of a link between lcores, per output port of the producer:
 * the enqueue waits for room instead of dropping (backpressure) */
struct lcp_edge_full {
	uint64_t timeout;    /* TSC cycles; 0 = until the engine stops */
	uint32_t ctr_waits;  /* "<port>.backpressure_waits": enqueues that found the ring full */
	uint32_t ctr_cycles; /* "<port>.backpressure_cycles": cycles spent waiting */
	bool block;
};

/* Producer-side staging of a cross-lcore link whose batch module asks for it
 * (params.stage > 1): lcp_emit() finds the edge's ring pointer NULL and goes out
 * of line to lcp_emit_drop(), which stages here instead of dropping. */
struct lcp_stage_buf {
	struct rte_ring *r;
	struct lcp_stage *src;
	const struct lcp_edge *e; /* for its out / drop counters */
	const struct lcp_edge_full *full; /* NULL unless the link blocks */
	unsigned n;               /* staged (producer writes; control reads, relaxed) */
	unsigned cap;
	uint64_t first_tsc;       /* when the oldest staged object came */
	uint64_t max_age;         /* TSC cycles; 0 = flush at the end of the turn */
	void *objs[];
};

/* A same-lcore input vector (struct lcp_pend) with what the walk needs. The
 * walk hands `pub.objs` to the stage and puts `spare` in its place first, so
 * what the stage emits to itself while it runs (a self link) lands in the
 * other array: the one it reads is never grown under it. */
struct lcp_pend_q {
	struct lcp_pend pub;            /* first: lcp_edge.pend points here */
	void **spare;
	uint32_t spare_cap;
	uint16_t port;                  /* input port of dst */
	uint16_t unit;                  /* enum lcp_unit, to free what a loop leaves */
	uint32_t chunk;                 /* most objects per process() call, 0: all: a link's
					 * "burst", else lcp_port_def.burst */
	bool chunk_set;                 /* a link's "burst" set chunk */
	struct lcp_stage *dst;
	lcp_stage_process_t process;    /* resolved by the worker: ops->process or timed */
	void *ctx;
	int socket;
};

#define LCP_PEND_INIT 256 /* objects an input vector holds before it first grows */
/* Rounds of one walk: a round hands every non-empty input vector of the lcore,
 * in graph order, to its stage. Request and reply (tcp -> ws -> tcp -> port)
 * take three or four; what is still queued after this many goes round a
 * message loop among the lcore's stages: dropped, counted ("drop_loop" of the
 * stage it was queued for), logged once. */
#define LCP_WALK_ROUNDS 16

/* engine.stage_timing: a stage's own cycles per call (process or poll): since
 * ABI 2.0 no call runs inside another; per-call cycles in the SDK's log-linear
 * layout (lcp/hist_log4.h: below 16 cycles, then 4 buckets per power of two) */
struct lcp_timing {
	uint64_t calls, objs, cycles, max;
	uint64_t hist[LCP_HIST_LOG4_BUCKETS];
};

struct lcp_worker {
	struct lcp_engine *eng;
	unsigned lcore;
	unsigned slot;
	struct lcp_stage **stages; /* on this lcore, config order */
	unsigned n_stages;
	struct lcp_stage **pollers;
	unsigned n_pollers;
	struct lcp_ring_in *rins;     /* rte_realloc'd, cache-aligned, on the lcore's socket */
	unsigned n_rins;
	struct lcp_stage_buf **sbufs; /* staged links fed by stages on this lcore */
	unsigned n_sbufs;
	struct lcp_stage **tickers;   /* stages whose counters module has tick() */
	unsigned n_tickers;
	struct lcp_stage_priv **lingerers; /* stages with a linger op, config order */
	unsigned n_lingerers;
	struct lcp_pend_q **pends; /* input vectors of same-lcore links, in walk order */
	unsigned n_pends;
	/* published for the control thread (relaxed; one writer) */
	uint64_t busy_cycles __rte_cache_aligned;
	uint64_t idle_cycles;
	uint64_t loops;
	uint64_t work;
	uint32_t stopped;
	struct lcp_stage_priv *cur; /* the stage whose poll / process runs (control reads) */
	uint32_t exited;            /* lcp_worker_main returned (release) */
};

struct lcp_stage_priv {
	struct lcp_stage pub; /* first: a struct lcp_stage * is a struct lcp_stage_priv * */
	struct lcp_engine *eng;
	struct lcp_cfg_stage *cs;
	unsigned index;
	int socket;
	const struct lcp_counters_ops *cops;
	const char **ctr_names;
	unsigned n_ctrs;
	/* ABI 2.2 histograms: their counters are ctr_names[hist_first ..
	 * n_ctrs - 1] (per histogram: buckets 0..n_le, then the sum) */
	const struct lcp_hist_def *hists;
	unsigned n_hists;
	unsigned hist_first;
	uint32_t *hist_ctr; /* per histogram, its bucket 0 (lcp_stage.hist_ctr) */
	double *hist_scale; /* lcp_hist_set_scale() */
	uint32_t *ctr_in;          /* per port: "<port>.in" */
	uint32_t ctr_drop_shutdown;
	uint32_t ctr_drop_loop;      /* "drop_loop": still queued after LCP_WALK_ROUNDS */
	bool loop_logged;
	bool grow_logged;            /* lcp_pend_grow failed once */
	struct lcp_pend_q **pend;    /* per input port, NULL unless a same-lcore link feeds it */
	bool inited;
	void *own_ctx;               /* the context the engine allocated (ctx_size) */
	struct lcp_edge *edges;
	struct lcp_stage_buf **sbuf; /* per port, NULL unless the link stages */
	struct lcp_edge_full *full;  /* per port, NULL unless a link blocks when full */
	struct lcp_worker *worker;
	struct lcp_timing *tm;       /* engine.stage_timing, else NULL */
	struct lcp_ring_ctr *rctr;   /* counters read off rings, added to the module's */
	unsigned n_rctr;
	lcp_stage_linger_t linger;   /* ops->linger of a plugin built for ABI >= 1.5 */
	uint32_t linger_n;           /* its last answer (worker writes), LCP_LINGER_UNSEEN
				      * before its first call */
	uint32_t linger_last;        /* every other linger stage is done (control writes) */
};

#define LCP_LINGER_UNSEEN UINT32_MAX

struct lcp_stats_prev {
	uint64_t tsc;
	uint64_t delivered;
	uint64_t *busy, *idle;
};

/* SIGINT / SIGTERM received so far (engine.c's handler): a second one during
 * the shutdown cuts it short */
extern volatile sig_atomic_t lcp_signals;

struct MHD_Daemon;

struct lcp_engine {
	struct lcp_cfg *cfg;
	volatile uint32_t run_state;
	struct lcp_stage_priv **stages;
	unsigned n_stages;
	struct lcp_worker *workers;
	unsigned n_workers;
	unsigned main_slot;
	struct lcp_ring_in **ring_of_link; /* by link index, NULL if direct */
	struct lcp_stream_credits **link_credits; /* by link index: offered by the producer (stream.c) */
	struct rte_mempool *pktpool[RTE_MAX_NUMA_NODES];
	struct lcp_stage_pktpool {
		struct rte_mempool *mp;
		const char *stage; /* the stage that made it */
		unsigned held;     /* lcp_stage_pktmbuf_pool_held(): kept by a driver past close */
	} *stage_pktpools; /* lcp_stage_pktmbuf_pool_create(): freed after every fini */
	unsigned n_stage_pktpools;
	uint64_t tsc_hz;
	uint64_t t_start, t_stop;
	double control_cpu_s; /* the control thread's CPU time in the run loop */
	const char *stop_reason;
	char stuck[256];          /* stages still running when engine.stop_timeout ran out */
	uint64_t hard_deadline;   /* TSC: the end of engine.stop_timeout */
	double stop_limit_s;      /* engine.stop_timeout as it applies */
	uint64_t t_shutdown;      /* TSC: when the shutdown began */
	unsigned signals_at_stop; /* lcp_signals when the shutdown began */
	const char *stop_request; /* set once by lcp_stage_request_stop() */
	bool drained;
	unsigned n_lingerers;     /* stages with a linger op */
	double linger_s;          /* how long the shutdown lingered */
	uint64_t linger_left;     /* what the linger ops still reported when it ended */
	bool live;
	struct lcp_stats_prev prev;
	json_t *mempools; /* filled at exit */
	uint64_t leaked;
	struct lcp_pool **pools; /* live pools made by lcp_pool_create() */
	unsigned n_pools;
	unsigned pool_seq;
	uint64_t pool_leaked;    /* objects never given back to freed pools */
	json_t *pool_reports;    /* pools already freed, as reported */
	struct MHD_Daemon *prom; /* the metrics endpoint (prom.c), or NULL */
	int prom_fd;             /* its epoll descriptor, polled by the control loop; -1 without */
	uint64_t prom_scrapes;   /* GET /metrics answered */
};

int lcp_engine_build(struct lcp_engine *e);
int lcp_engine_init_stages(struct lcp_engine *e);
/* after lcp_engine_init_stages(), whatever it returned: fini() of the stages
 * whose init() succeeded, then the contexts the engine allocated */
void lcp_engine_teardown(struct lcp_engine *e);
int lcp_worker_main(void *arg);
/* The parts of lcp_worker_main() that a caller driving w itself uses (the
 * plugin test harness, tests/harness/, runs a stage on the calling thread):
 * resolve what the rings and the walk call, once, after every stage's init;
 * one turn of the loop (the linger ops while LCP_RUN_DRAIN, polls unless
 * stopped, rings, the walk, staged links), returning the work done; every
 * stage's stop() in config order. */
void lcp_worker_resolve(struct lcp_worker *w);
unsigned lcp_worker_turn(struct lcp_worker *w, bool stopped);
void lcp_worker_stop_stages(struct lcp_worker *w);
/* hand what is queued on w's input vectors to their stages, round after round
 * (runner.c); returns the objects handed. The worker loop calls it every turn. */
unsigned lcp_worker_walk(struct lcp_worker *w);
/* an input vector of LCP_PEND_INIT objects for dst's input port, on socket */
struct lcp_pend_q *lcp_pend_new(struct lcp_stage *dst, unsigned port, unsigned unit, int socket);
void lcp_pend_free(struct lcp_pend_q *q);
/* false: a worker did not return within engine.stop_timeout (e->stuck names
 * its stage); nothing may be torn down then */
bool lcp_engine_shutdown(struct lcp_engine *e);
/* runner.c: a poll under engine.stage_timing */
unsigned lcp_poll_timed(struct lcp_stage *st);
json_t *lcp_timing_json(const struct lcp_engine *e, const struct lcp_stage_priv *sp);
/* runner.c: enqueue what a staged link holds; returns how many were staged */
unsigned lcp_stage_buf_flush(struct lcp_stage_buf *b);
/* on_full "block": enqueue objs[0..n) on r, waiting while the ring is full
 * until all fit, the engine reaches LCP_RUN_STOP, or f->timeout passes.
 * Returns how many were enqueued; the caller drops the rest. */
unsigned lcp_ring_enqueue_wait(struct lcp_stage *st, const struct lcp_edge_full *f, struct rte_ring *r,
			       void **objs, unsigned n);
/* publish every stage's counters from every slot (control thread, workers done) */
void lcp_engine_flush_counters(struct lcp_engine *e);
/* engine.c: lcp_ring_tally() of every ring link (the control loop) */
void lcp_ring_tally_all(struct lcp_engine *e);

/* pool.c */
json_t *lcp_pools_json(struct lcp_engine *e);
void lcp_pools_sample(struct lcp_engine *e);

/* stats.c */
uint64_t lcp_stage_ctr(const struct lcp_stage_priv *sp, unsigned idx);
void lcp_stage_totals(const struct lcp_stage_priv *sp, uint64_t *in, uint64_t *out, uint64_t *drops);
json_t *lcp_stats_json(struct lcp_engine *e, bool final);
/* histogram h of sp now: b[0 .. n_le] per bucket (not cumulative), their
 * total, and the sum (the stage's unit) */
void lcp_hist_read(const struct lcp_stage_priv *sp, unsigned h, uint64_t *b, uint64_t *count, uint64_t *sum);
/* the q-quantile (0 < q < 1) of b in the exported unit, interpolated linearly
 * inside its bucket as Prometheus's histogram_quantile(); the highest finite
 * bound when it falls in +Inf; 0 without values */
double lcp_hist_quantile(const struct lcp_stage_priv *sp, unsigned h, const uint64_t *b, uint64_t count,
			 double q);
/* every histogram of sp: {name: {le, buckets, count, sum, p50, p90, p99, p999}} */
json_t *lcp_hists_json(const struct lcp_stage_priv *sp);
void lcp_stats_tick(struct lcp_engine *e, bool final_line);
void lcp_stats_summary(struct lcp_engine *e, FILE *f);
void lcp_mempools_check(struct lcp_engine *e);

/* engine.c: free what lcp_engine_build() made (after teardown) */
void lcp_engine_free(struct lcp_engine *e);
/* control.c: wake the control loop (async-signal-safe) */
void lcp_control_wake(void);

/* prom.c: the metrics endpoint (engine.metrics_listen) */
int lcp_prom_start(struct lcp_engine *e);
void lcp_prom_run(struct lcp_engine *e);
int lcp_prom_timeout_ms(struct lcp_engine *e);
void lcp_prom_stop(struct lcp_engine *e);

/* telemetry.c */
void lcp_telemetry_attach(struct lcp_engine *e);
void lcp_telemetry_detach(void);

#endif
