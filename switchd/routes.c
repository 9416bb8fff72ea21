/* switchd/routes.c — see routes.h. */
#include "routes.h"

#include <stdlib.h>
#include <string.h>

#include "core/hmap.h"

static uint64_t set_hash(const struct routes_set *s)
{
	uint64_t h = 0xCBF29CE484222325ULL;

	for (int i = 0; i < s->count; i++)
		h = (h ^ s->ports[i]) * 0x100000001B3ULL;
	return (h ^ s->count) * 0x100000001B3ULL;
}

/* The index of set s in the table, adding it when new. */
static int intern(struct routes *r, struct hmap *seen, const struct routes_set *s)
{
	uint64_t h = set_hash(s);
	uintptr_t at = (uintptr_t)hmap_get(seen, h);

	if (at && !memcmp(&r->sets[at - 1], s, sizeof(*s)))
		return (int)at - 1;
	r->sets[r->nsets] = *s;
	if (!at && !hmap_put(seen, h, (void *)(uintptr_t)(r->nsets + 1)))
		return -1;
	return r->nsets++;
}

static void put_slot(struct routes *r, uint32_t ip, int set)
{
	uint32_t i = (uint32_t)(ip * 2654435761u) >> r->shift;

	while (r->slots[i].used && r->slots[i].ip != ip)
		i = (i + 1) & r->mask;
	r->slots[i] = (struct routes_slot){ip, (uint16_t)set, 1};
}

bool routes_build(struct routes *r, const struct topology *t, int sw)
{
	struct hmap seen;
	uint32_t n = 1;
	unsigned bits = 0;
	bool ok = true;

	memset(r, 0, sizeof(*r));
	while (n < 2 * (uint32_t)t->nnodes + 2) {
		n <<= 1;
		bits++;
	}
	r->slots = calloc(n, sizeof(*r->slots));
	r->sets = calloc((size_t)t->nnodes + 1, sizeof(*r->sets));
	if (!r->slots || !r->sets) {
		routes_free(r);
		return false;
	}
	r->mask = n - 1;
	r->shift = 32 - bits;
	hmap_init(&seen);
	for (int d = 0; d < t->nnodes && ok; d++) {
		struct routes_set s = {0};
		const uint16_t *ports;
		if (t->nodes[d].kind == NODE_SWITCH)
			continue;
		s.count = (uint16_t)topology_ecmp(t, sw, d, &ports);
		memcpy(s.ports, ports, s.count * sizeof(*ports));
		int set = intern(r, &seen, &s);
		if (set < 0 || set > UINT16_MAX)
			ok = false;
		else
			put_slot(r, t->nodes[d].ip, set);
	}
	hmap_destroy(&seen);
	if (!ok)
		routes_free(r);
	return ok;
}

void routes_free(struct routes *r)
{
	free(r->slots);
	free(r->sets);
	memset(r, 0, sizeof(*r));
}
