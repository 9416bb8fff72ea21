/* nicd/recovery.c — the sender's side of acknowledgements: retiring
 * packets, loss detection from SACK gaps, NACKs, retransmission timers and
 * their budget, completion and the completion re-request (seed: Cumulative
 * acknowledgements; Selective acknowledgements; Loss detection from SACK
 * gaps; NACKs; Retransmission timer and retry budget; Completion). */
#include "nic_impl.h"

/* Why an acknowledgement finds no sending QP to apply to, counted. */
static __attribute__((noinline, cold)) struct nic_qp_send *
send_qp_refused(struct nic *nic, const struct pkt *p, const struct nic_qp_send *sq)
{
	if (!sq && p->dqpn >= FIRST_QPN && p->dqpn < nic->next_qpn) {
		/* QP numbers are not reused: this one closed.  Normally the SACK
		 * that follows a message's final cumulative ACK (§12 rule 3). */
		nic->c.rx_for_closed_qp++;
	} else if (!sq || sq->peer_ip != p->src_ip) { /* no sending QP of ours talks to it */
		nic->c.rx_drop_ack_unknown_qp++;
	} else {
		nic->c.rx_drop_qp_error++; /* sq->error */
	}
	return NULL;
}

/* The sending QP an acknowledgement is for.  Inline, the found case alone:
 * two a data packet (its SACK and its cumulative ACK), and the call cost
 * about as much as the look-up (issue 16, callgrind). */
static inline struct nic_qp_send *send_qp(struct nic *nic, const struct pkt *p)
{
	struct nic_qp_send *sq = hmap_get(&nic->send_qps, p->dqpn);

	if (__builtin_expect(sq && sq->peer_ip == p->src_ip && !sq->error, 1))
		return sq;
	return send_qp_refused(nic, p, sq);
}

/* A PSN from the peer as a segment index near the cumulative PSN. */
static int64_t psn_to_idx(const struct nic_qp_send *sq, uint32_t psn)
{
	uint64_t cack = sq->snd_una - 1;
	return (int64_t)cack + wire_psn_diff(psn, (uint32_t)(cack & WIRE_PSN_MASK));
}

static bool idx_sent(const struct nic_qp_send *sq, int64_t idx)
{
	return idx >= (int64_t)sq->snd_una && idx < (int64_t)sq->next_sent;
}

/* The bits of a SACK's bitmap (bit i: PSN index base + i) that name
 * segments sent (idx_sent), all at once rather than bit by bit. */
static uint64_t sent_bits(const struct nic_qp_send *sq, int64_t base, uint64_t bits)
{
	int64_t lo = (int64_t)sq->snd_una - base, hi = (int64_t)sq->next_sent - base;

	if (hi <= 0 || lo >= 64)
		return 0;
	if (lo > 0)
		bits &= ~0ULL << lo;
	if (hi < 64)
		bits &= (1ULL << hi) - 1;
	return bits;
}

/* The segments among base .. base + 63 (bit i: base + i) that the last
 * SACK listed: retired, so a retire() on them would do nothing. */
static uint64_t seen_bits(const struct nic_qp_send *sq, int64_t base)
{
	uint64_t d = (uint64_t)base - sq->sack_seen_base;

	if (d < 64)
		return sq->sack_seen >> d;
	if (-d < 64)
		return sq->sack_seen << -d;
	return 0;
}

/* A retired packet leaves flight and its timer stops (§12 rule 2).  Its
 * counts no longer change: whether it can give an RTT sample is kept with
 * its serialization start (rtt_sample). */
static __attribute__((noinline)) void retire_seg(struct nic *nic, struct nic_qp_send *sq,
						 uint64_t idx, struct nic_seg *s)
{
	nic_timer_stop(nic, s);
	nic_seg_leave_flight(nic, sq, s, idx);
	if (s->state == SEG_RTX_QUEUED)
		NIC_DEC(sq->rtx_pending);
	if (s->tx_count != 1u + s->nacks)
		(void)nic_seg_set_tx_start(sq, idx, NIC_TX_AMBIGUOUS); /* fits in any entry */
	s->state = SEG_RETIRED;
	NIC_DEC(sq->outstanding);
}

