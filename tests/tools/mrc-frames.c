/* tests/tools/mrc-frames.c — one frame of every kind, built by the real
 * codec and written by the real capture code, for the dissector test:
 *
 *   mrc-frames OUT.pcap
 *
 * Frames 1-8 are docs/vectors.md's, 9-19 the other kinds; they are 1 us apart.
 * For each frame it prints one line, "<n>\t<kind>\t<field>=<value>...", with
 * the field names of the dissector (mrc.lua) and the values the codec reads
 * back from the built bytes. */
#include <arpa/inet.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "../lib/vectors.h"
#include "core/wire.h"
#include "pcap/capture.h"

#define NFRAMES	      19
#define TRAILER_STAMP 1234567890ULL
#define TRAILER_SEQ   7

/* Frames 9-13 (tests/tools in /tmp/fields.md's list). */
static void more_frame(int n, struct pkt *p)
{
	switch (n) {
	case 9:
		vec_data(p, WIRE_OP_WRITE_MIDDLE, 259, 0, 0x200, 3, 1, 1, 8192, 4096, 16384);
		break;
	case 10:
		vec_data(p, WIRE_OP_WRITE_FIRST, 263, WIRE_BTH_C | WIRE_BTH_TS, 0x100, 4, 2, 2, 0,
			 4096, 12288);
		p->tseth_time = 0x0ABC;
		break;
	case 11:
		vec_data(p, WIRE_OP_WRITE_ONLY, 264, WIRE_BTH_A, 0x200, 5, 3, 3, 0, 0, 0);
		break;
	case 12:
		vec_base(p, false, WIRE_OP_ACK, 265, 0x100, 5);
		p->u.aeth = (struct wire_aeth){.syndrome = WIRE_AETH_ACK, .msn = 3};
		break;
	case 13:
		vec_base(p, false, WIRE_OP_SACK, 266, 0x100, 1000);
		p->u.sack.seth = (struct wire_seth){.m = WIRE_M_ALWAYS_SKIP,
						    .ack_psn_offset = 25,
						    .entropy_echo = 0x110,
						    .responder_qpn = 0x200,
						    .cack_psn = 1000,
						    .cc_type = 1,
						    .mpr = 8,
						    .sack_offset = -20,
						    .bitmap = 0xFFFF00FF0F0F0F0EULL};
		p->u.sack.cc = (struct wire_ccstate){
		    .ts_echo = 0x0123, .service_time = 33, .rcv_bytes = 0x123456};
		break;
	}
}

/* Frames 14-19. */
static void last_frame(int n, struct pkt *p)
{
	switch (n) {
	case 14:
		vec_base(p, false, WIRE_OP_NACK, 0x107, 0x100, 12);
		p->u.neth = (struct wire_neth){.code = WIRE_NACK_TRIMMED,
					       .entropy_echo = 0x107,
					       .responder_qpn = 0x200,
					       .nack_psn = 12,
					       .cc = 0x10,
					       .ts_echo = 0x0ABC};
		break;
	case 15:
		vec_base(p, false, WIRE_OP_NACK, 300, 0x100, 9000);
		p->u.neth = (struct wire_neth){.code = WIRE_NACK_PSN_OOR_WINDOW,
					       .entropy_echo = 300,
					       .responder_qpn = 0x200,
					       .nack_psn = 9000,
					       .cc = 0x10};
		break;
	case 16: /* the answer to vector 7's probe (docs/protocol.md §1, Probe) */
		vec_base(p, false, WIRE_OP_SACK, 267, WIRE_ENDPOINT_QPN, 0);
		p->u.sack.seth = (struct wire_seth){
		    .pr = true, .ack_psn_offset = 7, .entropy_echo = 290, .cc_type = 1};
		break;
	case 17:
		vec_data(p, WIRE_OP_WRITE_FIRST, 270, WIRE_BTH_TS, 0x200, 20, 4, 4, 0, 4096, 8192);
		p->tseth_time = 0x2222;
		wire_trim(p);
		p->dscp = 9, p->ttl = 63;
		break;
	case 18:
		vec_data(p, WIRE_OP_WRITE_ONLY, 271, 0, 0x200, 21, 5, 5, 0, 100, 100);
		p->icrc = true;
		break;
	case 19:
		vec_data(p, WIRE_OP_WRITE_LAST, 272, WIRE_BTH_A, 0x200, 22, 6, 6, 4096, 904, 5000);
		break;
	}
}

