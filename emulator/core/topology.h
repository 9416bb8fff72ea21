/* emulator/core/topology.h — a topology file (docs/topology.md): the emulation, its
 * nodes (NICs, switches, external endpoints), links, addresses, MACs, the
 * workload; and, from them, routes with ECMP sets.  Read with libinih.
 *
 * Errors are one line "FILE:LINE: ATTRIBUTE: reason (allowed: RANGE)"; the
 * caller prints it and exits 2. */
#ifndef EMULATOR_TOPOLOGY_H
#define EMULATOR_TOPOLOGY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "attrs.h"
#include "hmap.h"

#define TOPO_NAME_MAX  32
#define TOPO_MAX_PORTS 64
#define TOPO_ERR_MAX   512

enum node_kind { NODE_NIC, NODE_SWITCH, NODE_EXTERNAL };

struct topo_port {
	int link;      /* index into topology.links */
	int peer;      /* node at the other end */
	int peer_port; /* its port number there */
};

/* A switch port copied to an interface, both directions, as a tap sees the
 * link (docs/topology.md, mirror): `mirror = PORT -> IFNAME[@NETNS]`. */
#define TOPO_MIRROR_MAX 4
struct topo_mirror {
	int port;		   /* the switch port copied */
	int line;		   /* where the file says so */
	char ifname[16];	   /* the user's end of the mirror veth (IFNAMSIZ) */
	char netns[TOPO_NAME_MAX]; /* its namespace; "" the launcher's own */
};

struct topo_node {
	char name[TOPO_NAME_MAX];
	enum node_kind kind;
	int line;		/* where it was declared */
	uint32_t ip;		/* NICs and externals */
	uint8_t mac[6];		/* 02:00:00:00:00:(index+1) style, unique */
	struct nic_attrs nic;	/* NICs: [nic] defaults + overrides, resolved */
	struct switch_attrs sw; /* switches: [switch] defaults + overrides;
				 * EgressQueueLimit stays 0 (derived) since it
				 * depends on the port: resolve a copy per port
				 * with config_switch_resolve(&c, port rate) */
	struct topo_port ports[TOPO_MAX_PORTS];
	int nports;
	struct topo_mirror mirrors[TOPO_MIRROR_MAX]; /* switches */
	int nmirrors;
};

/* How a daemon's port reaches its link (docs/topology.md, Port kinds). */
enum topo_port_kind {
	TOPO_PORT_PACKET, /* AF_PACKET on the veth p<N> (the default) */
	TOPO_PORT_TAP,	  /* a TAP device p<N>, joined to the veth v<N> by tc */
	TOPO_PORT_DPDK,	  /* DPDK's AF_PACKET PMD on the veth p<N> (make DPDK=1) */
};

struct topo_link {
	int a, b;	    /* node indices */
	int a_port, b_port; /* port numbers on each, in order of appearance */
	int line;
	struct link_attrs attrs;
	enum topo_port_kind kind[2]; /* `ports = KIND_A KIND_B` */
};

/* An ECMP set (docs/protocol.md §9): a switch's egress ports on every
 * shortest path to a destination, as a bitmap (bit p = port p), and the
 * same ports in port order, where the flow hash picks one. */
struct topo_ecmp {
	uint64_t ports;
	uint8_t count; /* 0: no route */
	uint8_t port[TOPO_MAX_PORTS];
};
_Static_assert(TOPO_MAX_PORTS <= 64, "an ECMP set is a 64-bit port bitmap");

/* Where a NIC or external hangs off the fabric: its one port's peer.  A
 * leaf is a switch that NICs or externals hang off; every shortest path
 * to an endpoint ends through its leaf, so a switch's next hops towards it
 * are its next hops towards the leaf. */
struct topo_attach {
	int sw;	      /* the leaf switch; -1 for switches and for an endpoint
		       * linked straight to another endpoint */
	int16_t port; /* the leaf's port to the endpoint */
	int16_t leaf; /* the leaf's index among leaves (a hop reads it with
		       * sw and port); switches: their own index when they are
		       * a leaf, else -1 */
};