/* Inline, the test alone: a SACK's bitmap names mostly segments an
 * earlier one retired (issue 16: a call each cost more than the test).
 * Both are said (always_inline, noinline): with apply_cumulative inline,
 * GCC took retire out of line or retire_seg in, 10 and 37 instructions a
 * packet more than this (callgrind, 8 hosts). */
static inline __attribute__((always_inline)) void retire(struct nic *nic, struct nic_qp_send *sq,
							 uint64_t idx)
{
	struct nic_seg *s = nic_seg(sq, idx);

	if (s->state != SEG_RETIRED && s->state != SEG_FREE)
		retire_seg(nic, sq, idx, s);
}

/* Only the cumulative PSN moves the PSN window (seed, Segmentation).
 * Inline in its two callers, twice a data packet (issue 16).  Whether it
 * moved. */
static inline __attribute__((always_inline)) bool
apply_cumulative(struct nic *nic, struct nic_qp_send *sq, uint32_t psn)
{
	int64_t cack = psn_to_idx(sq, psn);

	if (cack < (int64_t)sq->snd_una || cack >= (int64_t)sq->next_sent)
		return false;
	for (uint64_t i = sq->snd_una; i <= (uint64_t)cack; i++)
		retire(nic, sq, i);
	sq->snd_una = (uint64_t)cack + 1;
	nic_seg_release(sq);
	if (sq->recovery && (uint64_t)cack >= sq->recovery_end)
		sq->recovery = false;
	return true;
}

/* An acknowledgement is consistent with what this QP sent when the PSNs it
 * names lie within what was sent: the cumulative PSN from "nothing yet"
 * (-1) to the highest PSN sent, and the PSN that drew it, or that a NACK
 * names, among those sent.  The QP carries one message, so the QP number
 * the acknowledgement is addressed to names the message.  Anything else
 * is forged or corrupt, and is dropped and counted (PROTOCOL.md §2). */
static bool ack_consistent(struct nic *nic, const struct nic_qp_send *sq, int64_t cack,
			   int64_t psn_idx)
{
	/* -1 <= cack < next_sent and 0 <= psn_idx < next_sent, a compare
	 * each: below its floor each wraps past next_sent, which is at most
	 * 2^63 (a segment index).  Twice a data packet (callgrind, 8 hosts:
	 * with nic_seg_kept's single compare, 7 instructions a packet fewer). */
	if ((uint64_t)(cack + 1) <= sq->next_sent && (uint64_t)psn_idx < sq->next_sent)
		return true;
	nic->c.rx_drop_ack_inconsistent++;
	return false;
}

/* PROTOCOL.md §1, Connection fields: the responder's QP number comes from a
 * SACK or NACK that came from the peer's address (send_qp checks it; the
 * UDP source port is an entropy value and proves nothing) and that is
 * consistent with what was sent.  A later consistent acknowledgement that
 * names another number replaces it, counted: a third party that forged the
 * first one cannot wedge the QP, because the genuine receiver's next SACK
 * puts the right number back. */
static void learn_remote(struct nic *nic, struct nic_qp_send *sq, uint32_t responder_qpn)
{
	responder_qpn &= WIRE_QPN_MASK;
	if (sq->remote_known && sq->remote_qpn == responder_qpn)
		return;
	if (sq->remote_known)
		nic->c.remote_qpn_replaced++;
	sq->remote_qpn = responder_qpn;
	sq->remote_known = true;
}

static void msg_complete(struct nic *nic, struct nic_qp_send *sq, ps_t now)
{
	struct nic_msg_info m = nic_send_info(nic, sq);

	nic->c.msgs_completed++;
	NIC_DEC(nic->open_msgs);
	nic_send_event(nic, sq, "MSG_COMPLETE", now);
	nic_send_close(nic, sq, now);
	nic->host.completion(nic->host.ctx, MSG_COMPLETE, &m, now);
}

/* Seed: only a cumulative ACK completes a message; it gives no RTT sample
 * and does not run the congestion window's routines.
 *
 * Inline in the NIC's receipt of a frame (across files, by the link-time
 * optimizer), as nic_rx_sack and nic_send_cack are (GCC inlines
 * nic_rx_data itself): with one of them said alone GCC took another out
 * of line; together they spare some 18 instructions a data packet (issue
 * 16, callgrind at 8 hosts; nic_send_sack as well cost 42 more: deliver
 * went out of line). */
