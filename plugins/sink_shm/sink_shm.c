/* SPDX-License-Identifier: BSD-3-Clause
 * sink_shm — publish `msg` objects into a shared-memory ring that processes on
 * the same host read with liblcpipe-shm (lcpipe/shm.h) or lcpipe_shm.py:
 * one producer (this stage), any number of consumers, none of which can hold
 * the producer back. Layout, API and guarantees: doc/shm.md.
 *
 * The ring is a file on tmpfs (/dev/shm, by default /dev/shm/lcpipe-<stage>) or
 * hugetlbfs: a 4 KiB header (lcpshm_hdr) then `slots` slots of slot_stride
 * bytes (48-byte slot header + slot_size payload bytes, rounded up to 64).
 * Message number s goes to slot s & (slots - 1), under a per-slot seqlock:
 * seq = 2s+1 while it is written, 2s+2 once complete. write_seq, on its own
 * cache lines, counts the messages published and is stored once per burst.
 * Nothing waits: a consumer that is a lap behind finds its slots overwritten and
 * skips ahead (it counts overruns and lost messages itself).
 *
 * A message longer than slot_size is not published: it is counted under
 * drop_too_big, in the header's `drops`, and in the `dropped` field of the next
 * message published, so a consumer sees where the hole is.
 *
 *   sink_shm_validate  path, mode, the file's size (slots: LCP_OPT_F_POW2)
 *   sink_shm_init      the context; no I/O
 *   sink_shm_start     check the directory's file system, refuse to replace a
 *                      live ring or a file that is not a ring; create PATH.tmp.PID,
 *                      size, allocate and map it, write the header, rename it to PATH
 *   sink_shm_process   copy each message into its slot, free the burst
 *   sink_shm_stop      set the header's closed flag
 *   sink_shm_fini      unlink PATH (unless keep, or PATH is another file by now), unmap */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <linux/magic.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/statfs.h>

#include <rte_common.h>
#include <rte_cycles.h>

#include <lcp/lcp.h>

#include "lcpipe/shm.h"

#define SS_MAX_FILE (4ull << 30) /* the largest ring file: 4 GiB */

enum { SS_IN };

static const struct lcp_port_def sink_shm_ports[] = {
	[SS_IN] = { .name = "msg", .dir = LCP_PORT_IN, .unit = LCP_UNIT_MSG, .flags = LCP_PORT_F_REQUIRED,
		    .doc = "messages to publish into the ring, then free" },
	LCP_PORT_END,
};

#define SINK_SHM_COUNTERS(X)                                                   \
	X(PUBLISHED, "published")                                              \
	X(BYTES, "bytes")                                                      \
	X(DROP_TOO_BIG, "drop_too_big")
enum {
#define X(e, s) SS_C_##e,
	SINK_SHM_COUNTERS(X)
#undef X
};
static const char *const sink_shm_counters[] = { SINK_SHM_COUNTERS(LCP_COUNTER_NAME) NULL };

struct sink_shm_conf {
	const char *path;
	uint32_t slots;
	uint32_t slot_size;
	const char *mode;
	bool keep;
};

#define C struct sink_shm_conf
static const struct lcp_opt sink_shm_opts[] = {
	LCP_OPT_STRING(C, path, "path", "\"\"", 0, 4095, 0,
		       "the ring file, an absolute path on tmpfs or hugetlbfs; \"\": /dev/shm/lcpipe-<stage name>. "
		       "Replaced at start (unless it is a live ring or not a ring at all)"),
	LCP_OPT_UINT(C, slots, "slots", "16384", 2, 1u << 26, LCP_OPT_F_POW2,
		     "slots in the ring: how far a consumer may fall behind before it loses messages"),
	LCP_OPT_UINT(C, slot_size, "slot_size", "2048", 1, 16u << 20, 0,
		     "payload bytes per slot; a longer message is not published (drop_too_big)"),
	LCP_OPT_STRING(C, mode, "mode", "\"0600\"", 1, 4, 0,
		       "the file's permission bits, octal (\"0644\": other users may read it)"),
	LCP_OPT_BOOL(C, keep, "keep", "false",
		     "leave the file in place at the end (closed, readable) instead of unlinking it"),
	LCP_OPT_END,
};
#undef C

