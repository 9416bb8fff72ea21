/* emulator/core/topology.c — loading a topology file (docs/topology.md, Topology
 * file): its nodes and links, checking them, and deriving ports, MACs and the
 * ECMP routes of every switch (docs/protocol.md §9: every shortest path).
 * topology_read.c reads the file's lines (libinih), topology_attrs.c applies
 * each section's attributes; the loader they share is topology_impl.h.
 *
 * The file is read in one pass that only records sections and attribute
 * lines with their line numbers; everything is then applied in an order that
 * does not depend on where sections appear: [nic] and [switch] defaults
 * first, then each node's own overrides, then links, then drop rules (which
 * name nodes).
 *
 * Delay rule (docs/protocol.md §12 rule 13, "the link's delay is the NIC's
 * Delay"): a [link] that sets `delay` sets the Delay of the NICs it attaches;
 * a [link] that does not takes its delay from the NIC's Delay ([nic] default
 * or the node's own), and two NICs linked back to back must then agree. */
#include "topology.h"

#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"
#include "topology_impl.h"

static const char *const kind_names[] = {"NIC", "switch", "external"};

/* The first error wins: "FILE:LINE: ATTRIBUTE: reason (allowed: RANGE)". */
void loader_fail(struct loader *ld, int line, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (ld->failed) {
		return;
	}
	ld->failed = true;
	n = snprintf(ld->err, ld->errlen, "%s:%d: ", ld->t->path, line);
	if (n >= 0 && (size_t)n < ld->errlen) {
		va_start(ap, fmt);
		vsnprintf(ld->err + n, ld->errlen - (size_t)n, fmt, ap);
		va_end(ap);
	}
	config_escape(ld->err, ld->errlen);
}

void *loader_grow(void *p, int n, size_t size)
{
	/* Double at powers of two so appending one at a time stays linear. */
	if (n & (n - 1)) {
		return p;
	}
	void *q = realloc(p, (size_t)(n ? 2 * n : 1) * size);
	if (!q) {
		fprintf(stderr, "mrcemu: out of memory reading a topology\n");
		abort();
	}
	return q;
}

static uint64_t name_hash(const char *name)
{
	uint64_t h = 0xCBF29CE484222325ULL;

	while (*name)
		h = (h ^ (unsigned char)*name++) * 0x100000001B3ULL;
	return h;
}

int topology_find(const struct topology *t, const char *name)
{
	uintptr_t at = (uintptr_t)hmap_get(&t->by_name, name_hash(name));

	if (at && !strcmp(t->nodes[at - 1].name, name))
		return (int)at - 1;
	/* Two names with one 64-bit hash: the second is found the slow way. */
	for (int i = 0; t->name_clash && i < t->nnodes; i++)
		if (!strcmp(t->nodes[i].name, name))
			return i;
	return -1;
}

/* Hash node i's name (declared once: declare_node checks). */
static void add_name(struct topology *t, int i)
{
	uint64_t h = name_hash(t->nodes[i].name);

	if (hmap_get(&t->by_name, h))
		t->name_clash = true;
	else if (!hmap_put(&t->by_name, h, (void *)(uintptr_t)(i + 1))) {
		fprintf(stderr, "mrcemu: out of memory reading a topology\n");
		abort();
	}
}

/* Add endpoint i's address; the node that already has it, or -1. */
static int add_ip(struct topology *t, int i)
{
	uint32_t ip = t->nodes[i].ip, n = 16;
	int other = topology_find_ip(t, ip);

	if (other >= 0)
		return other;
	if (!t->by_ip) {
		while (n < 2 * (uint32_t)t->nnodes)
			n <<= 1;
		t->by_ip = malloc(n * sizeof(*t->by_ip));
		if (!t->by_ip) {
			fprintf(stderr, "mrcemu: out of memory reading a topology\n");
			abort();
		}
		for (uint32_t k = 0; k < n; k++)
			t->by_ip[k].node = -1;
		t->ip_mask = n - 1;
	}
	uint32_t k = (uint32_t)((ip * 0x9E3779B97F4A7C15ULL) >> 32) & t->ip_mask;
	while (t->by_ip[k].node >= 0)
		k = (k + 1) & t->ip_mask;
	t->by_ip[k] = (struct topo_ip_slot){ip, i};
	return -1;
}

