/* nicd/ack.c — the receiving side's answers (recv.h): cumulative ACKs,
 * SACKs and NACKs, built for the packet that draws them and queued in the
 * control class (seed: Cumulative acknowledgements; Selective
 * acknowledgements; NACKs; RTT measurement; docs/protocol.md §§1, 4, 12).
 * The sender applies them in recovery.c. */
#include "nic_impl.h"

/* ---- receiver: building ------------------------------------------------ */

/* Inline in its two callers, a data packet's SACK and cumulative ACK: the
 * call cost some 20 of its 69 instructions (issue 16, callgrind). */
static inline __attribute__((always_inline)) struct pkt *control_pkt(struct nic *nic,
								     struct nic_qp_recv *rq,
								     uint8_t opcode, uint16_t sport,
								     struct pkt *reuse)
{
	struct pkt *p = reuse;

	if (reuse)
		nic_pkt_renew(nic, p, rq->peer_ip, opcode, sport);
	else
		p = nic_pkt_new(nic, rq->peer_ip, opcode, sport);
	if (p) {
		p->dscp = nic->a.dscp_control;
		p->ecn = WIRE_ECN_NOT_ECT;
		p->dqpn = rq->sender_qpn;
		p->psn = (uint32_t)((rq->next_expected - 1) & WIRE_PSN_MASK);
		nic_pkt_meta_set(p, (struct nic_pkt_meta){.src_qpn = rq->qpn});
	}
	return p;
}

/* Seed, Cumulative acknowledgements: the highest PSN received in order; its
 * source port from this NIC's own rotation for the peer. */
inline __attribute__((always_inline)) void nic_send_cack(struct nic *nic, struct nic_qp_recv *rq,
							 ps_t now)
{
	struct pkt *p =
	    control_pkt(nic, rq, WIRE_OP_ACK, nic_spray_next(nic, rq->dest, rq->qpn), NULL);

	if (!p)
		return;
	p->u.aeth.syndrome = WIRE_AETH_ACK;
	p->u.aeth.msn = rq->recv_complete ? 1 : 0;
	nic->c.tx_ack++;
	nic_port_send_control(nic, p, now);
}

/* The held bits of PSNs base .. base + 63 (base >= the next expected PSN),
 * read as two words of the ring; the ring has at least MaxPSNRange + 1
 * bits and nothing is held at or beyond `limit`, so bits past it (which the
 * ring aliases to earlier PSNs) are masked off. */
static inline uint64_t block_bitmap(const struct nic_qp_recv *rq, uint64_t base, uint64_t limit)
{
	uint64_t words = (rq->held_mask + 1) / 64, b = base & rq->held_mask;
	uint64_t w = b / 64, o = b % 64, bits;

	if (base >= limit)
		return 0;
	bits = rq->held[w] >> o;
	if (o) /* words is a power of two (recv_alloc_held) */
		bits |= rq->held[(w + 1) & (words - 1)] << (64 - o);
	if (limit - base < 64)
		bits &= (1ULL << (limit - base)) - 1;
	return bits;
}

/* docs/protocol.md §12 rule 4: the 64-PSN block, counted from cumulative PSN + 1,
 * that holds the PSN that drew the SACK.  A SACK drawn by a PSN at or below
 * the cumulative PSN reports the held blocks in turn, so that successive
 * SACKs cover every PSN held (seed, Selective acknowledgements).  sack_offset
 * is 16 bits: blocks beyond 32,767 PSNs cannot be named.  Inline by
 * force: with two copies of the SACK's build (send_sack) GCC took it out
 * of line, some 24 instructions a packet. */
static inline __attribute__((always_inline)) uint32_t sack_block(struct nic_qp_recv *rq,
								 uint64_t drawn_idx, uint64_t limit)
{
	uint64_t first = rq->next_expected, nblocks = (limit - first + 63) / 64, b, last;

	if (drawn_idx >= first)
		return (uint32_t)((drawn_idx - first) / 64);
	if (!rq->nheld || !nblocks)
		return 0;
	/* blocks sack_block, sack_block + 1, ... modulo nblocks, one division.
	 * Nothing is held past highest_held: the blocks after its own are
	 * empty, so the turn goes on from block 0 without looking at them. */
	b = rq->sack_block % nblocks;
	last = (rq->highest_held - first) / 64;
	if (last + 1 < nblocks) {
		nblocks = last + 1;
		if (b > last)
			b = 0;
	}
	for (uint64_t n = 0; n < nblocks; n++, b = b + 1 == nblocks ? 0 : b + 1) {
		if (block_bitmap(rq, first + 64ULL * b, limit)) {
			rq->sack_block = (uint32_t)b + 1;
			return (uint32_t)b;
		}
	}
	return 0;
}

/* Seed, RTT measurement: the service time is the drawing packet's time at
 * the link rate plus the bytes waiting ahead in the control queue, rounded
 * down to 128 ns steps. */
