/* emulator/daemon/daemon.h — what nicd and switchd share (docs/architecture.md,
 * Daemons; the daemon side of the launcher contract): arguments, the
 * topology and the node, one real port per link, the scaled clock, a libev
 * loop (a watcher per port, a timerfd for the next engine deadline, signal
 * watchers, the control socket), stamped and promise frames in and out,
 * lateness, and the per-node records.
 *
 * A daemon is one process of a conservative parallel discrete-event
 * simulation whose messages are the real frames on its links
 * (docs/promises.md).  Every frame to another daemon carries its virtual
 * arrival time and the link's sequence number in a trailer; when a daemon
 * has nothing to send on a port but can promise more, it sends a promise
 * frame: no frame below P will come on this link any more.  A daemon's safe
 * time S is the least promise of its ports; it runs every event earlier than
 * S, in the order of docs/protocol.md §12 rule 16, and no other, so a frame can
 * never arrive behind an event already run.  With a finite scale, an event
 * also waits for its wall time (virtual time never runs ahead of
 * (wall - epoch) / scale); with scale "max" (0) it runs as soon as it is
 * safe.  A port facing an external endpoint makes no promises: it counts as
 * having promised the virtual time of its last read, and its frames are
 * stamped when they were received. */
#ifndef EMULATOR_DAEMON_H
#define EMULATOR_DAEMON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "core/events.h"
#include "core/link.h"
#include "core/records.h"
#include "core/time.h"
#include "core/topology.h"
#include "core/wire.h"
#include "port.h"

struct capture;
struct daemon;
struct nic;
struct samples;
struct sw;

/* ---- the command line (docs/cli.md) ----------------------------------- */

struct daemon_args {
	const char *topology;
	const char *node;
	const char *ports[TOPO_MAX_PORTS]; /* --port, in order: port 0, 1, ... */
	int nports;
	const char *ctl; /* NULL: /run/mrcemu/<emulation>/<node>.ctl */
	const char *out; /* NULL: out/<emulation> */
	bool capture;
	const char *sets[TOPO_MAX_SETS]; /* --set SECTION.ATTRIBUTE=VALUE, as mrcemu's */
	int nsets;
	ps_t sample_interval; /* --sample-interval: samples.csv; 0 = none */
};

/* Parse `prog --topology FILE --node NAME [--port IF]... [--ctl SOCK]
 * [--out DIR] [--capture]`.  Returns 0 to run, 1 when --help printed usage
 * on out (exit 0), 2 after one line on err for bad arguments (exit 2). */
int daemon_parse_args(struct daemon_args *a, const char *prog, const char *usage, int argc,
		      char **argv, FILE *out, FILE *err);

/* ---- lateness ------------------------------------------------------------ */

/* A log-linear histogram of nanoseconds: exact below 64, then 16 buckets
 * per power of two (within 6.25%). */
#define DAEMON_HIST_SUB	    16
#define DAEMON_HIST_BUCKETS (64 + 58 * DAEMON_HIST_SUB)

struct daemon_hist {
	uint64_t count, max;
	uint64_t buckets[DAEMON_HIST_BUCKETS];
};

/* Add one sample; negative (early) counts as 0. */
void daemon_hist_add(struct daemon_hist *h, int64_t ns);
/* The pct-th percentile (0..100): the upper bound of its bucket, never more
 * than the largest sample; 0 when empty. */
uint64_t daemon_hist_pct(const struct daemon_hist *h, unsigned pct);

/* ---- the control protocol ------------------------------------------------ */

#define DAEMON_CTL_LINE	 512  /* longest command line accepted */
#define DAEMON_REPLY_MAX 8192 /* longest reply (stats lists every counter) */

enum daemon_cmd_kind {
	CMD_STATUS,
	CMD_START,
	CMD_STATS,
	CMD_POST,
	CMD_PORT,
	CMD_GRANT,
	CMD_HOLD,
	CMD_STOP,
	CMD_FAILURES,
	CMD_FAIL
};