struct sink_shm_ctx {
	struct lcp_stage *st;
	char path[PATH_MAX];
	uint32_t slots, mask, slot_size, stride;
	unsigned mode;
	bool keep;
	int fd;                 /* -1 until start */
	uint8_t *map;
	size_t map_size;
	struct lcpshm_hdr *hdr;
	uint8_t *slot0;
	uint64_t seq;           /* the next message number */
	uint32_t pending_drops; /* too big since the last message published */
	uint64_t drops;         /* too big, in all */
	uint64_t bytes;
	bool closed;
};

static inline uint64_t
ss_stride(uint32_t slot_size)
{
	return RTE_ALIGN_CEIL((uint64_t)LCPSHM_SLOT_HDR + slot_size, 64);
}

/* mode: 1 to 4 octal digits, at most 0777; -1 if not */
static int
ss_parse_mode(const char *s)
{
	unsigned v = 0;

	if (s == NULL || *s == '\0' || strlen(s) > 4)
		return -1;
	for (; *s != '\0'; s++) {
		if (*s < '0' || *s > '7')
			return -1;
		v = v * 8 + (unsigned)(*s - '0');
	}
	return v <= 0777 ? (int)v : -1;
}

static int
sink_shm_validate(const void *conf, char *msg, size_t msglen)
{
	const struct sink_shm_conf *c = conf;
	uint64_t size = LCPSHM_HDR_SIZE + (uint64_t)c->slots * ss_stride(c->slot_size);
	size_t n = strlen(c->path);

	if (n > 0 && c->path[0] != '/') {
		snprintf(msg, msglen, "path \"%s\" is not absolute: the ring must be on tmpfs (e.g. /dev/shm/...) or hugetlbfs",
			 c->path);
		return -EINVAL;
	}
	if (n > 0 && (c->path[n - 1] == '/' || strstr(c->path, "/../") != NULL ||
		      (n >= 3 && strcmp(c->path + n - 3, "/..") == 0))) {
		snprintf(msg, msglen, "path \"%s\" must name a file (no trailing '/', no \"..\")", c->path);
		return -EINVAL;
	}
	if (ss_parse_mode(c->mode) < 0) {
		snprintf(msg, msglen, "mode \"%s\" is not octal permission bits between \"0\" and \"0777\"", c->mode);
		return -EINVAL;
	}
	if (size > SS_MAX_FILE) {
		snprintf(msg, msglen,
			 "slots %" PRIu32 " x %" PRIu64 " bytes per slot (slot_size %" PRIu32 " + 48, rounded up to 64) + 4096 = %" PRIu64
			 " bytes: above the 4 GiB bound of a ring file",
			 c->slots, ss_stride(c->slot_size), c->slot_size, size);
		return -EINVAL;
	}
	return 0;
}

static int
sink_shm_init(struct lcp_stage *st, const void *conf, void **ctx)
{
	const struct sink_shm_conf *c = conf;
	struct sink_shm_ctx *x = *ctx;
	int n;

	x->st = st;
	if (c->path[0] != '\0')
		n = snprintf(x->path, sizeof(x->path), "%s", c->path);
	else
		n = snprintf(x->path, sizeof(x->path), "/dev/shm/lcpipe-%s", lcp_stage_name(st));
	if (n < 0 || (size_t)n + 16 >= sizeof(x->path)) { /* room for ".tmp.<pid>" */
		lcp_log(st, LCP_LOG_ERR, "path too long");
		return -ENAMETOOLONG;
	}
	x->slots = c->slots;
	x->mask = c->slots - 1;
	x->slot_size = c->slot_size;
	x->stride = (uint32_t)ss_stride(c->slot_size);
	x->mode = (unsigned)ss_parse_mode(c->mode);
	x->keep = c->keep;
	x->fd = -1;
	return 0;
}

