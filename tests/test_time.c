/* tests/test_time.c — picosecond time, rates, sizes, serialization and the
 * scaled virtual clock (docs/architecture.md, Time; docs/topology.md units; seed,
 * Packets on the wire). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>
#include <math.h>

#include "core/time.h"

static void expect_time(const char *s, ps_t want)
{
	char err[200] = "";
	ps_t got = 12345;

	if (!time_parse(s, &got, err, sizeof err)) {
		fail_msg("time_parse(\"%s\") refused: %s", s, err);
	}
	assert_int_equal(got, want);
}

/* A refusal leaves *out alone and names the reason with `words`. */
static void expect_time_error(const char *s, const char *words)
{
	char err[200] = "";
	ps_t got = 777;

	assert_false(time_parse(s, &got, err, sizeof err));
	assert_int_equal(got, 777);
	if (!strstr(err, words)) {
		fail_msg("time_parse(\"%s\"): \"%s\" lacks \"%s\"", s, err, words);
	}
	assert_null(strchr(err, '\n'));
}

static void expect_rate(const char *s, uint64_t want)
{
	char err[200] = "";
	uint64_t got = 0;

	if (!rate_parse(s, &got, err, sizeof err)) {
		fail_msg("rate_parse(\"%s\") refused: %s", s, err);
	}
	assert_int_equal(got, want);
}

static void expect_rate_error(const char *s, const char *words)
{
	char err[200] = "";
	uint64_t got = 777;

	assert_false(rate_parse(s, &got, err, sizeof err));
	assert_int_equal(got, 777);
	if (!strstr(err, words)) {
		fail_msg("rate_parse(\"%s\"): \"%s\" lacks \"%s\"", s, err, words);
	}
}

static void expect_bytes(const char *s, uint64_t want)
{
	char err[200] = "";
	uint64_t got = 0;

	if (!bytes_parse(s, &got, err, sizeof err)) {
		fail_msg("bytes_parse(\"%s\") refused: %s", s, err);
	}
	assert_int_equal(got, want);
}

static void expect_bytes_error(const char *s, const char *words)
{
	char err[200] = "";
	uint64_t got = 777;

	assert_false(bytes_parse(s, &got, err, sizeof err));
	assert_int_equal(got, 777);
	if (!strstr(err, words)) {
		fail_msg("bytes_parse(\"%s\"): \"%s\" lacks \"%s\"", s, err, words);
	}
}

static void test_time_units(void **state)
{
	(void)state;
	expect_time("83480ps", 83480);
	expect_time("1ns", 1000);
	expect_time("150us", 150000000ULL);
	expect_time("2ms", 2000000000ULL);
	expect_time("3s", 3000000000000ULL);
	expect_time("0ns", 0);
	expect_time("0ps", 0);
	/* docs/architecture.md: the 48-bit stamp limits an emulation to 281 s. */
	expect_time("281s", 281000000000000ULL);
}

static void test_time_decimals_exact(void **state)
{
	(void)state;
	expect_time("1.5us", 1500000);
	expect_time("1.5ms", 1500000000ULL);
	expect_time("83.48ns", 83480);
	expect_time("0.000001us", 1);
	expect_time("87.5706us", 87570600);
	/* 0.1 has no exact binary float; integer parsing keeps every ps. */
	expect_time("0.1s", 100000000000ULL);
	expect_time("4.000000000001s", 4000000000001ULL);
	expect_time("1.50000000000000000000000us", 1500000);
	expect_time("  2us ", 2000000);
	/* The largest time that is not PS_NEVER. */
	expect_time("18446744.073709551614s", PS_NEVER - 1);
	expect_time("18446744073709551614ps", PS_NEVER - 1);
}

