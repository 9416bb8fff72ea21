/* nicd/sendq.c — the sending side of a queue pair (sendq.h): the doorbell,
 * segmentation, fetches and the hand-off after them, the retransmission
 * queue, the frames' start and end on the wire, closing and the error
 * state (seed: Queue pairs and messages; Segmentation; Packets on the
 * wire; Retransmission ahead of new data; Retransmission timer and retry
 * budget). */
#include <stdlib.h>
#include <string.h>

#include "nic_impl.h"

#include "core/lines.h"

/* Seed, Segmentation: a packet's nominal size is its IP datagram, payload
 * + 60 bytes (+4 with WireTimestamp); on the wire it is 18 bytes more. */
uint32_t nic_seg_nominal_overhead(const struct nic_attrs *a)
{
	return WIRE_DATA_OVERHEAD + (a->rtt_mode == RTT_WIRE_TIMESTAMP ? WIRE_TSETH_LEN : 0) +
	       (a->icrc ? WIRE_ICRC_LEN : 0);
}

uint32_t nic_seg_nominal(const struct nic *nic, uint32_t len)
{
	return len + nic->seg_overhead;
}

uint32_t nic_seg_wire(const struct nic *nic, uint32_t len)
{
	return nic_seg_nominal(nic, len) + WIRE_FRAMING;
}

/* From the QP's copy of the MSS (sendq.h), on the line its npkts is on. */
uint32_t nic_seg_len(const struct nic *nic, const struct nic_qp_send *sq, uint64_t idx)
{
	uint64_t left;

	(void)nic;
	if (idx + 1 < sq->npkts) /* all but the last are full */
		return sq->mss;
	left = sq->bytes - idx * sq->mss;
	return (uint32_t)(left < sq->mss ? left : sq->mss);
}

/* ---- the doorbell -------------------------------------------------------- */

/* The sender keeps the serialization starts of as many segments as the
 * PSN window (or the message, when shorter) holds, rounded up to a power
 * of two, in an array that grows to that as the fetches reach it; its
 * segments come in chunks of that many or NIC_SEG_CHUNK, the fewer. */
static bool send_alloc(struct nic *nic, struct nic_qp_send *sq)
{
	uint64_t want = sq->npkts < nic->a.max_psn_range ? sq->npkts : nic->a.max_psn_range;
	uint64_t n = 1;

	while (n < want)
		n <<= 1;
	sq->kept = n;
	while (sq->chunk_shift < 63 && (1ULL << sq->chunk_shift) < n &&
	       (1ULL << sq->chunk_shift) < NIC_SEG_CHUNK)
		sq->chunk_shift++;
	sq->chunk_mask = (uint8_t)((1u << sq->chunk_shift) - 1); /* below NIC_SEG_CHUNK */
	sq->tx_start_cap = (uint32_t)(n < 2 * NIC_SEG_CHUNK ? n : 2 * NIC_SEG_CHUNK);
	sq->tx_start.narrow = calloc(sq->tx_start_cap, sizeof(uint32_t));
	return sq->tx_start.narrow != NULL;
}

static void send_free(struct nic_qp_send *sq)
{
	while (sq->chunks.len)
		free((void *)(uintptr_t)ring64_pop(&sq->chunks));
	ring64_free(&sq->chunks);
	ring64_free(&sq->rtx);
	free(sq->tx_start.narrow);
	free(sq);
}

/* Seed, Queue pairs and messages: the doorbell creates the sending side and
 * queues the message in one step; the group joins the ready list and the
 * transmit process starts 15 ns later (§12 rule 19). */
