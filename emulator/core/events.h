/* emulator/core/events.h — the event queue: a hierarchical timer wheel in ps
 * (docs/architecture.md, Time).
 *
 * Events keep their exact picosecond times and run in (time, order key,
 * scheduling sequence) order.  The order key implements docs/protocol.md §12
 * rule 16: frame arrivals first (by receiving port, then by the link's frame
 * sequence), then the engine's own events in the order they were scheduled.
 * Hosts only advance time; engines schedule their own work. */
#ifndef EMULATOR_EVENTS_H
#define EMULATOR_EVENTS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "time.h"

struct events;

typedef void (*events_fn)(void *arg, ps_t now);

/* An event's identity, for events_cancel; 0 is never a valid id. */
typedef uint64_t events_id;

/* Order keys: arrivals sort before engine events at the same picosecond. */
#define EVENTS_KEY_ENGINE UINT64_MAX
/* 24 bits of receiving port (node x TOPO_MAX_PORTS + port: 262,144 nodes,
 * a 32,768-host fat tree has 37,888), 39 bits of per-link frame sequence
 * (5.5 x 10^11 frames), top bit clear. */
#define EVENTS_ARRIVAL_SEQ_BITS 39
static inline uint64_t events_key_arrival(uint32_t rx_port, uint64_t link_seq)
{
	return ((uint64_t)(rx_port & 0xFFFFFF) << EVENTS_ARRIVAL_SEQ_BITS) |
	       (link_seq & ((1ULL << EVENTS_ARRIVAL_SEQ_BITS) - 1));
}

/* The key of the frame after key's on its link: the next sequence, as
 * events_key_arrival keeps it. */
static inline uint64_t events_key_arrival_next(uint64_t key)
{
	const uint64_t seq = (1ULL << EVENTS_ARRIVAL_SEQ_BITS) - 1;

	return (key & ~seq) | ((key + 1) & seq);
}

struct events *events_new(void);
void events_free(struct events *q);

/* Run fn(arg, when) at `when` (>= events_now(q)); engine order. */
events_id events_schedule(struct events *q, ps_t when, events_fn fn, void *arg);

/* Same, with an explicit order key among events at the same time. */
events_id events_schedule_key(struct events *q, ps_t when, uint64_t key, events_fn fn, void *arg);

/* Same, naming what fn will read first besides arg (a frame's packet):
 * fetched into the cache while the event before it runs. */
events_id events_schedule_hint(struct events *q, ps_t when, uint64_t key, events_fn fn, void *arg,
			       const void *hint);

/* Same, naming two things fn reads besides arg (a frame's packet and the
 * wire's next ring entry), both fetched while the event before it runs. */
events_id events_schedule_hints(struct events *q, ps_t when, uint64_t key, events_fn fn, void *arg,
				const void *hint, const void *hint2);

/* Cancel a pending event. Returns false if it already ran or was cancelled. */
bool events_cancel(struct events *q, events_id id);

/* Whether event id is pending and is the last of the events due at its time
 * that will run: every event for that picosecond scheduled after it has
 * been cancelled, so one scheduled now at the same time and key would run
 * right after it.  May say false when that holds (the event waits in
 * `ready`, or an event for another picosecond of its coarse slot was
 * scheduled after it), never true when it does not.  Core/timers.c batches
 * timers on it. */
bool events_is_last(const struct events *q, events_id id);

/* Time of the earliest pending event, PS_NEVER if none. */
ps_t events_next(const struct events *q);

/* Run every event with time <= until, in order (events scheduled while
 * running are included when due).  The clock then stands at the last
 * event's time (never moves backwards).  Returns how many ran. */
uint64_t events_run_until(struct events *q, ps_t until);

/* The same, but stopping as well after the event during which
 * events_stop(q) was called: one test per event where a caller's own loop
 * would call events_run_one and ask itself whether to go on (the
 * simulation's run ends when its last message finishes).  Returns how many
 * ran. */
uint64_t events_run_until_stop(struct events *q, ps_t until);

/* Make the events_run_until_stop running now, if any, return after the
 * current event.  No effect on the other ways of running events. */
void events_stop(struct events *q);

/* Run exactly one event: the earliest pending (not every event of its time).
 * Returns false when the queue is empty. */
bool events_run_one(struct events *q);

ps_t events_now(const struct events *q);
/* Events scheduled and neither run nor cancelled.  It walks the free list
 * (no count is kept on the hot path): for tests and reports, not per event. */
size_t events_pending(const struct events *q);
uint64_t events_executed(const struct events *q);

#endif