static void test_time_errors(void **state)
{
	char err[200];
	ps_t t;

	(void)state;
	assert_false(time_parse("12xs", &t, err, sizeof err));
	assert_string_equal(err, "\"12xs\": unknown time unit (use ps, ns, us, ms or s)");
	expect_time_error("12", "missing time unit");
	expect_time_error("4096", "ps, ns, us, ms or s");
	expect_time_error("-1us", "negative");
	expect_time_error("-0ns", "negative");
	expect_time_error("", "empty");
	expect_time_error("   ", "empty");
	expect_time_error("abc", "not a number");
	expect_time_error("us", "not a number");
	expect_time_error(".5us", "not a number");
	expect_time_error("1.us", "not a number");
	expect_time_error("+1us", "not a number");
	expect_time_error("1e3ns", "exponents are not accepted");
	expect_time_error("1.2.3us", "unknown time unit");
	expect_time_error("1usx", "unknown time unit");
	expect_time_error("1 us", "unknown time unit");
	expect_time_error("1US", "unknown time unit");
	expect_time_error("1sec", "unknown time unit");
	expect_time_error("0.5ps", "not a whole number of picoseconds");
	expect_time_error("1.0000000000005s", "not a whole number of picoseconds");
	expect_time_error("0.0000000000000000001ms", "not a whole number of picoseconds");
	expect_time_error("18446744.073709551615s", "too large");
	expect_time_error("18446745s", "too large");
	expect_time_error("18446744073709551616ps", "too large");
	expect_time_error("99999999999999999999999999999999999999999ps", "too large");
	/* The message quotes what was written. */
	expect_time_error("7parsecs", "\"7parsecs\"");
	/* NULL input and a NULL or tiny error buffer are survivable. */
	assert_false(time_parse(NULL, &t, err, sizeof err));
	assert_non_null(strstr(err, "empty time"));
	assert_false(time_parse("12xs", &t, NULL, 0));
	assert_false(time_parse("12xs", &t, err, 4));
	assert_string_equal(err, "\"12");
}

static void test_rate_parse(void **state)
{
	(void)state;
	expect_rate("400Gbps", 400000000000ULL);
	expect_rate("100Gbps", 100000000000ULL);
	expect_rate("25Mbps", 25000000ULL);
	expect_rate("10Kbps", 10000ULL);
	expect_rate("9600bps", 9600);
	expect_rate("1.6Tbps", 1600000000000ULL);
	expect_rate("2.5Gbps", 2500000000ULL);
	expect_rate("18446744073709551615bps", UINT64_MAX);
	expect_rate_error("400", "missing rate unit");
	expect_rate_error("400GBps", "unknown rate unit (use bps, Kbps, Mbps, Gbps or Tbps)");
	expect_rate_error("400G", "unknown rate unit");
	expect_rate_error("0bps", "above zero");
	expect_rate_error("0.0Gbps", "above zero");
	expect_rate_error("-1Gbps", "negative");
	expect_rate_error("0.5bps", "not a whole number of bits per second");
	expect_rate_error("18446744073709551616bps", "too large");
	expect_rate_error("18446745Tbps", "too large");
	expect_rate_error("fastGbps", "not a number");
	expect_rate_error("", "empty rate");
}

static void test_bytes_parse(void **state)
{
	(void)state;
	expect_bytes("4096", 4096);
	expect_bytes("0", 0);
	expect_bytes("62B", 62);
	expect_bytes("4MiB", 4194304);
	expect_bytes("64KiB", 65536);
	expect_bytes("1GiB", 1073741824ULL);
	expect_bytes("1.5KiB", 1536);
	expect_bytes("1.5KB", 1500);
	expect_bytes("2MB", 2000000);
	expect_bytes("3GB", 3000000000ULL);
	expect_bytes("0.5MiB", 524288);
	expect_bytes("17179869183GiB", UINT64_MAX - (1ULL << 30) + 1);
	expect_bytes_error("0.5B", "not a whole number of bytes");
	expect_bytes_error("1.5", "not a whole number of bytes");
	expect_bytes_error("1.0001KiB", "not a whole number of bytes");
	expect_bytes_error("4mib", "unknown size unit (use B, KB, MB, GB, KiB, MiB or GiB)");
	expect_bytes_error("1EiB", "unknown size unit");
	expect_bytes_error("12 KiB", "unknown size unit");
	expect_bytes_error("-4KiB", "negative");
	expect_bytes_error("KiB", "not a number");
	expect_bytes_error("17179869184GiB", "too large");
	expect_bytes_error("18446744073709551616", "too large");
	expect_bytes_error("", "empty size");
}