struct daemon_cmd {
	enum daemon_cmd_kind kind;
	uint64_t epoch_ns, scale; /* start (scale 0: max) */
	bool conducted;		  /* start: a launcher or conductor grants idle fabrics */
	ps_t until;		  /* start, conducted at max: no event after it (0: none) */
	ps_t grant;		  /* grant, hold: every event up to it may run */
	ps_t end;		  /* stop: T_end, 0 when not given */
	char dst[TOPO_NAME_MAX];  /* post, fail */
	uint64_t bytes;		  /* post */
	uint64_t from;		  /* failures: the first to list */
	uint64_t msg_id;	  /* fail */
	char reason[16];	  /* fail: messages.csv's `failure` word */
	int port;		  /* port */
	bool down;		  /* port */
};

/* One command line (no newline) into c; on error, the reason in err. */
bool daemon_cmd_parse(const char *line, struct daemon_cmd *c, char *err, size_t errlen);

/* ---- what an engine gives its daemon -------------------------------------- */

/* Counts of `status`: messages the node sends (finished = completed or
 * failed) and receives (done = RECV_COMPLETE). */
struct daemon_progress {
	uint64_t sends_finished, sends, receives_done, receives;
	ps_t last_done;	    /* the last completion or failure (docs/promises.md, One end) */
	uint64_t rx_failed; /* receives that failed here (a QP evicted): `failures` */
};

struct daemon_engine {
	void *ctx;
	/* A parsed frame reached port `port` at `now`; the engine owns p, whose
	 * payload stays valid while p lives.  NULL: every frame goes to
	 * receive_frame. */
	void (*receive)(void *ctx, int port, struct pkt *p, ps_t now);
	/* A frame at `now`, as received: one that does not parse (for the
	 * engine to count by reason), or every frame when receive is NULL. */
	void (*receive_frame)(void *ctx, int port, const uint8_t *frame, size_t len, ps_t now);
	/* Every pkt the engine sends is one it got by receive, changed only
	 * as a switch's hop changes a frame (MACs, DSCP, ECN, TTL) or trimmed:
	 * it leaves as the bytes it came in (wire_forward). */
	bool forwards;
	/* `start`: virtual time 0 is the epoch; post the workload. */
	void (*start)(void *ctx);
	void (*progress)(void *ctx, struct daemon_progress *pr);
	/* `stats`, `post`, `failures` and `fail`: write the reply's text after
	 * "ok " (or the reason after "error ") to reply and say which. */
	bool (*command)(void *ctx, const struct daemon_cmd *c, char *reply, size_t len);
	void (*port_set_down)(void *ctx, int port, bool down);
	/* The last records at virtual time `now` (final stats row, messages). */
	void (*finish)(void *ctx, ps_t now);
	/* The earliest virtual arrival at the far end of port of any frame the
	 * engine can still hand over when no event before `from` is left
	 * (docs/promises.md, lookahead).  NULL: from + the link delay. */
	ps_t (*tx_floor)(void *ctx, int port, ps_t from);
};

/* Why a run cannot be trusted any more: each fails the daemon (exit 3) with
 * one line naming it (docs/promises.md, faults). */
enum daemon_fault {
	FAULT_NONE,
	FAULT_SEQUENCE_GAP,	   /* a frame of the link was lost by the kernel */
	FAULT_PROMISE_BACKWARDS,   /* a promise below an earlier one */
	FAULT_STAMP_BELOW_PROMISE, /* a stamped frame below a promise */
	FAULT_MAX_VIOLATIONS,	   /* more causality violations than allowed */
	FAULT_STAMP_OVERFLOW,	   /* an arrival past the trailer's 48-bit stamp */
};

/* lateness-<node>.csv (daemon protocol, Records). */
extern const char DAEMON_LATENESS_HEADER[];

