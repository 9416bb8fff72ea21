/* nicd/port.h — the NIC's network port (seed, Egress buffer; Packet
 * marking; Packets on the wire; docs/protocol.md §8): its egress pools,
 * its two classes of queues (control ahead of waiting data) and the egress
 * port of the core (core/egress.h) that serializes, asks the link and
 * hands each frame over as its serialization starts.
 *
 * port.c is the only code that changes a struct nic_port.  The sending
 * side reserves a data packet's room before its fetch (nic_port_reserve;
 * probes and re-requests alike) and queues the packet when it is built
 * (nic_port_send_data); the receiving side queues acknowledgements and
 * NACKs, charged to the control pool (nic_port_send_control).  When a
 * frame's serialization ends, its room is released, a data packet's
 * retransmission timer starts (nic_seg_on_wire) and the transmit pass is
 * retried if the data pool drained (seed, Egress buffer). */
#ifndef NICD_PORT_H
#define NICD_PORT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/egress.h"

struct nic;
struct nic_qp_send;

/* What a NIC keeps of a frame it sends, in struct pkt's engine field:
 * never on the wire, read back when the frame leaves the port and by the
 * monitor.  memcpy in and out: the field is bytes to everyone else. */
struct nic_pkt_meta {
	uint64_t seg_idx;   /* the sender's segment index (PSN before wrap) */
	uint32_t src_qpn;   /* this NIC's own QP number */
	uint16_t tx_count;  /* which transmission of its PSN (1 = first) */
	uint8_t rtx_origin; /* enum rtx_origin: why this transmission happened */
};

struct nic_port {
	struct egress_pool data_pool, ctl_pool; /* EgressData/ControlPoolSize */
	struct egress_classes queues;
	bool busy;
	bool down_at_start;	   /* nic->port_down when the frame on the wire started */
	bool monitor;		   /* nic->a.monitor, the end's and the start's test */
	enum link_verdict verdict; /* the link's, counted at the end */
	/* The frame being serialized was handed to the host at its start
	 * (core/egress.h); its end releases its egress room and starts its
	 * timer from what is kept of it here, and writes its monitor row
	 * from a copy kept only while the monitor is on.  A control frame
	 * sets only len, dqpn, opcode and meta (port_next). */
	struct nic_sent {
		uint32_t len, payload_len, dqpn;
		uint8_t opcode, flags;
		struct nic_pkt_meta meta;
		/* a data frame's sending side, or NULL; a control frame's
		 * is the last data frame's: the next data frame's start asks
		 * it before the QP table (nic_send_on_wire).  An open QP
		 * always: nic_port_forget_sender clears it at the close. */
		struct nic_qp_send *sq;
		struct nic_seg *seg; /* ... and its segment (nic_pkt_seg) */
	} sent;
	struct egress out; /* serialization, the link's verdict, hand-over */
	/* What a data frame's end reads of the rest of the NIC to start its
	 * retransmission timer, copied at nic_port_init: the timers and the
	 * first timer's duration (k = 1, nic_timer_duration).  With `monitor`,
	 * the end reads neither the NIC's address line nor its attributes'
	 * first line, each a miss at most ends at 1,024 hosts (callgrind: 58k
	 * each in 131k frame ends; 127.5 LL misses a data packet, was 128.6;
	 * issue 16). */
	struct timers *timers;
	ps_t timer_first_up;  /* ... plus a microsecond less 1 ps (nic_timer_start) */
	struct pkt sent_copy; /* last: no frame reads it with the monitor off */
};

/* The port at `rate` on `link`, its pools sized from the attributes. */
void nic_port_init(struct nic *nic, uint64_t rate, struct link_end *link);
/* Give back every frame still queued. */
void nic_port_free(struct nic *nic);

/* Reserve len bytes of the data pool for a frame yet to be queued; false
 * when it is full (the caller tries again later).  nic_port_unreserve
 * gives back room for a frame that will never be queued. */
bool nic_port_reserve(struct nic *nic, uint32_t len);
void nic_port_unreserve(struct nic *nic, uint32_t len);

/* Queue a data-class frame (data, probe) of len bytes on the wire, whose
 * room is reserved. */
void nic_port_send_data(struct nic *nic, struct pkt *p, uint32_t len, ps_t now);
/* Queue a control frame (ACK, SACK, NACK), charged to the control pool,
 * or dropped and counted (tx_drop_ctl_pool) when it is full. */
void nic_port_send_control(struct nic *nic, struct pkt *p, ps_t now);

/* Bytes waiting in the control queue (a SACK's service time, seed: RTT
 * measurement). */
static inline uint64_t nic_port_ctl_queued(const struct nic_port *port)
{
	return port->queues.q[EGRESS_CONTROL].bytes;
}

/* A sending side closes: the frame on the wire does not tell it its end. */
void nic_port_forget_sender(struct nic *nic, const struct nic_qp_send *sq);

/* The port's own invariants: NULL, or what is broken, written in why. */
const char *nic_port_check(const struct nic *nic, char *why, size_t len);

#endif
