/* emulator/launch/mrcemu.c — the mrcemu command line (docs/cli.md): sim, run, up,
 * down, ctl, attributes.  run/up/down/ctl are the launcher (launch.h). */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "chakra/chakra_export.h"
#include "core/config.h"
#include "import.h"
#include "launch.h"
#include "core/records.h"
#include "report.h"
#include "sim/sim.h"
#include "core/time.h"

#define DEFAULT_TOPOLOGY "configs/default.ini"
#ifndef MRCEMU_VERSION
#define MRCEMU_VERSION "unknown"
#endif

/* Where an installed mrcemu keeps its data: <prefix>/share/mrcemu, found
 * from /proc/self/exe (<prefix>/bin/mrcemu), so a tree moved elsewhere
 * still works.  False when mrcemu is not installed (build/). */
static bool exe_dir(char *buf, size_t len)
{
	char exe[PATH_MAX], *slash;
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);

	if (n <= 0)
		return false;
	exe[n] = '\0';
	if (!(slash = strrchr(exe, '/')))
		return false;
	*slash = '\0';
	snprintf(buf, len, "%s", exe);
	return true;
}

static bool share_dir(char *buf, size_t len)
{
	char dir[PATH_MAX];

	if (!exe_dir(dir, sizeof(dir)))
		return false;
	if (snprintf(buf, len, "%s/../share/mrcemu", dir) >= (int)len)
		return false;
	return access(buf, R_OK | X_OK) == 0;
}

/* A topology argument: the file as given when it exists; else, for an
 * installed mrcemu, the one of that name among its configs (so `mrcemu sim`
 * and `mrcemu sim incast-8.ini` work from any folder). */
static const char *topology_path(const char *arg)
{
	static char found[PATH_MAX + 64];
	char share[PATH_MAX];
	const char *base = strrchr(arg, '/') ? strrchr(arg, '/') + 1 : arg;

	if (access(arg, F_OK) == 0 || !share_dir(share, sizeof(share)))
		return arg;
	if (strchr(arg, '/') && strncmp(arg, "configs/", 8))
		return arg;
	snprintf(found, sizeof(found), "%s/configs/%s", share, base);
	return access(found, F_OK) == 0 ? found : arg;
}

static const char usage_main[] =
    "Usage: mrcemu COMMAND [OPTIONS]\n"
    "\n"
    "A packet-level emulator of the MRC (Multipath Reliable Connection) transport.\n"
    "\n"
    "Commands:\n"
    "  sim [TOPOLOGY.ini]     run the topology as a deterministic single-process simulation\n"
    "  run [TOPOLOGY.ini]     run it as nicd/switchd daemons over veth links (root)\n"
    "  up TOPOLOGY.ini        build namespaces and links, start the daemons, wait\n"
    "  down NAME|TOPOLOGY.ini stop an emulation, delete what it created (--stale, --all)\n"
    "  list                   the emulations running on this machine\n"
    "  ctl NODE COMMAND...    send a control command to a running daemon\n"
    "  report OUTDIR [OUTDIR2] draw a run's records as a page (or compare two runs)\n"
    "  attributes             list every attribute with its default and range\n"
    "  export FORMAT          the topology's workload as Chakra traces or as CSV\n"
    "  import htsim TOPO CM -o DIR  an htsim scenario as a topology and workload\n"
    "  wireshark-plugin       install the MRC dissector for this user\n"
    "\n"
    "Options: --help, --version.\n"
    "\n"
    "`mrcemu COMMAND --help` describes each command; man mrcemu, and the pages in\n"
    "docs/, say more.  With no topology, sim and run use " DEFAULT_TOPOLOGY ", or\n"
    "the one installed in <prefix>/share/mrcemu/configs/.\n";

/* --set, shared by sim, run and up (docs/cli.md, Sweeps). */
#define SET_HELP                                                                                  \
	"      --set SECTION.ATTRIBUTE=VALUE\n"                                                    \
	"                     override an attribute after the file: SECTION is emulation,\n"     \
	"                     nic, switch or link, and the value applies to [emulation] or\n"    \
	"                     to every NIC, switch or link (e.g. --set nic.MSS=2048); up\n"      \
	"                     to 32, in order; for sweeps without editing the file\n"

