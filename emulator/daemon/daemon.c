/* emulator/daemon/daemon.c — the runtime nicd and switchd share (daemon.h):
 * the conservative advance of virtual time (safe time, floor, promises) and
 * the libev loop.  Frames in and out of the ports are in daemon_frames.c;
 * lateness and the end of a run in daemon_end.c; arguments
 * and setup are in daemon_setup.c, the control socket in daemon_ctl.c. */
#include "daemon.h"

#include <errno.h>
#include <ev.h>
#include <sched.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/timerfd.h>
#include <unistd.h>

#include "host/samples.h"

/* One call of daemon_advance runs events for at most this long before it
 * lets the loop serve the control socket (the timer is then already due). */
#define ADVANCE_SLICE_NS 2000000ULL

static void go_realtime(struct daemon *d);
static void go_batch(struct daemon *d);
static void raise_switch(struct daemon *d);

/* ---- promises (docs/promises.md) --------------------------------------------- */

/* S: the least promise of the ports (external ones included, as their last
 * read); PS_NEVER for a node with no port. */
static ps_t safe_time(const struct daemon *d)
{
	ps_t s = PS_NEVER;

	for (int i = 0; i < d->nports; i++)
		if (d->ports[i].promise_in < s)
			s = d->ports[i].promise_in;
	return s;
}

/* Whether a port faces an external endpoint, whose promise is the clock. */
static bool has_external(const struct daemon *d)
{
	for (int i = 0; i < d->nports; i++)
		if (!d->ports[i].stamped)
			return true;
	return false;
}

/* With a scale, how far a paced floor may go (floor_at): the clock's
 * virtual time rounded down to a tick, plus a tick.  A daemon facing an
 * external endpoint, whose safe time follows the clock itself, stops at
 * the rounded clock, or its promises would move at every wake-up. */
static ps_t paced_cap(const struct daemon *d, uint64_t mono)
{
	ps_t vt = vclock_at(&d->vc, mono);

	return vt - vt % d->tick + (has_external(d) ? 0 : d->tick);
}

/* Every event before the floor has run, and no event the daemon has not run
 * yet comes before it: min(S, the earliest pending event), and with a scale
 * at most a tick past the clock.  A paced daemon's clock moves its promises
 * a tick at a time, and only when it moves, so an idle paced fabric wakes
 * about 1 / DAEMON_PACED_TICK_NS times a second (two idle neighbours that
 * answered each clock-driven promise with one of their own would never
 * rest); a command takes effect at most two ticks after the clock. */
static ps_t floor_below(const struct daemon *d, ps_t s, uint64_t mono)
{
	ps_t f = s, next = events_next(d->q);

	if (next < f)
		f = next;
	if (!d->max && paced_cap(d, mono) < f)
		f = paced_cap(d, mono);
	return f < d->floor ? d->floor : f;
}

static ps_t floor_at(const struct daemon *d, uint64_t mono)
{
	return floor_below(d, d->safe, mono);
}

static void send_promise(struct daemon *d, struct daemon_port *port, ps_t promise)
{
	uint8_t *buf = port->io ? port_tx_buf(port->io) : d->scratch;
	struct wire_promise w = {
	    .promise = promise, .want = d->want, .end = d->end_bound, .seq = port->tx_link_seq++};
	size_t n = wire_promise_put(buf, d->t->nodes[port->peer].mac, d->me->mac, &w);

	port->promised = promise;
	port->want_sent = d->want;
	port->end_sent = d->end_bound;
	port->promises_tx++;
	if (port->io)
		port_tx_commit(port->io, n);
}

/* A link's lookahead: a minimum frame's serialization and the delay. */
static ps_t lookahead(const struct daemon *d, int i)
{
	return d->links[i].delay + d->ports[i].ser_min;
}

/* What the daemon needs its promises above (docs/promises.md, Idle fabrics
 * jump): its next event, when it may run it and it is near enough to crawl
 * to (a far one waits for a grant: the fabric jumps), and with a scale only
 * while busy (an idle daemon's timers wait for the conductor, which grants
 * them when the clock comes, rather than crawl along with it); and what
 * each peer wants, less the link's lookahead (our promise there must pass
 * it). */
static ps_t want_of(const struct daemon *d)
{
	ps_t next = events_next(d->q), w = 0;

	if (next != PS_NEVER && next >= d->safe &&
	    next - d->safe < DAEMON_CRAWL_LOOKAHEADS * d->tick && daemon_may_run(d, next) &&
	    (d->max || daemon_busy(d)))
		w = next;
	for (int i = 0; i < d->nports; i++) {
		ps_t la = lookahead(d, i);
		if (d->ports[i].stamped && d->ports[i].want_in > la && d->ports[i].want_in - la > w)
			w = d->ports[i].want_in - la;
	}
	return w;
}

