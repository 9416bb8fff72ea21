/* nicd/pcie.c — the PCIe link between the NIC and its host (seed, Fetching
 * the payload over PCIe; docs/protocol.md §7).
 *
 * Each direction is a FIFO serial channel.  NIC-to-host carries the read
 * requests and the receive-side writes; host-to-NIC carries the read
 * completions, in the order the requests were sent.  Host memory latency
 * is not modelled: a fetch costs its request and its completion on the
 * link, 1.552 + 69.291 ns for 4,096 bytes at the defaults. */
#include "nic_impl.h"

void nic_pcie_destroy(struct nic *nic)
{
	ring64_free(&nic->pcie.fetches);
	ring64_free(&nic->pcie.waiting);
	ring64_free(&nic->pcie.writing);
}

/* TLPs of `bytes` bytes in all, each costing its bytes plus PcieTlpOverhead
 * (docs/protocol.md §7). */
static ps_t tlp_time(const struct nic *nic, uint64_t bytes, uint64_t tlps)
{
	double cost = (double)bytes + (double)tlps * nic->a.pcie_tlp_overhead;

	return time_round(cost / nic->pcie.bytes_per_ps);
}

/* A completion or a write of B bytes is cut into TLPs of at most
 * PcieMaxPayload bytes (docs/protocol.md §7). */
static ps_t tlp_count_time(const struct nic *nic, uint64_t bytes)
{
	uint64_t tlps = bytes ? (bytes + nic->a.pcie_max_payload - 1) / nic->a.pcie_max_payload : 1;

	return tlp_time(nic, bytes, tlps);
}

ps_t nic_pcie_time(const struct nic *nic, uint64_t bytes)
{
	return bytes == nic->a.mss ? nic->pcie.mss_ps : tlp_count_time(nic, bytes);
}

/* A write in the transmit buffer (`writing`): its bytes (a payload, at
 * most MSS = 8,192) and, when its end has no event (may_elide), the time
 * it ends. */
#define WRITE_BYTES_MASK 0x7FFFu
#define WRITE_ELIDED	 0x8000u
#define WRITE_END_SHIFT	 16
#define WRITE_END_MAX	 (1ULL << (64 - WRITE_END_SHIFT))

void nic_pcie_init(struct nic *nic, ps_t elide_before)
{
	const struct nic_attrs *a = &nic->a;
	struct nic_pcie *pc = &nic->pcie;

	/* may_elide's tests of the port's rate and of the end's room in a
	 * write's encoding, folded into this bound once (issue 16,
	 * callgrind at 8 hosts: 7 instructions a packet fewer).  The port
	 * is made first (nic_new), its rate never changes. */
	pc->elide_before = !nic->port.out.ps_per_byte	  ? 0
			   : elide_before < WRITE_END_MAX ? elide_before
							  : WRITE_END_MAX;
	/* 128b/130b encoding; lane rate in GT/s; bytes per ps. */
	pc->txbuf_size = a->pcie_tx_buffer;
	pc->ps_per_byte = nic->port.out.ps_per_byte; /* the port's rate never changes */
	pc->bytes_per_ps = a->pcie_lanes * a->pcie_lane_rate_gts * 1e9 * 128.0 / 130.0 / 8.0 / 1e12;
	/* §12 rule 20: a read request is one TLP, ReadRequestSize bytes plus
	 * one overhead, whatever its size.  It, and a full segment's
	 * completion and write, are computed once here rather than three
	 * times a data packet (the same function: the same picoseconds). */
	pc->read_request_ps = tlp_time(nic, a->read_request_size, 1);
	pc->mss_ps = tlp_count_time(nic, a->mss);
}

/* The fetches ring holds pairs, QP then segment: its head and length stay
 * even and its capacity is a power of two of at least 16, so that a pair
 * is two neighbouring entries, pushed or popped at once: one test of room
 * and one index (issue 16, callgrind at 8 hosts: 9 instructions a packet
 * fewer than two pushes and two pops). */
static bool fetch_push(struct ring64 *r, struct nic_qp_send *sq, struct nic_seg *s)
{
	uint32_t i;

	if (r->len == r->cap && !ring64_grow(r))
		return false;
	i = (r->head + r->len) & (r->cap - 1);
	r->v[i] = (uintptr_t)sq;
	r->v[i + 1] = (uintptr_t)s;
	r->len += 2;
	return true;
}

static void fetch_done(void *arg, ps_t now)
{
	struct nic *nic = arg;
	struct ring64 *r = &nic->pcie.fetches;
	struct nic_qp_send *sq = (void *)(uintptr_t)r->v[r->head];
	struct nic_seg *s = (void *)(uintptr_t)r->v[r->head + 1];

	r->head = (r->head + 2) & (r->cap - 1);
	r->len -= 2;
	nic_handoff(nic, sq, s, now);
}

