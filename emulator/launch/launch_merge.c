/* emulator/launch/launch_merge.c — the daemons' records merged into the files of
 * docs/records.md (Records).  Each nicd writes the messages.csv columns it
 * knows (driver.h: sending columns of what it posts, receiving columns of
 * what it receives); a message's row is the sender's row with the
 * receiver's recv_complete_ps and verified.  Time-ordered records are
 * merged by time_ps then node; each daemon's own file is already in time
 * order, so a k-way merge keeps a node's rows in the order it wrote them. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/records.h"
#include "host/driver.h"
#include "launch_impl.h"

#define MSG_COLS 13
enum {
	COL_ID,
	COL_SRC,
	COL_DST,
	COL_BYTES,
	COL_POSTED,
	COL_SEND_COMPLETE,
	COL_RECV_COMPLETE,
	COL_COMPLETE,
	COL_FCT,
	COL_RETX,
	COL_VERIFIED,
	COL_SOURCE,
	COL_FAILURE
};

/* Per-node files, "<base>-<node>.csv"; messages first, lateness last. */
static const char *const per_node[] = {
    "messages", "mrc-transport-stats", "mrc-events", "mrc-monitor",
    "mrc-cc",	"switch-stats",	       "chakra",     "samples",
    "lateness"};
#define NPER_NODE (sizeof(per_node) / sizeof(per_node[0]))
/* The records sorted by time_ps then node (docs/records.md, Records). */
static const char *const timed[] = {"mrc-transport-stats", "mrc-events", "mrc-monitor", "mrc-cc",
				    "switch-stats",	   "samples"};

static void node_file(const char *dir, const char *base, const char *node, char *buf, size_t len)
{
	snprintf(buf, len, "%s/%s-%s.csv", dir, base, node);
}

void launch_clean_records(const struct topology *t, const char *dir)
{
	char path[LAUNCH_PATH_MAX];

	for (int i = 0; i < t->nnodes; i++)
		for (size_t b = 0; b < NPER_NODE; b++) {
			node_file(dir, per_node[b], t->nodes[i].name, path, sizeof(path));
			unlink(path);
		}
}

/* ---- reading CSV -------------------------------------------------------- */

/* One record: a line, or more when a quoted cell holds a newline (records.c
 * quotes cells with ',', '"', CR or LF).  Without its line end; -1 at EOF. */
static ssize_t read_record(FILE *f, char **buf, size_t *cap)
{
	char *line = NULL;
	size_t lcap = 0, n = 0;
	ssize_t got;
	bool quoted = false;

	while ((got = getline(&line, &lcap, f)) > 0) {
		if (n + (size_t)got + 1 > *cap) {
			char *b = realloc(*buf, n + (size_t)got + 1);
			if (!b)
				break;
			*buf = b;
			*cap = n + (size_t)got + 1;
		}
		memcpy(*buf + n, line, (size_t)got + 1);
		n += (size_t)got;
		for (ssize_t i = 0; i < got; i++)
			quoted ^= line[i] == '"';
		if (!quoted)
			break;
	}
	free(line);
	if (!n)
		return -1;
	while (n && ((*buf)[n - 1] == '\n' || (*buf)[n - 1] == '\r'))
		(*buf)[--n] = '\0';
	return (ssize_t)n;
}

/* Split a record into at most max unquoted cells, in place.  Returns the
 * number of cells. */
static int split_cells(char *rec, char **cells, int max)
{
	int n = 0;
	char *r = rec, *w = rec;

	while (n < max) {
		cells[n++] = w;
		if (*r == '"') {
			for (r++; *r; r++) {
				if (*r == '"' && r[1] == '"')
					*w++ = *r++;
				else if (*r == '"')
					break;
				else
					*w++ = *r;
			}
			if (*r == '"')
				r++;
		}
		while (*r && *r != ',')
			*w++ = *r++;
		if (*r != ',') {
			*w = '\0';
			break;
		}
		r++;
		*w++ = '\0';
	}
	return n;
}

