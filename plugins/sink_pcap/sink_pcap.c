/* SPDX-License-Identifier: BSD-3-Clause
 * sink_pcap — write `pkt` objects to a pcapng file (tshark, wireshark, capinfos),
 * then free them.
 *
 * Entry points, in call order:
 *   sink_pcap_init     create the pool rte_pcapng_copy() copies into; no file I/O
 *   sink_pcap_start    open the file, rte_pcapng_fdopen() (section header + one
 *                      interface block per ethdev port), our own interface block,
 *                      prime DPDK's pcapng clock
 *   sink_pcap_process  per chunk of up to 64 frames: rte_pcapng_copy(), fix the
 *                      interface id and timestamp of each block, one writev(),
 *                      free copies and originals
 *   sink_pcap_fini     rte_pcapng_close(), free the pool
 *
 * Interfaces: rte_pcapng_fdopen() in DPDK 22.11 writes one Interface Description
 * Block per ethdev port that exists at that moment, and rte_pcapng_write_packets()
 * maps mbuf->port through a table it only fills for those ports (the rest of the
 * table is uninitialised malloc memory, and mbuf->port of a generated frame is
 * RTE_MBUF_PORT_INVALID, past the end of the table). So this stage writes the
 * blocks itself (writev, as the library does) and adds one interface block of its
 * own, "lcpipe:<stage>", for frames that did not come from a known port. Frames
 * whose mbuf->port is a port that existed at start are filed under that port's
 * interface, direction "inbound".
 *
 * Timestamps, and why this stage writes them itself — DPDK 22.11's rte_pcapng
 * converts TSC to wall-clock time with one process-wide, unsynchronised anchor
 * (pcapng_time in lib/pcapng/rte_pcapng.c: {ns, cycles, tsc_hz}) that is set
 * lazily, on the first conversion, to "TSC now / CLOCK_REALTIME now". Each
 * conversion computes `delta = cycles - pcapng_time.cycles` in uint64_t and, when
 * delta >= tsc_hz, moves the anchor forward by delta / tsc_hz whole seconds —
 * modifying the shared state. Any timestamp OLDER than the anchor therefore wraps
 * to about 2^64 cycles: the anchor jumps 2^64 / tsc_hz seconds into the future
 * (278 years at 2.1 GHz here: the year 2305; "2251" on a 2.6-ish GHz machine),
 * and every later frame of the process inherits the jump. The very first copy
 * always hits this: its timestamp (an rx TSC) was taken before the lazy init reads
 * the TSC. That is why priming the first copy with a timestamp slightly in the
 * future "fixes" it — and also why priming alone is not enough: after the anchor
 * has advanced (it moves in whole seconds up to the newest timestamp seen), one
 * frame whose rx TSC is older than it (frames from another source, or queued a
 * little longer) breaks the clock again, for good. Verified on 22.11.11 with a
 * standalone test: unprimed first copy -> 2305; primed -> right; primed, then a
 * copy stamped before the anchor -> 2305 for it and every copy after.
 * The workaround here: (1) each Enhanced Packet Block's timestamp is overwritten
 * with our own conversion, which keeps no shared state: every process() call reads
 * the TSC and CLOCK_REALTIME once, and a frame's time is that wall-clock time
 * minus the frame's age in TSC cycles (rx TSC before or after the reading both
 * work). Anchoring per burst also means no drift: rte_get_tsc_hz() is a nominal
 * value (2.1 GHz here, 2.096 GHz measured: an anchor kept from start would be
 * seconds off after an hour), and its error now only scales a frame's age;
 * (2) to keep the library's shared clock sane for anyone else in the process
 * (pdump), it is primed at start with "now + 10 ms" and then only ever given a
 * non-decreasing capture-time TSC. The library's own value never reaches the file.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/uio.h>
#include <sys/utsname.h>

#include <rte_common.h>
#include <rte_cycles.h>
#include <rte_errno.h>
#include <rte_ethdev.h>
#include <rte_mbuf.h>
#include <rte_mempool.h>
#include <rte_pcapng.h>
#include <rte_version.h>

#include <lcp/lcp.h>

#define SINK_PCAP_CHUNK 64         /* frames copied and written per writev */
#define SINK_PCAP_POOL_SIZE 255    /* copies in flight: one chunk, with room to spare */
#define SINK_PCAP_POOL_CACHE 32
#define SINK_PCAP_MAX_COPY 16384   /* bytes of a frame kept, whatever snaplen says */
#define SINK_PCAP_TRAILER 64       /* EPB flags + queue options + block length (20), rounded up */
#define SINK_PCAP_NO_IF UINT32_MAX
#define SINK_PCAP_NSEC 1000000000ull

