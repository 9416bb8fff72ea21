/* nicd/sendq.h — the sending side of a queue pair (seed: Queue pairs and
 * messages; Segmentation; Fetching the payload; Retransmission ahead of new
 * data; Loss detection from SACK gaps; NACKs; Retransmission timer and
 * retry budget; Completion): its segments and their states, the
 * retransmission queue, the timers and the two retry budgets, and what
 * acknowledgements do to them.
 *
 * The sending side is the only code that changes a struct nic_qp_send or a
 * struct nic_seg: sendq.c (the doorbell, segments, fetches and hand-off,
 * the retransmission queue, closing and the error state) and recovery.c
 * (acknowledgements applied, losses found, timers, completion).  The
 * others go through this door: the scheduler asks whether a QP has work
 * and for its next packet, the port reports each data frame's start and
 * end of serialization, the engine hands it acknowledgements. */
#ifndef NICD_SENDQ_H
#define NICD_SENDQ_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/attrs.h"
#include "core/events.h"
#include "core/ring.h"
#include "core/time.h"
#include "core/timers.h"
#include "core/wire.h"
#include "port.h"
#include "sched.h"

struct nic;
struct nic_group;
struct nic_dest;

/* Why a data packet was transmitted (mrc-monitor rtx_origin). */
enum rtx_origin { RTX_NONE, RTX_TIMEOUT, RTX_NACK, RTX_SACK_GAP, RTX_REREQUEST };

/* Sender-side state of one segment (seed: the QP's "record of the packets
 * it has sent and not yet seen acknowledged"). */
enum seg_state {
	SEG_FREE,
	SEG_FETCHING,	 /* payload on its way over PCIe */
	SEG_EGRESS,	 /* built, in the egress queue or on the wire */
	SEG_OUTSTANDING, /* sent, its retransmission timer running */
	SEG_RTX_QUEUED,	 /* waiting for its turn to be sent again */
	SEG_RETIRED,	 /* acknowledged */
};

struct nic_qp_send;

/* What the sender keeps of a segment from its fetch until the cumulative
 * PSN passes it (seed: the QP's "record of the packets it has sent and not
 * yet seen acknowledged").  Its index, QP and length are derived
 * (nic_seg_idx, nic_seg_sq, nic_seg_len); the start of its last
 * serialization is kept apart (nic_seg_tx_start), because RTT samples read
 * it after the segment is retired. */
struct nic_seg {
	timers_id timer;    /* retransmission timer, 0 = none */
	uint16_t ev;	    /* entropy value of the last transmission */
	uint16_t tx_count;  /* transmissions so far */
	uint16_t timeouts;  /* timeout retransmissions (budget, §12 r7) */
	uint16_t nacks;	    /* NACK retransmissions (their own budget) */
	uint8_t sched_k;    /* which timer of the schedule runs next */
	uint8_t state;	    /* enum seg_state */
	uint8_t rtx_origin; /* enum rtx_origin of the queued retransmission */
	uint8_t pos;	    /* its place in its chunk */
	bool inflight;	    /* counted in the group's bytes in flight */
	bool gap_queued;    /* a SACK gap queued it (at most once) */
};

/* Segments live in chunks of consecutive indices, made as the fetches
 * reach them and freed once the cumulative PSN has passed them, so a QP
 * holds about what it has in flight, not its whole PSN window (issue 16).
 * A segment does not move while it lives: its timer points to it. */
#define NIC_SEG_CHUNK 32 /* segments per chunk, at most (a power of two) */

struct nic_seg_chunk {
	struct nic_qp_send *sq;
	uint64_t first; /* index of segs[0] */
	struct nic_seg segs[];
};

/* The sending side of a QP: one message (the Chakra workload).
 *
 * At 1,024 hosts a QP is out of the cache between two of its frames
 * (issue 16), so its fields are grouped by the events that read them, a
 * cache line each (the QP is allocated on a line): a data frame's
 * serialization start reads the first line alone (sender_of, its
 * serialization start's place), its end the first two (the segment, the
 * completion), its fetch and hand-off the first three, a SACK the first
 * four.  In its old order a frame's start read three lines and its end
 * four. */
