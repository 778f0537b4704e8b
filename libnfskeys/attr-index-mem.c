/* The index's tables: big ones in their own huge-page mappings, growth by doubling. */
#include <sys/mman.h>

#include "attr-index-private.h"

/* ---------------------------------------------------------------- growth */

/* Big tables (nodes, slots, labels, attributes) live in their own 2 MiB-aligned
 * mappings with MADV_HUGEPAGE given before the first touch: lookups hit them at random,
 * and with 4 KiB pages nearly every probe of a large index is also a TLB miss (a costly
 * one under virtualization).  Advice given after realloc() came too late: the pages were
 * already there, and most of a 1M-policy index stayed on 4 KiB pages.  Smaller tables use
 * malloc() (from 8 MiB on, a mapping rounded up to 2 MiB costs at most a fifth more).
 * Which one holds a table follows from its size, so no flag is kept. */
size_t aix_big_min = 4 * HUGE_SIZE;


void attr_index_set_big_min(size_t bytes)
{
	aix_big_min = bytes ? bytes : 4 * HUGE_SIZE;
}

size_t aix_big_span(size_t size)
{
	return size >= BIG_MIN ? (size + HUGE_SIZE - 1) & ~(HUGE_SIZE - 1) : size;
}

void *aix_big_map(size_t size)
{
	size_t span = aix_big_span(size);
	uint8_t *p = mmap(NULL, span + HUGE_SIZE, PROT_READ | PROT_WRITE,
			  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	uintptr_t a;

	if (p == MAP_FAILED)
		return NULL;
	a = ((uintptr_t)p + HUGE_SIZE - 1) & ~(uintptr_t)(HUGE_SIZE - 1);
	if (a > (uintptr_t)p)
		munmap(p, a - (uintptr_t)p);
	munmap((uint8_t *)a + span, (uintptr_t)p + HUGE_SIZE - a);
#ifdef MADV_HUGEPAGE
	(void)madvise((void *)a, span, MADV_HUGEPAGE);
#endif
	return (void *)a;
}

void aix_big_free(void *p, size_t size)
{
	if (!p)
		return;
	if (size >= BIG_MIN)
		munmap(p, aix_big_span(size));
	else
		free(p);
}

/* Resize a table of old bytes to size bytes (contents kept, new bytes zeroed when zero);
 * NULL (and p untouched) when out of memory. */
void *aix_big_realloc(void *p, size_t old, size_t size, bool zero)
{
	void *np;

	if (size < BIG_MIN && old < BIG_MIN) {
		np = realloc(p, size ? size : 1);
		if (np && zero && size > old)
			memset((uint8_t *)np + old, 0, size - old);
		return np;
	}
	if (size >= BIG_MIN && old >= BIG_MIN) {
		if (aix_big_span(size) == aix_big_span(old))
			return p;
		if (aix_big_span(size) < aix_big_span(old)) { /* give the tail back */
			munmap((uint8_t *)p + aix_big_span(size), aix_big_span(old) - aix_big_span(size));
			return p;
		}
	}
	np = size >= BIG_MIN ? aix_big_map(size) : (zero ? calloc(1, size) : malloc(size ? size : 1));
	if (!np)
		return NULL;
	if (p)
		memcpy(np, p, MIN(old, size));
	aix_big_free(p, old);
	return np;
}

int aix_grow(void **p, uint32_t *cap, uint32_t need, size_t elem)
{
	uint64_t ncap;
	void *np;

	if (need <= *cap)
		return 0;
	ncap = *cap ? (uint64_t)*cap * 2 : 64;
	while (ncap < need)
		ncap *= 2;
	if (ncap > UINT32_MAX)
		return -E2BIG;
	np = aix_big_realloc(*p, (size_t)*cap * elem, ncap * elem, false);
	if (!np)
		return -ENOMEM;
	*p = np;
	*cap = (uint32_t)ncap;
	return 0;
}
