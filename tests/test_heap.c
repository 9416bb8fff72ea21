/* tests/test_heap.c — the heap's reserve on huge pages (core/heap.h): what
 * malloc hands out next lies in one mapping advised as huge pages, the
 * reserve outlives a free, and where the heap is not the program break (a
 * sanitizer's allocator) or the kernel has no transparent huge pages the
 * call says so and changes nothing. */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "core/heap.h"

#define RESERVE ((size_t)8 << 20)

#if defined(__SANITIZE_ADDRESS__)
#define SANITIZED 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define SANITIZED 1
#endif
#endif
#ifndef SANITIZED
#define SANITIZED 0
#endif

/* The mapping of /proc/self/smaps that holds `addr`: its size in bytes and
 * whether its VmFlags say "hg" (MADV_HUGEPAGE). */
static bool mapping_of(const void *addr, size_t *size, bool *advised)
{
	FILE *f = fopen("/proc/self/smaps", "r");
	char line[512];
	bool in = false, found = false;
	uintptr_t a = (uintptr_t)addr;

	assert_non_null(f);
	while (fgets(line, sizeof line, f)) {
		unsigned long lo, hi;
		if (sscanf(line, "%lx-%lx ", &lo, &hi) == 2) { /* a mapping's first line */
			in = a >= lo && a < hi;
			if (in) {
				*size = hi - lo;
				found = true;
			}
		} else if (in && strncmp(line, "VmFlags:", 8) == 0) {
			*advised = strstr(line, " hg") != NULL;
		}
	}
	fclose(f);
	return found;
}

static void test_refuses_sizes(void **state)
{
	(void)state;
	assert_false(heap_reserve_huge(0));
	assert_false(heap_reserve_huge((size_t)1 << 31));
}

static void test_reserve_is_advised(void **state)
{
	bool thp = access("/sys/kernel/mm/transparent_hugepage", F_OK) == 0;
	bool advised = false;
	size_t size = 0;
	char *brk_after, *p;

	(void)state;
	if (SANITIZED || !thp) {
		assert_false(heap_reserve_huge(RESERVE));
		return;
	}
	assert_true(heap_reserve_huge(RESERVE));
	brk_after = sbrk(0);
	/* The top the heap had goes first, on small pages up to the reserve's
	 * first 2 MiB boundary: 4 MiB reach past it. */
	p = malloc(4 << 20);
	assert_non_null(p);
	memset(p, 1, 4 << 20);
	assert_true(mapping_of(p + (3 << 20), &size, &advised));
	assert_true(advised);
	assert_true(size >= RESERVE);
	/* neither the malloc nor its free moves the break: the reserve holds
	 * both and is not trimmed */
	free(p);
	assert_ptr_equal(sbrk(0), brk_after);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_refuses_sizes),
	    cmocka_unit_test(test_reserve_is_advised),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