/* pcapng block layouts (draft-tuexen-opsawg-pcapng), host byte order as the
 * section header that rte_pcapng_fdopen() writes */
#define SINK_PCAP_BT_IDB 0x00000001u
#define SINK_PCAP_BT_EPB 0x00000006u
struct sink_pcap_epb {
	uint32_t block_type;
	uint32_t block_length;
	uint32_t interface_id;
	uint32_t timestamp_hi;
	uint32_t timestamp_lo;
	uint32_t capture_length;
	uint32_t original_length;
};
struct sink_pcap_idb {
	uint32_t block_type;
	uint32_t block_length;
	uint16_t link_type;
	uint16_t reserved;
	uint32_t snap_len;
};

enum { SINK_PCAP_IN };

static const struct lcp_port_def sink_pcap_ports[] = {
	{ .name = "in", .dir = LCP_PORT_IN, .unit = LCP_UNIT_PKT,
	  .flags = LCP_PORT_F_REQUIRED, .doc = "frames to write, then free" },
	LCP_PORT_END,
};

#define SINK_PCAP_COUNTERS(X)                                                  \
	X(PACKETS, "packets")                                                  \
	X(BYTES, "bytes")                                                      \
	X(TRUNCATED, "truncated")                                              \
	X(DROP_WRITE_ERROR, "drop_write_error")                                \
	X(DROP_COPY_FAIL, "drop_copy_fail")
enum {
#define X(e, s) SINK_PCAP_##e,
	SINK_PCAP_COUNTERS(X)
#undef X
};
static const char *const sink_pcap_counters[] = { SINK_PCAP_COUNTERS(LCP_COUNTER_NAME) NULL };

enum { SINK_PCAP_TS_RX, SINK_PCAP_TS_CAPTURE };
static const char *const sink_pcap_ts_choices[] = { "rx", "capture", NULL };

struct sink_pcap_conf {
	const char *path;
	uint32_t snaplen;
	int timestamp;
};

static const struct lcp_opt sink_pcap_opts[] = {
	LCP_OPT_STRING(struct sink_pcap_conf, path, "path", NULL, 1, 4095, LCP_OPT_F_REQUIRED,
		       "pcapng file to write; created or truncated at start"),
	LCP_OPT_UINT(struct sink_pcap_conf, snaplen, "snaplen", "65535", 14, 65535, 0,
		     "bytes of each frame kept (at most 16384); longer frames are counted in \"truncated\""),
	LCP_OPT_ENUM(struct sink_pcap_conf, timestamp, "timestamp", "\"rx\"", sink_pcap_ts_choices, 0,
		     "frame time: rx = the rx TSC stamped by the source (port rx, gen), capture = when this stage sees it"),
	LCP_OPT_END,
};

struct sink_pcap_ctx {
	const char *path;          /* from the conf, valid until fini */
	uint32_t snaplen;          /* effective: min(snaplen, SINK_PCAP_MAX_COPY) */
	int ts_mode;
	int fd;                    /* -1 until start, owned by pc after fdopen */
	rte_pcapng_t *pc;
	struct rte_mempool *pool;  /* rte_pcapng_copy() destination */
	bool broken;               /* a write failed: the file may end mid-block */
	uint32_t own_if;           /* our interface block's index */
	uint32_t port_if[RTE_MAX_ETHPORTS]; /* ethdev port -> interface index */
	uint64_t hz;               /* rte_get_tsc_hz() */
	uint64_t lib_tsc;          /* last TSC handed to rte_pcapng_copy: never decreases */
	uint64_t written, bytes;   /* for the closing log line */
};