inline __attribute__((always_inline)) void nic_rx_ack(struct nic *nic, struct pkt *p, ps_t now)
{
	struct nic_qp_send *sq = send_qp(nic, p);
	int64_t cack;

	nic->c.rx_ack++;
	nic_monitor(nic, now, false, p, p->dqpn, 0, 0);
	if (!sq)
		return;
	cack = psn_to_idx(sq, p->psn);
	if (!ack_consistent(nic, sq, cack, cack < 0 ? 0 : cack))
		return;
	apply_cumulative(nic, sq, p->psn);
	if (cack + 1 > (int64_t)sq->cack_acked && cack < (int64_t)sq->next_sent)
		sq->cack_acked = (uint64_t)cack + 1;
	if (sq->cack_acked >= sq->npkts)
		msg_complete(nic, sq, now);
	else
		nic_qp_update(nic, sq);
}

/* An RTT sample (seed, RTT measurement; docs/protocol.md §4): LocalDatabase
 * takes it only where it is not ambiguous: from a packet whose earlier
 * transmissions, if any, all drew NACKs (a trimmed or out-of-window
 * transmission delivered nothing, seed: Receiving a packet, so only the
 * last one can have drawn the SACK); WireTimestamp from the echo.  Without
 * the NACKed case a flow whose packets are mostly trimmed and resent took
 * no sample at all: its delay froze and NSCC never decreased its window
 * (issue 9, the 8 -> 1 incast against htsim). */
static inline ps_t rtt_sample(struct nic *nic, struct nic_qp_send *sq, int64_t idx, bool has_echo,
			      uint16_t echo, uint16_t service, ps_t now)
{
	const ps_t unit = 128 * PS_PER_NS;
	ps_t svc = service * unit, rtt;

	if (sq->wire_ts) {
		if (!has_echo)
			return 0;
		rtt = (ps_t)(((uint16_t)(now / unit) - echo) & 0xFFFF) * unit;
	} else {
		ps_t sent;
		if (idx < 0 || (uint64_t)idx >= sq->next_sent || !nic_seg_kept(sq, (uint64_t)idx))
			return 0;
		if ((uint64_t)idx >= sq->snd_una) {
			const struct nic_seg *s = nic_seg(sq, (uint64_t)idx);
			if (s->tx_count != 1u + s->nacks)
				return 0;
		}
		if ((sent = nic_seg_tx_start(sq, (uint64_t)idx)) == NIC_TX_AMBIGUOUS)
			return 0;
		rtt = now - sent;
	}
	if (rtt <= svc)
		return 0;
	nic->c.rtt_samples++;
	return rtt - svc;
}

/* Seed, Loss detection from SACK gaps: every packet still outstanding more
 * than SACKLossMinRetxPkts PSNs below the highest PSN the bitmap lists is
 * presumed lost, once; the QP then looks for no further gaps until its
 * cumulative PSN reaches the highest PSN sent when recovery began. */
static void sack_gaps(struct nic *nic, struct nic_qp_send *sq, uint64_t highest, ps_t now)
{
	uint64_t k = sq->sack_loss_min_retx;
	bool found = false;

	if (sq->recovery || highest < sq->snd_una + k + 1)
		return;
	for (uint64_t i = sq->snd_una; i + k < highest; i++) {
		struct nic_seg *s = nic_seg(sq, i);
		if (s->state != SEG_OUTSTANDING || s->gap_queued)
			continue;
		s->gap_queued = true;
		found = true;
		nic_timer_stop(nic, s);
		nic_seg_leave_flight(nic, sq, s, i);
		nic_cc_on_loss(nic, sq->group, nic_seg_nominal(nic, nic_seg_len(nic, sq, i)), now);
		s->sched_k = 1;
		nic->c.retx_sack_gap++;
		nic_rtx_queue(nic, sq, i, RTX_SACK_GAP, now);
	}
	if (found) {
		sq->recovery = true;
		sq->recovery_end = sq->next_sent - 1;
	}
}

/* docs/protocol.md §6: M = 01 (the packet was CE-marked) passes its value over
 * once; M = 10 marks it assumed bad. */
