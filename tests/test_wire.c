/* tests/test_wire.c — the wire codec against docs/vectors.md byte for byte, the
 * sizes of the seed (Packets on the wire), round trips of every frame kind,
 * and the bad-input rules of docs/protocol.md §2. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "core/wire.h"
#include "lib/vectors.h"
#include "pcap/capture.h"

#define NVEC 8

/* docs/vectors.md, sections 1-8, as printed there. */
static const char *const vector_hex[NVEC] = {
    /* 1 */
    "02 00 00 00 00 02 02 00 00 00 00 01 08 00 45 0a "
    "00 4c 00 00 40 00 40 11 26 95 0a 00 00 01 0a 00 "
    "00 02 01 00 12 b7 00 38 00 00 c6 00 ff ff 00 00 "
    "01 00 40 00 00 00 00 00 00 01 00 00 10 00 00 00 "
    "00 00 00 00 00 00 00 00 00 18 09 0a 0b 0c 0d 0e "
    "0f 10 11 12 13 14 15 16 17 18",
    /* 2 */
    "02 00 00 00 00 02 02 00 00 00 00 01 08 00 45 0a "
    "00 44 00 00 40 00 40 11 26 9d 0a 00 00 01 0a 00 "
    "00 02 01 01 12 b7 00 30 00 00 c8 00 ff ff 00 00 "
    "02 00 80 00 00 01 00 00 00 01 00 00 10 00 00 00 "
    "00 10 00 00 00 00 00 00 00 18 19 1a 1b 1c 1d 1e "
    "1f 20",
    /* 3 */
    "02 00 00 00 00 02 02 00 00 00 00 01 08 00 45 0e "
    "00 48 00 00 40 00 40 11 26 95 0a 00 00 01 0a 00 "
    "00 02 01 2c 12 b7 00 34 00 00 ca 00 ff ff 00 00 "
    "02 00 b0 00 00 07 00 00 00 02 12 34 00 01 00 00 "
    "20 00 00 00 00 00 00 00 00 00 00 00 00 08 16 17 "
    "18 19 1a 1b 1c 1d",
    /* 4 */
    "02 00 00 00 00 01 02 00 00 00 00 02 08 00 45 44 "
    "00 2c 00 00 40 00 40 11 26 7b 0a 00 00 02 0a 00 "
    "00 01 01 04 12 b7 00 18 00 00 d1 00 ff ff 00 00 "
    "01 00 00 00 00 01 1f 00 00 01",
    /* 5 */
    "02 00 00 00 00 01 02 00 00 00 00 02 08 00 45 44 "
    "00 4c 00 00 40 00 40 11 26 5b 0a 00 00 02 0a 00 "
    "00 01 01 05 12 b7 00 38 00 00 dc 00 ff ff 00 00 "
    "01 00 00 00 00 05 00 20 00 03 00 00 01 05 00 00 "
    "02 00 00 00 00 05 10 08 00 01 00 00 00 00 00 00 "
    "00 06 00 00 00 00 00 00 00 21",
    /* 6 */
    "02 00 00 00 00 01 02 00 00 00 00 02 08 00 45 44 "
    "00 3c 00 00 40 00 40 11 26 6b 0a 00 00 02 0a 00 "
    "00 01 01 06 12 b7 00 28 00 00 dd 00 ff ff 00 00 "
    "01 00 00 00 00 06 00 00 02 00 00 00 01 06 00 00 "
    "02 00 00 00 00 06 10 00 00 00",
    /* 7 */
    "02 00 00 00 00 02 02 00 00 00 00 01 08 00 45 0a "
    "00 38 00 00 40 00 40 11 26 a9 0a 00 00 01 0a 00 "
    "00 02 01 22 12 b7 00 24 00 00 de 00 ff ff 00 00 "
    "00 02 00 00 00 00 00 00 00 00 00 07 00 00 0a 00 "
    "00 01 00 42 00 00",
    /* 8 */
    "02 00 00 00 00 02 02 00 00 00 00 01 08 00 45 2a "
    "00 2c 00 00 40 00 3f 11 27 95 0a 00 00 01 0a 00 "
    "00 02 01 02 12 b7 00 18 00 00 c7 00 ff ff 00 00 "
    "02 00 00 00 00 03 00 00 00 01",
};

/* Sizes docs/vectors.md gives: captured, on the wire, nominal. */
static const uint32_t vector_sizes[NVEC][3] = {
    {90, 94, 76}, {82, 86, 68}, {86, 90, 72}, {58, 62, 44},
    {90, 94, 76}, {74, 78, 60}, {70, 74, 56}, {58, 62, 44},
};

/* Vector 1 built with IcrcEnabled, by Scapy 2.5's contrib/roce.py (BTH
 * compute_icrc), an independent implementation of the RoCEv2 ICRC. */
static const char icrc_ref_hex[] =
    "0200000000020200000000010800450a005000004000401126910a0000010a000002010012b7003c0000c600"
    "ffff00000100400000000000000100001000000000000000000000000018090a0b0c0d0e0f10111213141516"
    "1718a180bcfa";

static size_t unhex(const char *s, uint8_t *out, size_t cap)
{
	size_t n = 0;
	unsigned v;
	int k;

	while (*s) {
		if (*s == ' ') {
			s++;
			continue;
		}
		if (sscanf(s, "%2x%n", &v, &k) != 1 || k != 2 || n == cap)
			fail_msg("bad hex at %s", s);
		out[n++] = (uint8_t)v;
		s += 2;
	}
	return n;
}

static void data_pkt(struct pkt *p, uint8_t op, uint16_t sport, uint8_t flags, uint32_t dqpn,
		     uint32_t psn)
{
	vec_base(p, true, op, sport, dqpn, psn);
	p->flags = flags;
}

static void control_pkt(struct pkt *p, uint8_t op, uint16_t sport, uint32_t dqpn, uint32_t psn)
{
	vec_base(p, false, op, sport, dqpn, psn);
}

/* The fields docs/vectors.md describes for vector i (0-based). */
static void vector_pkt(int i, struct pkt *p)
{
	vectors_pkt(i + 1, p);
}

/* Field by field: padding inside the structs is not the codec's. */
static void assert_sack_fields(const struct wire_seth *want, const struct wire_seth *got)
{
	assert_int_equal(want->m, got->m);
	assert_int_equal(want->pr, got->pr);
	assert_int_equal(want->ack_psn_offset, got->ack_psn_offset);
	assert_int_equal(want->entropy_echo, got->entropy_echo);
	assert_int_equal(want->responder_qpn, got->responder_qpn);
	assert_int_equal(want->cack_psn, got->cack_psn);
	assert_int_equal(want->cc_type, got->cc_type);
	assert_int_equal(want->cc_flags, got->cc_flags);
	assert_int_equal(want->mpr, got->mpr);
	assert_int_equal(want->sack_offset, got->sack_offset);
	assert_int_equal(want->bitmap, got->bitmap);
}

