/* tests/test_records.c — the CSV writer of every record (docs/records.md,
 * Records): one header row, typed cells, quoting where a cell needs it,
 * whole rows, an abort on a row with the wrong number of cells, and
 * records_mkdir (mkdir -p). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "core/outcome.h"
#include "core/records.h"

static char *slurp(const char *path)
{
	FILE *f = fopen(path, "r");
	char *buf = calloc(1, 65536);
	size_t n;

	assert_non_null(f);
	n = fread(buf, 1, 65535, f);
	buf[n] = '\0';
	fclose(f);
	return buf;
}

static char *temp_dir(void)
{
	static char dir[64];

	snprintf(dir, sizeof dir, "/tmp/mrcemu-records-XXXXXX");
	assert_non_null(mkdtemp(dir));
	return dir;
}

static void remove_tree(const char *dir)
{
	char cmd[256];

	snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
	assert_int_equal(system(cmd), 0);
}

static void test_cells_and_quoting(void **state)
{
	char *dir = temp_dir(), path[128];
	struct csv *c = csv_open(dir, "x.csv", "time_ps,node,n,s,ok,ip,q,r");

	(void)state;
	assert_non_null(c);
	assert_int_equal(c->ncols, 8);
	csv_u64(c, 18446744073709551615ULL);
	csv_str(c, "h0");
	csv_i64(c, -5);
	csv_str(c, "a,b");
	csv_bool(c, true);
	csv_ipv4(c, 0x0A000001);
	csv_str(c, "say \"hi\"");
	csv_str(c, "two\nlines");
	csv_end(c);
	csv_u64(c, 0);
	csv_str(c, "");
	csv_i64(c, INT64_MIN);
	csv_str(c, " padded ");
	csv_bool(c, false);
	csv_ipv4(c, 0xFFFFFFFF);
	csv_double(c, 0.25);
	csv_str(c, "plain");
	csv_end(c);
	assert_int_equal(c->rows, 2);
	assert_true(csv_close(c));

	snprintf(path, sizeof path, "%s/x.csv", dir);
	char *text = slurp(path);
	assert_string_equal(text, "time_ps,node,n,s,ok,ip,q,r\n"
				  "18446744073709551615,h0,-5,\"a,b\",true,10.0.0.1,"
				  "\"say \"\"hi\"\"\",\"two\nlines\"\n"
				  "0,,-9223372036854775808,\" padded \",false,255.255.255.255,0.25,"
				  "plain\n");
	free(text);
	remove_tree(dir);
}

/* Rows are written whole: nothing of a row reaches the file before its end. */
static void test_rows_are_written_whole(void **state)
{
	char *dir = temp_dir(), path[128];
	struct csv *c = csv_open(dir, "w.csv", "a,b");
	struct stat st;

	(void)state;
	assert_non_null(c);
	fflush(c->f);
	snprintf(path, sizeof path, "%s/w.csv", dir);
	assert_int_equal(stat(path, &st), 0);
	assert_int_equal(st.st_size, 4);
	csv_u64(c, 1);
	fflush(c->f);
	assert_int_equal(stat(path, &st), 0);
	assert_int_equal(st.st_size, 4);
	csv_u64(c, 2);
	csv_end(c);
	fflush(c->f);
	assert_int_equal(stat(path, &st), 0);
	assert_int_equal(st.st_size, 8);
	assert_true(csv_close(c));
	remove_tree(dir);
}

/* A row with too few or too many cells is a bug: csv_end aborts. */
static int child_status(int cells)
{
	char *dir = temp_dir();
	pid_t pid = fork();
	int status;

	assert_true(pid >= 0);
	if (pid == 0) {
		struct csv *c = csv_open(dir, "bad.csv", "a,b,c");
		if (!freopen("/dev/null", "w", stderr)) {
			_exit(3);
		}
		for (int i = 0; i < cells; i++) {
			csv_u64(c, (uint64_t)i);
		}
		csv_end(c);
		csv_close(c);
		_exit(0);
	}
	assert_int_equal(waitpid(pid, &status, 0), pid);
	remove_tree(dir);
	return status;
}

