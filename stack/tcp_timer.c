/* SPDX-License-Identifier: BSD-3-Clause
 * tcp_timer.c — TCP timers, driven from the list of active connections.
 *
 * A control block is on st->active while any of its timers is armed; stk_poll
 * walks that list only (idle connections and empty hash buckets cost nothing).
 *
 *   stk_tcp_timer_set / clear   deadline of one timer; joins the active list
 *   stk_tcp_rexmt_arm           retransmission timer at the current RTO
 *   stk_tcp_rexmt_arm_data      that, or the tail loss probe timer (SACK peers)
 *   stk_tcp_rexmt_arm_probe     after a probe: the next probe, or the RTO
 *   stk_tcp_rtt_sample          RFC 6298 SRTT / RTTVAR / RTO
 *   stk_tcp_timers_run          expired timers:
 *     REXMT/RTO      SYN, SYN-ACK or data again, cwnd to one segment, RTO
 *                    doubled up to rto_max_ms: a SACK peer's scoreboard marks
 *                    all but SACKed data lost (tcp_sack.c), otherwise
 *                    go-back-N from snd_una; after syn_retries / max_retries:
 *                    TIMEOUT (+ RST)
 *     REXMT/TLP      tail loss probes (RFC 8985 7), then the RTO
 *     RACK           RACK's reordering window over: mark, recover, send
 *     PACE           the pacing schedule lets the next data segment go
 *     REXMT/PERSIST  zero-window probe, backed off; while the peer answers
 *                    it goes on (the memory it can pin is sndbuf) until
 *                    persist_timeout_ms (0: forever); max_retries probes in a
 *                    row unanswered: the peer is gone. Either: RST + TIMEOUT
 *                    (tcp_persist_timeouts)
 *     DELACK         the delayed ACK
 *     KEEP           keepalive probe; keepalive_probes unanswered: TIMEOUT
 *     2MSL           TIME_WAIT over (release), or FIN_WAIT_2 gave up (TIMEOUT)
 */
#include "stk_priv.h"

uint32_t
stk_tcp_ts_now(const struct stk *st, const struct stk_tcb *c)
{
	return (uint32_t)(st->now / STK_MS) + c->ts_off;
}

/* a connection's earliest deadline is d (not 0): the stack's earliest, and
 * the active list */
static void
note_deadline(struct stk *st, struct stk_tcb *c, uint64_t d)
{
	c->next_deadline = d;
	if (st->timer_min == 0 || d < st->timer_min)
		st->timer_min = d;
	if (!(c->flags & TF_ACTIVE)) {
		c->flags |= TF_ACTIVE;
		LIST_INSERT_HEAD(&st->active, c, alink);
	}
}

static void
recompute(struct stk *st, struct stk_tcb *c)
{
	uint64_t d = 0;

	for (unsigned t = 0; t < STK_T__N; t++)
		if (c->timer[t] != 0 && (d == 0 || c->timer[t] < d))
			d = c->timer[t];
	if (d != 0)
		note_deadline(st, c, d);
	else
		c->next_deadline = 0;
}

/* next_deadline is the earliest armed timer: a deadline that moves earlier,
 * or one that was not the earliest, needs no walk over the timers */
void
stk_tcp_timer_set(struct stk *st, struct stk_tcb *c, unsigned t, uint64_t after_ns)
{
	uint64_t old = c->timer[t], v = st->now + (after_ns ? after_ns : 1);

	c->timer[t] = v;
	if (old != 0 && old == c->next_deadline && v > old)
		recompute(st, c); /* the earliest moved later */
	else if (c->next_deadline == 0 || v < c->next_deadline)
		note_deadline(st, c, v);
	else
		note_deadline(st, c, c->next_deadline);
}

void
stk_tcp_timer_clear(struct stk *st, struct stk_tcb *c, unsigned t)
{
	uint64_t old = c->timer[t];

	c->timer[t] = 0;
	if (old != 0 && old == c->next_deadline)
		recompute(st, c); /* leaves the active list lazily, in timers_run */
}

void
stk_tcb_active_remove(struct stk *st, struct stk_tcb *c)
{
	if (!(c->flags & TF_ACTIVE))
		return;
	LIST_REMOVE(c, alink);
	c->flags &= ~TF_ACTIVE;
}

static uint64_t
backed_off(const struct stk *st, const struct stk_tcb *c)
{
	uint64_t r = c->rto_ns << (c->rexmt_shift < 16 ? c->rexmt_shift : 16);
	uint64_t mx = (uint64_t)st->cfg.rto_max_ms * STK_MS;

	return r > mx ? mx : r;
}

