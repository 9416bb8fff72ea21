/* nicd/qp.c — what the two sides of a queue pair share: QP groups and QP
 * numbers (seed, Queue pairs and messages; QP groups; docs/protocol.md §12
 * rules 11 and 12).  A group's turn ring and place on the ready list are
 * the scheduler's (sched.h), its window congestion control's (cc.h). */
#include <stdlib.h>
#include <string.h>

#include "core/lines.h"
#include "nic_impl.h"

/* With QPGroupsEnabled every QP with one peer, sending or receiving,
 * belongs to that peer's group; the group lives while any of them does
 * (§12 rule 12).  Without it, each sending side has a group of its own. */
/* A group is on a cache line (nic_impl.h), one a message without
 * QPGroupsEnabled. */
void nic_group_free(struct nic_group *g)
{
	lines_free_one(g);
}

struct nic_group *nic_group_get(struct nic *nic, uint32_t peer_ip)
{
	struct nic_group *g = NULL;

	if (nic->a.qp_groups)
		g = hmap_get(&nic->groups, peer_ip);
	if (!g) {
		g = lines_calloc_one(sizeof(*g));
		if (!g)
			return NULL;
		g->peer_ip = peer_ip;
		nic_cc_init(nic, g);
		if (nic->a.qp_groups) {
			g->keyed = true;
			if (!hmap_put(&nic->groups, peer_ip, g)) {
				nic_group_free(g);
				return NULL;
			}
		}
	}
	g->refs++;
	return g;
}

void nic_group_put(struct nic *nic, struct nic_group *g)
{
	if (!g)
		return;
	NIC_DEC(g->refs);
	if (g->refs)
		return;
	nic_ready_remove(nic, g);
	if (g->keyed)
		hmap_del(&nic->groups, g->peer_ip);
	nic_group_free(g);
}

/* §12 rule 11: one allocator for both sides, upward, 24 bits, skipping 0,
 * 1 and 2 (reserved; probes use 2) and every number still open or held by
 * a closed record.  MaxQps and MaxClosedRecords keep far fewer than 2^24
 * numbers in use, so a free one is always found. */
uint32_t nic_qpn_alloc(struct nic *nic)
{
	for (;;) {
		uint32_t q = nic->next_qpn;
		nic->next_qpn = q >= WIRE_QPN_MASK ? WIRE_ENDPOINT_QPN + 1 : q + 1;
		if (!hmap_get(&nic->send_qps, q) && !nic_recv_qpn_taken(nic, q))
			return q;
	}
}
