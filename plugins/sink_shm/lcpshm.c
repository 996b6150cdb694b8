/* SPDX-License-Identifier: BSD-3-Clause
 * liblcpipe-shm — the consumer side of sink_shm's shared-memory ring
 * (lcpipe/shm.h, doc/shm.md). Plain C, no DPDK: consumers link only this.
 *
 *   lcpshm_open    open + fstat + read-only mmap, header checks, start position
 *   lcpshm_next    one message: seqlock read of the slot (copy, then verify),
 *                  lap detection and recovery (overrun, lost)
 *   lcpshm_wait    lcpshm_next in a spin-then-sleep loop with a timeout
 *   lcpshm_status  closed flag, stat of the path, kill(pid, 0)
 *
 * Reading never writes to the mapping (it is PROT_READ): the producer cannot
 * tell how many consumers there are, let alone wait for one. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/stat.h>

#include "lcpipe/shm.h"

#define LCPSHM_EXPORT __attribute__((visibility("default")))
#define LCPSHM_SPIN_NS 50000  /* lcpshm_wait: spin this long, then sleep */
#define LCPSHM_SLEEP_NS 50000 /* per sleep */

_Static_assert(sizeof(struct lcpshm_hdr) == LCPSHM_HDR_SIZE, "header size");
_Static_assert(offsetof(struct lcpshm_hdr, closed) == 128, "closed on line 2");
_Static_assert(offsetof(struct lcpshm_hdr, write_seq) == 256, "write_seq on line 4");
_Static_assert(sizeof(struct lcpshm_slot) == LCPSHM_SLOT_HDR, "slot header size");

struct lcpshm {
	const uint8_t *base;    /* the mapping */
	size_t size;
	const struct lcpshm_hdr *hdr;
	const uint8_t *slot0;
	uint64_t next;          /* the next message number to read */
	uint32_t mask, stride, slot_size;
	uint64_t generation;
	dev_t dev;              /* the file, for lcpshm_status */
	ino_t ino;
	char *path;
	struct lcpshm_stats st;
};

static inline uint64_t
ld_acq(const uint64_t *p)
{
	return __atomic_load_n(p, __ATOMIC_ACQUIRE);
}

static inline uint64_t
ld_rlx(const uint64_t *p)
{
	return __atomic_load_n(p, __ATOMIC_RELAXED);
}

static int
shm_fail(char *err, size_t errlen, int rc, const char *fmt, ...) __attribute__((format(printf, 4, 5)));

static int
shm_fail(char *err, size_t errlen, int rc, const char *fmt, ...)
{
	va_list ap;

	if (err != NULL && errlen > 0) {
		va_start(ap, fmt);
		vsnprintf(err, errlen, fmt, ap);
		va_end(ap);
	}
	return rc;
}

