/* tests/test_nscc.c — MRC's congestion control, NSCC (docs/protocol.md §5).
 *
 * Two halves.  The rules one by one: an engine's group fed the SACKs,
 * losses and trim NACKs the hooks receive (nicd/cc.c), with the RTT sample,
 * acked bytes and mark each rule needs, and every cwnd checked against §5's
 * formula computed here from the attributes; the cause of each change is
 * read back from mrc-cc.csv.  Then scenarios in `mrcemu sim`, read from
 * mrc-cc.csv as a user reads it: a new group's window, a timeout, the
 * floor, CongestionControl = None, and an incast through a trimming switch
 * where quick adapt cuts the windows. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/config.h"
#include "lib/scenario.h"
#include "nicd/nic_impl.h"

#define US   PS_PER_US
#define PEER 0x0A000002u

/* ---- §5's numbers from the attributes ------------------------------------ */

struct nscc {
	double unit, a, b, fi, fi_scale, eta, alpha;
	ps_t target, base;
	uint64_t min, max;
};

/* docs/protocol.md §5: BDP = DataRate/8 x ConfigBaseRTT; scaling_a = BDP /
 * 150,000 B; scaling_b = target / 12 µs; fi = 5 unit a; fi_scale = 0.25 a;
 * η = 0.15 unit a; α = 4 unit a b / target; unit = MSS + 60. */
static struct nscc nscc_of(const struct nic_attrs *at)
{
	struct nscc n;
	double bdp = (double)((unsigned __int128)at->data_rate * at->config_base_rtt /
			      (8 * (unsigned __int128)PS_PER_S));

	n.unit = at->mss + 60;
	n.target = at->target_queue_delay;
	n.base = at->config_base_rtt;
	n.a = bdp / 150000.0;
	n.b = (double)n.target / (12.0 * US);
	n.fi = 5 * n.unit * n.a;
	n.fi_scale = 0.25 * n.a;
	n.eta = 0.15 * n.unit * n.a;
	n.alpha = 4 * n.unit * n.a * n.b / (double)n.target;
	n.min = at->min_cwnd;
	n.max = at->max_cwnd;
	return n;
}

/* ---- one group of one engine, fed through the hooks ------------------------ */

struct bench {
	struct events *q;
	struct pkt_pool pool;
	struct nic_attrs attrs;
	struct link_attrs link_attrs;
	struct link_end link;
	struct nic *nic;
	struct nic_group *g;
	struct nscc n;
	char dir[64];
	struct csv *cc;
};

static void no_transmit(void *ctx, struct pkt *p, ps_t arrival)
{
	(void)ctx, (void)p, (void)arrival;
	fail_msg("nothing is sent here");
}

/* Default attributes, then `set` (may be NULL) changes some; the group of
 * peer 10.0.0.2 is created at time 0. */
static struct bench *bench_new(void (*set)(struct nic_attrs *))
{
	static const uint8_t mac[2][6] = {{2, 0, 0, 0, 0, 1}, {2, 0, 0, 0, 0, 2}};
	struct bench *b = calloc(1, sizeof(*b));

	assert_non_null(b);
	b->q = events_new();
	assert_true(pkt_pool_init(&b->pool, 16, 0));
	config_nic_defaults(&b->attrs);
	b->attrs.ip = 0x0A000001;
	b->attrs.transport_stats = false;
	b->attrs.cc_trace = true;
	if (set)
		set(&b->attrs);
	config_nic_resolve(&b->attrs);
	b->link.rate = b->attrs.data_rate;
	b->link.delay = US;
	b->link.attrs = &b->link_attrs;
	snprintf(b->dir, sizeof(b->dir), "/tmp/mrcemu-nscc-XXXXXX");
	assert_non_null(mkdtemp(b->dir));
	b->cc = csv_open(b->dir, "mrc-cc.csv", NIC_CC_HEADER);
	assert_non_null(b->cc);
	struct nic_params prm = {.name = "h0",
				 .attrs = &b->attrs,
				 .link = &b->link,
				 .rate = b->attrs.data_rate,
				 .mac = mac[0],
				 .peer_mac = mac[1],
				 .seed = 1,
				 .events = b->q,
				 .pool = &b->pool,
				 .host = {.ctx = b, .transmit = no_transmit},
				 .records = {.cc = b->cc}};
	b->nic = nic_new(&prm);
	assert_non_null(b->nic);
	b->g = nic_group_get(b->nic, PEER);
	assert_non_null(b->g);
	b->n = nscc_of(&b->attrs);
	return b;
}

