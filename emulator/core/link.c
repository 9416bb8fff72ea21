/* emulator/core/link.c — loss, down windows and drop rules of one link end. */
#include "link.h"

#include <stdio.h>
#include <string.h>

void link_end_init(struct link_end *l, const struct topology *t, int link, int from_node)
{
	const struct topo_link *tl = &t->links[link];
	char name[2 * TOPO_NAME_MAX + 8];

	memset(l, 0, sizeof(*l));
	l->attrs = &tl->attrs;
	l->topo = t;
	l->delay = tl->attrs.delay;
	l->rate = tl->attrs.rate;
	/* One stream per direction: "link:h0>s0". */
	snprintf(name, sizeof(name), "link:%s>%s", t->nodes[from_node].name,
		 t->nodes[from_node == tl->a ? tl->b : tl->a].name);
	rng_seed(&l->rng, t->emu.seed, name);
	for (int i = 0; i < tl->attrs.ndrops; i++)
		l->drops_left[i] = tl->attrs.drops[i].count;
}

bool link_is_down(const struct link_attrs *a, ps_t t)
{
	for (int i = 0; i < a->ndown; i++)
		if (t >= a->down[i].from && t < a->down[i].to)
			return true;
	return false;
}

static bool down_overlaps(const struct link_attrs *a, ps_t start, ps_t end)
{
	for (int i = 0; i < a->ndown; i++)
		if (start < a->down[i].to && end > a->down[i].from)
			return true;
	return false;
}

static bool kind_matches(enum drop_kind k, uint8_t opcode)
{
	switch (k) {
	case DROP_ANY:
		return true;
	case DROP_DATA:
		return wire_kind_of(opcode) == WIRE_KIND_DATA;
	case DROP_ACK:
		return opcode == WIRE_OP_ACK;
	case DROP_SACK:
		return opcode == WIRE_OP_SACK;
	case DROP_NACK:
		return opcode == WIRE_OP_NACK;
	case DROP_PROBE:
		return opcode == WIRE_OP_PROBE;
	}
	return false;
}

static bool rule_matches(const struct link_end *l, const struct drop_rule *r, const struct pkt *p)
{
	if (!kind_matches(r->kind, p->opcode))
		return false;
	if (topology_find_ip(l->topo, p->src_ip) != r->from_node ||
	    topology_find_ip(l->topo, p->dst_ip) != r->to_node)
		return false;
	if (r->psn >= 0 && (uint32_t)r->psn != p->psn)
		return false;
	if (r->rtx >= 0 && r->rtx != !!(p->flags & WIRE_BTH_RTX))
		return false;
	if (r->msn >= 0 && (!wire_is_data(p) || (uint64_t)r->msn != p->msn))
		return false;
	return true;
}

enum link_verdict link_verdict(struct link_end *l, const struct pkt *p, ps_t start, ps_t end)
{
	const struct link_attrs *a = l->attrs;

	if (down_overlaps(a, start, end)) {
		l->down_dropped++;
		return LINK_DOWN;
	}
	for (int i = 0; i < a->ndrops; i++) {
		if (l->drops_left[i] == 0 || !rule_matches(l, &a->drops[i], p))
			continue;
		if (l->drops_left[i] > 0)
			l->drops_left[i]--;
		l->rule_dropped++;
		return LINK_DROP_RULE;
	}
	/* Draw only when loss is configured, so adding a rule elsewhere does
	 * not shift the random stream. */
	if (a->loss > 0 && rng_unit(&l->rng) < a->loss) {
		l->lost++;
		return LINK_LOST;
	}
	return LINK_PASS;
}

bool link_lookahead_check(const struct topology *t, char *err, size_t errlen)
{
	for (int i = 0; i < t->nlinks; i++) {
		const struct topo_link *l = &t->links[i];
		if (l->attrs.delay || t->nodes[l->a].kind == NODE_EXTERNAL ||
		    t->nodes[l->b].kind == NODE_EXTERNAL)
			continue;
		snprintf(err, errlen,
			 "%s:%d: [link %s %s]: delay 0 leaves two daemons no lookahead (a NIC "
			 "hands a frame over as its serialization ends); give it a delay > 0",
			 t->path, l->line, t->nodes[l->a].name, t->nodes[l->b].name);
		return false;
	}
	return true;
}
