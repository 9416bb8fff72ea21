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
#include "core/records.h"
#include "core/time.h"
#include "import.h"
#include "launch.h"
#include "mrcemu.h"
#include "report.h"
#include "sim/sim.h"

#ifndef MRCEMU_VERSION
#define MRCEMU_VERSION "unknown"
#endif

/* Where an installed mrcemu keeps its data: <prefix>/share/mrcemu, found
 * from /proc/self/exe (<prefix>/bin/mrcemu), so a tree moved elsewhere
 * still works.  False when mrcemu is not installed (build/). */
static bool share_dir(char *buf, size_t len)
{
	char dir[PATH_MAX];

	if (!launch_exe_dir(dir, sizeof(dir)))
		return false;
	if (snprintf(buf, len, "%s/../share/mrcemu", dir) >= (int)len)
		return false;
	return access(buf, R_OK | X_OK) == 0;
}

/* A topology argument: the file as given when it exists; else, for an
 * installed mrcemu, the one of that name among its configs (so `mrcemu sim`
 * and `mrcemu sim incast-8.ini` work from any folder). */
const char *cli_topology_path(const char *arg)
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
    "                     message has completed or failed, or at 1 s at the latest\n" SET_HELP
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
bool cli_until_parse(const char *s, ps_t *until, char *err, size_t len)
{
	if (!time_parse(s, until, err, len))
		return false;
	if (*until > MRCEMU_MAX_RUN) {
		snprintf(err, len, "--until: %s is past the longest run (allowed: up to 281s)", s);
		return false;
	}
	return true;
}

int cli_bad_option(const char *cmd)
{
	const char *arg = optind - 1 < cmd_argc ? cmd_argv[optind - 1] : "?";

	fprintf(stderr, "mrcemu %s: %s: unknown option or missing value (see mrcemu %s --help)\n",
		cmd, arg, cmd);
	return 2;
}

int cli_bad_usage(const char *cmd, const char *msg)
{
	fprintf(stderr, "mrcemu %s: %s (see mrcemu %s --help)\n", cmd, msg, cmd);
	return 2;
}

bool cli_add_set(const char **sets, int *n, const char *arg)
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
				return cli_bad_usage(
				    "sim", "--seed: not a whole number (allowed: 0..2^64-1)");
			o.seed_set = true;
			break;
		case 'u':
			if (!cli_until_parse(optarg, &o.until, err, sizeof(err)))
				return cli_bad_usage("sim", err);
			break;
		case 'q':
			o.quiet = true;
			break;
		case 'X':
			if (!cli_add_set(o.sets, &o.nsets, optarg))
				return cli_bad_usage("sim",
						     "--set: more than 32 (allowed: at most 32)");
			break;
		case 'r':
			o.report = true;
			break;
		case 'h':
			fputs(usage_sim, stdout);
			return 0;
		default:
			return cli_bad_option("sim");
		}
	}
	if (optind < argc)
		o.topology = argv[optind++];
	if (optind < argc)
		return cli_bad_usage("sim", "one topology file at most");
	o.topology = cli_topology_path(o.topology);
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
			return cli_bad_option("report");
	}
	if (optind == argc)
		return cli_bad_usage("report", "needs the folder of a run (OUTDIR)");
	if (argc - optind > 2)
		return cli_bad_usage("report", "two run folders at most");
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
		return cli_bad_usage("attributes", "takes no arguments");
	config_print_attributes(stdout);
	return 0;
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
	while ((c = getopt_long(argc, argv,
				"ho:", (const struct option[]){{"help", 0, 0, 'h'}, {0, 0, 0, 0}},
				NULL)) != -1) {
		if (c == 'o') {
			outdir = optarg;
		} else if (c == 'h') {
			fputs(usage_import, stdout);
			return 0;
		} else {
			return cli_bad_option("import");
		}
	}
	if (argc - optind != 3 || strcmp(argv[optind], "htsim"))
		return cli_bad_usage("import", "needs: htsim TOPO.topo MATRIX.cm");
	if (!outdir)
		return cli_bad_usage("import", "needs -o DIR");
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
		return cli_bad_usage("wireshark-plugin", "takes no arguments");
	if (share_dir(share, sizeof(share)))
		snprintf(from, sizeof(from), "%s/mrc.lua", share);
	else if (launch_exe_dir(share, sizeof(share))) /* build/mrcemu: the source tree's */
		snprintf(from, sizeof(from), "%s/../pcap/mrc.lua", share);
	else
		snprintf(from, sizeof(from), "pcap/mrc.lua");
	if (!home || !*home)
		return cli_bad_usage("wireshark-plugin", "HOME is not set");
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
	} cmds[] = {{"sim", cmd_sim},	    {"attributes", cmd_attributes},
		    {"run", cmd_run},	    {"up", cmd_up},
		    {"down", cmd_down},	    {"ctl", cmd_ctl},
		    {"export", cmd_export}, {"import", cmd_import},
		    {"list", cmd_list},	    {"wireshark-plugin", cmd_wireshark_plugin},
		    {"report", cmd_report}};

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
