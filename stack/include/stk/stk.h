/* SPDX-License-Identifier: BSD-3-Clause
 * stk/stk.h — libstk: one IPv4 interface (Ethernet, ARP, IPv4, ICMP echo, TCP)
 * with no DPDK and no kernel: it reaches the outside only through struct stk_ops.
 *
 * One struct stk belongs to one thread (one lcore); nothing in it is shared.
 *
 * Buffers. The stack never allocates packet memory itself. A buffer is an opaque
 * handle (struct stk_buf *, an rte_mbuf in the tcp plugin) plus a data pointer
 * and a length into it. Frames handed to stk_input() become the stack's: it
 * frees them (ops.buf_free), transmits them in place (ICMP and ARP replies),
 * holds them (out-of-order queue) or hands them to the application with the
 * payload's pointer and length (ops.event STK_EV_DATA: zero copy; the owner
 * moves its offsets, nothing is memmove'd). Frames it builds come from
 * ops.tx_alloc and go out through ops.tx, which owns them from then on.
 *
 * Time. ops.clock_ns is read once at the start of stk_input_burst() and
 * stk_poll(); everything inside one call sees that time.
 *
 * Entry points, in the order a caller uses them:
 *   stk_config_init   defaults into a struct stk_config
 *   stk_config_check  its rules (stk_create runs it; so can a config validator)
 *   stk_create        validate the config, allocate (ops.alloc), NULL + errno
 *   stk_start         gratuitous ARP
 *   stk_input_burst   received frames (eth.c -> arp.c | ip4.c -> icmp.c | tcp_in.c)
 *   stk_poll          timers of the active connections and ARP (tcp_timer.c, arp.c)
 *   stk_tcp_*         the application's side (stk/tcp.h)
 *   stk_destroy       frees every connection and buffer
 */
#ifndef STK_STK_H
#define STK_STK_H

#include <stddef.h>
#include <stdint.h>
#include <stdbool.h>

