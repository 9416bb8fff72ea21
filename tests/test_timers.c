/* tests/test_timers.c — timers that share events (core/timers.h): a
 * randomized comparison against one event per timer (the same runs, the
 * same callbacks, in the same order, at the same times, docs/protocol.md
 * §12 rule 16), with other events of the same picoseconds scheduled
 * between the timers' starts; and that batched timers cost fewer events,
 * none at all once stopped. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "core/events.h"
#include "core/timers.h"

#define MAX_TIMERS 4096
#define MAX_PLAIN  4096
#define MAX_LOG	   16384
#define US	   1000 /* the timers' grain in these tests, in ps */

struct world;

struct slot {
	struct world *w;
	int tag;
	bool pending;
	events_id ev; /* the reference's event */
	timers_id id; /* the batched timer */
};

/* One run: the reference (t == NULL: an event per timer) or batched. */
struct world {
	struct events *q;
	struct timers *t;
	uint64_t rng;
	struct slot timer[MAX_TIMERS], plain[MAX_PLAIN];
	int ntimers, nplain;
	int log[MAX_LOG];
	ps_t at[MAX_LOG];
	int nlog;
	ps_t end;
};

static uint32_t draw(struct world *w, uint32_t n)
{
	w->rng = w->rng * 6364136223846793005ULL + 1442695040888963407ULL;
	return (uint32_t)(w->rng >> 33) % n;
}

static void note(struct world *w, int tag, ps_t now)
{
	assert_true(w->nlog < MAX_LOG);
	w->log[w->nlog] = tag;
	w->at[w->nlog++] = now;
}

/* A due time among the next few grains: timers and plain events meet at
 * the same picoseconds. */
static ps_t due(struct world *w, ps_t now)
{
	return (now / US + 1 + draw(w, 3)) * US;
}

static void timer_fired(void *arg, ps_t now);
static void plain_ran(void *arg, ps_t now);

static void timer_start(struct world *w, ps_t now)
{
	if (w->ntimers == MAX_TIMERS)
		return;
	struct slot *s = &w->timer[w->ntimers];
	ps_t when = due(w, now);

	*s = (struct slot){.w = w, .tag = w->ntimers++, .pending = true};
	if (w->t)
		s->id = timers_start(w->t, when, timer_fired, s);
	else
		s->ev = events_schedule(w->q, when, timer_fired, s);
}

static void timer_stop_any(struct world *w)
{
	if (!w->ntimers)
		return;
	struct slot *s = &w->timer[draw(w, (uint32_t)w->ntimers)];

	if (!s->pending)
		return;
	s->pending = false;
	if (w->t)
		timers_stop(w->t, s->id);
	else
		assert_true(events_cancel(w->q, s->ev));
}

/* A plain event: an engine event at a timer's grain, or at now, or a frame
 * arrival (order key below engine events) at a later grain. */
static void plain_schedule(struct world *w, ps_t now, bool at_now)
{
	if (w->nplain == MAX_PLAIN)
		return;
	struct slot *s = &w->plain[w->nplain];
	bool arrival = !at_now && draw(w, 3) == 0;
	ps_t when = at_now ? now : due(w, now);

	*s = (struct slot){.w = w, .tag = 100000 + w->nplain++, .pending = true};
	s->ev = arrival ? events_schedule_key(w->q, when, events_key_arrival(draw(w, 4), 0),
					      plain_ran, s)
			: events_schedule(w->q, when, plain_ran, s);
}

static void plain_cancel_any(struct world *w)
{
	if (!w->nplain)
		return;
	struct slot *s = &w->plain[draw(w, (uint32_t)w->nplain)];

	if (s->pending) {
		s->pending = false;
		assert_true(events_cancel(w->q, s->ev));
	}
}

/* What a timer or a plain event does when it runs: a little of everything
 * a NIC's timer does (stop others, start more, schedule at its own
 * picosecond), but no arrival at its own picosecond (timers.h). */
static void act(struct world *w, ps_t now)
{
	switch (draw(w, 6)) {
	case 0:
		timer_stop_any(w);
		break;
	case 1:
		timer_start(w, now);
		break;
	case 2:
		plain_schedule(w, now, true);
		break;
	default:
		break;
	}
}

