/* SPDX-License-Identifier: BSD-3-Clause
 * tcp_bbr.c — BBR congestion control (v1: Cardwell et al., "BBR:
 * Congestion-Based Congestion Control", ACM Queue 2016; the model, modes and
 * gains of Linux's tcp_bbr.c, with its ACK-aggregation allowance). A
 * connection models its path from the delivery-rate samples of tcp_rate.c:
 * the bottleneck bandwidth (the most delivered per second over the last 10
 * rounds) and the round-trip propagation delay (the least RTT over 10 s). It
 * sends at the bandwidth times a pacing gain, with at most the
 * bandwidth-delay product times a cwnd gain in flight; a loss alone is not
 * congestion. Needs SACK (the samples come from the scoreboard).
 *
 *   STARTUP    pacing and cwnd gain 2/ln 2 (2.885), until three rounds in a
 *              row bring less than a quarter more bandwidth
 *   DRAIN      pacing gain 1/2.885 until in flight is down to the BDP
 *   PROBE_BW   an 8-phase cycle of pacing gains 5/4, 3/4, 1 x 6, a phase a
 *              min RTT (5/4 ends when in flight reaches 5/4 BDP or a loss,
 *              3/4 when it is down to the BDP); cwnd gain 2
 *   PROBE_RTT  when the min RTT is 10 s old: 4 segments in flight for
 *              200 ms and a round, to measure it again
 *
 * In a recovery cwnd conserves packets for its first round (in flight plus
 * what each ACK delivers), then grows back towards the target; at its end,
 * or after an RTO's recovery, it returns to what it was before. Not built:
 * Linux's long-term bandwidth sampling for token-bucket policers, and BBR
 * v2/v3's reaction to loss and ECN. Units: bytes, bytes/s, ns; gains in
 * 1/256 (BBR_UNIT).
 *
 * Written here, not taken from a library: no library provides a congestion
 * control for a user-space TCP; the constants are Linux's. */
#include "stk_priv.h"

#define BBR_UNIT 256
#define BBR_HIGH_GAIN (BBR_UNIT * 2885 / 1000 + 1)
#define BBR_DRAIN_GAIN (BBR_UNIT * 1000 / 2885)
#define BBR_CWND_GAIN (BBR_UNIT * 2)
#define BBR_CYCLE_LEN 8
#define BBR_BW_RTTS (BBR_CYCLE_LEN + 2)	  /* the bandwidth filter's window, rounds */
#define BBR_MIN_RTT_WIN (10000 * STK_MS)  /* the min RTT filter's window */
#define BBR_PROBE_RTT_TIME (200 * STK_MS) /* in PROBE_RTT at least */
#define BBR_CWND_MIN_SEGS 4
#define BBR_FULL_BW_THRESH (BBR_UNIT * 5 / 4)
#define BBR_FULL_BW_CNT 3
#define BBR_EXTRA_ACKED_WIN_RTTS 5
#define BBR_EXTRA_ACKED_MAX (100 * STK_MS) /* the aggregation allowance at most */
#define BBR_ACK_EPOCH_RESET (1u << 30)	   /* bytes */
#define BBR_PACING_MARGIN 1		   /* percent below the model's rate */
#define BBR_NO_RTT UINT64_MAX

enum { BBR_STARTUP, BBR_DRAIN, BBR_PROBE_BW, BBR_PROBE_RTT };

static const uint16_t cycle_gain[BBR_CYCLE_LEN] = {
	BBR_UNIT * 5 / 4, BBR_UNIT * 3 / 4, BBR_UNIT, BBR_UNIT, BBR_UNIT, BBR_UNIT, BBR_UNIT, BBR_UNIT,
};

static inline struct stk_bbr *
bbr_of(struct stk_tcb *c)
{
	return &c->ccs.bbr;
}

/* the bandwidth filter: the most over a window of rounds, kept as three
 * samples (Kathleen Nichols' windowed max, as Linux's lib/minmax.c) */
static void
bw_reset(struct stk_bbr *b, uint32_t t, uint64_t v)
{
	for (int i = 0; i < 3; i++) {
		b->bw[i].t = t;
		b->bw[i].v = v;
	}
}

