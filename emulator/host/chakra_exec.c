/* emulator/host/chakra_exec.c — running a Chakra trace (chakra_exec.h). */
#include "chakra_exec.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "driver.h"

const char CHAKRA_CSV_HEADER[] = "rank,id,name,type,start_ps,end_ps,msg_id,step,peer,bytes";

static uint64_t index_key(int peer, uint32_t index, bool send)
{
	return (uint64_t)peer << 21 | (uint64_t)index << 1 | send;
}

static struct cx_msg *find_msg(const struct cx_rank *rk, int peer, uint32_t index, bool send,
			       uint32_t *which)
{
	uintptr_t k = (uintptr_t)hmap_get(&rk->by_index, index_key(peer, index, send));

	if (!k)
		return NULL;
	*which = (uint32_t)(k - 1);
	return &rk->msgs[k - 1];
}

/* ---- building ------------------------------------------------------------------- */

/* Dependents of each node, in one array (counting sort). */
static bool build_dependents(struct cx_rank *rk)
{
	const struct chakra_rank *r = rk->r;
	uint64_t edges = 0;

	for (uint32_t i = 0; i < r->nnodes; i++)
		edges += r->nodes[i].ndeps;
	rk->dep_first = calloc(r->nnodes + 2, sizeof(*rk->dep_first));
	rk->dep_list = malloc((edges + 1) * sizeof(*rk->dep_list));
	if (!rk->dep_first || !rk->dep_list)
		return false;
	for (uint32_t i = 0; i < r->nnodes; i++)
		for (uint32_t k = 0; k < r->nodes[i].ndeps; k++)
			rk->dep_first[r->nodes[i].deps[k] + 2]++;
	for (uint32_t i = 0; i < r->nnodes; i++)
		rk->dep_first[i + 2] += rk->dep_first[i + 1];
	for (uint32_t i = 0; i < r->nnodes; i++)
		for (uint32_t k = 0; k < r->nodes[i].ndeps; k++)
			rk->dep_list[rk->dep_first[r->nodes[i].deps[k] + 1]++] = i;
	return true;
}

static bool build_rank(struct chakra_exec *x, struct cx_rank *rk, const struct chakra_rank *r)
{
	rk->x = x;
	rk->r = r;
	rk->node = x->t->ranks[r->rank];
	hmap_init(&rk->by_index);
	rk->nodes = calloc(r->nnodes + 1, sizeof(*rk->nodes));
	rk->msgs = calloc(r->nmsgs + 1, sizeof(*rk->msgs));
	if (!rk->nodes || !rk->msgs || !build_dependents(rk))
		return false;
	for (uint32_t i = 0; i < r->nnodes; i++)
		rk->nodes[i] = (struct cx_node){
		    .rk = rk, .i = i, .deps_left = r->nodes[i].ndeps, .via_node = -1};
	for (uint32_t i = 0; i < r->nmsgs; i++) {
		const struct chakra_msg *m = &r->msgs[i];
		if (!hmap_put(&rk->by_index, index_key(m->peer, m->index, m->send),
			      (void *)(uintptr_t)(i + 1)))
			return false;
		x->sends += m->send;
		x->receives += !m->send;
	}
	x->nodes += r->nnodes;
	x->by_node[rk->node] = rk;
	return true;
}

bool chakra_exec_init(struct chakra_exec *x, const struct topology *t,
		      const struct chakra_trace *tr, struct events *q,
		      struct nic *(*nic_of)(void *ctx, int node), void *ctx)
{
	memset(x, 0, sizeof(*x));
	x->t = t;
	x->tr = tr;
	x->q = q;
	x->nic_of = nic_of;
	x->ctx = ctx;
	hmap_init(&x->rank_by_ip);
	x->ranks = calloc((size_t)tr->nloaded + 1, sizeof(*x->ranks));
	x->by_node = calloc((size_t)t->nnodes, sizeof(*x->by_node));
	if (!x->ranks || !x->by_node)
		return false;
	for (int r = 0; r < tr->nranks; r++)
		if (!hmap_put(&x->rank_by_ip, t->nodes[t->ranks[r]].nic.ip,
			      (void *)(uintptr_t)(r + 1)))
			return false;
	for (int k = 0; k < tr->nloaded; k++)
		if (!build_rank(x, &x->ranks[k], &tr->ranks[k]))
			return false;
	return true;
}

