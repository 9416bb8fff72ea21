/* nicd/nic.c — the engine's door (nic.h): creating and freeing a NIC,
 * frames in, probes answered, the final report.  The doorbell
 * (nic_post_message) is the sending side's (sendq.c). */
#include <stdlib.h>
#include <string.h>

#include "core/lines.h"
#include "nic_impl.h"

struct nic *nic_new(const struct nic_params *prm)
{
	struct nic *nic = lines_calloc(1, sizeof(*nic));

	if (!nic)
		return NULL;
	snprintf(nic->name, sizeof(nic->name), "%s", prm->name);
	nic->a = *prm->attrs;
	nic->ip = nic->a.ip;
	nic->monitor_on = nic->a.monitor;
	memcpy(nic->mac, prm->mac, 6);
	memcpy(nic->peer_mac, prm->peer_mac, 6);
	nic->ev = prm->events;
	nic->timers = prm->timers;
	if (!nic->timers) {
		nic->timers = timers_new(nic->ev);
		nic->own_timers = true;
		if (!nic->timers) {
			free(nic);
			return NULL;
		}
	}
	nic->pool = prm->pool;
	nic->host = prm->host;
	nic->rec = prm->records;
	rng_seed(&nic->rng, prm->seed, prm->name);
	nic_port_init(nic, prm->rate, prm->link);
	nic->unit = nic->a.mss + 60 + (nic->a.rtt_mode == RTT_WIRE_TIMESTAMP ? 4 : 0);
	nic->seg_overhead = (uint16_t)nic_seg_nominal_overhead(&nic->a); /* some 60 bytes */
	nic->sack_mpr =
	    (uint8_t)(nic->a.max_psn_range / 128 > 255 ? 255 : nic->a.max_psn_range / 128);
	nic->next_qpn = FIRST_QPN;
	hmap_init(&nic->send_qps);
	nic_recv_init(nic);
	hmap_init(&nic->groups);
	nic_dests_init(nic);
	hmap_init(&nic->monitor);
	nic_pcie_init(nic, prm->elide_before);
	nic_cc_setup(nic);
	nic_stats_start(nic);
	return nic;
}

static void free_groups(struct hmap *m)
{
	for (size_t i = 0; m->slots && i <= m->mask; i++)
		if (m->slots[i].val)
			nic_group_free(m->slots[i].val);
	hmap_destroy(m);
}

void nic_free(struct nic *nic)
{
	if (!nic)
		return;
	nic_send_free_all(nic);
	nic_recv_free_all(nic);
	/* Groups are owned by their QPs' references; free what is left. */
	free_groups(&nic->groups);
	nic_dests_free(nic);
	nic_monitor_free_all(nic);
	nic_port_free(nic);
	nic_pcie_destroy(nic);
	if (nic->own_timers)
		timers_free(nic->timers);
	free(nic);
}

/* docs/protocol.md §1: a probe is answered with a SACK to QP 2 with PR = 1, the
 * probe id as ack_psn_offset, its entropy echoed and all PSN fields 0. */
static void answer_probe(struct nic *nic, const struct pkt *p, ps_t now)
{
	struct pkt *a = nic_pkt_new(nic, p->src_ip, WIRE_OP_SACK, p->sport);

	nic->c.rx_probe++;
	if (!a)
		return;
	a->dscp = nic->a.dscp_control;
	a->dqpn = WIRE_ENDPOINT_QPN;
	a->u.sack.seth.pr = true;
	a->u.sack.seth.m = p->ecn == WIRE_ECN_CE ? WIRE_M_SKIP_ONCE : WIRE_M_NONE;
	a->u.sack.seth.ack_psn_offset = (int16_t)p->u.peth.probe_id;
	a->u.sack.seth.entropy_echo = p->sport;
	a->u.sack.seth.cc_type = 1;
	a->u.sack.cc.ts_echo = p->u.peth.ts;
	nic->c.tx_sack++;
	nic_port_send_control(nic, a, now);
}

void nic_receive(struct nic *nic, struct pkt *p, ps_t now)
{
	p->sent_len = (uint16_t)wire_len(p);
	nic_receive_sent(nic, p, now);
}

