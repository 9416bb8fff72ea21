/* emulator/core/events.c — the event queue: a hierarchical timer wheel in ps
 * (docs/architecture.md, Time; docs/protocol.md §12 rule 16).
 *
 * Shape.  Four levels over the 64 bits of a picosecond time: level 0 has
 * 2^18 slots of one picosecond (it spans 262 ns: serializations, PCIe
 * steps), levels 1-3 have 2^16 slots each (level 1's slots are 262 ns wide
 * and span 17 ms: link arrivals on an idle wire, the 150 us retransmission
 * timers, mostly cancelled there).  Level L holds the events whose time
 * first differs from `cur` in level L's bits, in the slot those bits name,
 * found through three words of bitmap (top, summary, used), so the whole
 * 64-bit range fits and no overflow list is needed.  Because a level's
 * events all agree with `cur` above that level and exceed it within it, the
 * earliest wheel event is in the lowest non-empty level, in its lowest
 * non-empty slot — found with the bitmaps, never by turning the wheel slot
 * by slot.  Taking a slot above level 0 moves `cur` to the slot's start and
 * files its events again, lower; each event is filed at most once per level.
 *
 * Exact order without sorting.  Every slot list is kept in scheduling order
 * (appended at its tail): when a slot is taken every lower level is empty,
 * so the events it files again reach their new slots before any event
 * scheduled later.  A level-0 slot is one picosecond, so its events differ
 * only in order key and sequence; taking it makes it the `fifo`, the
 * events of `cur` in the order they run.  That is its own order whenever
 * its keys do not decrease (keyed events are arrivals, rule 16: about one a
 * picosecond, and engine events have the highest key); otherwise its keyed
 * events go to `ready`, a small binary heap on (time, key, sequence) whose
 * entries carry those three inline.  `ready` also takes an event scheduled
 * for a time before `cur` (cur may stand past now after a run stopped short
 * of a slot), and a keyed event scheduled for `cur` itself, after moving
 * the `fifo`'s keyed events into it.  So every `ready` entry precedes every
 * `fifo` event, and the next event is `ready`'s top if there is one, else
 * the `fifo`'s head.  An engine event scheduled for `cur` joins the `fifo`'s
 * tail: its sequence is the latest.
 *
 * Why (issue 16): the previous wheel had 128 ps granules, each emptied into
 * a binary heap of all its events; the heap's pushes and pops were about a
 * third of the simulator's instructions.  Now an event costs a list append,
 * rarely a filing one level down, and a list pop (callgrind, events alone,
 * instructions per data packet: 11,626 -> 10,731 at 8 hosts, 13,741 ->
 * 11,934 at 128, 13,906 -> 10,298 at 1,024).
 *
 * Events live in one array of 64-byte nodes on a free list, linked by index:
 * no allocation per event.  An id is (generation << 32) | index (node 0 is
 * never used, so no id is 0); a node's generation moves on when its event
 * runs or is cancelled, so stale ids are refused.  Cancelling an event in
 * the wheel or the `fifo` unlinks it; one in `ready` is left there, dead
 * (the node's state or sequence no longer match), until it reaches the top;
 * the top is always live. */
#include "events.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Level 0: 2^L0_BITS slots of 1 ps; levels 1-3: 2^UP_BITS slots each.  18
 * bits (262 ns, 2 MB of slot lists) measured better than 16: fewer data
 * frames' serializations (84 ns at 400 Gbps) cross a level-0 boundary. */
#define L0_BITS	  18
#define UP_BITS	  16
#define LEVELS	  4 /* 18 + 3 x 16 >= 64 */
#define L0_SLOTS  (1u << L0_BITS)
#define UP_SLOTS  (1u << UP_BITS)
#define NIL	  0u /* no node: node 0 is never handed out */
#define MAX_NODES UINT32_MAX

enum node_state { NODE_FREE, NODE_WHEEL, NODE_FIFO, NODE_READY };

