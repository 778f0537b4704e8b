/* Internal declarations of the ID-mapping engine (idmap*.c): the answer cache and the
 * NFSv4 domain discovery.  Not installed. */
#pragma once

#include "libnfskeys-private.h"

/* idmap-cache.c: the one answer cache, declared in nfskeys-idmap-daemon.h (the engine uses
 * idmap_cache_get/put on the coarse second clock, nfskeys-idmapd the *_at side). */
#include "nfskeys-idmap-daemon.h"

/* idmap-domain.c: NFSv4 domain discovery.  Writes the domain (lower case) and its source
 * ("config", "dns-txt", "hostname", "default"). */
int idmap_discover_domain(struct nfskeys_ctx *ctx, char *buf, size_t size,
			  const char **ret_source);
/* The TXT record _nfsv4idmapdomain.<dnsdomain>, bounded by a one-second timeout. */
int idmap_dns_txt_domain(const char *dnsdomain, char *buf, size_t size);
