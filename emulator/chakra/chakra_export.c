/* emulator/chakra/chakra_export.c — a topology's workload in the other format
 * (docs/chakra.md, Export): `mrcemu export chakra` writes the CSV workload
 * as Chakra traces, one file per rank, for ASTRA-sim and the like;
 * `mrcemu export csv` writes back the CSV workload of traces of that
 * shape.  CSV -> Chakra -> CSV is the identity when every `at` is a whole
 * number of microseconds (Chakra's unit); other times are rounded to the
 * nearest microsecond, with a warning each.
 *
 * The shape: CSV message i from src to dst is, on src's rank, COMM_SEND
 * node 3i (comm_dst, comm_size, comm_tag = i) and, when `at` is not 0, the
 * COMP node 3i + 2 of `at` microseconds that it depends on; on dst's rank,
 * COMM_RECV node 3i + 1 (comm_src, comm_size, comm_tag = i) with no
 * dependency.  `after` becomes dependencies of the send: on the SEND node
 * of a message src sends, on the RECV node of one it receives, as the CSV
 * workload waits for MSG_COMPLETE and RECV_COMPLETE. */
#include "chakra_export.h"

#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "chakra.h"
#include "core/records.h"
#include "core/workload.h"

static const char usage[] =
    "Usage: mrcemu export chakra [TOPOLOGY.ini] -o DIR/NAME\n"
    "       mrcemu export csv [TOPOLOGY.ini] -o FILE.csv\n"
    "\n"
    "Write the topology's workload in the other format (docs/chakra.md, Export).\n"
    "chakra: its CSV workload ([workload] file) as Chakra execution traces\n"
    "DIR/NAME.<rank>.et, one per rank (rank i is the i-th NIC of [workload] ranks,\n"
    "or of the topology); a message is a COMM_SEND on its source's rank and a\n"
    "COMM_RECV on its destination's, its post time a COMP node before the send.\n"
    "Chakra counts whole microseconds: other times are rounded, with a warning.\n"
    "csv: its Chakra workload ([workload] chakra) of that shape as a CSV workload.\n"
    "\n"
    "Options:\n"
    "  -o, --out PATH   DIR/NAME of the traces, or the CSV file (required)\n"
    "  -h, --help       this text\n"
    "\n"
    "Exit status: 0 written; 2 bad arguments, topology or workload.\n";

/* ---- CSV -> Chakra ------------------------------------------------------------ */

static uint64_t at_micros(const struct workload_msg *m, const char *path)
{
	uint64_t us = (m->at + PS_PER_US / 2) / PS_PER_US;

	if (m->at % PS_PER_US) {
		char t[32];
		fprintf(stderr,
			"mrcemu export: %s:%d: at: %s rounded to %" PRIu64
			"us (Chakra counts whole microseconds)\n",
			path, m->line, time_format(m->at, t, sizeof(t)), us);
	}
	return us;
}

/* Message i's SEND on its source's rank: its dependencies and nodes. */
static bool write_send(FILE *f, const struct workload *w, const struct workload_msg *m,
		       int src_rank, int dst_rank, const char *path)
{
	uint64_t deps[WORKLOAD_MAX_AFTER + 1], us = at_micros(m, path);
	size_t n = 0;
	char name[48];

	if (us) {
		struct chakra_spec c = {
		    .id = 3 * m->id + 2, .type = CHAKRA_COMP, .duration_us = us};
		snprintf(name, sizeof(name), "at%" PRIu64, m->id);
		c.name = name;
		if (!chakra_write_node(f, &c))
			return false;
		deps[n++] = c.id;
	}
	for (int k = 0; k < m->nafter; k++) {
		const struct workload_msg *a = &w->msgs[workload_find(w, m->after[k])];
		deps[n++] = 3 * a->id + (a->src == m->src ? 0 : 1);
	}
	snprintf(name, sizeof(name), "msg%" PRIu64, m->id);
	struct chakra_spec s = {.id = 3 * m->id,
				.name = name,
				.type = CHAKRA_SEND,
				.deps = deps,
				.ndeps = n,
				.bytes = m->bytes,
				.peer = dst_rank,
				.tag = m->id};
	(void)src_rank;
	return chakra_write_node(f, &s);
}

static bool write_recv(FILE *f, const struct workload_msg *m, int src_rank)
{
	char name[48];
	struct chakra_spec s = {.id = 3 * m->id + 1,
				.name = name,
				.type = CHAKRA_RECV,
				.bytes = m->bytes,
				.peer = src_rank,
				.tag = m->id};

	snprintf(name, sizeof(name), "msg%" PRIu64, m->id);
	return chakra_write_node(f, &s);
}

