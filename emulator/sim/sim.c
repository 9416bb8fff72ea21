/* emulator/sim/sim.c — the discrete-event host (docs/architecture.md): every engine
 * of a topology on one event queue.  Links are FIFOs of frames in flight;
 * a frame reaches the far engine at the arrival time its sender gave, as an
 * event keyed by receiving port and link sequence (docs/protocol.md §12 rule
 * 16).  The workload posts messages at their time once their dependencies
 * completed, and the run writes the records of docs/records.md. */
#include "sim.h"

#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "chakra/chakra.h"
#include "core/events.h"
#include "core/heap.h"
#include "core/hmap.h"
#include "core/lines.h"
#include "core/link.h"
#include "core/records.h"
#include "core/timers.h"
#include "core/topology.h"
#include "core/workload.h"
#include "host/chakra_exec.h"
#include "host/driver.h"
#include "host/samples.h"
#include "nicd/nic.h"
#include "pcap/capture.h"
#include "switchd/switch.h"

struct sim;

/* The heap's first 80 MiB on huge pages (core/heap.h): the topology, the
 * engines and their queue pairs.  At htsim's 1,024-host anchor the run's
 * CPU fell to 0.80 of before with 256 KiB messages (median of 15
 * alternating runs) and to 0.94 with 4 MiB (11 runs; least CPU 0.89),
 * whose heap goes past the reserve; at 8 hosts it is unchanged (0.996).
 * Not more: the state on huge pages is partly sparse, and the anchor's
 * peak (4 MiB messages, 91.2 MiB on small pages) was 92.8 MiB with 48 MiB
 * reserved, 93.6 with 80 and 95.5 with 128, over the 100 MB it is held to
 * (issue 16). */
#define SIM_HEAP_HUGE ((size_t)80 << 20)

/* A frame on a wire, and when it reaches the far end.  `p` is the packet's
 * address with SIM_PULL in its low bit when the sending switch port waits
 * for its arrival (sw_host.transmit's `pull`): kept with the frame, not
 * in the packet, the mark costs the sender no write to a packet out of
 * the cache (issue 16). */
struct sim_frame {
	uintptr_t p;
	ps_t arrival;
};

#define SIM_PULL ((uintptr_t)1) /* a bool's true, as transmit passes it */
_Static_assert(_Alignof(struct pkt) > 1, "a packet's address has a low bit clear");

static inline struct pkt *frame_pkt(uintptr_t p)
{
	return (struct pkt *)(p & ~SIM_PULL);
}

#define SIM_RX_PCAP 1
#define SIM_TX_PCAP 2

/* The kind of engine at a wire's far end, which names its arrival event's
 * function. */
enum sim_rx { SIM_RX_NOWHERE, SIM_RX_NIC, SIM_RX_SW };

/* One direction of a link: the frames on it, in order, in a ring (a
 * frame's own link field is in a cache line nothing else on the way reads),
 * and what a frame needs at both ends.  Frames arrive in the order they
 * were sent (docs/protocol.md §12 rule 16), so only the first has an
 * arrival event: each arrival schedules the next one's.  Its event node is
 * then written a frame's time before it runs, not a link's delay, and is
 * still in the cache when it does.
 *
 * What a frame's sending and its arrival read is the first cache line: at
 * 1,024 hosts a wire is out of the cache between two frames (issue 16).
 * So the first frame's packet is kept there too (`first`, set with its
 * arrival event): its arrival reads no ring slot, and the ring is read
 * once a frame, for the next frame's arrival event, not twice (callgrind
 * at 1,024 hosts, per data packet: 160.9 -> 159.0 L2 misses, 6,390 ->
 * 6,375 instructions).  The receiving engine is one pointer and a kind,
 * to leave the room.  Frames arrive in the order they were sent, so the
 * first frame's link sequence is the count of frames taken: its arrival
 * key (receiving port and that sequence) is kept whole, and moves on as
 * a frame leaves; sending counts nothing. */
struct sim_wire {
	_Alignas(64) struct sim_frame *ring;
	/* frames on the wire, in a ring of mask + 1 (a power of two; 0 while
	 * ring is NULL): the mask is kept, not the size, as every frame's
	 * sending and arrival index by it (callgrind, 8 hosts: about 3
	 * instructions a frame) */
	uint32_t head, len, mask;
	uint8_t rx_kind; /* enum sim_rx: what rx is */
	uint8_t pcaps;	 /* SIM_RX_PCAP, SIM_TX_PCAP: rx_cap, tx_cap set */
	/* the last frame the sending switch port handed over has the pull
	 * mark: a frame sent after a marked one, unmarked, means the port
	 * caught up and has nothing waiting, so the marked one's arrival
	 * has nothing to pull and reads no port (a line cold at 1,024
	 * hosts).  Written by every transmit, on the line it writes. */
	bool last_marked;
	uint8_t to_port; /* the receiving port */
	uint64_t key;	 /* ring[head]'s arrival key (events_key_arrival) */
	struct events *q;
	void *rx;		/* the receiving engine, a NIC or a switch (connect_wires) */
	uintptr_t first;	/* ring[head].p while the wire has frames */
	struct sw_port *puller; /* the sending switch's port: SIM_PULL (sw_pull) */

