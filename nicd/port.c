/* nicd/port.c — the NIC's network port (seed, Packets on the wire; Traffic
 * classes; docs/protocol.md §8).
 *
 * Two egress queues: control (ACK, SACK, NACK) is sent ahead of waiting
 * data.  The port (core/egress.h) serializes a frame at the link's rate
 * with no interframe gap and hands it to the host as that starts; it
 * reaches the far end one link delay after its serialization ends.  When
 * it ends, the packet's egress reservation is released and the sending
 * side is told (its retransmission timer starts). */
#include "nic_impl.h"

static void port_start(struct nic *nic, ps_t now);
static void serialization_end(void *arg, ps_t now);

void nic_port_init(struct nic *nic, uint64_t rate, struct link_end *link)
{
	struct nic_port *port = &nic->port;

	port->data_pool.size = nic->a.egress_data_pool;
	port->ctl_pool.size = nic->a.egress_control_pool;
	egress_init(&port->out, rate, link);
	port->monitor = nic->a.monitor;
	port->timers = nic->timers;
	port->timer_first_up = time_add(nic_timer_duration(&nic->a, 1), PS_PER_US - 1);
}

/* A queued frame's bytes on the wire are kept in its engine field after
 * the meta, not in it: the meta is passed by value, in two registers while
 * it is 16 bytes. */
#define QUEUED_LEN_AT sizeof(struct nic_pkt_meta)
_Static_assert(QUEUED_LEN_AT + sizeof(uint32_t) <= sizeof(((struct pkt *)0)->engine),
	       "the queued length fits after the meta");

static uint32_t queued_len(const struct pkt *p)
{
	uint32_t len;

	memcpy(&len, p->engine + QUEUED_LEN_AT, sizeof len);
	return len;
}

static void enqueue(struct nic_port *port, enum egress_class k, struct pkt *p, uint32_t len)
{
	NIC_INVARIANT(len == wire_len(p));
	memcpy(p->engine + QUEUED_LEN_AT, &len, sizeof len);
	egress_enqueue(&port->queues, k, p, len);
}

void nic_port_free(struct nic *nic)
{
	uint32_t len;
	enum egress_class k;
	struct pkt *p;

	while ((p = egress_dequeue(&nic->port.queues, queued_len, &len, &k)))
		pkt_put(nic->pool, p);
}

bool nic_port_reserve(struct nic *nic, uint32_t len)
{
	return egress_reserve(&nic->port.data_pool, len);
}

void nic_port_unreserve(struct nic *nic, uint32_t len)
{
	egress_release(&nic->port.data_pool, len);
}

void nic_port_send_data(struct nic *nic, struct pkt *p, uint32_t len, ps_t now)
{
	struct nic_port *port = &nic->port;

	enqueue(port, EGRESS_DATA, p, len);
	if (!port->busy)
		port_start(nic, now);
}

/* Inline (across files, by the link-time optimizer) in a SACK's and a
 * cumulative ACK's sending: the calls cost some 25 instructions a data
 * packet (issue 16, callgrind at 8 hosts). */
inline __attribute__((always_inline)) void nic_port_send_control(struct nic *nic, struct pkt *p,
								 ps_t now)
{
	struct nic_port *port = &nic->port;
	uint32_t len = wire_len(p);

	if (!egress_reserve(&port->ctl_pool, len)) {
		nic->c.tx_drop_ctl_pool++;
		pkt_put(nic->pool, p);
		return;
	}
	enqueue(port, EGRESS_CONTROL, p, len);
	if (!port->busy)
		port_start(nic, now);
}

void nic_port_set_down(struct nic *nic, bool down)
{
	nic->port_down = down;
}

/* Seed, Egress buffer: the transmit pass tries again 15 ns after the data
 * pool drains from above half its size to half or less. */
static inline void release_data(struct nic *nic, uint32_t len, ps_t now)
{
	struct egress_pool *pool = &nic->port.data_pool;
	uint64_t half = pool->size / 2;
	bool above = pool->used > half;

	egress_release(pool, len);
	if (above && pool->used <= half && nic_tx_blocked(nic))
		nic_tx_kick(nic, now + 15 * PS_PER_NS);
}

/* A data packet's last bit has left: its timer starts, and the first
 * transmission of a message's last packet is SEND_COMPLETE (§10). */
static void data_sent(struct nic *nic, const struct nic_sent *f, ps_t now)
{
	release_data(nic, f->len, now);
	nic->c.tx_data_pkts++;
	nic->c.tx_data_bytes += f->payload_len;
	if (f->flags & WIRE_BTH_A)
		nic->c.tx_ar_pkts++;
	nic_send_serialized(nic, f->sq, f->meta, f->seg, now);
}

/* A frame the link did not carry, counted as its serialization ends. */
static __attribute__((noinline)) void count_verdict(struct nic *nic, enum link_verdict v)
{
	switch (v) {
	case LINK_PASS:
		break;
	case LINK_LOST:
		nic->c.tx_drop_link_lost++;
		break;
	case LINK_DOWN:
		nic->c.tx_drop_link_down++;
		break;
	case LINK_DROP_RULE:
		nic->c.tx_drop_rule++;
		break;
	}
}

/* Control ahead of waiting data (seed, Packet marking).  The frame is
 * handed over as its serialization starts, with its arrival time
 * (core/egress.h); a port set down after that does not recall it.
 * Inline in a frame's end, which starts nearly every frame: the two calls
 * cost some 35 instructions a frame (issue 16, callgrind at 8 hosts). */
