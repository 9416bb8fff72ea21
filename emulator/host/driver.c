/* emulator/host/driver.c — the workload driver (driver.h). */
#include "driver.h"

#include <stdlib.h>
#include <string.h>

const char DRIVER_MESSAGES_HEADER[] = "id,src,dst,bytes,posted_ps,send_complete_ps,"
				      "recv_complete_ps,complete_ps,fct_ps,retransmissions,"
				      "verified,source,failure";

const char *driver_source_name(enum driver_source s)
{
	static const char *const names[] = {"workload", "chakra", "ctl", "external", ""};

	return (unsigned)s < sizeof(names) / sizeof(names[0]) ? names[s] : "";
}

const char *driver_failure_name(enum driver_failure f)
{
	static const char *const names[DRIVER_FAILURE_COUNT] = {"", "refused", "qp_error",
								"qp_evicted"};

	return (unsigned)f < DRIVER_FAILURE_COUNT ? names[f] : "";
}

bool driver_failure_parse(const char *s, enum driver_failure *f)
{
	for (int i = DRIVER_FAILURE_NONE + 1; i < DRIVER_FAILURE_COUNT; i++)
		if (!strcmp(s, driver_failure_name(i))) {
			*f = i;
			return true;
		}
	return false;
}

const char *driver_why(enum driver_failure f, bool posted, bool sent, bool done, bool verified)
{
	static const char *const failed[DRIVER_FAILURE_COUNT] = {
	    NULL, "the NIC refused it (id, size or resources)", "its QP entered the error state",
	    "its receiving QP was evicted (MaxQps)"};

	if ((unsigned)f < DRIVER_FAILURE_COUNT && failed[f])
		return failed[f];
	if (!posted)
		return "never posted: its dependencies did not complete";
	if (!done)
		return !sent ? "not every packet was sent" : "no cumulative ACK covered it";
	if (!verified)
		return "completed, but its bytes were not verified at the receiver";
	return NULL;
}

static size_t nmsgs(const struct driver *d)
{
	return d->w->count + d->nextra;
}

/* Message i: the workload's first, then the others. */
static struct driver_msg *msg_at(const struct driver *d, size_t i)
{
	return i < d->w->count ? &d->msgs[i] : d->extra[i - d->w->count];
}

static bool sends(const struct driver *d, const struct driver_msg *m)
{
	return d->node < 0 || m->w->src == d->node;
}

static bool receives(const struct driver *d, const struct driver_msg *m)
{
	return d->node < 0 || m->w->dst == d->node;
}

static bool add_dependent(struct driver_msg *dep, long i)
{
	long *v = realloc(dep->dependents, (dep->ndependents + 1) * sizeof(*v));

	if (!v)
		return false;
	dep->dependents = v;
	v[dep->ndependents++] = i;
	return true;
}

bool driver_init(struct driver *d, const struct topology *t, const struct workload *w,
		 struct events *q, int node, struct nic *(*nic_of)(void *ctx, int node), void *ctx)
{
	memset(d, 0, sizeof(*d));
	d->t = t;
	d->w = w;
	d->q = q;
	d->node = node;
	d->nic_of = nic_of;
	d->ctx = ctx;
	hmap_init(&d->by_id);
	hmap_init(&d->extra_by_key);
	d->msgs = calloc(w->count ? w->count : 1, sizeof(*d->msgs));
	if (!d->msgs)
		return false;
	for (size_t i = 0; i < w->count; i++) {
		struct driver_msg *m = &d->msgs[i];
		m->d = d;
		m->w = &w->msgs[i];
		m->deps_left = m->w->nafter;
		/* Out of memory here would leave an `after` unresolved. */
		if (!hmap_put(&d->by_id, m->w->id, m))
			return false;
		d->sends += sends(d, m);
		d->receives += receives(d, m);
	}
	for (size_t i = 0; i < w->count; i++)
		for (int k = 0; k < w->msgs[i].nafter; k++)
			if (!add_dependent(hmap_get(&d->by_id, w->msgs[i].after[k]), (long)i))
				return false;
	return true;
}

void driver_destroy(struct driver *d)
{
	for (size_t i = 0; d->msgs && i < d->w->count; i++)
		free(d->msgs[i].dependents);
	for (size_t i = 0; i < d->nextra; i++)
		free(d->extra[i]);
	free(d->extra);
	free(d->msgs);
	hmap_destroy(&d->by_id);
	hmap_destroy(&d->extra_by_key);
}

/* A message this driver posts has finished, completed or failed.  The
 * last one stops the simulation's run of events (events_run_until_stop)
 * after the event it finished in, where driver_done turns true. */
static void send_finished(struct driver *d)
{
	if (++d->sends_finished == d->sends)
		events_stop(d->q);
}

static void post(void *arg, ps_t now)
{
	struct driver_msg *m = arg;
	struct driver *d = m->d;

	m->is_posted = true;
	m->posted = now;
	if (!nic_post_message(d->nic_of(d->ctx, m->w->src), d->t->nodes[m->w->dst].ip, m->w->bytes,
			      m->w->id, now)) {
		m->failed = true;
		m->failure = DRIVER_FAILURE_REFUSED;
		send_finished(d);
	}
}