	/* the pcaps, and where the wire goes */
	_Alignas(64) struct capture *rx_cap; /* the pcaps of both ends, or NULL */
	struct capture *tx_cap;
	ps_t delay;	     /* the link's */
	uint64_t tx_cap_key; /* order key of the sender's pcap writes */
	struct sim *sim;
	uint32_t uncaptured; /* the last frames, not yet in the sender's pcap */
	int to_node;
	uint8_t macs[12]; /* of every frame on it: the far end's, the sender's */
};
_Static_assert(sizeof(struct sim_wire) == 128, "a wire is two cache lines");

struct sim_port {
	struct sim_wire out;
	struct sim *sim;
	int node, port;
	struct capture *cap;
	/* 256 bytes, not 192: a switch's frame finds its port by a shift of
	 * its index, not a multiply (transmit; callgrind, 8 hosts: 9
	 * instructions a data packet fewer) */
	uint8_t room[256 - sizeof(struct sim_wire) - 2 * sizeof(void *) - 2 * sizeof(int)];
};
_Static_assert(sizeof(struct sim_port) == 256, "a port is 256 bytes");

struct sim_node {
	struct sim *sim;
	int index;
	struct nic *nic;
	struct sw *sw;
	struct link_end *links; /* one per port, sending direction */
	struct sim_port *ports;
	int nports;
};

struct sim {
	struct topology *t;
	struct workload w;
	struct events *q;
	struct timers *timers; /* the NICs' retransmission timers, batched */
	struct pkt_pool pool;
	struct sim_node *nodes;
	struct driver driver;
	bool chakra; /* [workload] chakra: the trace drives the NICs */
	struct chakra_trace trace;
	struct chakra_exec cx;
	struct nic_records rec;
	struct csv *messages;
	struct csv *chakra_nodes; /* chakra.csv */
	struct csv *switch_stats;
	struct csv *samples_csv;
	struct samples *samples; /* samples.csv, or NULL */
	/* The engines may keep books without their events before this time
	 * (nic_params.elide_before): the run ends at a frame's arrival or at
	 * its first event at or past SIM_DEFAULT_LIMIT; a run to `until` may
	 * end at any event, and keeps them all. */
	ps_t elide_before;
	ps_t sample_ivl; /* samples.csv's first interval (the least), or 0 */
	uint8_t frame[WIRE_MAX_FRAME];
	bool capture;
	bool progress;	    /* a progress line on stderr (a terminal, not -q) */
	double progress_at; /* CPU time of the next line */
};

/* ---- links -------------------------------------------------------------- */

/* A frame's bytes carry the MACs of the wire it is on: the switches leave
 * them to the host (sw_params.host_macs). */
static void capture_pkt(struct sim *s, const struct sim_wire *w, struct capture *cap, struct pkt *p,
			ps_t t)
{
	size_t n;

	if (!cap)
		return;
	memcpy(p, w->macs, sizeof(w->macs));
	n = wire_build(p, s->frame, sizeof(s->frame));
	if (n)
		capture_write(cap, t, s->frame, n);
}

static void arrive_nic(void *arg, ps_t now);
static void arrive_sw(void *arg, ps_t now);
static void arrive_nowhere(void *arg, ps_t now);

/* The first frame on the wire gets its arrival event, ordered by the
 * receiving port and its link sequence (the frames sent after it are
 * still on the wire).  The event's function is the receiving engine's
 * kind: a NIC's arrival, a small function, then saves few registers
 * (issue 16).  Inline by force: with the pull mark's masks GCC left it
 * out of line, +97 instructions a data packet at 1,024 hosts.  The event
 * fetches ahead its packet and the next frame's ring entry, which its
 * wire_take reads: one past this one's (past the ring's end when this one
 * is its last, a fetch of no use and no harm). */
static inline __attribute__((always_inline)) void schedule_arrival_fn(struct sim_wire *w,
								      events_fn fn)
{
	const struct sim_frame *f = &w->ring[w->head];

	w->first = f->p;
	__builtin_prefetch((const void *)f->p); /* its low bit stays in the line */
	events_schedule_hints(w->q, f->arrival, w->key, fn, w, (const void *)f->p, f + 1);
}

static inline __attribute__((always_inline)) void schedule_arrival(struct sim_wire *w)
{
	static const events_fn arrive[] = {
	    [SIM_RX_NOWHERE] = arrive_nowhere, [SIM_RX_NIC] = arrive_nic, [SIM_RX_SW] = arrive_sw};

	schedule_arrival_fn(w, arrive[w->rx_kind]);
}

