/* nicd/nic_impl.h — what the NIC engine's rooms share, and no one outside
 * nicd/ (nic.h is the engine's public door): struct nic, which holds each
 * room's state, QP groups, the counters, the bookkeeping a frame carries
 * in its engine field, and the records (stats.c, monitor.c).
 *
 * The rooms, each the only writer of its struct (docs/architecture.md,
 * Rooms):
 *   sendq.h  the sending side: segments, retransmission queue, timers,
 *            budgets (sendq.c, recovery.c)
 *   recv.h   the receiving side: held PSNs, SACK building, closed records,
 *            ingress pools (rx.c, ack.c, recv.c)
 *   cc.h     congestion control of a group (cc.c)
 *   spray.h  destinations and their entropy values (spray.c)
 *   pcie.h   the PCIe link (pcie.c)
 *   sched.h  the transmit scheduler (sched.c)
 *   port.h   the port: egress pools, control ahead of data (port.c, over
 *            core/egress.h)
 * check.c walks every room's invariants (nic_check). */
#ifndef NICD_NIC_IMPL_H
#define NICD_NIC_IMPL_H

#include <string.h>

#include "cc.h"
#include "core/egress.h"
#include "core/hmap.h"
#include "core/invariant.h"
#include "core/ring.h"
#include "core/rng.h"
#include "core/timers.h"
#include "nic.h"
#include "pcie.h"
#include "port.h"
#include "recv.h"
#include "sched.h"
#include "sendq.h"
#include "spray.h"

/* Counters of mrc-transport-stats (docs/records.md), each written as
 * total_<name> and ivl_total_<name>. */
/* clang-format off */
#define NIC_COUNTERS(X) \
	X(tx_data_pkts) \
	X(tx_data_bytes) \
	X(tx_retx_pkts) \
	X(retx_timeout) \
	X(retx_nack) \
	X(retx_sack_gap) \
	X(tx_ack) \
	X(tx_sack) \
	X(tx_nack) \
	X(tx_probe) \
	X(tx_ar_pkts) \
	X(completion_rerequests) \
	X(rx_data_pkts) \
	X(rx_data_bytes) \
	X(rx_dup_pkts) \
	X(rx_ooo_events) \
	X(rx_trimmed) \
	X(rx_ack) \
	X(rx_sack) \
	X(rx_nack) \
	X(rx_nack_unknown) \
	X(rx_probe) \
	X(rx_drop_ingress_full) \
	X(rx_drop_unknown_qp) \
	X(rx_for_closed_qp) \
	X(rx_drop_max_qps) \
	X(rx_drop_port_down) \
	X(rx_drop_psn_window) \
	X(rx_drop_not_for_us) \
	X(rx_drop_qp_error) \
	X(rx_pattern_errors) \
	X(tx_drop_link_lost) \
	X(tx_drop_link_down) \
	X(tx_drop_rule) \
	X(tx_drop_ctl_pool) \
	X(msgs_posted) \
	X(msgs_refused) \
	X(msgs_completed) \
	X(msgs_received) \
	X(qp_error) \
	X(qps_created) \
	X(qps_closed) \
	X(rx_qp_evicted) \
	X(closed_record_evicted) \
	X(timeouts_ignored) \
	X(rtt_samples) \
	X(pcie_write_bytes) \
	X(probes_answered) \
	X(dest_evicted) \
	X(remote_qpn_replaced) \
	X(rx_drop_ack_inconsistent) \
	X(tx_drop_port_down) \
	X(rx_drop_ack_unknown_qp) \
	X(rx_drop_no_memory) \
	X(tx_drop_no_memory)
/* clang-format on */

struct nic_counters {
#define NIC_COUNTER_FIELD(n) uint64_t n;
	NIC_COUNTERS(NIC_COUNTER_FIELD)
#undef NIC_COUNTER_FIELD
	uint64_t rx_drop_wire[WIRE_ERROR_COUNT];
};

/* The engine's invariants (core/invariant.h); nic_check walks them all. */
#define NIC_INVARIANT(cond) INVARIANT(cond)
#define NIC_SUB(v, x)	    SUB_COUNT(v, x)
#define NIC_DEC(v)	    SUB_COUNT(v, 1)
#ifdef MRCEMU_CHECK_INVARIANTS
#define NIC_CHECK(nic)                                                                             \
	do {                                                                                       \
		char buf_[160];                                                                    \
		INVARIANT_HOLDS(nic_check(nic, buf_, sizeof(buf_)));                               \
	} while (0)
#else
#define NIC_CHECK(nic) ((void)0)
#endif

#define FIRST_QPN 0x100 /* QPs 0..2 are reserved (2 is the probe endpoint) */

_Static_assert(sizeof(struct nic_pkt_meta) <= sizeof(((struct pkt *)0)->engine),
	       "struct nic_pkt_meta fits in struct pkt's engine field");

