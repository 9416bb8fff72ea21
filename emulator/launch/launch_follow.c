/* emulator/launch/launch_follow.c — following a run to its end
 * (docs/promises.md, One end; Idle fabrics jump): `status` rounds, the
 * progress line, T_end, and the conducting of an idle fabric by grants, at
 * max for `run` and at any scale for `up`'s conductor (Idle `up`). */
#include <stdlib.h>
#include <string.h>

#include "launch_run.h"

/* ---- running ------------------------------------------------------------------ */

static bool workload_done(const struct launch *l)
{
	for (int i = 0; i < l->t->nnodes; i++) {
		const struct daemon *d = &l->d[i];
		if (l->t->nodes[i].kind != NODE_NIC)
			continue;
		if (!d->answered_ns || d->sends < d->sends_total || d->receives < d->receives_total)
			return false;
	}
	return true;
}

/* The wall time from the start to the end of the workload, which every NIC
 * with messages timed when it saw its own done (`status` done_wall_ns):
 * the poll that finds the workload done comes up to POLL_MS later. */
static uint64_t workload_wall(const struct launch *l, uint64_t now)
{
	uint64_t end = 0;

	for (int i = 0; i < l->t->nnodes; i++) {
		const struct daemon *d = &l->d[i];
		if (l->t->nodes[i].kind != NODE_NIC || (!d->sends_total && !d->receives_total))
			continue;
		if (!d->done_wall)
			return now - l->started_ns;
		if (l->clock.epoch_ns + d->done_wall > end)
			end = l->clock.epoch_ns + d->done_wall;
	}
	return end > l->started_ns && end <= now ? end - l->started_ns : now - l->started_ns;
}

/* Where the emulation stands: the clock's virtual time, or at max the least
 * a daemon has reached (its floor, docs/promises.md). */
ps_t launch_virtual_now(const struct launch *l, uint64_t now)
{
	ps_t vt = PS_NEVER;

	if (!l->max)
		return vclock_at(&l->clock, now);
	for (int i = 0; i < l->t->nnodes; i++)
		if (l->d[i].pid > 0 && l->d[i].vt < vt)
			vt = l->d[i].vt;
	return vt == PS_NEVER ? 0 : vt;
}

/* docs/records.md: virtual time, messages done/total, violations, lateness. */
static void progress_line(const struct launch *l, uint64_t now)
{
	uint64_t done = 0, total = 0, violations = 0, late = 0;
	char vt[32], lt[32];

	for (int i = 0; i < l->t->nnodes; i++) {
		done += l->d[i].sends;
		total += l->d[i].sends_total;
		violations += l->d[i].violations;
		late = l->d[i].late_max_ns > late ? l->d[i].late_max_ns : late;
	}
	fprintf(stderr,
		"\rmrcemu run: virtual %s  messages %llu/%llu  violations %llu  late max %s\033[K",
		time_format(launch_virtual_now(l, now), vt, sizeof(vt)), (unsigned long long)done,
		(unsigned long long)total, (unsigned long long)violations,
		time_format(late * PS_PER_NS, lt, sizeof(lt)));
}

static int status_all(struct launch *l, uint64_t now)
{
	char reply[LAUNCH_REPLY_MAX], cmd[48] = "status";

	if (l->hold)
		snprintf(cmd, sizeof(cmd), "hold %llu", (unsigned long long)l->hold_at);
	l->round_ok = true;
	for (int i = 0; i < l->t->nnodes; i++) {
		struct daemon *d = &l->d[i];
		if (d->pid <= 0)
			continue;
		if (launch_status_poll(l, i, cmd, reply, sizeof(reply))) {
			/* A relayed failure finishes a sender's message after it may
			 * have answered this round: no grant nor end from it. */
			int relayed = launch_relay_failures(l, i);
			if (relayed < 0)
				return 1;
			if (relayed > 0)
				l->round_ok = false;
			continue;
		}
		l->round_ok = false;
		/* A busy daemon may miss a poll; one silent this long is stuck. */
		if (now > d->answered_ns + SILENT_TIMEOUT_MS * 1000000ULL) {
			launch_daemon_report(l, i, "has not answered `status` for 30 s");
			return 1;
		}
	}
	l->held = l->hold && l->round_ok;
	return 0;
}

