/* emulator/core/topology_routes.c — routes of a topology: for every switch and
 * destination NIC or external, the ECMP set of egress ports on every
 * shortest path (docs/protocol.md §9). */
#include <stdio.h>
#include <stdlib.h>

#include "topology.h"
#include "wire.h"

/* Hop counts from `src` to every node; NICs and externals have one port, so
 * no shortest path passes through them. */
static void bfs(const struct topology *t, int src, int *dist, int *queue)
{
	int head = 0, tail = 0;

	for (int i = 0; i < t->nnodes; i++) {
		dist[i] = -1;
	}
	dist[src] = 0;
	queue[tail++] = src;
	while (head < tail) {
		const struct topo_node *n = &t->nodes[queue[head++]];
		for (int p = 0; p < n->nports; p++) {
			int peer = n->ports[p].peer;
			if (dist[peer] < 0) {
				dist[peer] = dist[queue[head - 1]] + 1;
				queue[tail++] = peer;
			}
		}
	}
}

static int unreachable(const struct topology *t, const int *dist)
{
	for (int i = 0; i < t->nnodes; i++) {
		if (t->nodes[i].kind != NODE_SWITCH && dist[i] < 0) {
			return i;
		}
	}
	return -1;
}

/* A frame leaves a NIC with TTL 64 and a switch drops one that arrives with
 * TTL 1 or less (docs/protocol.md §1): a shortest path may cross at most 63
 * switches.  A longer one would lose every frame, so the load refuses it.
 * Returns the farthest endpoint beyond that, or -1. */
#define ROUTE_MAX_SWITCHES (WIRE_TTL - 1)
static int too_far(const struct topology *t, const int *dist)
{
	int far = -1;

	for (int i = 0; i < t->nnodes; i++) {
		if (t->nodes[i].kind != NODE_SWITCH && dist[i] - 1 > ROUTE_MAX_SWITCHES &&
		    (far < 0 || dist[i] > dist[far])) {
			far = i;
		}
	}
	return far;
}

/* One destination's column: every port whose peer is one hop nearer, in
 * port order.  Returns the node with too many, or -1. */
static int ecmp_sets(struct topology *t, size_t d, const int *dist)
{
	size_t nn = (size_t)t->nnodes;

	for (size_t s = 0; s < nn; s++) {
		const struct topo_node *n = &t->nodes[s];
		uint8_t *count = &t->route_count[s * nn + d];
		uint16_t *ports = &t->route_ports[(s * nn + d) * TOPO_ECMP_MAX];
		for (int p = 0; s != d && p < n->nports && dist[s] > 0; p++) {
			if (dist[n->ports[p].peer] != dist[s] - 1) {
				continue;
			}
			if (*count == TOPO_ECMP_MAX) {
				return (int)s;
			}
			ports[(*count)++] = (uint16_t)p;
		}
	}
	return -1;
}

bool topology_routes(struct topology *t, int *bad_node, char *why, size_t len)
{
	size_t nn = (size_t)t->nnodes;
	int *dist = malloc(nn * sizeof *dist), *queue = malloc(nn * sizeof *queue);
	int first = -1, bad = -1;

	t->route_ports = calloc(nn * nn * TOPO_ECMP_MAX, sizeof *t->route_ports);
	t->route_count = calloc(nn * nn, sizeof *t->route_count);
	if (!dist || !queue || !t->route_ports || !t->route_count) {
		fprintf(stderr, "mrcemu: out of memory computing routes\n");
		abort();
	}
	for (size_t d = 0; d < nn && bad < 0; d++) {
		if (t->nodes[d].kind == NODE_SWITCH) {
			continue;
		}
		bfs(t, (int)d, dist, queue);
		if (first < 0 && (bad = unreachable(t, dist)) >= 0) {
			snprintf(
			    why, len,
			    "link: %s cannot reach %s (allowed: every NIC and external connected)",
			    t->nodes[bad].name, t->nodes[d].name);
			break;
		}
		if ((bad = too_far(t, dist)) >= 0) {
			snprintf(
			    why, len,
			    "link: the path from %s to %s crosses %d switches (allowed: at most "
			    "%d: frames leave with TTL %d and each switch takes one)",
			    t->nodes[bad].name, t->nodes[d].name, dist[bad] - 1, ROUTE_MAX_SWITCHES,
			    WIRE_TTL);
			break;
		}
		first = (int)d;
		if ((bad = ecmp_sets(t, d, dist)) >= 0) {
			snprintf(
			    why, len,
			    "link: %s has more than %d equal next hops to %s (allowed: at most %d)",
			    t->nodes[bad].name, TOPO_ECMP_MAX, t->nodes[d].name, TOPO_ECMP_MAX);
		}
	}
	free(dist);
	free(queue);
	*bad_node = bad;
	return bad < 0;
}

int topology_ecmp(const struct topology *t, int sw, int dst, const uint16_t **ports)
{
	size_t i = (size_t)sw * (size_t)t->nnodes + (size_t)dst;

	if (sw < 0 || dst < 0 || sw >= t->nnodes || dst >= t->nnodes || !t->route_count) {
		*ports = NULL;
		return 0;
	}
	*ports = &t->route_ports[i * TOPO_ECMP_MAX];
	return t->route_count[i];
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
		const uint16_t *ports;
		sum += time_serialize(full, topology_port_rate(t, node, port)) +
		       t->links[p->link].attrs.delay;
		node = p->peer;
		if (node == b || t->nodes[node].kind != NODE_SWITCH ||
		    topology_ecmp(t, node, b, &ports) < 1)
			break;
		port = ports[0];
	}
	return sum;
}

ps_t topology_fabric_rtt(const struct topology *t)
{
	ps_t longest = 0;

	for (int a = 0; a < t->nnodes; a++) {
		if (t->nodes[a].kind != NODE_NIC || !t->nodes[a].nports)
			continue;
		for (int b = 0; b < t->nnodes; b++) {
			ps_t rtt;
			if (b == a || t->nodes[b].kind != NODE_NIC)
				continue;
			rtt = one_way(t, a, b) + one_way(t, b, a);
			if (rtt > longest)
				longest = rtt;
		}
	}
	return longest;
}
