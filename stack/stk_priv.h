/* SPDX-License-Identifier: BSD-3-Clause
 * stk_priv.h — libstk internals shared by its files (never installed). */
#ifndef STK_PRIV_H
#define STK_PRIV_H

#include <endian.h>
#include <errno.h>
#include <string.h>
#include <sys/queue.h>

#include <stk/stk.h>
#include <stk/tcp.h>
#include <stk/prot/eth.h>
#include <stk/prot/arp.h>
#include <stk/prot/ip4.h>
#include <stk/prot/icmp.h>
#include <stk/prot/tcp.h>

#define STK_LIKELY(x) __builtin_expect(!!(x), 1)
#define STK_UNLIKELY(x) __builtin_expect(!!(x), 0)

#define STK_CTR(st, c) ((st)->ctr[STK_C_##c]++)
#define STK_CTR_ADD(st, c, n) ((st)->ctr[STK_C_##c] += (n))

/* sequence-number arithmetic modulo 2^32 (RFC 9293 3.4) */
#define SEQ_LT(a, b) ((int32_t)((uint32_t)(a) - (uint32_t)(b)) < 0)
#define SEQ_LEQ(a, b) ((int32_t)((uint32_t)(a) - (uint32_t)(b)) <= 0)
#define SEQ_GT(a, b) ((int32_t)((uint32_t)(a) - (uint32_t)(b)) > 0)
#define SEQ_GEQ(a, b) ((int32_t)((uint32_t)(a) - (uint32_t)(b)) >= 0)
#define SEQ_MAX(a, b) (SEQ_GT(a, b) ? (a) : (b))
#define SEQ_MIN(a, b) (SEQ_LT(a, b) ? (a) : (b))

#define STK_MS 1000000ull

/* ---- ARP (arp.c) ---- */
struct stk_pending {
	struct stk_pending *next;
	struct stk_buf *b;
	uint8_t *data; /* Ethernet header; dst filled on resolution */
	uint32_t len, flags;
};

enum { STK_ARP_FREE = 0, STK_ARP_INCOMPLETE, STK_ARP_REACHABLE, STK_ARP_STATIC };

struct stk_arp_entry {
	uint32_t ip;
	uint8_t state;
	uint8_t tries;
	uint8_t mac[6];
	uint64_t updated;   /* ns of the last reply */
	uint64_t next_try;  /* ns of the next request (incomplete or refreshing) */
	unsigned n_pending;
	/* frames waiting for the reply, oldest first. Plain head and tail
	 * pointers, not a STAILQ: arp_remove() moves entries by value, and an
	 * empty STAILQ's tail points into its own head */
	struct stk_pending *pend_head, *pend_tail;
};

/* ---- TCP ---- */
struct stk_seg_node { /* out-of-order segment, sorted by seq */
	struct stk_seg_node *next;
	uint32_t seq, len;
	bool fin;
	struct stk_buf *b;
	uint8_t *data;
};

/* The out-of-order queue is one list of segments (c->ooo, by seq) cut into
 * blocks of contiguous data: a sorted array (c->oblk) searched by bisection,
 * so that placing a segment and building SACK blocks never walk the list. */
struct stk_ooo_blk {
	uint32_t seq, end;                /* [seq, end); end counts a FIN */
	struct stk_seg_node *head, *tail; /* its segments in c->ooo */
};

/* the first of n blocks (sorted by seq) ending after seq; n if none: bisection */
static inline unsigned
stk_oblk_find(const struct stk_ooo_blk *blk, unsigned n, uint32_t seq)
{
	unsigned lo = 0, hi = n;

	while (lo < hi) {
		unsigned m = lo + (hi - lo) / 2;

		if (SEQ_LEQ(blk[m].end, seq))
			lo = m + 1;
		else
			hi = m;
	}
	return lo;
}

struct stk_snd_node { /* application buffer in the send queue */
	STAILQ_ENTRY(stk_snd_node) next;
	uint32_t seq; /* sequence number of data[0] */
	uint32_t len;
	struct stk_buf *b;
	const uint8_t *data;
};

/* One segment sent to a SACK peer and not yet acknowledged (tcp_sack.c). The
 * records of a connection sit in a ring in sequence order, [sb.head, sb.tail),
 * and those in flight (neither SACKed nor marked lost) also on a list in the
 * order of their last transmission, for RACK (RFC 8985). */