bool topology_name_check(const char *name, bool emulation, char *why, size_t len)
{
	const char *allowed =
	    emulation ? "letters, digits, '_' and '-'" : "letters, digits and '_'";
	size_t n = strlen(name);

	if (n >= 1 && n < TOPO_NAME_MAX && isalnum((unsigned char)name[0])) {
		size_t i = 1;
		while (i < n && (isalnum((unsigned char)name[i]) || name[i] == '_' ||
				 (emulation && name[i] == '-')))
			i++;
		if (i == n)
			return true;
	}
	snprintf(why, len, "%s name '%.*s' (allowed: 1..%d %s, starting with a letter or digit)",
		 emulation ? "emulation" : "node", TOPO_NAME_MAX + 8, name, TOPO_NAME_MAX - 1,
		 allowed);
	return false;
}

static bool check_name(struct loader *ld, const char *hdr, const char *name)
{
	char why[160];

	if (!topology_name_check(name, false, why, sizeof(why))) {
		loader_fail(ld, ld->line, "[%s]: %s", hdr, why);
		return false;
	}
	return true;
}

/* [emulation], [nic], [switch] and [workload] come once: a second one
 * would silently override the first, attribute by attribute. */
void loader_add_section(struct loader *ld, enum sec_kind kind, int index, const char *hdr)
{
	for (int i = 0; kind != SEC_NODE && kind != SEC_LINK && i < ld->nsecs; i++) {
		if (ld->secs[i].kind == kind) {
			loader_fail(ld, ld->line,
				    "[%s]: section already given (line %d; allowed: once)", hdr,
				    ld->secs[i].line);
			return;
		}
	}
	ld->secs = loader_grow(ld->secs, ld->nsecs, sizeof *ld->secs);
	ld->secs[ld->nsecs] = (struct sec){kind, index, ld->line};
	ld->cur = ld->nsecs++;
}

void loader_declare_node(struct loader *ld, const char *hdr, enum node_kind kind, const char *name)
{
	struct topology *t = ld->t;
	int other = topology_find(t, name);

	if (!check_name(ld, hdr, name)) {
		return;
	}
	if (other >= 0) {
		loader_fail(ld, ld->line, "[%s]: node %s is already declared (line %d)", hdr, name,
			    t->nodes[other].line);
		return;
	}
	t->nodes = loader_grow(t->nodes, t->nnodes, sizeof *t->nodes);
	ld->ip_line = loader_grow(ld->ip_line, t->nnodes, sizeof *ld->ip_line);
	ld->mac_line = loader_grow(ld->mac_line, t->nnodes, sizeof *ld->mac_line);
	struct topo_node *n = &t->nodes[t->nnodes];
	memset(n, 0, sizeof *n);
	snprintf(n->name, sizeof n->name, "%s", name);
	n->kind = kind;
	n->line = ld->line;
	ld->ip_line[t->nnodes] = 0;
	ld->mac_line[t->nnodes] = 0;
	add_name(t, t->nnodes);
	loader_add_section(ld, SEC_NODE, t->nnodes++, hdr);
}

void loader_declare_link(struct loader *ld, const char *hdr, const char *a, const char *b)
{
	struct topology *t = ld->t;

	if (!check_name(ld, hdr, a) || !check_name(ld, hdr, b)) {
		return;
	}
	if (!strcmp(a, b)) {
		loader_fail(ld, ld->line,
			    "link: [%s] links %s to itself (allowed: two different nodes)", hdr, a);
		return;
	}
	t->links = loader_grow(t->links, t->nlinks, sizeof *t->links);
	ld->ends = loader_grow(ld->ends, t->nlinks, sizeof *ld->ends);
	ld->link_delay_set = loader_grow(ld->link_delay_set, t->nlinks, sizeof *ld->link_delay_set);
	struct topo_link *l = &t->links[t->nlinks];
	memset(l, 0, sizeof *l);
	l->a = l->b = -1;
	l->line = ld->line;
	config_link_defaults(&l->attrs);
	snprintf(ld->ends[t->nlinks][0], TOPO_NAME_MAX, "%s", a);
	snprintf(ld->ends[t->nlinks][1], TOPO_NAME_MAX, "%s", b);
	ld->link_delay_set[t->nlinks] = false;
	loader_add_section(ld, SEC_LINK, t->nlinks++, hdr);
}

/* ---- links and ports ---- */