static void
bw_update(struct stk_bbr *b, uint32_t t, uint64_t v)
{
	const uint32_t win = BBR_BW_RTTS;
	uint32_t dt;

	if (v >= b->bw[0].v || t - b->bw[2].t > win) {
		bw_reset(b, t, v); /* a new maximum, or nothing left in the window */
		return;
	}
	if (v >= b->bw[1].v) {
		b->bw[1].t = b->bw[2].t = t;
		b->bw[1].v = b->bw[2].v = v;
	} else if (v >= b->bw[2].v) {
		b->bw[2].t = t;
		b->bw[2].v = v;
	}
	dt = t - b->bw[0].t;
	if (dt > win) {
		/* the best sample left the window: the second and third move up */
		b->bw[0] = b->bw[1];
		b->bw[1] = b->bw[2];
		b->bw[2].t = t;
		b->bw[2].v = v;
		if (t - b->bw[0].t > win) {
			b->bw[0] = b->bw[1];
			b->bw[1] = b->bw[2];
		}
	} else if (b->bw[1].t == b->bw[0].t && dt > win / 4) {
		b->bw[1].t = b->bw[2].t = t; /* a quarter of the window gone: a second choice */
		b->bw[1].v = b->bw[2].v = v;
	} else if (b->bw[2].t == b->bw[1].t && dt > win / 2) {
		b->bw[2].t = t; /* half of it: a third */
		b->bw[2].v = v;
	}
}

static inline uint64_t
max_bw(const struct stk_bbr *b)
{
	return b->bw[0].v;
}

static inline uint64_t
mul_div(uint64_t a, uint64_t b, uint64_t d)
{
	return (uint64_t)((unsigned __int128)a * b / d);
}

/* bytes per second at a gain, 1 % below the model (a queue cannot grow at 1.0) */
static uint64_t
pacing_rate_of(uint64_t bw, unsigned gain)
{
	return mul_div(bw, (uint64_t)gain * (100 - BBR_PACING_MARGIN), (uint64_t)BBR_UNIT * 100);
}

/* what may go at once, as Linux's TSO autosizing sizes an skb: about 1 ms at
 * the pacing rate, at most 64 KiB, at least two segments (one below
 * 1.2 Mbit/s) */
static uint32_t
send_quantum(const struct stk_tcb *c)
{
	uint64_t bytes = c->pacing_rate >> 10;
	uint32_t segs, least = c->pacing_rate < 150000 ? 1 : 2;

	if (bytes > 65536)
		bytes = 65536;
	segs = (uint32_t)(bytes / c->mss);
	if (segs < least)
		segs = least;
	return segs * c->mss;
}

static void
pace(struct stk_tcb *c, uint64_t rate)
{
	c->pacing_rate = rate; /* send_quantum() reads it */
	stk_pace_set(c, rate, send_quantum(c));
}

/* before an RTT sample: the initial window over the SRTT (or 1 ms), at the
 * high gain */
static void
pace_from_rtt(struct stk_tcb *c)
{
	struct stk_bbr *b = bbr_of(c);
	uint64_t rtt = STK_MS;

	if (c->srtt_us > 0) {
		rtt = (uint64_t)c->srtt_us * 1000;
		b->has_seen_rtt = true;
	}
	pace(c, pacing_rate_of(mul_div(c->cwnd, 1000000000, rtt), BBR_HIGH_GAIN));
}

static void
set_pacing_rate(struct stk_tcb *c, uint64_t bw, unsigned gain)
{
	struct stk_bbr *b = bbr_of(c);
	uint64_t rate = pacing_rate_of(bw, gain);

	if (!b->has_seen_rtt && c->srtt_us > 0)
		pace_from_rtt(c);
	/* in STARTUP only upwards: a low early sample must not slow it */
	if (rate != 0 && (b->full_bw_reached || rate > c->pacing_rate))
		pace(c, rate);
}

