/* emulator/core/wire.h — every MRC frame of docs/protocol.md §1: parse, build, sizes,
 * checksums, the payload pattern, the optional ICRC and the virtual-arrival
 * trailer (docs/architecture.md, Stamped frames).
 *
 * Engines work on struct pkt, the parsed form of a frame.  wire_build()
 * turns one into bytes exactly as docs/vectors.md shows them (no FCS: captured
 * frames and Linux interfaces carry none); wire_parse() checks every length
 * and field before filling one, and names the reason for each rejection
 * (docs/protocol.md §2).  Sizes "on the wire" include the 4-byte FCS. */
#ifndef EMULATOR_WIRE_H
#define EMULATOR_WIRE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "time.h"

/* Header sizes, docs/protocol.md §1. */
#define WIRE_ETH_LEN	 14
#define WIRE_FCS_LEN	 4
#define WIRE_IPV4_LEN	 20
#define WIRE_UDP_LEN	 8
#define WIRE_BTH_LEN	 12
#define WIRE_METH_LEN	 4
#define WIRE_TSETH_LEN	 4
#define WIRE_RETH_LEN	 16
#define WIRE_AETH_LEN	 4
#define WIRE_SETH_LEN	 28
#define WIRE_CCSTATE_LEN 8
#define WIRE_NETH_LEN	 20
#define WIRE_PETH_LEN	 16
#define WIRE_ICRC_LEN	 4
#define WIRE_TRAILER_LEN 12

/* Ethernet + FCS around the IP datagram: wire size = nominal + 18. */
#define WIRE_FRAMING (WIRE_ETH_LEN + WIRE_FCS_LEN)
/* No frame an engine builds is shorter on the wire than its headers up to
 * the BTH: the minimum frame of a daemon's lookahead (docs/promises.md). */
#define WIRE_MIN_LEN (WIRE_FRAMING + WIRE_IPV4_LEN + WIRE_UDP_LEN + WIRE_BTH_LEN)
/* IP datagram of a data packet without payload or TSETH: 60 bytes, so a
 * data packet is payload + 78 on the wire (seed, Segmentation). */
#define WIRE_DATA_OVERHEAD                                                                         \
	(WIRE_IPV4_LEN + WIRE_UDP_LEN + WIRE_BTH_LEN + WIRE_METH_LEN + WIRE_RETH_LEN)

#define WIRE_ROCE_PORT	  4791
#define WIRE_TTL	  64
#define WIRE_PKEY	  0xFFFF
#define WIRE_ENDPOINT_QPN 2 /* probes go to this reserved QP */
#define WIRE_PSN_MASK	  0xFFFFFFu
#define WIRE_QPN_MASK	  0xFFFFFFu
#define WIRE_MAX_FRAME	  9216 /* largest frame we build or accept */

/* Opcodes: the MRC range, docs/protocol.md §1. */
enum wire_opcode {
	WIRE_OP_WRITE_FIRST = 0xC6,
	WIRE_OP_WRITE_MIDDLE = 0xC7,
	WIRE_OP_WRITE_LAST = 0xC8,
	WIRE_OP_WRITE_LAST_IMM = 0xC9, /* exists in MRC, never sent, dropped */
	WIRE_OP_WRITE_ONLY = 0xCA,
	WIRE_OP_WRITE_ONLY_IMM = 0xCB, /* exists in MRC, never sent, dropped */
	WIRE_OP_ACK = 0xD1,
	WIRE_OP_SACK = 0xDC,
	WIRE_OP_NACK = 0xDD,
	WIRE_OP_PROBE = 0xDE,
};

/* BTH byte 8 flags (docs/protocol.md §1). */
#define WIRE_BTH_A   0x80 /* ACK-request */
#define WIRE_BTH_C   0x40 /* DestQP is the sender's QP number */
#define WIRE_BTH_RTX 0x20 /* retransmission */
#define WIRE_BTH_TS  0x10 /* a TSETH follows the METH */

/* IPv4 ECN field. */
#define WIRE_ECN_NOT_ECT 0
#define WIRE_ECN_ECT1	 1
#define WIRE_ECN_ECT0	 2
#define WIRE_ECN_CE	 3

/* AETH syndrome of a cumulative ACK. */
#define WIRE_AETH_ACK 0x1F