void
stk_tcp_rexmt_arm(struct stk *st, struct stk_tcb *c)
{
	c->rexmt_mode = STK_REXMT_RTO;
	stk_tcp_timer_set(st, c, STK_T_REXMT, backed_off(st, c));
}

/* RFC 8985 7.2: a tail loss probe at 2 SRTT (+ the peer's worst delayed ACK
 * when one segment is out, else + STK_PTO_SLACK), never after the RTO would
 * fire (tlp_timer_set); the RTO otherwise (no SACK, no RTT yet, after an RTO,
 * a probe already out). Unlike RFC 8985 and Linux, also in fast recovery, as
 * QUIC's PTO (RFC 9002 6.2): when the last ACK of a recovery is lost with only
 * a retransmission in flight, a probe 2 SRTT later repairs what an RTO
 * (200 ms) would.
 *
 * The slack: RFC 8985 adds nothing, Linux two jiffies (2 ms), its timer's
 * granularity. Ours is a clock in ns read every poll, and on a LAN path the
 * slack is the whole wait: where the peer answers a flight with one ACK (a
 * receiver's GRO merges the flight), every lost ACK stalls a small window for
 * a probe timeout (B15 in doc/benchmarks.md: SRTT 37 us, 80-160 such stalls
 * per 16 MiB at 1/30 loss each way; 250 us in place of 2 ms, with the two
 * changes below, took its 64 MiB send from 2.09 s to 0.47-0.48 s). A peer
 * that answers late (a busy host) gets more probes before the RTO instead
 * (stk_tcp_rexmt_arm_probe). */
#define STK_PTO_SLACK (250 * STK_MS / 1000)

static uint64_t
pto(const struct stk_tcb *c)
{
	uint64_t srtt = (uint64_t)c->srtt_us * 1000, p = 2 * srtt;

	if (c->sb.out <= c->mss) {
		uint64_t d = srtt + srtt / 2 + 200 * STK_MS; /* Linux: TCP_DELACK_MAX */

		p = p > d ? p : d;
	} else {
		p += STK_PTO_SLACK;
	}
	return p << c->sb.tlp_count; /* each probe in a row waits twice as long */
}

/* the probe timer at p, never after the RTO would fire */
static void
tlp_timer_set(struct stk *st, struct stk_tcb *c, uint64_t p, uint64_t rto)
{
	c->rexmt_mode = STK_REXMT_TLP;
	stk_tcp_timer_set(st, c, STK_T_REXMT, p < rto ? p : rto);
}

/* after a probe: a second one (RFC 8985 and Linux send one), its timeout
 * doubled and capped by the RTO; then more, at most STK_TLP_MAX in a row,
 * while the doubled timeout is still shorter than the RTO; then the RTO. With
 * the short slack above, a peer that is only slow to answer (B15 beside a busy
 * loop: 3-4 RTOs of 200 ms per 16 MiB with two probes, none with six) gets
 * probes of new data, which cost nothing if they were not needed, instead of
 * an RTO that takes cwnd to one segment. On a long path nothing changes: 2
 * SRTT doubled twice passes the RTO. */
void
stk_tcp_rexmt_arm_probe(struct stk *st, struct stk_tcb *c)
{
	uint64_t p = pto(c), rto = backed_off(st, c);

	if (c->sb.tlp_count < 2 || (c->sb.tlp_count < STK_TLP_MAX && p < rto))
		tlp_timer_set(st, c, p, rto);
	else
		stk_tcp_rexmt_arm(st, c);
}

void
stk_tcp_rexmt_arm_data(struct stk *st, struct stk_tcb *c)
{
	const struct stk_sb *b = &c->sb;

	if (c->sack_ok && c->srtt_us > 0 && b->out > 0 && c->rexmt_shift == 0 &&
	    !(b->sflags & SF_LOSS) && !stk_sb_probe_out(c) &&
	    (c->state == STK_TCP_ESTABLISHED || c->state == STK_TCP_CLOSE_WAIT ||
	     c->state == STK_TCP_FIN_WAIT_1 || c->state == STK_TCP_CLOSING ||
	     c->state == STK_TCP_LAST_ACK)) {
		tlp_timer_set(st, c, pto(c), backed_off(st, c));
		return;
	}
	stk_tcp_rexmt_arm(st, c);
}

