/* The library's daemon side of ID mapping: the one answer cache (idmap-cache.c), used by
 * the engine in-process and by nfskeys-idmapd for its shared cache.  Not installed;
 * idmapd/ includes no other private header of the library (doc/ARCHITECTURE.md). */
#pragma once

#include <stdbool.h>
#include <stdint.h>

#include "nfskeys.h"

/* A bounded hash of (kind, key) -> answer or cached error, with per-entry expiry, a
 * second-chance (CLOCK) approximation of LRU and counters; thread-safe (a short spinlock).
 * One cache is used on one clock: the engine's through get/put (seconds, coarse monotonic
 * clock), nfskeys-idmapd's through the *_at calls (the caller's clock, any unit: µs). */
struct idmap_cache;

struct idmap_cache *idmap_cache_new(unsigned capacity);
struct idmap_cache *idmap_cache_free(struct idmap_cache *c);
/* 1 and *ret filled for a live positive entry (ttl = remaining), a negative errno for a
 * live negative entry, 0 for a miss (an expired entry is dropped). */
int idmap_cache_get(struct idmap_cache *c, unsigned kind, const char *key,
		    struct nfskeys_idmap_answer *ret);
/* Store a positive answer (a != NULL) or a negative one (error < 0) for ttl seconds. */
void idmap_cache_put(struct idmap_cache *c, unsigned kind, const char *key,
		     const struct nfskeys_idmap_answer *a, int error, unsigned ttl);
/* Drop one entry (pinned or not); -ENOENT when absent. */
int idmap_cache_drop(struct idmap_cache *c, unsigned kind, const char *key);
/* Drop every entry, pinned ones too (a pin guards against eviction only); returns how
 * many. */
unsigned idmap_cache_clear(struct idmap_cache *c);
/* Change the bound; lowering it evicts (unpinned entries) at once. */
void idmap_cache_set_capacity(struct idmap_cache *c, unsigned capacity);
void idmap_cache_get_stats(struct idmap_cache *c, struct nfskeys_idmap_cache_stats *ret);

/* ---------------------------------------------------- the daemon's side: *_at calls */

/* What an entry holds besides its answer, as a daemon answers from it. */
struct idmap_cache_view {
	int status;           /* 0: ans is the answer; < 0: a cached error */
	bool positive;        /* status 0 and not a nobody answer */
	bool stale;           /* ans is a positive answer kept past expiry (idmap_cache_mark_stale) */
	uint32_t hits;        /* lookups answered from it while fresh, since it was stored */
	int64_t fetched;      /* when it was stored (the caller's clock) */
	int64_t expires;      /* fetch again from here on */
	int64_t good_expires; /* when its positive answer expired (the stale limit's base) */
};

/* Look an entry up at time now: 1 when found, *ret filled and, for status 0, *ret_ans (only
 * the members its kind uses, as _get() fills them); the entry becomes the most recently
 * used and hits counts one more when now < expires.  0 when absent.  An expired entry is
 * kept for stale serving while it is positive and now <= good_expires + stale_limit (a
 * limit of 0: not at all), or
 * while it is pinned; otherwise it is dropped (counted as expired) and 0 returned. */
int idmap_cache_peek(struct idmap_cache *c, unsigned kind, const char *key, int64_t now,
		     int64_t stale_limit, struct idmap_cache_view *ret,
		     struct nfskeys_idmap_answer *ret_ans);
/* As peek, but only a look: no hit counted, no change of order, never dropped. */
int idmap_cache_read(struct idmap_cache *c, unsigned kind, const char *key,
		     struct idmap_cache_view *ret, struct nfskeys_idmap_answer *ret_ans);
/* Store a fetched answer (a != NULL) or error (a == NULL, error < 0) at time now, valid
 * until expires: hits start at 0, stale is cleared, good_expires is expires for a positive
 * answer.  Pins of the entry it replaces carry over.  0, or -ENOMEM (nothing cached). */
int idmap_cache_store(struct idmap_cache *c, unsigned kind, const char *key,
		      const struct nfskeys_idmap_answer *a, int error, int64_t now,
		      int64_t expires);
/* Keep serving an entry's answer as stale (refetches failing) until expires: stale set,
 * the answer, fetched, hits and good_expires unchanged.  -ENOENT when absent. */
int idmap_cache_mark_stale(struct idmap_cache *c, unsigned kind, const char *key,
			   int64_t expires);
/* Pin an entry while the caller depends on it (a refetch that may fall back on it): a
 * pinned entry is never evicted, nor dropped by peek when expired; pins nest.  Drop and
 * clear still remove it, pins and all.  -ENOENT when absent. */
int idmap_cache_pin(struct idmap_cache *c, unsigned kind, const char *key);
int idmap_cache_unpin(struct idmap_cache *c, unsigned kind, const char *key);
/* Call fn for every entry holding a positive answer that is fresh at now (not expired,
 * not stale, not nobody): its kind, key, answer and expiry.  Under the cache's lock: fn
 * must not call into the cache.  For a snapshot of the cache (nfskeys-idmapd at stop). */
typedef void (*idmap_cache_each_fn)(void *userdata, unsigned kind, const char *key,
				    const struct nfskeys_idmap_answer *a, int64_t expires);
void idmap_cache_foreach_fresh(struct idmap_cache *c, int64_t now, idmap_cache_each_fn fn,
			       void *userdata);
/* The hash an entry of kind/key gets in this cache (tests: the seed differs per cache). */
uint64_t idmap_cache_key_hash(const struct idmap_cache *c, unsigned kind, const char *key);
