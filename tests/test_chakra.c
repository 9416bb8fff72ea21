/* tests/test_chakra.c — Chakra traces as workloads (issue 14,
 * docs/chakra.md): the real traces of tests/data/chakra run to completion
 * in `mrcemu sim`; a ring all-reduce sends the messages its decomposition
 * says and takes the time the ring's model gives; a send after a COMP
 * starts exactly then; a receive posted late completes at once; malformed
 * traces fail with one line naming file and node before anything starts;
 * a deadlock reports the waiting nodes.  Traces are written with
 * protobuf-c (chakra_write.c) into a fresh folder per test. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "chakra/chakra.h"
#include "sim/sim.h"

#define STAR8 "tests/data/chakra/star-8.ini"

struct run {
	char dir[256];
	struct sim_result r;
	int rc;
	char *report;
};

static void make_dir(struct run *x)
{
	snprintf(x->dir, sizeof(x->dir), "/tmp/mrcemu-chakra-XXXXXX");
	assert_non_null(mkdtemp(x->dir));
}

/* STAR8 with a [workload] naming the trace (and more lines). */
static void write_topology(struct run *x, const char *trace, const char *more)
{
	char path[512], line[512];
	FILE *in = fopen(STAR8, "r"), *out;

	snprintf(path, sizeof(path), "%s/topo.ini", x->dir);
	out = fopen(path, "w");
	assert_non_null(in);
	assert_non_null(out);
	while (fgets(line, sizeof(line), in))
		fputs(line, out);
	fprintf(out, "\n[workload]\nchakra = %s\n%s", trace, more ? more : "");
	fclose(in);
	fclose(out);
}

static void run_sim(struct run *x)
{
	char topo[512], outdir[512];
	size_t len;
	FILE *rep = open_memstream(&x->report, &len);
	struct sim_options o = {.topology = topo, .outdir = outdir, .quiet = true};

	snprintf(topo, sizeof(topo), "%s/topo.ini", x->dir);
	snprintf(outdir, sizeof(outdir), "%s/out", x->dir);
	x->rc = sim_run(&o, &x->r, rep);
	fclose(rep);
}

static void cleanup(struct run *x)
{
	char cmd[600];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", x->dir);
	assert_int_equal(system(cmd), 0);
	free(x->report);
}

/* ---- writing traces --------------------------------------------------------- */

static FILE *rank_file(struct run *x, int rank)
{
	char path[512];
	FILE *f;

	snprintf(path, sizeof(path), "%s/t.%d.et", x->dir, rank);
	f = chakra_write_open(path);
	assert_non_null(f);
	return f;
}

static void node(FILE *f, uint64_t id, enum chakra_type type, int peer, uint64_t bytes, uint64_t us,
		 const uint64_t *deps, size_t ndeps)
{
	struct chakra_spec s = {.id = id,
				.name = "n",
				.type = type,
				.peer = peer,
				.bytes = bytes,
				.duration_us = us,
				.deps = deps,
				.ndeps = ndeps};
	assert_true(chakra_write_node(f, &s));
}

static char *trace_base(struct run *x)
{
	static char base[300];
	snprintf(base, sizeof(base), "%s/t", x->dir);
	return base;
}

/* ---- records -------------------------------------------------------------- */

/* Cell `col` of every row of OUT/name whose cell `key_col` is `key` (NULL:
 * every row), in order; returns the count. */
static int cells(struct run *x, const char *name, int key_col, const char *key, int col,
		 char out[][32], int max)
{
	char path[600], *line = NULL;
	size_t cap = 0;
	int n = 0;
	FILE *f;

	snprintf(path, sizeof(path), "%s/out/%s", x->dir, name);
	f = fopen(path, "r");
	assert_non_null(f);
	for (int row = 0; getline(&line, &cap, f) > 0; row++) {
		char *c[16], *save = NULL, *p = line;
		int k = 0;
		if (!row)
			continue;
		line[strcspn(line, "\n")] = 0;
		/* Cells may be empty: split by hand. */
		c[k++] = p;
		for (; *p && k < 16; p++)
			if (*p == ',') {
				*p = 0;
				c[k++] = p + 1;
			}
		(void)save;
		if (key && strcmp(c[key_col], key))
			continue;
		if (n < max)
			snprintf(out[n], 32, "%s", c[col]);
		n++;
	}
	free(line);
	fclose(f);
	return n;
}

