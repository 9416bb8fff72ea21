/* emulator/core/topology.c — reading a topology file (docs/topology.md, Topology
 * file) with libinih, checking it, and deriving ports, MACs and the ECMP
 * routes of every switch (docs/protocol.md §9: every shortest path).
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
#include <ini.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"

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

static const char *const kind_names[] = {"NIC", "switch", "external"};

static void fail(struct loader *ld, int line, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* The first error wins: "FILE:LINE: ATTRIBUTE: reason (allowed: RANGE)". */
static void fail(struct loader *ld, int line, const char *fmt, ...)
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

static void *grow(void *p, int n, size_t size)
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
	const char *allowed = emulation ? "letters, digits, '_' and '-'" : "letters, digits and '_'";
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
		fail(ld, ld->line, "[%s]: %s", hdr, why);
		return false;
	}
	return true;
}

/* [emulation], [nic], [switch] and [workload] come once: a second one
 * would silently override the first, attribute by attribute. */
static void add_section(struct loader *ld, enum sec_kind kind, int index, const char *hdr)
{
	for (int i = 0; kind != SEC_NODE && kind != SEC_LINK && i < ld->nsecs; i++) {
		if (ld->secs[i].kind == kind) {
			fail(ld, ld->line, "[%s]: section already given (line %d; allowed: once)",
			     hdr, ld->secs[i].line);
			return;
		}
	}
	ld->secs = grow(ld->secs, ld->nsecs, sizeof *ld->secs);
	ld->secs[ld->nsecs] = (struct sec){kind, index, ld->line};
	ld->cur = ld->nsecs++;
}

static void declare_node(struct loader *ld, const char *hdr, enum node_kind kind, const char *name)
{
	struct topology *t = ld->t;
	int other = topology_find(t, name);

	if (!check_name(ld, hdr, name)) {
		return;
	}
	if (other >= 0) {
		fail(ld, ld->line, "[%s]: node %s is already declared (line %d)", hdr, name,
		     t->nodes[other].line);
		return;
	}
	t->nodes = grow(t->nodes, t->nnodes, sizeof *t->nodes);
	ld->ip_line = grow(ld->ip_line, t->nnodes, sizeof *ld->ip_line);
	ld->mac_line = grow(ld->mac_line, t->nnodes, sizeof *ld->mac_line);
	struct topo_node *n = &t->nodes[t->nnodes];
	memset(n, 0, sizeof *n);
	snprintf(n->name, sizeof n->name, "%s", name);
	n->kind = kind;
	n->line = ld->line;
	ld->ip_line[t->nnodes] = 0;
	ld->mac_line[t->nnodes] = 0;
	add_name(t, t->nnodes);
	add_section(ld, SEC_NODE, t->nnodes++, hdr);
}

static void declare_link(struct loader *ld, const char *hdr, const char *a, const char *b)
{
	struct topology *t = ld->t;

	if (!check_name(ld, hdr, a) || !check_name(ld, hdr, b)) {
		return;
	}
	if (!strcmp(a, b)) {
		fail(ld, ld->line, "link: [%s] links %s to itself (allowed: two different nodes)",
		     hdr, a);
		return;
	}
	t->links = grow(t->links, t->nlinks, sizeof *t->links);
	ld->ends = grow(ld->ends, t->nlinks, sizeof *ld->ends);
	ld->link_delay_set = grow(ld->link_delay_set, t->nlinks, sizeof *ld->link_delay_set);
	struct topo_link *l = &t->links[t->nlinks];
	memset(l, 0, sizeof *l);
	l->a = l->b = -1;
	l->line = ld->line;
	config_link_defaults(&l->attrs);
	snprintf(ld->ends[t->nlinks][0], TOPO_NAME_MAX, "%s", a);
	snprintf(ld->ends[t->nlinks][1], TOPO_NAME_MAX, "%s", b);
	ld->link_delay_set[t->nlinks] = false;
	add_section(ld, SEC_LINK, t->nlinks++, hdr);
}

