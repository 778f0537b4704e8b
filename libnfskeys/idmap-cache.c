/* The one answer cache of ID mapping (nfskeys-idmap-daemon.h): a common/hashmap (seeded at
 * random per cache) with a second-chance (CLOCK) approximation of LRU, a capacity and
 * per-entry expiry: the engine's on a coarse monotonic clock in seconds, nfskeys-idmapd's on
 * its own clock with what serve-stale and refresh-ahead need (fetched time, hits, stale
 * answers kept, pins).  A hit costs a hash, a compare, a copy and a short spinlock. */
#include <errno.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "hashmap.h"
#include "lru.h"
#include "nfskeys-idmap-daemon.h"

struct entry {
	struct lru_link lru; /* head is most recent; a pinned entry is off the list */
	uint64_t hash;
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
	/* the daemon's side (*_at calls): never read by a library hit */
	int64_t fetched, good_expires;
	uint32_t hits, pins;
	bool stale;
	char key[];
};

struct idmap_cache {
	int locked; /* spinlock: the critical sections are a few dozen instructions */
	struct hashmap map; /* of struct entry pointers */
	uint64_t seed;
	unsigned capacity, count;
	struct lru_list lru;
	struct nfskeys_idmap_cache_stats stats;
};

/* A test-and-test-and-set lock that yields the CPU while it waits: an uncontended
 * lock/unlock pair is two atomic instructions instead of a mutex's ~55, and yielding keeps a
 * preempted holder on a busy machine from being starved by spinners. */
static inline __attribute__((always_inline)) void cache_lock(struct idmap_cache *c)
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

struct lookup_key {
	unsigned kind;
	const char *key;
	size_t klen;
};

/* A word-at-a-time hash: keys are short (names, SIDs, numbers) and a hit should cost
 * little more than one pass over the key. */
static uint64_t key_hash(const struct idmap_cache *c, unsigned kind, const char *key, size_t len)
{
	return hashmap_hash(c->seed ^ ((uint64_t)kind << 32), key, len);
}

static bool entry_eq(const void *ctx, uintptr_t val, const void *key)
{
	const struct entry *e = (const struct entry *)val;
	const struct lookup_key *k = key;

	(void)ctx;
	return e->kind == k->kind && e->klen == k->klen && memcmp(e->key, k->key, k->klen) == 0;
}

static inline __attribute__((always_inline)) struct entry *find_entry(const struct idmap_cache *c, uint64_t hash, unsigned kind,
				const char *key, size_t klen)
{
	struct lookup_key k = { kind, key, klen };

	return (struct entry *)hashmap_find(&c->map, hash, entry_eq, NULL, &k);
}

static bool kind_needs_full(unsigned kind)
{
	return kind == NFSKEYS_IDMAP_PRINCIPAL_TO_IDS || kind == NFSKEYS_IDMAP_UID_TO_SID ||
	       kind == NFSKEYS_IDMAP_GID_TO_SID || kind == NFSKEYS_IDMAP_UID_TO_NAME ||
	       kind == NFSKEYS_IDMAP_GID_TO_GROUP;
}

/* Copy the meaningful part of an answer: groups, SID and name only when the kind uses
 * them (the rest of *dst is left as it was, which the API documents as unspecified). */
static inline __attribute__((always_inline)) void answer_copy(struct nfskeys_idmap_answer *dst,
								 const struct entry *e)
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

	if (capacity == 0)
		capacity = 1;
	c = calloc(1, sizeof(*c));
	if (!c)
		return NULL;
	c->seed = hashmap_random_seed();
	c->capacity = capacity;
	c->stats.capacity = capacity;
	return c;
}

/* Take e out of the table and the LRU list and free it. */
static void remove_entry(struct idmap_cache *c, struct entry *e)
{
	hashmap_remove_val(&c->map, e->hash, (uintptr_t)e);
	if (!e->pins)
		lru_unlink(&c->lru, &e->lru);
	c->count--;
	free(e->full);
	free(e);
}

