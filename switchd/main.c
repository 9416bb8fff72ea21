/* switchd/main.c — the switch daemon (docs/architecture.md, Daemons): one
 * switch engine (docs/protocol.md §9) with a real port per link, in scaled
 * virtual time.  Each frame reaches the engine as received, at its stamp;
 * the engine checks it and its payload against the pattern, and forwarded
 * frames are built anew, with the trailer of their next hop. */
#include <stdlib.h>
#include <string.h>

#include "daemon/daemon.h"
#include "switch.h"

static const char usage[] =
    "Usage: switchd --topology FILE --node NAME [--port IF]... [--ctl SOCK] [--out DIR]\n"
    "               [--capture] [--sample-interval TIME]\n"
    "\n"
    "The switch daemon: runs [switch NAME] of the topology with one real interface per\n"
    "link, in scaled virtual time, as `mrcemu run` starts it inside the node's network\n"
    "namespace.  It waits on its control socket for `start EPOCH_NS SCALE`.\n"
    "\n"
    "Options:\n"
    "  -t, --topology FILE  the topology file (docs/topology.md)\n"
    "  -n, --node NAME      which [switch NAME] this daemon is\n"
    "  -p, --port IF        the interface of port 0, then 1, ... (default p0, p1, ...;\n"
    "                       tap:pN for a link's TAP end); tap:NAME is a TAP device\n"
    "  -C, --ctl SOCK       control socket (default /run/mrcemu/<emulation>/NAME.ctl)\n"
    "  -o, --out DIR        records folder (default out/<emulation>)\n"
    "  -c, --capture        DIR/pcap/NAME-PORT.pcap, virtual-time nanosecond stamps\n"
    "  -S, --sample-interval TIME\n"
    "                       DIR/samples-NAME.csv every TIME of virtual time (the\n"
    "                       launcher gives it for `mrcemu run --report`)\n"
    "  -h, --help           this text\n"
    "\n"
    "Control commands, one a line: status, start EPOCH_NS SCALE, stats,\n"
    "port N down|up, stop.\n"
    "\n"
    "Records in DIR: switch-stats-NAME.csv (EnableSwitchStats), lateness-NAME.csv.\n"
    "\n"
    "Exit status: 0 after stop, SIGINT or SIGTERM; 1 a port or file failed; 2 bad\n"
    "arguments or topology; 3 more causality violations than MaxViolations.\n";

struct switchd {
	struct daemon d; /* first: build() is given &d */
	struct sw *sw;
};

static void transmit(void *ctx, int port, struct pkt *p, ps_t arrival, bool pull)
{
	(void)pull; /* a daemon has no pull_before */
	daemon_transmit(&((struct switchd *)ctx)->d, port, p, arrival);
}

/* A frame the daemon parsed: its payload stays in the slot it came in by,
 * and the frame leaves again as it came, but for what the hop changes
 * (daemon_frames.c, wire_forward). */
static void receive(void *ctx, int port, struct pkt *p, ps_t now)
{
	sw_receive(((struct switchd *)ctx)->sw, port, p, now);
}

/* A frame the daemon could not parse: the engine counts why. */
static void receive_frame(void *ctx, int port, const uint8_t *frame, size_t len, ps_t now)
{
	sw_receive_frame(((struct switchd *)ctx)->sw, port, frame, len, now);
}

static void port_set_down(void *ctx, int port, bool down)
{
	sw_port_set_down(((struct switchd *)ctx)->sw, port, down);
}

/* `stats`: the engine's counters (sw_counter_at). */
static bool command(void *ctx, const struct daemon_cmd *c, char *reply, size_t len)
{
	struct sw *sw = ((struct switchd *)ctx)->sw;
	struct counter k;
	size_t used = 0;

	if (c->kind != CMD_STATS) {
		snprintf(reply, len, "switchd does not take this command");
		return false;
	}
	for (size_t i = 0; sw_counter_at(sw, i, &k); i++)
		if (!counter_append(reply, len, &used, k.name, k.value))
			return snprintf(reply, len, "reply too long"), false;
	return true;
}

static ps_t tx_floor(void *ctx, int port, ps_t from)
{
	return sw_tx_floor(((struct switchd *)ctx)->sw, port, from);
}

static void finish(void *ctx, ps_t now)
{
	sw_finish(((struct switchd *)ctx)->sw, now);
}

static int build(struct daemon *d)
{
	struct switchd *s = (struct switchd *)d; /* d is its first member */
	struct csv *stats = NULL;
	char err[512];

	if (d->me->sw.stats && !(stats = daemon_record(d, "switch-stats", sw_stats_header())))
		return 1;
	struct sw_params prm = {.name = d->me->name,
				.topo = d->t,
				.node = d->node,
				.links = d->links,
				.events = d->q,
				.pool = &d->pool,
				.host = {.ctx = s, .transmit = transmit},
				.stats = stats};
	s->sw = sw_new(&prm, err, sizeof(err));
	if (!s->sw) {
		fprintf(stderr, "%s:%d: %s\n", d->t->path, d->me->line, err);
		return 2;
	}
	if (!daemon_samples_start(d, NULL, s->sw))
		return 1;
	for (int i = 0; i < d->nports; i++)
		d->ports[i].icrc = sw_icrc(s->sw);
	d->eng = (struct daemon_engine){.ctx = s,
					.receive = receive,
					.forwards = true,
					.receive_frame = receive_frame,
					.command = command,
					.port_set_down = port_set_down,
					.finish = finish,
					.tx_floor = tx_floor};
	return 0;
}

int main(int argc, char **argv)
{
	struct daemon_args a;
	struct switchd *s;
	int rc = daemon_parse_args(&a, "switchd", usage, argc, argv, stdout, stderr);

	if (rc)
		return rc == 1 ? 0 : 2;
	if (!(s = calloc(1, sizeof(*s)))) {
		fprintf(stderr, "switchd: out of memory\n");
		return 1;
	}
	rc = daemon_serve(&s->d, "switchd", &a, NODE_SWITCH, build);
	sw_free(s->sw);
	daemon_destroy(&s->d);
	free(s);
	return rc;
}
