/* switchd/switch.c — the switch engine (docs/protocol.md §9): forwarding by the
 * topology's routes with a seeded 5-tuple hash over ECMP sets, MAC rewrite
 * and TTL, per-port traffic-class queues (TC2 strict, TC1 against TC0 by
 * deficit round robin), ECN marking, trimming under the UET policy,
 * serialization at the port's rate and the link's loss and down windows.
 * Records and counters are in switch_stats.c, the shared structs in
 * switch_impl.h. */
#include "switch_impl.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/config.h"
#include "core/egress.h"
#include "core/invariant.h"
#include "core/lines.h"
#include "core/rng.h"
/* ---- set-up ------------------------------------------------------------ */

/* docs/protocol.md §3: the switch's codepoints must be the NICs'. */
static bool same_codepoints(const struct switch_attrs *s, const struct topo_node *nic, char *err,
			    size_t errlen, const char *name)
{
	static const char *const names[] = {"DscpTrimmable", "DscpTrimmableRetx",
					    "DscpNoTrim",    "DscpControl",
					    "DscpTrimmed",   "DscpTrimmedLastHop"};
	const struct nic_attrs *n = &nic->nic;
	const uint8_t sv[6] = {s->dscp_trimmable, s->dscp_trimmable_retx, s->dscp_no_trim,
			       s->dscp_control,	  s->dscp_trimmed,	  s->dscp_trimmed_last_hop};
	const uint8_t nv[6] = {n->dscp_trimmable, n->dscp_trimmable_retx, n->dscp_no_trim,
			       n->dscp_control,	  n->dscp_trimmed,	  n->dscp_trimmed_last_hop};

	for (int i = 0; i < 6; i++) {
		if (sv[i] != nv[i]) {
			snprintf(err, errlen,
				 "%s: %s: %u differs from NIC %s's %u (allowed: the same "
				 "codepoints on every NIC and switch, docs/protocol.md §3)",
				 name, names[i], sv[i], nic->name, nv[i]);
			return false;
		}
	}
	return true;
}

static bool check_node(const struct sw_params *p, char *err, size_t errlen)
{
	const struct topology *t = p->topo;
	const struct topo_node *n;

	if (!t || p->node < 0 || p->node >= t->nnodes || t->nodes[p->node].kind != NODE_SWITCH) {
		snprintf(err, errlen, "switch: node %d is not a switch of the topology", p->node);
		return false;
	}
	n = &t->nodes[p->node];
	if (n->sw.pfc) {
		snprintf(err, errlen,
			 "%s: PfcEnabled: true is refused: PFC pause frames are not modelled "
			 "(allowed: false, docs/protocol.md §9)",
			 n->name);
		return false;
	}
	for (int i = 0; i < t->nnodes; i++)
		if (t->nodes[i].kind == NODE_NIC &&
		    !same_codepoints(&n->sw, &t->nodes[i], err, errlen, n->name))
			return false;
	return true;
}

/* The hash seed: the topology's seed mixed with the switch's name, as the
 * engines' RNGs are seeded (docs/architecture.md, Determinism). */
static uint64_t hash_seed(uint64_t seed, const char *name)
{
	struct rng r;

	rng_seed(&r, seed, name);
	return rng_next(&r);
}

static void port_init(struct sw *sw, const struct sw_params *prm, int i)
{
	const struct topology *t = sw->t;
	const struct topo_port *tp = &t->nodes[sw->node].ports[i];
	const struct topo_node *peer = &t->nodes[tp->peer];
	struct sw_port *port = &sw->ports[i];
	struct switch_attrs a = sw->a;

	port->sw = sw;
	_Static_assert(TOPO_MAX_PORTS <= UINT8_MAX + 1, "a port's index in a byte");
	port->index = (uint8_t)i;
	port->cls = &sw->classes[(size_t)i * (size_t)sw->ntc];
	port->last = sw->lasts ? &sw->lasts[(size_t)i * (size_t)sw->ntc] : NULL;
	egress_init(&port->out, topology_port_rate(t, sw->node, i), &prm->links[i]);
	config_switch_resolve(&a, port->out.rate);
	/* at most CONFIG_EGRESS_QUEUE_LIMIT_MAX, given or derived: 1.5 x it
	 * fits a queue's 32 bits of bytes */
	_Static_assert(CONFIG_EGRESS_QUEUE_LIMIT_MAX / 2 * 3 <= UINT32_MAX, "limits in 32 bits");
	port->limit = (uint32_t)a.egress_queue_limit;
	/* ecn_mark's "q <= EcnKmin x limit" for whole bytes, EcnKmin in
	 * [0, 1]: bytes <= its floor */
	port->ecn_lo = (uint32_t)(sw->a.ecn_kmin * (double)port->limit);
	port->faces_nic = peer->kind != NODE_SWITCH;
	port->peer_name = peer->name;
	memcpy(port->macs, peer->mac, 6);
	memcpy(port->macs + 6, sw->mac, 6);
	port->drr_fresh = true;
	/* the switch's own stats rows read the ports too, as samples do */
	ps_t below = prm->pull_ser_below;
	if (sw->stats && sw->a.stats_interval && sw->a.stats_interval < below)
		below = sw->a.stats_interval;
	if (prm->pull_before && port->out.delay && !port->out.link_faults &&
	    egress_serialization(&port->out, WIRE_MAX_FRAME + WIRE_FCS_LEN) < below)
		port->pull = SW_PULL_ABLE;
}

