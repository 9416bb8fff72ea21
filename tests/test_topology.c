/* tests/test_topology.c — topology files (docs/topology.md, Topology file):
 * good files load with the right ports, MACs, addresses, link attributes,
 * down windows, drop rules and ECMP sets; every bad fixture in
 * tests/data/bad/ is refused naming its file, line and reason; workload
 * files (docs/topology.md, Workload file) load and are checked. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/config.h"
#include "core/topology.h"
#include "core/workload.h"

#define DATA "tests/data/"
#define GBPS 1000000000ULL

static struct topology *load_ok(const char *path)
{
	char err[TOPO_ERR_MAX] = "";
	struct topology *t = topology_load(path, err, sizeof err);

	if (!t) {
		fail_msg("%s refused: %s", path, err);
	}
	return t;
}

static void assert_mac(const struct topo_node *n, const char *want)
{
	char got[18];

	snprintf(got, sizeof got, "%02x:%02x:%02x:%02x:%02x:%02x", n->mac[0], n->mac[1], n->mac[2],
		 n->mac[3], n->mac[4], n->mac[5]);
	assert_string_equal(got, want);
}

static void test_two_hosts_nodes(void **state)
{
	struct topology *t = load_ok(DATA "two-hosts.ini");
	char buf[64];

	(void)state;
	assert_string_equal(t->emu.name, "two-hosts");
	assert_int_equal(t->emu.seed, 7);
	assert_int_equal(t->emu.scale, 2000);
	assert_int_equal(t->emu.until, 10 * PS_PER_MS);
	assert_false(t->emu.capture);
	assert_string_equal(t->dir, "tests/data");
	assert_string_equal(t->workload, "tests/data/workloads/two-hosts.csv");

	assert_int_equal(t->nnodes, 3);
	int h0 = topology_find(t, "h0"), h1 = topology_find(t, "h1"), s0 = topology_find(t, "s0");
	assert_int_equal(h0, 0);
	assert_int_equal(h1, 1);
	assert_int_equal(s0, 2);
	assert_int_equal(topology_find(t, "nope"), -1);
	assert_int_equal(t->nodes[h0].kind, NODE_NIC);
	assert_int_equal(t->nodes[s0].kind, NODE_SWITCH);
	assert_int_equal(t->nodes[h0].line, 17);
	assert_int_equal(t->nodes[h0].ip, 0x0A000001);
	assert_int_equal(t->nodes[h1].ip, 0x0A000002);
	assert_int_equal(topology_find_ip(t, 0x0A000002), h1);
	assert_int_equal(topology_find_ip(t, 0x0A000003), -1);
	/* a hop's lookup: the node and its attachment, or an empty slot */
	assert_int_equal(topology_ip_route(t, 0x0A000002)->node, h1);
	assert_int_equal(topology_ip_route(t, 0x0A000002)->sw, s0);
	assert_int_equal(topology_ip_route(t, 0x0A000002)->port, t->attach[h1].port);
	assert_int_equal(topology_ip_route(t, 0x0A000002)->away,
			 TOPO_MAX_PORTS + t->attach[h1].leaf);
	for (uint32_t ip = 0; ip < 4; ip++) {
		const struct topo_ip_route *r = topology_ip_route(t, ip ? 0x0A000002 + ip : 0);
		assert_int_equal(r->node, -1);
		assert_int_equal(r->sw, -1);
		assert_int_equal(r->away, TOPO_MAX_PORTS + t->nleaves);
	}
	/* docs/vectors.md: h0 is 02:00:00:00:00:01, h1 02:00:00:00:00:02 */
	assert_mac(&t->nodes[h0], "02:00:00:00:00:01");
	assert_mac(&t->nodes[h1], "02:00:00:00:00:02");
	assert_mac(&t->nodes[s0], "02:00:00:00:00:03");

	/* [nic] defaults and the node's own override; derived values resolved */
	assert_int_equal(t->nodes[h0].nic.mss, 4096);
	assert_int_equal(t->nodes[h0].nic.data_rate, 400 * GBPS);
	assert_int_equal(t->nodes[h0].nic.max_cwnd, 374040);
	assert_int_equal(t->nodes[h1].nic.data_rate, 100 * GBPS);
	assert_int_equal(t->nodes[h1].nic.max_cwnd, 23 * 4156);
	assert_int_equal(t->nodes[h1].nic.min_cwnd, 4156);
	assert_true(t->nodes[s0].sw.uet_policy);

	topology_netns(t, h0, buf, sizeof buf);
	assert_string_equal(buf, "mrc-two-hosts-h0");
	topology_netns(t, s0, buf, 8);
	assert_string_equal(buf, "mrc-two");
	topology_free(t);
}