struct node {
	_Alignas(64) ps_t when; /* one cache line per node */
	uint64_t key;
	uint64_t seq; /* scheduling order, the last tie-breaker */
	events_fn fn;
	void *arg;
	uint32_t next; /* slot list or `fifo`, or the free list */
	uint32_t prev; /* slot list or `fifo`; NIL at the head */
	uint32_t gen;
	uint32_t slot; /* where in the wheel, while NODE_WHEEL */
	uint8_t level;
	uint8_t state;
};

/* A list of nodes in scheduling order: a wheel slot, or the `fifo`. */
struct list {
	uint32_t head, tail;
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
	uint64_t summary[64]; /* bit w: used[w] is non-zero */
	uint64_t *used;	      /* bit s: slot s is non-empty */
	struct list *slot;
};

struct events {
	ps_t now;
	ps_t cur; /* the picosecond the `fifo` is at; the wheel is after it */
	uint64_t seq;
	uint64_t executed;
	size_t pending;

	struct list fifo;    /* events at cur, in the order they run */
	uint32_t fifo_keyed; /* how many lead it with keys below engine's */

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

static inline unsigned level_bits(unsigned level)
{
	return level ? UP_BITS : L0_BITS;
}

/* The lowest time bit a level's slots are named by. */
static inline unsigned level_shift(unsigned level)
{
	return level ? L0_BITS + UP_BITS * (level - 1) : 0;
}

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
	/* calloc: the wheel's slot lists are mostly never touched, so their
	 * pages need not be either. */
	struct events *q = calloc(1, sizeof *q);

	if (!q) {
		fprintf(stderr, "mrcemu: event queue: out of memory\n");
		abort();
	}
	q->n_nodes = 1;
	for (unsigned l = 0; l < LEVELS; l++) {
		size_t slots = (size_t)1 << level_bits(l);
		q->level[l].used = calloc(slots / 64, sizeof(uint64_t));
		q->level[l].slot = calloc(slots, sizeof(struct list));
		if (!q->level[l].used || !q->level[l].slot) {
			fprintf(stderr, "mrcemu: event queue: out of memory\n");
			abort();
		}
	}
	return q;
}

