/* tests/test_driver.c — the workload driver's own failures
 * (emulator/host/driver.h): out of memory while it indexes the workload,
 * driver_init says so instead of leaving an `after` unresolved (issue 9,
 * engine invariants: no ignored result of hmap_put).  The driver's source
 * is compiled here with its hmap_put calls renamed, so a test can make the
 * next put fail (the library's driver.o is then never linked in). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "core/hmap.h"
#include "lib/scenario.h"

static bool failing_hmap_put(struct hmap *m, uint64_t key, void *val);
#define hmap_put failing_hmap_put
#include "host/driver.c"
#undef hmap_put

static int puts_before_failure = -1; /* -1: never fail */

static bool failing_hmap_put(struct hmap *m, uint64_t key, void *val)
{
	if (puts_before_failure == 0)
		return false;
	if (puts_before_failure > 0)
		puts_before_failure--;
	return hmap_put(m, key, val);
}

static struct nic *no_nic(void *ctx, int node)
{
	(void)ctx;
	(void)node;
	return NULL;
}

/* Every put of the workload's ids that fails fails driver_init, whichever
 * it is: the first, or the third of three (message 3 names 1 in `after`). */
static void test_init_fails_when_an_id_cannot_be_indexed(void **state)
{
	struct scenario *s = scenario_b2b(NULL, NULL,
					  "1,0ns,h0,h1,4KiB,\n2,0ns,h1,h0,4KiB,\n"
					  "3,0ns,h0,h1,4KiB,1\n");
	char path[400], err[TOPO_ERR_MAX];
	struct topology *t;
	struct workload w;
	struct driver d;

	(void)state;
	snprintf(path, sizeof(path), "%s/topo.ini", s->dir);
	t = topology_load(path, err, sizeof(err));
	assert_non_null(t);
	assert_true(workload_load(t->workload, t, &w, err, sizeof(err)));
	for (int fail_at = 0; fail_at < 3; fail_at++) {
		puts_before_failure = fail_at;
		assert_false(driver_init(&d, t, &w, NULL, -1, no_nic, NULL));
		puts_before_failure = -1;
		driver_destroy(&d);
	}
	assert_true(driver_init(&d, t, &w, NULL, -1, no_nic, NULL));
	assert_int_equal(d.msgs[0].ndependents, 1);
	driver_destroy(&d);
	workload_free(&w);
	topology_free(t);
	scenario_free(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_init_fails_when_an_id_cannot_be_indexed),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
