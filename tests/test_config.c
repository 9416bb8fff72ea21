/* tests/test_config.c — the attribute registry: defaults as attrs.h and
 * docs/protocol.md give them, the derived values of docs/protocol.md §5 and §9, the
 * ranges of §12 rule 15, errors that name the attribute and its range, and
 * a round trip of every attribute through text. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/config.h"

static void test_nic_defaults(void **state)
{
	struct nic_attrs a;

	(void)state;
	config_nic_defaults(&a);
	assert_int_equal(a.ip, 0);
	assert_int_equal(a.mss, 4096);
	assert_int_equal(a.max_psn_range, 1024);
	assert_int_equal(a.sack_loss_min_retx, 512);
	assert_true(a.qp_groups);
	assert_int_equal(a.max_qps, 65536);
	assert_int_equal(a.data_rate, 400000000000ULL);
	assert_int_equal(a.delay, 1 * PS_PER_US);
	assert_int_equal(a.rtt_mode, RTT_LOCAL_DATABASE);
	assert_false(a.icrc);
	assert_true(a.trimming);
	assert_true(a.retransmit_trimmable);
	/* docs/protocol.md §3 */
	assert_int_equal(a.dscp_trimmable, 2);
	assert_int_equal(a.dscp_trimmable_retx, 3);
	assert_int_equal(a.dscp_no_trim, 1);
	assert_int_equal(a.dscp_control, 17);
	assert_int_equal(a.dscp_trimmed, 9);
	assert_int_equal(a.dscp_trimmed_last_hop, 10);
	/* docs/protocol.md §11 */
	assert_int_equal(a.initial_ack_timeout, 150 * PS_PER_US);
	assert_int_equal(a.linear_retry_count, 7);
	assert_int_equal(a.exponential_retry_count, 25);
	assert_false(a.fixed_rexmit_time);
	/* docs/protocol.md §7 */
	assert_int_equal(a.read_request_size, 64);
	assert_true(a.pcie_lane_rate_gts == 32.0);
	assert_int_equal(a.pcie_lanes, 16);
	assert_int_equal(a.pcie_max_payload, 512);
	assert_true(a.pcie_tlp_overhead == 33.8);
	assert_int_equal(a.pcie_tx_buffer, 256 * 1024);
	/* docs/protocol.md §8 */
	assert_int_equal(a.egress_data_pool, 1024 * 1024);
	assert_int_equal(a.egress_control_pool, 64 * 1024);
	assert_int_equal(a.ingress_data_pool, 1024 * 1024);
	assert_int_equal(a.ingress_control_pool, 64 * 1024);
	/* docs/protocol.md §5: derived values stay 0 until resolved */
	assert_int_equal(a.cc, CC_NSCC);
	assert_int_equal(a.config_base_rtt, 5 * PS_PER_US);
	assert_int_equal(a.target_queue_delay, 0);
	assert_int_equal(a.max_cwnd, 0);
	assert_int_equal(a.initial_cwnd, 0);
	assert_int_equal(a.min_cwnd, 0);
	/* docs/protocol.md §6 */
	assert_int_equal(a.entropy_count, 128);
	assert_int_equal(a.starting_port_offset, 256);
	assert_int_equal(a.probe_interval, 20 * PS_PER_US);
	assert_int_equal(a.spraying, SPRAY_DEFAULT);
	/* records, docs/protocol.md §12 rules 14 and 15 */
	assert_true(a.transport_stats);
	assert_int_equal(a.stats_interval, 1 * PS_PER_MS);
	assert_false(a.event_logging);
	assert_false(a.monitor);
	assert_int_equal(a.monitor_triggers, MONITOR_ALL);
	assert_int_equal(a.monitor_history, 256);
	assert_false(a.cc_trace);
}

/* docs/protocol.md §5 at the defaults: unit 4,156 B; BDP 250,000 B; Max = 1.5 BDP
 * = 375,000 B rounded to 90 units = 374,040 B; Initial = Max; Min = 1 unit;
 * TargetQueueDelay = 0.75 x 5 us with trimming. */
