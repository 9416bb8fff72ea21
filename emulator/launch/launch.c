/* emulator/launch/launch.c — `mrcemu run` and `mrcemu up` (docs/architecture.md,
 * Daemons; the daemon contract): a namespace per node, a veth pair per
 * link, one nicd or switchd per node, one epoch and scale for all, progress
 * over the control sockets, records merged, and teardown on every exit
 * path.  Signals (SIGINT, SIGTERM, SIGHUP, SIGCHLD; SIGUSR1, which `ctl
 * start` sends `up`'s conductor) are blocked and read
 * from a signalfd, so an interruption or a dying daemon is noticed between
 * two steps and never in the middle of one.  The namespaces and links are
 * made in launch_net.c, the daemons started and stopped in
 * launch_daemons.c, followed in launch_follow.c and their records merged
 * and summarised in launch_finish.c; what they share is launch_run.h. */
#include "launch.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include "chakra/chakra.h"
#include "core/link.h"
#include "core/records.h"
#include "host/samples.h"
#include "launch_run.h"

int launch_fail(struct launch *l, const char *fmt, ...)
{
	va_list ap;

	fprintf(l->report, "mrcemu %s: ", l->cmd);
	va_start(ap, fmt);
	vfprintf(l->report, fmt, ap);
	va_end(ap);
	fputc('\n', l->report);
	l->failed = true;
	return 1;
}

/* ---- signals -------------------------------------------------------------- */

static bool signals_block(struct launch *l)
{
	sigset_t set;

	sigemptyset(&set);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGHUP);
	sigaddset(&set, SIGCHLD);
	sigaddset(&set, SIGUSR1);
	if (sigprocmask(SIG_BLOCK, &set, &l->oldmask) < 0)
		return false;
	/* A shell starts background jobs with SIGINT ignored, and an ignored
	 * signal never reaches a signalfd; SIGHUP keeps nohup's choice. */
	signal(SIGINT, SIG_DFL);
	signal(SIGTERM, SIG_DFL);
	l->sigfd = signalfd(-1, &set, SFD_CLOEXEC | SFD_NONBLOCK);
	return l->sigfd >= 0;
}

static void signals_restore(struct launch *l)
{
	if (l->sigfd >= 0)
		close(l->sigfd);
	l->sigfd = -1;
	sigprocmask(SIG_SETMASK, &l->oldmask, NULL);
}

/* Wait up to ms (-1: until one comes) for a signal; note an interruption.
 * True if interrupted. */
bool launch_signals_wait(struct launch *l, int ms)
{
	struct pollfd p = {.fd = l->sigfd, .events = POLLIN};
	struct signalfd_siginfo si;

	if (ms)
		poll(&p, 1, ms);
	while (read(l->sigfd, &si, sizeof(si)) == sizeof(si))
		if (si.ssi_signo == SIGUSR1)
			l->started_signal = true;
		else if (si.ssi_signo != SIGCHLD && !l->signal)
			l->signal = (int)si.ssi_signo;
	return l->signal != 0;
}

/* ---- setting up ------------------------------------------------------------ */

/* A namespace of this emulation already there means an `up` (or a crashed
 * run) is still around; `down` clears it. */
static int names_check(struct launch *l)
{
	char path[LAUNCH_PATH_MAX];

	for (int i = 0; i < l->t->nnodes; i++) {
		struct daemon *d = &l->d[i];
		topology_netns(l->t, i, d->ns, sizeof(d->ns));
		snprintf(d->ctl, sizeof(d->ctl), "%s/%s.ctl", l->rundir, l->t->nodes[i].name);
		snprintf(d->log, sizeof(d->log), "%s/%s.log", l->rundir, l->t->nodes[i].name);
		snprintf(d->pidfile, sizeof(d->pidfile), "%s/%s.pid", l->rundir,
			 l->t->nodes[i].name);
		if (strlen(d->ctl) >= sizeof(((struct sockaddr_un *)0)->sun_path))
			return launch_fail(
			    l,
			    "%s: too long for a control socket; use shorter emulation "
			    "or node names",
			    d->ctl);
		snprintf(path, sizeof(path), "/run/netns/%s", d->ns);
		if (launch_path_exists(path))
			return launch_fail(
			    l,
			    "emulation %s is already up: namespace %s exists (mrcemu down "
			    "%s)",
			    l->t->emu.name, d->ns, l->t->emu.name);
		if (launch_path_exists(d->ctl))
			return launch_fail(l,
					   "emulation %s is already up: %s exists (mrcemu down %s)",
					   l->t->emu.name, d->ctl, l->t->emu.name);
	}
	return 0;
}