/* "[link h0 s0]" and the like, seen by the line reader before inih. */
static void section_start(struct loader *ld, char *line)
{
	char *close = strchr(line, ']'), *w[4], *save = NULL;
	int n = 0;

	if (!close) {
		fail(ld, ld->line, "section: '%s' has no closing ']'", line);
		return;
	}
	const char *rest = close + 1;
	while (isspace((unsigned char)*rest)) {
		rest++;
	}
	if (*rest && *rest != ';' && *rest != '#') {
		fail(ld, ld->line, "section: text after ']': '%s'", rest);
		return;
	}
	*close = '\0';
	char hdr[256];
	snprintf(hdr, sizeof hdr, "%.200s", line + 1);
	for (char *tok = strtok_r(line + 1, " \t", &save); tok && n < 4;
	     tok = strtok_r(NULL, " \t", &save)) {
		w[n++] = tok;
	}
	if (n == 1 && !strcmp(w[0], "emulation")) {
		add_section(ld, SEC_EMULATION, 0, hdr);
	} else if (n == 1 && !strcmp(w[0], "nic")) {
		add_section(ld, SEC_NIC_DEFAULTS, 0, hdr);
	} else if (n == 1 && !strcmp(w[0], "switch")) {
		add_section(ld, SEC_SWITCH_DEFAULTS, 0, hdr);
	} else if (n == 1 && !strcmp(w[0], "workload")) {
		add_section(ld, SEC_WORKLOAD, 0, hdr);
	} else if (n == 2 && !strcmp(w[0], "nic")) {
		declare_node(ld, hdr, NODE_NIC, w[1]);
	} else if (n == 2 && !strcmp(w[0], "switch")) {
		declare_node(ld, hdr, NODE_SWITCH, w[1]);
	} else if (n == 2 && !strcmp(w[0], "external")) {
		declare_node(ld, hdr, NODE_EXTERNAL, w[1]);
	} else if (n == 3 && !strcmp(w[0], "link")) {
		declare_link(ld, hdr, w[1], w[2]);
	} else {
		static const char *const kinds[] = {"emulation", "nic",	 "switch",
						    "external",	 "link", "workload"};
		const char *near = n ? config_closest(w[0], kinds, 6) : NULL;
		fail(ld, ld->line,
		     "[%s]: unknown section (%s%s%sallowed: emulation, nic, switch, nic NAME, "
		     "switch NAME, external NAME, link A B, workload)",
		     hdr, near ? "did you mean " : "", near ? near : "", near ? "? " : "");
	}
}

/* As inih does: ';' or '#' starts a line comment, " ;" an inline one. */
static void strip_comment(char *p)
{
	if (*p == ';' || *p == '#') {
		*p = '\0';
		return;
	}
	for (char *c = p + 1; *p && *c; c++) {
		if (*c == ';' && isspace((unsigned char)c[-1])) {
			*c = '\0';
			break;
		}
	}
}

/* inih's line reader: counts lines (this libinih's handler gets none), sees
 * section headers (inih reports no section that has no attributes), and drops
 * leading blanks so an indented line is never a continuation line. */
static char *read_line(char *str, int num, void *stream)
{
	struct loader *ld = stream;
	ssize_t n;
	char *p;

	if (ld->failed || (n = getline(&ld->buf, &ld->bufcap, ld->f)) < 0) {
		return NULL;
	}
	ld->line++;
	if (memchr(ld->buf, '\0', (size_t)n)) {
		fail(ld, ld->line, "line: holds a NUL byte (allowed: text)");
		return NULL;
	}
	while (n > 0 && (ld->buf[n - 1] == '\n' || ld->buf[n - 1] == '\r')) {
		ld->buf[--n] = '\0';
	}
	p = ld->buf;
	if (ld->line == 1 && !strncmp(p, "\xEF\xBB\xBF", 3)) {
		p += 3;
	}
	while (isspace((unsigned char)*p)) {
		p++;
	}
	strip_comment(p);
	if (strlen(p) + 2 > (size_t)num) {
		fail(ld, ld->line,
		     "line: too long (allowed: at most %d characters; split "
		     "`drop` or `down` over several lines)",
		     num - 2);
		return NULL;
	}
	if (*p == '[') {
		char copy[256];
		snprintf(copy, sizeof copy, "%s", p);
		section_start(ld, copy);
	}
	snprintf(str, (size_t)num, "%s", p);
	return str;
}