struct stk_txrec {
	uint32_t seq, end;    /* [seq, end); end counts a FIN */
	uint64_t xmit;        /* ns of the last transmission */
	/* the connection's delivery state at the last transmission (tcp_rate.c):
	 * sb.del_ns, sb.first_tx_ns, sb.del_total (its low 32 bits) */
	uint64_t del_ns, first_tx;
	uint32_t tprev, tnext; /* time order: record ids, SB_NIL ends */
	uint32_t del;
	uint8_t flags;
#define SB_SACKED 0x01
#define SB_LOST 0x02
#define SB_RETRANS 0x04 /* a retransmission is in flight */
#define SB_FIN 0x08
#define SB_EVER_RETRANS 0x10
#define SB_LINKED 0x20  /* on the time list */
#define SB_APP_LIMITED 0x40 /* sent while the application left the path idle */
};
#define SB_NIL 0xffffffffu

/* One ACK's delivery-rate sample (tcp_rate.c): bytes delivered over
 * interval_ns, measured from the most recently sent segment that this ACK
 * delivered. delivered 0: no sample from this ACK. */
struct stk_rate_sample {
	uint64_t prior_total, prior_ns; /* that segment's del_total, del_ns */
	uint64_t prior_xmit;            /* and its send time, its end */
	uint32_t prior_end;
	uint32_t delivered;
	uint64_t interval_ns;
	uint64_t rtt_ns;  /* that segment's RTT (0: it was retransmitted) */
	uint32_t acked;   /* bytes this ACK delivered (sb.delivered) */
	uint32_t losses;  /* bytes marked lost since the ACK began */
	uint32_t prior_in_flight; /* pipe before the ACK */
	bool has_prior;   /* the ACK delivered a segment */
	bool app_limited; /* that segment went out during an idle spell */
};

/* BBR's state (tcp_bbr.c); rates in bytes/s, gains in 1/256 */
struct stk_bbr {
	struct {
		uint64_t v;
		uint32_t t;
	} bw[3];                   /* windowed max of the bandwidth, over rounds */
	uint64_t min_rtt_ns, min_rtt_stamp;
	uint64_t probe_rtt_done;   /* ns: PROBE_RTT may end (0: not yet timed) */
	uint64_t next_rtt_delivered; /* del_total that ends this round */
	uint64_t cycle_stamp;      /* ns: this PROBE_BW phase began */
	uint64_t full_bw;
	uint64_t ack_epoch_stamp;
	uint32_t ack_epoch_acked, extra_acked[2];
	uint32_t rtt_cnt;          /* rounds */
	uint32_t prior_cwnd;       /* before a recovery or PROBE_RTT */
	uint16_t pacing_gain, cwnd_gain;
	uint8_t mode, cycle_idx, full_bw_cnt, prev_ca_state;
	uint8_t extra_acked_win_rtts, extra_acked_win_idx;
	bool round_start, full_bw_reached, packet_conservation, idle_restart;
	bool probe_rtt_round_done, has_seen_rtt;
};

/* The send side's scoreboard for a SACK peer (tcp_sack.c): RFC 6675 with
 * RACK-TLP (RFC 8985) and D-SACK undo (RFC 2883, RFC 3708). Byte counts. */
struct stk_sb {
	struct stk_txrec *r;
	uint32_t cap;             /* records, a power of two (0: none yet) */
	uint32_t head, tail;      /* ids of the live records: [head, tail) */
	uint32_t t_first, t_last; /* time list */
	uint32_t rxt;             /* id: no record below needs retransmitting */
	uint32_t mark;            /* id: records below were past the RFC 6675 threshold */
	uint32_t out, sacked, lost, retrans; /* pipe = out - sacked - lost + retrans */
	uint32_t sack_high;       /* end of the highest SACKed byte (when sacked > 0) */
	/* RACK: the most recently sent segment delivered, its RTT */
	uint64_t rack_xmit, rack_rtt, min_rtt; /* ns; min_rtt 0: none */
	uint64_t last_xmit;       /* ns of the latest transmission (xmit_stamp) */
	uint32_t rack_end;
	/* undo (D-SACK): the cwnd before the episode, retransmissions not D-SACKed */
	uint32_t prior_cwnd, prior_ssthresh, undo_marker;
	int32_t undo_retrans;
	uint32_t tlp_seq, tlp_high; /* the probe's first byte; snd_max when it went */
	/* RACK's reordering window (RFC 8985 6.2 step 4): (1 + reo_steps) quarters
	 * of min_rtt; a D-SACK adds a step once per round trip (until snd_una
	 * passes dsack_round), and reo_persist recoveries later it is one again */
	uint32_t dsack_round;
	uint8_t reo_steps, reo_persist;
	/* PRR (RFC 6937) through fast recovery */
	uint32_t recover_fs, prr_delivered, prr_out;
	uint32_t delivered;       /* bytes the last ACK delivered (cumulative + SACK) */
	uint64_t ack_rtt;         /* ns: the last ACK's RTT sample (0: none), from the
				   * latest segment it acknowledged never retransmitted */
	uint8_t tlp_count;        /* probes in a row without an ACK of new data */
	uint8_t sflags;
	/* delivery rate (tcp_rate.c): bytes delivered ever, when that last grew,
	 * the send time of the latest segment delivered; app_limited: del_total
	 * at which the application's idle spell leaves the pipe (0: not) */
	uint64_t del_total, del_ns, first_tx_ns, app_limited;
	struct stk_rate_sample rs; /* the sample of the ACK being processed */
	/* the sample kept: the last one not app-limited, or a higher one */
	uint64_t rate_bytes, rate_ns;
	bool rate_app_limited;
#define SF_LOSS 0x01      /* after an RTO, until snd_una reaches recover */
#define SF_REORDER 0x02   /* reordering seen: RACK waits reo_wnd */
#define SF_UNDO 0x04      /* an episode whose reduction may still be undone */
#define SF_TLP 0x08       /* a tail loss probe is out */
#define SF_TLP_RXT 0x10   /* ... and it was a retransmission */
#define SF_TLP_DSACK 0x20 /* ... which was D-SACKed: it repaired nothing */
#define SF_UNDONE 0x40    /* this episode's reduction was undone */
#define SF_DSACK_RND 0x80 /* dsack_round is set */
};

