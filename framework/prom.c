/* SPDX-License-Identifier: BSD-3-Clause
 * prom.c — the metrics endpoint: GET /metrics in the Prometheus text format
 * (0.0.4), or OpenMetrics 1.0 when the scraper asks for it (Accept:
 * application/openmetrics-text, as Prometheus does), on engine.metrics_listen.
 *
 * libmicrohttpd does the HTTP, without threads of its own: the control loop
 * polls its epoll descriptor with the wake-up eventfd (engine.c) and calls
 * lcp_prom_run() when it is readable, so a scrape reads the counters on the
 * control thread, as the live line does, and never on a worker lcore.
 *
 * What is exported (every family prefixed lcpipe_; labels stage, plugin, lcore,
 * port as they apply):
 *   info (version, config, name), uptime_seconds, tsc_hz
 *   port_in_objects_total, port_out_objects_total     objects per stage port
 *   drops_total{reason}                                every drop_* counter
 *   port_backpressure_waits_total / _cycles_total      blocking links
 *   stage_events_total{counter}                        the stages' own counters
 *   <histogram> (histogram)                            the SDK histograms (ABI 2.2)
 *   lcore_busy_cycles_total / lcore_idle_cycles_total  per worker lcore
 *   ring_high_water{link}                              cross-lcore rings
 *   pool_in_use, pool_objects, pool_peak_in_use, pool_get_fail_total
 *   mempool_in_use, mempool_size                       DPDK mempools
 * A scrape is one pass over the same readings as the report (lcp_stats_json).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <microhttpd.h>
#include <rte_cycles.h>
#include <rte_mempool.h>

#include <lcp/log.h>

#include "config.h"
#include "engine_priv.h"

struct prom_buf {
	char *s;
	size_t len, cap;
	bool om; /* OpenMetrics */
	bool oom;
};

static void __attribute__((format(printf, 2, 3)))
pb_printf(struct prom_buf *b, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (b->oom)
		return;
	for (;;) {
		va_start(ap, fmt);
		n = vsnprintf(b->s + b->len, b->cap - b->len, fmt, ap);
		va_end(ap);
		if (n < 0) {
			b->oom = true;
			return;
		}
		if ((size_t)n < b->cap - b->len) {
			b->len += (size_t)n;
			return;
		}
		size_t cap = b->cap * 2 + (size_t)n;
		char *s = realloc(b->s, cap);

		if (s == NULL) {
			b->oom = true;
			return;
		}
		b->s = s;
		b->cap = cap;
	}
}

/* a label value: backslash, double quote and newline escaped */
static void
pb_label(struct prom_buf *b, const char *k, const char *v, bool first)
{
	pb_printf(b, "%s%s=\"", first ? "" : ",", k);
	for (const char *p = v; *p; p++) {
		if (*p == '\\' || *p == '"')
			pb_printf(b, "\\%c", *p);
		else if (*p == '\n')
			pb_printf(b, "\\n");
		else
			pb_printf(b, "%c", *p);
	}
	pb_printf(b, "\"");
}

/* # HELP / # TYPE of a family. name is the sample name (with _total for a
 * counter); OpenMetrics names the family without it. */
static void
pb_family(struct prom_buf *b, const char *name, const char *type, const char *help)
{
	size_t n = strlen(name);

	if (b->om && strcmp(type, "counter") == 0 && n > 6 && strcmp(name + n - 6, "_total") == 0)
		n -= 6;
	pb_printf(b, "# HELP %.*s %s\n# TYPE %.*s %s\n", (int)n, name, help, (int)n, name, type);
}

/* "lcpipe_<a>_<b>" into out, any byte outside [a-zA-Z0-9_] as '_' */
static void
metric_name(char *out, size_t len, const char *a, const char *b, const char *suffix)
{
	snprintf(out, len, "lcpipe_%s%s%s%s", a, b ? "_" : "", b ? b : "", suffix);
	for (char *p = out; *p; p++)
		if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') || *p == '_'))
			*p = '_';
}

static void
stage_labels(struct prom_buf *b, const struct lcp_stage_priv *sp)
{
	char lc[16];

	snprintf(lc, sizeof(lc), "%u", sp->cs->lcore);
	pb_label(b, "stage", sp->cs->name, true);
	pb_label(b, "plugin", sp->cs->plugin, false);
	pb_label(b, "lcore", lc, false);
}

/* the built-in per-port counter k of sp: its family, and its port */
enum ctr_kind { CK_IN, CK_OUT, CK_DROP, CK_BP_WAITS, CK_BP_CYCLES, CK_OWN };

