/* emulator/core/events.c — the event queue: a hierarchical timer wheel in ps
 * (docs/architecture.md, Time; docs/protocol.md §12 rule 16).
 *
 * Shape.  Time is cut in blocks of 2^17 ps (131 ns).  Level 0 has a slot
 * of 64 ps for each 64 ps of two blocks, `cur`'s and the next (2 x 2,048
 * slots, at (block parity << 11) | slot in block): 131 to 262 ns ahead, so
 * that a frame's serialization (84 ns for 4 KiB at 400 Gbps) and a PCIe
 * step always land there.  Levels 1-3 have 2^16 slots each: level 1's slots
 * are one block wide and span 8.6 ms (link arrivals on an idle wire, the
 * 150 us retransmission timers, mostly cancelled there).  An event past
 * level 0 is in the level of the highest bit where its time differs from
 * `cur`, in the slot those bits name.  Slots are found through words of
 * bitmap (levels 1-3: top, summary, used; level 0: a summary word, a
 * half of it per block, and used), so the whole 64-bit range fits and no overflow list is
 * needed.  The earliest event is in cur's block, else in the next, else in
 * the lowest non-empty level above, in its lowest non-empty slot — found
 * with the bitmaps, never by turning the wheel slot by slot.  Taking a
 * slot above level 0 moves `cur` to the slot's start and files its events
 * again, lower; when `cur` enters a block, the next block's slot in level
 * 1 comes down to level 0 (pull_next_block).  Each event is filed at most
 * once per level, and where an event is follows from its time and `cur`,
 * so it is not stored.  Level 0 spans one block only when the next one
 * starts the next level-1 span (its events are then in level 2 or 3, found
 * there).
 *
 * Exact order, sorted as it comes.  A level-0 slot's list is kept in the
 * order its events run (rule 16: by time, then key, then as scheduled).
 * An event joins at the tail, where it belongs unless it is for an earlier
 * picosecond of the slot, or an arrival scheduled after a later key (an
 * engine event, or an arrival on a higher port); then it walks back from
 * the tail, past the few events of the slot it precedes.  A picosecond of
 * hundreds of arrivals whose keys come in no order (a large fabric whose
 * hosts started together) is instead sorted once, when its slot is taken
 * (level0_insert, slot_sort).  The slots above keep scheduling order
 * (appended at their tail).  That holds through cascades: when a slot is
 * taken every lower level is empty, so the events it files again reach
 * their new slots, in their order, before any event scheduled later.  So
 * `cur`'s own slot is the `fifo`, the events of `cur`'s 64 ps in the order
 * they run, and running one takes its head.
 *
 * `ready`, a small binary heap on (time, key, sequence) whose entries carry
 * those three inline, takes the events scheduled for a time before `cur`:
 * cur may stand past now after a run stopped short of a slot (the daemons'
 * runs end at grant bounds).  Time moves on only when `ready` is empty, so
 * every `ready` entry precedes every wheel event, and the next event is
 * `ready`'s top if there is one, else the `fifo`'s head.  Its entries'
 * sequence is their scheduling order, because an event enters `ready` only
 * when it is scheduled.
 *
 * Why (issue 16): the previous wheel had 128 ps granules, each emptied into
 * a binary heap of all its events; the heap's pushes and pops were about a
 * third of the simulator's instructions.  Then taking a picosecond walked
 * its list, sorted it when an arrival followed an engine event (one
 * picosecond in six at 128 hosts) and sent picoseconds of more than 64
 * arrivals to the heap (a fifth of all instructions at 1,024 hosts); and a
 * single level-0 block sent a third of the serializations through level 1.
 * Now an event costs a list append (rarely a step back), rarely a filing
 * one level down, and a list pop (callgrind, events alone, instructions per
 * data packet: 10,299 -> 9,556 at 8 hosts, 11,221 -> 9,856 at 128 and
 * 9,742 -> 7,620 at 1,024, engines' own gains of the time included).
 * Slots of one picosecond then left most events alone in theirs, each
 * setting and clearing three words of bitmap and searching three; slots of
 * 64 ps need two (8,976 -> 8,480 at 8 hosts, 9,260 -> 9,106 at 128; 7,146
 * -> 7,288 at 1,024, where the sort compares times as well as keys).
 *
 * Fetched ahead.  At 1,024 hosts what an event reads first has mostly
 * left the cache since it was scheduled: a frame's wire and its packet,
 * about 11 % of the events' last-level misses (callgrind).  Taking an
 * event from the `fifo` touches the next one's node anyway, so it asks
 * for the next event's argument and its hint (events_schedule_hint: the
 * frame's packet) to be fetched while this event runs.  Events of 64 ps
 * run back to back, so the fetch has about one event's time.  Measured:
 * the events' CPU at 1,024 hosts (256 KiB messages, 40 alternating runs
 * on a loaded machine) least 0.148 -> 0.125 s, median 0.216 -> 0.189 s;
 * instructions +0.7 % at 8 hosts, where everything is in the cache.  A
 * second hint (events_schedule_hints) names what the event reads next: a
 * frame's arrival reads the wire's next ring entry, written a link's delay
 * before and cold (its largest miss at 1,024 hosts, 6.8 a data packet).
 * Measured: events' CPU at 1,024 hosts, median of 20 alternating runs on
 * a loaded machine, three times: 0.90 of what it was; instructions at 8
 * hosts 5,584 -> 5,627 a data packet.  The node has room for it because
 * whether it waits in `ready` is told by its time (in_ready).
 *
 * Events live in 64-byte nodes on a free list, linked by index: no
 * allocation per event.  The node array is a mapping that grows in place
 * (mremap), so it is never copied.  An id is (generation << 32) | index
 * (node 0 is never used, so no id is 0); a node's generation moves on when
 * its event runs or is cancelled, so stale ids are refused.  Cancelling an
 * event in the wheel unlinks it; one in `ready` is left there, dead (its
 * entry's generation no longer matches the node's), until it reaches the
 * top; the top is always live. */
#include "events.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

