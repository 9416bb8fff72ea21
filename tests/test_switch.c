/* tests/test_switch.c — the switch engine of docs/protocol.md §9 on its own:
 * routes and the ECMP hash, MAC rewrite and TTL, serialization and the
 * link's delay, traffic classes with and without the UET policy, strict
 * priority and deficit round robin, ECN marking, trimming and its limits,
 * port and link faults, frames in, records, and the start-up refusals.
 * Numbers come from the attributes (EgressQueueLimit = 400 Gbps x 5 us =
 * 250,000 B; a full packet is 4,174 B on the wire, a trimmed one 62). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/events.h"
#include "core/link.h"
#include "core/records.h"
#include "core/topology.h"
#include "core/wire.h"
/* The engine's own source, with its one malloc (a queue's ring growing)
 * routed through malloc_for_test, so a test can make it fail. */
static void *malloc_for_test(size_t n);
#define malloc malloc_for_test
#include "switchd/switch.c"
#undef malloc

static bool malloc_fails;

static void *malloc_for_test(size_t n)
{
	return malloc_fails ? NULL : malloc(n);
}
#include "lib/vectors.h"

#define IP_H0 0x0A000001u /* 10.0.0.1 on leaf0 */
#define IP_H1 0x0A000002u /* 10.0.0.2 on leaf0 */
#define IP_H2 0x0A000101u /* 10.0.1.1 on leaf1 */
#define FULL  4174u	  /* MSS 4096 + 78 */
#define LIMIT 250000u	  /* 400 Gbps x 5 us */

/* leaf0: port 0 -> h0, 1 -> h1, 2..5 -> spine0..3 (ports in link order). */
static const char topo_text[] =
    "[emulation]\nname = unit\nseed = 3\n\n"
    "[switch]\n%s\n\n"
    "[nic h0]\nip = 10.0.0.1\n[nic h1]\nip = 10.0.0.2\n[nic h2]\nip = 10.0.1.1\n"
    "[switch leaf0]\n[switch leaf1]\n"
    "[switch spine0]\n[switch spine1]\n[switch spine2]\n[switch spine3]\n\n"
    "[link h0 leaf0]\n[link h1 leaf0]\n%s\n"
    "[link leaf0 spine0]\n%s\n[link leaf0 spine1]\n[link leaf0 spine2]\n[link leaf0 spine3]\n"
    "[link h2 leaf1]\n"
    "[link leaf1 spine0]\n[link leaf1 spine1]\n[link leaf1 spine2]\n[link leaf1 spine3]\n";

struct sent {
	int port;
	struct pkt *p;
	ps_t at, arrival;
};

struct rig {
	struct topology *t;
	struct events *q;
	struct pkt_pool pool;
	struct link_end *links;
	struct sw *sw;
	int node;
	struct sent *sent;
	size_t nsent, cap;
	struct csv *stats;
	char dir[64];
};

static void on_transmit(void *ctx, int port, struct pkt *p, ps_t arrival, bool pull)
{
	struct rig *r = ctx;

	(void)pull; /* no pull_before */
	if (r->nsent == r->cap) {
		r->cap = r->cap ? r->cap * 2 : 256;
		r->sent = realloc(r->sent, r->cap * sizeof(*r->sent));
		assert_non_null(r->sent);
	}
	r->sent[r->nsent++] = (struct sent){port, p, events_now(r->q), arrival};
}

static struct topology *load_text(const char *sw_attrs, const char *h1_link,
				  const char *spine0_link, char *dir)
{
	char path[128], err[TOPO_ERR_MAX];
	struct topology *t;
	FILE *f;

	snprintf(path, sizeof(path), "%s/t.ini", dir);
	f = fopen(path, "w");
	assert_non_null(f);
	fprintf(f, topo_text, sw_attrs, h1_link, spine0_link);
	fclose(f);
	t = topology_load(path, err, sizeof(err));
	if (!t)
		fail_msg("topology refused: %s", err);
	return t;
}

/* sw_params.host_macs of the next rig (test_port_down runs with both). */
static bool rig_host_macs;

/* A rig around switch `node` of the unit topology. */
static struct rig *rig_new(const char *node, const char *sw_attrs, const char *h1_link,
			   const char *spine0_link, bool stats)
{
	struct rig *r = calloc(1, sizeof(*r));
	char err[512];

	snprintf(r->dir, sizeof(r->dir), "/tmp/mrcemu-switch-XXXXXX");
	assert_non_null(mkdtemp(r->dir));
	r->t = load_text(sw_attrs ? sw_attrs : "", h1_link ? h1_link : "",
			 spine0_link ? spine0_link : "", r->dir);
	r->node = topology_find(r->t, node);
	r->q = events_new();
	assert_true(pkt_pool_init(&r->pool, 1024, 0));
	r->links = calloc(r->t->nodes[r->node].nports, sizeof(*r->links));
	for (int i = 0; i < r->t->nodes[r->node].nports; i++)
		link_end_init(&r->links[i], r->t, r->t->nodes[r->node].ports[i].link, r->node);
	if (stats)
		r->stats = csv_open(r->dir, "switch-stats.csv", sw_stats_header());
	struct sw_params p = {.topo = r->t,
			      .node = r->node,
			      .links = r->links,
			      .events = r->q,
			      .pool = &r->pool,
			      .host = {r, on_transmit},
			      .stats = r->stats,
			      .host_macs = rig_host_macs};
	r->sw = sw_new(&p, err, sizeof(err));
	if (!r->sw)
		fail_msg("sw_new refused: %s", err);
	return r;
}

