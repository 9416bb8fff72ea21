/* emulator/launch_impl.h — what the launcher's files share: running `ip`,
 * namespaces, daemon processes, the control-socket client (launch_sys.c)
 * and merging the daemons' records (launch_merge.c).  Not for other rooms. */
#ifndef EMULATOR_LAUNCH_IMPL_H
#define EMULATOR_LAUNCH_IMPL_H

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include "launch.h"
#include "outcome.h"
#include "topology.h"
#include "workload.h"

#define LAUNCH_PATH_MAX	 4200
#define LAUNCH_REPLY_MAX 8192

/* ---- launch_sys.c ---------------------------------------------------- */

/* Run iproute2's `ip` with argv (argv[0] is ignored, NULL-terminated), no
 * shell; `mask` is restored in the child.  On failure, one line in err with
 * ip's own message. */
bool launch_ip(const char *const *argv, const sigset_t *mask, char *err, size_t errlen);

/* In network namespace `ns`, write "1" to net.ipv6.conf.{all,default}.
 * disable_ipv6 and to each of ifs[0..nifs-1] (docs/architecture.md: captures hold
 * only emulated traffic). */
bool launch_ns_disable_ipv6(const char *ns, const char *const *ifs, int nifs, const sigset_t *mask,
			    char *err, size_t errlen);

/* Start `ip netns exec NS argv...` with stdin /dev/null, stdout and stderr
 * to `log`, in the folder "/".  detach: a session of its own that outlives
 * us (`up`); else its own process group (so a terminal's ^C reaches only
 * mrcemu, which stops it) and SIGTERM when mrcemu dies.  Returns the pid,
 * or -1 with err filled. */
pid_t launch_spawn(const char *ns, const char *const *argv, const char *log, bool detach,
		   const sigset_t *mask, char *err, size_t errlen);

/* One command line to a control socket, one reply line back (without the
 * newline) within timeout_ms.  False with the reason in reply on failure. */
bool launch_ctl_send(const char *sock, const char *cmd, char *reply, size_t len, int timeout_ms);

/* The value of `key=` in a reply line ("ok state=waiting vt_ps=..."). */
bool launch_reply_u64(const char *reply, const char *key, uint64_t *v);
bool launch_reply_str(const char *reply, const char *key, char *buf, size_t len);

/* Print the last `lines` lines of file `path`, each indented, on out. */
void launch_log_tail(const char *path, int lines, FILE *out);

/* Whether process pid runs a daemon of ours for `node` (by
 * /proc/PID/cmdline: nicd or switchd with --node NODE). */
bool launch_pid_is_daemon(pid_t pid, const char *node);

/* Whether pid exists and is not a zombie. */
bool launch_pid_alive(pid_t pid);

/* Every file in a run folder (sockets, pid files, logs), the folder, and
 * LAUNCH_RUN_ROOT when no other emulation uses it. */
void launch_rundir_remove(const char *rundir);

/* OUTDIR/log/NODE.log: a copy of `log` when it says anything, else none
 * (log NULL: just remove a stale one). */
void launch_log_keep(const char *log, const char *outdir, const char *node);

/* CLOCK_MONOTONIC in ns. */
uint64_t launch_mono_ns(void);

/* The start epoch, ahead of now by a lead and a margin per daemon, so that
 * every daemon has its `start` before the epoch comes. */
#define LAUNCH_EPOCH_LEAD_NS	   50000000ULL
#define LAUNCH_EPOCH_PER_DAEMON_NS 2000000ULL

/* The file in the run folder of an emulation `up --paused` left waiting:
 * it holds the scale to start it at. */
#define LAUNCH_PAUSED_FILE "paused"

/* ---- launch_merge.c -------------------------------------------------- */

struct launch_lateness {
	uint64_t frames, stamped, violations;
	uint64_t promises, promise_waits, wait_ns; /* sums */
	uint64_t late_p50_ns, late_p99_ns, late_max_ns; /* worst daemon */
};

/* Remove the per-node files of t's nodes from dir (stale ones from an
 * earlier run would otherwise be merged). */
void launch_clean_records(const struct topology *t, const char *dir);

/* Merge the daemons' records in dir (driver.h, docs/records.md): messages.csv
 * in the workload's order (as `mrcemu sim` writes it; messages posted over
 * the control socket follow, by id), the time-ordered records sorted by
 * time_ps then node, without rows after T_end (end; 0: all), lateness.csv;
 * then remove the per-node files.  Fills m and lat; false with one line on
 * report on failure. */
bool launch_merge(const struct topology *t, const struct workload *w, const char *dir, ps_t end,
		  struct run_outcome *m, struct launch_lateness *lat, FILE *report);

/* From the merged chakra.csv, the line the simulation prints first: nodes
 * finished and each rank's finish time ("" without a Chakra workload). */
void launch_chakra_summary(const struct topology *t, const char *dir, char *buf, size_t len);

#endif