void
stk_tcp_rtt_sample(struct stk *st, struct stk_tcb *c, uint64_t rtt_ns)
{
	int64_t r = (int64_t)(rtt_ns / 1000), rto;
	int64_t mn = (int64_t)st->cfg.rto_min_ms * 1000, mx = (int64_t)st->cfg.rto_max_ms * 1000;

	if (c->sb.min_rtt == 0 || rtt_ns < c->sb.min_rtt)
		c->sb.min_rtt = rtt_ns ? rtt_ns : 1;

	if (c->srtt_us == 0) {
		c->srtt_us = r > 0 ? r : 1;
		c->rttvar_us = r / 2;
	} else {
		int64_t d = c->srtt_us - r;

		if (d < 0)
			d = -d;
		c->rttvar_us = (3 * c->rttvar_us + d) / 4;
		c->srtt_us = (7 * c->srtt_us + r) / 8;
		if (c->srtt_us == 0)
			c->srtt_us = 1;
	}
	rto = c->srtt_us + (4 * c->rttvar_us > 1000 ? 4 * c->rttvar_us : 1000); /* G = 1 ms */
	if (rto < mn)
		rto = mn;
	if (rto > mx)
		rto = mx;
	c->rto_ns = (uint64_t)rto * 1000;
}

static void
on_rexmt(struct stk *st, struct stk_tcb *c)
{
	bool was_recovering = c->flags & TF_INRECOVERY;

	if (c->rexmt_mode == STK_REXMT_TLP) {
		if (c->snd_una != c->snd_max)
			stk_sb_tlp_fire(st, c);
		return;
	}
	if (c->rexmt_mode == STK_REXMT_PERSIST) {
		/* give up on a peer that stopped answering (max_retries probes in
		 * a row with nothing received: the peer is gone, as with RTOs), or
		 * whose window stayed shut longer than persist_timeout_ms */
		if (c->probe_sent != 0 && c->last_rx < c->probe_sent)
			c->probes_unanswered++;
		else
			c->probes_unanswered = 0;
		if (c->probes_unanswered >= st->cfg.max_retries ||
		    (st->cfg.persist_timeout_ms != 0 && c->zw_since != 0 &&
		     st->now - c->zw_since >= (uint64_t)st->cfg.persist_timeout_ms * STK_MS)) {
			STK_CTR(st, TCP_PERSIST_TIMEOUTS);
			stk_logf(st, STK_LOG_INFO,
				 "conn 0x%x: zero window for %llu ms, %u probes unanswered: giving up",
				 c->id, (unsigned long long)((st->now - c->zw_since) / STK_MS),
				 c->probes_unanswered);
			stk_tcp_send_ctl(st, c, STK_TCP_RST | STK_TCP_ACK, c->snd_nxt);
			stk_tcb_finish(st, c, STK_EV_TIMEOUT, ETIMEDOUT);
			return;
		}
		c->probe_sent = st->now;
		/* window probe: an old sequence number makes the peer ACK with
		 * its current window (RFC 9293 3.8.6.1) */
		STK_CTR(st, TCP_WINDOW_PROBES);
		c->stats.window_probes++;
		stk_tcp_xmit(st, c, c->snd_una - 1, 0, STK_TCP_ACK);
		if (c->rexmt_shift < 16)
			c->rexmt_shift++;
		if (c->snd_wnd == 0)
			stk_tcp_timer_set(st, c, STK_T_REXMT, backed_off(st, c));
		return;
	}
	if (c->snd_una == c->snd_max && c->state != STK_TCP_SYN_SENT && c->state != STK_TCP_SYN_RCVD) {
		/* nothing in flight: armed because a buffer was missing */
		stk_tcp_output(st, c);
		return;
	}
	STK_CTR(st, TCP_RTO_EXPIRED);
	c->stats.rto_expired++;
	if (c->state == STK_TCP_SYN_SENT || c->state == STK_TCP_SYN_RCVD) {
		if (c->rexmt_shift >= st->cfg.syn_retries) {
			stk_tcb_finish(st, c, STK_EV_TIMEOUT, ETIMEDOUT);
			return;
		}
	} else if (c->rexmt_shift >= st->cfg.max_retries) {
		stk_tcp_send_ctl(st, c, STK_TCP_RST | STK_TCP_ACK, c->snd_nxt);
		stk_tcb_finish(st, c, STK_EV_TIMEOUT, ETIMEDOUT);
		return;
	}
	c->rexmt_shift++;
	c->flags &= ~(TF_RTT_TIMING | TF_INRECOVERY); /* Karn; recovery over */
	c->dupacks = 0;
	if (c->state == STK_TCP_SYN_SENT || c->state == STK_TCP_SYN_RCVD) {
		STK_CTR(st, TCP_RETRANSMITS);
		c->stats.retransmits++;
		c->snd_nxt = c->iss;
		stk_tcp_output(st, c);
		return;
	}
	/* a SACK peer: what it has SACKed does not go again (RFC 6675 5.1) */
	if (c->sack_ok && c->sb.head != c->sb.tail)
		stk_sb_rto(st, c, was_recovering);
	/* RFC 5681 (4): ssthresh = max(FlightSize / 2, 2 SMSS), cwnd = 1 SMSS */
	stk_tcp_ssthresh_cut(c, c->snd_max - c->snd_una);
	c->cwnd = c->mss;
	c->recover = c->snd_max;
	if (c->cc->on_rto)
		c->cc->on_rto(st, c);
	if (!(c->sb.sflags & SF_LOSS))
		c->snd_nxt = c->snd_una; /* go-back-N */
	stk_tcp_output(st, c);
	if (c->timer[STK_T_REXMT] == 0 && c->snd_una != c->snd_max)
		stk_tcp_rexmt_arm(st, c);
}

