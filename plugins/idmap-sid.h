/* What the parts of the "sid" idmap backend share: the slices and fixed ranges, the
 * lock-free table of known domains the pure SID -> id path reads (its hash and probe
 * inline here, for that path), and the writer side of that table (idmap-sid-fast.c).
 * Included by idmap-sid*.c only. */
#pragma once

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "idmap-plugin.h"

struct slice {
	uint32_t dom[3];    /* the a, b, c of S-1-5-21-a-b-c */
	uint32_t first_rid; /* 0 for the primary slice */
	uint32_t slice;
};

struct fixed_range {
	uint32_t dom[3];
	uint32_t min, max;
	bool ad; /* ids from the directory (idmap-sid-ad.c), not min + RID */
	struct sid_ad *dir; /* ad: that directory, NULL until init */
};

/* "S-1-5-21-A-B-C.AD-URI = ..." in [SID]: a setting of one domain's directory, used
 * instead of [SID]'s own for that domain's ad range */
struct dom_key {
	uint32_t dom[3];
	char *key;  /* the part after the dot: AD-URI, AD-Base, ... */
	char *text; /* the whole key as the file has it, for messages */
	char *value;
};

/* The fast path's view of one domain, keyed by the canonical text "a-b-c" of its
 * sub-authorities.  Entries are filled in place by the writer (d->lock held) and read
 * without a lock: klen is stored last (release), then only primary/secs change, each
 * published by a release store after what it guards. */
struct fast_secs {
	uint32_t n, cap; /* n published with release after v[n-1] */
	struct {
		uint32_t first_rid, base;
	} v[];
};

struct fast_dom {
	uint32_t klen; /* 0: empty slot */
	uint32_t hash;
	char text[32]; /* "4294967295-4294967295-4294967295" at most, not NUL-terminated */
	bool fixed;
	uint32_t fixed_min, fixed_span;
	uint32_t primary; /* 1 once base0 is valid */
	uint32_t base0;
	struct fast_secs *secs; /* secondary slices, NULL when none */
};

struct fast_table {
	uint32_t mask; /* slots - 1, a power of two minus one */
	uint32_t count;
	struct fast_dom slots[];
};

struct sid_data {
	pthread_mutex_t lock;
	uint32_t lower, upper, size, max_slices;
	bool auto_domains;
	char *state_file;
	/* slices only grow, and only with lock held; lookups read them without it: a new
	 * element is written before n is released, a bigger array is a copy published
	 * before n, and replaced arrays stay allocated (in retired) until done() */
	struct slice *slices;
	size_t n, cap;
	void **retired; /* replaced slice arrays, fast tables and fast_secs */
	size_t n_retired;
	struct fast_table *fast; /* published with release; never NULL after init */
	int32_t *by_slice; /* slice number -> index in slices, -1 when free */
	struct fixed_range *fixed;
	size_t n_fixed;
	struct autorid *ar; /* [SID] Algorithm = autorid: replaces the slices */
	struct dom_key *dom_keys;
	size_t n_dom_keys;
};

/* Hash of the domain text key[0..klen) with 5 <= klen <= 32.  Reads whole 8-byte words,
 * the last one ending at key + klen, so it may start up to 3 bytes before key: callers
 * pass a key preceded by at least 8 bytes ("S-1-5-21-").  The key is part of the string
 * the caller gave, so nothing past its end is read. */
static inline uint32_t dom_hash(const char *key, size_t klen)
{
	uint64_t h = 0x9e3779b97f4a7c15ull ^ klen, w;
	size_t i = 0;

	for (; i + 8 < klen; i += 8) {
		memcpy(&w, key + i, 8);
		h = (h ^ w) * 0xff51afd7ed558ccdull;
		h ^= h >> 32;
	}
	memcpy(&w, key + klen - 8, 8);
	h = (h ^ w) * 0xc4ceb9fe1a85ec53ull;
	h ^= h >> 29;
	return (uint32_t)h;
}

/* The slot of key in t (or the empty slot where it would go). */
static inline struct fast_dom *fast_slot(struct fast_table *t, const char *key, size_t klen,
					 uint32_t hash)
{
	for (uint32_t i = hash & t->mask;; i = (i + 1) & t->mask) {
		struct fast_dom *e = &t->slots[i];
		uint32_t l = __atomic_load_n(&e->klen, __ATOMIC_ACQUIRE);

		if (l == 0 || (e->hash == hash && l == klen && !memcmp(e->text, key, klen)))
			return e;
	}
}

/* idmap-sid-autorid.c: winbind idmap_autorid's answers; all calls with d->lock free. */
struct autorid;
int autorid_init(struct nfskeys_ctx *ctx, struct sid_data *d);
void autorid_done(struct autorid *a);
int autorid_sid_to_id(struct nfskeys_ctx *ctx, struct sid_data *d,
		      struct nfskeys_idmap_request *req, struct nfskeys_idmap_answer *ret);
int autorid_id_to_sid(struct nfskeys_ctx *ctx, struct sid_data *d,
		      struct nfskeys_idmap_request *req, struct nfskeys_idmap_answer *ret);

/* The value of a domain's line in [SID], "[rid|ad] MIN - MAX", into fr (its kind and
 * bounds); NULL, or what is wrong with it. */
const char *sid_parse_range(const char *value, struct fixed_range *fr);

/* idmap-sid-ad.c: winbind idmap_ad's answers (rfc2307) for the "ad" ranges. */
struct sid_ad;
int sid_ad_init(struct nfskeys_ctx *ctx, struct sid_data *d, struct fixed_range *fr);
void sid_ad_done(struct sid_ad *a);
int sid_ad_sid_to_id(struct nfskeys_ctx *ctx, struct sid_data *d, const struct fixed_range *fr,
		     struct nfskeys_idmap_request *req, struct nfskeys_idmap_answer *ret);
int sid_ad_id_to_sid(struct nfskeys_ctx *ctx, struct sid_data *d, const struct fixed_range *fr,
		     struct nfskeys_idmap_request *req, struct nfskeys_idmap_answer *ret);

/* Keep p allocated until the backend is done: lock-free readers may still hold it. */
int sid_retire(struct sid_data *d, void *p);
/* A table of slots entries (a power of two), all empty. */
struct fast_table *sid_fast_table_new(uint32_t slots);
/* Publish a fixed range (before any slice of its domain) or a slice for lock-free
 * readers; writer side (d->lock held or in init).  Out of memory: the entry is left out
 * (the fast path misses, the locked lookup still answers). */
void sid_fast_add_fixed(struct sid_data *d, const struct fixed_range *fr);
void sid_fast_add_slice(struct sid_data *d, const uint32_t dom[3], uint32_t first_rid,
			uint32_t slice);
