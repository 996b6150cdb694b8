/* SPDX-License-Identifier: BSD-3-Clause
 * tcp_app_stage.c — tcp_app's options and its life: the option table and
 * validate, init (the context and its connection table, the file mapped, the
 * send pool, one entry per CONNECT), stop (the summary line, the result
 * file), fini (the result again if events came after stop, free), and the
 * result file itself (tcp_app_write_result).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <rte_common.h>
#include <rte_cycles.h>
#include <rte_errno.h>
#include <rte_malloc.h>
#include <rte_mbuf.h>

#include "ip4_port.h"
#include "sha_hex.h"
#include "tcp_app.h"

static const char *const tcp_app_modes[] = { "recv", "send", "echo", NULL };

const struct lcp_opt tcp_app_opts[] = {
	LCP_OPT_ENUM(struct tcp_app_conf, mode, "mode", "\"recv\"", tcp_app_modes, 0,
		     "recv: hash what arrives; send: send \"file\" on every connection, then CLOSE; echo: send back every DATA mbuf"),
	LCP_OPT_STRING(struct tcp_app_conf, connect, "connect", "\"\"", 0, 21, 0,
		       "A.B.C.D:port to connect to at start; empty = none"),
	LCP_OPT_UINT(struct tcp_app_conf, connections, "connections", "1", 1, TCP_APP_MAX_CONNECT, 0,
		     "CONNECT commands to emit (user cookies 1..N)"),
	LCP_OPT_UINT(struct tcp_app_conf, listen, "listen", "0", 0, UINT16_MAX, 0,
		     "local port to LISTEN on at start (user 0); 0 = none"),
	LCP_OPT_STRING(struct tcp_app_conf, file, "file", "\"\"", 0, 4095, 0,
		       "send mode: the file whose bytes are sent on every connection"),
	LCP_OPT_STRING(struct tcp_app_conf, result, "result", "\"\"", 0, 4095, 0,
		       "JSON result file written at stop (per connection bytes, SHA-256, events); empty = none"),
	LCP_OPT_UINT(struct tcp_app_conf, expect, "expect", "0", 0, 1000000, 0,
		     "end the run once this many connections reached CLOSED/RESET/TIMEOUT (or their CONNECT failed); 0 = never"),
	LCP_OPT_BOOL(struct tcp_app_conf, close_on_peer_close, "close_on_peer_close", "true",
		     "CLOSE a connection when the peer closed it (send mode: after the whole file)"),
	LCP_OPT_UINT(struct tcp_app_conf, rate_mbps, "rate_mbps", "0", 0, 100000, 0,
		     "send mode: at most this many megabits per second over all connections; 0 = no limit"),
	LCP_OPT_UINT(struct tcp_app_conf, burst_bytes, "burst_bytes", "65536", 1, 1 << 30, 0,
		     "send mode: at most this many bytes per connection per poll"),
	LCP_OPT_UINT(struct tcp_app_conf, seg_size, "seg_size", "1400", 1, 9000, 0,
		     "send mode: bytes per SEND mbuf at most"),
	LCP_OPT_UINT(struct tcp_app_conf, max_conns, "max_conns", "4096", 1, 65536, 0,
		     "connection table size (connect entries plus accepted ones)"),
	LCP_OPT_UINT(struct tcp_app_conf, pool_reserve, "pool_reserve", "1024", 0, 1 << 24, 0,
		     "send mode: do not allocate SEND mbufs while fewer than this many are free in the pool"),
	LCP_OPT_STRING(struct tcp_app_conf, start_file, "start_file", "\"\"", 0, 4095, 0,
		       "emit the LISTEN/CONNECT commands only once this file exists; empty = at once"),
	LCP_OPT_UINT(struct tcp_app_conf, delay_ms, "delay_ms", "0", 0, 3600000, 0,
		     "emit the LISTEN/CONNECT commands this long after the first poll"),
	LCP_OPT_UINT(struct tcp_app_conf, send_mbufs, "send_mbufs", "0", 0, 1 << 20, 0,
		     "send mode: take SEND mbufs from a pool of this many of our own (tcp frees them when acked): at most send_mbufs * seg_size bytes outstanding; 0 = the engine's pool, paced by rate_mbps"),
	LCP_OPT_END,
};

/* ---- options ---- */