/* the bandwidth-delay product at a gain; before an RTT the initial window */
static uint32_t
bdp(struct stk_tcb *c, uint64_t bw, unsigned gain)
{
	struct stk_bbr *b = bbr_of(c);
	uint64_t w;

	if (b->min_rtt_ns == BBR_NO_RTT)
		return 10 * c->mss;
	w = mul_div(bw, b->min_rtt_ns, 1000000000);
	w = (w * gain + BBR_UNIT - 1) / BBR_UNIT;
	return w > (1u << 30) ? 1u << 30 : (uint32_t)w;
}

/* room for the bursts pacing sends in (three quanta), and in the 5/4 phase
 * two segments more so that in flight can reach its target */
static uint32_t
quantization_budget(struct stk_tcb *c, uint32_t cwnd)
{
	struct stk_bbr *b = bbr_of(c);

	cwnd += 3 * send_quantum(c);
	if (b->mode == BBR_PROBE_BW && b->cycle_idx == 0)
		cwnd += 2 * c->mss;
	return cwnd;
}

static uint32_t
inflight_target(struct stk_tcb *c, uint64_t bw, unsigned gain)
{
	return quantization_budget(c, bdp(c, bw, gain));
}

static void
save_cwnd(struct stk_tcb *c)
{
	struct stk_bbr *b = bbr_of(c);

	if (b->prev_ca_state < STK_CA_RECOVERY && b->mode != BBR_PROBE_RTT)
		b->prior_cwnd = c->cwnd;
	else if (c->cwnd > b->prior_cwnd)
		b->prior_cwnd = c->cwnd;
}

static void
advance_cycle_phase(struct stk_tcb *c)
{
	struct stk_bbr *b = bbr_of(c);

	b->cycle_idx = (uint8_t)((b->cycle_idx + 1) & (BBR_CYCLE_LEN - 1));
	b->cycle_stamp = c->sb.del_ns;
}

static void
reset_probe_bw_mode(struct stk *st, struct stk_tcb *c)
{
	struct stk_bbr *b = bbr_of(c);

	b->mode = BBR_PROBE_BW;
	/* start at a random phase, never the 3/4 one */
	b->cycle_idx = (uint8_t)(BBR_CYCLE_LEN - 1 - st->ops.random(st->ops.ctx) % (BBR_CYCLE_LEN - 1));
	advance_cycle_phase(c);
}

static void
reset_mode(struct stk *st, struct stk_tcb *c)
{
	struct stk_bbr *b = bbr_of(c);

	if (!b->full_bw_reached)
		b->mode = BBR_STARTUP;
	else
		reset_probe_bw_mode(st, c);
}

/* the round counter and the bandwidth filter */
static void
update_bw(struct stk_tcb *c, const struct stk_rate_sample *rs)
{
	struct stk_bbr *b = bbr_of(c);
	uint64_t bw;

	b->round_start = false;
	if (rs->delivered == 0)
		return; /* no valid sample */
	/* a round ends when a segment sent after its start is delivered */
	if (rs->prior_total >= b->next_rtt_delivered) {
		b->next_rtt_delivered = c->sb.del_total;
		b->rtt_cnt++;
		b->round_start = true;
		b->packet_conservation = false;
	}
	bw = mul_div(rs->delivered, 1000000000, rs->interval_ns);
	/* an app-limited sample is a lower bound: it counts only if above */
	if (!rs->app_limited || bw >= max_bw(b))
		bw_update(b, b->rtt_cnt, bw);
}

/* ACKs that come in bursts (a receiver's GRO, a stretch ACK, a link that
 * batches): how much more was delivered than the bandwidth explains, the
 * most of the last 5-10 rounds; cwnd keeps that much more in flight so that
 * the sender does not stall between bursts */
