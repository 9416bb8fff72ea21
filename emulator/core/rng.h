/* emulator/core/rng.h — the engines' random numbers: one generator per engine
 * (or link), seeded from the topology's seed and a name, so two runs of one
 * topology draw the same numbers (docs/architecture.md, Determinism). */
#ifndef EMULATOR_RNG_H
#define EMULATOR_RNG_H

#include <stdint.h>

struct rng {
	uint64_t s[4]; /* xoshiro256** state */
};

static inline uint64_t rng_splitmix(uint64_t *x)
{
	uint64_t z = (*x += 0x9E3779B97F4A7C15ULL);
	z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
	z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
	return z ^ (z >> 31);
}

/* Seed from the emulation seed and a name (node or link), FNV-1a mixed. */
static inline void rng_seed(struct rng *r, uint64_t seed, const char *name)
{
	uint64_t h = 0xCBF29CE484222325ULL ^ seed;
	for (const char *c = name; *c; c++)
		h = (h ^ (uint8_t)*c) * 0x100000001B3ULL;
	for (int i = 0; i < 4; i++)
		r->s[i] = rng_splitmix(&h);
}

static inline uint64_t rng_next(struct rng *r)
{
	uint64_t *s = r->s;
	uint64_t t = s[1] << 17, x = s[1] * 5;
	uint64_t result = ((x << 7) | (x >> 57)) * 9;
	s[2] ^= s[0];
	s[3] ^= s[1];
	s[1] ^= s[2];
	s[0] ^= s[3];
	s[2] ^= t;
	s[3] = (s[3] << 45) | (s[3] >> 19);
	return result;
}

/* Uniform in [0, 1). */
static inline double rng_unit(struct rng *r)
{
	return (double)(rng_next(r) >> 11) * 0x1.0p-53;
}

#endif
