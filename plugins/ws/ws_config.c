/* SPDX-License-Identifier: BSD-3-Clause
 * ws_config.c — the ws stage's options, URL parsing and cross-option checks
 * (run by `lcpipe check` too: nothing here resolves or connects).
 *
 *   ws_opts          the option table (docs and schema are generated from it)
 *   ws_parse_url     ws:// or wss://, a DNS name or an IPv4 literal, port, path
 *   ws_validate      every URL, reconnect and TLS version bounds
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>

#include "tls_opts.h"
#include "ws.h"

static const char *const ws_pool_empty_choices[] = { "drop", "heap", NULL };

#define C struct ws_conf
const struct lcp_opt ws_opts[] = {
	LCP_OPT_STRING(C, url, "url", NULL, 8, 4095, LCP_OPT_F_REQUIRED,
		       "\"ws://host[:port]/path\" or \"wss://…\" (host: a DNS name or an IPv4 address; ports 80 / 443 by default); several separated by commas"),
	LCP_OPT_UINT(C, connections, "connections", "1", 1, 256, 0, "connections per URL"),
	LCP_OPT_STRING(C, subscribe, "subscribe", "\"\"", 0, 65535, 0,
		       "text message(s) sent after each open, one per line (\\n-separated)"),
	LCP_OPT_STRING(C, protocol, "protocol", "\"\"", 0, 63, 0, "Sec-WebSocket-Protocol to ask for"),
	LCP_OPT_STRING(C, headers, "headers", "\"\"", 0, 4095, 0,
		       "extra request headers, \"Name: value\" lines separated by \\n"),
	LCP_OPT_UINT(C, ping_interval_ms, "ping_interval_ms", "15000", 0, 3600000, 0,
		     "send a ping this often on an open connection (0: never)"),
	LCP_OPT_UINT(C, pong_timeout_ms, "pong_timeout_ms", "10000", 1, 3600000, 0,
		     "a ping unanswered this long fails the connection (fail_pong_timeout, then reconnect)"),
	LCP_OPT_UINT(C, stale_timeout_ms, "stale_timeout_ms", "60000", 0, 86400000, 0,
		     "an open connection that delivers no message this long is closed (1001) and re-opened (fail_stale; 0: never)"),
	LCP_OPT_UINT(C, handshake_timeout_ms, "handshake_timeout_ms", "5000", 1, 3600000, 0,
		     "connect + upgrade must finish within this"),
	LCP_OPT_UINT(C, reconnect_min_ms, "reconnect_min_ms", "100", 1, 3600000, 0,
		     "first reconnect backoff; doubles per failure"),
	LCP_OPT_UINT(C, reconnect_max_ms, "reconnect_max_ms", "10000", 1, 3600000, 0, "reconnect backoff cap"),
	LCP_OPT_BOOL(C, reconnect_jitter, "reconnect_jitter", "true",
		     "full jitter: each delay is drawn uniformly from [reconnect_min_ms, backoff] (false: the backoff itself)"),
	LCP_OPT_UINT(C, reconnect_reset_ms, "reconnect_reset_ms", "10000", 0, 86400000, 0,
		     "the backoff starts over only after a connection stayed open this long (a server that accepts and kicks at once is not hammered)"),
	LCP_OPT_UINT(C, subscribe_interval_ms, "subscribe_interval_ms", "200", 0, 60000, 0,
		     "pacing of the subscription messages after an open: one, then one per interval (0: all at once)"),
	LCP_OPT_UINT(C, max_msg, "max_msg", "16777216", 125, 1073741824, 0,
		     "largest message accepted; more fails the connection with 1009"),
	LCP_OPT_BOOL(C, check_utf8, "check_utf8", "true", "validate text messages (1007 on invalid UTF-8)"),
	LCP_OPT_UINT(C, stop_after_msgs, "stop_after_msgs", "0", 0, INT64_MAX, 0,
		     "end the run (drain, stop) once this many messages were delivered; what the same burst and the drain bring is delivered too (0: never)"),
	LCP_OPT_BOOL(C, stop_on_close, "stop_on_close", "false",
		     "end the run when a connection that was open closes (the server's close, or a failure) instead of reconnecting"),
	LCP_OPT_UINT(C, msgs, "msgs", "8191", 63, 16777215, 0,
		     "msg objects in the stage's pool (pool strategy)"),
	LCP_OPT_UINT(C, assembly_size, "assembly_size", "2048", 64, 1048576, 0,
		     "bytes per assembly buffer (pool strategy) for messages spanning segments; longer ones go to the heap"),
	LCP_OPT_UINT(C, assembly_buffers, "assembly_buffers", "1024", 2, 16777215, 0,
		     "assembly buffers in the stage's pool"),
	LCP_OPT_ENUM(C, on_pool_empty, "on_pool_empty", "\"drop\"", ws_pool_empty_choices, 0,
		     "no assembly buffer left: drop the message (drop_assembly_pool_empty) or assemble it on the heap"),
	LCP_OPT_UINT(C, pool_wait_us, "pool_wait_us", "0", 0, 10000000, 0,
		     "backpressure: an empty msgs or assembly pool stalls this lcore up to this long for a consumer on another lcore to give an object back (pool_waits, pool_wait_cycles), then on_pool_empty / drop_no_msg; 0 = no wait"),
	LCP_OPT_STRING(C, ca_file, "ca_file", "\"\"", 0, 4095, LCP_OPT_F_PATH,
		       "wss: trusted CA certificates, a PEM file (with ca_path empty too: the system store)"),
	LCP_OPT_STRING(C, ca_path, "ca_path", "\"\"", 0, 4095, LCP_OPT_F_PATH,
		       "wss: a directory of PEM CA certificates, all read at start"),
	LCP_OPT_BOOL(C, insecure, "insecure", "false",
		     "wss: do not verify the server's certificate or name (logged as a warning at start)"),
	LCP_TLS_OPTS(C),
	LCP_OPT_STRING(C, tls_server_name, "tls_server_name", "\"\"", 0, 253, 0,
		       "wss: the name sent as SNI and verified in the certificate, for every URL (default: each URL's host)"),
	LCP_OPT_BOOL(C, tls_resume, "tls_resume", "true",
		     "wss: resume with the server's session ticket when reconnecting"),
	LCP_OPT_BOOL(C, tls_fast_path, "tls_fast_path", "true",
		     "wss: once the WebSocket is open, decrypt the server's records (AES-GCM, ChaCha20-Poly1305) straight from the segment into the plaintext mbufs, one copy (tls_records_rx_fast); false: OpenSSL's read path"),
	LCP_OPT_UINT(C, rx_buffer_size, "rx_buffer_size", "16640", 0, 65000, 0,
		     "bytes per buffer of the stage's own pool of receive buffers, for wss and permessage-deflate: a decrypted TLS record goes into one (16,384 bytes and TLS 1.3's type and padding), so its messages are cut from one buffer and it is decrypted in as few pieces as TCP cut it; inflated messages are packed many to one, each holding a reference; 0: no pool (TLS into the engine's mbufs, each inflated message into an assembly buffer)"),
	LCP_OPT_UINT(C, rx_buffers, "rx_buffers", "64", 1, 65535, 0,
		     "buffers in that pool; while every one is held by messages not yet released, TLS records go into the engine's mbufs and inflated messages into assembly buffers (rx_buffers_empty)"),
	LCP_OPT_BOOL(C, deflate, "deflate", "true",
		     "offer permessage-deflate (RFC 7692); compressed messages are inflated into assembly buffers, max_msg bounding the inflated size"),
	LCP_OPT_UINT(C, deflate_window_bits, "deflate_window_bits", "0", 0, 15, 0,
		     "ask the server for server_max_window_bits (9..15; 0: do not ask, the server picks up to 15): the inflater's window memory"),
	LCP_OPT_BOOL(C, deflate_no_context_takeover, "deflate_no_context_takeover", "false",
		     "ask the server for server_no_context_takeover (each message compressed on its own)"),
	LCP_OPT_END,
};
#undef C


/* a DNS name by RFC 1123 2.1: labels of letters, digits and hyphens, not
 * starting or ending with a hyphen, 1..63 bytes each, 253 in all */
