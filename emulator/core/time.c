/* emulator/core/time.c — picosecond time, link rates, byte sizes and the scaled
 * virtual clock (docs/architecture.md, Time; units of docs/topology.md).
 *
 * Every quantity is parsed with integer arithmetic only: the digits of
 * "1.5us" become 15 and one decimal place, and the result is 15 * 10^6 / 10
 * ps, checked to be whole.  No floating point, so "83.48ns" is exactly
 * 83,480 ps and never 83,479. */
#include "time.h"

#include <stdio.h>
#include <string.h>
#include <time.h>

typedef unsigned __int128 u128;

struct unit {
	const char *name;
	uint64_t mult; /* base units (ps, bit/s, bytes) per one of this unit */
};

/* What is being parsed: its units and the words of its messages. */
struct quantity {
	const char *what; /* "time", "rate", "size" */
	const struct unit *units;
	const char *unit_list; /* for "unknown unit" messages */
	const char *base;      /* "picoseconds", ... for "not a whole number" */
	uint64_t bare_mult;    /* multiplier of a bare number, 0 = refused */
	uint64_t min;	       /* smallest value accepted */
	uint64_t max;	       /* largest value accepted */
};

static const struct unit time_units[] = {
    {"ps", 1}, {"ns", PS_PER_NS}, {"us", PS_PER_US}, {"ms", PS_PER_MS}, {"s", PS_PER_S}, {NULL, 0},
};

static const struct unit rate_units[] = {
    {"bps", 1ULL},	     {"Kbps", 1000ULL},		 {"kbps", 1000ULL}, {"Mbps", 1000000ULL},
    {"Gbps", 1000000000ULL}, {"Tbps", 1000000000000ULL}, {NULL, 0},
};

static const struct unit bytes_units[] = {
    {"B", 1ULL},	 {"KB", 1000ULL},	{"kB", 1000ULL},
    {"MB", 1000000ULL},	 {"GB", 1000000000ULL}, {"KiB", 1ULL << 10},
    {"MiB", 1ULL << 20}, {"GiB", 1ULL << 30},	{NULL, 0},
};

/* PS_NEVER is the queue's "no event" sentinel, so no parsed time equals it. */
static const struct quantity time_quantity = {
    "time", time_units, "ps, ns, us, ms or s", "picoseconds", 0, 0, PS_NEVER - 1,
};

/* A zero rate would make every serialization time infinite. */
static const struct quantity rate_quantity = {
    "rate", rate_units, "bps, Kbps, Mbps, Gbps or Tbps", "bits per second", 0, 1, UINT64_MAX,
};

static const struct quantity bytes_quantity = {
    "size", bytes_units, "B, KB, MB, GB, KiB, MiB or GiB", "bytes", 1, 0, UINT64_MAX,
};

/* More decimal places than this cannot be exact for any unit above; refusing
 * them keeps the fraction inside 64 bits. */
#define MAX_DECIMALS 18

static bool fail(char *err, size_t errlen, const char *s, const char *fmt, const char *a,
		 const char *b)
{
	char why[160];

	if (err && errlen) {
		snprintf(why, sizeof why, fmt, a, b);
		snprintf(err, errlen, "\"%s\": %s", s, why);
	}
	return false;
}

static bool is_space(char c)
{
	return c == ' ' || c == '\t' || c == '\r' || c == '\n';
}

static bool is_digit(char c)
{
	return c >= '0' && c <= '9';
}

static const struct unit *find_unit(const struct unit *units, const char *name, size_t len)
{
	for (const struct unit *u = units; u->name; u++) {
		if (strlen(u->name) == len && !memcmp(u->name, name, len)) {
			return u;
		}
	}
	return NULL;
}

/* The number as digits: integer part (saturated above 2^64, which is too
 * large for any unit) and fraction frac / 10^decimals. */
struct number {
	u128 whole;
	uint64_t frac;
	unsigned decimals;
	bool too_precise;
};

/* Reads [0-9]+(\.[0-9]+)? from *p; false if there is no such number. */
static bool scan_number(const char **p, struct number *n)
{
	const char *c = *p;

	memset(n, 0, sizeof *n);
	if (!is_digit(*c)) {
		return false;
	}
	for (; is_digit(*c); c++) {
		n->whole = n->whole * 10 + (unsigned)(*c - '0');
		if (n->whole > (u128)UINT64_MAX) {
			n->whole = (u128)UINT64_MAX + 1;
		}
	}
	if (*c == '.') {
		c++;
		if (!is_digit(*c)) {
			return false;
		}
		for (; is_digit(*c); c++) {
			if (n->decimals < MAX_DECIMALS) {
				n->frac = n->frac * 10 + (unsigned)(*c - '0');
				n->decimals++;
			} else if (*c != '0') {
				n->too_precise = true;
			}
		}
	}
	*p = c;
	return true;
}