static void test_two_hosts_links(void **state)
{
	struct topology *t = load_ok(DATA "two-hosts.ini");
	const struct topo_link *l0 = &t->links[0], *l1 = &t->links[1];

	(void)state;
	assert_int_equal(t->nlinks, 2);
	/* Ports numbered per node in the order links appear. */
	assert_int_equal(l0->a, 0);
	assert_int_equal(l0->b, 2);
	assert_int_equal(l0->a_port, 0);
	assert_int_equal(l0->b_port, 0);
	assert_int_equal(l1->a, 1);
	assert_int_equal(l1->b, 2);
	assert_int_equal(l1->a_port, 0);
	assert_int_equal(l1->b_port, 1);
	assert_int_equal(l1->line, 27);
	assert_int_equal(t->nodes[2].nports, 2);
	assert_int_equal(t->nodes[2].ports[1].peer, 1);
	assert_int_equal(t->nodes[2].ports[1].peer_port, 0);
	assert_int_equal(t->nodes[2].ports[1].link, 1);
	assert_int_equal(t->nodes[1].ports[0].peer, 2);
	assert_int_equal(t->nodes[1].ports[0].peer_port, 1);

	assert_int_equal(l0->attrs.rate, 400 * GBPS);
	assert_int_equal(l0->attrs.delay, PS_PER_US);
	assert_true(l0->attrs.loss == 0.0);
	assert_int_equal(l1->attrs.delay, 2 * PS_PER_US);
	assert_true(l1->attrs.loss == 0.001);
	/* docs/protocol.md §12 rule 13: the link's delay is the NIC's Delay */
	assert_int_equal(t->nodes[0].nic.delay, PS_PER_US);
	assert_int_equal(t->nodes[1].nic.delay, 2 * PS_PER_US);
	/* ... and a NIC's link runs at min(link rate, DataRate), both ends */
	assert_int_equal(topology_port_rate(t, 0, 0), 400 * GBPS);
	assert_int_equal(topology_port_rate(t, 1, 0), 100 * GBPS);
	assert_int_equal(topology_port_rate(t, 2, 0), 400 * GBPS);
	assert_int_equal(topology_port_rate(t, 2, 1), 100 * GBPS);

	assert_int_equal(l0->attrs.ndown, 0);
	assert_int_equal(l1->attrs.ndown, 2);
	assert_int_equal(l1->attrs.down[0].from, 300 * PS_PER_US);
	assert_int_equal(l1->attrs.down[0].to, 500 * PS_PER_US);
	assert_int_equal(l1->attrs.down[1].from, PS_PER_MS);
	assert_int_equal(l1->attrs.down[1].to, 2 * PS_PER_MS);

	/* drop = h0>h1 data psn=5 tx=1, h1>h0 ack psn=1023 count=all
	 * drop = h0>h1 probe count=3 */
	assert_int_equal(l0->attrs.ndrops, 0);
	assert_int_equal(l1->attrs.ndrops, 3);
	const struct drop_rule *d = l1->attrs.drops;
	assert_int_equal(d[0].from_node, 0);
	assert_int_equal(d[0].to_node, 1);
	assert_int_equal(d[0].kind, DROP_DATA);
	assert_int_equal(d[0].psn, 5);
	assert_int_equal(d[0].rtx, 0); /* tx=1: the first transmission */
	assert_int_equal(d[0].msn, -1);
	assert_int_equal(d[0].count, 1);
	assert_int_equal(d[1].from_node, 1);
	assert_int_equal(d[1].to_node, 0);
	assert_int_equal(d[1].kind, DROP_ACK);
	assert_int_equal(d[1].psn, 1023);
	assert_int_equal(d[1].rtx, -1);
	assert_int_equal(d[1].count, -1);
	assert_int_equal(d[2].kind, DROP_PROBE);
	assert_int_equal(d[2].psn, -1);
	assert_int_equal(d[2].count, 3);

	const struct topo_ecmp *e;
	assert_int_equal((e = topology_ecmp(t, 2, 1))->count, 1);
	assert_int_equal(e->port[0], 1);
	assert_int_equal((e = topology_ecmp(t, 2, 0))->count, 1);
	assert_int_equal(e->port[0], 0);
	topology_free(t);
}

/* docs/protocol.md §9: every shortest path.  leaf0 has h0, h1 on ports 0, 1 and
 * the four spines on ports 2..5. */
static void test_leaf_spine_ecmp(void **state)
{
	struct topology *t = load_ok(DATA "leaf-spine-small.ini");
	int leaf0 = topology_find(t, "leaf0"), leaf1 = topology_find(t, "leaf1");
	int spine2 = topology_find(t, "spine2");
	int h0 = topology_find(t, "h0"), h1 = topology_find(t, "h1"), h2 = topology_find(t, "h2");
	int h3 = topology_find(t, "h3");
	const struct topo_ecmp *e;

	(void)state;
	assert_int_equal(t->nnodes, 10);
	assert_int_equal(t->nodes[leaf0].nports, 6);
	assert_int_equal((e = topology_ecmp(t, leaf0, h2))->count, 4);
	for (int i = 0; i < 4; i++) {
		assert_int_equal(e->port[i], 2 + i);
		assert_int_equal(t->nodes[t->nodes[leaf0].ports[e->port[i]].peer].kind,
				 NODE_SWITCH);
		assert_true(e->ports >> (2 + i) & 1);
	}
	assert_int_equal((e = topology_ecmp(t, leaf0, h3))->count, 4);
	assert_int_equal((e = topology_ecmp(t, leaf0, h0))->count, 1);
	assert_int_equal(e->port[0], 0);
	assert_int_equal((e = topology_ecmp(t, leaf0, h1))->count, 1);
	assert_int_equal(e->port[0], 1);
	assert_int_equal((e = topology_ecmp(t, leaf1, h0))->count, 4);
	assert_int_equal((e = topology_ecmp(t, leaf1, h2))->count, 1);
	assert_int_equal(t->nodes[leaf1].ports[e->port[0]].peer, h2);
	assert_int_equal((e = topology_ecmp(t, spine2, h0))->count, 1);
	assert_int_equal(t->nodes[spine2].ports[e->port[0]].peer, leaf0);
	assert_int_equal((e = topology_ecmp(t, spine2, h3))->count, 1);
	assert_int_equal(t->nodes[spine2].ports[e->port[0]].peer, leaf1);
	/* Shortest paths never send a frame back out of the port it came in
	 * on (docs/promises.md, Lookahead). */
	for (int i = 0; i < t->nnodes; i++)
		if (t->nodes[i].kind == NODE_SWITCH)
			assert_int_equal(topology_reflects(t, i), 0);
	/* switch-to-switch ports at their own rate */
	assert_int_equal(topology_port_rate(t, leaf0, 2), 800 * GBPS);
	assert_int_equal(topology_port_rate(t, leaf0, 0), 400 * GBPS);
	topology_free(t);
}

