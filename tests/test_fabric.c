/* tests/test_fabric.c — NICs through switches (issue 4, docs/protocol.md §§3, 6,
 * 9): each test writes a topology and a workload, runs `mrcemu sim` ($MRCEMU,
 * default build/mrcemu) and reads the records a user reads: messages.csv,
 * mrc-transport-stats.csv, mrc-monitor.csv and switch-stats.csv.  Expected
 * numbers come from the attributes and, for paths, from the switch's own
 * hash (sw_route on crafted packets, with the same topology file). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "core/events.h"
#include "core/link.h"
#include "core/topology.h"
#include "core/wire.h"
#include "switchd/switch.h"

/* ---- records ------------------------------------------------------------- */

struct csvt {
	char **cells; /* row-major, header first */
	int ncols;
	size_t nrows; /* without the header */
};

static void push_cell(struct csvt *t, size_t *n, size_t *cap, const char *s, size_t len)
{
	if (*n == *cap) {
		*cap = *cap ? *cap * 2 : 1024;
		t->cells = realloc(t->cells, *cap * sizeof(*t->cells));
		assert_non_null(t->cells);
	}
	t->cells[(*n)++] = strndup(s, len);
}

/* A CSV record: cells split at commas outside double quotes. */
static struct csvt *csv_load(const char *dir, const char *name)
{
	char path[512], *line = NULL, cell[4096];
	size_t cap = 0, n = 0, lcap = 0;
	struct csvt *t = calloc(1, sizeof(*t));
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "r");
	if (!f)
		fail_msg("no record %s", path);
	for (int row = 0; getline(&line, &lcap, f) > 0; row++) {
		size_t len = 0, before = n;
		bool quoted = false;
		for (char *c = line; *c && *c != '\n'; c++) {
			if (*c == '"')
				quoted = !quoted;
			else if (*c == ',' && !quoted) {
				push_cell(t, &n, &cap, cell, len);
				len = 0;
			} else if (len < sizeof(cell) - 1)
				cell[len++] = *c;
		}
		push_cell(t, &n, &cap, cell, len);
		if (row == 0)
			t->ncols = (int)n;
		else
			assert_int_equal(n - before, t->ncols);
	}
	free(line);
	fclose(f);
	t->nrows = t->ncols ? n / (size_t)t->ncols - 1 : 0;
	return t;
}

static void csv_free(struct csvt *t)
{
	for (size_t i = 0; i < (t->nrows + 1) * (size_t)t->ncols; i++)
		free(t->cells[i]);
	free(t->cells);
	free(t);
}

static int col(const struct csvt *t, const char *name)
{
	for (int c = 0; c < t->ncols; c++)
		if (!strcmp(t->cells[c], name))
			return c;
	fail_msg("no column %s", name);
	return -1;
}

static const char *cell(const struct csvt *t, size_t row, const char *name)
{
	return t->cells[(row + 1) * (size_t)t->ncols + (size_t)col(t, name)];
}

/* Sum of column `what` over rows matching "col=value" pairs (NULL-ended). */
static uint64_t sum_where(const struct csvt *t, const char *what, ...)
{
	const char *conds[16];
	int nconds = 0;
	uint64_t sum = 0;
	va_list ap;

	va_start(ap, what);
	for (const char *c; (c = va_arg(ap, const char *)) && nconds < 16;)
		conds[nconds++] = c;
	va_end(ap);
	for (size_t r = 0; r < t->nrows; r++) {
		bool ok = true;
		for (int i = 0; i < nconds && ok; i++) {
			char name[64];
			const char *eq = strchr(conds[i], '=');
			snprintf(name, sizeof(name), "%.*s", (int)(eq - conds[i]), conds[i]);
			ok = !strcmp(cell(t, r, name), eq + 1);
		}
		if (ok)
			sum += what ? strtoull(cell(t, r, what), NULL, 10) : 1;
	}
	return sum;
}

