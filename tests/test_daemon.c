/* tests/test_daemon.c — the daemon runtime without namespaces: arguments,
 * the control protocol, the lateness histogram, and stamped and promise
 * frames on a fake clock (docs/promises.md): each frame runs at its own
 * virtual time in the order of docs/protocol.md §12 rule 16, and no event runs
 * before every port has promised past it; promises go out when they move a
 * peer forward; a sequence gap, a promise going backwards or a stamp below
 * a promise stops the daemon with its reason; frames to and from external
 * endpoints carry no trailer (docs/architecture.md, Stamped frames). */
#include <errno.h>
#include <ev.h>
#include <poll.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "daemon/daemon.h"

/* s0 has ports 0 (h0), 1 (h1) and 2 (x0, an external endpoint). */
static const char topology[] = "[emulation]\n"
			       "name = td\n"
			       "MaxViolations = 2\n"
			       "[nic h0]\n"
			       "ip = 10.0.0.1\n"
			       "[nic h1]\n"
			       "ip = 10.0.0.2\n"
			       "[switch s0]\n"
			       "[external x0]\n"
			       "ip = 10.0.0.9\n"
			       "[link h0 s0]\n"
			       "[link h1 s0]\n"
			       "[link x0 s0]\n";

#define EPOCH 1000000000ULL
#define SCALE 1000ULL /* 1 ns of virtual time is 1 us of wall time */
#define US    PS_PER_US

struct seen {
	int port;
	ps_t now;
	uint32_t psn;
	bool bad;
	struct pkt *p; /* kept, when the test asks */
};

struct fixture {
	char dir[64], path[128], out[128];
	struct daemon d;
	uint64_t clock;
	struct seen seen[DAEMON_RX_SLAB + 64];
	int nseen;
	bool keep;
	bool down[4];
	int engine_events;
	uint32_t seq[4]; /* the next sequence number of each port's peer */
};

static uint64_t fake_clock(void *ctx)
{
	return *(uint64_t *)ctx;
}

/* The wall instant at which virtual time t is due. */
static uint64_t wall(const struct fixture *f, ps_t t)
{
	return vclock_wall_ns(&f->d.vc, t);
}

static void fake_receive(void *ctx, int port, struct pkt *p, ps_t now)
{
	struct fixture *f = ctx;
	struct seen *s = &f->seen[f->nseen++];

	*s = (struct seen){.port = port, .now = now, .psn = p->psn};
	if (f->keep)
		s->p = p;
	else
		pkt_put(&f->d.pool, p);
}

static void fake_receive_frame(void *ctx, int port, const uint8_t *frame, size_t len, ps_t now)
{
	struct fixture *f = ctx;

	(void)frame;
	(void)len;
	f->seen[f->nseen++] = (struct seen){.port = port, .now = now, .bad = true};
}

static void fake_port_set_down(void *ctx, int port, bool down)
{
	((struct fixture *)ctx)->down[port] = down;
}

static int setup(void **state)
{
	struct fixture *f = calloc(1, sizeof(*f));
	struct daemon_args a = {0};
	FILE *t;

	assert_non_null(f);
	snprintf(f->dir, sizeof(f->dir), "/tmp/test_daemon.XXXXXX");
	assert_non_null(mkdtemp(f->dir));
	snprintf(f->path, sizeof(f->path), "%s/td.ini", f->dir);
	snprintf(f->out, sizeof(f->out), "%s/out", f->dir);
	assert_non_null(t = fopen(f->path, "w"));
	fputs(topology, t);
	fclose(t);
	a.topology = f->path;
	a.node = "s0";
	a.out = f->out;
	assert_int_equal(daemon_init(&f->d, "switchd", &a, NODE_SWITCH), 0);
	f->d.clock_ns = fake_clock;
	f->d.clock_ctx = &f->clock;
	f->d.eng = (struct daemon_engine){.ctx = f,
					  .receive = fake_receive,
					  .receive_frame = fake_receive_frame,
					  .port_set_down = fake_port_set_down};
	f->clock = EPOCH - 1;
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *f = *state;
	char cmd[128];

	for (int i = 0; i < f->nseen; i++)
		pkt_put(&f->d.pool, f->seen[i].p);
	daemon_finish(&f->d);
	daemon_destroy(&f->d);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", f->dir);
	assert_int_equal(system(cmd), 0);
	free(f);
	return 0;
}

static void start(struct fixture *f)
{
	char err[128];

	assert_true(daemon_start(&f->d, EPOCH, SCALE, err, sizeof(err)));
}

/* A Write Only of 256 pattern bytes from h0 to h1, built as a NIC would,
 * with a trailer (sequence seq) unless stamp is PS_NEVER. */
static size_t frame(uint8_t *buf, uint32_t psn, ps_t stamp, uint32_t seq)
{
	struct pkt p = {.dst_mac = {2, 0, 0, 0, 0, 3},
			.src_mac = {2, 0, 0, 0, 0, 1},
			.src_ip = 0x0A000001,
			.dst_ip = 0x0A000002,
			.ttl = WIRE_TTL,
			.sport = 49152,
			.dport = WIRE_ROCE_PORT,
			.opcode = WIRE_OP_WRITE_ONLY,
			.dqpn = 7,
			.psn = psn,
			.msn = 1,
			.va = wire_va(1, 0),
			.dma_len = 256,
			.payload_len = 256};
	size_t n = wire_build(&p, buf, PORT_MAX_FRAME);

	assert_true(n > 0);
	if (stamp == PS_NEVER)
		return n;
	wire_trailer_put(buf + n, stamp, seq);
	return n + WIRE_TRAILER_LEN;
}

/* A stamped frame from port's peer, next in its sequence. */
static void feed(struct fixture *f, int port, uint32_t psn, ps_t stamp)
{
	uint8_t buf[PORT_MAX_FRAME];

	daemon_frame_in(&f->d, port, buf, frame(buf, psn, stamp, f->seq[port]++), f->clock);
}

/* A promise frame from port's peer, next in its sequence. */
static void promise(struct fixture *f, int port, ps_t p)
{
	uint8_t buf[WIRE_PROMISE_LEN], mac[6] = {2, 0, 0, 0, 0, 1};
	struct wire_promise w = {.promise = p, .seq = f->seq[port]++};

	daemon_frame_in(&f->d, port, buf, wire_promise_put(buf, mac, mac, &w), f->clock);
}

/* Both daemon-facing ports promise p. */
static void promise_all(struct fixture *f, ps_t p)
{
	promise(f, 0, p);
	promise(f, 1, p);
}

