/* SPDX-License-Identifier: BSD-3-Clause
 * ws_rtt — WebSocket round trips: closed-loop probes through the ws stage to a
 * WebSocket echo server (feedsim with "echo", or any echo server), the
 * application-level RTT in histograms (doc/websocket.md, "ws_rtt"). B8
 * (doc/benchmarks.md) runs it against a kernel-socket echo server.
 *
 * Wiring (everything on one lcore):
 *   ws.msg -> rtt.in     echoes (and the echo of ws's "subscribe" text)
 *   rtt.out -> ws.send   probes: ws sends each msg's payload as one text frame
 *
 * The first message that arrives (the echo of the ws stage's "subscribe"
 * text, sent when the connection opens) starts the run: probe 0 goes out at
 * once. Each probe is an lcp_msg from the stage's own mempool carrying the B8
 * probe payload ("size" bytes, ws_rtt_hist.h: sequence number and the
 * TSC read just before lcp_emit()). One probe is outstanding at a time; when
 * its echo arrives (process() on "in"), the next goes out from the same call.
 * The first "warmup" probes are not recorded; then "count" are. Per recorded
 * probe, in TSC cycles, into fine histograms (ws_rtt_hist.h, 1.6 % buckets: the
 * "result" file) and into the SDK histograms rtt_seconds, rx_path_seconds,
 * wire_seconds, tx_call_seconds (lcp/hist_log4.h: the report, telemetry and
 * the metrics endpoint, live):
 *   rtt      now - the stamp in the echoed payload (the whole round trip as the
 *            application sees it: the same definition as b8_kernel_client)
 *   rx_path  now - msg->rx_tsc: the port's rx stamp to this stage (port, tcp,
 *            ws decode)
 *   wire     msg->rx_tsc - stamp: ws encode + tcp + port tx, the kernel (veth,
 *            the server), back into the port's rx ring, until rx_burst saw it
 *   tx_call  the time lcp_emit() of the probe took (ws + tcp + port tx burst,
 *            af_packet's sendto(), and whatever the kernel does inside it)
 * After the last probe the result (one JSON line, "result") is written and the
 * stage asks the engine to end the run (reason "ws_rtt: done"). An echo that
 * does not come within "timeout_ms" ends the run too ("ws_rtt: stalled"), with
 * the error in the result. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_cycles.h>
#include <rte_errno.h>
#include <rte_mempool.h>

#include <lcp/lcp.h>

#include <lcp/hist_log4.h>

#include "ws_rtt_hist.h"

enum { RTT_P_IN, RTT_P_OUT };

static const struct lcp_port_def rtt_ports[] = {
	[RTT_P_IN] = { .name = "in", .dir = LCP_PORT_IN, .unit = LCP_UNIT_MSG, .flags = LCP_PORT_F_REQUIRED,
		       .doc = "echoes from the ws stage (ws.msg)" },
	[RTT_P_OUT] = { .name = "out", .dir = LCP_PORT_OUT, .unit = LCP_UNIT_MSG, .flags = LCP_PORT_F_REQUIRED,
			.doc = "probes to the ws stage (ws.send)" },
	LCP_PORT_END,
};

#define RTT_COUNTERS(X)                                                        \
	X(PROBES, "probes")                                                    \
	X(ECHOES, "echoes")                                                    \
	X(RECORDED, "recorded")                                                \
	X(OTHER_MSGS, "other_msgs")                                            \
	X(BAD_ECHOES, "bad_echoes")                                            \
	X(DROP_NO_MSG, "drop_no_msg")
enum {
#define X(e, s) RTT_C_##e,
	RTT_COUNTERS(X)
#undef X
};
static const char *const rtt_counters[] = { RTT_COUNTERS(LCP_COUNTER_NAME) NULL };

enum { RTT_H_RTT, RTT_H_RX_PATH, RTT_H_WIRE, RTT_H_TX_CALL };
static const struct lcp_hist_def rtt_hists[] = {
	[RTT_H_RTT] = { .name = "rtt_seconds", .help = "probe round trip: sent to its echo received, as the application sees it",
			.le = lcp_hist_log4_le, .n_le = LCP_HIST_LOG4_N_LE },
	[RTT_H_RX_PATH] = { .name = "rx_path_seconds", .help = "the echo's rx stamp at the port to this stage (port, tcp, ws decode)",
			    .le = lcp_hist_log4_le, .n_le = LCP_HIST_LOG4_N_LE },
	[RTT_H_WIRE] = { .name = "wire_seconds", .help = "probe sent to its echo's rx stamp: ws encode, tcp, port tx, the network and the server",
			 .le = lcp_hist_log4_le, .n_le = LCP_HIST_LOG4_N_LE },
	[RTT_H_TX_CALL] = { .name = "tx_call_seconds", .help = "the probe's lcp_emit() call (with the ABI 2.0 walk: queuing it for ws)",
			    .le = lcp_hist_log4_le, .n_le = LCP_HIST_LOG4_N_LE },
	{ .name = NULL },
};

/* a recorded value into the fine histogram (the result file) and the SDK one */
static inline void
rtt_rec(struct lcp_stage *st, struct b8_hist *h, unsigned sdk, uint64_t v)
{
	b8_hist_add(h, v);
	lcp_hist_add(st, sdk, lcp_hist_log4_bucket(v), 1, v);
}

