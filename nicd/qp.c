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
			if (!hmap_put(&nic->groups, peer_ip, g)) {
				free(g);
				return NULL;
			}
		}
	}
	g->refs++;
	return g;
}

void nic_group_put(struct nic *nic, struct nic_group *g)
{
	if (!g)
		return;
	NIC_DEC(g->refs);
	if (g->refs)
		return;
	nic_ready_remove(nic, g);
	if (g->keyed)
		hmap_del(&nic->groups, g->peer_ip);
	free(g);
}

static uint64_t src_key(uint32_t ip, uint32_t qpn)
{
	return (uint64_t)ip << 24 | (qpn & WIRE_QPN_MASK);
}

static bool qpn_taken(const struct nic *nic, uint32_t q)
{
	return hmap_get(&nic->send_qps, q) || hmap_get(&nic->recv_qps, q) ||
	       hmap_get(&nic->closed, q);
}

/* §12 rule 11: one allocator for both sides, upward, 24 bits, skipping 0,
 * 1 and 2 (reserved; probes use 2) and every number still open or held by
 * a closed record.  MaxQps and MaxClosedRecords keep far fewer than 2^24
 * numbers in use, so a free one is always found. */
uint32_t nic_qpn_alloc(struct nic *nic)
{
	for (;;) {
		uint32_t q = nic->next_qpn;
		nic->next_qpn = q >= WIRE_QPN_MASK ? WIRE_ENDPOINT_QPN + 1 : q + 1;
		if (!qpn_taken(nic, q))
			return q;
	}
}

/* ---- the lists of open receiving QPs by last activity ------------------ */

static void lru_unlink(struct nic *nic, struct nic_qp_recv *rq)
{
	struct nic_recv_lru *l = &nic->lru[rq->lru];

	if (rq->lru_prev)
		rq->lru_prev->lru_next = rq->lru_next;
	else
		l->head = rq->lru_next;
	if (rq->lru_next)
		rq->lru_next->lru_prev = rq->lru_prev;
	else
		l->tail = rq->lru_prev;
	rq->lru_prev = rq->lru_next = NULL;
}

static void lru_append(struct nic *nic, struct nic_qp_recv *rq)
{
	struct nic_recv_lru *l = &nic->lru[rq->lru];

	rq->lru_next = NULL;
	rq->lru_prev = l->tail;
	if (l->tail)
		l->tail->lru_next = rq;
	else
		l->head = rq;
	l->tail = rq;
}

/* A packet of the QP arrived: it becomes the most recently active. */
void nic_recv_touch(struct nic *nic, struct nic_qp_recv *rq, ps_t now)
{
	rq->last_activity = now;
	lru_unlink(nic, rq);
	rq->lru = rq->next_expected ? LRU_ADVANCED : LRU_FRESH;
	lru_append(nic, rq);
}

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

static void recv_free(struct nic *nic, struct nic_qp_recv *rq)
{
	hmap_del(&nic->recv_qps, rq->qpn);
	hmap_del(&nic->recv_by_src, src_key(rq->peer_ip, rq->sender_qpn));
	lru_unlink(nic, rq);
	NIC_DEC(nic->nrecv_open);
	nic_group_put(nic, rq->group);
	nic_dest_put(nic, rq->dest);
	free(rq->held);
	free(rq);
}

/* §12 rule 11: MaxQps pressure evicts the least recently active receiving
 * QP among those that never advanced their cumulative PSN, else the least
 * recently active of all; its message is reported failed, with the reason,
 * and counted. */
static void recv_evict(struct nic *nic, ps_t now)
{
	struct nic_qp_recv *rq =
	    nic->lru[LRU_FRESH].head ? nic->lru[LRU_FRESH].head : nic->lru[LRU_ADVANCED].head;
	struct nic_msg_info m;

	if (!rq)
		return;
	m = (struct nic_msg_info){.msg_id = rq->msg_id,
				  .src_ip = rq->peer_ip,
				  .dst_ip = nic->ip,
				  .local_qpn = rq->qpn,
				  .remote_qpn = rq->sender_qpn,
				  .bytes = rq->dma_len,
				  .why = "its receiving QP was evicted (MaxQps)"};
	nic->c.rx_qp_evicted++;
	nic_event(nic, now, "QP_EVICTED", rq->qpn, rq->peer_ip, rq->sender_qpn, rq->msg_id,
		  rq->dma_len);
	recv_free(nic, rq);
	if (m.msg_id && nic->host.failed)
		nic->host.failed(nic->host.ctx, &m, now);
}

static struct nic_qp_recv *recv_create(struct nic *nic, const struct pkt *p, ps_t now)
{
	struct nic_qp_recv *rq;

