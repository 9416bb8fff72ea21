/* emulator/launch/launch.c — `mrcemu run` and `mrcemu up` (docs/architecture.md,
 * Daemons; the daemon contract): a namespace per node, a veth pair per
 * link, one nicd or switchd per node, one epoch and scale for all, progress
 * over the control sockets, records merged, and teardown on every exit
 * path.  Signals (SIGINT, SIGTERM, SIGHUP, SIGCHLD) are blocked and read
 * from a signalfd, so an interruption or a dying daemon is noticed between
 * two steps and never in the middle of one. */
#include "launch.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include "chakra/chakra.h"
#include "launch_impl.h"
#include "core/link.h"
#include "core/records.h"
#include "host/samples.h"

#define READY_TIMEOUT_MS    15000 /* daemons answering state=waiting */
#define STOP_TIMEOUT_MS	    30000 /* daemons flushing their records after stop */
#define TERM_TIMEOUT_MS	    3000  /* after SIGTERM, before SIGKILL */
#define SILENT_TIMEOUT_MS   30000 /* a running daemon that answers nothing */
#define POLL_MS		    20	  /* status polls while running */
#define QUIET_POLL_MS	    1	  /* ... while every daemon was idle (max) */
#define CTL_TIMEOUT_MS	    2000

struct daemon {
	const char *prog; /* "nicd", "switchd"; NULL: an external endpoint */
	char ns[128];
	char ctl[LAUNCH_PATH_MAX], log[LAUNCH_PATH_MAX], pidfile[LAUNCH_PATH_MAX];
	bool ns_made;
	pid_t pid; /* 0: not started */
	bool reaped, stopping;
	int status;
	/* its last `status` reply */
	uint64_t answered_ns;
	char state[16];
	uint64_t vt, sends, sends_total, receives, receives_total, violations, late_max_ns;
	uint64_t floor, busy, done; /* docs/promises.md, One end */
	/* docs/promises.md, Idle fabrics jump: whether it can do nothing until
	 * a frame or a grant comes, its next event, and per port the frames
	 * it sent and received on the link */
	bool idle;
	uint64_t next;
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
	bool capture, detach, progress, failed, rundir_made, paused;
	FILE *manifest; /* what this emulation made (launch_manifest.c) */
	const char *const *sets; /* --set, passed on to every daemon */
	int nsets;
	bool max; /* --scale max */
	/* A max run is conducted (docs/promises.md, Idle fabrics jump): the
	 * last round of `status` saw every daemon idle and nothing in flight,
	 * with this sum of link counts; every daemon answered it. */
	bool quiet, round_ok;
	uint64_t quiet_sum, grants;
	uint64_t started_ns, run_ns; /* daemons started; wall time to the end */
	ps_t end;		     /* T_end, once the workload is done */
	ps_t until;
	char sample_interval[32]; /* --sample-interval for the daemons, "" = none */
	struct vclock clock;
	sigset_t oldmask;
	int sigfd;
	int signal; /* SIGINT, SIGTERM or SIGHUP received */
};