/* Evict the oldest entry not used (inserted or hit) since it last reached the tail: a used
 * entry found at the tail is cleared and moved to the front (second chance, the CLOCK
 * approximation of LRU).  Ends after at most count moves, since every move clears a flag. */
static void evict_one(struct idmap_cache *c)
{
	struct entry *e = LRU_ENTRY(c->lru.tail, struct entry, lru);

	while (e->referenced && c->lru.tail != c->lru.head) {
		e->referenced = 0;
		lru_unlink(&c->lru, &e->lru);
		lru_push_front(&c->lru, &e->lru);
		e = LRU_ENTRY(c->lru.tail, struct entry, lru);
	}
	c->stats.evictions++;
	remove_entry(c, e);
}

int idmap_cache_get(struct idmap_cache *c, unsigned kind, const char *key,
		    struct nfskeys_idmap_answer *ret)
{
	size_t klen = strlen(key);
	uint64_t h = key_hash(c, kind, key, klen);
	struct entry *e;
	int64_t now = now_sec();
	int r = 0;

	cache_lock(c);
	e = find_entry(c, h, kind, key, klen);
	if (!e) {
		c->stats.misses++;
	} else if (e->expires <= now) {
		c->stats.expired++;
		c->stats.misses++;
		if (!e->pins)
			remove_entry(c, e);
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

/* A new entry for kind/key holding a or error (not yet in the table); NULL when out of
 * memory. */
static struct entry *entry_new(const struct idmap_cache *c, unsigned kind, const char *key,
			       size_t klen, const struct nfskeys_idmap_answer *a, int error)
{
	struct entry *e = malloc(sizeof(*e) + klen + 1);

	if (!e)
		return NULL;
	memset(e, 0, sizeof(*e));
	e->hash = key_hash(c, kind, key, klen);
	e->kind = kind;
	e->klen = (uint32_t)klen;
	e->error = a ? 0 : error;
	e->referenced = 1; /* a new entry counts as used: it survives one pass of the clock */
	if (a) {
		memcpy(e->head, a, sizeof(e->head));
		memcpy(e->backend, a->backend, sizeof(e->backend));
		if (kind_needs_full(a->kind)) {
			e->full = malloc(sizeof(*e->full));
			if (!e->full) {
				free(e);
				return NULL;
			}
			*e->full = *a;
		}
	}
	memcpy(e->key, key, klen + 1);
	return e;
}

/* Put e in the table in place of any entry of its key (whose pins it takes over), after
 * evicting down to the capacity: e itself is never evicted, and when every other entry
 * is pinned the cache goes over its bound.  Called locked; frees e on failure. */
static int insert_locked(struct idmap_cache *c, struct entry *e)
{
	struct entry *old = find_entry(c, e->hash, e->kind, e->key, e->klen);

	if (old) {
		e->pins = old->pins;
		remove_entry(c, old);
	}
	while (c->count >= c->capacity && c->lru.tail)
		evict_one(c);
	if (hashmap_put(&c->map, e->hash, (uintptr_t)e) < 0) {
		free(e->full);
		free(e);
		return -ENOMEM; /* a cache that cannot grow just misses */
	}
	if (!e->pins)
		lru_push_front(&c->lru, &e->lru);
	c->count++;
	c->stats.insertions++;
	return 0;
}

void idmap_cache_put(struct idmap_cache *c, unsigned kind, const char *key,
		     const struct nfskeys_idmap_answer *a, int error, unsigned ttl)
{
	struct entry *e;

	if (ttl == 0 || (!a && error >= 0))
		return;
	e = entry_new(c, kind, key, strlen(key), a, error);
	if (!e)
		return; /* a cache that cannot grow just misses */
	e->expires = now_sec() + ttl;
	cache_lock(c);
	(void)insert_locked(c, e);
	cache_unlock(c);
}

int idmap_cache_drop(struct idmap_cache *c, unsigned kind, const char *key)
{
	size_t klen = strlen(key);
	uint64_t h = key_hash(c, kind, key, klen);
	struct entry *e;
	int r = -ENOENT;

	cache_lock(c);
	e = find_entry(c, h, kind, key, klen);
	if (e) {
		remove_entry(c, e);
		r = 0;
	}
	cache_unlock(c);
	return r;
}

unsigned idmap_cache_clear(struct idmap_cache *c)
{
	unsigned n;
	size_t it = 0;
	uintptr_t v;

	cache_lock(c);
	n = c->count;
	/* through the table: pinned entries are not on the LRU list */
	while (hashmap_next(&c->map, &it, &v)) {
		struct entry *e = (struct entry *)v;

		free(e->full);
		free(e);
	}
	hashmap_clear(&c->map);
	c->lru = (struct lru_list){};
	c->count = 0;
	cache_unlock(c);
	return n;
}

void idmap_cache_set_capacity(struct idmap_cache *c, unsigned capacity)
{
	cache_lock(c);
	c->capacity = capacity ? capacity : 1;
	c->stats.capacity = c->capacity;
	while (c->count > c->capacity && c->lru.tail)
		evict_one(c);
	cache_unlock(c);
}

void idmap_cache_get_stats(struct idmap_cache *c, struct nfskeys_idmap_cache_stats *ret)
{
	cache_lock(c);
	*ret = c->stats;
	ret->entries = c->count;
	cache_unlock(c);
}

/* ---------------------------------------------------- the daemon's side: *_at calls */

static bool entry_positive(const struct entry *e)
{
	const struct nfskeys_idmap_answer *h = (const struct nfskeys_idmap_answer *)e->head;

	return e->error == 0 && !(h->flags & NFSKEYS_IDMAP_ANSWER_NOBODY);
}

/* peek (use: a lookup at time now) or read (a look at the entry only). */
static inline __attribute__((always_inline)) int
lookup_at(struct idmap_cache *c, unsigned kind, const char *key, bool use, int64_t now,
	  int64_t stale_limit, struct idmap_cache_view *ret, struct nfskeys_idmap_answer *ret_ans)
{
	size_t klen = strlen(key);
	uint64_t h = key_hash(c, kind, key, klen);
	struct entry *e;
	int r = 0;

	cache_lock(c);
	e = find_entry(c, h, kind, key, klen);
	if (!use) {
		/* a look only: nothing counted, moved or dropped */
	} else if (!e) {
		c->stats.misses++;
	} else if (now >= e->expires && !e->pins &&
		   !(stale_limit > 0 && entry_positive(e) && now <= e->good_expires + stale_limit)) {
		c->stats.expired++;
		c->stats.misses++;
		remove_entry(c, e);
		e = NULL;
	} else {
		if (!e->pins && c->lru.head != &e->lru) { /* strict LRU order on this side */
			lru_unlink(&c->lru, &e->lru);
			lru_push_front(&c->lru, &e->lru);
		}
		e->referenced = 1;
		if (now < e->expires)
			e->hits++;
		if (e->error < 0)
			c->stats.negative_hits++;
		else
			c->stats.hits++;
	}
	if (e) {
		ret->status = e->error;
		ret->positive = entry_positive(e);
		ret->stale = e->stale;
		ret->hits = e->hits;
		ret->fetched = e->fetched;
		ret->expires = e->expires;
		ret->good_expires = e->good_expires;
		if (e->error == 0)
			answer_copy(ret_ans, e);
		r = 1;
	}
	cache_unlock(c);
	return r;
}

int idmap_cache_peek(struct idmap_cache *c, unsigned kind, const char *key, int64_t now,
		     int64_t stale_limit, struct idmap_cache_view *ret,
		     struct nfskeys_idmap_answer *ret_ans)
{
	return lookup_at(c, kind, key, true, now, stale_limit, ret, ret_ans);
}

int idmap_cache_read(struct idmap_cache *c, unsigned kind, const char *key,
		     struct idmap_cache_view *ret, struct nfskeys_idmap_answer *ret_ans)
{
	return lookup_at(c, kind, key, false, 0, 0, ret, ret_ans);
}

void idmap_cache_foreach_fresh(struct idmap_cache *c, int64_t now, idmap_cache_each_fn fn,
			       void *userdata)
{
	struct nfskeys_idmap_answer a;
	size_t it = 0;
	uintptr_t v;

	cache_lock(c);
	while (hashmap_next(&c->map, &it, &v)) {
		const struct entry *e = (const struct entry *)v;

		if (!entry_positive(e) || e->stale || e->expires <= now)
			continue;
		memset(&a, 0, sizeof(a));
		answer_copy(&a, e);
		fn(userdata, e->kind, e->key, &a, e->expires);
	}
	cache_unlock(c);
}

int idmap_cache_store(struct idmap_cache *c, unsigned kind, const char *key,
		      const struct nfskeys_idmap_answer *a, int error, int64_t now,
		      int64_t expires)
{
	struct entry *e;
	int r;

	if (!a && error >= 0)
		return -EINVAL;
	e = entry_new(c, kind, key, strlen(key), a, error);
	if (!e)
		return -ENOMEM;
	e->fetched = now;
	e->expires = expires;
	e->good_expires = entry_positive(e) ? expires : 0;
	cache_lock(c);
	r = insert_locked(c, e);
	cache_unlock(c);
	return r;
}

/* Find kind/key and apply fn to it, locked; -ENOENT when absent. */
static int with_entry(struct idmap_cache *c, unsigned kind, const char *key,
		      void (*fn)(struct idmap_cache *c, struct entry *e, int64_t arg), int64_t arg)
{
	size_t klen = strlen(key);
	uint64_t h = key_hash(c, kind, key, klen);
	struct entry *e;

	cache_lock(c);
	e = find_entry(c, h, kind, key, klen);
	if (e)
		fn(c, e, arg);
	cache_unlock(c);
	return e ? 0 : -ENOENT;
}

static void do_mark_stale(struct idmap_cache *c, struct entry *e, int64_t expires)
{
	(void)c;
	e->stale = true;
	e->expires = expires;
}

/* Pinned entries leave the LRU list, so eviction takes the cold end without looking at
 * them; the last unpin puts the entry back as the most recently used. */
static void do_pin(struct idmap_cache *c, struct entry *e, int64_t arg)
{
	(void)arg;
	if (e->pins++ == 0)
		lru_unlink(&c->lru, &e->lru);
}

static void do_unpin(struct idmap_cache *c, struct entry *e, int64_t arg)
{
	(void)arg;
	if (e->pins == 0 || --e->pins > 0)
		return;
	e->referenced = 1;
	lru_push_front(&c->lru, &e->lru);
	while (c->count > c->capacity && c->lru.tail != &e->lru)
		evict_one(c);
}

int idmap_cache_mark_stale(struct idmap_cache *c, unsigned kind, const char *key,
			   int64_t expires)
{
	return with_entry(c, kind, key, do_mark_stale, expires);
}

int idmap_cache_pin(struct idmap_cache *c, unsigned kind, const char *key)
{
	return with_entry(c, kind, key, do_pin, 0);
}

int idmap_cache_unpin(struct idmap_cache *c, unsigned kind, const char *key)
{
	return with_entry(c, kind, key, do_unpin, 0);
}

uint64_t idmap_cache_key_hash(const struct idmap_cache *c, unsigned kind, const char *key)
{
	return key_hash(c, kind, key, strlen(key));
}

struct idmap_cache *idmap_cache_free(struct idmap_cache *c)
{
	if (!c)
		return NULL;
	idmap_cache_clear(c);
	hashmap_free(&c->map);
	free(c);
	return NULL;
}
