/* SPDX-License-Identifier: BSD-3-Clause
 * harness.h — L0 harness for libstk (no DPDK, no EAL): fake buffers, fake ops,
 * a fake clock, a seeded random source, a transmit queue the tests pop and
 * parse, frame builders for a fake peer, an event log with per-connection
 * byte streams, and a two-stack in-memory wire with seeded faults.
 *
 * Buffers. struct stk_buf is defined here: {magic, size, data[]}, malloc'd to
 * exactly sizeof(header) + size, so the last byte of every received frame is the
 * last byte of its allocation (ASan / valgrind catch any overread). Live buffers
 * and live ops.alloc blocks are counted; h_destroy() (every test's teardown)
 * asserts stk_destroy() brings both back to zero.
 *
 * Only the public API (stk/stk.h, stk/tcp.h, stk/prot/\*.h) is used.
 */
#ifndef STK_TEST_HARNESS_H
#define STK_TEST_HARNESS_H

#include <check.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <stk/stk.h>
#include <stk/tcp.h>
#include <stk/prot/arp.h>
#include <stk/prot/eth.h>
#include <stk/prot/icmp.h>
#include <stk/prot/ip4.h>
#include <stk/prot/tcp.h>

#define H_MAX_FRAME 9216
#define H_MAX_SACK 4

/* addresses used everywhere (host order for ip; h_ip() converts) */
#define H_OUR_IP 0x0a000002u   /* 10.0.0.2 */
#define H_PEER_IP 0x0a000001u  /* 10.0.0.1 */
#define H_PEER2_IP 0x0a000003u /* 10.0.0.3 */
#define H_PREFIX 24
extern const uint8_t H_OUR_MAC[6];
extern const uint8_t H_PEER_MAC[6];
extern const uint8_t H_PEER2_MAC[6];
extern const uint8_t H_BCAST[6];

static inline uint32_t
h_ip(uint32_t host)
{
	return __builtin_bswap32(host);
}

/* ---- captured / parsed frames ---- */
struct h_topts {
	bool has_mss, has_ws, sack_perm, has_ts;
	uint16_t mss;
	uint8_t ws;
	uint32_t tsval, tsecr;
	unsigned nsack;
	uint32_t sack[H_MAX_SACK][2]; /* left, right (host order) */
	/* builder only: these bytes verbatim as the option area (rawlen % 4 == 0
	 * is the caller's business: a wrong length is a malformed header) */
	const uint8_t *raw;
	unsigned rawlen;
	bool no_auto_ts; /* builder: do not add the peer's TS automatically */
};

struct h_pkt {
	struct h_pkt *next;
	uint32_t len, txflags;
	uint8_t *frame; /* own copy */
	uint8_t dst[6], src[6];
	uint16_t type;
	/* ARP */
	bool is_arp;
	uint16_t arp_hrd, arp_pro, arp_op;
	uint8_t arp_hln, arp_pln;
	uint8_t arp_sha[6], arp_tha[6];
	uint32_t arp_spa, arp_tpa; /* host order */
	/* IPv4 */
	bool is_ip;
	uint8_t ihl, ttl, proto, tos;
	uint16_t tot_len, ip_id, frag;
	uint32_t ip_src, ip_dst; /* host order */
	/* ICMP */
	bool is_icmp;
	uint8_t icmp_type, icmp_code;
	uint16_t icmp_id, icmp_seq;
	/* TCP */
	bool is_tcp;
	uint16_t sport, dport, win;
	uint32_t seq, ack;
	uint8_t flags;
	unsigned hlen; /* TCP header bytes */
	struct h_topts o;
	/* payload of ICMP (after the 8-byte header) or TCP */
	const uint8_t *payload;
	uint32_t plen;
};

/* ---- events and per-connection streams ---- */
struct h_ev {
	enum stk_ev ev;
	uint32_t id;
	uint64_t user;
	int reason;
	uint32_t len;
	uint64_t t_ns;
};

struct h_conn {
	struct h_conn *next;
	uint32_t id;
	struct stk_tcb *c; /* NULL once a terminal event was given */
	uint64_t user;
	uint8_t *rx; /* every DATA byte, in delivery order */
	size_t rx_len, rx_cap;
	bool keep_rx; /* store bytes (default true); the pair test only hashes */
	uint64_t rx_fnv;
	unsigned n_data;
	bool connected, accepted, peer_closed;
	int terminal; /* 0 or the terminal enum stk_ev */
	int terminal_reason;
};