static int column(const char *header, const char *name)
{
	char *h = strdup(header), *cells[256];
	int n = h ? split_cells(h, cells, 256) : 0, at = -1;

	for (int i = 0; i < n && at < 0; i++)
		if (!strcmp(cells[i], name))
			at = i;
	free(h);
	return at;
}

/* ---- messages.csv ------------------------------------------------------- */

struct msg_row {
	char *snd[MSG_COLS], *rcv[MSG_COLS]; /* the sender's and receiver's rows */
	uint64_t id;
};

/* The sender's name, from whichever row there is. */
static const char *row_src(const struct msg_row *r)
{
	char *const *row = r->snd[0] ? r->snd : r->rcv;

	return row[0] && row[COL_SRC] ? row[COL_SRC] : "";
}

struct msg_table {
	struct msg_row *rows; /* the workload's, in its order, then extras */
	size_t n, cap;
	size_t nworkload;
};

/* The row of message id from node src: the workload's, or one of the
 * others, which a message index names only with its sender (a `ctl post`
 * or an external endpoint may use an index another sender uses too). */
static struct msg_row *msg_row(struct msg_table *m, const struct topology *t,
			       const struct workload *w, uint64_t id, const char *src)
{
	long i = workload_find(w, id);

	if (i >= 0 && !strcmp(t->nodes[w->msgs[i].src].name, src))
		return &m->rows[i];
	for (size_t k = m->nworkload; k < m->n; k++)
		if (m->rows[k].id == id && !strcmp(row_src(&m->rows[k]), src))
			return &m->rows[k];
	if (m->n == m->cap) {
		size_t cap = m->cap * 2 + 16;
		struct msg_row *r = realloc(m->rows, cap * sizeof(*r));
		if (!r)
			return NULL;
		m->rows = r;
		m->cap = cap;
	}
	memset(&m->rows[m->n], 0, sizeof(m->rows[0]));
	m->rows[m->n].id = id;
	return &m->rows[m->n++];
}

static bool keep_cells(char **dst, char **cells)
{
	for (int i = 0; i < MSG_COLS; i++) {
		free(dst[i]);
		dst[i] = strdup(cells[i]);
		if (!dst[i])
			return false;
	}
	return true;
}

/* A node's messages-<node>.csv into the table; a missing file is no error
 * (a daemon that died writes none), a wrong header is. */
static bool read_node_messages(struct msg_table *m, const struct topology *t,
			       const struct workload *w, const char *path, const char *node,
			       FILE *report)
{
	FILE *f = fopen(path, "re");
	char *rec = NULL, *cells[MSG_COLS + 1];
	size_t cap = 0;
	bool ok = true;

	if (!f)
		return true;
	if (read_record(f, &rec, &cap) < 0 || strcmp(rec, DRIVER_MESSAGES_HEADER)) {
		fprintf(report, "mrcemu: %s: not a messages record (header differs)\n", path);
		ok = false;
	}
	while (ok && read_record(f, &rec, &cap) >= 0) {
		char *end;
		if (split_cells(rec, cells, MSG_COLS + 1) != MSG_COLS) {
			fprintf(report, "mrcemu: %s: a row without %d cells\n", path, MSG_COLS);
			ok = false;
			break;
		}
		struct msg_row *r =
		    msg_row(m, t, w, strtoull(cells[COL_ID], &end, 10), cells[COL_SRC]);
		if (!r)
			ok = false;
		else if (!strcmp(cells[COL_SRC], node))
			ok = keep_cells(r->snd, cells);
		else if (!strcmp(cells[COL_DST], node))
			ok = keep_cells(r->rcv, cells);
	}
	free(rec);
	fclose(f);
	return ok;
}

/* The others by id, then sender. */
static int cmp_row_id(const void *a, const void *b)
{
	const struct msg_row *p = a, *q = b;

	if (p->id != q->id)
		return p->id < q->id ? -1 : 1;
	return strcmp(row_src(p), row_src(q));
}