static enum ctr_kind
ctr_kind(const struct lcp_stage_priv *sp, unsigned k, char *port, size_t plen, const char **reason)
{
	const char *n = sp->ctr_names[k], *dot = strchr(n, '.');

	*reason = n;
	port[0] = '\0';
	if (dot != NULL && k < sp->pub.ctr_own) {
		snprintf(port, plen, "%.*s", (int)(dot - n), n);
		*reason = dot + 1;
		if (strcmp(dot, ".in") == 0)
			return CK_IN;
		if (strcmp(dot, ".out") == 0)
			return CK_OUT;
		if (strcmp(dot, ".backpressure_waits") == 0)
			return CK_BP_WAITS;
		if (strcmp(dot, ".backpressure_cycles") == 0)
			return CK_BP_CYCLES;
	}
	if (strncmp(*reason, "drop_", 5) == 0)
		return CK_DROP;
	return CK_OWN;
}

static void
emit_port_family(struct prom_buf *b, struct lcp_engine *e, enum ctr_kind want, const char *name,
		 const char *help)
{
	bool head = false;

	for (unsigned i = 0; i < e->n_stages; i++) {
		const struct lcp_stage_priv *sp = e->stages[i];

		for (unsigned k = 0; sp->pub.ctrs != NULL && k < sp->hist_first; k++) {
			char port[LCP_NAME_MAX + 8];
			const char *reason;

			if (ctr_kind(sp, k, port, sizeof(port), &reason) != want)
				continue;
			if (!head) {
				pb_family(b, name, "counter", help);
				head = true;
			}
			pb_printf(b, "%s{", name);
			stage_labels(b, sp);
			pb_label(b, "port", port, false);
			if (want == CK_DROP)
				pb_label(b, "reason", reason, false);
			pb_printf(b, "} %llu\n", (unsigned long long)lcp_stage_ctr(sp, k));
		}
	}
}

/* the stages' own counters, one family: a counter's name is a label, so
 * what a plugin names its counters (lat_p50_ns, naive_field_s) cannot make
 * a family name Prometheus's conventions refuse */
static void
emit_own(struct prom_buf *b, struct lcp_engine *e)
{
	pb_family(b, "lcpipe_stage_events_total", "counter",
		  "a stage's own counters (the plugin's; drops are in lcpipe_drops_total)");
	for (unsigned i = 0; i < e->n_stages; i++) {
		const struct lcp_stage_priv *sp = e->stages[i];

		for (unsigned k = sp->pub.ctr_own; sp->pub.ctrs != NULL && k < sp->hist_first; k++) {
			if (strncmp(sp->ctr_names[k], "drop_", 5) == 0)
				continue;
			pb_printf(b, "lcpipe_stage_events_total{");
			stage_labels(b, sp);
			pb_label(b, "counter", sp->ctr_names[k], false);
			pb_printf(b, "} %llu\n", (unsigned long long)lcp_stage_ctr(sp, k));
		}
	}
}

/* the SDK histograms, one family per name (stages of any plugin may share it) */
static void
emit_hists(struct prom_buf *b, struct lcp_engine *e)
{
	for (unsigned i = 0; i < e->n_stages; i++) {
		const struct lcp_stage_priv *sp = e->stages[i];

		for (unsigned h = 0; sp->pub.ctrs != NULL && h < sp->n_hists; h++) {
			const char *hn = sp->hists[h].name;
			char name[192];
			bool seen = false;

			for (unsigned j = 0; j < i && !seen; j++)
				for (unsigned g = 0; e->stages[j]->pub.ctrs != NULL && g < e->stages[j]->n_hists; g++)
					seen |= strcmp(e->stages[j]->hists[g].name, hn) == 0;
			if (seen)
				continue;
			metric_name(name, sizeof(name), hn, NULL, "");
			pb_family(b, name, "histogram", sp->hists[h].help);
			for (unsigned j = i; j < e->n_stages; j++) {
				const struct lcp_stage_priv *sq = e->stages[j];

				for (unsigned g = 0; sq->pub.ctrs != NULL && g < sq->n_hists; g++) {
					const struct lcp_hist_def *d = &sq->hists[g];
					uint64_t bk[LCP_HIST_MAX_LE + 1], count, sum, cum = 0;

					if (strcmp(d->name, hn) != 0)
						continue;
					lcp_hist_read(sq, g, bk, &count, &sum);
					for (unsigned k = 0; k <= d->n_le; k++) {
						char le[40];

						cum += bk[k];
						if (k < d->n_le)
							snprintf(le, sizeof(le), "%.17g", (double)d->le[k] * sq->hist_scale[g]);
						else
							snprintf(le, sizeof(le), "+Inf");
						pb_printf(b, "%s_bucket{", name);
						stage_labels(b, sq);
						pb_label(b, "le", le, false);
						pb_printf(b, "} %llu\n", (unsigned long long)cum);
					}
					pb_printf(b, "%s_sum{", name);
					stage_labels(b, sq);
					pb_printf(b, "} %.17g\n", (double)sum * sq->hist_scale[g]);
					pb_printf(b, "%s_count{", name);
					stage_labels(b, sq);
					pb_printf(b, "} %llu\n", (unsigned long long)cum);
				}
			}
		}
	}
}

