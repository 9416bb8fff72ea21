/* emulator/events.c — the event queue: a hierarchical timer wheel in ps
 * (ARCHITECTURE.md, Time; PROTOCOL.md §12 rule 16).
 *
 * Shape.  Time is cut into granules of 2^10 ps (1.024 ns).  The granule
 * being worked on, `cur`, and everything at or before it sit in a small
 * binary heap, `ready`, ordered exactly by (time, key, sequence).  Later
 * events sit in a wheel of 7 levels: level L holds the events whose time
 * first differs from `cur` in bits 10+8L .. 17+8L, in the slot named by those
 * bits (256 slots; level 6 covers bits 58..63 with 64 of them), so the whole
 * 64-bit range fits and no overflow list is needed.  Because a level's
 * events all agree with `cur` above that level and exceed it within it, the
 * earliest wheel event is in the lowest non-empty level, in its lowest
 * non-empty slot — found with a bitmap, never by turning the wheel slot by
 * slot.  Taking a slot moves `cur` to the slot's start and re-files its
 * events one level down (or into `ready`); each event is filed at most once
 * per level.
 *
 * `cur` only moves forward, and only as far as the earliest pending slot
 * that is due; an event scheduled later at a time before `cur` goes straight
 * into `ready`, which is correct because everything in `ready` precedes
 * everything in the wheel.
 *
 * Events live in slabs of nodes on a free list: no allocation per event.  An
 * id is (generation << 32) | (index + 1); a node's generation moves on when
 * its event runs or is cancelled, so stale ids are refused. */
#include "events.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define GRANULE_BITS 10
#define LEVEL_BITS   8
#define LEVELS	     7
#define SLOTS	     (1u << LEVEL_BITS)
#define SLAB_NODES   1024u

enum node_state { NODE_FREE, NODE_WHEEL, NODE_READY };

struct node {
	ps_t when;
	uint64_t key;
	uint64_t seq; /* scheduling order, the last tie-breaker */
	events_fn fn;
	void *arg;
	struct node *next;   /* wheel slot list, or the free list */
	struct node **pprev; /* wheel slot list */
	uint32_t heap_idx;   /* position in `ready` */
	uint32_t gen;
	uint32_t index;
	uint8_t state;
	uint8_t level; /* where in the wheel, while NODE_WHEEL */
	uint16_t slot;
};

struct wheel_level {
	uint64_t used[SLOTS / 64]; /* bit s: slot s is non-empty */
	struct node *slot[SLOTS];
};

struct events {
	ps_t now;
	ps_t cur; /* start of the granule `ready` is working on */
	uint64_t seq;
	uint64_t executed;
	size_t pending;

	struct node **ready; /* binary heap on (when, key, seq) */
	uint32_t ready_len, ready_cap;

	struct wheel_level level[LEVELS];
	uint32_t levels_used; /* bit L: level L has an event */
	size_t wheel_count;
	/* Exact earliest wheel time when wheel_min_valid: events_next's cache,
	 * so that asking twice does not scan twice. */
	ps_t wheel_min;
	bool wheel_min_valid;

	struct node **slabs;
	uint32_t n_slabs;
	struct node *free_list;
};

static void *xrealloc(void *p, size_t n)
{
	p = realloc(p, n);
	if (!p) {
		fprintf(stderr, "mrcemu: event queue: out of memory\n");
		abort();
	}
	return p;
}

struct events *events_new(void)
{
	struct events *q = xrealloc(NULL, sizeof *q);

	memset(q, 0, sizeof *q);
	q->wheel_min = PS_NEVER;
	q->wheel_min_valid = true;
	return q;
}

void events_free(struct events *q)
{
	if (!q) {
		return;
	}
	for (uint32_t i = 0; i < q->n_slabs; i++) {
		free(q->slabs[i]);
	}
	free(q->slabs);
	free(q->ready);
	free(q);
}

/* ---- nodes ---- */

static void grow_slabs(struct events *q)
{
	if ((uint64_t)(q->n_slabs + 1) * SLAB_NODES > UINT32_MAX) {
		fprintf(stderr, "mrcemu: event queue: too many pending events\n");
		abort();
	}
	struct node *slab = xrealloc(NULL, SLAB_NODES * sizeof *slab);
	q->slabs = xrealloc(q->slabs, (q->n_slabs + 1) * sizeof *q->slabs);
	q->slabs[q->n_slabs] = slab;
	for (uint32_t i = SLAB_NODES; i-- > 0;) {
		slab[i] = (struct node){.index = q->n_slabs * SLAB_NODES + i, .gen = 1};
		slab[i].next = q->free_list;
		q->free_list = &slab[i];
	}
	q->n_slabs++;
}

static struct node *node_alloc(struct events *q)
{
	if (!q->free_list) {
		grow_slabs(q);
	}
	struct node *n = q->free_list;
	q->free_list = n->next;
	return n;
}

