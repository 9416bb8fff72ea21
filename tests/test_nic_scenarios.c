/* tests/test_nic_scenarios.c — the NIC data path of the seed, scenario by
 * scenario, in deterministic simulation: two NICs back to back at 400 Gbps
 * with 1 µs links, the records read as a user reads them.  The simulation
 * is exact, so times are checked to the picosecond where the seed and
 * docs/protocol.md give the rule. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "core/time.h"
#include "lib/scenario.h"

#define US	   PS_PER_US
#define NS	   PS_PER_NS
#define SER(bytes) time_serialize((bytes), 400000000000ULL)
#define DATA_WIRE  4174 /* seed, worked example: 4,096 + 78 */

/* docs/protocol.md §7 at the defaults but for the lane count: one TLP of
 * ReadRequestSize for the request, ceil(B/512) TLPs for the completion,
 * each with 33.8 bytes of overhead, at lanes x 32 GT/s x 128/130 / 8. */
static ps_t pcie_ps(double bytes, unsigned tlps, unsigned lanes)
{
	double bytes_per_ps = lanes * 32e9 * 128.0 / 130.0 / 8.0 / 1e12;
	return (ps_t)llround((bytes + tlps * 33.8) / bytes_per_ps);
}

static ps_t ceil_us(ps_t t)
{
	return (t + US - 1) / US * US;
}

static const struct table *monitor(struct scenario *s)
{
	return scenario_table(s, "mrc-monitor.csv");
}

static const struct table *messages(struct scenario *s)
{
	return scenario_table(s, "messages.csv");
}

static uint64_t complete_ps(struct scenario *s, size_t row)
{
	return table_u64(messages(s), row, "complete_ps");
}

/* ---- the 4 MiB transfer -------------------------------------------------- */

/* Seed and issue: 1,024 data packets of 4,174 bytes, one SACK per packet, a
 * cumulative ACK for every packet that asked for one, and a completion at
 * 15 ns + 70.843 ns (PCIe fetch) + 1,024 x 83.48 ns + 1 µs + 1.24 ns (the
 * ACK) + 1 µs = 87,570.60 ns. */
static void test_4mib_line_rate(void **state)
{
	struct scenario *s = scenario_b2b(NULL, NULL, "1,0ns,h0,h1,4MiB,\n");
	const struct table *m;
	ps_t fetch = pcie_ps(64, 1, 16) + pcie_ps(4096, 8, 16);
	ps_t expect = 15 * NS + fetch + 1024 * SER(DATA_WIRE) + US + SER(62) + US;
	size_t ar = 0;

	(void)state;
	assert_int_equal(scenario_run(s), 0);
	assert_int_equal(fetch, 70843); /* seed: 1.55 + 69.29 ns */
	assert_int_equal(SER(DATA_WIRE), 83480);
	assert_true(llabs((long long)complete_ps(s, 0) - 87570600LL) <= 1000);
	assert_int_equal(complete_ps(s, 0), expect);
	m = monitor(s);
	assert_int_equal(monitor_count(m, "h0", "tx", "DATA"), 1024);
	for (size_t r = 0; r < m->nrows; r++) {
		if (!monitor_is(m, r, "h0", "tx", "DATA"))
			continue;
		assert_int_equal(table_u64(m, r, "wire_bytes"), DATA_WIRE);
		ar += table_u64(m, r, "ar_bit");
	}
	assert_int_equal(monitor_count(m, "h1", "tx", "SACK"), 1024);
	assert_int_equal(monitor_count(m, "h1", "tx", "ACK"), ar);
	assert_int_equal(scenario_counter(s, "h1", "tx_ack"),
			 scenario_counter(s, "h0", "tx_ar_pkts"));
	assert_string_equal(table_cell(messages(s), 0, "verified"), "true");
	assert_int_equal(table_u64(messages(s), 0, "retransmissions"), 0);
	scenario_free(s);
}

/* Issue 9 item 8 (ARCHITECTURE.md, One end): the run ends at T_end, the
 * last completion plus the drain, when nothing is in flight any more, so
 * every frame sent is received and counted.  The 4 MiB transfer's last data
 * packet draws its cumulative ACK, which completes the message, and then
 * its SACK: T_end is that SACK's arrival, one 94-byte frame later, and the
 * sender has received all 1,024 SACKs (the first version stopped at the
 * completion, with 1,023). */
static void test_run_drains_the_links(void **state)
{
	struct scenario *s = scenario_b2b(NULL, NULL, "1,0ns,h0,h1,4MiB,\n");
	const struct table *st;

	(void)state;
	assert_int_equal(scenario_run(s), 0);
	assert_int_equal(scenario_counter(s, "h1", "tx_sack"), 1024);
	assert_int_equal(scenario_counter(s, "h0", "rx_sack"), 1024);
	assert_int_equal(scenario_counter(s, "h0", "rx_ack"), scenario_counter(s, "h1", "tx_ack"));
	assert_int_equal(s->r.end, complete_ps(s, 0) + SER(94));
	st = scenario_table(s, "mrc-transport-stats.csv");
	assert_int_equal(table_u64(st, st->nrows - 1, "time_ps"), s->r.end);
	scenario_free(s);
}

/* Seed: "a message whose packets arrive in order, are never retransmitted,
 * and are never sent while the window is nearly full draws one cumulative
 * ACK, for its last packet." */
static void test_window_never_binds_one_ack(void **state)
{
	struct scenario *s = scenario_b2b("CongestionControl = None\nMaxCongestionWindow = 8MiB",
					  NULL, "1,0ns,h0,h1,4MiB,\n");
	const struct table *m;
	size_t r;

	(void)state;
	assert_int_equal(scenario_run(s), 0);
	m = monitor(s);
	assert_int_equal(monitor_count(m, "h1", "tx", "ACK"), 1);
	assert_int_equal(monitor_count(m, "h1", "tx", "SACK"), 1024);
	r = monitor_find_tx(m, "h0", 1023, 1);
	assert_int_equal(table_u64(m, r, "ar_bit"), 1);
	assert_int_equal(complete_ps(s, 0), 87570603);
	scenario_free(s);
}

/* Issue 3: with PcieLanes = 4 the fetch, not the wire, sets the pace; the
 * host-to-NIC direction carries one completion after another. */