bool nic_post_message(struct nic *nic, uint32_t dst_ip, uint64_t bytes, uint64_t msg_id, ps_t now)
{
	struct nic_qp_send *sq;

	/* RETH's DMA length is 32 bits. */
	if (bytes > WIRE_MAX_MSG_BYTES || dst_ip == nic->ip || !msg_id || msg_id > NIC_MAX_MSG_ID ||
	    !(sq = lines_calloc(1, sizeof(*sq)))) {
		nic->c.msgs_refused++;
		return false;
	}
	sq->nic = nic;
	sq->qpn = nic_qpn_alloc(nic);
	sq->peer_ip = dst_ip;
	sq->msg_id = msg_id;
	sq->bytes = bytes;
	sq->npkts = bytes ? (bytes + nic->a.mss - 1) / nic->a.mss : 1;
	sq->mss = nic->a.mss;
	sq->data_dscp = nic->a.trimming ? nic->a.dscp_trimmable : nic->a.dscp_no_trim;
	sq->icrc = nic->a.icrc;
	sq->wire_ts = nic->a.rtt_mode == RTT_WIRE_TIMESTAMP;
	sq->max_psn_range = nic->a.max_psn_range;
	sq->sack_loss_min_retx = nic->a.sack_loss_min_retx;
	sq->posted = now;
	sq->dest = nic_dest_get(nic, dst_ip);
	sq->group = nic_group_get(nic, dst_ip);
	if (!sq->dest || !sq->group || !send_alloc(nic, sq) ||
	    !hmap_put(&nic->send_qps, sq->qpn, sq)) {
		nic_group_put(nic, sq->group);
		nic_dest_put(nic, sq->dest);
		send_free(sq);
		nic->c.msgs_refused++;
		return false;
	}
	nic_spray_senders(nic, sq->dest, 1, now);
	nic->c.msgs_posted++;
	nic->c.qps_created++;
	nic->open_msgs++;
	nic_event(nic, now, "QP_CREATED", sq->qpn, dst_ip, 0, msg_id, bytes);
	nic_event(nic, now, "MSG_POSTED", sq->qpn, dst_ip, 0, msg_id, bytes);
	/* §12 rule 19: the QP joins its group's turn order at the doorbell, so
	 * messages posted together take turns from their first packets. */
	nic_qp_update(nic, sq);
	nic_tx_kick(nic, now + 15 * PS_PER_NS);
	return true;
}

/* ---- whether the QP has work ------------------------------------------ */

/* Seed, Segmentation: at most MaxPSNRange packets beyond the cumulative
 * PSN, fetches in progress included. */
static bool psn_window_open(const struct nic *nic, const struct nic_qp_send *sq)
{
	(void)nic;
	return sq->next_fetch < sq->snd_una + sq->max_psn_range;
}

bool nic_send_ready(const struct nic *nic, const struct nic_qp_send *sq)
{
	if (sq->error)
		return false;
	return nic_send_has_rtx(sq) || (sq->next_fetch < sq->npkts && psn_window_open(nic, sq));
}
/* ---- building data packets ------------------------------------------- */

static uint8_t data_opcode(const struct nic_qp_send *sq, uint64_t idx)
{
	if (sq->npkts == 1)
		return WIRE_OP_WRITE_ONLY;
	if (idx == 0)
		return WIRE_OP_WRITE_FIRST;
	return idx + 1 == sq->npkts ? WIRE_OP_WRITE_LAST : WIRE_OP_WRITE_MIDDLE;
}

/* docs/protocol.md §12 rule 1: the window is nearly full when, with this packet
 * already in flight, less than one nominal packet of room is left, or the
 * window is under 4,095 bytes. */
static bool window_nearly_full(const struct nic *nic, const struct nic_group *g)
{
	return g->cc.cwnd < 4095 || g->cc.inflight + nic->unit > g->cc.cwnd;
}

/* Seed, Packets on the wire; docs/protocol.md §1.  Inline in the
 * hand-off and the retransmission (issue 16, callgrind at 8 hosts: the
 * call cost some 25 instructions a data packet). */
