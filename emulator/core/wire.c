/* emulator/core/wire.c — build and parse every MRC frame of docs/protocol.md §1,
 * byte for byte as docs/vectors.md shows them, with the bad-input rules of
 * docs/protocol.md §2. */
#include "wire.h"

#include <stdlib.h>
#include <string.h>

/* Big-endian field access: every wire field is big-endian (docs/protocol.md). */
static void put16(uint8_t *b, uint32_t v)
{
	b[0] = (uint8_t)(v >> 8);
	b[1] = (uint8_t)v;
}

static void put24(uint8_t *b, uint32_t v)
{
	b[0] = (uint8_t)(v >> 16);
	b[1] = (uint8_t)(v >> 8);
	b[2] = (uint8_t)v;
}

static void put32(uint8_t *b, uint32_t v)
{
	put16(b, v >> 16);
	put16(b + 2, v);
}

static void put64(uint8_t *b, uint64_t v)
{
	put32(b, (uint32_t)(v >> 32));
	put32(b + 4, (uint32_t)v);
}

static uint16_t get16(const uint8_t *b)
{
	return (uint16_t)(b[0] << 8 | b[1]);
}

static uint32_t get24(const uint8_t *b)
{
	return (uint32_t)b[0] << 16 | (uint32_t)b[1] << 8 | b[2];
}

static uint32_t get32(const uint8_t *b)
{
	return (uint32_t)get16(b) << 16 | get16(b + 2);
}

static uint64_t get64(const uint8_t *b)
{
	return (uint64_t)get32(b) << 32 | get32(b + 4);
}

const char *wire_error_name(enum wire_error e)
{
	static const char *const names[WIRE_ERROR_COUNT] = {
	    [WIRE_OK] = "ok",
	    [WIRE_SHORT] = "short",
	    [WIRE_NOT_IPV4] = "not_ipv4",
	    [WIRE_BAD_IP_VERSION] = "bad_ip_version",
	    [WIRE_BAD_IP_LENGTH] = "bad_ip_length",
	    [WIRE_BAD_IP_CSUM] = "bad_ip_csum",
	    [WIRE_NOT_UDP] = "not_udp",
	    [WIRE_FRAGMENT] = "fragment",
	    [WIRE_UDP_LENGTH] = "udp_length",
	    [WIRE_NOT_ROCE] = "not_roce",
	    [WIRE_UNKNOWN_OPCODE] = "unknown_opcode",
	    [WIRE_UNSUPPORTED_OPCODE] = "unsupported_opcode",
	    [WIRE_BAD_LENGTH] = "bad_length",
	    [WIRE_BAD_DMA_LENGTH] = "bad_dma_length",
	    [WIRE_BAD_ICRC] = "bad_icrc",
	    [WIRE_BAD_PKEY] = "bad_pkey",
	};
	if ((unsigned)e >= WIRE_ERROR_COUNT)
		return "unknown";
	return names[e];
}

/* wire_kind_of's table: every opcode not named is DATA (WIRE_KIND_DATA is
 * 0), as the function promises. */
_Static_assert(WIRE_KIND_DATA == 0, "unnamed opcodes read as data");
const uint8_t wire_kinds[256] = {
    [WIRE_OP_ACK] = WIRE_KIND_ACK,
    [WIRE_OP_SACK] = WIRE_KIND_SACK,
    [WIRE_OP_NACK] = WIRE_KIND_NACK,
    [WIRE_OP_PROBE] = WIRE_KIND_PROBE,
};

const char *wire_opcode_name(uint8_t opcode)
{
	switch (opcode) {
	case WIRE_OP_WRITE_FIRST:
		return "WRITE_FIRST";
	case WIRE_OP_WRITE_MIDDLE:
		return "WRITE_MIDDLE";
	case WIRE_OP_WRITE_LAST:
		return "WRITE_LAST";
	case WIRE_OP_WRITE_ONLY:
		return "WRITE_ONLY";
	case WIRE_OP_WRITE_LAST_IMM:
		return "WRITE_LAST_IMM";
	case WIRE_OP_WRITE_ONLY_IMM:
		return "WRITE_ONLY_IMM";
	case WIRE_OP_ACK:
		return "ACK";
	case WIRE_OP_SACK:
		return "SACK";
	case WIRE_OP_NACK:
		return "NACK";
	case WIRE_OP_PROBE:
		return "PROBE";
	default:
		return "UNKNOWN";
	}
}