/* Packets per slab of the pool, and so received-frame slots per slab: a
 * slab's slots take 2.4 MB, populated when the slab is made
 * (daemon_memory.c). */
#define DAEMON_RX_SLAB 256

/* Receive queues (docs/promises.md, Receive queues): each port to a daemon
 * holds the frames its link can bring before the daemon reads them (a
 * window of two delays and two largest frames, in minimum frames), this
 * many promise frames besides, and no more than DAEMON_RX_SLOTS_MAX in all;
 * slots fit the fabric's largest frame, at least DAEMON_RX_FRAME_MIN. */
#define DAEMON_RX_PROMISE_SLOTS 256
#define DAEMON_RX_SLOTS_MAX	16384
#define DAEMON_RX_FRAME_MIN	512

/* A conducted daemon wants promises for its next event only when it is
 * within this many promise ticks (half lookaheads) of its safe time;
 * farther, the fabric goes idle and the launcher grants it.  Its peers
 * promise up to this many lookaheads past what it wants. */
#define DAEMON_CRAWL_LOOKAHEADS 64
#define DAEMON_WANT_LOOKAHEADS	8

/* A paced daemon's floor moves by this much wall time at a time when the
 * clock holds it back (daemon.c, floor_at): an idle paced emulation wakes
 * each daemon about 200 times a second. */
#define DAEMON_PACED_TICK_NS 5000000ULL

/* SCHED_FIFO priority of a paced daemon's loop, when the system allows it
 * (never at scale max, where no wake-up has a deadline). */
#define DAEMON_RT_PRIORITY 10

/* ---- the daemon ----------------------------------------------------------- */

enum daemon_state { DAEMON_WAITING, DAEMON_RUNNING, DAEMON_STOPPING };

struct daemon_port {
	struct daemon *d;
	int index;
	char ifname[128]; /* "p0", "tap:p0", "dpdk:DEVARGS" */
	struct port *io;  /* NULL until daemon_open_io (and in tests) */
	int peer;	  /* topology node at the far end */
	bool stamped;	  /* the peer is an mrcemu daemon: trailers */
	/* a switch's port by which nothing that came in on it leaves: its
	 * promise waits not for its own peer's (docs/promises.md, Lookahead) */
	bool own_ignored;
	bool icrc;	 /* frames arriving here end with an ICRC */
	uint32_t rx_id;	 /* receiving port of rule 16: node x 64 + port */
	uint64_t rx_seq; /* frames received: the link's frame sequence */
	/* promises (docs/promises.md) */
	ps_t promise_in;      /* the least arrival still possible here (promises, grants) */
	ps_t promise_peer;    /* the peer's own latest promise (or a stamp's) */
	ps_t want_in;	      /* the peer's latest want (0: none) */
	ps_t want_sent;	      /* ours, as last sent to the peer */
	ps_t end_sent;	      /* our end bound, as last sent to the peer */
	ps_t promised;	      /* ours to the peer, sent or implied by a stamp */
	ps_t ser_min;	      /* a minimum frame at the link's rate */
	uint32_t tx_link_seq; /* sequence number of the next frame we send */
	uint32_t rx_link_seq; /* the one we expect next */
	uint64_t promises_tx, promises_rx;
	struct capture *cap;
	struct port *mirror;		 /* copies of this port's frames (daemon_mirror.c) */
	struct pkt *ext_head, *ext_tail; /* frames waiting for their wall time */
	uint64_t tx_frames;		 /* frames handed over (also without a port) */
	uint64_t tx_build_failed;
	void *watcher; /* its ev_io: one for each descriptor of the port */
	int nwatchers; /* 1, or 2 (port_fd2) */
	bool withheld; /* our promise moved past what the peer has asked for */
};

struct daemon {
	const char *prog; /* "nicd", "switchd" */
	struct topology *t;
	int node;
	const struct topo_node *me;
	char outdir[4096];
	char ctl_path[4096];
	bool capture;
	ps_t sample_interval;	 /* samples-<node>.csv every this long; 0 = none */
	struct samples *samples; /* emulator/host/samples.h */