static inline __attribute__((always_inline)) struct pkt *
build_data(struct nic *nic, struct nic_qp_send *sq, struct nic_seg *s, uint64_t idx, ps_t now)
{
	struct pkt *p = nic_pkt_new_as(nic, sq->peer_ip, data_opcode(sq, idx),
				       nic_spray_next(nic, sq->dest, sq->qpn), sq->icrc);

	if (!p)
		return NULL;
	s->ev = p->sport;
	p->ecn = WIRE_ECN_ECT0;
	p->dqpn = sq->remote_known ? sq->remote_qpn : sq->qpn;
	if (!sq->remote_known)
		p->flags |= WIRE_BTH_C;
	if (idx + 1 == sq->npkts)
		p->flags |= WIRE_BTH_A;
	p->psn = (uint32_t)(idx & WIRE_PSN_MASK);
	p->msn = (uint16_t)sq->msg_id;
	if (sq->wire_ts) {
		p->flags |= WIRE_BTH_TS;
		p->tseth_time = (uint16_t)(now / (128 * PS_PER_NS));
	}
	p->msg_offset = idx * sq->mss;
	p->va = wire_va((uint32_t)sq->msg_id, p->msg_offset);
	p->dma_len = (uint32_t)sq->bytes;
	p->payload_len = nic_seg_len(nic, sq, idx);
	p->built = now;
	nic_pkt_meta_set(p, (struct nic_pkt_meta){.seg_idx = idx, .src_qpn = sq->qpn});
	nic_pkt_seg_set(p, s);
	return p;
}

/* Seed, Fetching the payload: hand-off.  The packet takes its PSN (the
 * index was fixed at fetch issue, in the same order), an entropy value and
 * its headers, and goes to the egress queue of the data class.
 *
 * The fetch carries its QP and segment, not its QP number and index: the
 * QP's look-up and the segment's in the QP's table of chunks are a cache
 * line each at 1,024 hosts (issue 16).  Both stay while the fetch is out:
 * a QP is freed only when it closes, at a cumulative ACK of all of its
 * segments, which must all have been handed off (one below next_sent;
 * the hand-offs come in the fetches' order), and a chunk only once the
 * cumulative PSN, below next_sent, has passed it; nic_send_close checks
 * that no fetch is out. */
void nic_handoff(struct nic *nic, struct nic_qp_send *sq, struct nic_seg *s, ps_t now)
{
	uint64_t idx = sq->next_handoff++;
	uint32_t wire = nic_seg_wire(nic, nic_seg_len(nic, sq, idx));
	struct pkt *p;

	INVARIANT(hmap_get(&nic->send_qps, sq->qpn) == sq && s == nic_seg(sq, idx));
	if (sq->error || s->state != SEG_FETCHING) {
		/* The QP failed while the payload was on its way. */
		nic_port_unreserve(nic, wire);
		return;
	}
	p = build_data(nic, sq, s, idx, now);
	if (!p) {
		nic_port_unreserve(nic, wire);
		nic_qp_error(nic, sq, now);
		return;
	}
	if (window_nearly_full(nic, sq->group))
		p->flags |= WIRE_BTH_A;
	p->dscp = sq->data_dscp;
	nic_pkt_transmission(p, s->tx_count = 1, RTX_NONE);
	s->state = SEG_EGRESS;
	if (idx + 1 > sq->next_sent)
		sq->next_sent = idx + 1;
	nic_port_send_data(nic, p, wire, now);
}

/* ---- serialization starts ---------------------------------------------- */

/* The entries widen to 64 bits (nic_seg_set_tx_start, when a time does
 * not fit in 32); false when out of memory. */
bool nic_seg_tx_widen(struct nic_qp_send *sq)
{
	ps_t *w = malloc(sq->tx_start_cap * sizeof(*w));

	if (!w)
		return false;
	for (uint64_t i = 0; i < sq->tx_start_cap; i++)
		w[i] = nic_tx64(sq, sq->tx_start.narrow[i]);
	free(sq->tx_start.narrow);
	sq->tx_start.wide = w;
	sq->tx_start_wide = true;
	return true;
}

