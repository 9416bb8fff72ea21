/* tests/test_hmap.c — the map of QP tables (core/hmap.h): every lookup
 * agrees with a plain array through puts, replacements, deletions and
 * growth, the remembered last member included (a stale one would hand a
 * frame to a closed QP). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "core/hmap.h"
#include "core/rng.h"

#define KEYS 300

/* The member put last is forgotten when deleted, and follows a
 * replacement. */
static void test_last_member(void **state)
{
	struct hmap m;
	int a, b;

	(void)state;
	hmap_init(&m);
	assert_null(hmap_get(&m, 7));
	assert_true(hmap_put(&m, 7, &a));
	assert_ptr_equal(hmap_get(&m, 7), &a);
	assert_true(hmap_put(&m, 7, &b));
	assert_ptr_equal(hmap_get(&m, 7), &b);
	assert_int_equal(m.count, 1);
	assert_ptr_equal(hmap_del(&m, 7), &b);
	assert_null(hmap_get(&m, 7));
	assert_null(hmap_del(&m, 7));
	assert_true(hmap_put(&m, 0, &a)); /* key 0 is a key like any other */
	assert_ptr_equal(hmap_get(&m, 0), &a);
	hmap_destroy(&m);
	assert_null(hmap_get(&m, 0));
}

/* Random puts, replacements and deletions over a few hundred keys (the
 * map grows several times, deletions shift clusters back): every key's
 * lookup matches the reference after each step. */
static void test_random_against_array(void **state)
{
	static int vals[4][KEYS];
	void *ref[KEYS] = {0};
	struct hmap m;
	struct rng r;
	size_t n = 0;

	(void)state;
	rng_seed(&r, 1, "hmap");
	hmap_init(&m);
	for (int step = 0; step < 20000; step++) {
		uint64_t k = rng_next(&r) % KEYS;
		if (rng_next(&r) % 3) {
			void *v = &vals[rng_next(&r) % 4][k];
			assert_true(hmap_put(&m, k * 0x10001, v));
			n += !ref[k];
			ref[k] = v;
		} else {
			assert_ptr_equal(hmap_del(&m, k * 0x10001), ref[k]);
			n -= ref[k] != NULL;
			ref[k] = NULL;
		}
		assert_int_equal(m.count, n);
		for (uint64_t j = 0; j < KEYS; j += 1 + step % 7)
			assert_ptr_equal(hmap_get(&m, j * 0x10001), ref[j]);
		assert_ptr_equal(hmap_get(&m, k * 0x10001), ref[k]);
	}
	hmap_destroy(&m);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_last_member),
	    cmocka_unit_test(test_random_against_array),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
