/* nicd/nic.h — the MRC NIC engine: the seed's whole data path with no
 * sockets and no clock (docs/architecture.md, The engine contract).
 *
 * The engine takes frames (nic_receive) and doorbells (nic_post_message) at
 * a given virtual time, schedules its own work on the shared event queue,
 * and gives frames back through its host's transmit callback together with
 * their arrival time at the far end of the link.  Completions are reported
 * through the host's completion callback; records go to the CSV writers the
 * host hands over. */
#ifndef NICD_NIC_H
#define NICD_NIC_H

#include <stdbool.h>
#include <stdint.h>

#include "core/attrs.h"
#include "core/counter.h"
#include "core/events.h"
#include "core/link.h"
#include "core/records.h"
#include "core/wire.h"

struct nic;

/* Seed, Completion; docs/protocol.md §10. */
enum nic_completion { SEND_COMPLETE, RECV_COMPLETE, MSG_COMPLETE };

/* What a completion tells the host about a message. */
struct nic_msg_info {
	uint64_t msg_id; /* the workload's id; the receiver reads it from
			    RETH's VA (docs/protocol.md §1: the message index) */
	uint32_t src_ip, dst_ip;
	uint32_t local_qpn, remote_qpn;
	uint64_t bytes;
	ps_t posted;		  /* sender side */
	uint64_t retransmissions; /* sender side: timeout + NACK + SACK gap */
	bool verified;		  /* receiver side: every byte accounted for and,
				     where bytes exist, equal to the pattern */
	const char *why;	  /* a failure reported by the receiving side (its QP
				     was evicted), or NULL: the sender's QP failed */
};

struct nic_host {
	void *ctx;
	/* A frame leaves the port; it reaches the far end at `arrival`.  The
	 * host owns p from here (it must pkt_put it when done). */
	void (*transmit)(void *ctx, struct pkt *p, ps_t arrival);
	/* A message reached a completion. */
	void (*completion)(void *ctx, enum nic_completion what, const struct nic_msg_info *m,
			   ps_t now);
	/* A message's QP entered the error state, or its receiving QP was
	 * evicted (m->why says so): it will never complete. */
	void (*failed)(void *ctx, const struct nic_msg_info *m, ps_t now);
};

/* The CSV records a NIC writes; any may be NULL (docs/records.md, Records).
 * In the simulation every NIC shares one writer per record. */
struct nic_records {
	struct csv *stats;   /* mrc-transport-stats.csv */
	struct csv *events;  /* mrc-events.csv */
	struct csv *monitor; /* mrc-monitor.csv */
	struct csv *cc;	     /* mrc-cc.csv */
};

/* Headers of those records, for whoever opens them. */
const char *nic_stats_header(void);
extern const char NIC_EVENTS_HEADER[];
extern const char NIC_MONITOR_HEADER[];
extern const char NIC_CC_HEADER[];

struct nic_params {
	const char *name; /* node name, for records */
	const struct nic_attrs *attrs;
	struct link_end *link; /* the port's link, sending direction */
	uint64_t rate;	       /* the port's: topology_port_rate (§12 rule 13) */
	const uint8_t *mac, *peer_mac;
	uint64_t seed; /* topology seed */
	struct events *events;
	/* Shared by the engines of one queue, so that their retransmission
	 * timers share events (core/timers.h); NULL: the NIC keeps its own. */
	struct timers *timers;
	struct pkt_pool *pool;
	struct nic_host host;
	struct nic_records records;
	/* Before this time the engine may keep some of its books without
	 * their events, applying each effect where its event would have run
	 * (nicd/pcie.c: the writes' ends), when the host promises two things:
	 * frames reach the port no closer together than their serialization
	 * at its rate (each end of a link serializes at the link's rate), and
	 * it asks nothing of an event's time before then (the simulation's
	 * run stops at a frame's arrival, or at its first event at or past
	 * SIM_DEFAULT_LIMIT).  0: every event is kept (the daemons, whose
	 * frames may come from anywhere). */
	ps_t elide_before;
};

struct nic *nic_new(const struct nic_params *p);
void nic_free(struct nic *nic);

/* The doorbell: creates the sending side of a new QP for one RDMA Write of
 * `bytes` to dst_ip and queues it (seed, Queue pairs and messages).  msg_id
 * is the message index of docs/protocol.md §1 (RETH VA = 0x1000_0000_0000 x id +
 * offset, METH MSN = its low 16 bits), so both ends name the message alike:
 * 1 <= msg_id <= NIC_MAX_MSG_ID.  Returns false if refused (counted). */
#define NIC_MAX_MSG_ID WIRE_MAX_MSG_INDEX
bool nic_post_message(struct nic *nic, uint32_t dst_ip, uint64_t bytes, uint64_t msg_id, ps_t now);

/* A frame has arrived at the port.  The engine owns p from here. */
void nic_receive(struct nic *nic, struct pkt *p, ps_t now);

/* The same for a frame an engine handed over (its transmit): p->sent_len
 * holds its length on the wire, not computed again (issue 16). */
void nic_receive_sent(struct nic *nic, struct pkt *p, ps_t now);

/* Parse a frame from a real port and receive it; malformed frames are
 * counted by reason (rx_drop_<reason>) and dropped. */
void nic_receive_frame(struct nic *nic, const uint8_t *frame, size_t len, ps_t now);

/* Write the final transport-stats row and report every message that did
 * not complete, and why, to `report` (may be NULL). */
void nic_finish(struct nic *nic, ps_t now, FILE *report);

/* What the NIC knows of each message it posted that is still open (its
 * retransmissions so far), for the records at the end of a run. */
void nic_each_open(const struct nic *nic, void (*fn)(void *ctx, const struct nic_msg_info *m),
		   void *ctx);

/* Messages this NIC posted that have not reached MSG_COMPLETE. */
uint64_t nic_open_messages(const struct nic *nic);

/* QPs whose monitor rows are kept for the qp_error trigger (at most the
 * open sending QPs), for tests. */
uint64_t nic_monitor_kept(const struct nic *nic);

/* Write this NIC's samples.csv rows (emulator/host/samples.h). */
void nic_sample(struct nic *nic, struct csv *c, ps_t now);

/* Whether every count the engine keeps beside its tables equals what they
 * hold (nicd/check.c): NULL, or the first that does not, written in why.
 * Built with MRCEMU_CHECK_INVARIANTS (`make check`), the engine checks at
 * every QP close and at the end, and aborts with the place. */
const char *nic_check(const struct nic *nic, char *why, size_t len);

/* The i-th counter of the NIC (core/counter.h): the mrc-transport-stats
 * columns total_<name> and the `stats` reply; false past the last. */
bool nic_counter_at(const struct nic *nic, size_t i, struct counter *c);

/* A counter by name (through nic_counter_at), UINT64_MAX if there is none. */
uint64_t nic_counter(const struct nic *nic, const char *name);

/* The port's state, for daemons and the control socket. */
void nic_port_set_down(struct nic *nic, bool down);

/* The earliest virtual arrival at the far end of any frame the NIC can still
 * hand over, when no event before `from` is left to run (docs/promises.md):
 * the frame being serialized arrives at its own time (it is handed over at
 * the end of its serialization, seed: Packets on the wire); one not yet
 * started no earlier than from + a minimum frame's serialization + delay. */
ps_t nic_tx_floor(const struct nic *nic, ps_t from);

#endif