/* A NIC counter's total from its last mrc-transport-stats row. */
static uint64_t nic_total(const struct csvt *t, const char *node, const char *counter)
{
	char name[96];
	uint64_t v = UINT64_MAX;

	snprintf(name, sizeof(name), "total_%s", counter);
	for (size_t r = 0; r < t->nrows; r++)
		if (!strcmp(cell(t, r, "node"), node))
			v = strtoull(cell(t, r, name), NULL, 10);
	assert_true(v != UINT64_MAX);
	return v;
}

/* ---- runs ------------------------------------------------------------------ */

struct run {
	char dir[64], out[96], topo[96];
	int rc;
	struct csvt *messages, *stats, *sw, *monitor;
};

static void write_file(const char *dir, const char *name, const char *text)
{
	char path[256];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "w");
	assert_non_null(f);
	fputs(text, f);
	fclose(f);
}

/* Two leaves with two hosts each (h0 h1 on leaf0, h2 h3 on leaf1) and four
 * spines, 400 Gbps and 1 us unless `uplinks` (every leaf-spine link) or
 * `leaf0_spine0` say otherwise. */
static void leaf_spine(char *buf, size_t len, const char *nic, const char *sw, const char *uplinks,
		       const char *leaf0_spine0)
{
	int n = snprintf(buf, len,
			 "[emulation]\nname = fabric\nseed = 1\n\n[nic]\n%s\n\n[switch]\n%s\n\n"
			 "[nic h0]\nip = 10.0.0.1\n[nic h1]\nip = 10.0.0.2\n"
			 "[nic h2]\nip = 10.0.1.1\n[nic h3]\nip = 10.0.1.2\n"
			 "[switch leaf0]\n[switch leaf1]\n[switch spine0]\n[switch spine1]\n"
			 "[switch spine2]\n[switch spine3]\n\n"
			 "[link h0 leaf0]\n[link h1 leaf0]\n[link h2 leaf1]\n[link h3 leaf1]\n",
			 nic, sw);
	for (int l = 0; l < 2; l++)
		for (int s = 0; s < 4; s++)
			n += snprintf(buf + n, len - (size_t)n, "[link leaf%d spine%d]\n%s\n%s\n",
				      l, s, uplinks, l == 0 && s == 0 ? leaf0_spine0 : "");
	snprintf(buf + n, len - (size_t)n, "\n[workload]\nfile = w.csv\n");
}

/* h0..h7 on one switch s0; h0_attrs: lines for [nic h0]. */
static void incast(char *buf, size_t len, const char *nic, const char *sw, const char *h0_attrs)
{
	int n = snprintf(buf, len,
			 "[emulation]\nname = incast\nseed = 1\n\n[nic]\n%s\n\n"
			 "[switch]\n%s\n\n[switch s0]\n",
			 nic, sw);
	for (int h = 0; h < 8; h++)
		n += snprintf(buf + n, len - (size_t)n,
			      "[nic h%d]\nip = 10.0.0.%d\n%s\n[link h%d s0]\n", h, h + 1,
			      h ? "" : h0_attrs, h);
	snprintf(buf + n, len - (size_t)n, "\n[workload]\nfile = w.csv\n");
}

static const char *mrcemu(void)
{
	const char *m = getenv("MRCEMU");
	return m && *m ? m : "build/mrcemu";
}

static struct run *run_sim(const char *topo, const char *workload, const char *opts)
{
	struct run *r = calloc(1, sizeof(*r));
	char cmd[1024], w[4096];
	int st;

