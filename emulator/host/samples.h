/* emulator/host/samples.h — samples.csv, the report's time series (docs/records.md,
 * Records): every SampleInterval of virtual time, the queue of every switch
 * port and class that saw traffic (bytes now, peak since the last sample,
 * totals of trims, drops and ECN marks), every NIC's delivered bytes,
 * goodput, and entropy values in SKIP and ASSUMED_BAD (over its
 * destinations, docs/protocol.md §6), and the cwnd and bytes in flight of every
 * QP group that sends.
 * The seed's own report intervals keep their defaults; this record exists
 * only when asked for (SampleInterval, or --report), the same in `sim` and
 * in each daemon of `run`.
 *
 * A sample reads engine state and changes none of it, so records other
 * than this one are the same with or without it. */
#ifndef EMULATOR_SAMPLES_H
#define EMULATOR_SAMPLES_H

#include <stdbool.h>

#include "core/events.h"
#include "core/records.h"
#include "core/time.h"
#include "core/topology.h"
#include "core/workload.h"

struct nic;
struct sw;
struct samples;

extern const char SAMPLES_HEADER[];

/* Samples a run takes before the interval doubles (auto aims at 200). */
#define SAMPLES_PER_DOUBLING 400

/* The sampling period: 0 when off (SampleInterval = off, or auto without a
 * report), the given time, or for auto about 1/200 of the run: of `until`
 * when set, else of an estimate from the workload (each message's bytes at
 * its sender's DataRate after its post time and dependencies, and the
 * bytes each NIC sends or receives at its rate), rounded down to 1, 2 or 5
 * times a power of ten picoseconds, 1 ns at least. */
ps_t samples_interval(const struct topology *t, const struct workload *w, ps_t until, bool report);

/* A sampler writing to c every `interval` on q; NULL when out of memory. */
struct samples *samples_new(struct events *q, struct csv *c, ps_t interval);
bool samples_add_nic(struct samples *s, struct nic *nic);
bool samples_add_switch(struct samples *s, struct sw *sw);
/* Schedule the first sample, at time 0. */
void samples_start(struct samples *s);
/* A last sample at `now` (the end of the run), unless one was taken then. */
void samples_finish(struct samples *s, ps_t now);
void samples_free(struct samples *s);

#endif
