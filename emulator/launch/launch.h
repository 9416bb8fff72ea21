/* emulator/launch/launch.h — the launcher (docs/architecture.md, Daemons; docs/cli.md):
 * `mrcemu run`, `up`, `down` and `ctl`.  It gives every node
 * of a topology a network namespace and every link a veth pair, starts one
 * nicd or switchd per node in its namespace, starts them all on one epoch
 * and scale, follows them over their control sockets, merges their records
 * and tears everything down on every exit path. */
#ifndef EMULATOR_LAUNCH_H
#define EMULATOR_LAUNCH_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "core/outcome.h"
#include "core/time.h"
#include "core/topology.h"

/* --scale max: no pacing, the daemons run as fast as their promises allow
 * (docs/promises.md). */
#define LAUNCH_SCALE_MAX UINT64_MAX

/* The folder the running program is in, from /proc/self/exe: build/ in the
 * source tree, <prefix>/bin once installed.  False if it cannot be read. */
bool launch_exe_dir(char *buf, size_t len);

/* Where the control sockets, pid files and daemon logs live. */
#define LAUNCH_RUN_ROOT "/run/mrcemu"

struct launch_options {
	const char *topology;		 /* the topology file */
	const char *name;		 /* NULL: the topology's [emulation] name */
	const char *outdir;		 /* NULL: out/<emulation name> */
	bool capture;			 /* pcaps of every port (also `capture = on`) */
	uint64_t scale;			 /* wall ns per virtual ns; 0: the default;
					    LAUNCH_SCALE_MAX: as fast as promises allow */
	ps_t until;			 /* 0: the topology's, else until the workload ends */
	bool quiet;			 /* no progress line */
	bool paused;			 /* up: start nothing until `mrcemu ctl start` */
	const char *sets[TOPO_MAX_SETS]; /* --set SECTION.ATTRIBUTE=VALUE, also given to
					    every daemon */
	int nsets;
	bool report; /* a report will be written: samples.csv at SampleInterval */
};

/* What a run did, for the summary and for tests. */
struct launch_result {
	struct run_outcome o;
	ps_t end;				   /* virtual time when the daemons were stopped */
	uint64_t scale;				   /* LAUNCH_SCALE_MAX: max */
	uint64_t frames, stamped, violations;	   /* over every daemon */
	uint64_t promises, promise_waits, wait_ns; /* over every daemon */
	uint64_t grants;			   /* idle fabrics the launcher granted on (max) */
	uint64_t late_p50_ns, late_p99_ns, late_max_ns; /* the worst daemon's */
	double wall_seconds;
	uint64_t run_ns;	   /* wall time from start to the end of the workload */
	bool merged;		   /* the run ended and its records were merged */
	char chakra_summary[4096]; /* a Chakra workload: nodes finished, rank finish */
	char outdir[4096];
};

/* `mrcemu run`.  Returns 0 when every message completed verified; 1 when
 * some did not, or the run failed (a daemon died or did not answer; each
 * reason one line on `report`); 2 when not root or on a bad topology or
 * workload; 128 + the signal when SIGINT, SIGTERM or SIGHUP ended it.
 * Namespaces, links, daemons and the run folder are gone when it returns. */
int launch_run(const struct launch_options *o, struct launch_result *r, FILE *report);

/* Wall ns per virtual ns from start to the end of the workload: what a run
 * really cost (docs/promises.md). */
double launch_effective_scale(const struct launch_result *r);

/* The end-of-run summary (docs/cli.md, Command line). */
void launch_print_summary(const struct launch_result *r, FILE *out);

/* `mrcemu up`: build and start everything as `run` does, print each node's
 * namespace on `out`, and leave the daemons running.  0, or as launch_run. */
int launch_up(const struct launch_options *o, FILE *out, FILE *report);

/* What `mrcemu down` acts on: one emulation (by name, or the name in a
 * topology file), every stale one, or every one. */
struct launch_down_options {
	const char *topology; /* for its [emulation] name */
	const char *name;     /* overrides it */
	bool stale;	      /* every emulation whose launcher is gone */
	bool all;	      /* every emulation (asks first on a terminal) */
};

/* `mrcemu down`: for each emulation chosen, stop the daemons, delete the
 * namespaces and remove the files its manifest lists, and nothing else;
 * merge its records and keep its daemons' logs in its output folder.  A
 * `run` whose launcher lives is asked to end (SIGTERM).  Idempotent: 0
 * when nothing was running; 2 on bad arguments or not root. */
int launch_down(const struct launch_down_options *o, FILE *out, FILE *report);

/* `mrcemu list`: one line per emulation under LAUNCH_RUN_ROOT. */
int launch_list(FILE *out, FILE *report);

/* `mrcemu ctl`: send one command line to the daemon of `node` (in the
 * emulation `name`, or of `topology`, or the only running emulation with
 * that node: with several, it refuses to guess) and print its reply on
 * `out`.  0 on "ok", 1 on "error", 2 when there is no such daemon, it does
 * not answer, or the node is ambiguous. */
int launch_ctl(const char *topology, const char *name, const char *node, const char *command,
	       FILE *out, FILE *report);

/* `mrcemu ctl start`: start the daemons of an emulation `up --paused` left
 * waiting (of `topology`, or the only paused one) on one epoch.  0, or 2
 * with one line on `report`. */
int launch_start(const char *topology, const char *name, FILE *out, FILE *report);

#endif
