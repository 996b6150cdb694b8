/* SPDX-License-Identifier: BSD-3-Clause
 * lcpipe/shm.h — read the shared-memory rings that lcpipe's sink_shm stage
 * writes: one producer (the stage), any number of consumers, each with its own
 * read position; a consumer never writes to the ring, so it can never slow the
 * producer down, and one that falls behind loses the oldest messages (counted
 * as overruns and lost messages) instead. doc/shm.md has the whole story.
 *
 * Link with `pkg-config --cflags --libs lcpipe-shm` (liblcpipe-shm, plain C,
 * no DPDK). x86-64 only: the timestamps are TSC values and the ring relies on
 * x86's store ordering.
 *
 * Thread safety: a handle (struct lcpshm) belongs to one thread at a time; open
 * one handle per consumer thread (handles are independent, any number of them in
 * any number of processes).
 *
 * Also here: the file layout (struct lcpshm_hdr, struct lcpshm_slot), for
 * readers in other languages. */
#ifndef LCPIPE_SHM_H
#define LCPIPE_SHM_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ---- the file layout, version 1 (little-endian, x86-64) ---- */

#define LCPSHM_MAGIC 0x31474e524d485350ull /* "PSHMRNG1" as a little-endian u64 */
#define LCPSHM_VERSION 1u
#define LCPSHM_HDR_SIZE 4096u     /* slot 0 starts here */
#define LCPSHM_SLOT_HDR 48u       /* payload offset inside a slot */

/* The header: the first 4096 bytes of the file. Everything but the "producer"
 * lines is written once, before the file appears under its name. */
struct lcpshm_hdr {
	/* line 0: geometry, fixed at creation */
	uint64_t magic;         /* LCPSHM_MAGIC, written last */
	uint32_t version;       /* LCPSHM_VERSION */
	uint32_t hdr_size;      /* offset of slot 0: LCPSHM_HDR_SIZE */
	uint32_t slots;         /* number of slots, a power of two */
	uint32_t slot_size;     /* payload bytes per slot, at most */
	uint32_t slot_stride;   /* bytes from one slot to the next (multiple of 64) */
	int32_t pid;            /* the producer's process id */
	uint64_t generation;    /* random, nonzero: tells two rings at one path apart */
	uint64_t tsc_hz;        /* the producer's TSC rate (rte_get_tsc_hz()) */
	uint64_t created_ns;    /* CLOCK_REALTIME at creation */
	uint64_t file_size;     /* bytes mapped: hdr_size + slots * slot_stride (rounded up) */
	/* line 1: who */
	char stage[32];         /* the stage's name, NUL-terminated */
	uint8_t pad1[32];
	/* line 2: written by the producer, rarely */
	uint32_t closed;        /* 1 once the producer stopped: no more messages */
	uint32_t pad2;
	uint64_t close_ns;      /* CLOCK_REALTIME at the close */
	uint64_t drops;         /* messages the producer did not put in the ring (too big) */
	uint8_t pad3[104];
	/* line 4: the write sequence, alone on its cache lines */
	uint64_t write_seq;     /* messages published so far (a burst at a time) */
	uint8_t pad4[LCPSHM_HDR_SIZE - 264];
};

/* A slot (slot_stride bytes): message number s (0, 1, ...) is in slot s & (slots - 1). */
struct lcpshm_slot {
	uint64_t seq;           /* seqlock: 2s+1 while message s is written, 2s+2 once
				 * it is complete; 0: never written */
	uint64_t conn_id;       /* lcp_msg.conn_id */
	uint64_t rx_tsc;        /* TSC of the frame that completed the message */
	uint64_t pub_tsc;       /* TSC at which the producer published its burst */
	uint32_t len;           /* payload bytes (<= slot_size) */
	uint32_t lost;          /* with LCPSHM_F_LOSS: messages of this conn_id the
				 * pipeline dropped before this one */
	uint16_t opcode;        /* lcp_msg.opcode (WebSocket: 1 text, 2 binary) */
	uint16_t flags;         /* LCPSHM_F_* */
	uint32_t dropped;       /* messages the producer left out of the ring
				 * (too big) between the previous message and this one */
	/* the payload follows, at LCPSHM_SLOT_HDR */
};