void chakra_exec_destroy(struct chakra_exec *x)
{
	for (int k = 0; x->ranks && k < x->tr->nloaded; k++) {
		struct cx_rank *rk = &x->ranks[k];
		free(rk->nodes);
		free(rk->msgs);
		free(rk->dep_first);
		free(rk->dep_list);
		hmap_destroy(&rk->by_index);
	}
	free(x->ranks);
	free(x->by_node);
	hmap_destroy(&x->rank_by_ip);
}

/* ---- running ------------------------------------------------------------------------ */

static void node_start(void *arg, ps_t now);

static void note_via(struct cx_node *n, int rank, int64_t node)
{
	n->via_rank = rank;
	n->via_node = node;
}

/* A node has finished: its dependents whose every dependency has finished
 * start now (as events, so that long chains of instant nodes do not
 * recurse). */
static void node_finish(struct cx_node *n, ps_t now)
{
	struct cx_rank *rk = n->rk;

	n->state = CX_DONE;
	n->end = now;
	rk->nodes_done++;
	rk->x->nodes_done++;
	if (now > rk->finish)
		rk->finish = now;
	for (uint32_t e = rk->dep_first[n->i]; e < rk->dep_first[n->i + 1]; e++) {
		struct cx_node *d = &rk->nodes[rk->dep_list[e]];
		if (--d->deps_left == 0) {
			note_via(d, rk->r->rank, n->i);
			rk->x->pending++;
			events_schedule(rk->x->q, now, node_start, d);
		}
	}
}

static void finish_event(void *arg, ps_t now)
{
	((struct cx_node *)arg)->rk->x->pending--;
	node_finish(arg, now);
}

static void post(struct cx_rank *rk, uint32_t which, ps_t now)
{
	const struct chakra_msg *m = &rk->r->msgs[which];
	struct cx_msg *s = &rk->msgs[which];
	struct chakra_exec *x = rk->x;
	int peer_node = x->t->ranks[m->peer];

	s->begun = true;
	s->begin = now;
	x->posted++;
	/* The seed's Chakra workload: a new QP for every message. */
	if (!nic_post_message(x->nic_of(x->ctx, rk->node), x->t->nodes[peer_node].nic.ip, m->bytes,
			      m->index, now)) {
		s->failed = s->refused = true;
		x->sends_finished++;
	}
}

/* The messages of the node's current step (a SEND or RECV: its one
 * message): sends posted, receives that have arrived already counted as
 * done.  Steps with nothing left pass at once. */
static void run_steps(struct cx_node *n, ps_t now)
{
	struct cx_rank *rk = n->rk;
	const struct chakra_node *cn = &rk->r->nodes[n->i];
	uint32_t first = cn->first_msg, end = cn->first_msg + cn->nmsgs, k = first;

	while (n->step < (cn->type == CHAKRA_COLL ? cn->nsteps : 1)) {
		/* Messages are in step order: skip to this step's. */
		while (k < end && rk->r->msgs[k].step >= 0 &&
		       (uint32_t)rk->r->msgs[k].step < n->step)
			k++;
		n->pending = 0;
		for (; k < end &&
		       (rk->r->msgs[k].step < 0 || (uint32_t)rk->r->msgs[k].step == n->step);
		     k++) {
			struct cx_msg *s = &rk->msgs[k];
			if (rk->r->msgs[k].send) {
				post(rk, k, now);
				n->pending++; /* a refused one keeps the node waiting */
			} else {
				s->begun = true;
				s->begin = now;
				n->pending += !s->arrived;
			}
		}
		if (n->pending)
			return;
		n->step++;
	}
	node_finish(n, now);
}

static void node_start(void *arg, ps_t now)
{
	struct cx_node *n = arg;
	const struct chakra_node *cn = &n->rk->r->nodes[n->i];

	n->rk->x->pending--;
	n->state = CX_RUNNING;
	n->start = now;
	switch (cn->type) {
	case CHAKRA_COMP:
		n->rk->x->pending++;
		events_schedule(n->rk->x->q, now + cn->duration, finish_event, n);
		break;
	case CHAKRA_SEND:
	case CHAKRA_RECV:
	case CHAKRA_COLL:
		run_steps(n, now);
		break;
	default: /* METADATA, MEM_LOAD, MEM_STORE: no network time */
		node_finish(n, now);
		break;
	}
}

