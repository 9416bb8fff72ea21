/* tests/lib/vectors.h — the frames of docs/vectors.md built from the fields it
 * describes, for the codec's tests and the dissector's frame tool. */
#ifndef TESTS_VECTORS_H
#define TESTS_VECTORS_H

#include <stdbool.h>
#include <stdint.h>

#include "core/wire.h"

#define VEC_IP_A 0x0A000001u /* 10.0.0.1, MAC 02:00:00:00:00:01 */
#define VEC_IP_B 0x0A000002u /* 10.0.0.2, MAC 02:00:00:00:00:02 */

/* A zeroed frame from host A (trimmable, ECT(0)) or from host B (control,
 * Not-ECT) to the other, TTL 64, to port 4791. */
void vec_base(struct pkt *p, bool from_a, uint8_t op, uint16_t sport, uint32_t dqpn, uint32_t psn);

/* A data frame from A: len payload bytes at offset of message msg_index. */
void vec_data(struct pkt *p, uint8_t op, uint16_t sport, uint8_t flags, uint32_t dqpn, uint32_t psn,
	      uint16_t msn, uint32_t msg_index, uint64_t offset, uint32_t len, uint32_t dma_len);

/* docs/vectors.md frame n (1..8). */
void vectors_pkt(int n, struct pkt *p);

#endif
