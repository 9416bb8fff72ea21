/* nicd/sched.h — the transmit scheduler (seed, QP groups and the transmit
 * scheduler; Retransmission ahead of new data; docs/protocol.md §12 rules
 * 18 and 19): the list of ready groups, each group's turn ring of QPs with
 * work, and the pass that serves them, one packet per turn, until no group
 * is ready or the egress pool is full.
 *
 * sched.c is the only code that changes a struct nic_sched, a group's
 * struct nic_sched_group or a QP's struct nic_sched_qp.  The sending side
 * tells it a QP's work changed (nic_qp_update) and is asked for each
 * turn's packet (nic_send_next); congestion control tells it a window grew
 * (nic_sched_update); the port retries a pass the pool blocked
 * (nic_tx_kick); the engine runs a pass on acknowledgements (§12 rule 18). */
#ifndef NICD_SCHED_H
#define NICD_SCHED_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/time.h"

struct nic;
struct nic_group;
struct nic_qp_send;

/* The NIC's list of ready groups. */
struct nic_sched {
	struct nic_group *head, *tail;
	bool pass_blocked; /* the egress pool stopped the last pass */
};

/* A group's place on the list and its turn ring. */
struct nic_sched_group {
	struct nic_qp_send *turn;      /* next QP to serve */
	struct nic_group *prev, *next; /* the ready list */
	uint32_t rtx_qps;	       /* QPs in the turn ring with a retransmission */
	bool on_list;
};

/* A sending QP's place in its group's turn ring (next NULL: not in it). */
struct nic_sched_qp {
	struct nic_qp_send *prev, *next;
	bool counted_rtx; /* counted in the group's rtx_qps */
};

/* Keep a QP in its group's turn ring exactly while it has work, and its
 * group on the list while it is ready. */
void nic_qp_update(struct nic *nic, struct nic_qp_send *sq);
/* Put g on the list if it has become ready (its window grew). */
void nic_sched_update(struct nic *nic, struct nic_group *g);
/* A QP leaves its group's turns (it closed or failed). */
void nic_turn_remove(struct nic_group *g, struct nic_qp_send *sq);
/* A group leaves the list (it is being freed). */
void nic_ready_remove(struct nic *nic, struct nic_group *g);

/* The pass, now or at `when`. */
void nic_tx_pass(struct nic *nic, ps_t now);
void nic_tx_kick(struct nic *nic, ps_t when);
/* Whether the last pass stopped at a full egress pool. */
bool nic_tx_blocked(const struct nic *nic);

/* The list's and the turn rings' own invariants: NULL, or what is broken,
 * written in why. */
const char *nic_sched_check(const struct nic *nic, char *why, size_t len);

#endif