void chakra_exec_start(struct chakra_exec *x)
{
	for (int k = 0; k < x->tr->nloaded; k++)
		for (uint32_t i = 0; i < x->ranks[k].r->nnodes; i++)
			if (!x->ranks[k].nodes[i].deps_left) {
				x->pending++;
				events_schedule(x->q, 0, node_start, &x->ranks[k].nodes[i]);
			}
}

/* One message of a running node's current step has finished. */
static void msg_finished(struct cx_rank *rk, uint32_t which, ps_t now)
{
	const struct chakra_msg *m = &rk->r->msgs[which];
	struct cx_node *n = &rk->nodes[m->node];

	if (n->state != CX_RUNNING || (m->step >= 0 && (uint32_t)m->step != n->step) ||
	    !rk->msgs[which].begun)
		return;
	if (--n->pending == 0) {
		n->step++;
		run_steps(n, now);
	}
}

static int rank_of_ip(const struct chakra_exec *x, uint32_t ip)
{
	return (int)(uintptr_t)hmap_get(&x->rank_by_ip, ip) - 1;
}

/* The sending node of a message that arrived at rk, when its rank runs
 * here: the receive waited for it (critical path). */
static void via_sender(struct cx_rank *rk, uint32_t which)
{
	const struct chakra_msg *m = &rk->r->msgs[which];
	struct cx_node *n = &rk->nodes[m->node];
	const struct chakra_exec *x = rk->x;
	uint32_t s;

	/* A collective's own steps are inside the node: its path goes on
	 * through its dependencies. */
	if (x->tr->nloaded != x->tr->nranks || !rk->msgs[which].begun || m->step >= 0)
		return;
	if (find_msg(&x->ranks[m->peer], rk->r->rank, m->index, true, &s))
		note_via(n, m->peer, x->ranks[m->peer].r->msgs[s].node);
}

bool chakra_exec_completion(struct chakra_exec *x, int node, enum nic_completion what,
			    const struct nic_msg_info *i, ps_t now)
{
	struct cx_rank *rk = x->by_node[node];
	bool send = what != RECV_COMPLETE;
	int peer = rank_of_ip(x, send ? i->dst_ip : i->src_ip);
	uint32_t which;
	struct cx_msg *s;

	if (!rk || peer < 0 || !(s = find_msg(rk, peer, (uint32_t)i->msg_id, send, &which)))
		return false; /* not a message of the trace */
	switch (what) {
	case SEND_COMPLETE:
		s->send_complete = now;
		break;
	case RECV_COMPLETE:
		if (s->arrived)
			return true;
		s->arrived = true;
		s->end = now;
		s->verified = i->verified && i->bytes == rk->r->msgs[which].bytes;
		x->receives_done++;
		via_sender(rk, which);
		msg_finished(rk, which, now);
		break;
	case MSG_COMPLETE:
		s->done = true;
		s->end = now;
		s->retransmissions = i->retransmissions;
		x->sends_finished++;
		msg_finished(rk, which, now);
		break;
	}
	return true;
}

/* The send of message `index` from rank rk to rank peer fails. */
static bool fail_send(struct chakra_exec *x, struct cx_rank *rk, int peer,
		      const struct nic_msg_info *i, bool evicted)
{
	uint32_t which;
	struct cx_msg *s;

	if (!rk || peer < 0 || !(s = find_msg(rk, peer, (uint32_t)i->msg_id, true, &which)))
		return false;
	if (!s->failed && !s->done) {
		s->failed = true;
		s->evicted = evicted;
		s->retransmissions = i->retransmissions;
		x->sends_finished++;
	}
	return true;
}

/* A receive whose QP was evicted: finished, never arrived. */
static bool fail_receive(struct chakra_exec *x, struct cx_rank *rk, int peer,
			 const struct nic_msg_info *i)
{
	uint32_t which;
	struct cx_msg *r;

	if (!rk || peer < 0 || !(r = find_msg(rk, peer, (uint32_t)i->msg_id, false, &which)))
		return false;
	if (!r->failed && !r->arrived) {
		r->failed = r->evicted = true;
		x->receives_done++;
	}
	return true;
}

