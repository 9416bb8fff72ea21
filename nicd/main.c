/* nicd/main.c — the NIC daemon (docs/architecture.md, Daemons): one MRC NIC
 * engine on one real port, in scaled virtual time, driven by its share of
 * the workload (emulator/host/driver.h with node = its own index) and by the
 * control socket.  Frames leave built byte for byte with the payload
 * pattern and the virtual-arrival trailer; frames that arrive are parsed
 * at their stamp and their payload checked against the pattern by the
 * engine (docs/protocol.md §1). */
#include <stdlib.h>
#include <string.h>

#include "chakra/chakra.h"
#include "core/workload.h"
#include "daemon/daemon.h"
#include "host/chakra_exec.h"
#include "host/driver.h"
#include "nic.h"

static const char usage[] =
    "Usage: nicd --topology FILE --node NAME [--port IF]... [--ctl SOCK] [--out DIR]\n"
    "            [--capture] [--sample-interval TIME]\n"
    "\n"
    "The MRC NIC daemon: runs NIC NAME of the topology on a real interface, in\n"
    "scaled virtual time, as `mrcemu run` starts it inside the node's network\n"
    "namespace.  It waits on its control socket for `start EPOCH_NS SCALE`, then\n"
    "posts its messages of the workload from virtual time 0.\n"
    "\n"
    "Options:\n"
    "  -t, --topology FILE  the topology file (docs/topology.md)\n"
    "  -n, --node NAME      which [nic NAME] this daemon is\n"
    "  -p, --port IF        the interface of port 0 (default p0, or tap:p0 when the\n"
    "                       link says `ports = tap ...`); tap:NAME is a TAP device\n"
    "  -C, --ctl SOCK       control socket (default /run/mrcemu/<emulation>/NAME.ctl)\n"
    "  -o, --out DIR        records folder (default out/<emulation>)\n"
    "  -c, --capture        DIR/pcap/NAME-0.pcap, virtual-time nanosecond stamps\n"
    "  -S, --sample-interval TIME\n"
    "                       DIR/samples-NAME.csv every TIME of virtual time (the\n"
    "                       launcher gives it for `mrcemu run --report`)\n"
    "  -h, --help           this text\n"
    "\n"
    "Control commands, one a line: status, start EPOCH_NS SCALE, stats,\n"
    "post DST BYTES, port 0 down|up, failures FROM, fail DST ID REASON, stop.\n"
    "\n"
    "Records in DIR: messages-NAME.csv, mrc-transport-stats-NAME.csv, lateness-NAME.csv,\n"
    "and with their attributes mrc-events-NAME.csv, mrc-monitor-NAME.csv, mrc-cc-NAME.csv.\n"
    "\n"
    "Exit status: 0 after stop, SIGINT or SIGTERM; 1 a port or file failed; 2 bad\n"
    "arguments or topology; 3 more causality violations than MaxViolations.\n";

struct nicd {
	struct daemon d; /* first: build() is given &d */
	struct nic *nic;
	struct workload w;
	struct driver driver;
	bool driver_ok;
	bool chakra; /* [workload] chakra: its rank's graph drives the NIC */
	struct chakra_trace trace;
	struct chakra_exec cx;
	struct csv *chakra_nodes; /* chakra-NAME.csv */
	struct nic_records rec;
	struct csv *messages;
	uint64_t next_id;    /* for `post`: post_id */
	ps_t last_done;	     /* the last completion or failure here (T_end) */
	struct rx_failure {  /* receives failed here (their QPs evicted), */
		int src;     /* for the launcher to tell their senders: */
		uint64_t id; /* `failures` */
	} * rx_failed;
	size_t nrx_failed;
	size_t rx_acked; /* the launcher has told the senders of these */
};

/* ---- the engine's host --------------------------------------------------- */

static void transmit(void *ctx, struct pkt *p, ps_t arrival)
{
	daemon_transmit(&((struct nicd *)ctx)->d, 0, p, arrival);
}

/* Every message, whatever posted it, goes through the driver, so that
 * messages.csv has a row for each (docs/records.md). */
static void completion(void *ctx, enum nic_completion what, const struct nic_msg_info *m, ps_t now)
{
	struct nicd *n = ctx;

	if (what != SEND_COMPLETE)
		n->last_done = now;
	/* A ctl post or an external sender's message is the driver's, even
	 * when a Chakra trace drives the NIC (a post never takes a trace's
	 * index: post_id). */
	if (!n->chakra || !chakra_exec_completion(&n->cx, n->d.node, what, m, now))
		driver_completion(&n->driver, what, m, now);
}

/* A receive that failed here (m->why: its QP was evicted, §12 rule 11) is
 * kept for `failures`: in `sim` the one driver fails the message at its
 * sender too; in `run` the launcher relays it to the sending daemon
 * (`fail`).  Out of memory, the sender is not told and it shows as an
 * unfinished message, never as a completed one. */
