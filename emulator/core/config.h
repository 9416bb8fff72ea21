/* emulator/core/config.h — the attribute registry (name, type, unit, default,
 * allowed range, one-line doc) and setting attributes by name, with errors
 * that name what was wrong and what is allowed (docs/topology.md). */
#ifndef EMULATOR_CONFIG_H
#define EMULATOR_CONFIG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "attrs.h"

enum attr_scope { ATTR_EMULATION, ATTR_NIC, ATTR_SWITCH, ATTR_LINK };

enum attr_type {
	ATTR_BOOL, /* true/false, on/off, yes/no, 1/0 */
	ATTR_U8,
	ATTR_U32,
	ATTR_U64,
	ATTR_DOUBLE,
	ATTR_TIME,  /* ps_t, with a unit */
	ATTR_RATE,  /* bits/s, with a unit */
	ATTR_BYTES, /* bytes, unit optional */
	ATTR_IPV4,
	ATTR_ENUM, /* one of a list of names, stored as int */
	ATTR_STRING,
	ATTR_WINDOWS, /* link `down`: "300us-500us, 1ms-2ms" (struct link_window) */
	ATTR_DROPS,   /* link `drop`: names nodes, so topology_parse_drops() */
};

struct attr_def {
	const char *name; /* as the seed and docs/protocol.md spell it */
	enum attr_scope scope;
	enum attr_type type;
	size_t offset;		  /* into the scope's struct */
	size_t size;		  /* of the field (strings: buffer size) */
	const char *def;	  /* default, as text ("" = derived, see doc) */
	const char *min, *max;	  /* allowed range as text, NULL = unbounded */
	const char *const *names; /* ATTR_ENUM: NULL-terminated */
	const char *doc;	  /* one line */
};

/* The registry: every attribute of every scope, NULL-terminated by name. */
extern const struct attr_def config_attrs[];

const struct attr_def *config_find(enum attr_scope scope, const char *name);

/* Defaults of each scope (derived values resolved by *_resolve). */
void config_nic_defaults(struct nic_attrs *a);
void config_switch_defaults(struct switch_attrs *a);
void config_link_defaults(struct link_attrs *a);
void config_emulation_defaults(struct emulation_attrs *a);

/* Fill the derived NIC attributes left at 0 (docs/protocol.md §5: BDP =
 * DataRate x ConfigBaseRTT, MaxCongestionWindow = 1.5 BDP rounded to units
 * of MSS + 60, ...). */
void config_nic_resolve(struct nic_attrs *a);
/* EgressQueueLimit's greatest value, given or derived (`auto`): a queue
 * counts its bytes in 32 bits and a trimmable retransmission may fill it to
 * 1.5 x the limit (docs/protocol.md §9). */
#define CONFIG_EGRESS_QUEUE_LIMIT_MAX (1ULL << 30)
void config_switch_resolve(struct switch_attrs *a, uint64_t port_rate);

/* docs/protocol.md §5: the window's unit (MSS + 60 bytes) and BDP = DataRate / 8
 * x ConfigBaseRTT, in bytes. */
uint32_t config_nic_unit(const struct nic_attrs *a);
uint64_t config_nic_bdp(const struct nic_attrs *a);

/* Checks that involve several attributes (after *_resolve): Min <= Initial
 * <= Max congestion window, StartingPortOffset + EntropyCount <= 65536,
 * EcnKmin <= EcnKmax.  On error, one line "NAME: reason" in err. */
bool config_nic_check(const struct nic_attrs *a, char *err, size_t errlen);
bool config_switch_check(const struct switch_attrs *a, char *err, size_t errlen);

/* Set attribute `name` of `scope` in obj (a struct of that scope) from text.
 * On error, writes "NAME: reason (allowed: RANGE)" to err and returns false. */
bool config_set(enum attr_scope scope, void *obj, const char *name, const char *value, char *err,
		size_t errlen);

/* The candidate closest to word (case aside, a few edits at most), for
 * "did you mean"; NULL when none is close. */
const char *config_closest(const char *word, const char *const *cands, size_t n);
const char *config_closest_attr(enum attr_scope scope, const char *word);

/* The value of attribute d in obj as text that config_set() reads back
 * ("150us", "400Gbps", "256KiB", "LocalDatabase"). Returns buf. */
char *config_format(const struct attr_def *d, const void *obj, char *buf, size_t len);

/* `mrcemu attributes`: every attribute with its scope, type, unit, default
 * and range, then its doc (as ns-3's PrintAttributes does). */
void config_print_attributes(FILE *out);

/* An error line quotes what it echoes from a file: every control byte
 * (and DEL) in s becomes \xNN, so a file cannot write escape sequences to
 * a terminal or split the line; cut to fit cap. */
void config_escape(char *s, size_t cap);

/* Open an input file (topology, workload) for reading: a regular file of at
 * most max_bytes, never a FIFO, device or directory, which could block the
 * loader or feed it without end.  NULL with one line in err otherwise. */
FILE *config_open_input(const char *path, uint64_t max_bytes, char *err, size_t errlen);

#endif
