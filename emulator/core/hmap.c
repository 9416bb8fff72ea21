/* emulator/core/hmap.c — see hmap.h. */
#include "hmap.h"

#include <stdlib.h>

void hmap_init(struct hmap *m)
{
	m->last = NULL;
	m->slots = NULL;
	m->mask = 0;
	m->count = 0;
}

void hmap_destroy(struct hmap *m)
{
	free(m->slots);
	hmap_init(m);
}

static bool grow(struct hmap *m)
{
	size_t cap = m->slots ? (m->mask + 1) * 2 : 16;
	struct hmap_slot *old = m->slots;
	size_t oldcap = old ? m->mask + 1 : 0;

	m->slots = calloc(cap, sizeof(*m->slots));
	if (!m->slots) {
		m->slots = old;
		return false;
	}
	m->mask = cap - 1;
	m->count = 0;
	for (size_t i = 0; i < oldcap; i++)
		if (old[i].val)
			hmap_put(m, old[i].key, old[i].val);
	free(old);
	return true;
}

bool hmap_put(struct hmap *m, uint64_t key, void *val)
{
	if ((m->count + 1) * 2 > (m->slots ? m->mask + 1 : 0) && !grow(m))
		return false;
	m->last_key = key;
	m->last = val;
	for (size_t i = hmap_hash(key) & m->mask;; i = (i + 1) & m->mask) {
		if (!m->slots[i].val) {
			m->slots[i].key = key;
			m->slots[i].val = val;
			m->count++;
			return true;
		}
		if (m->slots[i].key == key) {
			m->slots[i].val = val;
			return true;
		}
	}
}

void *hmap_del(struct hmap *m, uint64_t key)
{
	size_t i, j;
	void *val;

	if (!m->slots)
		return NULL;
	for (i = hmap_hash(key) & m->mask;; i = (i + 1) & m->mask) {
		if (!m->slots[i].val)
			return NULL;
		if (m->slots[i].key == key)
			break;
	}
	val = m->slots[i].val;
	if (m->last && m->last_key == key)
		m->last = NULL;
	/* Backward-shift: pull later members of the cluster into the hole
	 * when their home slot does not lie cyclically in (i, j]. */
	for (j = (i + 1) & m->mask; m->slots[j].val; j = (j + 1) & m->mask) {
		size_t home = hmap_hash(m->slots[j].key) & m->mask;
		if (((j - home) & m->mask) >= ((j - i) & m->mask)) {
			m->slots[i] = m->slots[j];
			i = j;
		}
	}
	m->slots[i].val = NULL;
	m->count--;
	return val;
}