static void rig_free(struct rig *r)
{
	char cmd[128];

	for (size_t i = 0; i < r->nsent; i++)
		pkt_put(&r->pool, r->sent[i].p);
	free(r->sent);
	sw_free(r->sw);
	if (r->stats)
		csv_close(r->stats);
	free(r->links);
	events_free(r->q);
	pkt_pool_destroy(&r->pool);
	topology_free(r->t);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", r->dir);
	assert_int_equal(system(cmd), 0);
	free(r);
}

/* A full data packet h0 -> dst as the NIC builds it (docs/protocol.md §1). */
static struct pkt *data_pkt(struct rig *r, uint32_t dst, uint16_t sport, uint8_t dscp)
{
	struct pkt *p = pkt_get(&r->pool);

	p->src_ip = IP_H0;
	p->dst_ip = dst;
	p->dscp = dscp;
	p->ecn = WIRE_ECN_ECT0;
	p->ttl = WIRE_TTL;
	p->sport = sport;
	p->dport = WIRE_ROCE_PORT;
	p->opcode = WIRE_OP_WRITE_MIDDLE;
	p->dqpn = 0x100;
	p->psn = 5;
	p->msn = 1;
	p->va = wire_va(1, 5 * 4096);
	p->dma_len = 64 * 4096;
	p->payload_len = 4096;
	return p;
}

static struct pkt *sack_pkt(struct rig *r, uint32_t dst, uint16_t sport)
{
	struct pkt *p = pkt_get(&r->pool);

	p->src_ip = IP_H0;
	p->dst_ip = dst;
	p->dscp = 17;
	p->ecn = WIRE_ECN_ECT0; /* not what a NIC sends: shows TC2 is never marked */
	p->ttl = WIRE_TTL;
	p->sport = sport;
	p->dport = WIRE_ROCE_PORT;
	p->opcode = WIRE_OP_SACK;
	p->u.sack.seth.cc_type = 1;
	return p;
}

/* Every event, then sw_check (issue 9 item 13): each queue's bytes, frame
 * count and class bit equal what it holds in every scenario here. */
static void run(struct rig *r)
{
	char why[160];
	const char *broken;

	do {
		if ((broken = sw_check(r->sw, why, sizeof(why))))
			fail_msg("at %llu ps: %s", (unsigned long long)events_now(r->q), broken);
	} while (events_run_one(r->q));
}

static uint64_t ctr(struct rig *r, int port, int tc, const char *name)
{
	return sw_port_counter(r->sw, port, tc, name);
}

/* An entropy value whose packets to dst leave by `port`. */
static uint16_t sport_to(struct rig *r, uint32_t dst, int port)
{
	struct pkt p = {.src_ip = IP_H0, .dst_ip = dst, .dport = WIRE_ROCE_PORT};

	for (int s = 256; s < 65536; s++) {
		p.sport = (uint16_t)s;
		if (sw_route(r->sw, &p) == port)
			return (uint16_t)s;
	}
	fail_msg("no entropy value reaches port %d", port);
	return 0;
}

/* ---- routes -------------------------------------------------------------- */

/* docs/protocol.md §9: every shortest path; among equal next hops the hash of
 * the 5-tuple picks, so the entropy value chooses and always chooses alike. */
static void test_route_ecmp_by_entropy(void **state)
{
	struct rig *r = rig_new("leaf0", NULL, NULL, NULL, false);
	struct pkt p = {.src_ip = IP_H0, .dst_ip = IP_H2, .dport = WIRE_ROCE_PORT};
	int per_port[6] = {0};

	(void)state;
	for (int ev = 256; ev < 256 + 128; ev++) {
		p.sport = (uint16_t)ev;
		int port = sw_route(r->sw, &p);
		assert_in_range(port, 2, 5);
		assert_int_equal(sw_route(r->sw, &p), port);
		per_port[port]++;
	}
	for (int port = 2; port <= 5; port++)
		assert_true(per_port[port] > 0);
	/* the hop to a local NIC has one next hop */
	p.dst_ip = IP_H1;
	for (int ev = 256; ev < 256 + 128; ev++) {
		p.sport = (uint16_t)ev;
		assert_int_equal(sw_route(r->sw, &p), 1);
	}
	p.dst_ip = 0x0A0000FF;
	assert_int_equal(sw_route(r->sw, &p), -1);
	rig_free(r);
}

/* The hash is per switch: a second switch with the same ECMP shape (leaf1
 * to h0) does not split 128 values exactly as leaf0 splits them to h2. */
static void test_route_hash_per_switch(void **state)
{
	struct rig *a = rig_new("leaf0", NULL, NULL, NULL, false);
	struct rig *b = rig_new("leaf1", NULL, NULL, NULL, false);
	struct pkt p = {.src_ip = IP_H0, .dst_ip = IP_H2, .dport = WIRE_ROCE_PORT};
	int same = 0;

	(void)state;
	for (int ev = 256; ev < 256 + 128; ev++) {
		struct pkt q = {.src_ip = IP_H0, .dst_ip = IP_H2, .dport = WIRE_ROCE_PORT};
		p.sport = q.sport = (uint16_t)ev;
		q.src_ip = IP_H2;
		q.dst_ip = IP_H0;
		/* leaf1's ports 1..4 face spine0..3, leaf0's 2..5 */
		same += sw_route(a->sw, &p) - 2 == sw_route(b->sw, &q) - 1;
	}
	assert_true(same < 128);
	rig_free(a);
	rig_free(b);
}