/* Everything a frame carries must agree; payload bytes are compared with
 * the pattern when want has none. */
static void assert_pkt_fields(const struct pkt *want, const struct pkt *got)
{
	assert_memory_equal(want->dst_mac, got->dst_mac, 6);
	assert_memory_equal(want->src_mac, got->src_mac, 6);
	assert_int_equal(want->src_ip, got->src_ip);
	assert_int_equal(want->dst_ip, got->dst_ip);
	assert_int_equal(want->dscp, got->dscp);
	assert_int_equal(want->ecn, got->ecn);
	assert_int_equal(want->ttl, got->ttl);
	assert_int_equal(want->ip_id, got->ip_id);
	assert_int_equal(want->sport, got->sport);
	assert_int_equal(WIRE_ROCE_PORT, got->dport);
	assert_int_equal(want->opcode, got->opcode);
	assert_int_equal(want->flags, got->flags);
	assert_int_equal(want->fecn, got->fecn);
	assert_int_equal(want->becn, got->becn);
	assert_int_equal(want->dqpn, got->dqpn);
	assert_int_equal(want->psn, got->psn);
	assert_int_equal(want->icrc, got->icrc);
	switch (wire_kind_of(want->opcode)) {
	case WIRE_KIND_DATA:
		assert_int_equal(want->rqmsn, got->rqmsn);
		assert_int_equal(want->msn, got->msn);
		assert_int_equal(want->tseth_time, got->tseth_time);
		assert_int_equal(want->trimmed, got->trimmed);
		assert_int_equal(want->va, got->va);
		assert_int_equal(want->rkey, got->rkey);
		assert_int_equal(want->dma_len, got->dma_len);
		assert_int_equal(want->payload_len, got->payload_len);
		if (want->trimmed)
			break;
		assert_int_equal(want->msg_offset, got->msg_offset);
		if (want->payload)
			assert_memory_equal(want->payload, got->payload, want->payload_len);
		else
			assert_int_equal(0, wire_pattern_check(got->payload, got->payload_len,
							       want->src_ip, want->msn,
							       want->msg_offset));
		break;
	case WIRE_KIND_ACK:
		assert_int_equal(want->u.aeth.syndrome, got->u.aeth.syndrome);
		assert_int_equal(want->u.aeth.msn, got->u.aeth.msn);
		break;
	case WIRE_KIND_SACK:
		assert_sack_fields(&want->u.sack.seth, &got->u.sack.seth);
		assert_int_equal(want->u.sack.cc.ts_echo, got->u.sack.cc.ts_echo);
		assert_int_equal(want->u.sack.cc.service_time, got->u.sack.cc.service_time);
		assert_int_equal(want->u.sack.cc.restore_pen, got->u.sack.cc.restore_pen);
		assert_int_equal(want->u.sack.cc.rcv_bytes, got->u.sack.cc.rcv_bytes);
		break;
	case WIRE_KIND_NACK:
		assert_int_equal(want->u.neth.code, got->u.neth.code);
		assert_int_equal(want->u.neth.entropy_echo, got->u.neth.entropy_echo);
		assert_int_equal(want->u.neth.responder_qpn, got->u.neth.responder_qpn);
		assert_int_equal(want->u.neth.nack_psn, got->u.neth.nack_psn);
		assert_int_equal(want->u.neth.cc, got->u.neth.cc);
		assert_int_equal(want->u.neth.ts_echo, got->u.neth.ts_echo);
		break;
	case WIRE_KIND_PROBE:
		assert_int_equal(want->u.peth.probe_id, got->u.peth.probe_id);
		assert_int_equal(want->u.peth.prober, got->u.peth.prober);
		assert_int_equal(want->u.peth.ts, got->u.peth.ts);
		break;
	}
}

static void test_vectors_build(void **state)
{
	(void)state;
	for (int i = 0; i < NVEC; i++) {
		uint8_t want[128], got[256];
		size_t n = unhex(vector_hex[i], want, sizeof want);
		struct pkt p;

		vector_pkt(i, &p);
		assert_int_equal(n, vector_sizes[i][0]);
		assert_int_equal(wire_build(&p, got, sizeof got), n);
		assert_memory_equal(want, got, n);
		assert_int_equal(wire_frame_len(&p), vector_sizes[i][0]);
		assert_int_equal(wire_len(&p), vector_sizes[i][1]);
		assert_int_equal(wire_nominal_len(&p), vector_sizes[i][2]);
		assert_int_equal(wire_build(&p, got, n - 1), 0);
	}
}

struct pcap_frames {
	int n;
	ps_t t[16];
	uint8_t buf[16][256];
	size_t len[16];
};

static void keep_frame(void *arg, ps_t t, const uint8_t *frame, size_t len)
{
	struct pcap_frames *f = arg;

	if (f->n < 16 && len <= sizeof f->buf[0]) {
		f->t[f->n] = t;
		memcpy(f->buf[f->n], frame, len);
		f->len[f->n] = len;
	}
	f->n++;
}

static void test_vectors_pcap_parse(void **state)
{
	struct pcap_frames f = {0};
	char err[256];

	(void)state;
	assert_int_equal(capture_read("tests/data/vectors.pcap", keep_frame, &f, err, sizeof err),
			 NVEC);
	assert_int_equal(f.n, NVEC);
	for (int i = 0; i < NVEC; i++) {
		uint8_t want[128];
		struct pkt exp, got;

		assert_int_equal(f.len[i], unhex(vector_hex[i], want, sizeof want));
		assert_memory_equal(f.buf[i], want, f.len[i]);
		assert_int_equal(f.t[i], i * PS_PER_US);
		vector_pkt(i, &exp);
		assert_int_equal(wire_parse(f.buf[i], f.len[i], false, &got), WIRE_OK);
		assert_pkt_fields(&exp, &got);
	}
}