static void rx_failure_keep(struct nicd *n, const struct nic_msg_info *m)
{
	int src = topology_find_ip(n->d.t, m->src_ip);
	struct rx_failure *v;

	if (src < 0 || n->d.t->nodes[src].kind != NODE_NIC)
		return; /* an external sender: no daemon to tell */
	v = realloc(n->rx_failed, (n->nrx_failed + 1) * sizeof(*v));
	if (!v) {
		fprintf(stderr,
			"nicd %s: out of memory: %s's message %llu will not be told "
			"that its receiving QP was evicted\n",
			n->d.me->name, n->d.t->nodes[src].name, (unsigned long long)m->msg_id);
		return;
	}
	n->rx_failed = v;
	v[n->nrx_failed++] = (struct rx_failure){.src = src, .id = m->msg_id};
}

static void failed(void *ctx, const struct nic_msg_info *m, ps_t now)
{
	struct nicd *n = ctx;

	n->last_done = now;
	if (m->why)
		rx_failure_keep(n, m);
	if (!n->chakra || !chakra_exec_failed(&n->cx, n->d.node, m, now))
		driver_failed(&n->driver, m, now);
}

static struct nic *nic_of(void *ctx, int node)
{
	(void)node;
	return ((struct nicd *)ctx)->nic;
}

/* ---- what the daemon asks of its engine ---------------------------------------- */

static void receive(void *ctx, int port, struct pkt *p, ps_t now)
{
	(void)port;
	nic_receive(((struct nicd *)ctx)->nic, p, now);
}

static void receive_frame(void *ctx, int port, const uint8_t *frame, size_t len, ps_t now)
{
	(void)port;
	nic_receive_frame(((struct nicd *)ctx)->nic, frame, len, now);
}

static void start(void *ctx)
{
	struct nicd *n = ctx;

	if (n->chakra)
		chakra_exec_start(&n->cx);
	else
		driver_start(&n->driver);
}

static void progress(void *ctx, struct daemon_progress *pr)
{
	struct nicd *n = ctx;

	/* Whatever drives the NIC: the launcher must relay these, or this
	 * daemon holds its promises for good (tx_floor). */
	pr->rx_failed = n->nrx_failed;
	/* A Chakra rank is done when its every node is: those are its
	 * "sends"; its receives are those of its nodes.  The driver holds
	 * only what `post` added then. */
	if (n->chakra) {
		pr->sends = n->cx.nodes + n->driver.sends;
		pr->sends_finished = n->cx.nodes_done + n->driver.sends_finished;
		pr->receives = n->cx.receives;
		pr->receives_done = n->cx.receives_done;
		return;
	}
	pr->sends = n->driver.sends;
	pr->sends_finished = n->driver.sends_finished;
	pr->receives = n->driver.receives;
	pr->receives_done = n->driver.receives_done;
	pr->last_done = n->last_done;
}

static void port_set_down(void *ctx, int port, bool down)
{
	(void)port;
	nic_port_set_down(((struct nicd *)ctx)->nic, down);
}

/* `stats`: every counter of the engine (nic_counter_at), then the daemon's. */
static bool stats(struct nicd *n, char *reply, size_t len)
{
	struct counter c;
	size_t used = 0;

	for (size_t i = 0; nic_counter_at(n->nic, i, &c); i++)
		if (!counter_append(reply, len, &used, c.name, c.value))
			return snprintf(reply, len, "reply too long"), false;
	if (!counter_append(reply, len, &used, "posts_refused", n->d.posts_refused))
		return snprintf(reply, len, "reply too long"), false;
	return true;
}

/* The message index of the next `post` to dst: the lowest that names no
 * other message this NIC sends, so that every id stays what it is in
 * `mrcemu sim` (a workload's ids are all of 1..NIC_MAX_MSG_ID) and the
 * receiver and the merged messages.csv tell the post by its sender and
 * source `ctl`.  Ids below the cursor are taken for good. */
static uint64_t post_id(struct nicd *n, int dst)
{
	uint64_t id = n->next_id;

	while (id <= NIC_MAX_MSG_ID &&
	       (driver_id_taken(&n->driver, n->d.node, id) ||
		(n->chakra && chakra_exec_sends(&n->cx, n->d.node, dst, id))))
		id++;
	return n->next_id = id;
}