/* max(done, busy) over the daemons: T_end once every floor has passed it
 * (docs/promises.md, One end). */
static ps_t end_bound(const struct launch *l)
{
	ps_t end = 0;

	for (int i = 0; i < l->t->nnodes; i++) {
		const struct daemon *d = &l->d[i];
		if (d->pid <= 0)
			continue;
		end = d->done > end ? d->done : end;
		end = d->busy > end ? d->busy : end;
	}
	return end;
}

/* Every floor has passed end_bound: that is T_end, into l->end. */
static bool end_passed(struct launch *l)
{
	ps_t end = end_bound(l), floor = PS_NEVER;

	for (int i = 0; i < l->t->nnodes; i++)
		if (l->d[i].pid > 0 && l->d[i].floor < floor)
			floor = l->d[i].floor;
	if (floor <= end)
		return false;
	l->end = end;
	return true;
}

/* One end (docs/promises.md): T_end is the last completion plus the drain,
 * the last instant any daemon held a frame or had one in flight; it is
 * known once every daemon's floor has passed it (every event up to it has
 * run).  0 when the daemons do not settle within the stop timeout. */
static ps_t end_find(struct launch *l)
{
	uint64_t give_up = launch_mono_ns() + STOP_TIMEOUT_MS * 1000000ULL;

	for (;;) {
		if (end_passed(l))
			return l->end;
		if (launch_signals_wait(l, 1) || launch_daemons_died(l) ||
		    launch_mono_ns() > give_up || status_all(l, launch_mono_ns()))
			return 0;
	}
}

/* `until` at max (docs/promises.md, One end): the daemons run no event
 * after it, as `mrcemu sim --until` does; once every floor has passed it,
 * or the fabric is quiet with no event left before it, every event up to
 * it has run, and the run ends at the last of them, where sim's does. */
static bool until_passed(struct launch *l, bool quiet_beyond)
{
	ps_t floor = PS_NEVER, last = 0;

	for (int i = 0; i < l->t->nnodes; i++) {
		if (l->d[i].pid <= 0)
			continue;
		floor = l->d[i].floor < floor ? l->d[i].floor : floor;
		last = l->d[i].ran > last ? l->d[i].ran : last;
	}
	if (!l->until || (!quiet_beyond && floor <= l->until))
		return false;
	l->end = last;
	return true;
}

/* Every daemon idle and every link's counts the same at both ends (nothing
 * in flight); the sum of all counts and of the commands the daemons took,
 * which only grow, in *sum. */
static bool fabric_quiet(const struct launch *l, uint64_t *sum)
{
	*sum = 0;
	if (!l->round_ok)
		return false;
	for (int i = 0; i < l->t->nnodes; i++) {
		const struct daemon *d = &l->d[i];
		const struct topo_node *n = &l->t->nodes[i];
		if (d->pid <= 0)
			continue;
		if (!d->idle)
			return false;
		*sum += d->cmds;
		for (int p = 0; p < n->nports; p++) {
			const struct daemon *peer = &l->d[n->ports[p].peer];
			if (peer->pid > 0 && d->link_tx[p] != peer->link_rx[n->ports[p].peer_port])
				return false;
			*sum += (uint64_t)d->link_tx[p] + d->link_rx[p];
		}
	}
	return true;
}

/* `CMD G` to every daemon; 1 (reported) when one does not answer "ok". */
static int send_all(struct launch *l, const char *what, ps_t g, bool *changed)
{
	char cmd[64], reply[LAUNCH_REPLY_MAX];
	uint64_t cmds;

	snprintf(cmd, sizeof(cmd), "%s %llu", what, (unsigned long long)g);
	for (int i = 0; i < l->t->nnodes; i++) {
		if (l->d[i].pid <= 0)
			continue;
		if (!launch_daemon_call(l, i, cmd, reply, sizeof(reply)) || strncmp(reply, "ok", 2))
			return launch_fail(l, "daemon %s: `%s`: %s", l->t->nodes[i].name, cmd,
					   reply);
		if (changed && (!launch_reply_u64(reply, "cmds", &cmds) || cmds != l->d[i].cmds))
			*changed = true;
	}
	return 0;
}

