/* tests/tools/mrc-hostile.c — hostile frames from an external endpoint
 * (tests/hostile.sh): every class of bad frame of docs/protocol.md §2,
 * forged sources, forged acknowledgements and forged stamps, built by the
 * real codec and then spoiled, written to a packet socket:
 *
 *   mrc-hostile IFACE SRC_IP NIC_IP OTHER_NIC_IP COUNT [CLASS]
 *
 * Frames go to NIC_IP (through the switch behind IFACE) in turn by class,
 * or only CLASS; one line a class at the end: "<class> <frames>".  The
 * forged acknowledgements never name the real QPs from the real peer with
 * consistent PSNs: without authentication such a frame can acknowledge
 * what never arrived, and no receiver could tell. */
#include <arpa/inet.h>
#include <net/ethernet.h>
#include <net/if.h>
#include <netpacket/packet.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "core/wire.h"

/* One class a line, by hand: clang-format reflows such lists differently on
 * each pass. */
// clang-format off
#define CLASSES(X) \
	X(short) \
	X(ip_version) \
	X(ip_ihl) \
	X(ip_length) \
	X(ip_checksum) \
	X(udp_length) \
	X(unknown_opcode) \
	X(dma_length) \
	X(unknown_qp) \
	X(forged_source) \
	X(forged_ack_third) \
	X(forged_ack_inconsistent) \
	X(forged_stamp) \
	X(ttl) \
	X(no_route)
// clang-format on
#define CLASS_ENUM(n) C_##n,
#define CLASS_NAME(n) #n,
enum { CLASSES(CLASS_ENUM) NCLASSES };
static const char *const names[] = {CLASSES(CLASS_NAME)};

#define BURST 64 /* frames; an eighth of the switch's receive queue */

static uint32_t src, dst, other;

static void base(struct pkt *p, uint8_t op, uint32_t from, uint32_t dqpn, uint32_t psn)
{
	static const uint8_t mac_s[6] = {2, 0, 0, 0, 0, 0x99}, mac_d[6] = {2, 0, 0, 0, 0, 0x98};

	memset(p, 0, sizeof(*p));
	memcpy(p->src_mac, mac_s, 6);
	memcpy(p->dst_mac, mac_d, 6);
	p->src_ip = from;
	p->dst_ip = dst;
	p->ttl = WIRE_TTL;
	p->sport = 0xC000;
	p->dport = WIRE_ROCE_PORT;
	p->dscp = 2;
	p->ecn = WIRE_ECN_ECT0;
	p->opcode = op;
	p->dqpn = dqpn;
	p->psn = psn;
}

static void write_only(struct pkt *p, uint32_t from, uint32_t dqpn)
{
	base(p, WIRE_OP_WRITE_ONLY, from, dqpn, 0);
	p->flags = WIRE_BTH_C;
	p->msn = 1;
	p->va = wire_va(1, 0);
}

static void sack(struct pkt *p, uint32_t from, uint32_t dqpn, uint32_t cack, uint32_t rqpn)
{
	base(p, WIRE_OP_SACK, from, dqpn, cack);
	p->dscp = 17;
	p->ecn = WIRE_ECN_NOT_ECT;
	p->u.sack.seth = (struct wire_seth){.ack_psn_offset = 1,
					    .entropy_echo = 0xC000,
					    .responder_qpn = rqpn,
					    .cack_psn = cack,
					    .cc_type = 1};
}

static void ip_checksum(uint8_t *f)
{
	f[24] = f[25] = 0;
	uint16_t c = wire_ipv4_csum(f + 14);
	f[24] = (uint8_t)(c >> 8);
	f[25] = (uint8_t)c;
}