/* The run folder is made with mkdir, never reused: who makes it owns the
 * name until `down`, so a second `up` of the name stops here, having made
 * nothing to roll back (launch_manifest.c). */
static int rundir_take(struct launch *l)
{
	struct stat st;

	if (mkdir(LAUNCH_RUN_ROOT, 0755) < 0 && errno != EEXIST)
		return launch_fail(l, "%s: %s", LAUNCH_RUN_ROOT, strerror(errno));
	if (lstat(LAUNCH_RUN_ROOT, &st) < 0 || !S_ISDIR(st.st_mode) || st.st_uid != 0)
		return launch_fail(l, "%s: not a folder owned by root", LAUNCH_RUN_ROOT);
	if (mkdir(l->rundir, 0700) < 0)
		return errno == EEXIST ? launch_fail(l,
						     "emulation %s is already up, or being started "
						     "(mrcemu list; mrcemu down %s)",
						     l->t->emu.name, l->t->emu.name)
				       : launch_fail(l, "%s: %s", l->rundir, strerror(errno));
	l->rundir_made = true;
	return 0;
}

/* The manifest, with every file the run folder will hold. */
static int manifest_start(struct launch *l)
{
	l->manifest = launch_manifest_create(l->rundir, l->t->emu.name, l->cmd, l->topology,
					     l->outdir, l->clock.scale, l->t->nnodes);
	if (!l->manifest)
		return launch_fail(l, "%s/%s: %s", l->rundir, LAUNCH_MANIFEST, strerror(errno));
	for (int i = 0; i < l->t->nnodes; i++)
		if (l->d[i].prog &&
		    !(launch_manifest_add(l->manifest, "file %s.ctl", l->t->nodes[i].name) &&
		      launch_manifest_add(l->manifest, "file %s.pid", l->t->nodes[i].name) &&
		      launch_manifest_add(l->manifest, "file %s.log", l->t->nodes[i].name)))
			return launch_fail(l, "%s/%s: %s", l->rundir, LAUNCH_MANIFEST,
					   strerror(errno));
	if (l->conductor && !launch_manifest_add(l->manifest, "file " LAUNCH_CONDUCTOR_LOG))
		return launch_fail(l, "%s/%s: %s", l->rundir, LAUNCH_MANIFEST, strerror(errno));
	return 0;
}

static int dirs_make(struct launch *l, const char *outdir)
{
	char pcap[PATH_MAX + 8];

	if (rundir_take(l))
		return 1;
	if (!records_mkdir(outdir) || !realpath(outdir, l->outdir))
		return launch_fail(l, "%s: %s", outdir, strerror(errno));
	if (manifest_start(l))
		return 1;
	snprintf(pcap, sizeof(pcap), "%s/pcap", l->outdir);
	if (l->capture && !records_mkdir(pcap))
		return launch_fail(l, "%s: %s", pcap, strerror(errno));
	launch_clean_records(l->t, l->outdir);
	for (int i = 0; i < l->t->nnodes; i++)
		launch_log_keep(NULL, l->outdir, l->t->nodes[i].name);
	return 0;
}

static bool has_external(const struct topology *t)
{
	for (int i = 0; i < t->nnodes; i++)
		if (t->nodes[i].kind == NODE_EXTERNAL)
			return true;
	return false;
}

/* docs/promises.md: `run` goes as fast as the promises allow unless told a
 * scale; `up`, and any run with an external endpoint (which makes no
 * promises, so needs the wall clock), take the topology's scale. */
static int scale_choose(struct launch *l, const struct launch_options *o)
{
	char err[TOPO_ERR_MAX];
	bool ext = has_external(l->t);

	l->max = o->scale == LAUNCH_SCALE_MAX || (!o->scale && !strcmp(l->cmd, "run") && !ext);
	l->clock.scale = l->max		   ? 1
			 : o->scale	   ? o->scale
			 : l->t->emu.scale ? l->t->emu.scale
					   : 2000;
	if (l->max && ext) {
		fprintf(l->report,
			"mrcemu %s: --scale max: %s has an external endpoint, which makes no "
			"promises; give a finite --scale\n",
			l->cmd, o->topology);
		return 2;
	}
	if (!link_lookahead_check(l->t, err, sizeof(err))) {
		fprintf(l->report, "%s\n", err);
		return 2;
	}
	return 0;
}