static const char *cell(char *const *row, int col)
{
	return row[col] ? row[col] : "";
}

/* The reason a message failed: its sender's, else its receiver's (a QP
 * evicted there, which `run` relays to the sender: the two agree). */
static const char *row_failure(const struct msg_row *r)
{
	return *cell(r->snd, COL_FAILURE) ? cell(r->snd, COL_FAILURE) : cell(r->rcv, COL_FAILURE);
}

/* One merged row; returns whether the message completed, and its FCT (0:
 * none).  The
 * sender knows what posted a message; a receiver knows only an external
 * sender's, and for such a message its own row is the whole story: it
 * completed when it was received, verified. */
static bool write_row(struct csv *c, const struct msg_row *r, bool *verified, uint64_t *fct)
{
	char *const *id = r->snd[0] ? r->snd : r->rcv;
	const char *source =
	    *cell(r->snd, COL_SOURCE) ? cell(r->snd, COL_SOURCE) : cell(r->rcv, COL_SOURCE);
	bool external = !strcmp(source, "external");
	bool done =
	    external ? *cell(r->rcv, COL_RECV_COMPLETE) : r->snd[0] && *r->snd[COL_COMPLETE];
	static const int from_sender[] = {COL_POSTED, COL_SEND_COMPLETE};
	static const int after[] = {COL_COMPLETE, COL_FCT, COL_RETX};

	for (int i = COL_ID; i <= COL_BYTES; i++)
		csv_str(c, cell(id, i));
	for (size_t i = 0; i < 2; i++)
		csv_str(c, cell(r->snd, from_sender[i]));
	csv_str(c, cell(r->rcv, COL_RECV_COMPLETE));
	for (size_t i = 0; i < 3; i++)
		csv_str(c, cell(r->snd, after[i]));
	/* driver.c: verified = done && the receiver saw every byte right. */
	*verified = done && !strcmp(cell(r->rcv, COL_VERIFIED), "true");
	csv_bool(c, *verified);
	csv_str(c, source);
	csv_str(c, row_failure(r));
	csv_end(c);
	*fct = done && !external ? strtoull(r->snd[COL_FCT], NULL, 10) : 0;
	return done;
}

/* docs/records.md: the summary lists every message that did not complete
 * verified, with the reason, in the words of `sim`'s (driver_why). */
static void report_row(const struct msg_row *r, bool verified, FILE *report)
{
	char *const *id = r->snd[0] ? r->snd : r->rcv;
	enum driver_failure f = DRIVER_FAILURE_NONE;
	const char *why;

	if (!strcmp(cell(id, COL_SOURCE), "external"))
		return; /* its receiver's row is all there is: no sender to blame */
	if (*row_failure(r) && !driver_failure_parse(row_failure(r), &f))
		f = DRIVER_FAILURE_NONE;
	why = !r->snd[0]
		  ? "its sender's daemon wrote no row for it"
		  : driver_why(f, *cell(r->snd, COL_POSTED), *cell(r->snd, COL_SEND_COMPLETE),
			       *cell(r->snd, COL_COMPLETE), verified);
	if (why)
		fprintf(report, "message %s (%s to %s, %s bytes): %s\n", cell(id, COL_ID),
			cell(id, COL_SRC), cell(id, COL_DST), cell(id, COL_BYTES), why);
}

/* A workload message whose daemons died before writing their rows: what
 * the workload says, and not verified. */
static void write_unknown(struct csv *c, const struct topology *t, const struct workload_msg *w)
{
	csv_u64(c, w->id);
	csv_str(c, t->nodes[w->src].name);
	csv_str(c, t->nodes[w->dst].name);
	csv_u64(c, w->bytes);
	for (int i = COL_POSTED; i < COL_VERIFIED; i++)
		csv_str(c, "");
	csv_bool(c, false);
	csv_str(c, driver_source_name(DRIVER_SOURCE_WORKLOAD));
	csv_str(c, "");
	csv_end(c);
}

