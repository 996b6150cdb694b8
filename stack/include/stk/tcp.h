/* SPDX-License-Identifier: BSD-3-Clause
 * stk/tcp.h — the application's side of libstk's TCP (RFC 9293 with RFC 7323
 * window scaling and timestamps, RFC 2018 SACK on the receive side, RFC 5681 /
 * 6582 NewReno, RFC 6298 RTO, RFC 5961 blind-attack checks).
 *
 * Events reach the application through ops.event (stk/stk.h), always from
 * inside a stk_* call on the owning thread:
 *   STK_EV_DATA: b/data/len is in-order payload and b is the application's
 *     (free it with the owner's free; ops.buf_free is not called). Several
 *     DATA events may share no buffer: each one owns its b.
 *   every other event: b == NULL.
 *   CLOSED, RESET, TIMEOUT, ERROR are terminal: the tcb is released after the
 *   callback returns and must not be used again (a connection in TIME_WAIT
 *   lives on inside the stack, invisible to the application).
 * An event callback may call stk_tcp_send / close / abort on any connection.
 */
#ifndef STK_TCP_H
#define STK_TCP_H

#include <stk/stk.h>

#ifdef __cplusplus
extern "C" {
#endif

enum stk_tcp_state {
	STK_TCP_CLOSED = 0,
	STK_TCP_LISTEN,
	STK_TCP_SYN_SENT,
	STK_TCP_SYN_RCVD,
	STK_TCP_ESTABLISHED,
	STK_TCP_FIN_WAIT_1,
	STK_TCP_FIN_WAIT_2,
	STK_TCP_CLOSE_WAIT,
	STK_TCP_CLOSING,
	STK_TCP_LAST_ACK,
	STK_TCP_TIME_WAIT,
};

/* per-connection counters */
struct stk_tcp_stats {
	uint64_t segs_in, segs_out;
	uint64_t bytes_in, bytes_out; /* payload delivered / first-sent */
	uint64_t retransmits, fast_retransmits, rto_expired;
	uint64_t ooo_segs, dup_segs, dup_acks_in;
	uint64_t window_probes, drops;
};

/* Active open to ip:port (network order ip, host order port), from an
 * ephemeral port. Returns the tcb (state SYN_SENT) or NULL with errno:
 * EADDRINUSE (no free port), ENOMEM, ENOBUFS (max_conns), EHOSTUNREACH. */
struct stk_tcb *stk_tcp_connect(struct stk *st, uint32_t ip, uint16_t port, uint64_t user);
/* Passive open on a local port with a backlog of half-open connections;
 * accepted connections raise STK_EV_ACCEPTED with this user value.
 * Returns 0 or -EADDRINUSE / -ENOMEM / -EINVAL. */
int stk_tcp_listen(struct stk *st, uint16_t port, unsigned backlog, uint64_t user);
int stk_tcp_unlisten(struct stk *st, uint16_t port);
/* Queue len bytes at data (inside b) for sending; b becomes the stack's and is
 * released with ops.buf_free once all its bytes are acknowledged (or the
 * connection dies); its bytes count against sndbuf until then (space comes back
 * per whole buffer). Data queued before the connection is established (SYN_SENT,
 * SYN_RCVD) goes out once it is. Returns 0, or a negative errno and b is NOT
 * taken: -ENOBUFS (send buffer full: sndbuf), -ENOTCONN (no longer able to
 * send), -EPIPE (closed for sending). */
int stk_tcp_send(struct stk *st, struct stk_tcb *c, struct stk_buf *b, const uint8_t *data,
		 uint32_t len);
/* bytes the send buffer can still take */
uint32_t stk_tcp_sndbuf_space(const struct stk_tcb *c);
/* FIN after the queued data. 0 or -ENOTCONN. */
int stk_tcp_close(struct stk *st, struct stk_tcb *c);
/* RST now; no event follows. */
void stk_tcp_abort(struct stk *st, struct stk_tcb *c);

/* RST every connection not in TIME_WAIT and release all of them, without
 * events (shutdown). Returns how many were reset. */
unsigned stk_tcp_abort_all(struct stk *st);

/* FIN on every connection the application has not closed yet (SYN_RCVD,
 * ESTABLISHED, CLOSE_WAIT, after their queued data); one still in SYN_SENT ends
 * at once with its CLOSED event. Passive half-open connections (never shown to
 * the application) are left alone. Returns how many were closed (shutdown: a
 * graceful close before stk_tcp_abort_all). */
unsigned stk_tcp_close_all(struct stk *st);
/* connections still on their way to CLOSED or TIME_WAIT: with all, every one
 * the application knows of; else only those whose FIN is queued or sent (which
 * end by themselves once the peer answers). Passive half-open connections and
 * TIME_WAIT are not counted. */
unsigned stk_tcp_closing(const struct stk *st, bool all);

/* identity; ids are never 0 and not reused for 2^16 generations of a slot */
uint32_t stk_tcp_id(const struct stk_tcb *c);
/* bytes of the peer's stream delivered in order so far (mod 2^32): inside an
 * STK_EV_DATA event, the offset just past that event's data */
uint32_t stk_tcp_rx_offset(const struct stk_tcb *c);
struct stk_tcb *stk_tcp_by_id(struct stk *st, uint32_t id);
/* (config rx_hold) The application is done with the peer's stream up to
 * offset off (counted as stk_tcp_rx_offset counts): those bytes stop counting
 * against the receive window. An offset at or below the last one released, or
 * beyond what was delivered, changes nothing. When the window the peer knows
 * has become small against what is free now, an ACK carries the new one at
 * once (a window update; receiver SWS avoidance, RFC 9293 3.8.6.2.2). */
void stk_tcp_rx_release(struct stk *st, struct stk_tcb *c, uint32_t off);
/* bytes delivered and not yet released (always 0 without rx_hold) */
uint32_t stk_tcp_rx_held(const struct stk_tcb *c);
uint64_t stk_tcp_user(const struct stk_tcb *c);
void stk_tcp_set_user(struct stk_tcb *c, uint64_t user);
enum stk_tcp_state stk_tcp_state(const struct stk_tcb *c);
const char *stk_tcp_state_name(enum stk_tcp_state s);
void stk_tcp_peer(const struct stk_tcb *c, uint32_t *ip, uint16_t *port, uint16_t *lport);
const struct stk_tcp_stats *stk_tcp_stats(const struct stk_tcb *c);

/* How fast the path took this connection's data: the delivery rate of its
 * latest sample (draft-cheng-iccrg-delivery-rate-estimation; Linux's
 * tcpi_delivery_rate), one that was not limited by the application unless an
 * app-limited one showed more. Only a SACK peer gives samples. */
struct stk_tcp_rate {
	uint64_t bytes_per_s; /* payload bytes (and a FIN) per second */
	bool app_limited;     /* the sample was taken while the application left
			       * the path idle: a lower bound */
	uint64_t delivered;   /* bytes delivered over the connection's life */
	uint64_t min_rtt_ns;  /* the least RTT measured (0: none) */
};
/* fills out; false when there is no sample yet (nothing sent, or no SACK) */
bool stk_tcp_rate(const struct stk_tcb *c, struct stk_tcp_rate *out);

#ifdef __cplusplus
}
#endif
#endif
