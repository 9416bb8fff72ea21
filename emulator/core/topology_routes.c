/* emulator/core/topology_routes.c — routes of a topology (docs/protocol.md §9):
 * for every switch and every leaf (a switch NICs or externals hang off),
 * the ECMP set of egress ports on every shortest path, from one
 * breadth-first search per leaf; the longest round trip for `auto`.
 *
 * An endpoint has one port, so every shortest path towards it ends through
 * its leaf, and a switch's next hops towards it are its next hops towards
 * the leaf: a switch keeps one set per leaf (O(leaves) bytes), and a
 * fat tree of 32,768 hosts routes in megabytes, not in the gigabytes a
 * table per (switch, destination) would take. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "topology.h"
#include "wire.h"

static void *alloc(size_t n, size_t size)
{
	void *p = calloc(n ? n : 1, size);

	if (!p) {
		fprintf(stderr, "mrcemu: out of memory computing routes\n");
		abort();
	}
	return p;
}

/* Hop counts from `src` to every node; NICs and externals have one port, so
 * no shortest path passes through them. */
static void bfs(const struct topology *t, int src, int *dist, int *queue)
{
	int head = 0, tail = 0;

	for (int i = 0; i < t->nnodes; i++)
		dist[i] = -1;
	dist[src] = 0;
	queue[tail++] = src;
	while (head < tail) {
		int at = queue[head++];
		const struct topo_node *n = &t->nodes[at];
		for (int p = 0; p < n->nports; p++) {
			int peer = n->ports[p].peer;
			if (dist[peer] < 0) {
				dist[peer] = dist[at] + 1;
				queue[tail++] = peer;
			}
		}
	}
}

static bool is_endpoint(const struct topology *t, int i)
{
	return t->nodes[i].kind != NODE_SWITCH;
}

/* Every endpoint's leaf, the leaves numbered in the order of their first
 * endpoint (first[leaf]), so that errors name the nodes a search from each
 * endpoint in turn would. */
static void find_leaves(struct topology *t, int *first)
{
	t->attach = alloc((size_t)t->nnodes, sizeof(*t->attach));
	for (int i = 0; i < t->nnodes; i++)
		t->attach[i] = (struct topo_attach){-1, -1, -1};
	for (int i = 0; i < t->nnodes; i++) {
		const struct topo_port *p = &t->nodes[i].ports[0];
		if (!is_endpoint(t, i) || !t->nodes[i].nports || is_endpoint(t, p->peer))
			continue;
		t->attach[i].sw = p->peer;
		t->attach[i].port = (int16_t)p->peer_port;
		if (t->attach[p->peer].leaf < 0) {
			first[t->nleaves] = i;
			t->attach[p->peer].leaf = (int16_t)t->nleaves++;
		}
		t->attach[i].leaf = t->attach[p->peer].leaf;
	}
}

/* The first endpoint that the first endpoint cannot reach, or -1: links
 * go both ways, so then every endpoint reaches every other. */
static int unreachable(const struct topology *t, int *dist, int *queue, int *from)
{
	int first = 0;

	while (first < t->nnodes && !is_endpoint(t, first))
		first++;
	*from = first;
	if (first == t->nnodes)
		return -1;
	bfs(t, first, dist, queue);
	for (int i = 0; i < t->nnodes; i++)
		if (is_endpoint(t, i) && dist[i] < 0)
			return i;
	return -1;
}

/* A frame leaves a NIC with TTL 64 and a switch drops one that arrives with
 * TTL 1 or less (docs/protocol.md §1): a shortest path may cross at most 63
 * switches.  A longer one would lose every frame, so the load refuses it.
 * dist counts hops from a leaf, that is switches crossed towards its
 * endpoints.  Returns the farthest endpoint beyond that, or -1. */
#define ROUTE_MAX_SWITCHES (WIRE_TTL - 1)
static int too_far(const struct topology *t, const int *dist)
{
	int far = -1;

	for (int i = 0; i < t->nnodes; i++)
		if (is_endpoint(t, i) && dist[i] > ROUTE_MAX_SWITCHES &&
		    (far < 0 || dist[i] > dist[far]))
			far = i;
	return far;
}

/* The index of the set with these ports among switch r's, added when new;
 * -1 past 65,535 sets. */
