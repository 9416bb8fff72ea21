/* emulator/daemon/daemon_setup.c — a daemon's command line, and its setup from
 * the topology: the node, its ports and links, the output folder, records
 * and pcaps (daemon.h; the launcher contract). */
#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#include "daemon.h"
#include "host/samples.h"
#include "pcap/capture.h"

const char DAEMON_LATENESS_HEADER[] =
    "node,frames,stamped,violations,late_p50_ns,late_p99_ns,late_max_ns,wake_p50_ns,"
    "wake_p99_ns,wake_max_ns,promises_sent,promises_received,promise_waits,promise_wait_ns,"
    "rx_bytes";

/* ---- arguments ------------------------------------------------------------ */

static int bad_arg(FILE *err, const char *prog, const char *msg, const char *what)
{
	fprintf(err, "%s: %s%s (see %s --help)\n", prog, msg, what ? what : "", prog);
	return 2;
}

int daemon_parse_args(struct daemon_args *a, const char *prog, const char *usage, int argc,
		      char **argv, FILE *out, FILE *err)
{
	static const struct option opts[] = {{"topology", required_argument, NULL, 't'},
					     {"node", required_argument, NULL, 'n'},
					     {"port", required_argument, NULL, 'p'},
					     {"ctl", required_argument, NULL, 'C'},
					     {"out", required_argument, NULL, 'o'},
					     {"capture", no_argument, NULL, 'c'},
					     {"set", required_argument, NULL, 's'},
					     {"sample-interval", required_argument, NULL, 'S'},
					     {"help", no_argument, NULL, 'h'},
					     {NULL, 0, NULL, 0}};
	char why[128];
	int c;

	memset(a, 0, sizeof(*a));
	optind = 0; /* glibc: a full restart, so tests may parse twice */
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":t:n:p:C:o:cs:S:h", opts, NULL)) != -1) {
		switch (c) {
		case 't':
			a->topology = optarg;
			break;
		case 'n':
			a->node = optarg;
			break;
		case 'p':
			if (a->nports == TOPO_MAX_PORTS)
				return bad_arg(err, prog, "too many --port (allowed: 64)", NULL);
			if (!*optarg)
				return bad_arg(err, prog, "--port: empty interface name", NULL);
			a->ports[a->nports++] = optarg;
			break;
		case 'C':
			a->ctl = optarg;
			break;
		case 'o':
			a->out = optarg;
			break;
		case 'c':
			a->capture = true;
			break;
		case 's':
			if (a->nsets == TOPO_MAX_SETS)
				return bad_arg(err, prog, "too many --set (allowed: 32)", NULL);
			a->sets[a->nsets++] = optarg;
			break;
		case 'S':
			if (!time_parse(optarg, &a->sample_interval, why, sizeof(why)) ||
			    !a->sample_interval)
				return bad_arg(err, prog, "--sample-interval: ", optarg);
			break;
		case 'h':
			fputs(usage, out);
			return 1;
		case ':':
			return bad_arg(err, prog, "missing value for ", argv[optind - 1]);
		default:
			return bad_arg(err, prog, "unknown option ", argv[optind - 1]);
		}
	}
	if (optind < argc)
		return bad_arg(err, prog, "unexpected argument ", argv[optind]);
	if (!a->topology)
		return bad_arg(err, prog, "--topology FILE is required", NULL);
	if (!a->node)
		return bad_arg(err, prog, "--node NAME is required", NULL);
	return 0;
}

/* ---- setup -------------------------------------------------------------------- */

static uint64_t mono_clock(void *ctx)
{
	(void)ctx;
	return vclock_mono_ns();
}

static const char *kind_name(enum node_kind k)
{
	return k == NODE_NIC ? "a NIC" : k == NODE_SWITCH ? "a switch" : "an external endpoint";
}

static int init_node(struct daemon *d, const struct daemon_args *a, enum node_kind kind)
{
	d->node = topology_find(d->t, a->node);
	if (d->node < 0) {
		fprintf(stderr, "%s: --node %s: no such node in %s\n", d->prog, a->node,
			d->t->path);
		return 2;
	}
	d->me = &d->t->nodes[d->node];
	if (d->me->kind != kind) {
		fprintf(stderr, "%s: --node %s: %s:%d declares %s, not %s\n", d->prog, a->node,
			d->t->path, d->me->line, kind_name(d->me->kind), kind_name(kind));
		return 2;
	}
	if (a->nports && a->nports != d->me->nports) {
		fprintf(stderr, "%s: --port given %d times but %s has %d port%s (one per link)\n",
			d->prog, a->nports, d->me->name, d->me->nports,
			d->me->nports == 1 ? "" : "s");
		return 2;
	}
	return 0;
}

/* The longest frame a link between daemons carries: a data packet of the
 * largest MSS of any NIC, with a TSETH, an ICRC and the trailer; any frame
 * when an external endpoint may send one through the fabric. */