static bool write_messages(struct msg_table *m, const struct topology *t, const struct workload *w,
			   const char *dir, struct run_outcome *s, FILE *report)
{
	struct csv *c = csv_open(dir, "messages.csv", DRIVER_MESSAGES_HEADER);
	uint64_t *fct = calloc(m->n + 1, sizeof(*fct));
	size_t nfct = 0;

	if (!c || !fct) {
		fprintf(report, "mrcemu: %s/messages.csv: %s\n", dir, strerror(errno));
		free(fct);
		if (c)
			csv_close(c);
		return false;
	}
	if (m->n > m->nworkload) /* no arithmetic on a NULL array */
		qsort(m->rows + m->nworkload, m->n - m->nworkload, sizeof(m->rows[0]), cmp_row_id);
	for (size_t i = 0; i < m->n; i++) {
		bool verified;
		s->messages++;
		if (!m->rows[i].snd[0] && !m->rows[i].rcv[0]) {
			write_unknown(c, t, &w->msgs[i]); /* no daemon wrote it */
			fprintf(report,
				"message %llu (%s to %s, %llu bytes): no daemon wrote its row\n",
				(unsigned long long)w->msgs[i].id, t->nodes[w->msgs[i].src].name,
				t->nodes[w->msgs[i].dst].name,
				(unsigned long long)w->msgs[i].bytes);
			continue;
		}
		if (write_row(c, &m->rows[i], &verified, &fct[nfct])) {
			s->completed++;
			s->unverified += !verified;
			nfct += fct[nfct] != 0;
		}
		/* As sim.c counts them: the workload's messages that failed. */
		s->failed += i < m->nworkload && *row_failure(&m->rows[i]);
		report_row(&m->rows[i], verified, report);
	}
	outcome_fct(s, fct, nfct);
	free(fct);
	if (!csv_close(c)) {
		fprintf(report, "mrcemu: %s/messages.csv: write failed\n", dir);
		return false;
	}
	return true;
}

static bool merge_messages(const struct topology *t, const struct workload *w, const char *dir,
			   struct run_outcome *s, FILE *report)
{
	struct msg_table m = {.nworkload = w->count, .n = w->count, .cap = w->count};
	char path[LAUNCH_PATH_MAX];
	bool ok;

	m.rows = calloc(w->count + 1, sizeof(*m.rows));
	ok = m.rows != NULL;
	for (size_t i = 0; ok && i < w->count; i++)
		m.rows[i].id = w->msgs[i].id;
	for (int i = 0; ok && i < t->nnodes; i++) {
		if (t->nodes[i].kind != NODE_NIC)
			continue;
		node_file(dir, "messages", t->nodes[i].name, path, sizeof(path));
		ok = read_node_messages(&m, t, w, path, t->nodes[i].name, report);
	}
	if (ok)
		ok = write_messages(&m, t, w, dir, s, report);
	for (size_t i = 0; m.rows && i < m.n; i++)
		for (int k = 0; k < MSG_COLS; k++) {
			free(m.rows[i].snd[k]);
			free(m.rows[i].rcv[k]);
		}
	free(m.rows);
	return ok;
}

/* ---- time-ordered records ---------------------------------------------- */

struct head {
	FILE *f;
	char *rec;
	size_t cap;
	uint64_t time;
	bool live;
};

static void head_next(struct head *h)
{
	char *end;

	h->live = read_record(h->f, &h->rec, &h->cap) >= 0;
	if (h->live)
		h->time = strtoull(h->rec, &end, 10);
}

/* Open every node's file of `base`; the first one's header is the record's.
 * Returns the number opened (0: nothing to merge), -1 on mixed headers. */