	struct events *q;
	struct pkt_pool pool;
	struct daemon_port ports[TOPO_MAX_PORTS];
	struct link_end links[TOPO_MAX_PORTS]; /* each port's sending direction */
	int nports;
	struct daemon_engine eng;

	enum daemon_state state;
	struct vclock vc;
	/* The monotonic clock, replaceable by tests. */
	uint64_t (*clock_ns)(void *ctx);
	void *clock_ctx;

	/* Received frames wait in slots that belong to their pkt, one slab of
	 * slots per slab of the packet pool, so a pkt's payload stays valid as
	 * long as the pkt lives (daemon_frames.c, rx slots).  A slot holds
	 * frame_max bytes, the longest frame the fabric carries
	 * (daemon_rx_size), no more: the slots a run goes through stay few
	 * pages and lines. */
	void **rx_slabs;
	size_t rx_nslabs;
	size_t frame_max;

	/* The last event run: its time and the largest order key run at that
	 * time, to recognize a stamped frame that comes too late. */
	bool ran_any;
	ps_t run_time;
	uint64_t run_key_max, cur_key;

	/* promises: the safe time and the floor of the last promises sent
	 * (every event before it has run; docs/promises.md) */
	bool max; /* scale "max": no pacing */
	/* Conducted by `run`'s launcher or `up`'s conductor (docs/promises.md,
	 * Idle fabrics jump): promises go only where they are wanted and an
	 * idle fabric waits for a grant; at max a quiet daemon also runs no
	 * event at or after what it knows of T_end (end_known), so none runs
	 * past T_end. */
	bool conducted;
	ps_t want;	/* what this daemon needs its promises above (0: nothing) */
	ps_t end_known; /* T_end is above this: from grants and peers' end bounds */
	ps_t end_bound; /* what it tells its peers T_end is at least (daemon_end_bound) */
	ps_t until;	/* `run --until` at max: no event after it runs (0: none) */
	ps_t cmd_min;	/* `hold`: commands take effect no earlier than this */
	uint64_t grants;
	uint64_t cmds; /* commands that scheduled an event (post, port): `status` */
	ps_t safe, floor;
	ps_t tick; /* a paced floor moves by this much: half the least lookahead */
	/* One end (docs/promises.md): the last instant a frame was in flight to
	 * or held here, and T_end from `stop` (0: none) */
	ps_t busy_until, end;
	uint64_t rx_pending; /* frames read whose arrival has not come */
	enum daemon_fault fault;
	char fault_text[256];
	uint64_t promise_waits, wait_ns, wait_since;
	/* The wall instant (clock_ns) its workload was last seen done, 0 while
	 * a message is open: `status` done_wall_ns, the end of the run's
	 * effective scale (docs/promises.md, What a run reports). */
	uint64_t done_mono;

	/* lateness-<node>.csv */
	uint64_t frames, stamped, violations;
	uint64_t rx_no_pkt;	/* frames dropped for want of a pkt */
	uint64_t posts_refused; /* `post` commands answered with an error */
	double ctl_idle_s;	/* control clients silent this long are dropped (0: 60) */
	struct daemon_hist late, wake;
	bool failed; /* MaxViolations exceeded */
	bool stop;

	/* libev, the timerfd, the control socket (NULL/-1 in tests) */
	void *loop;
	int timer_fd;
	uint64_t armed_ns; /* the deadline the timerfd holds, 0 = none */
	bool timer_fired;  /* it expired: re-arm (which also clears it) */
	uint64_t wakes_timer, wakes_port;
	uint64_t wakes_idle;  /* advances that ran no event */
	long cpu_start_us[2]; /* user and system CPU when started (setup excluded) */
	unsigned advanced_in; /* the loop iteration of the last port wake-up, + 1 */
	void *timer_watcher, *sig_watchers;
	int ctl_fd;
	void *ctl_watcher;
	struct daemon_client *clients;

