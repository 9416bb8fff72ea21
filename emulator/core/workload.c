/* emulator/core/workload.c — the workload file (docs/topology.md, Workload file):
 * "id,at,src,dst,bytes,after" rows, checked against the topology so that a
 * daemon never meets a message it cannot post: ids unique, src and dst are
 * NICs, and `after` names only messages the posting node sends or receives,
 * with no cycle. */
#include "workload.h"
#include "config.h"
#include "wire.h"

#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define WORKLOAD_COLUMNS 6

/* A workload of 2^20 messages (the message-index limit) at about 40 bytes a
 * row is 40 MiB; 256 MiB leaves room for comments and long `after` lists
 * and still refuses /dev/zero before it fills memory. */
#define WORKLOAD_MAX_FILE (256ULL << 20)

static const char *const columns[WORKLOAD_COLUMNS] = {"id", "at", "src", "dst", "bytes", "after"};

struct wl_loader {
	const char *path;
	const struct topology *t;
	struct workload *w;
	size_t cap;
	char *err;
	size_t errlen;
	bool failed;
	struct id_index *index; /* sorted by id, for lookups while checking */
};

struct id_index {
	uint64_t id;
	size_t i;
};

static void wl_fail(struct wl_loader *ld, int line, const char *column, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

/* "FILE:LINE: column: reason"; the first error wins. */
static void wl_fail(struct wl_loader *ld, int line, const char *column, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (ld->failed) {
		return;
	}
	ld->failed = true;
	n = snprintf(ld->err, ld->errlen, "%s:%d: %s: ", ld->path, line, column);
	if (n >= 0 && (size_t)n < ld->errlen) {
		va_start(ap, fmt);
		vsnprintf(ld->err + n, ld->errlen - (size_t)n, fmt, ap);
		va_end(ap);
	}
	config_escape(ld->err, ld->errlen);
}

static char *trim(char *s)
{
	char *e;

	while (isspace((unsigned char)*s)) {
		s++;
	}
	e = s + strlen(s);
	while (e > s && isspace((unsigned char)e[-1])) {
		*--e = '\0';
	}
	return s;
}

/* Split a line at commas into at most WORKLOAD_COLUMNS trimmed cells. */
static int split(char *line, char **cells)
{
	int n = 0;
	char *p = line;

	for (;;) {
		char *comma = strchr(p, ',');
		if (n == WORKLOAD_COLUMNS) {
			return n + 1; /* too many */
		}
		if (comma) {
			*comma = '\0';
		}
		cells[n++] = trim(p);
		if (!comma) {
			return n;
		}
		p = comma + 1;
	}
}

static bool parse_id(const char *s, uint64_t *id)
{
	char *end;

	if (!isdigit((unsigned char)*s)) {
		return false;
	}
	errno = 0;
	*id = strtoull(s, &end, 10);
	return !*end && !errno && *id > 0;
}

static bool check_header(struct wl_loader *ld, int lineno, char *line)
{
	char *cells[WORKLOAD_COLUMNS + 1];
	int n = split(line, cells);

	for (int i = 0; i < WORKLOAD_COLUMNS; i++) {
		if (i >= n || strcmp(cells[i], columns[i])) {
			wl_fail(ld, lineno, "header",
				"expected 'id,at,src,dst,bytes,after' (column %d is '%s')", i + 1,
				i < n ? cells[i] : "");
			return false;
		}
	}
	if (n > WORKLOAD_COLUMNS) {
		wl_fail(ld, lineno, "header",
			"more than 6 columns (allowed: id,at,src,dst,bytes,after)");
		return false;
	}
	return true;
}

static int nic_column(struct wl_loader *ld, int line, const char *column, const char *name)
{
	int node = topology_find(ld->t, name);

	if (node < 0) {
		wl_fail(ld, line, column, "'%s' is not a node of %s (allowed: a NIC)", name,
			ld->t->path);
	} else if (ld->t->nodes[node].kind != NODE_NIC) {
		wl_fail(ld, line, column, "'%s' is a %s (allowed: a NIC: only NICs post messages)",
			name,
			ld->t->nodes[node].kind == NODE_SWITCH ? "switch" : "external endpoint");
		node = -1;
	}
	return node;
}

static void parse_after(struct wl_loader *ld, struct workload_msg *m, char *s)
{
	char *save = NULL;

	for (char *tok = strtok_r(s, ";", &save); tok && !ld->failed;
	     tok = strtok_r(NULL, ";", &save)) {
		uint64_t id;
		tok = trim(tok);
		if (!*tok) {
			continue;
		}
		if (!parse_id(tok, &id)) {
			wl_fail(ld, m->line, "after",
				"'%s' is not a message id (allowed: ids "
				"separated by ';')",
				tok);
		} else if (id == m->id) {
			wl_fail(ld, m->line, "after", "message %" PRIu64 " waits for itself", id);
		} else if (m->nafter == WORKLOAD_MAX_AFTER) {
			wl_fail(ld, m->line, "after", "more than %d ids (allowed: at most %d)",
				WORKLOAD_MAX_AFTER, WORKLOAD_MAX_AFTER);
		} else {
			for (int i = 0; i < m->nafter; i++) {
				if (m->after[i] == id) {
					wl_fail(ld, m->line, "after", "%" PRIu64 " is listed twice",
						id);
				}
			}
			m->after[m->nafter++] = id;
		}
	}
}

static bool bare_number(const char *s)
{
	char *end;

	strtod(s, &end);
	return end != s && !*end;
}

static void parse_row(struct wl_loader *ld, int line, char **cells, int n)
{
	struct workload_msg m = {.line = line};
	char why[256];

	/* The trailing `after` cell may be left out entirely. */
	if (n < WORKLOAD_COLUMNS - 1 || n > WORKLOAD_COLUMNS) {
		wl_fail(ld, line, "row", "%d cells (allowed: 6: id,at,src,dst,bytes,after)", n);
		return;
	}
	if (!parse_id(cells[0], &m.id)) {
		wl_fail(ld, line, "id", "'%s' is not a positive whole number", cells[0]);
		return;
	}
	/* The id is the message index of RETH's VA (docs/protocol.md §1). */
	if (m.id > WIRE_MAX_MSG_INDEX) {
		wl_fail(ld, line, "id",
			"%s is out of range (allowed: 1..%llu: the message index in RETH's VA "
			"has 20 bits)",
			cells[0], WIRE_MAX_MSG_INDEX);
		return;
	}
	if (!strcmp(cells[1], "0")) {
		m.at = 0;
	} else if (bare_number(cells[1])) {
		wl_fail(ld, line, "at", "'%s' needs a unit (ps ns us ms s)", cells[1]);
		return;
	} else if (!time_parse(cells[1], &m.at, why, sizeof why)) {
		wl_fail(ld, line, "at", "%s", why);
		return;
	}
	/* A message posted later could never run (core/time.h: MRCEMU_MAX_RUN). */
	if (m.at > MRCEMU_MAX_RUN) {
		wl_fail(ld, line, "at",
			"%s is past the longest run (allowed: up to 281s: a frame's arrival "
			"travels in a 48-bit stamp of ps)",
			cells[1]);
		return;
	}
	m.src = nic_column(ld, line, "src", cells[2]);
	m.dst = ld->failed ? -1 : nic_column(ld, line, "dst", cells[3]);
	if (ld->failed) {
		return;
	}
	if (m.src == m.dst) {
		wl_fail(ld, line, "dst", "%s sends to itself (allowed: another NIC)", cells[3]);
		return;
	}
	if (!bytes_parse(cells[4], &m.bytes, why, sizeof why)) {
		wl_fail(ld, line, "bytes", "%s", why);
		return;
	}
	if (m.bytes > WIRE_MAX_MSG_BYTES) {
		wl_fail(ld, line, "bytes",
			"%s is out of range (allowed: 0..4294967295, 4 GiB - 1: RETH's DMA "
			"length is 32 bits)",
			cells[4]);
		return;
	}
	if (n == WORKLOAD_COLUMNS) {
		parse_after(ld, &m, cells[5]);
	}
	if (ld->w->count == ld->cap) {
		ld->cap = ld->cap ? 2 * ld->cap : 64;
		struct workload_msg *p = realloc(ld->w->msgs, ld->cap * sizeof *p);
		if (!p) {
			wl_fail(ld, line, "row", "out of memory");
			return;
		}
		ld->w->msgs = p;
	}
	ld->w->msgs[ld->w->count++] = m;
}

static int cmp_index(const void *a, const void *b)
{
	const struct id_index *x = a, *y = b;
	return x->id < y->id ? -1 : x->id > y->id;
}

static long lookup(const struct wl_loader *ld, uint64_t id)
{
	struct id_index key = {id, 0};
	const struct id_index *hit =
	    bsearch(&key, ld->index, ld->w->count, sizeof *ld->index, cmp_index);
	return hit ? (long)hit->i : -1;
}

/* Ids unique; every `after` a known message the posting node takes part in. */
static void check_ids(struct wl_loader *ld)
{
	struct workload *w = ld->w;

	ld->index = malloc((w->count ? w->count : 1) * sizeof *ld->index);
	if (!ld->index) {
		wl_fail(ld, 0, "file", "out of memory");
		return;
	}
	for (size_t i = 0; i < w->count; i++) {
		ld->index[i] = (struct id_index){w->msgs[i].id, i};
	}
	if (w->count) /* qsort's array may not be NULL, even empty */
		qsort(ld->index, w->count, sizeof *ld->index, cmp_index);
	for (size_t i = 1; i < w->count; i++) {
		if (ld->index[i].id == ld->index[i - 1].id) {
			size_t a = ld->index[i - 1].i, b = ld->index[i].i;
			const struct workload_msg *later = &w->msgs[a > b ? a : b];
			wl_fail(ld, later->line, "id", "%" PRIu64 " is used twice (line %d)",
				later->id, w->msgs[a < b ? a : b].line);
		}
	}
	for (size_t i = 0; i < w->count && !ld->failed; i++) {
		const struct workload_msg *m = &w->msgs[i];
		for (int k = 0; k < m->nafter && !ld->failed; k++) {
			long j = lookup(ld, m->after[k]);
			if (j < 0) {
				wl_fail(ld, m->line, "after", "%" PRIu64 " is not a message id",
					m->after[k]);
			} else if (w->msgs[j].src != m->src && w->msgs[j].dst != m->src) {
				wl_fail(ld, m->line, "after",
					"message %" PRIu64
					" is between %s and %s; %s knows nothing "
					"of it (allowed: messages %s sends or receives)",
					m->after[k], ld->t->nodes[w->msgs[j].src].name,
					ld->t->nodes[w->msgs[j].dst].name,
					ld->t->nodes[m->src].name, ld->t->nodes[m->src].name);
			}
		}
	}
}

/* Depth-first search for a cycle through `after`; state 0 unseen, 1 on the
 * stack, 2 done.  Iterative, so a long chain cannot overflow the stack. */
static void check_cycles(struct wl_loader *ld)
{
	struct workload *w = ld->w;
	uint8_t *state = calloc(w->count ? w->count : 1, 1);
	size_t *stack = malloc((w->count ? w->count : 1) * sizeof *stack);
	int *next = calloc(w->count ? w->count : 1, sizeof *next);

	if (!state || !stack || !next) {
		wl_fail(ld, 0, "file", "out of memory");
	}
	for (size_t root = 0; root < w->count && !ld->failed; root++) {
		size_t depth = 0;
		if (state[root]) {
			continue;
		}
		stack[depth++] = root;
		state[root] = 1;
		while (depth && !ld->failed) {
			size_t i = stack[depth - 1];
			if (next[i] == w->msgs[i].nafter) {
				state[i] = 2;
				depth--;
				continue;
			}
			size_t j = (size_t)lookup(ld, w->msgs[i].after[next[i]++]);
			if (state[j] == 1) {
				wl_fail(ld, w->msgs[j].line, "after",
					"message %" PRIu64 " waits for itself through a cycle "
					"(closed by message %" PRIu64 ")",
					w->msgs[j].id, w->msgs[i].id);
			} else if (!state[j]) {
				state[j] = 1;
				stack[depth++] = j;
			}
		}
	}
	free(state);
	free(stack);
	free(next);
}

static void read_rows(struct wl_loader *ld, FILE *f)
{
	char *buf = NULL, *cells[WORKLOAD_COLUMNS + 1];
	size_t cap = 0;
	int line = 0;
	bool header = false;

	ssize_t n;

	/* Blank lines and lines starting with '#' are comments, before the
	 * header too (docs/topology.md, Workload file). */
	while (!ld->failed && (n = getline(&buf, &cap, f)) >= 0) {
		bool nul = memchr(buf, '\0', (size_t)n) != NULL;
		char *s = trim(buf);
		line++;
		if (nul) {
			wl_fail(ld, line, "line", "holds a NUL byte (allowed: text)");
		} else if (!*s || *s == '#') {
			continue;
		} else if (!header) {
			header = check_header(ld, line, s);
		} else {
			parse_row(ld, line, cells, split(s, cells));
		}
	}
	if (!ld->failed && !header) {
		wl_fail(ld, line ? line : 1, "header",
			"no header row (allowed: id,at,src,dst,bytes,after, after '#' comments)");
	}
	free(buf);
}

bool workload_load(const char *path, const struct topology *t, struct workload *w, char *err,
		   size_t errlen)
{
	struct wl_loader ld = {.path = path, .t = t, .w = w, .err = err, .errlen = errlen};
	FILE *f;

	w->msgs = NULL;
	w->count = 0;
	if (!(f = config_open_input(path, WORKLOAD_MAX_FILE, err, errlen)))
		return false;
	read_rows(&ld, f);
	fclose(f);
	if (!ld.failed) {
		check_ids(&ld);
	}
	if (!ld.failed) {
		check_cycles(&ld);
	}
	free(ld.index);
	if (ld.failed) {
		workload_free(w);
	}
	return !ld.failed;
}

void workload_free(struct workload *w)
{
	free(w->msgs);
	w->msgs = NULL;
	w->count = 0;
}

long workload_find(const struct workload *w, uint64_t id)
{
	/* Ids are usually 1..n in order; look there first. */
	if (id >= 1 && id <= w->count && w->msgs[id - 1].id == id) {
		return (long)(id - 1);
	}
	for (size_t i = 0; i < w->count; i++) {
		if (w->msgs[i].id == id) {
			return (long)i;
		}
	}
	return -1;
}