/* Whether a conducted daemon sends on port: its promise moved and the peer
 * wants it (up to a few lookaheads past its want, so a busy peer need not
 * ask each time), or our want went up while the peer holds us back, or our
 * end bound did while we wait for it (it may be waiting to learn that T_end
 * is past its next event: No event after T_end). */
static bool promise_due(const struct daemon *d, const struct daemon_port *port, ps_t p)
{
	ps_t horizon = DAEMON_WANT_LOOKAHEADS * lookahead(d, port->index);

	if (!d->conducted)
		return p > port->promised;
	if (p > port->promised && port->promised < port->want_in + horizon)
		return true;
	return (d->want > port->want_sent || (d->end_bound > port->end_sent && daemon_idle(d))) &&
	       port->promise_in <= d->want;
}

/* The least promise of the ports other than the one holding the least
 * (PS_NEVER with one port), and which that one is. */
static ps_t safe_but_least(const struct daemon *d, int *least)
{
	ps_t s1 = PS_NEVER, s2 = PS_NEVER;

	*least = -1;
	for (int i = 0; i < d->nports; i++) {
		ps_t p = d->ports[i].promise_in;
		if (p < s1) {
			s2 = s1;
			s1 = p;
			*least = i;
		} else if (p < s2) {
			s2 = p;
		}
	}
	return s2;
}

/* On each port to a daemon, the least arrival of anything still to come,
 * sent only when it moves the peer forward (and, conducted, when wanted).
 * The floor behind it is F, but for a port whose own promise holds S back
 * and that may ignore it, the floor below the others' (docs/promises.md,
 * Lookahead). */
static void send_promises(struct daemon *d, uint64_t mono)
{
	int least;
	ps_t s2 = safe_but_least(d, &least);

	d->floor = floor_at(d, mono);
	if (d->conducted)
		d->want = want_of(d);
	d->end_bound = daemon_end_bound(d);
	for (int i = 0; i < d->nports; i++) {
		struct daemon_port *port = &d->ports[i];
		ps_t f = d->floor, p;
		if (!port->stamped)
			continue;
		if (i == least && port->own_ignored)
			f = floor_below(d, s2, mono);
		p = d->eng.tx_floor ? d->eng.tx_floor(d->eng.ctx, i, f) : f + d->links[i].delay;
		if (promise_due(d, port, p))
			send_promise(d, port, p > port->promised ? p : port->promised);
		port->withheld = p > port->promised;
	}
}

/* ---- virtual time ----------------------------------------------------------- */

ps_t daemon_vnow(const struct daemon *d)
{
	if (d->state == DAEMON_WAITING)
		return 0;
	if (d->max)
		return d->floor;
	return vclock_at(&d->vc, d->clock_ns(d->clock_ctx));
}

ps_t daemon_cmd_time(const struct daemon *d)
{
	ps_t t = d->state == DAEMON_RUNNING ? floor_at(d, d->clock_ns(d->clock_ctx)) : 0;

	if (t < d->cmd_min)
		t = d->cmd_min;
	return t < events_now(d->q) ? events_now(d->q) : t;
}

void daemon_hold(struct daemon *d, ps_t g)
{
	if (g > d->cmd_min)
		d->cmd_min = g;
}

bool daemon_busy(const struct daemon *d)
{
	struct daemon_progress pr = {0};

	if (d->pool.in_use)
		return true;
	if (d->eng.progress)
		d->eng.progress(d->eng.ctx, &pr);
	return pr.sends_finished < pr.sends || pr.receives_done < pr.receives;
}

ps_t daemon_end_bound(const struct daemon *d)
{
	struct daemon_progress pr = {0};
	ps_t e = d->end_known > d->busy_until ? d->end_known : d->busy_until;

	if (!d->conducted || !d->max)
		return 0;
	if (d->eng.progress)
		d->eng.progress(d->eng.ctx, &pr);
	e = pr.last_done > e ? pr.last_done : e;
	return daemon_busy(d) && d->floor > e ? d->floor : e;
}

bool daemon_may_run(const struct daemon *d, ps_t t)
{
	struct daemon_progress pr = {0};

	if (d->until && t > d->until)
		return false;
	if (!d->conducted || !d->max || daemon_busy(d))
		return true;
	if (d->eng.progress)
		d->eng.progress(d->eng.ctx, &pr);
	return t < d->end_known || t < d->busy_until || t < pr.last_done;
}