/* Seed, Packets on the wire; docs/protocol.md §1. */
static void test_sizes(void **state)
{
	struct pkt p;

	(void)state;
	data_pkt(&p, WIRE_OP_WRITE_MIDDLE, 256, 0, 0x200, 10);
	p.payload_len = 4096, p.dma_len = 1 << 20;
	assert_int_equal(wire_len(&p), 4174);
	assert_int_equal(wire_nominal_len(&p), 4156);
	assert_int_equal(wire_frame_len(&p), 4170);
	p.flags = WIRE_BTH_TS;
	assert_int_equal(wire_len(&p), 4178);
	assert_int_equal(wire_nominal_len(&p), 4160);
	p.flags = 0, p.icrc = true;
	assert_int_equal(wire_len(&p), 4178);
	assert_int_equal(wire_nominal_len(&p), 4160);
	p.icrc = false, p.payload_len = 0, p.opcode = WIRE_OP_WRITE_ONLY, p.dma_len = 0;
	assert_int_equal(wire_len(&p), 78);
	assert_int_equal(wire_nominal_len(&p), WIRE_DATA_OVERHEAD);
	p.trimmed = true;
	assert_int_equal(wire_len(&p), 62);
	p.flags = WIRE_BTH_TS;
	assert_int_equal(wire_len(&p), 66);
	assert_int_equal(wire_nominal_len(&p), 48);
	control_pkt(&p, WIRE_OP_ACK, 260, 1, 1);
	assert_int_equal(wire_len(&p), 62);
	p.opcode = WIRE_OP_SACK;
	assert_int_equal(wire_len(&p), 94);
	p.opcode = WIRE_OP_NACK;
	assert_int_equal(wire_len(&p), 78);
	p.opcode = WIRE_OP_PROBE;
	assert_int_equal(wire_len(&p), 74);
	p.icrc = true;
	assert_int_equal(wire_len(&p), 78);
}

/* build -> parse -> build gives the same bytes and the same fields. */
static void round_trip(const struct pkt *p)
{
	static uint8_t a[WIRE_MAX_FRAME], b[WIRE_MAX_FRAME];
	size_t n = wire_build(p, a, sizeof a);
	struct pkt q;

	assert_int_equal(n, wire_frame_len(p));
	assert_int_equal(wire_parse(a, n, p->icrc, &q), WIRE_OK);
	assert_pkt_fields(p, &q);
	assert_int_equal(wire_nominal_len(&q), wire_nominal_len(p));
	assert_int_equal(wire_build(&q, b, sizeof b), n);
	assert_memory_equal(a, b, n);
	assert_int_equal((a[16] << 8 | a[17]), wire_nominal_len(p));
	assert_int_equal((a[24] << 8 | a[25]), wire_ipv4_csum(a + WIRE_ETH_LEN));
}

static void round_trip_data(uint8_t op, uint8_t flags, bool icrc)
{
	static const uint32_t lens[] = {4096, 1, 17};
	struct pkt p;

	for (size_t i = 0; i < sizeof lens / sizeof lens[0]; i++) {
		data_pkt(&p, op, 300 + (uint16_t)i, flags, 0xABCDEF, 0xFFFFFE);
		p.rqmsn = 0x1234, p.msn = 0xBEEF, p.icrc = icrc;
		p.tseth_time = flags & WIRE_BTH_TS ? 0xFEDC : 0;
		p.payload_len = lens[i];
		p.msg_offset = op == WIRE_OP_WRITE_ONLY || op == WIRE_OP_WRITE_FIRST ? 0 : 8192;
		p.va = wire_va(3, p.msg_offset);
		p.dma_len = op == WIRE_OP_WRITE_ONLY ? lens[i] : 100000;
		p.fecn = i == 1, p.becn = i == 2, p.ip_id = 77, p.ecn = WIRE_ECN_CE;
		round_trip(&p);
		wire_trim(&p);
		round_trip(&p);
	}
}

static void test_round_trip_data(void **state)
{
	static const uint8_t ops[] = {WIRE_OP_WRITE_FIRST, WIRE_OP_WRITE_MIDDLE, WIRE_OP_WRITE_LAST,
				      WIRE_OP_WRITE_ONLY};
	(void)state;
	for (size_t i = 0; i < sizeof ops; i++)
		for (int ts = 0; ts < 2; ts++)
			for (int c = 0; c < 2; c++)
				for (int icrc = 0; icrc < 2; icrc++)
					round_trip_data(ops[i],
							(ts ? WIRE_BTH_TS : 0) |
							    (c ? WIRE_BTH_C : 0) | WIRE_BTH_A |
							    WIRE_BTH_RTX,
							icrc);
}

static void test_round_trip_control(void **state)
{
	static const uint8_t codes[] = {WIRE_NACK_TRIMMED, WIRE_NACK_TRIMMED_LASTHOP,
					WIRE_NACK_PSN_OOR_WINDOW};
	struct pkt p;

	(void)state;
	for (int icrc = 0; icrc < 2; icrc++) {
		control_pkt(&p, WIRE_OP_ACK, 400, 0x123456, 0xFFFFFF);
		p.u.aeth = (struct wire_aeth){.syndrome = WIRE_AETH_ACK, .msn = 0xFEDCBA};
		p.icrc = icrc;
		round_trip(&p);

		control_pkt(&p, WIRE_OP_SACK, 401, 0x123456, 0x800000);
		p.u.sack.seth = (struct wire_seth){.m = WIRE_M_ALWAYS_SKIP,
						   .ack_psn_offset = -300,
						   .entropy_echo = 0xFFFF,
						   .responder_qpn = 0xFFFFFF,
						   .cack_psn = 0x800000,
						   .cc_type = 1,
						   .cc_flags = 0xF,
						   .mpr = 255,
						   .sack_offset = -64,
						   .bitmap = 0x8000000000000001ULL};
		p.u.sack.cc = (struct wire_ccstate){.ts_echo = 0xABCD,
						    .service_time = 0x1234,
						    .restore_pen = 0x81,
						    .rcv_bytes = 0xFFFFFF};
		p.icrc = icrc;
		round_trip(&p);

		for (size_t i = 0; i < sizeof codes; i++) {
			control_pkt(&p, WIRE_OP_NACK, 402, 0x100, 77);
			p.u.neth = (struct wire_neth){.code = codes[i],
						      .entropy_echo = 0x1FF,
						      .responder_qpn = 0x200,
						      .nack_psn = 77,
						      .cc = 0x10,
						      .ts_echo = 0x7777};
			p.icrc = icrc;
			round_trip(&p);
		}

		/* probe, and its answer: a SACK to QP 2 with PR = 1, ack_psn_offset =
		 * the probe id, the entropy echoed, all PSN fields 0 (docs/protocol.md §1) */
		data_pkt(&p, WIRE_OP_PROBE, 333, 0, WIRE_ENDPOINT_QPN, 0);
		p.u.peth = (struct wire_peth){.probe_id = 0xFFFF, .prober = VEC_IP_A, .ts = 0xFFFE};
		p.icrc = icrc;
		round_trip(&p);
		control_pkt(&p, WIRE_OP_SACK, 270, WIRE_ENDPOINT_QPN, 0);
		p.u.sack.seth = (struct wire_seth){
		    .pr = true, .ack_psn_offset = 0x7FFF, .entropy_echo = 333, .cc_type = 1};
		p.icrc = icrc;
		round_trip(&p);
	}
}

