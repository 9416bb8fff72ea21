/* emulator/chakra/chakra_coll.c — collectives made of point-to-point messages
 * (docs/chakra.md, Collectives).  Each algorithm lists every message of
 * the collective, on every rank, as (step, source, destination, bytes), in
 * step order; a rank keeps those it sends or receives.  Every rank derives
 * the same list from the same (type, algorithm, ranks, size, root), so the
 * position of a message in it names the message at both ends.
 *
 * S is comm_size, the buffer per rank, in N chunks: chunk c holds
 * S/N bytes, plus one for c < S mod N. */
#include <stdlib.h>
#include <string.h>

#include "chakra.h"

struct emitter {
	struct chakra_rank *r; /* keeps the messages of rank r->rank */
	struct chakra_node *n;
	uint32_t node;
	uint64_t position; /* of the next message in the whole list */
	int nranks;
	bool failed;
};

static uint64_t chunk(const struct emitter *e, int c)
{
	uint64_t s = e->n->bytes, n = (uint64_t)e->nranks;
	return s / n + ((uint64_t)c < s % n);
}

static int mod(int a, int n)
{
	return ((a % n) + n) % n;
}

static void keep(struct emitter *e, int step, int src, int dst, uint64_t bytes, bool send)
{
	struct chakra_msg *m = chakra_msg_add(e->r);

	if (!m) {
		e->failed = true;
		return;
	}
	*m = (struct chakra_msg){.node = e->node,
				 .step = step,
				 .peer = send ? dst : src,
				 .send = send,
				 .bytes = bytes,
				 .key = {1, e->n->coll_seq, e->position}};
	e->n->nmsgs++;
	if ((uint32_t)step + 1 > e->n->nsteps)
		e->n->nsteps = (uint32_t)step + 1;
}

/* One message of the collective: kept when this rank is an end of it. */
static void emit(struct emitter *e, int step, int src, int dst, uint64_t bytes)
{
	if (src == e->r->rank)
		keep(e, step, src, dst, bytes, true);
	else if (dst == e->r->rank)
		keep(e, step, src, dst, bytes, false);
	e->position++;
}

/* Ring: N - 1 steps; at each, rank i sends one chunk to i + 1 (reduce-
 * scatter: chunk i - s, all-gather: chunk i + 1 - s). */
static void ring(struct emitter *e, int first_step, bool gather)
{
	int n = e->nranks;

	for (int s = 0; s < n - 1; s++)
		for (int i = 0; i < n; i++)
			emit(e, first_step + s, i, mod(i + 1, n),
			     chunk(e, mod(gather ? i + 1 - s : i - s, n)));
}

/* Direct: one step; rank i sends chunk j to each j (reduce-scatter, all-to-
 * all) or its own chunk i to each j (all-gather). */
static void direct(struct emitter *e, int step, bool gather)
{
	for (int i = 0; i < e->nranks; i++)
		for (int j = 0; j < e->nranks; j++)
			if (i != j)
				emit(e, step, i, j, chunk(e, gather ? i : j));
}

static int depth(int p)
{
	int d = 0;
	while (p > 0) {
		p = (p - 1) / 2;
		d++;
	}
	return d;
}

/* Broadcast from the root: the chain of positions p = i - root, or the
 * binary tree (children 2p + 1, 2p + 2); each hop carries all S bytes.  A
 * reduce runs the same hops the other way, leaves first. */
static void one_to_all(struct emitter *e, bool tree, bool reduce)
{
	int n = e->nranks, root = e->n->root, last = depth(n - 1);
	uint64_t s = e->n->bytes;

	if (!tree) {
		for (int p = 0; p < n - 1; p++) {
			int q = reduce ? n - 2 - p : p; /* the hop q -> q + 1 */
			emit(e, p, mod(root + (reduce ? q + 1 : q), n),
			     mod(root + (reduce ? q : q + 1), n), s);
		}
		return;
	}
	for (int d = 0; d < last; d++) {
		int dd = reduce ? last - 1 - d : d; /* hops between depth dd and dd + 1 */
		for (int c = 1; c < n; c++) {
			if (depth(c) != dd + 1)
				continue;
			int parent = mod(root + (c - 1) / 2, n), child = mod(root + c, n);
			emit(e, d, reduce ? child : parent, reduce ? parent : child, s);
		}
	}
}

/* Gather and scatter: one step, S/N between the root and each other rank. */
static void root_direct(struct emitter *e, bool gather)
{
	for (int i = 0; i < e->nranks; i++)
		if (i != e->n->root)
			emit(e, 0, gather ? i : e->n->root, gather ? e->n->root : i, chunk(e, i));
}

/* Barrier: dissemination, ceil(log2 N) steps; at step k rank i sends an
 * empty message to i + 2^k. */
static void barrier(struct emitter *e)
{
	int k = 0;

	for (int dist = 1; dist < e->nranks; dist *= 2, k++)
		for (int i = 0; i < e->nranks; i++)
			emit(e, k, i, mod(i + dist, e->nranks), 0);
}

bool chakra_coll_plan(struct chakra_rank *r, struct chakra_node *n, int nranks)
{
	struct emitter e = {.r = r, .n = n, .node = (uint32_t)(n - r->nodes), .nranks = nranks};
	bool is_ring = n->algo == CHAKRA_RING;

	n->first_msg = r->nmsgs;
	n->nmsgs = n->nsteps = 0;
	if (nranks < 2)
		return true;
	switch (n->coll) {
	case CHAKRA_ALL_REDUCE:
		if (is_ring) {
			ring(&e, 0, false);
			ring(&e, nranks - 1, true);
		} else {
			direct(&e, 0, false);
			direct(&e, 1, true);
		}
		break;
	case CHAKRA_REDUCE_SCATTER:
	case CHAKRA_REDUCE_SCATTER_BLOCK:
		if (is_ring)
			ring(&e, 0, false);
		else
			direct(&e, 0, false);
		break;
	case CHAKRA_ALL_GATHER:
		if (is_ring)
			ring(&e, 0, true);
		else
			direct(&e, 0, true);
		break;
	case CHAKRA_ALL_TO_ALL:
		direct(&e, 0, false);
		break;
	case CHAKRA_BROADCAST:
	case CHAKRA_REDUCE:
		one_to_all(&e, n->algo == CHAKRA_TREE, n->coll == CHAKRA_REDUCE);
		break;
	case CHAKRA_GATHER:
	case CHAKRA_SCATTER:
		root_direct(&e, n->coll == CHAKRA_GATHER);
		break;
	case CHAKRA_BARRIER:
		barrier(&e);
		break;
	}
	return !e.failed;
}