/* Seed, Packets on the wire: 4,174 bytes at 400 Gbps take 83,480 ps. */
static void test_serialize_exact(void **state)
{
	(void)state;
	assert_int_equal(time_serialize(4174, 400000000000ULL), 83480);
	assert_int_equal(time_serialize(62, 400000000000ULL), 1240);
	assert_int_equal(time_serialize(1, 400000000000ULL), 20);
	assert_int_equal(time_serialize(0, 400000000000ULL), 0);
	assert_int_equal(time_serialize(4174, 100000000000ULL), 333920);
	assert_int_equal(time_serialize(1500, 1000000000ULL), 12000000);
	/* Rounded up: 8 bits at 3 bps = 2.666...s. */
	assert_int_equal(time_serialize(1, 3), 2666666666667ULL);
	/* 1 byte at 3 Tbps = 2.666... ps -> 3 ps. */
	assert_int_equal(time_serialize(1, 3000000000000ULL), 3);
	/* Large products stay exact: 2^40 bytes at 400 Gbps. */
	assert_int_equal(time_serialize(1ULL << 40, 400000000000ULL), 21990232555520ULL);
	assert_int_equal(time_serialize(1, 0), PS_NEVER);
	assert_int_equal(time_serialize(UINT64_MAX, 1), PS_NEVER);
}

static void expect_format(ps_t t, const char *want)
{
	char buf[64];

	assert_string_equal(time_format(t, buf, sizeof buf), want);
}

static void test_format(void **state)
{
	char small[4];

	(void)state;
	expect_format(0, "0ps");
	expect_format(999, "999ps");
	expect_format(1000, "1ns");
	expect_format(83480, "83.48ns");
	expect_format(87570600, "87.5706us");
	expect_format(1500000, "1.5us");
	expect_format(1234567890ULL, "1.234568ms");
	expect_format(281000000000000ULL, "281s");
	expect_format(PS_NEVER, "never");
	assert_ptr_equal(time_format(83480, small, sizeof small), small);
	assert_string_equal(small, "83.");
}

/* docs/architecture.md, Time: virtual_now = (mono_ns - epoch_ns) * 1000 / scale. */
static void test_vclock_arithmetic(void **state)
{
	struct vclock c = {.epoch_ns = 1000000000ULL, .scale = 1000};

	(void)state;
	/* At scale 1000, 1 ms of wall time is 1 us of virtual time. */
	assert_int_equal(vclock_at(&c, c.epoch_ns + 1000000), 1000000);
	assert_int_equal(vclock_at(&c, c.epoch_ns + 1), 1);
	assert_int_equal(vclock_at(&c, c.epoch_ns), 0);
	assert_int_equal(vclock_at(&c, 5), 0); /* before the epoch */
	assert_int_equal(vclock_wall_ns(&c, 1000000), c.epoch_ns + 1000000);
	assert_int_equal(vclock_wall_ns(&c, 0), c.epoch_ns);
	assert_int_equal(vclock_wall_ns(&c, PS_NEVER), UINT64_MAX);

	/* At scale 1, one wall ns is 1,000 ps; a virtual time between two wall
	 * nanoseconds is reached at the later one. */
	c.scale = 1;
	assert_int_equal(vclock_at(&c, c.epoch_ns + 7), 7000);
	assert_int_equal(vclock_wall_ns(&c, 1500), c.epoch_ns + 2);
	assert_int_equal(vclock_wall_ns(&c, 2000), c.epoch_ns + 2);
	assert_int_equal(vclock_wall_ns(&c, 2001), c.epoch_ns + 3);

	/* wall_ns is the first instant that reaches t, for awkward scales. */
	const uint64_t scales[] = {1, 3, 7, 1000, 999, 123457};
	for (size_t i = 0; i < sizeof scales / sizeof scales[0]; i++) {
		c.scale = scales[i];
		for (ps_t t = 1; t < 20000000ULL; t = t * 3 + 1) {
			uint64_t w = vclock_wall_ns(&c, t);
			assert_true(vclock_at(&c, w) >= t);
			assert_true(vclock_at(&c, w - 1) < t);
		}
	}
}

