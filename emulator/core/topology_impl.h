/* emulator/core/topology_impl.h — the topology loader's state, shared by the
 * files that read a topology (private to emulator/core/topology*.c):
 * topology.c declares nodes and links, connects and settles them;
 * topology_read.c reads the file's lines and the --set overrides;
 * topology_attrs.c applies and checks each section's attributes. */
#ifndef EMULATOR_TOPOLOGY_IMPL_H
#define EMULATOR_TOPOLOGY_IMPL_H

#include <stdbool.h>
#include <stdio.h>

#include "config.h"
#include "topology.h"

enum sec_kind {
	SEC_EMULATION,
	SEC_NIC_DEFAULTS,
	SEC_SWITCH_DEFAULTS,
	SEC_NODE,
	SEC_LINK,
	SEC_WORKLOAD
};

struct sec {
	enum sec_kind kind;
	int index; /* node or link */
	int line;
};

struct kv {
	int sec, line;
	char *name, *value;
};

struct loader {
	struct topology *t;
	FILE *f;
	char *buf;
	size_t bufcap;
	int line;
	struct sec *secs;
	int nsecs, cur;
	struct kv *kvs;
	int nkvs;
	char (*ends)[2][TOPO_NAME_MAX]; /* each link's node names as written */
	bool *link_delay_set;
	int *ip_line;
	int *mac_line; /* an external's own `mac`, 0 if none */
	struct nic_attrs nic_def;
	struct switch_attrs sw_def;
	bool failed;
	char *err;
	size_t errlen;
};

/* Record the first error, "FILE:LINE: ATTRIBUTE: reason (allowed: RANGE)". */
void loader_fail(struct loader *ld, int line, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* p grown to hold element n (doubling); aborts when out of memory. */
void *loader_grow(void *p, int n, size_t size);

/* topology.c: a section of the file, a [nic NAME] or [switch NAME], a [link A B]. */
void loader_add_section(struct loader *ld, enum sec_kind kind, int index, const char *hdr);
void loader_declare_node(struct loader *ld, const char *hdr, enum node_kind kind, const char *name);
void loader_declare_link(struct loader *ld, const char *hdr, const char *a, const char *b);

/* topology_read.c: every section and attribute line of ld->f, with its line. */
void loader_read_file(struct loader *ld);
/* topology_read.c: the --set overrides, after the file's own attributes. */
void loader_apply_sets(struct loader *ld, const char *const *sets, int nsets);

/* topology_attrs.c: [emulation], [workload] and each node's and link's
 * attributes checked, then applied over the [nic] and [switch] defaults. */
void loader_check_attributes(struct loader *ld);
void loader_apply_node_attributes(struct loader *ld);
/* topology_attrs.c: one rank per NIC when [workload] names no ranks. */
void loader_default_ranks(struct loader *ld);

#endif