static uint16_t service_time(const struct nic *nic, const struct pkt *drawn)
{
	uint64_t bytes = drawn->sent_len + nic_port_ctl_queued(&nic->port); /* its wire_len */
	/* The port's own serialization, egress_serialization's: without
	 * time_serialize's 128-bit division when the rate allows, and with
	 * the PCIe link's copy of ps_per_byte, which the drawing packet's
	 * write has just read, not the port's line it is on: that is read
	 * only when the SACK finds the port idle (issue 16, callgrind at
	 * 1,024 hosts with pcie.h's copy: 123.64 -> 123.53 LL misses a data
	 * packet). */
	uint32_t ppb = nic->pcie.ps_per_byte;
	ps_t t =
	    bytes <= UINT32_MAX && ppb ? bytes * ppb : time_serialize(bytes, nic->port.out.rate);
	return (uint16_t)(t / (128 * PS_PER_NS));
}

static int16_t clamp16(int64_t v)
{
	return (int16_t)(v > INT16_MAX ? INT16_MAX : v < INT16_MIN ? INT16_MIN : v);
}

/* With `reuse` (drawn), the SACK is built in the drawing packet itself,
 * which the caller is done with (the packet is the SACK's then, whatever
 * becomes of it): what the SACK takes of it is read first, after the one
 * call that may be out of line (nic_spray_walk), so that it stays in
 * registers. */
static inline __attribute__((always_inline)) void send_sack(struct nic *nic, struct nic_qp_recv *rq,
							    const struct pkt *drawn,
							    uint64_t drawn_idx, struct pkt *reuse,
							    ps_t now)
{
	uint16_t sport = nic_spray_next(nic, rq->dest, rq->qpn);
	uint8_t m = drawn->ecn == WIRE_ECN_CE ? WIRE_M_SKIP_ONCE : WIRE_M_NONE;
	bool ts = drawn->flags & WIRE_BTH_TS;
	uint16_t echo = drawn->sport, ts_echo = drawn->tseth_time, svc = service_time(nic, drawn);
	struct pkt *p = control_pkt(nic, rq, WIRE_OP_SACK, sport, reuse);
	uint64_t cack1 = rq->next_expected, limit = cack1 + nic->a.max_psn_range;
	struct wire_seth *s;
	uint32_t b;

	if (!p)
		return;
	s = &p->u.sack.seth;
	b = sack_block(rq, drawn_idx, limit);
	if (b > 511)
		b = 511;
	s->m = m;
	s->ack_psn_offset = clamp16((int64_t)drawn_idx - (int64_t)(cack1 - 1));
	s->entropy_echo = echo;
	s->responder_qpn = rq->qpn;
	s->cack_psn = p->psn;
	s->cc_type = 1;
	s->mpr = nic->sack_mpr;
	s->sack_offset = (int16_t)(1 + 64 * b);
	/* Nothing held (nheld counts the ring's bits, nic_check), the block
	 * is empty: most SACKs, in order, spared the ring's two words
	 * (issue 16: some 20 instructions a data packet at 8 hosts). */
	s->bitmap = rq->nheld ? block_bitmap(rq, cack1 + 64ULL * b, limit) : 0;
	if (ts)
		p->u.sack.cc.ts_echo = ts_echo;
	p->u.sack.cc.service_time = svc;
	p->u.sack.cc.rcv_bytes = rq->rcv_units;
	rq->coalesce = 0;
	nic->c.tx_sack++;
	nic_port_send_control(nic, p, now);
}

void nic_send_sack(struct nic *nic, struct nic_qp_recv *rq, const struct pkt *drawn,
		   uint64_t drawn_idx, ps_t now)
{
	send_sack(nic, rq, drawn, drawn_idx, NULL, now);
}

/* A data packet's SACK costs a packet neither taken from the pool nor
 * given back (issue 16, callgrind at 8 hosts: 9 instructions a packet
 * fewer).  Out of line, said: inline in the frame's receipt, its one
 * caller, it cost 12 instructions a packet more. */
__attribute__((noinline)) void nic_send_sack_in(struct nic *nic, struct nic_qp_recv *rq,
						struct pkt *drawn, uint64_t drawn_idx, ps_t now)
{
	send_sack(nic, rq, drawn, drawn_idx, drawn, now);
}

/* Seed, NACKs: a NACK reflects the entropy value of the packet that drew
 * it, names its PSN, and leaves at once in the control class. */
void nic_send_nack(struct nic *nic, const struct pkt *drawn, uint32_t responder_qpn,
		   uint32_t sender_qpn, uint8_t code, ps_t now)
{
	struct pkt *p = nic_pkt_new(nic, drawn->src_ip, WIRE_OP_NACK, drawn->sport);

	if (!p)
		return;
	p->dscp = nic->a.dscp_control;
	p->dqpn = sender_qpn;
	p->psn = drawn->psn;
	nic_pkt_meta_set(p, (struct nic_pkt_meta){.src_qpn = responder_qpn});
	p->u.neth.code = code;
	p->u.neth.entropy_echo = drawn->sport;
	p->u.neth.responder_qpn = responder_qpn;
	p->u.neth.nack_psn = drawn->psn;
	p->u.neth.cc = 0x10;
	if (drawn->flags & WIRE_BTH_TS)
		p->u.neth.ts_echo = drawn->tseth_time;
	nic->c.tx_nack++;
	nic_port_send_control(nic, p, now);
}