/* ---- the real traces ------------------------------------------------------ */

static const char *const real[] = {
    "chakra-generator-8npus/ALL_GATHER",
    "chakra-generator-8npus/ALL_REDUCE",
    "chakra-generator-8npus/ALL_TO_ALL",
    "chakra-generator-8npus/BARRIER",
    "chakra-generator-8npus/BROADCAST",
    "chakra-generator-8npus/REDUCE_SCATTER",
    "chakra-generator-8npus/one_comp_node",
    "chakra-generator-8npus/one_metadata_node_all_types",
    "chakra-generator-8npus/two_comp_nodes_dependent",
    "chakra-generator-8npus/two_comp_nodes_independent",
    "astra-sim-microbenchmarks/all_gather/4npus_1MB/all_gather",
    "astra-sim-microbenchmarks/all_gather/8npus_1MB/all_gather",
    "astra-sim-microbenchmarks/all_reduce/4npus_1MB/all_reduce",
    "astra-sim-microbenchmarks/all_reduce/8npus_1MB/all_reduce",
    "astra-sim-microbenchmarks/all_to_all/4npus_1MB/all_to_all",
    "astra-sim-microbenchmarks/all_to_all/8npus_1MB/all_to_all",
    "astra-sim-microbenchmarks/reduce_scatter/4npus_1MB/reduce_scatter",
    "astra-sim-microbenchmarks/reduce_scatter/8npus_1MB/reduce_scatter",
};

static void real_traces_complete(void **state)
{
	char cwd[256], trace[600];

	(void)state;
	assert_non_null(getcwd(cwd, sizeof(cwd)));
	for (size_t i = 0; i < sizeof(real) / sizeof(real[0]); i++) {
		struct run x = {0};
		make_dir(&x);
		snprintf(trace, sizeof(trace), "%s/tests/data/chakra/%s", cwd, real[i]);
		write_topology(&x, trace, NULL);
		run_sim(&x);
		if (x.rc != 0 || !x.r.chakra_done)
			fail_msg("%s: rc %d: %s", real[i], x.rc, x.report);
		assert_int_equal(x.r.o.completed, x.r.o.messages);
		/* Compute and metadata only: no message at all. */
		if (strstr(real[i], "comp_node") || strstr(real[i], "metadata"))
			assert_int_equal(x.r.o.messages, 0);
		else
			assert_true(x.r.o.messages > 0);
		cleanup(&x);
	}
}

/* ---- the ring all-reduce -------------------------------------------------- */

/* α: the completion time of a one-packet message on the same fabric. */
static double one_packet_fct_ps(void)
{
	struct run x = {0};
	char fct[1][32];
	FILE *f;

	make_dir(&x);
	write_topology(&x, trace_base(&x), "ranks = h0 h1\n");
	f = rank_file(&x, 0);
	node(f, 1, CHAKRA_SEND, 1, 1, 0, NULL, 0);
	fclose(f);
	f = rank_file(&x, 1);
	node(f, 1, CHAKRA_RECV, 0, 1, 0, NULL, 0);
	fclose(f);
	run_sim(&x);
	assert_int_equal(x.rc, 0);
	assert_int_equal(cells(&x, "messages.csv", -1, NULL, 8, fct, 1), 1);
	cleanup(&x);
	return atof(fct[0]);
}

/* docs/chakra.md, Collectives: a ring all-reduce of S on N ranks is 2(N-1)
 * steps of S/N; each step costs α + S/(N·B) on a non-blocking fabric. */