	snprintf(r->dir, sizeof(r->dir), "/tmp/mrcemu-fabric-XXXXXX");
	assert_non_null(mkdtemp(r->dir));
	snprintf(r->out, sizeof(r->out), "%s/out", r->dir);
	snprintf(r->topo, sizeof(r->topo), "%s/topo.ini", r->dir);
	write_file(r->dir, "topo.ini", topo);
	snprintf(w, sizeof(w), "id,at,src,dst,bytes,after\n%s", workload);
	write_file(r->dir, "w.csv", w);
	snprintf(cmd, sizeof(cmd), "%s sim %s -o %s -q %s 2>%s/stderr", mrcemu(), r->topo, r->out,
		 opts ? opts : "", r->dir);
	st = system(cmd);
	r->rc = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
	if (r->rc != 0 && r->rc != 1) {
		snprintf(cmd, sizeof(cmd), "cat %s/stderr >&2", r->dir);
		(void)!system(cmd);
		fail_msg("mrcemu sim exited %d", r->rc);
	}
	r->messages = csv_load(r->out, "messages.csv");
	r->stats = csv_load(r->out, "mrc-transport-stats.csv");
	r->sw = csv_load(r->out, "switch-stats.csv");
	if (access(r->out, R_OK) == 0 && strstr(topo, "MonitorEnabled = true"))
		r->monitor = csv_load(r->out, "mrc-monitor.csv");
	return r;
}

static void run_free(struct run *r)
{
	char cmd[128];

	csv_free(r->messages);
	csv_free(r->stats);
	csv_free(r->sw);
	if (r->monitor)
		csv_free(r->monitor);
	if (!getenv("FABRIC_KEEP")) {
		snprintf(cmd, sizeof(cmd), "rm -rf %s", r->dir);
		assert_int_equal(system(cmd), 0);
	}
	free(r);
}

/* Every message completed with every byte verified (messages.csv). */
static void assert_all_verified(const struct run *r, size_t messages)
{
	assert_int_equal(r->rc, 0);
	assert_int_equal(r->messages->nrows, messages);
	assert_int_equal(sum_where(r->messages, NULL, "verified=true", NULL), messages);
}

/* A counter summed over every NIC (h0..h7 that have rows). */
static uint64_t nic_sum(const struct run *r, const char *counter)
{
	uint64_t s = 0;

	for (int h = 0; h < 8; h++) {
		char node[24];
		snprintf(node, sizeof(node), "node=h%d", h);
		if (sum_where(r->stats, NULL, node, NULL))
			s += nic_total(r->stats, node + 5, counter);
	}
	return s;
}

/* ---- the switch's own hash ---------------------------------------------------- */

static void no_transmit(void *ctx, int port, struct pkt *p, ps_t arrival, bool pull)
{
	(void)ctx, (void)port, (void)p, (void)arrival, (void)pull;
}

/* For each spine, the share of entropy values first..first+count-1 that
 * leaf0's hash sends to it for src -> dst. */
static void leaf0_shares(const char *topo_path, uint32_t src, uint32_t dst, int first, int count,
			 double share[4])
{
	char err[TOPO_ERR_MAX];
	struct topology *t = topology_load(topo_path, err, sizeof(err));
	struct events *q = events_new();
	struct pkt_pool pool;
	struct link_end links[TOPO_MAX_PORTS];
	int leaf;

	if (!t)
		fail_msg("%s", err);
	leaf = topology_find(t, "leaf0");
	for (int i = 0; i < t->nodes[leaf].nports; i++)
		link_end_init(&links[i], t, t->nodes[leaf].ports[i].link, leaf);
	assert_true(pkt_pool_init(&pool, 16, 0));
	struct sw_params p = {.topo = t,
			      .node = leaf,
			      .links = links,
			      .events = q,
			      .pool = &pool,
			      .host = {NULL, no_transmit}};
	struct sw *sw = sw_new(&p, err, sizeof(err));
	assert_non_null(sw);
	memset(share, 0, 4 * sizeof(double));
	for (int ev = first; ev < first + count; ev++) {
		struct pkt k = {
		    .src_ip = src, .dst_ip = dst, .sport = (uint16_t)ev, .dport = WIRE_ROCE_PORT};
		int port = sw_route(sw, &k);
		const struct topo_node *peer = &t->nodes[t->nodes[leaf].ports[port].peer];
		assert_int_equal(strncmp(peer->name, "spine", 5), 0);
		share[peer->name[5] - '0'] += 1.0 / count;
	}
	sw_free(sw);
	pkt_pool_destroy(&pool);
	events_free(q);
	topology_free(t);
}

