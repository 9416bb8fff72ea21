/* nicd/qp.c — queue pairs, QP groups and destinations (seed, Queue pairs
 * and messages; QP groups; docs/protocol.md §12 rules 11 and 12). */
#include <stdlib.h>
#include <string.h>

#include "nic_impl.h"

/* With QPGroupsEnabled every QP with one peer, sending or receiving,
 * belongs to that peer's group; the group lives while any of them does
 * (§12 rule 12).  Without it, each sending side has a group of its own. */
struct nic_group *nic_group_get(struct nic *nic, uint32_t peer_ip)
{
	struct nic_group *g = NULL;

	if (nic->a.qp_groups)
		g = hmap_get(&nic->groups, peer_ip);
	if (!g) {
		g = calloc(1, sizeof(*g));
		if (!g)
			return NULL;
		g->peer_ip = peer_ip;
		nic_cc_init(nic, g);
		if (nic->a.qp_groups) {
			g->keyed = true;
			hmap_put(&nic->groups, peer_ip, g);
		}
	}
	g->refs++;
	return g;
}

void nic_group_put(struct nic *nic, struct nic_group *g)
{
	if (!g || --g->refs)
		return;
	nic_ready_remove(nic, g);
	if (g->keyed)
		hmap_del(&nic->groups, g->peer_ip);
	free(g);
}

struct nic_dest *nic_dest_get(struct nic *nic, uint32_t ip)
{
	struct nic_dest *d = hmap_get(&nic->dests, ip);

	if (!d) {
		d = calloc(1, sizeof(*d));
		if (!d || !(d->state = calloc(nic->a.entropy_count, 1))) {
			free(d);
			return NULL;
		}
		d->nic = nic;
		d->ip = ip;
		hmap_put(&nic->dests, ip, d);
	}
	return d;
}

static uint64_t src_key(uint32_t ip, uint32_t qpn)
{
	return (uint64_t)ip << 24 | (qpn & WIRE_QPN_MASK);
}

static void recv_idle(void *arg, ps_t now);

/* Bits for every PSN up to MaxPSNRange beyond the cumulative PSN. */
static bool recv_alloc_held(struct nic *nic, struct nic_qp_recv *rq)
{
	uint64_t bits = 64;

	while (bits < (uint64_t)nic->a.max_psn_range + 1)
		bits <<= 1;
	rq->held = calloc(bits / 64, sizeof(uint64_t));
	rq->held_mask = bits - 1;
	return rq->held != NULL;
}

static struct nic_qp_recv *recv_create(struct nic *nic, const struct pkt *p, ps_t now)
{
	struct nic_qp_recv *rq;

	if (nic->nrecv_open >= nic->a.max_qps) {
		nic->c.rx_drop_max_qps++;
		return NULL;
	}
	rq = calloc(1, sizeof(*rq));
	if (!rq || !recv_alloc_held(nic, rq)) {
		free(rq);
		nic->c.rx_drop_max_qps++;
		return NULL;
	}
	rq->nic = nic;
	rq->qpn = nic->next_qpn++;
	rq->peer_ip = p->src_ip;
	rq->sender_qpn = p->dqpn;
	rq->dest = nic_dest_get(nic, p->src_ip);
	if (nic->a.qp_groups)
		rq->group = nic_group_get(nic, p->src_ip);
	rq->last_activity = now;
	hmap_put(&nic->recv_qps, rq->qpn, rq);
	hmap_put(&nic->recv_by_src, src_key(rq->peer_ip, rq->sender_qpn), rq);
	nic->nrecv_open++;
	nic->c.qps_created++;
	nic_event(nic, now, "QP_CREATED", rq->qpn, rq->peer_ip, rq->sender_qpn, 0, 0);
	rq->timer = events_schedule(nic->ev, now + 8 * nic->a.initial_ack_timeout, recv_idle, rq);
	return rq;
}

/* The receiving side is found by our QP number, or, while the sender has
 * not learned it (C = 1), by (source address, the sender's QP number); the
 * first packet of a message to arrive creates it (seed, Receiving a packet). */
struct nic_qp_recv *nic_recv_find_or_create(struct nic *nic, const struct pkt *p, ps_t now,
					    bool *created)
{
	struct nic_qp_recv *rq;

	*created = false;
	if (!(p->flags & WIRE_BTH_C)) {
		rq = hmap_get(&nic->recv_qps, p->dqpn);
		return rq && rq->peer_ip == p->src_ip ? rq : NULL;
	}
	rq = hmap_get(&nic->recv_by_src, src_key(p->src_ip, p->dqpn));
	if (rq)
		return rq;
	*created = true;
	return recv_create(nic, p, now);
}

static void recv_free(struct nic *nic, struct nic_qp_recv *rq)
{
	hmap_del(&nic->recv_qps, rq->qpn);
	hmap_del(&nic->recv_by_src, src_key(rq->peer_ip, rq->sender_qpn));
	free(rq->held);
	free(rq);
}