static void ring_all_reduce(void **state)
{
	struct run x = {0};
	char cwd[256], trace[600], v[32][32];
	const double n = 8, s = 1048576, b = 400e9 / 8 / 1e12; /* bytes per ps */
	double alpha = one_packet_fct_ps(), model, t;

	(void)state;
	assert_non_null(getcwd(cwd, sizeof(cwd)));
	make_dir(&x);
	snprintf(trace, sizeof(trace),
		 "%s/tests/data/chakra/astra-sim-microbenchmarks/all_reduce/8npus_1MB/all_reduce",
		 cwd);
	write_topology(&x, trace, NULL);
	run_sim(&x);
	assert_int_equal(x.rc, 0);
	for (int r = 0; r < 8; r++) {
		char host[16];
		snprintf(host, sizeof(host), "h%d", r);
		assert_int_equal(cells(&x, "messages.csv", 1, host, 3, v, 32), 2 * 7);
		for (int k = 0; k < 14; k++)
			assert_string_equal(v[k], "131072");
	}
	assert_int_equal(x.r.o.messages, 8 * 14);
	model = 2 * (n - 1) * (alpha + s / (n * b));
	t = (double)x.r.chakra_end;
	if (fabs(t - model) > 0.10 * model)
		fail_msg("all-reduce took %.0f ps; model 2(N-1)(a + S/NB) = %.0f ps (a = %.0f ps)",
			 t, model, alpha);
	cleanup(&x);
}

/* ---- timing of single nodes ------------------------------------------------- */

/* A send that depends on a COMP of 7 us posts its message exactly 7 us in. */
static void send_after_comp(void **state)
{
	struct run x = {0};
	uint64_t dep = 1;
	char posted[1][32];
	FILE *f;

	(void)state;
	make_dir(&x);
	write_topology(&x, trace_base(&x), "ranks = h0 h1\n");
	f = rank_file(&x, 0);
	node(f, 1, CHAKRA_COMP, 0, 0, 7, NULL, 0);
	node(f, 2, CHAKRA_SEND, 1, 65536, 0, &dep, 1);
	fclose(f);
	f = rank_file(&x, 1);
	node(f, 1, CHAKRA_RECV, 0, 65536, 0, NULL, 0);
	fclose(f);
	run_sim(&x);
	assert_int_equal(x.rc, 0);
	assert_int_equal(cells(&x, "messages.csv", -1, NULL, 4, posted, 1), 1);
	assert_string_equal(posted[0], "7000000");
	cleanup(&x);
}

/* A receive that starts after its message arrived completes at once. */
static void late_receive(void **state)
{
	struct run x = {0};
	uint64_t dep = 1;
	char v[4][32];
	FILE *f;

	(void)state;
	make_dir(&x);
	write_topology(&x, trace_base(&x), "ranks = h0 h1\n");
	f = rank_file(&x, 0);
	node(f, 1, CHAKRA_SEND, 1, 4096, 0, NULL, 0);
	fclose(f);
	f = rank_file(&x, 1);
	node(f, 1, CHAKRA_COMP, 0, 0, 50, NULL, 0);
	node(f, 2, CHAKRA_RECV, 0, 4096, 0, &dep, 1);
	fclose(f);
	run_sim(&x);
	assert_int_equal(x.rc, 0);
	/* The message arrived well before 50 us ... */
	assert_int_equal(cells(&x, "messages.csv", -1, NULL, 6, v, 1), 1);
	assert_true(atoll(v[0]) < 50000000);
	/* ... and the receive node starts and ends at 50 us. */
	assert_int_equal(cells(&x, "chakra.csv", 3, "COMM_RECV", 4, v, 4), 1);
	assert_string_equal(v[0], "50000000");
	assert_int_equal(cells(&x, "chakra.csv", 3, "COMM_RECV", 5, v, 4), 1);
	assert_string_equal(v[0], "50000000");
	cleanup(&x);
}