static int on_attribute(void *user, const char *section, const char *name, const char *value)
{
	struct loader *ld = user;

	(void)section;
	if (ld->cur < 0) {
		fail(ld, ld->line,
		     "%s: outside any section (allowed: after [emulation], [nic], "
		     "[switch], [nic NAME], [link A B], ...)",
		     name);
		return 0;
	}
	/* `down`, `drop` and `mirror` add to what is set; anything else given
	 * twice would silently keep the last. */
	for (int i = ld->nkvs - 1; i >= 0 && ld->kvs[i].sec == ld->cur; i--) {
		if (!strcmp(ld->kvs[i].name, name) && strcmp(name, "down") &&
		    strcmp(name, "drop") && strcmp(name, "mirror")) {
			fail(ld, ld->line, "%s: set twice in this section (line %d; allowed: once)",
			     name, ld->kvs[i].line);
			return 0;
		}
	}
	ld->kvs = grow(ld->kvs, ld->nkvs, sizeof *ld->kvs);
	ld->kvs[ld->nkvs++] = (struct kv){ld->cur, ld->line, strdup(name), strdup(value)};
	return 1;
}

/* ---- applying attributes ---- */

static void set_or_fail(struct loader *ld, const struct kv *kv, enum attr_scope scope, void *obj)
{
	char why[TOPO_ERR_MAX];

	if (!config_set(scope, obj, kv->name, kv->value, why, sizeof why)) {
		fail(ld, kv->line, "%s", why);
	}
}

/* A path of [workload], relative to the topology's folder. */
static void workload_set_path(struct loader *ld, const struct kv *kv, char *into, size_t len,
			      const char *allowed)
{
	struct topology *t = ld->t;
	int n;

	if (!kv->value[0]) {
		fail(ld, kv->line, "%s: needs a value (allowed: %s)", kv->name, allowed);
		return;
	}
	if (kv->value[0] == '/') {
		n = snprintf(into, len, "%s", kv->value);
	} else {
		n = snprintf(into, len, "%s/%s", t->dir, kv->value);
	}
	if (n < 0 || (size_t)n >= len) {
		fail(ld, kv->line, "%s: path too long (allowed: %zu characters)", kv->name,
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
			fail(ld, kv->line, "ranks: '%s' is not a NIC of this topology (allowed: NIC names)",
			     tok);
			break;
		}
		for (int r = 0; r < t->nranks; r++) {
			if (t->ranks[r] == node) {
				fail(ld, kv->line, "ranks: %s is named twice (allowed: one rank a NIC)",
				     tok);
			}
		}
		t->ranks = grow(t->ranks, t->nranks, sizeof *t->ranks);
		t->ranks[t->nranks++] = node;
	}
	if (!ld->failed && !t->nranks) {
		fail(ld, kv->line, "ranks: needs a value (allowed: NIC names, rank 0 first)");
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
			if (coll_algos[i].values[v] && !strcmp(kv->value, coll_algos[i].values[v])) {
				ld->t->coll_algo[coll_algos[i].type] = (uint8_t)v;
				return true;
			}
		}
		fail(ld, kv->line, "%s: '%s' is not an algorithm of it (allowed: ring, %s)",
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
		fail(ld, kv->line,
		     "%s: unknown attribute of [workload] (allowed: file, chakra, ranks, "
		     "AllReduceAlgorithm, ReduceScatterAlgorithm, AllGatherAlgorithm, "
		     "BroadcastAlgorithm, ReduceAlgorithm)",
		     kv->name);
	}
	if (!ld->failed && t->workload[0] && t->chakra[0]) {
		fail(ld, kv->line, "%s: file and chakra are both set (allowed: one workload)",
		     kv->name);
	}
}