static const char usage_sim[] =
    "Usage: mrcemu sim [TOPOLOGY.ini] [-o OUTDIR] [--capture] [--seed N] [--until TIME]\n"
    "                  [--set SECTION.ATTRIBUTE=VALUE]... [-q] [--report]\n"
    "\n"
    "Run every NIC and switch of TOPOLOGY.ini in one process on a discrete-event clock,\n"
    "with the workload the file names.  Deterministic: two runs write byte-identical\n"
    "records.  No root needed.\n"
    "\n"
    "Options:\n"
    "  -o, --out OUTDIR   where records go (default out/<emulation name>)\n"
    "  -c, --capture      write OUTDIR/pcap/NODE-PORT.pcap for every port, nanosecond\n"
    "                     timestamps in virtual time (open with wireshark -X\n"
    "                     lua_script:pcap/mrc.lua)\n"
    "  -s, --seed N       the random seed (overrides [emulation] seed)\n"
    "  -u, --until TIME   stop at this virtual time (e.g. 10ms); default: when every\n"
    "                     message has completed or failed, or at 1 s at the latest\n"
    SET_HELP
    "  -q, --quiet        no summary\n"
    "  -r, --report       also sample queues, goodput and windows (samples.csv at\n"
    "                     SampleInterval) and write OUTDIR/report/index.html\n"
    "                     (mrcemu report --help)\n"
    "  -h, --help         this text\n"
    "\n"
    "Records (docs/records.md): messages.csv, mrc-transport-stats.csv, and with their\n"
    "attributes mrc-events.csv, mrc-monitor.csv, mrc-cc.csv, switch-stats.csv,\n"
    "samples.csv; with a Chakra workload ([workload] chakra, docs/chakra.md)\n"
    "chakra.csv.\n"
    "\n"
    "Exit status: 0 every message completed with its bytes verified; 1 some did not\n"
    "(each is reported with the reason); 2 bad arguments or a bad topology or workload.\n";

static const char usage_attributes[] =
    "Usage: mrcemu attributes\n"
    "\n"
    "Print every attribute a topology file may set, by section ([emulation], [nic],\n"
    "[switch], [link]), with its type and unit, default, allowed range and meaning.\n";

/* The command's arguments, for naming a bad option. */
static int cmd_argc;
static char **cmd_argv;

/* getopt's own complaints are off: each bad argument gets our one line. */
/* --until: a time the frames' 48-bit arrival stamp can carry (ARCHITECTURE
 * in docs/architecture.md, the trailer): at most 281 s of virtual time. */
static bool until_parse(const char *s, ps_t *until, char *err, size_t len)
{
	if (!time_parse(s, until, err, len))
		return false;
	if (*until > MRCEMU_MAX_RUN) {
		snprintf(err, len, "--until: %s is past the longest run (allowed: up to 281s)", s);
		return false;
	}
	return true;
}

static int bad_option(const char *cmd)
{
	const char *arg = optind - 1 < cmd_argc ? cmd_argv[optind - 1] : "?";

	fprintf(stderr, "mrcemu %s: %s: unknown option or missing value (see mrcemu %s --help)\n",
		cmd, arg, cmd);
	return 2;
}

static int bad_usage(const char *cmd, const char *msg)
{
	fprintf(stderr, "mrcemu %s: %s (see mrcemu %s --help)\n", cmd, msg, cmd);
	return 2;
}

static bool add_set(const char **sets, int *n, const char *arg)
{
	if (*n == TOPO_MAX_SETS)
		return false;
	sets[(*n)++] = arg;
	return true;
}

static int cmd_sim(int argc, char **argv)
{
	static const struct option opts[] = {{"out", required_argument, NULL, 'o'},
					     {"capture", no_argument, NULL, 'c'},
					     {"seed", required_argument, NULL, 's'},
					     {"until", required_argument, NULL, 'u'},
					     {"set", required_argument, NULL, 'X'},
					     {"quiet", no_argument, NULL, 'q'},
					     {"report", no_argument, NULL, 'r'},
					     {"help", no_argument, NULL, 'h'},
					     {NULL, 0, NULL, 0}};
	struct sim_options o = {.topology = DEFAULT_TOPOLOGY};
	struct sim_result r;
	char err[256], *end;
	int c, rc;

	while ((c = getopt_long(argc, argv, "o:cs:u:qrh", opts, NULL)) != -1) {
		switch (c) {
		case 'o':
			o.outdir = optarg;
			break;
		case 'c':
			o.capture = true;
			break;
		case 's':
			errno = 0;
			o.seed = strtoull(optarg, &end, 0);
			if (errno || *end || !*optarg || optarg[0] == '-')
				return bad_usage("sim",
						 "--seed: not a whole number (allowed: 0..2^64-1)");
			o.seed_set = true;
			break;
		case 'u':
			if (!until_parse(optarg, &o.until, err, sizeof(err)))
				return bad_usage("sim", err);
			break;
		case 'q':
			o.quiet = true;
			break;
		case 'X':
			if (!add_set(o.sets, &o.nsets, optarg))
				return bad_usage("sim", "--set: more than 32 (allowed: at most 32)");
			break;
		case 'r':
			o.report = true;
			break;
		case 'h':
			fputs(usage_sim, stdout);
			return 0;
		default:
			return bad_option("sim");
		}
	}
	if (optind < argc)
		o.topology = argv[optind++];
	if (optind < argc)
		return bad_usage("sim", "one topology file at most");
	o.topology = topology_path(o.topology);
	rc = sim_run(&o, &r, stderr);
	if (rc != 2 && !o.quiet)
		sim_print_summary(&r, stdout);
	if (rc != 2 && o.report && report_write(r.outdir, NULL, NULL, o.quiet, stderr))
		rc = rc ? rc : 1;
	return rc;
}