static void node_release(struct events *q, struct node *n)
{
	n->state = NODE_FREE;
	n->gen++;
	n->next = q->free_list;
	q->free_list = n;
	q->pending--;
}

static struct node *node_lookup(const struct events *q, events_id id)
{
	uint32_t low = (uint32_t)id;

	if (!low || (low - 1) / SLAB_NODES >= q->n_slabs) {
		return NULL;
	}
	struct node *n = &q->slabs[(low - 1) / SLAB_NODES][(low - 1) % SLAB_NODES];
	return n->gen == (uint32_t)(id >> 32) ? n : NULL;
}

/* ---- ready: binary heap in exact order ---- */

/* PROTOCOL.md §12 rule 16: same picosecond -> order key -> scheduling order. */
static bool node_before(const struct node *a, const struct node *b)
{
	if (a->when != b->when) {
		return a->when < b->when;
	}
	if (a->key != b->key) {
		return a->key < b->key;
	}
	return a->seq < b->seq;
}

static void heap_set(struct events *q, uint32_t i, struct node *n)
{
	q->ready[i] = n;
	n->heap_idx = i;
}

static void heap_up(struct events *q, uint32_t i, struct node *n)
{
	while (i) {
		uint32_t parent = (i - 1) / 2;
		if (!node_before(n, q->ready[parent])) {
			break;
		}
		heap_set(q, i, q->ready[parent]);
		i = parent;
	}
	heap_set(q, i, n);
}

static void heap_down(struct events *q, uint32_t i, struct node *n)
{
	for (;;) {
		uint32_t c = 2 * i + 1;
		if (c >= q->ready_len) {
			break;
		}
		if (c + 1 < q->ready_len && node_before(q->ready[c + 1], q->ready[c])) {
			c++;
		}
		if (!node_before(q->ready[c], n)) {
			break;
		}
		heap_set(q, i, q->ready[c]);
		i = c;
	}
	heap_set(q, i, n);
}

static void heap_push(struct events *q, struct node *n)
{
	if (q->ready_len == q->ready_cap) {
		q->ready_cap = q->ready_cap ? 2 * q->ready_cap : 64;
		q->ready = xrealloc(q->ready, q->ready_cap * sizeof *q->ready);
	}
	n->state = NODE_READY;
	heap_up(q, q->ready_len++, n);
}

static void heap_remove(struct events *q, struct node *n)
{
	uint32_t i = n->heap_idx;
	struct node *last = q->ready[--q->ready_len];

	if (last == n) {
		return;
	}
	if (i && node_before(last, q->ready[(i - 1) / 2])) {
		heap_up(q, i, last);
	} else {
		heap_down(q, i, last);
	}
}

/* ---- the wheel ---- */

static unsigned level_shift(unsigned level)
{
	return GRANULE_BITS + LEVEL_BITS * level;
}

/* Files n by its time: `ready` if its granule is not after cur's, else the
 * level of the highest granule bit where it differs from cur. */
static void file_node(struct events *q, struct node *n)
{
	uint64_t diff = (n->when ^ q->cur) >> GRANULE_BITS;

	if (n->when < q->cur || !diff) {
		heap_push(q, n);
		return;
	}
	unsigned level = (unsigned)(63 - __builtin_clzll(diff)) / LEVEL_BITS;
	unsigned s = (unsigned)(n->when >> level_shift(level)) & (SLOTS - 1);
	struct wheel_level *w = &q->level[level];

	n->state = NODE_WHEEL;
	n->level = (uint8_t)level;
	n->slot = (uint16_t)s;
	n->next = w->slot[s];
	if (n->next) {
		n->next->pprev = &n->next;
	}
	n->pprev = &w->slot[s];
	w->slot[s] = n;
	w->used[s / 64] |= 1ULL << (s % 64);
	q->levels_used |= 1u << level;
	if (q->wheel_min_valid && n->when < q->wheel_min) {
		q->wheel_min = n->when;
	}
	q->wheel_count++;
}

static void wheel_mark_empty(struct events *q, unsigned level, unsigned s)
{
	struct wheel_level *w = &q->level[level];

	w->used[s / 64] &= ~(1ULL << (s % 64));
	for (unsigned i = 0; i < SLOTS / 64; i++) {
		if (w->used[i]) {
			return;
		}
	}
	q->levels_used &= ~(1u << level);
}

static void wheel_unlink(struct events *q, struct node *n)
{
	*n->pprev = n->next;
	if (n->next) {
		n->next->pprev = n->pprev;
	}
	if (!q->level[n->level].slot[n->slot]) {
		wheel_mark_empty(q, n->level, n->slot);
	}
	if (!--q->wheel_count) {
		q->wheel_min = PS_NEVER;
		q->wheel_min_valid = true;
	} else if (n->when == q->wheel_min) {
		q->wheel_min_valid = false;
	}
}

