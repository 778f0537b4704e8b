/* The one hash table of nfskeys: open addressing with linear probing over (hash, value)
 * slots, at most half full, deletion by backward shift (no tombstones, so a cache that
 * churns keeps its probe lengths).  The table stores a word per entry, never the entry:
 * a pointer to the caller's object, or an index + 1 into the caller's array; 0 marks a
 * free slot.  Keys are compared by the caller's callback, which inlines where the lookup
 * is called with a constant function.  Not thread-safe: callers lock. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

struct hashmap_slot {
	uint64_t hash;
	uintptr_t val; /* 0: free */
};

struct hashmap {
	struct hashmap_slot *slots;
	size_t mask; /* slots has mask + 1 elements, a power of two; 0 while slots is NULL */
	size_t count;
};

#define HASHMAP_INIT { 0 }

/* Whether the stored value val is the entry of key (ctx: the caller's table state). */
typedef bool (*hashmap_eq_fn)(const void *ctx, uintptr_t val, const void *key);

/* Seedable hash of len bytes, a word at a time (keys are short: names, SIDs, numbers).
 * A daemon seeds it at random so that local users cannot choose colliding keys. */
static inline uint64_t hashmap_hash(uint64_t seed, const void *data, size_t len)
{
	const unsigned char *p = data;
	uint64_t h = 0x9e3779b97f4a7c15ull ^ seed ^ ((uint64_t)len * 0xc2b2ae3d27d4eb4full);
	size_t i = 0;

	for (; i + 8 <= len; i += 8) {
		uint64_t w;

		memcpy(&w, p + i, 8);
		h = (h ^ w) * 0xff51afd7ed558ccdull;
		h ^= h >> 32;
	}
	if (i < len) {
		uint64_t w = 0;

		memcpy(&w, p + i, len - i);
		h = (h ^ w) * 0xc4ceb9fe1a85ec53ull;
	}
	h ^= h >> 29;
	h *= 0xbf58476d1ce4e5b9ull;
	h ^= h >> 32;
	return h;
}

/* A random seed for hashmap_hash() (getrandom, else the clock and pid mixed). */
uint64_t hashmap_random_seed(void);

/* The slot holding key's entry, or the free slot that ends its probe sequence.  The
 * table must have slots (mask != 0). */
static inline size_t hashmap_slot_of(const struct hashmap *m, uint64_t hash, hashmap_eq_fn eq,
				     const void *ctx, const void *key)
{
	size_t i = hash & m->mask;

	for (; m->slots[i].val; i = (i + 1) & m->mask)
		if (m->slots[i].hash == hash && eq(ctx, m->slots[i].val, key))
			break;
	return i;
}

/* The value stored for key, or 0. */
static inline uintptr_t hashmap_find(const struct hashmap *m, uint64_t hash, hashmap_eq_fn eq,
				     const void *ctx, const void *key)
{
	if (!m->slots)
		return 0;
	return m->slots[hashmap_slot_of(m, hash, eq, ctx, key)].val;
}

/* Make room for n more entries, so that as many hashmap_put() calls cannot fail.
 * 0 or -ENOMEM (the table is unchanged then). */
int hashmap_reserve(struct hashmap *m, size_t n);

/* Store val (non-zero) under hash; the caller has checked that its key is absent.
 * 0 or -ENOMEM. */
int hashmap_put(struct hashmap *m, uint64_t hash, uintptr_t val);

/* Remove key's entry; returns its value, or 0 when absent. */
uintptr_t hashmap_remove(struct hashmap *m, uint64_t hash, hashmap_eq_fn eq, const void *ctx,
			 const void *key);

/* Remove the slot holding exactly val (stored under hash); false when absent. */
bool hashmap_remove_val(struct hashmap *m, uint64_t hash, uintptr_t val);

/* Iterate: start with *iter = 0; each call gives the next stored value.  The table must
 * not change during an iteration (collect, then remove, or hashmap_clear() after). */
static inline bool hashmap_next(const struct hashmap *m, size_t *iter, uintptr_t *ret_val)
{
	if (!m->slots)
		return false;
	for (; *iter <= m->mask; (*iter)++)
		if (m->slots[*iter].val) {
			*ret_val = m->slots[(*iter)++].val;
			return true;
		}
	return false;
}

/* Forget every entry (the callers own them); keeps the slots. */
void hashmap_clear(struct hashmap *m);

/* Free the slots; the table is empty and usable again. */
void hashmap_free(struct hashmap *m);
