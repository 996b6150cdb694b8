/* SPDX-License-Identifier: BSD-3-Clause
 * tcp_rate.c — delivery-rate samples of a SACK connection, as
 * draft-cheng-iccrg-delivery-rate-estimation describes and Linux's
 * tcp_rate.c does: each ACK that delivers data says how many bytes were
 * delivered over how long, measured from the most recently sent segment it
 * delivered. The basis of a model-based congestion control, and what
 * stk_tcp_rate() reports.
 *
 *   stk_rate_sent               a record goes out (tcp_sack.c): it takes the
 *                               connection's delivery state (inline, stk_priv.h)
 *   stk_rate_delivered          a record is delivered, cumulatively or by SACK
 *                               (inline, stk_priv.h)
 *   stk_rate_gen                the ACK's sample: the longer of the send and
 *                               the ACK phases, none if shorter than min RTT
 *   stk_rate_check_app_limited  the application queues data: if the pipe is
 *                               idle for want of it, samples until what is in
 *                               flight now is delivered say so
 *
 * The scoreboard holds a record per segment only for a SACK peer, so only a
 * SACK connection has samples. Bytes, not packets; times in ns of st->now. */
#include "stk_priv.h"

void
stk_rate_gen(struct stk_tcb *c, uint64_t now)
{
	struct stk_sb *b = &c->sb;
	struct stk_rate_sample *rs = &b->rs;
	uint64_t ack_ns;

	rs->acked = b->delivered;
	b->del_total += b->delivered;
	if (b->app_limited && b->del_total > b->app_limited)
		b->app_limited = 0; /* the idle spell's bubble is delivered */
	if (b->delivered)
		b->del_ns = now;
	rs->delivered = 0;
	if (!rs->has_prior)
		return;
	ack_ns = now - rs->prior_ns;
	if (ack_ns > rs->interval_ns)
		rs->interval_ns = ack_ns;
	/* shorter than a round trip: ACKs arrived compressed (a stretch ACK, a
	 * burst held by the path), which says nothing of the rate */
	if (rs->interval_ns == 0 || rs->interval_ns < b->min_rtt)
		return;
	rs->delivered = (uint32_t)(b->del_total - rs->prior_total);
	/* keep the last sample not app-limited, or an app-limited one that
	 * shows more than the one kept (it is a lower bound of the rate) */
	if (!rs->app_limited || b->rate_ns == 0 ||
	    (unsigned __int128)rs->delivered * b->rate_ns >=
		    (unsigned __int128)b->rate_bytes * rs->interval_ns) {
		b->rate_bytes = rs->delivered;
		b->rate_ns = rs->interval_ns;
		b->rate_app_limited = rs->app_limited;
	}
}

void
stk_rate_check_app_limited(struct stk_tcb *c)
{
	struct stk_sb *b = &c->sb;
	uint32_t pipe;

	/* less than a segment left to send, room in cwnd, no loss waiting for
	 * its retransmission: the application, not the path, is the limit */
	if (!c->sack_ok || c->snd_end - c->snd_max >= c->mss)
		return; /* a bulk sender: data waits */
	pipe = stk_sb_pipe(c);
	if (pipe < c->cwnd && b->lost <= b->retrans)
		b->app_limited = b->del_total + pipe ? b->del_total + pipe : 1;
}

bool
stk_tcp_rate(const struct stk_tcb *c, struct stk_tcp_rate *out)
{
	const struct stk_sb *b = &c->sb;

	memset(out, 0, sizeof(*out));
	out->min_rtt_ns = b->min_rtt;
	if (b->rate_ns == 0)
		return false;
	out->bytes_per_s = (uint64_t)((unsigned __int128)b->rate_bytes * 1000000000u / b->rate_ns);
	out->app_limited = b->rate_app_limited;
	out->delivered = b->del_total;
	return true;
}
