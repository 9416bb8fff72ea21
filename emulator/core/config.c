/* emulator/core/config.c — the attribute registry: every field of the NIC, switch,
 * link and emulation attributes (attrs.h) under the name the seed and
 * docs/protocol.md give it, with its type, default, allowed range and doc;
 * setting attributes from text, and the derived defaults of docs/protocol.md §5
 * and §9.  Writing them back as text, the listing and the spelling hints are
 * config_text.c. */
#include "config.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "config_impl.h"
#include "topology.h"

static const char *const rtt_mode_names[] = {"LocalDatabase", "WireTimestamp", NULL};
static const char *const cc_names[] = {"NSCC", "None", NULL};
static const char *const spray_names[] = {"DefaultPacketSpraying", "SinglePath", NULL};
static const char *const trigger_names[] = {"all", "qp_error", NULL};
static const char *const sample_words[] = {"auto", "off", NULL};

#define FIELD(type, f) offsetof(type, f), sizeof(((type *)0)->f)
#define NIC(f)	       ATTR_NIC, FIELD(struct nic_attrs, f)
#define SW(f)	       ATTR_SWITCH, FIELD(struct switch_attrs, f)
#define LINK(f)	       ATTR_LINK, FIELD(struct link_attrs, f)
#define EMU(f)	       ATTR_EMULATION, FIELD(struct emulation_attrs, f)

/* Each entry lists the type before the scope macro, which expands to the
 * scope, offset and size; ENTRY_ puts them in struct attr_def's order. */
#define ENTRY(name, type, scope_off_size, def, min, max, names, doc)                               \
	ENTRY_(name, type, scope_off_size, def, min, max, names, doc)
#define ENTRY_(name, type, scope, off, size, def, min, max, names, doc)                            \
	{                                                                                          \
		name, scope, type, off, size, def, min, max, names, doc                            \
	}

/* One codepoint attribute of docs/protocol.md §3, for the NIC or the switch. */
#define DSCP_NIC(name, f, def, doc) ENTRY(name, ATTR_U8, NIC(f), def, "0", "63", NULL, doc)
#define DSCP_SW(name, f, def, doc)  ENTRY(name, ATTR_U8, SW(f), def, "0", "63", NULL, doc)