struct bad_case {
	const char *file;
	int line;
	const char *reason; /* the text after "FILE:LINE: " must contain it */
};

static void test_bad_fixtures(void **state)
{
	static const struct bad_case cases[] = {
	    {"unknown-node.ini", 10, "link: unknown node 's9'"},
	    {"duplicate-ip.ini", 7, "ip: 10.0.0.1 is already h0's address (line 5)"},
	    {"unreachable.ini", 11, "link: h2 cannot reach h0"},
	    {"nic-two-links.ini", 12, "link: NIC h0 already has its link (line 9)"},
	    {"unknown-attribute.ini", 12, "speed: unknown attribute of [link]"},
	    {"out-of-range.ini", 8, "MSS: 9000 is out of range (allowed: 64..8192)"},
	    {"unknown-section.ini", 12, "[router r0]: unknown section (allowed: "},
	    {"bad-drop.ini", 11, "drop: 'bogus' is not a kind (allowed: data, ack, sack, nack"},
	    {"bad-down.ini", 11, "down: '2ms-1ms' ends before it starts (allowed: FROM < TO)"},
	    {"missing-ip.ini", 6, "ip: NIC h1 has no ip (allowed: a unicast IPv4 address)"},
	    {"self-link.ini", 10, "link: [link h1 h1] links h1 to itself"},
	    {"duplicate-name.ini", 11, "node h0 is already declared (line 4)"},
	    {"nic-no-link.ini", 10, "link: NIC h2 has no link"},
	    {"bad-loss.ini", 11, "loss: 1.5 is out of range (allowed: 0..1)"},
	    {"bad-enum.ini", 12,
	     "RTTTimestampMode: 'Foo' is not one of LocalDatabase, WireTimestamp"},
	    {"time-no-unit.ini", 12, "InitialAckTimeout: '150' needs a unit (ps ns us ms s)"},
	    {"pfc.ini", 12, "PfcEnabled: true is not supported yet (allowed: false)"},
	    {"syntax.ini", 11, "syntax: expected 'name = value' or '[section]'"},
	};

	(void)state;
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		char path[256], prefix[300], err[TOPO_ERR_MAX] = "";
		snprintf(path, sizeof path, DATA "bad/%s", cases[i].file);
		struct topology *t = topology_load(path, err, sizeof err);
		if (t) {
			topology_free(t);
			fail_msg("%s was accepted", path);
		}
		snprintf(prefix, sizeof prefix, "%s:%d: ", path, cases[i].line);
		if (strncmp(err, prefix, strlen(prefix)) || !strstr(err, cases[i].reason) ||
		    strchr(err, '\n')) {
			fail_msg("%s: got \"%s\", want \"%s%s...\"", cases[i].file, err, prefix,
				 cases[i].reason);
		}
	}
}

/* The temporary files the tests write, removed when the test program
 * exits however its tests ended (a failed check returns from the test, not
 * from the program). */
#define MAX_TEMPS 256
static char temps[MAX_TEMPS][32];
static int ntemps;

static void remove_temps(void)
{
	for (int i = 0; i < ntemps; i++)
		unlink(temps[i]);
}

/* A temporary file holding text's first n bytes: its path, until the
 * next call. */
static char *write_temp_n(const char *text, size_t n)
{
	static char path[32];
	int fd;

	assert_true(ntemps < MAX_TEMPS);
	snprintf(path, sizeof path, "/tmp/mrcemu-test-XXXXXX");
	fd = mkstemp(path);
	assert_true(fd >= 0);
	if (!ntemps)
		atexit(remove_temps);
	memcpy(temps[ntemps++], path, sizeof path);
	assert_int_equal(write(fd, text, n), (ssize_t)n);
	close(fd);
	return path;
}

static char *write_temp(const char *text)
{
	return write_temp_n(text, strlen(text));
}

/* docs/topology.md, Names: emulation and node names become paths and
 * namespace names, so anything else is refused at load, by sim too (a
 * `name = ..` once made `run` chmod /run). */
static void test_names(void **state)
{
	static const char *const bad_emulation[] = {
	    "..", ".", "a/b", "-a", "a.b", "a b", "abcdefghijklmnopqrstuvwxyz012345"};
	static const char *const bad_node[] = {"h-0", "..", "h.0", "_h", "a/b"};
	static const char *const good_emulation[] = {"a", "leaf-spine-8", "t_1-x",
						     "abcdefghijklmnopqrstuvwxyz01234"};
	char text[512], err[TOPO_ERR_MAX];
	struct topology *t;

	(void)state;
	for (size_t i = 0; i < sizeof bad_emulation / sizeof bad_emulation[0]; i++) {
		snprintf(text, sizeof text,
			 "[emulation]\nname = %s\n[nic h0]\nip = 10.0.0.1\n[nic h1]\n"
			 "ip = 10.0.0.2\n[link h0 h1]\n",
			 bad_emulation[i]);
		err[0] = 0;
		t = topology_load(write_temp(text), err, sizeof err);
		if (t)
			fail_msg("emulation name '%s' was accepted", bad_emulation[i]);
		assert_non_null(strstr(err, ":2: name: emulation name '"));
		assert_non_null(strstr(err, "(allowed: 1..31 letters, digits, '_' and '-'"));
	}
	for (size_t i = 0; i < sizeof bad_node / sizeof bad_node[0]; i++) {
		snprintf(text, sizeof text,
			 "[nic %s]\nip = 10.0.0.1\n[nic h1]\nip = 10.0.0.2\n[link %s h1]\n",
			 bad_node[i], bad_node[i]);
		err[0] = 0;
		t = topology_load(write_temp(text), err, sizeof err);
		if (t)
			fail_msg("node name '%s' was accepted", bad_node[i]);
		assert_non_null(strstr(err, "node name '"));
		assert_non_null(strstr(err, "(allowed: 1..31 letters, digits and '_'"));
	}
	for (size_t i = 0; i < sizeof good_emulation / sizeof good_emulation[0]; i++) {
		snprintf(text, sizeof text,
			 "[emulation]\nname = %s\n[nic h0]\nip = 10.0.0.1\n[nic h1]\n"
			 "ip = 10.0.0.2\n[link h0 h1]\n",
			 good_emulation[i]);
		t = topology_load(write_temp(text), err, sizeof err);
		if (!t)
			fail_msg("emulation name '%s' was refused: %s", good_emulation[i], err);
		topology_free(t);
	}
}

