/* emulator/core/topology_attrs.c — applying a topology file's attributes
 * (docs/topology.md): [emulation] and [workload], each node's own address,
 * MAC, ports and mirrors, and each link's, checked against the attribute
 * table (config.h) with the line that set them. */
#include <ctype.h>
#include <errno.h>
#include <ini.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "topology_impl.h"

/* ---- applying attributes ---- */

static void set_or_fail(struct loader *ld, const struct kv *kv, enum attr_scope scope, void *obj)
{
	char why[TOPO_ERR_MAX];

	if (!config_set(scope, obj, kv->name, kv->value, why, sizeof why)) {
		loader_fail(ld, kv->line, "%s", why);
	}
}

/* A path of [workload], relative to the topology's folder. */
static void workload_set_path(struct loader *ld, const struct kv *kv, char *into, size_t len,
			      const char *allowed)
{
	struct topology *t = ld->t;
	int n;

	if (!kv->value[0]) {
		loader_fail(ld, kv->line, "%s: needs a value (allowed: %s)", kv->name, allowed);
		return;
	}
	if (kv->value[0] == '/') {
		n = snprintf(into, len, "%s", kv->value);
	} else {
		n = snprintf(into, len, "%s/%s", t->dir, kv->value);
	}
	if (n < 0 || (size_t)n >= len) {
		loader_fail(ld, kv->line, "%s: path too long (allowed: %zu characters)", kv->name,
			    len - 1);
	}
}

/* `ranks = h0 h1 ...`: Chakra rank i runs on the i-th NIC named. */
static void workload_ranks(struct loader *ld, const struct kv *kv)
{
	struct topology *t = ld->t;
	char *v = strdup(kv->value), *save = NULL;

	for (char *tok = strtok_r(v, " \t", &save); tok && !ld->failed;
	     tok = strtok_r(NULL, " \t", &save)) {
		int node = topology_find(t, tok);
		if (node < 0 || t->nodes[node].kind != NODE_NIC) {
			loader_fail(
			    ld, kv->line,
			    "ranks: '%s' is not a NIC of this topology (allowed: NIC names)", tok);
			break;
		}
		for (int r = 0; r < t->nranks; r++) {
			if (t->ranks[r] == node) {
				loader_fail(ld, kv->line,
					    "ranks: %s is named twice (allowed: one rank a NIC)",
					    tok);
			}
		}
		t->ranks = loader_grow(t->ranks, t->nranks, sizeof *t->ranks);
		t->ranks[t->nranks++] = node;
	}
	if (!ld->failed && !t->nranks) {
		loader_fail(ld, kv->line,
			    "ranks: needs a value (allowed: NIC names, rank 0 first)");
	}
	free(v);
}

/* [workload] <Collective>Algorithm (docs/chakra.md, Collectives): the
 * values are enum chakra_algo's (1 ring, 2 direct, 3 binary tree), by
 * CollectiveCommType. */
static const struct {
	const char *name;
	int type;
	const char *values[4];
} coll_algos[] = {
    {"AllReduceAlgorithm", 0, {"", "ring", "direct", NULL}},
    {"ReduceAlgorithm", 1, {"", "ring", NULL, "tree"}},
    {"AllGatherAlgorithm", 2, {"", "ring", "direct", NULL}},
    {"BroadcastAlgorithm", 5, {"", "ring", NULL, "tree"}},
    {"ReduceScatterAlgorithm", 7, {"", "ring", "direct", NULL}},
};

static bool workload_algo(struct loader *ld, const struct kv *kv)
{
	for (size_t i = 0; i < sizeof coll_algos / sizeof coll_algos[0]; i++) {
		if (strcmp(kv->name, coll_algos[i].name)) {
			continue;
		}
		for (int v = 1; v < 4; v++) {
			if (coll_algos[i].values[v] &&
			    !strcmp(kv->value, coll_algos[i].values[v])) {
				ld->t->coll_algo[coll_algos[i].type] = (uint8_t)v;
				return true;
			}
		}
		loader_fail(ld, kv->line, "%s: '%s' is not an algorithm of it (allowed: ring, %s)",
			    kv->name, kv->value, coll_algos[i].values[2] ? "direct" : "tree");
		return true;
	}
	return false;
}