const struct attr_def config_attrs[] = {
    /* [emulation] — docs/topology.md, Topology file. */
    ENTRY("name", ATTR_STRING, EMU(name), "mrcemu", NULL, NULL, NULL,
	  "the emulation's name: 1..31 letters, digits, _ and -; namespaces are "
	  "mrc-<name>-<node> (docs/topology.md, Names)"),
    ENTRY("seed", ATTR_U64, EMU(seed), "1", NULL, NULL, NULL,
	  "seeds every engine's RNG (docs/architecture.md, Determinism)"),
    ENTRY("scale", ATTR_U64, EMU(scale), "2000", "1", "1000000000", NULL,
	  "run: wall-clock ns per virtual ns"),
    ENTRY("until", ATTR_TIME, EMU(until), "0", "0ps", "281s", NULL,
	  "virtual stop time; 0 = when the workload is done"),
    ENTRY("capture", ATTR_BOOL, EMU(capture), "off", NULL, NULL, NULL,
	  "write pcap/NODE-PORT.pcap of every port"),
    ENTRY("MaxViolations", ATTR_U64, EMU(max_violations), "0", NULL, NULL, NULL,
	  "stop after this many protocol violations; 0 = no limit"),
    ENTRY("BatchScheduling", ATTR_BOOL, EMU(batch_scheduling), "off", NULL, NULL, NULL,
	  "at --scale max, daemons run under SCHED_BATCH: fewer task switches on a machine of "
	  "their own, later wake-ups behind other processes (docs/promises.md, Wake-ups)"),
    ENTRY("SwitchPriority", ATTR_U8, EMU(switch_priority), "5", "0", "20", NULL,
	  "at --scale max, switch daemons run this many nice levels below the launcher's (NICs "
	  "keep it): a switch moves every port's frames (docs/promises.md, Wake-ups); 0 = as NICs"),
    ENTRY("SampleInterval", ATTR_TIME, EMU(sample_interval), "auto", "1ns", "1000s", sample_words,
	  "samples.csv period: auto = run time / 200 with --report; a time: always; off"),

    /* [nic] — the seed and docs/protocol.md. */
    ENTRY("ip", ATTR_IPV4, NIC(ip), "", NULL, NULL, NULL,
	  "per node: the NIC's IPv4 address ([nic NAME] or [external NAME])"),
    ENTRY("MSS", ATTR_U32, NIC(mss), "4096", "64", "8192", NULL,
	  "payload bytes per packet; a full packet is MSS + 78 bytes on the wire"),
    ENTRY("MaxPSNRange", ATTR_U32, NIC(max_psn_range), "1024", "1", "8388607", NULL,
	  "packets a QP may have beyond its cumulative acknowledgement (PSN window)"),
    ENTRY("SACKLossMinRetxPkts", ATTR_U32, NIC(sack_loss_min_retx), "512", "0", "8388607", NULL,
	  "a SACK gap is presumed lost once a packet this many PSNs later is SACKed"),
    ENTRY("QPGroupsEnabled", ATTR_BOOL, NIC(qp_groups), "true", NULL, NULL, NULL,
	  "QPs to one peer share a congestion window and scheduling turn"),
    ENTRY("MaxQps", ATTR_U32, NIC(max_qps), "65536", "1", "1048576", NULL,
	  "receiving QPs a NIC holds at most (docs/protocol.md §12 rule 11)"),
    ENTRY("MaxClosedRecords", ATTR_U32, NIC(max_closed_records), "", "1", "16777216", NULL,
	  "closed receiving QPs a NIC remembers to answer late packets (§12 rule 11)"),
    ENTRY("DataRate", ATTR_RATE, NIC(data_rate), "400Gbps", "1Mbps", "1.6Tbps", NULL,
	  "the NIC port's rate; its link runs at min(link rate, DataRate)"),
    ENTRY("Delay", ATTR_TIME, NIC(delay), "1us", "0ps", "1s", NULL,
	  "one-way delay of the NIC's link; a [link] delay sets it (§12 rule 13)"),
    ENTRY("RTTTimestampMode", ATTR_ENUM, NIC(rtt_mode), "LocalDatabase", NULL, NULL, rtt_mode_names,
	  "how RTT samples are taken (docs/protocol.md §4)"),
    ENTRY("IcrcEnabled", ATTR_BOOL, NIC(icrc), "false", NULL, NULL, NULL,
	  "append the 4-byte RoCEv2 ICRC to every packet"),
    ENTRY("TrimmingEnabled", ATTR_BOOL, NIC(trimming), "true", NULL, NULL, NULL,
	  "mark first transmissions trimmable; NACK trimmed packets received"),
    ENTRY("RetransmitTrimmable", ATTR_BOOL, NIC(retransmit_trimmable), "true", NULL, NULL, NULL,
	  "with TrimmingEnabled, mark retransmissions trimmable-retransmission"),
    DSCP_NIC("DscpTrimmable", dscp_trimmable, "2", "codepoint of a trimmable first transmission"),
    DSCP_NIC("DscpTrimmableRetx", dscp_trimmable_retx, "3",
	     "codepoint of a trimmable retransmission"),
    DSCP_NIC("DscpNoTrim", dscp_no_trim, "1", "codepoint of a data packet never trimmed"),
    DSCP_NIC("DscpControl", dscp_control, "17", "codepoint of ACKs, SACKs and NACKs"),
    DSCP_NIC("DscpTrimmed", dscp_trimmed, "9", "codepoint a switch writes when it trims"),
    DSCP_NIC("DscpTrimmedLastHop", dscp_trimmed_last_hop, "10",
	     "codepoint a switch writes when it trims on a port facing a NIC"),
    ENTRY("InitialAckTimeout", ATTR_TIME, NIC(initial_ack_timeout), "150us", "1ns", "8s", NULL,
	  "base retransmission timeout (docs/protocol.md §11)"),
    ENTRY("LinearRetryCount", ATTR_U32, NIC(linear_retry_count), "7", "0", "7", NULL,
	  "timers that run at InitialAckTimeout before doubling begins"),
    ENTRY("ExponentialRetryCount", ATTR_U32, NIC(exponential_retry_count), "25", "0", "25", NULL,
	  "doubling timeouts allowed; 25 = retransmit until acknowledged"),
    ENTRY("FixedRexmitTimeEnable", ATTR_BOOL, NIC(fixed_rexmit_time), "false", NULL, NULL, NULL,
	  "every timer runs InitialAckTimeout, with no doubling"),
    ENTRY("ReadRequestSize", ATTR_BYTES, NIC(read_request_size), "64", "1B", "4096B", NULL,
	  "size of the PCIe read request that fetches a segment (docs/protocol.md §7)"),
    ENTRY("PcieLaneRate", ATTR_DOUBLE, NIC(pcie_lane_rate_gts), "32", "0.1", "256", NULL,
	  "PCIe lane rate in GT/s (128b/130b encoding)"),
    ENTRY("PcieLanes", ATTR_U32, NIC(pcie_lanes), "16", "1", "32", NULL, "PCIe lanes"),
    ENTRY("PcieMaxPayload", ATTR_BYTES, NIC(pcie_max_payload), "512", "16B", "4096B", NULL,
	  "largest PCIe TLP payload"),
    ENTRY("PcieTlpOverhead", ATTR_DOUBLE, NIC(pcie_tlp_overhead), "33.8", "0", "1024", NULL,
	  "bytes each TLP costs beyond its payload (header, LCRC, framing, DLLPs)"),
    ENTRY("PcieTxBufferSize", ATTR_BYTES, NIC(pcie_tx_buffer), "256KiB", "1B", "1GiB", NULL,
	  "NIC's PCIe transmit buffer for receive-side writes"),
    ENTRY("EgressDataPoolSize", ATTR_BYTES, NIC(egress_data_pool), "1MiB", "1B", "1GiB", NULL,
	  "egress pool of the data class (docs/protocol.md §8)"),
    ENTRY("EgressControlPoolSize", ATTR_BYTES, NIC(egress_control_pool), "64KiB", "1B", "1GiB",
	  NULL, "egress pool of the control class"),
    ENTRY("IngressDataPoolSize", ATTR_BYTES, NIC(ingress_data_pool), "1MiB", "1B", "1GiB", NULL,
	  "ingress pool of the data class"),
    ENTRY("IngressControlPoolSize", ATTR_BYTES, NIC(ingress_control_pool), "64KiB", "1B", "1GiB",
	  NULL, "ingress pool of the control class"),
    ENTRY("CongestionControl", ATTR_ENUM, NIC(cc), "NSCC", NULL, NULL, cc_names,
	  "NSCC, or None: cwnd fixed at MaxCongestionWindow (docs/protocol.md §5)"),
    ENTRY("ConfigBaseRTT", ATTR_TIME, NIC(config_base_rtt), "5us", "1ns", "1s", NULL,
	  "base RTT a new QP group starts from; BDP = DataRate x ConfigBaseRTT; auto = "
	  "the topology's longest host-to-host round trip"),
    ENTRY("TargetQueueDelay", ATTR_TIME, NIC(target_queue_delay), "", "1ps", "1s", NULL,
	  "queueing delay NSCC aims for"),
    ENTRY("MaxCongestionWindow", ATTR_BYTES, NIC(max_cwnd), "", "1B", "1GiB", NULL,
	  "largest congestion window, in bytes"),
    ENTRY("InitialCongestionWindow", ATTR_BYTES, NIC(initial_cwnd), "", "1B", "1GiB", NULL,
	  "congestion window of a new QP group"),
    ENTRY("MinCongestionWindow", ATTR_BYTES, NIC(min_cwnd), "", "1B", "1GiB", NULL,
	  "smallest congestion window"),
    ENTRY("QuickAdaptGate", ATTR_BOOL, NIC(qa_gate), "true", NULL, NULL, NULL,
	  "quick adapt only after a period that acknowledged less than MaxCongestionWindow / 8 "
	  "(false: after every period with a trim, as htsim_uec without -enable_qa_gate)"),
    ENTRY("EntropyCount", ATTR_U32, NIC(entropy_count), "128", "1", "65536", NULL,
	  "entropy values (UDP source ports) per destination (docs/protocol.md §6)"),
    ENTRY("StartingPortOffset", ATTR_U32, NIC(starting_port_offset), "256", "0", "65535", NULL,
	  "first entropy value; StartingPortOffset + EntropyCount <= 65536"),
    ENTRY("ProbeInterval", ATTR_TIME, NIC(probe_interval), "20us", "1ns", "1s", NULL,
	  "how often each assumed-bad entropy value is probed"),
    ENTRY("SprayingMode", ATTR_ENUM, NIC(spraying), "DefaultPacketSpraying", NULL, NULL,
	  spray_names, "spray every packet, or one entropy value per QP"),
    ENTRY("EnableTransportStats", ATTR_BOOL, NIC(transport_stats), "true", NULL, NULL, NULL,
	  "write mrc-transport-stats.csv"),
    ENTRY("TransportStatsReportInterval", ATTR_TIME, NIC(stats_interval), "1ms", "1us", "1000s",
	  NULL, "interval between mrc-transport-stats rows"),
    ENTRY("EnableEventLogging", ATTR_BOOL, NIC(event_logging), "false", NULL, NULL, NULL,
	  "write mrc-events.csv"),
    ENTRY("MonitorEnabled", ATTR_BOOL, NIC(monitor), "false", NULL, NULL, NULL,
	  "write mrc-monitor.csv (docs/protocol.md §12 rule 14)"),
    ENTRY("MonitorTriggers", ATTR_ENUM, NIC(monitor_triggers), "all", NULL, NULL, trigger_names,
	  "all: every packet; qp_error: a QP's last rows when it fails"),
    ENTRY("MonitorHistory", ATTR_U32, NIC(monitor_history), "256", "1", "1048576", NULL,
	  "rows kept per QP for the qp_error trigger"),
    ENTRY("EnableCcTrace", ATTR_BOOL, NIC(cc_trace), "false", NULL, NULL, NULL,
	  "write mrc-cc.csv: every cwnd change with its cause"),

    /* [switch] — docs/protocol.md §9. */
    ENTRY("UETPolicyEnabled", ATTR_BOOL, SW(uet_policy), "true", NULL, NULL, NULL,
	  "classify by role codepoint and trim under the UET policy"),
    ENTRY("TrimmingEnabled", ATTR_BOOL, SW(trimming), "true", NULL, NULL, NULL,
	  "trim trimmable packets that do not fit their queue"),
    ENTRY("PfcEnabled", ATTR_BOOL, SW(pfc), "false", "false", "false", NULL,
	  "PFC pause frames: not modelled yet, so true is refused"),
    ENTRY("EgressQueueLimit", ATTR_BYTES, SW(egress_queue_limit), "", "1B", "1GiB", NULL,
	  "byte limit of each egress queue; auto = port rate x the topology's longest "
	  "host-to-host round trip, at most 1GiB"),
    ENTRY("EcnKmin", ATTR_DOUBLE, SW(ecn_kmin), "0.2", "0", "1", NULL,
	  "fraction of the limit where ECN marking starts"),
    ENTRY("EcnKmax", ATTR_DOUBLE, SW(ecn_kmax), "0.8", "0", "1", NULL,
	  "fraction of the limit where marking reaches EcnPmax"),
    ENTRY("EcnPmax", ATTR_DOUBLE, SW(ecn_pmax), "1", "0", "1", NULL,
	  "marking probability at EcnKmax"),
    ENTRY("TrimmedClassWeight", ATTR_DOUBLE, SW(trimmed_class_weight), "0.25", "0", "1", NULL,
	  "TC1 (trimmed) share against TC0 in deficit round robin"),
    DSCP_SW("DscpTrimmable", dscp_trimmable, "2", "as the NIC's; they must agree"),
    DSCP_SW("DscpTrimmableRetx", dscp_trimmable_retx, "3", "as the NIC's; they must agree"),
    DSCP_SW("DscpNoTrim", dscp_no_trim, "1", "as the NIC's; they must agree"),
    DSCP_SW("DscpControl", dscp_control, "17", "as the NIC's; they must agree"),
    DSCP_SW("DscpTrimmed", dscp_trimmed, "9", "written when trimming; as the NIC's"),
    DSCP_SW("DscpTrimmedLastHop", dscp_trimmed_last_hop, "10",
	    "written when trimming towards a NIC; as the NIC's"),
    ENTRY("EnableSwitchStats", ATTR_BOOL, SW(stats), "true", NULL, NULL, NULL,
	  "write switch-stats.csv"),
    ENTRY("SwitchStatsReportInterval", ATTR_TIME, SW(stats_interval), "1ms", "1us", "1000s", NULL,
	  "interval between switch-stats rows"),

    /* [link A B] — docs/topology.md. */
    ENTRY("rate", ATTR_RATE, LINK(rate), "400Gbps", "1Mbps", "1.6Tbps", NULL,
	  "the link's rate, both ways (a NIC's end runs at min(rate, DataRate))"),
    ENTRY("delay", ATTR_TIME, LINK(delay), "1us", "0ps", "1s", NULL,
	  "one-way delay; also the attached NIC's Delay"),
    ENTRY("loss", ATTR_DOUBLE, LINK(loss), "0", "0", "1", NULL,
	  "probability that a frame is lost, drawn from the link's seeded RNG"),
    ENTRY("down", ATTR_WINDOWS, LINK(down), "", NULL, NULL, NULL,
	  "virtual times the link carries nothing: FROM-TO[, FROM-TO]"),
    ENTRY("drop", ATTR_DROPS, LINK(drops), "", NULL, NULL, NULL,
	  "exact drops: FROM>TO KIND [psn=N] [tx=N] [msn=N] [count=N|all][, ...]"),
    {NULL, 0, 0, 0, 0, NULL, NULL, NULL, NULL, NULL},
};

