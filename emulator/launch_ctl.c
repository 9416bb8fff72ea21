/* emulator/launch_ctl.c — `mrcemu down` and `mrcemu ctl`: dealing with an
 * emulation that `mrcemu up` left running, or that a crashed run left
 * behind, knowing only the topology file (or a node name) and what the run
 * folder holds (the daemon contract: pid files, control sockets). */
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

static pid_t read_pid(const char *rundir, const char *node)
{
	char path[LAUNCH_PATH_MAX];
	FILE *f;
	int pid = 0;

	snprintf(path, sizeof(path), "%s/%s.pid", rundir, node);
	f = fopen(path, "re");
	if (!f)
		return 0;
	if (fscanf(f, "%d", &pid) != 1 || pid <= 1)
		pid = 0;
	fclose(f);
	return pid;
}

/* Wait until none of pids[] runs our daemon any more. */
static void wait_gone(const struct topology *t, const pid_t *pids, int ms)
{
	for (int waited = 0; waited < ms; waited += 20) {
		bool any = false;
		for (int i = 0; i < t->nnodes; i++)
			any = any || (pids[i] && launch_pid_is_daemon(pids[i], t->nodes[i].name));
		if (!any)
			return;
		nap_ms(20);
	}
}

/* Signal each pid that still runs our daemon (checked just before, so a
 * recycled pid is never hit). */
static void signal_ours(const struct topology *t, const pid_t *pids, int sig)
{
	for (int i = 0; i < t->nnodes; i++)
		if (pids[i] && launch_pid_is_daemon(pids[i], t->nodes[i].name))
			kill(pids[i], sig);
}

/* stop, then SIGTERM, then SIGKILL, by pid file.  Returns how many ran. */
static int stop_daemons(const struct topology *t, const char *rundir, pid_t *pids)
{
	char sock[LAUNCH_PATH_MAX], reply[LAUNCH_REPLY_MAX];
	int n = 0;

	for (int i = 0; i < t->nnodes; i++) {
		pids[i] = read_pid(rundir, t->nodes[i].name);
		if (!pids[i] || !launch_pid_is_daemon(pids[i], t->nodes[i].name)) {
			pids[i] = 0;
			continue;
		}
		n++;
		snprintf(sock, sizeof(sock), "%s/%s.ctl", rundir, t->nodes[i].name);
		if (!launch_ctl_send(sock, "stop", reply, sizeof(reply), 2000))
			kill(pids[i], SIGTERM);
	}
	wait_gone(t, pids, DOWN_STOP_MS);
	signal_ours(t, pids, SIGTERM);
	wait_gone(t, pids, DOWN_TERM_MS);
	signal_ours(t, pids, SIGKILL);
	wait_gone(t, pids, DOWN_TERM_MS);
	return n;
}

/* A namespace of this emulation: "mrc-<emu>-<node>" with no further '-',
 * so "mrc-a-b-h0" of an emulation "a-b" is never taken for one of "a". */
static bool ours(const char *ns, const char *prefix)
{
	size_t n = strlen(prefix);
	return !strncmp(ns, prefix, n) && ns[n] && !strchr(ns + n, '-');
}

static int delete_namespaces(const struct topology *t, FILE *report)
{
	char prefix[128], ns[256], path[LAUNCH_PATH_MAX], err[1024];
	const char *argv[] = {"ip", "netns", "delete", ns, NULL};
	sigset_t mask;
	DIR *dir;
	struct dirent *e;
	int n = 0;

	sigprocmask(SIG_BLOCK, NULL, &mask);
	for (int i = 0; i < t->nnodes; i++) {
		topology_netns(t, i, ns, sizeof(ns));
		snprintf(path, sizeof(path), "/run/netns/%s", ns);
		if (!exists(path))
			continue;
		if (launch_ip(argv, &mask, err, sizeof(err)))
			n++;
		else
			fprintf(report, "mrcemu down: %s\n", err);
	}
	snprintf(prefix, sizeof(prefix), "mrc-%s-", t->emu.name);
	dir = opendir("/run/netns");
	while (dir && (e = readdir(dir)) != NULL) {
		if (!ours(e->d_name, prefix))
			continue;
		snprintf(ns, sizeof(ns), "%s", e->d_name);
		if (launch_ip(argv, &mask, err, sizeof(err)))
			n++;
		else
			fprintf(report, "mrcemu down: %s\n", err);
	}
	if (dir)
		closedir(dir);
	return n;
}

/* `up` noted where the daemons write; they have flushed by now. */
static void merge_records(const struct topology *t, const char *rundir, FILE *out, FILE *report)
{
	char path[LAUNCH_PATH_MAX], outdir[PATH_MAX] = "", err[TOPO_ERR_MAX];
	struct workload w = {0};
	struct run_outcome m = {0};
	struct launch_lateness lat = {0};
	FILE *f;

	snprintf(path, sizeof(path), "%s/outdir", rundir);
	f = fopen(path, "re");
	if (!f)
		return;
	if (!fgets(outdir, sizeof(outdir), f))
		outdir[0] = '\0';
	fclose(f);
	outdir[strcspn(outdir, "\n")] = '\0';
	if (!outdir[0])
		return;
	if (t->workload[0] && !workload_load(t->workload, t, &w, err, sizeof(err)))
		fprintf(report, "mrcemu down: %s\n", err);
	for (int i = 0; i < t->nnodes; i++) {
		snprintf(path, sizeof(path), "%s/%s.log", rundir, t->nodes[i].name);
		launch_log_keep(path, outdir, t->nodes[i].name);
	}
	if (launch_merge(t, &w, outdir, 0, &m, &lat, report))
		fprintf(out,
			"messages: %llu of %llu completed; causality violations: %llu\n"
			"records: %s/\n",
			(unsigned long long)m.completed, (unsigned long long)m.messages,
			(unsigned long long)lat.violations, outdir);
	workload_free(&w);
}

