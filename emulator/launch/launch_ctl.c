/* emulator/launch/launch_ctl.c — `mrcemu down`, `list` and `ctl`: dealing with
 * emulations that `mrcemu up` left running, or that a killed launcher left
 * behind, knowing only their names and what their manifests list
 * (launch_manifest.c): nothing else is ever stopped, deleted or removed. */
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "launch.h"
#include "launch_impl.h"

#define DOWN_STOP_MS   30000 /* daemons flushing their records */
#define DOWN_TERM_MS   3000
#define CTL_TIMEOUT_MS 10000
#define DOWN_MAX_PIDS  4096

static bool exists(const char *path)
{
	struct stat st;
	return lstat(path, &st) == 0;
}

static void nap_ms(int ms)
{
	struct timespec ts = {.tv_sec = ms / 1000, .tv_nsec = (long)(ms % 1000) * 1000000L};
	nanosleep(&ts, NULL);
}

/* A daemon of the emulation: its pid, node and control socket. */
struct down_daemon {
	pid_t pid;
	char node[TOPO_NAME_MAX];
	char ctl[LAUNCH_PATH_MAX];
};

static bool still_ours(const struct down_daemon *d)
{
	return d->pid > 1 && launch_pid_is_daemon(d->pid, d->node, d->ctl);
}

/* Wait until none of ds[] runs our daemon any more. */
static void wait_gone(const struct down_daemon *ds, int n, int ms)
{
	for (int waited = 0; waited < ms; waited += 20) {
		bool any = false;
		for (int i = 0; i < n; i++)
			any = any || still_ours(&ds[i]);
		if (!any)
			return;
		nap_ms(20);
	}
}

/* Signal each daemon that is still ours (checked just before, so a
 * recycled pid is never hit). */
static void signal_ours(const struct down_daemon *ds, int n, int sig)
{
	for (int i = 0; i < n; i++)
		if (still_ours(&ds[i]))
			kill(ds[i].pid, sig);
}

/* The daemons the manifest lists that still run, each checked by its
 * command line (program, --node, --ctl in this run folder). */
static int daemons_of(const struct launch_manifest *m, struct down_daemon *ds)
{
	int n = 0;

	for (int i = 0; i < m->ndaemons && n < DOWN_MAX_PIDS; i++) {
		struct down_daemon *d = &ds[n];
		d->pid = m->daemons[i].pid;
		snprintf(d->node, sizeof(d->node), "%s", m->daemons[i].node);
		if (snprintf(d->ctl, sizeof(d->ctl), "%s/%s.ctl", m->rundir, d->node) >=
		    (int)sizeof(d->ctl))
			continue; /* not a path we made */
		n += still_ours(d);
	}
	return n;
}

/* stop, then SIGTERM, then SIGKILL.  Returns how many ran. */
static int stop_daemons(const struct launch_manifest *m)
{
	static struct down_daemon ds[DOWN_MAX_PIDS];
	char reply[LAUNCH_REPLY_MAX];
	int n = daemons_of(m, ds);

	for (int i = 0; i < n; i++)
		if (!launch_ctl_send(ds[i].ctl, "stop", reply, sizeof(reply), 2000))
			kill(ds[i].pid, SIGTERM);
	wait_gone(ds, n, DOWN_STOP_MS);
	signal_ours(ds, n, SIGTERM);
	wait_gone(ds, n, DOWN_TERM_MS);
	signal_ours(ds, n, SIGKILL);
	wait_gone(ds, n, DOWN_TERM_MS);
	return n;
}

static int delete_namespaces(const struct launch_manifest *m, FILE *report)
{
	char path[LAUNCH_PATH_MAX], err[1024];
	sigset_t mask;
	int n = 0;

	sigprocmask(SIG_BLOCK, NULL, &mask);
	for (int i = 0; i < m->nnetns; i++) {
		const char *argv[] = {"ip", "netns", "delete", m->netns[i], NULL};
		snprintf(path, sizeof(path), "/run/netns/%s", m->netns[i]);
		if (!exists(path))
			continue;
		if (launch_ip(argv, &mask, err, sizeof(err)))
			n++;
		else
			fprintf(report, "mrcemu down: %s\n", err);
	}
	return n;
}