static void test_nic_derived_defaults(void **state)
{
	struct nic_attrs a;

	(void)state;
	config_nic_defaults(&a);
	config_nic_resolve(&a);
	assert_int_equal(config_nic_unit(&a), 4156);
	assert_int_equal(config_nic_bdp(&a), 250000);
	assert_int_equal(a.max_cwnd, 374040);
	assert_int_equal(a.max_cwnd % 4156, 0);
	assert_int_equal(a.initial_cwnd, 374040);
	assert_int_equal(a.min_cwnd, 4156);
	assert_int_equal(a.target_queue_delay, 3750000);

	/* 1.0 x ConfigBaseRTT without trimming */
	config_nic_defaults(&a);
	a.trimming = false;
	config_nic_resolve(&a);
	assert_int_equal(a.target_queue_delay, 5 * PS_PER_US);

	/* 100 Gbps: BDP 62,500 B, 1.5 x = 93,750 B = 22.56 units, so 23 */
	config_nic_defaults(&a);
	a.data_rate = 100000000000ULL;
	config_nic_resolve(&a);
	assert_int_equal(a.max_cwnd, 23 * 4156);

	/* Values that are set are kept; Initial follows a set Max. */
	config_nic_defaults(&a);
	a.max_cwnd = 100000;
	a.min_cwnd = 5000;
	config_nic_resolve(&a);
	assert_int_equal(a.max_cwnd, 100000);
	assert_int_equal(a.initial_cwnd, 100000);
	assert_int_equal(a.min_cwnd, 5000);

	/* MSS 1024: unit 1,084; 375,000 / 1,084 = 345.9 units, so 346 */
	config_nic_defaults(&a);
	a.mss = 1024;
	config_nic_resolve(&a);
	assert_int_equal(a.min_cwnd, 1084);
	assert_int_equal(a.max_cwnd, 346 * 1084);
}

static void test_switch_link_emulation_defaults(void **state)
{
	struct switch_attrs s;
	struct link_attrs l;
	struct emulation_attrs e;

	(void)state;
	config_switch_defaults(&s);
	assert_true(s.uet_policy);
	assert_true(s.trimming);
	assert_false(s.pfc);
	assert_int_equal(s.egress_queue_limit, 0);
	assert_true(s.ecn_kmin == 0.2);
	assert_true(s.ecn_kmax == 0.8);
	assert_true(s.ecn_pmax == 1.0);
	assert_true(s.trimmed_class_weight == 0.25);
	assert_int_equal(s.dscp_trimmable, 2);
	assert_int_equal(s.dscp_trimmable_retx, 3);
	assert_int_equal(s.dscp_no_trim, 1);
	assert_int_equal(s.dscp_control, 17);
	assert_int_equal(s.dscp_trimmed, 9);
	assert_int_equal(s.dscp_trimmed_last_hop, 10);
	assert_true(s.stats);
	assert_int_equal(s.stats_interval, PS_PER_MS);
	/* docs/protocol.md §9: one BDP of the port rate x 5 us */
	config_switch_resolve(&s, 400000000000ULL);
	assert_int_equal(s.egress_queue_limit, 250000);
	config_switch_defaults(&s);
	config_switch_resolve(&s, 100000000000ULL);
	assert_int_equal(s.egress_queue_limit, 62500);
	/* auto: the port rate x the fabric's round trip, at most 1 GiB as a
	 * given limit (25 ms at 400 Gbps would be 1.25 GB) */
	config_switch_defaults(&s);
	s.egress_queue_limit_auto = true;
	s.queue_rtt = 20 * PS_PER_MS;
	config_switch_resolve(&s, 400000000000ULL);
	assert_int_equal(s.egress_queue_limit, 1000000000);
	config_switch_defaults(&s);
	s.egress_queue_limit_auto = true;
	s.queue_rtt = 25 * PS_PER_MS;
	config_switch_resolve(&s, 400000000000ULL);
	assert_int_equal(s.egress_queue_limit, 1ULL << 30);

	config_link_defaults(&l);
	assert_int_equal(l.rate, 400000000000ULL);
	assert_int_equal(l.delay, PS_PER_US);
	assert_true(l.loss == 0.0);
	assert_int_equal(l.ndown, 0);
	assert_int_equal(l.ndrops, 0);

	config_emulation_defaults(&e);
	assert_int_equal(e.seed, 1);
	assert_int_equal(e.scale, 2000);
	assert_int_equal(e.until, 0);
	assert_false(e.capture);
	assert_int_equal(e.max_violations, 0);
	assert_true(e.name[0] != '\0');
}

