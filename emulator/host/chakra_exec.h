/* emulator/host/chakra_exec.h — running a Chakra trace (docs/chakra.md,
 * Execution): each rank's graph in virtual time on its NIC.  A node starts
 * once its control and data dependencies have finished; COMP lasts its
 * duration, METADATA and MEM nodes take no time, COMM_SEND posts its
 * message on a new QP and finishes at MSG_COMPLETE, COMM_RECV finishes
 * when its message has arrived (RECV_COMPLETE, before or after the
 * receive started), and COMM_COLL runs its collective's steps in order,
 * each step finishing when its sends are complete and its receives have
 * arrived.
 *
 * The simulation runs every rank with one executor; a nicd runs its own
 * rank (the trace holds only that rank). */
#ifndef EMULATOR_CHAKRA_EXEC_H
#define EMULATOR_CHAKRA_EXEC_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "chakra/chakra.h"
#include "core/events.h"
#include "core/hmap.h"
#include "core/records.h"
#include "nicd/nic.h"

struct chakra_exec;
struct cx_rank;

enum cx_state { CX_WAITING, CX_RUNNING, CX_DONE };

struct cx_node {
	struct cx_rank *rk;
	uint32_t i;
	uint32_t deps_left;
	enum cx_state state;
	uint32_t step;	  /* COLL: the step running */
	uint32_t pending; /* messages of the step (or node) not yet finished */
	ps_t start, end;
	/* What finished last before it could finish: a node of this rank
	 * (via_rank == its rank) or the sending node of a message that came
	 * later than the receive started; for the critical path. */
	int via_rank;
	int64_t via_node; /* -1: none */
};

struct cx_msg {
	ps_t begin, end; /* send: posted, MSG_COMPLETE; receive: reached, arrived */
	ps_t send_complete;
	uint64_t retransmissions;
	bool begun, arrived, done, failed, refused, verified;
	bool evicted; /* failed: its receiving QP was evicted (MaxQps) */
};

struct cx_rank {
	struct chakra_exec *x;
	const struct chakra_rank *r;
	int node; /* the NIC it runs on */
	struct cx_node *nodes;
	struct cx_msg *msgs;
	uint32_t *dep_first, *dep_list; /* dependents of node i: list[first[i] .. first[i+1]) */
	struct hmap by_index;		/* (peer, index, direction) -> message + 1 */
	uint32_t nodes_done;
	ps_t finish;
};

struct chakra_exec {
	const struct topology *t;
	const struct chakra_trace *tr;
	struct events *q;
	struct nic *(*nic_of)(void *ctx, int node);
	void *ctx;
	struct cx_rank *ranks;	  /* [tr->nloaded] */
	struct cx_rank **by_node; /* topology node -> its rank, or NULL */
	struct hmap rank_by_ip;	  /* NIC address -> rank + 1 */
	uint64_t nodes, nodes_done;
	uint64_t sends, sends_finished, receives, receives_done;
	uint64_t posted;  /* sends posted (sends_finished counts their ends) */
	uint64_t pending; /* node starts and COMP ends scheduled, not yet run */
};

extern const char CHAKRA_CSV_HEADER[];

bool chakra_exec_init(struct chakra_exec *x, const struct topology *t,
		      const struct chakra_trace *tr, struct events *q,
		      struct nic *(*nic_of)(void *ctx, int node), void *ctx);
void chakra_exec_destroy(struct chakra_exec *x);

/* Start every node with no dependency at virtual time 0. */
void chakra_exec_start(struct chakra_exec *x);

/* The NIC of topology node `node` reports a completion or a failure;
 * false when it is no message of the trace (a `ctl post`, an external
 * sender's), which the caller's driver then follows. */
bool chakra_exec_completion(struct chakra_exec *x, int node, enum nic_completion what,
			    const struct nic_msg_info *m, ps_t now);
bool chakra_exec_failed(struct chakra_exec *x, int node, const struct nic_msg_info *m, ps_t now);

/* Whether the trace sends a message with this index from node src to dst. */
bool chakra_exec_sends(const struct chakra_exec *x, int src, int dst, uint64_t index);

/* Every node of every rank run here has finished. */
bool chakra_exec_done(const struct chakra_exec *x);

/* When the last node finished (so far). */
ps_t chakra_exec_end(const struct chakra_exec *x);

/* Not done, and nothing left that could move it: no node about to start
 * or end, no message in flight (a deadlock, or a failed message). */
bool chakra_exec_stalled(const struct chakra_exec *x);

/* chakra.csv: one row per node and one per message of a collective. */
void chakra_exec_write_nodes(const struct chakra_exec *x, struct csv *c);

/* messages.csv rows (driver.h's columns): each message once, by id; with
 * only one rank loaded, the columns its end knows. */
void chakra_exec_write_messages(const struct chakra_exec *x, struct csv *c);

/* Nodes that did not finish, and what each waits for: one line each on
 * `out` (a deadlock, a failed message, a stop). */
void chakra_exec_report(const struct chakra_exec *x, FILE *out);

/* Per-rank finish times and the critical path, for the summary. */
void chakra_exec_summary(const struct chakra_exec *x, FILE *out);

/* Messages: count, completed, failed, unverified (for the summary). */
void chakra_exec_count(const struct chakra_exec *x, uint64_t *messages, uint64_t *completed,
		       uint64_t *failed, uint64_t *unverified, ps_t *fct, size_t *nfct);

#endif