static void bench_free(struct bench *b)
{
	char cmd[128];

	nic_free(b->nic);
	csv_close(b->cc);
	events_free(b->q);
	pkt_pool_destroy(&b->pool);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", b->dir);
	assert_int_equal(system(cmd), 0);
	free(b);
}

/* The last row of mrc-cc.csv so far: its cwnd and cause; the number of rows. */
static size_t last_row(struct bench *b, uint64_t *cwnd, char cause[32])
{
	char path[128], line[256], last[256] = "";
	size_t rows = 0;
	FILE *f;

	fflush(b->cc->f);
	snprintf(path, sizeof(path), "%s/mrc-cc.csv", b->dir);
	f = fopen(path, "r");
	assert_non_null(f);
	while (fgets(line, sizeof(line), f)) {
		rows++;
		strcpy(last, line);
	}
	fclose(f);
	/* time_ps,node,remote_ip,cwnd,inflight,cause */
	unsigned long long t, w, infl;
	char node[16], ip[20];
	assert_int_equal(
	    sscanf(last, "%llu,%15[^,],%19[^,],%llu,%llu,%31[^\n]", &t, node, ip, &w, &infl, cause),
	    6);
	*cwnd = w;
	return rows - 1;
}

static void assert_last(struct bench *b, uint64_t cwnd, const char *cause)
{
	uint64_t w;
	char c[32];

	last_row(b, &w, c);
	assert_int_equal(w, cwnd);
	assert_string_equal(c, cause);
	assert_int_equal(b->g->cc.cwnd, cwnd);
}

static size_t rows(struct bench *b)
{
	uint64_t w;
	char c[32];
	return last_row(b, &w, c);
}

static void sack(struct bench *b, uint64_t acked, ps_t rtt, bool ecn, ps_t now)
{
	nic_cc_on_sack(b->nic, b->g, acked, rtt, ecn, now);
}

static void initial_200k(struct nic_attrs *a)
{
	a->initial_cwnd = 200000;
}

static void initial_2_units(struct nic_attrs *a)
{
	a->initial_cwnd = 2 * 4156;
}

static void cc_none(struct nic_attrs *a)
{
	a->cc = CC_NONE;
	a->initial_cwnd = 200000;
}

/* §5 at the defaults: 400 Gbps x 5 µs = 250,000 B, so scaling_a = 5/3;
 * TrimmingEnabled makes the target 0.75 x 5 µs = 3.75 µs; the unit is
 * 4,156 B; MaxCongestionWindow = 1.5 BDP in whole units = 90 x 4,156 =
 * 374,040 B.  A new group starts there with base_rtt = ConfigBaseRTT. */
static void test_new_group_at_defaults(void **state)
{
	struct bench *b = bench_new(NULL);

	(void)state;
	assert_int_equal(b->attrs.max_cwnd, 374040);
	assert_int_equal(b->attrs.min_cwnd, 4156);
	assert_int_equal(b->n.target, 3750 * PS_PER_NS);
	assert_true(fabs(b->n.a - 5.0 / 3.0) < 1e-12);
	assert_int_equal((uint64_t)b->n.eta, 1039);
	assert_int_equal(b->g->cc.base_rtt, 5 * US);
	assert_int_equal(rows(b), 1);
	assert_last(b, 374040, "new_group");
	bench_free(b);
}

/* §5: no mark, delay >= target: fair increase, inc_bytes += fi x acked;
 * fulfilled once more than 8 units have been acknowledged: cwnd +=
 * inc_bytes / cwnd, inc_bytes = 0 (no η within base_rtt). */
static void test_fair_increase_then_adjust(void **state)
{
	struct bench *b = bench_new(initial_200k);
	ps_t rtt = b->n.base + b->n.target + 1 * US; /* delay = target + 1 µs */
	double inc = 0;
	int k = 0;

	(void)state;
	/* 8 units = 33,248 B: the 9th SACK of 4,096 B passes it. */
	for (k = 1; k <= 8; k++) {
		sack(b, 4096, rtt, false, k * 100 * PS_PER_NS);
		inc += b->n.fi * 4096;
		assert_true(fabs(b->g->cc.inc_bytes - inc) <= 1e-6 * inc);
		assert_int_equal(b->g->cc.cwnd, 200000);
	}
	sack(b, 4096, rtt, false, 900 * PS_PER_NS);
	inc += b->n.fi * 4096;
	assert_last(b, (uint64_t)(200000 + inc / 200000), "adjust");
	assert_int_equal(b->g->cc.cwnd, 206383); /* 34,633.3 x 36,864 / 200,000 */
	assert_true(b->g->cc.inc_bytes == 0);
	assert_int_equal(b->g->cc.base_rtt, 5 * US);
	bench_free(b);
}