/* The first frame leaves the wire at now: the next one gets the event,
 * arrive (the function of the wire's kind of receiver: the event being
 * run's, so no table is read; callgrind, 8 hosts: 2 instructions a frame
 * fewer), and the receiver's pcap shows it. */
static inline struct pkt *wire_take(struct sim_wire *w, ps_t now, events_fn arrive)
{
	struct pkt *p = frame_pkt(w->first);

	/* the sending port's next frame waits for this one's arrival (it
	 * joins this wire behind p) */
	if (w->first & SIM_PULL && w->last_marked)
		sw_pull(w->puller, now);
	w->head = (w->head + 1) & w->mask;
	w->key = events_key_arrival_next(w->key);
	if (--w->len)
		schedule_arrival_fn(w, arrive);
	if (w->pcaps & SIM_RX_PCAP)
		capture_pkt(w->sim, w, w->rx_cap, p, now);
	return p;
}

static void arrive_nic(void *arg, ps_t now)
{
	struct sim_wire *w = arg;
	struct pkt *p = wire_take(w, now, arrive_nic);

	nic_receive_sent(w->rx, p, now);
}

static void arrive_sw(void *arg, ps_t now)
{
	struct sim_wire *w = arg;
	struct pkt *p = wire_take(w, now, arrive_sw);

	sw_receive_sent(w->rx, w->to_port, p, now);
}

static void arrive_nowhere(void *arg, ps_t now)
{
	struct sim_wire *w = arg;

	pkt_put(&w->sim->pool, wire_take(w, now, arrive_nowhere));
}

/* Engines hand a frame over when its serialization starts (core/egress.h);
 * the sender's pcap shows it when it ends, written at that time so that
 * every pcap stays in time order (capture_sent_key orders it among the
 * frames of that picosecond). */
static void capture_sent(void *arg, ps_t now)
{
	struct sim_wire *w = arg;
	struct pkt *p = frame_pkt(w->ring[(w->head + w->len - w->uncaptured) & w->mask].p);

	w->uncaptured--;
	capture_pkt(w->sim, w, w->tx_cap, p, now);
}

static bool wire_grow(struct sim_wire *w)
{
	uint32_t cap = w->ring ? 2 * (w->mask + 1) : 16;
	struct sim_frame *r = malloc(cap * sizeof(*r));

	if (!r)
		return false;
	for (uint32_t k = 0; k < w->len; k++)
		r[k] = w->ring[(w->head + k) & w->mask];
	free(w->ring);
	w->ring = r;
	w->mask = cap - 1;
	w->head = 0;
	return true;
}

/* transmit's rare cases, out of line so that its common one saves no
 * registers: the wire was empty (its first frame gets the arrival event),
 * is full, or the sender's pcap is on. */
static __attribute__((noinline)) void transmit_slow(struct sim_wire *w, struct pkt *p, ps_t arrival,
						    uintptr_t pull)
{
	if ((!w->ring || w->len == w->mask + 1) && !wire_grow(w)) {
		fprintf(stderr, "mrcemu: out of memory for frames in flight\n");
		abort();
	}
	w->ring[(w->head + w->len++) & w->mask] = (struct sim_frame){(uintptr_t)p | pull, arrival};
	if (w->len == 1)
		schedule_arrival(w);
	if (w->tx_cap && arrival - w->delay <= events_now(w->q)) {
		capture_pkt(w->sim, w, w->tx_cap, p, arrival - w->delay);
	} else if (w->tx_cap) {
		w->uncaptured++;
		events_schedule_key(w->q, arrival - w->delay, w->tx_cap_key, capture_sent, w);
	}
}

/* An engine's frame leaves port `port` of its node (docs/architecture.md, The
 * engine contract); it reaches the far end at `arrival`, one link delay
 * after its serialization ends.  Mostly it joins a busy wire's ring, whose
 * first frame has the arrival event.  `captured`: the run writes pcaps
 * (sim.capture), a constant of each engine's transmit, so that a run
 * without asks no wire about its pcap (callgrind, 8 hosts: 5,603 -> 5,582
 * instructions a data packet). */
static inline __attribute__((always_inline)) void
wire_transmit(struct sim_wire *w, struct pkt *p, ps_t arrival, uintptr_t pull, bool captured)
{
	/* empty or full, one unsigned compare: len - 1 wraps when empty */
	if (w->len - 1 >= w->mask || (captured && w->pcaps & SIM_TX_PCAP)) {
		transmit_slow(w, p, arrival, pull);
		return;
	}
	w->ring[(w->head + w->len++) & w->mask] = (struct sim_frame){(uintptr_t)p | pull, arrival};
}

/* A switch's context is its node's ports: its frames go out without a
 * look at the node. */
static inline __attribute__((always_inline)) void
sw_transmit(void *ctx, int port_index, struct pkt *p, ps_t arrival, bool pull, bool captured)
{
	struct sim_wire *w = &((struct sim_port *)ctx)[port_index].out;

	w->last_marked = pull;
	wire_transmit(w, p, arrival, (uintptr_t)pull, captured);
}