const struct attr_def *config_find(enum attr_scope scope, const char *name)
{
	for (const struct attr_def *d = config_attrs; d->name; d++) {
		if (d->scope == scope && !strcmp(d->name, name)) {
			return d;
		}
	}
	return NULL;
}

/* ---- parsing ---- */

union attr_val {
	uint64_t u;
	double f;
};

static bool all_digits(const char *s)
{
	if (!*s) {
		return false;
	}
	for (; *s; s++) {
		if (!isdigit((unsigned char)*s)) {
			return false;
		}
	}
	return true;
}

static bool parse_uint(const char *s, uint64_t *v)
{
	if (!all_digits(s)) {
		return false;
	}
	errno = 0;
	*v = strtoull(s, NULL, 10);
	return errno == 0;
}

/* A number with no unit where one is needed is the commonest slip; say which
 * units are meant.  "0" alone is unambiguous and accepted. */
static bool needs_unit(const char *s)
{
	char *end;
	strtod(s, &end);
	return end != s && !*end && strtod(s, NULL) != 0.0;
}

static bool parse_bool(const char *s, bool *b)
{
	static const char *const yes[] = {"true", "on", "yes", "1"};
	static const char *const no[] = {"false", "off", "no", "0"};
	for (size_t i = 0; i < 4; i++) {
		if (!strcasecmp(s, yes[i]) || !strcasecmp(s, no[i])) {
			*b = !strcasecmp(s, yes[i]);
			return true;
		}
	}
	return false;
}