/* Blocks of 2^L0_BITS ps, two of them in level 0, in slots of 2^G_BITS ps
 * (2 x 2,048 slots, 32 KiB of slot lists); levels 1-3: 2^UP_BITS slots
 * each.  One level-0 block of 2^18 ps (262 ns) cost more: a third of the
 * frames' serializations crossed its end, went to level 1 and came down
 * again (callgrind, instructions per data packet at 1,024 hosts: 7,916 with
 * it, 7,620 with two blocks of 2^17).  Slots of 32 ps measured the same as
 * 64; of 256 ps, more at 128 hosts (longer walks back). */
#define G_BITS	 6
#define L0_BITS	 17
#define UP_BITS	 16
#define LEVELS	 4			    /* 17 + 3 x 16 >= 64 */
#define L0_SLOTS (1u << (L0_BITS - G_BITS)) /* a block's; level 0 has two */
#define L0_WORDS (L0_SLOTS / 64)	    /* a block's used words: 32, half the summary */
#define UP_SLOTS (1u << UP_BITS)
_Static_assert(2 * L0_WORDS == 64, "level 0's summary is one word");
#define NIL	  0u		 /* no node: node 0 is never handed out */
#define NO_SLOT	  (2 * L0_SLOTS) /* no level-0 slot */
#define MAX_NODES UINT32_MAX
#define NODES_MIN 1024u /* the first mapping's nodes (64 KiB) */
#define NODES_ADD 64u	/* nodes put on the free list at once */

struct node {
	_Alignas(64) ps_t when; /* one cache line per node */
	uint64_t key;
	events_fn fn;
	void *arg;
	uint32_t next; /* slot list, or the free list */
	uint32_t prev; /* slot list; NIL at the head */
	/* The node's index and generation, side by side: its event's id (see
	 * node_id) */
	uint32_t self;
	uint32_t gen;
	const void *hint;  /* what fn will read first, fetched an event ahead */
	const void *hint2; /* and what it reads next (events_schedule_hints) */
};
_Static_assert(sizeof(struct node) == 64, "a node is one cache line");

/* A list of nodes: a wheel slot (level 0: in run order; above: in
 * scheduling order). */
struct list {
	uint32_t head, tail;
};

/* A `ready` entry: the order inline, the node for what to run, and the
 * node's generation, which says whether the event is still pending. */
struct ready_entry {
	ps_t when;
	uint64_t key;
	uint64_t seq;
	uint32_t node;
	uint32_t gen;
};

/* A level above 0: 2^16 slots, found through three words of bitmap. */
struct wheel_level {
	uint64_t top;	      /* bit t: summary[t] is non-zero */
	uint64_t summary[16]; /* bit w of summary[t]: used[64 t + w] is non-zero */
	uint64_t *used;	      /* bit s % 64 of used[s / 64]: slot s is non-empty */
	struct list *slot;
};

/* Level 0: the slots of two blocks, the even-numbered block's first; two
 * words of bitmap.  A slot's list is in run order, unless its bit in
 * `unsorted` is set. */
struct level0 {
	/* Bit w: used[w] is non-zero; the block of half h has bits 32 h to
	 * 32 h + 31.  One word, not one per block, so that a slot's word's
	 * bit is 1 << (s / 64), no half to pick (callgrind, 8 hosts: 5,683
	 * -> 5,661 instructions a data packet). */
	uint64_t summary;
	uint64_t used[2 * L0_WORDS];	 /* bit s % 64 of used[s / 64]: slot s */
	uint64_t unsorted[2 * L0_WORDS]; /* slot s is to be sorted when taken */
	struct list slot[2 * L0_SLOTS];
};

struct events {
	ps_t now;
	/* In the `fifo`'s slot, not before now, and the wheel is not before
	 * it: the slot's start when the slot is taken, then the time of each
	 * fifo event run (now; `ready`'s events, before it, leave it).  So an
	 * event for cur or later needs no clamp to now.  Where it is not
	 * compared whole, only its bits above the slot's are read. */
	ps_t cur;
	ps_t l0_last;	   /* level 0 holds [cur, l0_last]: cur's block, and the next */
	struct list *fifo; /* level 0's slot of cur: its events, in the order they run */
	/* l0_slot(cur), the fifo's: kept, where cur's slot is taken, so that
	 * the fifo's running empty and the refill that follows do not compute
	 * it from cur again (callgrind, 8 hosts: see run_due) */
	unsigned fifo_slot;
	/* The level-0 slot whose prev links slot_sort left unset, when it is
	 * the fifo (fifo_fix_prev); NO_SLOT if none.  A slot number, not a
	 * flag that each refill would clear (callgrind, 8 hosts: 5,661 ->
	 * 5,651 instructions a data packet): the fifo moves on only when
	 * empty, so when it comes back to that slot, its links are set, and
	 * setting them again is only a wasted walk. */
	unsigned prev_stale_slot;
	uint64_t executed; /* no count of pending events: see events_pending */
	bool stop;	   /* events_stop: the events_run_until_stop returns */

	struct ready_entry *ready; /* binary heap on (when, key, seq) */
	uint32_t ready_len, ready_cap;
	uint32_t ready_dead; /* cancelled entries still in `ready` */
	uint64_t ready_seq;  /* the next `ready` entry's sequence */

	uint32_t wheels_used; /* bit l - 1: level l (1-3) has an event */
	uint32_t unsorted;    /* level-0 slots to be sorted when taken */
	/* Exact earliest wheel time when wheel_min_valid: events_next's cache,
	 * so that asking twice does not scan twice. */
	bool wheel_min_valid;
	ps_t wheel_min;

	struct node *nodes;	     /* a mapping of nodes_cap nodes */
	uint32_t n_nodes, nodes_cap; /* handed out so far (with node 0), room */
	uint32_t free_list;

	struct wheel_level up[LEVELS - 1]; /* levels 1-3 */
	struct level0 l0;
};

/* The lowest time bit the slots of a level above 0 are named by. */
static inline unsigned up_shift(unsigned level)
{
	return L0_BITS + UP_BITS * (level - 1);
}

static inline unsigned up_slot(unsigned level, ps_t when)
{
	return (unsigned)(when >> up_shift(level)) & (UP_SLOTS - 1);
}

static inline struct wheel_level *up_level_of(struct events *q, unsigned level)
{
	return &q->up[level - 1];
}

/* The level-0 slot of a time: its slot in its block, in the half of level
 * 0 its block's parity names. */