int
tcp_app_validate(const void *conf, char *msg, size_t msglen)
{
	const struct tcp_app_conf *c = conf;
	uint32_t addr;
	uint16_t port;

	if (c->connect[0] != '\0' && ip4_port_parse(c->connect, &addr, &port) != 0) {
		snprintf(msg, msglen, "connect \"%s\": expected \"A.B.C.D:port\"", c->connect);
		return -EINVAL;
	}
	if (c->mode == TCP_APP_SEND && c->file[0] == '\0') {
		snprintf(msg, msglen, "mode \"send\" needs \"file\"");
		return -EINVAL;
	}
	if (c->connect[0] != '\0' && c->connections > c->max_conns) {
		snprintf(msg, msglen, "connections %" PRIu32 " > max_conns %" PRIu32,
			 c->connections, c->max_conns);
		return -EINVAL;
	}
	return 0;
}

/* ---- result ---- */

/* {"mode": "recv", "stop_requested": bool, "conns_done": n,
 *  "connections": [{"user", "conn", "peer": "ip:port", "lport", "bytes_in",
 *                   "sha256_in", "bytes_out", "send_done",
 *                   "events": {"connected", "accepted", "peer_closed", "closed",
 *                              "reset", "timeout", "error"}, "last_reason"}, ...],
 *  "unknown_conn_events": n, "refused_sends": n, "errors_no_conn": n,
 *  "last_error_no_conn": errno, "alloc_fail": n}
 * connections in the order they appeared (CONNECT entries 1..N first). Written to
 * PATH.tmp, then renamed, so a reader never sees half a file. */
static int
tcp_app_write_result(struct lcp_stage *st, struct tcp_app_ctx *x)
{
	char tmp[4200], peer[INET_ADDRSTRLEN], hex[65];
	FILE *f;
	int rc;

	if (x->result == NULL || x->result[0] == '\0')
		return 0;
	snprintf(tmp, sizeof(tmp), "%s.tmp", x->result);
	f = fopen(tmp, "w");
	if (f == NULL) {
		lcp_log(st, LCP_LOG_ERR, "cannot write %s: %s", tmp, strerror(errno));
		return -errno;
	}
	fprintf(f, "{\"mode\": \"%s\", \"stop_requested\": %s, \"conns_done\": %" PRIu32 ",\n",
		tcp_app_modes[x->mode], x->stop_requested ? "true" : "false", x->n_done);
	fprintf(f, " \"file_bytes\": %zu,\n \"connections\": [", x->file_len);
	for (uint32_t i = 0; i < x->n_conns; i++) {
		const struct tcp_app_conn *c = &x->conns[i];
		struct in_addr a = { .s_addr = c->addr };

		inet_ntop(AF_INET, &a, peer, sizeof(peer));
		sha256_hex(c->md, hex);
		fprintf(f,
			"%s\n  {\"user\": %" PRIu32 ", \"conn\": %" PRIu32 ", \"peer\": \"%s:%u\", "
			"\"lport\": %u, \"bytes_in\": %" PRIu64 ", \"sha256_in\": \"%s\", "
			"\"bytes_out\": %" PRIu64 ", \"send_done\": %s, \"terminal\": %s, "
			"\"events\": {\"connected\": %" PRIu32 ", \"accepted\": %" PRIu32
			", \"peer_closed\": %" PRIu32 ", \"closed\": %" PRIu32 ", \"reset\": %" PRIu32
			", \"timeout\": %" PRIu32 ", \"error\": %" PRIu32 "}, \"last_reason\": %u}",
			i ? "," : "", c->user, c->conn, peer, c->port, c->lport, c->bytes_in, hex,
			c->bytes_out, c->send_done ? "true" : "false", c->terminal ? "true" : "false",
			c->ev[LCP_STREAM_EV_CONNECTED], c->ev[LCP_STREAM_EV_ACCEPTED],
			c->ev[LCP_STREAM_EV_PEER_CLOSED], c->ev[LCP_STREAM_EV_CLOSED],
			c->ev[LCP_STREAM_EV_RESET], c->ev[LCP_STREAM_EV_TIMEOUT],
			c->ev[LCP_STREAM_EV_ERROR], c->last_reason);
	}
	fprintf(f, "],\n \"unknown_conn_events\": %" PRIu64 ", \"refused_sends\": %" PRIu64
		", \"errors_no_conn\": %" PRIu64 ", \"last_error_no_conn\": %u, \"alloc_fail\": %" PRIu64 "}\n",
		x->unknown_conn_events, x->refused_sends, x->errors_no_conn, x->last_error_no_conn,
		x->alloc_fail);
	rc = ferror(f) ? -EIO : 0;
	if (fclose(f) != 0)
		rc = -errno;
	if (rc == 0 && rename(tmp, x->result) != 0)
		rc = -errno;
	if (rc != 0)
		lcp_log(st, LCP_LOG_ERR, "cannot write %s: %s", x->result, strerror(-rc));
	x->result_written = true;
	x->dirty = false;
	return rc;
}