/* ---- malformed traces ------------------------------------------------------- */

enum bad {
	BAD_VARINT,
	BAD_LENGTH,
	BAD_TYPE,
	BAD_DEP,
	BAD_CYCLE,
	BAD_UNMATCHED,
	BAD_NO_NIC,
};

static void write_bad(struct run *x, enum bad b)
{
	uint64_t d2 = 2, d3 = 3, d99 = 99;
	FILE *f0 = rank_file(x, 0), *f1 = rank_file(x, 1);

	node(f0, 1, CHAKRA_COMP, 0, 0, 1, NULL, 0);
	switch (b) {
	case BAD_VARINT:
		fputc(0x80, f0); /* a length prefix the file cuts off */
		break;
	case BAD_LENGTH:
		fputc(100, f0); /* 100 bytes announced, 3 there */
		fwrite("abc", 1, 3, f0);
		break;
	case BAD_TYPE:
		node(f0, 2, (enum chakra_type)9, 0, 0, 0, NULL, 0);
		break;
	case BAD_DEP:
		node(f0, 2, CHAKRA_COMP, 0, 0, 1, &d99, 1);
		break;
	case BAD_CYCLE:
		node(f0, 2, CHAKRA_COMP, 0, 0, 1, &d3, 1); /* 2 waits for 3, 3 for 2 */
		node(f0, 3, CHAKRA_COMP, 0, 0, 1, &d2, 1);
		break;
	case BAD_UNMATCHED:
		node(f1, 2, CHAKRA_RECV, 0, 64, 0, NULL, 0);
		break;
	case BAD_NO_NIC:
		fclose(rank_file(x, 2));
		break;
	}
	fclose(f0);
	fclose(f1);
}

static void malformed(void **state)
{
	static const struct {
		enum bad b;
		const char *file, *node, *why;
	} cases[] = {
	    {BAD_VARINT, "t.0.et", "node 1 ", "cut off"},
	    {BAD_LENGTH, "t.0.et", "node 1 ", "past the end"},
	    {BAD_TYPE, "t.0.et", "node 2 ", "not a node type"},
	    {BAD_DEP, "t.0.et", "node 2 ", "not in the file"},
	    {BAD_CYCLE, "t.0.et", "node ", "cycle"},
	    {BAD_UNMATCHED, "t.1.et", "node 2 ", "no send"},
	    {BAD_NO_NIC, "t.2.et", "", "has no NIC"},
	};

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct run x = {0};
		char out[600];
		make_dir(&x);
		write_topology(&x, trace_base(&x), "ranks = h0 h1\n");
		write_bad(&x, cases[i].b);
		run_sim(&x);
		if (x.rc != 2 || !strstr(x.report, cases[i].file) ||
		    !strstr(x.report, cases[i].node) || !strstr(x.report, cases[i].why) ||
		    strchr(x.report, '\n') != x.report + strlen(x.report) - 1)
			fail_msg("case %zu: rc %d, report: %s", i, x.rc, x.report);
		/* Checked before anything starts: no records at all. */
		snprintf(out, sizeof(out), "%s/out", x.dir);
		assert_int_not_equal(access(out, F_OK), 0);
		cleanup(&x);
	}
}

/* Both ranks receive before they send: each waits for the other. */
static void deadlock_reports_waiting(void **state)
{
	struct run x = {0};
	uint64_t dep = 1;
	FILE *f;

	(void)state;
	make_dir(&x);
	write_topology(&x, trace_base(&x), "ranks = h0 h1\n");
	for (int r = 0; r < 2; r++) {
		f = rank_file(&x, r);
		node(f, 1, CHAKRA_RECV, 1 - r, 64, 0, NULL, 0);
		node(f, 2, CHAKRA_SEND, 1 - r, 64, 0, &dep, 1);
		fclose(f);
	}
	run_sim(&x);
	assert_int_equal(x.rc, 1);
	assert_false(x.r.chakra_done);
	if (!strstr(x.report, "rank 0") || !strstr(x.report, "rank 1") ||
	    !strstr(x.report, "node 1 (n, COMM_RECV) waits for message"))
		fail_msg("report: %s", x.report);
	cleanup(&x);
}

