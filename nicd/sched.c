/* nicd/sched.c — the transmit scheduler (sched.h; seed, QP groups and the
 * transmit scheduler; Retransmission ahead of new data). */
#include <stdio.h>

#include "nic_impl.h"

/* Keep the group's count of QPs with a retransmission waiting true. */
static void rtx_count_refresh(struct nic_group *g, struct nic_qp_send *sq)
{
	bool has = nic_send_has_rtx(sq);

	if (has != sq->turn.counted_rtx) {
		g->sched.rtx_qps += has ? 1 : -1;
		sq->turn.counted_rtx = has;
	}
}

static void turn_insert(struct nic_group *g, struct nic_qp_send *sq)
{
	if (!g->sched.turn) {
		sq->turn.next = sq->turn.prev = sq;
		g->sched.turn = sq;
	} else { /* at the back of the rotation: just before the turn */
		sq->turn.next = g->sched.turn;
		sq->turn.prev = g->sched.turn->turn.prev;
		sq->turn.prev->turn.next = sq;
		g->sched.turn->turn.prev = sq;
	}
	rtx_count_refresh(g, sq);
}

void nic_turn_remove(struct nic_group *g, struct nic_qp_send *sq)
{
	if (!sq->turn.next)
		return;
	if (sq->turn.counted_rtx)
		NIC_DEC(g->sched.rtx_qps);
	sq->turn.counted_rtx = false;
	if (sq->turn.next == sq) {
		g->sched.turn = NULL;
	} else {
		sq->turn.prev->turn.next = sq->turn.next;
		sq->turn.next->turn.prev = sq->turn.prev;
		if (g->sched.turn == sq)
			g->sched.turn = sq->turn.next;
	}
	sq->turn.next = sq->turn.prev = NULL;
}

/* Seed: a group is ready when its congestion window has room and one of
 * its QPs has a retransmission waiting, or new data with its PSN window
 * open. */
static bool group_ready(const struct nic_group *g)
{
	return g->sched.turn && nic_cc_window_open(&g->cc);
}

void nic_ready_remove(struct nic *nic, struct nic_group *g)
{
	if (!g->sched.on_list)
		return;
	if (g->sched.prev)
		g->sched.prev->sched.next = g->sched.next;
	else
		nic->sched.head = g->sched.next;
	if (g->sched.next)
		g->sched.next->sched.prev = g->sched.prev;
	else
		nic->sched.tail = g->sched.prev;
	g->sched.prev = g->sched.next = NULL;
	g->sched.on_list = false;
}

static void ready_insert(struct nic *nic, struct nic_group *g, bool head)
{
	g->sched.on_list = true;
	if (head) {
		g->sched.prev = NULL;
		g->sched.next = nic->sched.head;
		if (nic->sched.head)
			nic->sched.head->sched.prev = g;
		else
			nic->sched.tail = g;
		nic->sched.head = g;
	} else {
		g->sched.next = NULL;
		g->sched.prev = nic->sched.tail;
		if (nic->sched.tail)
			nic->sched.tail->sched.next = g;
		else
			nic->sched.head = g;
		nic->sched.tail = g;
	}
}

/* Seed: a group that joins the list with a retransmission waiting joins at
 * its head, any other at its tail; a group already on the list keeps its
 * place. */
inline __attribute__((always_inline)) void nic_sched_update(struct nic *nic, struct nic_group *g)
{
	if (!g->sched.on_list && group_ready(g))
		ready_insert(nic, g, g->sched.rtx_qps > 0);
}

/* Keep a QP in its group's turn ring exactly while it has work; a QP that
 * stays keeps its place in the rotation.  It and nic_sched_update are
 * inline in their callers here and in recovery.c (the link-time optimizer
 * inlines across files): three times a data packet, the calls cost 26
 * instructions a packet (issue 16, callgrind at 8 hosts). */
inline __attribute__((always_inline)) void nic_qp_update(struct nic *nic, struct nic_qp_send *sq)
{
	struct nic_group *g = sq->group;
	bool ready = nic_send_ready(nic, sq);

	if (sq->turn.next && !ready)
		nic_turn_remove(g, sq);
	else if (!sq->turn.next && ready)
		turn_insert(g, sq);
	else if (sq->turn.next)
		rtx_count_refresh(g, sq);
	nic_sched_update(nic, g);
}

/* Seed, The transmit scheduler: serve the list of ready groups in turns, one
 * packet per turn, retransmission before new data, until no group is ready
 * or the egress pool is full, all at one instant. */
static __attribute__((noinline)) void serve_groups(struct nic *nic, ps_t now)
{
	struct nic_group *g;

	while ((g = nic->sched.head)) {
		struct nic_qp_send *sq;
		bool sent;

		if (!group_ready(g)) {
			nic_ready_remove(nic, g);
			continue;
		}
		sq = g->sched.turn;
		sent = nic_send_next(nic, sq, now);
		if (!sent) { /* egress pool full: keep the group at the head */
			nic->sched.pass_blocked = true;
			return;
		}
		g->sched.turn = sq->turn.next;
		nic_ready_remove(nic, g);
		nic_qp_update(nic, sq);
	}
}

/* Half the passes find no group ready (a data packet's cumulative ACK and
 * its SACK each run one, issue 16): those cost a test. */
void nic_tx_pass(struct nic *nic, ps_t now)
{
	nic->sched.pass_blocked = false;
	if (nic->sched.head)
		serve_groups(nic, now);
}

static void pass_event(void *arg, ps_t now)
{
	nic_tx_pass(arg, now);
}

void nic_tx_kick(struct nic *nic, ps_t when)
{
	events_schedule(nic->ev, when, pass_event, nic);
}

bool nic_tx_blocked(const struct nic *nic)
{
	return nic->sched.pass_blocked;
}

/* The list is linked both ways and holds exactly the groups marked on it;
 * each turn ring is linked both ways within one group. */
const char *nic_sched_check(const struct nic *nic, char *why, size_t len)
{
	const struct nic_group *prev = NULL;
	const struct hmap *m = &nic->send_qps;

	for (const struct nic_group *g = nic->sched.head; g; prev = g, g = g->sched.next)
		if (!g->sched.on_list || g->sched.prev != prev) {
			snprintf(why, len, "ready list broken at group of peer %08x", g->peer_ip);
			return why;
		}
	if (prev != nic->sched.tail) {
		snprintf(why, len, "ready list tail is not its last group");
		return why;
	}
	for (size_t i = 0; m->slots && i <= m->mask; i++) {
		const struct nic_qp_send *sq = m->slots[i].val;
		if (sq && sq->turn.next &&
		    (sq->turn.next->turn.prev != sq || sq->turn.next->group != sq->group ||
		     !sq->group->sched.turn)) {
			snprintf(why, len, "turn ring broken at send QP %u", sq->qpn);
			return why;
		}
	}
	return NULL;
}