static void sack_feedback(struct nic *nic, const struct pkt *p, ps_t now)
{
	const struct wire_seth *s = &p->u.sack.seth;
	struct nic_dest *d;

	/* most SACKs carry no feedback: no look-up then (issue 16) */
	if (s->m == WIRE_M_NONE || !(d = nic_dest_find(nic, p->src_ip)))
		return;
	if (s->m == WIRE_M_SKIP_ONCE)
		nic_spray_skip(nic, d, s->entropy_echo);
	else if (s->m == WIRE_M_ALWAYS_SKIP)
		nic_spray_assumed_bad(nic, d, s->entropy_echo, now);
}

/* Seed, Selective acknowledgements: the sender retires the cumulative PSN
 * and each PSN the bitmap lists, takes an RTT sample, feeds congestion
 * control with the received bytes, and looks for gaps. */
inline __attribute__((always_inline)) void nic_rx_sack(struct nic *nic, struct pkt *p, ps_t now)
{
	const struct wire_seth *s = &p->u.sack.seth;
	const struct wire_ccstate *cc = &p->u.sack.cc;
	struct nic_qp_send *sq;
	uint64_t highest = 0, acked = 0, bits;
	int64_t cack, base, drawn;
	bool moved;
	ps_t rtt;

	nic->c.rx_sack++;
	if (s->pr) { /* a probe's answer: path feedback (docs/protocol.md §6) */
		nic_monitor(nic, now, false, p, p->dqpn, s->responder_qpn, 0);
		nic_spray_probe_answer(nic, p, now);
		return;
	}
	sack_feedback(nic, p, now);
	if (!(sq = send_qp(nic, p))) {
		nic_monitor(nic, now, false, p, p->dqpn, s->responder_qpn, 0);
		return;
	}
	cack = psn_to_idx(sq, s->cack_psn);
	drawn = cack + s->ack_psn_offset;
	if (!ack_consistent(nic, sq, cack, drawn)) {
		nic_monitor(nic, now, false, p, sq->qpn, s->responder_qpn, 0);
		return;
	}
	learn_remote(nic, sq, s->responder_qpn);
	rtt = rtt_sample(nic, sq, drawn, sq->wire_ts, cc->ts_echo, cc->service_time, now);
	nic_monitor(nic, now, false, p, sq->qpn, sq->remote_qpn, rtt);
	moved = apply_cumulative(nic, sq, s->cack_psn);
	base = cack + s->sack_offset;
	bits = s->bitmap ? sent_bits(sq, base, s->bitmap) : 0; /* most are empty, in order */
	if (bits) { /* the highest PSN listed; those the last SACK retired are skipped */
		highest = (uint64_t)(base + 63 - __builtin_clzll(bits));
		for (uint64_t b = bits & ~seen_bits(sq, base); b; b &= b - 1)
			retire(nic, sq, (uint64_t)(base + __builtin_ctzll(b)));
		sq->sack_seen_base = (uint64_t)base;
		sq->sack_seen = bits;
	}
	/* §12 rule 6: received bytes are a per-QP running count; a delta of
	 * 2^23 units or more is an older SACK, reordered. */
	if (sq->rcv_units_seen) {
		uint32_t d = (cc->rcv_bytes - sq->rcv_units) & 0xFFFFFF;
		if (d < (1u << 23)) {
			acked = (uint64_t)d * 256;
			sq->rcv_units = cc->rcv_bytes;
		}
	} else {
		acked = (uint64_t)cc->rcv_bytes * 256;
		sq->rcv_units = cc->rcv_bytes;
		sq->rcv_units_seen = true;
	}
	nic_cc_on_sack(nic, sq->group, acked, rtt, s->m == WIRE_M_SKIP_ONCE, now);
	if (s->bitmap)
		sack_gaps(nic, sq, highest, now);
	/* What else a SACK changes makes the QP no readier: its window only
	 * shrinks or, when it grows, cwnd_change updates the group itself.
	 * The usual SACK, in order behind its packet's cumulative ACK, then
	 * costs a test (issue 16, callgrind at 8 hosts: 10 instructions a
	 * packet fewer). */
	if (moved || s->bitmap)
		nic_qp_update(nic, sq);
}

/* The retry budget: LinearRetryCount + ExponentialRetryCount, except that
 * ExponentialRetryCount 25 means no budget (seed). */