static int load(struct launch *l, const struct launch_options *o)
{
	char err[TOPO_ERR_MAX], outdir[PATH_MAX];
	int rc;

	l->t = topology_load_set(o->topology, o->sets, o->nsets, err, sizeof(err));
	if (!l->t) {
		fprintf(l->report, "%s\n", err);
		return 2;
	}
	if (o->name && !topology_name_check(o->name, true, err, sizeof(err))) {
		fprintf(l->report, "mrcemu %s: --name: %s\n", l->cmd, err);
		return 2;
	}
	if (o->name)
		snprintf(l->t->emu.name, sizeof(l->t->emu.name), "%s", o->name);
	l->sets = o->sets;
	l->nsets = o->nsets;
	if (l->t->workload[0] && !workload_load(l->t->workload, l->t, &l->w, err, sizeof(err))) {
		fprintf(l->report, "%s\n", err);
		return 2;
	}
	/* Every rank's file, checked before anything starts; each nicd then
	 * reads its own. */
	if (l->t->chakra[0]) {
		struct chakra_trace tr;
		if (!chakra_load(l->t, &tr, err, sizeof(err))) {
			fprintf(l->report, "%s\n", err);
			return 2;
		}
		chakra_free(&tr);
	}
	if (!realpath(o->topology, l->topology)) {
		fprintf(l->report, "%s: %s\n", o->topology, strerror(errno));
		return 2;
	}
	l->d = calloc(l->t->nnodes, sizeof(*l->d));
	if (!l->d)
		return launch_fail(l, "out of memory");
	for (int i = 0; i < l->t->nnodes; i++)
		l->d[i].ctl_fd = -1;
	l->capture = o->capture || l->t->emu.capture;
	l->until = o->until ? o->until : l->t->emu.until;
	ps_t ivl = samples_interval(l->t, &l->w, l->until, o->report);
	if (ivl)
		snprintf(l->sample_interval, sizeof(l->sample_interval), "%llups",
			 (unsigned long long)ivl);
	if ((rc = scale_choose(l, o)))
		return rc;
	snprintf(l->rundir, sizeof(l->rundir), "%s/%s", LAUNCH_RUN_ROOT, l->t->emu.name);
	snprintf(outdir, sizeof(outdir), "%s%s", o->outdir ? "" : "out/",
		 o->outdir ? o->outdir : l->t->emu.name);
	if (launch_daemons_find(l) || names_check(l))
		return 1;
	return dirs_make(l, outdir);
}

/* Root, the topology and workload, the daemons, the folders, the signals. */
static int prepare(struct launch *l, const struct launch_options *o)
{
	int rc;

	if (geteuid() != 0) {
		fprintf(l->report,
			"mrcemu %s: needs root to create network namespaces and veth links; "
			"use sudo, or `mrcemu sim` (no root needed)\n",
			l->cmd);
		return 2;
	}
	if (!signals_block(l))
		return launch_fail(l, "signalfd: %s", strerror(errno));
	rc = load(l, o);
	return rc ? rc : launch_signals_wait(l, 0) ? 1 : 0;
}

static int bring_up(struct launch *l)
{
	return launch_net_make(l) || launch_daemons_up(l);
}

/* ---- tearing down ---------------------------------------------------------------- */

/* The daemons' logs outlive the run folder in OUTDIR/log/ when they say
 * something (warnings, or why a daemon failed). */
static void logs_keep(struct launch *l)
{
	for (int i = 0; l->outdir[0] && i < l->t->nnodes; i++)
		if (l->d[i].pid > 0)
			launch_log_keep(l->d[i].log, l->outdir, l->t->nodes[i].name);
}

/* Only what this run made: its own children, its own namespaces. */
static void teardown(struct launch *l)
{
	if (!l->d)
		return;
	launch_daemons_stop(l);
	launch_net_delete(l);
	logs_keep(l);
	if (l->manifest)
		fclose(l->manifest);
	l->manifest = NULL;
	if (l->rundir_made) {
		struct launch_manifest m;
		if (launch_manifest_read(l->t->emu.name, &m) == 1) {
			launch_manifest_remove_files(&m);
			launch_manifest_free(&m);
		} else {
			rmdir(l->rundir);
		}
	}
}

/* ---- the commands ------------------------------------------------------------------ */

static void release(struct launch *l)
{
	signals_restore(l);
	workload_free(&l->w);
	free(l->d);
	topology_free(l->t);
}