static const char usage_report[] =
    "Usage: mrcemu report OUTDIR [OUTDIR2] [-o DIR] [-q]\n"
    "\n"
    "Draw the records of the run in OUTDIR as one page, OUTDIR/report/index.html: the\n"
    "run's summary and its figures (completion times, a timeline of every message,\n"
    "goodput, congestion windows, switch queues, the spray, retransmissions and RTT\n"
    "samples), each a PNG beside the page with the CSV it was drawn from.  The page\n"
    "needs no network.  A figure whose records were off says which attribute turns\n"
    "them on; the time series come from samples.csv (mrcemu sim --report, or\n"
    "SampleInterval).  With OUTDIR2, a comparison of the two runs instead (overlaid\n"
    "completion-time distributions, medians and p99 and their differences), in\n"
    "OUTDIR/compare/index.html.  Needs /usr/bin/python3 with matplotlib.\n"
    "\n"
    "Options:\n"
    "  -o, --out DIR   write the page and its files in DIR instead\n"
    "  -q, --quiet     do not print the page's path\n"
    "  -h, --help      this text\n"
    "\n"
    "Exit status: 0 written; 1 it could not be written; 2 bad arguments or no run\n"
    "records in OUTDIR.\n";

static int cmd_report(int argc, char **argv)
{
	static const struct option opts[] = {{"out", required_argument, NULL, 'o'},
					     {"quiet", no_argument, NULL, 'q'},
					     {"help", no_argument, NULL, 'h'},
					     {NULL, 0, NULL, 0}};
	const char *page_dir = NULL;
	bool quiet = false;
	int c;

	while ((c = getopt_long(argc, argv, "o:qh", opts, NULL)) != -1) {
		if (c == 'o')
			page_dir = optarg;
		else if (c == 'q')
			quiet = true;
		else if (c == 'h') {
			fputs(usage_report, stdout);
			return 0;
		} else
			return bad_option("report");
	}
	if (optind == argc)
		return bad_usage("report", "needs the folder of a run (OUTDIR)");
	if (argc - optind > 2)
		return bad_usage("report", "two run folders at most");
	return report_write(argv[optind], optind + 1 < argc ? argv[optind + 1] : NULL, page_dir,
			    quiet, stderr);
}

