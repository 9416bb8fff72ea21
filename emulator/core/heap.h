/* emulator/core/heap.h — the process's heap on transparent huge pages.
 *
 * At 1,024 hosts a packet's hop touches state spread over tens of MiB (the
 * NICs' queue pairs, the switch ports, the wires' rings), and with 4 KiB
 * pages nearly every such touch misses the TLB too: a page walk, two-level
 * in a VM.  On 2 MiB pages the same state is a few dozen TLB entries
 * (docs/scale.md, What makes it fast). */
#ifndef EMULATOR_HEAP_H
#define EMULATOR_HEAP_H

#include <stdbool.h>
#include <stddef.h>

/* The heap's next `bytes` (rounded to 2 MiB pages) are reserved now and
 * advised as huge pages (madvise MADV_HUGEPAGE): what malloc hands out
 * from them is faulted in 2 MiB at a time.  Call before the allocations
 * meant to be on them, once.  Beyond the reserve the heap grows on small
 * pages as before.  Only the address space is taken: a page is backed
 * when first touched.  False, and the heap as it was, where the C
 * library's heap is not the program break (a sanitizer's or valgrind's
 * allocator) or the kernel has no transparent huge pages; nothing depends
 * on it but speed. */
bool heap_reserve_huge(size_t bytes);

#endif
