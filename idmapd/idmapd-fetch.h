/* nfskeys-idmapd's in-flight table: which (kind, key) lookups a worker is fetching now,
 * who waits on each, and the fetches a flush cut loose ("orphans": their result still
 * reaches their callers but is not cached).  Fetch coordination only: the answers are in
 * the library's one cache (nfskeys-idmap-daemon.h).  Used only from the event-loop
 * thread: no locking.  Internal to nfskeys-idmapd. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct idmapd_waiter;
struct evtimer;

struct idmapd_fetch {
	uint32_t kind;
	char *key;
	bool refresh;         /* a refresh-ahead (callers were answered from the cache) */
	bool pinned;          /* holds a pin on the key's cache entry (its answer to fall back on) */
	bool orphan;          /* flushed: out of the table, its result is not cached */
	int64_t start;        /* evloop_now() when it was queued */
	struct idmapd_waiter *waiters;
	struct evtimer *stale_timer;

	/* private */
	uint64_t hash;
};

struct idmapd_fetches;

int idmapd_fetches_new(struct idmapd_fetches **ret_fetches);
/* Free the table; fetches still in it are orphaned (their jobs free them). */
struct idmapd_fetches *idmapd_fetches_free(struct idmapd_fetches *t);
/* The fetch running for kind/key; NULL when none. */
struct idmapd_fetch *idmapd_fetch_find(struct idmapd_fetches *t, uint32_t kind, const char *key);
/* Start tracking a fetch of kind/key (none may be running).  -ENOMEM. */
int idmapd_fetch_add(struct idmapd_fetches *t, uint32_t kind, const char *key,
		     struct idmapd_fetch **ret_fetch);
/* The fetch is over (answered or cancelled): out of the table unless orphaned, freed. */
void idmapd_fetch_done(struct idmapd_fetches *t, struct idmapd_fetch *f);
/* Orphan one fetch (a flush of its key): out of the table, freed by idmapd_fetch_done. */
void idmapd_fetch_orphan(struct idmapd_fetches *t, struct idmapd_fetch *f);
/* Orphan every fetch (a flush of everything); returns how many, and in *ret_unpinned (may
 * be NULL) how many of them held no pin (first fetches of a key with nothing cached). */
size_t idmapd_fetch_orphan_all(struct idmapd_fetches *t, size_t *ret_unpinned);
size_t idmapd_fetch_count(const struct idmapd_fetches *t);
