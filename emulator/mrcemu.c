/* emulator/mrcemu.c — the mrcemu command line (docs/cli.md): sim, run, up,
 * down, ctl, attributes.  run/up/down/ctl are the launcher (launch.h). */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "chakra_export.h"
#include "config.h"
#include "import.h"
#include "launch.h"
#include "report.h"
#include "sim.h"
#include "time.h"

#define DEFAULT_TOPOLOGY "configs/default.ini"

static const char usage_main[] =
    "Usage: mrcemu COMMAND [OPTIONS]\n"
    "\n"
    "A packet-level emulator of the MRC (Multipath Reliable Connection) transport.\n"
    "\n"
    "Commands:\n"
    "  sim [TOPOLOGY.ini]     run the topology as a deterministic single-process simulation\n"
    "  run [TOPOLOGY.ini]     run it as nicd/switchd daemons over veth links (root)\n"
    "  up TOPOLOGY.ini        build namespaces and links, start the daemons, wait\n"
    "  down TOPOLOGY.ini      stop the daemons, delete namespaces and links\n"
    "  ctl NODE COMMAND...    send a control command to a running daemon\n"
    "  report OUTDIR [OUTDIR2] draw a run's records as a page (or compare two runs)\n"
    "  attributes             list every attribute with its default and range\n"
    "  export FORMAT          the topology's workload as Chakra traces or as CSV\n"
    "  import htsim TOPO CM -o DIR  an htsim scenario as a topology and workload\n"
    "\n"
    "`mrcemu COMMAND --help` describes each command.  With no topology, sim and run\n"
    "use " DEFAULT_TOPOLOGY ".\n";

static const char usage_sim[] =
    "Usage: mrcemu sim [TOPOLOGY.ini] [-o OUTDIR] [--capture] [--seed N] [--until TIME] [-q]\n"
    "                  [--report]\n"
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

static int cmd_sim(int argc, char **argv)
{
	static const struct option opts[] = {{"out", required_argument, NULL, 'o'},
					     {"capture", no_argument, NULL, 'c'},
					     {"seed", required_argument, NULL, 's'},
					     {"until", required_argument, NULL, 'u'},
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
    "Usage: mrcemu run [TOPOLOGY.ini] [-o OUTDIR] [--capture] [--scale N|max]\n"
    "                 [--until TIME] [-q] [--report]\n"
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
    "\n"
    "Build the namespaces and links of TOPOLOGY.ini as `mrcemu run` does, start its\n"
    "daemons, wait until each is ready, start them on one epoch, and return, leaving\n"
    "them running (virtual time goes on until `mrcemu down`; the workload, if any,\n"
    "is posted from virtual time 0).  Prints each node's daemon, pid and namespace,\n"
    "and how to capture and control it, e.g.\n"
    "\n"
    "  ip netns exec mrc-<emulation>-h0 tcpdump -i p0 -w x.pcap\n"
    "  mrcemu ctl h0 post h1 1MiB\n"
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
    "  -h, --help         this text\n"
    "\n"
    "Exit status: 0 running; 1 something failed (everything made is removed again);\n"
    "2 not root, bad arguments, or a bad topology or workload.\n";

static const char usage_down[] =
    "Usage: mrcemu down TOPOLOGY.ini\n"
    "\n"
    "Stop the emulation of TOPOLOGY.ini that `mrcemu up` started (or that a crashed\n"
    "`mrcemu run` left): each daemon in its pid file gets the `stop` command (it\n"
    "flushes its records), then SIGTERM, then SIGKILL, each only after\n"
    "/proc/PID/cmdline shows it is still that nicd or switchd; then delete the\n"
    "namespaces mrc-<emulation>-* (their veth links go with them) and the run folder\n"
    "" LAUNCH_RUN_ROOT "/<emulation>/, and merge the daemons' records into the output\n"
    "folder `up` used.  Processes you started in a namespace yourself (tcpdump) are\n"
    "not signalled.  Idempotent: with nothing running it says so and exits 0.\n"
    "Needs root.\n"
    "\n"
    "Exit status: 0 done or nothing to do; 2 not root, bad arguments or topology.\n";

static const char usage_ctl[] =
    "Usage: mrcemu ctl [--topology TOPOLOGY.ini] NODE COMMAND [ARG]...\n"
    "       mrcemu ctl [--topology TOPOLOGY.ini] start\n"
    "\n"
    "`start` starts every daemon of the emulation `mrcemu up --paused` left waiting\n"
    "(the topology's, or the only paused one) on one epoch, at the scale of `up`.\n"
    "\n"
    "Send one command line to the running daemon of NODE (over its control socket\n"
    "" LAUNCH_RUN_ROOT "/<emulation>/NODE.ctl) and print its reply.  The emulation is the\n"
    "one running with a node of that name; name it with --topology when several do.\n"
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
					     {"quiet", no_argument, NULL, 'q'},
					     {"report", no_argument, NULL, 'r'},
					     {"help", no_argument, NULL, 'h'},
					     {NULL, 0, NULL, 0}};
	struct launch_options o = {.topology = DEFAULT_TOPOLOGY};
	struct launch_result r;
	int c, rc;

	while ((c = getopt_long(argc, argv, "o:cS:u:qrh", opts, NULL)) != -1)
		if ((rc = launch_option("run", c, &o, usage_run)) >= 0)
			return rc;
	if (optind < argc)
		o.topology = argv[optind++];
	if (optind < argc)
		return bad_usage("run", "one topology file at most");
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
					     {"help", no_argument, NULL, 'h'},
					     {NULL, 0, NULL, 0}};
	struct launch_options o = {0};
	int c, rc;

	while ((c = getopt_long(argc, argv, "o:cS:Ph", opts, NULL)) != -1)
		if (c == 'P')
			o.paused = true;
		else if ((rc = launch_option("up", c, &o, usage_up)) >= 0)
			return rc;
	if (optind + 1 != argc)
		return bad_usage("up", "needs one topology file");
	o.topology = argv[optind];
	return launch_up(&o, stdout, stderr);
}