static void join_names(const char *const *names, char *buf, size_t len)
{
	size_t n = 0;
	buf[0] = '\0';
	for (size_t i = 0; names[i] && n < len; i++) {
		n += snprintf(buf + n, len - n, "%s%s", i ? ", " : "", names[i]);
	}
}

/* The index of u among d's words (see parse_val), or -1. */
int config_word_of(const struct attr_def *d, uint64_t u)
{
	for (int i = 0; d->type != ATTR_ENUM && d->names && d->names[i]; i++) {
		if (u == UINT64_MAX - (uint64_t)i) {
			return i;
		}
	}
	return -1;
}

/* Text to value, without the range check; on error, a reason. */
static bool parse_val(const struct attr_def *d, const char *s, union attr_val *v, char *why,
		      size_t wlen)
{
	char sub[160];
	bool b;
	uint32_t ip;

	/* A number attribute may name a few values by a word (SampleInterval
	 * auto, off): the n-th word is UINT64_MAX - n, outside any range. */
	for (int i = 0; d->type != ATTR_ENUM && d->names && d->names[i]; i++) {
		if (!strcmp(s, d->names[i])) {
			v->u = UINT64_MAX - (uint64_t)i;
			return true;
		}
	}
	switch (d->type) {
	case ATTR_BOOL:
		if (!parse_bool(s, &b)) {
			snprintf(why, wlen, "'%s' is not a boolean (true false on off yes no 1 0)",
				 s);
			return false;
		}
		v->u = b;
		return true;
	case ATTR_U8:
	case ATTR_U32:
	case ATTR_U64:
		if (!parse_uint(s, &v->u)) {
			snprintf(why, wlen, "'%s' is not a whole number", s);
			return false;
		}
		return true;
	case ATTR_DOUBLE: {
		char *end;
		errno = 0;
		v->f = strtod(s, &end);
		if (end == s || *end || errno || !isfinite(v->f)) {
			snprintf(why, wlen, "'%s' is not a number", s);
			return false;
		}
		return true;
	}
	case ATTR_TIME:
		if (!strcmp(s, "0")) {
			v->u = 0;
			return true;
		}
		if (needs_unit(s)) {
			snprintf(why, wlen, "'%s' needs a unit (ps ns us ms s)", s);
			return false;
		}
		if (!time_parse(s, &v->u, sub, sizeof sub)) {
			snprintf(why, wlen, "%s", sub);
			return false;
		}
		return true;
	case ATTR_RATE:
		if (needs_unit(s)) {
			snprintf(why, wlen, "'%s' needs a unit (bps Kbps Mbps Gbps Tbps)", s);
			return false;
		}
		if (!rate_parse(s, &v->u, sub, sizeof sub)) {
			snprintf(why, wlen, "%s", sub);
			return false;
		}
		return true;
	case ATTR_BYTES:
		if (!bytes_parse(s, &v->u, sub, sizeof sub)) {
			snprintf(why, wlen, "%s", sub);
			return false;
		}
		return true;
	case ATTR_IPV4:
		if (!ipv4_parse(s, &ip)) {
			snprintf(why, wlen, "'%s' is not an IPv4 address (a.b.c.d)", s);
			return false;
		}
		v->u = ip;
		return true;
	case ATTR_ENUM:
		for (int i = 0; d->names[i]; i++) {
			if (!strcmp(s, d->names[i])) {
				v->u = (uint64_t)i;
				return true;
			}
		}
		join_names(d->names, sub, sizeof sub);
		snprintf(why, wlen, "'%s' is not one of %s", s, sub);
		return false;
	default:
		snprintf(why, wlen, "is not a plain value");
		return false;
	}
}

