/* SPDX-License-Identifier: BSD-3-Clause
 * lcp/log.h — logging with the stage in every line: "[plugin:stage] message". */
#ifndef LCP_LOG_H
#define LCP_LOG_H

#ifdef __cplusplus
extern "C" {
#endif

struct lcp_stage;

enum lcp_log_level {
	LCP_LOG_ERR = 1,
	LCP_LOG_WARNING = 2,
	LCP_LOG_NOTICE = 3,
	LCP_LOG_INFO = 4,
	LCP_LOG_DEBUG = 5,
};

/* st may be NULL for engine messages. Safe from any thread; not for per-packet use. */
void lcp_log(const struct lcp_stage *st, int level, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

#ifdef __cplusplus
}
#endif
#endif
