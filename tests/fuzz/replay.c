/* tests/fuzz/replay.c — a harness's main() without a fuzzer: runs every
 * input file named (files, or folders of them), then, with --mutate N,
 * N mutations of each made by a fixed pseudo-random sequence (bytes
 * changed, inserted and removed, cut short, spliced with another input),
 * so that `make test` runs the corpus and a few thousand variants on every
 * machine, and a crash found by a fuzzer stays a regression test once its
 * input is added to tests/fuzz/corpus/.
 *
 *   fuzz-codec-replay [--mutate N] PATH...
 */
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define REPLAY_MAX_BYTES  (64 * 1024)
#define REPLAY_MAX_INPUTS 4096

static uint8_t *inputs[REPLAY_MAX_INPUTS];
static size_t sizes[REPLAY_MAX_INPUTS], ninputs;
static uint64_t rng = 0x9E3779B97F4A7C15ULL;

static uint64_t next(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

static void add_file(const char *path)
{
	FILE *f = fopen(path, "rb");
	uint8_t *b = malloc(REPLAY_MAX_BYTES);
	size_t n;

	if (!f || !b || ninputs == REPLAY_MAX_INPUTS) {
		fprintf(stderr, "replay: %s: cannot read\n", path);
		exit(2);
	}
	n = fread(b, 1, REPLAY_MAX_BYTES, f);
	fclose(f);
	inputs[ninputs] = b;
	sizes[ninputs++] = n;
}

static void add_path(const char *path)
{
	struct stat st;
	DIR *d;

	if (stat(path, &st) || !S_ISDIR(st.st_mode)) {
		add_file(path);
		return;
	}
	if (!(d = opendir(path)))
		return;
	for (struct dirent *e; (e = readdir(d));) {
		char sub[4096];
		if (e->d_name[0] == '.')
			continue;
		snprintf(sub, sizeof(sub), "%s/%s", path, e->d_name);
		add_path(sub);
	}
	closedir(d);
}

/* One mutation of input i into buf; returns its length. */
static size_t mutate(size_t i, uint8_t *buf)
{
	size_t n = sizes[i];

	memcpy(buf, inputs[i], n);
	for (unsigned k = 0, m = 1 + (unsigned)(next() % 6); k < m; k++) {
		size_t at = n ? (size_t)(next() % n) : 0;
		switch (next() % 6) {
		case 0:
		case 1: /* a byte changed */
			if (n)
				buf[at] = (uint8_t)next();
			break;
		case 2: /* a bit flipped */
			if (n)
				buf[at] ^= (uint8_t)(1u << (next() % 8));
			break;
		case 3: /* cut short */
			n = at;
			break;
		case 4: /* a byte inserted */
			if (n < REPLAY_MAX_BYTES) {
				memmove(buf + at + 1, buf + at, n - at);
				buf[at] = (uint8_t)next();
				n++;
			}
			break;
		case 5: { /* the tail of another input */
			size_t j = (size_t)(next() % ninputs),
			       from = sizes[j] ? next() % sizes[j] : 0;
			size_t take = sizes[j] - from;
			if (at + take > REPLAY_MAX_BYTES)
				take = REPLAY_MAX_BYTES - at;
			memcpy(buf + at, inputs[j] + from, take);
			n = at + take;
			break;
		}
		}
	}
	return n;
}

int main(int argc, char **argv)
{
	static uint8_t buf[REPLAY_MAX_BYTES];
	unsigned long mutations = 0;
	int a = 1;

	if (a + 1 < argc && !strcmp(argv[a], "--mutate")) {
		mutations = strtoul(argv[a + 1], NULL, 10);
		a += 2;
	}
	for (; a < argc; a++)
		add_path(argv[a]);
	if (!ninputs) {
		fprintf(stderr, "usage: %s [--mutate N] PATH...\n", argv[0]);
		return 2;
	}
	for (size_t i = 0; i < ninputs; i++)
		LLVMFuzzerTestOneInput(inputs[i], sizes[i]);
	for (unsigned long k = 0; k < mutations; k++) {
		size_t i = (size_t)(next() % ninputs), n = mutate(i, buf);
		LLVMFuzzerTestOneInput(buf, n);
	}
	printf("ok %s %zu inputs, %lu mutations\n", argv[0], ninputs, mutations);
	for (size_t i = 0; i < ninputs; i++)
		free(inputs[i]);
	return 0;
}
