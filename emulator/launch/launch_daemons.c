/* emulator/launch/launch_daemons.c — the daemons' lifecycle under the
 * launcher (docs/architecture.md, Daemons; the daemon contract): finding
 * nicd and switchd, starting one per node, waiting until each answers
 * state=waiting, one start for all, reaping and reporting the ones that
 * die, and stopping them (stop, then SIGTERM, then SIGKILL). */
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "core/records.h"
#include "launch_run.h"

/* ---- daemons -------------------------------------------------------------- */

static void describe_exit(int status, char *buf, size_t len)
{
	if (WIFSIGNALED(status))
		snprintf(buf, len, "was killed by signal %d (%s)", WTERMSIG(status),
			 strsignal(WTERMSIG(status)));
	else if (WEXITSTATUS(status) == 3)
		snprintf(buf, len,
			 "stopped with exit status 3 (MaxViolations causality "
			 "violations reached)");
	else
		snprintf(buf, len, "exited with status %d", WEXITSTATUS(status));
}

void launch_daemon_report(struct launch *l, int i, const char *what)
{
	struct daemon *d = &l->d[i];
	struct stat st;

	if (stat(d->log, &st) < 0 || !st.st_size) {
		launch_fail(l, "daemon %s (%s, pid %d) %s; its log is empty", l->t->nodes[i].name,
			    d->prog, (int)d->pid, what);
		return;
	}
	launch_fail(l, "daemon %s (%s, pid %d) %s; the end of its log (kept in %s/log/%s.log):",
		    l->t->nodes[i].name, d->prog, (int)d->pid, what, l->outdir,
		    l->t->nodes[i].name);
	launch_log_tail(d->log, 8, l->report);
}

/* Reap what has exited.  Returns the first daemon that exited before it was
 * told to stop, or -1. */
static int reap(struct launch *l)
{
	int died = -1;

	for (int i = 0; i < l->t->nnodes; i++) {
		struct daemon *d = &l->d[i];
		if (d->pid <= 0 || d->reaped || waitpid(d->pid, &d->status, WNOHANG) != d->pid)
			continue;
		d->reaped = true;
		if (!d->stopping && died < 0)
			died = i;
	}
	return died;
}

bool launch_daemons_died(struct launch *l)
{
	int i = reap(l);
	char why[128];

	if (i < 0)
		return false;
	describe_exit(l->d[i].status, why, sizeof(why));
	launch_daemon_report(l, i, why);
	return true;
}

static int alive_count(struct launch *l)
{
	int n = 0;

	for (int i = 0; i < l->t->nnodes; i++)
		n += l->d[i].pid > 0 && !l->d[i].reaped;
	return n;
}

/* Wait until every daemon has exited or ms passed; a signal shortens no
 * wait, since the daemons are flushing their records. */
static void wait_exits(struct launch *l, int ms)
{
	uint64_t end = launch_mono_ns() + (uint64_t)ms * 1000000ULL;

	reap(l);
	while (alive_count(l) && launch_mono_ns() < end) {
		launch_signals_wait(l, 50);
		reap(l);
	}
}

static void signal_all(struct launch *l, int sig)
{
	for (int i = 0; i < l->t->nnodes; i++)
		if (l->d[i].pid > 0 && !l->d[i].reaped)
			kill(l->d[i].pid, sig); /* our own child, not yet reaped */
}

static void send_stop(struct launch *l, int i)
{
	char cmd[96], reply[LAUNCH_REPLY_MAX];

	if (l->d[i].pid <= 0 || l->d[i].reaped || l->d[i].stopping)
		return;
	l->d[i].stopping = true;
	snprintf(cmd, sizeof(cmd), "stop %llu", (unsigned long long)l->end);
	/* The end's stop carries T_end and is waited for; a run that failed
	 * or was interrupted does not wait for a daemon that cannot answer. */
	if (!launch_ctl_send(l->d[i].ctl, l->end ? cmd : "stop", reply, sizeof(reply),
			     l->end ? CMD_TIMEOUT_MS : POLL_TIMEOUT_MS))
		kill(l->d[i].pid, SIGTERM); /* a daemon also flushes on SIGTERM */
}