static int
sink_pcap_init(struct lcp_stage *st, const void *conf, void **ctx)
{
	const struct sink_pcap_conf *c = conf;
	struct sink_pcap_ctx *x = *ctx;
	char name[RTE_MEMPOOL_NAMESIZE];
	uint32_t room;

	x->path = c->path;
	x->snaplen = RTE_MIN(c->snaplen, (uint32_t)SINK_PCAP_MAX_COPY);
	x->ts_mode = c->timestamp;
	x->fd = -1;

	/* One segment per copy: 22.11's rte_pcapng_copy() takes the capture length
	 * and the padding from the first segment only, so a chained copy would make
	 * a corrupt block. Headroom holds the EPB header (28) and a VLAN tag. */
	room = RTE_PKTMBUF_HEADROOM + RTE_ALIGN(x->snaplen, 4) + SINK_PCAP_TRAILER;
	snprintf(name, sizeof(name), "pcap_%s", lcp_stage_name(st));
	x->pool = rte_pktmbuf_pool_create(name, SINK_PCAP_POOL_SIZE, SINK_PCAP_POOL_CACHE, 0,
					  (uint16_t)room, lcp_stage_socket(st));
	if (x->pool == NULL && rte_errno == EEXIST) {
		snprintf(name, sizeof(name), "pcap_%p", (void *)x);
		x->pool = rte_pktmbuf_pool_create(name, SINK_PCAP_POOL_SIZE, SINK_PCAP_POOL_CACHE,
						  0, (uint16_t)room, lcp_stage_socket(st));
	}
	if (x->pool == NULL) {
		lcp_log(st, LCP_LOG_ERR, "cannot create the copy pool %s (%u x %" PRIu32 " bytes): %s",
			name, SINK_PCAP_POOL_SIZE, room, rte_strerror(rte_errno));
		return -ENOMEM;
	}
	return 0;
}

/* Our Interface Description Block, for frames not from a known ethdev port. */
static int
sink_pcap_write_idb(struct lcp_stage *st, struct sink_pcap_ctx *x)
{
	uint8_t buf[256] __rte_aligned(4);
	struct sink_pcap_idb *h = (struct sink_pcap_idb *)buf;
	char ifname[LCP_NAME_MAX + 8];
	static const char desc[] = "lcpipe frames not received on an ethdev port";
	size_t off = sizeof(*h);
	uint32_t len;

#define SINK_PCAP_OPT(code_, data_, len_)                                      \
	do {                                                                   \
		uint16_t hdr_[2] = { (code_), (uint16_t)(len_) };              \
		memcpy(buf + off, hdr_, sizeof(hdr_));                         \
		memcpy(buf + off + sizeof(hdr_), (data_), (len_));             \
		memset(buf + off + sizeof(hdr_) + (len_), 0,                   \
		       RTE_ALIGN((len_), 4) - (len_));                         \
		off += sizeof(hdr_) + RTE_ALIGN((len_), 4);                    \
	} while (0)

	snprintf(ifname, sizeof(ifname), "lcpipe:%s", lcp_stage_name(st));
	memset(buf, 0, sizeof(buf));
	SINK_PCAP_OPT(2, ifname, strlen(ifname));    /* if_name */
	SINK_PCAP_OPT(3, desc, sizeof(desc) - 1);     /* if_description */
	SINK_PCAP_OPT(9, "\x09", 1);                  /* if_tsresol: 10^-9 s */
	SINK_PCAP_OPT(0, "", 0);                      /* opt_endofopt */
#undef SINK_PCAP_OPT
	len = (uint32_t)(off + sizeof(uint32_t));
	h->block_type = SINK_PCAP_BT_IDB;
	h->block_length = len;
	h->link_type = 1; /* LINKTYPE_ETHERNET */
	h->snap_len = x->snaplen;
	memcpy(buf + off, &len, sizeof(len));
	if (write(x->fd, buf, len) != (ssize_t)len) {
		lcp_log(st, LCP_LOG_ERR, "cannot write to %s: %s", x->path, strerror(errno));
		return -EIO;
	}
	return 0;
}

