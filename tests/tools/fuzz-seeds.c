/* tests/tools/fuzz-seeds.c — the fuzzers' seed corpus from the frames of
 * docs/vectors.md (tests/lib/vectors.c), built by the real codec:
 *
 *   fuzz-seeds DIR
 *
 * writes DIR/codec/vec-N (each frame alone) and DIR/engine/vec-N-T (the
 * frame from a third address, 10.0.0.9, to engine T of fuzz_engine's
 * format) and DIR/engine/all (every frame to every engine, 100 ns apart). */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "../lib/vectors.h"
#include "core/wire.h"

static int put(const char *dir, const char *name, const uint8_t *b, size_t n)
{
	char path[4200];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	if (!(f = fopen(path, "wb")) || fwrite(b, 1, n, f) != n || fclose(f)) {
		fprintf(stderr, "fuzz-seeds: %s: %s\n", path, strerror(errno));
		return 1;
	}
	return 0;
}

/* One record of fuzz_engine's input: target, gap, length, frame. */
static size_t record(uint8_t *out, int target, const uint8_t *f, size_t n)
{
	out[0] = (uint8_t)target;
	out[1] = 2; /* 100 ns */
	out[2] = (uint8_t)(n >> 8);
	out[3] = (uint8_t)n;
	memcpy(out + 4, f, n);
	return n + 4;
}

int main(int argc, char **argv)
{
	static uint8_t all[64 * 1024];
	char codec[4096], engine[4096], name[64];
	size_t nall = 0;
	int rc = 0;

	if (argc != 2) {
		fprintf(stderr, "usage: fuzz-seeds DIR\n");
		return 2;
	}
	snprintf(codec, sizeof(codec), "%s/codec", argv[1]);
	snprintf(engine, sizeof(engine), "%s/engine", argv[1]);
	mkdir(argv[1], 0755);
	mkdir(codec, 0755);
	mkdir(engine, 0755);
	for (int v = 1; v <= 8; v++) {
		uint8_t f[WIRE_MAX_FRAME], r[WIRE_MAX_FRAME + 4];
		struct pkt p;
		size_t n;

		vectors_pkt(v, &p);
		n = wire_build(&p, f, sizeof(f));
		snprintf(name, sizeof(name), "vec-%d", v);
		rc |= put(codec, name, f, n);
		p.src_ip = 0x0A000009; /* a third address: see fuzz_engine.c */
		n = wire_build(&p, f, sizeof(f));
		for (int t = 0; t < 4; t++) {
			snprintf(name, sizeof(name), "vec-%d-%d", v, t);
			rc |= put(engine, name, r, record(r, t, f, n));
			if (nall + n + 4 <= sizeof(all))
				nall += record(all + nall, t, f, n);
		}
	}
	rc |= put(engine, "all", all, nall);
	return rc;
}
