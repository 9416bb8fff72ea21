/* nicd/spray.h — destinations and their entropy values (seed,
 * Retransmission timer; NACKs; docs/protocol.md §6, Default Packet
 * Spraying): the table of destinations a QP of either side uses, the
 * unused ones kept (at most MaxQps), and each one's round robin over its
 * EntropyCount values with their states and probes.
 *
 * spray.c is the only code that changes a struct nic_dest or the table:
 * the queue pairs take and give back a destination (nic_dest_get,
 * nic_dest_put), the sending side asks for the next value
 * (nic_spray_next) and reports path feedback (nic_spray_skip,
 * nic_spray_assumed_bad), and probe answers come back through
 * nic_spray_probe_answer. */
#ifndef NICD_SPRAY_H
#define NICD_SPRAY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/events.h"
#include "core/hmap.h"
#include "core/time.h"
#include "core/wire.h"

struct nic;

enum spray_state { EV_GOOD, EV_SKIP, EV_ASSUMED_BAD };

struct nic_dest {
	/* -- line 0 (spray.c aligns it on one): a packet's value */
	struct nic *nic;
	uint32_t ip;
	uint32_t rr;	/* the round-robin pointer */
	uint8_t *state; /* enum spray_state of each entropy value */
	uint32_t nbad;	/* values ASSUMED_BAD */
	uint32_t nskip; /* values SKIP */
	/* EntropyCount and StartingPortOffset, and whether the values go round
	 * (not SinglePath): nic_spray_next's usual case reads them here. */
	uint32_t count;
	uint16_t first_port;
	bool round_robin;
	uint32_t senders;  /* open sending QPs to it: probes run for them */
	uint16_t probe_id; /* next probe id */
	events_id probe_timer;
	uint32_t refs; /* QPs (either side) that use it */
	/* -- line 1: the rarer */
	struct nic_dest *idle_prev, *idle_next; /* unused ones, oldest first */
};

/* Every destination, and the unused ones oldest first. */
_Static_assert(offsetof(struct nic_dest, round_robin) < 64, "a packet's value from one cache line");

struct nic_dests {
	struct hmap by_ip; /* ip -> nic_dest */
	struct nic_dest *idle_head, *idle_tail;
	uint64_t nidle;
};

void nic_dests_init(struct nic *nic);
void nic_dests_free(struct nic *nic);

/* The destination ip, taken (created on first use) or given back; an
 * unused one keeps its states until MaxQps others are unused. */
struct nic_dest *nic_dest_get(struct nic *nic, uint32_t ip);
void nic_dest_put(struct nic *nic, struct nic_dest *d);
/* The destination ip if there is one, not taken. */
struct nic_dest *nic_dest_find(const struct nic *nic, uint32_t ip);

/* The next entropy value for a packet of QP qpn to d.  Three times a data
 * packet: the usual case (round robin, every value GOOD) inline, without
 * a look at the states (a cache line of their own, cold at 1,024 hosts),
 * the rest in nic_spray_walk (issue 16). */
uint16_t nic_spray_walk(struct nic *nic, struct nic_dest *d, uint32_t qpn);

/* The round-robin pointer after value i of n: it stays below n, so it
 * wraps by a test, not a division (three a data packet). */
static inline uint32_t nic_spray_rr_after(uint32_t i, uint32_t n)
{
	return i + 1 == n ? 0 : i + 1;
}

static inline uint16_t nic_spray_next(struct nic *nic, struct nic_dest *d, uint32_t qpn)
{
	uint32_t i = d->rr;

	if (!d->round_robin || d->nbad || d->nskip)
		return nic_spray_walk(nic, d, qpn);
	d->rr = nic_spray_rr_after(i, d->count);
	return (uint16_t)(d->first_port + i);
}
/* Feedback: pass value ev over once (CE mark, trim) or assume it bad
 * (timeout, M = 10) until a probe on it is answered. */
void nic_spray_skip(struct nic *nic, struct nic_dest *d, uint32_t ev);
void nic_spray_assumed_bad(struct nic *nic, struct nic_dest *d, uint32_t ev, ps_t now);
/* A probe's answer (a SACK with PR = 1). */
void nic_spray_probe_answer(struct nic *nic, const struct pkt *p, ps_t now);
/* A sending QP to d opened (+1) or closed or failed (-1): probes run while
 * d has any and a value assumed bad. */
void nic_spray_senders(struct nic *nic, struct nic_dest *d, int delta, ps_t now);

/* The table's and each destination's own invariants: NULL, or what is
 * broken, written in why.  *unused: destinations no QP uses. */
const char *nic_spray_check(const struct nic *nic, char *why, size_t len);

#endif
