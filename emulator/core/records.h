/* emulator/core/records.h — the CSV writer every record uses (docs/records.md,
 * Records): one header row, then rows of typed cells.  Rows are built cell
 * by cell and written whole, so a record never holds half a row. */
#ifndef EMULATOR_RECORDS_H
#define EMULATOR_RECORDS_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

struct csv {
	FILE *f;
	char path[4096];
	int ncols;
	int col;   /* cells written in the current row */
	char *row; /* the row being built */
	size_t len, cap;
	uint64_t rows;
};

/* Create OUTDIR/name with its header row (columns separated by ',').
 * Returns NULL with errno set on failure. */
struct csv *csv_open(const char *dir, const char *name, const char *header);
void csv_u64(struct csv *c, uint64_t v);
void csv_i64(struct csv *c, int64_t v);
void csv_double(struct csv *c, double v);   /* %.10g */
void csv_str(struct csv *c, const char *s); /* quoted when it needs it */
void csv_bool(struct csv *c, bool v);	    /* true / false */
void csv_ipv4(struct csv *c, uint32_t ip);
/* End the row; aborts if the row has the wrong number of cells (a bug). */
void csv_end(struct csv *c);
/* Flush and close; returns false if any write failed, after saying so on
 * stderr with the file's name. */
bool csv_close(struct csv *c);

/* Rewrite the time-ordered record at path (time_ps, node, ...) in the order
 * `mrcemu run`'s merge gives it: by time, then by rank(node) (the node's
 * index in the topology), rows of one time and node kept in their order.
 * sim writes rows as its events run, interleaving the nodes of one
 * picosecond; both hosts then agree byte for byte (docs/promises.md).
 * False with errno set on failure. */
bool records_sort_by_time_node(const char *path, int (*rank)(void *ctx, const char *node),
			       void *ctx);

/* mkdir -p; the folder itself must belong to the user running or to root
 * (as root, writing into another user's folder would follow what that user
 * planted there); says why on stderr when it does not. */
bool records_mkdir(const char *dir);

/* Create (or truncate) a file to write, never through a symbolic link
 * (O_NOFOLLOW): mrcemu runs as root.  NULL with errno set on failure. */
FILE *records_create(const char *path);

#endif