static void test_narrow_pcie_sets_the_pace(void **state)
{
	struct scenario *s = scenario_b2b("PcieLanes = 4", NULL, "1,0ns,h0,h1,4MiB,\n");
	ps_t req = pcie_ps(64, 1, 4), cpl = pcie_ps(4096, 8, 4);
	ps_t expect = 15 * NS + req + 1024 * cpl + SER(DATA_WIRE) + US + SER(62) + US;

	(void)state;
	assert_true(cpl > SER(DATA_WIRE));
	assert_int_equal(scenario_run(s), 0);
	assert_int_equal(complete_ps(s, 0), expect);
	scenario_free(s);
}

/* Issue 9 item 7, §12 rule 20: a read request is one TLP whatever its
 * size; only completions are cut at PcieMaxPayload.  A 4 KiB message with
 * 1,024-byte read requests completes at 15 ns + one 1,024-byte TLP + the
 * 4,096-byte completion (8 TLPs) + the packet + 1 µs + the ACK + 1 µs (the
 * first version charged the request as 2 TLPs). */
static void test_read_request_is_one_tlp(void **state)
{
	struct scenario *s = scenario_b2b("ReadRequestSize = 1024", NULL, "1,0ns,h0,h1,4KiB,\n");
	ps_t expect = 15 * NS + pcie_ps(1024, 1, 16) + pcie_ps(4096, 8, 16) + SER(DATA_WIRE) + US +
		      SER(62) + US;

	(void)state;
	assert_int_equal(scenario_run(s), 0);
	assert_int_equal(complete_ps(s, 0), expect);
	scenario_free(s);
}

/* Issue 9 item 3, §12 rule 19: a QP joins its group's turn order at its
 * doorbell, and the group sends one packet per turn from the next QP in
 * that order: two messages posted to one peer at 0 ns alternate from their
 * first packets (m1 P0, m2 P0, m1 P1, ...) and complete within one packet
 * time of each other (the first version sent message 1's first 91 packets
 * first: completions 37.2 and 44.8 µs). */
static void test_messages_posted_together_take_turns(void **state)
{
	struct scenario *s = scenario_b2b(NULL, NULL, "1,0ns,h0,h1,1MiB,\n2,0ns,h0,h1,1MiB,\n");
	const struct table *m;
	size_t n = 0;

	(void)state;
	assert_int_equal(scenario_run(s), 0);
	m = monitor(s);
	for (size_t r = 0; r < m->nrows && n < 512; r++) {
		if (!monitor_is(m, r, "h0", "tx", "DATA"))
			continue;
		assert_int_equal(table_u64(m, r, "local_qpn"), 0x100 + n % 2);
		assert_int_equal(table_u64(m, r, "bth_psn"), n / 2);
		n++;
	}
	assert_int_equal(n, 512);
	assert_true(complete_ps(s, 1) > complete_ps(s, 0));
	assert_true(complete_ps(s, 1) - complete_ps(s, 0) <= SER(DATA_WIRE));
	scenario_free(s);
}

/* Issue 9 item 4, §12 rule 18: a pass the egress pool blocked is retried
 * only on the seed's triggers.  h0's pool holds one packet and no ACK or
 * SACK reaches it, so each packet is fetched 15 ns after the previous one
 * left (the pool drained to half or less): packet k leaves at 15 ns +
 * fetch + k x (fetch + packet + 15 ns) + packet.  h1's data packets, which
 * h0's full ingress pool drops, arrive throughout and must not start a
 * pass early (the first version retried on every frame, and sent 57 of
 * the 64 packets early here). */
static void test_blocked_pass_retried_only_on_triggers(void **state)
{
	struct scenario *s = scenario_b2b_nodes(
	    "ExponentialRetryCount = 0", "EgressDataPoolSize = 4174\nIngressDataPoolSize = 1", NULL,
	    "drop = h1>h0 ack count=all, h1>h0 sack count=all",
	    "1,0ns,h0,h1,256KiB,\n2,20ns,h1,h0,256KiB,\n");
	ps_t fetch = pcie_ps(64, 1, 16) + pcie_ps(4096, 8, 16);
	const struct table *m;
	uint64_t k = 0;

	(void)state;
	assert_int_equal(scenario_run(s), 1);
	assert_true(scenario_counter(s, "h0", "rx_drop_ingress_full") >= 64);
	m = monitor(s);
	for (size_t r = 0; r < m->nrows; r++) {
		if (!monitor_is(m, r, "h0", "tx", "DATA") || table_u64(m, r, "tx_count") != 1)
			continue;
		assert_int_equal(table_u64(m, r, "time_ps"),
				 15 * NS + fetch + k * (fetch + SER(DATA_WIRE) + 15 * NS) +
				     SER(DATA_WIRE));
		k++;
	}
	assert_int_equal(k, 64);
	scenario_free(s);
}

/* ---- the PSN window ------------------------------------------------------ */

/* Seed, Segmentation: at most MaxPSNRange packets beyond the cumulative PSN.
 * PSN 3 lost, SACK gaps blind (1,023): the sender reaches PSN 3 + 1,023 =
 * 1,026 and waits there until the timer retransmits PSN 3. */
static void test_psn_window_binds(void **state)
{
	struct scenario *s = scenario_b2b("SACKLossMinRetxPkts = 1023",
					  "drop = h0>h1 data psn=3 tx=1", "1,0ns,h0,h1,8MiB,\n");
	const struct table *m;
	size_t first, rtx;
	uint64_t highest = 0;

	(void)state;
	assert_int_equal(scenario_run(s), 0);
	m = monitor(s);
	first = monitor_find_tx(m, "h0", 3, 1);
	rtx = monitor_find_tx(m, "h0", 3, 2);
	assert_true(first != SIZE_MAX && rtx != SIZE_MAX);
	assert_string_equal(table_cell(m, rtx, "rtx_origin"), "timeout");
	for (size_t r = 0; r < rtx; r++)
		if (monitor_is(m, r, "h0", "tx", "DATA") && table_u64(m, r, "bth_psn") > highest)
			highest = table_u64(m, r, "bth_psn");
	assert_int_equal(highest, 1026);
	assert_int_equal(monitor_find_tx(m, "h0", 1027, 1) > rtx, 1);
	assert_int_equal(scenario_counter(s, "h0", "retx_timeout"), 1);
	scenario_free(s);
}

/* ---- loss detection from SACK gaps ------------------------------------- */

