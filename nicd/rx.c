/* nicd/rx.c — the receive path of a data packet (seed, Receiving a packet;
 * Cumulative acknowledgements; Selective acknowledgements; NACKs). */
#include "nic_impl.h"

/* Seed, Packet marking: control, trimmed and trimmed-on-the-last-hop use
 * the control class; every other codepoint the data class. */
static bool control_class(const struct nic *nic, uint8_t dscp)
{
	return dscp == nic->a.dscp_control || dscp == nic->a.dscp_trimmed ||
	       dscp == nic->a.dscp_trimmed_last_hop;
}

void nic_ingress_release(struct nic *nic, uint32_t pool_bytes, bool control)
{
	if (control)
		NIC_SUB(nic->recv.ingress_ctl_used, pool_bytes);
	else
		NIC_SUB(nic->recv.ingress_data_used, pool_bytes);
}

/* Seed, Receiving a packet, step 1: charge the ingress pool of the packet's
 * class at its full size on the wire, or drop it. */
static bool ingress_charge(struct nic *nic, bool ctl, uint32_t len)
{
	uint64_t *used = ctl ? &nic->recv.ingress_ctl_used : &nic->recv.ingress_data_used;
	uint64_t size = ctl ? nic->a.ingress_control_pool : nic->a.ingress_data_pool;

	if (*used + len > size) {
		nic->c.rx_drop_ingress_full++;
		return false;
	}
	*used += len;
	return true;
}

static void held_set(struct nic_qp_recv *rq, uint64_t idx, bool on)
{
	uint64_t b = idx & rq->held_mask;
	if (on)
		rq->held[b / 64] |= 1ULL << (b % 64);
	else
		rq->held[b / 64] &= ~(1ULL << (b % 64));
}

static bool held_get(const struct nic_qp_recv *rq, uint64_t idx)
{
	uint64_t b = idx & rq->held_mask;
	return rq->held[b / 64] >> (b % 64) & 1;
}

/* Seed: a packet with the next expected PSN advances it past any packets
 * already received beyond it; a higher PSN is held out of order; one
 * already received is a duplicate.  Returns false for a duplicate. */
static bool track_order(struct nic *nic, struct nic_qp_recv *rq, uint64_t idx)
{
	if (idx < rq->next_expected || (idx > rq->next_expected && held_get(rq, idx))) {
		nic->c.rx_dup_pkts++;
		return false;
	}
	if (idx > rq->next_expected) {
		held_set(rq, idx, true);
		rq->nheld++;
		if (idx > rq->highest_held || rq->nheld == 1)
			rq->highest_held = idx;
		nic->c.rx_ooo_events++;
		return true;
	}
	rq->next_expected++;
	while (rq->nheld && held_get(rq, rq->next_expected)) {
		held_set(rq, rq->next_expected, false);
		NIC_DEC(rq->nheld);
		rq->next_expected++;
	}
	return true;
}

/* Account for the payload: its offset in the message, and its bytes
 * against the pattern where real bytes exist ("nothing lost" is checked). */
static void deliver(struct nic *nic, struct nic_qp_recv *rq, const struct pkt *p, uint32_t pool,
		    ps_t now)
{
	uint64_t index = p->va / WIRE_VA_MSG_STRIDE, offset = p->va % WIRE_VA_MSG_STRIDE;

	if (!rq->dma_known) {
		rq->dma_known = true;
		rq->dma_len = p->dma_len;
		rq->msg_id = (uint32_t)index;
	}
	if (index != rq->msg_id || p->dma_len != rq->dma_len ||
	    offset + p->payload_len > rq->dma_len)
		rq->bad_offset = true;
	if (p->payload)
		rq->pattern_errors +=
		    wire_pattern_check(p->payload, p->payload_len, p->src_ip, p->msn, offset);
	rq->bytes_unique += p->payload_len;
	rq->rcv_units = (rq->rcv_units + (p->payload_len + 255) / 256) & 0xFFFFFF;
	nic->c.rx_data_bytes += p->payload_len;
	nic_pcie_write(nic, p->payload_len, pool, now);
}

