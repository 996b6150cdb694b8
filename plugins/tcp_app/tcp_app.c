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
 *    arrived after stop() (see tcp_app_write_result for its shape).
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

#include <openssl/evp.h>

#include <rte_common.h>
#include <rte_cycles.h>
#include <rte_errno.h>
#include <rte_malloc.h>
#include <rte_mbuf.h>
#include <rte_mempool.h>

#include <lcp/lcp.h>

#define TCP_APP_BATCH 64         /* mbufs per lcp_emit from poll() */
#define TCP_APP_MAX_CONNECT 1000 /* "connections" */
#define TCP_APP_N_EV (LCP_STREAM_EV_SEND_ROOM + 1)

enum { TCP_APP_IN, TCP_APP_OUT };

static const struct lcp_port_def tcp_app_ports[] = {
	[TCP_APP_IN] = { .name = "in", .dir = LCP_PORT_IN, .unit = LCP_UNIT_STREAM,
			 .flags = LCP_PORT_F_REQUIRED,
			 .doc = "events and payload from the tcp stage (tcp.data)" },
	[TCP_APP_OUT] = { .name = "out", .dir = LCP_PORT_OUT, .unit = LCP_UNIT_STREAM,
			  .doc = "commands to the tcp stage (tcp.app)" },
	LCP_PORT_END,
};

#define TCP_APP_COUNTERS(X)                                                    \
	X(EVENTS, "events")                                                    \
	X(DATA_SEGS, "data_segs")                                              \
	X(BYTES_IN, "bytes_in")                                                \
	X(BYTES_OUT, "bytes_out")                                              \
	X(SEND_SEGS, "send_segs")                                              \
	X(CMDS, "cmds")                                                        \
	X(CONNS_DONE, "conns_done")                                            \
	X(REFUSED_SENDS, "refused_sends")                                      \
	X(ALLOC_FAIL, "alloc_fail")                                            \
	X(POOL_WAIT, "pool_wait")                                              \
	X(UNKNOWN_CONN_EVENTS, "unknown_conn_events")                          \
	X(CONN_TABLE_FULL, "conn_table_full")                                  \
	X(DROP_UNKNOWN_CONN, "drop_unknown_conn")                              \
	X(DROP_BAD_EVENT, "drop_bad_event")
enum {
#define X(e, s) TCP_APP_##e,
	TCP_APP_COUNTERS(X)
#undef X
};
static const char *const tcp_app_counters[] = {
#define X(e, s) s,
	TCP_APP_COUNTERS(X)
#undef X
	NULL,
};

enum tcp_app_mode { TCP_APP_RECV, TCP_APP_SEND, TCP_APP_ECHO };
static const char *const tcp_app_modes[] = { "recv", "send", "echo", NULL };

struct tcp_app_conf {
	int mode;
	const char *connect;
	uint32_t connections;
	uint32_t listen;
	const char *file;
	const char *result;
	uint32_t expect;
	bool close_on_peer_close;
	uint64_t rate_mbps;
	uint32_t burst_bytes;
	uint32_t seg_size;
	uint32_t max_conns;
	uint32_t pool_reserve;
	const char *start_file;
	uint32_t delay_ms;
	uint32_t send_mbufs;
};