static void expect_error(enum attr_scope scope, const char *name, const char *value,
			 const char *want)
{
	struct nic_attrs nic;
	struct switch_attrs sw;
	struct link_attrs link;
	struct emulation_attrs emu;
	void *objs[] = {&emu, &nic, &sw, &link};
	char err[256] = "";

	config_nic_defaults(&nic);
	config_switch_defaults(&sw);
	config_link_defaults(&link);
	config_emulation_defaults(&emu);
	if (config_set(scope, objs[scope], name, value, err, sizeof err)) {
		fail_msg("%s = %s was accepted", name, value);
	}
	if (strcmp(err, want)) {
		fail_msg("%s = %s: got \"%s\", want \"%s\"", name, value, err, want);
	}
}

static void expect_ok(enum attr_scope scope, void *obj, const char *name, const char *value)
{
	char err[256] = "";

	if (!config_set(scope, obj, name, value, err, sizeof err)) {
		fail_msg("%s = %s refused: %s", name, value, err);
	}
}

/* SampleInterval is a time or a word: auto (the default) or off. */
static void test_sample_interval_words(void **state)
{
	const struct attr_def *d = config_find(ATTR_EMULATION, "SampleInterval");
	struct emulation_attrs emu;
	char text[64];

	(void)state;
	config_emulation_defaults(&emu);
	assert_true(emu.sample_interval == EMU_SAMPLE_AUTO);
	assert_string_equal(config_format(d, &emu, text, sizeof text), "auto");
	expect_ok(ATTR_EMULATION, &emu, "SampleInterval", "off");
	assert_true(emu.sample_interval == EMU_SAMPLE_OFF);
	assert_string_equal(config_format(d, &emu, text, sizeof text), "off");
	expect_ok(ATTR_EMULATION, &emu, "SampleInterval", "10us");
	assert_int_equal(emu.sample_interval, 10 * PS_PER_US);
	assert_string_equal(config_format(d, &emu, text, sizeof text), "10us");
	expect_error(ATTR_EMULATION, "SampleInterval", "0",
		     "SampleInterval: 0 is out of range (allowed: auto, off, 1ns..1000s)");
	expect_error(ATTR_EMULATION, "SampleInterval", "often",
		     "SampleInterval: \"often\": not a number (expected digits, then a time unit: "
		     "ps, ns, us, ms or s) (allowed: auto, off, 1ns..1000s)");
}

