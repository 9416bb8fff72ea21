/* emulator/daemon/daemon_frames.c — frames in and out of a daemon's ports
 * (daemon.h): received frames wait in their slot for their arrival event;
 * link sequence numbers, stamps and promise frames are checked as they are
 * read (docs/promises.md, faults); sent frames are stamped, captured and
 * queued in the port's batch.  The advance of virtual time that decides
 * when they are read and flushed is in daemon.c. */
#include "daemon.h"

#include <ev.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "core/invariant.h"
#include "pcap/capture.h"

/* ---- received frames ------------------------------------------------------------ */

/* A received frame waits for its arrival event in the slot of the pkt that
 * will carry it: wire_parse points the pkt's payload into the slot, and
 * nothing else writes the slot while the pkt lives, so an engine may keep
 * the pkt (a switch queue) and its bytes stay real and intact.  Slots come
 * in slabs that mirror the packet pool's: no allocation per frame. */
struct daemon_rx {
	struct daemon *d;
	struct pkt *p;
	uint64_t key;
	ps_t stamp;
	uint32_t len;
	uint16_t port;
	bool has_stamp;
	uint8_t frame[]; /* d->frame_max bytes */
};

/* A slot's bytes: its fields and the fabric's longest frame, in whole lines. */
static size_t rx_slot_size(const struct daemon *d)
{
	return (sizeof(struct daemon_rx) + d->frame_max + 63) & ~(size_t)63;
}

static struct daemon_rx *rx_slot(struct daemon *d, const struct pkt *p)
{
	size_t n = d->pool.slab_size, size = rx_slot_size(d);
	uintptr_t x = (uintptr_t)p;

	for (size_t k = d->pool.nslabs; k-- > 0;) {
		uintptr_t base = (uintptr_t)d->pool.slabs[k];
		if (x < base || x >= base + n * sizeof(struct pkt))
			continue;
		if (k >= d->rx_nslabs) {
			void **v = realloc(d->rx_slabs, d->pool.nslabs * sizeof(*v));
			if (!v)
				return NULL;
			memset(v + d->rx_nslabs, 0, (d->pool.nslabs - d->rx_nslabs) * sizeof(*v));
			d->rx_slabs = v;
			d->rx_nslabs = d->pool.nslabs;
		}
		if (!d->rx_slabs[k]) {
			if (!(d->rx_slabs[k] = calloc(n, size)))
				return NULL;
			/* In one call each, not a fault a page (daemon_memory.c). */
			daemon_populate((void *)base, n * sizeof(struct pkt));
			daemon_populate(d->rx_slabs[k], n * size);
		}
		return (struct daemon_rx *)((uint8_t *)d->rx_slabs[k] +
					    (x - base) / sizeof(struct pkt) * size);
	}
	return NULL;
}

void daemon_rx_reserve(struct daemon *d)
{
	struct pkt *p = pkt_get(&d->pool);

	if (p)
		rx_slot(d, p);
	pkt_put(&d->pool, p);
}

/* The arrival event: the frame reaches the engine at its own virtual time. */
static void rx_arrive(void *arg, ps_t now)
{
	struct daemon_rx *s = arg;
	struct daemon *d = s->d;
	struct daemon_port *port = &d->ports[s->port];
	struct pkt *p = s->p;

	d->rx_pending--;
	d->cur_key = s->key;
	if (port->cap)
		capture_write(port->cap, now, s->frame, s->len);
	daemon_mirror(port, s->frame, s->len);
	if (!d->eng.receive || wire_parse(s->frame, s->len, port->icrc, p) != WIRE_OK) {
		pkt_put(&d->pool, p);
		d->eng.receive_frame(d->eng.ctx, s->port, s->frame, s->len, now);
		return;
	}
	p->stamp = s->has_stamp ? s->stamp : 0;
	d->eng.receive(d->eng.ctx, s->port, p, now);
}

/* Whether an arrival at (stamp, key) comes after the engine has already run
 * an event that rule 16 orders after it: then it cannot take its place.
 * Promises make this impossible; the count stays as a check. */
