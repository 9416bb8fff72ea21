/* emulator/launch/mrcemu.h — what the files of the mrcemu command line share
 * (mrcemu.c: main, sim, report, attributes, export, import; mrcemu_launch.c:
 * run, up, down, list, ctl).  Part of the mrcemu program, not of the library. */
#ifndef MRCEMU_CLI_H
#define MRCEMU_CLI_H

#include <stdbool.h>

#include "core/time.h"

#define DEFAULT_TOPOLOGY "configs/default.ini"

/* --set, shared by sim, run and up (docs/cli.md, Sweeps). */
#define SET_HELP                                                                                   \
	"      --set SECTION.ATTRIBUTE=VALUE\n"                                                    \
	"                     override an attribute after the file: SECTION is emulation,\n"       \
	"                     nic, switch or link, and the value applies to [emulation] or\n"      \
	"                     to every NIC, switch or link (e.g. --set nic.MSS=2048); up\n"        \
	"                     to 32, in order; for sweeps without editing the file\n"

/* One line naming the bad option of `mrcemu CMD`; returns 2. */
int cli_bad_option(const char *cmd);
/* "mrcemu CMD: MSG (see mrcemu CMD --help)"; returns 2. */
int cli_bad_usage(const char *cmd, const char *msg);
/* Append a --set; false past TOPO_MAX_SETS. */
bool cli_add_set(const char **sets, int *n, const char *arg);
/* --until TIME, at most the longest run a stamp can carry. */
bool cli_until_parse(const char *s, ps_t *until, char *err, size_t len);
/* The topology file an argument names (installed configs by name). */
const char *cli_topology_path(const char *arg);

/* The launcher's commands (mrcemu_launch.c). */
int cmd_run(int argc, char **argv);
int cmd_up(int argc, char **argv);
int cmd_down(int argc, char **argv);
int cmd_list(int argc, char **argv);
int cmd_ctl(int argc, char **argv);

#endif