static void interrupted(struct launch *l)
{
	fprintf(l->report,
		"mrcemu %s: interrupted (SIG%s): stopping the daemons, deleting the "
		"namespaces\n",
		l->cmd, sigabbrev_np(l->signal) ? sigabbrev_np(l->signal) : "?");
}

int launch_run(const struct launch_options *o, struct launch_result *r, FILE *report)
{
	struct launch l = {.cmd = "run", .report = report, .sigfd = -1};
	uint64_t t0 = launch_mono_ns();
	int rc;

	memset(r, 0, sizeof(*r));
	rc = prepare(&l, o);
	if (!rc) {
		l.progress = !o->quiet && isatty(2);
		r->scale = l.max ? LAUNCH_SCALE_MAX : l.clock.scale;
		snprintf(r->outdir, sizeof(r->outdir), "%s", l.outdir);
		rc = bring_up(&l);
		rc = rc ? rc : launch_follow(&l);
		rc = rc ? rc : launch_finish(&l, r);
	}
	if (l.signal) {
		interrupted(&l);
		launch_finish_interrupted(&l, r);
	}
	teardown(&l);
	if (l.signal)
		rc = 128 + l.signal;
	r->wall_seconds = (double)(launch_mono_ns() - t0) / 1e9;
	release(&l);
	return rc;
}

/* Each port and what is at its other end: " p0->s0:p1", and each mirror:
 * " m0=>tap0@NETNS". */
static void print_ports(const struct launch *l, const struct topo_node *n, FILE *out)
{
	for (int p = 0; p < n->nports; p++)
		fprintf(out, " p%d->%s:p%d", p, l->t->nodes[n->ports[p].peer].name,
			n->ports[p].peer_port);
	for (int k = 0; k < n->nmirrors; k++)
		fprintf(out, " m%d=>%s%s%s", n->mirrors[k].port, n->mirrors[k].ifname,
			n->mirrors[k].netns[0] ? "@" : "", n->mirrors[k].netns);
}

static void print_up(struct launch *l, FILE *out)
{
	int first = -1;
	char scale[24] = "max";

	if (!l->max)
		snprintf(scale, sizeof(scale), "%llu", (unsigned long long)l->clock.scale);
	fprintf(out, "emulation %s is up at scale %s; records go to %s/\n", l->t->emu.name, scale,
		l->outdir);
	fprintf(out, "  %-10s %-8s %-8s %-24s %s\n", "node", "daemon", "pid", "namespace", "ports");
	for (int i = 0; i < l->t->nnodes; i++) {
		const struct daemon *d = &l->d[i];
		char pid[16];
		snprintf(pid, sizeof(pid), "%d", (int)d->pid);
		fprintf(out, "  %-10s %-8s %-8s %-24s", l->t->nodes[i].name,
			d->prog ? d->prog : "-", d->prog ? pid : "-", d->ns);
		print_ports(l, &l->t->nodes[i], out);
		fputc('\n', out);
		if (first < 0 && l->t->nodes[i].kind == NODE_NIC)
			first = i;
	}
	if (first < 0)
		first = 0;
	fprintf(out, "capture:  ip netns exec %s tcpdump -i p0 -w x.pcap\n", l->d[first].ns);
	fprintf(out, "          (or wireshark -X lua_script:pcap/mrc.lua -k -i p0 in the same "
		     "namespace)\n");
	fprintf(out,
		"control:  mrcemu ctl --name %s %s status   (also: stats, post NODE BYTES, "
		"port N down|up, stop)\n",
		l->t->emu.name, l->t->nodes[first].name);
	if (l->paused)
		fprintf(out, "paused:   nothing runs until mrcemu ctl --name %s start\n",
			l->t->emu.name);
	fprintf(out, "stop:     mrcemu down %s\n", l->t->emu.name);
}

/* `up` is done: its daemons outlive it by design, so its emulation is
 * stale only once they are gone (launch_manifest_stale). */
static int up_note(struct launch *l)
{
	char path[LAUNCH_PATH_MAX + 16];
	FILE *f;
	bool ok = (!l->paused || launch_manifest_add(l->manifest, "file " LAUNCH_PAUSED_FILE)) &&
		  launch_manifest_add(l->manifest, "detached");

	ok = fclose(l->manifest) == 0 && ok;
	l->manifest = NULL;
	if (!ok)
		return launch_fail(l, "%s/%s: %s", l->rundir, LAUNCH_MANIFEST, strerror(errno));
	if (!l->paused)
		return 0;
	snprintf(path, sizeof(path), "%s/" LAUNCH_PAUSED_FILE, l->rundir);
	f = fopen(path, "we");
	if (!f ||
	    (l->max ? fprintf(f, "max\n")
		    : fprintf(f, "%llu\n", (unsigned long long)l->clock.scale)) < 0 ||
	    fclose(f) != 0)
		return launch_fail(l, "%s: %s", path, strerror(errno));
	return 0;
}