/* Each port's classes, and their counters at the last stats row when the
 * switch writes stats rows. */
static bool ports_alloc(struct sw *sw, int nports)
{
	size_t n = (size_t)nports * (size_t)sw->ntc;

	sw->ports = lines_calloc((size_t)nports, sizeof(struct sw_port));
	sw->classes = lines_calloc(n, sizeof(struct sw_class));
	if (sw->stats)
		sw->lasts = calloc(n ? n : 1, sizeof(struct sw_counters));
	return sw->ports && sw->classes && (!sw->stats || sw->lasts);
}
static void say_trimming_inactive(const struct sw *sw)
{
	if (!sw->a.uet_policy && sw->a.trimming)
		fprintf(stderr,
			"%s: UETPolicyEnabled is false: trimming is inactive, packets that do "
			"not fit are dropped (docs/protocol.md §9)\n",
			sw->name);
}

static void drr_quanta(struct sw *sw)
{
	double w = sw->a.trimmed_class_weight;

	sw->quantum[1] = (uint32_t)(w * DRR_ROUND + 0.5);
	sw->quantum[0] = DRR_ROUND - sw->quantum[1];
}

/* docs/protocol.md §3: with UETPolicyEnabled control -> TC2, trimmed and
 * trimmed-last-hop -> TC1, everything else TC0; without it TC = DSCP / 8. */
static int classify(const struct switch_attrs *a, uint8_t dscp)
{
	if (!a->uet_policy)
		return (dscp & 63) >> 3;
	if (dscp == a->dscp_control)
		return TC_CONTROL;
	if (dscp == a->dscp_trimmed || dscp == a->dscp_trimmed_last_hop)
		return TC_TRIMMED;
	return 0;
}

static void dscp_classes(struct sw *sw)
{
	for (int d = 0; d < 256; d++) {
		bool retx = sw->a.uet_policy && d == sw->a.dscp_trimmable_retx;
		sw->dscp_class[d] =
		    (uint8_t)(classify(&sw->a, (uint8_t)d) | (retx ? SW_DSCP_RETX : 0));
	}
}

static bool hop_table(struct sw *sw);

struct sw *sw_new(const struct sw_params *prm, char *err, size_t errlen)
{
	struct sw *sw;
	const struct topo_node *n;

	if (!check_node(prm, err, errlen))
		return NULL;
	n = &prm->topo->nodes[prm->node];
	if (!prm->links || !prm->events || !prm->pool || !prm->host.transmit) {
		snprintf(err, errlen, "%s: switch engine: links, events, pool and host needed",
			 n->name);
		return NULL;
	}
	sw = aligned_alloc(_Alignof(struct sw), sizeof(*sw));
	if (sw) {
		memset(sw, 0, sizeof(*sw));
		sw->t = prm->topo;
		sw->node = prm->node;
		sw->a = n->sw;
		sw->stats = sw->a.stats ? prm->stats : NULL;
		sw->ntc = sw->a.uet_policy ? SW_UET_NUM_TC : SW_NUM_TC;
		sw->host_macs = prm->host_macs;
		sw->general = !sw->host_macs;
		sw->pull_before = prm->pull_before;
	}
	if (!sw || !ports_alloc(sw, n->nports) || !hop_table(sw)) {
		snprintf(err, errlen, "%s: out of memory", n->name);
		sw_free(sw);
		return NULL;
	}
	snprintf(sw->name, sizeof(sw->name), "%s", prm->name ? prm->name : n->name);
	sw->seed = hash_seed(prm->topo->emu.seed, n->name);
	memcpy(sw->mac, n->mac, 6);
	sw->ev = prm->events;
	sw->pool = prm->pool;
	sw->host = prm->host;
	rng_seed(&sw->rng, prm->topo->emu.seed, n->name);
	/* Seed, Packet marking: trimming runs only under the UET policy. */
	sw->trim_active = sw->a.uet_policy && sw->a.trimming;
	for (int i = 0; i < prm->topo->nnodes; i++)
		if (prm->topo->nodes[i].kind == NODE_NIC && prm->topo->nodes[i].nic.icrc)
			sw->icrc = true;
	drr_quanta(sw);
	dscp_classes(sw);
	sw->nports = n->nports;
	for (int i = 0; i < sw->nports; i++)
		port_init(sw, prm, i);
	say_trimming_inactive(sw);
	if (sw->stats && sw->a.stats_interval)
		events_schedule(sw->ev, events_now(sw->ev) + sw->a.stats_interval, sw_stats_tick,
				sw);
	return sw;
}