/* ---- init / fini ---- */

static void
tcp_app_free(struct tcp_app_ctx *x)
{
	if (x == NULL)
		return;
	for (uint32_t i = 0; i < x->n_conns; i++)
		EVP_MD_CTX_free(x->conns[i].md);
	if (x->file != NULL)
		munmap((void *)(uintptr_t)x->file, x->file_len);
	/* a pool whose mbufs are still out (tcp's fini runs after ours) is left to
	 * the engine's leak check rather than freed under them */
	if (x->send_pool != NULL && rte_mempool_in_use_count(x->send_pool) == 0)
		rte_mempool_free(x->send_pool);
	rte_free(x->buckets);
	rte_free(x);
}

static int
tcp_app_map_file(struct lcp_stage *st, struct tcp_app_ctx *x, const char *path)
{
	struct stat sb;
	void *p;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0 || fstat(fd, &sb) != 0) {
		int e = errno;

		lcp_log(st, LCP_LOG_ERR, "file %s: %s", path, strerror(e));
		if (fd >= 0)
			close(fd);
		return -e;
	}
	x->file_len = (size_t)sb.st_size;
	if (x->file_len > 0) {
		p = mmap(NULL, x->file_len, PROT_READ, MAP_PRIVATE | MAP_POPULATE, fd, 0);
		if (p == MAP_FAILED) {
			int e = errno;

			lcp_log(st, LCP_LOG_ERR, "file %s: mmap: %s", path, strerror(e));
			close(fd);
			return -e;
		}
		x->file = p;
	}
	close(fd);
	return 0;
}

