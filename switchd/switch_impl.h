/* switchd/switch_impl.h — what the switch engine's files share: its
 * structs, drop reasons and counter fields.  Private to switchd/: the
 * engine's door is switch.h.  switch.c forwards, queues and serves the
 * ports; switch_stats.c writes the records and exports the counters. */
#ifndef SWITCH_IMPL_H
#define SWITCH_IMPL_H

#include "switch.h"

#include "core/egress.h"
#include "core/rng.h"

#define TC_TRIMMED    1 /* docs/protocol.md §3, under the UET policy */
#define TC_CONTROL    2
#define SW_UET_NUM_TC 3 /* TC0, TC_TRIMMED, TC_CONTROL */
/* Bytes one deficit-round-robin round gives TC1 and TC0 together; the
 * weight splits it.  Large against a frame, so each visit sends several. */
#define DRR_ROUND    16384
#define SW_DSCP_TC   0x07 /* struct sw's dscp_class: the class */
#define SW_DSCP_RETX 0x08 /* ... the trimmable-retransmission codepoint */

enum sw_drop {
	SW_DROP_QUEUE_FULL,	 /* no room, and not trimmable (or trimming off) */
	SW_DROP_TRIM_QUEUE_FULL, /* trimmed, and TC1 had no room either */
	SW_DROP_TTL,		 /* TTL reached 0 */
	SW_DROP_NO_ROUTE,	 /* destination IPv4 unknown */
	SW_DROP_PORT_DOWN,	 /* port set down (sw_port_set_down) */
	SW_DROP_LINK_LOST,	 /* the link's random loss */
	SW_DROP_LINK_DOWN,	 /* the link's down window */
	SW_DROP_LINK_RULE,	 /* a `drop` rule of the link */
	SW_DROP_RX_PORT_DOWN,	 /* arrived at a port set down (the frame's ingress) */
	SW_DROP_NO_MEMORY,	 /* the queue could not grow (out of memory) */
	SW_DROP_COUNT
};

/* Counters of one port and class; add a field here and to the list below.
 * dequeued and bytes apart: side by side, GCC made their two additions a
 * frame's departure a vector's seven instructions (callgrind, 8 hosts). */
struct sw_counters {
	uint64_t dequeued, enqueued, bytes, trimmed, ecn_marked;
	uint64_t drops[SW_DROP_COUNT];
};

#define SW_COUNTER_FIELDS(X) X(enqueued) X(dequeued) X(bytes) X(trimmed) X(ecn_marked)
#define SW_COUNT_ONE(f)	     +1
enum { SW_NFIELDS = 0 SW_COUNTER_FIELDS(SW_COUNT_ONE) };
#undef SW_COUNT_ONE

/* A queue is a ring of packets with their wire lengths, so that serving
 * it reads no packet (a fabric's packets are mostly out of the cache). */
struct sw_entry {
	struct pkt *p;
	uint32_t len;
};

struct sw_queue {
	struct sw_entry *ring;
	uint32_t head, n, cap; /* cap: a power of two */
	uint32_t bytes;	       /* wire bytes waiting: at most 1.5 x 1 GiB */
};

/* One traffic class of a port.  What every frame touches (the queue, the
 * peaks, enqueued/dequeued/bytes) fills the first cache line: a frame
 * that reads a second one waits for it twice at 1,024 hosts (issue 16). */
struct sw_class {
	_Alignas(64) struct sw_queue q;
	uint32_t peak, peak_ivl, peak_sample; /* queue bytes: at most 1.5 x 1 GiB */
	/* the least of the three (peak is never below the others): a frame
	 * that leaves its queue no longer than that raises none, and costs
	 * one test (sw_class_peaks_low) */
	uint32_t peak_low;
	struct sw_counters c;
	/* 256 bytes, not 192: a class's address is then its index shifted,
	 * not multiplied (callgrind, 8 hosts: 12 instructions a data packet
	 * fewer); the line past its counters is never read */
	uint8_t
	    room[256 - sizeof(struct sw_queue) - 4 * sizeof(uint32_t) - sizeof(struct sw_counters)];
};
_Static_assert(sizeof(struct sw_class) == 256, "a class is 256 bytes");
_Static_assert(offsetof(struct sw_class, c.bytes) + sizeof(uint64_t) <= 64,
	       "a frame's class counters in the class's first cache line");

/* Whether the class ever saw traffic: a frame queued or dropped.  Asked
 * of the counters, where every hop set a port's bit for it (callgrind, 8
 * hosts: 3 instructions a hop). */
static inline bool sw_class_seen(const struct sw_class *c)
{
	uint64_t any = c->c.enqueued;

	for (int d = 0; d < SW_DROP_COUNT; d++)
		any |= c->c.drops[d];
	return any != 0;
}

/* peak_low again, after peak_ivl or peak_sample changed. */
static inline void sw_class_peaks_low(struct sw_class *c)
{
	c->peak_low = c->peak_ivl < c->peak_sample ? c->peak_ivl : c->peak_sample;
}

/* What a frame reads of its port is one cache line: at 1,024 hosts a
 * port is out of the cache between two of its frames, and a second line
 * was a second wait (issue 16).  Its index is its place in sw->ports
 * (sw_port_index), and the MACs it writes into a frame are read only when
 * the host does not take them from the wire (sw_params.host_macs). */
