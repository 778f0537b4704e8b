/* The in-process answer cache of the ID-mapping engine: a chained hash table with a
 * second-chance (CLOCK) approximation of LRU, a fixed capacity and per-entry expiry on a
 * coarse monotonic clock.  A hit costs a hash, a compare, a copy and a short spinlock. */
#include <sched.h>
#include <time.h>

#include "idmap-private.h"

struct entry {
	struct entry *hnext;
	struct entry *prev, *next; /* LRU: head is most recent */
	uint32_t hash;
	uint32_t kind;
	uint32_t klen;
	int32_t error; /* < 0: negative entry */
	uint32_t referenced; /* set by a hit; eviction gives such an entry a second chance */
	int64_t expires;
	/* the answer: its fixed head and backend name inline, next to the key, so a hit on a
	 * kind that has nothing more (ids from names or SIDs) reads a few adjacent cache
	 * lines; the whole answer is kept in full only for the kinds with groups/name/SID */
	char head[offsetof(struct nfskeys_idmap_answer, groups)];
	char backend[NFSKEYS_IDMAP_BACKEND_MAX];
	struct nfskeys_idmap_answer *full;
	char key[];
};

struct idmap_cache {
	int locked; /* spinlock: the critical sections are a few dozen instructions */
	struct entry **buckets;
	size_t nbuckets; /* power of two */
	unsigned capacity, count;
	struct entry *head, *tail;
	struct nfskeys_idmap_cache_stats stats;
};

/* A test-and-test-and-set lock that yields the CPU while it waits: an uncontended
 * lock/unlock pair is two atomic instructions instead of a mutex's ~55, and yielding keeps a
 * preempted holder on a busy machine from being starved by spinners. */
static void cache_lock(struct idmap_cache *c)
{
	while (__atomic_exchange_n(&c->locked, 1, __ATOMIC_ACQUIRE)) {
		for (unsigned n = 0; __atomic_load_n(&c->locked, __ATOMIC_RELAXED); n++)
			if (n >= 64)
				sched_yield();
	}
}

static void cache_unlock(struct idmap_cache *c)
{
	__atomic_store_n(&c->locked, 0, __ATOMIC_RELEASE);
}

static int64_t now_sec(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
	return ts.tv_sec;
}

/* A word-at-a-time multiplicative hash: keys are short (names, SIDs, numbers) and a hit
 * should cost little more than one pass over the key. */
static uint32_t key_hash(unsigned kind, const char *key, size_t len)
{
	uint64_t h = 0x9e3779b97f4a7c15ull ^ ((uint64_t)kind << 32) ^ len;
	size_t i = 0;

	for (; i + 8 <= len; i += 8) {
		uint64_t w;

		memcpy(&w, key + i, 8);
		h = (h ^ w) * 0xff51afd7ed558ccdull;
		h ^= h >> 32;
	}
	if (i < len) {
		uint64_t w = 0;

		memcpy(&w, key + i, len - i);
		h = (h ^ w) * 0xc4ceb9fe1a85ec53ull;
	}
	h ^= h >> 29;
	return (uint32_t)h;
}

static bool kind_needs_full(unsigned kind)
{
	return kind == NFSKEYS_IDMAP_PRINCIPAL_TO_IDS || kind == NFSKEYS_IDMAP_UID_TO_SID ||
	       kind == NFSKEYS_IDMAP_GID_TO_SID || kind == NFSKEYS_IDMAP_UID_TO_NAME ||
	       kind == NFSKEYS_IDMAP_GID_TO_GROUP;
}

/* Copy the meaningful part of an answer: groups, SID and name only when the kind uses
 * them (the rest of *dst is left as it was, which the API documents as unspecified). */
static void answer_copy(struct nfskeys_idmap_answer *dst, const struct entry *e)
{
	const struct nfskeys_idmap_answer *src = e->full;

	memcpy(dst, e->head, sizeof(e->head));
	switch (src ? src->kind : 0) {
	case NFSKEYS_IDMAP_PRINCIPAL_TO_IDS:
		memcpy(dst->groups, src->groups, src->n_groups * sizeof(src->groups[0]));
		break;
	case NFSKEYS_IDMAP_UID_TO_SID:
	case NFSKEYS_IDMAP_GID_TO_SID:
		dst->sid = src->sid; /* and its text, in name: */
		__attribute__((fallthrough));
	case NFSKEYS_IDMAP_UID_TO_NAME:
	case NFSKEYS_IDMAP_GID_TO_GROUP: {
		size_t nlen = strnlen(src->name, sizeof(src->name) - 1);

		memcpy(dst->name, src->name, nlen);
		dst->name[nlen] = '\0';
		break;
	}
	default:
		dst->name[0] = '\0';
		break;
	}
	memcpy(dst->backend, e->backend, sizeof(dst->backend));
}

struct idmap_cache *idmap_cache_new(unsigned capacity)
{
	struct idmap_cache *c;
	size_t n = 16;

	if (capacity == 0)
		capacity = 1;
	while (n < capacity)
		n <<= 1;
	c = calloc(1, sizeof(*c));
	if (!c)
		return NULL;
	c->buckets = calloc(n, sizeof(*c->buckets));
	if (!c->buckets) {
		free(c);
		return NULL;
	}
	c->nbuckets = n;
	c->capacity = capacity;
	c->stats.capacity = capacity;
	return c;
}

static void lru_unlink(struct idmap_cache *c, struct entry *e)
{
	if (e->prev)
		e->prev->next = e->next;
	else
		c->head = e->next;
	if (e->next)
		e->next->prev = e->prev;
	else
		c->tail = e->prev;
	e->prev = e->next = NULL;
}