void sw_free(struct sw *sw)
{
	if (!sw)
		return;
	for (int i = 0; sw->ports && i < sw->nports; i++) {
		struct sw_port *port = &sw->ports[i];
		for (int tc = 0; tc < sw->ntc; tc++) {
			struct sw_queue *q = &port->cls[tc].q;
			for (uint32_t k = 0; k < q->n; k++)
				pkt_put(sw->pool, q->ring[(q->head + k) & (q->cap - 1)].p);
			free(q->ring);
		}
	}
	free(sw->ports);
	free(sw->classes);
	free(sw->lasts);
	free((void *)sw->hop);
	free(sw);
}

/* ---- classification and routing ----------------------------------------- */

int sw_classify(const struct sw *sw, uint8_t dscp)
{
	return sw->dscp_class[dscp] & SW_DSCP_TC;
}

static uint64_t mix64(uint64_t h)
{
	h ^= h >> 33;
	h *= 0xFF51AFD7ED558CCDULL;
	h ^= h >> 33;
	h *= 0xC4CEB9FE1A85EC53ULL;
	h ^= h >> 33;
	return h;
}

/* docs/protocol.md §9: a hash of (source IP, destination IP, protocol 17,
 * source port, destination port) and the switch's seed. */
static inline __attribute__((always_inline)) uint64_t flow_hash(const struct sw *sw,
								const struct pkt *p)
{
	uint64_t h = mix64(sw->seed ^ ((uint64_t)p->src_ip << 32 | p->dst_ip));

	return mix64(h ^ ((uint64_t)17 << 32 | (uint64_t)p->sport << 16 | p->dport));
}

/* One entry of the hop table (struct sw's hop) for ECMP set i. */
static uint16_t hop_entry(const struct topo_ecmp *sets, int i)
{
	const struct topo_ecmp *s = &sets[i];

	if (!s->count)
		return SW_HOP_NONE;
	if (s->count == 1)
		return s->port[0];
	return i < SW_HOP_FAR - SW_HOP_SET ? (uint16_t)(SW_HOP_SET | i) : SW_HOP_FAR;
}

/* The hop table, as topology_ecmp would find each entry, and past the
 * leaves the entry of a destination with none (topo_ip_route's away). */
static bool hop_table(struct sw *sw)
{
	const struct topo_routes *r = &sw->t->routes[sw->node];
	uint16_t *hop = malloc((SW_HOP_LEAF + (size_t)sw->t->nleaves + 1) * sizeof(*hop));

	if (!hop)
		return false;
	_Static_assert(TOPO_MAX_PORTS < SW_HOP_SET, "a port is below SW_HOP_SET");
	_Static_assert(SW_HOP_LEAF == TOPO_MAX_PORTS, "topo_ip_route's away indexes the hop table");
	for (int i = 0; i < SW_HOP_LEAF; i++)
		hop[i] = hop_entry(r->sets, r->to_port[i]);
	for (int i = 0; i < sw->t->nleaves; i++)
		hop[SW_HOP_LEAF + i] = hop_entry(r->sets, r->to_leaf[i]);
	hop[SW_HOP_LEAF + sw->t->nleaves] = SW_HOP_NONE;
	sw->hop = hop;
	sw->sets = r->sets;
	return true;
}

/* topology_ecmp's set by the hop table.  The IP's own lookup stays: a
 * frame to an address no endpoint has is a hop with no route (its slot's
 * away has the hop table's SW_HOP_NONE). */
static inline __attribute__((always_inline)) int route(const struct sw *sw, const struct pkt *p)
{
	const struct topo_ip_route *r = topology_ip_route(sw->t, p->dst_ip);
	const struct topo_ecmp *s;
	uint16_t e;

	e = sw->hop[r->sw == sw->node ? r->port : r->away];
	if (e < SW_HOP_SET)
		return e;
	if (e == SW_HOP_NONE)
		return -1;
	s = e == SW_HOP_FAR ? topology_ecmp(sw->t, sw->node, r->node) : &sw->sets[e & ~SW_HOP_SET];
	/* the hash's top 32 bits scaled to the set: no division */
	return s->port[(flow_hash(sw, p) >> 32) * s->count >> 32];
}