/* Frame i of class k into f; returns its length. */
static size_t frame(int k, uint64_t i, uint8_t *f)
{
	struct pkt p;
	size_t n;

	write_only(&p, src, 0x300 + (uint32_t)(i & 0xFF));
	switch (k) {
	case C_unknown_qp: /* an ACK to a QP that names nothing */
		base(&p, WIRE_OP_ACK, src, 0x7FFF00 + (uint32_t)(i & 0xFF), 5);
		p.u.aeth.syndrome = WIRE_AETH_ACK;
		break;
	case C_forged_source: /* a one-packet message from a new address each */
		write_only(&p, 0x0B000000u + (uint32_t)(i % 0xFFFFFF), 0x300);
		break;
	case C_forged_ack_third: /* the real QPs, from a third address */
		sack(&p, src, 0x100 + (uint32_t)(i & 0xF), WIRE_PSN_MASK, 0x777);
		break;
	case C_forged_ack_inconsistent: /* from the peer, PSNs never sent */
		sack(&p, other, 0x100 + (uint32_t)(i & 0xF), 0x7FFF00, 0x777);
		break;
	case C_ttl:
		p.ttl = 1;
		break;
	case C_no_route:
		p.dst_ip = 0x0A0A0A0A;
		break;
	default:
		break;
	}
	n = wire_build(&p, f, WIRE_MAX_FRAME);
	switch (k) {
	case C_short:
		n = 14 + i % 40;
		break;
	case C_ip_version:
		f[14] = 0x65;
		ip_checksum(f);
		break;
	case C_ip_ihl:
		f[14] = 0x44;
		ip_checksum(f);
		break;
	case C_ip_length:
		f[17] += 7;
		ip_checksum(f);
		break;
	case C_ip_checksum:
		f[24] ^= 0x5A;
		break;
	case C_udp_length:
		f[39] += 3;
		break;
	case C_unknown_opcode:
		f[42] = i & 1 ? WIRE_OP_WRITE_ONLY_IMM : 0x3F;
		break;
	case C_dma_length: /* RETH DMA length: a one-packet message that is longer */
		f[42 + WIRE_BTH_LEN + WIRE_METH_LEN + 15] = 9;
		break;
	case C_forged_stamp: /* a virtual-arrival trailer nobody asked for */
		wire_trailer_put(f + n, i & 1 ? 0 : ~0ULL >> 1, (uint32_t)i);
		n += WIRE_TRAILER_LEN;
		break;
	}
	return n;
}

int main(int argc, char **argv)
{
	uint8_t f[WIRE_MAX_FRAME + 64];
	uint64_t sent[NCLASSES] = {0}, count;
	struct sockaddr_ll sll = {.sll_family = AF_PACKET, .sll_halen = 6};
	int fd, only = -1;
	struct in_addr a;

	if (argc < 6 || argc > 7) {
		fprintf(stderr,
			"usage: mrc-hostile IFACE SRC_IP NIC_IP OTHER_NIC_IP COUNT [CLASS]\n");
		return 2;
	}
	if (!inet_aton(argv[2], &a) || !(src = ntohl(a.s_addr)) || !inet_aton(argv[3], &a) ||
	    !(dst = ntohl(a.s_addr)) || !inet_aton(argv[4], &a) || !(other = ntohl(a.s_addr))) {
		fprintf(stderr, "mrc-hostile: bad address\n");
		return 2;
	}
	count = strtoull(argv[5], NULL, 10);
	for (int k = 0; argc == 7 && k < NCLASSES; k++)
		only = strcmp(argv[6], names[k]) ? only : k;
	if (argc == 7 && only < 0) {
		fprintf(stderr, "mrc-hostile: unknown class '%s'\n", argv[6]);
		return 2;
	}
	sll.sll_ifindex = (int)if_nametoindex(argv[1]);
	fd = socket(AF_PACKET, SOCK_RAW, 0);
	if (!sll.sll_ifindex || fd < 0) {
		perror("mrc-hostile");
		return 1;
	}
	for (uint64_t i = 0; i < count; i++) {
		int k = only >= 0 ? only : (int)(i % NCLASSES);
		/* Bursts of BURST frames, then a pause: the test is about what
		 * each frame holds, and an unpaced flood overflows the switch's
		 * receive queue (the kernel drops, uncounted by the daemon), so
		 * how many forged sources reach a NIC would vary from run to
		 * run. */
		if (i && i % BURST == 0)
			nanosleep(&(struct timespec){0, 1000000}, NULL);
		size_t n = frame(k, i / NCLASSES, f);
		if (sendto(fd, f, n, 0, (struct sockaddr *)&sll, sizeof(sll)) < 0) {
			perror("mrc-hostile: sendto");
			return 1;
		}
		sent[k]++;
	}
	for (int k = 0; k < NCLASSES; k++)
		if (sent[k])
			printf("%s %llu\n", names[k], (unsigned long long)sent[k]);
	return 0;
}
