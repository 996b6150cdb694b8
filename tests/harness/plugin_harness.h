/* SPDX-License-Identifier: BSD-3-Clause
 * plugin_harness.h — a C test harness for stage plugins (as tests/stack/harness.h
 * is for the stack): one stage, built by liblcp itself, driven by the test on
 * the calling thread.
 *
 * lcp_h_new() writes a config with the stage under test ("dut") and one h_tap
 * stage (h_tap.c) linked to each of its ports, and loads it with lcp_cfg_load():
 * the plugin is found through the registry (the build tree's plugins), its
 * options go through the option walker and its validate op, its links through
 * the graph checks. lcp_engine_build() then makes the stages, counters, edges
 * and the engine's mbuf pool, and lcp_engine_init_stages() runs init and start.
 * No lcore is launched: lcp_h_turn() runs one turn of each lcore's loop on the
 * calling thread (lcp_worker_turn: the stage's poll, its rings, the walk of its
 * input vectors), so every call a stage gets is the one the worker would make.
 *
 *   lcp_h_push(h, "in", objs, n)   emit n objects from the tap of input port
 *                                  "in", then one turn: the stage gets them in
 *                                  process(), as from an upstream stage
 *   lcp_h_out_n / lcp_h_out(h, "msg")   what the stage emitted on output port
 *                                  "msg" so far, in order; lcp_h_out_clear()
 *                                  frees it
 *   lcp_h_ctr(h, "msgs")           a counter by name, the engine's (in, out,
 *                                  drop_*) and the stage's own
 *   lcp_h_mbufs_in_use(h)          mbufs of the engine's pool not in the pool:
 *                                  what the stage and the taps hold
 *   lcp_h_linger(h, last)          the shutdown's linger (LCP_RUN_DRAIN): one
 *                                  turn, the stage's linger op's answer
 *   lcp_h_free(h)                  stop() (LCP_RUN_STOP), the turns that drain
 *                                  it, fini; then asserts that every mbuf, pool
 *                                  object and harness message came back
 *
 * Objects the test builds: lcp_h_pkt() and lcp_h_stream() take mbufs from the
 * engine's pool; lcp_h_msg() makes a message whose release() is counted
 * (lcp_h_msgs_freed), so a test sees which messages a stage freed.
 *
 * EAL starts once per process (lcp_h_eal; each forked Check test is a process):
 * --no-huge --no-pci --no-shconf, its lcores all on CPU 0, a --file-prefix
 * with the pid. Stages run on lcore 1; the collectors named in ring_ports on
 * lcore 2, behind a ring with the link's batch module. Every failure is a Check
 * assertion in the calling test.
 */
#ifndef LCP_PLUGIN_HARNESS_H
#define LCP_PLUGIN_HARNESS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <rte_mbuf.h>

#include <lcp/lcp.h>

struct lcp_h;

struct lcp_h_conf {
	const char *plugin;	/* the stage plugin under test, by name */
	const char *options;	/* its "options", a JSON object's text; NULL: defaults */
	const char *strategies; /* its "strategies", a JSON object's text; NULL: the engine's */
	const char *engine;	/* the config's "engine" object's text; NULL: defaults */
	const char *unlinked;	/* its ports left without a tap, comma-separated; NULL: none */
	const char *ring_ports; /* output ports, comma-separated, whose tap is on lcore 2,
				 * behind a ring (and the link's batch module); NULL: none */
	const char *link;	/* more members of those ring links, a JSON object's
				 * text such as {"batch": "batch_burst"}; NULL: none */
	const char *plugin_dir; /* searched before the build tree's plugins (the
				 * config's plugin_path), e.g. an out-of-tree
				 * plugin's; NULL: none */
};

/* EAL, once per process */
void lcp_h_eal(void);

/* the stage built, inited and started; any refusal fails the test */
struct lcp_h *lcp_h_new(const struct lcp_h_conf *c);
/* the same, but a refusal (config error, init or start failure) returns NULL
 * with what the engine said in err (errors one per line) */