static void test_trim(void **state)
{
	uint8_t buf[WIRE_MAX_FRAME];
	struct pkt p, q;

	(void)state;
	for (int ts = 0; ts < 2; ts++) {
		data_pkt(&p, WIRE_OP_WRITE_MIDDLE, 258, ts ? WIRE_BTH_TS : 0, 0x200, 3);
		p.msn = 1, p.payload_len = 4096, p.dma_len = 1 << 20, p.va = wire_va(1, 4096);
		p.msg_offset = 4096, p.tseth_time = 99;
		assert_int_equal(wire_build(&p, buf, sizeof buf), ts ? 4174 : 4170);
		wire_trim(&p);
		p.dscp = 10;
		assert_int_equal(wire_len(&p), ts ? 66 : 62);
		assert_int_equal(wire_build(&p, buf, sizeof buf), ts ? 62 : 58);
		assert_int_equal(buf[16] << 8 | buf[17], ts ? 48 : 44); /* IPv4 total length */
		assert_int_equal(buf[38] << 8 | buf[39], ts ? 28 : 24); /* UDP length */
		assert_int_equal(buf[24] << 8 | buf[25], wire_ipv4_csum(buf + WIRE_ETH_LEN));
		assert_int_equal(buf[15], 10 << 2 | WIRE_ECN_ECT0);
		assert_int_equal(wire_parse(buf, ts ? 62 : 58, false, &q), WIRE_OK);
		assert_true(q.trimmed);
		assert_int_equal(q.payload_len, 0);
		assert_int_equal(q.psn, 3);
		assert_int_equal(q.msn, 1);
		assert_int_equal(q.tseth_time, ts ? 99 : 0);
	}
	/* vector 8 is a trimmed WRITE_MIDDLE: trimming vector-8-like fields
	 * built in full gives exactly its bytes */
	{
		uint8_t want[128];
		size_t n = unhex(vector_hex[7], want, sizeof want);

		vector_pkt(7, &p);
		p.trimmed = false, p.payload_len = 16, p.dma_len = 64, p.va = wire_va(1, 16);
		wire_trim(&p);
		assert_int_equal(wire_build(&p, buf, sizeof buf), n);
		assert_memory_equal(buf, want, n);
	}
	/* not a data packet: nothing to cut */
	vector_pkt(3, &p);
	wire_trim(&p);
	assert_false(p.trimmed);
	assert_int_equal(wire_len(&p), 62);
}

/* Sets the IPv4 total length and UDP length to a datagram of dlen bytes and
 * fixes the checksum, so that only the transport length is wrong. */
static void set_lengths(uint8_t *f, uint32_t dlen)
{
	uint16_t c;

	f[16] = (uint8_t)(dlen >> 8), f[17] = (uint8_t)dlen;
	f[38] = (uint8_t)((dlen - 20) >> 8), f[39] = (uint8_t)(dlen - 20);
	c = wire_ipv4_csum(f + WIRE_ETH_LEN);
	f[24] = (uint8_t)(c >> 8), f[25] = (uint8_t)c;
}

static void fix_csum(uint8_t *f)
{
	uint16_t c = wire_ipv4_csum(f + WIRE_ETH_LEN);

	f[24] = (uint8_t)(c >> 8), f[25] = (uint8_t)c;
}

/* Parses a damaged copy of vector v; p must stay untouched on rejection. */
static enum wire_error parse_damaged(int v, void (*damage)(uint8_t *f, size_t *len))
{
	uint8_t f[256], mark[sizeof(struct pkt)];
	size_t len = unhex(vector_hex[v], f, sizeof f);
	struct pkt p;
	enum wire_error e;

	damage(f, &len);
	memset(&p, 0xA5, sizeof p);
	memcpy(mark, &p, sizeof p);
	e = wire_parse(f, len, false, &p);
	if (e != WIRE_OK)
		assert_memory_equal(&p, mark, sizeof p);
	return e;
}

static void d_csum(uint8_t *f, size_t *len)
{
	(void)len;
	f[25] ^= 1;
}
static void d_version(uint8_t *f, size_t *len)
{
	(void)len;
	f[14] = 0x65;
}
static void d_ihl6(uint8_t *f, size_t *len)
{
	(void)len;
	f[14] = 0x46;
}
static void d_totlen_big(uint8_t *f, size_t *len)
{
	set_lengths(f, (uint32_t)*len - WIRE_ETH_LEN + 1);
}
static void d_totlen_small(uint8_t *f, size_t *len)
{
	(void)len;
	f[16] = 0, f[17] = 27;
	fix_csum(f);
}
static void d_udplen(uint8_t *f, size_t *len)
{
	(void)len;
	f[39] += 1;
}
static void d_dport(uint8_t *f, size_t *len)
{
	(void)len;
	f[37] = 0xb6; /* 4790 */
}
static void d_ethertype(uint8_t *f, size_t *len)
{
	(void)len;
	f[12] = 0x86, f[13] = 0xdd;
}
static void d_tcp(uint8_t *f, size_t *len)
{
	(void)len;
	f[23] = 6;
	fix_csum(f);
}
static void d_more_frags(uint8_t *f, size_t *len)
{
	(void)len;
	f[20] = 0x20;
	fix_csum(f);
}
static void d_frag_offset(uint8_t *f, size_t *len)
{
	(void)len;
	f[21] = 0x08;
	fix_csum(f);
}
static void d_op0(uint8_t *f, size_t *len)
{
	(void)len;
	f[42] = 0x00;
}
static void d_op_c9(uint8_t *f, size_t *len)
{
	(void)len;
	f[42] = WIRE_OP_WRITE_LAST_IMM;
}
static void d_op_cb(uint8_t *f, size_t *len)
{
	(void)len;
	f[42] = WIRE_OP_WRITE_ONLY_IMM;
}
static void d_op_e0(uint8_t *f, size_t *len)
{
	(void)len;
	f[42] = 0xE0;
}
static void d_pkey(uint8_t *f, size_t *len)
{
	(void)len;
	f[44] = 0x7F;
}
static void d_one_short(uint8_t *f, size_t *len)
{
	*len -= 1;
	set_lengths(f, (uint32_t)*len - WIRE_ETH_LEN);
}
static void d_one_long(uint8_t *f, size_t *len)
{
	f[*len] = 0;
	*len += 1;
	set_lengths(f, (uint32_t)*len - WIRE_ETH_LEN);
}
static void d_meth_cut(uint8_t *f, size_t *len)
{
	*len = WIRE_ETH_LEN + WIRE_IPV4_LEN + WIRE_UDP_LEN + WIRE_BTH_LEN + 2;
	set_lengths(f, (uint32_t)*len - WIRE_ETH_LEN);
}
static void d_reth_cut(uint8_t *f, size_t *len)
{
	*len = WIRE_ETH_LEN + 60 - 6;
	set_lengths(f, (uint32_t)*len - WIRE_ETH_LEN);
}
static void d_bth_cut(uint8_t *f, size_t *len)
{
	*len = WIRE_ETH_LEN + WIRE_IPV4_LEN + WIRE_UDP_LEN + 11;
	set_lengths(f, (uint32_t)*len - WIRE_ETH_LEN);
}
static void d_dma_below_payload(uint8_t *f, size_t *len)
{
	(void)len;
	f[73] = 15; /* vector 1: 16 payload bytes, DMA length 15 */
}
static void d_dma_only_more(uint8_t *f, size_t *len)
{
	(void)len;
	f[77] = 9; /* vector 3: WRITE_ONLY of 8 bytes says DMA length 9 */
}
static void d_padding(uint8_t *f, size_t *len)
{
	memset(f + *len, 0, 60 - *len);
	*len = 60;
}
static void d_trailer(uint8_t *f, size_t *len)
{
	wire_trailer_put(f + *len, 1234567890, 7);
	*len += WIRE_TRAILER_LEN;
}