static void
update_ack_aggregation(struct stk_tcb *c, const struct stk_rate_sample *rs)
{
	struct stk_bbr *b = bbr_of(c);
	uint64_t expected, extra;

	if (rs->acked == 0 || rs->delivered == 0)
		return;
	if (b->round_start) {
		if (b->extra_acked_win_rtts < 0x1f)
			b->extra_acked_win_rtts++;
		if (b->extra_acked_win_rtts >= BBR_EXTRA_ACKED_WIN_RTTS) {
			b->extra_acked_win_rtts = 0;
			b->extra_acked_win_idx ^= 1;
			b->extra_acked[b->extra_acked_win_idx] = 0;
		}
	}
	expected = mul_div(max_bw(b), c->sb.del_ns - b->ack_epoch_stamp, 1000000000);
	/* ACKs slower than the model, or a very old epoch: a new epoch */
	if (b->ack_epoch_acked <= expected || (uint64_t)b->ack_epoch_acked + rs->acked >= BBR_ACK_EPOCH_RESET) {
		b->ack_epoch_acked = 0;
		b->ack_epoch_stamp = c->sb.del_ns;
		expected = 0;
	}
	b->ack_epoch_acked += rs->acked;
	extra = b->ack_epoch_acked - expected;
	if (extra > c->cwnd)
		extra = c->cwnd;
	if (extra > b->extra_acked[b->extra_acked_win_idx])
		b->extra_acked[b->extra_acked_win_idx] = (uint32_t)extra;
}

static bool
is_next_cycle_phase(struct stk_tcb *c, const struct stk_rate_sample *rs)
{
	struct stk_bbr *b = bbr_of(c);
	bool full_length = c->sb.del_ns - b->cycle_stamp > b->min_rtt_ns;

	if (b->pacing_gain == BBR_UNIT)
		return full_length;
	/* 5/4: until in flight reaches its target (or a loss says the
	 * bottleneck's queue is full); 3/4: until the queue 5/4 built is gone */
	if (b->pacing_gain > BBR_UNIT)
		return full_length &&
		       (rs->losses || rs->prior_in_flight >= inflight_target(c, max_bw(b), b->pacing_gain));
	return full_length || rs->prior_in_flight <= inflight_target(c, max_bw(b), BBR_UNIT);
}

static void
check_full_bw_reached(struct stk_tcb *c, const struct stk_rate_sample *rs)
{
	struct stk_bbr *b = bbr_of(c);

	if (b->full_bw_reached || !b->round_start || rs->app_limited)
		return;
	if (max_bw(b) >= mul_div(b->full_bw, BBR_FULL_BW_THRESH, BBR_UNIT)) {
		b->full_bw = max_bw(b); /* still growing */
		b->full_bw_cnt = 0;
		return;
	}
	b->full_bw_reached = ++b->full_bw_cnt >= BBR_FULL_BW_CNT;
}

static void
check_drain(struct stk *st, struct stk_tcb *c)
{
	struct stk_bbr *b = bbr_of(c);

	if (b->mode == BBR_STARTUP && b->full_bw_reached) {
		b->mode = BBR_DRAIN; /* empty the queue STARTUP built */
		c->ssthresh = inflight_target(c, max_bw(b), BBR_UNIT);
	}
	if (b->mode == BBR_DRAIN && stk_sb_pipe(c) <= inflight_target(c, max_bw(b), BBR_UNIT))
		reset_probe_bw_mode(st, c);
}

static void
check_probe_rtt_done(struct stk *st, struct stk_tcb *c)
{
	struct stk_bbr *b = bbr_of(c);

	if (b->probe_rtt_done == 0 || st->now <= b->probe_rtt_done)
		return;
	b->min_rtt_stamp = st->now; /* the next PROBE_RTT in 10 s */
	if (c->cwnd < b->prior_cwnd)
		c->cwnd = b->prior_cwnd;
	reset_mode(st, c);
}

