/* SPDX-License-Identifier: BSD-3-Clause
 * tee — tap a live link: everything on "in" goes on to "out" untouched (the
 * same objects: the main path stays zero copy), and a copy of every `every`-th
 * object goes to "copy" (to sink_pcap, or any stage). The same for messages on
 * "msg_in" / "msg_out" / "msg_copy" (to sink_file, sink_nats...).
 *
 * Copies, not references: the stages downstream of "out" may change what
 * they were given (the tcp stage moves an mbuf's data offset, TLS decrypts in
 * place), and the tap must show what crossed the link. A frame's copy comes
 * from a pool of the stage's own (copy_mbufs; rte_pktmbuf_copy, which keeps the
 * rx timestamp), cut to snaplen bytes if set; a message's copy from a pool of
 * fixed-size objects (msg_copies of msg_copy_bytes). When there is no room for
 * a copy the copy is dropped and counted (drop_no_copy, drop_copy_too_big):
 * never the original, never a wait.
 *
 * To tap "a.x -> b.y", put a tee between: "a.x -> t.in", "t.out -> b.y",
 * "t.copy -> cap.in" (doc/sinks.md, "Tapping a link"). The copies are made
 * before the objects go on (lcp_emit() of the whole input vector moves it).
 */
#include <errno.h>
#include <string.h>

#include <rte_mbuf.h>

#include <lcp/lcp.h>

enum { TEE_IN, TEE_OUT, TEE_COPY, TEE_MSG_IN, TEE_MSG_OUT, TEE_MSG_COPY };

static const struct lcp_port_def tee_ports[] = {
	[TEE_IN] = { .name = "in", .dir = LCP_PORT_IN, .unit = LCP_UNIT_PKT, .doc = "frames of the tapped link" },
	[TEE_OUT] = { .name = "out", .dir = LCP_PORT_OUT, .unit = LCP_UNIT_PKT, .flags = LCP_PORT_F_FORWARDS(TEE_IN),
		      .doc = "the same frames, on to where the link went; if unlinked they are freed" },
	[TEE_COPY] = { .name = "copy", .dir = LCP_PORT_OUT, .unit = LCP_UNIT_PKT,
		       .doc = "copies of every `every`-th frame, cut to snaplen" },
	[TEE_MSG_IN] = { .name = "msg_in", .dir = LCP_PORT_IN, .unit = LCP_UNIT_MSG, .doc = "messages of the tapped link" },
	[TEE_MSG_OUT] = { .name = "msg_out", .dir = LCP_PORT_OUT, .unit = LCP_UNIT_MSG,
			  .flags = LCP_PORT_F_FORWARDS(TEE_MSG_IN),
			  .doc = "the same messages, on to where the link went; if unlinked they are freed" },
	[TEE_MSG_COPY] = { .name = "msg_copy", .dir = LCP_PORT_OUT, .unit = LCP_UNIT_MSG,
			   .doc = "copies of every `every`-th message (payload, conn_id, rx TSC, flags)" },
	LCP_PORT_END,
};

#define TEE_COUNTERS(X)                                                        \
	X(COPIES, "copies")                                                    \
	X(COPY_BYTES, "copy_bytes")                                            \
	X(DROP_NO_COPY, "drop_no_copy")                                        \
	X(DROP_COPY_TOO_BIG, "drop_copy_too_big")

enum {
#define X(e, s) TEE_##e,
	TEE_COUNTERS(X)
#undef X
};

static const char *const tee_counters[] = { TEE_COUNTERS(LCP_COUNTER_NAME) NULL };

struct tee_conf {
	uint32_t every;
	uint32_t snaplen;
	uint32_t copy_mbufs;
	uint32_t msg_copies;
	uint32_t msg_copy_bytes;
};

