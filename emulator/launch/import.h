/* emulator/launch/import.h — scenarios of other simulators as mrcemu topologies
 * and workloads (docs/cli.md, mrcemu import). */
#ifndef EMULATOR_IMPORT_H
#define EMULATOR_IMPORT_H

#include <stdio.h>

/* htsim: a two-tier `.topo` file and a connection matrix become
 * OUTDIR/NAME.ini and OUTDIR/NAME.csv (NAME from the matrix's file name);
 * prints the .ini's path.  Returns 0, or 2 with one line on `err` (file,
 * line, what, what is allowed). */
int import_htsim(const char *topo, const char *cm, const char *outdir, FILE *err);

#endif
