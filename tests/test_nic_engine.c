/* tests/test_nic_engine.c — the NIC engine driven directly, two engines on
 * one event queue with a host that can cut a frame on the way as a
 * trimming switch would (no switch is needed to check the NIC's side). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>

#include "core/config.h"
#include "lib/vectors.h"
#include "nicd/nic.h"
#include "nicd/nic_impl.h" /* test_invariants_checked reaches into it */
#include "nicd/nic_impl.h" /* nic_timer_duration */

#define DSCP_TRIMMED	      9
#define DSCP_TRIMMED_LAST_HOP 10
#define MAX_LOG		      4096

struct side;

struct bench {
	struct events *q;
	struct pkt_pool pool;
	struct nic_attrs attrs[2];
	struct link_end link[2];
	struct side *sides[2];
	int trim_psn;	   /* cut this PSN's first transmission from h0, -1 none */
	uint8_t trim_dscp; /* the codepoint the cutting switch writes */
	int ce_psn;	   /* mark this PSN's first transmission CE, -1 none */
	int trimmed;
	struct {
		uint16_t sport;
		ps_t built;
	} log[MAX_LOG]; /* h0's data packets, in order */
	int nlog;
	ps_t feedback_at; /* when the NACK or the CE-marked packet's SACK left h1 */
	struct pkt nacks[8];
	int nnacks;
	struct pkt sent[8]; /* h0's transmissions of trim_psn */
	int nsent;
	int completed, received, verified;
	struct csv *monitor; /* mrc-monitor rows, or NULL */
	int late_psn[2];     /* h0's first transmissions of these arrive 3 us late */
	int sacks_drawn[64]; /* h1's SACKs, by the PSN that drew them */
	ps_t elide_before;   /* nic_params.elide_before of both NICs */
	struct {
		ps_t at;
		int side;
		uint8_t opcode;
		uint32_t psn;
	} tx[MAX_LOG]; /* every frame handed over, in order */
	int ntx;
};

struct side {
	struct bench *b;
	int id;
	struct nic *nic;
	struct pkt *head, *tail;	   /* frames on the way to the other side */
	struct pkt *late_head, *late_tail; /* the late ones, also in order */
};

static void push(struct pkt **head, struct pkt **tail, struct pkt *p)
{
	p->next = NULL;
	if (*tail)
		(*tail)->next = p;
	else
		*head = p;
	*tail = p;
}

static struct pkt *pop(struct pkt **head, struct pkt **tail)
{
	struct pkt *p = *head;

	*head = p->next;
	if (!*head)
		*tail = NULL;
	p->next = NULL;
	return p;
}

static void arrive_late(void *arg, ps_t now)
{
	struct side *from = arg;

	nic_receive(from->b->sides[!from->id]->nic, pop(&from->late_head, &from->late_tail), now);
}

/* A packet the bench reorders: h0's first transmission of a late PSN. */
static bool is_late(const struct bench *b, const struct side *s, const struct pkt *p)
{
	return s->id == 0 && wire_is_data(p) && !(p->flags & WIRE_BTH_RTX) &&
	       ((int)p->psn == b->late_psn[0] || (int)p->psn == b->late_psn[1]);
}

static void arrive(void *arg, ps_t now)
{
	struct side *from = arg;
	struct side *to = from->b->sides[!from->id];
	struct pkt *p = from->head;

	from->head = p->next;
	if (!from->head)
		from->tail = NULL;
	p->next = NULL;
	nic_receive(to->nic, p, now);
}

static void transmit(void *ctx, struct pkt *p, ps_t arrival)
{
	struct side *s = ctx;
	struct bench *b = s->b;

	if (b->ntx < MAX_LOG) {
		b->tx[b->ntx].at = events_now(b->q);
		b->tx[b->ntx].side = s->id;
		b->tx[b->ntx].opcode = p->opcode;
		b->tx[b->ntx++].psn = p->psn;
	}
	if (s->id == 0 && wire_is_data(p) && b->nlog < MAX_LOG) {
		b->log[b->nlog].sport = p->sport;
		b->log[b->nlog++].built = p->built;
	}
	if (s->id == 0 && wire_is_data(p) && (int)p->psn == b->ce_psn && !(p->flags & WIRE_BTH_RTX))
		p->ecn = WIRE_ECN_CE;
	if (s->id == 0 && wire_is_data(p) && (int)p->psn == b->trim_psn) {
		if (b->nsent < 8)
			b->sent[b->nsent++] = *p;
		if (!(p->flags & WIRE_BTH_RTX)) { /* the first transmission */
			wire_trim(p);
			p->dscp = b->trim_dscp;
			b->trimmed++;
		}
	}
	if (s->id == 1 && p->opcode == WIRE_OP_NACK && b->nnacks < 8) {
		b->nacks[b->nnacks++] = *p;
		b->feedback_at = events_now(b->q);
	}
	if (s->id == 1 && p->opcode == WIRE_OP_SACK && p->u.sack.seth.m == WIRE_M_SKIP_ONCE)
		b->feedback_at = events_now(b->q);
	if (s->id == 1 && p->opcode == WIRE_OP_SACK && !p->u.sack.seth.pr) {
		int64_t drawn = (int64_t)p->u.sack.seth.cack_psn + p->u.sack.seth.ack_psn_offset;
		if (drawn >= 0 && drawn < 64)
			b->sacks_drawn[drawn]++;
	}
	if (is_late(b, s, p)) {
		push(&s->late_head, &s->late_tail, p);
		events_schedule_key(b->q, arrival + 3 * PS_PER_US, events_key_arrival(!s->id, 1),
				    arrive_late, s);
		return;
	}
	push(&s->head, &s->tail, p);
	events_schedule_key(b->q, arrival, events_key_arrival(!s->id, 0), arrive, s);
}

