/* tests/lib/scenario.c — see scenario.h. */
#include "scenario.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void write_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	if (!f || fputs(text, f) < 0 || fclose(f)) {
		fprintf(stderr, "scenario: cannot write %s\n", path);
		abort();
	}
}

/* Does `given` set attribute `name` (a line "name =" or "name=")? */
static bool sets(const char *given, const char *name, size_t n)
{
	for (const char *l = given; l && *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL) {
		const char *e = l + strspn(l, " \t");
		if (!strncmp(e, name, n) && (e[n] == ' ' || e[n] == '=' || e[n] == '\t'))
			return true;
	}
	return false;
}

/* The default lines the caller's own do not set, then the caller's: the
 * loader refuses an attribute set twice in a section. */
static void section(char *out, size_t len, const char *defaults, const char *given)
{
	size_t used = 0;

	for (const char *l = defaults; *l;) {
		const char *nl = strchr(l, '\n');
		size_t n = strcspn(l, " =");
		if (!sets(given, l, n))
			used +=
			    (size_t)snprintf(out + used, len - used, "%.*s\n", (int)(nl - l), l);
		l = nl + 1;
	}
	snprintf(out + used, len - used, "%s\n", given ? given : "");
}

struct scenario *scenario_b2b(const char *nic_attrs, const char *link_attrs, const char *workload)
{
	return scenario_b2b_nodes(nic_attrs, NULL, NULL, link_attrs, workload);
}

struct scenario *scenario_b2b_nodes(const char *nic_attrs, const char *h0_attrs,
				    const char *h1_attrs, const char *link_attrs,
				    const char *workload)
{
	struct scenario *s = calloc(1, sizeof(*s));
	char path[400], text[8192];

	snprintf(s->dir, sizeof(s->dir), "/tmp/mrcemu-scenario-XXXXXX");
	if (!mkdtemp(s->dir))
		abort();
	snprintf(s->out, sizeof(s->out), "%s/out", s->dir);
	char nic[2048], link[2048];
	section(nic, sizeof(nic),
		"MonitorEnabled = true\nEnableEventLogging = true\nEnableCcTrace = true\n",
		nic_attrs);
	section(link, sizeof(link), "rate = 400Gbps\ndelay = 1us\n", link_attrs);
	snprintf(text, sizeof(text),
		 "[emulation]\nname = scenario\nseed = 1\n\n"
		 "[nic]\n%s\n[nic h0]\nip = 10.0.0.1\n%s\n[nic h1]\nip = 10.0.0.2\n%s\n\n"
		 "[link h0 h1]\n%s\n[workload]\nfile = w.csv\n",
		 nic, h0_attrs ? h0_attrs : "", h1_attrs ? h1_attrs : "", link);
	snprintf(path, sizeof(path), "%s/topo.ini", s->dir);
	write_file(path, text);
	snprintf(text, sizeof(text), "id,at,src,dst,bytes,after\n%s", workload);
	snprintf(path, sizeof(path), "%s/w.csv", s->dir);
	write_file(path, text);
	return s;
}

int scenario_run(struct scenario *s)
{
	char topo[400];
	struct sim_options o = {
	    .topology = topo, .outdir = s->out, .quiet = true, .until = s->until};
	FILE *devnull = fopen("/dev/null", "w");

	snprintf(topo, sizeof(topo), "%s/topo.ini", s->dir);
	s->rc = sim_run(&o, &s->r, getenv("SCENARIO_VERBOSE") ? stderr : devnull);
	fclose(devnull);
	return s->rc;
}

static void table_free(struct table *t)
{
	if (!t)
		return;
	for (size_t r = 0; r < t->nrows; r++) {
		for (int c = 0; c < t->ncols; c++)
			free(t->rows[r][c]);
		free(t->rows[r]);
	}
	for (int c = 0; c < t->ncols; c++)
		free(t->cols[c]);
	free(t->rows);
	free(t->cols);
	free(t);
}

void scenario_free(struct scenario *s)
{
	char cmd[512];

	for (int i = 0; i < 8; i++)
		table_free(s->tables[i]);
	if (!getenv("SCENARIO_KEEP")) {
		snprintf(cmd, sizeof(cmd), "rm -rf '%s'", s->dir);
		if (system(cmd) != 0)
			fprintf(stderr, "scenario: could not remove %s\n", s->dir);
	}
	free(s);
}

/* Room for element n of an array that grows by doubling (a row at a time
 * was quadratic: the monitor's tables have 10^5 rows, and under
 * AddressSanitizer every realloc copies).  Out of memory ends the test. */