static void
on_keep(struct stk *st, struct stk_tcb *c)
{
	uint64_t idle = st->now - c->last_rx, kt = (uint64_t)st->cfg.keepalive_ms * STK_MS;

	if (c->state != STK_TCP_ESTABLISHED && c->state != STK_TCP_CLOSE_WAIT)
		return;
	if (idle < kt) {
		c->keep_probes = 0;
		stk_tcp_timer_set(st, c, STK_T_KEEP, kt - idle);
		return;
	}
	if (c->keep_probes >= st->cfg.keepalive_probes) {
		stk_tcp_send_ctl(st, c, STK_TCP_RST | STK_TCP_ACK, c->snd_nxt);
		stk_tcb_finish(st, c, STK_EV_TIMEOUT, ETIMEDOUT);
		return;
	}
	c->keep_probes++;
	STK_CTR(st, TCP_KEEPALIVES);
	stk_tcp_xmit(st, c, c->snd_una - 1, 0, STK_TCP_ACK);
	stk_tcp_timer_set(st, c, STK_T_KEEP, (uint64_t)st->cfg.keepalive_intvl_ms * STK_MS);
}

static void
run_one(struct stk *st, struct stk_tcb *c)
{
	for (unsigned t = 0; t < STK_T__N && !(c->zflags & TZ_ZOMBIE); t++) {
		if (c->timer[t] == 0 || c->timer[t] > st->now)
			continue;
		c->timer[t] = 0;
		switch (t) {
		case STK_T_REXMT:
			on_rexmt(st, c);
			break;
		case STK_T_DELACK:
			STK_CTR(st, TCP_DELAYED_ACKS);
			stk_tcp_send_ack(st, c);
			break;
		case STK_T_KEEP:
			on_keep(st, c);
			break;
		case STK_T_RACK:
			stk_sb_rack_timer(st, c);
			break;
		case STK_T_PACE:
			stk_tcp_output(st, c);
			break;
		case STK_T_2MSL:
			if (c->state == STK_TCP_TIME_WAIT) {
				c->flags |= TF_DEAD;
				stk_tcb_release(st, c);
			} else if (c->state == STK_TCP_FIN_WAIT_2) {
				stk_tcb_finish(st, c, STK_EV_TIMEOUT, ETIMEDOUT);
			}
			break;
		}
	}
	if (!(c->zflags & TZ_ZOMBIE))
		recompute(st, c);
}

unsigned
stk_tcp_timers_run(struct stk *st)
{
	uint32_t due[64];
	unsigned n = 0, ran = 0;
	uint64_t next = 0;

	/* collect first: running a timer can release other connections */
	for (struct stk_tcb *c = LIST_FIRST(&st->active), *nx; c != NULL; c = nx) {
		nx = LIST_NEXT(c, alink);
		if (c->next_deadline == 0) {
			stk_tcb_active_remove(st, c); /* nothing armed */
			continue;
		}
		if (c->next_deadline <= st->now && n < 64)
			due[n++] = c->id;
		else if (next == 0 || c->next_deadline < next)
			next = c->next_deadline;
	}
	/* what runs below re-arms through recompute(), lowering this again */
	st->timer_min = n == 64 ? st->now : next;
	for (unsigned i = 0; i < n; i++) {
		unsigned s = (due[i] & 0xffff) - 1;
		struct stk_tcb *c = st->slots[s], *prev = st->cur;

		if (c == NULL || c->id != due[i])
			continue;
		st->cur = c;
		run_one(st, c);
		st->cur = prev;
		if (c->zflags & TZ_ZOMBIE)
			stk_tcb_release(st, c);
		ran++;
	}
	return ran;
}