static void frame_pkt(int n, struct pkt *p)
{
	if (n <= 8)
		vectors_pkt(n, p);
	else if (n <= 13)
		more_frame(n, p);
	else
		last_frame(n, p);
}

/* docs/protocol.md §3 default codepoints. */
static const char *role_name(uint8_t dscp)
{
	switch (dscp) {
	case 2:
		return "trimmable";
	case 3:
		return "trimmable_retx";
	case 1:
		return "no_trim";
	case 17:
		return "control";
	case 9:
		return "trimmed";
	case 10:
		return "trimmed_last_hop";
	default:
		return "other";
	}
}

static void print_bth(const uint8_t *f, const struct pkt *q)
{
	const uint8_t *bth = f + WIRE_ETH_LEN + WIRE_IPV4_LEN + WIRE_UDP_LEN;

	printf("\tip.dsfield.dscp=%u\tudp.srcport=%u\tip.ttl=%u", q->dscp, q->sport, q->ttl);
	printf("\tmrc.opcode=%u\tmrc.se=%u\tmrc.mig=%u\tmrc.padcnt=%u\tmrc.tver=%u", q->opcode,
	       bth[1] >> 7, (bth[1] >> 6) & 1, (bth[1] >> 4) & 3, bth[1] & 0xF);
	printf("\tmrc.pkey=%u\tmrc.fecn=%d\tmrc.becn=%d\tmrc.dqpn=%u", bth[2] << 8 | bth[3],
	       q->fecn, q->becn, q->dqpn);
	printf("\tmrc.ackreq=%d\tmrc.conn=%d\tmrc.retx=%d\tmrc.ts=%d\tmrc.psn=%u",
	       !!(q->flags & WIRE_BTH_A), !!(q->flags & WIRE_BTH_C), !!(q->flags & WIRE_BTH_RTX),
	       !!(q->flags & WIRE_BTH_TS), q->psn);
	printf("\tmrc.entropy=%u\tmrc.role=%s", q->sport, role_name(q->dscp));
}

static void print_data(const uint8_t *f, const struct pkt *q)
{
	const uint8_t *meth = f + WIRE_ETH_LEN + WIRE_IPV4_LEN + WIRE_UDP_LEN + WIRE_BTH_LEN;

	printf("\tmrc.trimmed=%d", q->trimmed);
	printf("\tmrc.meth.rqmsn=%u\tmrc.meth.msn=%u", q->rqmsn, q->msn);
	if (q->flags & WIRE_BTH_TS)
		printf("\tmrc.tseth.time=%u\tmrc.tseth.format=%u", q->tseth_time,
		       meth[WIRE_METH_LEN + 3] & 0xF);
	if (q->trimmed)
		return;
	printf("\tmrc.reth.va=%" PRIu64 "\tmrc.reth.rkey=%u\tmrc.reth.dmalen=%u", q->va, q->rkey,
	       q->dma_len);
	printf("\tmrc.payload_len=%u", q->payload_len);
}

static void print_sack(const struct pkt *q)
{
	const struct wire_seth *s = &q->u.sack.seth;
	const struct wire_ccstate *cc = &q->u.sack.cc;

	printf("\tmrc.sack.m=%u\tmrc.sack.pr=%d\tmrc.sack.ack_psn_offset=%d", s->m, s->pr,
	       s->ack_psn_offset);
	printf("\tmrc.sack.entropy_echo=%u\tmrc.sack.responder_qpn=%u\tmrc.sack.cack=%u",
	       s->entropy_echo, s->responder_qpn, s->cack_psn);
	printf("\tmrc.sack.cc_type=%u\tmrc.sack.cc_flags=%u\tmrc.sack.mpr=%u", s->cc_type,
	       s->cc_flags, s->mpr);
	printf("\tmrc.sack.offset=%d\tmrc.sack.bitmap=0x%016" PRIx64, s->sack_offset, s->bitmap);
	printf("\tmrc.cc.ts_echo=%u\tmrc.cc.service_time=%u\tmrc.cc.restore_pen=%u"
	       "\tmrc.cc.rcv_bytes=%u",
	       cc->ts_echo, cc->service_time, cc->restore_pen, cc->rcv_bytes);
}