struct nic_qp_send {
	/* -- line 0: a data frame's start and end */
	_Alignas(64) uint64_t next_fetch; /* next new segment to fetch */
	uint64_t snd_una;		  /* cumulative PSN + 1, as an index */
	uint64_t npkts;
	/* The start of each segment's last serialization (§12 rule 9), by
	 * index & (tx_start_cap - 1), or NIC_TX_AMBIGUOUS.  The sender keeps
	 * it for the last `kept` segments fetched: MaxPSNRange, or the whole
	 * message when shorter, rounded up to a power of two; the array grows
	 * to that as the fetches reach it.  Its entries are 32 bits, ps after
	 * `posted` (sendq.c, tx32), until a time does not fit: then all of
	 * them widen to 64. */
	union {
		uint32_t *narrow;
		ps_t *wide;
	} tx_start;
	uint64_t kept;
	uint32_t tx_start_cap; /* at most kept, 2^23 (MaxPSNRange, rounded up) */
	/* What its data packets take of the attributes (struct nic_attrs'
	 * first line), copied at the doorbell: a fetch's hand-off read that
	 * line for these alone, a miss at most hand-offs at 1,024 hosts
	 * (issue 16, callgrind: 122.0 -> 120.7 LL misses a data packet). */
	uint32_t mss;
	ps_t posted;
	uint8_t chunk_mask;  /* the segments per chunk - 1: a place in one */
	uint8_t chunk_shift; /* log2 of the segments per chunk */
	bool tx_start_wide;
	bool send_complete, error;
	uint8_t data_dscp; /* ... Trimming ? DSCPTrimmable : DSCPNoTrim */
	bool icrc;
	bool wire_ts; /* ... RTTMode WireTimestamp */

	/* -- line 1: its segments, and where its packets go */
	/* The chunks of segments snd_una .. next_fetch - 1 and the chunk of
	 * the message's last segment (its completion re-request reads it),
	 * oldest first: struct nic_seg_chunk pointers. */
	struct ring64 chunks;
	uint64_t chunk0;    /* number (first index >> chunk_shift) of the oldest */
	uint64_t next_sent; /* one past the highest index handed to the port */
	struct nic_group *group;
	struct nic_dest *dest;
	uint32_t qpn;
	uint32_t peer_ip;

	/* -- line 2: the packets' headers, and what acknowledgements change */
	uint32_t remote_qpn;
	bool remote_known; /* learned from a SACK or NACK: C = 0 from then */
	bool rcv_units_seen;
	bool recovery;	 /* loss recovery (seed, Loss detection) */
	uint64_t msg_id; /* the message index of docs/protocol.md §1 */
	uint64_t bytes;
	uint64_t outstanding; /* segments not retired */
	uint64_t rtx_pending; /* segments in SEG_RTX_QUEUED */
	/* The segments the last SACK listed, all retired by it: bit i is
	 * index sack_seen_base + i.  A SACK's bitmap names mostly segments
	 * the one before it retired; masking them off spares a look at
	 * each (issue 16). */
	uint64_t sack_seen_base, sack_seen;
	uint32_t rcv_units; /* last CC_STATE received bytes (§12 r6) */
	/* The next fetch to come back: they return in the order they were
	 * issued, their indices' (a message's < 2^32 segments). */
	uint32_t next_handoff;

	/* -- line 3: the scheduler's, and the rarer */
	struct nic *nic;
	struct nic_sched_qp turn; /* sched.c's: its place in the group's turns */
	uint64_t cack_acked;	  /* cumulative ACK (opcode 0xD1) + 1, as an index */
	uint64_t recovery_end;
	/* MaxPSNRange and SACKLossMinRetxPkts, copied at the doorbell: a
	 * SACK's fetch and its gaps read them here, with the turn, not on
	 * the attributes' first line (struct nic, monitor_on). */
	uint32_t max_psn_range, sack_loss_min_retx;
	events_id rerequest;

	struct ring64 rtx; /* indices queued for retransmission, oldest
			    * first; may hold retired ones */
	uint64_t retransmissions;
};
_Static_assert(offsetof(struct nic_qp_send, chunks) == 64 &&
		   offsetof(struct nic_qp_send, remote_qpn) == 128 &&
		   offsetof(struct nic_qp_send, nic) == 192,
	       "a QP's fields a cache line each by the events that read them");

/* A retired segment transmitted other than exactly once (NACKed
 * transmissions aside): its acknowledgements give no RTT sample. */
#define NIC_TX_AMBIGUOUS PS_NEVER

