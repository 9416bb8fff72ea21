/* emulator/launch/launch_run.h — one `mrcemu run` or `mrcemu up`: its state
 * and what launch.c and the files it is split into (launch_net.c,
 * launch_daemons.c, launch_follow.c, launch_finish.c) call of each other.
 * Not for other rooms. */
#ifndef EMULATOR_LAUNCH_RUN_H
#define EMULATOR_LAUNCH_RUN_H

#include <limits.h>
#include <signal.h>

#include "core/time.h"
#include "launch_impl.h"

#define READY_TIMEOUT_MS  15000 /* daemons answering state=waiting */
#define STOP_TIMEOUT_MS	  30000 /* daemons flushing their records after stop */
#define TERM_TIMEOUT_MS	  3000	/* after SIGTERM, before SIGKILL */
#define SILENT_TIMEOUT_MS 30000 /* a running daemon that answers nothing */
#define POLL_MS		  20	/* status polls while running */
#define QUIET_POLL_MS	  1	/* ... while every daemon was idle (max) */
#define POLL_TIMEOUT_MS	  2000	/* a `status` poll: a busy or stopped daemon may miss one */
/* A command's reply (start, hold, grant, stop, stats, failures, fail): a
 * daemon stopped (SIGSTOP) for a few seconds only slows the run; a dead
 * one closes its socket, which fails the call at once. */
#define CMD_TIMEOUT_MS	SILENT_TIMEOUT_MS
#define CONDUCT_REST_MS 100 /* `up`'s conductor at rest (docs/promises.md, Idle `up`) */

struct daemon {
	const char *prog; /* "nicd", "switchd"; NULL: an external endpoint */
	char ns[128];
	char ctl[LAUNCH_PATH_MAX], log[LAUNCH_PATH_MAX], pidfile[LAUNCH_PATH_MAX];
	bool ns_made;
	pid_t pid;  /* 0: not started */
	int ctl_fd; /* the launcher's connection to its control socket, -1: none */
	bool reaped, stopping;
	int status;
	/* its last `status` reply */
	uint64_t answered_ns;
	char state[16];
	uint64_t vt, sends, sends_total, receives, receives_total, violations, late_max_ns;
	uint64_t floor, busy, done; /* docs/promises.md, One end */
	uint64_t done_wall;	    /* its workload done this long after the epoch (0: not) */
	uint64_t ran;		    /* the time of the last event it ran */
	/* receives that failed there (QPs evicted), and how many of them the
	 * launcher has told their senders (launch_relay_failures) */
	uint64_t rx_failed, rx_relayed;
	/* docs/promises.md, Idle fabrics jump: whether it can do nothing until
	 * a frame or a grant comes, its next event, and per port the frames
	 * it sent and received on the link */
	bool idle;
	uint64_t next;
	uint64_t cmds; /* commands it took that schedule an event (post, port) */
	uint32_t link_tx[TOPO_MAX_PORTS], link_rx[TOPO_MAX_PORTS];
};

struct launch {
	const char *cmd; /* "run" or "up", for messages */
	FILE *report;
	struct topology *t;
	struct workload w;
	struct daemon *d; /* one per node */
	char topology[PATH_MAX], outdir[PATH_MAX], rundir[128];
	char bindir[PATH_MAX];
	bool capture, progress, failed, rundir_made, paused;
	FILE *manifest;		 /* what this emulation made (launch_manifest.c) */
	const char *const *sets; /* --set, passed on to every daemon */
	int nsets;
	bool max; /* --scale max */
	/* A max run is conducted (docs/promises.md, Idle fabrics jump): the
	 * last round of `status` saw every daemon idle and nothing in flight,
	 * with this sum of link counts; every daemon answered it. */
	bool quiet, round_ok;
	uint64_t quiet_sum, grants;
	ps_t granted;	/* the last grant */
	bool conductor; /* this is `up`'s conductor (docs/promises.md, Idle `up`) */
	/* A paced conductor at rest holds at the clock in its status rounds
	 * (`hold G` answers as `status` does): a quiet round of holds lets it
	 * grant up to G at once (launch_follow.c, conduct_up). */
	bool hold, held;
	ps_t hold_at;
	bool started_signal;	     /* `ctl start` started the daemons (SIGUSR1) */
	uint64_t started_ns, run_ns; /* daemons started; wall time to the end */
	ps_t end;		     /* T_end, once the workload is done */
	ps_t until;
	char sample_interval[32]; /* --sample-interval for the daemons, "" = none */
	struct vclock clock;
	sigset_t oldmask;
	int sigfd;
	int signal; /* SIGINT, SIGTERM or SIGHUP received */
};

