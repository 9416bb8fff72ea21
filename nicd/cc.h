/* nicd/cc.h — congestion control of a QP group (seed, The congestion
 * window; How the window responds to each SACK; Loss reactions; Base RTT;
 * docs/protocol.md §5): the window, the bytes in flight against it, and
 * NSCC's state.
 *
 * cc.c and the inline functions below are the only code that changes a
 * struct nic_cc: the sending side counts bytes into and out of flight
 * through nic_cc_enter_flight/nic_cc_leave_flight, the receiving of SACKs,
 * NACKs and timeouts calls the hooks, and the transmit scheduler asks
 * nic_cc_window_open.  Everyone else only reads cwnd and inflight. */
#ifndef NICD_CC_H
#define NICD_CC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/invariant.h"
#include "core/time.h"

struct nic;
struct nic_group;

struct nic_cc {
	uint64_t cwnd;
	uint64_t inflight; /* nominal bytes, from fetch issue (seed) */

	/* NSCC (docs/protocol.md §5) */
	ps_t base_rtt;		 /* min RTT sample, from ConfigBaseRTT */
	double avg_delay;	 /* ps: EWMA of sample - base_rtt */
	double inc_bytes;	 /* bytes x bytes, fulfilled as inc_bytes / cwnd */
	uint64_t adjust_bytes;	 /* acknowledged since the last adjustment */
	uint64_t achieved_bytes; /* acknowledged in this quick-adapt period */
	uint64_t fi_count;	 /* acknowledged while the delay stayed ~ 0 */
	ps_t last_adjust;	 /* last η (the adjustment period) */
	ps_t last_decrease;	 /* last multiplicative decrease */
	ps_t qa_end;		 /* end of this quick-adapt period */
	bool fast_increasing;	 /* fast increase runs until the delay rises */
	bool decreased;		 /* last_decrease is set */
	bool qa_started;	 /* quick-adapt periods run (first feedback) */
	bool qa_trigger;	 /* a trim NACK came in this period */
	/* CongestionControl is NSCC, copied at the group's start: a SACK
	 * asks it on the line it reads next, not the attributes' first. */
	bool nscc;
};

/* §5's parameters from the attributes, computed once per NIC
 * (nic_cc_setup).  The unit is MSS + 60 whatever RTTTimestampMode is
 * (seed: "the unit of the window's floor and of MaxCongestionWindow stays
 * MSS + 60 bytes").  What a SACK compares in doubles is kept as one, not
 * converted at each: an unsigned 64-bit integer's conversion is four
 * instructions (issue 16, callgrind at 8 hosts: 7 instructions a packet
 * fewer). */
struct nic_cc_params {
	double fi;	     /* bytes: inc_bytes += fi x acked */
	double fi_scale;     /* cwnd += fi_scale x acked */
	double eta;	     /* bytes, once per base_rtt */
	double alpha;	     /* bytes per ps: inc_bytes += α x acked x (target - delay) */
	double target;	     /* ps: TargetQueueDelay */
	double adjust_bytes; /* NSCC_ADJUST_UNITS units (fulfil_adjustment) */
	double min_cwnd, max_cwnd;
};

void nic_cc_setup(struct nic *nic);

/* A new group's window and state (§5). */
void nic_cc_init(struct nic *nic, struct nic_group *g);

/* The hooks: a SACK acknowledged `acked` bytes (rtt 0: no sample; ecn: the
 * packet was CE-marked), a SACK gap declared `nominal` bytes lost, a
 * timeout, a trim NACK (seed, Loss reactions). */
void nic_cc_on_sack(struct nic *nic, struct nic_group *g, uint64_t acked, ps_t rtt, bool ecn,
		    ps_t now);
void nic_cc_on_loss(struct nic *nic, struct nic_group *g, uint32_t nominal, ps_t now);
void nic_cc_on_timeout(struct nic *nic, struct nic_group *g, uint32_t nominal, ps_t now);
void nic_cc_on_trim_nack(struct nic *nic, struct nic_group *g, ps_t rtt, ps_t now);

/* Seed, The congestion window: a packet counts in flight from its fetch's
 * issue (a retransmission from its scheduling, §12 rule 2) until it is
 * acknowledged or presumed lost. */
static inline void nic_cc_enter_flight(struct nic_cc *cc, uint32_t nominal)
{
	cc->inflight += nominal;
}

static inline void nic_cc_leave_flight(struct nic_cc *cc, uint32_t nominal)
{
	SUB_COUNT(cc->inflight, nominal);
}

/* Whether the window has room for one more packet (inflight may exceed
 * cwnd: the window shrank under it). */
static inline bool nic_cc_window_open(const struct nic_cc *cc)
{
	return cc->cwnd > cc->inflight;
}

/* The window's own invariants: NULL, or what is broken, written in why. */
const char *nic_cc_check(const struct nic *nic, const struct nic_cc *cc, char *why, size_t len);

#endif
