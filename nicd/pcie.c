/* nicd/pcie.c — the PCIe link between the NIC and its host (seed, Fetching
 * the payload over PCIe; docs/protocol.md §7).
 *
 * Each direction is a FIFO serial channel.  NIC-to-host carries the read
 * requests and the receive-side writes; host-to-NIC carries the read
 * completions, in the order the requests were sent.  Host memory latency
 * is not modelled: a fetch costs its request and its completion on the
 * link, 1.552 + 69.291 ns for 4,096 bytes at the defaults. */
#include <math.h>

#include "nic_impl.h"

#define FETCH_IDX_BITS 40

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

	return (ps_t)llround(cost / nic->pcie.bytes_per_ps);
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

void nic_pcie_init(struct nic *nic)
{
	const struct nic_attrs *a = &nic->a;
	struct nic_pcie *pc = &nic->pcie;

	/* 128b/130b encoding; lane rate in GT/s; bytes per ps. */
	pc->bytes_per_ps = a->pcie_lanes * a->pcie_lane_rate_gts * 1e9 * 128.0 / 130.0 / 8.0 / 1e12;
	/* §12 rule 20: a read request is one TLP, ReadRequestSize bytes plus
	 * one overhead, whatever its size.  It, and a full segment's
	 * completion and write, are computed once here rather than three
	 * times a data packet (the same function: the same picoseconds). */
	pc->read_request_ps = tlp_time(nic, a->read_request_size, 1);
	pc->mss_ps = tlp_count_time(nic, a->mss);
}

static void fetch_done(void *arg, ps_t now)
{
	struct nic *nic = arg;
	uint64_t f = ring64_pop(&nic->pcie.fetches);

	nic_handoff(nic, (uint32_t)(f >> FETCH_IDX_BITS), f & ((1ULL << FETCH_IDX_BITS) - 1), now);
}

/* One read request of ReadRequestSize bytes, then the whole segment back.
 * Returns false, with nothing issued, when the fetch cannot be tracked
 * (out of memory). */
bool nic_pcie_fetch(struct nic *nic, uint32_t qpn, uint64_t idx, uint32_t len, ps_t now)
{
	struct nic_pcie *pc = &nic->pcie;
	ps_t req_start = now > pc->n2h_free ? now : pc->n2h_free;
	ps_t req_end = req_start + pc->read_request_ps;
	ps_t cpl_start = req_end > pc->h2n_free ? req_end : pc->h2n_free;

	if (!ring64_push(&pc->fetches, (uint64_t)qpn << FETCH_IDX_BITS | idx))
		return false;
	pc->n2h_free = req_end;
	pc->h2n_free = cpl_start + nic_pcie_time(nic, len);
	events_schedule(nic->ev, pc->h2n_free, fetch_done, nic);
	return true;
}

static void write_done(void *arg, ps_t now);

/* Accept waiting writes while the transmit buffer has room for them. */
static void accept_writes(struct nic *nic, ps_t now)
{
	struct nic_pcie *pc = &nic->pcie;

	while (pc->waiting.len) {
		uint64_t w = ring64_front(&pc->waiting);
		uint32_t bytes = (uint32_t)(w >> 32);

		if ((pc->txbuf_used && pc->txbuf_used + bytes > nic->a.pcie_tx_buffer) ||
		    !ring64_push(&pc->writing, bytes))
			return; /* no room, or no memory: tried again at the next */
		ring64_pop(&pc->waiting);
		pc->txbuf_used += bytes;
		/* Seed, Receive buffer: the receive-pool space is released when
		 * the write is accepted into the PCIe transmit buffer. */
		nic_ingress_release(nic, (uint32_t)w, false);
		ps_t start = now > pc->n2h_free ? now : pc->n2h_free;
		pc->n2h_free = start + nic_pcie_time(nic, bytes);
		nic->c.pcie_write_bytes += bytes;
		events_schedule(nic->ev, pc->n2h_free, write_done, nic);
	}
}

static void write_done(void *arg, ps_t now)
{
	struct nic *nic = arg;

	NIC_SUB(nic->pcie.txbuf_used, ring64_pop(&nic->pcie.writing));
	accept_writes(nic, now);
}

/* A received payload goes to host memory; the ingress pool holds
 * pool_bytes until the write is accepted. */
void nic_pcie_write(struct nic *nic, uint32_t bytes, uint32_t pool_bytes, ps_t now)
{
	if (!ring64_push(&nic->pcie.waiting, (uint64_t)bytes << 32 | pool_bytes)) {
		nic_ingress_release(nic, pool_bytes, false); /* out of memory */
		return;
	}
	accept_writes(nic, now);
}

/* The transmit buffer holds exactly the writes accepted and not yet done,
 * and takes a write only while it has room for it (or is empty). */
const char *nic_pcie_check(const struct nic *nic, char *why, size_t len)
{
	const struct nic_pcie *pc = &nic->pcie;
	uint64_t in_buffer = 0;

	for (size_t i = 0; i < pc->writing.len; i++)
		in_buffer += pc->writing.v[(pc->writing.head + i) & (pc->writing.cap - 1)];
	if (in_buffer != pc->txbuf_used)
		snprintf(why, len, "PCIe txbuf_used %llu, writes in the buffer %llu",
			 (unsigned long long)pc->txbuf_used, (unsigned long long)in_buffer);
	else if (pc->writing.len > 1 && pc->txbuf_used > nic->a.pcie_tx_buffer)
		snprintf(why, len, "PCIe txbuf_used %llu past PcieTxBuffer %llu",
			 (unsigned long long)pc->txbuf_used,
			 (unsigned long long)nic->a.pcie_tx_buffer);
	else
		return NULL;
	return why;
}