/* Segment idx, which must be held: snd_una <= idx < next_fetch, or the
 * message's last one once fetched.  A chunk starts at a multiple of its
 * size (seg_room), so idx's place in it is its low bits: the chunk's
 * head, a cache line of its own for all but its first two segments, is
 * not read (at 1,024 hosts a QP is out of the cache between two of its
 * frames; issue 16). */
static inline struct nic_seg *nic_seg(const struct nic_qp_send *sq, uint64_t idx)
{
	const struct ring64 *r = &sq->chunks;
	uint64_t k = (idx >> sq->chunk_shift) - sq->chunk0;
	struct nic_seg_chunk *c = (void *)(uintptr_t)r->v[(r->head + k) & (r->cap - 1)];

	return &c->segs[idx & sq->chunk_mask];
}

static inline struct nic_seg_chunk *nic_seg_chunk(const struct nic_seg *s)
{
	return (struct nic_seg_chunk *)((char *)(s - s->pos) -
					offsetof(struct nic_seg_chunk, segs));
}

static inline uint64_t nic_seg_idx(const struct nic_seg *s)
{
	return nic_seg_chunk(s)->first + s->pos;
}

static inline struct nic_qp_send *nic_seg_sq(const struct nic_seg *s)
{
	return nic_seg_chunk(s)->sq;
}

/* Whether the sender still keeps segment idx's serialization start. */
static inline bool nic_seg_kept(const struct nic_qp_send *sq, uint64_t idx)
{
	/* idx < next_fetch && next_fetch - idx <= kept, one compare: at or
	 * past next_fetch the difference wraps (some four times a data
	 * packet; issue 16) */
	return sq->next_fetch - idx - 1 < sq->kept;
}

/* Whether a retransmission waits (it goes ahead of new data). */
static inline bool nic_send_has_rtx(const struct nic_qp_send *sq)
{
	return sq->rtx_pending > 0;
}

/* ---- sendq.c ---------------------------------------------------------- */

/* Seed, Segmentation: a packet's nominal size (its IP datagram) and its
 * bytes on the wire, for `len` payload bytes. */
uint32_t nic_seg_nominal(const struct nic *nic, uint32_t len);
/* What nic_seg_nominal adds to a payload, from the attributes (kept in
 * struct nic: asked several times a data packet). */
uint32_t nic_seg_nominal_overhead(const struct nic_attrs *a);
uint32_t nic_seg_wire(const struct nic *nic, uint32_t len);
/* Segment idx's payload bytes. */
uint32_t nic_seg_len(const struct nic *nic, const struct nic_qp_send *sq, uint64_t idx);
/* A 32-bit entry of tx_start: 0 is time 0 (not on the wire yet),
 * UINT32_MAX is NIC_TX_AMBIGUOUS, any other v is posted + v - 1.  A QP's
 * frames start after it is posted, so the entries stay narrow for its
 * first 4.29 ms. */
static inline bool nic_tx32_fits(const struct nic_qp_send *sq, ps_t t)
{
	return !t || t == NIC_TX_AMBIGUOUS || (t >= sq->posted && t - sq->posted < UINT32_MAX - 1);
}

static inline uint32_t nic_tx32(const struct nic_qp_send *sq, ps_t t)
{
	return !t ? 0 : t == NIC_TX_AMBIGUOUS ? UINT32_MAX : (uint32_t)(t - sq->posted + 1);
}

static inline ps_t nic_tx64(const struct nic_qp_send *sq, uint32_t v)
{
	return !v ? 0 : v == UINT32_MAX ? NIC_TX_AMBIGUOUS : sq->posted + v - 1;
}

bool nic_seg_tx_widen(struct nic_qp_send *sq);

/* The start of kept segment idx's last serialization: 0 before its first,
 * NIC_TX_AMBIGUOUS once retired if it gives no RTT sample.  Setting it
 * fails only when the entries must widen and there is no memory.  Inline:
 * four times a data packet (issue 16). */
static inline ps_t nic_seg_tx_start(const struct nic_qp_send *sq, uint64_t idx)
{
	uint64_t i = idx & (sq->tx_start_cap - 1);

	return sq->tx_start_wide ? sq->tx_start.wide[i] : nic_tx64(sq, sq->tx_start.narrow[i]);
}