struct rtt_conf {
	uint64_t count;
	uint64_t warmup;
	uint32_t size;
	uint32_t conn_id;
	uint32_t timeout_ms;
	const char *result;
};

#define C struct rtt_conf
static const struct lcp_opt rtt_opts[] = {
	LCP_OPT_UINT(C, count, "count", "10000", 1, 100000000, 0, "probes recorded"),
	LCP_OPT_UINT(C, warmup, "warmup", "200", 0, 100000000, 0, "probes sent first and not recorded"),
	LCP_OPT_UINT(C, size, "size", "64", B8_PROBE_MIN, B8_PROBE_MAX, 0, "probe payload bytes (text frame)"),
	LCP_OPT_UINT(C, conn_id, "conn_id", "0", 0, 65535, 0, "the ws stage's connection to probe on"),
	LCP_OPT_UINT(C, timeout_ms, "timeout_ms", "2000", 1, 3600000, 0,
		     "an echo missing this long ends the run (ws_rtt: stalled)"),
	LCP_OPT_STRING(C, result, "result", "\"\"", 0, 4095, 0, "JSON result file (one line); empty = none"),
	LCP_OPT_END,
};
#undef C

struct rtt_msg {
	struct lcp_msg pub;
	struct rte_mempool *pool;
	uint8_t buf[B8_PROBE_MAX];
};

struct rtt_ctx {
	struct lcp_stage *st;
	struct rte_mempool *pool;
	const struct rtt_conf *conf;
	uint64_t total;       /* warmup + count */
	uint64_t timeout_tsc;
	bool started, done, complete, written; /* done: no more probes; complete: all recorded */
	bool outstanding;
	uint64_t seq;         /* of the outstanding probe */
	uint64_t t_send;
	uint64_t t_first, t_last;
	uint64_t turns;
	uint64_t bad, other;
	const char *error;
	char errbuf[160];
	struct b8_hist rtt, rx_path, wire, tx_call;
};

static void
rtt_msg_release(struct lcp_msg *pm)
{
	struct rtt_msg *m = (struct rtt_msg *)pm;

	rte_mempool_put(m->pool, m);
}

static int
rtt_init(struct lcp_stage *st, const void *conf, void **ctx)
{
	const struct rtt_conf *c = conf;
	struct rtt_ctx *x = *ctx;
	char name[RTE_MEMPOOL_NAMESIZE];

	snprintf(name, sizeof(name), "rtt_%.20s", lcp_stage_name(st));
	x->pool = rte_mempool_create(name, 63, sizeof(struct rtt_msg), 0, 0, NULL, NULL, NULL, NULL,
				     lcp_stage_socket(st), 0);
	if (x->pool == NULL) {
		lcp_log(st, LCP_LOG_ERR, "cannot create the msg pool %s: %s", name, rte_strerror(rte_errno));
		return -ENOMEM;
	}
	x->st = st;
	x->conf = c;
	x->total = c->warmup + c->count;
	x->timeout_tsc = (uint64_t)c->timeout_ms * (rte_get_tsc_hz() / 1000);
	b8_hist_reset(&x->rtt);
	b8_hist_reset(&x->rx_path);
	b8_hist_reset(&x->wire);
	b8_hist_reset(&x->tx_call);
	for (unsigned h = 0; h <= RTT_H_TX_CALL; h++)
		lcp_hist_set_scale(st, h, 1.0 / (double)rte_get_tsc_hz()); /* exported in seconds */
	return 0;
}