static void test_wrong_cell_count_aborts(void **state)
{
	int st;

	(void)state;
	st = child_status(2);
	assert_true(WIFSIGNALED(st));
	assert_int_equal(WTERMSIG(st), SIGABRT);
	st = child_status(4);
	assert_true(WIFSIGNALED(st));
	assert_int_equal(WTERMSIG(st), SIGABRT);
	st = child_status(3);
	assert_true(WIFEXITED(st));
	assert_int_equal(WEXITSTATUS(st), 0);
}

static void test_open_and_close_failures(void **state)
{
	struct csv *c;

	(void)state;
	errno = 0;
	assert_null(csv_open("/nonexistent-mrcemu-dir", "x.csv", "a"));
	assert_int_equal(errno, ENOENT);
	/* A write that fails (the disk is full) is reported by csv_close. */
	c = csv_open("/dev", "full", "a");
	if (c) {
		for (int i = 0; i < 10000; i++) {
			csv_u64(c, (uint64_t)i);
			csv_end(c);
		}
		assert_false(csv_close(c));
	}
}

static void test_mkdir_p(void **state)
{
	char *dir = temp_dir(), path[256], file[256];
	struct stat st;

	(void)state;
	snprintf(path, sizeof path, "%s/a/b/c", dir);
	assert_true(records_mkdir(path));
	assert_int_equal(stat(path, &st), 0);
	assert_true(S_ISDIR(st.st_mode));
	assert_true(records_mkdir(path)); /* exists: fine */
	snprintf(path, sizeof path, "%s/a/b/c/", dir);
	assert_true(records_mkdir(path));

	snprintf(file, sizeof file, "%s/plain", dir);
	FILE *f = fopen(file, "w");
	assert_non_null(f);
	fclose(f);
	errno = 0;
	assert_false(records_mkdir(file));
	assert_int_equal(errno, ENOTDIR);
	snprintf(path, sizeof path, "%s/plain/sub", dir);
	assert_false(records_mkdir(path));
	assert_int_equal(errno, ENOTDIR);
	assert_false(records_mkdir(""));
	remove_tree(dir);
}

/* Completion-time percentiles by nearest rank (docs/records.md, The
 * summary): rank ceil(p/100 * n), so p99 of fewer than 100 is the max. */
static void test_nearest_rank_percentiles(void **state)
{
	ps_t three[] = {90, 5, 26}, hundred[100], two_hundred[200];
	struct run_outcome o = {0};
	char dir[] = "/tmp/mrcemu-summary-XXXXXX", path[64], text[2048] = "";
	FILE *f;

	(void)state;
	outcome_fct(&o, three, 3);
	assert_int_equal(o.fct_p50, 26);
	assert_int_equal(o.fct_p99, 90);
	assert_int_equal(o.fct_max, 90);
	for (int i = 0; i < 100; i++)
		hundred[i] = (ps_t)(100 - i);
	outcome_fct(&o, hundred, 100);
	assert_int_equal(o.fct_p50, 50);
	assert_int_equal(o.fct_p99, 99);
	assert_int_equal(o.fct_max, 100);
	for (int i = 0; i < 200; i++)
		two_hundred[i] = (ps_t)(i + 1);
	outcome_fct(&o, two_hundred, 200);
	assert_int_equal(o.fct_p99, 198);
	o.messages = 3;
	o.completed = 3;
	assert_non_null(mkdtemp(dir));
	assert_true(outcome_write_json(&o, dir, "  \"extra\": 7", stderr));
	snprintf(path, sizeof(path), "%s/summary.json", dir);
	assert_non_null(f = fopen(path, "r"));
	assert_true(fread(text, 1, sizeof(text) - 1, f) > 0);
	fclose(f);
	unlink(path);
	rmdir(dir);
	assert_non_null(strstr(text, "\"percentiles\": \"nearest-rank\""));
	assert_non_null(strstr(text, "\"fct_p99_ps\": 198,"));
	assert_non_null(strstr(text, "\"completed\": 3,"));
	assert_non_null(strstr(text, "\"extra\": 7\n}\n"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_cells_and_quoting),
	    cmocka_unit_test(test_rows_are_written_whole),
	    cmocka_unit_test(test_wrong_cell_count_aborts),
	    cmocka_unit_test(test_open_and_close_failures),
	    cmocka_unit_test(test_mkdir_p),
	    cmocka_unit_test(test_nearest_rank_percentiles),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
