/* SPDX-License-Identifier: BSD-3-Clause
 * tcp_app — a plain TCP client/server application on top of the `tcp` stage,
 * speaking the `stream` unit (lcp/stream.h): connect or listen, send a file,
 * echo, or receive and hash (doc/tcp.md, "tcp_app"). The L2 tests
 * tests/kernel/tcp_*.sh drive it against the Linux kernel's TCP, and B15 uses it
 * for bulk transfers.
 *
 * Wiring:  tcp.data -> app.in   (events and in-order payload from tcp)
 *          app.out  -> tcp.app  (commands to tcp)
 *
 * What it does:
 *  - At its first poll() after start (or, with "start_file" / "delay_ms", once
 *    that file exists / that long after the first poll) it emits a LISTEN command
 *    if "listen" is set (user 0), then "connections" CONNECT commands to "connect"
 *    (user = 1..N).
 *  - Every DATA mbuf is hashed (SHA-256, all bytes of the connection in order) and
 *    counted per connection; in "echo" mode the same mbuf is turned into a SEND on
 *    the same connection (zero copy), otherwise freed.
 *  - In "send" mode, once a connection is CONNECTED or ACCEPTED, the whole "file"
 *    is sent on it as SEND commands of at most "seg_size" bytes each (copied from
 *    an mmap of the file into mbufs of the engine's pool), then CLOSE.
 *  - PEER_CLOSED -> CLOSE (if "close_on_peer_close"; in send mode only after the
 *    whole file was handed to tcp). CLOSE commands decided in process() are emitted
 *    from the next poll(), so tcp never sees a command re-entrantly from the event
 *    it is delivering (echo SENDs are emitted at the end of the burst).
 *  - When "expect" connections have reached a terminal event (CLOSED, RESET,
 *    TIMEOUT, or the ERROR of a CONNECT that failed: conn 0), it asks the engine
 *    to end the run (lcp_stage_request_stop, reason "tcp_app: done"). An ERROR
 *    on a live connection (a refused command) does not end it (doc/tcp.md).
 *  - "result": a JSON file, written at stop() and re-written at fini() if events
 *    arrived after stop() (see tcp_app_write_result, tcp_app_stage.c, for its
 *    shape).
 *
 * Send pacing. A SEND beyond the tcp stage's send buffer is held by the stage
 * (SEND_FULL, then SEND_ROOM once it drained): tcp_app sends nothing more on
 * that connection in between. A SEND refused with ENOBUFS (a tcp stage before
 * the send queue) would be lost to the stream: tcp_app still counts every such
 * refusal ("refused_sends" in the result and the counter), which makes the
 * transfer fail: the tests assert refused_sends == 0. So a run must keep what
 * tcp_app pushes ahead of the peer's acks below tcp's send buffer (the tcp
 * stage's "sndbuf" option, bytes queued including unacked ones). Two ways:
 *  - "send_mbufs" = N > 0 (the robust one): SEND mbufs come from a pool of N
 *    mbufs of tcp_app's own. The tcp stage keeps a SEND mbuf until its bytes are
 *    acked and then frees it back to that pool, so at most N * seg_size bytes are
 *    ever outstanding and an empty pool simply means "wait for acks" (counted in
 *    pool_wait). Needs sndbuf >= send_mbufs * seg_size.
 *  - otherwise SEND mbufs come from the engine's pool, paced only by "rate_mbps"
 *    (a TSC token bucket over all connections, 0 = flat out); "pool_reserve"
 *    keeps that many of the engine's mbufs free for the receive path (acks must
 *    still come in while tcp holds sent data). With rate_mbps = 0 the whole file
 *    may be queued at once, so use sndbuf >= file size then.
 * Either way "burst_bytes" bounds the bytes per connection per poll().
 *
 * Since ABI 2.0 an lcp_emit() to tcp on the same lcore queues the commands for
 * the worker's walk: tcp's answer (events) arrives after poll() or process()
 * returns, never inside them. The state is all in the context and poll()
 * re-reads a connection's state after every emit all the same, which also
 * covers a tcp stage on another lcore.
 */