#define LCPSHM_F_SESSION_START 0x0001u /* = LCP_MSG_F_SESSION_START */
#define LCPSHM_F_LOSS 0x0002u          /* = LCP_MSG_F_LOSS: see lost */

/* ---- the consumer API ---- */

struct lcpshm; /* a consumer handle: opaque */

/* one message, as lcpshm_next() copied it out */
struct lcpshm_msg {
	uint64_t seq;           /* its number in the ring (0, 1, ...) */
	uint64_t conn_id;
	uint64_t rx_tsc;
	uint64_t pub_tsc;
	uint32_t len;           /* payload bytes copied into the caller's buffer */
	uint32_t lost;
	uint16_t opcode;
	uint16_t flags;
	uint32_t dropped;
};

/* what this handle saw */
struct lcpshm_stats {
	uint64_t received;      /* messages returned */
	uint64_t bytes;         /* their payload bytes */
	uint64_t overruns;      /* times the producer lapped this handle */
	uint64_t lost;          /* messages skipped because of that */
	uint64_t torn;          /* copies thrown away because the slot changed under them */
};

/* what the header says, now */
struct lcpshm_info {
	uint32_t version, slots, slot_size, slot_stride;
	int32_t pid;
	uint64_t generation, tsc_hz, created_ns, close_ns, file_size;
	uint64_t write_seq;     /* published so far */
	uint64_t drops;         /* left out by the producer */
	int closed;
	char stage[32];
	uint64_t next;          /* this handle's next message number */
};

/* lcpshm_open() flags */
#define LCPSHM_OLDEST 0x1u      /* start at the oldest message still in the ring
				 * (default: at the next one published) */

/* Open the ring at path (read-only mmap). 0 and *out, or a negative errno, with
 * a one-line reason in err (if errlen > 0):
 *   -ENOENT etc.  the open(2) / fstat / mmap error
 *   -EBADMSG      not an lcpipe shm ring (wrong magic, or too short)
 *   -EPROTONOSUPPORT  a ring of another layout version
 *   -EINVAL       a ring header whose geometry is inconsistent with the file */
int lcpshm_open(const char *path, unsigned flags, struct lcpshm **out, char *err, size_t errlen);

/* Next message, without waiting: 1 and a copy (m, and len payload bytes in buf),
 * 0 if there is none yet, or a negative errno:
 *   -EPIPE     the producer closed the ring and every message was read
 *   -EMSGSIZE  the message is longer than cap (m->len says how long; not consumed:
 *              call again with a bigger buffer; slot_size bytes always suffice)
 * The copy is checked against the slot's sequence after it is made: a message the
 * producer overwrote meanwhile is never returned. When the producer has lapped the
 * handle, it counts one overrun and the messages skipped as lost, and goes on from
 * the oldest message still in the ring. */
int lcpshm_next(struct lcpshm *h, struct lcpshm_msg *m, void *buf, size_t cap);

/* lcpshm_next(), waiting up to timeout_ns (< 0: for ever) for a message: spins
 * (pause) for the first 50 us, then sleeps 50 us at a time. Never writes to the
 * ring. Returns as lcpshm_next(); 0 at the timeout. */
int lcpshm_wait(struct lcpshm *h, struct lcpshm_msg *m, void *buf, size_t cap, int64_t timeout_ns);

void lcpshm_stats(const struct lcpshm *h, struct lcpshm_stats *st);
void lcpshm_info(const struct lcpshm *h, struct lcpshm_info *info);
uint32_t lcpshm_slot_size(const struct lcpshm *h);

/* lcpshm_status(): the producer as seen from this handle */
enum lcpshm_state {
	LCPSHM_LIVE = 0,        /* running (its pid exists and it has not closed) */
	LCPSHM_CLOSED = 1,      /* it stopped and closed the ring */
	LCPSHM_GONE = 2,        /* its pid no longer exists and it never closed (it died) */
	LCPSHM_REPLACED = 3,    /* the path now names another ring or file, or none:
				 * open it again to follow a restarted producer */
};
/* Checks the path (stat) and the pid (kill 0): two system calls; not for every
 * message. A pid from another pid namespace reads as LIVE or GONE at random. */
enum lcpshm_state lcpshm_status(const struct lcpshm *h);
const char *lcpshm_state_name(enum lcpshm_state s);

void lcpshm_close(struct lcpshm *h);

#ifdef __cplusplus
}
#endif
#endif
