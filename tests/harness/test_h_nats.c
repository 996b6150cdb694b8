/* SPDX-License-Identifier: BSD-3-Clause
 * test_h_nats.c — sink_nats (plugins/sink_nats) through the plugin test harness,
 * against a real nats-server (Debian's) that each test starts on 127.0.0.1 and
 * a free port, read back over the NATS text protocol on a plain socket (t_nc:
 * CONNECT, SUB, PUB with a reply inbox, MSG; no NATS library in the test, so
 * the only libnats in the process is the plugin's). tests/run/nats.sh keeps the
 * end-to-end cases (the demo pipeline, a server killed mid-run, refused
 * options); these check what one burst does, message by message.
 *
 * core_subjects     core NATS, subject md.{venue}.{symbol}: a symbol with a dot
 *                   published on md.t.AB_C (sanitized 1), a plain one on md.t.X,
 *                   a message without a symbol dropped (drop_no_symbol); the
 *                   subscriber gets exactly the two payloads on those subjects;
 *                   msgs and bytes count what was published; every message freed
 * core_fallback     the same burst with fallback_subject md.{venue}.none: the
 *                   message without a symbol goes there (fallback 1), none dropped
 * js_acks_then_dups JetStream, a stream on md.> (created with $JS.API): two
 *                   ticks acknowledged (acks 2, nothing unacked at stop); the
 *                   same two again in a second stage are duplicates by their
 *                   Nats-Msg-Id (acks_duplicate 2); the stream holds two messages
 * js_no_server      JetStream to a port nobody listens on (retry_on_failed_connect:
 *                   the stage starts): each message counted drop_not_connected
 *                   and freed
 *
 * The server is started with PR_SET_PDEATHSIG, so it dies with the test's
 * process whatever happens; without nats-server the suite says so and passes
 * nothing (CI installs it: .ci/deps).
 */
#include <check.h>
#include <errno.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <jansson.h>

#include "plugin_harness.h"

#include "../t_check.h"

static const char *
t_server_path(void)
{
	static const char *const c[] = { "/usr/sbin/nats-server", "/usr/bin/nats-server",
					 "/usr/local/bin/nats-server" };

	for (unsigned i = 0; i < sizeof(c) / sizeof(c[0]); i++)
		if (access(c[i], X_OK) == 0)
			return c[i];
	return NULL;
}

/* a loopback port nobody listens on (bound and closed at once) */
static int
t_free_port(void)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t l = sizeof(a);
	int fd = socket(AF_INET, SOCK_STREAM, 0);

	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(bind(fd, (struct sockaddr *)&a, sizeof(a)), 0);
	ck_assert_int_eq(getsockname(fd, (struct sockaddr *)&a, &l), 0);
	close(fd);
	return ntohs(a.sin_port);
}

/* ---- a NATS text-protocol client on a plain socket ---- */
struct t_nc {
	int fd;
	char buf[65536];
	size_t n; /* bytes in buf */
};

static int
t_nc_dial(struct t_nc *c, int port)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK),
				 .sin_port = htons((uint16_t)port) };

	c->n = 0;
	c->fd = socket(AF_INET, SOCK_STREAM, 0);
	ck_assert_int_ge(c->fd, 0);
	if (connect(c->fd, (struct sockaddr *)&a, sizeof(a)) != 0) {
		close(c->fd);
		c->fd = -1;
		return -1;
	}
	return 0;
}

static void
t_nc_send(struct t_nc *c, const char *s, size_t n)
{
	while (n > 0) {
		ssize_t k = write(c->fd, s, n);

		ck_assert_msg(k > 0, "write to nats-server: %s", strerror(errno));
		s += k;
		n -= (size_t)k;
	}
}

/* more bytes into buf, waiting up to 5 s */
static void
t_nc_fill(struct t_nc *c)
{
	struct pollfd p = { .fd = c->fd, .events = POLLIN };
	ssize_t k;

	ck_assert_msg(c->n < sizeof(c->buf), "NATS reply over %zu bytes", sizeof(c->buf));
	ck_assert_msg(poll(&p, 1, 5000) == 1, "nothing from nats-server within 5 s");
	k = read(c->fd, c->buf + c->n, sizeof(c->buf) - c->n);
	ck_assert_msg(k > 0, "nats-server closed the connection");
	c->n += (size_t)k;
}

