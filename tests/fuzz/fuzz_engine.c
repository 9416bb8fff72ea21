/* tests/fuzz/fuzz_engine.c — the engines under a fuzzer (docs/protocol.md
 * §2: nothing in a packet can make a NIC or switch crash, allocate without
 * bound, or corrupt another QP).
 *
 * Two NICs, h0 and h1, on one switch s0, each sending the other a 64 KiB
 * message.  The input is a list of frames, each given to one engine as if
 * it had arrived on one of its ports, between the packets of those real
 * transfers:
 *
 *   [target] [gap] [length, 2 bytes big-endian] [frame]   repeated
 *
 * target % 4: 0 h0, 1 h1, 2 s0 port 0 (from h0's side), 3 s0 port 1; gap:
 * virtual time before it, in 50 ns units.  After the last frame the run
 * goes on until both messages complete; the checks:
 *   - progress: both complete, and h1 and h0 verify every byte;
 *   - no leak: every packet back in the pool (LeakSanitizer sees the rest).
 * A frame that claims to come from h0 or h1 to the other's QPs in use
 * (below 0x200) is not given: without authentication, one who knows the
 * PSNs can always acknowledge what never arrived, and then the message
 * rightly never completes; every other forgery, from the peers' addresses
 * too, is fair. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/events.h"
#include "core/link.h"
#include "core/topology.h"
#include "nicd/nic.h"
#include "switchd/switch.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define H0	   0x0A000001u
#define H1	   0x0A000002u
#define MAX_FRAMES 64
#define MSG_BYTES  (64 * 1024)

static const char topology_text[] = "[emulation]\nseed = 1\n"
				    "[nic]\nEnableTransportStats = false\n"
				    "[nic h0]\nip = 10.0.0.1\n[nic h1]\nip = 10.0.0.2\n"
				    "[switch s0]\n[link h0 s0]\n[link h1 s0]\n";

struct fz;

struct fz_wire { /* frames in flight from one port, in arrival order */
	struct fz *fz;
	struct pkt *head, *tail;
	int to_node, to_port;
	uint32_t seq;
};

struct fz_node {
	struct fz *fz;
	int index;
	struct link_end links[2];
	struct fz_wire out[2];
};

struct fz {
	struct events *q;
	struct pkt_pool pool;
	struct fz_node nodes[3];
	struct nic *nic[2];
	struct sw *sw;
	int completed, verified;
};

static struct topology *topo;

static void load_topology(void)
{
	char path[] = "/tmp/mrcemu-fuzz-XXXXXX", err[512];
	int fd = mkstemp(path);

	if (fd < 0 || write(fd, topology_text, sizeof(topology_text) - 1) < 0)
		abort();
	close(fd);
	topo = topology_load(path, err, sizeof(err));
	unlink(path);
	if (!topo) {
		fprintf(stderr, "fuzz_engine: %s\n", err);
		abort();
	}
}

static void arrive(void *arg, ps_t now)
{
	struct fz_wire *w = arg;
	struct pkt *p = w->head;

	w->head = p->next;
	if (!w->head)
		w->tail = NULL;
	p->next = NULL;
	if (w->to_node < 2)
		nic_receive(w->fz->nic[w->to_node], p, now);
	else
		sw_receive(w->fz->sw, w->to_port, p, now);
}

static void transmit(void *ctx, int port, struct pkt *p, ps_t arrival, bool pull)
{
	struct fz_node *n = ctx;

	(void)pull; /* no pull_before */
	struct fz_wire *w = &n->out[port];

	p->next = NULL;
	if (w->tail)
		w->tail->next = p;
	else
		w->head = p;
	w->tail = p;
	events_schedule_key(
	    n->fz->q, arrival,
	    events_key_arrival((uint32_t)(w->to_node * TOPO_MAX_PORTS + w->to_port), w->seq++),
	    arrive, w);
}

static void nic_transmit(void *ctx, struct pkt *p, ps_t arrival)
{
	transmit(ctx, 0, p, arrival, false);
}

static void completion(void *ctx, enum nic_completion what, const struct nic_msg_info *m, ps_t now)
{
	struct fz *fz = ((struct fz_node *)ctx)->fz;

	(void)now;
	fz->completed += what == MSG_COMPLETE;
	fz->verified += what == RECV_COMPLETE && m->verified && m->bytes == MSG_BYTES;
}