int sw_route(const struct sw *sw, const struct pkt *p)
{
	return route(sw, p);
}

/* ---- queues -------------------------------------------------------------- */

static void count_drop(struct sw_port *port, int tc, enum sw_drop why)
{
	port->cls[tc].c.drops[why]++;
}

static void drop(struct sw *sw, struct sw_port *port, int tc, struct pkt *p, enum sw_drop why)
{
	count_drop(port, tc, why);
	pkt_put(sw->pool, p);
}

/* Out of line and cold: inlined into every hop's push, it cost the hop
 * more than it ever runs (issue 16). */
static __attribute__((noinline, cold)) bool ring_grow(struct sw_queue *q)
{
	uint32_t cap = q->cap ? 2 * q->cap : 16;
	struct sw_entry *r = malloc(cap * sizeof(*r));

	if (!r)
		return false;
	for (uint32_t k = 0; k < q->n; k++)
		r[k] = q->ring[(q->head + k) & (q->cap - 1)];
	free(q->ring);
	q->ring = r;
	q->cap = cap;
	q->head = 0;
	return true;
}

/* A queue of `bytes` beyond the least of its class's peaks. */
static void raise_peaks(struct sw_class *c, uint32_t bytes)
{
	if (bytes > c->peak_ivl)
		c->peak_ivl = bytes;
	if (bytes > c->peak)
		c->peak = bytes;
	if (bytes > c->peak_sample)
		c->peak_sample = bytes;
	sw_class_peaks_low(c);
}

/* A frame was queued to class tc, whose queue now holds `bytes`. */
static inline void count_enqueued(struct sw_class *c, uint64_t bytes)
{
	c->c.enqueued++;
	if (bytes > c->peak_low)
		raise_peaks(c, (uint32_t)bytes);
}

static inline void count_dequeued(struct sw_port *port, int tc, uint32_t len)
{
	port->cls[tc].c.dequeued++;
	port->cls[tc].c.bytes += len;
}

/* Queue p (len bytes on the wire); false when out of memory. */
static inline __attribute__((always_inline)) bool push(struct sw_port *port, int tc, struct pkt *p,
						       uint32_t len)
{
	/* the class once: after the ring's store GCC read port->cls again */
	struct sw_class *c = &port->cls[tc];
	struct sw_queue *q = &c->q;

	if (q->n == q->cap && !ring_grow(q))
		return false;
	q->ring[(q->head + q->n++) & (q->cap - 1)] = (struct sw_entry){p, len};
	q->bytes += len;
	port->nonempty |= (uint8_t)(1u << tc);
	count_enqueued(c, q->bytes);
	return true;
}

static inline __attribute__((always_inline)) struct pkt *pop(struct sw_port *port, int tc,
							     uint32_t *lenp)
{
	struct sw_queue *q = &port->cls[tc].q;
	struct sw_entry e = q->ring[q->head];
	uint32_t len = *lenp = e.len;
	struct pkt *p = e.p;

	INVARIANT(q->n > 0);
	q->head = (q->head + 1) & (q->cap - 1);
	if (!--q->n)
		port->nonempty &= (uint8_t) ~(1u << tc);
	SUB_COUNT(q->bytes, len);
	count_dequeued(port, tc, len);
	return p;
}

static bool is_ect(uint8_t ecn)
{
	return ecn == WIRE_ECN_ECT0 || ecn == WIRE_ECN_ECT1;
}

/* docs/protocol.md §9, ECN: on enqueue to TC0, an ECT packet is marked CE with a
 * probability rising linearly from 0 at EcnKmin x limit to EcnPmax at
 * EcnKmax x limit (and EcnPmax above), from the bytes already queued. */
static __attribute__((noinline)) void ecn_mark_above(struct sw *sw, struct sw_port *port,
						     struct pkt *p)
{
	double q, lo, hi, prob;

	q = (double)port->cls[0].q.bytes;
	lo = sw->a.ecn_kmin * (double)port->limit;
	hi = sw->a.ecn_kmax * (double)port->limit;
	prob = q >= hi ? sw->a.ecn_pmax : sw->a.ecn_pmax * (q - lo) / (hi - lo);
	/* Draw only strictly between 0 and 1: the stream then depends only on
	 * the queues that mark by chance. */
	if (prob <= 0 || (prob < 1 && rng_unit(&sw->rng) >= prob))
		return;
	p->ecn = WIRE_ECN_CE;
	port->cls[0].c.ecn_marked++;
}

/* The common case inline, the queue short; above EcnKmin x limit out of
 * line (doubles and the random stream). */
static inline void ecn_mark(struct sw *sw, struct sw_port *port, struct pkt *p)
{
	if (port->cls[0].q.bytes > port->ecn_lo /* q > lo */ && is_ect(p->ecn))
		ecn_mark_above(sw, port, p);
}

