/* Internal declarations of the ID-mapping engine (idmap*.c): the answer cache and the
 * NFSv4 domain discovery.  Not installed. */
#pragma once

#include "libnfskeys-private.h"

/* idmap-cache.c: a bounded (LRU) hash of answers with per-entry expiry; thread-safe. */
struct idmap_cache;

struct idmap_cache *idmap_cache_new(unsigned capacity);
struct idmap_cache *idmap_cache_free(struct idmap_cache *c);
/* 1 and *ret filled for a live positive entry (ttl = remaining), a negative errno for a
 * live negative entry, 0 for a miss. */
int idmap_cache_get(struct idmap_cache *c, unsigned kind, const char *key,
		    struct nfskeys_idmap_answer *ret);
/* Store a positive answer (a != NULL) or a negative one (error < 0) for ttl seconds. */
void idmap_cache_put(struct idmap_cache *c, unsigned kind, const char *key,
		     const struct nfskeys_idmap_answer *a, int error, unsigned ttl);
int idmap_cache_drop(struct idmap_cache *c, unsigned kind, const char *key);
void idmap_cache_clear(struct idmap_cache *c);
void idmap_cache_get_stats(struct idmap_cache *c, struct nfskeys_idmap_cache_stats *ret);

/* idmap-domain.c: NFSv4 domain discovery.  Writes the domain (lower case) and its source
 * ("config", "dns-txt", "hostname", "default"). */
int idmap_discover_domain(struct nfskeys_ctx *ctx, char *buf, size_t size,
			  const char **ret_source);
/* The TXT record _nfsv4idmapdomain.<dnsdomain>, bounded by a one-second timeout. */
int idmap_dns_txt_domain(const char *dnsdomain, char *buf, size_t size);
