/* emulator/core/timers.c — timers that share events (timers.h).
 *
 * A batch holds its timers' callbacks in the order they were started; a
 * stopped timer's callback is cleared where it stands.  Batches are
 * allocated one by one (a running batch's callbacks may open others) and
 * named by an index in `all`, reused through a free list; an id is the
 * batch's generation, its index + 1 and the timer's place in it. */
#include "timers.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>

#define PLACE_BITS 24 /* timers in one batch; a full batch opens another */
#define INDEX_BITS 24 /* batches pending at once */
#define PLACE_MAX  ((1u << PLACE_BITS) - 1)
#define INDEX_MAX  ((1u << INDEX_BITS) - 2)

struct timer {
	events_fn fn; /* NULL once it ran or was stopped */
	void *arg;
};

struct batch {
	struct timers *t;
	ps_t when;
	events_id ev;
	uint32_t index;	    /* in t->all */
	uint16_t gen;	    /* moves on when the batch ends */
	bool running;	    /* its event runs: stops do not end it */
	uint32_t live;	    /* timers neither run nor stopped */
	uint32_t n, cap;    /* timers started, room */
	uint32_t next_free; /* free list, by index + 1 */
	struct timer *timer;
};

struct timers {
	struct events *q;
	struct batch *open; /* the batch timers may join, or NULL */
	struct batch **all;
	uint32_t n_all, cap_all;
	uint32_t free; /* index + 1 of a free batch, 0 if none */
};

static __attribute__((noreturn)) void out_of_memory(void)
{
	fprintf(stderr, "mrcemu: timers: out of memory\n");
	abort();
}

struct timers *timers_new(struct events *q)
{
	struct timers *t = calloc(1, sizeof(*t));

	if (t)
		t->q = q;
	return t;
}

void timers_free(struct timers *t)
{
	if (!t)
		return;
	for (uint32_t i = 0; i < t->n_all; i++) {
		free(t->all[i]->timer);
		free(t->all[i]);
	}
	free(t->all);
	free(t);
}

static __attribute__((noinline)) struct batch *batch_new(struct timers *t)
{
	if (t->n_all > INDEX_MAX) {
		fprintf(stderr, "mrcemu: timers: too many pending\n");
		abort();
	}
	if (t->n_all == t->cap_all) {
		uint32_t cap = t->cap_all ? 2 * t->cap_all : 16;
		struct batch **all = realloc(t->all, cap * sizeof(*all));
		if (!all)
			out_of_memory();
		t->all = all;
		t->cap_all = cap;
	}
	struct batch *b = calloc(1, sizeof(*b));
	if (!b)
		out_of_memory();
	b->t = t;
	b->index = t->n_all;
	t->all[t->n_all++] = b;
	return b;
}

static void batch_run(void *arg, ps_t now);

/* A new batch for `when`, its event scheduled now: the one timers join. */
static struct batch *batch_open(struct timers *t, ps_t when)
{
	struct batch *b;

	if (t->free) {
		b = t->all[t->free - 1];
		t->free = b->next_free;
	} else {
		b = batch_new(t);
	}
	b->when = when;
	b->n = b->live = 0;
	b->running = false;
	b->ev = events_schedule(t->q, when, batch_run, b);
	t->open = b;
	return b;
}

static void batch_end(struct timers *t, struct batch *b)
{
	if (t->open == b)
		t->open = NULL;
	b->gen++;
	b->next_free = t->free;
	t->free = b->index + 1;
}

static __attribute__((noinline)) void batch_grow(struct batch *b)
{
	uint32_t cap = b->cap ? 2 * b->cap : 16;
	struct timer *v = realloc(b->timer, cap * sizeof(*v));

	if (!v)
		out_of_memory();
	b->timer = v;
	b->cap = cap;
}

timers_id timers_start(struct timers *t, ps_t when, events_fn fn, void *arg)
{
	struct batch *b = t->open;

	if (!b || b->when != when || b->n == PLACE_MAX || !events_is_last(t->q, b->ev))
		b = batch_open(t, when);
	if (b->n == b->cap)
		batch_grow(b);
	b->timer[b->n] = (struct timer){fn, arg};
	b->live++;
	return (uint64_t)b->gen << (INDEX_BITS + PLACE_BITS) |
	       (uint64_t)(b->index + 1) << PLACE_BITS | b->n++;
}

/* The batch's last timer stopped while its event waits: the event goes. */
static __attribute__((noinline)) void batch_cancel(struct timers *t, struct batch *b)
{
	events_cancel(t->q, b->ev);
	batch_end(t, b);
}

/* Inline (across files, by the link-time optimizer) in the NIC's timer
 * stop, once a data packet; a batch's end, once in some 90 stops at 8
 * hosts, out of line (issue 16, callgrind: the call cost 10 of its 33
 * instructions). */
inline __attribute__((always_inline)) void timers_stop(struct timers *t, timers_id id)
{
	uint32_t index = (uint32_t)(id >> PLACE_BITS) & ((1u << INDEX_BITS) - 1);
	uint32_t place = (uint32_t)id & PLACE_MAX;

	if (!index || index > t->n_all)
		return;
	struct batch *b = t->all[index - 1];
	if (b->gen != (uint16_t)(id >> (INDEX_BITS + PLACE_BITS)) || place >= b->n ||
	    !b->timer[place].fn)
		return;
	b->timer[place].fn = NULL;
	if (--b->live || b->running)
		return;
	batch_cancel(t, b);
}

/* The batch's timers, in the order started; those stopped meanwhile (also
 * by an earlier one's callback) are skipped. */
static void batch_run(void *arg, ps_t now)
{
	struct batch *b = arg;
	struct timers *t = b->t;

	if (t->open == b)
		t->open = NULL;
	b->running = true;
	for (uint32_t i = 0; i < b->n; i++) {
		struct timer tm = b->timer[i];
		if (!tm.fn)
			continue;
		b->timer[i].fn = NULL;
		b->live--;
		tm.fn(tm.arg, now);
	}
	batch_end(t, b);
}
