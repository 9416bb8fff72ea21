/* nicd/stats.c — the NIC's records (seed, Records; docs/records.md):
 * mrc-transport-stats every TransportStatsReportInterval, mrc-events,
 * mrc-monitor (triggers all and qp_error, docs/protocol.md §12 rule 14) and
 * mrc-cc. */
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "nic_impl.h"

const char NIC_EVENTS_HEADER[] =
    "time_ps,node,event,local_ip,local_qpn,remote_ip,remote_qpn,msg_id,bytes";
const char NIC_MONITOR_HEADER[] =
    "time_ps,node,direction,local_ip,local_qpn,remote_ip,remote_qpn,packet_type,bth_psn,"
    "ar_bit,rtx_bit,dscp,tx_count,rtx_origin,entropy,wire_bytes,sack_drawn_psn,sack_cack,"
    "sack_bitmap_psns,nack_code,rtt_ps";
const char NIC_CC_HEADER[] = "time_ps,node,remote_ip,cwnd,inflight,cause";

static const char *const counter_names[] = {
#define NIC_COUNTER_NAME(n, t) #n,
    NIC_COUNTERS(NIC_COUNTER_NAME)
#undef NIC_COUNTER_NAME
};
#define NCOUNTERS (sizeof(counter_names) / sizeof(counter_names[0]))

/* Where each counter is: the records' order is not the struct's (the
 * counters of a packet lead it, nic_impl.h). */
static const uint16_t counter_offsets[] = {
#define NIC_COUNTER_OFFSET(n, t) offsetof(struct nic_counters, n),
    NIC_COUNTERS(NIC_COUNTER_OFFSET)
#undef NIC_COUNTER_OFFSET
};

static uint64_t *counter_at(struct nic_counters *c, size_t i)
{
	return (uint64_t *)((char *)c + counter_offsets[i]);
}

static size_t counter_count(void)
{
	return NCOUNTERS + WIRE_ERROR_COUNT - 1; /* WIRE_OK is no drop */
}

/* rx_drop_<reason> for every wire error but WIRE_OK, written once. */
static const char *counter_name(size_t i)
{
	static char rx_drop[WIRE_ERROR_COUNT][48];

	if (i < NCOUNTERS)
		return counter_names[i];
	i -= NCOUNTERS - 1;
	if (!rx_drop[i][0])
		snprintf(rx_drop[i], sizeof(rx_drop[i]), "rx_drop_%s",
			 wire_error_name((enum wire_error)i));
	return rx_drop[i];
}

static uint64_t *counter_ref(struct nic_counters *c, size_t i)
{
	return i < NCOUNTERS ? counter_at(c, i) : &c->rx_drop_wire[i - NCOUNTERS + 1];
}

bool nic_counter_at(const struct nic *nic, size_t i, struct counter *c)
{
	if (i >= counter_count())
		return false;
	c->name = counter_name(i);
	c->value = *counter_ref((struct nic_counters *)&nic->c, i);
	return true;
}

const char *nic_stats_header(void)
{
	static char header[8192];
	size_t n;

	if (header[0])
		return header;
	n = (size_t)snprintf(header, sizeof(header), "time_ps,node,local_ip");
	for (size_t i = 0; i < counter_count(); i++) {
		const char *c = counter_name(i);
		n += (size_t)snprintf(header + n, sizeof(header) - n, ",total_%s,ivl_total_%s", c,
				      c);
	}
	snprintf(header + n, sizeof(header) - n, ",cwnd_min,cwnd_max");
	return header;
}

uint64_t nic_counter(const struct nic *nic, const char *name)
{
	struct counter c;

	for (size_t i = 0; nic_counter_at(nic, i, &c); i++)
		if (!strcmp(c.name, name))
			return c.value;
	return UINT64_MAX;
}

/* The window of every group with a sending QP counts in the interval's
 * cwnd_min and cwnd_max, whether or not it changed. */