static void
rtt_write(struct rtt_ctx *x)
{
	const struct rtt_conf *c = x->conf;
	char tmp[4200];
	FILE *f;

	x->written = true;
	if (c->result[0] == '\0')
		return;
	snprintf(tmp, sizeof(tmp), "%s.tmp", c->result);
	f = fopen(tmp, "w");
	if (f == NULL) {
		lcp_log(x->st, LCP_LOG_ERR, "cannot write %s: %s", tmp, strerror(errno));
		return;
	}
	fprintf(f,
		"{\"bench\":\"B8\",\"client\":\"lcpipe\",\"size\":%" PRIu32 ",\"warmup\":%" PRIu64
		",\"count\":%" PRIu64 ",\"complete\":%s,\"started\":%s,\"errors\":%" PRIu64
		",\"other_msgs\":%" PRIu64 ",\"lcore\":%u,\"tsc_hz\":%" PRIu64 ",\"wall_ns\":%.0f,\"error\":",
		c->size, c->warmup, c->count, x->complete ? "true" : "false", x->started ? "true" : "false", x->bad,
		x->other, lcp_stage_lcore(x->st), rte_get_tsc_hz(),
		x->t_last > x->t_first ? (double)(x->t_last - x->t_first) * 1e9 / (double)rte_get_tsc_hz() : 0.0);
	if (x->error != NULL)
		fprintf(f, "\"%s\"", x->error);
	else
		fprintf(f, "null");
	fprintf(f, ",\"rtt\":{");
	b8_hist_json(f, &x->rtt);
	fprintf(f, "},\"rx_path\":{");
	b8_hist_json(f, &x->rx_path);
	fprintf(f, "},\"wire\":{");
	b8_hist_json(f, &x->wire);
	fprintf(f, "},\"tx_call\":{");
	b8_hist_json(f, &x->tx_call);
	fprintf(f, "}}\n");
	if (ferror(f) | (fclose(f) != 0)) {
		lcp_log(x->st, LCP_LOG_ERR, "cannot write %s", tmp);
		return;
	}
	if (rename(tmp, c->result) != 0)
		lcp_log(x->st, LCP_LOG_ERR, "cannot rename %s to %s: %s", tmp, c->result, strerror(errno));
}

static void
rtt_finish(struct rtt_ctx *x, const char *why)
{
	rtt_write(x);
	lcp_stage_request_stop(x->st, why);
}

/* the next probe: state first (the emit runs ws, tcp and the port right now) */
static void
rtt_send(struct rtt_ctx *x, uint64_t seq)
{
	struct rtt_msg *m;
	uint64_t t;

	if (rte_mempool_get(x->pool, (void **)&m) != 0) {
		lcp_count(x->st, RTT_C_DROP_NO_MSG, 1);
		snprintf(x->errbuf, sizeof(x->errbuf), "msg pool empty at probe %" PRIu64, seq);
		x->error = x->errbuf;
		x->done = true;
		rtt_finish(x, "ws_rtt: stalled");
		return;
	}
	m->pool = x->pool;
	m->pub.conn_id = x->conf->conn_id;
	m->pub.rx_tsc = 0;
	m->pub.data = m->buf;
	m->pub.len = x->conf->size;
	m->pub.opcode = 1; /* text */
	m->pub.flags = 0;
	m->pub.release = rtt_msg_release;
	m->pub.owner = x;
	m->pub.backing[0] = m->pub.backing[1] = NULL;
	x->seq = seq;
	x->outstanding = true;
	t = rte_rdtsc();
	b8_probe_fill(m->buf, x->conf->size, seq, t);
	x->t_send = t;
	lcp_count(x->st, RTT_C_PROBES, 1);
	lcp_emit(x->st, RTT_P_OUT, (void **)&m, 1);
	if (seq >= x->conf->warmup)
		rtt_rec(x->st, &x->tx_call, RTT_H_TX_CALL, rte_rdtsc() - t);
}

