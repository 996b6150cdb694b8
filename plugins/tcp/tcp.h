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

#endif
