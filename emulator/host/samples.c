/* emulator/host/samples.c — samples.csv (samples.h): a timer on the engines'
 * event queue that asks each engine for its rows. */
#include "samples.h"

#include <stdlib.h>

#include "nicd/nic.h"
#include "switchd/switch.h"

const char SAMPLES_HEADER[] =
    "time_ps,node,kind,port,tc,peer,queue_bytes,max_queue_bytes,trimmed,dropped,ecn_marked,"
    "rx_data_bytes,goodput_bps,ev_skip,ev_assumed_bad,remote_ip,cwnd,inflight";

struct samples {
	struct events *q;
	struct csv *c;
	ps_t interval, last;
	uint64_t taken;
	void **nics; /* struct nic * */
	void **sws;  /* struct sw * */
	size_t nnics, nsws;
};

/* ---- the automatic interval -------------------------------------------- */

static double send_ps(const struct topology *t, const struct workload_msg *m, int node)
{
	return (double)m->bytes * 8 * (double)PS_PER_S / (double)t->nodes[node].nic.data_rate;
}

/* When the last message could finish: dependencies in series, each at its
 * sender's rate (a few passes reach chains written in any order). */
static double chain_estimate(const struct topology *t, const struct workload *w)
{
	double *end = calloc(w->count ? w->count : 1, sizeof(double)), last = 0;

	if (!end)
		return 0;
	for (int pass = 0; pass < 4; pass++)
		for (size_t i = 0; i < w->count; i++) {
			const struct workload_msg *m = &w->msgs[i];
			double start = (double)m->at;
			for (int k = 0; k < m->nafter; k++) {
				long j = workload_find(w, m->after[k]);
				if (j >= 0 && end[j] > start)
					start = end[j];
			}
			end[i] = start + send_ps(t, m, m->src);
			if (end[i] > last)
				last = end[i];
		}
	free(end);
	return last;
}

/* The busiest NIC: every byte it sends or receives, at its own rate. */
static double load_estimate(const struct topology *t, const struct workload *w)
{
	double *load = calloc((size_t)t->nnodes * 2, sizeof(double)), most = 0;

	if (!load)
		return 0;
	for (size_t i = 0; i < w->count; i++) {
		const struct workload_msg *m = &w->msgs[i];
		load[2 * m->src] += send_ps(t, m, m->src);
		load[2 * m->dst + 1] += send_ps(t, m, m->dst);
	}
	for (int i = 0; i < 2 * t->nnodes; i++)
		if (load[i] > most)
			most = load[i];
	free(load);
	return most;
}

ps_t samples_interval(const struct topology *t, const struct workload *w, ps_t until, bool report)
{
	ps_t set = t->emu.sample_interval, step = PS_PER_NS;
	double run = (double)until;

	if (set == EMU_SAMPLE_OFF || (set == EMU_SAMPLE_AUTO && !report))
		return 0;
	if (set != EMU_SAMPLE_AUTO)
		return set;
	if (!until) {
		double chain = chain_estimate(t, w), load = load_estimate(t, w);
		run = (chain > load ? chain : load) + 10 * (double)PS_PER_US;
	}
	/* The largest 1, 2 or 5 x 10^k ps at most run / 200. */
	for (ps_t d = PS_PER_NS;; d *= 10) {
		static const unsigned m[] = {1, 2, 5};
		for (int k = 0; k < 3; k++)
			if ((double)(d * m[k]) * 200 <= run)
				step = d * m[k];
		if ((double)d * 10 * 200 > run)
			return step;
	}
}

/* ---- sampling ----------------------------------------------------------- */

static void take(struct samples *s, ps_t now)
{
	for (size_t i = 0; i < s->nsws; i++)
		sw_sample(s->sws[i], s->c, now);
	for (size_t i = 0; i < s->nnics; i++)
		nic_sample(s->nics[i], s->c, now);
	s->last = now;
	/* A run far longer than planned keeps its file small: the interval
	 * doubles every SAMPLES_PER_DOUBLING samples. */
	if (++s->taken % SAMPLES_PER_DOUBLING == 0)
		s->interval *= 2;
}

static void tick(void *arg, ps_t now)
{
	struct samples *s = arg;

	take(s, now);
	events_schedule(s->q, now + s->interval, tick, s);
}

struct samples *samples_new(struct events *q, struct csv *c, ps_t interval)
{
	struct samples *s = calloc(1, sizeof(*s));

	if (s)
		*s = (struct samples){.q = q, .c = c, .interval = interval};
	return s;
}

static bool append(void ***v, size_t *n, void *x)
{
	void **g = realloc(*v, (*n + 1) * sizeof(**v));

	if (!g)
		return false;
	g[(*n)++] = x;
	*v = g;
	return true;
}

bool samples_add_nic(struct samples *s, struct nic *nic)
{
	return append(&s->nics, &s->nnics, nic);
}

bool samples_add_switch(struct samples *s, struct sw *sw)
{
	return append(&s->sws, &s->nsws, sw);
}

void samples_start(struct samples *s)
{
	events_schedule(s->q, 0, tick, s);
}

void samples_finish(struct samples *s, ps_t now)
{
	if (now > s->last)
		take(s, now);
}

void samples_free(struct samples *s)
{
	if (!s)
		return;
	free(s->nics);
	free(s->sws);
	free(s);
}