static uint64_t highest_sacked_before(const struct table *m, const char *node, uint64_t t)
{
	uint64_t hi = 0;

	for (size_t r = 0; r < m->nrows && table_u64(m, r, "time_ps") <= t; r++) {
		const char *list;
		if (!monitor_is(m, r, node, "rx", "SACK"))
			continue;
		list = table_cell(m, r, "sack_bitmap_psns");
		for (const char *p = list; *p;) {
			uint64_t v = strtoull(p, (char **)&p, 10);
			hi = v > hi ? v : hi;
			if (*p == ';')
				p++;
		}
	}
	return hi;
}

/* Seed: "a gap is presumed lost once a packet more than 512 PSNs beyond it
 * has been selectively acknowledged", about 513 x 83.48 ns of sending after
 * the lost packet; retransmitted once, with RTX, ACK-request and the
 * trimmable-retransmission codepoint. */
static void test_sack_gap_needs_513_later_packets(void **state)
{
	struct scenario *s =
	    scenario_b2b(NULL, "drop = h0>h1 data psn=10 tx=1", "1,0ns,h0,h1,4MiB,\n");
	const struct table *m;
	size_t first, rtx;
	uint64_t t1, t2;

	(void)state;
	assert_int_equal(scenario_run(s), 0);
	m = monitor(s);
	first = monitor_find_tx(m, "h0", 10, 1);
	rtx = monitor_find_tx(m, "h0", 10, 2);
	assert_true(rtx != SIZE_MAX);
	assert_int_equal(monitor_find_tx(m, "h0", 10, 3), SIZE_MAX);
	assert_string_equal(table_cell(m, rtx, "rtx_origin"), "sack_gap");
	assert_int_equal(table_u64(m, rtx, "ar_bit"), 1);
	assert_int_equal(table_u64(m, rtx, "rtx_bit"), 1);
	assert_string_equal(table_cell(m, rtx, "dscp"), "trimmable_retx");
	t1 = table_u64(m, first, "time_ps");
	t2 = table_u64(m, rtx, "time_ps");
	assert_true(highest_sacked_before(m, "h0", t2) > 10 + 512);
	assert_true(t2 - t1 > 513 * SER(DATA_WIRE) + 2 * US);
	/* Plus a round trip, and the wait behind the packets already handed
	 * to the egress queue: at most one window of 90 packets. */
	assert_true(t2 - t1 < 513 * SER(DATA_WIRE) + 3 * US + 90 * SER(DATA_WIRE));
	assert_int_equal(scenario_counter(s, "h0", "retx_sack_gap"), 1);
	assert_string_equal(table_cell(messages(s), 0, "verified"), "true");
	scenario_free(s);
}

/* Seed: "At 0, any gap below the highest PSN in a SACK is presumed lost at
 * once." */
static void test_sack_gap_zero_is_immediate(void **state)
{
	struct scenario *s = scenario_b2b("SACKLossMinRetxPkts = 0",
					  "drop = h0>h1 data psn=10 tx=1", "1,0ns,h0,h1,4MiB,\n");
	const struct table *m;
	size_t first, rtx;

	(void)state;
	assert_int_equal(scenario_run(s), 0);
	m = monitor(s);
	first = monitor_find_tx(m, "h0", 10, 1);
	rtx = monitor_find_tx(m, "h0", 10, 2);
	assert_string_equal(table_cell(m, rtx, "rtx_origin"), "sack_gap");
	/* PSN 11's SACK comes back one round trip after PSN 11 was sent. */
	assert_true(table_u64(m, rtx, "time_ps") - table_u64(m, first, "time_ps") < 3 * US);
	scenario_free(s);
}

/* Seed: "At MaxPSNRange - 1 or more, SACK gaps never find a loss": only
 * the timer recovers it. */
static void test_sack_gap_blind_at_max_psn_range(void **state)
{
	struct scenario *s = scenario_b2b("SACKLossMinRetxPkts = 1023",
					  "drop = h0>h1 data psn=10 tx=1", "1,0ns,h0,h1,4MiB,\n");
	const struct table *m;

	(void)state;
	assert_int_equal(scenario_run(s), 0);
	m = monitor(s);
	assert_string_equal(table_cell(m, monitor_find_tx(m, "h0", 10, 2), "rtx_origin"),
			    "timeout");
	assert_int_equal(scenario_counter(s, "h0", "retx_sack_gap"), 0);
	scenario_free(s);
}

/* Seed, NACKs: "the PSN-out-of-range NACK appears only when the receiving
 * NIC's MaxPSNRange is smaller than its sender's"; the sender retransmits
 * what it names (here: PSNs held behind the lost PSN 2), and the message
 * still completes, verified. */
static void test_psn_out_of_range_nack(void **state)
{
	struct scenario *s =
	    scenario_b2b_nodes(NULL, NULL, "MaxPSNRange = 16",
			       "delay = 10us\ndrop = h0>h1 data psn=2 tx=1", "1,0ns,h0,h1,1MiB,\n");
	const struct table *m;
	size_t nacks = 0;

	(void)state;
	assert_int_equal(scenario_run(s), 0);
	m = monitor(s);
	for (size_t r = 0; r < m->nrows; r++)
		if (monitor_is(m, r, "h0", "rx", "NACK")) {
			assert_int_equal(table_u64(m, r, "nack_code"), 0x0B);
			nacks++;
		}
	assert_true(nacks > 0);
	assert_int_equal(scenario_counter(s, "h1", "rx_drop_psn_window"), nacks);
	assert_int_equal(scenario_counter(s, "h0", "retx_nack"), nacks);
	assert_string_equal(table_cell(messages(s), 0, "verified"), "true");
	scenario_free(s);
}

/* ---- retransmission timers ---------------------------------------------- */

/* Seed: a short message whose last packet is lost is recovered by the
 * 150 µs timer, checked on the 1 µs grid (§12 rule 7). */
static void test_last_packet_lost_timer(void **state)
{
	struct scenario *s =
	    scenario_b2b(NULL, "drop = h0>h1 data psn=3 tx=1", "1,0ns,h0,h1,16KiB,\n");
	const struct table *m;
	size_t first, rtx;
	ps_t fire;

	(void)state;
	assert_int_equal(scenario_run(s), 0);
	m = monitor(s);
	first = monitor_find_tx(m, "h0", 3, 1);
	rtx = monitor_find_tx(m, "h0", 3, 2);
	assert_string_equal(table_cell(m, rtx, "rtx_origin"), "timeout");
	fire = ceil_us(table_u64(m, first, "time_ps") + 150 * US);
	/* the retransmission leaves at once: no fetch, an idle port */
	assert_int_equal(table_u64(m, rtx, "time_ps"), fire + SER(DATA_WIRE));
	scenario_free(s);
}