static int intern(struct topo_routes *r, struct hmap *seen, uint64_t ports)
{
	uintptr_t at = (uintptr_t)hmap_get(seen, ports);
	struct topo_ecmp *e;

	if (at)
		return (int)at - 1;
	if (r->nsets > UINT16_MAX)
		return -1;
	if (!(r->nsets & (r->nsets - 1))) {
		r->sets = realloc(r->sets, (size_t)(r->nsets ? 2 * r->nsets : 1) * sizeof(*e));
		if (!r->sets) {
			fprintf(stderr, "mrcemu: out of memory computing routes\n");
			abort();
		}
	}
	e = &r->sets[r->nsets];
	memset(e, 0, sizeof(*e));
	e->ports = ports;
	for (int p = 0; p < TOPO_MAX_PORTS; p++)
		if (ports >> p & 1)
			e->port[e->count++] = (uint8_t)p;
	if (!hmap_put(seen, ports, (void *)(uintptr_t)(r->nsets + 1))) {
		fprintf(stderr, "mrcemu: out of memory computing routes\n");
		abort();
	}
	return r->nsets++;
}

/* One leaf's column: at every switch, the ports whose peer is one hop
 * nearer (dist counts hops from the leaf).  Returns a switch with too many
 * distinct sets, or -1. */
static int leaf_sets(struct topology *t, struct hmap *seen, int leaf, int leaf_node,
		     const int *dist)
{
	for (int s = 0; s < t->nnodes; s++) {
		const struct topo_node *n = &t->nodes[s];
		uint64_t ports = 0;
		int set;
		if (is_endpoint(t, s))
			continue;
		for (int p = 0; s != leaf_node && p < n->nports && dist[s] > 0; p++)
			if (dist[n->ports[p].peer] == dist[s] - 1)
				ports |= 1ULL << p;
		if ((set = intern(&t->routes[s], &seen[s], ports)) < 0)
			return s;
		t->routes[s].to_leaf[leaf] = (uint16_t)set;
	}
	return -1;
}

/* Every switch port that leads to an endpoint: that port alone. */
static int port_sets(struct topology *t, struct hmap *seen)
{
	for (int i = 0; i < t->nnodes; i++) {
		const struct topo_attach *a = &t->attach[i];
		int set;
		if (!is_endpoint(t, i) || a->sw < 0)
			continue;
		if ((set = intern(&t->routes[a->sw], &seen[a->sw], 1ULL << a->port)) < 0)
			return a->sw;
		t->routes[a->sw].to_port[a->port] = (uint16_t)set;
	}
	return -1;
}

/* Probes past the first to place (or find) every endpoint's address in a
 * table of 1 << bits slots by multiplier mul; taken marks the slots. */
static uint64_t ip_route_probes(const struct topology *t, uint32_t mul, int bits, uint8_t *taken)
{
	uint32_t mask = (1u << bits) - 1;
	uint64_t probes = 0;

	memset(taken, 0, (size_t)mask + 1);
	for (int n = 0; n < t->nnodes; n++) {
		uint32_t i = (t->nodes[n].ip * mul) >> (32 - bits);
		if (!is_endpoint(t, n))
			continue;
		for (; taken[i]; i = (i + 1) & mask)
			probes++;
		taken[i] = 1;
	}
	return probes;
}

/* The multiplier of the fewest probes of a few odd ones (the first of
 * them, Knuth's, when they tie): addresses are often consecutive, and a
 * hop's lookup mostly finds its slot at once. */
static uint32_t ip_route_mul(const struct topology *t, int bits)
{
	uint8_t *taken = alloc((size_t)1 << bits, 1);
	uint32_t best = 2654435769u, mul = best;
	uint64_t least = ip_route_probes(t, best, bits, taken);

	for (int k = 1; k < 64 && least > 0; k++) {
		uint64_t probes;
		mul = mul * 1664525u + 1013904223u;
		mul |= 1;
		if ((probes = ip_route_probes(t, mul, bits, taken)) < least) {
			least = probes;
			best = mul;
		}
	}
	free(taken);
	return best;
}

/* topology_ip_route's table: twice the endpoints' slots or more, at least
 * 16.  Taken after the leaves are numbered (find_leaves). */