static void completion(void *ctx, enum nic_completion what, const struct nic_msg_info *m, ps_t now)
{
	struct side *s = ctx;

	(void)now;
	if (what == MSG_COMPLETE)
		s->b->completed++;
	if (what == RECV_COMPLETE) {
		s->b->received++;
		s->b->verified += m->verified;
	}
}

static void bench_init(struct bench *b, struct side sides[2])
{
	static struct link_attrs no_faults;

	memset(b, 0, sizeof(*b));
	b->q = events_new();
	assert_true(pkt_pool_init(&b->pool, 256, 0));
	b->trim_psn = -1;
	b->ce_psn = -1;
	b->late_psn[0] = b->late_psn[1] = -1;
	b->trim_dscp = DSCP_TRIMMED_LAST_HOP;
	for (int i = 0; i < 2; i++) {
		config_nic_defaults(&b->attrs[i]);
		b->attrs[i].ip = 0x0A000001 + i;
		b->attrs[i].transport_stats = false;
		config_nic_resolve(&b->attrs[i]);
		b->link[i].rate = 400000000000ULL;
		b->link[i].delay = PS_PER_US;
		b->link[i].attrs = &no_faults;
		sides[i] = (struct side){.b = b, .id = i};
		b->sides[i] = &sides[i];
	}
}

static void bench_start(struct bench *b)
{
	static const uint8_t mac[2][6] = {{2, 0, 0, 0, 0, 1}, {2, 0, 0, 0, 0, 2}};

	for (int i = 0; i < 2; i++) {
		struct nic_params prm = {
		    .name = i ? "h1" : "h0",
		    .attrs = &b->attrs[i],
		    .link = &b->link[i],
		    .rate = 400000000000ULL, /* DataRate and the link's */
		    .mac = mac[i],
		    .peer_mac = mac[!i],
		    .seed = 1,
		    .events = b->q,
		    .pool = &b->pool,
		    .host = {.ctx = b->sides[i], .transmit = transmit, .completion = completion},
		    .records = {.monitor = b->monitor},
		    .elide_before = b->elide_before};
		b->sides[i]->nic = nic_new(&prm);
		assert_non_null(b->sides[i]->nic);
	}
}

static void bench_free(struct bench *b)
{
	for (int i = 0; i < 2; i++) {
		struct side *s = b->sides[i];
		while (s->head)
			pkt_put(&b->pool, pop(&s->head, &s->tail));
		while (s->late_head)
			pkt_put(&b->pool, pop(&s->late_head, &s->late_tail));
		nic_free(s->nic);
	}
	events_free(b->q);
	assert_int_equal(b->pool.in_use, 0);
	pkt_pool_destroy(&b->pool);
}

/* Seed, Queue pairs and messages / NACKs: the first packet of a message is
 * trimmed before the receiver's QP number is known; it carries C = 1 and the
 * sender's QP number, so the receiver creates its side from it and still
 * NACKs it (TRIMMED_LASTHOP, reflecting the packet's entropy, naming its
 * PSN, to the sender's QP); the sender retransmits it with RTX, ACK-request
 * and the trimmable-retransmission codepoint, and the message completes
 * with every byte accounted for. */
static void test_trimmed_before_qp_known_draws_nack(void **state)
{
	struct bench b;
	struct side sides[2];

	(void)state;
	bench_init(&b, sides);
	b.trim_psn = 0;
	bench_start(&b);
	assert_true(nic_post_message(sides[0].nic, 0x0A000002, 64 * 1024, 1, 0));
	events_run_until(b.q, 100 * PS_PER_US);

	assert_int_equal(b.trimmed, 1);
	assert_true(b.sent[0].flags & WIRE_BTH_C);
	assert_int_equal(b.sent[0].dqpn, 0x100); /* the sender's own QP number */
	assert_int_equal(b.nnacks, 1);
	assert_int_equal(b.nacks[0].u.neth.code, WIRE_NACK_TRIMMED_LASTHOP);
	assert_int_equal(b.nacks[0].u.neth.nack_psn, 0);
	assert_int_equal(b.nacks[0].dqpn, 0x100);
	assert_int_equal(b.nacks[0].sport, b.sent[0].sport);
	assert_int_equal(b.nacks[0].u.neth.entropy_echo, b.sent[0].sport);
	assert_int_equal(b.nsent, 2);
	assert_true(b.sent[1].flags & WIRE_BTH_RTX);
	assert_true(b.sent[1].flags & WIRE_BTH_A);
	assert_int_equal(b.sent[1].dscp, 3); /* DscpTrimmableRetx */
	assert_int_equal(b.completed, 1);
	assert_int_equal(b.received, 1);
	assert_int_equal(b.verified, 1);
	assert_int_equal(nic_counter(sides[1].nic, "rx_trimmed"), 1);
	assert_int_equal(nic_counter(sides[0].nic, "retx_nack"), 1);
	bench_free(&b);
}