/* Seed, worked example: with ExponentialRetryCount 0 the budget is 7; at
 * the 8th timeout, "about 1,350 µs after the first send", the QP enters the
 * error state.  Each timer starts when its transmission ends and expires on
 * the 1 µs grid, so the times are computed here by the same rule. */
static void test_retry_budget_error_state(void **state)
{
	struct scenario *s = scenario_b2b("ExponentialRetryCount = 0",
					  "drop = h0>h1 data count=all", "1,0ns,h0,h1,4KiB,\n");
	const struct table *m, *ev;
	ps_t t, first;
	size_t err = SIZE_MAX;

	(void)state;
	assert_int_equal(scenario_run(s), 1); /* the message never completes */
	m = monitor(s);
	first = table_u64(m, monitor_find_tx(m, "h0", 0, 1), "time_ps");
	t = first;
	for (unsigned k = 1; k <= 8; k++) {
		ps_t dur = (k <= 7 ? 150 : 300) * US;
		ps_t fire = ceil_us(t + dur);
		if (k == 8) {
			t = fire;
			break;
		}
		size_t r = monitor_find_tx(m, "h0", 0, k + 1);
		assert_true(r != SIZE_MAX);
		assert_int_equal(table_u64(m, r, "time_ps"), fire + SER(DATA_WIRE));
		t = fire + SER(DATA_WIRE);
	}
	assert_int_equal(monitor_find_tx(m, "h0", 0, 9), SIZE_MAX);
	ev = scenario_table(s, "mrc-events.csv");
	for (size_t r = 0; r < ev->nrows; r++)
		if (!strcmp(table_cell(ev, r, "event"), "QP_ERROR"))
			err = r;
	assert_true(err != SIZE_MAX);
	assert_int_equal(table_u64(ev, err, "time_ps"), t);
	assert_true(t - first > 1350 * US && t - first < 1360 * US);
	assert_int_equal(scenario_counter(s, "h0", "qp_error"), 1);
	assert_string_equal(table_cell(messages(s), 0, "verified"), "false");
	scenario_free(s);
}

/* docs/protocol.md §11: LinearRetryCount 0 makes the first timeout 2 x
 * InitialAckTimeout; FixedRexmitTimeEnable keeps every timer at it; a
 * timeout is rounded down to whole microseconds. */
static void test_timer_schedule_attributes(void **state)
{
	static const struct {
		const char *attrs;
		ps_t first, second;
	} cases[] = {
	    {"LinearRetryCount = 0", 300 * US, 600 * US},
	    {"LinearRetryCount = 0\nFixedRexmitTimeEnable = true", 150 * US, 150 * US},
	    /* 10.7 µs -> 10 µs; the doubled 21.4 µs -> 21 µs */
	    {"InitialAckTimeout = 10700ns\nLinearRetryCount = 1", 10 * US, 21 * US},
	};

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct scenario *s = scenario_b2b(cases[i].attrs, "drop = h0>h1 data count=2",
						  "1,0ns,h0,h1,4KiB,\n");
		const struct table *m;
		ps_t t1, t2, t3;

		assert_int_equal(scenario_run(s), 0);
		m = monitor(s);
		t1 = table_u64(m, monitor_find_tx(m, "h0", 0, 1), "time_ps");
		t2 = table_u64(m, monitor_find_tx(m, "h0", 0, 2), "time_ps");
		t3 = table_u64(m, monitor_find_tx(m, "h0", 0, 3), "time_ps");
		assert_int_equal(t2, ceil_us(t1 + cases[i].first) + SER(DATA_WIRE));
		assert_int_equal(t3, ceil_us(t2 + cases[i].second) + SER(DATA_WIRE));
		scenario_free(s);
	}
}

/* Seed, Retransmission timer: under Default Packet Spraying the value a
 * timed-out packet was sent on is assumed bad and leaves its destination's
 * rotation until a probe on it is answered; probes go every ProbeInterval
 * (docs/protocol.md §6). */
static void test_timeout_value_probed_back(void **state)
{
	struct scenario *s = scenario_b2b("SACKLossMinRetxPkts = 1023",
					  "drop = h0>h1 data psn=3 tx=1", "1,0ns,h0,h1,8MiB,\n");
	const struct table *m;
	uint64_t ev, fired, probe = 0, answer = 0, used_while_bad = 0, used_after = 0;
	size_t first, rtx;

	(void)state;
	assert_int_equal(scenario_run(s), 0);
	m = monitor(s);
	first = monitor_find_tx(m, "h0", 3, 1);
	rtx = monitor_find_tx(m, "h0", 3, 2);
	ev = table_u64(m, first, "entropy");
	fired = ceil_us(table_u64(m, first, "time_ps") + 150 * US);
	for (size_t r = 0; r < m->nrows; r++) {
		uint64_t t = table_u64(m, r, "time_ps");
		if (!probe && monitor_is(m, r, "h0", "tx", "PROBE")) {
			assert_int_equal(table_u64(m, r, "entropy"), ev);
			probe = t;
		}
		if (!answer && monitor_is(m, r, "h0", "rx", "PROBE_ANSWER"))
			answer = t;
		/* packets leave up to a window (90) after they take their value */
		if (!monitor_is(m, r, "h0", "tx", "DATA") || table_u64(m, r, "entropy") != ev)
			continue;
		if (t > fired + 90 * SER(DATA_WIRE) && (!answer || t < answer))
			used_while_bad++;
		if (answer && t > answer + 90 * SER(DATA_WIRE))
			used_after++;
	}
	assert_string_equal(table_cell(m, rtx, "rtx_origin"), "timeout");
	/* the probe goes at the first ProbeInterval after the timeout, in the
	 * data class: behind at most a window of packets already handed off */
	assert_true(probe >= fired + 20 * US + SER(74));
	assert_true(probe <= fired + 20 * US + SER(74) + 90 * SER(DATA_WIRE));
	/* answered at once, in h1's control class (behind at most the ACK and
	 * SACK of a data packet on the wire there) */
	assert_true(answer >= probe + US + SER(94) + US);
	assert_true(answer <= probe + US + SER(94) + SER(94) + SER(62) + US);
	assert_int_equal(used_while_bad, 0);
	assert_true(used_after > 0);
	assert_int_equal(scenario_counter(s, "h0", "probes_answered"), 1);
	scenario_free(s);
}