void nic_receive_sent(struct nic *nic, struct pkt *p, ps_t now)
{
	NIC_INVARIANT(p->sent_len == wire_len(p));
	if (nic->port_down) { /* a frame that reaches a down port is not received */
		nic->c.rx_drop_port_down++;
	} else if (p->dst_ip != nic->ip) {
		nic->c.rx_drop_not_for_us++;
	} else {
		/* §12 rule 18: the transmit pass runs again on a cumulative ACK,
		 * a SACK (PR = 0) and a NACK; data, probes and probe answers do
		 * not retry a pass the egress pool blocked. */
		/* Tests in turn, not a switch: its jump table (a bounds test, two
		 * loads and an indirect jump) cost more than the two or three
		 * tests a data packet's three frames take (issue 16, callgrind
		 * at 8 hosts: 7 instructions a packet fewer). */
		enum wire_kind kind = wire_kind_of(p->opcode);
		bool retry = true;
		if (kind == WIRE_KIND_DATA) {
			if (nic_rx_data(nic, p, now))
				return; /* p is its SACK now */
			retry = false;
		} else if (kind == WIRE_KIND_SACK) {
			retry = !p->u.sack.seth.pr;
			nic_rx_sack(nic, p, now);
		} else if (kind == WIRE_KIND_ACK) {
			nic_rx_ack(nic, p, now);
		} else if (kind == WIRE_KIND_NACK) {
			nic_rx_nack(nic, p, now);
		} else {
			answer_probe(nic, p, now);
			retry = false;
		}
		if (retry)
			nic_tx_pass(nic, now);
	}
	pkt_put(nic->pool, p);
}

void nic_receive_frame(struct nic *nic, const uint8_t *frame, size_t len, ps_t now)
{
	struct pkt *p = pkt_get(nic->pool);
	enum wire_error e;

	if (!p) {
		nic->c.rx_drop_no_memory++;
		return;
	}
	e = wire_parse(frame, len, nic->a.icrc, p);
	if (e != WIRE_OK) {
		nic->c.rx_drop_wire[e]++;
		pkt_put(nic->pool, p);
		return;
	}
	nic_receive(nic, p, now);
}

void nic_each_open(const struct nic *nic, void (*fn)(void *ctx, const struct nic_msg_info *m),
		   void *ctx)
{
	for (size_t i = 0; nic->send_qps.slots && i <= nic->send_qps.mask; i++) {
		const struct nic_qp_send *sq = nic->send_qps.slots[i].val;
		if (sq) {
			struct nic_msg_info m = nic_send_info(nic, sq);
			fn(ctx, &m);
		}
	}
}

uint64_t nic_open_messages(const struct nic *nic)
{
	return nic->open_msgs;
}

static const char *stuck_reason(const struct nic_qp_send *sq)
{
	if (sq->error)
		return "QP in the error state (retry budget spent)";
	if (!sq->send_complete)
		return "not every packet sent yet";
	if (sq->outstanding)
		return "packets still unacknowledged";
	return "waiting for the cumulative ACK";
}

void nic_finish(struct nic *nic, ps_t now, FILE *report)
{
	NIC_CHECK(nic);
	/* A run that ends on a stats tick has written its final row already. */
	if (!nic->stats_rows || nic->last_stats != now)
		nic_stats_row(nic, now);
	if (!report)
		return;
	for (size_t i = 0; nic->send_qps.slots && i <= nic->send_qps.mask; i++) {
		const struct nic_qp_send *sq = nic->send_qps.slots[i].val;
		char dst[16];
		if (!sq)
			continue;
		fprintf(report,
			"%s: message %llu (%llu bytes to %s) did not complete: %s, "
			"%llu of %llu packets acknowledged\n",
			nic->name, (unsigned long long)sq->msg_id, (unsigned long long)sq->bytes,
			ipv4_format(sq->peer_ip, dst, sizeof(dst)), stuck_reason(sq),
			(unsigned long long)(sq->next_fetch - sq->outstanding),
			(unsigned long long)sq->npkts);
	}
}