/* ---- a fake TCP peer talking to the stack under test ---- */
struct h_peer {
	uint8_t mac[6];
	uint32_t ip;		 /* host order */
	uint16_t port;		 /* the peer's port */
	uint16_t lport;		 /* the stack's port */
	uint32_t snd_nxt;	 /* next seq the peer sends */
	uint32_t rcv_nxt;	 /* next seq the peer expects from the stack (its ACK) */
	uint16_t win;		 /* window field the peer puts in its segments */
	bool ts;		 /* timestamps negotiated */
	uint32_t tsval;		 /* the peer's clock (incremented per segment) */
	uint32_t ts_recent;	 /* the stack's last TSval */
	uint32_t iss;		 /* the stack's ISS as seen in its SYN / SYN-ACK */
	struct h_topts syn_opts; /* options in the stack's SYN / SYN-ACK */
	uint32_t rtt_ms;	 /* h_connect / h_accept: clock advance before answering */
	struct stk_tcb *c;
};

struct h;
typedef void (*h_tx_hook_t)(struct h *h, const uint8_t *frame, uint32_t len, uint32_t flags);
typedef void (*h_ev_hook_t)(struct h *h, struct stk_tcb *c, uint64_t user, enum stk_ev ev,
			    int reason, const uint8_t *data, uint32_t len);

struct h {
	struct stk *st;
	struct stk_config cfg;
	struct stk_ops ops;
	/* clock (shared by the two stacks of a wire) */
	uint64_t own_clock;
	uint64_t *clock;
	uint64_t rng;
	/* live resources */
	long live_bufs, live_allocs, peak_bufs;
	uint64_t bufs_made, allocs_made;
	bool fail_alloc, fail_tx_alloc;
	/* transmit queue */
	struct h_pkt *txq_head, *txq_tail;
	unsigned txq_len;
	uint64_t tx_total;
	struct h_pkt *popped; /* freed at h_destroy */
	h_tx_hook_t tx_hook;
	h_ev_hook_t ev_hook;
	void *hook_ctx;
	/* events */
	struct h_ev *evs;
	unsigned n_evs, cap_evs;
	struct h_conn *conns;
	struct stk_tcb *last_new; /* last CONNECTED / ACCEPTED tcb */
	bool verbose;
	const char *name;
	uint32_t ip; /* host order: this stack's address */
	uint8_t mac[6];
};

/* ---- lifecycle ---- */
/* allocate a harness with the default test config (not yet created):
 * ip 10.0.0.2/24, MAC 02:00:00:00:00:02, no checksum offload, no static neighbour */
struct h *h_new(void);
/* stk_create() with h->cfg; asserts success */
void h_create(struct h *h);
/* stk_create() expected to fail: returns NULL-ness and errmsg */
struct stk *h_try_create(struct h *h, char *errmsg, size_t errlen);
/* stk_destroy, then: zero live buffers, zero live allocations, free everything */
void h_destroy(struct h *h);
/* add the default peer (10.0.0.1) as a static neighbour */
void h_static_peer(struct h *h);

/* The fixture of the suites that test one stack (test_arp, test_ip4, test_tcp_*):
 * H is the harness of the current test. h_fixture_setup: h_new() with the default
 * peer as a static neighbour; h_fixture_teardown: h_destroy(H) (its checks). */
extern struct h *H;
void h_fixture_setup(void);
void h_fixture_teardown(void);

/* ---- clock ---- */
uint64_t h_now_ms(const struct h *h);
void h_advance_ns(struct h *h, uint64_t ns);
void h_advance(struct h *h, uint64_t ms); /* moves the clock, then stk_poll */
unsigned h_poll(struct h *h);
/* advance ms in steps of step_ms, stk_poll after each step; stops early when
 * the transmit queue is non-empty and stop_on_tx; returns ms advanced */
uint64_t h_run(struct h *h, uint64_t ms, uint64_t step_ms, bool stop_on_tx);

