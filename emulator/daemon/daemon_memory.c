/* emulator/daemon/daemon_memory.c — a daemon's memory faulted in before its
 * run (daemon.h; docs/promises.md, What a frame costs).
 *
 * The first touch of a page costs a page fault, and on the project's
 * two-core VMs a fault costs 15 to 40 us of wall time (their guests'
 * page tables are the hypervisor's to update), where a page populated
 * with the rest of its mapping in one call costs a few.  A leaf-spine-8
 * run took ~16,800 faults in its 14 daemons once started: the event
 * queue's wheel, the received frames' slots, the ports' send and receive
 * batches, the packet pool.  So the daemon populates what it has set up
 * before the launcher starts it, and each new slab of packets and slots
 * at once when it makes one. */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "daemon.h"

#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23 /* Linux 5.14 */
#endif

/* Whether the kernel populates on request (Linux 5.14 and later).  Without
 * it the pages fault in the run, as they did before: touching them here
 * instead could race with a DPDK port's own threads on their stacks. */
static bool populate_works = true;

bool daemon_populate(void *p, size_t len)
{
	uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE);
	uintptr_t lo = (uintptr_t)p & ~(page - 1), hi = (uintptr_t)p + len;

	if (!len || !populate_works)
		return false;
	if (!madvise((void *)lo, hi - lo, MADV_POPULATE_WRITE))
		return true;
	if (errno == EINVAL)
		populate_works = false;
	return false;
}

/* A mapping larger than this was not made for the run: a sanitizer's
 * shadow, reserved and never meant to be touched whole. */
#define POPULATE_MAX (64UL << 20)

/* Each private anonymous writable mapping, the heap's among them: what
 * malloc gave the daemon's setup (a file's mappings, the stack and the
 * kernel's own are left alone). */
static void populate_anonymous(void)
{
	FILE *f = fopen("/proc/self/maps", "r");
	char line[512];

	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		unsigned long lo, hi;
		char perm[5];
		int name = 0;

		if (sscanf(line, "%lx-%lx %4s %*s %*s %*s %n", &lo, &hi, perm, &name) < 3 ||
		    strcmp(perm, "rw-p"))
			continue;
		if (line[name] != '\n' && line[name] != '\0' && strncmp(line + name, "[heap]", 6))
			continue;
		if (hi - lo <= POPULATE_MAX)
			daemon_populate((void *)lo, hi - lo);
	}
	fclose(f);
}

/* Under ASan the heap is the sanitizer's, and speed no aim. */
#if defined(__SANITIZE_ADDRESS__)
#define SANITIZED true
#else
#define SANITIZED false
#endif

void daemon_prefault(struct daemon *d)
{
	daemon_rx_reserve(d);
	if (!SANITIZED)
		populate_anonymous();
}
