/* emulator/chakra/chakra_export.h — `mrcemu export chakra|csv` (chakra_export.c). */
#ifndef EMULATOR_CHAKRA_EXPORT_H
#define EMULATOR_CHAKRA_EXPORT_H

/* The command: argv[0] is "export"; returns the exit status. */
int chakra_export_main(int argc, char **argv, const char *default_topology);

#endif