enum { STK_T_REXMT, STK_T_DELACK, STK_T_KEEP, STK_T_2MSL, STK_T_RACK, STK_T_PACE, STK_T__N };
enum { STK_REXMT_RTO, STK_REXMT_PERSIST, STK_REXMT_TLP };

struct stk_tcb {
	/* lookup */
	struct stk_tcb *hnext;              /* hash chain */
	LIST_ENTRY(stk_tcb) alink;          /* active list (timers armed) */
	uint32_t rip;                       /* remote ip, network order */
	uint16_t rport, lport;              /* host order */
	uint32_t id;
	uint16_t slot;
	uint8_t state;
	uint8_t flags;
#define TF_ACTIVE 0x01   /* on the active list */
#define TF_ACKNOW 0x02
#define TF_SENT_FIN 0x04 /* FIN queued (snd side closed by the app) */
#define TF_INRECOVERY 0x08
#define TF_DEAD 0x10     /* terminal event given: invisible to the app */
#define TF_PASSIVE 0x20
#define TF_RTT_TIMING 0x40
#define TF_RCVD_FIN 0x80
	uint8_t rexmt_mode;
	uint8_t dupacks;
	uint8_t rexmt_shift;   /* backoff exponent */
	uint8_t keep_probes;
	uint64_t user;
	struct stk_listener *listener_of; /* SYN_RCVD: the listener (backlog accounting) */
	TAILQ_ENTRY(stk_tcb) holink;      /* the listener's half-open list, oldest first */
	uint64_t timer[STK_T__N];    /* deadlines in ns, 0 = off */
	uint64_t next_deadline;

	/* send */
	uint32_t iss, snd_una, snd_nxt, snd_max; /* snd_max: highest sent + 1 */
	uint32_t snd_wnd;      /* peer's window (scaled) */
	uint32_t snd_wl1, snd_wl2;
	uint32_t max_snd_wnd;
	uint32_t cwnd, ssthresh, recover;
	uint32_t ca_acked;     /* congestion avoidance: bytes acked toward the next SMSS of cwnd */
	const struct stk_cc_ops *cc; /* congestion control (tcp_cc.c) */
	union {
		struct stk_bbr bbr;
	} ccs;                 /* its state */
	/* pacing (tcp_cc.c; 0: none): bytes/s, the earliest time of the next
	 * data segment, the ns of a byte (<< 10) and how far a burst may run
	 * ahead of that schedule */
	uint64_t pacing_rate, pace_next, pace_burst_ns;
	uint64_t pace_ns_per_kib;
	uint32_t mss;          /* payload per segment we send (options excluded) */
	uint32_t pmtu;         /* IP MTU of the path (cfg.mtu, lowered by RFC 1191) */
	uint32_t snd_queued;   /* bytes in the send queue (unacked + unsent) */
	uint32_t sndbuf;
	uint32_t fin_seq;      /* seq of our FIN when TF_SENT_FIN */
	uint32_t snd_end;      /* seq after the last queued data byte (iss + 1 + bytes queued ever) */
	STAILQ_HEAD(, stk_snd_node) sq; /* sequence order */
	struct stk_snd_node *sq_cursor;  /* the node the last copy began in, or NULL */
	uint32_t rtt_seq;      /* Karn: the timed segment */
	uint64_t rtt_start;
	int64_t srtt_us, rttvar_us; /* 0 = no sample yet */
	uint64_t rto_ns;
	struct stk_sb sb;      /* SACK scoreboard (sack_ok) */

