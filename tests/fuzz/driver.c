/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * driver.c -- run a libFuzzer harness without libFuzzer, for make check
 *
 * Feeds every seed file named on the command line to the harness, then
 * a bounded number of mutations of each (bit flips, byte changes,
 * truncations, insertions, splices), from a fixed PRNG seed so a failure
 * repeats.  A harness reports a bug by crashing or aborting; the
 * sanitizers of an --enable-sanitizers build catch the rest.  For deep,
 * open-ended fuzzing build the harness with clang -fsanitize=fuzzer.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define INPUT_MAX 8192
#define SEEDS_MAX 200	/* libfuzzer.sh --merge keeps each corpus below */

static uint64_t Rng = 0x2545f4914f6cdd1dULL;

/* rnd -- xorshift64* */
static uint64_t
rnd(void)
{
	Rng ^= Rng >> 12;
	Rng ^= Rng << 25;
	Rng ^= Rng >> 27;
	return Rng * 0x2545f4914f6cdd1dULL;
}

/* slurp -- read a seed file, at most INPUT_MAX bytes */
static size_t
slurp(const char *path, uint8_t *buf)
{
	FILE *f = fopen(path, "rb");
	if (!f) {
		fprintf(stderr, "%s: %s\n", path, strerror(errno));
		exit(2);
	}
	size_t n = fread(buf, 1, INPUT_MAX, f);
	fclose(f);
	return n;
}

/* mutate -- change `in` a little, into `out`; returns the new size */
static size_t
mutate(const uint8_t *in, size_t n, uint8_t *out,
		const uint8_t *other, size_t on)
{
	memcpy(out, in, n);
	unsigned steps = 1 + (unsigned)(rnd() % 4);
	for (unsigned s = 0; s < steps; s++) {
		size_t at = n ? (size_t)(rnd() % n) : 0;
		switch (rnd() % 6) {
		case 0:		/* flip a bit */
			if (n)
				out[at] ^= (uint8_t)(1U << (rnd() % 8));
			break;
		case 1:		/* an interesting byte */
			if (n) {
				static const uint8_t v[] = { 0, 1, 0x7f,
					0x80, 0xff, '\n', ' ', '#', '@', ':',
					'[', ']', '/', '.' };
				out[at] = v[rnd() % sizeof(v)];
			}
			break;
		case 2:		/* truncate */
			n = at;
			break;
		case 3:		/* insert a random byte */
			if (n < INPUT_MAX) {
				memmove(out + at + 1, out + at, n - at);
				out[at] = (uint8_t)rnd();
				n++;
			}
			break;
		case 4:		/* delete a byte */
			if (n) {
				memmove(out + at, out + at + 1, n - at - 1);
				n--;
			}
			break;
		default:	/* splice the tail of another seed */
			if (on) {
				size_t from = (size_t)(rnd() % on);
				size_t len = on - from;
				if (at + len > INPUT_MAX)
					len = INPUT_MAX - at;
				memcpy(out + at, other + from, len);
				n = at + len;
			}
			break;
		}
	}
	return n;
}

int
main(int argc, char *argv[])
{
	unsigned long rounds = 20000;
	int first = 1;
	if (argc > 2 && strcmp(argv[1], "-n") == 0) {
		rounds = strtoul(argv[2], NULL, 10);
		first = 3;
	}
	if (first >= argc) {
		fprintf(stderr, "usage: %s [-n ROUNDS] SEED...\n", argv[0]);
		return 2;
	}
	if (argc - first > SEEDS_MAX) {
		fprintf(stderr, "%d seeds: at most %d\n", argc - first,
			SEEDS_MAX);
		return 2;
	}
	static uint8_t seeds[SEEDS_MAX][INPUT_MAX];
	size_t len[SEEDS_MAX];
	int nseeds = 0;
	for (int i = first; i < argc; i++, nseeds++) {
		len[nseeds] = slurp(argv[i], seeds[nseeds]);
		LLVMFuzzerTestOneInput(seeds[nseeds], len[nseeds]);
	}
	static uint8_t buf[INPUT_MAX];
	for (unsigned long r = 0; r < rounds; r++) {
		int s = (int)(rnd() % (uint64_t)nseeds);
		int o = (int)(rnd() % (uint64_t)nseeds);
		size_t n = mutate(seeds[s], len[s], buf, seeds[o], len[o]);
		/* a copy of exactly n bytes, so overreads hit the redzone */
		uint8_t *in = malloc(n ? n : 1);
		if (!in)
			return 2;
		memcpy(in, buf, n);
		LLVMFuzzerTestOneInput(in, n);
		free(in);
	}
	printf("%d seed(s), %lu mutation(s): no crash\n", nseeds, rounds);
	return 0;
}
