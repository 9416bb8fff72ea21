/* emulator/core/link.h — what a link does to the frames its sending end puts on
 * it: seeded random loss, down windows and exact `drop` rules
 * (docs/topology.md, Topology file).  The kernel has no netem here, so the
 * engine on the sending end asks this before it hands a frame over. */
#ifndef EMULATOR_LINK_H
#define EMULATOR_LINK_H

#include <stdbool.h>
#include <stdint.h>

#include "attrs.h"
#include "rng.h"
#include "topology.h"
#include "wire.h"

enum link_verdict { LINK_PASS, LINK_LOST, LINK_DOWN, LINK_DROP_RULE };

/* One direction of a link, as its sending end sees it. */
struct link_end {
	const struct link_attrs *attrs;
	const struct topology *topo; /* to name the nodes of drop rules */
	uint64_t rate;		     /* bits/s this end serializes at */
	ps_t delay;
	struct rng rng;
	int64_t drops_left[LINK_MAX_DROPS];
	uint64_t lost, down_dropped, rule_dropped;
};

void link_end_init(struct link_end *l, const struct topology *t, int link, int from_node);

/* Whether a frame on the link during [start, end) reaches the far end. */
enum link_verdict link_verdict(struct link_end *l, const struct pkt *p, ps_t start, ps_t end);

/* Whether the link is down at t (both ways). */
bool link_is_down(const struct link_attrs *a, ps_t t);

/* Zero lookahead (docs/promises.md): false with one line in err naming the
 * first link between two daemons (not an external endpoint) whose delay is
 * 0; `run`, `up` and the daemons refuse such a topology. */
bool link_lookahead_check(const struct topology *t, char *err, size_t errlen);

#endif
