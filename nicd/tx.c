/* nicd/tx.c — segmentation, the transmit scheduler, the hand-off after a
 * PCIe fetch, and the port (seed: Segmentation; Packets on the wire; QP
 * groups and the transmit scheduler; Retransmission ahead of new data). */
#include <string.h>

#include "nic_impl.h"

/* Seed, Segmentation: a packet's nominal size is its IP datagram, payload
 * + 60 bytes (+4 with WireTimestamp); on the wire it is 18 bytes more. */
uint32_t nic_seg_nominal(const struct nic *nic, uint32_t len)
{
	return len + WIRE_DATA_OVERHEAD +
	       (nic->a.rtt_mode == RTT_WIRE_TIMESTAMP ? WIRE_TSETH_LEN : 0) +
	       (nic->a.icrc ? WIRE_ICRC_LEN : 0);
}

uint32_t nic_seg_wire(const struct nic *nic, uint32_t len)
{
	return nic_seg_nominal(nic, len) + WIRE_FRAMING;
}

static uint32_t seg_len(const struct nic_qp_send *sq, uint64_t idx, uint32_t mss)
{
	uint64_t left = sq->bytes - idx * mss;
	return (uint32_t)(left < mss ? left : mss);
}

/* ---- the turn ring of a group and the list of ready groups ---------- */

static bool qp_has_rtx(const struct nic_qp_send *sq)
{
	return sq->rtx_pending > 0;
}

/* Seed, Segmentation: at most MaxPSNRange packets beyond the cumulative
 * PSN, fetches in progress included. */
static bool psn_window_open(const struct nic *nic, const struct nic_qp_send *sq)
{
	return sq->next_fetch < sq->snd_una + nic->a.max_psn_range;
}

bool nic_send_ready(const struct nic *nic, const struct nic_qp_send *sq)
{
	if (sq->error)
		return false;
	return qp_has_rtx(sq) || (sq->next_fetch < sq->npkts && psn_window_open(nic, sq));
}

/* Keep the group's count of QPs with a retransmission waiting true. */
static void rtx_count_refresh(struct nic_group *g, struct nic_qp_send *sq)
{
	bool has = qp_has_rtx(sq);

	if (has != sq->counted_rtx) {
		g->rtx_qps += has ? 1 : -1;
		sq->counted_rtx = has;
	}
}

static void turn_insert(struct nic_group *g, struct nic_qp_send *sq)
{
	if (!g->turn) {
		sq->turn_next = sq->turn_prev = sq;
		g->turn = sq;
	} else { /* at the back of the rotation: just before the turn */
		sq->turn_next = g->turn;
		sq->turn_prev = g->turn->turn_prev;
		sq->turn_prev->turn_next = sq;
		g->turn->turn_prev = sq;
	}
	rtx_count_refresh(g, sq);
}

void nic_turn_remove(struct nic_group *g, struct nic_qp_send *sq)
{
	if (!sq->turn_next)
		return;
	if (sq->counted_rtx)
		NIC_DEC(g->rtx_qps);
	sq->counted_rtx = false;
	if (sq->turn_next == sq) {
		g->turn = NULL;
	} else {
		sq->turn_prev->turn_next = sq->turn_next;
		sq->turn_next->turn_prev = sq->turn_prev;
		if (g->turn == sq)
			g->turn = sq->turn_next;
	}
	sq->turn_next = sq->turn_prev = NULL;
}

/* Seed: a group is ready when its congestion window has room and one of
 * its QPs has a retransmission waiting, or new data with its PSN window
 * open. */
static bool group_ready(const struct nic_group *g)
{
	return g->turn && nic_cc_window_open(&g->cc);
}

void nic_ready_remove(struct nic *nic, struct nic_group *g)
{
	if (!g->on_list)
		return;
	if (g->prev)
		g->prev->next = g->next;
	else
		nic->ready_head = g->next;
	if (g->next)
		g->next->prev = g->prev;
	else
		nic->ready_tail = g->prev;
	g->prev = g->next = NULL;
	g->on_list = false;
}

static void ready_insert(struct nic *nic, struct nic_group *g, bool head)
{
	g->on_list = true;
	if (head) {
		g->prev = NULL;
		g->next = nic->ready_head;
		if (nic->ready_head)
			nic->ready_head->prev = g;
		else
			nic->ready_tail = g;
		nic->ready_head = g;
	} else {
		g->next = NULL;
		g->prev = nic->ready_tail;
		if (nic->ready_tail)
			nic->ready_tail->next = g;
		else
			nic->ready_head = g;
		nic->ready_tail = g;
	}
}

/* Seed: a group that joins the list with a retransmission waiting joins at
 * its head, any other at its tail; a group already on the list keeps its
 * place. */
void nic_sched_update(struct nic *nic, struct nic_group *g)
{
	if (!g->on_list && group_ready(g))
		ready_insert(nic, g, g->rtx_qps > 0);
}