static void attach(struct loader *ld, int li, int end)
{
	struct topology *t = ld->t;
	struct topo_link *l = &t->links[li];
	int node = end ? l->b : l->a;
	struct topo_node *n = &t->nodes[node];

	if (n->kind != NODE_SWITCH && n->nports > 0) {
		loader_fail(
		    ld, l->line,
		    "link: %s %s already has its link (line %d) (allowed: one link: a %s has "
		    "one port)",
		    kind_names[n->kind], n->name, t->links[n->ports[0].link].line,
		    kind_names[n->kind]);
		return;
	}
	if (n->nports >= TOPO_MAX_PORTS) {
		loader_fail(ld, l->line, "link: %s has more than %d ports (allowed: at most %d)",
			    n->name, TOPO_MAX_PORTS, TOPO_MAX_PORTS);
		return;
	}
	*(end ? &l->b_port : &l->a_port) = n->nports;
	n->ports[n->nports++] = (struct topo_port){li, end ? l->a : l->b, -1};
}

static void connect_links(struct loader *ld)
{
	struct topology *t = ld->t;

	for (int i = 0; i < t->nlinks && !ld->failed; i++) {
		struct topo_link *l = &t->links[i];
		for (int e = 0; e < 2 && !ld->failed; e++) {
			int node = topology_find(t, ld->ends[i][e]);
			if (node < 0) {
				loader_fail(
				    ld, l->line,
				    "link: unknown node '%s' (allowed: a node declared with "
				    "[nic NAME], [switch NAME] or [external NAME])",
				    ld->ends[i][e]);
			}
			*(e ? &l->b : &l->a) = node;
		}
		for (int e = 0; e < 2 && !ld->failed; e++) {
			attach(ld, i, e);
		}
		if (!ld->failed) {
			t->nodes[l->a].ports[l->a_port].peer_port = l->b_port;
			t->nodes[l->b].ports[l->b_port].peer_port = l->a_port;
		}
	}
}

/* docs/protocol.md §12 rule 13: the link's delay is the NIC's Delay. */
static void settle_delay(struct loader *ld, int li)
{
	struct topology *t = ld->t;
	struct topo_link *l = &t->links[li];
	struct topo_node *a = &t->nodes[l->a], *b = &t->nodes[l->b];

	if (ld->link_delay_set[li]) {
		if (a->kind == NODE_NIC) {
			a->nic.delay = l->attrs.delay;
		}
		if (b->kind == NODE_NIC) {
			b->nic.delay = l->attrs.delay;
		}
		return;
	}
	if (a->kind == NODE_NIC && b->kind == NODE_NIC && a->nic.delay != b->nic.delay) {
		loader_fail(
		    ld, l->line,
		    "delay: %s and %s have different Delay (allowed: set delay on the link)",
		    a->name, b->name);
	} else if (a->kind == NODE_NIC) {
		l->attrs.delay = a->nic.delay;
	} else if (b->kind == NODE_NIC) {
		l->attrs.delay = b->nic.delay;
	}
}

static void node_dscp(const struct topo_node *n, uint8_t v[6])
{
	if (n->kind == NODE_SWITCH) {
		const struct switch_attrs *s = &n->sw;
		uint8_t sv[6] = {s->dscp_trimmable, s->dscp_trimmable_retx,
				 s->dscp_no_trim,   s->dscp_control,
				 s->dscp_trimmed,   s->dscp_trimmed_last_hop};
		memcpy(v, sv, 6);
	} else {
		const struct nic_attrs *c = &n->nic;
		uint8_t cv[6] = {c->dscp_trimmable, c->dscp_trimmable_retx,
				 c->dscp_no_trim,   c->dscp_control,
				 c->dscp_trimmed,   c->dscp_trimmed_last_hop};
		memcpy(v, cv, 6);
	}
}

/* docs/protocol.md §3: codepoints that differ between NICs and switches are
 * refused at start. */
static void check_dscp(struct loader *ld, const struct topo_node *n, const struct topo_node *ref)
{
	static const char *const names[] = {"DscpTrimmable", "DscpTrimmableRetx",
					    "DscpNoTrim",    "DscpControl",
					    "DscpTrimmed",   "DscpTrimmedLastHop"};
	uint8_t v[6], rv[6];

	node_dscp(n, v);
	node_dscp(ref, rv);
	for (int i = 0; i < 6; i++) {
		if (v[i] != rv[i]) {
			loader_fail(
			    ld, n->line,
			    "%s: %s's %u differs from %s's %u (allowed: the same codepoints on "
			    "every NIC and switch, docs/protocol.md §3)",
			    names[i], n->name, v[i], ref->name, rv[i]);
			return;
		}
	}
}