static bool budget_spent(const struct nic_attrs *a, unsigned used)
{
	return a->exponential_retry_count < 25 &&
	       used >= a->linear_retry_count + a->exponential_retry_count;
}

static bool nack_code_known(uint8_t code)
{
	return code == WIRE_NACK_TRIMMED || code == WIRE_NACK_TRIMMED_LASTHOP ||
	       code == WIRE_NACK_PSN_OOR_WINDOW;
}

/* Seed, NACKs: the named packet is retransmitted ahead of new data; a NACK
 * for a packet already acknowledged changes nothing.  NACK retransmissions
 * have their own budget, and restart the timer schedule. */
void nic_rx_nack(struct nic *nic, struct pkt *p, ps_t now)
{
	const struct wire_neth *n = &p->u.neth;
	struct nic_qp_send *sq;
	struct nic_seg *s;
	int64_t idx;
	ps_t rtt;

	nic->c.rx_nack++;
	if (!nack_code_known(n->code)) {
		nic->c.rx_nack_unknown++;
		nic_monitor(nic, now, false, p, p->dqpn, n->responder_qpn, 0);
		return;
	}
	/* Seed: even a NACK for a packet already acknowledged marks the value
	 * of a packet trimmed on the way to be passed over once. */
	if (n->code == WIRE_NACK_TRIMMED) {
		struct nic_dest *d = nic_dest_find(nic, p->src_ip);
		if (d)
			nic_spray_skip(nic, d, n->entropy_echo);
	}
	if (!(sq = send_qp(nic, p))) {
		nic_monitor(nic, now, false, p, p->dqpn, n->responder_qpn, 0);
		return;
	}
	idx = psn_to_idx(sq, n->nack_psn);
	if (!ack_consistent(nic, sq, (int64_t)sq->snd_una - 1, idx)) {
		nic_monitor(nic, now, false, p, sq->qpn, n->responder_qpn, 0);
		return;
	}
	learn_remote(nic, sq, n->responder_qpn);
	rtt = rtt_sample(nic, sq, idx, sq->wire_ts, n->ts_echo, 0, now);
	nic_monitor(nic, now, false, p, sq->qpn, sq->remote_qpn, rtt);
	if (!idx_sent(sq, idx))
		return;
	s = nic_seg(sq, (uint64_t)idx);
	if (s->state != SEG_OUTSTANDING)
		return;
	if (budget_spent(&nic->a, s->nacks)) {
		nic_qp_error(nic, sq, now);
		return;
	}
	s->nacks++;
	nic_timer_stop(nic, s);
	nic_seg_leave_flight(nic, sq, s, (uint64_t)idx);
	if (n->code != WIRE_NACK_PSN_OOR_WINDOW)
		nic_cc_on_trim_nack(nic, sq->group, rtt, now);
	s->sched_k = 1;
	nic->c.retx_nack++;
	nic_rtx_queue(nic, sq, (uint64_t)idx, RTX_NACK, now);
}

/* ---- retransmission timers --------------------------------------------- */

/* docs/protocol.md §11: timer k runs InitialAckTimeout while k <= LinearRetryCount,
 * then doubles (at most 25 doublings, §12 rule 7); FixedRexmitTimeEnable
 * keeps every timer at InitialAckTimeout.  Rounded down to whole
 * microseconds, at least 1 µs. */
ps_t nic_timer_duration(const struct nic_attrs *a, unsigned k)
{
	ps_t t = a->initial_ack_timeout;

	if (!a->fixed_rexmit_time && k > a->linear_retry_count) {
		unsigned d = k - a->linear_retry_count;
		t = time_shl(t, d > 25 ? 25 : d);
	}
	t -= t % PS_PER_US;
	return t < PS_PER_US ? PS_PER_US : t;
}

static void timer_fire(void *arg, ps_t now);

/* §12 rule 7: the NIC checks its timers at every whole microsecond; a timer
 * started at s expires at the first check at or after s + its duration.
 * Timers due at one microsecond mostly share an event (core/timers.h: each
 * still runs as its own event would have); timer_fire schedules no frame
 * arrival at its own picosecond, as that requires (a frame it starts
 * arrives a serialization later at the earliest). */