/* docs/protocol.md §4: a packet trimmed and resent after its NACK is not
 * ambiguous (the trimmed copy delivered nothing), so the SACK its
 * retransmission draws gives an RTT sample, like every other SACK here and
 * the NACK; the first version took none from it.  1 MiB, so that the
 * retransmission is SACKed while the QP is still open. */
static void test_sample_after_trim_nack(void **state)
{
	struct bench b;
	struct side sides[2];

	(void)state;
	bench_init(&b, sides);
	b.trim_psn = 5;
	bench_start(&b);
	assert_true(nic_post_message(sides[0].nic, 0x0A000002, 1 << 20, 1, 0));
	events_run_until(b.q, 100 * PS_PER_US);
	assert_int_equal(b.completed, 1);
	assert_int_equal(nic_counter(sides[0].nic, "retx_nack"), 1);
	/* every SACK and the NACK, but the SACK after the final cumulative
	 * ACK, which finds the QP closed (§12 rule 3) */
	assert_int_equal(nic_counter(sides[0].nic, "rx_for_closed_qp"), 1);
	assert_int_equal(nic_counter(sides[0].nic, "rtt_samples"),
			 nic_counter(sides[0].nic, "rx_sack") +
			     nic_counter(sides[0].nic, "rx_nack") - 1);
	bench_free(&b);
}

/* Seed, NACKs: with TrimmingEnabled false on the receiver no NACK is sent;
 * the sender recovers the packet with its timer. */
static void test_trimmed_without_receiver_trimming_no_nack(void **state)
{
	struct bench b;
	struct side sides[2];

	(void)state;
	bench_init(&b, sides);
	b.trim_psn = 3;
	b.attrs[1].trimming = false;
	bench_start(&b);
	assert_true(nic_post_message(sides[0].nic, 0x0A000002, 4 * 4096, 1, 0));
	events_run_until(b.q, 400 * PS_PER_US);
	assert_int_equal(b.nnacks, 0);
	assert_int_equal(nic_counter(sides[1].nic, "rx_trimmed"), 1);
	assert_int_equal(nic_counter(sides[0].nic, "retx_timeout"), 1);
	assert_int_equal(b.completed, 1);
	bench_free(&b);
}

/* docs/protocol.md §6: the value a TRIMMED NACK or a SACK with M = 01 (CE)
 * names is passed over once by the round robin: absent from the first
 * EntropyCount - 1 picks after the feedback arrives, back in the next lap.
 * A TRIMMED_LASTHOP NACK carries no entropy penalty. */
static int picks_with(const struct bench *b, ps_t after, uint16_t ev, int from, int to)
{
	int n = 0, found = 0;

	for (int i = 0; i < b->nlog; i++) {
		if (b->log[i].built <= after)
			continue;
		if (n >= from && n < to && b->log[i].sport == ev)
			found++;
		n++;
	}
	assert_true(n >= to);
	return found;
}

static void run_feedback(int trim_psn, uint8_t dscp, int ce_psn, int expect_in_first_lap)
{
	struct bench b;
	struct side sides[2];
	uint16_t ev;
	ps_t arrived;

	bench_init(&b, sides);
	b.trim_psn = trim_psn;
	b.trim_dscp = dscp;
	b.ce_psn = ce_psn;
	bench_start(&b);
	assert_true(nic_post_message(sides[0].nic, 0x0A000002, 2 << 20, 1, 0));
	events_run_until(b.q, 300 * PS_PER_US);
	assert_int_equal(b.completed, 1);
	assert_true(b.feedback_at > 0);
	ev = b.log[trim_psn >= 0 ? trim_psn : ce_psn].sport;
	/* the feedback reaches h0 one link delay after it left h1's port */
	arrived = b.feedback_at + PS_PER_US;
	assert_int_equal(picks_with(&b, arrived, ev, 0, 127), expect_in_first_lap);
	assert_int_equal(picks_with(&b, arrived, ev, 127, 255), 1);
	bench_free(&b);
}

static void test_trimmed_nack_skips_entropy_once(void **state)
{
	(void)state;
	run_feedback(20, DSCP_TRIMMED, -1, 0);
}

static void test_lasthop_nack_no_entropy_penalty(void **state)
{
	(void)state;
	run_feedback(20, DSCP_TRIMMED_LAST_HOP, -1, 1);
}

static void test_ce_sack_skips_entropy_once(void **state)
{
	(void)state;
	run_feedback(-1, 0, 20, 0);
}