/* Small topologies written by the test: what the file says about externals,
 * NIC-only back-to-back links, and the delay rule. */
static void test_externals_and_delay_rule(void **state)
{
	char err[TOPO_ERR_MAX] = "";
	char *path = write_temp("[nic]\nDelay = 3us\n"
				"[nic h0]\nip = 10.0.0.1\n"
				"[external x0]\nip = 10.0.0.9\n"
				"[switch s0]\n"
				"[link h0 s0]\n"
				"[link x0 s0]\n"
				"rate = 10Gbps\n");
	struct topology *t = topology_load(path, err, sizeof err);
	const struct topo_ecmp *e;

	(void)state;
	unlink(path);
	if (!t) {
		fail_msg("%s", err);
	}
	assert_int_equal(t->nodes[1].kind, NODE_EXTERNAL);
	assert_int_equal(t->nodes[1].ip, 0x0A000009);
	assert_int_equal(topology_find_ip(t, 0x0A000009), 1);
	/* the link names no delay: it takes the NIC's Delay */
	assert_int_equal(t->links[0].attrs.delay, 3 * PS_PER_US);
	assert_int_equal(t->nodes[0].nic.delay, 3 * PS_PER_US);
	assert_int_equal(topology_port_rate(t, 2, 1), 10 * GBPS);
	assert_int_equal((e = topology_ecmp(t, 2, 1))->count, 1);
	assert_int_equal(e->port[0], 1);
	/* an external endpoint may send to its own address: port 1 reflects */
	assert_int_equal(topology_reflects(t, 2), 1 << 1);
	topology_free(t);

	path = write_temp("[nic h0]\nip = 10.0.0.1\n[external x0]\nip = 10.0.0.2\nMSS = 1024\n"
			  "[link h0 x0]\n");
	t = topology_load(path, err, sizeof err);
	unlink(path);
	assert_null(t);
	assert_non_null(strstr(err, ":5: MSS: unknown attribute of [external] (allowed: ip, mac)"));

	/* An external's own MAC (a generator's or a VM's); others keep theirs. */
	path = write_temp("[nic h0]\nip = 10.0.0.1\n[external x0]\nip = 10.0.0.2\n"
			  "mac = 0A:00:00:00:00:99\n[link h0 x0]\n");
	t = load_ok(path);
	unlink(path);
	assert_mac(&t->nodes[0], "02:00:00:00:00:01");
	assert_mac(&t->nodes[1], "0a:00:00:00:00:99");
	topology_free(t);
	static const char *const bad_macs[] = {"01:00:5e:00:00:01", "00:00:00:00:00:00",
					       "0a:00:00:00:00", "0a:00:00:00:00:99:", "zz"};
	for (size_t i = 0; i < sizeof bad_macs / sizeof bad_macs[0]; i++) {
		char text[256];
		snprintf(text, sizeof text,
			 "[nic h0]\nip = 10.0.0.1\n[external x0]\nip = 10.0.0.2\nmac = %s\n"
			 "[link h0 x0]\n",
			 bad_macs[i]);
		path = write_temp(text);
		t = topology_load(path, err, sizeof err);
		unlink(path);
		assert_null(t);
		assert_non_null(strstr(err, ":5: mac: '"));
		assert_non_null(strstr(err, "is not a unicast MAC address (allowed: "));
	}
	path = write_temp("[nic h0]\nip = 10.0.0.1\n[external x0]\nip = 10.0.0.2\n"
			  "mac = 02:00:00:00:00:01\n[link h0 x0]\n");
	t = topology_load(path, err, sizeof err);
	unlink(path);
	assert_null(t);
	assert_non_null(strstr(err, ":5: mac: already h0's address"));

	/* Mirrors and port kinds (docs/topology.md, Mirror ports, Port kinds). */
	path = write_temp("[nic h0]\nip = 10.0.0.1\n[nic h1]\nip = 10.0.0.2\n[switch s0]\n"
			  "mirror = 1 -> tap0@userns\nmirror = 0 -> m-x.0\n"
			  "[link h0 s0]\nports = tap packet\n[link h1 s0]\n");
	t = load_ok(path);
	unlink(path);
	assert_int_equal(t->nodes[2].nmirrors, 2);
	assert_int_equal(t->nodes[2].mirrors[0].port, 1);
	assert_string_equal(t->nodes[2].mirrors[0].ifname, "tap0");
	assert_string_equal(t->nodes[2].mirrors[0].netns, "userns");
	assert_string_equal(t->nodes[2].mirrors[1].ifname, "m-x.0");
	assert_string_equal(t->nodes[2].mirrors[1].netns, "");
	assert_int_equal(topology_port_kind(t, 0, 0), TOPO_PORT_TAP);
	assert_int_equal(topology_port_kind(t, 2, 0), TOPO_PORT_PACKET);
	assert_int_equal(topology_port_kind(t, 1, 0), TOPO_PORT_PACKET);
	topology_free(t);
	static const struct {
		const char *line, *want;
	} bad[] = {
	    {"mirror = 2 -> tap0", ":6: mirror: s0 has no port 2 (allowed: 0..1)"},
	    {"mirror = 0 -> a/b", ":6: mirror: '0 -> a/b' is not PORT -> IFNAME[@NETNS]"},
	    {"mirror = 0 -> waytoolonginterface", ":6: mirror: '0 -> waytoolonginterface'"},
	    {"mirror = x -> tap0", ":6: mirror: 'x -> tap0' is not"},
	};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		char text[256];
		snprintf(text, sizeof text,
			 "[nic h0]\nip = 10.0.0.1\n[nic h1]\nip = 10.0.0.2\n[switch s0]\n%s\n"
			 "[link h0 s0]\n[link h1 s0]\n",
			 bad[i].line);
		path = write_temp(text);
		t = topology_load(path, err, sizeof err);
		unlink(path);
		assert_null(t);
		if (!strstr(err, bad[i].want))
			fail_msg("%s: got \"%s\"", bad[i].line, err);
	}
	path = write_temp("[nic h0]\nip = 10.0.0.1\n[external x0]\nip = 10.0.0.2\n"
			  "[link h0 x0]\nports = packet tap\n");
	t = topology_load(path, err, sizeof err);
	unlink(path);
	assert_null(t);
	assert_non_null(strstr(err, ":5: ports: x0 is an external endpoint"));

	path = write_temp("[nic]\nip = 10.0.0.1\n");
	t = topology_load(path, err, sizeof err);
	unlink(path);
	assert_null(t);
	assert_non_null(strstr(err, ":2: ip: is per node"));

	path = write_temp("[nic h0]\nip = 10.0.0.1\n[nic h1]\nip = 10.0.0.2\nDscpControl = 18\n"
			  "[link h0 h1]\n");
	t = topology_load(path, err, sizeof err);
	unlink(path);
	assert_null(t);
	assert_non_null(strstr(err, ":3: DscpControl: h1's 18 differs from h0's 17"));

	assert_null(topology_load("tests/data/no-such-file.ini", err, sizeof err));
	assert_non_null(strstr(err, "tests/data/no-such-file.ini: cannot open"));
}