/* `post DST BYTES`: a message at virtual now. */
static bool post(struct nicd *n, const struct daemon_cmd *c, char *reply, size_t len)
{
	const struct topology *t = n->d.t;
	int dst = topology_find(t, c->dst);
	ps_t now = daemon_cmd_time(&n->d);
	uint64_t id;

	if (n->d.state != DAEMON_RUNNING)
		return snprintf(reply, len, "post: not started"), false;
	if (dst < 0 || t->nodes[dst].kind != NODE_NIC || dst == n->d.node)
		return snprintf(reply, len, "post: '%s' is not another NIC of %s", c->dst, t->path),
		       false;
	if ((id = post_id(n, dst)) > NIC_MAX_MSG_ID)
		return snprintf(reply, len, "post: no message ids left (allowed: 1..%llu)",
				NIC_MAX_MSG_ID),
		       false;
	if (now < events_now(n->d.q))
		now = events_now(n->d.q);
	if (!driver_post(&n->driver, DRIVER_SOURCE_CTL, id, n->d.node, dst, c->bytes, now))
		return snprintf(reply, len, "post: out of memory"), false;
	snprintf(reply, len, "id=%llu", (unsigned long long)id);
	return true;
}

/* `failures FROM`: the receives failed here from the FROM-th on, as many
 * as the reply holds, each SRC:ID:REASON (docs/control.md); those before
 * FROM were told to their senders (tx_floor). */
static bool failures(struct nicd *n, uint64_t from, char *reply, size_t len)
{
	int used = snprintf(reply, len, "n=%zu", n->nrx_failed);

	/* Asking from FROM says those before it have reached their senders. */
	if (from > n->rx_acked)
		n->rx_acked = from < n->nrx_failed ? from : n->nrx_failed;

	for (uint64_t i = from; i < n->nrx_failed; i++) {
		const struct rx_failure *f = &n->rx_failed[i];
		char word[TOPO_NAME_MAX + 48];
		int w = snprintf(word, sizeof(word), " %s:%llu:%s", n->d.t->nodes[f->src].name,
				 (unsigned long long)f->id,
				 driver_failure_name(DRIVER_FAILURE_QP_EVICTED));
		if (used < 0 || (size_t)used + (size_t)w >= len)
			break;
		memcpy(reply + used, word, (size_t)w + 1);
		used += w;
	}
	return true;
}

/* `fail DST ID REASON`: the launcher relays that this NIC's message ID to
 * DST failed at its receiver.  The message ends failed as in `sim`; its
 * time is not a completion of this NIC's (last_done stays), so T_end is
 * sim's. */
static bool fail(struct nicd *n, const struct daemon_cmd *c, char *reply, size_t len)
{
	const struct topology *t = n->d.t;
	int dst = topology_find(t, c->dst);
	enum driver_failure f;
	struct nic_msg_info m;

	if (dst < 0 || t->nodes[dst].kind != NODE_NIC || dst == n->d.node)
		return snprintf(reply, len, "fail: '%s' is not another NIC of %s", c->dst, t->path),
		       false;
	if (!driver_failure_parse(c->reason, &f) || f != DRIVER_FAILURE_QP_EVICTED)
		return snprintf(reply, len, "fail: reason '%s' (allowed: %s)", c->reason,
				driver_failure_name(DRIVER_FAILURE_QP_EVICTED)),
		       false;
	m = (struct nic_msg_info){.msg_id = c->msg_id,
				  .src_ip = n->d.me->ip,
				  .dst_ip = t->nodes[dst].ip,
				  .why = "its receiving QP was evicted (MaxQps)"};
	if ((n->chakra && chakra_exec_failed(&n->cx, n->d.node, &m, events_now(n->d.q))) ||
	    driver_fail_sent(&n->driver, dst, c->msg_id, f))
		return true;
	return snprintf(reply, len, "fail: %s sends no message %llu to %s", n->d.me->name,
			(unsigned long long)c->msg_id, c->dst),
	       false;
}

static bool command(void *ctx, const struct daemon_cmd *c, char *reply, size_t len)
{
	struct nicd *n = ctx;

	if (c->kind == CMD_STATS)
		return stats(n, reply, len);
	if (c->kind == CMD_POST)
		return post(n, c, reply, len);
	if (c->kind == CMD_FAILURES)
		return failures(n, c->from, reply, len);
	if (c->kind == CMD_FAIL)
		return fail(n, c, reply, len);
	snprintf(reply, len, "nicd does not take this command");
	return false;
}

/* While a failed receive is not yet relayed to its sender (`failures`
 * acknowledges them), no new promise: the sender, which cannot learn of
 * the failure from the wire, must not run past what `sim` runs before it
 * ends the run (docs/promises.md, One end). */
static ps_t tx_floor(void *ctx, int port, ps_t from)
{
	struct nicd *n = ctx;

	(void)port;
	if (n->rx_acked < n->nrx_failed)
		return 0; /* below any promise sent: none is due */
	return nic_tx_floor(n->nic, from);
}

