/* emulator/daemon/daemon_end.c — lateness and the end of a run (daemon.h):
 * the histogram of how late events ran, lateness.csv, the summary line, the
 * records flushed at the end, and freeing a daemon. */
#include "daemon.h"

#include <errno.h>
#include <ev.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "host/samples.h"
#include "pcap/capture.h"

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

/* ---- the end ------------------------------------------------------------------- */

static uint64_t promises(const struct daemon *d, bool sent)
{
	uint64_t n = 0;

	for (int i = 0; i < d->nports; i++)
		n += sent ? d->ports[i].promises_tx : d->ports[i].promises_rx;
	return n;
}

/* Bytes of every frame the ports received (stamped, promise, external):
 * with `frames` and `promises_received`, what the kernel moved to this
 * daemon (scripts/bench-fidelity's floor). */
static uint64_t rx_bytes(const struct daemon *d)
{
	uint64_t n = 0;

	for (int i = 0; i < d->nports; i++)
		if (d->ports[i].io)
			n += port_stats(d->ports[i].io)->rx_bytes;
	return n;
}

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
	csv_u64(c, promises(d, true));
	csv_u64(c, promises(d, false));
	csv_u64(c, d->promise_waits);
	csv_u64(c, d->wait_ns);
	csv_u64(c, rx_bytes(d));
	csv_end(c);
}

static long ms(const struct timeval *tv)
{
	return (long)tv->tv_sec * 1000 + (long)tv->tv_usec / 1000;
}

void daemon_cpu_us(long cpu[2])
{
	struct rusage ru = {0};

	getrusage(RUSAGE_SELF, &ru);
	cpu[0] = (long)ru.ru_utime.tv_sec * 1000000 + (long)ru.ru_utime.tv_usec;
	cpu[1] = (long)ru.ru_stime.tv_sec * 1000000 + (long)ru.ru_stime.tv_usec;
}

static const char *policy_name(int policy)
{
	switch (policy) {
	case SCHED_FIFO:
		return "SCHED_FIFO";
	case SCHED_BATCH:
		return "SCHED_BATCH";
	case SCHED_OTHER:
		return "SCHED_OTHER";
	default:
		return "another policy";
	}
}

/* One line for the daemon's log (the launcher keeps it as NODE.log); the
 * wake-ups and task switches are its whole life's (docs/promises.md, What
 * a frame costs). */
static void log_summary(const struct daemon *d)
{
	uint64_t out = 0, dropped = 0;
	struct rusage ru = {0};
	long run[2] = {0, 0}; /* since started: the run without the setup */

	for (int i = 0; i < d->nports; i++) {
		out += d->ports[i].tx_frames;
		if (d->ports[i].io)
			dropped += port_stats(d->ports[i].io)->rx_dropped +
				   port_stats(d->ports[i].io)->tx_dropped;
	}
	getrusage(RUSAGE_SELF, &ru);
	if (d->cpu_start_us[0] || d->cpu_start_us[1]) {
		daemon_cpu_us(run);
		run[0] -= d->cpu_start_us[0];
		run[1] -= d->cpu_start_us[1];
	}
	fprintf(stderr,
		"%s %s: %llu frames in (%llu stamped, %llu causality violations), %llu out, %llu "
		"lost by the kernel; promises %llu out, %llu in, %llu waits (%llu us); ",
		d->prog, d->me->name, (unsigned long long)d->frames, (unsigned long long)d->stamped,
		(unsigned long long)d->violations, (unsigned long long)out,
		(unsigned long long)dropped, (unsigned long long)promises(d, true),
		(unsigned long long)promises(d, false), (unsigned long long)d->promise_waits,
		(unsigned long long)(d->wait_ns / 1000));
	fprintf(stderr,
		"wakes: %llu timer, %llu port, %llu ran nothing; task switches %ld voluntary, %ld "
		"involuntary (%s, nice %d); cpu %ld ms user, %ld ms sys, since start %ld us "
		"user, %ld us sys; ",
		(unsigned long long)d->wakes_timer, (unsigned long long)d->wakes_port,
		(unsigned long long)d->wakes_idle, ru.ru_nvcsw, ru.ru_nivcsw,
		policy_name(sched_getscheduler(0) & ~SCHED_RESET_ON_FORK),
		getpriority(PRIO_PROCESS, 0), ms(&ru.ru_utime), ms(&ru.ru_stime), run[0], run[1]);
	fprintf(stderr, "lateness p50 %llu ns, p99 %llu ns, max %llu ns\n",
		(unsigned long long)daemon_hist_pct(&d->late, 50),
		(unsigned long long)daemon_hist_pct(&d->late, 99), (unsigned long long)d->late.max);
}

bool daemon_finish(struct daemon *d)
{
	bool ok = true;

	if (d->loop)
		log_summary(d);
	d->state = DAEMON_STOPPING;
	daemon_flush_ports(d);
	/* One end (docs/promises.md): the final rows at T_end when the
	 * launcher gave it. */
	ps_t end = d->end ? d->end : events_now(d->q);
	if (d->samples)
		samples_finish(d->samples, end);
	if (d->eng.finish)
		d->eng.finish(d->eng.ctx, end);
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
	for (int k = 0; port->watcher && k < port->nwatchers; k++)
		ev_io_stop(d->loop, (ev_io *)port->watcher + k);
	free(port->watcher);
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
