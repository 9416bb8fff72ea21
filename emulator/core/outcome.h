/* emulator/core/outcome.h — what a run of a workload did: the summary both
 * `mrcemu sim` and `mrcemu run` print (docs/cli.md, Command line), summed
 * the same way from the same counters, so that the two can be compared. */
#ifndef EMULATOR_OUTCOME_H
#define EMULATOR_OUTCOME_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "time.h"

struct run_outcome {
	uint64_t messages, completed, failed, unverified;
	uint64_t data_pkts;
	uint64_t retx_timeout, retx_nack, retx_sack_gap, rerequests, trims, drops;
	uint64_t switch_trims, switch_drops; /* trimmed; dropped at queues, TTL, routes */
	ps_t fct_p50, fct_p99, fct_max;
};

/* A counter of a node by name (nic_counter, sw_counter, a `stats` reply). */
typedef uint64_t (*outcome_counter_fn)(const void *node, const char *name);

/* Add a NIC's or a switch's counters to the summary. */
void outcome_add_nic(struct run_outcome *o, outcome_counter_fn get, const void *nic);
void outcome_add_switch(struct run_outcome *o, outcome_counter_fn get, const void *sw);

/* Percentiles of n completion times (sorted in place), by nearest rank. */
void outcome_fct(struct run_outcome *o, ps_t *fct, size_t n);

/* The lines on messages, completion times, retransmissions and drops. */
void outcome_print(const struct run_outcome *o, FILE *out);

/* DIR/summary.json: the same figures (docs/records.md), and `extra`, when
 * not NULL, as more "key": value lines.  False with one line on report. */
bool outcome_write_json(const struct run_outcome *o, const char *dir, const char *extra,
			FILE *report);

#endif