/* stop, then SIGTERM, then SIGKILL: every pid we started is gone after. */
void launch_daemons_stop(struct launch *l)
{
	for (int i = 0; i < l->t->nnodes; i++) {
		if (l->d[i].ctl_fd >= 0)
			close(l->d[i].ctl_fd);
		l->d[i].ctl_fd = -1;
		send_stop(l, i);
	}
	wait_exits(l, STOP_TIMEOUT_MS);
	if (!alive_count(l))
		return;
	for (int i = 0; i < l->t->nnodes; i++)
		if (l->d[i].pid > 0 && !l->d[i].reaped)
			launch_fail(l, "daemon %s did not stop in %d s; sending SIGTERM",
				    l->t->nodes[i].name, STOP_TIMEOUT_MS / 1000);
	signal_all(l, SIGTERM);
	wait_exits(l, TERM_TIMEOUT_MS);
	signal_all(l, SIGKILL);
	for (int i = 0; i < l->t->nnodes; i++)
		if (l->d[i].pid > 0 && !l->d[i].reaped) {
			waitpid(l->d[i].pid, &l->d[i].status, 0);
			l->d[i].reaped = true;
		}
}

/* ---- finding them --------------------------------------------------------- */

/* The daemon of each node: next to mrcemu (build/), or in the installed
 * tree's libexec/mrcemu/ (docs/architecture.md, Layout). */
int launch_daemons_find(struct launch *l)
{
	char path[PATH_MAX + 32];

	if (!launch_exe_dir(l->bindir, sizeof(l->bindir)))
		return launch_fail(l, "cannot find where mrcemu is installed (/proc/self/exe)");
	snprintf(path, sizeof(path), "%s/../libexec/mrcemu/nicd", l->bindir);
	if (access(path, X_OK) == 0) {
		snprintf(path, sizeof(path), "%s/../libexec/mrcemu", l->bindir);
		if (!realpath(path, l->bindir))
			return launch_fail(l, "%s: %s", path, strerror(errno));
	}
	for (int i = 0; i < l->t->nnodes; i++) {
		enum node_kind k = l->t->nodes[i].kind;
		l->d[i].prog = k == NODE_NIC ? "nicd" : k == NODE_SWITCH ? "switchd" : NULL;
		if (!l->d[i].prog)
			continue;
		snprintf(path, sizeof(path), "%s/%s", l->bindir, l->d[i].prog);
		if (access(path, X_OK) < 0)
			return launch_fail(l, "%s: %s (build it with make, or use mrcemu sim)",
					   path, strerror(errno));
	}
	return 0;
}

/* A daemon that exits other than 0 after `stop` failed to flush. */
int launch_daemons_exits(struct launch *l)
{
	char why[128];
	int rc = 0;

	for (int i = 0; i < l->t->nnodes; i++) {
		int st = l->d[i].status;
		if (l->d[i].pid <= 0 || !l->d[i].reaped || (WIFEXITED(st) && !WEXITSTATUS(st)))
			continue;
		describe_exit(st, why, sizeof(why));
		launch_daemon_report(l, i, why);
		rc = 1;
	}
	return rc;
}
/* ---- daemons: start, ready, go ---------------------------------------------- */

static int daemon_spawn(struct launch *l, int i)
{
	struct daemon *d = &l->d[i];
	char bin[PATH_MAX + 16], err[256];
	const char *argv[14 + 2 * TOPO_MAX_SETS] = {
	    bin,     "--topology", l->topology, "--node", l->t->nodes[i].name,
	    "--ctl", d->ctl,	   "--out",	l->outdir};
	int argc = 9;
	FILE *f;

	if (l->capture)
		argv[argc++] = "--capture";
	if (l->sample_interval[0]) {
		argv[argc++] = "--sample-interval";
		argv[argc++] = l->sample_interval;
	}
	for (int k = 0; k < l->nsets; k++) { /* the daemons see what we see */
		argv[argc++] = "--set";
		argv[argc++] = l->sets[k];
	}
	snprintf(bin, sizeof(bin), "%s/%s", l->bindir, d->prog);
	unlink(d->ctl);
	d->pid = launch_spawn(d->ns, argv, d->log, &l->oldmask, err, sizeof(err));
	if (d->pid < 0) {
		d->pid = 0;
		return launch_fail(l, "starting %s for %s: %s", d->prog, l->t->nodes[i].name, err);
	}
	if (!launch_manifest_add(l->manifest, "daemon %s %s %d", l->t->nodes[i].name, d->prog,
				 (int)d->pid))
		return launch_fail(l, "%s/%s: %s", l->rundir, LAUNCH_MANIFEST, strerror(errno));
	f = records_create(d->pidfile);
	if (!f || fprintf(f, "%d\n", (int)d->pid) < 0 || fclose(f) != 0)
		return launch_fail(l, "%s: %s", d->pidfile, strerror(errno));
	return 0;
}