static void
t_nc_drop(struct t_nc *c, size_t k)
{
	memmove(c->buf, c->buf + k, c->n - k);
	c->n -= k;
}

/* the next protocol line (without CRLF) into line; PINGs answered, +OK and
 * INFO skipped */
static void
t_nc_line(struct t_nc *c, char *line, size_t cap)
{
	for (;;) {
		char *e = memmem(c->buf, c->n, "\r\n", 2);
		size_t k;

		if (e == NULL) {
			t_nc_fill(c);
			continue;
		}
		k = (size_t)(e - c->buf);
		ck_assert_uint_lt(k, cap);
		memcpy(line, c->buf, k);
		line[k] = '\0';
		t_nc_drop(c, k + 2);
		if (strcmp(line, "PING") == 0) {
			t_nc_send(c, "PONG\r\n", 6);
			continue;
		}
		if (strcmp(line, "+OK") == 0 || strncmp(line, "INFO ", 5) == 0)
			continue;
		ck_assert_msg(strncmp(line, "-ERR", 4) != 0, "nats-server: %s", line);
		return;
	}
}

/* connected and verbose off; the server has answered a PING (so every SUB
 * before it is registered) */
static void
t_nc_sync(struct t_nc *c)
{
	char line[4096];

	t_nc_send(c, "PING\r\n", 6);
	t_nc_line(c, line, sizeof(line));
	ck_assert_str_eq(line, "PONG");
}

static void
t_nc_open(struct t_nc *c, int port, const char *subs)
{
	char cmd[512];
	int n;

	ck_assert_int_eq(t_nc_dial(c, port), 0);
	n = snprintf(cmd, sizeof(cmd), "CONNECT {\"verbose\":false,\"pedantic\":false,\"protocol\":1}\r\n%s",
		     subs);
	t_nc_send(c, cmd, (size_t)n);
	t_nc_sync(c);
}

/* the next MSG: its subject and payload (NUL-terminated, at most cap - 1) */
static void
t_nc_msg(struct t_nc *c, char *subj, size_t scap, char *data, size_t dcap)
{
	char line[4096], sid[64], rest[128];
	unsigned long len;
	int f;

	t_nc_line(c, line, sizeof(line));
	ck_assert_msg(strncmp(line, "MSG ", 4) == 0, "expected MSG, got %s", line);
	f = sscanf(line + 4, "%255s %63s %127[^\n]", subj, sid, rest);
	ck_assert_int_eq(f, 3);
	ck_assert_uint_lt(strlen(subj), scap);
	/* MSG <subject> <sid> [reply-to] <#bytes> */
	len = strtoul(strrchr(line, ' ') + 1, NULL, 10);
	ck_assert_uint_lt(len, dcap);
	while (c->n < len + 2)
		t_nc_fill(c);
	memcpy(data, c->buf, len);
	data[len] = '\0';
	t_nc_drop(c, len + 2);
}

static void
t_nc_expect(struct t_nc *c, const char *subj, const char *data)
{
	char s[256], d[1024];

	t_nc_msg(c, s, sizeof(s), d, sizeof(d));
	ck_assert_str_eq(s, subj);
	ck_assert_str_eq(d, data);
}

/* a request: body to subj, the reply (JSON) parsed */
static json_t *
t_nc_request(struct t_nc *c, const char *subj, const char *body)
{
	char cmd[1024], s[256], d[4096];
	json_error_t err;
	json_t *j;
	int n;

	n = snprintf(cmd, sizeof(cmd), "SUB _INBOX.t 99\r\nPUB %s _INBOX.t %zu\r\n%s\r\n", subj, strlen(body),
		     body);
	t_nc_send(c, cmd, (size_t)n);
	t_nc_msg(c, s, sizeof(s), d, sizeof(d));
	ck_assert_str_eq(s, "_INBOX.t");
	t_nc_send(c, "UNSUB 99\r\n", 10);
	j = json_loads(d, 0, &err);
	ck_assert_msg(j != NULL, "reply to %s is not JSON: %s", subj, d);
	ck_assert_msg(json_object_get(j, "error") == NULL, "%s: %s", subj, d);
	return j;
}

