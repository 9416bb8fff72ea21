/* nicd/spray.c — entropy values for a destination (PROTOCOL.md §6).
 *
 * Default Packet Spraying walks the destination's EntropyCount values,
 * StartingPortOffset + i, in strict round robin; the spraying state is per
 * destination whatever QPGroupsEnabled is (seed, QP groups).  Path feedback
 * (SKIP, ASSUMED_BAD, probes) belongs to the multipath work and is not
 * kept yet: every value is treated as good.  SinglePath gives each QP one
 * value, like plain RoCEv2 ECMP. */
#include "nic_impl.h"

uint16_t nic_spray_next(struct nic *nic, struct nic_dest *d, uint32_t qpn)
{
	const struct nic_attrs *a = &nic->a;

	if (a->spraying == SPRAY_SINGLE_PATH)
		return (uint16_t)(a->starting_port_offset + qpn % a->entropy_count);
	uint16_t ev = (uint16_t)(a->starting_port_offset + d->rr);
	d->rr = (d->rr + 1) % a->entropy_count;
	return ev;
}
