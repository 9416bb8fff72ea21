/* nicd/cc.c — congestion control of a QP group: MRC's NSCC (docs/protocol.md
 * §5; seed, The congestion window, How the window responds to each SACK,
 * Loss reactions, Base RTT).
 *
 * The engine calls these hooks on each SACK, SACK-gap loss, timeout and
 * trim NACK; the scheduler asks the window (nic_cc_window_open).
 * CongestionControl None keeps cwnd at MaxCongestionWindow and ignores
 * every hook.
 *
 * Where §5 leaves a detail open, the choice is UEC's NSCC as its reference
 * simulator runs it (htsim, uec.cpp: updateCwndOnAck_NSCC, fast_increase,
 * fulfill_adjustment, quick_adapt); each such place says so.  Every change
 * of cwnd goes through cwnd_set, which keeps it in [Min, Max], records it
 * in mrc-cc.csv with its cause, and offers a grown window to the
 * transmit scheduler. */
#include "core/config.h"
#include "nic_impl.h"

#define NSCC_REF_BDP	     150000.0	      /* bytes: 100 Gbps x 12 µs (§5) */
#define NSCC_REF_RTT	     (12 * PS_PER_US) /* scaling_b = target / 12 µs */
#define NSCC_GAMMA	     0.8	      /* γ */
#define NSCC_MAX_MD_JUMP     0.5	      /* max_md_jump */
#define NSCC_DELAY_WEIGHT    0.0125	      /* avg_delay EWMA weight */
#define NSCC_QA_GATE	     3		      /* qa_gate */
#define NSCC_ADJUST_UNITS    8		      /* fulfil every 8 units acknowledged */
#define NSCC_NEAR_ZERO_DELAY PS_PER_US	      /* "≈ 0": below 1 µs, as UEC */

/* §5's parameters, from the attributes, once per NIC. */
/* A count of bytes or picoseconds as a double: each is below 2^63 (a window
 * is at most 1 GiB, config.c), where the signed conversion gives the
 * unsigned one's double in two instructions, not four (issue 16,
 * callgrind at 8 hosts: 5 instructions a packet fewer). */
static inline double cc_double(uint64_t v)
{
	return (double)(int64_t)v;
}

void nic_cc_setup(struct nic *nic)
{
	const struct nic_attrs *a = &nic->a;
	struct nic_cc_params *p = &nic->ccp;

	double unit = config_nic_unit(a);
	double sa = (double)config_nic_bdp(a) / NSCC_REF_BDP;
	double sb = (double)a->target_queue_delay / NSCC_REF_RTT;

	p->target = (double)a->target_queue_delay;
	p->fi = 5 * unit * sa;
	p->fi_scale = 0.25 * sa;
	p->eta = 0.15 * unit * sa;
	p->alpha = 4 * unit * sa * sb / (double)a->target_queue_delay;
	p->adjust_bytes = NSCC_ADJUST_UNITS * unit;
	p->min_cwnd = (double)a->min_cwnd;
	p->max_cwnd = (double)a->max_cwnd;
}

/* Set cwnd to `want` for `cause`.  The decreases floor themselves at Min
 * as §5 writes each of them; an increase that would pass a bound (§5:
 * "clamp to [MinCongestionWindow, MaxCongestionWindow]") stops at it and
 * is recorded as a clamp.  So no record ever shows cwnd outside the
 * bounds, and cwnd is never 0 (Min is at least 1 byte). */
static __attribute__((noinline)) void cwnd_change(struct nic *nic, struct nic_group *g, double want,
						  const char *cause, ps_t now)
{
	uint64_t lo = nic->a.min_cwnd, hi = nic->a.max_cwnd, v;
	bool grew;

	if (want < (double)lo) {
		v = lo;
		cause = "clamp";
	} else if (want > (double)hi) {
		v = hi;
		cause = "clamp";
	} else {
		v = (uint64_t)want;
	}
	if (v == g->cc.cwnd)
		return;
	grew = v > g->cc.cwnd;
	g->cc.cwnd = v;
	nic_cwnd_seen(nic, g, cause, now);
	if (grew)
		nic_sched_update(nic, g);
}