/* docs/protocol.md §12 rule 14: with MonitorTriggers = qp_error the monitor keeps
 * each QP's last MonitorHistory rows and writes them only when the QP
 * enters the error state: here the 8 transmissions of the failed packet
 * and nothing of the message that completed. */
static void test_monitor_qp_error_trigger(void **state)
{
	struct scenario *s = scenario_b2b("MonitorTriggers = qp_error\nMonitorHistory = 4\n"
					  "ExponentialRetryCount = 0",
					  "drop = h0>h1 data msn=2 count=all",
					  "1,0ns,h0,h1,64KiB,\n2,0ns,h0,h1,4KiB,1\n");
	const struct table *m;

	(void)state;
	assert_int_equal(scenario_run(s), 1);
	m = monitor(s);
	assert_int_equal(m->nrows, 4);
	for (size_t r = 0; r < m->nrows; r++) {
		assert_true(monitor_is(m, r, "h0", "tx", "WRITE_ONLY"));
		assert_int_equal(table_u64(m, r, "tx_count"), 5 + r); /* the last 4 of 8 */
	}
	assert_string_equal(table_cell(messages(s), 0, "verified"), "true");
	scenario_free(s);
}

/* ---- completion ----------------------------------------------------------- */

/* Seed, Completion re-request: a lost final cumulative ACK delays the
 * message by at most 2 x InitialAckTimeout and a round trip; the duplicate
 * is not a retransmission, and the lingering closed record answers it with
 * the cumulative ACK again (§12 rule 11). */
static void test_lost_final_ack_rerequest(void **state)
{
	struct scenario *s = scenario_b2b(NULL, "drop = h1>h0 ack psn=1023", "1,0ns,h0,h1,4MiB,\n");
	const struct table *m, *msg;
	uint64_t send_complete, complete, acks = 0, dup = SIZE_MAX;

	(void)state;
	assert_int_equal(scenario_run(s), 0);
	msg = messages(s);
	send_complete = table_u64(msg, 0, "send_complete_ps");
	complete = table_u64(msg, 0, "complete_ps");
	assert_true(complete > send_complete + 300 * US);
	assert_true(complete <= send_complete + 300 * US + 3 * US);
	assert_int_equal(table_u64(msg, 0, "retransmissions"), 0);
	assert_int_equal(scenario_counter(s, "h0", "completion_rerequests"), 1);
	assert_int_equal(scenario_counter(s, "h0", "tx_retx_pkts"), 0);
	m = monitor(s);
	for (size_t r = 0; r < m->nrows; r++) {
		if (monitor_is(m, r, "h1", "tx", "ACK") && table_u64(m, r, "bth_psn") == 1023)
			acks++;
		if (monitor_is(m, r, "h0", "tx", "DATA") &&
		    !strcmp(table_cell(m, r, "rtx_origin"), "rerequest"))
			dup = r;
	}
	assert_int_equal(acks, 2);
	assert_true(dup != SIZE_MAX);
	assert_int_equal(table_u64(m, dup, "bth_psn"), 1023);
	assert_int_equal(table_u64(m, dup, "rtx_bit"), 1);
	assert_int_equal(table_u64(m, dup, "ar_bit"), 1);
	scenario_free(s);
}

/* The time of the first mrc-events row of `event` on `node` for message
 * `msg`, or 0. */
static uint64_t event_time(struct scenario *s, const char *node, const char *event, uint64_t msg)
{
	const struct table *ev = scenario_table(s, "mrc-events.csv");

	for (size_t r = 0; r < ev->nrows; r++)
		if (!strcmp(table_cell(ev, r, "node"), node) &&
		    !strcmp(table_cell(ev, r, "event"), event) && table_u64(ev, r, "msg_id") == msg)
			return table_u64(ev, r, "time_ps");
	return 0;
}

/* docs/protocol.md §12 rule 11 (revised): a NIC holds at most MaxQps open
 * receiving QPs; a new one beyond that evicts the least recently active
 * among those that never advanced their cumulative PSN, else the least
 * recently active of all, and the evicted message is failed and counted.
 * Message 2 (PSN 3 always lost: advanced, incomplete) is posted first;
 * message 1 (PSN 0 always lost: never advanced) later, so it is the more
 * recently active; message 3 needs a QP and evicts message 1's. */
static void test_max_qps_evicts_least_recently_active(void **state)
{
	struct scenario *s = scenario_b2b_nodes(
	    "ExponentialRetryCount = 0", NULL, "MaxQps = 2",
	    "drop = h0>h1 data msn=1 psn=0 count=all, h0>h1 data msn=2 psn=3 count=all",
	    "2,0ns,h0,h1,64KiB,\n1,10us,h0,h1,64KiB,\n3,50us,h0,h1,64KiB,\n");
	const struct table *msg;
	uint64_t evicted;

	(void)state;
	assert_int_equal(scenario_run(s), 1);
	assert_int_equal(scenario_counter(s, "h1", "rx_qp_evicted"), 1);
	evicted = event_time(s, "h1", "QP_EVICTED", 1);
	assert_int_equal(evicted, event_time(s, "h1", "QP_CREATED", 3));
	assert_int_equal(event_time(s, "h1", "QP_EVICTED", 2), 0);
	msg = messages(s);
	assert_string_equal(table_cell(msg, 0, "verified"), "false"); /* id 2 */
	assert_string_equal(table_cell(msg, 0, "failure"), "qp_error");
	assert_string_equal(table_cell(msg, 1, "verified"), "false"); /* id 1: evicted */
	assert_string_equal(table_cell(msg, 1, "complete_ps"), "");
	assert_string_equal(table_cell(msg, 1, "failure"), "qp_evicted");
	assert_string_equal(table_cell(msg, 2, "verified"), "true");
	assert_string_equal(table_cell(msg, 2, "failure"), "");
	scenario_free(s);
}

/* §12 rule 11: an evicted message "is recorded as failed, with the reason,
 * in messages.csv".  Its sending QP is not told (the wire has no signal
 * for it) and retransmits on: its row keeps the retransmissions counted up
 * to T_end, as an open message's does.  h1 holds one receiving QP; message
 * 1 loses PSN 0 for good, message 2 takes its QP at 50 µs.  Message 1's
 * timer (rule 7: 10 µs, checked at whole microseconds) fires at 11, 22,
 * 33 and 44 µs: 4 retransmissions before T_end (53.4 µs). */