/* Without `ranks`, Chakra rank i is the i-th NIC in topology order. */
static void default_ranks(struct loader *ld)
{
	struct topology *t = ld->t;

	if (t->nranks) {
		return;
	}
	for (int i = 0; i < t->nnodes; i++) {
		if (t->nodes[i].kind == NODE_NIC) {
			t->ranks = grow(t->ranks, t->nranks, sizeof *t->ranks);
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
	fail(ld, kv->line, "ports: '%s' is not two port kinds (allowed: packet, tap or dpdk for "
			   "each end, e.g. ports = tap packet)", kv->value);
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
			fail(ld, kv->line,
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
			fail(ld, kv->line,
			     "mac: '%s' is not a unicast MAC address (allowed: six hex bytes "
			     "aa:bb:cc:dd:ee:ff, multicast bit clear, not all zeros)",
			     kv->value);
		}
	} else {
		fail(ld, kv->line, "%s: unknown attribute of [external] (allowed: ip, mac)",
		     kv->name);
	}
}

/* The name becomes part of paths and namespace names (docs/topology.md,
 * Names): checked here, so `sim` refuses what `run` would. */
static void check_emulation_name(struct loader *ld, const struct kv *kv)
{
	char why[160];

	if (!topology_name_check(ld->t->emu.name, true, why, sizeof(why)))
		fail(ld, kv->line, "name: %s", why);
}

/* First pass over attribute lines, in file order. */
static void check_attributes(struct loader *ld)
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
				fail(ld, kv->line, "ip: is per node (allowed: in [nic NAME])");
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

static void apply_node_attributes(struct loader *ld)
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
				fail(ld, kv->line, "mirror: more than %d on %s (allowed: %d)",
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

/* ---- links and ports ---- */

static void attach(struct loader *ld, int li, int end)
{
	struct topology *t = ld->t;
	struct topo_link *l = &t->links[li];
	int node = end ? l->b : l->a;
	struct topo_node *n = &t->nodes[node];

	if (n->kind != NODE_SWITCH && n->nports > 0) {
		fail(ld, l->line,
		     "link: %s %s already has its link (line %d) (allowed: one link: a %s has "
		     "one port)",
		     kind_names[n->kind], n->name, t->links[n->ports[0].link].line,
		     kind_names[n->kind]);
		return;
	}
	if (n->nports >= TOPO_MAX_PORTS) {
		fail(ld, l->line, "link: %s has more than %d ports (allowed: at most %d)", n->name,
		     TOPO_MAX_PORTS, TOPO_MAX_PORTS);
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
				fail(ld, l->line,
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
		fail(ld, l->line,
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
			fail(ld, n->line,
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
				fail(ld, n->line, "%s", why);
			}
			continue;
		}
		n->ip = n->nic.ip;
		if (!n->ip) {
			fail(ld, n->line, "ip: %s %s has no ip (allowed: a unicast IPv4 address)",
			     kind_names[n->kind], n->name);
		} else if (!n->nports) {
			fail(ld, n->line, "link: %s %s has no link (allowed: exactly one [link])",
			     kind_names[n->kind], n->name);
		}
		int other = add_ip(t, i);
		if (!ld->failed && other >= 0) {
			char a[16];
			fail(ld, ld->ip_line[i], "ip: %s is already %s's address (line %d)",
			     ipv4_format(n->ip, a, sizeof a), t->nodes[other].name,
			     ld->ip_line[other]);
		}
		if (n->kind == NODE_NIC) {
			config_nic_resolve(&n->nic);
			if (!ld->failed && !config_nic_check(&n->nic, why, sizeof why)) {
				fail(ld, n->line, "%s", why);
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
			fail(ld, kv->line, "%s", why);
		}
	}
}

/* ---- routes (topology_routes.c) ---- */

static void compute_routes(struct loader *ld)
{
	char why[TOPO_ERR_MAX];
	int bad;

	if (!topology_routes(ld->t, &bad, why, sizeof why)) {
		fail(ld, ld->t->nodes[bad].line, "%s", why);
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
			fail(ld, n->line, "ConfigBaseRTT: auto needs a path between two NICs");
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
			fail(ld, n->line, "%s", why);
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
				fail(ld, ld->mac_line[i],
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
				fail(ld, m->line, "mirror: %s has no port %d (allowed: 0..%d)",
				     n->name, m->port, n->nports - 1);
			}
			for (int j = 0; j < k && !ld->failed; j++) {
				if (n->mirrors[j].port == m->port) {
					fail(ld, m->line,
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
				fail(ld, l->line,
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
	fail(ld, ld->line ? ld->line : 1,
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

static void read_file(struct loader *ld)
{
	int rc = ini_parse_stream(read_line, ld, on_attribute, ld);

	if (rc > 0 && !ld->failed) {
		fail(ld, rc, "syntax: expected 'name = value' or '[section]'");
	} else if (rc < 0 && !ld->failed) {
		fail(ld, ld->line, "read: out of memory");
	}
	if (!ld->failed && ferror(ld->f)) {
		fail(ld, ld->line, "read: %s", strerror(errno));
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

/* One `--set SECTION.ATTRIBUTE=VALUE`: its scope, and the attribute and
 * value in buf.  False with the reason in why. */
static bool set_split(const char *text, enum attr_scope *scope, char *buf, size_t len,
		      char **name, char **value, char *why, size_t whylen)
{
	static const char *const sections[] = {"emulation", "nic", "switch", "link"};
	char *dot, *eq;
	const char *near;

	snprintf(buf, len, "%s", text);
	dot = strchr(buf, '.');
	eq = strchr(buf, '=');
	if (!dot || !eq || eq < dot) {
		snprintf(why, whylen, "not SECTION.ATTRIBUTE=VALUE");
		return false;
	}
	*dot = *eq = '\0';
	*name = dot + 1;
	*value = eq + 1;
	for (int i = 0; i < 4; i++)
		if (!strcmp(buf, sections[i])) {
			*scope = (enum attr_scope)i;
			return true;
		}
	near = config_closest(buf, sections, 4);
	snprintf(why, whylen, "unknown section '%.40s' (%s%s%sallowed: emulation, nic, switch, link)",
		 buf, near ? "did you mean " : "", near ? near : "", near ? "? " : "");
	return false;
}

static bool set_one(struct topology *t, struct loader *ld, enum attr_scope scope,
		    const char *name, const char *value, char *why, size_t len)
{
	bool ok = true;

	if (scope == ATTR_NIC && !strcmp(name, "ip")) {
		snprintf(why, len, "ip: is per node (allowed: in [nic NAME])");
		return false;
	}
	switch (scope) {
	case ATTR_EMULATION:
		ok = config_set(scope, &t->emu, name, value, why, len) &&
		     topology_name_check(t->emu.name, true, why, len);
		break;
	case ATTR_NIC:
	case ATTR_SWITCH:
		ok = config_set(scope, scope == ATTR_NIC ? (void *)&ld->nic_def : (void *)&ld->sw_def,
				name, value, why, len);
		for (int i = 0; ok && i < t->nnodes; i++) {
			struct topo_node *n = &t->nodes[i];
			if (scope == ATTR_NIC && n->kind != NODE_SWITCH)
				ok = config_set(scope, &n->nic, name, value, why, len);
			else if (scope == ATTR_SWITCH && n->kind == NODE_SWITCH)
				ok = config_set(scope, &n->sw, name, value, why, len);
		}
		break;
	case ATTR_LINK:
		for (int i = 0; ok && i < t->nlinks; i++)
			ok = config_set(scope, &t->links[i].attrs, name, value, why, len);
		break;
	}
	return ok;
}

/* The --set overrides, after the file's own values. */
static void apply_sets(struct loader *ld, const char *const *sets, int nsets)
{
	char buf[512], why[256], *name, *value;
	enum attr_scope scope;

	if (nsets > TOPO_MAX_SETS) {
		snprintf(ld->err, ld->errlen, "--set: %d given (allowed: at most %d)", nsets,
			 TOPO_MAX_SETS);
		ld->failed = true;
		return;
	}
	for (int i = 0; i < nsets && !ld->failed; i++) {
		if (set_split(sets[i], &scope, buf, sizeof(buf), &name, &value, why,
			      sizeof(why)) &&
		    set_one(ld->t, ld, scope, name, value, why, sizeof(why)))
			continue;
		snprintf(ld->err, ld->errlen, "--set %.200s: %s", sets[i], why);
		ld->failed = true;
	}
}

struct topology *topology_load(const char *path, char *err, size_t errlen)
{
	return topology_load_set(path, NULL, 0, err, errlen);
}

struct topology *topology_load_set(const char *path, const char *const *sets, int nsets,
				   char *err, size_t errlen)
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
	read_file(&ld);
	fclose(ld.f);
	if (!ld.failed) {
		check_attributes(&ld);
	}
	assign_macs(t);
	if (!ld.failed) {
		apply_node_attributes(&ld);
	}
	if (!ld.failed) {
		apply_sets(&ld, sets, nsets);
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
		default_ranks(&ld);
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