static void test_set_errors_name_the_range(void **state)
{
	(void)state;
	expect_error(ATTR_NIC, "MSS", "9000", "MSS: 9000 is out of range (allowed: 64..8192)");
	expect_error(ATTR_NIC, "MSS", "63", "MSS: 63 is out of range (allowed: 64..8192)");
	expect_error(ATTR_NIC, "RTTTimestampMode", "Foo",
		     "RTTTimestampMode: 'Foo' is not one of LocalDatabase, WireTimestamp");
	expect_error(ATTR_NIC, "InitialAckTimeout", "150",
		     "InitialAckTimeout: '150' needs a unit (ps ns us ms s)");
	expect_error(ATTR_NIC, "InitialAckTimeout", "999ps",
		     "InitialAckTimeout: 999ps is out of range (allowed: 1ns..8s)");
	expect_error(ATTR_NIC, "InitialAckTimeout", "8001ms",
		     "InitialAckTimeout: 8001ms is out of range (allowed: 1ns..8s)");
	expect_error(ATTR_NIC, "MaxPSNRange", "0",
		     "MaxPSNRange: 0 is out of range (allowed: 1..8388607)");
	expect_error(ATTR_NIC, "MaxPSNRange", "8388608",
		     "MaxPSNRange: 8388608 is out of range (allowed: 1..8388607)");
	expect_error(ATTR_NIC, "SACKLossMinRetxPkts", "8388608",
		     "SACKLossMinRetxPkts: 8388608 is out of range (allowed: 0..8388607)");
	expect_error(ATTR_NIC, "LinearRetryCount", "8",
		     "LinearRetryCount: 8 is out of range (allowed: 0..7)");
	expect_error(ATTR_NIC, "ExponentialRetryCount", "26",
		     "ExponentialRetryCount: 26 is out of range (allowed: 0..25)");
	expect_error(ATTR_NIC, "DscpControl", "64",
		     "DscpControl: 64 is out of range (allowed: 0..63)");
	expect_error(ATTR_NIC, "DscpControl", "300",
		     "DscpControl: 300 is out of range (allowed: 0..63)");
	expect_error(ATTR_NIC, "PcieLanes", "33", "PcieLanes: 33 is out of range (allowed: 1..32)");
	expect_error(ATTR_NIC, "EntropyCount", "65537",
		     "EntropyCount: 65537 is out of range (allowed: 1..65536)");
	expect_error(ATTR_NIC, "DataRate", "400",
		     "DataRate: '400' needs a unit (bps Kbps Mbps Gbps Tbps)");
	expect_error(ATTR_NIC, "DataRate", "2Tbps",
		     "DataRate: 2Tbps is out of range (allowed: 1Mbps..1.6Tbps)");
	expect_error(ATTR_NIC, "MSS", "-5", "MSS: '-5' is not a whole number (allowed: 64..8192)");
	expect_error(ATTR_NIC, "MSS", "", "MSS: needs a value (allowed: 64..8192)");
	expect_error(ATTR_NIC, "QPGroupsEnabled", "maybe",
		     "QPGroupsEnabled: 'maybe' is not a boolean (true false on off yes no 1 0)");
	expect_error(ATTR_NIC, "Mss", "4096",
		     "Mss: unknown attribute of [nic] (did you mean MSS? see `mrcemu attributes`)");
	expect_error(ATTR_SWITCH, "MSS", "4096",
		     "MSS: unknown attribute of [switch] (see `mrcemu attributes`)");
	expect_error(ATTR_SWITCH, "EcnPmax", "1.5", "EcnPmax: 1.5 is out of range (allowed: 0..1)");
	expect_error(ATTR_SWITCH, "PfcEnabled", "true",
		     "PfcEnabled: true is not supported yet (allowed: false)");
	expect_error(ATTR_LINK, "loss", "1.5", "loss: 1.5 is out of range (allowed: 0..1)");
	expect_error(ATTR_LINK, "loss", "-0.1", "loss: -0.1 is out of range (allowed: 0..1)");
	expect_error(ATTR_LINK, "down", "500us-300us",
		     "down: '500us-300us' ends before it starts (allowed: FROM < TO)");
	expect_error(ATTR_LINK, "down", "300us-300us",
		     "down: '300us-300us' ends before it starts (allowed: FROM < TO)");
	expect_error(ATTR_EMULATION, "scale", "0",
		     "scale: 0 is out of range (allowed: 1..1000000000)");
	expect_error(ATTR_NIC, "ip", "10.0.0.256",
		     "ip: '10.0.0.256' is not an IPv4 address (a.b.c.d)");
	expect_error(ATTR_NIC, "ip", "0.0.0.0",
		     "ip: 0.0.0.0 is not a unicast address (allowed: a unicast IPv4)");
}

