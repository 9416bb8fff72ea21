/* emulator/core/time.h — picosecond time, link rates, byte sizes and the scaled
 * virtual clock (docs/architecture.md, Time).
 *
 * Engines keep time as ps_t, an unsigned count of picoseconds: exact at
 * 400 Gbps, where one byte takes 20 ps.  Parsers accept the units of
 * docs/topology.md written with the number ("1us", "400Gbps", "4MiB") and say
 * what was wrong in a caller-supplied buffer. */
#ifndef EMULATOR_TIME_H
#define EMULATOR_TIME_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef uint64_t ps_t;

#define PS_PER_NS 1000ULL
#define PS_PER_US 1000000ULL
#define PS_PER_MS 1000000000ULL
#define PS_PER_S  1000000000000ULL
#define PS_NEVER  UINT64_MAX
/* The longest run: a frame's virtual arrival travels in a 48-bit stamp
 * (docs/architecture.md), 2^48 - 1 ps = 281.47 s; `until` is refused past
 * 281 s. */
#define MRCEMU_MAX_RUN (281 * PS_PER_S)

/* Saturating arithmetic for deadlines: a sum or a doubling that would pass
 * the largest time stays at PS_NEVER - 1, later than any run, instead of
 * wrapping to an early one. */
static inline ps_t time_add(ps_t a, ps_t b)
{
	return a < PS_NEVER - 1 - b ? a + b : PS_NEVER - 1;
}

static inline ps_t time_shl(ps_t t, unsigned k)
{
	return k < 64 && t <= (PS_NEVER - 1) >> k ? t << k : PS_NEVER - 1;
}

/* A non-negative duration in ps (below 2^63) to the nearest whole ps,
 * halves away from zero: what llround gives, without libm, which nothing
 * else needs (docs/scale.md: every library loaded costs each process).
 * Exact: x and its whole part are within 1, so their difference is. */
static inline ps_t time_round(double x)
{
	ps_t whole = (ps_t)x;

	return x - (double)whole >= 0.5 ? whole + 1 : whole;
}

/* Parse "150us", "1.5ms", "83480ps" (units ps ns us ms s; a bare number is
 * refused).  Returns true on success; on failure writes one line to err. */
bool time_parse(const char *s, ps_t *out, char *err, size_t errlen);

/* Parse "400Gbps" (units bps Kbps Mbps Gbps Tbps, decimal) into bits/s. */
bool rate_parse(const char *s, uint64_t *bps, char *err, size_t errlen);

/* Parse "4MiB", "4096", "1.5KB" (units B KB MB GB KiB MiB GiB; a bare number
 * is bytes) into bytes. */
bool bytes_parse(const char *s, uint64_t *bytes, char *err, size_t errlen);

/* Time for `bytes` to leave a port of `bps`, rounded up to whole ps:
 * 4,174 bytes at 400 Gbps = 83,480 ps (seed, Packets on the wire). */
ps_t time_serialize(uint64_t bytes, uint64_t bps);

/* Format t with the largest unit that keeps it exact-ish ("87.5706us"),
 * for messages and summaries. Returns buf. */
char *time_format(ps_t t, char *buf, size_t len);

/* The scaled virtual clock of docs/architecture.md, Time:
 *   virtual_now = (CLOCK_MONOTONIC_ns - epoch_ns) * 1000 / scale  ps.
 * scale is wall ns per virtual ns. */
struct vclock {
	uint64_t epoch_ns; /* CLOCK_MONOTONIC, ns */
	uint64_t scale;	   /* wall ns per virtual ns, >= 1 */
};

uint64_t vclock_mono_ns(void);
ps_t vclock_now(const struct vclock *c);
/* Virtual time at the CLOCK_MONOTONIC instant mono_ns (0 before the epoch);
 * vclock_now(c) is vclock_at(c, vclock_mono_ns()). */
ps_t vclock_at(const struct vclock *c, uint64_t mono_ns);
/* The CLOCK_MONOTONIC instant (ns) at which virtual time t is reached. */
uint64_t vclock_wall_ns(const struct vclock *c, ps_t t);

#endif
