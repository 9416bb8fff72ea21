/* emulator/daemon.c — the runtime nicd and switchd share (daemon.h):
 * received frames and their stamps, transmit, the conservative advance of
 * virtual time, the libev loop, lateness and the end of a run.  Arguments
 * and setup are in daemon_setup.c, the control socket in daemon_ctl.c. */
#include "daemon.h"

#include <errno.h>
#include <ev.h>
#include <sched.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/timerfd.h>
#include <unistd.h>

#include "../pcap/capture.h"
#include "samples.h"

/* One call of daemon_advance runs events for at most this long before it
 * lets the loop serve the control socket (the timer is then already due). */
#define ADVANCE_SLICE_NS 2000000ULL

/* ---- lateness histogram ---------------------------------------------------- */

static unsigned hist_index(uint64_t v)
{
	unsigned e;

	if (v < 64)
		return (unsigned)v;
	e = 63 - (unsigned)__builtin_clzll(v);
	return 64 + (e - 6) * DAEMON_HIST_SUB + (unsigned)((v >> (e - 4)) & (DAEMON_HIST_SUB - 1));
}

static uint64_t hist_upper(unsigned i)
{
	unsigned e, sub;

	if (i < 64)
		return i;
	e = 6 + (i - 64) / DAEMON_HIST_SUB;
	sub = (i - 64) % DAEMON_HIST_SUB;
	return ((uint64_t)(DAEMON_HIST_SUB + sub) << (e - 4)) + (1ULL << (e - 4)) - 1;
}

void daemon_hist_add(struct daemon_hist *h, int64_t ns)
{
	uint64_t v = ns > 0 ? (uint64_t)ns : 0;

	h->buckets[hist_index(v)]++;
	h->count++;
	if (v > h->max)
		h->max = v;
}

uint64_t daemon_hist_pct(const struct daemon_hist *h, unsigned pct)
{
	uint64_t rank, seen = 0;

	if (!h->count)
		return 0;
	if (pct > 100)
		pct = 100;
	rank = (h->count * pct + 99) / 100;
	if (!rank)
		rank = 1;
	for (unsigned i = 0; i < DAEMON_HIST_BUCKETS; i++) {
		seen += h->buckets[i];
		if (seen >= rank)
			return hist_upper(i) < h->max ? hist_upper(i) : h->max;
	}
	return h->max;
}

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
	uint8_t frame[PORT_MAX_FRAME];
};

static struct daemon_rx *rx_slot(struct daemon *d, struct pkt *p)
{
	size_t n = d->pool.slab_size;
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
		if (!d->rx_slabs[k] && !(d->rx_slabs[k] = calloc(n, sizeof(struct daemon_rx))))
			return NULL;
		return (struct daemon_rx *)d->rx_slabs[k] + (x - base) / sizeof(struct pkt);
	}
	return NULL;
}