#include <errno.h>
#include <inttypes.h>
#include <string.h>
#include <unistd.h>

#include <rte_branch_prediction.h>
#include <rte_common.h>
#include <rte_cycles.h>
#include <rte_mbuf.h>
#include <rte_mempool.h>

#include "tcp_app.h"

static const struct lcp_port_def tcp_app_ports[] = {
	[TCP_APP_IN] = { .name = "in", .dir = LCP_PORT_IN, .unit = LCP_UNIT_STREAM,
			 .flags = LCP_PORT_F_REQUIRED,
			 .doc = "events and payload from the tcp stage (tcp.data)" },
	[TCP_APP_OUT] = { .name = "out", .dir = LCP_PORT_OUT, .unit = LCP_UNIT_STREAM,
			  .doc = "commands to the tcp stage (tcp.app)" },
	LCP_PORT_END,
};

static const char *const tcp_app_counters[] = { TCP_APP_COUNTERS(LCP_COUNTER_NAME) NULL };

/* ---- connection table ---- */

static inline uint32_t
tcp_app_hash(const struct tcp_app_ctx *x, uint32_t conn)
{
	return (conn * 2654435761u) & x->hmask;
}

static struct tcp_app_conn *
tcp_app_find(struct tcp_app_ctx *x, uint32_t conn)
{
	int32_t i;

	if (conn == 0)
		return NULL;
	for (i = x->buckets[tcp_app_hash(x, conn)]; i >= 0; i = x->conns[i].next)
		if (x->conns[i].conn == conn)
			return &x->conns[i];
	return NULL;
}

static void
tcp_app_bind(struct tcp_app_ctx *x, struct tcp_app_conn *c, uint32_t conn)
{
	uint32_t h = tcp_app_hash(x, conn);

	c->conn = conn;
	c->next = x->buckets[h];
	x->buckets[h] = (int32_t)(c - x->conns);
	c->in_hash = true;
}

static void
tcp_app_unbind(struct tcp_app_ctx *x, struct tcp_app_conn *c)
{
	int32_t *pp, idx = (int32_t)(c - x->conns);

	if (!c->in_hash)
		return;
	for (pp = &x->buckets[tcp_app_hash(x, c->conn)]; *pp >= 0; pp = &x->conns[*pp].next)
		if (*pp == idx) {
			*pp = c->next;
			break;
		}
	c->in_hash = false;
	c->next = -1;
}

/* a new entry (not in the hash yet), or NULL when the table is full */
struct tcp_app_conn *
tcp_app_new(struct lcp_stage *st, struct tcp_app_ctx *x, uint32_t user)
{
	struct tcp_app_conn *c;

	if (x->n_conns >= x->max_conns) {
		lcp_count(st, TCP_APP_CONN_TABLE_FULL, 1);
		return NULL;
	}
	c = &x->conns[x->n_conns];
	memset(c, 0, sizeof(*c));
	c->next = -1;
	c->user = user;
	c->md = EVP_MD_CTX_new();
	if (c->md == NULL || EVP_DigestInit_ex(c->md, EVP_sha256(), NULL) != 1) {
		EVP_MD_CTX_free(c->md);
		c->md = NULL;
		lcp_count(st, TCP_APP_CONN_TABLE_FULL, 1);
		return NULL;
	}
	x->n_conns++;
	return c;
}

/* The entry an event belongs to. Known conn id first; then, for a connection
 * this stage opened, the CONNECT entry with the event's user cookie that has no
 * id yet; CONNECTED / ACCEPTED of anything else make a new entry. */