/* §5: the adjustment also comes once per base_rtt, with η = 0.15 unit a
 * (1,039 B at the defaults) on top. */
static void test_eta_once_per_base_rtt(void **state)
{
	struct bench *b = bench_new(initial_200k);
	ps_t rtt = b->n.base + b->n.target; /* fair increase: delay = target */

	(void)state;
	sack(b, 256, rtt, false, 1 * US);
	assert_int_equal(b->g->cc.cwnd, 200000);
	/* More than base_rtt (5 µs) after the group's start at 0. */
	sack(b, 256, rtt, false, 5 * US + 1);
	double inc = b->n.fi * 512;
	uint64_t adj = (uint64_t)(200000 + inc / 200000);
	assert_int_equal(adj, 200088);
	assert_last(b, adj + (uint64_t)b->n.eta, "eta");
	assert_int_equal(b->g->cc.cwnd, 200088 + 1039);
	/* Within base_rtt of that: no η, and 256 B is far below 8 units. */
	sack(b, 256, rtt, false, 9 * US);
	assert_int_equal(b->g->cc.cwnd, 201127);
	bench_free(b);
}

/* §5: no mark, delay < target and not ≈ 0: proportional increase,
 * inc_bytes += α x acked x (target - delay). */
static void test_proportional_increase(void **state)
{
	struct bench *b = bench_new(initial_200k);
	ps_t delay = 1500 * PS_PER_NS, rtt = b->n.base + delay;
	double inc = 0;

	(void)state;
	for (int k = 1; k <= 9; k++) {
		sack(b, 4096, rtt, false, k * 100 * PS_PER_NS);
		inc += b->n.alpha * 4096 * (double)(b->n.target - delay);
		if (k < 9)
			assert_true(fabs(b->g->cc.inc_bytes - inc) <= 1e-6 * inc);
	}
	assert_last(b, (uint64_t)(200000 + inc / 200000), "adjust");
	assert_int_equal(b->g->cc.cwnd, 200000 + 957); /* 9 x 2.128e7 / 2e5 */
	bench_free(b);
}

/* §5: fast increase, cwnd += fi_scale x acked, once the delay has stayed
 * ≈ 0 (under 1 µs) over a whole window of acknowledged bytes, and on each
 * SACK after that until the delay rises. */
static void test_fast_increase(void **state)
{
	struct bench *b = bench_new(initial_2_units);
	ps_t rtt = b->n.base; /* delay 0 */
	uint64_t w = 8312, step = (uint64_t)(b->n.fi_scale * 4096);

	(void)state;
	assert_int_equal(step, 1706);
	sack(b, 4096, rtt, false, 100 * PS_PER_NS);
	sack(b, 4096, rtt, false, 200 * PS_PER_NS); /* 8,192 B < a window */
	assert_int_equal(b->g->cc.cwnd, w);
	assert_int_equal(rows(b), 1);
	sack(b, 4096, rtt, false, 300 * PS_PER_NS); /* 12,288 B >= 8,312 */
	assert_last(b, w + step, "fast_increase");
	sack(b, 4096, rtt + 999 * PS_PER_NS, false, 400 * PS_PER_NS);
	assert_last(b, w + 2 * step, "fast_increase");
	/* The delay rises to 1 µs: proportional increase again, and the count
	 * of a whole window starts over. */
	sack(b, 4096, rtt + US, false, 500 * PS_PER_NS);
	assert_int_equal(b->g->cc.cwnd, w + 2 * step);
	sack(b, 4096, rtt, false, 600 * PS_PER_NS);
	assert_int_equal(b->g->cc.cwnd, w + 2 * step);
	assert_int_equal(b->g->cc.fi_count, 4096);
	bench_free(b);
}

/* §5: a mark with delay >= target decreases cwnd x= max(1 - γ (avg_delay -
 * target) / avg_delay, max_md_jump), at most once per base_rtt; avg_delay
 * is the EWMA (weight 0.0125) of the delays. */