static int rank_or_fail(const struct topology *t, int node, const struct workload_msg *m)
{
	int r = chakra_rank_of(t, node);

	if (r < 0)
		fprintf(stderr, "mrcemu export: %s:%d: %s has no rank ([workload] ranks)\n",
			t->workload, m->line, t->nodes[node].name);
	return r;
}

static int export_chakra(const struct topology *t, const char *out)
{
	struct workload w;
	char err[TOPO_ERR_MAX], path[4200];
	FILE **f = calloc((size_t)t->nranks, sizeof(*f));
	int rc = 0;

	if (!t->workload[0]) {
		fprintf(stderr, "mrcemu export: %s has no CSV workload ([workload] file)\n",
			t->path);
		free(f);
		return 2;
	}
	if (!f || !workload_load(t->workload, t, &w, err, sizeof(err))) {
		fprintf(stderr, "%s\n", f ? err : "mrcemu export: out of memory");
		free(f);
		return 2;
	}
	/* DIR of DIR/NAME, made when missing. */
	snprintf(path, sizeof(path), "%s", out);
	if (strrchr(path, '/') && strrchr(path, '/') != path) {
		*strrchr(path, '/') = '\0';
		if (!records_mkdir(path)) {
			fprintf(stderr, "mrcemu export: %s: %s\n", path, strerror(errno));
			rc = 2;
		}
	}
	for (int r = 0; r < t->nranks && !rc; r++) {
		snprintf(path, sizeof(path), "%s.%d.et", out, r);
		if (!(f[r] = chakra_write_open(path))) {
			fprintf(stderr, "mrcemu export: %s: %s\n", path, strerror(errno));
			rc = 2;
		}
	}
	for (size_t i = 0; i < w.count && !rc; i++) {
		const struct workload_msg *m = &w.msgs[i];
		int s = rank_or_fail(t, m->src, m), d = s < 0 ? -1 : rank_or_fail(t, m->dst, m);
		if (d < 0 || !write_send(f[s], &w, m, s, d, t->workload) || !write_recv(f[d], m, s))
			rc = 2;
	}
	for (int r = 0; f && r < t->nranks; r++)
		if (f[r] && fclose(f[r]) != 0 && !rc) {
			fprintf(stderr, "mrcemu export: %s.%d.et: write failed\n", out, r);
			rc = 2;
		}
	free(f);
	workload_free(&w);
	return rc;
}

/* ---- Chakra -> CSV ------------------------------------------------------------ */

struct csv_row {
	uint64_t id; /* comm_tag */
	const struct chakra_rank *r;
	const struct chakra_node *n;
};

static int cmp_row(const void *a, const void *b)
{
	uint64_t x = ((const struct csv_row *)a)->id, y = ((const struct csv_row *)b)->id;
	return x < y ? -1 : x > y;
}

static bool not_shape(const struct chakra_rank *r, const struct chakra_node *n, const char *why)
{
	fprintf(stderr,
		"mrcemu export: %s: node %" PRIu64 " (%s): %s (allowed: the shape export chakra "
		"writes, docs/chakra.md)\n",
		r->path, n->id, n->name, why);
	return false;
}

/* One CSV row: its SEND node, its COMP delay, its `after`. */
static bool write_row(FILE *out, const struct topology *t, const struct csv_row *row)
{
	const struct chakra_node *n = row->n;
	uint64_t at = 0;
	int nafter = 0;
	char after[512] = "";
	size_t used = 0;

	for (uint32_t k = 0; k < n->ndeps; k++) {
		const struct chakra_node *d = &row->r->nodes[n->deps[k]];
		if (d->type == CHAKRA_COMP && !d->ndeps && !at)
			at = d->duration / PS_PER_US;
		else if ((d->type == CHAKRA_SEND || d->type == CHAKRA_RECV) &&
			 nafter < WORKLOAD_MAX_AFTER && used < sizeof(after) - 24) {
			used += (size_t)snprintf(after + used, sizeof(after) - used, "%s%" PRIu64,
						 nafter++ ? ";" : "", d->tag);
		} else
			return not_shape(row->r, n, "a dependency CSV cannot say");
	}
	if (!row->id)
		return not_shape(row->r, n, "comm_tag 0 is no CSV message id");
	fprintf(out, "%" PRIu64 ",", row->id);
	if (at)
		fprintf(out, "%" PRIu64 "us,", at);
	else
		fprintf(out, "0,");
	fprintf(out, "%s,%s,%" PRIu64 ",%s\n", t->nodes[t->ranks[row->r->rank]].name,
		t->nodes[t->ranks[n->peer]].name, n->bytes, after);
	return true;
}