static void test_evicted_message_failed_with_its_reason(void **state)
{
	struct scenario *s = scenario_b2b_nodes("InitialAckTimeout = 10us", NULL, "MaxQps = 1",
						"drop = h0>h1 data msn=1 psn=0 count=all",
						"1,0ns,h0,h1,64KiB,\n2,50us,h0,h1,64KiB,\n");
	const struct table *msg;

	(void)state;
	assert_int_equal(scenario_run(s), 1);
	assert_int_equal(s->r.o.failed, 1);
	msg = messages(s);
	assert_string_equal(table_cell(msg, 0, "failure"), "qp_evicted");
	assert_string_equal(table_cell(msg, 0, "complete_ps"), "");
	assert_string_equal(table_cell(msg, 0, "retransmissions"), "4");
	assert_string_equal(table_cell(msg, 1, "failure"), "");
	assert_string_equal(table_cell(msg, 1, "verified"), "true");
	scenario_free(s);
}

/* Issue 9 item 10 (§12 rule 11): one QP number allocator for both sides.
 * h1 sends message 2 and receives message 1 at once: its two QPs have
 * different numbers, taken upward from 0x100 (the first version numbered
 * receiving QPs apart, both 0x100 here, and past 2^24 sent 0 on the wire). */
static void test_one_qpn_allocator(void **state)
{
	struct scenario *s = scenario_b2b(NULL, NULL, "1,0ns,h0,h1,64KiB,\n2,0ns,h1,h0,64KiB,\n");
	const struct table *ev;
	uint64_t qpns[2], n = 0;

	(void)state;
	assert_int_equal(scenario_run(s), 0);
	ev = scenario_table(s, "mrc-events.csv");
	for (size_t r = 0; r < ev->nrows && n < 2; r++)
		if (!strcmp(table_cell(ev, r, "node"), "h1") &&
		    !strcmp(table_cell(ev, r, "event"), "QP_CREATED"))
			qpns[n++] = table_u64(ev, r, "local_qpn");
	assert_int_equal(n, 2);
	assert_int_equal(qpns[0], 0x100); /* its sending QP, posted at 0 */
	assert_int_equal(qpns[1], 0x101); /* the receiving QP of message 1 */
	scenario_free(s);
}

/* Issue 9 item 6, the records.  A link down for the whole run and `until`
 * on a stats tick: one row per NIC and tick, the last not repeated; the
 * window of the open group (CongestionControl None: MaxCongestionWindow,
 * 374,040 B at the defaults) in cwnd_min and cwnd_max of every interval,
 * though it never changes; the open message's retransmissions so far in
 * messages.csv.  The first version wrote a second row at 2 ms with zero
 * intervals, cwnd 0 after the first interval, and 0 retransmissions. */
static void test_records_of_an_open_message(void **state)
{
	struct scenario *s = scenario_b2b("CongestionControl = None\nMonitorEnabled = false",
					  "down = 0ns-1s", "1,0ns,h0,h1,4KiB,\n");
	const struct table *st;
	size_t rows = 0;

	(void)state;
	s->until = 2000 * US;
	assert_int_equal(scenario_run(s), 1);
	st = scenario_table(s, "mrc-transport-stats.csv");
	for (size_t r = 0; r < st->nrows; r++) {
		if (strcmp(table_cell(st, r, "node"), "h0"))
			continue;
		rows++;
		assert_int_equal(table_u64(st, r, "time_ps"), rows * 1000 * US);
		assert_int_equal(table_u64(st, r, "cwnd_min"), 374040);
		assert_int_equal(table_u64(st, r, "cwnd_max"), 374040);
	}
	assert_int_equal(rows, 2);
	assert_true(scenario_counter(s, "h0", "tx_retx_pkts") > 0);
	assert_int_equal(table_u64(messages(s), 0, "retransmissions"),
			 scenario_counter(s, "h0", "tx_retx_pkts"));
	scenario_free(s);
}

/* Issue 9 item 6: the receiver's mrc-events rows name the message (RETH
 * and METH carry it) and its bytes; the receiver's monitor rows leave
 * rtx_origin empty, which only the sender can know. */
static void test_receiver_rows_name_the_message(void **state)
{
	struct scenario *s =
	    scenario_b2b(NULL, "drop = h0>h1 data psn=3 tx=1", "7,0ns,h0,h1,16KiB,\n");
	const struct table *ev, *m;
	size_t rtx_rows = 0;

	(void)state;
	assert_int_equal(scenario_run(s), 0);
	ev = scenario_table(s, "mrc-events.csv");
	for (size_t r = 0; r < ev->nrows; r++) {
		if (strcmp(table_cell(ev, r, "node"), "h1"))
			continue;
		assert_int_equal(table_u64(ev, r, "msg_id"), 7);
		assert_int_equal(table_u64(ev, r, "bytes"), 16384);
	}
	assert_true(event_time(s, "h1", "RECV_COMPLETE", 7) > 0);
	m = monitor(s);
	for (size_t r = 0; r < m->nrows; r++)
		if (monitor_is(m, r, "h1", "rx", "DATA") && table_u64(m, r, "rtx_bit")) {
			assert_string_equal(table_cell(m, r, "rtx_origin"), "");
			rtx_rows++;
		}
	assert_int_equal(rtx_rows, 1);
	scenario_free(s);
}

/* Issue 9 item 1: a receiving QP that has not completed is never reclaimed
 * for silence (§12 rule 11, revised): the seed's sender retransmits until
 * acknowledged, so after a 2 ms outage its retransmissions still find the
 * QP and the message completes.  (The first version reclaimed it after
 * 8 x InitialAckTimeout = 1.2 ms and the message never completed.) */
static void test_outage_longer_than_reclaim(void **state)
{
	struct scenario *s =
	    scenario_b2b("MonitorEnabled = false", "down = 5us-2ms", "1,0ns,h0,h1,1MiB,\n");

	(void)state;
	assert_int_equal(scenario_run(s), 0);
	assert_string_equal(table_cell(messages(s), 0, "verified"), "true");
	assert_true(complete_ps(s, 0) > 2000 * US);
	assert_int_equal(scenario_counter(s, "h1", "qps_created"), 1);
	assert_int_equal(scenario_counter(s, "h1", "rx_drop_unknown_qp"), 0);
	scenario_free(s);
}

