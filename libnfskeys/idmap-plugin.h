/* The interface between the ID-mapping engine and its backends (plugins of kind
 * NFSKEYS_PLUGIN_IDMAP named "idmap-<method>").  Internal: backends are built in this tree
 * and link the public libnfskeys; the ops table starts with its size so it can grow. */
#pragma once

#include <stdbool.h>
#include <stdint.h>

#include "nfskeys.h"
#include "plugin.h"

/* Why a backend did not answer, for `nfskeys idmap explain`. */
enum idmap_cause {
	IDMAP_CAUSE_NONE = 0,
	IDMAP_CAUSE_NO_SUCH,         /* the backend was asked and knows no such name/id */
	IDMAP_CAUSE_DOMAIN_MISMATCH, /* name@domain with a domain that is not ours */
	IDMAP_CAUSE_REALM,           /* principal of a realm not in Local-Realms */
	IDMAP_CAUSE_BACKEND_DOWN,    /* server unreachable, timeout */
	IDMAP_CAUSE_NOT_HANDLED,     /* the backend has no rule for this key */
	IDMAP_CAUSE_NO_ID,           /* the name is known but has no usable id (attribute) */
};

/* What the engine hands a backend for one lookup; the backend only reads it, except for
 * reason, which it may fill (a one-line cause) when it answers -ENOENT or fails. */
struct nfskeys_idmap_request {
	uint32_t kind;       /* enum nfskeys_idmap_kind */
	const char *key;     /* the key as given by the caller */
	const char *name;    /* name kinds: the part before the last '@' (whole key if none) */
	const char *domain;  /* name kinds: the part after the last '@', or NULL */
	const char *nfs_domain; /* the NFSv4 domain in use (never NULL) */
	uint32_t id;         /* id kinds: the parsed number */
	const struct nfskeys_sid *sid; /* SID kinds: the parsed SID, else NULL */
	char *reason;        /* buffer for a cause, reason_size bytes, "" on entry */
	size_t reason_size;
	uint32_t cause;      /* enum idmap_cause, IDMAP_CAUSE_NONE on entry */
	bool nowait;         /* the engine's: NFSKEYS_IDMAP_LOOKUP_NOWAIT (see lookup_nowait) */
};

struct nfskeys_idmap_ops {
	uint32_t size; /* sizeof(struct nfskeys_idmap_ops) */
	/* Read configuration from ctx and prepare; *ret_data is passed back to the hooks.
	 * May be NULL (no state). */
	int (*init)(struct nfskeys_ctx *ctx, void **ret_data);
	/* Free what init made; may be NULL. */
	void (*done)(void *data);
	/* Answer req: 0 with ret filled (id, name, sid, groups as the kind needs; the engine
	 * sets kind, backend and ttl), -ENOENT when this backend does not know the key (the
	 * chain goes on), another -errno when the backend failed (-EHOSTDOWN when its server
	 * cannot be reached).  Must be thread-safe. */
	int (*lookup)(void *data, struct nfskeys_ctx *ctx, struct nfskeys_idmap_request *req,
		      struct nfskeys_idmap_answer *ret);
	/* Bitmask of (1 << kind) this backend handles; kinds outside it are skipped. */
	uint32_t kinds;
	/* Default TTL of this backend's answers in seconds (0: the engine's Positive-TTL). */
	uint32_t ttl;
	/* Optional (check size): a pure computation of SID text -> id for the SID->uid/gid
	 * kinds, from memory only (no I/O, lock or allocation; thread-safe).  0 and *ret_id
	 * when it can give exactly the answer lookup would give for that key, -EAGAIN when
	 * lookup must be asked (unknown domain, non-canonical text, no such id, ...).  The
	 * engine asks it before its cache and caches none of this backend's SID->id answers:
	 * recomputing is cheaper than a cache probe. */
	int (*pure_sid_to_id)(void *data, const char *text, uint32_t *ret_id);
	/* Optional (check size; both 0/NULL: every lookup may block).  For
	 * NFSKEYS_IDMAP_LOOKUP_NOWAIT the engine runs the chain in order and, for each backend
	 * mapping the kind, asks lookup when the kind's bit is in nowait_kinds (that lookup
	 * never blocks: memory only, no I/O, no lock a slow path holds), else lookup_nowait
	 * when set, else stops with -EWOULDBLOCK.  lookup_nowait answers as lookup would
	 * (same answer, -ENOENT only when lookup would say -ENOENT too) or -EWOULDBLOCK when
	 * it cannot tell without I/O; thread-safe. */
	uint32_t nowait_kinds;
	int (*lookup_nowait)(void *data, struct nfskeys_ctx *ctx,
			     struct nfskeys_idmap_request *req, struct nfskeys_idmap_answer *ret);
	/* Optional (check size; NULL: the engine never asks for a pair).  For the name -> id
	 * kinds (NAME_TO_UID, GROUP_TO_GID): as lookup, and on 0 also the id -> name answer
	 * (*ret_reverse: id and name; kind set to UID_TO_NAME / GID_TO_GROUP) that lookup
	 * would give for ret->id, taken from what the same search found, when the backend
	 * can vouch that it is exactly that answer (e.g. the admin declared ids unique);
	 * ret_reverse->kind 0 when it cannot.  For the id -> name kinds (UID_TO_NAME,
	 * GID_TO_GROUP) the same the other way: the name -> id answer lookup would give for
	 * ret->name (*ret_reverse: the id; kind NAME_TO_UID / GROUP_TO_GID).  A backend that
	 * does not know the id -> name kinds' pairs leaves kind 0 for them.  The engine
	 * decides whether the chain lets it be cached (idmap_chain_run); thread-safe. */
	int (*lookup_pair)(void *data, struct nfskeys_ctx *ctx, struct nfskeys_idmap_request *req,
			   struct nfskeys_idmap_answer *ret,
			   struct nfskeys_idmap_answer *ret_reverse);
};

/* Each backend plugin defines this (plugin.h). */
const struct nfskeys_plugin *nfskeys_plugin_entry(void);

#define IDMAP_KIND_BIT(k) (1u << (k))
#define IDMAP_NAME_KINDS                                                                   \
	(IDMAP_KIND_BIT(NFSKEYS_IDMAP_NAME_TO_UID) | IDMAP_KIND_BIT(NFSKEYS_IDMAP_GROUP_TO_GID))
#define IDMAP_ID_KINDS                                                                     \
	(IDMAP_KIND_BIT(NFSKEYS_IDMAP_UID_TO_NAME) | IDMAP_KIND_BIT(NFSKEYS_IDMAP_GID_TO_GROUP))
#define IDMAP_SID_KINDS                                                                    \
	(IDMAP_KIND_BIT(NFSKEYS_IDMAP_SID_TO_UID) | IDMAP_KIND_BIT(NFSKEYS_IDMAP_SID_TO_GID) | \
	 IDMAP_KIND_BIT(NFSKEYS_IDMAP_UID_TO_SID) | IDMAP_KIND_BIT(NFSKEYS_IDMAP_GID_TO_SID))
#define IDMAP_PRINCIPAL_KINDS IDMAP_KIND_BIT(NFSKEYS_IDMAP_PRINCIPAL_TO_IDS)