/* A malformed frame is counted by its reason and dropped. */
static void test_malformed_frame_counted(void **state)
{
	struct bench b;
	struct side sides[2];
	uint8_t junk[60] = {0};

	(void)state;
	bench_init(&b, sides);
	bench_start(&b);
	nic_receive_frame(sides[1].nic, junk, sizeof(junk), 0);
	nic_receive_frame(sides[1].nic, junk, 10, 0);
	assert_int_equal(nic_counter(sides[1].nic, "rx_drop_not_ipv4"), 1);
	assert_int_equal(nic_counter(sides[1].nic, "rx_drop_short"), 1);
	bench_free(&b);
}

/* docs/protocol.md §2: nothing in a packet can make a NIC crash, allocate
 * without bound or corrupt another QP.  Frames of every kind, from a real
 * exchange, have random bytes changed (their IPv4 checksum fixed, so most
 * reach the engine) and are fed to the receiving NIC while a message is in
 * flight; the message still completes, verified, and every frame is either
 * handled or counted.  The forged frames name other QPs than the
 * message's, which must not notice them.  Run under the sanitizers by
 * `make check`. */
static uint64_t fuzz_state = 0x9E3779B97F4A7C15ULL;

static uint64_t fuzz_next(void)
{
	fuzz_state ^= fuzz_state << 13;
	fuzz_state ^= fuzz_state >> 7;
	fuzz_state ^= fuzz_state << 17;
	return fuzz_state;
}

static void fuzz_frame(struct nic *nic, const struct pkt *model, ps_t now)
{
	uint8_t f[WIRE_MAX_FRAME];
	size_t n = wire_build(model, f, sizeof f);
	unsigned flips = 1 + (unsigned)(fuzz_next() % 4);

	assert_true(n > 0);
	for (unsigned k = 0; k < flips; k++) {
		/* mostly the MRC headers after Ethernet, IPv4 and UDP */
		size_t at = 14 + 20 + (size_t)(fuzz_next() % (n - 34));
		f[at] = (uint8_t)fuzz_next();
	}
	if (fuzz_next() % 8 == 0) /* sometimes a shorter frame */
		n = 14 + (size_t)(fuzz_next() % (n - 14));
	f[24] = f[25] = 0;
	uint16_t c = wire_ipv4_csum(f + 14);
	f[24] = (uint8_t)(c >> 8), f[25] = (uint8_t)c;
	nic_receive_frame(nic, f, n, now);
}

static void test_mutated_frames_never_crash(void **state)
{
	struct bench b;
	struct side sides[2];
	struct pkt models[8];

	(void)state;
	bench_init(&b, sides);
	bench_start(&b);
	assert_true(nic_post_message(sides[0].nic, 0x0A000002, 1 << 20, 1, 0));
	for (int i = 0; i < 8; i++) {
		vectors_pkt(i + 1, &models[i]);
		/* aim at the NICs of this bench, both ways, at QPs other than
		 * the message's (0x100 on both): no byte flip reaches those */
		models[i].dst_ip = i < 3 || i == 6 || i == 7 ? 0x0A000002 : 0x0A000001;
		models[i].src_ip = models[i].dst_ip ^ 3;
		if (models[i].dqpn != WIRE_ENDPOINT_QPN)
			models[i].dqpn = 0x7F7F7F;
	}
	for (int round = 0; round < 400; round++) {
		events_run_until(b.q, (ps_t)round * 250 * PS_PER_NS);
		for (int k = 0; k < 50; k++) {
			const struct pkt *m = &models[fuzz_next() % 8];
			int to = m->dst_ip == 0x0A000002;
			fuzz_frame(sides[to].nic, m, events_now(b.q));
		}
	}
	events_run_until(b.q, 2 * PS_PER_MS);
	assert_int_equal(b.completed, 1);
	assert_int_equal(b.verified, 1);
	/* the forgeries reached the engines, not only the parser */
	assert_true(nic_counter(sides[0].nic, "rx_drop_unknown_qp") +
			nic_counter(sides[0].nic, "rx_drop_ack_unknown_qp") >
		    100);
	assert_true(nic_counter(sides[1].nic, "qps_created") > 10);
	assert_true(nic_counter(sides[1].nic, "rx_drop_bad_ip_length") +
			nic_counter(sides[1].nic, "rx_drop_short") +
			nic_counter(sides[1].nic, "rx_drop_bad_length") >
		    100);
	bench_free(&b);
}

/* Issue 9 item 11: with MonitorTriggers = qp_error the monitor keeps each
 * sending QP's last MonitorHistory rows (§12 rule 14) only while the QP is
 * open; 200 messages that complete leave none kept on either NIC (the first
 * version kept them all, 894 MB for 20,000 messages). */