static struct tcp_app_conn *
tcp_app_lookup(struct lcp_stage *st, struct tcp_app_ctx *x, const struct lcp_stream_meta *m)
{
	struct tcp_app_conn *c = tcp_app_find(x, m->conn);

	if (c != NULL)
		return c;
	if (m->ev != LCP_STREAM_EV_ACCEPTED && m->user >= 1 && m->user <= x->n_connect) {
		c = &x->conns[m->user - 1];
		if (c->conn == 0 && !c->terminal) {
			if (m->conn != 0)
				tcp_app_bind(x, c, m->conn);
			return c;
		}
	}
	if ((m->ev == LCP_STREAM_EV_CONNECTED || m->ev == LCP_STREAM_EV_ACCEPTED) && m->conn != 0) {
		c = tcp_app_new(st, x, m->user);
		if (c != NULL)
			tcp_app_bind(x, c, m->conn);
		return c;
	}
	return NULL;
}

static void
tcp_app_terminal(struct lcp_stage *st, struct tcp_app_ctx *x, struct tcp_app_conn *c)
{
	if (c->terminal)
		return;
	c->terminal = true;
	c->sending = false;
	tcp_app_unbind(x, c);
	x->n_done++;
	lcp_count(st, TCP_APP_CONNS_DONE, 1);
	if (x->expect != 0 && x->n_done >= x->expect && !x->stop_requested) {
		x->stop_requested = true;
		lcp_log(st, LCP_LOG_INFO, "%" PRIu32 " connection(s) done: ending the run", x->n_done);
		lcp_stage_request_stop(st, "tcp_app: done");
	}
}

/* ---- commands ---- */

static void
tcp_app_cmd_meta(struct rte_mbuf *m, unsigned cmd, uint32_t conn, uint32_t addr, uint16_t port,
		 uint32_t user)
{
	struct lcp_stream_meta *md = lcp_stream_meta(m);

	memset(md, 0, sizeof(*md));
	md->ev = (uint16_t)cmd;
	md->conn = conn;
	md->addr = addr;
	md->port = port;
	md->user = user;
}

/* one empty command mbuf; false (counted) when the pool is empty */
static bool
tcp_app_cmd(struct lcp_stage *st, struct tcp_app_ctx *x, unsigned cmd, uint32_t conn,
	    uint32_t addr, uint16_t port, uint32_t user)
{
	struct rte_mbuf *m = rte_pktmbuf_alloc(x->pool);

	if (m == NULL) {
		x->alloc_fail++;
		lcp_count(st, TCP_APP_ALLOC_FAIL, 1);
		return false;
	}
	tcp_app_cmd_meta(m, cmd, conn, addr, port, user);
	lcp_count(st, TCP_APP_CMDS, 1);
	lcp_emit(st, TCP_APP_OUT, (void **)&m, 1);
	return true;
}

/* LISTEN, then the CONNECTs not yet emitted; false = not all (pool empty):
 * the rest is retried at the next poll */
static bool
tcp_app_start_cmds(struct lcp_stage *st, struct tcp_app_ctx *x)
{
	struct rte_mbuf *ms[TCP_APP_BATCH];

	if (x->listen_port != 0) {
		if (!tcp_app_cmd(st, x, LCP_STREAM_CMD_LISTEN, 0, 0, x->listen_port, 0))
			return false;
		x->listen_port = 0; /* done */
	}
	while (x->n_connect_sent < x->n_connect) {
		uint32_t i = x->n_connect_sent;
		uint32_t k = RTE_MIN((uint32_t)TCP_APP_BATCH, x->n_connect - i);

		if (rte_pktmbuf_alloc_bulk(x->pool, ms, k) != 0) {
			x->alloc_fail++;
			lcp_count(st, TCP_APP_ALLOC_FAIL, 1);
			return false;
		}
		for (uint32_t j = 0; j < k; j++)
			tcp_app_cmd_meta(ms[j], LCP_STREAM_CMD_CONNECT, 0, x->connect_addr,
					 x->connect_port, i + j + 1);
		x->n_connect_sent = i + k; /* before the emit: tcp may answer re-entrantly */
		lcp_count(st, TCP_APP_CMDS, k);
		lcp_emit(st, TCP_APP_OUT, (void **)ms, k);
	}
	return true;
}

static void
tcp_app_want_close(struct tcp_app_ctx *x, struct tcp_app_conn *c)
{
	if (c->close_want || c->close_sent || c->terminal || c->conn == 0)
		return;
	c->close_want = true;
	x->n_closes++;
}