/* ---- launch.c ---------------------------------------------------------- */

/* One line "mrcemu CMD: ..." on the report; marks the launch failed.
 * Returns 1. */
int launch_fail(struct launch *l, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Wait up to ms (-1: until one comes) for a signal; note an interruption.
 * True if interrupted. */
bool launch_signals_wait(struct launch *l, int ms);

/* ---- launch_net.c ------------------------------------------------------ */

/* Namespaces, veths, TAP ports and mirrors; 1 on failure (reported). */
int launch_net_make(struct launch *l);
/* Delete the namespaces this launch made (their veths go with them). */
void launch_net_delete(struct launch *l);

/* ---- launch_daemons.c -------------------------------------------------- */

/* Which daemon each node runs, and where they are installed. */
int launch_daemons_find(struct launch *l);
/* Start one daemon per node, wait until each waits for start, then start
 * them all at one epoch (not when paused); 1 on failure (reported). */
int launch_daemons_up(struct launch *l);
/* Fail the launch with daemon i's `what` and the end of its log. */
void launch_daemon_report(struct launch *l, int i, const char *what);
/* Reap; true (reported) when a daemon exited before it was told to stop. */
bool launch_daemons_died(struct launch *l);
/* One command to daemon i over the launcher's connection to it (holds and
 * grants come often: launch_ctl_call), waiting up to CMD_TIMEOUT_MS. */
bool launch_daemon_call(struct launch *l, int i, const char *cmd, char *reply, size_t len);
/* Ask daemon i for its `status` (cmd: "status", or `hold G`, which answers
 * the same) into its struct daemon; false if it did not answer one within
 * POLL_TIMEOUT_MS (a poll missed is asked again at the next round). */
bool launch_status_poll(struct launch *l, int i, const char *cmd, char *reply, size_t len);
/* Tell the sending daemons of the receives that failed at daemon i since
 * the last call (`failures`, then `fail` to each sender: docs/control.md);
 * how many were relayed, -1 (reported) when a daemon did not answer. */
int launch_relay_failures(struct launch *l, int i);
/* stop, then SIGTERM, then SIGKILL: every pid we started is gone after. */
void launch_daemons_stop(struct launch *l);
/* 1 (reported) when a daemon exited other than 0 after `stop`. */
int launch_daemons_exits(struct launch *l);

/* ---- launch_follow.c --------------------------------------------------- */

/* Follow the run to its end (l->end, when found); 1 on failure. */
int launch_follow(struct launch *l);
/* The clock's virtual time, or at max the least floor of the daemons. */
ps_t launch_virtual_now(const struct launch *l, uint64_t now);
/* `up`'s conductor: grant idle fabrics until a signal (0: `mrcemu down`)
 * or a daemon dies or does not answer (1, reported). */
int launch_conduct(struct launch *l);

/* ---- launch_finish.c --------------------------------------------------- */

/* Collect, stop, merge and check: the run's result in r. */
int launch_finish(struct launch *l, struct launch_result *r);
/* After an interruption: what the daemons did so far, merged. */
void launch_finish_interrupted(struct launch *l, struct launch_result *r);

#endif