/* ---- forwarding ------------------------------------------------------------ */

/* MAC rewrite to the next hop, TTL - 1, serialization at the port's rate
 * and the link's delay (4,174 B at 400 Gbps = 83,480 ps, + 1 us). */
static void test_forward_rewrites_and_times(void **state)
{
	struct rig *r = rig_new("leaf0", NULL, NULL, NULL, false);
	const struct topo_node *leaf = &r->t->nodes[r->node];
	const struct topo_node *h1 = &r->t->nodes[topology_find(r->t, "h1")];

	(void)state;
	sw_receive(r->sw, 0, data_pkt(r, IP_H1, 300, 2), 0);
	run(r);
	assert_int_equal(r->nsent, 1);
	assert_int_equal(r->sent[0].port, 1);
	assert_memory_equal(r->sent[0].p->dst_mac, h1->mac, 6);
	assert_memory_equal(r->sent[0].p->src_mac, leaf->mac, 6);
	assert_int_equal(r->sent[0].p->ttl, 63);
	assert_int_equal(r->sent[0].arrival, 83480 + PS_PER_US);
	assert_int_equal(ctr(r, 1, 0, "enqueued"), 1);
	assert_int_equal(ctr(r, 1, 0, "dequeued"), 1);
	assert_int_equal(ctr(r, 1, 0, "bytes"), FULL);
	rig_free(r);
}

/* §12 rule 13: a port runs at its link's rate, and EgressQueueLimit is
 * resolved from it (100 Gbps x 5 us = 62,500 B; 4,174 B in 333,920 ps). */
static void test_port_rate_and_limit(void **state)
{
	struct rig *r = rig_new("leaf0", NULL, "rate = 100Gbps", NULL, false);

	(void)state;
	assert_int_equal(sw_queue_limit(r->sw, 1), 62500);
	assert_int_equal(sw_queue_limit(r->sw, 0), LIMIT);
	sw_receive(r->sw, 0, data_pkt(r, IP_H1, 300, 2), 0);
	sw_receive(r->sw, 0, data_pkt(r, IP_H1, 300, 2), 0);
	run(r);
	assert_int_equal(r->nsent, 2);
	assert_int_equal(r->sent[0].arrival, 333920 + PS_PER_US);
	assert_int_equal(r->sent[1].arrival, 2 * 333920 + PS_PER_US);
	rig_free(r);
}

/* docs/protocol.md §9: TTL - 1, drop at 0, counted. */
static void test_ttl_drop_at_zero(void **state)
{
	struct rig *r = rig_new("leaf0", NULL, NULL, NULL, false);
	struct pkt *a = data_pkt(r, IP_H1, 300, 2), *b = data_pkt(r, IP_H1, 300, 2);

	(void)state;
	a->ttl = 1;
	b->ttl = 2;
	sw_receive(r->sw, 0, a, 0);
	sw_receive(r->sw, 0, b, 0);
	run(r);
	assert_int_equal(r->nsent, 1);
	assert_int_equal(r->sent[0].p->ttl, 1);
	assert_int_equal(sw_counter(r->sw, "drop_ttl"), 1);
	rig_free(r);
}

/* A built frame goes through parse, forward and build with a valid IPv4
 * checksum; malformed frames and payloads off the pattern are counted. */
static void test_frames_in(void **state)
{
	struct rig *r = rig_new("leaf0", NULL, NULL, NULL, false);
	uint8_t f[WIRE_MAX_FRAME], g[WIRE_MAX_FRAME], payload[4096];
	struct pkt *p = data_pkt(r, IP_H1, 300, 2), back;
	size_t n;

	(void)state;
	wire_pattern_fill(payload, 4096, p->src_ip, p->msn, p->va % WIRE_VA_MSG_STRIDE);
	p->payload = payload;
	n = wire_build(p, f, sizeof(f));
	pkt_put(&r->pool, p);
	sw_receive_frame(r->sw, 0, f, n, 0);
	run(r);
	assert_int_equal(r->nsent, 1);
	size_t m = wire_build(r->sent[0].p, g, sizeof(g));
	assert_int_equal(m, n);
	assert_int_equal(wire_parse(g, m, false, &back), WIRE_OK);
	assert_int_equal(back.ttl, 63);
	assert_int_equal(wire_pattern_check(back.payload, back.payload_len, back.src_ip, back.msn,
					    back.va % WIRE_VA_MSG_STRIDE),
			 0);

	sw_receive_frame(r->sw, 0, f, 30, 0);
	assert_int_equal(sw_counter(r->sw, "rx_drop_short"), 1);
	f[WIRE_ETH_LEN + 10] ^= 0xFF; /* the IPv4 checksum */
	sw_receive_frame(r->sw, 0, f, n, 0);
	assert_int_equal(sw_counter(r->sw, "rx_drop_bad_ip_csum"), 1);
	f[WIRE_ETH_LEN + 10] ^= 0xFF;
	f[n - 1] ^= 0x01; /* the last payload byte */
	sw_receive_frame(r->sw, 0, f, n, 0);
	assert_int_equal(sw_counter(r->sw, "rx_drop_payload_not_pattern"), 1);
	run(r);
	assert_int_equal(r->nsent, 1);
	assert_int_equal(sw_counter(r->sw, "rx_frames"), 1);
	rig_free(r);
}

/* ---- classes and scheduling ------------------------------------------------ */

/* docs/protocol.md §3: under the UET policy control -> TC2, trimmed and
 * trimmed-last-hop -> TC1, the rest TC0; without it TC = DSCP / 8. */
