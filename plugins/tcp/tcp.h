/* SPDX-License-Identifier: BSD-3-Clause
 * tcp.h — the tcp stage's configuration (tcp_config.c) shared with tcp.c. */
#ifndef LCP_PLUGIN_TCP_H
#define LCP_PLUGIN_TCP_H

#include <stdbool.h>
#include <stdint.h>

#include <lcp/lcp.h>
#include <stk/stk.h>

struct tcp_conf {
	const char *ip;
	const char *gateway;
	const char *mac;
	const char *device;
	const char *neighbours;
	const char *connect;
	uint32_t listen;
	uint32_t backlog;
	uint32_t mtu;
	uint32_t max_conns;
	uint32_t rcvbuf, sndbuf;
	uint32_t ooo_max_bytes, ooo_max_segs;
	uint32_t time_wait_ms, fin_wait2_ms, delack_ms;
	uint32_t rto_min_ms, rto_init_ms, rto_max_ms;
	uint32_t syn_retries, max_retries, persist_timeout_ms;
	int backlog_full; /* enum stk_backlog_full */
	uint32_t keepalive_s, keepalive_intvl_s, keepalive_probes;
	bool window_scale, timestamps, sack, csum_offload;
	uint32_t arp_entries, arp_timeout_s, arp_pending, arp_retries, arp_retry_ms;
	uint32_t challenge_ack_limit;
	uint32_t node_pool;
};

extern const struct lcp_opt tcp_opts[];

/* fill the stack's config from the options (everything but the MAC when the
 * option leaves it to the device); 0 or -1 with a message naming the option */
int tcp_conf_to_stk(const struct tcp_conf *c, struct stk_config *k, bool *have_mac, char *msg, size_t len);
int tcp_parse_hostport(const char *s, uint32_t *ip, uint16_t *port);
int tcp_validate(const void *conf, char *msg, size_t msglen);

/* tcp_sendq.c: SENDs held until the send buffer has room (backpressure) */
struct rte_mbuf;
struct tcp_sendq;
struct tcp_sq_cb {
	void *arg;
	void (*room)(void *arg, uint32_t conn, uint32_t user);           /* drained: SEND_ROOM */
	void (*close)(void *arg, struct stk_tcb *c);                     /* the CLOSE that waited */
	void (*error)(void *arg, uint32_t conn, uint32_t user, int err); /* a held SEND failed */
	void (*freed)(void *arg, uint32_t conn, uint32_t bytes);         /* held bytes thrown away */
};
struct tcp_sendq *tcp_sq_create(unsigned max_conns, int socket);
void tcp_sq_free(struct tcp_sendq *q);
/* a SEND on c: 0 the stack took m, 1 held (*full_now: SEND_FULL is due), or
 * a negative errno (not taken: the caller frees m and reports it) */
int tcp_sq_send(struct tcp_sendq *q, struct stk *stk, struct stk_tcb *c, struct rte_mbuf *m, uint32_t user,
		bool *full_now);
/* a CLOSE on conn: true when it must wait behind held data (done at the drain) */
bool tcp_sq_close_later(struct tcp_sendq *q, uint32_t conn);
/* conn died: free what it held; the bytes */
uint32_t tcp_sq_drop(struct tcp_sendq *q, uint32_t conn);
/* give held SENDs to the stack as room allows; SENDs handed over */
unsigned tcp_sq_drain(struct tcp_sendq *q, struct stk *stk, const struct tcp_sq_cb *cb);

#endif