static size_t largest_frame(const struct topology *t)
{
	uint32_t mss = 0;
	size_t n;

	for (int i = 0; i < t->nnodes; i++) {
		if (t->nodes[i].kind == NODE_EXTERNAL)
			return PORT_MAX_FRAME;
		if (t->nodes[i].kind == NODE_NIC && t->nodes[i].nic.mss > mss)
			mss = t->nodes[i].nic.mss;
	}
	n = WIRE_ETH_LEN + WIRE_DATA_OVERHEAD + WIRE_TSETH_LEN + mss + WIRE_ICRC_LEN +
	    WIRE_TRAILER_LEN;
	if (n < DAEMON_RX_FRAME_MIN)
		n = DAEMON_RX_FRAME_MIN;
	return n > PORT_MAX_FRAME ? PORT_MAX_FRAME : n;
}

struct port_rx_size daemon_rx_size(const struct daemon *d, int i)
{
	const struct topo_port *tp = &d->me->ports[i];
	const struct link_end *out = &d->links[i];
	struct link_end in;
	struct port_rx_size rx = {.slots = PORT_RX_SLOTS, .frame_max = d->frame_max};
	ps_t ser_min_in, window;
	uint64_t slots;

	if (!d->ports[i].stamped)
		return PORT_RX_DEFAULT;
	rx.stamped = true;
	rx.promise_slots = DAEMON_RX_PROMISE_SLOTS;
	link_end_init(&in, d->t, tp->link, tp->peer);
	if (!in.rate || !out->rate)
		return rx;
	/* docs/promises.md, Receive queues: what waits unread arrives in
	 * [F, F + window), F our floor at our last promise; frames of the link
	 * arrive at least a minimum frame's serialization apart. */
	ser_min_in = time_serialize(WIRE_MIN_LEN, in.rate);
	window = out->delay + time_serialize(rx.frame_max + WIRE_FCS_LEN, out->rate) +
		 d->ports[i].ser_min + in.delay +
		 time_serialize(rx.frame_max + WIRE_FCS_LEN, in.rate);
	slots = (window + ser_min_in - 1) / ser_min_in + 1 + DAEMON_RX_PROMISE_SLOTS;
	rx.slots = slots > DAEMON_RX_SLOTS_MAX ? DAEMON_RX_SLOTS_MAX : (unsigned)slots;
	return rx;
}

/* docs/promises.md, Lookahead: a switch's port by which no frame that came
 * in on it can leave promises without its own peer's promise; not when an
 * external endpoint, which may forge any source, is anywhere in the
 * topology. */
static void init_own_ignored(struct daemon *d)
{
	uint64_t reflects;

	if (d->me->kind != NODE_SWITCH)
		return;
	for (int i = 0; i < d->t->nnodes; i++)
		if (d->t->nodes[i].kind == NODE_EXTERNAL)
			return;
	reflects = topology_reflects(d->t, d->node);
	for (int i = 0; i < d->nports; i++)
		d->ports[i].own_ignored = d->ports[i].stamped && !(reflects >> i & 1);
}

static void init_ports(struct daemon *d, const struct daemon_args *a)
{
	d->nports = d->me->nports;
	for (int i = 0; i < d->nports; i++) {
		struct daemon_port *port = &d->ports[i];
		const struct topo_port *tp = &d->me->ports[i];

		port->d = d;
		port->index = i;
		if (a->nports)
			snprintf(port->ifname, sizeof(port->ifname), "%s", a->ports[i]);
		else if (topology_port_kind(d->t, d->node, i) == TOPO_PORT_TAP)
			snprintf(port->ifname, sizeof(port->ifname), "tap:p%d", i);
		else if (topology_port_kind(d->t, d->node, i) == TOPO_PORT_DPDK)
			/* frames up to 9,216 bytes in 10 KiB ring slots, as many
			 * as the lookahead needs (port_dpdk_open adds framecnt) */
			snprintf(port->ifname, sizeof(port->ifname),
				 "dpdk:net_af_packet%d,iface=p%d,blocksz=20480,framesz=10240", i,
				 i);
		else
			snprintf(port->ifname, sizeof(port->ifname), "p%d", i);
		link_end_init(&d->links[i], d->t, tp->link, d->node);
		port->peer = tp->peer;
		/* docs/architecture.md: trailers only on links to mrcemu daemons. */
		port->stamped = d->t->nodes[tp->peer].kind != NODE_EXTERNAL;
		port->rx_id = (uint32_t)(d->node * TOPO_MAX_PORTS + i); /* as mrcemu sim */
		port->ser_min = time_serialize(WIRE_MIN_LEN, topology_port_rate(d->t, d->node, i));
	}
	init_own_ignored(d);
}

