/* emulator/launch/launch_impl.h — what the launcher's files share: running `ip`,
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

#include "core/outcome.h"
#include "core/topology.h"
#include "core/workload.h"
#include "launch.h"

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
 * to `log`, in the folder "/", in its own process group (so a terminal's
 * ^C reaches only mrcemu, which stops it), and SIGTERM when mrcemu (`run`,
 * or `up`'s conductor) dies.  Returns the pid, or -1 with err filled. */
pid_t launch_spawn(const char *ns, const char *const *argv, const char *log, const sigset_t *mask,
		   char *err, size_t errlen);

/* One command line to a control socket, one reply line back (without the
 * newline) within timeout_ms.  False with the reason in reply on failure. */
bool launch_ctl_send(const char *sock, const char *cmd, char *reply, size_t len, int timeout_ms);
/* The same over a connection kept open in *fd (-1: none yet), made again
 * once when the daemon closed it; *fd is -1 again after a failure. */
bool launch_ctl_call(const char *sock, int *fd, const char *cmd, char *reply, size_t len,
		     int timeout_ms);

/* The value of `key=` in a reply line ("ok state=waiting vt_ps=..."). */
bool launch_reply_u64(const char *reply, const char *key, uint64_t *v);
bool launch_reply_str(const char *reply, const char *key, char *buf, size_t len);

/* Print the last `lines` lines of file `path`, each indented, on out. */
void launch_log_tail(const char *path, int lines, FILE *out);

/* Whether process pid runs a daemon of ours for `node` (by
 * /proc/PID/cmdline: nicd or switchd with --node NODE, and --ctl CTL unless
 * ctl is NULL). */
bool launch_pid_is_daemon(pid_t pid, const char *node, const char *ctl);

/* Whether pid exists and is not a zombie. */
bool launch_pid_alive(pid_t pid);

/* OUTDIR/log/NODE.log: a copy of `log` when it says anything, else none
 * (log NULL: just remove a stale one). */
void launch_log_keep(const char *log, const char *outdir, const char *node);

/* Whether anything (a file, a link, a socket) is at path. */
bool launch_path_exists(const char *path);

/* CLOCK_MONOTONIC in ns. */
uint64_t launch_mono_ns(void);

/* The start epoch, ahead of now by a lead and a margin per daemon, so that
 * every daemon has its `start` before the epoch comes. */
#define LAUNCH_EPOCH_LEAD_NS	   50000000ULL
#define LAUNCH_EPOCH_PER_DAEMON_NS 2000000ULL

/* The file in the run folder of an emulation `up --paused` left waiting:
 * it holds the scale to start it at. */
#define LAUNCH_PAUSED_FILE "paused"

/* The log of `up`'s conductor in the run folder (docs/promises.md, Idle
 * `up`): empty unless something went wrong. */
#define LAUNCH_CONDUCTOR_LOG "conductor.log"

/* ---- launch_manifest.c: what an emulation created ----------------- */

#define LAUNCH_MANIFEST "manifest"

struct launch_manifest_daemon {
	char node[TOPO_NAME_MAX];
	pid_t pid;
};

struct launch_manifest {
	char rundir[LAUNCH_PATH_MAX];
	char name[TOPO_NAME_MAX], owner[64];
	char topology[LAUNCH_PATH_MAX], outdir[LAUNCH_PATH_MAX];
	bool detachable, detached; /* `up`; and it finished */
	uint64_t scale;
	long long started;
	pid_t launcher;
	unsigned long long launcher_start;
	int nodes;
	char **netns, **files;
	int nnetns, nfiles;
	struct launch_manifest_daemon *daemons;
	int ndaemons;
};

/* Start rundir/manifest (O_EXCL) with what is known before anything is
 * made; NULL with errno on failure. */
FILE *launch_manifest_create(const char *rundir, const char *name, const char *mode,
			     const char *topology, const char *outdir, uint64_t scale, int nodes);
/* Append one line ("netns NAME", "file NAME", "daemon NODE PROG PID",
 * "detached") and flush it. */
bool launch_manifest_add(FILE *f, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Read LAUNCH_RUN_ROOT/<name>/manifest: 1, 0 when there is none, -1 when
 * it is unreadable or lists what mrcemu never writes. */
int launch_manifest_read(const char *name, struct launch_manifest *m);
void launch_manifest_free(struct launch_manifest *m);
bool launch_manifest_launcher_alive(const struct launch_manifest *m);
int launch_manifest_daemons_alive(const struct launch_manifest *m);
bool launch_manifest_stale(const struct launch_manifest *m);
/* Remove the listed files, the manifest, the run folder if now empty, and
 * LAUNCH_RUN_ROOT if now empty. */
void launch_manifest_remove_files(const struct launch_manifest *m);
/* The valid names under LAUNCH_RUN_ROOT, sorted; free with launch_names_free. */
int launch_manifest_names(char ***names);
void launch_names_free(char **names, int n);
unsigned long long launch_pid_starttime(pid_t pid);

/* ---- launch_merge.c -------------------------------------------------- */

struct launch_lateness {
	uint64_t frames, stamped, violations;
	uint64_t promises, promise_waits, wait_ns;	/* sums */
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