	/* receive */
	uint32_t irs, rcv_nxt, rcv_adv; /* rcv_adv: right edge advertised */
	uint32_t rcv_rel;       /* rx_hold: stream offset the application released up to */
	uint32_t rcv_wnd;
	uint8_t snd_wscale, rcv_wscale; /* shift applied to the peer's / our window */
	bool ts_ok, sack_ok, ws_ok;
	uint32_t ts_recent, last_ack_sent, ts_off;
	uint64_t last_rx;       /* ns of the last segment received (keepalive) */
	uint16_t zflags;
#define TZ_ZOMBIE 0x1 /* released while being processed: freed at the end */
#define TZ_BURST_ACK 0x4 /* owes an ACK at the end of this receive burst (st->burst_ack) */
#define TZ_ZWND_OUT 0x2 /* the last window offered was zero */
	uint64_t ts_recent_age;
	unsigned segs_unacked;  /* full segments received since our last ACK */
	struct stk_seg_node *ooo;
	struct stk_ooo_blk *oblk; /* blocks of c->ooo, by seq */
	unsigned n_oblk, cap_oblk;
	uint32_t ooo_bytes;
	unsigned ooo_segs;
#define STK_SACK_HIST 4
	uint32_t sack_hist[STK_SACK_HIST]; /* starts of the latest OOO arrivals, newest first */
	unsigned n_sack_hist;
	uint32_t dsack_s, dsack_e; /* a duplicate to report first in the next ACK (RFC 2883) */
	bool dsack;

	/* neighbour cache hint */
	unsigned arp_idx;
	uint32_t nexthop;

	uint64_t challenge_window; /* ns start of the current second (RFC 5961 challenge ACKs) */
	unsigned challenge_count;
	uint64_t oow_ack_at;       /* ns of the last ACK to an out-of-window segment */
	uint64_t idle_since;
	uint64_t zw_since;        /* ns the peer's window closed with data waiting (0: open) */
	uint64_t probe_sent;      /* ns of the last zero-window probe */
	unsigned probes_unanswered; /* probes in a row with nothing received in between */
	struct stk_tcp_stats stats;
};

struct stk_listener {
	struct stk_listener *next;
	uint16_t port;
	unsigned backlog, pending;
	uint64_t user;
	TAILQ_HEAD(, stk_tcb) ho;         /* half-open connections, oldest first */
	uint64_t cookies_until; /* ns: ACKs are checked for SYN cookies until then */
};

/* options parsed from a segment */
struct stk_tcp_opts {
	uint16_t mss;
	uint8_t wscale;
	bool has_mss, has_ws, sack_perm, has_ts, has_sack;
	uint8_t n_sack;
	uint32_t tsval, tsecr;
	uint32_t sack[4][2]; /* blocks as sent: left, right */
};

struct stk {
	struct stk_config cfg;
	struct stk_ops ops;
	uint64_t now;      /* ns, from ops.clock_ns at the start of each entry */
	uint64_t ctr[STK_C__COUNT];
	uint64_t bufs_held;
	unsigned half_open; /* passive connections in SYN_RCVD, all listeners */
	uint64_t cookie_key[2]; /* SYN cookies' SipHash key (from ops.random) */
	uint64_t isn_key[2];    /* RFC 6528 ISNs' SipHash key (from ops.random) */
	uint32_t netmask;
	uint16_t ip_id;
	/* ARP */
	struct stk_arp_entry *arp;
	unsigned arp_mask;
	uint64_t arp_next_poll;
	/* TCP */
	struct stk_tcb **hash;
	unsigned hash_mask;
	struct stk_tcb **slots;  /* by slot: live control blocks */
	uint16_t *slot_gen;
	unsigned n_conns;
	unsigned slot_hint;
	LIST_HEAD(, stk_tcb) active; /* control blocks with a timer armed */
	uint64_t timer_min;      /* no deadline on the active list is earlier */
	struct stk_listener *listeners;
	struct stk_tcb *cur; /* the control block being processed (zombie guard) */
	/* stretch ACKs (cfg.ack_stretch): inside stk_input_burst, connections
	 * whose ACK waits for the burst's end */
	bool in_burst;
	unsigned n_burst_ack;
#define STK_BURST_ACK_MAX 32
	struct stk_tcb *burst_ack[STK_BURST_ACK_MAX];
	bool rx_pressure;    /* stk_rx_pressure(): refuse new payload */
	/* in-order coalescing (cfg.rx_coalesce), inside stk_input_burst: the
	 * headers of the segment just delivered in order on follow.c, which the
	 * burst's next frame may repeat (stk_tcp_follow); c NULL: none */
	struct stk_follow {
		struct stk_tcb *c;
		uint32_t src;       /* IPv4 source, network order */
		uint32_t ports;     /* the TCP header's first 4 bytes, as sent */
		uint16_t offfl;     /* bytes 12-13: data offset, flags without PSH */
		uint32_t hlen;      /* TCP header bytes, options included */
		uint8_t opt[40];    /* the options, as sent */
		struct stk_tcp_opts o; /* and as parsed */
	} follow;
	bool rx_more; /* stk_input_burst: another frame follows this one */
};