static void test_monitor_histories_freed(void **state)
{
	struct bench b;
	struct side sides[2];
	char dir[] = "/tmp/mrcemu-engine-XXXXXX", cmd[64];

	(void)state;
	bench_init(&b, sides);
	assert_non_null(mkdtemp(dir));
	b.monitor = csv_open(dir, "mrc-monitor.csv", NIC_MONITOR_HEADER);
	assert_non_null(b.monitor);
	for (int i = 0; i < 2; i++) {
		b.attrs[i].monitor = true;
		b.attrs[i].monitor_triggers = MONITOR_QP_ERROR;
	}
	bench_start(&b);
	for (uint64_t id = 1; id <= 200; id++)
		assert_true(nic_post_message(sides[0].nic, 0x0A000002, 4096, id, 0));
	events_run_until(b.q, 1000 * PS_PER_US);
	assert_int_equal(b.completed, 200);
	assert_int_equal(nic_monitor_kept(sides[0].nic), 0);
	assert_int_equal(nic_monitor_kept(sides[1].nic), 0);
	bench_free(&b);
	assert_true(csv_close(b.monitor));
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	assert_int_equal(system(cmd), 0);
}

/* Issue 9 item 5, §12 rule 17: each gap that was open when a packet with
 * the ACK-request flag arrived draws a SACK when its last missing PSN
 * arrives, whether or not other gaps remain open.  At MSS 1,024 the
 * receiver coalesces four packets per SACK; PSNs 2 and 9 of 16 are
 * reordered behind the last packet, which asks for an ACK while both gaps
 * are open: PSN 2 closes its gap with gap 9 still open and draws a SACK
 * (the first version waited for every gap to close). */
static void test_each_marked_gap_draws_a_sack(void **state)
{
	struct bench b;
	struct side sides[2];

	(void)state;
	bench_init(&b, sides);
	for (int i = 0; i < 2; i++) {
		b.attrs[i].mss = 1024;
		b.attrs[i].max_cwnd = b.attrs[i].initial_cwnd = 0;
		b.attrs[i].min_cwnd = 0;
		config_nic_resolve(&b.attrs[i]);
	}
	b.late_psn[0] = 2;
	b.late_psn[1] = 9;
	bench_start(&b);
	assert_true(nic_post_message(sides[0].nic, 0x0A000002, 16 * 1024, 1, 0));
	events_run_until(b.q, 100 * PS_PER_US);
	assert_int_equal(b.completed, 1);
	assert_int_equal(b.sacks_drawn[15], 1); /* the ACK-request */
	assert_int_equal(b.sacks_drawn[2], 1);	/* gap 2 closed, gap 9 open */
	assert_int_equal(b.sacks_drawn[9], 1);	/* the last gap closed */
	assert_int_equal(nic_counter(sides[0].nic, "tx_retx_pkts"), 0);
	bench_free(&b);
}

/* Issue 9 item 12: the timer schedule saturates.  With InitialAckTimeout
 * at its 8 s maximum and LinearRetryCount 0, timer 30 would be 8 s x 2^25
 * (at most 25 doublings, §12 rule 7), past 64 bits: it stays the longest
 * time (whole µs) instead of wrapping to a short timeout. */
static void test_timer_duration_saturates(void **state)
{
	struct nic_attrs a;

	(void)state;
	config_nic_defaults(&a);
	config_nic_resolve(&a);
	assert_int_equal(nic_timer_duration(&a, 8), 300 * PS_PER_US); /* §11 */
	a.initial_ack_timeout = 8 * PS_PER_S;
	a.linear_retry_count = 0;
	assert_int_equal(nic_timer_duration(&a, 1), 16 * PS_PER_S);
	assert_int_equal(nic_timer_duration(&a, 30), (PS_NEVER - 1) / PS_PER_US * PS_PER_US);
}

/* Issue 16: the sender keeps each segment's serialization start (§12 rule
 * 9, the RTT's origin) in 32 bits after the QP's posting, and widens every
 * entry to 64 bits when a time does not fit; each value reads back
 * exactly, before and after. */
static void test_tx_start_kept_exactly(void **state)
{
	const ps_t posted = 5 * PS_PER_MS, last32 = posted + UINT32_MAX - 2;
	struct nic_qp_send sq = {.posted = posted, .kept = 4, .tx_start_cap = 4};

	(void)state;
	assert_non_null(sq.tx_start.narrow = calloc(4, sizeof(uint32_t)));
	assert_int_equal(nic_seg_tx_start(&sq, 0), 0); /* not on the wire yet */
	assert_true(nic_seg_set_tx_start(&sq, 1, posted));
	assert_true(nic_seg_set_tx_start(&sq, 2, NIC_TX_AMBIGUOUS));
	assert_true(nic_seg_set_tx_start(&sq, 3, last32));
	assert_false(sq.tx_start_wide);
	assert_int_equal(nic_seg_tx_start(&sq, 1), posted);
	assert_int_equal(nic_seg_tx_start(&sq, 2), NIC_TX_AMBIGUOUS);
	assert_int_equal(nic_seg_tx_start(&sq, 3), last32);
	assert_true(nic_seg_set_tx_start(&sq, 5, last32 + 1)); /* slot 1 */
	assert_true(sq.tx_start_wide);
	assert_int_equal(nic_seg_tx_start(&sq, 4), 0);
	assert_int_equal(nic_seg_tx_start(&sq, 5), last32 + 1);
	assert_int_equal(nic_seg_tx_start(&sq, 6), NIC_TX_AMBIGUOUS);
	assert_int_equal(nic_seg_tx_start(&sq, 7), last32);
	assert_true(nic_seg_set_tx_start(&sq, 8, PS_PER_US)); /* before posted */
	assert_int_equal(nic_seg_tx_start(&sq, 0), PS_PER_US);
	free(sq.tx_start.wide);
}

