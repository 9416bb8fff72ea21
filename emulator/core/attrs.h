/* emulator/core/attrs.h — the attributes of a NIC, a switch, a link and an
 * emulation, as typed fields.  emulator/core/config.c holds the registry that
 * names each one (the seed's and docs/protocol.md's names), with its unit,
 * default, allowed range (docs/protocol.md §12 rule 15 where given) and doc. */
#ifndef EMULATOR_ATTRS_H
#define EMULATOR_ATTRS_H

#include <stdbool.h>
#include <stdint.h>

#include "time.h"

enum rtt_mode { RTT_LOCAL_DATABASE, RTT_WIRE_TIMESTAMP };
enum cc_algo { CC_NSCC, CC_NONE };
enum spray_mode { SPRAY_DEFAULT, SPRAY_SINGLE_PATH };
enum monitor_trigger { MONITOR_ALL, MONITOR_QP_ERROR };

/* [nic] — seed and docs/protocol.md §§1-8, 10-12.  Sizes in bytes, times in ps,
 * rates in bits/s.
 *
 * What a packet's path asks of them comes first: all but the PCIe
 * transmit buffer in the first cache line (the NIC puts the struct on
 * one, nicd/nic_impl.h).  At 1,024 hosts a NIC is out of the cache
 * between two of its frames, and each line it reads is a wait (issue 16).
 * The rest is grouped as the seed groups it. */
struct nic_attrs {
	/* read for every packet */
	uint32_t mss;		     /* MSS [4096] 64..8192 */
	uint32_t max_psn_range;	     /* MaxPSNRange [1024] 1..8388607 */
	uint32_t sack_loss_min_retx; /* SACKLossMinRetxPkts [512] 0..8388607 */
	uint32_t linear_retry_count; /* LinearRetryCount [7] 0..7 */
	enum rtt_mode rtt_mode;	     /* RTTTimestampMode [LocalDatabase] */
	enum cc_algo cc;	     /* CongestionControl [NSCC] */
	ps_t initial_ack_timeout;    /* InitialAckTimeout [150us] 1ns..8s */
	bool fixed_rexmit_time;	     /* FixedRexmitTimeEnable [false] */
	bool icrc;		     /* IcrcEnabled [false] */
	bool monitor;		     /* MonitorEnabled [false] */
	bool qp_groups;		     /* QPGroupsEnabled [true] */
	/* marking, docs/protocol.md §3 */
	bool trimming;		       /* TrimmingEnabled [true] */
	bool retransmit_trimmable;     /* RetransmitTrimmable [true] */
	uint8_t dscp_trimmable;	       /* DscpTrimmable [2] */
	uint8_t dscp_trimmable_retx;   /* DscpTrimmableRetx [3] */
	uint8_t dscp_no_trim;	       /* DscpNoTrim [1] */
	uint8_t dscp_control;	       /* DscpControl [17] */
	uint8_t dscp_trimmed;	       /* DscpTrimmed [9] */
	uint8_t dscp_trimmed_last_hop; /* DscpTrimmedLastHop [10] */
	/* buffers, docs/protocol.md §8 (the PCIe one §7) */
	uint64_t ingress_data_pool;    /* IngressDataPoolSize [1MiB] */
	uint64_t ingress_control_pool; /* IngressControlPoolSize [64KiB] */
	uint64_t pcie_tx_buffer;       /* PcieTxBufferSize [256KiB] */
	uint64_t egress_data_pool;     /* EgressDataPoolSize [1MiB] */
	uint64_t egress_control_pool;  /* EgressControlPoolSize [64KiB] */

	/* congestion control, docs/protocol.md §5; 0 = derived (attrs_resolve) */
	ps_t config_base_rtt;	   /* ConfigBaseRTT [5us]; 0 while auto */
	bool config_base_rtt_auto; /* ConfigBaseRTT = auto: the fabric RTT */
	bool qa_gate;		   /* QuickAdaptGate [true] */
	ps_t target_queue_delay;   /* TargetQueueDelay [0.75 or 1.0 x base] */
	uint64_t max_cwnd;	   /* MaxCongestionWindow [1.5 BDP] */
	uint64_t initial_cwnd;	   /* InitialCongestionWindow [= max] */
	uint64_t min_cwnd;	   /* MinCongestionWindow [1 unit] */

	uint32_t ip;			  /* per node: the NIC's IPv4 address (host order) */
	uint32_t max_qps;		  /* MaxQps [65536] */
	uint32_t max_closed_records;	  /* MaxClosedRecords [= MaxQps] */
	uint32_t exponential_retry_count; /* ExponentialRetryCount [25] 0..25 */

	/* the port */
	uint64_t data_rate; /* DataRate [400Gbps] */
	ps_t delay;	    /* Delay [1us]: the NIC's link delay */