static void
mp_emit(struct rte_mempool *mp, void *arg)
{
	struct prom_buf *b = arg;

	pb_printf(b, "lcpipe_mempool_in_use{");
	pb_label(b, "mempool", mp->name, true);
	pb_printf(b, "} %u\n", rte_mempool_in_use_count(mp));
}

static void
mp_emit_size(struct rte_mempool *mp, void *arg)
{
	struct prom_buf *b = arg;

	pb_printf(b, "lcpipe_mempool_size{");
	pb_label(b, "mempool", mp->name, true);
	pb_printf(b, "} %u\n", mp->size);
}

/* the whole exposition into b */
static void
prom_text(struct lcp_engine *e, struct prom_buf *b)
{
	uint64_t now = rte_rdtsc();
	json_t *pools;
	size_t i;
	json_t *m;

	if (b->om)
		pb_printf(b, "# HELP lcpipe lcpipe and the pipeline it runs\n# TYPE lcpipe info\n");
	else
		pb_family(b, "lcpipe_info", "gauge", "lcpipe and the pipeline it runs (always 1)");
	pb_printf(b, "lcpipe_info{");
	pb_label(b, "version", PACKAGE_VERSION, true);
	pb_label(b, "config", e->cfg->path ? e->cfg->path : "", false);
	pb_label(b, "name", e->cfg->name ? e->cfg->name : "", false);
	pb_printf(b, "} 1\n");
	pb_family(b, "lcpipe_uptime_seconds", "gauge", "seconds since the workers started");
	pb_printf(b, "lcpipe_uptime_seconds %.6f\n", (double)(now - e->t_start) / (double)e->tsc_hz);
	pb_family(b, "lcpipe_tsc_hz", "gauge", "the TSC rate that cycle counts are in");
	pb_printf(b, "lcpipe_tsc_hz %llu\n", (unsigned long long)e->tsc_hz);

	emit_port_family(b, e, CK_IN, "lcpipe_port_in_objects_total", "objects handed to a stage's input port");
	emit_port_family(b, e, CK_OUT, "lcpipe_port_out_objects_total",
			 "objects a stage's output port delivered to its link");
	emit_port_family(b, e, CK_DROP, "lcpipe_drops_total",
			 "objects dropped, by stage, port (empty: the stage's own) and reason (the drop_* counter)");
	emit_port_family(b, e, CK_BP_WAITS, "lcpipe_port_backpressure_waits_total",
			 "waits for room in a full ring (links with on_full block)");
	emit_port_family(b, e, CK_BP_CYCLES, "lcpipe_port_backpressure_cycles_total",
			 "TSC cycles spent waiting for room in a full ring");
	emit_own(b, e);
	emit_hists(b, e);

	pb_family(b, "lcpipe_lcore_busy_cycles_total", "counter", "TSC cycles a worker lcore spent on turns that did work");
	for (unsigned w = 0; w < e->n_workers; w++)
		pb_printf(b, "lcpipe_lcore_busy_cycles_total{lcore=\"%u\"} %llu\n", e->workers[w].lcore,
			  (unsigned long long)__atomic_load_n(&e->workers[w].busy_cycles, __ATOMIC_RELAXED));
	pb_family(b, "lcpipe_lcore_idle_cycles_total", "counter", "TSC cycles a worker lcore spent on empty turns");
	for (unsigned w = 0; w < e->n_workers; w++)
		pb_printf(b, "lcpipe_lcore_idle_cycles_total{lcore=\"%u\"} %llu\n", e->workers[w].lcore,
			  (unsigned long long)__atomic_load_n(&e->workers[w].idle_cycles, __ATOMIC_RELAXED));
	pb_family(b, "lcpipe_ring_high_water", "gauge", "the most objects a cross-lcore link's ring has held");
	for (unsigned w = 0; w < e->n_workers; w++)
		for (unsigned r = 0; r < e->workers[w].n_rins; r++)
			pb_printf(b, "lcpipe_ring_high_water{link=\"%u\",lcore=\"%u\"} %u\n", e->workers[w].rins[r].link,
				  e->workers[w].lcore, e->workers[w].rins[r].hwm);

	pools = lcp_pools_json(e);
	if (json_array_size(pools) > 0) {
		static const struct {
			const char *key, *name, *type, *help;
		} pf[] = {
			{ "in_use", "lcpipe_pool_in_use", "gauge", "objects of a stage's pool (pool strategy) in use" },
			{ "objects", "lcpipe_pool_objects", "gauge", "objects a stage's pool holds" },
			{ "peak_in_use", "lcpipe_pool_peak_in_use", "gauge", "the most objects in use at once (sampled)" },
			{ "get_fail", "lcpipe_pool_get_fail_total", "counter", "gets that found the pool empty" },
		};

		for (unsigned f = 0; f < sizeof(pf) / sizeof(pf[0]); f++) {
			pb_family(b, pf[f].name, pf[f].type, pf[f].help);
			json_array_foreach(pools, i, m) {
				pb_printf(b, "%s{", pf[f].name);
				pb_label(b, "stage", json_string_value(json_object_get(m, "stage")), true);
				pb_label(b, "pool", json_string_value(json_object_get(m, "name")), false);
				pb_label(b, "module", json_string_value(json_object_get(m, "module")), false);
				pb_printf(b, "} %lld\n", (long long)json_integer_value(json_object_get(m, pf[f].key)));
			}
		}
	}
	json_decref(pools);
	pb_family(b, "lcpipe_mempool_in_use", "gauge", "objects of a DPDK mempool in use (mbufs and the like)");
	rte_mempool_walk(mp_emit, b);
	pb_family(b, "lcpipe_mempool_size", "gauge", "objects a DPDK mempool holds");
	rte_mempool_walk(mp_emit_size, b);
	if (b->om)
		pb_printf(b, "# EOF\n");
}

