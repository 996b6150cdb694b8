/* SPDX-License-Identifier: BSD-3-Clause
 * sink_nats_conn.c — sink_nats's connection and the stage's life around it.
 *
 *   sn_on_*            libnats's callbacks, on its threads: counts into struct
 *                      sn_shared, log lines; sn_on_ack pushes a JetStream
 *                      completion into the ack ring
 *   sink_nats_init     templates, paths, the callback state, the ack ring and
 *                      the try table (no I/O)
 *   sink_nats_start    libnats options, connect, the JetStream context
 *   sink_nats_stop     flush (core) or wait for the acks (JetStream), teardown,
 *                      the summary line
 *   sn_teardown        close, destroy, count what is unacknowledged (stop, or
 *                      fini if stop did not run)
 *   sink_nats_fini     teardown if needed, free
 */
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <rte_common.h>
#include <rte_cycles.h>
#include <rte_malloc.h>
#include <rte_ring.h>
#include <rte_ring_elem.h>

#include "sink_nats.h"

/* ---- what libnats threads touch ---- */

static inline bool
sn_cb_enter(struct sn_shared *sh)
{
	__atomic_add_fetch(&sh->in_cb, 1, __ATOMIC_SEQ_CST);
	if (__atomic_load_n(&sh->dead, __ATOMIC_SEQ_CST)) {
		__atomic_sub_fetch(&sh->in_cb, 1, __ATOMIC_SEQ_CST);
		return false;
	}
	return true;
}

static inline void
sn_cb_leave(struct sn_shared *sh)
{
	__atomic_sub_fetch(&sh->in_cb, 1, __ATOMIC_SEQ_CST);
}

static void
sn_url_now(natsConnection *nc, char *buf, size_t n)
{
	if (natsConnection_GetConnectedUrl(nc, buf, n) != NATS_OK || buf[0] == '\0')
		snprintf(buf, n, "?");
}

/* a connection came (back): count it under ctr and say so ("connected to URL
 * (after retrying)", "reconnected to NATS server URL") */
static void
sn_on_link(natsConnection *nc, struct sn_shared *sh, uint64_t *ctr, bool again)
{
	char url[256];

	if (!sn_cb_enter(sh))
		return;
	__atomic_add_fetch(ctr, 1, __ATOMIC_RELAXED);
	sn_url_now(nc, url, sizeof(url));
	if (again)
		lcp_log(sh->st, LCP_LOG_NOTICE, "reconnected to NATS server %s", url);
	else
		lcp_log(sh->st, LCP_LOG_NOTICE, "connected to %s (after retrying)", url);
	sn_cb_leave(sh);
}

static void
sn_on_connected(natsConnection *nc, void *closure)
{
	struct sn_shared *sh = closure;

	sn_on_link(nc, sh, &sh->connects, false);
}

static void
sn_on_disconnected(natsConnection *nc, void *closure)
{
	struct sn_shared *sh = closure;

	RTE_SET_USED(nc);
	if (!sn_cb_enter(sh))
		return;
	if (!__atomic_load_n(&sh->tearing, __ATOMIC_RELAXED)) { /* not our own close */
		__atomic_add_fetch(&sh->disconnects, 1, __ATOMIC_RELAXED);
		if (sh->max_reconnect < 0)
			lcp_log(sh->st, LCP_LOG_WARNING,
				"disconnected from NATS server %s: reconnecting every %" PRIu32 " ms for ever; up to %" PRIu32
				" bytes of publishes are kept meanwhile",
				sh->url, sh->reconnect_wait_ms, sh->reconnect_buf);
		else
			lcp_log(sh->st, LCP_LOG_WARNING,
				"disconnected from NATS server %s: reconnecting every %" PRIu32 " ms, %" PRId32
				" attempts per server at most; up to %" PRIu32 " bytes of publishes are kept meanwhile",
				sh->url, sh->reconnect_wait_ms, sh->max_reconnect, sh->reconnect_buf);
	}
	sn_cb_leave(sh);
}

