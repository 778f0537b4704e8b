/* The daemon's shared answer cache: a hash table of (kind, key) entries with an LRU list
 * and a size bound.  Entries being fetched by a worker (busy) are never evicted; a flush
 * detaches them instead ("orphans") so the worker's result still reaches the callers
 * waiting on it but is not cached.  Used only from the event-loop thread: no locking.
 * Internal to nfskeys-idmapd. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "lru.h"
#include "nfskeys.h"

struct idmapd_waiter;
struct evtimer;

struct idmapd_entry {
	uint32_t kind;
	char *key;

	/* the answer: status 0 + ans, or a negative errno cached as such */
	bool have_answer;
	int status;
	struct nfskeys_idmap_answer ans;
	bool positive;        /* a real mapping (not nobody, not an error) */
	bool stale;           /* ans is a positive answer kept past expiry (backends failing) */
	int64_t fetched;      /* CLOCK_MONOTONIC usec of the last successful fetch */
	int64_t expires;      /* fetch again from here on */
	int64_t good_expires; /* when the last positive answer expired (stale limit base) */
	uint32_t hits;        /* since the last fetch */

	/* fetching */
	bool busy;            /* a worker is resolving this entry */
	bool refresh;         /* that fetch is a refresh-ahead (callers were answered) */
	int64_t fetch_start;
	struct idmapd_waiter *waiters;
	struct evtimer *stale_timer;
	bool orphan;          /* flushed while busy: not in the cache any more */
	unsigned pins;        /* idmapd_cache_pin: never evicted, off the LRU list */

	/* private */
	uint64_t hash;
	struct lru_link lru;
	bool in_lru;
};

struct idmapd_cache;

int idmapd_cache_new(size_t capacity, struct idmapd_cache **ret_cache);
/* Free the cache and its idle entries; busy entries are orphaned (see idmapd_cache_flush). */
struct idmapd_cache *idmapd_cache_free(struct idmapd_cache *c);
/* Find an entry and mark it most recently used; NULL when absent. */
struct idmapd_entry *idmapd_cache_find(struct idmapd_cache *c, uint32_t kind, const char *key);
/* Insert a new empty entry (most recently used), evicting least recently used idle
 * entries above the capacity.  -ENOMEM. */
int idmapd_cache_add(struct idmapd_cache *c, uint32_t kind, const char *key,
		     struct idmapd_entry **ret_entry);
/* Drop every entry: idle ones are freed, busy ones orphaned.  Returns how many. */
size_t idmapd_cache_flush(struct idmapd_cache *c);
/* Drop one entry (freed, or orphaned when busy). */
void idmapd_cache_drop(struct idmapd_cache *c, struct idmapd_entry *e);
/* Pin an entry while it has callers waiting or is being answered: a pinned entry is
 * never evicted (it leaves the LRU list) and a flush or drop only orphans it.  Unpin
 * frees an orphan whose last pin goes (returns true then: e is gone) and otherwise puts
 * the entry back as the most recently used. */
void idmapd_cache_pin(struct idmapd_cache *c, struct idmapd_entry *e);
bool idmapd_cache_unpin(struct idmapd_cache *c, struct idmapd_entry *e);
/* Free an entry that is no longer in a cache (an orphan whose fetch finished). */
void idmapd_entry_free(struct idmapd_entry *e);
/* Change the bound (evicts at once when lowered). */
void idmapd_cache_set_capacity(struct idmapd_cache *c, size_t capacity);
size_t idmapd_cache_count(const struct idmapd_cache *c);
size_t idmapd_cache_capacity(const struct idmapd_cache *c);
uint64_t idmapd_cache_evictions(const struct idmapd_cache *c);
