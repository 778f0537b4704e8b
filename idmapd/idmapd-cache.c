/* nfskeys-idmapd's answer cache: a common/hashmap with a per-cache random hash seed (the
 * keys are names local users send), an intrusive LRU list, a size bound that never evicts
 * busy entries.  Only idle entries
 * are on the LRU list: a pinned (or busy) entry leaves it, so eviction takes the cold
 * end in O(1) and can never free an entry someone is still answering from. */
#include "hashmap.h"
#include "idmapd-cache.h"
#include "macros.h"

struct idmapd_cache {
	struct hashmap map; /* of struct idmapd_entry pointers; map.count is the count */
	uint64_t seed;
	size_t capacity;
	uint64_t evictions;
	struct lru_list lru; /* of idle entries; head = most recently used */
};

struct lookup_key {
	uint32_t kind;
	const char *key;
};

static uint64_t hash_key(const struct idmapd_cache *c, uint32_t kind, const char *key)
{
	return hashmap_hash(c->seed ^ ((uint64_t)kind * 0x9e3779b97f4a7c15ull), key, strlen(key));
}

static bool entry_eq(const void *ctx, uintptr_t val, const void *key)
{
	const struct idmapd_entry *e = (const struct idmapd_entry *)val;
	const struct lookup_key *k = key;

	(void)ctx;
	return e->kind == k->kind && streq(e->key, k->key);
}

int idmapd_cache_new(size_t capacity, struct idmapd_cache **ret_cache)
{
	struct idmapd_cache *c = calloc(1, sizeof(*c));

	if (!c)
		return -ENOMEM;
	c->seed = hashmap_random_seed();
	c->capacity = capacity ? capacity : 1;
	*ret_cache = c;
	return 0;
}

void idmapd_entry_free(struct idmapd_entry *e)
{
	if (!e)
		return;
	free(e->key);
	free(e);
}

static void lru_out(struct idmapd_cache *c, struct idmapd_entry *e)
{
	if (!e->in_lru)
		return;
	e->in_lru = false;
	lru_unlink(&c->lru, &e->lru);
}

static void lru_in(struct idmapd_cache *c, struct idmapd_entry *e)
{
	e->in_lru = true;
	lru_push_front(&c->lru, &e->lru);
}

/* Off the LRU list, then freed or (busy, pinned) orphaned; the caller has taken it out
 * of the table. */
static void detach(struct idmapd_cache *c, struct idmapd_entry *e)
{
	lru_out(c, e);
	if (e->busy || e->pins)
		e->orphan = true;
	else
		idmapd_entry_free(e);
}

void idmapd_cache_drop(struct idmapd_cache *c, struct idmapd_entry *e)
{
	hashmap_remove_val(&c->map, e->hash, (uintptr_t)e);
	detach(c, e);
}

struct idmapd_entry *idmapd_cache_find(struct idmapd_cache *c, uint32_t kind, const char *key)
{
	struct lookup_key k = { kind, key };
	struct idmapd_entry *e = (struct idmapd_entry *)hashmap_find(&c->map, hash_key(c, kind, key),
								     entry_eq, NULL, &k);

	if (e && c->lru.head != &e->lru && !e->busy && !e->pins) {
		lru_out(c, e);
		lru_in(c, e);
	}
	return e;
}

/* Drop idle entries from the cold end until within capacity; keep is never dropped.
 * An entry found busy there (flag set without idmapd_cache_pin) just leaves the list,
 * so each entry is looked at once per pin: O(1) amortized per add. */
static void evict(struct idmapd_cache *c, const struct idmapd_entry *keep)
{
	while (c->map.count > c->capacity && c->lru.tail) {
		struct idmapd_entry *e = LRU_ENTRY(c->lru.tail, struct idmapd_entry, lru);

		if (e->busy || e->pins) {
			lru_out(c, e);
			continue;
		}
		if (e == keep)
			break;
		idmapd_cache_drop(c, e);
		c->evictions++;
	}
}

void idmapd_cache_pin(struct idmapd_cache *c, struct idmapd_entry *e)
{
	if (e->pins++ == 0 && !e->orphan)
		lru_out(c, e);
}

bool idmapd_cache_unpin(struct idmapd_cache *c, struct idmapd_entry *e)
{
	if (--e->pins > 0)
		return false;
	if (e->orphan) {
		idmapd_entry_free(e);
		return true;
	}
	if (!e->busy) {
		lru_in(c, e);
		evict(c, e);
	}
	return false;
}

int idmapd_cache_add(struct idmapd_cache *c, uint32_t kind, const char *key,
		     struct idmapd_entry **ret_entry)
{
	struct idmapd_entry *e = calloc(1, sizeof(*e));

	if (!e)
		return -ENOMEM;
	e->key = strdup(key);
	if (!e->key) {
		free(e);
		return -ENOMEM;
	}
	e->kind = kind;
	e->hash = hash_key(c, kind, key);
	if (hashmap_put(&c->map, e->hash, (uintptr_t)e) < 0) {
		idmapd_entry_free(e);
		return -ENOMEM;
	}
	lru_in(c, e);
	evict(c, e);
	*ret_entry = e;
	return 0;
}

size_t idmapd_cache_flush(struct idmapd_cache *c)
{
	size_t n = c->map.count, it = 0;
	uintptr_t v;

	/* through the table (pinned entries are not on the LRU list), emptied after */
	while (hashmap_next(&c->map, &it, &v))
		detach(c, (struct idmapd_entry *)v);
	hashmap_clear(&c->map);
	return n;
}

struct idmapd_cache *idmapd_cache_free(struct idmapd_cache *c)
{
	if (!c)
		return NULL;
	idmapd_cache_flush(c);
	hashmap_free(&c->map);
	free(c);
	return NULL;
}

void idmapd_cache_set_capacity(struct idmapd_cache *c, size_t capacity)
{
	c->capacity = capacity ? capacity : 1;
	evict(c, NULL);
}

size_t idmapd_cache_count(const struct idmapd_cache *c)
{
	return c->map.count;
}

size_t idmapd_cache_capacity(const struct idmapd_cache *c)
{
	return c->capacity;
}

uint64_t idmapd_cache_evictions(const struct idmapd_cache *c)
{
	return c->evictions;
}
