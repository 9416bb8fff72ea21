/* emulator/core/invariant.h — the engines' invariants.  Checked, aborting
 * with the place, when built with MRCEMU_CHECK_INVARIANTS (`make check`
 * does); otherwise a count that would go below zero stays at zero, so a
 * broken invariant cannot wrap a counter to 2^64 - 1 in a record. */
#ifndef EMULATOR_INVARIANT_H
#define EMULATOR_INVARIANT_H

#include <stdint.h>

#ifdef MRCEMU_CHECK_INVARIANTS
#include <stdio.h>
#include <stdlib.h>
#define INVARIANT(cond)                                                                            \
	do {                                                                                       \
		if (!(cond)) {                                                                     \
			fprintf(stderr, "%s:%d: invariant broken: %s\n", __FILE__, __LINE__,       \
				#cond);                                                            \
			abort();                                                                   \
		}                                                                                  \
	} while (0)
/* A checker that returns what it found broken, or NULL. */
#define INVARIANT_HOLDS(what)                                                                      \
	do {                                                                                       \
		const char *why_ = (what);                                                         \
		if (why_) {                                                                        \
			fprintf(stderr, "%s:%d: invariant broken: %s\n", __FILE__, __LINE__,       \
				why_);                                                             \
			abort();                                                                   \
		}                                                                                  \
	} while (0)
#else
#define INVARIANT(cond)	      ((void)0)
#define INVARIANT_HOLDS(what) ((void)0)
#endif

/* v -= x for a count of bytes, packets or references: never below zero.
 * The subtraction's borrow says whether it went below: GCC then makes a
 * sub and a cmov on its carry, where `v >= x ? v - x : 0` cost a copy, a
 * compare and a load of zero more (callgrind, 8 hosts: about 2
 * instructions a use, in every release and dequeue of a port).  Both
 * say the same for an unsigned count, which v must be. */
#define SUB_COUNT(v, x)                                                                            \
	do {                                                                                       \
		_Static_assert((__typeof__(v))-1 > 0, "a count is unsigned");                      \
		uint64_t x_ = (x), d_;                                                             \
		INVARIANT((v) >= x_);                                                              \
		(v) = __builtin_sub_overflow((v), x_, &d_) ? 0 : d_;                               \
	} while (0)

#endif
