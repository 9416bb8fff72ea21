/* emulator/launch/report.h — `mrcemu report`: a run's records drawn as one page,
 * OUTDIR/report/index.html (docs/cli.md).  The figures are drawn by
 * scripts/report (Python and matplotlib); this finds that script beside
 * the mrcemu binary (the source tree's scripts/, or share/mrcemu/ once
 * installed) and runs it with /usr/bin/python3. */
#ifndef EMULATOR_REPORT_H
#define EMULATOR_REPORT_H

#include <stdbool.h>
#include <stdio.h>

/* Write the report of the run in `outdir`, or with `other`, a comparison of
 * the two runs; `page_dir` NULL for the default folder.  Prints the page's
 * path on `out` unless quiet.  Returns 0, 1 when the page could not be
 * written, 2 on bad input (one line on `err`). */
int report_write(const char *outdir, const char *other, const char *page_dir, bool quiet,
		 FILE *err);

#endif
