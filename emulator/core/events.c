/* emulator/core/events.c — the event queue: a hierarchical timer wheel in ps
 * (docs/architecture.md, Time; docs/protocol.md §12 rule 16).
 *
 * Shape.  Time is cut into granules of 2^7 ps (128 ps).  The granule
 * being worked on, `cur`, and everything at or before it sit in a small
 * binary heap, `ready`, ordered exactly by (time, key, sequence); its entries
 * carry those three inline, so ordering never reads a node.  Later events sit
 * in a wheel of 4 levels: level L holds the events whose time first differs
 * from `cur` in bits 7+15L .. 21+15L, in the slot named by those bits (32,768
 * slots, found through three words of bitmap: top, summary, used), so the
 * whole 64-bit range fits and no overflow list is needed.  Level 0 spans
 * 4.2 us of one-granule slots: most events (serialization ends, PCIe
 * completions, link arrivals 1 us ahead) are filed there at once and move
 * only into `ready`; retransmission timers (150 us) wait in level 1 and are
 * mostly cancelled there.  Because a level's events all agree with `cur`
 * above that level and exceed it within it, the earliest wheel event is in
 * the lowest non-empty level, in its lowest non-empty slot — found with the
 * bitmaps, never by turning the wheel slot by slot.  Taking a slot moves
 * `cur` to the slot's start and re-files its events one level down or more
 * (or into `ready`); each event is filed at most once per level.
 *
 * Why 128 ps (issue 16): with 1.024 ns granules a 1,024-host fabric put
 * about 226 events in each, and `ready` pops cost some 270 instructions;
 * finer granules keep `ready` small (callgrind, scripts/bench-scale: 7 %
 * fewer instructions at 128 and 1,024 hosts, 3 % more at 8, where granules
 * were nearly empty already).  Events of one picosecond still share `ready`
 * (a permutation's hosts all start at 0 and run in step), hence Floyd's pop.
 *
 * `cur` only moves forward, and only as far as the earliest pending slot
 * that is due; an event scheduled later at a time before `cur` goes straight
 * into `ready`, which is correct because everything in `ready` precedes
 * everything in the wheel.
 *
 * Events live in one array of 64-byte nodes on a free list, linked by index:
 * no allocation per event.  An id is (generation << 32) | index (node 0 is
 * never used, so no id is 0); a node's generation moves on when its event
 * runs or is cancelled, so stale ids are refused.  Cancelling an event in
 * `ready` leaves its entry there, dead (the node's state or sequence no
 * longer match), until it reaches the top; the top is always live. */
#include "events.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define GRANULE_BITS 7
#define SLOT_BITS    15
#define LEVELS	     4 /* 7 + 4 x 15 >= 64 */
#define SLOTS	     (1u << SLOT_BITS)
#define WORDS	     (SLOTS / 64)
#define SUMMARY	     (WORDS / 64) /* at most 64: one `top` word */
#define NIL	     0u /* no node: node 0 is never handed out */
#define MAX_NODES    UINT32_MAX

enum node_state { NODE_FREE, NODE_WHEEL, NODE_READY };

struct node {
	_Alignas(64) ps_t when; /* one cache line per node */
	uint64_t key;
	uint64_t seq; /* scheduling order, the last tie-breaker */
	events_fn fn;
	void *arg;
	uint32_t next; /* wheel slot list, or the free list */
	uint32_t prev; /* wheel slot list; NIL at the head */
	uint32_t gen;
	uint16_t slot; /* where in the wheel, while NODE_WHEEL */
	uint8_t level;
	uint8_t state;
};

/* A `ready` entry: the order inline, the node for what to run. */
struct ready_entry {
	ps_t when;
	uint64_t key;
	uint64_t seq;
	uint32_t node;
};

struct wheel_level {
	uint64_t top;		  /* bit t: summary[t] is non-zero */
	uint64_t summary[SUMMARY]; /* bit w: used[w] is non-zero */
	uint64_t used[WORDS];	  /* bit s: slot s is non-empty */
	uint32_t head[SLOTS];
};

struct events {
	ps_t now;
	ps_t cur; /* start of the granule `ready` is working on */
	uint64_t seq;
	uint64_t executed;
	size_t pending;

