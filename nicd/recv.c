/* nicd/recv.c — the receiving side's QPs (recv.h): found or opened by the
 * first packet of a message, listed by last activity so that MaxQps
 * pressure evicts the right one, closed into a closed record that answers
 * for them (seed, Receiving a packet; docs/protocol.md §12 rule 11). */
#include <stdio.h>
#include <stdlib.h>

#include "core/lines.h"
#include "nic_impl.h"

static uint64_t src_key(uint32_t ip, uint32_t qpn)
{
	return (uint64_t)ip << 24 | (qpn & WIRE_QPN_MASK);
}

void nic_recv_init(struct nic *nic)
{
	hmap_init(&nic->recv.qps);
	hmap_init(&nic->recv.by_src);
	hmap_init(&nic->recv.closed);
	hmap_init(&nic->recv.closed_by_src);
}

bool nic_recv_qpn_taken(const struct nic *nic, uint32_t q)
{
	return hmap_get(&nic->recv.qps, q) || hmap_get(&nic->recv.closed, q);
}

/* ---- the lists of open receiving QPs by last activity ------------------ */

static void lru_unlink(struct nic *nic, struct nic_qp_recv *rq)
{
	struct nic_recv_lru *l = &nic->recv.lru[rq->lru];

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
	struct nic_recv_lru *l = &nic->recv.lru[rq->lru];

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
	uint8_t lru = rq->next_expected ? LRU_ADVANCED : LRU_FRESH;

	rq->last_activity = now;
	/* Already the most recent of its list: moving it would leave the list
	 * as it is.  With a message or so a NIC, nearly every packet (issue
	 * 16: the unlink and append cost some 25 instructions a packet). */
	if (rq->lru == lru && nic->recv.lru[lru].tail == rq)
		return;
	lru_unlink(nic, rq);
	rq->lru = lru;
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

/* A receiving QP is on a cache line (recv.h), one a message. */
static void rq_dealloc(struct nic_qp_recv *rq)
{
	lines_free_one(rq);
}

static void recv_free(struct nic *nic, struct nic_qp_recv *rq)
{
	hmap_del(&nic->recv.qps, rq->qpn);
	hmap_del(&nic->recv.by_src, src_key(rq->peer_ip, rq->sender_qpn));
	lru_unlink(nic, rq);
	NIC_DEC(nic->recv.nopen);
	nic_group_put(nic, rq->group);
	nic_dest_put(nic, rq->dest);
	free(rq->held);
	rq_dealloc(rq);
}

/* §12 rule 11: MaxQps pressure evicts the least recently active receiving
 * QP among those that never advanced their cumulative PSN, else the least
 * recently active of all; its message is reported failed, with the reason,
 * and counted. */
static void recv_evict(struct nic *nic, ps_t now)
{
	struct nic_qp_recv *rq = nic->recv.lru[LRU_FRESH].head ? nic->recv.lru[LRU_FRESH].head
							       : nic->recv.lru[LRU_ADVANCED].head;
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

	if (nic->recv.nopen >= nic->a.max_qps)
		recv_evict(nic, now);
	rq = lines_calloc_one(sizeof(*rq));
	if (!rq || !recv_alloc_held(nic, rq)) {
		rq_dealloc(rq);
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
	bool indexed =
	    rq->dest && (!nic->a.qp_groups || rq->group) && hmap_put(&nic->recv.qps, rq->qpn, rq);

	if (indexed && !hmap_put(&nic->recv.by_src, src_key(rq->peer_ip, rq->sender_qpn), rq)) {
		hmap_del(&nic->recv.qps, rq->qpn);
		indexed = false;
	}
	if (!indexed) {
		nic_group_put(nic, rq->group);
		nic_dest_put(nic, rq->dest);
		free(rq->held);
		rq_dealloc(rq);
		nic->c.rx_drop_max_qps++;
		return NULL;
	}
	nic->recv.nopen++;
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
		rq = hmap_get(&nic->recv.qps, p->dqpn);
		return rq && rq->peer_ip == p->src_ip ? rq : NULL;
	}
	rq = hmap_get(&nic->recv.by_src, src_key(p->src_ip, p->dqpn));
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
		c = hmap_get(&nic->recv.closed_by_src, src_key(p->src_ip, p->dqpn));
	else
		c = hmap_get(&nic->recv.closed, p->dqpn);
	return c && c->peer_ip == p->src_ip && (uint16_t)c->msg_id == p->msn ? c : NULL;
}

static void closed_drop_oldest(struct nic *nic)
{
	struct nic_closed *c = nic->recv.closed_oldest;

	nic->recv.closed_oldest = c->newer;
	if (!nic->recv.closed_oldest)
		nic->recv.closed_newest = NULL;
	hmap_del(&nic->recv.closed, c->qpn);
	hmap_del(&nic->recv.closed_by_src, src_key(c->peer_ip, c->sender_qpn));
	NIC_DEC(nic->recv.nclosed);
	free(c);
}

/* Keep a closed record, the oldest dropped first and counted; without
 * memory for it the QP is simply gone. */
static void closed_keep(struct nic *nic, const struct nic_qp_recv *rq)
{
	struct nic_closed *c;

	if (nic->recv.nclosed >= nic->a.max_closed_records) {
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
	if (!hmap_put(&nic->recv.closed, c->qpn, c)) {
		free(c);
		return;
	}
	if (!hmap_put(&nic->recv.closed_by_src, src_key(c->peer_ip, c->sender_qpn), c)) {
		hmap_del(&nic->recv.closed, c->qpn);
		free(c);
		return;
	}
	if (nic->recv.closed_newest)
		nic->recv.closed_newest->newer = c;
	else
		nic->recv.closed_oldest = c;
	nic->recv.closed_newest = c;
	nic->recv.nclosed++;
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
	while (nic->recv.lru[LRU_FRESH].head)
		recv_free(nic, nic->recv.lru[LRU_FRESH].head);
	while (nic->recv.lru[LRU_ADVANCED].head)
		recv_free(nic, nic->recv.lru[LRU_ADVANCED].head);
	while (nic->recv.closed_oldest)
		closed_drop_oldest(nic);
	hmap_destroy(&nic->recv.qps);
	hmap_destroy(&nic->recv.by_src);
	hmap_destroy(&nic->recv.closed);
	hmap_destroy(&nic->recv.closed_by_src);
}

/* Each open QP is in both tables and on one list, each closed record in
 * both its tables and on the list oldest first; each QP's count of held
 * PSNs is its bitmap's; the ingress pools are within their sizes. */
const char *nic_recv_check(const struct nic *nic, char *why, size_t len)
{
	const struct nic_recv *r = &nic->recv;
	uint64_t open = 0, closed = 0;

	for (int l = 0; l < 2; l++)
		for (const struct nic_qp_recv *rq = r->lru[l].head; rq; rq = rq->lru_next) {
			uint64_t held = 0;
			for (uint64_t w = 0; w <= rq->held_mask / 64; w++)
				held += (uint64_t)__builtin_popcountll(rq->held[w]);
			if (held != rq->nheld) {
				snprintf(why, len, "receive QP nheld %llu, PSNs held %llu",
					 (unsigned long long)rq->nheld, (unsigned long long)held);
				return why;
			}
			open++;
		}
	for (const struct nic_closed *k = r->closed_oldest; k; k = k->newer)
		closed++;
	if (r->nopen != r->qps.count || open != r->qps.count || r->by_src.count != r->qps.count)
		snprintf(why, len,
			 "nrecv_open %llu, receive QPs %llu listed, %llu and %llu in the tables",
			 (unsigned long long)r->nopen, (unsigned long long)open,
			 (unsigned long long)r->qps.count, (unsigned long long)r->by_src.count);
	else if (r->nclosed != closed || r->closed.count != closed)
		snprintf(why, len, "nclosed %llu, closed records %llu",
			 (unsigned long long)r->nclosed, (unsigned long long)closed);
	else if (r->ingress_data_used > nic->a.ingress_data_pool ||
		 r->ingress_ctl_used > nic->a.ingress_control_pool)
		snprintf(why, len, "ingress pools used %llu and %llu, past their sizes",
			 (unsigned long long)r->ingress_data_used,
			 (unsigned long long)r->ingress_ctl_used);
	else
		return NULL;
	return why;
}