	struct csv *records[8]; /* opened with daemon_record, closed at the end */
	int nrecords;
	struct csv *lateness;
	uint8_t scratch[PORT_MAX_FRAME];
};

/* Read the topology, find the node (which must be of `kind`), lay out its
 * ports and the event queue, create the output folder (and pcaps with
 * --capture).  Returns 0, or the exit status after one line on stderr: 2
 * for a bad topology, node or port list, 1 for anything else. */
int daemon_init(struct daemon *d, const char *prog, const struct daemon_args *a,
		enum node_kind kind);

/* A daemon's whole life once its parsed arguments and its engine's
 * container are there: daemon_init, build(d) (the engine, 0 or an exit
 * status), daemon_open_io, daemon_run, daemon_finish.  Returns the exit
 * status; the caller frees its container and calls daemon_destroy. */
int daemon_serve(struct daemon *d, const char *prog, const struct daemon_args *a,
		 enum node_kind kind, int (*build)(struct daemon *d));

/* OUTDIR/<base>-<node>.csv with its header, closed by daemon_finish.
 * NULL after one line on stderr. */
struct csv *daemon_record(struct daemon *d, const char *base, const char *header);

/* Open the ports, the control socket, the timerfd and the loop.  One line on
 * stderr and false on failure. */
bool daemon_open_io(struct daemon *d);

/* The receive queue of port i (docs/promises.md, Receive queues): sized from
 * the link's lookahead for a port to a daemon, PORT_RX_DEFAULT for one
 * facing an external endpoint (whose frames the clock paces). */
struct port_rx_size daemon_rx_size(const struct daemon *d, int i);

/* Mirror ports (daemon_mirror.c): open m<PORT> for each of the node's
 * mirrors (false after one line on stderr); copy a frame port sends or
 * receives to its mirror, as a tap on the link sees it. */
bool daemon_mirrors_open(struct daemon *d);
void daemon_mirror(struct daemon_port *port, const uint8_t *frame, size_t len);

/* Serve until `stop`, SIGINT or SIGTERM (0), MaxViolations (3) or a loop
 * failure (1).  The records are not yet written: call daemon_finish. */
int daemon_run(struct daemon *d);

/* `start EPOCH SCALE`: the clock and the engine's workload; scale 0 is
 * "max" (no pacing). */
bool daemon_start(struct daemon *d, uint64_t epoch_ns, uint64_t scale, char *err, size_t errlen);

/* `grant G`: the launcher saw every daemon idle with nothing in flight and
 * no event of any before G (the earliest, or with a scale at most the
 * clock): every arrival still to come is above G, and every event up to G
 * may run (docs/promises.md, Idle fabrics jump). */
bool daemon_grant(struct daemon *d, ps_t g, char *err, size_t errlen);

/* `hold G`: the conductor is about to grant G; commands read from now on
 * take effect no earlier than G, so none can land below what a daemon
 * granted first already took (docs/promises.md, Idle fabrics jump). */
void daemon_hold(struct daemon *d, ps_t g);

/* Whether the daemon holds a frame or has a message of its own open. */
bool daemon_busy(const struct daemon *d);

/* What a daemon conducted at max knows T_end is at least, for its peers
 * (docs/promises.md, No event after T_end): what it learnt (grants, its
 * peers' bounds), its last completion, the last instant it held a frame or
 * had one arrive, and while busy its floor (what it holds or has open ends
 * no earlier); 0 otherwise. */
ps_t daemon_end_bound(const struct daemon *d);

/* Whether the daemon may run an event at t now that it is safe: always,
 * unless t is after `until` (`mrcemu sim --until` runs no event after it),
 * or conducted at max, not busy and t not before anything it knows T_end
 * is above (docs/promises.md, One end): `mrcemu sim` stops at T_end, so no
 * event after it may run. */