static void at(struct fixture *f, uint64_t clock)
{
	f->clock = clock;
	daemon_advance(&f->d);
}

/* Just past virtual time t: a read then makes the external port promise
 * past t, so events at t may run. */
static void past(struct fixture *f, ps_t t)
{
	at(f, wall(f, t) + 1);
}

static void assert_seen(const struct fixture *f, int i, int port, uint32_t psn, ps_t now)
{
	assert_true(i < f->nseen);
	assert_int_equal(f->seen[i].port, port);
	assert_int_equal(f->seen[i].psn, psn);
	assert_int_equal(f->seen[i].now, now);
	assert_false(f->seen[i].bad);
}

/* ---- stamped frames and promises ---------------------------------------------- */

/* Rule 16: arrivals at one picosecond by receiving port, then by the
 * link's frame sequence; each at its own time, not before its wall time
 * comes, and only once both ports have promised past it. */
static void test_arrivals_run_at_their_stamp_in_rule_16_order(void **state)
{
	struct fixture *f = *state;

	start(f);
	feed(f, 1, 1, 5 * US);
	feed(f, 0, 2, 5 * US);
	feed(f, 0, 3, 6 * US);
	feed(f, 1, 4, 6 * US);
	past(f, 3 * US);
	assert_int_equal(f->nseen, 0); /* not yet their wall time */
	past(f, 5 * US);
	assert_int_equal(f->nseen, 2);
	assert_seen(f, 0, 0, 2, 5 * US);
	assert_seen(f, 1, 1, 1, 5 * US);
	past(f, 6 * US);
	assert_int_equal(f->nseen, 4);
	assert_seen(f, 2, 0, 3, 6 * US);
	assert_seen(f, 3, 1, 4, 6 * US);
	assert_int_equal(f->d.frames, 4);
	assert_int_equal(f->d.stamped, 4);
	assert_int_equal(f->d.violations, 0);
}

/* Nothing runs before the epoch: virtual time 0 is the epoch. */
static void test_nothing_runs_before_the_epoch(void **state)
{
	struct fixture *f = *state;

	start(f);
	feed(f, 0, 1, 0);
	promise_all(f, 1 * US);
	at(f, EPOCH - 1);
	assert_int_equal(f->nseen, 0);
	at(f, EPOCH + 1);
	assert_seen(f, 0, 0, 1, 0);
}

static int ran;
static void engine_event(void *arg, ps_t now)
{
	(void)arg;
	(void)now;
	ran++;
}

/* S is the least promise; an event at S itself waits (a frame may still
 * arrive at S, and arrivals go first, rule 16). */
static void test_events_wait_for_the_safe_time(void **state)
{
	struct fixture *f = *state;

	start(f);
	ran = 0;
	events_schedule(f->d.q, 10 * US, engine_event, NULL);
	at(f, wall(f, 20 * US));
	assert_int_equal(ran, 0);
	promise(f, 0, 30 * US);
	promise(f, 1, 10 * US);
	at(f, wall(f, 20 * US));
	assert_int_equal(ran, 0);
	promise(f, 1, 10 * US + 1);
	at(f, wall(f, 20 * US));
	assert_int_equal(ran, 1);
	assert_int_equal(f->d.safe, 10 * US + 1);
}

/* At scale max nothing waits for the clock, only for the promises. */
static void test_max_runs_as_soon_as_safe(void **state)
{
	struct fixture *f = *state;
	char err[128];

	ran = 0;
	assert_false(daemon_start(&f->d, EPOCH, 0, err, sizeof(err)));
	assert_string_equal(err, "scale max: port 2 faces external endpoint x0, which makes "
				 "no promises; give a scale");
	f->d.ports[2].stamped = true; /* pretend x0 is a daemon */
	assert_true(daemon_start(&f->d, EPOCH, 0, err, sizeof(err)));
	events_schedule(f->d.q, 1000 * US, engine_event, NULL);
	promise_all(f, 1000 * US + 1);
	promise(f, 2, 1000 * US + 1);
	at(f, EPOCH - 1);
	assert_int_equal(ran, 1);
}

/* The wall instant a NIC's workload became done, for the run's effective
 * scale (docs/promises.md, What a run reports): taken in the advance that
 * ran its last event, not at the launcher's next poll; kept while done,
 * cleared when a message opens again (a `post`). */
static struct daemon_progress workload;
static void fake_progress(void *ctx, struct daemon_progress *pr)
{
	(void)ctx;
	*pr = workload;
}

static void test_done_wall_is_the_advance_that_finished(void **state)
{
	struct fixture *f = *state;

	start(f);
	f->d.eng.progress = fake_progress;
	workload = (struct daemon_progress){.sends = 1, .receives = 1, .receives_done = 1};
	events_schedule(f->d.q, 10 * US, engine_event, NULL);
	events_schedule(f->d.q, 20 * US, engine_event, NULL);
	promise_all(f, 100 * US);
	past(f, 10 * US);
	assert_int_equal(f->d.done_mono, 0);
	workload.sends_finished = 1;
	past(f, 20 * US);
	assert_int_equal(f->d.done_mono, wall(f, 20 * US) + 1);
	/* Later advances leave it; one that runs nothing does not ask. */
	events_schedule(f->d.q, 30 * US, engine_event, NULL);
	past(f, 30 * US);
	assert_int_equal(f->d.done_mono, wall(f, 20 * US) + 1);
	workload.sends = 2;
	at(f, wall(f, 40 * US));
	assert_int_equal(f->d.done_mono, wall(f, 20 * US) + 1);
	events_schedule(f->d.q, 50 * US, engine_event, NULL);
	past(f, 50 * US);
	assert_int_equal(f->d.done_mono, 0);
}

/* Conducted at max, a port whose promise does not hold the safe time back
 * need not wake the daemon while it waits for an event it wants
 * (docs/promises.md, Wake-ups), unless our promise to its peer is held
 * back for want of asking; the port holding the safe time always does, and
 * every port once nothing waits. */