static int cmp_val(enum attr_type t, const union attr_val *a, const union attr_val *b)
{
	if (t == ATTR_DOUBLE) {
		return a->f < b->f ? -1 : a->f > b->f;
	}
	return a->u < b->u ? -1 : a->u > b->u;
}

/* The allowed range as text: "64..8192", "1B..", or the enum's names. */
void config_range_text(const struct attr_def *d, char *buf, size_t len)
{
	size_t n = 0;

	if (d->type != ATTR_ENUM && d->names) {
		join_names(d->names, buf, len);
		n = strlen(buf);
		snprintf(buf + n, len - n, ", ");
		n = strlen(buf);
		buf += n;
		len -= n;
	}
	if (d->type == ATTR_ENUM) {
		join_names(d->names, buf, len);
	} else if (d->type == ATTR_BOOL && !d->min) {
		snprintf(buf, len, "true, false");
	} else if (d->type == ATTR_BOOL && !strcmp(d->min, d->max)) {
		snprintf(buf, len, "%s", d->min);
	} else if (d->min || d->max) {
		snprintf(buf, len, "%s..%s", d->min ? d->min : "", d->max ? d->max : "");
	} else if (d->type == ATTR_U8) {
		snprintf(buf, len, "0..255");
	} else if (d->type == ATTR_U32) {
		snprintf(buf, len, "0..4294967295");
	} else {
		snprintf(buf, len, "any");
	}
}

