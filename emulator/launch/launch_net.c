/* emulator/launch/launch_net.c — the launcher's namespaces and links
 * (docs/architecture.md, Daemons; docs/topology.md, Port kinds and
 * mirrors): a namespace per node, a veth pair per link, TAP ports and
 * mirror veths, made before the daemons start and deleted at teardown. */
#include <errno.h>
#include <string.h>

#include "launch_run.h"

/* ---- namespaces and links --------------------------------------------------- */

static int ip_run(struct launch *l, const char *const *argv)
{
	char err[1024];

	if (launch_ip(argv, &l->oldmask, err, sizeof(err)))
		return 0;
	return launch_fail(l, "%s", err);
}

static void mac_text(const uint8_t *m, char *buf, size_t len)
{
	snprintf(buf, len, "%02x:%02x:%02x:%02x:%02x:%02x", m[0], m[1], m[2], m[3], m[4], m[5]);
}

/* The daemon contract: one namespace per node, "mrc-<emulation>-<node>". */
static int netns_make(struct launch *l)
{
	for (int i = 0; i < l->t->nnodes; i++) {
		const char *argv[] = {"ip", "netns", "add", l->d[i].ns, NULL};
		if (launch_signals_wait(l, 0))
			return 1;
		if (!launch_manifest_add(l->manifest, "netns %s", l->d[i].ns))
			return launch_fail(l, "%s/%s: %s", l->rundir, LAUNCH_MANIFEST,
					   strerror(errno));
		if (ip_run(l, argv))
			return 1;
		l->d[i].ns_made = true;
	}
	return 0;
}

/* The MAC of a link's veth end in node's namespace.  An external endpoint's
 * is the node's own: the tools there may use the kernel's stack.  A daemon's
 * is the node's with bit 2 of its first octet flipped (02:... -> 06:...),
 * never the node's: the frames its peer addresses to the node are then
 * another host's to the kernel (PACKET_OTHERHOST), which drops them at the
 * door of its IP stack once the packet taps (the daemon's socket, tcpdump)
 * have them, instead of looking up a route for each and finding none
 * (docs/architecture.md, Daemons). */
static void veth_mac(const struct launch *l, int node, char *buf, size_t len)
{
	uint8_t m[6];

	memcpy(m, l->t->nodes[node].mac, sizeof(m));
	if (l->t->nodes[node].kind != NODE_EXTERNAL)
		m[0] ^= 0x04;
	mac_text(m, buf, len);
}

/* One veth pair per link, each end made straight in its node's namespace as
 * p<port>, with its MAC (veth_mac) and an MTU of 9,000 (docs/architecture.md,
 * Daemons: room for MSS + headers + the 8-byte trailer). */
static int links_make(struct launch *l)
{
	for (int k = 0; k < l->t->nlinks; k++) {
		const struct topo_link *lk = &l->t->links[k];
		char ifa[16], ifb[16], maca[24], macb[24];
		const char *argv[] = {
		    "ip",   "link",    "add",	  ifa,	   "netns",	   l->d[lk->a].ns,
		    "mtu",  "9000",    "address", maca,	   "type",	   "veth",
		    "peer", "name",    ifb,	  "netns", l->d[lk->b].ns, "mtu",
		    "9000", "address", macb,	  NULL};
		/* A TAP end's veth is v<N>: p<N> is its TAP device (taps_make). */
		snprintf(ifa, sizeof(ifa), "%c%d", lk->kind[0] == TOPO_PORT_TAP ? 'v' : 'p',
			 lk->a_port);
		snprintf(ifb, sizeof(ifb), "%c%d", lk->kind[1] == TOPO_PORT_TAP ? 'v' : 'p',
			 lk->b_port);
		veth_mac(l, lk->a, maca, sizeof(maca));
		veth_mac(l, lk->b, macb, sizeof(macb));
		if (launch_signals_wait(l, 0))
			return 1;
		launch_manifest_add(l->manifest, "link %s %s %s %s", l->d[lk->a].ns, ifa,
				    l->d[lk->b].ns, ifb);
		if (ip_run(l, argv))
			return 1;
	}
	return 0;
}

/* A TAP port (docs/topology.md, Port kinds): the TAP device p<N>, made
 * persistent here for the daemon to attach to, and the link's veth end v<N>,
 * joined both ways by tc mirred redirects, so that what the daemon writes
 * to the TAP leaves on the veth and what arrives there reaches the TAP. */
static int tap_make(struct launch *l, int node, int port)
{
	const char *ns = l->d[node].ns;
	char tap[16];
	const char *add[] = {"ip", "-n", ns, "tuntap", "add", "dev", tap, "mode", "tap", NULL};
	const char *mtu[] = {"ip", "-n", ns, "link", "set", "dev", tap, "mtu", "9000", NULL};

	snprintf(tap, sizeof(tap), "p%d", port);
	return ip_run(l, add) || ip_run(l, mtu);
}

