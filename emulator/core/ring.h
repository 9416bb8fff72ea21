/* emulator/core/ring.h — a growable FIFO of 64-bit values, for queues whose
 * members pack into one word (fetches in flight, PCIe writes). */
#ifndef EMULATOR_RING_H
#define EMULATOR_RING_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

struct ring64 {
	uint64_t *v;
	uint32_t head, len, cap; /* cap is a power of two */
};

/* The ring is full: twice the room.  Out of line and cold, so that a push
 * into room saves no registers for it. */
static __attribute__((noinline, cold)) bool ring64_grow(struct ring64 *r)
{
	uint32_t cap = r->cap ? r->cap * 2 : 16;
	uint64_t *v = cap > r->cap ? malloc(cap * sizeof(*v)) : NULL;

	if (!v)
		return false;
	for (uint32_t i = 0; i < r->len; i++)
		v[i] = r->v[(r->head + i) & (r->cap - 1)];
	free(r->v);
	r->v = v;
	r->cap = cap;
	r->head = 0;
	return true;
}

static inline bool ring64_push(struct ring64 *r, uint64_t x)
{
	if (r->len == r->cap && !ring64_grow(r))
		return false;
	r->v[(r->head + r->len++) & (r->cap - 1)] = x;
	return true;
}

static inline uint64_t ring64_front(const struct ring64 *r)
{
	return r->v[r->head];
}

static inline uint64_t ring64_pop(struct ring64 *r)
{
	uint64_t x = r->v[r->head];
	r->head = (r->head + 1) & (r->cap - 1);
	r->len--;
	return x;
}

static inline void ring64_free(struct ring64 *r)
{
	free(r->v);
	r->v = NULL;
	r->head = r->len = r->cap = 0;
}

#endif