void nic_timer_start(struct nic *nic, struct nic_seg *s, ps_t now)
{
	/* The port's copies: a data frame's end starts its timer (port.h).
	 * A first timer's duration comes rounded up by a microsecond less
	 * 1 ps already: time_add(time_add(now, d), r) is time_add(now,
	 * time_add(d, r)), both min(now + d + r, PS_NEVER - 1) (issue 16,
	 * callgrind at 8 hosts: 4 instructions a packet fewer). */
	ps_t due =
	    s->sched_k == 1
		? time_add(now, nic->port.timer_first_up)
		: time_add(time_add(now, nic_timer_duration(&nic->a, s->sched_k)), PS_PER_US - 1);

	due = due / PS_PER_US * PS_PER_US;
	s->timer = timers_start(nic->port.timers, due, timer_fire, s);
}

/* Inline, with timers_stop, in a retirement, once a data packet (issue
 * 16, callgrind at 8 hosts: the two calls cost some 15 instructions). */
inline __attribute__((always_inline)) void nic_timer_stop(struct nic *nic, struct nic_seg *s)
{
	if (s->timer) {
		timers_stop(nic->timers, s->timer);
		s->timer = 0;
	}
}

/* Seed: on expiry the packet leaves flight, congestion control reacts, and
 * it is queued for retransmission ahead of new data; the transmit process
 * restarts at once.  Past the budget, the QP enters the error state. */
static void timer_fire(void *arg, ps_t now)
{
	struct nic_seg *s = arg;
	struct nic_qp_send *sq = nic_seg_sq(s);
	struct nic *nic = sq->nic;
	uint64_t idx = nic_seg_idx(s);

	s->timer = 0;
	if (s->state != SEG_OUTSTANDING)
		return;
	if (budget_spent(&nic->a, s->timeouts)) {
		nic_qp_error(nic, sq, now);
		return;
	}
	s->timeouts++;
	s->sched_k++;
	nic_spray_assumed_bad(nic, sq->dest, s->ev, now);
	nic_seg_leave_flight(nic, sq, s, idx);
	nic_cc_on_timeout(nic, sq->group, nic_seg_nominal(nic, nic_seg_len(nic, sq, idx)), now);
	nic->c.retx_timeout++;
	nic_rtx_queue(nic, sq, idx, RTX_TIMEOUT, now);
	nic_tx_pass(nic, now);
}

/* ---- completion --------------------------------------------------------- */

static void rerequest_check(void *arg, ps_t now);

/* docs/protocol.md §10: SEND_COMPLETE when the message's last packet has been
 * serialized for the first time; from then on the re-request checks run
 * every 2 x InitialAckTimeout. */
void nic_send_complete(struct nic *nic, struct nic_qp_send *sq, ps_t now)
{
	struct nic_msg_info m = nic_send_info(nic, sq);

	sq->send_complete = true;
	nic_send_event(nic, sq, "SEND_COMPLETE", now);
	sq->rerequest = events_schedule(nic->ev, time_add(now, 2 * nic->a.initial_ack_timeout),
					rerequest_check, sq);
	nic->host.completion(nic->host.ctx, SEND_COMPLETE, &m, now);
}

/* Seed, Completion re-request: every packet SACKed but no cumulative ACK
 * covering the message: send its last packet again as a duplicate with the
 * ACK-request and retransmit flags; it is not a retransmission (§12 r10). */
static void rerequest_check(void *arg, ps_t now)
{
	struct nic_qp_send *sq = arg;
	struct nic *nic = sq->nic;
	uint64_t last = sq->npkts - 1;
	uint32_t wire = nic_seg_wire(nic, nic_seg_len(nic, sq, last));

	sq->rerequest = events_schedule(nic->ev, time_add(now, 2 * nic->a.initial_ack_timeout),
					rerequest_check, sq);
	if (sq->outstanding || sq->next_fetch < sq->npkts || !nic_port_reserve(nic, wire))
		return;
	struct pkt *p = nic_build_rtx(nic, sq, last, now);
	if (!p) {
		nic_port_unreserve(nic, wire);
		return;
	}
	nic_pkt_transmission(p, nic_seg(sq, last)->tx_count, RTX_REREQUEST);
	nic->c.completion_rerequests++;
	nic_port_send_data(nic, p, wire, now);
}