static enum MHD_Result
prom_answer(void *cls, struct MHD_Connection *conn, const char *url, const char *method,
	    const char *version, const char *upload_data, size_t *upload_size, void **req_cls)
{
	struct lcp_engine *e = cls;
	struct prom_buf b = { 0 };
	struct MHD_Response *r;
	const char *accept;
	enum MHD_Result ret;
	unsigned status = MHD_HTTP_OK;

	(void)version;
	(void)upload_data;
	(void)upload_size;
	(void)req_cls;
	if (strcmp(method, "GET") != 0 && strcmp(method, "HEAD") != 0) {
		static const char msg[] = "only GET /metrics\n";

		r = MHD_create_response_from_buffer(sizeof(msg) - 1, (void *)msg, MHD_RESPMEM_PERSISTENT);
		status = MHD_HTTP_METHOD_NOT_ALLOWED;
		goto send;
	}
	if (strcmp(url, "/metrics") != 0) {
		static const char msg[] = "not found: the metrics are at /metrics\n";

		r = MHD_create_response_from_buffer(sizeof(msg) - 1, (void *)msg, MHD_RESPMEM_PERSISTENT);
		status = MHD_HTTP_NOT_FOUND;
		goto send;
	}
	accept = MHD_lookup_connection_value(conn, MHD_HEADER_KIND, MHD_HTTP_HEADER_ACCEPT);
	b.om = accept != NULL && strstr(accept, "application/openmetrics-text") != NULL;
	b.cap = 65536;
	b.s = malloc(b.cap);
	b.oom = b.s == NULL;
	if (!b.oom)
		prom_text(e, &b);
	if (b.oom) {
		static const char msg[] = "out of memory\n";

		free(b.s);
		r = MHD_create_response_from_buffer(sizeof(msg) - 1, (void *)msg, MHD_RESPMEM_PERSISTENT);
		status = MHD_HTTP_INTERNAL_SERVER_ERROR;
		goto send;
	}
	r = MHD_create_response_from_buffer(b.len, b.s, MHD_RESPMEM_MUST_FREE);
	if (r == NULL) {
		free(b.s);
		return MHD_NO;
	}
	MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE,
				b.om ? "application/openmetrics-text; version=1.0.0; charset=utf-8"
				     : "text/plain; version=0.0.4; charset=utf-8");
	e->prom_scrapes++;
send:
	if (r == NULL)
		return MHD_NO;
	ret = MHD_queue_response(conn, status, r);
	MHD_destroy_response(r);
	return ret;
}

