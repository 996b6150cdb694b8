/* SPDX-License-Identifier: BSD-3-Clause
 * tls_opts.h — the TLS options a wss client (ws) and a wss server (feedsim)
 * share, declared once: the version names, the four option rows, their check
 * and what they set in struct stk_tls_conf. A conf struct that takes them has
 *   int tls_min_version, tls_max_version;       indexes into lcp_tls_versions
 *   const char *tls_ciphers, *tls_ciphersuites;
 */
#ifndef LCP_TLS_OPTS_H
#define LCP_TLS_OPTS_H

#include <stdint.h>
#include <stdio.h>

#include <lcp/opt.h>
#include <stk/tls.h>

/* the choices of tls_min_version / tls_max_version, STK_TLS_V12 onwards */
static const char *const lcp_tls_versions[] = { "1.2", "1.3", NULL };

/* the option rows of conf struct C */
#define LCP_TLS_OPTS(C)                                                                            \
	LCP_OPT_ENUM(C, tls_min_version, "tls_min_version", "\"1.2\"", lcp_tls_versions, 0,        \
		     "wss: lowest TLS version"),                                                   \
	LCP_OPT_ENUM(C, tls_max_version, "tls_max_version", "\"1.3\"", lcp_tls_versions, 0,        \
		     "wss: highest TLS version"),                                                  \
	LCP_OPT_STRING(C, tls_ciphers, "tls_ciphers", "\"\"", 0, 1023, 0,                         \
		       "wss: TLS 1.2 cipher list (OpenSSL syntax; default OpenSSL's)"),            \
	LCP_OPT_STRING(C, tls_ciphersuites, "tls_ciphersuites", "\"\"", 0, 1023, 0,               \
		       "wss: TLS 1.3 cipher suites (OpenSSL syntax; default OpenSSL's)")

/* the version range: 0, or -1 with the reason in msg */
static inline int
lcp_tls_opts_check(int min_version, int max_version, char *msg, size_t msglen)
{
	if (min_version <= max_version)
		return 0;
	snprintf(msg, msglen, "tls_min_version %s is above tls_max_version %s", lcp_tls_versions[min_version],
		 lcp_tls_versions[max_version]);
	return -1;
}

/* the options into tc (the strings are borrowed) */
static inline void
lcp_tls_opts_apply(struct stk_tls_conf *tc, int min_version, int max_version, const char *ciphers,
		   const char *ciphersuites)
{
	tc->min_version = (uint16_t)(STK_TLS_V12 + min_version);
	tc->max_version = (uint16_t)(STK_TLS_V12 + max_version);
	tc->ciphers = ciphers;
	tc->ciphersuites = ciphersuites;
}

#endif