static void test_set_accepts_range_ends(void **state)
{
	struct nic_attrs a;
	struct link_attrs l;

	(void)state;
	config_nic_defaults(&a);
	expect_ok(ATTR_NIC, &a, "MSS", "64");
	assert_int_equal(a.mss, 64);
	expect_ok(ATTR_NIC, &a, "MSS", "8192");
	assert_int_equal(a.mss, 8192);
	expect_ok(ATTR_NIC, &a, "MaxPSNRange", "8388607");
	assert_int_equal(a.max_psn_range, 8388607);
	expect_ok(ATTR_NIC, &a, "InitialAckTimeout", "1ns");
	assert_int_equal(a.initial_ack_timeout, 1000);
	expect_ok(ATTR_NIC, &a, "InitialAckTimeout", "8s");
	assert_int_equal(a.initial_ack_timeout, 8 * PS_PER_S);
	expect_ok(ATTR_NIC, &a, "RTTTimestampMode", "WireTimestamp");
	assert_int_equal(a.rtt_mode, RTT_WIRE_TIMESTAMP);
	expect_ok(ATTR_NIC, &a, "CongestionControl", "None");
	assert_int_equal(a.cc, CC_NONE);
	expect_ok(ATTR_NIC, &a, "SprayingMode", "SinglePath");
	assert_int_equal(a.spraying, SPRAY_SINGLE_PATH);
	expect_ok(ATTR_NIC, &a, "MonitorTriggers", "qp_error");
	assert_int_equal(a.monitor_triggers, MONITOR_QP_ERROR);
	expect_ok(ATTR_NIC, &a, "TrimmingEnabled", "off");
	assert_false(a.trimming);
	expect_ok(ATTR_NIC, &a, "PcieTxBufferSize", "4MiB");
	assert_int_equal(a.pcie_tx_buffer, 4 << 20);
	expect_ok(ATTR_NIC, &a, "ip", "10.0.0.1");
	assert_int_equal(a.ip, 0x0A000001);
	expect_ok(ATTR_NIC, &a, "DataRate", "1.6Tbps");
	assert_int_equal(a.data_rate, 1600000000000ULL);

	config_link_defaults(&l);
	expect_ok(ATTR_LINK, &l, "down", "300us-500us, 1ms-2ms");
	assert_int_equal(l.ndown, 2);
	assert_int_equal(l.down[0].from, 300 * PS_PER_US);
	assert_int_equal(l.down[0].to, 500 * PS_PER_US);
	assert_int_equal(l.down[1].from, PS_PER_MS);
	assert_int_equal(l.down[1].to, 2 * PS_PER_MS);
	expect_ok(ATTR_LINK, &l, "down", "0-1us"); /* a second line adds */
	assert_int_equal(l.ndown, 3);
	assert_int_equal(l.down[2].from, 0);
}

/* Cross-attribute rules: docs/protocol.md §6 ports, §5 window order, §9 ECN. */
static void test_checks(void **state)
{
	struct nic_attrs a;
	struct switch_attrs s;
	char err[256];

	(void)state;
	config_nic_defaults(&a);
	config_nic_resolve(&a);
	assert_true(config_nic_check(&a, err, sizeof err));
	a.starting_port_offset = 65536 - 128;
	assert_true(config_nic_check(&a, err, sizeof err));
	a.starting_port_offset = 65536 - 127;
	assert_false(config_nic_check(&a, err, sizeof err));
	assert_non_null(strstr(err, "EntropyCount"));
	assert_non_null(strstr(err, "65536"));

	config_nic_defaults(&a);
	a.min_cwnd = 400000;
	config_nic_resolve(&a);
	assert_false(config_nic_check(&a, err, sizeof err));
	assert_non_null(strstr(err, "MinCongestionWindow"));

	config_nic_defaults(&a);
	a.initial_cwnd = 400000;
	config_nic_resolve(&a);
	assert_false(config_nic_check(&a, err, sizeof err));
	assert_non_null(strstr(err, "InitialCongestionWindow"));

	config_switch_defaults(&s);
	assert_true(config_switch_check(&s, err, sizeof err));
	s.ecn_kmin = 0.9;
	assert_false(config_switch_check(&s, err, sizeof err));
	assert_non_null(strstr(err, "EcnKmin"));
}

/* Every name the brief, attrs.h and docs/protocol.md give is in the registry, in
 * its scope, and nothing else is; fields do not overlap. */
