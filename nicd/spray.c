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
#include <stdio.h>
#include <stdlib.h>

#include "core/lines.h"
#include "nic_impl.h"

static bool ev_index(const struct nic *nic, uint32_t ev, uint32_t *i)
{
	*i = ev - nic->a.starting_port_offset;
	return ev >= nic->a.starting_port_offset && *i < nic->a.entropy_count;
}

uint16_t nic_spray_walk(struct nic *nic, struct nic_dest *d, uint32_t qpn)
{
	const struct nic_attrs *a = &nic->a;
	uint32_t n = a->entropy_count;

	if (a->spraying == SPRAY_SINGLE_PATH)
		return (uint16_t)(a->starting_port_offset + qpn % n);
	/* Two laps at most: SKIP values met in the first turn GOOD. */
	for (uint32_t step = 0; d->nbad < n && step < 2 * n; step++) {
		uint32_t i = d->rr;
		d->rr = nic_spray_rr_after(i, n);
		if (d->state[i] == EV_GOOD)
			return (uint16_t)(a->starting_port_offset + i);
		if (d->state[i] == EV_SKIP) {
			d->state[i] = EV_GOOD;
			NIC_DEC(d->nskip);
		}
	}
	uint16_t ev = (uint16_t)(a->starting_port_offset + d->rr);
	d->rr = nic_spray_rr_after(d->rr, n);
	return ev;
}

/* docs/protocol.md §6: a SACK with M = 01 (the packet was CE-marked) and a
 * TRIMMED NACK mark the echoed value SKIP. */
void nic_spray_skip(struct nic *nic, struct nic_dest *d, uint32_t ev)
{
	uint32_t i;

	if (ev_index(nic, ev, &i) && d->state[i] == EV_GOOD) {
		d->state[i] = EV_SKIP;
		d->nskip++;
	}
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
	if (d->state[i] == EV_SKIP)
		NIC_DEC(d->nskip);
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

	if (!nic_port_reserve(nic, wire))
		return; /* tried again at the next interval */
	p = nic_pkt_new(nic, d->ip, WIRE_OP_PROBE, (uint16_t)(nic->a.starting_port_offset + i));
	if (!p) {
		nic_port_unreserve(nic, wire);
		return;
	}
	p->dscp = nic->a.trimming ? nic->a.dscp_trimmable : nic->a.dscp_no_trim;
	p->ecn = WIRE_ECN_ECT0;
	p->dqpn = WIRE_ENDPOINT_QPN;
	p->u.peth.probe_id = d->probe_id++;
	p->u.peth.prober = nic->ip;
	p->u.peth.ts = (uint16_t)(now / (128 * PS_PER_NS));
	nic_port_send_data(nic, p, wire, now);
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
	struct nic_dest *d = nic_dest_find(nic, p->src_ip);
	uint32_t i;

	(void)now;
	if (!d || !ev_index(nic, s->entropy_echo, &i) || d->state[i] != EV_ASSUMED_BAD)
		return;
	d->state[i] = s->m == WIRE_M_SKIP_ONCE ? EV_SKIP : EV_GOOD;
	d->nskip += d->state[i] == EV_SKIP;
	NIC_DEC(d->nbad);
	nic->c.probes_answered++;
	if (!d->nbad && d->probe_timer) {
		events_cancel(nic->ev, d->probe_timer);
		d->probe_timer = 0;
	}
}

/* A destination is on a cache line (lines_calloc_one): nic_spray_next
 * reads rr to round_robin, in the first; a calloc's 16 bytes put them
 * across two lines in three places of four, and at 1,024 hosts a
 * destination is out of the cache at each of its packets (issue 16). */
static void dest_free(struct nic_dest *d)
{
	free(d->state);
	lines_free_one(d);
}

/* Destinations (PROTOCOL.md §6: spraying state per destination) live while
 * a QP of either side uses them; an unused one keeps its entropy states, so
 * that the next message to that peer resumes where the last left off, but
 * PROTOCOL.md §2 forbids a packet to allocate without bound: every frame
 * from a new source address creates a receiving QP and so a destination.
 * At most MaxQps unused destinations are kept, the oldest dropped first and
 * counted (dest_evicted).  A run with fewer peers than that never drops
 * one, so its records are those of an unbounded table. */
