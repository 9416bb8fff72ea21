/* emulator/host/driver.h — the workload driver: posts a workload's messages at
 * their time once their dependencies have completed, follows each
 * message's completions, and writes messages.csv (docs/records.md).
 *
 * The simulation drives every NIC with one driver (node -1); a nicd daemon
 * drives its own NIC (node = its index) and knows the sending columns of
 * the messages it posts and the receiving columns of those it receives;
 * `mrcemu run` merges the daemons' rows into one messages.csv. */
#ifndef EMULATOR_DRIVER_H
#define EMULATOR_DRIVER_H

#include <stdbool.h>
#include <stdint.h>

#include "core/events.h"
#include "core/hmap.h"
#include "core/records.h"
#include "core/topology.h"
#include "core/workload.h"
#include "nicd/nic.h"

struct driver;

/* What posted a message: messages.csv's `source` column (docs/records.md). */
enum driver_source {
	DRIVER_SOURCE_WORKLOAD, /* a row of the workload file */
	DRIVER_SOURCE_CHAKRA,	/* a Chakra trace */
	DRIVER_SOURCE_CTL,	/* `mrcemu ctl NODE post` */
	DRIVER_SOURCE_EXTERNAL, /* an external endpoint (a generator) */
	DRIVER_SOURCE_UNKNOWN,	/* a receiver that cannot tell: its sender's row says */
};

const char *driver_source_name(enum driver_source s);

/* Why a message failed: messages.csv's `failure` column (docs/records.md). */
enum driver_failure {
	DRIVER_FAILURE_NONE,
	DRIVER_FAILURE_REFUSED,	   /* its NIC refused the post */
	DRIVER_FAILURE_QP_ERROR,   /* its sending QP entered the error state */
	DRIVER_FAILURE_QP_EVICTED, /* its receiving QP was evicted (MaxQps:
				      docs/protocol.md §12 rule 11) */
	DRIVER_FAILURE_COUNT
};

/* The column's word ("" for none), and back (false: no such word). */
const char *driver_failure_name(enum driver_failure f);
bool driver_failure_parse(const char *s, enum driver_failure *f);

/* The summary's reason for a message that did not complete verified, from
 * what its messages.csv row says; NULL when it did. */
const char *driver_why(enum driver_failure f, bool posted, bool sent, bool done, bool verified);

struct driver_msg {
	struct driver *d;
	const struct workload_msg *w; /* the workload's row, or `own` */
	struct workload_msg own;      /* a message from elsewhere (driver_post) */
	enum driver_source source;
	long *dependents; /* messages whose `after` names this one */
	int ndependents, deps_left;
	ps_t posted, send_complete, recv_complete, complete;
	uint64_t retransmissions;
	enum driver_failure failure; /* known here, from either side */
	bool is_posted, sent, received, done, failed, verified;
};

struct driver {
	const struct topology *t;
	const struct workload *w;
	struct events *q;
	int node; /* -1: every NIC */
	struct nic *(*nic_of)(void *ctx, int node);
	void *ctx;
	struct driver_msg *msgs;   /* the workload's, in its order */
	struct driver_msg **extra; /* then the others, as they appear */
	size_t nextra;
	struct hmap by_id;		  /* workload id -> msg (ids are unique) */
	struct hmap extra_by_key;	  /* (source node, id) -> msg: a message
					     index names a message only with its
					     sender (docs/protocol.md §1) */
	uint64_t sends, sends_finished;	  /* messages this driver posts */
	uint64_t receives, receives_done; /* messages its NIC(s) receive */
};

extern const char DRIVER_MESSAGES_HEADER[];

bool driver_init(struct driver *d, const struct topology *t, const struct workload *w,
		 struct events *q, int node, struct nic *(*nic_of)(void *ctx, int node), void *ctx);
void driver_destroy(struct driver *d);

/* Schedule the posts of every message with no dependency. */
void driver_start(struct driver *d);

/* Post a message that no workload row holds (`ctl post`) from node src
 * at `at`, and follow it like the workload's, so it gets its messages.csv
 * row marked with its source.  NULL when out of memory or id is taken
 * (driver_id_taken). */
struct driver_msg *driver_post(struct driver *d, enum driver_source source, uint64_t id, int src,
			       int dst, uint64_t bytes, ps_t at);

/* Whether message index id cannot name a new message from node src: a
 * workload row has it (whatever its sender: every daemon knows the whole
 * workload, and ids stay unique in the merged messages.csv of a sender),
 * or a message from src already followed here has it. */
bool driver_id_taken(const struct driver *d, int src, uint64_t id);

/* Feed the NICs' completion and failure callbacks here. */
void driver_completion(struct driver *d, enum nic_completion what, const struct nic_msg_info *m,
		       ps_t now);
void driver_failed(struct driver *d, const struct nic_msg_info *m, ps_t now);

/* `mrcemu run` relays a receiving daemon's failed receive (its QP evicted)
 * to the sending daemon (docs/control.md): the message
 * from this driver's node to dst with index id fails for reason f, as
 * driver_failed would have failed it in `mrcemu sim`, where one driver sees
 * both ends.  False when this node sends no such message. */
bool driver_fail_sent(struct driver *d, int dst, uint64_t id, enum driver_failure f);

/* At the end, for nic_each_open: a message still open keeps the
 * retransmissions its NIC counted so far, also one failed because its
 * receiving QP was evicted (its sending QP retransmits on). */
void driver_open(void *ctx, const struct nic_msg_info *m);

/* Every message this driver posts has completed or failed. */
bool driver_done(const struct driver *d);

/* One messages.csv row per message the driver knows (all, or those its
 * node sends or receives), whatever posted it: the workload's in its order,
 * then the others in the order they appeared. */
void driver_write_messages(const struct driver *d, struct csv *c);

/* Report on `out` each message that did not complete, and why. */
void driver_report(const struct driver *d, FILE *out);

#endif