static void test_classification(void **state)
{
	struct rig *u = rig_new("leaf0", NULL, NULL, NULL, false);
	struct rig *d = rig_new("leaf0", "UETPolicyEnabled = false", NULL, NULL, false);

	(void)state;
	assert_int_equal(sw_classify(u->sw, 17), 2);
	assert_int_equal(sw_classify(u->sw, 9), 1);
	assert_int_equal(sw_classify(u->sw, 10), 1);
	assert_int_equal(sw_classify(u->sw, 2), 0);
	assert_int_equal(sw_classify(u->sw, 3), 0);
	assert_int_equal(sw_classify(u->sw, 1), 0);
	assert_int_equal(sw_classify(u->sw, 46), 0);
	assert_int_equal(sw_classify(d->sw, 17), 2);
	assert_int_equal(sw_classify(d->sw, 9), 1);
	assert_int_equal(sw_classify(d->sw, 10), 1);
	assert_int_equal(sw_classify(d->sw, 2), 0);
	assert_int_equal(sw_classify(d->sw, 46), 5);
	assert_int_equal(sw_classify(d->sw, 63), 7);
	rig_free(u);
	rig_free(d);
}

/* TC2 is served ahead of waiting data (strict priority). */
static void test_control_strict_priority(void **state)
{
	struct rig *r = rig_new("leaf0", NULL, NULL, NULL, false);

	(void)state;
	for (int i = 0; i < 5; i++)
		sw_receive(r->sw, 0, data_pkt(r, IP_H1, 300, 2), 0);
	sw_receive(r->sw, 0, sack_pkt(r, IP_H1, 300), 0);
	run(r);
	assert_int_equal(r->nsent, 6);
	assert_int_equal(r->sent[0].p->opcode, WIRE_OP_WRITE_MIDDLE); /* already on the wire */
	assert_int_equal(r->sent[1].p->opcode, WIRE_OP_SACK);
	rig_free(r);
}

/* TC1 against TC0 by deficit round robin: with both queues backlogged TC1
 * gets TrimmedClassWeight (25 %) of the bytes. */
static void test_drr_trimmed_weight(void **state)
{
	struct rig *r = rig_new("leaf0", NULL, NULL, NULL, false);
	uint64_t b0 = 0, b1 = 0;

	(void)state;
	for (int i = 0; i < 55; i++)
		sw_receive(r->sw, 0, data_pkt(r, IP_H1, 300, 2), 0);
	for (int i = 0; i < 3500; i++) {
		struct pkt *p = data_pkt(r, IP_H1, 300, 10);
		wire_trim(p);
		sw_receive(r->sw, 0, p, 0);
	}
	run(r);
	/* TC0 runs out first (55 x 4,174 B against 3,500 x 62 B at 3:1): count
	 * from the second frame (the first went alone) to TC0's last. */
	size_t last0 = 0;
	for (size_t i = 0; i < r->nsent; i++)
		if (!r->sent[i].p->trimmed)
			last0 = i;
	assert_true(last0 + 1 < r->nsent);
	for (size_t i = 1; i <= last0; i++)
		*(r->sent[i].p->trimmed ? &b1 : &b0) += wire_len(r->sent[i].p);
	double share = (double)b1 / (double)(b0 + b1);
	assert_true(share > 0.23 && share < 0.27);
	rig_free(r);
}

/* ---- ECN --------------------------------------------------------------------- */

/* docs/protocol.md §9: on enqueue to TC0 an ECT packet is marked CE with
 * probability 0 up to EcnKmin x limit (50,000 B), EcnPmax (1) from EcnKmax x
 * limit (200,000 B); control packets are never marked. */
static void test_ecn_thresholds(void **state)
{
	struct rig *r = rig_new("leaf0", NULL, NULL, NULL, false);
	uint64_t queued_before[60], must = 0;

	(void)state;
	for (int i = 0; i < 59; i++) {
		queued_before[i] = sw_queue_bytes(r->sw, 1, 0);
		sw_receive(r->sw, 0, data_pkt(r, IP_H1, 300, 2), 0);
		sw_receive(r->sw, 0, sack_pkt(r, IP_H1, 300), 0);
	}
	run(r);
	size_t k = 0;
	for (size_t i = 0; i < r->nsent; i++) {
		const struct pkt *p = r->sent[i].p;
		if (p->opcode == WIRE_OP_SACK) {
			assert_int_equal(p->ecn, WIRE_ECN_ECT0);
			continue;
		}
		uint64_t q = queued_before[k++];
		if (q <= 50000)
			assert_int_equal(p->ecn, WIRE_ECN_ECT0);
		if (q >= 200000) {
			assert_int_equal(p->ecn, WIRE_ECN_CE);
			must++;
		}
	}
	assert_int_equal(k, 59);
	assert_int_equal(ctr(r, 1, 2, "ecn_marked"), 0);
	assert_true(ctr(r, 1, 0, "ecn_marked") >= must);
	assert_true(must >= 10);
	rig_free(r);
}

/* Between the thresholds the probability rises linearly: over many fills
 * the marks match the sum of the probabilities within 5 sigma. */