static void schedule_post(struct driver *d, struct driver_msg *m, ps_t now)
{
	events_schedule(d->q, m->w->at > now ? m->w->at : now, post, m);
}

void driver_start(struct driver *d)
{
	for (size_t i = 0; i < d->w->count; i++)
		if (sends(d, &d->msgs[i]) && !d->msgs[i].deps_left)
			schedule_post(d, &d->msgs[i], 0);
}

/* A message from elsewhere is named by its sender and its id. */
static uint64_t extra_key(int src, uint64_t id)
{
	return (uint64_t)(uint32_t)src << 32 | (id & 0xFFFFFFFF);
}

bool driver_id_taken(const struct driver *d, int src, uint64_t id)
{
	return hmap_get(&d->by_id, id) || hmap_get(&d->extra_by_key, extra_key(src, id));
}

/* A message from elsewhere, known by (src, id) from now on. */
static struct driver_msg *track(struct driver *d, enum driver_source source, uint64_t id, int src,
				int dst, uint64_t bytes)
{
	struct driver_msg **v, *m;

	if (id > WIRE_MAX_MSG_INDEX || hmap_get(&d->extra_by_key, extra_key(src, id)) ||
	    !(m = calloc(1, sizeof(*m))))
		return NULL;
	v = realloc(d->extra, (d->nextra + 1) * sizeof(*v));
	if (!v || !hmap_put(&d->extra_by_key, extra_key(src, id), m)) {
		d->extra = v ? v : d->extra;
		free(m);
		return NULL;
	}
	d->extra = v;
	d->extra[d->nextra++] = m;
	m->d = d;
	m->source = source;
	m->own = (struct workload_msg){.id = id, .src = src, .dst = dst, .bytes = bytes};
	m->w = &m->own;
	return m;
}

struct driver_msg *driver_post(struct driver *d, enum driver_source source, uint64_t id, int src,
			       int dst, uint64_t bytes, ps_t at)
{
	struct driver_msg *m;

	if (driver_id_taken(d, src, id) || !(m = track(d, source, id, src, dst, bytes)))
		return NULL;
	m->own.at = at;
	d->sends += sends(d, m);
	d->receives += receives(d, m);
	schedule_post(d, m, at);
	return m;
}

/* A message this NIC receives that nobody here posted: from an external
 * endpoint, or from a daemon's `ctl post` (that daemon's row names it). */
static struct driver_msg *track_received(struct driver *d, const struct nic_msg_info *i)
{
	int src = topology_find_ip(d->t, i->src_ip), dst = topology_find_ip(d->t, i->dst_ip);
	struct driver_msg *m;

	if (src < 0 || dst < 0)
		return NULL;
	m = track(d,
		  d->t->nodes[src].kind == NODE_EXTERNAL ? DRIVER_SOURCE_EXTERNAL
							 : DRIVER_SOURCE_UNKNOWN,
		  i->msg_id, src, dst, i->bytes);
	if (m)
		d->receives++;
	return m;
}

/* docs/topology.md, Workload file: `after` waits for MSG_COMPLETE of the messages the posting
 * node sends and RECV_COMPLETE of those it receives. */
static void release(struct driver *d, struct driver_msg *m, int node, ps_t now)
{
	for (int i = 0; i < m->ndependents; i++) {
		struct driver_msg *x = &d->msgs[m->dependents[i]];
		if (x->w->src == node && sends(d, x) && --x->deps_left == 0)
			schedule_post(d, x, now);
	}
}

/* The workload message a completion names: the message index alone would
 * let any frame claim one (an external endpoint, a forged source address:
 * docs/protocol.md §2), so its endpoints, and its size where known, must be
 * the message's too. */
static bool names(const struct driver *d, const struct driver_msg *m, const struct nic_msg_info *i,
		  bool sized)
{
	return m && i->src_ip == d->t->nodes[m->w->src].ip &&
	       i->dst_ip == d->t->nodes[m->w->dst].ip && (!sized || i->bytes == m->w->bytes);
}

static struct driver_msg *find(const struct driver *d, const struct nic_msg_info *i, bool sized)
{
	struct driver_msg *m = hmap_get(&d->by_id, i->msg_id);
	int src;

	if (names(d, m, i, sized))
		return m;
	if (!d->nextra || (src = topology_find_ip(d->t, i->src_ip)) < 0)
		return NULL;
	m = hmap_get(&d->extra_by_key, extra_key(src, i->msg_id));
	return names(d, m, i, sized) ? m : NULL;
}