static void test_malformed(void **state)
{
	(void)state;
	assert_int_equal(parse_damaged(0, d_csum), WIRE_BAD_IP_CSUM);
	assert_int_equal(parse_damaged(0, d_version), WIRE_BAD_IP_VERSION);
	assert_int_equal(parse_damaged(0, d_ihl6), WIRE_BAD_IP_VERSION);
	assert_int_equal(parse_damaged(0, d_totlen_big), WIRE_BAD_IP_LENGTH);
	assert_int_equal(parse_damaged(0, d_totlen_small), WIRE_BAD_IP_LENGTH);
	assert_int_equal(parse_damaged(0, d_udplen), WIRE_UDP_LENGTH);
	assert_int_equal(parse_damaged(3, d_dport), WIRE_NOT_ROCE);
	assert_int_equal(parse_damaged(3, d_ethertype), WIRE_NOT_IPV4);
	assert_int_equal(parse_damaged(3, d_tcp), WIRE_NOT_UDP);
	assert_int_equal(parse_damaged(3, d_more_frags), WIRE_FRAGMENT);
	assert_int_equal(parse_damaged(3, d_frag_offset), WIRE_FRAGMENT);
	assert_int_equal(parse_damaged(0, d_op0), WIRE_UNKNOWN_OPCODE);
	assert_int_equal(parse_damaged(0, d_op_e0), WIRE_UNKNOWN_OPCODE);
	assert_int_equal(parse_damaged(1, d_op_c9), WIRE_UNSUPPORTED_OPCODE);
	assert_int_equal(parse_damaged(2, d_op_cb), WIRE_UNSUPPORTED_OPCODE);
	assert_int_equal(parse_damaged(3, d_pkey), WIRE_BAD_PKEY);
	assert_int_equal(parse_damaged(4, d_one_short), WIRE_BAD_LENGTH); /* SACK */
	assert_int_equal(parse_damaged(4, d_one_long), WIRE_BAD_LENGTH);
	assert_int_equal(parse_damaged(3, d_one_short), WIRE_BAD_LENGTH); /* ACK */
	assert_int_equal(parse_damaged(5, d_one_short), WIRE_BAD_LENGTH); /* NACK */
	assert_int_equal(parse_damaged(6, d_one_long), WIRE_BAD_LENGTH);  /* probe */
	assert_int_equal(parse_damaged(0, d_meth_cut), WIRE_BAD_LENGTH);
	assert_int_equal(parse_damaged(2, d_meth_cut), WIRE_BAD_LENGTH); /* TS: TSETH cut */
	assert_int_equal(parse_damaged(0, d_reth_cut), WIRE_BAD_LENGTH);
	assert_int_equal(parse_damaged(3, d_bth_cut), WIRE_SHORT);
	assert_int_equal(parse_damaged(0, d_dma_below_payload), WIRE_BAD_DMA_LENGTH);
	assert_int_equal(parse_damaged(2, d_dma_only_more), WIRE_BAD_DMA_LENGTH);
	/* bytes after the IP total length are not the datagram's */
	assert_int_equal(parse_damaged(3, d_padding), WIRE_OK);
	assert_int_equal(parse_damaged(7, d_padding), WIRE_OK);
	assert_int_equal(parse_damaged(0, d_trailer), WIRE_OK);
	/* nothing beyond WIRE_MAX_FRAME is built or accepted */
	{
		static uint8_t big[WIRE_MAX_FRAME + 64];
		struct pkt p;

		data_pkt(&p, WIRE_OP_WRITE_MIDDLE, 300, 0, 0x200, 9);
		p.payload_len = WIRE_MAX_FRAME - 74, p.dma_len = 1 << 20;
		assert_int_equal(wire_build(&p, big, sizeof big), WIRE_MAX_FRAME);
		assert_int_equal(wire_parse(big, WIRE_MAX_FRAME, false, &p), WIRE_OK);
		p.payload_len++;
		assert_int_equal(wire_build(&p, big, sizeof big), 0);
		memset(big + WIRE_MAX_FRAME, 0, 64);
		set_lengths(big, WIRE_MAX_FRAME - WIRE_ETH_LEN + 1);
		assert_int_equal(wire_parse(big, sizeof big, false, &p), WIRE_BAD_IP_LENGTH);
	}
}

/* Every truncation of every frame: no crash, and a reason below the end of
 * the datagram (docs/protocol.md §2). */
static void test_truncations(void **state)
{
	uint8_t f[256], icrc_frame[256];
	struct pkt p;

	(void)state;
	for (int v = 0; v <= NVEC; v++) {
		bool icrc = v == NVEC;
		size_t n = icrc ? unhex(icrc_ref_hex, icrc_frame, sizeof icrc_frame)
				: unhex(vector_hex[v], f, sizeof f);
		const uint8_t *src = icrc ? icrc_frame : f;

		for (size_t len = 0; len < n; len++) {
			uint8_t *copy = malloc(len ? len : 1); /* ASan sees any overread */

			memcpy(copy, src, len);
			enum wire_error e = wire_parse(copy, len, icrc, &p);
			assert_int_not_equal(e, WIRE_OK);
			assert_true(e > WIRE_OK && e < WIRE_ERROR_COUNT);
			if (len < WIRE_ETH_LEN + WIRE_IPV4_LEN && len >= WIRE_ETH_LEN)
				assert_int_equal(e, WIRE_SHORT);
			else if (len >= WIRE_ETH_LEN + WIRE_IPV4_LEN)
				assert_int_equal(e, WIRE_BAD_IP_LENGTH);
			free(copy);
		}
		assert_int_equal(wire_parse(src, n, icrc, &p), WIRE_OK);
	}
	assert_int_equal(wire_parse(f, 0, false, &p), WIRE_SHORT);
	assert_int_equal(wire_parse(f, 13, false, &p), WIRE_SHORT);
}