static inline unsigned l0_slot(ps_t when)
{
	return (unsigned)(when >> G_BITS) & (2 * L0_SLOTS - 1);
}

/* The level of a time past level 0: that of the highest bit where it
 * differs from cur. */
static inline unsigned up_level(const struct events *q, ps_t when)
{
	unsigned high = 63 - (unsigned)__builtin_clzll(when ^ q->cur);

	return (high - L0_BITS) / UP_BITS + 1;
}

static __attribute__((noreturn)) void out_of_memory(void)
{
	fprintf(stderr, "mrcemu: event queue: out of memory\n");
	abort();
}

static void *xrealloc(void *p, size_t n)
{
	p = realloc(p, n);
	if (!p) {
		out_of_memory();
	}
	return p;
}

/* Level 0 spans cur's block and the next one, unless that one starts the
 * next level-1 span: its level-1 slot would not be in level 1 (a level-1
 * slot is one block).  The end wraps to the largest time in the last
 * blocks. */
static inline void set_cur(struct events *q, ps_t cur)
{
	ps_t block = cur >> L0_BITS;
	ps_t blocks = (block + 1) & (UP_SLOTS - 1) ? 2 : 1;

	q->cur = cur;
	q->l0_last = ((block + blocks) << L0_BITS) - 1;
	q->fifo_slot = l0_slot(cur);
	q->fifo = &q->l0.slot[q->fifo_slot];
}

/* cur moves on within its block, to the start of level-0 slot s: level 0
 * spans what it did. */
static inline void set_cur_slot(struct events *q, ps_t cur, unsigned s)
{
	q->cur = cur;
	q->fifo_slot = s;
	q->fifo = &q->l0.slot[s];
}

static inline void set_cur_in_block(struct events *q, ps_t cur)
{
	set_cur_slot(q, cur, l0_slot(cur));
}

#define UP_USED_BYTES (UP_SLOTS / 64 * sizeof(uint64_t))
#define UP_SLOT_BYTES (UP_SLOTS * sizeof(struct list))

/* Zeroed pages from the kernel, touched only as they are used: a level's
 * 65,536 slot lists (512 KiB) are mostly never used.  Not calloc, which
 * clears what it carves from the heap's top unless the top grew for it,
 * and the top is large after heap_reserve_huge (core/heap.h). */
static void *map_zeroed(size_t bytes)
{
	void *p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED) {
		out_of_memory();
	}
	return p;
}

struct events *events_new(void)
{
	struct events *q = calloc(1, sizeof *q);

	if (!q) {
		out_of_memory();
	}
	for (unsigned l = 0; l < LEVELS - 1; l++) {
		q->up[l].used = map_zeroed(UP_USED_BYTES);
		q->up[l].slot = map_zeroed(UP_SLOT_BYTES);
	}
	q->nodes = map_zeroed(NODES_MIN * sizeof *q->nodes);
	q->nodes_cap = NODES_MIN;
	q->n_nodes = 1;
	q->prev_stale_slot = NO_SLOT;
	set_cur(q, 0);
	return q;
}

void events_free(struct events *q)
{
	if (!q) {
		return;
	}
	for (unsigned l = 0; l < LEVELS - 1; l++) {
		munmap(q->up[l].used, UP_USED_BYTES);
		munmap(q->up[l].slot, UP_SLOT_BYTES);
	}
	munmap(q->nodes, (size_t)q->nodes_cap * sizeof *q->nodes);
	free(q->ready);
	free(q);
}

/* ---- nodes ---- */

/* The free list is empty: NODES_ADD more nodes go on it, the mapping
 * doubled in place first if they do not fit (pages come zeroed, and are
 * touched only as nodes are used).  Rare, so kept out of
 * events_schedule_key's way. */
static __attribute__((noinline)) void node_grow(struct events *q)
{
	if (q->nodes_cap - q->n_nodes < NODES_ADD) {
		uint64_t cap = 2 * (uint64_t)q->nodes_cap;
		if (cap > MAX_NODES) {
			cap = MAX_NODES;
		}
		if (cap - q->n_nodes < NODES_ADD) {
			fprintf(stderr, "mrcemu: event queue: too many pending events\n");
			abort();
		}
		void *nodes = mremap(q->nodes, (size_t)q->nodes_cap * sizeof *q->nodes,
				     cap * sizeof *q->nodes, MREMAP_MAYMOVE);
		if (nodes == MAP_FAILED) {
			out_of_memory();
		}
		q->nodes = nodes;
		q->nodes_cap = (uint32_t)cap;
	}
	/* In reverse, so that the lowest index is handed out first. */
	for (uint32_t i = q->n_nodes + NODES_ADD; i-- > q->n_nodes;) {
		q->nodes[i].self = i;
		q->nodes[i].next = q->free_list;
		q->free_list = i;
	}
	q->n_nodes += NODES_ADD;
}

/* Node n's id.  Made where it is returned, not before the node is filed:
 * kept in a register across the filing, with the node's index and the
 * nodes, it made events_schedule_hint save and restore two registers on
 * every call (callgrind, 8 hosts: 4 instructions an event).  Read whole
 * from the node, where its index is kept beside its generation, so that
 * scheduling keeps no register for the index either: it reads it from
 * the node where it links it (callgrind, 8 hosts: 5,651 -> 5,584
 * instructions a data packet). */
static inline events_id node_id(const struct node *n)
{
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
	events_id id;

	memcpy(&id, &n->self, sizeof id);
	return id;
#else
	return ((uint64_t)n->gen << 32) | n->self;
#endif
}

static void node_release(struct events *q, uint32_t i)
{
	struct node *n = &q->nodes[i];

	n->gen++;
	n->next = q->free_list;
	q->free_list = i;
}

/* ---- lists ---- */

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

/* ---- level 0: lists in run order ---- */

/* How far back from a level-0 list's tail an event may walk to its place
 * before the list is left to be sorted when its slot is taken. */
#define WALK_MAX 8

/* Whether node a runs after an event at (when, key) scheduled later than
 * it (docs/protocol.md §12 rule 16: by time, then key, then as
 * scheduled). */
static inline bool runs_after(const struct node *a, ps_t when, uint64_t key)
{
	return ((unsigned __int128)a->when << 64 | a->key) > ((unsigned __int128)when << 64 | key);
}

