/* nicd/port.c — the NIC's network port (seed, Packets on the wire; Traffic
 * classes; docs/protocol.md §8).
 *
 * Two egress queues: control (ACK, SACK, NACK) is sent ahead of waiting
 * data.  A frame is serialized at the link's rate with no interframe gap,
 * and reaches the far end one link delay after its serialization ends.
 * When it ends, the packet's egress reservation is released and a data
 * packet's retransmission timer starts. */
#include "nic_impl.h"

static void port_start(struct nic *nic, ps_t now);

static void enqueue(struct pkt **head, struct pkt **tail, struct pkt *p)
{
	p->next = NULL;
	if (*tail)
		(*tail)->next = p;
	else
		*head = p;
	*tail = p;
}

static struct pkt *dequeue(struct pkt **head, struct pkt **tail)
{
	struct pkt *p = *head;

	if (p) {
		*head = p->next;
		if (!*head)
			*tail = NULL;
		p->next = NULL;
	}
	return p;
}

/* Queue a frame for the port.  Data frames have their egress room reserved
 * already (before their fetch); control frames are charged here to the
 * control pool, and dropped, counted, when it is full. */
void nic_port_send(struct nic *nic, struct pkt *p, bool control, ps_t now)
{
	struct nic_port *port = &nic->port;

	if (control) {
		uint32_t len = wire_len(p);
		if (nic->egress_ctl_used + len > nic->a.egress_control_pool) {
			nic->c.tx_drop_ctl_pool++;
			pkt_put(nic->pool, p);
			return;
		}
		nic->egress_ctl_used += len;
		port->ctl_queued += len;
		enqueue(&port->ctl_head, &port->ctl_tail, p);
	} else {
		enqueue(&port->data_head, &port->data_tail, p);
	}
	if (!port->busy)
		port_start(nic, now);
}

/* The sending side of the data packet p, when it is still open. */
static struct nic_seg *seg_of(struct nic *nic, const struct pkt *p)
{
	struct nic_pkt_meta m = nic_pkt_meta(p);
	struct nic_qp_send *sq = hmap_get(&nic->send_qps, m.src_qpn);
	struct nic_seg *s;

	if (!sq || sq->error)
		return NULL;
	s = nic_seg(sq, m.seg_idx);
	return s->idx == m.seg_idx ? s : NULL;
}

/* Seed, Egress buffer: the transmit pass tries again 15 ns after the data
 * pool drains from above half its size to half or less. */
static void release_data(struct nic *nic, uint32_t len, ps_t now)
{
	uint64_t half = nic->a.egress_data_pool / 2;
	bool above = nic->egress_data_used > half;

	NIC_SUB(nic->egress_data_used, len);
	if (above && nic->egress_data_used <= half && nic->pass_blocked)
		nic_tx_kick(nic, now + 15 * PS_PER_NS);
}

/* A data packet's last bit has left: its timer starts, and the first
 * transmission of a message's last packet is SEND_COMPLETE (§10). */
static void data_sent(struct nic *nic, struct pkt *p, ps_t now)
{
	struct nic_seg *s = seg_of(nic, p);
	struct nic_pkt_meta m = nic_pkt_meta(p);

	release_data(nic, wire_len(p), now);
	nic->c.tx_data_pkts++;
	nic->c.tx_data_bytes += p->payload_len;
	if (p->flags & WIRE_BTH_A)
		nic->c.tx_ar_pkts++;
	if (!s || m.rtx_origin == RTX_REREQUEST)
		return;
	if (s->state == SEG_EGRESS) {
		s->state = SEG_OUTSTANDING;
		nic_timer_start(nic, s, now);
	}
	if (m.tx_count == 1 && s->idx + 1 == s->sq->npkts && !s->sq->send_complete)
		nic_send_complete(nic, s->sq, now);
}

static void serialization_end(void *arg, ps_t now)
{
	struct nic *nic = arg;
	struct nic_port *port = &nic->port;
	struct pkt *p = port->on_wire;
	uint32_t qpn = nic_pkt_meta(p).src_qpn;

	port->on_wire = NULL;
	port->busy = false;
	if (wire_is_data(p)) {
		data_sent(nic, p, now);
	} else if (p->opcode == WIRE_OP_PROBE) { /* data class, no PSN */
		release_data(nic, wire_len(p), now);
		nic->c.tx_probe++;
	} else {
		NIC_SUB(nic->egress_ctl_used, wire_len(p));
	}
	nic_monitor(nic, now, true, p, qpn, p->dqpn, 0);
	if (port->down) { /* set down by the control socket: not the link's window */
		nic->c.tx_drop_port_down++;
		pkt_put(nic->pool, p);
		port_start(nic, now);
		return;
	}
	switch (link_verdict(port->link, p, nic->port.on_wire_start, now)) {
	case LINK_PASS:
		nic->host.transmit(nic->host.ctx, p, now + port->delay);
		break;
	case LINK_LOST:
		nic->c.tx_drop_link_lost++;
		pkt_put(nic->pool, p);
		break;
	case LINK_DOWN:
		nic->c.tx_drop_link_down++;
		pkt_put(nic->pool, p);
		break;
	case LINK_DROP_RULE:
		nic->c.tx_drop_rule++;
		pkt_put(nic->pool, p);
		break;
	}
	port_start(nic, now);
}

/* Seed, Packets on the wire: at the port's rate, no interframe gap.  When
 * 8 s / rate is whole picoseconds the product is time_serialize's exact
 * result, without its 128-bit division. */
static ps_t serialization_time(const struct nic_port *port, uint32_t len)
{
	return port->ps_per_byte ? len * port->ps_per_byte : time_serialize(len, port->rate);
}

ps_t nic_tx_floor(const struct nic *nic, ps_t from)
{
	const struct nic_port *port = &nic->port;

	if (port->on_wire)
		return port->on_wire_start + serialization_time(port, wire_len(port->on_wire)) +
		       port->delay;
	return from + serialization_time(port, WIRE_MIN_LEN) + port->delay;
}

/* Control ahead of waiting data (seed, Packet marking). */
static void port_start(struct nic *nic, ps_t now)
{
	struct nic_port *port = &nic->port;
	struct pkt *p = dequeue(&port->ctl_head, &port->ctl_tail);

	if (p) {
		NIC_SUB(port->ctl_queued, wire_len(p));
	} else if (!(p = dequeue(&port->data_head, &port->data_tail))) {
		return;
	} else {
		struct nic_seg *s = seg_of(nic, p);
		/* §12 rule 9: RTT is measured from the start of the packet's
		 * last serialization. */
		if (s && nic_pkt_meta(p).rtx_origin != RTX_REREQUEST)
			s->tx_start = now;
	}
	port->busy = true;
	port->on_wire = p;
	port->on_wire_start = now;
	events_schedule(nic->ev, now + serialization_time(port, wire_len(p)), serialization_end,
			nic);
}
