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

/* `last` is the member put last (or NULL once it is deleted): a NIC's
 * frames mostly belong to the QP it last opened, and a hit reads no slot,
 * a cache line that is cold at 1,024 hosts (issue 16). */
struct hmap {
	uint64_t last_key;
	void *last;
	struct hmap_slot *slots;
	size_t mask; /* capacity - 1 */
	size_t count;
};

void hmap_init(struct hmap *m);
void hmap_destroy(struct hmap *m);

/* The slot a key's probe starts at (hmap.c probes from it too). */
static inline size_t hmap_hash(uint64_t k)
{
	k ^= k >> 33;
	k *= 0xFF51AFD7ED558CCDULL;
	k ^= k >> 33;
	return (size_t)k;
}

/* The key's value, or NULL.  Inline: a data packet looks up its QPs some
 * seven times on its way (issue 16). */
static inline void *hmap_get(const struct hmap *m, uint64_t key)
{
	if (m->last && m->last_key == key)
		return m->last;
	if (!m->slots)
		return NULL;
	for (size_t i = hmap_hash(key) & m->mask;; i = (i + 1) & m->mask) {
		if (!m->slots[i].val)
			return NULL;
		if (m->slots[i].key == key)
			return m->slots[i].val;
	}
}
/* Insert or replace; val must not be NULL.  Returns false on ENOMEM. */
bool hmap_put(struct hmap *m, uint64_t key, void *val);
/* Remove; returns the value or NULL. */
void *hmap_del(struct hmap *m, uint64_t key);

#endif