/* Leave the open set: the QP no longer counts against MaxQps nor keeps its
 * group alive. */
static void recv_leave(struct nic *nic, struct nic_qp_recv *rq)
{
	nic->nrecv_open--;
	nic_group_put(nic, rq->group);
	rq->group = NULL;
}

static void recv_linger_end(void *arg, ps_t now)
{
	struct nic_qp_recv *rq = arg;

	(void)now;
	recv_free(rq->nic, rq);
}

/* §12 rule 11: a receiving QP that sees no packet for 8 x InitialAckTimeout
 * before completing is reclaimed and counted. */
static void recv_idle(void *arg, ps_t now)
{
	struct nic_qp_recv *rq = arg;
	struct nic *nic = rq->nic;
	ps_t idle = 8 * nic->a.initial_ack_timeout;

	if (now < rq->last_activity + idle) {
		rq->timer = events_schedule(nic->ev, rq->last_activity + idle, recv_idle, rq);
		return;
	}
	nic->c.qps_reclaimed++;
	nic_event(nic, now, "QP_RECLAIMED", rq->qpn, rq->peer_ip, rq->sender_qpn, 0, 0);
	recv_leave(nic, rq);
	recv_free(nic, rq);
}

/* §12 rule 11: the receiving side closes once it is RECV_COMPLETE and has
 * sent the cumulative ACK that covers the last packet, then lingers as a
 * closed record for 4 x InitialAckTimeout, answering duplicates. */
void nic_recv_close(struct nic *nic, struct nic_qp_recv *rq, ps_t now)
{
	if (rq->closed)
		return;
	rq->closed = true;
	events_cancel(nic->ev, rq->timer);
	nic->c.qps_closed++;
	nic_event(nic, now, "QP_CLOSED", rq->qpn, rq->peer_ip, rq->sender_qpn, 0, rq->dma_len);
	recv_leave(nic, rq);
	rq->timer =
	    events_schedule(nic->ev, now + 4 * nic->a.initial_ack_timeout, recv_linger_end, rq);
}

/* What a completion or a failure tells the host about a sending side. */
struct nic_msg_info nic_send_info(const struct nic *nic, const struct nic_qp_send *sq)
{
	return (struct nic_msg_info){.msg_id = sq->msg_id,
				     .src_ip = nic->ip,
				     .dst_ip = sq->peer_ip,
				     .local_qpn = sq->qpn,
				     .remote_qpn = sq->remote_qpn,
				     .bytes = sq->bytes,
				     .posted = sq->posted,
				     .retransmissions = sq->retransmissions};
}

/* An mrc-events row for a sending side. */
void nic_send_event(struct nic *nic, const struct nic_qp_send *sq, const char *what, ps_t now)
{
	nic_event(nic, now, what, sq->qpn, sq->peer_ip, sq->remote_qpn, sq->msg_id, sq->bytes);
}

/* §12 rule 11: the sending side closes at MSG_COMPLETE. */
void nic_send_close(struct nic *nic, struct nic_qp_send *sq, ps_t now)
{
	events_cancel(nic->ev, sq->rerequest);
	nic->c.qps_closed++;
	nic_send_event(nic, sq, "QP_CLOSED", now);
	nic_turn_remove(sq->group, sq);
	nic_spray_senders(nic, sq->dest, -1, now);
	/* What it retired may have opened the window for the others. */
	nic_sched_update(nic, sq->group);
	nic_group_put(nic, sq->group);
	hmap_del(&nic->send_qps, sq->qpn);
	free(sq->ring);
	free(sq);
}

/* Seed, Retransmission timer and retry budget: a QP in the error state
 * sends nothing more, its timers are ignored and its message never
 * completes.  It stays (for the report) but leaves its group's turns. */
void nic_qp_error(struct nic *nic, struct nic_qp_send *sq, ps_t now)
{
	if (sq->error)
		return;
	sq->error = true;
	nic->c.qp_error++;
	for (uint64_t i = sq->snd_una; i < sq->next_fetch; i++) {
		struct nic_seg *s = nic_seg(sq, i);
		nic_timer_stop(nic, s);
		nic_seg_leave_flight(nic, sq, s);
	}
	events_cancel(nic->ev, sq->rerequest);
	sq->rtx_head = sq->rtx_tail = NULL;
	nic_spray_senders(nic, sq->dest, -1, now);
	nic_turn_remove(sq->group, sq);
	nic_sched_update(nic, sq->group);
	sq->rtx_pending = 0;
	nic_send_event(nic, sq, "QP_ERROR", now);
	nic_monitor_qp_error(nic, sq->qpn, now);
	if (nic->host.failed) {
		struct nic_msg_info m = nic_send_info(nic, sq);
		nic->host.failed(nic->host.ctx, &m, now);
	}
}
