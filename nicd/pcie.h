/* nicd/pcie.h — the PCIe link between the NIC and its host (seed, Fetching
 * the payload over PCIe; Receive buffer; docs/protocol.md §7): the two
 * directions' channels, the fetches in flight and the receive-side writes
 * with the PCIe transmit buffer.
 *
 * pcie.c is the only code that changes a struct nic_pcie.  The sending side
 * issues fetches (nic_pcie_fetch) and is handed each payload back in order
 * (nic_handoff); the receive path writes payloads (nic_pcie_write), whose
 * ingress pool room is given back as each write is accepted
 * (nic_ingress_release). */
#ifndef NICD_PCIE_H
#define NICD_PCIE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/ring.h"
#include "core/time.h"

struct nic;
struct nic_qp_send;
struct nic_seg;

/* At 1,024 hosts a NIC is out of the cache between two of its frames
 * (issue 16), so the fields are grouped by the events that read them, a
 * cache line each (struct nic puts the struct on a line): a fetch's issue
 * and its completion read the first line alone, a write both (and not the
 * attributes' second line: the buffer's size is kept here). */
struct nic_pcie {
	/* -- line 0: the fetches, and the link's time */
	struct ring64 fetches;	 /* in flight, in order: QP, segment pairs (pcie.c) */
	ps_t read_request_ps;	 /* a read request's time on the link */
	ps_t mss_ps;		 /* a completion or write of MSS bytes' */
	ps_t n2h_free, h2n_free; /* when each direction is next free */
	uint64_t txbuf_size;	 /* PcieTxBufferSize (a write reads it) */

	/* -- line 1: the writes */
	struct ring64 writing; /* writes in the buffer, in order (pcie.c) */
	uint64_t txbuf_used;
	ps_t elide_before; /* writes ending before it may have no event (pcie.c) */
	uint64_t last;	   /* the newest write, with no event, after `writing`'s; or 0 */
	uint32_t nwaiting; /* waiting.len, on this line: a write asks it */
	/* The port's ps_per_byte (core/egress.h), which may_elide asks, and
	 * then the SACK the written packet draws (ack.c, service_time): the
	 * port's line it is on was a miss at most writes at 1,024 hosts
	 * (issue 16, callgrind: 61k in 65k). */
	uint32_t ps_per_byte;

	/* -- line 2: read only while writes wait, or for sizes other than MSS */
	_Alignas(64) struct ring64 waiting; /* writes waiting for the transmit buffer */
	double bytes_per_ps;		    /* lanes x lane rate x 128/130 / 8 */
};
_Static_assert(offsetof(struct nic_pcie, writing) == 64 &&
		   offsetof(struct nic_pcie, waiting) == 128,
	       "the PCIe link's fields a cache line each by the events that read them");

/* The link idle; writes that end before elide_before may keep their ends
 * without events (nic_params.elide_before). */
void nic_pcie_init(struct nic *nic, ps_t elide_before);
void nic_pcie_destroy(struct nic *nic);

/* How long a completion or a write of `bytes` takes on the link. */
ps_t nic_pcie_time(const struct nic *nic, uint64_t bytes);

/* Fetch segment s of QP sq (len payload bytes): nic_handoff runs when it
 * has arrived.  False, with nothing issued, when it cannot be tracked. */
bool nic_pcie_fetch(struct nic *nic, struct nic_qp_send *sq, struct nic_seg *s, uint32_t len,
		    ps_t now);

/* Write a received payload of `bytes` to the host; the ingress pool holds
 * pool_bytes of it until the write is accepted. */
void nic_pcie_write(struct nic *nic, uint32_t bytes, uint32_t pool_bytes, ps_t now);

/* The link's own invariants: NULL, or what is broken, written in why. */
const char *nic_pcie_check(const struct nic *nic, char *why, size_t len);

#endif