static void test_ecn_linear(void **state)
{
	struct rig *r = rig_new("leaf0", "EcnPmax = 0.5", NULL, NULL, false);
	double expect = 0, var = 0;
	uint64_t marks;

	(void)state;
	for (int round = 0; round < 40; round++) {
		for (int i = 0; i < 50; i++) {
			double q = (double)sw_queue_bytes(r->sw, 1, 0), pr = 0;
			if (q > 50000)
				pr = q >= 200000 ? 0.5 : 0.5 * (q - 50000) / 150000;
			expect += pr;
			var += pr * (1 - pr);
			sw_receive(r->sw, 0, data_pkt(r, IP_H1, 300, 2), events_now(r->q));
		}
		run(r);
	}
	marks = ctr(r, 1, 0, "ecn_marked");
	assert_true((double)marks > expect - 5 * __builtin_sqrt(var));
	assert_true((double)marks < expect + 5 * __builtin_sqrt(var));
	assert_true(expect > 100);
	rig_free(r);
}

/* ---- admission and trimming -------------------------------------------------- */

static int fits(uint64_t limit, uint32_t len)
{
	return (int)(limit / len);
}

/* A trimmable packet that does not fit is cut to 44 bytes (62 on the wire),
 * re-marked trimmed on a spine-facing port and offered to TC1. */
static void test_trim_on_spine_port(void **state)
{
	struct rig *r = rig_new("leaf0", NULL, NULL, NULL, false);
	uint16_t ev = sport_to(r, IP_H2, 2);
	int n = 1 + fits(LIMIT, FULL) + 3; /* one on the wire, a full queue, 3 more */

	(void)state;
	assert_int_equal(sw_queue_limit(r->sw, 2), LIMIT);
	for (int i = 0; i < n; i++)
		sw_receive(r->sw, 0, data_pkt(r, IP_H2, ev, 2), 0);
	assert_int_equal(sw_queue_bytes(r->sw, 2, 0), fits(LIMIT, FULL) * FULL);
	assert_int_equal(sw_queue_bytes(r->sw, 2, 1), 3 * 62);
	assert_int_equal(ctr(r, 2, 0, "trimmed"), 3);
	run(r);
	int trimmed = 0;
	for (size_t i = 0; i < r->nsent; i++) {
		struct pkt *p = r->sent[i].p;
		if (!p->trimmed)
			continue;
		trimmed++;
		assert_int_equal(p->dscp, 9);
		assert_int_equal(wire_nominal_len(p), 44);
		assert_int_equal(wire_len(p), 62);
		assert_int_equal(p->payload_len, 0);
		assert_int_equal(p->psn, 5);
	}
	assert_int_equal(trimmed, 3);
	/* DRR gives TC1 its share while TC0 is backlogged: the trimmed packets
	 * do not wait behind the whole queue */
	for (size_t i = 0; i < 10; i++)
		trimmed -= r->sent[i].p->trimmed;
	assert_int_equal(trimmed, 0);
	rig_free(r);
}

/* Issue 9, item 13 (every drop named correctly): a queue that cannot grow
 * (out of memory) drops the frame as drop_no_memory, not drop_queue_full;
 * the next frame, with memory back, goes through.  A frame for a free
 * port with nothing queued needs no queue, so the first one keeps the
 * port busy. */
static void test_queue_without_memory_drop_named(void **state)
{
	struct rig *r = rig_new("leaf0", NULL, NULL, NULL, false);

	(void)state;
	malloc_fails = true;
	sw_receive(r->sw, 0, data_pkt(r, IP_H1, 300, 2), 0);
	assert_int_equal(r->nsent, 1);
	sw_receive(r->sw, 0, data_pkt(r, IP_H1, 300, 2), 0);
	malloc_fails = false;
	run(r);
	assert_int_equal(ctr(r, 1, 0, "drop_no_memory"), 1);
	assert_int_equal(ctr(r, 1, 0, "drop_queue_full"), 0);
	assert_int_equal(ctr(r, 1, 0, "enqueued"), 1);
	assert_int_equal(r->nsent, 1);
	assert_int_equal(r->pool.in_use, 1);
	sw_receive(r->sw, 0, data_pkt(r, IP_H1, 300, 2), PS_PER_US);
	run(r);
	assert_int_equal(r->nsent, 2);
	assert_int_equal(ctr(r, 1, 0, "drop_no_memory"), 1);
	rig_free(r);
}

/* The switch's counters come from one iterator, in the order `stats` lists
 * them (docs/control.md): the same values sw_counter and the records give. */
static void test_counters_iterator(void **state)
{
	static const char *const names[] = {
	    "rx_frames",
	    "enqueued",
	    "dequeued",
	    "bytes",
	    "trimmed",
	    "ecn_marked",
	    "max_queue_bytes",
	    "drop_queue_full",
	    "drop_trim_queue_full",
	    "drop_ttl",
	    "drop_no_route",
	    "drop_port_down",
	    "drop_link_lost",
	    "drop_link_down",
	    "drop_link_rule",
	    "drop_rx_port_down",
	    "drop_no_memory",
	    "rx_drop_payload_not_pattern",
	    "rx_drop_no_memory",
	};
	struct rig *r = rig_new("leaf0", NULL, NULL, NULL, false);
	uint16_t ev = sport_to(r, IP_H2, 2);
	int n = 1 + fits(LIMIT, FULL) + 3; /* as test_trim_on_spine_port: 3 trimmed */
	struct counter c;
	size_t i;

	(void)state;
	for (int k = 0; k < n; k++)
		sw_receive(r->sw, 0, data_pkt(r, IP_H2, ev, 2), 0);
	run(r);
	for (i = 0; sw_counter_at(r->sw, i, &c); i++) {
		char wire[64];
		if (i < sizeof(names) / sizeof(names[0])) {
			assert_string_equal(c.name, names[i]);
		} else {
			snprintf(wire, sizeof wire, "rx_drop_%s",
				 wire_error_name((enum wire_error)(i - 18)));
			assert_string_equal(c.name, wire);
		}
		assert_int_equal(c.value, sw_counter(r->sw, c.name));
		if (!strcmp(c.name, "trimmed"))
			assert_int_equal(c.value, 3);
		if (!strcmp(c.name, "enqueued"))
			assert_int_equal(c.value, n);
	}
	assert_int_equal(i, 19 + WIRE_ERROR_COUNT - 1);
	assert_int_equal(sw_counter(r->sw, "no_such_counter"), UINT64_MAX);
	rig_free(r);
}