/* SETH path feedback M (bits 6..5 of byte 1). */
enum wire_sack_m {
	WIRE_M_NONE = 0,
	WIRE_M_SKIP_ONCE = 1,	/* the packet that drew it was CE-marked */
	WIRE_M_ALWAYS_SKIP = 2, /* assumed bad */
};

/* NACK codes (docs/protocol.md §1, UET's numbering). */
enum wire_nack_code {
	WIRE_NACK_TRIMMED = 0x01,
	WIRE_NACK_TRIMMED_LASTHOP = 0x02,
	WIRE_NACK_PSN_OOR_WINDOW = 0x0B,
};

/* What kind of frame a pkt is. */
enum wire_kind {
	WIRE_KIND_DATA, /* Write First/Middle/Last/Only, possibly trimmed */
	WIRE_KIND_ACK,	/* cumulative ACK */
	WIRE_KIND_SACK,
	WIRE_KIND_NACK,
	WIRE_KIND_PROBE,
};

/* Reasons a frame is rejected; the names are the rx_drop_<reason> counters
 * (docs/records.md). */
enum wire_error {
	WIRE_OK = 0,
	WIRE_SHORT,	     /* fewer bytes than the headers need */
	WIRE_NOT_IPV4,	     /* ethertype is not 0x0800 */
	WIRE_BAD_IP_VERSION, /* version != 4 or IHL != 5 */
	WIRE_BAD_IP_LENGTH,  /* total length beyond the frame or below 28 */
	WIRE_BAD_IP_CSUM,
	WIRE_NOT_UDP,
	WIRE_FRAGMENT,	 /* MF set or fragment offset != 0 */
	WIRE_UDP_LENGTH, /* UDP length disagrees with the IP length */
	WIRE_NOT_ROCE,	 /* destination port is not 4791 */
	WIRE_UNKNOWN_OPCODE,
	WIRE_UNSUPPORTED_OPCODE, /* Write with Immediate: exists, never sent */
	WIRE_BAD_LENGTH,	 /* the BTH payload has the wrong size for its opcode */
	WIRE_BAD_DMA_LENGTH,	 /* RETH DMA length contradicts the segment */
	WIRE_BAD_ICRC,
	WIRE_BAD_PKEY,
	WIRE_ERROR_COUNT
};

const char *wire_error_name(enum wire_error e); /* "short", "bad_ip_csum", ... */
const char *wire_opcode_name(uint8_t opcode);	/* "WRITE_FIRST", "SACK", ... */

struct wire_aeth {
	uint8_t syndrome; /* 0x1F */
	uint32_t msn;	  /* 24 bits: messages completed in order on the QP */
};

struct wire_seth {
	uint8_t m;		/* enum wire_sack_m */
	bool pr;		/* answers a probe */
	int16_t ack_psn_offset; /* drawn-by PSN = cack_psn + offset; probe id */
	uint32_t entropy_echo;	/* UDP source port of the packet that drew it */
	uint32_t responder_qpn; /* 24 bits */
	uint32_t cack_psn;	/* 24 bits */
	uint8_t cc_type;	/* 4 bits, 1 = NSCC */
	uint8_t cc_flags;	/* 4 bits, 0 */
	uint8_t mpr;		/* MaxPSNRange / 128 */
	int16_t sack_offset;	/* bitmap base = cack_psn + sack_offset */
	uint64_t bitmap;	/* bit i = PSN base + i is held */
};

struct wire_ccstate {
	uint16_t ts_echo;      /* echoed TSETH time, 128 ns units */
	uint16_t service_time; /* 128 ns units */
	uint8_t restore_pen;   /* restore_cwnd (1) | rcv_cwnd_pen (7) */
	uint32_t rcv_bytes;    /* 24 bits, 256-byte units */
};

struct wire_neth {
	uint8_t code; /* enum wire_nack_code */
	uint32_t entropy_echo;
	uint32_t responder_qpn; /* 24 bits */
	uint32_t nack_psn;	/* 24 bits */
	uint8_t cc;		/* cc_type (4) | cc_flags (4) */
	uint16_t ts_echo;
};

struct wire_peth {
	uint16_t probe_id;
	uint32_t prober; /* the prober's IPv4 address */
	uint16_t ts;	 /* 128 ns units */
};