/* Per-node checks, after overrides: ip, links, derived values. */
static void settle_nodes(struct loader *ld)
{
	struct topology *t = ld->t;
	char why[TOPO_ERR_MAX];
	int ref = -1;

	for (int i = 0; i < t->nlinks && !ld->failed; i++) {
		settle_delay(ld, i);
	}
	for (int i = 0; i < t->nnodes && !ld->failed; i++) {
		struct topo_node *n = &t->nodes[i];
		if (n->kind == NODE_SWITCH) {
			if (!config_switch_check(&n->sw, why, sizeof why)) {
				loader_fail(ld, n->line, "%s", why);
			}
			continue;
		}
		n->ip = n->nic.ip;
		if (!n->ip) {
			loader_fail(ld, n->line,
				    "ip: %s %s has no ip (allowed: a unicast IPv4 address)",
				    kind_names[n->kind], n->name);
		} else if (!n->nports) {
			loader_fail(ld, n->line,
				    "link: %s %s has no link (allowed: exactly one [link])",
				    kind_names[n->kind], n->name);
		}
		int other = add_ip(t, i);
		if (!ld->failed && other >= 0) {
			char a[16];
			loader_fail(ld, ld->ip_line[i], "ip: %s is already %s's address (line %d)",
				    ipv4_format(n->ip, a, sizeof a), t->nodes[other].name,
				    ld->ip_line[other]);
		}
		if (n->kind == NODE_NIC) {
			config_nic_resolve(&n->nic);
			if (!ld->failed && !config_nic_check(&n->nic, why, sizeof why)) {
				loader_fail(ld, n->line, "%s", why);
			}
			ref = ref < 0 ? i : ref;
		}
	}
	for (int i = 0; i < t->nnodes && !ld->failed && ref >= 0; i++) {
		if (t->nodes[i].kind != NODE_EXTERNAL) {
			check_dscp(ld, &t->nodes[i], &t->nodes[ref]);
		}
	}
}

/* ---- drop rules (topology_drops.c) ---- */

static void apply_drops(struct loader *ld)
{
	char why[TOPO_ERR_MAX];

	for (int i = 0; i < ld->nkvs && !ld->failed; i++) {
		const struct kv *kv = &ld->kvs[i];
		const struct sec *s = &ld->secs[kv->sec];
		if (s->kind == SEC_LINK && !strcmp(kv->name, "drop") &&
		    !topology_parse_drops(ld->t, kv->value, &ld->t->links[s->index].attrs, why,
					  sizeof why)) {
			loader_fail(ld, kv->line, "%s", why);
		}
	}
}

/* ---- routes (topology_routes.c) ---- */

static void compute_routes(struct loader *ld)
{
	char why[TOPO_ERR_MAX];
	int bad;

	if (!topology_routes(ld->t, &bad, why, sizeof why)) {
		loader_fail(ld, ld->t->nodes[bad].line, "%s", why);
	}
}

/* docs/protocol.md §§5, 9: `ConfigBaseRTT = auto` and `EgressQueueLimit =
 * auto` take the fabric's round trip, known once the routes are. */
static void settle_auto(struct loader *ld)
{
	struct topology *t = ld->t;
	char why[TOPO_ERR_MAX];
	ps_t rtt = 0;

	for (int i = 0; i < t->nnodes && !ld->failed; i++) {
		struct topo_node *n = &t->nodes[i];
		bool nic_auto = n->kind == NODE_NIC && n->nic.config_base_rtt_auto;
		bool sw_auto = n->kind == NODE_SWITCH && n->sw.egress_queue_limit_auto;
		if (!nic_auto && !sw_auto) {
			continue;
		}
		if (!rtt && !(rtt = topology_fabric_rtt(t))) {
			loader_fail(ld, n->line,
				    "ConfigBaseRTT: auto needs a path between two NICs");
			return;
		}
		t->auto_rtt = rtt;
		if (sw_auto) {
			n->sw.queue_rtt = rtt;
			continue;
		}
		n->nic.config_base_rtt = rtt;
		config_nic_resolve(&n->nic);
		if (!config_nic_check(&n->nic, why, sizeof why)) {
			loader_fail(ld, n->line, "%s", why);
		}
	}
}