/* Inline, the case of a window held at MaxCongestionWindow that an
 * increase would pass: it stays, and nothing is recorded.  That was 6,569
 * of 7,657 calls at 8 hosts, each some 20 instructions (issue 16,
 * callgrind).  The rest, cwnd_change, decides as before. */
static inline void cwnd_set(struct nic *nic, struct nic_group *g, double want, const char *cause,
			    ps_t now)
{
	if (!(want < nic->ccp.min_cwnd) && want > nic->ccp.max_cwnd &&
	    g->cc.cwnd == nic->a.max_cwnd)
		return;
	cwnd_change(nic, g, want, cause, now);
}

/* §5: a new group starts at InitialCongestionWindow with base_rtt =
 * ConfigBaseRTT; its adjustment period starts now.  The quick-adapt period
 * starts with the group's first SACK or trim NACK, as UEC's does, so that
 * the round trip before any feedback is not counted as a slow period. */
void nic_cc_init(struct nic *nic, struct nic_group *g)
{
	ps_t now = events_now(nic->ev);

	g->cc.cwnd = nic->a.cc == CC_NONE ? nic->a.max_cwnd : nic->a.initial_cwnd;
	g->cc.base_rtt = nic->a.config_base_rtt;
	g->cc.nscc = nic->a.cc == CC_NSCC;
	g->cc.avg_delay = 0;
	g->cc.inc_bytes = 0;
	g->cc.adjust_bytes = 0;
	g->cc.achieved_bytes = 0;
	g->cc.fi_count = 0;
	g->cc.fast_increasing = false;
	g->cc.last_adjust = now;
	g->cc.last_decrease = 0;
	g->cc.decreased = false;
	g->cc.qa_end = 0;
	g->cc.qa_started = false;
	g->cc.qa_trigger = false;
	nic_cwnd_seen(nic, g, "new_group", now);
}

/* §5: base_rtt = min(base_rtt, sample); delay = sample - base_rtt;
 * avg_delay is its EWMA (weight 0.0125).  A SACK without a sample (0)
 * counts at the average delay and leaves the average alone, as UEC does
 * for an acknowledgement without a valid timestamp. */
static double take_sample(struct nic_group *g, ps_t rtt)
{
	double delay;

	if (!rtt)
		return g->cc.avg_delay;
	if (rtt < g->cc.base_rtt)
		g->cc.base_rtt = rtt;
	delay = cc_double(rtt - g->cc.base_rtt);
	g->cc.avg_delay = NSCC_DELAY_WEIGHT * delay + (1 - NSCC_DELAY_WEIGHT) * g->cc.avg_delay;
	return delay;
}

/* §5 quick adapt, "at most once per base_rtt + target".  Periods of
 * base_rtt + target follow one another from the group's first feedback;
 * achieved_bytes counts the bytes acknowledged in the current one.  A trim
 * NACK asks for quick adapt; the request is judged on the period it came
 * in, when that period ends (at the first SACK or trim NACK after it, as in
 * UEC's quick_adapt; a NACK that ends a period belongs to the next): if
 * fewer than MaxCongestionWindow >> qa_gate bytes were acknowledged in it
 * (with QuickAdaptGate; without, whatever it acknowledged, as htsim_uec
 * runs by default), cwnd = max(achieved_bytes, Min).  achieved_bytes counts what SACKs report
 * (the received-bytes deltas), as UEC counts newly received bytes.  Unlike
 * UEC the request does not outlive its period, so a trim never cuts the
 * window of a later, quiet period (such as a message's tail).  Returns true
 * when it ran; like UEC, the pending increase is then dropped and that SACK
 * runs no other rule. */
static __attribute__((noinline)) bool qa_period_end(struct nic *nic, struct nic_group *g, bool trim,
						    ps_t now)
{
	bool ran = false;

	if (g->cc.qa_started && g->cc.qa_trigger &&
	    (!nic->a.qa_gate || g->cc.achieved_bytes < nic->a.max_cwnd >> NSCC_QA_GATE)) {
		uint64_t w =
		    g->cc.achieved_bytes > nic->a.min_cwnd ? g->cc.achieved_bytes : nic->a.min_cwnd;
		cwnd_set(nic, g, (double)w, "quick_adapt", now);
		g->cc.inc_bytes = 0;
		g->cc.adjust_bytes = 0;
		ran = true;
	}
	g->cc.qa_trigger = trim;
	g->cc.qa_started = true;
	g->cc.achieved_bytes = 0;
	g->cc.qa_end = now + g->cc.base_rtt + nic->a.target_queue_delay;
	return ran;
}