static void *grow(void *a, size_t n, size_t size)
{
	bool full = (n & (n - 1)) == 0; /* 0, 1, 2, 4, ...: the capacity reached */

	if (full && !(a = realloc(a, (n ? 2 * n : 1) * size))) {
		fprintf(stderr, "scenario: out of memory\n");
		abort();
	}
	return a;
}

/* Split one CSV line into cells (quotes as records.c writes them). */
static char **split(const char *line, int *n)
{
	char **cells = NULL, buf[4096];
	size_t len = 0;
	bool quoted = false;

	*n = 0;
	for (const char *p = line;; p++) {
		if (quoted && *p == '"' && p[1] == '"') {
			buf[len++] = '"';
			p++;
		} else if (*p == '"') {
			quoted = !quoted;
		} else if ((*p == ',' && !quoted) || *p == '\n' || !*p) {
			buf[len] = 0;
			cells = grow(cells, *n, sizeof(*cells));
			cells[(*n)++] = strdup(buf);
			len = 0;
			if (*p != ',')
				return cells;
		} else if (len < sizeof(buf) - 1) {
			buf[len++] = *p;
		}
	}
}

static struct table *table_load(const char *path)
{
	FILE *f = fopen(path, "r");
	struct table *t;
	char *line = NULL;
	size_t cap = 0;
	int n;

	if (!f)
		return NULL;
	t = calloc(1, sizeof(*t));
	if (getline(&line, &cap, f) > 0)
		t->cols = split(line, &t->ncols);
	while (getline(&line, &cap, f) > 0) {
		t->rows = grow(t->rows, t->nrows, sizeof(*t->rows));
		t->rows[t->nrows++] = split(line, &n);
		if (n != t->ncols) {
			fprintf(stderr, "scenario: %s: row %zu has %d cells, not %d\n", path,
				t->nrows, n, t->ncols);
			abort();
		}
	}
	free(line);
	fclose(f);
	return t;
}

const struct table *scenario_table(struct scenario *s, const char *file)
{
	char path[512];
	int i;

	for (i = 0; i < 8 && s->tables[i]; i++)
		if (!strcmp(s->names[i], file))
			return s->tables[i];
	if (i == 8)
		abort();
	snprintf(path, sizeof(path), "%s/%s", s->out, file);
	s->tables[i] = table_load(path);
	if (!s->tables[i]) {
		fprintf(stderr, "scenario: no record %s\n", path);
		abort();
	}
	snprintf(s->names[i], sizeof(s->names[i]), "%s", file);
	return s->tables[i];
}

int table_col(const struct table *t, const char *name)
{
	for (int c = 0; c < t->ncols; c++)
		if (!strcmp(t->cols[c], name))
			return c;
	fprintf(stderr, "scenario: no column %s\n", name);
	abort();
}

const char *table_cell(const struct table *t, size_t row, const char *col)
{
	return t->rows[row][table_col(t, col)];
}

uint64_t table_u64(const struct table *t, size_t row, const char *col)
{
	return strtoull(table_cell(t, row, col), NULL, 10);
}

uint64_t scenario_counter(struct scenario *s, const char *node, const char *counter)
{
	const struct table *t = scenario_table(s, "mrc-transport-stats.csv");
	char col[128];

	snprintf(col, sizeof(col), "total_%s", counter);
	for (size_t r = t->nrows; r-- > 0;)
		if (!strcmp(table_cell(t, r, "node"), node))
			return table_u64(t, r, col);
	fprintf(stderr, "scenario: no stats row for %s\n", node);
	abort();
}

bool monitor_is(const struct table *t, size_t r, const char *node, const char *dir,
		const char *type)
{
	const char *pt = table_cell(t, r, "packet_type");

	if (strcmp(table_cell(t, r, "node"), node) || strcmp(table_cell(t, r, "direction"), dir))
		return false;
	if (!strcmp(type, "DATA"))
		return !strncmp(pt, "WRITE_", 6);
	return !strcmp(pt, type);
}

size_t monitor_count(const struct table *t, const char *node, const char *dir, const char *type)
{
	size_t n = 0;

	for (size_t r = 0; r < t->nrows; r++)
		n += monitor_is(t, r, node, dir, type);
	return n;
}

size_t monitor_find_tx(const struct table *t, const char *node, uint32_t psn, unsigned n)
{
	for (size_t r = 0; r < t->nrows; r++)
		if (monitor_is(t, r, node, "tx", "DATA") && table_u64(t, r, "bth_psn") == psn &&
		    table_u64(t, r, "tx_count") == n)
			return r;
	return SIZE_MAX;
}