/* One reading of both clocks, per process() call: the reference that frame
 * times are computed from (see the top of the file). */
struct sink_pcap_clock {
	uint64_t tsc, ns;          /* TSC and CLOCK_REALTIME (ns since the epoch) */
	uint64_t last_tsc, last_ns; /* one conversion per distinct TSC (sources stamp
				     * a whole burst with one TSC) */
};

static inline void
sink_pcap_clock_read(struct sink_pcap_clock *ck)
{
	struct timespec ts;

	ck->tsc = rte_rdtsc();
	clock_gettime(CLOCK_REALTIME, &ts);
	ck->ns = (uint64_t)ts.tv_sec * SINK_PCAP_NSEC + (uint64_t)ts.tv_nsec;
	ck->last_tsc = ck->tsc;
	ck->last_ns = ck->ns;
}

static inline uint64_t
sink_pcap_cycles_to_ns(uint64_t d, uint64_t hz)
{
	return d / hz * SINK_PCAP_NSEC + d % hz * SINK_PCAP_NSEC / hz; /* no overflow */
}

/* wall-clock ns of a TSC value near the reading */
static inline uint64_t
sink_pcap_tsc_to_ns(const struct sink_pcap_ctx *x, struct sink_pcap_clock *ck, uint64_t tsc)
{
	uint64_t d;

	if (tsc == ck->last_tsc)
		return ck->last_ns;
	ck->last_tsc = tsc;
	if (tsc <= ck->tsc) { /* the usual case: the frame is older than the reading */
		d = sink_pcap_cycles_to_ns(ck->tsc - tsc, x->hz);
		ck->last_ns = d < ck->ns ? ck->ns - d : 0;
	} else { /* stamped on another lcore a moment after our reading */
		ck->last_ns = ck->ns + sink_pcap_cycles_to_ns(tsc - ck->tsc, x->hz);
	}
	return ck->last_ns;
}