static inline bool slot_unsorted(const struct events *q, unsigned u)
{
	return q->unsorted && q->l0.unsorted[u / 64] & 1ULL << (u % 64);
}

/* The fifo's prev links, left stale by slot_sort, are needed (to walk back
 * or unlink): set again from its next links. */
static __attribute__((noinline)) void fifo_fix_prev(struct events *q)
{
	uint32_t prev = NIL;

	for (uint32_t i = q->fifo->head; i; prev = i, i = q->nodes[i].next) {
		q->nodes[i].prev = prev;
	}
	q->prev_stale_slot = NO_SLOT;
}

/* Node i goes before the tail of level-0 slot u, which runs after it:
 * after the last event that does not (i is the latest scheduled).  Mostly
 * a step or two: a slot holds a few events.  When the place is further
 * back, in a slot still to come (many arrivals in one picosecond, in no
 * order: a large fabric whose hosts started together), i joins the tail
 * and the slot is sorted once, when taken (slot_sort); `cur`'s own slot is
 * the `fifo` and stays in order.  Returns i's id, so that
 * events_schedule_hint can end in a tail call (see node_id). */
static __attribute__((noinline)) events_id level0_insert(struct events *q, struct list *l,
							 unsigned u, uint32_t i, struct node *n)
{
	bool bounded = l != q->fifo;

	if (!bounded && q->prev_stale_slot == u) {
		fifo_fix_prev(q);
	}
	uint32_t after = q->nodes[l->tail].prev;

	if (bounded && slot_unsorted(q, u)) {
		after = l->tail;
	} else {
		for (unsigned steps = 1; after && runs_after(&q->nodes[after], n->when, n->key);
		     steps++) {
			if (bounded && steps == WALK_MAX) {
				q->l0.unsorted[u / 64] |= 1ULL << (u % 64);
				q->unsorted++;
				after = l->tail;
				break;
			}
			after = q->nodes[after].prev;
		}
	}
	uint32_t next = after ? q->nodes[after].next : l->head;
	n->prev = after;
	n->next = next;
	if (next) {
		q->nodes[next].prev = i;
	} else {
		l->tail = i;
	}
	if (after) {
		q->nodes[after].next = i;
	} else {
		l->head = i;
	}
	return node_id(n);
}

/* Merges two non-empty chains in run order (linked by next); on equal
 * times and keys a's event first, so that the sort is stable.  When every
 * event of both shares one time (`one_time`), keys alone are compared. */
static inline __attribute__((always_inline)) uint32_t chain_merge_by(struct events *q, uint32_t a,
								     uint32_t b, bool one_time)
{
	uint32_t head, *link = &head;
	struct node *na = &q->nodes[a], *nb = &q->nodes[b];

	for (;;) {
		if (one_time ? na->key > nb->key : runs_after(na, nb->when, nb->key)) {
			*link = b;
			link = &nb->next;
			if (!(b = nb->next)) {
				*link = a;
				return head;
			}
			nb = &q->nodes[b];
		} else {
			*link = a;
			link = &na->next;
			if (!(a = na->next)) {
				*link = b;
				return head;
			}
			na = &q->nodes[a];
		}
	}
}

static uint32_t chain_merge(struct events *q, uint32_t a, uint32_t b)
{
	return chain_merge_by(q, a, b, false);
}

/* The arrivals of a sorted slot mostly share one picosecond (at 1,024
 * hosts, 1.003 times a slot): their merges then compare keys alone
 * (callgrind at 1,024 hosts, per data packet in the sorts: 482 -> 445). */
static uint32_t chain_merge_keys(struct events *q, uint32_t a, uint32_t b)
{
	return chain_merge_by(q, a, b, true);
}

/* A stable natural merge sort, fed one ascending run at a time (in list
 * order) and merging bottom up: run[k] holds the merge of 2^k runs (32 of
 * them hold 2^32).  `tail` is the last run end that none before it runs
 * after (on a tie the later one: the sort is stable). */
struct sorter {
	uint32_t run[33];
	unsigned top;
	uint32_t tail;
	bool one_time; /* every event added so far shares one time */
};

/* Adds the run from `head` to `last` (linked by next). */
static void sorter_add(struct events *q, struct sorter *st, uint32_t head, uint32_t last)
{
	const struct node *nl = &q->nodes[last];
	unsigned k = 0;

	if (!st->tail || !runs_after(&q->nodes[st->tail], nl->when, nl->key)) {
		st->tail = last;
	}
	q->nodes[last].next = NIL;
	for (; st->run[k]; k++) {
		head = st->one_time ? chain_merge_keys(q, st->run[k], head)
				    : chain_merge(q, st->run[k], head);
		st->run[k] = NIL;
	}
	st->run[k] = head;
	st->top = k > st->top ? k : st->top;
}

/* The runs added, merged, into l. */
static void sorter_end(struct events *q, struct sorter *st, struct list *l)
{
	uint32_t head = NIL;

	for (unsigned k = 0; k <= st->top; k++) {
		if (st->run[k]) {
			head = !head	      ? st->run[k]
			       : st->one_time ? chain_merge_keys(q, st->run[k], head)
					      : chain_merge(q, st->run[k], head);
		}
	}
	l->head = head;
	l->tail = st->tail;
}

/* A stable natural merge sort of list l in run order, by its next links:
 * cut into its ascending runs, which are merged. */
static void chain_sort(struct events *q, struct list *l)
{
	struct sorter st = {{0}, 0, NIL, false};

	for (uint32_t i = l->head, next; i; i = next) {
		uint32_t last = i;
		while ((next = q->nodes[last].next) &&
		       !runs_after(&q->nodes[last], q->nodes[next].when, q->nodes[next].key)) {
			last = next;
		}
		sorter_add(q, &st, i, last);
	}
	sorter_end(q, &st, l);
}

/* Cuts slot list l into its arrivals, sorted (their runs go to the sorter
 * as they are found), and its engine events, in the order they had (linked
 * by next, ended by NIL).  Returns whether the engine events were in run
 * order already. */