/* OUTDIR/log/NODE.log for each daemon log that says something; how many. */
static int keep_logs(const struct launch_manifest *m)
{
	char log[LAUNCH_PATH_MAX + 64], node[TOPO_NAME_MAX + 8], kept[LAUNCH_PATH_MAX + 64];
	int n = 0;

	for (int i = 0; i < m->nfiles; i++) {
		size_t k = strlen(m->files[i]);
		if (k < 5 || k - 4 >= sizeof(node) || strcmp(m->files[i] + k - 4, ".log"))
			continue;
		snprintf(node, sizeof(node), "%.*s", (int)(k - 4), m->files[i]);
		snprintf(log, sizeof(log), "%s/%s", m->rundir, m->files[i]);
		launch_log_keep(log, m->outdir, node);
		snprintf(kept, sizeof(kept), "%s/log/%s.log", m->outdir, node);
		n += exists(kept);
	}
	return n;
}

/* The daemons have flushed their records by now: merge them as `run` does
 * and print the same summary.  False when nothing could be merged. */
static bool merge_records(const struct launch_manifest *m, FILE *out, FILE *report)
{
	char err[TOPO_ERR_MAX];
	struct workload w = {0};
	struct run_outcome o = {0};
	struct launch_lateness lat = {0};
	struct topology *t;
	bool ok;

	if (!m->outdir[0])
		return false;
	if (!(t = topology_load(m->topology, err, sizeof(err)))) {
		fprintf(report, "mrcemu down: cannot merge the records of %s: %s\n", m->name, err);
		return false;
	}
	if (t->workload[0] && !workload_load(t->workload, t, &w, err, sizeof(err)))
		fprintf(report, "mrcemu down: %s\n", err);
	ok = launch_merge(t, &w, m->outdir, 0, &o, &lat, report);
	if (ok) {
		outcome_write_json(&o, m->outdir, NULL, report);
		outcome_print(&o, out);
		fprintf(out, "causality violations: %llu\nrecords: %s/\n",
			(unsigned long long)lat.violations, m->outdir);
	}
	workload_free(&w);
	topology_free(t);
	return ok;
}

/* `up`'s conductor stops its daemons and ends when asked (SIGTERM); the
 * daemons die with it in any case (docs/promises.md, Idle `up`).  Waits
 * for it, then makes sure. */
static void end_conductor(const struct launch_manifest *m)
{
	kill(m->launcher, SIGTERM); /* checked by its start time just before */
	for (int waited = 0; waited < DOWN_STOP_MS + DOWN_TERM_MS; waited += 20) {
		if (!launch_manifest_launcher_alive(m))
			return;
		nap_ms(20);
	}
	if (launch_manifest_launcher_alive(m))
		kill(m->launcher, SIGKILL);
}

/* A launcher still at work (`run`, or an `up` not finished) ends its own
 * emulation, cleanly: ask it, and wait for its run folder to go. */
static int ask_launcher(const struct launch_manifest *m, FILE *out)
{
	fprintf(out, "emulation %s: its launcher (pid %d) is running; asking it to end it\n",
		m->name, (int)m->launcher);
	kill(m->launcher, SIGTERM);
	for (int waited = 0; waited < DOWN_STOP_MS + DOWN_TERM_MS; waited += 50) {
		if (!exists(m->rundir))
			return 0;
		nap_ms(50);
	}
	fprintf(out, "emulation %s: its launcher did not end it in time\n", m->name);
	return 1;
}

static int down_one(const char *name, FILE *out, FILE *report)
{
	struct launch_manifest m;
	int rc = launch_manifest_read(name, &m), daemons, namespaces, logs;
	bool orphan, merged;

	if (rc == 0) {
		fprintf(out, "mrcemu down: nothing is running for emulation %s\n", name);
		return 0;
	}
	if (rc < 0) {
		fprintf(report,
			"mrcemu down: %s/%s/%s: unreadable, or not written by mrcemu; "
			"nothing removed\n",
			LAUNCH_RUN_ROOT, name, LAUNCH_MANIFEST);
		return 1;
	}
	if (!m.detached && launch_manifest_launcher_alive(&m)) {
		rc = ask_launcher(&m, out);
		launch_manifest_free(&m);
		return rc;
	}
	orphan = !m.detached;
	daemons = launch_manifest_daemons_alive(&m);
	if (m.detached && launch_manifest_launcher_alive(&m))
		end_conductor(&m);
	stop_daemons(&m);
	namespaces = delete_namespaces(&m, report);
	fprintf(out, "emulation %s is down: %d daemons stopped, %d namespaces deleted\n", m.name,
		daemons, namespaces);
	merged = merge_records(&m, out, report);
	logs = keep_logs(&m);
	if (orphan)
		fprintf(out, "its launcher (pid %d) was gone: %s; %d daemon logs kept in %s/log/\n",
			(int)m.launcher,
			merged ? "the records its daemons wrote are merged"
			       : "its records could not be merged",
			logs, m.outdir);
	launch_manifest_remove_files(&m);
	launch_manifest_free(&m);
	return 0;
}