static void test_ports_that_cannot_move_the_run_may_wait(void **state)
{
	struct fixture *f = *state;
	char err[128];

	ran = 0;
	f->d.ports[2].stamped = true; /* pretend x0 is a daemon */
	f->d.conducted = true;
	f->d.end_known = 1000 * US; /* events before it may run */
	assert_true(daemon_start(&f->d, EPOCH, 0, err, sizeof(err)));
	events_schedule(f->d.q, 10 * US, engine_event, NULL);
	promise(f, 0, 5 * US);
	promise(f, 1, 30 * US);
	promise(f, 2, 30 * US);
	at(f, EPOCH);
	assert_int_equal(f->d.safe, 5 * US);
	assert_false(daemon_port_may_wait(&f->d, &f->d.ports[0]));
	assert_true(daemon_port_may_wait(&f->d, &f->d.ports[1]));
	assert_true(daemon_port_may_wait(&f->d, &f->d.ports[2]));
	/* Past the peers' horizon (they asked for nothing) our promises stay
	 * back: then a port whose peer may ask wakes the daemon. */
	events_schedule(f->d.q, 45 * US, engine_event, NULL);
	promise(f, 0, 40 * US);
	promise(f, 1, 100 * US);
	promise(f, 2, 100 * US);
	at(f, EPOCH);
	assert_int_equal(ran, 1);
	assert_false(f->d.ports[1].withheld);
	events_schedule(f->d.q, 65 * US, engine_event, NULL);
	promise(f, 0, 60 * US);
	at(f, EPOCH);
	assert_int_equal(ran, 2);
	assert_true(f->d.ports[1].withheld);
	assert_false(daemon_port_may_wait(&f->d, &f->d.ports[0]));
	assert_false(daemon_port_may_wait(&f->d, &f->d.ports[1]));
	/* Nothing to wait for: every port wakes it. */
	promise(f, 0, 100 * US);
	at(f, EPOCH);
	assert_int_equal(ran, 3);
	for (int i = 0; i < 3; i++)
		assert_false(daemon_port_may_wait(&f->d, &f->d.ports[i]));
}

/* Read long after its wall time, but with nothing run after its stamp: it
 * still takes its exact place. */
static void test_late_read_is_exact(void **state)
{
	struct fixture *f = *state;

	start(f);
	f->clock = wall(f, 20 * US);
	feed(f, 0, 1, 5 * US);
	promise_all(f, 30 * US);
	at(f, wall(f, 20 * US));
	assert_seen(f, 0, 0, 1, 5 * US);
	assert_int_equal(f->d.violations, 0);
	assert_true(f->d.late.max >= wall(f, 20 * US) - wall(f, 5 * US));
}

/* A stamped frame also promises its successor's arrival, a minimum frame
 * later. */
static void test_stamp_is_a_promise(void **state)
{
	struct fixture *f = *state;

	start(f);
	feed(f, 0, 1, 7 * US);
	assert_int_equal(f->d.ports[0].promise_in,
			 7 * US + time_serialize(WIRE_MIN_LEN, 400000000000ULL));
}

/* After start each port to a daemon gets a promise, the floor + the link
 * delay (no engine hook here); the external port none.  A promise is sent
 * again only when it moves. */
static void test_promises_go_out_when_they_move(void **state)
{
	struct fixture *f = *state;
	struct wire_promise w;

	start(f);
	assert_int_equal(f->d.ports[0].promises_tx, 1);
	assert_int_equal(f->d.ports[1].promises_tx, 1);
	assert_int_equal(f->d.ports[2].promises_tx, 0);
	assert_true(wire_promise_get(f->d.scratch, WIRE_PROMISE_LEN, &w));
	assert_int_equal(w.promise, 1 * US);
	assert_int_equal(w.seq, 0);
	at(f, wall(f, 0));
	assert_int_equal(f->d.ports[0].promises_tx, 1);
	promise_all(f, 3 * US);
	/* The clock holds the floor back, a tick (half the lookahead) at a
	 * time. */
	at(f, wall(f, 2 * US));
	assert_int_equal(f->d.ports[0].promises_tx, 2);
	assert_int_equal(f->d.floor, 2 * US - 2 * US % f->d.tick);
	assert_int_equal(f->d.ports[0].promised, f->d.floor + 1 * US);
	at(f, wall(f, 2 * US) + 10);
	assert_int_equal(f->d.ports[0].promises_tx, 2);
}

/* Faults fail the run with their reason (docs/promises.md). */
static void test_sequence_gap_fails(void **state)
{
	struct fixture *f = *state;

	start(f);
	feed(f, 0, 1, 5 * US);
	f->seq[0]++; /* a frame the kernel lost */
	feed(f, 0, 2, 6 * US);
	assert_int_equal(f->d.fault, FAULT_SEQUENCE_GAP);
	assert_true(f->d.failed);
	assert_int_equal(f->d.state, DAEMON_STOPPING);
}

static void test_promise_backwards_fails(void **state)
{
	struct fixture *f = *state;

	start(f);
	promise(f, 1, 5 * US);
	promise(f, 1, 4 * US);
	assert_int_equal(f->d.fault, FAULT_PROMISE_BACKWARDS);
	assert_true(f->d.failed);
}

static void test_stamp_below_promise_fails(void **state)
{
	struct fixture *f = *state;

	start(f);
	promise(f, 0, 5 * US);
	feed(f, 0, 1, 5 * US); /* at the promise: fine */
	assert_int_equal(f->d.fault, FAULT_NONE);
	feed(f, 0, 2, 5 * US + 1); /* below the stamp's own promise */
	assert_int_equal(f->d.fault, FAULT_STAMP_BELOW_PROMISE);
	assert_true(f->d.failed);
	assert_int_equal(f->d.violations, 0);
}

/* A frame that does not parse reaches the engine raw, at its stamp. */
static void test_bad_frame_goes_to_receive_frame_at_its_stamp(void **state)
{
	struct fixture *f = *state;
	uint8_t buf[PORT_MAX_FRAME];
	size_t n = frame(buf, 1, 4 * US, 0);

	start(f);
	buf[WIRE_ETH_LEN + 10] ^= 0xFF; /* the IPv4 checksum */
	daemon_frame_in(&f->d, 1, buf, n, f->clock);
	f->seq[1]++;
	promise_all(f, 5 * US);
	past(f, 4 * US);
	assert_int_equal(f->nseen, 1);
	assert_true(f->seen[0].bad);
	assert_int_equal(f->seen[0].now, 4 * US);
	assert_int_equal(f->d.stamped, 1);
}

/* The payload of a pkt the engine keeps stays the frame's bytes while
 * later frames arrive: each pkt owns its slot, in the first slab of slots
 * and in the next. */
static void test_kept_payload_stays_valid(void **state)
{
	struct fixture *f = *state;
	const int n = DAEMON_RX_SLAB + 40;

	start(f);
	f->keep = true;
	for (uint32_t i = 0; i < (uint32_t)n; i++)
		feed(f, 0, i, (i + 1) * US);
	promise(f, 1, (ps_t)(n + 1) * US);
	past(f, (ps_t)n * US);
	assert_int_equal(f->nseen, n);
	assert_true(f->d.pool.nslabs >= 2);
	for (int i = 0; i < n; i++) {
		const struct pkt *p = f->seen[i].p;
		assert_non_null(p->payload);
		assert_int_equal(p->payload_len, 256);
		assert_int_equal(p->psn, (uint32_t)i);
		assert_int_equal(p->stamp, (ps_t)(i + 1) * US);
		assert_int_equal(wire_pattern_check(p->payload, 256, p->src_ip, p->msn, 0), 0);
	}
}