static const struct lcp_opt tee_opts[] = {
	LCP_OPT_UINT(struct tee_conf, every, "every", "1", 1, UINT32_MAX, 0,
		     "copy every N-th object of each input (1: all of them)"),
	LCP_OPT_UINT(struct tee_conf, snaplen, "snaplen", "0", 0, 65535, 0,
		     "bytes of a frame to copy, from its start (0: all of it)"),
	LCP_OPT_UINT(struct tee_conf, copy_mbufs, "copy_mbufs", "4096", 0, 1 << 24, 0,
		     "mbufs in the pool the frame copies come from (0: no frame copies, only messages)"),
	LCP_OPT_UINT(struct tee_conf, msg_copies, "msg_copies", "4096", 0, 1 << 24, 0,
		     "message copies that can be out at once (0: no message copies)"),
	LCP_OPT_UINT(struct tee_conf, msg_copy_bytes, "msg_copy_bytes", "2048", 16, 1 << 20, 0,
		     "the longest message copied; a longer one's copy is dropped (drop_copy_too_big)"),
	LCP_OPT_END,
};

struct tee_ctx {
	struct rte_mempool *mp; /* frame copies */
	struct lcp_pool *msgs;  /* message copies: struct tee_msg + payload */
	uint32_t every, snaplen, msg_max;
	uint32_t seen[2];      /* objects since the last copy, per input */
	bool copy_linked[2];
	struct lcp_msg_owner owner;
};

/* a message copy: the msg, then its payload */
struct tee_msg {
	struct lcp_msg m;
	struct lcp_pool *pool;
	uint8_t data[];
};

static void
tee_msg_release(struct lcp_msg *m)
{
	struct tee_msg *t = (struct tee_msg *)m;

	lcp_pool_put(t->pool, t);
}

static int
tee_init(struct lcp_stage *st, const void *conf, void **ctx)
{
	const struct tee_conf *c = conf;
	struct tee_ctx *x = *ctx;

	x->every = c->every;
	x->snaplen = c->snaplen;
	x->msg_max = c->msg_copy_bytes;
	x->copy_linked[0] = lcp_port_is_linked(st, TEE_COPY);
	x->copy_linked[1] = lcp_port_is_linked(st, TEE_MSG_COPY);
	if (x->copy_linked[0] && c->copy_mbufs > 0) {
		x->mp = lcp_stage_pktmbuf_pool_create(st, "tee", c->copy_mbufs);
		if (x->mp == NULL) {
			lcp_log(st, LCP_LOG_ERR, "copy_mbufs: cannot create a pool of %u mbufs", c->copy_mbufs);
			return -ENOMEM;
		}
	}
	if (x->copy_linked[1] && c->msg_copies > 0) {
		x->msgs = lcp_pool_create(st, "copies", sizeof(struct tee_msg) + c->msg_copy_bytes, c->msg_copies, 0);
		if (x->msgs == NULL)
			return -ENOMEM;
	}
	lcp_log(st, LCP_LOG_INFO, "tapping%s%s: a copy of every %u%s object, %s", x->copy_linked[0] ? " frames" : "",
		x->copy_linked[1] ? " messages" : "", x->every, x->every == 1 ? "" : "-th",
		x->snaplen ? "frames cut to snaplen" : "whole");
	return 0;
}

/* the inputs' objects to copy: every every-th, counting across bursts */
static inline bool
tee_take(struct tee_ctx *x, unsigned k)
{
	if (++x->seen[k] < x->every)
		return false;
	x->seen[k] = 0;
	return true;
}

/* k copies out on port, counted */
static inline void
tee_emit_copies(struct lcp_stage *st, unsigned port, void **c, unsigned k)
{
	lcp_emit(st, port, c, k);
	lcp_count(st, TEE_COPIES, k);
}

/* a burst's copies: their bytes, and those that found no buffer */
static inline void
tee_count_copied(struct lcp_stage *st, uint64_t bytes, unsigned fail)
{
	lcp_count(st, TEE_COPY_BYTES, bytes);
	if (fail > 0)
		lcp_count(st, TEE_DROP_NO_COPY, fail);
}

/* a frame's copy (snaplen bytes at most) from the copy pool, or NULL */
static inline void *
tee_copy_frame(struct tee_ctx *x, void *obj, uint64_t *bytes)
{
	struct rte_mbuf *d;

	if (x->mp == NULL)
		return NULL;
	d = rte_pktmbuf_copy(obj, x->mp, 0, x->snaplen ? x->snaplen : UINT32_MAX);
	if (d != NULL)
		*bytes += rte_pktmbuf_pkt_len(d);
	return d;
}

