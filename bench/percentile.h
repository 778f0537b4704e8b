/* Exact latency percentiles for the benchmarks (idmapd-load, unix-floor): every sample is
 * kept, sorted once, and read at the wanted rank.  Header-only. */
#pragma once

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

static int percentile_cmp(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* Sort samples[0..n) in place, for percentile(). */
static inline void percentile_sort(uint64_t *samples, size_t n)
{
	qsort(samples, n, sizeof(*samples), percentile_cmp);
}

/* The pct-th percentile (0-100) of n sorted samples; 0 when there are none. */
static inline uint64_t percentile(const uint64_t *sorted, size_t n, unsigned pct)
{
	size_t i = n * pct / 100;

	return n == 0 ? 0 : sorted[i < n ? i : n - 1];
}