static void workload_path(struct loader *ld, const struct kv *kv)
{
	struct topology *t = ld->t;

	if (workload_algo(ld, kv)) {
		return;
	} else if (!strcmp(kv->name, "file")) {
		workload_set_path(ld, kv, t->workload, sizeof t->workload, "a CSV path");
	} else if (!strcmp(kv->name, "chakra")) {
		workload_set_path(ld, kv, t->chakra, sizeof t->chakra,
				  "DIR/NAME of Chakra traces NAME.<rank>.et");
	} else if (!strcmp(kv->name, "ranks")) {
		workload_ranks(ld, kv);
	} else {
		loader_fail(ld, kv->line,
			    "%s: unknown attribute of [workload] (allowed: file, chakra, ranks, "
			    "AllReduceAlgorithm, ReduceScatterAlgorithm, AllGatherAlgorithm, "
			    "BroadcastAlgorithm, ReduceAlgorithm)",
			    kv->name);
	}
	if (!ld->failed && t->workload[0] && t->chakra[0]) {
		loader_fail(ld, kv->line,
			    "%s: file and chakra are both set (allowed: one workload)", kv->name);
	}
}

/* Without `ranks`, Chakra rank i is the i-th NIC in topology order. */
void loader_default_ranks(struct loader *ld)
{
	struct topology *t = ld->t;

	if (t->nranks) {
		return;
	}
	for (int i = 0; i < t->nnodes; i++) {
		if (t->nodes[i].kind == NODE_NIC) {
			t->ranks = loader_grow(t->ranks, t->nranks, sizeof *t->ranks);
			t->ranks[t->nranks++] = i;
		}
	}
}

/* "aa:bb:cc:dd:ee:ff", a unicast address other than all zeros. */
static bool parse_mac(const char *s, uint8_t mac[6])
{
	unsigned v[6];
	int end = 0;

	if (sscanf(s, "%2x:%2x:%2x:%2x:%2x:%2x%n", &v[0], &v[1], &v[2], &v[3], &v[4], &v[5],
		   &end) != 6 ||
	    end != 17 || s[end]) {
		return false;
	}
	for (int i = 0; i < 6; i++) {
		mac[i] = (uint8_t)v[i];
	}
	return !(mac[0] & 1) && (v[0] | v[1] | v[2] | v[3] | v[4] | v[5]);
}

static bool ifname_ok(const char *s, size_t max)
{
	size_t n = strlen(s);

	if (!n || n > max)
		return false;
	for (size_t i = 0; i < n; i++) {
		if (!isalnum((unsigned char)s[i]) && !strchr("-_.", s[i]))
			return false;
	}
	return true;
}

/* "PORT -> IFNAME" or "PORT -> IFNAME@NETNS". */
static bool parse_mirror(const char *s, struct topo_mirror *m)
{
	char name[64], *at;
	int port, end = 0;

	memset(m, 0, sizeof *m);
	if (sscanf(s, "%d -> %63s%n", &port, name, &end) != 2 || s[end] || port < 0 ||
	    port >= TOPO_MAX_PORTS) {
		return false;
	}
	if ((at = strchr(name, '@'))) {
		*at++ = 0;
		if (!ifname_ok(at, TOPO_NAME_MAX - 1))
			return false;
		snprintf(m->netns, sizeof m->netns, "%s", at);
	}
	if (!ifname_ok(name, sizeof m->ifname - 1))
		return false;
	memcpy(m->ifname, name, strlen(name) + 1); /* its length checked just above */
	m->port = port;
	return true;
}

/* `ports = KIND_A KIND_B`: the port kind of each end, in the order the
 * link names its nodes; a NIC or switch end only (an external has none). */
static void link_ports(struct loader *ld, const struct kv *kv, struct topo_link *l)
{
	static const char *const names[] = {"packet", "tap", "dpdk"};
	char w[2][16];
	int end = 0, n = sscanf(kv->value, "%15s %15s%n", w[0], w[1], &end);

	for (int e = 0; n == 2 && !kv->value[end] && e < 2; e++) {
		int k = 0;
		while (k < 3 && strcmp(w[e], names[k]))
			k++;
		if (k == 3)
			break;
		l->kind[e] = (enum topo_port_kind)k;
		if (e == 1)
			return;
	}
	loader_fail(ld, kv->line,
		    "ports: '%s' is not two port kinds (allowed: packet, tap or dpdk for "
		    "each end, e.g. ports = tap packet)",
		    kv->value);
}

/* A node attribute line, checked against a scratch copy now (so errors come
 * in file order) and applied after every default is known. */