/* daemon_populate faults a range in, unaligned ends included, so that the
 * run does not (daemon_memory.c). */
static void test_populate_makes_pages_resident(void **state)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE), n = 64;
	uint8_t *m =
	    mmap(NULL, n * page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	unsigned char in[64];

	(void)state;
	assert_true(m != MAP_FAILED);
	assert_int_equal(mincore(m, n * page, in), 0);
	for (size_t i = 0; i < n; i++)
		assert_int_equal(in[i] & 1, 0);
	if (!daemon_populate(m + 100, (n - 2) * page)) {
		munmap(m, n * page);
		skip(); /* a kernel before 5.14 */
	}
	assert_int_equal(mincore(m, n * page, in), 0);
	for (size_t i = 0; i < n; i++)
		assert_int_equal(in[i] & 1, i < n - 1);
	assert_int_equal(m[100], 0);
	munmap(m, n * page);
}

/* ---- external endpoints ---------------------------------------------------- */

/* No trailer is honoured from an external endpoint (not even one with the
 * magic): its frames arrive at the virtual time they were received. */
static void test_external_frames_are_stamped_on_receipt(void **state)
{
	struct fixture *f = *state;
	uint8_t buf[PORT_MAX_FRAME];

	start(f);
	daemon_frame_in(&f->d, 2, buf, frame(buf, 1, 1 * US, 0), wall(f, 7 * US));
	daemon_frame_in(&f->d, 2, buf, frame(buf, 2, PS_NEVER, 0), wall(f, 8 * US));
	promise_all(f, 10 * US);
	at(f, wall(f, 9 * US));
	assert_seen(f, 0, 2, 1, 7 * US);
	assert_seen(f, 1, 2, 2, 8 * US);
	assert_int_equal(f->d.stamped, 0);
	assert_int_equal(f->d.violations, 0);
}

static struct pkt *data_pkt(struct fixture *f, uint32_t psn)
{
	uint8_t buf[PORT_MAX_FRAME];
	struct pkt *p = pkt_get(&f->d.pool);

	assert_int_equal(wire_parse(buf, frame(buf, psn, PS_NEVER, 0), false, p), WIRE_OK);
	p->payload = NULL; /* built from the pattern */
	return p;
}

/* Towards a daemon a frame leaves at once with its arrival in the trailer;
 * towards an external endpoint it waits for the wall time of its arrival
 * and has no trailer. */
static void test_transmit_stamped_now_external_at_arrival(void **state)
{
	struct fixture *f = *state;
	struct pkt *p = data_pkt(f, 9);
	uint32_t n = wire_frame_len(p);
	ps_t stamp;
	uint32_t seq;

	start(f);
	daemon_transmit(&f->d, 0, p, 3 * US);
	assert_int_equal(f->d.ports[0].tx_frames, 1);
	assert_true(wire_trailer_get(f->d.scratch, n + WIRE_TRAILER_LEN, &stamp, &seq));
	assert_int_equal(stamp, 3 * US);
	assert_int_equal(seq, 1); /* after start's promise */

	daemon_transmit(&f->d, 2, data_pkt(f, 10), 15 * US);
	promise_all(f, 20 * US);
	at(f, wall(f, 15 * US) - 1);
	assert_int_equal(f->d.ports[2].tx_frames, 0);
	memset(f->d.scratch, 0, sizeof(f->d.scratch));
	past(f, 15 * US);
	assert_int_equal(f->d.ports[2].tx_frames, 1);
	assert_false(wire_trailer_get(f->d.scratch, n + WIRE_TRAILER_LEN, &stamp, &seq));
	assert_int_equal(f->d.pool.in_use, 0);
}

/* Issue 9, item 12: a frame whose arrival the trailer's 48 bits cannot hold
 * fails the daemon with its reason (it was sent with the stamp clamped). */
static void test_stamp_overflow_fails(void **state)
{
	struct fixture *f = *state;

	start(f);
	daemon_transmit(&f->d, 0, data_pkt(f, 9), WIRE_TRAILER_MAX_PS + 1);
	assert_int_equal(f->d.fault, FAULT_STAMP_OVERFLOW);
	assert_true(f->d.failed);
	assert_int_equal(f->d.ports[0].tx_frames, 0);
	assert_int_equal(f->d.pool.in_use, 0);
}

/* ---- lateness --------------------------------------------------------------- */

static void test_hist_exact_below_64(void **state)
{
	struct daemon_hist h = {0};

	(void)state;
	assert_int_equal(daemon_hist_pct(&h, 50), 0);
	for (int i = 0; i < 10; i++)
		daemon_hist_add(&h, i);
	daemon_hist_add(&h, -5); /* early counts as 0 */
	assert_int_equal(h.count, 11);
	assert_int_equal(daemon_hist_pct(&h, 50), 4);
	assert_int_equal(daemon_hist_pct(&h, 100), 9);
	assert_int_equal(h.max, 9);
}

static void test_hist_percentiles_within_one_sixteenth(void **state)
{
	struct daemon_hist h = {0};
	uint64_t p50, p99;

	(void)state;
	for (int i = 1; i <= 100000; i++)
		daemon_hist_add(&h, i * 100);
	p50 = daemon_hist_pct(&h, 50);
	p99 = daemon_hist_pct(&h, 99);
	assert_true(p50 >= 5000000 && p50 <= 5000000 + 5000000 / 16);
	assert_true(p99 >= 9900000 && p99 <= 10000000);
	assert_int_equal(daemon_hist_pct(&h, 100), 10000000);
	assert_int_equal(h.max, 10000000);
	daemon_hist_add(&h, INT64_MAX);
	assert_int_equal(daemon_hist_pct(&h, 100), (uint64_t)INT64_MAX);
}

/* ---- the control protocol ------------------------------------------------------ */