static void ip_routes(struct topology *t)
{
	int bits = 4, endpoints = 0;
	struct topo_ip_route *r;
	uint32_t mask;

	for (int n = 0; n < t->nnodes; n++)
		endpoints += is_endpoint(t, n);
	while ((1 << bits) < 2 * endpoints)
		bits++;
	mask = (1u << bits) - 1;
	t->ip_route_mul = ip_route_mul(t, bits);
	t->ip_route_shift = (uint8_t)(32 - bits);
	t->ip_route_mask = mask;
	t->ip_routes = r = alloc((size_t)mask + 1, sizeof(*r));
	for (uint32_t i = 0; i <= mask; i++)
		r[i] =
		    (struct topo_ip_route){0, -1, -1, 0, (uint16_t)(TOPO_MAX_PORTS + t->nleaves)};
	for (int n = 0; n < t->nnodes; n++) {
		const struct topo_attach *a = &t->attach[n];
		uint32_t i = (t->nodes[n].ip * t->ip_route_mul) >> t->ip_route_shift;
		if (!is_endpoint(t, n))
			continue;
		while (r[i].node >= 0)
			i = (i + 1) & mask;
		r[i] = (struct topo_ip_route){
		    t->nodes[n].ip, n, a->sw, (uint16_t)(a->sw < 0 ? 0 : a->port),
		    (uint16_t)(TOPO_MAX_PORTS + (a->sw < 0 ? t->nleaves : a->leaf))};
	}
}

/* The routes' storage; every switch has the empty set as its set 0. */
static struct hmap *start_routes(struct topology *t)
{
	struct hmap *seen = alloc((size_t)t->nnodes, sizeof(*seen));

	t->routes = alloc((size_t)t->nnodes, sizeof(*t->routes));
	for (int s = 0; s < t->nnodes; s++) {
		if (is_endpoint(t, s))
			continue;
		t->routes[s].to_leaf = alloc((size_t)t->nleaves, sizeof(uint16_t));
		intern(&t->routes[s], &seen[s], 0);
	}
	return seen;
}

bool topology_routes(struct topology *t, int *bad_node, char *why, size_t len)
{
	size_t nn = (size_t)t->nnodes;
	int *dist = alloc(nn, sizeof *dist), *queue = alloc(nn, sizeof *queue);
	int *first = alloc(nn, sizeof *first);
	struct hmap *seen;
	int bad, d;

	find_leaves(t, first);
	ip_routes(t);
	seen = start_routes(t);
	if ((bad = unreachable(t, dist, queue, &d)) >= 0)
		snprintf(why, len,
			 "link: %s cannot reach %s (allowed: every NIC and external connected)",
			 t->nodes[bad].name, t->nodes[d].name);
	for (int leaf = 0; leaf < t->nleaves && bad < 0; leaf++) {
		int node = t->attach[first[leaf]].sw;
		bfs(t, node, dist, queue);
		if ((bad = too_far(t, dist)) >= 0) {
			snprintf(why, len,
				 "link: the path from %s to %s crosses %d switches (allowed: at "
				 "most %d: frames leave with TTL %d and each switch takes one)",
				 t->nodes[bad].name, t->nodes[first[leaf]].name, dist[bad],
				 ROUTE_MAX_SWITCHES, WIRE_TTL);
		} else if ((bad = leaf_sets(t, seen, leaf, node, dist)) >= 0) {
			snprintf(why, len, "link: %s has more than %d different ECMP sets",
				 t->nodes[bad].name, UINT16_MAX + 1);
		}
	}
	if (bad < 0 && (bad = port_sets(t, seen)) >= 0)
		snprintf(why, len, "link: %s has more than %d different ECMP sets",
			 t->nodes[bad].name, UINT16_MAX + 1);
	for (size_t s = 0; s < nn; s++)
		hmap_destroy(&seen[s]);
	free(seen);
	free(first);
	free(dist);
	free(queue);
	*bad_node = bad;
	return bad < 0;
}

void topology_routes_free(struct topology *t)
{
	for (int s = 0; t->routes && s < t->nnodes; s++) {
		free(t->routes[s].to_leaf);
		free(t->routes[s].sets);
	}
	free(t->routes);
	free(t->attach);
	free(t->ip_routes);
	t->routes = NULL;
	t->attach = NULL;
	t->ip_routes = NULL;
}

/* One way from NIC a to NIC b along the first of the routes' equal next
 * hops: each hop's serialization of a full packet (MSS + 78 bytes, store
 * and forward) and its delay. */