/* A parsed frame.  Header fields are host order.  Fields under "metadata"
 * never travel on the wire: the simulation carries them, a daemon fills
 * what it can.
 *
 * The first 64 bytes hold all that a switch hop and a frame's wire length
 * read (addresses, ports, DSCP, TTL, opcode, flags, trimmed, ICRC, payload
 * length) and the pool's link; the pool puts each packet on a cache-line
 * boundary (PKT_SIZE), so a hop touches one line of it (issue 16: by the
 * next hop a fabric's packet is out of the cache). */
struct pkt {
	/* Ethernet */
	uint8_t dst_mac[6];
	uint8_t src_mac[6];
	/* IPv4 */
	uint32_t src_ip;
	uint32_t dst_ip;
	uint8_t dscp; /* 6 bits */
	uint8_t ecn;  /* 2 bits */
	uint8_t ttl;
	/* BTH */
	uint8_t opcode;
	/* IPv4 */
	uint16_t ip_id;
	/* UDP */
	uint16_t sport; /* the entropy value */
	uint16_t dport; /* 4791 */
	/* BTH */
	uint8_t flags; /* WIRE_BTH_A | C | RTX | TS */
	bool fecn, becn;
	bool trimmed;  /* data opcode with no RETH or payload: cut by a switch */
	bool icrc;     /* metadata: the frame carries (or is to carry) a RoCEv2 ICRC */
	uint32_t dqpn; /* 24 bits */
	uint32_t psn;  /* 24 bits */
	/* Payload of a data packet (its bytes: `payload` below). */
	uint32_t payload_len;
	/* METH (data) */
	uint16_t rqmsn;
	uint16_t msn;
	/* TSETH (data with WIRE_BTH_TS) */
	uint16_t tseth_time; /* 128 ns units; format type is always 1 */
	/* metadata: the frame's length on the wire (wire_len), set by the NIC
	 * that sends it and by a switch that trims it, so that each hop,
	 * which reads this cache line anyway, need not compute it (the
	 * engines' *_receive_sent) */
	uint16_t sent_len;
	struct pkt *next; /* metadata: free list and queue link */

	/* RETH (data, absent when trimmed) */
	uint64_t va;
	uint32_t rkey;
	uint32_t dma_len;
	/* payload may be NULL: the bytes are then the pattern of
	 * docs/protocol.md §1 for (src_ip, msn, va offset), built on demand
	 * (the simulation carries payloads as descriptors). */
	const uint8_t *payload;
	union {
		struct wire_aeth aeth;
		struct {
			struct wire_seth seth;
			struct wire_ccstate cc;
		} sack;
		struct wire_neth neth;
		struct wire_peth peth;
	} u;

	/* metadata */
	uint64_t msg_offset; /* byte offset of the payload in its message */
	ps_t built;	     /* when the frame was built */
	ps_t stamp;	     /* virtual arrival from a trailer, 0 if none */
	/* The bookkeeping of the engine that built the frame (the NIC's:
	 * struct nic_pkt_meta, nicd/port.h).  It never crosses a wire and
	 * no wire, link, switch or host code reads it: what those match on is
	 * above (drop rules: PSN, opcode, flags, MSN).  Zero from pkt_get.
	 * Its size makes the packet three whole cache lines. */
	_Alignas(8) unsigned char engine[32];
};
_Static_assert(WIRE_MAX_FRAME + WIRE_FCS_LEN <= UINT16_MAX, "a frame's length fits sent_len");
#define PKT_SIZE 192
_Static_assert(sizeof(struct pkt) == PKT_SIZE, "a pkt is three cache lines");

/* Kind of frame from its opcode; data includes trimmed packets.  Opcodes
 * outside the MRC range never reach a struct pkt (wire_parse refuses them
 * and wire_build builds nothing for them); they answer DATA only so that
 * the function is total.  Asked some twenty times a data packet: one load
 * from a table (wire.c) rather than a chain of compares (issue 16). */
extern const uint8_t wire_kinds[256];
static inline enum wire_kind wire_kind_of(uint8_t opcode)
{
	return (enum wire_kind)wire_kinds[opcode];
}

static inline bool wire_is_data(const struct pkt *p)
{
	return wire_kind_of(p->opcode) == WIRE_KIND_DATA;
}