/* The sending QP's error state fails the send at `node`.  A receiving QP
 * evicted at `node` (i->why) fails the receive there, and the send too when
 * the sender's rank runs here (the simulation; `run` relays it to the
 * sending daemon, which calls this at the sender with i->why set). */
bool chakra_exec_failed(struct chakra_exec *x, int node, const struct nic_msg_info *i, ps_t now)
{
	int src;
	bool r;

	(void)now;
	if (!i->why)
		return fail_send(x, x->by_node[node], rank_of_ip(x, i->dst_ip), i, false);
	r = fail_receive(x, x->by_node[node], rank_of_ip(x, i->src_ip), i);
	src = topology_find_ip(x->t, i->src_ip);
	return (src >= 0 && fail_send(x, x->by_node[src], rank_of_ip(x, i->dst_ip), i, true)) || r;
}

bool chakra_exec_sends(const struct chakra_exec *x, int src, int dst, uint64_t index)
{
	struct cx_rank *rk = x->by_node[src];
	int peer = rank_of_ip(x, x->t->nodes[dst].ip);
	uint32_t which;

	return rk && peer >= 0 && index <= UINT32_MAX &&
	       find_msg(rk, peer, (uint32_t)index, true, &which);
}

bool chakra_exec_done(const struct chakra_exec *x)
{
	return x->nodes_done == x->nodes;
}

ps_t chakra_exec_end(const struct chakra_exec *x)
{
	ps_t end = 0;

	for (int k = 0; k < x->tr->nloaded; k++)
		if (x->ranks[k].finish > end)
			end = x->ranks[k].finish;
	return end;
}

bool chakra_exec_stalled(const struct chakra_exec *x)
{
	return !chakra_exec_done(x) && !x->pending && x->posted == x->sends_finished;
}

/* ---- records ---------------------------------------------------------------------- */

static void cell_time(struct csv *c, bool known, ps_t t)
{
	if (known)
		csv_u64(c, t);
	else
		csv_str(c, "");
}

static void node_row(struct csv *c, const struct cx_rank *rk, uint32_t i)
{
	const struct chakra_node *cn = &rk->r->nodes[i];
	const struct cx_node *n = &rk->nodes[i];
	bool p2p = cn->type == CHAKRA_SEND || cn->type == CHAKRA_RECV;

	csv_u64(c, (uint64_t)rk->r->rank);
	csv_u64(c, cn->id);
	csv_str(c, cn->name);
	csv_str(c,
		cn->type == CHAKRA_COLL ? chakra_coll_name(cn->coll) : chakra_type_name(cn->type));
	cell_time(c, n->state != CX_WAITING, n->start);
	cell_time(c, n->state == CX_DONE, n->end);
	if (p2p)
		csv_u64(c, rk->r->msgs[cn->first_msg].id);
	else
		csv_str(c, "");
	csv_str(c, "");
	if (p2p)
		csv_u64(c, (uint64_t)cn->peer);
	else
		csv_str(c, "");
	csv_u64(c, cn->bytes);
	csv_end(c);
}

/* A collective's message: the node's id and name, its direction. */
static void step_row(struct csv *c, const struct cx_rank *rk, uint32_t k)
{
	const struct chakra_msg *m = &rk->r->msgs[k];
	const struct cx_msg *s = &rk->msgs[k];

	csv_u64(c, (uint64_t)rk->r->rank);
	csv_u64(c, rk->r->nodes[m->node].id);
	csv_str(c, rk->r->nodes[m->node].name);
	csv_str(c, m->send ? "COMM_SEND" : "COMM_RECV");
	cell_time(c, s->begun, s->begin);
	cell_time(c, s->begun && (m->send ? s->done : s->arrived),
		  s->end > s->begin ? s->end : s->begin);
	csv_u64(c, m->id);
	csv_u64(c, (uint64_t)m->step);
	csv_u64(c, (uint64_t)m->peer);
	csv_u64(c, m->bytes);
	csv_end(c);
}

