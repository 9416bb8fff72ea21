/* switchd/routes.h — a switch's forwarding table (docs/protocol.md §9): the
 * ECMP set of every destination NIC or external, looked up by destination
 * IPv4 address.  Built once from the topology's routes (topology_ecmp) and
 * kept small, so that a fabric of a thousand hosts looks up from the cache:
 * equal sets are stored once (a leaf has one set for every remote host) and
 * the address table is open addressing on 8-byte slots. */
#ifndef SWITCHD_ROUTES_H
#define SWITCHD_ROUTES_H

#include <stdbool.h>
#include <stdint.h>

#include "core/topology.h"

struct routes_set {
	uint16_t count; /* 0: no route */
	uint16_t ports[TOPO_ECMP_MAX];
};

struct routes_slot {
	uint32_t ip;
	uint16_t set;
	uint16_t used;
};

struct routes {
	struct routes_slot *slots;
	uint32_t mask;
	unsigned shift; /* 32 - log2(slots) */
	struct routes_set *sets;
	int nsets;
};

/* The table of switch node `sw`.  False when out of memory. */
bool routes_build(struct routes *r, const struct topology *t, int sw);
void routes_free(struct routes *r);

/* The ECMP set towards ip, or NULL for an address no node has. */
static inline const struct routes_set *routes_lookup(const struct routes *r, uint32_t ip)
{
	uint32_t i = (uint32_t)(ip * 2654435761u) >> r->shift;

	for (; r->slots[i].used; i = (i + 1) & r->mask)
		if (r->slots[i].ip == ip)
			return &r->sets[r->slots[i].set];
	return NULL;
}

#endif