struct lcp_h *lcp_h_try_new(const struct lcp_h_conf *c, char *err, size_t len);
/* stop if not yet stopped, fini, free; asserts nothing leaked */
void lcp_h_free(struct lcp_h *h);

struct lcp_stage *lcp_h_stage(struct lcp_h *h);
void *lcp_h_ctx(struct lcp_h *h);
struct rte_mempool *lcp_h_pktpool(struct lcp_h *h);

/* objects to push */
struct rte_mbuf *lcp_h_pkt(struct lcp_h *h, const void *data, size_t len);
struct rte_mbuf *lcp_h_stream(struct lcp_h *h, unsigned ev, uint32_t conn, uint32_t user,
			      uint32_t off, const void *data, size_t len);
struct lcp_msg *lcp_h_msg(struct lcp_h *h, uint64_t conn_id, uint16_t opcode, const void *data,
			  size_t len);

/* emit objs from the tap of input port `port`, then one turn; returns the
 * turn's work */
unsigned lcp_h_push(struct lcp_h *h, const char *port, void **objs, unsigned n);
unsigned lcp_h_push1(struct lcp_h *h, const char *port, void *obj);
/* one turn of every lcore's loop (the stage's lcore first); the work done */
unsigned lcp_h_turn(struct lcp_h *h);

/* what output port `port` delivered so far, in order */
unsigned lcp_h_out_n(struct lcp_h *h, const char *port);
void **lcp_h_out(struct lcp_h *h, const char *port);
/* process() calls its tap got: the bursts it was handed */
unsigned lcp_h_out_bursts(struct lcp_h *h, const char *port);
/* free what it delivered so far */
void lcp_h_out_clear(struct lcp_h *h, const char *port);

/* a counter of the stage by name; an unknown name fails the test */
uint64_t lcp_h_ctr(struct lcp_h *h, const char *name);
bool lcp_h_has_ctr(struct lcp_h *h, const char *name);
/* counters and the values they must have: lcp_h_ctrs_eq(h, {"msgs", 4},
 * {"symbols", 1}) asserts each, the first that differs failing the test with
 * its name, value and expected value */
struct lcp_h_ctr_want {
	const char *name; /* NULL: the end of the list */
	uint64_t v;
};
#define lcp_h_ctrs_eq(h, ...)                                                                      \
	lcp_h_ctrs_eq_list((h), (const struct lcp_h_ctr_want[]){__VA_ARGS__, {NULL, 0}})
void lcp_h_ctrs_eq_list(struct lcp_h *h, const struct lcp_h_ctr_want *want);

/* mbufs of the engine's pool in use (held by the stage, the taps or the test) */
unsigned lcp_h_mbufs_in_use(struct lcp_h *h);
/* objects out of the stage's lcp_pool_create() pools */
unsigned lcp_h_pools_in_use(struct lcp_h *h);
/* harness messages released so far, and those not yet released */
uint64_t lcp_h_msgs_freed(struct lcp_h *h);
uint64_t lcp_h_msgs_live(struct lcp_h *h);
/* what the stage passed to lcp_stage_request_stop(), or NULL */
const char *lcp_h_stop_request(struct lcp_h *h);

/* the shutdown's linger: LCP_RUN_DRAIN (sources stop producing), `last` as
 * the engine's second round says it, then one turn, whose first call is the
 * stage's linger op; returns what it answered (the connections it is still
 * closing). Pushes may follow, as the peer's answers. A stage without a
 * linger op fails the test. */
unsigned lcp_h_linger(struct lcp_h *h, bool last);

/* the shutdown as the worker runs it: LCP_RUN_STOP, every stage's stop(),
 * turns until one does no work; then nothing more may be pushed */
void lcp_h_stop(struct lcp_h *h);

/* a scratch directory for the test, under the build tree:
 * harness/scratch-<name>-<pid>, made empty; lcp_h_scratch_rm() removes it
 * and frees the name (the config of a stage lives in one until lcp_h_free) */
char *lcp_h_scratch(const char *name);
void lcp_h_scratch_rm(char *dir);

#endif
