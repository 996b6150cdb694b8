/* SPDX-License-Identifier: BSD-3-Clause
 * stubs.h — the stage ops the test-only plugins (good.c, broken.c) point at.
 * Those plugins are only ever loaded and checked, never run in a pipeline:
 *   stub_init     no context, success
 *   stub_process  takes nothing from its objects
 *   stub_poll     produces nothing
 * Each including file keeps them referenced (its *_refs array), whatever its
 * variant uses.
 */
#ifndef LCP_TEST_STUBS_H
#define LCP_TEST_STUBS_H

#include <lcp/stage.h>

static int
stub_init(struct lcp_stage *st, const void *conf, void **ctx)
{
	(void)st, (void)conf;
	*ctx = NULL;
	return 0;
}

static void
stub_process(struct lcp_stage *st, void *ctx, unsigned port, void **objs, unsigned n)
{
	(void)st, (void)ctx, (void)port, (void)objs, (void)n;
}

static unsigned
stub_poll(struct lcp_stage *st, void *ctx)
{
	(void)st, (void)ctx;
	return 0;
}

#endif