/* On the hop to a NIC the trimmed packet is re-marked trimmed-last-hop; a
 * TSETH survives the cut (48 bytes, 66 on the wire). */
static void test_trim_last_hop_with_tseth(void **state)
{
	struct rig *r = rig_new("leaf0", NULL, NULL, NULL, false);
	int n = 1 + fits(LIMIT, FULL) + 1;

	(void)state;
	for (int i = 0; i < n; i++) {
		struct pkt *p = data_pkt(r, IP_H1, 300, 2);
		p->flags |= WIRE_BTH_TS;
		p->tseth_time = 77;
		sw_receive(r->sw, 0, p, 0);
	}
	run(r);
	for (size_t i = 0; i < r->nsent; i++)
		if (r->sent[i].p->trimmed) {
			assert_int_equal(r->sent[i].p->dscp, 10);
			assert_int_equal(wire_nominal_len(r->sent[i].p), 48);
			assert_int_equal(wire_len(r->sent[i].p), 66);
			assert_int_equal(r->sent[i].p->tseth_time, 77);
		}
	assert_int_equal(ctr(r, 1, 0, "trimmed"), 1);
	assert_int_equal(ctr(r, 1, 1, "enqueued"), 1);
	rig_free(r);
}

/* A trimmable retransmission may use 1.5 x the limit before it is trimmed;
 * a no-trim packet is dropped when it does not fit. */
static void test_retx_limit_and_no_trim(void **state)
{
	struct rig *r = rig_new("leaf0", NULL, NULL, NULL, false);
	int first = 1 + fits(LIMIT, FULL);
	int retx = fits(LIMIT + LIMIT / 2, FULL) - fits(LIMIT, FULL);

	(void)state;
	for (int i = 0; i < first; i++)
		sw_receive(r->sw, 0, data_pkt(r, IP_H1, 300, 2), 0);
	sw_receive(r->sw, 0, data_pkt(r, IP_H1, 300, 1), 0);
	assert_int_equal(ctr(r, 1, 0, "drop_queue_full"), 1);
	assert_int_equal(ctr(r, 1, 0, "trimmed"), 0);
	for (int i = 0; i < retx + 1; i++)
		sw_receive(r->sw, 0, data_pkt(r, IP_H1, 300, 3), 0);
	assert_int_equal(sw_queue_bytes(r->sw, 1, 0), (uint64_t)(first - 1 + retx) * FULL);
	assert_int_equal(ctr(r, 1, 0, "trimmed"), 1);
	assert_true(sw_queue_bytes(r->sw, 1, 0) > LIMIT);
	run(r);
	rig_free(r);
}

/* When TC1 is full too, the trimmed packet is dropped (trim_queue_full). */
static void test_trim_tc1_full(void **state)
{
	struct rig *r = rig_new("leaf0", "EgressQueueLimit = 20000B", NULL, NULL, false);
	int n = 1 + fits(20000, FULL) + fits(20000, 62) + 2;

	(void)state;
	for (int i = 0; i < n; i++)
		sw_receive(r->sw, 0, data_pkt(r, IP_H1, 300, 2), 0);
	assert_int_equal(ctr(r, 1, 0, "trimmed"), fits(20000, 62) + 2);
	assert_int_equal(ctr(r, 1, 1, "enqueued"), fits(20000, 62));
	assert_int_equal(ctr(r, 1, 1, "drop_trim_queue_full"), 2);
	run(r);
	rig_free(r);
}

/* Without the UET policy trimming is inactive: what does not fit is
 * dropped; with TrimmingEnabled false likewise. */
static void test_no_trim_without_policy(void **state)
{
	const char *cfg[] = {"UETPolicyEnabled = false", "TrimmingEnabled = false"};

	(void)state;
	for (int c = 0; c < 2; c++) {
		struct rig *r = rig_new("leaf0", cfg[c], NULL, NULL, false);
		int n = 1 + fits(LIMIT, FULL) + 2;
		for (int i = 0; i < n; i++)
			sw_receive(r->sw, 0, data_pkt(r, IP_H1, 300, 3), 0);
		/* no 1.5 x for retransmissions without the policy */
		int over = c == 0 ? 2 : 2 - (fits(LIMIT + LIMIT / 2, FULL) - fits(LIMIT, FULL));
		assert_int_equal(ctr(r, 1, 0, "trimmed"), 0);
		assert_int_equal(ctr(r, 1, 0, "drop_queue_full"), over > 0 ? over : 0);
		run(r);
		rig_free(r);
	}
}

/* ---- faults -------------------------------------------------------------------- */