void chakra_exec_write_nodes(const struct chakra_exec *x, struct csv *c)
{
	for (int k = 0; k < x->tr->nloaded; k++) {
		const struct cx_rank *rk = &x->ranks[k];
		for (uint32_t i = 0; i < rk->r->nnodes; i++) {
			const struct chakra_node *cn = &rk->r->nodes[i];
			node_row(c, rk, i);
			for (uint32_t m = 0; cn->type == CHAKRA_COLL && m < cn->nmsgs; m++)
				step_row(c, rk, cn->first_msg + m);
		}
	}
}

/* messages.csv's `failure`: the sender's, else the receiver's. */
static enum driver_failure failure(const struct cx_msg *s, const struct cx_msg *r)
{
	if (s && s->failed)
		return s->refused   ? DRIVER_FAILURE_REFUSED
		       : s->evicted ? DRIVER_FAILURE_QP_EVICTED
				    : DRIVER_FAILURE_QP_ERROR;
	return r && r->evicted ? DRIVER_FAILURE_QP_EVICTED : DRIVER_FAILURE_NONE;
}

/* One messages.csv row: the sender's columns from s (or empty), the
 * receiver's from r (or empty). */
static void message_row(struct csv *c, const struct chakra_exec *x, const struct chakra_msg *m,
			int src, int dst, const struct cx_msg *s, const struct cx_msg *r)
{
	const struct topology *t = x->t;
	bool done = s && s->done;

	csv_u64(c, m->id);
	csv_str(c, t->nodes[t->ranks[src]].name);
	csv_str(c, t->nodes[t->ranks[dst]].name);
	csv_u64(c, m->bytes);
	cell_time(c, s && s->begun && !s->refused, s ? s->begin : 0);
	cell_time(c, s && s->send_complete, s ? s->send_complete : 0);
	cell_time(c, r && r->arrived, r ? r->end : 0);
	cell_time(c, done, done ? s->end : 0);
	cell_time(c, done, done ? s->end - s->begin : 0);
	if (s)
		csv_u64(c, s->retransmissions);
	else
		csv_str(c, "");
	if (s && r)
		csv_bool(c, done && r->arrived && r->verified);
	else if (r)
		csv_bool(c, r->arrived && r->verified);
	else
		csv_str(c, "");
	csv_str(c, driver_source_name(DRIVER_SOURCE_CHAKRA));
	csv_str(c, driver_failure_name(failure(s, r)));
	csv_end(c);
}

/* The receiving end of rk's message `which`, when its rank runs here. */
static const struct cx_msg *far_end(const struct chakra_exec *x, const struct cx_rank *rk,
				    uint32_t which)
{
	const struct chakra_msg *m = &rk->r->msgs[which];
	uint32_t k;

	if (x->tr->nloaded != x->tr->nranks)
		return NULL;
	return find_msg(&x->ranks[m->peer], rk->r->rank, m->index, !m->send, &k);
}

/* In id order (source, destination, index): the launcher of `run` sorts
 * the daemons' rows the same way. */
void chakra_exec_write_messages(const struct chakra_exec *x, struct csv *c)
{
	bool all = x->tr->nloaded == x->tr->nranks;

	for (int k = 0; k < x->tr->nloaded; k++) {
		const struct cx_rank *rk = &x->ranks[k];
		for (uint32_t i = 0; i < rk->r->nmsgs; i++) {
			const struct chakra_msg *m = rk->r->order[i];
			uint32_t w = (uint32_t)(m - rk->r->msgs);
			if (m->send)
				message_row(c, x, m, rk->r->rank, m->peer, &rk->msgs[w],
					    far_end(x, rk, w));
			else if (!all)
				message_row(c, x, m, m->peer, rk->r->rank, NULL, &rk->msgs[w]);
		}
	}
}

/* ---- reports ---------------------------------------------------------------------- */