static const struct lcp_opt tcp_app_opts[] = {
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

struct tcp_app_conn {
	uint32_t conn; /* tcp's id, 0 until known */
	uint32_t user;
	uint32_t addr; /* peer, network order */
	uint16_t port; /* peer, host order */
	uint16_t lport;
	int32_t next; /* hash chain, -1 = end */
	bool in_hash;
	bool terminal;
	bool sending;    /* send mode: connected, file not yet all handed to tcp */
	bool send_done;  /* send mode: whole file handed to tcp */
	bool close_want; /* CLOSE decided, not yet emitted */
	bool close_sent;
	bool tx_full;    /* SEND_FULL: tcp holds our SENDs; none more until SEND_ROOM */
	uint16_t last_reason;
	uint64_t bytes_in;
	uint64_t bytes_out;
	uint64_t file_off; /* send mode: next byte of the file to send */
	uint32_t ev[TCP_APP_N_EV];
	EVP_MD_CTX *md;
};

struct tcp_app_ctx {
	struct rte_mempool *pool;      /* the engine's: commands (and SENDs without send_mbufs) */
	struct rte_mempool *send_pool; /* send_mbufs > 0: SEND mbufs */
	int mode;
	uint32_t connect_addr; /* network order, 0 = none */
	uint16_t connect_port;
	uint16_t listen_port;
	uint32_t n_connect;
	uint32_t n_connect_sent; /* CONNECT commands emitted so far */
	const uint8_t *file; /* mmap, NULL if empty */
	size_t file_len;
	const char *result;
	const char *start_file;
	uint32_t expect;
	bool close_on_peer_close;
	uint64_t rate_Bps; /* bytes per second, 0 = no limit */
	uint32_t burst_bytes;
	uint32_t seg_size;
	uint32_t pool_reserve;
	uint64_t hz;
	uint64_t delay_tsc;
	uint64_t first_poll_tsc; /* 0 until the first poll */
	uint64_t next_check_tsc; /* start_file polling */
	uint64_t last_tsc;       /* token bucket */
	uint64_t credit;         /* bytes * hz */
	uint64_t credit_max;
	bool started;
	bool stop_requested;
	bool result_written;
	bool dirty; /* something changed after the result was written */
	uint32_t n_done;
	uint32_t n_closes; /* entries with close_want set */
	uint64_t unknown_conn_events;
	uint64_t refused_sends;
	uint64_t errors_no_conn;
	uint16_t last_error_no_conn;
	uint64_t alloc_fail;
	uint32_t max_conns;
	uint32_t n_conns;
	uint32_t hmask;
	int32_t *buckets; /* hmask + 1 heads, -1 = empty */
	struct tcp_app_conn conns[];
};

/* ---- options ---- */

static int
tcp_app_parse_connect(const char *s, uint32_t *addr, uint16_t *port)
{
	char buf[32];
	const char *colon = strrchr(s, ':');
	struct in_addr a;
	unsigned long p;
	char *end;

	if (colon == NULL || (size_t)(colon - s) >= sizeof(buf))
		return -EINVAL;
	memcpy(buf, s, (size_t)(colon - s));
	buf[colon - s] = '\0';
	if (inet_pton(AF_INET, buf, &a) != 1)
		return -EINVAL;
	errno = 0;
	p = strtoul(colon + 1, &end, 10);
	if (errno != 0 || end == colon + 1 || *end != '\0' || p == 0 || p > UINT16_MAX)
		return -EINVAL;
	*addr = a.s_addr;
	*port = (uint16_t)p;
	return 0;
}

static int
tcp_app_validate(const void *conf, char *msg, size_t msglen)
{
	const struct tcp_app_conf *c = conf;
	uint32_t addr;
	uint16_t port;

	if (c->connect[0] != '\0' && tcp_app_parse_connect(c->connect, &addr, &port) != 0) {
		snprintf(msg, msglen, "connect \"%s\" is not A.B.C.D:port", c->connect);
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
static struct tcp_app_conn *
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

/* ---- result ---- */

static void
tcp_app_sha_hex(const struct tcp_app_conn *c, char hex[65])
{
	unsigned char d[EVP_MAX_MD_SIZE];
	unsigned len = 0;
	EVP_MD_CTX *t = EVP_MD_CTX_new();

	hex[0] = '\0';
	if (t == NULL || c->md == NULL || EVP_MD_CTX_copy_ex(t, c->md) != 1 ||
	    EVP_DigestFinal_ex(t, d, &len) != 1 || len != 32) {
		EVP_MD_CTX_free(t);
		return;
	}
	EVP_MD_CTX_free(t);
	for (unsigned i = 0; i < len; i++)
		snprintf(hex + 2 * i, 3, "%02x", d[i]);
}

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
		tcp_app_sha_hex(c, hex);
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

static int
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
	x = rte_zmalloc_socket("tcp_app", sizeof(*x) + (size_t)c->max_conns * sizeof(x->conns[0]),
			       RTE_CACHE_LINE_SIZE, lcp_stage_socket(st));
	if (x == NULL) {
		lcp_log(st, LCP_LOG_ERR, "cannot allocate the context for %" PRIu32 " connections",
			c->max_conns);
		return -ENOMEM;
	}
	while (hsize < 2 * c->max_conns)
		hsize <<= 1;
	x->buckets = rte_malloc_socket("tcp_app_hash", hsize * sizeof(int32_t), 0,
				       lcp_stage_socket(st));
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
		tcp_app_parse_connect(c->connect, &x->connect_addr, &x->connect_port);
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

static void
tcp_app_fini(struct lcp_stage *st, void *ctx)
{
	struct tcp_app_ctx *x = ctx;

	if (x == NULL)
		return;
	if (!x->result_written || x->dirty)
		tcp_app_write_result(st, x);
	tcp_app_free(x);
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

/* ---- stop ---- */

static void
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