/* A message of 1 MiB each way on one link (the receiving side's PCIe
 * writes share the NIC-to-host direction with its fetches' read
 * requests), h1 with `lanes` PCIe lanes, both with a PcieTxBufferSize of
 * txbuf and an IngressDataPoolSize of twice that (a write that waits for
 * the buffer holds its room there, so late writes cost drops): every
 * frame handed over and every counter, and the events run, with writes'
 * ends free to go without their events (nic_params.elide_before) or not. */
struct two_way {
	ps_t at[MAX_LOG];
	uint8_t what[MAX_LOG];
	int ntx;
	uint64_t counters[2][128];
	uint64_t events;
};

static void run_two_way(struct two_way *r, ps_t elide_before, uint32_t lanes, uint64_t txbuf)
{
	struct bench b;
	struct side sides[2];
	struct counter c;

	bench_init(&b, sides);
	b.elide_before = elide_before;
	b.attrs[1].pcie_lanes = lanes;
	for (int i = 0; i < 2; i++) {
		b.attrs[i].pcie_tx_buffer = txbuf;
		b.attrs[i].ingress_data_pool = 2 * txbuf;
	}
	bench_start(&b);
	assert_true(nic_post_message(sides[0].nic, 0x0A000002, 1024 * 1024, 1, 0));
	assert_true(nic_post_message(sides[1].nic, 0x0A000001, 1024 * 1024, 2, 0));
	events_run_until(b.q, PS_NEVER);
	assert_int_equal(b.completed, 2);
	assert_int_equal(b.verified, 2);
	assert_true(b.ntx < MAX_LOG);
	r->ntx = b.ntx;
	for (int i = 0; i < b.ntx; i++) {
		r->at[i] = b.tx[i].at;
		r->what[i] = (uint8_t)(b.tx[i].side << 7 | b.tx[i].opcode);
	}
	for (int i = 0; i < 2; i++)
		for (size_t k = 0; k < 128 && nic_counter_at(sides[i].nic, k, &c); k++)
			r->counters[i][k] = c.value;
	r->events = events_executed(b.q);
	bench_free(&b);
}

/* Issue 16: a PCIe write's end keeps its event only when a write might
 * wait for the transmit buffer before it (nicd/pcie.c, may_elide);
 * otherwise the room is given back where the event would have run.
 * Nothing differs but the events run.  At 16 lanes the buffer never
 * fills: each of the 512 writes' ends goes without its event.  On h1's
 * slower links writes wait for it, the ends they wait for keep their
 * events, and when each end lets a waiting write in decides when the
 * ingress pool has room again (an end left without its event there, the
 * next write letting it in instead, drops frames the kept one did not). */
static void test_write_ends_without_events(void **state)
{
	static struct two_way kept, elided;
	static const struct {
		uint32_t lanes;
		uint64_t txbuf;
	} cases[] = {{16, 256 * 1024}, {8, 8 * 4096}, {4, 8 * 4096}, {1, 3 * 4096}};

	(void)state;
	for (size_t k = 0; k < sizeof(cases) / sizeof(cases[0]); k++) {
		run_two_way(&kept, 0, cases[k].lanes, cases[k].txbuf);
		run_two_way(&elided, PS_NEVER, cases[k].lanes, cases[k].txbuf);
		assert_int_equal(kept.ntx, elided.ntx);
		assert_memory_equal(kept.at, elided.at, (size_t)kept.ntx * sizeof(kept.at[0]));
		assert_memory_equal(kept.what, elided.what, (size_t)kept.ntx);
		assert_memory_equal(kept.counters, elided.counters, sizeof(kept.counters));
		if (k == 0)
			assert_int_equal(kept.events - elided.events, 512);
		else
			assert_true(kept.events > elided.events);
	}
}

/* Issue 9 item 13: a frame that reaches a down port is a receive drop,
 * named so (the first version counted it as a transmit drop); what a down
 * port would send is a transmit drop of the port, not of the link's down
 * window (tx_drop_link_down, which the first version counted). */
static void test_down_port_drop_named(void **state)
{
	struct bench b;
	struct side sides[2];

	(void)state;
	bench_init(&b, sides);
	bench_start(&b);
	nic_port_set_down(sides[1].nic, true);
	assert_true(nic_post_message(sides[0].nic, 0x0A000002, 16 * 1024, 1, 0));
	events_run_until(b.q, 10 * PS_PER_US);
	assert_int_equal(nic_counter(sides[1].nic, "rx_drop_port_down"), 4);
	assert_int_equal(nic_counter(sides[1].nic, "tx_drop_link_down"), 0);
	nic_port_set_down(sides[1].nic, false);
	nic_port_set_down(sides[0].nic, true); /* the 4 packets go out again, lost */
	events_run_until(b.q, 500 * PS_PER_US);
	assert_true(nic_counter(sides[0].nic, "tx_drop_port_down") >= 4);
	assert_int_equal(nic_counter(sides[0].nic, "tx_drop_link_down"), 0);
	assert_int_equal(nic_counter(sides[1].nic, "rx_data_pkts"), 0);
	bench_free(&b);
}