static void transmit(void *ctx, int port_index, struct pkt *p, ps_t arrival, bool pull)
{
	sw_transmit(ctx, port_index, p, arrival, pull, false);
}

static void transmit_captured(void *ctx, int port_index, struct pkt *p, ps_t arrival, bool pull)
{
	sw_transmit(ctx, port_index, p, arrival, pull, true);
}

/* A switch port's frame on the wire gets its pull mark after it left
 * (sw_host.pull_last): it is the wire's last, and still on it. */
static void pull_last(void *ctx, int port_index)
{
	struct sim_wire *w = &((struct sim_port *)ctx)[port_index].out;

	w->ring[(w->head + w->len - 1) & w->mask].p |= SIM_PULL;
	if (w->len == 1)
		w->first |= SIM_PULL;
	w->last_marked = true;
}

/* A NIC has one port, which is its context: its frames go out without a
 * look at its node (a cache line cold at 1,024 hosts, issue 16). */
static void nic_transmit(void *ctx, struct pkt *p, ps_t arrival)
{
	wire_transmit(&((struct sim_port *)ctx)->out, p, arrival, 0, false);
}

static void nic_transmit_captured(void *ctx, struct pkt *p, ps_t arrival)
{
	wire_transmit(&((struct sim_port *)ctx)->out, p, arrival, 0, true);
}

/* ---- the workload ------------------------------------------------------- */

static struct nic *nic_of(void *ctx, int node)
{
	return ((struct sim *)ctx)->nodes[node].nic;
}

static void completion(void *ctx, enum nic_completion what, const struct nic_msg_info *i, ps_t now)
{
	struct sim_port *port = ctx; /* the NIC's */

	if (port->sim->chakra)
		chakra_exec_completion(&port->sim->cx, port->node, what, i, now);
	else
		driver_completion(&port->sim->driver, what, i, now);
}

static void failed(void *ctx, const struct nic_msg_info *i, ps_t now)
{
	struct sim_port *port = ctx;

	if (port->sim->chakra)
		chakra_exec_failed(&port->sim->cx, port->node, i, now);
	else
		driver_failed(&port->sim->driver, i, now);
}

/* A Chakra run also ends when it can go no further: a deadlock, or a
 * failed message that a node waits for (reported by chakra_exec_report). */
static bool workload_done(const struct sim *s)
{
	if (s->chakra)
		return chakra_exec_done(&s->cx) || chakra_exec_stalled(&s->cx);
	return driver_done(&s->driver);
}

/* ---- building the engines ----------------------------------------------- */

static bool open_capture(struct sim *s, struct sim_port *port, const char *outdir, char *err,
			 size_t errlen)
{
	char path[4200];

	snprintf(path, sizeof(path), "%s/pcap/%s-%d.pcap", outdir, s->t->nodes[port->node].name,
		 port->port);
	port->cap = capture_open(path, err, errlen);
	return port->cap != NULL;
}

static bool build_switch(struct sim *s, struct sim_node *n, FILE *report)
{
	const struct topo_node *tn = &s->t->nodes[n->index];
	struct sw_params prm = {.name = tn->name,
				.topo = s->t,
				.node = n->index,
				.links = n->links,
				.events = s->q,
				.pool = &s->pool,
				.host = {.ctx = n->ports,
					 .transmit = s->capture ? transmit_captured : transmit,
					 .pull_last = pull_last},
				.stats = s->switch_stats,
				.host_macs = true,
				/* frames the pcaps show as they end: those ends
				 * keep their events */
				.pull_before = s->capture ? 0 : s->elide_before,
				.pull_ser_below = s->sample_ivl ? s->sample_ivl : PS_NEVER};
	char err[512];

	n->sw = sw_new(&prm, err, sizeof(err));
	if (!n->sw) {
		fprintf(report, "%s:%d: %s\n", s->t->path, tn->line, err);
		return false;
	}
	for (int p = 0; p < n->nports; p++)
		n->ports[p].out.puller = sw_port_of(n->sw, p);
	return true;
}