static bool trimmable(const struct sw *sw, const struct pkt *p)
{
	return wire_is_data(p) && !p->trimmed &&
	       (p->dscp == sw->a.dscp_trimmable || p->dscp == sw->a.dscp_trimmable_retx);
}

/* Seed, Buffer under the UET policy: a trimmable retransmission may use
 * 1.5 x the egress queue limit.  `cls` is the frame's dscp_class entry,
 * `bytes` the queue's with the frame.  Within the limit at once: the
 * bigger limit computed only past it (callgrind, 8 hosts: 4 instructions
 * a hop fewer). */
static inline bool within_limit(const struct sw_port *port, uint8_t cls, uint64_t bytes)
{
	return bytes <= port->limit ||
	       (cls & SW_DSCP_RETX && bytes <= port->limit + port->limit / 2);
}

static inline __attribute__((always_inline)) void port_kick(struct sw_port *port, ps_t now);
static inline __attribute__((always_inline)) bool
port_start_at_once(struct sw_port *port, int tc, struct pkt *p, uint32_t len, ps_t now);

/* docs/protocol.md §9, admission: a packet that does not fit its queue is
 * trimmed when trimming is active and its codepoint is trimmable; the cut
 * packet is re-marked trimmed, or trimmed-last-hop on the hop to a NIC, and
 * offered to TC1.  Otherwise, or when TC1 is full too, it is dropped.
 * Returns the cut length, TC1's, or 0 once dropped (a cut frame keeps
 * its headers): by a pointer, the length lived on the stack every hop
 * (callgrind, 8 hosts: 5,582 -> 5,574 instructions a data packet).  Out of
 * line: a hop that fits pays nothing for it (issue 16). */
static __attribute__((noinline)) uint32_t admit_over(struct sw *sw, struct sw_port *port, int tc,
						     struct pkt *p)
{
	uint32_t len;

	if (!sw->trim_active || !trimmable(sw, p)) {
		drop(sw, port, tc, p, SW_DROP_QUEUE_FULL);
		return 0;
	}
	port->cls[tc].c.trimmed++;
	wire_trim(p);
	p->dscp = port->faces_nic ? sw->a.dscp_trimmed_last_hop : sw->a.dscp_trimmed;
	len = wire_len(p);
	INVARIANT(len > 0);
	p->sent_len = (uint16_t)len; /* as it leaves: the queue serves it unread */
	if ((uint64_t)port->cls[TC_TRIMMED].q.bytes + len > port->limit) {
		drop(sw, port, TC_TRIMMED, p, SW_DROP_TRIM_QUEUE_FULL);
		return 0;
	}
	return len;
}

static inline __attribute__((always_inline)) void admit(struct sw *sw, struct sw_port *port,
							uint8_t cls, struct pkt *p, ps_t now)
{
	uint32_t len = p->sent_len;
	int tc = cls & SW_DSCP_TC;

	if (within_limit(port, cls, (uint64_t)port->cls[tc].q.bytes + len)) {
		if (tc == 0)
			ecn_mark(sw, port, p);
	} else if ((len = admit_over(sw, port, tc, p))) {
		tc = TC_TRIMMED;
	} else {
		return;
	}
	if (port_start_at_once(port, tc, p, len, now))
		return;
	/* A queue that cannot grow (out of memory) drops, named apart from a
	 * full one (issue 9, item 13: every drop named correctly). */
	if (!push(port, tc, p, len)) {
		drop(sw, port, tc, p, SW_DROP_NO_MEMORY);
		return;
	}
	port_kick(port, now);
}

/* ---- the port ----------------------------------------------------------- */

/* TC1 against TC0 by deficit round robin, weights TrimmedClassWeight and
 * its complement (docs/protocol.md §9), both waiting: a class alone is
 * served at once (pick_class). */
static __attribute__((noinline)) int drr_pick(struct sw *sw, struct sw_port *port)
{
	for (;;) {
		int c = port->drr_cur;
		uint32_t len = port->cls[c].q.ring[port->cls[c].q.head].len;
		if (port->drr_fresh) {
			port->deficit[c] += sw->quantum[c];
			port->drr_fresh = false;
		}
		if (len <= port->deficit[c]) {
			port->deficit[c] -= len;
			return c;
		}
		port->drr_cur = (uint8_t)(c ^ 1);
		port->drr_fresh = true;
	}
}

/* TC7..TC2 by strict priority, highest first (docs/protocol.md §9: TC2 strict),
 * then TC1 and TC0.  -1 when every queue is empty. */