/* Grant g to every daemon, in two steps: `hold g` first, after which a
 * command (`post`, `port`) takes effect no earlier than g, and which says
 * whether one came since this round of `status`; then, if none did,
 * `grant g`.  A command that came in between would otherwise land below
 * what a daemon granted before it already took.  A quiet round of holds
 * at g or above (held) did the first step already.  The fabric stays
 * quiet when no event was at g (a paced grant up to the clock). */
static int grant_all(struct launch *l, ps_t g, ps_t next, bool held)
{
	bool changed = false;

	if (!held && send_all(l, "hold", g, &changed))
		return 1;
	if (changed) {
		l->quiet = false;
		return 0;
	}
	if (send_all(l, "grant", g, NULL))
		return 1;
	l->grants++;
	l->granted = g;
	l->quiet = l->quiet && g < next;
	return 0;
}

enum conduct { CONDUCT_ON, CONDUCT_END, CONDUCT_UNTIL, CONDUCT_FAILED, CONDUCT_REST };

/* The earliest next event of any daemon. */
static ps_t next_event(const struct launch *l)
{
	ps_t g = PS_NEVER;

	for (int i = 0; i < l->t->nnodes; i++)
		if (l->d[i].pid > 0 && l->d[i].next < g)
			g = l->d[i].next;
	return g;
}

/* `up`'s conductor (docs/promises.md, Idle `up`): at max the fabric rests
 * once its work is done, as a run would end, until a command gives it
 * more; with a scale every daemon is granted the earliest next event, at
 * most the clock, so that virtual time never runs ahead of it and a
 * command lands near it. */
static enum conduct conduct_up(struct launch *l, ps_t next)
{
	ps_t g = next, clock = vclock_at(&l->clock, launch_mono_ns());

	if (l->max && (g == PS_NEVER || (workload_done(l) && g >= end_bound(l))))
		return CONDUCT_REST;
	if (!l->max && clock < g)
		g = clock;
	if (l->held && l->hold_at < g)
		g = l->hold_at;
	if (l->grants && g <= l->granted)
		return CONDUCT_REST;
	if (grant_all(l, g, next, l->held))
		return CONDUCT_FAILED;
	return g < next ? CONDUCT_REST : CONDUCT_ON;
}

/* docs/promises.md, Idle fabrics jump: when two rounds of `status` in a row
 * find the fabric quiet and unchanged, nothing more happens until a grant.
 * With the workload done and no event left before max(done, busy), that
 * is T_end and the run is over; otherwise every daemon is granted the
 * earliest next event of any. */
static enum conduct conduct(struct launch *l)
{
	uint64_t sum;
	bool quiet = fabric_quiet(l, &sum), stable = quiet && l->quiet && sum == l->quiet_sum;
	ps_t end = end_bound(l), g;

	l->quiet = quiet;
	l->quiet_sum = sum;
	if (!stable)
		return CONDUCT_ON;
	g = next_event(l);
	if (l->conductor)
		return conduct_up(l, g);
	if (workload_done(l) && g >= end && (!l->until || end <= l->until)) {
		l->end = end;
		return CONDUCT_END;
	}
	if (l->until && g > l->until && until_passed(l, true))
		return CONDUCT_UNTIL;
	if (g == PS_NEVER) {
		launch_fail(l, "no daemon has an event left, yet messages are still open");
		return CONDUCT_FAILED;
	}
	return grant_all(l, g, g, false) ? CONDUCT_FAILED : CONDUCT_ON;
}

/* A max run, conducted: until T_end, `until` or a failure. */
static int follow_max(struct launch *l)
{
	uint64_t next_progress = 0, now;

	for (;;) {
		if (launch_signals_wait(l, l->quiet ? QUIET_POLL_MS : POLL_MS) ||
		    launch_daemons_died(l))
			return 1;
		now = launch_mono_ns();
		if (status_all(l, now))
			return 1;
		if (l->progress && now >= next_progress) {
			progress_line(l, now);
			next_progress = now + 200000000ULL;
		}
		if (workload_done(l) && !l->run_ns)
			l->run_ns = workload_wall(l, now);
		if (l->round_ok && workload_done(l) && end_passed(l) &&
		    (!l->until || l->end <= l->until))
			return 0;
		if (l->round_ok && until_passed(l, false))
			break;
		switch (conduct(l)) {
		case CONDUCT_ON:
			continue;
		case CONDUCT_END:
			return 0;
		case CONDUCT_UNTIL:
			break;
		case CONDUCT_FAILED:
		case CONDUCT_REST: /* `up` only */
			return 1;
		}
		break;
	}
	l->run_ns = launch_mono_ns() - l->started_ns;
	return 0;
}