/* One read request of ReadRequestSize bytes, then the whole segment back.
 * Returns false, with nothing issued, when the fetch cannot be tracked
 * (out of memory). */
bool nic_pcie_fetch(struct nic *nic, struct nic_qp_send *sq, struct nic_seg *s, uint32_t len,
		    ps_t now)
{
	struct nic_pcie *pc = &nic->pcie;
	ps_t req_start = now > pc->n2h_free ? now : pc->n2h_free;
	ps_t req_end = req_start + pc->read_request_ps;
	ps_t cpl_start = req_end > pc->h2n_free ? req_end : pc->h2n_free;

	if (!fetch_push(&pc->fetches, sq, s))
		return false;
	pc->n2h_free = req_end;
	/* nic_pcie_time's, asking the QP's copy of the MSS (sendq.h) */
	pc->h2n_free = cpl_start + (len == sq->mss ? pc->mss_ps : tlp_count_time(nic, len));
	events_schedule(nic->ev, pc->h2n_free, fetch_done, nic);
	return true;
}

/* ---- writes ---------------------------------------------------------- */

static uint32_t write_bytes(uint64_t w)
{
	return (uint32_t)w & WRITE_BYTES_MASK;
}

static bool write_elided(uint64_t w)
{
	return w & WRITE_ELIDED;
}

static ps_t write_end(uint64_t w)
{
	return w >> WRITE_END_SHIFT;
}

static void write_done(void *arg, ps_t now);

/* Seed, Receive buffer: a write's end frees its room in the transmit
 * buffer and lets waiting writes in.  While no write waits, that room is
 * all its event does, and no one reads it before the next write comes:
 * the end then needs no event, and its room is given back when the next
 * write looks (release_elided), as its event, run before, would have.
 * That holds while no write is refused until it ends, which is certain
 * when the buffer cannot fill by then.  Frames reach the port no closer
 * than their serialization at its rate (nic_params.elide_before), so the
 * payloads written in (now, end] hold at most one MSS, and one byte per
 * byte-time of the rest: a write whose end may go without its event is
 * the last waiting one (none waits after it), ends before elide_before
 * (which nic_pcie_init makes 0 without a whole ps_per_byte and keeps
 * within a write's encoding), and leaves used + MSS + (end - now) /
 * ps_per_byte <= PcieTxBufferSize, used counting it.  (Writes' ends were
 * 1 event in 21 at 8 hosts, issue 16.) */
static bool may_elide(const struct nic *nic, uint32_t bytes, ps_t end, ps_t now, bool behind)
{
	const struct nic_pcie *pc = &nic->pcie;
	uint32_t ppb = pc->ps_per_byte;

	return end < pc->elide_before && !behind &&
	       pc->txbuf_used + bytes + nic->a.mss + (end - now) / ppb <= pc->txbuf_size;
}

/* The writes that ended before now with no event leave the buffer, as
 * their events would have before now.  (At now itself a frame's arrival,
 * which alone writes, runs before any event.)  The newest write, when it
 * has no event, waits in `last` rather than in the ring: with the ring
 * empty behind it, mostly, a write then costs neither a push nor a pop
 * (issue 16, callgrind at 8 hosts: 17 instructions a packet fewer). */
static void release_elided(struct nic_pcie *pc, ps_t now)
{
	while (pc->writing.len && write_elided(ring64_front(&pc->writing)) &&
	       write_end(ring64_front(&pc->writing)) < now)
		NIC_SUB(pc->txbuf_used, write_bytes(ring64_pop(&pc->writing)));
	if (!pc->writing.len && pc->last && write_end(pc->last) < now) {
		NIC_SUB(pc->txbuf_used, write_bytes(pc->last));
		pc->last = 0;
	}
}

/* Write w joins the buffer, behind `last`, which then goes into the ring;
 * false, nothing lost, when out of memory. */
static bool write_join(struct nic_pcie *pc, uint64_t w)
{
	if (pc->last && !ring64_push(&pc->writing, pc->last))
		return false;
	if (write_elided(w)) {
		pc->last = w;
		return true;
	}
	pc->last = 0;
	return ring64_push(&pc->writing, w);
}

/* The next write, of `bytes` holding pool_bytes of the ingress pool, goes
 * into the transmit buffer if it has room (and memory), with others
 * waiting behind it or not; false if it must wait.  Inline: GCC kept it
 * out of line for its two callers, and the call (its registers saved and
 * restored) was a third of its cost (issue 16, callgrind at 8 hosts:
 * -30 instr/pkt). */