static void
t_nc_close(struct t_nc *c)
{
	close(c->fd);
}

/* ---- the server ---- */
struct t_srv {
	pid_t pid;
	int port;
	char *dir;
	char url[64];
};

/* nats-server on 127.0.0.1 and a free port, JetStream with its store in a
 * scratch directory; returns once it answers a PING */
static void
t_srv_start(struct t_srv *s)
{
	const char *bin = t_server_path();
	char port[16], log[512];
	struct t_nc c;

	s->port = t_free_port();
	s->dir = lcp_h_scratch("nats");
	snprintf(port, sizeof(port), "%d", s->port);
	snprintf(s->url, sizeof(s->url), "nats://127.0.0.1:%d", s->port);
	snprintf(log, sizeof(log), "%s/server.log", s->dir);
	s->pid = fork();
	ck_assert_int_ge(s->pid, 0);
	if (s->pid == 0) {
		int fd = open(log, O_WRONLY | O_CREAT | O_TRUNC, 0644);

		prctl(PR_SET_PDEATHSIG, SIGKILL);
		if (fd >= 0) {
			dup2(fd, 1);
			dup2(fd, 2);
		}
		execl(bin, "nats-server", "-a", "127.0.0.1", "-p", port, "-js", "-sd", s->dir, (char *)NULL);
		_exit(127);
	}
	for (int i = 0; i < 200; i++) { /* 10 s */
		if (t_nc_dial(&c, s->port) == 0) {
			t_nc_send(&c, "CONNECT {\"verbose\":false}\r\n", 27);
			t_nc_sync(&c);
			t_nc_close(&c);
			return;
		}
		usleep(50000);
	}
	ck_abort_msg("nats-server did not accept connections on %s within 10 s (log: %s)", s->url, log);
}

static void
t_srv_stop(struct t_srv *s)
{
	int st;

	kill(s->pid, SIGTERM);
	waitpid(s->pid, &st, 0);
	lcp_h_scratch_rm(s->dir);
}

static const char *const t_burst[] = {
	"{\"s\":\"AB.C\",\"n\":1}", /* a dot in the symbol: sanitized to AB_C */
	"{\"s\":\"X\",\"n\":2}",
	"no symbol here", /* no usable symbol */
};
#define T_BURST 3

static void
t_push_burst(struct lcp_h *h)
{
	struct lcp_msg *m[T_BURST];

	for (unsigned i = 0; i < T_BURST; i++)
		m[i] = lcp_h_msg(h, 0, 1, t_burst[i], strlen(t_burst[i]));
	lcp_h_push(h, "msg", (void **)m, T_BURST);
}

static struct lcp_h *
t_stage(const char *url, const char *more)
{
	char opts[512];

	snprintf(opts, sizeof(opts),
		 "{\"url\": \"%s\", \"venue\": \"t\", \"subject\": \"md.{venue}.{symbol}\","
		 " \"symbol_field\": \"s\", \"connect_timeout_ms\": 500, \"flush_timeout_ms\": 3000%s%s}",
		 url, more ? ", " : "", more ? more : "");
	return lcp_h_new(&(struct lcp_h_conf){ .plugin = "sink_nats", .options = opts });
}

#define T_NEED_SERVER()                                                                            \
	do {                                                                                       \
		if (t_server_path() == NULL) {                                                     \
			fprintf(stderr, "nats-server is not installed (Debian: nats-server): "      \
					"%s not run\n", __func__);                                  \
			return;                                                            \
		}                                                                                  \
	} while (0)

/* t_burst through a core NATS stage, read back on md.>; with fallback, the
 * message without a symbol goes to md.t.none */