/* ---- counters ---- */
uint64_t h_ctr(const struct h *h, enum stk_ctr c);
/* sum of every drop_* counter */
uint64_t h_drops(const struct h *h);
/* a snapshot to compare against (h_ctr_delta) */
struct h_snap {
	uint64_t v[STK_C__COUNT];
};
void h_snap(const struct h *h, struct h_snap *s);
uint64_t h_delta(const struct h *h, const struct h_snap *s, enum stk_ctr c);
uint64_t h_drops_delta(const struct h *h, const struct h_snap *s);
/* every counter but those listed (terminated by -1) unchanged since s, except
 * the rx ones (rx_frames, rx_bytes, ip_rx, tcp_segs_in, tcp_coalesced, arp_rx) */
void h_assert_only(const struct h *h, const struct h_snap *s, ...);

/* ---- buffers ---- */
struct stk_buf *h_buf_new(struct h *h, uint32_t len, uint8_t **data);
void h_buf_put(struct h *h, struct stk_buf *b);

/* ---- transmit queue ---- */
unsigned h_txq(const struct h *h);
/* pop the oldest transmitted frame (parsed, checksums verified); NULL if none.
 * Valid until h_destroy. */
struct h_pkt *h_tx_pop(struct h *h);
/* pop and assert it exists */
struct h_pkt *h_tx_must(struct h *h, const char *what);
/* pop, skipping nothing: assert a TCP segment */
struct h_pkt *h_tx_tcp(struct h *h, const char *what);
unsigned h_tx_drain(struct h *h);
/* discard every queued frame (not kept: for floods) */
unsigned h_tx_flush(struct h *h);
/* parse a frame into p (p->frame must stay valid) */
void h_parse(struct h_pkt *p, const struct h *h);

/* ---- receive: inject frames ---- */
/* copy into an exactly sized buffer and stk_input_burst() it */
void h_inject(struct h *h, const uint8_t *frame, uint32_t len, uint32_t flags);
void h_inject_burst(struct h *h, const uint8_t *const *frames, const uint32_t *lens, unsigned n);

/* ---- frame builders (from a peer to h's stack) ---- */
uint32_t h_build_eth(uint8_t *out, const uint8_t *dst, const uint8_t *src, uint16_t type);
uint32_t h_build_arp(uint8_t *out, const uint8_t *eth_dst, const uint8_t *eth_src, uint16_t op,
		     const uint8_t *sha, uint32_t spa, const uint8_t *tha, uint32_t tpa);
void h_arp_request(struct h *h, const uint8_t *mac, uint32_t ip, uint32_t target_ip);
void h_arp_reply(struct h *h, const uint8_t *mac, uint32_t ip);
/* IPv4 frame to h's stack from src (host order) with the given L4 payload;
 * returns length. Valid header checksum. */
uint32_t h_build_ip4(struct h *h, uint8_t *out, const uint8_t *src_mac, uint32_t src, uint32_t dst,
		     uint8_t proto, const uint8_t *l4, uint32_t l4len);
/* recompute the IPv4 header checksum of a frame (ihl from the header) */
void h_fix_ip_csum(uint8_t *frame);
/* recompute the TCP checksum over l4len bytes after the IP header */
void h_fix_tcp_csum(uint8_t *frame, uint32_t l4len);
uint32_t h_build_icmp_echo(struct h *h, uint8_t *out, uint8_t type, uint16_t id, uint16_t seq,
			   const uint8_t *payload, uint32_t plen);
/* TCP segment from peer p; o may be NULL (then TS is added when p->ts) */
uint32_t h_build_tcp(struct h *h, uint8_t *out, const struct h_peer *p, uint8_t flags, uint32_t seq,
		     uint32_t ack, uint16_t win, const struct h_topts *o, const uint8_t *payload,
		     uint32_t len);
/* build + inject; bumps p->tsval when TS is automatic */
void h_tcp_seg(struct h *h, struct h_peer *p, uint8_t flags, uint32_t seq, uint32_t ack,
	       uint16_t win, const struct h_topts *o, const uint8_t *payload, uint32_t len);
/* data at p->snd_nxt, ACK p->rcv_nxt, window p->win; advances p->snd_nxt */
void h_peer_data(struct h *h, struct h_peer *p, const uint8_t *payload, uint32_t len);
/* a pure ACK of p->rcv_nxt */
void h_peer_ack(struct h *h, struct h_peer *p);
/* record what the peer learnt from a segment of the stack (TS) */
void h_peer_saw(struct h_peer *p, const struct h_pkt *k);

