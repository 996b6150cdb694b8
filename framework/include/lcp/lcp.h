/* SPDX-License-Identifier: BSD-3-Clause
 * lcp/lcp.h — everything a plugin needs, in one include. */
#ifndef LCP_LCP_H
#define LCP_LCP_H
#include <lcp/plugin.h>
#include <lcp/opt.h>
#include <lcp/log.h>
#include <lcp/stage.h>
#include <lcp/stage_worker.h>
#include <lcp/counters.h>
#include <lcp/mbuf.h>
#include <lcp/msg.h>
#include <lcp/stream.h>
#include <lcp/pool.h>
#include <lcp/batch.h>
#endif
