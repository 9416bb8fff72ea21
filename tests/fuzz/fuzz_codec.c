/* tests/fuzz/fuzz_codec.c — the wire codec under a fuzzer (libFuzzer,
 * AFL++ or the replay driver, see tests/fuzz/README.md): any bytes are a
 * frame to wire_parse, with and without the ICRC (docs/protocol.md §2: every
 * frame is parsed with full bounds checks).  A frame it accepts must come
 * back the same through wire_build: the built frame parses, and building
 * that again gives the same bytes. */
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

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	round_trip(data, size, false);
	round_trip(data, size, true);
	return 0;
}