/* "sends=3/4": both numbers. */
static bool reply_fraction(const char *reply, const char *key, uint64_t *a, uint64_t *b)
{
	char text[64], *end;

	if (!launch_reply_str(reply, key, text, sizeof(text)))
		return false;
	errno = 0;
	*a = strtoull(text, &end, 10);
	if (errno || end == text || *end != '/')
		return false;
	*b = strtoull(end + 1, &end, 10);
	return !errno && !*end;
}

/* idle=, next_ps= and links=TX:RX,... of a `status` reply. */
static void status_links(struct daemon *d, const char *reply)
{
	char text[TOPO_MAX_PORTS * 24], *at = text, *end;
	uint64_t idle = 0;

	d->idle = launch_reply_u64(reply, "idle", &idle) && idle;
	if (!launch_reply_u64(reply, "next_ps", &d->next))
		d->next = PS_NEVER;
	memset(d->link_tx, 0, sizeof(d->link_tx));
	memset(d->link_rx, 0, sizeof(d->link_rx));
	if (!launch_reply_str(reply, "links", text, sizeof(text)))
		return;
	for (int i = 0; i < TOPO_MAX_PORTS && *at; i++) {
		d->link_tx[i] = (uint32_t)strtoul(at, &end, 10);
		if (*end != ':')
			return;
		d->link_rx[i] = (uint32_t)strtoul(end + 1, &end, 10);
		if (*end != ',')
			return;
		at = end + 1;
	}
}

/* A `status` reply into d; false if it is not one. */
static bool status_parse(struct daemon *d, const char *reply)
{
	if (strncmp(reply, "ok ", 3) ||
	    !launch_reply_str(reply, "state", d->state, sizeof(d->state)))
		return false;
	launch_reply_u64(reply, "vt_ps", &d->vt);
	launch_reply_u64(reply, "violations", &d->violations);
	launch_reply_u64(reply, "late_max_ns", &d->late_max_ns);
	launch_reply_u64(reply, "floor_ps", &d->floor);
	launch_reply_u64(reply, "busy_ps", &d->busy);
	launch_reply_u64(reply, "done_ps", &d->done);
	launch_reply_u64(reply, "ran_ps", &d->ran);
	launch_reply_u64(reply, "rx_failed", &d->rx_failed);
	launch_reply_u64(reply, "cmds", &d->cmds);
	launch_reply_u64(reply, "done_wall_ns", &d->done_wall);
	status_links(d, reply);
	if (d->prog && !strcmp(d->prog, "nicd"))
		return reply_fraction(reply, "sends", &d->sends, &d->sends_total) &&
		       reply_fraction(reply, "receives", &d->receives, &d->receives_total);
	return true;
}

bool launch_daemon_call(struct launch *l, int i, const char *cmd, char *reply, size_t len)
{
	return launch_ctl_call(l->d[i].ctl, &l->d[i].ctl_fd, cmd, reply, len, CMD_TIMEOUT_MS);
}

bool launch_status_poll(struct launch *l, int i, const char *cmd, char *reply, size_t len)
{
	struct daemon *d = &l->d[i];

	if (!launch_ctl_call(d->ctl, &d->ctl_fd, cmd, reply, len, POLL_TIMEOUT_MS) ||
	    !status_parse(d, reply))
		return false;
	d->answered_ns = launch_mono_ns();
	return true;
}

/* One SRC:ID:REASON word of `failures`, told to SRC's daemon as `fail`. */
static bool relay_one(struct launch *l, int i, const char *word)
{
	char src[TOPO_NAME_MAX], reason[32], cmd[160], reply[256];
	unsigned long long id;
	int s;

	if (sscanf(word, "%31[A-Za-z0-9_]:%llu:%31s", src, &id, reason) != 3 ||
	    (s = topology_find(l->t, src)) < 0 || l->d[s].pid <= 0 || !l->d[s].prog ||
	    strcmp(l->d[s].prog, "nicd"))
		return true; /* no daemon of ours sent it: nobody to tell */
	snprintf(cmd, sizeof(cmd), "fail %s %llu %s", l->t->nodes[i].name, id, reason);
	if (!launch_ctl_send(l->d[s].ctl, cmd, reply, sizeof(reply), CMD_TIMEOUT_MS))
		return false;
	if (strncmp(reply, "ok", 2))
		fprintf(l->report, "mrcemu: %s: `%s` to %s: %s\n", l->cmd, cmd, src, reply);
	return true;
}