/* ---- export ------------------------------------------------------------------ */

static char *slurp(const char *path)
{
	FILE *f = fopen(path, "r");
	char *buf = calloc(1, 65536);

	assert_non_null(f);
	assert_non_null(buf);
	assert_true(fread(buf, 1, 65535, f) > 0);
	fclose(f);
	return buf;
}

/* CSV -> Chakra -> CSV: `mrcemu export chakra`, then `mrcemu export csv`. */
static void round_trip(struct run *x, const char *csv, char **back, char **warnings)
{
	const char *mrcemu = getenv("MRCEMU") ? getenv("MRCEMU") : "build/mrcemu";
	char path[600], cmd[2400];
	FILE *f;

	snprintf(path, sizeof(path), "%s/w.csv", x->dir);
	f = fopen(path, "w");
	assert_non_null(f);
	fputs(csv, f);
	fclose(f);
	snprintf(cmd, sizeof(cmd),
		 "{ cat %s; printf '\\n[workload]\\nfile = w.csv\\n'; } >%s/a.ini && "
		 "{ cat %s; printf '\\n[workload]\\nchakra = tr/x\\n'; } >%s/b.ini && "
		 "%s export chakra %s/a.ini -o %s/tr/x 2>%s/warn && "
		 "%s export csv %s/b.ini -o %s/back.csv",
		 STAR8, x->dir, STAR8, x->dir, mrcemu, x->dir, x->dir, x->dir, mrcemu, x->dir,
		 x->dir);
	assert_int_equal(system(cmd), 0);
	snprintf(path, sizeof(path), "%s/back.csv", x->dir);
	*back = slurp(path);
	snprintf(path, sizeof(path), "%s/warn", x->dir);
	f = fopen(path, "r");
	*warnings = calloc(1, 4096);
	assert_non_null(f);
	assert_true(fread(*warnings, 1, 4095, f) < 4095);
	fclose(f);
}

static void export_round_trip(void **state)
{
	static const char whole[] = "id,at,src,dst,bytes,after\n"
				    "1,0,h0,h1,4096,\n"
				    "2,5us,h1,h0,65536,1\n"
				    "3,3us,h0,h2,1000,1;2\n"
				    "7,12us,h3,h7,1048576,\n";
	static const char fractional[] = "id,at,src,dst,bytes,after\n"
					 "1,2500ns,h0,h1,4096,\n"
					 "2,1200ns,h1,h0,10,1\n";
	struct run x = {0};
	char *back, *warn;

	(void)state;
	make_dir(&x);
	round_trip(&x, whole, &back, &warn);
	assert_string_equal(back, whole); /* the identity */
	assert_string_equal(warn, "");
	free(back);
	free(warn);
	round_trip(&x, fractional, &back, &warn);
	assert_string_equal(back, "id,at,src,dst,bytes,after\n"
				  "1,3us,h0,h1,4096,\n"
				  "2,1us,h1,h0,10,1\n");
	if (!strstr(warn, "w.csv:2: at: 2.5us rounded to 3us") ||
	    !strstr(warn, "w.csv:3: at: 1.2us rounded to 1us"))
		fail_msg("warnings: %s", warn);
	free(back);
	free(warn);
	cleanup(&x);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(real_traces_complete),
	    cmocka_unit_test(ring_all_reduce),
	    cmocka_unit_test(send_after_comp),
	    cmocka_unit_test(late_receive),
	    cmocka_unit_test(malformed),
	    cmocka_unit_test(deadlock_reports_waiting),
	    cmocka_unit_test(export_round_trip),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
