/* emulator/chakra/chakra.c — a Chakra trace as a workload (chakra.h): finding the
 * ranks' files, planning each rank's messages and their indices, and the
 * checks across ranks that `sim` and the launcher of `run` make before
 * anything starts.
 *
 * The message index (docs/chakra.md, Message index).  The tag is not on
 * the wire: a message carries only its index (RETH VA, PROTOCOL.md §1)
 * from a known source.  Each message has a key: (0, comm_tag, occurrence)
 * for a COMM_SEND/COMM_RECV, where occurrence counts the earlier nodes of
 * the file with the same peer, direction and tag; (1, collective, position)
 * for a collective's step, where collective counts the earlier COMM_COLL
 * nodes of the file and position is the message's place in the
 * collective's whole list (chakra_coll.c).  Between a source and a
 * destination, the index of a message is 1 + the rank of its key among the
 * keys of every message from that source to that destination.  The sender
 * computes it over its sends, the receiver over its receives; the two
 * sets are the same when every send has its receive and the other way
 * round, which chakra_load checks, so the indices agree with no shared
 * state and two messages of one pair never share an index: there is no
 * collision.  A pair with more than CHAKRA_MAX_INDEX messages is refused. */
#include "chakra.h"

#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/hmap.h"

static const char *const type_names[] = {"INVALID", "METADATA",	 "MEM_LOAD",  "MEM_STORE",
					 "COMP",    "COMM_SEND", "COMM_RECV", "COMM_COLL"};
static const char *const coll_names[] = {
    "ALL_REDUCE", "REDUCE",	    "ALL_GATHER",	    "GATHER", "SCATTER", "BROADCAST",
    "ALL_TO_ALL", "REDUCE_SCATTER", "REDUCE_SCATTER_BLOCK", "BARRIER"};

const char *chakra_type_name(enum chakra_type t)
{
	return (unsigned)t < sizeof(type_names) / sizeof(type_names[0]) ? type_names[t] : "?";
}

const char *chakra_coll_name(enum chakra_coll c)
{
	return (unsigned)c < sizeof(coll_names) / sizeof(coll_names[0]) ? coll_names[c] : "?";
}

struct chakra_msg *chakra_msg_add(struct chakra_rank *r)
{
	if (!(r->nmsgs & (r->nmsgs - 1))) { /* 0, 1, 2, 4, ...: double */
		struct chakra_msg *m = realloc(r->msgs, (r->nmsgs ? 2 * r->nmsgs : 1) * sizeof(*m));
		if (!m)
			return NULL;
		r->msgs = m;
	}
	return &r->msgs[r->nmsgs++];
}

int chakra_rank_of(const struct topology *t, int node)
{
	for (int r = 0; r < t->nranks; r++)
		if (t->ranks[r] == node)
			return r;
	return -1;
}

static bool fail(char *err, size_t errlen, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static bool fail(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
	return false;
}

static void node_fail(char *err, size_t errlen, const struct chakra_rank *r,
		      const struct chakra_node *n, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));

/* "FILE: node ID (NAME): reason", as chakra_read.c writes it. */
static void node_fail(char *err, size_t errlen, const struct chakra_rank *r,
		      const struct chakra_node *n, const char *fmt, ...)
{
	va_list ap;
	int k = snprintf(err, errlen, "%s: node %" PRIu64 " (%s): ", r->path, n->id, n->name);

	if (k >= 0 && (size_t)k < errlen) {
		va_start(ap, fmt);
		vsnprintf(err + k, errlen - (size_t)k, fmt, ap);
		va_end(ap);
	}
}

/* ---- the files ------------------------------------------------------------------ */

static void rank_path(const struct topology *t, int rank, char *buf, size_t len)
{
	snprintf(buf, len, "%s.%d.et", t->chakra, rank);
}

