/* emulator/mrcemu.c — the mrcemu command line (INTERFACES.md): sim, run, up,
 * down, ctl, attributes. */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "config.h"
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
	"  attributes             list every attribute with its default and range\n"
	"\n"
	"`mrcemu COMMAND --help` describes each command.  With no topology, sim and run\n"
	"use " DEFAULT_TOPOLOGY ".\n";

static const char usage_sim[] =
	"Usage: mrcemu sim [TOPOLOGY.ini] [-o OUTDIR] [--capture] [--seed N] [--until TIME] [-q]\n"
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
	"                     message has completed or failed\n"
	"  -q, --quiet        no summary\n"
	"  -h, --help         this text\n"
	"\n"
	"Records (INTERFACES.md): messages.csv, mrc-transport-stats.csv, and with their\n"
	"attributes mrc-events.csv, mrc-monitor.csv, mrc-cc.csv.\n"
	"\n"
	"Exit status: 0 every message completed with its bytes verified; 1 some did not\n"
	"(each is reported with the reason); 2 bad arguments or a bad topology or workload.\n";

static const char usage_attributes[] =
	"Usage: mrcemu attributes\n"
	"\n"
	"Print every attribute a topology file may set, by section ([emulation], [nic],\n"
	"[switch], [link]), with its type and unit, default, allowed range and meaning.\n";

static int bad_usage(const char *cmd, const char *msg)
{
	fprintf(stderr, "mrcemu %s: %s (see mrcemu %s --help)\n", cmd, msg, cmd);
	return 2;
}

static int cmd_sim(int argc, char **argv)
{
	static const struct option opts[] = {
		{"out", required_argument, NULL, 'o'},   {"capture", no_argument, NULL, 'c'},
		{"seed", required_argument, NULL, 's'},  {"until", required_argument, NULL, 'u'},
		{"quiet", no_argument, NULL, 'q'},       {"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0}};
	struct sim_options o = {.topology = DEFAULT_TOPOLOGY};
	struct sim_result r;
	char err[256], *end;
	int c, rc;

	while ((c = getopt_long(argc, argv, "o:cs:u:qh", opts, NULL)) != -1) {
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
				return bad_usage("sim", "--seed: not a whole number (allowed: 0..2^64-1)");
			o.seed_set = true;
			break;
		case 'u':
			if (!time_parse(optarg, &o.until, err, sizeof(err)))
				return bad_usage("sim", err);
			break;
		case 'q':
			o.quiet = true;
			break;
		case 'h':
			fputs(usage_sim, stdout);
			return 0;
		default:
			return bad_usage("sim", "unknown option");
		}
	}
	if (optind < argc)
		o.topology = argv[optind++];
	if (optind < argc)
		return bad_usage("sim", "one topology file at most");
	rc = sim_run(&o, &r, stderr);
	if (rc != 2 && !o.quiet)
		sim_print_summary(&r, stdout);
	return rc;
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

/* The daemons' commands arrive with nicd and switchd (ARCHITECTURE.md,
 * Daemons); until then they say so rather than pretend. */
static int cmd_not_yet(int argc, char **argv)
{
	(void)argc;
	fprintf(stderr, "mrcemu %s: the nicd/switchd emulation is not built yet; use mrcemu sim\n",
		argv[0]);
	return 2;
}

int main(int argc, char **argv)
{
	static const struct {
		const char *name;
		int (*fn)(int, char **);
	} cmds[] = {{"sim", cmd_sim},       {"attributes", cmd_attributes}, {"run", cmd_not_yet},
		    {"up", cmd_not_yet},    {"down", cmd_not_yet},          {"ctl", cmd_not_yet}};

	if (argc < 2 || !strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
		fputs(usage_main, argc < 2 ? stderr : stdout);
		return argc < 2 ? 2 : 0;
	}
	for (size_t i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++)
		if (!strcmp(argv[1], cmds[i].name))
			return cmds[i].fn(argc - 1, argv + 1);
	fprintf(stderr, "mrcemu: unknown command '%s' (see mrcemu --help)\n", argv[1]);
	return 2;
}
