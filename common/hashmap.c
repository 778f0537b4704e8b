/* The one hash table (see hashmap.h): growth, insertion and backward-shift deletion. */
#include <errno.h>
#include <stdlib.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

#include "hashmap.h"

uint64_t hashmap_random_seed(void)
{
	uint64_t s = 0;

	if (getrandom(&s, sizeof(s), GRND_NONBLOCK) != sizeof(s)) {
		struct timespec ts;

		clock_gettime(CLOCK_MONOTONIC, &ts);
		s = hashmap_hash((uint64_t)getpid() << 32 ^ (uint64_t)(uintptr_t)&s, &ts,
				 sizeof(ts));
	}
	return s;
}

static void place(struct hashmap_slot *slots, size_t mask, uint64_t hash, uintptr_t val)
{
	size_t i = hash & mask;

	while (slots[i].val)
		i = (i + 1) & mask;
	slots[i].hash = hash;
	slots[i].val = val;
}

int hashmap_reserve(struct hashmap *m, size_t n)
{
	size_t want = m->count + n, mask = m->slots ? m->mask : 15;
	struct hashmap_slot *slots;

	if (want < m->count)
		return -ENOMEM;
	while (want > (mask + 1) / 2) {
		if (mask > SIZE_MAX / 2 / sizeof(*slots))
			return -ENOMEM;
		mask = mask * 2 + 1;
	}
	if (m->slots && mask == m->mask)
		return 0;
	slots = calloc(mask + 1, sizeof(*slots));
	if (!slots)
		return -ENOMEM;
	if (m->slots)
		for (size_t i = 0; i <= m->mask; i++)
			if (m->slots[i].val)
				place(slots, mask, m->slots[i].hash, m->slots[i].val);
	free(m->slots);
	m->slots = slots;
	m->mask = mask;
	return 0;
}

int hashmap_put(struct hashmap *m, uint64_t hash, uintptr_t val)
{
	int r = hashmap_reserve(m, 1);

	if (r < 0)
		return r;
	place(m->slots, m->mask, hash, val);
	m->count++;
	return 0;
}

/* Empty slot i, then move back every later entry of the run that the hole would cut off
 * from its home slot (linear probing's deletion without tombstones). */
static void remove_at(struct hashmap *m, size_t i)
{
	size_t j = i;

	m->count--;
	for (;;) {
		m->slots[i].val = 0;
		for (;;) {
			size_t home;

			j = (j + 1) & m->mask;
			if (!m->slots[j].val)
				return;
			home = m->slots[j].hash & m->mask;
			/* leave j where it is when its home lies cyclically in (i, j] */
			if (i <= j ? (i < home && home <= j) : (i < home || home <= j))
				continue;
			break;
		}
		m->slots[i] = m->slots[j];
		i = j;
	}
}

uintptr_t hashmap_remove(struct hashmap *m, uint64_t hash, hashmap_eq_fn eq, const void *ctx,
			 const void *key)
{
	size_t i;
	uintptr_t val;

	if (!m->slots)
		return 0;
	i = hashmap_slot_of(m, hash, eq, ctx, key);
	val = m->slots[i].val;
	if (val)
		remove_at(m, i);
	return val;
}

bool hashmap_remove_val(struct hashmap *m, uint64_t hash, uintptr_t val)
{
	if (!m->slots || !val)
		return false;
	for (size_t i = hash & m->mask; m->slots[i].val; i = (i + 1) & m->mask)
		if (m->slots[i].val == val) {
			remove_at(m, i);
			return true;
		}
	return false;
}

void hashmap_clear(struct hashmap *m)
{
	if (m->slots)
		memset(m->slots, 0, (m->mask + 1) * sizeof(*m->slots));
	m->count = 0;
}

void hashmap_free(struct hashmap *m)
{
	free(m->slots);
	*m = (struct hashmap)HASHMAP_INIT;
}