static ps_t one_way(const struct topology *t, int a, int b)
{
	uint64_t full = t->nodes[a].nic.mss + 78;
	int node = a, port = 0;
	ps_t sum = 0;

	for (int hops = 0; hops <= t->nnodes; hops++) {
		const struct topo_port *p = &t->nodes[node].ports[port];
		const struct topo_ecmp *e;
		sum += time_serialize(full, topology_port_rate(t, node, port)) +
		       t->links[p->link].attrs.delay;
		node = p->peer;
		if (node == b || t->nodes[node].kind != NODE_SWITCH ||
		    !(e = topology_ecmp(t, node, b))->count)
			break;
		port = e->port[0];
	}
	return sum;
}

/* What one_way() of a NIC depends on, either way: its leaf, MSS, DataRate
 * and link.  NICs alike share their round trips, so the longest is found
 * among classes (a fat tree's hosts of one leaf are one), not all pairs. */
struct rtt_class {
	int leaf, rep, second; /* two members; second -1 when alone */
	uint64_t mss, data_rate, rate;
	ps_t delay;
};

static bool same_class(const struct rtt_class *c, const struct rtt_class *k)
{
	return c->leaf == k->leaf && c->mss == k->mss && c->data_rate == k->data_rate &&
	       c->rate == k->rate && c->delay == k->delay;
}

static int rtt_classes(const struct topology *t, struct rtt_class *cls)
{
	struct hmap seen;
	int n = 0;

	hmap_init(&seen);
	for (int a = 0; a < t->nnodes; a++) {
		const struct topo_node *na = &t->nodes[a];
		struct rtt_class k;
		uint64_t h;
		uintptr_t at;
		if (na->kind != NODE_NIC || !na->nports)
			continue;
		k = (struct rtt_class){t->attach[a].sw < 0 ? -1 - a : t->attach[a].sw,
				       a,
				       -1,
				       na->nic.mss,
				       na->nic.data_rate,
				       t->links[na->ports[0].link].attrs.rate,
				       t->links[na->ports[0].link].attrs.delay};
		h = (((uint64_t)(uint32_t)k.leaf * 0x9E3779B97F4A7C15ULL ^ k.mss) *
			 0x9E3779B97F4A7C15ULL ^
		     k.data_rate ^ k.rate * 31 ^ k.delay * 131);
		/* equal hashes of unequal classes chain on to the next key */
		while ((at = (uintptr_t)hmap_get(&seen, h)) && !same_class(&cls[at - 1], &k))
			h++;
		if (!at) {
			cls[n] = k;
			if (!hmap_put(&seen, h, (void *)(uintptr_t)(++n))) {
				fprintf(stderr, "mrcemu: out of memory computing routes\n");
				abort();
			}
		} else if (cls[at - 1].second < 0) {
			cls[at - 1].second = a;
		}
	}
	hmap_destroy(&seen);
	return n;
}

ps_t topology_fabric_rtt(const struct topology *t)
{
	struct rtt_class *cls = alloc((size_t)t->nnodes, sizeof(*cls));
	int n = rtt_classes(t, cls);
	ps_t longest = 0;

	for (int i = 0; i < n; i++) {
		for (int j = i; j < n; j++) {
			int a = cls[i].rep, b = j == i ? cls[i].second : cls[j].rep;
			ps_t rtt;
			if (b < 0)
				continue;
			rtt = one_way(t, a, b) + one_way(t, b, a);
			if (rtt > longest)
				longest = rtt;
		}
	}
	free(cls);
	return longest;
}

/* Whether a frame for endpoint d can come in on port k of switch sw. */
static bool comes_in(const struct topology *t, int sw, int k, int d)
{
	const struct topo_port *tp = &t->nodes[sw].ports[k];

	switch (t->nodes[tp->peer].kind) {
	case NODE_SWITCH:
		return topology_ecmp(t, tp->peer, d)->ports >> tp->peer_port & 1;
	case NODE_NIC:
		return tp->peer != d;
	default:
		return true;
	}
}

uint64_t topology_reflects(const struct topology *t, int sw)
{
	uint64_t r = 0;

	for (int d = 0; d < t->nnodes; d++) {
		uint64_t out;
		if (!is_endpoint(t, d))
			continue;
		out = topology_ecmp(t, sw, d)->ports & ~r;
		for (int k = 0; out; k++, out >>= 1)
			if ((out & 1) && comes_in(t, sw, k, d))
				r |= 1ULL << k;
	}
	return r;
}
