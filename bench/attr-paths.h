/* The directory tree both attr benchmarks draw from (bench/attr-bench.c for time,
 * bench/attr-index-ir.c for callgrind counts): a fixed xorshift sequence, and a random
 * directory below /export at a given depth whose component L is "dL-K" with K < 4, so
 * upper levels are shared and deep ones not.  Header-only; bench/ only. */
#pragma once

#include <stdint.h>
#include <stdio.h>

#define BENCH_FANOUT 4

static uint64_t bench_rng = 0x9e3779b97f4a7c15ULL;

static inline uint32_t rnd(void)
{
	bench_rng ^= bench_rng << 13;
	bench_rng ^= bench_rng >> 7;
	bench_rng ^= bench_rng << 17;
	return (uint32_t)(bench_rng >> 11);
}

static inline void random_path(char *buf, size_t size, int depth)
{
	size_t n = (size_t)snprintf(buf, size, "/export");

	for (int l = 1; l <= depth && n < size; l++)
		n += (size_t)snprintf(buf + n, size - n, "/d%d-%u", l, rnd() % BENCH_FANOUT);
}