static void test_icrc(void **state)
{
	uint8_t want[256], buf[256];
	size_t n = unhex(icrc_ref_hex, want, sizeof want);
	struct pkt p, q;

	(void)state;
	vector_pkt(0, &p);
	p.icrc = true;
	assert_int_equal(wire_len(&p), 98);
	assert_int_equal(wire_build(&p, buf, sizeof buf), n);
	assert_memory_equal(buf, want, n);
	assert_int_equal(wire_icrc(buf + WIRE_ETH_LEN, n - WIRE_ETH_LEN - 4), 0xFABC80A1u);
	assert_int_equal(wire_parse(buf, n, true, &q), WIRE_OK);
	assert_true(q.icrc);
	assert_int_equal(q.payload_len, 16);

	/* the masked fields may change on the way: TOS (a switch re-marks DSCP
	 * or sets CE), TTL, the IP checksum, FECN/BECN */
	buf[15] = 10 << 2 | WIRE_ECN_CE;
	buf[22] = 17;
	fix_csum(buf);
	buf[46] = 0xC0;
	assert_int_equal(wire_parse(buf, n, true, &q), WIRE_OK);
	assert_true(q.fecn && q.becn);
	assert_int_equal(q.ecn, WIRE_ECN_CE);

	buf[n - 10] ^= 0x01; /* a payload byte */
	assert_int_equal(wire_parse(buf, n, true, &q), WIRE_BAD_ICRC);
	buf[n - 10] ^= 0x01;
	buf[53] ^= 0x01; /* the PSN is covered */
	assert_int_equal(wire_parse(buf, n, true, &q), WIRE_BAD_ICRC);

	/* a trimmed packet keeps no ICRC: the switch cut it with the payload */
	vector_pkt(7, &p);
	p.icrc = true;
	assert_int_equal(wire_len(&p), 62);
	assert_int_equal(wire_build(&p, buf, sizeof buf), 58);
	assert_int_equal(buf[16] << 8 | buf[17], 44);
	assert_int_equal(wire_parse(buf, 58, true, &q), WIRE_OK);
	assert_true(q.trimmed);
	assert_false(q.icrc);
	vector_pkt(0, &p);
	p.icrc = true;
	wire_trim(&p);
	assert_false(p.icrc);
	assert_int_equal(wire_len(&p), 62);

	/* a frame without an ICRC where one is expected */
	n = unhex(vector_hex[3], buf, sizeof buf);
	assert_int_equal(wire_parse(buf, n, true, &q), WIRE_BAD_ICRC);
}

/* A hop as a switch makes it (docs/protocol.md §9): next MACs, TTL - 1,
 * CE, a DSCP re-marked. */
static void hop(struct pkt *p)
{
	static const uint8_t macs[12] = {2, 0, 0, 0, 0, 9, 2, 0, 0, 0, 0, 8};

	memcpy(p, macs, sizeof macs);
	p->ttl--;
	p->ecn = WIRE_ECN_CE;
	p->dscp = 0x3F;
}

/* wire_forward: a frame wire_build made goes out as wire_build would make it
 * after the hop, for every kind of the vectors, with and without ICRC. */
static void test_forward_is_build(void **state)
{
	uint8_t in[256], out[256], want[256];
	struct pkt p;

	(void)state;
	for (int v = 0; v < NVEC; v++)
		for (int icrc = 0; icrc < 2; icrc++) {
			size_t n;
			vector_pkt(v, &p);
			p.icrc = icrc;
			n = wire_build(&p, in, sizeof in);
			assert_int_equal(wire_parse(in, n, icrc, &p), WIRE_OK);
			hop(&p);
			if (p.trimmed) { /* its lengths are not the frame's: built */
				assert_int_equal(wire_forward(&p, in, out, sizeof out), 0);
				continue;
			}
			assert_int_equal(wire_forward(&p, in, out, sizeof out), n);
			assert_int_equal(wire_build(&p, want, sizeof want), n);
			assert_memory_equal(out, want, n);
			assert_int_equal(wire_parse(out, n, icrc, &p), WIRE_OK);
		}
	vector_pkt(0, &p);
	assert_int_equal(wire_forward(&p, in, out, wire_frame_len(&p) - 1), 0);
}

/* Another tool's frame keeps what wire_build would write otherwise: no DF,
 * an IP ID, a UDP checksum, a payload off the pattern, Ethernet padding
 * left behind; the hop's fields and the IPv4 checksum are new. */
static void test_forward_keeps_the_rest(void **state)
{
	uint8_t in[256], out[256];
	size_t n = unhex(vector_hex[1], in, sizeof in);
	struct pkt p;

	(void)state;
	in[20] = 0;		      /* flags: DF clear */
	in[18] = 0x12, in[19] = 0x34; /* IP ID */
	in[40] = 0xAB, in[41] = 0xCD; /* UDP checksum */
	in[n - 1] ^= 0xFF;	      /* a payload byte off the pattern */
	fix_csum(in);
	memset(in + n, 0, 10); /* padding after the datagram */
	assert_int_equal(wire_parse(in, n + 10, false, &p), WIRE_OK);
	hop(&p);
	assert_int_equal(wire_forward(&p, in, out, sizeof out), n);
	assert_memory_equal(out, p.dst_mac, 6);
	assert_memory_equal(out + 6, p.src_mac, 6);
	assert_int_equal(out[15], 0x3F << 2 | WIRE_ECN_CE);
	assert_int_equal(out[22], in[22] - 1);
	assert_int_equal(out[24] << 8 | out[25], wire_ipv4_csum(out + WIRE_ETH_LEN));
	assert_memory_equal(out + 16, in + 16, 6); /* length, ID, flags */
	assert_memory_equal(out + 26, in + 26, n - 26);
}

