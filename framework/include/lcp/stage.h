/* SPDX-License-Identifier: BSD-3-Clause
 * lcp/stage.h — control-path API for stage plugins (kind LCP_KIND_STAGE).
 *
 * Life of a stage, all calls made by the engine:
 *   init    control thread, once; fill the context the engine allocated
 *           (ops.ctx_size), or allocate one (lcp_stage_zmalloc()); no I/O
 *   start   control thread, before the worker lcores launch (start devices here)
 *   poll    worker lcore, every loop turn, if not NULL (sources, timers)
 *   process worker lcore, a burst arriving on an input port
 *   linger  worker lcore, every turn once the pipeline is stopping, if not NULL
 *           (ABI 1.6): close what you hold open, say how much is still closing
 *   stop    worker lcore, after the pipeline has drained: flush what you hold
 *   fini    control thread, once; release everything. Runs for every stage whose
 *           init succeeded — also when its own start or another stage's init or
 *           start failed — and never after this stage's own failed init.
 * Counters: lcp_count() from poll/process/stop on the stage's lcore; from
 * init/start/fini only because the workers are not running then. The engine adds
 * built-in counters to every stage ("<in port>.in", "<out port>.out",
 * "<out port>.drop_ring_full", "<out port>.drop_unlinked", "drop_shutdown"); a
 * stage's own counter names must be [a-z0-9_], unique, and not "drop_shutdown"
 * (the loader refuses the plugin otherwise). Names starting "drop_" are drops.
 * Fast-path inlines (lcp_emit, lcp_count) are in lcp/stage_worker.h.
 */
#ifndef LCP_STAGE_H
#define LCP_STAGE_H

#include <stddef.h>
#include <stdint.h>
#include <stdbool.h>

#include <lcp/plugin.h>
#include <lcp/opt.h>

