/* SPDX-License-Identifier: BSD-3-Clause
 * sink_check — test-only sink: checks the frames of one `gen` stage for order and
 * integrity, counts what it finds, frees every frame.
 *
 * gen writes a 64-bit big-endian sequence number at the start of the UDP payload,
 * starting at 0, followed by the byte pattern (payload offset & 0xff). This stage
 * expects sequence numbers 0, 1, 2, ... on "in" and counts:
 *   frames       every frame seen
 *   seq_ok       the frame carried exactly the expected sequence number
 *   seq_gap      the sequence number jumped forward (one event per jump)
 *   seq_missing  sequence numbers skipped over by those jumps (frames lost)
 *   seq_old      a sequence number lower than expected (duplicate or reordered)
 *   bad_frame    too short, not IPv4/UDP, or lengths that do not add up
 *   bad_payload  the pattern after the sequence number is wrong (verify_payload)
 *   tsc_back     the frame's rx TSC (lcp/mbuf.h) is older than the previous
 *                frame's: stamps out of order on a single path
 *   late         (option late_us) the frame arrived more than late_us after
 *                gen stamped it: for the batch_timed bound, with a margin of
 *                orders of magnitude, not a performance figure
 * With the option stall_us = T the stage spins T microseconds at the start of
 * every burst: a consumer slower than its producer, for the ring-full tests.
 * With stop_after = N the stage ends the run once N frames arrived, so that a
 * test waits for its frames however slow the machine is, not for a duration.
 * Nothing here is a drop: every frame is consumed and freed after the check —
 * except with the option leak = K: the first K frames are kept and never freed,
 * to check that the engine notices leaked mbufs (exit 3, leaked_objects).
 * The first wrong frames are logged (at most log_max), with what was expected.
 *
 * Built only for `make check` (tests/run.mk), against the SDK headers only.
 */
#include <errno.h>
#include <inttypes.h>
#include <string.h>

#include <rte_byteorder.h>
#include <rte_ether.h>
#include <rte_ip.h>
#include <rte_cycles.h>
#include <rte_mbuf.h>
#include <rte_udp.h>

#include <lcp/lcp.h>

#include "test_plugin.h"

#define SC_HDR_LEN                                                             \
	(sizeof(struct rte_ether_hdr) + sizeof(struct rte_ipv4_hdr) +          \
	 sizeof(struct rte_udp_hdr))

static const struct lcp_port_def sink_check_ports[] = {
	{ .name = "in", .dir = LCP_PORT_IN, .unit = LCP_UNIT_PKT,
	  .flags = LCP_PORT_F_REQUIRED, .doc = "frames of one gen stage, checked then freed" },
	LCP_PORT_END,
};

#define SINK_CHECK_COUNTERS(X)                                                 \
	X(FRAMES, "frames")                                                    \
	X(SEQ_OK, "seq_ok")                                                    \
	X(SEQ_GAP, "seq_gap")                                                  \
	X(SEQ_MISSING, "seq_missing")                                          \
	X(SEQ_OLD, "seq_old")                                                  \
	X(BAD_FRAME, "bad_frame")                                              \
	X(BAD_PAYLOAD, "bad_payload")                                          \
	X(TSC_BACK, "tsc_back")                                                \
	X(LATE, "late")
enum {
#define X(e, s) SC_##e,
	SINK_CHECK_COUNTERS(X)
#undef X
	SC_N_COUNTERS
};
static const char *const sink_check_counters[] = { SINK_CHECK_COUNTERS(LCP_COUNTER_NAME) NULL };

#define SC_LEAK_MAX 64

struct sink_check_conf {
	uint64_t first;
	bool verify_payload;
	uint32_t log_max;
	uint32_t leak;
	uint32_t late_us;
	uint32_t stall_us;
	uint64_t stop_after;
};