/* Data packets each spine carried towards leaf1 (TC0 dequeued). */
static void spine_packets(const struct run *r, uint64_t pkts[4])
{
	for (int s = 0; s < 4; s++) {
		char node[32];
		snprintf(node, sizeof(node), "node=spine%d", s);
		pkts[s] = sum_where(r->sw, "dequeued", node, "peer=leaf1", "tc=0", NULL);
	}
}

/* ---- paths ------------------------------------------------------------------------ */

/* docs/protocol.md §6: with Default Packet Spraying a 4 MiB message across the
 * leaves uses all four spines, each carrying the share of the 128 entropy
 * values (StartingPortOffset 256) that leaf0's hash sends to it, within one
 * percentage point. */
static void test_spraying_shares_follow_the_hash(void **state)
{
	char topo[8192];
	double share[4];
	uint64_t pkts[4], total = 0;

	(void)state;
	leaf_spine(topo, sizeof(topo), "", "", "", "");
	struct run *r = run_sim(topo, "1,0ns,h0,h2,4MiB,\n", NULL);
	assert_all_verified(r, 1);
	leaf0_shares(r->topo, 0x0A000001, 0x0A000101, 256, 128, share);
	spine_packets(r, pkts);
	for (int s = 0; s < 4; s++)
		total += pkts[s];
	assert_true(total >= 1024);
	for (int s = 0; s < 4; s++) {
		assert_true(pkts[s] > 0);
		print_message("spine%d: %.4f of packets, %.4f of entropy values\n", s,
			      (double)pkts[s] / (double)total, share[s]);
		assert_true(fabs((double)pkts[s] / (double)total - share[s]) <= 0.01);
	}
	run_free(r);
}

/* docs/protocol.md §6, SinglePath: one entropy value per QP, like plain RoCEv2
 * ECMP, so every data packet of a message crosses the same spine: the one
 * leaf0's hash picks for that value. */
static void test_single_path_one_spine(void **state)
{
	char topo[8192], ev[16];
	double share[4];
	uint64_t to_leaf1[4], to_leaf0[4];
	int used1 = 0, used0 = 0;

	(void)state;
	leaf_spine(topo, sizeof(topo), "SprayingMode = SinglePath\nMonitorEnabled = true", "", "",
		   "");
	struct run *r = run_sim(topo, "1,0ns,h0,h2,4MiB,\n2,0ns,h3,h1,1MiB,\n", NULL);
	assert_all_verified(r, 2);
	spine_packets(r, to_leaf1);
	for (int s = 0; s < 4; s++) {
		char node[32];
		snprintf(node, sizeof(node), "node=spine%d", s);
		to_leaf0[s] = sum_where(r->sw, "dequeued", node, "peer=leaf0", "tc=0", NULL);
		used1 += to_leaf1[s] > 0;
		used0 += to_leaf0[s] > 0;
		assert_true(to_leaf1[s] == 0 || to_leaf1[s] == 1024);
		assert_true(to_leaf0[s] == 0 || to_leaf0[s] == 256);
	}
	assert_int_equal(used1, 1);
	assert_int_equal(used0, 1);
	/* the spine is the one leaf0's hash gives h0's one entropy value */
	size_t rows = sum_where(r->monitor, NULL, "node=h0", "direction=tx",
				"packet_type=WRITE_MIDDLE", NULL);
	for (size_t i = 0; i < r->monitor->nrows; i++)
		if (!strcmp(cell(r->monitor, i, "node"), "h0") &&
		    !strcmp(cell(r->monitor, i, "direction"), "tx") &&
		    !strcmp(cell(r->monitor, i, "packet_type"), "WRITE_MIDDLE"))
			snprintf(ev, sizeof(ev), "entropy=%s", cell(r->monitor, i, "entropy"));
	assert_int_equal(rows, 1022);
	assert_int_equal(sum_where(r->monitor, NULL, "node=h0", "direction=tx",
				   "packet_type=WRITE_MIDDLE", ev, NULL),
			 1022);
	leaf0_shares(r->topo, 0x0A000001, 0x0A000101, atoi(ev + 8), 1, share);
	for (int s = 0; s < 4; s++)
		assert_true((share[s] == 1.0) == (to_leaf1[s] == 1024));
	run_free(r);
}

