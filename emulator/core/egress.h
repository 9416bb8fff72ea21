/* emulator/core/egress.h — an engine's egress port, the NIC's and each of a
 * switch's (docs/architecture.md, The engine contract).
 *
 * The engine keeps its own queues and picks the next frame; the port owns
 * what both engines share: serialization at the port's rate (seed, Packets
 * on the wire: no interframe gap; docs/protocol.md §12 rule 13, the rate
 * topology_port_rate gives), the link's fault verdict over the frame's time
 * on the wire, and the one instant a frame is handed to the host: the start
 * of its serialization, with its arrival at the far end (the end of its
 * serialization plus the link's delay).  Both are known then, so the hosts
 * treat every engine alike and the promises' lookahead (egress_tx_floor,
 * docs/promises.md) is one formula. */
#ifndef EMULATOR_EGRESS_H
#define EMULATOR_EGRESS_H

#include <stdbool.h>
#include <stdint.h>

#include "invariant.h"
#include "link.h"
#include "time.h"
#include "wire.h"

/* What a frame reads comes first, 24 bytes: a switch port puts them in
 * its one hot cache line, and rate and link, read only on a link with
 * faults or at a rate of no whole picoseconds per byte, in the next. */
struct egress {
	ps_t busy_until;       /* end of the last frame's serialization */
	ps_t delay;	       /* the link's */
	uint32_t ps_per_byte;  /* when 8 s / rate is whole ps (400 Gbps: 20), else 0 */
	bool link_faults;      /* loss, down windows or drop rules to ask about */
	uint64_t rate;	       /* bits/s */
	struct link_end *link; /* the sending direction */
};

/* A port at `rate` (topology_port_rate) on `link`, idle. */
void egress_init(struct egress *e, uint64_t rate, struct link_end *link);

/* How long len bytes take on the wire.  When 8 s / rate is whole
 * picoseconds the product is time_serialize's exact result, without its
 * 128-bit division. */
static inline ps_t egress_serialization(const struct egress *e, uint32_t len)
{
	return e->ps_per_byte ? (ps_t)len * e->ps_per_byte : time_serialize(len, e->rate);
}

/* Whether a frame may start at now (the one before it has ended). */
static inline bool egress_idle(const struct egress *e, ps_t now)
{
	return now >= e->busy_until;
}

/* Start serializing p (len wire bytes) at now: the port is busy until its
 * end, *arrival is when it reaches the far end, and the verdict says
 * whether the link carries it (link.h).  A port set down (`down`) loses it
 * as LINK_DOWN; then, and on a clean link, the link is not asked, so it
 * draws no random number. */
static inline enum link_verdict egress_start(struct egress *e, const struct pkt *p, uint32_t len,
					     bool down, ps_t now, ps_t *arrival)
{
	e->busy_until = now + egress_serialization(e, len);
	*arrival = e->busy_until + e->delay;
	if (down)
		return LINK_DOWN;
	return e->link_faults ? link_verdict(e->link, p, now, e->busy_until) : LINK_PASS;
}

/* The earliest arrival at the far end of any frame the port can still hand
 * over, when no event before `from` is left to run (docs/promises.md): a
 * frame starts at max(from, the end of the one on the wire), so it arrives
 * no earlier than that + a minimum frame's serialization + the delay. */
ps_t egress_tx_floor(const struct egress *e, ps_t from);

/* ---- the buffer behind a port: pools and classes of queues ---------- */

/* An egress pool (seed, Egress buffer): bytes reserved against its size.
 * A frame's room is reserved before it waits for the port (a NIC's data
 * packet before its payload is fetched) and released when its
 * serialization ends; what does not fit is refused, never queued. */
struct egress_pool {
	uint64_t size, used;
};

static inline bool egress_pool_room(const struct egress_pool *pl, uint32_t len)
{
	return pl->used + len <= pl->size;
}

static inline bool egress_reserve(struct egress_pool *pl, uint32_t len)
{
	if (!egress_pool_room(pl, len))
		return false;
	pl->used += len;
	return true;
}

static inline void egress_release(struct egress_pool *pl, uint32_t len)
{
	SUB_COUNT(pl->used, len);
}

/* Queues by class, control ahead of waiting data (seed, Packet marking;
 * Traffic classes): first in, first out within a class, with the bytes
 * on the wire each holds. */
enum egress_class { EGRESS_CONTROL, EGRESS_DATA, EGRESS_NCLASSES };

struct egress_queue {
	struct pkt *head, *tail;
	uint64_t bytes;
};

struct egress_classes {
	struct egress_queue q[EGRESS_NCLASSES];
};

static inline void egress_enqueue(struct egress_classes *c, enum egress_class k, struct pkt *p,
				  uint32_t len)
{
	struct egress_queue *q = &c->q[k];

	p->next = NULL;
	if (q->tail)
		q->tail->next = p;
	else
		q->head = p;
	q->tail = p;
	q->bytes += len;
}

/* The next frame, control first, with its length on the wire in *len, as
 * len_of reads it, and its class in *k; NULL when both are empty.  The
 * engine keeps each frame's length as it queues it: recomputing it here
 * (wire_len) cost about 40 instructions a frame (issue 16). */
static inline struct pkt *egress_dequeue(struct egress_classes *c,
					 uint32_t (*len_of)(const struct pkt *p), uint32_t *len,
					 enum egress_class *k)
{
	for (int i = 0; i < EGRESS_NCLASSES; i++) {
		struct egress_queue *q = &c->q[i];
		struct pkt *p = q->head;
		if (!p)
			continue;
		q->head = p->next;
		if (!q->head)
			q->tail = NULL;
		p->next = NULL;
		*len = len_of(p);
		SUB_COUNT(q->bytes, *len);
		*k = (enum egress_class)i;
		return p;
	}
	return NULL;
}

#endif