static void recv_complete(struct nic *nic, struct nic_qp_recv *rq, ps_t now)
{
	struct nic_msg_info m = {.msg_id = rq->msg_id,
				 .src_ip = rq->peer_ip,
				 .dst_ip = nic->ip,
				 .local_qpn = rq->qpn,
				 .remote_qpn = rq->sender_qpn,
				 .bytes = rq->dma_len};

	rq->recv_complete = true;
	m.verified = !rq->bad_offset && !rq->pattern_errors && rq->bytes_unique == rq->dma_len;
	nic->c.rx_pattern_errors += rq->pattern_errors;
	nic->c.msgs_received++;
	nic_event(nic, now, "RECV_COMPLETE", rq->qpn, rq->peer_ip, rq->sender_qpn, rq->msg_id,
		  rq->dma_len);
	nic->host.completion(nic->host.ctx, RECV_COMPLETE, &m, now);
}

/* Seed, NACKs: a trimmed packet delivers nothing and stays a gap; the NIC
 * counts it, frees its pool space, and NACKs it when its own
 * TrimmingEnabled is true. */
static void rx_trimmed(struct nic *nic, struct nic_qp_recv *rq, const struct pkt *p, ps_t now)
{
	nic->c.rx_trimmed++;
	if (nic->a.trimming)
		nic_send_nack(nic, p, rq->qpn, rq->sender_qpn,
			      p->dscp == nic->a.dscp_trimmed_last_hop ? WIRE_NACK_TRIMMED_LASTHOP
								      : WIRE_NACK_TRIMMED,
			      now);
}

/* §12 rule 17: a gap is a maximal run of missing PSNs below the highest
 * received; does the arrival of idx fill the last missing PSN of a gap
 * that was open when a packet with the ACK-request flag arrived?  Asked
 * before the arrival is recorded. */
static bool closes_marked_gap(const struct nic_qp_recv *rq, uint64_t idx)
{
	if (!rq->ar_marked || !rq->nheld || idx < rq->next_expected || idx >= rq->ar_mark ||
	    held_get(rq, idx))
		return false;
	return (idx == rq->next_expected || held_get(rq, idx - 1)) && held_get(rq, idx + 1);
}

/* Seed, Cumulative and Selective acknowledgements: which answers a data
 * packet in the window draws; the cumulative ACK goes first (§12 rule 3).
 * True when the SACK took p (nic_send_sack_in). */
static bool answer(struct nic *nic, struct nic_qp_recv *rq, struct pkt *p, uint64_t idx,
		   bool completed, bool gap_closed, ps_t now)
{
	bool ar = p->flags & WIRE_BTH_A;
	bool sack = completed || ar || (p->flags & WIRE_BTH_RTX);

	/* §12 rule 5: every data packet in the window and not trimmed counts,
	 * duplicates included, as max(payload, 1,024). */
	rq->coalesce += p->payload_len > 1024 ? p->payload_len : 1024;
	if (rq->coalesce > 4095)
		sack = true;
	if (gap_closed)
		sack = true;
	/* §12 rule 17: every gap open now is marked for a SACK when it closes. */
	if (ar && rq->nheld && (!rq->ar_marked || rq->highest_held > rq->ar_mark)) {
		rq->ar_mark = rq->highest_held;
		rq->ar_marked = true;
	}
	if (ar || completed)
		nic_send_cack(nic, rq, now);
	if (sack)
		nic_send_sack_in(nic, rq, p, idx, now);
	return sack;
}

/* §12 rule 11: a closed record answers a later packet of its QP as the
 * open QP would have: a trimmed packet draws its NACK; any other is a
 * duplicate that draws the cumulative ACK, plus a SACK when it carries the
 * ACK-request or retransmit flag.  The record stands in for the QP, with
 * nothing held. */