static int fail(struct launch *l, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static int fail(struct launch *l, const char *fmt, ...)
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

/* Wait up to ms for a signal; note an interruption.  True if interrupted. */
static bool signals_wait(struct launch *l, int ms)
{
	struct pollfd p = {.fd = l->sigfd, .events = POLLIN};
	struct signalfd_siginfo si;

	if (ms > 0)
		poll(&p, 1, ms);
	while (read(l->sigfd, &si, sizeof(si)) == sizeof(si))
		if (si.ssi_signo != SIGCHLD && !l->signal)
			l->signal = (int)si.ssi_signo;
	return l->signal != 0;
}

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

static void report_daemon(struct launch *l, int i, const char *what)
{
	struct daemon *d = &l->d[i];
	struct stat st;

	if (stat(d->log, &st) < 0 || !st.st_size) {
		fail(l, "daemon %s (%s, pid %d) %s; its log is empty", l->t->nodes[i].name, d->prog,
		     (int)d->pid, what);
		return;
	}
	fail(l, "daemon %s (%s, pid %d) %s; the end of its log (kept in %s/log/%s.log):",
	     l->t->nodes[i].name, d->prog, (int)d->pid, what, l->outdir, l->t->nodes[i].name);
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

static bool died_early(struct launch *l)
{
	int i = reap(l);
	char why[128];

	if (i < 0)
		return false;
	describe_exit(l->d[i].status, why, sizeof(why));
	report_daemon(l, i, why);
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
		signals_wait(l, 50);
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
	if (!launch_ctl_send(l->d[i].ctl, l->end ? cmd : "stop", reply, sizeof(reply), CTL_TIMEOUT_MS))
		kill(l->d[i].pid, SIGTERM); /* a daemon also flushes on SIGTERM */
}

/* stop, then SIGTERM, then SIGKILL: every pid we started is gone after. */
static void stop_daemons(struct launch *l)
{
	for (int i = 0; i < l->t->nnodes; i++)
		send_stop(l, i);
	wait_exits(l, STOP_TIMEOUT_MS);
	if (!alive_count(l))
		return;
	for (int i = 0; i < l->t->nnodes; i++)
		if (l->d[i].pid > 0 && !l->d[i].reaped)
			fail(l, "daemon %s did not stop in %d s; sending SIGTERM",
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

/* ---- setting up ------------------------------------------------------------ */

static bool bindir_find(struct launch *l)
{
	char exe[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	char *slash;

	if (n <= 0)
		return false;
	exe[n] = '\0';
	slash = strrchr(exe, '/');
	if (!slash)
		return false;
	*slash = '\0';
	snprintf(l->bindir, sizeof(l->bindir), "%s", exe);
	return true;
}

/* The daemon of each node: next to mrcemu (build/), or in the installed
 * tree's libexec/mrcemu/ (docs/architecture.md, Layout). */
static int daemons_find(struct launch *l)
{
	char path[PATH_MAX + 32];

	if (!bindir_find(l))
		return fail(l, "cannot find where mrcemu is installed (/proc/self/exe)");
	snprintf(path, sizeof(path), "%s/../libexec/mrcemu/nicd", l->bindir);
	if (access(path, X_OK) == 0) {
		snprintf(path, sizeof(path), "%s/../libexec/mrcemu", l->bindir);
		if (!realpath(path, l->bindir))
			return fail(l, "%s: %s", path, strerror(errno));
	}
	for (int i = 0; i < l->t->nnodes; i++) {
		enum node_kind k = l->t->nodes[i].kind;
		l->d[i].prog = k == NODE_NIC ? "nicd" : k == NODE_SWITCH ? "switchd" : NULL;
		if (!l->d[i].prog)
			continue;
		snprintf(path, sizeof(path), "%s/%s", l->bindir, l->d[i].prog);
		if (access(path, X_OK) < 0)
			return fail(l, "%s: %s (build it with make, or use mrcemu sim)", path,
				    strerror(errno));
	}
	return 0;
}

static bool path_exists(const char *path)
{
	struct stat st;
	return lstat(path, &st) == 0;
}

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
			return fail(l,
				    "%s: too long for a control socket; use shorter emulation "
				    "or node names",
				    d->ctl);
		snprintf(path, sizeof(path), "/run/netns/%s", d->ns);
		if (path_exists(path))
			return fail(l,
				    "emulation %s is already up: namespace %s exists (mrcemu down "
				    "%s)",
				    l->t->emu.name, d->ns, l->t->emu.name);
		if (path_exists(d->ctl))
			return fail(l, "emulation %s is already up: %s exists (mrcemu down %s)",
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
		return fail(l, "%s: %s", LAUNCH_RUN_ROOT, strerror(errno));
	if (lstat(LAUNCH_RUN_ROOT, &st) < 0 || !S_ISDIR(st.st_mode) || st.st_uid != 0)
		return fail(l, "%s: not a folder owned by root", LAUNCH_RUN_ROOT);
	if (mkdir(l->rundir, 0700) < 0)
		return errno == EEXIST ? fail(l,
					      "emulation %s is already up, or being started "
					      "(mrcemu list; mrcemu down %s)",
					      l->t->emu.name, l->t->emu.name)
				       : fail(l, "%s: %s", l->rundir, strerror(errno));
	l->rundir_made = true;
	return 0;
}

/* The manifest, with every file the run folder will hold. */
static int manifest_start(struct launch *l)
{
	l->manifest = launch_manifest_create(l->rundir, l->t->emu.name, l->cmd, l->topology,
					     l->outdir, l->clock.scale, l->t->nnodes);
	if (!l->manifest)
		return fail(l, "%s/%s: %s", l->rundir, LAUNCH_MANIFEST, strerror(errno));
	for (int i = 0; i < l->t->nnodes; i++)
		if (l->d[i].prog && !(launch_manifest_add(l->manifest, "file %s.ctl",
							  l->t->nodes[i].name) &&
				      launch_manifest_add(l->manifest, "file %s.pid",
							  l->t->nodes[i].name) &&
				      launch_manifest_add(l->manifest, "file %s.log",
							  l->t->nodes[i].name)))
			return fail(l, "%s/%s: %s", l->rundir, LAUNCH_MANIFEST, strerror(errno));
	return 0;
}

static int dirs_make(struct launch *l, const char *outdir)
{
	char pcap[PATH_MAX + 8];

	if (rundir_take(l))
		return 1;
	if (!records_mkdir(outdir) || !realpath(outdir, l->outdir))
		return fail(l, "%s: %s", outdir, strerror(errno));
	if (manifest_start(l))
		return 1;
	snprintf(pcap, sizeof(pcap), "%s/pcap", l->outdir);
	if (l->capture && !records_mkdir(pcap))
		return fail(l, "%s: %s", pcap, strerror(errno));
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
	l->clock.scale = l->max ? 1 : o->scale ? o->scale : l->t->emu.scale ? l->t->emu.scale : 2000;
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
		return fail(l, "out of memory");
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
	if (daemons_find(l) || names_check(l))
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
		return fail(l, "signalfd: %s", strerror(errno));
	rc = load(l, o);
	return rc ? rc : signals_wait(l, 0) ? 1 : 0;
}

/* ---- namespaces and links --------------------------------------------------- */

static int ip_run(struct launch *l, const char *const *argv)
{
	char err[1024];

	if (launch_ip(argv, &l->oldmask, err, sizeof(err)))
		return 0;
	return fail(l, "%s", err);
}

static void mac_text(const uint8_t *m, char *buf, size_t len)
{
	snprintf(buf, len, "%02x:%02x:%02x:%02x:%02x:%02x", m[0], m[1], m[2], m[3], m[4], m[5]);
}

/* The daemon contract: one namespace per node, "mrc-<emulation>-<node>". */
static int netns_make(struct launch *l)
{
	for (int i = 0; i < l->t->nnodes; i++) {
		const char *argv[] = {"ip", "netns", "add", l->d[i].ns, NULL};
		if (signals_wait(l, 0))
			return 1;
		if (!launch_manifest_add(l->manifest, "netns %s", l->d[i].ns))
			return fail(l, "%s/%s: %s", l->rundir, LAUNCH_MANIFEST, strerror(errno));
		if (ip_run(l, argv))
			return 1;
		l->d[i].ns_made = true;
	}
	return 0;
}

/* One veth pair per link, each end made straight in its node's namespace as
 * p<port>, with the node's MAC and an MTU of 9,000 (docs/architecture.md,
 * Daemons: room for MSS + headers + the 8-byte trailer). */
static int links_make(struct launch *l)
{
	for (int k = 0; k < l->t->nlinks; k++) {
		const struct topo_link *lk = &l->t->links[k];
		char ifa[16], ifb[16], maca[24], macb[24];
		const char *argv[] = {
		    "ip",   "link",    "add",	  ifa,	   "netns",	   l->d[lk->a].ns,
		    "mtu",  "9000",    "address", maca,	   "type",	   "veth",
		    "peer", "name",    ifb,	  "netns", l->d[lk->b].ns, "mtu",
		    "9000", "address", macb,	  NULL};
		/* A TAP end's veth is v<N>: p<N> is its TAP device (taps_make). */
		snprintf(ifa, sizeof(ifa), "%c%d", lk->kind[0] == TOPO_PORT_TAP ? 'v' : 'p',
			 lk->a_port);
		snprintf(ifb, sizeof(ifb), "%c%d", lk->kind[1] == TOPO_PORT_TAP ? 'v' : 'p',
			 lk->b_port);
		mac_text(l->t->nodes[lk->a].mac, maca, sizeof(maca));
		mac_text(l->t->nodes[lk->b].mac, macb, sizeof(macb));
		if (signals_wait(l, 0))
			return 1;
		launch_manifest_add(l->manifest, "link %s %s %s %s", l->d[lk->a].ns, ifa,
				    l->d[lk->b].ns, ifb);
		if (ip_run(l, argv))
			return 1;
	}
	return 0;
}

/* A TAP port (docs/topology.md, Port kinds): the TAP device p<N>, made
 * persistent here for the daemon to attach to, and the link's veth end v<N>,
 * joined both ways by tc mirred redirects, so that what the daemon writes
 * to the TAP leaves on the veth and what arrives there reaches the TAP. */
static int tap_make(struct launch *l, int node, int port)
{
	const char *ns = l->d[node].ns;
	char tap[16];
	const char *add[] = {"ip", "-n", ns, "tuntap", "add", "dev", tap, "mode", "tap", NULL};
	const char *mtu[] = {"ip", "-n", ns, "link", "set", "dev", tap, "mtu", "9000", NULL};

	snprintf(tap, sizeof(tap), "p%d", port);
	return ip_run(l, add) || ip_run(l, mtu);
}

static int tap_join(struct launch *l, int node, int port)
{
	const char *ns = l->d[node].ns;
	char tap[16], veth[16];

	snprintf(tap, sizeof(tap), "p%d", port);
	snprintf(veth, sizeof(veth), "v%d", port);
	for (int dir = 0; dir < 2; dir++) {
		const char *from = dir ? tap : veth, *to = dir ? veth : tap;
		const char *qdisc[] = {"ip", "netns", "exec", ns, "tc", "qdisc", "add",
				       "dev", from, "ingress", NULL};
		/* u32 matching everything: cls_matchall is not in every kernel. */
		const char *redirect[] = {
		    "ip",   "netns",	"exec",	 ns,	 "tc",	   "filter", "add",	"dev",
		    from,   "ingress",	"protocol", "all", "u32", "match", "u32", "0",
		    "0",    "action",	"mirred", "egress", "redirect", "dev", to,	NULL};
		if (ip_run(l, qdisc) || ip_run(l, redirect))
			return 1;
	}
	return 0;
}

/* Every TAP end: made (before ports_up) or joined to its veth (after). */
static int taps_each(struct launch *l, int (*fn)(struct launch *, int, int))
{
	for (int k = 0; k < l->t->nlinks; k++) {
		const struct topo_link *lk = &l->t->links[k];
		if (lk->kind[0] == TOPO_PORT_TAP && (signals_wait(l, 0) || fn(l, lk->a, lk->a_port)))
			return 1;
		if (lk->kind[1] == TOPO_PORT_TAP && (signals_wait(l, 0) || fn(l, lk->b, lk->b_port)))
			return 1;
	}
	return 0;
}

/* No IPv6 (so no router solicitations in the captures), then lo and every
 * port up; no addresses: the kernel would answer UDP 4791 with ICMP. */
static int ports_up(struct launch *l)
{
	char names[2 * TOPO_MAX_PORTS][16], err[512];
	const char *ifs[2 * TOPO_MAX_PORTS];

	for (int i = 0; i < l->t->nnodes; i++) {
		const char *lo[] = {"ip", "-n", l->d[i].ns, "link", "set", "dev", "lo", "up", NULL};
		int n = 0;
		for (int p = 0; p < l->t->nodes[i].nports; p++) {
			snprintf(names[n], sizeof(names[n]), "p%d", p);
			ifs[n] = names[n];
			n++;
			if (topology_port_kind(l->t, i, p) == TOPO_PORT_TAP) {
				snprintf(names[n], sizeof(names[n]), "v%d", p); /* its veth */
				ifs[n] = names[n];
				n++;
			}
		}
		if (signals_wait(l, 0))
			return 1;
		if (!launch_ns_disable_ipv6(l->d[i].ns, ifs, n, &l->oldmask, err, sizeof(err)))
			return fail(l, "%s", err);
		if (ip_run(l, lo))
			return 1;
		for (int p = 0; p < n; p++) {
			const char *up[] = {"ip",  "-n",   l->d[i].ns, "link", "set",
					    "dev", ifs[p], "up",       NULL};
			if (ip_run(l, up))
				return 1;
		}
	}
	return 0;
}

/* A mirror veth per `mirror = PORT -> IFNAME[@NETNS]` (docs/topology.md):
 * m<PORT> in the switch's namespace, where switchd writes the copies,
 * and IFNAME in the user's namespace (or the launcher's), both at MTU 9,000
 * and up; IFNAME gets no IPv6 address, so that nothing but the copies
 * crosses it.  Deleting the switch's namespace deletes the pair. */
static int mirrors_make(struct launch *l)
{
	for (int i = 0; i < l->t->nnodes; i++) {
		const struct topo_node *n = &l->t->nodes[i];
		for (int k = 0; k < n->nmirrors; k++) {
			const struct topo_mirror *m = &n->mirrors[k];
			char sw_if[16];
			const char *ns = m->netns[0] ? m->netns : NULL;
			const char *add[] = {"ip",   "link", "add",  sw_if,	 "netns", l->d[i].ns,
					     "mtu",  "9000", "type", "veth",	 "peer",  "name",
					     m->ifname, "mtu", "9000", ns ? "netns" : NULL, ns, NULL};
			const char *up[] = {"ip", "-n", l->d[i].ns, "link", "set", "dev",
					    sw_if, "up", NULL};
			const char *up_there[] = {"ip",	  "-n",	       ns,     "link",
						  "set",  "dev",       m->ifname, "addrgenmode",
						  "none", "up",	       NULL};
			const char *up_here[] = {"ip",	       "link",	     "set", "dev", m->ifname,
						 "addrgenmode", "none", "up", NULL};
			snprintf(sw_if, sizeof(sw_if), "m%d", m->port);
			if (signals_wait(l, 0) || ip_run(l, add) || ip_run(l, up) ||
			    ip_run(l, ns ? up_there : up_here))
				return 1;
		}
	}
	return 0;
}

static void netns_delete(struct launch *l)
{
	for (int i = 0; i < l->t->nnodes; i++) {
		const char *argv[] = {"ip", "netns", "delete", l->d[i].ns, NULL};
		if (l->d[i].ns_made && !ip_run(l, argv))
			l->d[i].ns_made = false;
	}
}

/* ---- daemons: start, ready, go ---------------------------------------------- */

static int daemon_spawn(struct launch *l, int i)
{
	struct daemon *d = &l->d[i];
	char bin[PATH_MAX + 16], err[256];
	const char *argv[14 + 2 * TOPO_MAX_SETS] = {
	    bin, "--topology", l->topology, "--node", l->t->nodes[i].name,
	    "--ctl", d->ctl, "--out", l->outdir};
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
	d->pid = launch_spawn(d->ns, argv, d->log, l->detach, &l->oldmask, err, sizeof(err));
	if (d->pid < 0) {
		d->pid = 0;
		return fail(l, "starting %s for %s: %s", d->prog, l->t->nodes[i].name, err);
	}
	if (!launch_manifest_add(l->manifest, "daemon %s %s %d", l->t->nodes[i].name, d->prog,
				 (int)d->pid))
		return fail(l, "%s/%s: %s", l->rundir, LAUNCH_MANIFEST, strerror(errno));
	f = records_create(d->pidfile);
	if (!f || fprintf(f, "%d\n", (int)d->pid) < 0 || fclose(f) != 0)
		return fail(l, "%s: %s", d->pidfile, strerror(errno));
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
	status_links(d, reply);
	if (d->prog && !strcmp(d->prog, "nicd"))
		return reply_fraction(reply, "sends", &d->sends, &d->sends_total) &&
		       reply_fraction(reply, "receives", &d->receives, &d->receives_total);
	return true;
}

static bool status_poll(struct launch *l, int i, char *reply, size_t len)
{
	struct daemon *d = &l->d[i];

	if (!launch_ctl_send(d->ctl, "status", reply, len, CTL_TIMEOUT_MS) ||
	    !status_parse(d, reply))
		return false;
	d->answered_ns = launch_mono_ns();
	return true;
}

static int not_ready(struct launch *l)
{
	for (int i = 0; i < l->t->nnodes; i++)
		if (l->d[i].pid > 0 && strcmp(l->d[i].state, "waiting"))
			report_daemon(l, i, "did not answer `status` with state=waiting in 15 s");
	return 1;
}

/* Every daemon has opened its ports and control socket and waits for start. */
static int daemons_ready(struct launch *l)
{
	uint64_t end = launch_mono_ns() + READY_TIMEOUT_MS * 1000000ULL;
	char reply[LAUNCH_REPLY_MAX];

	for (;;) {
		int want = 0, ready = 0;
		if (signals_wait(l, 0) || died_early(l))
			return 1;
		for (int i = 0; i < l->t->nnodes; i++) {
			struct daemon *d = &l->d[i];
			if (d->pid <= 0)
				continue;
			want++;
			if (strcmp(d->state, "waiting") && path_exists(d->ctl) &&
			    status_poll(l, i, reply, sizeof(reply)) && strcmp(d->state, "waiting"))
				return fail(l,
					    "daemon %s answered `status` with \"%s\" before start",
					    l->t->nodes[i].name, reply);
			ready += !strcmp(d->state, "waiting");
		}
		if (ready == want)
			return 0;
		if (launch_mono_ns() > end)
			return not_ready(l);
		signals_wait(l, 10);
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
	l->clock.epoch_ns = launch_mono_ns() +
			    (l->max ? 0 : LAUNCH_EPOCH_LEAD_NS + (uint64_t)n * LAUNCH_EPOCH_PER_DAEMON_NS);
	if (l->max) /* `run` conducts; `up` leaves its daemons alone */
		snprintf(cmd, sizeof(cmd), "start %llu max%s", (unsigned long long)l->clock.epoch_ns,
			 l->detach ? "" : " conducted");
	else
		snprintf(cmd, sizeof(cmd), "start %llu %llu", (unsigned long long)l->clock.epoch_ns,
			 (unsigned long long)l->clock.scale);
	for (int i = 0; i < l->t->nnodes; i++) {
		if (l->d[i].pid <= 0)
			continue;
		if (!launch_ctl_send(l->d[i].ctl, cmd, reply, sizeof(reply), CTL_TIMEOUT_MS) ||
		    strncmp(reply, "ok", 2))
			return fail(l, "daemon %s: `%s`: %s", l->t->nodes[i].name, cmd, reply);
		l->d[i].answered_ns = launch_mono_ns();
	}
	l->started_ns = launch_mono_ns();
	return 0;
}

static int bring_up(struct launch *l)
{
	if (netns_make(l) || links_make(l) || taps_each(l, tap_make) || ports_up(l) ||
	    taps_each(l, tap_join) || mirrors_make(l))
		return 1;
	for (int i = 0; i < l->t->nnodes; i++)
		if (l->d[i].prog && (signals_wait(l, 0) || daemon_spawn(l, i)))
			return 1;
	return daemons_ready(l) || (l->paused ? 0 : daemons_start(l));
}

/* ---- running ------------------------------------------------------------------ */

static bool workload_done(const struct launch *l)
{
	for (int i = 0; i < l->t->nnodes; i++) {
		const struct daemon *d = &l->d[i];
		if (l->t->nodes[i].kind != NODE_NIC)
			continue;
		if (!d->answered_ns || d->sends < d->sends_total || d->receives < d->receives_total)
			return false;
	}
	return true;
}

/* Where the emulation stands: the clock's virtual time, or at max the least
 * a daemon has reached (its floor, docs/promises.md). */
static ps_t virtual_now(const struct launch *l, uint64_t now)
{
	ps_t vt = PS_NEVER;

	if (!l->max)
		return vclock_at(&l->clock, now);
	for (int i = 0; i < l->t->nnodes; i++)
		if (l->d[i].pid > 0 && l->d[i].vt < vt)
			vt = l->d[i].vt;
	return vt == PS_NEVER ? 0 : vt;
}

/* docs/records.md: virtual time, messages done/total, violations, lateness. */
static void progress_line(const struct launch *l, uint64_t now)
{
	uint64_t done = 0, total = 0, violations = 0, late = 0;
	char vt[32], lt[32];

	for (int i = 0; i < l->t->nnodes; i++) {
		done += l->d[i].sends;
		total += l->d[i].sends_total;
		violations += l->d[i].violations;
		late = l->d[i].late_max_ns > late ? l->d[i].late_max_ns : late;
	}
	fprintf(stderr,
		"\rmrcemu run: virtual %s  messages %llu/%llu  violations %llu  late max %s\033[K",
		time_format(virtual_now(l, now), vt, sizeof(vt)), (unsigned long long)done,
		(unsigned long long)total, (unsigned long long)violations,
		time_format(late * PS_PER_NS, lt, sizeof(lt)));
}

static int status_all(struct launch *l, uint64_t now)
{
	char reply[LAUNCH_REPLY_MAX];

	l->round_ok = true;
	for (int i = 0; i < l->t->nnodes; i++) {
		struct daemon *d = &l->d[i];
		if (d->pid <= 0 || status_poll(l, i, reply, sizeof(reply)))
			continue;
		l->round_ok = false;
		/* A busy daemon may miss a poll; one silent this long is stuck. */
		if (now > d->answered_ns + SILENT_TIMEOUT_MS * 1000000ULL) {
			report_daemon(l, i, "has not answered `status` for 30 s");
			return 1;
		}
	}
	return 0;
}

/* max(done, busy) over the daemons: T_end once every floor has passed it
 * (docs/promises.md, One end). */
static ps_t end_bound(const struct launch *l)
{
	ps_t end = 0;

	for (int i = 0; i < l->t->nnodes; i++) {
		const struct daemon *d = &l->d[i];
		if (d->pid <= 0)
			continue;
		end = d->done > end ? d->done : end;
		end = d->busy > end ? d->busy : end;
	}
	return end;
}

/* Every floor has passed end_bound: that is T_end, into l->end. */
static bool end_passed(struct launch *l)
{
	ps_t end = end_bound(l), floor = PS_NEVER;

	for (int i = 0; i < l->t->nnodes; i++)
		if (l->d[i].pid > 0 && l->d[i].floor < floor)
			floor = l->d[i].floor;
	if (floor <= end)
		return false;
	l->end = end;
	return true;
}

/* One end (docs/promises.md): T_end is the last completion plus the drain,
 * the last instant any daemon held a frame or had one in flight; it is
 * known once every daemon's floor has passed it (every event up to it has
 * run).  0 when the daemons do not settle within the stop timeout. */
static ps_t end_find(struct launch *l)
{
	uint64_t give_up = launch_mono_ns() + STOP_TIMEOUT_MS * 1000000ULL;

	for (;;) {
		if (end_passed(l))
			return l->end;
		if (signals_wait(l, 1) || died_early(l) || launch_mono_ns() > give_up ||
		    status_all(l, launch_mono_ns()))
			return 0;
	}
}

/* Every daemon idle and every link's counts the same at both ends (nothing
 * in flight); the sum of all counts, which only grow, in *sum. */
static bool fabric_quiet(const struct launch *l, uint64_t *sum)
{
	*sum = 0;
	if (!l->round_ok)
		return false;
	for (int i = 0; i < l->t->nnodes; i++) {
		const struct daemon *d = &l->d[i];
		const struct topo_node *n = &l->t->nodes[i];
		if (d->pid <= 0)
			continue;
		if (!d->idle)
			return false;
		for (int p = 0; p < n->nports; p++) {
			const struct daemon *peer = &l->d[n->ports[p].peer];
			if (peer->pid > 0 && d->link_tx[p] != peer->link_rx[n->ports[p].peer_port])
				return false;
			*sum += (uint64_t)d->link_tx[p] + d->link_rx[p];
		}
	}
	return true;
}

static int grant_all(struct launch *l, ps_t g)
{
	char cmd[64], reply[LAUNCH_REPLY_MAX];

	snprintf(cmd, sizeof(cmd), "grant %llu", (unsigned long long)g);
	for (int i = 0; i < l->t->nnodes; i++)
		if (l->d[i].pid > 0 &&
		    (!launch_ctl_send(l->d[i].ctl, cmd, reply, sizeof(reply), CTL_TIMEOUT_MS) ||
		     strncmp(reply, "ok", 2)))
			return fail(l, "daemon %s: `%s`: %s", l->t->nodes[i].name, cmd, reply);
	l->grants++;
	l->quiet = false;
	return 0;
}

enum conduct { CONDUCT_ON, CONDUCT_END, CONDUCT_UNTIL, CONDUCT_FAILED };

/* docs/promises.md, Idle fabrics jump: when two rounds of `status` in a row
 * find the fabric quiet and unchanged, nothing more happens until a grant.
 * With the workload done and no event left before max(done, busy), that
 * is T_end and the run is over; otherwise every daemon is granted the
 * earliest next event of any. */
static enum conduct conduct(struct launch *l)
{
	uint64_t sum;
	bool quiet = fabric_quiet(l, &sum), stable = quiet && l->quiet && sum == l->quiet_sum;
	ps_t end = end_bound(l), g = PS_NEVER;

	l->quiet = quiet;
	l->quiet_sum = sum;
	if (!stable)
		return CONDUCT_ON;
	for (int i = 0; i < l->t->nnodes; i++)
		if (l->d[i].pid > 0 && l->d[i].next < g)
			g = l->d[i].next;
	if (workload_done(l) && g >= end) {
		l->end = end;
		return CONDUCT_END;
	}
	if (l->until && g >= l->until)
		return CONDUCT_UNTIL;
	if (g == PS_NEVER) {
		fail(l, "no daemon has an event left, yet messages are still open");
		return CONDUCT_FAILED;
	}
	return grant_all(l, g) ? CONDUCT_FAILED : CONDUCT_ON;
}

/* A max run, conducted: until T_end, `until` or a failure. */
static int follow_max(struct launch *l)
{
	uint64_t next_progress = 0, now;

	for (;;) {
		if (signals_wait(l, l->quiet ? QUIET_POLL_MS : POLL_MS) || died_early(l))
			return 1;
		now = launch_mono_ns();
		if (status_all(l, now))
			return 1;
		if (l->progress && now >= next_progress) {
			progress_line(l, now);
			next_progress = now + 200000000ULL;
		}
		if (workload_done(l) && !l->run_ns)
			l->run_ns = now - l->started_ns;
		if (l->round_ok && workload_done(l) && end_passed(l))
			return 0;
		if (l->until && virtual_now(l, now) >= l->until && !workload_done(l))
			break;
		switch (conduct(l)) {
		case CONDUCT_ON:
			continue;
		case CONDUCT_END:
			return 0;
		case CONDUCT_UNTIL:
			break;
		case CONDUCT_FAILED:
			return 1;
		}
		break;
	}
	l->run_ns = launch_mono_ns() - l->started_ns;
	return 0;
}

/* Until the workload is done (every NIC: sends finished and receives done)
 * or `until` passes, or a daemon dies, or a signal comes. */
static int follow(struct launch *l)
{
	uint64_t next_progress = 0, now;
	int rc = 0;

	if (l->max) {
		rc = follow_max(l);
		if (l->progress)
			fputs("\r\033[K", stderr);
		return rc;
	}
	for (;;) {
		if (signals_wait(l, POLL_MS) || died_early(l)) {
			rc = 1;
			break;
		}
		now = launch_mono_ns();
		if (status_all(l, now)) {
			rc = 1;
			break;
		}
		if (l->progress && now >= next_progress) {
			progress_line(l, now);
			next_progress = now + 200000000ULL;
		}
		if (now >= l->clock.epoch_ns &&
		    (workload_done(l) || (l->until && virtual_now(l, now) >= l->until))) {
			l->run_ns = now - l->clock.epoch_ns;
			if (workload_done(l))
				l->end = end_find(l);
			break;
		}
	}
	if (l->progress)
		fputs("\r\033[K", stderr);
	return rc;
}

/* ---- finishing ------------------------------------------------------------------ */

static uint64_t counter(const char *reply, const char *name)
{
	uint64_t v = 0;

	return launch_reply_u64(reply, name, &v) && v != UINT64_MAX ? v : 0;
}

static uint64_t reply_counter(const void *reply, const char *name)
{
	return counter(reply, name);
}

/* The counters of the summary, summed as sim.c sums them (outcome.c). */
static void stats_collect(struct launch *l, struct launch_result *r)
{
	char reply[LAUNCH_REPLY_MAX];

	for (int i = 0; i < l->t->nnodes; i++) {
		if (l->d[i].pid <= 0 || l->d[i].reaped ||
		    !launch_ctl_send(l->d[i].ctl, "stats", reply, sizeof(reply), CTL_TIMEOUT_MS) ||
		    strncmp(reply, "ok", 2))
			continue;
		if (l->t->nodes[i].kind == NODE_SWITCH) {
			outcome_add_switch(&r->o, reply_counter, reply);
			continue;
		}
		outcome_add_nic(&r->o, reply_counter, reply);
		r->o.failed += counter(reply, "qp_error");
	}
}

/* A daemon that exits other than 0 after `stop` failed to flush. */
static int exits_check(struct launch *l)
{
	char why[128];
	int rc = 0;

	for (int i = 0; i < l->t->nnodes; i++) {
		int st = l->d[i].status;
		if (l->d[i].pid <= 0 || !l->d[i].reaped || (WIFEXITED(st) && !WEXITSTATUS(st)))
			continue;
		describe_exit(st, why, sizeof(why));
		report_daemon(l, i, why);
		rc = 1;
	}
	return rc;
}

/* OUTDIR/summary.json: the summary's figures, and the emulation's own. */
static void summary_json(const struct launch_result *r, FILE *report)
{
	char extra[512];

	snprintf(extra, sizeof(extra),
		 "  \"virtual_end_ps\": %llu,\n  \"scale\": %llu,\n  \"frames\": %llu,\n"
		 "  \"stamped\": %llu,\n  \"causality_violations\": %llu,\n"
		 "  \"late_p50_ns\": %llu,\n  \"late_p99_ns\": %llu,\n  \"late_max_ns\": %llu",
		 (unsigned long long)r->end, (unsigned long long)r->scale,
		 (unsigned long long)r->frames, (unsigned long long)r->stamped,
		 (unsigned long long)r->violations, (unsigned long long)r->late_p50_ns,
		 (unsigned long long)r->late_p99_ns, (unsigned long long)r->late_max_ns);
	outcome_write_json(&r->o, r->outdir, extra, report);
}

/* The daemons have stopped: their records merged into OUTDIR, with the
 * summary's figures in r and OUTDIR/summary.json. */
static int merge(struct launch *l, struct launch_result *r)
{
	struct launch_lateness lat = {0};

	if (!launch_merge(l->t, &l->w, l->outdir, l->end, &r->o, &lat, l->report))
		return 1;
	r->merged = true;
	launch_chakra_summary(l->t, l->outdir, r->chakra_summary, sizeof(r->chakra_summary));
	r->frames = lat.frames;
	r->stamped = lat.stamped;
	r->violations = lat.violations;
	r->promises = lat.promises;
	r->promise_waits = lat.promise_waits;
	r->wait_ns = lat.wait_ns;
	r->grants = l->grants;
	r->late_p50_ns = lat.late_p50_ns;
	r->late_p99_ns = lat.late_p99_ns;
	r->late_max_ns = lat.late_max_ns;
	summary_json(r, l->report);
	return 0;
}

static int finish(struct launch *l, struct launch_result *r)
{
	int rc;

	r->end = l->end ? l->end : virtual_now(l, launch_mono_ns());
	r->run_ns = l->run_ns;
	stats_collect(l, r);
	stop_daemons(l);
	rc = exits_check(l);
	if (merge(l, r))
		return 1;
	if (!rc && (r->o.completed < r->o.messages || r->o.unverified))
		rc =
		    fail(l, "%llu of %llu messages did not complete verified (see %s/messages.csv)",
			 (unsigned long long)(r->o.messages - r->o.completed + r->o.unverified),
			 (unsigned long long)r->o.messages, l->outdir);
	return rc;
}

/* SIGINT, SIGTERM or SIGHUP after the start: what the daemons did so far
 * is still merged and summarised, as `mrcemu down` would. */
static void finish_interrupted(struct launch *l, struct launch_result *r)
{
	if (!l->clock.epoch_ns || r->merged)
		return;
	r->end = l->end ? l->end : virtual_now(l, launch_mono_ns());
	r->run_ns = l->run_ns;
	stats_collect(l, r);
	stop_daemons(l);
	merge(l, r);
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
	stop_daemons(l);
	netns_delete(l);
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
		rc = rc ? rc : follow(&l);
		rc = rc ? rc : finish(&l, r);
	}
	if (l.signal) {
		interrupted(&l);
		finish_interrupted(&l, r);
	}
	teardown(&l);
	if (l.signal)
		rc = 128 + l.signal;
	r->wall_seconds = (double)(launch_mono_ns() - t0) / 1e9;
	release(&l);
	return rc;
}

double launch_effective_scale(const struct launch_result *r)
{
	return r->end ? (double)r->run_ns / ((double)r->end / (double)PS_PER_NS) : 0.0;
}

void launch_print_summary(const struct launch_result *r, FILE *out)
{
	char a[32], b[32], c[32], d[32];

	outcome_print(&r->o, out);
	fputs(r->chakra_summary, out);
	fprintf(out,
		"causality violations: %llu of %llu stamped frames  lateness: p50 %s  p99 %s  "
		"max %s\n",
		(unsigned long long)r->violations, (unsigned long long)r->stamped,
		time_format(r->late_p50_ns * PS_PER_NS, a, 32),
		time_format(r->late_p99_ns * PS_PER_NS, b, 32),
		time_format(r->late_max_ns * PS_PER_NS, c, 32));
	if (r->violations)
		fprintf(out,
			"warning: %llu frames arrived after their virtual arrival time, which "
			"promises should make impossible: this run may differ from mrcemu sim\n",
			(unsigned long long)r->violations);
	fprintf(out,
		"promises: %llu frames sent (%.1f%% of all frames), %llu waits, %.3f s waited, "
		"%llu idle grants\n",
		(unsigned long long)r->promises,
		r->promises + r->stamped ? 100.0 * (double)r->promises / (double)(r->promises + r->stamped)
					 : 0.0,
		(unsigned long long)r->promise_waits, (double)r->wait_ns / 1e9,
		(unsigned long long)r->grants);
	if (r->scale == LAUNCH_SCALE_MAX)
		snprintf(a, sizeof(a), "max");
	else
		snprintf(a, sizeof(a), "%llu", (unsigned long long)r->scale);
	fprintf(out,
		"virtual time: %s  scale: %s  effective scale: %.0f wall ns per virtual ns  wall: "
		"%.3f s\nrecords: %s/\n",
		time_format(r->end, d, 32), a, launch_effective_scale(r), r->wall_seconds, r->outdir);
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

	fprintf(out, "emulation %s is up at scale %llu; records go to %s/\n", l->t->emu.name,
		(unsigned long long)l->clock.scale, l->outdir);
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
		return fail(l, "%s/%s: %s", l->rundir, LAUNCH_MANIFEST, strerror(errno));
	if (!l->paused)
		return 0;
	snprintf(path, sizeof(path), "%s/" LAUNCH_PAUSED_FILE, l->rundir);
	f = fopen(path, "we");
	if (!f || fprintf(f, "%llu\n", (unsigned long long)l->clock.scale) < 0 || fclose(f) != 0)
		return fail(l, "%s: %s", path, strerror(errno));
	return 0;
}

int launch_up(const struct launch_options *o, FILE *out, FILE *report)
{
	struct launch l = {
	    .cmd = "up", .report = report, .sigfd = -1, .detach = true, .paused = o->paused};
	int rc = prepare(&l, o);

	rc = rc ? rc : bring_up(&l);
	rc = rc ? rc : up_note(&l);
	if (!rc && !l.signal) {
		print_up(&l, out);
	} else {
		if (l.signal)
			interrupted(&l);
		teardown(&l);
		if (l.signal)
			rc = 128 + l.signal;
	}
	release(&l);
	return rc;
}