/* ---- peers and handshakes ---- */
void h_peer_init(struct h_peer *p, uint16_t port, uint16_t lport);
/* active open: stk_tcp_connect, answer ARP if asked, SYN -> SYN-ACK(peer_isn,
 * synack opts, may be NULL = MSS 1460 only) -> ACK; asserts CONNECTED */
struct stk_tcb *h_connect(struct h *h, struct h_peer *p, uint64_t user, uint32_t peer_isn,
			  const struct h_topts *synack);
/* passive open on p->lport (listener must exist): SYN(peer_isn, syn opts) ->
 * SYN-ACK -> ACK; asserts ACCEPTED */
struct stk_tcb *h_accept(struct h *h, struct h_peer *p, uint32_t peer_isn,
			 const struct h_topts *syn);

/* ---- events / streams ---- */
struct h_conn *h_conn_of(struct h *h, const struct stk_tcb *c);
struct h_conn *h_conn_id(struct h *h, uint32_t id);
unsigned h_ev_count(const struct h *h, enum stk_ev ev);
/* index of the first event of type ev for id at or after from; -1 if none */
int h_ev_find(const struct h *h, uint32_t id, enum stk_ev ev, unsigned from);

/* ---- application helpers ---- */
/* stk_tcp_send of len bytes: the pattern byte for stream offset off is
 * h_pat(off + pat_off); returns stk_tcp_send's result (buffer freed by the
 * harness when refused) */
int h_send(struct h *h, struct stk_tcb *c, uint64_t pat_off, uint32_t len);
static inline uint8_t
h_pat(uint64_t off)
{
	return (uint8_t)((off * 131u + (off >> 8) * 7u + 13u) & 0xff);
}
void h_fill_pat(uint8_t *dst, uint64_t off, uint32_t len);
/* true when buf[0..len) equals the pattern from off */
bool h_check_pat(const uint8_t *buf, uint64_t off, uint32_t len);

/* ---- misc ---- */
uint64_t h_fnv_init(void);
uint64_t h_fnv(uint64_t h, const uint8_t *p, size_t n);
uint64_t h_rand(uint64_t *s);
uint16_t h_csum(const void *data, size_t len, uint32_t sum);

/* ---- two stacks on one wire ---- */
struct h_wire_cfg {
	uint64_t seed;
	unsigned drop_ppm, dup_ppm, reorder_ppm, corrupt_ppm;
	uint64_t delay_ns;   /* one-way latency */
	uint64_t rate_bps;   /* link rate each way, bits/s: frames queue behind each
			      * other without limit (0: no limit) */
	uint64_t reorder_ns; /* extra delay of a reordered frame */
	/* optional: every frame as sent (before any fault), parsed; dir 0: a -> b */
	void (*observe)(int dir, const struct h_pkt *k);
};
struct h_wire;
struct h_wire *h_wire_new(struct h *a, struct h *b, const struct h_wire_cfg *cfg);
/* deliver every frame due by now, both directions; returns frames delivered */
unsigned h_wire_pump(struct h_wire *w);
void h_wire_free(struct h_wire *w);
struct h_wire_stats {
	uint64_t sent, delivered, dropped, duplicated, reordered, corrupted;
	uint64_t max_queue_ns; /* rate_bps: the longest a frame waited for the link */
};
const struct h_wire_stats *h_wire_stats(const struct h_wire *w, int dir); /* 0: a->b */

/* sequence arithmetic (RFC 9293 3.4), the tests' own */
#define H_SEQ_LT(a, b) ((int32_t)((uint32_t)(a) - (uint32_t)(b)) < 0)
#define H_SEQ_LEQ(a, b) ((int32_t)((uint32_t)(a) - (uint32_t)(b)) <= 0)
#define H_SEQ_GT(a, b) ((int32_t)((uint32_t)(a) - (uint32_t)(b)) > 0)
#define H_SEQ_GEQ(a, b) ((int32_t)((uint32_t)(a) - (uint32_t)(b)) >= 0)

/* check helpers */
#define H_TCP_FLAGS_ONLY(k, f)                                                                     \
	ck_assert_msg((k)->flags == (f), "tcp flags 0x%02x, expected 0x%02x", (k)->flags, (f))

#endif
