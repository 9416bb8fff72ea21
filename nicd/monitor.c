/* nicd/monitor.c — the MRC Monitor (seed, Records; docs/protocol.md §12 rule 14):
 * one mrc-monitor row per packet sent or received.  With MonitorTriggers
 * all every row is written; with qp_error each QP's last MonitorHistory
 * rows are kept and written when the QP enters the error state. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nic_impl.h"

struct nic_monitor_row {
	ps_t time;
	bool tx;
	uint32_t local_qpn, remote_ip, remote_qpn;
	uint8_t opcode, dscp, rtx_origin, nack_code;
	uint32_t psn, wire_bytes;
	bool ar, rtx, sack, nack, probe_answer;
	uint16_t tx_count, entropy;
	int64_t sack_drawn;
	uint32_t sack_cack;
	int64_t sack_base;
	uint64_t bitmap;
	ps_t rtt;
};

struct monitor_history {
	struct nic_monitor_row *rows;
	uint32_t next, count;
};

static const char *origin_name(uint8_t o)
{
	static const char *const names[] = {"", "timeout", "nack", "sack_gap", "rerequest"};
	return o < sizeof(names) / sizeof(names[0]) ? names[o] : "";
}

static const char *type_name(uint8_t opcode, bool trimmed)
{
	if (trimmed)
		return "TRIMMED";
	return wire_opcode_name(opcode);
}

static void write_row(struct nic *nic, const struct nic_monitor_row *r)
{
	struct csv *c = nic->rec.monitor;
	char list[64 * 9 + 1] = "";
	size_t n = 0;

	csv_u64(c, r->time);
	csv_str(c, nic->name);
	csv_str(c, r->tx ? "tx" : "rx");
	csv_ipv4(c, nic->ip);
	csv_u64(c, r->local_qpn);
	csv_ipv4(c, r->remote_ip);
	csv_u64(c, r->remote_qpn);
	csv_str(c, r->probe_answer
		       ? "PROBE_ANSWER"
		       : type_name(r->opcode, r->dscp == nic->a.dscp_trimmed ||
						  r->dscp == nic->a.dscp_trimmed_last_hop));
	csv_u64(c, r->psn);
	csv_u64(c, r->ar);
	csv_u64(c, r->rtx);
	csv_str(c, nic_role_name(nic, r->dscp));
	csv_u64(c, r->tx_count);
	csv_str(c, origin_name(r->rtx_origin));
	csv_u64(c, r->entropy);
	csv_u64(c, r->wire_bytes);
	if (r->sack) {
		for (unsigned i = 0; i < 64; i++)
			if (r->bitmap >> i & 1)
				n += (size_t)snprintf(
				    list + n, sizeof(list) - n, "%s%u", n ? ";" : "",
				    (uint32_t)((r->sack_base + i) & WIRE_PSN_MASK));
		csv_u64(c, (uint32_t)(r->sack_drawn & WIRE_PSN_MASK));
		csv_u64(c, r->sack_cack);
		csv_str(c, list);
	} else {
		csv_str(c, "");
		csv_str(c, "");
		csv_str(c, "");
	}
	if (r->nack)
		csv_u64(c, r->nack_code);
	else
		csv_str(c, "");
	csv_u64(c, r->rtt);
	csv_end(c);
}

static struct nic_monitor_row make_row(const struct nic *nic, ps_t now, bool tx,
				       const struct pkt *p, uint32_t local_qpn, uint32_t remote_qpn,
				       ps_t rtt)
{
	struct nic_monitor_row r = {.time = now,
				    .tx = tx,
				    .local_qpn = local_qpn,
				    .remote_ip = tx ? p->dst_ip : p->src_ip,
				    .remote_qpn = remote_qpn,
				    .opcode = p->opcode,
				    .dscp = p->dscp,
				    /* a receiver cannot know why a packet was sent */
				    .rtx_origin = tx ? nic_pkt_meta(p).rtx_origin : RTX_NONE,
				    .psn = p->psn,
				    .wire_bytes = wire_len(p),
				    .ar = p->flags & WIRE_BTH_A,
				    .rtx = p->flags & WIRE_BTH_RTX,
				    .tx_count = tx ? nic_pkt_meta(p).tx_count : 0,
				    .entropy = p->sport,
				    .rtt = rtt};

	(void)nic;
	if (p->opcode == WIRE_OP_SACK && p->u.sack.seth.pr) {
		r.probe_answer = true;
	} else if (p->opcode == WIRE_OP_SACK) {
		const struct wire_seth *s = &p->u.sack.seth;
		r.sack = true;
		r.sack_cack = s->cack_psn;
		r.sack_drawn = (int64_t)s->cack_psn + s->ack_psn_offset;
		r.sack_base = (int64_t)s->cack_psn + s->sack_offset;
		r.bitmap = s->bitmap;
	} else if (p->opcode == WIRE_OP_NACK) {
		r.nack = true;
		r.nack_code = p->u.neth.code;
	}
	return r;
}