static void test_multiplicative_decrease(void **state)
{
	struct bench *b = bench_new(initial_200k);
	ps_t delay = 20 * US, rtt = b->n.base + delay, t = 100 * PS_PER_NS;
	double avg = 0, f;
	uint64_t w = 200000;

	(void)state;
	/* While avg_delay is below target a marked SACK changes nothing. */
	sack(b, 0, rtt, true, t);
	avg = 0.0125 * (double)delay + (1 - 0.0125) * avg;
	assert_true(avg < (double)b->n.target);
	assert_int_equal(b->g->cc.cwnd, w);
	for (int k = 0; k < 20; k++) {
		sack(b, 0, rtt, false, t);
		avg = 0.0125 * (double)delay + (1 - 0.0125) * avg;
	}
	assert_true(fabs(b->g->cc.avg_delay - avg) < 1e-3);
	sack(b, 0, rtt, true, t);
	avg = 0.0125 * (double)delay + (1 - 0.0125) * avg;
	assert_true(avg > (double)b->n.target);
	f = 1 - 0.8 * (avg - (double)b->n.target) / avg;
	assert_true(f > 0.5 && f < 1);
	w = (uint64_t)((double)w * f);
	assert_last(b, w, "multiplicative_decrease");
	/* Again within base_rtt of it: no decrease (but base_rtt has passed
	 * since the group began: η); just after base_rtt: once more. */
	sack(b, 0, rtt, true, t + 5 * US);
	avg = 0.0125 * (double)delay + (1 - 0.0125) * avg;
	w += 1039;
	assert_last(b, w, "eta");
	sack(b, 0, rtt, true, t + 5 * US + 1);
	avg = 0.0125 * (double)delay + (1 - 0.0125) * avg;
	f = 1 - 0.8 * (avg - (double)b->n.target) / avg;
	w = (uint64_t)((double)w * f);
	assert_last(b, w, "multiplicative_decrease");
	bench_free(b);
}

/* §5: max_md_jump = 0.5 bounds one decrease; and the floor holds. */
static void test_decrease_at_most_half(void **state)
{
	struct bench *b = bench_new(initial_200k);
	ps_t rtt = b->n.base + 1000 * US;

	(void)state;
	for (int k = 0; k < 200; k++)
		sack(b, 0, rtt, false, 100);
	/* avg_delay ~ 920 µs: 1 - 0.8 (1 - 3.75/920) ~ 0.2, so 0.5 */
	sack(b, 0, rtt, true, 100);
	assert_last(b, 100000, "multiplicative_decrease");
	/* Each base_rtt: halve (at least Min), then η. */
	uint64_t w = 100000;
	for (int k = 1; k <= 6; k++) {
		sack(b, 0, rtt, true, 100 + k * 6 * US);
		w = w / 2 > 4156 ? w / 2 : 4156;
		assert_int_equal(b->nic->cwnd_min, w);
		w += 1039;
		assert_last(b, w, "eta");
	}
	assert_int_equal(b->nic->cwnd_min, 4156); /* 7,289 / 2 floored at Min */
	bench_free(b);
}

/* §5: a mark with delay < target changes nothing; and a SACK without an RTT
 * sample counts at the average delay. */
static void test_mark_below_target_nothing(void **state)
{
	struct bench *b = bench_new(initial_200k);

	(void)state;
	sack(b, 4096, b->n.base + 1 * US, true, 100);
	sack(b, 4096, b->n.base, true, 200);
	assert_int_equal(b->g->cc.cwnd, 200000);
	assert_true(b->g->cc.inc_bytes == 0);
	assert_int_equal(rows(b), 1);
	/* No sample: delay = avg_delay (about 12 ns here): under 1 µs, but not
	 * yet over a whole window, so proportional. */
	double avg = b->g->cc.avg_delay;
	sack(b, 4096, 0, false, 300);
	assert_true(fabs(b->g->cc.avg_delay - avg) < 1e-9);
	assert_true(fabs(b->g->cc.inc_bytes - b->n.alpha * 4096 * ((double)b->n.target - avg)) < 1);
	bench_free(b);
}