static void finish(void *ctx, ps_t now)
{
	struct nicd *n = ctx;

	nic_finish(n->nic, now, stderr);
	if (n->chakra && n->driver_ok) {
		if (!chakra_exec_done(&n->cx))
			chakra_exec_report(&n->cx, stderr);
		chakra_exec_write_nodes(&n->cx, n->chakra_nodes);
		chakra_exec_write_messages(&n->cx, n->messages);
		driver_write_messages(&n->driver, n->messages); /* `post`s */
	} else if (n->driver_ok) {
		nic_each_open(n->nic, driver_open, &n->driver);
		driver_report(&n->driver, stderr);
		driver_write_messages(&n->driver, n->messages);
	}
}

/* ---- building ---------------------------------------------------------------------- */

static bool open_records(struct nicd *n)
{
	const struct nic_attrs *a = &n->d.me->nic;
	struct daemon *d = &n->d;

	if (a->transport_stats &&
	    !(n->rec.stats = daemon_record(d, "mrc-transport-stats", nic_stats_header())))
		return false;
	if (a->event_logging &&
	    !(n->rec.events = daemon_record(d, "mrc-events", NIC_EVENTS_HEADER)))
		return false;
	if (a->monitor && !(n->rec.monitor = daemon_record(d, "mrc-monitor", NIC_MONITOR_HEADER)))
		return false;
	if (a->cc_trace && !(n->rec.cc = daemon_record(d, "mrc-cc", NIC_CC_HEADER)))
		return false;
	if (n->chakra && !(n->chakra_nodes = daemon_record(d, "chakra", CHAKRA_CSV_HEADER)))
		return false;
	return (n->messages = daemon_record(d, "messages", DRIVER_MESSAGES_HEADER)) != NULL;
}

static int build(struct daemon *d)
{
	struct nicd *n = (struct nicd *)d; /* d is its first member */
	const struct topology *t = d->t;
	char err[TOPO_ERR_MAX];

	if (t->workload[0] && !workload_load(t->workload, t, &n->w, err, sizeof(err))) {
		fprintf(stderr, "%s\n", err);
		return 2;
	}
	/* Its own rank's file is all a nicd reads (docs/chakra.md). */
	n->chakra = t->chakra[0] != 0;
	if (n->chakra &&
	    !chakra_load_rank(t, chakra_rank_of(t, d->node), &n->trace, err, sizeof(err))) {
		fprintf(stderr, "%s\n", err);
		return 2;
	}
	if (!open_records(n))
		return 1;
	d->ports[0].icrc = d->me->nic.icrc;
	struct nic_params prm = {
	    .name = d->me->name,
	    .attrs = &d->me->nic,
	    .link = &d->links[0],
	    .rate = topology_port_rate(t, d->node, 0),
	    .mac = d->me->mac,
	    .peer_mac = t->nodes[d->ports[0].peer].mac,
	    .seed = t->emu.seed,
	    .events = d->q,
	    .pool = &d->pool,
	    .host = {.ctx = n, .transmit = transmit, .completion = completion, .failed = failed},
	    .records = n->rec};
	n->nic = nic_new(&prm);
	n->driver_ok = n->nic && driver_init(&n->driver, t, &n->w, d->q, d->node, nic_of, n) &&
		       (!n->chakra || chakra_exec_init(&n->cx, t, &n->trace, d->q, nic_of, n));
	if (!n->driver_ok) {
		fprintf(stderr, "nicd %s: out of memory\n", d->me->name);
		return 1;
	}
	if (!daemon_samples_start(d, n->nic, NULL))
		return 1;
	n->next_id = 1;
	d->eng = (struct daemon_engine){.ctx = n,
					.receive = receive,
					.receive_frame = receive_frame,
					.start = start,
					.progress = progress,
					.command = command,
					.port_set_down = port_set_down,
					.finish = finish,
					.tx_floor = tx_floor};
	return 0;
}

static void nicd_free(struct nicd *n)
{
	nic_free(n->nic);
	if (n->driver_ok)
		driver_destroy(&n->driver);
	if (n->chakra) {
		chakra_exec_destroy(&n->cx);
		chakra_free(&n->trace);
	}
	workload_free(&n->w);
	daemon_destroy(&n->d);
	free(n->rx_failed);
	free(n);
}

int main(int argc, char **argv)
{
	struct daemon_args a;
	struct nicd *n;
	int rc = daemon_parse_args(&a, "nicd", usage, argc, argv, stdout, stderr);

	if (rc)
		return rc == 1 ? 0 : 2;
	if (!(n = calloc(1, sizeof(*n)))) {
		fprintf(stderr, "nicd: out of memory\n");
		return 1;
	}
	rc = daemon_serve(&n->d, "nicd", &a, NODE_NIC, build);
	nicd_free(n);
	return rc;
}
