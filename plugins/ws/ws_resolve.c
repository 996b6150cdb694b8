/* SPDX-License-Identifier: BSD-3-Clause
 * ws_resolve.c — host names of ws:// and wss:// URLs, resolved off the worker
 * lcores: getaddrinfo() blocks (files, DNS, timeouts), so it runs on a control
 * thread of the stage (rte_ctrl_thread_create: the control cores, never a
 * worker lcore), started at start() when some URL has a name.
 *
 * The worker asks by bumping a connection's rq_gen and posting the semaphore
 * (only when it (re)connects); the thread answers into rs_err / rs_addr /
 * rs_n and then publishes rs_gen = the generation it answered (release). The
 * worker reads the answer only when rs_gen == rq_gen (acquire), and asks again
 * only after it is done with the addresses, so the two never touch the same
 * answer at once. A late answer to an older question is ignored.
 *
 *   ws_resolver_start / _stop   the thread
 *   ws_resolver_ask             a new question for c
 *   ws_resolver_answered        poll: is c's answer in?
 */
#include <errno.h>
#include <netdb.h>
#include <stdio.h>
#include <string.h>
#include <arpa/inet.h>
#include <netinet/in.h>

#include <rte_lcore.h>

#include "ws.h"

static void
ws_resolve_one(struct ws_conn *c, uint32_t rq)
{
	struct addrinfo hints = { .ai_family = AF_INET, .ai_socktype = SOCK_STREAM }, *res = NULL, *r;
	unsigned n = 0;
	int e = getaddrinfo(c->host, NULL, &hints, &res);

	for (r = e == 0 ? res : NULL; r != NULL && n < WS_MAX_ADDRS; r = r->ai_next) {
		uint32_t a = ((const struct sockaddr_in *)r->ai_addr)->sin_addr.s_addr;
		bool dup = false;

		for (unsigned i = 0; i < n; i++)
			dup |= c->rs_addr[i] == a;
		if (!dup)
			c->rs_addr[n++] = a;
	}
	if (res != NULL)
		freeaddrinfo(res);
	c->rs_err = e == 0 && n == 0 ? EAI_NONAME : e;
	c->rs_n = (uint8_t)n;
	__atomic_store_n(&c->rs_gen, rq, __ATOMIC_RELEASE);
}

static void *
ws_resolver_main(void *arg)
{
	struct ws_ctx *x = arg;

	for (;;) {
		while (sem_wait(&x->resolver_sem) != 0 && errno == EINTR)
			;
		if (x->resolver_quit)
			break;
		for (unsigned i = 0; i < x->n_conns; i++) {
			struct ws_conn *c = &x->conns[i];
			uint32_t rq = __atomic_load_n(&c->rq_gen, __ATOMIC_ACQUIRE);

			if (c->named && rq != __atomic_load_n(&c->rs_gen, __ATOMIC_RELAXED))
				ws_resolve_one(c, rq);
		}
	}
	return NULL;
}

int
ws_resolver_start(struct ws_ctx *x)
{
	bool any = false;
	char name[16];
	int rc;

	for (unsigned i = 0; i < x->n_conns; i++)
		any |= x->conns[i].named;
	if (!any)
		return 0;
	if (sem_init(&x->resolver_sem, 0, 0) != 0)
		return -errno;
	snprintf(name, sizeof(name), "ws-resolve");
	rc = rte_ctrl_thread_create(&x->resolver, name, NULL, ws_resolver_main, x);
	if (rc != 0) {
		sem_destroy(&x->resolver_sem);
		lcp_log(x->st, LCP_LOG_ERR, "cannot start the name resolver thread: %s", strerror(rc));
		return -rc;
	}
	x->resolver_up = true;
	return 0;
}

void
ws_resolver_ask(struct ws_ctx *x, struct ws_conn *c)
{
	__atomic_store_n(&c->rq_gen, c->rq_gen + 1, __ATOMIC_RELEASE);
	sem_post(&x->resolver_sem);
}

bool
ws_resolver_answered(const struct ws_conn *c)
{
	return __atomic_load_n(&c->rs_gen, __ATOMIC_ACQUIRE) == c->rq_gen;
}

const char *
ws_resolve_strerror(int e)
{
	return e == EAI_SYSTEM ? strerror(errno) : gai_strerror(e);
}

void
ws_resolver_stop(struct ws_ctx *x)
{
	if (!x->resolver_up)
		return;
	x->resolver_quit = true;
	sem_post(&x->resolver_sem);
	pthread_join(x->resolver, NULL);
	sem_destroy(&x->resolver_sem);
	x->resolver_up = false;
}