static void waiting_line(const struct cx_rank *rk, const struct cx_node *n, FILE *out)
{
	const struct chakra_node *cn = &rk->r->nodes[n->i];

	fprintf(out, "chakra: rank %d %s: node %" PRIu64 " (%s, %s) ", rk->r->rank, rk->r->path,
		cn->id, cn->name,
		cn->type == CHAKRA_COLL ? chakra_coll_name(cn->coll) : chakra_type_name(cn->type));
	for (uint32_t k = cn->first_msg; k < cn->first_msg + cn->nmsgs; k++) {
		const struct chakra_msg *m = &rk->r->msgs[k];
		const struct cx_msg *s = &rk->msgs[k];
		if (!s->begun || (m->send ? s->done : s->arrived))
			continue;
		fprintf(out, "waits for message %" PRIu64 " %s rank %d (%s)\n", m->id,
			m->send ? "to" : "from", m->peer,
			s->evicted   ? "its receiving QP was evicted (MaxQps)"
			: !m->send   ? "not arrived"
			: s->refused ? "the NIC refused it"
			: s->failed  ? "its QP entered the error state"
				     : "not acknowledged");
		return;
	}
	fprintf(out, "has started and not finished\n");
}

void chakra_exec_report(const struct chakra_exec *x, FILE *out)
{
	for (int k = 0; k < x->tr->nloaded; k++) {
		const struct cx_rank *rk = &x->ranks[k];
		uint32_t blocked = 0;
		for (uint32_t i = 0; i < rk->r->nnodes; i++) {
			if (rk->nodes[i].state == CX_RUNNING)
				waiting_line(rk, &rk->nodes[i], out);
			blocked += rk->nodes[i].state == CX_WAITING;
		}
		if (blocked)
			fprintf(out, "chakra: rank %d %s: %u more nodes wait for those\n",
				rk->r->rank, rk->r->path, blocked);
	}
}

/* The critical path: back from the node that finished last, through what
 * each node waited for last (a dependency, or a message's sender). */
static void critical_path(const struct chakra_exec *x, FILE *out)
{
	const struct cx_rank *rk = NULL;
	int64_t i = -1;
	unsigned count = 0;
	char t[32];

	for (int k = 0; k < x->tr->nloaded; k++)
		for (uint32_t j = 0; j < x->ranks[k].r->nnodes; j++) {
			const struct cx_node *n = &x->ranks[k].nodes[j];
			if (n->state == CX_DONE && (!rk || n->end > rk->nodes[i].end)) {
				rk = &x->ranks[k];
				i = j;
			}
		}
	if (!rk)
		return;
	fprintf(out, "critical path (%s, last first):", time_format(rk->nodes[i].end, t, 32));
	while (i >= 0 && count++ < 12) {
		const struct cx_node *n = &rk->nodes[i];
		const struct chakra_node *cn = &rk->r->nodes[i];
		fprintf(out, " r%d:%" PRIu64 "(%s %s)", rk->r->rank, cn->id, cn->name,
			time_format(n->end - n->start, t, 32));
		if (n->via_node >= 0 && n->via_rank != rk->r->rank)
			rk = &x->ranks[n->via_rank];
		i = n->via_node;
	}
	fprintf(out, "%s\n", i >= 0 ? " ..." : "");
}

void chakra_exec_summary(const struct chakra_exec *x, FILE *out)
{
	char t[32];

	fprintf(out, "chakra: %llu of %llu nodes finished; rank finish:",
		(unsigned long long)x->nodes_done, (unsigned long long)x->nodes);
	for (int k = 0; k < x->tr->nloaded; k++)
		fprintf(out, " %d=%s", x->ranks[k].r->rank, time_format(x->ranks[k].finish, t, 32));
	fputc('\n', out);
	if (x->tr->nloaded == x->tr->nranks)
		critical_path(x, out);
}

void chakra_exec_count(const struct chakra_exec *x, uint64_t *messages, uint64_t *completed,
		       uint64_t *failed, uint64_t *unverified, ps_t *fct, size_t *nfct)
{
	*messages = *completed = *failed = *unverified = 0;
	*nfct = 0;
	for (int k = 0; k < x->tr->nloaded; k++) {
		const struct cx_rank *rk = &x->ranks[k];
		for (uint32_t i = 0; i < rk->r->nmsgs; i++) {
			const struct cx_msg *s = &rk->msgs[i], *r;
			if (!rk->r->msgs[i].send)
				continue;
			r = far_end(x, rk, i);
			(*messages)++;
			*completed += s->done;
			*failed += s->failed;
			*unverified += s->done && !(r && r->arrived && r->verified);
			if (s->done && fct)
				fct[(*nfct)++] = s->end - s->begin;
		}
	}
}