/* The emulation is up: the conductor lets go of the terminal (its output
 * goes to the run folder's conductor log from here) and tells `up` so. */
static void conductor_detach(struct launch *l, int ready)
{
	char path[LAUNCH_PATH_MAX + 32];
	unsigned char ok = 0;
	int fd;

	fflush(stdout);
	fflush(stderr);
	snprintf(path, sizeof(path), "%s/" LAUNCH_CONDUCTOR_LOG, l->rundir);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_APPEND | O_CLOEXEC, 0600);
	if (fd >= 0) {
		dup2(fd, 1);
		dup2(fd, 2);
		close(fd);
	}
	fd = open("/dev/null", O_RDWR | O_CLOEXEC);
	if (fd >= 0) {
		dup2(fd, 0);
		close(fd);
	}
	if (chdir("/") < 0)
		(void)0; /* every path it keeps is absolute */
	if (write(ready, &ok, 1) != 1)
		(void)0; /* `up` is gone: nobody to tell */
	close(ready);
}

/* `up`'s conductor, in the child: build and start everything, print what
 * is up, tell `up` (a byte on `ready`: the exit status), then grant idle
 * fabrics until `mrcemu down` (SIGTERM) ends it or a daemon dies, and stop
 * the daemons (`down` deletes the rest). */
static int conductor(const struct launch_options *o, FILE *out, FILE *report, int ready)
{
	struct launch l = {
	    .cmd = "up", .report = report, .sigfd = -1, .conductor = true, .paused = o->paused};
	unsigned char byte;
	int rc;

	setsid(); /* no terminal's signal reaches it, nor its daemons */
	prctl(PR_SET_NAME, "mrcemu-conduct", 0, 0, 0);
	signal(SIGPIPE, SIG_IGN); /* `up` killed meanwhile: the emulation lives on */
	rc = prepare(&l, o);
	l.until = 0; /* `up` runs until `down` */
	rc = rc ? rc : bring_up(&l);
	rc = rc ? rc : up_note(&l);
	if (!rc && !l.signal) {
		print_up(&l, out);
		conductor_detach(&l, ready);
		rc = launch_conduct(&l);
		launch_daemons_stop(&l);
		fflush(stderr);
		release(&l);
		return rc;
	}
	if (l.signal)
		interrupted(&l);
	teardown(&l);
	if (l.signal)
		rc = 128 + l.signal;
	release(&l);
	fflush(out);
	fflush(report);
	byte = (unsigned char)rc;
	if (write(ready, &byte, 1) != 1)
		(void)0; /* `up` is gone: nobody to tell */
	return rc;
}

/* `up` itself waits for its conductor's word, and passes on a signal (^C)
 * meanwhile: the conductor, in a session of its own, is not in the
 * terminal's process group. */
static volatile sig_atomic_t up_child;

static void up_forward(int sig)
{
	if (up_child > 0)
		kill(up_child, sig);
}

static int up_wait(pid_t pid, int ready)
{
	struct sigaction sa = {.sa_handler = up_forward};
	unsigned char rc = 1;
	ssize_t n;
	int status;

	up_child = pid;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	while ((n = read(ready, &rc, 1)) < 0 && errno == EINTR)
		;
	close(ready);
	if (n == 1 && rc == 0)
		return 0;
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	if (n == 1)
		return rc;
	return WIFSIGNALED(status) ? 128 + WTERMSIG(status) : 1; /* died without a word */
}

int launch_up(const struct launch_options *o, FILE *out, FILE *report)
{
	int ready[2];
	pid_t pid;

	fflush(out);
	fflush(report);
	if (pipe2(ready, O_CLOEXEC) < 0) {
		fprintf(report, "mrcemu up: pipe: %s\n", strerror(errno));
		return 1;
	}
	pid = fork();
	if (pid < 0) {
		fprintf(report, "mrcemu up: fork: %s\n", strerror(errno));
		return 1;
	}
	if (pid == 0) {
		int rc;
		close(ready[0]);
		rc = conductor(o, out, report, ready[1]);
		fflush(NULL);
		_exit(rc);
	}
	close(ready[1]);
	return up_wait(pid, ready[0]);
}