/* ---- fetching ---------------------------------------------------------- */

/* Room for segment idx, the next to fetch: its chunk when it is the
 * chunk's first, and its serialization start's place. */
static bool seg_room(struct nic_qp_send *sq, uint64_t idx)
{
	size_t n = (size_t)1 << sq->chunk_shift;
	struct nic_seg_chunk *c;

	if (idx >= sq->tx_start_cap && sq->tx_start_cap < sq->kept) {
		/* Below kept no index has wrapped: the array grows in place. */
		size_t size = sq->tx_start_wide ? sizeof(ps_t) : sizeof(uint32_t);
		char *t = realloc(sq->tx_start.narrow, 2 * sq->tx_start_cap * size);
		if (!t)
			return false;
		memset(t + sq->tx_start_cap * size, 0, sq->tx_start_cap * size);
		sq->tx_start.narrow = (void *)t;
		sq->tx_start_cap *= 2;
	}
	if ((idx >> sq->chunk_shift) - sq->chunk0 < sq->chunks.len)
		return true;
	if (!(c = calloc(1, sizeof(*c) + n * sizeof(c->segs[0]))) ||
	    !ring64_push(&sq->chunks, (uintptr_t)c)) {
		free(c);
		return false;
	}
	c->sq = sq;
	c->first = idx;
	INVARIANT((idx & (n - 1)) == 0); /* nic_seg: a chunk starts at a multiple of n */
	return true;
}

/* The next segment's fetch: reserve egress room, count it in flight from
 * now (seed, The congestion window), issue the PCIe read. */
static bool fetch_new(struct nic *nic, struct nic_qp_send *sq, ps_t now)
{
	uint64_t idx = sq->next_fetch;
	uint32_t len = nic_seg_len(nic, sq, idx);
	uint32_t wire = nic_seg_wire(nic, len);
	struct nic_seg *s;

	if (!nic_port_reserve(nic, wire))
		return false;
	if (!seg_room(sq, idx)) {
		nic->c.tx_drop_no_memory++; /* tried again at the next pass */
		nic_port_unreserve(nic, wire);
		return false;
	}
	s = nic_seg(sq, idx);
	if (!nic_pcie_fetch(nic, sq, s, len, now)) {
		nic_port_unreserve(nic, wire);
		return false;
	}
	*s = (struct nic_seg){.pos = (uint8_t)(idx & sq->chunk_mask),
			      .sched_k = 1,
			      .state = SEG_FETCHING,
			      .inflight = true};
	(void)nic_seg_set_tx_start(sq, idx, 0); /* fits in any entry */
	nic_cc_enter_flight(&sq->group->cc, nic_seg_nominal(nic, len));
	sq->next_fetch++;
	sq->outstanding++;
	return true;
}

/* The oldest segment queued for retransmission (one waits): members
 * retired while queued stay until they reach the head. */
static uint64_t rtx_peek(struct nic_qp_send *sq)
{
	for (;; ring64_pop(&sq->rtx)) {
		uint64_t idx = ring64_front(&sq->rtx);
		if (idx >= sq->snd_una && nic_seg(sq, idx)->state == SEG_RTX_QUEUED)
			return idx;
	}
}

/* A retransmission is rebuilt from its recorded size, with no PCIe traffic,
 * fresh entropy, the retransmit and ACK-request flags and, by default, the
 * trimmable-retransmission codepoint (seed, NACKs). */
struct pkt *nic_build_rtx(struct nic *nic, struct nic_qp_send *sq, uint64_t idx, ps_t now)
{
	struct pkt *p = build_data(nic, sq, nic_seg(sq, idx), idx, now);

	if (!p)
		return NULL;
	p->flags |= WIRE_BTH_A | WIRE_BTH_RTX;
	p->dscp = !nic->a.trimming		? nic->a.dscp_no_trim
		  : nic->a.retransmit_trimmable ? nic->a.dscp_trimmable_retx
						: nic->a.dscp_no_trim;
	return p;
}