uint64_t topology_port_rate(const struct topology *t, int node, int port)
{
	const struct topo_node *n = &t->nodes[node];
	const struct topo_port *p = &n->ports[port];
	const struct topo_node *peer = &t->nodes[p->peer];
	uint64_t rate = t->links[p->link].attrs.rate;

	/* docs/protocol.md §12 rule 13: a NIC's link runs at min(link rate, DataRate). */
	if (n->kind == NODE_NIC && n->nic.data_rate < rate) {
		rate = n->nic.data_rate;
	}
	if (peer->kind == NODE_NIC && peer->nic.data_rate < rate) {
		rate = peer->nic.data_rate;
	}
	return rate;
}

/* 02:00:00:00:HI:LO with HI:LO = node index + 1: locally administered,
 * unique, and the first two nodes get docs/vectors.md's 02:00:00:00:00:01/02. */
static void assign_macs(struct topology *t)
{
	for (int i = 0; i < t->nnodes; i++) {
		uint8_t *m = t->nodes[i].mac;
		m[0] = 0x02;
		m[1] = m[2] = m[3] = 0;
		m[4] = (uint8_t)((i + 1) >> 8);
		m[5] = (uint8_t)((i + 1) & 0xff);
	}
}

/* An external's own MAC must be nobody else's: the switches address
 * frames to it, and a clash would deliver them to two ports. */
static void check_macs(struct loader *ld)
{
	const struct topology *t = ld->t;

	for (int i = 0; i < t->nnodes && !ld->failed; i++) {
		for (int j = 0; j < t->nnodes && ld->mac_line[i]; j++) {
			if (j != i && !memcmp(t->nodes[i].mac, t->nodes[j].mac, 6)) {
				loader_fail(
				    ld, ld->mac_line[i],
				    "mac: already %s's address (allowed: a MAC no other node has; "
				    "nodes without `mac` have 02:00:00:00:HI:LO, their index + 1)",
				    t->nodes[j].name);
				break;
			}
		}
	}
}

/* A mirror copies a port the switch has, once. */
static void check_mirrors(struct loader *ld)
{
	const struct topology *t = ld->t;

	for (int i = 0; i < t->nnodes && !ld->failed; i++) {
		const struct topo_node *n = &t->nodes[i];
		for (int k = 0; k < n->nmirrors && !ld->failed; k++) {
			const struct topo_mirror *m = &n->mirrors[k];
			if (m->port >= n->nports) {
				loader_fail(ld, m->line,
					    "mirror: %s has no port %d (allowed: 0..%d)", n->name,
					    m->port, n->nports - 1);
			}
			for (int j = 0; j < k && !ld->failed; j++) {
				if (n->mirrors[j].port == m->port) {
					loader_fail(ld, m->line,
						    "mirror: port %d is already mirrored (line %d)",
						    m->port, n->mirrors[j].line);
				}
			}
		}
	}
}

/* A TAP port is a daemon's: an external endpoint has none. */
static void check_port_kinds(struct loader *ld)
{
	const struct topology *t = ld->t;

	for (int k = 0; k < t->nlinks && !ld->failed; k++) {
		const struct topo_link *l = &t->links[k];
		for (int e = 0; e < 2; e++) {
			const struct topo_node *n = &t->nodes[e ? l->b : l->a];
			if (l->kind[e] != TOPO_PORT_PACKET && n->kind == NODE_EXTERNAL) {
				loader_fail(
				    ld, l->line,
				    "ports: %s is an external endpoint, run by no daemon (allowed: "
				    "packet at its end)",
				    n->name);
				break;
			}
		}
	}
}

/* ---- loading ---- */

static void require_nic(struct loader *ld)
{
	for (int i = 0; i < ld->t->nnodes; i++) {
		if (ld->t->nodes[i].kind == NODE_NIC) {
			return;
		}
	}
	loader_fail(ld, ld->line ? ld->line : 1,
		    "nic: no NIC declared (allowed: at least one [nic NAME])");
}