static void test_cmd_parse(void **state)
{
	struct daemon_cmd c;
	char err[256];

	(void)state;
	assert_true(daemon_cmd_parse("status", &c, err, sizeof(err)));
	assert_int_equal(c.kind, CMD_STATUS);
	assert_true(daemon_cmd_parse("stats\r", &c, err, sizeof(err)));
	assert_int_equal(c.kind, CMD_STATS);
	assert_true(daemon_cmd_parse("  stop ", &c, err, sizeof(err)));
	assert_int_equal(c.kind, CMD_STOP);
	assert_true(daemon_cmd_parse("start 123456789012 2000", &c, err, sizeof(err)));
	assert_int_equal(c.kind, CMD_START);
	assert_int_equal(c.epoch_ns, 123456789012ULL);
	assert_int_equal(c.scale, 2000);
	assert_true(daemon_cmd_parse("start 5 max conducted 20000000", &c, err, sizeof(err)));
	assert_true(c.conducted);
	assert_int_equal(c.scale, 0);
	assert_int_equal(c.until, 20000000);
	assert_true(daemon_cmd_parse("start 5 2000 conducted", &c, err, sizeof(err)));
	assert_true(c.conducted);
	assert_int_equal(c.scale, 2000);
	assert_true(daemon_cmd_parse("hold 7000", &c, err, sizeof(err)));
	assert_int_equal(c.kind, CMD_HOLD);
	assert_int_equal(c.grant, 7000);
	assert_true(daemon_cmd_parse("post h1 64KiB", &c, err, sizeof(err)));
	assert_int_equal(c.kind, CMD_POST);
	assert_string_equal(c.dst, "h1");
	assert_int_equal(c.bytes, 65536);
	assert_true(daemon_cmd_parse("port 2 down", &c, err, sizeof(err)));
	assert_int_equal(c.kind, CMD_PORT);
	assert_int_equal(c.port, 2);
	assert_true(c.down);
	assert_true(daemon_cmd_parse("port 0 up", &c, err, sizeof(err)));
	assert_false(c.down);
	assert_true(daemon_cmd_parse("failures 3", &c, err, sizeof(err)));
	assert_int_equal(c.kind, CMD_FAILURES);
	assert_int_equal(c.from, 3);
	assert_true(daemon_cmd_parse("fail h1 1048575 qp_evicted", &c, err, sizeof(err)));
	assert_int_equal(c.kind, CMD_FAIL);
	assert_string_equal(c.dst, "h1");
	assert_int_equal(c.msg_id, 1048575);
	assert_string_equal(c.reason, "qp_evicted");
}

static void assert_refused(const char *line, const char *reason)
{
	struct daemon_cmd c;
	char err[256];

	assert_false(daemon_cmd_parse(line, &c, err, sizeof(err)));
	assert_string_equal(err, reason);
}

static void test_cmd_parse_refuses_with_a_reason(void **state)
{
	char longline[DAEMON_CTL_LINE + 8];

	(void)state;
	assert_refused("", "empty command");
	assert_refused("frob", "unknown command 'frob' (allowed: status, start, stats, post, "
			       "port, grant, hold, stop, failures, fail)");
	assert_refused("hold x", "hold: 'x' is not a virtual time in ps");
	assert_refused("failures", "usage: failures FROM");
	assert_refused("failures x", "failures: 'x' is not a count");
	assert_refused("fail h1 1", "usage: fail DST ID REASON");
	assert_refused("fail h1 0 qp_evicted",
		       "fail: id '0' is out of range (allowed: 1..1048575)");
	assert_refused("fail h1 1048576 qp_evicted",
		       "fail: id '1048576' is out of range (allowed: 1..1048575)");
	assert_refused("status now", "usage: status");
	assert_refused("start 5", "usage: start EPOCH_NS SCALE|max [conducted [UNTIL_PS]]");
	assert_refused("start 5 max conducted 0",
		       "start: until '0' is not a virtual time in ps > 0");
	assert_refused("start 5 max conducted x",
		       "start: until 'x' is not a virtual time in ps > 0");
	assert_refused("start -5 1", "start: epoch '-5' is not a CLOCK_MONOTONIC time in ns");
	assert_refused("start 5 0", "start: scale '0' is not a whole number >= 1 or max");
	assert_refused("start 5 2x", "start: scale '2x' is not a whole number >= 1 or max");
	assert_refused("stop x", "stop: T_end 'x' is not a virtual time in ps");
	assert_refused("post h1", "usage: post DST BYTES");
	assert_refused("post h1 0",
		       "post: bytes '0' is out of range (allowed: 1..4294967295, 4 GiB "
		       "- 1: RETH's DMA length is 32 bits)");
	/* issue 13, failure 8: refused in the reply, with the right reason */
	assert_refused("post h1 5GiB",
		       "post: bytes '5GiB' is out of range (allowed: 1..4294967295, "
		       "4 GiB - 1: RETH's DMA length is 32 bits)");
	assert_refused("post h1 1e9", "post: bytes: \"1e9\": exponents are not accepted (write the "
				      "digits and a size unit: B, KB, MB, GB, KiB, MiB or GiB)");
	assert_refused("port x down", "port: 'x' is not a port number");
	assert_refused("port 64 down", "port: '64' is not a port number");
	assert_refused("port 1 sideways", "port: 'sideways' (allowed: down, up)");
	memset(longline, 'a', sizeof(longline) - 1);
	longline[sizeof(longline) - 1] = 0;
	assert_refused(longline, "line too long");
}

static void test_commands(void **state)
{
	struct fixture *f = *state;
	char reply[DAEMON_REPLY_MAX];

	daemon_command(&f->d, "status", reply, sizeof(reply));
	assert_string_equal(reply, "ok state=waiting vt_ps=0 sends=0/0 receives=0/0 violations=0 "
				   "late_max_ns=0 floor_ps=0 busy_ps=0 done_ps=0 idle=0 "
				   "next_ps=18446744073709551615 ran_ps=0 rx_failed=0 epoch_ns=0 "
				   "cmds=0 done_wall_ns=0 links=0:0,0:0,0:0");
	daemon_command(&f->d, "start 1000000000 1000", reply, sizeof(reply));
	assert_string_equal(reply, "ok");
	daemon_command(&f->d, "start 1000000000 1000", reply, sizeof(reply));
	assert_string_equal(reply, "error already started");
	f->clock = EPOCH + 5000; /* 5 ns of virtual time */
	daemon_command(&f->d, "status", reply, sizeof(reply));
	assert_string_equal(reply,
			    "ok state=running vt_ps=5000 sends=0/0 receives=0/0 "
			    "violations=0 late_max_ns=0 floor_ps=0 busy_ps=0 done_ps=0 idle=1 "
			    "next_ps=18446744073709551615 ran_ps=0 rx_failed=0 epoch_ns=1000000000 "
			    "cmds=0 done_wall_ns=0 links=1:0,1:0,0:0");
	/* A command takes effect at min(S, next event), here once the ports
	 * have promised past the clock (docs/promises.md). */
	daemon_command(&f->d, "port 1 down", reply, sizeof(reply));
	assert_string_equal(reply, "ok");
	assert_false(f->down[1]);
	promise_all(f, 1 * US);
	at(f, EPOCH + 5000);
	assert_true(f->down[1]);
	daemon_command(&f->d, "port 3 down", reply, sizeof(reply));
	assert_string_equal(reply, "error port: s0 has no port 3 (it has 3)");
	daemon_command(&f->d, "post h1 1MiB", reply, sizeof(reply));
	assert_string_equal(reply, "error switchd does not take this command");
	daemon_command(&f->d, "bogus", reply, sizeof(reply));
	assert_true(!strncmp(reply, "error unknown command 'bogus'", 29));
	daemon_command(&f->d, "stop", reply, sizeof(reply));
	assert_string_equal(reply, "ok");
	assert_int_equal(f->d.state, DAEMON_STOPPING);
	assert_true(f->d.stop);
}