static int open_captures(struct daemon *d)
{
	char dir[4200], path[4300], err[512];

	snprintf(dir, sizeof(dir), "%s/pcap", d->outdir);
	if (!records_mkdir(dir)) {
		fprintf(stderr, "%s: %s: %s\n", d->prog, dir, strerror(errno));
		return 1;
	}
	for (int i = 0; i < d->nports; i++) {
		snprintf(path, sizeof(path), "%s/%s-%d.pcap", dir, d->me->name, i);
		d->ports[i].cap = capture_open(path, err, sizeof(err));
		if (!d->ports[i].cap) {
			fprintf(stderr, "%s: %s\n", d->prog, err);
			return 1;
		}
	}
	return 0;
}

static int init_output(struct daemon *d, const struct daemon_args *a)
{
	const char *emu = d->t->emu.name;

	if (a->out)
		snprintf(d->outdir, sizeof(d->outdir), "%s", a->out);
	else
		snprintf(d->outdir, sizeof(d->outdir), "out/%s", emu);
	if (a->ctl)
		snprintf(d->ctl_path, sizeof(d->ctl_path), "%s", a->ctl);
	else
		snprintf(d->ctl_path, sizeof(d->ctl_path), "/run/mrcemu/%s/%s.ctl", emu,
			 d->me->name);
	if (!records_mkdir(d->outdir)) {
		fprintf(stderr, "%s: %s: %s\n", d->prog, d->outdir, strerror(errno));
		return 1;
	}
	return 0;
}

/* OUTDIR/<base>-<node>.csv (the launcher merges them, daemon protocol). */
static struct csv *open_node_record(struct daemon *d, const char *base, const char *header)
{
	char name[TOPO_NAME_MAX + 64];
	struct csv *c;

	snprintf(name, sizeof(name), "%s-%s.csv", base, d->me->name);
	c = csv_open(d->outdir, name, header);
	if (!c)
		fprintf(stderr, "%s: %s/%s: %s\n", d->prog, d->outdir, name, strerror(errno));
	return c;
}

struct csv *daemon_record(struct daemon *d, const char *base, const char *header)
{
	struct csv *c;

	if (d->nrecords == (int)(sizeof(d->records) / sizeof(d->records[0]))) {
		fprintf(stderr, "%s: too many records\n", d->prog);
		return NULL;
	}
	c = open_node_record(d, base, header);
	if (c)
		d->records[d->nrecords++] = c;
	return c;
}

bool daemon_samples_start(struct daemon *d, struct nic *nic, struct sw *sw)
{
	struct csv *c;

	if (!d->sample_interval)
		return true;
	if (!(c = daemon_record(d, "samples", SAMPLES_HEADER)) ||
	    !(d->samples = samples_new(d->q, c, d->sample_interval)) ||
	    !(nic ? samples_add_nic(d->samples, nic) : samples_add_switch(d->samples, sw))) {
		fprintf(stderr, "%s: samples: out of memory\n", d->prog);
		return false;
	}
	samples_start(d->samples);
	return true;
}

int daemon_init(struct daemon *d, const char *prog, const struct daemon_args *a,
		enum node_kind kind)
{
	char err[TOPO_ERR_MAX];
	int rc;

	memset(d, 0, sizeof(*d));
	d->prog = prog;
	d->timer_fd = d->ctl_fd = -1;
	d->clock_ns = mono_clock;
	d->t = topology_load_set(a->topology, a->sets, a->nsets, err, sizeof(err));
	if (!d->t) {
		fprintf(stderr, "%s\n", err);
		return 2;
	}
	if ((rc = init_node(d, a, kind)))
		return rc;
	if (!link_lookahead_check(d->t, err, sizeof(err))) {
		fprintf(stderr, "%s\n", err);
		return 2;
	}
	init_ports(d, a);
	d->frame_max = largest_frame(d->t);
	d->capture = a->capture || d->t->emu.capture;
	d->sample_interval = a->sample_interval;
	if (!(d->q = events_new()) || !pkt_pool_init(&d->pool, DAEMON_RX_SLAB, 0)) {
		fprintf(stderr, "%s: out of memory\n", prog);
		return 1;
	}
	if ((rc = init_output(d, a)))
		return rc;
	if (!(d->lateness = open_node_record(d, "lateness", DAEMON_LATENESS_HEADER)))
		return 1;
	return d->capture ? open_captures(d) : 0;
}

int daemon_serve(struct daemon *d, const char *prog, const struct daemon_args *a,
		 enum node_kind kind, int (*build)(struct daemon *d))
{
	int rc = daemon_init(d, prog, a, kind);

	if (!rc)
		rc = build(d);
	if (!rc && !daemon_open_io(d))
		rc = 1;
	if (!rc) {
		daemon_prefault(d);
		rc = daemon_run(d);
		if (!daemon_finish(d) && !rc)
			rc = 1;
	}
	return rc;
}