	struct ready_entry *ready; /* binary heap on (when, key, seq) */
	uint32_t ready_len, ready_cap;
	uint32_t ready_dead; /* cancelled entries still in `ready` */

	uint32_t levels_used; /* bit L: level L has an event */
	/* Exact earliest wheel time when wheel_min_valid: events_next's cache,
	 * so that asking twice does not scan twice. */
	bool wheel_min_valid;
	ps_t wheel_min;

	struct node *nodes;
	uint32_t n_nodes, nodes_cap; /* handed out so far (with node 0), room */
	uint32_t free_list;

	struct wheel_level level[LEVELS];
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
	/* calloc: the wheel's slot heads are mostly never touched, so their
	 * pages need not be either. */
	struct events *q = calloc(1, sizeof *q);

	if (!q) {
		fprintf(stderr, "mrcemu: event queue: out of memory\n");
		abort();
	}
	q->n_nodes = 1;
	return q;
}

void events_free(struct events *q)
{
	if (!q) {
		return;
	}
	free(q->nodes);
	free(q->ready);
	free(q);
}

/* ---- nodes ---- */

/* The free list is empty: room for one more node.  Rare, so kept out of
 * events_schedule_key's way. */
static __attribute__((noinline)) uint32_t node_grow(struct events *q)
{
	if (q->n_nodes >= q->nodes_cap) {
		uint64_t cap = q->nodes_cap ? 2 * (uint64_t)q->nodes_cap : 1024;
		if (cap > MAX_NODES) {
			cap = MAX_NODES;
		}
		if (cap <= q->n_nodes) {
			fprintf(stderr, "mrcemu: event queue: too many pending events\n");
			abort();
		}
		struct node *nodes = aligned_alloc(64, cap * sizeof *nodes);
		if (!nodes) {
			fprintf(stderr, "mrcemu: event queue: out of memory\n");
			abort();
		}
		if (q->nodes) {
			memcpy(nodes, q->nodes, q->n_nodes * sizeof *nodes);
			free(q->nodes);
		}
		q->nodes = nodes;
		q->nodes_cap = (uint32_t)cap;
	}
	uint32_t i = q->n_nodes++;
	q->nodes[i].gen = 1;
	return i;
}

static void node_release(struct events *q, uint32_t i)
{
	struct node *n = &q->nodes[i];

	n->state = NODE_FREE;
	n->gen++;
	n->next = q->free_list;
	q->free_list = i;
	q->pending--;
}

/* ---- ready: binary heap in exact order ---- */

/* docs/protocol.md §12 rule 16: same picosecond -> order key -> scheduling order. */
static inline bool entry_before(const struct ready_entry *a, const struct ready_entry *b)
{
	if (a->when != b->when) {
		return a->when < b->when;
	}
	if (a->key != b->key) {
		return a->key < b->key;
	}
	return a->seq < b->seq;
}

static __attribute__((noinline)) void ready_grow(struct events *q)
{
	q->ready_cap = q->ready_cap ? 2 * q->ready_cap : 64;
	q->ready = xrealloc(q->ready, q->ready_cap * sizeof *q->ready);
}

static inline void ready_push(struct events *q, uint32_t i, struct node *n)
{
	struct ready_entry e = {n->when, n->key, n->seq, i};

	n->state = NODE_READY;
	if (q->ready_len == q->ready_cap) {
		ready_grow(q);
	}
	struct ready_entry *h = q->ready;
	uint32_t k = q->ready_len++;
	while (k) {
		uint32_t parent = (k - 1) / 2;
		if (!entry_before(&e, &h[parent])) {
			break;
		}
		h[k] = h[parent];
		k = parent;
	}
	h[k] = e;
}

/* Removes the top.  Floyd's way: the hole at the top goes down to a leaf
 * along the earlier child (one comparison a level, not two), then the last
 * entry comes up from there; it belongs near the bottom, so it rises
 * little.  Events of one granule are hundreds in a large fabric, many at
 * the same picosecond, so each comparison saved counts. */