static inline __attribute__((always_inline)) int pick_class(struct sw *sw, struct sw_port *port)
{
	uint8_t strict = port->nonempty & 0xFC;

	if (strict)
		return 31 - __builtin_clz(strict);
	/* a class alone inline, both by the round (drr_pick, out of line):
	 * the call cost a lone class's pick some ten instructions, and
	 * pick_class is inline by force, GCC's inliner having left it out
	 * once (callgrind, 8 hosts: 35 instructions a data packet) */
	switch (port->nonempty & 3) {
	case 0:
		return -1;
	case 1:
		port->deficit[1] = 0;
		return 0;
	case 2:
		port->deficit[0] = 0;
		return 1;
	}
	return drr_pick(sw, port);
}

/* What a link verdict costs the frame; SW_DROP_COUNT: it passes. */
static enum sw_drop verdict_drop(enum link_verdict v)
{
	switch (v) {
	case LINK_LOST:
		return SW_DROP_LINK_LOST;
	case LINK_DOWN:
		return SW_DROP_LINK_DOWN;
	case LINK_DROP_RULE:
		return SW_DROP_LINK_RULE;
	case LINK_PASS:
		break;
	}
	return SW_DROP_COUNT;
}

static void port_free(void *arg, ps_t now);

ps_t sw_tx_floor(const struct sw *sw, int port, ps_t from)
{
	return egress_tx_floor(&sw->ports[port].out, from);
}

/* The frame is handed over when its serialization starts, with its arrival
 * time (core/egress.h), and the port needs an event at its end only when
 * frames are waiting: an idle fabric costs one event per hop.  A port set
 * down after a frame's serialization began does not recall it.  Inline
 * in both callers (port_start, port_start_at_once), which run on every
 * hop: left out of line by GCC, its call cost more than the ring saves.
 * `queued`: the port's nonempty, read by the caller (none, a constant,
 * for port_start_at_once) and the same after the host's transmit, which
 * does not call the switch back (sw_host): nothing read again after the
 * call, which ends a frame started at once (callgrind, 8 hosts: 5,625 ->
 * 5,603 instructions a data packet). */
static inline __attribute__((always_inline)) void port_send(struct sw_port *port, int tc,
							    struct pkt *p, uint32_t len, ps_t now,
							    bool arriving, uint8_t queued)
{
	struct sw *sw = port->sw;
	enum sw_drop why = SW_DROP_COUNT;
	ps_t arrival;
	bool able = false;

	/* Frames wait: the next starts when this one ends.  Its arrival at
	 * the far end pulls that start (sw_params.pull_before) instead of an
	 * event, on a link that carries every frame (no verdict to draw, no
	 * drop to free a packet at another time).  Such a port's link has
	 * no faults (port_init): up, it carries the frame without asking,
	 * egress_start without its two tests (callgrind, 8 hosts: 2
	 * instructions a hop fewer). */
	if (port->pull & SW_PULL_ABLE && !port->down) {
		port->out.busy_until = now + egress_serialization(&port->out, len);
		arrival = port->out.busy_until + port->out.delay;
		able = port->out.busy_until < sw->pull_before;
	} else {
		why = verdict_drop(egress_start(&port->out, p, len, port->down, now, &arrival));
		if (port->down)
			why = SW_DROP_PORT_DOWN;
	}
	/* `arriving`: a frame for the port is being forwarded and mostly
	 * queues behind this one (port_catch_up_arriving) */
	bool pull = (queued || arriving) && able;
	port->pull =
	    (uint8_t)((port->pull & ~(SW_PULL_SENT | SW_PULL_MARKED)) | (pull	? SW_PULL_MARKED
									 : able ? SW_PULL_SENT
										: 0));
	if (why == SW_DROP_COUNT) {
		sw->host.transmit(sw->host.ctx, sw_port_index(port), p, arrival, pull);
	} else {
		drop(sw, port, tc, p, why);
	}
	if (queued) {
		port->wake_pending = true;
		/* catching up (port_catch_up), a frame that ended already
		 * starts in its loop; a daemon's (no pulls) is never late */
		if (pull || (sw->pull_before && port->out.busy_until < events_now(sw->ev)))
			port->pull |= SW_PULL_WAITING;
		else
			events_schedule(sw->ev, port->out.busy_until, port_free, port);
	}
}

/* The port's next frame, if any, starts at now.  Inline by force in
 * port_catch_up, where nearly every queued frame starts under pulls: its
 * call and six saved registers were 16 instructions a frame (callgrind,
 * 8 hosts: 46,727 of 61,422 hops); out of line elsewhere (port_start). */
static inline __attribute__((always_inline)) void port_start_inline(struct sw_port *port, ps_t now,
								    bool arriving)
{
	int tc = pick_class(port->sw, port);
	uint32_t len;
	struct pkt *p;

	if (tc < 0)
		return;
	p = pop(port, tc, &len);
	port_send(port, tc, p, len, now, arriving, port->nonempty);
}