static int open_heads(const struct topology *t, const char *dir, const char *base, struct head *h,
		      char **header, FILE *report)
{
	char path[LAUNCH_PATH_MAX];
	int n = 0;

	for (int i = 0; i < t->nnodes; i++) {
		node_file(dir, base, t->nodes[i].name, path, sizeof(path));
		h[i].f = fopen(path, "re");
		if (!h[i].f)
			continue;
		n++;
		if (read_record(h[i].f, &h[i].rec, &h[i].cap) < 0)
			continue;
		if (!*header) {
			*header = strdup(h[i].rec);
		} else if (strcmp(*header, h[i].rec)) {
			fprintf(report, "mrcemu: %s: header differs from the other nodes'\n", path);
			return -1;
		}
		head_next(&h[i]);
	}
	return n;
}

/* Rows after T_end (end, 0: none) are a daemon's run-ahead: sim has none
 * (docs/promises.md, One end). */
static void merge_heads(struct head *h, int nnodes, ps_t end, FILE *out)
{
	for (;;) {
		int best = -1;
		/* Ties go to the earlier node: sorted by time_ps then node. */
		for (int i = 0; i < nnodes; i++)
			if (h[i].live && (best < 0 || h[i].time < h[best].time))
				best = i;
		if (best < 0)
			return;
		if (!end || h[best].time <= end)
			fprintf(out, "%s\n", h[best].rec);
		head_next(&h[best]);
	}
}

static bool merge_timed(const struct topology *t, const char *dir, const char *base, ps_t end,
			FILE *report)
{
	struct head *h = calloc(t->nnodes, sizeof(*h));
	char path[LAUNCH_PATH_MAX], *header = NULL;
	FILE *out;
	int n = h ? open_heads(t, dir, base, h, &header, report) : -1;
	bool ok = n >= 0;

	snprintf(path, sizeof(path), "%s/%s.csv", dir, base);
	if (n > 0 && header) {
		out = records_create(path);
		if (out) {
			fprintf(out, "%s\n", header);
			merge_heads(h, t->nnodes, end, out);
		}
		if (!out || fclose(out) != 0) {
			fprintf(report, "mrcemu: %s: %s\n", path, strerror(errno));
			ok = false;
		}
	}
	for (int i = 0; h && i < t->nnodes; i++) {
		if (h[i].f)
			fclose(h[i].f);
		free(h[i].rec);
	}
	free(h);
	free(header);
	return ok;
}

/* ---- lateness.csv ------------------------------------------------------- */

static void max_into(uint64_t *into, uint64_t v)
{
	if (v > *into)
		*into = v;
}

static void add_lateness(const char *header, char *rec, struct launch_lateness *lat)
{
	static const char *const names[] = {"frames",	     "stamped",	      "violations",
					    "late_p50_ns",   "late_p99_ns",   "late_max_ns",
					    "promises_sent", "promise_waits", "promise_wait_ns"};
	enum { N = sizeof(names) / sizeof(names[0]) };
	uint64_t v[N] = {0};
	char *cells[64];
	int n = split_cells(rec, cells, 64);

	for (int i = 0; i < N; i++) {
		int c = column(header, names[i]);
		if (c >= 0 && c < n)
			v[i] = strtoull(cells[c], NULL, 10);
	}
	lat->frames += v[0];
	lat->stamped += v[1];
	lat->violations += v[2];
	max_into(&lat->late_p50_ns, v[3]);
	max_into(&lat->late_p99_ns, v[4]);
	max_into(&lat->late_max_ns, v[5]);
	lat->promises += v[6];
	lat->promise_waits += v[7];
	lat->wait_ns += v[8];
}

static bool merge_lateness(const struct topology *t, const char *dir, struct launch_lateness *lat,
			   FILE *report)
{
	char path[LAUNCH_PATH_MAX], *rec = NULL, *header = NULL;
	size_t cap = 0;
	FILE *out = NULL;

	for (int i = 0; i < t->nnodes; i++) {
		FILE *f;
		node_file(dir, "lateness", t->nodes[i].name, path, sizeof(path));
		if (!(f = fopen(path, "re")))
			continue;
		if (read_record(f, &rec, &cap) >= 0 && !out) {
			header = strdup(rec);
			snprintf(path, sizeof(path), "%s/lateness.csv", dir);
			if (!header || !(out = records_create(path))) {
				fprintf(report, "mrcemu: %s: %s\n", path, strerror(errno));
				fclose(f);
				free(rec);
				free(header);
				return false;
			}
			fprintf(out, "%s\n", header);
		}
		while (out && read_record(f, &rec, &cap) >= 0) {
			fprintf(out, "%s\n", rec);
			add_lateness(header, rec, lat);
		}
		fclose(f);
	}
	free(rec);
	free(header);
	return !out || fclose(out) == 0;
}