static void test_registry_is_complete(void **state)
{
	static const char *const emu[] = {
	    "name",	     "seed",	       "scale",		  "until",	   "capture",
	    "MaxViolations", "SampleInterval", "BatchScheduling", "SwitchPriority"};
	static const char *const nic[] = {"ip",
					  "MSS",
					  "MaxPSNRange",
					  "SACKLossMinRetxPkts",
					  "QPGroupsEnabled",
					  "MaxQps",
					  "MaxClosedRecords",
					  "DataRate",
					  "Delay",
					  "RTTTimestampMode",
					  "IcrcEnabled",
					  "TrimmingEnabled",
					  "RetransmitTrimmable",
					  "DscpTrimmable",
					  "DscpTrimmableRetx",
					  "DscpNoTrim",
					  "DscpControl",
					  "DscpTrimmed",
					  "DscpTrimmedLastHop",
					  "InitialAckTimeout",
					  "LinearRetryCount",
					  "ExponentialRetryCount",
					  "FixedRexmitTimeEnable",
					  "ReadRequestSize",
					  "PcieLaneRate",
					  "PcieLanes",
					  "PcieMaxPayload",
					  "PcieTlpOverhead",
					  "PcieTxBufferSize",
					  "EgressDataPoolSize",
					  "EgressControlPoolSize",
					  "IngressDataPoolSize",
					  "IngressControlPoolSize",
					  "CongestionControl",
					  "ConfigBaseRTT",
					  "TargetQueueDelay",
					  "MaxCongestionWindow",
					  "InitialCongestionWindow",
					  "MinCongestionWindow",
					  "QuickAdaptGate",
					  "EntropyCount",
					  "StartingPortOffset",
					  "ProbeInterval",
					  "SprayingMode",
					  "EnableTransportStats",
					  "TransportStatsReportInterval",
					  "EnableEventLogging",
					  "MonitorEnabled",
					  "MonitorTriggers",
					  "MonitorHistory",
					  "EnableCcTrace"};
	static const char *const sw[] = {"UETPolicyEnabled",  "TrimmingEnabled",
					 "PfcEnabled",	      "EgressQueueLimit",
					 "EcnKmin",	      "EcnKmax",
					 "EcnPmax",	      "TrimmedClassWeight",
					 "DscpTrimmable",     "DscpTrimmableRetx",
					 "DscpNoTrim",	      "DscpControl",
					 "DscpTrimmed",	      "DscpTrimmedLastHop",
					 "EnableSwitchStats", "SwitchStatsReportInterval"};
	static const char *const link[] = {"rate", "delay", "loss", "down", "drop"};
	const char *const *lists[] = {emu, nic, sw, link};
	const size_t counts[] = {9, 51, 16, 5};
	const size_t sizes[] = {sizeof(struct emulation_attrs), sizeof(struct nic_attrs),
				sizeof(struct switch_attrs), sizeof(struct link_attrs)};
	size_t per_scope[4] = {0};

	(void)state;
	assert_int_equal(sizeof nic / sizeof nic[0], counts[1]);
	for (int s = 0; s < 4; s++) {
		for (size_t i = 0; i < counts[s]; i++) {
			const struct attr_def *d = config_find((enum attr_scope)s, lists[s][i]);
			if (!d) {
				fail_msg("%s missing from scope %d", lists[s][i], s);
			}
			assert_non_null(d->doc);
			assert_true(d->doc[0] != '\0');
		}
	}
	for (const struct attr_def *d = config_attrs; d->name; d++) {
		per_scope[d->scope]++;
		assert_true(d->offset + d->size <= sizes[d->scope]);
		for (const struct attr_def *e = config_attrs; e < d; e++) {
			if (e->scope == d->scope &&
			    (e->offset < d->offset + d->size && d->offset < e->offset + e->size)) {
				fail_msg("%s and %s overlap", e->name, d->name);
			}
		}
	}
	for (int s = 0; s < 4; s++) {
		assert_int_equal(per_scope[s], counts[s]);
	}
}

/* Set every attribute to its default text, format it, set the text back:
 * the field must be unchanged (derived defaults use their resolved value). */