static bool rows_of(const struct chakra_trace *tr, struct csv_row **rows, size_t *n)
{
	size_t cap = 0;

	*rows = NULL;
	*n = 0;
	for (int k = 0; k < tr->nranks; k++) {
		const struct chakra_rank *r = &tr->ranks[k];
		for (uint32_t i = 0; i < r->nnodes; i++) {
			const struct chakra_node *c = &r->nodes[i];
			if (c->type == CHAKRA_RECV && c->ndeps)
				return not_shape(r, c, "a receive with dependencies");
			if (c->type == CHAKRA_COLL || c->type == CHAKRA_MEM_LOAD ||
			    c->type == CHAKRA_MEM_STORE || c->type == CHAKRA_METADATA)
				return not_shape(r, c, "not a send, receive or post time");
			if (c->type != CHAKRA_SEND)
				continue;
			if (*n == cap) {
				cap = cap ? 2 * cap : 64;
				struct csv_row *v = realloc(*rows, cap * sizeof(*v));
				if (!v)
					return false;
				*rows = v;
			}
			(*rows)[(*n)++] = (struct csv_row){.id = c->tag, .r = r, .n = c};
		}
	}
	if (*n) /* qsort's array may not be NULL, even empty */
		qsort(*rows, *n, sizeof(**rows), cmp_row);
	return true;
}

static int export_csv(const struct topology *t, const char *out)
{
	struct chakra_trace tr;
	struct csv_row *rows = NULL;
	char err[TOPO_ERR_MAX];
	size_t n = 0;
	FILE *f = NULL;
	bool ok;

	if (!t->chakra[0]) {
		fprintf(stderr, "mrcemu export: %s has no Chakra workload ([workload] chakra)\n",
			t->path);
		return 2;
	}
	if (!chakra_load(t, &tr, err, sizeof(err))) {
		fprintf(stderr, "%s\n", err);
		return 2;
	}
	ok = rows_of(&tr, &rows, &n);
	for (size_t i = 1; ok && i < n; i++)
		if (rows[i].id == rows[i - 1].id)
			ok = not_shape(rows[i].r, rows[i].n,
				       "its comm_tag names another message too");
	if (ok && !(f = fopen(out, "we"))) {
		fprintf(stderr, "mrcemu export: %s: %s\n", out, strerror(errno));
		ok = false;
	}
	if (ok)
		fprintf(f, "id,at,src,dst,bytes,after\n");
	for (size_t i = 0; ok && i < n; i++)
		ok = write_row(f, t, &rows[i]);
	if (f && fclose(f) != 0 && ok) {
		fprintf(stderr, "mrcemu export: %s: write failed\n", out);
		ok = false;
	}
	free(rows);
	chakra_free(&tr);
	return ok ? 0 : 2;
}

/* ---- the command ----------------------------------------------------------------- */

int chakra_export_main(int argc, char **argv, const char *default_topology)
{
	static const struct option opts[] = {{"out", required_argument, NULL, 'o'},
					     {"help", no_argument, NULL, 'h'},
					     {NULL, 0, NULL, 0}};
	const char *out = NULL, *format, *topo = default_topology;
	char err[TOPO_ERR_MAX];
	struct topology *t;
	int c, rc;

	while ((c = getopt_long(argc, argv, "o:h", opts, NULL)) != -1) {
		if (c == 'o') {
			out = optarg;
		} else if (c == 'h') {
			fputs(usage, stdout);
			return 0;
		} else {
			fprintf(stderr,
				"mrcemu export: %s: unknown option or missing value (see "
				"mrcemu export --help)\n",
				argv[optind - 1]);
			return 2;
		}
	}
	if (optind >= argc || optind + 2 < argc || !out) {
		fprintf(stderr, "mrcemu export: needs a format (chakra or csv), at most one "
				"topology and -o PATH (see mrcemu export --help)\n");
		return 2;
	}
	format = argv[optind];
	if (optind + 1 < argc)
		topo = argv[optind + 1];
	if (strcmp(format, "chakra") && strcmp(format, "csv")) {
		fprintf(stderr, "mrcemu export: '%s' is not a format (allowed: chakra, csv)\n",
			format);
		return 2;
	}
	if (!(t = topology_load(topo, err, sizeof(err)))) {
		fprintf(stderr, "%s\n", err);
		return 2;
	}
	rc = !strcmp(format, "chakra") ? export_chakra(t, out) : export_csv(t, out);
	topology_free(t);
	return rc;
}