/* Issue 9 item 2: the final cumulative ACK lost twice.  The closed record
 * (§12 rule 11, revised) answers each completion re-request as the open QP
 * would, so the message completes one re-request period later each time:
 * after the second, 2 x 2 x InitialAckTimeout after SEND_COMPLETE and a
 * round trip.  (The first version's record expired at 4 x InitialAckTimeout
 * after the close, just before the second re-request arrived.) */
static void test_final_ack_lost_twice(void **state)
{
	struct scenario *s =
	    scenario_b2b(NULL, "drop = h1>h0 ack psn=3 count=2", "1,0ns,h0,h1,16KiB,\n");
	const struct table *m, *msg;
	uint64_t send_complete, complete, acks = 0, sacks = 0;

	(void)state;
	assert_int_equal(scenario_run(s), 0);
	msg = messages(s);
	send_complete = table_u64(msg, 0, "send_complete_ps");
	complete = table_u64(msg, 0, "complete_ps");
	assert_true(complete > send_complete + 600 * US);
	assert_true(complete <= send_complete + 600 * US + 3 * US);
	assert_int_equal(scenario_counter(s, "h0", "completion_rerequests"), 2);
	m = monitor(s);
	for (size_t r = 0; r < m->nrows; r++) {
		acks += monitor_is(m, r, "h1", "tx", "ACK") && table_u64(m, r, "bth_psn") == 3;
		sacks +=
		    monitor_is(m, r, "h1", "tx", "SACK") && table_u64(m, r, "sack_drawn_psn") == 3;
	}
	assert_int_equal(acks, 3);  /* the last packet's, then one per re-request */
	assert_int_equal(sacks, 3); /* the same: each carried ACK-request */
	scenario_free(s);
}

/* docs/protocol.md §1: IcrcEnabled appends the 4-byte RoCEv2 ICRC; every size
 * grows by 4 and the message still arrives, verified. */
static void test_icrc_adds_four_bytes(void **state)
{
	struct scenario *s = scenario_b2b("IcrcEnabled = true", NULL, "1,0ns,h0,h1,64KiB,\n");
	const struct table *m;

	(void)state;
	assert_int_equal(scenario_run(s), 0);
	m = monitor(s);
	assert_int_equal(table_u64(m, monitor_find_tx(m, "h0", 0, 1), "wire_bytes"), 4174 + 4);
	for (size_t r = 0; r < m->nrows; r++)
		if (monitor_is(m, r, "h1", "tx", "SACK"))
			assert_int_equal(table_u64(m, r, "wire_bytes"), 94 + 4);
	assert_string_equal(table_cell(messages(s), 0, "verified"), "true");
	scenario_free(s);
}

/* ---- QP groups -------------------------------------------------------------- */

static size_t new_groups(struct scenario *s, const char *node)
{
	const struct table *cc = scenario_table(s, "mrc-cc.csv");
	size_t n = 0;

	for (size_t r = 0; r < cc->nrows; r++)
		n += !strcmp(table_cell(cc, r, "node"), node) &&
		     !strcmp(table_cell(cc, r, "cause"), "new_group");
	return n;
}

/* Seed, QP groups: with QPGroupsEnabled every QP to one peer shares one
 * congestion window; without it each message has its own.  Over a 10 µs
 * link one window of 90 packets is less than a round trip of sending, so
 * sharing it halves the rate of two concurrent messages. */
static void test_qp_groups_share_one_window(void **state)
{
	const char *w = "1,0ns,h0,h1,4MiB,\n2,0ns,h0,h1,4MiB,\n";
	struct scenario *on = scenario_b2b("QPGroupsEnabled = true", "delay = 10us", w);
	struct scenario *off = scenario_b2b("QPGroupsEnabled = false", "delay = 10us", w);
	double ratio;

	(void)state;
	assert_int_equal(scenario_run(on), 0);
	assert_int_equal(scenario_run(off), 0);
	assert_int_equal(new_groups(on, "h0"), 1);
	assert_int_equal(new_groups(off, "h0"), 2);
	ratio = (double)complete_ps(on, 1) / (double)complete_ps(off, 1);
	assert_true(ratio > 1.6 && ratio < 2.2);
	scenario_free(on);
	scenario_free(off);
}

/* Seed: a message to a peer with nothing open in either direction starts a
 * new group at the initial window; one that finds a QP open (here the
 * peer's message to us) joins its group. */
static void test_new_group_when_nothing_open(void **state)
{
	struct scenario *alone =
	    scenario_b2b(NULL, NULL, "1,0ns,h0,h1,64KiB,\n2,0ns,h0,h1,64KiB,1\n");
	struct scenario *busy = scenario_b2b(
	    NULL, NULL, "1,0ns,h0,h1,64KiB,\n2,0ns,h0,h1,64KiB,1\n3,0ns,h1,h0,16MiB,\n");

	(void)state;
	assert_int_equal(scenario_run(alone), 0);
	assert_int_equal(scenario_run(busy), 0);
	assert_int_equal(new_groups(alone, "h0"), 2);
	assert_int_equal(new_groups(busy, "h0"), 1);
	scenario_free(alone);
	scenario_free(busy);
}

/* ---- RTT samples ------------------------------------------------------------ */

/* Seed, RTT measurement, with PCIe slower than the wire so that a packet is
 * built as its serialization starts.  LocalDatabase samples the exact round
 * trip (serialization start to SACK arrival, less the service time, 0 at
 * 83.48 ns); WireTimestamp samples within 128 ns of it and its packets are
 * 4,178 bytes on the wire. */
static void check_rtt(struct scenario *s, unsigned wire, ps_t tolerance)
{
	const struct table *m = monitor(s);
	size_t samples = 0;

	for (size_t r = 0; r < m->nrows; r++) {
		uint64_t rtt, drawn, sent, truth;
		size_t tx;
		if (!monitor_is(m, r, "h0", "rx", "SACK") || !(rtt = table_u64(m, r, "rtt_ps")))
			continue;
		drawn = table_u64(m, r, "sack_drawn_psn");
		tx = monitor_find_tx(m, "h0", (uint32_t)drawn, 1);
		sent = table_u64(m, tx, "time_ps") - SER(wire);
		truth = table_u64(m, r, "time_ps") - sent;
		/* TSETH times are whole 128 ns steps at both ends */
		assert_true(rtt <= truth + tolerance && truth <= rtt + tolerance);
		samples++;
	}
	assert_true(samples >= 1000);
}