static __attribute__((noinline)) void port_start(struct sw_port *port, ps_t now)
{
	port_start_inline(port, now, false);
}

/* A frame for a port that is free, with nothing queued and no port_free
 * pending, starts at once: what queueing it and picking it again would
 * do, counters and the deficits included (pick_class finds its class
 * alone), without the ring.  False when the port is not in that state. */
static inline __attribute__((always_inline)) bool
port_start_at_once(struct sw_port *port, int tc, struct pkt *p, uint32_t len, ps_t now)
{
	if (port->nonempty || port->wake_pending || !egress_idle(&port->out, now))
		return false;
	count_enqueued(&port->cls[tc], len);
	if (tc < 2) /* drr_pick, one class waiting */
		port->deficit[tc ^ 1] = 0;
	count_dequeued(port, tc, len);
	port_send(port, tc, p, len, now, false, 0);
	return true;
}

static void port_free(void *arg, ps_t now)
{
	struct sw_port *port = arg;

	port->wake_pending = false;
	port_start(port, now);
}

/* The frames that wait for a pull (SW_PULL_WAITING) and would have started
 * before now start, each at the end of the one before, as port_free would
 * have started them: nothing read the port since (every reader catches
 * up first), and one due at now itself waits for what runs before it at
 * now (arrivals; host events scheduled earlier: pull_ser_below). */
static inline __attribute__((always_inline)) void catch_up(struct sw_port *port, ps_t now,
							   bool arriving)
{
	while (port->pull & SW_PULL_WAITING && port->out.busy_until < now) {
		port->pull &= (uint8_t)~SW_PULL_WAITING;
		port->wake_pending = false;
		port_start_inline(port, port->out.busy_until, arriving);
	}
}

static __attribute__((noinline)) void port_catch_up(struct sw_port *port, ps_t now)
{
	catch_up(port, now, false);
}

/* The same before a frame for the port is admitted (forward): the last
 * frame it starts goes marked, so that the frame queued behind it needs
 * no pull_last (SW_PULL_MARKED; callgrind, 8 hosts: 11,261 -> 7,761
 * calls, 18 instructions a data packet fewer).  Marked in vain (the
 * frame dropped, or started at once after it), its arrival's sw_pull
 * finds nothing waiting, or a frame sent after it clears the wire's
 * last_marked. */
static __attribute__((noinline)) void port_catch_up_arriving(struct sw_port *port, ps_t now)
{
	catch_up(port, now, true);
}

struct sw_port *sw_port_of(struct sw *sw, int port)
{
	return &sw->ports[port];
}

void sw_pull(struct sw_port *port, ps_t now)
{
	if (port->pull & SW_PULL_WAITING && port->out.busy_until < now)
		port_catch_up(port, now);
}

void sw_settle(struct sw *sw)
{
	ps_t now = events_now(sw->ev);

	for (int i = 0; i < sw->nports; i++)
		if (sw->ports[i].pull & SW_PULL_WAITING)
			port_catch_up(&sw->ports[i], now);
}

/* A frame was queued: start it if the port is free (a frame arriving as
 * the last one ends finds it free: back-to-back frames at equal rates cost
 * no event), else make sure the port looks at its queues when the frame on
 * the wire ends.  Inline by force: GCC split it, and the call of its
 * part cost 4 instructions a data packet (callgrind, 8 hosts). */
static inline __attribute__((always_inline)) void port_kick(struct sw_port *port, ps_t now)
{
	if (port->wake_pending)
		return;
	if (egress_idle(&port->out, now)) {
		port_start(port, now);
		return;
	}
	port->wake_pending = true;
	/* The frame on the wire could have carried a pull (port_send): it
	 * still can, being the link's last, and its arrival (or a reader
	 * before it) starts this one as port_free would have.  At 8 hosts
	 * 11,261 port_free events of 61,422 hops (callgrind). */
	if (port->pull & (SW_PULL_SENT | SW_PULL_MARKED)) {
		port->pull |= SW_PULL_WAITING;
		if (port->pull & SW_PULL_SENT)
			port->sw->host.pull_last(port->sw->host.ctx, sw_port_index(port));
		return;
	}
	events_schedule(port->sw->ev, port->out.busy_until, port_free, port);
}
void sw_port_set_down(struct sw *sw, int port, bool down)
{
	struct sw_port *sp;

	if (port < 0 || port >= sw->nports)
		return;
	sp = &sw->ports[port];
	sw_settle(sw);
	if (sp->down != down)
		sw->ports_down += down ? 1 : -1;
	sp->down = down;
	sw->general = sw->ports_down || !sw->host_macs;
	if (!down)
		return;
	/* A cut fibre: what waits for the port is lost with it. */
	for (int tc = 0; tc < sw->ntc; tc++)
		while (sp->cls[tc].q.n) {
			uint32_t len;
			drop(sw, sp, tc, pop(sp, tc, &len), SW_DROP_PORT_DOWN);
		}
}