static bool need_root(const char *cmd, FILE *report)
{
	if (geteuid() == 0)
		return true;
	fprintf(report, "mrcemu %s: needs root to stop daemons and delete namespaces; use sudo\n",
		cmd);
	return false;
}

/* --all on a terminal: say what, and ask. */
static bool confirm_all(char **names, int n, FILE *out)
{
	char line[16];

	if (!isatty(STDIN_FILENO))
		return true;
	fprintf(out, "mrcemu down --all: stop %d emulations (", n);
	for (int i = 0; i < n; i++)
		fprintf(out, "%s%s", i ? ", " : "", names[i]);
	fprintf(out, "), whoever started them? [y/N] ");
	fflush(out);
	return fgets(line, sizeof(line), stdin) && (line[0] == 'y' || line[0] == 'Y');
}

static int down_many(const struct launch_down_options *o, FILE *out, FILE *report)
{
	char **names;
	int n = launch_manifest_names(&names), rc = 0, done = 0;

	if (o->all && n && !confirm_all(names, n, out)) {
		fprintf(out, "mrcemu down --all: nothing done\n");
		launch_names_free(names, n);
		return 1;
	}
	for (int i = 0; i < n; i++) {
		struct launch_manifest m;
		bool pick = o->all;
		if (!pick && launch_manifest_read(names[i], &m) == 1) {
			pick = launch_manifest_stale(&m);
			launch_manifest_free(&m);
		}
		if (pick) {
			rc |= down_one(names[i], out, report);
			done++;
		}
	}
	if (!done)
		fprintf(out, "mrcemu down: no %s emulation\n", o->all ? "running" : "stale");
	launch_names_free(names, n);
	return rc;
}

int launch_down(const struct launch_down_options *o, FILE *out, FILE *report)
{
	char err[TOPO_ERR_MAX], name[TOPO_NAME_MAX];
	struct topology *t;

	if (!need_root("down", report))
		return 2;
	if (o->stale || o->all)
		return down_many(o, out, report);
	if (o->name) {
		if (!topology_name_check(o->name, true, err, sizeof(err))) {
			fprintf(report, "mrcemu down: %s\n", err);
			return 2;
		}
		return down_one(o->name, out, report);
	}
	if (!(t = topology_load(o->topology, err, sizeof(err)))) {
		fprintf(report, "%s\n", err);
		return 2;
	}
	/* The loader checked the name (at most 31 characters). */
	if (snprintf(name, sizeof(name), "%s", t->emu.name) >= (int)sizeof(name)) {
		topology_free(t);
		return 2;
	}
	topology_free(t);
	return down_one(name, out, report);
}

static void launcher_text(const struct launch_manifest *m, char *buf, size_t len)
{
	if (launch_manifest_launcher_alive(m) && !m->detached)
		snprintf(buf, len, "alive (pid %d)", (int)m->launcher);
	else if (m->detached && launch_manifest_launcher_alive(m))
		snprintf(buf, len, "up, conductor pid %d: %d of %d daemons alive", (int)m->launcher,
			 launch_manifest_daemons_alive(m), m->ndaemons);
	else if (m->detached)
		snprintf(buf, len, "detached (up): %d of %d daemons alive",
			 launch_manifest_daemons_alive(m), m->ndaemons);
	else
		snprintf(buf, len, "gone (pid %d): stale, see mrcemu down --stale",
			 (int)m->launcher);
}

int launch_list(FILE *out, FILE *report)
{
	char **names, started[32], launcher[96];
	int n = launch_manifest_names(&names), shown = 0;

	if (geteuid() != 0 && n)
		fprintf(report, "mrcemu list: run folders are root's; use sudo to see details\n");
	for (int i = 0; i < n; i++) {
		struct launch_manifest m;
		time_t when;
		if (launch_manifest_read(names[i], &m) != 1)
			continue;
		if (!shown++)
			fprintf(out, "%-20s %5s %8s  %-19s  %-12s %s\n", "NAME", "NODES", "SCALE",
				"STARTED", "OWNER", "LAUNCHER");
		when = (time_t)m.started;
		strftime(started, sizeof(started), "%Y-%m-%d %H:%M:%S", localtime(&when));
		launcher_text(&m, launcher, sizeof(launcher));
		fprintf(out, "%-20s %5d %8llu  %-19s  %-12s %s\n", m.name, m.nodes,
			(unsigned long long)m.scale, started, m.owner, launcher);
		launch_manifest_free(&m);
	}
	if (!shown)
		fprintf(out, "no emulation is running\n");
	launch_names_free(names, n);
	return 0;
}