static const struct lcp_opt sink_check_opts[] = {
	LCP_OPT_UINT(struct sink_check_conf, first, "first", "0", 0, INT64_MAX, 0,
		     "sequence number expected first"),
	LCP_OPT_UINT(struct sink_check_conf, stop_after, "stop_after", "0", 0, INT64_MAX, 0,
		     "end the run once this many frames arrived (0: never)"),
	LCP_OPT_BOOL(struct sink_check_conf, verify_payload, "verify_payload", "true",
		     "check gen's byte pattern after the sequence number"),
	LCP_OPT_UINT(struct sink_check_conf, log_max, "log_max", "5", 0, 1000, 0,
		     "log at most this many wrong frames"),
	LCP_OPT_UINT(struct sink_check_conf, leak, "leak", "0", 0, SC_LEAK_MAX, 0,
		     "keep the first K frames and never free them (tests the engine's leak check)"),
	LCP_OPT_UINT(struct sink_check_conf, late_us, "late_us", "0", 0, 100000000, 0,
		     "count frames older than this many microseconds on arrival (0: off)"),
	LCP_OPT_UINT(struct sink_check_conf, stall_us, "stall_us", "0", 0, 1000000, 0,
		     "spin this many microseconds per burst (a slow consumer)"),
	LCP_OPT_END,
};

struct sink_check_ctx {
	uint64_t expect;
	bool verify_payload;
	uint32_t log_left;
	uint64_t last_tsc;  /* rx TSC of the previous frame */
	uint32_t leak;      /* frames still to keep */
	uint32_t n_kept;
	uint64_t late_tsc;  /* late_us in TSC cycles; 0 = off */
	uint64_t stall_tsc; /* stall_us in TSC cycles; 0 = off */
	uint64_t stop_after, frames;
	struct rte_mbuf *kept[SC_LEAK_MAX];
};

static int
sink_check_init(struct lcp_stage *st, const void *conf, void **ctx)
{
	const struct sink_check_conf *c = conf;
	struct sink_check_ctx *x = *ctx;

	x->expect = c->first;
	x->verify_payload = c->verify_payload;
	x->late_tsc = (uint64_t)c->late_us * (rte_get_tsc_hz() / 1000000);
	x->stall_tsc = (uint64_t)c->stall_us * (rte_get_tsc_hz() / 1000000);
	x->log_left = c->log_max;
	x->leak = c->leak;
	x->stop_after = c->stop_after;
	return 0;
}

/* returns the counter index for a malformed frame, or -1 if well formed; *seq set */
static int
sink_check_parse(struct sink_check_ctx *x, const struct rte_mbuf *m, uint64_t *seq)
{
	const struct rte_ether_hdr *eth;
	const struct rte_ipv4_hdr *ip;
	const struct rte_udp_hdr *udp;
	const uint8_t *pl;
	uint32_t len = rte_pktmbuf_pkt_len(m), plen;
	uint64_t be;

	if (m->nb_segs != 1 || len < SC_HDR_LEN + sizeof(be) || rte_pktmbuf_data_len(m) != len)
		return SC_BAD_FRAME;
	eth = rte_pktmbuf_mtod(m, const struct rte_ether_hdr *);
	ip = (const struct rte_ipv4_hdr *)(eth + 1);
	udp = (const struct rte_udp_hdr *)(ip + 1);
	if (eth->ether_type != rte_cpu_to_be_16(RTE_ETHER_TYPE_IPV4) ||
	    ip->version_ihl != RTE_IPV4_VHL_DEF || ip->next_proto_id != IPPROTO_UDP ||
	    rte_be_to_cpu_16(ip->total_length) + sizeof(*eth) != len ||
	    rte_be_to_cpu_16(udp->dgram_len) + sizeof(*eth) + sizeof(*ip) != len ||
	    rte_ipv4_cksum(ip) != 0) /* over a header with its checksum: 0 */
		return SC_BAD_FRAME;
	pl = (const uint8_t *)(udp + 1);
	memcpy(&be, pl, sizeof(be));
	*seq = rte_be_to_cpu_64(be);
	if (x->verify_payload) {
		plen = len - (uint32_t)SC_HDR_LEN;
		for (uint32_t i = sizeof(be); i < plen; i++)
			if (pl[i] != (uint8_t)i)
				return SC_BAD_PAYLOAD;
	}
	return -1;
}