/* Keep a QP in its group's turn ring exactly while it has work; a QP that
 * stays keeps its place in the rotation. */
void nic_qp_update(struct nic *nic, struct nic_qp_send *sq)
{
	struct nic_group *g = sq->group;
	bool ready = nic_send_ready(nic, sq);

	if (sq->turn_next && !ready)
		nic_turn_remove(g, sq);
	else if (!sq->turn_next && ready)
		turn_insert(g, sq);
	else if (sq->turn_next)
		rtx_count_refresh(g, sq);
	nic_sched_update(nic, g);
}

/* ---- building data packets ------------------------------------------- */

struct pkt *nic_pkt_new(struct nic *nic, uint32_t dst_ip, uint8_t opcode, uint16_t sport)
{
	struct pkt *p = pkt_get(nic->pool);

	if (!p) {
		nic->c.tx_drop_no_memory++;
		return NULL;
	}
	memcpy(p->src_mac, nic->mac, 6);
	memcpy(p->dst_mac, nic->peer_mac, 6);
	p->src_ip = nic->ip;
	p->dst_ip = dst_ip;
	p->ttl = WIRE_TTL;
	p->sport = sport;
	p->dport = WIRE_ROCE_PORT;
	p->opcode = opcode;
	p->icrc = nic->a.icrc;
	return p;
}

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

/* Seed, Packets on the wire; docs/protocol.md §1. */
static struct pkt *build_data(struct nic *nic, struct nic_qp_send *sq, struct nic_seg *s, ps_t now)
{
	struct pkt *p = nic_pkt_new(nic, sq->peer_ip, data_opcode(sq, s->idx),
				    nic_spray_next(nic, sq->dest, sq->qpn));

	if (!p)
		return NULL;
	s->ev = p->sport;
	p->ecn = WIRE_ECN_ECT0;
	p->dqpn = sq->remote_known ? sq->remote_qpn : sq->qpn;
	if (!sq->remote_known)
		p->flags |= WIRE_BTH_C;
	if (s->idx + 1 == sq->npkts)
		p->flags |= WIRE_BTH_A;
	p->psn = (uint32_t)(s->idx & WIRE_PSN_MASK);
	p->msn = (uint16_t)sq->msg_id;
	if (nic->a.rtt_mode == RTT_WIRE_TIMESTAMP) {
		p->flags |= WIRE_BTH_TS;
		p->tseth_time = (uint16_t)(now / (128 * PS_PER_NS));
	}
	p->msg_offset = s->idx * nic->a.mss;
	p->va = wire_va((uint32_t)sq->msg_id, p->msg_offset);
	p->dma_len = (uint32_t)sq->bytes;
	p->payload_len = s->len;
	p->built = now;
	nic_pkt_meta_set(p, (struct nic_pkt_meta){.seg_idx = s->idx, .src_qpn = sq->qpn});
	return p;
}

/* Seed, Fetching the payload: hand-off.  The packet takes its PSN (the
 * index was fixed at fetch issue, in the same order), an entropy value and
 * its headers, and goes to the egress queue of the data class. */
void nic_handoff(struct nic *nic, uint32_t qpn, uint64_t idx, ps_t now)
{
	struct nic_qp_send *sq = hmap_get(&nic->send_qps, qpn);
	struct nic_seg *s = sq ? nic_seg(sq, idx) : NULL;
	struct pkt *p;

	if (!sq || sq->error || s->state != SEG_FETCHING) {
		/* The QP failed while the payload was on its way. */
		nic_port_unreserve(nic, nic_seg_wire(nic, sq ? s->len : 0));
		return;
	}
	p = build_data(nic, sq, s, now);
	if (!p) {
		nic_port_unreserve(nic, nic_seg_wire(nic, s->len));
		nic_qp_error(nic, sq, now);
		return;
	}
	if (window_nearly_full(nic, sq->group))
		p->flags |= WIRE_BTH_A;
	p->dscp = nic->a.trimming ? nic->a.dscp_trimmable : nic->a.dscp_no_trim;
	nic_pkt_transmission(p, s->tx_count = 1, RTX_NONE);
	s->state = SEG_EGRESS;
	if (idx + 1 > sq->next_sent)
		sq->next_sent = idx + 1;
	nic_port_send_data(nic, p, nic_seg_wire(nic, s->len), now);
}

/* The next segment's fetch: reserve egress room, count it in flight from
 * now (seed, The congestion window), issue the PCIe read. */