	if (nic->nrecv_open >= nic->a.max_qps)
		recv_evict(nic, now);
	rq = calloc(1, sizeof(*rq));
	if (!rq || !recv_alloc_held(nic, rq)) {
		free(rq);
		nic->c.rx_drop_max_qps++;
		return NULL;
	}
	rq->nic = nic;
	rq->qpn = nic_qpn_alloc(nic);
	rq->peer_ip = p->src_ip;
	rq->sender_qpn = p->dqpn;
	/* Seed, Packets on the wire: every data packet names the message (RETH
	 * VA) and its length, so the QP knows them from its first, unless a
	 * switch trimmed RETH away. */
	if (!nic_is_trimmed(nic, p)) {
		rq->msg_id = (uint32_t)(p->va / WIRE_VA_MSG_STRIDE);
		rq->dma_len = p->dma_len;
		rq->dma_known = true;
	}
	rq->dest = nic_dest_get(nic, p->src_ip);
	if (nic->a.qp_groups)
		rq->group = nic_group_get(nic, p->src_ip);
	if (!rq->dest || (nic->a.qp_groups && !rq->group) ||
	    !hmap_put(&nic->recv_qps, rq->qpn, rq)) {
		nic_group_put(nic, rq->group);
		nic_dest_put(nic, rq->dest);
		free(rq->held);
		free(rq);
		nic->c.rx_drop_max_qps++;
		return NULL;
	}
	if (!hmap_put(&nic->recv_by_src, src_key(rq->peer_ip, rq->sender_qpn), rq)) {
		hmap_del(&nic->recv_qps, rq->qpn);
		nic_group_put(nic, rq->group);
		nic_dest_put(nic, rq->dest);
		free(rq->held);
		free(rq);
		nic->c.rx_drop_max_qps++;
		return NULL;
	}
	nic->nrecv_open++;
	nic->c.qps_created++;
	rq->last_activity = now;
	lru_append(nic, rq);
	nic_event(nic, now, "QP_CREATED", rq->qpn, rq->peer_ip, rq->sender_qpn, rq->msg_id,
		  rq->dma_len);
	return rq;
}

/* The receiving side is found by our QP number, or, while the sender has
 * not learned it (C = 1), by (source address, the sender's QP number); the
 * first packet of a message to arrive creates it (seed, Receiving a packet)
 * unless a closed record answers for it. */
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
	if (rq || nic_closed_find(nic, p))
		return rq;
	*created = true;
	return recv_create(nic, p, now);
}

/* ---- closed records ------------------------------------------------------ */

struct nic_closed *nic_closed_find(const struct nic *nic, const struct pkt *p)
{
	struct nic_closed *c;

	if (p->flags & WIRE_BTH_C) /* the same message (METH), not a reused number */
		c = hmap_get(&nic->closed_by_src, src_key(p->src_ip, p->dqpn));
	else
		c = hmap_get(&nic->closed, p->dqpn);
	return c && c->peer_ip == p->src_ip && (uint16_t)c->msg_id == p->msn ? c : NULL;
}

static void closed_drop_oldest(struct nic *nic)
{
	struct nic_closed *c = nic->closed_oldest;

	nic->closed_oldest = c->newer;
	if (!nic->closed_oldest)
		nic->closed_newest = NULL;
	hmap_del(&nic->closed, c->qpn);
	hmap_del(&nic->closed_by_src, src_key(c->peer_ip, c->sender_qpn));
	NIC_DEC(nic->nclosed);
	free(c);
}

/* Keep a closed record, the oldest dropped first and counted; without
 * memory for it the QP is simply gone. */
static void closed_keep(struct nic *nic, const struct nic_qp_recv *rq)
{
	struct nic_closed *c;

	if (nic->nclosed >= nic->a.max_closed_records) {
		closed_drop_oldest(nic);
		nic->c.closed_record_evicted++;
	}
	if (!(c = malloc(sizeof(*c))))
		return;
	*c = (struct nic_closed){.peer_ip = rq->peer_ip,
				 .qpn = rq->qpn,
				 .sender_qpn = rq->sender_qpn,
				 .msg_id = (uint32_t)rq->msg_id,
				 .cack_psn = (uint32_t)((rq->next_expected - 1) & WIRE_PSN_MASK),
				 .rcv_units = rq->rcv_units};
	if (!hmap_put(&nic->closed, c->qpn, c)) {
		free(c);
		return;
	}
	if (!hmap_put(&nic->closed_by_src, src_key(c->peer_ip, c->sender_qpn), c)) {
		hmap_del(&nic->closed, c->qpn);
		free(c);
		return;
	}
	if (nic->closed_newest)
		nic->closed_newest->newer = c;
	else
		nic->closed_oldest = c;
	nic->closed_newest = c;
	nic->nclosed++;
}

/* §12 rule 11: the receiving side closes once it is RECV_COMPLETE and has
 * sent the cumulative ACK that covers the last packet.  It leaves a closed
 * record, which does not keep the group alive. */
void nic_recv_close(struct nic *nic, struct nic_qp_recv *rq, ps_t now)
{
	nic->c.qps_closed++;
	nic_event(nic, now, "QP_CLOSED", rq->qpn, rq->peer_ip, rq->sender_qpn, rq->msg_id,
		  rq->dma_len);
	closed_keep(nic, rq);
	recv_free(nic, rq);
	NIC_CHECK(nic);
}

/* At the end: every receiving QP and closed record. */
void nic_recv_free_all(struct nic *nic)
{
	while (nic->lru[LRU_FRESH].head)
		recv_free(nic, nic->lru[LRU_FRESH].head);
	while (nic->lru[LRU_ADVANCED].head)
		recv_free(nic, nic->lru[LRU_ADVANCED].head);
	while (nic->closed_oldest)
		closed_drop_oldest(nic);
	hmap_destroy(&nic->recv_qps);
	hmap_destroy(&nic->recv_by_src);
	hmap_destroy(&nic->closed);
	hmap_destroy(&nic->closed_by_src);
}