static void
sink_check_process(struct lcp_stage *st, void *ctx, unsigned port, void **objs, unsigned n)
{
	struct sink_check_ctx *x = ctx;
	uint64_t c[SC_N_COUNTERS] = { 0 };

	RTE_SET_USED(port);
	if (x->stall_tsc != 0) {
		uint64_t t0 = rte_rdtsc();

		while (rte_rdtsc() - t0 < x->stall_tsc)
			rte_pause();
	}
	for (unsigned i = 0; i < n; i++) {
		const struct rte_mbuf *m = objs[i];
		uint64_t seq = 0;
		int bad = sink_check_parse(x, m, &seq);

		c[SC_FRAMES]++;
		if (lcp_mbuf_rx_tsc(m) < x->last_tsc) {
			c[SC_TSC_BACK]++;
			if (x->log_left > 0) {
				x->log_left--;
				lcp_log(st, LCP_LOG_ERR, "rx TSC %" PRIu64 " is %" PRIu64 " cycles older than the previous frame's",
					lcp_mbuf_rx_tsc(m), x->last_tsc - lcp_mbuf_rx_tsc(m));
			}
		}
		x->last_tsc = lcp_mbuf_rx_tsc(m);
		if (x->late_tsc != 0 && rte_rdtsc() - lcp_mbuf_rx_tsc(m) > x->late_tsc)
			c[SC_LATE]++;
		if (bad >= 0) {
			c[bad]++;
			if (x->log_left > 0) {
				x->log_left--;
				lcp_log(st, LCP_LOG_ERR, "%s: frame of %u bytes (expected seq %" PRIu64 ")",
					bad == SC_BAD_FRAME ? "malformed frame" : "wrong payload pattern",
					rte_pktmbuf_pkt_len(m), x->expect);
			}
			continue;
		}
		if (seq == x->expect) {
			c[SC_SEQ_OK]++;
			x->expect++;
			continue;
		}
		if (x->log_left > 0) {
			x->log_left--;
			lcp_log(st, LCP_LOG_ERR, "sequence %" PRIu64 ", expected %" PRIu64 " (%s)", seq,
				x->expect, seq > x->expect ? "gap" : "duplicate or reordered");
		}
		if (seq > x->expect) {
			c[SC_SEQ_GAP]++;
			c[SC_SEQ_MISSING] += seq - x->expect;
			x->expect = seq + 1;
		} else {
			c[SC_SEQ_OLD]++;
		}
	}
	tp_count_burst(st, c, SC_N_COUNTERS);
	if (x->stop_after != 0 && x->frames < x->stop_after && x->frames + n >= x->stop_after) {
		lcp_log(st, LCP_LOG_INFO, "%" PRIu64 " frames: ending the run", x->stop_after);
		lcp_stage_request_stop(st, "sink_check: stop_after");
	}
	x->frames += n;
	while (x->leak > 0 && n > 0) { /* on purpose: see the option "leak" */
		x->kept[x->n_kept++] = objs[0];
		x->leak--;
		objs++;
		n--;
	}
	rte_pktmbuf_free_bulk((struct rte_mbuf **)objs, n);
}

static void
sink_check_fini(struct lcp_stage *st, void *ctx)
{
	struct sink_check_ctx *x = ctx;

	lcp_log(st, LCP_LOG_INFO, "next expected sequence number %" PRIu64, x->expect);
	if (x->n_kept > 0)
		lcp_log(st, LCP_LOG_WARNING, "leaking %u frames on purpose (option leak)", x->n_kept);
}

static const struct lcp_stage_ops sink_check_ops = {
	.ports = sink_check_ports,
	.counters = sink_check_counters,
	.init = sink_check_init,
	.process = sink_check_process,
	.fini = sink_check_fini,
	.ctx_size = sizeof(struct sink_check_ctx),
};

LCP_PLUGIN_EXPORT const struct lcp_plugin lcp_plugin_descriptor = {
	LCP_PLUGIN_HEADER(LCP_KIND_STAGE, "sink_check"),
	.version = "1.0.0",
	.summary = "test sink: check gen's sequence numbers and payload, count gaps",
	.options = sink_check_opts,
	.conf_size = sizeof(struct sink_check_conf),
	.ops = &sink_check_ops,
};