static bool too_late(const struct daemon *d, ps_t stamp, uint64_t key)
{
	if (!d->ran_any)
		return false;
	return stamp < d->run_time || (stamp == d->run_time && key < d->run_key_max);
}

static const char *const fault_names[] = {
    [FAULT_NONE] = "none",
    [FAULT_SEQUENCE_GAP] = "sequence_gap",
    [FAULT_PROMISE_BACKWARDS] = "promise_backwards",
    [FAULT_STAMP_BELOW_PROMISE] = "stamp_below_promise",
    [FAULT_MAX_VIOLATIONS] = "max_violations",
    [FAULT_STAMP_OVERFLOW] = "stamp_overflow",
};

/* The run cannot be trusted any more: stop with the reason (daemon.h). */
void daemon_fault(struct daemon *d, enum daemon_fault why, const char *fmt, ...)
{
	va_list ap;

	if (d->fault)
		return;
	d->fault = why;
	va_start(ap, fmt);
	vsnprintf(d->fault_text, sizeof(d->fault_text), fmt, ap);
	va_end(ap);
	fprintf(stderr, "%s %s: %s: %s\n", d->prog, d->me->name, fault_names[why], d->fault_text);
	d->failed = true;
	d->state = DAEMON_STOPPING;
	if (d->loop)
		ev_break(d->loop, EVBREAK_ALL);
}

/* Every frame from a daemon carries the link's next sequence number: a gap
 * is a frame the kernel lost (a full receive queue), and the run stops. */
static bool sequence_ok(struct daemon *d, struct daemon_port *port, uint32_t seq)
{
	if (seq == port->rx_link_seq++)
		return true;
	daemon_fault(
	    d, FAULT_SEQUENCE_GAP,
	    "port %d (from %s): frame %u of the link came where %u was due: the kernel lost "
	    "frames",
	    port->index, d->t->nodes[port->peer].name, seq, port->rx_link_seq - 1);
	return false;
}

/* A promise frame moves the port's promise and tells what the peer wants;
 * one going back on the peer's own promise breaks the protocol (a grant may
 * have put promise_in above it: that is no fault). */
static void promise_in(struct daemon *d, struct daemon_port *port, const struct wire_promise *w)
{
	port->promises_rx++;
	if (!sequence_ok(d, port, w->seq))
		return;
	if (w->promise < port->promise_peer) {
		daemon_fault(d, FAULT_PROMISE_BACKWARDS,
			     "port %d (from %s): promise %llu ps after %llu ps", port->index,
			     d->t->nodes[port->peer].name, (unsigned long long)w->promise,
			     (unsigned long long)port->promise_peer);
		return;
	}
	port->promise_peer = w->promise;
	port->want_in = w->want;
	/* T_end is at least what the peer knows it is (No event after T_end). */
	if (w->end > d->end_known)
		d->end_known = w->end;
	if (w->promise > port->promise_in)
		port->promise_in = w->promise;
}

/* A stamped frame at t is also a promise: the link's next frame arrives no
 * earlier than t + a minimum frame's serialization. */
static bool stamp_in(struct daemon *d, struct daemon_port *port, ps_t stamp, uint32_t seq)
{
	if (!sequence_ok(d, port, seq))
		return false;
	if (stamp < port->promise_peer) {
		daemon_fault(
		    d, FAULT_STAMP_BELOW_PROMISE,
		    "port %d (from %s): a frame stamped %llu ps after a promise of %llu ps",
		    port->index, d->t->nodes[port->peer].name, (unsigned long long)stamp,
		    (unsigned long long)port->promise_peer);
		return false;
	}
	port->promise_peer = stamp + port->ser_min;
	if (port->promise_peer > port->promise_in)
		port->promise_in = port->promise_peer;
	return true;
}