static inline bool nic_seg_set_tx_start(struct nic_qp_send *sq, uint64_t idx, ps_t t)
{
	uint64_t i = idx & (sq->tx_start_cap - 1);

	if (!sq->tx_start_wide && !nic_tx32_fits(sq, t) && !nic_seg_tx_widen(sq))
		return false;
	if (sq->tx_start_wide)
		sq->tx_start.wide[i] = t;
	else
		sq->tx_start.narrow[i] = nic_tx32(sq, t);
	return true;
}

/* Whether the QP has a packet to send: a retransmission, or a new segment
 * with its PSN window open. */
bool nic_send_ready(const struct nic *nic, const struct nic_qp_send *sq);
/* The scheduler's turn: a retransmission, else the next segment's fetch;
 * false when the egress pool is full. */
bool nic_send_next(struct nic *nic, struct nic_qp_send *sq, ps_t now);
/* pcie.c: a fetch's payload has arrived from the host (seed, Hand-off):
 * s is the segment it was issued for, the QP's next_handoff. */
void nic_handoff(struct nic *nic, struct nic_qp_send *sq, struct nic_seg *s, ps_t now);

/* port.c: a data frame this side sent starts its serialization (§12 rule
 * 9: RTT runs from here), or has ended it (its timer starts; the first
 * transmission of the message's last packet is SEND_COMPLETE; `seg` is
 * the packet's segment record, nic_pkt_seg, read only while it is held).  The start
 * returns the sending side to tell at the end, or NULL; the port keeps it
 * while the frame is on the wire (one look-up a frame, not two: issue 16),
 * and forgets it if the QP closes meanwhile (nic_port_forget_sender). */
struct nic_qp_send *nic_send_on_wire(struct nic *nic, struct nic_pkt_meta m,
				     struct nic_qp_send *hint, ps_t now);
void nic_send_serialized(struct nic *nic, struct nic_qp_send *sq, struct nic_pkt_meta m,
			 struct nic_seg *seg, ps_t now);

/* What a completion or a failure tells the host about a sending side. */
struct nic_msg_info nic_send_info(const struct nic *nic, const struct nic_qp_send *sq);
/* At the end: every sending side. */
void nic_send_free_all(struct nic *nic);

/* Internal to the sending side (sendq.c and recovery.c). */
struct pkt *nic_build_rtx(struct nic *nic, struct nic_qp_send *sq, uint64_t idx, ps_t now);
void nic_seg_leave_flight(struct nic *nic, struct nic_qp_send *sq, struct nic_seg *s, uint64_t idx);
void nic_rtx_queue(struct nic *nic, struct nic_qp_send *sq, uint64_t idx, enum rtx_origin why,
		   ps_t now);
/* Free the chunks the cumulative PSN has passed.  Inline, the test alone:
 * a chunk is passed once in 32 cumulative ACKs at 8 hosts, and the call
 * cost 27 instructions each time (issue 16, callgrind). */
void nic_seg_release_chunks(struct nic_qp_send *sq);
static inline void nic_seg_release(struct nic_qp_send *sq)
{
	if (sq->chunks.len && sq->chunk0 < sq->snd_una >> sq->chunk_shift)
		nic_seg_release_chunks(sq);
}
void nic_send_event(struct nic *nic, const struct nic_qp_send *sq, const char *what, ps_t now);
void nic_send_close(struct nic *nic, struct nic_qp_send *sq, ps_t now);
void nic_qp_error(struct nic *nic, struct nic_qp_send *sq, ps_t now);

/* ---- recovery.c ------------------------------------------------------- */

/* Acknowledgements from the peer's receiving side. */
void nic_rx_ack(struct nic *nic, struct pkt *p, ps_t now);
void nic_rx_sack(struct nic *nic, struct pkt *p, ps_t now);
void nic_rx_nack(struct nic *nic, struct pkt *p, ps_t now);

/* docs/protocol.md §11: how long timer k of the schedule runs. */
ps_t nic_timer_duration(const struct nic_attrs *a, unsigned k);
/* Internal to the sending side. */
void nic_timer_start(struct nic *nic, struct nic_seg *s, ps_t now);
void nic_timer_stop(struct nic *nic, struct nic_seg *s);
void nic_send_complete(struct nic *nic, struct nic_qp_send *sq, ps_t now);

/* A sending side's own invariants (its segments' states against its
 * counts): NULL, or what is broken, written in why. */
const char *nic_send_check(const struct nic *nic, const struct nic_qp_send *sq, char *why,
			   size_t len);

#endif