/* Until the workload is done (every NIC: sends finished and receives done)
 * or `until` passes, or a daemon dies, or a signal comes. */
int launch_follow(struct launch *l)
{
	uint64_t next_progress = 0, now;
	int rc = 0;

	if (l->max) {
		rc = follow_max(l);
		if (l->progress)
			fputs("\r\033[K", stderr);
		return rc;
	}
	for (;;) {
		if (launch_signals_wait(l, POLL_MS) || launch_daemons_died(l)) {
			rc = 1;
			break;
		}
		now = launch_mono_ns();
		if (status_all(l, now)) {
			rc = 1;
			break;
		}
		if (l->progress && now >= next_progress) {
			progress_line(l, now);
			next_progress = now + 200000000ULL;
		}
		if (now >= l->clock.epoch_ns &&
		    (workload_done(l) || (l->until && launch_virtual_now(l, now) >= l->until))) {
			l->run_ns = now - l->clock.epoch_ns;
			if (workload_done(l))
				l->end = end_find(l);
			break;
		}
	}
	if (l->progress)
		fputs("\r\033[K", stderr);
	return rc;
}

/* ---- `up`'s conductor -------------------------------------------------------- */

/* `up --paused`: whether `mrcemu ctl start` has started every daemon (it
 * says so with SIGUSR1: until then the conductor asks them nothing, and
 * paused daemons use no CPU); then the epoch is theirs. */
static bool started(struct launch *l)
{
	char reply[LAUNCH_REPLY_MAX];
	uint64_t epoch = 0;

	if (!l->paused)
		return true;
	if (!l->started_signal)
		return false;
	for (int i = 0; i < l->t->nnodes; i++) {
		if (l->d[i].pid <= 0)
			continue;
		if (!launch_status_poll(l, i, "status", reply, sizeof(reply)) ||
		    strcmp(l->d[i].state, "running") ||
		    !launch_reply_u64(reply, "epoch_ns", &epoch))
			return false;
	}
	l->clock.epoch_ns = epoch;
	l->started_ns = launch_mono_ns();
	l->paused = false;
	return true;
}

/* How long a resting conductor sleeps: until just after the earliest next
 * event's wall time, when it can grant it, and at most CONDUCT_REST_MS (a
 * command, which makes the fabric busy, is noticed by then); an event
 * already granted waits for something else (an external port's read). */
static int rest_ms(const struct launch *l, uint64_t now)
{
	ps_t next = next_event(l);
	uint64_t at;

	if (l->max || next == PS_NEVER)
		return CONDUCT_REST_MS;
	at = vclock_wall_ns(&l->clock, next);
	if (at <= now)
		return POLL_MS;
	if (at - now >= CONDUCT_REST_MS * 1000000ULL)
		return CONDUCT_REST_MS;
	return (int)((at - now) / 1000000ULL) + 1;
}

int launch_conduct(struct launch *l)
{
	int wait_ms = POLL_MS;

	for (;;) {
		if (launch_signals_wait(l, wait_ms))
			return 0;
		if (launch_daemons_died(l))
			return 1;
		wait_ms = CONDUCT_REST_MS;
		if (!started(l)) {
			wait_ms = l->started_signal ? POLL_MS : -1;
			continue;
		}
		if (status_all(l, launch_mono_ns()))
			return 1;
		switch (conduct(l)) {
		case CONDUCT_FAILED:
			return 1;
		case CONDUCT_REST:
			wait_ms = rest_ms(l, launch_mono_ns());
			break;
		default:
			wait_ms = l->quiet ? QUIET_POLL_MS : POLL_MS;
		}
		/* At rest with a scale, the next round holds at the clock as it
		 * will be then, no further than the earliest next event. */
		l->hold = !l->max && l->quiet;
		l->hold_at =
		    vclock_at(&l->clock, launch_mono_ns() + (uint64_t)wait_ms * 1000000ULL);
		if (l->hold_at > next_event(l))
			l->hold_at = next_event(l);
	}
}