static void check_node_attr(struct loader *ld, const struct kv *kv, const struct topo_node *n)
{
	struct nic_attrs nic = ld->nic_def;
	struct switch_attrs sw = ld->sw_def;

	uint8_t mac[6];
	struct topo_mirror m;

	if (n->kind == NODE_SWITCH && !strcmp(kv->name, "mirror")) {
		if (!parse_mirror(kv->value, &m)) {
			loader_fail(
			    ld, kv->line,
			    "mirror: '%s' is not PORT -> IFNAME[@NETNS] (allowed: a port number, "
			    "an interface name of 1..15 letters, digits, '-', '_' or '.', a "
			    "namespace name)",
			    kv->value);
		}
	} else if (n->kind == NODE_SWITCH) {
		set_or_fail(ld, kv, ATTR_SWITCH, &sw);
	} else if (n->kind == NODE_NIC || !strcmp(kv->name, "ip")) {
		set_or_fail(ld, kv, ATTR_NIC, &nic);
	} else if (!strcmp(kv->name, "mac")) {
		if (!parse_mac(kv->value, mac)) {
			loader_fail(
			    ld, kv->line,
			    "mac: '%s' is not a unicast MAC address (allowed: six hex bytes "
			    "aa:bb:cc:dd:ee:ff, multicast bit clear, not all zeros)",
			    kv->value);
		}
	} else {
		loader_fail(ld, kv->line, "%s: unknown attribute of [external] (allowed: ip, mac)",
			    kv->name);
	}
}

/* The name becomes part of paths and namespace names (docs/topology.md,
 * Names): checked here, so `sim` refuses what `run` would. */
static void check_emulation_name(struct loader *ld, const struct kv *kv)
{
	char why[160];

	if (!topology_name_check(ld->t->emu.name, true, why, sizeof(why)))
		loader_fail(ld, kv->line, "name: %s", why);
}

/* First pass over attribute lines, in file order. */
void loader_check_attributes(struct loader *ld)
{
	for (int i = 0; i < ld->nkvs && !ld->failed; i++) {
		const struct kv *kv = &ld->kvs[i];
		const struct sec *s = &ld->secs[kv->sec];

		switch (s->kind) {
		case SEC_EMULATION:
			set_or_fail(ld, kv, ATTR_EMULATION, &ld->t->emu);
			if (!ld->failed && !strcmp(kv->name, "name"))
				check_emulation_name(ld, kv);
			break;
		case SEC_NIC_DEFAULTS:
			if (!strcmp(kv->name, "ip")) {
				loader_fail(ld, kv->line,
					    "ip: is per node (allowed: in [nic NAME])");
			} else {
				set_or_fail(ld, kv, ATTR_NIC, &ld->nic_def);
			}
			break;
		case SEC_SWITCH_DEFAULTS:
			set_or_fail(ld, kv, ATTR_SWITCH, &ld->sw_def);
			break;
		case SEC_NODE:
			check_node_attr(ld, kv, &ld->t->nodes[s->index]);
			break;
		case SEC_LINK:
			if (!strcmp(kv->name, "drop")) {
				break; /* names nodes: see apply_drops() */
			}
			if (!strcmp(kv->name, "ports")) {
				link_ports(ld, kv, &ld->t->links[s->index]);
				break;
			}
			set_or_fail(ld, kv, ATTR_LINK, &ld->t->links[s->index].attrs);
			if (!strcmp(kv->name, "delay")) {
				ld->link_delay_set[s->index] = true;
			}
			break;
		case SEC_WORKLOAD:
			workload_path(ld, kv);
			break;
		}
	}
}

void loader_apply_node_attributes(struct loader *ld)
{
	struct topology *t = ld->t;

	for (int i = 0; i < t->nnodes; i++) {
		t->nodes[i].nic = ld->nic_def;
		t->nodes[i].sw = ld->sw_def;
	}
	for (int i = 0; i < ld->nkvs && !ld->failed; i++) {
		const struct kv *kv = &ld->kvs[i];
		const struct sec *s = &ld->secs[kv->sec];
		if (s->kind != SEC_NODE) {
			continue;
		}
		struct topo_node *n = &t->nodes[s->index];
		if (n->kind == NODE_SWITCH && !strcmp(kv->name, "mirror")) {
			if (n->nmirrors == TOPO_MIRROR_MAX) {
				loader_fail(ld, kv->line,
					    "mirror: more than %d on %s (allowed: %d)",
					    TOPO_MIRROR_MAX, n->name, TOPO_MIRROR_MAX);
				break;
			}
			struct topo_mirror *m = &n->mirrors[n->nmirrors++];
			parse_mirror(kv->value, m); /* checked in check_node_attr */
			m->line = kv->line;
		} else if (n->kind == NODE_SWITCH) {
			set_or_fail(ld, kv, ATTR_SWITCH, &n->sw);
		} else if (!strcmp(kv->name, "mac")) {
			parse_mac(kv->value, n->mac); /* checked in check_node_attr */
			ld->mac_line[s->index] = kv->line;
		} else {
			set_or_fail(ld, kv, ATTR_NIC, &n->nic);
			if (!strcmp(kv->name, "ip")) {
				ld->ip_line[s->index] = kv->line;
			}
		}
	}
}