static inline __attribute__((always_inline)) void port_next(struct nic *nic, ps_t now)
{
	struct nic_port *port = &nic->port;
	struct nic_sent *f = &port->sent;
	enum egress_class k;
	uint32_t len;
	struct pkt *p = egress_dequeue(&port->queues, queued_len, &len, &k);
	ps_t arrival;

	if (!p)
		return;
	if (k == EGRESS_DATA) {
		struct nic_qp_send *sq = nic_send_on_wire(nic, nic_pkt_meta(p), f->sq, now);
		*f = (struct nic_sent){.len = len,
				       .payload_len = p->payload_len,
				       .dqpn = p->dqpn,
				       .opcode = p->opcode,
				       .flags = p->flags,
				       .meta = nic_pkt_meta(p),
				       .sq = sq,
				       .seg = nic_pkt_seg(p)};
	} else {
		/* A control frame's end reads its length, opcode and, for the
		 * monitor, its QP numbers; it keeps the last data frame's
		 * sending QP (port.h).  Two a data packet, each some five
		 * stores fewer (issue 16, callgrind at 8 hosts: 11
		 * instructions a packet fewer). */
		f->len = len;
		f->dqpn = p->dqpn;
		f->opcode = p->opcode;
		f->meta = nic_pkt_meta(p);
	}
	port->busy = true;
	if (port->monitor && nic->rec.monitor) /* port.h: not the attributes' line */
		port->sent_copy = *p;
	port->down_at_start = nic->port_down;
	port->verdict = egress_start(&port->out, p, f->len, nic->port_down, now, &arrival);
	if (port->verdict == LINK_PASS) {
		p->sent_len = (uint16_t)len;
		nic->host.transmit(nic->host.ctx, p, arrival);
	} else {
		pkt_put(nic->pool, p);
	}
	events_schedule(nic->ev, port->out.busy_until, serialization_end, nic);
}

/* A frame's start anywhere else: the port was idle, or set down. */
static __attribute__((noinline)) void port_start(struct nic *nic, ps_t now)
{
	port_next(nic, now);
}

/* The frame's last bit has left: what it held of the egress pools is free,
 * and a frame the link lost is counted (seed, Packets on the wire). */
static void serialization_end(void *arg, ps_t now)
{
	struct nic *nic = arg;
	struct nic_port *port = &nic->port;
	const struct nic_sent *f = &port->sent;

	port->busy = false;
	if (wire_kind_of(f->opcode) == WIRE_KIND_DATA) {
		data_sent(nic, f, now);
	} else if (f->opcode == WIRE_OP_PROBE) { /* data class, no PSN */
		release_data(nic, f->len, now);
		nic->c.tx_probe++;
	} else {
		egress_release(&port->ctl_pool, f->len);
	}
	if (port->monitor) /* nic_monitor, from the port's line */
		nic_monitor(nic, now, true, &port->sent_copy, f->meta.src_qpn, f->dqpn, 0);
	if (port->down_at_start) { /* set down by the control socket: not the link's window */
		nic->c.tx_drop_port_down++;
		port_start(nic, now);
		return;
	}
	if (port->verdict != LINK_PASS) /* the clean link's case costs a test */
		count_verdict(nic, port->verdict);
	port_next(nic, now);
}

void nic_port_forget_sender(struct nic *nic, const struct nic_qp_send *sq)
{
	if (nic->port.sent.sq == sq)
		nic->port.sent.sq = NULL;
}

ps_t nic_tx_floor(const struct nic *nic, ps_t from)
{
	return egress_tx_floor(&nic->port.out, from);
}

/* The control pool holds exactly the control frames queued and the one on
 * the wire; the data pool never holds more than its size, and at least
 * the data-class frames queued (the rest is reserved for fetches on their
 * way and the frame on the wire). */
const char *nic_port_check(const struct nic *nic, char *why, size_t len)
{
	const struct nic_port *port = &nic->port;
	const struct egress_queue *q = port->queues.q;
	uint64_t bytes[EGRESS_NCLASSES] = {0}, ctl = 0;

	for (int k = 0; k < EGRESS_NCLASSES; k++)
		for (const struct pkt *p = q[k].head; p; p = p->next)
			bytes[k] += wire_len(p);
	if (port->busy && wire_kind_of(port->sent.opcode) != WIRE_KIND_DATA &&
	    port->sent.opcode != WIRE_OP_PROBE)
		ctl = port->sent.len;
	if (bytes[EGRESS_CONTROL] != q[EGRESS_CONTROL].bytes ||
	    bytes[EGRESS_DATA] != q[EGRESS_DATA].bytes)
		snprintf(why, len, "port queues hold %llu + %llu bytes, counted %llu + %llu",
			 (unsigned long long)bytes[EGRESS_CONTROL],
			 (unsigned long long)bytes[EGRESS_DATA],
			 (unsigned long long)q[EGRESS_CONTROL].bytes,
			 (unsigned long long)q[EGRESS_DATA].bytes);
	else if (port->ctl_pool.used != bytes[EGRESS_CONTROL] + ctl)
		snprintf(why, len,
			 "egress control pool used %llu, control bytes queued or on the wire %llu",
			 (unsigned long long)port->ctl_pool.used,
			 (unsigned long long)(bytes[EGRESS_CONTROL] + ctl));
	else if (port->data_pool.used > port->data_pool.size ||
		 port->data_pool.used < bytes[EGRESS_DATA])
		snprintf(why, len, "egress data pool used %llu, size %llu, data bytes queued %llu",
			 (unsigned long long)port->data_pool.used,
			 (unsigned long long)port->data_pool.size,
			 (unsigned long long)bytes[EGRESS_DATA]);
	else
		return NULL;
	return why;
}
