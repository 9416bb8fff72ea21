/* emulator/core/records.c — the CSV writer of every record (docs/records.md,
 * Records).  A row is built in memory and written with one fwrite, so a
 * reader never sees half a row, and a row with the wrong number of cells is
 * a bug that stops the program rather than a silently shifted column. */
#include "records.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <unistd.h>

static void row_reserve(struct csv *c, size_t more)
{
	if (c->len + more + 1 <= c->cap) {
		return;
	}
	size_t cap = c->cap ? c->cap : 256;
	while (cap < c->len + more + 1) {
		cap *= 2;
	}
	char *p = realloc(c->row, cap);
	if (!p) {
		fprintf(stderr, "mrcemu: %s: out of memory building a row\n", c->path);
		abort();
	}
	c->row = p;
	c->cap = cap;
}

static void row_append(struct csv *c, const char *s, size_t n)
{
	row_reserve(c, n);
	memcpy(c->row + c->len, s, n);
	c->len += n;
	c->row[c->len] = '\0';
}

/* Every cell but the first of a row starts with the separator. */
static void cell_start(struct csv *c)
{
	if (c->col++ > 0) {
		row_append(c, ",", 1);
	}
}

struct csv *csv_open(const char *dir, const char *name, const char *header)
{
	struct csv *c = calloc(1, sizeof *c);
	int n;

	if (!c) {
		return NULL;
	}
	n = snprintf(c->path, sizeof c->path, "%s/%s", dir, name);
	if (n < 0 || (size_t)n >= sizeof c->path) {
		free(c);
		errno = ENAMETOOLONG;
		return NULL;
	}
	c->f = records_create(c->path);
	if (!c->f) {
		int e = errno;
		free(c);
		errno = e;
		return NULL;
	}
	c->ncols = 1;
	for (const char *p = header; *p; p++) {
		c->ncols += *p == ',';
	}
	fprintf(c->f, "%s\n", header);
	return c;
}

/* Digits by hand: the records' most common cell, and snprintf costs
 * several hundred instructions a call (samples.csv, mrc-monitor.csv). */
void csv_u64(struct csv *c, uint64_t v)
{
	char buf[24], *p = buf + sizeof buf;

	do {
		*--p = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	cell_start(c);
	row_append(c, p, (size_t)(buf + sizeof buf - p));
}

void csv_i64(struct csv *c, int64_t v)
{
	char buf[24];
	int n = snprintf(buf, sizeof buf, "%" PRId64, v);

	cell_start(c);
	row_append(c, buf, (size_t)n);
}

void csv_double(struct csv *c, double v)
{
	char buf[40];
	int n = snprintf(buf, sizeof buf, "%.10g", v);

	cell_start(c);
	row_append(c, buf, (size_t)n);
}

/* RFC 4180: a cell holding a comma, a quote, a line break, or leading or
 * trailing blanks is quoted, with its quotes doubled. */
void csv_str(struct csv *c, const char *s)
{
	size_t n = strlen(s);
	bool quote = n && (s[0] == ' ' || s[n - 1] == ' ');

	quote = quote || strpbrk(s, ",\"\r\n") != NULL;
	cell_start(c);
	if (!quote) {
		row_append(c, s, n);
		return;
	}
	row_append(c, "\"", 1);
	for (const char *p = s; *p; p++) {
		row_append(c, p, 1);
		if (*p == '"') {
			row_append(c, "\"", 1);
		}
	}
	row_append(c, "\"", 1);
}

void csv_bool(struct csv *c, bool v)
{
	cell_start(c);
	row_append(c, v ? "true" : "false", v ? 4 : 5);
}

void csv_ipv4(struct csv *c, uint32_t ip)
{
	char buf[16];
	int n = snprintf(buf, sizeof buf, "%u.%u.%u.%u", ip >> 24, (ip >> 16) & 0xff,
			 (ip >> 8) & 0xff, ip & 0xff);

	cell_start(c);
	row_append(c, buf, (size_t)n);
}

void csv_end(struct csv *c)
{
	if (c->col != c->ncols) {
		fprintf(stderr, "mrcemu: %s: a row of %d cells under a header of %d (a bug)\n",
			c->path, c->col, c->ncols);
		abort();
	}
	row_append(c, "\n", 1);
	fwrite(c->row, 1, c->len, c->f);
	c->len = 0;
	c->col = 0;
	c->rows++;
}

bool csv_close(struct csv *c)
{
	bool ok;

	if (!c) {
		return true;
	}
	ok = fflush(c->f) == 0 && !ferror(c->f);
	ok = fclose(c->f) == 0 && ok;
	if (!ok) /* errno is that of the failed write or close */
		fprintf(stderr, "mrcemu: %s: writing failed: %s\n", c->path,
			strerror(errno ? errno : EIO));
	free(c->row);
	free(c);
	return ok;
}

bool records_mkdir(const char *dir)
{
	char path[4096];
	size_t n = strlen(dir);
	struct stat st;

	if (!n || n >= sizeof path) {
		errno = n ? ENAMETOOLONG : ENOENT;
		return false;
	}
	memcpy(path, dir, n + 1);
	/* Create each prefix in turn; one that exists already is fine. */
	for (char *p = path + 1;; p++) {
		if (*p != '/' && *p != '\0') {
			continue;
		}
		char saved = *p;
		*p = '\0';
		if (mkdir(path, 0777) != 0 && errno != EEXIST) {
			return false;
		}
		*p = saved;
		if (!saved) {
			break;
		}
	}
	if (stat(path, &st) != 0) {
		return false;
	}
	if (!S_ISDIR(st.st_mode)) {
		errno = ENOTDIR;
		return false;
	}
	if (st.st_uid != geteuid() && st.st_uid != 0) {
		fprintf(stderr,
			"mrcemu: %s: owned by uid %u, not by uid %u who runs (refused: its owner "
			"could plant links there)\n",
			path, (unsigned)st.st_uid, (unsigned)geteuid());
		errno = EPERM;
		return false;
	}
	return true;
}

FILE *records_create(const char *path)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0644);
	FILE *f;

	if (fd < 0)
		return NULL;
	if (!(f = fdopen(fd, "w"))) {
		int e = errno;
		close(fd);
		errno = e;
	}
	return f;
}