int launch_down(const char *topology, FILE *out, FILE *report)
{
	char err[TOPO_ERR_MAX], rundir[128];
	struct topology *t;
	pid_t *pids;
	int daemons, namespaces;
	bool folder;

	if (geteuid() != 0) {
		fprintf(report, "mrcemu down: needs root to stop daemons and delete namespaces; "
				"use sudo\n");
		return 2;
	}
	t = topology_load(topology, err, sizeof(err));
	if (!t) {
		fprintf(report, "%s\n", err);
		return 2;
	}
	snprintf(rundir, sizeof(rundir), "%s/%s", LAUNCH_RUN_ROOT, t->emu.name);
	pids = calloc(t->nnodes, sizeof(*pids));
	if (!pids) {
		topology_free(t);
		return 1;
	}
	daemons = stop_daemons(t, rundir, pids);
	namespaces = delete_namespaces(t, report);
	folder = exists(rundir);
	if (folder) {
		merge_records(t, rundir, out, report);
		launch_rundir_remove(rundir);
	}
	if (!daemons && !namespaces && !folder)
		fprintf(out, "mrcemu down: nothing is running for emulation %s\n", t->emu.name);
	else
		fprintf(out, "emulation %s is down: %d daemons stopped, %d namespaces deleted\n",
			t->emu.name, daemons, namespaces);
	free(pids);
	topology_free(t);
	return 0;
}

/* /run/mrcemu/<emu>/<node>.ctl: of the topology's emulation, or of the one
 * running emulation that has this node.  2 with one line when none is. */
static int find_socket(const char *topology, const char *node, char *sock, size_t len, FILE *report)
{
	char err[TOPO_ERR_MAX], path[LAUNCH_PATH_MAX], names[1024] = "";
	struct topology *t;
	struct dirent *e;
	DIR *dir;
	int n = 0;

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
			"mrcemu ctl: node %s is in %d emulations (%s); name one with "
			"--topology FILE\n",
			node, n, names);
	else
		fprintf(report, "mrcemu ctl: no daemon for node %s is running (see mrcemu up)\n",
			node);
	return 2;
}

/* The run folder of the emulation `up --paused` left waiting: the
 * topology's, or the only one with a LAUNCH_PAUSED_FILE.  2 with one line. */
static int find_paused(const char *topology, char *rundir, size_t len, FILE *report)
{
	char err[TOPO_ERR_MAX], path[LAUNCH_PATH_MAX];
	struct topology *t;
	struct dirent *e;
	DIR *dir;
	int n = 0;

	if (topology) {
		if (!(t = topology_load(topology, err, sizeof(err)))) {
			fprintf(report, "%s\n", err);
			return 2;
		}
		snprintf(rundir, len, "%s/%s", LAUNCH_RUN_ROOT, t->emu.name);
		topology_free(t);
		snprintf(path, sizeof(path), "%s/" LAUNCH_PAUSED_FILE, rundir);
		n = exists(path);
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
		n ? "several emulations are paused; name one with --topology FILE"
		  : "no paused emulation (see mrcemu up --paused)");
	return 2;
}

/* The scale `up` wrote, and the control sockets of the run folder. */
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
	snprintf(cmd, sizeof(cmd), "start %llu %llu", (unsigned long long)epoch,
		 (unsigned long long)scale);
	for (int i = 0; i < n; i++) {
		if (!launch_ctl_send(socks[i], cmd, reply, sizeof(reply), CTL_TIMEOUT_MS) ||
		    strncmp(reply, "ok", 2)) {
			fprintf(report, "mrcemu ctl start: %s: %s\n", socks[i], reply);
			return 2;
		}
	}
	fprintf(out, "ok started %d daemons at scale %llu\n", n, (unsigned long long)scale);
	return 0;
}

int launch_start(const char *topology, FILE *out, FILE *report)
{
	char rundir[LAUNCH_PATH_MAX], path[LAUNCH_PATH_MAX + 16];
	unsigned long long scale = 0;
	FILE *f;
	int rc = find_paused(topology, rundir, sizeof(rundir), report);

	if (rc)
		return rc;
	snprintf(path, sizeof(path), "%s/" LAUNCH_PAUSED_FILE, rundir);
	f = fopen(path, "re");
	if (!f || fscanf(f, "%llu", &scale) != 1 || !scale) {
		fprintf(report, "mrcemu ctl start: %s: unreadable\n", path);
		if (f)
			fclose(f);
		return 2;
	}
	fclose(f);
	/* Started once: a second `start` finds nothing paused. */
	unlink(path);
	return start_all(rundir, scale, out, report);
}

int launch_ctl(const char *topology, const char *node, const char *command, FILE *out, FILE *report)
{
	char sock[LAUNCH_PATH_MAX], reply[LAUNCH_REPLY_MAX];
	int rc = find_socket(topology, node, sock, sizeof(sock), report);

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