/* §5: base_rtt = min(base_rtt, sample) and delay = sample - base_rtt. */
static void test_base_rtt_is_the_least_sample(void **state)
{
	struct bench *b = bench_new(initial_200k);

	(void)state;
	sack(b, 0, 2100 * PS_PER_NS, false, 100);
	assert_int_equal(b->g->cc.base_rtt, 2100 * PS_PER_NS);
	sack(b, 0, 4100 * PS_PER_NS, false, 200);
	assert_int_equal(b->g->cc.base_rtt, 2100 * PS_PER_NS);
	assert_true(fabs(b->g->cc.avg_delay - 0.0125 * 2000 * PS_PER_NS) < 1e-6);
	nic_cc_on_trim_nack(b->nic, b->g, 1900 * PS_PER_NS, 300);
	assert_int_equal(b->g->cc.base_rtt, 1900 * PS_PER_NS);
	bench_free(b);
}

/* §5 loss reactions: a SACK-gap loss or a timeout takes the packet's
 * nominal size off cwnd, down to Min. */
static void test_loss_and_timeout(void **state)
{
	struct bench *b = bench_new(initial_2_units);

	(void)state;
	nic_cc_on_loss(b->nic, b->g, 4156, 10);
	assert_last(b, 8312 - 4156, "loss");
	nic_cc_on_timeout(b->nic, b->g, 4156, 20);
	assert_int_equal(b->g->cc.cwnd, 4156);
	assert_int_equal(rows(b), 2); /* at the floor: no change, no row */
	bench_free(b);
	b = bench_new(initial_200k);
	nic_cc_on_timeout(b->nic, b->g, 4156, 20);
	assert_last(b, 200000 - 4156, "timeout");
	nic_cc_on_loss(b->nic, b->g, 1000 + 60, 30);
	assert_last(b, 200000 - 4156 - 1060, "loss");
	bench_free(b);
}

static void no_qa_gate(struct nic_attrs *a)
{
	a->qa_gate = false;
}

/* QuickAdaptGate = false (htsim_uec's default, set by `mrcemu import
 * htsim`; issue 9, the incasts against htsim): a period with a trim ends in
 * quick adapt whatever it acknowledged.  The default's last case above (12
 * x 4,096 = 49,152 B, above MaxCongestionWindow >> 3) now adapts, to the
 * 49,152 B acknowledged. */
static void test_quick_adapt_ungated(void **state)
{
	struct bench *b = bench_new(no_qa_gate);
	ps_t period = b->n.base + b->n.target;
	ps_t t0 = 3 * US, rtt = b->n.base + b->n.target + US;

	(void)state;
	nic_cc_on_trim_nack(b->nic, b->g, 0, t0);
	for (int k = 1; k <= 12; k++)
		sack(b, 4096, rtt, false, t0 + k * 500 * PS_PER_NS);
	assert_int_equal(b->g->cc.cwnd, 374040);
	sack(b, 4096, rtt, false, t0 + period + 1);
	assert_last(b, 49152, "quick_adapt");
	bench_free(b);
}

/* §5 quick adapt: a trim NACK, at most once per base_rtt + target: if the
 * bytes acknowledged over the last period are fewer than
 * MaxCongestionWindow >> 3 (46,755 B), cwnd = max(achieved_bytes, Min). */
static void test_quick_adapt(void **state)
{
	struct bench *b = bench_new(NULL);
	ps_t period = b->n.base + b->n.target; /* 8.75 µs */
	ps_t t0 = 3 * US, rtt = b->n.base + b->n.target + US;

	(void)state;
	assert_int_equal(b->attrs.max_cwnd >> 3, 46755);
	/* The first feedback starts the periods; this NACK asks for quick
	 * adapt, judged when its period ends. */
	nic_cc_on_trim_nack(b->nic, b->g, 0, t0);
	for (int k = 1; k <= 10; k++)
		sack(b, 4096, rtt, false, t0 + k * 800 * PS_PER_NS);
	assert_int_equal(b->g->cc.cwnd, 374040);
	/* The period's end: 40,960 B were acknowledged in it. */
	sack(b, 4096, rtt, false, t0 + period + 1);
	assert_last(b, 40960, "quick_adapt");
	/* Another trim at once: the new period (from t0 + period + 1) is
	 * judged at its end; 4,096 B acknowledged, so cwnd = 4,096 -> Min. */
	nic_cc_on_trim_nack(b->nic, b->g, 0, t0 + period + 2);
	assert_int_equal(b->g->cc.cwnd, 40960);
	nic_cc_on_trim_nack(b->nic, b->g, 0, t0 + 2 * period + 2);
	assert_last(b, 4156, "quick_adapt");
	/* Enough bytes in a period: no quick adapt. */
	for (int k = 1; k <= 12; k++)
		sack(b, 4096, rtt, false, t0 + 2 * period + 2 + k * 500 * PS_PER_NS);
	uint64_t w = b->g->cc.cwnd;
	nic_cc_on_trim_nack(b->nic, b->g, 0, t0 + 3 * period + 3);
	assert_int_equal(b->g->cc.cwnd, w);
	bench_free(b);
}

