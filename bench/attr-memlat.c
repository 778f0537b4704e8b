/* attr-memlat: the memory floor under attr-bench's large-index lookups.  Over a table of
 * SIZE MiB (default 128) in 2 MiB-aligned memory, with or without MADV_HUGEPAGE: the
 * latency of one dependent random load (pointer chasing), and the time for batches of
 * 1..32 independent random loads (how many misses a lookup can have in flight).
 * Per CPU-second of this thread.  Not part of 'make check'. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

static double cpu_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static uint64_t rng = 88172645463325252ULL;
static uint64_t rnd(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

int main(int argc, char *argv[])
{
	const size_t huge = 2u << 20;
	size_t mib = argc > 1 ? strtoull(argv[1], NULL, 10) : 128, size = mib << 20, lines;
	int use_huge = argc > 2 ? atoi(argv[2]) : 1;
	uint8_t *raw, *m;
	uint32_t *perm;
	uint64_t x = 0, sum = 0;
	double t0, t1;
	const int n = 2000000;

	if (argc > 1 && (mib == 0 || mib > 65536)) {
		fprintf(stderr, "Usage: attr-memlat [SIZE-MiB [HUGE 0|1]]\n");
		return 2;
	}
	raw = mmap(NULL, size + huge, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (raw == MAP_FAILED)
		return 1;
	m = (uint8_t *)(((uintptr_t)raw + huge - 1) & ~(uintptr_t)(huge - 1));
	madvise(m, size, use_huge ? MADV_HUGEPAGE : MADV_NOHUGEPAGE);
	memset(m, 1, size);
	lines = size / 64;
	perm = malloc(lines * sizeof(*perm));
	if (!perm)
		return 1;
	for (size_t i = 0; i < lines; i++)
		perm[i] = (uint32_t)i;
	for (size_t i = lines - 1; i > 0; i--) {
		size_t j = rnd() % (i + 1);
		uint32_t t = perm[i];
		perm[i] = perm[j];
		perm[j] = t;
	}
	/* one cycle through every line in random order */
	for (size_t i = 0; i < lines; i++)
		*(uint64_t *)(m + (size_t)perm[i] * 64) = (uint64_t)perm[(i + 1) % lines] * 64;
	free(perm);
	t0 = cpu_s();
	for (int i = 0; i < n; i++)
		x = *(volatile uint64_t *)(m + x);
	t1 = cpu_s();
	printf("%zu MiB, %s pages: dependent random load %.1f ns\n", mib,
	       use_huge ? "huge (advised)" : "4 KiB", (t1 - t0) / n * 1e9);
	for (int k = 1; k <= 32; k *= 2) {
		const int rounds = 200000;

		t0 = cpu_s();
		for (int r = 0; r < rounds; r++) {
			uint64_t a[32];

			for (int j = 0; j < k; j++) {
				a[j] = (rnd() % lines) * 64;
				__builtin_prefetch(m + a[j]);
			}
			for (int j = 0; j < k; j++)
				sum += *(volatile uint64_t *)(m + a[j]);
		}
		t1 = cpu_s();
		printf("  %2d independent random loads: %6.1f ns a batch\n", k,
		       (t1 - t0) / rounds * 1e9);
	}
	return (int)(sum & x & 0);
}