/* A switch's routes: one ECMP set per leaf, and one per port that leads to
 * an endpoint; equal sets stored once (a leaf-spine's leaf has one set for
 * every remote leaf), so a switch keeps O(leaves) bytes, not O(nodes). */
struct topo_routes {
	uint16_t *to_leaf;		  /* [nleaves] -> sets */
	uint16_t to_port[TOPO_MAX_PORTS]; /* -> sets; ports to an endpoint */
	struct topo_ecmp *sets;		  /* sets[0] is empty */
	int nsets;
};

struct topo_ip_slot {
	uint32_t ip;
	int32_t node; /* -1: empty */
};

/* A switch hop's lookup of its destination (topology_ip_route): the
 * endpoint's address, node and attachment in one slot, where by_ip and
 * attach were two dependent loads and a hash of 27 % extra probes
 * (callgrind, 8 hosts). */
struct topo_ip_route {
	uint32_t ip;
	int32_t node; /* -1: an empty slot */
	int32_t sw;   /* attach[node].sw: its leaf, or -1 */
	/* a switch's index of the route (struct sw's hop): `port` at the
	 * leaf itself, `away` elsewhere: TOPO_MAX_PORTS + the leaf's index,
	 * or TOPO_MAX_PORTS + nleaves (no route) without a leaf or a node */
	uint16_t port, away;
};

#define TOPO_COLL_TYPES 10 /* Chakra's CollectiveCommType values */

struct topology {
	char path[4096]; /* the file, as given */
	char dir[4096];	 /* its folder, for relative paths */
	struct emulation_attrs emu;
	struct topo_node *nodes;
	int nnodes;
	struct topo_link *links;
	int nlinks;
	char workload[4096]; /* resolved path, "" if none */
	char chakra[4096];   /* Chakra traces DIR/NAME (NAME.<rank>.et), "" if none */
	int *ranks;	     /* Chakra rank -> NIC node index ([workload] ranks) */
	int nranks;
	/* [workload] <Collective>Algorithm, by CollectiveCommType (chakra.h,
	 * enum chakra_algo); 0 = the collective's default. */
	uint8_t coll_algo[TOPO_COLL_TYPES];

	/* Node names and endpoint addresses, hashed (topology.c). */
	struct hmap by_name;	    /* FNV-1a of the name -> index + 1 */
	bool name_clash;	    /* two names share a hash: look further */
	struct topo_ip_slot *by_ip; /* open addressing, a power of two */
	uint32_t ip_mask;
	/* Routes, computed by topology_routes() (docs/protocol.md §9). */
	struct topo_attach *attach; /* [nnodes] */
	struct topo_routes *routes; /* [nnodes], switches only */
	int nleaves;
	/* every endpoint's address, open addressing by (ip x ip_route_mul)'s
	 * top bits, ip_route_shift = 32 - log2 of the size (the multiplier
	 * with the fewest probes of a few, topology_routes) */
	struct topo_ip_route *ip_routes;
	uint32_t ip_route_mul, ip_route_mask;
	uint8_t ip_route_shift;
	ps_t auto_rtt; /* what `auto` resolved to, 0 when nothing used it */
};

/* Read and check a topology file.  Returns NULL and fills err on error. */
struct topology *topology_load(const char *path, char *err, size_t errlen);

/* At most this many `--set` overrides. */
#define TOPO_MAX_SETS 32

/* topology_load with `--set SECTION.ATTRIBUTE=VALUE` overrides (SECTION:
 * emulation, nic, switch, link), applied after the file: to [emulation],
 * or to every NIC, switch or link, whatever the file set (docs/cli.md).
 * A bad one: "--set TEXT: reason" in err. */
struct topology *topology_load_set(const char *path, const char *const *sets, int nsets, char *err,
				   size_t errlen);
void topology_free(struct topology *t);

int topology_find(const struct topology *t, const char *name);