/* `up`'s conductor (docs/promises.md, Idle `up`): a paced conducted daemon
 * sends no promise nobody wants; after `hold G` a command takes effect no
 * earlier than G; `grant G` lets it run what is before G + 1 as the clock
 * comes. */
static void test_hold_and_grant_paced(void **state)
{
	struct fixture *f = *state;
	char reply[DAEMON_REPLY_MAX];
	uint64_t sent;

	daemon_command(&f->d, "start 1000000000 1000 conducted", reply, sizeof(reply));
	assert_string_equal(reply, "ok");
	assert_true(f->d.conducted);
	/* Its peers want nothing: once it has promised DAEMON_WANT_LOOKAHEADS
	 * lookaheads (1 us links here) it promises no more, however far the
	 * clock and its safe time go. */
	promise_all(f, 50 * US);
	past(f, 20 * US);
	sent = f->d.ports[0].promises_tx + f->d.ports[1].promises_tx;
	past(f, 40 * US);
	assert_int_equal(f->d.ports[0].promises_tx + f->d.ports[1].promises_tx, sent);
	daemon_command(&f->d, "hold 60000000", reply, sizeof(reply));
	assert_true(!strncmp(reply, "ok state=running ", 17));
	assert_non_null(strstr(reply, " cmds=0 "));
	daemon_command(&f->d, "port 1 down", reply, sizeof(reply));
	assert_string_equal(reply, "ok");
	daemon_command(&f->d, "status", reply, sizeof(reply));
	assert_non_null(strstr(reply, " cmds=1 "));
	/* Held to 60 us, and the ports promised only 50 us: it waits. */
	past(f, 70 * US);
	assert_false(f->down[1]);
	daemon_command(&f->d, "grant 60000000", reply, sizeof(reply));
	assert_string_equal(reply, "ok");
	assert_int_equal(f->d.ports[0].promise_in, 60 * US + 1);
	past(f, 70 * US);
	assert_true(f->down[1]);
	assert_int_equal(f->d.ports[0].promises_tx + f->d.ports[1].promises_tx, sent);
}

/* ---- arguments ------------------------------------------------------------------------ */

static int parse(struct daemon_args *a, char *msg, size_t len, int argc, ...)
{
	char *argv[16];
	va_list ap;
	FILE *out = fmemopen(msg, len, "w");
	int rc;

	va_start(ap, argc);
	for (int i = 0; i < argc; i++)
		argv[i] = va_arg(ap, char *);
	va_end(ap);
	argv[argc] = NULL;
	memset(msg, 0, len);
	rc = daemon_parse_args(a, "nicd", "USAGE\n", argc, argv, out, out);
	fclose(out);
	return rc;
}

static void test_args(void **state)
{
	struct daemon_args a;
	char msg[256];

	(void)state;
	assert_int_equal(parse(&a, msg, sizeof(msg), 9, "nicd", "--topology", "t.ini", "--node",
			       "h0", "--port", "veth7", "--port", "veth8"),
			 0);
	assert_string_equal(a.topology, "t.ini");
	assert_string_equal(a.node, "h0");
	assert_int_equal(a.nports, 2);
	assert_string_equal(a.ports[1], "veth8");
	assert_null(a.ctl);
	assert_false(a.capture);
	assert_int_equal(parse(&a, msg, sizeof(msg), 10, "nicd", "-t", "t.ini", "-n", "h0", "--ctl",
			       "/tmp/x.ctl", "--out", "/tmp/o", "--capture"),
			 0);
	assert_string_equal(a.ctl, "/tmp/x.ctl");
	assert_string_equal(a.out, "/tmp/o");
	assert_true(a.capture);
	assert_int_equal(parse(&a, msg, sizeof(msg), 2, "nicd", "--help"), 1);
	assert_string_equal(msg, "USAGE\n");
	assert_int_equal(parse(&a, msg, sizeof(msg), 3, "nicd", "--topology", "t.ini"), 2);
	assert_string_equal(msg, "nicd: --node NAME is required (see nicd --help)\n");
	assert_int_equal(parse(&a, msg, sizeof(msg), 2, "nicd", "--frob"), 2);
	assert_string_equal(msg, "nicd: unknown option --frob (see nicd --help)\n");
	assert_int_equal(parse(&a, msg, sizeof(msg), 2, "nicd", "--node"), 2);
	assert_string_equal(msg, "nicd: missing value for --node (see nicd --help)\n");
	assert_int_equal(parse(&a, msg, sizeof(msg), 6, "nicd", "-t", "t", "-n", "h0", "extra"), 2);
	assert_string_equal(msg, "nicd: unexpected argument extra (see nicd --help)\n");
}

/* daemon_init refuses a node that is missing, of the other kind, or given
 * the wrong number of ports, with exit status 2. */
static void test_init_refuses_wrong_node(void **state)
{
	struct fixture *f = *state;
	struct daemon d;
	struct daemon_args a = {.topology = f->path, .node = "h9", .out = f->out};

	assert_int_equal(daemon_init(&d, "nicd", &a, NODE_NIC), 2);
	daemon_destroy(&d);
	a.node = "s0";
	assert_int_equal(daemon_init(&d, "nicd", &a, NODE_NIC), 2);
	daemon_destroy(&d);
	a.node = "h0";
	a.nports = 2;
	a.ports[0] = "a";
	a.ports[1] = "b";
	assert_int_equal(daemon_init(&d, "nicd", &a, NODE_NIC), 2);
	daemon_destroy(&d);
	a.nports = 0;
	assert_int_equal(daemon_init(&d, "nicd", &a, NODE_NIC), 0);
	assert_true(d.ports[0].stamped);
	assert_int_equal(d.ports[0].rx_id, 0 * TOPO_MAX_PORTS + 0);
	assert_string_equal(d.ports[0].ifname, "p0");
	daemon_destroy(&d);
	assert_false(f->d.ports[2].stamped); /* s0's port to x0 */
	assert_true(f->d.ports[1].stamped);
	assert_int_equal(f->d.ports[1].rx_id, 2 * TOPO_MAX_PORTS + 1);
}