/* One run of test_port_down, with rig_host_macs as it is. */
static void port_down_once(void)
{
	struct rig *r = rig_new("leaf0", NULL, NULL, NULL, false);

	for (int i = 0; i < 4; i++)
		sw_receive(r->sw, 0, data_pkt(r, IP_H1, 300, 2), 0);
	sw_port_set_down(r->sw, 1, true);
	sw_receive(r->sw, 0, data_pkt(r, IP_H1, 300, 2), 0);
	sw_receive(r->sw, 1, data_pkt(r, IP_H0, 300, 2), 0);
	run(r);
	assert_int_equal(r->nsent, 1);
	/* issue 9 item 13: 3 waiting + 1 routed to it leave by it; 1 arrived */
	assert_int_equal(ctr(r, 1, 0, "drop_port_down"), 3 + 1);
	assert_int_equal(ctr(r, 1, 0, "drop_rx_port_down"), 1);
	sw_port_set_down(r->sw, 1, false);
	sw_receive(r->sw, 0, data_pkt(r, IP_H1, 300, 2), events_now(r->q));
	run(r);
	assert_int_equal(r->nsent, 2);
	rig_free(r);
}

/* A port set down drops what waits for it and what arrives for it (the
 * frame already being serialized is gone); whether the switch writes the
 * MACs or the host does (the hop's general path or its common one). */
static void test_port_down(void **state)
{
	(void)state;
	for (int macs = 0; macs < 2; macs++) {
		rig_host_macs = macs;
		port_down_once();
	}
	rig_host_macs = false;
}

/* A link's down window (topology `down`) loses the frames serialized in
 * it, counted; loss = 1 loses everything, counted. */
static void test_link_down_window_and_loss(void **state)
{
	struct rig *r = rig_new("leaf0", NULL, "down = 100ns-300ns", "loss = 1", false);
	uint16_t ev = sport_to(r, IP_H2, 2);

	(void)state;
	for (int i = 0; i < 5; i++)
		sw_receive(r->sw, 0, data_pkt(r, IP_H1, 300, 2), 0);
	sw_receive(r->sw, 0, data_pkt(r, IP_H2, ev, 2), 0);
	run(r);
	/* frames end at 83.48, 166.96, 250.44, 333.92, 417.40 ns: [100, 300)
	 * overlaps the 2nd, 3rd and 4th (which starts at 250.44 ns) */
	assert_int_equal(ctr(r, 1, 0, "drop_link_down"), 3);
	assert_int_equal(ctr(r, 2, 0, "drop_link_lost"), 1);
	assert_int_equal(r->nsent, 2);
	rig_free(r);
}

/* ---- records and refusals ------------------------------------------------------- */

static int count_lines(const char *path, const char *needle)
{
	char line[1024];
	int n = 0;
	FILE *f = fopen(path, "r");

	assert_non_null(f);
	while (fgets(line, sizeof(line), f))
		n += needle ? strstr(line, needle) != NULL : 1;
	fclose(f);
	return n;
}

/* One row per port and class that saw traffic, per interval, and a final
 * row for each. */
static void test_stats_rows(void **state)
{
	struct rig *r = rig_new("leaf0", "SwitchStatsReportInterval = 1us", NULL, NULL, true);
	char path[128], header[1024];
	FILE *f;

	(void)state;
	sw_receive(r->sw, 0, data_pkt(r, IP_H1, 300, 2), 0);
	sw_receive(r->sw, 0, sack_pkt(r, IP_H1, 300), 0);
	events_run_until(r->q, 2500 * PS_PER_NS);
	sw_finish(r->sw, events_now(r->q));
	csv_close(r->stats);
	r->stats = NULL;
	snprintf(path, sizeof(path), "%s/switch-stats.csv", r->dir);
	f = fopen(path, "r");
	assert_non_null(fgets(header, sizeof(header), f));
	fclose(f);
	header[strcspn(header, "\n")] = 0;
	/* docs/records.md, switch-stats.csv */
	assert_string_equal(
	    header, "time_ps,node,port,peer,tc,enqueued,dequeued,bytes,trimmed,ecn_marked,"
		    "max_queue_bytes,queue_bytes,drop_queue_full,drop_trim_queue_full,drop_ttl,"
		    "drop_no_route,drop_port_down,drop_link_lost,drop_link_down,drop_link_rule,"
		    "drop_rx_port_down,drop_no_memory");
	/* interval at 1 us: TC0 and TC2 on port 1; at 2 us nothing; final: 2 */
	assert_int_equal(count_lines(path, NULL), 1 + 2 + 2);
	assert_int_equal(count_lines(path, ",leaf0,1,h1,0,1,1,4174,"), 1);
	assert_int_equal(count_lines(path, ",leaf0,1,h1,2,1,1,"), 1);
	rig_free(r);
}

/* max_queue_bytes is each interval's own peak: after an interval whose
 * queue reached two frames, one of one frame shows one frame (a frame
 * tests the least of the class's peaks alone, peak_low, which the
 * interval's row lowers). */
static void test_stats_interval_peak(void **state)
{
	struct rig *r = rig_new("leaf0", "SwitchStatsReportInterval = 1us", NULL, NULL, true);
	char path[128], row[128];

	(void)state;
	for (int k = 0; k < 3; k++) /* one on the wire, two queued */
		sw_receive(r->sw, 0, data_pkt(r, IP_H1, 300, 2), 0);
	events_run_until(r->q, 1500 * PS_PER_NS);
	for (int k = 0; k < 2; k++) /* one on the wire, one queued */
		sw_receive(r->sw, 0, data_pkt(r, IP_H1, 300, 2), events_now(r->q));
	events_run_until(r->q, 2500 * PS_PER_NS);
	csv_close(r->stats);
	r->stats = NULL;
	snprintf(path, sizeof(path), "%s/switch-stats.csv", r->dir);
	snprintf(row, sizeof(row), "1000000,leaf0,1,h1,0,3,3,%u,0,0,%u,0,", 3 * FULL, 2 * FULL);
	assert_int_equal(count_lines(path, row), 1);
	snprintf(row, sizeof(row), "2000000,leaf0,1,h1,0,2,2,%u,0,0,%u,0,", 2 * FULL, FULL);
	assert_int_equal(count_lines(path, row), 1);
	assert_int_equal(sw_counter(r->sw, "max_queue_bytes"), 2 * FULL);
	rig_free(r);
}