/* The first rank beyond the topology's: its file and first node. */
static bool no_nic(const struct topology *t, int nranks, char *err, size_t errlen)
{
	struct chakra_rank r;
	char path[4200], why[512];
	int k;

	rank_path(t, t->nranks, path, sizeof(path));
	if (chakra_read(path, t->nranks, nranks, &r, why, sizeof(why)) && r.nnodes)
		k = snprintf(err, errlen, "%s: node %" PRIu64 " (%s): ", path, r.nodes[0].id,
			     r.nodes[0].name);
	else
		k = snprintf(err, errlen, "%s: ", path);
	if (k >= 0 && (size_t)k < errlen)
		snprintf(err + k, errlen - (size_t)k,
			 "rank %d has no NIC (%s maps %d ranks: [workload] ranks, or its NICs "
			 "in order)",
			 t->nranks, t->path, t->nranks);
	for (uint32_t i = 0; i < r.nnodes; i++) {
		free(r.nodes[i].name);
		free(r.nodes[i].deps);
	}
	free(r.nodes);
	return false;
}

/* NAME.<rank>.et in DIR: ranks 0..n-1, each with its file. */
static bool count_ranks(const struct topology *t, int *nranks, char *err, size_t errlen)
{
	const char *slash = strrchr(t->chakra, '/');
	char dir[4096], path[4200];
	const char *base = slash ? slash + 1 : t->chakra;
	size_t blen = strlen(base);
	long max = -1;
	DIR *d;
	struct dirent *de;

	snprintf(dir, sizeof(dir), "%.*s", slash ? (int)(slash - t->chakra) : 1,
		 slash ? t->chakra : ".");
	if (!(d = opendir(dir)))
		return fail(err, errlen, "%s: cannot open: %s", dir, strerror(errno));
	while ((de = readdir(d))) {
		char *end;
		if (strncmp(de->d_name, base, blen) || de->d_name[blen] != '.' ||
		    !(de->d_name[blen + 1] >= '0' && de->d_name[blen + 1] <= '9'))
			continue;
		long r = strtol(de->d_name + blen + 1, &end, 10);
		if (!strcmp(end, ".et") && r > max && r < CHAKRA_MAX_RANKS)
			max = r;
	}
	closedir(d);
	if (max < 0)
		return fail(err, errlen, "%s.0.et: no Chakra trace (files NAME.<rank>.et)",
			    t->chakra);
	for (int r = 0; r <= max; r++) {
		rank_path(t, r, path, sizeof(path));
		FILE *f = fopen(path, "rbe");
		if (!f)
			return fail(err, errlen,
				    "%s: cannot open: %s (ranks 0..%ld need a file each)", path,
				    strerror(errno), max);
		fclose(f);
	}
	*nranks = (int)max + 1;
	if (*nranks > t->nranks)
		return no_nic(t, *nranks, err, errlen);
	return true;
}

/* ---- planning a rank ------------------------------------------------------------- */

static enum chakra_algo default_algo(enum chakra_coll c)
{
	switch (c) {
	case CHAKRA_ALL_REDUCE:
	case CHAKRA_REDUCE_SCATTER:
	case CHAKRA_REDUCE_SCATTER_BLOCK:
	case CHAKRA_ALL_GATHER:
	case CHAKRA_BROADCAST:
	case CHAKRA_REDUCE:
		return CHAKRA_RING;
	default:
		return CHAKRA_DIRECT;
	}
}

/* The algorithm: the node's CollectiveAlgorithm, the topology's
 * <Collective>Algorithm, or the default; each collective allows some. */
static bool settle_algo(const struct topology *t, struct chakra_rank *r, struct chakra_node *n,
			char *err, size_t errlen)
{
	static const char *const names[] = {"", "ring", "direct", "tree"};
	enum chakra_algo a = n->algo ? n->algo : (enum chakra_algo)t->coll_algo[n->coll];
	bool ok;

	if (!a)
		a = default_algo(n->coll);
	switch (n->coll) {
	case CHAKRA_BROADCAST:
	case CHAKRA_REDUCE:
		ok = a == CHAKRA_RING || a == CHAKRA_TREE;
		break;
	case CHAKRA_BARRIER:
		ok = true; /* dissemination, whatever is asked */
		break;
	case CHAKRA_ALL_TO_ALL:
	case CHAKRA_GATHER:
	case CHAKRA_SCATTER:
		ok = a == CHAKRA_DIRECT;
		break;
	default:
		ok = a == CHAKRA_RING || a == CHAKRA_DIRECT;
	}
	n->algo = a;
	if (!ok)
		node_fail(err, errlen, r, n, "%s cannot run as %s (docs/chakra.md, Collectives)",
			  chakra_coll_name(n->coll), names[a]);
	return ok;
}