/* The arrival event: the frame reaches the engine at its own virtual time. */
static void rx_arrive(void *arg, ps_t now)
{
	struct daemon_rx *s = arg;
	struct daemon *d = s->d;
	struct daemon_port *port = &d->ports[s->port];
	struct pkt *p = s->p;

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
 * an event that rule 16 orders after it: then it cannot take its place. */
static bool too_late(const struct daemon *d, ps_t stamp, uint64_t key)
{
	if (!d->ran_any)
		return false;
	return stamp < d->run_time || (stamp == d->run_time && key < d->run_key_max);
}

void daemon_frame_in(struct daemon *d, int port_index, const uint8_t *frame, size_t len,
		     uint64_t rx_mono_ns)
{
	struct daemon_port *port = &d->ports[port_index];
	struct pkt *p;
	struct daemon_rx *s;
	ps_t when, now = events_now(d->q);

	d->frames++;
	if (d->state == DAEMON_STOPPING)
		return;
	if (!(p = pkt_get(&d->pool)) || !(s = rx_slot(d, p))) {
		pkt_put(&d->pool, p);
		d->rx_no_pkt++;
		return;
	}
	s->d = d;
	s->p = p;
	s->port = (uint16_t)port_index;
	s->len = (uint32_t)(len < PORT_MAX_FRAME ? len : PORT_MAX_FRAME);
	memcpy(s->frame, frame, s->len);
	s->key = events_key_arrival(port->rx_id, port->rx_seq++);
	s->has_stamp = port->stamped && wire_trailer_get(s->frame, s->len, &s->stamp);
	if (s->has_stamp) {
		d->stamped++;
		if (too_late(d, s->stamp, s->key))
			d->violations++;
		when = s->stamp;
	} else if (d->state == DAEMON_RUNNING) {
		/* An external endpoint's frame arrives when it was received. */
		when = vclock_at(&d->vc, rx_mono_ns ? rx_mono_ns : d->clock_ns(d->clock_ctx));
	} else {
		when = now;
	}
	events_schedule_key(d->q, when > now ? when : now, s->key, rx_arrive, s);
}

static void rx_frame(void *arg, const uint8_t *data, size_t len, uint64_t rx_mono_ns)
{
	struct daemon_port *port = arg;

	daemon_frame_in(port->d, port->index, data, len, rx_mono_ns);
}

static void drain_ports(struct daemon *d)
{
	for (int i = 0; i < d->nports; i++)
		if (d->ports[i].io)
			port_recv(d->ports[i].io, 0, rx_frame, &d->ports[i]);
}

static void flush_ports(struct daemon *d)
{
	for (int i = 0; i < d->nports; i++)
		if (d->ports[i].io)
			port_flush(d->ports[i].io);
}

/* ---- transmit -------------------------------------------------------------- */

/* Build p and send it on port (queued in the port's batch). */
static void send_frame(struct daemon *d, struct daemon_port *port, const struct pkt *p,
		       ps_t arrival)
{
	uint8_t *buf = port->io ? port_tx_buf(port->io) : d->scratch;
	size_t n = wire_build(p, buf, PORT_MAX_FRAME - WIRE_TRAILER_LEN);

	if (!n) {
		port->tx_build_failed++;
		return;
	}
	if (port->stamped) {
		/* The trailer follows the IP datagram (docs/architecture.md). */
		size_t end =
		    WIRE_ETH_LEN + ((size_t)buf[WIRE_ETH_LEN + 2] << 8 | buf[WIRE_ETH_LEN + 3]);
		wire_trailer_put(buf + end, arrival);
		if (end + WIRE_TRAILER_LEN > n)
			n = end + WIRE_TRAILER_LEN;
	}
	if (port->cap)
		capture_write(port->cap, events_now(d->q), buf, n);
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

/* ---- virtual time ----------------------------------------------------------- */

ps_t daemon_vnow(const struct daemon *d)
{
	if (d->state == DAEMON_WAITING)
		return 0;
	return vclock_at(&d->vc, d->clock_ns(d->clock_ctx));
}

/* Run, in order, each event whose wall time is at or before mono: the
 * instant before the ports were last drained, so no frame that had arrived
 * by then is missing from the queue. */
static uint64_t run_due(struct daemon *d, uint64_t mono)
{
	uint64_t n = 0;
	ps_t t;

	while (d->state == DAEMON_RUNNING && (t = events_next(d->q)) != PS_NEVER) {
		uint64_t due = vclock_wall_ns(&d->vc, t);
		if (due > mono)
			break;
		/* A daemon far behind (a scale too small for its load) still
		 * returns to its loop every slice, to read its ports and answer
		 * its control socket. */
		if ((n & 63) == 63 && d->clock_ns(d->clock_ctx) - mono > ADVANCE_SLICE_NS)
			break;
		daemon_hist_add(&d->late, (int64_t)(d->clock_ns(d->clock_ctx) - due));
		if (!d->ran_any || t != d->run_time) {
			d->run_time = t;
			d->run_key_max = 0;
		}
		d->ran_any = true;
		d->cur_key = EVENTS_KEY_ENGINE;
		events_run_one(d->q);
		if (d->cur_key > d->run_key_max)
			d->run_key_max = d->cur_key;
		n++;
	}
	return n;
}

/* Every wake drains the ports before it runs anything, so while a timer
 * wake is due within poll_ns the ports need no watcher of their own: a
 * frame then waits at most poll_ns to be read, a quarter of the slack its
 * stamp gives it (link delay x scale), and a busy receiver wakes once per
 * frame where it woke twice.  Idle, the ports wake the daemon. */
static void watch_ports(struct daemon *d, uint64_t at)
{
	bool watch = !at || at > d->clock_ns(d->clock_ctx) + d->poll_ns;

	if (watch == d->ports_watched || !d->loop)
		return;
	for (int i = 0; i < d->nports; i++) {
		if (!d->ports[i].watcher)
			continue;
		if (watch)
			ev_io_start(d->loop, d->ports[i].watcher);
		else
			ev_io_stop(d->loop, d->ports[i].watcher);
	}
	d->ports_watched = watch;
}

/* A quarter of the smallest slack of a stamped port; frames from external
 * endpoints are stamped when read, so they are read at once. */
static uint64_t poll_interval(const struct daemon *d)
{
	uint64_t p = UINT64_MAX;

	for (int i = 0; i < d->nports; i++) {
		uint64_t slack = d->links[i].delay * d->vc.scale / 1000;
		if (!d->ports[i].stamped)
			return 0;
		if (slack / 4 < p)
			p = slack / 4;
	}
	return p == UINT64_MAX ? 0 : p;
}

static void arm_timer(struct daemon *d)
{
	struct itimerspec its = {0};
	ps_t next = events_next(d->q);
	uint64_t at = 0;

	if (d->timer_fd < 0)
		return;
	if (d->state == DAEMON_RUNNING && next != PS_NEVER)
		at = vclock_wall_ns(&d->vc, next);
	watch_ports(d, at);
	if (at == d->armed_ns && !d->timer_fired)
		return;
	its.it_value.tv_sec = (time_t)(at / 1000000000ULL);
	its.it_value.tv_nsec = (long)(at % 1000000000ULL);
	timerfd_settime(d->timer_fd, TFD_TIMER_ABSTIME, &its, NULL);
	d->armed_ns = at;
	d->timer_fired = false;
}

/* MaxViolations: the run stops with an error instead of being silently
 * wrong (docs/architecture.md). */
static void check_violations(struct daemon *d)
{
	uint64_t max = d->t->emu.max_violations;

	if (!max || d->violations <= max || d->failed)
		return;
	d->failed = true;
	d->state = DAEMON_STOPPING;
	fprintf(stderr,
		"%s %s: %llu causality violations exceed MaxViolations %llu: the scale is too "
		"small for this machine\n",
		d->prog, d->me->name, (unsigned long long)d->violations, (unsigned long long)max);
	if (d->loop)
		ev_break(d->loop, EVBREAK_ALL);
}

void daemon_advance(struct daemon *d)
{
	uint64_t begin = d->clock_ns(d->clock_ctx);

	while (d->state == DAEMON_RUNNING) {
		uint64_t mono = d->clock_ns(d->clock_ctx), ran;

		drain_ports(d);
		ran = run_due(d, mono);
		flush_ports(d);
		check_violations(d);
		if (!ran || mono - begin > ADVANCE_SLICE_NS)
			break;
	}
	arm_timer(d);
}

bool daemon_start(struct daemon *d, uint64_t epoch_ns, uint64_t scale, char *err, size_t errlen)
{
	if (d->state != DAEMON_WAITING) {
		snprintf(err, errlen, "already started");
		return false;
	}
	if (!epoch_ns || !scale) {
		snprintf(err, errlen, "start needs an epoch and a scale >= 1");
		return false;
	}
	d->vc.epoch_ns = epoch_ns;
	d->vc.scale = scale;
	d->poll_ns = poll_interval(d);
	d->state = DAEMON_RUNNING;
	if (d->eng.start)
		d->eng.start(d->eng.ctx);
	daemon_advance(d);
	return true;
}

/* ---- the loop ------------------------------------------------------------------ */

static void port_cb(struct ev_loop *loop, ev_io *w, int revents)
{
	struct daemon *d = ((struct daemon_port *)w->data)->d;

	(void)loop;
	(void)revents;
	d->wakes_port++;
	daemon_advance(d);
}

static void timer_cb(struct ev_loop *loop, ev_io *w, int revents)
{
	struct daemon *d = w->data;

	(void)loop;
	(void)revents;
	/* No read(): arm_timer's timerfd_settime clears the expiration. */
	if (d->armed_ns)
		daemon_hist_add(&d->wake, (int64_t)(d->clock_ns(d->clock_ctx) - d->armed_ns));
	d->timer_fired = true;
	d->wakes_timer++;
	daemon_advance(d);
}

/* SIGINT/SIGTERM: flush the records and exit 0 (daemon protocol). */
static void signal_cb(struct ev_loop *loop, ev_signal *w, int revents)
{
	struct daemon *d = w->data;

	(void)revents;
	d->stop = true;
	d->state = DAEMON_STOPPING;
	ev_break(loop, EVBREAK_ALL);
}

static bool open_ports(struct daemon *d)
{
	char err[512];

	for (int i = 0; i < d->nports; i++) {
		struct daemon_port *port = &d->ports[i];
		ev_io *w;

		port->io = port_open(port->ifname, err, sizeof(err));
		if (!port->io) {
			fprintf(stderr, "%s %s: %s\n", d->prog, d->me->name, err);
			return false;
		}
		if (!(w = calloc(1, sizeof(*w))))
			return false;
		port->watcher = w;
		ev_io_init(w, port_cb, port_fd(port->io), EV_READ);
		w->data = port;
		ev_io_start(d->loop, w);
	}
	d->ports_watched = true;
	return true;
}

static bool open_timer(struct daemon *d)
{
	ev_io *w = calloc(1, sizeof(*w));

	/* libev's own timers round to 1 ms under epoll: a timerfd holds the
	 * next deadline, with 1 ns of slack rather than the default 50 us. */
	prctl(PR_SET_TIMERSLACK, 1UL, 0UL, 0UL, 0UL);
	d->timer_fd = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
	if (!w || d->timer_fd < 0) {
		fprintf(stderr, "%s %s: timerfd: %s\n", d->prog, d->me->name, strerror(errno));
		free(w);
		return false;
	}
	d->timer_watcher = w;
	ev_io_init(w, timer_cb, d->timer_fd, EV_READ);
	w->data = d;
	ev_io_start(d->loop, w);
	return true;
}

static bool open_signals(struct daemon *d)
{
	ev_signal *s = calloc(2, sizeof(*s));

	if (!s)
		return false;
	d->sig_watchers = s;
	ev_signal_init(&s[0], signal_cb, SIGINT);
	ev_signal_init(&s[1], signal_cb, SIGTERM);
	s[0].data = s[1].data = d;
	ev_signal_start(d->loop, &s[0]);
	ev_signal_start(d->loop, &s[1]);
	signal(SIGPIPE, SIG_IGN);
	return true;
}

/* A wake-up must not wait behind other processes' time slices: measured
 * here, event lateness at scale 2000 fell from 4 ms to 82 us at p99 under
 * SCHED_FIFO.  The kernel's real-time throttling still leaves the rest of
 * the machine 5%, and an advance gives the loop back every 2 ms. */
static void go_realtime(struct daemon *d)
{
	struct sched_param sp = {.sched_priority = DAEMON_RT_PRIORITY};

	if (sched_setscheduler(0, SCHED_FIFO | SCHED_RESET_ON_FORK, &sp))
		fprintf(stderr, "%s %s: no real-time priority (%s): expect more lateness\n",
			d->prog, d->me->name, strerror(errno));
}

bool daemon_open_io(struct daemon *d)
{
	d->loop = ev_default_loop(EVFLAG_AUTO);
	if (!d->loop) {
		fprintf(stderr, "%s %s: libev: no event loop\n", d->prog, d->me->name);
		return false;
	}
	go_realtime(d);
	return open_signals(d) && open_ports(d) && daemon_mirrors_open(d) && open_timer(d) &&
	       daemon_ctl_open(d);
}

int daemon_run(struct daemon *d)
{
	ev_run(d->loop, 0);
	if (d->failed)
		return 3;
	return d->stop ? 0 : 1;
}

/* ---- the end ------------------------------------------------------------------- */

static void write_lateness(struct daemon *d)
{
	struct csv *c = d->lateness;

	csv_str(c, d->me->name);
	csv_u64(c, d->frames);
	csv_u64(c, d->stamped);
	csv_u64(c, d->violations);
	csv_u64(c, daemon_hist_pct(&d->late, 50));
	csv_u64(c, daemon_hist_pct(&d->late, 99));
	csv_u64(c, d->late.max);
	csv_u64(c, daemon_hist_pct(&d->wake, 50));
	csv_u64(c, daemon_hist_pct(&d->wake, 99));
	csv_u64(c, d->wake.max);
	csv_end(c);
}

/* One line for the daemon's log (the launcher keeps it as NODE.log). */
static void log_summary(const struct daemon *d)
{
	uint64_t out = 0, dropped = 0;

	for (int i = 0; i < d->nports; i++) {
		out += d->ports[i].tx_frames;
		if (d->ports[i].io)
			dropped += port_stats(d->ports[i].io)->rx_dropped +
				   port_stats(d->ports[i].io)->tx_dropped;
	}
	fprintf(stderr,
		"%s %s: %llu frames in (%llu stamped, %llu causality violations), %llu out, %llu "
		"lost by the kernel; wakes: %llu timer, %llu port; lateness p50 %llu ns, p99 %llu "
		"ns, max %llu ns\n",
		d->prog, d->me->name, (unsigned long long)d->frames, (unsigned long long)d->stamped,
		(unsigned long long)d->violations, (unsigned long long)out,
		(unsigned long long)dropped, (unsigned long long)d->wakes_timer,
		(unsigned long long)d->wakes_port,
		(unsigned long long)daemon_hist_pct(&d->late, 50),
		(unsigned long long)daemon_hist_pct(&d->late, 99), (unsigned long long)d->late.max);
}

bool daemon_finish(struct daemon *d)
{
	bool ok = true;

	if (d->loop)
		log_summary(d);
	d->state = DAEMON_STOPPING;
	flush_ports(d);
	if (d->samples)
		samples_finish(d->samples, events_now(d->q));
	if (d->eng.finish)
		d->eng.finish(d->eng.ctx, events_now(d->q));
	for (int i = 0; i < d->nrecords; i++)
		ok &= csv_close(d->records[i]);
	d->nrecords = 0;
	if (d->lateness) {
		write_lateness(d);
		ok &= csv_close(d->lateness);
		d->lateness = NULL;
	}
	for (int i = 0; i < d->nports; i++) {
		if (d->ports[i].cap)
			capture_close(d->ports[i].cap);
		d->ports[i].cap = NULL;
	}
	if (!ok)
		fprintf(stderr, "%s: writing the records in %s failed\n", d->prog, d->outdir);
	return ok;
}

static void free_port(struct daemon *d, struct daemon_port *port)
{
	if (port->watcher) {
		ev_io_stop(d->loop, port->watcher);
		free(port->watcher);
	}
	port_close(port->io);
	port_close(port->mirror);
	if (port->cap)
		capture_close(port->cap);
	while (port->ext_head) {
		struct pkt *p = port->ext_head;
		port->ext_head = p->next;
		pkt_put(&d->pool, p);
	}
}

void daemon_destroy(struct daemon *d)
{
	daemon_ctl_close(d);
	for (int i = 0; i < d->nports; i++)
		free_port(d, &d->ports[i]);
	if (d->timer_watcher) {
		ev_io_stop(d->loop, d->timer_watcher);
		free(d->timer_watcher);
	}
	if (d->timer_fd >= 0)
		close(d->timer_fd);
	if (d->sig_watchers) {
		ev_signal_stop(d->loop, &((ev_signal *)d->sig_watchers)[0]);
		ev_signal_stop(d->loop, &((ev_signal *)d->sig_watchers)[1]);
		free(d->sig_watchers);
	}
	for (int i = 0; i < d->nrecords; i++)
		csv_close(d->records[i]);
	if (d->lateness)
		csv_close(d->lateness);
	samples_free(d->samples);
	if (d->q)
		events_free(d->q);
	pkt_pool_destroy(&d->pool);
	for (size_t k = 0; k < d->rx_nslabs; k++)
		free(d->rx_slabs[k]);
	free(d->rx_slabs);
	topology_free(d->t);
	memset(d, 0, sizeof(*d));
}