static void test_rtt_samples(void **state)
{
	struct scenario *local = scenario_b2b("PcieLanes = 8", NULL, "1,0ns,h0,h1,4MiB,\n");
	struct scenario *wire = scenario_b2b("PcieLanes = 8\nRTTTimestampMode = WireTimestamp",
					     NULL, "1,0ns,h0,h1,4MiB,\n");
	const struct table *m;

	(void)state;
	assert_int_equal(scenario_run(local), 0);
	assert_int_equal(scenario_run(wire), 0);
	check_rtt(local, 4174, 0);
	check_rtt(wire, 4178, 128 * NS - 1);
	m = monitor(wire);
	assert_int_equal(table_u64(m, monitor_find_tx(m, "h0", 5, 1), "wire_bytes"), 4178);
	scenario_free(local);
	scenario_free(wire);
}

/* ---- segmentation ------------------------------------------------------------ */

/* Seed, Segmentation: ceil(N / MSS) packets, opcodes First/Middle/Last or
 * Only; a 0-byte message is one 78-byte packet. */
static void test_segmentation(void **state)
{
	struct scenario *s = scenario_b2b("MSS = 1000", NULL,
					  "1,0ns,h0,h1,2500,\n2,0ns,h0,h1,0,\n3,0ns,h0,h1,1000,\n");
	const struct table *m;
	size_t first = 0, middle = 0, last = 0, only78 = 0, only1078 = 0;

	(void)state;
	assert_int_equal(scenario_run(s), 0);
	m = monitor(s);
	for (size_t r = 0; r < m->nrows; r++) {
		const char *t;
		if (!monitor_is(m, r, "h0", "tx", "DATA"))
			continue;
		t = table_cell(m, r, "packet_type");
		first += !strcmp(t, "WRITE_FIRST") && table_u64(m, r, "wire_bytes") == 1078;
		middle += !strcmp(t, "WRITE_MIDDLE") && table_u64(m, r, "wire_bytes") == 1078;
		last += !strcmp(t, "WRITE_LAST") && table_u64(m, r, "wire_bytes") == 578;
		only78 += !strcmp(t, "WRITE_ONLY") && table_u64(m, r, "wire_bytes") == 78;
		only1078 += !strcmp(t, "WRITE_ONLY") && table_u64(m, r, "wire_bytes") == 1078;
	}
	assert_int_equal(first, 1);
	assert_int_equal(middle, 1);
	assert_int_equal(last, 1);
	assert_int_equal(only78, 1);
	assert_int_equal(only1078, 1);
	for (size_t r = 0; r < 3; r++)
		assert_string_equal(table_cell(messages(s), r, "verified"), "true");
	scenario_free(s);
}

/* Seed, The transmit scheduler: the QPs of a group take turns; a hundred
 * concurrent messages to one peer share one window, and every one of them
 * completes, verified, as the others finish and free the window. */
static void test_hundred_messages_one_group(void **state)
{
	char w[4096];
	size_t n = 0;
	struct scenario *s;
	const struct table *msg;

	(void)state;
	for (int i = 1; i <= 100; i++)
		n += (size_t)snprintf(w + n, sizeof(w) - n, "%d,0ns,h0,h1,64KiB,\n", i);
	s = scenario_b2b("MonitorEnabled = false", NULL, w);
	assert_int_equal(scenario_run(s), 0);
	msg = messages(s);
	assert_int_equal(msg->nrows, 100);
	for (size_t r = 0; r < msg->nrows; r++)
		assert_string_equal(table_cell(msg, r, "verified"), "true");
	assert_int_equal(scenario_counter(s, "h0", "tx_data_pkts"), 100 * 16);
	scenario_free(s);
}

/* docs/architecture.md, Determinism: two runs of one topology write
 * byte-identical records. */
static void test_deterministic_records(void **state)
{
	const char *w = "1,0ns,h0,h1,1MiB,\n2,0ns,h1,h0,1MiB,\n";
	struct scenario *a = scenario_b2b(NULL, "loss = 0.01", w);
	struct scenario *b = scenario_b2b(NULL, "loss = 0.01", w);
	char cmd[1024];

	(void)state;
	assert_int_equal(scenario_run(a), 0);
	assert_int_equal(scenario_run(b), 0);
	assert_true(scenario_counter(a, "h0", "tx_drop_link_lost") > 0);
	snprintf(cmd, sizeof(cmd), "diff -r '%s' '%s' >/dev/null", a->out, b->out);
	assert_int_equal(system(cmd), 0);
	scenario_free(a);
	scenario_free(b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_4mib_line_rate),
	    cmocka_unit_test(test_run_drains_the_links),
	    cmocka_unit_test(test_window_never_binds_one_ack),
	    cmocka_unit_test(test_narrow_pcie_sets_the_pace),
	    cmocka_unit_test(test_read_request_is_one_tlp),
	    cmocka_unit_test(test_messages_posted_together_take_turns),
	    cmocka_unit_test(test_blocked_pass_retried_only_on_triggers),
	    cmocka_unit_test(test_psn_window_binds),
	    cmocka_unit_test(test_sack_gap_needs_513_later_packets),
	    cmocka_unit_test(test_sack_gap_zero_is_immediate),
	    cmocka_unit_test(test_sack_gap_blind_at_max_psn_range),
	    cmocka_unit_test(test_psn_out_of_range_nack),
	    cmocka_unit_test(test_last_packet_lost_timer),
	    cmocka_unit_test(test_retry_budget_error_state),
	    cmocka_unit_test(test_timer_schedule_attributes),
	    cmocka_unit_test(test_timeout_value_probed_back),
	    cmocka_unit_test(test_monitor_qp_error_trigger),
	    cmocka_unit_test(test_lost_final_ack_rerequest),
	    cmocka_unit_test(test_max_qps_evicts_least_recently_active),
	    cmocka_unit_test(test_evicted_message_failed_with_its_reason),
	    cmocka_unit_test(test_one_qpn_allocator),
	    cmocka_unit_test(test_records_of_an_open_message),
	    cmocka_unit_test(test_receiver_rows_name_the_message),
	    cmocka_unit_test(test_outage_longer_than_reclaim),
	    cmocka_unit_test(test_final_ack_lost_twice),
	    cmocka_unit_test(test_icrc_adds_four_bytes),
	    cmocka_unit_test(test_qp_groups_share_one_window),
	    cmocka_unit_test(test_new_group_when_nothing_open),
	    cmocka_unit_test(test_rtt_samples),
	    cmocka_unit_test(test_segmentation),
	    cmocka_unit_test(test_hundred_messages_one_group),
	    cmocka_unit_test(test_deterministic_records),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