/* a message's copy from the stage's message pool, or NULL */
static inline void *
tee_copy_msg(struct tee_ctx *x, void *obj, uint64_t *bytes)
{
	const struct lcp_msg *m = obj;
	struct tee_msg *t = x->msgs != NULL ? lcp_pool_get(x->msgs) : NULL;

	if (t == NULL)
		return NULL;
	memcpy(t->data, m->data, m->len);
	t->pool = x->msgs;
	t->m = (struct lcp_msg){ .conn_id = m->conn_id,
				 .rx_tsc = m->rx_tsc,
				 .data = t->data,
				 .len = m->len,
				 .opcode = m->opcode,
				 .flags = (uint16_t)(m->flags & (LCP_MSG_F_SESSION_START | LCP_MSG_F_LOSS)),
				 .release = tee_msg_release,
				 .owner = x->msgs,
				 .lost = (m->flags & LCP_MSG_F_LOSS) ? m->lost : 0 };
	*bytes += m->len;
	return &t->m;
}

/* copies of a burst's sampled objects out on the copy port of their kind
 * (0: frames, 1: messages), 64 at a time; a message above msg_max is not
 * copied (drop_copy_too_big), one that finds no buffer neither (drop_no_copy) */
static inline void
tee_copies(struct lcp_stage *st, struct tee_ctx *x, unsigned kind, void **objs, unsigned n)
{
	const unsigned port = kind ? TEE_MSG_COPY : TEE_COPY;
	void *c[64];
	unsigned k = 0, fail = 0, big = 0;
	uint64_t bytes = 0;

	for (unsigned i = 0; i < n; i++) {
		void *d;

		if (!tee_take(x, kind))
			continue;
		if (kind && ((const struct lcp_msg *)objs[i])->len > x->msg_max) {
			big++;
			continue;
		}
		d = kind ? tee_copy_msg(x, objs[i], &bytes) : tee_copy_frame(x, objs[i], &bytes);
		if (d == NULL) {
			fail++;
			continue;
		}
		c[k++] = d;
		if (k == RTE_DIM(c)) {
			tee_emit_copies(st, port, c, k);
			k = 0;
		}
	}
	if (k > 0)
		tee_emit_copies(st, port, c, k);
	tee_count_copied(st, bytes, fail);
	if (big > 0)
		lcp_count(st, TEE_DROP_COPY_TOO_BIG, big);
}

static void
tee_process(struct lcp_stage *st, void *ctx, unsigned port, void **objs, unsigned n)
{
	struct tee_ctx *x = ctx;

	/* the copies first: emitting the whole input vector moves it away */
	if (port == TEE_IN) {
		if (x->copy_linked[0])
			tee_copies(st, x, 0, objs, n);
		lcp_emit(st, TEE_OUT, objs, n);
	} else {
		if (x->copy_linked[1])
			tee_copies(st, x, 1, objs, n);
		lcp_emit(st, TEE_MSG_OUT, objs, n);
	}
}

static void
tee_fini(struct lcp_stage *st, void *ctx)
{
	struct tee_ctx *x = ctx;

	RTE_SET_USED(st);
	lcp_pool_free(x->msgs);
}

static const struct lcp_stage_ops tee_ops = {
	.ports = tee_ports,
	.counters = tee_counters,
	.init = tee_init,
	.process = tee_process,
	.fini = tee_fini,
	.ctx_size = sizeof(struct tee_ctx),
};

LCP_PLUGIN_EXPORT const struct lcp_plugin lcp_plugin_descriptor = {
	LCP_PLUGIN_HEADER(LCP_KIND_STAGE, "tee"),
	.version = "1.0.0",
	.summary = "tap a link: pass everything on untouched, and a copy of every N-th frame or message to a second output",
	.options = tee_opts,
	.conf_size = sizeof(struct tee_conf),
	.ops = &tee_ops,
};