static int
sink_pcap_start(struct lcp_stage *st, void *ctx)
{
	struct sink_pcap_ctx *x = ctx;
	char app[96], comment[LCP_NAME_MAX + 16], os[160];
	struct utsname u;
	struct rte_mbuf *m, *mc;
	uint32_t idx = 0;
	uint16_t pid;
	char *p;

	x->fd = open(x->path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (x->fd < 0) {
		lcp_log(st, LCP_LOG_ERR, "cannot create %s: %s", x->path, strerror(errno));
		return -errno;
	}
	if (uname(&u) == 0)
		snprintf(os, sizeof(os), "%s %s", u.sysname, u.release);
	else
		snprintf(os, sizeof(os), "Linux");
	snprintf(app, sizeof(app), "lcpipe sink_pcap (%s)", rte_version());
	snprintf(comment, sizeof(comment), "lcpipe stage %s", lcp_stage_name(st));
	x->pc = rte_pcapng_fdopen(x->fd, os, NULL, app, comment);
	if (x->pc == NULL) {
		lcp_log(st, LCP_LOG_ERR, "rte_pcapng_fdopen(%s): %s", x->path,
			rte_strerror(rte_errno));
		close(x->fd);
		x->fd = -1;
		return -EIO;
	}
	/* the interface blocks fdopen just wrote, in its order (RTE_ETH_FOREACH_DEV) */
	for (unsigned i = 0; i < RTE_MAX_ETHPORTS; i++)
		x->port_if[i] = SINK_PCAP_NO_IF;
	RTE_ETH_FOREACH_DEV(pid)
		x->port_if[pid] = idx++;
	x->own_if = idx;
	if (sink_pcap_write_idb(st, x) != 0)
		return -EIO;

	x->hz = rte_get_tsc_hz();

	/* Prime the library's shared clock (see the top of the file): its lazy init
	 * reads the TSC after we do, so hand it a TSC 10 ms ahead. Harmless if some
	 * other user initialised it already. */
	x->lib_tsc = rte_rdtsc() + x->hz / 100;
	m = rte_pktmbuf_alloc(x->pool);
	p = m != NULL ? rte_pktmbuf_append(m, RTE_ETHER_MIN_LEN) : NULL;
	if (p == NULL) {
		rte_pktmbuf_free(m);
		lcp_log(st, LCP_LOG_ERR, "cannot allocate from the copy pool");
		return -ENOMEM;
	}
	memset(p, 0, RTE_ETHER_MIN_LEN);
	mc = rte_pcapng_copy(0, 0, m, x->pool, RTE_ETHER_MIN_LEN, x->lib_tsc,
			     RTE_PCAPNG_DIRECTION_UNKNOWN);
	rte_pktmbuf_free(mc);
	rte_pktmbuf_free(m);

	lcp_log(st, LCP_LOG_INFO, "writing %s (snaplen %" PRIu32 ", %s timestamps, %" PRIu32
		" ethdev interface(s) + lcpipe:%s)", x->path, x->snaplen,
		x->ts_mode == SINK_PCAP_TS_RX ? "rx" : "capture", idx, lcp_stage_name(st));
	return 0;
}

/* writev everything, across partial writes; 0 or -errno. *done: how many of
 * the cnt buffers were written completely. */
static int
sink_pcap_writev(int fd, struct iovec *iov, int cnt, unsigned *done)
{
	*done = 0;
	while (cnt > 0) {
		ssize_t k = writev(fd, iov, cnt);

		if (k < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		while (cnt > 0 && (size_t)k >= iov->iov_len) {
			k -= (ssize_t)iov->iov_len;
			iov++;
			cnt--;
			(*done)++;
		}
		if (cnt > 0) {
			iov->iov_base = (uint8_t *)iov->iov_base + k;
			iov->iov_len -= (size_t)k;
		}
	}
	return 0;
}

/* Copy, fix up and write up to SINK_PCAP_CHUNK frames; does not free them. */
static void
sink_pcap_chunk(struct lcp_stage *st, struct sink_pcap_ctx *x, struct rte_mbuf **pkts,
		unsigned n, struct sink_pcap_clock *ck)
{
	struct rte_mbuf *copies[SINK_PCAP_CHUNK];
	struct iovec iov[SINK_PCAP_CHUNK];
	uint32_t orig_len[SINK_PCAP_CHUNK];
	uint64_t bytes = 0;
	unsigned k = 0, done, copy_fail = 0, truncated = 0;
	int rc;

	for (unsigned i = 0; i < n; i++) {
		const struct rte_mbuf *m = pkts[i];
		uint64_t tsc = ck->tsc, ns;
		uint32_t ifx = x->own_if;
		enum rte_pcapng_direction dir = RTE_PCAPNG_DIRECTION_UNKNOWN;
		struct sink_pcap_epb *epb;
		struct rte_mbuf *mc;

		if (m->port < RTE_MAX_ETHPORTS && x->port_if[m->port] != SINK_PCAP_NO_IF) {
			ifx = x->port_if[m->port];
			dir = RTE_PCAPNG_DIRECTION_IN;
		}
		if (x->ts_mode == SINK_PCAP_TS_RX && lcp_mbuf_rx_tsc(m) != 0)
			tsc = lcp_mbuf_rx_tsc(m);
		mc = rte_pcapng_copy(m->port < RTE_MAX_ETHPORTS ? m->port : 0, 0, m, x->pool,
				     x->snaplen, x->lib_tsc, dir);
		if (unlikely(mc == NULL)) {
			copy_fail++;
			continue;
		}
		epb = rte_pktmbuf_mtod(mc, struct sink_pcap_epb *);
		if (unlikely(epb->block_type != SINK_PCAP_BT_EPB || mc->nb_segs != 1)) {
			rte_pktmbuf_free(mc); /* not the layout we know: do not write it */
			copy_fail++;
			continue;
		}
		ns = sink_pcap_tsc_to_ns(x, ck, tsc);
		epb->interface_id = ifx;
		epb->timestamp_hi = (uint32_t)(ns >> 32);
		epb->timestamp_lo = (uint32_t)ns;
		if (rte_pktmbuf_pkt_len(m) > x->snaplen)
			truncated++;
		orig_len[k] = rte_pktmbuf_pkt_len(m);
		iov[k].iov_base = epb;
		iov[k].iov_len = rte_pktmbuf_data_len(mc);
		copies[k++] = mc;
	}

	if (k != 0) {
		rc = sink_pcap_writev(x->fd, iov, (int)k, &done);
		for (unsigned i = 0; i < done; i++)
			bytes += orig_len[i];
		lcp_count(st, SINK_PCAP_PACKETS, done);
		lcp_count(st, SINK_PCAP_BYTES, bytes);
		x->written += done;
		x->bytes += bytes;
		if (unlikely(rc != 0)) {
			lcp_log(st, LCP_LOG_ERR,
				"write to %s failed: %s; this frame and all after it are dropped (drop_write_error)",
				x->path, strerror(-rc));
			x->broken = true; /* the file may end mid-block: stop appending */
			lcp_count(st, SINK_PCAP_DROP_WRITE_ERROR, k - done);
		}
		rte_pktmbuf_free_bulk(copies, k);
	}
	if (truncated != 0)
		lcp_count(st, SINK_PCAP_TRUNCATED, truncated);
	if (copy_fail != 0)
		lcp_count(st, SINK_PCAP_DROP_COPY_FAIL, copy_fail);
}

static void
sink_pcap_process(struct lcp_stage *st, void *ctx, unsigned port, void **objs, unsigned n)
{
	struct sink_pcap_ctx *x = ctx;
	struct rte_mbuf **pkts = (struct rte_mbuf **)objs;
	struct sink_pcap_clock ck;

	RTE_SET_USED(port); /* one input port */
	if (unlikely(x->pc == NULL || x->broken)) { /* not started, or a write failed */
		lcp_count(st, SINK_PCAP_DROP_WRITE_ERROR, n);
		rte_pktmbuf_free_bulk(pkts, n);
		return;
	}
	sink_pcap_clock_read(&ck);
	if (ck.tsc > x->lib_tsc) /* the library's clock only ever moves forward */
		x->lib_tsc = ck.tsc;
	for (unsigned off = 0; off < n; off += SINK_PCAP_CHUNK)
		sink_pcap_chunk(st, x, pkts + off, RTE_MIN(n - off, (unsigned)SINK_PCAP_CHUNK), &ck);
	rte_pktmbuf_free_bulk(pkts, n);
}

static void
sink_pcap_fini(struct lcp_stage *st, void *ctx)
{
	struct sink_pcap_ctx *x = ctx;

	if (x->pc != NULL) {
		rte_pcapng_close(x->pc); /* closes the fd */
		lcp_log(st, LCP_LOG_INFO, "wrote %" PRIu64 " frames (%" PRIu64 " bytes) to %s%s",
			x->written, x->bytes, x->path, x->broken ? " (truncated by a write error)" : "");
	} else if (x->fd >= 0) {
		close(x->fd);
	}
	rte_mempool_free(x->pool);
}

static const struct lcp_stage_ops sink_pcap_ops = {
	.ports = sink_pcap_ports,
	.counters = sink_pcap_counters,
	.init = sink_pcap_init,
	.start = sink_pcap_start,
	.process = sink_pcap_process,
	.fini = sink_pcap_fini,
	.ctx_size = sizeof(struct sink_pcap_ctx),
};

LCP_PLUGIN_EXPORT const struct lcp_plugin lcp_plugin_descriptor = {
	LCP_PLUGIN_HEADER(LCP_KIND_STAGE, "sink_pcap"),
	.version = "1.0.0",
	.summary = "write frames to a pcapng file (rte_pcapng), then free them",
	.options = sink_pcap_opts,
	.conf_size = sizeof(struct sink_pcap_conf),
	.ops = &sink_pcap_ops,
};