/* ---- forwarding ---------------------------------------------------------- */

/* docs/protocol.md §9: route, TTL - 1 (drop at 0), MAC rewrite to the next hop,
 * classify and queue.  The IPv4 checksum is rebuilt with the frame
 * (wire_build), so it stays valid. */
/* The port a frame came in on, NULL when the host named none. */
static struct sw_port *in_port(struct sw *sw, int port)
{
	return port >= 0 && port < sw->nports ? &sw->ports[port] : NULL;
}

void sw_receive(struct sw *sw, int port, struct pkt *p, ps_t now)
{
	p->sent_len = (uint16_t)wire_len(p);
	sw_receive_sent(sw, port, p, now);
}

/* sw_receive_sent's hop.  `general`: some port may be down, or the MACs
 * are the switch's to write (struct sw's general); false, a constant,
 * drops their three tests from the common hop. */
static inline __attribute__((always_inline)) void forward(struct sw *sw, int port, struct pkt *p,
							  ps_t now, bool general)
{
	/* the class and the retransmission bit, read once: a store through p
	 * (a byte) would make the compiler read them again */
	uint8_t cls = sw->dscp_class[p->dscp];
	int tc = cls & SW_DSCP_TC, out;
	struct sw_port *in;

	sw->rx_frames++;
	/* no port of the switch is down: no port to ask (the usual case) */
	if (general && sw->ports_down && (in = in_port(sw, port)) && in->down) {
		drop(sw, in, tc, p, SW_DROP_RX_PORT_DOWN);
		return;
	}
	out = route(sw, p);
	if (out < 0) {
		if ((in = in_port(sw, port)))
			count_drop(in, tc, SW_DROP_NO_ROUTE);
		pkt_put(sw->pool, p);
		return;
	}
	if (p->ttl <= 1) {
		in = in_port(sw, port);
		drop(sw, in ? in : &sw->ports[out], tc, p, SW_DROP_TTL);
		return;
	}
	p->ttl--;
	if (general && sw->ports_down && sw->ports[out].down) {
		drop(sw, &sw->ports[out], tc, p, SW_DROP_PORT_DOWN);
		return;
	}
	/* destination and source MAC, which open the frame, at once */
	_Static_assert(offsetof(struct pkt, dst_mac) == 0 && offsetof(struct pkt, src_mac) == 6,
		       "the MACs open a pkt");
	if (general && !sw->host_macs)
		memcpy(p, sw->ports[out].macs, 12);
	/* a frame due to start (port_catch_up's test inline: the call kept
	 * five of the hop's values on the stack) */
	if (sw->ports[out].pull & SW_PULL_WAITING && sw->ports[out].out.busy_until < now)
		port_catch_up_arriving(&sw->ports[out], now);
	admit(sw, &sw->ports[out], cls, p, now);
}

static __attribute__((noinline)) void forward_general(struct sw *sw, int port, struct pkt *p,
						      ps_t now)
{
	forward(sw, port, p, now, true);
}

/* One test for the three a hop with ports down or MACs to write asks
 * (callgrind, 8 hosts: 7 instructions a hop fewer).  With forward's two
 * copies GCC's inliner left route, admit, push, port_start_at_once and
 * flow_hash out of line, +44 instructions a hop: they are inline by
 * force. */
void sw_receive_sent(struct sw *sw, int port, struct pkt *p, ps_t now)
{
	INVARIANT(p->sent_len == wire_len(p));
	if (sw->general)
		forward_general(sw, port, p, now);
	else
		forward(sw, port, p, now, false);
}

bool sw_icrc(const struct sw *sw)
{
	return sw->icrc;
}

void sw_receive_frame(struct sw *sw, int port, const uint8_t *f, size_t len, ps_t now)
{
	struct pkt *p = pkt_get(sw->pool);
	enum wire_error e;

	if (!p) {
		sw->rx_drop_no_memory++;
		return;
	}
	e = wire_parse(f, len, sw->icrc, p);
	if (e != WIRE_OK) {
		sw->rx_drop_wire[e]++;
		pkt_put(sw->pool, p);
		return;
	}
	if (p->payload) {
		uint64_t off = p->va % WIRE_VA_MSG_STRIDE;
		if (wire_pattern_check(p->payload, p->payload_len, p->src_ip, p->msn, off)) {
			sw->rx_drop_payload++;
			pkt_put(sw->pool, p);
			return;
		}
		p->payload = NULL;
	}
	sw_receive(sw, port, p, now);
}