/* §5: increases clamp at MaxCongestionWindow; a rule cut by the bound is
 * recorded as a clamp, and at the bound nothing changes. */
static void test_clamp_at_max(void **state)
{
	struct bench *b = bench_new(NULL);

	(void)state;
	nic_cc_on_timeout(b->nic, b->g, 4156, 10);
	assert_last(b, 374040 - 4156, "timeout");
	for (int k = 1; k <= 100; k++)
		sack(b, 4096, b->n.base, false, k * 100);
	assert_last(b, 374040, "clamp");
	size_t n = rows(b);
	for (int k = 101; k <= 130; k++)
		sack(b, 4096, b->n.base, false, k * 100 + 20 * US);
	assert_int_equal(rows(b), n);
	assert_int_equal(b->g->cc.cwnd, 374040);
	bench_free(b);
}

/* §5: CongestionControl = None keeps cwnd fixed at MaxCongestionWindow. */
static void test_none_is_fixed(void **state)
{
	struct bench *b = bench_new(cc_none);

	(void)state;
	assert_last(b, 374040, "new_group");
	for (int k = 1; k <= 40; k++)
		sack(b, 4096, b->n.base + (k % 2 ? 0 : 30 * US), k % 3 == 0, k * US);
	nic_cc_on_loss(b->nic, b->g, 4156, 50 * US);
	nic_cc_on_timeout(b->nic, b->g, 4156, 51 * US);
	nic_cc_on_trim_nack(b->nic, b->g, 0, 52 * US);
	nic_cc_on_trim_nack(b->nic, b->g, 0, 70 * US);
	assert_int_equal(b->g->cc.cwnd, 374040);
	assert_int_equal(rows(b), 1);
	bench_free(b);
}

/* ---- scenarios: mrc-cc.csv as a user reads it ------------------------------- */

static const struct table *cc(struct scenario *s)
{
	const struct table *t = scenario_table(s, "mrc-cc.csv");
	assert_non_null(t);
	return t;
}

/* Every row within [Min, Max]. */
static void assert_bounds(const struct table *t, uint64_t min, uint64_t max)
{
	for (size_t r = 0; r < t->nrows; r++) {
		assert_in_range(table_u64(t, r, "cwnd"), min, max);
	}
}

/* The row before r of the same node and peer, or SIZE_MAX. */
static size_t prev_row(const struct table *t, size_t r)
{
	for (size_t p = r; p-- > 0;)
		if (!strcmp(table_cell(t, p, "node"), table_cell(t, r, "node")) &&
		    !strcmp(table_cell(t, p, "remote_ip"), table_cell(t, r, "remote_ip")))
			return p;
	return SIZE_MAX;
}

static size_t count_cause(const struct table *t, const char *cause)
{
	size_t n = 0;
	for (size_t r = 0; r < t->nrows; r++)
		n += !strcmp(table_cell(t, r, "cause"), cause);
	return n;
}

/* docs/protocol.md §5: a new group starts at InitialCongestionWindow, by default
 * MaxCongestionWindow = 1.5 x BDP in whole units of MSS + 60 (374,040 B at
 * the defaults); a transfer whose window never binds changes nothing. */
static void test_scenario_new_group(void **state)
{
	struct scenario *s = scenario_b2b(NULL, NULL, "1,0ns,h0,h1,4MiB,\n");
	const struct table *t;
	double bdp = 400e9 / 8 * 5e-6;
	uint64_t units = (uint64_t)llround(1.5 * bdp / 4156);

	(void)state;
	assert_int_equal(scenario_run(s), 0);
	t = cc(s);
	assert_int_equal(units * 4156, 374040);
	assert_true(t->nrows >= 2);
	for (size_t r = 0; r < t->nrows; r++) {
		assert_string_equal(table_cell(t, r, "cause"), "new_group");
		assert_int_equal(table_u64(t, r, "cwnd"), units * 4156);
	}
	scenario_free(s);
}

