/* SPDX-License-Identifier: BSD-3-Clause
 * log.c — "[plugin:stage] message" lines on stderr; level from LCP_LOG_LEVEL
 * (1 err .. 5 debug, default 4 info). */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <pthread.h>
#include <unistd.h>

#include <lcp/log.h>
#include <lcp/stage.h>

#include "lcp_priv.h"

static const char *const lcp_log_names[] = { "", "error", "warning", "notice", "info", "debug" };

/* the live stats line is on the terminal, without its newline (stats.c) */
int lcp_live_line;

/* what a log line starts with: on a terminal that shows the live line, the
 * cursor back to its start and the line cleared, so the log line replaces it
 * instead of being glued onto its end (the next tick draws it again below) */
static const char *
line_start(void)
{
	static int tty = -1;

	if (!__atomic_load_n(&lcp_live_line, __ATOMIC_RELAXED))
		return "";
	if (tty < 0)
		tty = isatty(2);
	return tty ? "\r\033[K" : "";
}

int
lcp_log_level(void)
{
	const char *s = getenv("LCP_LOG_LEVEL");
	int l = s ? atoi(s) : LCP_LOG_INFO;

	return l < LCP_LOG_ERR ? LCP_LOG_ERR : l > LCP_LOG_DEBUG ? LCP_LOG_DEBUG : l;
}

void
lcp_log(const struct lcp_stage *st, int level, const char *fmt, ...)
{
	char msg[1024];
	va_list ap;

	if (level > lcp_log_level())
		return;
	if (level < LCP_LOG_ERR)
		level = LCP_LOG_ERR;
	if (level > LCP_LOG_DEBUG)
		level = LCP_LOG_DEBUG;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	/* one fprintf per line so lines from several lcores do not interleave */
	if (st != NULL)
		fprintf(stderr, "%s[%s:%s] %s%s%s\n", line_start(), lcp_stage_plugin(st), lcp_stage_name(st),
			level <= LCP_LOG_WARNING ? lcp_log_names[level] : "",
			level <= LCP_LOG_WARNING ? ": " : "", msg);
	else
		fprintf(stderr, "%s[lcpipe] %s%s%s\n", line_start(),
			level <= LCP_LOG_WARNING ? lcp_log_names[level] : "",
			level <= LCP_LOG_WARNING ? ": " : "", msg);
}