static bool parse_quantity(const struct quantity *k, const char *s, uint64_t *out, char *err,
			   size_t errlen)
{
	const char *p = s ? s : "";
	const char *unit, *end;
	const struct unit *u;
	struct number n;
	uint64_t mult, pow10 = 1;

	while (is_space(*p)) {
		p++;
	}
	if (!*p) {
		return fail(err, errlen, s ? s : "", "empty %s%s", k->what, "");
	}
	if (*p == '-') {
		return fail(err, errlen, s, "negative %s%s", k->what, " is not allowed");
	}
	if (!scan_number(&p, &n)) {
		return fail(err, errlen, s, "not a number (expected digits, then a %s unit: %s)",
			    k->what, k->unit_list);
	}
	unit = p;
	/* "1e9" reads as 1 and the unit "e9"; say what is really wrong. */
	if ((*p == 'e' || *p == 'E') && (is_digit(p[1]) || p[1] == '+' || p[1] == '-')) {
		return fail(err, errlen, s,
			    "exponents are not accepted (write the digits and a %s unit: %s)",
			    k->what, k->unit_list);
	}
	for (end = p + strlen(p); end > unit && is_space(end[-1]); end--) {
	}
	if (end == unit) {
		if (!k->bare_mult) {
			return fail(err, errlen, s, "missing %s unit (use %s)", k->what,
				    k->unit_list);
		}
		mult = k->bare_mult;
	} else {
		u = find_unit(k->units, unit, (size_t)(end - unit));
		if (!u) {
			return fail(err, errlen, s, "unknown %s unit (use %s)", k->what,
				    k->unit_list);
		}
		mult = u->mult;
	}
	for (unsigned i = 0; i < n.decimals; i++) {
		pow10 *= 10;
	}
	/* frac < 10^18 and mult <= 10^12, so the product fits in 128 bits. */
	u128 frac = (u128)n.frac * mult;
	if (n.too_precise || frac % pow10) {
		return fail(err, errlen, s, "not a whole number of %s%s", k->base, "");
	}
	u128 v = n.whole * mult + frac / pow10;
	if (n.whole > (u128)UINT64_MAX || v > (u128)k->max) {
		return fail(err, errlen, s, "%s too large%s", k->what, " (overflow)");
	}
	if (v < k->min) {
		return fail(err, errlen, s, "%s must be above zero%s", k->what, "");
	}
	*out = (uint64_t)v;
	return true;
}

bool time_parse(const char *s, ps_t *out, char *err, size_t errlen)
{
	return parse_quantity(&time_quantity, s, out, err, errlen);
}

bool rate_parse(const char *s, uint64_t *bps, char *err, size_t errlen)
{
	return parse_quantity(&rate_quantity, s, bps, err, errlen);
}

bool bytes_parse(const char *s, uint64_t *bytes, char *err, size_t errlen)
{
	return parse_quantity(&bytes_quantity, s, bytes, err, errlen);
}

/* Seed, Packets on the wire: a frame occupies the link for bytes * 8 / rate,
 * rounded up to whole ps.  bytes * 8 * 10^12 < 2^107, so 128 bits are exact.
 * A zero rate or a time past 64 bits is PS_NEVER. */
ps_t time_serialize(uint64_t bytes, uint64_t bps)
{
	if (!bps) {
		return PS_NEVER;
	}
	u128 bits_ps = (u128)bytes * 8 * PS_PER_S;
	u128 t = (bits_ps + bps - 1) / bps;
	return t >= PS_NEVER ? PS_NEVER : (ps_t)t;
}

/* Up to six decimals, rounded half up, trailing zeros dropped: 87,570,600 ps
 * reads "87.5706us". */
char *time_format(ps_t t, char *buf, size_t len)
{
	static const struct unit desc[] = {
	    {"s", PS_PER_S},
	    {"ms", PS_PER_MS},
	    {"us", PS_PER_US},
	    {"ns", PS_PER_NS},
	};
	const char *name = "ps";
	uint64_t unit = 1, scale = 1;
	unsigned digits = 0;

	if (!len) {
		return buf;
	}
	if (t == PS_NEVER) {
		snprintf(buf, len, "never");
		return buf;
	}
	for (size_t i = 0; i < sizeof desc / sizeof desc[0]; i++) {
		if (t >= desc[i].mult) {
			name = desc[i].name;
			unit = desc[i].mult;
			break;
		}
	}
	for (uint64_t u = unit; u > 1 && digits < 6; u /= 10) {
		digits++;
		scale *= 10;
	}
	uint64_t whole = t / unit;
	uint64_t frac = (uint64_t)(((u128)(t % unit) * scale + unit / 2) / unit);
	if (frac == scale) {
		whole++;
		frac = 0;
	}
	while (digits && frac % 10 == 0) {
		frac /= 10;
		digits--;
	}
	if (digits) {
		snprintf(buf, len, "%llu.%0*llu%s", (unsigned long long)whole, (int)digits,
			 (unsigned long long)frac, name);
	} else {
		snprintf(buf, len, "%llu%s", (unsigned long long)whole, name);
	}
	return buf;
}

uint64_t vclock_mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

static uint64_t vclock_scale(const struct vclock *c)
{
	return c->scale ? c->scale : 1;
}

/* docs/architecture.md, Time: virtual_now = (mono_ns - epoch_ns) * 1000 / scale.
 * Before the epoch the emulation has not started: time 0. */
ps_t vclock_at(const struct vclock *c, uint64_t mono_ns)
{
	if (mono_ns <= c->epoch_ns) {
		return 0;
	}
	u128 v = (u128)(mono_ns - c->epoch_ns) * 1000 / vclock_scale(c);
	return v >= PS_NEVER ? PS_NEVER - 1 : (ps_t)v;
}

ps_t vclock_now(const struct vclock *c)
{
	return vclock_at(c, vclock_mono_ns());
}

/* The first nanosecond whose virtual time is >= t: a daemon woken then never
 * finds the event still in its future. */
uint64_t vclock_wall_ns(const struct vclock *c, ps_t t)
{
	if (t == PS_NEVER) {
		return UINT64_MAX;
	}
	u128 w = ((u128)t * vclock_scale(c) + 999) / 1000 + c->epoch_ns;
	return w >= UINT64_MAX ? UINT64_MAX : (uint64_t)w;
}