static int tap_join(struct launch *l, int node, int port)
{
	const char *ns = l->d[node].ns;
	char tap[16], veth[16];

	snprintf(tap, sizeof(tap), "p%d", port);
	snprintf(veth, sizeof(veth), "v%d", port);
	for (int dir = 0; dir < 2; dir++) {
		const char *from = dir ? tap : veth, *to = dir ? veth : tap;
		const char *qdisc[] = {"ip",  "netns", "exec", ns,	  "tc", "qdisc",
				       "add", "dev",   from,   "ingress", NULL};
		/* u32 matching everything: cls_matchall is not in every kernel. */
		const char *redirect[] = {
		    "ip", "netns",   "exec",	 ns,	   "tc",       "filter", "add", "dev",
		    from, "ingress", "protocol", "all",	   "u32",      "match",	 "u32", "0",
		    "0",  "action",  "mirred",	 "egress", "redirect", "dev",	 to,	NULL};
		if (ip_run(l, qdisc) || ip_run(l, redirect))
			return 1;
	}
	return 0;
}

/* Every TAP end: made (before ports_up) or joined to its veth (after). */
static int taps_each(struct launch *l, int (*fn)(struct launch *, int, int))
{
	for (int k = 0; k < l->t->nlinks; k++) {
		const struct topo_link *lk = &l->t->links[k];
		if (lk->kind[0] == TOPO_PORT_TAP &&
		    (launch_signals_wait(l, 0) || fn(l, lk->a, lk->a_port)))
			return 1;
		if (lk->kind[1] == TOPO_PORT_TAP &&
		    (launch_signals_wait(l, 0) || fn(l, lk->b, lk->b_port)))
			return 1;
	}
	return 0;
}

/* No IPv6 (so no router solicitations in the captures), then lo and every
 * port up; no addresses: the kernel would answer UDP 4791 with ICMP. */
static int ports_up(struct launch *l)
{
	char names[2 * TOPO_MAX_PORTS][16], err[512];
	const char *ifs[2 * TOPO_MAX_PORTS];

	for (int i = 0; i < l->t->nnodes; i++) {
		const char *lo[] = {"ip", "-n", l->d[i].ns, "link", "set", "dev", "lo", "up", NULL};
		int n = 0;
		for (int p = 0; p < l->t->nodes[i].nports; p++) {
			snprintf(names[n], sizeof(names[n]), "p%d", p);
			ifs[n] = names[n];
			n++;
			if (topology_port_kind(l->t, i, p) == TOPO_PORT_TAP) {
				snprintf(names[n], sizeof(names[n]), "v%d", p); /* its veth */
				ifs[n] = names[n];
				n++;
			}
		}
		if (launch_signals_wait(l, 0))
			return 1;
		if (!launch_ns_disable_ipv6(l->d[i].ns, ifs, n, &l->oldmask, err, sizeof(err)))
			return launch_fail(l, "%s", err);
		if (ip_run(l, lo))
			return 1;
		for (int p = 0; p < n; p++) {
			const char *up[] = {"ip",  "-n",   l->d[i].ns, "link", "set",
					    "dev", ifs[p], "up",       NULL};
			if (ip_run(l, up))
				return 1;
		}
	}
	return 0;
}

/* A mirror veth per `mirror = PORT -> IFNAME[@NETNS]` (docs/topology.md):
 * m<PORT> in the switch's namespace, where switchd writes the copies,
 * and IFNAME in the user's namespace (or the launcher's), both at MTU 9,000
 * and up; IFNAME gets no IPv6 address, so that nothing but the copies
 * crosses it.  Deleting the switch's namespace deletes the pair. */
static int mirrors_make(struct launch *l)
{
	for (int i = 0; i < l->t->nnodes; i++) {
		const struct topo_node *n = &l->t->nodes[i];
		for (int k = 0; k < n->nmirrors; k++) {
			const struct topo_mirror *m = &n->mirrors[k];
			char sw_if[16];
			const char *ns = m->netns[0] ? m->netns : NULL;
			const char *add[] = {"ip",	"link",	    "add",  sw_if,
					     "netns",	l->d[i].ns, "mtu",  "9000",
					     "type",	"veth",	    "peer", "name",
					     m->ifname, "mtu",	    "9000", ns ? "netns" : NULL,
					     ns,	NULL};
			const char *up[] = {"ip",  "-n",  l->d[i].ns, "link", "set",
					    "dev", sw_if, "up",	      NULL};
			const char *up_there[] = {"ip",	  "-n",	 ns,	    "link",
						  "set",  "dev", m->ifname, "addrgenmode",
						  "none", "up",	 NULL};
			const char *up_here[] = {"ip",		"link", "set", "dev", m->ifname,
						 "addrgenmode", "none", "up",  NULL};
			snprintf(sw_if, sizeof(sw_if), "m%d", m->port);
			if (launch_signals_wait(l, 0) || ip_run(l, add) || ip_run(l, up) ||
			    ip_run(l, ns ? up_there : up_here))
				return 1;
		}
	}
	return 0;
}

/* Everything the daemons' ports need, in this order: namespaces, veths,
 * TAP devices, addresses off and links up, TAPs joined, mirrors. */
int launch_net_make(struct launch *l)
{
	return netns_make(l) || links_make(l) || taps_each(l, tap_make) || ports_up(l) ||
	       taps_each(l, tap_join) || mirrors_make(l);
}

void launch_net_delete(struct launch *l)
{
	for (int i = 0; i < l->t->nnodes; i++) {
		const char *argv[] = {"ip", "netns", "delete", l->d[i].ns, NULL};
		if (l->d[i].ns_made && !ip_run(l, argv))
			l->d[i].ns_made = false;
	}
}