/* docs/protocol.md §§5, 9: `ConfigBaseRTT = auto` is the topology's
 * longest host-to-host round trip at line rate with a full packet: here a
 * 4,174-byte packet at 400 Gbps on the host links (83.48 ns) and 800 Gbps
 * on the spine links (41.74 ns), four 1 µs links each way: 2 x (4 µs +
 * 250.44 ns) = 8,500.88 ns.  MaxCongestionWindow follows from it (1.5 x
 * BDP = 637,566 B, 153 units of 4,156 B = 635,868 B); `EgressQueueLimit =
 * auto` is one BDP of the port's rate: 425,044 B at 400 Gbps. */
static void test_auto_fabric_rtt(void **state)
{
	char err[TOPO_ERR_MAX] = "";
	char *path = write_temp(
	    "[nic]\nConfigBaseRTT = auto\n[switch]\nEgressQueueLimit = auto\n"
	    "[nic h0]\nip = 10.0.1.1\n[nic h1]\nip = 10.0.2.1\n"
	    "[switch leaf0]\n[switch leaf1]\n[switch spine0]\n[switch spine1]\n"
	    "[link h0 leaf0]\n[link h1 leaf1]\n"
	    "[link leaf0 spine0]\nrate = 800Gbps\n[link leaf0 spine1]\nrate = 800Gbps\n"
	    "[link leaf1 spine0]\nrate = 800Gbps\n[link leaf1 spine1]\nrate = 800Gbps\n");
	struct topology *t = topology_load(path, err, sizeof err);
	struct switch_attrs sw;

	(void)state;
	unlink(path);
	if (!t) {
		fail_msg("%s", err);
	}
	assert_int_equal(t->auto_rtt, 8500880);
	assert_int_equal(t->nodes[0].nic.config_base_rtt, 8500880);
	assert_int_equal(t->nodes[0].nic.target_queue_delay, 8500880 * 3 / 4);
	assert_int_equal(t->nodes[1].nic.max_cwnd, 153 * 4156);
	sw = t->nodes[2].sw;
	config_switch_resolve(&sw, 400 * GBPS);
	assert_int_equal(sw.egress_queue_limit, 425044);
	topology_free(t);

	/* the defaults stay as the design gives them */
	t = load_ok(DATA "leaf-spine-small.ini");
	assert_int_equal(t->auto_rtt, 0);
	assert_int_equal(t->nodes[0].nic.config_base_rtt, 5 * PS_PER_US);
	topology_free(t);
}

static void test_ipv4(void **state)
{
	uint32_t ip;
	char buf[16];

	(void)state;
	assert_true(ipv4_parse("10.0.0.1", &ip));
	assert_int_equal(ip, 0x0A000001);
	assert_true(ipv4_parse("255.255.255.255", &ip));
	assert_int_equal(ip, 0xFFFFFFFF);
	assert_string_equal(ipv4_format(0xC0A80164, buf, sizeof buf), "192.168.1.100");
	assert_false(ipv4_parse("10.0.0", &ip));
	assert_false(ipv4_parse("10.0.0.1.2", &ip));
	assert_false(ipv4_parse("10.0.0.256", &ip));
	assert_false(ipv4_parse("10.0.0.01", &ip));
	assert_false(ipv4_parse("10.0.0.1 ", &ip));
	assert_false(ipv4_parse("", &ip));
}

