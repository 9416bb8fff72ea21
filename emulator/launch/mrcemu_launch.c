/* emulator/launch/mrcemu_launch.c — the launcher's commands of the mrcemu
 * command line (docs/cli.md): run, up, down, list, ctl, each parsing its
 * options and calling launch.h. */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "launch.h"
#include "mrcemu.h"
#include "report.h"

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
    "                     Names), so one topology can run twice side by side\n" SET_HELP
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
    "  -n, --name NAME    the emulation's name instead of the topology's\n" SET_HELP
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
    "behind sudo, else the uid's name), and its launcher: alive (a `run`), up (an\n"
    "`up`: its conductor's pid, and how many daemons live), or gone (stale: mrcemu\n"
    "down --stale).\n"
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
			return cli_bad_usage(
			    cmd, "--scale: not max or a whole number >= 1 (allowed: max, "
				 "1..2^64-2)");
		return -1;
	case 'u':
		if (!cli_until_parse(optarg, &o->until, err, sizeof(err)))
			return cli_bad_usage(cmd, err);
		return -1;
	case 'q':
		o->quiet = true;
		return -1;
	case 'n':
		o->name = optarg;
		return -1;
	case 'X':
		if (!cli_add_set(o->sets, &o->nsets, optarg))
			return cli_bad_usage(cmd, "--set: more than 32 (allowed: at most 32)");
		return -1;
	case 'r':
		o->report = true;
		return -1;
	case 'h':
		fputs(usage, stdout);
		return 0;
	default:
		return cli_bad_option(cmd);
	}
}

int cmd_run(int argc, char **argv)
{
	static const struct option opts[] = {
	    {"out", required_argument, NULL, 'o'},   {"capture", no_argument, NULL, 'c'},
	    {"scale", required_argument, NULL, 'S'}, {"until", required_argument, NULL, 'u'},
	    {"name", required_argument, NULL, 'n'},  {"set", required_argument, NULL, 'X'},
	    {"quiet", no_argument, NULL, 'q'},	     {"report", no_argument, NULL, 'r'},
	    {"help", no_argument, NULL, 'h'},	     {NULL, 0, NULL, 0}};
	struct launch_options o = {.topology = DEFAULT_TOPOLOGY};
	struct launch_result r;
	int c, rc;

	while ((c = getopt_long(argc, argv, "o:cS:u:n:qrh", opts, NULL)) != -1)
		if ((rc = launch_option("run", c, &o, usage_run)) >= 0)
			return rc;
	if (optind < argc)
		o.topology = argv[optind++];
	if (optind < argc)
		return cli_bad_usage("run", "one topology file at most");
	o.topology = cli_topology_path(o.topology);
	rc = launch_run(&o, &r, stderr);
	if (r.merged && !o.quiet)
		launch_print_summary(&r, stdout);
	if (r.merged && o.report && report_write(r.outdir, NULL, NULL, o.quiet, stderr))
		rc = rc ? rc : 1;
	return rc;
}

int cmd_up(int argc, char **argv)
{
	static const struct option opts[] = {
	    {"out", required_argument, NULL, 'o'},   {"capture", no_argument, NULL, 'c'},
	    {"scale", required_argument, NULL, 'S'}, {"paused", no_argument, NULL, 'P'},
	    {"name", required_argument, NULL, 'n'},  {"set", required_argument, NULL, 'X'},
	    {"help", no_argument, NULL, 'h'},	     {NULL, 0, NULL, 0}};
	struct launch_options o = {0};
	int c, rc;

	while ((c = getopt_long(argc, argv, "o:cS:Pn:h", opts, NULL)) != -1)
		if (c == 'P')
			o.paused = true;
		else if ((rc = launch_option("up", c, &o, usage_up)) >= 0)
			return rc;
	if (optind + 1 != argc)
		return cli_bad_usage("up", "needs one topology file");
	o.topology = cli_topology_path(argv[optind]);
	return launch_up(&o, stdout, stderr);
}

/* `down ARG`: a topology file when ARG is a file or ends in .ini, else a
 * name. */
static bool is_topology(const char *arg)
{
	size_t n = strlen(arg);

	return access(arg, F_OK) == 0 || (n > 4 && !strcmp(arg + n - 4, ".ini"));
}

int cmd_down(int argc, char **argv)
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
			return cli_bad_option("down");
	}
	if (optind < argc && !o.name) {
		if (is_topology(argv[optind]))
			o.topology = argv[optind];
		else
			o.name = argv[optind];
		optind++;
	}
	if (optind < argc)
		return cli_bad_usage("down", "one emulation at most");
	if ((o.stale || o.all) + (o.name || o.topology) + (o.stale && o.all) != 1)
		return cli_bad_usage(
		    "down", "needs one of NAME, TOPOLOGY.ini, --name NAME, --stale, --all");
	return launch_down(&o, stdout, stderr);
}

int cmd_list(int argc, char **argv)
{
	if (argc > 1 && (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h"))) {
		fputs(usage_list, stdout);
		return 0;
	}
	if (argc > 1)
		return cli_bad_usage("list", "takes no arguments");
	return launch_list(stdout, stderr);
}

int cmd_ctl(int argc, char **argv)
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
			return cli_bad_option("ctl");
	}
	if (argc - optind == 1 && !strcmp(argv[optind], "start"))
		return launch_start(topology, name, stdout, stderr);
	if (argc - optind < 2)
		return cli_bad_usage("ctl", "needs a node and a command");
	for (int i = optind + 1; i < argc; i++) {
		if (strchr(argv[i], '\n') || n + strlen(argv[i]) + 2 > sizeof(line))
			return cli_bad_usage("ctl", "command too long or with a newline");
		n += (size_t)snprintf(line + n, sizeof(line) - n, "%s%s", n ? " " : "", argv[i]);
	}
	return launch_ctl(topology, name, argv[optind], line, stdout, stderr);
}