static bool slot_split(struct events *q, const struct list *l, struct list *arr, struct list *eng)
{
	struct sorter st = {{0}, 0, NIL, true};
	uint32_t run = NIL, last = NIL, *eng_link = &eng->head;
	ps_t first_when = 0;
	bool eng_sorted = true;

	eng->tail = NIL;
	for (uint32_t i = l->head, next; i; i = next) {
		struct node *n = &q->nodes[i];
		next = n->next;
		if (n->key == EVENTS_KEY_ENGINE) {
			if (eng->tail && runs_after(&q->nodes[eng->tail], n->when, n->key)) {
				eng_sorted = false;
			}
			*eng_link = eng->tail = i;
			eng_link = &n->next;
			continue;
		}
		if (!last) {
			first_when = n->when;
		} else if (n->when != first_when) {
			st.one_time = false; /* before any merge of n's run */
		}
		if (last && !runs_after(&q->nodes[last], n->when, n->key)) {
			q->nodes[last].next = i;
			last = i;
		} else {
			if (last) {
				sorter_add(q, &st, run, last);
			}
			run = last = i;
		}
	}
	*eng_link = NIL;
	if (last) {
		sorter_add(q, &st, run, last);
	}
	sorter_end(q, &st, arr);
	return eng_sorted;
}

/* Puts a level-0 slot's list in run order (see level0_insert): a stable
 * natural merge sort by time and key.  The list is a few ascending runs,
 * one for each picosecond that scheduled into it (events run in key
 * order, and an arrival schedules the next on its wire), broken again
 * wherever an engine event comes between two arrivals.  So its arrivals
 * and its engine events are sorted apart, in one pass over the list, then
 * merged: at 1,024 hosts a slot sorted holds about 250 events, a third of
 * them engine events already in order, and its arrivals are 7 runs where
 * the whole list was 18 (callgrind, instructions per data packet in the
 * sorts: 721 -> 524 sorting the parts after a pass that cut them, 482 in
 * one pass).  Sorting each part stably and merging them is the stable
 * sort of the whole, as no arrival ties an engine event (their keys
 * differ); mostly the arrivals all come first (the slot's events share a
 * picosecond), and the merge is a link.  Tried and dropped: a radix sort
 * on the receiving port of the arrivals of one picosecond: 95
 * instructions per event sorted against 84.  Only the fifo is sorted,
 * when taken, and then mostly runs from its head: its prev links are left
 * stale until something needs them (fifo_fix_prev). */