static bool build_node(struct sim *s, int i, const char *outdir, FILE *report)
{
	const struct topo_node *tn = &s->t->nodes[i];
	struct sim_node *n = &s->nodes[i];
	char err[512];

	n->sim = s;
	n->index = i;
	n->nports = tn->nports;
	n->ports = lines_calloc(tn->nports, sizeof(*n->ports));
	n->links = calloc(tn->nports ? tn->nports : 1, sizeof(*n->links));
	if (!n->ports || !n->links)
		return false;
	for (int p = 0; p < tn->nports; p++) {
		struct sim_port *port = &n->ports[p];
		const struct topo_port *tp = &tn->ports[p];
		port->sim = s;
		port->node = i;
		port->port = p;
		link_end_init(&n->links[p], s->t, tp->link, i);
		port->out = (struct sim_wire){
		    .sim = s,
		    .q = s->q,
		    .delay = n->links[p].delay,
		    .to_node = tp->peer,
		    .to_port = (uint8_t)tp->peer_port,
		    .key = events_key_arrival((uint32_t)(tp->peer * TOPO_MAX_PORTS + tp->peer_port),
					      0)};
		memcpy(port->out.macs, s->t->nodes[tp->peer].mac, 6);
		memcpy(port->out.macs + 6, tn->mac, 6);
		if (s->capture && !open_capture(s, port, outdir, err, sizeof(err))) {
			fprintf(report, "mrcemu: %s\n", err);
			return false;
		}
		port->out.tx_cap = port->cap;
		port->out.pcaps = port->cap ? SIM_TX_PCAP : 0;
		port->out.tx_cap_key = capture_sent_key(tn->kind == NODE_NIC);
	}
	if (tn->kind == NODE_SWITCH)
		return build_switch(s, n, report);
	if (tn->kind != NODE_NIC)
		return true;
	struct nic_params prm = {
	    .name = tn->name,
	    .attrs = &tn->nic,
	    .link = &n->links[0],
	    .rate = topology_port_rate(s->t, i, 0),
	    .mac = tn->mac,
	    .peer_mac = s->t->nodes[tn->ports[0].peer].mac,
	    .seed = s->t->emu.seed,
	    .events = s->q,
	    .timers = s->timers,
	    .pool = &s->pool,
	    .host = {.ctx = &n->ports[0],
		     .transmit = s->capture ? nic_transmit_captured : nic_transmit,
		     .completion = completion,
		     .failed = failed},
	    .records = s->rec,
	    .elide_before = s->elide_before};
	n->nic = nic_new(&prm);
	return n->nic != NULL;
}

/* Each wire learns the engine and the pcap at its far end. */
static void connect_wires(struct sim *s)
{
	for (int i = 0; i < s->t->nnodes; i++)
		for (int p = 0; p < s->nodes[i].nports; p++) {
			struct sim_wire *w = &s->nodes[i].ports[p].out;
			struct sim_node *dst = &s->nodes[w->to_node];
			w->rx = dst->nic ? (void *)dst->nic : (void *)dst->sw;
			w->rx_kind = dst->nic ? SIM_RX_NIC : dst->sw ? SIM_RX_SW : SIM_RX_NOWHERE;
			w->rx_cap = dst->ports[w->to_port].cap;
			w->pcaps |= w->rx_cap ? SIM_RX_PCAP : 0;
		}
}

/* ---- records ------------------------------------------------------------- */

static bool any_nic(const struct topology *t, size_t offset)
{
	for (int i = 0; i < t->nnodes; i++)
		if (t->nodes[i].kind == NODE_NIC && *((const bool *)&t->nodes[i].nic + offset))
			return true;
	return false;
}

#define ANY_NIC(t, field) any_nic(t, offsetof(struct nic_attrs, field))

static bool any_switch_stats(const struct topology *t)
{
	for (int i = 0; i < t->nnodes; i++)
		if (t->nodes[i].kind == NODE_SWITCH && t->nodes[i].sw.stats)
			return true;
	return false;
}

static struct csv *open_record(const char *dir, const char *name, const char *header, FILE *report,
			       bool *ok)
{
	struct csv *c = csv_open(dir, name, header);

	if (!c) {
		fprintf(report, "mrcemu: %s/%s: %s\n", dir, name, strerror(errno));
		*ok = false;
	}
	return c;
}

static bool open_records(struct sim *s, const char *dir, FILE *report)
{
	bool ok = true;
	char pcaps[4200];

	snprintf(pcaps, sizeof(pcaps), "%s/pcap", dir);
	if (!records_mkdir(dir) || (s->capture && !records_mkdir(pcaps))) {
		fprintf(report, "mrcemu: %s: %s\n", dir, strerror(errno));
		return false;
	}
	if (ANY_NIC(s->t, transport_stats))
		s->rec.stats =
		    open_record(dir, "mrc-transport-stats.csv", nic_stats_header(), report, &ok);
	if (ok && ANY_NIC(s->t, event_logging))
		s->rec.events = open_record(dir, "mrc-events.csv", NIC_EVENTS_HEADER, report, &ok);
	if (ok && ANY_NIC(s->t, monitor))
		s->rec.monitor =
		    open_record(dir, "mrc-monitor.csv", NIC_MONITOR_HEADER, report, &ok);
	if (ok && ANY_NIC(s->t, cc_trace))
		s->rec.cc = open_record(dir, "mrc-cc.csv", NIC_CC_HEADER, report, &ok);
	if (ok && any_switch_stats(s->t))
		s->switch_stats =
		    open_record(dir, "switch-stats.csv", sw_stats_header(), report, &ok);
	if (ok)
		s->messages = open_record(dir, "messages.csv", DRIVER_MESSAGES_HEADER, report, &ok);
	if (ok && s->chakra)
		s->chakra_nodes = open_record(dir, "chakra.csv", CHAKRA_CSV_HEADER, report, &ok);
	return ok;
}

