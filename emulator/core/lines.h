/* emulator/core/lines.h — zeroed arrays on cache-line boundaries.
 *
 * The state a packet's hop touches (a wire, a switch port, a switch class)
 * is laid out so that its hot fields share one 64-byte line (issue 16:
 * at 1,024 hosts a hop's cost is its first touches); that holds only if
 * the array starts on a line. */
#ifndef EMULATOR_LINES_H
#define EMULATOR_LINES_H

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define LINE_SIZE 64

/* n zeroed elements of `size` bytes (room for one when n is 0), the first
 * on a cache-line boundary; NULL when out of memory. */
static inline void *lines_calloc(size_t n, size_t size)
{
	size_t bytes;
	void *p;

	n = n ? n : 1;
	if (size && n > (SIZE_MAX - LINE_SIZE) / size)
		return NULL;
	bytes = (n * size + LINE_SIZE - 1) & ~(size_t)(LINE_SIZE - 1);
	if ((p = aligned_alloc(LINE_SIZE, bytes)))
		memset(p, 0, bytes);
	return p;
}

/* One zeroed object of `size` bytes on a cache-line boundary, within a
 * calloc a line and a pointer longer: the pointer just before the object
 * says what to free (lines_free_one).  For objects made at every message
 * (a receiving QP, a destination, a QP group): glibc's aligned_alloc costs
 * about 440 instructions more than a calloc (callgrind, issue 16).  NULL
 * when out of memory. */
static inline void *lines_calloc_one(size_t size)
{
	size_t extra = LINE_SIZE - 1 + sizeof(void *);
	uintptr_t o;
	void *a;

	/* whatever alignment calloc gives (a sanitizer's may give less than
	 * max_align_t's) */
	if (size > SIZE_MAX - extra || !(a = calloc(1, size + extra)))
		return NULL;
	o = ((uintptr_t)a + sizeof(void *) + LINE_SIZE - 1) & ~(uintptr_t)(LINE_SIZE - 1);
	memcpy((void *)(o - sizeof(void *)), &a, sizeof(a));
	return (void *)o;
}

/* Free what lines_calloc_one gave (NULL: nothing). */
static inline void lines_free_one(void *p)
{
	void *a;

	if (!p)
		return;
	memcpy(&a, (char *)p - sizeof(void *), sizeof(a));
	free(a);
}

#endif