static void timer_fired(void *arg, ps_t now)
{
	struct slot *s = arg;

	assert_true(s->pending);
	s->pending = false;
	note(s->w, s->tag, now);
	act(s->w, now);
}

static void plain_ran(void *arg, ps_t now)
{
	struct slot *s = arg;

	s->pending = false;
	note(s->w, s->tag, now);
	act(s->w, now);
}

/* The script: steps a few hundred ps apart (some at the same picosecond),
 * each starting and stopping timers and scheduling and cancelling plain
 * events for the same grains. */
static void step(void *arg, ps_t now)
{
	struct world *w = arg;
	unsigned k = 1 + draw(w, 4);

	for (unsigned i = 0; i < k; i++) {
		switch (draw(w, 8)) {
		case 0:
			timer_stop_any(w);
			break;
		case 1:
			plain_schedule(w, now, false);
			break;
		case 2:
			plain_cancel_any(w);
			break;
		default:
			timer_start(w, now);
			break;
		}
	}
	if (now < w->end)
		events_schedule(w->q, now + draw(w, 400), step, w);
}

static void world_run(struct world *w, bool batched, uint64_t seed, ps_t end)
{
	memset(w, 0, sizeof(*w));
	w->q = events_new();
	w->t = batched ? timers_new(w->q) : NULL;
	w->rng = seed;
	w->end = end;
	events_schedule(w->q, 0, step, w);
	events_run_until(w->q, PS_NEVER);
	assert_int_equal(events_pending(w->q), 0);
}

static void world_free(struct world *w)
{
	timers_free(w->t);
	events_free(w->q);
}

static struct world ref, bat;

static void test_same_as_an_event_each(void **state)
{
	(void)state;
	uint64_t executed_ref = 0, executed_bat = 0;
	int fired = 0;

	for (uint64_t seed = 1; seed <= 40; seed++) {
		world_run(&ref, false, seed, 200 * US);
		world_run(&bat, true, seed, 200 * US);
		assert_int_equal(ref.nlog, bat.nlog);
		assert_int_equal(ref.ntimers, bat.ntimers);
		assert_memory_equal(ref.log, bat.log, (size_t)ref.nlog * sizeof(ref.log[0]));
		assert_memory_equal(ref.at, bat.at, (size_t)ref.nlog * sizeof(ref.at[0]));
		for (int i = 0; i < ref.nlog; i++)
			fired += ref.log[i] < 100000;
		executed_ref += events_executed(ref.q);
		executed_bat += events_executed(bat.q);
		world_free(&ref);
		world_free(&bat);
	}
	/* The comparison saw many timers run, and batches saved events. */
	assert_true(fired > 1000);
	assert_true(executed_bat < executed_ref);
}

static void count_fired(void *arg, ps_t now)
{
	(void)now;
	(*(int *)arg)++;
}

/* Timers started back to back for one picosecond share one event; stopped,
 * they leave none; an event for their picosecond between starts cuts the
 * batch. */
static void test_batches_and_stops(void **state)
{
	(void)state;
	struct events *q = events_new();
	struct timers *t = timers_new(q);
	int fired = 0, other = 0;
	timers_id id[8];

	for (int i = 0; i < 8; i++)
		id[i] = timers_start(t, 5 * US, count_fired, &fired);
	assert_int_equal(events_pending(q), 1);
	for (int i = 0; i < 8; i++)
		timers_stop(t, id[i]);
	assert_int_equal(events_pending(q), 0);
	timers_stop(t, id[0]); /* twice: left alone */

	timers_start(t, 5 * US, count_fired, &fired);
	events_schedule(q, 5 * US, count_fired, &other);
	timers_start(t, 5 * US, count_fired, &fired);
	assert_int_equal(events_pending(q), 3);
	assert_int_equal(events_run_until(q, PS_NEVER), 3);
	assert_int_equal(fired, 2);
	assert_int_equal(other, 1);
	timers_free(t);
	events_free(q);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_same_as_an_event_each),
	    cmocka_unit_test(test_batches_and_stops),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
