/* emulator/sim/sim.h — the discrete-event host: every engine of a topology in
 * one process on one event queue, deterministic and fast; the reference
 * that the emulation is measured against (docs/architecture.md). */
#ifndef EMULATOR_SIM_H
#define EMULATOR_SIM_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "core/outcome.h"
#include "core/time.h"
#include "core/topology.h"

/* Without `until`, a run stops when every message has completed or failed,
 * or at this virtual time at the latest. */
#define SIM_DEFAULT_LIMIT (1 * PS_PER_S)

struct sim_options {
	const char *topology; /* the topology file */
	const char *outdir;   /* NULL: out/<emulation name> */
	bool capture;	      /* pcaps of every port (also `capture = on`) */
	bool seed_set;
	uint64_t seed;			 /* overrides the topology's */
	ps_t until;			 /* 0: the topology's, else until the workload ends */
	bool quiet;			 /* no progress line */
	const char *sets[TOPO_MAX_SETS]; /* --set SECTION.ATTRIBUTE=VALUE */
	int nsets;
	bool report; /* a report will be written: samples.csv at SampleInterval */
};

/* What a run did, for the summary and for tests. */
struct sim_result {
	struct run_outcome o;
	uint64_t events;
	ps_t end;
	bool capped;		/* stopped at SIM_DEFAULT_LIMIT */
	ps_t auto_rtt;		/* the fabric round trip `auto` attributes took, or 0 */
	double cpu_seconds;	/* the whole of sim_run */
	double cpu_run_seconds; /* its events alone: no set-up, records or teardown */
	char outdir[4096];
	bool chakra_done;	   /* a Chakra trace: every node finished */
	ps_t chakra_end;	   /* when its last node finished */
	char chakra_summary[4096]; /* its lines: rank finish times, critical path */
};

/* Run the simulation.  Returns 0 when every message completed verified, 1
 * when some did not (each reported on `report`), 2 on a bad topology or
 * workload (one line on `report`). */
int sim_run(const struct sim_options *o, struct sim_result *r, FILE *report);

/* The short end-of-run summary (docs/cli.md, Command line). */
void sim_print_summary(const struct sim_result *r, FILE *out);

#endif