void driver_completion(struct driver *d, enum nic_completion what, const struct nic_msg_info *i,
		       ps_t now)
{
	struct driver_msg *m = find(d, i, true);

	if (!m && what == RECV_COMPLETE)
		m = track_received(d, i);
	if (!m)
		return;
	switch (what) {
	case SEND_COMPLETE:
		m->sent = true;
		m->send_complete = now;
		break;
	case RECV_COMPLETE:
		if (m->received)
			return;
		m->received = true;
		m->recv_complete = now;
		m->verified = i->verified;
		/* An evicted receive counted as finished already (driver_failed). */
		d->receives_done += m->failure != DRIVER_FAILURE_QP_EVICTED;
		release(d, m, m->w->dst, now);
		break;
	case MSG_COMPLETE:
		if (m->failed) /* reported failed by its receiver already */
			return;
		m->done = true;
		m->complete = now;
		m->retransmissions = i->retransmissions;
		send_finished(d);
		release(d, m, m->w->src, now);
		break;
	}
}

/* A message fails once; its sender's side then counts it finished. */
static void fail_sent(struct driver *d, struct driver_msg *m, enum driver_failure f)
{
	m->failure = f;
	m->failed = true;
	send_finished(d);
}

void driver_failed(struct driver *d, const struct nic_msg_info *i, ps_t now)
{
	struct driver_msg *m = find(d, i, false);

	(void)now;
	if (!m || m->failed || m->done)
		return;
	if (!i->why) { /* the sending side: its QP entered the error state */
		m->retransmissions = i->retransmissions;
		fail_sent(d, m, DRIVER_FAILURE_QP_ERROR);
		return;
	}
	/* The receiving side: its QP was evicted.  The receive is finished
	 * (it never completes); the sender learns it here in `sim`, and from
	 * the launcher (driver_fail_sent) in `run`. */
	if (m->failure == DRIVER_FAILURE_QP_EVICTED)
		return;
	m->failure = DRIVER_FAILURE_QP_EVICTED;
	if (receives(d, m) && !m->received)
		d->receives_done++;
	if (sends(d, m))
		fail_sent(d, m, DRIVER_FAILURE_QP_EVICTED);
}

bool driver_fail_sent(struct driver *d, int dst, uint64_t id, enum driver_failure f)
{
	const struct topo_node *me = &d->t->nodes[d->node];
	struct nic_msg_info i = {.msg_id = id, .src_ip = me->ip, .dst_ip = d->t->nodes[dst].ip};
	struct driver_msg *m = d->node >= 0 ? find(d, &i, false) : NULL;

	if (!m || !sends(d, m))
		return false;
	if (!m->failed && !m->done)
		fail_sent(d, m, f);
	return true;
}

void driver_open(void *ctx, const struct nic_msg_info *i)
{
	struct driver *d = ctx;
	struct driver_msg *m = find(d, i, false);

	if (m && !m->done && (!m->failed || m->failure == DRIVER_FAILURE_QP_EVICTED))
		m->retransmissions = i->retransmissions;
}

bool driver_done(const struct driver *d)
{
	return d->sends_finished == d->sends;
}

static void cell_time(struct csv *c, bool known, ps_t t)
{
	if (known)
		csv_u64(c, t);
	else
		csv_str(c, "");
}

void driver_write_messages(const struct driver *d, struct csv *c)
{
	for (size_t i = 0; i < nmsgs(d); i++) {
		const struct driver_msg *m = msg_at(d, i);
		bool snd = sends(d, m), rcv = receives(d, m);
		if (!snd && !rcv)
			continue;
		csv_u64(c, m->w->id);
		csv_str(c, d->t->nodes[m->w->src].name);
		csv_str(c, d->t->nodes[m->w->dst].name);
		csv_u64(c, m->w->bytes);
		cell_time(c, snd && m->is_posted, m->posted);
		cell_time(c, snd && m->sent, m->send_complete);
		cell_time(c, rcv && m->received, m->recv_complete);
		cell_time(c, snd && m->done, m->complete);
		cell_time(c, snd && m->done, m->complete - m->posted);
		if (snd)
			csv_u64(c, m->retransmissions);
		else
			csv_str(c, "");
		/* Verified: completed, and every byte accounted for at the
		 * receiver; a daemon that only receives says what it saw. */
		if (snd && rcv)
			csv_bool(c, m->done && m->received && m->verified);
		else if (rcv)
			csv_bool(c, m->received && m->verified);
		else
			csv_str(c, "");
		csv_str(c, driver_source_name(m->source));
		csv_str(c, driver_failure_name(m->failure));
		csv_end(c);
	}
}

void driver_report(const struct driver *d, FILE *out)
{
	for (size_t i = 0; i < nmsgs(d); i++) {
		const struct driver_msg *m = msg_at(d, i);
		const char *why;
		if (!sends(d, m))
			continue;
		/* A daemon that only sends cannot know the receiver's check. */
		why = driver_why(m->failure, m->is_posted, m->sent, m->done,
				 !receives(d, m) || (m->received && m->verified));
		if (why)
			fprintf(out, "message %llu (%s to %s, %llu bytes): %s\n",
				(unsigned long long)m->w->id, d->t->nodes[m->w->src].name,
				d->t->nodes[m->w->dst].name, (unsigned long long)m->w->bytes, why);
	}
}
