/* The ID-mapping engine's state (the configured chains, domain, nobody ids and TTLs) and
 * the small helpers on kinds and ids that every part of the engine uses.  Types and inline
 * code only, below the engine (idmap-engine.c, idmap-loader.c, idmap-chain.c) and its
 * parts.  Not installed. */
#pragma once

#include <ctype.h>
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "idmap-plugin.h"
#include "idmap-private.h"

#define MAX_BACKENDS 8
#define KEY_MAX 1024

struct backend {
	char method[24];
	const struct nfskeys_idmap_ops *ops; /* NULL when it could not be loaded */
	void *data;
	int load_error;
};

struct idmap_state {
	char domain[256];
	const char *domain_source;
	struct backend backends[MAX_BACKENDS]; /* distinct, loaded */
	size_t n_backends;
	struct backend *chain[MAX_BACKENDS], *gss_chain[MAX_BACKENDS];
	size_t n_chain, n_gss_chain;
	uint32_t nobody_uid, nobody_gid;
	unsigned pos_ttl, neg_ttl, nobody_ttl;
	struct idmap_cache *cache;
	char method_text[128], gss_method_text[128];
	/* SID->uid, SID->gid: the backend the chain asks first for the kind when it has a
	 * pure_sid_to_id hook (every backend before it loaded and not mapping the kind), else
	 * NULL.  Its answers for the kind are computed, never cached. */
	struct backend *pure_sid[2];
};

static inline bool kind_valid(unsigned kind)
{
	return kind >= 1 && kind < _NFSKEYS_IDMAP_KIND_MAX;
}

static inline bool kind_is_name(unsigned kind)
{
	return kind == NFSKEYS_IDMAP_NAME_TO_UID || kind == NFSKEYS_IDMAP_GROUP_TO_GID ||
	       kind == NFSKEYS_IDMAP_PRINCIPAL_TO_IDS;
}

static inline bool kind_is_id(unsigned kind)
{
	return kind == NFSKEYS_IDMAP_UID_TO_NAME || kind == NFSKEYS_IDMAP_GID_TO_GROUP ||
	       kind == NFSKEYS_IDMAP_UID_TO_SID || kind == NFSKEYS_IDMAP_GID_TO_SID;
}

static inline bool kind_is_sid(unsigned kind)
{
	return kind == NFSKEYS_IDMAP_SID_TO_UID || kind == NFSKEYS_IDMAP_SID_TO_GID;
}

/* 0 for SID->uid, 1 for SID->gid (kind_is_sid() kinds only). */
static inline unsigned kind_sid_index(unsigned kind)
{
	return kind == NFSKEYS_IDMAP_SID_TO_GID;
}

static inline bool kind_is_group(unsigned kind)
{
	return kind == NFSKEYS_IDMAP_GROUP_TO_GID || kind == NFSKEYS_IDMAP_SID_TO_GID;
}

/* Parse a decimal id 0..2^32-2 (2^32-1 is (uid_t)-1, never a real id). */
static inline int idmap_parse_id(const char *s, uint32_t *ret)
{
	uint64_t v = 0;

	if (!*s || strlen(s) > 10)
		return -EINVAL;
	for (; *s; s++) {
		if (!isdigit((unsigned char)*s))
			return -EINVAL;
		v = v * 10 + (uint64_t)(*s - '0');
	}
	if (v >= UINT32_MAX)
		return -ERANGE;
	*ret = (uint32_t)v;
	return 0;
}

static inline bool kind_has_nobody(unsigned kind)
{
	return kind_is_name(kind) || kind_is_sid(kind);
}