/* emit the CLOSE commands decided since the last poll */
static unsigned
tcp_app_flush_closes(struct lcp_stage *st, struct tcp_app_ctx *x)
{
	unsigned work = 0;

	for (uint32_t i = 0; i < x->n_conns && x->n_closes > 0; i++) {
		struct tcp_app_conn *c = &x->conns[i];
		struct rte_mbuf *m;

		if (!c->close_want)
			continue;
		if (c->terminal || c->close_sent) {
			c->close_want = false;
			x->n_closes--;
			continue;
		}
		m = rte_pktmbuf_alloc(x->pool);
		if (m == NULL) {
			x->alloc_fail++;
			lcp_count(st, TCP_APP_ALLOC_FAIL, 1);
			break; /* retried next poll */
		}
		tcp_app_cmd_meta(m, LCP_STREAM_CMD_CLOSE, c->conn, c->addr, c->port, c->user);
		c->close_want = false;
		c->close_sent = true;
		x->n_closes--;
		lcp_count(st, TCP_APP_CMDS, 1);
		lcp_emit(st, TCP_APP_OUT, (void **)&m, 1);
		work++;
	}
	return work;
}

/* send mode: hand the next part of the file to tcp on every sending connection */
static unsigned
tcp_app_send_pass(struct lcp_stage *st, struct tcp_app_ctx *x)
{
	struct rte_mbuf *ms[TCP_APP_BATCH];
	struct rte_mempool *pool = x->send_pool != NULL ? x->send_pool : x->pool;
	uint64_t budget = UINT64_MAX;
	unsigned work = 0;

	if (x->rate_Bps != 0) {
		uint64_t now = rte_rdtsc(), dt;

		if (x->last_tsc == 0) {
			x->last_tsc = now;
			x->credit = (uint64_t)x->burst_bytes * x->hz;
		}
		dt = now - x->last_tsc;
		x->last_tsc = now;
		if (dt > x->hz / 10)
			dt = x->hz / 10;
		x->credit += dt * x->rate_Bps;
		if (x->credit > x->credit_max)
			x->credit = x->credit_max;
		budget = x->credit / x->hz;
	}
	for (uint32_t i = 0; i < x->n_conns && budget > 0; i++) {
		struct tcp_app_conn *c = &x->conns[i];
		uint64_t quota;

		if (!c->sending || c->tx_full)
			continue;
		quota = RTE_MIN((uint64_t)x->burst_bytes, budget);
		while (quota > 0 && c->sending && c->file_off < x->file_len) {
			uint64_t left = RTE_MIN(quota, x->file_len - c->file_off), bytes = 0;
			uint32_t k = (uint32_t)RTE_MIN((uint64_t)TCP_APP_BATCH,
						       (left + x->seg_size - 1) / x->seg_size);

			if (x->send_pool == NULL && x->pool_reserve != 0 &&
			    rte_mempool_avail_count(x->pool) < k + x->pool_reserve) {
				lcp_count(st, TCP_APP_POOL_WAIT, 1);
				return work;
			}
			if (rte_pktmbuf_alloc_bulk(pool, ms, k) != 0) {
				/* our own pool: take what there is (fewer than k; some
				 * may sit in another lcore's cache) */
				unsigned avail = x->send_pool != NULL ? rte_mempool_avail_count(pool) : 0;

				if (avail == 0 || avail >= k ||
				    rte_pktmbuf_alloc_bulk(pool, ms, avail) != 0) {
					if (x->send_pool != NULL) {
						/* all our SEND mbufs in flight: wait for acks */
						lcp_count(st, TCP_APP_POOL_WAIT, 1);
					} else {
						x->alloc_fail++;
						lcp_count(st, TCP_APP_ALLOC_FAIL, 1);
					}
					return work;
				}
				k = avail;
			}
			for (uint32_t j = 0; j < k; j++) {
				uint16_t len = (uint16_t)RTE_MIN((uint64_t)x->seg_size, left - bytes);
				char *d = rte_pktmbuf_append(ms[j], len);

				memcpy(d, x->file + c->file_off + bytes, len);
				tcp_app_cmd_meta(ms[j], LCP_STREAM_CMD_SEND, c->conn, c->addr, c->port,
						 c->user);
				bytes += len;
			}
			c->file_off += bytes;
			c->bytes_out += bytes;
			quota -= bytes;
			budget -= bytes;
			if (x->rate_Bps != 0)
				x->credit -= bytes * x->hz;
			lcp_count(st, TCP_APP_SEND_SEGS, k);
			lcp_count(st, TCP_APP_BYTES_OUT, bytes);
			work += k;
			lcp_emit(st, TCP_APP_OUT, (void **)ms, k); /* may end c re-entrantly */
		}
		if (c->sending && c->file_off >= x->file_len) {
			c->sending = false;
			c->send_done = true;
			tcp_app_want_close(x, c); /* FIN after the last byte */
		}
	}
	return work;
}