static inline void ready_pop(struct events *q)
{
	struct ready_entry *h = q->ready;
	uint32_t len = --q->ready_len;
	uint32_t k = 0;

	if (!len) {
		return;
	}
	for (;;) {
		uint32_t c = 2 * k + 1;
		if (c >= len) {
			break;
		}
		if (c + 1 < len && entry_before(&h[c + 1], &h[c])) {
			c++;
		}
		h[k] = h[c];
		k = c;
	}
	struct ready_entry last = h[len];
	while (k) {
		uint32_t parent = (k - 1) / 2;
		if (!entry_before(&last, &h[parent])) {
			break;
		}
		h[k] = h[parent];
		k = parent;
	}
	h[k] = last;
}

static bool entry_live(const struct events *q, const struct ready_entry *e)
{
	const struct node *n = &q->nodes[e->node];

	return n->state == NODE_READY && n->seq == e->seq;
}

/* Keeps the top live, so that events_next can read it as it is. */
static void ready_settle(struct events *q)
{
	while (q->ready_len && !entry_live(q, &q->ready[0])) {
		ready_pop(q);
		q->ready_dead--;
	}
}

/* ---- the wheel ---- */

static inline unsigned level_shift(unsigned level)
{
	return GRANULE_BITS + SLOT_BITS * level;
}

static inline void wheel_link(struct events *q, uint32_t i, struct node *n, unsigned level,
			      unsigned s)
{
	struct wheel_level *w = &q->level[level];
	uint32_t head = w->head[s];

	n->state = NODE_WHEEL;
	n->level = (uint8_t)level;
	n->slot = (uint16_t)s;
	n->next = head;
	n->prev = NIL;
	if (head) {
		q->nodes[head].prev = i;
	} else {
		w->used[s / 64] |= 1ULL << (s % 64);
		w->summary[s / 4096] |= 1ULL << (s / 64 % 64);
		w->top |= 1ULL << (s / 4096);
		q->levels_used |= 1u << level;
	}
	w->head[s] = i;
}

/* Files node i by its time: `ready` if its granule is not after cur's, else
 * the level of the highest granule bit where it differs from cur.  Returns
 * whether it went to the wheel. */
static inline bool file_node(struct events *q, uint32_t i, struct node *n)
{
	uint64_t g = n->when >> GRANULE_BITS, cur = q->cur >> GRANULE_BITS;

	/* cur is a granule's start: an earlier time has an earlier granule. */
	if (g <= cur) {
		ready_push(q, i, n);
		return false;
	}
	uint64_t diff = g ^ cur;
	unsigned level = diff < SLOTS ? 0 : (unsigned)(63 - __builtin_clzll(diff)) / SLOT_BITS;
	wheel_link(q, i, n, level, (unsigned)(g >> (SLOT_BITS * level)) & (SLOTS - 1));
	return true;
}

static void wheel_mark_empty(struct events *q, unsigned level, unsigned s)
{
	struct wheel_level *w = &q->level[level];

	if ((w->used[s / 64] &= ~(1ULL << (s % 64)))) {
		return;
	}
	if ((w->summary[s / 4096] &= ~(1ULL << (s / 64 % 64)))) {
		return;
	}
	if ((w->top &= ~(1ULL << (s / 4096)))) {
		return;
	}
	q->levels_used &= ~(1u << level);
}

static void wheel_unlink(struct events *q, struct node *n)
{
	struct wheel_level *w = &q->level[n->level];

	if (n->prev) {
		q->nodes[n->prev].next = n->next;
	} else {
		w->head[n->slot] = n->next;
	}
	if (n->next) {
		q->nodes[n->next].prev = n->prev;
	}
	if (!w->head[n->slot]) {
		wheel_mark_empty(q, n->level, n->slot);
	}
	if (n->when == q->wheel_min) {
		q->wheel_min_valid = false;
	}
}

/* The lowest non-empty slot: the one holding the earliest wheel events. */
static inline bool wheel_first(const struct events *q, unsigned *level, unsigned *slot)
{
	if (!q->levels_used) {
		return false;
	}
	unsigned l = (unsigned)__builtin_ctz(q->levels_used);
	const struct wheel_level *w = &q->level[l];
	unsigned t = (unsigned)__builtin_ctzll(w->top);
	unsigned word = t * 64 + (unsigned)__builtin_ctzll(w->summary[t]);
	*level = l;
	*slot = word * 64 + (unsigned)__builtin_ctzll(w->used[word]);
	return true;
}