static int cmp_msg(const void *a, const void *b)
{
	const struct chakra_msg *x = *(struct chakra_msg *const *)a;
	const struct chakra_msg *y = *(struct chakra_msg *const *)b;

	if (x->send != y->send)
		return x->send < y->send ? -1 : 1;
	if (x->peer != y->peer)
		return x->peer < y->peer ? -1 : 1;
	for (int i = 0; i < 3; i++)
		if (x->key[i] != y->key[i])
			return x->key[i] < y->key[i] ? -1 : 1;
	return 0;
}

/* The index of each message: 1 + its key's rank among the pair's keys.
 * A COMM_SEND's or COMM_RECV's key is (0, tag, its place in the file):
 * within one tag, the file's order is the order of occurrence, so sorting
 * by it ranks the keys as (0, tag, occurrence) would. */
static bool assign_indices(struct chakra_rank *r, char *err, size_t errlen)
{
	uint32_t ordinal = 0;

	r->order = malloc((r->nmsgs ? r->nmsgs : 1) * sizeof(*r->order));
	if (!r->order)
		return fail(err, errlen, "%s: out of memory", r->path);
	for (uint32_t i = 0; i < r->nmsgs; i++)
		r->order[i] = &r->msgs[i];
	if (r->nmsgs) /* qsort's array may not be NULL, even empty */
		qsort(r->order, r->nmsgs, sizeof(*r->order), cmp_msg);
	for (uint32_t i = 0; i < r->nmsgs; i++) {
		struct chakra_msg *m = r->order[i], *p = i ? r->order[i - 1] : NULL;
		ordinal = p && p->send == m->send && p->peer == m->peer ? ordinal + 1 : 1;
		if (ordinal > CHAKRA_MAX_INDEX) {
			node_fail(err, errlen, r, &r->nodes[m->node],
				  "more than %d messages between ranks %d and %d", CHAKRA_MAX_INDEX,
				  r->rank, m->peer);
			return false;
		}
		m->index = ordinal;
		int src = m->send ? r->rank : m->peer, dst = m->send ? m->peer : r->rank;
		m->id = (uint64_t)src * 1000000000000ULL + (uint64_t)dst * 1000000ULL + m->index;
	}
	return true;
}

static bool plan_rank(const struct topology *t, struct chakra_rank *r, int nranks, char *err,
		      size_t errlen)
{
	uint32_t colls = 0;

	for (uint32_t i = 0; i < r->nnodes; i++) {
		struct chakra_node *n = &r->nodes[i];
		struct chakra_msg *m;
		if (n->type == CHAKRA_COLL) {
			n->coll_seq = colls++;
			if (!settle_algo(t, r, n, err, errlen))
				return false;
			if (!chakra_coll_plan(r, n, nranks))
				return fail(err, errlen, "%s: out of memory", r->path);
		} else if (n->type == CHAKRA_SEND || n->type == CHAKRA_RECV) {
			n->first_msg = r->nmsgs;
			n->nmsgs = 1;
			if (!(m = chakra_msg_add(r)))
				return fail(err, errlen, "%s: out of memory", r->path);
			*m = (struct chakra_msg){.node = i,
						 .step = -1,
						 .peer = n->peer,
						 .send = n->type == CHAKRA_SEND,
						 .bytes = n->bytes,
						 .key = {0, n->tag, i}};
		}
	}
	return assign_indices(r, err, errlen);
}

static bool load_one(const struct topology *t, int rank, int nranks, struct chakra_rank *r,
		     char *err, size_t errlen)
{
	char path[4200];

	rank_path(t, rank, path, sizeof(path));
	return chakra_read(path, rank, nranks, r, err, errlen) &&
	       plan_rank(t, r, nranks, err, errlen);
}