/* samples.csv when SampleInterval (or --report) asks for it. */
static bool start_samples(struct sim *s, const char *dir, FILE *report)
{
	ps_t ivl = s->sample_ivl;
	bool ok = true;

	if (!ivl)
		return true;
	s->samples_csv = open_record(dir, "samples.csv", SAMPLES_HEADER, report, &ok);
	if (ok && !(s->samples = samples_new(s->q, s->samples_csv, ivl)))
		ok = false;
	for (int i = 0; ok && i < s->t->nnodes; i++) {
		if (s->nodes[i].sw)
			ok = samples_add_switch(s->samples, s->nodes[i].sw);
		else if (s->nodes[i].nic)
			ok = samples_add_nic(s->samples, s->nodes[i].nic);
	}
	if (ok)
		samples_start(s->samples);
	return ok;
}

/* ---- the run ------------------------------------------------------------- */

static uint64_t nic_get(const void *nic, const char *name)
{
	return nic_counter(nic, name);
}

static uint64_t sw_get(const void *sw, const char *name)
{
	return sw_counter(sw, name);
}

/* A Chakra run's messages, its waiting nodes, and its summary lines. */
static void summarize_chakra(struct sim *s, struct sim_result *r, FILE *report)
{
	ps_t *fct = calloc(s->cx.sends + 1, sizeof(ps_t));
	size_t n = 0;
	FILE *f;

	chakra_exec_count(&s->cx, &r->o.messages, &r->o.completed, &r->o.failed, &r->o.unverified,
			  fct, &n);
	if (fct)
		outcome_fct(&r->o, fct, n);
	free(fct);
	r->chakra_done = chakra_exec_done(&s->cx);
	if (!r->chakra_done) {
		char t[32];
		fprintf(report, "chakra: %llu of %llu nodes unfinished at %s%s; waiting:\n",
			(unsigned long long)(s->cx.nodes - s->cx.nodes_done),
			(unsigned long long)s->cx.nodes, time_format(r->end, t, sizeof(t)),
			chakra_exec_stalled(&s->cx) ? " (deadlock: nothing left that could move it)"
						    : "");
		chakra_exec_report(&s->cx, report);
	}
	f = fmemopen(r->chakra_summary, sizeof(r->chakra_summary) - 1, "w");
	if (f) {
		chakra_exec_summary(&s->cx, f);
		fclose(f);
	}
	chakra_exec_write_nodes(&s->cx, s->chakra_nodes);
	chakra_exec_write_messages(&s->cx, s->messages);
}

static void summarize(struct sim *s, struct sim_result *r, FILE *report)
{
	ps_t *fct = calloc(s->w.count ? s->w.count : 1, sizeof(ps_t));
	size_t n = 0;

	if (s->chakra) {
		free(fct);
		fct = NULL;
		summarize_chakra(s, r, report);
	}
	for (size_t i = 0; i < s->w.count; i++) {
		const struct driver_msg *m = &s->driver.msgs[i];
		r->o.completed += m->done;
		r->o.failed += m->failed;
		r->o.unverified += m->done && !(m->received && m->verified);
		if (m->done && fct)
			fct[n++] = m->complete - m->posted;
	}
	if (!s->chakra)
		driver_report(&s->driver, report);
	if (fct)
		outcome_fct(&r->o, fct, n);
	free(fct);
	for (int i = 0; i < s->t->nnodes; i++) {
		struct nic *nic = s->nodes[i].nic;
		if (s->nodes[i].sw) {
			sw_settle(s->nodes[i].sw);
			outcome_add_switch(&r->o, sw_get, s->nodes[i].sw);
			sw_finish(s->nodes[i].sw, r->end);
		}
		if (!nic)
			continue;
		outcome_add_nic(&r->o, nic_get, nic);
		nic_each_open(nic, driver_open, &s->driver);
		nic_finish(nic, r->end, report);
	}
}

static double cpu_now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

/* docs/cli.md: a long run shows its progress on a terminal. */
static void progress(struct sim *s, bool last)
{
	static const double every = 0.5; /* seconds of CPU */
	double now;
	char t[32];

	if (!s->progress || (!last && (now = cpu_now()) < s->progress_at))
		return;
	if (!last)
		s->progress_at = now + every;
	fprintf(stderr, "\r  virtual %s  messages %llu/%llu  events %llu%s",
		time_format(events_now(s->q), t, sizeof(t)),
		(unsigned long long)(s->chakra ? s->cx.sends_finished : s->driver.sends_finished),
		(unsigned long long)(s->chakra ? s->cx.sends : s->driver.sends),
		(unsigned long long)events_executed(s->q), last ? "\n" : "");
}