struct sw_port {
	_Alignas(64) struct sw *sw;
	struct sw_class *cls; /* its sw->ntc classes, in sw->classes */
	/* EgressQueueLimit resolved for this port, and the TC0 bytes at or
	 * below which ECN never marks: a queue holds at most 32 bits of
	 * bytes (1.5 x the limit), so both are 32 bits (port_init) */
	uint32_t limit;
	uint32_t ecn_lo;
	uint32_t deficit[2]; /* below a quantum plus a frame */
	uint8_t nonempty;    /* bit tc: the class's queue holds a frame */
	bool wake_pending;   /* port_free is scheduled at out.busy_until */
	bool down;
	bool faces_nic;	 /* the hop to a NIC: trimmed-last-hop */
	bool drr_fresh;	 /* drr_cur has not had its quantum this turn */
	uint8_t drr_cur; /* TC0 or TC1: whose turn */
	/* its place in sw->ports (below TOPO_MAX_PORTS): its frames go to
	 * the host by it, where the pointers' difference was three
	 * instructions (callgrind, 8 hosts: 17 a data packet) */
	uint8_t index;
	/* SW_PULL_WAITING: wake_pending, but with no port_free scheduled:
	 * the frame on the wire carries `pull`, and its arrival (sw_pull),
	 * or whatever reads the port before it (port_catch_up), starts the
	 * next frame.  SW_PULL_ABLE: the port may wait so (port_init: the
	 * host pulls, its link has a delay and no faults, and its longest
	 * frame's serialization is below sw_params.pull_ser_below), a bit
	 * here rather than four tests of each departure.  SW_PULL_SENT: the
	 * frame on the wire went with every condition of a pull but a frame
	 * queued behind it: one queued later marks it (sw_host.pull_last)
	 * instead of scheduling port_free (port_kick).  SW_PULL_MARKED: it
	 * went with the mark (port_send's `arriving`): one queued later
	 * needs no pull_last */
	uint8_t pull;
	struct egress out; /* serialization, the link's verdict, hand-over;
			    * its rate and link in the next line */

	uint8_t macs[12]; /* a frame's next hop: the peer's MAC, the switch's */
	const char *peer_name;
	struct sw_counters *last; /* its classes' at the last stats row, in
				   * sw->lasts (with switch stats only) */
};
_Static_assert(offsetof(struct sw_port, out) + offsetof(struct egress, rate) <= 64,
	       "what a frame reads of its port in one cache line");

#define SW_HOP_LEAF TOPO_MAX_PORTS /* struct sw's hop: a leaf's entry */
#define SW_HOP_SET  0x8000	   /* ... an ECMP set of more than one port */
#define SW_HOP_FAR  0xFFFE	   /* ... a set too far in sets: topology_ecmp */
#define SW_HOP_NONE 0xFFFF	   /* ... no route */

#define SW_PULL_WAITING 1
#define SW_PULL_ABLE	2
#define SW_PULL_SENT	4
#define SW_PULL_MARKED	8

/* What every frame reads comes first, a cache line for forwarding and one
 * for the attributes (classification, admission, ECN). */
struct sw {
	_Alignas(64) const struct topology *t; /* its routes */
	int node;
	int ports_down; /* ports set down (sw_port_set_down) */
	uint64_t seed;	/* of the ECMP hash */
	struct sw_port *ports;
	/* A hop's route from its destination's attachment (sw_route): by
	 * the port it hangs off when that is one of this switch's, else by
	 * its leaf (SW_HOP_LEAF + leaf), the one port of its ECMP set, or
	 * SW_HOP_SET | the set in sets (SW_HOP_FAR past 32,765), or SW_HOP_NONE.  A set is 80 bytes
	 * and a spine's 32 sets are 40 cache lines: read at each hop, it was
	 * half a miss a hop at 1,024 hosts; a spine's hop table is one line
	 * (issue 16). */
	const uint16_t *hop;
	const struct topo_ecmp *sets; /* the topology's sets of this switch */
	bool host_macs;		      /* sw_params.host_macs */
	bool general;		      /* ports_down or !host_macs (forward) */
	/* By DSCP: its traffic class (sw_classify, bits 0-2), and whether it
	 * is the trimmable-retransmission codepoint under the UET policy
	 * (SW_DSCP_RETX: 1.5 x the queue limit).  A load where a hop
	 * compared the codepoint with up to four attributes (issue 16). */
	uint8_t dscp_class[256];
	_Alignas(64) struct switch_attrs a; /* EgressQueueLimit unresolved: see ports */
	struct events *ev;
	struct sw_host host;
	uint8_t mac[6];
	bool trim_active;
	bool icrc;	     /* frames from the NICs carry an ICRC */
	uint32_t quantum[2]; /* DRR bytes per turn of TC0, TC1 */
	/* sw_params.pull_before: a port's next frame may wait for a pull,
	 * not an event, when the one on the wire ends before it (port_send) */
	ps_t pull_before;
	struct rng rng; /* ECN marking */
	uint64_t rx_frames;

	char name[TOPO_NAME_MAX];
	int nports;
	/* Its ports' classes, ntc of each: under the UET policy only TC0..TC2
	 * carry traffic (sw_classify), else TC = DSCP / 8 may be any of
	 * SW_NUM_TC.  The ports' counters at the last stats row likewise. */
	int ntc;
	struct sw_class *classes;
	struct sw_counters *lasts;
	struct pkt_pool *pool;
	struct csv *stats;
	uint64_t rx_drop_payload, rx_drop_no_memory, rx_drop_wire[WIRE_ERROR_COUNT];
};

/* A port's number, its place in sw->ports. */
static inline int sw_port_index(const struct sw_port *port)
{
	return port->index;
}

/* The statistics interval's event (switch_stats.c), scheduled by sw_new. */
void sw_stats_tick(void *arg, ps_t now);

#endif /* SWITCH_IMPL_H */
