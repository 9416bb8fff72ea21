/* emulator/core/heap.c — the heap's first MiB on huge pages (heap.h). */
#include "heap.h"

#include <malloc.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#define HUGE_PAGE ((uintptr_t)2 << 20)

/* mallopt(3): M_TOP_PAD's default. */
#define TOP_PAD_DEFAULT (128 * 1024)
/* Below M_MMAP_THRESHOLD's default (128 KiB), so taken from the top chunk;
 * the top a heap starts with (132 KiB) is spent by two. */
#define GROW_STEP  (120 * 1024)
#define GROW_TRIES 3

bool heap_reserve_huge(size_t bytes)
{
	uintptr_t start, end;
	char *before, *after;
	void *volatile hold[GROW_TRIES]; /* volatile: a malloc freed unused is elided */
	int n = 0;

	if (bytes == 0 || bytes > INT32_MAX / 2 - 2 * HUGE_PAGE)
		return false;
	bytes = (bytes + HUGE_PAGE - 1) & ~(HUGE_PAGE - 1);
	/* The break is moved once, by the reserve and a page to align it: the
	 * top chunk is spent until malloc grows it, asking for its request
	 * plus M_TOP_PAD.  The reserve is then kept: free() gives the top
	 * back to the kernel only above M_TRIM_THRESHOLD (twice the reserve,
	 * which the top holds with what the growing took), and the break,
	 * once lowered, would grow again on small pages (a new mapping, not
	 * advised). */
	if (!mallopt(M_TRIM_THRESHOLD, (int)(2 * (bytes + HUGE_PAGE))) ||
	    !mallopt(M_TOP_PAD, (int)(bytes + HUGE_PAGE)))
		return false;
	before = sbrk(0);
	while (n < GROW_TRIES && sbrk(0) == before && (hold[n] = malloc(GROW_STEP)))
		n++;
	after = sbrk(0);
	while (n > 0)
		free(hold[--n]);
	mallopt(M_TOP_PAD, TOP_PAD_DEFAULT);
	start = ((uintptr_t)before + HUGE_PAGE - 1) & ~(HUGE_PAGE - 1);
	end = (uintptr_t)after & ~(HUGE_PAGE - 1);
	if (before == (char *)-1 || after == (char *)-1 || end <= start)
		return false;
	return madvise((void *)start, end - start, MADV_HUGEPAGE) == 0;
}