/* the directory of x->path must be on tmpfs or hugetlbfs; its block size (the
 * huge page size on hugetlbfs) in *bsize */
static int
ss_check_dir(struct sink_shm_ctx *x, uint64_t *bsize)
{
	char dir[PATH_MAX];
	struct statfs sf;
	char *slash;

	snprintf(dir, sizeof(dir), "%s", x->path);
	slash = strrchr(dir, '/');
	if (slash == dir)
		slash[1] = '\0';
	else
		*slash = '\0';
	if (statfs(dir, &sf) != 0) {
		int err = errno;

		lcp_log(x->st, LCP_LOG_ERR, "%s: cannot use directory %s: %s", x->path, dir, strerror(err));
		return -err;
	}
	if ((unsigned long)sf.f_type != TMPFS_MAGIC && (unsigned long)sf.f_type != HUGETLBFS_MAGIC) {
		lcp_log(x->st, LCP_LOG_ERR,
			"%s: %s is not on tmpfs or hugetlbfs (file system type 0x%lx): a ring must be in memory "
			"(use /dev/shm/... or a hugetlbfs mount)",
			x->path, dir, (unsigned long)sf.f_type);
		return -EINVAL;
	}
	*bsize = (unsigned long)sf.f_type == HUGETLBFS_MAGIC ? (uint64_t)sf.f_bsize : 4096;
	return 0;
}

/* PATH may exist: replace it only if it is a ring that no live producer owns */
static int
ss_check_existing(struct sink_shm_ctx *x)
{
	struct lcpshm_hdr h;
	ssize_t k;
	int fd = open(x->path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);

	if (fd < 0) {
		if (errno == ENOENT)
			return 0;
		int err = errno;

		lcp_log(x->st, LCP_LOG_ERR, "%s exists and cannot be read (%s): not replacing it", x->path,
			strerror(err));
		return -EEXIST;
	}
	memset(&h, 0, sizeof(h));
	k = pread(fd, &h, sizeof(h), 0);
	close(fd);
	if (k < (ssize_t)sizeof(h) || h.magic != LCPSHM_MAGIC) {
		lcp_log(x->st, LCP_LOG_ERR,
			"%s exists and is not an lcpipe shm ring: not replacing it (remove it, or choose another path)",
			x->path);
		return -EEXIST;
	}
	if (h.version == LCPSHM_VERSION && h.closed == 0 && h.pid != getpid() &&
	    (kill(h.pid, 0) == 0 || errno == EPERM)) {
		lcp_log(x->st, LCP_LOG_ERR, "%s is the ring of a running producer (pid %" PRId32 ", stage \"%.31s\"): not replacing it",
			x->path, h.pid, h.stage);
		return -EBUSY;
	}
	return 0;
}

