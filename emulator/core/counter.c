/* emulator/core/counter.c — a counter in a `stats` reply (counter.h). */
#include "counter.h"

#include <stdio.h>

bool counter_append(char *buf, size_t len, size_t *used, const char *name, uint64_t value)
{
	*used += (size_t)snprintf(buf + *used, *used < len ? len - *used : 0, "%s%s=%llu",
				  *used ? " " : "", name, (unsigned long long)value);
	return *used < len;
}
