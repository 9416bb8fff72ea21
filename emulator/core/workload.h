/* emulator/core/workload.h — the workload file of docs/topology.md: messages with a
 * post time, a source and destination node, a size and dependencies. */
#ifndef EMULATOR_WORKLOAD_H
#define EMULATOR_WORKLOAD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "time.h"
#include "topology.h"

#define WORKLOAD_MAX_AFTER 8

struct workload_msg {
	uint64_t id;
	ps_t at;
	int src, dst; /* topology node indices (NICs) */
	uint64_t bytes;
	int nafter;
	uint64_t after[WORKLOAD_MAX_AFTER]; /* message ids */
	int line;
};

struct workload {
	struct workload_msg *msgs;
	size_t count;
};

/* Load and check a workload file against a topology: ids unique, nodes are
 * NICs, src != dst, `after` names only messages that the posting node sends
 * or receives (docs/topology.md, Workload file).  Errors: "FILE:LINE: column: reason". */
bool workload_load(const char *path, const struct topology *t, struct workload *w, char *err,
		   size_t errlen);
void workload_free(struct workload *w);

/* Index of message id, or -1. */
long workload_find(const struct workload *w, uint64_t id);

#endif