static void
sn_on_reconnected(natsConnection *nc, void *closure)
{
	struct sn_shared *sh = closure;

	sn_on_link(nc, sh, &sh->reconnects, true);
}

static void
sn_on_closed(natsConnection *nc, void *closure)
{
	struct sn_shared *sh = closure;

	RTE_SET_USED(nc);
	if (sn_cb_enter(sh)) {
		if (!__atomic_load_n(&sh->tearing, __ATOMIC_RELAXED))
			lcp_log(sh->st, LCP_LOG_ERR,
				"connection to NATS server %s closed for good (reconnect attempts exhausted, max_reconnect %" PRId32
				"): every later message is dropped (drop_closed)",
				sh->url, sh->max_reconnect);
		sn_cb_leave(sh);
	}
	/* the last callback of the connection: teardown may free sh after this */
	__atomic_store_n(&sh->closed_seen, 1, __ATOMIC_RELEASE);
}

static void
sn_on_error(natsConnection *nc, natsSubscription *sub, natsStatus err, void *closure)
{
	struct sn_shared *sh = closure;
	const char *txt = NULL;
	uint32_t k;

	RTE_SET_USED(sub);
	if (!sn_cb_enter(sh))
		return;
	__atomic_add_fetch(&sh->async_errors, 1, __ATOMIC_RELAXED);
	k = __atomic_fetch_add(&sh->err_logs, 1, __ATOMIC_RELAXED);
	if (k < SN_ERR_LOG_MAX) {
		natsConnection_GetLastError(nc, &txt);
		lcp_log(sh->st, LCP_LOG_ERR, "asynchronous error from NATS server %s: %s (%s)%s", sh->url,
			natsStatus_GetText(err), txt != NULL ? txt : "",
			k + 1 == SN_ERR_LOG_MAX ? "; further ones are only counted (async_errors)" : "");
	}
	sn_cb_leave(sh);
}

/* JetStream: an ack, a negative ack or a timeout of one published message. The
 * lcore does everything else; the ring cannot be full (see sn_js_inflight) */
static void
sn_on_ack(jsCtx *js, natsMsg *m, jsPubAck *pa, jsPubAckErr *pae, void *closure)
{
	struct sn_shared *sh = closure;
	struct sn_ack a = { .m = m };
	uint32_t k;

	RTE_SET_USED(js);
	if (!sn_cb_enter(sh)) {
		natsMsg_Destroy(m);
		return;
	}
	if (pa != NULL) {
		a.outcome = pa->Duplicate ? SN_ACK_DUP : SN_ACK_OK;
	} else {
		a.outcome = pae != NULL && pae->Err == NATS_TIMEOUT ? SN_ACK_TIMEOUT : SN_ACK_ERR;
		a.code = pae != NULL ? (int32_t)pae->ErrCode : 0;
		k = __atomic_fetch_add(&sh->ack_logs, 1, __ATOMIC_RELAXED);
		if (k < SN_ERR_LOG_MAX)
			lcp_log(sh->st, LCP_LOG_WARNING,
				"JetStream publish to %s not acknowledged: %s (error code %d); retried up to ack_retries times, "
				"then counted under ack_failed%s",
				natsMsg_GetSubject(m),
				a.outcome == SN_ACK_TIMEOUT ? "no ack within ack_timeout_ms"
				: pae != NULL && pae->ErrText != NULL ? pae->ErrText : "error",
				(int)a.code, k + 1 == SN_ERR_LOG_MAX ? "; further ones are only counted (ack_errors)" : "");
	}
	if (rte_ring_mp_enqueue_elem(sh->acks, &a, sizeof(a)) != 0) {
		/* cannot happen (the ring holds every message in flight); counted */
		__atomic_add_fetch(&sh->ack_lost, 1, __ATOMIC_RELAXED);
		natsMsg_Destroy(m);
	}
	sn_cb_leave(sh);
}