static bool opcode_known(uint8_t opcode)
{
	return (opcode >= WIRE_OP_WRITE_FIRST && opcode <= WIRE_OP_WRITE_ONLY_IMM) ||
	       opcode == WIRE_OP_ACK || opcode == WIRE_OP_SACK || opcode == WIRE_OP_NACK ||
	       opcode == WIRE_OP_PROBE;
}

static bool opcode_unsupported(uint8_t opcode)
{
	return opcode == WIRE_OP_WRITE_LAST_IMM || opcode == WIRE_OP_WRITE_ONLY_IMM;
}

/* Bytes after the BTH (ICRC excluded): METH (+ TSETH) on a data packet, then
 * RETH and payload unless it was trimmed (docs/protocol.md §1). */
static uint32_t data_hdr_len(uint8_t flags)
{
	return WIRE_METH_LEN + (flags & WIRE_BTH_TS ? WIRE_TSETH_LEN : 0);
}

/* A trimmed packet keeps no ICRC (wire_nominal_len). */
static bool has_icrc(const struct pkt *p)
{
	return p->icrc && !(p->trimmed && wire_is_data(p));
}

/* Bytes after the BTH, the ICRC excluded. */
static uint32_t transport_len(const struct pkt *p)
{
	return wire_nominal_len(p) - (WIRE_IPV4_LEN + WIRE_UDP_LEN + WIRE_BTH_LEN) -
	       (has_icrc(p) ? WIRE_ICRC_LEN : 0);
}

/* The pattern from phase 0, a whole number of periods past a period: a
 * run of up to PATTERN_CHUNK bytes from phase v < 251 is pattern + v, and
 * the next run starts at the same phase.  Filled and compared with memcpy
 * and memcmp rather than a byte at a time: every data frame a switch or a
 * daemon builds or checks goes through here. */
#define PATTERN_CHUNK (251u * 16)
static uint8_t pattern[251 + PATTERN_CHUNK];

__attribute__((constructor)) static void pattern_init(void)
{
	for (uint32_t i = 0; i < sizeof(pattern); i++)
		pattern[i] = (uint8_t)(i % 251);
}

static const uint8_t *pattern_at(uint32_t v)
{
	return pattern + v;
}

void wire_pattern_fill(uint8_t *dst, uint32_t len, uint32_t src_ip, uint16_t msn, uint64_t offset)
{
	const uint8_t *from = pattern_at(wire_pattern_byte(src_ip, msn, offset));

	for (uint32_t n; len; dst += n, len -= n) {
		n = len < PATTERN_CHUNK ? len : PATTERN_CHUNK;
		memcpy(dst, from, n);
	}
}

uint32_t wire_pattern_check(const uint8_t *buf, uint32_t len, uint32_t src_ip, uint16_t msn,
			    uint64_t offset)
{
	const uint8_t *from = pattern_at(wire_pattern_byte(src_ip, msn, offset));
	uint32_t bad = 0;

	for (uint32_t n; len; buf += n, len -= n) {
		n = len < PATTERN_CHUNK ? len : PATTERN_CHUNK;
		if (!memcmp(buf, from, n))
			continue;
		for (uint32_t i = 0; i < n; i++)
			bad += buf[i] != from[i];
	}
	return bad;
}

uint16_t wire_ipv4_csum(const uint8_t *hdr)
{
	uint32_t sum = 0;

	for (int i = 0; i < WIRE_IPV4_LEN; i += 2)
		if (i != 10)
			sum += get16(hdr + i);
	while (sum >> 16)
		sum = (sum & 0xFFFF) + (sum >> 16);
	return (uint16_t)~sum;
}

/* Reflected CRC32 (polynomial 0xEDB88320), four bits at a time: small enough
 * to be a constant table, no initialisation, no global state. */