/* PfcEnabled=true and codepoints unlike the NICs' are refused at start. */
static void test_refusals(void **state)
{
	char dir[] = "/tmp/mrcemu-switch-XXXXXX", err[512] = "", cmd[64];
	struct topology *t;
	struct events *q = events_new();
	struct pkt_pool pool;
	struct link_end links[TOPO_MAX_PORTS];

	(void)state;
	assert_non_null(mkdtemp(dir));
	t = load_text("", "", "", dir);
	assert_true(pkt_pool_init(&pool, 16, 0));
	int leaf = topology_find(t, "leaf0");
	struct sw_params p = {.topo = t,
			      .node = leaf,
			      .links = links,
			      .events = q,
			      .pool = &pool,
			      .host = {NULL, on_transmit}};
	t->nodes[leaf].sw.pfc = true;
	assert_null(sw_new(&p, err, sizeof(err)));
	assert_non_null(strstr(err, "PfcEnabled"));
	t->nodes[leaf].sw.pfc = false;
	t->nodes[leaf].sw.dscp_trimmed = 11;
	assert_null(sw_new(&p, err, sizeof(err)));
	assert_non_null(strstr(err, "DscpTrimmed"));
	p.node = topology_find(t, "h0");
	assert_null(sw_new(&p, err, sizeof(err)));
	assert_non_null(strstr(err, "not a switch"));
	topology_free(t);
	pkt_pool_destroy(&pool);
	events_free(q);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	assert_int_equal(system(cmd), 0);
}

/* docs/protocol.md §2: nothing in a frame can make a switch crash.  Frames of
 * every kind, addressed across the fabric, have random bytes changed (their
 * IPv4 checksum fixed, so most reach the engine); each is forwarded, or
 * dropped and counted. */
static void test_mutated_frames_counted(void **state)
{
	struct rig *r = rig_new("leaf0", NULL, NULL, NULL, false);
	uint64_t x = 0x9E3779B97F4A7C15ULL, fed = 0;
	uint8_t f[WIRE_MAX_FRAME];

	(void)state;
	for (int i = 0; i < 20000; i++) {
		struct pkt m;
		size_t n;
		vectors_pkt(1 + i % 8, &m);
		m.src_ip = IP_H0;
		m.dst_ip = i % 3 ? IP_H2 : IP_H1;
		n = wire_build(&m, f, sizeof f);
		for (int k = 0; k < 3; k++) {
			x ^= x << 13, x ^= x >> 7, x ^= x << 17;
			f[14 + x % (n - 14)] = (uint8_t)(x >> 32);
		}
		f[24] = f[25] = 0;
		uint16_t c = wire_ipv4_csum(f + 14);
		f[24] = (uint8_t)(c >> 8), f[25] = (uint8_t)c;
		sw_receive_frame(r->sw, 0, f, n, (ps_t)i * 100 * PS_PER_NS);
		fed++;
		if (i % 512 == 0)
			events_run_until(r->q, (ps_t)i * 100 * PS_PER_NS);
	}
	run(r);
	uint64_t accounted =
	    sw_counter(r->sw, "rx_frames") + sw_counter(r->sw, "rx_drop_payload_not_pattern");
	for (int e = WIRE_OK + 1; e < WIRE_ERROR_COUNT; e++) {
		char name[64];
		snprintf(name, sizeof name, "rx_drop_%s", wire_error_name((enum wire_error)e));
		accounted += sw_counter(r->sw, name);
	}
	assert_int_equal(accounted, fed);
	assert_true(r->nsent > 1000);
	rig_free(r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_route_ecmp_by_entropy),
	    cmocka_unit_test(test_route_hash_per_switch),
	    cmocka_unit_test(test_forward_rewrites_and_times),
	    cmocka_unit_test(test_port_rate_and_limit),
	    cmocka_unit_test(test_ttl_drop_at_zero),
	    cmocka_unit_test(test_frames_in),
	    cmocka_unit_test(test_classification),
	    cmocka_unit_test(test_control_strict_priority),
	    cmocka_unit_test(test_drr_trimmed_weight),
	    cmocka_unit_test(test_ecn_thresholds),
	    cmocka_unit_test(test_ecn_linear),
	    cmocka_unit_test(test_trim_on_spine_port),
	    cmocka_unit_test(test_queue_without_memory_drop_named),
	    cmocka_unit_test(test_counters_iterator),
	    cmocka_unit_test(test_trim_last_hop_with_tseth),
	    cmocka_unit_test(test_retx_limit_and_no_trim),
	    cmocka_unit_test(test_trim_tc1_full),
	    cmocka_unit_test(test_no_trim_without_policy),
	    cmocka_unit_test(test_port_down),
	    cmocka_unit_test(test_link_down_window_and_loss),
	    cmocka_unit_test(test_stats_rows),
	    cmocka_unit_test(test_stats_interval_peak),
	    cmocka_unit_test(test_refusals),
	    cmocka_unit_test(test_mutated_frames_counted),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