bool daemon_may_run(const struct daemon *d, ps_t t);

/* Whether a port's frames may stay unread until another port wakes the
 * daemon (docs/promises.md, Wake-ups): conducted at max, the daemon waits
 * for its safe time to reach an event it may run and wants; the port's
 * promise does not hold the safe time back, so nothing it brings can run
 * before another port's promise moves; and our promise to its peer is not
 * held back for want of asking, so no want the peer sends needs an answer
 * before then. */
bool daemon_port_may_wait(const struct daemon *d, const struct daemon_port *port);

/* Whether the daemon can do nothing more until a frame or a grant comes:
 * no event it may run, every due promise sent. */
bool daemon_idle(const struct daemon *d);

/* Execute one control line; reply gets the whole reply line ("ok ..." or
 * "error ..."), no newline. */
void daemon_command(struct daemon *d, const char *line, char *reply, size_t len);

/* The engine's transmit: p leaves port `port` and reaches the far end at
 * `arrival`.  The daemon owns p from here. */
void daemon_transmit(struct daemon *d, int port, struct pkt *p, ps_t arrival);

/* A frame read from port `port`, received at CLOCK_MONOTONIC rx_mono_ns
 * (0: unknown, now): queue it at its stamp (daemon.h, top). */
void daemon_frame_in(struct daemon *d, int port, const uint8_t *frame, size_t len,
		     uint64_t rx_mono_ns);

/* Take in what the ports hold, then run every event due by the clock, and
 * again until nothing is due; then set the timer for the next one. */
void daemon_advance(struct daemon *d);

/* Push out what the ports' transmit rings hold (daemon_frames.c; the end of
 * a run flushes them too). */
void daemon_flush_ports(struct daemon *d);

/* Make the first slab of packets and of their received-frame slots
 * (daemon_frames.c), so that daemon_prefault finds it. */
void daemon_rx_reserve(struct daemon *d);

/* Fault in [p, p + len) in one call (daemon_memory.c).  False when the
 * kernel cannot (before Linux 5.14): the pages then fault when touched. */
bool daemon_populate(void *p, size_t len);

/* Before the run: fault in the memory the daemon's setup allocated, the
 * first slab of packets and slots among it (daemon_memory.c). */
void daemon_prefault(struct daemon *d);

/* Read every port (daemon_frames.c); with a scale, a port facing an
 * external endpoint then counts as having promised `vt`.  Returns the
 * frames read. */
size_t daemon_drain_ports(struct daemon *d, ps_t vt);

/* The run cannot be trusted any more: stop with the named reason and one
 * line on stderr (docs/promises.md, faults). */
void daemon_fault(struct daemon *d, enum daemon_fault why, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Virtual now: with a scale, the clock's (0 before `start`); at max, the
 * floor (every event before it has run). */
ps_t daemon_vnow(const struct daemon *d);

/* When a control command read now takes effect: min(S, the earliest pending
 * event), not before the clock with a scale; never below a promise already
 * sent (docs/promises.md, control commands). */
ps_t daemon_cmd_time(const struct daemon *d);

/* samples-<node>.csv of the daemon's engine (one of nic, sw) when
 * --sample-interval asks for it; the launcher chooses the interval
 * (samples_interval), so every daemon samples at the same times as `sim`.
 * Returns false, after one line on stderr, when the record cannot be made. */
bool daemon_samples_start(struct daemon *d, struct nic *nic, struct sw *sw);

/* This process's user and system CPU so far, in us (getrusage). */
void daemon_cpu_us(long cpu[2]);

/* Engine finish, lateness-<node>.csv, captures and records closed.
 * Returns false if a record could not be written. */
bool daemon_finish(struct daemon *d);

void daemon_destroy(struct daemon *d);

/* Control socket (daemon_ctl.c). */
bool daemon_ctl_open(struct daemon *d);
void daemon_ctl_close(struct daemon *d);

#endif