static int
sink_shm_start(struct lcp_stage *st, void *ctx)
{
	struct sink_shm_ctx *x = ctx;
	char tmp[PATH_MAX + 32];
	struct timespec ts;
	uint64_t bsize = 4096, size;
	void *map;
	int rc;

	rc = ss_check_dir(x, &bsize);
	if (rc < 0)
		return rc;
	rc = ss_check_existing(x);
	if (rc < 0)
		return rc;
	size = LCPSHM_HDR_SIZE + (uint64_t)x->slots * x->stride;
	size = RTE_ALIGN_CEIL(size, bsize);
	snprintf(tmp, sizeof(tmp), "%s.tmp.%d", x->path, (int)getpid());
	unlink(tmp); /* a leftover of a process with our pid */
	x->fd = open(tmp, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, x->mode);
	if (x->fd < 0) {
		rc = -errno;
		lcp_log(st, LCP_LOG_ERR, "cannot create %s: %s", tmp, strerror(-rc));
		return rc;
	}
	if (fchmod(x->fd, x->mode) != 0 || ftruncate(x->fd, (off_t)size) != 0) {
		rc = -errno;
		lcp_log(st, LCP_LOG_ERR, "%s: cannot set the mode or the size (%" PRIu64 " bytes): %s", tmp, size,
			strerror(-rc));
		goto fail;
	}
	/* the memory now, so a full tmpfs is an error here, not a SIGBUS later */
	rc = posix_fallocate(x->fd, 0, (off_t)size);
	if (rc != 0 && rc != EOPNOTSUPP) {
		lcp_log(st, LCP_LOG_ERR, "%s: cannot allocate %" PRIu64 " bytes: %s", tmp, size, strerror(rc));
		rc = -rc;
		goto fail;
	}
	map = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, x->fd, 0);
	if (map == MAP_FAILED) {
		rc = -errno;
		lcp_log(st, LCP_LOG_ERR, "%s: mmap of %" PRIu64 " bytes: %s", tmp, size, strerror(-rc));
		goto fail;
	}
	x->map = map;
	x->map_size = size;
	x->hdr = map;
	x->slot0 = x->map + LCPSHM_HDR_SIZE;
	clock_gettime(CLOCK_REALTIME, &ts);
	x->hdr->version = LCPSHM_VERSION;
	x->hdr->hdr_size = LCPSHM_HDR_SIZE;
	x->hdr->slots = x->slots;
	x->hdr->slot_size = x->slot_size;
	x->hdr->slot_stride = x->stride;
	x->hdr->pid = (int32_t)getpid();
	x->hdr->generation = (rte_rdtsc() ^ ((uint64_t)getpid() << 40) ^ (uint64_t)ts.tv_nsec) | 1;
	x->hdr->tsc_hz = rte_get_tsc_hz();
	x->hdr->created_ns = (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
	x->hdr->file_size = size;
	snprintf(x->hdr->stage, sizeof(x->hdr->stage), "%s", lcp_stage_name(st));
	__atomic_store_n(&x->hdr->magic, LCPSHM_MAGIC, __ATOMIC_RELEASE);
	if (rename(tmp, x->path) != 0) {
		rc = -errno;
		lcp_log(st, LCP_LOG_ERR, "cannot rename %s to %s: %s", tmp, x->path, strerror(-rc));
		munmap(x->map, x->map_size);
		x->map = NULL;
		goto fail;
	}
	lcp_log(st, LCP_LOG_INFO,
		"ring %s: %" PRIu32 " slots x %" PRIu32 " payload bytes (stride %" PRIu32 "), %" PRIu64
		" bytes, mode 0%o, generation 0x%016" PRIx64 "%s",
		x->path, x->slots, x->slot_size, x->stride, size, x->mode, x->hdr->generation,
		x->keep ? ", kept at the end" : "");
	return 0;
fail:
	close(x->fd);
	x->fd = -1;
	unlink(tmp);
	return rc;
}