static void test_pattern(void **state)
{
	uint8_t buf[600];

	(void)state;
	/* docs/vectors.md 1: offset 0 of MSN 1 from 10.0.0.1 is 0x09 */
	assert_int_equal(wire_pattern_byte(VEC_IP_A, 1, 0), 0x09);
	assert_int_equal(wire_pattern_byte(VEC_IP_A, 2, 0), 0x16);
	wire_pattern_fill(buf, sizeof buf, VEC_IP_A, 7, 1000);
	for (uint32_t i = 0; i < sizeof buf; i++)
		assert_int_equal(buf[i], (1000 + i + 13 * 7 + VEC_IP_A) % 251);
	assert_int_equal(wire_pattern_check(buf, sizeof buf, VEC_IP_A, 7, 1000), 0);
	assert_int_equal(wire_pattern_check(buf, sizeof buf, VEC_IP_A, 7, 1001), sizeof buf);
	buf[300] ^= 0x80;
	buf[599] ^= 0x01;
	assert_int_equal(wire_pattern_check(buf, sizeof buf, VEC_IP_A, 7, 1000), 2);
}

/* Fill and check by runs of the pattern: the same bytes as one at a time,
 * across the runs' seams, at every phase and up to a jumbo frame. */
static void test_pattern_runs(void **state)
{
	static uint8_t buf[9100];
	const uint32_t lens[] = {0, 1, 250, 251, 252, 4015, 4016, 4017, 4096, 8032, 9100};

	(void)state;
	for (uint64_t o = 0; o < 260; o += 7)
		for (size_t k = 0; k < sizeof(lens) / sizeof(lens[0]); k++) {
			uint32_t len = lens[k];
			memset(buf, 0xEE, sizeof(buf));
			wire_pattern_fill(buf, len, VEC_IP_A, 3, o);
			for (uint32_t i = 0; i < len; i++)
				assert_int_equal(buf[i], wire_pattern_byte(VEC_IP_A, 3, o + i));
			if (len < sizeof(buf))
				assert_int_equal(buf[len], 0xEE);
			assert_int_equal(wire_pattern_check(buf, len, VEC_IP_A, 3, o), 0);
			if (len > 4017) {
				buf[4015] ^= 1; /* either side of the first seam */
				buf[4016] ^= 1;
				buf[len - 1] ^= 0xFF;
				assert_int_equal(wire_pattern_check(buf, len, VEC_IP_A, 3, o), 3);
			}
		}
}

static void test_psn(void **state)
{
	(void)state;
	assert_int_equal(wire_psn_add(0xFFFFFF, 1), 0);
	assert_int_equal(wire_psn_add(0, -1), 0xFFFFFF);
	assert_int_equal(wire_psn_add(5, 0x1000000), 5);
	assert_int_equal(wire_psn_diff(0, 0xFFFFFF), 1);
	assert_int_equal(wire_psn_diff(0xFFFFFF, 0), -1);
	assert_int_equal(wire_psn_diff(0x800000, 0), 0x800000);
	assert_int_equal(wire_psn_diff(0x800001, 0), -0x7FFFFF);
	assert_int_equal(wire_psn_diff(10, 10), 0);
}

static void test_trailer(void **state)
{
	uint8_t f[128];
	size_t n = unhex(vector_hex[3], f, sizeof f);
	ps_t t = 0;
	uint32_t seq = 0;

	(void)state;
	assert_false(wire_trailer_get(f, n, &t, &seq));
	/* Ethernet padding of a short frame is no stamp */
	memset(f + n, 0, 60 - n);
	assert_false(wire_trailer_get(f, 60, &t, &seq));
	wire_trailer_put(f + n, 1234567890, 0xA1B2C3D4);
	assert_int_equal(f[n], 0x4D);
	assert_int_equal(f[n + 1], 0x52);
	assert_int_equal(f[n + 8], 0xA1); /* the sequence, big-endian */
	assert_int_equal(f[n + 11], 0xD4);
	assert_true(wire_trailer_get(f, n + 12, &t, &seq));
	assert_int_equal(t, 1234567890);
	assert_int_equal(seq, 0xA1B2C3D4);
	assert_false(wire_trailer_get(f, n + 11, &t, &seq));
	assert_true(wire_trailer_put(f + n, WIRE_TRAILER_MAX_PS, 0));
	assert_true(wire_trailer_get(f, n + 12, &t, &seq));
	assert_int_equal(t, WIRE_TRAILER_MAX_PS);
	/* issue 9, item 12: a stamp past 48 bits is refused, never clamped */
	assert_false(wire_trailer_put(f + n, WIRE_TRAILER_MAX_PS + 1, 5));
	assert_true(wire_trailer_get(f, n + 12, &t, &seq));
	assert_int_equal(t, WIRE_TRAILER_MAX_PS); /* untouched */
	assert_int_equal(seq, 0);
	f[n] = 0x4E; /* no magic */
	assert_false(wire_trailer_get(f, n + 12, &t, &seq));
	/* after a big frame's datagram, and ignored by the parser */
	{
		static uint8_t big[WIRE_MAX_FRAME + WIRE_TRAILER_LEN];
		struct pkt p, q;
		size_t m;

		data_pkt(&p, WIRE_OP_WRITE_LAST, 300, 0, 0x200, 9);
		p.payload_len = 4096, p.dma_len = 8192, p.va = wire_va(1, 4096),
		p.msg_offset = 4096;
		m = wire_build(&p, big, sizeof big);
		wire_trailer_put(big + m, 5 * PS_PER_US, 3);
		assert_true(wire_trailer_get(big, m + 12, &t, &seq));
		assert_int_equal(t, 5 * PS_PER_US);
		assert_int_equal(wire_parse(big, m + 12, false, &q), WIRE_OK);
		assert_int_equal(q.payload_len, 4096);
	}
}

/* docs/promises.md: a promise frame is Ethernet's minimum frame, EtherType
 * 0x88B5, "MRP1", the promise (64 bits), the sequence (32 bits), the want
 * and the end bound (64 bits each), all big-endian; nothing else is one. */