/* §5 loss reactions: a timeout takes the packet's nominal size (4,096 + 60
 * = 4,156 B) off cwnd.  The lost packet is PSN 10 of a 1 MiB message, far
 * fewer than 513 packets before the end, so its timer finds it. */
static void test_scenario_timeout(void **state)
{
	struct scenario *s =
	    scenario_b2b(NULL, "drop = h0>h1 data psn=10 tx=1", "1,0ns,h0,h1,1MiB,\n");
	const struct table *t;
	size_t found = 0;

	(void)state;
	assert_int_equal(scenario_run(s), 0);
	assert_int_equal(scenario_counter(s, "h0", "retx_timeout"), 1);
	t = cc(s);
	for (size_t r = 0; r < t->nrows; r++) {
		if (strcmp(table_cell(t, r, "cause"), "timeout"))
			continue;
		size_t p = prev_row(t, r);
		assert_true(p != SIZE_MAX);
		assert_string_equal(table_cell(t, r, "node"), "h0");
		assert_int_equal(table_u64(t, p, "cwnd") - table_u64(t, r, "cwnd"), 4156);
		assert_int_equal(table_u64(t, r, "time_ps") % US, 0); /* §12 rule 7 */
		found++;
	}
	assert_int_equal(found, 1);
	assert_bounds(t, 4156, 374040);
	scenario_free(s);
}

/* §5: the floor is MinCongestionWindow, one unit of MSS + 60 = 4,156 B: a
 * window of at most two units loses three packets to timeouts and stops
 * there. */
static void test_scenario_floor(void **state)
{
	struct scenario *s = scenario_b2b("MaxCongestionWindow = 8312",
					  "drop = h0>h1 data psn=1 tx=1, h0>h1 data psn=2 tx=1, "
					  "h0>h1 data psn=3 tx=1",
					  "1,0ns,h0,h1,64KiB,\n");
	const struct table *t;
	bool at_floor = false;

	(void)state;
	assert_int_equal(scenario_run(s), 0);
	assert_int_equal(scenario_counter(s, "h0", "retx_timeout"), 3);
	t = cc(s);
	assert_bounds(t, 4156, 374040);
	for (size_t r = 0; r < t->nrows; r++)
		if (!strcmp(table_cell(t, r, "cause"), "timeout") &&
		    table_u64(t, r, "cwnd") == 4156)
			at_floor = true;
	assert_true(at_floor);
	assert_int_equal(scenario_table(s, "messages.csv")->nrows, 1);
	scenario_free(s);
}

/* §5: CongestionControl = None: cwnd stays at MaxCongestionWindow whatever
 * happens, so mrc-cc.csv holds only the new groups. */
static void test_scenario_none(void **state)
{
	struct scenario *s = scenario_b2b("CongestionControl = None",
					  "drop = h0>h1 data psn=10 tx=1", "1,0ns,h0,h1,1MiB,\n");
	const struct table *t;

	(void)state;
	assert_int_equal(scenario_run(s), 0);
	assert_int_equal(scenario_counter(s, "h0", "retx_timeout"), 1);
	t = cc(s);
	for (size_t r = 0; r < t->nrows; r++) {
		assert_string_equal(table_cell(t, r, "cause"), "new_group");
		assert_int_equal(table_u64(t, r, "cwnd"), 374040);
	}
	scenario_free(s);
}

/* Seven hosts send 1 MiB each to h0 through one switch (configs/incast-8.ini):
 * the egress queue towards h0 overflows and the switch trims. */
static struct scenario *incast(const char *nic_attrs)
{
	struct scenario *s = calloc(1, sizeof(*s));
	char path[400], text[4096];
	int n;
	FILE *f;