static void cwnd_fold_open(struct nic *nic)
{
	for (size_t i = 0; nic->send_qps.slots && i <= nic->send_qps.mask; i++) {
		const struct nic_qp_send *sq = nic->send_qps.slots[i].val;
		if (!sq)
			continue;
		if (sq->group->cc.cwnd < nic->cwnd_min)
			nic->cwnd_min = sq->group->cc.cwnd;
		if (sq->group->cc.cwnd > nic->cwnd_max)
			nic->cwnd_max = sq->group->cc.cwnd;
	}
}

/* One row for the NIC: totals so far and the interval since the last row. */
void nic_stats_row(struct nic *nic, ps_t now)
{
	struct csv *c = nic->rec.stats;

	if (!c || !nic->a.transport_stats)
		return;
	cwnd_fold_open(nic);
	csv_u64(c, now);
	csv_str(c, nic->name);
	csv_ipv4(c, nic->ip);
	for (size_t i = 0; i < counter_count(); i++) {
		uint64_t total = *counter_ref(&nic->c, i), *last = counter_ref(&nic->ivl, i);
		csv_u64(c, total);
		csv_u64(c, total - *last);
		*last = total;
	}
	csv_u64(c, nic->cwnd_min == UINT64_MAX ? 0 : nic->cwnd_min);
	csv_u64(c, nic->cwnd_max);
	csv_end(c);
	nic->cwnd_min = UINT64_MAX;
	nic->cwnd_max = 0;
	nic->last_stats = now;
	nic->stats_rows++;
}

static void stats_tick(void *arg, ps_t now)
{
	struct nic *nic = arg;

	nic_stats_row(nic, now);
	nic->stats_timer = events_schedule(nic->ev, now + nic->a.stats_interval, stats_tick, nic);
}

void nic_stats_start(struct nic *nic)
{
	nic->cwnd_min = UINT64_MAX;
	if (nic->rec.stats && nic->a.transport_stats && nic->a.stats_interval)
		nic->stats_timer = events_schedule(nic->ev, nic->a.stats_interval, stats_tick, nic);
}

void nic_event(struct nic *nic, ps_t now, const char *what, uint32_t local_qpn, uint32_t remote_ip,
	       uint32_t remote_qpn, uint64_t msg_id, uint64_t bytes)
{
	struct csv *c = nic->rec.events;

	if (!c || !nic->a.event_logging)
		return;
	csv_u64(c, now);
	csv_str(c, nic->name);
	csv_str(c, what);
	csv_ipv4(c, nic->ip);
	csv_u64(c, local_qpn);
	csv_ipv4(c, remote_ip);
	csv_u64(c, remote_qpn);
	csv_u64(c, msg_id);
	csv_u64(c, bytes);
	csv_end(c);
}

void nic_cwnd_seen(struct nic *nic, struct nic_group *g, const char *cause, ps_t now)
{
	if (g->cc.cwnd < nic->cwnd_min)
		nic->cwnd_min = g->cc.cwnd;
	if (g->cc.cwnd > nic->cwnd_max)
		nic->cwnd_max = g->cc.cwnd;
	if (!nic->rec.cc || !nic->a.cc_trace)
		return;
	csv_u64(nic->rec.cc, now);
	csv_str(nic->rec.cc, nic->name);
	csv_ipv4(nic->rec.cc, g->peer_ip);
	csv_u64(nic->rec.cc, g->cc.cwnd);
	csv_u64(nic->rec.cc, g->cc.inflight);
	csv_str(nic->rec.cc, cause);
	csv_end(nic->rec.cc);
}

/* ---- samples.csv (emulator/host/samples.h) ----------------------------------- */

struct group_ref {
	uint32_t peer_ip, qpn;
	const struct nic_group *g;
};