static uint32_t crc32_update(uint32_t crc, const uint8_t *b, size_t len)
{
	static const uint32_t nibble[16] = {
	    0x00000000, 0x1DB71064, 0x3B6E20C8, 0x26D930AC, 0x76DC4190, 0x6B6B51F4,
	    0x4DB26158, 0x5005713C, 0xEDB88320, 0xF00F9344, 0xD6D6A3E8, 0xCB61B38C,
	    0x9B64C2B0, 0x86D3D2D4, 0xA00AE278, 0xBDBDF21C,
	};
	for (size_t i = 0; i < len; i++) {
		crc ^= b[i];
		crc = (crc >> 4) ^ nibble[crc & 0xF];
		crc = (crc >> 4) ^ nibble[crc & 0xF];
	}
	return crc;
}

/* As Linux Soft-RoCE computes it (drivers/infiniband/sw/rxe/rxe_icrc.c):
 * crc32_le seeded with 0xFFFFFFFF over 8 bytes of 0xFF standing for the
 * LRH (rxe starts from 0xdebb20e3, the CRC state after those 8 bytes), then
 * the IPv4 header with TOS, TTL and header checksum set to all ones, the UDP
 * header with its checksum set to all ones, the BTH with byte 4 (FECN, BECN,
 * resv6; rxe ORs ~BTH_QPN_MASK into the qpn word) set to 0xFF, then the rest
 * of the datagram; the result is inverted.  rxe stores it with
 * cpu_to_le32(~crc): the low byte of the returned value comes first on the
 * wire, which is what Scapy's contrib/roce.py also does. */
uint32_t wire_icrc(const uint8_t *ip, size_t len)
{
	enum { HDRS = WIRE_IPV4_LEN + WIRE_UDP_LEN + WIRE_BTH_LEN };
	static const uint8_t lrh[8] = {0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF};
	uint8_t h[HDRS];
	size_t n = len < HDRS ? len : HDRS;
	uint32_t crc;

	memset(h, 0xFF, sizeof h);
	memcpy(h, ip, n);
	h[1] = 0xFF;				    /* TOS */
	h[8] = 0xFF;				    /* TTL */
	h[10] = h[11] = 0xFF;			    /* header checksum */
	h[26] = h[27] = 0xFF;			    /* UDP checksum */
	h[WIRE_IPV4_LEN + WIRE_UDP_LEN + 4] = 0xFF; /* BTH FECN/BECN/resv6 */
	crc = crc32_update(0xFFFFFFFFu, lrh, sizeof lrh);
	crc = crc32_update(crc, h, n);
	crc = crc32_update(crc, ip + n, len - n);
	return ~crc;
}

static uint8_t *build_eth_ip_udp(const struct pkt *p, uint8_t *b, uint32_t nominal)
{
	uint8_t *ip = b + WIRE_ETH_LEN, *udp = ip + WIRE_IPV4_LEN;

	memcpy(b, p->dst_mac, 6);
	memcpy(b + 6, p->src_mac, 6);
	put16(b + 12, 0x0800);
	/* docs/protocol.md §1: IHL 5, DF, protocol UDP; TTL 0 means "not set yet"
	 * (a switch drops TTL 0), so the NIC's 64 is written. */
	ip[0] = 0x45;
	ip[1] = (uint8_t)((p->dscp & 0x3F) << 2 | (p->ecn & 3));
	put16(ip + 2, nominal);
	put16(ip + 4, p->ip_id);
	put16(ip + 6, 0x4000);
	ip[8] = p->ttl ? p->ttl : WIRE_TTL;
	ip[9] = 17;
	put32(ip + 12, p->src_ip);
	put32(ip + 16, p->dst_ip);
	put16(ip + 10, 0);
	put16(ip + 10, wire_ipv4_csum(ip));
	/* UDP checksum 0; destination 4791 for every MRC packet (port 0 is never
	 * one, so it stands for "not set"). */
	put16(udp, p->sport);
	put16(udp + 2, p->dport ? p->dport : WIRE_ROCE_PORT);
	put16(udp + 4, nominal - WIRE_IPV4_LEN);
	put16(udp + 6, 0);
	return udp + WIRE_UDP_LEN;
}

static uint8_t *build_bth(const struct pkt *p, uint8_t *b)
{
	b[0] = p->opcode;
	b[1] = 0; /* SE, M, PadCnt, TVer */
	put16(b + 2, WIRE_PKEY);
	put32(b + 4, (p->fecn ? 0x80000000u : 0) | (p->becn ? 0x40000000u : 0) |
			 (p->dqpn & WIRE_QPN_MASK));
	put32(b + 8, (uint32_t)(p->flags & 0xF0) << 24 | (p->psn & WIRE_PSN_MASK));
	return b + WIRE_BTH_LEN;
}