static void test_drop_rules(void **state)
{
	struct topology *t = load_ok(DATA "two-hosts.ini");
	struct link_attrs l;
	char err[TOPO_ERR_MAX];
	static const char *const bad[][2] = {
	    {"h0h1 data", "drop: 'h0h1' is not FROM>TO"},
	    {"h0>h9 data", "drop: unknown node 'h9'"},
	    {"h0>s0 data", "drop: s0 is a switch"},
	    {"h0>h0 data", "drop: FROM and TO are both h0"},
	    {"h0>h1", "drop: '' is not a kind"},
	    {"h0>h1 data psn=16777216", "drop: 'psn=16777216' is out of range"},
	    /* only what is on the wire: the retransmit flag, not the count */
	    {"h0>h1 data tx=0", "drop: 'tx=0': which transmission a frame is does not travel"},
	    {"h0>h1 data tx=2", "(allowed: tx=1, the first; rtx=1, any retransmission)"},
	    {"h0>h1 data rtx=2", "drop: 'rtx=2' is out of range (allowed: rtx=0..1)"},
	    {"h0>h1 data count=0", "or all"},
	    {"h0>h1 data color=red", "drop: unknown option 'color=red'"},
	};

	(void)state;
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		config_link_defaults(&l);
		if (topology_parse_drops(t, bad[i][0], &l, err, sizeof err) ||
		    !strstr(err, bad[i][1])) {
			fail_msg("'%s': got '%s', want '%s'", bad[i][0], err, bad[i][1]);
		}
	}
	config_link_defaults(&l);
	assert_true(topology_parse_drops(
	    t, "h1>h0 nack msn=3, h0>h1 any rtx=1, h0>h1 sack count=all", &l, err, sizeof err));
	assert_int_equal(l.ndrops, 3);
	assert_int_equal(l.drops[1].rtx, 1);
	assert_int_equal(l.drops[0].kind, DROP_NACK);
	assert_int_equal(l.drops[0].msn, 3);
	assert_int_equal(l.drops[1].kind, DROP_ANY);
	assert_int_equal(l.drops[2].kind, DROP_SACK);
	assert_int_equal(l.drops[2].count, -1);
	for (int i = 0; i < LINK_MAX_DROPS - 3; i++) {
		assert_true(topology_parse_drops(t, "h0>h1 data", &l, err, sizeof err));
	}
	assert_false(topology_parse_drops(t, "h0>h1 data", &l, err, sizeof err));
	assert_non_null(strstr(err, "more than 16 rules"));
	topology_free(t);
}

static void test_workload_good(void **state)
{
	struct topology *t = load_ok(DATA "two-hosts.ini");
	struct workload w;
	char err[512] = "";

	(void)state;
	if (!workload_load(t->workload, t, &w, err, sizeof err)) {
		fail_msg("%s", err);
	}
	assert_int_equal(w.count, 3);
	assert_int_equal(w.msgs[0].id, 1);
	assert_int_equal(w.msgs[0].at, 0);
	assert_int_equal(w.msgs[0].src, 0);
	assert_int_equal(w.msgs[0].dst, 1);
	assert_int_equal(w.msgs[0].bytes, 4 << 20);
	assert_int_equal(w.msgs[0].nafter, 0);
	assert_int_equal(w.msgs[0].line, 2);
	assert_int_equal(w.msgs[1].src, 1);
	assert_int_equal(w.msgs[1].bytes, 64 << 10);
	assert_int_equal(w.msgs[2].at, 10 * PS_PER_US);
	assert_int_equal(w.msgs[2].bytes, 1 << 20);
	assert_int_equal(w.msgs[2].nafter, 2);
	assert_int_equal(w.msgs[2].after[0], 1);
	assert_int_equal(w.msgs[2].after[1], 2);
	assert_int_equal(workload_find(&w, 3), 2);
	assert_int_equal(workload_find(&w, 4), -1);
	workload_free(&w);

	/* Comments and blank lines, before the header too (docs/topology.md). */
	char *path =
	    write_temp("# a sweep point\n\n  # indented\nid,at,src,dst,bytes,after\n"
		       "\n# the first message\n1,0ns,h0,h1,4KiB,\n  \n2,1us,h1,h0,8KiB,1\n");
	if (!workload_load(path, t, &w, err, sizeof err))
		fail_msg("%s", err);
	unlink(path);
	assert_int_equal(w.count, 2);
	assert_int_equal(w.msgs[0].line, 7);
	assert_int_equal(w.msgs[1].line, 9);
	assert_int_equal(w.msgs[1].nafter, 1);
	workload_free(&w);
	path = write_temp("# only comments\n\n");
	assert_false(workload_load(path, t, &w, err, sizeof err));
	unlink(path);
	assert_non_null(strstr(err, ":2: header: no header row"));
	topology_free(t);
}

static void expect_workload_error(const struct topology *t, const char *rows, int line,
				  const char *want)
{
	char text[1024], err[512] = "", prefix[128];
	struct workload w;

	snprintf(text, sizeof text, "id,at,src,dst,bytes,after\n%s", rows);
	char *path = write_temp(text);
	bool ok = workload_load(path, t, &w, err, sizeof err);
	unlink(path);
	if (ok) {
		workload_free(&w);
		fail_msg("accepted:\n%s", rows);
	}
	snprintf(prefix, sizeof prefix, "%s:%d: ", path, line);
	if (strncmp(err, prefix, strlen(prefix)) || !strstr(err, want)) {
		fail_msg("got \"%s\", want \"%s%s\"", err, prefix, want);
	}
}

