/* SPDX-License-Identifier: BSD-3-Clause
 * h_tap.h — the context of the h_tap test plugin (h_tap.c), which the plugin
 * test harness (plugin_harness.c) reads back through the stage's ctx. One h_tap
 * stage stands at each port of the stage under test: on an input port it is
 * the producer the harness emits from, on an output port it is the consumer
 * that keeps what arrives, in order, until the harness takes it.
 */
#ifndef H_TAP_H
#define H_TAP_H

#include <stdint.h>

/* ports of h_tap: the index is the port number */
enum {
	H_TAP_PKT,	  /* in: pkt objects to keep */
	H_TAP_STREAM,	  /* in: stream objects to keep */
	H_TAP_MSG,	  /* in: msg objects to keep */
	H_TAP_PKT_OUT,	  /* out: pkt objects the harness feeds */
	H_TAP_STREAM_OUT, /* out: stream objects the harness feeds */
	H_TAP_MSG_OUT,	  /* out: msg objects the harness feeds */
};

struct h_tap_ctx {
	void **objs; /* what arrived, in arrival order */
	unsigned n, cap;
	unsigned unit;	/* enum lcp_unit of what arrived (one input is linked) */
	unsigned calls; /* process() calls: the bursts it was handed */
};

#endif