/* Without a stop time the loop need not look ahead: events_next costs a
 * scan of the wheel's earliest slot whenever `ready` is empty, a tenth of
 * a fabric run (scripts/bench-fabric). */
static void run_unbounded(struct sim *s, bool *capped)
{
	/* Without a progress line or a Chakra trace, the queue runs the loop
	 * below itself: the driver stops it after the event where its last
	 * message finished (one test per event instead of a call and three;
	 * issue 16), and whatever is due at SIM_DEFAULT_LIMIT or later is
	 * left to the loop, which runs the first such event and stops. */
	if (!s->progress && !s->chakra && !workload_done(s))
		events_run_until_stop(s->q, SIM_DEFAULT_LIMIT - 1);
	for (uint64_t n = 1; !workload_done(s); n++) {
		if ((n & 0xFFFF) == 0)
			progress(s, false);
		if (!events_run_one(s->q))
			break;
		/* A message that can never complete (a link down for good, no
		 * retry budget) must not run forever. */
		if (events_now(s->q) >= SIM_DEFAULT_LIMIT) {
			*capped = true;
			break;
		}
	}
}

static void run_until(struct sim *s, ps_t until)
{
	for (uint64_t n = 1; !workload_done(s); n++) {
		if ((n & 0xFFFF) == 0)
			progress(s, false);
		ps_t next = events_next(s->q);
		if (next == PS_NEVER || next > until)
			break;
		events_run_one(s->q);
	}
}

static void run_loop(struct sim *s, ps_t until, bool *capped)
{
	if (until)
		run_until(s, until);
	else
		run_unbounded(s, capped);
	if (s->progress_at)
		progress(s, true);
}

/* ARCHITECTURE.md, One end: after the last completion the run goes on
 * until no frame is in flight anywhere (on a link, queued in a port or
 * being serialized: every frame is a packet of the pool), so that every
 * frame sent is received, counted and captured.  T_end is that instant:
 * the last completion plus this drain.  Bounded by `until` and by
 * SIM_DEFAULT_LIMIT, like the run itself. */
static void drain(struct sim *s, ps_t until)
{
	ps_t limit = until ? until : SIM_DEFAULT_LIMIT;

	while (s->pool.in_use) {
		ps_t next = events_next(s->q);
		if (next == PS_NEVER || next > limit)
			break;
		events_run_one(s->q);
	}
}

/* The run proper, apart from set-up and records: its CPU is what the
 * packets cost (r->cpu_run_seconds), and scripts/bench-scale counts its
 * instructions alone (callgrind --toggle-collect=run_events*). */
static __attribute__((noinline)) void run_events(struct sim *s, ps_t until, struct sim_result *r)
{
	double cpu0 = cpu_now();

	run_loop(s, until, &r->capped);
	if (s->chakra)
		r->chakra_end = chakra_exec_end(&s->cx);
	if (workload_done(s))
		drain(s, until);
	r->cpu_run_seconds = cpu_now() - cpu0;
}

static void sim_free(struct sim *s)
{
	for (int i = 0; s->nodes && i < s->t->nnodes; i++) {
		struct sim_node *n = &s->nodes[i];
		nic_free(n->nic);
		sw_free(n->sw);
		for (int p = 0; p < n->nports; p++) {
			struct sim_wire *w = &n->ports[p].out;
			for (uint32_t k = 0; k < w->len; k++)
				pkt_put(&s->pool, frame_pkt(w->ring[(w->head + k) & w->mask].p));
			free(w->ring);
			if (n->ports[p].cap)
				capture_close(n->ports[p].cap);
		}
		free(n->ports);
		free(n->links);
	}
	driver_destroy(&s->driver);
	if (s->chakra) {
		chakra_exec_destroy(&s->cx);
		chakra_free(&s->trace);
	}
	samples_free(s->samples);
	free(s->nodes);
	timers_free(s->timers);
	if (s->q)
		events_free(s->q);
	pkt_pool_destroy(&s->pool);
	workload_free(&s->w);
	topology_free(s->t);
}

static int node_rank(void *ctx, const char *node)
{
	return topology_find(ctx, node);
}

/* The time-ordered records end in the order `mrcemu run` merges them (by
 * time, then node), so both hosts agree byte for byte (docs/promises.md). */
static bool close_records(struct sim *s)
{
	bool ok = true;
	struct csv *timed[] = {s->rec.stats, s->rec.events,   s->rec.monitor,
			       s->rec.cc,    s->switch_stats, s->samples_csv};
	char path[4096];

	for (size_t i = 0; i < sizeof(timed) / sizeof(timed[0]); i++) {
		if (!timed[i])
			continue;
		snprintf(path, sizeof(path), "%s", timed[i]->path);
		ok &= csv_close(timed[i]) && records_sort_by_time_node(path, node_rank, s->t);
	}
	if (s->messages && !csv_close(s->messages))
		ok = false;
	if (s->chakra_nodes && !csv_close(s->chakra_nodes))
		ok = false;
	return ok;
}