static void
t_core_case(bool fallback)
{
	struct t_srv s;
	struct t_nc sub;
	struct lcp_h *h;

	t_srv_start(&s);
	t_nc_open(&sub, s.port, "SUB md.> 1\r\n");
	h = t_stage(s.url, fallback ? "\"fallback_subject\": \"md.{venue}.none\"" : NULL);
	t_push_burst(h);
	lcp_h_stop(h); /* flushes */
	ck_assert_uint_eq(lcp_h_ctr(h, "msgs"), fallback ? 3 : 2);
	ck_assert_uint_eq(lcp_h_ctr(h, "bytes"), strlen(t_burst[0]) + strlen(t_burst[1]) +
							 (fallback ? strlen(t_burst[2]) : 0));
	lcp_h_ctrs_eq(h, {"sanitized", 1}, {"drop_no_symbol", fallback ? 0 : 1},
		      {"fallback", fallback ? 1 : 0}, {"unflushed_at_stop", 0});
	ck_assert_uint_eq(lcp_h_msgs_freed(h), T_BURST);
	t_nc_expect(&sub, "md.t.AB_C", t_burst[0]);
	t_nc_expect(&sub, "md.t.X", t_burst[1]);
	if (fallback)
		t_nc_expect(&sub, "md.t.none", t_burst[2]);
	lcp_h_free(h);
	t_nc_close(&sub);
	t_srv_stop(&s);
}

START_TEST(core_subjects)
{
	T_NEED_SERVER();
	t_core_case(false);
}
END_TEST

START_TEST(core_fallback)
{
	T_NEED_SERVER();
	t_core_case(true);
}
END_TEST

/* the two ticks of t_burst with symbols, through a JetStream stage */
static void
t_js_round(const struct t_srv *s, const char *counter)
{
	struct lcp_h *h = t_stage(s->url, "\"jetstream\": true, \"seq_field\": \"n\"");
	struct lcp_msg *m[2];

	for (unsigned i = 0; i < 2; i++)
		m[i] = lcp_h_msg(h, 0, 1, t_burst[i], strlen(t_burst[i]));
	lcp_h_push(h, "msg", (void **)m, 2);
	lcp_h_stop(h); /* waits for the acks (flush_timeout_ms) */
	ck_assert_uint_eq(lcp_h_ctr(h, "msgs"), 2);
	ck_assert_uint_eq(lcp_h_ctr(h, counter), 2);
	lcp_h_ctrs_eq(h, {"ack_failed", 0}, {"unacked_at_stop", 0}, {"no_msg_id", 0});
	ck_assert_uint_eq(lcp_h_msgs_freed(h), 2);
	lcp_h_free(h);
}

START_TEST(js_acks_then_dups)
{
	struct t_srv s;
	struct t_nc c;
	json_t *j;

	T_NEED_SERVER();
	t_srv_start(&s);
	t_nc_open(&c, s.port, "");
	j = t_nc_request(&c, "$JS.API.STREAM.CREATE.MD",
			 "{\"name\":\"MD\",\"subjects\":[\"md.>\"],\"storage\":\"memory\"}");
	json_decref(j);
	t_js_round(&s, "acks");
	t_js_round(&s, "acks_duplicate"); /* the same Nats-Msg-Ids: t.AB_C.1, t.X.2 */
	j = t_nc_request(&c, "$JS.API.STREAM.INFO.MD", "");
	ck_assert_int_eq(json_integer_value(json_object_get(json_object_get(j, "state"), "messages")), 2);
	json_decref(j);
	t_nc_close(&c);
	t_srv_stop(&s);
}
END_TEST

START_TEST(js_no_server)
{
	char url[64];
	struct lcp_h *h;
	struct lcp_msg *m[2];

	snprintf(url, sizeof(url), "nats://127.0.0.1:%d", t_free_port());
	h = t_stage(url, "\"jetstream\": true, \"seq_field\": \"n\", \"flush_timeout_ms\": 0");
	for (unsigned i = 0; i < 2; i++)
		m[i] = lcp_h_msg(h, 0, 1, t_burst[i], strlen(t_burst[i]));
	lcp_h_push(h, "msg", (void **)m, 2);
	ck_assert_uint_eq(lcp_h_ctr(h, "drop_not_connected"), 2);
	ck_assert_uint_eq(lcp_h_ctr(h, "msgs"), 0);
	ck_assert_uint_eq(lcp_h_msgs_freed(h), 2);
	lcp_h_free(h);
}
END_TEST

static void
nats_tcases(Suite *s)
{
	T_TESTS(t_tcase(s, "sink_nats", NULL, NULL, 120), core_subjects, core_fallback,
		js_acks_then_dups, js_no_server);
}

T_MAIN("h_nats", nats_tcases)