static unsigned
tcp_app_poll(struct lcp_stage *st, void *ctx)
{
	struct tcp_app_ctx *x = ctx;
	unsigned work = 0;

	if (unlikely(!x->started)) {
		uint64_t now;

		if (lcp_stage_stopping(st))
			return 0;
		now = rte_rdtsc();
		if (x->first_poll_tsc == 0)
			x->first_poll_tsc = now;
		if (now - x->first_poll_tsc < x->delay_tsc)
			return 0;
		if (x->start_file[0] != '\0') {
			if (now < x->next_check_tsc)
				return 0;
			x->next_check_tsc = now + x->hz / 100; /* look every 10 ms */
			if (access(x->start_file, F_OK) != 0)
				return 0;
		}
		if (!tcp_app_start_cmds(st, x))
			return 0;
		x->started = true;
		work++;
	}
	if (x->mode == TCP_APP_SEND && !lcp_stage_stopping(st))
		work += tcp_app_send_pass(st, x);
	if (x->n_closes > 0)
		work += tcp_app_flush_closes(st, x);
	return work;
}

/* ---- events ---- */

static void
tcp_app_event(struct lcp_stage *st, struct tcp_app_ctx *x, struct rte_mbuf *m)
{
	struct lcp_stream_meta *md = lcp_stream_meta(m);
	unsigned ev = md->ev;
	struct tcp_app_conn *c;

	if (ev < LCP_STREAM_EV_CONNECTED || ev > LCP_STREAM_EV_SEND_ROOM) {
		lcp_count(st, TCP_APP_DROP_BAD_EVENT, 1);
		return;
	}
	c = tcp_app_lookup(st, x, md);
	if (c == NULL) {
		if (ev == LCP_STREAM_EV_ERROR && md->conn == 0) {
			x->errors_no_conn++;
			x->last_error_no_conn = md->reason;
			lcp_log(st, LCP_LOG_WARNING, "error without a connection (user %" PRIu32 "): %s",
				md->user, strerror(md->reason));
		} else {
			x->unknown_conn_events++;
			lcp_count(st, TCP_APP_UNKNOWN_CONN_EVENTS, 1);
		}
		return;
	}
	c->ev[ev]++;
	if (md->reason != 0)
		c->last_reason = md->reason;
	switch (ev) {
	case LCP_STREAM_EV_CONNECTED:
	case LCP_STREAM_EV_ACCEPTED:
		c->addr = md->addr;
		c->port = md->port;
		c->lport = md->lport;
		if (x->mode == TCP_APP_SEND && !c->send_done && !c->terminal)
			c->sending = true;
		break;
	case LCP_STREAM_EV_PEER_CLOSED:
		/* send mode: the CLOSE follows the last byte of the file */
		if (x->close_on_peer_close && !c->sending)
			tcp_app_want_close(x, c);
		break;
	case LCP_STREAM_EV_RESET:
	case LCP_STREAM_EV_TIMEOUT:
		lcp_log(st, LCP_LOG_NOTICE, "connection %" PRIu32 " (user %" PRIu32 "): %s, %s",
			c->conn, c->user, lcp_stream_ev_name(ev), strerror(md->reason));
		tcp_app_terminal(st, x, c);
		break;
	case LCP_STREAM_EV_CLOSED:
		tcp_app_terminal(st, x, c);
		break;
	case LCP_STREAM_EV_SEND_FULL:
		c->tx_full = true;
		break;
	case LCP_STREAM_EV_SEND_ROOM:
		c->tx_full = false;
		break;
	case LCP_STREAM_EV_ERROR:
		if (md->reason == ENOBUFS) {
			x->refused_sends++;
			lcp_count(st, TCP_APP_REFUSED_SENDS, 1);
		}
		if (c->ev[ev] <= 3)
			lcp_log(st, LCP_LOG_NOTICE, "connection %" PRIu32 " (user %" PRIu32 "): error %s",
				md->conn, c->user, strerror(md->reason));
		/* conn 0: our CONNECT failed, there is no connection. Otherwise a
		 * command failed (doc/tcp.md: SEND refused with ENOBUFS, ...) and
		 * the connection lives on; its end is a CLOSED/RESET/TIMEOUT. */
		if (md->conn == 0)
			tcp_app_terminal(st, x, c);
		break;
	}
}

