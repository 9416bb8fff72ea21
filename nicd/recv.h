/* nicd/recv.h — the receiving side (seed: Receiving a packet; Cumulative
 * acknowledgements; Selective acknowledgements; NACKs; docs/protocol.md §12
 * rules 4, 5, 11 and 17): the ingress pools, each receiving QP with its
 * held PSNs, the acknowledgements and NACKs it builds, the tables of open
 * QPs (with their lists by last activity, for MaxQps) and the closed
 * records that answer for QPs gone.
 *
 * The receiving side is the only code that changes a struct nic_recv, a
 * struct nic_qp_recv or a struct nic_closed: rx.c (a data packet's path),
 * ack.c (building ACKs, SACKs and NACKs) and recv.c (opening, evicting and
 * closing QPs, closed records).  The engine hands it data packets
 * (nic_rx_data); PCIe gives ingress room back as each write is accepted
 * (nic_ingress_release). */
#ifndef NICD_RECV_H
#define NICD_RECV_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/hmap.h"
#include "core/time.h"
#include "core/wire.h"

struct nic;
struct nic_group;
struct nic_dest;

/* The receiving side of a QP. */
/* A data packet reads most of it, and at 1,024 hosts it is out of the
 * cache at each (issue 16): recv.c puts it on a cache line
 * (lines_calloc_one), and what a data packet and its SACK read fills the
 * first two, widest first; the third holds what only a message's last
 * packet, a marked gap (§12 rule 17), a payload's pattern and the lists
 * read.  In their order before, by width alone, a data packet read all
 * three (callgrind, 1,024 hosts: 123.5 -> 122.5 LL misses a data
 * packet). */
struct nic_qp_recv {
	/* -- lines 0 and 1: a data packet's */
	struct nic_dest *dest;
	uint64_t next_expected; /* cumulative PSN + 1, as an index */
	uint64_t *held;		/* out-of-order PSNs, bits by idx & held_mask */
	uint64_t held_mask;
	uint64_t nheld;
	uint64_t highest_held;
	uint64_t msg_id; /* from RETH VA: the sender's message index */
	uint64_t dma_len;
	uint64_t bytes_unique; /* delivered once, not duplicates */
	ps_t last_activity;

	uint32_t qpn;
	uint32_t peer_ip;
	uint32_t sender_qpn;
	uint32_t sack_block; /* round robin over held blocks */
	uint32_t coalesce;   /* bytes counted since the last SACK (§12 r5) */
	uint32_t rcv_units;  /* CC_STATE received bytes, 256-byte units */

	bool last_known;
	bool ar_marked; /* (§12 rule 17) */
	bool recv_complete;
	bool dma_known;
	bool bad_offset;
	uint8_t lru; /* which list: enum recv_lru */

	struct nic *nic;
	struct nic_group *group;

	/* -- line 2: the rarer */
	uint64_t last_idx; /* the message's last packet, when known */
	uint64_t ar_mark;  /* gaps below it were open at an ACK-request */
	uint64_t pattern_errors;
	/* The NIC's lists of open receiving QPs by last activity, one for
	 * those that never advanced their cumulative PSN and one for the
	 * others: MaxQps evicts from their heads (§12 rule 11). */
	struct nic_qp_recv *lru_prev, *lru_next;
};
_Static_assert(offsetof(struct nic_qp_recv, group) + sizeof(struct nic_group *) <= 128 &&
		   offsetof(struct nic_qp_recv, last_idx) == 128 &&
		   sizeof(struct nic_qp_recv) <= 192,
	       "a data packet's fields of a receiving QP in two cache lines, the rest in a third");

enum recv_lru { LRU_FRESH, LRU_ADVANCED };

struct nic_recv_lru {
	struct nic_qp_recv *head, *tail; /* least recently active first */
};

/* What a closed receiving side leaves (§12 rule 11): enough to answer
 * later packets of its QP as the open QP would have, in at most 64 bytes.
 * Kept oldest first, at most MaxClosedRecords. */
struct nic_closed {
	uint32_t peer_ip, qpn, sender_qpn;
	uint32_t msg_id;    /* the message index (20 bits) */
	uint32_t cack_psn;  /* final cumulative PSN */
	uint32_t rcv_units; /* final CC_STATE received bytes */
	struct nic_closed *newer;
};

/* The NIC's receiving side.  What every data packet reads first, in one
 * cache line when the struct starts one (struct nic). */
struct nic_recv {
	uint64_t ingress_data_used; /* the ingress pools */
	uint64_t ingress_ctl_used;
	struct nic_recv_lru lru[2]; /* open receiving QPs, enum recv_lru */
	struct hmap qps;	    /* qpn -> nic_qp_recv */
	struct hmap by_src;	    /* (peer ip << 24 | sender qpn) -> nic_qp_recv */
	uint64_t nopen;		    /* receiving QPs counted against MaxQps */
	struct hmap closed;	    /* qpn -> nic_closed */
	struct hmap closed_by_src;  /* (peer ip << 24 | sender qpn) -> nic_closed */
	struct nic_closed *closed_oldest, *closed_newest;
	uint64_t nclosed;
};

/* ---- rx.c --------------------------------------------------------------- */

/* A data packet has arrived (seed, Receiving a packet).  True when p
 * became the SACK it drew (nic_send_sack_in): the caller does not give it
 * back to the pool then. */
bool nic_rx_data(struct nic *nic, struct pkt *p, ps_t now);
/* pcie.c: a receive write was accepted; its ingress pool space is free. */
void nic_ingress_release(struct nic *nic, uint32_t pool_bytes, bool control);

/* ---- ack.c: building, internal to the receiving side --------------------- */

void nic_send_cack(struct nic *nic, struct nic_qp_recv *rq, ps_t now);
void nic_send_sack(struct nic *nic, struct nic_qp_recv *rq, const struct pkt *drawn,
		   uint64_t drawn_idx, ps_t now);
/* The same, built in drawn itself, which the caller gives up. */
void nic_send_sack_in(struct nic *nic, struct nic_qp_recv *rq, struct pkt *drawn,
		      uint64_t drawn_idx, ps_t now);
void nic_send_nack(struct nic *nic, const struct pkt *drawn, uint32_t responder_qpn,
		   uint32_t sender_qpn, uint8_t code, ps_t now);

/* ---- recv.c ------------------------------------------------------------- */

void nic_recv_init(struct nic *nic);
/* At the end: every receiving QP and closed record. */
void nic_recv_free_all(struct nic *nic);
/* Whether QP number q is open or held by a closed record (§12 rule 11). */
bool nic_recv_qpn_taken(const struct nic *nic, uint32_t q);

/* Internal to the receiving side. */
struct nic_qp_recv *nic_recv_find_or_create(struct nic *nic, const struct pkt *p, ps_t now,
					    bool *created);
void nic_recv_touch(struct nic *nic, struct nic_qp_recv *rq, ps_t now);
struct nic_closed *nic_closed_find(const struct nic *nic, const struct pkt *p);
void nic_recv_close(struct nic *nic, struct nic_qp_recv *rq, ps_t now);

/* The tables' and each QP's own invariants: NULL, or what is broken,
 * written in why. */
const char *nic_recv_check(const struct nic *nic, char *why, size_t len);

#endif
