/* nfskeys-idmapd's in-flight table: a common/hashmap of the fetches running now, keyed by
 * (kind, key) with a per-table random seed (the keys are names local users send).  A
 * flush takes fetches out of the table but leaves them to their jobs ("orphans"). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "hashmap.h"
#include "idmapd-fetch.h"
#include "macros.h"

struct idmapd_fetches {
	struct hashmap map; /* of struct idmapd_fetch pointers */
	uint64_t seed;
};

struct lookup_key {
	uint32_t kind;
	const char *key;
};

static uint64_t hash_key(const struct idmapd_fetches *t, uint32_t kind, const char *key)
{
	return hashmap_hash(t->seed ^ ((uint64_t)kind * 0x9e3779b97f4a7c15ull), key, strlen(key));
}

static bool fetch_eq(const void *ctx, uintptr_t val, const void *key)
{
	const struct idmapd_fetch *f = (const struct idmapd_fetch *)val;
	const struct lookup_key *k = key;

	(void)ctx;
	return f->kind == k->kind && streq(f->key, k->key);
}

int idmapd_fetches_new(struct idmapd_fetches **ret_fetches)
{
	struct idmapd_fetches *t = calloc(1, sizeof(*t));

	if (!t)
		return -ENOMEM;
	t->seed = hashmap_random_seed();
	*ret_fetches = t;
	return 0;
}

struct idmapd_fetches *idmapd_fetches_free(struct idmapd_fetches *t)
{
	if (!t)
		return NULL;
	idmapd_fetch_orphan_all(t, NULL);
	hashmap_free(&t->map);
	free(t);
	return NULL;
}

struct idmapd_fetch *idmapd_fetch_find(struct idmapd_fetches *t, uint32_t kind, const char *key)
{
	struct lookup_key k = { kind, key };

	return (struct idmapd_fetch *)hashmap_find(&t->map, hash_key(t, kind, key), fetch_eq, NULL,
						   &k);
}

int idmapd_fetch_add(struct idmapd_fetches *t, uint32_t kind, const char *key,
		     struct idmapd_fetch **ret_fetch)
{
	struct idmapd_fetch *f = calloc(1, sizeof(*f));

	if (!f)
		return -ENOMEM;
	f->key = strdup(key);
	if (!f->key) {
		free(f);
		return -ENOMEM;
	}
	f->kind = kind;
	f->hash = hash_key(t, kind, key);
	if (hashmap_put(&t->map, f->hash, (uintptr_t)f) < 0) {
		free(f->key);
		free(f);
		return -ENOMEM;
	}
	*ret_fetch = f;
	return 0;
}

void idmapd_fetch_done(struct idmapd_fetches *t, struct idmapd_fetch *f)
{
	if (!f->orphan)
		hashmap_remove_val(&t->map, f->hash, (uintptr_t)f);
	free(f->key);
	free(f);
}

void idmapd_fetch_orphan(struct idmapd_fetches *t, struct idmapd_fetch *f)
{
	if (f->orphan)
		return;
	hashmap_remove_val(&t->map, f->hash, (uintptr_t)f);
	f->orphan = true;
}

size_t idmapd_fetch_orphan_all(struct idmapd_fetches *t, size_t *ret_unpinned)
{
	size_t n = t->map.count, it = 0, unpinned = 0;
	uintptr_t v;

	while (hashmap_next(&t->map, &it, &v)) {
		struct idmapd_fetch *f = (struct idmapd_fetch *)v;

		f->orphan = true;
		unpinned += !f->pinned;
	}
	hashmap_clear(&t->map);
	if (ret_unpinned)
		*ret_unpinned = unpinned;
	return n;
}

size_t idmapd_fetch_count(const struct idmapd_fetches *t)
{
	return t->map.count;
}