static void
tcp_app_process(struct lcp_stage *st, void *ctx, unsigned port, void **objs, unsigned n)
{
	struct tcp_app_ctx *x = ctx;
	unsigned k = 0; /* echo SENDs, compacted at the front of objs */

	if (x->result_written)
		x->dirty = true;
	lcp_count(st, TCP_APP_EVENTS, n);
	for (unsigned i = 0; i < n; i++) {
		struct rte_mbuf *m = objs[i], *s;
		struct lcp_stream_meta *md = lcp_stream_meta(m);
		struct tcp_app_conn *c;
		uint32_t len;

		if (md->ev != LCP_STREAM_EV_DATA) {
			tcp_app_event(st, x, m);
			rte_pktmbuf_free(m);
			continue;
		}
		c = tcp_app_lookup(st, x, md);
		if (c == NULL || c->terminal) {
			x->unknown_conn_events++;
			lcp_count(st, TCP_APP_DROP_UNKNOWN_CONN, 1);
			rte_pktmbuf_free(m);
			continue;
		}
		len = rte_pktmbuf_pkt_len(m);
		for (s = m; s != NULL; s = s->next)
			EVP_DigestUpdate(c->md, rte_pktmbuf_mtod(s, const void *), s->data_len);
		c->bytes_in += len;
		lcp_count(st, TCP_APP_DATA_SEGS, 1);
		lcp_count(st, TCP_APP_BYTES_IN, len);
		if (x->mode == TCP_APP_ECHO) {
			md->ev = LCP_STREAM_CMD_SEND; /* same conn, same bytes: zero copy */
			c->bytes_out += len;
			lcp_count(st, TCP_APP_SEND_SEGS, 1);
			lcp_count(st, TCP_APP_BYTES_OUT, len);
			objs[k++] = m;
		} else {
			rte_pktmbuf_free(m);
		}
	}
	if (k > 0)
		lcp_emit(st, TCP_APP_OUT, objs, k);
}

static const struct lcp_stage_ops tcp_app_ops = {
	.ports = tcp_app_ports,
	.counters = tcp_app_counters,
	.validate = tcp_app_validate,
	.init = tcp_app_init,
	.poll = tcp_app_poll,
	.process = tcp_app_process,
	.stop = tcp_app_stop,
	.fini = tcp_app_fini,
};

LCP_PLUGIN_EXPORT const struct lcp_plugin lcp_plugin_descriptor = {
	LCP_PLUGIN_HEADER(LCP_KIND_STAGE, "tcp_app"),
	.version = "1.0.0",
	.summary = "test application on the tcp stage: connect/listen, recv (SHA-256), send a file, echo",
	.options = tcp_app_opts,
	.conf_size = sizeof(struct tcp_app_conf),
	.ops = &tcp_app_ops,
};