	/* PCIe, docs/protocol.md §7 */
	uint32_t read_request_size; /* ReadRequestSize [64] */
	uint32_t pcie_lanes;	    /* PcieLanes [16] */
	uint32_t pcie_max_payload;  /* PcieMaxPayload [512] */
	double pcie_lane_rate_gts;  /* PcieLaneRate [32] GT/s */
	double pcie_tlp_overhead;   /* PcieTlpOverhead [33.8] bytes */

	/* spraying, docs/protocol.md §6 */
	uint32_t entropy_count;	       /* EntropyCount [128] */
	uint32_t starting_port_offset; /* StartingPortOffset [256] */
	ps_t probe_interval;	       /* ProbeInterval [20us] */
	enum spray_mode spraying;      /* SprayingMode [DefaultPacketSpraying] */

	/* records, docs/records.md */
	bool transport_stats;		       /* EnableTransportStats [true] */
	bool event_logging;		       /* EnableEventLogging [false] */
	bool cc_trace;			       /* EnableCcTrace [false] */
	ps_t stats_interval;		       /* TransportStatsReportInterval [1ms] */
	enum monitor_trigger monitor_triggers; /* MonitorTriggers [all] */
	uint32_t monitor_history;	       /* MonitorHistory [256] */
};

/* [switch] — docs/protocol.md §9. */
struct switch_attrs {
	bool uet_policy;	      /* UETPolicyEnabled [true] */
	bool trimming;		      /* TrimmingEnabled [true] */
	bool pfc;		      /* PfcEnabled [false]; true is refused */
	uint64_t egress_queue_limit;  /* EgressQueueLimit [0 = port rate x 5us] */
	bool egress_queue_limit_auto; /* EgressQueueLimit = auto */
	ps_t queue_rtt;		      /* with auto: the fabric RTT (topology) */
	double ecn_kmin;	      /* EcnKmin [0.2] of the limit */
	double ecn_kmax;	      /* EcnKmax [0.8] of the limit */
	double ecn_pmax;	      /* EcnPmax [1.0] */
	double trimmed_class_weight;  /* TrimmedClassWeight [0.25] */
	uint8_t dscp_trimmable;	      /* same codepoints as the NIC's */
	uint8_t dscp_trimmable_retx;
	uint8_t dscp_no_trim;
	uint8_t dscp_control;
	uint8_t dscp_trimmed;
	uint8_t dscp_trimmed_last_hop;
	bool stats;	     /* EnableSwitchStats [true] */
	ps_t stats_interval; /* SwitchStatsReportInterval [1ms] */
};

/* A down window of a link: it carries nothing in [from, to). */
struct link_window {
	ps_t from, to;
};

enum drop_kind { DROP_DATA, DROP_ACK, DROP_SACK, DROP_NACK, DROP_PROBE, DROP_ANY };

/* One `drop` rule: FROM>TO KIND [psn=N] [tx=N] [msn=N] [count=N|all]. */
struct drop_rule {
	int from_node, to_node; /* topology node indices */
	enum drop_kind kind;
	int64_t psn;   /* -1: any */
	int64_t rtx;   /* -1: any; 0: a first transmission, 1: a
			* retransmission (the BTH's retransmit flag) */
	int64_t msn;   /* -1: any */
	int64_t count; /* frames to drop; -1 = all */
};

#define LINK_MAX_WINDOWS 8
#define LINK_MAX_DROPS	 16

/* [link A B] — docs/topology.md. */
struct link_attrs {
	uint64_t rate; /* rate [400Gbps] */
	ps_t delay;    /* delay [1us] */
	double loss;   /* loss [0] probability per frame */
	struct link_window down[LINK_MAX_WINDOWS];
	int ndown;
	struct drop_rule drops[LINK_MAX_DROPS];
	int ndrops;
};

/* [emulation] */
struct emulation_attrs {
	char name[64];
	uint64_t seed;		 /* seed [1] */
	uint64_t scale;		 /* scale [2000] wall ns per virtual ns */
	ps_t until;		 /* until [0 = until the workload is done] */
	bool capture;		 /* capture [off] */
	uint64_t max_violations; /* MaxViolations [0 = no limit] */
	bool batch_scheduling;	 /* BatchScheduling [off]: daemons at max under SCHED_BATCH */
	uint8_t switch_priority; /* SwitchPriority [5]: switches' nice below NICs' at max */
	ps_t sample_interval;	 /* SampleInterval [auto]: a time, or one of: */
};

/* SampleInterval's words (config.c stores the n-th word of a time
 * attribute's list as UINT64_MAX - n). */
#define EMU_SAMPLE_AUTO UINT64_MAX	 /* about 1/200 of the run, with a report */
#define EMU_SAMPLE_OFF	(UINT64_MAX - 1) /* no samples.csv */

#endif
