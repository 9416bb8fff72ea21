/* switchd/switch.h — the switch engine of docs/protocol.md §9: no sockets and no
 * clock (docs/architecture.md, The engine contract).
 *
 * The engine takes frames on its ports (sw_receive) at a given virtual time,
 * forwards each by the routes of the topology (ECMP by a hash of the
 * 5-tuple, so the entropy value chooses the path), queues it on the egress
 * port in its traffic class, marks ECN, trims under the UET policy, and
 * serializes it at the port's rate.  Frames leave through the host's
 * transmit callback with their arrival time at the far end of the link.
 *
 * Counters are kept per port and traffic class; switch-stats.csv gets one
 * row per port and class that saw traffic, every SwitchStatsReportInterval,
 * and a final row for each of them from sw_finish (docs/records.md). */
#ifndef SWITCHD_SWITCH_H
#define SWITCHD_SWITCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/counter.h"
#include "core/events.h"
#include "core/link.h"
#include "core/records.h"
#include "core/topology.h"
#include "core/wire.h"

#define SW_NUM_TC 8

struct sw;

struct sw_host {
	void *ctx;
	/* A frame leaves port `port`; it reaches the far end at `arrival`.
	 * The host owns p from here (it must pkt_put it when done).  `pull`:
	 * the host calls sw_pull at its arrival (sw_params.pull_before; false
	 * without pull_before).  A flag of the call, not of the packet: a
	 * queued frame's packet is out of the cache when it leaves, and its
	 * mark cost a write miss a hop at 1,024 hosts (issue 16).  It does
	 * not call the switch back: the engine reads its ports' state once
	 * across the call (port_send). */
	void (*transmit)(void *ctx, int port, struct pkt *p, ps_t arrival, bool pull);
	/* The last frame port `port` handed over, still on its link, is
	 * marked `pull` after all: a frame was queued behind it (with
	 * sw_params.pull_before; may be NULL without) */
	void (*pull_last)(void *ctx, int port);
};

struct sw_params {
	const char *name; /* node name, for records; NULL: the topology's */
	const struct topology *topo;
	int node;		/* the switch's node index in topo */
	struct link_end *links; /* one per port, sending direction */
	struct events *events;
	struct pkt_pool *pool;
	struct sw_host host;
	struct csv *stats; /* switch-stats.csv, may be NULL */
	/* The host writes a frame's MACs (the far end's and the sending
	 * node's) when it builds its bytes, from the wire it takes: the
	 * switch then leaves them (sim; a daemon's frames need them). */
	bool host_macs;
	/* The host calls sw_pull when a frame the switch marked (`pull`)
	 * reaches the far end of its link, and writes no pcap (sim).  A port
	 * whose frames wait then starts its next one at that call, or when
	 * anything reads the port before it, as it would have at the end of
	 * the frame on the wire, not at an event of its own (issue 16): for a
	 * frame on the wire that ends before pull_before (0: never; the host
	 * keeps every event from then on) and whose serialization is shorter
	 * than pull_ser_below (any host event that reads the switch, as
	 * samples do, comes that often at most: it runs before the frame's
	 * end would at the same picosecond), on a link of no faults and a
	 * delay. */
	ps_t pull_before, pull_ser_below;
};

/* A port of a switch, for sw_pull. */
struct sw_port;
struct sw_port *sw_port_of(struct sw *sw, int port);

/* A frame the switch marked (transmit's `pull`) reached the far end of
 * port's link at now (sw_params.pull_before). */
void sw_pull(struct sw_port *port, ps_t now);

/* The ports' frames that wait for a pull and were due before now start
 * (sw_params.pull_before): before the host reads the switch's counters
 * at the end of a run. */
void sw_settle(struct sw *sw);

/* The switch-stats.csv header (docs/records.md, Records), from the names of
 * the class counters (sw_counter_at).  Counts are for the interval that ends
 * at time_ps; max_queue_bytes is the interval's peak; queue_bytes the queue
 * at time_ps. */
const char *sw_stats_header(void);

