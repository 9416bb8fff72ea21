/* emulator/core/hmap.h — a map from 64-bit keys to pointers: open addressing,
 * linear probing, backward-shift deletion (no tombstones), grows at 1/2
 * load.  For QP tables and other lookups on the packet path. */
#ifndef EMULATOR_HMAP_H
#define EMULATOR_HMAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct hmap_slot {
	uint64_t key;
	void *val; /* NULL = empty */
};

struct hmap {
	struct hmap_slot *slots;
	size_t mask; /* capacity - 1 */
	size_t count;
};

void hmap_init(struct hmap *m);
void hmap_destroy(struct hmap *m);
void *hmap_get(const struct hmap *m, uint64_t key);
/* Insert or replace; val must not be NULL.  Returns false on ENOMEM. */
bool hmap_put(struct hmap *m, uint64_t key, void *val);
/* Remove; returns the value or NULL. */
void *hmap_del(struct hmap *m, uint64_t key);

#endif