static int cmp_group_ref(const void *a, const void *b)
{
	const struct group_ref *x = a, *y = b;

	if (x->peer_ip != y->peer_ip)
		return x->peer_ip < y->peer_ip ? -1 : 1;
	return x->qpn < y->qpn ? -1 : x->qpn > y->qpn;
}

static void sample_cells(struct csv *c, ps_t now, const char *node, const char *kind)
{
	csv_u64(c, now);
	csv_str(c, node);
	csv_str(c, kind);
	for (int e = 0; e < 8; e++) /* the switch queue columns */
		csv_str(c, "");
}

/* Entropy values in SKIP and in ASSUMED_BAD, over every destination. */
static void spray_states(const struct nic *nic, uint64_t *skip, uint64_t *bad)
{
	*skip = *bad = 0;
	for (size_t i = 0; nic->dests.by_ip.slots && i <= nic->dests.by_ip.mask; i++) {
		const struct nic_dest *d = nic->dests.by_ip.slots[i].val;
		if (!d)
			continue;
		*bad += d->nbad;
		for (uint32_t k = 0; k < nic->a.entropy_count; k++)
			*skip += d->state[k] == EV_SKIP;
	}
}

/* The NIC's delivered payload bytes and goodput since its last sample, its
 * entropy values in SKIP and ASSUMED_BAD,
 * then the cwnd and bytes in flight of every group that has a sending QP,
 * by peer address (and QPN, for groups of one QP). */
void nic_sample(struct nic *nic, struct csv *c, ps_t now)
{
	size_t n = 0, cap = nic->send_qps.count;
	struct group_ref *refs = cap ? malloc(cap * sizeof(*refs)) : NULL;
	ps_t dt = now - nic->sample_at;
	uint64_t skip, bad;

	spray_states(nic, &skip, &bad);
	sample_cells(c, now, nic->name, "nic");
	csv_u64(c, nic->c.rx_data_bytes);
	csv_u64(c, dt ? (uint64_t)((double)(nic->c.rx_data_bytes - nic->sample_rx) * 8 *
				   (double)PS_PER_S / (double)dt)
		      : 0);
	csv_u64(c, skip);
	csv_u64(c, bad);
	for (int e = 0; e < 3; e++)
		csv_str(c, "");
	csv_end(c);
	nic->sample_rx = nic->c.rx_data_bytes;
	nic->sample_at = now;
	for (size_t i = 0; refs && i <= nic->send_qps.mask; i++) {
		const struct nic_qp_send *sq = nic->send_qps.slots[i].val;
		if (sq && sq->group && n < cap)
			refs[n++] = (struct group_ref){sq->peer_ip, sq->qpn, sq->group};
	}
	if (n) /* qsort's array may not be NULL, even empty */
		qsort(refs, n, sizeof(*refs), cmp_group_ref);
	for (size_t i = 0; i < n; i++) {
		if (i && refs[i].g == refs[i - 1].g)
			continue;
		sample_cells(c, now, nic->name, "group");
		for (int e = 0; e < 4; e++) /* the NIC columns */
			csv_str(c, "");
		csv_ipv4(c, refs[i].peer_ip);
		csv_u64(c, refs[i].g->cc.cwnd);
		csv_u64(c, refs[i].g->cc.inflight);
		csv_end(c);
	}
	free(refs);
}

/* docs/protocol.md §3: the role a codepoint names. */
const char *nic_role_name(const struct nic *nic, uint8_t dscp)
{
	const struct nic_attrs *a = &nic->a;

	if (dscp == a->dscp_trimmable)
		return "trimmable";
	if (dscp == a->dscp_trimmable_retx)
		return "trimmable_retx";
	if (dscp == a->dscp_no_trim)
		return "no_trim";
	if (dscp == a->dscp_control)
		return "control";
	if (dscp == a->dscp_trimmed)
		return "trimmed";
	if (dscp == a->dscp_trimmed_last_hop)
		return "trimmed_last_hop";
	return "other";
}