LCPSHM_EXPORT int
lcpshm_open(const char *path, unsigned flags, struct lcpshm **out, char *err, size_t errlen)
{
	struct lcpshm_hdr h0;
	struct lcpshm *h;
	struct stat sb;
	uint64_t need, w;
	void *map;
	ssize_t k;
	int fd, rc;

	*out = NULL;
	if (err != NULL && errlen > 0)
		err[0] = '\0';
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return shm_fail(err, errlen, -errno, "%s: cannot open: %s", path, strerror(errno));
	if (fstat(fd, &sb) != 0) {
		rc = -errno;
		close(fd);
		return shm_fail(err, errlen, rc, "%s: fstat: %s", path, strerror(-rc));
	}
	/* the header through read(2) first: a FIFO or a device is not mmapped */
	if (!S_ISREG(sb.st_mode)) {
		close(fd);
		return shm_fail(err, errlen, -EBADMSG, "%s: not an lcpipe shm ring (not a regular file)", path);
	}
	memset(&h0, 0, sizeof(h0));
	k = pread(fd, &h0, sizeof(h0), 0);
	if (k < 0) {
		rc = -errno;
		close(fd);
		return shm_fail(err, errlen, rc, "%s: read: %s", path, strerror(-rc));
	}
	if ((size_t)k < offsetof(struct lcpshm_hdr, version) + sizeof(h0.version) || h0.magic != LCPSHM_MAGIC) {
		close(fd);
		return shm_fail(err, errlen, -EBADMSG,
				"%s: not an lcpipe shm ring (%zd bytes; magic 0x%016" PRIx64 ", expected 0x%016" PRIx64 ")",
				path, k, (size_t)k >= 8 ? h0.magic : 0, (uint64_t)LCPSHM_MAGIC);
	}
	if (h0.version != LCPSHM_VERSION) {
		close(fd);
		return shm_fail(err, errlen, -EPROTONOSUPPORT,
				"%s: an lcpipe shm ring of layout version %" PRIu32 "; this library reads version %u",
				path, h0.version, LCPSHM_VERSION);
	}
	need = (uint64_t)h0.hdr_size + (uint64_t)h0.slots * h0.slot_stride;
	if ((size_t)k < sizeof(h0) || h0.hdr_size != LCPSHM_HDR_SIZE || h0.slots < 2 ||
	    (h0.slots & (h0.slots - 1)) != 0 || h0.slot_size == 0 ||
	    h0.slot_stride < LCPSHM_SLOT_HDR + (uint64_t)h0.slot_size || h0.slot_stride % 64 != 0 ||
	    h0.file_size < need || (uint64_t)sb.st_size < h0.file_size) {
		close(fd);
		return shm_fail(err, errlen, -EINVAL,
				"%s: inconsistent ring header (hdr_size %" PRIu32 ", slots %" PRIu32 ", slot_size %" PRIu32
				", stride %" PRIu32 ", file_size %" PRIu64 ", file %jd bytes)",
				path, h0.hdr_size, h0.slots, h0.slot_size, h0.slot_stride, h0.file_size,
				(intmax_t)sb.st_size);
	}
	/* MAP_POPULATE: the page tables now, not one minor fault per page on the
	 * read path (a fault costs microseconds; a 64 MiB ring has 16384 pages) */
	map = mmap(NULL, h0.file_size, PROT_READ, MAP_SHARED | MAP_POPULATE, fd, 0);
	if (map == MAP_FAILED) {
		rc = -errno;
		close(fd);
		return shm_fail(err, errlen, rc, "%s: mmap of %" PRIu64 " bytes: %s", path, h0.file_size, strerror(-rc));
	}
	close(fd); /* the mapping keeps the file */
	h = calloc(1, sizeof(*h));
	if (h == NULL || (h->path = strdup(path)) == NULL) {
		free(h);
		munmap(map, h0.file_size);
		return shm_fail(err, errlen, -ENOMEM, "%s: out of memory", path);
	}
	h->base = map;
	h->size = h0.file_size;
	h->hdr = map;
	h->slot0 = h->base + h0.hdr_size;
	h->mask = h0.slots - 1;
	h->stride = h0.slot_stride;
	h->slot_size = h0.slot_size;
	h->generation = h0.generation;
	h->dev = sb.st_dev;
	h->ino = sb.st_ino;
	w = ld_acq(&h->hdr->write_seq);
	if (flags & LCPSHM_OLDEST)
		h->next = w > h0.slots ? w - h0.slots : 0;
	else
		h->next = w;
	*out = h;
	return 0;
}

/* The producer lapped h: v is the sequence word found in the slot of h->next.
 * Go on from the oldest message that can still be in the ring. */
static void
shm_lapped(struct lcpshm *h, uint64_t v)
{
	uint64_t w = (v - 1) / 2;                       /* the message in that slot */
	uint64_t head = ld_acq(&h->hdr->write_seq);     /* published (a burst behind) */
	uint64_t to;

	if (head < w + 1)
		head = w + 1;
	/* message head - 1 may be in the middle of being written: the oldest
	 * one left intact is head - slots (+ 1 spare for that write) */
	to = head - (uint64_t)h->mask; /* head - slots + 1 */
	if (to <= h->next) /* cannot happen (w >= next + slots); never go back */
		to = h->next + 1;
	h->st.lost += to - h->next;
	h->next = to;
}