static void test_workload_errors(void **state)
{
	struct topology *t = load_ok(DATA "leaf-spine-small.ini");

	(void)state;
	expect_workload_error(t, "1,0ns,h0,h1,4MiB,\n1,0ns,h1,h0,1MiB,\n", 3,
			      "id: 1 is used twice (line 2)");
	expect_workload_error(t, "0,0ns,h0,h1,4MiB,\n", 2, "id: '0' is not a positive");
	expect_workload_error(t, "x,0ns,h0,h1,4MiB,\n", 2, "id: 'x' is not a positive");
	/* issue 9, item 9: the id is RETH's 20-bit message index */
	expect_workload_error(t, "1048575,0ns,h0,h1,4MiB,\n1048576,0ns,h1,h0,4MiB,\n", 3,
			      "id: 1048576 is out of range (allowed: 1..1048575: the message "
			      "index in RETH's VA has 20 bits)");
	/* issue 9, item 12: no message after the longest run the trailer holds */
	expect_workload_error(t, "1,281s,h0,h1,4MiB,\n2,282s,h1,h0,4MiB,\n", 3,
			      "at: 282s is past the longest run (allowed: up to 281s: a frame's "
			      "arrival travels in a 48-bit stamp of ps)");
	expect_workload_error(t, "1,0ns,h0,h9,4MiB,\n", 2, "dst: 'h9' is not a node");
	expect_workload_error(t, "1,0ns,leaf0,h1,4MiB,\n", 2, "src: 'leaf0' is a switch");
	expect_workload_error(t, "1,0ns,h1,h1,4MiB,\n", 2, "dst: h1 sends to itself");
	/* issue 13, failure 7: RETH's DMA length is 32 bits; refused at load */
	expect_workload_error(t, "1,0ns,h0,h1,4GiB,\n", 2,
			      "bytes: 4GiB is out of range (allowed: 0..4294967295, 4 GiB - 1: "
			      "RETH's DMA length is 32 bits)");
	expect_workload_error(t, "1,0ns,h0,h1,1e9,\n", 2,
			      "bytes: \"1e9\": exponents are not accepted");
	expect_workload_error(t, "1,150,h0,h1,4MiB,\n", 2,
			      "at: '150' needs a unit (ps ns us ms s)");
	expect_workload_error(t, "1,0ns,h0,h1,4MiB,7\n", 2, "after: 7 is not a message id");
	expect_workload_error(t, "1,0ns,h0,h1,4MiB,1\n", 2, "after: message 1 waits for itself");
	expect_workload_error(t, "1,0ns,h0,h1,4MiB,\n2,0ns,h2,h3,1MiB,1\n", 3,
			      "after: message 1 is between h0 and h1; h2 knows nothing of it");
	expect_workload_error(t, "1,0ns,h0,h1,4MiB,3\n2,0ns,h1,h0,1MiB,1\n3,0ns,h0,h1,1MiB,2\n", 2,
			      "after: message 1 waits for itself through a cycle");
	expect_workload_error(t, "1,0ns,h0,h1\n", 2, "row: 4 cells");
	expect_workload_error(t, "1,0ns,h0,h1,4MiB,,extra\n", 2, "row: 7 cells");

	/* a bad header is line 1 */
	char err[512];
	struct workload w;
	char *path = write_temp("id,at,src,dst,size,after\n1,0ns,h0,h1,1MiB,\n");
	assert_false(workload_load(path, t, &w, err, sizeof err));
	unlink(path);
	assert_non_null(strstr(err, ":1: header: expected 'id,at,src,dst,bytes,after'"));

	/* `after` a message the poster receives is allowed; 4 GiB - 1 is too */
	path = write_temp("id,at,src,dst,bytes,after\n1,0ns,h1,h0,4294967295,\n"
			  "2,1us,h0,h2,0,1\n3,0ns,h2,h0,1MiB,2\n");
	bool ok = workload_load(path, t, &w, err, sizeof err);
	unlink(path);
	if (!ok) {
		fail_msg("%s", err);
	}
	assert_int_equal(w.count, 3);
	assert_int_equal(w.msgs[0].bytes, 4294967295ULL);
	assert_int_equal(w.msgs[1].bytes, 0);
	workload_free(&w);
	topology_free(t);
}

/* The first error of loading `path`, which must be refused on one line. */
static void expect_topology_error(const char *path, const char *want)
{
	char err[TOPO_ERR_MAX] = "";
	struct topology *t = topology_load(path, err, sizeof err);

	if (t) {
		topology_free(t);
		fail_msg("%s was accepted", path);
	}
	if (!strstr(err, want) || strchr(err, '\n'))
		fail_msg("got \"%s\", want \"...%s...\"", err, want);
}

#define TWO_NICS "[nic h0]\nip = 10.0.0.1\n[nic h1]\nip = 10.0.0.2\n[link h0 h1]\n"

/* Issue 13, failure 7: what a file could slip past the loader. */
static void test_hostile_topologies(void **state)
{
	static const char nul[] = TWO_NICS "[nic]\nMSS = 1024\0junk\n";
	char *path;

	(void)state;
	path = write_temp(TWO_NICS "[nic]\nMSS = 1024\n[nic]\nMSS = 2048\n");
	expect_topology_error(path, ":8: [nic]: section already given (line 6; allowed: once)");
	unlink(path);
	path = write_temp(TWO_NICS "[emulation]\nseed = 1\nseed = 2\n");
	expect_topology_error(path, ":8: seed: set twice in this section (line 7; allowed: once)");
	unlink(path);
	path = write_temp_n(nul, sizeof nul - 1);
	expect_topology_error(path, ":7: line: holds a NUL byte (allowed: text)");
	unlink(path);
	/* an echoed name cannot write escape sequences or split the line */
	path = write_temp(TWO_NICS "[nic]\nM\x1b[2JS\x07S = 1\n");
	expect_topology_error(path, ":7: M\\x1b[2JS\\x07S: unknown attribute of [nic]");
	unlink(path);
	expect_topology_error("/dev/zero", "/dev/zero: not a regular file");
}

/* A chain h0 - s0 - ... - s(n-1) - h1. */
static char *chain(int n)
{
	size_t cap = 64 + (size_t)n * 64, len = 0;
	char *text = malloc(cap);

	assert_non_null(text);
	len += (size_t)snprintf(text + len, cap - len,
				"[nic h0]\nip = 10.0.0.1\n[nic h1]\nip = "
				"10.0.0.2\n[link h0 s0]\n");
	for (int i = 0; i < n; i++)
		len += (size_t)snprintf(text + len, cap - len, "[switch s%d]\n[link s%d %s%d]\n", i,
					i, i + 1 < n ? "s" : "h", i + 1 < n ? i + 1 : 1);
	char *path = write_temp(text);
	free(text);
	return path;
}