static __attribute__((noinline)) void slot_sort(struct events *q, unsigned u)
{
	struct list *l = &q->l0.slot[u], arr, eng;

	q->l0.unsorted[u / 64] &= ~(1ULL << (u % 64));
	q->unsorted--;
	q->prev_stale_slot = u;
	if (!slot_split(q, l, &arr, &eng)) {
		chain_sort(q, &eng);
	}
	if (!arr.head || !eng.head) {
		*l = arr.head ? arr : eng;
		return;
	}
	const struct node *ea = &q->nodes[eng.head], *ez = &q->nodes[eng.tail];
	if (!runs_after(&q->nodes[arr.tail], ea->when, ea->key)) {
		q->nodes[arr.tail].next = eng.head;
		*l = (struct list){arr.head, eng.tail};
		return;
	}
	l->head = chain_merge(q, arr.head, eng.head);
	l->tail = runs_after(&q->nodes[arr.tail], ez->when, ez->key) ? arr.tail : eng.tail;
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

static void ready_push(struct events *q, uint32_t i, struct node *n)
{
	struct ready_entry e = {n->when, n->key, q->ready_seq++, i, n->gen};

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
static void ready_pop(struct events *q)
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
	return q->nodes[e->node].gen == e->gen;
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

/* A level-0 slot has an event: its bit, and its word's in the summary
 * (set again if it was set: no test, no branch). */
static inline void l0_mark_used(struct events *q, unsigned s)
{
	q->l0.used[s / 64] |= 1ULL << (s % 64);
	q->l0.summary |= 1ULL << (s / 64);
}

static inline void l0_mark_empty(struct events *q, unsigned s)
{
	if (!(q->l0.used[s / 64] &= ~(1ULL << (s % 64)))) {
		q->l0.summary &= ~(1ULL << (s / 64));
	}
}

/* The fifo ran empty: its bit, left set by run_due, cleared, so that the
 * bitmap says again which slots hold events.  Only refill and events_next
 * read level 0's bitmap while the fifo is empty (cur moves only in a
 * refill); refill clears the bit itself, with its word in hand, and an
 * event scheduled into the empty fifo sets the bit again, as it would.
 * Left to the refill, the fifo's running empty stores nothing in the
 * bitmap (callgrind, 8 hosts: 5,758 -> 5,710 instructions a data
 * packet).  events_next clears it through a cast: the bit is not part of
 * the queue's value. */
static inline void fifo_bit_clear(struct events *q)
{
	l0_mark_empty(q, q->fifo_slot);
}

/* The summary's bits for level 0's half h, in place: non-zero when a slot
 * of that block has an event. */
static inline uint64_t l0_half(const struct events *q, unsigned h)
{
	return q->l0.summary & (uint64_t)UINT32_MAX << (L0_WORDS * h);
}

/* The lowest non-empty slot of level 0's half h, which has one. */
static inline unsigned l0_first(const struct events *q, unsigned h)
{
	unsigned word = (unsigned)__builtin_ctzll(l0_half(q, h));

	return word * 64 + (unsigned)__builtin_ctzll(q->l0.used[word]);
}

/* The start of cur's block (next = 0), or of the next (1). */
static inline ps_t block_start(const struct events *q, unsigned next)
{
	return ((q->cur >> L0_BITS) + next) << L0_BITS;
}

/* The start of the lowest non-empty slot of level 0's half h, in cur's
 * block (next = 0) or in the next (1). */
static inline ps_t l0_first_start(const struct events *q, unsigned h, unsigned next)
{
	return block_start(q, next) | (ps_t)(l0_first(q, h) % L0_SLOTS) << G_BITS;
}

/* The summary words above a used word already say so unless it was 0. */
static inline void up_mark_used(struct events *q, unsigned level, unsigned s)
{
	struct wheel_level *w = up_level_of(q, level);
	uint64_t used = w->used[s / 64];

	w->used[s / 64] = used | 1ULL << (s % 64);
	if (!used) {
		w->summary[s / 4096] |= 1ULL << (s / 64 % 64);
		w->top |= 1ULL << (s / 4096);
		q->wheels_used |= 1u << (level - 1);
	}
}

static inline void up_mark_empty(struct events *q, unsigned level, unsigned s)
{
	struct wheel_level *w = up_level_of(q, level);

	if ((w->used[s / 64] &= ~(1ULL << (s % 64)))) {
		return;
	}
	if ((w->summary[s / 4096] &= ~(1ULL << (s / 64 % 64)))) {
		return;
	}
	if ((w->top &= ~(1ULL << (s / 4096)))) {
		return;
	}
	q->wheels_used &= ~(1u << (level - 1));
}

/* The lowest non-empty slot of a level above 0, which has one. */
static inline unsigned up_first(struct events *q, unsigned level)
{
	const struct wheel_level *w = up_level_of(q, level);
	unsigned t = (unsigned)__builtin_ctzll(w->top);
	unsigned word = t * 64 + (unsigned)__builtin_ctzll(w->summary[t]);

	return word * 64 + (unsigned)__builtin_ctzll(w->used[word]);
}

/* Level 0, in run order (see the top of the file): node i joins the tail
 * of its slot's list l (slot s) unless the tail runs after it; then it
 * returns false, and i is for level0_insert. */
static inline bool level0_append(struct events *q, uint32_t i, struct node *n, struct list *l,
				 unsigned s)
{
	uint32_t tail = l->tail;

	if (!tail) {
		n->next = NIL;
		n->prev = NIL;
		l->head = i;
		l->tail = i;
		l0_mark_used(q, s);
		return true;
	}
	struct node *t = &q->nodes[tail];
	if (runs_after(t, n->when, n->key)) {
		return false;
	}
	n->next = NIL;
	n->prev = tail;
	t->next = i;
	l->tail = i;
	return true;
}

static inline void level0_link(struct events *q, uint32_t i, struct node *n)
{
	unsigned s = l0_slot(n->when);
	struct list *l = &q->l0.slot[s];

	if (!level0_append(q, i, n, l, s)) {
		level0_insert(q, l, s, i, n);
	}
}

static inline bool on_level0(const struct events *q, ps_t when)
{
	return when >= q->cur && when <= q->l0_last;
}

/* A time past level 0: appended to the slot of the level of the highest bit
 * where it differs from cur.  Kept apart from the level-0 path, the common
 * one. */
static inline void wheel_link_up(struct events *q, uint32_t i, struct node *n)
{
	unsigned level = up_level(q, n->when), s = up_slot(level, n->when);

	if (list_append(q, &up_level_of(q, level)->slot[s], i, n)) {
		up_mark_used(q, level, s);
	}
	if (n->when < q->wheel_min) {
		/* Exact while valid: a new minimum keeps it so. */
		q->wheel_min = n->when;
	}
}

/* Files node i when its time is before cur or past level 0: clamped to now
 * (see events_schedule_hint), then level 0 if it is there after all (cur
 * is now), `ready` if before cur (see the top of the file), else the level
 * above. */
static __attribute__((noinline)) events_id file_node_other(struct events *q, uint32_t i,
							   struct node *n)
{
	if (n->when < q->now) {
		n->when = q->now;
	}
	if (on_level0(q, n->when)) {
		level0_link(q, i, n);
	} else if (n->when < q->cur) {
		ready_push(q, i, n);
	} else {
		wheel_link_up(q, i, n);
	}
	return node_id(n);
}

static void wheel_unlink(struct events *q, struct node *n)
{
	if (on_level0(q, n->when)) {
		unsigned s = l0_slot(n->when);
		struct list *l = &q->l0.slot[s];
		if (l == q->fifo && q->prev_stale_slot == s) {
			fifo_fix_prev(q);
		}
		list_unlink(q, l, n);
		if (!l->head) {
			l0_mark_empty(q, s);
		}
		return;
	}
	unsigned level = up_level(q, n->when), s = up_slot(level, n->when);
	struct list *l = &up_level_of(q, level)->slot[s];
	list_unlink(q, l, n);
	if (!l->head) {
		up_mark_empty(q, level, s);
	}
	if (n->when == q->wheel_min) {
		q->wheel_min_valid = false;
	}
}

/* The start of slot s of a level above 0. */
static inline ps_t slot_start(const struct events *q, unsigned level, unsigned s)
{
	unsigned above = up_shift(level) + UP_BITS;
	ps_t prefix = above >= 64 ? 0 : q->cur >> above << above;

	return prefix | ((ps_t)s << up_shift(level));
}

/* Empties a slot above level 0, returning its first node. */
static inline uint32_t slot_take(struct events *q, unsigned level, unsigned s)
{
	struct list *sl = &up_level_of(q, level)->slot[s];
	uint32_t i = sl->head;

	*sl = (struct list){NIL, NIL};
	up_mark_empty(q, level, s);
	/* The cached minimum may be among these, about to change level. */
	q->wheel_min_valid = false;
	return i;
}

/* cur entered a block: when level 0 now spans the next block too, that
 * block's slot in level 1 (its events scheduled while it was further away)
 * comes down, into an empty half of level 0, so its events keep their
 * place before those scheduled from now on. */
static void pull_next_block(struct events *q)
{
	ps_t next = block_start(q, 1);

	if (!next || next > q->l0_last || !q->up[0].slot[up_slot(1, next)].head) {
		return;
	}
	for (uint32_t i = slot_take(q, 1, up_slot(1, next)); i;) {
		struct node *n = &q->nodes[i];
		uint32_t after = n->next;
		level0_link(q, i, n);
		i = after;
	}
}

/* The earliest slot is above level 0 (which is empty): if it starts by
 * `limit`, cur moves to its start and its events are filed again, lower
 * (those of the start's level-0 slot into cur's own).  Returns whether it
 * did. */
static __attribute__((noinline)) bool cascade(struct events *q, unsigned level, ps_t limit)
{
	unsigned s = up_first(q, level);
	ps_t start = slot_start(q, level, s);

	if (start > limit) {
		return false;
	}
	uint32_t i = slot_take(q, level, s);
	set_cur(q, start);
	while (i) {
		struct node *n = &q->nodes[i];
		uint32_t next = n->next;
		if (on_level0(q, n->when)) {
			level0_link(q, i, n);
		} else {
			wheel_link_up(q, i, n);
		}
		i = next;
	}
	pull_next_block(q);
	return true;
}

/* cur's slot is taken: sorted if it is to be. */
static inline void take_slot(struct events *q)
{
	if (slot_unsorted(q, q->fifo_slot)) {
		slot_sort(q, q->fifo_slot);
	}
}

/* refill, when cur's block has no event left. */
static __attribute__((noinline)) bool refill_far(struct events *q, ps_t limit)
{
	for (;;) {
		unsigned h = (unsigned)(q->cur >> L0_BITS) & 1;
		ps_t start;
		if (l0_half(q, h)) {
			start = l0_first_start(q, h, 0);
			if (start > limit) {
				return false;
			}
			set_cur_in_block(q, start);
			break;
		}
		if (l0_half(q, h ^ 1)) {
			start = l0_first_start(q, h ^ 1, 1);
			if (start > limit) {
				return false;
			}
			set_cur(q, start);
			pull_next_block(q);
			break;
		}
		if (!q->wheels_used ||
		    !cascade(q, (unsigned)__builtin_ctz(q->wheels_used) + 1, limit)) {
			return false;
		}
		if (q->fifo->head) {
			break;
		}
	}
	take_slot(q);
	return true;
}

/* The `fifo` is empty: cur moves to the earliest level-0 slot (in its
 * block, in the next block, or brought down from a level above), but never
 * past `limit`, so that events scheduled after an early stop still find
 * their place in the wheel.  Returns whether the `fifo` has events.  The
 * next slot is mostly in cur's block (at 8 hosts, two runs in three take
 * a new slot): that path is inline. */
static inline bool refill(struct events *q, ps_t limit)
{
	/* The fifo's bit, left set when it ran empty (see fifo_bit_clear),
	 * cleared here, where its word is read anyway. */
	uint64_t word = q->l0.used[q->fifo_slot / 64] & ~(1ULL << (q->fifo_slot % 64));
	unsigned s;
	ps_t start;

	q->l0.used[q->fifo_slot / 64] = word;
	/* The slot's number is kept, not computed from its start again
	 * (callgrind, 8 hosts: 4 instructions a refill). */
	if (word) {
		/* The next slot is in cur's word of bitmap (4 ns): no slot
		 * before cur's holds an event, and cur's own is empty, so it
		 * is the word's lowest.  Mostly so at 8 hosts; the summary
		 * is not read. */
		s = (q->fifo_slot & ~63u) | (unsigned)__builtin_ctzll(word);
		start = (q->cur & ~(((ps_t)64 << G_BITS) - 1)) | (ps_t)(s % 64) << G_BITS;
	} else {
		unsigned h = (unsigned)(q->cur >> L0_BITS) & 1;
		q->l0.summary &= ~(1ULL << (q->fifo_slot / 64));
		if (!l0_half(q, h)) {
			return refill_far(q, limit);
		}
		s = l0_first(q, h);
		start = block_start(q, 0) | (ps_t)(s % L0_SLOTS) << G_BITS;
	}
	if (start > limit) {
		return false;
	}
	set_cur_slot(q, start, s);
	take_slot(q);
	return true;
}

/* ---- the interface ---- */

static events_id schedule_grown(struct events *q, ps_t when, uint64_t key, events_fn fn, void *arg,
				const void *hint, const void *hint2);

/* A time before now is clamped to now: the event runs at once, after the
 * events already due now (rule 16 order), rather than moving the clock back.
 * Scheduling in the past is a caller's bug, but a daemon should not die of
 * it (docs/architecture.md: late frames are run at once).  Inline in each
 * entry point: through one of seven arguments, the seventh on the stack,
 * the others could not end in a tail call (callgrind, 8 hosts: about 40
 * instructions a data packet). */
static inline __attribute__((always_inline)) events_id schedule(struct events *q, ps_t when,
								uint64_t key, events_fn fn,
								void *arg, const void *hint,
								const void *hint2)
{
	uint32_t i = q->free_list;

	if (!i) {
		/* Rare: no call on the common path, whose registers then need
		 * no saving. */
		return schedule_grown(q, when, key, fn, arg, hint, hint2);
	}
	struct node *n = &q->nodes[i];
	q->free_list = n->next;
	/* The arguments stored as soon as the node is known, the time last:
	 * their registers are then free for the filing (callgrind, 8 hosts:
	 * 1.5 instructions an event fewer than storing the time first). */
	n->fn = fn;
	n->arg = arg;
	n->hint = hint;
	n->hint2 = hint2;
	n->key = key;
	n->when = when;
	/* cur is not before now (see struct events), so a time from cur on
	 * needs no clamp (callgrind, 8 hosts: 5,710 -> 5,683 instructions a
	 * data packet). */
	if (on_level0(q, when)) {
		unsigned s = l0_slot(when);
		struct list *l = &q->l0.slot[s];
		if (level0_append(q, n->self, n, l, s)) {
			return node_id(n);
		}
		return level0_insert(q, l, s, n->self, n);
	}
	return file_node_other(q, n->self, n);
}

static __attribute__((noinline)) events_id schedule_grown(struct events *q, ps_t when, uint64_t key,
							  events_fn fn, void *arg, const void *hint,
							  const void *hint2)
{
	node_grow(q);
	return schedule(q, when, key, fn, arg, hint, hint2);
}

events_id events_schedule_hints(struct events *q, ps_t when, uint64_t key, events_fn fn, void *arg,
				const void *hint, const void *hint2)
{
	return schedule(q, when, key, fn, arg, hint, hint2);
}

events_id events_schedule_hint(struct events *q, ps_t when, uint64_t key, events_fn fn, void *arg,
			       const void *hint)
{
	return schedule(q, when, key, fn, arg, hint, hint);
}

events_id events_schedule_key(struct events *q, ps_t when, uint64_t key, events_fn fn, void *arg)
{
	return schedule(q, when, key, fn, arg, arg, arg);
}

events_id events_schedule(struct events *q, ps_t when, events_fn fn, void *arg)
{
	return events_schedule_key(q, when, EVENTS_KEY_ENGINE, fn, arg);
}

/* Whether pending node n waits in `ready`, not in the wheel: it went
 * there for a time before cur, and cur moves on only once `ready` is
 * empty, while the wheel holds no time before cur (see the top of the
 * file).  Asked of the time, not of a state byte in the node, which has
 * room for two hints then (events_schedule_hints). */
static inline bool in_ready(const struct events *q, const struct node *n)
{
	return n->when < q->cur;
}

bool events_cancel(struct events *q, events_id id)
{
	uint32_t i = (uint32_t)id;

	if (!i || i >= q->n_nodes) {
		return false;
	}
	struct node *n = &q->nodes[i];
	if (n->gen != (uint32_t)(id >> 32)) {
		return false;
	}
	if (!in_ready(q, n)) {
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

/* A pending wheel node is last when nothing follows it in its list: a
 * level-0 list holds 64 ps in run order (an engine event scheduled later
 * for its picosecond joins after it; an arrival walks back before it, or
 * joins the tail of a list to be sorted; an event for a later picosecond
 * of the slot follows it, and then it is not said to be last), a list
 * above holds its slot in scheduling order, and every event pending for
 * one time is in the same list (see the top of the file). */
bool events_is_last(const struct events *q, events_id id)
{
	uint32_t i = (uint32_t)id;

	if (!i || i >= q->n_nodes) {
		return false;
	}
	const struct node *n = &q->nodes[i];
	return n->gen == (uint32_t)(id >> 32) && !in_ready(q, n) && n->next == NIL;
}

/* The earliest time in a list, scanned. */
static ps_t list_first_when(const struct events *q, const struct list *l)
{
	ps_t min = PS_NEVER;

	for (uint32_t i = l->head; i; i = q->nodes[i].next) {
		if (q->nodes[i].when < min) {
			min = q->nodes[i].when;
		}
	}
	return min;
}

/* The earliest time in level-0 slot s: its head's, unless it is to be
 * sorted. */
static ps_t l0_first_when(const struct events *q, unsigned s)
{
	const struct list *l = &q->l0.slot[s];

	return slot_unsorted(q, s) ? list_first_when(q, l) : q->nodes[l->head].when;
}

/* Level 0 gives the time at once (a slot to be sorted is scanned); a slot
 * above is scanned, and the result cached until the wheel's minimum may
 * change.  The cache is not part of the queue's value, hence the cast:
 * queues are only ever made by events_new, never defined const. */
ps_t events_next(const struct events *q)
{
	if (q->ready_len) {
		return q->ready[0].when;
	}
	if (q->fifo->head) {
		return q->nodes[q->fifo->head].when;
	}
	fifo_bit_clear((struct events *)q);
	unsigned h = (unsigned)(q->cur >> L0_BITS) & 1;
	if (l0_half(q, h)) {
		return l0_first_when(q, l0_first(q, h));
	}
	if (l0_half(q, h ^ 1)) {
		return l0_first_when(q, l0_first(q, h ^ 1));
	}
	if (!q->wheels_used) {
		return PS_NEVER;
	}
	if (q->wheel_min_valid) {
		return q->wheel_min;
	}
	struct events *mq = (struct events *)q;
	unsigned level = (unsigned)__builtin_ctz(q->wheels_used) + 1;
	ps_t min = list_first_when(q, &up_level_of(mq, level)->slot[up_first(mq, level)]);
	mq->wheel_min = min;
	mq->wheel_min_valid = true;
	return min;
}

/* The next event is `ready`'s top: takes it if its time is <= limit. */
static __attribute__((noinline)) uint32_t take_ready(struct events *q, ps_t limit)
{
	if (q->ready[0].when > limit) {
		return NIL;
	}
	uint32_t i = q->ready[0].node;
	ready_pop(q);
	if (q->ready_dead) {
		ready_settle(q);
	}
	return i;
}

/* Takes the next due event if its time is <= limit and runs it.  The node
 * is released first, so the callback may schedule freely and its own id is
 * already stale. */
static inline __attribute__((always_inline)) bool run_due(struct events *q, ps_t limit)
{
	uint32_t i;
	struct node *n;

	if (q->ready_len) {
		if (!(i = take_ready(q, limit))) {
			return false;
		}
		n = &q->nodes[i];
	} else {
		struct list *l = q->fifo;
		if (!l->head) {
			if (!refill(q, limit)) {
				return false;
			}
			l = q->fifo;
		}
		i = l->head;
		n = &q->nodes[i];
		if (n->when > limit) {
			return false;
		}
		q->cur = n->when; /* now: see events_schedule_hint */
		l->head = n->next;
		if (n->next) {
			struct node *after = &q->nodes[n->next];
			after->prev = NIL;
			/* what the next event reads first, fetched while this
			 * one runs (see the top of the file) */
			__builtin_prefetch(after->arg);
			__builtin_prefetch(after->hint);
			__builtin_prefetch(after->hint2);
		} else {
			/* its bit is left to the refill (fifo_bit_clear) */
			l->tail = NIL;
		}
	}
	events_fn fn = n->fn;
	void *arg = n->arg;
	ps_t when = n->when;
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

uint64_t events_run_until_stop(struct events *q, ps_t until)
{
	uint64_t ran = 0;

	q->stop = false;
	while (run_due(q, until)) {
		ran++;
		if (q->stop) {
			break;
		}
	}
	return ran;
}

void events_stop(struct events *q)
{
	q->stop = true;
}

bool events_run_one(struct events *q)
{
	return run_due(q, PS_NEVER);
}

ps_t events_now(const struct events *q)
{
	return q->now;
}

/* Every node handed out but node 0 is pending or on the free list.  Walked,
 * as only tests ask: a count kept up to date cost an add on every event
 * scheduled and a subtract on every event run (callgrind, 8 hosts, events
 * alone: about 2 instructions an event). */
size_t events_pending(const struct events *q)
{
	size_t free_nodes = 0;

	for (uint32_t i = q->free_list; i; i = q->nodes[i].next) {
		free_nodes++;
	}
	return q->n_nodes - 1 - free_nodes;
}

uint64_t events_executed(const struct events *q)
{
	return q->executed;
}
