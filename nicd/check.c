/* nicd/check.c — the engine's invariants, walked whole (nic.h nic_check).
 *
 * Every count the engine keeps beside its lists and tables must equal what
 * those hold: a count that drifts (decremented twice, never incremented)
 * turns into a wrong record, a leak or a stall long after the cause.  The
 * engine runs this at every QP close and at the end when built with
 * MRCEMU_CHECK_INVARIANTS (`make check`), and tests run it between events. */
#include <stdio.h>
#include <stdlib.h>

#include "nic_impl.h"

/* Counted for each group and destination while walking the QPs. */
struct tally {
	uint64_t refs, inflight, rtx_qps, senders;
};

struct check {
	const struct nic *nic;
	struct hmap tallies; /* group or destination pointer -> struct tally */
	bool no_memory;
	char *why;
	size_t len;
};

static const char *broken(struct check *c, const char *fmt, unsigned long long have,
			  unsigned long long want)
{
	snprintf(c->why, c->len, fmt, have, want);
	return c->why;
}

static struct tally *tally(struct check *c, const void *of)
{
	struct tally *t;

	if (!of)
		return NULL;
	if ((t = hmap_get(&c->tallies, (uintptr_t)of)))
		return t;
	if (!(t = calloc(1, sizeof(*t))) || !hmap_put(&c->tallies, (uintptr_t)of, t)) {
		free(t);
		c->no_memory = true;
		return NULL;
	}
	return t;
}

/* A sending side's own counts, and its share of its group's and
 * destination's. */
static const char *check_send(struct check *c, const struct nic_qp_send *sq)
{
	struct tally *g = tally(c, sq->group), *d = tally(c, sq->dest);

	if (!g || !d)
		return NULL;
	if (nic_send_check(c->nic, sq, c->why, c->len))
		return c->why;
	for (uint64_t i = sq->snd_una; i < sq->next_fetch; i++) {
		if (nic_seg(sq, i)->inflight)
			g->inflight += nic_seg_nominal(c->nic, nic_seg_len(c->nic, sq, i));
	}
	g->refs++;
	g->rtx_qps += sq->turn.counted_rtx;
	d->refs++;
	d->senders += !sq->error;
	return NULL;
}

static const char *check_recv(struct check *c, const struct nic_qp_recv *rq)
{
	struct tally *d = tally(c, rq->dest);

	if (!d)
		return NULL;
	d->refs++;
	if (rq->group) {
		struct tally *g = tally(c, rq->group);
		if (g)
			g->refs++;
	}
	return NULL;
}

static const char *check_group(struct check *c, const struct nic_group *g)
{
	const struct tally *t = hmap_get(&c->tallies, (uintptr_t)g);

	if (!t)
		return NULL;
	if (nic_cc_check(c->nic, &g->cc, c->why, c->len))
		return c->why;
	if (t->refs != g->refs)
		return broken(c, "group refs %llu, QPs in it %llu", g->refs, t->refs);
	if (t->inflight != g->cc.inflight)
		return broken(c, "group inflight %llu, its segments in flight %llu", g->cc.inflight,
			      t->inflight);
	if (t->rtx_qps != g->sched.rtx_qps)
		return broken(c, "group rtx_qps %llu, QPs counted %llu", g->sched.rtx_qps,
			      t->rtx_qps);
	return NULL;
}

/* A destination's references and senders against the QPs that use it. */
static const char *check_dest(struct check *c, const struct nic_dest *d)
{
	const struct tally *t = hmap_get(&c->tallies, (uintptr_t)d);
	uint64_t refs = t ? t->refs : 0, senders = t ? t->senders : 0;

	if (refs != d->refs)
		return broken(c, "destination refs %llu, QPs using it %llu", d->refs, refs);
	if (senders != d->senders)
		return broken(c, "destination senders %llu, sending QPs %llu", d->senders, senders);
	return NULL;
}

/* The sending QPs' table against the count of open messages. */
static const char *check_tables(struct check *c)
{
	const struct nic *nic = c->nic;

	if (nic->open_msgs != nic->send_qps.count)
		return broken(c, "open_msgs %llu, send QPs %llu", nic->open_msgs,
			      nic->send_qps.count);
	return NULL;
}

/* The value in slot i of a table, or NULL. */
static const void *slot(const struct hmap *m, size_t i)
{
	return m->slots ? m->slots[i].val : NULL;
}

static size_t slots(const struct hmap *m)
{
	return m->slots ? m->mask + 1 : 0;
}

/* The QPs first (they fill the tallies), then their groups and the
 * destinations against them. */
static const char *walk(struct check *c)
{
	const struct nic *nic = c->nic;
	const char *why = check_tables(c);

	if (!why)
		why = nic_port_check(nic, c->why, c->len);
	if (!why)
		why = nic_pcie_check(nic, c->why, c->len);
	if (!why)
		why = nic_sched_check(nic, c->why, c->len);
	if (!why)
		why = nic_recv_check(nic, c->why, c->len);
	if (!why)
		why = nic_spray_check(nic, c->why, c->len);
	for (size_t i = 0; !why && i < slots(&nic->send_qps); i++)
		if (slot(&nic->send_qps, i))
			why = check_send(c, slot(&nic->send_qps, i));
	for (size_t i = 0; !why && i < slots(&nic->recv.qps); i++)
		if (slot(&nic->recv.qps, i))
			why = check_recv(c, slot(&nic->recv.qps, i));
	for (size_t i = 0; !why && i < slots(&nic->send_qps); i++) {
		const struct nic_qp_send *sq = slot(&nic->send_qps, i);
		if (sq)
			why = check_group(c, sq->group);
	}
	for (size_t i = 0; !why && i < slots(&nic->recv.qps); i++) {
		const struct nic_qp_recv *rq = slot(&nic->recv.qps, i);
		if (rq && rq->group)
			why = check_group(c, rq->group);
	}
	for (size_t i = 0; !why && i < slots(&nic->dests.by_ip); i++)
		if (slot(&nic->dests.by_ip, i))
			why = check_dest(c, slot(&nic->dests.by_ip, i));
	return why;
}

const char *nic_check(const struct nic *nic, char *why, size_t len)
{
	struct check c = {.nic = nic, .why = why, .len = len};
	const char *r;

	hmap_init(&c.tallies);
	r = walk(&c);
	for (size_t i = 0; i < slots(&c.tallies); i++)
		free((void *)slot(&c.tallies, i));
	hmap_destroy(&c.tallies);
	return c.no_memory ? NULL : r; /* nothing to compare against: not a failure */
}
