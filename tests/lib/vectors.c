/* tests/lib/vectors.c — see vectors.h. */
#include "vectors.h"

#include <string.h>

void vec_base(struct pkt *p, bool from_a, uint8_t op, uint16_t sport, uint32_t dqpn, uint32_t psn)
{
	static const uint8_t mac_a[6] = {2, 0, 0, 0, 0, 1}, mac_b[6] = {2, 0, 0, 0, 0, 2};

	memset(p, 0, sizeof *p);
	memcpy(p->src_mac, from_a ? mac_a : mac_b, 6);
	memcpy(p->dst_mac, from_a ? mac_b : mac_a, 6);
	p->src_ip = from_a ? VEC_IP_A : VEC_IP_B;
	p->dst_ip = from_a ? VEC_IP_B : VEC_IP_A;
	p->ttl = WIRE_TTL;
	p->dport = WIRE_ROCE_PORT;
	p->dscp = from_a ? 2 : 17;
	p->ecn = from_a ? WIRE_ECN_ECT0 : WIRE_ECN_NOT_ECT;
	p->opcode = op;
	p->sport = sport;
	p->dqpn = dqpn;
	p->psn = psn;
}

void vec_data(struct pkt *p, uint8_t op, uint16_t sport, uint8_t flags, uint32_t dqpn, uint32_t psn,
	      uint16_t msn, uint32_t msg_index, uint64_t offset, uint32_t len, uint32_t dma_len)
{
	vec_base(p, true, op, sport, dqpn, psn);
	p->flags = flags;
	p->msn = msn;
	p->va = wire_va(msg_index, offset);
	p->msg_offset = offset;
	p->payload_len = len;
	p->dma_len = dma_len;
}

void vectors_pkt(int n, struct pkt *p)
{
	switch (n) {
	case 1:
		vec_data(p, WIRE_OP_WRITE_FIRST, 256, WIRE_BTH_C, 0x100, 0, 1, 1, 0, 16, 24);
		break;
	case 2:
		vec_data(p, WIRE_OP_WRITE_LAST, 257, WIRE_BTH_A, 0x200, 1, 1, 1, 16, 8, 24);
		break;
	case 3:
		vec_data(p, WIRE_OP_WRITE_ONLY, 300, WIRE_BTH_RTX | WIRE_BTH_A | WIRE_BTH_TS, 0x200,
			 7, 2, 2, 0, 8, 8);
		p->dscp = 3, p->tseth_time = 0x1234;
		break;
	case 4:
		vec_base(p, false, WIRE_OP_ACK, 260, 0x100, 1);
		p->u.aeth = (struct wire_aeth){.syndrome = WIRE_AETH_ACK, .msn = 1};
		break;
	case 5:
		vec_base(p, false, WIRE_OP_SACK, 261, 0x100, 5);
		p->u.sack.seth = (struct wire_seth){.m = WIRE_M_SKIP_ONCE,
						    .ack_psn_offset = 3,
						    .entropy_echo = 0x105,
						    .responder_qpn = 0x200,
						    .cack_psn = 5,
						    .cc_type = 1,
						    .mpr = 8,
						    .sack_offset = 1,
						    .bitmap = 0x6};
		p->u.sack.cc.rcv_bytes = 0x21;
		break;
	case 6:
		vec_base(p, false, WIRE_OP_NACK, 262, 0x100, 6);
		p->u.neth = (struct wire_neth){.code = WIRE_NACK_TRIMMED_LASTHOP,
					       .entropy_echo = 0x106,
					       .responder_qpn = 0x200,
					       .nack_psn = 6,
					       .cc = 0x10};
		break;
	case 7:
		vec_base(p, true, WIRE_OP_PROBE, 290, WIRE_ENDPOINT_QPN, 0);
		p->u.peth = (struct wire_peth){.probe_id = 7, .prober = VEC_IP_A, .ts = 0x42};
		break;
	case 8: /* as a last-hop switch leaves it: trimmed, DSCP 10, TTL 63 */
		vec_data(p, WIRE_OP_WRITE_MIDDLE, 258, 0, 0x200, 3, 1, 1, 0, 0, 0);
		p->dscp = 10, p->ttl = 63;
		wire_trim(p);
		break;
	}
}