/* Issue 13, failure 7: a frame leaves with TTL 64 and a switch drops it at
 * TTL 1: 63 switches are the most a path may cross; more is refused at load
 * rather than losing every frame at run time. */
static void test_path_longer_than_ttl_refused(void **state)
{
	char err[TOPO_ERR_MAX] = "", *path;
	struct topology *t;

	(void)state;
	path = chain(63);
	t = topology_load(path, err, sizeof err);
	unlink(path);
	if (!t)
		fail_msg("%s", err);
	topology_free(t);
	path = chain(64);
	expect_topology_error(path, "link: the path from h1 to h0 crosses 64 switches (allowed: at "
				    "most 63: frames leave with TTL 64 and each switch takes one)");
	unlink(path);
}

/* Issue 16: ECMP as wide as a switch's ports (a fat tree's k = 64 switches
 * have 32 uplinks), each set stored once per switch, names hashed.  Two
 * leaves of two hosts under 40 spines. */
static void test_wide_ecmp(void **state)
{
	size_t cap = 1 << 16, len = 0;
	char *text = malloc(cap), err[TOPO_ERR_MAX] = "", *path;
	const struct topo_ecmp *e;
	struct topology *t;

	(void)state;
	assert_non_null(text);
	for (int h = 0; h < 4; h++)
		len += (size_t)snprintf(text + len, cap - len,
					"[nic h%d]\nip = 10.0.%d.%d\n[link h%d leaf%d]\n", h, h / 2,
					h % 2 + 1, h, h / 2);
	len += (size_t)snprintf(text + len, cap - len, "[switch leaf0]\n[switch leaf1]\n");
	for (int s = 0; s < 40; s++)
		len += (size_t)snprintf(
		    text + len, cap - len,
		    "[switch spine%d]\n[link leaf0 spine%d]\n[link leaf1 spine%d]\n", s, s, s);
	path = write_temp(text);
	free(text);
	t = topology_load(path, err, sizeof err);
	unlink(path);
	if (!t)
		fail_msg("%s", err);
	int leaf0 = topology_find(t, "leaf0"), h3 = topology_find(t, "h3");
	assert_int_equal(topology_find(t, "spine39"), t->nnodes - 1);
	for (int n = 0; n < t->nnodes; n++)
		if (t->nodes[n].kind == NODE_NIC)
			assert_int_equal(topology_ip_route(t, t->nodes[n].ip)->node, n);
	assert_int_equal(topology_find(t, "spine40"), -1);
	assert_int_equal(topology_find_ip(t, 0x0A000102), h3);
	assert_int_equal((e = topology_ecmp(t, leaf0, h3))->count, 40);
	assert_true(e->ports == ((1ULL << 40) - 1) << 2);
	for (int i = 0; i < 40; i++)
		assert_int_equal(e->port[i], 2 + i);
	/* one set for both remote hosts, one for each local port, the empty one */
	assert_ptr_equal(topology_ecmp(t, leaf0, topology_find(t, "h2")), e);
	assert_int_equal(t->routes[leaf0].nsets, 4);
	assert_int_equal((e = topology_ecmp(t, topology_find(t, "spine7"), h3))->count, 1);
	assert_int_equal(e->port[0], 1);
	topology_free(t);
}

/* Issue 13, failure 6: a workload is a regular file of bounded size. */
static void test_workload_files(void **state)
{
	struct topology *t = load_ok(DATA "two-hosts.ini");
	static const char nul[] = "id,at,src,dst,bytes,after\n1,0ns,h0,h1,1MiB,\0\n";
	char err[512], fifo[64] = "/tmp/mrcemu-test-fifo-XXXXXX", *path; /* + "/f" */
	struct workload w;
	int fd;

	(void)state;
	assert_false(workload_load("/dev/zero", t, &w, err, sizeof err));
	assert_string_equal(err, "/dev/zero: not a regular file (allowed: a regular file)");
	assert_non_null(mkdtemp(fifo));
	strcat(fifo, "/f");
	assert_int_equal(mkfifo(fifo, 0600), 0);
	assert_false(workload_load(fifo, t, &w, err, sizeof err)); /* does not block */
	assert_non_null(strstr(err, ": not a regular file"));
	unlink(fifo);
	*strrchr(fifo, '/') = 0;
	rmdir(fifo);
	path = write_temp("id,at,src,dst,bytes,after\n");
	fd = open(path, O_WRONLY);
	assert_int_equal(ftruncate(fd, (256 << 20) + 1), 0); /* sparse */
	close(fd);
	assert_false(workload_load(path, t, &w, err, sizeof err));
	assert_non_null(strstr(err, ": 268435457 bytes (allowed: at most 268435456)"));
	unlink(path);
	path = write_temp_n(nul, sizeof nul - 1);
	assert_false(workload_load(path, t, &w, err, sizeof err));
	assert_non_null(strstr(err, ":2: line: holds a NUL byte (allowed: text)"));
	unlink(path);
	topology_free(t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_two_hosts_nodes),
	    cmocka_unit_test(test_two_hosts_links),
	    cmocka_unit_test(test_leaf_spine_ecmp),
	    cmocka_unit_test(test_bad_fixtures),
	    cmocka_unit_test(test_externals_and_delay_rule),
	    cmocka_unit_test(test_auto_fabric_rtt),
	    cmocka_unit_test(test_ipv4),
	    cmocka_unit_test(test_names),
	    cmocka_unit_test(test_drop_rules),
	    cmocka_unit_test(test_workload_good),
	    cmocka_unit_test(test_workload_errors),
	    cmocka_unit_test(test_hostile_topologies),
	    cmocka_unit_test(test_path_longer_than_ttl_refused),
	    cmocka_unit_test(test_wide_ecmp),
	    cmocka_unit_test(test_workload_files),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