static bool send_rtx(struct nic *nic, struct nic_qp_send *sq, ps_t now)
{
	uint64_t idx = rtx_peek(sq);
	uint32_t len = nic_seg_len(nic, sq, idx), wire = nic_seg_wire(nic, len);
	struct nic_seg *s;
	struct pkt *p;

	if (!nic_port_reserve(nic, wire))
		return false;
	p = nic_build_rtx(nic, sq, idx, now);
	if (!p) {
		nic_port_unreserve(nic, wire);
		return false;
	}
	ring64_pop(&sq->rtx);
	NIC_DEC(sq->rtx_pending);
	/* §12 rule 2: a retransmission adds its bytes back when it is
	 * scheduled to send. */
	s = nic_seg(sq, idx);
	s->inflight = true;
	nic_cc_enter_flight(&sq->group->cc, nic_seg_nominal(nic, len));
	nic_pkt_transmission(p, ++s->tx_count, s->rtx_origin);
	s->state = SEG_EGRESS;
	sq->retransmissions++;
	nic->c.tx_retx_pkts++;
	nic_port_send_data(nic, p, wire, now);
	return true;
}

bool nic_send_next(struct nic *nic, struct nic_qp_send *sq, ps_t now)
{
	return nic_send_has_rtx(sq) ? send_rtx(nic, sq, now) : fetch_new(nic, sq, now);
}

/* Put a segment back on the retransmission queue (it is no longer in
 * flight: nic_seg_leave_flight ran before). */
void nic_rtx_queue(struct nic *nic, struct nic_qp_send *sq, uint64_t idx, enum rtx_origin why,
		   ps_t now)
{
	struct nic_seg *s = nic_seg(sq, idx);

	if (sq->error)
		return;
	if (!ring64_push(&sq->rtx, idx)) {
		nic->c.tx_drop_no_memory++;
		nic_qp_error(nic, sq, now);
		return;
	}
	s->state = SEG_RTX_QUEUED;
	s->rtx_origin = why;
	sq->rtx_pending++;
	nic_qp_update(nic, sq);
}

void nic_seg_leave_flight(struct nic *nic, struct nic_qp_send *sq, struct nic_seg *s, uint64_t idx)
{
	if (!s->inflight)
		return;
	s->inflight = false;
	nic_cc_leave_flight(&sq->group->cc, nic_seg_nominal(nic, nic_seg_len(nic, sq, idx)));
}

/* Free the chunks wholly below the cumulative PSN but the last segment's. */
void nic_seg_release_chunks(struct nic_qp_send *sq)
{
	uint64_t last = (sq->npkts - 1) >> sq->chunk_shift;

	while (sq->chunks.len && sq->chunk0 < sq->snd_una >> sq->chunk_shift &&
	       sq->chunk0 != last) {
		free((void *)(uintptr_t)ring64_pop(&sq->chunks));
		sq->chunk0++;
	}
}

/* ---- the frames' start and end on the wire ----------------------------- */

/* The sending side of the data packet a frame carries, while it is open
 * and keeps the segment's record; not for re-requests. */
static struct nic_qp_send *sender_of(struct nic *nic, struct nic_pkt_meta m,
				     struct nic_qp_send *hint)
{
	struct nic_qp_send *sq =
	    hint && hint->qpn == m.src_qpn ? hint : hmap_get(&nic->send_qps, m.src_qpn);

	if (!sq || sq->error || m.rtx_origin == RTX_REREQUEST || !nic_seg_kept(sq, m.seg_idx))
		return NULL;
	return sq;
}