static void build(struct fz *fz)
{
	memset(fz, 0, sizeof(*fz));
	fz->q = events_new();
	if (!fz->q || !pkt_pool_init(&fz->pool, 256, 0))
		abort();
	for (int i = 0; i < 3; i++) {
		const struct topo_node *tn = &topo->nodes[i];
		struct fz_node *n = &fz->nodes[i];
		n->fz = fz;
		n->index = i;
		for (int p = 0; p < tn->nports; p++) {
			link_end_init(&n->links[p], topo, tn->ports[p].link, i);
			n->out[p] = (struct fz_wire){.fz = fz,
						     .to_node = tn->ports[p].peer,
						     .to_port = tn->ports[p].peer_port};
		}
	}
	for (int i = 0; i < 2; i++) {
		const struct topo_node *tn = &topo->nodes[i];
		struct nic_params prm = {.name = tn->name,
					 .attrs = &tn->nic,
					 .link = &fz->nodes[i].links[0],
					 .rate = topology_port_rate(topo, i, 0),
					 .mac = tn->mac,
					 .peer_mac = topo->nodes[2].mac,
					 .seed = 1,
					 .events = fz->q,
					 .pool = &fz->pool,
					 .host = {.ctx = &fz->nodes[i],
						  .transmit = nic_transmit,
						  .completion = completion}};
		if (!(fz->nic[i] = nic_new(&prm)))
			abort();
	}
	struct sw_params sp = {.topo = topo,
			       .node = 2,
			       .links = fz->nodes[2].links,
			       .events = fz->q,
			       .pool = &fz->pool,
			       .host = {.ctx = &fz->nodes[2], .transmit = transmit}};
	char err[256];
	if (!(fz->sw = sw_new(&sp, err, sizeof(err)))) {
		fprintf(stderr, "fuzz_engine: %s\n", err);
		abort();
	}
}

static void destroy(struct fz *fz)
{
	for (int i = 0; i < 3; i++)
		for (int p = 0; p < 2; p++)
			while (fz->nodes[i].out[p].head) {
				struct pkt *x = fz->nodes[i].out[p].head;
				fz->nodes[i].out[p].head = x->next;
				pkt_put(&fz->pool, x);
			}
	nic_free(fz->nic[0]);
	nic_free(fz->nic[1]);
	sw_free(fz->sw);
	events_free(fz->q);
	if (fz->pool.in_use) {
		fprintf(stderr, "fuzz_engine: %zu packets never returned to the pool\n",
			(size_t)fz->pool.in_use);
		abort();
	}
	pkt_pool_destroy(&fz->pool);
}

/* The real transfers' QPs are left to their owners (see the top). */
static bool impersonates(const uint8_t *f, size_t len)
{
	struct pkt p;

	if (wire_parse(f, len, false, &p) != WIRE_OK)
		return false;
	return (p.src_ip == H0 || p.src_ip == H1) && (p.dst_ip == H0 || p.dst_ip == H1) &&
	       p.dqpn < 0x200;
}

static void inject(struct fz *fz, int target, const uint8_t *f, size_t len)
{
	ps_t now = events_now(fz->q);

	if (impersonates(f, len))
		return;
	if (target < 2)
		nic_receive_frame(fz->nic[target], f, len, now);
	else
		sw_receive_frame(fz->sw, target - 2, f, len, now);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fz fz;
	size_t at = 0;
	ps_t now = 0;

	if (!topo)
		load_topology();
	build(&fz);
	if (!nic_post_message(fz.nic[0], H1, MSG_BYTES, 1, 0) ||
	    !nic_post_message(fz.nic[1], H0, MSG_BYTES, 1, 0))
		abort();
	for (int k = 0; k < MAX_FRAMES && at + 4 <= size; k++) {
		int target = data[at] % 4;
		size_t len = (size_t)data[at + 2] << 8 | data[at + 3];
		now += (ps_t)data[at + 1] * 50 * PS_PER_NS;
		at += 4;
		if (len > size - at)
			len = size - at;
		events_run_until(fz.q, now);
		inject(&fz, target, data + at, len);
		at += len;
	}
	/* Done, or 200 ms: with the default timers, ample for any recovery. */
	for (ps_t t = now; t < now + 200 * PS_PER_MS && (fz.completed < 2 || fz.verified < 2);)
		events_run_until(fz.q, t += 50 * PS_PER_US);
	if (fz.completed != 2 || fz.verified != 2) {
		fprintf(stderr,
			"fuzz_engine: no progress: %d of 2 messages complete, %d verified\n",
			fz.completed, fz.verified);
		abort();
	}
	destroy(&fz);
	return 0;
}