#ifdef __cplusplus
extern "C" {
#endif

struct lcp_stage;
struct rte_mempool;

/* what travels on a link */
enum lcp_unit {
	LCP_UNIT_PKT = 1,    /* struct rte_mbuf *: an L2 frame, rx TSC in a dynfield */
	LCP_UNIT_STREAM = 2, /* struct rte_mbuf *: in-order TCP payload of one connection */
	LCP_UNIT_MSG = 3,    /* struct lcp_msg * (lcp/msg.h) */
};

enum lcp_port_dir {
	LCP_PORT_IN = 1,
	LCP_PORT_OUT = 2,
};

#define LCP_PORT_F_REQUIRED 0x1u /* `lcpipe check` refuses the config if unlinked */
/* ABI 1.8, on an output port: it passes on, unchanged, the objects that arrived
 * on input port `in` (an index into ports[], same unit) — a filter, tap, meter
 * or fault injector. `lcpipe check` refuses a loop of links made only of such
 * pass-throughs (a.out -> b.in, b.out -> a.in): the same objects would go round
 * for ever. A stage that answers what it receives with objects of its own (tcp,
 * ws) does not set it: a loop through it is a request and its reply. The loader
 * refuses the flag on an input, or naming an input that is not of the port's
 * unit. Use LCP_PORT_F_FORWARDS(in). */
#define LCP_PORT_F_FORWARD 0x2u
#define LCP_PORT_F_FORWARDS(in) ((uint16_t)(LCP_PORT_F_FORWARD | (((unsigned)(in) & 0xffu) << 8)))
#define LCP_PORT_FORWARD_FROM(flags) (((unsigned)(flags) >> 8) & 0xffu)
/* ABI 1.8, an input stream port: the stage reports the stream bytes it is done
 * with (lcp_stream_release, lcp/stream.h), so its producer counts what it
 * handed on until then (the tcp stage: its receive window) */
#define LCP_PORT_F_RELEASES 0x4u
/* ABI 1.8, an output stream port: the stage keeps, in order, what a full ring
 * to another lcore refuses (lcp_emit_try) and holds its source back meanwhile
 * (the tcp stage: the receive window). Such a link neither drops nor blocks,
 * whatever its on_full; every other stream link between lcores blocks (a hole
 * in a TCP stream cannot be repaired: `lcpipe check` refuses "drop" on it) */
#define LCP_PORT_F_HOLDS 0x8u

struct lcp_port_def {
	const char *name; /* [a-z0-9_]; "stage.port" in links */
	uint8_t dir;      /* enum lcp_port_dir */
	uint8_t unit;     /* enum lcp_unit */
	uint16_t flags;   /* LCP_PORT_F_* */
	const char *doc;  /* one line */
	/* ABI 2.0, an input port: the most objects the worker's walk hands one
	 * process() call from this port's same-lcore input vector, running the
	 * stages after this one between pieces; 0: the whole vector. For a stage
	 * whose output outnumbers its input (ws: one segment, dozens of
	 * messages), so that its consumers take what a piece produced while it is
	 * in cache. A link's "burst" overrides it. */
	uint16_t burst;
};
#define LCP_PORT_END { .name = NULL }

/* init: fill the context in *ctx (ops.ctx_size > 0), or allocate one and
 * return it in *ctx. conf is the filled option struct (valid until fini).
 * Return 0, or a negative errno after logging why. */
typedef int (*lcp_stage_init_t)(struct lcp_stage *st, const void *conf, void **ctx);
/* start: return 0 or a negative errno after logging why. */
typedef int (*lcp_stage_start_t)(struct lcp_stage *st, void *ctx);
/* poll: return how many objects were handled; 0 means idle (counted as idle
 * cycles). Sources stop producing once lcp_stage_stopping() is true. */
typedef unsigned (*lcp_stage_poll_t)(struct lcp_stage *st, void *ctx);
/* process: n objects arrive on input port `port` (index into ports[]). The stage
 * owns them now: it emits, frees (counting a drop) or keeps each one. */
typedef void (*lcp_stage_process_t)(struct lcp_stage *st, void *ctx, unsigned port,
				    void **objs, unsigned n);
/* linger (ABI 1.6, optional): from the first turn of the shutdown (DRAIN) on,
 * the worker calls it on every turn, before any stage's stop(); everything
 * else keeps running meanwhile (polls, rings, timers). The first call is the
 * notice: begin closing what the stage holds open (send a WebSocket close,
 * a FIN) — once per connection; stop opening new ones. Return how many are
 * still closing, 0 when done (a stage whose count reached 0 should not go back
 * above it). `last` becomes true once every stage with a linger op returned 0
 * while the pipeline was quiet (the applications are done): a stage that
 * carries other stages' connections (a transport) closes what nobody closed
 * then, and the engine waits for every linger op to return 0 again. All of it
 * within engine.linger seconds; then stop() runs, whatever is left (a
 * transport resets it). */
typedef unsigned (*lcp_stage_linger_t)(struct lcp_stage *st, void *ctx, bool last);
typedef void (*lcp_stage_stop_t)(struct lcp_stage *st, void *ctx);
typedef void (*lcp_stage_fini_t)(struct lcp_stage *st, void *ctx);
/* validate: cross-option checks at `lcpipe check` time, before any EAL. Return 0,
 * or -EINVAL after writing a one-line reason into msg (the engine prefixes the
 * JSON path of the stage's options). */
typedef int (*lcp_stage_validate_t)(const void *conf, char *msg, size_t msglen);

/* ABI 1.8, for the mbuf budget of `lcpipe check`: what a stage can hold at once
 * of the engine's packet mbufs (engine.mbufs), counted in full mbufs (the fewest
 * the bytes can take: a peer that sends small segments pins more). A validate
 * op that knows says so with lcp_check_mbufs(); the engine adds the stages up
 * with the rings of links carrying mbufs between lcores and warns when the sum
 * exceeds engine.mbufs. A transport's connections are those the stages on its
 * stream ports open or serve (their own `conns`; one for a stage that does not
 * say), at most max_conns. */
struct lcp_mbuf_hold {
	uint64_t fixed;     /* held whatever the connections */
	uint64_t per_conn;  /* a transport: held by each connection */
	uint32_t max_conns; /* a transport: connections it carries at most; 0: not a transport */
	uint32_t conns;     /* connections this stage opens or serves itself (0: none, or unknown) */
	char opt[32];       /* the option that weighs most, e.g. "rcvbuf" (the warning's path) */
	char what[224];     /* how per_conn / fixed arise, naming the options, e.g. "719 frames of
			     * rcvbuf 1 MiB + 1024 ooo_max_segs" */
};
/* ABI 1.8: only from a validate op while the engine checks a config (otherwise
 * they do nothing and return 0): the payload bytes one mbuf of the pool holds
 * (engine.mbuf_data_room less the headroom), and the stage's hold. */
uint32_t lcp_check_mbuf_room(void);
void lcp_check_mbufs(const struct lcp_mbuf_hold *h);

/* ABI 2.2: a histogram a stage records into, exported as a real histogram
 * family (the report's "histograms", telemetry /lcpipe/stage with live
 * quantiles, the Prometheus endpoint: cumulative _bucket{le=...}, _sum,
 * _count). Bucket k (0 <= k < n_le) counts the values v <= le[k] (and above
 * le[k-1]); bucket n_le counts the rest (le="+Inf"). Values and bounds are in
 * the stage's own unit (e.g. TSC cycles); lcp_hist_set_scale() gives what one
 * of them is in the exported unit (e.g. 1/tsc_hz: seconds), 1 by default. */
struct lcp_hist_def {
	const char *name; /* [a-z][a-z0-9_]*, ending with its unit ("latency_seconds"):
			   * the family is lcpipe_<name>, labelled by stage */
	const char *help; /* one line */
	const uint64_t *le; /* n_le strictly ascending upper bounds, inclusive */
	unsigned n_le;      /* 1 .. LCP_HIST_MAX_LE */
};
#define LCP_HIST_MAX_LE 255

/* A stage's counters kept as one X-macro list, X(ENUM_SUFFIX, "name"), give
 * both the enum of indices and the names array; this is the X that writes the
 * names, so the array is one line:
 *
 *   #define MY_COUNTERS(X) X(MSGS, "msgs") X(DROP_FULL, "drop_full")
 *   static const char *const my_counters[] = { MY_COUNTERS(LCP_COUNTER_NAME) NULL };
 */
#define LCP_COUNTER_NAME(e, s) s,

struct lcp_stage_ops {
	const struct lcp_port_def *ports; /* LCP_PORT_END-terminated; index = port number */
	const char *const *counters; /* the stage's own counters, NULL-terminated;
				      * names starting "drop_" are drop reasons */
	lcp_stage_validate_t validate; /* optional */
	lcp_stage_init_t init;         /* required */
	lcp_stage_start_t start;       /* optional */
	lcp_stage_poll_t poll;         /* optional; required if the stage has no input */
	lcp_stage_process_t process;   /* required if the stage has an input port */
	lcp_stage_stop_t stop;         /* optional */
	lcp_stage_fini_t fini;         /* optional */
	lcp_stage_linger_t linger;     /* optional, ABI 1.6 (read only from plugins
					* built for 1.6 or later) */
	const struct lcp_hist_def *hists; /* optional, ABI 2.2: terminated by a NULL name;
					   * recorded with lcp_hist_add() / lcp_hist_observe()
					   * (lcp/stage_worker.h) by their index here */
	/* optional, ABI 2.6: the size of the stage's context. The engine
	 * allocates it as lcp_stage_zmalloc() does (zeroed, cache-line aligned,
	 * on the stage's socket) and hands it to init() in *ctx, which fills it
	 * and must not replace it; the engine frees it after fini(), or after an
	 * init() that failed. 0: init() allocates the context itself (one whose
	 * size the options decide) and fini() frees it. */
	size_t ctx_size;
	void *reserved[1];
};

/* accessors, valid from init to fini */
const char *lcp_stage_name(const struct lcp_stage *st);
const char *lcp_stage_plugin(const struct lcp_stage *st);
unsigned lcp_stage_lcore(const struct lcp_stage *st);
int lcp_stage_socket(const struct lcp_stage *st);
/* ABI 2.4: size bytes, zeroed and cache-line aligned, on this stage's socket
 * (rte_zmalloc_socket(); release with rte_free()). NULL on failure, after
 * logging "cannot allocate <what> (<size> bytes) on socket <n>" as an error of
 * this stage, so an init() that gets NULL only returns -ENOMEM. From init to
 * fini, on the control thread. */
void *lcp_stage_zmalloc(struct lcp_stage *st, const char *what, size_t size);
/* the engine's packet mbuf pool for this stage's socket (config "mbufs") */
struct rte_mempool *lcp_stage_pktmbuf_pool(const struct lcp_stage *st);
/* ABI 1.8: a packet mbuf pool of n mbufs of the engine pool's size, for this
 * stage alone (a port's receive pool, kept apart from what applications
 * allocate). The engine frees it after every stage's fini (other stages may
 * hold its mbufs until theirs) and reports it with its pools; NULL on failure
 * (rte_errno). From init. */
struct rte_mempool *lcp_stage_pktmbuf_pool_create(struct lcp_stage *st, const char *tag, unsigned n);
/* ABI 2.3: the same with mbufs of data_room bytes each (headroom included, as
 * rte_pktmbuf_pool_create() takes it; at most UINT16_MAX): buffers larger or
 * smaller than the engine's, e.g. for whole TLS records. */
struct rte_mempool *lcp_stage_pktmbuf_pool_create_sized(struct lcp_stage *st, const char *tag, unsigned n,
							unsigned data_room);
/* ABI 2.1: n objects of mp, a pool this stage made with
 * lcp_stage_pktmbuf_pool_create(), stay with a driver after its device is closed,
 * by the driver's design (net_af_xdp in DPDK 22.11 never gives back its fill
 * ring). The shutdown check reports them as held by the driver instead of
 * leaked; whatever is in use above n is still a leak. Measure n, do not guess
 * it. 0, or -EINVAL if mp is not this stage's. From init to fini. */
int lcp_stage_pktmbuf_pool_held(struct lcp_stage *st, struct rte_mempool *mp, unsigned n);
/* ABI 2.2: histogram h (index into ops->hists) is exported with its bounds and
 * sum multiplied by scale (> 0): e.g. 1.0 / rte_get_tsc_hz() for values in TSC
 * cycles exported in seconds. From init(); 1 until then. */
void lcp_hist_set_scale(struct lcp_stage *st, unsigned h, double scale);
/* ABI 1.2: ask the engine to end the run as if --duration had expired (drain,
 * stop, fini). Any lcore may call it; the first reason given (a string that
 * stays valid, e.g. a literal) is reported as the stop reason. */
void lcp_stage_request_stop(struct lcp_stage *st, const char *why);
/* whether an output port is linked to anything */
bool lcp_port_is_linked(const struct lcp_stage *st, unsigned port);

#ifdef __cplusplus
}
#endif
#endif