/* The lowest non-empty slot: the one holding the earliest wheel events. */
static bool wheel_first(const struct events *q, unsigned *level, unsigned *slot)
{
	if (!q->levels_used) {
		return false;
	}
	unsigned l = (unsigned)__builtin_ctz(q->levels_used);
	const struct wheel_level *w = &q->level[l];
	for (unsigned i = 0;; i++) {
		if (w->used[i]) {
			*level = l;
			*slot = i * 64 + (unsigned)__builtin_ctzll(w->used[i]);
			return true;
		}
	}
}

static ps_t slot_start(const struct events *q, unsigned level, unsigned s)
{
	unsigned above = level_shift(level + 1);
	ps_t prefix = above >= 64 ? 0 : q->cur >> above << above;

	return prefix | ((ps_t)s << level_shift(level));
}

/* Moves the earliest due slots down until `ready` has events, but never moves
 * cur past `limit`, so that events scheduled after an early stop still find
 * their place in the wheel.  Returns whether `ready` has events. */
static bool refill(struct events *q, ps_t limit)
{
	unsigned level, s;

	while (!q->ready_len && wheel_first(q, &level, &s)) {
		ps_t start = slot_start(q, level, s);
		if (start > limit) {
			return false;
		}
		struct node *n = q->level[level].slot[s];
		q->level[level].slot[s] = NULL;
		wheel_mark_empty(q, level, s);
		q->cur = start;
		/* Some of these may land in `ready`: the cached minimum is the
		 * earliest of them, and about to leave the wheel. */
		q->wheel_min_valid = false;
		while (n) {
			struct node *next = n->next;
			q->wheel_count--;
			file_node(q, n);
			n = next;
		}
	}
	if (!q->wheel_count) {
		q->wheel_min = PS_NEVER;
		q->wheel_min_valid = true;
	}
	return q->ready_len > 0;
}

/* ---- the interface ---- */

/* A time before now is clamped to now: the event runs at once, after the
 * events already due now (rule 16 order), rather than moving the clock back.
 * Scheduling in the past is a caller's bug, but a daemon should not die of
 * it (ARCHITECTURE.md: late frames are run at once). */
events_id events_schedule_key(struct events *q, ps_t when, uint64_t key, events_fn fn, void *arg)
{
	struct node *n = node_alloc(q);

	n->when = when < q->now ? q->now : when;
	n->key = key;
	n->seq = q->seq++;
	n->fn = fn;
	n->arg = arg;
	q->pending++;
	file_node(q, n);
	return ((uint64_t)n->gen << 32) | (n->index + 1);
}

events_id events_schedule(struct events *q, ps_t when, events_fn fn, void *arg)
{
	return events_schedule_key(q, when, EVENTS_KEY_ENGINE, fn, arg);
}

bool events_cancel(struct events *q, events_id id)
{
	struct node *n = node_lookup(q, id);

	if (!n || n->state == NODE_FREE) {
		return false;
	}
	if (n->state == NODE_READY) {
		heap_remove(q, n);
	} else {
		wheel_unlink(q, n);
	}
	node_release(q, n);
	return true;
}

/* Scans the earliest slot; cached until the wheel's minimum may change.  The
 * cache is not part of the queue's value, hence the cast: queues are only
 * ever made by events_new, never defined const. */
ps_t events_next(const struct events *q)
{
	unsigned level, s;

	if (q->ready_len) {
		return q->ready[0]->when;
	}
	if (q->wheel_min_valid) {
		return q->wheel_min;
	}
	ps_t min = PS_NEVER;
	if (wheel_first(q, &level, &s)) {
		for (const struct node *n = q->level[level].slot[s]; n; n = n->next) {
			if (n->when < min) {
				min = n->when;
			}
		}
	}
	struct events *mq = (struct events *)q;
	mq->wheel_min = min;
	mq->wheel_min_valid = true;
	return min;
}

/* Pops the earliest event if its time is <= limit and runs it.  The node is
 * released first, so the callback may schedule freely and its own id is
 * already stale. */
static bool run_due(struct events *q, ps_t limit)
{
	if (!q->ready_len && !refill(q, limit)) {
		return false;
	}
	struct node *n = q->ready[0];
	if (n->when > limit) {
		return false;
	}
	struct node *last = q->ready[--q->ready_len];
	if (last != n) {
		heap_down(q, 0, last);
	}
	events_fn fn = n->fn;
	void *arg = n->arg;
	q->now = n->when;
	node_release(q, n);
	q->executed++;
	fn(arg, q->now);
	return true;
}

uint64_t events_run_until(struct events *q, ps_t until)
{
	uint64_t ran = 0;

	while (run_due(q, until)) {
		ran++;
	}
	return ran;
}

bool events_run_one(struct events *q)
{
	return run_due(q, PS_NEVER);
}

ps_t events_now(const struct events *q)
{
	return q->now;
}

size_t events_pending(const struct events *q)
{
	return q->pending;
}

uint64_t events_executed(const struct events *q)
{
	return q->executed;
}