void events_free(struct events *q)
{
	if (!q) {
		return;
	}
	for (unsigned l = 0; l < LEVELS; l++) {
		free(q->level[l].used);
		free(q->level[l].slot);
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

/* ---- lists in scheduling order ---- */

/* Appends node i; returns whether the list was empty. */
static inline bool list_append(struct events *q, struct list *l, uint32_t i, struct node *n)
{
	uint32_t tail = l->tail;

	n->next = NIL;
	n->prev = tail;
	l->tail = i;
	if (tail) {
		q->nodes[tail].next = i;
		return false;
	}
	l->head = i;
	return true;
}

static inline void list_prepend(struct events *q, struct list *l, uint32_t i, struct node *n)
{
	uint32_t head = l->head;

	n->prev = NIL;
	n->next = head;
	l->head = i;
	if (head) {
		q->nodes[head].prev = i;
	} else {
		l->tail = i;
	}
}

static inline void list_unlink(struct events *q, struct list *l, const struct node *n)
{
	if (n->prev) {
		q->nodes[n->prev].next = n->next;
	} else {
		l->head = n->next;
	}
	if (n->next) {
		q->nodes[n->next].prev = n->prev;
	} else {
		l->tail = n->prev;
	}
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
 * little. */
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

/* The `fifo`'s keyed events go to `ready`, so that a keyed event of cur
 * scheduled now finds its place among them. */
static __attribute__((noinline)) void fifo_spill_keyed(struct events *q)
{
	for (uint32_t i = q->fifo.head; i && q->fifo_keyed;) {
		struct node *n = &q->nodes[i];
		uint32_t next = n->next;
		if (n->key != EVENTS_KEY_ENGINE) {
			list_unlink(q, &q->fifo, n);
			ready_push(q, i, n);
			q->fifo_keyed--;
		}
		i = next;
	}
}

/* An event due at or before cur: the `fifo`'s tail if it is an engine event
 * of cur itself (its sequence is the latest), `ready` otherwise (see the top
 * of the file). */
static void due_add(struct events *q, uint32_t i, struct node *n)
{
	if (n->key == EVENTS_KEY_ENGINE && n->when == q->cur) {
		n->state = NODE_FIFO;
		list_append(q, &q->fifo, i, n);
		return;
	}
	if (n->when == q->cur && q->fifo_keyed) {
		fifo_spill_keyed(q);
	}
	ready_push(q, i, n);
}

/* The `fifo` of a picosecond just taken has keyed events out of key
 * order: a stable sort puts them first, by key (those of one key stay in
 * scheduling order); the engine events follow, as they were.  Many keyed
 * events in one picosecond (a fabric whose hosts all started together)
 * go to `ready` instead. */
#define FIFO_SORT_MAX 64
static __attribute__((noinline)) void fifo_sort_keyed(struct events *q)
{
	struct {
		uint64_t key;
		uint32_t node;
	} k[FIFO_SORT_MAX];
	struct list engine = {NIL, NIL};
	uint32_t nk = 0;

	if (q->fifo_keyed > FIFO_SORT_MAX) {
		fifo_spill_keyed(q);
		return;
	}
	for (uint32_t i = q->fifo.head; i;) {
		struct node *n = &q->nodes[i];
		uint32_t next = n->next;
		if (n->key == EVENTS_KEY_ENGINE) {
			list_append(q, &engine, i, n);
		} else {
			uint32_t b = nk++;
			for (; b && k[b - 1].key > n->key; b--) {
				k[b] = k[b - 1];
			}
			k[b].key = n->key;
			k[b].node = i;
		}
		i = next;
	}
	q->fifo = engine;
	while (nk--) {
		list_prepend(q, &q->fifo, k[nk].node, &q->nodes[k[nk].node]);
	}
}

static void fifo_remove(struct events *q, const struct node *n)
{
	list_unlink(q, &q->fifo, n);
	q->fifo_keyed -= n->key != EVENTS_KEY_ENGINE;
}

static inline bool due_empty(const struct events *q)
{
	return !q->ready_len && !q->fifo.head;
}

/* ---- the wheel ---- */

/* The summary words above a used word already say so unless it was 0. */
static inline void slot_mark_used(struct events *q, unsigned level, unsigned s)
{
	struct wheel_level *w = &q->level[level];
	uint64_t used = w->used[s / 64];

	w->used[s / 64] = used | 1ULL << (s % 64);
	if (!used) {
		w->summary[s / 4096] |= 1ULL << (s / 64 % 64);
		w->top |= 1ULL << (s / 4096);
		q->levels_used |= 1u << level;
	}
}

static inline void slot_mark_empty(struct events *q, unsigned level, unsigned s)
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

static inline void wheel_link(struct events *q, uint32_t i, struct node *n, unsigned level,
			      unsigned s)
{
	n->state = NODE_WHEEL;
	n->level = (uint8_t)level;
	n->slot = s;
	if (list_append(q, &q->level[level].slot[s], i, n)) {
		slot_mark_used(q, level, s);
	}
}

/* A time after cur that differs from it above level 0: the level of the
 * highest differing bit.  Kept apart from the level-0 path, the common
 * one. */
static __attribute__((noinline)) void wheel_link_up(struct events *q, uint32_t i, struct node *n)
{
	unsigned high = 63 - (unsigned)__builtin_clzll(n->when ^ q->cur);
	unsigned level = (high - L0_BITS) / UP_BITS + 1;

	wheel_link(q, i, n, level, (unsigned)(n->when >> level_shift(level)) & (UP_SLOTS - 1));
	if (n->when < q->wheel_min) {
		/* Exact while valid: a new minimum keeps it so. */
		q->wheel_min = n->when;
	}
}

static inline bool on_level0(const struct events *q, ps_t when)
{
	return when > q->cur && (when ^ q->cur) < L0_SLOTS;
}

/* Files node i by its time when it does not go to level 0: due if not after
 * cur, else the level of the highest bit where it differs from cur. */
static __attribute__((noinline)) events_id file_node_other(struct events *q, uint32_t i,
							   struct node *n, events_id id)
{
	if (n->when <= q->cur) {
		due_add(q, i, n);
	} else {
		wheel_link_up(q, i, n);
	}
	return id;
}

/* Files node i by its time. */
static inline void file_node(struct events *q, uint32_t i, struct node *n)
{
	if (on_level0(q, n->when)) {
		wheel_link(q, i, n, 0, (unsigned)n->when & (L0_SLOTS - 1));
	} else {
		file_node_other(q, i, n, 0);
	}
}

static void wheel_unlink(struct events *q, struct node *n)
{
	struct list *l = &q->level[n->level].slot[n->slot];

	list_unlink(q, l, n);
	if (!l->head) {
		slot_mark_empty(q, n->level, n->slot);
	}
	if (n->when == q->wheel_min) {
		q->wheel_min_valid = false;
	}
}

/* The lowest non-empty slot of a level (which has one). */
static inline unsigned level_first(const struct events *q, unsigned level)
{
	const struct wheel_level *w = &q->level[level];
	unsigned t = (unsigned)__builtin_ctzll(w->top);
	unsigned word = t * 64 + (unsigned)__builtin_ctzll(w->summary[t]);

	return word * 64 + (unsigned)__builtin_ctzll(w->used[word]);
}

static inline ps_t slot_start(const struct events *q, unsigned level, unsigned s)
{
	unsigned above = level_shift(level) + level_bits(level);
	ps_t prefix = above >= 64 ? 0 : q->cur >> above << above;

	return prefix | ((ps_t)s << level_shift(level));
}

/* Empties a slot, returning its list. */
static inline struct list slot_take(struct events *q, unsigned level, unsigned s)
{
	struct list *sl = &q->level[level].slot[s];
	struct list l = *sl;

	*sl = (struct list){NIL, NIL};
	slot_mark_empty(q, level, s);
	return l;
}

/* The earliest slot is above level 0: if it starts by `limit`, cur moves to
 * its start and its events are filed again, lower.  Returns whether it
 * did. */
static __attribute__((noinline)) bool cascade(struct events *q, unsigned level, ps_t limit)
{
	unsigned s = level_first(q, level);
	ps_t start = slot_start(q, level, s);

	if (start > limit) {
		return false;
	}
	struct list l = slot_take(q, level, s);
	q->cur = start;
	/* The cached minimum is among these, about to change level. */
	q->wheel_min_valid = false;
	for (uint32_t i = l.head; i;) {
		struct node *n = &q->nodes[i];
		uint32_t next = n->next;
		file_node(q, i, n);
		i = next;
	}
	return true;
}

/* A level-0 slot, one picosecond, is due; its events are in scheduling
 * order.  They become the `fifo` as they stand when their keys do not
 * decrease (mostly so: keyed events are arrivals, about one a picosecond),
 * else its keyed events go to `ready`. */
static inline void take_picosecond(struct events *q, struct list l)
{
	uint64_t key = 0;
	uint32_t keyed = 0;
	bool sorted = true;

	for (uint32_t i = l.head; i;) {
		struct node *n = &q->nodes[i];
		n->state = NODE_FIFO;
		sorted &= n->key >= key;
		key = n->key;
		keyed += key != EVENTS_KEY_ENGINE;
		i = n->next;
	}
	q->fifo = l;
	q->fifo_keyed = keyed;
	if (!sorted) {
		fifo_sort_keyed(q);
	}
}

/* Moves the earliest due slots down until some events are due, but never
 * moves cur past `limit`, so that events scheduled after an early stop still
 * find their place in the wheel.  Returns whether some are. */
static bool refill(struct events *q, ps_t limit)
{
	while (q->levels_used) {
		unsigned level = (unsigned)__builtin_ctz(q->levels_used);
		if (level) {
			if (!cascade(q, level, limit)) {
				return false;
			}
			if (!due_empty(q)) {
				return true;
			}
			continue;
		}
		unsigned s = level_first(q, 0);
		ps_t start = (q->cur & ~(ps_t)(L0_SLOTS - 1)) | s;
		if (start > limit) {
			return false;
		}
		q->cur = start;
		take_picosecond(q, slot_take(q, 0, s));
		return true;
	}
	return false;
}

/* ---- the interface ---- */

static events_id schedule_grown(struct events *q, ps_t when, uint64_t key, events_fn fn,
				void *arg);

/* A time before now is clamped to now: the event runs at once, after the
 * events already due now (rule 16 order), rather than moving the clock back.
 * Scheduling in the past is a caller's bug, but a daemon should not die of
 * it (docs/architecture.md: late frames are run at once). */
events_id events_schedule_key(struct events *q, ps_t when, uint64_t key, events_fn fn, void *arg)
{
	uint32_t i = q->free_list;

	if (!i) {
		/* Rare: no call on the common path, whose registers then need
		 * no saving. */
		return schedule_grown(q, when, key, fn, arg);
	}
	struct node *n = &q->nodes[i];
	q->free_list = n->next;
	when = when < q->now ? q->now : when;
	n->when = when;
	n->key = key;
	n->seq = q->seq++;
	n->fn = fn;
	n->arg = arg;
	q->pending++;
	events_id id = ((uint64_t)n->gen << 32) | i;
	if (on_level0(q, when)) {
		wheel_link(q, i, n, 0, (unsigned)when & (L0_SLOTS - 1));
		return id;
	}
	return file_node_other(q, i, n, id);
}

static __attribute__((noinline)) events_id schedule_grown(struct events *q, ps_t when, uint64_t key,
							  events_fn fn, void *arg)
{
	uint32_t i = node_grow(q);

	q->nodes[i].next = q->free_list;
	q->free_list = i;
	return events_schedule_key(q, when, key, fn, arg);
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
	if (n->state == NODE_FIFO) {
		fifo_remove(q, n);
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

/* Level 0 gives the time at once; a coarser slot is scanned, and the result
 * cached until the wheel's minimum may change.  The cache is not part of
 * the queue's value, hence the cast: queues are only ever made by
 * events_new, never defined const. */
ps_t events_next(const struct events *q)
{
	if (q->ready_len) {
		return q->ready[0].when;
	}
	if (q->fifo.head) {
		return q->cur;
	}
	if (!q->levels_used) {
		return PS_NEVER;
	}
	unsigned level = (unsigned)__builtin_ctz(q->levels_used), s = level_first(q, level);
	if (!level) {
		return slot_start(q, 0, s);
	}
	if (q->wheel_min_valid) {
		return q->wheel_min;
	}
	ps_t min = PS_NEVER;
	for (uint32_t i = q->level[level].slot[s].head; i; i = q->nodes[i].next) {
		if (q->nodes[i].when < min) {
			min = q->nodes[i].when;
		}
	}
	struct events *mq = (struct events *)q;
	mq->wheel_min = min;
	mq->wheel_min_valid = true;
	return min;
}

/* Takes the next due event if its time is <= limit and runs it.  The node
 * is released first, so the callback may schedule freely and its own id is
 * already stale. */
static inline bool run_due(struct events *q, ps_t limit)
{
	if (due_empty(q) && !refill(q, limit)) {
		return false;
	}
	uint32_t i;
	ps_t when;
	if (q->ready_len) {
		when = q->ready[0].when;
		if (when > limit) {
			return false;
		}
		i = q->ready[0].node;
		ready_pop(q);
		if (q->ready_dead) {
			ready_settle(q);
		}
	} else {
		when = q->cur;
		if (when > limit) {
			return false;
		}
		i = q->fifo.head;
		fifo_remove(q, &q->nodes[i]);
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