/* SipHash-2-4 of three 64-bit words (24 bytes, little-endian word order) */
uint64_t stk_siphash3(const uint64_t k[2], uint64_t m0, uint64_t m1, uint64_t m2);

/* logging */
void stk_logf(struct stk *st, int level, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* eth.c */
int stk_eth_output(struct stk *st, struct stk_buf *b, uint8_t *frame, uint32_t len, uint32_t nexthop,
		   uint32_t txflags, unsigned *arp_hint);
void stk_tx_frame(struct stk *st, struct stk_buf *b, uint8_t *frame, uint32_t len, uint32_t flags);

/* arp.c */
int stk_arp_init(struct stk *st);
void stk_arp_fini(struct stk *st);
void stk_arp_input(struct stk *st, struct stk_buf *b, uint8_t *frame, uint32_t len);
/* 0 = mac filled; 1 = frame queued pending resolution (stack owns it); <0 dropped */
int stk_arp_resolve(struct stk *st, uint32_t ip, struct stk_buf *b, uint8_t *frame, uint32_t len,
		    uint32_t txflags, unsigned *hint);
void stk_arp_gratuitous(struct stk *st);
unsigned stk_arp_poll(struct stk *st);

/* ip4.c */
void stk_ip4_input(struct stk *st, struct stk_buf *b, uint8_t *frame, uint32_t len, uint32_t flags);
uint32_t stk_ip4_nexthop(const struct stk *st, uint32_t dst);
/* fill the IPv4 header at ip (proto, payload length l4len) */
void stk_ip4_fill(struct stk *st, struct stk_ip4_hdr *ip, uint32_t dst, uint8_t proto, uint32_t l4len,
		  bool csum_offload);
uint32_t stk_ip4_pseudo(uint32_t src, uint32_t dst, uint8_t proto, uint32_t l4len);

/* icmp.c */
void stk_icmp_input(struct stk *st, struct stk_buf *b, uint8_t *frame, uint32_t len, uint32_t l3off,
		    uint32_t l4off, uint32_t l4len, uint32_t flags);

/* tcp_in.c */
void stk_tcp_input(struct stk *st, struct stk_buf *b, uint8_t *frame, struct stk_ip4_hdr *ip,
		   uint8_t *l4, uint32_t l4len, uint32_t flags);
int stk_tcp_parse_opts(const uint8_t *p, unsigned len, struct stk_tcp_opts *o);
/* in-order coalescing: true when the frame followed st->follow.c's last
 * segment and was taken (cfg.rx_coalesce, from stk_input_burst) */
bool stk_tcp_follow(struct stk *st, struct stk_buf *b, uint8_t *frame, uint32_t len, uint32_t flags);

/* tcp_out.c */
int stk_tcp_output(struct stk *st, struct stk_tcb *c);
int stk_tcp_send_ctl(struct stk *st, struct stk_tcb *c, uint8_t flags, uint32_t seq);
void stk_tcp_send_ack(struct stk *st, struct stk_tcb *c);
void stk_tcp_respond_rst(struct stk *st, const struct stk_ip4_hdr *ip, const struct stk_tcp_hdr *th,
			 uint32_t seglen);
/* a stateless SYN-ACK (SYN cookie iss), MSS option only */
void stk_tcp_send_cookie_synack(struct stk *st, const struct stk_ip4_hdr *ip, const struct stk_tcp_hdr *th,
				uint32_t iss, uint16_t mss);
int stk_tcp_xmit(struct stk *st, struct stk_tcb *c, uint32_t seq, uint32_t len, uint8_t flags);
void stk_tcp_retransmit_first(struct stk *st, struct stk_tcb *c);
/* RFC 1191: the path to rip:rport from lport carries at most mtu bytes, said
 * an ICMP message quoting our segment with sequence number seq. 0, or -1 when
 * no connection in a state that sends has seq in flight (a stale or forged
 * message: ignored) */
int stk_tcp_frag_needed(struct stk *st, uint32_t rip, uint16_t rport, uint16_t lport, uint32_t seq,
			uint16_t mtu);
/* new data beyond cwnd for a tail loss probe: at most one segment; sent or not */
bool stk_tcp_output_probe(struct stk *st, struct stk_tcb *c);

/* RFC 6675 pipe: out - sacked - lost + retrans (tcp_sack.c) */
static inline uint32_t
stk_sb_pipe(const struct stk_tcb *c)
{
	const struct stk_sb *b = &c->sb;

	return b->out - b->sacked - b->lost + b->retrans;
}

/* RFC 8985: was (t1, s1) sent after (t2, s2)? The end seq breaks ties. */
static inline bool
stk_sent_after(uint64_t t1, uint32_t s1, uint64_t t2, uint32_t s2)
{
	return t1 > t2 || (t1 == t2 && SEQ_GT(s1, s2));
}

/* tcp_cc.c: congestion control. A connection runs one algorithm through
 * these hooks. Reno's (RFC 5681 growth, PRR through a SACK recovery, NewReno
 * without SACK) lives in the loss-recovery code it shares with every
 * algorithm (tcp_in_ack.c, tcp_sack.c, tcp_timer.c), which asks cong_control
 * whether the algorithm sets cwnd itself: BBR (tcp_bbr.c) does, from each
 * ACK's rate sample, and paces. Adding one: its ops here and a line in
 * stk_cc_select(). */
enum { STK_CA_OPEN, STK_CA_RECOVERY, STK_CA_LOSS };
struct stk_cc_ops {
	const char *name;
	/* the connection is established (cwnd: the initial window) */
	void (*init)(struct stk *st, struct stk_tcb *c);
	/* a congestion event with flight bytes out (fast recovery, an RTO, a
	 * tail loss probe that repaired a loss): the new ssthresh */
	uint32_t (*ssthresh)(struct stk_tcb *c, uint32_t flight);
	/* an ACK of acked new bytes outside recovery (NULL: cong_control) */
	void (*cong_avoid)(struct stk_tcb *c, uint32_t acked);
	/* every ACK of a SACK connection once loss detection and recovery are
	 * done: sets cwnd and the pacing rate; NULL: the loss-recovery code
	 * sets cwnd (PRR, Reno's reductions) */
	void (*cong_control)(struct stk *st, struct stk_tcb *c);
	/* an RTO: everything not SACKed is lost, cwnd is one segment */
	void (*on_rto)(struct stk *st, struct stk_tcb *c);
	/* D-SACKs showed the episode's reduction needless: the cwnd now */
	uint32_t (*undo_cwnd)(struct stk_tcb *c);
	/* data goes out with nothing in flight */
	void (*tx_start)(struct stk *st, struct stk_tcb *c);
};
extern const struct stk_cc_ops stk_cc_reno, stk_cc_bbr;
/* the algorithm of a connection entering ESTABLISHED: cfg.congestion; BBR
 * needs rate samples, so a peer without SACK gets Reno */
void stk_cc_select(struct stk *st, struct stk_tcb *c);
/* does the algorithm set cwnd itself (the loss-recovery code leaves it)? */
static inline bool
stk_cc_model(const struct stk_tcb *c)
{
	return c->cc->cong_control != NULL;
}
static inline int
stk_cc_state(const struct stk_tcb *c)
{
	return (c->flags & TF_INRECOVERY) ? STK_CA_RECOVERY
	       : (c->sb.sflags & SF_LOSS) ? STK_CA_LOSS
					  : STK_CA_OPEN;
}
/* pacing: a rate in bytes/s (0: none) and a burst of this many bytes ahead
 * of the schedule */
void stk_pace_set(struct stk_tcb *c, uint64_t rate, uint32_t burst);
bool stk_pace_wait(struct stk *st, struct stk_tcb *c);
/* may a data segment go now? If not, the pacing timer is armed */
static inline bool
stk_pace_ok(struct stk *st, struct stk_tcb *c)
{
	return c->pacing_rate == 0 || stk_pace_wait(st, c);
}
/* len bytes went */
static inline void
stk_pace_sent(struct stk *st, struct stk_tcb *c, uint32_t len)
{
	if (c->pacing_rate) {
		uint64_t base = c->pace_next > st->now ? c->pace_next : st->now;

		c->pace_next = base + (((uint64_t)len * c->pace_ns_per_kib) >> 10);
	}
}

/* tcp_rate.c: delivery-rate samples of a SACK connection; the two steps
 * taken per record are inline here */

/* a record went out (new or again; idle: nothing was in flight): it takes
 * the connection's delivery state */
static inline void
stk_rate_sent(struct stk_tcb *c, struct stk_txrec *r, uint64_t now, bool idle)
{
	struct stk_sb *b = &c->sb;

	/* nothing in flight: the send and the ACK phases start now */
	if (idle)
		b->first_tx_ns = b->del_ns = now;
	r->del = (uint32_t)b->del_total;
	r->del_ns = b->del_ns;
	r->first_tx = b->first_tx_ns;
	if (b->app_limited)
		r->flags |= SB_APP_LIMITED;
	else
		r->flags &= (uint8_t)~SB_APP_LIMITED;
}

/* a record delivered (cumulatively or by SACK), not delivered before: the
 * most recently sent of an ACK's gives its sample */
static inline void
stk_rate_delivered(struct stk_tcb *c, const struct stk_txrec *r, uint64_t now)
{
	struct stk_sb *b = &c->sb;
	struct stk_rate_sample *rs = &b->rs;

	if (rs->has_prior && !stk_sent_after(r->xmit, r->end, rs->prior_xmit, rs->prior_end))
		return;
	/* the delivered count at its send, from its low 32 bits: what was
	 * delivered since is less than 2^32 bytes (it was in flight) */
	rs->prior_total = b->del_total - (uint32_t)((uint32_t)b->del_total - r->del);
	rs->prior_ns = r->del_ns;
	rs->prior_xmit = r->xmit;
	rs->prior_end = r->end;
	rs->app_limited = r->flags & SB_APP_LIMITED;
	rs->rtt_ns = (r->flags & SB_EVER_RETRANS) ? 0 : now - r->xmit;
	rs->has_prior = true;
	/* the send phase: from the send of the segment delivered last before
	 * this one went to this one's send */
	rs->interval_ns = r->xmit - r->first_tx;
	b->first_tx_ns = r->xmit;
}

/* the ACK's sample, once its deliveries are counted (sb.delivered) */
void stk_rate_gen(struct stk_tcb *c, uint64_t now);
/* before the application queues data: is the pipe left idle by it? */
void stk_rate_check_app_limited(struct stk_tcb *c);

/* tcp_sack.c */
void stk_sb_free(struct stk *st, struct stk_tcb *c);
/* a segment of new data (or FIN) went out: record it; -ENOMEM when no room */
int stk_sb_sent(struct stk *st, struct stk_tcb *c, uint32_t seq, uint32_t len, bool fin);
bool stk_sb_room(struct stk *st, struct stk_tcb *c);
/* an acceptable ACK (ack >= snd_una) from a SACK peer: cumulative ACK, SACK
 * blocks, D-SACK, loss marking (RFC 6675 threshold and RACK); pure: the
 * segment carries no data and leaves the window as it was (a duplicate ACK
 * by RFC 5681's definition, SACK blocks aside); true: new SACK info */
bool stk_sb_ack(struct stk *st, struct stk_tcb *c, uint32_t ack, const struct stk_tcp_opts *o,
		bool pure);
/* retransmit the first segment marked lost; false when there is none (or no buffer) */
bool stk_sb_retransmit_next(struct stk *st, struct stk_tcb *c);
bool stk_sb_has_lost(struct stk_tcb *c);
/* fast recovery on a SACK connection (RFC 6675 section 5 step 4) */
void stk_sb_enter_recovery(struct stk *st, struct stk_tcb *c);
/* cwnd through fast recovery: pipe + what PRR (RFC 6937) lets go now */
void stk_sb_prr(struct stk_tcb *c);
/* fast recovery over (snd_una reached recover) */
void stk_sb_exit_recovery(struct stk_tcb *c);
/* a fast or RTO recovery is over: RACK's widened window counts it */
void stk_sb_recovery_over(struct stk_tcb *c);
/* bytes of new data sent during recovery (PRR's prr_out) */
static inline void
stk_sb_prr_out(struct stk_tcb *c, uint32_t n)
{
	if (c->flags & TF_INRECOVERY)
		c->sb.prr_out += n;
}
/* a congestion event with bytes in flight: the algorithm's ssthresh (Reno:
 * max(bytes / 2, 2 SMSS), RFC 5681 (4)), and congestion avoidance's count of
 * acknowledged bytes starts over */
static inline void
stk_tcp_ssthresh_cut(struct stk_tcb *c, uint32_t bytes)
{
	c->ssthresh = c->cc->ssthresh(c, bytes);
	c->ca_acked = 0;
}
/* a tail loss probe is out and not yet acknowledged (an episode whose probe
 * was acknowledged may still wait for its D-SACK: SF_TLP alone) */
static inline bool
stk_sb_probe_out(const struct stk_tcb *c)
{
	return (c->sb.sflags & SF_TLP) && SEQ_GT(c->sb.tlp_high, c->snd_una);
}
/* RTO (RFC 6675 5.1): every segment not SACKed is lost */
void stk_sb_rto(struct stk *st, struct stk_tcb *c, bool was_recovering);
/* the tail loss probe fires (RFC 8985 7.3) */
void stk_sb_tlp_fire(struct stk *st, struct stk_tcb *c);
/* the RACK reorder timer fires */
void stk_sb_rack_timer(struct stk *st, struct stk_tcb *c);
/* RTO timer or tail loss probe timer, whichever applies (RFC 8985 7.2) */
void stk_tcp_rexmt_arm_data(struct stk *st, struct stk_tcb *c);
/* after a probe: the next one (its timeout doubled, capped by the RTO) if it
 * is the second, or while that is shorter than the RTO, at most STK_TLP_MAX in
 * a row; else the RTO */
void stk_tcp_rexmt_arm_probe(struct stk *st, struct stk_tcb *c);
#define STK_TLP_MAX 6

/* tcp_timer.c */
uint32_t stk_tcp_ts_now(const struct stk *st, const struct stk_tcb *c);
void stk_tcp_timer_set(struct stk *st, struct stk_tcb *c, unsigned t, uint64_t after_ns);
void stk_tcp_timer_clear(struct stk *st, struct stk_tcb *c, unsigned t);
void stk_tcb_active_remove(struct stk *st, struct stk_tcb *c);
void stk_tcp_rexmt_arm(struct stk *st, struct stk_tcb *c);
void stk_tcp_rtt_sample(struct stk *st, struct stk_tcb *c, uint64_t rtt_ns);
unsigned stk_tcp_timers_run(struct stk *st);

/* tcp_conn.c */
struct stk_tcb *stk_tcb_alloc(struct stk *st);
/* ISS (RFC 6528) and TSval offset of a new incarnation of c's 4-tuple, and
 * the send sequence variables from the ISS */
void stk_tcp_iss_init(const struct stk *st, struct stk_tcb *c);
void stk_tcb_hash_insert(struct stk *st, struct stk_tcb *c);
struct stk_tcb *stk_tcb_lookup(struct stk *st, uint32_t rip, uint16_t rport, uint16_t lport);
struct stk_listener *stk_listener_find(struct stk *st, uint16_t port);
/* a passive SYN_RCVD connection joins / leaves its listener's backlog */
void stk_listener_attach(struct stk *st, struct stk_listener *l, struct stk_tcb *c);
void stk_listener_detach(struct stk *st, struct stk_tcb *c);
/* one more buffer held (bufs_held and its high-water mark) */
void stk_bufs_hold(struct stk *st);
/* the terminal event (if the app can still see c) and release */
void stk_tcb_finish(struct stk *st, struct stk_tcb *c, enum stk_ev ev, int reason);
void stk_tcb_release(struct stk *st, struct stk_tcb *c);
void stk_tcp_burst_acks(struct stk *st);
void stk_tcp_burst_ack_forget(struct stk *st, struct stk_tcb *c);
void stk_tcb_set_state(struct stk *st, struct stk_tcb *c, enum stk_tcp_state s);
void stk_tcb_event(struct stk *st, struct stk_tcb *c, enum stk_ev ev, int reason);
void stk_tcb_init_params(struct stk *st, struct stk_tcb *c);
uint32_t stk_tcb_rcv_window(const struct stk *st, const struct stk_tcb *c);
/* the smallest step by which the offered window's right edge moves: receiver
 * SWS avoidance, RFC 9293 3.8.6.2.2 (min(RCV.BUFF / 2, MSS)) */
uint32_t stk_tcb_sws_step(const struct stk *st, const struct stk_tcb *c);
void stk_ooo_purge(struct stk *st, struct stk_tcb *c);
void stk_sndq_ack(struct stk *st, struct stk_tcb *c, uint32_t upto);

/* states in which data of ours may be in flight or go out */
static inline bool
stk_tcp_state_sends(uint8_t s)
{
	return s == STK_TCP_ESTABLISHED || s == STK_TCP_CLOSE_WAIT || s == STK_TCP_FIN_WAIT_1 ||
	       s == STK_TCP_CLOSING || s == STK_TCP_LAST_ACK;
}

static inline uint16_t
stk_get16(const void *p)
{
	uint16_t v;

	memcpy(&v, p, 2);
	return be16toh(v);
}

static inline uint32_t
stk_get32(const void *p)
{
	uint32_t v;

	memcpy(&v, p, 4);
	return be32toh(v);
}

static inline void
stk_put16(void *p, uint16_t v)
{
	v = htobe16(v);
	memcpy(p, &v, 2);
}

static inline void
stk_put32(void *p, uint32_t v)
{
	v = htobe32(v);
	memcpy(p, &v, 4);
}

static inline void
stk_buf_free(struct stk *st, struct stk_buf *b)
{
	st->ops.buf_free(st->ops.ctx, b);
}

#endif