static uint8_t *build_data(const struct pkt *p, uint8_t *b)
{
	put16(b, p->rqmsn);
	put16(b + 2, p->msn);
	b += WIRE_METH_LEN;
	if (p->flags & WIRE_BTH_TS) {
		put16(b, p->tseth_time);
		put16(b + 2, 1); /* format type 1 */
		b += WIRE_TSETH_LEN;
	}
	if (p->trimmed)
		return b;
	put64(b, p->va);
	put32(b + 8, p->rkey);
	put32(b + 12, p->dma_len);
	b += WIRE_RETH_LEN;
	if (p->payload)
		memcpy(b, p->payload, p->payload_len);
	else
		wire_pattern_fill(b, p->payload_len, p->src_ip, p->msn, p->msg_offset);
	return b + p->payload_len;
}

static uint8_t *build_sack(const struct wire_seth *s, const struct wire_ccstate *cc, uint8_t *b)
{
	memset(b, 0, WIRE_SETH_LEN + WIRE_CCSTATE_LEN);
	b[1] = (uint8_t)((s->m & 3) << 5 | (s->pr ? 0x02 : 0));
	put16(b + 2, (uint16_t)s->ack_psn_offset);
	put32(b + 4, s->entropy_echo);
	put32(b + 8, s->responder_qpn & WIRE_QPN_MASK);
	put24(b + 13, s->cack_psn & WIRE_PSN_MASK);
	b[16] = (uint8_t)((s->cc_type & 0xF) << 4 | (s->cc_flags & 0xF));
	b[17] = s->mpr;
	put16(b + 18, (uint16_t)s->sack_offset);
	put64(b + 20, s->bitmap);
	b += WIRE_SETH_LEN;
	put16(b, cc->ts_echo);
	put16(b + 2, cc->service_time);
	b[4] = cc->restore_pen;
	put24(b + 5, cc->rcv_bytes & 0xFFFFFF);
	return b + WIRE_CCSTATE_LEN;
}

static uint8_t *build_nack(const struct wire_neth *n, uint8_t *b)
{
	memset(b, 0, WIRE_NETH_LEN);
	b[2] = n->code;
	put32(b + 4, n->entropy_echo);
	put32(b + 8, n->responder_qpn & WIRE_QPN_MASK);
	put24(b + 13, n->nack_psn & WIRE_PSN_MASK);
	b[16] = n->cc;
	put16(b + 18, n->ts_echo);
	return b + WIRE_NETH_LEN;
}

static uint8_t *build_probe(const struct wire_peth *pe, uint8_t *b)
{
	memset(b, 0, WIRE_PETH_LEN);
	put16(b + 4, pe->probe_id);
	put32(b + 8, pe->prober);
	put16(b + 12, pe->ts);
	return b + WIRE_PETH_LEN;
}

size_t wire_build(const struct pkt *p, uint8_t *buf, size_t cap)
{
	uint32_t nominal = wire_nominal_len(p);
	size_t len = wire_frame_len(p);
	uint8_t *ip = buf + WIRE_ETH_LEN, *b;

	if (!opcode_known(p->opcode) || len > cap || len > WIRE_MAX_FRAME)
		return 0;
	b = build_bth(p, build_eth_ip_udp(p, buf, nominal));
	switch (wire_kind_of(p->opcode)) {
	case WIRE_KIND_DATA:
		b = build_data(p, b);
		break;
	case WIRE_KIND_ACK:
		b[0] = p->u.aeth.syndrome;
		put24(b + 1, p->u.aeth.msn & 0xFFFFFF);
		b += WIRE_AETH_LEN;
		break;
	case WIRE_KIND_SACK:
		b = build_sack(&p->u.sack.seth, &p->u.sack.cc, b);
		break;
	case WIRE_KIND_NACK:
		b = build_nack(&p->u.neth, b);
		break;
	case WIRE_KIND_PROBE:
		b = build_probe(&p->u.peth, b);
		break;
	}
	if (has_icrc(p)) {
		uint32_t icrc = wire_icrc(ip, (size_t)(b - ip));
		/* little-endian, as rxe stores it (see wire_icrc) */
		for (int i = 0; i < 4; i++)
			b[i] = (uint8_t)(icrc >> (8 * i));
	}
	return len;
}