static void inject(struct nic *nic, const struct pkt *p, ps_t now)
{
	uint8_t f[WIRE_MAX_FRAME];
	size_t n = wire_build(p, f, sizeof f);

	assert_true(n > 0);
	nic_receive_frame(nic, f, n, now);
}

static void assert_invariants(const struct side sides[2])
{
	char why[160];

	for (int i = 0; i < 2; i++) {
		const char *r = nic_check(sides[i].nic, why, sizeof(why));
		if (r)
			fail_msg("h%d at %llu ps: %s", i,
				 (unsigned long long)events_now(sides[0].b->q), r);
	}
}

/* Issue 9 item 13: every count the engine keeps beside its tables holds
 * between any two events of two messages to one peer (one group, turns)
 * with trimmed packets (NACKs, retransmissions queued and sent) and QPs
 * closing; and a count put wrong is named. */
static void test_invariants_checked(void **state)
{
	struct bench b;
	struct side sides[2];
	struct nic_qp_send *sq;
	char why[160];

	(void)state;
	bench_init(&b, sides);
	b.trim_psn = 3;
	bench_start(&b);
	assert_true(nic_post_message(sides[0].nic, VEC_IP_B, 64 * 1024, 1, 0));
	assert_true(nic_post_message(sides[0].nic, VEC_IP_B, 32 * 1024, 2, 0));
	assert_true(nic_post_message(sides[1].nic, VEC_IP_A, 16 * 1024, 3, 0));
	sq = hmap_get(&sides[0].nic->send_qps, FIRST_QPN);
	assert_non_null(sq);
	for (ps_t t = 0; t < 3 * PS_PER_US; t += 10 * PS_PER_NS) {
		events_run_until(b.q, t);
		assert_invariants(sides);
	}
	/* wrong counts, each named, then put back */
	sq->group->refs++;
	assert_non_null(
	    strstr(nic_check(sides[0].nic, why, sizeof(why)), "group refs 3, QPs in it 2"));
	sq->group->refs--;
	sq->outstanding++;
	assert_non_null(strstr(nic_check(sides[0].nic, why, sizeof(why)), "send QP outstanding"));
	sq->outstanding--;
	sides[0].nic->open_msgs++;
	assert_non_null(
	    strstr(nic_check(sides[0].nic, why, sizeof(why)), "open_msgs 3, send QPs 2"));
	sides[0].nic->open_msgs--;
	sq->dest->refs++;
	assert_non_null(strstr(nic_check(sides[0].nic, why, sizeof(why)), "destination refs"));
	sq->dest->refs--;
	for (ps_t t = 3 * PS_PER_US; t < 100 * PS_PER_US; t += 10 * PS_PER_NS) {
		events_run_until(b.q, t);
		assert_invariants(sides);
	}
	assert_int_equal(b.completed, 3);
	assert_int_equal(b.trimmed, 2); /* PSN 3 of both of h0's QPs */
	assert_int_equal(nic_counter(sides[0].nic, "retx_nack"), 2);
	bench_free(&b);
}

/* Issue 9 item 13: a frame that finds no packet buffer is counted on the
 * side it was lost: receiving (the frame), or sending (the answer). */
static void test_no_memory_drops_named(void **state)
{
	struct bench b;
	struct side sides[2];
	struct pkt p, *held;

	(void)state;
	bench_init(&b, sides);
	bench_start(&b);
	vec_base(&p, true, WIRE_OP_PROBE, 4321, WIRE_ENDPOINT_QPN, 0);
	assert_int_equal(b.pool.in_use, 0);
	b.pool.max_pkts = 1;
	held = pkt_get(&b.pool); /* the only buffer: none for the frame */
	assert_non_null(held);
	inject(sides[1].nic, &p, 0);
	assert_int_equal(nic_counter(sides[1].nic, "rx_drop_no_memory"), 1);
	assert_int_equal(nic_counter(sides[1].nic, "rx_probe"), 0);
	pkt_put(&b.pool, held); /* one for the probe, none for its answer */
	inject(sides[1].nic, &p, 0);
	assert_int_equal(nic_counter(sides[1].nic, "rx_probe"), 1);
	assert_int_equal(nic_counter(sides[1].nic, "tx_drop_no_memory"), 1);
	assert_int_equal(nic_counter(sides[1].nic, "tx_sack"), 0);
	b.pool.max_pkts = 0;
	bench_free(&b);
}

/* Issue 13, failure 3 (PROTOCOL.md §2: nothing in a packet allocates without
 * bound).  5,000 one-packet messages from 5,000 forged source addresses
 * reach h1 while a real message runs: each creates a receiving QP and a
 * destination; once the QPs are gone, at most MaxQps unused destinations
 * stay, the rest are dropped and counted, and the real message completes
 * verified. */