/* Sizes of a frame as it would be built: the IP datagram ("nominal") and
 * the size on the wire (nominal + 18, + 4 with ICRC).  Inline: every hop
 * of every frame asks for them, a dozen times a data packet (issue 16).
 *
 * Seed, Packets on the wire: a data packet is payload + 60 nominal, + 78
 * on the wire; TSETH and the optional ICRC add 4 each (docs/protocol.md
 * §1).  A trimmed packet is IPv4 + UDP + BTH + METH (+ TSETH) only, 44
 * (48) bytes: the ICRC, at the end of the datagram, is cut with the
 * payload, and a switch does not recompute an end-to-end CRC. */
static inline uint32_t wire_nominal_len(const struct pkt *p)
{
	uint32_t n = WIRE_IPV4_LEN + WIRE_UDP_LEN + WIRE_BTH_LEN;

	switch (wire_kind_of(p->opcode)) {
	case WIRE_KIND_ACK:
		n += WIRE_AETH_LEN;
		break;
	case WIRE_KIND_SACK:
		n += WIRE_SETH_LEN + WIRE_CCSTATE_LEN;
		break;
	case WIRE_KIND_NACK:
		n += WIRE_NETH_LEN;
		break;
	case WIRE_KIND_PROBE:
		n += WIRE_PETH_LEN;
		break;
	case WIRE_KIND_DATA:
	default:
		n += WIRE_METH_LEN + (p->flags & WIRE_BTH_TS ? WIRE_TSETH_LEN : 0);
		if (p->trimmed)
			return n;
		n += WIRE_RETH_LEN + p->payload_len;
		break;
	}
	return n + (p->icrc ? WIRE_ICRC_LEN : 0);
}

static inline uint32_t wire_len(const struct pkt *p)
{
	return wire_nominal_len(p) + WIRE_FRAMING;
}

/* Bytes that wire_build writes (wire_len minus the FCS). */
static inline uint32_t wire_frame_len(const struct pkt *p)
{
	return wire_len(p) - WIRE_FCS_LEN;
}

/* Build p into buf.  Returns the frame length, or 0 if cap is too small.
 * Computes the IPv4 checksum (and the ICRC when p->icrc). */
size_t wire_build(const struct pkt *p, uint8_t *buf, size_t cap);

/* Build p from the frame it was parsed from (wire_parse), after a switch's
 * hop changed what a hop changes and nothing else: the MACs, DSCP and ECN,
 * the TTL.  The frame is copied with those fields and the IPv4 checksum
 * written over: what wire_build makes of a frame that wire_build made (a
 * daemon's, mrcemu's), and the rest of another tool's frame as it came (IP
 * flags and ID, UDP checksum, the ICRC, which leaves TOS and TTL out).  A
 * switch forwards bytes without comparing them to the pattern and making
 * them again (docs/promises.md, What a frame costs).  Returns the frame
 * length, or 0 when p was trimmed (its lengths changed: wire_build) or cap
 * is too small. */
size_t wire_forward(const struct pkt *p, const uint8_t *frame, uint8_t *buf, size_t cap);

/* Parse a frame of len bytes.  Bytes after the IP total length (Ethernet
 * padding, the trailer) are ignored.  icrc says whether the datagram ends
 * with an ICRC.  p->payload points into buf. */
enum wire_error wire_parse(const uint8_t *buf, size_t len, bool icrc, struct pkt *p);

/* Cut a data packet to IPv4 + UDP + BTH + METH (+ TSETH), as a trimming
 * switch does (docs/protocol.md §1, Trimmed packet); the DSCP is the caller's. */
void wire_trim(struct pkt *p);

/* The payload pattern: byte o of message msn from source IPv4 s is
 * (o + 13*msn + s) mod 251 (docs/protocol.md §1). */
static inline uint8_t wire_pattern_byte(uint32_t src_ip, uint16_t msn, uint64_t o)
{
	return (uint8_t)((o + 13ULL * msn + src_ip) % 251);
}
void wire_pattern_fill(uint8_t *dst, uint32_t len, uint32_t src_ip, uint16_t msn, uint64_t offset);
/* Number of bytes in buf that differ from the pattern. */
uint32_t wire_pattern_check(const uint8_t *buf, uint32_t len, uint32_t src_ip, uint16_t msn,
			    uint64_t offset);

