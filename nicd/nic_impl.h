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
 * total_<name> and ivl_total_<name>, in this order.  They lead struct
 * nic_counters by the event that counts them, a cache line each (issue 16:
 * at 1,024 hosts each line a packet touches in its NIC is a wait): RX, a
 * data packet's arrival, its SACK and cumulative ACK; TX, a data frame's
 * end and a SACK's arrival; COLD, the rest.  rx_ooo_events, counted by
 * most arrivals at 1,024 hosts, was on a cold line of its own there
 * (callgrind: 40k misses in 65k arrivals; 122.5 -> 122.0 LL misses a
 * data packet). */
/* clang-format off */
#define NIC_COUNTERS(X) \
	X(tx_data_pkts, TX) \
	X(tx_data_bytes, TX) \
	X(tx_retx_pkts, TX) \
	X(retx_timeout, COLD) \
	X(retx_nack, COLD) \
	X(retx_sack_gap, COLD) \
	X(tx_ack, RX) \
	X(tx_sack, RX) \
	X(tx_nack, COLD) \
	X(tx_probe, COLD) \
	X(tx_ar_pkts, TX) \
	X(completion_rerequests, COLD) \
	X(rx_data_pkts, RX) \
	X(rx_data_bytes, RX) \
	X(rx_dup_pkts, RX) \
	X(rx_ooo_events, RX) \
	X(rx_trimmed, RX) \
	X(rx_ack, TX) \
	X(rx_sack, TX) \
	X(rx_nack, TX) \
	X(rx_nack_unknown, COLD) \
	X(rx_probe, COLD) \
	X(rx_drop_ingress_full, COLD) \
	X(rx_drop_unknown_qp, COLD) \
	X(rx_for_closed_qp, COLD) \
	X(rx_drop_max_qps, COLD) \
	X(rx_drop_port_down, COLD) \
	X(rx_drop_psn_window, COLD) \
	X(rx_drop_not_for_us, COLD) \
	X(rx_drop_qp_error, COLD) \
	X(rx_pattern_errors, COLD) \
	X(tx_drop_link_lost, COLD) \
	X(tx_drop_link_down, COLD) \
	X(tx_drop_rule, COLD) \
	X(tx_drop_ctl_pool, COLD) \
	X(msgs_posted, COLD) \
	X(msgs_refused, COLD) \
	X(msgs_completed, COLD) \
	X(msgs_received, COLD) \
	X(qp_error, COLD) \
	X(qps_created, COLD) \
	X(qps_closed, COLD) \
	X(rx_qp_evicted, COLD) \
	X(closed_record_evicted, COLD) \
	X(timeouts_ignored, COLD) \
	X(rtt_samples, TX) \
	X(pcie_write_bytes, RX) \
	X(probes_answered, COLD) \
	X(dest_evicted, COLD) \
	X(remote_qpn_replaced, COLD) \
	X(rx_drop_ack_inconsistent, COLD) \
	X(tx_drop_port_down, COLD) \
	X(rx_drop_ack_unknown_qp, COLD) \
	X(rx_drop_no_memory, COLD) \
	X(tx_drop_no_memory, COLD)
/* clang-format on */

#define NIC_COUNTER_RX_RX(n) uint64_t n;
#define NIC_COUNTER_RX_TX(n)
#define NIC_COUNTER_RX_COLD(n)
#define NIC_COUNTER_TX_RX(n)
#define NIC_COUNTER_TX_TX(n) uint64_t n;
#define NIC_COUNTER_TX_COLD(n)
#define NIC_COUNTER_COLD_RX(n)
#define NIC_COUNTER_COLD_TX(n)
#define NIC_COUNTER_COLD_COLD(n) uint64_t n;
#define NIC_COUNTER_RX(n, t)	 NIC_COUNTER_RX_##t(n)
#define NIC_COUNTER_TX(n, t)	 NIC_COUNTER_TX_##t(n)
#define NIC_COUNTER_COLD(n, t)	 NIC_COUNTER_COLD_##t(n)

struct nic_counters {
	NIC_COUNTERS(NIC_COUNTER_RX)
	NIC_COUNTERS(NIC_COUNTER_TX)
	NIC_COUNTERS(NIC_COUNTER_COLD)
	uint64_t rx_drop_wire[WIRE_ERROR_COUNT];
};
_Static_assert(offsetof(struct nic_counters, pcie_write_bytes) < 64 &&
		   offsetof(struct nic_counters, tx_data_pkts) == 64 &&
		   offsetof(struct nic_counters, rtt_samples) < 128,
	       "an arrival's counters in one cache line, a frame end's and a SACK's in the next");

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

/* A data packet's segment record, after the meta and the port's queued
 * length in the engine field (port.c), not in the meta: the meta is
 * passed by value, in two registers while it is 16 bytes.  Set when the
 * packet is built: nic_seg(seg_idx) then, and so while seg_idx is held
 * (at or past the cumulative PSN: a chunk of segments is freed only once
 * it is passed, and never made again).  The frame's end finds it without
 * the QP's table of chunks, a cache line of its own at 1,024 hosts
 * (issue 16).  NULL in any other packet (pkt_get zeroes the field). */