/* /run/mrcemu/<emu>/<node>.ctl: of the named emulation, of the topology's,
 * or of the one running emulation that has this node.  2 with one line
 * when none is, or several are: it never guesses. */
static int find_socket(const char *topology, const char *name, const char *node, char *sock,
		       size_t len, FILE *report)
{
	char err[TOPO_ERR_MAX], path[LAUNCH_PATH_MAX], names[1024] = "";
	struct topology *t;
	struct dirent *e;
	DIR *dir;
	int n = 0;

	if (!topology_name_check(node, false, err, sizeof(err))) {
		fprintf(report, "mrcemu ctl: %s\n", err);
		return 2;
	}
	if (name) {
		if (!topology_name_check(name, true, err, sizeof(err))) {
			fprintf(report, "mrcemu ctl: --name: %s\n", err);
			return 2;
		}
		snprintf(sock, len, "%s/%s/%s.ctl", LAUNCH_RUN_ROOT, name, node);
		return 0;
	}
	if (topology) {
		if (!(t = topology_load(topology, err, sizeof(err)))) {
			fprintf(report, "%s\n", err);
			return 2;
		}
		snprintf(sock, len, "%s/%s/%s.ctl", LAUNCH_RUN_ROOT, t->emu.name, node);
		n = topology_find(t, node) >= 0;
		if (!n)
			fprintf(report, "mrcemu ctl: %s has no node %s\n", topology, node);
		topology_free(t);
		return n ? 0 : 2;
	}
	dir = opendir(LAUNCH_RUN_ROOT);
	while (dir && (e = readdir(dir)) != NULL) {
		if (e->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "%s/%s/%s.ctl", LAUNCH_RUN_ROOT, e->d_name, node);
		if (!exists(path))
			continue;
		if (!n++)
			snprintf(sock, len, "%s", path);
		size_t k = strlen(names);
		if (k + strlen(e->d_name) + 3 < sizeof(names))
			snprintf(names + k, sizeof(names) - k, "%s%.255s", k ? ", " : "",
				 e->d_name);
	}
	if (dir)
		closedir(dir);
	if (n == 1)
		return 0;
	if (n)
		fprintf(report,
			"mrcemu ctl: node %s is in %d emulations (%s); say which with "
			"--name NAME\n",
			node, n, names);
	else
		fprintf(report, "mrcemu ctl: no daemon for node %s is running (see mrcemu up)\n",
			node);
	return 2;
}

/* The run folder of the emulation `up --paused` left waiting: the
 * topology's, or the only one with a LAUNCH_PAUSED_FILE.  2 with one line. */
static int find_paused(const char *topology, const char *name, char *rundir, size_t len,
		       FILE *report)
{
	char err[TOPO_ERR_MAX], path[LAUNCH_PATH_MAX];
	struct topology *t;
	struct dirent *e;
	DIR *dir;
	int n = 0;

	if (name) {
		if (!topology_name_check(name, true, err, sizeof(err))) {
			fprintf(report, "mrcemu ctl start: --name: %s\n", err);
			return 2;
		}
		snprintf(rundir, len, "%s/%s", LAUNCH_RUN_ROOT, name);
		n = snprintf(path, sizeof(path), "%s/" LAUNCH_PAUSED_FILE, rundir) <
			(int)sizeof(path) &&
		    exists(path);
	} else if (topology) {
		if (!(t = topology_load(topology, err, sizeof(err)))) {
			fprintf(report, "%s\n", err);
			return 2;
		}
		snprintf(rundir, len, "%s/%s", LAUNCH_RUN_ROOT, t->emu.name);
		topology_free(t);
		n = snprintf(path, sizeof(path), "%s/" LAUNCH_PAUSED_FILE, rundir) <
			(int)sizeof(path) &&
		    exists(path);
	} else if ((dir = opendir(LAUNCH_RUN_ROOT))) {
		while ((e = readdir(dir)) != NULL) {
			snprintf(path, sizeof(path), "%s/%.255s/" LAUNCH_PAUSED_FILE,
				 LAUNCH_RUN_ROOT, e->d_name);
			if (e->d_name[0] != '.' && exists(path) && !n++)
				snprintf(rundir, len, "%s/%.255s", LAUNCH_RUN_ROOT, e->d_name);
		}
		closedir(dir);
	}
	if (n == 1)
		return 0;
	fprintf(report, "mrcemu ctl start: %s\n",
		n ? "several emulations are paused; say which with --name NAME"
		  : "no paused emulation (see mrcemu up --paused)");
	return 2;
}