/* ---- canonical order ------------------------------------------------------ */

struct sort_row {
	uint64_t time;
	int rank;
	size_t index; /* keeps the sort stable */
	char *text;
};

static int row_cmp(const void *a, const void *b)
{
	const struct sort_row *x = a, *y = b;

	if (x->time != y->time)
		return x->time < y->time ? -1 : 1;
	if (x->rank != y->rank)
		return x->rank < y->rank ? -1 : 1;
	return x->index < y->index ? -1 : x->index > y->index;
}

static bool rows_write(const char *path, const char *header, struct sort_row *r, size_t n)
{
	char tmp[4200];
	FILE *f;
	bool ok;

	snprintf(tmp, sizeof(tmp), "%s.sort", path);
	if (!(f = fopen(tmp, "we")))
		return false;
	fputs(header, f);
	for (size_t i = 0; i < n; i++)
		fputs(r[i].text, f);
	ok = fclose(f) == 0;
	return ok && rename(tmp, path) == 0;
}

bool records_sort_by_time_node(const char *path, int (*rank)(void *ctx, const char *node),
			       void *ctx)
{
	FILE *f = fopen(path, "re");
	char *line = NULL, *header = NULL, node[256];
	size_t cap = 0, n = 0, alloc = 0;
	struct sort_row *r = NULL;
	bool ok = f != NULL;

	while (ok && getline(&line, &cap, f) > 0) {
		const char *c = strchr(line, ',');
		size_t k = c ? strcspn(c + 1, ",\n") : 0;
		if (!header) {
			ok = (header = strdup(line)) != NULL;
			continue;
		}
		if (n == alloc) {
			struct sort_row *g =
			    realloc(r, (alloc = alloc ? 2 * alloc : 1024) * sizeof(*r));
			if (!(ok = g != NULL))
				break;
			r = g;
		}
		snprintf(node, sizeof(node), "%.*s", (int)(k < sizeof(node) ? k : 0),
			 c ? c + 1 : "");
		r[n] = (struct sort_row){.time = strtoull(line, NULL, 10),
					 .rank = rank(ctx, node),
					 .index = n,
					 .text = strdup(line)};
		ok = r[n++].text != NULL;
	}
	if (f)
		fclose(f);
	if (ok && header) {
		if (n) /* qsort's array may not be NULL, even empty (C11 7.22.5) */
			qsort(r, n, sizeof(*r), row_cmp);
		ok = rows_write(path, header, r, n);
	}
	for (size_t i = 0; i < n; i++)
		free(r[i].text);
	free(r);
	free(header);
	free(line);
	return ok;
}