/* Inline (across files, by the link-time optimizer) in the port's frame
 * start: out of line it cost 17 instructions a data packet more (issue
 * 16, callgrind at 8 hosts).  hint: an open sending QP, the port's last
 * data frame's (port.h), asked before the table: its line is read anyway,
 * the table's (struct nic's sixth) was a miss at most starts at 1,024
 * hosts (callgrind: 64k in 65k). */
inline __attribute__((always_inline)) struct nic_qp_send *
nic_send_on_wire(struct nic *nic, struct nic_pkt_meta m, struct nic_qp_send *hint, ps_t now)
{
	struct nic_qp_send *sq = sender_of(nic, m, hint);

	/* §12 rule 9: RTT is measured from the start of the packet's last
	 * serialization. */
	if (!sq || nic_seg_tx_start(sq, m.seg_idx) == NIC_TX_AMBIGUOUS ||
	    nic_seg_set_tx_start(sq, m.seg_idx, now))
		return sq;
	nic->c.tx_drop_no_memory++;
	nic_qp_error(nic, sq, now);
	return sq;
}

/* sq is what the start returned, unless the QP closed since: sender_of's
 * answer then, asked again of what may have changed (the error state, and
 * whether the segment's record is still kept: both only ever turn false;
 * a closed QP's number is not taken again while its frame is on the wire). */
void nic_send_serialized(struct nic *nic, struct nic_qp_send *sq, struct nic_pkt_meta m,
			 struct nic_seg *seg, ps_t now)
{
	if (!sq || sq->error || !nic_seg_kept(sq, m.seg_idx))
		return;
	/* Below the cumulative PSN every segment is retired. */
	if (m.seg_idx >= sq->snd_una) {
		INVARIANT(seg == nic_seg(sq, m.seg_idx));
		if (seg->state == SEG_EGRESS) {
			seg->state = SEG_OUTSTANDING;
			nic_timer_start(nic, seg, now);
		}
	}
	if (m.tx_count == 1 && m.seg_idx + 1 == sq->npkts && !sq->send_complete)
		nic_send_complete(nic, sq, now);
}

/* ---- closing, the error state ------------------------------------------ */

/* What a completion or a failure tells the host about a sending side. */
struct nic_msg_info nic_send_info(const struct nic *nic, const struct nic_qp_send *sq)
{
	return (struct nic_msg_info){.msg_id = sq->msg_id,
				     .src_ip = nic->ip,
				     .dst_ip = sq->peer_ip,
				     .local_qpn = sq->qpn,
				     .remote_qpn = sq->remote_qpn,
				     .bytes = sq->bytes,
				     .posted = sq->posted,
				     .retransmissions = sq->retransmissions};
}

/* An mrc-events row for a sending side. */
void nic_send_event(struct nic *nic, const struct nic_qp_send *sq, const char *what, ps_t now)
{
	nic_event(nic, now, what, sq->qpn, sq->peer_ip, sq->remote_qpn, sq->msg_id, sq->bytes);
}

/* §12 rule 11: the sending side closes at MSG_COMPLETE. */
void nic_send_close(struct nic *nic, struct nic_qp_send *sq, ps_t now)
{
	INVARIANT(sq->next_handoff == sq->next_fetch); /* no fetch points to it */
	events_cancel(nic->ev, sq->rerequest);
	nic->c.qps_closed++;
	nic_send_event(nic, sq, "QP_CLOSED", now);
	nic_turn_remove(sq->group, sq);
	nic_spray_senders(nic, sq->dest, -1, now);
	/* What it retired may have opened the window for the others. */
	nic_sched_update(nic, sq->group);
	nic_group_put(nic, sq->group);
	nic_dest_put(nic, sq->dest);
	hmap_del(&nic->send_qps, sq->qpn);
	nic_monitor_forget(nic, sq->qpn);
	nic_port_forget_sender(nic, sq);
	send_free(sq);
	NIC_CHECK(nic);
}

/* Seed, Retransmission timer and retry budget: a QP in the error state
 * sends nothing more, its timers are ignored and its message never
 * completes.  It stays (for the report) but leaves its group's turns. */
