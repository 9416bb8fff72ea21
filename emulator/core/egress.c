/* emulator/core/egress.c — an engine's egress port (egress.h). */
#include "egress.h"

void egress_init(struct egress *e, uint64_t rate, struct link_end *link)
{
	const struct link_attrs *a = link->attrs;

	*e = (struct egress){.rate = rate, .delay = link->delay, .link = link};
	if (rate && (8 * PS_PER_S) % rate == 0 && 8 * PS_PER_S / rate <= UINT32_MAX)
		e->ps_per_byte = (uint32_t)(8 * PS_PER_S / rate);
	e->link_faults = a->ndown || a->ndrops || a->loss > 0;
}

ps_t egress_tx_floor(const struct egress *e, ps_t from)
{
	ps_t start = from > e->busy_until ? from : e->busy_until;

	return start + egress_serialization(e, WIRE_MIN_LEN) + e->delay;
}