int launch_relay_failures(struct launch *l, int i)
{
	struct daemon *d = &l->d[i];
	char cmd[48], reply[LAUNCH_REPLY_MAX];
	int relayed = 0;
	bool listed = d->rx_relayed < d->rx_failed;

	/* Until a call lists none: asking from N tells the daemon that the
	 * first N reached their senders (it holds its promises until then). */
	while (listed) {
		char *save, *word;
		snprintf(cmd, sizeof(cmd), "failures %llu", (unsigned long long)d->rx_relayed);
		if (!launch_ctl_send(d->ctl, cmd, reply, sizeof(reply), CMD_TIMEOUT_MS) ||
		    strncmp(reply, "ok n=", 5)) {
			launch_daemon_report(l, i, "did not answer `failures`");
			return -1;
		}
		strtok_r(reply, " ", &save); /* ok */
		strtok_r(NULL, " ", &save);  /* n=N */
		listed = false;
		while ((word = strtok_r(NULL, " ", &save))) {
			if (!relay_one(l, i, word)) {
				launch_daemon_report(
				    l, i, "failed receive: its sender did not answer `fail`");
				return -1;
			}
			d->rx_relayed++;
			relayed++;
			listed = true;
		}
	}
	return relayed;
}

static int not_ready(struct launch *l)
{
	for (int i = 0; i < l->t->nnodes; i++)
		if (l->d[i].pid > 0 && strcmp(l->d[i].state, "waiting"))
			launch_daemon_report(l, i,
					     "did not answer `status` with state=waiting in 15 s");
	return 1;
}

/* Every daemon has opened its ports and control socket and waits for start. */
static int daemons_ready(struct launch *l)
{
	uint64_t end = launch_mono_ns() + READY_TIMEOUT_MS * 1000000ULL;
	char reply[LAUNCH_REPLY_MAX];

	for (;;) {
		int want = 0, ready = 0;
		if (launch_signals_wait(l, 0) || launch_daemons_died(l))
			return 1;
		for (int i = 0; i < l->t->nnodes; i++) {
			struct daemon *d = &l->d[i];
			if (d->pid <= 0)
				continue;
			want++;
			if (strcmp(d->state, "waiting") && launch_path_exists(d->ctl) &&
			    launch_status_poll(l, i, "status", reply, sizeof(reply)) &&
			    strcmp(d->state, "waiting"))
				return launch_fail(
				    l, "daemon %s answered `status` with \"%s\" before start",
				    l->t->nodes[i].name, reply);
			ready += !strcmp(d->state, "waiting");
		}
		if (ready == want)
			return 0;
		if (launch_mono_ns() > end)
			return not_ready(l);
		launch_signals_wait(l, 10);
	}
}

/* One epoch a little in the future for all, so every daemon has it before
 * virtual time 0 (docs/architecture.md, Time). */
static int daemons_start(struct launch *l)
{
	char cmd[96], reply[LAUNCH_REPLY_MAX];
	int n = 0;

	for (int i = 0; i < l->t->nnodes; i++)
		n += l->d[i].pid > 0;
	/* At max nothing is paced: the epoch only names the start. */
	l->clock.epoch_ns =
	    launch_mono_ns() +
	    (l->max ? 0 : LAUNCH_EPOCH_LEAD_NS + (uint64_t)n * LAUNCH_EPOCH_PER_DAEMON_NS);
	/* `run` conducts at max (with --until: no event after it), `up`'s
	 * conductor at any scale. */
	if (l->max && l->until && !l->conductor)
		snprintf(cmd, sizeof(cmd), "start %llu max conducted %llu",
			 (unsigned long long)l->clock.epoch_ns, (unsigned long long)l->until);
	else if (l->max)
		snprintf(cmd, sizeof(cmd), "start %llu max conducted",
			 (unsigned long long)l->clock.epoch_ns);
	else
		snprintf(cmd, sizeof(cmd), "start %llu %llu%s",
			 (unsigned long long)l->clock.epoch_ns, (unsigned long long)l->clock.scale,
			 l->conductor ? " conducted" : "");
	for (int i = 0; i < l->t->nnodes; i++) {
		if (l->d[i].pid <= 0)
			continue;
		if (!launch_ctl_send(l->d[i].ctl, cmd, reply, sizeof(reply), CMD_TIMEOUT_MS) ||
		    strncmp(reply, "ok", 2))
			return launch_fail(l, "daemon %s: `%s`: %s", l->t->nodes[i].name, cmd,
					   reply);
		l->d[i].answered_ns = launch_mono_ns();
	}
	l->started_ns = launch_mono_ns();
	return 0;
}

int launch_daemons_up(struct launch *l)
{
	for (int i = 0; i < l->t->nnodes; i++)
		if (l->d[i].prog && (launch_signals_wait(l, 0) || daemon_spawn(l, i)))
			return 1;
	return daemons_ready(l) || (l->paused ? 0 : daemons_start(l));
}