static void
rtt_process(struct lcp_stage *st, void *ctx, unsigned port, void **objs, unsigned n)
{
	struct rtt_ctx *x = ctx;
	uint64_t now = rte_rdtsc();
	uint64_t next = UINT64_MAX; /* the probe to send after this burst */

	(void)port;
	for (unsigned i = 0; i < n; i++) {
		struct lcp_msg *m = objs[i];
		uint64_t seq, stamp;

		if (!x->started) {
			/* the echo of the subscription: go */
			x->started = true;
			x->t_first = now;
			lcp_count(st, RTT_C_OTHER_MSGS, 1);
			x->other++;
			next = 0;
			lcp_msg_free(m);
			continue;
		}
		if (x->done || !x->outstanding || b8_probe_parse(m->data, m->len, &seq, &stamp) < 0) {
			lcp_count(st, RTT_C_OTHER_MSGS, 1);
			x->other++;
			lcp_msg_free(m);
			continue;
		}
		if (seq != x->seq || stamp != x->t_send || m->len != x->conf->size) {
			lcp_count(st, RTT_C_BAD_ECHOES, 1);
			x->bad++;
			lcp_msg_free(m);
			continue;
		}
		lcp_count(st, RTT_C_ECHOES, 1);
		x->outstanding = false;
		if (seq >= x->conf->warmup) {
			rtt_rec(st, &x->rtt, RTT_H_RTT, now - stamp);
			rtt_rec(st, &x->rx_path, RTT_H_RX_PATH, m->rx_tsc != 0 && now >= m->rx_tsc ? now - m->rx_tsc : 0);
			rtt_rec(st, &x->wire, RTT_H_WIRE, m->rx_tsc >= stamp ? m->rx_tsc - stamp : 0);
			lcp_count(st, RTT_C_RECORDED, 1);
		}
		lcp_msg_free(m);
		if (seq + 1 >= x->total) {
			x->done = x->complete = true;
			x->t_last = now;
			lcp_log(st, LCP_LOG_INFO, "%" PRIu64 " probes recorded: ending the run", x->rtt.n);
			rtt_finish(x, "ws_rtt: done");
		} else {
			next = seq + 1;
		}
	}
	if (next != UINT64_MAX && !x->done && !x->outstanding && !lcp_stage_stopping(st))
		rtt_send(x, next);
}

static unsigned
rtt_poll(struct lcp_stage *st, void *ctx)
{
	struct rtt_ctx *x = ctx;

	/* the stall check every 1024 turns: keep the polling loop short */
	if (!x->outstanding || x->done || (++x->turns & 1023) != 0)
		return 0;
	if (rte_rdtsc() - x->t_send > x->timeout_tsc) {
		snprintf(x->errbuf, sizeof(x->errbuf), "no echo for probe %" PRIu64 " within %" PRIu32 " ms", x->seq,
			 x->conf->timeout_ms);
		x->error = x->errbuf;
		x->outstanding = false;
		x->done = true;
		lcp_log(st, LCP_LOG_ERR, "%s", x->error);
		rtt_finish(x, "ws_rtt: stalled");
	}
	return 0;
}

static void
rtt_stop(struct lcp_stage *st, void *ctx)
{
	struct rtt_ctx *x = ctx;

	if (!x->written) {
		if (x->error == NULL) {
			snprintf(x->errbuf, sizeof(x->errbuf), "the run ended before the last probe (%s, %" PRIu64
				 " recorded)", x->started ? "started" : "never started", x->rtt.n);
			x->error = x->errbuf;
		}
		rtt_write(x);
	}
	lcp_log(st, LCP_LOG_INFO, "%" PRIu64 " probes recorded, %" PRIu64 " bad echoes, %" PRIu64 " other messages",
		x->rtt.n, x->bad, x->other);
}

static void
rtt_fini(struct lcp_stage *st, void *ctx)
{
	struct rtt_ctx *x = ctx;

	if (rte_mempool_in_use_count(x->pool) != 0)
		lcp_log(st, LCP_LOG_ERR, "%u probe msg(s) never released", rte_mempool_in_use_count(x->pool));
	rte_mempool_free(x->pool);
}

static const struct lcp_stage_ops rtt_ops = {
	.ports = rtt_ports,
	.counters = rtt_counters,
	.hists = rtt_hists,
	.init = rtt_init,
	.poll = rtt_poll,
	.process = rtt_process,
	.stop = rtt_stop,
	.fini = rtt_fini,
	.ctx_size = sizeof(struct rtt_ctx),
};

LCP_PLUGIN_EXPORT const struct lcp_plugin lcp_plugin_descriptor = {
	LCP_PLUGIN_HEADER(LCP_KIND_STAGE, "ws_rtt"),
	.version = "1.0.0",
	.summary = "WebSocket round trips: closed-loop echo probes through the ws stage, RTT histograms (B8)",
	.options = rtt_opts,
	.conf_size = sizeof(struct rtt_conf),
	.ops = &rtt_ops,
};
