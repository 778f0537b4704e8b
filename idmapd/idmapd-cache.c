/* nfskeys-idmapd's answer cache: FNV-1a hashed chains that double when full, an
 * intrusive LRU list, a size bound that never evicts busy entries.  Only idle entries
 * are on the LRU list: a pinned (or busy) entry leaves it, so eviction takes the cold
 * end in O(1) and can never free an entry someone is still answering from. */
#include "idmapd-cache.h"
#include "macros.h"

struct idmapd_cache {
	struct idmapd_entry **buckets;
	size_t nbuckets; /* power of two */
	size_t count;
	size_t capacity;
	uint64_t evictions;
	struct idmapd_entry *lru_head, *lru_tail; /* head = most recently used */
};

static uint64_t hash_key(uint32_t kind, const char *key)
{
	uint64_t h = 0xcbf29ce484222325ULL ^ kind;

	for (const unsigned char *p = (const unsigned char *)key; *p; p++) {
		h ^= *p;
		h *= 0x100000001b3ULL;
	}
	return h;
}

int idmapd_cache_new(size_t capacity, struct idmapd_cache **ret_cache)
{
	struct idmapd_cache *c = calloc(1, sizeof(*c));

	if (!c)
		return -ENOMEM;
	c->nbuckets = 1024;
	c->buckets = calloc(c->nbuckets, sizeof(*c->buckets));
	if (!c->buckets) {
		free(c);
		return -ENOMEM;
	}
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

static void lru_unlink(struct idmapd_cache *c, struct idmapd_entry *e)
{
	if (!e->in_lru)
		return;
	e->in_lru = false;
	if (e->lprev)
		e->lprev->lnext = e->lnext;
	else
		c->lru_head = e->lnext;
	if (e->lnext)
		e->lnext->lprev = e->lprev;
	else
		c->lru_tail = e->lprev;
	e->lprev = e->lnext = NULL;
}

static void lru_push(struct idmapd_cache *c, struct idmapd_entry *e)
{
	e->in_lru = true;
	e->lprev = NULL;
	e->lnext = c->lru_head;
	if (c->lru_head)
		c->lru_head->lprev = e;
	c->lru_head = e;
	if (!c->lru_tail)
		c->lru_tail = e;
}

static void hash_unlink(struct idmapd_cache *c, struct idmapd_entry *e)
{
	struct idmapd_entry **pp = &c->buckets[e->hash & (c->nbuckets - 1)];

	while (*pp && *pp != e)
		pp = &(*pp)->hnext;
	if (*pp)
		*pp = e->hnext;
	e->hnext = NULL;
}

void idmapd_cache_drop(struct idmapd_cache *c, struct idmapd_entry *e)
{
	hash_unlink(c, e);
	lru_unlink(c, e);
	c->count--;
	if (e->busy || e->pins)
		e->orphan = true;
	else
		idmapd_entry_free(e);
}

struct idmapd_entry *idmapd_cache_find(struct idmapd_cache *c, uint32_t kind, const char *key)
{
	uint64_t h = hash_key(kind, key);

	for (struct idmapd_entry *e = c->buckets[h & (c->nbuckets - 1)]; e; e = e->hnext) {
		if (e->hash == h && e->kind == kind && streq(e->key, key)) {
			if (c->lru_head != e && !e->busy && !e->pins) {
				lru_unlink(c, e);
				lru_push(c, e);
			}
			return e;
		}
	}
	return NULL;
}

/* Drop idle entries from the cold end until within capacity; keep is never dropped.
 * An entry found busy there (flag set without idmapd_cache_pin) just leaves the list,
 * so each entry is looked at once per pin: O(1) amortized per add. */
static void evict(struct idmapd_cache *c, const struct idmapd_entry *keep)
{
	while (c->count > c->capacity && c->lru_tail) {
		struct idmapd_entry *e = c->lru_tail;

		if (e->busy || e->pins) {
			lru_unlink(c, e);
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
		lru_unlink(c, e);
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
		lru_push(c, e);
		evict(c, e);
	}
	return false;
}

static void grow(struct idmapd_cache *c)
{
	size_t n = c->nbuckets * 2;
	struct idmapd_entry **nb = calloc(n, sizeof(*nb));

	if (!nb)
		return; /* longer chains, still correct */
	for (size_t i = 0; i < c->nbuckets; i++) {
		struct idmapd_entry *e = c->buckets[i];

		while (e) {
			struct idmapd_entry *next = e->hnext;
			size_t b = e->hash & (n - 1);

			e->hnext = nb[b];
			nb[b] = e;
			e = next;
		}
	}
	free(c->buckets);
	c->buckets = nb;
	c->nbuckets = n;
}

int idmapd_cache_add(struct idmapd_cache *c, uint32_t kind, const char *key,
		     struct idmapd_entry **ret_entry)
{
	struct idmapd_entry *e = calloc(1, sizeof(*e));
	size_t b;

	if (!e)
		return -ENOMEM;
	e->key = strdup(key);
	if (!e->key) {
		free(e);
		return -ENOMEM;
	}
	e->kind = kind;
	e->hash = hash_key(kind, key);
	if (c->count >= c->nbuckets)
		grow(c);
	b = e->hash & (c->nbuckets - 1);
	e->hnext = c->buckets[b];
	c->buckets[b] = e;
	lru_push(c, e);
	c->count++;
	evict(c, e);
	*ret_entry = e;
	return 0;
}

size_t idmapd_cache_flush(struct idmapd_cache *c)
{
	size_t n = 0;

	/* through the table: pinned entries are not on the LRU list */
	for (size_t b = 0; b < c->nbuckets; b++) {
		while (c->buckets[b]) {
			idmapd_cache_drop(c, c->buckets[b]);
			n++;
		}
	}
	return n;
}

struct idmapd_cache *idmapd_cache_free(struct idmapd_cache *c)
{
	if (!c)
		return NULL;
	idmapd_cache_flush(c);
	free(c->buckets);
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
	return c->count;
}

size_t idmapd_cache_capacity(const struct idmapd_cache *c)
{
	return c->capacity;
}

uint64_t idmapd_cache_evictions(const struct idmapd_cache *c)
{
	return c->evictions;
}