int
lcp_prom_parse(const char *s, struct sockaddr_storage *ss, socklen_t *len)
{
	char host[64];
	const char *colon = strrchr(s, ':');
	char *end;
	long port;

	memset(ss, 0, sizeof(*ss));
	if (colon == NULL || colon == s || (size_t)(colon - s) >= sizeof(host))
		return -EINVAL;
	port = strtol(colon + 1, &end, 10);
	if (*end != '\0' || colon[1] == '\0' || port < 1 || port > 65535)
		return -EINVAL;
	if (s[0] == '[') {
		struct sockaddr_in6 *a = (struct sockaddr_in6 *)ss;

		if (colon[-1] != ']' || colon - s < 3)
			return -EINVAL;
		snprintf(host, sizeof(host), "%.*s", (int)(colon - s - 2), s + 1);
		a->sin6_family = AF_INET6;
		a->sin6_port = htons((uint16_t)port);
		if (inet_pton(AF_INET6, host, &a->sin6_addr) != 1)
			return -EINVAL;
		*len = sizeof(*a);
	} else {
		struct sockaddr_in *a = (struct sockaddr_in *)ss;

		snprintf(host, sizeof(host), "%.*s", (int)(colon - s), s);
		a->sin_family = AF_INET;
		a->sin_port = htons((uint16_t)port);
		if (inet_pton(AF_INET, host, &a->sin_addr) != 1)
			return -EINVAL;
		*len = sizeof(*a);
	}
	return 0;
}

static void
prom_log(void *cls, const char *fmt, va_list ap)
{
	char msg[256];

	(void)cls;
	vsnprintf(msg, sizeof(msg), fmt, ap);
	msg[strcspn(msg, "\n")] = '\0';
	lcp_log(NULL, LCP_LOG_WARNING, "metrics endpoint: %s", msg);
}

int
lcp_prom_start(struct lcp_engine *e)
{
	const char *listen = e->cfg->eng.metrics_listen;
	struct sockaddr_storage ss;
	socklen_t len;
	const union MHD_DaemonInfo *di;
	unsigned flags = MHD_USE_EPOLL | MHD_USE_ERROR_LOG;

	e->prom_fd = -1;
	if (listen == NULL || listen[0] == '\0')
		return 0;
	if (lcp_prom_parse(listen, &ss, &len) < 0) { /* lcpipe check refuses it first */
		lcp_log(NULL, LCP_LOG_ERR, "engine.metrics_listen: \"%s\" is not ADDRESS:PORT", listen);
		return -EINVAL;
	}
	if (ss.ss_family == AF_INET6)
		flags |= MHD_USE_IPv6;
	/* one request at a time on the control thread: a few connections, short timeouts */
	e->prom = MHD_start_daemon(flags, 0, NULL, NULL, prom_answer, e, MHD_OPTION_SOCK_ADDR, &ss,
				   MHD_OPTION_CONNECTION_LIMIT, 16u, MHD_OPTION_CONNECTION_TIMEOUT, 10u,
				   MHD_OPTION_EXTERNAL_LOGGER, prom_log, NULL, MHD_OPTION_END);
	if (e->prom == NULL) {
		lcp_log(NULL, LCP_LOG_ERR, "engine.metrics_listen: cannot listen on %s: %s", listen,
			errno ? strerror(errno) : "libmicrohttpd refused");
		return -EADDRINUSE;
	}
	di = MHD_get_daemon_info(e->prom, MHD_DAEMON_INFO_EPOLL_FD);
	if (di == NULL) {
		lcp_log(NULL, LCP_LOG_ERR, "engine.metrics_listen: libmicrohttpd has no epoll descriptor");
		MHD_stop_daemon(e->prom);
		e->prom = NULL;
		return -EINVAL;
	}
	e->prom_fd = di->epoll_fd;
	lcp_log(NULL, LCP_LOG_INFO, "metrics endpoint: http://%s/metrics (Prometheus text; OpenMetrics on request)",
		listen);
	return 0;
}

void
lcp_prom_run(struct lcp_engine *e)
{
	if (e->prom != NULL)
		MHD_run(e->prom);
}

/* how long the control loop may sleep for the endpoint's sake, ms (-1: no limit) */
int
lcp_prom_timeout_ms(struct lcp_engine *e)
{
	MHD_UNSIGNED_LONG_LONG t;

	if (e->prom == NULL || MHD_get_timeout(e->prom, &t) != MHD_YES)
		return -1;
	return t > 60000 ? 60000 : (int)t;
}

void
lcp_prom_stop(struct lcp_engine *e)
{
	if (e->prom != NULL)
		MHD_stop_daemon(e->prom);
	e->prom = NULL;
	e->prom_fd = -1;
}