static bool in_range(const struct attr_def *d, const union attr_val *v)
{
	union attr_val lim;
	char why[160];

	if (config_word_of(d, v->u) >= 0) {
		return true;
	}
	if (d->type == ATTR_U8 && v->u > UINT8_MAX) {
		return false;
	}
	if ((d->type == ATTR_U32 || (d->type == ATTR_BYTES && d->size == 4)) && v->u > UINT32_MAX) {
		return false;
	}
	if (d->min &&
	    (!parse_val(d, d->min, &lim, why, sizeof why) || cmp_val(d->type, v, &lim) < 0)) {
		return false;
	}
	if (d->max &&
	    (!parse_val(d, d->max, &lim, why, sizeof why) || cmp_val(d->type, v, &lim) > 0)) {
		return false;
	}
	return true;
}

static void store_val(const struct attr_def *d, void *obj, const union attr_val *v)
{
	char *p = (char *)obj + d->offset;

	if (d->type == ATTR_DOUBLE) {
		memcpy(p, &v->f, sizeof v->f);
	} else if (d->type == ATTR_BOOL) {
		bool b = v->u != 0;
		memcpy(p, &b, sizeof b);
	} else if (d->type == ATTR_ENUM) {
		int e = (int)v->u;
		memcpy(p, &e, sizeof e);
	} else if (d->size == 1) {
		uint8_t x = (uint8_t)v->u;
		memcpy(p, &x, 1);
	} else if (d->size == 4) {
		uint32_t x = (uint32_t)v->u;
		memcpy(p, &x, 4);
	} else {
		memcpy(p, &v->u, 8);
	}
}

/* The only string is the emulation's name; the topology loader checks its
 * characters (topology_name_check, docs/topology.md, Names). */
static bool set_string(const struct attr_def *d, void *obj, const char *value, char *err,
		       size_t errlen)
{
	if (strlen(value) >= d->size) {
		snprintf(err, errlen,
			 "%s: '%.40s...' is too long (allowed: at most %zu characters)", d->name,
			 value, d->size - 1);
		return false;
	}
	memcpy((char *)obj + d->offset, value, strlen(value) + 1);
	return true;
}

static const char *skip_space(const char *s)
{
	while (isspace((unsigned char)*s)) {
		s++;
	}
	return s;
}

/* One window "FROM-TO" of `down`. */
static bool parse_window(const char *s, struct link_window *w, char *why, size_t wlen)
{
	char buf[128], sub[128];
	const char *dash = strchr(s, '-');

	if (!dash || (size_t)(dash - s) >= sizeof buf || strlen(dash + 1) >= sizeof buf) {
		snprintf(why, wlen, "'%s' is not a window FROM-TO (e.g. 300us-500us)", s);
		return false;
	}
	memcpy(buf, s, (size_t)(dash - s));
	buf[dash - s] = '\0';
	for (int i = 0; i < 2; i++) {
		char *t = buf + strlen(buf);
		while (t > buf && isspace((unsigned char)t[-1])) {
			*--t = '\0';
		}
		const char *txt = skip_space(buf);
		ps_t *out = i ? &w->to : &w->from;
		if (!strcmp(txt, "0")) {
			*out = 0;
		} else if (needs_unit(txt)) {
			snprintf(why, wlen, "'%s' needs a unit (ps ns us ms s)", txt);
			return false;
		} else if (!time_parse(txt, out, sub, sizeof sub)) {
			snprintf(why, wlen, "%s", sub);
			return false;
		}
		snprintf(buf, sizeof buf, "%s", dash + 1);
	}
	if (w->from >= w->to) {
		snprintf(why, wlen, "'%s' ends before it starts (allowed: FROM < TO)", s);
		return false;
	}
	return true;
}

/* `down = 300us-500us, 1ms-2ms`: windows are added to those already set, so
 * a long list may be split over several `down` lines. */
static bool set_windows(const struct attr_def *d, struct link_attrs *l, const char *value,
			char *err, size_t errlen)
{
	char *copy = strdup(value), *save = NULL, why[200];
	bool ok = copy != NULL;

	for (char *tok = strtok_r(copy, ",", &save); ok && tok; tok = strtok_r(NULL, ",", &save)) {
		const char *w = skip_space(tok);
		if (!*w) {
			continue;
		}
		if (l->ndown >= LINK_MAX_WINDOWS) {
			snprintf(err, errlen, "%s: more than %d windows (allowed: at most %d)",
				 d->name, LINK_MAX_WINDOWS, LINK_MAX_WINDOWS);
			ok = false;
		} else if (!parse_window(w, &l->down[l->ndown], why, sizeof why)) {
			snprintf(err, errlen, "%s: %s", d->name, why);
			ok = false;
		} else {
			l->ndown++;
		}
	}
	free(copy);
	return ok;
}