int
tcp_app_init(struct lcp_stage *st, const void *conf, void **ctx)
{
	const struct tcp_app_conf *c = conf;
	struct rte_mempool *pool = lcp_stage_pktmbuf_pool(st);
	struct tcp_app_ctx *x;
	char msg[160];
	uint32_t hsize = 16, room;
	int rc;

	if (tcp_app_validate(conf, msg, sizeof(msg)) != 0) {
		lcp_log(st, LCP_LOG_ERR, "%s", msg);
		return -EINVAL;
	}
	if (pool == NULL) {
		lcp_log(st, LCP_LOG_ERR, "the engine has no packet mbuf pool for socket %d",
			lcp_stage_socket(st));
		return -ENOENT;
	}
	room = rte_pktmbuf_data_room_size(pool);
	room = room > RTE_PKTMBUF_HEADROOM ? room - RTE_PKTMBUF_HEADROOM : 0;
	if (c->mode == TCP_APP_SEND && c->seg_size > room) {
		lcp_log(st, LCP_LOG_ERR, "seg_size %" PRIu32 " does not fit one mbuf (%" PRIu32 " bytes of data room)",
			c->seg_size, room);
		return -EINVAL;
	}
	x = lcp_stage_zmalloc(st, "the context and its max_conns table",
			      sizeof(*x) + (size_t)c->max_conns * sizeof(x->conns[0]));
	if (x == NULL)
		return -ENOMEM;
	while (hsize < 2 * c->max_conns)
		hsize <<= 1;
	x->buckets = lcp_stage_zmalloc(st, "the connection hash", hsize * sizeof(int32_t));
	if (x->buckets == NULL) {
		rte_free(x);
		return -ENOMEM;
	}
	for (uint32_t i = 0; i < hsize; i++)
		x->buckets[i] = -1;
	x->hmask = hsize - 1;
	x->max_conns = c->max_conns;
	x->pool = pool;
	x->mode = c->mode;
	x->listen_port = (uint16_t)c->listen;
	x->result = c->result;
	x->start_file = c->start_file;
	x->expect = c->expect;
	x->close_on_peer_close = c->close_on_peer_close;
	x->rate_Bps = c->rate_mbps * 125000u;
	x->burst_bytes = c->burst_bytes;
	x->seg_size = c->seg_size;
	x->pool_reserve = c->pool_reserve;
	x->hz = rte_get_tsc_hz();
	x->delay_tsc = (uint64_t)c->delay_ms * (x->hz / 1000);
	x->credit_max = RTE_MAX((uint64_t)c->burst_bytes, x->rate_Bps / 100) * x->hz;

	if (c->mode == TCP_APP_SEND) {
		rc = tcp_app_map_file(st, x, c->file);
		if (rc != 0) {
			tcp_app_free(x);
			return rc;
		}
	}
	if (c->mode == TCP_APP_SEND && c->send_mbufs > 0) {
		char name[RTE_MEMPOOL_NAMESIZE];

		snprintf(name, sizeof(name), "tapp_%.18s", lcp_stage_name(st));
		x->send_pool = rte_pktmbuf_pool_create(name, c->send_mbufs,
						       RTE_MIN(256u, c->send_mbufs / 2), 0,
						       rte_pktmbuf_data_room_size(pool),
						       lcp_stage_socket(st));
		if (x->send_pool == NULL) {
			lcp_log(st, LCP_LOG_ERR, "cannot create the send pool of %" PRIu32 " mbufs: %s",
				c->send_mbufs, rte_strerror(rte_errno));
			tcp_app_free(x);
			return -ENOMEM;
		}
	}
	if (c->connect[0] != '\0') {
		ip4_port_parse(c->connect, &x->connect_addr, &x->connect_port);
		for (uint32_t i = 0; i < c->connections; i++) {
			struct tcp_app_conn *e = tcp_app_new(st, x, i + 1);

			if (e == NULL) {
				lcp_log(st, LCP_LOG_ERR, "cannot set up connection %" PRIu32, i + 1);
				tcp_app_free(x);
				return -ENOMEM;
			}
			e->addr = x->connect_addr;
			e->port = x->connect_port;
		}
		x->n_connect = c->connections;
	}
	lcp_log(st, LCP_LOG_INFO, "mode %s, connect \"%s\" x%" PRIu32 ", listen %" PRIu32
		", expect %" PRIu32 "%s%s", tcp_app_modes[c->mode], c->connect,
		x->n_connect, c->listen, c->expect, c->mode == TCP_APP_SEND ? ", file " : "",
		c->mode == TCP_APP_SEND ? c->file : "");
	*ctx = x;
	return 0;
}

void
tcp_app_fini(struct lcp_stage *st, void *ctx)
{
	struct tcp_app_ctx *x = ctx;

	if (x == NULL)
		return;
	if (!x->result_written || x->dirty)
		tcp_app_write_result(st, x);
	tcp_app_free(x);
}

/* ---- stop ---- */

void
tcp_app_stop(struct lcp_stage *st, void *ctx)
{
	struct tcp_app_ctx *x = ctx;
	uint64_t in = 0, out = 0;

	for (uint32_t i = 0; i < x->n_conns; i++) {
		in += x->conns[i].bytes_in;
		out += x->conns[i].bytes_out;
	}
	lcp_log(st, LCP_LOG_INFO,
		"%" PRIu32 " connection(s), %" PRIu32 " done, %" PRIu64 " bytes in, %" PRIu64
		" bytes out, %" PRIu64 " refused sends, %" PRIu64 " unknown-connection events",
		x->n_conns, x->n_done, in, out, x->refused_sends, x->unknown_conn_events);
	tcp_app_write_result(st, x);
}