/* The NIC or external whose address is ip, or -1: on every switch hop. */
static inline int topology_find_ip(const struct topology *t, uint32_t ip)
{
	uint32_t i = (uint32_t)((ip * 0x9E3779B97F4A7C15ULL) >> 32) & t->ip_mask;

	for (; t->by_ip && t->by_ip[i].node >= 0; i = (i + 1) & t->ip_mask)
		if (t->by_ip[i].ip == ip)
			return t->by_ip[i].node;
	return -1;
}

/* The slot of the NIC or external whose address is ip; for an address
 * no endpoint has, an empty slot (node and sw -1): on every switch hop. */
static inline const struct topo_ip_route *topology_ip_route(const struct topology *t, uint32_t ip)
{
	uint32_t i = (ip * t->ip_route_mul) >> t->ip_route_shift;
	const struct topo_ip_route *r = &t->ip_routes[i];

	/* mostly found at once (the multiplier's choice): a loop from the
	 * first slot cost the hop a jump more (callgrind, 8 hosts) */
	if (__builtin_expect(r->ip == ip, 1))
		return r;
	while (r->ip != ip && r->node >= 0)
		r = &t->ip_routes[i = (i + 1) & t->ip_route_mask];
	return r;
}

/* The kind of port node's port `port` uses. */
static inline enum topo_port_kind topology_port_kind(const struct topology *t, int node, int port)
{
	const struct topo_link *l = &t->links[t->nodes[node].ports[port].link];
	return l->kind[l->a == node ? 0 : 1];
}

/* The link rate a NIC's port runs at, both ways: min(link rate, DataRate)
 * (docs/protocol.md §12 rule 13). */
uint64_t topology_port_rate(const struct topology *t, int node, int port);

/* Compute the routes (topology_routes.c): every switch's ECMP set towards
 * every leaf, from one breadth-first search per leaf.  On an endpoint that
 * cannot reach the others, or a path of more switches than TTL allows,
 * returns false with that node and one line of why. */
bool topology_routes(struct topology *t, int *bad_node, char *why, size_t len);
void topology_routes_free(struct topology *t);

/* docs/protocol.md §5, `ConfigBaseRTT = auto`: the longest host-to-host
 * round trip of the topology at line rate with a full packet (MSS + 78
 * bytes serialized at every hop, both ways, plus the links' delays). */
ps_t topology_fabric_rtt(const struct topology *t);

/* The ports of switch sw by which a frame that came in on them may leave
 * again (bit p = port p), from the routes (docs/promises.md, Lookahead): a
 * frame from a switch peer for endpoint d came by the peer's set for d; a
 * NIC sends to any endpoint but itself; an external endpoint, anything. */
uint64_t topology_reflects(const struct topology *t, int sw);

/* The ECMP set of switch `sw` towards NIC or external `dst`; count 0 =
 * none. */
static inline const struct topo_ecmp *topology_ecmp(const struct topology *t, int sw, int dst)
{
	const struct topo_routes *r = &t->routes[sw];
	const struct topo_attach *a = &t->attach[dst];

	if (a->sw == sw)
		return &r->sets[r->to_port[a->port]];
	return &r->sets[a->sw < 0 ? 0 : r->to_leaf[a->leaf]];
}

/* Whether name is a valid emulation name (emulation) or node name
 * (docs/topology.md, Names): 1..TOPO_NAME_MAX-1 letters, digits and '_',
 * and '-' in emulation names, starting with a letter or digit, so that
 * names make safe paths and unambiguous namespace names.  If not, one line
 * in why. */
bool topology_name_check(const char *name, bool emulation, char *why, size_t len);

/* A node's network namespace name for `mrcemu run`: "mrc-<emu>-<node>". */
void topology_netns(const struct topology *t, int node, char *buf, size_t len);

/* Add the `drop` rules in text ("h0>h1 data psn=5 tx=1, h1>h0 ack psn=1023
 * count=all") to l, resolving node names in t.  On error, one line "drop:
 * reason (allowed: ...)" in err. */
bool topology_parse_drops(const struct topology *t, const char *text, struct link_attrs *l,
			  char *err, size_t errlen);

/* "10.0.0.1" <-> host-order address. */
bool ipv4_parse(const char *s, uint32_t *ip);
char *ipv4_format(uint32_t ip, char *buf, size_t len);

#endif