size_t wire_forward(const struct pkt *p, const uint8_t *frame, uint8_t *buf, size_t cap)
{
	size_t len = wire_frame_len(p);
	uint8_t *ip = buf + WIRE_ETH_LEN;

	if (p->trimmed || len > cap)
		return 0;
	memcpy(buf, frame, len);
	memcpy(buf, p->dst_mac, 6);
	memcpy(buf + 6, p->src_mac, 6);
	ip[1] = (uint8_t)((p->dscp & 0x3F) << 2 | (p->ecn & 3));
	ip[8] = p->ttl ? p->ttl : WIRE_TTL;
	put16(ip + 10, 0);
	put16(ip + 10, wire_ipv4_csum(ip));
	return len;
}

/* Checks the Ethernet, IPv4 and UDP headers of a frame (docs/protocol.md §2);
 * on success *dlen is the IP datagram's length. */
static enum wire_error parse_ip_udp(const uint8_t *buf, size_t len, uint32_t *dlen)
{
	const uint8_t *ip = buf + WIRE_ETH_LEN, *udp = ip + WIRE_IPV4_LEN;
	uint32_t tot;

	if (len < WIRE_ETH_LEN)
		return WIRE_SHORT;
	if (get16(buf + 12) != 0x0800)
		return WIRE_NOT_IPV4;
	if (len < WIRE_ETH_LEN + WIRE_IPV4_LEN)
		return WIRE_SHORT;
	if (ip[0] != 0x45)
		return WIRE_BAD_IP_VERSION;
	tot = get16(ip + 2);
	if (tot < WIRE_IPV4_LEN + WIRE_UDP_LEN || tot > len - WIRE_ETH_LEN ||
	    tot + WIRE_ETH_LEN > WIRE_MAX_FRAME)
		return WIRE_BAD_IP_LENGTH;
	if (wire_ipv4_csum(ip) != get16(ip + 10))
		return WIRE_BAD_IP_CSUM;
	if (ip[9] != 17)
		return WIRE_NOT_UDP;
	if (get16(ip + 6) & 0x3FFF)
		return WIRE_FRAGMENT;
	if (get16(udp + 4) != tot - WIRE_IPV4_LEN)
		return WIRE_UDP_LENGTH;
	if (get16(udp + 2) != WIRE_ROCE_PORT)
		return WIRE_NOT_ROCE;
	*dlen = tot;
	return WIRE_OK;
}

/* The RETH and payload of an untrimmed data packet (rest bytes from the
 * RETH on), against the rule that no segment lies beyond its message. */
static enum wire_error parse_reth(const uint8_t *b, uint32_t rest, struct pkt *q)
{
	if (rest < WIRE_RETH_LEN)
		return WIRE_BAD_LENGTH;
	q->va = get64(b);
	q->rkey = get32(b + 8);
	q->dma_len = get32(b + 12);
	q->payload_len = rest - WIRE_RETH_LEN;
	q->payload = b + WIRE_RETH_LEN;
	if (q->payload_len > q->dma_len ||
	    (q->opcode == WIRE_OP_WRITE_ONLY && q->dma_len != q->payload_len))
		return WIRE_BAD_DMA_LENGTH;
	/* docs/protocol.md §1: VA = stride x message index + byte offset */
	q->msg_offset = q->va % WIRE_VA_MSG_STRIDE;
	return WIRE_OK;
}

static enum wire_error parse_data(const uint8_t *b, uint32_t rest, struct pkt *q)
{
	uint32_t hdr = data_hdr_len(q->flags);

	if (rest < hdr)
		return WIRE_BAD_LENGTH;
	q->rqmsn = get16(b);
	q->msn = get16(b + 2);
	if (q->flags & WIRE_BTH_TS)
		q->tseth_time = get16(b + WIRE_METH_LEN);
	if (rest == hdr) {
		/* docs/protocol.md §1, Trimmed packet: nothing after METH (+TSETH) */
		q->trimmed = true;
		return WIRE_OK;
	}
	return parse_reth(b + hdr, rest - hdr, q);
}