#define NIC_PKT_SEG_AT 24
_Static_assert(NIC_PKT_SEG_AT >= sizeof(struct nic_pkt_meta) + sizeof(uint32_t) &&
		   NIC_PKT_SEG_AT + sizeof(struct nic_seg *) <= sizeof(((struct pkt *)0)->engine),
	       "a packet's segment after its meta and queued length");

static inline struct nic_seg *nic_pkt_seg(const struct pkt *p)
{
	struct nic_seg *s;

	memcpy(&s, p->engine + NIC_PKT_SEG_AT, sizeof s);
	return s;
}

static inline void nic_pkt_seg_set(struct pkt *p, struct nic_seg *s)
{
	memcpy(p->engine + NIC_PKT_SEG_AT, &s, sizeof s);
}

/* The transmission a data packet is: its count and why (sendq.c, recovery.c). */
static inline void nic_pkt_transmission(struct pkt *p, uint16_t tx_count, enum rtx_origin why)
{
	struct nic_pkt_meta m = nic_pkt_meta(p);

	m.tx_count = tx_count;
	m.rtx_origin = (uint8_t)why;
	nic_pkt_meta_set(p, m);
}

/* A QP group (seed, QP groups and the transmit scheduler).  A fetch, a
 * hand-off and a SACK read its window, a SACK all of its NSCC state, and
 * at 1,024 hosts it is out of the cache at each (issue 16): the scheduler's
 * and congestion control's parts fill two cache lines (qp.c aligns the
 * group on one), what only a QP's opening and closing read the third. */
struct nic_group {
	struct nic_sched_group sched; /* sched.c's: the list and the turns */
	struct nic_cc cc;	      /* cc.c's: the window and NSCC */
	uint32_t peer_ip;
	uint32_t refs; /* send and receive sides that belong to it */
	bool keyed;    /* in nic->groups (QPGroupsEnabled) */
};
_Static_assert(offsetof(struct nic_group, peer_ip) == 128, "a group's hot part in two lines");

/* One row of the monitor's history (qp_error trigger). */
struct nic_monitor_row;

/* What a packet's path reads, sending or receiving, comes first, each
 * room's hot part on its own cache lines: at 1,024 hosts a NIC is out of
 * the cache between two of its frames, and each line a packet touches is
 * a wait (issue 16).  The attributes a packet asks are the first line of
 * `a` (core/attrs.h), its counters the first of `c`. */
struct nic {
	_Alignas(64) struct nic_attrs a;
	/* A frame's first 16 bytes, its MACs and source address, as they
	 * open a struct pkt: nic_pkt_new copies them at once. */
	_Alignas(64) uint8_t peer_mac[6];
	uint8_t mac[6];
	uint32_t ip;
	uint32_t unit;	       /* MSS + 60 (+4 with WireTimestamp) */
	uint16_t seg_overhead; /* a data packet's IP datagram less its payload */
	/* port.c's: set by the control socket (nic_port_set_down).  Here,
	 * not in struct nic_port: every frame received asks it before its
	 * address, on this line, and the port's line it was on cost 103k
	 * misses in 131k arrivals (callgrind, 1,024 hosts: 129.4 -> 128.6 LL
	 * misses a data packet; issue 16). */
	bool port_down;
	/* A SACK's MPR field, MaxPSNRange / 128 at most 255: computed once,
	 * here in the padding (issue 16, callgrind at 8 hosts: 5
	 * instructions a packet fewer). */
	uint8_t sack_mpr;
	struct pkt_pool *pool;
	struct events *ev;
	/* a.monitor, nic_monitor's test, on this line: with the QP's and
	 * the group's copies of the rest (sendq.h, cc.h), a SACK's arrival
	 * reads no line of the attributes (issue 16, callgrind at 1,024
	 * hosts: 120.7 -> 119.8 LL misses a data packet) */
	bool monitor_on;
	struct nic_host host;
	struct timers *timers;		    /* retransmission timers (core/timers.h) */
	struct nic_sched sched;		    /* sched.c's */
	struct hmap send_qps;		    /* qpn -> nic_qp_send: a hit reads this line */
	_Alignas(64) struct nic_recv recv;  /* the receiving side's tables (recv.h) */
	struct nic_dests dests;		    /* spray.c's */
	_Alignas(64) struct nic_pcie pcie;  /* pcie.c's */
	_Alignas(64) struct nic_port port;  /* port.c's: its hot part first */
	_Alignas(64) struct nic_counters c; /* totals: a packet's first */
	/* cc.c's: NSCC's parameters, 64 bytes a SACK reads, on a line of
	 * their own (after the counters' 568 they straddled two) */
	_Alignas(64) struct nic_cc_params ccp;