static void test_vclock_now_follows_monotonic(void **state)
{
	struct vclock c = {.scale = 1000};

	(void)state;
	uint64_t before = vclock_mono_ns();
	c.epoch_ns = before - 5000000000ULL; /* started 5 s of wall time ago */
	ps_t v = vclock_now(&c);
	uint64_t after = vclock_mono_ns();
	assert_true(after >= before);
	assert_true(v >= (before - c.epoch_ns) * 1000 / c.scale);
	assert_true(v <= (after - c.epoch_ns) * 1000 / c.scale);
	assert_true(v >= 5000000000ULL); /* 5 s wall / 1000 = 5 ms virtual */

	c.epoch_ns = vclock_mono_ns() + 1000000000000ULL; /* not started yet */
	assert_int_equal(vclock_now(&c), 0);
}

/* Issue 9 item 12: deadlines saturate instead of wrapping to an early time. */
static void test_saturating_arithmetic(void **state)
{
	(void)state;
	assert_int_equal(time_add(150 * PS_PER_US, 2 * PS_PER_US), 152 * PS_PER_US);
	assert_int_equal(time_add(PS_NEVER - 5, 10), PS_NEVER - 1);
	assert_int_equal(time_shl(150 * PS_PER_US, 25), 150 * PS_PER_US << 25);
	/* InitialAckTimeout at its 8 s maximum, doubled 25 times (§12 rule 7):
	 * 2.7e20 ps does not fit in 64 bits. */
	assert_int_equal(time_shl(8 * PS_PER_S, 25), PS_NEVER - 1);
	assert_int_equal(time_shl(1, 64), PS_NEVER - 1);
	assert_true(MRCEMU_MAX_RUN <= (1ULL << 48) - 1);
}

/* time_round is llround for durations, halves away from zero: the PCIe
 * link's TLP times (docs/protocol.md §7) are rounded so. */
static void test_round_as_llround(void **state)
{
	static const double cases[] = {0.0,
				       0.49999999999999994,
				       0.5,
				       1.5,
				       2.5,
				       69291.5,
				       69291.49999999999,
				       1552.0,
				       4503599627370495.5, /* 2^52 - 0.5 */
				       4503599627370496.0,
				       9007199254740993.0,
				       9.2e18};
	uint64_t x = 88172645463325252ULL; /* xorshift64 */

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		assert_int_equal(time_round(cases[i]), (ps_t)llround(cases[i]));
	for (int i = 0; i < 100000; i++) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		/* below 2^40 ps, with every fraction a double has there */
		double d = (double)(x >> 24) / 16384.0;
		assert_int_equal(time_round(d), (ps_t)llround(d));
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_round_as_llround),
	    cmocka_unit_test(test_saturating_arithmetic),
	    cmocka_unit_test(test_time_units),
	    cmocka_unit_test(test_time_decimals_exact),
	    cmocka_unit_test(test_time_errors),
	    cmocka_unit_test(test_rate_parse),
	    cmocka_unit_test(test_bytes_parse),
	    cmocka_unit_test(test_serialize_exact),
	    cmocka_unit_test(test_format),
	    cmocka_unit_test(test_vclock_arithmetic),
	    cmocka_unit_test(test_vclock_now_follows_monotonic),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