static bool fetch_new(struct nic *nic, struct nic_qp_send *sq, ps_t now)
{
	uint64_t idx = sq->next_fetch;
	uint32_t len = seg_len(sq, idx, nic->a.mss);
	uint32_t wire = nic_seg_wire(nic, len);
	struct nic_seg *s;

	if (!nic_port_reserve(nic, wire))
		return false;
	if (!nic_pcie_fetch(nic, sq->qpn, idx, len, now)) {
		nic_port_unreserve(nic, wire);
		return false;
	}
	s = nic_seg(sq, idx);
	*s = (struct nic_seg){.sq = sq,
			      .idx = idx,
			      .len = len,
			      .sched_k = 1,
			      .state = SEG_FETCHING,
			      .inflight = true,
			      .in_rtx_list = s->in_rtx_list,
			      .rtx_next = s->rtx_next};
	nic_cc_enter_flight(&sq->group->cc, nic_seg_nominal(nic, len));
	sq->next_fetch++;
	sq->outstanding++;
	return true;
}

static struct nic_seg *rtx_peek(struct nic_qp_send *sq)
{
	/* Members retired while queued stay linked until they reach the head. */
	while (sq->rtx_head && sq->rtx_head->state != SEG_RTX_QUEUED) {
		struct nic_seg *s = sq->rtx_head;
		sq->rtx_head = s->rtx_next;
		s->in_rtx_list = false;
	}
	if (!sq->rtx_head)
		sq->rtx_tail = NULL;
	return sq->rtx_head;
}

/* A retransmission is rebuilt from its recorded size, with no PCIe traffic,
 * fresh entropy, the retransmit and ACK-request flags and, by default, the
 * trimmable-retransmission codepoint (seed, NACKs). */
struct pkt *nic_build_rtx(struct nic *nic, struct nic_qp_send *sq, struct nic_seg *s, ps_t now)
{
	struct pkt *p = build_data(nic, sq, s, now);

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
	struct nic_seg *s = rtx_peek(sq);
	uint32_t wire = nic_seg_wire(nic, s->len);
	struct pkt *p;

	if (!nic_port_reserve(nic, wire))
		return false;
	p = nic_build_rtx(nic, sq, s, now);
	if (!p) {
		nic_port_unreserve(nic, wire);
		return false;
	}
	sq->rtx_head = s->rtx_next;
	if (!sq->rtx_head)
		sq->rtx_tail = NULL;
	s->in_rtx_list = false;
	NIC_DEC(sq->rtx_pending);
	/* §12 rule 2: a retransmission adds its bytes back when it is
	 * scheduled to send. */
	s->inflight = true;
	nic_cc_enter_flight(&sq->group->cc, nic_seg_nominal(nic, s->len));
	nic_pkt_transmission(p, ++s->tx_count, s->rtx_origin);
	s->state = SEG_EGRESS;
	sq->retransmissions++;
	nic->c.tx_retx_pkts++;
	nic_port_send_data(nic, p, wire, now);
	return true;
}

/* Seed, The transmit scheduler: serve the list of ready groups in turns, one
 * packet per turn, retransmission before new data, until no group is ready
 * or the egress pool is full, all at one instant. */
void nic_tx_pass(struct nic *nic, ps_t now)
{
	struct nic_group *g;

	nic->pass_blocked = false;
	while ((g = nic->ready_head)) {
		struct nic_qp_send *sq;
		bool sent;

		if (!group_ready(g)) {
			nic_ready_remove(nic, g);
			continue;
		}
		sq = g->turn;
		sent = qp_has_rtx(sq) ? send_rtx(nic, sq, now) : fetch_new(nic, sq, now);
		if (!sent) { /* egress pool full: keep the group at the head */
			nic->pass_blocked = true;
			return;
		}
		g->turn = sq->turn_next;
		nic_ready_remove(nic, g);
		nic_qp_update(nic, sq);
	}
}

static void pass_event(void *arg, ps_t now)
{
	nic_tx_pass(arg, now);
}

void nic_tx_kick(struct nic *nic, ps_t when)
{
	events_schedule(nic->ev, when, pass_event, nic);
}

/* Put a segment back on the retransmission queue (it is no longer in
 * flight: nic_seg_leave_flight ran before). */
void nic_rtx_queue(struct nic *nic, struct nic_qp_send *sq, struct nic_seg *s, enum rtx_origin why,
		   ps_t now)
{
	(void)now;
	s->state = SEG_RTX_QUEUED;
	s->rtx_origin = why;
	if (!s->in_rtx_list) {
		s->in_rtx_list = true;
		s->rtx_next = NULL;
		if (sq->rtx_tail)
			sq->rtx_tail->rtx_next = s;
		else
			sq->rtx_head = s;
		sq->rtx_tail = s;
	}
	sq->rtx_pending++;
	nic_qp_update(nic, sq);
}

void nic_seg_leave_flight(struct nic *nic, struct nic_qp_send *sq, struct nic_seg *s)
{
	if (!s->inflight)
		return;
	s->inflight = false;
	nic_cc_leave_flight(&sq->group->cc, nic_seg_nominal(nic, s->len));
}