static int cmd_attributes(int argc, char **argv)
{
	if (argc > 1 && (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h"))) {
		fputs(usage_attributes, stdout);
		return 0;
	}
	if (argc > 1)
		return bad_usage("attributes", "takes no arguments");
	config_print_attributes(stdout);
	return 0;
}

static const char usage_run[] =
    "Usage: mrcemu run [TOPOLOGY.ini] [-o OUTDIR] [--capture] [--scale N|max] [--until TIME]\n"
    "                  [--name NAME] [--set SECTION.ATTRIBUTE=VALUE]... [-q] [--report]\n"
    "\n"
    "Run TOPOLOGY.ini (default " DEFAULT_TOPOLOGY ") as real daemons: one network\n"
    "namespace per node (mrc-<emulation>-<node>), one veth pair per link (port N of a\n"
    "node is interface pN; MTU 9000, no IP address, IPv6 off), and one nicd or\n"
    "switchd per NIC or switch, started in its namespace from the folder mrcemu is\n"
    "in.  The daemons exchange real RoCEv2 frames, each stamped with its virtual\n"
    "arrival time, and run the same engines as `mrcemu sim` in virtual time, kept\n"
    "exact by promises: each daemon runs an event only when its neighbours have promised\n"
    "that no frame can still arrive before it, so the result is `mrcemu sim`'s at\n"
    "any speed and under any load (docs/promises.md).  mrcemu starts them all on one\n"
    "epoch, follows them over their control sockets, stops them when every message\n"
    "has completed (or TIME passes), merges their records into OUTDIR, prints a\n"
    "summary, and removes every namespace, link, daemon and socket, also when a\n"
    "daemon dies or mrcemu gets SIGINT, SIGTERM or SIGHUP.  Needs root.\n"
    "\n"
    "The records are byte-identical to the ones `mrcemu sim` writes for the same\n"
    "topology.  A frame the kernel lost (a gap in a link's sequence numbers) or a\n"
    "broken promise fails the run with its reason; causality violations cannot\n"
    "happen and are still counted (summary, lateness.csv).\n"
    "\n"
    "Options:\n"
    "  -o, --out OUTDIR   where records go (default out/<emulation name>)\n"
    "  -c, --capture      every daemon writes OUTDIR/pcap/NODE-PORT.pcap of the frames\n"
    "                     its ports send and receive, nanosecond timestamps in virtual\n"
    "                     time (wireshark -X lua_script:pcap/mrc.lua FILE)\n"
    "  -S, --scale N|max  max (the default without [external] nodes): as fast as the\n"
    "                     promises allow; N: also never ahead of the wall clock,\n"
    "                     virtual ns = wall ns / N (default with [external] nodes:\n"
    "                     the topology's [emulation] scale, 2000 if unset)\n"
    "  -u, --until TIME   stop at this virtual time (e.g. 10ms); default: [emulation]\n"
    "                     until, else when every message has completed\n"
    "  -n, --name NAME    the emulation's name instead of the topology's [emulation]\n"
    "                     name (namespaces, run folder, out/NAME; docs/topology.md,\n"
    "                     Names), so one topology can run twice side by side\n"
    SET_HELP
    "  -q, --quiet        no progress line and no summary\n"
    "  -r, --report       the daemons also write samples.csv (at SampleInterval), and\n"
    "                     at the end OUTDIR/report/index.html (mrcemu report --help)\n"
    "  -h, --help         this text\n"
    "\n"
    "While it runs, a progress line (virtual time, messages done/total, violations)\n"
    "is shown on stderr when stderr is a terminal.\n"
    "\n"
    "Records (docs/records.md): messages.csv, mrc-transport-stats.csv, lateness.csv\n"
    "(per daemon: frames, stamped frames, violations, lateness percentiles), with\n"
    "their attributes mrc-events.csv, mrc-monitor.csv, mrc-cc.csv, and\n"
    "switch-stats.csv, chakra.csv with a Chakra workload; OUTDIR/log/NODE.log keeps\n"
    "what a daemon said, if anything.\n"
    "Run folder while running: " LAUNCH_RUN_ROOT "/<emulation>/ (NODE.ctl control sockets,\n"
    "NODE.pid, NODE.log).\n"
    "\n"
    "Exit status: 0 every message completed with its bytes verified; 1 some did not,\n"
    "or the run failed (a daemon died: which, why and the end of its log are shown);\n"
    "2 not root, bad arguments, or a bad topology or workload; 128+N ended by signal N.\n";

static const char usage_up[] =
    "Usage: mrcemu up TOPOLOGY.ini [-o OUTDIR] [--capture] [--scale N] [--paused]\n"
    "                 [--name NAME] [--set SECTION.ATTRIBUTE=VALUE]...\n"
    "\n"
    "Build the namespaces and links of TOPOLOGY.ini as `mrcemu run` does, start its\n"
    "daemons, wait until each is ready, start them on one epoch, and return, leaving\n"
    "them running (virtual time goes on until `mrcemu down`; the workload, if any,\n"
    "is posted from virtual time 0).  Prints each node's daemon, pid and namespace,\n"
    "and how to capture and control it, e.g.\n"
    "\n"
    "  ip netns exec mrc-<emulation>-h0 tcpdump -i p0 -w x.pcap\n"
    "  mrcemu ctl --name <emulation> h0 post h1 1MiB\n"
    "\n"
    "[external NAME] nodes get a namespace and a link but no daemon: send and\n"
    "receive there with Scapy, tcpreplay or tcpdump.  Pid files, control sockets and\n"
    "logs are in " LAUNCH_RUN_ROOT "/<emulation>/.  Needs root.\n"
    "\n"
    "Options:\n"
    "  -o, --out OUTDIR   where the daemons write records (default out/<emulation>);\n"
    "                     `mrcemu down` merges them there\n"
    "  -c, --capture      per-port pcaps in OUTDIR/pcap, virtual-time stamps\n"
    "  -S, --scale N|max  wall ns per virtual ns (default: the topology's, 2000);\n"
    "                     max: as fast as the promises allow (no [external] nodes)\n"
    "  -P, --paused       build and start the daemons, but leave them waiting (no CPU,\n"
    "                     virtual time 0) until `mrcemu ctl start`: attach taps first\n"
    "  -n, --name NAME    the emulation's name instead of the topology's\n"
    SET_HELP
    "  -h, --help         this text\n"
    "\n"
    "What it creates is listed in " LAUNCH_RUN_ROOT "/<emulation>/manifest as it creates\n"
    "it; `mrcemu down` removes exactly that.  A name already up is refused, and\n"
    "nothing of the running emulation is touched.\n"
    "\n"
    "Exit status: 0 running; 1 something failed (everything made is removed again);\n"
    "2 not root, bad arguments, or a bad topology or workload.\n";

static const char usage_down[] =
    "Usage: mrcemu down NAME | TOPOLOGY.ini | --name NAME | --stale | --all\n"
    "\n"
    "Stop an emulation that `mrcemu up` started, or that a killed `mrcemu run` left,\n"
    "and remove what it created, as its manifest (" LAUNCH_RUN_ROOT "/NAME/manifest)\n"
    "lists it, and nothing else: each daemon listed gets the `stop` command (it\n"
    "flushes its records), then SIGTERM, then SIGKILL, each only after\n"
    "/proc/PID/cmdline shows it is still that nicd or switchd of that emulation; the\n"
    "namespaces listed are deleted (their veth links go with them), and the files\n"
    "listed in the run folder removed.  The daemons' records are merged into the\n"
    "emulation's output folder and summarised, and the logs that say something are\n"
    "kept in OUTDIR/log/; when the launcher had been killed, it says so.  A `run`\n"
    "whose launcher lives is asked to end (SIGTERM).  Processes you started in a\n"
    "namespace yourself (tcpdump) are not signalled.  Idempotent: with nothing\n"
    "running it says so and exits 0.  Needs root.\n"
    "\n"
    "  NAME, -n, --name NAME   the emulation of that name (see mrcemu list)\n"
    "  TOPOLOGY.ini            the emulation named in the file's [emulation] section\n"
    "  --stale                 every emulation whose launcher is gone: a `run` whose\n"
    "                          mrcemu was killed, an `up` whose daemons all died\n"
    "  --all                   every emulation, whoever started it (asks first when\n"
    "                          standard input is a terminal)\n"
    "  -h, --help              this text\n"
    "\n"
    "Exit status: 0 done or nothing to do; 1 something could not be stopped or\n"
    "removed; 2 not root, bad arguments or topology.\n";

static const char usage_list[] =
    "Usage: mrcemu list\n"
    "\n"
    "The emulations running on this machine, from their manifests in\n"
    "" LAUNCH_RUN_ROOT "/: name, nodes, scale, when it started, who started it (the user\n"
    "behind sudo, else the uid's name), and its launcher: alive (a `run`), detached\n"
    "(an `up`, with how many daemons live), or gone (stale: mrcemu down --stale).\n"
    "Needs root to read the manifests.\n";

static const char usage_ctl[] =
    "Usage: mrcemu ctl [--name NAME | --topology TOPOLOGY.ini] NODE COMMAND [ARG]...\n"
    "       mrcemu ctl [--name NAME | --topology TOPOLOGY.ini] start\n"
    "\n"
    "`start` starts every daemon of the emulation `mrcemu up --paused` left waiting\n"
    "(the named one, the topology's, or the only paused one) on one epoch, at the\n"
    "scale of `up`.\n"
    "\n"
    "Send one command line to the running daemon of NODE (over its control socket\n"
    "" LAUNCH_RUN_ROOT "/<emulation>/NODE.ctl) and print its reply (docs/control.md).\n"
    "Without --name or --topology the emulation is the only one running with a node\n"
    "of that name; when several do, ctl refuses to guess and names them.\n"
    "\n"
    "Commands (the daemon contract):\n"
    "  status            state=waiting|running|stopping, vt_ps, sends=done/total,\n"
    "                    receives=done/total, violations, late_max_ns\n"
    "  stats             every counter of the engine, as name=value\n"
    "  post DST BYTES    (nicd) post one RDMA Write of BYTES (e.g. 1MiB) to node DST;\n"
    "                    replies id=N (ids from 1000000 up)\n"
    "  port N down|up    take port N down or up\n"
    "  stop              flush the records and exit\n"
    "\n"
    "Options:\n"
    "  -n, --name NAME               the emulation of that name (see mrcemu list)\n"
    "  -t, --topology TOPOLOGY.ini   the emulation of this topology file\n"
    "  -h, --help                    this text\n"
    "\n"
    "Exit status: 0 the reply is ok; 1 it is an error (printed); 2 bad arguments,\n"
    "or no such daemon is running, or it did not answer.\n";

/* "N" >= 1 or "max", for --scale. */
static bool parse_scale(const char *s, uint64_t *scale)
{
	char *end;

	if (!strcmp(s, "max")) {
		*scale = LAUNCH_SCALE_MAX;
		return true;
	}
	errno = 0;
	*scale = strtoull(s, &end, 10);
	return !errno && *s && *s != '-' && !*end && *scale >= 1 && *scale != LAUNCH_SCALE_MAX;
}

/* The options `run` and `up` share; returns -1 when parsing may go on, else
 * the exit status. */
static int launch_option(const char *cmd, int c, struct launch_options *o, const char *usage)
{
	char err[256];

	switch (c) {
	case 'o':
		o->outdir = optarg;
		return -1;
	case 'c':
		o->capture = true;
		return -1;
	case 'S':
		if (!parse_scale(optarg, &o->scale))
			return bad_usage(cmd,
					 "--scale: not max or a whole number >= 1 (allowed: max, "
					 "1..2^64-2)");
		return -1;
	case 'u':
		if (!until_parse(optarg, &o->until, err, sizeof(err)))
			return bad_usage(cmd, err);
		return -1;
	case 'q':
		o->quiet = true;
		return -1;
	case 'n':
		o->name = optarg;
		return -1;
	case 'X':
		if (!add_set(o->sets, &o->nsets, optarg))
			return bad_usage(cmd, "--set: more than 32 (allowed: at most 32)");
		return -1;
	case 'r':
		o->report = true;
		return -1;
	case 'h':
		fputs(usage, stdout);
		return 0;
	default:
		return bad_option(cmd);
	}
}

static int cmd_run(int argc, char **argv)
{
	static const struct option opts[] = {{"out", required_argument, NULL, 'o'},
					     {"capture", no_argument, NULL, 'c'},
					     {"scale", required_argument, NULL, 'S'},
					     {"until", required_argument, NULL, 'u'},
					     {"name", required_argument, NULL, 'n'},
					     {"set", required_argument, NULL, 'X'},
					     {"quiet", no_argument, NULL, 'q'},
					     {"report", no_argument, NULL, 'r'},
					     {"help", no_argument, NULL, 'h'},
					     {NULL, 0, NULL, 0}};
	struct launch_options o = {.topology = DEFAULT_TOPOLOGY};
	struct launch_result r;
	int c, rc;

	while ((c = getopt_long(argc, argv, "o:cS:u:n:qrh", opts, NULL)) != -1)
		if ((rc = launch_option("run", c, &o, usage_run)) >= 0)
			return rc;
	if (optind < argc)
		o.topology = argv[optind++];
	if (optind < argc)
		return bad_usage("run", "one topology file at most");
	o.topology = topology_path(o.topology);
	rc = launch_run(&o, &r, stderr);
	if (r.merged && !o.quiet)
		launch_print_summary(&r, stdout);
	if (r.merged && o.report && report_write(r.outdir, NULL, NULL, o.quiet, stderr))
		rc = rc ? rc : 1;
	return rc;
}

static int cmd_up(int argc, char **argv)
{
	static const struct option opts[] = {{"out", required_argument, NULL, 'o'},
					     {"capture", no_argument, NULL, 'c'},
					     {"scale", required_argument, NULL, 'S'},
					     {"paused", no_argument, NULL, 'P'},
					     {"name", required_argument, NULL, 'n'},
					     {"set", required_argument, NULL, 'X'},
					     {"help", no_argument, NULL, 'h'},
					     {NULL, 0, NULL, 0}};
	struct launch_options o = {0};
	int c, rc;

	while ((c = getopt_long(argc, argv, "o:cS:Pn:h", opts, NULL)) != -1)
		if (c == 'P')
			o.paused = true;
		else if ((rc = launch_option("up", c, &o, usage_up)) >= 0)
			return rc;
	if (optind + 1 != argc)
		return bad_usage("up", "needs one topology file");
	o.topology = topology_path(argv[optind]);
	return launch_up(&o, stdout, stderr);
}

/* `down ARG`: a topology file when ARG is a file or ends in .ini, else a
 * name. */
static bool is_topology(const char *arg)
{
	size_t n = strlen(arg);

	return access(arg, F_OK) == 0 || (n > 4 && !strcmp(arg + n - 4, ".ini"));
}

static int cmd_down(int argc, char **argv)
{
	static const struct option opts[] = {{"name", required_argument, NULL, 'n'},
					     {"stale", no_argument, NULL, 's'},
					     {"all", no_argument, NULL, 'a'},
					     {"help", no_argument, NULL, 'h'},
					     {NULL, 0, NULL, 0}};
	struct launch_down_options o = {0};
	int c;

	while ((c = getopt_long(argc, argv, "n:h", opts, NULL)) != -1) {
		if (c == 'n')
			o.name = optarg;
		else if (c == 's')
			o.stale = true;
		else if (c == 'a')
			o.all = true;
		else if (c == 'h') {
			fputs(usage_down, stdout);
			return 0;
		} else
			return bad_option("down");
	}
	if (optind < argc && !o.name) {
		if (is_topology(argv[optind]))
			o.topology = argv[optind];
		else
			o.name = argv[optind];
		optind++;
	}
	if (optind < argc)
		return bad_usage("down", "one emulation at most");
	if ((o.stale || o.all) + (o.name || o.topology) + (o.stale && o.all) != 1)
		return bad_usage("down",
				 "needs one of NAME, TOPOLOGY.ini, --name NAME, --stale, --all");
	return launch_down(&o, stdout, stderr);
}

static int cmd_list(int argc, char **argv)
{
	if (argc > 1 && (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h"))) {
		fputs(usage_list, stdout);
		return 0;
	}
	if (argc > 1)
		return bad_usage("list", "takes no arguments");
	return launch_list(stdout, stderr);
}

static int cmd_ctl(int argc, char **argv)
{
	static const struct option opts[] = {{"topology", required_argument, NULL, 't'},
					     {"name", required_argument, NULL, 'n'},
					     {"help", no_argument, NULL, 'h'},
					     {NULL, 0, NULL, 0}};
	const char *topology = NULL, *name = NULL;
	char line[1024] = "";
	size_t n = 0;
	int c;

	/* '+': options end at NODE, so "port 0 down" is the command's. */
	while ((c = getopt_long(argc, argv, "+t:n:h", opts, NULL)) != -1) {
		if (c == 't')
			topology = optarg;
		else if (c == 'n')
			name = optarg;
		else if (c == 'h') {
			fputs(usage_ctl, stdout);
			return 0;
		} else
			return bad_option("ctl");
	}
	if (argc - optind == 1 && !strcmp(argv[optind], "start"))
		return launch_start(topology, name, stdout, stderr);
	if (argc - optind < 2)
		return bad_usage("ctl", "needs a node and a command");
	for (int i = optind + 1; i < argc; i++) {
		if (strchr(argv[i], '\n') || n + strlen(argv[i]) + 2 > sizeof(line))
			return bad_usage("ctl", "command too long or with a newline");
		n += (size_t)snprintf(line + n, sizeof(line) - n, "%s%s", n ? " " : "", argv[i]);
	}
	return launch_ctl(topology, name, argv[optind], line, stdout, stderr);
}

static int cmd_export(int argc, char **argv)
{
	return chakra_export_main(argc, argv, DEFAULT_TOPOLOGY);
}

static const char usage_import[] =
    "Usage: mrcemu import htsim TOPO.topo MATRIX.cm -o DIR\n"
    "\n"
    "Writes DIR/NAME.ini and DIR/NAME.csv (NAME from MATRIX's file name): htsim's\n"
    "two-tier leaf-spine (Nodes, Tier 0 Radix_Down hosts a leaf and Radix_Up\n"
    "spines, each tier's downlink rate and latency) and its connection matrix\n"
    "(SRC->DST id ID start T size BYTES, T in ps, host N = the N-th NIC) as an\n"
    "mrcemu topology and workload, with ConfigBaseRTT and EgressQueueLimit auto.\n"
    "Trigger flows, switch latency and oversubscription are refused with one line.\n"
    "Exit status: 0, or 2 on a bad file (FILE:LINE: reason).\n";

static int cmd_import(int argc, char **argv)
{
	const char *outdir = NULL;
	int c;

	optind = 1;
	while ((c = getopt_long(argc, argv, "ho:", (const struct option[]){{"help", 0, 0, 'h'},
									  {0, 0, 0, 0}},
				NULL)) != -1) {
		if (c == 'o') {
			outdir = optarg;
		} else if (c == 'h') {
			fputs(usage_import, stdout);
			return 0;
		} else {
			return bad_option("import");
		}
	}
	if (argc - optind != 3 || strcmp(argv[optind], "htsim"))
		return bad_usage("import", "needs: htsim TOPO.topo MATRIX.cm");
	if (!outdir)
		return bad_usage("import", "needs -o DIR");
	return import_htsim(argv[optind + 1], argv[optind + 2], outdir, stderr);
}

static const char usage_wireshark_plugin[] =
    "Usage: mrcemu wireshark-plugin\n"
    "\n"
    "Copy the MRC dissector mrc.lua into this user's Wireshark plugin folder,\n"
    "~/.local/lib/wireshark/plugins/, so that Wireshark and tshark decode MRC\n"
    "without -X lua_script:.  The copy comes\n"
    "from the installed tree (<prefix>/share/mrcemu/mrc.lua) or the source tree\n"
    "(pcap/mrc.lua).  `make install` also puts it in Wireshark's global plugin\n"
    "folder.\n";

static bool copy_file(const char *from, const char *to)
{
	char buf[65536];
	size_t n;
	bool ok = true;
	FILE *in = fopen(from, "rbe"), *out;

	if (!in)
		return false;
	out = fopen(to, "wbe");
	while (out && ok && (n = fread(buf, 1, sizeof(buf), in)) > 0)
		ok = fwrite(buf, 1, n, out) == n;
	fclose(in);
	return out && fclose(out) == 0 && ok;
}

static int cmd_wireshark_plugin(int argc, char **argv)
{
	char share[PATH_MAX], from[PATH_MAX + 16], dir[PATH_MAX], to[PATH_MAX + 16];
	const char *home = getenv("HOME");

	if (argc > 1 && (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h"))) {
		fputs(usage_wireshark_plugin, stdout);
		return 0;
	}
	if (argc > 1)
		return bad_usage("wireshark-plugin", "takes no arguments");
	if (share_dir(share, sizeof(share)))
		snprintf(from, sizeof(from), "%s/mrc.lua", share);
	else if (exe_dir(share, sizeof(share))) /* build/mrcemu: the source tree's */
		snprintf(from, sizeof(from), "%s/../pcap/mrc.lua", share);
	else
		snprintf(from, sizeof(from), "pcap/mrc.lua");
	if (!home || !*home)
		return bad_usage("wireshark-plugin", "HOME is not set");
	snprintf(dir, sizeof(dir), "%s/.local/lib/wireshark/plugins", home);
	if (!records_mkdir(dir)) {
		fprintf(stderr, "mrcemu wireshark-plugin: %s: %s\n", dir, strerror(errno));
		return 1;
	}
	snprintf(to, sizeof(to), "%s/mrc.lua", dir);
	if (!copy_file(from, to)) {
		fprintf(stderr, "mrcemu wireshark-plugin: %s -> %s: %s\n", from, to,
			strerror(errno));
		return 1;
	}
	printf("installed %s (Wireshark and tshark load it at start)\n", to);
	return 0;
}

int main(int argc, char **argv)
{
	opterr = 0;
	static const struct {
		const char *name;
		int (*fn)(int, char **);
	} cmds[] = {{"sim", cmd_sim},	{"attributes", cmd_attributes},
		    {"run", cmd_run},	{"up", cmd_up},
		    {"down", cmd_down}, {"ctl", cmd_ctl},
		    {"export", cmd_export}, {"import", cmd_import}, {"list", cmd_list},
		    {"wireshark-plugin", cmd_wireshark_plugin}, {"report", cmd_report}};

	if (argc == 2 && !strcmp(argv[1], "--version")) {
		printf("mrcemu %s\n", MRCEMU_VERSION);
		return 0;
	}
	if (argc < 2 || !strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
		fputs(usage_main, argc < 2 ? stderr : stdout);
		return argc < 2 ? 2 : 0;
	}
	for (size_t i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++)
		if (!strcmp(argv[1], cmds[i].name)) {
			cmd_argc = argc - 1;
			cmd_argv = argv + 1;
			return cmds[i].fn(argc - 1, argv + 1);
		}
	fprintf(stderr, "mrcemu: unknown command '%s' (see mrcemu --help)\n", argv[1]);
	return 2;
}
