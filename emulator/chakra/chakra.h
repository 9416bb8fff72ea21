/* emulator/chakra/chakra.h — MLCommons Chakra execution traces as workloads
 * (docs/chakra.md): one graph per rank, read from NAME.<rank>.et with
 * protobuf-c, checked across ranks, and planned into point-to-point
 * messages, each with the message index both ends derive alone.
 *
 * A trace is loaded whole by `mrcemu sim` and by the launcher of `mrcemu
 * run` (every rank's file, checked before anything starts), and one rank
 * at a time by a nicd (its own file is all it needs: the plan of a rank
 * depends only on its own nodes, the number of ranks and the topology's
 * algorithm choices). */
#ifndef EMULATOR_CHAKRA_H
#define EMULATOR_CHAKRA_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "core/time.h"
#include "core/topology.h"

/* Chakra's NodeType (docs/chakra.md, Format). */
enum chakra_type {
	CHAKRA_METADATA = 1,
	CHAKRA_MEM_LOAD,
	CHAKRA_MEM_STORE,
	CHAKRA_COMP,
	CHAKRA_SEND,
	CHAKRA_RECV,
	CHAKRA_COLL,
};

/* Chakra's CollectiveCommType. */
enum chakra_coll {
	CHAKRA_ALL_REDUCE,
	CHAKRA_REDUCE,
	CHAKRA_ALL_GATHER,
	CHAKRA_GATHER,
	CHAKRA_SCATTER,
	CHAKRA_BROADCAST,
	CHAKRA_ALL_TO_ALL,
	CHAKRA_REDUCE_SCATTER,
	CHAKRA_REDUCE_SCATTER_BLOCK,
	CHAKRA_BARRIER,
};

/* How a collective is made of messages (topology.h coll_algo). */
enum chakra_algo { CHAKRA_DEFAULT, CHAKRA_RING, CHAKRA_DIRECT, CHAKRA_TREE };

/* Message indices are 1..CHAKRA_MAX_INDEX, so that src x 10^12 + dst x 10^6 +
 * index names a message in the records (chakra.c). */
#define CHAKRA_MAX_INDEX 999999
#define CHAKRA_MAX_RANKS 65536

struct chakra_node {
	uint64_t id;
	char *name;
	enum chakra_type type;
	uint64_t *deps; /* control then data: ids as read, then indices into
			   the rank's nodes (chakra_read.c resolve_deps) */
	uint32_t ndeps;
	ps_t duration;	/* COMP: duration_micros */
	uint64_t bytes; /* comm_size */
	int peer;	/* SEND: comm_dst, RECV: comm_src (ranks) */
	uint64_t tag;	/* comm_tag */
	enum chakra_coll coll;
	enum chakra_algo algo;
	int root;	    /* broadcast, reduce, gather, scatter: comm_root or 0 */
	uint32_t coll_seq;  /* COLL: its order among the rank's collectives */
	uint32_t first_msg; /* its messages: rank->msgs[first_msg ..] */
	uint32_t nmsgs;
	uint32_t nsteps; /* COLL: the algorithm's steps */
};

/* One message a rank sends or receives: a COMM_SEND or COMM_RECV node's,
 * or one step of a collective's.  Messages of a collective are in step
 * order. */
struct chakra_msg {
	uint32_t node; /* the node it belongs to */
	int32_t step;  /* collective step, -1 for SEND/RECV */
	int peer;      /* the other rank */
	bool send;
	uint64_t bytes;
	uint64_t key[3]; /* (0, tag, occurrence) or (1, collective, position) */
	uint32_t index;	 /* the message index on the wire (docs/chakra.md) */
	uint64_t id;	 /* messages.csv id: src·10^12 + dst·10^6 + index */
};

struct chakra_rank {
	char path[4200];
	int rank;
	struct chakra_node *nodes;
	uint32_t nnodes;
	struct chakra_msg *msgs;
	uint32_t nmsgs;
	struct chakra_msg **order; /* msgs by (direction, peer, key) */
};

struct chakra_trace {
	int nranks;		   /* files NAME.0.et .. NAME.<nranks-1>.et */
	struct chakra_rank *ranks; /* [nranks], or only one (chakra_load_rank) */
	int nloaded;		   /* entries of ranks */
};

/* Every rank's file of t->chakra: read, each graph checked, then checked
 * across ranks (every receive has its send, every send its receive,
 * collectives agree) and planned.  On error one line "FILE: node ID
 * (NAME): reason" in err. */
bool chakra_load(const struct topology *t, struct chakra_trace *tr, char *err, size_t errlen);

/* Only the file of `rank` (a nicd): read, checked and planned alone. */
bool chakra_load_rank(const struct topology *t, int rank, struct chakra_trace *tr, char *err,
		      size_t errlen);

void chakra_free(struct chakra_trace *tr);

/* The rank running on topology node `node`, or -1. */
int chakra_rank_of(const struct topology *t, int node);

/* ---- writing (chakra_write.c): `mrcemu export chakra`, tests ---------------- */

/* A node to write: the attributes mrcemu reads, as int64 values. */
struct chakra_spec {
	uint64_t id;
	const char *name;
	enum chakra_type type;
	const uint64_t *deps; /* written as ctrl_deps */
	size_t ndeps;
	uint64_t duration_us; /* COMP */
	uint64_t bytes;	      /* comm_size (SEND, RECV, COLL) */
	int peer;	      /* comm_dst of a SEND, comm_src of a RECV */
	uint64_t tag;	      /* comm_tag of a SEND or RECV */
	enum chakra_coll coll;
};

/* A rank's file: the GlobalMetadata (schema version "0.0.4", as ASTRA-sim's
 * examples), then nodes, each length-delimited.  NULL on error (errno). */
FILE *chakra_write_open(const char *path);
bool chakra_write_node(FILE *f, const struct chakra_spec *n);
/* Any message, length-delimited (tests write malformed streams with it). */
bool chakra_write_raw(FILE *f, const uint8_t *msg, size_t len);

/* ---- internal to chakra*.c --------------------------------------------------- */

/* Read and check one file into r (chakra_read.c). */
bool chakra_read(const char *path, int rank, int nranks, struct chakra_rank *r, char *err,
		 size_t errlen);

/* Append the messages of collective node `n` of rank r (chakra_coll.c). */
bool chakra_coll_plan(struct chakra_rank *r, struct chakra_node *n, int nranks);

/* Room for one more message of r, or NULL (out of memory). */
struct chakra_msg *chakra_msg_add(struct chakra_rank *r);

/* Names, for records and errors. */
const char *chakra_type_name(enum chakra_type t);
const char *chakra_coll_name(enum chakra_coll c);

#endif