static void idle_unlink(struct nic *nic, struct nic_dest *d)
{
	if (d->idle_prev)
		d->idle_prev->idle_next = d->idle_next;
	else
		nic->dests.idle_head = d->idle_next;
	if (d->idle_next)
		d->idle_next->idle_prev = d->idle_prev;
	else
		nic->dests.idle_tail = d->idle_prev;
	d->idle_prev = d->idle_next = NULL;
	NIC_DEC(nic->dests.nidle);
}

struct nic_dest *nic_dest_get(struct nic *nic, uint32_t ip)
{
	struct nic_dest *d = hmap_get(&nic->dests.by_ip, ip);

	if (d) {
		if (!d->refs++)
			idle_unlink(nic, d);
		return d;
	}
	if (!(d = lines_calloc_one(sizeof(*d))) || !(d->state = calloc(nic->a.entropy_count, 1)) ||
	    !hmap_put(&nic->dests.by_ip, ip, d)) {
		if (d)
			dest_free(d);
		return NULL;
	}
	d->nic = nic;
	d->ip = ip;
	d->refs = 1;
	d->count = nic->a.entropy_count;
	d->first_port = (uint16_t)nic->a.starting_port_offset;
	d->round_robin = nic->a.spraying != SPRAY_SINGLE_PATH;
	return d;
}

void nic_dest_put(struct nic *nic, struct nic_dest *d)
{
	if (!d)
		return;
	NIC_DEC(d->refs);
	if (d->refs)
		return;
	d->idle_prev = nic->dests.idle_tail;
	if (nic->dests.idle_tail)
		nic->dests.idle_tail->idle_next = d;
	else
		nic->dests.idle_head = d;
	nic->dests.idle_tail = d;
	if (++nic->dests.nidle <= nic->a.max_qps)
		return;
	d = nic->dests.idle_head;
	idle_unlink(nic, d);
	hmap_del(&nic->dests.by_ip, d->ip);
	events_cancel(nic->ev, d->probe_timer);
	nic->c.dest_evicted++;
	dest_free(d);
}

struct nic_dest *nic_dest_find(const struct nic *nic, uint32_t ip)
{
	return hmap_get(&nic->dests.by_ip, ip);
}

void nic_dests_init(struct nic *nic)
{
	hmap_init(&nic->dests.by_ip);
}

void nic_dests_free(struct nic *nic)
{
	struct hmap *m = &nic->dests.by_ip;

	for (size_t i = 0; m->slots && i <= m->mask; i++)
		if (m->slots[i].val)
			dest_free(m->slots[i].val);
	hmap_destroy(m);
}

/* Each destination's counts of values assumed bad and SKIP, and the
 * unused ones listed oldest first are exactly those no QP uses. */
const char *nic_spray_check(const struct nic *nic, char *why, size_t len)
{
	const struct hmap *m = &nic->dests.by_ip;
	uint64_t listed = 0, unused = 0;

	for (size_t i = 0; m->slots && i <= m->mask; i++) {
		const struct nic_dest *d = m->slots[i].val;
		uint32_t bad = 0, skip = 0;
		if (!d)
			continue;
		for (uint32_t k = 0; k < nic->a.entropy_count; k++) {
			bad += d->state[k] == EV_ASSUMED_BAD;
			skip += d->state[k] == EV_SKIP;
		}
		if (bad != d->nbad || skip != d->nskip) {
			snprintf(why, len,
				 "destination nbad %u, nskip %u; values assumed bad %u, SKIP %u",
				 d->nbad, d->nskip, bad, skip);
			return why;
		}
		unused += !d->refs;
	}
	for (const struct nic_dest *d = nic->dests.idle_head; d; d = d->idle_next)
		listed++;
	if (listed != nic->dests.nidle || unused != nic->dests.nidle) {
		snprintf(why, len, "nidle %llu, unused destinations listed %llu, not used %llu",
			 (unsigned long long)nic->dests.nidle, (unsigned long long)listed,
			 (unsigned long long)unused);
		return why;
	}
	return NULL;
}
