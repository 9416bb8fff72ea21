/* tests/tools/chakra-coll.c — a Chakra trace of one collective per rank,
 * as Chakra's generator and ASTRA-sim's microbenchmarks write them, for
 * any number of ranks (scripts/bench-chakra):
 *
 *   chakra-coll DIR/NAME RANKS COMM_TYPE BYTES
 *
 * writes DIR/NAME.<rank>.et for ranks 0 .. RANKS-1, each one COMM_COLL node
 * of CollectiveCommType COMM_TYPE (0 ALL_REDUCE ... 9 BARRIER) and
 * comm_size BYTES. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

#include "chakra/chakra.h"

int main(int argc, char **argv)
{
	char path[4200];

	if (argc != 5) {
		fprintf(stderr, "usage: chakra-coll DIR/NAME RANKS COMM_TYPE BYTES\n");
		return 2;
	}
	int ranks = atoi(argv[2]), type = atoi(argv[3]);
	uint64_t bytes = strtoull(argv[4], NULL, 10);
	if (ranks < 1 || type < 0 || type > CHAKRA_BARRIER) {
		fprintf(stderr, "chakra-coll: RANKS >= 1, COMM_TYPE 0..9\n");
		return 2;
	}
	for (int r = 0; r < ranks; r++) {
		struct chakra_spec s = {.id = 1,
					.name = chakra_coll_name((enum chakra_coll)type),
					.type = CHAKRA_COLL,
					.coll = (enum chakra_coll)type,
					.bytes = bytes};
		FILE *f;
		snprintf(path, sizeof(path), "%s.%d.et", argv[1], r);
		if (!(f = chakra_write_open(path)) || !chakra_write_node(f, &s) || fclose(f)) {
			perror(path);
			return 1;
		}
	}
	return 0;
}