static inline ps_t slot_start(const struct events *q, unsigned level, unsigned s)
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

	while (wheel_first(q, &level, &s)) {
		ps_t start = slot_start(q, level, s);
		if (start > limit) {
			return false;
		}
		struct wheel_level *w = &q->level[level];
		uint32_t i = w->head[s];
		w->head[s] = NIL;
		wheel_mark_empty(q, level, s);
		q->cur = start;
		/* The cached minimum is among these, about to leave the wheel
		 * or change level. */
		q->wheel_min_valid = false;
		if (!level) {
			/* One granule: all of it is due together. */
			while (i) {
				struct node *n = &q->nodes[i];
				ready_push(q, i, n);
				i = n->next;
			}
			return true;
		}
		while (i) {
			struct node *n = &q->nodes[i];
			uint32_t next = n->next;
			file_node(q, i, n);
			i = next;
		}
		if (q->ready_len) {
			return true;
		}
	}
	return false;
}

/* ---- the interface ---- */

/* A time before now is clamped to now: the event runs at once, after the
 * events already due now (rule 16 order), rather than moving the clock back.
 * Scheduling in the past is a caller's bug, but a daemon should not die of
 * it (docs/architecture.md: late frames are run at once). */
events_id events_schedule_key(struct events *q, ps_t when, uint64_t key, events_fn fn, void *arg)
{
	uint32_t i = q->free_list;

	if (i) {
		q->free_list = q->nodes[i].next;
	} else {
		i = node_grow(q);
	}
	struct node *n = &q->nodes[i];
	when = when < q->now ? q->now : when;
	n->when = when;
	n->key = key;
	n->seq = q->seq++;
	n->fn = fn;
	n->arg = arg;
	q->pending++;
	if (file_node(q, i, n) && when < q->wheel_min) {
		/* Exact while valid: a new minimum keeps it so. */
		q->wheel_min = when;
	}
	return ((uint64_t)n->gen << 32) | i;
}

events_id events_schedule(struct events *q, ps_t when, events_fn fn, void *arg)
{
	return events_schedule_key(q, when, EVENTS_KEY_ENGINE, fn, arg);
}

bool events_cancel(struct events *q, events_id id)
{
	uint32_t i = (uint32_t)id;

	if (!i || i >= q->n_nodes) {
		return false;
	}
	struct node *n = &q->nodes[i];
	if (n->gen != (uint32_t)(id >> 32) || n->state == NODE_FREE) {
		return false;
	}
	if (n->state == NODE_WHEEL) {
		wheel_unlink(q, n);
		node_release(q, i);
		return true;
	}
	/* In `ready`: dead where it stands, unless it is the top. */
	bool top = q->ready[0].node == i;
	node_release(q, i);
	if (top) {
		ready_pop(q);
	} else {
		q->ready_dead++;
	}
	if (q->ready_dead) {
		ready_settle(q);
	}
	return true;
}

/* Scans the earliest slot; cached until the wheel's minimum may change.  The
 * cache is not part of the queue's value, hence the cast: queues are only
 * ever made by events_new, never defined const. */
ps_t events_next(const struct events *q)
{
	unsigned level, s;

	if (q->ready_len) {
		return q->ready[0].when;
	}
	if (!wheel_first(q, &level, &s)) {
		return PS_NEVER;
	}
	if (q->wheel_min_valid) {
		return q->wheel_min;
	}
	ps_t min = PS_NEVER;
	for (uint32_t i = q->level[level].head[s]; i; i = q->nodes[i].next) {
		if (q->nodes[i].when < min) {
			min = q->nodes[i].when;
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
static inline bool run_due(struct events *q, ps_t limit)
{
	if (!q->ready_len && !refill(q, limit)) {
		return false;
	}
	ps_t when = q->ready[0].when;
	if (when > limit) {
		return false;
	}
	uint32_t i = q->ready[0].node;
	ready_pop(q);
	if (q->ready_dead) {
		ready_settle(q);
	}
	struct node *n = &q->nodes[i];
	events_fn fn = n->fn;
	void *arg = n->arg;
	q->now = when;
	node_release(q, i);
	q->executed++;
	fn(arg, when);
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