	snprintf(s->dir, sizeof(s->dir), "/tmp/mrcemu-nscc-incast-XXXXXX");
	assert_non_null(mkdtemp(s->dir));
	snprintf(s->out, sizeof(s->out), "%s/out", s->dir);
	n = snprintf(text, sizeof(text),
		     "[emulation]\nname = incast\nseed = 1\n\n[nic]\nEnableCcTrace = true\n%s\n\n"
		     "[switch s0]\n",
		     nic_attrs);
	for (int h = 0; h < 8; h++)
		n += snprintf(text + n, sizeof(text) - (size_t)n,
			      "[nic h%d]\nip = 10.0.0.%d\n[link h%d s0]\n", h, h + 1, h);
	snprintf(text + n, sizeof(text) - (size_t)n, "\n[workload]\nfile = w.csv\n");
	snprintf(path, sizeof(path), "%s/topo.ini", s->dir);
	assert_non_null(f = fopen(path, "w"));
	fputs(text, f);
	fclose(f);
	snprintf(path, sizeof(path), "%s/w.csv", s->dir);
	assert_non_null(f = fopen(path, "w"));
	fputs("id,at,src,dst,bytes,after\n", f);
	for (int h = 1; h < 8; h++)
		fprintf(f, "%d,0ns,h%d,h0,1MiB,\n", h, h);
	fclose(f);
	return s;
}

/* §5 in an incast: trim NACKs run quick adapt, which sets cwnd to
 * max(achieved_bytes, Min) where achieved_bytes (received-bytes deltas,
 * x256) fell below MaxCongestionWindow >> 3; η adds 0.15 unit a = 1,039 B
 * unless clamped; a fast increase adds fi_scale x acked, acked a multiple
 * of 256 B; a decrease keeps at least max_md_jump = half.  With
 * CongestionControl = None the same incast is trimmed more. */
static void test_scenario_incast(void **state)
{
	struct scenario *s = incast(""), *none = incast("CongestionControl = None");
	const struct table *t;
	const double a = 5.0 / 3.0;

	(void)state;
	assert_int_equal(scenario_run(s), 0);
	assert_int_equal(s->r.o.completed, 7);
	assert_true(s->r.o.trims > 0);
	t = cc(s);
	assert_bounds(t, 4156, 374040);
	assert_true(count_cause(t, "quick_adapt") > 0);
	assert_true(count_cause(t, "eta") > 0);
	for (size_t r = 0; r < t->nrows; r++) {
		const char *c = table_cell(t, r, "cause");
		uint64_t w = table_u64(t, r, "cwnd");
		size_t p = prev_row(t, r);
		uint64_t before = p == SIZE_MAX ? 0 : table_u64(t, p, "cwnd");

		if (!strcmp(c, "quick_adapt")) {
			assert_true(w < 374040 >> 3);
			assert_true(w == 4156 || w % 256 == 0);
		} else if (!strcmp(c, "eta")) {
			assert_int_equal(w - before, 1039);
		} else if (!strcmp(c, "fast_increase")) {
			uint64_t k = (uint64_t)llround((double)(w - before) / (0.25 * a * 256));
			assert_int_equal(w,
					 (uint64_t)((double)before + 0.25 * a * (double)(k * 256)));
		} else if (!strcmp(c, "multiplicative_decrease")) {
			assert_true(w < before && 2 * w >= before - 1);
		} else if (!strcmp(c, "adjust") || !strcmp(c, "clamp")) {
			assert_true(w > before);
		} else {
			assert_string_equal(c, "new_group");
		}
	}
	assert_int_equal(scenario_run(none), 0);
	assert_int_equal(none->r.o.completed, 7);
	assert_int_equal(count_cause(cc(none), "new_group"), cc(none)->nrows);
	assert_true(s->r.o.trims < none->r.o.trims);
	scenario_free(s);
	scenario_free(none);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_new_group_at_defaults),
	    cmocka_unit_test(test_fair_increase_then_adjust),
	    cmocka_unit_test(test_eta_once_per_base_rtt),
	    cmocka_unit_test(test_proportional_increase),
	    cmocka_unit_test(test_fast_increase),
	    cmocka_unit_test(test_multiplicative_decrease),
	    cmocka_unit_test(test_decrease_at_most_half),
	    cmocka_unit_test(test_mark_below_target_nothing),
	    cmocka_unit_test(test_base_rtt_is_the_least_sample),
	    cmocka_unit_test(test_loss_and_timeout),
	    cmocka_unit_test(test_quick_adapt),
	    cmocka_unit_test(test_quick_adapt_ungated),
	    cmocka_unit_test(test_clamp_at_max),
	    cmocka_unit_test(test_none_is_fixed),
	    cmocka_unit_test(test_scenario_new_group),
	    cmocka_unit_test(test_scenario_timeout),
	    cmocka_unit_test(test_scenario_floor),
	    cmocka_unit_test(test_scenario_none),
	    cmocka_unit_test(test_scenario_incast),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