/* Create the engine of topology node p->node.  Returns NULL and one line in
 * err when the switch cannot run: PfcEnabled=true (PFC is not modelled),
 * codepoints that differ from the NICs' (docs/protocol.md §3), not a switch.
 * Without UETPolicyEnabled and with TrimmingEnabled, says once on stderr
 * that trimming is inactive (docs/protocol.md §9). */
struct sw *sw_new(const struct sw_params *p, char *err, size_t errlen);
void sw_free(struct sw *sw);

/* A frame has arrived on `port`.  The engine owns p from here. */
void sw_receive(struct sw *sw, int port, struct pkt *p, ps_t now);

/* The same for a frame an engine handed over (its transmit): p->sent_len
 * holds its length on the wire, not computed again (issue 16). */
void sw_receive_sent(struct sw *sw, int port, struct pkt *p, ps_t now);

/* Parse a frame from a real port and receive it.  Malformed frames are
 * counted by reason (rx_drop_<reason>) and dropped.  A payload is carried
 * as a descriptor of the pattern of docs/protocol.md §1 (so f need not outlive
 * the call); one that differs from the pattern is counted
 * (rx_drop_payload_not_pattern) and dropped, since the engine keeps no
 * copies of payload bytes. */
void sw_receive_frame(struct sw *sw, int port, const uint8_t *f, size_t len, ps_t now);

/* Whether the frames reaching the switch end with an ICRC: some NIC of the
 * topology appends one (IcrcEnabled). */
bool sw_icrc(const struct sw *sw);

/* The egress port the routes and the switch's hash pick for p, or -1 when
 * its destination is unknown.  The same 5-tuple always gets the same port. */
int sw_route(const struct sw *sw, const struct pkt *p);

/* Whether each queue's bytes, frame count and class bit equal what it
 * holds, and its bytes stay within 1.5 x its limit: NULL, or the first
 * broken, written in why.  Built with MRCEMU_CHECK_INVARIANTS (`make
 * check`), the engine checks every stats interval and at the end. */
const char *sw_check(const struct sw *sw, char *why, size_t len);

/* A port set down drops every frame queued to it or routed to it, counted
 * as drop_port_down, and every frame arriving on it, counted as
 * drop_rx_port_down (docs/protocol.md §9, Faults). */
void sw_port_set_down(struct sw *sw, int port, bool down);

/* The earliest virtual arrival at the far end of port's link of any frame the
 * switch can still send there, when no event before `from` is left to run
 * (docs/promises.md): a frame is handed over when its serialization starts,
 * at max(from, the end of the one on the wire), so it arrives no earlier
 * than that + a minimum frame's serialization + the link delay. */
ps_t sw_tx_floor(const struct sw *sw, int port, ps_t from);

/* Write one samples.csv row per port and class that saw traffic
 * (emulator/host/samples.h), and start the next sample's peak. */
void sw_sample(struct sw *sw, struct csv *c, ps_t now);

/* Write the final switch-stats rows. */
void sw_finish(struct sw *sw, ps_t now);

/* The i-th counter of the switch (core/counter.h), as `stats` lists them:
 * rx_frames; enqueued, dequeued, bytes, trimmed, ecn_marked, max_queue_bytes
 * (the peak of any queue) and drop_<reason> over every port and class;
 * rx_drop_payload_not_pattern; rx_drop_<wire reason>.  False past the last. */
bool sw_counter_at(const struct sw *sw, size_t i, struct counter *c);

/* A counter by name (through sw_counter_at), UINT64_MAX if there is none. */
uint64_t sw_counter(const struct sw *sw, const char *name);

/* The same for one port and traffic class (rx_* names are per switch). */
uint64_t sw_port_counter(const struct sw *sw, int port, int tc, const char *name);

/* Bytes waiting in a port's queue of class tc (not the frame on the wire). */
uint64_t sw_queue_bytes(const struct sw *sw, int port, int tc);

/* The traffic class the switch puts a codepoint in (docs/protocol.md §3). */
int sw_classify(const struct sw *sw, uint8_t dscp);

/* The egress queue limit of a port, resolved from its rate (§9). */
uint64_t sw_queue_limit(const struct sw *sw, int port);

#endif