static void print_transport(const uint8_t *f, const struct pkt *q)
{
	const struct wire_neth *nk = &q->u.neth;
	struct in_addr a;

	switch (wire_kind_of(q->opcode)) {
	case WIRE_KIND_DATA:
		print_data(f, q);
		break;
	case WIRE_KIND_ACK:
		printf("\tmrc.aeth.syndrome=%u\tmrc.aeth.msn=%u", q->u.aeth.syndrome,
		       q->u.aeth.msn);
		break;
	case WIRE_KIND_SACK:
		print_sack(q);
		break;
	case WIRE_KIND_NACK:
		printf("\tmrc.nack.code=%u\tmrc.nack.entropy_echo=%u\tmrc.nack.responder_qpn=%u",
		       nk->code, nk->entropy_echo, nk->responder_qpn);
		printf("\tmrc.nack.psn=%u\tmrc.nack.cc=%u\tmrc.nack.ts_echo=%u", nk->nack_psn,
		       nk->cc, nk->ts_echo);
		break;
	case WIRE_KIND_PROBE:
		a.s_addr = htonl(q->u.peth.prober);
		printf("\tmrc.probe.id=%u\tmrc.probe.prober=%s\tmrc.probe.ts=%u",
		       q->u.peth.probe_id, inet_ntoa(a), q->u.peth.ts);
		break;
	}
}

/* What the codec reads back from the frame it built. */
static int print_frame(int n, const uint8_t *f, size_t len, bool icrc)
{
	struct pkt q;
	enum wire_error e = wire_parse(f, len, icrc, &q);
	ps_t stamp;
	uint32_t seq;

	if (e != WIRE_OK) {
		fprintf(stderr, "mrc-frames: frame %d does not parse: %s\n", n, wire_error_name(e));
		return 1;
	}
	printf("%d\t%s", n, wire_opcode_name(q.opcode));
	print_bth(f, &q);
	print_transport(f, &q);
	if (icrc) {
		size_t at = WIRE_ETH_LEN + wire_nominal_len(&q) - WIRE_ICRC_LEN;
		/* the four ICRC bytes in wire order, as Wireshark's InfiniBand
		 * dissector shows them; the CRC value is their little-endian
		 * reading (wire_icrc) */
		printf("\tmrc.icrc=0x%08x", (unsigned)((uint32_t)f[at] << 24 | f[at + 1] << 16 |
						       f[at + 2] << 8 | f[at + 3]));
	}
	if (wire_trailer_get(f, len, &stamp, &seq))
		printf("\tmrc.trailer.stamp=%" PRIu64 "\tmrc.trailer.seq=%u", stamp, seq);
	printf("\n");
	return 0;
}

int main(int argc, char **argv)
{
	static uint8_t buf[WIRE_MAX_FRAME + WIRE_TRAILER_LEN];
	char err[256];
	struct capture *c;
	int bad = 0;

	if (argc != 2) {
		fprintf(stderr, "usage: mrc-frames OUT.pcap\n");
		return 2;
	}
	c = capture_open(argv[1], err, sizeof err);
	if (!c) {
		fprintf(stderr, "mrc-frames: %s\n", err);
		return 1;
	}
	for (int n = 1; n <= NFRAMES; n++) {
		struct pkt p;
		size_t len;

		frame_pkt(n, &p);
		len = wire_build(&p, buf, sizeof buf);
		if (len == 0) {
			fprintf(stderr, "mrc-frames: frame %d does not build\n", n);
			bad = 1;
			continue;
		}
		if (n == 19) {
			wire_trailer_put(buf + len, TRAILER_STAMP, TRAILER_SEQ);
			len += WIRE_TRAILER_LEN;
		}
		capture_write(c, (ps_t)(n - 1) * PS_PER_US, buf, len);
		bad |= print_frame(n, buf, len, p.icrc);
	}
	capture_close(c);
	return bad;
}