void daemon_frame_in(struct daemon *d, int port_index, const uint8_t *frame, size_t len,
		     uint64_t rx_mono_ns)
{
	struct daemon_port *port = &d->ports[port_index];
	struct pkt *p;
	struct daemon_rx *s;
	ps_t when, now = events_now(d->q);
	struct wire_promise w;
	uint32_t seq;

	if (d->state == DAEMON_STOPPING)
		return;
	if (port->stamped && wire_promise_get(frame, len, &w)) {
		promise_in(d, port, &w);
		return;
	}
	d->frames++;
	if (!(p = pkt_get(&d->pool)) || !(s = rx_slot(d, p))) {
		pkt_put(&d->pool, p);
		d->rx_no_pkt++;
		return;
	}
	s->d = d;
	s->p = p;
	s->port = (uint16_t)port_index;
	s->len = (uint32_t)(len < d->frame_max ? len : d->frame_max);
	memcpy(s->frame, frame, s->len);
	s->key = events_key_arrival(port->rx_id, port->rx_seq++);
	s->has_stamp = port->stamped && wire_trailer_get(s->frame, s->len, &s->stamp, &seq);
	if (s->has_stamp) {
		d->stamped++;
		if (!stamp_in(d, port, s->stamp, seq)) {
			pkt_put(&d->pool, p);
			return;
		}
		if (too_late(d, s->stamp, s->key))
			d->violations++;
		when = s->stamp;
	} else if (d->state == DAEMON_RUNNING && !port->stamped) {
		/* An external endpoint's frame arrives when it was received,
		 * never below what its port was taken to promise. */
		when = vclock_at(&d->vc, rx_mono_ns ? rx_mono_ns : d->clock_ns(d->clock_ctx));
		if (when < port->promise_in)
			when = port->promise_in;
	} else {
		when = now;
	}
	d->rx_pending++;
	events_schedule_key(d->q, when > now ? when : now, s->key, rx_arrive, s);
}

static void rx_frame(void *arg, const uint8_t *data, size_t len, uint64_t rx_mono_ns)
{
	struct daemon_port *port = arg;

	daemon_frame_in(port->d, port->index, data, len, rx_mono_ns);
}

/* Read every port; with a scale, a port facing an external endpoint then
 * counts as having promised the virtual time `vt` the reading began. */
size_t daemon_drain_ports(struct daemon *d, ps_t vt)
{
	size_t n = 0;

	for (int i = 0; i < d->nports; i++) {
		struct daemon_port *port = &d->ports[i];
		if (port->io)
			n += port_recv(port->io, 0, rx_frame, port);
		if (!port->stamped && vt > port->promise_in)
			port->promise_in = vt;
	}
	return n;
}

void daemon_flush_ports(struct daemon *d)
{
	for (int i = 0; i < d->nports; i++)
		if (d->ports[i].io)
			port_flush(d->ports[i].io);
}

/* ---- transmit -------------------------------------------------------------- */

/* A sent frame shows in the sender's pcap when its serialization ends, one
 * link delay before its arrival, as in mrcemu sim: a switch hands it over
 * when serialization starts, so its copy waits for that instant (order key
 * 0: before the arrivals of that picosecond, so the pcap stays in time
 * order). */
struct tx_capture {
	struct capture *cap;
	size_t len;
	uint8_t frame[];
};

static void capture_sent(void *arg, ps_t now)
{
	struct tx_capture *c = arg;

	capture_write(c->cap, now, c->frame, c->len);
	free(c);
}

static void capture_tx(struct daemon *d, struct daemon_port *port, const uint8_t *buf, size_t n,
		       ps_t arrival)
{
	ps_t end = arrival - d->links[port->index].delay;
	struct tx_capture *c;

	if (!port->stamped || end <= events_now(d->q) || !(c = malloc(sizeof(*c) + n))) {
		capture_write(port->cap, events_now(d->q), buf, n);
		return;
	}
	c->cap = port->cap;
	c->len = n;
	memcpy(c->frame, buf, n);
	events_schedule_key(d->q, end, capture_sent_key(d->me->kind == NODE_NIC), capture_sent, c);
}

/* The frame a pkt was parsed from, when the engine forwards frames whole (a
 * switch: every pkt it sends came in by a port, rx_arrive, and its slot is
 * left alone while it lives); NULL for one the engine built, or cut. */
