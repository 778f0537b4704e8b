/* nfskeys-upcall internals: the one resolution step the helper performs for a key.  The
 * idmapd area wraps upcall_resolve() to ask the daemon first and fall back to it. */
#pragma once

#include "nfskeys.h"

/* Resolve key of the given kind into answer; 0 or a negative errno.  Name kinds fall
 * back to nobody (short TTL); SID and id kinds fail when no backend knows the key
 * (idmap_desc_nobody). */
/* Set by --no-daemon (the lean nfskeys-upcall found the daemon unreachable): resolve
 * in-process at once. */
extern bool upcall_no_daemon;

int upcall_resolve(struct nfskeys_ctx *ctx, enum nfskeys_idmap_kind kind, const char *key,
		   struct nfskeys_idmap_answer *answer);