void nic_qp_error(struct nic *nic, struct nic_qp_send *sq, ps_t now)
{
	if (sq->error)
		return;
	sq->error = true;
	nic->c.qp_error++;
	for (uint64_t i = sq->snd_una; i < sq->next_fetch; i++) {
		struct nic_seg *s = nic_seg(sq, i);
		nic_timer_stop(nic, s);
		nic_seg_leave_flight(nic, sq, s, i);
	}
	events_cancel(nic->ev, sq->rerequest);
	sq->rtx.head = sq->rtx.len = 0;
	nic_spray_senders(nic, sq->dest, -1, now);
	nic_turn_remove(sq->group, sq);
	nic_sched_update(nic, sq->group);
	sq->rtx_pending = 0;
	nic_send_event(nic, sq, "QP_ERROR", now);
	nic_monitor_qp_error(nic, sq->qpn, now);
	if (nic->host.failed) {
		struct nic_msg_info m = nic_send_info(nic, sq);
		nic->host.failed(nic->host.ctx, &m, now);
	}
}

/* At the end: every sending side. */
void nic_send_free_all(struct nic *nic)
{
	struct hmap *m = &nic->send_qps;

	for (size_t i = 0; m->slots && i <= m->mask; i++) {
		struct nic_qp_send *sq = m->slots[i].val;
		if (sq)
			send_free(sq);
	}
	hmap_destroy(m);
}

/* Every segment from the cumulative PSN to the next fetch sits in its
 * chunk; the QP's counts of segments not retired and queued for
 * retransmission are what its segments say. */
const char *nic_send_check(const struct nic *nic, const struct nic_qp_send *sq, char *why,
			   size_t len)
{
	uint64_t outstanding = 0, rtx = 0;

	(void)nic;
	if (sq->snd_una < sq->next_fetch &&
	    (sq->chunk0 > sq->snd_una >> sq->chunk_shift ||
	     ((sq->next_fetch - 1) >> sq->chunk_shift) - sq->chunk0 >= sq->chunks.len)) {
		snprintf(why, len, "send QP chunks %llu from %llu do not hold segments %llu..%llu",
			 (unsigned long long)sq->chunks.len, (unsigned long long)sq->chunk0,
			 (unsigned long long)sq->snd_una, (unsigned long long)sq->next_fetch - 1);
		return why;
	}
	for (uint64_t i = sq->snd_una; i < sq->next_fetch; i++) {
		const struct nic_seg *s = nic_seg(sq, i);
		if (nic_seg_idx(s) != i || nic_seg_sq(s) != sq) {
			snprintf(why, len, "segment %llu of a send QP is not in its chunk (%llu)",
				 (unsigned long long)i, (unsigned long long)nic_seg_idx(s));
			return why;
		}
		outstanding += s->state != SEG_RETIRED && s->state != SEG_FREE;
		rtx += s->state == SEG_RTX_QUEUED;
	}
	if (outstanding != sq->outstanding)
		snprintf(why, len, "send QP outstanding %llu, its segments not retired %llu",
			 (unsigned long long)sq->outstanding, (unsigned long long)outstanding);
	else if (!sq->error && rtx != sq->rtx_pending)
		snprintf(why, len, "send QP rtx_pending %llu, its segments queued %llu",
			 (unsigned long long)sq->rtx_pending, (unsigned long long)rtx);
	else if (sq->snd_una > sq->next_sent || sq->next_sent > sq->next_fetch ||
		 sq->next_fetch > sq->npkts)
		snprintf(why, len,
			 "send QP indices out of order: snd_una %llu, next_sent %llu, "
			 "next_fetch %llu, npkts %llu",
			 (unsigned long long)sq->snd_una, (unsigned long long)sq->next_sent,
			 (unsigned long long)sq->next_fetch, (unsigned long long)sq->npkts);
	else
		return NULL;
	return why;
}