/* Run, in order, each event before the safe time whose wall time (with a
 * scale) is at or before mono: the instant before the ports were last
 * drained, so no frame that had arrived by then is missing from the queue. */
static uint64_t run_due(struct daemon *d, uint64_t mono)
{
	uint64_t n = 0, due = 0;
	size_t held;
	ps_t t;

	while (d->state == DAEMON_RUNNING && (t = events_next(d->q)) < d->safe) {
		if (!d->max && (due = vclock_wall_ns(&d->vc, t)) > mono)
			break;
		if (!daemon_may_run(d, t))
			break;
		/* A daemon with much to do still returns to its loop every
		 * slice, to read its ports and answer its control socket. */
		if ((n & 63) == 63 && d->clock_ns(d->clock_ctx) - mono > ADVANCE_SLICE_NS)
			break;
		if (!d->max)
			daemon_hist_add(&d->late, (int64_t)(d->clock_ns(d->clock_ctx) - due));
		if (!d->ran_any || t != d->run_time) {
			d->run_time = t;
			d->run_key_max = 0;
		}
		d->ran_any = true;
		d->cur_key = EVENTS_KEY_ENGINE;
		held = d->pool.in_use - d->rx_pending;
		events_run_one(d->q);
		if (d->cur_key > d->run_key_max)
			d->run_key_max = d->cur_key;
		/* A frame arrived, or one was held before or after: the
		 * fabric was not empty at t (One end). */
		if ((d->cur_key != EVENTS_KEY_ENGINE || held || d->pool.in_use - d->rx_pending) &&
		    t > d->busy_until)
			d->busy_until = t;
		n++;
	}
	return n;
}

/* The smallest lookahead of a port to a daemon, for a paced daemon's
 * promise tick. */
static ps_t min_lookahead(const struct daemon *d)
{
	ps_t m = PS_NEVER;

	for (int i = 0; i < d->nports; i++)
		if (d->ports[i].stamped && d->links[i].delay + d->ports[i].ser_min < m)
			m = d->links[i].delay + d->ports[i].ser_min;
	return m;
}

/* With a scale, the next wake-up: the next event once it is safe and due;
 * when S waits for an external port's read, the instant just after the
 * next event; and while the clock holds the floor back, often enough (half
 * the least lookahead) that the promises keep the neighbours going.  At max
 * only frames wake the daemon. */
static uint64_t next_wake(const struct daemon *d)
{
	ps_t next = events_next(d->q), s = d->safe, la = min_lookahead(d), ext = PS_NEVER;
	uint64_t at = 0;

	if (d->state != DAEMON_RUNNING)
		return 0;
	/* At max only frames wake the daemon, unless an advance gave the loop
	 * back with events still to run: then at once. */
	if (d->max)
		return next < s && daemon_may_run(d, next) ? 1 : 0;
	for (int i = 0; i < d->nports; i++)
		if (!d->ports[i].stamped && d->ports[i].promise_in < ext)
			ext = d->ports[i].promise_in;
	if (next < s)
		at = vclock_wall_ns(&d->vc, next);
	else if (next != PS_NEVER && ext == s)
		at = vclock_wall_ns(&d->vc, next) + 1;
	if (la != PS_NEVER && d->floor < (next < s ? next : s)) {
		uint64_t tick = vclock_wall_ns(&d->vc, paced_cap(d, d->clock_ns(d->clock_ctx)));
		if (!at || tick < at)
			at = tick;
	}
	return at;
}

bool daemon_port_may_wait(const struct daemon *d, const struct daemon_port *port)
{
	ps_t next = events_next(d->q);

	return d->max && d->conducted && d->state == DAEMON_RUNNING && port->stamped &&
	       !port->withheld && port->promise_in > d->safe && next != PS_NEVER &&
	       next >= d->safe && daemon_may_run(d, next) && d->want >= next;
}

/* Before the daemon waits: a port wakes it unless its frames may wait. */
static void watch_ports(struct daemon *d)
{
	for (int i = 0; d->loop && i < d->nports; i++) {
		struct daemon_port *port = &d->ports[i];
		bool watch = !daemon_port_may_wait(d, port);

		for (int k = 0; k < port->nwatchers; k++) {
			ev_io *w = (ev_io *)port->watcher + k;
			if (watch == (bool)ev_is_active(w))
				continue;
			if (watch)
				ev_io_start(d->loop, w);
			else
				ev_io_stop(d->loop, w);
		}
	}
}

static void arm_timer(struct daemon *d)
{
	struct itimerspec its = {0};
	uint64_t at = next_wake(d);

	if (d->timer_fd < 0)
		return;
	watch_ports(d);
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
	daemon_fault(d, FAULT_MAX_VIOLATIONS, "%llu causality violations exceed MaxViolations %llu",
		     (unsigned long long)d->violations, (unsigned long long)max);
}