/* Inline, the test of a period still running: every SACK but one a period
 * (108 of 8,184 at 8 hosts), where the period's end, out of line, decides.
 * Said, as GCC took the whole out of line when a change elsewhere in a
 * frame's receipt made it bigger (callgrind, 8 hosts: 37 instructions a
 * packet more). */
static inline __attribute__((always_inline)) bool quick_adapt(struct nic *nic, struct nic_group *g,
							      bool trim, ps_t now)
{
	if (g->cc.qa_started && now <= g->cc.qa_end) {
		g->cc.qa_trigger |= trim;
		return false;
	}
	return qa_period_end(nic, g, trim, now);
}

/* §5, no mark and delay < target: fast increase when the delay has stayed
 * ≈ 0 (under 1 µs, UEC's threshold) over a whole window of acknowledged
 * bytes, and on every such SACK after that until the delay rises; else
 * proportional increase.  UEC's fast_increase and proportional_increase. */
static void low_delay_increase(struct nic *nic, struct nic_group *g, const struct nic_cc_params *p,
			       uint64_t acked, double delay, ps_t now)
{
	if (delay < NSCC_NEAR_ZERO_DELAY) {
		g->cc.fi_count += acked;
		if (g->cc.fast_increasing || g->cc.fi_count >= g->cc.cwnd) {
			g->cc.fast_increasing = true;
			cwnd_set(nic, g, cc_double(g->cc.cwnd) + p->fi_scale * cc_double(acked),
				 "fast_increase", now);
			return;
		}
	} else {
		g->cc.fi_count = 0;
	}
	g->cc.fast_increasing = false;
	g->cc.inc_bytes += p->alpha * cc_double(acked) * (p->target - delay);
}

/* §5, mark and delay >= target: cwnd x= max(1 - γ (avg_delay - target) /
 * avg_delay, max_md_jump), at most once per base_rtt.  The factor is below
 * 1 only while avg_delay > target; like UEC, there is no decrease
 * otherwise (the formula would grow the window). */
static void multiplicative_decrease(struct nic *nic, struct nic_group *g,
				    const struct nic_cc_params *p, ps_t now)
{
	double avg = g->cc.avg_delay, f, want;

	g->cc.fi_count = 0;
	g->cc.fast_increasing = false;
	if (avg <= p->target || (g->cc.decreased && now - g->cc.last_decrease <= g->cc.base_rtt))
		return;
	f = 1 - NSCC_GAMMA * (avg - p->target) / avg;
	if (f < NSCC_MAX_MD_JUMP)
		f = NSCC_MAX_MD_JUMP;
	want = (double)g->cc.cwnd * f;
	cwnd_set(nic, g, want < (double)nic->a.min_cwnd ? (double)nic->a.min_cwnd : want,
		 "multiplicative_decrease", now);
	g->cc.last_decrease = now;
	g->cc.decreased = true;
}

/* §5: fulfil the adjustment every 8 units of acknowledged bytes or once per
 * base_rtt: cwnd += inc_bytes / cwnd, then η once per base_rtt (UEC's
 * fulfill_adjustment: more than 8 units, or more than base_rtt since the
 * last η; η when at least base_rtt has passed). */
static void fulfil_adjustment(struct nic *nic, struct nic_group *g, const struct nic_cc_params *p,
			      ps_t now)
{
	ps_t since = now > g->cc.last_adjust ? now - g->cc.last_adjust : 0;

	if (cc_double(g->cc.adjust_bytes) <= p->adjust_bytes && since <= g->cc.base_rtt)
		return;
	cwnd_set(nic, g, cc_double(g->cc.cwnd) + g->cc.inc_bytes / cc_double(g->cc.cwnd), "adjust",
		 now);
	if (since >= g->cc.base_rtt) {
		cwnd_set(nic, g, cc_double(g->cc.cwnd) + p->eta, "eta", now);
		g->cc.last_adjust = now;
	}
	g->cc.inc_bytes = 0;
	g->cc.adjust_bytes = 0;
}