static const uint8_t *forwarded_frame(struct daemon *d, const struct pkt *p)
{
	const struct daemon_rx *s;

	if (!d->eng.forwards || p->trimmed || !(s = rx_slot(d, p)))
		return NULL;
	return s->frame;
}

/* p's bytes into buf: a frame forwarded whole goes out as it came, with what
 * the hop changed written over (wire_forward), else it is built.  A frame
 * that came from a daemon was built by wire_build, so both ways give the
 * same bytes; `make check` compares them. */
static size_t frame_bytes(struct daemon *d, const struct pkt *p, uint8_t *buf, size_t cap)
{
	const uint8_t *from = forwarded_frame(d, p);
	size_t n = from ? wire_forward(p, from, buf, cap) : wire_build(p, buf, cap);

#ifdef MRCEMU_CHECK_INVARIANTS
	if (from && d->ports[rx_slot(d, p)->port].stamped) {
		uint8_t *built = malloc(cap);
		INVARIANT(built && wire_build(p, built, cap) == n && !memcmp(built, buf, n));
		free(built);
	}
#endif
	return n;
}

/* Build p and send it on port (queued in the port's batch). */
static void send_frame(struct daemon *d, struct daemon_port *port, const struct pkt *p,
		       ps_t arrival)
{
	uint8_t *buf = port->io ? port_tx_buf(port->io) : d->scratch;
	size_t cap = port->io ? port->io->tx_cap : sizeof(d->scratch);
	size_t n = frame_bytes(d, p, buf, cap - WIRE_TRAILER_LEN);

	if (!n) {
		port->tx_build_failed++;
		return;
	}
	if (port->stamped) {
		/* The trailer follows the IP datagram (docs/architecture.md). */
		size_t end =
		    WIRE_ETH_LEN + ((size_t)buf[WIRE_ETH_LEN + 2] << 8 | buf[WIRE_ETH_LEN + 3]);
		if (!wire_trailer_put(buf + end, arrival, port->tx_link_seq)) {
			daemon_fault(
			    d, FAULT_STAMP_OVERFLOW,
			    "port %d: a frame arriving at %llu ps, past the trailer's 48-bit "
			    "stamp (%llu ps, 281.47 s: set until, at most 281s)",
			    port->index, (unsigned long long)arrival,
			    (unsigned long long)WIRE_TRAILER_MAX_PS);
			return;
		}
		port->tx_link_seq++;
		if (end + WIRE_TRAILER_LEN > n)
			n = end + WIRE_TRAILER_LEN;
		/* It promises its successor's arrival too (stamp_in). */
		if (arrival + port->ser_min > port->promised)
			port->promised = arrival + port->ser_min;
		/* In flight until it arrives (One end). */
		if (arrival > d->busy_until)
			d->busy_until = arrival;
	}
	if (port->cap)
		capture_tx(d, port, buf, n, arrival);
	daemon_mirror(port, buf, n);
	port->tx_frames++;
	if (port->io)
		port_tx_commit(port->io, n);
}

/* A frame for an external endpoint leaves at the wall time of its virtual
 * arrival (docs/architecture.md); a port's frames arrive in the order sent. */
static void send_external(void *arg, ps_t now)
{
	struct daemon_port *port = arg;
	struct pkt *p = port->ext_head;

	port->ext_head = p->next;
	if (!port->ext_head)
		port->ext_tail = NULL;
	p->next = NULL;
	send_frame(port->d, port, p, now);
	pkt_put(&port->d->pool, p);
}

void daemon_transmit(struct daemon *d, int port_index, struct pkt *p, ps_t arrival)
{
	struct daemon_port *port = &d->ports[port_index];

	if (port->stamped) {
		send_frame(d, port, p, arrival);
		pkt_put(&d->pool, p);
		return;
	}
	p->next = NULL;
	if (port->ext_tail)
		port->ext_tail->next = p;
	else
		port->ext_head = p;
	port->ext_tail = p;
	events_schedule(d->q, arrival, send_external, port);
}