static bool
ws_host_ok(const char *h, size_t n)
{
	size_t label = 0;

	if (n == 0 || n > 253)
		return false;
	for (size_t i = 0; i < n; i++) {
		char ch = h[i];

		if (ch == '.') {
			if (label == 0 || h[i - 1] == '-')
				return false;
			label = 0;
			continue;
		}
		if (!((ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') ||
		      (ch == '-' && label > 0)))
			return false;
		if (++label > 63)
			return false;
	}
	return label > 0 && h[n - 1] != '-';
}

int
ws_parse_url(const char *u, size_t n, struct ws_conn *c, char *err, size_t errlen)
{
	const char *p, *end = u + n, *auth, *slash, *colon;
	unsigned long port;
	struct in_addr a;
	size_t hl;

	memset(c->host, 0, sizeof(c->host));
	if (n >= 5 && strncmp(u, "ws://", 5) == 0) {
		c->tls = false;
		port = 80;
		auth = u + 5;
	} else if (n >= 6 && strncmp(u, "wss://", 6) == 0) {
		c->tls = true;
		port = 443;
		auth = u + 6;
	} else {
		snprintf(err, errlen, "url \"%.*s\": expected ws://host[:port]/path or wss://…", (int)n, u);
		return -1;
	}
	slash = memchr(auth, '/', (size_t)(end - auth));
	if (slash == NULL)
		slash = memchr(auth, '?', (size_t)(end - auth)); /* "wss://h?x" has the path "/?x" */
	if (slash == NULL)
		slash = end;
	if (memchr(u, '#', n) != NULL || memchr(auth, '@', (size_t)(slash - auth)) != NULL ||
	    (auth < slash && *auth == '[')) {
		snprintf(err, errlen, "url \"%.*s\": fragments, user info and IPv6 literals are not supported",
			 (int)n, u);
		return -1;
	}
	for (p = u; p < end; p++) {
		if ((unsigned char)*p <= 0x20 || (unsigned char)*p >= 0x7f) {
			snprintf(err, errlen, "url \"%.*s\": a space or control or non-ASCII byte (percent-encode it)",
				 (int)n, u);
			return -1;
		}
	}
	colon = memchr(auth, ':', (size_t)(slash - auth));
	hl = (size_t)((colon ? colon : slash) - auth);
	if (colon != NULL) {
		char num[8];
		size_t pl = (size_t)(slash - colon - 1);
		char *e;

		if (pl == 0 || pl > 5) {
			snprintf(err, errlen, "url \"%.*s\": bad port", (int)n, u);
			return -1;
		}
		memcpy(num, colon + 1, pl);
		num[pl] = '\0';
		port = strtoul(num, &e, 10);
		if (*e != '\0' || port == 0 || port > 65535) {
			snprintf(err, errlen, "url \"%.*s\": bad port", (int)n, u);
			return -1;
		}
	}
	if (hl >= sizeof(c->host) || !ws_host_ok(auth, hl)) {
		snprintf(err, errlen, "url \"%.*s\": the host must be a DNS name or an IPv4 address", (int)n, u);
		return -1;
	}
	memcpy(c->host, auth, hl);
	if ((size_t)(end - slash) >= sizeof(c->path) - 1) {
		snprintf(err, errlen, "url \"%.*s\": the path is longer than %zu bytes", (int)n, u,
			 sizeof(c->path) - 2);
		return -1;
	}
	snprintf(c->path, sizeof(c->path), "%s%.*s", slash < end && *slash == '?' ? "/" : "", (int)(end - slash),
		 slash);
	if (c->path[0] == '\0')
		snprintf(c->path, sizeof(c->path), "/");
	c->port = (uint16_t)port;
	/* a name made of digits and dots only must be a valid IPv4 literal */
	c->named = inet_pton(AF_INET, c->host, &a) != 1;
	if (c->named && strspn(c->host, "0123456789.") == hl) {
		snprintf(err, errlen, "url \"%.*s\": bad IPv4 address", (int)n, u);
		return -1;
	}
	c->ip = c->named ? 0 : a.s_addr;
	if (port == (c->tls ? 443u : 80u))
		snprintf(c->hosthdr, sizeof(c->hosthdr), "%s", c->host);
	else
		snprintf(c->hosthdr, sizeof(c->hosthdr), "%s:%lu", c->host, port);
	return 0;
}

int
ws_validate(const void *conf, char *msg, size_t msglen)
{
	const struct ws_conf *c = conf;
	const char *p = c->url;
	unsigned urls = 0;

	while (*p) {
		const char *comma = strchr(p, ',');
		size_t n = comma ? (size_t)(comma - p) : strlen(p);
		struct ws_conn tmp;

		if (ws_parse_url(p, n, &tmp, msg, msglen) < 0)
			return -1;
		p += n + (comma ? 1 : 0);
		urls++;
	}
	/* the connections it opens, for the mbuf budget (lcpipe check) */
	lcp_check_mbufs(&(struct lcp_mbuf_hold){ .conns = urls * c->connections });
	if (c->reconnect_min_ms > c->reconnect_max_ms) {
		snprintf(msg, msglen, "reconnect_min_ms %u is above reconnect_max_ms %u", c->reconnect_min_ms,
			 c->reconnect_max_ms);
		return -1;
	}
	if (lcp_tls_opts_check(c->tls_min_version, c->tls_max_version, msg, msglen) < 0)
		return -1;
	if (c->deflate_window_bits != 0 && c->deflate_window_bits < 9) {
		snprintf(msg, msglen, "deflate_window_bits %u: 0 or 9..15 (zlib cannot inflate with an 8-bit window)",
			 c->deflate_window_bits);
		return -1;
	}
	if (c->tls_server_name[0] && strlen(c->tls_server_name) > 253) {
		snprintf(msg, msglen, "tls_server_name is longer than 253 bytes");
		return -1;
	}
	return 0;
}