/* §5, on each SACK (a cumulative ACK runs none of this): `acked` is the
 * received-bytes delta (x256), `rtt` the sample (0 = none), `ecn` the
 * SACK's M = skip-once (the packet arrived CE-marked).  The products
 * fi x acked and α x acked x (target - delay) are in bytes x bytes, so
 * that inc_bytes / cwnd is in bytes: per window of acknowledged bytes,
 * fair increase adds fi and proportional increase α (target - delay)
 * (UEC's units). */
void nic_cc_on_sack(struct nic *nic, struct nic_group *g, uint64_t acked, ps_t rtt, bool ecn,
		    ps_t now)
{
	const struct nic_cc_params *p = &nic->ccp;
	double delay;

	if (!g->cc.nscc)
		return;
	delay = take_sample(g, rtt);
	if (quick_adapt(nic, g, false, now)) {
		g->cc.achieved_bytes += acked;
		return;
	}
	g->cc.achieved_bytes += acked;
	g->cc.adjust_bytes += acked;
	if (!ecn && delay >= p->target) {
		/* Fair increase.  The delay is no longer ≈ 0, so the window
		 * of low delay that fast increase needs starts over (UEC
		 * restarts it only on the next low-delay SACK). */
		g->cc.fi_count = 0;
		g->cc.fast_increasing = false;
		g->cc.inc_bytes += p->fi * cc_double(acked);
	} else if (!ecn) {
		low_delay_increase(nic, g, p, acked, delay, now);
	} else if (delay >= p->target) {
		multiplicative_decrease(nic, g, p, now);
	}
	/* mark and delay < target: nothing (the path is passed over once). */
	fulfil_adjustment(nic, g, p, now);
}

/* §5 loss reactions: a SACK-gap loss or a timeout takes the packet's
 * nominal size off cwnd, down to Min. */
static void loss(struct nic *nic, struct nic_group *g, uint32_t nominal, const char *cause,
		 ps_t now)
{
	uint64_t lo = nic->a.min_cwnd;

	if (nic->a.cc != CC_NSCC)
		return;
	cwnd_set(nic, g, g->cc.cwnd > lo + nominal ? (double)(g->cc.cwnd - nominal) : (double)lo,
		 cause, now);
}

void nic_cc_on_loss(struct nic *nic, struct nic_group *g, uint32_t nominal, ps_t now)
{
	loss(nic, g, nominal, "loss", now);
}

void nic_cc_on_timeout(struct nic *nic, struct nic_group *g, uint32_t nominal, ps_t now)
{
	loss(nic, g, nominal, "timeout", now);
}

/* §5: a TRIMMED or TRIMMED_LASTHOP NACK runs quick adapt.  Its RTT sample
 * (service time 0, seed: RTT measurement) lowers base_rtt like any other
 * (seed: congestion control uses the samples of SACKs and NACKs for its
 * base RTT); it does not feed avg_delay, which §5 takes from SACKs. */
void nic_cc_on_trim_nack(struct nic *nic, struct nic_group *g, ps_t rtt, ps_t now)
{
	if (nic->a.cc != CC_NSCC)
		return;
	if (rtt && rtt < g->cc.base_rtt)
		g->cc.base_rtt = rtt;
	quick_adapt(nic, g, true, now);
}

/* cwnd is never 0 (cwnd_set floors it at Min, at least 1 byte); base_rtt
 * only falls from ConfigBaseRTT, to the least sample; so every delay, and
 * their average, is at least 0. */
const char *nic_cc_check(const struct nic *nic, const struct nic_cc *cc, char *why, size_t len)
{
	if (!cc->cwnd)
		snprintf(why, len, "group cwnd 0");
	else if (cc->base_rtt > nic->a.config_base_rtt)
		snprintf(why, len, "group base_rtt %llu above ConfigBaseRTT %llu",
			 (unsigned long long)cc->base_rtt,
			 (unsigned long long)nic->a.config_base_rtt);
	else if (!(cc->avg_delay >= 0))
		snprintf(why, len, "group avg_delay %g below 0", cc->avg_delay);
	else
		return NULL;
	return why;
}