/* Waiting with an event pending that promises hold back. */
static void wait_begin(struct daemon *d)
{
	ps_t next = events_next(d->q);

	d->wait_since = 0;
	if (d->state == DAEMON_RUNNING && next != PS_NEVER && next >= d->safe) {
		d->wait_since = d->clock_ns(d->clock_ctx);
		d->promise_waits++;
	}
}

static void wait_end(struct daemon *d, uint64_t now)
{
	if (d->wait_since)
		d->wait_ns += now - d->wait_since;
	d->wait_since = 0;
}

/* When the workload became done, to the pass that ran its last event:
 * the launcher learns it only at its next `status` poll (20 ms apart). */
static void note_done(struct daemon *d)
{
	struct daemon_progress pr = {0};

	if (!d->eng.progress)
		return;
	d->eng.progress(d->eng.ctx, &pr);
	if (pr.sends_finished < pr.sends || pr.receives_done < pr.receives)
		d->done_mono = 0;
	else if (!d->done_mono)
		d->done_mono = d->clock_ns(d->clock_ctx);
}

/* Read, run what is safe and due, send, until a pass neither reads nor
 * runs anything (or the slice is over); then the promises, before the
 * daemon waits.  Frames leave after every pass, so that neighbours go on
 * while this daemon does; promises leave with them only after a pass that
 * ran events: a pass that only read promise frames moves the floor, and
 * so the promises, again at the next pass, and each move would cost a
 * frame and a send per port.  Deferred to the end, they leave once per
 * wake-up (docs/promises.md, Lookahead). */
void daemon_advance(struct daemon *d)
{
	uint64_t begin = d->clock_ns(d->clock_ctx), mono = begin, ran_all = 0;

	wait_end(d, begin);
	while (d->state != DAEMON_STOPPING) {
		uint64_t ran = 0;
		bool running = d->state == DAEMON_RUNNING;
		size_t in;

		mono = d->clock_ns(d->clock_ctx);
		in = daemon_drain_ports(d, running && !d->max ? vclock_at(&d->vc, mono) : 0);
		if (d->state != DAEMON_RUNNING)
			break;
		d->safe = safe_time(d);
		ran = run_due(d, mono);
		ran_all += ran;
		if (ran)
			send_promises(d, mono);
		daemon_flush_ports(d);
		check_violations(d);
		if ((!ran && !in) || d->clock_ns(d->clock_ctx) - begin > ADVANCE_SLICE_NS)
			break;
	}
	if (d->state == DAEMON_RUNNING) {
		send_promises(d, mono);
		daemon_flush_ports(d);
		d->wakes_idle += !ran_all;
		if (ran_all)
			note_done(d);
	}
	wait_begin(d);
	arm_timer(d);
}

/* A paced floor's step: DAEMON_PACED_TICK_NS of wall time, at least half
 * the least lookahead (so busy neighbours are never held back by it), at
 * most 32 lookaheads (so a slow scale's promises stay near the clock); half
 * the least lookahead for a daemon facing an external endpoint, whose floor
 * waits for the rounded clock (paced_cap). */
static ps_t paced_tick(const struct daemon *d, uint64_t scale)
{
	ps_t la = min_lookahead(d), t;

	if (la == PS_NEVER)
		return PS_PER_US;
	t = scale && !has_external(d) ? DAEMON_PACED_TICK_NS * PS_PER_NS / scale : 0;
	if (t < (la + 1) / 2)
		t = (la + 1) / 2;
	return t > 32 * la ? 32 * la : t;
}

bool daemon_grant(struct daemon *d, ps_t g, char *err, size_t errlen)
{
	if (!d->conducted || d->state != DAEMON_RUNNING) {
		snprintf(err, errlen, "grant: only a running emulation conducted by its launcher");
		return false;
	}
	/* Nothing is in flight and no event anywhere is before g: whatever
	 * comes is sent at g or later and arrives a link delay (> 0) after. */
	for (int i = 0; i < d->nports; i++)
		if (d->ports[i].stamped && d->ports[i].promise_in <= g)
			d->ports[i].promise_in = g + 1;
	if (d->end_known <= g)
		d->end_known = g + 1;
	d->grants++;
	daemon_advance(d);
	return true;
}

bool daemon_idle(const struct daemon *d)
{
	ps_t next = events_next(d->q);

	return d->state == DAEMON_RUNNING && !(next < d->safe && daemon_may_run(d, next));
}