static void parse_sack(const uint8_t *b, struct pkt *q)
{
	struct wire_seth *s = &q->u.sack.seth;
	struct wire_ccstate *cc = &q->u.sack.cc;

	s->m = (b[1] >> 5) & 3;
	s->pr = b[1] & 0x02;
	s->ack_psn_offset = (int16_t)get16(b + 2);
	s->entropy_echo = get32(b + 4);
	s->responder_qpn = get32(b + 8) & WIRE_QPN_MASK;
	s->cack_psn = get24(b + 13);
	s->cc_type = b[16] >> 4;
	s->cc_flags = b[16] & 0xF;
	s->mpr = b[17];
	s->sack_offset = (int16_t)get16(b + 18);
	s->bitmap = get64(b + 20);
	b += WIRE_SETH_LEN;
	cc->ts_echo = get16(b);
	cc->service_time = get16(b + 2);
	cc->restore_pen = b[4];
	cc->rcv_bytes = get24(b + 5);
}

static void parse_nack(const uint8_t *b, struct pkt *q)
{
	q->u.neth.code = b[2];
	q->u.neth.entropy_echo = get32(b + 4);
	q->u.neth.responder_qpn = get32(b + 8) & WIRE_QPN_MASK;
	q->u.neth.nack_psn = get24(b + 13);
	q->u.neth.cc = b[16];
	q->u.neth.ts_echo = get16(b + 18);
}

/* What follows the BTH, rest bytes (ICRC excluded), by opcode. */
static enum wire_error parse_transport(const uint8_t *b, uint32_t rest, struct pkt *q)
{
	enum wire_kind kind = wire_kind_of(q->opcode);

	if (kind == WIRE_KIND_DATA)
		return parse_data(b, rest, q);
	if (rest != transport_len(q))
		return WIRE_BAD_LENGTH;
	switch (kind) {
	case WIRE_KIND_ACK:
		q->u.aeth.syndrome = b[0];
		q->u.aeth.msn = get24(b + 1);
		break;
	case WIRE_KIND_SACK:
		parse_sack(b, q);
		break;
	case WIRE_KIND_NACK:
		parse_nack(b, q);
		break;
	case WIRE_KIND_PROBE:
		q->u.peth.probe_id = get16(b + 4);
		q->u.peth.prober = get32(b + 8);
		q->u.peth.ts = get16(b + 12);
		break;
	case WIRE_KIND_DATA:
		break;
	}
	return WIRE_OK;
}

static void parse_headers(const uint8_t *buf, struct pkt *q)
{
	const uint8_t *ip = buf + WIRE_ETH_LEN, *udp = ip + WIRE_IPV4_LEN;
	const uint8_t *bth = udp + WIRE_UDP_LEN;

	memcpy(q->dst_mac, buf, 6);
	memcpy(q->src_mac, buf + 6, 6);
	q->dscp = ip[1] >> 2;
	q->ecn = ip[1] & 3;
	q->ip_id = get16(ip + 4);
	q->ttl = ip[8];
	q->src_ip = get32(ip + 12);
	q->dst_ip = get32(ip + 16);
	q->sport = get16(udp);
	q->dport = get16(udp + 2);
	q->opcode = bth[0];
	q->fecn = bth[4] & 0x80;
	q->becn = bth[4] & 0x40;
	q->dqpn = get24(bth + 5);
	q->flags = bth[8] & 0xF0;
	q->psn = get24(bth + 9);
}

/* A data opcode with nothing after METH (+ TSETH): a trimmed packet. */
static bool trimmed_shape(const uint8_t *bth, uint32_t rest)
{
	return opcode_known(bth[0]) && wire_kind_of(bth[0]) == WIRE_KIND_DATA &&
	       rest == data_hdr_len(bth[8] & 0xF0);
}

/* The last 4 bytes of the datagram, little-endian as rxe stores them. */
static bool icrc_ok(const uint8_t *ip, uint32_t dlen)
{
	const uint8_t *c = ip + dlen - WIRE_ICRC_LEN;
	uint32_t got =
	    (uint32_t)c[0] | (uint32_t)c[1] << 8 | (uint32_t)c[2] << 16 | (uint32_t)c[3] << 24;

	return wire_icrc(ip, dlen - WIRE_ICRC_LEN) == got;
}