/* ---- start, stop, teardown ---- */

static natsStatus
sn_options(struct sink_nats_ctx *x, const char *name)
{
	const struct sink_nats_conf *c = x->c;
	struct sn_shared *sh = x->sh;
	natsStatus s;

	s = natsOptions_Create(&x->opts);
	if (s == NATS_OK)
		s = natsOptions_SetURL(x->opts, c->url);
	if (s == NATS_OK)
		s = natsOptions_SetName(x->opts, name);
	if (s == NATS_OK)
		s = natsOptions_SetTimeout(x->opts, c->connect_timeout_ms);
	if (s == NATS_OK)
		s = natsOptions_SetAllowReconnect(x->opts, true);
	if (s == NATS_OK)
		s = natsOptions_SetMaxReconnect(x->opts, c->max_reconnect);
	if (s == NATS_OK)
		s = natsOptions_SetReconnectWait(x->opts, c->reconnect_wait_ms);
	if (s == NATS_OK)
		s = natsOptions_SetReconnectBufSize(x->opts, (int)c->reconnect_buf_bytes);
	if (s == NATS_OK)
		s = natsOptions_SetWriteDeadline(x->opts, c->write_deadline_ms);
	if (s == NATS_OK)
		s = natsOptions_SetNoEcho(x->opts, true);
	if (s == NATS_OK)
		s = natsOptions_SetRetryOnFailedConnect(x->opts, c->retry_on_failed_connect, sn_on_connected, sh);
	if (s == NATS_OK)
		s = natsOptions_SetDisconnectedCB(x->opts, sn_on_disconnected, sh);
	if (s == NATS_OK)
		s = natsOptions_SetReconnectedCB(x->opts, sn_on_reconnected, sh);
	if (s == NATS_OK)
		s = natsOptions_SetClosedCB(x->opts, sn_on_closed, sh);
	if (s == NATS_OK)
		s = natsOptions_SetErrorHandler(x->opts, sn_on_error, sh);
	return s;
}