static bool sim_load(struct sim *s, const struct sim_options *o, FILE *report)
{
	char err[TOPO_ERR_MAX];

	s->t = topology_load_set(o->topology, o->sets, o->nsets, err, sizeof(err));
	if (!s->t) {
		fprintf(report, "%s\n", err);
		return false;
	}
	if (o->seed_set)
		s->t->emu.seed = o->seed;
	if (s->t->workload[0] && !workload_load(s->t->workload, s->t, &s->w, err, sizeof(err))) {
		fprintf(report, "%s\n", err);
		return false;
	}
	/* Every rank's file is read and checked before anything starts. */
	if (s->t->chakra[0] && !chakra_load(s->t, &s->trace, err, sizeof(err))) {
		fprintf(report, "%s\n", err);
		return false;
	}
	s->chakra = s->t->chakra[0] != 0;
	return true;
}

int sim_run(const struct sim_options *o, struct sim_result *r, FILE *report)
{
	struct sim s = {0};
	double cpu0 = cpu_now();
	int rc = 2;
	char extra[160];

	memset(r, 0, sizeof(*r));
	heap_reserve_huge(SIM_HEAP_HUGE);
	if (!sim_load(&s, o, report))
		goto out;
	s.capture = o->capture || s.t->emu.capture;
	s.elide_before = o->until || s.t->emu.until ? 0 : SIM_DEFAULT_LIMIT;
	s.sample_ivl = samples_interval(s.t, &s.w, o->until ? o->until : s.t->emu.until, o->report);
	s.progress = !o->quiet && isatty(STDERR_FILENO);
	if (o->outdir)
		snprintf(r->outdir, sizeof(r->outdir), "%s", o->outdir);
	else
		snprintf(r->outdir, sizeof(r->outdir), "out/%s", s.t->emu.name);
	if (!(s.q = events_new()) || !(s.timers = timers_new(s.q)) ||
	    !pkt_pool_init(&s.pool, 4096, 0) ||
	    !(s.nodes = calloc(s.t->nnodes, sizeof(*s.nodes))) ||
	    !open_records(&s, r->outdir, report))
		goto out;
	for (int i = 0; i < s.t->nnodes; i++)
		if (!build_node(&s, i, r->outdir, report))
			goto out;
	connect_wires(&s);
	if (!start_samples(&s, r->outdir, report))
		goto out;
	if (!driver_init(&s.driver, s.t, &s.w, s.q, -1, nic_of, &s) ||
	    (s.chakra && !chakra_exec_init(&s.cx, s.t, &s.trace, s.q, nic_of, &s))) {
		fprintf(report, "mrcemu: out of memory\n");
		goto out;
	}
	if (s.chakra)
		chakra_exec_start(&s.cx);
	else
		driver_start(&s.driver);
	run_events(&s, o->until ? o->until : s.t->emu.until, r);
	if (r->capped)
		fprintf(report,
			"mrcemu: stopped at %llu s of virtual time with messages still open; "
			"set until (or --until) to run longer\n",
			(unsigned long long)(SIM_DEFAULT_LIMIT / PS_PER_S));
	r->end = events_now(s.q);
	r->auto_rtt = s.t->auto_rtt;
	r->events = events_executed(s.q);
	r->o.messages = s.w.count;
	if (s.samples)
		samples_finish(s.samples, r->end);
	summarize(&s, r, report);
	if (!s.chakra)
		driver_write_messages(&s.driver, s.messages);
	rc = r->o.completed == r->o.messages && !r->o.unverified && (!s.chakra || r->chakra_done)
		 ? 0
		 : 1;
	snprintf(extra, sizeof(extra), "  \"virtual_end_ps\": %llu,\n  \"events\": %llu",
		 (unsigned long long)r->end, (unsigned long long)r->events);
	if (!outcome_write_json(&r->o, r->outdir, extra, report))
		rc = 2;
out:
	if (!close_records(&s))
		rc = 2;
	sim_free(&s);
	r->cpu_seconds = cpu_now() - cpu0;
	return rc;
}

void sim_print_summary(const struct sim_result *r, FILE *out)
{
	char d[32];

	outcome_print(&r->o, out);
	fputs(r->chakra_summary, out);
	if (r->auto_rtt) /* docs/protocol.md §§5, 9 */
		fprintf(out, "auto: fabric round trip %s (ConfigBaseRTT, EgressQueueLimit)\n",
			time_format(r->auto_rtt, d, 32));
	/* The events' own CPU apart: what a packet costs, without set-up and
	 * records (scripts/bench-scale).  In microseconds: an 8-host run's
	 * events take 8 ms, which milliseconds would give to 6 %. */
	fprintf(out, "virtual time: %s  events: %llu  cpu: %.6f s (events %.6f s)\nrecords: %s/\n",
		time_format(r->end, d, 32), (unsigned long long)r->events, r->cpu_seconds,
		r->cpu_run_seconds, r->outdir);
}