enum wire_error wire_parse(const uint8_t *buf, size_t len, bool icrc, struct pkt *p)
{
	const uint8_t *ip = buf + WIRE_ETH_LEN;
	const uint8_t *bth = ip + WIRE_IPV4_LEN + WIRE_UDP_LEN;
	uint32_t dlen, rest;
	struct pkt q;
	enum wire_error e = parse_ip_udp(buf, len, &dlen);

	if (e != WIRE_OK)
		return e;
	if (dlen < WIRE_IPV4_LEN + WIRE_UDP_LEN + WIRE_BTH_LEN)
		return WIRE_SHORT;
	rest = dlen - (WIRE_IPV4_LEN + WIRE_UDP_LEN + WIRE_BTH_LEN);
	if (icrc && trimmed_shape(bth, rest))
		icrc = false; /* a trimmed packet keeps no ICRC (has_icrc) */
	if (icrc) {
		if (rest < WIRE_ICRC_LEN)
			return WIRE_SHORT;
		if (!icrc_ok(ip, dlen))
			return WIRE_BAD_ICRC;
		rest -= WIRE_ICRC_LEN;
	}
	if (get16(bth + 2) != WIRE_PKEY)
		return WIRE_BAD_PKEY;
	if (!opcode_known(bth[0]))
		return WIRE_UNKNOWN_OPCODE;
	if (opcode_unsupported(bth[0]))
		return WIRE_UNSUPPORTED_OPCODE;
	memset(&q, 0, sizeof q);
	parse_headers(buf, &q);
	e = parse_transport(bth + WIRE_BTH_LEN, rest, &q);
	if (e != WIRE_OK)
		return e;
	q.icrc = icrc;
	*p = q;
	return WIRE_OK;
}

void wire_trim(struct pkt *p)
{
	if (!wire_is_data(p))
		return;
	p->trimmed = true;
	p->icrc = false; /* cut with the payload (has_icrc) */
	p->va = 0;
	p->rkey = 0;
	p->dma_len = 0;
	p->payload = NULL;
	p->payload_len = 0;
}

bool wire_trailer_put(uint8_t *at, ps_t arrival, uint32_t seq)
{
	if (arrival > WIRE_TRAILER_MAX_PS)
		return false;
	at[0] = 0x4D;
	at[1] = 0x52;
	put16(at + 2, (uint32_t)(arrival >> 32));
	put32(at + 4, (uint32_t)arrival);
	put32(at + 8, seq);
	return true;
}

/* docs/architecture.md, Stamped frames: the trailer sits right after the IP total
 * length and counts only with its magic, so padding is never a stamp. */
bool wire_trailer_get(const uint8_t *frame, size_t len, ps_t *arrival, uint32_t *seq)
{
	const uint8_t *t;
	size_t end;

	if (len < WIRE_ETH_LEN + WIRE_IPV4_LEN || get16(frame + 12) != 0x0800 ||
	    frame[WIRE_ETH_LEN] >> 4 != 4)
		return false;
	end = WIRE_ETH_LEN + (size_t)get16(frame + WIRE_ETH_LEN + 2);
	if (end < WIRE_ETH_LEN + WIRE_IPV4_LEN || end + WIRE_TRAILER_LEN > len)
		return false;
	t = frame + end;
	if (t[0] != 0x4D || t[1] != 0x52)
		return false;
	*arrival = (ps_t)get16(t + 2) << 32 | get32(t + 4);
	*seq = get32(t + 8);
	return true;
}

size_t wire_promise_put(uint8_t *frame, const uint8_t dst[6], const uint8_t src[6],
			const struct wire_promise *p)
{
	memset(frame, 0, WIRE_PROMISE_LEN);
	memcpy(frame, dst, 6);
	memcpy(frame + 6, src, 6);
	put16(frame + 12, WIRE_ETHERTYPE_PROMISE);
	memcpy(frame + WIRE_ETH_LEN, "MRP1", 4);
	put64(frame + WIRE_ETH_LEN + 4, p->promise);
	put32(frame + WIRE_ETH_LEN + 12, p->seq);
	put64(frame + WIRE_ETH_LEN + 16, p->want);
	put64(frame + WIRE_ETH_LEN + 24, p->end);
	return WIRE_PROMISE_LEN;
}