static void test_round_trip_every_attribute(void **state)
{
	struct nic_attrs nic[2];
	struct switch_attrs sw[2];
	struct link_attrs link[2];
	struct emulation_attrs emu[2];
	void *objs[2][4] = {{&emu[0], &nic[0], &sw[0], &link[0]},
			    {&emu[1], &nic[1], &sw[1], &link[1]}};
	char text[256];
	int tested = 0;

	(void)state;
	for (const struct attr_def *d = config_attrs; d->name; d++) {
		for (int i = 0; i < 2; i++) {
			config_nic_defaults(&nic[i]);
			config_switch_defaults(&sw[i]);
			config_link_defaults(&link[i]);
			config_emulation_defaults(&emu[i]);
		}
		void *a = objs[0][d->scope], *b = objs[1][d->scope];
		if (d->type == ATTR_DROPS) {
			char err[256];
			assert_false(
			    config_set(d->scope, a, d->name, "h0>h1 data", err, sizeof err));
			assert_non_null(strstr(err, "drop:"));
			continue;
		}
		if (d->def[0]) {
			expect_ok(d->scope, a, d->name, d->def);
		} else if (d->type == ATTR_IPV4) {
			expect_ok(d->scope, a, d->name, "192.168.1.200");
		} else if (d->type == ATTR_WINDOWS) {
			expect_ok(d->scope, a, d->name, "0-1ps, 300us-500us, 1ms-2s");
		} else if (d->scope == ATTR_NIC) {
			config_nic_resolve(a);
		} else {
			config_switch_resolve(a, 400000000000ULL);
		}
		config_format(d, a, text, sizeof text);
		expect_ok(d->scope, b, d->name, text);
		if (memcmp((char *)a + d->offset, (char *)b + d->offset, d->size)) {
			fail_msg("%s: '%s' does not read back", d->name, text);
		}
		tested++;
	}
	assert_int_equal(tested, 9 + 51 + 16 + 4);

	/* The formatted text is the natural one. */
	config_nic_defaults(&nic[0]);
	config_nic_resolve(&nic[0]);
	assert_string_equal(
	    config_format(config_find(ATTR_NIC, "InitialAckTimeout"), &nic[0], text, sizeof text),
	    "150us");
	assert_string_equal(
	    config_format(config_find(ATTR_NIC, "DataRate"), &nic[0], text, sizeof text),
	    "400Gbps");
	assert_string_equal(
	    config_format(config_find(ATTR_NIC, "PcieTxBufferSize"), &nic[0], text, sizeof text),
	    "256KiB");
	assert_string_equal(
	    config_format(config_find(ATTR_NIC, "MaxCongestionWindow"), &nic[0], text, sizeof text),
	    "374040B");
}

static void test_print_attributes(void **state)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	(void)state;
	config_print_attributes(f);
	fclose(f);
	assert_non_null(strstr(buf, "[emulation]\n"));
	assert_non_null(strstr(buf, "\n[nic]\n"));
	assert_non_null(strstr(buf, "\n[switch]\n"));
	assert_non_null(strstr(buf, "\n[link]\n"));
	assert_true(strstr(buf, "[nic]") < strstr(buf, "[switch]"));
	for (const struct attr_def *d = config_attrs; d->name; d++) {
		assert_non_null(strstr(buf, d->name));
		assert_non_null(strstr(buf, d->doc));
	}
	assert_non_null(strstr(buf, "[4096]  range: 64..8192"));
	assert_non_null(strstr(buf, "1.5 x BDP in units of MSS+60 = 374040B at defaults"));
	assert_non_null(strstr(buf, "= MaxCongestionWindow = 374040B at defaults"));
	assert_non_null(strstr(buf, "1 unit = MSS+60 = 4156B at defaults"));
	assert_non_null(strstr(buf, "= 3750ns at defaults"));
	assert_non_null(strstr(buf, "port rate x 5us = 250000B at defaults"));
	assert_non_null(strstr(buf, "one of: LocalDatabase, WireTimestamp"));
	free(buf);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_nic_defaults),
	    cmocka_unit_test(test_nic_derived_defaults),
	    cmocka_unit_test(test_switch_link_emulation_defaults),
	    cmocka_unit_test(test_set_errors_name_the_range),
	    cmocka_unit_test(test_sample_interval_words),
	    cmocka_unit_test(test_set_accepts_range_ends),
	    cmocka_unit_test(test_checks),
	    cmocka_unit_test(test_registry_is_complete),
	    cmocka_unit_test(test_round_trip_every_attribute),
	    cmocka_unit_test(test_print_attributes),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