static void set_paths(struct topology *t, const char *path)
{
	const char *slash;

	snprintf(t->path, sizeof t->path, "%s", path);
	slash = strrchr(t->path, '/');
	if (!slash) {
		snprintf(t->dir, sizeof t->dir, ".");
	} else if (slash == t->path) {
		snprintf(t->dir, sizeof t->dir, "/");
	} else {
		snprintf(t->dir, sizeof t->dir, "%.*s", (int)(slash - t->path), t->path);
	}
}

static void loader_free(struct loader *ld)
{
	for (int i = 0; i < ld->nkvs; i++) {
		free(ld->kvs[i].name);
		free(ld->kvs[i].value);
	}
	free(ld->kvs);
	free(ld->secs);
	free(ld->ends);
	free(ld->link_delay_set);
	free(ld->ip_line);
	free(ld->mac_line);
	free(ld->buf);
}

struct topology *topology_load(const char *path, char *err, size_t errlen)
{
	return topology_load_set(path, NULL, 0, err, errlen);
}

struct topology *topology_load_set(const char *path, const char *const *sets, int nsets, char *err,
				   size_t errlen)
{
	struct topology *t = calloc(1, sizeof *t);
	struct loader ld = {.t = t, .cur = -1, .err = err, .errlen = errlen};

	if (!t) {
		snprintf(err, errlen, "%s: out of memory", path);
		return NULL;
	}
	set_paths(t, path);
	config_emulation_defaults(&t->emu);
	config_nic_defaults(&ld.nic_def);
	config_switch_defaults(&ld.sw_def);
	/* A topology of thousands of nodes is a few hundred KiB. */
	ld.f = config_open_input(path, 64ULL << 20, err, errlen);
	if (!ld.f) {
		free(t);
		return NULL;
	}
	loader_read_file(&ld);
	fclose(ld.f);
	if (!ld.failed) {
		loader_check_attributes(&ld);
	}
	assign_macs(t);
	if (!ld.failed) {
		loader_apply_node_attributes(&ld);
	}
	if (!ld.failed) {
		loader_apply_sets(&ld, sets, nsets);
	}
	if (!ld.failed) {
		connect_links(&ld);
	}
	if (!ld.failed) {
		settle_nodes(&ld);
	}
	if (!ld.failed) {
		apply_drops(&ld);
	}
	if (!ld.failed) {
		require_nic(&ld);
	}
	if (!ld.failed) {
		check_macs(&ld);
	}
	if (!ld.failed) {
		check_mirrors(&ld);
	}
	if (!ld.failed) {
		check_port_kinds(&ld);
	}
	if (!ld.failed) {
		compute_routes(&ld);
	}
	if (!ld.failed) {
		loader_default_ranks(&ld);
	}
	if (!ld.failed) {
		settle_auto(&ld);
	}
	loader_free(&ld);
	if (ld.failed) {
		topology_free(t);
		return NULL;
	}
	return t;
}

void topology_free(struct topology *t)
{
	if (t) {
		free(t->nodes);
		free(t->links);
		hmap_destroy(&t->by_name);
		free(t->by_ip);
		topology_routes_free(t);
		free(t->ranks);
		free(t);
	}
}

void topology_netns(const struct topology *t, int node, char *buf, size_t len)
{
	/* Names are checked (topology_name_check): a safe file name, and the
	 * node is what follows the last '-', so no two emulations' names meet. */
	snprintf(buf, len, "mrc-%s-%s", t->emu.name, t->nodes[node].name);
}

bool ipv4_parse(const char *s, uint32_t *ip)
{
	uint32_t v = 0;

	for (int i = 0; i < 4; i++) {
		unsigned n = 0;
		int digits = 0;
		while (isdigit((unsigned char)*s) && digits < 4) {
			n = n * 10 + (unsigned)(*s++ - '0');
			digits++;
		}
		/* No leading zeros: "010" would mean 8 to inet_aton. */
		if (!digits || digits > 3 || n > 255 || (digits > 1 && s[-digits] == '0')) {
			return false;
		}
		v = v << 8 | n;
		if (i < 3 && *s++ != '.') {
			return false;
		}
	}
	if (*s) {
		return false;
	}
	*ip = v;
	return true;
}

char *ipv4_format(uint32_t ip, char *buf, size_t len)
{
	snprintf(buf, len, "%u.%u.%u.%u", ip >> 24, (ip >> 16) & 0xff, (ip >> 8) & 0xff, ip & 0xff);
	return buf;
}