static void
update_min_rtt(struct stk *st, struct stk_tcb *c, const struct stk_rate_sample *rs)
{
	struct stk_bbr *b = bbr_of(c);
	bool expired = st->now > b->min_rtt_stamp + BBR_MIN_RTT_WIN;

	if (rs->rtt_ns != 0 && (rs->rtt_ns < b->min_rtt_ns || expired)) {
		b->min_rtt_ns = rs->rtt_ns;
		b->min_rtt_stamp = st->now;
	}
	/* an old min RTT (even one this ACK renewed): dip to measure it */
	if (expired && !b->idle_restart && b->mode != BBR_PROBE_RTT) {
		b->mode = BBR_PROBE_RTT;
		save_cwnd(c);
		b->probe_rtt_done = 0;
	}
	if (b->mode == BBR_PROBE_RTT) {
		struct stk_sb *sb = &c->sb;
		uint32_t pipe = stk_sb_pipe(c);

		/* its low rates say nothing of the bandwidth */
		sb->app_limited = sb->del_total + pipe ? sb->del_total + pipe : 1;
		if (b->probe_rtt_done == 0 && pipe <= BBR_CWND_MIN_SEGS * c->mss) {
			b->probe_rtt_done = st->now + BBR_PROBE_RTT_TIME;
			b->probe_rtt_round_done = false;
			b->next_rtt_delivered = sb->del_total;
		} else if (b->probe_rtt_done != 0) {
			if (b->round_start)
				b->probe_rtt_round_done = true;
			if (b->probe_rtt_round_done)
				check_probe_rtt_done(st, c);
		}
	}
	if (rs->delivered > 0)
		b->idle_restart = false;
}

static void
update_gains(struct stk_tcb *c)
{
	struct stk_bbr *b = bbr_of(c);

	switch (b->mode) {
	case BBR_STARTUP:
		b->pacing_gain = BBR_HIGH_GAIN;
		b->cwnd_gain = BBR_HIGH_GAIN;
		break;
	case BBR_DRAIN:
		b->pacing_gain = BBR_DRAIN_GAIN;
		b->cwnd_gain = BBR_HIGH_GAIN;
		break;
	case BBR_PROBE_BW:
		b->pacing_gain = cycle_gain[b->cycle_idx];
		b->cwnd_gain = BBR_CWND_GAIN;
		break;
	default: /* PROBE_RTT */
		b->pacing_gain = BBR_UNIT;
		b->cwnd_gain = BBR_UNIT;
		break;
	}
}

/* the first round of a recovery conserves packets; its end, and the end of
 * an RTO's recovery, give back the cwnd from before. True: cwnd is decided */
static bool
recover_or_restore(struct stk_tcb *c, const struct stk_rate_sample *rs, uint32_t *cwnd)
{
	struct stk_bbr *b = bbr_of(c);
	int state = stk_cc_state(c), prev = b->prev_ca_state;
	uint32_t w = c->cwnd, pipe = stk_sb_pipe(c);

	/* an ACK of P bytes releases at most 2P: the losses come off first */
	if (rs->losses > 0)
		w = w > rs->losses + c->mss ? w - rs->losses : c->mss;
	if (state == STK_CA_RECOVERY && prev != STK_CA_RECOVERY) {
		b->packet_conservation = true;
		b->next_rtt_delivered = c->sb.del_total; /* a round from now */
		w = pipe + rs->acked;
	} else if (prev >= STK_CA_RECOVERY && state < STK_CA_RECOVERY) {
		if (w < b->prior_cwnd)
			w = b->prior_cwnd;
		b->packet_conservation = false;
	}
	b->prev_ca_state = (uint8_t)state;
	if (b->packet_conservation) {
		*cwnd = w > pipe + rs->acked ? w : pipe + rs->acked;
		return true;
	}
	*cwnd = w;
	return false;
}

static void
set_cwnd(struct stk_tcb *c, const struct stk_rate_sample *rs, uint64_t bw, unsigned gain)
{
	struct stk_bbr *b = bbr_of(c);
	uint32_t cwnd = c->cwnd, target, acked = rs->acked;

	if (acked == 0)
		goto done;
	if (recover_or_restore(c, rs, &cwnd))
		goto done;
	target = bdp(c, bw, gain);
	if (b->full_bw_reached) {
		uint64_t aggr = b->extra_acked[0] > b->extra_acked[1] ? b->extra_acked[0] : b->extra_acked[1];
		uint64_t most = mul_div(bw, BBR_EXTRA_ACKED_MAX, 1000000000);

		target += (uint32_t)(aggr < most ? aggr : most);
	}
	target = quantization_budget(c, target);
	/* towards the target at the pace of the ACKs; below it before the
	 * pipe was first full, as slow start */
	if (b->full_bw_reached)
		cwnd = cwnd + acked < target ? cwnd + acked : target;
	else if (cwnd < target || c->sb.del_total < 10 * c->mss)
		cwnd += acked;
	if (cwnd < BBR_CWND_MIN_SEGS * c->mss)
		cwnd = BBR_CWND_MIN_SEGS * c->mss;
done:
	c->cwnd = cwnd > (1u << 30) ? 1u << 30 : cwnd;
	if (b->mode == BBR_PROBE_RTT && c->cwnd > BBR_CWND_MIN_SEGS * c->mss)
		c->cwnd = BBR_CWND_MIN_SEGS * c->mss;
}