int
sink_nats_start(struct lcp_stage *st, void *ctx)
{
	struct sink_nats_ctx *x = ctx;
	const struct sink_nats_conf *c = x->c;
	char name[300];
	const char *last = NULL;
	natsStatus s;

	x->have_ctl_cpus = pthread_getaffinity_np(pthread_self(), sizeof(x->ctl_cpus), &x->ctl_cpus) == 0;
	if (c->name[0] != '\0')
		snprintf(name, sizeof(name), "%s", c->name);
	else
		snprintf(name, sizeof(name), "lcpipe/%s", lcp_stage_name(st));
	s = sn_options(x, name);
	if (s != NATS_OK) {
		last = nats_GetLastError(NULL);
		lcp_log(st, LCP_LOG_ERR, "cannot set up libnats options for %s: %s%s%s", c->url, natsStatus_GetText(s),
			last != NULL ? ": " : "", last != NULL ? last : "");
		return -EINVAL;
	}
	s = natsConnection_Connect(&x->nc, x->opts);
	if (s == NATS_OK) {
		char url[256];

		__atomic_add_fetch(&x->sh->connects, 1, __ATOMIC_RELAXED);
		sn_url_now(x->nc, url, sizeof(url));
		lcp_log(st, LCP_LOG_INFO, "connected to NATS server %s", url);
	} else if (s == NATS_NOT_YET_CONNECTED) {
		lcp_log(st, LCP_LOG_WARNING,
			"no NATS server at %s yet: starting anyway, retrying every %" PRIu32 " ms in the background; %s",
			c->url, c->reconnect_wait_ms,
			c->jetstream ? "JetStream messages are dropped until connected (drop_not_connected)"
				     : "publishes are kept in the reconnect buffer (reconnect_buf_bytes) meanwhile");
	} else {
		last = nats_GetLastError(NULL);
		lcp_log(st, LCP_LOG_ERR, "cannot connect to NATS server %s: %s%s%s%s", c->url, natsStatus_GetText(s),
			last != NULL ? ": " : "", last != NULL ? last : "",
			c->retry_on_failed_connect ? "" : " (retry_on_failed_connect is false)");
		x->nc = NULL;
		return -ECONNREFUSED;
	}
	if (c->jetstream) {
		jsOptions jo;

		jsOptions_Init(&jo);
		/* the lcore bounds what is in flight itself (sn_js_inflight); libnats's
		 * own count drops a little later (after the ack handler returns), so its
		 * limit, a backstop, has some slack */
		jo.PublishAsync.MaxPending = (int64_t)c->max_pending + SN_JS_SLACK;
		jo.PublishAsync.StallWait = 1;
		jo.PublishAsync.AckHandler = sn_on_ack;
		jo.PublishAsync.AckHandlerClosure = x->sh;
		s = natsConnection_JetStream(&x->js, x->nc, &jo);
		if (s != NATS_OK) {
			last = nats_GetLastError(NULL);
			lcp_log(st, LCP_LOG_ERR, "cannot make a JetStream context on %s: %s%s%s", c->url, natsStatus_GetText(s),
				last != NULL ? ": " : "", last != NULL ? last : "");
			x->js = NULL;
			return -EIO;
		}
	}
	lcp_log(st, LCP_LOG_INFO,
		"publishing to %s as \"%s\" (%s), subject %s, venue %s%s%s%s; on_full %s", c->url, name,
		c->jetstream ? "JetStream" : "core NATS", c->subject, c->venue, x->has_fb ? ", fallback " : "",
		x->has_fb ? c->fallback_subject : "", c->jetstream ? ", ids <venue>.<symbol>.<seq>" : "",
		sink_nats_on_full[c->on_full]);
	return 0;
}

/* wait up to ms for *flag to become nonzero */
static bool
sn_wait_flag(const uint32_t *flag, uint32_t want, unsigned ms)
{
	for (unsigned i = 0; i < ms * 10; i++) {
		if (__atomic_load_n(flag, __ATOMIC_ACQUIRE) == want)
			return true;
		usleep(100);
	}
	return __atomic_load_n(flag, __ATOMIC_ACQUIRE) == want;
}

/* close and destroy everything libnats holds for this stage; count what is
 * still unacknowledged. Idempotent (stop, and fini if stop did not run). */
static void
sn_teardown(struct sink_nats_ctx *x)
{
	struct sn_shared *sh = x->sh;
	bool closed = true;

	if (x->torn_down)
		return;
	x->torn_down = true;
	if (sh != NULL)
		__atomic_store_n(&sh->tearing, 1, __ATOMIC_RELAXED);
	if (x->js != NULL) {
		natsMsgList pend;

		if (js_PublishAsyncGetPendingList(&pend, x->js) == NATS_OK) {
			/* taken back from libnats: their acks, if any come, are ignored */
			for (int i = 0; i < pend.Count; i++)
				if (pend.Msgs[i] != NULL)
					sn_try_take(x, pend.Msgs[i]);
			sn_count(x, SN_C_UNACKED_AT_STOP, (uint64_t)pend.Count);
			x->done += (uint64_t)pend.Count;
			natsMsgList_Destroy(&pend);
		}
		jsCtx_Destroy(x->js);
	}
	if (x->nc != NULL) {
		natsConnection_Close(x->nc);
		natsConnection_Destroy(x->nc);
		closed = sn_wait_flag(&sh->closed_seen, 1, SN_TEARDOWN_WAIT_MS);
	}
	if (x->opts != NULL)
		natsOptions_Destroy(x->opts);
	if (sh != NULL) {
		uint32_t zero = 0;

		__atomic_store_n(&sh->dead, 1, __ATOMIC_SEQ_CST);
		if (!sn_wait_flag(&sh->in_cb, zero, SN_TEARDOWN_WAIT_MS))
			closed = false;
		sn_sync_counters(x);
		if (x->acks != NULL) /* completions that came in before the end */
			while (sn_js_drain(x, false) != 0)
				;
	}
	x->js = NULL;
	x->nc = NULL;
	x->opts = NULL;
	if (sh != NULL && !closed) {
		/* a libnats callback may still come: leave sh to it (a few bytes),
		 * dead; and the ring too if a callback is still inside */
		lcp_log(x->st, LCP_LOG_WARNING,
			"libnats did not confirm the connection's close within %u ms: leaving its callback state allocated",
			SN_TEARDOWN_WAIT_MS);
		if (__atomic_load_n(&sh->in_cb, __ATOMIC_ACQUIRE) != 0)
			x->acks = NULL;
		x->sh = NULL;
	}
}