static int cmd_down(int argc, char **argv)
{
	if (argc > 1 && (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h"))) {
		fputs(usage_down, stdout);
		return 0;
	}
	if (argc != 2 || argv[1][0] == '-')
		return bad_usage("down", "needs one topology file");
	return launch_down(argv[1], stdout, stderr);
}

static int cmd_ctl(int argc, char **argv)
{
	static const struct option opts[] = {{"topology", required_argument, NULL, 't'},
					     {"help", no_argument, NULL, 'h'},
					     {NULL, 0, NULL, 0}};
	const char *topology = NULL;
	char line[1024] = "";
	size_t n = 0;
	int c;

	/* '+': options end at NODE, so "port 0 down" is the command's. */
	while ((c = getopt_long(argc, argv, "+t:h", opts, NULL)) != -1) {
		if (c == 't')
			topology = optarg;
		else if (c == 'h') {
			fputs(usage_ctl, stdout);
			return 0;
		} else
			return bad_option("ctl");
	}
	if (argc - optind == 1 && !strcmp(argv[optind], "start"))
		return launch_start(topology, stdout, stderr);
	if (argc - optind < 2)
		return bad_usage("ctl", "needs a node and a command");
	for (int i = optind + 1; i < argc; i++) {
		if (strchr(argv[i], '\n') || n + strlen(argv[i]) + 2 > sizeof(line))
			return bad_usage("ctl", "command too long or with a newline");
		n += (size_t)snprintf(line + n, sizeof(line) - n, "%s%s", n ? " " : "", argv[i]);
	}
	return launch_ctl(topology, argv[optind], line, stdout, stderr);
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

int main(int argc, char **argv)
{
	opterr = 0;
	static const struct {
		const char *name;
		int (*fn)(int, char **);
	} cmds[] = {{"sim", cmd_sim},	{"attributes", cmd_attributes},
		    {"run", cmd_run},	{"up", cmd_up},
		    {"down", cmd_down}, {"ctl", cmd_ctl},
		    {"export", cmd_export}, {"import", cmd_import},
		    {"report", cmd_report}};

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