/* ---- chakra.csv ---------------------------------------------------------- */

/* Each nicd's chakra-<node>.csv holds its rank's rows: one after the
 * other in rank order, as `mrcemu sim` writes them. */
static bool merge_chakra(const struct topology *t, const char *dir, FILE *report)
{
	char path[LAUNCH_PATH_MAX], *rec = NULL;
	size_t cap = 0;
	FILE *out;
	bool ok = true;

	if (!t->chakra[0])
		return true;
	snprintf(path, sizeof(path), "%s/chakra.csv", dir);
	if (!(out = fopen(path, "we"))) {
		fprintf(report, "mrcemu: %s: %s\n", path, strerror(errno));
		return false;
	}
	for (int r = 0; r < t->nranks; r++) {
		FILE *f;
		node_file(dir, "chakra", t->nodes[t->ranks[r]].name, path, sizeof(path));
		if (!(f = fopen(path, "re")))
			continue;
		for (int row = 0; read_record(f, &rec, &cap) >= 0; row++)
			if (row || ftell(out) == 0)
				fprintf(out, "%s\n", rec);
		fclose(f);
	}
	free(rec);
	if (fclose(out) != 0) {
		fprintf(report, "mrcemu: %s/chakra.csv: write failed\n", dir);
		ok = false;
	}
	return ok;
}

/* Node rows have an empty step; a rank's finish is its last node's end. */
void launch_chakra_summary(const struct topology *t, const char *dir, char *buf, size_t len)
{
	char path[LAUNCH_PATH_MAX], *rec = NULL, *cells[16], tm[32];
	size_t cap = 0, used;
	uint64_t nodes = 0, done = 0, *finish = calloc((size_t)t->nranks + 1, sizeof(*finish));
	FILE *f;

	buf[0] = '\0';
	snprintf(path, sizeof(path), "%s/chakra.csv", dir);
	if (!t->chakra[0] || !finish || !(f = fopen(path, "re"))) {
		free(finish);
		return;
	}
	for (int row = 0; read_record(f, &rec, &cap) >= 0; row++) {
		if (!row || split_cells(rec, cells, 16) < 8 || *cells[7])
			continue;
		unsigned long r = strtoul(cells[0], NULL, 10);
		uint64_t end = strtoull(cells[5], NULL, 10);
		nodes++;
		done += *cells[5] != '\0';
		if (r < (unsigned long)t->nranks && end > finish[r])
			finish[r] = end;
	}
	fclose(f);
	free(rec);
	used = (size_t)snprintf(buf, len, "chakra: %llu of %llu nodes finished; rank finish:",
				(unsigned long long)done, (unsigned long long)nodes);
	for (int r = 0; r < t->nranks && used < len; r++)
		used += (size_t)snprintf(buf + used, len - used, " %d=%s", r,
					 time_format(finish[r], tm, sizeof(tm)));
	if (used < len)
		snprintf(buf + used, len - used, "\n");
	free(finish);
}

bool launch_merge(const struct topology *t, const struct workload *w, const char *dir, ps_t end,
		  struct run_outcome *m, struct launch_lateness *lat, FILE *report)
{
	bool ok = merge_messages(t, w, dir, m, report) && merge_chakra(t, dir, report);

	for (size_t i = 0; ok && i < sizeof(timed) / sizeof(timed[0]); i++)
		ok = merge_timed(t, dir, timed[i], end, report);
	ok = ok && merge_lateness(t, dir, lat, report);
	if (ok)
		launch_clean_records(t, dir);
	return ok;
}