void
sink_nats_stop(struct lcp_stage *st, void *ctx)
{
	struct sink_nats_ctx *x = ctx;
	const struct sink_nats_conf *c = x->c;
	uint64_t hz = rte_get_tsc_hz();
	uint64_t deadline = rte_rdtsc() + (uint64_t)c->flush_timeout_ms * hz / 1000;

	if (x->js != NULL) {
		for (;;) {
			jsPubOptions po;
			uint64_t now;

			while (sn_js_drain(x, true) != 0)
				;
			if (sn_js_inflight(x) == 0)
				break;
			now = rte_rdtsc();
			if (now >= deadline)
				break;
			jsPubOptions_Init(&po);
			po.MaxWait = (int64_t)RTE_MIN((deadline - now) * 1000 / hz + 1, (uint64_t)50);
			js_PublishAsyncComplete(x->js, &po);
		}
		if (sn_js_inflight(x) != 0)
			lcp_log(st, LCP_LOG_WARNING,
				"%" PRIu64 " message(s) still without an ack after flush_timeout_ms %" PRIu32
				" (unacked_at_stop)",
				sn_js_inflight(x), c->flush_timeout_ms);
	} else if (x->nc != NULL) {
		natsStatus s = c->flush_timeout_ms > 0 ? natsConnection_FlushTimeout(x->nc, c->flush_timeout_ms)
						       : NATS_TIMEOUT;

		if (s != NATS_OK) {
			bool up = natsConnection_Status(x->nc) == NATS_CONN_STATUS_CONNECTED;

			if (!up && x->down_pending != 0) {
				sn_count(x, SN_C_UNFLUSHED_AT_STOP, x->down_pending);
				lcp_log(st, LCP_LOG_ERR,
					"NATS server %s not reachable at stop: %" PRIu64
					" message(s) published while disconnected never reached it (unflushed_at_stop)",
					c->url, x->down_pending);
			} else if (up) {
				lcp_log(st, LCP_LOG_ERR,
					"flush to NATS server %s at stop: %s within flush_timeout_ms %" PRIu32
					": what it had not read yet may be lost (not counted per message)",
					c->url, natsStatus_GetText(s), c->flush_timeout_ms);
			}
		}
	}
	sn_teardown(x);
	lcp_log(st, LCP_LOG_INFO,
		"published %" PRIu64 " message(s) (%" PRIu64 " bytes)%s; acks %" PRIu64 ", duplicates %" PRIu64
		", failed %" PRIu64 ", unacked at stop %" PRIu64 ", unflushed at stop %" PRIu64 "; dropped: no symbol %" PRIu64
		", pending full %" PRIu64 ", not connected %" PRIu64 ", closed %" PRIu64 ", too big %" PRIu64
		", publish error %" PRIu64 "; disconnects %" PRIu64 ", reconnects %" PRIu64,
		x->t[SN_C_MSGS], x->t[SN_C_BYTES], c->jetstream ? " to JetStream" : "", x->t[SN_C_ACKS],
		x->t[SN_C_ACKS_DUPLICATE], x->t[SN_C_ACK_FAILED], x->t[SN_C_UNACKED_AT_STOP], x->t[SN_C_UNFLUSHED_AT_STOP],
		x->t[SN_C_DROP_NO_SYMBOL], x->t[SN_C_DROP_PENDING_FULL], x->t[SN_C_DROP_NOT_CONNECTED],
		x->t[SN_C_DROP_CLOSED], x->t[SN_C_DROP_TOO_BIG], x->t[SN_C_DROP_PUBLISH_ERROR], x->t[SN_C_DISCONNECTS],
		x->t[SN_C_RECONNECTS]);
}