static void
sink_shm_process(struct lcp_stage *st, void *ctx, unsigned port, void **objs, unsigned n)
{
	struct sink_shm_ctx *x = ctx;
	struct lcp_msg **msgs = (struct lcp_msg **)objs;
	uint64_t q = x->seq, bytes = 0, now = rte_rdtsc();
	unsigned too_big = 0;

	RTE_SET_USED(port); /* one input port */
	for (unsigned i = 0; i < n; i++) {
		const struct lcp_msg *m = msgs[i];
		struct lcpshm_slot *s;

		if (unlikely(m->len > x->slot_size)) {
			too_big++;
			x->pending_drops++;
			continue;
		}
		s = (struct lcpshm_slot *)(x->slot0 + (size_t)(q & x->mask) * x->stride);
		__atomic_store_n(&s->seq, 2 * q + 1, __ATOMIC_RELAXED);
		__atomic_thread_fence(__ATOMIC_RELEASE);
		s->conn_id = m->conn_id;
		s->rx_tsc = m->rx_tsc;
		s->pub_tsc = now;
		s->len = m->len;
		s->flags = m->flags & (LCPSHM_F_SESSION_START | LCPSHM_F_LOSS);
		s->lost = (m->flags & LCP_MSG_F_LOSS) ? m->lost : 0;
		s->opcode = m->opcode;
		s->dropped = x->pending_drops;
		memcpy((uint8_t *)s + LCPSHM_SLOT_HDR, m->data, m->len);
		__atomic_store_n(&s->seq, 2 * q + 2, __ATOMIC_RELEASE);
		x->pending_drops = 0;
		bytes += m->len;
		q++;
	}
	if (likely(q != x->seq)) {
		lcp_count(st, SS_C_PUBLISHED, q - x->seq);
		lcp_count(st, SS_C_BYTES, bytes);
		x->bytes += bytes;
		x->seq = q;
		__atomic_store_n(&x->hdr->write_seq, q, __ATOMIC_RELEASE);
	}
	if (unlikely(too_big != 0)) {
		lcp_count(st, SS_C_DROP_TOO_BIG, too_big);
		x->drops += too_big;
		__atomic_store_n(&x->hdr->drops, x->drops, __ATOMIC_RELAXED);
	}
	lcp_msgs_free(msgs, n);
}

static void
ss_close(struct sink_shm_ctx *x)
{
	struct timespec ts;

	if (x->map == NULL || x->closed)
		return;
	clock_gettime(CLOCK_REALTIME, &ts);
	x->hdr->close_ns = (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
	__atomic_store_n(&x->hdr->closed, 1, __ATOMIC_RELEASE);
	x->closed = true;
}

static void
sink_shm_stop(struct lcp_stage *st, void *ctx)
{
	struct sink_shm_ctx *x = ctx;

	ss_close(x);
	lcp_log(st, LCP_LOG_INFO,
		"ring %s closed: %" PRIu64 " messages (%" PRIu64 " payload bytes) published, %" PRIu64
		" too big for a slot",
		x->path, x->seq, x->bytes, x->drops);
}

static void
sink_shm_fini(struct lcp_stage *st, void *ctx)
{
	struct sink_shm_ctx *x = ctx;
	struct stat a, b;

	if (x->map != NULL) {
		ss_close(x); /* stop() did not run: another stage failed to start */
		if (!x->keep) {
			/* only our own file: a newer producer may have taken the path */
			if (fstat(x->fd, &a) == 0 && stat(x->path, &b) == 0 && a.st_dev == b.st_dev &&
			    a.st_ino == b.st_ino && unlink(x->path) != 0)
				lcp_log(st, LCP_LOG_ERR, "cannot unlink %s: %s", x->path, strerror(errno));
		}
		munmap(x->map, x->map_size);
	}
	if (x->fd >= 0)
		close(x->fd);
}

static const struct lcp_stage_ops sink_shm_ops = {
	.ports = sink_shm_ports,
	.counters = sink_shm_counters,
	.validate = sink_shm_validate,
	.init = sink_shm_init,
	.start = sink_shm_start,
	.process = sink_shm_process,
	.stop = sink_shm_stop,
	.fini = sink_shm_fini,
	.ctx_size = sizeof(struct sink_shm_ctx),
};

LCP_PLUGIN_EXPORT const struct lcp_plugin lcp_plugin_descriptor = {
	LCP_PLUGIN_HEADER(LCP_KIND_STAGE, "sink_shm"),
	.version = "1.0.0",
	.summary = "publish msg objects into a shared-memory ring (tmpfs or hugetlbfs) for consumers on the same host; never waits for them",
	.options = sink_shm_opts,
	.conf_size = sizeof(struct sink_shm_conf),
	.ops = &sink_shm_ops,
};