/* Write text as topology file `name` in the fixture's folder; its path, in
 * path (160 bytes). */
static const char *write_topology(const struct fixture *f, char *path, const char *name,
				  const char *text)
{
	FILE *t;

	snprintf(path, 160, "%s/%s", f->dir, name);
	assert_non_null(t = fopen(path, "w"));
	fputs(text, t);
	fclose(t);
	return path;
}

/* Receive queues from the lookahead (docs/promises.md, Receive queues): the
 * frames a link can bring in [F, F + window), window = two delays and two
 * largest frames and a minimum frame, at a minimum frame's serialization
 * apart, plus 256 promise frames; slots fit the fabric's largest frame. */
static void test_rx_queues_from_the_lookahead(void **state)
{
	struct fixture *f = *state;
	struct daemon d;
	struct daemon_args a = {.topology = f->path, .node = "h0", .out = f->out};
	struct port_rx_size rx;
	char path[160];

	/* s0 faces an external endpoint: frames up to 9,216 bytes anywhere.
	 * 400 Gbps (20 ps a byte), 1 us: window 2 x 1,000,000 + 2 x (9,216 +
	 * 4) x 20 + 58 x 20 = 2,369,960 ps = 2,043.1 minimum frames of 1,160
	 * ps: 2,044 + 1 + 256 = 2,301 slots. */
	rx = daemon_rx_size(&f->d, 0);
	assert_int_equal(rx.slots, 2301);
	assert_int_equal(rx.frame_max, PORT_MAX_FRAME);
	assert_true(rx.stamped); /* its frames carry their arrival: no receive time */
	assert_int_equal(rx.promise_slots, DAEMON_RX_PROMISE_SLOTS); /* held apart */
	rx = daemon_rx_size(&f->d, 2);				     /* x0 makes no promises */
	assert_int_equal(rx.slots, PORT_RX_SLOTS);
	assert_false(rx.stamped);	       /* its frames arrive when the kernel got them */
	assert_int_equal(rx.promise_slots, 0); /* any frame, in one socket */

	/* No external endpoint, MSS 1,024 (a frame of 14 + 60 + 4 + 1,024 + 4
	 * + 12 = 1,118 bytes), 100 Gbps (80 ps a byte), 500 ns: window 2 x
	 * 500,000 + 2 x 1,122 x 80 + 58 x 80 = 1,184,160 ps = 255.2 minimum
	 * frames of 4,640 ps: 256 + 1 + 256 = 513 slots. */
	a.topology = write_topology(f, path, "rings.ini",
				    "[emulation]\nname = tr\n[nic]\nMSS = 1024\n[nic h0]\n"
				    "ip = 10.0.0.1\n[nic h1]\nip = 10.0.0.2\n[link h0 h1]\n"
				    "rate = 100Gbps\ndelay = 500ns\n");
	assert_int_equal(daemon_init(&d, "nicd", &a, NODE_NIC), 0);
	rx = daemon_rx_size(&d, 0);
	assert_int_equal(rx.slots, 513);
	assert_int_equal(rx.frame_max, 1118);
	daemon_destroy(&d);

	/* The defaults (400 Gbps, 1 us, MSS 4,096: 4,190-byte frames): 1,870 +
	 * 1 + 256 = 2,127 slots of 4,256 bytes. */
	write_topology(f, path, "rings.ini",
		       "[emulation]\nname = tr\n[nic h0]\nip = 10.0.0.1\n[nic h1]\n"
		       "ip = 10.0.0.2\n[link h0 h1]\n");
	assert_int_equal(daemon_init(&d, "nicd", &a, NODE_NIC), 0);
	rx = daemon_rx_size(&d, 0);
	assert_int_equal(rx.slots, 2127);
	assert_int_equal(rx.frame_max, 4190);
	daemon_destroy(&d);
}

static void nothing(void *arg, ps_t now)
{
	(void)arg;
	(void)now;
}

/* A promise frame of p from port i's peer, next in its sequence. */
static void line_promise(struct daemon *d, int i, ps_t p, uint32_t *seq)
{
	uint8_t buf[WIRE_PROMISE_LEN], mac[6] = {2, 0, 0, 0, 0, 1};
	struct wire_promise w = {.promise = p, .seq = (*seq)++};

	daemon_frame_in(d, i, buf, wire_promise_put(buf, mac, mac, &w), 0);
}

/* A switch's port by which nothing that came in on it leaves promises
 * from the other ports' promises and its next event, not its own peer's
 * (docs/promises.md, Lookahead).  s0 between h0 and h1 at max: h0 promises
 * 5 us, h1 2 us, an event waits at 4 us; s0 promises h0 2 + 1 us (the
 * link's delay; no engine hook) and h1 min(5, 4) + 1 us; once h1 promises
 * 4.5 us and the event has run, h0 4.5 + 1 us and h1 5 + 1 us.  A NIC
 * never ignores its one port, nor does a switch when an external endpoint
 * is in the topology (the fixture's s0). */