/* docs/protocol.md §§5, 9: ConfigBaseRTT and EgressQueueLimit may be
 * `auto`, the topology's longest host-to-host round trip (topology.c
 * settles it once routes are known).  Any other value clears auto. */
static bool set_auto(enum attr_scope scope, void *obj, const struct attr_def *d, const char *value)
{
	bool is_auto = !strcasecmp(value, "auto");

	if (scope == ATTR_NIC && !strcmp(d->name, "ConfigBaseRTT")) {
		struct nic_attrs *a = obj;
		a->config_base_rtt_auto = is_auto;
		if (is_auto)
			a->config_base_rtt = 0;
	} else if (scope == ATTR_SWITCH && !strcmp(d->name, "EgressQueueLimit")) {
		struct switch_attrs *a = obj;
		a->egress_queue_limit_auto = is_auto;
		if (is_auto)
			a->egress_queue_limit = 0;
	} else {
		return false;
	}
	return is_auto;
}

bool config_set(enum attr_scope scope, void *obj, const char *name, const char *value, char *err,
		size_t errlen)
{
	static const char *const scope_names[] = {"emulation", "nic", "switch", "link"};
	const struct attr_def *d = config_find(scope, name);
	union attr_val v;
	char why[256], range[200];

	if (!d) {
		const char *near = config_closest_attr(scope, name);
		snprintf(err, errlen,
			 "%s: unknown attribute of [%s] (%s%s%ssee `mrcemu attributes`)", name,
			 scope_names[scope], near ? "did you mean " : "", near ? near : "",
			 near ? "? " : "");
		return false;
	}
	value = value ? value : "";
	if (set_auto(scope, obj, d, value))
		return true;
	switch (d->type) {
	case ATTR_STRING:
		return set_string(d, obj, value, err, errlen);
	case ATTR_WINDOWS:
		return set_windows(d, obj, value, err, errlen);
	case ATTR_DROPS:
		snprintf(err, errlen, "%s: names nodes, so only a topology's [link] can set it",
			 d->name);
		return false;
	default:
		break;
	}
	config_range_text(d, range, sizeof range);
	if (!*value) {
		snprintf(err, errlen, "%s: needs a value (allowed: %s)", d->name, range);
		return false;
	}
	if (!parse_val(d, value, &v, why, sizeof why)) {
		/* A reason that already says what is allowed needs no range,
		 * unless words are allowed too. */
		if (d->type == ATTR_ENUM || (strchr(why, '(') && !d->names)) {
			snprintf(err, errlen, "%s: %s", d->name, why);
		} else {
			snprintf(err, errlen, "%s: %s (allowed: %s)", d->name, why, range);
		}
		return false;
	}
	if (d->type == ATTR_BOOL && d->min && !in_range(d, &v)) {
		snprintf(err, errlen, "%s: %s is not supported yet (allowed: %s)", d->name, value,
			 range);
		return false;
	}
	if (!in_range(d, &v)) {
		snprintf(err, errlen, "%s: %s is out of range (allowed: %s)", d->name, value,
			 range);
		return false;
	}
	if (d->type == ATTR_IPV4 && (v.u == 0 || v.u >= 0xE0000000u || (v.u >> 24) == 127)) {
		snprintf(err, errlen, "%s: %s is not a unicast address (allowed: a unicast IPv4)",
			 d->name, value);
		return false;
	}
	store_val(d, obj, &v);
	return true;
}

/* ---- defaults and derived values ---- */

/* Defaults come from the registry's own text, so the table and the structs
 * cannot disagree. */
static void set_defaults(enum attr_scope scope, void *obj, size_t size)
{
	char err[256];

	memset(obj, 0, size);
	for (const struct attr_def *d = config_attrs; d->name; d++) {
		if (d->scope == scope && d->def[0] &&
		    !config_set(scope, obj, d->name, d->def, err, sizeof err)) {
			fprintf(stderr, "config: bad default: %s\n", err);
			abort();
		}
	}
}

void config_nic_defaults(struct nic_attrs *a)
{
	set_defaults(ATTR_NIC, a, sizeof *a);
}

void config_switch_defaults(struct switch_attrs *a)
{
	set_defaults(ATTR_SWITCH, a, sizeof *a);
}

void config_link_defaults(struct link_attrs *a)
{
	set_defaults(ATTR_LINK, a, sizeof *a);
}

void config_emulation_defaults(struct emulation_attrs *a)
{
	set_defaults(ATTR_EMULATION, a, sizeof *a);
}

uint32_t config_nic_unit(const struct nic_attrs *a)
{
	return a->mss + 60;
}

uint64_t config_nic_bdp(const struct nic_attrs *a)
{
	return (uint64_t)((unsigned __int128)a->data_rate * a->config_base_rtt / (8 * PS_PER_S));
}