	/* the rest */
	char name[32];
	bool own_timers;
	struct nic_records rec;
	struct rng rng;
	struct hmap groups;  /* peer ip -> nic_group */
	struct hmap monitor; /* qpn -> kept rows (MonitorTriggers qp_error) */
	uint32_t next_qpn;
	uint64_t open_msgs;
	struct nic_counters ivl; /* totals at the last row */
	uint64_t cwnd_min, cwnd_max;
	events_id stats_timer;
	ps_t last_stats;
	uint64_t stats_rows;
	uint64_t sample_rx; /* rx_data_bytes at the last samples.csv row */
	ps_t sample_at;
};

_Static_assert(offsetof(struct nic, pool) == offsetof(struct nic, peer_mac) + 24,
	       "the SACK's MPR in the padding of the addresses' line");
_Static_assert(offsetof(struct nic, host.transmit) < offsetof(struct nic, peer_mac) + 64 &&
		   offsetof(struct nic, send_qps.last) < offsetof(struct nic, peer_mac) + 128,
	       "a frame's start and its monitor test on the addresses' line, a SACK's timers, "
	       "turns and QP look-up on the next");

/* qp.c — QP groups and QP numbers */
struct nic_group *nic_group_get(struct nic *nic, uint32_t peer_ip);
void nic_group_put(struct nic *nic, struct nic_group *g);
/* Free a group whatever its references (the NIC's end). */
void nic_group_free(struct nic_group *g);
uint32_t nic_qpn_alloc(struct nic *nic);

/* A frame from this NIC to dst_ip, its headers but the transport's filled;
 * NULL (counted) when the packet pool is empty.  Inline: three frames a
 * data packet, and the call was a quarter of its 42 instructions (issue
 * 16, callgrind at 8 hosts). */
static inline void nic_pkt_fill_as(struct nic *nic, struct pkt *p, uint32_t dst_ip, uint8_t opcode,
				   uint16_t sport, bool icrc)
{
	_Static_assert(offsetof(struct pkt, src_mac) == 6 && offsetof(struct pkt, src_ip) == 12 &&
			   offsetof(struct nic, mac) == offsetof(struct nic, peer_mac) + 6 &&
			   offsetof(struct nic, ip) == offsetof(struct nic, peer_mac) + 12,
		       "a frame opens as the NIC keeps its addresses");
	memcpy(p, nic->peer_mac, 16);
	p->dst_ip = dst_ip;
	p->ttl = WIRE_TTL;
	p->sport = sport;
	p->dport = WIRE_ROCE_PORT;
	p->opcode = opcode;
	p->icrc = icrc;
}

static inline void nic_pkt_fill(struct nic *nic, struct pkt *p, uint32_t dst_ip, uint8_t opcode,
				uint16_t sport)
{
	nic_pkt_fill_as(nic, p, dst_ip, opcode, sport, nic->a.icrc);
}

/* ... with the ICRC flag given (a data packet's, its QP's copy). */
static inline struct pkt *nic_pkt_new_as(struct nic *nic, uint32_t dst_ip, uint8_t opcode,
					 uint16_t sport, bool icrc)
{
	struct pkt *p = pkt_get(nic->pool);

	if (!p) {
		nic->c.tx_drop_no_memory++;
		return NULL;
	}
	nic_pkt_fill_as(nic, p, dst_ip, opcode, sport, icrc);
	return p;
}

static inline struct pkt *nic_pkt_new(struct nic *nic, uint32_t dst_ip, uint8_t opcode,
				      uint16_t sport)
{
	return nic_pkt_new_as(nic, dst_ip, opcode, sport, nic->a.icrc);
}

/* The same frame in p, a packet this NIC holds (a received frame it is
 * done with), zeroed first as pkt_get zeroes, by twelve 16-byte stores
 * (core/wire.c's pkt_zero: a memset of this size is `rep stos`). */
static inline void nic_pkt_renew(struct nic *nic, struct pkt *p, uint32_t dst_ip, uint8_t opcode,
				 uint16_t sport)
{
	typedef unsigned long long pkt_words __attribute__((vector_size(16), may_alias));
	pkt_words *w = (pkt_words *)p;

	_Static_assert(sizeof(*p) == 12 * sizeof(pkt_words), "twelve stores");
	w[0] = w[1] = w[2] = w[3] = w[4] = w[5] = (pkt_words){0};
	w[6] = w[7] = w[8] = w[9] = w[10] = w[11] = (pkt_words){0};
	nic_pkt_fill(nic, p, dst_ip, opcode, sport);
}

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
	if (nic->monitor_on && nic->rec.monitor)
		nic_monitor_record(nic, now, tx, p, local_qpn, remote_qpn, rtt);
}
void nic_monitor_qp_error(struct nic *nic, uint32_t qpn, ps_t now);
void nic_monitor_forget(struct nic *nic, uint32_t qpn);
void nic_monitor_free_all(struct nic *nic);
void nic_cwnd_seen(struct nic *nic, struct nic_group *g, const char *cause, ps_t now);
const char *nic_role_name(const struct nic *nic, uint8_t dscp);

#endif