static inline struct nic_pkt_meta nic_pkt_meta(const struct pkt *p)
{
	struct nic_pkt_meta m;

	memcpy(&m, p->engine, sizeof m);
	return m;
}

static inline void nic_pkt_meta_set(struct pkt *p, struct nic_pkt_meta m)
{
	memcpy(p->engine, &m, sizeof m);
}

/* The transmission a data packet is: its count and why (sendq.c, recovery.c). */
static inline void nic_pkt_transmission(struct pkt *p, uint16_t tx_count, enum rtx_origin why)
{
	struct nic_pkt_meta m = nic_pkt_meta(p);

	m.tx_count = tx_count;
	m.rtx_origin = (uint8_t)why;
	nic_pkt_meta_set(p, m);
}

/* A QP group (seed, QP groups and the transmit scheduler). */
struct nic_group {
	uint32_t peer_ip;
	uint32_t refs;		      /* send and receive sides that belong to it */
	bool keyed;		      /* in nic->groups (QPGroupsEnabled) */
	struct nic_sched_group sched; /* sched.c's: the list and the turns */
	struct nic_cc cc;	      /* cc.c's: the window and NSCC */
};

/* One row of the monitor's history (qp_error trigger). */
struct nic_monitor_row;

struct nic {
	char name[32];
	struct nic_attrs a;
	uint32_t ip;
	uint8_t mac[6], peer_mac[6];
	struct events *ev;
	struct timers *timers; /* retransmission timers (core/timers.h) */
	bool own_timers;
	struct pkt_pool *pool;
	struct nic_host host;
	struct nic_records rec;
	struct rng rng;

	struct nic_port port; /* port.c's */
	struct nic_pcie pcie; /* pcie.c's */

	struct hmap send_qps;	/* qpn -> nic_qp_send */
	struct nic_recv recv;	/* the receiving side's tables (recv.h) */
	struct hmap groups;	/* peer ip -> nic_group */
	struct nic_dests dests; /* spray.c's */
	struct hmap monitor;	/* qpn -> kept rows (MonitorTriggers qp_error) */
	uint32_t next_qpn;
	uint64_t open_msgs;

	struct nic_sched sched; /* sched.c's */
	struct nic_cc_params ccp; /* cc.c's: NSCC's parameters */
	uint32_t unit;		/* MSS + 60 (+4 with WireTimestamp) */

	struct nic_counters c, ivl; /* totals; totals at the last row */
	uint64_t cwnd_min, cwnd_max;
	events_id stats_timer;
	ps_t last_stats;
	uint64_t stats_rows;
	uint64_t sample_rx; /* rx_data_bytes at the last samples.csv row */
	ps_t sample_at;
};

/* qp.c — QP groups and QP numbers */
struct nic_group *nic_group_get(struct nic *nic, uint32_t peer_ip);
void nic_group_put(struct nic *nic, struct nic_group *g);
uint32_t nic_qpn_alloc(struct nic *nic);

/* nic.c: a frame from this NIC (headers but the transport's); NULL,
 * counted, when the packet pool is empty. */
struct pkt *nic_pkt_new(struct nic *nic, uint32_t dst_ip, uint8_t opcode, uint16_t sport);

/* Seed, NACKs: a switch trimmed the packet (its codepoint says so; RETH
 * and the payload are gone). */
static inline bool nic_is_trimmed(const struct nic *nic, const struct pkt *p)
{
	return p->trimmed || p->dscp == nic->a.dscp_trimmed ||
	       p->dscp == nic->a.dscp_trimmed_last_hop;
}

/* stats.c — counters and records */
void nic_stats_start(struct nic *nic);
void nic_stats_row(struct nic *nic, ps_t now);
void nic_event(struct nic *nic, ps_t now, const char *what, uint32_t local_qpn, uint32_t remote_ip,
	       uint32_t remote_qpn, uint64_t msg_id, uint64_t bytes);
void nic_monitor_record(struct nic *nic, ps_t now, bool tx, const struct pkt *p, uint32_t local_qpn,
			uint32_t remote_qpn, ps_t rtt);
/* Every packet passes here; with the monitor off (the default) it costs a
 * test, not a call. */
static inline void nic_monitor(struct nic *nic, ps_t now, bool tx, const struct pkt *p,
			       uint32_t local_qpn, uint32_t remote_qpn, ps_t rtt)
{
	if (nic->a.monitor && nic->rec.monitor)
		nic_monitor_record(nic, now, tx, p, local_qpn, remote_qpn, rtt);
}
void nic_monitor_qp_error(struct nic *nic, uint32_t qpn, ps_t now);
void nic_monitor_forget(struct nic *nic, uint32_t qpn);
void nic_monitor_free_all(struct nic *nic);
void nic_cwnd_seen(struct nic *nic, struct nic_group *g, const char *cause, ps_t now);
const char *nic_role_name(const struct nic *nic, uint8_t dscp);

#endif