bool wire_promise_get(const uint8_t *frame, size_t len, struct wire_promise *p)
{
	if (len < WIRE_ETH_LEN + 16 || get16(frame + 12) != WIRE_ETHERTYPE_PROMISE ||
	    memcmp(frame + WIRE_ETH_LEN, "MRP1", 4))
		return false;
	p->promise = get64(frame + WIRE_ETH_LEN + 4);
	p->seq = get32(frame + WIRE_ETH_LEN + 12);
	p->want = len >= WIRE_ETH_LEN + 24 ? get64(frame + WIRE_ETH_LEN + 16) : 0;
	p->end = len >= WIRE_ETH_LEN + 32 ? get64(frame + WIRE_ETH_LEN + 24) : 0;
	return true;
}

bool pkt_pool_init(struct pkt_pool *pool, size_t slab_size, size_t max_pkts)
{
	memset(pool, 0, sizeof *pool);
	if (slab_size == 0)
		return false;
	pool->slab_size = slab_size;
	pool->max_pkts = max_pkts;
	return true;
}

void pkt_pool_destroy(struct pkt_pool *pool)
{
	for (size_t i = 0; i < pool->nslabs; i++)
		free(pool->slabs[i]);
	free(pool->slabs);
	memset(pool, 0, sizeof *pool);
}

/* Packets threaded onto the free list at a time from the newest slab.  A
 * slab is threaded as it is used, not when it is made: its pages are then
 * first touched by the packets a run needs (an 8-host run's slab of 4,096
 * packets is 768 KiB, 190 page faults when threaded at once, about a fifth
 * of its set-up; issue 16). */
#define POOL_CARVE 64

/* Threads the next packets of the newest slab onto the empty free list. */
static void pool_carve(struct pkt_pool *pool)
{
	size_t n = (size_t)(pool->carve_end - pool->carve);

	if (n > POOL_CARVE)
		n = POOL_CARVE;
	for (size_t i = n; i-- > 0;) {
		pool->carve[i].next = pool->free;
		pool->free = &pool->carve[i];
	}
	pool->carve += n;
}

/* Called with the free list empty, so every packet made so far is in use.
 * Out of line and cold: inlined, its registers were saved and restored
 * on every packet made (issue 16). */
static __attribute__((noinline, cold)) bool pool_grow(struct pkt_pool *pool)
{
	size_t n = pool->slab_size;
	struct pkt *slab;
	void **slabs;

	if (pool->carve < pool->carve_end) {
		pool_carve(pool);
		return true;
	}
	if (pool->max_pkts) {
		if (pool->in_use >= pool->max_pkts)
			return false;
		if (n > pool->max_pkts - pool->in_use)
			n = pool->max_pkts - pool->in_use;
	}
	slabs = realloc(pool->slabs, (pool->nslabs + 1) * sizeof *slabs);
	if (!slabs)
		return false;
	pool->slabs = slabs;
	/* On cache lines: a packet's first line is all a hop reads (wire.h). */
	slab = aligned_alloc(64, n * sizeof *slab);
	if (!slab)
		return false;
	/* Not zeroed here: pkt_get zeroes each packet it hands out. */
	pool->slabs[pool->nslabs++] = slab;
	pool->carve = slab;
	pool->carve_end = slab + n;
	pool_carve(pool);
	return true;
}

/* A packet's 192 bytes zeroed by twelve 16-byte stores, on every packet
 * made: GCC turns a memset of this size into `rep stos`, whose start-up
 * costs more than the stores (issue 16). */
static inline void pkt_zero(struct pkt *p)
{
	typedef unsigned long long pkt_words __attribute__((vector_size(16), may_alias));
	pkt_words *w = (pkt_words *)p;

	_Static_assert(PKT_SIZE == 12 * sizeof(pkt_words), "twelve stores");
	w[0] = w[1] = w[2] = w[3] = w[4] = w[5] = (pkt_words){0};
	w[6] = w[7] = w[8] = w[9] = w[10] = w[11] = (pkt_words){0};
}

struct pkt *pkt_get(struct pkt_pool *pool)
{
	struct pkt *p;

	if (!pool->free && !pool_grow(pool)) {
		pool->refused++;
		return NULL;
	}
	p = pool->free;
	pool->free = p->next;
	pkt_zero(p);
	pool->in_use++;
	return p;
}

void pkt_put(struct pkt_pool *pool, struct pkt *p)
{
	if (!p)
		return;
	p->next = pool->free;
	pool->free = p;
	pool->in_use--;
}