/* The scale `up` wrote (0: max), and the control sockets of the run
 * folder; `up`'s conductor grants them idle fabrics (docs/promises.md,
 * Idle `up`). */
static int start_all(const char *rundir, uint64_t scale, FILE *out, FILE *report)
{
	char socks[TOPO_MAX_PORTS * 4][LAUNCH_PATH_MAX], cmd[96], reply[LAUNCH_REPLY_MAX];
	struct dirent *e;
	DIR *dir = opendir(rundir);
	int n = 0;

	while (dir && (e = readdir(dir)) != NULL && n < (int)(sizeof(socks) / sizeof(socks[0]))) {
		size_t k = strlen(e->d_name);
		if (k > 4 && !strcmp(e->d_name + k - 4, ".ctl"))
			snprintf(socks[n++], sizeof(socks[0]), "%s/%.255s", rundir, e->d_name);
	}
	if (dir)
		closedir(dir);
	uint64_t epoch =
	    launch_mono_ns() + LAUNCH_EPOCH_LEAD_NS + (uint64_t)n * LAUNCH_EPOCH_PER_DAEMON_NS;
	if (scale)
		snprintf(cmd, sizeof(cmd), "start %llu %llu conducted", (unsigned long long)epoch,
			 (unsigned long long)scale);
	else
		snprintf(cmd, sizeof(cmd), "start %llu max conducted", (unsigned long long)epoch);
	for (int i = 0; i < n; i++) {
		if (!launch_ctl_send(socks[i], cmd, reply, sizeof(reply), CTL_TIMEOUT_MS) ||
		    strncmp(reply, "ok", 2)) {
			fprintf(report, "mrcemu ctl start: %s: %s\n", socks[i], reply);
			return 2;
		}
	}
	if (scale)
		fprintf(out, "ok started %d daemons at scale %llu\n", n, (unsigned long long)scale);
	else
		fprintf(out, "ok started %d daemons at scale max\n", n);
	return 0;
}

/* `up`'s conductor waits for the daemons to start without asking them
 * anything (paused daemons use no CPU): tell it (docs/promises.md, Idle
 * `up`). */
static void tell_conductor(const char *rundir)
{
	struct launch_manifest m;
	const char *name = strrchr(rundir, '/');

	if (!name || launch_manifest_read(name + 1, &m) != 1)
		return;
	if (m.detached && launch_manifest_launcher_alive(&m))
		kill(m.launcher, SIGUSR1);
	launch_manifest_free(&m);
}

int launch_start(const char *topology, const char *name, FILE *out, FILE *report)
{
	char rundir[LAUNCH_PATH_MAX], path[LAUNCH_PATH_MAX + 16], word[24] = "";
	unsigned long long scale = 0;
	FILE *f;
	int rc = find_paused(topology, name, rundir, sizeof(rundir), report);

	if (rc)
		return rc;
	snprintf(path, sizeof(path), "%s/" LAUNCH_PAUSED_FILE, rundir);
	f = fopen(path, "re");
	if (!f || fscanf(f, "%23s", word) != 1 ||
	    (strcmp(word, "max") && (sscanf(word, "%llu", &scale) != 1 || !scale))) {
		fprintf(report, "mrcemu ctl start: %s: unreadable\n", path);
		if (f)
			fclose(f);
		return 2;
	}
	fclose(f);
	/* Started once: a second `start` finds nothing paused. */
	unlink(path);
	rc = start_all(rundir, scale, out, report);
	if (!rc)
		tell_conductor(rundir);
	return rc;
}

int launch_ctl(const char *topology, const char *name, const char *node, const char *command,
	       FILE *out, FILE *report)
{
	char sock[LAUNCH_PATH_MAX], reply[LAUNCH_REPLY_MAX];
	int rc = find_socket(topology, name, node, sock, sizeof(sock), report);

	if (rc)
		return rc;
	if (!exists(sock)) {
		fprintf(report, "mrcemu ctl: no daemon for node %s is running (no %s)\n", node,
			sock);
		return 2;
	}
	if (!launch_ctl_send(sock, command, reply, sizeof(reply), CTL_TIMEOUT_MS)) {
		fprintf(report, "mrcemu ctl: %s: %s\n", node, reply);
		return 2;
	}
	fprintf(out, "%s\n", reply);
	if (!strncmp(reply, "ok", 2) && (!reply[2] || reply[2] == ' '))
		return 0;
	return 1;
}