static void test_promise_frame(void **state)
{
	static const uint8_t bytes[] = {0x02, 0x00, 0x00, 0x00, 0x00, 0x02, 0x02, 0x00, 0x00, 0x00,
					0x00, 0x01, 0x88, 0xB5, 'M',  'R',  'P',  '1',	0x00, 0x00,
					0x00, 0x01, 0x02, 0x03, 0x04, 0x05, 0x00, 0x00, 0x00, 0x2A,
					0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x12, 0x34, 0x00, 0x00,
					0x00, 0x00, 0x00, 0x00, 0x56, 0x78};
	uint8_t a[6] = {2, 0, 0, 0, 0, 1}, b[6] = {2, 0, 0, 0, 0, 2}, f[WIRE_PROMISE_LEN];
	struct wire_promise w = {.promise = 0x0102030405ULL,
				 .want = 0x1234,
				 .end = 0x5678,
				 .seq = 42},
			    r;

	(void)state;
	assert_int_equal(wire_promise_put(f, b, a, &w), 60);
	assert_memory_equal(f, bytes, sizeof(bytes));
	for (size_t i = sizeof(bytes); i < sizeof(f); i++)
		assert_int_equal(f[i], 0);
	assert_true(wire_promise_get(f, sizeof(f), &r));
	assert_int_equal(r.promise, 0x0102030405ULL);
	assert_int_equal(r.seq, 42);
	assert_int_equal(r.want, 0x1234);
	assert_int_equal(r.end, 0x5678);
	/* The second version's 24 bytes: no end bound. */
	assert_true(wire_promise_get(f, 38, &r));
	assert_int_equal(r.want, 0x1234);
	assert_int_equal(r.end, 0);
	/* The first version's 16 bytes: no want. */
	assert_true(wire_promise_get(f, 30, &r));
	assert_int_equal(r.want, 0);
	assert_false(wire_promise_get(f, 29, &r));
	f[17] = '2';
	assert_false(wire_promise_get(f, sizeof(f), &r));
	f[17] = '1';
	f[13] = 0xB6;
	assert_false(wire_promise_get(f, sizeof(f), &r));
}

static void test_names(void **state)
{
	static const char *const want[] = {
	    "ok",
	    "short",
	    "not_ipv4",
	    "bad_ip_version",
	    "bad_ip_length",
	    "bad_ip_csum",
	    "not_udp",
	    "fragment",
	    "udp_length",
	    "not_roce",
	    "unknown_opcode",
	    "unsupported_opcode",
	    "bad_length",
	    "bad_dma_length",
	    "bad_icrc",
	    "bad_pkey",
	};
	(void)state;
	assert_int_equal(sizeof want / sizeof want[0], WIRE_ERROR_COUNT);
	for (int e = 0; e < WIRE_ERROR_COUNT; e++)
		assert_string_equal(wire_error_name((enum wire_error)e), want[e]);
	assert_string_equal(wire_opcode_name(0xC6), "WRITE_FIRST");
	assert_string_equal(wire_opcode_name(0xC7), "WRITE_MIDDLE");
	assert_string_equal(wire_opcode_name(0xC8), "WRITE_LAST");
	assert_string_equal(wire_opcode_name(0xC9), "WRITE_LAST_IMM");
	assert_string_equal(wire_opcode_name(0xCA), "WRITE_ONLY");
	assert_string_equal(wire_opcode_name(0xCB), "WRITE_ONLY_IMM");
	assert_string_equal(wire_opcode_name(0xD1), "ACK");
	assert_string_equal(wire_opcode_name(0xDC), "SACK");
	assert_string_equal(wire_opcode_name(0xDD), "NACK");
	assert_string_equal(wire_opcode_name(0xDE), "PROBE");
	assert_string_equal(wire_opcode_name(0x00), "UNKNOWN");
	assert_int_equal(wire_kind_of(0xC6), WIRE_KIND_DATA);
	assert_int_equal(wire_kind_of(0xD1), WIRE_KIND_ACK);
	assert_int_equal(wire_kind_of(0xDC), WIRE_KIND_SACK);
	assert_int_equal(wire_kind_of(0xDD), WIRE_KIND_NACK);
	assert_int_equal(wire_kind_of(0xDE), WIRE_KIND_PROBE);
}

/* Packets come from slabs, with counters for refusals. */
static void test_pool(void **state)
{
	struct pkt_pool pool;
	struct pkt *got[7];

	(void)state;
	assert_true(pkt_pool_init(&pool, 4, 6));
	for (int i = 0; i < 6; i++) {
		got[i] = pkt_get(&pool);
		assert_non_null(got[i]);
		for (int j = 0; j < i; j++)
			assert_ptr_not_equal(got[i], got[j]);
		got[i]->psn = 0xABC, got[i]->payload_len = 9;
	}
	assert_int_equal(pool.nslabs, 2);
	assert_int_equal(pool.in_use, 6);
	assert_null(pkt_get(&pool));
	assert_int_equal(pool.refused, 1);
	pkt_put(&pool, got[2]);
	assert_int_equal(pool.in_use, 5);
	got[6] = pkt_get(&pool);
	assert_ptr_equal(got[6], got[2]);
	assert_int_equal(got[6]->psn, 0);
	assert_int_equal(got[6]->payload_len, 0);
	assert_int_equal(pool.nslabs, 2);
	pkt_pool_destroy(&pool);

	assert_true(pkt_pool_init(&pool, 64, 0));
	for (int i = 0; i < 1000; i++)
		assert_non_null(pkt_get(&pool));
	assert_int_equal(pool.nslabs, 16);
	assert_int_equal(pool.refused, 0);
	pkt_pool_destroy(&pool);
	assert_false(pkt_pool_init(&pool, 0, 0));
}

/* A slab larger than the 64 packets threaded at a time (wire.c,
 * POOL_CARVE) hands out every packet once before the next slab is made,
 * and the pool's limit still holds across the partial threadings. */
static void test_pool_carve(void **state)
{
	enum { SLAB = 200, LIMIT = 330 };
	static struct pkt *got[LIMIT];
	struct pkt_pool pool;

	(void)state;
	assert_true(pkt_pool_init(&pool, SLAB, LIMIT));
	for (int i = 0; i < LIMIT; i++) {
		assert_non_null(got[i] = pkt_get(&pool));
		assert_int_equal(pool.nslabs, i < SLAB ? 1 : 2);
	}
	assert_null(pkt_get(&pool));
	assert_int_equal(pool.refused, 1);
	for (int i = 0; i < LIMIT; i++)
		for (int j = 0; j < i; j++)
			assert_ptr_not_equal(got[i], got[j]);
	pkt_pool_destroy(&pool);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_vectors_build),
	    cmocka_unit_test(test_vectors_pcap_parse),
	    cmocka_unit_test(test_sizes),
	    cmocka_unit_test(test_round_trip_data),
	    cmocka_unit_test(test_round_trip_control),
	    cmocka_unit_test(test_trim),
	    cmocka_unit_test(test_malformed),
	    cmocka_unit_test(test_truncations),
	    cmocka_unit_test(test_icrc),
	    cmocka_unit_test(test_forward_is_build),
	    cmocka_unit_test(test_forward_keeps_the_rest),
	    cmocka_unit_test(test_pattern),
	    cmocka_unit_test(test_pattern_runs),
	    cmocka_unit_test(test_psn),
	    cmocka_unit_test(test_trailer),
	    cmocka_unit_test(test_promise_frame),
	    cmocka_unit_test(test_names),
	    cmocka_unit_test(test_pool),
	    cmocka_unit_test(test_pool_carve),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