/* The RETH virtual address of a message's byte (docs/protocol.md §1). */
#define WIRE_VA_MSG_STRIDE 0x100000000000ULL
/* The VA is 64 bits and the stride 2^44: a message index has 20 bits. */
#define WIRE_MAX_MSG_INDEX ((1ULL << 20) - 1)
/* RETH's DMA length is 32 bits: the largest message, 4 GiB - 1 byte. */
#define WIRE_MAX_MSG_BYTES 0xFFFFFFFFULL
static inline uint64_t wire_va(uint32_t msg_index, uint64_t offset)
{
	return WIRE_VA_MSG_STRIDE * msg_index + offset;
}

/* RFC 1071 checksum of the IPv4 header at hdr (20 bytes). */
uint16_t wire_ipv4_csum(const uint8_t *hdr);

/* RoCEv2 ICRC over an IP datagram (len bytes, ICRC excluded), computed as
 * Linux Soft-RoCE does: CRC32 over 8 bytes of 0xFF, the IP header with TOS,
 * TTL and checksum masked to 1s, UDP with checksum masked, the BTH with the
 * resv8a byte masked, and the rest. */
uint32_t wire_icrc(const uint8_t *ip, size_t len);

/* PSN arithmetic modulo 2^24. */
static inline uint32_t wire_psn_add(uint32_t psn, int64_t d)
{
	return (uint32_t)((int64_t)psn + d) & WIRE_PSN_MASK;
}
/* Signed distance a - b in (-2^23, 2^23]. */
static inline int32_t wire_psn_diff(uint32_t a, uint32_t b)
{
	int32_t d = (int32_t)((a - b) & WIRE_PSN_MASK);
	return d > 0x800000 ? d - 0x1000000 : d;
}

/* The 12-byte virtual-arrival trailer after the IP datagram: "MR", the
 * arrival time in ps (48 bits big-endian, docs/architecture.md, Stamped frames),
 * then the link's sequence number (32 bits big-endian), which stamped and
 * promise frames share (docs/promises.md). */
#define WIRE_TRAILER_MAX_PS ((1ULL << 48) - 1)
/* False, writing nothing, when arrival is past WIRE_TRAILER_MAX_PS
 * (281.47 s): a stamp is never clamped. */
bool wire_trailer_put(uint8_t *at, ps_t arrival, uint32_t seq);
/* Looks for a trailer right after the IP datagram of a frame of len bytes;
 * returns true, the stamp and the sequence only when the magic is there. */
bool wire_trailer_get(const uint8_t *frame, size_t len, ps_t *arrival, uint32_t *seq);

/* A promise frame (docs/promises.md): a minimum Ethernet frame with
 * EtherType 0x88B5 (IEEE local experimental), then "MRP1", the promise in
 * ps (64 bits big-endian: no frame with a virtual arrival below it comes on
 * this link any more), the link's sequence number (32 bits), the sender's
 * want (64 bits: it needs promises above this to go on; 0: none) and its
 * end bound (64 bits: T_end is at least this; 0: nothing known). */
#define WIRE_ETHERTYPE_PROMISE 0x88B5
#define WIRE_PROMISE_LEN       60 /* without the FCS: Ethernet's minimum */
struct wire_promise {
	ps_t promise;
	ps_t want;
	ps_t end;
	uint32_t seq;
};
/* Build one into frame (WIRE_PROMISE_LEN bytes); returns its length. */
size_t wire_promise_put(uint8_t *frame, const uint8_t dst[6], const uint8_t src[6],
			const struct wire_promise *p);
/* Whether frame is a promise frame (EtherType and magic); if so its
 * content (a frame too short for the want or the end bound reads 0). */
bool wire_promise_get(const uint8_t *frame, size_t len, struct wire_promise *p);

/* A pool of packets: no allocation per packet.  It grows
 * by slabs of slab_size packets, at most max_pkts in all (0: no limit). */
struct pkt_pool {
	struct pkt *free;
	struct pkt *carve, *carve_end; /* the newest slab's packets not yet freed */
	void **slabs;
	size_t nslabs;
	size_t slab_size;
	size_t max_pkts;
	size_t in_use;
	uint64_t refused; /* gets that found the pool exhausted */
};
bool pkt_pool_init(struct pkt_pool *pool, size_t slab_size, size_t max_pkts);
void pkt_pool_destroy(struct pkt_pool *pool);
/* A zeroed packet, or NULL when the pool is exhausted (counted). */
struct pkt *pkt_get(struct pkt_pool *pool);
void pkt_put(struct pkt_pool *pool, struct pkt *p);

#endif