static void test_forged_sources_bounded(void **state)
{
	enum { FORGED = 5000, CAP = 64 };
	struct bench b;
	struct side sides[2];
	struct pkt p;

	(void)state;
	bench_init(&b, sides);
	b.attrs[1].max_qps = CAP;
	bench_start(&b);
	assert_true(nic_post_message(sides[0].nic, VEC_IP_B, 1 << 20, 1, 0));
	for (int i = 0; i < FORGED; i++) {
		ps_t now = (ps_t)i * 100 * PS_PER_NS;
		events_run_until(b.q, now);
		vec_data(&p, WIRE_OP_WRITE_ONLY, 1000, WIRE_BTH_C, 0x300, 0, 1, 1, 0, 0, 0);
		p.src_ip = 0x0B000000u + (uint32_t)i;
		inject(sides[1].nic, &p, now);
	}
	events_run_until(b.q, 5 * PS_PER_MS);
	assert_int_equal(b.completed, 1);
	assert_int_equal(b.verified, FORGED + 1); /* forged ones are 0 bytes */
	/* every QP has closed and lingered out: FORGED + 1 destinations, CAP kept */
	assert_int_equal(nic_counter(sides[1].nic, "dest_evicted"), FORGED + 1 - CAP);
	assert_int_equal(nic_counter(sides[0].nic, "dest_evicted"), 0);
	bench_free(&b);
}

/* A SACK to h0's QP 0x100 as h1 would send it, naming responder QP rqpn. */
static void forged_sack(struct pkt *p, uint32_t src_ip, uint32_t cack, int16_t offset,
			uint32_t rqpn)
{
	vec_base(p, false, WIRE_OP_SACK, 4321, 0x100, cack);
	p->src_ip = src_ip;
	p->u.sack.seth = (struct wire_seth){.ack_psn_offset = offset,
					    .entropy_echo = 0x110,
					    .responder_qpn = rqpn,
					    .cack_psn = cack,
					    .cc_type = 1};
}

/* Issue 13, failure 4 (PROTOCOL.md §1, Connection fields).  Before h1's
 * first SACK comes back, forged SACKs reach h0's QP: one from a third
 * address (unknown QP), one naming PSNs never sent (inconsistent), and one
 * from the peer's address, consistent, naming QP 0x777.  The last is taken,
 * then the genuine SACK puts h1's QP number back (counted), and the message
 * completes verified instead of sending to a QP that does not exist. */
static void test_forged_sack_does_not_wedge(void **state)
{
	struct bench b;
	struct side sides[2];
	struct pkt p;

	(void)state;
	bench_init(&b, sides);
	bench_start(&b);
	assert_true(nic_post_message(sides[0].nic, VEC_IP_B, 256 * 1024, 1, 0));
	events_run_until(b.q, 500 * PS_PER_NS); /* PSN 0 is on the wire */
	forged_sack(&p, 0x0A000009, WIRE_PSN_MASK, 1, 0x777);
	inject(sides[0].nic, &p, events_now(b.q));
	/* an acknowledgement no sending QP expects: not a data drop */
	assert_int_equal(nic_counter(sides[0].nic, "rx_drop_ack_unknown_qp"), 1);
	assert_int_equal(nic_counter(sides[0].nic, "rx_drop_unknown_qp"), 0);
	forged_sack(&p, VEC_IP_B, 5000, 0, 0x777);
	inject(sides[0].nic, &p, events_now(b.q));
	assert_int_equal(nic_counter(sides[0].nic, "rx_drop_ack_inconsistent"), 1);
	forged_sack(&p, VEC_IP_B, WIRE_PSN_MASK, 1, 0x777);
	inject(sides[0].nic, &p, events_now(b.q));
	events_run_until(b.q, 5 * PS_PER_MS);
	assert_int_equal(b.completed, 1);
	assert_int_equal(b.verified, 1);
	assert_true(nic_counter(sides[0].nic, "remote_qpn_replaced") >= 1);
	assert_int_equal(nic_counter(sides[1].nic, "qps_created"), 1);
	bench_free(&b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_trimmed_before_qp_known_draws_nack),
	    cmocka_unit_test(test_trimmed_without_receiver_trimming_no_nack),
	    cmocka_unit_test(test_sample_after_trim_nack),
	    cmocka_unit_test(test_trimmed_nack_skips_entropy_once),
	    cmocka_unit_test(test_lasthop_nack_no_entropy_penalty),
	    cmocka_unit_test(test_ce_sack_skips_entropy_once),
	    cmocka_unit_test(test_malformed_frame_counted),
	    cmocka_unit_test(test_mutated_frames_never_crash),
	    cmocka_unit_test(test_monitor_histories_freed),
	    cmocka_unit_test(test_each_marked_gap_draws_a_sack),
	    cmocka_unit_test(test_timer_duration_saturates),
	    cmocka_unit_test(test_tx_start_kept_exactly),
	    cmocka_unit_test(test_write_ends_without_events),
	    cmocka_unit_test(test_down_port_drop_named),
	    cmocka_unit_test(test_no_memory_drops_named),
	    cmocka_unit_test(test_invariants_checked),
	    cmocka_unit_test(test_forged_sources_bounded),
	    cmocka_unit_test(test_forged_sack_does_not_wedge),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