/* docs/protocol.md §5: MaxCongestionWindow = 1.5 x BDP rounded to the nearest whole
 * number of units (at least one): 375,000 B at the defaults is 90.2 units of
 * 4,156 B, so 374,040 B.  Computed exactly: 1.5 x rate/8 x rtt = 3 rate rtt /
 * 16e12. */
static uint64_t max_cwnd_default(const struct nic_attrs *a)
{
	unsigned __int128 num = (unsigned __int128)3 * a->data_rate * a->config_base_rtt;
	unsigned __int128 den = (unsigned __int128)16 * PS_PER_S * config_nic_unit(a);
	uint64_t units = (uint64_t)((num + den / 2) / den);

	return (units ? units : 1) * (uint64_t)config_nic_unit(a);
}

void config_nic_resolve(struct nic_attrs *a)
{
	if (!a->config_base_rtt) /* auto, until the topology settles it */
		return;
	if (!a->target_queue_delay) {
		a->target_queue_delay =
		    a->trimming ? a->config_base_rtt * 3 / 4 : a->config_base_rtt;
	}
	if (!a->max_cwnd) {
		a->max_cwnd = max_cwnd_default(a);
	}
	if (!a->initial_cwnd) {
		a->initial_cwnd = a->max_cwnd;
	}
	if (!a->min_cwnd) {
		a->min_cwnd = config_nic_unit(a);
	}
	if (!a->max_closed_records) {
		a->max_closed_records = a->max_qps;
	}
}

/* docs/protocol.md §9: one BDP of the port rate x 5 us (250,000 B at 400 Gbps),
 * or with `auto` of the port rate x the fabric's round trip, at most what the
 * attribute itself allows (1 GiB: a round trip above ~21 ms at 400 Gbps). */
void config_switch_resolve(struct switch_attrs *a, uint64_t port_rate)
{
	ps_t rtt = a->egress_queue_limit_auto && a->queue_rtt ? a->queue_rtt : 5 * PS_PER_US;
	unsigned __int128 bdp = (unsigned __int128)port_rate * rtt / (8 * PS_PER_S);

	if (!a->egress_queue_limit) {
		a->egress_queue_limit = bdp < CONFIG_EGRESS_QUEUE_LIMIT_MAX
					    ? (uint64_t)bdp
					    : CONFIG_EGRESS_QUEUE_LIMIT_MAX;
	}
}

bool config_nic_check(const struct nic_attrs *a, char *err, size_t errlen)
{
	if (!a->config_base_rtt) /* auto: checked once the topology settles it */
		return true;
	if ((uint64_t)a->starting_port_offset + a->entropy_count > 65536) {
		snprintf(err, errlen,
			 "EntropyCount: StartingPortOffset %" PRIu32 " + EntropyCount %" PRIu32
			 " passes the last UDP port (allowed: sum <= 65536)",
			 a->starting_port_offset, a->entropy_count);
		return false;
	}
	if (a->min_cwnd > a->max_cwnd) {
		snprintf(err, errlen,
			 "MinCongestionWindow: %" PRIu64 "B is above MaxCongestionWindow %" PRIu64
			 "B (allowed: Min <= Max)",
			 a->min_cwnd, a->max_cwnd);
		return false;
	}
	if (a->initial_cwnd < a->min_cwnd || a->initial_cwnd > a->max_cwnd) {
		snprintf(err, errlen,
			 "InitialCongestionWindow: %" PRIu64 "B (allowed: %" PRIu64 "B..%" PRIu64
			 "B, Min..Max)",
			 a->initial_cwnd, a->min_cwnd, a->max_cwnd);
		return false;
	}
	return true;
}

bool config_switch_check(const struct switch_attrs *a, char *err, size_t errlen)
{
	if (a->ecn_kmin > a->ecn_kmax) {
		snprintf(err, errlen,
			 "EcnKmin: %g is above EcnKmax %g (allowed: EcnKmin <= EcnKmax)",
			 a->ecn_kmin, a->ecn_kmax);
		return false;
	}
	return true;
}

FILE *config_open_input(const char *path, uint64_t max_bytes, char *err, size_t errlen)
{
	/* O_NONBLOCK: opening a FIFO with no writer must not wait. */
	int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	struct stat st;
	FILE *f;

	if (fd < 0) {
		snprintf(err, errlen, "%s: cannot open: %s", path, strerror(errno));
		return NULL;
	}
	if (fstat(fd, &st) || !S_ISREG(st.st_mode)) {
		snprintf(err, errlen, "%s: not a regular file (allowed: a regular file)", path);
	} else if ((uint64_t)st.st_size > max_bytes) {
		snprintf(err, errlen, "%s: %llu bytes (allowed: at most %llu)", path,
			 (unsigned long long)st.st_size, (unsigned long long)max_bytes);
	} else if (fcntl(fd, F_SETFL, 0) || !(f = fdopen(fd, "r"))) {
		snprintf(err, errlen, "%s: cannot open: %s", path, strerror(errno));
	} else {
		return f;
	}
	close(fd);
	config_escape(err, errlen);
	return NULL;
}