#ifdef __cplusplus
extern "C" {
#endif

struct stk;
struct stk_buf;  /* opaque to the stack */
struct stk_tcb;  /* a TCP connection, stk/tcp.h */

/* flags on received frames (stk_rx.flags) */
#define STK_RX_IP_CSUM_OK 0x1u  /* the port verified the IPv4 header checksum */
#define STK_RX_L4_CSUM_OK 0x2u  /* the port verified the TCP/ICMP checksum */

/* flags on transmitted frames (ops.tx): the stack left these checksums for the
 * port. The IPv4 checksum field is 0 and the TCP one holds the pseudo-header
 * sum, as DPDK's RTE_MBUF_F_TX_IP_CKSUM / RTE_MBUF_F_TX_TCP_CKSUM expect.
 * l2/l3 lengths are fixed: 14 and the IPv4 header length (20: no options out). */
#define STK_TX_IP_CSUM 0x1u
#define STK_TX_TCP_CSUM 0x2u

enum stk_log_level { STK_LOG_ERR = 3, STK_LOG_WARNING = 4, STK_LOG_INFO = 6, STK_LOG_DEBUG = 7 };

/* connection events (ops.event); see stk/tcp.h for who owns what */
enum stk_ev {
	STK_EV_DATA = 1,        /* in-order payload: buf, data, len */
	STK_EV_CONNECTED = 2,   /* active open: ESTABLISHED */
	STK_EV_ACCEPTED = 3,    /* passive open: ESTABLISHED; user = the listener's */
	STK_EV_PEER_CLOSED = 4, /* FIN: no more data will come */
	STK_EV_CLOSED = 5,      /* both directions done; tcb dead after the call */
	STK_EV_RESET = 6,       /* RST received; reason ECONNRESET or ECONNREFUSED; dead */
	STK_EV_TIMEOUT = 7,     /* retransmission / keepalive / connect gave up; dead */
	STK_EV_ERROR = 8,       /* reason = errno (e.g. EHOSTUNREACH); dead */
};

struct stk_ops {
	void *ctx; /* first argument of every op */
	/* Transmit `len` bytes at `data` inside b. Always consumes b (sends or
	 * frees it). Return 0, or a negative errno when it had to drop (counted). */
	int (*tx)(void *ctx, struct stk_buf *b, uint8_t *data, uint32_t len, uint32_t flags);
	/* A buffer with at least `len` contiguous bytes at *data; NULL when exhausted. */
	struct stk_buf *(*tx_alloc)(void *ctx, uint32_t len, uint8_t **data);
	void (*buf_free)(void *ctx, struct stk_buf *b);
	/* monotonic nanoseconds */
	uint64_t (*clock_ns)(void *ctx);
	/* unpredictable 64 bits (ISNs, ephemeral ports) */
	uint64_t (*random)(void *ctx);
	/* zeroed memory for control blocks and queue nodes; NULL when exhausted */
	void *(*alloc)(void *ctx, size_t size);
	void (*free)(void *ctx, void *p);
	/* optional; one line without the trailing newline */
	void (*log)(void *ctx, int level, const char *msg);
	/* connection events; see stk/tcp.h */
	void (*event)(void *ctx, struct stk_tcb *c, uint64_t user, enum stk_ev ev, int reason,
		      struct stk_buf *b, uint8_t *data, uint32_t len);
};

#define STK_MAX_STATIC_NEIGH 16

/* stk_config.backlog_full: a SYN arriving at a listener whose backlog of
 * half-open connections is full */
enum stk_backlog_full {
	STK_BACKLOG_COOKIES = 0, /* a SYN cookie (RFC 4987 3.6): a stateless SYN-ACK
				  * whose ISN the peer's ACK must return; the
				  * connection then has MSS only (no WS/SACK/TS) */
	STK_BACKLOG_EVICT = 1,   /* the oldest half-open connection is dropped */
	STK_BACKLOG_DROP = 2,    /* the SYN is dropped (the peer retries) */
};

/* stk_config.congestion: the congestion control of a connection */
enum stk_cc {
	STK_CC_RENO = 0, /* RFC 5681 with RFC 6937 PRR (SACK) or RFC 6582 NewReno */
	STK_CC_BBR = 1,  /* BBR (v1, as Linux's tcp_bbr.c), paced: a model of the
			  * path's bandwidth and RTT from delivery-rate samples;
			  * loss alone is not congestion. Needs SACK */
};

struct stk_neigh_static {
	uint32_t ip; /* network order */
	uint8_t mac[6];
};

struct stk_config {
	uint8_t mac[6];
	uint32_t ip;      /* network order */
	uint8_t prefix;   /* netmask length */
	uint32_t gateway; /* network order; 0 = none (on-link only) */
	uint16_t mtu;     /* IP MTU, 576..9000 */
	bool tx_csum_offload; /* leave IP/TCP checksums to the port (STK_TX_*) */
	/* ARP */
	unsigned arp_entries;    /* cache size (power of two rounded up) */
	uint32_t arp_timeout_ms; /* a resolved entry is refreshed after this */
	uint32_t arp_retry_ms;   /* request retransmission interval */
	unsigned arp_retries;    /* requests before giving up */
	unsigned arp_pending;    /* frames queued per unresolved neighbour */
	unsigned n_static;
	struct stk_neigh_static neigh[STK_MAX_STATIC_NEIGH];
	/* TCP */
	unsigned max_conns;      /* control blocks, TIME_WAIT included */
	uint16_t ephemeral_port_min, ephemeral_port_max; /* local ports of connects
				  * (default RFC 6335's dynamic range, 49152..65535) */
	bool time_wait_reuse;    /* with every port of the range taken to a peer
				  * address and port, a connect may take over a 4-tuple
				  * in our TIME_WAIT that used timestamps (tcp_tw_reuse) */
	uint32_t rcvbuf;         /* receive window we offer, bytes */
	uint32_t sndbuf;         /* bytes queued by the application, unacked included */
	uint32_t ooo_max_bytes;  /* out-of-order bytes held per connection */
	unsigned ooo_max_segs;   /* out-of-order segments held per connection */
	uint32_t time_wait_ms;
	uint32_t fin_wait2_ms;
	uint32_t delack_ms;
	unsigned ack_stretch;    /* in-order full segments one ACK may cover within a
				  * receive burst (stk_input_burst): <= 2 = an ACK every
				  * second segment (RFC 5681 4.2); more = stretch ACKs,
				  * one at the end of the burst, as Linux's under GRO */
	bool rx_coalesce;        /* in-order coalescing within a receive burst: a
				  * segment that repeats the headers of the one just
				  * delivered in order on its connection, and starts at
				  * RCV.NXT, skips the checks that one passed
				  * (stk_input_burst; counter tcp_coalesced) */
	uint32_t rto_min_ms, rto_max_ms, rto_init_ms;
	unsigned syn_retries;    /* SYN / SYN-ACK transmissions after the first */
	unsigned max_retries;    /* data retransmissions of one segment; also
				  * unanswered zero-window probes in a row */
	uint32_t persist_timeout_ms; /* a peer window that stays zero this long with
				      * data waiting: TIMEOUT (0 = never) */
	uint8_t backlog_full;    /* what a SYN to a full backlog gets: STK_BACKLOG_* */
	uint8_t congestion;      /* congestion control: STK_CC_* (a peer without
				  * SACK gets Reno whatever this says) */
	uint32_t keepalive_ms;   /* 0 = off */
	uint32_t keepalive_intvl_ms;
	unsigned keepalive_probes;
	bool window_scale, timestamps, sack;
	unsigned challenge_ack_limit; /* RFC 5961 challenge ACKs per second, per connection */
	uint32_t oow_ack_ms;     /* ACKs to unacceptable segments without payload: one per this, per connection */
	/* Delivered payload counts against the receive window until the
	 * application releases it (stk_tcp_rx_release): the window is the space
	 * the application has not given back, so a slow consumer slows the peer.
	 * false: payload is consumed once delivered (STK_EV_DATA returned). */
	bool rx_hold;
};

/* Counters of one stack: X(enum suffix, "json name"). Names starting "drop_"
 * are drop reasons. Every path that drops, refuses or errs bumps one. Names
 * ending "_peak" are high-water marks, not event counts: they only grow, so
 * they publish through the counters like the rest (tcp_half_open_peak: half-open
 * passive connections in the stack at once; tcp_ooo_held_peak: segments in one
 * connection's out-of-order queue; bufs_held_peak: stk_bufs_held()).
 * tcp_dup_segs, tcp_rst_stale and tcp_rst_no_conn count old news ignored, not
 * drops: a duplicate segment, a RST below RCV.NXT after the peer's FIN (the
 * answer to a segment of ours that crossed that FIN; see tcp_in.c), and a RST
 * for a connection the stack does not have (RFC 9293 3.10.7.1 discards it: the
 * same answers arriving after an exact one closed the connection). Loss recovery
 * with a SACK peer (tcp_sack.c): tcp_sack_recoveries (fast recovery episodes),
 * tcp_sack_retransmits (segments resent from the scoreboard, also counted in
 * tcp_retransmits), tcp_sack_blocks_in, tcp_rack_lost (segments RACK found
 * lost), tcp_tlp_probes / tcp_tlp_recoveries (tail loss probes sent / that
 * repaired a loss), tcp_dsack_in / tcp_dsack_out (D-SACK blocks received /
 * sent), tcp_dsack_undo (cwnd reductions undone: every retransmission of the
 * episode was D-SACKed). tcp_coalesced counts the segments that took the
 * coalesced path of cfg.rx_coalesce (also counted in rx_frames, ip_rx and
 * tcp_segs_in, as every segment is). */
#define STK_COUNTERS(X)                                                        \
	X(RX_FRAMES, "rx_frames")                                              \
	X(RX_BYTES, "rx_bytes")                                                \
	X(TX_FRAMES, "tx_frames")                                              \
	X(TX_BYTES, "tx_bytes")                                                \
	X(DROP_ETH_SHORT, "drop_eth_short")                                    \
	X(DROP_ETH_NOT_OURS, "drop_eth_not_ours")                              \
	X(DROP_ETH_TYPE, "drop_eth_type")                                      \
	X(ARP_RX, "arp_rx")                                                    \
	X(ARP_REQUESTS_TX, "arp_requests_tx")                                  \
	X(ARP_REPLIES_TX, "arp_replies_tx")                                    \
	X(ARP_GRATUITOUS_TX, "arp_gratuitous_tx")                              \
	X(ARP_RESOLVED, "arp_resolved")                                        \
	X(ARP_EXPIRED, "arp_expired")                                          \
	X(DROP_ARP_BAD, "drop_arp_bad")                                        \
	X(DROP_ARP_PENDING_FULL, "drop_arp_pending_full")                      \
	X(DROP_ARP_UNRESOLVED, "drop_arp_unresolved")                          \
	X(DROP_ARP_CACHE_FULL, "drop_arp_cache_full")                          \
	X(IP_RX, "ip_rx")                                                      \
	X(DROP_IP_SHORT, "drop_ip_short")                                      \
	X(DROP_IP_VERSION, "drop_ip_version")                                  \
	X(DROP_IP_HDR_LEN, "drop_ip_hdr_len")                                  \
	X(DROP_IP_TOTAL_LEN, "drop_ip_total_len")                              \
	X(DROP_IP_CSUM, "drop_ip_csum")                                        \
	X(DROP_IP_TTL, "drop_ip_ttl")                                          \
	X(DROP_IP_NOT_OURS, "drop_ip_not_ours")                                \
	X(DROP_IP_FRAGMENT, "drop_ip_fragment")                                \
	X(DROP_IP_PROTO, "drop_ip_proto")                                      \
	X(DROP_NO_ROUTE, "drop_no_route")                                      \
	X(ICMP_ECHO_RX, "icmp_echo_rx")                                        \
	X(ICMP_ECHO_TX, "icmp_echo_tx")                                        \
	X(DROP_ICMP_BAD, "drop_icmp_bad")                                      \
	X(DROP_ICMP_TYPE, "drop_icmp_type")                                    \
	X(ICMP_FRAG_NEEDED, "icmp_frag_needed")                                \
	X(DROP_ICMP_UNMATCHED, "drop_icmp_unmatched")                          \
	X(TCP_PMTU_LOWERED, "tcp_pmtu_lowered")                                \
	X(TCP_SEGS_IN, "tcp_segs_in")                                          \
	X(TCP_SEGS_OUT, "tcp_segs_out")                                        \
	X(TCP_BYTES_IN, "tcp_bytes_in")                                        \
	X(TCP_BYTES_OUT, "tcp_bytes_out")                                      \
	X(TCP_RETRANSMITS, "tcp_retransmits")                                  \
	X(TCP_FAST_RETRANSMITS, "tcp_fast_retransmits")                        \
	X(TCP_RTO_EXPIRED, "tcp_rto_expired")                                  \
	X(TCP_SACK_RECOVERIES, "tcp_sack_recoveries")                          \
	X(TCP_SACK_RETRANSMITS, "tcp_sack_retransmits")                        \
	X(TCP_SACK_BLOCKS_IN, "tcp_sack_blocks_in")                            \
	X(TCP_RACK_LOST, "tcp_rack_lost")                                      \
	X(TCP_TLP_PROBES, "tcp_tlp_probes")                                    \
	X(TCP_TLP_RECOVERIES, "tcp_tlp_recoveries")                            \
	X(TCP_DSACK_IN, "tcp_dsack_in")                                        \
	X(TCP_DSACK_OUT, "tcp_dsack_out")                                      \
	X(TCP_DSACK_UNDO, "tcp_dsack_undo")                                    \
	X(TCP_OOO_SEGS, "tcp_ooo_segs")                                        \
	X(TCP_OOO_FILLED, "tcp_ooo_filled")                                    \
	X(TCP_DUP_SEGS, "tcp_dup_segs")                                        \
	X(TCP_PARTIAL_DUP, "tcp_partial_dup")                                  \
	X(TCP_DUP_ACKS_IN, "tcp_dup_acks_in")                                  \
	X(TCP_ACKS_OUT, "tcp_acks_out")                                        \
	X(TCP_STRETCH_ACKS, "tcp_stretch_acks")                                \
	X(TCP_COALESCED, "tcp_coalesced")                                      \
	X(TCP_DELAYED_ACKS, "tcp_delayed_acks")                                \
	X(TCP_WINDOW_PROBES, "tcp_window_probes")                              \
	X(TCP_ZERO_WINDOW_IN, "tcp_zero_window_in")                            \
	X(TCP_ZERO_WINDOW_OUT, "tcp_zero_window_out")                          \
	X(TCP_WINDOW_UPDATES, "tcp_window_updates")                            \
	X(TCP_RCV_WINDOW_FULL, "tcp_rcv_window_full")                          \
	X(TCP_KEEPALIVES, "tcp_keepalives")                                    \
	X(TCP_RST_IN, "tcp_rst_in")                                            \
	X(TCP_RST_STALE, "tcp_rst_stale")                                      \
	X(TCP_RST_NO_CONN, "tcp_rst_no_conn")                                  \
	X(TCP_RST_OUT, "tcp_rst_out")                                          \
	X(TCP_CHALLENGE_ACKS, "tcp_challenge_acks")                            \
	X(TCP_OOW_ACKS_LIMITED, "tcp_oow_acks_limited")                        \
	X(TCP_CONNECTS, "tcp_connects")                                        \
	X(TCP_ACCEPTS, "tcp_accepts")                                          \
	X(TCP_ESTABLISHED, "tcp_established")                                  \
	X(TCP_CLOSED, "tcp_closed")                                            \
	X(TCP_TIME_WAIT_REUSED, "tcp_time_wait_reused")                        \
	X(TCP_TIME_WAIT_RECYCLED, "tcp_time_wait_recycled")                    \
	X(TCP_TIME_WAIT_RECONNECTS, "tcp_time_wait_reconnects")                \
	X(TCP_RESETS, "tcp_resets")                                            \
	X(TCP_TIMEOUTS, "tcp_timeouts")                                        \
	X(TCP_PERSIST_TIMEOUTS, "tcp_persist_timeouts")                        \
	X(TCP_SYNCOOKIES_SENT, "tcp_syncookies_sent")                          \
	X(TCP_SYNCOOKIES_OK, "tcp_syncookies_ok")                              \
	X(TCP_HALF_OPEN_PEAK, "tcp_half_open_peak")                            \
	X(TCP_OOO_HELD_PEAK, "tcp_ooo_held_peak")                              \
	X(BUFS_HELD_PEAK, "bufs_held_peak")                                    \
	X(DROP_TCP_SHORT, "drop_tcp_short")                                    \
	X(DROP_TCP_CSUM, "drop_tcp_csum")                                      \
	X(DROP_TCP_BAD_OFF, "drop_tcp_bad_off")                                \
	X(DROP_TCP_BAD_OPT, "drop_tcp_bad_opt")                                \
	X(DROP_TCP_BAD_FLAGS, "drop_tcp_bad_flags")                            \
	X(DROP_TCP_NO_CONN, "drop_tcp_no_conn")                                \
	X(DROP_TCP_OUT_OF_WINDOW, "drop_tcp_out_of_window")                    \
	X(DROP_TCP_PAWS, "drop_tcp_paws")                                      \
	X(DROP_TCP_BAD_ACK, "drop_tcp_bad_ack")                                \
	X(DROP_TCP_RST_INVALID, "drop_tcp_rst_invalid")                        \
	X(DROP_TCP_OOO_LIMIT, "drop_tcp_ooo_limit")                            \
	X(DROP_TCP_RX_PRESSURE, "drop_tcp_rx_pressure")                        \
	X(DROP_TCP_BACKLOG, "drop_tcp_backlog")                                \
	X(DROP_TCP_CONN_LIMIT, "drop_tcp_conn_limit")                          \
	X(DROP_TCP_CHALLENGE_LIMIT, "drop_tcp_challenge_limit")                \
	X(DROP_TCP_NOMEM, "drop_tcp_nomem")                                    \
	X(TCP_SNDBUF_FULL, "tcp_sndbuf_full")                                  \
	X(DROP_TCP_STATE, "drop_tcp_state")                                    \
	X(DROP_TX_NOBUF, "drop_tx_nobuf")                                      \
	X(DROP_TX, "drop_tx")

enum stk_ctr {
#define X(e, s) STK_C_##e,
	STK_COUNTERS(X)
#undef X
	STK_C__COUNT
};

/* the counters' JSON names, indexed by enum stk_ctr */
extern const char *const stk_counter_names[STK_C__COUNT];

/* one received frame for stk_input_burst() */
struct stk_rx {
	struct stk_buf *b;
	uint8_t *data; /* the Ethernet header */
	uint32_t len;
	uint32_t flags; /* STK_RX_* */
};

void stk_config_init(struct stk_config *c);
/* the rules stk_create() checks a config against, alone (no allocation, no ops):
 * 0, or -EINVAL with a one-line reason in msg */
int stk_config_check(const struct stk_config *c, char *msg, size_t len);
/* errmsg (may be NULL) receives a one-line reason on failure */
struct stk *stk_create(const struct stk_config *c, const struct stk_ops *ops, char *errmsg, size_t errlen);
void stk_destroy(struct stk *st);
void stk_start(struct stk *st);
/* Takes ownership of every frame. */
void stk_input_burst(struct stk *st, const struct stk_rx *rx, unsigned n);
/* Timers; returns how many timer actions ran (0 = idle). */
unsigned stk_poll(struct stk *st);
/* counter array, indexed by enum stk_ctr (read-only; plain uint64_t written by
 * the owning thread) */
const uint64_t *stk_counters(const struct stk *st);
/* outstanding buffers: frames and application buffers the stack holds now
 * (out-of-order queues, send queues, ARP pending); memory tests assert on it */
uint64_t stk_bufs_held(const struct stk *st);
/* live connection control blocks, TIME_WAIT included */
unsigned stk_conns(const struct stk *st);
/* The owner runs short of buffers (on) or no longer (off). While on, segments
 * that would wait in an out-of-order queue are refused, unacknowledged
 * (drop_tcp_rx_pressure: the peer sends them again); in-order payload still
 * goes to the application (it fills the holes that free the queues, and the
 * receive window bounds what the application holds), and ACKs keep freeing
 * send queues. */
void stk_rx_pressure(struct stk *st, bool on);

/* Internet checksum helpers (exported for tests and the plugin) */
uint32_t stk_csum_partial(const void *data, size_t len, uint32_t sum);
uint16_t stk_csum_fold(uint32_t sum);
/* which loop stk_csum_partial runs for buffers of 64 bytes or more: "avx2"
 * (picked at the first call when the CPU has it), "sse2", or "scalar" */
const char *stk_csum_impl(void);
/* tests and benchmarks: run "scalar", "sse2" or "avx2" from now on; -1 when
 * this CPU or build has no such loop */
int stk_csum_use(const char *impl);

#ifdef __cplusplus
}
#endif
#endif