/* every ACK: the model, then the pacing rate and cwnd from it */
static void
bbr_cong_control(struct stk *st, struct stk_tcb *c)
{
	struct stk_bbr *b = bbr_of(c);
	const struct stk_rate_sample *rs = &c->sb.rs;

	update_bw(c, rs);
	update_ack_aggregation(c, rs);
	if (b->mode == BBR_PROBE_BW && is_next_cycle_phase(c, rs))
		advance_cycle_phase(c);
	check_full_bw_reached(c, rs);
	check_drain(st, c);
	update_min_rtt(st, c, rs);
	update_gains(c);
	set_pacing_rate(c, max_bw(b), b->pacing_gain);
	set_cwnd(c, rs, max_bw(b), b->cwnd_gain);
}

static void
bbr_init(struct stk *st, struct stk_tcb *c)
{
	struct stk_bbr *b = bbr_of(c);

	memset(b, 0, sizeof(*b));
	c->ssthresh = 0x7fffffff;
	b->next_rtt_delivered = c->sb.del_total;
	b->prev_ca_state = STK_CA_OPEN;
	b->min_rtt_ns = c->sb.min_rtt ? c->sb.min_rtt : BBR_NO_RTT; /* the handshake's */
	b->min_rtt_stamp = st->now;
	bw_reset(b, 0, 0);
	b->mode = BBR_STARTUP;
	b->ack_epoch_stamp = st->now;
	update_gains(c);
	pace_from_rtt(c);
}

/* a congestion event: ssthresh stays (BBR does not cut on loss); the cwnd
 * to give back once it is over */
static uint32_t
bbr_ssthresh(struct stk_tcb *c, uint32_t flight)
{
	(void)flight;
	save_cwnd(c);
	return c->ssthresh;
}

static void
bbr_on_rto(struct stk *st, struct stk_tcb *c)
{
	struct stk_bbr *b = bbr_of(c);

	(void)st;
	b->prev_ca_state = STK_CA_LOSS;
	b->full_bw = 0;
	b->round_start = true;
}

/* a reduction undone: look for the pipe's fill again, cwnd as it is */
static uint32_t
bbr_undo_cwnd(struct stk_tcb *c)
{
	struct stk_bbr *b = bbr_of(c);

	b->full_bw = 0;
	b->full_bw_cnt = 0;
	return c->cwnd;
}

/* sending again after the application left the pipe empty: pace at the
 * model's rate, not a probing gain, and restart the ACK epoch */
static void
bbr_tx_start(struct stk *st, struct stk_tcb *c)
{
	struct stk_bbr *b = bbr_of(c);

	if (c->sb.app_limited == 0)
		return;
	b->idle_restart = true;
	b->ack_epoch_stamp = st->now;
	b->ack_epoch_acked = 0;
	if (b->mode == BBR_PROBE_BW)
		set_pacing_rate(c, max_bw(b), BBR_UNIT);
	else if (b->mode == BBR_PROBE_RTT)
		check_probe_rtt_done(st, c);
}

const struct stk_cc_ops stk_cc_bbr = {
	.name = "bbr",
	.init = bbr_init,
	.ssthresh = bbr_ssthresh,
	.cong_control = bbr_cong_control,
	.on_rto = bbr_on_rto,
	.undo_cwnd = bbr_undo_cwnd,
	.tx_start = bbr_tx_start,
};