/* ---- checks across ranks ------------------------------------------------------------- */

/* The runs of a rank's ordered messages, by (direction, peer). */
struct runs {
	uint32_t *start, *len; /* [2 * nranks]: receives from, then sends to */
};

static bool runs_make(const struct chakra_rank *r, int nranks, struct runs *u)
{
	u->start = calloc(2 * (size_t)nranks, sizeof(*u->start));
	u->len = calloc(2 * (size_t)nranks, sizeof(*u->len));
	if (!u->start || !u->len)
		return false;
	for (uint32_t i = 0; i < r->nmsgs; i++) {
		const struct chakra_msg *m = r->order[i];
		size_t k = (size_t)m->send * (size_t)nranks + (size_t)m->peer;
		if (!u->len[k]++)
			u->start[k] = i;
	}
	return true;
}

static void describe(const struct chakra_msg *m, char *buf, size_t len)
{
	if (m->key[0] == 0)
		snprintf(buf, len, "comm_tag %" PRIu64, m->key[1]);
	else
		snprintf(buf, len, "collective step %d", m->step);
}

/* Compare two keys as matching ends see them: tag (and the place within a
 * collective); a p2p key's third part is a place in one file only. */
static int cmp_ends(const struct chakra_msg *s, const struct chakra_msg *r)
{
	for (int i = 0; i < (s->key[0] ? 3 : 2); i++)
		if (s->key[i] != r->key[i])
			return s->key[i] < r->key[i] ? -1 : 1;
	return 0;
}

/* Merge the sends of a to b with the receives of b from a, in key order:
 * what is left over on either side has no partner. */
static bool check_pair(const struct chakra_trace *tr, int a, int b, const struct runs *ra,
		       const struct runs *rb, char *err, size_t errlen)
{
	const struct chakra_rank *sa = &tr->ranks[a], *sb = &tr->ranks[b];
	size_t ka = (size_t)tr->nranks + (size_t)b, kb = (size_t)a;
	uint32_t i = 0, j = 0, ni = ra->len[ka], nj = rb->len[kb];
	char what[64];

	while (i < ni || j < nj) {
		const struct chakra_msg *s = i < ni ? sa->order[ra->start[ka] + i] : NULL;
		const struct chakra_msg *r = j < nj ? sb->order[rb->start[kb] + j] : NULL;
		int c = !s ? 1 : !r ? -1 : cmp_ends(s, r);
		if (c < 0) {
			describe(s, what, sizeof(what));
			node_fail(err, errlen, sa, &sa->nodes[s->node],
				  "sends to rank %d (%s), but no receive of %s matches it", b, what,
				  sb->path);
			return false;
		}
		if (c > 0) {
			describe(r, what, sizeof(what));
			node_fail(err, errlen, sb, &sb->nodes[r->node],
				  "receives from rank %d (%s), but no send of %s matches it", a,
				  what, sa->path);
			return false;
		}
		if (s->bytes != r->bytes) {
			node_fail(err, errlen, sb, &sb->nodes[r->node],
				  "receives %" PRIu64
				  " bytes from rank %d, but its send (node %" PRIu64
				  " of %s) has %" PRIu64,
				  r->bytes, a, sa->nodes[s->node].id, sa->path, s->bytes);
			return false;
		}
		i++;
		j++;
	}
	return true;
}