/* ---- trimming ------------------------------------------------------------------------ */

/* Seed, NACKs: an incast that overflows the receiver's port is trimmed on
 * the last hop; h0 NACKs TRIMMED_LASTHOP (code 2), the senders retransmit,
 * and every message completes with every byte verified. */
static void test_incast_trims_and_completes(void **state)
{
	char topo[8192], w[1024];
	int n = 0;

	(void)state;
	incast(topo, sizeof(topo), "MonitorEnabled = true", "", "");
	for (int h = 1; h < 8; h++)
		n += snprintf(w + n, sizeof(w) - (size_t)n, "%d,0ns,h%d,h0,512KiB,\n", h, h);
	struct run *r = run_sim(topo, w, NULL);
	assert_all_verified(r, 7);
	uint64_t trimmed = sum_where(r->sw, "trimmed", "node=s0", "peer=h0", NULL);
	assert_true(trimmed > 0);
	assert_int_equal(sum_where(r->sw, "trimmed", NULL), trimmed);
	assert_int_equal(nic_total(r->stats, "h0", "rx_trimmed"), trimmed);
	assert_int_equal(nic_total(r->stats, "h0", "tx_nack"), trimmed);
	assert_int_equal(nic_sum(r, "retx_nack"), trimmed);
	assert_true(nic_sum(r, "tx_retx_pkts") >= trimmed);
	assert_int_equal(
	    sum_where(r->monitor, NULL, "node=h0", "direction=tx", "nack_code=2", NULL), trimmed);
	assert_int_equal(sum_where(r->monitor, NULL, "direction=rx", "nack_code=1", NULL), 0);
	assert_int_equal(nic_sum(r, "qp_error"), 0);
	run_free(r);
}

/* Seed, Packet marking: with trimming off on the switch the same incast is
 * dropped instead, and recovers from SACK gaps and timers; it still
 * completes. */
static void test_incast_without_trimming_recovers(void **state)
{
	char topo[8192], w[1024];
	int n = 0;

	(void)state;
	incast(topo, sizeof(topo), "", "TrimmingEnabled = false", "");
	for (int h = 1; h < 8; h++)
		n += snprintf(w + n, sizeof(w) - (size_t)n, "%d,0ns,h%d,h0,512KiB,\n", h, h);
	struct run *r = run_sim(topo, w, NULL);
	assert_all_verified(r, 7);
	assert_int_equal(sum_where(r->sw, "trimmed", NULL), 0);
	assert_true(sum_where(r->sw, "drop_queue_full", "node=s0", "peer=h0", NULL) > 0);
	assert_int_equal(nic_sum(r, "rx_trimmed"), 0);
	assert_int_equal(nic_sum(r, "retx_nack"), 0);
	assert_true(nic_sum(r, "retx_timeout") + nic_sum(r, "retx_sack_gap") > 0);
	assert_int_equal(nic_sum(r, "qp_error"), 0);
	run_free(r);
}

/* docs/protocol.md §9: a packet trimmed on a spine-facing port (leaf0's uplinks
 * at 50 Gbps against a 400 Gbps sender) is re-marked trimmed, not
 * trimmed-last-hop, and draws a TRIMMED NACK (code 1). */
static void test_trim_on_spine_port_is_trimmed(void **state)
{
	char topo[8192];

	(void)state;
	leaf_spine(topo, sizeof(topo), "MonitorEnabled = true", "", "rate = 50Gbps", "");
	struct run *r = run_sim(topo, "1,0ns,h0,h2,1MiB,\n", NULL);
	assert_all_verified(r, 1);
	uint64_t up = 0;
	for (int s = 0; s < 4; s++) {
		char peer[32];
		snprintf(peer, sizeof(peer), "peer=spine%d", s);
		up += sum_where(r->sw, "trimmed", "node=leaf0", peer, NULL);
	}
	assert_true(up > 0);
	assert_int_equal(sum_where(r->sw, "trimmed", NULL), up);
	assert_int_equal(
	    sum_where(r->monitor, NULL, "node=h2", "direction=rx", "dscp=trimmed", NULL), up);
	assert_int_equal(
	    sum_where(r->monitor, NULL, "node=h2", "direction=tx", "nack_code=1", NULL), up);
	assert_int_equal(
	    sum_where(r->monitor, NULL, "node=h0", "direction=rx", "nack_code=1", NULL), up);
	assert_int_equal(sum_where(r->monitor, NULL, "nack_code=2", NULL), 0);
	run_free(r);
}

