/* nicd/spray.c — entropy values for a destination and their path feedback
 * (seed, Retransmission timer; NACKs; docs/protocol.md §6, Default Packet
 * Spraying).
 *
 * Each destination has EntropyCount values, UDP source ports
 * StartingPortOffset + i, walked by a strict round-robin pointer.  A value
 * is GOOD, SKIP or ASSUMED_BAD: sending takes the next GOOD value; a SKIP
 * value met by the pointer turns GOOD and is passed over this once; an
 * ASSUMED_BAD value is passed over until a probe on it is answered.  When
 * no value is GOOD the pointer uses the ASSUMED_BAD ones in turn rather than
 * stall.  The state is per destination whatever QPGroupsEnabled is.
 * SinglePath gives each QP one value, like plain RoCEv2 ECMP. */
#include <stdlib.h>

#include "nic_impl.h"

static bool ev_index(const struct nic *nic, uint32_t ev, uint32_t *i)
{
	*i = ev - nic->a.starting_port_offset;
	return ev >= nic->a.starting_port_offset && *i < nic->a.entropy_count;
}

uint16_t nic_spray_next(struct nic *nic, struct nic_dest *d, uint32_t qpn)
{
	const struct nic_attrs *a = &nic->a;
	uint32_t n = a->entropy_count;

	if (a->spraying == SPRAY_SINGLE_PATH)
		return (uint16_t)(a->starting_port_offset + qpn % n);
	/* Two laps at most: SKIP values met in the first turn GOOD. */
	for (uint32_t step = 0; d->nbad < n && step < 2 * n; step++) {
		uint32_t i = d->rr;
		d->rr = (d->rr + 1) % n;
		if (d->state[i] == EV_GOOD)
			return (uint16_t)(a->starting_port_offset + i);
		if (d->state[i] == EV_SKIP)
			d->state[i] = EV_GOOD;
	}
	uint16_t ev = (uint16_t)(a->starting_port_offset + d->rr);
	d->rr = (d->rr + 1) % n;
	return ev;
}

/* docs/protocol.md §6: a SACK with M = 01 (the packet was CE-marked) and a
 * TRIMMED NACK mark the echoed value SKIP. */
void nic_spray_skip(struct nic *nic, struct nic_dest *d, uint32_t ev)
{
	uint32_t i;

	if (ev_index(nic, ev, &i) && d->state[i] == EV_GOOD)
		d->state[i] = EV_SKIP;
}

static void probe_tick(void *arg, ps_t now);

/* Seed, Retransmission timer: the value the packet was sent on is assumed
 * bad and leaves the rotation until a probe on it is answered; probes go
 * every ProbeInterval while any value is bad. */
void nic_spray_assumed_bad(struct nic *nic, struct nic_dest *d, uint32_t ev, ps_t now)
{
	uint32_t i;

	if (nic->a.spraying != SPRAY_DEFAULT || !ev_index(nic, ev, &i) ||
	    d->state[i] == EV_ASSUMED_BAD)
		return;
	d->state[i] = EV_ASSUMED_BAD;
	d->nbad++;
	nic_spray_senders(nic, d, 0, now);
}

/* Probes bring paths back for the traffic to a destination: they run while
 * it has values assumed bad and sending QPs, and stop with the last of
 * those (an idle destination keeps its states and probes again when a new
 * message to it starts). */
void nic_spray_senders(struct nic *nic, struct nic_dest *d, int delta, ps_t now)
{
	if (delta < 0)
		NIC_SUB(d->senders, (uint32_t)-delta);
	else
		d->senders += (uint32_t)delta;
	if (d->nbad && d->senders && !d->probe_timer)
		d->probe_timer =
		    events_schedule(nic->ev, now + nic->a.probe_interval, probe_tick, d);
}

/* docs/protocol.md §1: a probe to the endpoint QP 2 on the value it tests, in
 * the data class with the trimmable codepoint; it consumes no PSN. */
static void send_probe(struct nic *nic, struct nic_dest *d, uint32_t i, ps_t now)
{
	uint32_t wire = WIRE_BTH_LEN + WIRE_PETH_LEN + WIRE_IPV4_LEN + WIRE_UDP_LEN + WIRE_FRAMING +
			(nic->a.icrc ? WIRE_ICRC_LEN : 0);
	struct pkt *p;

	if (nic->egress_data_used + wire > nic->a.egress_data_pool)
		return; /* tried again at the next interval */
	p = nic_pkt_new(nic, d->ip, WIRE_OP_PROBE, (uint16_t)(nic->a.starting_port_offset + i));
	if (!p)
		return;
	nic->egress_data_used += wire;
	p->dscp = nic->a.trimming ? nic->a.dscp_trimmable : nic->a.dscp_no_trim;
	p->ecn = WIRE_ECN_ECT0;
	p->dqpn = WIRE_ENDPOINT_QPN;
	p->u.peth.probe_id = d->probe_id++;
	p->u.peth.prober = nic->ip;
	p->u.peth.ts = (uint16_t)(now / (128 * PS_PER_NS));
	nic_port_send(nic, p, false, now);
}

/* Unanswered probes are simply repeated. */
static void probe_tick(void *arg, ps_t now)
{
	struct nic_dest *d = arg;
	struct nic *nic = d->nic;

	d->probe_timer = 0;
	if (!d->nbad || !d->senders)
		return;
	for (uint32_t i = 0; i < nic->a.entropy_count; i++)
		if (d->state[i] == EV_ASSUMED_BAD)
			send_probe(nic, d, i, now);
	d->probe_timer = events_schedule(nic->ev, now + nic->a.probe_interval, probe_tick, d);
}

/* An answer with M = 00 makes the value GOOD, with M = 01 SKIP. */
void nic_spray_probe_answer(struct nic *nic, const struct pkt *p, ps_t now)
{
	const struct wire_seth *s = &p->u.sack.seth;
	struct nic_dest *d = hmap_get(&nic->dests, p->src_ip);
	uint32_t i;

	(void)now;
	if (!d || !ev_index(nic, s->entropy_echo, &i) || d->state[i] != EV_ASSUMED_BAD)
		return;
	d->state[i] = s->m == WIRE_M_SKIP_ONCE ? EV_SKIP : EV_GOOD;
	NIC_DEC(d->nbad);
	nic->c.probes_answered++;
	if (!d->nbad && d->probe_timer) {
		events_cancel(nic->ev, d->probe_timer);
		d->probe_timer = 0;
	}
}

void nic_spray_free(struct nic_dest *d)
{
	free(d->state);
	free(d);
}