/* ---- init, fini ---- */

static void
sn_free(struct sink_nats_ctx *x)
{
	rte_ring_free(x->acks);
	if (x->sh != NULL) {
		free(x->sh->url);
		free(x->sh);
	}
	rte_free(x->tries);
}

int
sink_nats_init(struct lcp_stage *st, const void *conf, void **ctx)
{
	const struct sink_nats_conf *c = conf;
	int socket = lcp_stage_socket(st);
	struct sink_nats_ctx *x = *ctx;
	char err[256];

	x->st = st;
	x->c = c;
	if (sn_tpl_compile(&x->tpl, "subject", c->subject, c->venue, true, err, sizeof(err)) != 0 ||
	    (c->fallback_subject[0] != '\0' &&
	     sn_tpl_compile(&x->fb, "fallback_subject", c->fallback_subject, c->venue, false, err, sizeof(err)) != 0) ||
	    sn_paths_compile(&x->ps, c, x->slot, err, sizeof(err)) != 0) {
		lcp_log(st, LCP_LOG_ERR, "%s", err);
		return -EINVAL;
	}
	x->has_fb = c->fallback_subject[0] != '\0';
	x->venue_len = strlen(c->venue);
	memcpy(x->venue, c->venue, x->venue_len + 1);
	x->block_tsc = (uint64_t)c->block_us * rte_get_tsc_hz() / 1000000;
	x->sh = calloc(1, sizeof(*x->sh));
	if (x->sh == NULL || (x->sh->url = strdup(c->url)) == NULL) {
		lcp_log(st, LCP_LOG_ERR, "cannot allocate the callback state");
		free(x->sh);
		return -ENOMEM;
	}
	x->sh->st = st;
	x->sh->max_reconnect = c->max_reconnect;
	x->sh->reconnect_wait_ms = c->reconnect_wait_ms;
	x->sh->reconnect_buf = c->reconnect_buf_bytes;
	if (c->jetstream) {
		char rname[RTE_RING_NAMESIZE];
		uint32_t cap = rte_align32pow2(2 * c->max_pending);

		snprintf(rname, sizeof(rname), "sn_%.16s_%" PRIxPTR, lcp_stage_name(st), ((uintptr_t)x >> 6) & 0xffffff);
		x->sh->acks = rte_ring_create_elem(rname, sizeof(struct sn_ack), c->max_pending + 1, socket,
						   RING_F_SC_DEQ | RING_F_EXACT_SZ);
		x->tries = rte_zmalloc_socket("sink_nats_tries", sizeof(*x->tries) * cap, RTE_CACHE_LINE_SIZE, socket);
		x->tries_mask = cap - 1;
		x->acks = x->sh->acks;
		if (x->sh->acks == NULL || x->tries == NULL) {
			lcp_log(st, LCP_LOG_ERR, "cannot allocate the ack ring and table for max_pending %" PRIu32 " on socket %d",
				c->max_pending, socket);
			sn_free(x);
			return -ENOMEM;
		}
	}
	return 0;
}

void
sink_nats_fini(struct lcp_stage *st, void *ctx)
{
	struct sink_nats_ctx *x = ctx;

	RTE_SET_USED(st);
	sn_teardown(x); /* stop() did not run: a failed start somewhere */
	sn_free(x);
}