/* Seed, Packets on the wire; §12 rule 13: a NIC's link runs at the lower of
 * its DataRate and the switch's downlink rate, both ways.  h0 at 100 Gbps
 * on a 400 Gbps link: its 1 MiB (256 frames of 4,174 B) takes at least
 * 256 x 333.92 ns to send, and as long to receive through the switch's
 * port, which runs at 100 Gbps too (and trims what 400 Gbps h1 sends in
 * excess); h1 and h2 between themselves run at 400 Gbps. */
static void test_nic_rate_below_link_rate(void **state)
{
	char topo[8192];

	(void)state;
	incast(topo, sizeof(topo), "", "", "DataRate = 100Gbps");
	struct run *r =
	    run_sim(topo, "1,0ns,h0,h1,1MiB,\n2,0ns,h1,h0,1MiB,\n3,0ns,h2,h3,1MiB,\n", NULL);
	assert_all_verified(r, 3);
	uint64_t slow = 256 * 333920ULL, fast = 256 * 83480ULL;
	for (size_t m = 0; m < 2; m++) {
		uint64_t fct = strtoull(cell(r->messages, m, "fct_ps"), NULL, 10);
		assert_true(fct > slow && fct < slow + 30 * PS_PER_US);
	}
	uint64_t fct3 = strtoull(cell(r->messages, 2, "fct_ps"), NULL, 10);
	assert_true(fct3 > fast && fct3 < fast + 30 * PS_PER_US);
	assert_true(sum_where(r->sw, "trimmed", "peer=h0", NULL) > 0);
	assert_int_equal(sum_where(r->sw, "trimmed", "peer=h1", NULL), 0);
	run_free(r);
}

/* ---- faults ----------------------------------------------------------------------------- */

/* A leaf-spine link down for 200 us during a transfer: the packets on it
 * are lost and counted, the transfer completes after the link returns
 * (timers, retransmissions on new entropy) and no QP enters the error
 * state. */
static void test_link_down_200us(void **state)
{
	char topo[8192];

	(void)state;
	leaf_spine(topo, sizeof(topo), "", "", "", "down = 20us-220us");
	struct run *r = run_sim(topo, "1,0ns,h0,h2,4MiB,\n2,0ns,h3,h1,4MiB,\n", NULL);
	assert_all_verified(r, 2);
	uint64_t lost = sum_where(r->sw, "drop_link_down", "node=leaf0", "peer=spine0", NULL) +
			sum_where(r->sw, "drop_link_down", "node=spine0", "peer=leaf0", NULL);
	assert_true(lost > 0);
	assert_int_equal(sum_where(r->sw, "drop_link_down", NULL), lost);
	assert_true(nic_sum(r, "retx_timeout") > 0);
	for (size_t m = 0; m < r->messages->nrows; m++)
		assert_true(strtoull(cell(r->messages, m, "complete_ps"), NULL, 10) >
			    220 * PS_PER_US);
	assert_int_equal(nic_sum(r, "qp_error"), 0);
	run_free(r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_spraying_shares_follow_the_hash),
	    cmocka_unit_test(test_single_path_one_spine),
	    cmocka_unit_test(test_incast_trims_and_completes),
	    cmocka_unit_test(test_incast_without_trimming_recovers),
	    cmocka_unit_test(test_trim_on_spine_port_is_trimmed),
	    cmocka_unit_test(test_nic_rate_below_link_rate),
	    cmocka_unit_test(test_link_down_200us),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
