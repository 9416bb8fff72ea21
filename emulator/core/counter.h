/* emulator/core/counter.h — an engine's counters as (name, value) pairs.
 *
 * Each engine exports one iterator, nic_counter_at() and sw_counter_at():
 *
 *	struct counter c;
 *	for (size_t i = 0; nic_counter_at(nic, i, &c); i++)
 *		... c.name, c.value ...
 *
 * Its names are the words of the records' columns (docs/records.md) and of
 * the control socket's `stats` reply (docs/control.md).  The records'
 * headers, `stats`, the summaries and the tests all read the counters
 * through it, so each counter is named once, in its engine. */
#ifndef EMULATOR_COUNTER_H
#define EMULATOR_COUNTER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct counter {
	const char *name; /* static: valid as long as the program runs */
	uint64_t value;
};

/* Append "name=value" to the `stats` reply in buf (a space before it unless
 * it is the first); false when it did not fit. */
bool counter_append(char *buf, size_t len, size_t *used, const char *name, uint64_t value);

#endif