static void test_switch_promises_without_its_own_peer(void **state)
{
	struct fixture *f = *state;
	struct daemon d;
	struct daemon_args a = {.topology = f->path, .node = "s0", .out = f->out};
	uint32_t seq[2] = {0, 0};
	char path[160], err[128];

	assert_false(f->d.ports[0].own_ignored);
	assert_false(f->d.ports[1].own_ignored);
	a.topology = write_topology(f, path, "line.ini",
				    "[emulation]\nname = tl\n[nic h0]\nip = 10.0.0.1\n[nic h1]\n"
				    "ip = 10.0.0.2\n[switch s0]\n[link h0 s0]\n[link h1 s0]\n");
	assert_int_equal(daemon_init(&d, "switchd", &a, NODE_SWITCH), 0);
	assert_true(d.ports[0].own_ignored);
	assert_true(d.ports[1].own_ignored);
	d.clock_ns = fake_clock;
	d.clock_ctx = &f->clock;
	d.eng = (struct daemon_engine){
	    .ctx = f, .receive = fake_receive, .receive_frame = fake_receive_frame};
	f->clock = EPOCH;
	assert_true(daemon_start(&d, EPOCH, 0, err, sizeof(err)));
	events_schedule(d.q, 4 * US, nothing, NULL);
	line_promise(&d, 0, 5 * US, &seq[0]);
	line_promise(&d, 1, 2 * US, &seq[1]);
	daemon_advance(&d);
	assert_int_equal(d.floor, 2 * US);
	assert_int_equal(d.ports[0].promised, 3 * US);
	assert_int_equal(d.ports[1].promised, 5 * US);
	/* The event runs; h1's promise still holds h0's back. */
	line_promise(&d, 1, 4500000, &seq[1]);
	daemon_advance(&d);
	assert_int_equal(d.floor, 4500000);
	assert_int_equal(d.ports[0].promised, 5500000);
	assert_int_equal(d.ports[1].promised, 6 * US);
	daemon_finish(&d);
	daemon_destroy(&d);

	a.node = "h0";
	assert_int_equal(daemon_init(&d, "nicd", &a, NODE_NIC), 0);
	assert_false(d.ports[0].own_ignored);
	daemon_destroy(&d);
}

#define T(fn) cmocka_unit_test_setup_teardown(fn, setup, teardown)

/* ---- control clients (issue 13, failure 5) ---- */

static int ctl_connect(const struct fixture *f, struct ev_loop *loop)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0);

	assert_true(fd >= 0);
	assert_true(snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", f->d.ctl_path) <
		    (int)sizeof(sa.sun_path));
	assert_int_equal(connect(fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
	ev_run(loop, EVRUN_NOWAIT); /* accepted */
	return fd;
}

/* Wait (running the loop) until the daemon closes fd: its reads see the
 * end, after whatever was sent. */
static bool closed_by_daemon(int fd, struct ev_loop *loop, double seconds, char *got, size_t len)
{
	size_t n = 0;

	for (int i = 0; i < (int)(seconds * 100); i++) {
		ev_run(loop, EVRUN_NOWAIT);
		ssize_t r = recv(fd, got + n, len - 1 - n, MSG_DONTWAIT);
		if (r > 0)
			n += (size_t)r;
		got[n] = 0;
		if (r == 0 || (r < 0 && errno == ECONNRESET))
			return true;
		nanosleep(&(struct timespec){0, 10000000}, NULL);
	}
	return false;
}

/* Issue 13, failure 5: a client that never reads its replies cannot stall
 * the loop (each turn returns at once) and is dropped when idle; a silent
 * one is dropped when idle; beyond 64 clients a new one is told so. */
static void test_ctl_clients_cannot_stall(void **state)
{
	struct fixture *f = *state;
	struct ev_loop *loop = ev_loop_new(EVFLAG_AUTO);
	int fds[64], hog, extra;
	char got[256];

	f->d.loop = loop;
	f->d.ctl_idle_s = 0.3;
	snprintf(f->d.ctl_path, sizeof(f->d.ctl_path), "%s/s0.ctl", f->dir);
	assert_true(daemon_ctl_open(&f->d));

	for (int i = 0; i < 64; i++)
		fds[i] = ctl_connect(f, loop);
	extra = ctl_connect(f, loop);
	assert_true(closed_by_daemon(extra, loop, 10, got, sizeof(got)));
	assert_string_equal(got, "error too many control clients (allowed: 64)\n");
	close(extra);
	for (int i = 0; i < 64; i++)
		close(fds[i]);
	ev_run(loop, EVRUN_NOWAIT);

	/* The hog sends commands without end and reads nothing. */
	hog = ctl_connect(f, loop);
	for (int i = 0; i < 20000; i++) {
		struct timespec t0, t1;
		if (send(hog, "status\n", 7, MSG_DONTWAIT | MSG_NOSIGNAL) < 0 && errno != EAGAIN)
			break;
		clock_gettime(CLOCK_MONOTONIC, &t0);
		ev_run(loop, EVRUN_NOWAIT);
		clock_gettime(CLOCK_MONOTONIC, &t1);
		/* no turn waits for the client (was: 1 s a line) */
		assert_true((t1.tv_sec - t0.tv_sec) * 1000000000L + (t1.tv_nsec - t0.tv_nsec) <
			    500000000L);
	}
	struct pollfd p = {.fd = hog, .events = POLLOUT};
	bool gone = false;
	for (int i = 0; i < 1000 && !gone; i++) { /* 10 s at most: a loaded machine */
		ev_run(loop, EVRUN_NOWAIT);
		gone = poll(&p, 1, 10) == 1 && (p.revents & (POLLHUP | POLLERR));
	}
	assert_true(gone);
	close(hog);

	/* A client that says nothing is dropped after ctl_idle_s. */
	hog = ctl_connect(f, loop);
	assert_true(closed_by_daemon(hog, loop, 10, got, sizeof(got)));
	assert_string_equal(got, "");
	close(hog);

	daemon_ctl_close(&f->d);
	ev_loop_destroy(loop);
	f->d.loop = NULL;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    T(test_arrivals_run_at_their_stamp_in_rule_16_order),
	    T(test_nothing_runs_before_the_epoch),
	    T(test_events_wait_for_the_safe_time),
	    T(test_max_runs_as_soon_as_safe),
	    T(test_ports_that_cannot_move_the_run_may_wait),
	    T(test_done_wall_is_the_advance_that_finished),
	    T(test_late_read_is_exact),
	    T(test_stamp_is_a_promise),
	    T(test_promises_go_out_when_they_move),
	    T(test_sequence_gap_fails),
	    T(test_promise_backwards_fails),
	    T(test_stamp_overflow_fails),
	    T(test_stamp_below_promise_fails),
	    T(test_bad_frame_goes_to_receive_frame_at_its_stamp),
	    T(test_kept_payload_stays_valid),
	    cmocka_unit_test(test_populate_makes_pages_resident),
	    T(test_external_frames_are_stamped_on_receipt),
	    T(test_transmit_stamped_now_external_at_arrival),
	    cmocka_unit_test(test_hist_exact_below_64),
	    cmocka_unit_test(test_hist_percentiles_within_one_sixteenth),
	    cmocka_unit_test(test_cmd_parse),
	    cmocka_unit_test(test_cmd_parse_refuses_with_a_reason),
	    T(test_hold_and_grant_paced),
	    T(test_commands),
	    cmocka_unit_test(test_args),
	    T(test_init_refuses_wrong_node),
	    T(test_rx_queues_from_the_lookahead),
	    T(test_switch_promises_without_its_own_peer),
	    T(test_ctl_clients_cannot_stall),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