static struct monitor_history *history(struct nic *nic, uint32_t qpn)
{
	struct monitor_history *h = hmap_get(&nic->monitor, qpn);

	if (!h) {
		h = calloc(1, sizeof(*h));
		if (!h || !(h->rows = calloc(nic->a.monitor_history, sizeof(*h->rows)))) {
			free(h);
			return NULL;
		}
		if (!hmap_put(&nic->monitor, qpn, h)) {
			free(h->rows);
			free(h);
			return NULL;
		}
	}
	return h;
}

/* Called by nic_monitor (nic_impl.h) when the monitor is on. */
void nic_monitor_record(struct nic *nic, ps_t now, bool tx, const struct pkt *p, uint32_t local_qpn,
			uint32_t remote_qpn, ps_t rtt)
{
	struct nic_monitor_row r;
	struct monitor_history *h;
	const struct nic_qp_send *sq;

	r = make_row(nic, now, tx, p, local_qpn, remote_qpn, rtt);
	if (nic->a.monitor_triggers == MONITOR_ALL) {
		write_row(nic, &r);
		return;
	}
	/* Only a sending QP can enter the error state: rows of anything else
	 * are never written, and are not kept (their memory would grow with
	 * every QP number a peer names). */
	sq = hmap_get(&nic->send_qps, local_qpn);
	if (!nic->a.monitor_history || !sq || sq->error || !(h = history(nic, local_qpn)))
		return;
	h->rows[h->next] = r;
	h->next = (h->next + 1) % nic->a.monitor_history;
	if (h->count < nic->a.monitor_history)
		h->count++;
}

/* The qp_error trigger: the QP's kept rows, oldest first. */
void nic_monitor_qp_error(struct nic *nic, uint32_t qpn, ps_t now)
{
	struct monitor_history *h;
	uint32_t n;

	(void)now;
	if (!nic->a.monitor || !nic->rec.monitor || nic->a.monitor_triggers != MONITOR_QP_ERROR)
		return;
	if (!(h = hmap_get(&nic->monitor, qpn)))
		return;
	n = nic->a.monitor_history;
	for (uint32_t i = 0; i < h->count; i++)
		write_row(nic, &h->rows[(h->next + n - h->count + i) % n]);
	nic_monitor_forget(nic, qpn);
}

uint64_t nic_monitor_kept(const struct nic *nic)
{
	return nic->monitor.count;
}

void nic_monitor_forget(struct nic *nic, uint32_t qpn)
{
	struct monitor_history *h = hmap_del(&nic->monitor, qpn);

	if (h) {
		free(h->rows);
		free(h);
	}
}

void nic_monitor_free_all(struct nic *nic)
{
	for (size_t i = 0; nic->monitor.slots && i <= nic->monitor.mask; i++) {
		struct monitor_history *h = nic->monitor.slots[i].val;
		if (h) {
			free(h->rows);
			free(h);
		}
	}
	hmap_destroy(&nic->monitor);
}