static inline __attribute__((always_inline)) bool accept(struct nic *nic, uint32_t bytes,
							 uint32_t pool_bytes, bool behind, ps_t now)
{
	struct nic_pcie *pc = &nic->pcie;
	ps_t start = now > pc->n2h_free ? now : pc->n2h_free;
	ps_t end = start + nic_pcie_time(nic, bytes);
	bool elide = may_elide(nic, bytes, end, now, behind);

	if ((pc->txbuf_used && pc->txbuf_used + bytes > pc->txbuf_size) ||
	    !write_join(pc, elide ? end << WRITE_END_SHIFT | WRITE_ELIDED | bytes : bytes))
		return false; /* no room, or no memory: tried again at the next */
	pc->txbuf_used += bytes;
	/* Seed, Receive buffer: the receive-pool space is released when the
	 * write is accepted into the PCIe transmit buffer. */
	nic_ingress_release(nic, pool_bytes, false);
	pc->n2h_free = end;
	nic->c.pcie_write_bytes += bytes;
	if (!elide)
		events_schedule(nic->ev, end, write_done, nic);
	return true;
}

/* Accept waiting writes while the transmit buffer has room for them. */
static void accept_writes(struct nic *nic, ps_t now)
{
	struct nic_pcie *pc = &nic->pcie;

	while (pc->waiting.len) {
		uint64_t w = ring64_front(&pc->waiting);
		if (!accept(nic, (uint32_t)(w >> 32), (uint32_t)w, pc->waiting.len > 1, now))
			return;
		ring64_pop(&pc->waiting);
		pc->nwaiting--;
	}
}

/* A write's end with an event: the writes before it ended too, and those
 * of them with no event leave the buffer first. */
static void write_done(void *arg, ps_t now)
{
	struct nic *nic = arg;
	struct nic_pcie *pc = &nic->pcie;

	while (write_elided(ring64_front(&pc->writing)))
		NIC_SUB(pc->txbuf_used, write_bytes(ring64_pop(&pc->writing)));
	NIC_SUB(pc->txbuf_used, write_bytes(ring64_pop(&pc->writing)));
	accept_writes(nic, now);
}

/* A received payload goes to host memory; the ingress pool holds
 * pool_bytes until the write is accepted.  Inline (across files, by the
 * link-time optimizer) in a data packet's delivery (issue 16). */
inline __attribute__((always_inline)) void nic_pcie_write(struct nic *nic, uint32_t bytes,
							  uint32_t pool_bytes, ps_t now)
{
	release_elided(&nic->pcie, now);
	/* With no write waiting, it goes first, as it would from `waiting`:
	 * mostly at once (issue 16: the ring's push and pop spared). */
	if (!nic->pcie.nwaiting && accept(nic, bytes, pool_bytes, false, now))
		return;
	if (!ring64_push(&nic->pcie.waiting, (uint64_t)bytes << 32 | pool_bytes)) {
		nic_ingress_release(nic, pool_bytes, false); /* out of memory */
		return;
	}
	nic->pcie.nwaiting++;
	accept_writes(nic, now);
}

/* The transmit buffer holds exactly the writes accepted and not yet done,
 * and takes a write only while it has room for it (or is empty). */
const char *nic_pcie_check(const struct nic *nic, char *why, size_t len)
{
	const struct nic_pcie *pc = &nic->pcie;
	uint64_t in_buffer = 0;

	for (size_t i = 0; i < pc->writing.len; i++)
		in_buffer +=
		    write_bytes(pc->writing.v[(pc->writing.head + i) & (pc->writing.cap - 1)]);
	in_buffer += pc->last ? write_bytes(pc->last) : 0;
	if (in_buffer != pc->txbuf_used)
		snprintf(why, len, "PCIe txbuf_used %llu, writes in the buffer %llu",
			 (unsigned long long)pc->txbuf_used, (unsigned long long)in_buffer);
	else if (pc->ps_per_byte != nic->port.out.ps_per_byte)
		snprintf(why, len, "PCIe ps_per_byte %u, the port's %u", pc->ps_per_byte,
			 nic->port.out.ps_per_byte);
	else if (pc->nwaiting != pc->waiting.len)
		snprintf(why, len, "PCIe nwaiting %llu, writes waiting %llu",
			 (unsigned long long)pc->nwaiting, (unsigned long long)pc->waiting.len);
	else if (pc->last && !write_elided(pc->last))
		snprintf(why, len, "PCIe last write %llx has an event",
			 (unsigned long long)pc->last);
	else if (pc->writing.len + (pc->last != 0) > 1 && pc->txbuf_used > nic->a.pcie_tx_buffer)
		snprintf(why, len, "PCIe txbuf_used %llu past PcieTxBuffer %llu",
			 (unsigned long long)pc->txbuf_used,
			 (unsigned long long)nic->a.pcie_tx_buffer);
	else
		return NULL;
	return why;
}