/* The k-th collective of every rank is the same collective. */
static bool check_collectives(const struct chakra_trace *tr, char *err, size_t errlen)
{
	const struct chakra_rank *r0 = &tr->ranks[0];
	const struct chakra_node **c0 = calloc(r0->nnodes + 1, sizeof(*c0));
	uint32_t n0 = 0;
	bool ok = c0 != NULL;

	for (uint32_t i = 0; ok && i < r0->nnodes; i++)
		if (r0->nodes[i].type == CHAKRA_COLL)
			c0[n0++] = &r0->nodes[i];
	for (int k = 1; ok && k < tr->nranks; k++) {
		const struct chakra_rank *r = &tr->ranks[k];
		uint32_t seen = 0;
		for (uint32_t i = 0; ok && i < r->nnodes; i++) {
			const struct chakra_node *n = &r->nodes[i], *m;
			if (n->type != CHAKRA_COLL)
				continue;
			if (seen == n0) {
				node_fail(err, errlen, r, n, "collective %u, but %s has only %u",
					  seen, r0->path, n0);
				ok = false;
				break;
			}
			m = c0[seen++];
			if (n->coll != m->coll || n->bytes != m->bytes || n->algo != m->algo ||
			    n->root != m->root) {
				node_fail(
				    err, errlen, r, n,
				    "collective %u is %s of %" PRIu64 " bytes, but on %s it is "
				    "%s of %" PRIu64 " bytes (node %" PRIu64 "; algorithm and "
				    "root must agree too)",
				    seen - 1, chakra_coll_name(n->coll), n->bytes, r0->path,
				    chakra_coll_name(m->coll), m->bytes, m->id);
				ok = false;
			}
		}
		if (ok && seen < n0) {
			node_fail(err, errlen, r0, c0[seen], "collective %u, but %s has only %u",
				  seen, r->path, seen);
			ok = false;
		}
	}
	if (!c0)
		fail(err, errlen, "%s: out of memory", r0->path);
	free(c0);
	return ok;
}

static bool check_matching(const struct chakra_trace *tr, char *err, size_t errlen)
{
	struct runs *u = calloc((size_t)tr->nranks, sizeof(*u));
	bool ok = u != NULL;

	for (int r = 0; ok && r < tr->nranks; r++)
		ok = runs_make(&tr->ranks[r], tr->nranks, &u[r]);
	if (!ok)
		fail(err, errlen, "%s: out of memory", tr->ranks[0].path);
	for (int a = 0; ok && a < tr->nranks; a++)
		for (int b = 0; ok && b < tr->nranks; b++)
			if (a != b)
				ok = check_pair(tr, a, b, &u[a], &u[b], err, errlen);
	for (int r = 0; u && r < tr->nranks; r++) {
		free(u[r].start);
		free(u[r].len);
	}
	free(u);
	return ok;
}

/* ---- loading ------------------------------------------------------------------------- */

bool chakra_load(const struct topology *t, struct chakra_trace *tr, char *err, size_t errlen)
{
	memset(tr, 0, sizeof(*tr));
	if (!count_ranks(t, &tr->nranks, err, errlen))
		return false;
	tr->ranks = calloc((size_t)tr->nranks, sizeof(*tr->ranks));
	if (!tr->ranks)
		return fail(err, errlen, "%s: out of memory", t->chakra);
	for (int r = 0; r < tr->nranks; r++) {
		tr->nloaded = r + 1;
		if (!load_one(t, r, tr->nranks, &tr->ranks[r], err, errlen))
			goto bad;
	}
	if (check_collectives(tr, err, errlen) && check_matching(tr, err, errlen))
		return true;
bad:
	chakra_free(tr);
	return false;
}

bool chakra_load_rank(const struct topology *t, int rank, struct chakra_trace *tr, char *err,
		      size_t errlen)
{
	memset(tr, 0, sizeof(*tr));
	if (!count_ranks(t, &tr->nranks, err, errlen))
		return false;
	if (rank < 0 || rank >= tr->nranks)
		return true; /* a NIC with no rank: nothing to run */
	tr->ranks = calloc(1, sizeof(*tr->ranks));
	if (!tr->ranks)
		return fail(err, errlen, "%s: out of memory", t->chakra);
	tr->nloaded = 1;
	if (load_one(t, rank, tr->nranks, &tr->ranks[0], err, errlen))
		return true;
	chakra_free(tr);
	return false;
}

void chakra_free(struct chakra_trace *tr)
{
	for (int r = 0; tr->ranks && r < tr->nloaded; r++) {
		struct chakra_rank *k = &tr->ranks[r];
		for (uint32_t i = 0; i < k->nnodes; i++) {
			free(k->nodes[i].name);
			free(k->nodes[i].deps);
		}
		free(k->nodes);
		free(k->msgs);
		free(k->order);
	}
	free(tr->ranks);
	memset(tr, 0, sizeof(*tr));
}