bool daemon_start(struct daemon *d, uint64_t epoch_ns, uint64_t scale, char *err, size_t errlen)
{
	if (d->state != DAEMON_WAITING) {
		snprintf(err, errlen, "already started");
		return false;
	}
	if (!epoch_ns) {
		snprintf(err, errlen, "start needs an epoch");
		return false;
	}
	d->max = !scale;
	for (int i = 0; d->max && i < d->nports; i++) {
		if (d->ports[i].stamped)
			continue;
		snprintf(err, errlen,
			 "scale max: port %d faces external endpoint %s, which makes no promises; "
			 "give a scale",
			 i, d->t->nodes[d->ports[i].peer].name);
		return false;
	}
	d->vc.epoch_ns = epoch_ns;
	d->vc.scale = scale;
	d->tick = paced_tick(d, scale);
	d->state = DAEMON_RUNNING;
	daemon_cpu_us(d->cpu_start_us);
	if (!d->max && d->loop)
		go_realtime(d);
	if (d->max && d->loop && d->t->emu.batch_scheduling)
		go_batch(d);
	if (d->max && d->loop && d->me->kind == NODE_SWITCH)
		raise_switch(d);
	if (d->eng.start)
		d->eng.start(d->eng.ctx);
	daemon_advance(d);
	return true;
}

/* ---- the loop ------------------------------------------------------------------ */

/* An advance reads every port, so of the ports one poll found readable
 * only the first needs one: by the others' turn their frames are read (and
 * any that came since make the next poll return at once). */
static void port_cb(struct ev_loop *loop, ev_io *w, int revents)
{
	struct daemon *d = ((struct daemon_port *)w->data)->d;
	unsigned iteration = ev_iteration(loop) + 1;

	(void)revents;
	if (d->advanced_in == iteration)
		return;
	d->advanced_in = iteration;
	d->wakes_port++;
	daemon_advance(d);
}

static void timer_cb(struct ev_loop *loop, ev_io *w, int revents)
{
	struct daemon *d = w->data;

	(void)loop;
	(void)revents;
	/* No read(): arm_timer's timerfd_settime clears the expiration. */
	if (d->armed_ns && !d->max)
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

		port->io = port_open(port->ifname, daemon_rx_size(d, i), err, sizeof(err));
		if (!port->io) {
			fprintf(stderr, "%s %s: %s\n", d->prog, d->me->name, err);
			return false;
		}
		port->nwatchers = port_fd2(port->io) >= 0 ? 2 : 1;
		if (!(w = calloc((size_t)port->nwatchers, sizeof(*w))))
			return false;
		port->watcher = w;
		for (int k = 0; k < port->nwatchers; k++) {
			ev_io_init(&w[k], port_cb, k ? port_fd2(port->io) : port_fd(port->io),
				   EV_READ);
			w[k].data = port;
			ev_io_start(d->loop, &w[k]);
		}
	}
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

/* BatchScheduling (docs/promises.md, Wake-ups): a peer this daemon wakes
 * with a frame no longer takes the core from it in the middle of a batch;
 * but a woken daemon no longer takes it from anyone else either, and waits
 * for the scheduler's tick behind other processes. */
static void go_batch(struct daemon *d)
{
	struct sched_param sp = {.sched_priority = 0};

	if (sched_setscheduler(0, SCHED_BATCH | SCHED_RESET_ON_FORK, &sp))
		fprintf(stderr, "%s %s: no SCHED_BATCH (%s)\n", d->prog, d->me->name,
			strerror(errno));
}

/* SwitchPriority (docs/promises.md, Wake-ups): at max the run is as fast as
 * its busiest daemons, the switches, which move the frames of all their
 * ports; with the fair share of one process each they are preempted by
 * every NIC they wake.  Lower niceness weighs their share; it decides
 * only who runs when several may, never what they compute. */
static void raise_switch(struct daemon *d)
{
	int boost = d->t->emu.switch_priority, nice;

	if (!boost)
		return;
	errno = 0;
	nice = getpriority(PRIO_PROCESS, 0);
	if (errno)
		nice = 0;
	nice = nice - boost < -20 ? -20 : nice - boost;
	if (setpriority(PRIO_PROCESS, 0, nice))
		fprintf(stderr, "%s %s: SwitchPriority: no nice %d (%s): a fair share only\n",
			d->prog, d->me->name, nice, strerror(errno));
}

bool daemon_open_io(struct daemon *d)
{
	d->loop = ev_default_loop(EVFLAG_AUTO);
	if (!d->loop) {
		fprintf(stderr, "%s %s: libev: no event loop\n", d->prog, d->me->name);
		return false;
	}
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