LCPSHM_EXPORT int
lcpshm_next(struct lcpshm *h, struct lcpshm_msg *m, void *buf, size_t cap)
{
	bool lapped = false;

	for (;;) {
		const uint8_t *p = h->slot0 + (size_t)(h->next & h->mask) * h->stride;
		const struct lcpshm_slot *s = (const struct lcpshm_slot *)p;
		uint64_t want = 2 * h->next + 2;
		uint64_t v = ld_acq(&s->seq);

		if (v == want) {
			struct lcpshm_msg t;

			t.seq = h->next;
			t.conn_id = s->conn_id;
			t.rx_tsc = s->rx_tsc;
			t.pub_tsc = s->pub_tsc;
			t.len = s->len;
			t.lost = s->lost;
			t.opcode = s->opcode;
			t.flags = s->flags;
			t.dropped = s->dropped;
			if (t.len > h->slot_size) /* torn: the check below fails */
				t.len = 0;
			if (t.len > cap) {
				__atomic_thread_fence(__ATOMIC_ACQUIRE);
				if (ld_rlx(&s->seq) == want) {
					m->len = t.len;
					return -EMSGSIZE;
				}
			} else {
				memcpy(buf, p + LCPSHM_SLOT_HDR, t.len);
				__atomic_thread_fence(__ATOMIC_ACQUIRE);
				if (ld_rlx(&s->seq) == want) {
					*m = t;
					h->next++;
					h->st.received++;
					h->st.bytes += t.len;
					return 1;
				}
			}
			h->st.torn++;
			v = ld_acq(&s->seq); /* overwritten while we copied: a lap */
		}
		if (v < want) {
			/* not written yet (v == want - 1: being written now) */
			if (v == want - 1 || !__atomic_load_n(&h->hdr->closed, __ATOMIC_ACQUIRE))
				return 0;
			/* closed: every store before it is visible now */
			if (ld_acq(&s->seq) < want)
				return -EPIPE;
			continue;
		}
		if (!lapped) {
			h->st.overruns++;
			lapped = true;
		}
		shm_lapped(h, v);
	}
}

static inline uint64_t
shm_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

LCPSHM_EXPORT int
lcpshm_wait(struct lcpshm *h, struct lcpshm_msg *m, void *buf, size_t cap, int64_t timeout_ns)
{
	uint64_t t0, now;
	unsigned spins = 0;
	int rc;

	rc = lcpshm_next(h, m, buf, cap);
	if (rc != 0 || timeout_ns == 0)
		return rc;
	t0 = shm_now_ns();
	for (;;) {
		rc = lcpshm_next(h, m, buf, cap);
		if (rc != 0)
			return rc;
		if ((++spins & 63) != 0) {
			__builtin_ia32_pause();
			continue;
		}
		now = shm_now_ns();
		if (timeout_ns > 0 && now - t0 >= (uint64_t)timeout_ns)
			return 0;
		if (now - t0 >= LCPSHM_SPIN_NS) {
			struct timespec d = { 0, LCPSHM_SLEEP_NS };

			nanosleep(&d, NULL);
		}
	}
}

LCPSHM_EXPORT void
lcpshm_stats(const struct lcpshm *h, struct lcpshm_stats *st)
{
	*st = h->st;
}

LCPSHM_EXPORT uint32_t
lcpshm_slot_size(const struct lcpshm *h)
{
	return h->slot_size;
}

LCPSHM_EXPORT void
lcpshm_info(const struct lcpshm *h, struct lcpshm_info *i)
{
	const struct lcpshm_hdr *r = h->hdr;

	memset(i, 0, sizeof(*i));
	i->version = r->version;
	i->slots = r->slots;
	i->slot_size = r->slot_size;
	i->slot_stride = r->slot_stride;
	i->pid = r->pid;
	i->generation = r->generation;
	i->tsc_hz = r->tsc_hz;
	i->created_ns = r->created_ns;
	i->file_size = r->file_size;
	i->closed = (int)__atomic_load_n(&r->closed, __ATOMIC_ACQUIRE);
	i->close_ns = r->close_ns;
	i->drops = ld_rlx(&r->drops);
	i->write_seq = ld_acq(&r->write_seq);
	memcpy(i->stage, r->stage, sizeof(i->stage));
	i->stage[sizeof(i->stage) - 1] = '\0';
	i->next = h->next;
}

LCPSHM_EXPORT enum lcpshm_state
lcpshm_status(const struct lcpshm *h)
{
	struct stat sb;

	if (__atomic_load_n(&h->hdr->closed, __ATOMIC_ACQUIRE))
		return LCPSHM_CLOSED;
	if (stat(h->path, &sb) != 0 || sb.st_dev != h->dev || sb.st_ino != h->ino)
		return LCPSHM_REPLACED;
	if (kill(h->hdr->pid, 0) != 0 && errno == ESRCH)
		return LCPSHM_GONE;
	return LCPSHM_LIVE;
}

LCPSHM_EXPORT const char *
lcpshm_state_name(enum lcpshm_state s)
{
	switch (s) {
	case LCPSHM_LIVE:
		return "live";
	case LCPSHM_CLOSED:
		return "closed";
	case LCPSHM_GONE:
		return "gone";
	case LCPSHM_REPLACED:
		return "replaced";
	}
	return "?";
}

LCPSHM_EXPORT void
lcpshm_close(struct lcpshm *h)
{
	if (h == NULL)
		return;
	munmap((void *)(uintptr_t)h->base, h->size);
	free(h->path);
	free(h);
}