static void rx_closed(struct nic *nic, const struct nic_closed *c, const struct pkt *p, ps_t now)
{
	static uint64_t nothing_held[1];
	struct nic_qp_recv rq = {.nic = nic,
				 .qpn = c->qpn,
				 .peer_ip = c->peer_ip,
				 .sender_qpn = c->sender_qpn,
				 .dest = nic_dest_get(nic, c->peer_ip),
				 .next_expected = (1ULL << 32) + c->cack_psn + 1,
				 .held = nothing_held,
				 .held_mask = 63,
				 .recv_complete = true,
				 .rcv_units = c->rcv_units};
	uint64_t idx =
	    rq.next_expected + wire_psn_diff(p->psn, (uint32_t)(rq.next_expected & WIRE_PSN_MASK));

	nic_monitor(nic, now, false, p, c->qpn, c->sender_qpn, 0);
	if (!rq.dest)
		return;
	if (nic_is_trimmed(nic, p)) {
		rx_trimmed(nic, &rq, p, now);
	} else {
		nic->c.rx_dup_pkts++;
		nic_send_cack(nic, &rq, now);
		if (p->flags & (WIRE_BTH_A | WIRE_BTH_RTX))
			nic_send_sack(nic, &rq, p, idx, now);
	}
	nic_dest_put(nic, rq.dest); /* a record holds no destination */
}

bool nic_rx_data(struct nic *nic, struct pkt *p, ps_t now)
{
	uint32_t len = p->sent_len; /* nic_receive_sent */
	bool ctl = control_class(nic, p->dscp);
	struct nic_qp_recv *rq;
	bool created, gap_closed, completed, taken;
	int64_t d;
	uint64_t idx;

	nic->c.rx_data_pkts++;
	if (!ingress_charge(nic, ctl, len))
		return false;
	rq = nic_recv_find_or_create(nic, p, now, &created);
	if (!rq) {
		const struct nic_closed *c = created ? NULL : nic_closed_find(nic, p);
		nic_ingress_release(nic, len, ctl);
		if (c)
			rx_closed(nic, c, p, now);
		else if (!created)
			nic->c.rx_drop_unknown_qp++;
		return false;
	}
	nic_monitor(nic, now, false, p, rq->qpn, rq->sender_qpn, 0);
	d = wire_psn_diff(p->psn, (uint32_t)(rq->next_expected & WIRE_PSN_MASK));
	/* Seed, step 3: more than MaxPSNRange beyond the cumulative PSN. */
	if (d >= (int64_t)nic->a.max_psn_range) {
		nic->c.rx_drop_psn_window++;
		nic_ingress_release(nic, len, ctl);
		nic_send_nack(nic, p, rq->qpn, rq->sender_qpn, WIRE_NACK_PSN_OOR_WINDOW, now);
		return false;
	}
	if (nic_is_trimmed(nic, p)) {
		nic_ingress_release(nic, len, ctl);
		rx_trimmed(nic, rq, p, now);
		return false;
	}
	if (d < 0 && (uint64_t)-d > rq->next_expected) { /* older than the QP */
		nic->c.rx_dup_pkts++;
		nic_ingress_release(nic, len, ctl);
		return false;
	}
	idx = rq->next_expected + d;
	gap_closed = closes_marked_gap(rq, idx);
	nic_recv_touch(nic, rq, now);
	if (!track_order(nic, rq, idx)) {
		nic_ingress_release(nic, len, ctl);
	} else {
		if (ctl) /* a data packet marked control: its pool is freed now */
			nic_ingress_release(nic, len, ctl);
		/* One call, so that GCC inlines it (issue 16: the call cost
		 * some 25 instructions a data packet, callgrind at 8 hosts). */
		deliver(nic, rq, p, ctl ? 0 : len, now);
	}
	if (p->opcode == WIRE_OP_WRITE_LAST || p->opcode == WIRE_OP_WRITE_ONLY) {
		rq->last_idx = idx;
		rq->last_known = true;
	}
	completed = !rq->recv_complete && rq->last_known && rq->next_expected > rq->last_idx;
	if (completed)
		recv_complete(nic, rq, now);
	if (rq->ar_marked && rq->next_expected > rq->ar_mark)
		rq->ar_marked = false; /* every marked gap has closed */
	taken = answer(nic, rq, p, idx, completed, gap_closed, now);
	if (completed)
		nic_recv_close(nic, rq, now);
	return taken;
}