static void lru_push_front(struct idmap_cache *c, struct entry *e)
{
	e->prev = NULL;
	e->next = c->head;
	if (c->head)
		c->head->prev = e;
	c->head = e;
	if (!c->tail)
		c->tail = e;
}

static struct entry **find_slot(struct idmap_cache *c, uint32_t hash, unsigned kind,
				const char *key, size_t klen)
{
	struct entry **pp = &c->buckets[hash & (c->nbuckets - 1)];

	for (; *pp; pp = &(*pp)->hnext)
		if ((*pp)->hash == hash && (*pp)->kind == kind && (*pp)->klen == klen &&
		    memcmp((*pp)->key, key, klen) == 0)
			return pp;
	return pp;
}

/* Unlink *pp from its bucket and the LRU list and free it. */
static void remove_at(struct idmap_cache *c, struct entry **pp)
{
	struct entry *e = *pp;

	*pp = e->hnext;
	lru_unlink(c, e);
	c->count--;
	free(e->full);
	free(e);
}

static void remove_entry(struct idmap_cache *c, struct entry *e)
{
	struct entry **pp = &c->buckets[e->hash & (c->nbuckets - 1)];

	while (*pp != e)
		pp = &(*pp)->hnext;
	remove_at(c, pp);
}

/* Evict the oldest entry not used (inserted or hit) since it last reached the tail: a used
 * entry found at the tail is cleared and moved to the front (second chance, the CLOCK
 * approximation of LRU).  Ends after at most count moves, since every move clears a flag. */
static void evict_one(struct idmap_cache *c)
{
	while (c->tail->referenced && c->tail != c->head) {
		struct entry *e = c->tail;

		e->referenced = 0;
		lru_unlink(c, e);
		lru_push_front(c, e);
	}
	c->stats.evictions++;
	remove_entry(c, c->tail);
}

int idmap_cache_get(struct idmap_cache *c, unsigned kind, const char *key,
		    struct nfskeys_idmap_answer *ret)
{
	size_t klen = strlen(key);
	uint32_t h = key_hash(kind, key, klen);
	struct entry **pp, *e;
	int64_t now = now_sec();
	int r = 0;

	cache_lock(c);
	pp = find_slot(c, h, kind, key, klen);
	e = *pp;
	if (!e) {
		c->stats.misses++;
	} else if (e->expires <= now) {
		c->stats.expired++;
		c->stats.misses++;
		remove_at(c, pp);
	} else {
		e->referenced = 1; /* no list upkeep on a hit: see evict_one() */
		if (e->error < 0) {
			c->stats.negative_hits++;
			r = e->error;
		} else {
			c->stats.hits++;
			answer_copy(ret, e);
			ret->ttl = (uint32_t)(e->expires - now);
			ret->flags |= NFSKEYS_IDMAP_ANSWER_CACHED;
			r = 1;
		}
	}
	cache_unlock(c);
	return r;
}

void idmap_cache_put(struct idmap_cache *c, unsigned kind, const char *key,
		     const struct nfskeys_idmap_answer *a, int error, unsigned ttl)
{
	size_t klen = strlen(key);
	uint32_t h = key_hash(kind, key, klen);
	struct entry **pp, *e;

	if (ttl == 0 || (!a && error >= 0))
		return;
	e = malloc(sizeof(*e) + klen + 1);
	if (!e)
		return; /* a cache that cannot grow just misses */
	memset(e, 0, sizeof(*e));
	e->hash = h;
	e->kind = kind;
	e->klen = (uint32_t)klen;
	e->error = a ? 0 : error;
	e->referenced = 1; /* a new entry counts as used: it survives one pass of the clock */
	e->expires = now_sec() + ttl;
	if (a) {
		memcpy(e->head, a, sizeof(e->head));
		memcpy(e->backend, a->backend, sizeof(e->backend));
		if (kind_needs_full(a->kind)) {
			e->full = malloc(sizeof(*e->full));
			if (!e->full) {
				free(e);
				return;
			}
			*e->full = *a;
		}
	}
	memcpy(e->key, key, klen + 1);

	cache_lock(c);
	pp = find_slot(c, h, kind, key, klen);
	if (*pp)
		remove_at(c, pp);
	while (c->count >= c->capacity && c->tail)
		evict_one(c);
	pp = &c->buckets[h & (c->nbuckets - 1)];
	e->hnext = *pp;
	*pp = e;
	lru_push_front(c, e);
	c->count++;
	c->stats.insertions++;
	cache_unlock(c);
}

int idmap_cache_drop(struct idmap_cache *c, unsigned kind, const char *key)
{
	size_t klen = strlen(key);
	uint32_t h = key_hash(kind, key, klen);
	struct entry **pp;
	int r = -ENOENT;

	cache_lock(c);
	pp = find_slot(c, h, kind, key, klen);
	if (*pp) {
		remove_at(c, pp);
		r = 0;
	}
	cache_unlock(c);
	return r;
}

void idmap_cache_clear(struct idmap_cache *c)
{
	cache_lock(c);
	while (c->head)
		remove_entry(c, c->head);
	cache_unlock(c);
}

void idmap_cache_get_stats(struct idmap_cache *c, struct nfskeys_idmap_cache_stats *ret)
{
	cache_lock(c);
	*ret = c->stats;
	ret->entries = c->count;
	cache_unlock(c);
}

struct idmap_cache *idmap_cache_free(struct idmap_cache *c)
{
	if (!c)
		return NULL;
	idmap_cache_clear(c);
	free(c->buckets);
	free(c);
	return NULL;
}
