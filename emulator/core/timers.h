/* emulator/core/timers.h — timers that share events (issue 16).
 *
 * A timer is an event that is mostly stopped before it is due: a NIC starts
 * a retransmission timer as each data frame leaves and stops it when the
 * frame is acknowledged, a few microseconds later, long before it expires.
 * Scheduling and cancelling an event per frame, far ahead, cost about 235
 * instructions a data packet.  Here timers due at the same picosecond and
 * started one after another, with no event for that picosecond scheduled in
 * between, share one event, a batch, and run in it in the order they were
 * started; starting one costs an append, stopping one a store, and the
 * batch's event is cancelled when its last timer stops.
 *
 * Exact: each timer runs when, and in the order, its own event would have
 * (docs/protocol.md §12 rule 16: engine events at one picosecond run in the
 * order they were scheduled).  A timer joins a batch only while the batch's
 * event is the last event due at its picosecond (events_is_last), so the
 * events the batch's timers would have had come one right after the other
 * in that picosecond's order; running them back to back in one event is
 * the same, given two things of the callbacks:
 *   - they schedule no frame arrival (an order key below EVENTS_KEY_ENGINE)
 *     at their own picosecond: it would run before the batch's later timers,
 *     as it would not have before their events;
 *   - what they schedule at their own picosecond runs after the whole
 *     batch, as it would have after the later timers' events (all scheduled
 *     earlier).
 * A timer started while its batch runs opens a new batch.  The events a
 * run executes are fewer (a batch counts once), and nothing else differs.
 *
 * Engines that share an event queue share a struct timers, so that their
 * timers due at one picosecond batch together (an engine's own would be
 * cut by the others' between them). */
#ifndef EMULATOR_TIMERS_H
#define EMULATOR_TIMERS_H

#include <stdint.h>

#include "events.h"
#include "time.h"

struct timers;

/* A timer's identity, for timers_stop; 0 is never a valid id. */
typedef uint64_t timers_id;

/* NULL when out of memory. */
struct timers *timers_new(struct events *q);
/* Pending timers are dropped; their batches' events must not run after. */
void timers_free(struct timers *t);

/* Run fn(arg, when) at `when` (>= the queue's now), as if it were
 * events_schedule(q, when, fn, arg).  Aborts when out of memory, as
 * events_schedule does. */
timers_id timers_start(struct timers *t, ps_t when, events_fn fn, void *arg);

/* Stop a pending timer; one that ran or was stopped is left alone. */
void timers_stop(struct timers *t, timers_id id);

#endif
