/* tests/fuzz/fuzz_codec.c — the wire codec under a fuzzer (libFuzzer,
 * AFL++ or the replay driver, see tests/fuzz/README.md): any bytes are a
 * frame to wire_parse, with and without the ICRC (docs/protocol.md §2: every
 * frame is parsed with full bounds checks).  A frame it accepts must come
 * back the same through wire_build: the built frame parses, and building
 * that again gives the same bytes.  And a switch's hop forwarded from any
 * frame it accepts (wire_forward) parses again, with the hop's fields,
 * and from a frame wire_build made is what wire_build makes of the hop. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/wire.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void round_trip(const uint8_t *data, size_t size, bool icrc)
{
	static uint8_t b1[WIRE_MAX_FRAME + 64], b2[WIRE_MAX_FRAME + 64];
	struct pkt p, q;
	size_t n1, n2;

	if (wire_parse(data, size, icrc, &p) != WIRE_OK)
		return;
	n1 = wire_build(&p, b1, sizeof(b1));
	if (!n1)
		return; /* a frame it accepts but will not send (no room) */
	if (wire_parse(b1, n1, icrc, &q) != WIRE_OK) {
		fprintf(stderr, "fuzz_codec: a built frame does not parse\n");
		abort();
	}
	n2 = wire_build(&q, b2, sizeof(b2));
	if (n2 != n1 || memcmp(b1, b2, n1)) {
		fprintf(stderr, "fuzz_codec: build(parse(build(x))) != build(x)\n");
		abort();
	}
}

/* A hop as a switch makes one (docs/protocol.md §9). */
static void hop(struct pkt *p)
{
	static const uint8_t macs[12] = {2, 0, 0, 0, 0, 7, 2, 0, 0, 0, 0, 6};

	memcpy(p, macs, sizeof macs);
	p->ttl = p->ttl > 1 ? p->ttl - 1 : 1;
	p->ecn = WIRE_ECN_CE;
	p->dscp ^= 0x15;
}

static void forward(const uint8_t *data, size_t size, bool icrc)
{
	static uint8_t built[WIRE_MAX_FRAME + 64], out[WIRE_MAX_FRAME + 64],
	    want[WIRE_MAX_FRAME + 64];
	struct pkt p, q;
	size_t n, m;

	if (wire_parse(data, size, icrc, &p) != WIRE_OK)
		return;
	hop(&p);
	n = wire_forward(&p, data, out, sizeof(out));
	if (p.trimmed != !n) {
		fprintf(stderr, "fuzz_codec: wire_forward refused an untrimmed frame\n");
		abort();
	}
	if (n && (wire_parse(out, n, icrc, &q) != WIRE_OK || q.ttl != p.ttl || q.ecn != p.ecn ||
		  q.dscp != p.dscp || memcmp(&q, &p, 12))) {
		fprintf(stderr, "fuzz_codec: a forwarded frame lost the hop\n");
		abort();
	}
	/* from a frame wire_build made: the same bytes as wire_build's */
	if (wire_parse(data, size, icrc, &p) != WIRE_OK ||
	    !(m = wire_build(&p, built, sizeof(built))) ||
	    wire_parse(built, m, icrc, &p) != WIRE_OK)
		return;
	hop(&p);
	n = wire_forward(&p, built, out, sizeof(out));
	m = wire_build(&p, want, sizeof(want));
	if (n && (n != m || memcmp(out, want, n))) {
		fprintf(stderr, "fuzz_codec: forward(build(x)) != build(hop(x))\n");
		abort();
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	forward(data, size, false);
	forward(data, size, true);
	round_trip(data, size, false);
	round_trip(data, size, true);
	return 0;
}
